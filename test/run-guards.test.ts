/**
 * Runs that must not fail or grind in silence: steps accepted at the Newton iteration limit (newtonLimitSteps,
 * --strict), absurd requests refused before anything is built (work estimate), Ctrl-C (a summary and a checkpoint,
 * exit 130) and damaged checkpoints or lost frames on --resume.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { checkWork, estimateWork, WORK_LIMITS } from '../src/scene/work-estimate.js';
import { runCli as cli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-guards-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const root = fileURLToPath(new URL('..', import.meta.url));

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** metrics.csv as lines without the header. */
function metricsRows(dir: string): string[] {
  return readFileSync(join(dir, 'metrics.csv'), 'utf8').trim().split('\n').slice(1);
}

function sceneFile(name: string, scene: SceneInput): string {
  const path = join(tmp, `${name}.json`);
  writeFileSync(path, JSON.stringify(scene));
  return path;
}

const box = (cells: number, extra: Record<string, unknown> = {}) => ({
  mesh: { type: 'box' as const, size: [0.1, 0.1, 0.1] as [number, number, number], cells: [cells, cells, cells] as [number, number, number] },
  material: { youngsModulus: 1e5 },
  ...extra,
});

test('--tol 1e-20: steps at the Newton iteration limit are counted in summary.json and the report; --strict exits 3', async () => {
  const dir = join(tmp, 'tol');
  const r = await cli('run', 'oscillator', '--duration', '1', '--tol', '1e-20', '--out', dir);
  assert.equal(r.code, 0, r.err);
  const summary = json(join(dir, 'summary.json'));
  // The metrics' warning column marks the same steps (each one's Newton solve hit the limit).
  const atLimit = metricsRows(dir)
    .filter((row) => row.includes('iteration limit'))
    .map((row) => Number(row.split(',')[0]));
  assert.ok(atLimit.length > 0, 'a tolerance of 1e-20 h cannot be met: steps must end at the limit');
  assert.equal(summary.newtonLimitSteps, atLimit.length);
  assert.deepEqual(summary.newtonLimitFirstSteps, atLimit.slice(0, 10));
  assert.equal(summary.newtonIterations >= 100 * atLimit.length, true, 'each of those steps took the 100 iterations');
  assert.match(r.out, new RegExp(`not converged: ${atLimit.length} of 10 steps ended at the Newton iteration limit \\(100\\)`));
  assert.match(r.err, /warning: .*Newton iteration limit/);

  const strict = await cli('run', 'oscillator', '--duration', '1', '--tol', '1e-20', '--strict', '--quiet', '--out', join(tmp, 'tol-strict'));
  assert.equal(strict.code, 3);
  assert.match(strict.err, /error \(--strict\): \d+ of 10 steps ended at the Newton iteration limit/);
  assert.ok(existsSync(join(tmp, 'tol-strict', 'summary.json')), 'the outputs are still written');

  const clean = await cli('run', 'oscillator', '--duration', '1', '--strict', '--quiet', '--out', join(tmp, 'tol-clean'));
  assert.equal(clean.code, 0, clean.err);
  const cleanSummary = json(join(tmp, 'tol-clean', 'summary.json'));
  assert.equal(cleanSummary.newtonLimitSteps, 0);
  assert.deepEqual(cleanSummary.newtonLimitFirstSteps, []);
});

