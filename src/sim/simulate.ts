import { findIntersection } from '../contact/intersection.js';
import { energyByName } from '../energies/potential.js';
import type { HessianProjection } from '../energies/eigenvalue-filter.js';
import { Dynamics, type SolveSettings } from '../integrators/dynamics.js';
import { EnergyTarget, type EnergyTargetOptions } from '../integrators/energy-target.js';
import { newCounters, type IntegratorParams, type IntegratorState } from '../integrators/integrator.js';
import { checkParams, findIntegrator } from '../integrators/registry.js';
import { createLinearSolver, type LinearSolverName } from '../math/linear-solver.js';
import { countInvertedTets } from '../mesh/tet-mesh.js';
import { DEFAULT_THREADS, threadPoolFor, usableThreads } from '../solver/threads.js';
import type { NewtonIteration } from '../solver/newton.js';
import { bodyTurns, contactPositions, type Model } from '../model/model.js';
import { bodyRecords, nodeMomenta } from './body-records.js';
import type { RunSummary, StepRecord } from './records.js';

export interface SolverOptions {
  /** 'auto' picks the lagged sparse Cholesky while a factorization stays within AUTO_SOLVER_LIMITS, Jacobi PCG beyond. */
  linear: 'auto' | LinearSolverName;
  /** Newton stop: |dx|_inf <= tolerance * h (seed 000: 0.01). */
  tolerance: number;
  maxNewtonIterations: number;
  /** PCG relative residual tolerance. */
  cgTolerance: number;
  projectPsd: boolean;
  /**
   * What projectPsd does with the elements' negative eigenvalues: 'clamp' to 0, 'abs' (their absolute value) or
   * 'adaptive' (per Newton iteration by the last step's trust-region ratio); see eigenvalue-filter.ts.
   */
  hessianProjection: HessianProjection;
  /** Threads of the element loops (default DEFAULT_THREADS); results are the same to the bit for any count. */
  threads?: number;
}

export const defaultSolverOptions: SolverOptions = {
  linear: 'auto',
  tolerance: 0.01,
  maxNewtonIterations: 100,
  cgTolerance: 1e-4,
  projectPsd: true,
  hessianProjection: 'clamp',
  threads: DEFAULT_THREADS,
};

export interface RunOptions {
  sceneName: string;
  integrator: string;
  params: IntegratorParams;
  h: number;
  duration: number;
  /** Output frames per second (frames are every max(1, round(1 / (frameRate h))) steps). */
  frameRate: number;
  solver: SolverOptions;
  /** Semi-implicit Rayleigh damping mu (s), 0 = none. */
  rayleigh: number;
  energy: EnergyTargetOptions;
  /** Stop as unstable when |H| exceeds this multiple of max(|H_0|, kinetic_0 + |P_0|). */
  blowUpFactor: number;
  /**
   * Contact invariant check (no intersecting surface pair, every distance above zero) on the initial state and then
   * on 'frames' (output frames, default), 'steps' (every step) or 'off'. A failed check stops the run with a message
   * naming the two primitives; the initial state is refused outright.
   */
  contactChecks?: 'frames' | 'steps' | 'off';
  /** Go on from this checkpoint of the same scene, integrator and h instead of starting at t = 0. */
  resume?: RunCheckpoint;
  /** Hand the observer a checkpoint every this many steps (0 or absent: never). */
  checkpointEvery?: number;
}

/**
 * Everything a run needs to go on after step `step` as if it had not stopped: the state, the energy target, the
 * adaptive barrier stiffness, the initial energies the summary compares against, and the totals so far. Caches
 * (candidate sets, the Hessian pattern, the lagged factor) are rebuilt on resuming, so a resumed run agrees with
 * an uninterrupted one to the Newton tolerance (exactly, with a direct linear solver, up to round-off).
 */
