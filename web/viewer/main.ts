/**
 * The run viewer page (served by `vivace view`): lists the runs at /api/runs, reads each run's frames and
 * metrics.csv from /runs/<id>/, and plays them in sync. Runs still in progress are polled: new frames and metrics
 * rows are read as they appear (metrics.csv by byte ranges, so only what is new). `window.vivaceViewer` lets the
 * tests and `vivace render` drive the page.
 */

import * as THREE from 'three';
import { bodyGroups } from '../shared/body-groups.js';
import { playbackBar } from '../shared/controls.js';
import { MetricsSeries } from '../shared/metrics.js';
import { parseObjFrame, parseObjPositions } from '../shared/obj-frame.js';
import { Player } from '../shared/player.js';
import { RunPlots } from '../shared/plots.js';
import { RunDrawing, Stage, type Layout, type PlaneObstacle } from '../shared/stage.js';
import '../shared/style.css';
import type { RunListing } from '../../src/viewer/listing.js';

class Run {
  listing: RunListing;
  readonly metrics = new MetricsSeries();
  /** Size of metrics.csv when last read (a trailing partial line is read again once the file grows). */
  metricsSeen = 0;
  /** Positions per frame (undefined until loaded) and the time of each frame when a frame tells it. */
  readonly frames: (Float32Array | undefined)[] = [];
  readonly frameTimes: (number | undefined)[] = [];
  /** Frames being fetched (and frames that failed, so that they are not asked for again and again). */
  readonly requested = new Set<number>();
  drawing: RunDrawing | null = null;
  vertexCount = -1;
  plots: RunPlots | null = null;
  shown = -1;
  error: string | null = null;

  constructor(listing: RunListing) {
    this.listing = listing;
  }

  /** Seconds from one frame to the next: from the summary, else the frames' own times, else estimated. */
  frameSeconds(): number {
    if (this.listing.frameSeconds) return this.listing.frameSeconds;
    const t1 = this.frameTimes[1];
    if (t1 !== undefined && t1 > 0) return t1;
    // A run in progress without timed frames: frames are every k steps; k from the rows and frames so far.
    const t = this.metrics.columns.t;
    if (t.length < 2 || this.listing.frames < 2) return t.length >= 2 ? t[1] - t[0] : 1 / 30;
    const h = t[1] - t[0];
    const k = Math.max(1, Math.round((t.length - 1) / (this.listing.frames - 1)));
    return k * h;
  }

  frameTime(i: number): number {
    return this.frameTimes[i] ?? i * this.frameSeconds();
  }

  endTime(): number {
    const n = this.listing.frames;
    const last = n > 0 ? this.frameTime(n - 1) : 0;
    const rows = this.metrics.columns.t;
    return Math.max(last, rows.length > 0 ? rows[rows.length - 1] : 0);
  }

  /** The last frame at or before t. */
  frameAt(t: number): number {
    const n = this.listing.frames;
    if (n === 0) return -1;
    const dt = this.frameSeconds();
    let i = Math.min(n - 1, Math.max(0, Math.floor(t / dt + 1e-6)));
    while (i > 0 && this.frameTime(i) > t + 1e-9) i--;
    while (i + 1 < n && this.frameTime(i + 1) <= t + 1e-9) i++;
    return i;
  }

  title(): string {
    const s = this.listing.summary;
    const status = !this.listing.done ? ' (running)' : s?.stopped ? ' (stopped early)' : '';
    return `${this.listing.label}${status}`;
  }
}

const params = new URLSearchParams(location.search);
const renderMode = params.has('render');
document.body.classList.toggle('render', renderMode);
if (params.has('noplots')) document.body.classList.add('no-plots');

const app = document.getElementById('app')!;
app.innerHTML = `
  <header class="bar">
    <strong class="brand">vivace view</strong>
    <span data-role="playback"></span>
    <label>layout <select data-role="layout"><option value="side-by-side">side by side</option><option value="overlay">overlaid</option></select></label>
    <span data-role="status" class="status"></span>
  </header>
  <div id="stage" class="stage"></div>
  <div id="plots" class="plots"></div>`;
const status = app.querySelector('[data-role="status"]') as HTMLElement;
const layoutSelect = app.querySelector('[data-role="layout"]') as HTMLSelectElement;
const stage = new Stage(document.getElementById('stage')!);
const plotsRow = document.getElementById('plots')!;

const runs: Run[] = [];
const endTime = () => runs.reduce((m, r) => Math.max(m, r.endTime()), 0);
const growing = () => runs.some((r) => !r.listing.done);
const player = new Player(endTime, growing);
const bar = playbackBar(app.querySelector('[data-role="playback"]')!, player, endTime);
player.onTime((t) => show(t));
if (params.get('layout') === 'overlay') layoutSelect.value = 'overlay';
layoutSelect.addEventListener('change', () => {
  stage.setLayout(layoutSelect.value as Layout);
  stage.requestRender();
});

let framed = false;
let framesInFlight = 0;
const MAX_IN_FLIGHT = 4;

