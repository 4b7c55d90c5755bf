/**
 * `vivace run` and `vivace compare`: load and check everything first (scene, flags, meshes, model), then run with
 * the outputs of run-output.ts, a progress display and a short summary. No physics here.
 */

import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { findIntegrator } from '../integrators/registry.js';
import type { LinearSolverName } from '../math/linear-solver.js';
import type { Model } from '../model/model.js';
import { clearCompareOutputs, compareReportMarkdown, runStatus, writeCompareOutputs, type CompareEntry } from '../io/compare-report.js';
import { readCheckpoint, writeCheckpoint } from '../io/checkpoint.js';
import { checkOutputDir, OutputDirError } from '../io/output-dir.js';
import { frameExtensions, frameFileName, PVD_FILE } from '../io/frame-files.js';
import { ALPHA_PLOT_FILE, BODIES_FILE, CHECKPOINT_FILE, ENERGY_PLOT_FILE, FRAMES_DIR, METRICS_FILE, RunOutput, SUMMARY_FILE, type EnergySeries, type RunOutputPaths } from '../io/run-output.js';
import { checkSceneWork, readOnceMeshes, workLimits } from '../io/prepare-scene.js';
import { applyOverrides, loadScene, OverrideError, toRunOptions, type LoadedScene, type SceneOverrides } from '../io/scene-files.js';
import { SceneParamError, type SceneParams } from '../scene/parametric.js';
import { DEFAULT_FRAME_FORMAT, type FrameFormat } from '../scene/run-options.js';
import { buildSceneModel, type MeshResolver } from '../scene/build.js';
import { SceneError, type Scene } from '../scene/schema.js';
import { WorkError } from '../scene/work-estimate.js';
import type { RunSummary } from '../sim/records.js';
import { checkCheckpoint, frameInterval, INTERRUPTED, simulateSteps, type RunCheckpoint, type RunOptions } from '../sim/simulate.js';
import { overrideFlags, UsageError } from './args.js';
import { driveRun, signalExitCode, watchStopSignals, type StopWatch } from './interrupt.js';
import { createProgress, type TextSink } from './progress.js';

export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
}

/** Exit codes of the CLI; a run ended by Ctrl-C exits 130 (SIGTERM: 143), see interrupt.ts. */
export const EXIT = { ok: 0, failure: 1, usage: 2, stopped: 3 } as const;

/** A run that is ready to start: everything that can be wrong with the input has been checked. */
export interface PreparedRun {
  scene: Scene;
  source: string;
  model: Model;
  options: RunOptions;
  outDir: string;
  /** Frame files to write (--frames). */
  frames?: FrameFormat;
}

/** Applies the overrides, naming the flag in the error when one is bad. */
export function overrideScene(scene: Scene, overrides: SceneOverrides): Scene {
  try {
    return applyOverrides(scene, overrides);
  } catch (err) {
    if (err instanceof OverrideError) throw new UsageError(`${overrideFlags[err.field]}: ${err.message}`);
    throw err;
  }
}

/**
 * Refuses, before anything is built, a run without steps or beyond the work limits (exit 2). The message names the
 * flag or scene field to change, the estimate and the limit.
 */
function checkRunWork(scene: Scene, meshes: MeshResolver, flags: WorkFlags, source: string, runs = 1): void {
  try {
    checkSceneWork(scene, meshes, workLimits(flags), runs);
  } catch (err) {
    if (!(err instanceof WorkError)) throw err;
    const field = err.field;
    if (field === 'dt' || field === 'duration') {
      const flag = field === 'dt' ? flags.dt !== undefined : flags.duration !== undefined;
      throw new UsageError(`${flag ? `--${field}` : `${source}: ${field}`}: ${err.message}`);
    }
    const raise = field === 'steps' ? 'raise the limit with --max-steps N or --allow-large, or take a larger --dt or a shorter --duration' : 'lift the limits with --allow-large if the machine can take it';
    throw new UsageError(`${err.message}: ${raise}`);
  }
}

/**
 * The output folder may exist (its earlier outputs are replaced) or be creatable; it must be writable with some
 * space free. Checked before anything is written; `given` tells whether --out named it.
 */
function checkOutDir(dir: string, given: boolean): string {
  try {
    checkOutputDir(dir);
  } catch (err) {
    if (err instanceof OutputDirError) throw new UsageError(`${given ? '--out' : 'output folder (from the scene name; --out picks another)'}: ${err.message}`);
    throw err;
  }
  return dir;
}

