import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signedSingularValueSum } from '../src/math/singular-value-sum.js';
import { svd3 } from '../src/math/svd3.js';
import { CorotatedMaterial } from '../src/energies/materials.js';
import { composeSvd, randomRotation, rng } from './numeric-helpers.js';

const U = new Float64Array(9);
const V = new Float64Array(9);
const sigma = new Float64Array(3);

/** svd3's sum of the signed singular values, the reference. */
function svdSum(F: Float64Array): number {
  svd3(F, U, sigma, V);
  return sigma[0] + sigma[1] + sigma[2];
}

/** Q1 diag(s) Q2 for random rotations: a matrix with exactly these signed singular values. */
function withSingularValues(rand: () => number, s: readonly number[]): Float64Array {
  return composeSvd(randomRotation(rand), s, randomRotation(rand));
}

test('signedSingularValueSum: the sum svd3 gives, to a few ulps of sigma_1, for random, stretched, near-rigid and inverted matrices', () => {
  const rand = rng(11);
  let answered = 0;
  let trials = 0;
  for (let trial = 0; trial < 4000; trial++) {
    const kind = trial % 4;
    let F: Float64Array;
    if (kind === 0) F = Float64Array.from({ length: 9 }, () => 2 * rand() - 1);
    else if (kind === 1) F = withSingularValues(rand, [1 + 0.01 * rand(), 1 - 0.01 * rand(), 1 + 0.01 * (rand() - 0.5)]);
    else if (kind === 2) F = withSingularValues(rand, [1 + 9 * rand(), 0.1 + rand(), (rand() < 0.5 ? -1 : 1) * 0.05 * rand()]);
    else F = withSingularValues(rand, [1 + rand(), 0.5 + 0.5 * rand(), -0.2 * rand()]);
    const scale = 10 ** (8 * rand() - 4);
    for (let i = 0; i < 9; i++) F[i] *= scale;
    const sum = signedSingularValueSum(F);
    const reference = svdSum(F);
    trials++;
    if (Number.isNaN(sum)) continue;
    answered++;
    assert.ok(Math.abs(sum - reference) <= 64e-16 * sigma[0], `trial ${trial}: ${sum} against svd3's ${reference} (sigma ${Array.from(sigma)})`);
  }
  // The SVD is asked for only near sigma_2 + sigma_3 = 0, which random matrices rarely come near.
  assert.ok(answered > 0.99 * trials, `answered ${answered} of ${trials}`);
});

test('signedSingularValueSum: exact cases, and NaN (use the SVD) where the root is ill-conditioned or F is not usable', () => {
  assert.equal(signedSingularValueSum(Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1])), 3);
  assert.equal(signedSingularValueSum(new Float64Array(9)), 0);
  assert.equal(signedSingularValueSum(Float64Array.from([2, 0, 0, 0, 3, 0, 0, 0, 4])), 9);
  // Inverted: singular values 2, 1, -0.5 (svd3's convention) sum to 2.5.
  assert.ok(Math.abs(signedSingularValueSum(Float64Array.from([1, 0, 0, 0, 2, 0, 0, 0, -0.5])) - 2.5) < 1e-15);
  const rand = rng(12);
  // A reflection, singular values 1, 1, -1: three of the quartic's roots are 1 (sigma_2 + sigma_3 = 0).
  assert.ok(Number.isNaN(signedSingularValueSum(Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, -1]))));
  // sigma_2 + sigma_3 = 1e-3: two roots of the quartic 2e-3 apart; the sum declines.
  assert.ok(Number.isNaN(signedSingularValueSum(withSingularValues(rand, [1, 0.5, -0.499]))));
  // Rank one: sigma_2 = sigma_3 = 0, a double root.
  assert.ok(Number.isNaN(signedSingularValueSum(Float64Array.from([1, 2, 3, 0, 0, 0, 0, 0, 0]))));
  assert.ok(Number.isNaN(signedSingularValueSum(Float64Array.from([NaN, 0, 0, 0, 1, 0, 0, 0, 1]))));
  assert.ok(Number.isNaN(signedSingularValueSum(Float64Array.from([1e300, 0, 0, 0, 1, 0, 0, 0, 1]))));
  assert.ok(Number.isNaN(signedSingularValueSum(Float64Array.from([1e-300, 0, 0, 0, 1e-300, 0, 0, 0, 1e-300]))));
});

test('corotated energy density from the invariant sum equals the SVD form, also where it falls back to the SVD', () => {
  const material = new CorotatedMaterial(3e4, 7e4);
  const rand = rng(13);
  const cases: [string, Float64Array][] = [];
  for (let trial = 0; trial < 200; trial++) {
    cases.push([`near rest ${trial}`, withSingularValues(rand, [1 + 1e-3 * rand(), 1 - 1e-3 * rand(), 1 + 1e-3 * (rand() - 0.5)])]);
    cases.push([`stretched ${trial}`, withSingularValues(rand, [1 + 2 * rand(), 0.3 + rand(), 0.2 + 0.5 * rand()])]);
    cases.push([`inverted ${trial}`, withSingularValues(rand, [1 + rand(), 0.8 + 0.2 * rand(), -0.3 * rand()])]);
  }
  cases.push(['inverted through flat (SVD fallback)', withSingularValues(rand, [1.2, 0.7, -0.6999])]);
  cases.push(['rank one (SVD fallback)', Float64Array.from([1, 2, 3, 0, 0, 0, 0, 0, 0])]);
  for (const [label, F] of cases) {
    svd3(F, U, sigma, V);
    const J = sigma[0] * sigma[1] * sigma[2];
    const d = [sigma[0] - 1, sigma[1] - 1, sigma[2] - 1];
    const reference = material.mu * (d[0] ** 2 + d[1] ** 2 + d[2] ** 2) + 0.5 * material.lambda * (J - 1) ** 2;
    const psi = material.energyDensity(F);
    // Absolute: |F|^2 - 2 s + 3 cancels to the strain's square, so its error is a few ulps of |F|^2, times mu.
    let normSquared = 0;
    for (const v of F) normSquared += v * v;
    const tolerance = 1e-14 * (material.mu * Math.max(1, normSquared) + material.lambda * Math.max(1, J * J));
    assert.ok(Math.abs(psi - reference) <= tolerance, `${label}: psi ${psi} against the SVD form's ${reference}`);
  }
});
