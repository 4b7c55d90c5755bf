/**
 * The run folders `vivace view` shows: a run folder (metrics.csv, frames/, summary.json, as `vivace run` writes
 * them) or a `vivace compare` folder, which stands for all its runs. Compare folders are scanned again on every
 * listing, so the runs of a comparison still going appear as they start.
 */

import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REPORT_FILE } from '../io/compare-report.js';
import { FRAMES_DIR, frameName, METRICS_FILE, SUMMARY_FILE } from '../io/run-output.js';
import { frameInterval } from '../sim/simulate.js';
import type { RunListing } from './listing.js';

export type { RunListing } from './listing.js';

/** One run the viewer serves under /runs/<id>/. */
export interface RunFolder {
  id: string;
  /** Real path of the folder (symlinks resolved): files are served only from inside it. */
  dir: string;
  /** The compare folder it belongs to, if any. */
  comparison?: string;
}

/** A folder given on the command line that is neither a run nor a compare folder. */
export class RunFolderError extends Error {
  override name = 'RunFolderError';
}

export function isRunFolder(dir: string): boolean {
  return existsSync(join(dir, METRICS_FILE)) || existsSync(join(dir, SUMMARY_FILE)) || existsSync(join(dir, FRAMES_DIR));
}

interface Source {
  dir: string;
  kind: 'run' | 'compare';
}

export class RunCatalog {
  private readonly sources: Source[];
  private readonly byDir = new Map<string, RunFolder>();
  private readonly order: RunFolder[] = [];

  /** Checks every folder (it exists and is a run or a compare folder), naming the first bad one. */
  constructor(dirs: string[]) {
    if (dirs.length === 0) throw new RunFolderError('no run folder given');
    this.sources = dirs.map((given) => {
      if (!existsSync(given) || !statSync(given).isDirectory()) throw new RunFolderError(`${given}: no such folder`);
      const dir = realpathSync(given);
      if (isRunFolder(dir)) return { dir, kind: 'run' as const };
      if (existsSync(join(dir, REPORT_FILE)) || compareRuns(dir).length > 0) return { dir, kind: 'compare' as const };
      throw new RunFolderError(`${given}: not a run folder (no ${METRICS_FILE}, ${FRAMES_DIR}/ or ${SUMMARY_FILE}) nor a compare folder (no ${REPORT_FILE} or run subfolders)`);
    });
    this.refresh();
  }

  /** The runs in command-line order (a compare folder's runs in its report's order); ids stay stable. */
  runs(): RunFolder[] {
    this.refresh();
    return this.order;
  }

  get(id: string): RunFolder | undefined {
    return this.order.find((r) => r.id === id);
  }

  private refresh(): void {
    const found: RunFolder[] = [];
    for (const s of this.sources) {
      const dirs = s.kind === 'run' ? [s.dir] : compareRuns(s.dir);
      for (const dir of dirs) {
        let run = this.byDir.get(dir);
        if (!run) {
          run = { id: String(this.byDir.size), dir, comparison: s.kind === 'compare' ? basename(s.dir) : undefined };
          this.byDir.set(dir, run);
        }
        if (!found.includes(run)) found.push(run);
      }
    }
    this.order.splice(0, this.order.length, ...found);
  }
}

/**
 * The run subfolders of a compare folder, in the order of its report; before the report is written (a comparison
 * in progress), in the order the folders were made, which is the order of --integrators.
 */
function compareRuns(dir: string): string[] {
  const report = existsSync(join(dir, REPORT_FILE)) ? readFileSync(join(dir, REPORT_FILE), 'utf8') : '';
  const subdirs = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && isRunFolder(join(dir, e.name)))
    .map((e) => e.name);
  const rank = (name: string) => {
    const at = report.indexOf(`](${encodeURI(name)}/)`);
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  const made = new Map(subdirs.map((name) => [name, statSync(join(dir, name)).birthtimeMs]));
  subdirs.sort((a, b) => rank(a) - rank(b) || made.get(a)! - made.get(b)! || a.localeCompare(b));
  return subdirs.map((name) => realpathSync(join(dir, name)));
}

/** The listing of one run: frames so far, metrics size, and the summary once the run has ended. */
export function listRun(run: RunFolder): RunListing {
  let frames = 0;
  const framesDir = join(run.dir, FRAMES_DIR);
  if (existsSync(framesDir)) {
    const names = new Set(readdirSync(framesDir));
    while (names.has(frameName(frames))) frames++;
  }
  const metrics = join(run.dir, METRICS_FILE);
  const metricsBytes = existsSync(metrics) ? statSync(metrics).size : 0;
  let summary: RunListing['summary'] = null;
  try {
    summary = JSON.parse(readFileSync(join(run.dir, SUMMARY_FILE), 'utf8')) as RunListing['summary'];
  } catch {
    summary = null; // not written yet (the run goes on), or being replaced
  }
  const options = summary?.options;
  const frameSeconds = options && options.h && options.frameRate ? frameInterval({ h: options.h, frameRate: options.frameRate }) * options.h : null;
  const scene = typeof summary?.scene === 'string' ? summary.scene : null;
  const integrator = typeof summary?.integrator === 'string' ? summary.integrator : null;
  const name = basename(run.dir);
  const label = run.comparison ? `${integrator ?? name}` : integrator && scene ? `${scene} · ${integrator}` : name;
  return { id: run.id, label, comparison: run.comparison ?? null, frames, metricsBytes, done: summary !== null, frameSeconds, summary };
}