/** loadScene with --scene-param values (and --dt for a parametric scene's step); a bad parameter names the flag. */
export function loadSceneArg(sceneArg: string, sceneParams: SceneParams | undefined, dt: number | undefined): LoadedScene {
  try {
    return loadScene(sceneArg, { params: sceneParams, dt });
  } catch (err) {
    if (err instanceof SceneParamError) throw new UsageError(`--scene-param${err.param ? ` ${err.param}` : ''}: ${err.message}`);
    throw err;
  }
}

export function prepareRun(sceneArg: string, overrides: SceneOverrides, out: string | undefined, cwd = process.cwd(), sceneParams?: SceneParams, work: WorkFlags = {}): PreparedRun {
  const loaded = loadSceneArg(sceneArg, sceneParams, overrides.dt);
  const scene = overrideScene(loaded.scene, overrides);
  const meshes = readOnceMeshes(loaded.baseDir);
  checkRunWork(scene, meshes, { ...work, dt: overrides.dt, duration: overrides.duration }, loaded.source);
  const model = buildSceneModel(scene, meshes);
  const options = toRunOptions(scene);
  const outDir = checkOutDir(resolve(cwd, out ?? join('out', `${scene.name}-${scene.integrator.name}`)), out !== undefined);
  return { scene, source: loaded.source, model, options, outDir };
}

export interface RunOutcome {
  summary: RunSummary;
  paths: RunOutputPaths;
  series: EnergySeries;
  frames: number;
  /** The Newton iteration limit of the run (solver.maxNewtonIterations). */
  newtonLimit: number;
  /** Where the last checkpoint was written, when checkpointing. */
  checkpoint?: { step: number; file: string };
  /** The frame files written. */
  frameFormat: FrameFormat;
}

/**
 * Runs a prepared run into its folder. Errors simulate() raises before its first record are input errors (SceneError).
 * With `checkpointEvery` the run state goes to <out>/checkpoint.json every that many steps (after the rows up to it
 * are on disk); with run.options.resume the outputs up to the checkpoint are kept and the run appends. Once
 * `stop` has seen a signal, the run ends after the step in progress (summary `stopped: "interrupted"`).
 */
export async function executeRun(run: PreparedRun, io: CliIo, opts: { quiet?: boolean; label?: string; checkpointEvery?: number; stop?: StopWatch } = {}): Promise<RunOutcome> {
  const output = new RunOutput(run.outDir, run.model, run.options, { scene: run.scene, source: run.source, frames: run.frames });
  const resume = run.options.resume;
  if (resume) {
    try {
      output.resumeAfter(resume.step, Math.floor(resume.step / frameInterval(run.options)));
    } catch (err) {
      throw new UsageError(`--resume: ${(err as Error).message}`);
    }
  }
  run.options.checkpointEvery = opts.checkpointEvery ?? 0;
  const totalSteps = Math.round(run.options.duration / run.options.h);
  const progress = createProgress(io.stderr, { label: opts.label ?? `${run.scene.name} ${run.options.integrator}`, totalSteps, duration: run.options.duration, startStep: resume?.step, quiet: opts.quiet });
  const write = output.observer;
  let checkpoint: RunOutcome['checkpoint'];
  let result;
  try {
    const steps = simulateSteps(run.model, run.options, {
      step(record) {
        write.step?.(record);
        progress.update(record);
      },
      frame: write.frame,
      checkpoint(cp) {
        output.flush();
        writeCheckpoint(output.paths.checkpoint, cp);
        checkpoint = { step: cp.step, file: output.paths.checkpoint };
      },
    });
    result = await driveRun(steps, () => opts.stop?.signal != null);
  } catch (err) {
    progress.stop();
    output.abort();
    if (!output.started) throw new SceneError((err as Error).message);
    throw err;
  } finally {
    progress.stop();
  }
  const paths = await output.finish(result.summary);
  return { summary: result.summary, paths, series: output.energySeries(), frames: output.frames, newtonLimit: run.options.solver.maxNewtonIterations, checkpoint, frameFormat: run.frames ?? DEFAULT_FRAME_FORMAT };
}

function shortPath(p: string, cwd: string): string {
  const r = relative(cwd, p);
  return r && !r.startsWith('..') ? r : p;
}

function num(x: number | null, digits = 6): string {
  return x === null || !Number.isFinite(x) ? 'n/a' : String(Number(x.toPrecision(digits)));
}

