/**
 * One benchmark case in its own process (so peak memory is the case's own): loads a scene, runs it without writing
 * outputs, prints the RunSummary as one JSON line on stdout and a progress line every ~10% of the steps on stderr
 * (the contact scenes run for tens of minutes).
 * Usage: tsx bench/case.ts <scene> <integrator> [dt] [linear] [checkpoint file]
 * With a checkpoint file the case saves its state there after every step and, when the file exists, goes on from
 * it: a case too long for one sitting (the bunny splash) is finished by running the same command again. Each step
 * also appends a line to <checkpoint file>.steps.csv (Newton iterations, seconds, contacts, energies) to see
 * where a long case spends its time.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { LINEAR_SOLVER_NAMES, type LinearSolverName } from '../src/math/linear-solver.js';
import { buildModel } from '../src/scene/build.js';
import { applyOverrides, loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { simulate } from '../src/sim/simulate.js';
import '../src/sim/node-wasm-features.js';
import '../src/sim/node-threads.js';
import { createProgress } from '../src/cli/progress.js';
import { readCheckpoint, writeCheckpoint } from '../src/io/checkpoint.js';

const [sceneName, integrator, dt, linear, checkpointFile] = process.argv.slice(2);
const loaded = loadScene(sceneName);
const scene = applyOverrides(loaded.scene, {
  integrator,
  dt: dt ? Number(dt) : undefined,
  linear: linear === 'auto' || LINEAR_SOLVER_NAMES.includes(linear as LinearSolverName) ? (linear as 'auto' | LinearSolverName) : undefined,
});
const model = buildModel(scene, meshResolver(loaded.baseDir));
const options = toRunOptions(scene);
if (checkpointFile) {
  options.checkpointEvery = 1;
  if (existsSync(checkpointFile)) {
    options.resume = readCheckpoint(checkpointFile);
    process.stderr.write(`${sceneName} ${integrator}: resuming after step ${options.resume.step} from ${checkpointFile}\n`);
  }
}
const progress = createProgress(process.stderr, { label: `${sceneName} ${integrator}`, totalSteps: Math.round(options.duration / options.h), duration: options.duration, startStep: options.resume?.step });
const stepLog = checkpointFile ? `${checkpointFile}.steps.csv` : null;
if (stepLog && !options.resume) appendFileSync(stepLog, 'step,t,newton,seconds,active_contacts,min_distance,inverted,total,target\n');
const { summary } = simulate(model, options, {
  step(record) {
    progress.update(record);
    // Warnings (a Newton solve that hit its iteration limit, say) go to the log: the JSON summary only counts them.
    if (record.warning) process.stderr.write(`${sceneName} ${integrator}: step ${record.step}: ${record.warning}\n`);
    if (stepLog && record.step > 0) {
      const r = record;
      appendFileSync(stepLog, `${r.step},${r.t},${r.newtonIterations},${(r.wallMs / 1000).toFixed(3)},${r.activeContacts},${r.minDistance},${r.inverted},${r.total},${r.target}\n`);
    }
  },
  checkpoint: checkpointFile ? (cp) => writeCheckpoint(checkpointFile, cp) : undefined,
});
progress.stop();
process.stdout.write(`${JSON.stringify(summary)}\n`);
