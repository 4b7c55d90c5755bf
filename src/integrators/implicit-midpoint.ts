import type { Dynamics, SolveCounters } from './dynamics.js';
import type { Integrator, IntegratorContext, IntegratorState, StepReport } from './integrator.js';

/**
 * Implicit midpoint solved for the midpoint z = (x_n + x_{n+1}) / 2:
 *   z = argmin 1/2 |z - (x_n + h/2 v_n)|_M^2 + h^2/4 P(z),  x_{n+1} = 2z - x_n,  v_{n+1} = 2 (x_{n+1} - x_n)/h - v_n.
 * z is feasible, x_{n+1} need not be: the step reports it instead of hiding it.
 * Writes the new state into xOut, vOut; returns a warning when x_{n+1} is infeasible.
 */
export function solveImplicitMidpoint(
  dyn: Dynamics,
  state: IntegratorState,
  h: number,
  counters: SolveCounters,
  xOut: Float64Array,
  vOut: Float64Array,
  zTilde: Float64Array,
): string | undefined {
  const { x, v } = state;
  const n = x.length;
  for (let d = 0; d < n; d++) zTilde[d] = x[d] + 0.5 * h * v[d];
  // z starts at x_n; its constrained DOFs sit halfway to their positions at t + h.
  xOut.set(x);
  dyn.constrain(state.t + h, xOut);
  for (let d = 0; d < n; d++) xOut[d] = 0.5 * (x[d] + xOut[d]);
  dyn.minimize(zTilde, 0.25 * h * h, xOut, h, counters);
  for (let d = 0; d < n; d++) {
    const xNew = 2 * xOut[d] - x[d];
    vOut[d] = (2 * (xNew - x[d])) / h - v[d];
    xOut[d] = xNew;
  }
  return Number.isFinite(dyn.potential(xOut)) ? undefined : 'implicit midpoint: x_{n+1} = 2z - x_n is infeasible (inverted element)';
}

export function createImplicitMidpoint(ctx: IntegratorContext): Integrator {
  const { dyn } = ctx;
  if (dyn.settings.rayleigh > 0) throw new Error('implicit-midpoint: Rayleigh damping is not supported; use implicit-euler, bdf2, newmark, a-1 or a-search');
  const xNew = new Float64Array(dyn.n);
  const vNew = new Float64Array(dyn.n);
  const zTilde = new Float64Array(dyn.n);
  return {
    name: 'implicit-midpoint',
    step(state, h, counters): StepReport {
      const warning = solveImplicitMidpoint(dyn, state, h, counters, xNew, vNew, zTilde);
      state.x.set(xNew);
      state.v.set(vNew);
      state.t += h;
      return { alpha: NaN, dissipated: 0, warning };
    },
  };
}
