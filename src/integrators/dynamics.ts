import type { LinearSolver } from '../math/linear-solver.js';
import type { HessianProjection } from '../energies/eigenvalue-filter.js';
import { AdaptiveStiffness } from '../contact/adaptive-stiffness.js';
import { FrictionPotential } from '../contact/friction-potential.js';
import { frictionVelocityFor } from '../contact/friction.js';
import { MappedFriction } from '../contact/mapped-term.js';
import { isIdentityMap } from '../model/vertex-map.js';
import { applyConstraints, vertexMapOf, type Model } from '../model/model.js';
import { IncrementalPotential, type FrozenQuadratic } from '../solver/incremental-potential.js';
import { RigidPredictor } from './rigid-predictor.js';
import { NewtonSolver, type NewtonIteration, type NewtonResult } from '../solver/newton.js';

/**
 * A start candidate that the line-search filter cuts to less than this fraction of its step is not tried: it would
 * start Newton where x_n does, to 1 % of the predictor's displacement. The inversion filter cuts the tumbling
 * bunny's predictor and explicit candidates to 1e-4 - 1e-3 (a few light nodes squeezed by their own velocity), and
 * contact's query for each, a broad phase over the surfaces however short the step, cost two broad phases a step.
 */
const SHORTEST_START_STEP = 0.01;

/** Newton's start candidates (Dynamics.startFromPredictor), tried in this order; without bodies, the first two. */
const START_CANDIDATES = ['predictor', 'explicit', 'turned', 'screw'] as const;
const LINEAR_START_CANDIDATES = START_CANDIDATES.slice(0, 2);

/** Newton settings shared by every implicit integrator of a run. */
export interface SolveSettings {
  /** |dx|_inf <= tolerance * h (seed 000 uses 0.01). */
  tolerance: number;
  maxIterations: number;
  projectPsd: boolean;
  /** What projectPsd does with the elements' negative eigenvalues; default 'clamp'. */
  hessianProjection?: HessianProjection;
  linearSolver: LinearSolver;
  /** Semi-implicit Rayleigh damping coefficient mu (seconds): damping force -mu K(x_n) v. 0 disables it. */
  rayleigh: number;
  /** Called after every Newton iteration (NewtonOptions.onIteration): a trace of the solves, read only. */
  onNewtonIteration?: (info: NewtonIteration, x: Float64Array) => void;
}

/** Counters an integrator step fills in. */
export interface SolveCounters {
  newtonIterations: number;
  linearIterations: number;
  /** Newton solves that ended without meeting the tolerance: at the iteration limit, or a line search that found no decrease. */
  unconverged: number;
}

/**
 * The power (W) of the dissipative forces at one velocity (friction, Rayleigh damping; both >= 0), or the energy (J)
 * they remove over a step.
 */
export interface Dissipation {
  friction: number;
  damping: number;
}

/** sum_i weights[i] * parts[i]: a step's loss from the powers of its force evaluations and their time weights. */
export function weighDissipation(parts: readonly Dissipation[], weights: readonly number[]): Dissipation {
  let friction = 0;
  let damping = 0;
  for (let i = 0; i < parts.length; i++) {
    friction += weights[i] * parts[i].friction;
    damping += weights[i] * parts[i].damping;
  }
  return { friction, damping };
}

export const noDissipation: Readonly<Dissipation> = Object.freeze({ friction: 0, damping: 0 });

/**
 * One implicit stage: x = argmin 1/2 |x - xTilde|_M^2 + c (P(x) + D(x)) (+ the frozen damping), where the stage's
 * velocity is v(x) = (x - xHat) / beta. Friction and damping are frozen at the step start xn (contacts, normal
 * forces lambda_n, tangent bases, K(x_n)) and act at v(x): the friction force is mu lambda_n f1(|v_t|) against the
 * tangential v, the damping force -mu K(x_n) v. c = beta tau, tau being the weight of the stage's forces in its
 * velocity, v = vTilde + tau M^-1 f.
 */
export interface Stage {
  xTilde: Float64Array;
  c: number;
  xHat: Float64Array;
  beta: number;
  xn: Float64Array;
  /** The step h: Newton stops at |dx|_inf <= tolerance * h. */
  h: number;
  /**
   * The integrator's velocity is a difference of positions only (BDF2): Newton stops by seed 000's step rule alone,
   * without the velocity-residual test that integrators reading the velocity from grad P(x*) need (NewtonOptions).
   */
  stepRuleOnly?: boolean;
}

/**
 * The mechanics every integrator shares: forces, energies, constraints and the one minimisation
 * argmin 1/2 |x - xTilde|_M^2 + c P(x). Integrators are small formulas around these calls.
 */
