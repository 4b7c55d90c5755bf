import type { Integrator, IntegratorContext, StepReport } from './integrator.js';

/**
 * Explicit methods, for the seeds' stability studies; no solver. Constrained DOFs follow their prescribed path and
 * carry zero acceleration.
 *   explicit Euler:   x' = x + h v,            v' = v + h a(x)
 *   symplectic Euler: v' = v + h a(x),         x' = x + h v'
 *   RK4:              the classical four-stage method on (x, v)
 */
type ExplicitKind = 'explicit-euler' | 'symplectic-euler' | 'rk4';

export function createExplicit(ctx: IntegratorContext, kind: ExplicitKind): Integrator {
  const { dyn } = ctx;
  const n = dyn.n;
  const a = new Float64Array(n);
  const xs = new Float64Array(n);
  const sumX = new Float64Array(n);
  const sumV = new Float64Array(n);
  const xEnd = new Float64Array(n);
  const v0 = new Float64Array(n);
  const xStage = new Float64Array(n);
  const vStage = new Float64Array(n);
  const kx = new Float64Array(n);
  // RK4 stage times (fractions of h) and weights b.
  const stageTime = [0, 0.5, 0.5, 1];
  const stageWeight = [1 / 6, 1 / 3, 1 / 3, 1 / 6];
  const constrained = dyn.model.constrained;

  function finish(x: Float64Array, v: Float64Array, t: number, h: number): void {
    xEnd.set(x);
    dyn.constrain(t + h, xEnd);
    for (let d = 0; d < n; d++) if (constrained[d]) v[d] = (xEnd[d] - xs[d]) / h;
    for (let d = 0; d < n; d++) if (constrained[d]) x[d] = xEnd[d];
  }

  return {
    name: kind,
    step(state, h): StepReport {
      const { x, v, t } = state;
      xs.set(x); // start positions, for the constrained DOFs' velocity
      if (kind === 'explicit-euler') {
        dyn.acceleration(x, a);
        for (let d = 0; d < n; d++) {
          x[d] += h * v[d];
          v[d] += h * a[d];
        }
      } else if (kind === 'symplectic-euler') {
        dyn.acceleration(x, a);
        for (let d = 0; d < n; d++) {
          v[d] += h * a[d];
          x[d] += h * v[d];
        }
      } else {
        // k1 at (x, v); k2, k3 at half steps; k4 at the full step. sumX/sumV gather b-weighted slopes.
        const x0 = xs;
        v0.set(v);
        sumX.fill(0);
        sumV.fill(0);
        xStage.set(x0);
        vStage.set(v0);
        for (let s = 0; s < 4; s++) {
          const weight = stageWeight[s];
          dyn.constrain(t + stageTime[s] * h, xStage);
          dyn.acceleration(xStage, a);
          for (let d = 0; d < n; d++) {
            sumX[d] += weight * vStage[d];
            sumV[d] += weight * a[d];
          }
          if (s < 3) {
            const next = stageTime[s + 1] * h;
            kx.set(vStage);
            for (let d = 0; d < n; d++) {
              xStage[d] = x0[d] + next * kx[d];
              vStage[d] = v0[d] + next * a[d];
            }
          }
        }
        for (let d = 0; d < n; d++) {
          x[d] = x0[d] + h * sumX[d];
          v[d] = v0[d] + h * sumV[d];
        }
      }
      finish(x, v, t, h);
      state.t += h;
      return { alpha: NaN, dissipated: 0, frictionLoss: 0 };
    },
  };
}
