/**
 * The large-step collision study of seed 000 appendix E on the `particle-wall` scene: one particle meets the wall
 * at 1 m/s; per integrator and phase beta we record how fast it leaves, how many steps the collision takes and on
 * which steps the energy is below its initial value. Pure: runs simulate() in memory, returns numbers and text.
 *
 * Appendix E works with the one-sided quadratic barrier P = k x^2 / 2 for x < 0 (threshold at 0), x_0 = beta h,
 * v_0 = -1, and derives the trajectories in the limit hbar = h^2 k / m -> infinity (`appendixLimit` below). It
 * then states that the IPC barrier behaves alike for large h. Our barrier is IPC's clamped log on the squared
 * distance, E(d) = kappa dhat^2 b((d/dhat)^2), b(s) = -(s-1)^2 ln s; with r = d/dhat this is
 * 2 kappa dhat^2 (1+r)^2 * [-(r-1)^2 ln r], i.e. the appendix's log barrier -kappa' (r-1)^2 ln r with a stiffness
 * kappa' between 2 kappa dhat^2 (at the wall) and 8 kappa dhat^2 (at the threshold): same family, same cubic
 * onset (E ~ 8 kappa dhat^2 (1-r)^3) and log wall. The particle starts at dhat + beta h |v|, the appendix's x_0 = beta h
 * measured from the threshold; for h |v| >> dhat the whole barrier zone is thin compared to a step, which is the
 * regime where the quadratic-barrier limit is expected to carry over.
 */

import { buildModel } from '../scene/build.js';
import { makeParametricScene, PARTICLE_WALL_MASS, PARTICLE_WALL_SPEED } from '../scene/parametric.js';
import { parseScene, SceneError } from '../scene/schema.js';
import { simulate, type RunOptions } from '../sim/simulate.js';

/** A step "loses energy" when H_n < (1 - ENERGY_LOSS_TOL) H_0 (a relative 0.1%, far above the solver's error). */
export const ENERGY_LOSS_TOL = 1e-3;

export interface ParticleWallCase {
  integrator: string;
  phase: number;
  kappa: number;
  dhat: number;
  /** Time step (s); also the unit of the phase offset. */
  h: number;
  /** Integrator parameters (alphaMax of A-search, ...). */
  params?: Record<string, number | boolean>;
}

export interface ParticleWallSample {
  step: number;
  /** Distance to the wall (m). */
  distance: number;
  /** Velocity along the wall normal (m/s; negative toward the wall). */
  velocity: number;
  /** Total energy H = kinetic + barrier (J). */
  energy: number;
  barrier: number;
  /** A-1 / A-search alpha of the step (NaN for other integrators and step 0). */
  alpha: number;
}

export interface ParticleWallResult {
  case: ParticleWallCase;
  /** h^2 kappa / m, the appendix's dimensionless stiffness. */
  hbar: number;
  /** h |v| / dhat: a step's free flight in units of the barrier zone. */
  stepOverDhat: number;
  trajectory: ParticleWallSample[];
  /** First step ending inside the barrier zone (distance < dhat); null if never. */
  entryStep: number | null;
  /** First step after entry ending outside the zone (distance >= dhat) and moving away; null if never. */
  exitStep: number | null;
  /** exitStep - entryStep + 1: the steps it takes to resolve the collision (appendix: A-1 four, trapezoidal 2-3). */
  collisionSteps: number | null;
  /** Steps from entry to exit whose position is inside the zone. */
  stepsInZone: number;
  /** Velocity at the exit step (constant afterwards: the particle flies free); NaN if it never left. */
  outgoingSpeed: number;
  /** Steps from entry to exit with H_n < (1 - ENERGY_LOSS_TOL) H_0. */
  energyLossSteps: number[];
  /** Smallest H_n / H_0 over the run, and H / H_0 at its end. */
  minEnergyRatio: number;
  finalEnergyRatio: number;
  newtonIterations: number;
  /** Steps whose Newton solve reported a warning (hit the iteration cap). */
  warnings: number;
  stopped?: string;
}

