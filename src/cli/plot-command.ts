/**
 * `vivace plot <run-dir>`: columns of a run's metrics.csv against t, as an SVG (io/metrics-plot.ts). Works on a run
 * that is going or was stopped: it reads the rows written so far.
 */

import { resolve } from 'node:path';
import type { Command } from 'commander';
import { fsErrorText } from '../io/fs-errors.js';
import { writeFileAtomic } from '../io/mesh-files.js';
import { DEFAULT_PLOT_COLUMNS, MetricsPlotError, metricsPlotSvg, readRunMetrics, runPlotTitle, checkColumns } from '../io/metrics-plot.js';
import { parseColumnList, UsageError } from './args.js';
import { EXIT, type CliIo } from './run-command.js';

/** The file `vivace plot` writes without --out, inside the run folder. */
export const DEFAULT_PLOT_FILE = 'plot.svg';

interface PlotFlags {
  columns?: string[];
  out?: string;
}

export function addPlotCommand(program: Command, io: CliIo, setCode: (code: number) => void, cwd: string): void {
  program
    .command('plot')
    .description('plot columns of a run\'s metrics.csv against time as an SVG (a finished run, or one still going or stopped)')
    .argument('<run-dir>', 'a run folder, as `vivace run` writes it')
    .option('--columns <list>', `comma-separated metrics.csv columns, e.g. total,target or alpha (default: ${DEFAULT_PLOT_COLUMNS.join(',')})`, parseColumnList)
    .option('--out <file>', `the SVG to write (default: <run-dir>/${DEFAULT_PLOT_FILE})`)
    .action(async (dir: string, flags: PlotFlags) => {
      const runDir = resolve(cwd, dir);
      const columns = flags.columns ?? DEFAULT_PLOT_COLUMNS;
      let svg: string;
      let rows: number;
      try {
        const table = readRunMetrics(runDir);
        checkColumns(table, columns);
        if (table.t.length === 0) throw new MetricsPlotError(`${table.file} has no rows yet (only its header)`);
        rows = table.t.length;
        svg = await metricsPlotSvg(table, columns, runPlotTitle(runDir, table));
      } catch (err) {
        if (err instanceof MetricsPlotError) throw new UsageError(err.message);
        throw err;
      }
      const out = flags.out ? resolve(cwd, flags.out) : resolve(runDir, DEFAULT_PLOT_FILE);
      try {
        writeFileAtomic(out, svg);
      } catch (err) {
        throw new UsageError(`--out: cannot write ${out}: ${fsErrorText(err)}`);
      }
      io.stdout.write(`plot: ${out} (${columns.join(', ')} over ${rows} rows)\n`);
      setCode(EXIT.ok);
    });
}
