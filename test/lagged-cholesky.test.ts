import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import { DiagonalCorrection } from '../src/math/diagonal-correction.js';
import { LaggedCholeskySolver } from '../src/math/lagged-cholesky.js';
import { createLinearSolver } from '../src/math/linear-solver.js';
import { LdltSolver } from '../src/math/ldlt.js';
import { NotPositiveDefiniteError } from '../src/math/not-positive-definite.js';
import { gridPattern, relativeError } from './numeric-helpers.js';

/** SPD matrix on a 3D grid graph of nodes: identity-dominant diagonal blocks, random symmetric couplings. */
function gridMatrix(side: number, seed: number, drift: number): BsrMatrix {
  const n = side * side * side;
  const A = new BsrMatrix(gridPattern(side, side, side));
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const { rowStart, col } = A.pattern;
  for (let i = 0; i < n; i++) {
    for (let t = rowStart[i]; t < rowStart[i + 1]; t++) {
      const j = col[t];
      if (j <= i) continue;
      const tj = A.pattern.slot(j, i);
      for (let a = 0; a < 3; a++)
        for (let c = 0; c < 3; c++) {
          const v = -(1 + drift * rand()) * (a === c ? 1 : 0.1);
          A.values[9 * t + 3 * a + c] = v;
          A.values[9 * tj + 3 * c + a] = v;
        }
    }
  }
  // Diagonal dominance makes it SPD.
  for (let i = 0; i < n; i++) {
    const d = A.pattern.diagSlot[i];
    for (let a = 0; a < 3; a++) A.values[9 * d + 4 * a] = 8 + drift * rand();
  }
  return A;
}

test('lagged Cholesky: matches a fresh factorisation on drifting matrices and refactors only when needed', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-10, refactorAfter: 8, maxIterations: 40 });
  const direct = new LdltSolver();
  const first = gridMatrix(6, 1, 0);
  const b = Float64Array.from({ length: first.size }, (_, i) => Math.sin(i + 1));
  let fresh = 0;
  let cheap = 0;
  for (let step = 0; step < 6; step++) {
    // Same pattern, values drifting a little each time (Newton iterations of one step).
    const A = gridMatrix(6, 1, 0);
    const B = gridMatrix(6, 7 + step, 0.05);
    for (let i = 0; i < A.values.length; i++) A.values[i] = 0.9 * A.values[i] + 0.1 * B.values[i];
    // Reuse the first matrix's pattern object so the factor can be reused.
    const M = new BsrMatrix(first.pattern);
    M.values.set(A.values);
    const x = new Float64Array(M.size);
    const stats = lagged.solve(M, b, x);
    if (stats.iterations === 1 && step === 0) fresh++; // a fresh factor solves in one step
    else cheap++;
    const y = new Float64Array(M.size);
    direct.solve(M, b, y);
    let err = 0;
    let norm = 0;
    for (let i = 0; i < y.length; i++) {
      err = Math.max(err, Math.abs(x[i] - y[i]));
      norm = Math.max(norm, Math.abs(y[i]));
    }
    assert.ok(err <= 1e-8 * norm, `step ${step}: lagged solution differs by ${err}`);
    // a fresh factor solves with its float64 panels (the float32 copy serves the later, iterative solves)
    if (step === 0) assert.ok(err <= 1e-13 * norm, `fresh factor: differs by ${err}`);
  }
  assert.equal(fresh, 1, 'the first solve factors');
  assert.equal(lagged.timing.factorizations, 1, 'small drifts reuse the factor');
  assert.ok(cheap === 5);
});

test('ldlt-lagged and auto stop their CG at the tolerance they are given (solver.cgTolerance)', () => {
  const b = Float64Array.from({ length: gridMatrix(5, 1, 0).size }, (_, i) => Math.sin(i + 1));
  /** |A x - b| / |b| of the second solve, on a matrix drifted from the factored one (the factor is a preconditioner). */
  const relativeResidual = (solver: ReturnType<typeof createLinearSolver>): number => {
    const first = gridMatrix(5, 1, 0);
    solver.solve(first, b, new Float64Array(first.size));
    const drifted = new BsrMatrix(first.pattern);
    drifted.values.set(gridMatrix(5, 5, 0.3).values);
    const x = new Float64Array(first.size);
    solver.solve(drifted, b, x);
    const r = new Float64Array(first.size);
    drifted.multiply(x, r);
    return relativeError(r, b);
  };
  for (const name of ['ldlt-lagged', 'auto'] as const) {
    const loose = relativeResidual(createLinearSolver(name));
    const tight = relativeResidual(createLinearSolver(name, { tolerance: 1e-12 }));
    assert.ok(loose <= 1e-4 && loose > 1e-11, `${name}, default tolerance 1e-4: relative residual ${loose}`);
    assert.ok(tight <= 1e-12, `${name}, tolerance 1e-12: relative residual ${tight}`);
  }
});

