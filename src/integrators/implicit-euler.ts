import { weighDissipation, type Dissipation, type Dynamics, type SolveCounters } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type IntegratorState, type StepReport } from './integrator.js';

/**
 * One implicit Euler position solve: x* = argmin 1/2 |x - (x_n + h v_n)|_M^2 + h^2 P(x) (+ friction and damping at
 * v = (x - x_n)/h). Writes x* into xOut, starting Newton from `guess` (x_n when omitted: feasible by induction).
 * Returns the energy friction and damping removed: their force acts at v over the whole step, so h times its power.
 * Shared by implicit Euler, BDF2's first step, A-1/A-search and blending.
 */
export function solveImplicitEuler(
  dyn: Dynamics,
  state: IntegratorState,
  h: number,
  counters: SolveCounters,
  xOut: Float64Array,
  xTilde: Float64Array,
  guess?: Float64Array,
): Dissipation {
  const { x, v } = state;
  for (let d = 0; d < x.length; d++) xTilde[d] = x[d] + h * v[d];
  xOut.set(guess ?? x);
  dyn.constrain(state.t + h, xOut);
  const power = dyn.solveStage({ xTilde, c: h * h, xHat: x, beta: h, xn: x, h }, xOut, counters);
  return weighDissipation([power], [h]);
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
      return { alpha: NaN, ...lossReport(loss) };
    },
  };
}
