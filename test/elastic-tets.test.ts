import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ElasticTets, lumpedMass, tetVolume } from '../src/energies/elastic-tets.js';
import { MATERIAL_MODELS, createMaterial, type MaterialModel } from '../src/energies/materials.js';
import { orientTets } from '../src/mesh/tet-mesh.js';
import { assembleHessianPattern, centralDifferenceGradient, centralDifferenceJacobian, composeSvd, flattenRows, maxAbs, maxAbsDiff, minEigenvalue, randomRotation, rng } from './numeric-helpers.js';

/**
 * Three tets sharing faces around 6 nodes, with jittered positions; tets reoriented to positive volume.
 */
function smallMesh(rand: () => number): { X: Float64Array; tets: Uint32Array } {
  const base = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0.2, 0.9, 0.1, 1];
  const X = Float64Array.from(base, (v) => v + 0.15 * (2 * rand() - 1));
  const tets = Uint32Array.from([0, 1, 2, 3, 1, 2, 3, 4, 1, 3, 4, 5]);
  orientTets({ positions: X, tets });
  return { X, tets };
}

const material = (model: MaterialModel, nu = 0.35) => createMaterial(model, { youngsModulus: 100, poissonRatio: nu });

/** A smallMesh, its elastic term of the given material, and a state x jittered by up to `amount` per coordinate. */
function deformedMesh(rand: () => number, model: MaterialModel, amount: number) {
  const { X, tets } = smallMesh(rand);
  const term = new ElasticTets(X, tets, material(model));
  const x = Float64Array.from(X, (v) => v + amount * (2 * rand() - 1));
  return { X, tets, term, x };
}

test('gradient matches central differences of the total energy, for every material', () => {
  const rand = rng(21);
  for (const model of MATERIAL_MODELS) {
    for (const amount of [0.05, 0.25]) {
      const { term, x } = deformedMesh(rand, model, amount);
      assert.equal(term.countInverted(x), 0, 'test mesh must stay uninverted');
      const g = new Float64Array(x.length);
      term.addGradient(x, 2, g);
      const fd = centralDifferenceGradient((y) => term.energy(y), x, 2, 1e-6);
      const maxErr = maxAbsDiff(fd, g);
      const maxG = maxAbs(g);
      assert.ok(maxG > 1e-3, `${model}: gradient suspiciously small`);
      assert.ok(maxErr < 1e-6 * maxG, `${model} amount ${amount}: gradient error ${maxErr} vs ${maxG}`);
    }
  }
});

test('exact Hessian matches central differences of the gradient; projected Hessian is PSD', () => {
  const rand = rng(22);
  for (const model of MATERIAL_MODELS) {
    for (const amount of [0.05, 0.3]) {
      const { term, x } = deformedMesh(rand, model, amount);
      if (term.countInverted(x) > 0) continue;
      const H = assembleHessianPattern(term, x.length / 3);
      term.addHessian(x, 3, H, false);
      const dense = flattenRows(H.toDense());
      const fd = centralDifferenceJacobian((y, out) => term.addGradient(y, 3, out), x, 1e-6);
      const maxErr = maxAbsDiff(fd, dense);
      const maxH = maxAbs(dense);
      assert.ok(maxErr < 1e-6 * maxH, `${model} amount ${amount}: Hessian error ${maxErr} vs ${maxH}`);

      // Projected: PSD, and no larger than needed (equal to exact when each element's dP/dF is PSD, at rest).
      H.zero();
      term.addHessian(x, 3, H, true);
      const minEig = minEigenvalue(H.toDense());
      assert.ok(minEig > -1e-9 * maxH, `${model}: projected Hessian eigenvalue ${minEig}`);
    }
    // At rest every material's dP/dF is PSD, so projection must not change the Hessian.
    const { X, tets } = smallMesh(rand);
    const term = new ElasticTets(X, tets, material(model));
    const H = assembleHessianPattern(term, X.length / 3);
    term.addHessian(X, 1, H, false);
    const exact = Float64Array.from(H.values);
    H.zero();
    term.addHessian(X, 1, H, true);
    assert.ok(maxAbsDiff(exact, H.values) < 1e-10 * maxAbs(exact), `${model}: projection changed the rest Hessian`);
  }
});

