import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScene } from '../src/api/run-scene.js';
import { metricsPlotSvg, readMetricsTable } from '../src/io/metrics-plot.js';
import { runCli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-plot-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * A run folder as a run still going leaves it: metrics.csv without summary.json, alpha empty on step 0, a quoted
 * warning holding a comma, and a last line not yet finished.
 */
function unfinishedRun(name: string): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'metrics.csv'),
    [
      'step,t,kinetic,potential,total,target,alpha,elastic,warning',
      '0,0,1,0,1,1,,0,',
      '1,0.1,0.5,0.5,1,1,0.75,0.5,"x = 2z - x_n inverted, see step 1"',
      '2,0.2,0.25,0.7,0.95,1,1,0.7,',
      '3,0.3,0.1,0.9',
    ].join('\n'),
  );
  return dir;
}

/** The points of a series' line in the SVG (vega draws one path per series, labelled with its name). */
function linePoints(svg: string, series: string): number {
  const path = svg.match(new RegExp(`<path aria-label="[^"]*series: ${series}"[^>]*aria-roledescription="line mark" d="([^"]*)"`));
  assert.ok(path, `the SVG has a line for ${series}`);
  return (path[1].match(/[ML]/g) ?? []).length;
}

test('metrics.csv is read by column: whole lines only, empty fields as NaN, the quoted warning left out', () => {
  const table = readMetricsTable(join(unfinishedRun('read'), 'metrics.csv'));
  assert.deepEqual(table.columns, ['step', 'kinetic', 'potential', 'total', 'target', 'alpha', 'elastic']);
  assert.deepEqual([...table.t], [0, 0.1, 0.2]);
  assert.deepEqual([...table.values.get('alpha')!], [NaN, 0.75, 1]);
  assert.deepEqual([...table.values.get('elastic')!], [0, 0.5, 0.7]);
});

test('metricsPlotSvg draws one line per column with a point per finite row; unknown columns are named with the available ones', async () => {
  const table = readMetricsTable(join(unfinishedRun('svg'), 'metrics.csv'));
  const svg = await metricsPlotSvg(table, ['total', 'alpha'], { title: 'fixture run' });
  assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(svg.includes("Title text 'fixture run'"));
  assert.equal(linePoints(svg, 'total'), 3);
  assert.equal(linePoints(svg, 'alpha'), 2, 'the empty alpha of step 0 is no point');
  assert.ok(svg.includes("Y-axis titled 'value'"), 'energy and alpha share no unit');
  assert.ok((await metricsPlotSvg(table, ['kinetic', 'elastic'], { title: 'e' })).includes("Y-axis titled 'energy (J)'"));
  await assert.rejects(metricsPlotSvg(table, ['total', 'alfa', 'warning'], { title: 'x' }), (err: Error) => {
    assert.match(err.message, /metrics\.csv has no column 'alfa', 'warning'; available: step, kinetic, potential, total, target, alpha, elastic$/);
    return true;
  });
});

test('vivace plot: an unfinished run (no summary.json), --columns and --out; bad columns, folders and files exit 2 naming them', async () => {
  const dir = unfinishedRun('cli');
  const ok = await runCli('plot', dir, '--columns', 'potential,alpha');
  assert.equal(ok.code, 0, ok.err);
  const svg = readFileSync(join(dir, 'plot.svg'), 'utf8');
  assert.equal(linePoints(svg, 'potential'), 3);
  assert.equal(linePoints(svg, 'alpha'), 2);
  assert.ok(svg.includes('3 rows, t = 0 to 0.2 s (no summary.json'), 'the subtitle says the run has no summary yet');
  const out = join(tmp, 'energies.svg');
  const energies = await runCli('plot', dir, '--out', out);
  assert.equal(energies.code, 0, energies.err);
  for (const name of ['kinetic', 'potential', 'total', 'target']) assert.equal(linePoints(readFileSync(out, 'utf8'), name), 3);

  const bad = await runCli('plot', dir, '--columns', 'total,lx');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /has no column 'lx'; available: step, kinetic, potential, total, target, alpha, elastic/);
  const missing = await runCli('plot', join(tmp, 'nowhere'));
  assert.equal(missing.code, 2);
  assert.match(missing.err, /nowhere does not exist/);
  mkdirSync(join(tmp, 'empty-dir'));
  const noMetrics = await runCli('plot', join(tmp, 'empty-dir'));
  assert.equal(noMetrics.code, 2);
  assert.match(noMetrics.err, /empty-dir[/\\]metrics\.csv does not exist/);
  const header = join(tmp, 'header-only');
  mkdirSync(header);
  writeFileSync(join(header, 'metrics.csv'), 'step,t,kinetic,potential,total,target,alpha,warning\n');
  const noRows = await runCli('plot', header);
  assert.equal(noRows.code, 2);
  assert.match(noRows.err, /metrics\.csv has no rows yet/);
  const badOut = await runCli('plot', dir, '--out', join(tmp, 'no-such-dir', 'x.svg'));
  assert.equal(badOut.code, 2);
  assert.match(badOut.err, /--out: cannot write .*no-such-dir/);
});

test('a run writes alpha.svg when its integrator reports alpha (A-search), not otherwise', async () => {
  const aSearch = join(tmp, 'oscillator-a-search');
  const run = await runScene('oscillator', { out: aSearch, duration: 0.5 });
  assert.equal(run.summary.stopped, undefined);
  const summary = JSON.parse(readFileSync(join(aSearch, 'summary.json'), 'utf8'));
  assert.equal(summary.outputs.alphaPlot, 'alpha.svg');
  const steps = run.metrics.length;
  assert.equal(linePoints(readFileSync(join(aSearch, 'alpha.svg'), 'utf8'), 'alpha'), steps - 1, 'a point per step after step 0');
  // vivace plot on the finished run draws the same series, titled from summary.json.
  const plotted = await runCli('plot', aSearch, '--columns', 'alpha');
  assert.equal(plotted.code, 0, plotted.err);
  const svg = readFileSync(join(aSearch, 'plot.svg'), 'utf8');
  assert.equal(linePoints(svg, 'alpha'), steps - 1);
  assert.ok(svg.includes("Title text 'oscillator: a-search'"));

  const euler = join(tmp, 'oscillator-euler');
  await runScene('oscillator', { out: euler, duration: 0.5, integrator: 'implicit-euler' });
  assert.equal(existsSync(join(euler, 'alpha.svg')), false);
  assert.equal(JSON.parse(readFileSync(join(euler, 'summary.json'), 'utf8')).outputs.alphaPlot, null);
});
