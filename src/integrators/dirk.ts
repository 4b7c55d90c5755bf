import { weighDissipation } from './dynamics.js';
import { lossReport, type Integrator, type IntegratorContext, type StepReport } from './integrator.js';

/**
 * Two-stage diagonally implicit Runge-Kutta methods of seed 002 in minimisation form. Every implicit stage has the
 * shape v = vTilde + a h M^-1 f(q), q = qHat + a h v, so it is the minimisation
 *   q = argmin 1/2 |q - (qHat + a h vTilde)|_M^2 + (a h)^2 P(q),  v = (q - qHat) / (a h)
 * (seed 002, Ascher et al., "Simulating deformable objects for computer animation: a numerical
 * perspective": its stage equations rewritten as minimisations). Each stage gets its own Newton solve and line-search filter.
 *
 * Stage coefficients, with u_s the first stage's result:
 *   stage 1: a = a1, qHat = q0 + a1 h v0, vTilde = v0 + a1 h M^-1 f(q0, v0)
 *   stage 2: a = a2, qHat = q0 + w (q_s - q0), vTilde = v0 + w (v_s - v0)
 * SDIRK2 (gamma = 2 - sqrt 2, beta = sqrt 2 / 4): a1 = a2 = gamma/2, w = 2 beta / gamma.
 * TR-BDF2: a1 = 1/4 (trapezoidal to h/2), a2 = 1/3, w = 4/3 (BDF2 over the two half steps).
 *
 * The first stage is the trapezoidal rule over c1 h: its explicit half evaluates every force at (q0, v0), friction
 * and damping included, or they would lose that share of their impulse. Written as a Runge-Kutta method on (q, v),
 * the forces are evaluated at v0, v_s and v_{n+1} with weights b = (w a1, w a1, a2) (summing to 1); friction and
 * damping (frozen at q0 in every stage) remove h sum b_i p_i, p_i their power at each of those velocities.
 */
interface DirkCoefficients {
  a1: number;
  a2: number;
  w: number;
  /** Time of the first stage as a fraction of h (constrained DOFs are placed there). */
  c1: number;
}

const GAMMA = 2 - Math.SQRT2;
const SDIRK2: DirkCoefficients = { a1: GAMMA / 2, a2: GAMMA / 2, w: (2 * (Math.SQRT2 / 4)) / GAMMA, c1: GAMMA };
const TR_BDF2: DirkCoefficients = { a1: 0.25, a2: 1 / 3, w: 4 / 3, c1: 0.5 };

function createDirk(ctx: IntegratorContext, name: string, k: DirkCoefficients): Integrator {
  const { dyn } = ctx;
  const n = dyn.n;
  const acc = new Float64Array(n);
  const qHat = new Float64Array(n);
  const xTilde = new Float64Array(n);
  const qs = new Float64Array(n);
  const vs = new Float64Array(n);
  const q1 = new Float64Array(n);
  const b1 = k.w * k.a1;
  return {
    name,
    step(state, h, counters): StepReport {
      const { x, v, t } = state;
      const p0 = dyn.acceleration(x, acc, v);
      // Stage 1.
      let ah = k.a1 * h;
      for (let d = 0; d < n; d++) {
        qHat[d] = x[d] + ah * v[d];
        xTilde[d] = qHat[d] + ah * (v[d] + ah * acc[d]);
      }
      qs.set(x);
      dyn.constrain(t + k.c1 * h, qs);
      const p1 = dyn.solveStage({ xTilde, c: ah * ah, xHat: qHat, beta: ah, xn: x, h }, qs, counters);
      for (let d = 0; d < n; d++) vs[d] = (qs[d] - qHat[d]) / ah;
      // Stage 2.
      ah = k.a2 * h;
      for (let d = 0; d < n; d++) {
        qHat[d] = x[d] + k.w * (qs[d] - x[d]);
        const vTilde = v[d] + k.w * (vs[d] - v[d]);
        xTilde[d] = qHat[d] + ah * vTilde;
      }
      q1.set(qs);
      dyn.constrain(t + h, q1);
      const p2 = dyn.solveStage({ xTilde, c: ah * ah, xHat: qHat, beta: ah, xn: x, h }, q1, counters);
      const constrained = dyn.model.constrained;
      for (let d = 0; d < n; d++) v[d] = constrained[d] ? (q1[d] - x[d]) / h : (q1[d] - qHat[d]) / ah;
      x.set(q1);
      state.t += h;
      return { alpha: NaN, ...lossReport(weighDissipation([p0, p1, p2], [b1 * h, b1 * h, k.a2 * h])) };
    },
  };
}

export const createSdirk2 = (ctx: IntegratorContext): Integrator => createDirk(ctx, 'sdirk2', SDIRK2);
export const createTrBdf2 = (ctx: IntegratorContext): Integrator => createDirk(ctx, 'tr-bdf2', TR_BDF2);
