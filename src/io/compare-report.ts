/**
 * The outputs of `vivace compare`: report.md (one table row per integrator), energy.svg (total energy of all runs
 * overlaid) and energy-components.svg (kinetic, potential, total per run, one panel each). Each run's own outputs
 * live in <dir>/<integrator>/ (see run-output.ts).
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../sim/records.js';
import { writeFileAtomic } from './mesh-files.js';
import { linePlotSvg, panelPlotSvg, type Panel, type PlotSeries } from './plot.js';
import type { EnergySeries } from './run-output.js';

export const REPORT_FILE = 'report.md';
export const COMPARE_PLOT_FILE = 'energy.svg';
export const COMPONENTS_PLOT_FILE = 'energy-components.svg';

export interface CompareEntry {
  integrator: string;
  /** The run's folder relative to the compare folder (for links). */
  dir: string;
  /** Absent when the run failed with an error before it could report (see `error`). */
  summary?: RunSummary;
  series?: EnergySeries;
  /** An unexpected failure (not a `stopped` blow-up, which is part of the summary). */
  error?: string;
}

export interface CompareInfo {
  scene: string;
  source?: string;
  h: number;
  duration: number;
}

/** Removes the files compare writes at the top of dir (each run clears its own folder). */
export function clearCompareOutputs(dir: string): void {
  for (const f of [REPORT_FILE, COMPARE_PLOT_FILE, COMPONENTS_PLOT_FILE]) rmSync(join(dir, f), { force: true });
}

/** "ok", "stopped at step N: reason" or "failed: message". */
export function runStatus(entry: CompareEntry): string {
  if (entry.error !== undefined) return `failed: ${entry.error}`;
  const stopped = entry.summary?.stopped;
  if (!stopped) return 'ok';
  const m = /^step (\d+) \([^)]*\): ([\s\S]*)$/.exec(stopped);
  return m ? `stopped at step ${m[1]}: ${m[2]}` : `stopped: ${stopped}`;
}

function fmt(x: number | null | undefined, digits = 6): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
  return String(Number(x.toPrecision(digits)));
}

function cell(s: string): string {
  return s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

/** The Markdown report: a short header and one table row per run. */
export function compareReportMarkdown(info: CompareInfo, entries: CompareEntry[]): string {
  const lines: string[] = [];
  lines.push(`# ${info.scene}: integrator comparison`, '');
  if (info.source) lines.push(`Scene: \`${info.source}\``, '');
  lines.push(`Time step h = ${fmt(info.h)} s, duration ${fmt(info.duration)} s. Energy ratios are relative to the initial total energy.`, '');
  lines.push('![total energy](energy.svg)', '');
  lines.push('| integrator | h (s) | steps | runtime (s) | Newton iterations | energy kept | min / max energy ratio | angular momentum kept | status |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const e of entries) {
    const s = e.summary;
    const name = `[${e.integrator}](${encodeURI(e.dir)}/)`;
    if (!s) {
      lines.push(`| ${cell(name)} | ${fmt(info.h)} | n/a | n/a | n/a | n/a | n/a | n/a | ${cell(runStatus(e))} |`);
      continue;
    }
    const e0 = s.initialEnergy;
    const ratio = e0 !== 0 && Number.isFinite(e0) ? `${fmt(s.minEnergy / e0, 4)} / ${fmt(s.maxEnergy / e0, 4)}` : 'n/a';
    const row = [name, fmt(s.h), String(s.steps), fmt(s.wallSeconds, 3), String(s.newtonIterations), fmt(s.energyKept), ratio, fmt(s.angularMomentumKept), runStatus(e)];
    lines.push(`| ${row.map(cell).join(' | ')} |`);
  }
  lines.push('', 'Each run\'s metrics.csv, bodies.csv, energy.svg (and alpha.svg where the integrator has an alpha), frames/ and summary.json are in its folder (`vivace plot <folder> --columns ...` plots other columns); energy-components.svg shows kinetic, potential and total energy per run.', '');
  return lines.join('\n');
}

/** Writes report.md, energy.svg and energy-components.svg into dir (which exists). */
export async function writeCompareOutputs(dir: string, info: CompareInfo, entries: CompareEntry[]): Promise<{ report: string; plot: string; components: string }> {
  mkdirSync(dir, { recursive: true });
  const withData = entries.filter((e) => e.series && e.series.t.length > 0);
  const subtitle = `h = ${fmt(info.h)} s`;
  const totals: PlotSeries[] = withData.map((e) => ({ name: e.integrator, t: e.series!.t, y: e.series!.total }));
  const paths = { report: join(dir, REPORT_FILE), plot: join(dir, COMPARE_PLOT_FILE), components: join(dir, COMPONENTS_PLOT_FILE) };
  writeFileAtomic(paths.plot, await linePlotSvg(totals, { title: `${info.scene}: total energy`, subtitle, yTitle: 'total energy (J)' }));
  const panels: Panel[] = withData.map((e) => {
    const s = e.series!;
    return {
      title: e.integrator,
      series: [
        { name: 'kinetic', t: s.t, y: s.kinetic },
        { name: 'potential', t: s.t, y: s.potential },
        { name: 'total', t: s.t, y: s.total },
      ],
    };
  });
  if (panels.length > 0) {
    writeFileAtomic(paths.components, await panelPlotSvg(panels, { title: `${info.scene}: energy components`, subtitle, height: 160 }));
  }
  writeFileAtomic(paths.report, compareReportMarkdown(info, entries));
  return paths;
}
