import type { Integrator, IntegratorContext, StepReport } from './integrator.js';
import { solveImplicitEuler } from './implicit-euler.js';
import { solveImplicitMidpoint } from './implicit-midpoint.js';

export interface BlendingOptions {
  /** Relative energy tolerance epsilon of the bisection (seed 001 uses 1%). */
  tolerance: number;
  /** Bisection iteration cap. */
  maxBisections: number;
}

/**
 * Energy-tracked blending (seed 001, Dinev et al. 2018): take an implicit midpoint step; if it gains energy over
 * the tracked target, bisect a blend of positions and velocities toward a backward Euler step (warm-started from
 * the midpoint result); if it loses energy, bisect between a forward Euler step and the midpoint step. Stops when
 * |H - target| <= eps * |target|. Reported alpha: the weight of backward Euler in [0, 1], or minus the weight of
 * forward Euler in [-1, 0]. A blend of two feasible states need not be feasible: the step warns when it is not.
 */
export function createBlending(ctx: IntegratorContext, opts: BlendingOptions): Integrator {
  const { dyn, target } = ctx;
  if (dyn.settings.rayleigh > 0) throw new Error('blending: Rayleigh damping is not supported (seed 001 damps explicitly)');
  const n = dyn.n;
  const xIm = new Float64Array(n);
  const vIm = new Float64Array(n);
  const xOther = new Float64Array(n);
  const vOther = new Float64Array(n);
  const xBlend = new Float64Array(n);
  const vBlend = new Float64Array(n);
  const scratch = new Float64Array(n);
  const acc = new Float64Array(n);

  /** Energy error of (1 - s) A + s B, with A = (xA, vA), B = (xB, vB), written into xBlend/vBlend. */
  function blendError(xA: Float64Array, vA: Float64Array, xB: Float64Array, vB: Float64Array, s: number, goal: number): number {
    for (let d = 0; d < n; d++) {
      xBlend[d] = (1 - s) * xA[d] + s * xB[d];
      vBlend[d] = (1 - s) * vA[d] + s * vB[d];
    }
    const e = dyn.hamiltonian(xBlend, vBlend) - goal;
    return Number.isNaN(e) ? Infinity : e;
  }

  /** Bisects s in [0, 1] for blendError = 0, given err(0) and err(1) of opposite signs (err(0) > 0 when `fromHigh`). */
  function bisect(xA: Float64Array, vA: Float64Array, xB: Float64Array, vB: Float64Array, goal: number, tol: number, fromHigh: boolean): number {
    let lo = 0;
    let hi = 1;
    let s = 1;
    for (let i = 0; i < opts.maxBisections; i++) {
      s = 0.5 * (lo + hi);
      const e = blendError(xA, vA, xB, vB, s, goal);
      if (Math.abs(e) <= tol) return s;
      if (e > 0 === fromHigh) lo = s;
      else hi = s;
    }
    blendError(xA, vA, xB, vB, s, goal);
    return s;
  }

  return {
    name: 'blending',
    step(state, h, counters): StepReport {
      const { x, v } = state;
      const goal = target.peek(state.t, h, 0);
      const tol = opts.tolerance * Math.max(Math.abs(goal), 1e-300);
      let warning = solveImplicitMidpoint(dyn, state, h, counters, xIm, vIm, scratch);
      let eIm = dyn.hamiltonian(xIm, vIm) - goal;
      if (Number.isNaN(eIm)) eIm = Infinity;
      let alpha = 0;
      if (Math.abs(eIm) <= tol) {
        xBlend.set(xIm);
        vBlend.set(vIm);
      } else if (eIm > 0) {
        // Backward Euler from (x_n, v_n), warm-started at the midpoint result when that one is feasible.
        const guess = warning ? undefined : xIm;
        solveImplicitEuler(dyn, state, h, counters, xOther, scratch, guess);
        for (let d = 0; d < n; d++) vOther[d] = (xOther[d] - x[d]) / h;
        const eBe = dyn.hamiltonian(xOther, vOther) - goal;
        if (eBe >= 0) {
          alpha = 1; // backward Euler gains energy too: take it whole, the excess leaves in later steps
          xBlend.set(xOther);
          vBlend.set(vOther);
        } else {
          alpha = bisect(xIm, vIm, xOther, vOther, goal, tol, true);
        }
      } else {
        // Forward Euler from (x_n, v_n); blend weight s on the midpoint state.
        dyn.acceleration(x, acc);
        for (let d = 0; d < n; d++) {
          xOther[d] = x[d] + h * v[d];
          vOther[d] = v[d] + h * acc[d];
        }
        dyn.constrain(state.t + h, xOther);
        let eFe = dyn.hamiltonian(xOther, vOther) - goal;
        if (Number.isNaN(eFe)) eFe = Infinity;
        if (eFe <= 0) {
          // Both lose energy: keep whichever is closer to the target.
          if (eFe > eIm) {
            xBlend.set(xOther);
            vBlend.set(vOther);
            alpha = -1;
          } else {
            xBlend.set(xIm);
            vBlend.set(vIm);
          }
        } else {
          const s = bisect(xOther, vOther, xIm, vIm, goal, tol, true);
          alpha = -(1 - s);
        }
      }
      if (!Number.isFinite(dyn.potential(xBlend))) warning = 'blending: the blended positions are infeasible (inverted element)';
      else if (warning && alpha !== 0) warning = undefined; // the midpoint's infeasible x was blended away
      x.set(xBlend);
      v.set(vBlend);
      state.t += h;
      return { alpha, dissipated: 0, warning };
    },
  };
}
