import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MATERIAL_MODELS,
  StableNeoHookeanMaterial,
  createMaterial,
  HessianEigensystem,
  denseFromEigensystem,
  lameParameters,
  type Material,
} from '../src/energies/materials.js';
import { projectPsdInPlace, psdScratchLength, symmetricEigen } from '../src/math/eigen-sym.js';
import { det3, multiply3 } from '../src/math/small.js';
import { centralDifferenceGradient, centralDifferenceJacobian, composeSvd, maxAbs, maxAbsDiff, randomRotation, rng } from './numeric-helpers.js';

/** Q1 diag(s) Q2^T with random rotations. */
function withSingularValues(rand: () => number, s: number[]): Float64Array {
  const U = randomRotation(rand);
  const V = randomRotation(rand);
  return composeSvd(U, s, V);
}

function nearIdentity(rand: () => number, amount: number): Float64Array {
  return Float64Array.from({ length: 9 }, (_, i) => (i % 4 === 0 ? 1 : 0) + amount * (2 * rand() - 1));
}

/** Smallest singular value of F (from the eigenvalues of F^T F), to size finite-difference steps. */
function smallestSingular(F: Float64Array): number {
  const FtF = new Float64Array(9);
  for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) for (let r = 0; r < 3; r++) FtF[3 * a + b] += F[3 * r + a] * F[3 * r + b];
  const w = new Float64Array(3);
  symmetricEigen(FtF, 3, w, new Float64Array(9), new Float64Array(9));
  return Math.sqrt(Math.max(0, Math.min(...w)));
}

const E = 10;
const models = MATERIAL_MODELS;
const materialsFor = (nu: number): Material[] => models.map((m) => createMaterial(m, { youngsModulus: E, poissonRatio: nu }));

/** Test deformation gradients for a material: near identity, strongly deformed, inverted and nearly flat. */
function sampleGradients(material: Material, rand: () => number): { F: Float64Array; label: string }[] {
  const out: { F: Float64Array; label: string }[] = [];
  for (let i = 0; i < 6; i++) out.push({ F: nearIdentity(rand, 0.1), label: `near identity ${i}` });
  for (let i = 0; i < 6; i++) {
    const s = [0.4 + 2 * rand(), 0.4 + 1.5 * rand(), 0.3 + rand()].sort((a, b) => b - a);
    out.push({ F: withSingularValues(rand, s), label: `deformed ${s}` });
  }
  out.push({ F: withSingularValues(rand, [1.3, 1.3, 0.7]), label: 'repeated s1 = s2' });
  out.push({ F: withSingularValues(rand, [1.5, 0.8, 0.8]), label: 'repeated s2 = s3' });
  out.push({ F: withSingularValues(rand, [1.1, 1.1, 1.1]), label: 'uniform scaling' });
  if (material.model === 'neo-hookean' || material.model === 'stable-neo-hookean') {
    out.push({ F: withSingularValues(rand, [1.2, 0.9, 1e-3]), label: 'det near 0+ (1e-3)' });
    out.push({ F: withSingularValues(rand, [1.0, 0.5, 2e-2]), label: 'det near 0+ (2e-2)' });
  }
  if (!material.blocksInversion) {
    out.push({ F: withSingularValues(rand, [1.4, 0.9, -0.5]), label: 'inverted' });
    out.push({ F: withSingularValues(rand, [1.2, 0.8, -0.05]), label: 'slightly inverted' });
  }
  return out;
}

test('first Piola stress matches central differences of the energy density', () => {
  const rand = rng(11);
  for (const nu of [0.3, 0.45]) {
    for (const material of materialsFor(nu)) {
      for (const { F, label } of sampleGradients(material, rand)) {
        const P = new Float64Array(9);
        material.firstPiola(F, P);
        const h = 1e-6 * Math.min(1, smallestSingular(F));
        const fd = centralDifferenceGradient((G) => material.energyDensity(G), F, 1, h);
        const err = maxAbsDiff(fd, P) / Math.max(maxAbs(P), material.mu);
        assert.ok(err < 1e-5, `${material.model} nu=${nu} ${label}: |P - FD| rel ${err}`);
      }
    }
  }
});

