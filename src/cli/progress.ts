/**
 * Run progress on stderr: a cli-progress bar on a terminal; on anything else (CI logs, pipes) a plain line every
 * ~10% of the steps. Steps are synchronous (the event loop turns only between them, see interrupt.ts), so nothing
 * here may rely on timers firing during a step.
 */

import cliProgress from 'cli-progress';
import type { StepRecord } from '../sim/records.js';

export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Progress {
  update(record: StepRecord): void;
  stop(): void;
}

export interface ProgressOptions {
  label: string;
  totalSteps: number;
  duration: number;
  /** Steps done before this process (a run resumed from a checkpoint): the bar starts there and the ETA counts from it. */
  startStep?: number;
  quiet?: boolean;
}

const silent: Progress = { update() {}, stop() {} };

function energy(x: number): string {
  return Number.isFinite(x) ? x.toPrecision(6) : String(x);
}

export function createProgress(sink: TextSink, opts: ProgressOptions): Progress {
  if (opts.quiet) return silent;
  return sink.isTTY ? barProgress(sink, opts) : lineProgress(sink, opts);
}

function barProgress(sink: TextSink, opts: ProgressOptions): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream: sink as NodeJS.WritableStream,
      format: `${opts.label} {bar} {value}/{total} steps | t = {simTime} / ${opts.duration} s | H = {energy} J | ETA {eta_formatted}`,
      barsize: 24,
      hideCursor: false,
      clearOnComplete: false,
      synchronousUpdate: true,
      etaBuffer: 100,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(opts.totalSteps, 1), opts.startStep ?? 0, { simTime: '0', energy: '-' });
  let stopped = false;
  return {
    update(r) {
      bar.update(r.step, { simTime: r.t.toFixed(3), energy: energy(r.total) });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

function lineProgress(sink: TextSink, opts: ProgressOptions): Progress {
  const startStep = opts.startStep ?? 0;
  let nextDecile = Math.floor((10 * startStep) / Math.max(opts.totalSteps, 1)) + 1;
  const start = performance.now();
  return {
    update(r) {
      if (opts.totalSteps <= 0) return;
      const decile = Math.floor((10 * r.step) / opts.totalSteps);
      if (decile < nextDecile) return;
      nextDecile = decile + 1;
      const elapsed = (performance.now() - start) / 1000;
      if (elapsed < 0.5) return; // a run this short needs no progress lines
      const done = r.step - startStep;
      const eta = done > 0 ? (elapsed * (opts.totalSteps - r.step)) / done : NaN;
      sink.write(
        `${opts.label}: step ${r.step}/${opts.totalSteps} (${Math.round((100 * r.step) / opts.totalSteps)}%), t = ${r.t.toFixed(3)} s, H = ${energy(r.total)} J, ` +
          `elapsed ${elapsed.toFixed(1)} s, ETA ${Number.isFinite(eta) ? eta.toFixed(1) : '?'} s\n`,
      );
    },
    stop() {},
  };
}
