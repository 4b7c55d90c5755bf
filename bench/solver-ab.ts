/**
 * Times this checkout's sparse Cholesky against another checkout's on the same Newton matrix, both loaded into one
 * process and called in alternation, so that a shared, noisy machine slows both alike:
 *
 *   npx tsx bench/solver-ab.ts <other checkout> [scene] [--rounds N]
 *
 * (for example `git worktree add --detach /tmp/base HEAD~1`, with its node_modules linked to this one's). The matrix
 * is the scene's first Newton matrix (M + h^2-scaled projected Hessian at the initial state, as bench/solvers.ts;
 * default scene bunny-stairs). Each round times, for each checkout in turn, one factorization, the first solve with
 * its float32 copy (which may make the copy), another such solve and one with the float64 factor; the medians and minima of the rounds are printed (CPU ms of the whole
 * process, so run it on an otherwise idle core), with a checksum of each side's solution. `node --cpu-prof` on this
 * script tells the two WebAssembly kernel modules apart (each has its own module hash), which times the kernel
 * functions of both versions.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { IncrementalPotential } from '../src/solver/incremental-potential.js';
import { LdltSolver } from '../src/math/ldlt.js';
import '../src/sim/node-wasm-features.js';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 40;
const positional = roundsAt >= 0 ? args.filter((_, i) => i !== roundsAt && i !== roundsAt + 1) : args;
const [other, sceneName = 'bunny-stairs'] = positional;
if (!other || !(rounds >= 1)) {
  console.error('usage: npx tsx bench/solver-ab.ts <other checkout> [scene] [--rounds N]');
  process.exit(2);
}

const { scene, baseDir } = loadScene(sceneName);
const model = buildModel(scene, meshResolver(baseDir));
const ip = new IncrementalPotential(model);
ip.weight = scene.dt * scene.dt;
const H = ip.assembleHessian(model.x0, true);

type Solver = Pick<LdltSolver, 'factor' | 'solveFactored'>;
const otherModule = (await import(pathToFileURL(resolve(other, 'src/math/ldlt.ts')).href)) as { LdltSolver: new (options: { compactCopy: boolean }) => Solver };
const sides: { name: string; solver: Solver }[] = [
  { name: `this checkout`, solver: new LdltSolver({ compactCopy: true }) },
  { name: resolve(other), solver: new otherModule.LdltSolver({ compactCopy: true }) },
];

const n = model.x0.length;
const b = new Float64Array(n).map((_, i) => Math.sin(i));
const x = new Float64Array(n);
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const timed = (work: () => void): number => {
  const t0 = cpuMs();
  work();
  return cpuMs() - t0;
};
const times = sides.map(() => ({ factor: [] as number[], first: [] as number[], single: [] as number[], double: [] as number[] }));
for (const side of sides) side.solver.factor(H); // warm-up: analysis, memory, compilation
for (let round = 0; round < rounds; round++) {
  sides.forEach((side, s) => {
    times[s].factor.push(timed(() => side.solver.factor(H)));
    // the first float32 solve after a factorization may make the float32 copy (as PCG's first iteration does)
    times[s].first.push(timed(() => side.solver.solveFactored(b, x, true)));
    times[s].single.push(timed(() => side.solver.solveFactored(b, x, true)));
    times[s].double.push(timed(() => side.solver.solveFactored(b, x)));
  });
}
const median = (a: number[]): number => [...a].sort((p, q) => p - q)[a.length >> 1];
const show = (a: number[]): string => `${median(a).toFixed(2)} (min ${Math.min(...a).toFixed(2)})`;
console.log(`${sceneName}: ${n} unknowns, ${rounds} rounds; CPU ms, median (min)`);
sides.forEach((side, s) => {
  side.solver.solveFactored(b, x);
  let checksum = 0;
  for (let i = 0; i < n; i++) checksum += x[i];
  const t = times[s];
  console.log(
    `${side.name}: factor ${show(t.factor)}, first float32 solve ${show(t.first)}, float32 solve ${show(t.single)}, ` +
      `float64 solve ${show(t.double)}; checksum ${checksum.toPrecision(14)}`,
  );
});