export class Dynamics {
  readonly ip: IncrementalPotential;
  readonly newton = new NewtonSolver();
  readonly n: number;
  private readonly damping: FrozenQuadratic | null;
  /** Lagged friction, present when the model's contact has a positive friction coefficient somewhere. */
  readonly friction: FrictionPotential | MappedFriction | null;
  /** IPC's adaptive barrier stiffness, when the scene asks for it. */
  readonly adaptiveStiffness: AdaptiveStiffness | null;
  private readonly afterIteration: ((x: Float64Array) => boolean) | undefined;
  private readonly gradBuffer: Float64Array;
  private readonly startBuffer: Float64Array;
  private readonly turnedBuffer: Float64Array;
  private readonly rigid: RigidPredictor;
  private readonly forceBuffer: Float64Array;
  private readonly productBuffer: Float64Array;
  private readonly stageBuffer: Float64Array;
  /** The displacements of the start candidates tried by the running startFromPredictor (allocated as needed). */
  private readonly candidateSteps: Float64Array[] = [];

  constructor(
    readonly model: Model,
    readonly settings: SolveSettings,
  ) {
    const contact = model.contact;
    const map = vertexMapOf(model);
    const friction = contact?.hasFriction
      ? new FrictionPotential(contact.mesh, contact.barrier, frictionVelocityFor(contact.frictionVelocity, settings.tolerance))
      : null;
    // Friction acts on vertices: through the vertex map when it is not the identity (affine bodies).
    this.friction = friction && !isIdentityMap(map) ? new MappedFriction(friction, map) : friction;
    this.ip = new IncrementalPotential(model, this.friction ? [this.friction] : []);
    this.adaptiveStiffness = contact?.adaptiveKappa ? new AdaptiveStiffness(contact.barrier, model.mass, model.rest) : null;
    const adaptive = this.adaptiveStiffness;
    this.afterIteration = adaptive ? (x) => adaptive.afterIteration(x) : undefined;
    this.n = 3 * model.nNodes;
    this.gradBuffer = new Float64Array(this.n);
    this.startBuffer = new Float64Array(this.n);
    this.turnedBuffer = new Float64Array(this.n);
    this.rigid = new RigidPredictor(model);
    this.forceBuffer = new Float64Array(this.n);
    this.productBuffer = new Float64Array(this.n);
    this.stageBuffer = new Float64Array(this.n);
    this.damping =
      settings.rayleigh > 0 ? { K: this.ip.newMatrix(), center: new Float64Array(this.n), scale: 0 } : null;
  }

  /** P(x), the total potential (Infinity if infeasible). */
  potential(x: Float64Array): number {
    let p = 0;
    for (const term of this.model.terms) p += term.energy(x);
    return p;
  }

  /** grad P(x) into out (all DOFs, constrained included). */
  gradient(x: Float64Array, out: Float64Array): void {
    out.fill(0);
    for (const term of this.model.terms) term.addGradient(x, 1, out);
  }

  /**
   * a = M^-1 (f(x) + dissipative forces) on free DOFs, 0 on constrained ones, with f = -grad P. When v is given, the
   * dissipative forces at (x, v) are included: the Rayleigh damping -mu K(x) v and the friction of the contacts at x
   * (mu lambda(x) f1(|v_t|) against the tangential v), the explicit force evaluations of a step (a DIRK's first
   * stage, Newmark's a_0); returns their power at v. Without v: gravity, elasticity, contact only.
   */
  acceleration(x: Float64Array, out: Float64Array, v?: Float64Array): Dissipation {
    this.gradient(x, out);
    const { mass, constrained } = this.model;
    let power = noDissipation;
    if (v && (this.damping || this.friction)) {
      // Frozen at x with xHat = x and beta = 1: the stage velocity at x + v is v.
      const at = this.stageBuffer;
      for (let d = 0; d < this.n; d++) at[d] = x[d] + v[d];
      this.freeze(x, x, 1, 1);
      if (this.damping) {
        this.damping.K.multiply(v, this.productBuffer);
        for (let d = 0; d < this.n; d++) out[d] += this.settings.rayleigh * this.productBuffer[d];
      }
      this.friction?.addGradient(at, 1, out);
      power = this.stagePower(at);
      this.unfreeze();
    }
    for (let d = 0; d < this.n; d++) out[d] = constrained[d] ? 0 : -out[d] / mass[d];
    return power;
  }

  kinetic(v: Float64Array): number {
    const m = this.model.mass;
    let k = 0;
    for (let d = 0; d < this.n; d++) k += m[d] * v[d] * v[d];
    return 0.5 * k;
  }

  hamiltonian(x: Float64Array, v: Float64Array): number {
    return this.kinetic(v) + this.potential(x);
  }

