/**
 * Linear solver benchmark on Newton-like matrices of implicit linear elastodynamics (the cases timed
 * with CHOLMOD): a box of nx*ny*nz cells, 6 tets per cell, P1 linear elasticity (nu = 0.3),
 * lumped mass / h^2 (rho = 1000, h = 1/30), nodes of the face x = 0 fixed by BsrMatrix.applyDirichlet.
 *
 *   npx tsx bench/solvers.ts                 # cube (10^3 cells) and bar (20x20x10)
 *   npx tsx bench/solvers.ts --big           # also 30^3 cells (h = 1/120), slow
 *   npx tsx bench/solvers.ts --cases armadillo   # the suspended armadillo's first Newton matrix (95k unknowns); also
 *                                                # bunny (bunny-stairs, 20k) and ball (bouncing-ball-soft, 5k)
 *   npx tsx bench/solvers.ts --mtx DIR       # also writes each matrix as Matrix Market (lower triangle)
 *   npx tsx bench/solvers.ts --mtx DIR --anchor /tmp/cholmod-bench   # and times CHOLMOD on it in the same run
 *   npx tsx bench/solvers.ts --reps 5 --js-kernel --ordering amd|nd|auto --cases cube,bar --no-pcg
 *   npx tsx bench/solvers.ts --cases bunny --no-pcg --kernel-calls   # also: the dense kernel's time by inner length
 *
 * The .mtx files keep the structural pattern (explicit zeros) and the identity rows of the fixed DOFs, so the
 * native anchor (a small C program timing CHOLMOD on a Matrix Market file, given with --anchor) factors exactly the same
 * matrix; --anchor runs it single-threaded (OPENBLAS_NUM_THREADS=1) right after our solver on each case.
 * Times are CPU milliseconds of this process (other jobs share the machine's cores; the wall clock would count
 * their time too); the anchor's are what its harness reports.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import '../src/sim/node-wasm-features.js';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import { createDenseKernel, type DenseKernel } from '../src/math/dense-kernel.js';
import { analyzeLdlt, factorBytes, LdltSolver } from '../src/math/ldlt.js';
import { withinLimits } from '../src/math/linear-solver.js';
import { PcgSolver } from '../src/math/pcg.js';
import { buildModel } from '../src/scene/build.js';

interface BoxCase {
  name: string;
  cells: [number, number, number];
  size: [number, number, number];
  E: number;
  h: number;
}

interface BenchMatrix {
  A: BsrMatrix;
  fixed: Uint8Array;
  description: string;
}

const BOX_CASES: BoxCase[] = [
  { name: 'cube', cells: [10, 10, 10], size: [0.1, 0.1, 0.1], E: 5e4, h: 1 / 30 },
  { name: 'bar', cells: [20, 20, 10], size: [0.2, 0.1, 0.05], E: 1e5, h: 1 / 30 },
  { name: 'big', cells: [30, 30, 30], size: [0.5, 0.5, 0.5], E: 1e5, h: 1 / 120 },
];

/** Cases built from a scene: the Newton matrix M/h^2 + Hessian (PSD-projected) at the initial state. */
const SCENE_CASES: Record<string, string> = { armadillo: 'suspended-armadillo', bunny: 'bunny-stairs', ball: 'bouncing-ball-soft' };

function sceneNewtonMatrix(sceneName: string): BenchMatrix {
  const { scene, baseDir } = loadScene(sceneName);
  const model = buildModel(scene, meshResolver(baseDir));
  const builder = new PatternBuilder(model.nNodes);
  for (const term of model.terms) term.addPattern(builder);
  const A = new BsrMatrix(builder.build());
  for (const term of model.terms) {
    term.bindPattern?.(A);
    term.addHessian(model.x0, 1, A, true);
  }
  A.addDiagonal(model.mass, 1 / (scene.dt * scene.dt));
  A.applyDirichlet(model.constrained);
  const tets = model.bodies.reduce((sum, b) => sum + b.tets.length / 4, 0);
  return { A, fixed: model.constrained, description: `scene ${sceneName}, ${tets} tets, h ${scene.dt.toPrecision(3)}` };
}

