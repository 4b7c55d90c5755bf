/**
 * Membrane (in-plane) elasticity of a thin shell with linear triangles: E(x) = sum_t t_h A_t psi(C_t), with t_h the
 * shell's thickness, A_t the triangle's rest area and C = F^T F the 2x2 Cauchy-Green tensor of the 3x2 deformation
 * gradient F = [x1 - x0, x2 - x0] Dm^{-1} (Dm: the rest edges in an orthonormal frame of the rest triangle's plane).
 * C equals B^{-1} A of the current metric A against the rest metric B, written in that frame.
 *
 * Thickness convention: t_h is the whole slab (not a half-thickness radius): the energy is the plane-stress energy
 * density integrated over the thickness, constant through it. The Lame parameters are the plane-stress ones,
 * mu = E / (2 (1 + nu)) and lambda = E nu / (1 - nu^2), so a small uniaxial stretch eps costs E t_h eps^2 / 2 per
 * area with free lateral contraction, as a plate does.
 *
 * psi of the two membranes, with ln J = ln(det C) / 2 and G = (C - I) / 2:
 *   Neo-Hookean: mu/2 (tr C - 2 - 2 ln J) + lambda/2 (ln J)^2      S = 2 dpsi/dC = mu (I - C^-1) + lambda ln J C^-1
 *   StVK:        mu |G|^2 + lambda/2 (tr G)^2                       S = 2 mu G + lambda tr(G) I
 * The first Piola stress is P = F S, the element gradient t_h A P Dm^{-T}; the Hessian follows from
 * dP = dF S + F dS(dC), dC = dF^T F + F^T dF, and is projected to PSD per triangle when asked.
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import { projectPsdTranslationInvariant } from '../math/eigen-sym.js';
import type { EigenvalueFilter } from './eigenvalue-filter.js';
import type { PotentialTerm } from './potential.js';

/** The membrane models a shell may use (the scene's material.model for shells). */
export const MEMBRANE_MODELS = ['neo-hookean', 'stvk'] as const;
export type MembraneModel = (typeof MEMBRANE_MODELS)[number];

/** Plane-stress Lame parameters (see the module comment). */
export function membraneLame(youngsModulus: number, poissonRatio: number): { mu: number; lambda: number } {
  return { mu: youngsModulus / (2 * (1 + poissonRatio)), lambda: (youngsModulus * poissonRatio) / (1 - poissonRatio * poissonRatio) };
}

/** Rest area of triangle t of `triangles` at positions X. */
export function triangleArea(X: Float64Array, triangles: Uint32Array, t: number): number {
  const i = 3 * triangles[3 * t], j = 3 * triangles[3 * t + 1], k = 3 * triangles[3 * t + 2];
  const ux = X[j] - X[i], uy = X[j + 1] - X[i + 1], uz = X[j + 2] - X[i + 2];
  const vx = X[k] - X[i], vy = X[k + 1] - X[i + 1], vz = X[k + 2] - X[i + 2];
  return 0.5 * Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx);
}

/** Adds areaDensity * A_t / 3 to each node of each triangle (per-node masses, length n). */
export function lumpedShellMass(X: Float64Array, triangles: Uint32Array, areaDensity: number, out: Float64Array): void {
  for (let t = 0; t < triangles.length / 3; t++) {
    const m = (areaDensity * triangleArea(X, triangles, t)) / 3;
    for (let a = 0; a < 3; a++) out[triangles[3 * t + a]] += m;
  }
}

export class ShellMembrane implements PotentialTerm {
  readonly name = 'elastic';
  readonly count: number;
  readonly mu: number;
  readonly lambda: number;
  /** Thickness times rest area, per triangle. */
  private readonly weight: Float64Array;
  /** Dm^{-1} per triangle, 4 entries row-major. */
  private readonly dmInverse: Float64Array;
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly stvk: boolean;
  // Scratch.
  private readonly F = new Float64Array(6); // 3x2 row-major
  private readonly S = new Float64Array(4);
  private readonly Cinv = new Float64Array(4);
  private readonly HF = new Float64Array(36); // d2psi/dF2, index 2 r + c
  private readonly K = new Float64Array(81); // element Hessian, nodes 0..2
  private readonly dS = new Float64Array(4);
  private readonly nodeList = new Uint32Array(3);