test('exact dP/dF (closed form and from the eigensystem) matches central differences of P', () => {
  const rand = rng(12);
  const dense = new Float64Array(81);
  const fromModes = new Float64Array(81);
  const es = new HessianEigensystem();
  for (const nu of [0.3, 0.45]) {
    for (const material of materialsFor(nu)) {
      for (const { F, label } of sampleGradients(material, rand)) {
        material.stressDerivative(F, dense);
        material.hessianEigensystem(F, false, es);
        denseFromEigensystem(es, fromModes);
        const h = 1e-6 * Math.min(1, smallestSingular(F));
        const fd = centralDifferenceJacobian((G, P) => material.firstPiola(G, P), F, h);
        const scale = Math.max(maxAbs(dense), material.mu);
        const errDense = maxAbsDiff(fd, dense) / scale;
        const errModes = maxAbsDiff(fd, fromModes) / scale;
        assert.ok(errDense < 1e-5, `${material.model} nu=${nu} ${label}: |dP/dF - FD| rel ${errDense}`);
        assert.ok(errModes < 1e-5, `${material.model} nu=${nu} ${label}: |eigensystem - FD| rel ${errModes}`);
        // The closed forms and the SVD eigensystem are independent derivations: they must agree tightly.
        assert.ok(maxAbsDiff(dense, fromModes) / scale < 1e-9, `${material.model} ${label}: closed form != eigensystem`);
        // Symmetry.
        for (let a = 0; a < 9; a++)
          for (let b = 0; b < a; b++)
            assert.ok(Math.abs(dense[9 * a + b] - dense[9 * b + a]) <= 1e-10 * scale, `${material.model}: asymmetric`);
      }
    }
  }
});

test('projected dP/dF is PSD and equals the Jacobi projection of the exact one', () => {
  const rand = rng(13);
  const exact = new Float64Array(81);
  const projected = new Float64Array(81);
  const scratch = new Float64Array(psdScratchLength(9));
  const w = new Float64Array(9);
  const Q = new Float64Array(81);
  const work = new Float64Array(81);
  let indefiniteSeen = 0;
  let psdSeen = 0;
  for (const nu of [0.3, 0.45]) {
    for (const material of materialsFor(nu)) {
      for (const { F, label } of sampleGradients(material, rand)) {
        material.stressDerivative(F, exact);
        material.projectedStressDerivative(F, projected);
        const scale = Math.max(maxAbs(exact), material.mu);
        symmetricEigen(projected, 9, w, Q, work);
        assert.ok(Math.min(...w) >= -1e-10 * scale, `${material.model} ${label}: projected has eigenvalue ${Math.min(...w)}`);
        symmetricEigen(exact, 9, w, Q, work);
        if (Math.min(...w) < -1e-8 * scale) indefiniteSeen++;
        else psdSeen++;
        const oracle = Float64Array.from(exact);
        projectPsdInPlace(oracle, 9, scratch);
        // Where exact is PSD the oracle is exact itself: projection must then change nothing.
        assert.ok(maxAbsDiff(projected, oracle) / scale < 1e-9, `${material.model} ${label}: projected != oracle`);
      }
    }
  }
  // Both branches must have been exercised for the test to mean anything.
  assert.ok(indefiniteSeen > 10, `only ${indefiniteSeen} indefinite samples`);
  assert.ok(psdSeen > 10, `only ${psdSeen} PSD samples`);
});

/** K(3k + r, 3l + s) = sum_cd D_kc D_ld dPdF[(3r + c), (3s + d)]: a 9x9 dP/dF mapped to a tet's nodes 1-3. */
function mapToNodes(dPdF: Float64Array, D: Float64Array): Float64Array {
  const K = new Float64Array(81);
  for (let k = 0; k < 3; k++)
    for (let r = 0; r < 3; r++)
      for (let l = 0; l < 3; l++)
        for (let s = 0; s < 3; s++) {
          let sum = 0;
          for (let c = 0; c < 3; c++) for (let d = 0; d < 3; d++) sum += D[3 * k + c] * D[3 * l + d] * dPdF[9 * (3 * r + c) + 3 * s + d];
          K[9 * (3 * k + r) + 3 * l + s] = sum;
        }
  return K;
}