test('projected Hessian of a deformed tet equals V B^T (filtered dP/dF) B from the dense eigensystem, compressed or stretched (neo-Hookean: the closed form corrected along the filtered directions)', () => {
  const rand = rng(29);
  const X = Float64Array.from([0, 0, 0, 0.05, 0, 0, 0.01, 0.04, 0, 0.012, 0.01, 0.045]);
  const tets = Uint32Array.from([0, 1, 2, 3]);
  orientTets({ positions: X, tets });
  // Dm^-1 and B, the 9 x 12 map from the nodes' positions to F (row-major) of this tet
  const Dm = new Float64Array(9);
  for (let r = 0; r < 3; r++) for (let k = 0; k < 3; k++) Dm[3 * r + k] = X[3 * (tets[k + 1]) + r] - X[3 * tets[0] + r];
  const det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) + Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
  const inv = new Float64Array(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      const a = [(j + 1) % 3, (j + 2) % 3];
      const b = [(i + 1) % 3, (i + 2) % 3];
      inv[3 * i + j] = (Dm[3 * a[0] + b[0]] * Dm[3 * a[1] + b[1]] - Dm[3 * a[0] + b[1]] * Dm[3 * a[1] + b[0]]) / det;
    }
  const B = new Float64Array(9 * 12);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++)
      for (let k = 0; k < 3; k++) {
        B[12 * (3 * r + c) + 3 * tets[k + 1] + r] += inv[3 * k + c];
        B[12 * (3 * r + c) + 3 * tets[0] + r] -= inv[3 * k + c];
      }
  const volume = Math.abs(det) / 6;
  const cases: number[][] = [
    [1, 0.9, 0.8], [0.7, 0.7, 0.7], [0.5, 0.4, 0.3], [1.1, 0.95, 0.7], [1.3, 0.6, 0.9], [1, 1, 0.99], // compressed: twists < 0
    [1.2, 1.1, 1.05], [1, 1, 1], // stretched or rigid: the filter changes nothing
    [4.25, 2.94, 1.15], // stretched four-fold: the scaling block is indefinite (the full eigensystem route)
  ];
  const dPdF = new Float64Array(81);
  let corrected = 0;
  for (const model of ['neo-hookean', 'stable-neo-hookean', 'corotated'] as const) {
    const mat = material(model, 0.3);
    const term = new ElasticTets(X, tets, mat);
    const H = assembleHessianPattern(term, 4);
    for (const s of cases) {
      const F = composeSvd(randomRotation(rand), s, randomRotation(rand));
      const x = new Float64Array(12);
      for (let v = 0; v < 4; v++) for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) x[3 * v + r] += F[3 * r + c] * X[3 * v + c];
      for (const filter of ['clamp', 'abs'] as const) {
        H.zero();
        term.addHessian(x, 1, H, true, filter);
        const got = flattenRows(H.toDense());
        mat.projectedStressDerivative(F, dPdF, filter);
        const want = new Float64Array(144);
        for (let p = 0; p < 9; p++)
          for (let q = 0; q < 9; q++) {
            const d = volume * dPdF[9 * p + q];
            if (d === 0) continue;
            for (let a = 0; a < 12; a++) for (let b = 0; b < 12; b++) want[12 * a + b] += B[12 * p + a] * d * B[12 * q + b];
          }
        const scale = maxAbs(want);
        assert.ok(maxAbsDiff(got, want) < 1e-9 * scale, `${model} ${s} (${filter}): ${maxAbsDiff(got, want)} against ${scale}`);
        if (model === 'neo-hookean' && s[0] * s[1] * s[2] < 1 && !mat.nodeStiffness!(F, inv, 0, filter, new Float64Array(81), 0)) corrected++;
      }
    }
  }
  assert.ok(corrected >= 10, `the compressed neo-Hookean cases must miss the unfiltered shortcut (${corrected})`);
});

test('rest state and rigid motions: zero energy and zero force (nonlinear materials)', () => {
  const rand = rng(23);
  const { X, tets } = smallMesh(rand);
  const c = Math.cos(0.7);
  const s = Math.sin(0.7);
  const moved = new Float64Array(X.length);
  for (let i = 0; i < X.length / 3; i++) {
    const [x, y, z] = [X[3 * i], X[3 * i + 1], X[3 * i + 2]];
    moved[3 * i] = c * x - s * y + 1;
    moved[3 * i + 1] = s * x + c * y - 2;
    moved[3 * i + 2] = z + 0.5;
  }
  for (const model of MATERIAL_MODELS) {
    const term = new ElasticTets(X, tets, material(model));
    assert.ok(Math.abs(term.energy(X)) < 1e-12);
    const g = new Float64Array(X.length);
    term.addGradient(X, 1, g);
    assert.ok(Math.max(...g.map(Math.abs)) < 1e-12);
    if (model === 'linear') {
      assert.ok(term.energy(moved) > 1e-2, 'linear elasticity is not rotation invariant');
      continue;
    }
    assert.ok(Math.abs(term.energy(moved)) < 1e-11, `${model}: rigid motion energy ${term.energy(moved)}`);
    g.fill(0);
    term.addGradient(moved, 1, g);
    assert.ok(Math.max(...g.map(Math.abs)) < 1e-10, `${model}: rigid motion force`);
  }
});

