import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';

/**
 * Uniform gravity: P = -sum_i m_i g . x_i, zero at the origin, so with g = (0, -9.8, 0) the potential is m g y and
 * the level y = 0 (the ground in built-in scenes) is the zero of potential energy. Affine in x: no Hessian.
 */
export class Gravity implements PotentialTerm {
  readonly name = 'gravity';
  readonly isLinear = true;

  /**
   * mass: first moment per DOF (Model.linearMass: the lumped mass of a node, m on an affine body's translation, 0 on
   * its matrix columns); constrained DOFs may carry mass (their gradient is discarded by the solver).
   */
  constructor(
    private readonly mass: Float64Array,
    private readonly g: readonly [number, number, number],
  ) {}

  energy(x: Float64Array): number {
    return this.energyOfNodes(x, 0, x.length / 3);
  }

  /** The share of nodes first .. first + count - 1 (one body's, for per-body reports). */
  energyOfNodes(x: Float64Array, first: number, count: number): number {
    const [gx, gy, gz] = this.g;
    const m = this.mass;
    let e = 0;
    for (let d = 3 * first; d < 3 * (first + count); d += 3) e -= m[d] * (gx * x[d] + gy * x[d + 1] + gz * x[d + 2]);
    return e;
  }

  addGradient(_x: Float64Array, scale: number, grad: Float64Array): void {
    const [gx, gy, gz] = this.g;
    const m = this.mass;
    for (let d = 0; d < grad.length; d += 3) {
      grad[d] -= scale * m[d] * gx;
      grad[d + 1] -= scale * m[d + 1] * gy;
      grad[d + 2] -= scale * m[d + 2] * gz;
    }
  }

  addHessian(_x: Float64Array, _scale: number, _H: BsrMatrix, _projectPsd: boolean): void {}

  addPattern(_builder: PatternBuilder): void {}
}
