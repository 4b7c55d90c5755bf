/**
 * Seed 000 section 5.5: a 1D elastic bar bounces off a wall; Table 2 lists its final centre-of-mass velocity per
 * integrator and step size. This module runs one such collision and formats the table. Pure: no file I/O (the
 * command in scripts/collision-1d-table.ts loads the scenes and writes the outputs).
 *
 * The study's scenes are chains (one node per cross-section, Neo-Hookean bar segments: energies/bar-segments.ts);
 * each has a 3D block variant (30 x 1 x 1 cells of tets, y and z locked) whose cross-sections warp.
 */
import type { Model } from '../model/model.js';
import type { Scene } from '../scene/schema.js';
import { simulate, type RunOptions } from '../sim/simulate.js';
import { barSections, freeDofs } from './spectrum.js';

/**
 * The four cases of the study, in the seed's column order (Table 2: soft, medium, stiff, damped soft): the chain
 * scene the study runs and its 3D block variant (`--block`).
 */
export const COLLISION_1D_CASES = [
  { key: 'soft', scene: 'collision-1d-soft', blockScene: 'collision-1d-block-soft', label: 'Soft' },
  { key: 'medium', scene: 'collision-1d-medium', blockScene: 'collision-1d-block-medium', label: 'Medium' },
  { key: 'stiff', scene: 'collision-1d-stiff', blockScene: 'collision-1d-block-stiff', label: 'Stiff' },
  { key: 'damped', scene: 'collision-1d-damped', blockScene: 'collision-1d-block-damped', label: 'Damped soft' },
] as const;

/** The scene of a case: the chain, or with `block` its 3D block variant. */
export function caseScene(c: (typeof COLLISION_1D_CASES)[number], block = false): string {
  return block ? c.blockScene : c.scene;
}

/** Table 2's integrators. */
export const TABLE_INTEGRATORS = ['bdf2', 'a-1', 'a-search'] as const;

/** Step sizes of the seed's study as steps per second (h = 1/30, 1/300, 1/3000 s). */
export const DEFAULT_STEPS_PER_SECOND = [30, 300, 3000] as const;

/**
 * What the seed publishes for this study. Table 2's rows are withheld from our copy of the paper; the text gives
 * only the damped case's convergent final velocity (about 0.64 m/s, section 5.5). Keyed by case key.
 */
export const SEED_CONVERGED_VELOCITY: Partial<Record<string, number>> = { damped: 0.64 };

/** Total mass of the nodes whose DOF along `axis` is free (kg). */
export function freeMass(model: Model, axis = 0): number {
  let m = 0;
  for (let d = axis; d < model.mass.length; d += 3) if (!model.constrained[d]) m += model.mass[d];
  return m;
}

/** Centre-of-mass velocity along `axis`: momentum over the free DOFs of that axis / their mass (m/s). */
export function centerOfMassVelocity(model: Model, v: Float64Array, axis = 0): number {
  let p = 0;
  let m = 0;
  for (let d = axis; d < model.mass.length; d += 3) {
    if (model.constrained[d]) continue;
    p += model.mass[d] * v[d];
    m += model.mass[d];
  }
  return m > 0 ? p / m : NaN;
}

/**
 * The cross-sections of a bar along x (the nodes with a free x DOF grouped by their rest x: one node per section in
 * a chain, four in the block), numbered from the left, and how far a state is from moving them as one.
 */
export class CrossSections {
  /** Section of each node, -1 for nodes without a free x DOF (obstacles). */
  readonly sectionOf: Int32Array;
  readonly count: number;
  /** Rest x and mass (the sum of its nodes' lumped masses) of each section. */
  readonly restX: Float64Array;
  readonly mass: Float64Array;
  private readonly nodeMass: Float64Array;
  // Scratch per section (no allocation per measurement).
  private readonly lo: Float64Array;
  private readonly hi: Float64Array;
  private readonly mean: Float64Array;

  constructor(model: Model) {
    const dofs = freeDofs(model);
    const { section, count } = barSections(model, dofs, 0);
    this.count = count;
    this.sectionOf = new Int32Array(model.nNodes).fill(-1);
    this.restX = new Float64Array(count);
    this.mass = new Float64Array(count);
    this.nodeMass = new Float64Array(model.nNodes);
    dofs.forEach((d, i) => {
      if (section[i] < 0) return;
      const node = d / 3;
      this.sectionOf[node] = section[i];
      this.restX[section[i]] = model.rest[d];
      this.nodeMass[node] = model.mass[d];
      this.mass[section[i]] += model.mass[d];
    });
    this.lo = new Float64Array(count);
    this.hi = new Float64Array(count);
    this.mean = new Float64Array(count);
  }

