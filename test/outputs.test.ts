import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { compareReportMarkdown, runStatus } from '../src/io/compare-report.js';
import { parseObj } from '../src/io/mesh-files.js';
import { downsample } from '../src/io/plot.js';
import { formatCsvNumber, formatCsvText, frameName, METRICS_COLUMNS, RunOutput } from '../src/io/run-output.js';
import { applyOverrides, findJsonSyntaxError, loadScene, meshResolver, OverrideError, parseJsonText, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, SceneError } from '../src/scene/schema.js';
import type { RunSummary, StepRecord } from '../src/sim/records.js';
import type { RunOptions } from '../src/sim/simulate.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-outputs-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Minimal RFC 4180 reader (quoted fields with doubled quotes) for checking what we wrote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  assert.equal(field, '', 'the file ends with a complete line');
  return rows;
}

const particleScene = parseScene({
  name: 'two-particles',
  duration: 1,
  dt: 0.1,
  gravity: [0, -9.8, 0],
  bodies: [{ mesh: { type: 'particles', positions: [[1, 2, 3], [0, 0, 0]], masses: [1, 2], springs: [{ a: 0, b: 1, stiffness: 3 }] } }],
});

function fakeOptions(): RunOptions {
  return toRunOptions(particleScene);
}

function record(step: number, extra: Partial<StepRecord> = {}): StepRecord {
  const kinetic = 0.5 * step;
  const potentials = new Map([
    ['spring', 1 + step],
    ['gravity', -2 * step],
  ]);
  const potential = 1 - step;
  return {
    step,
    t: 0.1 * step,
    kinetic,
    potential,
    total: kinetic + potential,
    target: 1,
    alpha: step === 0 ? NaN : 1 / 3,
    newtonIterations: step,
    linearIterations: 2 * step,
    wallMs: 0.25,
    momentum: [step, 0, -step],
    angularMomentum: [0, 1e-20, 0],
    potentials,
    dissipated: 0,
    inverted: 0,
    frictionLoss: 0,
    minDistance: NaN,
    activeContacts: 0,
    ...extra,
  };
}

function fakeSummary(steps: number, stopped?: string): RunSummary {
  return {
    scene: 'two-particles',
    integrator: 'a-search',
    h: 0.1,
    steps,
    duration: 0.1 * steps,
    wallSeconds: 0.01,
    cpuSeconds: 0.01,
    newtonIterations: 3,
    newtonLimitSteps: 0,
    newtonLimitFirstSteps: [],
    linearIterations: 6,
    initialEnergy: 1,
    finalEnergy: 1,
    minEnergy: 0.5,
    minDistance: null,
    maxActiveContacts: 0,
    maxEnergy: 2,
    maxInverted: 0,
    angularMomentumKept: null,
    energyKept: 1,
    stopped,
    peakMemoryMiB: NaN,
    timing: {},
    bodies: [],
  };
}

test('CSV numbers keep 12 significant digits, NaN is an empty field, text is quoted only when needed', () => {
  assert.equal(formatCsvNumber(NaN), '');
  assert.equal(formatCsvNumber(0.1 + 0.2), '0.3');
  assert.equal(formatCsvNumber(1 / 3), '0.333333333333');
  assert.equal(Number(formatCsvNumber(-1.234567890123456e-21)), -1.23456789012e-21);
  assert.equal(formatCsvNumber(Infinity), 'Infinity');
  assert.equal(formatCsvText(undefined), '');
  assert.equal(formatCsvText('plain words'), 'plain words');
  assert.equal(formatCsvText('a, "b"'), '"a, ""b"""');
  assert.equal(frameName(7), 'frame_00007.obj');
  assert.equal(frameName(123456), 'frame_123456.obj');
});

test('downsample keeps short series whole and bounds long ones, keeping the extremes in time order', () => {
  const short = downsample([0, 1, 2, 3], [1, NaN, 3, 4], 10);
  assert.deepEqual(short, { t: [0, 2, 3], y: [1, 3, 4] });
  const n = 100_000;
  const t = Float64Array.from({ length: n }, (_, i) => i * 1e-3);
  const y = Float64Array.from(t, (s) => Math.sin(40 * s));
  y[54_321] = 7; // a one-sample spike must survive
  y[12_345] = -9;
  const d = downsample(t, y, 2000);
  assert.ok(d.t.length <= 2000 && d.t.length >= 1000, `got ${d.t.length} points`);
  assert.equal(Math.max(...d.y), 7);
  assert.equal(Math.min(...d.y), -9);
  for (let i = 1; i < d.t.length; i++) assert.ok(d.t[i] > d.t[i - 1]);
});

