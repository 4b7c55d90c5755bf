/**
 * The plots under the 3D view, one column per run: energies (kinetic, potential, contact, total, target) and alpha
 * against time, with a cursor at the current time. Clicking or dragging on a plot moves the time there. Drawn with
 * uPlot (canvas), which redraws a growing series cheaply (the demo adds rows while it computes).
 */

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { MetricsSeries, SeriesName } from './metrics.js';
import { CURVE_COLOURS } from './palette.js';

const ENERGY_CURVES: { name: SeriesName; label: string; dash?: number[]; width?: number }[] = [
  { name: 'kinetic', label: 'kinetic' },
  { name: 'potential', label: 'potential' },
  { name: 'contact', label: 'contact' },
  { name: 'total', label: 'total', width: 2 },
  { name: 'target', label: 'target', dash: [6, 4] },
];

export class RunPlots {
  readonly element: HTMLElement;
  private energy: uPlot | null = null;
  private alpha: uPlot | null = null;
  private readonly cursors: HTMLElement[] = [];
  private time = 0;
  private rows = -1;
  private range: [number, number] | null = null;
  private readonly note: HTMLElement;
  /** Holds the two plots (the title above, the note below, so that the columns of several runs line up). */
  private readonly box: HTMLElement;

  constructor(
    parent: HTMLElement,
    title: string,
    private readonly onScrub: (t: number) => void,
    private readonly heights = { energy: 170, alpha: 100 },
  ) {
    this.element = document.createElement('div');
    this.element.className = 'run-plots';
    const h = document.createElement('div');
    h.className = 'run-plots-title';
    h.textContent = title;
    this.box = document.createElement('div');
    this.note = document.createElement('div');
    this.note.className = 'run-plots-note';
    this.element.append(h, this.box, this.note);
    parent.appendChild(this.element);
  }

  setTitle(title: string): void {
    (this.element.firstChild as HTMLElement).textContent = title;
  }

  /** Fixes the time axis (so that the columns of several runs line up); null follows the data. */
  setTimeRange(range: [number, number] | null): void {
    this.range = range;
    if (range && this.energy) for (const u of [this.energy, this.alpha]) u?.setScale('x', { min: range[0], max: range[1] });
  }

  /** Shows the series (call again as rows arrive; redraws only when there are new rows). */
  update(m: MetricsSeries): void {
    if (m.length === this.rows) return;
    this.rows = m.length;
    const width = Math.max(200, this.element.clientWidth - 8);
    const x = m.columns.t;
    if (!this.energy) {
      const curves = ENERGY_CURVES.filter((c) => c.name !== 'contact' || m.present.has('contact'));
      this.energy = this.makePlot('energy (J)', curves.map((c) => ({ label: c.label, stroke: CURVE_COLOURS[c.name as keyof typeof CURVE_COLOURS], width: c.width ?? 1.25, dash: c.dash })), width, this.heights.energy);
      (this.energy as uPlot & { curves?: SeriesName[] }).curves = curves.map((c) => c.name);
      this.alpha = this.makePlot('alpha', [{ label: 'alpha', stroke: CURVE_COLOURS.alpha, width: 1.25 }], width, this.heights.alpha);
    }
    const names = (this.energy as uPlot & { curves: SeriesName[] }).curves;
    this.energy.setData([x, ...names.map((n) => gaps(m.columns[n]))], this.range === null);
    const alpha = gaps(m.columns.alpha);
    this.alpha!.setData([x, alpha], this.range === null);
    if (this.range) this.setTimeRange(this.range);
    const none = alpha.every((a) => a === null) && m.length > 1;
    this.note.textContent = none ? 'alpha: this integrator has none' : '';
    this.alpha!.root.style.display = none ? 'none' : '';
    this.setTime(this.time);
  }

  setTime(t: number): void {
    this.time = t;
    [this.energy, this.alpha].forEach((u, i) => {
      if (!u || !this.cursors[i]) return;
      const left = u.valToPos(t, 'x');
      this.cursors[i].style.transform = `translateX(${Number.isFinite(left) ? left : -10}px)`;
    });
  }

  resize(): void {
    const width = Math.max(200, this.element.clientWidth - 8);
    for (const u of [this.energy, this.alpha]) u?.setSize({ width, height: u.height });
    this.setTime(this.time);
  }

  private makePlot(yLabel: string, series: uPlot.Series[], width: number, height: number): uPlot {
    const opts: uPlot.Options = {
      width,
      height,
      legend: { live: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: { x: { time: false } },
      axes: [
        { label: 't (s)', size: 36, labelSize: 14 },
        { label: yLabel, size: 60, labelSize: 14 },
      ],
      series: [{ label: 't' }, ...series.map((s) => ({ ...s, points: { show: false }, spanGaps: false }))],
    };
    const u = new uPlot(opts, [[], ...series.map(() => [])], this.box);
    const cursor = document.createElement('div');
    cursor.className = 'time-cursor';
    u.over.appendChild(cursor);
    this.cursors.push(cursor);
    let dragging = false;
    const scrub = (e: PointerEvent) => {
      const t = u.posToVal(e.offsetX, 'x');
      if (Number.isFinite(t)) this.onScrub(t);
    };
    u.over.addEventListener('pointerdown', (e) => {
      dragging = true;
      u.over.setPointerCapture(e.pointerId);
      scrub(e);
    });
    u.over.addEventListener('pointermove', (e) => dragging && scrub(e));
    u.over.addEventListener('pointerup', () => (dragging = false));
    return u;
  }
}

/** uPlot draws null as a gap; the CSV's empty fields are NaN here. */
function gaps(values: number[]): (number | null)[] {
  return values.map((v) => (Number.isFinite(v) ? v : null));
}