  /**
   * `spread`: the largest difference in x between two nodes of one section (m; 0 when every section moves as one,
   * the 1D motion the study stands for). `minStretch`: the smallest ratio of the distance between neighbouring
   * sections' mass-weighted mean x to its rest value (<= 0: two sections passed each other).
   */
  measure(x: Float64Array): { spread: number; minStretch: number } {
    const { lo, hi, mean } = this;
    lo.fill(Infinity);
    hi.fill(-Infinity);
    mean.fill(0);
    for (let node = 0; node < this.sectionOf.length; node++) {
      const s = this.sectionOf[node];
      if (s < 0) continue;
      const xi = x[3 * node];
      if (xi < lo[s]) lo[s] = xi;
      if (xi > hi[s]) hi[s] = xi;
      mean[s] += (this.nodeMass[node] * xi) / this.mass[s];
    }
    let spread = 0;
    for (let s = 0; s < this.count; s++) spread = Math.max(spread, hi[s] - lo[s]);
    let minStretch = Infinity;
    for (let s = 0; s + 1 < this.count; s++) minStretch = Math.min(minStretch, (mean[s + 1] - mean[s]) / (this.restX[s + 1] - this.restX[s]));
    return { spread, minStretch };
  }
}

export interface CollisionRun {
  /** Case key (soft, medium, stiff, damped). */
  caseKey: string;
  integrator: string;
  stepsPerSecond: number;
  h: number;
  /** Steps taken (fewer than planned when the run stopped early). */
  steps: number;
  /** Simulated time reached (s). */
  duration: number;
  /** Centre-of-mass velocity along x at the end (m/s; the block starts at -1). */
  finalVelocity: number;
  /** First and last time with an active contact pair (s); null when the block never came within dhat. */
  contactStart: number | null;
  lastContact: number | null;
  /** The block left the wall: no active contact at the end, and it moves away (final velocity > 0). */
  separated: boolean;
  /** Most tets inverted at once (0 = no inversion). */
  maxInverted: number;
  /** Largest x-spread of the nodes of one cross-section over the run (m): 0 for a chain, the warping of the block. */
  maxSectionSpread: number;
  /** Smallest stretch between neighbouring cross-sections over the run (1 at rest; <= 0 would be an inversion). */
  minStretch: number;
  /** Smallest wall distance over the run (m). */
  minDistance: number | null;
  /** Some step had a distance <= 0 or a non-finite one while the block was in reach of the wall. */
  penetrated: boolean;
  /** Set when the run stopped early (blow-up, failed solve). */
  stopped?: string;
  /** Steps whose Newton solve hit its iteration limit. */
  unconvergedSteps: number;
  wallSeconds: number;
  newtonIterations: number;
  initialEnergy: number;
  finalEnergy: number;
  /** Final positions and velocities, all DOFs (for the energy spectrum). */
  finalX: Float64Array;
  finalV: Float64Array;
}

/** Runs one collision of a 1D-collision scene's model with the given integrator and h = 1 / stepsPerSecond. */
export function runCollision1d(
  model: Model,
  base: RunOptions,
  caseKey: string,
  integrator: string,
  stepsPerSecond: number,
  duration = base.duration,
): CollisionRun {
  const h = 1 / stepsPerSecond;
  // The scene's own integrator parameters belong to its default integrator; the study uses each method's defaults.
  const opts: RunOptions = { ...base, integrator, params: {}, h, duration, contactChecks: 'frames' };
  let contactStart: number | null = null;
  let lastContact: number | null = null;
  let penetrated = false;
  let unconverged = 0;
  let lastActive = 0;
  const sections = new CrossSections(model);
  let maxSectionSpread = 0;
  let minStretch = Infinity;
  const { summary, state } = simulate(model, opts, {
    check(_step, x) {
      const m = sections.measure(x);
      maxSectionSpread = Math.max(maxSectionSpread, m.spread);
      minStretch = Math.min(minStretch, m.minStretch);
    },
    step(rec) {
      if (rec.activeContacts > 0) {
        if (contactStart === null) contactStart = rec.t;
        lastContact = rec.t;
      }
      lastActive = rec.activeContacts;
      // minDistance is NaN only when nothing is in reach; an in-reach distance <= 0 means the wall was crossed.
      if (rec.activeContacts > 0 && !(rec.minDistance > 0)) penetrated = true;
      if (rec.warning && rec.warning.includes('iteration limit')) unconverged++;
    },
  });
  const finalVelocity = centerOfMassVelocity(model, state.v);
  return {
    caseKey,
    integrator,
    stepsPerSecond,
    h,
    steps: summary.steps,
    duration: summary.duration,
    finalVelocity,
    contactStart,
    lastContact,
    separated: lastActive === 0 && finalVelocity > 0 && !summary.stopped,
    maxInverted: summary.maxInverted,
    maxSectionSpread,
    minStretch,
    minDistance: summary.minDistance,
    penetrated: penetrated || (summary.minDistance !== null && !(summary.minDistance > 0)),
    stopped: summary.stopped,
    unconvergedSteps: unconverged,
    wallSeconds: summary.wallSeconds,
    newtonIterations: summary.newtonIterations,
    initialEnergy: summary.initialEnergy,
    finalEnergy: summary.finalEnergy,
    finalX: new Float64Array(state.x),
    finalV: new Float64Array(state.v),
  };
}

/**
 * What a run's result depends on in a scene: the validated scene without its name and description, as text. Saved
 * final states are reused only when this matches (editing a description does not invalidate them).
 */