test('energy of a uniformly stretched tet is V psi(F)', () => {
  const X = Float64Array.from([0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2]);
  const tets = Uint32Array.from([0, 1, 2, 3]);
  const F = Float64Array.from([1.2, 0.1, 0, 0, 0.9, 0, 0.05, 0, 1.1]);
  const x = new Float64Array(12);
  for (let i = 0; i < 4; i++)
    for (let r = 0; r < 3; r++) x[3 * i + r] = F[3 * r] * X[3 * i] + F[3 * r + 1] * X[3 * i + 1] + F[3 * r + 2] * X[3 * i + 2];
  for (const model of MATERIAL_MODELS) {
    const mat = material(model);
    const term = new ElasticTets(X, tets, mat);
    assert.ok(Math.abs(term.restVolume[0] - 8 / 6) < 1e-15);
    assert.ok(Math.abs(term.energy(x) - (8 / 6) * mat.energyDensity(F)) < 1e-12 * term.energy(x));
  }
});

test('maxStep: a known inversion time, and J > 0 along the filtered step for random directions', () => {
  const X = Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const tets = Uint32Array.from([0, 1, 2, 3]);
  const nh = new ElasticTets(X, tets, material('neo-hookean'));
  // Node 3 moves straight down through the opposite face: det = 1 - 2 s, flat at s = 0.5.
  const dx = Float64Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2]);
  assert.ok(Math.abs(nh.maxStep(X, dx) - 0.4) < 1e-12);
  // A step that never inverts keeps t = 1; so does a material without a barrier.
  assert.equal(nh.maxStep(X, Float64Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5])), 1);
  assert.equal(new ElasticTets(X, tets, material('stvk')).maxStep(X, dx), 1);

  const rand = rng(24);
  let limited = 0;
  for (let trial = 0; trial < 300; trial++) {
    const { term, x } = deformedMesh(rand, 'neo-hookean', 0.1);
    if (term.countInverted(x) > 0) continue;
    const size = 3 * rand();
    const step = Float64Array.from(x, () => size * (2 * rand() - 1));
    const t = term.maxStep(x, step);
    assert.ok(t > 0 && t <= 1);
    const y = new Float64Array(x.length);
    for (let k = 1; k <= 100; k++) {
      const s = (t * k) / 100;
      for (let d = 0; d < x.length; d++) y[d] = x[d] + s * step[d];
      assert.equal(term.countInverted(y), 0, `trial ${trial}: inverted at s = ${s} <= t = ${t}`);
      assert.ok(Number.isFinite(term.energy(y)));
    }
    if (t < 1) {
      limited++;
      // Tight: the first inversion happens right at t / 0.8.
      const s = (t / 0.8) * (1 + 1e-9);
      for (let d = 0; d < x.length; d++) y[d] = x[d] + s * step[d];
      assert.ok(term.countInverted(y) > 0, `trial ${trial}: no inversion at t / 0.8`);
    }
  }
  assert.ok(limited > 30, `only ${limited} limited steps`);
});

test('countInverted, and a neo-Hookean inverted tet: infinite energy, named in the gradient error', () => {
  const rand = rng(25);
  const { X, tets } = smallMesh(rand);
  const term = new ElasticTets(X, tets, material('neo-hookean'), 'jelly');
  const x = Float64Array.from(X);
  // Push node 0 through the face (1, 2, 3) of tet 0.
  const cx = (X[3] + X[6] + X[9]) / 3;
  const cy = (X[4] + X[7] + X[10]) / 3;
  const cz = (X[5] + X[8] + X[11]) / 3;
  x[0] = 2 * cx - X[0];
  x[1] = 2 * cy - X[1];
  x[2] = 2 * cz - X[2];
  assert.equal(term.countInverted(x), 1);
  assert.equal(term.energy(x), Infinity);
  assert.throws(() => term.addGradient(x, 1, new Float64Array(x.length)), /jelly.*tet 0 .*inverted/);
  assert.equal(term.countInverted(X), 0);
});