/** Simulates one case of the study (the `particle-wall` scene with the case's parameters) and measures it. */
export function runParticleWall(c: ParticleWallCase): ParticleWallResult {
  const { input } = makeParametricScene('particle-wall', { phase: c.phase, kappa: c.kappa, dhat: c.dhat, dt: c.h });
  input.integrator = { name: c.integrator, params: { ...(c.params ?? {}) } };
  const scene = parseScene(input, `particle-wall (${c.integrator}, phase ${c.phase})`);
  const model = buildModel(scene, () => {
    throw new SceneError('particle-wall reads no mesh files');
  });
  const opts: RunOptions = {
    sceneName: scene.name,
    integrator: scene.integrator.name,
    params: { ...scene.integrator.params },
    h: scene.dt,
    duration: scene.duration,
    frameRate: 1 / scene.dt, // a frame (the position) every step
    solver: { ...scene.solver },
    rayleigh: 0,
    energy: { scale: 1, ground: 0, decay: [] },
    blowUpFactor: 1e3,
  };
  const trajectory: ParticleWallSample[] = [];
  const distances: number[] = [];
  let warnings = 0;
  const { summary } = simulate(model, opts, {
    step(rec) {
      if (rec.warning) warnings++;
      trajectory.push({
        step: rec.step,
        distance: NaN,
        velocity: rec.momentum[0] / PARTICLE_WALL_MASS,
        energy: rec.total,
        barrier: rec.potentials.get('contact') ?? 0,
        alpha: rec.alpha,
      });
    },
    frame(_i, _t, x) {
      distances.push(x[0]); // the wall is the plane x = 0
    },
  });
  trajectory.forEach((s, i) => (s.distance = distances[i] ?? NaN));
  return measure(c, trajectory, summary.newtonIterations, warnings, summary.stopped);
}

