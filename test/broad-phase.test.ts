import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpatialHashBroadPhase, type BroadPhaseSurface } from '../src/contact/broad-phase.js';
import { edgeEdgeDistance2, pointTriangleDistance2 } from '../src/contact/distance.js';
import { edgeEdgeCcd, pointTriangleCcd } from '../src/contact/ccd.js';
import { boxGrid } from '../src/mesh/generators.js';
import { extractSurface, surfaceEdges } from '../src/mesh/surface.js';
import type { TetMesh, Vec3 } from '../src/mesh/tet-mesh.js';
import { rng } from './numeric-helpers.js';

function merge(a: TetMesh, b: TetMesh): TetMesh {
  const na = a.positions.length / 3;
  const positions = new Float64Array(a.positions.length + b.positions.length);
  positions.set(a.positions);
  positions.set(b.positions, a.positions.length);
  const tets = new Uint32Array(a.tets.length + b.tets.length);
  tets.set(a.tets);
  for (let i = 0; i < b.tets.length; i++) tets[a.tets.length + i] = b.tets[i] + na;
  return { positions, tets };
}

interface Scene {
  x: Float64Array;
  dx: Float64Array;
  surface: BroadPhaseSurface & { vertices: Uint32Array; edges: Uint32Array; triangles: Uint32Array };
  /** Nodes of the first body (fixed in the fixed-node test). */
  firstBodyNodes: number;
}

/** Two perturbed box grids a small gap apart, the second moving towards the first (and wobbling). */
function twoBoxes(seed: number): Scene {
  const r = rng(seed);
  const a = boxGrid([1, 1, 1], [3, 3, 3]);
  const offset: Vec3 = [1.04 + 0.05 * r(), 0.3 * r(), -0.2 * r()];
  const b = boxGrid([0.8, 1, 0.7], [3, 2, 3], { origin: offset, tetsPerCell: 5 });
  const mesh = merge(a, b);
  const x = mesh.positions;
  for (let i = 0; i < x.length; i++) x[i] += 0.04 * (r() - 0.5);
  const { triangles, surfaceNodes } = extractSurface(mesh);
  const edges = surfaceEdges(triangles, x.length / 3);
  const dx = new Float64Array(x.length);
  const na = a.positions.length / 3;
  for (let n = 0; n < x.length / 3; n++) {
    for (let d = 0; d < 3; d++) dx[3 * n + d] = 0.1 * (r() - 0.5) + (n >= na && d === 0 ? -0.15 : 0);
  }
  return { x, dx, surface: { vertices: surfaceNodes, edges, triangles }, firstBodyNodes: na };
}

/** Box of some nodes at x (and x + s dx), grown by r: written independently of the module. */
function box(nodes: number[], x: Float64Array, dx: Float64Array | null, s: number, r: number): number[] {
  const out = [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity];
  for (const n of nodes) {
    for (let d = 0; d < 3; d++) {
      const vals = dx ? [x[3 * n + d], x[3 * n + d] + s * dx[3 * n + d]] : [x[3 * n + d]];
      for (const v of vals) {
        out[d] = Math.min(out[d], v - r);
        out[3 + d] = Math.max(out[3 + d], v + r);
      }
    }
  }
  return out;
}

function overlap(a: number[], b: number[]): boolean {
  for (let d = 0; d < 3; d++) if (a[d] > b[3 + d] || b[d] > a[3 + d]) return false;
  return true;
}

function tri(sc: Scene, t: number): number[] {
  const T = sc.surface.triangles;
  return [T[3 * t], T[3 * t + 1], T[3 * t + 2]];
}
function edge(sc: Scene, e: number): number[] {
  const E = sc.surface.edges;
  return [E[2 * e], E[2 * e + 1]];
}