test('absurd requests are refused from the scene description with exit 2, naming the number and the limit, and write nothing', async () => {
  const rssBefore = process.resourceUsage().maxRSS;
  const huge = sceneFile('huge-box', { name: 'huge-box', duration: 1, dt: 0.01, bodies: [box(1000)] });
  const crowd = sceneFile('crowd', { name: 'crowd', duration: 1, dt: 0.01, bodies: [box(2, { repeat: { counts: [100, 100, 100], spacing: [0.2, 0.2, 0.2] } })] });
  const cases: [string[], RegExp[]][] = [
    [['oscillator', '--dt', '1e-9', '--duration', '2'], [/2,000,000,000 steps/, /limit of 1,000,000 steps/, /--max-steps/, /--allow-large/]],
    [[huge], [/about [\d.]+ TiB of memory/, /1,003,003,001 nodes, 6,000,000,000 tets/, /limit of 8 GiB/, /--allow-large/]],
    [[crowd], [/1,000,000 bodies \(27,000,000 nodes, 48,000,000 tets in 1,000,000 bodies\)/, /limit of 10,000 bodies/, /--allow-large/]],
    // A million one-cell boxes fit the memory limit but would take a quarter of an hour to set up.
    [[sceneFile('crowd-small', { name: 'crowd-small', duration: 1, dt: 0.01, bodies: [box(1, { repeat: { counts: [100, 100, 100], spacing: [0.2, 0.2, 0.2] } })] })], [/1,000,000 bodies/, /limit of 10,000 bodies/]],
    [['oscillator', '--dt', '0.001', '--duration', '0.01', '--max-steps', '5'], [/10 steps/, /limit of 5 steps/]],
    [['oscillator', '--dt', '5', '--duration', '2'], [/--dt: dt = 5 s gives no step over the duration of 2 s/]],
    [['oscillator', '--duration', '0'], [/--duration/, /positive/]],
    [[sceneFile('no-time', { ...json(join(root, 'scenes', 'oscillator.json')), duration: 0 })], [/no-time\.json: duration: duration must be positive/]],
  ];
  for (const [i, [args, patterns]] of cases.entries()) {
    const out = join(tmp, `refused-${i}`);
    const r = await cli('run', ...args, '--out', out);
    assert.equal(r.code, 2, `${args.join(' ')}: exit code (stderr: ${r.err})`);
    for (const p of patterns) assert.match(r.err, p, `${args.join(' ')}: message`);
    assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace');
    assert.equal(existsSync(out), false, `${args.join(' ')}: nothing written`);
  }
  // Building the 1000^3 box or the million copies would take gigabytes: none of it was built.
  const grownMiB = (process.resourceUsage().maxRSS - rssBefore) / 1024;
  assert.ok(grownMiB < 300, `the refusals grew the test process by ${grownMiB.toFixed(0)} MiB`);

  // compare checks the same limits (its output is that of all runs).
  const compared = await cli('compare', 'oscillator', '--integrators', 'a-search,bdf2', '--dt', '1e-9', '--duration', '2', '--out', join(tmp, 'refused-compare'));
  assert.equal(compared.code, 2);
  assert.match(compared.err, /2,000,000,000 steps/);
  assert.equal(existsSync(join(tmp, 'refused-compare')), false);

  // The user may raise the limits.
  const allowed = await cli('run', 'oscillator', '--dt', '0.001', '--duration', '0.01', '--max-steps', '5', '--allow-large', '--quiet', '--out', join(tmp, 'allowed'));
  assert.equal(allowed.code, 0, allowed.err);
  assert.equal(json(join(tmp, 'allowed', 'summary.json')).steps, 10);
  const raised = await cli('run', 'oscillator', '--dt', '0.001', '--duration', '0.01', '--max-steps', '10', '--quiet', '--out', join(tmp, 'raised'));
  assert.equal(raised.code, 0, raised.err);
});

test('the work estimate counts the nodes and tets the build makes (boxes, repeats, file meshes, particles, chains, stairs), and every built-in scene is within the limits', () => {
  const scene = parseScene({
    name: 'mix',
    duration: 1,
    dt: 0.01,
    bodies: [
      box(3, { repeat: { counts: [2, 1, 3], spacing: [0.2, 0.2, 0.2] } }),
      { ...box(2), mesh: { type: 'box', size: [0.1, 0.2, 0.3], cells: [1, 2, 3], tetsPerCell: 5 } },
      { mesh: { type: 'builtin', name: 'ball' }, transform: { height: 0.1, translate: [1, 0.5, 0] }, material: { youngsModulus: 1e5 } },
      { mesh: { type: 'particles', positions: [[3, 3, 3], [4, 3, 3]], masses: [1, 1] } },
      { mesh: { type: 'chain', length: 1, cells: 5, area: 1e-4 }, transform: { translate: [6, 3, 3] }, material: { youngsModulus: 1e5 } },
    ],
    obstacles: [{ type: 'stairs', steps: 4, stepHeight: 0.1, stepDepth: 0.2, width: 1, origin: [5, 0, 0] }],
  });
  const meshes = meshResolver(root);
  const sizes = (body: Parameters<typeof meshes>[0], index: number) => {
    const m = meshes(body, index);
    return { nodes: m.positions.length / 3, tets: m.tets.length / 4 };
  };
  const work = estimateWork(scene, sizes);
  const model = buildModel(scene, meshes);
  assert.equal(work.nodes, model.nNodes);
  assert.equal(work.tets, model.bodies.reduce((n, b) => n + b.tets.length / 4, 0));
  assert.equal(work.bodies, 6 + 4);
  assert.equal(work.steps, 100);
  assert.equal(work.frames, 34, 'frameRate 30 with h = 0.01: every round(1 / (30 h)) = 3 steps, frames 0 to 33');
  assert.equal(estimateWork(scene, sizes, 3).outputBytes, 3 * work.outputBytes, 'compare: the output of all runs');

  for (const name of ['bouncing-ball-medium', 'bunny-splash', 'dice-roll', 'suspended-armadillo', 'twisted-bar', 'oscillator', 'collision-1d-stiff']) {
    const loaded = loadScene(name);
    const resolve = meshResolver(loaded.baseDir);
    const estimate = estimateWork(loaded.scene, (b, i) => {
      const m = resolve(b, i);
      return { nodes: m.positions.length / 3, tets: m.tets.length / 4 };
    });
    assert.doesNotThrow(() => checkWork(loaded.scene, estimate, WORK_LIMITS), name);
  }
});

/** Starts the CLI as a program; resolves with its exit code and stderr once it ends. */
function startCli(args: string[]) {
  const child = spawn(process.execPath, [join(root, 'bin', 'vivace.js'), ...args], { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.resume();
  const ended = new Promise<{ code: number | null; signal: string | null; err: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, err })));
  return { child, ended };
}

