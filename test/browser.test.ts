/**
 * The viewer, `vivace render` and the demo in a real browser: Debian's Chromium driven by playwright-core. Chromium
 * is installed by scripts/install-chromium.sh when missing (as root with apt-get); where it cannot be, these tests
 * are skipped with a message saying why. The pages are built fresh from web/ first (esbuild, about a second).
 */

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { main } from '../src/cli/main.js';
import { buildModel } from '../src/scene/build.js';
import { simulate } from '../src/sim/simulate.js';
import { findChromium, launchChromium } from '../src/viewer/chromium.js';
import { pageDir } from '../src/viewer/pages.js';
import { hasFfmpeg, renderRuns } from '../src/viewer/render.js';
import { RunCatalog } from '../src/viewer/run-folders.js';
import { startServer, type RunningServer } from '../src/viewer/server.js';
import { demoMeshes, demoRunOptions, demoScene } from '../web/demo/scenes.js';
import { buildWeb } from '../scripts/build-web.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'vivace-browser-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Installs Chromium when missing and possible; returns its path or why there is none. */
function chromiumOrReason(): { path: string } | { reason: string } {
  if (!findChromium()) spawnSync('bash', [join(root, 'scripts', 'install-chromium.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const path = findChromium();
  return path ? { path } : { reason: 'no Chromium: scripts/install-chromium.sh installs Debian\'s chromium only as root with apt-get (or set VIVACE_CHROMIUM)' };
}

const chromium = chromiumOrReason();
const skip = 'reason' in chromium ? chromium.reason : false;
if (skip) console.log(`# browser tests skipped: ${skip}`);

/** Two cubes dropped on the ground: contact, two bodies, a plane; 0.5 s at h = 1/60 (a few CPU seconds). */
const dropScene = {
  name: 'drop',
  duration: 0.5,
  dt: 1 / 60,
  frameRate: 30,
  contact: { kappa: 1e5, dhat: 0.001 },
  obstacles: [{ type: 'plane', name: 'ground' }],
  bodies: [
    { name: 'cube', mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [2, 2, 2] }, transform: { center: true, translate: [0, 0.18, 0], rotate: { axis: [1, 0, 1], degrees: 30 } }, material: { youngsModulus: 1e5 } },
    { name: 'small', mesh: { type: 'box', size: [0.06, 0.06, 0.06], cells: [2, 2, 2] }, transform: { center: true, translate: [0.12, 0.1, 0] }, material: { youngsModulus: 1e5 } },
  ],
};

type Stats = { covered: number; body: number; hash: number }[];

/** Per viewport column of the 3D canvas: the share of pixels that are not background, of body colour, and a hash. */
function canvasStats(page: Page, columns: number): Promise<Stats> {
  return page.evaluate((cols) => {
    const canvas = document.querySelector('#stage canvas') as HTMLCanvasElement;
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const g = copy.getContext('2d')!;
    g.drawImage(canvas, 0, 0);
    const { data, width, height } = g.getImageData(0, 0, copy.width, copy.height);
    const out = [];
    for (let c = 0; c < cols; c++) {
      let covered = 0;
      let body = 0;
      let hash = 0;
      let n = 0;
      for (let y = 0; y < height; y += 2) {
        for (let x = Math.floor((c * width) / cols); x < Math.floor(((c + 1) * width) / cols); x += 2) {
          const i = 4 * (y * width + x);
          const [r, gr, b] = [data[i], data[i + 1], data[i + 2]];
          n++;
          // Background #f4f5f7; planes are grey; bodies are saturated (blue #4e79a7, orange #f28e2b, ...).
          if (Math.abs(r - 0xf4) + Math.abs(gr - 0xf5) + Math.abs(b - 0xf7) > 24) covered++;
          if (Math.max(r, gr, b) - Math.min(r, gr, b) > 40) body++;
          hash = (hash * 31 + r + 7 * gr + 13 * b) >>> 0;
        }
      }
      out.push({ covered: covered / n, body: body / n, hash });
    }
    return out;
  }, columns);
}

/** The colours of every 16th pixel of the 3D canvas. */
async function canvasPixels(page: Page): Promise<Uint8ClampedArray> {
  const data = await page.evaluate(() => {
    const canvas = document.querySelector('#stage canvas') as HTMLCanvasElement;
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    copy.getContext('2d')!.drawImage(canvas, 0, 0);
    return Array.from(copy.getContext('2d')!.getImageData(0, 0, copy.width, copy.height).data.filter((_, i) => i % 64 < 3));
  });
  return Uint8ClampedArray.from(data);
}

/** Share of sampled colour values that differ between two captures. */
function changedShare(a: Uint8ClampedArray, b: Uint8ClampedArray): number {
  let changed = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 8) changed++;
  return changed / a.length;
}

describe('browser', { skip }, () => {
  let browser: Browser;
  let server: RunningServer;
  let page: Page;
  const compare = join(tmp, 'drop-compare');

  before(async () => {
    await buildWeb();
    const scene = join(tmp, 'drop.json');
    writeFileSync(scene, JSON.stringify(dropScene));
    const quiet = { write: () => true, isTTY: false };
    assert.equal(await main(['compare', scene, '--integrators', 'a-search,bdf2', '--out', compare, '--quiet'], { stdout: quiet, stderr: quiet }), 0);
    browser = await launchChromium((chromium as { path: string }).path);
    server = await startServer({ pageDir: pageDir('viewer'), runs: new RunCatalog([compare]) });
    page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
    page.on('pageerror', (err) => console.log(`page error: ${err.message}`));
    await page.goto(`${server.url}?paused`);
    await page.evaluate(() => (window as unknown as { vivaceViewer: { ready: Promise<void> } }).vivaceViewer.ready);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const viewer = <T>(fn: string, ...args: unknown[]) => page.evaluate(([f, a]) => (window as unknown as Record<string, Record<string, (...x: unknown[]) => unknown>>).vivaceViewer[f as string](...(a as unknown[])), [fn, args] as const) as Promise<T>;

  test('the viewer draws both runs of a comparison side by side, each with its coloured bodies on the ground', async () => {
    const runs = await viewer<{ label: string; frames: number; rows: number; done: boolean }[]>('runs');
    assert.deepEqual(runs.map((r) => [r.label, r.frames, r.rows, r.done]), [['a-search', 16, 31, true], ['bdf2', 16, 31, true]]);
    await viewer('setTime', 0);
    const stats = await canvasStats(page, 2);
    for (const [i, s] of stats.entries()) {
      assert.ok(s.covered > 0.2, `viewport ${i}: ${(100 * s.covered).toFixed(1)} % of the pixels show the scene (ground and bodies)`);
      assert.ok(s.body > 0.003, `viewport ${i}: ${(100 * s.body).toFixed(2)} % of the pixels have a body colour`);
    }
    const labels = await page.locator('.viewport-label').allTextContents();
    assert.deepEqual(labels.map((l) => l.split(' ')[0]), ['a-search', 'bdf2']);
    await viewer('setLayout', 'overlay');
    const overlay = await canvasStats(page, 1);
    assert.ok(overlay[0].body > stats[0].body * 0.5, 'overlaid: both runs in one view');
    await viewer('setLayout', 'side-by-side');
  });

  test('scrubbing the time slider draws another frame', async () => {
    const scrub = async (t: number) => {
      await page.locator('input[data-role="scrub"]').evaluate((el: HTMLInputElement, value) => {
        el.value = String(value);
        el.dispatchEvent(new Event('input', { bubbles: true }));
      }, t);
      return { shown: await viewer<number[]>('shownFrames'), pixels: await canvasPixels(page) };
    };
    const start = await scrub(0);
    const later = await scrub(0.4);
    assert.deepEqual(start.shown, [0, 0]);
    assert.deepEqual(later.shown, [12, 12], 't = 0.4 s is frame 12 at 30 frames per second');
    assert.ok(changedShare(start.pixels, later.pixels) > 0.002, `${(100 * changedShare(start.pixels, later.pixels)).toFixed(2)} % of the pixels changed`);
    const again = await scrub(0);
    assert.equal(changedShare(start.pixels, again.pixels), 0, 'back at t = 0 the same image');
    assert.match(await page.locator('[data-role="time"]').textContent() ?? '', /t = 0\.000 s \/ 0\.500 s/);
  });

  test('energy and alpha plots of each run, with the legend of the issue and a cursor that follows the time', async () => {
    assert.equal(await page.locator('.run-plots').count(), 2);
    assert.equal(await page.locator('.run-plots .uplot').count(), 4, 'an energy and an alpha plot per run');
    const legend = await page.locator('.run-plots').first().locator('.u-legend').first().textContent();
    for (const name of ['kinetic', 'potential', 'contact', 'total', 'target']) assert.ok(legend?.includes(name), `legend has ${name}: ${legend}`);
    assert.match((await page.locator('.run-plots').nth(1).textContent()) ?? '', /alpha: this integrator has none/);
    const inked = await page.evaluate(() =>
      [...document.querySelectorAll('.run-plots .uplot canvas')].map((c) => {
        const canvas = c as HTMLCanvasElement;
        const d = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        let ink = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++;
        return ink / (d.length / 4);
      }),
    );
    inked.forEach((share, i) => assert.ok(share > 0.01, `plot ${i} draws curves and axes (${(100 * share).toFixed(1)} % inked)`));
    const cursorX = async (t: number) => {
      await viewer('setTime', t);
      return page.locator('.time-cursor').first().evaluate((el) => new DOMMatrix(getComputedStyle(el).transform).m41);
    };
    const x0 = await cursorX(0);
    const x1 = await cursorX(0.25);
    const x2 = await cursorX(0.5);
    assert.ok(x0 < x1 && x1 < x2, `cursor at ${x0}, ${x1}, ${x2} px`);
    assert.ok(Math.abs(x1 - (x0 + x2) / 2) < 2, 'the cursor is at the time on the axis');
  });

  test('a run in progress is followed: new frames and metrics rows are read as they appear, then its end', async () => {
    const live = join(tmp, 'live');
    const source = join(compare, 'a-search');
    mkdirSync(join(live, 'frames'), { recursive: true });
    const lines = readFileSync(join(source, 'metrics.csv'), 'utf8').split('\n');
    const addFrames = (from: number, to: number) => {
      for (let i = from; i < to; i++) copyFileSync(join(source, 'frames', `frame_${String(i).padStart(5, '0')}.obj`), join(live, 'frames', `frame_${String(i).padStart(5, '0')}.obj`));
    };
    writeFileSync(join(live, 'metrics.csv'), `${lines.slice(0, 11).join('\n')}\n${lines[11].slice(0, 10)}`); // rows 0-9 and half a row
    addFrames(0, 5);
    const liveServer = await startServer({ pageDir: pageDir('viewer'), runs: new RunCatalog([live]) });
    const livePage = await browser.newPage({ viewport: { width: 800, height: 600 } });
    try {
      await livePage.goto(`${liveServer.url}?paused`);
      const state = () => livePage.evaluate(() => (window as unknown as { vivaceViewer: { runs(): { frames: number; rows: number; done: boolean }[] } }).vivaceViewer.runs()[0]);
      await livePage.waitForFunction(() => {
        const run = (window as unknown as { vivaceViewer: { runs(): { frames: number; rows: number }[] } }).vivaceViewer.runs()[0];
        return run?.frames === 5 && run.rows === 10;
      });
      assert.deepEqual(await state(), { ...(await state()), frames: 5, rows: 10, done: false });
      assert.match((await livePage.locator('.run-plots-title').textContent()) ?? '', /\(running\)/);
      appendFileSync(join(live, 'metrics.csv'), `${lines[11].slice(10)}\n${lines.slice(12, 32).join('\n')}\n`);
      addFrames(5, 16);
      await livePage.waitForFunction(() => (window as unknown as { vivaceViewer: { runs(): { frames: number; rows: number }[] } }).vivaceViewer.runs()[0].rows === 31, undefined, { timeout: 10000 });
      copyFileSync(join(source, 'summary.json'), join(live, 'summary.json'));
      await livePage.waitForFunction(() => (window as unknown as { vivaceViewer: { runs(): { done: boolean }[] } }).vivaceViewer.runs()[0].done, undefined, { timeout: 10000 });
      assert.deepEqual(await state(), { ...(await state()), frames: 16, rows: 31, done: true });
      const series = await livePage.evaluate(() => (window as unknown as { vivaceViewer: { endTime(): number } }).vivaceViewer.endTime());
      assert.ok(Math.abs(series - 0.5) < 1e-9);
    } finally {
      await livePage.close();
      await liveServer.close();
    }
  });

  test('vivace render writes one PNG per frame (and a video when ffmpeg is there), refusing to overwrite other files', async () => {
    const out = join(tmp, 'frames-out');
    const result = await renderRuns({ runDirs: [compare], out, fps: 10, width: 480, height: 300, layout: 'side-by-side', plots: true, browser });
    assert.equal(result.kind, 'png');
    assert.equal(result.frames, 6, '0.5 s at 10 fps: t = 0, 0.1, ..., 0.5');
    const files = readdirSync(out).sort();
    assert.deepEqual(files, [0, 1, 2, 3, 4, 5].map((i) => `frame_0000${i}.png`));
    const first = readFileSync(join(out, files[0]));
    const last = readFileSync(join(out, files[5]));
    assert.equal(first.subarray(1, 4).toString(), 'PNG');
    assert.equal(first.readUInt32BE(16), 480, 'PNG width');
    assert.notDeepEqual(first, last, 'the bodies moved');
    const other = join(tmp, 'not-frames');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'keep me');
    await assert.rejects(renderRuns({ runDirs: [compare], out: other, width: 100, height: 100, layout: 'overlay', plots: false }), /holds other files than frame_NNNNN\.png \(notes\.txt\)/);
    assert.equal(readFileSync(join(other, 'notes.txt'), 'utf8'), 'keep me');
    if (!hasFfmpeg()) {
      console.log('# no ffmpeg on the PATH: the video output is not exercised (PNG frames are written instead)');
      return;
    }
    const movie = join(tmp, 'movie.mp4');
    const video = await renderRuns({ runDirs: [compare], out: movie, fps: 10, width: 320, height: 200, layout: 'overlay', plots: false, browser });
    assert.equal(video.frames, 6);
    assert.equal(video.kind, 'video');
    assert.equal(readFileSync(movie).subarray(4, 8).toString(), 'ftyp', 'an MP4 file');
  });

  test('the demo computes in a Web Worker, plays as it computes, and its energies match a Node run of the same scene and steps', async () => {
    const demoServer = await startServer({ pageDir: pageDir('demo') });
    const demo = await browser.newPage({ viewport: { width: 900, height: 700 } });
    demo.on('pageerror', (err) => console.log(`demo page error: ${err.message}`));
    try {
      await demo.goto(`${demoServer.url}?idle`);
      await demo.evaluate(() => (window as unknown as { vivaceDemo: { ready: Promise<void> } }).vivaceDemo.ready);
      const cases = [
        { scene: 'bouncing-ball', integrator: 'a-search', params: {} as Record<string, number>, duration: 0.6 },
        { scene: 'oscillator', integrator: 'bdf2', params: {}, duration: 3 },
        { scene: 'oscillator', integrator: 'a-search', params: { alphaMax: 1 }, duration: 3 },
      ];
      for (const c of cases) {
        // Frames stream out while the worker computes: the worker stamps each message with its send time, so the
        // check does not depend on the page catching the run half-way (a fast run ends before a poll would see it).
        const state = await demo.evaluate(async (start) => {
          const api = (window as unknown as { vivaceDemo: { run(s: unknown): Promise<void>; state(): { rows: number; frames: number; done: boolean; sent: { secondFrame: number; done: number } } } }).vivaceDemo;
          await api.run(start);
          return api.state();
        }, c);
        const expectedRows = Math.round(c.duration / demoScene(c.scene).dt) + 1;
        assert.equal(state.rows, expectedRows, `${c.scene} / ${c.integrator}: every step arrived`);
        assert.ok(state.done);
        if (c.scene === 'bouncing-ball') {
          const { secondFrame, done } = state.sent;
          assert.ok(state.frames > 2 && secondFrame < 0.5 * done, `frame 1 was sent at ${secondFrame.toFixed(1)} ms of a ${done.toFixed(1)} ms computation`);
        }
        const browserSeries = await demo.evaluate(() => (window as unknown as { vivaceDemo: { series(): { total: number[]; kinetic: number[] } } }).vivaceDemo.series());
        const scene = demoScene(c.scene, { integrator: c.integrator, params: c.params, duration: c.duration });
        const node: number[] = [];
        simulate(buildModel(scene, demoMeshes), demoRunOptions(scene), { step: (r) => node.push(r.total) });
        assert.equal(node.length, expectedRows);
        let worst = 0;
        node.forEach((e, i) => (worst = Math.max(worst, Math.abs(e - browserSeries.total[i]) / Math.abs(node[0]))));
        assert.ok(worst <= 1e-12, `${c.scene} / ${c.integrator}: browser and Node total energies differ by ${worst.toExponential(2)} of H0`);
      }
      // The last run (the oscillator) is drawn and its plot grew to the end.
      await demo.evaluate(() => (window as unknown as { vivaceDemo: { setTime(t: number): void } }).vivaceDemo.setTime(1));
      const stats = await canvasStats(demo, 1);
      assert.ok(stats[0].body > 0.0005, `the particles are drawn (${(100 * stats[0].body).toFixed(3)} % of pixels)`);
      assert.equal(await demo.locator('.run-plots .uplot').count(), 2);
    } finally {
      await demo.close();
      await demoServer.close();
    }
  });
});

if (!skip) {
  test('the static demo files are all the demo needs (no server API): `vivace demo --out` writes them', async () => {
    const out = join(tmp, 'static-demo');
    const quiet = { write: () => true, isTTY: false };
    assert.equal(await main(['demo', '--out', out], { stdout: quiet, stderr: quiet }), 0);
    assert.deepEqual(readdirSync(out).sort(), ['demo.css', 'demo.js', 'index.html', 'worker.js']);
    assert.ok(existsSync(join(out, 'index.html')));
    assert.equal(await main(['demo', '--out', out], { stdout: quiet, stderr: quiet }), 2, 'a folder that is not empty is refused');
  });
}
