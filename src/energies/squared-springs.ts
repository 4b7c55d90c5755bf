/**
 * Springs on the squared length: E = sum_s k_s/2 (|x_a - x_b|^2 - L_s^2)^2. Seed 001's "simple spring" (Eq. 7) is
 * one such spring with L = 1 from a fixed anchor at the origin; it is smooth everywhere (no division by the length)
 * but not convex: inside the sphere |d| < L it pulls inward less and less and is unstable across the spring.
 *
 * With d = x_a - x_b, l = |d|, c = 2 k (l^2 - L^2): gradient wrt x_a is c d (minus that for x_b), and the 3x3 block
 * d2E/dd2 = c I + 4 k d d^T, with eigenvalue c + 4 k l^2 = 2 k (3 l^2 - L^2) along d and c across it. The element
 * Hessian is [[B, -B], [-B, B]]; projection clamps both eigenvalues of B at zero.
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';

export class SquaredLengthSprings implements PotentialTerm {
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
    if (springs.length % 2 !== 0) throw new Error(`SquaredLengthSprings: springs has length ${springs.length}, not even`);
    this.count = springs.length / 2;
    if (stiffness.length !== this.count || restLength.length !== this.count)
      throw new Error(
        `SquaredLengthSprings: ${this.count} springs but ${stiffness.length} stiffnesses and ${restLength.length} rest lengths`,
      );
    for (let s = 0; s < this.count; s++) {
      if (!(stiffness[s] >= 0)) throw new Error(`SquaredLengthSprings: spring ${s} has stiffness ${stiffness[s]} (must be >= 0)`);
      if (!(restLength[s] >= 0)) throw new Error(`SquaredLengthSprings: spring ${s} has rest length ${restLength[s]} (must be >= 0)`);
      if (springs[2 * s] === springs[2 * s + 1]) throw new Error(`SquaredLengthSprings: spring ${s} joins node ${springs[2 * s]} to itself`);
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
      const q = dx * dx + dy * dy + dz * dz - L * L;
      total += 0.5 * this.stiffness[s] * q * q;
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
      const c = 2 * scale * this.stiffness[s] * (dx * dx + dy * dy + dz * dz - L * L);
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
      const dx = x[a] - x[b];
      const dy = x[a + 1] - x[b + 1];
      const dz = x[a + 2] - x[b + 2];
      const l2 = dx * dx + dy * dy + dz * dz;
      let across = 2 * k * (l2 - L * L);
      // Coefficient of d d^T: 4k exactly; after projection (clamped along - clamped across) / l^2.
      let ddt = 4 * k;
      if (projectPsd) {
        const along = Math.max(0, across + 4 * k * l2);
        across = Math.max(0, across);
        ddt = l2 > 0 ? (along - across) / l2 : 0;
      }
      B[0] = across + ddt * dx * dx;
      B[4] = across + ddt * dy * dy;
      B[8] = across + ddt * dz * dz;
      B[1] = B[3] = ddt * dx * dy;
      B[2] = B[6] = ddt * dx * dz;
      B[5] = B[7] = ddt * dy * dz;
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
