/**
 * The library's run of a scene: the command line's time loop (simulateSteps) with the caller's per-step callback,
 * an early stop and every step's record kept. Pure (no files, no Node), so it runs in a browser as in Node;
 * run-scene.ts adds scene files, overrides, the work limits and the output folder.
 */

import type { IntegratorState } from '../integrators/integrator.js';
import type { Model } from '../model/model.js';
import { buildSceneModel, type MeshResolver } from '../scene/build.js';
import { toRunOptions } from '../scene/run-options.js';
import { SceneError, type Scene, type SceneInput } from '../scene/schema.js';
import { validateScene } from '../scene/validate.js';
import type { RunSummary, StepRecord } from '../sim/records.js';
import { simulateSteps, type RunObserver, type RunOptions, type RunResult } from '../sim/simulate.js';

export interface StepCallbacks {
  /**
   * Called with every step's record, step 0 (the initial state) first. Returning `false` ends the run after this
   * step, as a complete run ends: the summary says `stopped: 'interrupted'`.
   */
  onStep?: (record: StepRecord) => boolean | void;
  /** Every output frame (the scene's frameRate; frame 0 is the initial state): x and v are live, copy what you keep. */
  onFrame?: (frame: number, t: number, x: Float64Array, v: Float64Array) => void;
  /** Keep every step's record in the result's `metrics` (default true; false for very long runs). */
  keepMetrics?: boolean;
}

export interface SimulateSceneOptions extends StepCallbacks {
  /** Tet meshes of bodies whose mesh is a file or a shipped mesh (without it, only box, particle and chain bodies). */
  meshes?: MeshResolver;
}

/** What a run gives back. */
export interface SceneRun {
  /** The scene as run: validated, every default filled in, every option applied. */
  scene: Scene;
  /** The simulate() options derived from it. */
  runOptions: RunOptions;
  /** The built model: nodes, masses, energies, bodies. */
  model: Model;
  /** The run's totals, as in summary.json. */
  summary: RunSummary;
  /** One record per step, step 0 first (the rows of metrics.csv); empty with keepMetrics: false. */
  metrics: StepRecord[];
  /** The final state: time, positions and velocities (3 per node, node-major). */
  state: IntegratorState;
}

/** A run started with the caller's callbacks; `writer` (the output folder's observer) sees each record first. */
export interface CallbackRun {
  steps: Generator<number, RunResult, boolean | undefined>;
  metrics: StepRecord[];
  /** True once onStep returned false. */
  readonly stopRequested: boolean;
  /** True once the initial state was reported: an error before it comes from the input, not from the run. */
  readonly started: boolean;
}

export function startCallbackRun(model: Model, options: RunOptions, callbacks: StepCallbacks = {}, writer: RunObserver = {}): CallbackRun {
  const metrics: StepRecord[] = [];
  const keep = callbacks.keepMetrics ?? true;
  let stopRequested = false;
  let started = false;
  const observer: RunObserver = {
    step(record) {
      started = true;
      writer.step?.(record);
      if (keep) metrics.push(record);
      if (callbacks.onStep?.(record) === false) stopRequested = true;
    },
    frame(index, t, x, v) {
      writer.frame?.(index, t, x, v);
      callbacks.onFrame?.(index, t, x, v);
    },
  };
  return {
    steps: simulateSteps(model, options, observer),
    metrics,
    get stopRequested() {
      return stopRequested;
    },
    get started() {
      return started;
    },
  };
}

/** simulateSteps refuses some input only when it starts (time step, parameters, an intersecting start): a SceneError then. */
export function inputError(err: unknown, run: CallbackRun): unknown {
  return run.started || err instanceof SceneError ? err : new SceneError((err as Error).message);
}

/**
 * Validates the scene object (the scene file schema, same messages), builds it and runs it to its end or until
 * onStep returns false. Synchronous: in a browser, call it from a Web Worker.
 */
export function simulateScene(input: SceneInput, options: SimulateSceneOptions = {}): SceneRun {
  const scene = validateScene(input);
  const model = buildSceneModel(scene, options.meshes);
  const runOptions = toRunOptions(scene);
  const run = startCallbackRun(model, runOptions, options);
  let result: RunResult;
  try {
    let next = run.steps.next();
    while (!next.done) next = run.steps.next(run.stopRequested);
    result = next.value;
  } catch (err) {
    throw inputError(err, run);
  }
  return { scene, runOptions, model, summary: result.summary, metrics: run.metrics, state: result.state };
}
