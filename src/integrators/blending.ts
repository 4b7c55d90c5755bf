import { weighDissipation, type Dissipation } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type StepReport } from './integrator.js';
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
 *
 * Friction acts in all three steps (in the two solves, and at (x_n, v_n) in forward Euler); a blend with weight s
 * removes (1 - s) L_A + s L_B of the two steps' friction losses, and that is taken off the tracked energy (seed 001
 * removes its dissipation from the target the same way), so the bisection does not blend the friction away.
 */
export function createBlending(ctx: IntegratorContext, opts: BlendingOptions): Integrator {
  const { dyn, target } = ctx;
  const n = dyn.n;
  const xIm = new Float64Array(n);
  const vIm = new Float64Array(n);
  const xOther = new Float64Array(n);
  const vOther = new Float64Array(n);
  const xBlend = new Float64Array(n);
  const vBlend = new Float64Array(n);
  const scratch = new Float64Array(n);
  const acc = new Float64Array(n);

  let tStep = 0;
  let hStep = 0;

  /**
   * Energy error of (1 - s) A + s B against the target after the blend's loss, with A = (xA, vA, lossA) and
   * B = (xB, vB, lossB), written into xBlend/vBlend.
   */
  function blendError(xA: Float64Array, vA: Float64Array, lossA: Dissipation, xB: Float64Array, vB: Float64Array, lossB: Dissipation, s: number): number {
    for (let d = 0; d < n; d++) {
      xBlend[d] = (1 - s) * xA[d] + s * xB[d];
      vBlend[d] = (1 - s) * vA[d] + s * vB[d];
    }
    const loss = (1 - s) * (lossA.friction + lossA.damping) + s * (lossB.friction + lossB.damping);
    const e = dyn.hamiltonian(xBlend, vBlend) - target.peek(tStep, hStep, loss);
    return Number.isNaN(e) ? Infinity : e;
  }

  /** Energy error of one state after its loss, left in xBlend/vBlend. */
  const stateError = (x: Float64Array, v: Float64Array, loss: Dissipation): number => blendError(x, v, loss, x, v, loss, 0);

  /** Bisects s in [0, 1] for blendError = 0, given err(0) and err(1) of opposite signs (err(0) > 0 when `fromHigh`). */
  function bisect(xA: Float64Array, vA: Float64Array, lossA: Dissipation, xB: Float64Array, vB: Float64Array, lossB: Dissipation, tol: number, fromHigh: boolean): number {
    let lo = 0;
    let hi = 1;
    let s = 1;
    for (let i = 0; i < opts.maxBisections; i++) {
      s = 0.5 * (lo + hi);
      const e = blendError(xA, vA, lossA, xB, vB, lossB, s);
      if (Math.abs(e) <= tol) return s;
      if (e > 0 === fromHigh) lo = s;
      else hi = s;
    }
    blendError(xA, vA, lossA, xB, vB, lossB, s);
    return s;
  }

  return {
    name: 'blending',
    step(state, h, counters): StepReport {
      const { x, v } = state;
      tStep = state.t;
      hStep = h;
      const im = solveImplicitMidpoint(dyn, state, h, counters, xIm, vIm, scratch);
      let warning = im.warning;
      const tol = opts.tolerance * Math.max(Math.abs(target.peek(state.t, h, im.loss.friction + im.loss.damping)), 1e-300);
      const eIm = stateError(xIm, vIm, im.loss);
      let alpha = 0;
      let loss = im.loss;
      if (Math.abs(eIm) <= tol) {
        // xBlend, vBlend hold the midpoint step.
      } else if (eIm > 0) {
        // Backward Euler from (x_n, v_n), warm-started at the midpoint result when that one is feasible.
        const guess = warning ? undefined : xIm;
        const lossBe = solveImplicitEuler(dyn, state, h, counters, xOther, scratch, guess);
        for (let d = 0; d < n; d++) vOther[d] = (xOther[d] - x[d]) / h;
        const eBe = stateError(xOther, vOther, lossBe);
        if (eBe >= 0) {
          alpha = 1; // backward Euler gains energy too: take it whole, the excess leaves in later steps
        } else {
          alpha = bisect(xIm, vIm, im.loss, xOther, vOther, lossBe, tol, true);
        }
        loss = weighDissipation([im.loss, lossBe], [1 - alpha, alpha]);
      } else {
        // Forward Euler from (x_n, v_n), friction at v_n included; blend weight s on the midpoint state.
        const lossFe = weighDissipation([dyn.acceleration(x, acc, v)], [h]);
        for (let d = 0; d < n; d++) {
          xOther[d] = x[d] + h * v[d];
          vOther[d] = v[d] + h * acc[d];
        }
        dyn.constrain(state.t + h, xOther);
        const eFe = stateError(xOther, vOther, lossFe);
        if (eFe <= 0) {
          // Both lose energy: keep whichever is closer to the target.
          if (eFe > eIm) {
            alpha = -1;
          } else {
            stateError(xIm, vIm, im.loss);
          }
        } else {
          alpha = -(1 - bisect(xOther, vOther, lossFe, xIm, vIm, im.loss, tol, true));
        }
        loss = weighDissipation([im.loss, lossFe], [1 + alpha, -alpha]);
      }
      if (!Number.isFinite(dyn.potential(xBlend))) warning = 'blending: the blended positions are infeasible (inverted element)';
      else if (warning && alpha !== 0) warning = undefined; // the midpoint's infeasible x was blended away
      x.set(xBlend);
      v.set(vBlend);
      state.t += h;
      return { alpha, ...lossReport(loss), warning };
    },
  };
}