export function sceneFingerprint(scene: Scene): string {
  return JSON.stringify({ ...scene, name: '', description: '' });
}

/** "1/300" for 300 steps per second. */
export function stepLabel(stepsPerSecond: number): string {
  return `1/${stepsPerSecond}`;
}

/** A tet inverted or two cross-sections passed each other (a chain's inversion). */
export function inverted(run: CollisionRun): boolean {
  return run.maxInverted > 0 || !(run.minStretch > 0);
}

function velocityCell(run: CollisionRun | undefined): string {
  if (!run) return 'skipped';
  if (run.stopped) return `stopped (${run.finalVelocity.toFixed(3)})`;
  const flags = [run.separated ? '' : 'in contact', inverted(run) ? 'inverted' : '', run.penetrated ? 'penetrated' : '']
    .filter(Boolean)
    .join(', ');
  return `${run.finalVelocity.toFixed(3)}${flags ? ` (${flags})` : ''}`;
}

/**
 * Markdown in the layout of seed 000 Table 2: one row per step size, a column per (case, integrator). Cells read
 * the final centre-of-mass velocity in m/s; a flag in brackets marks a run that never left the wall, inverted (a tet,
 * or two sections passed each other), crossed the wall or stopped. `cases` and `integrators` select the columns.
 */
export function velocityTableMarkdown(
  runs: readonly CollisionRun[],
  cases: readonly { key: string; label: string }[],
  integrators: readonly string[],
  stepsPerSecond: readonly number[],
): string {
  const find = (c: string, i: string, s: number) => runs.find((r) => r.caseKey === c && r.integrator === i && r.stepsPerSecond === s);
  const header = ['h (s)', ...cases.flatMap((c) => integrators.map((i) => `${c.label} ${i}`))];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const s of stepsPerSecond) {
    lines.push(`| ${stepLabel(s)} | ${cases.flatMap((c) => integrators.map((i) => velocityCell(find(c.key, i, s)))).join(' | ')} |`);
  }
  const seedRow = cases.flatMap((c) => integrators.map(() => (SEED_CONVERGED_VELOCITY[c.key] !== undefined ? `~${SEED_CONVERGED_VELOCITY[c.key]} (converged)` : 'withheld')));
  lines.push(`| seed 000 | ${seedRow.join(' | ')} |`);
  return lines.join('\n');
}

/** Column names of collisionRunsCsv. */
export const RUN_CSV_COLUMNS = [
  'case',
  'integrator',
  'h',
  'steps_per_second',
  'steps',
  'duration',
  'final_com_velocity',
  'separated',
  'contact_start',
  'last_contact',
  'max_inverted',
  'max_section_spread',
  'min_stretch',
  'min_distance',
  'penetrated',
  'unconverged_steps',
  'initial_energy',
  'final_energy',
  'newton_iterations',
  'wall_seconds',
  'stopped',
] as const;

/** One CSV row per run (all fields of CollisionRun but the final state). */
export function collisionRunsCsv(runs: readonly CollisionRun[]): string {
  const cell = (v: number | string | boolean | null | undefined): string => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const rows = runs.map((r) =>
    [
      r.caseKey,
      r.integrator,
      r.h,
      r.stepsPerSecond,
      r.steps,
      r.duration,
      r.finalVelocity,
      r.separated,
      r.contactStart,
      r.lastContact,
      r.maxInverted,
      r.maxSectionSpread,
      r.minStretch,
      r.minDistance,
      r.penetrated,
      r.unconvergedSteps,
      r.initialEnergy,
      r.finalEnergy,
      r.newtonIterations,
      r.wallSeconds,
      r.stopped,
    ]
      .map(cell)
      .join(','),
  );
  return [RUN_CSV_COLUMNS.join(','), ...rows].join('\n') + '\n';
}

/** Comma-separated command-line list (empty items dropped); undefined when not given. */
export function commaList(s: string | undefined): string[] | undefined {
  return s?.split(',').map((p) => p.trim()).filter(Boolean);
}

/**
 * The steps-per-second and cases the analysis commands run (`--steps 30,1/300`, `--cases soft,stiff`, `--quick`),
 * with errors naming the flag.
 */
export function selectCollision1dRuns(options: { steps?: string; cases?: string; quick?: boolean }): { steps: number[]; cases: (typeof COLLISION_1D_CASES)[number][] } {
  const steps = (commaList(options.steps) ?? (options.quick ? ['30'] : DEFAULT_STEPS_PER_SECOND.map(String))).map((s) => {
    const n = Number(s.replace(/^1\//, ''));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--steps: '${s}' is not a positive whole number of steps per second`);
    return n;
  });
  const cases = (commaList(options.cases) ?? COLLISION_1D_CASES.map((c) => c.key)).map((k) => {
    const c = COLLISION_1D_CASES.find((x) => x.key === k);
    if (!c) throw new Error(`--cases: unknown case '${k}' (${COLLISION_1D_CASES.map((x) => x.key).join(', ')})`);
    return c;
  });
  return { steps, cases };
}
