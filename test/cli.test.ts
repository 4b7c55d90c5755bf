import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectParam, parseRational, parseTimeStep } from '../src/cli/args.js';
import { METRICS_COLUMNS } from '../src/io/run-output.js';
import { runCli as cli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-cli-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const root = fileURLToPath(new URL('..', import.meta.url));
const oscillatorJson = JSON.parse(readFileSync(join(root, 'scenes', 'oscillator.json'), 'utf8'));

function csv(path: string): { header: string[]; rows: number[][] } {
  const lines = readFileSync(path, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'metrics.csv ends with a complete line');
  const header = lines[0].split(',');
  // Oscillator rows have no warnings, so a plain split is exact; empty fields (NaN alpha) become NaN.
  const rows = lines.slice(1).map((l) => l.split(',').map((f) => (f === '' ? NaN : Number(f))));
  return { header, rows };
}

test('run oscillator --duration 1 writes metrics.csv (11 rows), summary.json, energy.svg and frames', async () => {
  const dir = join(tmp, 'osc');
  const r = await cli('run', 'oscillator', '--duration', '1', '--out', dir);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /metrics\.csv/);

  const { header, rows } = csv(join(dir, 'metrics.csv'));
  assert.deepEqual(header, [...METRICS_COLUMNS, 'spring', 'warning']);
  assert.equal(rows.length, 11);
  const c = (name: string) => header.indexOf(name);
  rows.forEach((row, i) => {
    assert.equal(row.length, header.length);
    assert.equal(row[c('step')], i);
    assert.ok(Math.abs(row[c('t')] - 0.1 * i) < 1e-12);
    assert.ok(Math.abs(row[c('kinetic')] + row[c('potential')] - row[c('total')]) < 1e-9);
    assert.ok(Math.abs(row[c('spring')] - row[c('potential')]) < 1e-9, 'the spring is the only potential');
    assert.ok(i === 0 ? Number.isNaN(row[c('alpha')]) : Number.isFinite(row[c('alpha')]));
  });
  // Step 0 is the initial state of the scene: x = (1, 0, 0), v = 0, H = |x|^2 / 2.
  assert.equal(rows[0][c('kinetic')], 0);
  assert.equal(rows[0][c('total')], 0.5);
  assert.equal(rows[0][c('target')], 0.5);

  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  assert.equal(summary.scene, 'oscillator');
  assert.equal(summary.integrator, 'a-search');
  assert.equal(summary.h, 0.1);
  assert.equal(summary.steps, 10);
  assert.equal(summary.stopped, null);
  assert.equal(summary.initialEnergy, 0.5);
  assert.ok(Math.abs(summary.finalEnergy - rows[10][c('total')]) < 1e-9);
  assert.ok(Math.abs(summary.energyKept - summary.finalEnergy / summary.initialEnergy) < 1e-12);
  const printed = /energy kept \(final \/ initial total\): (\S+) /.exec(r.out);
  assert.ok(printed, r.out);
  assert.equal(Number(printed[1]), Number(summary.energyKept.toPrecision(6)));
  assert.equal(summary.options.duration, 1);
  assert.equal(summary.effectiveScene.duration, 1);

  const svg = readFileSync(join(dir, 'energy.svg'), 'utf8');
  assert.match(svg, /^<svg[^>]*>/);
  assert.match(svg, /<\/svg>\s*$/);
  assert.ok(svg.includes('<path'), 'the plot draws lines');

  // frameRate 10 with h = 0.1: a frame every step.
  const frames = readdirSync(join(dir, 'frames')).sort();
  assert.equal(frames.length, 11);
  assert.equal(frames[0], 'frame_00000.obj');
  assert.equal(frames[10], 'frame_00010.obj');
  const first = readFileSync(join(dir, 'frames', 'frame_00000.obj'), 'utf8').trim().split('\n');
  assert.deepEqual(first, [first[0], first[1], first[2], 'o particle'], 'time comment, two particles, their group without faces');
  assert.equal(first[0], '# vivace frame 0 t = 0');
  assert.deepEqual(first[1].split(/\s+/).slice(1).map(Number), [1, 0, 0]);
});

