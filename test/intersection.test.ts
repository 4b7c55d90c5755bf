import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpatialHashBroadPhase } from '../src/contact/broad-phase.js';
import { buildCollisionMesh, type CollisionGroupInput, type CollisionMesh, type ContactPlane } from '../src/contact/collision-mesh.js';
import { edgeEdgeDistance2, pointTriangleDistance2 } from '../src/contact/distance.js';
import { findIntersection, minimumDistance, segmentIntersectsTriangle } from '../src/contact/intersection.js';
import { boxGrid } from '../src/mesh/generators.js';
import { extractSurface } from '../src/mesh/surface.js';
import type { Vec3 } from '../src/mesh/tet-mesh.js';
import { randomRotation, rng } from './numeric-helpers.js';

// ---------------------------------------------------------------------------------------------------------------
// Scenes.

interface BodySpec {
  name: string;
  kind?: 'body' | 'shell' | 'particles' | 'obstacle';
  selfContact?: boolean;
  contactOffset?: number;
  positions: number[] | Float64Array;
  /** Local node ids. */
  triangles?: number[] | Uint32Array;
  points?: number[];
  edges?: number[];
  fixed?: boolean;
}

interface Scene {
  x: Float64Array;
  mesh: CollisionMesh;
  /** First global node id of each body. */
  base: number[];
}

function scene(bodies: BodySpec[], planes: ContactPlane[] = []): Scene {
  const base: number[] = [];
  let n = 0;
  for (const b of bodies) {
    base.push(n);
    n += b.positions.length / 3;
  }
  const x = new Float64Array(3 * n);
  const fixed = new Uint8Array(n);
  const groups: CollisionGroupInput[] = bodies.map((b, i) => {
    x.set(b.positions, 3 * base[i]);
    if (b.fixed) fixed.fill(1, base[i], base[i] + b.positions.length / 3);
    const shift = (ids: ArrayLike<number>) => Uint32Array.from(Array.from(ids, (id) => id + base[i]));
    return {
      name: b.name,
      kind: b.kind ?? (b.fixed ? 'obstacle' : 'body'),
      friction: 0.5,
      selfContact: b.selfContact ?? false,
      contactOffset: b.contactOffset,
      triangles: shift(b.triangles ?? []),
      points: b.points ? shift(b.points) : undefined,
      edges: b.edges ? shift(b.edges) : undefined,
    };
  });
  return { x, mesh: buildCollisionMesh(n, groups, planes, fixed), base };
}

/** Boundary of a box grid centred at `center`, optionally rotated about its centre and perturbed. */
function boxSurface(size: Vec3, cells: Vec3, center: Vec3, opts: { rotate?: Float64Array; jitter?: number; r?: () => number } = {}): { positions: Float64Array; triangles: Uint32Array } {
  const m = boxGrid(size, cells);
  const p = m.positions;
  for (let i = 0; i < p.length; i += 3) {
    let a = p[i] - size[0] / 2, b = p[i + 1] - size[1] / 2, c = p[i + 2] - size[2] / 2;
    if (opts.rotate) {
      const R = opts.rotate;
      [a, b, c] = [R[0] * a + R[1] * b + R[2] * c, R[3] * a + R[4] * b + R[5] * c, R[6] * a + R[7] * b + R[8] * c];
    }
    const j = opts.jitter ?? 0;
    p[i] = a + center[0] + (j ? j * (opts.r!() - 0.5) : 0);
    p[i + 1] = b + center[1] + (j ? j * (opts.r!() - 0.5) : 0);
    p[i + 2] = c + center[2] + (j ? j * (opts.r!() - 0.5) : 0);
  }
  return { positions: p, triangles: extractSurface(m).triangles };
}

/** Outward-wound surface of one tetrahedron with corners p0..p3 (p3 above the ccw base p0 p1 p2). */
function tetSurface(corners: number[]): { positions: number[]; triangles: number[] } {
  return { positions: corners, triangles: [0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3] };
}

