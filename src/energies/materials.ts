/**
 * Hyperelastic materials: energy density psi(F) per unit rest volume, first Piola stress P = dpsi/dF and its
 * derivative dP/dF, exact or projected onto the PSD cone.
 *
 * Layouts: F and P are 3x3 row-major (F[3 * i + j] = F_ij); dP/dF is 9x9 row-major with
 * out[9 * (3i + j) + (3k + l)] = dP_ij / dF_kl.
 *
 * Hessians also come as an eigensystem in the principal frame of F (Teran et al. 2005; Smith et al. 2019). For an
 * isotropic psi and the SVD F = U diag(s) V^T, with u_i, v_i the columns of U, V and psi_i = dpsi/ds_i:
 * - the three "scaling" directions D_i = u_i v_i^T are coupled by the 3x3 matrix d2psi/ds_i ds_j (the `block`);
 * - per pair (i, j) the "flip" direction (u_i v_j^T + u_j v_i^T)/sqrt2 is an eigenvector with eigenvalue
 *   (psi_i - psi_j)/(s_i - s_j), and the "twist" direction (u_i v_j^T - u_j v_i^T)/sqrt2 one with eigenvalue
 *   (psi_i + psi_j)/(s_i + s_j).
 * These nine directions are orthonormal, so dP/dF = sum_ij block_ij vec(D_i) vec(D_j)^T + sum_pairs (flip, twist
 * rank-ones), and projecting block (a 3x3 eigenproblem, skipped when it is already positive definite) and
 * clamping the six pair values is the exact PSD projection of dP/dF. The absolute-value filter (eigenvalue-filter.ts)
 * works the same way: |block| and the pair values' magnitudes are |dP/dF|. Each material writes the two quotients in a
 * form simplified by hand, so repeated singular values (s_i = s_j) cost no division by zero. The element loop
 * (ElasticTets) turns the eigensystem into the 12x12 stiffness with a few rank-one updates and never forms the
 * 9x9 matrix. The linear material fits the same form with U = V = I. Neo-Hookean also has the stiffness in closed
 * form (nodeStiffness), without the SVD: the element loop takes it wherever the filter would change nothing (every
 * exact Hessian, and projected ones of tets it can prove semi-definite): about half of the tet Hessians of a run.
 */
import { svd3, type Svd3Factors } from '../math/svd3.js';
import { projectPsdInPlace, psdScratchLength } from '../math/eigen-sym.js';
import { cofactor3, det3, frobeniusSquared } from '../math/small.js';
import { signedSingularValueSum } from '../math/singular-value-sum.js';
import { filterEigenvalue, type EigenvalueFilter } from './eigenvalue-filter.js';

const SQRT1_2 = Math.SQRT1_2;

export type MaterialModel = 'corotated' | 'neo-hookean' | 'stable-neo-hookean' | 'stvk' | 'linear';

export const MATERIAL_MODELS: readonly MaterialModel[] = [
  'corotated',
  'neo-hookean',
  'stable-neo-hookean',
  'stvk',
  'linear',
];

export interface ElasticModuli {
  /** Young's modulus E (Pa). */
  youngsModulus: number;
  /** Poisson's ratio nu, in (-1, 0.5). */
  poissonRatio: number;
}

/** mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)). */
export function lameParameters(E: number, nu: number): { mu: number; lambda: number } {
  if (!(E > 0) || !Number.isFinite(E)) throw new Error(`lameParameters: Young's modulus must be > 0, got ${E}`);
  if (!(nu > -1 && nu < 0.5)) throw new Error(`lameParameters: Poisson's ratio must lie in (-1, 0.5), got ${nu}`);
  return { mu: E / (2 * (1 + nu)), lambda: (E * nu) / ((1 + nu) * (1 - 2 * nu)) };
}