/** Brute-force box-overlap pairs, as "v,t" and "a,b" keys. */
function bruteForce(sc: Scene, dx: Float64Array | null, s: number, r: number, fixed: Uint8Array | null): { vt: Set<string>; ee: Set<string> } {
  const { x, surface } = sc;
  const nt = surface.triangles.length / 3;
  const ne = surface.edges.length / 2;
  const allFixed = (ns: number[]) => fixed !== null && ns.every((n) => fixed[n] !== 0);
  const vt = new Set<string>();
  const triBoxes = Array.from({ length: nt }, (_, t) => box(tri(sc, t), x, dx, s, r));
  for (const v of surface.vertices) {
    const bv = box([v], x, dx, s, r);
    for (let t = 0; t < nt; t++) {
      const ns = tri(sc, t);
      if (ns.includes(v) || allFixed([v, ...ns])) continue;
      if (overlap(bv, triBoxes[t])) vt.add(`${v},${t}`);
    }
  }
  const ee = new Set<string>();
  const edgeBoxes = Array.from({ length: ne }, (_, e) => box(edge(sc, e), x, dx, s, r));
  for (let a = 0; a < ne; a++) {
    for (let b = a + 1; b < ne; b++) {
      const na = edge(sc, a), nb = edge(sc, b);
      if (na.some((n) => nb.includes(n)) || allFixed([...na, ...nb])) continue;
      if (overlap(edgeBoxes[a], edgeBoxes[b])) ee.add(`${a},${b}`);
    }
  }
  return { vt, ee };
}

/** The hash's output as key sets, asserting no duplicates and no pair that shares a node. */
function hashPairs(sc: Scene, bp: SpatialHashBroadPhase): { vt: Set<string>; ee: Set<string> } {
  const vt = new Set<string>();
  for (let k = 0; k < bp.vertexTriangleCount; k++) {
    const v = bp.vertexTrianglePairs[2 * k], t = bp.vertexTrianglePairs[2 * k + 1];
    assert.ok(!tri(sc, t).includes(v), `vertex ${v} belongs to triangle ${t}`);
    const key = `${v},${t}`;
    assert.ok(!vt.has(key), `duplicate vertex-triangle pair ${key}`);
    vt.add(key);
  }
  const ee = new Set<string>();
  for (let k = 0; k < bp.edgeEdgeCount; k++) {
    const a = bp.edgeEdgePairs[2 * k], b = bp.edgeEdgePairs[2 * k + 1];
    assert.ok(a < b, 'edge pairs are ordered');
    assert.ok(!edge(sc, a).some((n) => edge(sc, b).includes(n)), `edges ${a}, ${b} share a node`);
    const key = `${a},${b}`;
    assert.ok(!ee.has(key), `duplicate edge-edge pair ${key}`);
    ee.add(key);
  }
  return { vt, ee };
}

/**
 * The pairs that could come within `margin` while each node moves linearly from x to x + s dx: a proximity query
 * along that motion (the candidate sets' query along a Newton step).
 */
function findSweptCandidates(
  bp: SpatialHashBroadPhase, x: Float64Array, dx: Float64Array, s: number, margin: number, kind: 'all' | 'same-group' | 'cross-group' = 'all',
): void {
  bp.findProximityCandidates(x, margin, kind, null, Float64Array.from(dx, (d) => s * d));
}

/**
 * Brute force for the trees' query along a motion: the pairs whose boxes (grown by r) no axis keeps apart over the
 * whole motion, every node moving by s dx: kept apart means one box beyond the other on that axis both at x and at
 * x + s dx (written independently of box-tree.ts; the tests below check the rule keeps every pair that comes close).
 */
function bruteAlong(
  sc: Scene, x: Float64Array, dx: Float64Array, s: number, r: number, fixed: Uint8Array | null, keep: (nodesA: number[], nodesB: number[]) => boolean = () => true,
): { vt: Set<string>; ee: Set<string> } {
  const nt = sc.surface.triangles.length / 3, ne = sc.surface.edges.length / 2;
  const allFixed = (ns: number[]) => fixed !== null && ns.every((n) => fixed[n] !== 0);
  const x1 = Float64Array.from(x, (v, i) => v + s * dx[i]);
  // Per primitive: its boxes at the start and at the end.
  const boxes = (nodes: number[]) => ({ at: box(nodes, x, null, 0, r), end: box(nodes, x1, null, 0, r) });
  const meet = (a: ReturnType<typeof boxes>, b: ReturnType<typeof boxes>) => {
    for (let d = 0; d < 3; d++) {
      const above = (p: ArrayLike<number>, q: ArrayLike<number>) => p[d] > q[3 + d];
      if ((above(b.at, a.at) && above(b.end, a.end)) || (above(a.at, b.at) && above(a.end, b.end))) return false;
    }
    return true;
  };
  const vt = new Set<string>();
  const triBoxes = Array.from({ length: nt }, (_, t) => boxes(tri(sc, t)));
  for (const v of sc.surface.vertices) {
    const bv = boxes([v]);
    for (let t = 0; t < nt; t++) {
      const ns = tri(sc, t);
      if (ns.includes(v) || allFixed([v, ...ns]) || !keep([v], ns)) continue;
      if (meet(bv, triBoxes[t])) vt.add(`${v},${t}`);
    }
  }
  const ee = new Set<string>();
  const edgeBoxes = Array.from({ length: ne }, (_, e) => boxes(edge(sc, e)));
  for (let a = 0; a < ne; a++) {
    for (let b = a + 1; b < ne; b++) {
      const na = edge(sc, a), nb = edge(sc, b);
      if (na.some((n) => nb.includes(n)) || allFixed([...na, ...nb]) || !keep(na, nb)) continue;
      if (meet(edgeBoxes[a], edgeBoxes[b])) ee.add(`${a},${b}`);
    }
  }
  return { vt, ee };
}

