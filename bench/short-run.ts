/**
 * A short run of a built-in scene for before/after comparisons of the element kernels: prints CPU seconds, Newton
 * iterations, the time split, the final energy to full precision and a digest of every step's total energy and
 * Newton count (so a change meant to be exact can be seen to leave the trajectory unchanged, bit for bit).
 * With threads (solver.threads) it also prints the calling thread's own CPU seconds (Linux /proc, 10 ms ticks): the
 * critical path of the threaded element loops, which the machine's other load does not inflate as wall time.
 * Usage: npx tsx bench/short-run.ts <scene> [duration s] [threads] [--projection=clamp|abs|adaptive]
 * (--projection sets solver.hessianProjection; default: the scene's).
 */
import { readFileSync } from 'node:fs';
import { buildModel } from '../src/scene/build.js';
import { applyOverrides, loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { simulate } from '../src/sim/simulate.js';
import '../src/sim/node-wasm-features.js';
import '../src/sim/node-threads.js';

const args = process.argv.slice(2);
const projectionArg = args.find((a) => a.startsWith('--projection='));
const [sceneName, duration = '1', threads] = args.filter((a) => a !== projectionArg);
if (!sceneName) throw new Error('usage: tsx bench/short-run.ts <scene> [duration s] [threads] [--projection=clamp|abs|adaptive]');
const loaded = loadScene(sceneName);
const solver = {
  ...(threads === undefined ? {} : { threads: Number(threads) }),
  ...(projectionArg ? { hessianProjection: projectionArg.slice('--projection='.length) } : {}),
};
const scene = applyOverrides(loaded.scene, { duration: Number(duration), solver } as Parameters<typeof applyOverrides>[1]);
const model = buildModel(scene, meshResolver(loaded.baseDir));
/** CPU seconds of the main thread (user + system) from /proc/self/task/<pid>/stat; NaN where there is none. */
function mainThreadCpu(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}
const main0 = mainThreadCpu();
const cpu0 = process.cpuUsage();
// FNV-1a over the bytes of each step's total energy and Newton count.
const bits = new Float64Array(2);
const bytes = new Uint8Array(bits.buffer);
let digest = 0x811c9dc5;
const { summary } = simulate(model, toRunOptions(scene), {
  step(record) {
    bits[0] = record.total;
    bits[1] = record.newtonIterations;
    for (const b of bytes) digest = Math.imul(digest ^ b, 0x01000193) >>> 0;
  },
});
const cpu = process.cpuUsage(cpu0);
const mainCpu = mainThreadCpu() - main0;
const t = summary.timing;
console.log(
  `${sceneName} ${duration} s: cpu ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s (main thread ${mainCpu.toFixed(2)} s), wall ${summary.wallSeconds.toFixed(2)} s, ` +
    `newton ${summary.newtonIterations}, split assembly/solve/line search/other ${[t.assembly, t.linearSolve, t.lineSearch, t.other].map((s) => s.toFixed(2)).join(' / ')} s, ` +
    `final energy ${summary.finalEnergy.toPrecision(17)}, digest ${digest.toString(16)}`,
);
