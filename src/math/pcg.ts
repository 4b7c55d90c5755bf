/**
 * Preconditioned conjugate gradient on BsrMatrix (the seed paper's Newton solver), with a Jacobi (inverse diagonal)
 * or 3x3 block-Jacobi (inverse diagonal node blocks) preconditioner.
 *
 * Default tolerance |r| <= 1e-4 |b|: Newton only needs a descent direction, and every CG iterate started from x = 0
 * is one (it minimizes the quadratic model over a Krylov space that contains -g, so g.dx < 0); a tighter solve
 * buys a more exact Newton step, not a different answer. With a relative residual eta, inexact Newton still
 * converges, about linearly with rate eta near the solution (Dembo, Eisenstat and Steihaug), so 1e-4 costs at
 * most a Newton iteration or so. Measured by bench/solvers.ts (Jacobi): 1e-4 takes 58% of the iterations of 1e-8 on
 * the 3993-DOF cube (124 vs 215), 84% on the 14553-DOF bar (549 vs 654) and 50% on the 89373-DOF box (71 vs
 * 143), with the step within 3e-4, 2e-5 and 3e-4 (relative) of the exact one.
 */
import type { BsrMatrix } from './bsr.js';
import type { LinearSolveStats, LinearSolver, LinearSolverOptions, LinearSolverTiming } from './linear-solver.js';
import { NotPositiveDefiniteError } from './not-positive-definite.js';

export const DEFAULT_PCG_TOLERANCE = 1e-4;

export class PcgSolver implements LinearSolver {
  readonly name = 'pcg' as const;
  readonly timing: LinearSolverTiming = { analyzeMs: 0, factorMs: 0, solveMs: 0, analyses: 0, factorizations: 0, solves: 0 };
  readonly tolerance: number;
  readonly preconditioner: 'jacobi' | 'block-jacobi';
  private readonly maxIterations: number | undefined;
  // work vectors, reallocated only when the size changes
  private r = new Float64Array(0);
  private p = new Float64Array(0);
  private q = new Float64Array(0);
  private inverse = new Float64Array(0); // 1 per DOF (Jacobi) or 9 per node (block Jacobi)

  constructor(options: LinearSolverOptions = {}) {
    this.tolerance = options.tolerance ?? DEFAULT_PCG_TOLERANCE;
    this.maxIterations = options.maxIterations;
    this.preconditioner = options.preconditioner ?? 'jacobi';
    if (!(this.tolerance > 0)) throw new Error(`PcgSolver: tolerance must be > 0, got ${this.tolerance}`);
  }

  solve(A: BsrMatrix, b: Float64Array, x: Float64Array): LinearSolveStats {
    const size = A.size;
    if (b.length !== size || x.length !== size) {
      throw new Error(`PcgSolver: sizes differ (A ${size}, b ${b.length}, x ${x.length})`);
    }
    const bNorm = Math.sqrt(dot(b, b, size));
    if (bNorm === 0) {
      x.fill(0);
      return { iterations: 0, residual: 0 };
    }
    this.ensureWork(size);
    const t0 = performance.now();
    this.setUpPreconditioner(A);
    const t1 = performance.now();
    this.timing.factorMs += t1 - t0;
    this.timing.factorizations++;
    const { r, p, q } = this;
    const maxIt = this.maxIterations ?? Math.max(100, size);
    const target = this.tolerance * bNorm;
    // r = b - A x
    A.multiply(x, r);
    for (let i = 0; i < size; i++) r[i] = b[i] - r[i];
    let rNorm = Math.sqrt(dot(r, r, size));
    let it = 0;
    if (rNorm > target) {
      // p = M r; the preconditioned residual z = M r is never stored: r.z and p = M r + beta p are formed on the fly
      p.fill(0);
      let rz = this.updateDirection(r, p, 0, size);
      while (it < maxIt) {
        A.multiply(p, q);
        const pq = dot(p, q, size);
        if (!(pq > 0)) {
          throw new NotPositiveDefiniteError(`PcgSolver: matrix is not positive definite (p^T A p = ${pq} at iteration ${it})`);
        }
        const alpha = rz / pq;
        let rr = 0;
        for (let i = 0; i < size; i++) {
          x[i] += alpha * p[i];
          const ri = r[i] - alpha * q[i];
          r[i] = ri;
          rr += ri * ri;
        }
        it++;
        rNorm = Math.sqrt(rr);
        if (rNorm <= target) break;
        const rzNew = this.preconditionedDot(r, size);
        const beta = rzNew / rz;
        rz = rzNew;
        this.updateDirection(r, p, beta, size);
      }
    }
    this.timing.solveMs += performance.now() - t1;
    this.timing.solves++;
    return { iterations: it, residual: rNorm / bNorm };
  }

