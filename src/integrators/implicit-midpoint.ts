import { weighDissipation, type Dissipation, type Dynamics, type SolveCounters } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type IntegratorState, type StepReport } from './integrator.js';

/** What one implicit midpoint step produced besides the state. */
export interface MidpointResult {
  /** Energy friction and damping removed: h times their power at the midpoint velocity. */
  loss: Dissipation;
  /** Set when x_{n+1} = 2z - x_n is infeasible. */
  warning?: string;
}

/**
 * Implicit midpoint solved for the midpoint z = (x_n + x_{n+1}) / 2:
 *   z = argmin 1/2 |z - (x_n + h/2 v_n)|_M^2 + h^2/4 P(z),  x_{n+1} = 2z - x_n,  v_{n+1} = 2 (x_{n+1} - x_n)/h - v_n.
 * Like every force, friction and damping are evaluated at the midpoint state: at v_mid = (z - x_n) / (h/2) =
 * (x_{n+1} - x_n) / h, the velocity of the step's displacement. So the friction force opposes the displacement it
 * works over (it never adds energy), the rule stays second order, and the energy removed is h times the power at
 * v_mid, which the midpoint rule's own energy balance gives exactly for a constant force.
 * z is feasible, x_{n+1} need not be: the step reports it instead of hiding it. Writes the new state into xOut, vOut.
 */
export function solveImplicitMidpoint(
  dyn: Dynamics,
  state: IntegratorState,
  h: number,
  counters: SolveCounters,
  xOut: Float64Array,
  vOut: Float64Array,
  zTilde: Float64Array,
): MidpointResult {
  const { x, v } = state;
  const n = x.length;
  for (let d = 0; d < n; d++) zTilde[d] = x[d] + 0.5 * h * v[d];
  // z starts at x_n; its constrained DOFs sit halfway to their positions at t + h.
  xOut.set(x);
  dyn.constrain(state.t + h, xOut);
  for (let d = 0; d < n; d++) xOut[d] = 0.5 * (x[d] + xOut[d]);
  const power = dyn.solveStage({ xTilde: zTilde, c: 0.25 * h * h, xHat: x, beta: 0.5 * h, xn: x, h }, xOut, counters);
  for (let d = 0; d < n; d++) {
    const xNew = 2 * xOut[d] - x[d];
    vOut[d] = (2 * (xNew - x[d])) / h - v[d];
    xOut[d] = xNew;
  }
  const loss = weighDissipation([power], [h]);
  const feasible = Number.isFinite(dyn.potential(xOut));
  return feasible ? { loss } : { loss, warning: 'implicit midpoint: x_{n+1} = 2z - x_n is infeasible (inverted element)' };
}

export function createImplicitMidpoint(ctx: IntegratorContext): Integrator {
  const { dyn } = ctx;
  const xNew = new Float64Array(dyn.n);
  const vNew = new Float64Array(dyn.n);
  const zTilde = new Float64Array(dyn.n);
  return {
    name: 'implicit-midpoint',
    step(state, h, counters): StepReport {
      const { loss, warning } = solveImplicitMidpoint(dyn, state, h, counters, xNew, vNew, zTilde);
      state.x.set(xNew);
      state.v.set(vNew);
      state.t += h;
      return { alpha: NaN, ...lossReport(loss), warning };
    },
  };
}
