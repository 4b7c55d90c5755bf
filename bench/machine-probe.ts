/**
 * How fast this machine is right now, on three fixed workloads that stand for the parts of a Newton iteration: the
 * factorization's dense update (C -= A B^T in the WebAssembly kernel, GFlop/s), the element loops' scalar JavaScript
 * (3x3 SVDs, millions per second) and the triangular solves' and sparse products' memory traffic (summing a 64 MiB
 * array, GB/s). Each is the fastest of 15 rounds (after one untimed round), so other jobs on the machine move it
 * less than a whole run. This shared VM's speed changes from one sitting to the next by far more than most changes
 * we measure (the same path of the bunny stairs at tau = 2 s took 766.6 CPU s in one sitting and 523.5 in another),
 * so `npm run bench` prints these figures before and after its rows: ratios to the paper's runtimes from different
 * sittings compare only beside them.
 *
 *   npx tsx bench/machine-probe.ts
 */
import { createDenseKernel, type DenseKernelKind } from '../src/math/dense-kernel.js';
import { svd3 } from '../src/math/svd3.js';
import '../src/sim/node-wasm-features.js';

export interface MachineSpeed {
  /** The dense kernel's C -= A B^T on 240 x 240 x 240 blocks, GFlop/s. */
  denseGflops: number;
  /** Which dense kernel ran (wasm-simd-fma where the engine has relaxed SIMD). */
  denseKernel: DenseKernelKind;
  /** svd3 of fixed, well-spread 3x3 matrices, millions per second. */
  svdMillionsPerSecond: number;
  /** Sum of a 64 MiB Float64Array, GB/s. */
  memoryGBs: number;
}

const ROUNDS = 15;

/**
 * The fastest of ROUNDS runs of `work` after one untimed run (compiled, memory touched), in seconds. The fastest
 * wall time, not CPU time: CPU time counts the engine's background threads too, and the fastest round is the one
 * least disturbed by anything else.
 */
function best(work: () => void): number {
  work();
  let fastest = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    work();
    fastest = Math.min(fastest, (performance.now() - start) / 1e3);
  }
  return fastest;
}

export function machineSpeed(): MachineSpeed {
  const kernel = createDenseKernel();
  const n = 240;
  kernel.allocate(0, 3 * n * n);
  for (let i = 0; i < 2 * n * n; i++) kernel.data[i] = Math.sin(i) * 1e-3;
  const repeats = 8;
  // WebAssembly starts on its baseline compiler and moves to the optimizing one in the background: run the kernel
  // for a while first, or some processes time the baseline code (15 against 22 GFlop/s here).
  const warm = performance.now();
  while (performance.now() - warm < 500) kernel.update(0, n * n, 2 * n * n, n, n, n, n, n);
  const dense = best(() => {
    for (let k = 0; k < repeats; k++) kernel.update(0, n * n, 2 * n * n, n, n, n, n, n);
  });

  const count = 200_000;
  const F = new Float64Array(9);
  const U = new Float64Array(9);
  const V = new Float64Array(9);
  const sigma = new Float64Array(3);
  let sink = 0;
  const svd = best(() => {
    for (let k = 0; k < count; k++) {
      for (let i = 0; i < 9; i++) F[i] = (i % 4 === 0 ? 1 : 0) + 0.3 * Math.sin(k + 7 * i);
      svd3(F, U, sigma, V);
      sink += sigma[0];
    }
  });

  const big = new Float64Array(8 << 20).fill(1);
  const passes = 4;
  const memory = best(() => {
    // Four sums, so that the additions' latency does not set the pace.
    for (let p = 0; p < passes; p++) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < big.length; i += 4) {
        s0 += big[i];
        s1 += big[i + 1];
        s2 += big[i + 2];
        s3 += big[i + 3];
      }
      sink += s0 + s1 + s2 + s3;
    }
  });
  if (!Number.isFinite(sink)) throw new Error('machine probe: non-finite result');

  return {
    denseGflops: (repeats * 2 * n * n * n) / dense / 1e9,
    denseKernel: kernel.kind,
    svdMillionsPerSecond: count / svd / 1e6,
    memoryGBs: (passes * big.byteLength) / memory / 1e9,
  };
}

export function formatMachineSpeed(s: MachineSpeed): string {
  return `dense update ${s.denseGflops.toFixed(2)} GFlop/s (${s.denseKernel}), 3x3 SVD ${s.svdMillionsPerSecond.toFixed(2)} M/s, memory ${s.memoryGBs.toFixed(2)} GB/s`;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(`machine: ${formatMachineSpeed(machineSpeed())}`);