/** Waits until `path` exists (the run has started writing), at most `ms`. */
async function waitFor(path: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > end) throw new Error(`${path} did not appear within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('Ctrl-C (SIGINT) ends the run after the step in progress: summary "interrupted", plot, checkpoint, exit 130; --resume goes on', async () => {
  const dir = join(tmp, 'sigint');
  // A million steps (a minute or more): the signal comes long before the end.
  const { child, ended } = startCli(['run', 'oscillator', '--dt', '0.01', '--duration', '10000', '--checkpoint-every', '100000', '--quiet', '--out', dir]);
  await waitFor(join(dir, 'metrics.csv'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.kill('SIGINT');
  const r = await ended;
  assert.equal(r.code, 130, `exit code (signal ${r.signal}, stderr: ${r.err})`);
  assert.match(r.err, /interrupted \(SIGINT\) after step \d+ of 1000000: outputs and summary\.json written; checkpoint at step \d+: go on with --resume/);

  const summary = json(join(dir, 'summary.json'));
  assert.equal(summary.stopped, 'interrupted');
  const steps = summary.steps;
  assert.ok(steps > 0 && steps < 1_000_000, `steps ${steps}`);
  assert.equal(metricsRows(dir).length, steps + 1, 'every step up to the last one is in metrics.csv');
  assert.match(readFileSync(join(dir, 'energy.svg'), 'utf8'), /<\/svg>\s*$/);
  const checkpoint = json(join(dir, 'checkpoint.json'));
  assert.equal(checkpoint.step, steps, 'the checkpoint is of the last step, not of the last periodic one');
  assert.equal(readdirSync(join(dir, 'frames')).length, checkpoint.frames);

  // The interrupted run goes on from its checkpoint (here for 5 more steps).
  const resumed = await cli('run', 'oscillator', '--dt', '0.01', '--duration', String((steps + 5) / 100), '--resume', '--quiet', '--out', dir);
  assert.equal(resumed.code, 0, resumed.err);
  assert.equal(json(join(dir, 'summary.json')).stopped, null);
  assert.equal(metricsRows(dir).length, steps + 6);
});

test('Ctrl-C during compare: the run in progress is written as interrupted, the rest are not run, the report is written, exit 130', async () => {
  const dir = join(tmp, 'sigint-compare');
  const { child, ended } = startCli(['compare', 'oscillator', '--integrators', 'a-search,implicit-euler', '--dt', '0.01', '--duration', '10000', '--quiet', '--out', dir]);
  await waitFor(join(dir, 'a-search', 'metrics.csv'));
  child.kill('SIGINT');
  const r = await ended;
  assert.equal(r.code, 130, `exit code (signal ${r.signal}, stderr: ${r.err})`);
  assert.match(r.err, /interrupted \(SIGINT\) during a-search; not run: implicit-euler/);
  assert.equal(json(join(dir, 'a-search', 'summary.json')).stopped, 'interrupted');
  assert.equal(existsSync(join(dir, 'implicit-euler')), false);
  const rows = readFileSync(join(dir, 'report.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('| ['));
  assert.equal(rows.length, 1);
  assert.match(rows[0], /stopped: interrupted \|$/);
});

test('--resume refuses a checkpoint with one flipped character, and a run whose frames were deleted, with exit 2 naming the file', async () => {
  const dir = join(tmp, 'damaged');
  const first = await cli('run', 'oscillator', '--duration', '1', '--checkpoint-every', '5', '--quiet', '--out', dir);
  assert.equal(first.code, 0, first.err);
  const file = join(dir, 'checkpoint.json');
  const good = readFileSync(file, 'utf8');
  const metrics = readFileSync(join(dir, 'metrics.csv'), 'utf8');
  const resume = () => cli('run', 'oscillator', '--duration', '1.5', '--resume', '--quiet', '--out', dir);

  // One character of the base64 positions: a valid file, another state.
  const at = good.indexOf('"x":"') + 8;
  writeFileSync(file, good.slice(0, at) + (good[at] === 'A' ? 'B' : 'A') + good.slice(at + 1));
  const flipped = await resume();
  assert.equal(flipped.code, 2);
  assert.match(flipped.err, new RegExp(`--resume: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: checksum mismatch`));
  assert.equal(readFileSync(join(dir, 'metrics.csv'), 'utf8'), metrics, 'a refused resume leaves the outputs alone');

  writeFileSync(file, good);
  rmSync(join(dir, 'frames', 'frame_00004.obj'));
  const oneLost = await resume();
  assert.equal(oneLost.code, 2);
  assert.match(oneLost.err, /frames lacks 1 of the 11 frames written before the checkpoint \(frame_00004\.obj\); resuming would leave a gap/);

  rmSync(join(dir, 'frames'), { recursive: true });
  const allLost = await resume();
  assert.equal(allLost.code, 2);
  assert.match(allLost.err, /frames is missing \(deleted\?\): it held the 11 frames written before the checkpoint/);
  assert.equal(existsSync(join(dir, 'frames')), false, 'nothing written');
});