const ground: ContactPlane = { name: 'ground', normal: [0, 0, 1], offset: 0, friction: 0.5 };

// ---------------------------------------------------------------------------------------------------------------
// Independent references.

/**
 * Segment-triangle intersection by solving p + s (q - p) = a + beta (b - a) + gamma (c - a) with Cramer's rule.
 * Returns null when the answer is within `margin` of a boundary (then the generic test cannot decide it).
 */
function referenceSegmentTriangle(x: Float64Array, p: number, q: number, a: number, b: number, c: number, margin = 1e-9): boolean | null {
  const P = (n: number) => [x[3 * n], x[3 * n + 1], x[3 * n + 2]];
  const [pp, qq, aa, bb, cc] = [P(p), P(q), P(a), P(b), P(c)];
  const d = [0, 1, 2].map((k) => qq[k] - pp[k]);
  const u = [0, 1, 2].map((k) => bb[k] - aa[k]);
  const v = [0, 1, 2].map((k) => cc[k] - aa[k]);
  const r = [0, 1, 2].map((k) => pp[k] - aa[k]);
  // Columns: -d, u, v; unknowns s, beta, gamma; right-hand side r.
  const det3 = (c0: number[], c1: number[], c2: number[]) =>
    c0[0] * (c1[1] * c2[2] - c1[2] * c2[1]) - c1[0] * (c0[1] * c2[2] - c0[2] * c2[1]) + c2[0] * (c0[1] * c1[2] - c0[2] * c1[1]);
  const md = d.map((t) => -t);
  const D = det3(md, u, v);
  if (Math.abs(D) < 1e-9) return null;
  const s = det3(r, u, v) / D, beta = det3(md, r, v) / D, gamma = det3(md, u, r) / D;
  const slack = [s, 1 - s, beta, gamma, 1 - beta - gamma];
  if (slack.some((t) => Math.abs(t) < margin)) return null;
  return slack.every((t) => t > 0);
}

function pairSkipped(mesh: CollisionMesh, nodes: number[], a: number, b: number): boolean {
  if (nodes.every((n) => mesh.fixedNodes[n] !== 0)) return true;
  const g = mesh.groupOfNode[a];
  return g === mesh.groupOfNode[b] && !mesh.groups[g].selfContact;
}

const tri = (m: CollisionMesh, t: number) => [m.triangles[3 * t], m.triangles[3 * t + 1], m.triangles[3 * t + 2]];
const edg = (m: CollisionMesh, e: number) => [m.edges[2 * e], m.edges[2 * e + 1]];

/** Axis-aligned box of some nodes: [min x, max x, min y, max y, min z, max z]. */
function boxOf(x: Float64Array, nodes: number[]): number[] {
  return [0, 1, 2].flatMap((d) => [Math.min(...nodes.map((n) => x[3 * n + d])), Math.max(...nodes.map((n) => x[3 * n + d]))]);
}

/** Closed boxes overlap (touching counts). */
function boxesMeet(a: number[], b: number[]): boolean {
  return a[0] <= b[1] && b[0] <= a[1] && a[2] <= b[3] && b[2] <= a[3] && a[4] <= b[5] && b[4] <= a[5];
}

function pack(x: Float64Array, nodes: number[]): Float64Array {
  const out = new Float64Array(12);
  nodes.forEach((n, i) => out.set(x.subarray(3 * n, 3 * n + 3), 3 * i));
  return out;
}

