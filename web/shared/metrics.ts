/**
 * The energy series of a run's metrics.csv, read incrementally: a run in progress appends whole lines, so the viewer
 * fetches only the bytes after what it has and feeds them here. Pure: also used by the Node tests.
 */

/** The columns the plots show; `contact` and `alpha` may be absent or empty (no contact, no alpha). */
export const SERIES = ['t', 'kinetic', 'potential', 'contact', 'total', 'target', 'alpha'] as const;
export type SeriesName = (typeof SERIES)[number];

export class MetricsSeries {
  readonly columns: Record<SeriesName, number[]> = { t: [], kinetic: [], potential: [], contact: [], total: [], target: [], alpha: [] };
  /** Which of the columns the file has (contact only in scenes with contact). */
  readonly present = new Set<SeriesName>();
  /** Bytes consumed so far (whole lines only): the offset of the next request. */
  bytes = 0;
  private index: Partial<Record<SeriesName, number>> | null = null;

  get length(): number {
    return this.columns.t.length;
  }

  /**
   * Feeds the file's text from offset `bytes` on. Whole lines are read and counted; a trailing partial line (a run
   * writing) is left for the next request, which starts again at `bytes`.
   */
  push(chunk: string): void {
    const cut = chunk.lastIndexOf('\n');
    if (cut < 0) return;
    const whole = chunk.slice(0, cut + 1);
    this.bytes += utf8Length(whole);
    for (const line of whole.split('\n')) if (line !== '') this.addLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  /** Appends rows given as numbers in the order of SERIES, one row after another (the demo's worker sends these). */
  appendRows(rows: ArrayLike<number>, hasContact: boolean): void {
    this.present.add('t').add('kinetic').add('potential').add('total').add('target').add('alpha');
    if (hasContact) this.present.add('contact');
    for (let k = 0; k + SERIES.length <= rows.length; k += SERIES.length) SERIES.forEach((name, j) => this.columns[name].push(rows[k + j]));
  }

  private addLine(line: string): void {
    if (!this.index) {
      const header = line.split(',');
      this.index = {};
      for (const name of SERIES) {
        const i = header.indexOf(name);
        if (i >= 0) {
          this.index[name] = i;
          this.present.add(name);
        }
      }
      if (this.index.t === undefined || this.index.total === undefined) throw new Error(`metrics.csv: the header has no t or total column (${line.slice(0, 80)})`);
      return;
    }
    // Only the warning column (last) may be quoted and hold commas; the numbers before it split plainly.
    const f = line.split(',');
    for (const name of SERIES) {
      const i = this.index[name];
      this.columns[name].push(i === undefined || f[i] === '' || f[i] === undefined ? NaN : Number(f[i]));
    }
  }

  /** Index of the last row with t <= time (0 before the first). */
  rowAt(time: number): number {
    const t = this.columns.t;
    let lo = 0;
    let hi = t.length - 1;
    if (hi < 0 || time <= t[0]) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (t[mid] <= time + 1e-12) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