/** The few lines printed after a run. */
export function runSummaryText(outcome: RunOutcome, cwd = process.cwd()): string {
  const s = outcome.summary;
  const p = outcome.paths;
  const e0 = s.initialEnergy;
  const range = e0 !== 0 && Number.isFinite(e0) ? `, ratio range ${num(s.minEnergy / e0, 4)} to ${num(s.maxEnergy / e0, 4)}` : '';
  return [
    `${s.scene} / ${s.integrator}: ${s.steps} steps of h = ${num(s.h)} s (${num(s.duration)} s simulated) in ${s.wallSeconds.toFixed(2)} s wall, ${s.newtonIterations} Newton iterations`,
    `energy kept (final / initial total): ${num(s.energyKept)} (${num(s.finalEnergy)} J of ${num(e0)} J${range})${s.angularMomentumKept !== null ? `, angular momentum kept: ${num(s.angularMomentumKept)}` : ''}`,
    ...(s.newtonLimitSteps > 0 ? [`not converged: ${newtonLimitText(s, outcome.newtonLimit)}`] : []),
    `outputs in ${shortPath(p.dir, cwd)}:`,
    `  ${METRICS_FILE.padEnd(13)} ${shortPath(p.metrics, cwd)}`,
    `  ${BODIES_FILE.padEnd(13)} ${shortPath(p.bodies, cwd)} (per body, every frame)`,
    `  ${ENERGY_PLOT_FILE.padEnd(13)} ${shortPath(p.plot, cwd)}`,
    ...(existsSync(p.alphaPlot) ? [`  ${ALPHA_PLOT_FILE.padEnd(13)} ${shortPath(p.alphaPlot, cwd)}`] : []),
    `  ${(FRAMES_DIR + '/').padEnd(13)} ${shortPath(p.frames, cwd)} (${outcome.frames} ${frameExtensions(outcome.frameFormat).join(' + ').toUpperCase()} frames)`,
    ...(p.pvd ? [`  ${PVD_FILE.padEnd(13)} ${shortPath(p.pvd, cwd)} (ParaView: the VTU frames with their times)`] : []),
    `  ${SUMMARY_FILE.padEnd(13)} ${shortPath(p.summary, cwd)}`,
    '',
  ].join('\n');
}

/** "3 of 40 steps ended at the Newton iteration limit (100) (steps 1, 2, 5)": the steps accepted unconverged. */
export function newtonLimitText(s: RunSummary, limit: number): string {
  const more = s.newtonLimitSteps > s.newtonLimitFirstSteps.length ? ', ...' : '';
  return `${s.newtonLimitSteps} of ${s.steps} steps ended at the Newton iteration limit (${limit}) without meeting the tolerance (steps ${s.newtonLimitFirstSteps.join(', ')}${more})`;
}

/** Flags that bound the work of a run (work-estimate.ts); dt and duration say which values came from flags. */
interface WorkFlags {
  maxSteps?: number;
  allowLarge?: boolean;
  dt?: number;
  duration?: number;
}

export interface RunFlags {
  integrator?: string;
  dt?: number;
  duration?: number;
  out?: string;
  param?: Record<string, number | boolean>;
  linear?: 'auto' | LinearSolverName;
  tol?: number;
  frameRate?: number;
  /** Frame files: obj, vtu or both. */
  frames?: FrameFormat;
  quiet?: boolean;
  /** --scene-param values of a parametric scene. */
  sceneParam?: SceneParams;
  /** Exit 3 when a step ended at the Newton iteration limit. */
  strict?: boolean;
  /** Most steps a run may take (default WORK_LIMITS.steps). */
  maxSteps?: number;
  /** Lift every work limit. */
  allowLarge?: boolean;
  /** run only: save checkpoint.json every this many steps. */
  checkpointEvery?: number;
  /** run only: go on from <out>/checkpoint.json. */
  resume?: boolean;
}

/** Default --checkpoint-every of a resumed run. */
const RESUME_CHECKPOINT_EVERY = 10;

function overridesOf(flags: RunFlags): SceneOverrides {
  return { integrator: flags.integrator, dt: flags.dt, duration: flags.duration, params: flags.param, linear: flags.linear, tolerance: flags.tol, frameRate: flags.frameRate };
}