/** Brute-force minimum distance over every admissible vertex-triangle and edge-edge pair. */
function brutePairMinimum(mesh: CollisionMesh, x: Float64Array): number {
  let best = Infinity;
  const nt = mesh.triangles.length / 3, ne = mesh.edges.length / 2;
  for (const v of mesh.vertices) {
    for (let t = 0; t < nt; t++) {
      const T = tri(mesh, t);
      if (T.includes(v) || pairSkipped(mesh, [v, ...T], v, T[0])) continue;
      best = Math.min(best, Math.sqrt(pointTriangleDistance2(pack(x, [v, ...T]))));
    }
  }
  for (let a = 0; a < ne; a++) {
    for (let b = a + 1; b < ne; b++) {
      const A = edg(mesh, a), B = edg(mesh, b);
      if (A.some((n) => B.includes(n)) || pairSkipped(mesh, [...A, ...B], A[0], B[0])) continue;
      best = Math.min(best, Math.sqrt(edgeEdgeDistance2(pack(x, [...A, ...B]))));
    }
  }
  return best;
}

/** The expected minimumDistance: pairs within the radius, then every free vertex against every plane. */
function bruteMinimumDistance(mesh: CollisionMesh, x: Float64Array, radius: number, pairMinimum: number): number | null {
  let best = pairMinimum <= radius ? pairMinimum : Infinity;
  for (const pl of mesh.planes) {
    for (const v of mesh.vertices) {
      if (mesh.fixedNodes[v]) continue;
      best = Math.min(best, pl.normal[0] * x[3 * v] + pl.normal[1] * x[3 * v + 1] + pl.normal[2] * x[3 * v + 2] - pl.offset);
    }
  }
  return best === Infinity ? null : best;
}

/** Two jittered, rotated box bodies and a fixed obstacle slab; `shift` moves the second box towards the first. */
function randomBoxes(seed: number, shift: number): Scene {
  const r = rng(seed);
  const a = boxSurface([1, 1, 1], [3, 3, 3], [0, 0, 0.95], { jitter: 0.04, r, rotate: randomRotation(r) });
  const b = boxSurface([0.8, 0.9, 0.7], [3, 2, 3], [1.6 - shift + 0.1 * r(), 0.2 * r(), 1.2 + 0.2 * r()], { jitter: 0.04, r, rotate: randomRotation(r) });
  const slab = boxSurface([3, 3, 0.2], [4, 4, 1], [0.5, 0, -0.3 + 0.5 * shift], { jitter: 0.02, r });
  return scene([
    { name: 'a', ...a, selfContact: true },
    { name: 'b', ...b },
    { name: 'slab', ...slab, fixed: true },
  ]);
}

// ---------------------------------------------------------------------------------------------------------------

test('segment-triangle test agrees with a parametric solve on random generic configurations', () => {
  const r = rng(7);
  const x = new Float64Array(15);
  let hits = 0, decided = 0;
  for (let trial = 0; trial < 4000; trial++) {
    for (let i = 0; i < 15; i++) x[i] = r();
    const want = referenceSegmentTriangle(x, 0, 1, 2, 3, 4);
    if (want === null) continue;
    decided++;
    if (want) hits++;
    assert.equal(segmentIntersectsTriangle(x, 0, 1, 2, 3, 4), want, `trial ${trial}`);
    // Symmetries: reversing the segment or rotating the triangle's corners changes nothing.
    assert.equal(segmentIntersectsTriangle(x, 1, 0, 3, 4, 2), want, `trial ${trial} (permuted)`);
  }
  assert.ok(decided > 3900 && hits > 200, `${decided} decided, ${hits} hits`);
  // Touching cases the generic solve leaves open: through an edge, through a corner, an end on the face.
  const tri3 = [0, 0, 0, 1, 0, 0, 0, 1, 0];
  const touching: Array<[number[], boolean]> = [
    [[0.5, 0, -1, 0.5, 0, 1], true],
    [[0, 0, -1, 0, 0, 1], true],
    [[0.2, 0.2, 0, 0.2, 0.2, 1], true],
    [[0.5, -1e-9, -1, 0.5, -1e-9, 1], false],
    [[0.2, 0.2, 1e-9, 0.2, 0.2, 1], false],
  ];
  for (const [seg, hit] of touching) {
    assert.equal(segmentIntersectsTriangle(Float64Array.from([...tri3, ...seg]), 3, 4, 0, 1, 2), hit, seg.join(' '));
  }
});

