import { test } from 'node:test';
import assert from 'node:assert/strict';
import { barrier, edgeEdgeMollifier, edgeEdgeMollifierThreshold } from '../src/contact/barrier.js';
import { edgeEdgeDistance2, edgeEdgeDistanceType, pointTriangleDistance2, pointTriangleDistanceType } from '../src/contact/distance.js';
import { findIntersection } from '../src/contact/intersection.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';
import { affineClosingBound } from '../src/contact/candidate-set.js';
import { rng } from './numeric-helpers.js';

// The barrier reuses its contact candidates while vertices stay near where they were found and lets the CCD look at
// those candidates only when a step is short. Both shortcuts are checked here against brute force over every pair.

const dhat = 0.002;

/**
 * A thin slab (its faces 1.5 mm apart, dhat = 2 mm: self-contact active at rest) with selfContact on, and a block
 * whose bottom is `gap` above it.
 */
function slabModel(gap: number) {
  const slab = slabBody(3);
  const block = {
    ...slab,
    name: 'block',
    mesh: { ...slab.mesh, size: [0.06, 0.03, 0.06] as [number, number, number], cells: [2, 1, 2] as [number, number, number] },
    transform: { translate: [0.017, 0.0515 + gap, 0.023] as [number, number, number] },
  };
  return buildModel(parseScene({ name: 'slab', duration: 0.1, dt: 0.01, contact: { kappa: 1e3, dhat }, bodies: [slab, block] }));
}