export interface Material {
  readonly model: MaterialModel;
  /** Lame parameters of the small-strain limit (what E and nu describe). */
  readonly mu: number;
  readonly lambda: number;
  /** True when psi = +Infinity for det F <= 0 (a log J barrier): the line search must filter inversions. */
  readonly blocksInversion: boolean;
  /**
   * True when firstPiola decomposes F (the corotated rotation), not only the Hessian: the element loop then keeps
   * each tet's SVD, so that the gradient and the Hessian at the same F share one decomposition.
   */
  readonly stressUsesSvd: boolean;
  /** psi(F): a function of F alone, never an SVD the caller holds (the line search's trial points need no SVD). */
  energyDensity(F: ArrayLike<number>): number;
  /**
   * The optional `svd` argument of this and the methods below is svd3(F), already computed by the caller; it is
   * used instead of decomposing F again (the results are the same to the bit).
   */
  firstPiola(F: ArrayLike<number>, P: Float64Array, svd?: Svd3Factors): void;
  /** Exact dP/dF (9x9). */
  stressDerivative(F: ArrayLike<number>, out: Float64Array): void;
  /** dP/dF with negative eigenvalues clamped to zero, or (filter 'abs') replaced by their absolute value (9x9). */
  projectedStressDerivative(F: ArrayLike<number>, out: Float64Array, filter?: EigenvalueFilter): void;
  /**
   * dP/dF in the principal frame (see the module comment): writes es.U, es.V, es.block and es.pairs. With a
   * filter (not false), the block's and the pair values' negative eigenvalues are clamped to 0 ('clamp') or
   * replaced by their absolute value ('abs').
   */
  hessianEigensystem(F: ArrayLike<number>, project: false | EigenvalueFilter, es: HessianEigensystem, svd?: Svd3Factors): void;
  /**
   * Optional shortcut past the eigensystem: the stiffness of a tet's nodes 1-3 per unit rest volume (9x9, entry
   * (3k + r, 3l + s) couples node k+1 coordinate r with node l+1 coordinate s; `D` holds Dm^{-1} row-major at
   * `dOffset`) in closed form, without an SVD. Returns false, writing nothing, when it cannot tell cheaply that
   * `project` would leave dP/dF unchanged (an indefinite dP/dF, or one it cannot prove semi-definite); the caller
   * then builds the stiffness from hessianEigensystem. Where it returns true the result equals that route's up to
   * round-off.
   */
  nodeStiffness?(F: ArrayLike<number>, D: Float64Array, dOffset: number, project: false | EigenvalueFilter, K: Float64Array, ko: number): boolean;
}

/** Output of Material.hessianEigensystem; allocate once per caller and reuse. */
export class HessianEigensystem {
  /** Rotations of the principal frame (row-major; columns u_i, v_i). */
  readonly U = new Float64Array(9);
  readonly V = new Float64Array(9);
  /** Signed singular values (isotropic materials; 1, 1, 1 for the linear one). */
  readonly sigma = new Float64Array(3);
  /** Symmetric 3x3 (row-major) coupling of the scaling directions u_i v_i^T. */
  readonly block = new Float64Array(9);
  /** Eigenvalues of the flip directions of pairs (0,1), (0,2), (1,2), then of the twist directions. */
  readonly pairs = new Float64Array(6);
  private readonly psdScratch = new Float64Array(psdScratchLength(3));

  /** Applies a filter to the exact eigensystem: to each pair value, and to the block's eigenvalues. */
  applyFilter(filter: EigenvalueFilter): void {
    const pairs = this.pairs;
    for (let k = 0; k < 6; k++) pairs[k] = filterEigenvalue(pairs[k], filter);
    projectPsdInPlace(this.block, 3, this.psdScratch, filter === 'abs');
  }
}

/** Pair (i, j) of index k in HessianEigensystem.pairs (k mod 3). */
const PAIR_I = [0, 0, 1];
const PAIR_J = [1, 2, 2];

const denseDirections = new Float64Array(27);
const denseDirection = new Float64Array(9);

/** Builds the dense 9x9 dP/dF from an eigensystem (tests, and the isotropic materials' stressDerivative). */
export function denseFromEigensystem(es: HessianEigensystem, out: Float64Array): void {
  const { U, V, block, pairs } = es;
  out.fill(0, 0, 81);
  const d = denseDirections;
  for (let i = 0; i < 3; i++)
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) d[9 * i + 3 * r + c] = U[3 * r + i] * V[3 * c + i];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      const b = block[3 * i + j];
      for (let p = 0; p < 9; p++) for (let q = 0; q < 9; q++) out[9 * p + q] += b * d[9 * i + p] * d[9 * j + q];
    }
  const m = denseDirection;
  for (let k = 0; k < 6; k++) {
    const i = PAIR_I[k % 3];
    const j = PAIR_J[k % 3];
    const sign = k < 3 ? 1 : -1;
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++)
        m[3 * r + c] = SQRT1_2 * (U[3 * r + i] * V[3 * c + j] + sign * U[3 * r + j] * V[3 * c + i]);
    for (let p = 0; p < 9; p++) for (let q = 0; q < 9; q++) out[9 * p + q] += pairs[k] * m[p] * m[q];
  }
}

/**
 * Shared machinery of the isotropic materials: SVD, the closed-form eigenbasis, and dense Hessians from it.
 * Subclasses supply the derivatives of psi in terms of the signed singular values.
 */
abstract class IsotropicMaterial implements Material {
  abstract readonly model: MaterialModel;
  abstract readonly blocksInversion: boolean;
  readonly stressUsesSvd: boolean = false;

  /** [0..9) d2psi/ds2 (3x3), [9..12) flip values of pairs 01, 02, 12, [12..15) twist values of the same pairs. */
  protected readonly principal = new Float64Array(15);
  // Scratch, so no call allocates.
  protected readonly U = new Float64Array(9);
  protected readonly V = new Float64Array(9);
  protected readonly sigma = new Float64Array(3);
  private readonly denseSystem = new HessianEigensystem();

  constructor(
    readonly mu: number,
    readonly lambda: number,
  ) {}