test('an edge piercing a triangle is found and both are named', () => {
  const sc = scene([
    { name: 'rod', positions: [0.2, 0.2, -0.5, 0.3, 0.25, 0.5], points: [0, 1], edges: [0, 1] },
    { name: 'stairs', positions: [0, 0, 0, 1, 0, 0, 0, 1, 0], triangles: [0, 1, 2], fixed: true },
  ]);
  const rep = findIntersection(sc.mesh, sc.x);
  assert.deepEqual(rep, {
    kind: 'edge-triangle',
    message: "edge 0 (nodes 0, 1) of body 'rod' intersects triangle 0 (nodes 2, 3, 4) of obstacle 'stairs'",
  });
  // Lift the rod above the triangle: nothing left (its nearest distance is 0.5 - 0 to the plane z = 0).
  sc.x[2] = 0.1;
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  const md = minimumDistance(sc.mesh, sc.x, 1)!;
  assert.ok(Math.abs(md.distance - 0.1) < 1e-15, `${md.distance}`);
  assert.match(md.message, /vertex 0 of body 'rod' and triangle 0 \(nodes 2, 3, 4\) of obstacle 'stairs' at distance/);
  // An endpoint exactly on the triangle counts (touching is intersecting).
  sc.x[2] = 0;
  assert.equal(findIntersection(sc.mesh, sc.x)?.kind, 'edge-triangle');
});

test('a segment lying in the triangle plane: overlap counts, rotated frames included', () => {
  const r = rng(3);
  // Triangle (0,0,0) (1,0,0) (0,1,0); segments in z = 0.
  const cases: Array<{ seg: number[]; hit: boolean; what: string }> = [
    { seg: [-0.5, 0.2, 0, 1.5, 0.2, 0], hit: true, what: 'crossing both sides' },
    { seg: [0.1, 0.1, 0, 0.3, 0.2, 0], hit: true, what: 'inside' },
    { seg: [0.5, 0.5, 0, 0.9, 0.9, 0], hit: true, what: 'touching the hypotenuse at one end' },
    { seg: [1.5, -0.5, 0, 1.5, 2, 0], hit: false, what: 'beside' },
    { seg: [0.6, 0.6, 0, 1.2, 1.2, 0], hit: false, what: 'past the hypotenuse' },
    { seg: [-1, 0, 0, -0.5, 0, 0], hit: false, what: 'collinear with an edge, apart' },
    { seg: [-1, 0, 0, 0.5, 0, 0], hit: true, what: 'collinear with an edge, overlapping' },
    { seg: [-0.5, 0.2, 1e-3, 1.5, 0.2, 1e-3], hit: false, what: 'parallel, just above' },
  ];
  for (const { seg, hit, what: name } of cases) {
    for (const [rotated, flipped] of [[false, false], [false, true], [true, false], [true, true]]) {
      // Either winding of the triangle: the 2D tests must not assume counter-clockwise corners.
      const pts = [0, 0, 0, ...(flipped ? [0, 1, 0, 1, 0, 0] : [1, 0, 0, 0, 1, 0]), ...seg];
      const what = `${name}${flipped ? ' (flipped)' : ''}`;
      if (rotated) {
        const R = randomRotation(r);
        const t = [r(), r(), r()];
        for (let i = 0; i < pts.length; i += 3) {
          const [a, b, c] = pts.slice(i, i + 3);
          for (let k = 0; k < 3; k++) pts[i + k] = R[3 * k] * a + R[3 * k + 1] * b + R[3 * k + 2] * c + t[k];
        }
      }
      const x = Float64Array.from(pts);
      assert.equal(segmentIntersectsTriangle(x, 3, 4, 0, 1, 2), hit, `${what}${rotated ? ' (rotated)' : ''}`);
      // Through the full query, with the segment as a body edge and the triangle as an obstacle.
      const sc = scene([
        { name: 'stairs', positions: pts.slice(0, 9), triangles: [0, 1, 2], fixed: true },
        { name: 'rod', positions: pts.slice(9), points: [0, 1], edges: [0, 1] },
      ]);
      const rep = findIntersection(sc.mesh, sc.x);
      if (hit) {
        assert.ok(rep !== null, `${what}${rotated ? ' (rotated)' : ''}: missed`);
        assert.match(rep.message, /'rod'/);
        assert.match(rep.message, /'stairs'/);
      } else {
        assert.equal(rep, null, `${what}${rotated ? ' (rotated)' : ''}`);
      }
    }
  }
});

