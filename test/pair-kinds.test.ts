import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import { barrier } from '../src/contact/barrier.js';
import { SpatialHashBroadPhase } from '../src/contact/broad-phase.js';
import type { CollisionMesh } from '../src/contact/collision-mesh.js';
import { PairScratch, type PairHessian } from '../src/contact/pairs/pair-kind.js';
import { PairList } from '../src/contact/pairs/pair-list.js';
import { OBSTACLE_PAIR_KINDS, SURFACE_PAIR_KINDS } from '../src/contact/pairs/registry.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';
import { centralDifferenceGradient, centralDifferenceJacobian, flattenRows, maxAbs, maxAbsDiff, minEigenvalue, rng } from './numeric-helpers.js';

// The contract every contact pair kind keeps (pairs/pair-kind.ts), checked on every kind of the registry, so a new
// kind is tested by registering it: its barrier gradient and Hessian against finite differences of its own energy,
// its PSD Newton matrices, its list loops on many pairs against the same pairs one by one, and its step bound
// against its own distance.

const dhat = 0.01;

/** A cube just above the ground and a second one just above the first, jittered: every kind has active pairs. */
function nearContact(): { mesh: CollisionMesh; rest: Float64Array; x: Float64Array } {
  const cube = (name: string, at: [number, number, number]) => ({
    name,
    mesh: { type: 'box' as const, size: [0.1, 0.1, 0.1] as [number, number, number], cells: [2, 2, 2] as [number, number, number] },
    transform: { translate: at },
    material: { model: 'neo-hookean' as const, youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
  });
  const model = buildModel(
    parseScene({
      name: 'pair-kinds',
      duration: 0.1,
      dt: 0.01,
      contact: { kappa: 1e5, dhat },
      obstacles: [{ type: 'plane' }],
      bodies: [cube('a', [0, 0.004, 0]), cube('b', [0.03, 0.107, 0.02])],
    }),
  );
  const r = rng(7);
  return { mesh: model.contact!.mesh, rest: model.rest, x: Float64Array.from(model.x0, (v) => v + 5e-4 * (2 * r() - 1)) };
}

/**
 * Every pair of every registered kind at x, one list per kind (surface pairs across the two cubes, within `reach`).
 * With `offsets`, each pair gets a contact offset xi that leaves it a gap d - xi between 0.2 and 0.9 dhat (pairs
 * closer than that get xi = d / 3): the offset barrier's terms are then what the kinds compute and the tests check.
 */
function pairsOfEveryKind(mesh: CollisionMesh, rest: Float64Array, x: Float64Array, offsets = false, reach = dhat): PairList[] {
  const bp = new SpatialHashBroadPhase(mesh, { fixedNodes: mesh.fixedNodes, groupOfNode: mesh.groupOfNode, selfContact: mesh.groups.map(() => 0) });
  bp.findProximityCandidates(x, reach, 'cross-group');
  const free = mesh.vertices.filter((v) => !mesh.fixedNodes[v]);
  const lists: PairList[] = [];
  for (const kind of SURFACE_PAIR_KINDS) {
    const list = new PairList(kind);
    kind.collect(bp, mesh, rest, list);
    lists.push(list);
  }
  for (const kind of OBSTACLE_PAIR_KINDS) {
    const list = new PairList(kind);
    kind.collect(mesh, free, list);
    lists.push(list);
  }
  if (offsets) {
    const c = new PairScratch();
    const r = rng(5);
    for (const list of lists) {
      for (let k = 0; k < list.count; k++) {
        const d = Math.sqrt(list.kind.distance2(list, k, x, c));
        const gap = (0.2 + 0.7 * r()) * dhat;
        list.offsets[k] = d > gap ? d - gap : d / 3;
      }
    }
  }
  return lists;
}

/** The pair's gap to its offset, d - xi, relative to dhat. */
function relativeGap(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  return (Math.sqrt(list.kind.distance2(list, k, x, c)) - list.offsets[k]) / dhat;
}

/** Pair k of `list` alone, its stencil renumbered 0 .. size-1, with its positions packed (local coordinates). */
function alone(list: PairList, k: number, x: Float64Array): { pair: PairList; xs: Float64Array } {
  const pair = new PairList(list.kind);
  pair.copyPair(list, k);
  const size = list.kind.size;
  const xs = new Float64Array(3 * size);
  for (let i = 0; i < size; i++) {
    xs.set(x.subarray(3 * pair.nodes[i], 3 * pair.nodes[i] + 3), 3 * i);
    pair.nodes[i] = i;
  }
  pair.setAllLive();
  return { pair, xs };
}

/** The pair list's barrier gradient at x (s = 1) over x's coordinates. */
function gradientOf(list: PairList, x: Float64Array, c: PairScratch): Float64Array {
  const g = new Float64Array(x.length);
  list.kind.addGradients(list, x, 1, g, c);
  return g;
}

/** The single pair's local Newton matrix of the given model at its packed positions xs (s = 1), dense. */
function newtonMatrixOf(pair: PairList, xs: Float64Array, c: PairScratch, model: PairHessian): Float64Array {
  const size = pair.kind.size;
  const builder = new PatternBuilder(size);
  builder.addClique(Array.from({ length: size }, (_, i) => i));
  const H = new BsrMatrix(builder.build());
  pair.kind.addHessians(pair, xs, 1, H, new Uint8Array(size), c, model);
  return flattenRows(H.toDense());
}

function rows(m: Float64Array, n: number): Float64Array[] {
  return Array.from({ length: n }, (_, r) => m.subarray(n * r, n * r + n));
}

for (const offsets of [false, true]) {
test(`every pair kind${offsets ? ' with contact offsets (barrier on d - xi)' : ''}: gradient and exact Hessian match finite differences of its energy, its Newton matrices are PSD, its list loops add up its pairs`, () => {
  const { mesh, rest, x } = nearContact();
  const c = new PairScratch();
  c.setDhat(dhat);
  const tested = new Map<string, number>();
  let largestOffset = 0;
  for (const list of pairsOfEveryKind(mesh, rest, x, offsets, offsets ? 3 * dhat : dhat)) {
    const kind = list.kind;
    const N = x.length;
    let energySum = 0;
    const gradientSum = new Float64Array(N);
    const hessianSum = new Float64Array(N * N);
    const pattern = new PatternBuilder(N / 3);
    for (let k = 0; k < list.count; k++) {
      const { pair, xs } = alone(list, k, x);
      const n = xs.length;
      const label = `${kind.name} pair ${k}`;
      const g = gradientOf(pair, xs, c);
      const Hk = newtonMatrixOf(pair, xs, c, 'exact');
      energySum += kind.sumEnergy(pair, xs, c, 0);
      const at = (i: number) => 3 * list.nodes[kind.size * k + Math.floor(i / 3)] + (i % 3);
      for (let i = 0; i < n; i++) {
        gradientSum[at(i)] += g[i];
        for (let j = 0; j < n; j++) hessianSum[N * at(i) + at(j)] += Hk[n * i + j];
      }
      pattern.addClique(Array.from(list.nodes.subarray(kind.size * k, kind.size * k + kind.size)));

      // Derivatives away from the kinks of the barrier's curvature at gap 0 and dhat, where differences are poor.
      const gap = relativeGap(list, k, x, c);
      if (!(gap > 0.2 && gap < 0.9)) continue;
      if (offsets) largestOffset = Math.max(largestOffset, list.offsets[k] / dhat);
      // The energy is m b((d - xi)^2): the plain barrier at the gap (xi = 0: at the distance).
      const d = Math.sqrt(kind.distance2(pair, 0, xs, c));
      const expected = kind.mollifier(pair, 0, c) * barrier((d - pair.offsets[0]) ** 2, c.dhat2);
      const e0 = kind.sumEnergy(pair, xs, c, 0);
      assert.ok(Math.abs(e0 - expected) <= 1e-9 * expected, `${label}: energy ${e0}, m b((d - xi)^2) = ${expected}`);
      const fd = centralDifferenceGradient((y) => kind.sumEnergy(pair, y, c, 0), xs, 1, 1e-8);
      assert.ok(maxAbsDiff(g, fd) <= 1e-5 * maxAbs(g), `${label}: gradient ${g} vs differences ${fd}`);

      const H = Hk;
      const J = centralDifferenceJacobian((y, out) => out.set(gradientOf(pair, y, c)), xs, 1e-8);
      assert.ok(maxAbsDiff(H, J) <= 1e-4 * maxAbs(H), `${label}: Hessian differs from differences of the gradient by ${maxAbsDiff(H, J)} (max ${maxAbs(H)})`);

      for (const model of ['projected', 'gauss-newton'] as const) {
        const P = newtonMatrixOf(pair, xs, c, model);
        assert.ok(minEigenvalue(rows(P, n)) >= -1e-9 * maxAbs(P), `${label}: ${model} matrix not PSD`);
      }
      tested.set(kind.name, (tested.get(kind.name) ?? 0) + 1);
    }

    // The whole list at once (every pair live) adds up the same as its pairs one by one, scaled by s.
    list.setAllLive();
    const s = 3;
    const e = kind.sumEnergy(list, x, c, 1);
    assert.ok(Math.abs(e - (1 + energySum)) <= 1e-12 * e, `${kind.name}: sumEnergy ${e} vs ${1 + energySum}`);
    const g = new Float64Array(x.length);
    kind.addGradients(list, x, s, g, c);
    assert.ok(maxAbsDiff(g, gradientSum.map((v) => s * v)) <= 1e-12 * maxAbs(g), `${kind.name}: addGradients`);
    const H = new BsrMatrix(pattern.build());
    kind.addHessians(list, x, s, H, new Uint8Array(N / 3), c, 'exact');
    const dense = flattenRows(H.toDense());
    assert.ok(maxAbsDiff(dense, hessianSum.map((v) => s * v)) <= 1e-12 * maxAbs(dense), `${kind.name}: addHessians`);
  }
  for (const kind of [...SURFACE_PAIR_KINDS, ...OBSTACLE_PAIR_KINDS]) assert.ok((tested.get(kind.name) ?? 0) >= 2, `test setup: no active ${kind.name} pairs (${[...tested]})`);
  if (offsets) assert.ok(largestOffset > 1, `test setup: offsets up to ${largestOffset} dhat only`);
});

test(`every pair kind${offsets ? ' with contact offsets' : ''}: the step it allows keeps the pair apart${offsets ? ' by more than its offset' : ''}, and it stops some steps that would cross`, () => {
  const { mesh, rest, x } = nearContact();
  const c = new PairScratch();
  c.setDhat(dhat);
  const r = rng(11);
  const stopped = new Map<string, number>();
  for (const list of pairsOfEveryKind(mesh, rest, x, offsets, offsets ? 3 * dhat : dhat)) {
    const kind = list.kind;
    for (let k = 0; k < list.count; k++) {
      if (!(relativeGap(list, k, x, c) < 1)) continue;
      const { pair, xs } = alone(list, k, x);
      for (let trial = 0; trial < 4; trial++) {
        const dx = Float64Array.from(xs, () => 0.03 * (2 * r() - 1)); // up to 3 gaps per step
        const t = kind.maxStep(pair, 0, xs, dx, 1, c);
        assert.ok(t >= 0 && t <= 1, `${kind.name}: step ${t}`);
        const y = Float64Array.from(xs, (v, i) => v + t * dx[i]);
        assert.ok(relativeGap(pair, 0, y, c) > 0, `${kind.name} pair ${k}: within its offset ${pair.offsets[0]} after the allowed step ${t}`);
        assert.ok(Number.isFinite(kind.sumEnergy(pair, y, c, 0)), `${kind.name} pair ${k}: infinite barrier after the allowed step ${t}`);
        if (t < 1) stopped.set(kind.name, (stopped.get(kind.name) ?? 0) + 1);
      }
    }
  }
  for (const kind of [...SURFACE_PAIR_KINDS, ...OBSTACLE_PAIR_KINDS]) assert.ok((stopped.get(kind.name) ?? 0) > 0, `no ${kind.name} step was stopped (${[...stopped]})`);
});
}

test('a step blocked by a vertex on a plane is explained by that pair', () => {
  const model = buildModel(
    parseScene({
      name: 'on-plane',
      duration: 0.1,
      dt: 0.01,
      gravity: [0, 0, 0],
      contact: { kappa: 1e5, dhat: 1e-3 },
      obstacles: [{ type: 'plane', name: 'ground' }],
      bodies: [{ name: 'dust', mesh: { type: 'particles', positions: [[0, 0.5, 0], [0.1, 0, 0]], masses: [1, 1] } }],
    }),
  );
  const barrier = model.contact!.barrier;
  const dx = Float64Array.from([0, -0.1, 0, 0, -0.1, 0]);
  assert.equal(barrier.maxStep(model.x0, dx), 0);
  assert.equal(
    barrier.explainBlockedStep(model.x0),
    "vertex 1 of particles 'dust' touches plane 'ground' (signed distance 0.00e+0 m); a barrier too weak for the load lets Newton press a pair onto the CCD tolerance: raise contact.kappa (now 100000)",
  );
  // A step that leaves the plane is not blocked, and then nothing is explained.
  dx[4] = 0.1;
  assert.ok(barrier.maxStep(model.x0, dx) > 0);
  assert.equal(barrier.explainBlockedStep(model.x0), undefined);
});

test('with a contact offset: the normal force friction takes is -dB/dd of the offset barrier, and a blocked step quotes the offset', () => {
  const xi = 0.002, dh = 1e-3;
  const model = buildModel(
    parseScene({
      name: 'thick-sheet-on-plane',
      duration: 0.1,
      dt: 0.01,
      gravity: [0, 0, 0],
      contact: { kappa: 1e5, dhat: dh },
      obstacles: [{ type: 'plane', name: 'ground' }],
      bodies: [
        {
          name: 'sheet',
          mesh: { type: 'shell', shape: { type: 'rectangle', size: [0.1, 0.1], cells: [1, 1] }, thickness: 2 * xi, areaDensity: 0.4, contactOffset: 'thickness' },
          material: { model: 'neo-hookean', youngsModulus: 1e6 },
          transform: { translate: [0, xi + 0.4 * dh, 0] },
        },
      ],
    }),
  );
  const barrier = model.contact!.barrier;
  const x = Float64Array.from(model.x0);
  x[1] += 0.3 * dh; // node 0 at gap 0.7 dhat, the other three at 0.4 dhat
  const contacts: Parameters<typeof barrier.activeContacts>[1] = [];
  const { count, minDistance } = barrier.activeContacts(x, contacts);
  assert.equal(count, 4);
  assert.ok(Math.abs(minDistance - 0.4 * dh) < 1e-12, `min gap ${minDistance}`);
  for (const contact of contacts!) {
    assert.equal(contact.offset, xi);
    const v = contact.nodes[0];
    const h = 1e-9;
    const y = Float64Array.from(x);
    y[3 * v + 1] += h;
    const up = barrier.energy(y);
    y[3 * v + 1] -= 2 * h;
    const down = barrier.energy(y);
    const force = -(up - down) / (2 * h);
    assert.ok(Math.abs(contact.normalForce - force) <= 1e-5 * force, `vertex ${v}: normal force ${contact.normalForce}, -dB/dd ${force}`);
  }
  // Node 0 exactly at its offset above the ground: no step toward it, and the explanation names the offset.
  x[1] = xi;
  const dx = new Float64Array(x.length);
  dx[1] = -0.01;
  assert.equal(barrier.maxStep(x, dx), 0);
  assert.match(barrier.explainBlockedStep(x)!, /^vertex 0 of shell 'sheet' touches plane 'ground' \(signed distance 2\.00e-3 m, contact offset 2\.00e-3 m\)/);
});