  constructor(
    rest: Float64Array,
    readonly triangles: Uint32Array,
    model: MembraneModel,
    youngsModulus: number,
    poissonRatio: number,
    readonly thickness: number,
    readonly label = 'shell',
  ) {
    if (triangles.length % 3 !== 0) throw new Error(`ShellMembrane (${label}): triangles has length ${triangles.length}, not a multiple of 3`);
    this.count = triangles.length / 3;
    ({ mu: this.mu, lambda: this.lambda } = membraneLame(youngsModulus, poissonRatio));
    this.stvk = model === 'stvk';
    this.weight = new Float64Array(this.count);
    this.dmInverse = new Float64Array(4 * this.count);
    this.slots = new Int32Array(9 * this.count);
    for (let t = 0; t < this.count; t++) {
      const i = 3 * triangles[3 * t], j = 3 * triangles[3 * t + 1], k = 3 * triangles[3 * t + 2];
      const u = [rest[j] - rest[i], rest[j + 1] - rest[i + 1], rest[j + 2] - rest[i + 2]];
      const v = [rest[k] - rest[i], rest[k + 1] - rest[i + 1], rest[k + 2] - rest[i + 2]];
      // Orthonormal frame of the plane: e1 along u, e2 = the part of v orthogonal to it.
      const lu = Math.hypot(u[0], u[1], u[2]);
      const v1 = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) / lu;
      const v2 = Math.sqrt(Math.max(0, v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - v1 * v1));
      const area = 0.5 * lu * v2;
      if (!(area > 1e-14 * (lu * lu + v1 * v1 + v2 * v2))) {
        throw new Error(`ShellMembrane (${label}): triangle ${t} (nodes ${triangles[3 * t]}, ${triangles[3 * t + 1]}, ${triangles[3 * t + 2]}) has zero rest area`);
      }
      // Dm = [[lu, v1], [0, v2]]; its inverse:
      this.dmInverse.set([1 / lu, -v1 / (lu * v2), 0, 1 / v2], 4 * t);
      this.weight[t] = thickness * area;
    }
  }

  /** F = Ds Dm^{-1} of triangle t into this.F; returns nothing. */
  private deformation(x: Float64Array, t: number): void {
    const tri = this.triangles;
    const i = 3 * tri[3 * t], j = 3 * tri[3 * t + 1], k = 3 * tri[3 * t + 2];
    const m = this.dmInverse, o = 4 * t;
    const F = this.F;
    for (let r = 0; r < 3; r++) {
      const d1 = x[j + r] - x[i + r];
      const d2 = x[k + r] - x[i + r];
      F[2 * r] = d1 * m[o] + d2 * m[o + 2];
      F[2 * r + 1] = d1 * m[o + 1] + d2 * m[o + 3];
    }
  }

  /**
   * psi at this.F, and S (2 dpsi/dC) and C^-1 into this.S, this.Cinv. Returns Infinity for a Neo-Hookean triangle
   * collapsed to zero area (det C <= 0).
   */
  private stress(): { psi: number; lnJ: number } {
    const F = this.F;
    const c00 = F[0] * F[0] + F[2] * F[2] + F[4] * F[4];
    const c01 = F[0] * F[1] + F[2] * F[3] + F[4] * F[5];
    const c11 = F[1] * F[1] + F[3] * F[3] + F[5] * F[5];
    const S = this.S;
    const { mu, lambda } = this;
    if (this.stvk) {
      const g00 = 0.5 * (c00 - 1), g11 = 0.5 * (c11 - 1), g01 = 0.5 * c01;
      const tr = g00 + g11;
      S[0] = 2 * mu * g00 + lambda * tr;
      S[3] = 2 * mu * g11 + lambda * tr;
      S[1] = S[2] = 2 * mu * g01;
      return { psi: mu * (g00 * g00 + g11 * g11 + 2 * g01 * g01) + 0.5 * lambda * tr * tr, lnJ: 0 };
    }
    const det = c00 * c11 - c01 * c01;
    if (!(det > 0)) return { psi: Infinity, lnJ: -Infinity };
    const lnJ = 0.5 * Math.log(det);
    const Ci = this.Cinv;
    Ci[0] = c11 / det;
    Ci[3] = c00 / det;
    Ci[1] = Ci[2] = -c01 / det;
    S[0] = mu * (1 - Ci[0]) + lambda * lnJ * Ci[0];
    S[3] = mu * (1 - Ci[3]) + lambda * lnJ * Ci[3];
    S[1] = S[2] = (lambda * lnJ - mu) * Ci[1];
    return { psi: 0.5 * mu * (c00 + c11 - 2 - 2 * lnJ) + 0.5 * lambda * lnJ * lnJ, lnJ };
  }

  energy(x: Float64Array): number {
    let total = 0;
    for (let t = 0; t < this.count; t++) {
      this.deformation(x, t);
      const { psi } = this.stress();
      if (psi === Infinity) return Infinity;
      total += this.weight[t] * psi;
    }
    return total;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    const F = this.F, S = this.S, m = this.dmInverse, tri = this.triangles;
    for (let t = 0; t < this.count; t++) {
      this.deformation(x, t);
      if (this.stress().psi === Infinity) continue;
      const w = scale * this.weight[t];
      const o = 4 * t;
      const i = 3 * tri[3 * t], j = 3 * tri[3 * t + 1], k = 3 * tri[3 * t + 2];
      for (let r = 0; r < 3; r++) {
        // P = F S (row r), then the gradient of nodes 1, 2 is w P Dm^{-T}.
        const p0 = F[2 * r] * S[0] + F[2 * r + 1] * S[2];
        const p1 = F[2 * r] * S[1] + F[2 * r + 1] * S[3];
        const g1 = w * (p0 * m[o] + p1 * m[o + 1]);
        const g2 = w * (p0 * m[o + 2] + p1 * m[o + 3]);
        g[j + r] += g1;
        g[k + r] += g2;
        g[i + r] -= g1 + g2;
      }
    }
  }

  addPattern(builder: PatternBuilder): void {
    for (let t = 0; t < this.count; t++) builder.addClique(this.triangles.subarray(3 * t, 3 * t + 3));
  }

  bindPattern(H: BsrMatrix): void {
    if (H.pattern.remapSlots(this.slotsPatternId, this.slots)) {
      this.slotsPatternId = H.pattern.id;
      return;
    }
    for (let t = 0; t < this.count; t++) {
      this.nodeList.set(this.triangles.subarray(3 * t, 3 * t + 3));
      H.pattern.elementSlots(this.nodeList, this.slots, 9 * t);
    }
    this.slotsPatternId = H.pattern.id;
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean, filter: EigenvalueFilter = 'clamp'): void {
    if (this.slotsPatternId !== H.pattern.id) this.bindPattern(H);
    const K = this.K, v = H.values;
    for (let t = 0; t < this.count; t++) {
      this.deformation(x, t);
      if (this.stress().psi === Infinity) continue;
      this.elementHessian(t, scale * this.weight[t]);
      if (projectPsd) projectPsdTranslationInvariant(K, 3, filter === 'abs');
      for (let a = 0; a < 3; a++) {
        for (let b = 0; b < 3; b++) {
          const o = 9 * this.slots[9 * t + 3 * a + b];
          for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) v[o + 3 * r + c] += K[9 * (3 * a + r) + 3 * b + c];
        }
      }
    }
  }

  /** w * the 9x9 Hessian of psi(F(x)) of triangle t into this.K (F, S, Cinv current). */
  private elementHessian(t: number, w: number): void {
    const F = this.F, S = this.S, Ci = this.Cinv, HF = this.HF, dS = this.dS, K = this.K;
    const { mu, lambda } = this;
    const lnJ = this.stvk ? 0 : 0.5 * Math.log(1 / (Ci[0] * Ci[3] - Ci[1] * Ci[1]));
    // Column q = (r, c) of d2psi/dF2: dP for dF = the unit matrix at (r, c).
    for (let q = 0; q < 6; q++) {
      const r = q >> 1, c = q & 1;
      // dC = dF^T F + F^T dF: only row c and column c change; dC_cd += F_rd, dC_dc += F_rd.
      const d00 = c === 0 ? 2 * F[2 * r] : 0;
      const d11 = c === 1 ? 2 * F[2 * r + 1] : 0;
      const d01 = F[2 * r + 1 - c];
      if (this.stvk) {
        const tr = 0.5 * lambda * (d00 + d11);
        dS[0] = mu * d00 + tr;
        dS[3] = mu * d11 + tr;
        dS[1] = dS[2] = mu * d01;
      } else {
        // M = C^-1 dC C^-1 (symmetric), tr(C^-1 dC).
        const a00 = Ci[0] * d00 + Ci[1] * d01, a01 = Ci[0] * d01 + Ci[1] * d11;
        const a10 = Ci[2] * d00 + Ci[3] * d01, a11 = Ci[2] * d01 + Ci[3] * d11;
        const m00 = a00 * Ci[0] + a01 * Ci[2], m01 = a00 * Ci[1] + a01 * Ci[3], m11 = a10 * Ci[1] + a11 * Ci[3];
        const half = 0.5 * lambda * (a00 + a11);
        const k = mu - lambda * lnJ;
        dS[0] = k * m00 + half * Ci[0];
        dS[3] = k * m11 + half * Ci[3];
        dS[1] = dS[2] = k * m01 + half * Ci[1];
      }
      for (let rr = 0; rr < 3; rr++) {
        for (let cc = 0; cc < 2; cc++) {
          // dP = dF S + F dS; (dF S)_(rr, cc) = [rr === r] S_(c, cc).
          let val = F[2 * rr] * dS[cc] + F[2 * rr + 1] * dS[2 + cc];
          if (rr === r) val += S[2 * c + cc];
          HF[6 * (2 * rr + cc) + q] = val;
        }
      }
    }
    // Nodes 1, 2: dF_(r, c)/dx_(k+1, r) = Dm^{-1}_(k, c). Node 0 gets minus the sum (translation invariance).
    const m = this.dmInverse, o = 4 * t;
    K.fill(0);
    for (let a = 1; a < 3; a++) {
      for (let b = 1; b < 3; b++) {
        for (let r = 0; r < 3; r++) {
          for (let s = 0; s < 3; s++) {
            let sum = 0;
            for (let c = 0; c < 2; c++) {
              const ma = m[o + 2 * (a - 1) + c];
              for (let d = 0; d < 2; d++) sum += ma * HF[6 * (2 * r + c) + 2 * s + d] * m[o + 2 * (b - 1) + d];
            }
            K[9 * (3 * a + r) + 3 * b + s] = w * sum;
          }
        }
      }
    }
    for (let r = 3; r < 9; r++) {
      // Block (a, 0) = -(block (a, 1) + block (a, 2)).
      for (let s = 0; s < 3; s++) K[9 * r + s] = -(K[9 * r + 3 + s] + K[9 * r + 6 + s]);
    }
    for (let s = 0; s < 9; s++) {
      for (let r = 0; r < 3; r++) K[9 * r + s] = -(K[9 * (3 + r) + s] + K[9 * (6 + r) + s]);
    }
  }
}