test('lagged Cholesky: a matrix far from the factored one triggers a refactorisation, still solving exactly', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-10, maxIterations: 3 });
  const A = gridMatrix(5, 3, 0);
  const b = Float64Array.from({ length: A.size }, (_, i) => Math.cos(i));
  lagged.solve(A, b, new Float64Array(A.size));
  const far = new BsrMatrix(A.pattern);
  far.values.set(gridMatrix(5, 11, 1.5).values);
  for (let i = 0; i < A.pattern.n; i++) for (let a = 0; a < 3; a++) far.values[9 * A.pattern.diagSlot[i] + 4 * a] *= 3;
  const x = new Float64Array(A.size);
  lagged.solve(far, b, x);
  assert.equal(lagged.timing.factorizations, 2);
  const r = new Float64Array(A.size);
  far.multiply(x, r);
  for (let i = 0; i < r.length; i++) assert.ok(Math.abs(r[i] - b[i]) <= 1e-9, `residual ${r[i] - b[i]} at ${i}`);
});

test('lagged Cholesky: after failed attempts the next 1, 2, 4 solves refactor at once; a success resets that', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-10, maxIterations: 3 });
  const base = gridMatrix(4, 3, 0);
  const b = Float64Array.from({ length: base.size }, (_, i) => Math.cos(i));
  // Every matrix far from the one before (new seeds, large drift): an attempt with the old factor fails.
  const far = (seed: number) => {
    const M = new BsrMatrix(base.pattern);
    M.values.set(gridMatrix(4, seed, 1.5).values);
    for (let i = 0; i < base.pattern.n; i++) for (let a = 0; a < 3; a++) M.values[9 * base.pattern.diagSlot[i] + 4 * a] *= 1 + (seed % 5);
    return M;
  };
  const attempts: number[] = [];
  for (let k = 0; k < 10; k++) {
    const before = lagged.failedAttempts;
    const A = k === 0 ? base : far(100 + k);
    const x = new Float64Array(A.size);
    lagged.solve(A, b, x);
    attempts.push(lagged.failedAttempts - before);
    const r = new Float64Array(A.size);
    A.multiply(x, r);
    for (let i = 0; i < r.length; i++) assert.ok(Math.abs(r[i] - b[i]) <= 1e-8, `solve ${k}: residual ${r[i] - b[i]} at ${i}`);
  }
  // solve 0 factors; 1 fails; 2 skips; 3 fails; 4-5 skip; 6 fails; 7-9 skip (4 of them)
  assert.deepEqual(attempts, [0, 1, 0, 1, 0, 0, 1, 0, 0, 0]);
  assert.equal(lagged.timing.factorizations, 10, 'every solve refactored');
  // The same matrix again: the attempt succeeds (fresh factor of that matrix) and resets the back-off.
  const again = new BsrMatrix(base.pattern);
  const last = far(109);
  again.values.set(last.values);
  for (let k = 0; k < 6; k++) lagged.solve(again, b, new Float64Array(again.size)); // the remaining skips, then attempts
  const failedBefore = lagged.failedAttempts;
  const factorsBefore = lagged.timing.factorizations;
  lagged.solve(again, b, new Float64Array(again.size));
  assert.equal(lagged.failedAttempts, failedBefore, 'the attempt on an unchanged matrix succeeds');
  assert.equal(lagged.timing.factorizations, factorsBefore, 'and needs no new factor');
});

test('lagged Cholesky: a new pattern (contact blocks came) is analyzed and factored at once', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-10 });
  const A = gridMatrix(5, 3, 0);
  const b = Float64Array.from({ length: A.size }, (_, i) => Math.cos(i));
  lagged.solve(A, b, new Float64Array(A.size));
  // weak new blocks between far nodes: the old factor would still precondition well, but it belongs to another pattern
  const builder = new PatternBuilder(A.pattern.n, A.pattern);
  for (let i = 0; i + 60 < A.pattern.n; i += 9) builder.addClique([i, i + 60]);
  const M = new BsrMatrix(builder.build());
  M.addScaled(A, 1);
  for (let i = 0; i + 60 < A.pattern.n; i += 9) {
    for (let a = 0; a < 3; a++) {
      M.values[9 * M.pattern.slot(i, i) + 4 * a] += 0.01; // a PSD pair term 0.01 (e_i - e_j)(e_i - e_j)^T per axis
      M.values[9 * M.pattern.slot(i + 60, i + 60) + 4 * a] += 0.01;
      M.values[9 * M.pattern.slot(i, i + 60) + 4 * a] -= 0.01;
      M.values[9 * M.pattern.slot(i + 60, i) + 4 * a] -= 0.01;
    }
  }
  const x = new Float64Array(A.size);
  const stats = lagged.solve(M, b, x);
  assert.equal(stats.iterations, 1, 'a fresh factor solves at once');
  assert.equal(lagged.timing.analyses, 2);
  assert.equal(lagged.timing.factorizations, 2);
  const r = new Float64Array(M.size);
  M.multiply(x, r);
  for (let i = 0; i < r.length; i++) assert.ok(Math.abs(r[i] - b[i]) <= 1e-12, `residual ${r[i] - b[i]} at ${i}`);
});

