/**
 * Linear springs between node pairs: E = sum_s k_s/2 (|x_a - x_b| - L_s)^2, L_s >= 0.
 *
 * With d = x_a - x_b, l = |d|, n = d/l: gradient wrt x_a is k (1 - L/l) d (minus that for x_b), and the 3x3 block
 * d2E/dd2 = k n n^T + k (1 - L/l) (I - n n^T): stiffness k along the spring, k (1 - L/l) across it, which is
 * negative when the spring is compressed below its rest length. The 6x6 element Hessian is [[B, -B], [-B, B]],
 * PSD exactly when B is, so projection clamps the transverse value to zero. For L = 0 everything reduces to
 * E = k/2 |d|^2, gradient k d, block k I, with no division by l (a zero-length spring at l = 0 is smooth).
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';

export class Springs implements PotentialTerm {
  readonly name = 'spring';
  readonly count: number;
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly pairNodes = new Uint32Array(2);
  private readonly B = new Float64Array(9);

  constructor(
    readonly springs: Uint32Array,
    readonly stiffness: Float64Array,
    readonly restLength: Float64Array,
  ) {
    if (springs.length % 2 !== 0) throw new Error(`Springs: springs has length ${springs.length}, not even`);
    this.count = springs.length / 2;
    if (stiffness.length !== this.count || restLength.length !== this.count)
      throw new Error(
        `Springs: ${this.count} springs but ${stiffness.length} stiffnesses and ${restLength.length} rest lengths`,
      );
    for (let s = 0; s < this.count; s++) {
      if (!(stiffness[s] >= 0)) throw new Error(`Springs: spring ${s} has stiffness ${stiffness[s]} (must be >= 0)`);
      if (!(restLength[s] >= 0))
        throw new Error(`Springs: spring ${s} has rest length ${restLength[s]} (must be >= 0)`);
      if (springs[2 * s] === springs[2 * s + 1])
        throw new Error(`Springs: spring ${s} joins node ${springs[2 * s]} to itself`);
    }
    this.slots = new Int32Array(4 * this.count);
  }

  energy(x: Float64Array): number {
    let total = 0;
    for (let s = 0; s < this.count; s++) {
      const a = 3 * this.springs[2 * s];
      const b = 3 * this.springs[2 * s + 1];
      const dx = x[a] - x[b];
      const dy = x[a + 1] - x[b + 1];
      const dz = x[a + 2] - x[b + 2];
      const L = this.restLength[s];
      const l2 = dx * dx + dy * dy + dz * dz;
      const stretch = L === 0 ? 0 : Math.sqrt(l2) - L;
      total += 0.5 * this.stiffness[s] * (L === 0 ? l2 : stretch * stretch);
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
      const L = this.restLength[s];
      let c = scale * this.stiffness[s];
      if (L !== 0) {
        const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
        // At l = 0 a stretched-to-nothing spring has no defined direction: take the zero subgradient.
        c = l > 0 ? c * (1 - L / l) : 0;
      }
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
    const B = this.B;
    const v = H.values;
    for (let s = 0; s < this.count; s++) {
      const a = 3 * this.springs[2 * s];
      const b = 3 * this.springs[2 * s + 1];
      const k = scale * this.stiffness[s];
      const L = this.restLength[s];
      if (L === 0) {
        B.fill(0);
        B[0] = B[4] = B[8] = k;
      } else {
        const dx = x[a] - x[b];
        const dy = x[a + 1] - x[b + 1];
        const dz = x[a + 2] - x[b + 2];
        const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
        if (!(l > 0)) {
          // No direction at l = 0 (and the exact Hessian is unbounded there): add nothing.
          continue;
        }
        let transverse = k * (1 - L / l);
        if (projectPsd && transverse < 0) transverse = 0;
        const inv = 1 / l;
        const n0 = dx * inv;
        const n1 = dy * inv;
        const n2 = dz * inv;
        const along = k - transverse;
        B[0] = transverse + along * n0 * n0;
        B[4] = transverse + along * n1 * n1;
        B[8] = transverse + along * n2 * n2;
        B[1] = B[3] = along * n0 * n1;
        B[2] = B[6] = along * n0 * n2;
        B[5] = B[7] = along * n1 * n2;
      }
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