/** The Newton matrix M/h^2 + K of a box mesh with the face x = 0 fixed. */
function elasticBoxMatrix(c: BoxCase, nu = 0.3, rho = 1000): BenchMatrix {
  const [nx, ny, nz] = c.cells;
  const [Lx, Ly, Lz] = c.size;
  const id = (i: number, j: number, k: number): number => i + (nx + 1) * (j + (ny + 1) * k);
  const nNodes = (nx + 1) * (ny + 1) * (nz + 1);
  const X = new Float64Array(3 * nNodes);
  for (let k = 0; k <= nz; k++)
    for (let j = 0; j <= ny; j++)
      for (let i = 0; i <= nx; i++) {
        const v = id(i, j, k);
        X[3 * v] = (Lx * i) / nx;
        X[3 * v + 1] = (Ly * j) / ny;
        X[3 * v + 2] = (Lz * k) / nz;
      }
  // Kuhn split: the six tets share the cell diagonal, one per order of the axes
  const perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
  const tets: number[] = [];
  for (let k = 0; k < nz; k++)
    for (let j = 0; j < ny; j++)
      for (let i = 0; i < nx; i++)
        for (const p of perms) {
          const corner = [i, j, k];
          const verts = [id(corner[0], corner[1], corner[2])];
          for (const axis of p) {
            corner[axis]++;
            verts.push(id(corner[0], corner[1], corner[2]));
          }
          tets.push(...verts);
        }
  const nTets = tets.length / 4;
  const builder = new PatternBuilder(nNodes);
  for (let t = 0; t < nTets; t++) builder.addClique(tets.slice(4 * t, 4 * t + 4));
  const pattern = builder.build();
  const A = new BsrMatrix(pattern);
  const lambda = (c.E * nu) / ((1 + nu) * (1 - 2 * nu));
  const mu = c.E / (2 * (1 + nu));
  const mass = new Float64Array(3 * nNodes);
  const slots = new Int32Array(16);
  const grad = new Float64Array(12);
  const nodes = new Int32Array(4);
  for (let t = 0; t < nTets; t++) {
    for (let a = 0; a < 4; a++) nodes[a] = tets[4 * t + a];
    const vol = shapeGradients(X, nodes, grad);
    if (vol < 0) {
      // odd axis order: swap two vertices for a positive orientation
      const tmp = nodes[2];
      nodes[2] = nodes[3];
      nodes[3] = tmp;
      shapeGradients(X, nodes, grad);
    }
    const V = Math.abs(vol);
    pattern.elementSlots(nodes, slots, 0);
    // K_ab[i][j] = V (lambda dNa_i dNb_j + mu dNa_j dNb_i + mu (dNa . dNb) delta_ij)  (B^T C B of P1 elasticity)
    for (let a = 0; a < 4; a++)
      for (let b = 0; b < 4; b++) {
        const o = 9 * slots[4 * a + b];
        const ga = 3 * a;
        const gb = 3 * b;
        const dd = grad[ga] * grad[gb] + grad[ga + 1] * grad[gb + 1] + grad[ga + 2] * grad[gb + 2];
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) {
            A.values[o + 3 * i + j] +=
              V * (lambda * grad[ga + i] * grad[gb + j] + mu * grad[ga + j] * grad[gb + i] + (i === j ? mu * dd : 0));
          }
      }
    for (let a = 0; a < 4; a++) for (let d = 0; d < 3; d++) mass[3 * nodes[a] + d] += (rho * V) / 4;
  }
  A.addDiagonal(mass, 1 / (c.h * c.h));
  const fixed = new Uint8Array(3 * nNodes);
  for (let k = 0; k <= nz; k++) for (let j = 0; j <= ny; j++) for (let d = 0; d < 3; d++) fixed[3 * id(0, j, k) + d] = 1;
  A.applyDirichlet(fixed);
  return { A, fixed, description: `${c.cells.join('x')} cells, ${nTets} tets, E ${c.E}, h ${c.h.toPrecision(3)}` };
}

