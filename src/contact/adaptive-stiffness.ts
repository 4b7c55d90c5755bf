import type { IncrementalPotential } from '../solver/incremental-potential.js';
import { barrierSecondDerivative } from './barrier.js';
import type { BarrierPotential } from './barrier-potential.js';

/**
 * IPC's adaptive barrier stiffness (Li et al. 2020, section 4.3; ipc-toolkit's adaptive_stiffness), in vivace's
 * units (our kappa = IPC's kappa * dhat^2, see barrier-potential.ts):
 *
 *   - bounds: kappa_min = 1e11 * mean node mass / (4 d0 b''(d0)) with d0 = (1e-8 * bbox diagonal)^2, a squared
 *     distance; kappa_max = 100 kappa_min. The scene's kappa is kept as a lower bound as well.
 *   - when contacts first appear, kappa balances the barrier's gradient against the rest of the objective,
 *     kappa = -(grad B . grad E) / (c |grad B|^2), clamped to the bounds;
 *   - after each Newton iteration, when the smallest distance is below 1e-9 * bbox and still decreasing, kappa
 *     doubles (up to kappa_max).
 */
export class AdaptiveStiffness {
  readonly kappaMin: number;
  readonly kappaMax: number;
  private readonly floor: number;
  private readonly tooClose: number;
  private previousMinDistance = Infinity;
  private hadContact = false;
  private readonly gB: Float64Array;
  private readonly gE: Float64Array;

  constructor(
    private readonly barrier: BarrierPotential,
    mass: Float64Array,
    rest: Float64Array,
  ) {
    let diagonal2 = 0;
    for (let a = 0; a < 3; a++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let d = a; d < rest.length; d += 3) {
        lo = Math.min(lo, rest[d]);
        hi = Math.max(hi, rest[d]);
      }
      diagonal2 += (hi - lo) ** 2;
    }
    const bbox = Math.sqrt(diagonal2);
    let total = 0;
    let count = 0;
    for (let d = 0; d < mass.length; d += 3) {
      if (mass[d] > 0) {
        total += mass[d];
        count++;
      }
    }
    const meanMass = count > 0 ? total / count : 1;
    const dhat2 = barrier.dhat * barrier.dhat;
    const d0 = (1e-8 * bbox) ** 2;
    const ipcKappaMin = (1e11 * meanMass) / (4 * d0 * barrierSecondDerivative(d0, dhat2));
    this.floor = barrier.kappa;
    this.kappaMin = Math.max(this.floor, ipcKappaMin * dhat2);
    this.kappaMax = Math.max(100 * ipcKappaMin * dhat2, this.kappaMin);
    this.tooClose = 1e-9 * bbox;
    this.gB = new Float64Array(mass.length);
    this.gE = new Float64Array(mass.length);
    barrier.kappa = this.kappaMin;
  }

  /** What a checkpoint keeps between steps: kappa, and whether the last step began in contact. */
  saveState(): { kappa: number; hadContact: boolean } {
    return { kappa: this.barrier.kappa, hadContact: this.hadContact };
  }

  restoreState(state: { kappa: number; hadContact: boolean }): void {
    this.barrier.kappa = state.kappa;
    this.hadContact = state.hadContact;
  }

  /** Before a step's minimisation from x: sets kappa by the gradient balance when contacts (re)appear. */
  beginSolve(ip: IncrementalPotential, x: Float64Array): void {
    const contacts = this.barrier.activeContacts(x, null);
    this.previousMinDistance = contacts.minDistance;
    if (contacts.count === 0) {
      this.hadContact = false;
      return;
    }
    if (this.hadContact) return;
    this.hadContact = true;
    const kappa = this.barrier.kappa;
    // grad E of the objective without the barrier = full gradient - c kappa grad Bhat.
    ip.gradient(x, this.gE);
    this.gB.fill(0);
    this.barrier.kappa = 1;
    this.barrier.addGradient(x, 1, this.gB);
    const c = ip.weight;
    let dot = 0;
    let norm2 = 0;
    const constrained = ip.model.constrained;
    for (let d = 0; d < x.length; d++) {
      if (constrained[d]) continue;
      const gRest = this.gE[d] - c * kappa * this.gB[d];
      dot += this.gB[d] * gRest;
      norm2 += this.gB[d] * this.gB[d];
    }
    const balanced = norm2 > 0 ? -dot / (c * norm2) : this.kappaMin;
    this.barrier.kappa = Math.min(this.kappaMax, Math.max(this.kappaMin, balanced));
  }

  /** After a Newton iteration: doubles kappa while contacts keep closing in below 1e-9 bbox. True if it changed. */
  afterIteration(x: Float64Array): boolean {
    const d = this.barrier.activeContacts(x, null).minDistance;
    const previous = this.previousMinDistance;
    this.previousMinDistance = d;
    if (d < this.tooClose && previous < this.tooClose && d < previous && this.barrier.kappa < this.kappaMax) {
      this.barrier.kappa = Math.min(this.kappaMax, 2 * this.barrier.kappa);
      return true;
    }
    return false;
  }
}