test('RunOutput creates the folder lazily, streams whole CSV lines, writes frames, the plot and summary.json', async () => {
  const dir = join(tmp, 'run-a');
  const model = buildModel(particleScene);
  const out = new RunOutput(dir, model, fakeOptions(), { scene: particleScene, source: 'test', flushBytes: 1 });
  assert.equal(existsSync(dir), false, 'nothing is created before the first record');

  const obs = out.observer;
  obs.step!(record(0));
  obs.frame!(0, 0, model.x0, model.v0);
  obs.step!(record(1, { warning: 'midpoint x = 2z - x_n, inverted "tet" 4' }));
  // Flushed line by line (flushBytes: 1): the file already holds the header and two whole rows.
  const partial = readFileSync(join(dir, 'metrics.csv'), 'utf8');
  assert.ok(partial.endsWith('\n'));
  assert.equal(parseCsv(partial).length, 3);
  const moved = new Float64Array(model.x0);
  moved[0] = 1.5;
  obs.step!(record(2));
  obs.frame!(1, 0.2, moved, model.v0);
  const paths = await out.finish(fakeSummary(2));

  const rows = parseCsv(readFileSync(paths.metrics, 'utf8'));
  const header = rows[0];
  assert.deepEqual(header, [...METRICS_COLUMNS, 'spring', 'gravity', 'warning']);
  assert.equal(rows.length, 4);
  const col = (name: string) => header.indexOf(name);
  assert.equal(rows[1][col('alpha')], '', 'NaN alpha is an empty field');
  assert.equal(Number(rows[2][col('alpha')]), Number((1 / 3).toPrecision(12)));
  assert.equal(rows[2][col('warning')], 'midpoint x = 2z - x_n, inverted "tet" 4');
  assert.equal(rows[3][col('gravity')], '-4');
  assert.equal(rows[3][col('pz')], '-2');
  assert.equal(rows[3][col('ly')], '1e-20');
  for (const r of rows) assert.equal(r.length, header.length);

  // Particles (no surface): frames are point lists of every node.
  assert.deepEqual(readdirSync(paths.frames), ['frame_00000.obj', 'frame_00001.obj']);
  const f1 = parseObj(readFileSync(join(paths.frames, 'frame_00001.obj'), 'utf8'));
  assert.equal(f1.triangles.length, 0);
  assert.deepEqual([...f1.positions], [1.5, 2, 3, 0, 0, 0]);

  const svg = readFileSync(paths.plot, 'utf8');
  assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /<\/svg>\s*$/);
  for (const name of ['kinetic', 'potential', 'total', 'target']) assert.ok(svg.includes(`>${name}<`), `legend shows ${name}`);

  const summary = JSON.parse(readFileSync(paths.summary, 'utf8'));
  assert.equal(summary.stopped, null);
  assert.equal(summary.steps, 2);
  assert.equal(summary.peakMemoryMiB, 'NaN');
  assert.equal(summary.outputs.rows, 3);
  assert.equal(summary.outputs.frameCount, 2);
  assert.equal(summary.options.h, 0.1);
  assert.equal(summary.effectiveScene.name, 'two-particles');
});

test('RunOutput clears only its own files from an existing folder', async () => {
  const dir = join(tmp, 'run-b');
  mkdirSync(join(dir, 'frames'), { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'mine');
  writeFileSync(join(dir, 'summary.json'), '{"stale": true}');
  writeFileSync(join(dir, 'frames', 'frame_00099.obj'), 'v 0 0 0\n');
  mkdirSync(join(dir, 'other'));
  const model = buildModel(particleScene);
  const out = new RunOutput(dir, model, fakeOptions());
  out.observer.step!(record(0));
  assert.equal(existsSync(join(dir, 'summary.json')), false, 'a stale summary must not survive the start of a new run');
  out.observer.frame!(0, 0, model.x0, model.v0);
  await out.finish(fakeSummary(0, 'step 1 (t = 0.1 s): boom'));
  assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine');
  assert.ok(existsSync(join(dir, 'other')));
  assert.deepEqual(readdirSync(join(dir, 'frames')), ['frame_00000.obj']);
  assert.equal(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).stopped, 'step 1 (t = 0.1 s): boom');
});