test('rest mesh validation names the bad tet', () => {
  const X = Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0.5, 0.5, 0]);
  const mat = material('corotated');
  assert.throws(() => new ElasticTets(X, Uint32Array.from([0, 1, 2, 3, 0, 2, 1, 3]), mat), /tet 1 .*rest volume/);
  // Node 5 lies in the plane of nodes 0, 1, 2: a flat tet.
  assert.throws(() => new ElasticTets(X, Uint32Array.from([0, 1, 2, 3, 0, 1, 2, 5]), mat), /tet 1 /);
  assert.throws(() => new ElasticTets(X, Uint32Array.from([0, 1, 2, 9]), mat), /node 9/);
});

test('lumpedMass: per node and per DOF, total = density x volume', () => {
  const rand = rng(26);
  const { X, tets } = smallMesh(rand);
  const n = X.length / 3;
  let volume = 0;
  for (let e = 0; e < 3; e++) volume += tetVolume(X, tets, e);
  const perNode = new Float64Array(n);
  lumpedMass(X, tets, 1000, perNode);
  assert.ok(Math.abs(perNode.reduce((a, b) => a + b, 0) - 1000 * volume) < 1e-9);
  const perDof = new Float64Array(3 * n);
  lumpedMass(X, tets, 1000, perDof);
  for (let i = 0; i < n; i++) for (let r = 0; r < 3; r++) assert.equal(perDof[3 * i + r], perNode[i]);
  // Node 0 belongs to tet 0 only.
  assert.ok(Math.abs(perNode[0] - (1000 * tetVolume(X, tets, 0)) / 4) < 1e-12);
  assert.throws(() => lumpedMass(X, tets, 1, new Float64Array(n + 1)), /length/);
});

test('the per-tet SVD cache is exact: energy, gradient and Hessian after reuse equal fresh evaluations bit for bit', () => {
  const rand = rng(23);
  for (const model of MATERIAL_MODELS) {
    const { X, tets, x } = deformedMesh(rand, model, 0.2);
    const reused = new ElasticTets(X, tets, material(model));
    const other = Float64Array.from(x, (v) => v + 0.01 * (2 * rand() - 1));
    // The reusing term sees x, then another point, then the gradient at x (which must not reuse the other point's
    // SVD) and the Hessian at x (which reuses the gradient's).
    const eReused = reused.energy(x);
    reused.energy(other);
    const gReused = new Float64Array(x.length);
    reused.addGradient(x, 2, gReused);
    const HReused = assembleHessianPattern(reused, x.length / 3);
    reused.addHessian(x, 3, HReused, true);
    // Fresh terms decompose every F once.
    const eFresh = new ElasticTets(X, tets, material(model)).energy(x);
    const gFresh = new Float64Array(x.length);
    new ElasticTets(X, tets, material(model)).addGradient(x, 2, gFresh);
    const fresh = new ElasticTets(X, tets, material(model));
    const HFresh = assembleHessianPattern(fresh, x.length / 3);
    fresh.addHessian(x, 3, HFresh, true);
    assert.ok(Object.is(eReused, eFresh), `${model}: energy ${eReused} vs ${eFresh}`);
    assert.deepEqual(gReused, gFresh, `${model}: gradient`);
    assert.deepEqual(HReused.values, HFresh.values, `${model}: Hessian`);
    assert.ok(maxAbs(HFresh.values) > 0);
  }
});

test('energy at positions equal to the bit returns the kept energy; any change of a node of the body (in place too) recomputes it', () => {
  const rand = rng(29);
  const { X, tets, x } = deformedMesh(rand, 'corotated', 0.2);
  // The body's nodes sit after two nodes of another body, whose positions the term must not look at.
  const shiftedX = new Float64Array(X.length + 6);
  shiftedX.set(X, 6);
  const shiftedTets = Uint32Array.from(tets, (i) => i + 2);
  const term = new ElasticTets(shiftedX, shiftedTets, material('corotated'));
  const at = new Float64Array(x.length + 6);
  at.set(x, 6);
  const first = term.energy(at);
  const fresh = () => new ElasticTets(shiftedX, shiftedTets, material('corotated')).energy(at);
  assert.ok(Object.is(first, fresh()));
  at[0] += 1; // another body's node: the same energy
  assert.ok(Object.is(term.energy(at), first));
  for (const dof of [6, at.length - 1]) {
    at[dof] += 1e-3 * (1 + rand());
    const changed = term.energy(at);
    assert.notEqual(changed, first, `a move of DOF ${dof} went unseen`);
    assert.ok(Object.is(changed, fresh()), `DOF ${dof}: ${changed} vs a fresh term's ${fresh()}`);
  }
});
