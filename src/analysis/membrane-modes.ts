/**
 * Modes of a clamped circular membrane (a drum) and the projection of a shell's motion on them: seed 000's vibrating
 * membrane (section 5.2, figure 4) starts in the u21 mode and is judged by how much of it each integrator keeps.
 *
 * In polar coordinates (r, theta) about the centre, in the membrane's plane, the linear modes are
 *   u_mn(r, theta) = J_m(j_mn r / R) cos(m theta)   (and the sin(m theta) twin for m > 0),
 * J_m the Bessel function of the first kind and j_mn its n-th positive zero (u21: j21 = 5.13562). The membrane lies
 * in the x-z plane (the shell generators' plane), theta from +x toward +z, and moves along y.
 */

/** J_m(x) by its power series (accurate to round-off for the |x| <= 30 a drum's lowest modes need). */
export function besselJ(m: number, x: number): number {
  // sum_k (-1)^k (x/2)^(2k+m) / (k! (k+m)!)
  const half = x / 2;
  let term = 1;
  for (let k = 1; k <= m; k++) term *= half / k;
  let sum = term;
  const q = -half * half;
  for (let k = 1; k < 200; k++) {
    term *= q / (k * (k + m));
    sum += term;
    if (Math.abs(term) < 1e-17 * Math.abs(sum)) break;
  }
  return sum;
}

/** The n-th positive zero of J_m (n >= 1), by bracketing on a fine grid and bisection. */
export function besselZero(m: number, n: number): number {
  let found = 0;
  let a = m === 0 ? 1e-9 : m * 0.5 + 1e-9;
  let fa = besselJ(m, a);
  for (let b = a + 0.05; b < 200; b += 0.05) {
    const fb = besselJ(m, b);
    if (fa * fb <= 0 && ++found === n) {
      let lo = a, hi = b;
      for (let i = 0; i < 100; i++) {
        const mid = 0.5 * (lo + hi);
        if (besselJ(m, lo) * besselJ(m, mid) <= 0) hi = mid;
        else lo = mid;
      }
      return 0.5 * (lo + hi);
    }
    a = b;
    fa = fb;
  }
  throw new Error(`besselZero: zero ${n} of J_${m} not found below 200`);
}

/** A drum mode: J_m(j_mn r / R) times cos(m theta) or, with `sine`, sin(m theta). */
export interface DrumMode {
  m: number;
  n: number;
  sine: boolean;
}

export function modeName(mode: DrumMode): string {
  return `u${mode.m}${mode.n}${mode.m > 0 ? (mode.sine ? 's' : 'c') : ''}`;
}

/** The mode's shape at (x, z) relative to the centre, for a drum of radius R (0 outside). */
export function drumModeShape(mode: DrumMode, R: number, dx: number, dz: number, zero = besselZero(mode.m, mode.n)): number {
  const r = Math.hypot(dx, dz);
  if (r > R) return 0;
  const theta = Math.atan2(dz, dx);
  return besselJ(mode.m, (zero * r) / R) * (mode.sine ? Math.sin(mode.m * theta) : Math.cos(mode.m * theta));
}

/** The lowest drum modes by frequency (j_mn): u01, u11 (c, s), u21 (c, s), u02, u31 (c, s). */
export const LOWEST_DRUM_MODES: readonly DrumMode[] = [
  { m: 0, n: 1, sine: false },
  { m: 1, n: 1, sine: false },
  { m: 1, n: 1, sine: true },
  { m: 2, n: 1, sine: false },
  { m: 2, n: 1, sine: true },
  { m: 0, n: 2, sine: false },
  { m: 3, n: 1, sine: false },
  { m: 3, n: 1, sine: true },
];

/**
 * Mass-weighted projection of out-of-plane fields on drum modes: coefficient c_k of a field w (one value per node)
 * is sum_i m_i w_i phi_k(i) / sum_i m_i phi_k(i)^2, the least-squares amplitude of mode k in the lumped-mass norm
 * (so a field equal to A phi_k gives exactly A).
 */
export class DrumProjection {
  /** Mode shapes at the nodes, one row per mode. */
  readonly shapes: Float64Array[];
  private readonly norms: Float64Array;

  /**
   * `rest` and `mass` of the nodes (3 per node, `mass` per DOF as the model keeps it), `nodes` the membrane's node
   * ids, `center` and `radius` of the drum.
   */
  constructor(
    readonly modes: readonly DrumMode[],
    rest: Float64Array,
    private readonly mass: Float64Array,
    private readonly nodes: Uint32Array,
    center: readonly [number, number, number],
    radius: number,
  ) {
    this.shapes = modes.map((mode) => {
      const zero = besselZero(mode.m, mode.n);
      return Float64Array.from(nodes, (i) => drumModeShape(mode, radius, rest[3 * i] - center[0], rest[3 * i + 2] - center[2], zero));
    });
    this.norms = Float64Array.from(this.shapes, (phi) => {
      let s = 0;
      nodes.forEach((i, k) => (s += mass[3 * i] * phi[k] * phi[k]));
      return s;
    });
  }

  /** Coefficients of the y components of a field f (3 per node; minus `offset` per node's y when given) into out. */
  project(f: Float64Array, out: Float64Array, offset?: Float64Array): Float64Array {
    this.shapes.forEach((phi, k) => {
      let s = 0;
      for (let a = 0; a < this.nodes.length; a++) {
        const i = this.nodes[a];
        s += this.mass[3 * i] * (f[3 * i + 1] - (offset ? offset[3 * i + 1] : 0)) * phi[a];
      }
      out[k] = s / this.norms[k];
    });
    return out;
  }
}

/** The motion of a run projected on modes: per output frame, time and the coefficients of displacement and velocity. */
export interface ModeHistory {
  label: string;
  modes: readonly DrumMode[];
  t: number[];
  /** Displacement (m) and velocity (m/s) coefficients, one array of modes.length per frame. */
  w: Float64Array[];
  v: Float64Array[];
  cpuSeconds: number;
  newtonIterations: number;
  /** H at the end over H_0. */
  energyKept: number | null;
  stopped?: string;
}

/** Largest |coefficient| of mode k and largest norm of all other coefficients over each window of `window` s. */
export function windowedAmplitudes(history: ModeHistory, k: number, window: number): { start: number; mode: number; others: number }[] {
  const out: { start: number; mode: number; others: number }[] = [];
  history.t.forEach((t, f) => {
    const slot = Math.min(Math.floor(t / window + 1e-9), Math.max(0, Math.ceil(history.t[history.t.length - 1] / window - 1e-9) - 1));
    while (out.length <= slot) out.push({ start: out.length * window, mode: 0, others: 0 });
    const w = history.w[f];
    let rest = 0;
    for (let j = 0; j < w.length; j++) if (j !== k) rest += w[j] * w[j];
    out[slot].mode = Math.max(out[slot].mode, Math.abs(w[k]));
    out[slot].others = Math.max(out[slot].others, Math.sqrt(rest));
  });
  return out;
}