test('tet frames hold the closed surface only (interior nodes dropped, faces renumbered)', async () => {
  const scene = parseScene({
    name: 'cube',
    duration: 0,
    dt: 0.1,
    bodies: [{ mesh: { type: 'box', size: [1, 1, 1], cells: [2, 2, 2] }, material: { youngsModulus: 1e4 } }],
  });
  const model = buildModel(scene);
  assert.equal(model.nNodes, 27);
  const out = new RunOutput(join(tmp, 'cube'), model, toRunOptions(scene));
  out.observer.step!(record(0));
  out.observer.frame!(0, 0, model.x0, model.v0);
  const paths = await out.finish(fakeSummary(0));
  const surf = parseObj(readFileSync(join(paths.frames, 'frame_00000.obj'), 'utf8'));
  const nv = surf.positions.length / 3;
  const nf = surf.triangles.length / 3;
  assert.equal(nv, 26, 'the centre node is not drawn');
  assert.equal(nf, 6 * 4 * 2, 'two triangles per boundary cell face');
  // Closed genus-0 surface: V - E + F = 2 with E = 3F/2; the centre (0.5, 0.5, 0.5) is absent.
  assert.equal(nv - (3 * nf) / 2 + nf, 2);
  for (let i = 0; i < nv; i++) {
    const p = [0, 1, 2].map((a) => surf.positions[3 * i + a]);
    assert.ok(p.some((c) => Math.abs(c) < 1e-9 || Math.abs(c - 1) < 1e-9), `node ${i} lies on the boundary`);
  }
});

test('JSON syntax errors name the file, line and column', () => {
  const text = '{\n  "name": "x",\n  "bodies": [1,]\n}\n';
  assert.throws(() => parseJsonText(text, 'scene.json'), (e: Error) => e instanceof SceneError && /scene\.json:3:16: invalid JSON/.test(e.message));
  // V8 gives no offset for this one ("Unexpected token"): our own scan finds it.
  assert.throws(() => parseJsonText('{\n "a": tru\n}', 'b.json'), /b\.json:2:7: .*expected 'true'/);
  assert.throws(() => parseJsonText('{"a": 1', 'c.json'), /c\.json:1:8:/);
  assert.throws(() => parseJsonText('{"a": "x\ny"}', 'd.json'), /d\.json:1:9: .*control character/);
  assert.equal(findJsonSyntaxError('{"a": [1, 2.5e3, -0.1, "\\u00e9", true, null], "b": {}}'), null);
  assert.deepEqual(parseJsonText('\ufeff{"a": 1}', 'bom.json'), { a: 1 });
});

test('applyOverrides validates, names the field, drops scene params when the integrator changes, and copies', () => {
  const base = parseScene({ ...JSON.parse(readFileSync(new URL('../scenes/oscillator.json', import.meta.url), 'utf8')), integrator: { name: 'a-search', params: { alphaMax: 1.2 } } });
  const same = applyOverrides(base, { params: { sparse: true }, dt: 1 / 120 });
  assert.deepEqual(same.integrator.params, { alphaMax: 1.2, sparse: true });
  assert.equal(same.dt, 1 / 120);
  assert.equal(base.dt, 0.1, 'the input scene is unchanged');
  const other = applyOverrides(base, { integrator: 'newmark', params: { beta: 0.3 } });
  assert.deepEqual(other.integrator.params, { beta: 0.3 });
  const fails = (o: Parameters<typeof applyOverrides>[1], field: string, text: RegExp) =>
    assert.throws(() => applyOverrides(base, o), (e: Error) => e instanceof OverrideError && e.field === field && text.test(e.message));
  fails({ integrator: 'nope' }, 'integrator', /unknown integrator 'nope'; allowed: .*bdf2.*a-search/);
  fails({ params: { nope: 1 } }, 'params', /no parameter 'nope'; allowed: alphaMin, alphaMax, sparse/);
  fails({ dt: 0 }, 'dt', /positive/);
  fails({ duration: -1 }, 'duration', /non-negative/);
  fails({ linear: 'lu' as 'pcg' }, 'linear', /auto, pcg, ldlt, ldlt-lagged/);
});