export interface RunCheckpoint {
  version: 2;
  scene: string;
  integrator: string;
  h: number;
  step: number;
  /** The integrator's clock (state.t). */
  t: number;
  x: Float64Array;
  v: Float64Array;
  target: number;
  adaptiveStiffness: { kappa: number; hadContact: boolean } | null;
  /** The initial state's energies and angular momentum. */
  initial: { total: number; kinetic: number; potential: number; angularMomentum: [number, number, number] };
  /** Output frames written up to this step (frames 0 to frames - 1), which a resumed run expects to find. */
  frames: number;
  totals: {
    newtonIterations: number;
    linearIterations: number;
    newtonLimitSteps: number;
    newtonLimitFirstSteps: number[];
    minEnergy: number;
    maxEnergy: number;
    maxInverted: number;
    /** NaN when no distance was seen yet. */
    minDistance: number;
    maxActiveContacts: number;
    wallSeconds: number;
    cpuSeconds: number;
    timing: Record<string, number>;
  };
}

export interface RunObserver {
  /** Every step, step 0 (the initial state) included. */
  step?(record: StepRecord): void;
  /** Every output frame (frame 0 is the initial state). x and v are live: copy what you keep. */
  frame?(index: number, t: number, x: Float64Array, v: Float64Array): void;
  /** Per-frame invariant check (inverted tets ...); a thrown error stops the run with its message. */
  check?(step: number, x: Float64Array): void;
  /** Every `checkpointEvery` steps (RunOptions): a checkpoint to save; its arrays are copies. */
  checkpoint?(checkpoint: RunCheckpoint): void;
  /**
   * After every Newton iteration of every solve (a trace, for studying convergence): the step being made, what the
   * iteration did and the point it reached (live: read it, do not change it).
   */
  newtonIteration?(step: number, info: NewtonIteration, x: Float64Array): void;
}

export interface RunResult {
  summary: RunSummary;
  state: IntegratorState;
}

/** The `stopped` reason of a run ended on request (simulateSteps' next(true)), e.g. by Ctrl-C in the CLI. */
export const INTERRUPTED = 'interrupted';

/** How many step numbers RunSummary.newtonLimitFirstSteps lists. */
export const NEWTON_LIMIT_STEPS_LISTED = 10;

/** Which energies of a record are not finite (with a likely cause), for the message that refuses such a start. */
function nonFiniteParts(r: StepRecord): string {
  const parts: string[] = [];
  if (!Number.isFinite(r.kinetic)) parts.push(`kinetic ${r.kinetic} (velocities or masses too large?)`);
  for (const [name, e] of r.potentials) {
    if (!Number.isFinite(e)) parts.push(`potential '${name}' ${e} (${name === 'elastic' ? 'an inverted element, or ' : ''}coordinates or parameters too large?)`);
  }
  return parts.length > 0 ? parts.join(', ') : `total ${r.total}`;
}

/** Runs the time loop to its end: integrator steps, energy target, metrics records and frames. Pure: no I/O here. */
export function simulate(model: Model, opts: RunOptions, observer: RunObserver = {}): RunResult {
  const run = simulateSteps(model, opts, observer);
  let next = run.next();
  while (!next.done) next = run.next();
  return next.value;
}

/**
 * simulate() one step at a time, so that a caller can do other work between steps (the CLI lets its event loop
 * run, which is where Node delivers Ctrl-C). Yields the number of the step just reported (first the initial or
 * resumed step); `next(true)` ends the run there as if it had stopped, with `stopped: INTERRUPTED` (after the last
 * step it changes nothing), handing the observer a checkpoint of that step when checkpointing. The returned
 * value is simulate()'s result.
 */
export function* simulateSteps(model: Model, opts: RunOptions, observer: RunObserver = {}): Generator<number, RunResult, boolean | undefined> {
  // The element loops run on the host's worker threads (none in a browser); the terms let go of them at the end.
  const pool = threadPoolFor(usableThreads(opts.solver.threads ?? DEFAULT_THREADS));
  for (const term of model.terms) term.useThreads?.(pool);
  try {
    return yield* runSteps(model, opts, observer);
  } finally {
    for (const term of model.terms) term.useThreads?.(null);
  }
}

