/**
 * `npm run bench`: seed 000 Table 1's scenes at the paper's settings, A-search and BDF2 at equal time step (h = 1/30 s
 * without contact, 1/120 s with; the bunny stairs rows are A-search without decay, tau = 2 s and tau = 1 s), each
 * case in a child process. Prints runtime, Newton iterations and peak memory beside the paper's figures
 * and the ratio ours / paper, plus where the time goes (assembly, linear solve, line search, other).
 *
 * Options (`--help` lists them; an unknown option or name is an error, exit 2): --contact (add the contact scenes:
 * balls, dice, bunny stairs and splash, armadillo trampoline, chain net; hours on 2 cores), --only NAME[,NAME]
 * (scene names, contact or not), --integrator NAME (only that integrator's rows), --linear auto|pcg|ldlt|ldlt-lagged (default auto), --json FILE,
 * --checkpoint-dir DIR (each case saves its state to DIR/<scene>.<integrator>.checkpoint.json after every step and
 * goes on from there when run again: the bunny splash takes longer than one sitting; the times add up over sittings).
 * Contact rows add where the contact time goes (active-set broad phase, CCD, barrier terms; parts of the split) and
 * how many Hessian patterns and candidate sets were built.
 * The paper's machine: Intel Xeon w5-2445 (CPU solver, Jacobi PCG). Ours: whatever runs this; see `nproc`. The
 * machine's speed at the start and the end of the bench (bench/machine-probe.ts) is printed with the rows and kept
 * in the JSON: the shared VM's speed drifts between sittings by more than most changes measured here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { wrap } from '../src/cli/scenes-command.js';
import { LINEAR_SOLVER_NAMES, type LinearSolverName } from '../src/math/linear-solver.js';
import type { RunSummary } from '../src/sim/records.js';
import { formatMachineSpeed, machineSpeed } from './machine-probe.js';

interface PaperRow {
  scene: string;
  integrator: string;
  seconds: number;
  newton: number;
  /** Time step; default 1/30 s. */
  h?: number;
  /** Contact scenes: only with --contact (or --only naming them). */
  contact?: boolean;
}

/** Seed 000, Table 1: A-search and BDF2 at equal time step (1/30 s). */
const paper: PaperRow[] = [
  { scene: 'rotating-cube-soft', integrator: 'a-search', seconds: 27.6, newton: 902 },
  { scene: 'rotating-cube-soft', integrator: 'bdf2', seconds: 20.3, newton: 661 },
  { scene: 'rotating-cube-stiff', integrator: 'a-search', seconds: 43.8, newton: 1500 },
  { scene: 'rotating-cube-stiff', integrator: 'bdf2', seconds: 27.3, newton: 822 },
  { scene: 'twisted-bar', integrator: 'a-search', seconds: 113.5, newton: 947 },
  { scene: 'twisted-bar', integrator: 'bdf2', seconds: 60.8, newton: 409 },
  // Thin shells: the membrane (no contact, h = 1/120 s) and the trampoline (3 s; hours on 2 cores).
  { scene: 'vibrating-membrane', integrator: 'a-search', seconds: 286.5, newton: 954, h: 1 / 120 },
  { scene: 'armadillo-trampoline', integrator: 'a-search', seconds: 7570.9, newton: 13145, h: 1 / 120, contact: true },
  // Contact scenes, h = 1/120 s. Bunny splash ran on a different (faster) machine in the paper.
  { scene: 'bouncing-ball-soft', integrator: 'a-search', seconds: 75.0, newton: 2681, h: 1 / 120, contact: true },
  { scene: 'bouncing-ball-soft', integrator: 'bdf2', seconds: 36.3, newton: 868, h: 1 / 120, contact: true },
  { scene: 'bouncing-ball-medium', integrator: 'a-search', seconds: 68.3, newton: 1683, h: 1 / 120, contact: true },
  { scene: 'bouncing-ball-medium', integrator: 'bdf2', seconds: 34.6, newton: 423, h: 1 / 120, contact: true },
  { scene: 'bouncing-ball-stiff', integrator: 'a-search', seconds: 94.2, newton: 2391, h: 1 / 120, contact: true },
  { scene: 'bouncing-ball-stiff', integrator: 'bdf2', seconds: 37.3, newton: 326, h: 1 / 120, contact: true },
  { scene: 'dice-roll', integrator: 'a-search', seconds: 326.6, newton: 4659, h: 1 / 120, contact: true },
  { scene: 'dice-roll', integrator: 'bdf2', seconds: 307.3, newton: 5744, h: 1 / 120, contact: true },
  { scene: 'bunny-stairs', integrator: 'a-search', seconds: 530.9, newton: 4534, h: 1 / 120, contact: true },
  { scene: 'bunny-stairs-tau2', integrator: 'a-search', seconds: 342.1, newton: 2248, h: 1 / 120, contact: true },
  { scene: 'bunny-stairs-tau1', integrator: 'a-search', seconds: 369.1, newton: 2092, h: 1 / 120, contact: true },
  { scene: 'bunny-splash', integrator: 'a-search', seconds: 1303.1, newton: 5799, h: 1 / 120, contact: true },
  // Affine bodies (Lan et al. 2022). Our chain net is a reduced one (16k of the paper's 47k surface nodes).
  { scene: 'bouncing-ball-stiff-abd', integrator: 'a-search', seconds: 224.9, newton: 8902, h: 1 / 120, contact: true },
  { scene: 'chain-net', integrator: 'a-search', seconds: 6612.0, newton: 21683, h: 1 / 120, contact: true },
];

