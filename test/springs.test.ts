import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Springs } from '../src/energies/springs.js';
import { assembleHessianPattern, derivativesAndDifferences, minEigenvalue, rng } from './numeric-helpers.js';

function hessian(term: Springs, x: Float64Array, project: boolean): number[][] {
  const H = assembleHessianPattern(term, x.length / 3);
  term.addHessian(x, 1.5, H, project);
  return H.toDense().map((row) => Array.from(row));
}

/** 5 nodes; springs with zero rest length, stretched, and compressed below rest length. */
function network(rand: () => number): { x: Float64Array; term: Springs } {
  const x = Float64Array.from({ length: 15 }, () => 2 * rand() - 1);
  const pairs = Uint32Array.from([0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 2]);
  const dist = (a: number, b: number) =>
    Math.hypot(x[3 * a] - x[3 * b], x[3 * a + 1] - x[3 * b + 1], x[3 * a + 2] - x[3 * b + 2]);
  const rest = Float64Array.from([0, 0.5 * dist(1, 2), 2 * dist(2, 3), 0, 1.3 * dist(4, 0), 0.9 * dist(0, 2)]);
  const k = Float64Array.from({ length: 6 }, () => 1 + 10 * rand());
  return { x, term: new Springs(pairs, k, rest) };
}

test('zero-rest-length spring: E = k/2 |xa - xb|^2, the 1 kg / 1 N/m oscillator', () => {
  const term = new Springs(Uint32Array.from([0, 1]), Float64Array.from([1]), Float64Array.from([0]));
  const x = Float64Array.from([0, 0, 0, 0.3, -0.4, 1.2]);
  assert.ok(Math.abs(term.energy(x) - 0.5 * (0.09 + 0.16 + 1.44)) < 1e-15);
  const g = new Float64Array(6);
  term.addGradient(x, 1, g);
  assert.deepEqual(Array.from(g), [-0.3, 0.4, -1.2, 0.3, -0.4, 1.2]);
  // Smooth through coincident nodes: zero force, Hessian k [[I, -I], [-I, I]].
  const same = new Float64Array(6);
  g.fill(0);
  term.addGradient(same, 1, g);
  assert.deepEqual(Array.from(g), [0, 0, 0, 0, 0, 0]);
  const H = hessian(term, same, false);
  for (let r = 0; r < 6; r++)
    for (let c = 0; c < 6; c++) assert.equal(H[r][c], r === c ? 1.5 : r % 3 === c % 3 ? -1.5 : 0);
});

test('gradient and exact Hessian match central differences (L = 0, stretched and compressed springs)', () => {
  const rand = rng(31);
  for (let trial = 0; trial < 20; trial++) {
    const { x, term } = network(rand);
    const m = x.length;
    const { g, H, fdGradient, fdHessian } = derivativesAndDifferences(term, x, 1.5);
    for (let d = 0; d < m; d++) {
      assert.ok(Math.abs(fdGradient[d] - g[d]) < 1e-6 * (1 + Math.abs(g[d])), `gradient ${d}`);
      for (let r = 0; r < m; r++) assert.ok(Math.abs(fdHessian[m * r + d] - H[r][d]) < 1e-5, `Hessian ${r},${d}`);
    }
  }
});

test('projected Hessian: PSD, equal to exact when every spring is at least its rest length', () => {
  const rand = rng(32);
  for (let trial = 0; trial < 20; trial++) {
    const { x, term } = network(rand);
    const exact = hessian(term, x, false);
    const projected = hessian(term, x, true);
    // The network holds a spring compressed to half its rest length: exact is indefinite.
    assert.ok(minEigenvalue(exact) < -1e-6);
    assert.ok(minEigenvalue(projected) > -1e-12);
  }
  // All stretched: nothing to project.
  const x = Float64Array.from([0, 0, 0, 1, 0.2, 0, 0.3, 1, 0.5]);
  const term = new Springs(Uint32Array.from([0, 1, 1, 2, 0, 2]), Float64Array.from([2, 3, 4]), Float64Array.from([0.5, 0, 1]));
  assert.deepEqual(hessian(term, x, true), hessian(term, x, false));
});

test('spring energy closed form and input validation', () => {
  const term = new Springs(Uint32Array.from([0, 1]), Float64Array.from([4]), Float64Array.from([1]));
  assert.ok(Math.abs(term.energy(Float64Array.from([0, 0, 0, 0, 3, 4])) - 2 * 16) < 1e-12);
  assert.ok(Math.abs(term.energy(Float64Array.from([0, 0, 0, 0, 0, 0.25])) - 2 * 0.5625) < 1e-12);
  assert.throws(() => new Springs(Uint32Array.from([0, 1]), Float64Array.from([1, 2]), Float64Array.from([0])), /stiffness/);
  assert.throws(() => new Springs(Uint32Array.from([0, 1]), Float64Array.from([1]), Float64Array.from([-1])), /rest length/);
  assert.throws(() => new Springs(Uint32Array.from([2, 2]), Float64Array.from([1]), Float64Array.from([0])), /itself/);
});