function* runSteps(model: Model, opts: RunOptions, observer: RunObserver): Generator<number, RunResult, boolean | undefined> {
  if (!(opts.h > 0) || !Number.isFinite(opts.h)) throw new Error(`time step must be a positive number (got ${opts.h})`);
  if (!(opts.duration >= 0)) throw new Error(`duration must be >= 0 (got ${opts.duration})`);
  const spec = findIntegrator(opts.integrator);
  checkParams(spec, opts.params);
  const resume = opts.resume;
  const checkpointEvery = opts.checkpointEvery ?? 0;
  if ((resume || checkpointEvery > 0) && !spec.resumable?.(opts.params)) {
    throw new Error(`integrator '${opts.integrator}' keeps history between steps; it cannot ${resume ? 'resume from' : 'write'} a checkpoint (implicit-euler, a-1 and a-search without sparse can)`);
  }
  if (resume) checkCheckpoint(resume, model, opts);
  const settings: SolveSettings = {
    tolerance: opts.solver.tolerance,
    maxIterations: opts.solver.maxNewtonIterations,
    projectPsd: opts.solver.projectPsd,
    hessianProjection: opts.solver.hessianProjection,
    linearSolver: createLinearSolver(opts.solver.linear, {
      tolerance: opts.solver.cgTolerance,
      turns: bodyTurns(model),
    }),
    rayleigh: opts.rayleigh,
  };
  let stepMade = 0; // the step the integrator is making, for the Newton trace
  const traceNewton = observer.newtonIteration?.bind(observer);
  if (traceNewton) settings.onNewtonIteration = (info, x) => traceNewton(stepMade, info, x);
  const dyn = new Dynamics(model, settings);
  const target = new EnergyTarget(opts.energy);
  const integrator = spec.create({ dyn, target }, opts.params);

  const state: IntegratorState = resume
    ? { t: resume.t, x: new Float64Array(resume.x), v: new Float64Array(resume.v) }
    : { t: 0, x: new Float64Array(model.x0), v: new Float64Array(model.v0) };
  if (resume && resume.adaptiveStiffness) dyn.adaptiveStiffness?.restoreState(resume.adaptiveStiffness);
  if (!resume) dyn.constrain(0, state.x);
  const steps = Math.round(opts.duration / opts.h);
  const frameEvery = frameInterval(opts);
  const potentials = new Map<string, number>();
  const mass = model.mass;
  // Linear momentum weighs velocities by first moments (0 on an affine body's matrix columns); the angular momentum
  // sum over nodes with the DOF masses is exact for affine bodies too (model/affine-body.ts).
  const linearMass = model.linearMass ?? mass;

  const record = (step: number, alpha: number, newton: number, linear: number, wallMs: number, dissipated: number, frictionLoss: number, warning?: string): StepRecord => {
    const p = energyByName(model.terms, state.x, potentials);
    const contact = model.contact ? model.contact.barrier.activeContacts(contactPositions(model, state.x), null) : { count: 0, minDistance: NaN };
    const k = dyn.kinetic(state.v);
    const { momentum, angularMomentum: angular } = nodeMomenta(mass, linearMass, state.x, state.v, 0, model.nNodes);
    return {
      step,
      t: step * opts.h,
      kinetic: k,
      potential: p,
      total: k + p,
      target: target.value,
      alpha,
      newtonIterations: newton,
      linearIterations: linear,
      wallMs,
      momentum,
      angularMomentum: angular,
      potentials: new Map(potentials),
      dissipated,
      inverted: model.bodies.reduce((n, b) => n + countInvertedTets(state.x, b.tets), 0),
      frictionLoss,
      minDistance: Number.isFinite(contact.minDistance) ? contact.minDistance : NaN,
      activeContacts: contact.count,
      warning,
    };
  };

  const contactChecks = model.contact ? (opts.contactChecks ?? 'frames') : 'off';
  const checkContact = (x: Float64Array): void => {
    const hit = findIntersection(model.contact!.mesh, contactPositions(model, x));
    if (hit) throw new Error(`contact invariant violated: ${hit.message}`);
  };
  if (model.contact) {
    const hit = findIntersection(model.contact.mesh, contactPositions(model, state.x));
    if (hit) throw new Error(`the ${resume ? 'checkpoint' : 'initial'} state intersects: ${hit.message}`);
  }
  // A resumed run starts from its checkpoint's record; the initial energies and totals come from the checkpoint.
  const startStep = resume?.step ?? 0;
  const current = record(startStep, NaN, 0, 0, 0, 0, 0);
  const initial = resume ? resume.initial : { total: current.total, kinetic: current.kinetic, potential: current.potential, angularMomentum: current.angularMomentum };
  if (resume) {
    target.restore(resume.target);
  } else {
    target.reset(current.total);
    if (!Number.isFinite(current.total)) throw new Error(`the initial state has a non-finite energy: ${nonFiniteParts(current)}`);
  }
  current.target = target.value;
  current.bodies = bodyRecords(model, state.x, state.v);
  // The state of `last` (the summary's per-body values): a failed or refused step leaves `state` past it.
  const lastX = new Float64Array(state.x);
  const lastV = new Float64Array(state.v);
  if (!resume) {
    observer.check?.(0, state.x);
    observer.step?.(current);
    observer.frame?.(0, 0, state.x, state.v);
  }

  const energyScale = Math.max(Math.abs(initial.total), initial.kinetic + Math.abs(initial.potential), 1e-12);
  const norm = (a: [number, number, number]) => Math.hypot(a[0], a[1], a[2]);
  const before = resume?.totals;
  let maxInverted = Math.max(before?.maxInverted ?? 0, current.inverted);
  let minDistance = before ? (Number.isNaN(before.minDistance) ? current.minDistance : Math.min(before.minDistance, current.minDistance)) : current.minDistance;
  let maxActive = Math.max(before?.maxActiveContacts ?? 0, current.activeContacts);
  let minEnergy = before?.minEnergy ?? current.total;
  let maxEnergy = before?.maxEnergy ?? current.total;
  let last = current;
  let totalNewton = before?.newtonIterations ?? 0;
  let totalLinear = before?.linearIterations ?? 0;
  // Steps accepted although a Newton solve hit its iteration limit (not converged to the tolerance).
  let newtonLimitSteps = before?.newtonLimitSteps ?? 0;
  const newtonLimitFirstSteps = [...(before?.newtonLimitFirstSteps ?? [])];
  let lastCheckpoint = resume?.step ?? -1;
  let stopped: string | undefined;
  const start = performance.now();
  const cpuStart = processCpuSeconds();

  /** Seconds per phase so far, earlier segments of a resumed run included. */
  const timingSoFar = (wallSeconds: number): Record<string, number> => {
    const timing: Record<string, number> = {
      assembly: dyn.newton.timing.assembly / 1000,
      linearSolve: dyn.newton.timing.linearSolve / 1000,
      lineSearch: dyn.newton.timing.lineSearch / 1000,
    };
    timing.other = Math.max(0, wallSeconds - timing.assembly - timing.linearSolve - timing.lineSearch);
    // Parts of the linear solve: symbolic analyses (each new Hessian pattern), factorizations, triangular solves.
    const ls = settings.linearSolver.timing;
    timing.symbolicAnalysis = ls.analyzeMs / 1000;
    timing.factorization = ls.factorMs / 1000;
    timing.triangularSolves = ls.solveMs / 1000;
    timing.analyses = ls.analyses;
    timing.factorizations = ls.factorizations;
    if (model.contact) {
      // Parts of the above, measured inside the contact term: active-set broad phase, CCD filters, barrier terms.
      const c = model.contact.barrier.timing;
      timing.contactProximity = c.proximity / 1000;
      timing.contactCcd = c.ccd / 1000;
      timing.contactBarrier = c.barrier / 1000;
      timing.patternRebuilds = dyn.ip.patternRebuilds;
      timing.candidateBuilds = model.contact.barrier.candidateBuilds;
    }
    for (const [k, v] of Object.entries(before?.timing ?? {})) timing[k] = (timing[k] ?? 0) + v;
    return timing;
  };
  const makeCheckpoint = (step: number): RunCheckpoint => {
    const wallSeconds = (performance.now() - start) / 1000;
    return {
      version: 2,
      scene: opts.sceneName,
      integrator: opts.integrator,
      h: opts.h,
      step,
      t: state.t,
      x: new Float64Array(state.x),
      v: new Float64Array(state.v),
      target: target.value,
      adaptiveStiffness: dyn.adaptiveStiffness?.saveState() ?? null,
      initial,
      frames: Math.floor(step / frameEvery) + 1,
      totals: {
        newtonIterations: totalNewton,
        linearIterations: totalLinear,
        newtonLimitSteps,
        newtonLimitFirstSteps: [...newtonLimitFirstSteps],
        minEnergy,
        maxEnergy,
        maxInverted,
        minDistance,
        maxActiveContacts: maxActive,
        wallSeconds: wallSeconds + (before?.wallSeconds ?? 0),
        cpuSeconds: processCpuSeconds() - cpuStart + (before?.cpuSeconds ?? 0),
        timing: timingSoFar(wallSeconds),
      },
    };
  };

  const checkpoint = (step: number): void => {
    observer.checkpoint!(makeCheckpoint(step));
    lastCheckpoint = step;
  };

  if ((yield startStep) && startStep < steps) stopped = INTERRUPTED;
  for (let step = startStep + 1; step <= steps && !stopped; step++) {
    const counters = newCounters();
    const t0 = performance.now();
    const tStart = state.t;
    let report;
    stepMade = step;
    try {
      report = integrator.step(state, opts.h, counters);
    } catch (err) {
      stopped = `step ${step} (t = ${(tStart + opts.h).toFixed(6)} s): ${(err as Error).message}`;
      // The failed step's Newton work was done: it belongs in the summary's totals.
      totalNewton += counters.newtonIterations;
      totalLinear += counters.linearIterations;
      break;
    }
    // Integrators advance state.t themselves (multistep methods detect restarts by it), so it is left alone here;
    // records and frames use step * h, free of the drift of repeated additions.
    target.advance(tStart, opts.h, report.dissipated);
    const wallMs = performance.now() - t0;
    totalNewton += counters.newtonIterations;
    totalLinear += counters.linearIterations;
    if (counters.unconverged > 0) {
      newtonLimitSteps++;
      if (newtonLimitFirstSteps.length < NEWTON_LIMIT_STEPS_LISTED) newtonLimitFirstSteps.push(step);
    }
    const warning = report.warning ?? (counters.unconverged ? `${counters.unconverged} Newton solve(s) hit the iteration limit or stalled short of the tolerance` : undefined);
    const rec = record(step, report.alpha, counters.newtonIterations, counters.linearIterations, wallMs, report.dissipated, report.frictionLoss, warning);
    if (!Number.isFinite(rec.total)) {
      stopped = `step ${step} (t = ${rec.t.toFixed(6)} s): the total energy is not finite (${rec.total}): the integrator blew up or produced an invalid state${warning ? ` (${warning})` : ''}`;
      break;
    }
    maxInverted = Math.max(maxInverted, rec.inverted);
    if (!(rec.minDistance >= minDistance)) minDistance = Number.isNaN(minDistance) ? rec.minDistance : Math.min(minDistance, rec.minDistance);
    maxActive = Math.max(maxActive, rec.activeContacts);
    if (Math.abs(rec.total) > opts.blowUpFactor * energyScale) {
      observer.step?.(rec);
      maxEnergy = Math.max(maxEnergy, rec.total);
      minEnergy = Math.min(minEnergy, rec.total);
      last = rec;
      lastX.set(state.x);
      lastV.set(state.v);
      stopped = `step ${step} (t = ${rec.t.toFixed(6)} s): unstable: the total energy grew to ${rec.total.toExponential(3)} J from ${initial.total.toExponential(3)} J`;
      break;
    }
    const isFrame = step % frameEvery === 0;
    if (observer.check || contactChecks === 'steps' || (contactChecks === 'frames' && isFrame)) {
      try {
        if (contactChecks === 'steps' || (contactChecks === 'frames' && isFrame)) checkContact(state.x);
        observer.check?.(step, state.x);
      } catch (err) {
        stopped = `step ${step} (t = ${rec.t.toFixed(6)} s): ${(err as Error).message}`;
        break;
      }
    }
    minEnergy = Math.min(minEnergy, rec.total);
    maxEnergy = Math.max(maxEnergy, rec.total);
    if (isFrame) rec.bodies = bodyRecords(model, state.x, state.v);
    observer.step?.(rec);
    if (isFrame) observer.frame?.(step / frameEvery, rec.t, state.x, state.v);
    last = rec;
    lastX.set(state.x);
    lastV.set(state.v);
    if (checkpointEvery > 0 && observer.checkpoint && (step % checkpointEvery === 0 || step === steps)) checkpoint(step);
    if ((yield step) && step < steps) stopped = INTERRUPTED;
  }
  // An interrupted run can go on from where it stopped.
  if (stopped === INTERRUPTED && checkpointEvery > 0 && observer.checkpoint && last.step !== lastCheckpoint) checkpoint(last.step);

  const segmentSeconds = (performance.now() - start) / 1000;
  const wallSeconds = segmentSeconds + (before?.wallSeconds ?? 0);
  const cpuSeconds = processCpuSeconds() - cpuStart + (before?.cpuSeconds ?? 0);
  const l0 = norm(initial.angularMomentum);
  const timing = timingSoFar(segmentSeconds);
  const summary: RunSummary = {
    scene: opts.sceneName,
    integrator: opts.integrator,
    h: opts.h,
    steps: last.step,
    duration: last.t,
    wallSeconds,
    cpuSeconds: Number.isNaN(cpuSeconds) ? null : cpuSeconds,
    newtonIterations: totalNewton,
    linearIterations: totalLinear,
    newtonLimitSteps,
    newtonLimitFirstSteps,
    initialEnergy: initial.total,
    finalEnergy: last.total,
    minEnergy,
    maxEnergy,
    angularMomentumKept: l0 > 1e-12 ? norm(last.angularMomentum) / l0 : null,
    energyKept: last.total / initial.total,
    maxInverted,
    minDistance: model.contact ? (Number.isNaN(minDistance) ? null : minDistance) : null,
    maxActiveContacts: maxActive,
    stopped,
    peakMemoryMiB: peakMemoryMiB(),
    timing,
    bodies: last.bodies ?? bodyRecords(model, lastX, lastV),
  };
  return { summary, state };
}