const usage = `usage: npm run bench -- [--contact] [--only NAME[,NAME...]] [--integrator NAME] [--linear ${['auto', ...LINEAR_SOLVER_NAMES].join('|')}]
                        [--json FILE] [--checkpoint-dir DIR]
  --contact          add the contact scenes (hours on 2 cores)
  --only NAMES       only these scenes (contact or not), of:
${wrap([...new Set(paper.map((r) => r.scene))].join(', '), ' '.repeat(21))}
  --integrator NAME  only this integrator's rows: ${[...new Set(paper.map((r) => r.integrator))].join(', ')}
  --linear NAME      the linear solver (default auto)
  --json FILE        also write the rows and the machine's speed as JSON
  --checkpoint-dir DIR  save each case's state after every step and resume from it when run again`;

/** The options and the rows they select; throws an error that names a bad option, or says that no row is selected. */
function parseOptions(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      contact: { type: 'boolean' },
      only: { type: 'string' },
      integrator: { type: 'string' },
      linear: { type: 'string' },
      json: { type: 'string' },
      'checkpoint-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  const only = values.only?.split(',');
  const unknown = only?.filter((name) => !paper.some((r) => r.scene === name)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: no bench row for ${unknown.join(', ')}`);
  if (values.integrator !== undefined && !paper.some((r) => r.integrator === values.integrator)) {
    throw new Error(`--integrator: no bench row for ${values.integrator}`);
  }
  const linear = values.linear ?? 'auto';
  if (linear !== 'auto' && !LINEAR_SOLVER_NAMES.includes(linear as LinearSolverName)) throw new Error(`--linear: unknown solver ${linear}`);
  const withContact = values.contact === true;
  const selected = paper.filter(
    (row) => (only ? only.includes(row.scene) : !row.contact || withContact) && (values.integrator === undefined || row.integrator === values.integrator),
  );
  if (selected.length === 0 && !values.help) {
    const scenes = only ? only.join(', ') : withContact ? 'any scene' : 'any scene without contact (add --contact)';
    throw new Error(`no bench row is ${scenes} with ${values.integrator}`);
  }
  return { selected, withContact, linear, jsonOut: values.json, checkpointDir: values['checkpoint-dir'], help: values.help === true };
}

let options: ReturnType<typeof parseOptions>;
try {
  options = parseOptions(process.argv.slice(2));
} catch (err) {
  console.error(`bench: ${(err as Error).message} (\`npm run bench -- --help\` lists the options)`);
  process.exit(2);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}
const { selected, withContact, linear, jsonOut, checkpointDir } = options;
if (checkpointDir) mkdirSync(checkpointDir, { recursive: true });
const caseScript = fileURLToPath(new URL('./case.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));

const rows: Array<PaperRow & { ours: RunSummary }> = [];
const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(`vivace bench: seed 000 Table 1 scenes, linear solver ${linear}${withContact ? ', with contact scenes' : ''}`);
const speedBefore = machineSpeed();
console.log(`machine at the start: ${formatMachineSpeed(speedBefore)}`);
console.log(
  `${'scene'.padEnd(20)} ${'integrator'.padEnd(9)} ${pad('ours s', 8)} ${pad('cpu s', 8)} ${pad('paper s', 8)} ${pad('ratio', 6)} ${pad('newton', 7)} ${pad('paper', 6)} ${pad('MiB', 6)} ${pad('energy', 7)}  time split (assembly / solve / line search / other, s)`,
);
for (const row of selected) {
  // The case's stderr (its progress lines) goes straight through; only its stdout (the summary) is captured.
  const checkpoint = checkpointDir ? [join(checkpointDir, `${row.scene}.${row.integrator}.checkpoint.json`)] : [];
  const out = execFileSync(process.execPath, [tsx, caseScript, row.scene, row.integrator, String(row.h ?? 1 / 30), linear, ...checkpoint], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ours = JSON.parse(out.trim().split('\n').pop() as string) as RunSummary;
  rows.push({ ...row, ours });
  const t = ours.timing;
  const contactSplit =
    t.contactProximity !== undefined
      ? `  contact: active set ${t.contactProximity.toFixed(1)} / CCD ${t.contactCcd.toFixed(1)} / barrier ${t.contactBarrier.toFixed(1)} s, ${t.patternRebuilds} pattern rebuilds, ${t.candidateBuilds ?? 0} candidate-set builds`
      : '';
  console.log(
    `${row.scene.padEnd(20)} ${row.integrator.padEnd(9)} ${pad(ours.wallSeconds.toFixed(1), 8)} ${pad(ours.cpuSeconds?.toFixed(1) ?? '-', 8)} ${pad(row.seconds, 8)} ${pad((ours.wallSeconds / row.seconds).toFixed(2), 6)} ${pad(ours.newtonIterations, 7)} ${pad(row.newton, 6)} ${pad(ours.peakMemoryMiB.toFixed(0), 6)} ${pad(ours.energyKept.toFixed(3), 7)}  ${[t.assembly, t.linearSolve, t.lineSearch, t.other].map((s) => s.toFixed(1)).join(' / ')}${contactSplit}${ours.stopped ? `  STOPPED: ${ours.stopped}` : ''}`,
  );
}
const speedAfter = machineSpeed();
console.log(`machine at the end: ${formatMachineSpeed(speedAfter)}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ machine: { start: speedBefore, end: speedAfter }, rows }, null, 2));