test('bad flags and bad scene files exit with code 2, name the culprit and create no output folder', async () => {
  const bad = (name: string, json: string) => {
    const path = join(tmp, name);
    writeFileSync(path, json);
    return path;
  };
  const wrongType = bad('wrong-type.json', JSON.stringify({ ...oscillatorJson, dt: 'fast' }, null, 2));
  const syntaxText = JSON.stringify(oscillatorJson, null, 2).replace('"dt": 0.1,', '"dt": 0.1,,');
  const syntax = bad('syntax.json', syntaxText);
  const badLine = syntaxText.split('\n').findIndex((l) => l.includes(',,')) + 1;
  const badColumn = syntaxText.split('\n')[badLine - 1].indexOf(',,') + 2;
  const cases: [string[], RegExp[]][] = [
    [['run', 'oscillator', '--dt', 'abc'], [/--dt/, /fraction/]],
    [['run', 'oscillator', '--dt', '0'], [/--dt/]],
    [['run', 'oscillator', '--integrator', 'nope'], [/--integrator/, /'nope'/, /a-search/, /implicit-midpoint/]],
    [['run', 'oscillator', '--param', 'nope=1'], [/--param/, /'nope'/, /alphaMin, alphaMax, sparse/]],
    [['run', 'oscillator', '--param', 'alphaMax=big'], [/--param/, /alphaMax/]],
    [['run', 'oscillator', '--linear', 'lu'], [/--linear/, /pcg, ldlt/]],
    [['run', 'oscillator', '--bogus'], [/--bogus/]],
    [['run', wrongType], [/wrong-type\.json/, /\bdt: .*expected number/]],
    [['run', syntax], [new RegExp(`syntax\\.json:${badLine}:${badColumn}: invalid JSON`)]],
    [['run', 'no-such-scene'], [/no-such-scene/, /oscillator/]],
    [['compare', 'oscillator', '--integrators', 'bdf2,nope'], [/--integrators/, /'nope'/]],
  ];
  for (const [i, [argv, patterns]] of cases.entries()) {
    const out = join(tmp, `bad-${i}`);
    const r = await cli(...argv, '--out', out);
    assert.equal(r.code, 2, `${argv.join(' ')}: exit code (stderr: ${r.err})`);
    for (const p of patterns) assert.match(r.err, p, `${argv.join(' ')}: message`);
    assert.equal(existsSync(out), false, `${argv.join(' ')}: no output folder`);
  }
});

test('--dt takes decimals and fractions; 1/120 is exactly 1/120', async () => {
  assert.equal(parseTimeStep('1/120'), 1 / 120);
  assert.equal(parseTimeStep('0.005'), 0.005);
  assert.equal(parseTimeStep('2e-3'), 0.002);
  assert.ok(Number.isNaN(parseRational('1/x')));
  assert.ok(Number.isNaN(parseRational('1/120/2')));
  assert.throws(() => parseTimeStep('-1/120'));
  assert.throws(() => parseTimeStep('1/0'));
  assert.deepEqual(collectParam('sparse=true', collectParam('alphaMax=1.2', undefined)), { alphaMax: 1.2, sparse: true });
  assert.deepEqual(collectParam('alphaMin=-0.5', undefined), { alphaMin: -0.5 });
  const dir = join(tmp, 'dt');
  const r = await cli('run', 'oscillator', '--dt', '1/120', '--duration', '0.05', '--integrator', 'implicit-midpoint', '--quiet', '--out', dir);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, '', '--quiet prints nothing');
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  assert.equal(summary.h, 1 / 120);
  assert.equal(summary.steps, 6);
});

