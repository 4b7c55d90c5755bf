import { noDissipation, weighDissipation, type Dissipation } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type StepReport } from './integrator.js';
import { solveImplicitEuler } from './implicit-euler.js';

/**
 * BDF2 in minimisation form, implicit Euler for the first step:
 *   xTilde = 4/3 x_n - 1/3 x_{n-1} + 8/9 h v_n - 2/9 h v_{n-1},  c = 4/9 h^2,
 *   v_{n+1} = (x_{n+1} - xHat) / (2/3 h),  xHat = 4/3 x_n - 1/3 x_{n-1}.
 * Friction and damping act at v_{n+1}. The energy they remove is their power integrated over the step by the
 * trapezoidal rule, h (p_n + p_{n+1}) / 2 (second order like BDF2, exact for a constant force), p_n being the power
 * at v_n from the previous step's solve. v_{n+1} is a difference of positions, so Newton stops by seed 000's step rule
 * alone (Stage.stepRuleOnly): a resting contact's stiff barrier would otherwise keep the gradient test failing for
 * 1-4 iterations a step after the step itself is within the tolerance.
 */
export function createBdf2(ctx: IntegratorContext): Integrator {
  const { dyn } = ctx;
  const n = dyn.n;
  const xPrev = new Float64Array(n);
  const vPrev = new Float64Array(n);
  const xNew = new Float64Array(n);
  const xHat = new Float64Array(n);
  const xTilde = new Float64Array(n);
  let started = false;
  let lastT = NaN;
  let lastPower: Dissipation = noDissipation;
  return {
    name: 'bdf2',
    step(state, h, counters): StepReport {
      const { x, v } = state;
      // A restart (new run, or a state set from outside) begins again with implicit Euler.
      if (!started || state.t !== lastT) {
        const loss = solveImplicitEuler(dyn, state, h, counters, xNew, xTilde);
        lastPower = weighDissipation([loss], [1 / h]);
        xPrev.set(x);
        vPrev.set(v);
        for (let d = 0; d < n; d++) v[d] = (xNew[d] - x[d]) / h;
        x.set(xNew);
        started = true;
        state.t += h;
        lastT = state.t;
        return { alpha: NaN, ...lossReport(loss) };
      }
      for (let d = 0; d < n; d++) {
        xHat[d] = (4 * x[d] - xPrev[d]) / 3;
        xTilde[d] = xHat[d] + (2 * h * (4 * v[d] - vPrev[d])) / 9;
      }
      xNew.set(x);
      dyn.constrain(state.t + h, xNew);
      const beta = (2 * h) / 3;
      const power = dyn.solveStage({ xTilde, c: beta * beta, xHat, beta, xn: x, h, stepRuleOnly: true }, xNew, counters);
      const loss = weighDissipation([lastPower, power], [h / 2, h / 2]);
      lastPower = power;
      xPrev.set(x);
      vPrev.set(v);
      for (let d = 0; d < n; d++) v[d] = (xNew[d] - xHat[d]) / beta;
      x.set(xNew);
      state.t += h;
      lastT = state.t;
      return { alpha: NaN, ...lossReport(loss) };
    },
  };
}