function assertSameSet(got: Set<string>, want: Set<string>, what: string): void {
  for (const k of want) assert.ok(got.has(k), `${what}: missing ${k}`);
  for (const k of got) assert.ok(want.has(k), `${what}: extra ${k}`);
}

function stencil(x: Float64Array, nodes: number[], out: Float64Array): Float64Array {
  nodes.forEach((n, i) => out.set(x.subarray(3 * n, 3 * n + 3), 3 * i));
  return out;
}

test('proximity candidates: equal to brute-force box overlap, a superset of pairs closer than dhat', () => {
  const ratios: string[] = [];
  for (let seed = 1; seed <= 4; seed++) {
    const sc = twoBoxes(seed);
    const dhat = 0.05 + 0.05 * seed / 4;
    const bp = new SpatialHashBroadPhase(sc.surface);
    bp.findProximityCandidates(sc.x, dhat);
    const got = hashPairs(sc, bp);
    const want = bruteForce(sc, null, 0, dhat / 2, null);
    assertSameSet(got.vt, want.vt, 'vertex-triangle');
    assertSameSet(got.ee, want.ee, 'edge-edge');
    // The cell size changes the tables' shape, never the pairs.
    for (const cellSizeScale of [0.5, 1, 4]) {
      const other = new SpatialHashBroadPhase(sc.surface, { cellSizeScale });
      other.findProximityCandidates(sc.x, dhat);
      const pairs = hashPairs(sc, other);
      assertSameSet(pairs.vt, want.vt, `vertex-triangle, cells ${cellSizeScale}`);
      assertSameSet(pairs.ee, want.ee, `edge-edge, cells ${cellSizeScale}`);
    }
    // Every pair truly closer than dhat is a candidate (the real criterion, with exact distances).
    const buf = new Float64Array(12);
    let closeVt = 0, closeEe = 0;
    const nt = sc.surface.triangles.length / 3, ne = sc.surface.edges.length / 2;
    for (const v of sc.surface.vertices) {
      for (let t = 0; t < nt; t++) {
        const ns = tri(sc, t);
        if (ns.includes(v)) continue;
        if (pointTriangleDistance2(stencil(sc.x, [v, ...ns], buf)) < dhat * dhat) {
          closeVt++;
          assert.ok(got.vt.has(`${v},${t}`), `close pair ${v},${t} missed`);
        }
      }
    }
    for (let a = 0; a < ne; a++) {
      for (let b = a + 1; b < ne; b++) {
        const na = edge(sc, a), nb = edge(sc, b);
        if (na.some((n) => nb.includes(n))) continue;
        if (edgeEdgeDistance2(stencil(sc.x, [...na, ...nb], buf)) < dhat * dhat) {
          closeEe++;
          assert.ok(got.ee.has(`${a},${b}`), `close pair ${a},${b} missed`);
        }
      }
    }
    assert.ok(closeVt > 0 && closeEe > 0, 'the scene has close pairs (the test can fail)');
    ratios.push(`seed ${seed}: vt ${got.vt.size}/${closeVt} = ${(got.vt.size / closeVt).toFixed(2)}, ee ${got.ee.size}/${closeEe} = ${(got.ee.size / closeEe).toFixed(2)}`);
  }
  console.log(`proximity superset ratio (candidates / pairs closer than dhat):\n  ${ratios.join('\n  ')}`);
});