/** Gradients of the 4 barycentric shape functions (3 per vertex) and the signed volume. */
function shapeGradients(X: Float64Array, v: Int32Array, g: Float64Array): number {
  const o = 3 * v[0];
  const d = new Float64Array(9); // columns x1-x0, x2-x0, x3-x0
  for (let c = 0; c < 3; c++) for (let r = 0; r < 3; r++) d[3 * r + c] = X[3 * v[c + 1] + r] - X[o + r];
  const det =
    d[0] * (d[4] * d[8] - d[5] * d[7]) - d[1] * (d[3] * d[8] - d[5] * d[6]) + d[2] * (d[3] * d[7] - d[4] * d[6]);
  // rows of D^-1 are the gradients of N1..N3
  const inv = [
    (d[4] * d[8] - d[5] * d[7]) / det, (d[2] * d[7] - d[1] * d[8]) / det, (d[1] * d[5] - d[2] * d[4]) / det,
    (d[5] * d[6] - d[3] * d[8]) / det, (d[0] * d[8] - d[2] * d[6]) / det, (d[2] * d[3] - d[0] * d[5]) / det,
    (d[3] * d[7] - d[4] * d[6]) / det, (d[1] * d[6] - d[0] * d[7]) / det, (d[0] * d[4] - d[1] * d[3]) / det,
  ];
  for (let a = 1; a < 4; a++) for (let c = 0; c < 3; c++) g[3 * a + c] = inv[3 * (a - 1) + c];
  for (let c = 0; c < 3; c++) g[c] = -(g[3 + c] + g[6 + c] + g[9 + c]);
  return det / 6;
}

function writeMatrixMarket(path: string, A: BsrMatrix, comment: string): void {
  const { rowStart, col, n } = A.pattern;
  const lines: string[] = [];
  for (let i = 0; i < n; i++)
    for (let s = rowStart[i]; s < rowStart[i + 1]; s++)
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++) {
          const r = 3 * i + a;
          const c = 3 * col[s] + b;
          if (r >= c) lines.push(`${r + 1} ${c + 1} ${A.values[9 * s + 3 * a + b]}`);
        }
  const header = `%%MatrixMarket matrix coordinate real symmetric\n% ${comment}\n${3 * n} ${3 * n} ${lines.length}\n`;
  writeFileSync(path, header + lines.join('\n') + '\n');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
}

interface Args {
  big: boolean;
  mtx: string | null;
  anchor: string | null;
  reps: number;
  jsKernel: boolean;
  ordering: 'auto' | 'amd' | 'nd';
  cases: string[] | null;
  pcg: boolean;
  /** Time the dense kernel's update calls by inner-product length (--kernel-calls). */
  kernelCalls: boolean;
}

/**
 * Wraps the dense kernel's `update` (C -= A B^T, the factorization's flops) to time its calls, grouped by the inner
 * length p (the panel columns the update sums over), and prints the groups when the process ends: which calls the
 * factorization's time goes to, and at what speed. The clock around each call adds about a tenth of a microsecond.
 */
function countKernelCalls(jsKernel: boolean): void {
  const groups = new Map<string, { calls: number; flops: number; ms: number }>();
  const bounds = [8, 16, 32, 64, 128];
  const proto = Object.getPrototypeOf(jsKernel ? createDenseKernel('js') : createDenseKernel()) as DenseKernel;
  const update = proto.update;
  proto.update = function (this: DenseKernel, a, b, c, sab, sc, p, nr, nc) {
    const t0 = performance.now();
    update.call(this, a, b, c, sab, sc, p, nr, nc);
    const ms = performance.now() - t0;
    const upper = bounds.find((bound) => p <= bound);
    const key = upper === undefined ? `p > ${bounds[bounds.length - 1]}` : `p <= ${upper}`;
    const group = groups.get(key) ?? { calls: 0, flops: 0, ms: 0 };
    group.calls++;
    group.flops += 2 * p * nr * nc;
    group.ms += ms;
    groups.set(key, group);
  };
  process.on('exit', () => {
    let flops = 0;
    let ms = 0;
    for (const group of groups.values()) {
      flops += group.flops;
      ms += group.ms;
    }
    console.log('\ndense kernel update calls over the whole run, by inner length p (flops counted as 2 p nr nc, zeros included):');
    console.log('| inner length | calls | GFlop | ms | share of kernel time | GFlop/s |\n|---|---:|---:|---:|---:|---:|');
    const order = [...bounds.map((bound) => `p <= ${bound}`), `p > ${bounds[bounds.length - 1]}`];
    for (const key of order) {
      const group = groups.get(key);
      if (!group) continue;
      console.log(`| ${key} | ${group.calls} | ${(group.flops / 1e9).toFixed(3)} | ${group.ms.toFixed(0)} | ${((100 * group.ms) / ms).toFixed(0)} % | ${(group.flops / group.ms / 1e6).toFixed(2)} |`);
    }
    console.log(`| all | | ${(flops / 1e9).toFixed(3)} | ${ms.toFixed(0)} | | ${(flops / ms / 1e6).toFixed(2)} |`);
  });
}

