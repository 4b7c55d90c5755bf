/**
 * One benchmark case in its own process (so peak memory is the case's own): loads a scene, runs it without writing
 * outputs, prints the RunSummary as one JSON line on stdout and a progress line every ~10% of the steps on stderr
 * (the contact scenes run for tens of minutes).
 * Usage: tsx bench/case.ts <scene> <integrator> [dt] [linear]
 */
import { LINEAR_SOLVER_NAMES, type LinearSolverName } from '../src/math/linear-solver.js';
import { buildModel } from '../src/scene/build.js';
import { applyOverrides, loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { simulate } from '../src/sim/simulate.js';
import { createProgress } from '../src/cli/progress.js';

const [sceneName, integrator, dt, linear] = process.argv.slice(2);
const loaded = loadScene(sceneName);
const scene = applyOverrides(loaded.scene, {
  integrator,
  dt: dt ? Number(dt) : undefined,
  linear: linear === 'auto' || LINEAR_SOLVER_NAMES.includes(linear as LinearSolverName) ? (linear as 'auto' | LinearSolverName) : undefined,
});
const model = buildModel(scene, meshResolver(loaded.baseDir));
const options = toRunOptions(scene);
const progress = createProgress(process.stderr, { label: `${sceneName} ${integrator}`, totalSteps: Math.round(options.duration / options.h), duration: options.duration });
const { summary } = simulate(model, options, { step: (record) => progress.update(record) });
progress.stop();
process.stdout.write(`${JSON.stringify(summary)}\n`);