test('lagged Cholesky: a matrix that is not positive definite is reported as such, not counted against the factor', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-10 });
  const A = gridMatrix(5, 4, 0.2);
  const b = Float64Array.from({ length: A.size }, (_, i) => Math.sin(2 * i + 1));
  lagged.solve(A, b, new Float64Array(A.size));
  // -A: CG with the factor of A meets p^T (-A) p < 0 at once (an indefinite Newton matrix, as Newton's unprojected
  // Hessian may be); the fresh factorization then proves it, with the error Newton falls back on.
  const negative = new BsrMatrix(A.pattern);
  negative.addScaled(A, -1);
  assert.throws(() => lagged.solve(negative, b, new Float64Array(A.size)), NotPositiveDefiniteError);
  assert.equal(lagged.failedAttempts, 0, 'negative curvature is no failed attempt of the old factor');
  // The next (positive definite) matrix is factored afresh and solved exactly.
  const x = new Float64Array(A.size);
  assert.equal(lagged.solve(A, b, x).iterations, 1);
  const r = new Float64Array(A.size);
  A.multiply(x, r);
  for (let i = 0; i < r.length; i++) assert.ok(Math.abs(r[i] - b[i]) <= 1e-10, `residual ${r[i] - b[i]} at ${i}`);
});

/** Adds to A's diagonal block of node v the symmetric 3x3 block s * (u u^T) + t * I (a contact-like stiffening). */
function stiffen(A: BsrMatrix, v: number, u: readonly number[], s: number, t = 0): void {
  const o = 9 * A.pattern.diagSlot[v];
  for (let a = 0; a < 3; a++) for (let c = 0; c < 3; c++) A.values[o + 3 * a + c] += s * u[a] * u[c] + (a === c ? t : 0);
}

function maxResidual(A: BsrMatrix, x: Float64Array, b: Float64Array): number {
  const r = new Float64Array(A.size);
  A.multiply(x, r);
  let worst = 0;
  for (let i = 0; i < r.length; i++) worst = Math.max(worst, Math.abs(r[i] - b[i]));
  return worst;
}

test('diagonal correction: the old factor plus the Woodbury term inverts a matrix changed on a few diagonal blocks', () => {
  const A0 = gridMatrix(5, 3, 0.2);
  const direct = new LdltSolver();
  const b = Float64Array.from({ length: A0.size }, (_, i) => Math.sin(3 * i + 1));
  direct.solve(A0, b, new Float64Array(A0.size));
  const solve = (rhs: Float64Array, out: Float64Array) => direct.solveFactored(rhs, out);
  const A = new BsrMatrix(A0.pattern);
  A.values.set(A0.values);
  // Five nodes stiffen along all three axes (full blocks), one softens: 15 changed DOFs, some changes negative.
  const nodes = [0, 17, 42, 63, 99];
  nodes.forEach((v, k) => stiffen(A, v, [1, 0.3 * k, -0.5], 40 + 10 * k, 5));
  stiffen(A, 77, [0, 1, 0], -3);
  const correction = new DiagonalCorrection({ maxColumns: 64, columnsPerSolve: 64 });
  correction.reset(A0);
  correction.prepare(A, solve);
  assert.equal(correction.columnsMade, 16, 'three DOFs for each stiffened node, one for the softened one (only its y row changed)');
  const x = new Float64Array(A.size);
  direct.solveFactored(b, x);
  const uncorrected = maxResidual(A, x, b);
  correction.apply(x);
  const corrected = maxResidual(A, x, b);
  assert.ok(uncorrected > 1e-2, `the change matters (residual ${uncorrected} without the correction)`);
  assert.ok(corrected < 1e-11, `corrected residual ${corrected}`);
});