test('candidates along a motion: the hash equals brute-force swept-box overlap, the trees the brute-force common-moment rule, both supersets of CCD hits', () => {
  const ratios: string[] = [];
  for (let seed = 11; seed <= 13; seed++) {
    const sc = twoBoxes(seed);
    const s = 0.5 + 0.5 * rng(seed)();
    const margin = 0.01;
    const bp = new SpatialHashBroadPhase(sc.surface);
    findSweptCandidates(bp, sc.x, sc.dx, s, margin);
    const got = hashPairs(sc, bp);
    const want = bruteForce(sc, sc.dx, s, margin / 2, null);
    assertSameSet(got.vt, want.vt, 'vertex-triangle');
    assertSameSet(got.ee, want.ee, 'edge-edge');
    const trees = new SpatialHashBroadPhase(sc.surface, { method: 'bvh' });
    findSweptCandidates(trees, sc.x, sc.dx, s, margin);
    const along = hashPairs(sc, trees);
    const wantAlong = bruteAlong(sc, sc.x, sc.dx, s, margin / 2, null);
    assertSameSet(along.vt, wantAlong.vt, 'trees: vertex-triangle');
    assertSameSet(along.ee, wantAlong.ee, 'trees: edge-edge');
    // Brute-force CCD over every pair: each one that comes within margin must be a candidate.
    const x1 = sc.x.map((v, i) => v + s * sc.dx[i]);
    const p = (arr: Float64Array, n: number) => arr.subarray(3 * n, 3 * n + 3);
    let hitsVt = 0, hitsEe = 0;
    const nt = sc.surface.triangles.length / 3, ne = sc.surface.edges.length / 2;
    for (const v of sc.surface.vertices) {
      for (let t = 0; t < nt; t++) {
        const [a, b, c] = tri(sc, t);
        if (v === a || v === b || v === c) continue;
        const toi = pointTriangleCcd(p(sc.x, v), p(sc.x, a), p(sc.x, b), p(sc.x, c), p(x1, v), p(x1, a), p(x1, b), p(x1, c), 0.99 * margin);
        if (toi <= 1) {
          hitsVt++;
          assert.ok(got.vt.has(`${v},${t}`), `colliding pair ${v},${t} missed`);
          assert.ok(along.vt.has(`${v},${t}`), `trees: colliding pair ${v},${t} missed`);
        }
      }
    }
    for (let ea = 0; ea < ne; ea++) {
      for (let eb = ea + 1; eb < ne; eb++) {
        const [a0, a1] = edge(sc, ea), [b0, b1] = edge(sc, eb);
        if (a0 === b0 || a0 === b1 || a1 === b0 || a1 === b1) continue;
        const toi = edgeEdgeCcd(p(sc.x, a0), p(sc.x, a1), p(sc.x, b0), p(sc.x, b1), p(x1, a0), p(x1, a1), p(x1, b0), p(x1, b1), 0.99 * margin);
        if (toi <= 1) {
          hitsEe++;
          assert.ok(got.ee.has(`${ea},${eb}`), `colliding pair ${ea},${eb} missed`);
          assert.ok(along.ee.has(`${ea},${eb}`), `trees: colliding pair ${ea},${eb} missed`);
        }
      }
    }
    assert.ok(hitsVt > 0 && hitsEe > 0, 'the scene has colliding pairs (the test can fail)');
    ratios.push(`seed ${seed}: hash vt ${got.vt.size}/${hitsVt}, ee ${got.ee.size}/${hitsEe}; trees vt ${along.vt.size}/${hitsVt}, ee ${along.ee.size}/${hitsEe}`);
  }
  console.log(`swept superset ratio (candidates / CCD hits within margin):\n  ${ratios.join('\n  ')}`);
});