test('two box surfaces: apart then overlapping; every report is a real intersecting pair', () => {
  let found = 0;
  for (let seed = 1; seed <= 6; seed++) {
    for (const shift of [0.3, 0.6, 0.9]) {
      const sc = randomBoxes(seed, shift);
      const { mesh, x } = sc;
      // Independent all-pairs search (generic positions: nothing touches exactly); disjoint boxes cannot meet.
      let any = false;
      const nt = mesh.triangles.length / 3, ne = mesh.edges.length / 2;
      const ok = (e: number, t: number): boolean | null => {
        const E = edg(mesh, e), T = tri(mesh, t);
        if (E.some((n) => T.includes(n)) || pairSkipped(mesh, [...E, ...T], E[0], T[0])) return false;
        return referenceSegmentTriangle(x, E[0], E[1], T[0], T[1], T[2]);
      };
      const edgeBoxes = Array.from({ length: ne }, (_, e) => boxOf(x, edg(mesh, e)));
      const triBoxes = Array.from({ length: nt }, (_, t) => boxOf(x, tri(mesh, t)));
      for (let e = 0; e < ne && !any; e++) {
        for (let t = 0; t < nt && !any; t++) if (boxesMeet(edgeBoxes[e], triBoxes[t]) && ok(e, t)) any = true;
      }
      const rep = findIntersection(mesh, x);
      assert.equal(rep !== null, any, `seed ${seed} shift ${shift}: ${rep?.message}`);
      if (rep === null) continue;
      found++;
      assert.equal(rep.kind, 'edge-triangle');
      const m = /^edge (\d+) \(nodes (\d+), (\d+)\) of (body|obstacle) '(\w+)' intersects triangle (\d+) \(nodes \d+, \d+, \d+\) of (body|obstacle) '(\w+)'$/.exec(rep.message);
      assert.ok(m, rep.message);
      assert.equal(ok(Number(m[1]), Number(m[6])), true, rep.message);
    }
  }
  assert.ok(found >= 6 && found < 18, `${found} of 18 configurations intersect`);
  // Far apart: nothing, and minimumDistance sees the true gap.
  const sc = scene([
    { name: 'a', ...tetSurface([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]) },
    { name: 'b', ...tetSurface([0, 0, 2, 1, 0, 2, 0, 1, 2, 0, 0, 3]) },
  ]);
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  assert.equal(minimumDistance(sc.mesh, sc.x, 0.5), null);
  assert.equal(minimumDistance(sc.mesh, sc.x, 1.5)?.distance, 1);
});

test('flat faces of a valid surface with selfContact raise nothing (coplanar primitives that do not meet)', () => {
  const r = rng(5);
  for (const rotate of [undefined, randomRotation(r)]) {
    const sc = scene([{ name: 'box', ...boxSurface([1, 0.6, 0.8], [4, 3, 3], [0.3, 0.2, 0.1], { rotate }), selfContact: true }]);
    assert.equal(findIntersection(sc.mesh, sc.x), null);
    // Primitives sharing no node sit across a cell from each other: about 0.13 apart on this grid.
    const md = minimumDistance(sc.mesh, sc.x, 0.3)!;
    assert.ok(md.distance > 0.1, md.message);
  }
});

