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

// ---- translation-invariant Hessians ---------------------------------------------------------------------------

/**
 * Orthonormal bases of the vectors of R^m whose entries sum to zero (Helmert's), m = 2..4: row j - 1 holds
 * (1, ..., 1, -j, 0, ...) / sqrt(j (j + 1)) with j ones. HELMERT[m] is (m - 1) x m, row-major.
 */
const HELMERT: Float64Array[] = [0, 1, 2, 3, 4].map((m) => {
  const h = new Float64Array(Math.max(0, m - 1) * m);
  for (let j = 1; j < m; j++) {
    const s = 1 / Math.sqrt(j * (j + 1));
    for (let i = 0; i < j; i++) h[(j - 1) * m + i] = s;
    h[(j - 1) * m + j] = -j * s;
  }
  return h;
});

const tiNodes = new Int32Array(4);
const tiT = new Float64Array(12 * 9);
const tiReduced = new Float64Array(81);
const tiScratch = new Float64Array(psdScratchLength(9));

/**
 * projectPsdInPlace for the Hessian A (3k x 3k, k <= 4 points) of a function that a common translation of the
 * points leaves unchanged, such as a contact pair's barrier: A vanishes on the three translations, so its
 * eigenvectors with nonzero eigenvalues lie in the 3(k - 1) directions orthogonal to them (a Helmert basis Q
 * tensored with the 3x3 identity). Clamping the eigenvalues of Q^T A Q and mapping back is the same projection at a
 * fraction of the cost of the full one. Points whose rows and columns are all zero (the pair's distance does not
 * involve them: point-point and point-edge types) are dropped first, so a point-point pair is a 3x3 problem.
 * Returns the number of eigenvalues clamped. No allocation.
 */
export function projectPsdTranslationInvariant(A: Float64Array, k: number): number {
  if (k < 1 || k > 4) throw new Error(`projectPsdTranslationInvariant: 1 to 4 points, got ${k}`);
  const n = 3 * k;
  let m = 0;
  for (let u = 0; u < k; u++) {
    let used = false;
    for (let r = 3 * u; r < 3 * u + 3 && !used; r++) for (let c = 0; c < n; c++) if (A[n * r + c] !== 0) { used = true; break; }
    if (used) tiNodes[m++] = u;
  }
  if (m < 2) return 0; // one point alone: a translation-invariant function of it is constant
  const h = HELMERT[m];
  const r = 3 * (m - 1);
  // T = A_used Q (3m x r), then reduced = Q^T T (r x r); column (b, j) of Q is h[b] (x) e_j.
  const T = tiT, R = tiReduced;
  for (let u = 0; u < m; u++) {
    for (let i = 0; i < 3; i++) {
      const row = n * (3 * tiNodes[u] + i);
      for (let b = 0; b < m - 1; b++) {
        for (let j = 0; j < 3; j++) {
          let s = 0;
          for (let v = 0; v < m; v++) s += h[b * m + v] * A[row + 3 * tiNodes[v] + j];
          T[r * (3 * u + i) + 3 * b + j] = s;
        }
      }
    }
  }
  for (let a = 0; a < m - 1; a++) {
    for (let i = 0; i < 3; i++) {
      for (let c = 0; c < r; c++) {
        let s = 0;
        for (let u = 0; u < m; u++) s += h[a * m + u] * T[r * (3 * u + i) + c];
        R[r * (3 * a + i) + c] = s;
      }
    }
  }
  const clamped = projectPsdInPlace(R, r, tiScratch);
  if (clamped === 0) return 0; // A = Q R Q^T was already positive semi-definite
  // A_used = Q R Q^T: T = Q R (3m x r), then A_used = T Q^T.
  for (let u = 0; u < m; u++) {
    for (let i = 0; i < 3; i++) {
      for (let c = 0; c < r; c++) {
        let s = 0;
        for (let a = 0; a < m - 1; a++) s += h[a * m + u] * R[r * (3 * a + i) + c];
        T[r * (3 * u + i) + c] = s;
      }
    }
  }
  for (let u = 0; u < m; u++) {
    for (let i = 0; i < 3; i++) {
      const row = n * (3 * tiNodes[u] + i);
      for (let v = 0; v < m; v++) {
        for (let j = 0; j < 3; j++) {
          let s = 0;
          for (let b = 0; b < m - 1; b++) s += T[r * (3 * u + i) + 3 * b + j] * h[b * m + v];
          A[row + 3 * tiNodes[v] + j] = s;
        }
      }
    }
  }
  return clamped;
}
