import type { Integrator, IntegratorContext, StepReport } from './integrator.js';

/**
 * Implicit Newmark(beta, gamma) in minimisation form (beta > 0):
 *   xTilde = x_n + h v_n + h^2 (1/2 - beta) a_n,  c = beta h^2,
 *   a_{n+1} = (x_{n+1} - xTilde) / (beta h^2),  v_{n+1} = v_n + h ((1 - gamma) a_n + gamma a_{n+1}).
 * Trapezoidal is Newmark(1/4, 1/2). With Rayleigh damping the velocity map is v = (x - xHat) gamma / (beta h).
 */
export function createNewmark(ctx: IntegratorContext, beta: number, gamma: number, name = 'newmark'): Integrator {
  if (!(beta > 0 && beta <= 0.5)) throw new Error(`${name}: beta must be in (0, 0.5] (got ${beta})`);
  if (!(gamma >= 0 && gamma <= 1)) throw new Error(`${name}: gamma must be in [0, 1] (got ${gamma})`);
  const { dyn } = ctx;
  const n = dyn.n;
  const a = new Float64Array(n);
  const xNew = new Float64Array(n);
  const xTilde = new Float64Array(n);
  const xHat = new Float64Array(n);
  let lastT = NaN;
  return {
    name,
    step(state, h, counters): StepReport {
      const { x, v } = state;
      if (state.t !== lastT) dyn.acceleration(x, a, v); // a_0 (or after a restart) from the forces, damping included
      const c = beta * h * h;
      const velocityScale = (beta * h) / gamma;
      for (let d = 0; d < n; d++) {
        xTilde[d] = x[d] + h * v[d] + h * h * (0.5 - beta) * a[d];
        xHat[d] = xTilde[d] - velocityScale * (v[d] + h * (1 - gamma) * a[d]);
      }
      xNew.set(x);
      dyn.constrain(state.t + h, xNew);
      dyn.beginDissipation(x, xHat, velocityScale, c);
      dyn.minimize(xTilde, c, xNew, h, counters);
      const loss = dyn.dissipationLoss(xNew, h, counters);
      dyn.endDissipation();
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
      return { alpha: NaN, dissipated: loss };
    },
  };
}