test('nodeStiffness (closed form) equals the mapped dP/dF, and declines wherever a filter would change it', () => {
  const rand = rng(31);
  const dPdF = new Float64Array(81);
  const w = new Float64Array(9);
  const Q = new Float64Array(81);
  const work = new Float64Array(81);
  const K = new Float64Array(81 + 5);
  let checked = 0;
  for (const nu of [0.3, 0.45]) {
    for (const material of materialsFor(nu)) {
      if (!material.nodeStiffness) continue;
      const samples = sampleGradients(material, rand);
      // Stretched and rotated: semi-definite dP/dF, where the shortcut must also serve projected Hessians.
      for (let i = 0; i < 6; i++) samples.push({ F: withSingularValues(rand, [1 + 0.2 * rand(), 1 + 0.1 * rand(), 1 + 0.05 * rand()]), label: `stretched ${i}` });
      samples.push({ F: withSingularValues(rand, [1, 1, 1]), label: 'rotation' });
      // Just past the edge: a twist value slightly negative (c < -mu for J < 1), and one just inside it.
      samples.push({ F: withSingularValues(rand, [1, 1, 0.99]), label: 'slightly compressed' });
      samples.push({ F: withSingularValues(rand, [1.02, 1.01, 0.999]), label: 'stretched, one axis slightly short' });
      // Stretched four-fold (c > 0): every pair value is positive but the scaling block is not (nu = 0.3).
      samples.push({ F: withSingularValues(rand, [4.25, 2.94, 1.15]), label: 'stretched, indefinite scaling block' });
      let accepted = 0;
      let declined = 0;
      for (const { F, label } of samples) {
        const D = Float64Array.from({ length: 9 }, () => 20 * (2 * rand() - 1)); // Dm^-1 of a tet about 5 cm across
        material.stressDerivative(F, dPdF);
        const exact = mapToNodes(dPdF, D);
        const scale = maxAbs(exact);
        assert.ok(material.nodeStiffness(F, D, 0, false, K, 5), `${material.model} ${label}: unfiltered shortcut declined`);
        assert.ok(maxAbsDiff(K.subarray(5), exact) < 1e-11 * scale, `${material.model} ${label}: closed form != mapped dP/dF`);
        symmetricEigen(dPdF, 9, w, Q, work);
        const semiDefinite = Math.min(...w) >= -1e-10 * maxAbs(dPdF);
        for (const filter of ['clamp', 'abs'] as const) {
          K.fill(NaN);
          if (!material.nodeStiffness(F, D, 0, filter, K, 5)) {
            assert.ok(Number.isNaN(K[5]), `${material.model} ${label}: a declined call wrote K`);
            declined++;
            continue;
          }
          accepted++;
          assert.ok(semiDefinite, `${material.model} ${label} (${filter}): shortcut taken for an indefinite dP/dF (eigenvalue ${Math.min(...w)})`);
          material.projectedStressDerivative(F, dPdF, filter);
          assert.ok(maxAbsDiff(K.subarray(5), mapToNodes(dPdF, D)) < 1e-9 * scale, `${material.model} ${label} (${filter}): shortcut != projected route`);
          material.stressDerivative(F, dPdF);
        }
        checked++;
      }
      assert.ok(accepted >= 10 && declined >= 10, `${material.model} nu ${nu}: ${accepted} filtered calls took the shortcut, ${declined} declined`);
    }
  }
  assert.ok(checked > 0, 'no material has nodeStiffness');
});

test('rest state: zero energy, zero stress, and the small-strain Hessian of linear elasticity', () => {
  const I = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const P = new Float64Array(9);
  const H = new Float64Array(81);
  const Hlin = new Float64Array(81);
  for (const nu of [0.2, 0.3, 0.45, 0.49]) {
    const linear = createMaterial('linear', { youngsModulus: E, poissonRatio: nu });
    linear.stressDerivative(I, Hlin);
    for (const material of materialsFor(nu)) {
      assert.ok(Math.abs(material.energyDensity(I)) < 1e-13 * E, `${material.model}: rest energy ${material.energyDensity(I)}`);
      material.firstPiola(I, P);
      assert.ok(maxAbs(P) < 1e-13 * E, `${material.model}: rest stress ${maxAbs(P)}`);
      material.stressDerivative(I, H);
      assert.ok(maxAbsDiff(H, Hlin) < 1e-12 * E, `${material.model} nu=${nu}: rest Hessian differs from linear`);
    }
  }
});

test('small-strain moduli: uniaxial stretch of linear material gives E, lateral contraction gives nu', () => {
  // Independent check of lameParameters: stress-free lateral directions under uniaxial stress.
  const nu = 0.3;
  const { mu, lambda } = lameParameters(E, nu);
  assert.ok(Math.abs(mu - E / 2.6) < 1e-12);
  // Uniaxial stress sigma_11 with sigma_22 = sigma_33 = 0: eps_22 = -nu eps_11 and sigma_11 = E eps_11.
  const eps = 1e-3;
  const F = Float64Array.from([1 + eps, 0, 0, 0, 1 - nu * eps, 0, 0, 0, 1 - nu * eps]);
  const P = new Float64Array(9);
  createMaterial('linear', { youngsModulus: E, poissonRatio: nu }).firstPiola(F, P);
  assert.ok(Math.abs(P[0] - E * eps) < 1e-12);
  assert.ok(Math.abs(P[4]) < 1e-12 && Math.abs(P[8]) < 1e-12);
  assert.ok(Math.abs(lambda - (E * nu) / (1.3 * 0.4)) < 1e-12);
});