  abstract energyDensity(F: ArrayLike<number>): number;
  abstract firstPiola(F: ArrayLike<number>, P: Float64Array): void;

  /**
   * Fills this.principal for the singular values s0 >= s1 >= |s2| (s2 signed) and J = s0 s1 s2: the Hessian of
   * psi(s) and the flip (psi_i - psi_j)/(s_i - s_j) and twist (psi_i + psi_j)/(s_i + s_j) quotients, in forms
   * without a vanishing denominator at s_i = s_j.
   */
  protected abstract principalHessian(s0: number, s1: number, s2: number, J: number): void;

  hessianEigensystem(F: ArrayLike<number>, project: false | EigenvalueFilter, es: HessianEigensystem, svd?: Svd3Factors): void {
    const s = es.sigma;
    if (!svd) svd3(F, es.U, s, es.V);
    else if (svd.U !== es.U) {
      es.U.set(svd.U);
      s.set(svd.sigma);
      es.V.set(svd.V);
    }
    this.principalHessian(s[0], s[1], s[2], s[0] * s[1] * s[2]);
    const h = this.principal;
    const block = es.block;
    for (let k = 0; k < 9; k++) block[k] = h[k];
    const pairs = es.pairs;
    for (let k = 0; k < 6; k++) pairs[k] = h[9 + k];
    if (project) es.applyFilter(project);
  }

  stressDerivative(F: ArrayLike<number>, out: Float64Array): void {
    this.hessianEigensystem(F, false, this.denseSystem);
    denseFromEigensystem(this.denseSystem, out);
  }

  projectedStressDerivative(F: ArrayLike<number>, out: Float64Array, filter: EigenvalueFilter = 'clamp'): void {
    this.hessianEigensystem(F, filter, this.denseSystem);
    denseFromEigensystem(this.denseSystem, out);
  }
}

/** Levi-Civita symbol of (a, b, c) in {0,1,2}. */
function levi(a: number, b: number, c: number): number {
  return ((a - b) * (b - c) * (c - a)) / 2;
}

/** Adds scale * d2J/dF2 to out (9x9): d2J/dF_ij dF_kl = sum_mn eps_ikm eps_jln F_mn. */
function addDeterminantHessian(F: ArrayLike<number>, scale: number, out: Float64Array): void {
  for (let i = 0; i < 3; i++) {
    for (let k = 0; k < 3; k++) {
      if (i === k) continue;
      const m = 3 - i - k;
      const eik = levi(i, k, m);
      for (let j = 0; j < 3; j++) {
        for (let l = 0; l < 3; l++) {
          if (j === l) continue;
          const n = 3 - j - l;
          out[9 * (3 * i + j) + 3 * k + l] += scale * eik * levi(j, l, n) * F[3 * m + n];
        }
      }
    }
  }
}

/**
 * Fixed corotated (Stomakhin et al. 2012): psi = mu |F - R|^2 + lambda/2 (J - 1)^2 with R the rotation of the
 * polar decomposition. With the rotation-variant SVD, |F - R|^2 = sum (s_i - 1)^2 (s_3 signed).
 */
export class CorotatedMaterial extends IsotropicMaterial {
  readonly model = 'corotated' as const;
  readonly blocksInversion = false;
  override readonly stressUsesSvd = true;
  private readonly cof = new Float64Array(9);

  /**
   * sum (s_i - 1)^2 = |F|^2 - 2 (s_1 + s_2 + s_3), plus 3, with the sum of the signed singular values from F's
   * invariants (signedSingularValueSum): about a third of an SVD's cost, which matters because the line search and
   * Newton's start candidates evaluate the energy at points whose gradient is never needed. Where that sum is
   * ill-conditioned (an element inverted through flat) the SVD gives the singular values instead.
   */
  energyDensity(F: ArrayLike<number>): number {
    const J = det3(F);
    const volumeTerm = 0.5 * this.lambda * (J - 1) * (J - 1);
    const sum = signedSingularValueSum(F);
    if (!Number.isNaN(sum)) return this.mu * (frobeniusSquared(F) - 2 * sum + 3) + volumeTerm;
    const s = this.sigma;
    svd3(F, this.U, s, this.V);
    const d0 = s[0] - 1;
    const d1 = s[1] - 1;
    const d2 = s[2] - 1;
    return this.mu * (d0 * d0 + d1 * d1 + d2 * d2) + volumeTerm;
  }

  /** P = 2 mu (F - R) + lambda (J - 1) cof(F). */
  firstPiola(F: ArrayLike<number>, P: Float64Array, svd?: Svd3Factors): void {
    let U: ArrayLike<number> = this.U;
    let V: ArrayLike<number> = this.V;
    if (svd) {
      U = svd.U;
      V = svd.V;
    } else svd3(F, this.U, this.sigma, this.V);
    cofactor3(F, this.cof);
    const J = det3(F);
    const twoMu = 2 * this.mu;
    const c = this.lambda * (J - 1);
    for (let r = 0; r < 3; r++) {
      for (let col = 0; col < 3; col++) {
        const R = U[3 * r] * V[3 * col] + U[3 * r + 1] * V[3 * col + 1] + U[3 * r + 2] * V[3 * col + 2];
        P[3 * r + col] = twoMu * (F[3 * r + col] - R) + c * this.cof[3 * r + col];
      }
    }
  }