test('a free vertex on or below a plane is reported; fixed vertices are not', () => {
  const box = boxSurface([1, 1, 1], [2, 2, 2], [0.5, 0.5, 1]);
  const sc = scene([{ name: 'box', ...box }], [ground]);
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  sc.x[3 * 4 + 2] = -0.01; // node 4 is on the bottom face
  assert.deepEqual(findIntersection(sc.mesh, sc.x), {
    kind: 'vertex-plane',
    message: "vertex 4 of body 'box' lies on or below plane 'ground' (signed distance -0.01)",
  });
  assert.equal(minimumDistance(sc.mesh, sc.x, 0.1)?.distance, -0.01);
  sc.x[3 * 4 + 2] = 0;
  assert.equal(findIntersection(sc.mesh, sc.x)?.kind, 'vertex-plane');
  // The same node below the plane but fixed: skipped.
  const fixedScene = scene([{ name: 'box', ...box, fixed: true }], [ground]);
  fixedScene.x[3 * 4 + 2] = -0.01;
  assert.equal(findIntersection(fixedScene.mesh, fixedScene.x), null);
  assert.equal(minimumDistance(fixedScene.mesh, fixedScene.x, 0.1), null);
});

test('pairs inside one group count only with selfContact', () => {
  // One group holding two interpenetrating tets (a self-intersecting body).
  const corners = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0.2, 0.2, 1, 0.2, 0.2, 0.5, 1.2, 0.2, 0.5, 0.2, 1.2, 0.5, 0.3, 0.3, -0.5];
  const tris = [0, 2, 1, 0, 1, 3, 1, 2, 3, 2, 0, 3, 4, 6, 5, 4, 5, 7, 5, 6, 7, 6, 4, 7];
  for (const selfContact of [true, false]) {
    const sc = scene([{ name: 'twisted', positions: corners, triangles: tris, selfContact }]);
    const rep = findIntersection(sc.mesh, sc.x);
    if (selfContact) {
      assert.equal(rep?.kind, 'edge-triangle');
      assert.match(rep!.message, /of body 'twisted' intersects triangle \d+ \(nodes \d+, \d+, \d+\) of body 'twisted'/);
      assert.notEqual(minimumDistance(sc.mesh, sc.x, 10), null);
    } else {
      assert.equal(rep, null);
      assert.equal(minimumDistance(sc.mesh, sc.x, 10), null);
    }
  }
  // Exact touching (distance 0) inside a group: a vertex of the second tet on a face of the first, no crossing.
  const touching = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.25, 0.25, 0, 1.2, 0.3, -0.7, 0.3, 1.2, -0.7, 0.4, 0.4, -1];
  for (const selfContact of [true, false]) {
    const sc = scene([{ name: 'pair', positions: touching, triangles: tris, selfContact }]);
    const rep = findIntersection(sc.mesh, sc.x);
    if (selfContact) assert.ok(rep !== null && /'pair'.*'pair'/.test(rep.message), rep?.message);
    else assert.equal(rep, null);
  }
});

test('particles touching a triangle at distance exactly 0 are vertex-triangle intersections', () => {
  const sc = scene([
    { name: 'dust', kind: 'particles', positions: [0.25, 0.25, 0, 0.5, 0.5, 0.3], points: [0, 1] },
    { name: 'floor', positions: [0, 0, 0, 1, 0, 0, 0, 1, 0], triangles: [0, 1, 2], fixed: true },
  ]);
  assert.deepEqual(findIntersection(sc.mesh, sc.x), {
    kind: 'vertex-triangle',
    message: "vertex 0 of particles 'dust' touches triangle 0 (nodes 2, 3, 4) of obstacle 'floor' (distance 0)",
  });
  sc.x[2] = 1e-9;
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  const md = minimumDistance(sc.mesh, sc.x, 1)!;
  assert.equal(md.distance, 1e-9);
  assert.match(md.message, /vertex 0 of particles 'dust' and triangle 0/);
});