function parseArgs(argv: string[]): Args {
  const out: Args = { big: false, mtx: null, anchor: null, reps: 5, jsKernel: false, ordering: 'auto', cases: null, pcg: true, kernelCalls: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--big') out.big = true;
    else if (a === '--mtx') out.mtx = argv[++i];
    else if (a === '--anchor') out.anchor = argv[++i];
    else if (a === '--reps') out.reps = Number(argv[++i]);
    else if (a === '--js-kernel') out.jsKernel = true;
    else if (a === '--ordering') out.ordering = argv[++i] as Args['ordering'];
    else if (a === '--cases') out.cases = argv[++i].split(',');
    else if (a === '--no-pcg') out.pcg = false;
    else if (a === '--kernel-calls') out.kernelCalls = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (out.anchor && !out.mtx) throw new Error('--anchor needs --mtx DIR');
  return out;
}

/** Runs the CHOLMOD harness on a .mtx file (1 thread) and parses its default-ordering line. */
interface AnchorResult {
  analyzeMs: number;
  factorMs: number;
  factorMinMs: number;
  solveMs: number;
  nnzL: number;
  flops: number;
  ordering: string;
}

function runAnchor(bin: string, file: string, reps: number): AnchorResult | null {
  const env = { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1' };
  const res = spawnSync(bin, [file, String(Math.min(Math.max(reps, 5), 15)), '--default-only'], { env, encoding: 'utf8' });
  const line = (res.stdout ?? '').split('\n').find((l) => l.startsWith('default'));
  if (res.status !== 0 || !line) {
    console.log(`anchor failed: ${res.stderr || res.error}`);
    return null;
  }
  const num = (key: string): number => Number(new RegExp(`${key}=([0-9.e+-]+)`).exec(line)![1]);
  const min = Number(/\(min ([0-9.e+-]+)/.exec(line)![1]);
  return {
    analyzeMs: 1000 * num('analyze_s'),
    factorMs: 1000 * num('factor_s'),
    factorMinMs: 1000 * min,
    solveMs: 1000 * num('solve_s'),
    nnzL: num('nnzL'),
    flops: num('flops'),
    ordering: /ordering=(\S+)/.exec(line)![1],
  };
}

/** CPU milliseconds of this process so far. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Runs f and returns its CPU milliseconds. */
function cpuTimed(f: () => void): number {
  const t0 = cpuMs();
  f();
  return cpuMs() - t0;
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  if (args.kernelCalls) countKernelCalls(args.jsKernel);
  const names = args.cases ?? BOX_CASES.map((c) => c.name).filter((name) => name !== 'big' || args.big);
  const rows: string[][] = [];
  const anchorRows: string[][] = [];
  for (const name of names) {
    const box = BOX_CASES.find((c) => c.name === name);
    const sceneName = SCENE_CASES[name];
    if (!box && !sceneName) throw new Error(`unknown case '${name}' (expected ${[...BOX_CASES.map((c) => c.name), ...Object.keys(SCENE_CASES)].join(', ')})`);
    let built: BenchMatrix | undefined;
    const buildMs = cpuTimed(() => {
      built = box ? elasticBoxMatrix(box) : sceneNewtonMatrix(sceneName);
    });
    const { A, fixed, description } = built!;
    const size = A.size;
    let mtxFile: string | null = null;
    if (args.mtx) {
      mkdirSync(args.mtx, { recursive: true });
      mtxFile = join(args.mtx, `${name}.mtx`);
      writeMatrixMarket(mtxFile, A, `${name}: ${description}`);
    }
    // right-hand side: deterministic pseudo-random, zero on fixed DOFs (as a Newton gradient would be)
    const b = new Float64Array(size);
    let seed = 7;
    for (let i = 0; i < size; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      b[i] = fixed[i] ? 0 : seed / 2 ** 32 - 0.5;
    }
    console.log(`\n== ${name}: ${description}, ${A.pattern.n} nodes, ${size} DOFs, ` +
      `nnz(A) ${9 * A.pattern.nnzBlocks} (built in ${buildMs.toFixed(0)} ms CPU)`);

    // direct solver: the first analysis is cold (JIT warm-up included), the later ones warm; the first numeric
    // factorization is left out of the median too
    const ldlt = new LdltSolver({ ordering: args.ordering, forceJsKernel: args.jsKernel, compactCopy: true });
    const x = new Float64Array(size);
    const coldAnalyzeMs = cpuTimed(() => ldlt.analyze(A.pattern));
    const warmAnalyzeTimes: number[] = [];
    for (let r = 0; r < Math.min(args.reps, 3); r++) warmAnalyzeTimes.push(cpuTimed(() => analyzeLdlt(A.pattern, { ordering: args.ordering })));
    const factorTimes: number[] = [];
    const solveTimes: number[] = [];
    for (let r = 0; r <= args.reps; r++) {
      const tf = cpuTimed(() => ldlt.factor(A));
      if (r > 0) factorTimes.push(tf);
    }
    const compactTimes: number[] = [];
    for (let r = 0; r <= 4 * args.reps; r++) {
      const tc = cpuTimed(() => ldlt.solveFactored(b, x, true)); // the lagged Cholesky's preconditioner solve
      const ts = cpuTimed(() => ldlt.solveFactored(b, x));
      if (r > 0) {
        solveTimes.push(ts);
        compactTimes.push(tc);
      }
    }
    const residual = relativeResidual(A, b, x);
    const sym = ldlt.analysis!;
    const est = Object.entries(sym.orderingEstimates)
      .map(([m, e]) => `${m}: nnzL ${(e!.nnzL / 1e6).toFixed(2)}M, ${(e!.flops / 1e9).toFixed(2)} GF`)
      .join('; ');
    console.log(`ldlt (${ldlt.kernelKind} kernel): ordering ${sym.ordering} [${est}], ${sym.supernodes} supernodes, ` +
      `largest front ${sym.maxFront}, stored L ${(sym.storedL / 1e6).toFixed(2)}M, residual ${residual.toExponential(1)}`);
    console.log(`  factor memory (float32 copy included) ${(factorBytes(sym, true) / 2 ** 30).toFixed(2)} GiB: solver 'auto' picks ${withinLimits(sym) ? 'ldlt-lagged' : 'pcg'}`);
    console.log(`  analysis (cold) ${coldAnalyzeMs.toFixed(0)} ms, warm ${warmAnalyzeTimes.map((t) => t.toFixed(0)).join(' ')}; ` +
      `factor times (ms): ${factorTimes.map((t) => t.toFixed(1)).join(' ')}`);
    const analyzeMs = median(warmAnalyzeTimes);
    const factorMs = median(factorTimes);
    const factorMin = Math.min(...factorTimes);
    const solveMs = median(solveTimes);
    const compactMs = median(compactTimes);
    rows.push([name, 'ldlt', sym.ordering, `${coldAnalyzeMs.toFixed(0)} / ${analyzeMs.toFixed(0)}`, `${factorMs.toFixed(1)} (min ${factorMin.toFixed(1)})`,
      `${solveMs.toFixed(2)} / ${compactMs.toFixed(2)}`, (sym.nnzL / 1e6).toFixed(3) + 'M', (sym.flops / factorMs / 1e6).toFixed(2), '',
      residual.toExponential(1), '']);
    if (args.anchor && mtxFile) {
      const an = runAnchor(args.anchor, mtxFile, args.reps);
      if (an) {
        console.log(`  CHOLMOD (1 thread, same matrix): ordering ${an.ordering}, analyze ${an.analyzeMs.toFixed(1)} ms, factor ` +
          `${an.factorMs.toFixed(1)} ms (min ${an.factorMinMs.toFixed(1)}), solve ${an.solveMs.toFixed(2)} ms, nnzL ${(an.nnzL / 1e6).toFixed(3)}M`);
        anchorRows.push([name, an.ordering, an.analyzeMs.toFixed(1), `${an.factorMs.toFixed(1)} (min ${an.factorMinMs.toFixed(1)})`,
          an.solveMs.toFixed(2), (an.nnzL / 1e6).toFixed(3) + 'M', (analyzeMs / an.analyzeMs).toFixed(2),
          (factorMs / an.factorMs).toFixed(2), (factorMin / an.factorMinMs).toFixed(2), `${(solveMs / an.solveMs).toFixed(2)} / ${(compactMs / an.solveMs).toFixed(2)}`]);
      }
    }
    if (!args.pcg) continue;

    // iterative solvers, compared with the direct solution
    const xd = x.slice();
    const xdNorm = Math.sqrt(xd.reduce((s, v) => s + v * v, 0));
    for (const pre of ['jacobi', 'block-jacobi'] as const) {
      for (const tol of [1e-4, 1e-8]) {
        const pcg = new PcgSolver({ tolerance: tol, preconditioner: pre, maxIterations: 20000 });
        const times: number[] = [];
        let stats = { iterations: 0, residual: 0 };
        const xi = new Float64Array(size);
        for (let r = 0; r <= args.reps; r++) {
          xi.fill(0);
          const tt = cpuTimed(() => {
            stats = pcg.solve(A, b, xi);
          });
          if (r > 0) times.push(tt);
        }
        let err = 0;
        for (let i = 0; i < size; i++) err += (xi[i] - xd[i]) ** 2;
        rows.push([name, `pcg ${pre}`, `tol ${tol.toExponential(0)}`, '', '', median(times).toFixed(1), '', '',
          String(stats.iterations), stats.residual.toExponential(1), (Math.sqrt(err) / xdNorm).toExponential(1)]);
      }
    }
  }
  printTable(['case', 'solver', 'ordering/tol', 'analyze ms cold/warm', 'factor ms', 'solve ms', 'nnz(L)', 'GFlop/s', 'iters', 'rel. residual', '|x-x_ldlt|/|x_ldlt|'], rows);
  console.log('\nCPU milliseconds. analyze = ordering + symbolic analysis, first call in the process (JIT warm-up included) / ' +
    'median of later ones; factor = median (and min) numeric factorization reusing it; solve = one forward/backward ' +
    'substitution (ldlt, median: with the float64 factor / its float32 copy, the lagged Cholesky\'s preconditioner) ' +
    'or a whole PCG solve from x = 0 (median); GFlop/s from the flop count of the factorization (median time).');
  if (anchorRows.length > 0) {
    printTable(['case', 'CHOLMOD ordering', 'analyze ms', 'factor ms', 'solve ms', 'nnz(L)', 'ldlt/CHOLMOD analyze', 'factor (median)', '(min)', 'solve (float64 / float32)'], anchorRows);
  }
}

function relativeResidual(A: BsrMatrix, b: Float64Array, x: Float64Array): number {
  const r = new Float64Array(b.length);
  A.multiply(x, r);
  let rr = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    rr += (b[i] - r[i]) ** 2;
    bb += b[i] * b[i];
  }
  return Math.sqrt(rr / bb);
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => '| ' + r.map((v, i) => v.padEnd(widths[i])).join(' | ') + ' |';
  console.log('\n' + fmt(header));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows) console.log(fmt(r));
}

main();