test('candidates along a motion: a body turning by 1 rad, whose nodes move alike nearby, gives the trees fewer pairs than swept boxes, and every pair that comes close; moved as a whole, the pairs of a point', () => {
  const sc = twoBoxes(15);
  // The whole scene turns about the y axis through (1, 0.5, 0.5): up to 1 m of motion, about the same for neighbours.
  const angle = 1, c = Math.cos(angle), sn = Math.sin(angle);
  const dx = new Float64Array(sc.x.length);
  for (let o = 0; o < dx.length; o += 3) {
    const px = sc.x[o] - 1, pz = sc.x[o + 2] - 0.5;
    dx[o] = c * px + sn * pz - px;
    dx[o + 2] = -sn * px + c * pz - pz;
  }
  const margin = 0.1; // the bodies are 0.04-0.09 m apart
  const hash = new SpatialHashBroadPhase(sc.surface);
  findSweptCandidates(hash, sc.x, dx, 1, margin);
  const trees = new SpatialHashBroadPhase(sc.surface, { method: 'bvh' });
  findSweptCandidates(trees, sc.x, dx, 1, margin);
  const swept = hashPairs(sc, hash), along = hashPairs(sc, trees);
  const want = bruteAlong(sc, sc.x, dx, 1, margin / 2, null);
  assertSameSet(along.vt, want.vt, 'vertex-triangle');
  assertSameSet(along.ee, want.ee, 'edge-edge');
  const n = along.vt.size + along.ee.size, m = swept.vt.size + swept.ee.size;
  assert.ok(n < 0.8 * m, `the trees list ${n} pairs, the swept boxes ${m}`);
  // Every pair within margin at one of 64 moments of the motion (the chord of a turn: a straight line per node).
  const buf = new Float64Array(12);
  const nt = sc.surface.triangles.length / 3, ne = sc.surface.edges.length / 2;
  let close = 0;
  for (let k = 0; k <= 64; k++) {
    const y = Float64Array.from(sc.x, (v, i) => v + (k / 64) * dx[i]);
    for (const v of sc.surface.vertices) {
      for (let t = 0; t < nt; t++) {
        const ns = tri(sc, t);
        if (ns.includes(v) || pointTriangleDistance2(stencil(y, [v, ...ns], buf)) >= margin * margin) continue;
        close++;
        assert.ok(along.vt.has(`${v},${t}`), `pair ${v},${t} within margin at moment ${k}/64 missed`);
      }
    }
    for (let a = 0; a < ne; a++) {
      for (let b = a + 1; b < ne; b++) {
        const na = edge(sc, a), nb = edge(sc, b);
        if (na.some((q) => nb.includes(q)) || edgeEdgeDistance2(stencil(y, [...na, ...nb], buf)) >= margin * margin) continue;
        close++;
        assert.ok(along.ee.has(`${a},${b}`), `pair ${a},${b} within margin at moment ${k}/64 missed`);
      }
    }
  }
  assert.ok(close > 0, 'some pairs come within margin (the test can fail)');
  console.log(`turning body: trees ${n} pairs, swept boxes ${m}, ${close} (pair, moment) within margin`);
  // Moved as a whole by 2 m, nothing comes closer: the trees list the pairs at x, the swept boxes many more.
  const shift = Float64Array.from(dx, (_, i) => (i % 3 === 0 ? 2 : 0));
  findSweptCandidates(trees, sc.x, shift, 1, margin);
  findSweptCandidates(hash, sc.x, shift, 1, margin);
  const moved = hashPairs(sc, trees), sweptMoved = hashPairs(sc, hash);
  trees.findProximityCandidates(sc.x, margin);
  const still = hashPairs(sc, trees);
  assertSameSet(moved.vt, still.vt, 'moved as a whole: vertex-triangle');
  assertSameSet(moved.ee, still.ee, 'moved as a whole: edge-edge');
  assert.ok(sweptMoved.vt.size + sweptMoved.ee.size > 3 * (still.vt.size + still.ee.size), 'the swept boxes pair along the sweep');
});

test('fixed nodes: pairs with every node fixed are dropped, the rest kept', () => {
  const sc = twoBoxes(21);
  const fixed = new Uint8Array(sc.x.length / 3);
  fixed.fill(1, 0, sc.firstBodyNodes);
  const bp = new SpatialHashBroadPhase(sc.surface, { fixedNodes: fixed });
  bp.findProximityCandidates(sc.x, 0.1);
  const got = hashPairs(sc, bp);
  const want = bruteForce(sc, null, 0, 0.05, fixed);
  assertSameSet(got.vt, want.vt, 'vertex-triangle');
  assertSameSet(got.ee, want.ee, 'edge-edge');
  const all = bruteForce(sc, null, 0, 0.05, null);
  assert.ok(all.vt.size > want.vt.size && all.ee.size > want.ee.size, 'self pairs of the fixed body were present before');
});