test('with contact offsets, a pair at or within its offset (sum of both groups\') counts as touching, named with the offset', () => {
  // A sheet triangle (offset 0.01) at z = 0 and a particle (offset 0) above it: their pairs have offset 0.01.
  const sc = scene([
    { name: 'sheet', kind: 'shell', positions: [0, 0, 0, 1, 0, 0, 0, 1, 0], triangles: [0, 1, 2], contactOffset: 0.01 },
    { name: 'dust', kind: 'particles', positions: [0.25, 0.25, 0.02], points: [0] },
  ], [{ ...ground, offset: -1 }]);
  assert.equal(sc.mesh.maxPairOffset, 0.02);
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  sc.x[3 * 3 + 2] = 0.01; // exactly at the offset
  assert.deepEqual(findIntersection(sc.mesh, sc.x), {
    kind: 'vertex-triangle',
    message: "vertex 3 of particles 'dust' is within the contact offset 0.01 of triangle 0 (nodes 0, 1, 2) of shell 'sheet' (distance 0.01)",
  });
  sc.x[3 * 3 + 2] = -0.005; // below the sheet, within the offset: both sides count
  assert.equal(findIntersection(sc.mesh, sc.x)?.kind, 'vertex-triangle');
  sc.x[3 * 3 + 2] = -0.0101;
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  // A sheet vertex within its offset of a plane (the plane has none).
  sc.x[2] = -0.995;
  assert.deepEqual(findIntersection(sc.mesh, sc.x), {
    kind: 'vertex-plane',
    message: "vertex 0 of shell 'sheet' is within its contact offset 0.01 of plane 'ground' (signed distance 0.0050000000000000044)",
  });
});

test('edges crossing exactly (no triangles) are edge-edge intersections', () => {
  const sc = scene([
    { name: 'rod1', positions: [0, 0, 0, 1, 0, 0], points: [0, 1], edges: [0, 1] },
    { name: 'rod2', positions: [0.5, -1, 0, 0.5, 1, 0], points: [0, 1], edges: [0, 1] },
  ]);
  assert.deepEqual(findIntersection(sc.mesh, sc.x), {
    kind: 'edge-edge',
    message: "edge 0 (nodes 0, 1) of body 'rod1' touches edge 1 (nodes 2, 3) of body 'rod2' (distance 0)",
  });
  sc.x[3 * 2 + 2] = sc.x[3 * 3 + 2] = 0.25;
  assert.equal(findIntersection(sc.mesh, sc.x), null);
  const md = minimumDistance(sc.mesh, sc.x, 1)!;
  assert.equal(md.distance, 0.25);
  assert.equal(md.message, "edge 0 (nodes 0, 1) of body 'rod1' and edge 1 (nodes 2, 3) of body 'rod2' at distance 0.25");
});

test('minimumDistance equals a brute-force minimum over all admissible pairs and planes', () => {
  for (let seed = 11; seed <= 14; seed++) {
    const base = randomBoxes(seed, 0.45);
    // With and without a plane under the slab; one radius below the closest pair (pairs then drop out).
    const plane: ContactPlane = { name: 'tilted', normal: [0.6, 0, 0.8], offset: -3, friction: 0.3 };
    const pairMinimum = brutePairMinimum(base.mesh, base.x);
    for (const planes of [[], [plane]]) {
      const mesh: CollisionMesh = { ...base.mesh, planes };
      for (const radius of [0.5 * pairMinimum, 0.1, 0.4]) {
        const want = bruteMinimumDistance(mesh, base.x, radius, pairMinimum);
        const got = minimumDistance(mesh, base.x, radius);
        assert.equal(got?.distance ?? null, want, `seed ${seed} radius ${radius} planes ${planes.length}`);
      }
    }
  }
});

