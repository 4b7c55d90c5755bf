/**
 * Times one Newton iteration's elastic assembly (energy + gradient + projected Hessian) on box grids. Successive
 * repetitions alternate between two states, as successive Newton iterations do, so per-tet caches (the corotated
 * SVD) are used the way a solve uses them: the energy at a new point, then gradient and Hessian at the same point.
 * Run: npx tsx bench/elastic-assembly.ts [model ...] [--grid NX,NY,NZ ...] [--threads N]
 * With --threads N > 1 the loops run on N threads (worker_threads); CPU ms then add up over the threads, and the
 * main thread's own CPU ms (the critical path, mean over the repetitions) and wall ms say what threads gain.
 * (default: all models; grids 10x10x10 and 20x20x10 cells, 6 tets each = 6000 and 24000 tets). Times one model
 * per run for the numbers a one-material simulation sees: several models in one process make the element loop's
 * material calls polymorphic.
 */
import { readFileSync } from 'node:fs';
import { ElasticTets } from '../src/energies/elastic-tets.js';
import { MATERIAL_MODELS, createMaterial, type MaterialModel } from '../src/energies/materials.js';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import '../src/sim/node-wasm-features.js';
import '../src/sim/node-threads.js';
import { threadPoolFor } from '../src/solver/threads.js';

/** Unit-spaced grid of nx x ny x nz cells, 6 Kuhn tets per cell, positively oriented. */
function boxGrid(nx: number, ny: number, nz: number): { X: Float64Array; tets: Uint32Array } {
  const node = (i: number, j: number, k: number) => i + (nx + 1) * (j + (ny + 1) * k);
  const X = new Float64Array(3 * (nx + 1) * (ny + 1) * (nz + 1));
  for (let k = 0; k <= nz; k++)
    for (let j = 0; j <= ny; j++)
      for (let i = 0; i <= nx; i++) X.set([i * 0.01, j * 0.01, k * 0.01], 3 * node(i, j, k));
  const tets: number[] = [];
  const perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
  for (let k = 0; k < nz; k++)
    for (let j = 0; j < ny; j++)
      for (let i = 0; i < nx; i++) {
        const corner = (c: number) => node(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
        for (const p of perms) {
          const c1 = 1 << p[0];
          const c2 = c1 | (1 << p[1]);
          const tet = [corner(0), corner(c1), corner(c2), corner(7)];
          const a = [0, 1, 2].map((r) => X[3 * tet[1] + r] - X[3 * tet[0] + r]);
          const b = [0, 1, 2].map((r) => X[3 * tet[2] + r] - X[3 * tet[0] + r]);
          const c = [0, 1, 2].map((r) => X[3 * tet[3] + r] - X[3 * tet[0] + r]);
          const det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
          if (det < 0) tets.push(tet[0], tet[2], tet[1], tet[3]);
          else tets.push(...tet);
        }
      }
  return { X, tets: Uint32Array.from(tets) };
}

/** CPU milliseconds of this process (the machine is shared: wall time counts other processes' work). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU ms of the main thread alone (Linux /proc, 10 ms ticks): the critical path when worker threads help. */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function median(a: number[]): number {
  const s = [...a].sort((p, q) => p - q);
  return s[Math.floor(s.length / 2)];
}

/** Median and minimum (CPU ms): the machine may be shared, and the minimum is the least disturbed run. */
function stats(a: number[]): string {
  return `${median(a).toFixed(2)} (min ${Math.min(...a).toFixed(2)})`;
}

const grids: [number, number, number][] = [];
const models: MaterialModel[] = [];
let threads = 1;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--grid') {
    const [nx, ny, nz] = args[++i].split(',').map(Number);
    grids.push([nx, ny, nz]);
  } else if ((MATERIAL_MODELS as readonly string[]).includes(args[i])) models.push(args[i] as MaterialModel);
  else throw new Error(`unknown argument '${args[i]}'`);
}
if (grids.length === 0) grids.push([10, 10, 10], [20, 20, 10]);
if (models.length === 0) models.push(...MATERIAL_MODELS);

for (const [nx, ny, nz] of grids) {
  const { X, tets } = boxGrid(nx, ny, nz);
  // A twisted, squashed, jittered state: nontrivial rotations and some indefinite element Hessians.
  const x = new Float64Array(X.length);
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let n = 0; n < X.length / 3; n++) {
    const z = X[3 * n + 2];
    const angle = 3 * z;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    x[3 * n] = c * X[3 * n] - s * X[3 * n + 1] + 0.001 * rand();
    x[3 * n + 1] = s * X[3 * n] + c * X[3 * n + 1] + 0.001 * rand();
    x[3 * n + 2] = 0.8 * z + 0.001 * rand();
  }
  const xOther = Float64Array.from(x, (v) => v + 0.0002 * rand());
  const states = [x, xOther];
  console.log(`grid ${nx}x${ny}x${nz}: ${tets.length / 4} tets, ${X.length / 3} nodes`);
  for (const model of models) {
    const term = new ElasticTets(X, tets, createMaterial(model, { youngsModulus: 1e5, poissonRatio: 0.4 }));
    term.useThreads(threadPoolFor(threads));
    const builder = new PatternBuilder(X.length / 3);
    term.addPattern(builder);
    const H = new BsrMatrix(builder.build());
    term.bindPattern(H);
    const g = new Float64Array(x.length);
    const times: number[] = [];
    const wall: number[] = [];
    const parts = { energy: [] as number[], gradient: [] as number[], hessian: [] as number[] };
    if (term.countInverted(x) > 0 || term.countInverted(xOther) > 0) throw new Error('bench state has inverted tets');
    let mainStart = 0;
    for (let rep = 0; rep < 40; rep++) {
      if (rep === 5) mainStart = mainThreadCpuMs();
      const x = states[rep % 2];
      const w0 = performance.now();
      const t0 = cpuMs();
      term.energy(x);
      const t1 = cpuMs();
      g.fill(0);
      term.addGradient(x, 1, g);
      const t2 = cpuMs();
      H.zero();
      term.addHessian(x, 1, H, true);
      const t3 = cpuMs();
      const w3 = performance.now();
      if (rep >= 5) {
        times.push(t3 - t0);
        wall.push(w3 - w0);
        parts.energy.push(t1 - t0);
        parts.gradient.push(t2 - t1);
        parts.hessian.push(t3 - t2);
      }
    }
    const mainPerRep = (mainThreadCpuMs() - mainStart) / 35;
    console.log(
      `  ${model.padEnd(19)} ${term.threadCount} thread(s): wall ${stats(wall)} ms, CPU ${stats(times)} ms, main thread CPU ${mainPerRep.toFixed(1)} ms (mean); energy ${stats(parts.energy)}, ` +
        `gradient ${stats(parts.gradient)}, projected Hessian incl. zeroing ${stats(parts.hessian)}`,
    );
  }
}
