/**
 * The library API (src/index.ts, src/core.ts) from the sources: runScene writes what `vivace run` writes, onStep and
 * an AbortSignal stop a run, bad options and scenes are refused with the CLI's messages before anything is written,
 * simulateScene (core) computes what runScene computes, vivace/core runs bundled for a browser without any of Node's
 * globals, and the README's API table names exactly the exports. test/package.test.ts runs the packed package.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import * as core from '../src/core.js';
import * as vivace from '../src/index.js';
import { buildModel, INTERRUPTED, loadScene, meshResolver, OverrideError, runScene, SceneError, simulateScene, WorkError, type SceneInput, type StepRecord } from '../src/index.js';
import { runCli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-library-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const root = fileURLToPath(new URL('..', import.meta.url));
const oscillatorJson = JSON.parse(readFileSync(join(root, 'scenes', 'oscillator.json'), 'utf8'));

/** metrics.csv without its wall-time column (the only one that differs between two runs). */
function metricsWithoutWallTime(dir: string): string[] {
  const [header, ...rows] = readFileSync(join(dir, 'metrics.csv'), 'utf8').trimEnd().split('\n');
  const wall = header.split(',').indexOf('wall_ms');
  assert.ok(wall >= 0);
  return [header, ...rows].map((line) => line.split(',').filter((_, i) => i !== wall).join(','));
}

/** summary.json without the measured times and memory. */
function summaryWithoutTimes(dir: string): Record<string, unknown> {
  const s = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  for (const k of ['wallSeconds', 'cpuSeconds', 'peakMemoryMiB', 'timing']) delete s[k];
  delete s.options.checkpointEvery; // the CLI records its --checkpoint-every (0)
  return s;
}

test('runScene with out writes what vivace run writes (same metrics.csv, summary.json, frames), and its records are the rows', async () => {
  const cliDir = join(tmp, 'cli');
  const libDir = join(tmp, 'lib');
  const r = await runCli('run', 'oscillator', '--integrator', 'bdf2', '--duration', '2', '--out', cliDir, '--quiet');
  assert.equal(r.code, 0, r.err);
  const frames: number[] = [];
  const run = await runScene('oscillator', { integrator: 'bdf2', duration: 2, out: libDir, onFrame: (frame) => frames.push(frame) });
  assert.deepEqual(metricsWithoutWallTime(libDir), metricsWithoutWallTime(cliDir));
  const summary = summaryWithoutTimes(libDir);
  assert.deepEqual({ ...summary, source: undefined }, { ...summaryWithoutTimes(cliDir), source: undefined });
  assert.equal(readFileSync(join(libDir, 'frames', 'frame_00020.obj'), 'utf8'), readFileSync(join(cliDir, 'frames', 'frame_00020.obj'), 'utf8'));
  assert.deepEqual(frames, Array.from({ length: 21 }, (_, i) => i));
  assert.equal(run.outputs?.summary, join(libDir, 'summary.json'));
  // The returned records are metrics.csv's rows, the summary is summary.json's, the scene its effective scene.
  assert.equal(run.metrics.length, 21);
  const rows = metricsWithoutWallTime(libDir).slice(1).map((line) => line.split(','));
  run.metrics.forEach((m, i) => assert.equal(Number(rows[i][4]), Number(m.total.toPrecision(12)), `total of step ${i}`));
  assert.equal(run.summary.steps, summary.steps);
  assert.equal(run.summary.finalEnergy, summary.finalEnergy);
  assert.deepEqual(JSON.parse(JSON.stringify(run.scene)), summary.effectiveScene);
  assert.equal(run.state.x.length, 3 * run.model.nNodes);
  assert.equal(run.runOptions.integrator, 'bdf2');
});

test('onStep sees every step from the initial state on, with energies, alpha and Newton iterations; returning false ends the run there', async () => {
  const seen: StepRecord[] = [];
  const full = await runScene('oscillator', { duration: 1, onStep: (r) => void seen.push(r) });
  assert.deepEqual(
    seen.map((r) => r.step),
    Array.from({ length: 11 }, (_, i) => i),
  );
  assert.equal(seen.length, full.metrics.length);
  seen.forEach((r, i) => assert.deepEqual({ ...r, wallMs: 0 }, { ...full.metrics[i], wallMs: 0 }));
  // Newton iterations as seed 000 counts them: 0 when the first Newton step is already within the tolerance (here
  // every step: the start point, x_n + h v_n moved by an explicit force step, is within h^3 |v| of the answer); the
  // linear solve that finds it is counted among the linear iterations.
  assert.ok(Number.isNaN(seen[0].alpha) && seen.slice(1).every((r) => r.alpha > 0 && r.newtonIterations === 0 && r.linearIterations >= 1));
  assert.equal(seen[0].total, 0.5); // H = |v|^2/2 + |x|^2/2 at x = (1, 0, 0), v = 0
  assert.equal(full.summary.stopped, undefined);

  const stopped = await runScene('oscillator', { duration: 1, onStep: (r) => r.step < 4 });
  assert.equal(stopped.summary.stopped, INTERRUPTED);
  assert.equal(stopped.summary.steps, 4);
  assert.equal(stopped.metrics.length, 5);
  assert.deepEqual(
    stopped.metrics.map((r) => r.total),
    seen.slice(0, 5).map((r) => r.total),
  );
  assert.ok(Math.abs(stopped.state.t - 0.4) < 1e-12);

  const untracked = await runScene('oscillator', { duration: 1, keepMetrics: false });
  assert.deepEqual(untracked.metrics, []);
  assert.equal(untracked.summary.finalEnergy, full.summary.finalEnergy);
});