test('toRunOptions maps the energy schedule: schedule over tau, tau from decayStart, else conserve', () => {
  const raw = JSON.parse(readFileSync(new URL('../scenes/oscillator.json', import.meta.url), 'utf8'));
  const conserve = toRunOptions(parseScene(raw));
  assert.deepEqual(conserve.energy, { scale: 1, ground: 0, decay: [] });
  assert.equal(conserve.blowUpFactor, 1e3);
  assert.equal(conserve.h, 0.1);
  assert.equal(conserve.frameRate, 10);
  const tau = toRunOptions(parseScene({ ...raw, energy: { tau: 2, decayStart: 1, ground: -1 }, damping: { rayleigh: 0.01 } }), { blowUpFactor: 50 });
  assert.deepEqual(tau.energy, { scale: 1, ground: -1, decay: [{ from: 1, tau: 2 }] });
  assert.equal(tau.rayleigh, 0.01);
  assert.equal(tau.blowUpFactor, 50);
  const pieces = toRunOptions(parseScene({ ...raw, energy: { tau: 2, schedule: [{ from: 1, tau: 1 }, { from: 1.5, tau: 0.5 }] } }));
  assert.deepEqual(pieces.energy.decay, [{ from: 1, tau: 1 }, { from: 1.5, tau: 0.5 }]);
});

test('meshResolver loads TetGen files relative to the scene and names missing built-in meshes', () => {
  const dir = join(tmp, 'mesh-scene');
  mkdirSync(join(dir, 'meshes'), { recursive: true });
  writeFileSync(join(dir, 'meshes', 'tet.node.gz'), gzipSync('4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n'));
  writeFileSync(join(dir, 'meshes', 'tet.ele.gz'), gzipSync('1 4 0\n1 1 2 3 4\n'));
  writeFileSync(
    join(dir, 'scene.json'),
    JSON.stringify({ name: 'one-tet', duration: 0, dt: 0.1, bodies: [{ mesh: { type: 'file', path: 'meshes/tet.node.gz' }, material: { youngsModulus: 1e4, density: 600 } }] }),
  );
  const loaded = loadScene(join(dir, 'scene.json'));
  assert.equal(loaded.baseDir, dir);
  const model = buildModel(loaded.scene, meshResolver(loaded.baseDir));
  assert.equal(model.nNodes, 4);
  const totalMass = model.mass.reduce((s, m) => s + m, 0) / 3;
  assert.ok(Math.abs(totalMass - 600 / 6) < 1e-9, `mass ${totalMass}`);

  const builtin = parseScene({ name: 'b', duration: 0, dt: 0.1, bodies: [{ mesh: { type: 'builtin', name: 'bunny' }, material: { youngsModulus: 1e4 } }] });
  assert.throws(() => buildModel(builtin, meshResolver(dir, join(dir, 'no-meshes'))), /bodies\[0\]\.mesh\.name: .*bunny.*no-meshes\/bunny\.node\.gz/);
  const missing = parseScene({ name: 'm', duration: 0, dt: 0.1, bodies: [{ mesh: { type: 'file', path: 'gone.msh' }, material: { youngsModulus: 1e4 } }] });
  assert.throws(() => buildModel(missing, meshResolver(dir)), /bodies\[0\]\.mesh\.path: mesh file .*gone\.msh not found/);
});

test('loadScene finds built-ins by name and reports unknown names with the list', () => {
  const { scene, source } = loadScene('oscillator');
  assert.equal(scene.name, 'oscillator');
  assert.match(source, /scenes[\\/]oscillator\.json$/);
  assert.throws(() => loadScene('no-such-scene'), /unknown scene 'no-such-scene'.*oscillator/);
});

test('the compare report has one row per run with its status', () => {
  const ok = fakeSummary(10);
  const md = compareReportMarkdown({ scene: 's', h: 0.1, duration: 1 }, [
    { integrator: 'a-search', dir: 'a-search', summary: { ...ok, energyKept: 0.99, minEnergy: 0.5, maxEnergy: 1.5, initialEnergy: 2 } },
    { integrator: 'explicit-euler', dir: 'explicit-euler', summary: { ...ok, stopped: 'step 7 (t = 0.700000 s): unstable: the total | grew' } },
    { integrator: 'bdf2', dir: 'bdf2', error: 'disk full' },
  ]);
  const rows = md.split('\n').filter((l) => l.startsWith('| ['));
  assert.equal(rows.length, 3);
  assert.match(rows[0], /\| 0\.99 \| 0\.25 \/ 0\.75 \| n\/a \| ok \|$/);
  assert.match(rows[1], /stopped at step 7: unstable: the total \\\| grew \|$/);
  assert.match(rows[2], /failed: disk full \|$/);
  assert.equal(runStatus({ integrator: 'x', dir: 'x', summary: ok }), 'ok');
});
