/**
 * Linear springs between node pairs: E = sum_s k_s/2 (|x_a - x_b| - L_s)^2, L_s >= 0.
 *
 * With d = x_a - x_b, l = |d|, n = d/l: gradient wrt x_a is k (1 - L/l) d (minus that for x_b), and the 3x3 block
 * d2E/dd2 = k n n^T + k (1 - L/l) (I - n n^T): stiffness k along the spring, k (1 - L/l) across it, which is
 * negative when the spring is compressed below its rest length. The 6x6 element Hessian is [[B, -B], [-B, B]],
 * PSD exactly when B is, so projection clamps the transverse value to zero. For L = 0 everything reduces to
 * E = k/2 |d|^2, gradient k d, block k I, with no division by l (a zero-length spring at l = 0 is smooth).
 */
import { SpringSet, isotropicPlusOuter } from './spring-set.js';

export class Springs extends SpringSet {
  constructor(springs: Uint32Array, stiffness: Float64Array, restLength: Float64Array) {
    super('Springs', springs, stiffness, restLength);
  }

  protected springEnergy(s: number, l2: number): number {
    const L = this.restLength[s];
    const stretch = L === 0 ? 0 : Math.sqrt(l2) - L;
    return 0.5 * this.stiffness[s] * (L === 0 ? l2 : stretch * stretch);
  }

  protected forceCoefficient(s: number, l2: number, scale: number): number {
    const L = this.restLength[s];
    const c = scale * this.stiffness[s];
    if (L === 0) return c;
    const l = Math.sqrt(l2);
    // At l = 0 a stretched-to-nothing spring has no defined direction: take the zero subgradient.
    return l > 0 ? c * (1 - L / l) : 0;
  }

  protected fillBlock(s: number, dx: number, dy: number, dz: number, scale: number, projectPsd: boolean, B: Float64Array): boolean {
    const k = scale * this.stiffness[s];
    const L = this.restLength[s];
    if (L === 0) {
      B.fill(0);
      B[0] = B[4] = B[8] = k;
      return true;
    }
    const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
    // No direction at l = 0 (and the exact Hessian is unbounded there): add nothing.
    if (!(l > 0)) return false;
    let transverse = k * (1 - L / l);
    if (projectPsd && transverse < 0) transverse = 0;
    const inv = 1 / l;
    const n0 = dx * inv;
    const n1 = dy * inv;
    const n2 = dz * inv;
    const along = k - transverse;
    isotropicPlusOuter(B, transverse, along, n0, n1, n2);
    return true;
  }
}