  protected principalHessian(s0: number, s1: number, s2: number, J: number): void {
    // psi_i = 2 mu (s_i - 1) + lambda (J - 1) s_j s_k.
    const h = this.principal;
    const mu = this.mu;
    const lam = this.lambda;
    const twoMu = 2 * mu;
    h[0] = twoMu + lam * s1 * s1 * s2 * s2;
    h[4] = twoMu + lam * s0 * s0 * s2 * s2;
    h[8] = twoMu + lam * s0 * s0 * s1 * s1;
    h[1] = h[3] = lam * s2 * (2 * J - 1);
    h[2] = h[6] = lam * s1 * (2 * J - 1);
    h[5] = h[7] = lam * s0 * (2 * J - 1);
    const g = lam * (J - 1);
    // flip_ij = 2 mu - lambda (J - 1) s_k; twist_ij = 2 mu + lambda (J - 1) s_k - 4 mu / (s_i + s_j).
    // s_i + s_j >= 0 always; it reaches 0 only for an inverted element with s_2 = -s_1, where R itself jumps and
    // the exact Hessian is unbounded: the guard keeps it finite (and strongly negative, so projection drops it).
    h[9] = twoMu - g * s2;
    h[10] = twoMu - g * s1;
    h[11] = twoMu - g * s0;
    h[12] = twoMu + g * s2 - (4 * mu) / Math.max(s0 + s1, 1e-8);
    h[13] = twoMu + g * s1 - (4 * mu) / Math.max(s0 + s2, 1e-8);
    h[14] = twoMu + g * s0 - (4 * mu) / Math.max(s1 + s2, 1e-8);
  }
}

/**
 * Neo-Hookean as used by IPC (Li et al. 2020): psi = mu/2 (tr F^T F - 3) - mu ln J + lambda/2 (ln J)^2,
 * +Infinity for J <= 0, so inversion-free simulation needs the line-search filter (ElasticTets.maxStep).
 */
export class NeoHookeanMaterial extends IsotropicMaterial {
  readonly model = 'neo-hookean' as const;
  readonly blocksInversion = true;
  private readonly cof = new Float64Array(9);
  /** nodeStiffness' scratch: A = F^{-T} Dm^{-T}, row-major. */
  private readonly nodeFrame = new Float64Array(9);

  energyDensity(F: ArrayLike<number>): number {
    const J = det3(F);
    if (!(J > 0)) return Infinity;
    let Ic = 0;
    for (let i = 0; i < 9; i++) Ic += F[i] * F[i];
    const lnJ = Math.log(J);
    return 0.5 * this.mu * (Ic - 3) - this.mu * lnJ + 0.5 * this.lambda * lnJ * lnJ;
  }

  /** P = mu F + (lambda ln J - mu) F^{-T}. NaN for J <= 0 (the energy is infinite there). */
  firstPiola(F: ArrayLike<number>, P: Float64Array): void {
    const cof = cofactor3(F, this.cof);
    const J = F[0] * cof[0] + F[1] * cof[1] + F[2] * cof[2];
    const c = (this.lambda * Math.log(J) - this.mu) / J;
    for (let i = 0; i < 9; i++) P[i] = this.mu * F[i] + c * cof[i];
  }

  /**
   * Closed form from the invariants (independent of the SVD path, which the tests compare it with):
   * dP_ij/dF_kl = mu d_ik d_jl + lambda G_ij G_kl - (lambda ln J - mu) G_il G_kj, G = F^{-T}.
   */
  override stressDerivative(F: ArrayLike<number>, out: Float64Array): void {
    const G = cofactor3(F, this.cof);
    const J = F[0] * G[0] + F[1] * G[1] + F[2] * G[2];
    for (let i = 0; i < 9; i++) G[i] /= J;
    const lam = this.lambda;
    const c = lam * Math.log(J) - this.mu;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        for (let k = 0; k < 3; k++)
          for (let l = 0; l < 3; l++)
            out[9 * (3 * i + j) + 3 * k + l] =
              (i === k && j === l ? this.mu : 0) + lam * G[3 * i + j] * G[3 * k + l] - c * G[3 * i + l] * G[3 * k + j];
  }