test('nonlinear materials are rotation invariant and isotropic', () => {
  const rand = rng(14);
  const P = new Float64Array(9);
  const PQ = new Float64Array(9);
  const QP = new Float64Array(9);
  for (const material of materialsFor(0.4)) {
    if (material.model === 'linear') continue;
    for (const { F, label } of sampleGradients(material, rand)) {
      const Q = randomRotation(rand);
      const QF = multiply3(Q, F, new Float64Array(9));
      const FQ = multiply3(F, Q, new Float64Array(9));
      const psi = material.energyDensity(F);
      const scale = Math.max(Math.abs(psi), material.mu);
      assert.ok(Math.abs(material.energyDensity(QF) - psi) < 1e-10 * scale, `${material.model} ${label}: psi(QF) != psi(F)`);
      assert.ok(Math.abs(material.energyDensity(FQ) - psi) < 1e-10 * scale, `${material.model} ${label}: psi(FQ) != psi(F)`);
      material.firstPiola(F, P);
      material.firstPiola(QF, PQ);
      multiply3(Q, P, QP);
      assert.ok(maxAbsDiff(PQ, QP) < 1e-10 * Math.max(maxAbs(P), material.mu), `${material.model} ${label}: P(QF) != Q P(F)`);
    }
  }
  // The linear material is not: a rigid rotation costs energy (a reason to prefer the others).
  const linear = createMaterial('linear', { youngsModulus: E, poissonRatio: 0.3 });
  assert.ok(linear.energyDensity(randomRotation(rand)) > 1e-3);
});

test('neo-Hookean is infinite for J <= 0; stable neo-Hookean and corotated stay finite', () => {
  const rand = rng(15);
  const inverted = withSingularValues(rand, [1.2, 1, -0.3]);
  const flat = withSingularValues(rand, [1.2, 1, 0]);
  assert.ok(det3(inverted) < 0);
  for (const material of materialsFor(0.3)) {
    const a = material.energyDensity(inverted);
    const b = material.energyDensity(flat);
    if (material.model === 'neo-hookean') {
      assert.equal(a, Infinity);
      assert.equal(b, Infinity);
      assert.ok(material.blocksInversion);
    } else {
      assert.ok(Number.isFinite(a) && Number.isFinite(b), `${material.model}: ${a}, ${b}`);
      assert.ok(!material.blocksInversion);
    }
  }
  // Stable neo-Hookean's constants: rest stress vanishes for alpha = 1 + 3 mu'/(4 lambda').
  const snh = new StableNeoHookeanMaterial(2, 3);
  assert.ok(Math.abs(snh.muStable - 8 / 3) < 1e-15);
  assert.ok(Math.abs(snh.lambdaStable - (3 + 10 / 6)) < 1e-15);
  assert.ok(Math.abs(snh.alpha - (1 + snh.muStable / snh.lambdaStable - snh.muStable / (4 * snh.lambdaStable))) < 1e-15);
});

test('corotated at s_i + s_j = 0 (polar rotation undefined): finite, PSD after projection', () => {
  const rand = rng(16);
  const material = createMaterial('corotated', { youngsModulus: E, poissonRatio: 0.3 });
  const H = new Float64Array(81);
  const w = new Float64Array(9);
  for (const s of [[1, 0.5, -0.5], [1.2, 0.3, -0.3], [0, 0, 0]]) {
    const F = withSingularValues(rand, s);
    material.stressDerivative(F, H);
    assert.ok(H.every(Number.isFinite), `exact Hessian not finite at ${s}`);
    material.projectedStressDerivative(F, H);
    assert.ok(H.every(Number.isFinite), `projected Hessian not finite at ${s}`);
    symmetricEigen(H, 9, w, new Float64Array(81), new Float64Array(81));
    assert.ok(Math.min(...w) > -1e-9 * maxAbs(H), `projected eigenvalue ${Math.min(...w)} at ${s}`);
  }
});

test('lameParameters rejects nonsense', () => {
  assert.throws(() => lameParameters(-1, 0.3), /Young/);
  assert.throws(() => lameParameters(1, 0.5), /Poisson/);
  assert.throws(() => lameParameters(1, -1), /Poisson/);
});