function measure(c: ParticleWallCase, trajectory: ParticleWallSample[], newtonIterations: number, warnings: number, stopped: string | undefined): ParticleWallResult {
  const h0 = trajectory[0].energy;
  const entry = trajectory.find((s) => s.distance < c.dhat);
  const exit = entry ? trajectory.find((s) => s.step > entry.step && s.distance >= c.dhat && s.velocity > 0) : undefined;
  const window = entry ? trajectory.filter((s) => s.step >= entry.step && (!exit || s.step <= exit.step)) : [];
  const last = trajectory[trajectory.length - 1];
  return {
    case: c,
    hbar: (c.h * c.h * c.kappa) / PARTICLE_WALL_MASS,
    stepOverDhat: (c.h * PARTICLE_WALL_SPEED) / c.dhat,
    trajectory,
    entryStep: entry?.step ?? null,
    exitStep: exit?.step ?? null,
    collisionSteps: entry && exit ? exit.step - entry.step + 1 : null,
    stepsInZone: window.filter((s) => s.distance < c.dhat).length,
    outgoingSpeed: exit ? exit.velocity : NaN,
    energyLossSteps: window.filter((s) => s.energy < (1 - ENERGY_LOSS_TOL) * h0).map((s) => s.step),
    minEnergyRatio: Math.min(...trajectory.map((s) => s.energy)) / h0,
    finalEnergyRatio: last.energy / h0,
    newtonIterations,
    warnings,
    stopped,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The appendix's limit (quadratic barrier, hbar -> infinity), |v_0| = 1

export interface AppendixLimit {
  /** v_1 .. v_exit, the velocities after each step from the first one into the barrier to the one that leaves. */
  velocities: number[];
  outgoing: number;
  /** Steps to resolve: velocities.length. */
  collisionSteps: number;
  /** Steps (1-based, counted from the first) with kinetic energy below the initial one (the potential -> 0). */
  lossSteps: number[];
}

/**
 * The trajectory velocities of seed 000 appendix E for the quadratic barrier as hbar -> infinity, for phase beta in
 * [0, 1). Trapezoidal and A-1 are the appendix's formulas. A-search is our own derivation of the same limit with
 * alpha clipped to [0, alphaMax] and the target H_0: v_2 = -min(beta alphaMax, 1) as the appendix states, but
 * v_3 = min(alphaMax (1 + v_2), 1) (the appendix writes 1 + v_2, which is alpha_3 = 1; with the energy below
 * target the search takes alpha_3 = min(1 / (1 + v_2), alphaMax)), and v_4 = 1; when v_2 = -1, v_3 = 0 and the
 * particle needs a fifth step (v_4 = v_5 = 1). Implicit Euler stops the particle: outgoing speed 0. Null for
 * integrators the appendix does not treat.
 */
export function appendixLimit(integrator: string, beta: number, alphaMax = 1.1): AppendixLimit | null {
  let v: number[];
  switch (integrator) {
    case 'trapezoidal':
      v = beta < 2 / 3 ? [1 - 2 * beta, 3 - 4 * beta] : [1 - 2 * beta, 2 * beta - 1, 8 * beta - 5];
      break;
    case 'a-1':
      v = [-1, -beta, 1 - beta, 1];
      break;
    case 'a-search': {
      const v2 = -Math.min(beta * alphaMax, 1);
      v = v2 === -1 ? [-1, -1, 0, 1, 1] : [-1, v2, Math.min(alphaMax * (1 + v2), 1), 1];
      break;
    }
    case 'implicit-euler':
      return { velocities: [], outgoing: 0, collisionSteps: NaN, lossSteps: [] };
    default:
      return null;
  }
  const lossSteps = v.flatMap((vk, k) => (vk * vk < 1 - 1e-12 ? [k + 1] : []));
  return { velocities: v, outgoing: v[v.length - 1], collisionSteps: v.length, lossSteps };
}

// ---------------------------------------------------------------------------------------------------------------
// Text outputs

function fmt(x: number | null | undefined, digits = 4): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  if (!Number.isFinite(x)) return String(x);
  return x.toFixed(digits);
}

export const RESULTS_COLUMNS = [
  'integrator',
  'phase',
  'h',
  'kappa',
  'dhat',
  'hbar',
  'step_over_dhat',
  'outgoing_speed',
  'limit_outgoing_speed',
  'entry_step',
  'exit_step',
  'collision_steps',
  'steps_in_zone',
  'energy_loss_steps',
  'min_energy_ratio',
  'final_energy_ratio',
  'newton_iterations',
  'warnings',
  'stopped',
] as const;

/** results.csv: one row per (integrator, phase); energy_loss_steps is a space-separated list of step numbers. */
export function resultsCsv(results: ParticleWallResult[]): string {
  const esc = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const num = (x: number | null) => (x === null || Number.isNaN(x) ? '' : String(x));
  const lines = [RESULTS_COLUMNS.join(',')];
  for (const r of results) {
    const limit = appendixLimit(r.case.integrator, r.case.phase, alphaMaxOf(r.case));
    lines.push(
      [
        r.case.integrator,
        num(r.case.phase),
        num(r.case.h),
        num(r.case.kappa),
        num(r.case.dhat),
        num(r.hbar),
        num(r.stepOverDhat),
        num(r.outgoingSpeed),
        num(limit ? limit.outgoing : null),
        num(r.entryStep),
        num(r.exitStep),
        num(r.collisionSteps),
        num(r.stepsInZone),
        r.energyLossSteps.join(' '),
        num(r.minEnergyRatio),
        num(r.finalEnergyRatio),
        num(r.newtonIterations),
        num(r.warnings),
        esc(r.stopped ?? ''),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** trajectories.csv: every step of every run (distance, velocity, energy, barrier energy, alpha). */
export function trajectoriesCsv(results: ParticleWallResult[]): string {
  const lines = ['integrator,phase,h,kappa,dhat,step,distance,velocity,energy,barrier,alpha'];
  for (const r of results) {
    const c = r.case;
    for (const s of r.trajectory) {
      lines.push([c.integrator, c.phase, c.h, c.kappa, c.dhat, s.step, s.distance, s.velocity, s.energy, s.barrier, Number.isNaN(s.alpha) ? '' : s.alpha].join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

function alphaMaxOf(c: ParticleWallCase): number {
  const a = c.params?.alphaMax;
  return typeof a === 'number' ? a : 1.1;
}

/** Velocities after the first steps of the collision (from the entry step on), for comparing with the limit. */
export function collisionVelocities(r: ParticleWallResult, count: number): number[] {
  if (r.entryStep === null) return [];
  return r.trajectory.filter((s) => s.step >= r.entryStep!).slice(0, count).map((s) => s.velocity);
}

/** Largest |measured - limit| over the limit's velocities v_1..v_k (entry step = step 1). NaN without a limit. */
export function limitVelocityError(r: ParticleWallResult): number {
  const limit = appendixLimit(r.case.integrator, r.case.phase, alphaMaxOf(r.case));
  if (!limit || limit.velocities.length === 0) return NaN;
  const measured = collisionVelocities(r, limit.velocities.length);
  if (measured.length < limit.velocities.length) return Infinity;
  return Math.max(...limit.velocities.map((v, k) => Math.abs(measured[k] - v)));
}

/** Phase-by-integrator table of outgoing speeds, with the appendix limit in brackets. */
export function speedTableMarkdown(results: ParticleWallResult[], integrators: string[]): string {
  const phases = [...new Set(results.map((r) => r.case.phase))].sort((a, b) => a - b);
  const find = (name: string, phase: number) => results.find((r) => r.case.integrator === name && r.case.phase === phase);
  const head = `| phase | ${integrators.map((n) => `${n}: v_out (limit) | steps | loss steps`).join(' | ')} |`;
  const rule = `|---|${integrators.map(() => '---:|---:|---').join('|')}|`;
  const rows = phases.map((phase) => {
    const cells = integrators.map((name) => {
      const r = find(name, phase);
      if (!r) return 'n/a | n/a | n/a';
      const limit = appendixLimit(name, phase, alphaMaxOf(r.case));
      const speed = `${fmt(r.outgoingSpeed)}${limit ? ` (${fmt(limit.outgoing, 2)})` : ''}`;
      const loss = r.energyLossSteps.length ? r.energyLossSteps.join(' ') : '-';
      return `${speed} | ${r.collisionSteps ?? 'n/a'} | ${loss}`;
    });
    return `| ${phase.toFixed(2)} | ${cells.join(' | ')} |`;
  });
  return [head, rule, ...rows].join('\n');
}

/** Velocities v_1..v_k after entry next to the appendix's limit values, per integrator and phase. */
export function velocityTableMarkdown(results: ParticleWallResult[], integrator: string, count: number): string {
  const rows = results
    .filter((r) => r.case.integrator === integrator)
    .sort((a, b) => a.case.phase - b.case.phase)
    .map((r) => {
      const limit = appendixLimit(integrator, r.case.phase, alphaMaxOf(r.case));
      const measured = collisionVelocities(r, count);
      const cells = Array.from({ length: count }, (_, k) => {
        const m = measured[k];
        const l = limit?.velocities[k];
        return `${fmt(m, 3)}${l !== undefined ? ` (${fmt(l, 3)})` : ''}`;
      });
      return `| ${r.case.phase.toFixed(2)} | ${cells.join(' | ')} |`;
    });
  const head = `| phase | ${Array.from({ length: count }, (_, k) => `v_${k + 1}`).join(' | ')} |`;
  const rule = `|---|${Array.from({ length: count }, () => '---:').join('|')}|`;
  return [head, rule, ...rows].join('\n');
}

export interface IntegratorSummary {
  integrator: string;
  minSpeed: number;
  maxSpeed: number;
  /** Largest |v_out - 1| over the phases. */
  maxSpeedError: number;
  /** Largest |v_out - limit| and largest error of the collision velocities against the limit, over the phases. */
  maxLimitError: number;
  maxVelocityError: number;
  collisionSteps: number[];
  lossStepCounts: number[];
  /** Fraction of phases leaving faster than 1 + ENERGY_LOSS_TOL / 2 (energy gained). */
  gainFraction: number;
  /** Runs that never left the barrier or stopped early. */
  failures: number;
}

export function summarize(results: ParticleWallResult[], integrator: string): IntegratorSummary {
  const rs = results.filter((r) => r.case.integrator === integrator);
  const speeds = rs.map((r) => r.outgoingSpeed).filter(Number.isFinite);
  const limitErrors = rs.map((r) => {
    const l = appendixLimit(integrator, r.case.phase, alphaMaxOf(r.case));
    return l ? Math.abs(r.outgoingSpeed - l.outgoing) : NaN;
  });
  const uniq = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);
  const maxOf = (xs: number[]) => (xs.some(Number.isNaN) ? NaN : xs.length ? Math.max(...xs) : NaN);
  return {
    integrator,
    minSpeed: speeds.length ? Math.min(...speeds) : NaN,
    maxSpeed: speeds.length ? Math.max(...speeds) : NaN,
    maxSpeedError: maxOf(rs.map((r) => (Number.isFinite(r.outgoingSpeed) ? Math.abs(r.outgoingSpeed - 1) : Infinity))),
    maxLimitError: maxOf(limitErrors),
    maxVelocityError: maxOf(rs.map(limitVelocityError)),
    collisionSteps: uniq(rs.flatMap((r) => (r.collisionSteps === null ? [] : [r.collisionSteps]))),
    lossStepCounts: uniq(rs.map((r) => r.energyLossSteps.length)),
    gainFraction: rs.length ? rs.filter((r) => r.outgoingSpeed > 1 + ENERGY_LOSS_TOL / 2).length / rs.length : NaN,
    failures: rs.filter((r) => r.exitStep === null || r.stopped !== undefined).length,
  };
}
