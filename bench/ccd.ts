/**
 * `npx tsx bench/ccd.ts [DIR]`: narrow-phase CCD (src/contact/ccd.ts) on the full CCD Sample-Queries set
 * (Wang et al. 2021, "A Large-Scale Benchmark and an Inclusion-Based Algorithm for Continuous Collision
 * Detection"), default DIR /work/shared/data/ccd-sample-queries (the set is not shipped: pass its folder). Prints per scene/type and in total:
 * queries, colliding, false negatives, false positives, distance evaluations and microseconds per query, for the
 * refined and the plain additive modes. Options: --relative-tolerance X, --max-iterations N.
 */
import { relative } from 'node:path';
import type { CcdOptions, CcdStats } from '../src/contact/ccd.js';
import { runCcdQuery } from '../src/contact/ccd-queries.js';
import { readCcdQueryTree } from '../src/io/ccd-query-files.js';

const args = process.argv.slice(2);
function option(name: string): number | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(args[i + 1]);
  args.splice(i, 2);
  return value;
}
const relativeTolerance = option('--relative-tolerance');
const maxIterations = option('--max-iterations');
const root = args[0] ?? '/work/shared/data/ccd-sample-queries';

interface Tally { queries: number; positives: number; fn: number; fp: number; evaluations: number; exhausted: number; ns: number }
const empty = (): Tally => ({ queries: 0, positives: 0, fn: 0, fp: 0, evaluations: 0, exhausted: 0, ns: 0 });
function add(into: Tally, from: Tally): void {
  for (const key of Object.keys(into) as (keyof Tally)[]) into[key] += from[key];
}
function line(name: string, t: Tally): string {
  return `${name.padEnd(46)} ${String(t.queries).padStart(6)} ${String(t.positives).padStart(5)} ${String(t.fn).padStart(4)} ` +
    `${String(t.fp).padStart(5)} ${(t.evaluations / t.queries).toFixed(1).padStart(8)} ` +
    `${(t.ns / t.queries / 1e3).toFixed(2).padStart(8)} ${String(t.exhausted).padStart(5)}`;
}

const files = readCcdQueryTree(root).map((file) => ({ ...file, name: relative(root, file.path).replace(/\/data_/, ' data_') }));
const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
let failed = false;
for (const refine of [true, false]) {
  const options: CcdOptions = { refine, relativeTolerance, maxIterations };
  console.log(`\n${refine ? 'refined (default)' : 'plain additive'}; relativeTolerance ${relativeTolerance ?? 'default'}`);
  console.log(`${'file'.padEnd(46)} ${'n'.padStart(6)} ${'hits'.padStart(5)} ${'FN'.padStart(4)} ${'FP'.padStart(5)} ` +
    `${'evals/q'.padStart(8)} ${'us/q'.padStart(8)} ${'cap'.padStart(5)}`);
  const total = empty();
  for (const file of files) {
    const tally = empty();
    const start = process.hrtime.bigint();
    for (const q of file.queries) {
      const hit = runCcdQuery(q, file.edgeEdge, options, stats) <= 1;
      tally.queries++;
      tally.evaluations += stats.iterations;
      if (stats.exhausted) tally.exhausted++;
      if (q.collides) tally.positives++;
      if (q.collides && !hit) tally.fn++;
      if (!q.collides && hit) tally.fp++;
    }
    tally.ns = Number(process.hrtime.bigint() - start);
    console.log(line(file.name, tally));
    add(total, tally);
  }
  console.log(line('TOTAL', total));
  if (total.fn > 0) failed = true;
}
if (failed) {
  console.error('false negatives found');
  process.exitCode = 1;
}