  /**
   * With G = F^{-T}, c = lambda ln J - mu and A = G Dm^{-T} (A_rk = sum_j G_rj (Dm^{-1})_kj), the closed form of
   * stressDerivative mapped to the nodes is K(3k + r, 3l + s) = mu delta_rs (Dm^{-1} Dm^{-T})_kl + lambda A_rk A_sl
   * - c A_rl A_sk: about a tenth of the arithmetic of the eigensystem route, and no SVD.
   *
   * The eigenvalues (principalHessian) are all >= 0, so any filter leaves dP/dF as it is, when
   * - every pair value mu -+ c / (s_i s_j) is: s_i s_j >= |c| / mu for the smallest product s1 s2 = J / s0;
   * - the scaling block mu I - c diag(1 / s_i^2) + lambda w w^T (w_i = 1 / s_i) is, which holds when
   *   mu - c / s_i^2 >= 0 for every i: always for c <= 0, else s_min^2 >= c / mu with s_min = J / (s0 s1) >= J / s0^2.
   * Both need only an upper bound on s0^2 = lambda_max(F^T F): Gershgorin's largest absolute row sum of F^T F,
   * tight near a rotation. So the test passes for stretched tets and fails for compressed ones, whose twist values
   * mu + c / (s_i s_j) go negative (c < -mu when J < 1); those take the eigensystem route and its projection.
   */
  nodeStiffness(F: ArrayLike<number>, D: Float64Array, o: number, project: false | EigenvalueFilter, K: Float64Array, ko: number): boolean {
    const cof = cofactor3(F, this.cof);
    const J = F[0] * cof[0] + F[1] * cof[1] + F[2] * cof[2];
    const mu = this.mu;
    const lam = this.lambda;
    const c = lam * Math.log(J) - mu;
    if (project) {
      const c00 = F[0] * F[0] + F[3] * F[3] + F[6] * F[6];
      const c11 = F[1] * F[1] + F[4] * F[4] + F[7] * F[7];
      const c22 = F[2] * F[2] + F[5] * F[5] + F[8] * F[8];
      const c01 = Math.abs(F[0] * F[1] + F[3] * F[4] + F[6] * F[7]);
      const c02 = Math.abs(F[0] * F[2] + F[3] * F[5] + F[6] * F[8]);
      const c12 = Math.abs(F[1] * F[2] + F[4] * F[5] + F[7] * F[8]);
      const s0Squared = Math.max(c00 + c01 + c02, c11 + c01 + c12, c22 + c02 + c12);
      const ratio = Math.abs(c) / mu;
      if (!((J * J) / s0Squared >= ratio * ratio)) return false;
      if (c > 0) {
        const sMin = J / s0Squared;
        if (!(sMin * sMin >= c / mu)) return false;
      }
    }
    const A = this.nodeFrame;
    const invJ = 1 / J;
    for (let k = 0; k < 3; k++) {
      const d0 = D[o + 3 * k];
      const d1 = D[o + 3 * k + 1];
      const d2 = D[o + 3 * k + 2];
      A[k] = invJ * (cof[0] * d0 + cof[1] * d1 + cof[2] * d2);
      A[3 + k] = invJ * (cof[3] * d0 + cof[4] * d1 + cof[5] * d2);
      A[6 + k] = invJ * (cof[6] * d0 + cof[7] * d1 + cof[8] * d2);
    }
    for (let k = 0; k < 3; k++) {
      for (let l = 0; l < 3; l++) {
        const m = mu * (D[o + 3 * k] * D[o + 3 * l] + D[o + 3 * k + 1] * D[o + 3 * l + 1] + D[o + 3 * k + 2] * D[o + 3 * l + 2]);
        const a0k = lam * A[k];
        const a1k = lam * A[3 + k];
        const a2k = lam * A[6 + k];
        const b0k = c * A[k];
        const b1k = c * A[3 + k];
        const b2k = c * A[6 + k];
        const a0l = A[l];
        const a1l = A[3 + l];
        const a2l = A[6 + l];
        const row = ko + 27 * k + 3 * l; // entry (3k + r, 3l + s) at row + 9 r + s
        K[row] = m + a0k * a0l - b0k * a0l;
        K[row + 1] = a0k * a1l - b1k * a0l;
        K[row + 2] = a0k * a2l - b2k * a0l;
        K[row + 9] = a1k * a0l - b0k * a1l;
        K[row + 10] = m + a1k * a1l - b1k * a1l;
        K[row + 11] = a1k * a2l - b2k * a1l;
        K[row + 18] = a2k * a0l - b0k * a2l;
        K[row + 19] = a2k * a1l - b1k * a2l;
        K[row + 20] = m + a2k * a2l - b2k * a2l;
      }
    }
    return true;
  }

  protected principalHessian(s0: number, s1: number, s2: number, J: number): void {
    // psi_i = mu s_i + (lambda ln J - mu) / s_i.
    const h = this.principal;
    const mu = this.mu;
    const lam = this.lambda;
    const lnJ = Math.log(J);
    const c = lam * lnJ - mu;
    const d = mu + lam * (1 - lnJ);
    h[0] = mu + d / (s0 * s0);
    h[4] = mu + d / (s1 * s1);
    h[8] = mu + d / (s2 * s2);
    h[1] = h[3] = lam / (s0 * s1);
    h[2] = h[6] = lam / (s0 * s2);
    h[5] = h[7] = lam / (s1 * s2);
    // flip_ij = mu - c / (s_i s_j); twist_ij = mu + c / (s_i s_j).
    const c01 = c / (s0 * s1);
    const c02 = c / (s0 * s2);
    const c12 = c / (s1 * s2);
    h[9] = mu - c01;
    h[10] = mu - c02;
    h[11] = mu - c12;
    h[12] = mu + c01;
    h[13] = mu + c02;
    h[14] = mu + c12;
  }
}

