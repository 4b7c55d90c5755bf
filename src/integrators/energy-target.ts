/**
 * The energy schedule that A-search follows (seed 000, section 4.4 and Algorithm 1) and blending tracks.
 *
 *   E_0 = s H_0
 *   before decay starts:  E_{n+1} = E_n - L_n                       (conserve, modulo the damping/friction loss L_n)
 *   while decaying:       E_{n+1} - E_g = exp(-h / tau) (E_n - E_g - L_n)
 *
 * tau may change over time: a piecewise schedule [{ from, tau }] (the chain net and bunny splash use tau = 1 s
 * from t = 1 s and 0.5 s from t = 1.5 s).
 */
export interface DecayPiece {
  /** Start time of this piece (s). */
  from: number;
  /** Decay time constant (s); Infinity means no decay from here on. */
  tau: number;
}

export interface EnergyTargetOptions {
  /** s in E_0 = s H_0 (default 1). */
  scale: number;
  /** Ground energy E_g the decay tends to (default 0: potential zero at y = 0). */
  ground: number;
  /** Pieces sorted by `from`; empty for plain conservation. */
  decay: DecayPiece[];
}

export const defaultEnergyTarget: EnergyTargetOptions = { scale: 1, ground: 0, decay: [] };

export class EnergyTarget {
  private current = NaN;
  private readonly pieces: DecayPiece[];

  constructor(readonly options: EnergyTargetOptions = defaultEnergyTarget) {
    this.pieces = [...options.decay].sort((a, b) => a.from - b.from);
    for (const p of this.pieces) {
      if (!(p.tau > 0)) throw new Error(`energy target: decay tau must be > 0 (got ${p.tau} from t = ${p.from})`);
    }
  }

  /** Starts the schedule at the initial Hamiltonian H_0. */
  reset(h0: number): number {
    this.current = this.options.scale * h0;
    return this.current;
  }

  /** Goes on from a saved E_n (a resumed run). */
  restore(value: number): void {
    this.current = value;
  }

  get value(): number {
    return this.current;
  }

  /** tau in force for a step starting at time t (Infinity: no decay). */
  tauAt(t: number): number {
    let tau = Infinity;
    for (const p of this.pieces) if (t >= p.from - 1e-12) tau = p.tau;
    return tau;
  }

  /** The target after a step from t to t + h that lost `loss` to damping/friction. Does not commit it. */
  peek(t: number, h: number, loss: number): number {
    const tau = this.tauAt(t);
    const eg = this.options.ground;
    if (!Number.isFinite(tau)) return this.current - loss;
    return eg + Math.exp(-h / tau) * (this.current - eg - loss);
  }

  /** Commits the step: E_n <- E_{n+1}. */
  advance(t: number, h: number, loss: number): number {
    this.current = this.peek(t, h, loss);
    return this.current;
  }
}
