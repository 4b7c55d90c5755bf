import { noDissipation, weighDissipation, type Dissipation } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type StepReport } from './integrator.js';

/**
 * Implicit Newmark(beta, gamma) in minimisation form (beta > 0):
 *   xTilde = x_n + h v_n + h^2 (1/2 - beta) a_n,  c = beta h^2,
 *   a_{n+1} = (x_{n+1} - xTilde) / (beta h^2),  v_{n+1} = v_n + h ((1 - gamma) a_n + gamma a_{n+1}).
 * Trapezoidal is Newmark(1/4, 1/2). Friction and damping act at v_{n+1}, which in terms of x is
 * v = (x - xHat) gamma / (beta h), xHat = xTilde - (beta h / gamma) (v_n + h (1 - gamma) a_n). a_n carries the
 * previous step's friction and damping (at a start, they are evaluated at (x_n, v_n)); the energy removed is their
 * power weighted as the velocity update weighs the forces, h ((1 - gamma) p_n + gamma p_{n+1}).
 */
export function createNewmark(ctx: IntegratorContext, beta: number, gamma: number, name = 'newmark'): Integrator {
  if (!(beta > 0 && beta <= 0.5)) throw new Error(`${name}: beta must be in (0, 0.5] (got ${beta})`);
  if (!(gamma >= 0 && gamma <= 1)) throw new Error(`${name}: gamma must be in [0, 1] (got ${gamma})`);
  const { dyn } = ctx;
  if (gamma === 0 && (dyn.friction || dyn.settings.rayleigh > 0)) {
    throw new Error(`${name}: gamma = 0 gives the new forces no weight in v, so friction and damping cannot act; use gamma > 0`);
  }
  const n = dyn.n;
  const a = new Float64Array(n);
  const xNew = new Float64Array(n);
  const xTilde = new Float64Array(n);
  const xHat = new Float64Array(n);
  let lastT = NaN;
  let lastPower: Dissipation = noDissipation;
  return {
    name,
    step(state, h, counters): StepReport {
      const { x, v } = state;
      if (state.t !== lastT) lastPower = dyn.acceleration(x, a, v); // a_0 (or after a restart), friction and damping included
      const c = beta * h * h;
      const velocityScale = (beta * h) / gamma;
      for (let d = 0; d < n; d++) {
        xTilde[d] = x[d] + h * v[d] + h * h * (0.5 - beta) * a[d];
        xHat[d] = xTilde[d] - velocityScale * (v[d] + h * (1 - gamma) * a[d]);
      }
      xNew.set(x);
      dyn.constrain(state.t + h, xNew);
      const power = dyn.solveStage({ xTilde, c, xHat, beta: velocityScale, xn: x, h }, xNew, counters);
      const loss = weighDissipation([lastPower, power], [h * (1 - gamma), h * gamma]);
      lastPower = power;
      const constrained = dyn.model.constrained;
      for (let d = 0; d < n; d++) {
        if (constrained[d]) {
          v[d] = (xNew[d] - x[d]) / h;
          a[d] = 0;
          continue;
        }
        const aNew = (xNew[d] - xTilde[d]) / c;
        v[d] += h * ((1 - gamma) * a[d] + gamma * aNew);
        a[d] = aNew;
      }
      x.set(xNew);
      state.t += h;
      lastT = state.t;
      return { alpha: NaN, ...lossReport(loss) };
    },
  };
}