test('an aborted signal ends a long run after the step in progress; timers run during it', async () => {
  const controller = new AbortController();
  let steps = 0;
  // 500,000 steps (about a minute): the abort, 50 ms after the first step, must end it long before.
  const onStep = (r: StepRecord) => {
    steps++;
    if (r.step === 1) setTimeout(() => controller.abort(), 50);
  };
  const run = await runScene('oscillator', { duration: 50000, keepMetrics: false, signal: controller.signal, onStep });
  assert.equal(run.summary.stopped, INTERRUPTED);
  assert.ok(run.summary.steps > 0 && run.summary.steps < 500000, `steps ${run.summary.steps}`);
  assert.equal(steps, run.summary.steps + 1);
});

test('bad options are refused naming the option, before anything is written', async () => {
  const out = join(tmp, 'never');
  const refused = async (options: Parameters<typeof runScene>[1], type: new (...args: never[]) => SceneError, pattern: RegExp, scene: Parameters<typeof runScene>[0] = 'oscillator') => {
    await assert.rejects(runScene(scene, { ...options, out }), (err: Error) => {
      assert.ok(err instanceof type, `${err.name}: ${err.message}`);
      assert.match(err.message, pattern);
      return true;
    });
    assert.ok(!existsSync(out), 'nothing written');
  };
  await refused({ dt: -1 }, OverrideError, /^dt must be a positive finite number \(got -1\)/);
  await refused({ integrator: 'rk5' }, OverrideError, /unknown integrator 'rk5'; allowed: .*a-search/);
  await refused({ params: { alphaMaximum: 2 } }, OverrideError, /no parameter 'alphaMaximum'; allowed: alphaMin, alphaMax, sparse/);
  await refused({ solver: { linear: 'lu' as 'pcg' } }, OverrideError, /solver\.linear/);
  await refused({ dt: 1e-6 }, WorkError, /20,000,000 steps .* above the limit of 1,000,000 steps: raise the limit with maxSteps or allowLarge: true/);
  await refused({ dt: 1e-4, maxSteps: 1000 }, WorkError, /above the limit of 1,000 steps/);
  await refused({ sceneParams: { phase: 0.5 } }, SceneError, /has no parameters/);
  await refused({}, SceneError, /unknown scene 'no-such-scene'/, 'no-such-scene');
  // A start that intersects is refused by the time loop itself: still a SceneError, still nothing written.
  const sunk = structuredClone(oscillatorJson);
  sunk.obstacles = [{ type: 'plane', name: 'floor', point: [0, 0.5, 0], normal: [0, 1, 0] }];
  sunk.bodies[0].fixed = [];
  await refused({}, SceneError, /initial state intersects: .*plane 'floor'/, sunk);
  writeFileSync(join(tmp, 'a-file'), '');
  // The output folder is checked as vivace run checks --out.
  await assert.rejects(runScene('oscillator', { out: join(tmp, 'a-file') }), /^SceneError: out: .*a-file exists and is a file, not a folder/);
  await assert.rejects(runScene('oscillator', { out: '/proc/vivace-run' }), /^SceneError: out: cannot create \/proc\/vivace-run: .*proc file system/);
});

