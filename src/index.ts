/**
 * `vivace`: the library API in Node. Everything of `vivace/core` (core.ts), plus scenes by name or file, meshes
 * from files, the command line's overrides and work limits, and its output folder (run-scene.ts).
 */

export * from './core.js';
// Relaxed SIMD for the dense kernel where Node 20 keeps it behind a flag.
import './sim/node-wasm-features.js';
// Worker threads for the element loops (solver.threads): Node's worker_threads.
import './sim/node-threads.js';
export { loadScene, runScene, type LoadSceneOptions, type RunSceneOptions, type SceneRunWithOutputs } from './api/run-scene.js';
export { listScenes, meshResolver, OverrideError, type LoadedScene, type SceneListing } from './io/scene-files.js';
export type { RunOutputPaths } from './io/run-output.js';
export { SceneParamError, type SceneParams } from './scene/parametric.js';
export { WORK_LIMITS, WorkError, type WorkLimits } from './scene/work-estimate.js';
