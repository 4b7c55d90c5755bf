import { inverse3, polarDecomposition } from '../math/small.js';
import type { CollisionMesh } from './collision-mesh.js';

/**
 * Per collision group (a body), the motions that fit its vertices best: the rigid motion carrying a reference
 * configuration onto the current one, and the affine map of a step. Distances inside a body do not change under a
 * rigid motion, so what is left after undoing the fitted one (the deformation) is all that bounds how its own
 * pairs can close; a step that is mostly a turn or a uniform stretch closes pairs in proportion to their distance.
 * Candidate sets (candidate-set.ts) judge their validity by these fits.
 */
export class GroupMotionFit {
  /** Per group: the centroid of x at the last fitRigid (3 each). */
  readonly center: Float64Array;
  /** Per group: the rotation (9, row-major) of the last fitRigid, from the reference frame to x's. */
  readonly rotation: Float64Array;
  /** Per group: the map A of the last fitAffine (9, row-major); 0 for a flat group. */
  readonly map: Float64Array;
  /** Per group: the largest residual |dx_v - A (x_v - c) - b| of the last fitAffine. */
  readonly residual: Float64Array;
  /** Per group: how many of the vertices it has. */
  readonly size: Float64Array;
  private readonly covariance: Float64Array;
  private readonly fitCenter: Float64Array;
  private readonly fitMean: Float64Array;
  private readonly moments: Float64Array;
  private readonly stepMoments: Float64Array;
  private readonly inverse = new Float64Array(9);

  constructor(
    private readonly mesh: CollisionMesh,
    /** The vertices the fits run over (node ids). */
    private readonly vertices: Uint32Array,
  ) {
    const groups = mesh.groups.length;
    this.center = new Float64Array(3 * groups);
    this.rotation = new Float64Array(9 * groups);
    this.map = new Float64Array(9 * groups);
    this.residual = new Float64Array(groups);
    this.size = new Float64Array(groups);
    this.covariance = new Float64Array(9 * groups);
    this.fitCenter = new Float64Array(3 * groups);
    this.fitMean = new Float64Array(3 * groups);
    this.moments = new Float64Array(9 * groups);
    this.stepMoments = new Float64Array(9 * groups);
  }

  /**
   * Per group, the rigid motion that best carries the reference (ref, with group centroids refCenter) onto x: the
   * centroids into `center`, and the rotation of the polar decomposition of the covariance sum
   * (x - c)(ref - refCenter)^T into `rotation`.
   */
  fitRigid(x: Float64Array, ref: Float64Array, refCenter: Float64Array): void {
    const { center: c, rotation: R, covariance: A } = this;
    const g = this.mesh.groupOfNode;
    groupMeans(this.mesh, this.vertices, x, null, c, this.size);
    A.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v], Q = 9 * g[v];
      for (let i = 0; i < 3; i++) {
        const p = x[o + i] - c[q + i];
        for (let j = 0; j < 3; j++) A[Q + 3 * i + j] += p * (ref[o + j] - refCenter[q + j]);
      }
    }
    for (let group = 0; group < this.size.length; group++) {
      if (this.size[group] > 0) polarDecomposition(A.subarray(9 * group, 9 * group + 9), R.subarray(9 * group, 9 * group + 9), null);
    }
  }

  /**
   * Per group, the least-squares affine fit of the step dx over the vertices at x: the map A into `map`, the largest
   * residual |dx_v - A (x_v - c) - b| into `residual` (b the mean step, c the centroid). A flat group (a sheet: no
   * inverse of its second moments) gets A = 0, which leaves the step itself as residual.
   */
  fitAffine(x: Float64Array, dx: Float64Array): void {
    const g = this.mesh.groupOfNode;
    const c = this.fitCenter, S = this.moments, B = this.stepMoments, M = this.map, inv = this.inverse;
    const mean = this.fitMean, count = this.size;
    groupMeans(this.mesh, this.vertices, x, null, c, count);
    groupMeans(this.mesh, this.vertices, dx, null, mean, count);
    S.fill(0);
    B.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v], Q = 9 * g[v];
      for (let i = 0; i < 3; i++) {
        const ri = x[o + i] - c[q + i], di = dx[o + i] - mean[q + i];
        for (let j = 0; j < 3; j++) {
          const rj = x[o + j] - c[q + j];
          S[Q + 3 * i + j] += ri * rj;
          B[Q + 3 * i + j] += di * rj;
        }
      }
    }
    M.fill(0);
    for (let k = 0; k < count.length; k++) {
      const Q = 9 * k;
      const trace = S[Q] + S[Q + 4] + S[Q + 8];
      const det = inverse3(S.subarray(Q, Q + 9), inv);
      if (!(trace > 0) || !(det > 1e-9 * trace * trace * trace)) continue;
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) {
          let sum = 0;
          for (let l = 0; l < 3; l++) sum += B[Q + 3 * i + l] * inv[3 * l + j];
          M[Q + 3 * i + j] = sum;
        }
      }
    }
    const E = this.residual;
    E.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v], Q = 9 * g[v];
      const rx = x[o] - c[q], ry = x[o + 1] - c[q + 1], rz = x[o + 2] - c[q + 2];
      const ex = dx[o] - mean[q] - (M[Q] * rx + M[Q + 1] * ry + M[Q + 2] * rz);
      const ey = dx[o + 1] - mean[q + 1] - (M[Q + 3] * rx + M[Q + 4] * ry + M[Q + 5] * rz);
      const ez = dx[o + 2] - mean[q + 2] - (M[Q + 6] * rx + M[Q + 7] * ry + M[Q + 8] * rz);
      const e = Math.sqrt(ex * ex + ey * ey + ez * ez);
      if (e > E[g[v]]) E[g[v]] = e;
    }
  }

  /** The Frobenius norm of group g's map from the last fitAffine (a bound on its spectral norm). */
  mapNorm(g: number): number {
    const M = this.map, o = 9 * g;
    let a2 = 0;
    for (let i = 0; i < 9; i++) a2 += M[o + i] * M[o + i];
    return Math.sqrt(a2);
  }
}

/**
 * Per collision group, the mean over `vertices` of a - b (b = null: of a), 3 numbers per group into `mean`
 * (`count` gets the group sizes). A group's common translation leaves distances inside it unchanged, so motion
 * relative to this mean is what self-contact sees.
 */
export function groupMeans(
  mesh: CollisionMesh,
  vertices: Uint32Array,
  a: Float64Array,
  b: Float64Array | null,
  mean: Float64Array,
  count: Float64Array,
): void {
  const g = mesh.groupOfNode;
  mean.fill(0);
  count.fill(0);
  for (const v of vertices) {
    const o = 3 * v, q = 3 * g[v];
    count[g[v]]++;
    for (let k = 0; k < 3; k++) mean[q + k] += b ? a[o + k] - b[o + k] : a[o + k];
  }
  for (let i = 0; i < count.length; i++) if (count[i] > 0) for (let k = 0; k < 3; k++) mean[3 * i + k] /= count[i];
}
