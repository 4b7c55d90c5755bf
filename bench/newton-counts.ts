/**
 * Newton iteration counts of the first seconds of a few scenes, for studying the solver (iteration counts are
 * deterministic, so they can be compared on a loaded machine; time is reported as CPU seconds).
 *
 *   npx tsx bench/newton-counts.ts [--projection=clamp|abs|adaptive] [scene[:seconds][:integrator]] ...
 *
 * Defaults: 3 s of rotating-cube-soft, rotating-cube-stiff and twisted-bar, 2 s of bouncing-ball-medium, A-search.
 * Prints per scene: steps, Newton iterations (per step), linear-solver iterations, CPU seconds, and the energy at
 * the end relative to the initial energy (the energy behaviour must not change with the solver).
 * --projection sets solver.hessianProjection of every case (default: the scene's).
 */
import { applyOverrides, loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { simulate } from '../src/sim/simulate.js';
import type { Scene } from '../src/scene/schema.js';

const args = process.argv.slice(2);
const projectionArg = args.find((a) => a.startsWith('--projection='));
const hessianProjection = projectionArg?.slice('--projection='.length) as Scene['solver']['hessianProjection'] | undefined;
const specs = args.filter((a) => a !== projectionArg);
const cases = (specs.length ? specs : ['rotating-cube-soft:3', 'rotating-cube-stiff:3', 'twisted-bar:3', 'bouncing-ball-medium:2']).map((s) => {
  const [scene, seconds, integrator] = s.split(':');
  return { scene, seconds: seconds ? Number(seconds) : undefined, integrator: integrator || undefined };
});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (const c of cases) {
  const loaded = loadScene(c.scene);
  const scene = applyOverrides(loaded.scene, { duration: c.seconds, integrator: c.integrator, ...(hessianProjection ? { solver: { hessianProjection } } : {}) });
  const model = buildModel(scene, meshResolver(loaded.baseDir));
  const options = toRunOptions(scene);
  const c0 = cpu();
  const { summary } = simulate(model, options, {});
  const s = summary;
  console.log(
    `${c.scene.padEnd(22)} ${options.integrator.padEnd(9)} ${options.solver.hessianProjection.padEnd(8)} steps ${String(s.steps).padStart(5)}  Newton ${String(s.newtonIterations).padStart(6)} (${(s.newtonIterations / s.steps).toFixed(2)}/step)  linear ${String(s.linearIterations).padStart(6)}  CPU ${(cpu() - c0).toFixed(1).padStart(6)} s  energy kept ${s.energyKept.toFixed(6)}  min/max ${(s.minEnergy / s.initialEnergy).toFixed(4)}/${(s.maxEnergy / s.initialEnergy).toFixed(4)}${s.newtonLimitSteps ? `  limit steps ${s.newtonLimitSteps}` : ''}${s.stopped ? `  STOPPED ${s.stopped}` : ''}`,
  );
}