test('a run that blows up keeps valid outputs, writes summary.json with `stopped` and exits with code 3', async () => {
  // Explicit Euler on the unit oscillator multiplies H by (1 + h^2) per step: with h = 1 it doubles every step.
  const dir = join(tmp, 'blowup');
  const r = await cli('run', 'oscillator', '--integrator', 'explicit-euler', '--dt', '1', '--duration', '30', '--out', dir);
  assert.equal(r.code, 3);
  assert.match(r.err, /stopped early at step \d+ .*unstable/);
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  assert.match(summary.stopped, /unstable/);
  assert.ok(summary.steps < 30);
  const { rows, header } = csv(join(dir, 'metrics.csv'));
  assert.equal(rows.length, summary.steps + 1);
  const total = header.indexOf('total');
  for (let i = 1; i < rows.length; i++) assert.ok(Math.abs(rows[i][total] / rows[i - 1][total] - 2) < 1e-9, `H doubles at step ${i}`);
  assert.match(readFileSync(join(dir, 'energy.svg'), 'utf8'), /<\/svg>\s*$/);
});

test('compare runs each integrator into its folder and reports every run, a blow-up included', async () => {
  const dir = join(tmp, 'compare');
  const r = await cli('compare', 'oscillator', '--integrators', 'implicit-midpoint,explicit-euler', '--dt', '1', '--duration', '30', '--out', dir);
  assert.equal(r.code, 0, r.err);
  for (const name of ['implicit-midpoint', 'explicit-euler']) {
    assert.ok(existsSync(join(dir, name, 'metrics.csv')));
    assert.ok(existsSync(join(dir, name, 'summary.json')));
  }
  for (const f of ['energy.svg', 'energy-components.svg']) assert.match(readFileSync(join(dir, f), 'utf8'), /^<svg[\s\S]*<\/svg>\s*$/);
  const report = readFileSync(join(dir, 'report.md'), 'utf8');
  const rows = report.split('\n').filter((l) => l.startsWith('| ['));
  assert.equal(rows.length, 2);
  const cells = rows.map((row) => row.split(' | ').map((s) => s.trim()));
  assert.match(cells[0][0], /implicit-midpoint/);
  assert.equal(cells[0][2], '30');
  // The midpoint rule keeps the quadratic energy of a linear oscillator exactly.
  assert.ok(Math.abs(Number(cells[0][5]) - 1) < 1e-6, `energy kept ${cells[0][5]}`);
  assert.match(cells[0][8], /^ok/);
  assert.match(cells[1][0], /explicit-euler/);
  assert.match(cells[1][8], /^stopped at step \d+: unstable/);
});

test('scenes lists the built-in scenes and, with --integrators, the integrators and their params', async () => {
  const scenes = await cli('scenes');
  assert.equal(scenes.code, 0);
  assert.match(scenes.out, /^oscillator\s+0\.1\s+20\s+1\s+a-search$/m);
  const integ = await cli('scenes', '--integrators');
  assert.match(integ.out, /^a-search \(implicit\): /m);
  assert.match(integ.out, /--param alphaMax=1\.1\s+upper clip/);
  const schema = JSON.parse((await cli('scenes', '--schema')).out);
  assert.ok(schema.properties.bodies);
});

test('bin/vivace.js runs the CLI as a program and passes its exit code on', () => {
  // One spawn only (start-up costs seconds): a run that blows up exercises the whole path and a non-zero code.
  const dir = join(tmp, 'spawned');
  const r = spawnSync(process.execPath, [join(root, 'bin', 'vivace.js'), 'run', 'oscillator', '--integrator', 'explicit-euler', '--dt', '1', '--duration', '30', '--out', dir], {
    encoding: 'utf8',
    cwd: tmp,
  });
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stdout, /energy kept/);
  assert.match(r.stderr, /stopped early/);
  assert.match(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).stopped, /unstable/);
});

