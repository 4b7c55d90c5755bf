import type { Dynamics, SolveCounters } from './dynamics.js';
import type { Integrator, IntegratorContext, IntegratorState, StepReport } from './integrator.js';

/**
 * One implicit Euler position solve: x* = argmin 1/2 |x - (x_n + h v_n)|_M^2 + h^2 P(x) (+ Rayleigh damping).
 * Writes x* into xOut, starting Newton from `guess` (x_n when omitted: feasible by induction). Returns the energy
 * the damping removed. Shared by implicit Euler, A-1/A-search and blending.
 */
export function solveImplicitEuler(
  dyn: Dynamics,
  state: IntegratorState,
  h: number,
  counters: SolveCounters,
  xOut: Float64Array,
  xTilde: Float64Array,
  guess?: Float64Array,
): number {
  const { x, v } = state;
  for (let d = 0; d < x.length; d++) xTilde[d] = x[d] + h * v[d];
  xOut.set(guess ?? x);
  dyn.constrain(state.t + h, xOut);
  dyn.beginDissipation(x, x, h, h * h);
  dyn.minimize(xTilde, h * h, xOut, h, counters);
  const loss = dyn.dissipationLoss(xOut, h, counters);
  dyn.endDissipation();
  return loss;
}

export function createImplicitEuler(ctx: IntegratorContext): Integrator {
  const { dyn } = ctx;
  const xNew = new Float64Array(dyn.n);
  const xTilde = new Float64Array(dyn.n);
  return {
    name: 'implicit-euler',
    step(state, h, counters): StepReport {
      const loss = solveImplicitEuler(dyn, state, h, counters, xNew, xTilde);
      const { x, v } = state;
      for (let d = 0; d < x.length; d++) v[d] = (xNew[d] - x[d]) / h;
      x.set(xNew);
      state.t += h;
      return { alpha: NaN, dissipated: loss };
    },
  };
}
