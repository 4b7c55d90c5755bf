/**
 * `vivace/core`: the simulator without files or Node: validate a scene object, build it, run it step by step.
 * Browser-safe (nothing here imports a node: module; a test bundles it for the browser and runs it without Node's
 * globals). `vivace` (index.ts) adds built-in scenes, scene and mesh files, the command line's checks and outputs.
 */

export { simulateScene, type SceneRun, type SimulateSceneOptions, type StepCallbacks } from './api/simulate-scene.js';
export { validateScene } from './scene/validate.js';
export { SceneError, type Scene, type SceneInput } from './scene/schema.js';
export { buildModel, type MeshResolver } from './scene/build.js';
export { DEFAULT_FRAME_FORMAT, FRAME_FORMATS, toRunOptions, type FrameFormat } from './scene/run-options.js';
export { simulate, simulateSteps, frameInterval, INTERRUPTED, type RunObserver, type RunOptions, type RunResult, type SolverOptions } from './sim/simulate.js';
export type { RunSummary, StepRecord } from './sim/records.js';
export type { NewtonIteration } from './solver/newton.js';
export { frameGeometry } from './sim/frame-geometry.js';
export { integrators, integratorNames, findIntegrator, type IntegratorSpec, type ParamSpec } from './integrators/registry.js';
export type { IntegratorParams, IntegratorState } from './integrators/integrator.js';
export type { Model } from './model/model.js';
export type { TetMesh } from './mesh/tet-mesh.js';