test('findEdgeTriangleCandidates equals brute-force box-overlap enumeration', () => {
  for (let seed = 21; seed <= 24; seed++) {
    const { mesh, x } = randomBoxes(seed, 0.7);
    const r = rng(seed);
    const someFixed = Uint8Array.from(mesh.fixedNodes, () => (r() < 0.7 ? 1 : 0));
    for (const fixed of [null, mesh.fixedNodes, someFixed]) {
      const bp = new SpatialHashBroadPhase(mesh, { fixedNodes: fixed });
      // A proximity query first: the edge-triangle query must not depend on or disturb it.
      bp.findProximityCandidates(x, 0.05);
      const vtBefore = bp.vertexTrianglePairs.slice(0, 2 * bp.vertexTriangleCount);
      bp.findEdgeTriangleCandidates(x);
      assert.deepEqual(bp.vertexTrianglePairs.slice(0, 2 * bp.vertexTriangleCount), vtBefore);
      const got = new Set<string>();
      for (let k = 0; k < bp.edgeTriangleCount; k++) {
        const key = `${bp.edgeTrianglePairs[2 * k]},${bp.edgeTrianglePairs[2 * k + 1]}`;
        assert.ok(!got.has(key), `duplicate ${key}`);
        got.add(key);
      }
      const want = new Set<string>();
      const nt = mesh.triangles.length / 3, ne = mesh.edges.length / 2;
      const triBoxes = Array.from({ length: nt }, (_, t) => boxOf(x, tri(mesh, t)));
      for (let e = 0; e < ne; e++) {
        const E = edg(mesh, e), be = boxOf(x, E);
        for (let t = 0; t < nt; t++) {
          if (!boxesMeet(be, triBoxes[t])) continue;
          const T = tri(mesh, t);
          if (E.some((n) => T.includes(n))) continue;
          if (fixed && [...E, ...T].every((n) => fixed[n])) continue;
          want.add(`${e},${t}`);
        }
      }
      assert.ok(want.size > 100, `${want.size} overlapping pairs`);
      for (const k of want) assert.ok(got.has(k), `seed ${seed}: missing ${k}`);
      for (const k of got) assert.ok(want.has(k), `seed ${seed}: extra ${k}`);
    }
  }
});

test('segment vs triangle nearly in one plane (neighbours in a flat shell): apart unless the segment crosses the triangle', () => {
  // The edge and triangle of a flat sheet that failed a shell run (the old test took the tiny volumes for zeros and
  // reported them as meeting): 1 cm apart in the plane, round-off across it.
  const seen = Float64Array.from([
    0.11036417554566857, 0.024755000000007417, 0.012500012140055621, 0.12039713755354889, 0.024754999999964323, 0.025000000000000001,
    0.11036417481746923, 0.024754999999996925, 0.025000000000000001, 0.11036417554566857, 0.024755000000007417, 0.037499987859944378,
    0.1003312159447953, 0.024755000000000676, 0.037499989020067778,
  ]);
  assert.equal(segmentIntersectsTriangle(seen, 0, 1, 2, 3, 4), false);
  const rand = rng(5);
  for (let trial = 0; trial < 200; trial++) {
    const noise = () => 1e-13 * (2 * rand() - 1);
    // Edge (0.110, 0.0125) -> (0.120, 0.025) in (x, z); triangle (0.110, 0.025), (0.110, 0.0375), (0.100, 0.0375).
    const x = Float64Array.from([0.11036, 0.0248 + noise(), 0.0125, 0.1204, 0.0248 + noise(), 0.025, 0.11036, 0.0248 + noise(), 0.025, 0.11036, 0.0248 + noise(), 0.0375, 0.10033, 0.0248 + noise(), 0.0375]);
    assert.equal(segmentIntersectsTriangle(x, 0, 1, 2, 3, 4), false, `trial ${trial}: apart in the plane`);
    // A short segment tilted through the triangle's inside meets it.
    const through = Float64Array.from(x);
    through.set([0.106, 0.0248 + 1e-4, 0.034, 0.107, 0.0248 - 1e-4, 0.035], 0);
    assert.equal(segmentIntersectsTriangle(through, 0, 1, 2, 3, 4), true, `trial ${trial}: through the triangle`);
  }
});
