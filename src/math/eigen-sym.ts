/**
 * Eigen-decomposition of small dense symmetric matrices by the cyclic Jacobi method, and projection onto the
 * positive semi-definite cone. Jacobi is slow for large n but exact to a few ulps, branch-light and robust to
 * repeated eigenvalues, which is what element Hessians (n <= 12) and test oracles need.
 * Matrices are row-major n x n (A[n * row + col]).
 */

const MAX_SWEEPS = 50;

/**
 * A = Q diag(values) Q^T. Writes the eigenvalues (unsorted) to values[0..n) and the eigenvectors as the columns
 * of Q (row-major n x n). A is not modified; `work` needs n * n entries. No allocation.
 */
export function symmetricEigen(
  A: ArrayLike<number>,
  n: number,
  values: Float64Array,
  Q: Float64Array,
  work: Float64Array,
): void {
  const a = work;
  let scale = 0;
  for (let i = 0; i < n * n; i++) {
    a[i] = A[i];
    Q[i] = 0;
    scale = Math.max(scale, Math.abs(A[i]));
  }
  for (let i = 0; i < n; i++) Q[n * i + i] = 1;
  if (scale > 0) {
    for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
      let off = 0;
      for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off = Math.max(off, Math.abs(a[n * p + q]));
      if (off <= 1e-300 || off <= 1e-17 * scale) break;
      for (let p = 0; p < n - 1; p++) {
        for (let q = p + 1; q < n; q++) {
          const apq = a[n * p + q];
          if (apq === 0) continue;
          const app = a[n * p + p];
          const aqq = a[n * q + q];
          // Skip entries already negligible against both diagonals (the classic Jacobi threshold).
          if (Math.abs(apq) < 1e-18 * (Math.abs(app) + Math.abs(aqq)) && Math.abs(apq) < 1e-17 * scale) {
            a[n * p + q] = a[n * q + p] = 0;
            continue;
          }
          const theta = (aqq - app) / (2 * apq);
          const t =
            Math.abs(theta) > 1e150
              ? 0.5 / theta
              : (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(1 + theta * theta));
          const c = 1 / Math.sqrt(1 + t * t);
          const s = t * c;
          // A <- J^T A J with J the rotation in the (p, q) plane; rows/columns other than p, q mix pairwise.
          for (let k = 0; k < n; k++) {
            const akp = a[n * k + p];
            const akq = a[n * k + q];
            a[n * k + p] = c * akp - s * akq;
            a[n * k + q] = s * akp + c * akq;
          }
          for (let k = 0; k < n; k++) {
            const apk = a[n * p + k];
            const aqk = a[n * q + k];
            a[n * p + k] = c * apk - s * aqk;
            a[n * q + k] = s * apk + c * aqk;
          }
          a[n * p + q] = a[n * q + p] = 0;
          for (let k = 0; k < n; k++) {
            const qkp = Q[n * k + p];
            const qkq = Q[n * k + q];
            Q[n * k + p] = c * qkp - s * qkq;
            Q[n * k + q] = s * qkp + c * qkq;
          }
        }
      }
    }
  }
  for (let i = 0; i < n; i++) values[i] = a[n * i + i];
}

/** Length of the scratch array projectPsdInPlace needs for an n x n matrix. */
export function psdScratchLength(n: number): number {
  return 2 * n * n + n;
}

/**
 * Replaces the symmetric A by its nearest positive semi-definite matrix in the Frobenius norm: negative eigenvalues
 * clamped to 0. Returns the number of eigenvalues clamped. `scratch` needs psdScratchLength(n) entries.
 */
export function projectPsdInPlace(A: Float64Array, n: number, scratch: Float64Array): number {
  // Most element Hessians are already positive definite: a successful Cholesky proves it at a fraction of the
  // cost of the eigen-decomposition, and leaves A untouched.
  if (isPositiveDefinite(A, n, scratch)) return 0;
  const nn = n * n;
  const Q = scratch.subarray(0, nn);
  const work = scratch.subarray(nn, 2 * nn);
  const values = scratch.subarray(2 * nn, 2 * nn + n);
  symmetricEigen(A, n, values, Q, work);
  let clamped = 0;
  for (let k = 0; k < n; k++) {
    if (values[k] < 0) {
      values[k] = 0;
      clamped++;
    }
  }
  if (clamped === 0) return 0;
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += Q[n * i + k] * values[k] * Q[n * j + k];
      A[n * i + j] = s;
      A[n * j + i] = s;
    }
  }
  return clamped;
}

/**
 * True when the symmetric A is positive definite: an LDL^T factorisation (no square roots) with positive pivots.
 * `work` needs n * n entries.
 */
export function isPositiveDefinite(A: ArrayLike<number>, n: number, work: Float64Array): boolean {
  // work holds L (strictly lower part) and the pivots d on the diagonal.
  const L = work;
  for (let j = 0; j < n; j++) {
    let d = A[n * j + j];
    for (let k = 0; k < j; k++) d -= L[n * j + k] * L[n * j + k] * L[n * k + k];
    if (!(d > 0)) return false;
    L[n * j + j] = d;
    for (let i = j + 1; i < n; i++) {
      let v = A[n * i + j];
      for (let k = 0; k < j; k++) v -= L[n * i + k] * L[n * j + k] * L[n * k + k];
      L[n * i + j] = v / d;
    }
  }
  return true;
}
