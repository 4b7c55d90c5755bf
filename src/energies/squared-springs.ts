/**
 * Springs on the squared length: E = sum_s k_s/2 (|x_a - x_b|^2 - L_s^2)^2. Seed 001's "simple spring" (Eq. 7) is
 * one such spring with L = 1 from a fixed anchor at the origin; it is smooth everywhere (no division by the length)
 * but not convex: inside the sphere |d| < L it pulls inward less and less and is unstable across the spring.
 *
 * With d = x_a - x_b, l = |d|, c = 2 k (l^2 - L^2): gradient wrt x_a is c d (minus that for x_b), and the 3x3 block
 * d2E/dd2 = c I + 4 k d d^T, with eigenvalue c + 4 k l^2 = 2 k (3 l^2 - L^2) along d and c across it. The element
 * Hessian is [[B, -B], [-B, B]]; projection clamps both eigenvalues of B at zero.
 */
import { SpringSet, isotropicPlusOuter } from './spring-set.js';

export class SquaredLengthSprings extends SpringSet {
  constructor(springs: Uint32Array, stiffness: Float64Array, restLength: Float64Array) {
    super('SquaredLengthSprings', springs, stiffness, restLength);
  }

  protected springEnergy(s: number, l2: number): number {
    const L = this.restLength[s];
    const q = l2 - L * L;
    return 0.5 * this.stiffness[s] * q * q;
  }

  protected forceCoefficient(s: number, l2: number, scale: number): number {
    const L = this.restLength[s];
    return 2 * scale * this.stiffness[s] * (l2 - L * L);
  }

  protected fillBlock(s: number, dx: number, dy: number, dz: number, scale: number, projectPsd: boolean, B: Float64Array): boolean {
    const k = scale * this.stiffness[s];
    const L = this.restLength[s];
    const l2 = dx * dx + dy * dy + dz * dz;
    let across = 2 * k * (l2 - L * L);
    // Coefficient of d d^T: 4k exactly; after projection (clamped along - clamped across) / l^2.
    let ddt = 4 * k;
    if (projectPsd) {
      const along = Math.max(0, across + 4 * k * l2);
      across = Math.max(0, across);
      ddt = l2 > 0 ? (along - across) / l2 : 0;
    }
    isotropicPlusOuter(B, across, ddt, dx, dy, dz);
    return true;
  }
}
