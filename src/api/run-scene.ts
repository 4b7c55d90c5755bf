/**
 * The library's run in Node: a built-in scene by name, a scene file or a scene object, with the command line's
 * overrides, work limits and mesh files, and optionally the command line's output folder. Errors name the option
 * (OverrideError, WorkError, SceneParamError: all SceneErrors) and leave nothing written.
 */

import { resolve } from 'node:path';
import type { IntegratorParams } from '../integrators/integrator.js';
import { checkOutputDir, OutputDirError } from '../io/output-dir.js';
import { prepareScene, workLimits } from '../io/prepare-scene.js';
import { RunOutput, type RunOutputPaths } from '../io/run-output.js';
import { loadScene as loadSceneFile, type LoadedScene } from '../io/scene-files.js';
import type { SceneParams } from '../scene/parametric.js';
import { FRAME_FORMATS, type FrameFormat } from '../scene/run-options.js';
import { SceneError, type Scene, type SceneInput } from '../scene/schema.js';
import { validateScene } from '../scene/validate.js';
import { WorkError } from '../scene/work-estimate.js';
import { driveRun } from '../sim/drive-run.js';
import { inputError, startCallbackRun, type SceneRun, type StepCallbacks } from './simulate-scene.js';

export interface LoadSceneOptions {
  /** Parameters of a parametric scene (`particle-wall`); an error for any other scene. */
  sceneParams?: SceneParams;
  /** Folder that a scene object's relative mesh paths are resolved against (default: the current folder). */
  baseDir?: string;
}

/**
 * A built-in scene by name (`vivace scenes` lists them), a scene JSON file by path, or a scene object, validated
 * as `vivace run` validates a scene file (same messages).
 */
export function loadScene(scene: string | SceneInput, options: LoadSceneOptions = {}): LoadedScene {
  if (typeof scene === 'string') return loadSceneFile(scene, { params: options.sceneParams });
  if (options.sceneParams !== undefined) throw new SceneError('sceneParams: only a parametric scene, given by name, takes parameters');
  const source = 'scene object';
  return { scene: validateScene(scene, source), baseDir: resolve(options.baseDir ?? '.'), source };
}

export interface RunSceneOptions extends StepCallbacks, LoadSceneOptions {
  /** Time integrator (`vivace scenes --integrators`); a new integrator starts from its default parameters. */
  integrator?: string;
  /** Integrator parameters, merged over the scene's. */
  params?: IntegratorParams;
  /** Time step (s). */
  dt?: number;
  /** Simulated time (s). */
  duration?: number;
  /** Output frames per second (onFrame, and the frames in `out`). */
  frameRate?: number;
  /** Solver settings, merged over the scene's: linear, tolerance, maxNewtonIterations, cgTolerance, projectPsd, hessianProjection. */
  solver?: Partial<Scene['solver']>;
  /** Write the outputs of `vivace run` into this folder: metrics.csv, bodies.csv, frames/, energy.svg, summary.json. */
  out?: string;
  /** The frame files written into `out`: 'obj', 'vtu' (with frames.pvd) or 'both' (default DEFAULT_FRAME_FORMAT, 'obj'). */
  frames?: FrameFormat;
  /** Ends the run after the step in progress once aborted, as onStep returning false does. */
  signal?: AbortSignal;
  /** Refuse a run of more steps (default 1,000,000). */
  maxSteps?: number;
  /** Lift the work limits (steps, estimated memory and output size). */
  allowLarge?: boolean;
}

export interface SceneRunWithOutputs extends SceneRun {
  /** Where the outputs are, when `out` was given. */
  outputs?: RunOutputPaths;
}

function isLoaded(scene: string | SceneInput | LoadedScene): scene is LoadedScene {
  return typeof scene === 'object' && scene !== null && 'baseDir' in scene && 'source' in scene;
}

/**
 * Loads (unless given loadScene's result), applies the options, checks the work, builds and runs the scene; between
 * steps the event loop turns now and then, so `signal` and timers work. With `out`, writes the command line's
 * outputs there.
 */
export async function runScene(scene: string | SceneInput | LoadedScene, options: RunSceneOptions = {}): Promise<SceneRunWithOutputs> {
  // A parametric scene with a `dt` parameter takes the run's time step (as `vivace run --dt` does).
  const loaded = isLoaded(scene) ? scene : typeof scene === 'string' ? loadSceneFile(scene, { params: options.sceneParams, dt: options.dt }) : loadScene(scene, options);
  const { integrator, params, dt, duration, frameRate, solver } = options;
  let prepared;
  try {
    prepared = prepareScene(loaded, { integrator, params, dt, duration, frameRate, solver }, workLimits(options));
  } catch (err) {
    if (err instanceof WorkError && err.field !== 'dt' && err.field !== 'duration') {
      throw new WorkError(err.field, `${err.message}: ${err.field === 'steps' ? 'raise the limit with maxSteps or allowLarge: true' : 'lift the limits with allowLarge: true if the machine can take it'}`);
    }
    throw err;
  }
  if (options.frames !== undefined && !FRAME_FORMATS.includes(options.frames)) {
    throw new SceneError(`frames: expected one of ${FRAME_FORMATS.map((f) => `'${f}'`).join(', ')}, got ${JSON.stringify(options.frames)}`);
  }
  const outDir = options.out === undefined ? undefined : resolve(options.out);
  if (outDir) {
    try {
      checkOutputDir(outDir);
    } catch (err) {
      throw err instanceof OutputDirError ? new SceneError(`out: ${err.message}`) : err;
    }
  }
  const output = outDir ? new RunOutput(outDir, prepared.model, prepared.options, { scene: prepared.scene, source: prepared.source, frames: options.frames }) : undefined;
  const run = startCallbackRun(prepared.model, prepared.options, options, output?.observer);
  let result;
  try {
    result = await driveRun(run.steps, () => run.stopRequested || options.signal?.aborted === true);
  } catch (err) {
    output?.abort();
    throw inputError(err, run);
  }
  const outputs = output ? await output.finish(result.summary) : undefined;
  return { scene: prepared.scene, runOptions: prepared.options, model: prepared.model, summary: result.summary, metrics: run.metrics, state: result.state, outputs };
}
