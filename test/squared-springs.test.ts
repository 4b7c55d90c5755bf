import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SquaredLengthSprings } from '../src/energies/squared-springs.js';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import { symmetricEigen } from '../src/math/eigen-sym.js';

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Four nodes, five springs with mixed rest lengths (0 included), positions spread so some are compressed. */
function network(rand: () => number): { term: SquaredLengthSprings; x: Float64Array } {
  const pairs = Uint32Array.from([0, 1, 1, 2, 2, 3, 3, 0, 0, 2]);
  const stiffness = Float64Array.from([3, 1.5, 7, 2, 0.5]);
  const rest = Float64Array.from([1, 0.5, 2, 0, 1.2]);
  const x = Float64Array.from({ length: 12 }, () => 2 * rand() - 1);
  return { term: new SquaredLengthSprings(pairs, stiffness, rest), x };
}

/** Smallest eigenvalue of a dense symmetric matrix (rows). */
function minEigenvalue(rows: Float64Array[]): number {
  const m = rows.length;
  const flat = new Float64Array(m * m);
  rows.forEach((row, r) => flat.set(row, r * m));
  const values = new Float64Array(m);
  symmetricEigen(flat, m, values, new Float64Array(m * m), new Float64Array(m * m));
  return Math.min(...values);
}

function assemble(term: SquaredLengthSprings, n: number): BsrMatrix {
  const builder = new PatternBuilder(n);
  term.addPattern(builder);
  const H = new BsrMatrix(builder.build());
  term.bindPattern(H);
  return H;
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
    const h = 1e-6;
    let maxErr = 0;
    let maxG = 0;
    for (let d = 0; d < 12; d++) {
      const xd = x[d];
      x[d] = xd + h;
      const ep = term.energy(x);
      x[d] = xd - h;
      const em = term.energy(x);
      x[d] = xd;
      maxErr = Math.max(maxErr, Math.abs((2 * (ep - em)) / (2 * h) - g[d]));
      maxG = Math.max(maxG, Math.abs(g[d]));
    }
    assert.ok(maxG > 1e-2, 'gradient suspiciously small');
    assert.ok(maxErr < 1e-6 * maxG, `gradient error ${maxErr} vs ${maxG}`);
  }
});

test('squared springs: exact Hessian matches central differences of the gradient; projected one is PSD and differs only where indefinite', () => {
  const rand = rng(6);
  let sawIndefinite = false;
  for (let trial = 0; trial < 5; trial++) {
    const { term, x } = network(rand);
    const H = assemble(term, 4);
    H.zero();
    term.addHessian(x, 2, H, false);
    const exact = H.toDense();
    const gp = new Float64Array(12);
    const gm = new Float64Array(12);
    const h = 1e-6;
    let maxErr = 0;
    let maxH = 0;
    for (let d = 0; d < 12; d++) {
      const xd = x[d];
      gp.fill(0);
      gm.fill(0);
      x[d] = xd + h;
      term.addGradient(x, 2, gp);
      x[d] = xd - h;
      term.addGradient(x, 2, gm);
      x[d] = xd;
      for (let r = 0; r < 12; r++) {
        maxErr = Math.max(maxErr, Math.abs((gp[r] - gm[r]) / (2 * h) - exact[r][d]));
        maxH = Math.max(maxH, Math.abs(exact[r][d]));
      }
    }
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
  const H = assemble(one, 2);
  H.zero();
  one.addHessian(x, 1, H, false);
  const a = H.toDense();
  H.zero();
  one.addHessian(x, 1, H, true);
  const b = H.toDense();
  for (let r = 0; r < 6; r++) for (let c = 0; c < 6; c++) assert.ok(Math.abs(a[r][c] - b[r][c]) < 1e-12, `entry ${r},${c}`);
});
