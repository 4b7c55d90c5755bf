/**
 * What a run leaves in its output folder:
 *
 *   metrics.csv    one row per step (StepRecord), streamed in chunks of whole lines while the run goes
 *   bodies.csv     one row per body on step 0 and every output-frame step (BodyRecord), streamed with metrics.csv
 *   frames/        frame_00000.obj (and/or .vtu, --frames) ...: the surface (or the particles) at the output frame rate,
 *                  each written atomically (frame-files.ts)
 *   frames.pvd     with VTU frames: their ParaView collection with each frame's time
 *   energy.svg     kinetic, potential, total and target energy against time
 *   alpha.svg      when the integrator reports alpha (A-search, A-1, blending): alpha against time
 *   summary.json   RunSummary plus the effective scene and run options, written last (its presence marks the end)
 *   checkpoint.json  with --checkpoint-every: the run state to go on from (io/checkpoint.ts)
 *
 * The folder is created lazily, on the first record simulate() reports, so a run that fails its own checks (bad
 * step, bad parameters, a non-finite initial energy) leaves nothing behind; so does a start that cannot write (a
 * full disk): what it created is removed again. A write that fails later (OutputWriteError) names the file and
 * leaves metrics.csv ending with a whole row. Only the files above are ever removed.
 * A resumed run (resumeAfter) keeps the rows and frames up to its checkpoint and appends.
 */

import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Model } from '../model/model.js';
import type { Scene } from '../scene/schema.js';
import type { RunSummary, StepRecord } from '../sim/records.js';
import { DEFAULT_FRAME_FORMAT, type FrameFormat } from '../scene/run-options.js';
import { frameInterval, type RunObserver, type RunOptions } from '../sim/simulate.js';
import { FrameFiles, FrameWriteError, frameFileName, PVD_FILE } from './frame-files.js';
import { fsErrorText } from './fs-errors.js';
import { writeFileAtomic } from './mesh-files.js';
import { makeDirs, removeCreated } from './output-dir.js';
import { linePlotSvg } from './plot.js';

export const METRICS_FILE = 'metrics.csv';
export const BODIES_FILE = 'bodies.csv';
export const SUMMARY_FILE = 'summary.json';
export const ENERGY_PLOT_FILE = 'energy.svg';
export const ALPHA_PLOT_FILE = 'alpha.svg';
/** The metrics.csv columns energy.svg draws (`target` dashed); `vivace plot` draws them by default. */
export const ENERGY_PLOT_COLUMNS = ['kinetic', 'potential', 'total', 'target'] as const;
export const FRAMES_DIR = 'frames';
export const CHECKPOINT_FILE = 'checkpoint.json';

/** The fixed leading columns of metrics.csv; per-term potential columns and `warning` follow. */
export const METRICS_COLUMNS = [
  'step',
  't',
  'kinetic',
  'potential',
  'total',
  'target',
  'alpha',
  'newton_iters',
  'linear_iters',
  'wall_ms',
  'px',
  'py',
  'pz',
  'lx',
  'ly',
  'lz',
  'dissipated',
  'inverted',
  'friction_loss',
  'min_distance',
  'active_contacts',
] as const;

/** The columns of bodies.csv (BodyRecord): energies in J, momenta in kg m/s, angular momenta about the origin. */
export const BODIES_COLUMNS = ['step', 't', 'body', 'name', 'kind', 'kinetic', 'elastic', 'gravity', 'px', 'py', 'pz', 'lx', 'ly', 'lz'] as const;

/** An output file that could not be written; the message names it, why, and (mid-run) what was kept. */
export class OutputWriteError extends Error {
  override name = 'OutputWriteError';
  constructor(
    readonly file: string,
    cause: unknown,
    kept = '',
  ) {
    super(`cannot write ${file}: ${fsErrorText(cause)}${kept}`);
  }
}

/** Removes the files a run writes (and nothing else) from dir, if they are there. */
export function clearRunOutputs(dir: string): void {
  for (const f of [METRICS_FILE, BODIES_FILE, SUMMARY_FILE, ENERGY_PLOT_FILE, ALPHA_PLOT_FILE, CHECKPOINT_FILE, PVD_FILE]) rmSync(join(dir, f), { force: true });
  rmSync(join(dir, FRAMES_DIR), { recursive: true, force: true });
}

/** A number for the CSV: 12 significant digits, shortest form; NaN as an empty field. */
export function formatCsvNumber(x: number): string {
  if (Number.isNaN(x)) return '';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return String(Number(x.toPrecision(12)));
}