/** Draws every run at time t: its last frame at or before t (the nearest loaded one before it while loading). */
function show(t: number): void {
  runs.forEach((run, i) => {
    if (!run.drawing) return;
    let f = run.frameAt(t);
    while (f > 0 && !run.frames[f]) f--;
    const p = f >= 0 ? run.frames[f] : undefined;
    if (p && f !== run.shown) {
      run.drawing.setPositions(p);
      run.shown = f;
    }
    const row = run.metrics.rowAt(t);
    const total = run.metrics.columns.total[row];
    stage.setLabel(i, `${run.title()}${Number.isFinite(total) ? `  ·  E = ${total.toPrecision(4)} J` : ''}`);
    run.plots?.setTime(t);
  });
  stage.render();
}

async function fetchText(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers, cache: 'no-store' });
  return { status: res.status, text: res.status === 200 || res.status === 206 ? await res.text() : '' };
}

function frameUrl(run: Run, i: number): string {
  return `runs/${encodeURIComponent(run.listing.id)}/frames/frame_${String(i).padStart(5, '0')}.obj`;
}

/** Frame 0 gives the run's surface (triangles, bodies) and the drawing; later frames only positions. */
async function loadTopology(run: Run): Promise<void> {
  const { status: code, text } = await fetchText(frameUrl(run, 0));
  if (code !== 200) throw new Error(`frame 0 of ${run.listing.label}: HTTP ${code}`);
  const frame = parseObjFrame(text, `${run.listing.label} frame 0`);
  const obstacles = (run.listing.summary?.effectiveScene?.obstacles ?? []).filter((o) => o.type !== 'plane').map((o, i) => o.name ?? `obstacle ${i}`);
  const vertexCount = frame.positions.length / 3;
  const groups = bodyGroups(vertexCount, frame.triangles, frame.groups, obstacles);
  run.vertexCount = vertexCount;
  run.frames[0] = frame.positions;
  run.frameTimes[0] = frame.t;
  run.drawing = new RunDrawing({ vertexCount, triangles: frame.triangles, groups });
}

async function loadFrame(run: Run, i: number): Promise<void> {
  const { status: code, text } = await fetchText(frameUrl(run, i));
  if (code !== 200) return;
  const parsed = parseObjPositions(text, run.vertexCount);
  if (!parsed) {
    run.error = `frame ${i} has another number of vertices than frame 0`;
    return;
  }
  run.frames[i] = parsed.positions;
  run.frameTimes[i] = parsed.t;
}

/** Loads missing frames, a few at a time, earliest first (playback needs them in order). */
function pumpFrames(): void {
  for (const run of runs) {
    if (!run.drawing) continue;
    for (let i = 1; i < run.listing.frames && framesInFlight < MAX_IN_FLIGHT; i++) {
      if (run.frames[i] !== undefined || run.requested.has(i)) continue;
      run.requested.add(i);
      framesInFlight++;
      loadFrame(run, i)
        .then(() => run.requested.delete(i))
        .catch((err) => (run.error = String(err)))
        .finally(() => {
          framesInFlight--;
          pumpFrames();
          if (run.shown < 0 || Math.abs(run.frameAt(player.time) - i) < 2) show(player.time);
          updateStatus();
        });
    }
  }
}

async function loadMetrics(run: Run): Promise<void> {
  const size = run.listing.metricsBytes;
  if (size <= run.metricsSeen) return;
  const { status: code, text } = await fetchText(`runs/${encodeURIComponent(run.listing.id)}/metrics.csv`, { Range: `bytes=${run.metrics.bytes}-` });
  if (code === 206 || (code === 200 && run.metrics.bytes === 0)) run.metrics.push(text);
  run.metricsSeen = size;
}

function planesOf(runList: Run[]): PlaneObstacle[] | null {
  for (const r of runList) {
    const obstacles = r.listing.summary?.effectiveScene?.obstacles;
    if (obstacles) {
      return obstacles
        .filter((o) => o.type === 'plane')
        .map((o) => ({ name: o.name ?? 'plane', point: o.point ?? [0, 0, 0], normal: o.normal ?? [0, 1, 0] }));
    }
  }
  return null;
}

/** Frames the camera on every loaded frame of every run (the whole motion once loaded) and the planes under them. */
function frameCamera(): void {
  const box = new THREE.Box3();
  for (const r of runs) for (const p of r.frames) if (r.drawing && p) box.union(r.drawing.measure(p));
  if (box.isEmpty()) return;
  const planes = planesOf(runs) ?? [{ name: 'reference', point: [0, 0, 0], normal: [0, 1, 0] }];
  const size = box.getSize(new THREE.Vector3()).length();
  // The planes' nearest points to the bodies belong in view (a ball dropped from 1 m: the ground under it).
  const centre = box.getCenter(new THREE.Vector3());
  for (const p of planes) {
    const n = new THREE.Vector3(...p.normal).normalize();
    box.expandByPoint(centre.clone().sub(n.multiplyScalar(centre.clone().sub(new THREE.Vector3(...p.point)).dot(n))));
  }
  const extent = Math.max(box.getSize(new THREE.Vector3()).length(), size);
  for (const r of runs) r.drawing?.setParticleRadius(Math.max(extent * 0.025, 1e-4));
  stage.setPlanes(planes, box.getCenter(new THREE.Vector3()), extent * 1.6);
  stage.frame(box);
  framed = true;
}

