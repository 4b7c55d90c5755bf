import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SquaredLengthSprings } from '../src/energies/squared-springs.js';
import { assembleHessianPattern, centralDifferenceGradient, centralDifferenceJacobian, flattenRows, maxAbs, maxAbsDiff, minEigenvalue, rng } from './numeric-helpers.js';

/** Four nodes, five springs with mixed rest lengths (0 included), positions spread so some are compressed. */
function network(rand: () => number): { term: SquaredLengthSprings; x: Float64Array } {
  const pairs = Uint32Array.from([0, 1, 1, 2, 2, 3, 3, 0, 0, 2]);
  const stiffness = Float64Array.from([3, 1.5, 7, 2, 0.5]);
  const rest = Float64Array.from([1, 0.5, 2, 0, 1.2]);
  const x = Float64Array.from({ length: 12 }, () => 2 * rand() - 1);
  return { term: new SquaredLengthSprings(pairs, stiffness, rest), x };
}

test('squared springs: energy is k/2 (|d|^2 - L^2)^2 (seed 001 Eq. 7 at |x| = 1.5: 78125 J for k = 1e5)', () => {
  const term = new SquaredLengthSprings(Uint32Array.from([0, 1]), Float64Array.from([1e5]), Float64Array.from([1]));
  // 1/2 * 1e5 * (2.25 - 1)^2 = 78125 (seed 001 Eq. 7 with x0 at radius 1.5).
  assert.equal(term.energy(Float64Array.from([1.5, 0, 0, 0, 0, 0])), 78125);
  assert.equal(term.energy(Float64Array.from([0, 0.6, 0.8, 0, 0, 0])), 0);
});

test('squared springs: gradient matches central differences', () => {
  const rand = rng(5);
  for (let trial = 0; trial < 5; trial++) {
    const { term, x } = network(rand);
    const g = new Float64Array(12);
    term.addGradient(x, 2, g);
    const fd = centralDifferenceGradient((y) => term.energy(y), x, 2, 1e-6);
    const maxErr = maxAbsDiff(fd, g);
    const maxG = maxAbs(g);
    assert.ok(maxG > 1e-2, 'gradient suspiciously small');
    assert.ok(maxErr < 1e-6 * maxG, `gradient error ${maxErr} vs ${maxG}`);
  }
});

test('squared springs: exact Hessian matches central differences of the gradient; projected one is PSD and differs only where indefinite', () => {
  const rand = rng(6);
  let sawIndefinite = false;
  for (let trial = 0; trial < 5; trial++) {
    const { term, x } = network(rand);
    const H = assembleHessianPattern(term, 4);
    H.zero();
    term.addHessian(x, 2, H, false);
    const exact = H.toDense();
    const exactFlat = flattenRows(exact);
    const fd = centralDifferenceJacobian((y, out) => term.addGradient(y, 2, out), x, 1e-6);
    const maxErr = maxAbsDiff(fd, exactFlat);
    const maxH = maxAbs(exactFlat);
    assert.ok(maxErr < 1e-6 * maxH, `Hessian error ${maxErr} vs ${maxH}`);
    const exactMin = minEigenvalue(exact);
    if (exactMin < -1e-9 * maxH) sawIndefinite = true;
    H.zero();
    term.addHessian(x, 2, H, true);
    const projected = H.toDense();
    const minEig = minEigenvalue(projected);
    assert.ok(minEig > -1e-9 * maxH, `projected Hessian has eigenvalue ${minEig}`);
  }
  assert.ok(sawIndefinite, 'the random states should include an indefinite (compressed) case');
  // A single stretched spring is locally convex: projection must change nothing there.
  const one = new SquaredLengthSprings(Uint32Array.from([0, 1]), Float64Array.from([2]), Float64Array.from([1]));
  const x = Float64Array.from([1.1, 0.3, -0.2, 0, 0, 0]);
  const H = assembleHessianPattern(one, 2);
  H.zero();
  one.addHessian(x, 1, H, false);
  const a = H.toDense();
  H.zero();
  one.addHessian(x, 1, H, true);
  const b = H.toDense();
  for (let r = 0; r < 6; r++) for (let c = 0; c < 6; c++) assert.ok(Math.abs(a[r][c] - b[r][c]) < 1e-12, `entry ${r},${c}`);
});