test('diagonal correction: at most columnsPerSolve columns per solve served and maxColumns in all, and none when they could not hold 90 % of the change', () => {
  const A0 = gridMatrix(4, 5, 0.2);
  const direct = new LdltSolver();
  direct.solve(A0, new Float64Array(A0.size).fill(1), new Float64Array(A0.size));
  const solve = (rhs: Float64Array, out: Float64Array) => direct.solveFactored(rhs, out);
  const changed = (count: number) => {
    const A = new BsrMatrix(A0.pattern);
    A.values.set(A0.values);
    for (let v = 0; v < count; v++) stiffen(A, v, [0, 1, 0], 20 + v); // one changed DOF per node
    return A;
  };
  const made = (count: number, solves: number) => {
    const correction = new DiagonalCorrection({ maxColumns: 12, columnsPerSolve: 5 });
    correction.reset(A0);
    const A = changed(count);
    const counts: number[] = [];
    for (let k = 0; k < solves; k++) {
      correction.prepare(A, solve);
      counts.push(correction.columnsMade);
    }
    return { counts, correction, A };
  };
  const { counts, correction, A } = made(12, 4);
  assert.deepEqual(counts, [5, 10, 12, 12]);
  assert.equal(correction.active, true);
  correction.reset(A);
  correction.prepare(A, solve);
  assert.equal(correction.active, false, 'nothing changed since the new factor');
  assert.equal(correction.columnsMade, 12);
  // 20 changed DOFs: the 12 largest changes hold less than 90 % of the (scaled) change, so no column is made.
  assert.deepEqual(made(20, 3).counts, [0, 0, 0]);
});

test('lagged Cholesky: contact-like stiffening of a few nodes keeps the old factor (corrected) where it used to refactor', () => {
  const base = gridMatrix(6, 2, 0.1);
  const b = Float64Array.from({ length: base.size }, (_, i) => Math.cos(0.7 * i));
  const contacts = [5, 11, 29, 30, 31, 47];
  const run = (diagonalCorrection: boolean) => {
    const lagged = new LaggedCholeskySolver({ tolerance: 1e-8, diagonalCorrection });
    const direct = new LdltSolver();
    const iterations: number[] = [];
    let factorsBefore = 0;
    for (let step = 0; step < 24; step++) {
      if (step === 12) factorsBefore = lagged.timing.factorizations;
      const A = new BsrMatrix(base.pattern);
      A.values.set(base.values);
      // the barrier's stiffness swings by factors of several from one Newton matrix to the next
      contacts.forEach((v, k) => stiffen(A, v, [0, 1, 0], 200 * (1 + Math.sin(step + k)) ** 2));
      const x = new Float64Array(A.size);
      iterations.push(lagged.solve(A, b, x).iterations);
      const y = new Float64Array(A.size);
      direct.solve(A, b, y);
      for (let i = 0; i < y.length; i++) assert.ok(Math.abs(x[i] - y[i]) <= 1e-6 * Math.max(1, Math.abs(y[i])), `step ${step}: ${x[i]} against ${y[i]}`);
    }
    return { lateFactorizations: lagged.timing.factorizations - factorsBefore, iterations, columns: lagged.correctionColumns };
  };
  const corrected = run(true);
  const plain = run(false);
  // Columns come once 8 solves in a row had the pattern; from then on one factor serves every matrix.
  assert.equal(corrected.lateFactorizations, 0, `no factorization in the last 12 solves (iterations ${corrected.iterations})`);
  assert.ok(corrected.columns >= 6 && corrected.columns <= 12, `the six contact DOFs' columns, made once per factor (${corrected.columns})`);
  assert.ok(plain.lateFactorizations >= 3, `without the correction the factor is renewed (${plain.lateFactorizations} times in the last 12 solves)`);
  assert.ok(Math.max(...corrected.iterations.slice(12)) <= 2, `corrected iterations ${corrected.iterations}`);
});

test('lagged Cholesky: no correction columns while the pattern changes every few solves', () => {
  const lagged = new LaggedCholeskySolver({ tolerance: 1e-8 });
  const base = gridMatrix(5, 4, 0.1);
  const b = Float64Array.from({ length: base.size }, (_, i) => Math.sin(0.3 * i));
  let pattern = base.pattern;
  for (let step = 0; step < 24; step++) {
    // a new pattern (same blocks, a new object: as a contact scene's pattern rebuild) every 4th solve
    if (step % 4 === 0) pattern = new PatternBuilder(base.pattern.n, base.pattern).build();
    const A = new BsrMatrix(pattern);
    A.values.set(base.values);
    [3, 17, 40].forEach((v, k) => stiffen(A, v, [0, 1, 0], 200 * (1 + Math.sin(step + k)) ** 2));
    const x = new Float64Array(A.size);
    lagged.solve(A, b, x);
    assert.ok(maxResidual(A, x, b) <= 1e-6, `step ${step}: residual ${maxResidual(A, x, b)}`);
  }
  assert.equal(lagged.correctionColumns, 0);
});
