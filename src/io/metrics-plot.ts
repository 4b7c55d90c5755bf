/**
 * Plots of a run folder's metrics.csv (`vivace plot`, and the alpha.svg a run writes): any numeric columns against t.
 * It reads the file as it is, so a run that is still going (or was killed) plots up to its last whole row;
 * summary.json, when there, only names the run in the title.
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { linePlotSvg } from './plot.js';
import { ENERGY_PLOT_COLUMNS, METRICS_FILE, SUMMARY_FILE } from './run-output.js';

/** The columns `vivace plot` draws without --columns: those of energy.svg. */
export const DEFAULT_PLOT_COLUMNS: readonly string[] = ENERGY_PLOT_COLUMNS;

/** The quantity of each column (the y axis's title when all plotted columns share one); potential terms are energies. */
const QUANTITIES: Record<string, string> = {
  px: 'momentum (kg m/s)',
  py: 'momentum (kg m/s)',
  pz: 'momentum (kg m/s)',
  lx: 'angular momentum (kg m²/s)',
  ly: 'angular momentum (kg m²/s)',
  lz: 'angular momentum (kg m²/s)',
  alpha: 'alpha',
  newton_iters: 'iterations',
  linear_iters: 'iterations',
  wall_ms: 'wall time (ms)',
  min_distance: 'distance (m)',
  inverted: 'tets',
  active_contacts: 'contact pairs',
  step: 'step',
};

/** A bad request of `vivace plot` (missing folder or file, unknown column); the CLI exits with code 2. */
export class MetricsPlotError extends Error {
  override name = 'MetricsPlotError';
}

/** metrics.csv as numeric columns by name (t first); `warning`, the one text column, is left out. */
export interface MetricsTable {
  file: string;
  /** Plottable column names in file order (all but `t` and `warning`). */
  columns: string[];
  t: Float64Array;
  values: Map<string, Float64Array>;
}

/**
 * Reads metrics.csv. Only whole lines count (a run still writing may have a partial last one); empty fields (alpha
 * without A-search, min_distance without contact) are NaN. Throws MetricsPlotError naming the file when it is
 * missing, empty or has no `t` column.
 */
export function readMetricsTable(file: string): MetricsTable {
  if (!existsSync(file)) throw new MetricsPlotError(`${file} does not exist`);
  const text = readFileSync(file, 'utf8');
  const end = text.lastIndexOf('\n');
  const lines = end < 0 ? [] : text.slice(0, end).split('\n');
  if (lines.length === 0 || lines[0] === '') throw new MetricsPlotError(`${file} is empty (no header line yet)`);
  const header = lines[0].split(',');
  const tIndex = header.indexOf('t');
  if (tIndex < 0) throw new MetricsPlotError(`${file}: the header has no 't' column (is it a vivace metrics.csv?)`);
  // The numbers come before `warning`, the last column and the only one that may be quoted, so a plain split is exact.
  const warning = header.lastIndexOf('warning');
  const numeric = header.length - (warning === header.length - 1 ? 1 : 0);
  const rows = lines.slice(1).filter((l) => l !== '');
  const data = Array.from({ length: numeric }, () => new Float64Array(rows.length));
  rows.forEach((line, r) => {
    const f = line.split(',', numeric);
    for (let c = 0; c < numeric; c++) data[c][r] = f[c] === undefined || f[c] === '' ? NaN : Number(f[c]);
  });
  const values = new Map<string, Float64Array>();
  for (let c = 0; c < numeric; c++) if (c !== tIndex) values.set(header[c], data[c]);
  return { file, columns: [...values.keys()], t: data[tIndex], values };
}

/** The columns to plot, checked against the table: an unknown name is refused with the list of available ones. */
export function checkColumns(table: MetricsTable, columns: readonly string[]): void {
  const unknown = columns.filter((c) => !table.values.has(c));
  if (unknown.length > 0) {
    const names = unknown.map((c) => `'${c}'`).join(', ');
    throw new MetricsPlotError(`${table.file} has no column ${names}; available: ${table.columns.join(', ')}`);
  }
}

/** Axis title of a set of columns: their quantity when they share one, else "value". */
function yTitle(columns: readonly string[]): string {
  const quantities = new Set(columns.map((c) => QUANTITIES[c] ?? 'energy (J)'));
  return quantities.size === 1 ? [...quantities][0] : 'value';
}

export interface MetricsPlotOptions {
  title: string;
  subtitle?: string;
}

/** An SVG line plot of the columns against t (checked first), `target` dashed as in energy.svg. */
export async function metricsPlotSvg(table: MetricsTable, columns: readonly string[], opts: MetricsPlotOptions): Promise<string> {
  checkColumns(table, columns);
  const series = columns.map((name) => ({ name, t: table.t, y: table.values.get(name)! }));
  return linePlotSvg(series, { title: opts.title, subtitle: opts.subtitle, yTitle: yTitle(columns), dashed: ['target'] });
}

/**
 * The title of a run folder's plot: "scene: integrator" from summary.json, else the folder's name; the subtitle
 * says how far the rows go and, without summary.json, that the run has not finished (or was stopped hard).
 */
export function runPlotTitle(dir: string, table: MetricsTable): MetricsPlotOptions {
  const rows = table.t.length;
  const span = rows > 0 ? `t = ${Number(table.t[0].toPrecision(6))} to ${Number(table.t[rows - 1].toPrecision(6))} s` : 'no steps yet';
  const summaryFile = join(dir, SUMMARY_FILE);
  if (existsSync(summaryFile)) {
    try {
      const s = JSON.parse(readFileSync(summaryFile, 'utf8')) as { scene?: string; integrator?: string; stopped?: string | null };
      const stopped = s.stopped ? `, stopped: ${s.stopped.length > 100 ? `${s.stopped.slice(0, 99)}…` : s.stopped}` : '';
      return { title: `${s.scene ?? basename(dir)}: ${s.integrator ?? '?'}`, subtitle: `${rows} rows, ${span}${stopped}` };
    } catch {
      // An unreadable summary only costs the title.
    }
  }
  return { title: basename(dir), subtitle: `${rows} rows, ${span} (no ${SUMMARY_FILE}: running, or ended without one)` };
}

/** Checks that dir is a folder with a metrics.csv and reads it (MetricsPlotError naming what is missing). */
export function readRunMetrics(dir: string): MetricsTable {
  if (!existsSync(dir)) throw new MetricsPlotError(`${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new MetricsPlotError(`${dir} is not a folder (give a run folder, as vivace run writes it)`);
  const file = join(dir, METRICS_FILE);
  if (!existsSync(file)) throw new MetricsPlotError(`${file} does not exist: ${dir} is not a run folder (no ${METRICS_FILE})`);
  return readMetricsTable(file);
}