test('run --checkpoint-every / --resume: an interrupted run goes on from its checkpoint and ends with the outputs of an uninterrupted one', async () => {
  const straight = join(tmp, 'resume-straight');
  const resumed = join(tmp, 'resume-parts');
  const r0 = await cli('run', 'oscillator', '--duration', '1.5', '--out', straight, '--quiet');
  assert.equal(r0.code, 0, r0.err);
  const r1 = await cli('run', 'oscillator', '--duration', '0.8', '--checkpoint-every', '4', '--out', resumed, '--quiet');
  assert.equal(r1.code, 0, r1.err);
  assert.equal(JSON.parse(readFileSync(join(resumed, 'checkpoint.json'), 'utf8')).step, 8, 'checkpoint after the last step');
  // What an interruption after the checkpoint leaves behind: a later row and frame, which resuming must drop.
  writeFileSync(join(resumed, 'metrics.csv'), readFileSync(join(resumed, 'metrics.csv'), 'utf8') + '9,0.9,1,1,2,2\n');
  writeFileSync(join(resumed, 'frames', 'frame_00042.obj'), 'v 0 0 0\n');
  writeFileSync(join(resumed, 'bodies.csv'), readFileSync(join(resumed, 'bodies.csv'), 'utf8') + '9,0.9,0,mass,particles,1,0,0,0,0,0,0,0,0\n');

  const r2 = await cli('run', 'oscillator', '--duration', '1.5', '--resume', '--out', resumed, '--quiet');
  assert.equal(r2.code, 0, r2.err);
  const a = csv(join(straight, 'metrics.csv'));
  const b = csv(join(resumed, 'metrics.csv'));
  assert.deepEqual(b.header, a.header);
  assert.equal(b.rows.length, 16, 'steps 0 to 15, each once');
  const wall = a.header.indexOf('wall_ms');
  for (let i = 0; i < a.rows.length; i++) {
    a.rows[i].forEach((value, c) => {
      if (c === wall) return;
      assert.ok(Object.is(value, b.rows[i][c]) || Math.abs(value - b.rows[i][c]) <= 1e-12 * Math.max(1, Math.abs(value)), `row ${i} column ${a.header[c]}: ${b.rows[i][c]} vs ${value}`);
    });
  }
  assert.deepEqual(readdirSync(join(resumed, 'frames')).sort(), readdirSync(join(straight, 'frames')).sort(), 'frames 0-15, the stray one gone');
  const bodiesA = readFileSync(join(straight, 'bodies.csv'), 'utf8').trim().split('\n');
  const bodiesB = readFileSync(join(resumed, 'bodies.csv'), 'utf8').trim().split('\n');
  assert.equal(bodiesB.length, bodiesA.length, 'bodies.csv: the header and one row per frame step, the stray row gone');
  bodiesA.forEach((line, i) => {
    const x = line.split(',');
    bodiesB[i].split(',').forEach((value, c) => assert.ok(value === x[c] || Math.abs(Number(value) - Number(x[c])) <= 1e-12 * Math.max(1, Math.abs(Number(x[c]))), `bodies.csv line ${i + 1}: ${bodiesB[i]} vs ${line}`));
  });
  const sa = JSON.parse(readFileSync(join(straight, 'summary.json'), 'utf8'));
  const sb = JSON.parse(readFileSync(join(resumed, 'summary.json'), 'utf8'));
  assert.equal(sb.steps, 15);
  assert.equal(sb.newtonIterations, sa.newtonIterations);
  assert.equal(sb.outputs.rows, 16);
  assert.equal(sb.initialEnergy, sa.initialEnergy);
  assert.ok(existsSync(join(resumed, 'energy.svg')));

  // Refusals, exit 2, naming --resume and what is wrong.
  const none = await cli('run', 'oscillator', '--resume', '--out', join(tmp, 'resume-none'), '--quiet');
  assert.equal(none.code, 2);
  assert.match(none.err, /--resume: no checkpoint\.json in .*--checkpoint-every/);
  const other = await cli('run', 'oscillator', '--resume', '--integrator', 'implicit-euler', '--out', resumed, '--quiet');
  assert.equal(other.code, 2);
  assert.match(other.err, /--resume: .*checkpoint\.json: .*integrator 'a-search' \(this run: 'implicit-euler'\)/);
  const bdf2 = await cli('run', 'oscillator', '--integrator', 'bdf2', '--checkpoint-every', '2', '--out', join(tmp, 'resume-bdf2'), '--quiet');
  assert.equal(bdf2.code, 2);
  assert.match(bdf2.err, /bdf2' keeps history between steps/);
  assert.ok(!existsSync(join(tmp, 'resume-bdf2')), 'nothing written for a refused run');
});