function layoutRuns(): void {
  const drawn = runs.filter((r) => r.drawing);
  stage.setRuns(drawn.map((r) => r.drawing!), drawn.map((r) => r.title()));
  stage.setLayout(layoutSelect.value as Layout);
  plotsRow.style.gridTemplateColumns = `repeat(${Math.max(1, runs.length)}, minmax(0, 1fr))`;
}

function updateStatus(): void {
  const loading = runs.reduce((n, r) => n + Math.max(0, r.listing.frames - r.frames.filter(Boolean).length), 0);
  const running = runs.filter((r) => !r.listing.done).length;
  const errors = runs.filter((r) => r.error).map((r) => `${r.listing.label}: ${r.error}`);
  status.textContent = [loading > 0 ? `loading ${loading} frames` : '', running > 0 ? `${running} run(s) in progress` : '', ...errors].filter(Boolean).join(' · ');
}

let pollTimer = 0;
async function poll(): Promise<void> {
  const res = await fetch('api/runs', { cache: 'no-store' });
  const listings = (await res.json()) as RunListing[];
  let changed = false;
  for (const listing of listings) {
    let run = runs.find((r) => r.listing.id === listing.id);
    if (!run) {
      run = new Run(listing);
      runs.push(run);
      run.plots = new RunPlots(plotsRow, run.title(), (t) => {
        player.pause();
        player.seek(t);
      }, renderMode ? fitPlotHeights() : undefined);
      changed = true;
    }
    const wasDone = run.listing.done;
    run.listing = listing;
    if (!run.drawing && listing.frames > 0) {
      await loadTopology(run).catch((err) => (run.error = String(err)));
      changed = true;
    }
    await loadMetrics(run).catch((err) => (run.error = String(err)));
    run.plots?.setTitle(run.title());
    if (listing.done !== wasDone) changed = true;
  }
  if (changed) {
    layoutRuns();
    if (!framed || runs.every((r) => r.listing.done)) frameCamera();
  }
  const end = endTime();
  const step = runs.reduce((m, r) => Math.min(m, r.frameSeconds()), Infinity);
  bar.setRange(end, Number.isFinite(step) ? step : 0.01);
  for (const r of runs) {
    r.plots?.setTimeRange(end > 0 ? [0, end] : null);
    r.plots?.update(r.metrics);
  }
  pumpFrames();
  updateStatus();
  show(player.time);
  window.clearTimeout(pollTimer);
  if (growing()) pollTimer = window.setTimeout(() => void poll().catch(reportError), 1000);
}

/** For a rendered movie the plots share the image with the 3D view: heights from what the view leaves. */
function fitPlotHeights(): { energy: number; alpha: number } {
  const left = window.innerHeight - document.getElementById('stage')!.clientHeight - 100;
  return { energy: Math.max(60, Math.round(0.62 * left)), alpha: Math.max(40, Math.round(0.38 * left)) };
}

function reportError(err: unknown): void {
  status.textContent = `error: ${(err as Error)?.message ?? String(err)}`;
}

window.addEventListener('resize', () => runs.forEach((r) => r.plots?.resize()));

/** Resolves once every frame and row present has been read (a run in progress: what is there now). */
async function settled(): Promise<void> {
  for (;;) {
    const complete = runs.length > 0 && runs.every((r) => (r.drawing || r.listing.frames === 0) && r.frames.filter(Boolean).length >= r.listing.frames && r.metricsSeen >= r.listing.metricsBytes);
    if (complete) return;
    await new Promise((done) => setTimeout(done, 50));
  }
}

const ready = poll()
  .then(settled)
  .then(() => {
    frameCamera();
    show(player.time);
    if (!renderMode && !params.has('paused')) player.play();
  })
  .catch((err) => {
    reportError(err);
    throw err;
  });

/** For the tests and `vivace render`: wait for the data, jump to a time and draw it synchronously. */
(window as unknown as { vivaceViewer: unknown }).vivaceViewer = {
  ready,
  runs: () => runs.map((r) => ({ id: r.listing.id, label: r.listing.label, frames: r.listing.frames, rows: r.metrics.length, done: r.listing.done })),
  endTime,
  frameTimes: () => {
    const best = runs.reduce<Run | null>((a, r) => (!a || r.frameSeconds() < a.frameSeconds() ? r : a), null);
    return best ? Array.from({ length: best.listing.frames }, (_, i) => best.frameTime(i)) : [];
  },
  shownFrames: () => runs.map((r) => r.shown),
  setTime: (t: number) => {
    player.pause();
    player.seek(t);
    show(t);
  },
  setLayout: (layout: Layout) => {
    layoutSelect.value = layout;
    stage.setLayout(layout);
    show(player.time);
  },
};