/** Steps between output frames: frames are every max(1, round(1 / (frameRate h))) steps. */
export function frameInterval(opts: Pick<RunOptions, 'frameRate' | 'h'>): number {
  return Math.max(1, Math.round(1 / (opts.frameRate * opts.h)));
}

/** Refuses a checkpoint of another run (scene, integrator, h, model size), naming what differs. */
export function checkCheckpoint(cp: RunCheckpoint, model: Model, opts: RunOptions): void {
  const differs: string[] = [];
  if (cp.version !== 2) differs.push(`format version ${cp.version} (this build reads 2)`);
  if (cp.scene !== opts.sceneName) differs.push(`scene '${cp.scene}' (this run: '${opts.sceneName}')`);
  if (cp.integrator !== opts.integrator) differs.push(`integrator '${cp.integrator}' (this run: '${opts.integrator}')`);
  if (cp.h !== opts.h) differs.push(`h = ${cp.h} (this run: ${opts.h})`);
  if (!findIntegrator(opts.integrator).resumable?.(opts.params)) differs.push(`integrator '${opts.integrator}' with these parameters cannot resume`);
  const n = 3 * model.nNodes;
  if (cp.x.length !== n || cp.v.length !== n) differs.push(`${cp.x.length / 3} nodes (this model: ${model.nNodes})`);
  if (differs.length) throw new Error(`checkpoint does not belong to this run: ${differs.join('; ')}`);
  for (const [name, a] of [['x', cp.x], ['v', cp.v]] as const) {
    const bad = a.findIndex((value) => !Number.isFinite(value));
    if (bad >= 0) throw new Error(`checkpoint ${name}[${bad}] is not finite (${a[bad]})`);
  }
}

/** CPU time (user + system) of this process so far, s; NaN where the runtime cannot tell (a browser). */
function processCpuSeconds(): number {
  const proc = (globalThis as { process?: { cpuUsage?: () => { user: number; system: number } } }).process;
  if (!proc?.cpuUsage) return NaN;
  const u = proc.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Peak resident set size of this process so far (MiB); NaN where the runtime cannot tell (a browser). */
function peakMemoryMiB(): number {
  const proc = (globalThis as { process?: { resourceUsage?: () => { maxRSS: number } } }).process;
  return proc?.resourceUsage ? proc.resourceUsage().maxRSS / 1024 : NaN;
}
