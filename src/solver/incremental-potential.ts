import { BsrMatrix, PatternBuilder, type BsrPattern } from '../math/bsr.js';
import type { PotentialTerm } from '../energies/potential.js';
import type { EigenvalueFilter } from '../energies/eigenvalue-filter.js';
import type { Model } from '../model/model.js';

/**
 * Every this many-th new Hessian pattern is built from scratch, the others grown from the current one (see
 * assembleHessian). 16 changes are a few steps of a landing bunny; its factorization's flops grew by about a sixth
 * in 40 steps of growing alone.
 */
const PATTERN_RESTART = 16;

/**
 * A frozen quadratic 1/2 (x - center)^T K (x - center), scaled: the semi-implicit Rayleigh damping of seed 000
 * Eq. 17 (K the elastic Hessian at x_n), later lagged friction. It enters the minimisation but is not part of P.
 */
export interface FrozenQuadratic {
  K: BsrMatrix;
  readonly center: Float64Array;
  scale: number;
}

/**
 * The one objective every implicit step minimises (the optimization form of implicit time integration):
 *
 *     E(x) = 1/2 (x - xTilde)^T M (x - xTilde) + c P(x) (+ c D(x) lagged friction, + frozen quadratic terms)
 *
 * Integrators set the predictor xTilde and the weight c; constrained DOFs keep whatever value x holds.
 */
export class IncrementalPotential {
  /** Rebuilt (a new pattern) when a contact needs blocks the current one lacks. */
  hessian: BsrMatrix;
  /** Memory of the Hessian's values, reused by grown patterns (buildMatrix). */
  private storage = new Float64Array(0);
  /** How many times the pattern was rebuilt for contact (each costs the solver a new symbolic analysis). */
  patternRebuilds = 0;
  readonly predictor: Float64Array;
  weight = 1;
  readonly frozen: FrozenQuadratic[] = [];
  /** Terms of the minimisation that are not part of P (lagged friction), weighted by c like P. */
  readonly dissipative: readonly PotentialTerm[];
  private readonly scratch: Float64Array;
  private readonly nonlinearTerms: readonly PotentialTerm[];
  private readonly dynamicTerms: readonly PotentialTerm[];

  private readonly allTerms: readonly PotentialTerm[];

  constructor(
    readonly model: Model,
    dissipative: readonly PotentialTerm[] = [],
  ) {
    this.dissipative = dissipative;
    this.allTerms = [...model.terms, ...dissipative];
    this.hessian = this.buildMatrix();
    this.predictor = new Float64Array(3 * model.nNodes);
    this.scratch = new Float64Array(3 * model.nNodes);
    this.nonlinearTerms = this.allTerms.filter((t) => !t.isLinear);
    this.dynamicTerms = this.allTerms.filter((t) => t.patternStale);
  }

  /**
   * The Hessian matrix on a new pattern: every term's couplings, or (grown from `base`, the current pattern) only
   * those of the terms whose pattern changes: the rest are in the base already.
   */
  private buildMatrix(base: BsrPattern | null = null): BsrMatrix {
    const builder = new PatternBuilder(this.model.nNodes, base);
    for (const term of base ? this.dynamicTerms : this.allTerms) term.addPattern(builder);
    const pattern = builder.build();
    // A new pattern's values go into the old matrix's memory while they fit (the old matrix is dropped), with a
    // quarter of room to grow: contact scenes rebuild often, and fresh memory costs its page faults every time.
    const need = 9 * pattern.nnzBlocks;
    if (this.storage.length < need) this.storage = new Float64Array(this.storage.length > 0 ? Math.ceil(1.25 * need) : need);
    const H = new BsrMatrix(pattern, this.storage);
    for (const term of this.allTerms) term.bindPattern?.(H);
    return H;
  }

  /** A matrix with the same pattern as the Hessian (for frozen quadratic terms). */
  newMatrix(): BsrMatrix {
    return new BsrMatrix(this.hessian.pattern);
  }

  /** E(x); Infinity when any term is infeasible at x. */
  value(x: Float64Array): number {
    const { mass } = this.model;
    const xt = this.predictor;
    let inertia = 0;
    for (let d = 0; d < x.length; d++) {
      const r = x[d] - xt[d];
      inertia += mass[d] * r * r;
    }
    let p = 0;
    for (const term of this.allTerms) p += term.energy(x);
    let e = 0.5 * inertia + this.weight * p;
    for (const q of this.frozen) e += q.scale * frozenValue(q, x, this.scratch);
    return e;
  }

