/**
 * Linear solvers for Newton systems A x = b, A SPD (lumped mass / h^2 plus PSD-projected Hessians, Dirichlet rows
 * replaced by identity): Jacobi / block-Jacobi preconditioned CG (pcg.ts), a supernodal sparse Cholesky (ldlt.ts)
 * that reuses its symbolic analysis while the pattern stays the same, CG preconditioned by a lagged Cholesky factor
 * (lagged-cholesky.ts), and 'auto', which picks between the last and PCG by the predicted cost of a factorization.
 */
import type { BsrMatrix, BsrPattern } from './bsr.js';
import type { GroupTurns } from './group-turns.js';
import { LaggedCholeskySolver } from './lagged-cholesky.js';
import { factorBytes, LdltSolver, type LdltSymbolic } from './ldlt.js';
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
   *  replaced by identity). x is the initial guess on entry (PCG) and the solution on exit. `positions`, the point
   *  A was assembled at (Newton's iterate), lets the lagged Cholesky turn its factor with turning bodies. */
  solve(A: BsrMatrix, b: Float64Array, x: Float64Array, positions?: Float64Array): LinearSolveStats;
}

export interface LinearSolverOptions {
  /** PCG, and the lagged Cholesky's PCG: relative residual |r| <= tolerance |b| (default 1e-4, see pcg.ts). */
  tolerance?: number;
  /** PCG: iteration cap (default max(100, size of A)). */
  maxIterations?: number;
  /** PCG: 'jacobi' (default) or 'block-jacobi' (inverse 3x3 diagonal blocks). */
  preconditioner?: 'jacobi' | 'block-jacobi';
  /** The lagged Cholesky: the bodies as node groups, to turn its factor with them (group-turns.ts). */
  turns?: GroupTurns;
}

/**
 * 'pcg': Jacobi-preconditioned CG (the seed paper's); 'ldlt': sparse Cholesky, factored for every solve;
 * 'ldlt-lagged': CG preconditioned by a Cholesky factor that is renewed only when it stops paying off.
 */
export type LinearSolverName = 'pcg' | 'ldlt' | 'ldlt-lagged';

export const LINEAR_SOLVER_NAMES: readonly LinearSolverName[] = ['pcg', 'ldlt', 'ldlt-lagged'];

/**
 * Where 'auto' stops factoring: the lagged Cholesky while one factorization of the Newton matrix needs at most
 * `maxFactorFlops` (predicted by the symbolic analysis) and `maxFactorBytes` of memory, Jacobi PCG beyond.
 * Measured here (bench/solvers.ts, CPU time, one core): the factorization runs at 10-16 GFlop/s, so the limit is a
 * factorization of about 3-5 s, as much as 500-1000 Jacobi-PCG iterations on a 100k-unknown system. The memory
 * counts the float32 copy the lagged Cholesky keeps (factorBytes). The suspended armadillo (95k unknowns, 7.4 GFlop,
 * 0.27 GiB) stays direct: a Newton iteration takes about 1 s there against 4.5 s with PCG (about 900 CG iterations a
 * solve); a box of 30^3 cells (86k unknowns, 150 GFlop, 1.3 GiB) goes to PCG.
 */
export const AUTO_SOLVER_LIMITS = {
  maxFactorFlops: 5e10,
  maxFactorBytes: 2 ** 30,
};

/** True when a factorization with this symbolic analysis stays within the limits (AUTO_SOLVER_LIMITS by default). */
export function withinLimits(sym: LdltSymbolic, limits = AUTO_SOLVER_LIMITS): boolean {
  return sym.flops <= limits.maxFactorFlops && factorBytes(sym, true) <= limits.maxFactorBytes;
}

/** 'auto' (the default) picks by the symbolic analysis of the first Newton matrix (see AutoLinearSolver). */
export function createLinearSolver(name: 'auto' | LinearSolverName, options: LinearSolverOptions = {}): LinearSolver {
  if (name === 'auto') return new AutoLinearSolver(options);
  if (name === 'pcg') return new PcgSolver(options);
  if (name === 'ldlt') return new LdltSolver();
  if (name === 'ldlt-lagged') return new LaggedCholeskySolver({ tolerance: options.tolerance, turns: options.turns });
  throw new Error(`createLinearSolver: unknown solver '${String(name)}' (expected auto, ${LINEAR_SOLVER_NAMES.join(', ')})`);
}

/**
 * The lagged Cholesky while its factorizations stay within AUTO_SOLVER_LIMITS, else Jacobi PCG. The choice is
 * made from the symbolic analysis of each pattern the Cholesky factors (it needs that analysis anyway), not from
 * timings, so a run makes the same choices every time; once a pattern (grown by contacts) passes the limits, the
 * rest of the run stays with PCG.
 */
export class AutoLinearSolver implements LinearSolver {
  private readonly direct: LaggedCholeskySolver;
  private readonly iterative: PcgSolver;
  private useIterative = false;

  constructor(
    options: LinearSolverOptions = {},
    private readonly limits = AUTO_SOLVER_LIMITS,
  ) {
    this.direct = new LaggedCholeskySolver({
      accept: (sym) => withinLimits(sym, limits),
      tolerance: options.tolerance,
      turns: options.turns,
    });
    this.iterative = new PcgSolver(options);
  }

  /** The solver in use: 'ldlt-lagged' until a factorization would pass the limits, then 'pcg'. */
  get name(): LinearSolverName {
    return this.useIterative ? 'pcg' : 'ldlt-lagged';
  }

  get timing(): LinearSolverTiming {
    const a = this.direct.timing;
    const b = this.iterative.timing;
    return {
      analyzeMs: a.analyzeMs + b.analyzeMs,
      factorMs: a.factorMs + b.factorMs,
      solveMs: a.solveMs + b.solveMs,
      analyses: a.analyses + b.analyses,
      factorizations: a.factorizations + b.factorizations,
      solves: a.solves + b.solves,
    };
  }

  /** The solver a matrix of this pattern would start with (from its symbolic analysis; the choice is not changed). */
  choose(pattern: BsrPattern): LinearSolverName {
    return !this.useIterative && withinLimits(this.direct.plan(pattern), this.limits) ? 'ldlt-lagged' : 'pcg';
  }

  solve(A: BsrMatrix, b: Float64Array, x: Float64Array, positions?: Float64Array): LinearSolveStats {
    if (!this.useIterative) {
      const stats = this.direct.trySolve(A, b, x, positions);
      if (stats) return stats;
      this.useIterative = true;
      x.fill(0);
    }
    return this.iterative.solve(A, b, x);
  }
}
