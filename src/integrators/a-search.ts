import { lossReport, type Integrator, type IntegratorContext, type StepReport } from './integrator.js';
import { solveImplicitEuler } from './implicit-euler.js';

export interface ASearchOptions {
  /** Fixed alpha (A-1: 1). When undefined, alpha is searched each step (A-search). */
  fixedAlpha?: number;
  alphaMin: number;
  alphaMax: number;
  /**
   * Sparse variant (seed 000, section 5.6): search only when the last three steps all missed the target on the same
   * side; otherwise take alpha = 1.
   */
  sparse: boolean;
}

/**
 * Solves H(alpha) = P(x*) + 1/2 |w - alpha dv|_M^2 (+ kinetic energy of the constrained DOFs) = target for alpha:
 * the quadratic qa alpha^2 + qb alpha + qc = 0. Takes the root nearer 1; without a real root, the alpha of least
 * energy (the target is below reach); with dv = 0 (free fall: no force difference), H does not depend on alpha and
 * alpha_max / alpha_min is reported as the side it would push toward. Then clips to [alphaMin, alphaMax].
 */
export function solveAlpha(qa: number, qb: number, qc: number, alphaMin: number, alphaMax: number, scale: number): number {
  let alpha: number;
  if (!(qa > 1e-14 * scale)) {
    alpha = qc < 0 ? alphaMax : alphaMin;
  } else {
    const disc = qb * qb - 4 * qa * qc;
    if (disc < 0) {
      alpha = -qb / (2 * qa);
    } else {
      const s = Math.sqrt(disc);
      const r1 = (-qb - s) / (2 * qa);
      const r2 = (-qb + s) / (2 * qa);
      alpha = Math.abs(r1 - 1) <= Math.abs(r2 - 1) ? r1 : r2;
    }
  }
  return Math.min(alphaMax, Math.max(alphaMin, alpha));
}

/**
 * A-1 and A-search (seed 000, Eq. 13 and Algorithm 1): an implicit Euler position solve, then the velocity
 *   w = (x* - x_n)/h,  dv = h M^-1 (grad P(x_n) - grad P(x*)),  v = w - alpha dv.
 * alpha = 0 is implicit Euler; alpha = 1 is linearly symplectic; A-search picks alpha so that the
 * Hamiltonian meets the energy target. Damping enters the solve but never dv.
 */
export function createASearch(ctx: IntegratorContext, opts: ASearchOptions, name: string): Integrator {
  const { dyn, target } = ctx;
  if (!(opts.alphaMin <= opts.alphaMax)) throw new Error(`${name}: alphaMin (${opts.alphaMin}) must not exceed alphaMax (${opts.alphaMax})`);
  const n = dyn.n;
  const xNew = new Float64Array(n);
  const xTilde = new Float64Array(n);
  let gOld = new Float64Array(n);
  let gNew = new Float64Array(n);
  let lastT = NaN; // grad P(x*) of the previous step is grad P(x_n) of this one, unless the state was reset
  const w = new Float64Array(n);
  const dv = new Float64Array(n);
  const mass = dyn.model.mass;
  const constrained = dyn.model.constrained;
  const misses: number[] = [];
  return {
    name,
    step(state, h, counters): StepReport {
      const { x, v } = state;
      if (state.t !== lastT) dyn.gradient(x, gOld);
      const loss = lossReport(solveImplicitEuler(dyn, state, h, counters, xNew, xTilde));
      dyn.gradient(xNew, gNew);
      let kw = 0;
      let kConstrained = 0;
      let qa = 0;
      let qb = 0;
      for (let d = 0; d < n; d++) {
        w[d] = (xNew[d] - x[d]) / h;
        if (constrained[d]) {
          dv[d] = 0;
          kConstrained += 0.5 * mass[d] * w[d] * w[d];
          continue;
        }
        dv[d] = (h * (gOld[d] - gNew[d])) / mass[d];
        kw += 0.5 * mass[d] * w[d] * w[d];
        qa += 0.5 * mass[d] * dv[d] * dv[d];
        qb -= mass[d] * w[d] * dv[d];
      }
      const p = dyn.potential(xNew);
      const goal = target.peek(state.t, h, loss.dissipated);
      const qc = kw + kConstrained + p - goal;
      let alpha: number;
      if (opts.fixedAlpha !== undefined) {
        alpha = opts.fixedAlpha;
      } else {
        const searched = solveAlpha(qa, qb, qc, opts.alphaMin, opts.alphaMax, kw + Math.abs(p) + 1e-300);
        alpha = searched;
        if (opts.sparse) {
          const last3 = misses.slice(-3);
          const sameSide = last3.length === 3 && last3.every((s) => s === last3[0] && s !== 0);
          if (!sameSide) alpha = 1;
        }
      }
      // Which side of the target the step lands on (for the sparse variant's rule).
      const hNew = qa * alpha * alpha + qb * alpha + qc;
      misses.push(Math.sign(hNew));
      if (misses.length > 3) misses.shift();
      for (let d = 0; d < n; d++) v[d] = w[d] - alpha * dv[d];
      x.set(xNew);
      state.t += h;
      lastT = state.t;
      [gOld, gNew] = [gNew, gOld];
      return { alpha, ...loss };
    },
  };
}