/** A text field for the CSV, quoted (RFC 4180) when it holds a comma, a quote, a line break or edge spaces. */
export function formatCsvText(s: string | undefined): string {
  if (!s) return '';
  if (/[",\r\n]|^\s|\s$/.test(s)) return `"${s.replace(/"/g, '""')}"`;
  return s;
}

/** An append-only file of whole lines: a write that fails is cut back to the last whole line, then rethrown. */
class LineFile {
  private fd: number | null = null;
  /** Bytes on disk, all in whole lines. */
  private bytes = 0;
  constructor(readonly path: string) {}

  /** Starts the file empty. */
  create(): void {
    this.fd = openSync(this.path, 'w');
    this.bytes = 0;
  }

  /** Goes on at the end of the file. */
  reopen(): void {
    this.fd = openSync(this.path, 'a');
    this.bytes = fstatSync(this.fd).size;
  }

  append(text: string): void {
    if (this.fd === null) return;
    const bytes = Buffer.from(text, 'utf8');
    try {
      // writeSync may write only part (a disk filling up): go on until all is written or it fails.
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
    } catch (err) {
      try {
        ftruncateSync(this.fd, this.bytes);
      } catch {
        // The cut is best effort; the caller's error names the file either way.
      }
      throw err;
    }
    this.bytes += bytes.length;
  }

  /** Never throws: closing a file that failed to write can fail again, and there is nothing more to do. */
  close(): void {
    try {
      if (this.fd !== null) closeSync(this.fd);
    } catch {
      // See above.
    }
    this.fd = null;
  }
}

/** Growable column of doubles (the series kept for the plots: 48 bytes per step for all six). */
class Column {
  private data = new Float64Array(1024);
  length = 0;
  push(x: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(2 * this.data.length);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = x;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

export interface EnergySeries {
  t: Float64Array;
  kinetic: Float64Array;
  potential: Float64Array;
  total: Float64Array;
  target: Float64Array;
  /** NaN where the integrator has none. */
  alpha: Float64Array;
}

export interface RunOutputOptions {
  /** Effective scene, stored in summary.json. */
  scene?: Scene;
  /** Scene file the run came from, stored in summary.json. */
  source?: string;
  /** Most time between two flushes of metrics.csv (ms, default 1000). */
  flushIntervalMs?: number;
  /** Flush metrics.csv once this many characters are buffered (default 64 KiB). */
  flushBytes?: number;
  /** Frame files: obj, vtu (with frames.pvd) or both (default DEFAULT_FRAME_FORMAT). */
  frames?: FrameFormat;
}

export interface RunOutputPaths {
  dir: string;
  metrics: string;
  bodies: string;
  summary: string;
  plot: string;
  /** alpha.svg, written only when the run has an alpha. */
  alphaPlot: string;
  frames: string;
  /** The ParaView collection of the VTU frames; null without VTU frames. */
  pvd: string | null;
  checkpoint: string;
}

/** Writes a run's outputs into `dir` as simulate() reports them; pass `observer` to simulate, then call finish. */
export class RunOutput {
  readonly dir: string;
  readonly paths: RunOutputPaths;
  /** Hand this to simulate(). */
  readonly observer: RunObserver;
  private readonly metricsFile: LineFile;
  private readonly bodiesFile: LineFile;
  private rowsOnDisk = 0;
  private opened = false;
  private buffer: string[] = [];
  /** bodies.csv's rows not written yet (flushed with metrics.csv's). */
  private bodiesBuffer: string[] = [];
  private buffered = 0;
  private lastFlush = 0;
  private termNames: string[] = [];
  private rowCount = 0;
  private frameCount = 0;
  private readonly cols = { t: new Column(), kinetic: new Column(), potential: new Column(), total: new Column(), target: new Column(), alpha: new Column() };
  private readonly frameFiles: FrameFiles;

  constructor(
    dir: string,
    private readonly model: Model,
    private readonly runOptions: RunOptions,
    private readonly options: RunOutputOptions = {},
  ) {
    this.dir = resolve(dir);
    this.paths = {
      dir: this.dir,
      metrics: join(this.dir, METRICS_FILE),
      bodies: join(this.dir, BODIES_FILE),
      summary: join(this.dir, SUMMARY_FILE),
      plot: join(this.dir, ENERGY_PLOT_FILE),
      alphaPlot: join(this.dir, ALPHA_PLOT_FILE),
      frames: join(this.dir, FRAMES_DIR),
      pvd: null,
      checkpoint: join(this.dir, CHECKPOINT_FILE),
    };
    this.metricsFile = new LineFile(this.paths.metrics);
    this.bodiesFile = new LineFile(this.paths.bodies);
    this.frameFiles = new FrameFiles(model, options.frames ?? DEFAULT_FRAME_FORMAT, this.paths.frames, this.dir, FRAMES_DIR);
    this.paths.pvd = this.frameFiles.pvdPath;
    this.observer = {
      step: (record) => this.step(record),
      frame: (index, t, x, v) => this.frame(index, t, x, v),
    };
  }

  /** True once the folder has been created (the first record arrived). */
  get started(): boolean {
    return this.opened;
  }

  get rows(): number {
    return this.rowCount;
  }

  get frames(): number {
    return this.frameCount;
  }

  /** The energies recorded so far (views, valid until the next step). */
  energySeries(): EnergySeries {
    const c = this.cols;
    return { t: c.t.view(), kinetic: c.kinetic.view(), potential: c.potential.view(), total: c.total.view(), target: c.target.view(), alpha: c.alpha.view() };
  }

  /** Creates the folder, clears earlier outputs and starts metrics.csv. Called by the first record. */
  open(firstRecord?: StepRecord): void {
    if (this.opened) return;
    const created = makeDirs(this.dir);
    try {
      clearRunOutputs(this.dir);
      mkdirSync(this.paths.frames);
      this.termNames = firstRecord ? [...firstRecord.potentials.keys()] : uniqueTermNames(this.model);
      this.metricsFile.create();
      const header = [...METRICS_COLUMNS, ...this.termNames, 'warning'].join(',');
      this.writeMetrics(`${header}\n`);
      this.bodiesFile.create();
      this.writeBodies(`${BODIES_COLUMNS.join(',')}\n`);
    } catch (err) {
      // Nothing is kept from a start that failed (a full disk): the run is refused as if it had not begun.
      this.closeQuietly();
      try {
        clearRunOutputs(this.dir);
      } catch {
        // Best effort: the error below is what the user needs.
      }
      removeCreated(created);
      throw err instanceof OutputWriteError ? err : new OutputWriteError(this.paths.metrics, err);
    }
    this.lastFlush = performance.now();
    this.opened = true;
  }

  /** Appends text to metrics.csv; on failure, cuts the file back to its last whole row and throws OutputWriteError. */
  private writeMetrics(text: string): void {
    try {
      this.metricsFile.append(text);
    } catch (err) {
      throw new OutputWriteError(this.paths.metrics, err, this.opened ? this.keptText() : '');
    }
  }

  /** The same for bodies.csv. */
  private writeBodies(text: string): void {
    try {
      this.bodiesFile.append(text);
    } catch (err) {
      throw new OutputWriteError(this.paths.bodies, err, this.opened ? this.keptText() : '');
    }
  }

  /**
   * Goes on with the outputs of an interrupted run whose checkpoint is after `step`: keeps metrics.csv's rows up to
   * it (re-reading their energies for the plot) and frames up to `lastFrame`, drops later ones (written after the
   * checkpoint) and the end-of-run files, and appends from there. Throws, naming the file, when they do not fit.
   */
  resumeAfter(step: number, lastFrame: number): void {
    const metrics = this.paths.metrics;
    if (!existsSync(metrics)) throw new Error(`${metrics} is missing: nothing to resume`);
    const lines = readFileSync(metrics, 'utf8').split('\n');
    const header = lines[0].split(',');
    if (METRICS_COLUMNS.some((name, i) => header[i] !== name) || header[header.length - 1] !== 'warning') {
      throw new Error(`${metrics}: the header is not the one this version writes (${METRICS_COLUMNS.length} fixed columns, then the potentials and 'warning')`);
    }
    this.termNames = header.slice(METRICS_COLUMNS.length, -1);
    const kept: string[] = [];
    for (let i = 1; i < lines.length && kept.length <= step; i++) {
      if (lines[i] === '') continue;
      // The first seven columns are numbers (step, t, kinetic, potential, total, target, alpha): a plain split is exact.
      const f = lines[i].split(',', 7).map((x) => (x === '' ? NaN : Number(x)));
      if (f[0] !== kept.length) throw new Error(`${metrics}: line ${i + 1} is step ${f[0]}, expected step ${kept.length}`);
      kept.push(lines[i]);
      this.cols.t.push(f[1]);
      this.cols.kinetic.push(f[2]);
      this.cols.potential.push(f[3]);
      this.cols.total.push(f[4]);
      this.cols.target.push(f[5]);
      this.cols.alpha.push(f[6]);
    }
    if (kept.length !== step + 1) throw new Error(`${metrics}: has steps 0 to ${kept.length - 1}, the checkpoint is after step ${step}`);
    this.rowCount = kept.length;
    writeFileAtomic(metrics, `${lines[0]}\n${kept.map((l) => `${l}\n`).join('')}`);
    mkdirSync(this.paths.frames, { recursive: true });
    this.frameCount = this.frameFiles.keepUpTo(lastFrame, frameInterval(this.runOptions) * this.runOptions.h);
    for (const f of [SUMMARY_FILE, ENERGY_PLOT_FILE, ALPHA_PLOT_FILE]) rmSync(join(this.dir, f), { force: true });
    this.metricsFile.reopen();
    this.keepBodiesUpTo(step);
    this.bodiesFile.reopen();
    this.rowsOnDisk = this.rowCount;
    this.lastFlush = performance.now();
    this.opened = true;
  }

  /** bodies.csv of a resumed run: its rows up to `step` (the header alone when a run of an older version left none). */
  private keepBodiesUpTo(step: number): void {
    const file = this.paths.bodies;
    const header = BODIES_COLUMNS.join(',');
    if (!existsSync(file)) {
      writeFileAtomic(file, `${header}\n`);
      return;
    }
    const lines = readFileSync(file, 'utf8').split('\n');
    if (lines[0] !== header) throw new Error(`${file}: the header is not the one this version writes (${header})`);
    const kept = lines.slice(1).filter((l) => l !== '' && Number(l.slice(0, l.indexOf(','))) <= step);
    writeFileAtomic(file, `${header}\n${kept.map((l) => `${l}\n`).join('')}`);
  }

  private step(r: StepRecord): void {
    if (!this.opened) this.open(r);
    const n = formatCsvNumber;
    const fields = [
      String(r.step),
      n(r.t),
      n(r.kinetic),
      n(r.potential),
      n(r.total),
      n(r.target),
      n(r.alpha),
      String(r.newtonIterations),
      String(r.linearIterations),
      n(r.wallMs),
      n(r.momentum[0]),
      n(r.momentum[1]),
      n(r.momentum[2]),
      n(r.angularMomentum[0]),
      n(r.angularMomentum[1]),
      n(r.angularMomentum[2]),
      n(r.dissipated),
      String(r.inverted),
      n(r.frictionLoss),
      n(r.minDistance),
      String(r.activeContacts),
    ];
    for (const name of this.termNames) {
      const e = r.potentials.get(name);
      fields.push(e === undefined ? '' : n(e));
    }
    fields.push(formatCsvText(r.warning));
    const line = `${fields.join(',')}\n`;
    this.buffer.push(line);
    this.buffered += line.length;
    for (const b of r.bodies ?? []) {
      const row = [String(r.step), n(r.t), String(b.body), formatCsvText(b.name), b.kind, n(b.kinetic), n(b.elastic), n(b.gravity), ...b.momentum.map(n), ...b.angularMomentum.map(n)];
      const text = `${row.join(',')}\n`;
      this.bodiesBuffer.push(text);
      this.buffered += text.length;
    }
    this.rowCount++;
    this.cols.t.push(r.t);
    this.cols.kinetic.push(r.kinetic);
    this.cols.potential.push(r.potential);
    this.cols.total.push(r.total);
    this.cols.target.push(r.target);
    this.cols.alpha.push(r.alpha);
    // simulate() is synchronous, so an async stream would only drain at the end: write whole lines synchronously.
    if (this.buffered >= (this.options.flushBytes ?? 65536) || performance.now() - this.lastFlush >= (this.options.flushIntervalMs ?? 1000)) this.flush();
  }

  private frame(index: number, t: number, x: Float64Array, v: Float64Array): void {
    if (!this.opened) this.open();
    // The rows up to this frame go to disk before it: a frame is far larger than the rows, and on a disk that fills
    // up, rows buffered behind a frame would no longer fit (metrics.csv left with its header beside many frames).
    this.flush();
    try {
      this.frameFiles.write(index, t, x, v);
    } catch (err) {
      try {
        this.flush(); // keep the rows of the steps done, if they still fit
      } catch {
        // The frame's error is the one to report.
      }
      if (err instanceof FrameWriteError) throw new OutputWriteError(err.file, err.cause, this.keptText());
      throw err;
    }
    this.frameCount++;
  }

  /** Writes the buffered rows to metrics.csv. */
  flush(): void {
    if (!this.opened || this.buffer.length === 0) return;
    const rows = this.buffer.length;
    const text = this.buffer.join('');
    const bodies = this.bodiesBuffer.join('');
    this.buffer = [];
    this.bodiesBuffer = [];
    this.buffered = 0;
    this.writeMetrics(text);
    this.rowsOnDisk += rows;
    this.writeBodies(bodies);
    this.lastFlush = performance.now();
  }

  /** Closes metrics.csv without writing the summary (an aborted run). */
  close(): void {
    this.flush();
    this.closeQuietly();
  }

  /** After a failure: writes what it can of the buffered rows and closes metrics.csv; never throws. */
  abort(): void {
    try {
      this.flush();
    } catch {
      // The run is failing already; its first error is the one reported.
    }
    this.closeQuietly();
  }

  /** What a run that failed to write keeps, for the error message. */
  private keptText(): string {
    const rows = this.rowsOnDisk > 1 ? `steps 0 to ${this.rowsOnDisk - 1}` : this.rowsOnDisk === 1 ? 'step 0' : 'only its header';
    return `; the run stopped after step ${this.rowCount - 1}: the outputs written so far stay in ${this.dir} (${METRICS_FILE} keeps ${rows}, ${FRAMES_DIR}/ ${this.frameCount} frames)`;
  }

  private closeQuietly(): void {
    this.metricsFile.close();
    this.bodiesFile.close();
  }

  /**
   * Ends the run: flushes metrics.csv, writes energy.svg (and alpha.svg when the integrator has an alpha), then
   * summary.json (RunSummary, `stopped` always present, the effective scene and options). A failed plot is recorded
   * in the summary rather than thrown.
   */
  async finish(summary: RunSummary): Promise<RunOutputPaths> {
    if (!this.opened) this.open();
    this.close();
    const plotErrors: string[] = [];
    const writePlot = async (path: string, svg: () => Promise<string>): Promise<boolean> => {
      try {
        writeFileAtomic(path, await svg());
        return true;
      } catch (err) {
        plotErrors.push((err as Error).message);
        return false;
      }
    };
    const s = this.energySeries();
    const titles = this.plotTitles(summary);
    const energyPlot = await writePlot(this.paths.plot, () =>
      linePlotSvg(
        ENERGY_PLOT_COLUMNS.map((name) => ({ name, t: s.t, y: s[name] })),
        { ...titles, dashed: ['target'] },
      ),
    );
    const alphaPlot = s.alpha.some(Number.isFinite) && (await writePlot(this.paths.alphaPlot, () => linePlotSvg([{ name: 'alpha', t: s.t, y: s.alpha }], { ...titles, yTitle: 'alpha' })));
    const plotError = plotErrors.length > 0 ? plotErrors.join('; ') : undefined;
    const doc = {
      ...summary,
      stopped: summary.stopped ?? null,
      outputs: {
        metrics: METRICS_FILE,
        bodies: BODIES_FILE,
        rows: this.rowCount,
        frames: FRAMES_DIR,
        frameCount: this.frameCount,
        frameFormat: this.frameFiles.format,
        pvd: this.paths.pvd ? PVD_FILE : null,
        plot: energyPlot ? ENERGY_PLOT_FILE : null,
        alphaPlot: alphaPlot ? ALPHA_PLOT_FILE : null,
        plotError,
      },
      source: this.options.source ?? null,
      options: this.runOptions,
      effectiveScene: this.options.scene ?? null,
    };
    try {
      writeFileAtomic(this.paths.summary, `${JSON.stringify(doc, jsonNumbers, 2)}\n`);
    } catch (err) {
      throw new OutputWriteError(this.paths.summary, err, `; the other outputs stay in ${this.dir}`);
    }
    return this.paths;
  }

  private plotTitles(summary: RunSummary): { title: string; subtitle: string } {
    const status = summary.stopped ? `stopped: ${summary.stopped}` : `${summary.steps} steps`;
    return { title: `${summary.scene}: ${summary.integrator}`, subtitle: `h = ${formatCsvNumber(summary.h)} s, ${truncate(status, 120)}` };
  }
}

/** frame_00000.obj, frame_00001.obj, ... (frame-files.ts names the other formats' files). */
export function frameName(index: number): string {
  return frameFileName(index, 'obj');
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** JSON has no Infinity or NaN: write them as strings so a reader can tell them from a missing value. */
function jsonNumbers(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}

function uniqueTermNames(model: Model): string[] {
  return [...new Set(model.terms.map((t) => t.name))];
}
