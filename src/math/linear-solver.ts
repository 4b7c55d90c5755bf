/**
 * Linear solvers for Newton systems A x = b, A SPD (lumped mass / h^2 plus PSD-projected Hessians, Dirichlet rows
 * replaced by identity): Jacobi / block-Jacobi preconditioned CG (pcg.ts) and a supernodal sparse Cholesky
 * (ldlt.ts) that reuses its symbolic analysis while the pattern stays the same.
 */
import type { BsrMatrix } from './bsr.js';
import { LaggedCholeskySolver } from './lagged-cholesky.js';
import { LdltSolver } from './ldlt.js';
import { PcgSolver } from './pcg.js';

export interface LinearSolveStats {
  iterations: number;
  residual: number;
}

/** Cumulative wall-clock milliseconds and counts per phase (PCG: preconditioner set-up counts as factor). */
export interface LinearSolverTiming {
  analyzeMs: number;
  factorMs: number;
  solveMs: number;
  analyses: number;
  factorizations: number;
  solves: number;
}

export interface LinearSolver {
  readonly name: LinearSolverName;
  /** Cumulative timings, so benchmarks and the simulation can say where the time goes. */
  readonly timing: LinearSolverTiming;
  /** Solves A x = b. A is SPD (Newton matrix: lumped mass/h^2-scaled + PSD-projected Hessians, Dirichlet rows
   *  replaced by identity). x is the initial guess on entry (PCG) and the solution on exit. */
  solve(A: BsrMatrix, b: Float64Array, x: Float64Array): LinearSolveStats;
}

export interface LinearSolverOptions {
  /** PCG: relative residual |r| <= tolerance |b| (default 1e-4, see pcg.ts). */
  tolerance?: number;
  /** PCG: iteration cap (default max(100, size of A)). */
  maxIterations?: number;
  /** PCG: 'jacobi' (default) or 'block-jacobi' (inverse 3x3 diagonal blocks). */
  preconditioner?: 'jacobi' | 'block-jacobi';
}

/**
 * 'pcg': Jacobi-preconditioned CG (the seed paper's); 'ldlt': sparse Cholesky, factored for every solve;
 * 'ldlt-lagged': CG preconditioned by a Cholesky factor that is renewed only when it stops paying off.
 */
export type LinearSolverName = 'pcg' | 'ldlt' | 'ldlt-lagged';

export const LINEAR_SOLVER_NAMES: readonly LinearSolverName[] = ['pcg', 'ldlt', 'ldlt-lagged'];

export function createLinearSolver(name: LinearSolverName, options: LinearSolverOptions = {}): LinearSolver {
  if (name === 'pcg') return new PcgSolver(options);
  if (name === 'ldlt') return new LdltSolver();
  if (name === 'ldlt-lagged') return new LaggedCholeskySolver();
  throw new Error(`createLinearSolver: unknown solver '${String(name)}' (expected ${LINEAR_SOLVER_NAMES.join(', ')})`);
}
