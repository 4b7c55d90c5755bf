/**
 * `vivace render`: plays runs in the viewer page in headless Chromium and captures one screenshot per output frame,
 * piped to ffmpeg for a video when ffmpeg is on the PATH, or written as a PNG sequence (frame_00000.png ...). The
 * output appears only when complete: frames go to a temporary sibling first, renamed at the end.
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumMissingMessage, findChromium, launchChromium } from './chromium.js';
import { pageDir } from './pages.js';
import { RunCatalog } from './run-folders.js';
import { startServer } from './server.js';

export const VIDEO_EXTENSIONS = ['.mp4', '.mov', '.mkv', '.webm', '.gif'];

export interface RenderOptions {
  runDirs: string[];
  /** A video file (by its extension) or a folder for PNG frames. */
  out: string;
  /** Output frames per second (default: the runs' own frame rate). */
  fps?: number;
  width: number;
  height: number;
  layout: 'side-by-side' | 'overlay';
  plots: boolean;
  chromium?: string;
  /** A Chromium already running (left open); else one is started for the render and closed after. */
  browser?: Browser;
  /** Called after each captured frame. */
  progress?: (done: number, total: number) => void;
}

export interface RenderResult {
  kind: 'video' | 'png';
  /** The video file or the PNG folder written. */
  path: string;
  frames: number;
  fps: number;
  /** Why a video was asked for but PNGs were written. */
  note?: string;
}

/** Thrown for output paths the command refuses before rendering anything. */
export class RenderError extends Error {
  override name = 'RenderError';
}

export function hasFfmpeg(): boolean {
  return spawnSync('ffmpeg', ['-version'], { stdio: 'ignore' }).status === 0;
}

export async function renderRuns(options: RenderOptions): Promise<RenderResult> {
  const catalog = new RunCatalog(options.runDirs);
  const wantsVideo = VIDEO_EXTENSIONS.includes(extname(options.out).toLowerCase());
  const video = wantsVideo && hasFfmpeg();
  const pngDir = wantsVideo ? join(dirname(options.out), `${basename(options.out, extname(options.out))}-png`) : options.out;
  if (!video) checkPngTarget(pngDir);
  const executable = options.browser ? null : findChromium(options.chromium);
  if (!options.browser && !executable) throw new RenderError(chromiumMissingMessage(options.chromium));

  const server = await startServer({ pageDir: pageDir('viewer'), runs: catalog });
  let browser: Browser | undefined;
  let page: Page | undefined;
  const target = video ? options.out : pngDir;
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  try {
    browser = options.browser ?? (await launchChromium(executable!));
    page = await browser.newPage({ viewport: { width: options.width, height: options.height } });
    const query = new URLSearchParams({ render: '1', layout: options.layout });
    if (!options.plots) query.set('noplots', '1');
    await page.goto(`${server.url}?${query}`);
    await page.evaluate(() => (window as unknown as { vivaceViewer: { ready: Promise<void> } }).vivaceViewer.ready);
    const { times, fps } = await page.evaluate((wanted) => {
      const v = (window as unknown as { vivaceViewer: { endTime(): number; frameTimes(): number[] } }).vivaceViewer;
      const own = v.frameTimes();
      if (!wanted) {
        const step = own.length > 1 ? own[1] - own[0] : 1 / 30;
        return { times: own, fps: 1 / step };
      }
      const end = v.endTime();
      return { times: Array.from({ length: Math.floor(end * wanted + 1e-9) + 1 }, (_, k) => k / wanted), fps: wanted };
    }, options.fps ?? 0);
    if (times.length === 0) throw new RenderError('the runs have no frames to render');

    const encoder = video ? startEncoder(partial + extname(target), fps) : null;
    if (!video) mkdirSync(partial, { recursive: true });
    for (let k = 0; k < times.length; k++) {
      await page.evaluate((t) => (window as unknown as { vivaceViewer: { setTime(t: number): void } }).vivaceViewer.setTime(t), times[k]);
      const png = await page.screenshot({ type: 'png' });
      if (encoder) await encoder.write(png);
      else writeFileSync(join(partial, `frame_${String(k).padStart(5, '0')}.png`), png);
      options.progress?.(k + 1, times.length);
    }
    if (encoder) {
      await encoder.finish();
      renameSync(partial + extname(target), target);
    } else {
      rmSync(target, { recursive: true, force: true });
      renameSync(partial, target);
    }
    const note = wantsVideo && !video ? `ffmpeg is not on the PATH: wrote PNG frames instead (encode them with: ffmpeg -framerate ${round(fps)} -i ${join(target, 'frame_%05d.png')} -pix_fmt yuv420p ${options.out})` : undefined;
    return { kind: video ? 'video' : 'png', path: target, frames: times.length, fps, note };
  } finally {
    rmSync(partial, { recursive: true, force: true });
    rmSync(partial + extname(target), { force: true });
    await page?.close().catch(() => undefined);
    if (!options.browser) await browser?.close().catch(() => undefined);
    await server.close();
  }
}

/** A PNG folder is written only where it cannot destroy anything but an earlier render's frames. */
function checkPngTarget(dir: string): void {
  if (!existsSync(dir)) return;
  const foreign = readdirSync(dir).filter((f) => !/^frame_\d+\.png$/.test(f));
  if (foreign.length > 0) throw new RenderError(`--out ${dir}: the folder exists and holds other files than frame_NNNNN.png (${foreign.slice(0, 3).join(', ')}); give a new folder or a video file name`);
}

function round(x: number): number {
  return Number(x.toPrecision(6));
}

interface Encoder {
  write(png: Buffer): Promise<void>;
  finish(): Promise<void>;
}

/** ffmpeg reading PNGs from stdin; H.264 in yuv420p for .mp4/.mov so that every player opens it. */
function startEncoder(file: string, fps: number): Encoder {
  const ext = extname(file).toLowerCase();
  const codec = ext === '.mp4' || ext === '.mov' || ext === '.mkv' ? ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-crf', '18'] : [];
  const args = ['-y', '-loglevel', 'error', '-f', 'image2pipe', '-framerate', String(round(fps)), '-i', '-', '-vf', 'pad=ceil(iw/2)*2:ceil(ih/2)*2', ...codec, file];
  const ff = spawn('ffmpeg', args, { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  ff.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<void>((done, fail) => {
    ff.on('error', fail);
    ff.on('close', (code) => (code === 0 ? done() : fail(new Error(`ffmpeg failed (exit ${code}): ${stderr.trim().slice(-400)}`))));
  });
  let broken: Error | null = null;
  ff.stdin.on('error', (err) => (broken = err));
  return {
    write: async (png) => {
      if (broken) throw broken;
      if (!ff.stdin.write(png)) await Promise.race([new Promise((done) => ff.stdin.once('drain', done)), exited]);
    },
    finish: async () => {
      ff.stdin.end();
      await exited;
    },
  };
}