test('a scene object is validated with the messages of a scene file, and its mesh paths start at baseDir', async () => {
  const bad = structuredClone(oscillatorJson);
  bad.dt = 0;
  bad.bodies[0].mesh.masses = [1, -1];
  bad.integrator.params = { alphaMaximum: 2 };
  const file = join(tmp, 'bad.json');
  writeFileSync(file, JSON.stringify(bad));
  const fromFile = await runCli('run', file, '--out', join(tmp, 'never'));
  assert.equal(fromFile.code, 2);
  const message = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof SceneError);
      return err.message;
    }
    assert.fail('not refused');
  };
  const fromObject = message(() => loadScene(bad));
  assert.match(fromObject, /^invalid scene object:\n {2}dt: .*\n {2}bodies\[0\]\.mesh\.masses\[1\]: /);
  assert.equal(fromFile.err, `vivace: error: ${fromObject.replace('scene object', `scene file ${file}`)}\n`);
  delete bad.bodies;
  bad.dt = 0.1;
  assert.match(message(() => loadScene(bad)), /^invalid scene object:\n {2}bodies: /);
  assert.match(message(() => core.validateScene({ ...oscillatorJson, integrator: { name: 'a-search', params: { alphaMaximum: 2 } } })), /^invalid scene:\n {2}integrator\.params: integrator 'a-search' has no parameter 'alphaMaximum'/);

  // One tet in a TetGen file next to the scene object's base folder, dropped from rest.
  writeFileSync(join(tmp, 'tet.node'), '4 3 0 0\n0 0 0 0\n1 0.1 0 0\n2 0 0.1 0\n3 0 0 0.1\n');
  writeFileSync(join(tmp, 'tet.ele'), '1 4 0\n0 0 1 2 3\n');
  const scene: SceneInput = { name: 'tet', duration: 0.1, dt: 0.01, bodies: [{ mesh: { type: 'file', path: 'tet.node' }, material: { youngsModulus: 1e5 } }] };
  await assert.rejects(runScene(scene, { baseDir: join(tmp, 'elsewhere') }), /bodies\[0\]\.mesh\.path: mesh file .*elsewhere.*tet\.node.* not found/);
  const loaded = loadScene(scene, { baseDir: tmp });
  assert.equal(buildModel(loaded.scene, meshResolver(loaded.baseDir)).nNodes, 4);
  const run = await runScene(loaded);
  assert.equal(run.model.nNodes, 4);
  // Free fall for 0.1 s under implicit integration: the centre has moved down by about g t^2 / 2 = 4.9 cm.
  const dy = (run.state.x[1] + run.state.x[4] + run.state.x[7] + run.state.x[10]) / 4 - 0.025;
  assert.ok(Math.abs(dy + 0.049) < 0.01, `fell ${dy} m`);
});

test('simulateScene (vivace/core) computes what runScene computes, step for step', async () => {
  const viaNode = await runScene('oscillator', { integrator: 'a-search', duration: 3 });
  const input = { ...oscillatorJson, duration: 3 };
  const stops: number[] = [];
  const viaCore = simulateScene(input, { onStep: (r) => void stops.push(r.step) });
  assert.deepEqual(
    viaCore.metrics.map((r) => [r.total, r.alpha, r.newtonIterations]),
    viaNode.metrics.map((r) => [r.total, r.alpha, r.newtonIterations]),
  );
  assert.equal(stops.length, 31);
  const stopped = simulateScene(input, { onStep: (r) => r.step !== 7 });
  assert.equal(stopped.summary.stopped, INTERRUPTED);
  assert.equal(stopped.summary.steps, 7);
  assert.throws(() => simulateScene({ ...input, bodies: [{ mesh: { type: 'builtin', name: 'ball' } }] }), /bodies\[0\]\.mesh: 'builtin' meshes need a mesh loader/);
});

test('vivace/core bundles for the browser (no node: module) and runs without any of Node\'s globals, giving Node\'s numbers', async () => {
  const bundle = await build({ entryPoints: [join(root, 'src', 'core.ts')], bundle: true, platform: 'browser', format: 'iife', globalName: 'vivaceCore', write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(bundle.metafile.inputs);
  assert.ok(inputs.some((f) => f.endsWith('src/sim/simulate.ts')));
  assert.deepEqual(inputs.filter((f) => f.startsWith('node:') || /src\/(io|cli|viewer|api\/run-scene)/.test(f)), []);
  // A bare context: no process, require, Buffer or setImmediate; what a Web Worker has that the core may use.
  const context: Record<string, unknown> = { performance, WebAssembly, console, Math, Date };
  runInNewContext(bundle.outputFiles[0].text, context);
  const lib = context.vivaceCore as typeof core;
  const input = { ...oscillatorJson, duration: 3 };
  const inBrowser = lib.simulateScene(input);
  const inNode = core.simulateScene(input);
  assert.deepEqual(Array.from(inBrowser.metrics, (r) => r.total), Array.from(inNode.metrics, (r) => r.total));
  assert.equal(inBrowser.summary.cpuSeconds, null); // no process.cpuUsage there
});

test('the README Library section opens with the js example and its API table names exactly the exports', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Library\n'), readme.indexOf('\n## ', readme.indexOf('\n## Library\n') + 5));
  const firstBlock = /```(\w+)\n([\s\S]*?)```/.exec(section);
  assert.equal(firstBlock?.[1], 'js');
  assert.match(firstBlock![2], /^import \{ runScene \} from 'vivace';/);
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const table = rows.slice(0, rows.findIndex((l) => l.startsWith('| `integrator`')));
  const listed = new Map<string, string>();
  for (const row of table) {
    const [names, where] = row.split(' | ');
    for (const m of names.matchAll(/`(\w+)/g)) listed.set(m[1], where);
  }
  assert.deepEqual([...listed.keys()].sort(), Object.keys(vivace).sort());
  const inCore = [...listed].filter(([name, where]) => where === 'both' || (where.includes('in both') && where.includes(`\`${name}\``))).map(([name]) => name);
  assert.deepEqual(inCore.sort(), Object.keys(core).sort());
});