  /** r . M r. */
  private preconditionedDot(r: Float64Array, size: number): number {
    const inv = this.inverse;
    let s = 0;
    if (this.preconditioner === 'jacobi') {
      for (let i = 0; i < size; i++) s += inv[i] * r[i] * r[i];
      return s;
    }
    for (let i = 0, w = 0; i < size; i += 3, w += 9) {
      const r0 = r[i], r1 = r[i + 1], r2 = r[i + 2];
      s += r0 * (inv[w] * r0 + inv[w + 1] * r1 + inv[w + 2] * r2);
      s += r1 * (inv[w + 3] * r0 + inv[w + 4] * r1 + inv[w + 5] * r2);
      s += r2 * (inv[w + 6] * r0 + inv[w + 7] * r1 + inv[w + 8] * r2);
    }
    return s;
  }

  /** p = M r + beta p; returns r . M r. */
  private updateDirection(r: Float64Array, p: Float64Array, beta: number, size: number): number {
    const inv = this.inverse;
    let s = 0;
    if (this.preconditioner === 'jacobi') {
      for (let i = 0; i < size; i++) {
        const zi = inv[i] * r[i];
        s += zi * r[i];
        p[i] = zi + beta * p[i];
      }
      return s;
    }
    for (let i = 0, w = 0; i < size; i += 3, w += 9) {
      const r0 = r[i], r1 = r[i + 1], r2 = r[i + 2];
      const z0 = inv[w] * r0 + inv[w + 1] * r1 + inv[w + 2] * r2;
      const z1 = inv[w + 3] * r0 + inv[w + 4] * r1 + inv[w + 5] * r2;
      const z2 = inv[w + 6] * r0 + inv[w + 7] * r1 + inv[w + 8] * r2;
      s += r0 * z0 + r1 * z1 + r2 * z2;
      p[i] = z0 + beta * p[i];
      p[i + 1] = z1 + beta * p[i + 1];
      p[i + 2] = z2 + beta * p[i + 2];
    }
    return s;
  }

  private ensureWork(size: number): void {
    if (this.r.length === size) return;
    this.r = new Float64Array(size);
    this.p = new Float64Array(size);
    this.q = new Float64Array(size);
    this.inverse = new Float64Array(this.preconditioner === 'jacobi' ? size : 3 * size);
  }

  private setUpPreconditioner(A: BsrMatrix): void {
    const { diagSlot, n } = A.pattern;
    const v = A.values;
    const inv = this.inverse;
    if (this.preconditioner === 'jacobi') {
      for (let i = 0; i < n; i++) {
        const o = 9 * diagSlot[i];
        for (let a = 0; a < 3; a++) {
          const d = v[o + 4 * a];
          if (!(d > 0)) {
            throw new NotPositiveDefiniteError(`PcgSolver: diagonal entry ${d} at DOF ${3 * i + a} is not positive (A is not SPD)`);
          }
          inv[3 * i + a] = 1 / d;
        }
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      const o = 9 * diagSlot[i];
      // symmetric part of the block, inverted by cofactors
      const a00 = v[o], a11 = v[o + 4], a22 = v[o + 8];
      const a01 = 0.5 * (v[o + 1] + v[o + 3]);
      const a02 = 0.5 * (v[o + 2] + v[o + 6]);
      const a12 = 0.5 * (v[o + 5] + v[o + 7]);
      const c00 = a11 * a22 - a12 * a12;
      const c01 = a02 * a12 - a01 * a22;
      const c02 = a01 * a12 - a02 * a11;
      const det = a00 * c00 + a01 * c01 + a02 * c02;
      if (!(det > 0) || !(a00 > 0)) {
        throw new NotPositiveDefiniteError(`PcgSolver: diagonal block of node ${i} is not positive definite (det ${det})`);
      }
      const s = 1 / det;
      const w = 9 * i;
      inv[w] = c00 * s;
      inv[w + 1] = inv[w + 3] = c01 * s;
      inv[w + 2] = inv[w + 6] = c02 * s;
      inv[w + 4] = (a00 * a22 - a02 * a02) * s;
      inv[w + 5] = inv[w + 7] = (a01 * a02 - a00 * a12) * s;
      inv[w + 8] = (a00 * a11 - a01 * a01) * s;
    }
  }
}

function dot(a: Float64Array, b: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