/**
 * Stable neo-Hookean (Smith, de Goes, Kim 2018, "Stable Neo-Hookean Flesh Simulation", with its log term):
 *   psi = mu'/2 (I_C - 3) + lambda'/2 (J - alpha)^2 - mu'/2 ln(I_C + 1) - psi_0,
 * I_C = tr F^T F. Defined (finite) for inverted elements too.
 *
 * Constants, all derived here rather than taken on trust:
 * - Rest stress: P(I) = mu' (1 - 1/(I_C + 1)) I + lambda' (1 - alpha) I with I_C = 3, which vanishes for
 *   alpha = 1 + 3 mu' / (4 lambda') (the paper's alpha = 1 + mu'/lambda' - mu'/(4 lambda')).
 * - Small-strain limit: expanding psi to second order about F = I gives mu' 3/4 |eps|^2 + (lambda' - 5/8 mu')/2
 *   tr(eps)^2 (plus rotation terms that cancel), so matching linear elasticity with the Lame parameters (mu, lambda)
 *   of E and nu needs the paper's reparametrisation mu' = 4/3 mu, lambda' = lambda + 5/6 mu. `mu` and `lambda`
 *   of this object stay the physical (small-strain) ones; the primed ones are muStable / lambdaStable.
 * - Rest energy: psi(I) = lambda'/2 (1 - alpha)^2 - mu'/2 ln 4 is not zero; psi_0 subtracts it so the rest state
 *   has zero energy like the other materials (a constant: forces and Hessians are unchanged).
 */
export class StableNeoHookeanMaterial extends IsotropicMaterial {
  readonly model = 'stable-neo-hookean' as const;
  readonly blocksInversion = false;
  readonly muStable: number;
  readonly lambdaStable: number;
  readonly alpha: number;
  private readonly restEnergy: number;
  private readonly cof = new Float64Array(9);

  constructor(mu: number, lambda: number) {
    super(mu, lambda);
    this.muStable = (4 / 3) * mu;
    this.lambdaStable = lambda + (5 / 6) * mu;
    if (!(this.lambdaStable > 0)) throw new Error('stable-neo-hookean: lambda + 5/6 mu must be > 0');
    this.alpha = 1 + (3 * this.muStable) / (4 * this.lambdaStable);
    this.restEnergy = 0.5 * this.lambdaStable * (1 - this.alpha) ** 2 - 0.5 * this.muStable * Math.log(4);
  }

  energyDensity(F: ArrayLike<number>): number {
    let Ic = 0;
    for (let i = 0; i < 9; i++) Ic += F[i] * F[i];
    const dJ = det3(F) - this.alpha;
    return (
      0.5 * this.muStable * (Ic - 3) + 0.5 * this.lambdaStable * dJ * dJ - 0.5 * this.muStable * Math.log(Ic + 1) -
      this.restEnergy
    );
  }

  /** P = mu' (1 - 1/(I_C + 1)) F + lambda' (J - alpha) cof(F). */
  firstPiola(F: ArrayLike<number>, P: Float64Array): void {
    let Ic = 0;
    for (let i = 0; i < 9; i++) Ic += F[i] * F[i];
    const cof = cofactor3(F, this.cof);
    const J = F[0] * cof[0] + F[1] * cof[1] + F[2] * cof[2];
    const a = this.muStable * (1 - 1 / (Ic + 1));
    const b = this.lambdaStable * (J - this.alpha);
    for (let i = 0; i < 9; i++) P[i] = a * F[i] + b * cof[i];
  }

  /** Closed form: mu' s I + 2 mu'/(I_C+1)^2 F (x) F + lambda' cof (x) cof + lambda' (J - alpha) d2J/dF2. */
  override stressDerivative(F: ArrayLike<number>, out: Float64Array): void {
    let Ic = 0;
    for (let i = 0; i < 9; i++) Ic += F[i] * F[i];
    const cof = cofactor3(F, this.cof);
    const J = F[0] * cof[0] + F[1] * cof[1] + F[2] * cof[2];
    const mu = this.muStable;
    const lam = this.lambdaStable;
    const a = mu * (1 - 1 / (Ic + 1));
    const b = (2 * mu) / ((Ic + 1) * (Ic + 1));
    for (let p = 0; p < 9; p++)
      for (let q = 0; q < 9; q++) out[9 * p + q] = (p === q ? a : 0) + b * F[p] * F[q] + lam * cof[p] * cof[q];
    addDeterminantHessian(F, lam * (J - this.alpha), out);
  }