/** The slab (10 cm square, 1.5 mm thick, `cells` x 1 x `cells` cells) with selfContact on. */
function slabBody(cells: number) {
  return {
    name: 'slab',
    mesh: { type: 'box' as const, size: [0.1, 0.0015, 0.1] as [number, number, number], cells: [cells, 1, cells] as [number, number, number] },
    transform: { translate: [0, 0.05, 0] as [number, number, number] },
    material: { model: 'neo-hookean' as const, youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
    selfContact: true,
  };
}

/** Every vertex-triangle and edge-edge pair of the collision mesh that shares no node. */
function allPairs(mesh: { vertices: Uint32Array; edges: Uint32Array; triangles: Uint32Array }): { nodes: number[]; edgeEdge: boolean }[] {
  const pairs: { nodes: number[]; edgeEdge: boolean }[] = [];
  const { vertices, edges, triangles } = mesh;
  for (const v of vertices) {
    for (let t = 0; t < triangles.length / 3; t++) {
      const tri = [triangles[3 * t], triangles[3 * t + 1], triangles[3 * t + 2]];
      if (!tri.includes(v)) pairs.push({ nodes: [v, ...tri], edgeEdge: false });
    }
  }
  for (let a = 0; a < edges.length / 2; a++) {
    for (let b = a + 1; b < edges.length / 2; b++) {
      const ns = [edges[2 * a], edges[2 * a + 1], edges[2 * b], edges[2 * b + 1]];
      if (new Set(ns).size === 4) pairs.push({ nodes: ns, edgeEdge: true });
    }
  }
  return pairs;
}

function gather(x: Float64Array, nodes: number[]): Float64Array {
  const out = new Float64Array(12);
  nodes.forEach((n, i) => out.set(x.subarray(3 * n, 3 * n + 3), 3 * i));
  return out;
}

/** Squared distance of a pair at x (its positions left in the returned stencil). */
function pairDistance2(p: { nodes: number[]; edgeEdge: boolean }, x: Float64Array): { d2: number; s: Float64Array } {
  const s = gather(x, p.nodes);
  return { d2: p.edgeEdge ? edgeEdgeDistance2(s, edgeEdgeDistanceType(s)) : pointTriangleDistance2(s, pointTriangleDistanceType(s)), s };
}

/** Barrier energy over all pairs (same units as BarrierPotential.energy). */
function bruteEnergy(pairs: ReturnType<typeof allPairs>, rest: Float64Array, x: Float64Array, kappa: number): { energy: number; active: number } {
  let e = 0;
  let active = 0;
  for (const p of pairs) {
    const { d2, s } = pairDistance2(p, x);
    if (d2 >= dhat * dhat) continue;
    active++;
    const m = p.edgeEdge ? edgeEdgeMollifier(s, edgeEdgeMollifierThreshold(gather(rest, p.nodes))) : 1;
    e += m * barrier(d2, dhat * dhat);
  }
  return { energy: (kappa / (dhat * dhat)) * e, active };
}

/** Rotates every point of x by `angle` about `axis` through `center` (Rodrigues). */
function turn(x: Float64Array, center: number[], angle: number, axis: number[]): void {
  const len = Math.hypot(...axis);
  const [kx, ky, kz] = axis.map((a) => a / len);
  const c = Math.cos(angle), s = Math.sin(angle);
  for (let o = 0; o < x.length; o += 3) {
    const px = x[o] - center[0], py = x[o + 1] - center[1], pz = x[o + 2] - center[2];
    const dot = kx * px + ky * py + kz * pz;
    const cx = ky * pz - kz * py, cy = kz * px - kx * pz, cz = kx * py - ky * px;
    x[o] = center[0] + px * c + cx * s + kx * dot * (1 - c);
    x[o + 1] = center[1] + py * c + cy * s + ky * dot * (1 - c);
    x[o + 2] = center[2] + pz * c + cz * s + kz * dot * (1 - c);
  }
}

/** Smallest distance over all pairs at x. */
function bruteMinDistance(pairs: ReturnType<typeof allPairs>, x: Float64Array): number {
  let m = Infinity;
  for (const p of pairs) m = Math.min(m, pairDistance2(p, x).d2);
  return Math.sqrt(m);
}

test('reused candidate sets give the brute-force barrier energy along a random walk (self and cross pairs, sets kept and rebuilt)', () => {
  const model = slabModel(0.012);
  const barrier = model.contact!.barrier;
  const mesh = model.contact!.mesh;
  const pairs = allPairs(mesh);
  const r = rng(7);
  const x = Float64Array.from(model.x0);
  let activeStates = 0;
  let gap = 0.012;
  for (let step = 0; step < 60; step++) {
    // The block comes down 0.3 mm per step (the sets are reused for a few steps, then rebuilt) to within dhat of the
    // slab and stays there; both bodies jitter by 0.1 mm per node and drift as a whole, and the scene turns by
    // 0.01 rad per step about a random axis (the self-contact sets undo each body's rigid motion); every 7th step
    // the slab bends by up to 3 mm.
    const down = Math.min(3e-4, gap - 1.2e-3);
    gap -= down;
    const bend = step % 7 === 6 ? 3e-3 * (2 * r() - 1) : 0;
    const drift = [0.004 * (r() - 0.5), 0.004 * (r() - 0.5), 0.004 * (r() - 0.5)];
    const trial = Float64Array.from(x);
    for (let n = 0; n < model.nNodes; n++) {
      const inBlock = mesh.groupOfNode[n] === 1;
      for (let d = 0; d < 3; d++) {
        let v = 1e-4 * (2 * r() - 1) + (inBlock ? 0 : drift[d]);
        if (d === 1 && inBlock) v += drift[1] - down;
        if (d === 1 && !inBlock) v += bend * Math.sin(30 * model.x0[3 * n]);
        trial[3 * n + d] += v;
      }
    }
    turn(trial, [0.05, 0.06, 0.05], 0.01, [2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
    const want = bruteEnergy(pairs, model.rest, trial, barrier.kappa);
    if (!Number.isFinite(want.energy) || findIntersection(mesh, trial)) continue;
    x.set(trial);
    const got = barrier.energy(x);
    assert.ok(Math.abs(got - want.energy) <= 1e-9 * Math.max(1, want.energy), `step ${step}: energy ${got} vs brute force ${want.energy}`);
    assert.equal(barrier.activeContacts(x, null).count, want.active, `step ${step}: active pair count`);
    if (want.active > 0) activeStates++;
  }
  assert.ok(activeStates > 30, `the walk should keep pairs active (${activeStates} states)`);
});

test('the CCD filter never lets a step bring any pair into contact, short steps (candidates only) and long ones (full sweep)', () => {
  const model = slabModel(0.03);
  const barrier = model.contact!.barrier;
  const mesh = model.contact!.mesh;
  const pairs = allPairs(mesh);
  const r = rng(11);
  const x = Float64Array.from(model.x0);
  const slabTop = (n: number) => mesh.groupOfNode[n] === 0 && model.x0[3 * n + 1] > 0.0505;
  let limited = 0;
  for (let trial = 0; trial < 40; trial++) {
    // Push the block down onto the slab by 0.05 to 60 mm (from 3 cm away it can pass through in one step), its
    // nodes jittering by a fifth of that; every other trial also press the slab's top face onto its bottom face,
    // the slab jittering too (the other trials leave the slab still, so the block alone decides the step).
    const size = 5e-5 * Math.pow(1200, r());
    const dx = new Float64Array(x.length);
    for (let n = 0; n < model.nNodes; n++) {
      const inBlock = mesh.groupOfNode[n] === 1;
      if (!inBlock && trial % 2 === 1) continue;
      for (let d = 0; d < 3; d++) dx[3 * n + d] = 0.2 * size * (2 * r() - 1);
      if (inBlock || slabTop(n)) dx[3 * n + 1] = -size * (0.5 + r());
    }
    if (trial % 3 === 2) {
      // Every third trial also spins the block about its centre (up to 0.5 rad: its nodes move by up to 1.5 cm),
      // which the CCD's per-pair motion bound must see through.
      const spun = Float64Array.from(x);
      turn(spun, [0.047, 0.0515 + 0.015, 0.053], 0.5 * (2 * r() - 1), [2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
      for (let i = 0; i < x.length; i++) if (mesh.groupOfNode[Math.floor(i / 3)] === 1) dx[i] += spun[i] - x[i];
    }
    barrier.energy(x); // a line search evaluates x first: the sets are prepared there
    const t = barrier.maxStep(x, dx);
    assert.ok(t >= 0 && t <= 1);
    if (t < 1) limited++;
    // Sample the path up to t: no pair may reach zero distance on the way.
    for (let s = 1; s <= 8; s++) {
      const y = Float64Array.from(x, (v, i) => v + (s / 8) * t * dx[i]);
      const d = bruteMinDistance(pairs, y);
      assert.ok(d > 0, `trial ${trial} (step ${size.toExponential(2)} m): distance ${d} at ${s}/8 of the allowed step`);
      assert.equal(findIntersection(mesh, y), null, `trial ${trial}: intersection on the way`);
    }
    // Move a quarter of the way, so later trials start from states closer to contact.
    for (let i = 0; i < x.length; i++) x[i] += 0.25 * t * dx[i];
  }
  assert.ok(limited > 5 && limited < 40, `some steps limited by the filter, some not (${limited} of 40)`);
});

test('a set built along a Newton step serves every line-search trial point on it: no other build, brute-force energies', () => {
  const model = slabModel(0.004);
  const barrier = model.contact!.barrier;
  const mesh = model.contact!.mesh;
  const pairs = allPairs(mesh);
  const r = rng(5);
  const x = Float64Array.from(model.x0);
  let alongBuilds = 0;
  let activeTrials = 0;
  for (let trial = 0; trial < 12; trial++) {
    // Steps of 1-8 mm (beyond every set's margin, so each filter query builds along its step): the block comes down
    // onto the slab, both bodies drift and jitter, the slab bends; each body also turns by up to 0.05 rad about its
    // own centre (the self-contact frame undoes only the mean motion along a step).
    const size = 1e-3 * Math.pow(8, r());
    const dx = new Float64Array(x.length);
    const moved = Float64Array.from(x);
    for (const [group, centre] of [[0, [0.05, 0.05, 0.05]], [1, [0.047, 0.07, 0.053]]] as [number, number[]][]) {
      const part = Float64Array.from(x);
      turn(part, centre, 0.05 * (2 * r() - 1), [2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
      for (let n = 0; n < model.nNodes; n++) if (mesh.groupOfNode[n] === group) moved.set(part.subarray(3 * n, 3 * n + 3), 3 * n);
    }
    const drift = [size * (r() - 0.5), size * (r() - 0.5), size * (r() - 0.5)];
    for (let n = 0; n < model.nNodes; n++) {
      const inBlock = mesh.groupOfNode[n] === 1;
      for (let d = 0; d < 3; d++) {
        let v = moved[3 * n + d] - x[3 * n + d] + 0.1 * size * (2 * r() - 1) + drift[d];
        if (d === 1) v += inBlock ? -size : size * 0.5 * Math.sin(30 * model.x0[3 * n]);
        dx[3 * n + d] = v;
      }
    }
    barrier.energy(x); // the line search starts at x: the sets are prepared there
    const before = barrier.candidateBuilds;
    const t = barrier.maxStep(x, dx);
    const built = barrier.candidateBuilds;
    if (built > before) alongBuilds++;
    // The line search's trial points: t, t/2, t/4, ... on the step.
    let accepted = 0;
    for (let s = t; s > t / 64; s *= 0.5) {
      const y = Float64Array.from(x, (v, i) => v + s * dx[i]);
      const want = bruteEnergy(pairs, model.rest, y, barrier.kappa);
      if (!Number.isFinite(want.energy) || findIntersection(mesh, y)) continue;
      const got = barrier.energy(y);
      assert.ok(Math.abs(got - want.energy) <= 1e-9 * Math.max(1, want.energy), `trial ${trial} at ${s}: energy ${got} vs brute force ${want.energy}`);
      assert.equal(barrier.activeContacts(y, null).count, want.active, `trial ${trial} at ${s}: active pair count`);
      if (want.active > 0) activeTrials++;
      accepted ||= s;
    }
    assert.equal(barrier.candidateBuilds, built, `trial ${trial}: the trial points needed another build`);
    // Accept the first feasible trial point, as the line search would.
    if (accepted > 0) for (let i = 0; i < x.length; i++) x[i] += accepted * dx[i];
  }
  assert.ok(alongBuilds >= 6, `most filter queries should build along their step (${alongBuilds} of 12)`);
  assert.ok(activeTrials > 5, `the trial points should have active pairs (${activeTrials})`);
});

test('a turn of a self-contact body keeps its candidates (the step moves neighbours alike), jitter does not; no pair touches on either path', () => {
  const model = buildModel(parseScene({ name: 'slab', duration: 0.1, dt: 0.01, contact: { kappa: 1e3, dhat }, bodies: [slabBody(6)] }));
  const barrier = model.contact!.barrier;
  const mesh = model.contact!.mesh;
  const pairs = allPairs(mesh);
  const x = Float64Array.from(model.x0);
  const centre = [0.05, 0.05075, 0.05];
  const path = (dx: Float64Array, t: number) => {
    for (let s = 1; s <= 16; s++) {
      const y = Float64Array.from(x, (v, i) => v + (s / 16) * t * dx[i]);
      assert.ok(bruteMinDistance(pairs, y) > 0, `a pair touches at ${s}/16 of the allowed step`);
      assert.equal(findIntersection(mesh, y), null);
    }
  };
  for (const angle of [0.05, 0.2]) {
    // The turn as one straight step (a rigid start candidate of Newton): nodes move by up to 1.4 cm at 0.2 rad.
    const turned = Float64Array.from(x);
    turn(turned, centre, angle, [1, 2, 0.5]);
    const dx = Float64Array.from(turned, (v, i) => v - x[i]);
    barrier.energy(x);
    const before = barrier.candidateBuilds;
    const t = barrier.maxStep(x, dx);
    assert.equal(barrier.candidateBuilds, before, `turn by ${angle} rad: the candidates were built again`);
    assert.ok(t > 0.5, `turn by ${angle} rad: step cut to ${t}`);
    path(dx, t);
    // Jitter (each node by up to 3 mm per axis, independently, more than the slab is thick): neighbours do not move
    // alike, so the set is built along this step.
    const r = rng(angle === 0.05 ? 3 : 4);
    const jitter = Float64Array.from(x, () => 0.003 * (2 * r() - 1));
    barrier.energy(x);
    const beforeJitter = barrier.candidateBuilds;
    path(jitter, barrier.maxStep(x, jitter));
    assert.ok(barrier.candidateBuilds > beforeJitter, `jitter after a turn by ${angle} rad: no new candidates`);
  }
});

test('the affine bound on how far a step closes two points holds for random maps, residuals and squeezes', () => {
  // Brute force: the least |u0 + s (A u0 + e_p - e_q)| over s in [0, t] (sampled densely) against the bound.
  const r = rng(17);
  let tight = 0;
  for (let trial = 0; trial < 2000; trial++) {
    const A = Array.from({ length: 9 }, () => 0.4 * (2 * r() - 1));
    const d0 = 0.01;
    // u0: a random direction, at least d0 long.
    const u0 = [2 * r() - 1, 2 * r() - 1, 2 * r() - 1];
    const len = Math.hypot(...u0) / (d0 * (1 + 0.5 * r()));
    for (let i = 0; i < 3; i++) u0[i] /= len;
    if (trial % 2 === 0) {
      // A squeeze along u0, A = -a n n^T (n = u0 / |u0|): the pair closes fastest.
      const a = 0.9 * r(), n2 = u0[0] * u0[0] + u0[1] * u0[1] + u0[2] * u0[2];
      for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) A[3 * i + j] = (-a * u0[i] * u0[j]) / n2;
    }
    const aF = Math.hypot(...A);
    const E = trial % 4 < 2 ? 0 : 1e-3 * r();
    const e = [2 * r() - 1, 2 * r() - 1, 2 * r() - 1];
    const eLen = Math.hypot(...e) / (2 * E * r());
    const w = [0, 1, 2].map((i) => A[3 * i] * u0[0] + A[3 * i + 1] * u0[1] + A[3 * i + 2] * u0[2] + (E > 0 ? e[i] / eLen : 0));
    const t = r();
    let least = Infinity;
    for (let k = 0; k <= 200; k++) {
      const s = (k / 200) * t;
      least = Math.min(least, Math.hypot(u0[0] + s * w[0], u0[1] + s * w[1], u0[2] + s * w[2]));
    }
    const bound = affineClosingBound(d0, aF, E, t);
    assert.ok(bound <= least * (1 + 1e-12), `trial ${trial}: bound ${bound} above the least distance ${least}`);
    if (bound > 0.9 * least) tight++;
  }
  assert.ok(tight > 50, `the bound should be close for some steps (${tight} of 2000)`);
  // The squeeze the exponential form gets wrong: a = 0.5 over the whole step, a pair along n.
  const least = 0.01 * (1 - 0.5);
  assert.ok(affineClosingBound(0.01, 0.5, 0, 1) <= least);
  assert.ok(0.01 * Math.exp(-0.5) > least, 'the exponential form claims more than the squeeze leaves');
});

test('a pair a build leaves out as far apart never comes within dhat while the set is valid: the worst per-axis motions close it by sqrt(3) times their size', () => {
  // Two 1 cm cubes (no self-contact), their facing sides perpendicular to n = (1, 1, 1)/sqrt(3), D apart. A set
  // built at a point with margin m = dhat (its first build) stays valid while every vertex is within m/2 per axis
  // of where it was found; moving each cube by m/2 per axis toward the other closes the gap by sqrt(3) m. A build
  // that dropped pairs more than (dhat + m) apart (Euclidean), not sqrt(3) (dhat + m), would miss them here.
  const cube = (name: string) => ({
    name,
    mesh: { type: 'box' as const, size: [0.01, 0.01, 0.01] as [number, number, number], cells: [1, 1, 1] as [number, number, number] },
    transform: { center: true },
    material: { model: 'neo-hookean' as const, youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
  });
  const model = buildModel(parseScene({ name: 'diagonal', duration: 0.1, dt: 0.01, contact: { kappa: 1e3, dhat }, bodies: [cube('a'), cube('b')] }));
  const barrier = model.contact!.barrier;
  const mesh = model.contact!.mesh;
  const pairs = allPairs(mesh);
  const side = 0.01;
  const gap = 2.6 * dhat; // between (dhat + m) = 2 dhat and sqrt(3) (dhat + m) = 3.46 dhat
  const n = [1, 1, 1].map((c) => c / Math.sqrt(3));
  const x = Float64Array.from(model.x0);
  // Turn both cubes so that their y axis is n, then set b's bottom face gap above a's top face.
  turn(x, [0, 0, 0], Math.acos(n[1]), [n[2], 0, -n[0]]);
  for (let v = 0; v < model.nNodes; v++) {
    if (mesh.groupOfNode[v] !== 1) continue;
    for (let d = 0; d < 3; d++) x[3 * v + d] += (side + gap) * n[d];
  }
  assert.ok(Math.abs(bruteMinDistance(pairs, x) - gap) < 1e-12, `the cubes start ${gap} apart`);
  assert.equal(barrier.energy(x), 0);
  const builds = barrier.candidateBuilds;
  // Each cube moves 0.49 dhat per axis toward the other: the gap closes by 2 sqrt(3) 0.49 dhat to 0.90 dhat.
  const moved = Float64Array.from(x);
  for (let v = 0; v < model.nNodes; v++) {
    const sign = mesh.groupOfNode[v] === 1 ? -1 : 1;
    for (let d = 0; d < 3; d++) moved[3 * v + d] += sign * 0.49 * dhat;
  }
  const want = bruteEnergy(pairs, model.rest, moved, barrier.kappa);
  assert.ok(want.active > 0 && bruteMinDistance(pairs, moved) < dhat, 'the motion brings pairs within dhat');
  const got = barrier.energy(moved);
  assert.equal(barrier.candidateBuilds, builds, 'the set found at the start serves the moved cubes (no rebuild)');
  assert.ok(Math.abs(got - want.energy) <= 1e-9 * want.energy, `energy ${got} vs brute force ${want.energy}`);
  assert.equal(barrier.activeContacts(moved, null).count, want.active);
});
