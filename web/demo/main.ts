/**
 * The in-browser demo (`vivace demo`, or the same files on any static host): the simulation core runs in a Web
 * Worker on a small built-in scene and the page plays the frames as they arrive, with the energy plot growing.
 * Scene, integrator, its parameters, the step and the duration can be changed; Run restarts with them.
 * `window.vivaceDemo` lets the tests start a run and read its energies.
 */

import * as THREE from 'three';
import type { ParamSpec } from '../../src/integrators/registry.js';
import type { RunSummary } from '../../src/sim/records.js';
import { playbackBar } from '../shared/controls.js';
import { MetricsSeries } from '../shared/metrics.js';
import { Player } from '../shared/player.js';
import { RunPlots } from '../shared/plots.js';
import { RunDrawing, Stage } from '../shared/stage.js';
import '../shared/style.css';
import type { CatalogMessage, ReadyMessage, StartMessage, WorkerMessage } from './protocol.js';

const app = document.getElementById('app')!;
app.innerHTML = `
  <header class="bar">
    <strong class="brand">vivace demo</strong>
    <span class="demo-controls">
      <label>scene <select data-role="scene"></select></label>
      <label>integrator <select data-role="integrator"></select></label>
      <span data-role="params" class="demo-params"></span>
      <label>h (s) <input data-role="dt" type="text" size="9" title="time step: a decimal or a fraction such as 1/120"></label>
      <label>duration (s) <input data-role="duration" type="number" step="any" min="0"></label>
      <button type="button" data-role="run">Run</button>
      <button type="button" data-role="stop">Stop</button>
    </span>
    <span data-role="status" class="status"></span>
  </header>
  <header class="bar"><span data-role="playback"></span></header>
  <div class="demo-note" data-role="note"></div>
  <div id="stage" class="stage"></div>
  <div id="plots" class="plots"></div>`;
const $ = <T extends HTMLElement>(role: string) => app.querySelector(`[data-role="${role}"]`) as T;
const sceneSelect = $<HTMLSelectElement>('scene');
const integratorSelect = $<HTMLSelectElement>('integrator');
const paramsBox = $<HTMLSpanElement>('params');
const dtInput = $<HTMLInputElement>('dt');
const durationInput = $<HTMLInputElement>('duration');
const status = $<HTMLSpanElement>('status');
const note = $<HTMLDivElement>('note');
const stage = new Stage(document.getElementById('stage')!);

/** The current run: what the worker has sent so far. */
interface DemoRun {
  start: StartMessage;
  ready: ReadyMessage | null;
  metrics: MetricsSeries;
  frames: Float32Array[];
  drawing: RunDrawing | null;
  plots: RunPlots;
  summary: RunSummary | null;
  error: string | null;
  /** The worker's send times (ms into its computation) of frame 1 and of the end, when they have arrived. */
  sent: { secondFrame: number; done: number };
  startedAt: number;
  shown: number;
}

let catalog: CatalogMessage | null = null;
let worker: Worker | null = null;
let current: DemoRun | null = null;
let finished: (() => void) | null = null;

const endTime = () => (current?.ready && current.frames.length > 0 ? (current.frames.length - 1) * current.ready.frameSeconds : 0);
const computing = () => current !== null && current.summary === null && current.error === null;
const player = new Player(endTime, computing);
const bar = playbackBar($('playback'), player, endTime);
player.onTime((t) => show(t));

function show(t: number): void {
  const run = current;
  if (!run?.drawing || !run.ready) return;
  const f = Math.min(run.frames.length - 1, Math.floor(t / run.ready.frameSeconds + 1e-6));
  if (f >= 0 && f !== run.shown) {
    run.drawing.setPositions(run.frames[f]);
    run.shown = f;
  }
  run.plots.setTime(t);
  const row = run.metrics.rowAt(t);
  const total = run.metrics.columns.total[row];
  stage.setLabel(0, `${run.start.integrator}  ·  t = ${t.toFixed(2)} s${Number.isFinite(total) ? `  ·  E = ${total.toPrecision(4)} J` : ''}`);
  stage.render();
}

/** A fresh worker: it announces the scenes and integrators, then waits for a start message. */
function newWorker(): Promise<CatalogMessage> {
  worker?.terminate();
  const w = new Worker(new URL('./worker.js', import.meta.url));
  worker = w;
  return new Promise((resolve, reject) => {
    w.onerror = (e) => reject(new Error(e.message || 'the simulation worker failed to load'));
    w.onmessage = (e: MessageEvent<WorkerMessage>) => {
      if (e.data.type === 'catalog') resolve(e.data);
      else receive(e.data);
    };
  });
}