/** Listens for Ctrl-C / SIGTERM for the length of `body`, saying on stderr what the first one will do. */
async function withStopSignals<T>(io: CliIo, body: (stop: StopWatch) => Promise<T>): Promise<T> {
  const stop = watchStopSignals((signal) => io.stderr.write(`\nvivace: ${signal}: stopping after the step in progress and writing the outputs (${signal === 'SIGINT' ? 'Ctrl-C' : signal} again quits at once)\n`));
  try {
    return await body(stop);
  } finally {
    stop.dispose();
  }
}

/**
 * `vivace run`: exit code 0; 3 when the run stopped early, or (--strict) when a step ended at the Newton iteration
 * limit; 130 when Ctrl-C ended it (143 for SIGTERM). The outputs and summary are written in each case.
 */
export async function runCommand(sceneArg: string, flags: RunFlags, io: CliIo, cwd = process.cwd()): Promise<number> {
  const run = prepareRun(sceneArg, overridesOf(flags), flags.out, cwd, flags.sceneParam, flags);
  run.frames = flags.frames;
  if ((flags.resume || flags.checkpointEvery !== undefined) && !findIntegrator(run.options.integrator).resumable?.(run.options.params)) {
    throw new UsageError(`${flags.resume ? '--resume' : '--checkpoint-every'}: integrator '${run.options.integrator}' keeps history between steps, so it has no checkpoints (implicit-euler, a-1 and a-search without sparse have)`);
  }
  if (flags.resume) {
    run.options.resume = loadResumeCheckpoint(run);
    if (!flags.quiet) io.stderr.write(`resuming after step ${run.options.resume.step} (t = ${num(run.options.resume.step * run.options.h)} s) from ${shortPath(join(run.outDir, CHECKPOINT_FILE), cwd)}\n`);
  }
  const checkpointEvery = flags.checkpointEvery ?? (flags.resume ? RESUME_CHECKPOINT_EVERY : undefined);
  return withStopSignals(io, async (stop) => {
    const outcome = await executeRun(run, io, { quiet: flags.quiet, checkpointEvery, stop });
    const s = outcome.summary;
    if (!flags.quiet) io.stdout.write(runSummaryText(outcome, cwd));
    if (s.stopped === INTERRUPTED && stop.signal) {
      const resume = outcome.checkpoint ? `; checkpoint at step ${outcome.checkpoint.step}: go on with --resume` : '';
      io.stderr.write(`vivace: interrupted (${stop.signal}) after step ${s.steps} of ${Math.round(run.options.duration / run.options.h)}: outputs and ${SUMMARY_FILE} written${resume}\n`);
      return signalExitCode(stop.signal);
    }
    if (s.stopped) {
      io.stderr.write(`vivace: the run stopped early at ${s.stopped}\n`);
      return EXIT.stopped;
    }
    if (s.newtonLimitSteps > 0) {
      io.stderr.write(`vivace: ${flags.strict ? 'error (--strict)' : 'warning'}: ${newtonLimitText(s, outcome.newtonLimit)}\n`);
      if (flags.strict) return EXIT.stopped;
    }
    return EXIT.ok;
  });
}

/** <out>/checkpoint.json, checked against the run before any output is touched (errors name --resume and the file). */
function loadResumeCheckpoint(run: PreparedRun): RunCheckpoint {
  const file = join(run.outDir, CHECKPOINT_FILE);
  if (!existsSync(file)) throw new UsageError(`--resume: no ${CHECKPOINT_FILE} in ${run.outDir} (start the run with --checkpoint-every N to write one)`);
  try {
    const checkpoint = readCheckpoint(file);
    checkCheckpoint(checkpoint, run.model, run.options);
    for (const ext of frameExtensions(run.frames ?? DEFAULT_FRAME_FORMAT)) checkFramesKept(join(run.outDir, FRAMES_DIR), checkpoint.frames, ext);
    return checkpoint;
  } catch (err) {
    throw new UsageError(`--resume: ${file}: ${(err as Error).message.replace(`${file}: `, '')}`);
  }
}

/** Resuming appends frames: the `count` frames written before the checkpoint must all be there, or the run would have a gap. */
function checkFramesKept(framesDir: string, count: number, ext: 'obj' | 'vtu'): void {
  const frameName = (i: number) => frameFileName(i, ext);
  const present = new Set(existsSync(framesDir) ? readdirSync(framesDir) : []);
  const missing: number[] = [];
  for (let i = 0; i < count; i++) if (!present.has(frameName(i))) missing.push(i);
  if (missing.length === 0) return;
  const lost = existsSync(framesDir)
    ? `${framesDir} lacks ${missing.length} of the ${count} frames written before the checkpoint (${missing.slice(0, 5).map(frameName).join(', ')}${missing.length > 5 ? ', ...' : ''})`
    : `${framesDir} is missing (deleted?): it held the ${count} frames written before the checkpoint`;
  throw new Error(`${lost}; resuming would leave a gap in the frames: start the run again without --resume`);
}

