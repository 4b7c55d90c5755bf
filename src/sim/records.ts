import type { BodyKind } from '../model/model.js';

/**
 * What one simulation step reports: one row of metrics.csv. Step 0 is the initial state at t = 0.
 * Potential terms are listed by name in `potentials` (elastic, gravity, spring, ...), one column each.
 */
export interface StepRecord {
  step: number;
  t: number;
  kinetic: number;
  potential: number;
  total: number;
  /** Energy target of the schedule (A-search aims at it; other integrators report it for reference). */
  target: number;
  /** A-search / A-1 / blending: the alpha used this step; NaN where the integrator has none. */
  alpha: number;
  newtonIterations: number;
  linearIterations: number;
  wallMs: number;
  /** Linear momentum. */
  momentum: [number, number, number];
  /** Angular momentum about the origin. */
  angularMomentum: [number, number, number];
  /** Per-term potential energies, keyed by term name, in a fixed order across steps. */
  potentials: Map<string, number>;
  /** Energy removed by damping/friction this step (seed 000 Algorithm 1), 0 without. */
  dissipated: number;
  /** Tets with non-positive volume at this step's positions (an invariant: 0 for inversion-free runs). */
  inverted: number;
  /** The work the friction force did over this step (J; seed 000 Algorithm 1 subtracts it from the target); part of `dissipated`. */
  frictionLoss: number;
  /** Smallest contact distance at this step's positions (m): exact for planes, over pairs within reach of the active set otherwise; NaN without contact or with nothing in reach. */
  minDistance: number;
  /** Contact pairs closer than dhat (the barrier's active set). */
  activeContacts: number;
  /** Set when the step's positions are not guaranteed valid (implicit midpoint's x = 2z - x_n inverted, say). */
  warning?: string;
  /** Per-body energies and momenta (the rows of bodies.csv): on step 0 and output-frame steps only. */
  bodies?: BodyRecord[];
}

/**
 * One body's energies and momenta at one step: one row of bodies.csv. Over all bodies kinetic, gravity and the
 * momenta sum to the model's (obstacle nodes have no mass) and elastic to its potential less gravity and contact.
 */
export interface BodyRecord {
  /** Index in the model's bodies (scene order, repeats expanded). */
  body: number;
  name: string;
  kind: BodyKind;
  kinetic: number;
  /** Internal energy: elasticity of tets, segments, springs; membrane + bending of a shell; an affine body's orthogonality potential. */
  elastic: number;
  gravity: number;
  momentum: [number, number, number];
  /** About the origin. */
  angularMomentum: [number, number, number];
}

/** What a whole run reports at the end (summary.json). */
export interface RunSummary {
  scene: string;
  integrator: string;
  h: number;
  steps: number;
  duration: number;
  wallSeconds: number;
  /** CPU seconds of the process during the run (user + system; above wallSeconds when helper threads ran, well below it on a loaded machine); null where unknown. */
  cpuSeconds: number | null;
  newtonIterations: number;
  linearIterations: number;
  /** Steps accepted although a Newton solve hit its iteration limit (so not converged to the tolerance); 0 in a clean run. */
  newtonLimitSteps: number;
  /** The first of those steps (up to NEWTON_LIMIT_STEPS_LISTED of them), in order. */
  newtonLimitFirstSteps: number[];
  initialEnergy: number;
  finalEnergy: number;
  minEnergy: number;
  maxEnergy: number;
  /** |L(T)| / |L(0)| where the initial angular momentum is non-zero, else null. */
  angularMomentumKept: number | null;
  /** final / initial total energy. */
  energyKept: number;
  /** Most tets inverted at once in any step (0 for an inversion-free run). */
  maxInverted: number;
  /** Smallest contact distance over the run (m), null without contact. */
  minDistance: number | null;
  /** Most contact pairs active at once. */
  maxActiveContacts: number;
  /** Set when the run stopped early: 'step N (t = ...): reason' (blow-up, failed solve), or 'interrupted' (INTERRUPTED: stopped on request, e.g. Ctrl-C, after a complete step). */
  stopped?: string;
  /** Peak resident memory, MiB. */
  peakMemoryMiB: number;
  /** Time split, seconds: assembly, linear solve, line search, other; with contact also the contact parts (included in those). */
  timing: Record<string, number>;
  /** Per-body energies and momenta at the last step (the state of finalEnergy). */
  bodies: BodyRecord[];
}