function receive(message: WorkerMessage): void {
  const run = current;
  if (!run) return;
  switch (message.type) {
    case 'ready': {
      run.ready = message;
      const names = message.bodyNames.length ? message.bodyNames : ['particles'];
      run.drawing = new RunDrawing({
        vertexCount: message.vertexCount,
        triangles: message.triangles,
        lines: message.lines,
        groups: { vertexGroup: message.vertexBody, names, obstacle: message.obstacleBodies, particles: particlesOf(message.vertexBody) },
      });
      stage.setRuns([run.drawing], [run.start.integrator]);
      break;
    }
    case 'rows':
      run.metrics.appendRows(message.rows, message.hasContact);
      break;
    case 'frame':
      run.frames[message.index] = message.positions;
      if (message.index === 1) run.sent.secondFrame = message.sentMs;
      if (message.index === 0) frameCamera(run);
      break;
    case 'done':
      run.summary = message.summary;
      run.sent.done = message.sentMs;
      finished?.();
      break;
    case 'error':
      run.error = message.message;
      finished?.();
      break;
    default:
      break;
  }
  scheduleRefresh();
}

function particlesOf(vertexBody: Int32Array): Uint32Array {
  const out: number[] = [];
  vertexBody.forEach((b, i) => b < 0 && out.push(i));
  return Uint32Array.from(out);
}

function frameCamera(run: DemoRun): void {
  if (!run.drawing || !run.ready) return;
  const box = run.drawing.measure(run.frames[0]).clone();
  const centre = box.getCenter(new THREE.Vector3());
  // Moving bodies leave their first frame: allow for the motion (the ball falls 1 m, the oscillator swings through the anchor).
  const size = Math.max(box.getSize(new THREE.Vector3()).length(), 0.05);
  for (const p of run.ready.planes) {
    const n = new THREE.Vector3(...p.normal).normalize();
    box.expandByPoint(centre.clone().sub(n.multiplyScalar(centre.clone().sub(new THREE.Vector3(...p.point)).dot(n))));
  }
  if (run.start.scene === 'oscillator') box.expandByPoint(centre.clone().multiplyScalar(-1));
  if (run.start.scene === 'rotating-cube') box.expandByScalar(size * 0.6);
  const extent = box.getSize(new THREE.Vector3()).length();
  run.drawing.setParticleRadius(Math.max(extent * 0.03, 1e-4));
  stage.setPlanes(run.ready.planes.length ? run.ready.planes : [{ name: 'reference', point: [0, Math.min(box.min.y, 0), 0], normal: [0, 1, 0] }], box.getCenter(new THREE.Vector3()), extent * 1.6);
  stage.frame(box);
}

let refreshPending = false;
function scheduleRefresh(): void {
  if (refreshPending) return;
  refreshPending = true;
  requestAnimationFrame(() => {
    refreshPending = false;
    const run = current;
    if (!run) return;
    run.plots.update(run.metrics);
    bar.setRange(endTime(), run.ready?.frameSeconds ?? 0.01);
    const steps = run.ready?.steps ?? 0;
    const done = run.metrics.length - 1;
    const seconds = (performance.now() - run.startedAt) / 1000;
    const simulated = run.metrics.length > 0 ? run.metrics.columns.t[run.metrics.length - 1] : 0;
    status.textContent = run.error
      ? `stopped: ${run.error}`
      : run.summary
        ? `done: ${run.summary.steps} steps, ${run.summary.newtonIterations} Newton iterations in ${run.summary.wallSeconds.toFixed(1)} s; energy kept ${run.summary.energyKept.toFixed(3)}${run.summary.stopped ? ` (stopped: ${run.summary.stopped})` : ''}`
        : `computing step ${Math.max(0, done)} / ${steps} (${(simulated / Math.max(seconds, 1e-3)).toFixed(2)}× real time)`;
    show(player.time);
  });
}

function paramInputs(integrator: string): void {
  const spec = catalog?.integrators.find((i) => i.name === integrator);
  paramsBox.innerHTML = '';
  integratorSelect.title = spec?.summary ?? '';
  for (const [name, p] of Object.entries(spec?.params ?? {}) as [string, ParamSpec][]) {
    const label = document.createElement('label');
    label.title = p.doc;
    const input = document.createElement('input');
    input.dataset.param = name;
    if (typeof p.default === 'boolean') {
      input.type = 'checkbox';
      input.checked = p.default;
      label.append(input, ` ${name}`);
    } else {
      input.type = 'number';
      input.step = 'any';
      input.value = String(p.default);
      label.append(`${name} `, input);
    }
    paramsBox.append(label);
  }
}