  /** g = grad E(x), with zeros on constrained DOFs. */
  gradient(x: Float64Array, g: Float64Array): void {
    const { mass, constrained } = this.model;
    const xt = this.predictor;
    for (let d = 0; d < x.length; d++) g[d] = mass[d] * (x[d] - xt[d]);
    for (const term of this.allTerms) term.addGradient(x, this.weight, g);
    for (const q of this.frozen) frozenAddGradient(q, x, g, this.scratch);
    for (let d = 0; d < x.length; d++) if (constrained[d]) g[d] = 0;
  }

  /**
   * Assembles M + c Hess P (+ frozen K) into this.hessian, constrained rows and columns replaced by identity. With
   * projectPsd, `filter` is what the terms that support it do with their elements' negative eigenvalues. With
   * `exactNearMinimum` the terms that allow it (PotentialTerm.exactNearMinimum) add their exact Hessian even when
   * the others are projected.
   */
  assembleHessian(x: Float64Array, projectPsd: boolean, filter: EigenvalueFilter = 'clamp', exactNearMinimum = false): BsrMatrix {
    let stale = false;
    for (const term of this.dynamicTerms) if (term.patternStale!(x)) stale = true;
    if (stale) {
      // Grown from the current pattern, so a contact that parts and touches again (a vibrating body) needs no new
      // one; but every PATTERN_RESTART-th from scratch, which drops the blocks of pairs that have parted since.
      // Kept for good they piled up on a tumbling body: the bunny on the stairs took 0.42 s a Newton iteration at
      // the end of its run against 0.23 s from a fresh pattern in the same state (twice the factorization flops).
      const restart = (this.patternRebuilds + 1) % PATTERN_RESTART === 0;
      this.hessian = this.buildMatrix(restart ? null : this.hessian.pattern);
      this.patternRebuilds++;
    }
    const H = this.hessian;
    H.zero();
    H.addDiagonal(this.model.mass, 1);
    for (const term of this.nonlinearTerms) term.addHessian(x, this.weight, H, projectPsd && !(exactNearMinimum && term.exactNearMinimum), filter);
    for (const q of this.frozen) H.addScaled(q.K, q.scale);
    H.applyDirichlet(this.model.constrained);
    return H;
  }

  /**
   * Largest step fraction along dx that every term accepts (inversion, later collisions). Each term is told what
   * the ones before it allow: the cheap element filters come first (model order), so contact, last, sweeps only
   * that much of the step (an explicit start candidate on a deformed body may invert a tet at 1e-4 of its step).
   * A step shorter than `atLeast` comes back as 0, and the terms after the one that cut it are not asked.
   */
  maxStep(x: Float64Array, dx: Float64Array, atLeast = 0): number {
    let t = 1;
    for (const term of this.allTerms) {
      if (!term.maxStep) continue;
      t = Math.min(t, term.maxStep(x, dx, t));
      if (t < atLeast) return 0; // the caller has no use for less, and contact's sweep costs a broad phase
    }
    return t;
  }

  /** After maxStep returned 0: the terms' explanations of what blocks the step, or undefined. */
  explainBlockedStep(x: Float64Array): string | undefined {
    const reasons = this.allTerms.map((term) => term.explainBlockedStep?.(x)).filter((r) => r !== undefined);
    return reasons.length > 0 ? reasons.join('; ') : undefined;
  }
}

function frozenValue(q: FrozenQuadratic, x: Float64Array, r: Float64Array): number {
  for (let d = 0; d < x.length; d++) r[d] = x[d] - q.center[d];
  const Kr = frozenProduct(q, r);
  let e = 0;
  for (let d = 0; d < x.length; d++) e += r[d] * Kr[d];
  return 0.5 * e;
}

function frozenAddGradient(q: FrozenQuadratic, x: Float64Array, g: Float64Array, r: Float64Array): void {
  for (let d = 0; d < x.length; d++) r[d] = x[d] - q.center[d];
  const Kr = frozenProduct(q, r);
  for (let d = 0; d < x.length; d++) g[d] += q.scale * Kr[d];
}

const productBuffers = new WeakMap<FrozenQuadratic, Float64Array>();

function frozenProduct(q: FrozenQuadratic, r: Float64Array): Float64Array {
  let out = productBuffers.get(q);
  if (!out || out.length !== r.length) {
    out = new Float64Array(r.length);
    productBuffers.set(q, out);
  }
  q.K.multiply(r, out);
  return out;
}