test('reuse: repeated queries give the same answers as a fresh object and stop allocating', () => {
  const sc = twoBoxes(31);
  const bp = new SpatialHashBroadPhase(sc.surface);
  // A large query first (warm-up), then smaller and different ones on the same object.
  findSweptCandidates(bp, sc.x, sc.dx, 1, 0.05);
  const vtBuf = bp.vertexTrianglePairs, eeBuf = bp.edgeEdgePairs;
  for (const [dhat, s] of [[0.02, 0.3], [0.06, 0.7]]) {
    bp.findProximityCandidates(sc.x, dhat);
    const fresh = new SpatialHashBroadPhase(sc.surface);
    fresh.findProximityCandidates(sc.x, dhat);
    assertSameSet(hashPairs(sc, bp).vt, hashPairs(sc, fresh).vt, 'reused vertex-triangle');
    assertSameSet(hashPairs(sc, bp).ee, hashPairs(sc, fresh).ee, 'reused edge-edge');
    findSweptCandidates(bp, sc.x, sc.dx, s, 0.01);
    const want = bruteForce(sc, sc.dx, s, 0.005, null);
    assertSameSet(hashPairs(sc, bp).vt, want.vt, 'reused swept vertex-triangle');
  }
  assert.equal(bp.vertexTrianglePairs, vtBuf, 'output buffer kept');
  assert.equal(bp.edgeEdgePairs, eeBuf, 'output buffer kept');
});

test('a long sweep of one node coarsens the grid instead of covering millions of cells', () => {
  const sc = twoBoxes(41);
  const dx = new Float64Array(sc.x.length);
  dx[3 * sc.surface.vertices[0]] = 1e4;
  const bp = new SpatialHashBroadPhase(sc.surface);
  findSweptCandidates(bp, sc.x, dx, 1, 0.01);
  const got = hashPairs(sc, bp);
  const want = bruteForce(sc, dx, 1, 0.005, null);
  assertSameSet(got.vt, want.vt, 'vertex-triangle');
  assertSameSet(got.ee, want.ee, 'edge-edge');
});

test('pair kinds: same-group and cross-group queries split the brute-force pairs by body, honouring self-contact flags', () => {
  const sc = twoBoxes(51);
  const nNodes = sc.x.length / 3;
  const groupOfNode = Int32Array.from({ length: nNodes }, (_, n) => (n < sc.firstBodyNodes ? 0 : 1));
  const want = bruteForce(sc, sc.dx, 0.5, 0.02, null);
  const groupOfPair = (kind: 'vt' | 'ee', key: string): [number, number] => {
    const [p, q] = key.split(',').map(Number);
    if (kind === 'vt') return [groupOfNode[p], groupOfNode[tri(sc, q)[0]]];
    return [groupOfNode[sc.surface.edges[2 * p]], groupOfNode[sc.surface.edges[2 * q]]];
  };
  const subset = (kind: 'vt' | 'ee', keep: (ga: number, gb: number) => boolean) =>
    new Set([...want[kind]].filter((key) => keep(...groupOfPair(kind, key))));
  for (const selfContact of [[1, 1], [0, 1]]) {
    const bp = new SpatialHashBroadPhase(sc.surface, { groupOfNode, selfContact });
    findSweptCandidates(bp, sc.x, sc.dx, 0.5, 0.04, 'same-group');
    const same = hashPairs(sc, bp);
    const inOwnBody = (ga: number, gb: number) => ga === gb && selfContact[ga] === 1;
    assertSameSet(same.vt, subset('vt', inOwnBody), `same-group vertex-triangle (self-contact ${selfContact})`);
    assertSameSet(same.ee, subset('ee', inOwnBody), `same-group edge-edge (self-contact ${selfContact})`);
    findSweptCandidates(bp, sc.x, sc.dx, 0.5, 0.04, 'cross-group');
    const cross = hashPairs(sc, bp);
    assert.ok(cross.vt.size > 0 && cross.ee.size > 0, 'the bodies are close enough to pair');
    assertSameSet(cross.vt, subset('vt', (ga, gb) => ga !== gb), 'cross-group vertex-triangle');
    assertSameSet(cross.ee, subset('ee', (ga, gb) => ga !== gb), 'cross-group edge-edge');
  }
  assert.throws(() => new SpatialHashBroadPhase(sc.surface).findProximityCandidates(sc.x, 0.1, 'cross-group'), /groupOfNode/);
});