function sceneDefaults(name: string): void {
  const s = catalog?.scenes.find((x) => x.name === name);
  if (!s) return;
  dtInput.value = formatStep(s.dt);
  durationInput.value = String(s.duration);
}

/** 1/120 rather than 0.00833333: shown exactly, and read back as the same double. */
function formatStep(h: number): string {
  const n = Math.round(1 / h);
  return n > 1 && 1 / n === h ? `1/${n}` : String(h);
}

function parseStep(text: string): number {
  const [num, den] = text.split('/').map((x) => Number(x.trim()));
  return den === undefined ? num : num / den;
}

function readStart(): StartMessage {
  const params: Record<string, number | boolean> = {};
  for (const input of paramsBox.querySelectorAll<HTMLInputElement>('input[data-param]')) {
    params[input.dataset.param!] = input.type === 'checkbox' ? input.checked : Number(input.value);
  }
  const dt = parseStep(dtInput.value);
  const duration = Number(durationInput.value);
  return { type: 'start', scene: sceneSelect.value, integrator: integratorSelect.value, params, dt: dt > 0 ? dt : undefined, duration: duration > 0 ? duration : undefined };
}

/** Stops any run and starts `start` in a fresh worker; resolves when it ends. */
async function run(start: StartMessage): Promise<void> {
  await newWorker();
  document.getElementById('plots')!.innerHTML = '';
  const plots = new RunPlots(document.getElementById('plots')!, `${start.scene} · ${start.integrator}`, (t) => {
    player.pause();
    player.seek(t);
  });
  current = { start, ready: null, metrics: new MetricsSeries(), frames: [], drawing: null, plots, summary: null, error: null, sent: { secondFrame: NaN, done: NaN }, startedAt: performance.now(), shown: -1 };
  note.textContent = `${catalog?.scenes.find((s) => s.name === start.scene)?.note ?? ''}. Computed in this tab by vivace's TypeScript core in a Web Worker, played as it computes.`;
  player.seek(0);
  player.play();
  const ended = new Promise<void>((resolve) => (finished = resolve));
  worker!.postMessage(start);
  scheduleRefresh();
  return ended;
}

function stop(): void {
  worker?.terminate();
  worker = null;
  if (current && !current.summary && !current.error) current.error = 'stopped by the user';
  finished?.();
  scheduleRefresh();
}

async function init(): Promise<void> {
  catalog = await newWorker();
  sceneSelect.innerHTML = catalog.scenes.map((s) => `<option value="${s.name}">${s.title}</option>`).join('');
  integratorSelect.innerHTML = catalog.integrators.map((i) => `<option value="${i.name}">${i.name}</option>`).join('');
  const query = new URLSearchParams(location.search);
  sceneSelect.value = query.get('scene') ?? 'bouncing-ball';
  integratorSelect.value = query.get('integrator') ?? 'a-search';
  paramInputs(integratorSelect.value);
  sceneDefaults(sceneSelect.value);
  if (query.get('duration')) durationInput.value = query.get('duration')!;
  sceneSelect.addEventListener('change', () => sceneDefaults(sceneSelect.value));
  integratorSelect.addEventListener('change', () => paramInputs(integratorSelect.value));
  $('run').addEventListener('click', () => void run(readStart()));
  $('stop').addEventListener('click', stop);
  if (!query.has('idle')) void run(readStart());
}

const ready = init().catch((err) => {
  status.textContent = `error: ${(err as Error).message}`;
  throw err;
});

/** For the tests: start a run with given settings, wait for it, read its energies and frames. */
(window as unknown as { vivaceDemo: unknown }).vivaceDemo = {
  ready,
  run: (start: Omit<StartMessage, 'type'>) => run({ type: 'start', ...start }),
  stop,
  state: () => ({
    rows: current?.metrics.length ?? 0,
    frames: current?.frames.length ?? 0,
    done: current?.summary !== null && current !== null,
    error: current?.error ?? null,
    summary: current?.summary ?? null,
    sent: current?.sent ?? null,
  }),
  series: () => (current ? { t: current.metrics.columns.t, total: current.metrics.columns.total, kinetic: current.metrics.columns.kinetic, alpha: current.metrics.columns.alpha } : null),
  setTime: (t: number) => {
    player.pause();
    player.seek(t);
    show(t);
  },
  shownFrame: () => current?.shown ?? -1,
};