  protected principalHessian(s0: number, s1: number, s2: number, J: number): void {
    // psi_i = mu' a s_i + lambda' (J - alpha) s_j s_k with a = 1 - 1/(I_C + 1).
    const h = this.principal;
    const mu = this.muStable;
    const lam = this.lambdaStable;
    const ic1 = s0 * s0 + s1 * s1 + s2 * s2 + 1;
    const a = mu * (1 - 1 / ic1);
    const b = (2 * mu) / (ic1 * ic1);
    const g = lam * (J - this.alpha);
    const k = lam * (2 * J - this.alpha);
    h[0] = a + b * s0 * s0 + lam * s1 * s1 * s2 * s2;
    h[4] = a + b * s1 * s1 + lam * s0 * s0 * s2 * s2;
    h[8] = a + b * s2 * s2 + lam * s0 * s0 * s1 * s1;
    h[1] = h[3] = b * s0 * s1 + k * s2;
    h[2] = h[6] = b * s0 * s2 + k * s1;
    h[5] = h[7] = b * s1 * s2 + k * s0;
    h[9] = a - g * s2;
    h[10] = a - g * s1;
    h[11] = a - g * s0;
    h[12] = a + g * s2;
    h[13] = a + g * s1;
    h[14] = a + g * s0;
  }
}

/** St. Venant-Kirchhoff: psi = mu |E|^2 + lambda/2 tr(E)^2, E = (F^T F - I)/2. */
export class StvkMaterial extends IsotropicMaterial {
  readonly model = 'stvk' as const;
  readonly blocksInversion = false;
  private readonly S = new Float64Array(9);

  /** Green strain into this.S; returns tr E. */
  private greenStrain(F: ArrayLike<number>): number {
    const E = this.S;
    for (let a = 0; a < 3; a++) {
      for (let b = a; b < 3; b++) {
        const v = 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a === b ? 1 : 0));
        E[3 * a + b] = v;
        E[3 * b + a] = v;
      }
    }
    return E[0] + E[4] + E[8];
  }

  energyDensity(F: ArrayLike<number>): number {
    const tr = this.greenStrain(F);
    let e2 = 0;
    for (let i = 0; i < 9; i++) e2 += this.S[i] * this.S[i];
    return this.mu * e2 + 0.5 * this.lambda * tr * tr;
  }

  /** Second Piola S = 2 mu E + lambda tr(E) I into this.S. */
  private secondPiola(F: ArrayLike<number>): void {
    const tr = this.greenStrain(F);
    const S = this.S;
    for (let i = 0; i < 9; i++) S[i] *= 2 * this.mu;
    S[0] += this.lambda * tr;
    S[4] += this.lambda * tr;
    S[8] += this.lambda * tr;
  }

  /** P = F S. */
  firstPiola(F: ArrayLike<number>, P: Float64Array): void {
    this.secondPiola(F);
    const S = this.S;
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++)
        P[3 * r + c] = F[3 * r] * S[c] + F[3 * r + 1] * S[3 + c] + F[3 * r + 2] * S[6 + c];
  }

  /** Closed form: dP_ij/dF_kl = d_ik S_lj + mu ((F F^T)_ik d_jl + F_il F_kj) + lambda F_ij F_kl. */
  override stressDerivative(F: ArrayLike<number>, out: Float64Array): void {
    this.secondPiola(F);
    const S = this.S;
    const mu = this.mu;
    const lam = this.lambda;
    for (let i = 0; i < 3; i++)
      for (let k = 0; k < 3; k++) {
        const ffT = F[3 * i] * F[3 * k] + F[3 * i + 1] * F[3 * k + 1] + F[3 * i + 2] * F[3 * k + 2];
        for (let j = 0; j < 3; j++)
          for (let l = 0; l < 3; l++)
            out[9 * (3 * i + j) + 3 * k + l] =
              (i === k ? S[3 * l + j] : 0) +
              mu * ((j === l ? ffT : 0) + F[3 * i + l] * F[3 * k + j]) +
              lam * F[3 * i + j] * F[3 * k + l];
      }
  }

  protected principalHessian(s0: number, s1: number, s2: number): void {
    // psi_i = mu (s_i^3 - s_i) + lambda/2 (I_C - 3) s_i.
    const h = this.principal;
    const mu = this.mu;
    const lam = this.lambda;
    const q0 = s0 * s0;
    const q1 = s1 * s1;
    const q2 = s2 * s2;
    const g = 0.5 * lam * (q0 + q1 + q2 - 3);
    h[0] = mu * (3 * q0 - 1) + g + lam * q0;
    h[4] = mu * (3 * q1 - 1) + g + lam * q1;
    h[8] = mu * (3 * q2 - 1) + g + lam * q2;
    h[1] = h[3] = lam * s0 * s1;
    h[2] = h[6] = lam * s0 * s2;
    h[5] = h[7] = lam * s1 * s2;
    // (s_i^3 - s_j^3)/(s_i - s_j) = s_i^2 + s_i s_j + s_j^2; (s_i^3 + s_j^3)/(s_i + s_j) = s_i^2 - s_i s_j + s_j^2.
    h[9] = mu * (q0 + s0 * s1 + q1 - 1) + g;
    h[10] = mu * (q0 + s0 * s2 + q2 - 1) + g;
    h[11] = mu * (q1 + s1 * s2 + q2 - 1) + g;
    h[12] = mu * (q0 - s0 * s1 + q1 - 1) + g;
    h[13] = mu * (q0 - s0 * s2 + q2 - 1) + g;
    h[14] = mu * (q1 - s1 * s2 + q2 - 1) + g;
  }
}