test('bvh method: the same pairs as brute force for proximity queries and queries along a motion, every pair kind, reused across moves', () => {
  for (let seed = 61; seed <= 64; seed++) {
    const sc = twoBoxes(seed);
    const nNodes = sc.x.length / 3;
    const groupOfNode = Int32Array.from({ length: nNodes }, (_, n) => (n < sc.firstBodyNodes ? 0 : 1));
    const fixed = seed === 64 ? Uint8Array.from({ length: nNodes }, (_, n) => (n < sc.firstBodyNodes ? 1 : 0)) : null;
    const bvh = new SpatialHashBroadPhase(sc.surface, { method: 'bvh', groupOfNode, selfContact: [1, seed % 2], fixedNodes: fixed });
    const hash = new SpatialHashBroadPhase(sc.surface, { groupOfNode, selfContact: [1, seed % 2], fixedNodes: fixed });
    // The trees are shaped at the first query; later queries at moved positions only refit them.
    const r = rng(seed);
    for (let move = 0; move < 3; move++) {
      const x = Float64Array.from(sc.x, (v, i) => v + move * (0.05 * (r() - 0.5) + (i % 3 === 0 ? -0.05 : 0)));
      const moved = { ...sc, x };
      for (const kind of ['all', 'same-group', 'cross-group'] as const) {
        bvh.findProximityCandidates(x, 0.06, kind);
        hash.findProximityCandidates(x, 0.06, kind);
        const got = hashPairs(moved, bvh), want = hashPairs(moved, hash);
        assertSameSet(got.vt, want.vt, `seed ${seed} move ${move} ${kind} proximity vertex-triangle`);
        assertSameSet(got.ee, want.ee, `seed ${seed} move ${move} ${kind} proximity edge-edge`);
        findSweptCandidates(bvh, x, sc.dx, 0.7, 0.02, kind);
        const selfContact = [1, seed % 2];
        const keep = (a: number[], b: number[]) => {
          const ga = groupOfNode[a[0]], gb = groupOfNode[b[0]];
          return kind === 'all' || (kind === 'same-group' ? ga === gb && selfContact[ga] === 1 : ga !== gb);
        };
        const gotS = hashPairs(moved, bvh), wantS = bruteAlong(moved, x, sc.dx, 0.7, 0.01, fixed, keep);
        assertSameSet(gotS.vt, wantS.vt, `seed ${seed} move ${move} ${kind} along vertex-triangle`);
        assertSameSet(gotS.ee, wantS.ee, `seed ${seed} move ${move} ${kind} along edge-edge`);
      }
    }
    // And without groups.
    const plain = new SpatialHashBroadPhase(sc.surface, { method: 'bvh', fixedNodes: fixed });
    findSweptCandidates(plain, sc.x, sc.dx, 0.7, 0.02);
    const want = bruteAlong(sc, sc.x, sc.dx, 0.7, 0.01, fixed);
    assertSameSet(hashPairs(sc, plain).vt, want.vt, `seed ${seed} bvh vs brute force vertex-triangle`);
    assertSameSet(hashPairs(sc, plain).ee, want.ee, `seed ${seed} bvh vs brute force edge-edge`);
  }
});