export interface CompareFlags extends Omit<RunFlags, 'integrator' | 'param' | 'checkpointEvery' | 'resume'> {
  integrators: string[];
}

/**
 * `vivace compare`: every integrator into <out>/<integrator>/, then report.md and the plots. A run that stops early
 * is a result, reported in the table; exit code 1 only when a run failed with an unexpected error.
 */
export async function compareCommand(sceneArg: string, flags: CompareFlags, io: CliIo, cwd = process.cwd()): Promise<number> {
  const loaded = loadSceneArg(sceneArg, flags.sceneParam, flags.dt);
  const base = overrideScene(loaded.scene, { ...overridesOf({ ...flags, integrator: undefined, param: undefined }) });
  const scenes = flags.integrators.map((name) => {
    try {
      return overrideScene(base, { integrator: name });
    } catch (err) {
      throw new UsageError(`--integrators: ${(err as Error).message.replace(/^--integrator: /, '')}`);
    }
  });
  const meshes = readOnceMeshes(loaded.baseDir);
  for (const scene of scenes) checkRunWork(scene, meshes, flags, loaded.source, scenes.length);
  // The model does not depend on the integrator: building it once checks meshes and regions for every run.
  let firstModel: Model | undefined = buildSceneModel(base, meshes);
  const outDir = checkOutDir(resolve(cwd, flags.out ?? join('out', `${base.name}-compare`)), flags.out !== undefined);

  const entries: CompareEntry[] = [];
  const signal = await withStopSignals(io, async (stop) => {
    for (const [i, scene] of scenes.entries()) {
      const name = scene.integrator.name;
      const entry: CompareEntry = { integrator: name, dir: name };
      entries.push(entry);
      const model = firstModel ?? buildSceneModel(scene, meshes);
      firstModel = undefined;
      const run: PreparedRun = { scene, source: loaded.source, model, options: toRunOptions(scene), outDir: join(outDir, name), frames: flags.frames };
      let limitNote = '';
      try {
        const outcome = await executeRun(run, io, { quiet: flags.quiet, label: `[${i + 1}/${scenes.length}] ${name}`, stop });
        entry.summary = outcome.summary;
        entry.series = outcome.series;
        if (outcome.summary.newtonLimitSteps > 0) limitNote = `; ${newtonLimitText(outcome.summary, outcome.newtonLimit)}`;
      } catch (err) {
        // simulate()'s own input checks (a non-finite initial energy, say) fail every run alike: stop before any output.
        if (i === 0 && err instanceof SceneError) throw err;
        entry.error = (err as Error).message;
      }
      if (i === 0 && existsSync(outDir)) clearCompareOutputs(outDir);
      if (!flags.quiet || limitNote) io.stderr.write(`${name}: ${runStatus(entry)}${limitNote}\n`);
      if (stop.signal) {
        const skipped = scenes.slice(i + 1).map((s) => s.integrator.name);
        io.stderr.write(`vivace: interrupted (${stop.signal}) during ${name}${skipped.length ? `; not run: ${skipped.join(', ')}` : ''}; writing the report of the runs so far\n`);
        break;
      }
    }
    return stop.signal;
  });
  const info = { scene: base.name, source: loaded.source, h: base.dt, duration: base.duration };
  const paths = await writeCompareOutputs(outDir, info, entries);
  if (!flags.quiet) {
    const table = compareReportMarkdown(info, entries)
      .split('\n')
      .filter((line) => line.startsWith('|'));
    io.stdout.write(`${table.join('\n')}\n`);
    io.stdout.write(`report: ${shortPath(paths.report, cwd)}\nplots:  ${shortPath(paths.plot, cwd)}, ${shortPath(paths.components, cwd)}\n`);
  }
  if (signal) return signalExitCode(signal);
  if (entries.some((e) => e.error !== undefined)) return EXIT.failure;
  if (flags.strict && entries.some((e) => (e.summary?.newtonLimitSteps ?? 0) > 0)) {
    io.stderr.write('vivace: error (--strict): a run had steps that ended at the Newton iteration limit\n');
    return EXIT.stopped;
  }
  return EXIT.ok;
}