/**
 * Small-strain linear elasticity: psi = mu |eps|^2 + lambda/2 tr(eps)^2, eps = (F + F^T)/2 - I. Not rotation
 * invariant (a rigid rotation costs energy); its Hessian is constant:
 * dP_ij/dF_kl = mu (d_ik d_jl + d_il d_jk) + lambda d_ij d_kl, PSD whenever mu > 0 and 2 mu + 3 lambda >= 0.
 */
export class LinearMaterial implements Material {
  readonly model = 'linear' as const;
  readonly blocksInversion = false;
  readonly stressUsesSvd = false;
  private readonly denseSystem = new HessianEigensystem();

  constructor(
    readonly mu: number,
    readonly lambda: number,
  ) {}

  energyDensity(F: ArrayLike<number>): number {
    let e2 = 0;
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        const e = 0.5 * (F[3 * a + b] + F[3 * b + a]) - (a === b ? 1 : 0);
        e2 += e * e;
      }
    }
    const tr = F[0] + F[4] + F[8] - 3;
    return this.mu * e2 + 0.5 * this.lambda * tr * tr;
  }

  /** P = 2 mu eps + lambda tr(eps) I. */
  firstPiola(F: ArrayLike<number>, P: Float64Array): void {
    const tr = F[0] + F[4] + F[8] - 3;
    for (let a = 0; a < 3; a++)
      for (let b = 0; b < 3; b++)
        P[3 * a + b] = this.mu * (F[3 * a + b] + F[3 * b + a] - (a === b ? 2 : 0)) + (a === b ? this.lambda * tr : 0);
  }

  stressDerivative(_F: ArrayLike<number>, out: Float64Array): void {
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        for (let k = 0; k < 3; k++)
          for (let l = 0; l < 3; l++)
            out[9 * (3 * i + j) + 3 * k + l] =
              this.mu * ((i === k && j === l ? 1 : 0) + (i === l && j === k ? 1 : 0)) +
              (i === j && k === l ? this.lambda : 0);
  }

  projectedStressDerivative(F: ArrayLike<number>, out: Float64Array, filter: EigenvalueFilter = 'clamp'): void {
    this.hessianEigensystem(F, filter, this.denseSystem);
    denseFromEigensystem(this.denseSystem, out);
  }

  /**
   * In the frame U = V = I: the diagonal directions e_i e_i^T are coupled by 2 mu I + lambda 1 1^T, the symmetric
   * shears (flips) have eigenvalue 2 mu and the skew directions (twists, infinitesimal rotations) 0.
   */
  hessianEigensystem(_F: ArrayLike<number>, project: false | EigenvalueFilter, es: HessianEigensystem): void {
    const { U, V, block, pairs } = es;
    U.fill(0);
    V.fill(0);
    U[0] = U[4] = U[8] = V[0] = V[4] = V[8] = 1;
    es.sigma.fill(1);
    const twoMu = 2 * this.mu;
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) block[3 * i + j] = (i === j ? twoMu : 0) + this.lambda;
    pairs[0] = pairs[1] = pairs[2] = twoMu;
    pairs[3] = pairs[4] = pairs[5] = 0;
    if (project) es.applyFilter(project);
  }
}

/** A material from its model name and (E, nu). */
export function createMaterial(model: MaterialModel, moduli: ElasticModuli): Material {
  const { mu, lambda } = lameParameters(moduli.youngsModulus, moduli.poissonRatio);
  return materialFromLame(model, mu, lambda);
}

/** A material from its model name and Lame parameters (a worker thread rebuilds a term's material this way). */
export function materialFromLame(model: MaterialModel, mu: number, lambda: number): Material {
  switch (model) {
    case 'corotated':
      return new CorotatedMaterial(mu, lambda);
    case 'neo-hookean':
      return new NeoHookeanMaterial(mu, lambda);
    case 'stable-neo-hookean':
      return new StableNeoHookeanMaterial(mu, lambda);
    case 'stvk':
      return new StvkMaterial(mu, lambda);
    case 'linear':
      return new LinearMaterial(mu, lambda);
    default: {
      const never: never = model;
      throw new Error(`unknown material model '${String(never)}'`);
    }
  }
}

/** createMaterial with positional (E, nu). */
export function makeMaterial(model: MaterialModel, youngsModulus: number, poissonRatio: number): Material {
  return createMaterial(model, { youngsModulus, poissonRatio });
}