test('pairs come out sorted, the same list from the hash and from the trees (owned features); with an edge outside every triangle the trees fall back to vertex and edge trees', () => {
  const sc = twoBoxes(81);
  const lists = (bp: SpatialHashBroadPhase) => ({
    vt: Array.from(bp.vertexTrianglePairs.subarray(0, 2 * bp.vertexTriangleCount)),
    ee: Array.from(bp.edgeEdgePairs.subarray(0, 2 * bp.edgeEdgeCount)),
  });
  const sorted = (pairs: number[]) => {
    for (let k = 2; k < pairs.length; k += 2) {
      if (pairs[k - 2] > pairs[k] || (pairs[k - 2] === pairs[k] && pairs[k - 1] >= pairs[k + 1])) return false;
    }
    return true;
  };
  const hash = new SpatialHashBroadPhase(sc.surface);
  const bvh = new SpatialHashBroadPhase(sc.surface, { method: 'bvh' });
  hash.findProximityCandidates(sc.x, 0.06);
  bvh.findProximityCandidates(sc.x, 0.06);
  const a = lists(hash), b = lists(bvh);
  assert.ok(a.vt.length > 100 && a.ee.length > 100, 'the query lists pairs');
  assert.ok(sorted(a.vt) && sorted(a.ee), 'sorted by first, then second');
  assert.deepEqual(b, a, 'the trees list the same pairs in the same order as the hash');
  // An extra edge between two vertices of the first box that share no triangle (a rod across it): no triangle owns it.
  const nodes = Array.from(sc.surface.vertices).filter((n) => n < sc.firstBodyNodes);
  const p = (n: number) => [sc.x[3 * n], sc.x[3 * n + 1], sc.x[3 * n + 2]];
  const far = nodes.reduce((m, n) => (Math.hypot(...p(n).map((v, d) => v - p(nodes[0])[d])) > Math.hypot(...p(m).map((v, d) => v - p(nodes[0])[d])) ? n : m));
  const rod = { ...sc, surface: { ...sc.surface, edges: Uint32Array.from([...sc.surface.edges, nodes[0], far]) } };
  const trees = new SpatialHashBroadPhase(rod.surface, { method: 'bvh' });
  trees.findProximityCandidates(rod.x, 0.06);
  const want = bruteForce(rod, null, 0, 0.03, null);
  assertSameSet(hashPairs(rod, trees).vt, want.vt, 'with a rod: vertex-triangle');
  assertSameSet(hashPairs(rod, trees).ee, want.ee, 'with a rod: edge-edge');
  const rodEdge = rod.surface.edges.length / 2 - 1;
  assert.ok([...want.ee].some((k) => k.split(',').map(Number).includes(rodEdge)), 'the rod has edge-edge pairs (the fallback is exercised)');
  findSweptCandidates(trees, rod.x, rod.dx, 0.7, 0.02);
  const along = bruteAlong(rod, rod.x, rod.dx, 0.7, 0.01, null);
  assertSameSet(hashPairs(rod, trees).vt, along.vt, 'with a rod, along a motion: vertex-triangle');
  assertSameSet(hashPairs(rod, trees).ee, along.ee, 'with a rod, along a motion: edge-edge');
});

test('per-group reach: each body\'s boxes grow by its own reach, the same pairs as brute force (hash and bvh)', () => {
  const sc = twoBoxes(71);
  const nNodes = sc.x.length / 3;
  const groupOfNode = Int32Array.from({ length: nNodes }, (_, n) => (n < sc.firstBodyNodes ? 0 : 1));
  const dhat = 0.02;
  const reach = [0.01, 0.09];
  // Brute force: a primitive of group g has its box grown by (dhat + reach[g]) / 2.
  const grow = (nodes: number[]) => box(nodes, sc.x, null, 0, 0.5 * (dhat + reach[groupOfNode[nodes[0]]]));
  const want = { vt: new Set<string>(), ee: new Set<string>() };
  const nt = sc.surface.triangles.length / 3, ne = sc.surface.edges.length / 2;
  for (const v of sc.surface.vertices) {
    for (let t = 0; t < nt; t++) {
      if (!tri(sc, t).includes(v) && overlap(grow([v]), grow(tri(sc, t)))) want.vt.add(`${v},${t}`);
    }
  }
  for (let a = 0; a < ne; a++) {
    for (let b = a + 1; b < ne; b++) {
      if (!edge(sc, a).some((n) => edge(sc, b).includes(n)) && overlap(grow(edge(sc, a)), grow(edge(sc, b)))) want.ee.add(`${a},${b}`);
    }
  }
  const uniform = bruteForce(sc, null, 0, 0.5 * (dhat + reach[0]), null);
  assert.ok(want.vt.size > uniform.vt.size && want.ee.size > uniform.ee.size, 'the longer reach of the second body adds pairs');
  for (const method of ['hash', 'bvh'] as const) {
    const bp = new SpatialHashBroadPhase(sc.surface, { method, groupOfNode });
    bp.findProximityCandidates(sc.x, dhat, 'all', reach);
    const got = hashPairs(sc, bp);
    assertSameSet(got.vt, want.vt, `${method} vertex-triangle`);
    assertSameSet(got.ee, want.ee, `${method} edge-edge`);
  }
  assert.throws(() => new SpatialHashBroadPhase(sc.surface).findProximityCandidates(sc.x, dhat, 'all', reach), /groupReach/);
});