  /** Constrained DOFs of x set to their prescribed position at time t. */
  constrain(t: number, x: Float64Array): void {
    applyConstraints(this.model, t, x);
  }

  /**
   * Solves one implicit stage (see Stage) and returns the power of its friction and damping at the stage velocity,
   * the only way integrators minimise: freezing the dissipation, the solve, its measure and the clean-up happen
   * here, in this order, for every stage. x holds the start point (its constrained DOFs at their targets) and
   * receives the solution.
   */
  solveStage(stage: Stage, x: Float64Array, counters: SolveCounters): Dissipation {
    this.freeze(stage.xn, stage.xHat, stage.beta, stage.c);
    try {
      this.minimize(stage.xTilde, stage.c, x, stage.h, !stage.stepRuleOnly, counters);
      return this.stagePower(x);
    } finally {
      this.unfreeze();
    }
  }

  /**
   * Freezes the friction contacts and the damping stiffness at xn for the velocity v(x) = (x - xHat) / beta. For the
   * damping (D = mu K(x_n), K the PSD-projected elastic Hessian) the term added to the objective is
   * c (mu / (2 beta)) (x - xHat)^T K (x - xHat), whose gradient is c mu K v(x): the damping force at the stage
   * velocity (seed 000, Eq. 17). Friction scales its smoothing the same way (friction-potential.ts).
   */
  private freeze(xn: Float64Array, xHat: Float64Array, beta: number, c: number): void {
    this.friction?.lag(xn, xHat, beta);
    this.frozenBeta = beta;
    const q = this.damping;
    if (!q) return;
    this.assembleDampingStiffness(xn, q);
    q.center.set(xHat);
    q.scale = (c * this.settings.rayleigh) / beta;
    if (!this.ip.frozen.includes(q)) this.ip.frozen.push(q);
  }

  private frozenBeta = 1;

  /** Stops the damping and friction terms from applying to further minimisations. */
  private unfreeze(): void {
    this.friction?.clear();
    const q = this.damping;
    if (!q) return;
    const i = this.ip.frozen.indexOf(q);
    if (i >= 0) this.ip.frozen.splice(i, 1);
  }

  /**
   * K = PSD-projected Hessian of the elastic terms (springs included; contact and gravity excluded: damping acts on
   * the material's deformation, not on the barrier), on the current Hessian pattern.
   */
  private assembleDampingStiffness(x: Float64Array, q: FrozenQuadratic): void {
    if (q.K.pattern !== this.ip.hessian.pattern) q.K = this.ip.newMatrix();
    q.K.zero();
    for (const term of this.model.terms) if (!term.isLinear && term.name !== 'contact') term.addHessian(x, 1, q.K, true);
  }

  /**
   * Power of the frozen dissipation at x, where the velocity is v = (x - xHat) / beta: friction mu lambda f1(|v_t|)
   * |v_t| (its dissipation over the displacement beta v, divided by beta) and damping v^T (mu K) v.
   */
  private stagePower(x: Float64Array): Dissipation {
    const beta = this.frozenBeta;
    const friction = this.friction ? this.friction.dissipation(x) / beta : 0;
    const q = this.damping;
    if (!q) return { friction, damping: 0 };
    const v = this.gradBuffer;
    for (let d = 0; d < this.n; d++) v[d] = this.model.constrained[d] ? 0 : (x[d] - q.center[d]) / beta;
    const Kv = this.productBuffer;
    q.K.multiply(v, Kv);
    let vKv = 0;
    for (let d = 0; d < this.n; d++) vKv += v[d] * Kv[d];
    return { friction, damping: this.settings.rayleigh * vKv };
  }

  /**
   * x = argmin 1/2 |x - xTilde|_M^2 + c P(x) (+ what is frozen), started from x (updated in place), whose
   * constrained DOFs must already hold their target values. `stepH` scales the tolerance: |dx|_inf <= tol * stepH.
   */
  private minimize(xTilde: Float64Array, c: number, x: Float64Array, stepH: number, residualTest: boolean, counters: SolveCounters): NewtonResult {
    this.ip.predictor.set(xTilde);
    this.ip.weight = c;
    const startEnergy = this.startFromPredictor(x, this.settings.tolerance * stepH);
    // The adaptive stiffness may change kappa at the start, and with it the objective.
    const adaptive = this.adaptiveStiffness;
    adaptive?.beginSolve(this.ip, x);
    const s = this.settings;
    let result: NewtonResult;
    try {
      result = this.newton.minimize(this.ip, x, {
        tolerance: s.tolerance,
        residualTest,
        h: stepH,
        maxIterations: s.maxIterations,
        projectPsd: s.projectPsd,
        hessianProjection: s.hessianProjection,
        linearSolver: s.linearSolver,
        startEnergy: adaptive ? undefined : startEnergy,
        afterIteration: this.afterIteration,
        onIteration: s.onNewtonIteration,
      });
    } catch (err) {
      // A failed minimisation's iterations were made too: count them before the step is abandoned.
      counters.newtonIterations += this.newton.progress.iterations;
      counters.linearIterations += this.newton.progress.linearIterations;
      throw err;
    }
    counters.newtonIterations += result.iterations;
    counters.linearIterations += result.linearIterations;
    if (!result.converged) counters.unconverged++;
    return result;
  }

