/**
 * Saves a scene's state after some steps and runs more steps from it, to study a few hard steps (a landing, say)
 * without simulating the minutes before them every time.
 *
 *   npx tsx bench/resume.ts save <scene> <steps> <file> [<from>]
 *                                                         run <steps> steps (from the state in <from> if given),
 *                                                         write positions and velocities to <file>
 *   npx tsx bench/resume.ts run <scene> <steps> <file>    start from <file>, run <steps> steps, print per-step
 *                                                         Newton iterations, wall and CPU seconds and energies
 *                                                         (17 digits), then the time split
 *
 * Either command takes --projection=clamp|abs|adaptive (solver.hessianProjection; default: the scene's), and
 * --trace, which prints a line per Newton iteration: the objective after it (12 digits), the Newton step and the
 * velocity residual before it in tolerances (|dx|_inf / (tol h) and |M^-1 g|_M / (tol h)), the filter's bound and
 * the fraction taken (0: none), whether the exact elastic Hessian was used, its linear iterations, the active
 * contact pairs and the smallest distance at the point reached, and (from the second iteration on) where the Newton
 * direction moved most: the node with the largest motion divided by the fraction taken, its mass, that motion, and
 * how many nodes it moved by more than 10 tolerances (a direction that moves hundreds of nodes by centimetres, cut to
 * a percent by the filter, is the sign of a quadratic model blind to the contacts ahead).
 * The resumed run starts its clock at t = 0 and takes its initial energy H0 from the saved state, so energy
 * targets and schedules differ from the full run's; the Newton work of the steps is what this is for.
 * The file holds the positions then the velocities as little-endian float64.
 */
import { writeFileSync } from 'node:fs';
import { readSavedState } from './saved-state.js';
import { applyOverrides, loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { contactPositions } from '../src/model/model.js';
import { simulate } from '../src/sim/simulate.js';
import '../src/sim/node-wasm-features.js';
import '../src/sim/node-threads.js';
import type { NewtonIteration } from '../src/solver/newton.js';

const usage = 'usage: npx tsx bench/resume.ts save|run <scene> <steps> <file> [<from> (save only)] [--projection=clamp|abs|adaptive] [--trace]';
const args = process.argv.slice(2);
const projectionArg = args.find((a) => a.startsWith('--projection='));
const trace = args.includes('--trace');
const [mode, sceneName, stepsText, file, from] = args.filter((a) => a !== projectionArg && a !== '--trace');
const steps = Number(stepsText);
if ((mode !== 'save' && mode !== 'run') || !sceneName || !file || !Number.isInteger(steps) || steps < 1) {
  console.error(usage);
  process.exit(2);
}

const loaded = loadScene(sceneName);
const baseDir = loaded.baseDir;
const scene = projectionArg
  ? applyOverrides(loaded.scene, { solver: { hessianProjection: projectionArg.slice('--projection='.length) } } as Parameters<typeof applyOverrides>[1])
  : loaded.scene;
const model = buildModel(scene, meshResolver(baseDir));
const options = toRunOptions(scene);
options.duration = steps * options.h;
const n = model.x0.length;

const input = mode === 'run' ? file : from;
if (input) {
  const state = readSavedState(input, sceneName, n);
  model.x0.set(state.x);
  model.v0.set(state.v);
}

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
let last = performance.now();
let lastCpu = cpuNow();
const tolerance = options.solver.tolerance;
let previous: Float64Array | null = null;
/** The node the last Newton direction moved most (motion over the fraction taken) and how many moved > 10 tol. */
const directionNote = (it: NewtonIteration, x: Float64Array): string => {
  const before = previous;
  previous = Float64Array.from(x);
  if (before === null || !(it.alpha > 0)) return '';
  let largest = 0;
  let node = 0;
  let moved = 0;
  for (let i = 0; i < x.length / 3; i++) {
    const m = Math.hypot(x[3 * i] - before[3 * i], x[3 * i + 1] - before[3 * i + 1], x[3 * i + 2] - before[3 * i + 2]) / it.alpha;
    if (m > largest) {
      largest = m;
      node = i;
    }
    if (m > 10 * tolerance * options.h) moved++;
  }
  return `; direction: node ${node} (${(model.mass[3 * node] * 1e6).toPrecision(3)} mg) ${(largest * 1e3).toPrecision(3)} mm, ${moved} nodes > 10 tol`;
};
const traceLine = (step: number, it: NewtonIteration, x: Float64Array): void => {
  const note = directionNote(it, x);
  const contact = model.contact ? model.contact.barrier.activeContacts(contactPositions(model, x), null) : { count: 0, minDistance: NaN };
  console.log(
    `  step ${step} it ${it.iteration}: E ${it.energy.toPrecision(12)}, step ${(it.stepNorm / tolerance).toPrecision(3)} tol, residual ${(it.residualNorm / tolerance).toPrecision(3)} tol, ` +
      `filter ${it.filterBound.toExponential(2)}, alpha ${it.alpha.toExponential(2)}${it.exactHessian ? ', exact Hessian' : ''}, ${it.linearIterations} linear, ` +
      `${contact.count} active pairs, closest ${contact.minDistance.toExponential(4)} m${note}`,
  );
};

const { summary, state } = simulate(model, options, {
  ...(trace ? { newtonIteration: traceLine } : {}),
  step(record) {
    previous = null; // the next step's Newton starts elsewhere (its predictor): its first direction is unknown here
    if (record.step === 0) return;
    const now = performance.now();
    const cpu = cpuNow();
    // Energies to 17 digits, so two builds can be compared to the last bit.
    const contact = record.potentials.get('contact');
    console.log(
      `step ${record.step}: ${record.newtonIterations} Newton, ${((now - last) / 1000).toFixed(1)} s, ${(cpu - lastCpu).toFixed(2)} CPU s, ` +
        `${record.activeContacts} active pairs, H ${record.total.toPrecision(17)}${contact === undefined ? '' : `, contact ${contact.toPrecision(17)}`}`,
    );
    last = now;
    lastCpu = cpu;
  },
});

if (summary.stopped) {
  // The state is not the one asked for: say why, and write no file (a save would otherwise look complete).
  console.error(`run stopped at ${summary.stopped}`);
  process.exitCode = 1;
}
if (mode === 'save' && !summary.stopped) {
  const out = new Float64Array(2 * n);
  out.set(state.x);
  out.set(state.v, n);
  writeFileSync(file, new Uint8Array(out.buffer));
  console.log(`wrote ${file} (state after ${steps} steps of ${sceneName})`);
}
const split = Object.entries(summary.timing)
  .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(1)}`)
  .join(', ');
console.log(`${summary.newtonIterations} Newton iterations, ${summary.wallSeconds.toFixed(1)} s wall, ${summary.cpuSeconds?.toFixed(1) ?? "?"} s CPU`);
// The invariants (the run itself stops on a crossing pair at an output frame): inverted tets and the closest contact.
console.log(`most tets inverted at once ${summary.maxInverted}, smallest contact distance ${summary.minDistance?.toExponential(3) ?? 'none'} m`);
console.log(`time split (s): ${split}`);
