import type { Dissipation, Dynamics, SolveCounters } from './dynamics.js';
import type { EnergyTarget } from './energy-target.js';

/** The state an integrator advances in place. x and v hold all DOFs, constrained ones included. */
export interface IntegratorState {
  t: number;
  x: Float64Array;
  v: Float64Array;
}

export interface StepReport {
  /** The alpha of A-1 / A-search / blending; NaN where the integrator has none. */
  alpha: number;
  /** Energy removed by damping and friction in this step (subtracted from the energy target). */
  dissipated: number;
  /** The part of `dissipated` that friction removed: the work of the friction force over the step. */
  frictionLoss: number;
  /** Positions that are not guaranteed valid (implicit midpoint's 2z - x_n, a blend of two states ...). */
  warning?: string;
}

export interface Integrator {
  readonly name: string;
  /** Advances `state` from t to t + h. Solver statistics accumulate into `counters`. */
  step(state: IntegratorState, h: number, counters: SolveCounters): StepReport;
}

/** What integrator factories receive. */
export interface IntegratorContext {
  readonly dyn: Dynamics;
  /** The energy schedule (A-search aims at it, blending tracks it). The time loop advances it after each step. */
  readonly target: EnergyTarget;
}

/** Integrator-specific parameters as given on the CLI (--param k=v) or in a scene file. */
export type IntegratorParams = Record<string, number | boolean | string>;

export function newCounters(): SolveCounters {
  return { newtonIterations: 0, linearIterations: 0, unconverged: 0 };
}

/** A step's loss as reported: the total and its friction part. */
export function lossReport(loss: Dissipation): Pick<StepReport, 'dissipated' | 'frictionLoss'> {
  return { dissipated: loss.friction + loss.damping, frictionLoss: loss.friction };
}

/** out = a + s b over all entries. */
export function axpy(out: Float64Array, a: Float64Array, s: number, b: Float64Array): void {
  for (let d = 0; d < out.length; d++) out[d] = a[d] + s * b[d];
}
