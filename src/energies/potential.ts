import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { ThreadPool } from '../solver/threads.js';
import type { EigenvalueFilter } from './eigenvalue-filter.js';

/**
 * One term of the total potential P(x): elasticity of a body, gravity, springs, later the contact barrier.
 *
 * x is the stacked node positions (3 per node). Every method loops over the term's own elements and must not
 * allocate inside the loop. Gradients and Hessians are accumulated (+=), scaled by `scale`, so the solver can
 * assemble c * P into the incremental potential without temporaries.
 */
export interface PotentialTerm {
  /** Metrics column this term adds to: 'elastic', 'gravity', 'spring', 'contact', ... */
  readonly name: string;

  /** P_term(x). Infinity marks an infeasible x (an inverted element of a log-J material, say). */
  energy(x: Float64Array): number;

  addGradient(x: Float64Array, scale: number, g: Float64Array): void;

  /**
   * Adds scale * Hessian. With projectPsd each element's local Hessian is first projected onto the positive
   * semi-definite cone (projected Newton); without, the exact Hessian is added. `filter` (default 'clamp') asks
   * for the absolute-value filter instead of clamping; terms that only clamp may ignore it.
   */
  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean, filter?: EigenvalueFilter): void;

  /**
   * True when Newton may add this term's exact (unprojected) Hessian near a minimiser, where the projection only
   * slows convergence (see NewtonSolver); the Cholesky then checks that the Newton matrix is still positive definite.
   */
  readonly exactNearMinimum?: boolean;

  /** Registers the node couplings this term's Hessian writes (at its current state), before addHessian. */
  addPattern(builder: PatternBuilder): void;

  /** Called whenever a pattern is built, so the term can cache its block slots. */
  bindPattern?(H: BsrMatrix): void;

  /**
   * Terms whose couplings change with x (contact): true when the Hessian at x needs blocks the bound pattern
   * lacks. The incremental potential then grows its pattern (the current one plus addPattern of the terms that
   * have this method; patterns never lose blocks), then calls bindPattern of every term.
   */
  patternStale?(x: Float64Array): boolean;

  /**
   * Line-search filter: the largest t in (0, 1] such that x + s dx stays feasible for every s in [0, t]
   * (no inversion, later no collision). Terms without feasibility constraints omit it. `limit` (default 1) is what
   * the terms asked before allow already: a term may return `limit` as soon as it knows it allows at least that, and
   * need not look beyond it (the contact sweeps then cover only the part of the step the tets allow).
   */
  maxStep?(x: Float64Array, dx: Float64Array, limit?: number): number;

  /** When the last maxStep returned 0: which primitive held it there, for the error message. */
  explainBlockedStep?(x: Float64Array): string | undefined;

  /**
   * Terms with large element loops: run them on the pool's worker threads from now on (null: on the calling thread
   * only, and let go of the workers). Results must not depend on it, to the bit.
   */
  useThreads?(pool: ThreadPool | null): void;

  /** True when the term is affine in x (gravity): its Hessian is zero and it never needs assembling. */
  readonly isLinear?: boolean;
}

/** Sum of the terms' energies, split by term name (the per-term metrics columns). */
export function energyByName(terms: readonly PotentialTerm[], x: Float64Array, out: Map<string, number>): number {
  out.clear();
  let total = 0;
  for (const term of terms) {
    const e = term.energy(x);
    out.set(term.name, (out.get(term.name) ?? 0) + e);
    total += e;
  }
  return total;
}