  /**
   * Moves the start point x toward the predictor xTilde on the free DOFs, as far as the line-search filter allows,
   * when that lowers the objective. For smooth motion xTilde is far closer to the answer than x_n, which saves Newton
   * iterations; behind contact or inversion limits the filter keeps x feasible. Four candidates, the one of least
   * objective wins (each costs an energy evaluation and a filter query, no Newton iteration):
   * - xTilde itself;
   * - xTilde moved by one explicit step of the forces at the start, c M^-1 f (exact for free flight under gravity,
   *   which then converges in one Newton iteration);
   * - each body turned rigidly by the rotation in its displacement xTilde - x (RigidPredictor), about its centre of
   *   mass or about its screw axis (a body on a hinge): xTilde stretches a spinning body (by 11.8 % at 0.5 rad per
   *   step, the rotating cubes), which Newton must first undo; these starts leave the body's shape as it is.
   * A candidate within Newton's tolerance of one already tried (|dx - dx'|_inf <= `within`, i.e. tol h) is not
   * tried: Newton's answer from either is the same to its tolerance, and a body at rest (the balls between and after
   * their bounces, where all four lie within tol h of each other) then costs one filter query and one energy
   * instead of four. The predictor itself is always tried, even that close to x_n, so Newton never starts
   * farther from x~ than it did before candidates were skipped. A candidate the filter cuts to under
   * SHORTEST_START_STEP of its step is dropped as soon as a term cuts it, before contact sweeps it.
   * Returns the objective at the chosen start (Newton's first energy).
   */
  private startFromPredictor(x: Float64Array, within: number): number {
    const { constrained, mass } = this.model;
    const start = this.startBuffer;
    start.set(x);
    const force = this.forceBuffer;
    this.gradient(start, force);
    const xt = this.ip.predictor;
    const c = this.ip.weight;
    const trial = this.productBuffer;
    const rigid = this.rigid;
    const turned = this.turnedBuffer;
    let best = this.ip.value(start);
    const candidates = rigid.applies ? START_CANDIDATES : LINEAR_START_CANDIDATES;
    const steps = this.candidateSteps;
    let tried = 0;
    for (const kind of candidates) {
      // Built in the next free slot, where it stays only when it is tried.
      steps[tried] ??= new Float64Array(this.n);
      const dx = steps[tried];
      if (kind === 'predictor' || kind === 'explicit') {
        const withForce = kind === 'explicit';
        for (let d = 0; d < this.n; d++) dx[d] = constrained[d] ? 0 : xt[d] - start[d] - (withForce ? (c * force[d]) / mass[d] : 0);
      } else {
        for (let d = 0; d < this.n; d++) dx[d] = xt[d] - start[d];
        rigid.predict(start, dx, turned, kind === 'screw');
        for (let d = 0; d < this.n; d++) dx[d] = constrained[d] ? 0 : turned[d] - start[d];
      }
      if (within > 0 && nearAny(dx, steps, tried, within)) continue;
      tried++;
    }
    // Each filter query, then the energy at the point it allows: contact builds its candidate sets along the step
    // in the query where they do not cover it, and then they hold the point (querying every candidate first would
    // leave the sets built for the last one).
    for (let k = 0; k < tried; k++) {
      const t = this.ip.maxStep(start, steps[k], SHORTEST_START_STEP);
      if (!(t > 0)) continue;
      for (let d = 0; d < this.n; d++) trial[d] = start[d] + t * steps[k][d];
      const e = this.ip.value(trial);
      if (e < best) {
        best = e;
        x.set(trial);
      }
    }
    return best;
  }

}

/** Whether |dx - tried[i]|_inf <= within for some i < count (NaN is near nothing). */
function nearAny(dx: Float64Array, tried: readonly Float64Array[], count: number, within: number): boolean {
  for (let i = 0; i < count; i++) {
    const other = tried[i];
    let d = 0;
    while (d < dx.length && Math.abs(dx[d] - other[d]) <= within) d++;
    if (d === dx.length) return true;
  }
  return false;
}
