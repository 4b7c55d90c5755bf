/**
 * 1D bar elements between node pairs (the segments of a `chain` body): segment k is a prism of rest length L and
 * cross-section A whose material is stretched along the segment, s = l / L with l = |x_a - x_b|, while its lateral
 * stretches stay 1 (F = diag(s, 1, 1) in the segment's frame). It stores
 *     E_k(l) = A L psi(diag(s, 1, 1)),
 * the energy a 3D body of the same material (a block with its sides held, y and z locked) stores when each of its
 * cross-sections moves as one: then the displacement is linear along x within each cell, every tet of the cell has
 * F = diag(s, 1, 1) and the cell's tets together have volume A L. So a chain is that block with its cross-sections
 * tied: no cross-section can warp.
 *
 * Neo-Hookean (psi = mu/2 (I_C - 3) - mu ln J + lambda/2 (ln J)^2) at F = diag(s, 1, 1) has I_C = s^2 + 2 and
 * J = s, so psi = mu/2 (s^2 - 1) - mu ln s + lambda/2 (ln s)^2. With Poisson ratio 0 (lambda = 0, mu = E / 2):
 *     E_k = A L (mu/2) (s^2 - 1 - 2 ln s),
 * dE/dl = A mu (s - 1/s) and d2E/dl2 = (A / L) mu (1 + 1/s^2) > 0 (convex in l for every s > 0); near s = 1 the
 * segment is a spring of stiffness 2 mu A / L = E A / L, infinite energy as l -> 0.
 *
 * The material's own psi, P = dpsi/dF and dP/dF give psi, dpsi/ds = P_11 and d2psi/ds2 = dP_11/dF_11 at
 * diag(s, 1, 1), so every material model works and agrees with the tets. The 3x3 block d2E/dd2 (d = x_a - x_b,
 * n = d / l) is E''(l) n n^T along the segment and E'(l) / l (I - n n^T) across it; across is negative in
 * compression (as for a Hookean spring), so projection clamps it, and E'' too where a material is not convex in s.
 */
import { INVERSION_STEP_FRACTION } from './elastic-tets.js';
import type { Material } from './materials.js';
import { SpringSet, isotropicPlusOuter } from './spring-set.js';

export class BarSegments extends SpringSet {
  override readonly name = 'elastic';
  // Scratch: F = diag(s, 1, 1), P and dP/dF (no allocation in the loops).
  private readonly F = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  private readonly P = new Float64Array(9);
  private readonly dPdF = new Float64Array(81);

  /**
   * `segments` holds node pairs; `area` the cross-section A (m^2) and `restLength` L (m, > 0) of each. SpringSet's
   * per-spring coefficient (`stiffness`) holds A.
   */
  constructor(
    segments: Uint32Array,
    area: Float64Array,
    restLength: Float64Array,
    readonly material: Material,
  ) {
    super('BarSegments', segments, area, restLength);
    for (let k = 0; k < this.count; k++) {
      if (!(area[k] > 0)) throw new Error(`BarSegments: segment ${k} has cross-section area ${area[k]} (must be > 0)`);
      if (!(restLength[k] > 0)) throw new Error(`BarSegments: segment ${k} has rest length ${restLength[k]} (must be > 0)`);
    }
  }

  /** psi(diag(s, 1, 1)). */
  private density(s: number): number {
    this.F[0] = s;
    return this.material.energyDensity(this.F);
  }

  /** dpsi/ds at diag(s, 1, 1). */
  private stress(s: number): number {
    this.F[0] = s;
    this.material.firstPiola(this.F, this.P);
    return this.P[0];
  }

  /** d2psi/ds2 at diag(s, 1, 1). */
  private stiffnessAlong(s: number): number {
    this.F[0] = s;
    this.material.stressDerivative(this.F, this.dPdF);
    return this.dPdF[0];
  }

  protected springEnergy(k: number, l2: number): number {
    const L = this.restLength[k];
    return this.stiffness[k] * L * this.density(Math.sqrt(l2) / L);
  }

  protected forceCoefficient(k: number, l2: number, scale: number): number {
    const l = Math.sqrt(l2);
    // No direction at l = 0 (where a log-J material's energy is infinite anyway): the zero subgradient.
    if (!(l > 0)) return 0;
    return (scale * this.stiffness[k] * this.stress(l / this.restLength[k])) / l;
  }

  protected fillBlock(k: number, dx: number, dy: number, dz: number, scale: number, projectPsd: boolean, B: Float64Array): boolean {
    const l = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (!(l > 0)) return false;
    const A = scale * this.stiffness[k];
    const L = this.restLength[k];
    const s = l / L;
    let along = (A / L) * this.stiffnessAlong(s);
    let across = (A * this.stress(s)) / l;
    if (projectPsd) {
      along = Math.max(0, along);
      across = Math.max(0, across);
    }
    const inv = 1 / l;
    isotropicPlusOuter(B, across, along - across, dx * inv, dy * inv, dz * inv);
    return true;
  }

  /**
   * For a material with a log J barrier (infinite energy at s = 0): the line search may go INVERSION_STEP_FRACTION
   * of the way to the first point where some segment's direction turns by 90 degrees, d(t) . d(0) = 0. Along a line
   * (the 1D study) that is exactly where the segment would shrink to zero length and its nodes pass each other, the
   * tets' inversion; in 3D it also keeps a segment from swinging through zero length in one step.
   */
  maxStep(x: Float64Array, dx: Float64Array): number {
    if (!this.material.blocksInversion) return 1;
    let first = 1 / INVERSION_STEP_FRACTION;
    for (let k = 0; k < this.count; k++) {
      const a = 3 * this.springs[2 * k];
      const b = 3 * this.springs[2 * k + 1];
      const d0 = x[a] - x[b];
      const d1 = x[a + 1] - x[b + 1];
      const d2 = x[a + 2] - x[b + 2];
      const along = d0 * (dx[a] - dx[b]) + d1 * (dx[a + 1] - dx[b + 1]) + d2 * (dx[a + 2] - dx[b + 2]);
      if (along < 0) first = Math.min(first, (d0 * d0 + d1 * d1 + d2 * d2) / -along);
    }
    return Math.min(1, INVERSION_STEP_FRACTION * first);
  }
}
