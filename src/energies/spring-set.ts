/**
 * What every kind of spring between node pairs shares: checking the pair list, the loops over springs, the
 * Hessian pattern (one 2-node clique per spring), the cached block slots and the scatter of the element Hessian.
 *
 * A spring's energy depends only on d = x_a - x_b, so its gradient is c d for x_a (minus that for x_b) and its
 * 6x6 Hessian is [[B, -B], [-B, B]] with the 3x3 block B = d2E/dd2. A subclass supplies E, c and B for one spring.
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';

/** B = s I + c v v^T, row-major 3x3: the form of every spring's block (isotropic plus rank one along d). */
export function isotropicPlusOuter(B: Float64Array, s: number, c: number, vx: number, vy: number, vz: number): void {
  B[0] = s + c * vx * vx;
  B[4] = s + c * vy * vy;
  B[8] = s + c * vz * vz;
  B[1] = B[3] = c * vx * vy;
  B[2] = B[6] = c * vx * vz;
  B[5] = B[7] = c * vy * vz;
}

export abstract class SpringSet implements PotentialTerm {
  /** Metrics column: 'spring' unless a subclass stores another kind of energy (bar segments are 'elastic'). */
  readonly name: string = 'spring';
  readonly count: number;
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly pairNodes = new Uint32Array(2);
  private readonly block = new Float64Array(9);

  /** `kind` names the class in error messages. */
  protected constructor(
    kind: string,
    readonly springs: Uint32Array,
    readonly stiffness: Float64Array,
    readonly restLength: Float64Array,
  ) {
    if (springs.length % 2 !== 0) throw new Error(`${kind}: springs has length ${springs.length}, not even`);
    this.count = springs.length / 2;
    if (stiffness.length !== this.count || restLength.length !== this.count)
      throw new Error(`${kind}: ${this.count} springs but ${stiffness.length} stiffnesses and ${restLength.length} rest lengths`);
    for (let s = 0; s < this.count; s++) {
      if (!(stiffness[s] >= 0)) throw new Error(`${kind}: spring ${s} has stiffness ${stiffness[s]} (must be >= 0)`);
      if (!(restLength[s] >= 0)) throw new Error(`${kind}: spring ${s} has rest length ${restLength[s]} (must be >= 0)`);
      if (springs[2 * s] === springs[2 * s + 1]) throw new Error(`${kind}: spring ${s} joins node ${springs[2 * s]} to itself`);
    }
    this.slots = new Int32Array(4 * this.count);
  }

  /** Energy of spring s at squared length l2 = |d|^2. */
  protected abstract springEnergy(s: number, l2: number): number;

  /** c such that scale * dE_s/dx_a = c d, at squared length l2. */
  protected abstract forceCoefficient(s: number, l2: number, scale: number): number;

  /**
   * Writes scale * d2E_s/dd2 (projected to PSD when asked) into the row-major 3x3 B. Returns false when spring s
   * adds nothing to the Hessian at this d.
   */
  protected abstract fillBlock(s: number, dx: number, dy: number, dz: number, scale: number, projectPsd: boolean, B: Float64Array): boolean;

  energy(x: Float64Array): number {
    let total = 0;
    for (let s = 0; s < this.count; s++) {
      const a = 3 * this.springs[2 * s];
      const b = 3 * this.springs[2 * s + 1];
      const dx = x[a] - x[b];
      const dy = x[a + 1] - x[b + 1];
      const dz = x[a + 2] - x[b + 2];
      total += this.springEnergy(s, dx * dx + dy * dy + dz * dz);
    }
    return total;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    for (let s = 0; s < this.count; s++) {
      const a = 3 * this.springs[2 * s];
      const b = 3 * this.springs[2 * s + 1];
      const dx = x[a] - x[b];
      const dy = x[a + 1] - x[b + 1];
      const dz = x[a + 2] - x[b + 2];
      const c = this.forceCoefficient(s, dx * dx + dy * dy + dz * dz, scale);
      g[a] += c * dx;
      g[a + 1] += c * dy;
      g[a + 2] += c * dz;
      g[b] -= c * dx;
      g[b + 1] -= c * dy;
      g[b + 2] -= c * dz;
    }
  }

  addPattern(builder: PatternBuilder): void {
    for (let s = 0; s < this.count; s++) builder.addClique(this.springs.subarray(2 * s, 2 * s + 2));
  }

  bindPattern(H: BsrMatrix): void {
    if (H.pattern.remapSlots(this.slotsPatternId, this.slots)) {
      this.slotsPatternId = H.pattern.id;
      return;
    }
    const nodes = this.pairNodes;
    for (let s = 0; s < this.count; s++) {
      nodes[0] = this.springs[2 * s];
      nodes[1] = this.springs[2 * s + 1];
      H.pattern.elementSlots(nodes, this.slots, 4 * s);
    }
    this.slotsPatternId = H.pattern.id;
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean): void {
    if (this.slotsPatternId !== H.pattern.id) this.bindPattern(H);
    const B = this.block;
    const v = H.values;
    for (let s = 0; s < this.count; s++) {
      const a = 3 * this.springs[2 * s];
      const b = 3 * this.springs[2 * s + 1];
      if (!this.fillBlock(s, x[a] - x[b], x[a + 1] - x[b + 1], x[a + 2] - x[b + 2], scale, projectPsd, B)) continue;
      // Element Hessian [[B, -B], [-B, B]]: slots (a, a), (a, b), (b, a), (b, b).
      const o = 4 * s;
      const sAA = 9 * this.slots[o];
      const sAB = 9 * this.slots[o + 1];
      const sBA = 9 * this.slots[o + 2];
      const sBB = 9 * this.slots[o + 3];
      for (let i = 0; i < 9; i++) {
        const bi = B[i];
        v[sAA + i] += bi;
        v[sBB + i] += bi;
        v[sAB + i] -= bi;
        v[sBA + i] -= bi;
      }
    }
  }
}
