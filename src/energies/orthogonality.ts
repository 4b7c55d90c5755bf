/**
 * The orthogonality potential of affine bodies (Lan et al. 2022, "Affine Body Dynamics"): per body
 * E = kappa V ||A A^T - I||_F^2, which keeps A near a rotation (the body near-rigid); kappa is the body material's
 * Young's modulus (ABD's stiffness parameter), V its rest volume.
 *
 * We store A by its columns c_k (affine-body.ts), and ||A A^T - I||_F = ||A^T A - I||_F (same singular values), so
 * with G = A^T A - I, G_kl = c_k . c_l - delta_kl:
 *   E = kappa V sum_kl G_kl^2,   dE/dc_k = 4 kappa V sum_l G_kl c_l,
 *   d2E/dc_k dc_m = 4 kappa V (G_km I + delta_km sum_l c_l c_l^T + c_m c_k^T)   (3x3 block (k, m) of a 9x9).
 * The Hessian is indefinite when A is compressed; with projectPsd the 9x9 is projected per body.
 */
import { projectPsdInPlace, psdScratchLength } from '../math/eigen-sym.js';
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';

export class OrthogonalityPotential implements PotentialTerm {
  readonly name = 'orthogonality';
  private readonly count: number;
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly local = new Float64Array(81);
  private readonly scratch = new Float64Array(psdScratchLength(9));
  private readonly G = new Float64Array(9);
  private readonly outer = new Float64Array(9);

  /**
   * columns: 3 node ids per body (c_1, c_2, c_3, consecutive or not); stiffnessVolume: kappa V per body (N m).
   */
  constructor(
    private readonly columns: Uint32Array,
    private readonly stiffnessVolume: Float64Array,
  ) {
    this.count = stiffnessVolume.length;
    this.slots = new Int32Array(9 * this.count);
  }

  /** G = A^T A - I of body b into this.G. */
  private gram(x: Float64Array, b: number): Float64Array {
    const G = this.G;
    for (let k = 0; k < 3; k++) {
      const ok = 3 * this.columns[3 * b + k];
      for (let l = k; l < 3; l++) {
        const ol = 3 * this.columns[3 * b + l];
        const g = x[ok] * x[ol] + x[ok + 1] * x[ol + 1] + x[ok + 2] * x[ol + 2] - (k === l ? 1 : 0);
        G[3 * k + l] = g;
        G[3 * l + k] = g;
      }
    }
    return G;
  }

  energy(x: Float64Array): number {
    let e = 0;
    for (let b = 0; b < this.count; b++) {
      const G = this.gram(x, b);
      let s = 0;
      for (let i = 0; i < 9; i++) s += G[i] * G[i];
      e += this.stiffnessVolume[b] * s;
    }
    return e;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    for (let b = 0; b < this.count; b++) {
      const G = this.gram(x, b);
      const c = 4 * scale * this.stiffnessVolume[b];
      for (let k = 0; k < 3; k++) {
        const ok = 3 * this.columns[3 * b + k];
        for (let l = 0; l < 3; l++) {
          const ol = 3 * this.columns[3 * b + l];
          const w = c * G[3 * k + l];
          g[ok] += w * x[ol];
          g[ok + 1] += w * x[ol + 1];
          g[ok + 2] += w * x[ol + 2];
        }
      }
    }
  }

  /** The 9x9 Hessian of body b (scaled), row-major over (c_1, c_2, c_3), into this.local. */
  localHessian(x: Float64Array, b: number, scale: number): Float64Array {
    const G = this.gram(x, b);
    const H = this.local;
    const c = 4 * scale * this.stiffnessVolume[b];
    const S = this.outer; // sum_l c_l c_l^T
    S.fill(0);
    for (let l = 0; l < 3; l++) {
      const o = 3 * this.columns[3 * b + l];
      for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) S[3 * i + j] += x[o + i] * x[o + j];
    }
    for (let k = 0; k < 3; k++) {
      const ok = 3 * this.columns[3 * b + k];
      for (let m = 0; m < 3; m++) {
        const om = 3 * this.columns[3 * b + m];
        for (let i = 0; i < 3; i++) {
          for (let j = 0; j < 3; j++) {
            let h = x[om + i] * x[ok + j];
            if (i === j) h += G[3 * k + m];
            if (k === m) h += S[3 * i + j];
            H[(3 * k + i) * 9 + 3 * m + j] = c * h;
          }
        }
      }
    }
    return H;
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean): void {
    if (this.slotsPatternId !== H.pattern.id) this.bindPattern(H);
    const v = H.values;
    for (let b = 0; b < this.count; b++) {
      const local = this.localHessian(x, b, scale);
      if (projectPsd) projectPsdInPlace(local, 9, this.scratch);
      for (let k = 0; k < 3; k++) {
        for (let m = 0; m < 3; m++) {
          const o = 9 * this.slots[9 * b + 3 * k + m];
          for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) v[o + 3 * i + j] += local[(3 * k + i) * 9 + 3 * m + j];
        }
      }
    }
  }

  addPattern(builder: PatternBuilder): void {
    for (let b = 0; b < this.count; b++) builder.addClique(this.columns.subarray(3 * b, 3 * b + 3));
  }

  bindPattern(H: BsrMatrix): void {
    if (H.pattern.remapSlots(this.slotsPatternId, this.slots)) {
      this.slotsPatternId = H.pattern.id;
      return;
    }
    for (let b = 0; b < this.count; b++) H.pattern.elementSlots(this.columns.subarray(3 * b, 3 * b + 3), this.slots, 9 * b);
    this.slotsPatternId = H.pattern.id;
  }
}
