/**
 * Line plots as SVG text, rendered in Node without a DOM or canvas: a vega-lite spec is compiled to vega and drawn
 * by a headless vega View. Long series are reduced to at most ~maxPoints points first (min and max of each bucket,
 * so oscillations and spikes stay visible).
 */

import type { TopLevelSpec } from 'vega-lite';

export interface PlotSeries {
  name: string;
  t: ArrayLike<number>;
  y: ArrayLike<number>;
}

export interface LinePlotOptions {
  title: string;
  subtitle?: string;
  xTitle?: string;
  yTitle?: string;
  width?: number;
  height?: number;
  /** Points per series after downsampling (default 2000). */
  maxPoints?: number;
  /** Series drawn dashed (a reference such as the energy target). */
  dashed?: string[];
}

export interface Panel {
  title: string;
  series: PlotSeries[];
}

interface Point {
  t: number;
  value: number;
  series: string;
}

/**
 * At most ~maxPoints finite points of (t, y): the whole series when it is short enough, else the minimum and the
 * maximum of each of maxPoints / 2 buckets of consecutive samples, in time order. Non-finite samples are dropped.
 */
export function downsample(t: ArrayLike<number>, y: ArrayLike<number>, maxPoints = 2000): { t: number[]; y: number[] } {
  const n = Math.min(t.length, y.length);
  const outT: number[] = [];
  const outY: number[] = [];
  const ok = (i: number) => Number.isFinite(t[i]) && Number.isFinite(y[i]);
  if (n <= maxPoints) {
    for (let i = 0; i < n; i++) {
      if (!ok(i)) continue;
      outT.push(t[i]);
      outY.push(y[i]);
    }
    return { t: outT, y: outY };
  }
  const buckets = Math.max(1, Math.floor(maxPoints / 2));
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets);
    const hi = Math.floor(((b + 1) * n) / buckets);
    let iMin = -1;
    let iMax = -1;
    for (let i = lo; i < hi; i++) {
      if (!ok(i)) continue;
      if (iMin < 0 || y[i] < y[iMin]) iMin = i;
      if (iMax < 0 || y[i] > y[iMax]) iMax = i;
    }
    if (iMin < 0) continue;
    const first = Math.min(iMin, iMax);
    const second = Math.max(iMin, iMax);
    outT.push(t[first]);
    outY.push(y[first]);
    if (second !== first) {
      outT.push(t[second]);
      outY.push(y[second]);
    }
  }
  return { t: outT, y: outY };
}

function points(series: PlotSeries[], maxPoints: number): Point[] {
  const out: Point[] = [];
  for (const s of series) {
    const d = downsample(s.t, s.y, maxPoints);
    for (let i = 0; i < d.t.length; i++) out.push({ t: d.t[i], value: d.y[i], series: s.name });
  }
  return out;
}

function encoding(names: string[], xTitle: string, yTitle: string, dashed: string[] = []) {
  return {
    x: { field: 't', type: 'quantitative' as const, title: xTitle },
    y: { field: 'value', type: 'quantitative' as const, title: yTitle, scale: { zero: false } },
    color: { field: 'series', type: 'nominal' as const, title: null, sort: names },
    strokeDash: {
      field: 'series',
      type: 'nominal' as const,
      title: null,
      sort: names,
      scale: { domain: names, range: names.map((n) => (dashed.includes(n) ? [6, 4] : [1, 0])) },
    },
  };
}

/** One chart, one line per series. */
export async function linePlotSvg(series: PlotSeries[], opts: LinePlotOptions): Promise<string> {
  const names = series.map((s) => s.name);
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: opts.subtitle ? { text: opts.title, subtitle: opts.subtitle } : opts.title,
    width: opts.width ?? 720,
    height: opts.height ?? 320,
    background: 'white',
    data: { values: points(series, opts.maxPoints ?? 2000) },
    mark: { type: 'line', strokeWidth: 1.5, clip: true },
    encoding: encoding(names, opts.xTitle ?? 'time (s)', opts.yTitle ?? 'energy (J)', opts.dashed),
  };
  return renderSvg(spec);
}

/** Charts stacked vertically, one per panel, sharing the colour legend. */
export async function panelPlotSvg(panels: Panel[], opts: LinePlotOptions): Promise<string> {
  const names = [...new Set(panels.flatMap((p) => p.series.map((s) => s.name)))];
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: opts.subtitle ? { text: opts.title, subtitle: opts.subtitle } : opts.title,
    background: 'white',
    vconcat: panels.map((p) => ({
      title: p.title,
      width: opts.width ?? 720,
      height: opts.height ?? 200,
      data: { values: points(p.series, opts.maxPoints ?? 2000) },
      mark: { type: 'line' as const, strokeWidth: 1.5, clip: true },
      encoding: encoding(names, opts.xTitle ?? 'time (s)', opts.yTitle ?? 'energy (J)', opts.dashed),
    })),
  };
  return renderSvg(spec);
}

async function renderSvg(spec: TopLevelSpec): Promise<string> {
  // Loaded on first use: vega takes about a second to import, which commands that plot nothing should not pay.
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
