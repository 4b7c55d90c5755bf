/**
 * Eigen-decomposition of small dense symmetric matrices by the cyclic Jacobi method, and projection onto the
 * positive semi-definite cone. Jacobi is slow for large n but exact to a few ulps, branch-light and robust to
 * repeated eigenvalues, which is what element Hessians (n <= 12) and test oracles need.
 * Matrices are row-major n x n (A[n * row + col]).
 */

const MAX_SWEEPS = 50;

/** Copies A to a, sets Q = I; returns the largest |entry| of A. */
function startDecomposition(A: ArrayLike<number>, n: number, a: Float64Array, Q: Float64Array): number {
  let scale = 0;
  for (let i = 0; i < n * n; i++) {
    a[i] = A[i];
    Q[i] = 0;
    scale = Math.max(scale, Math.abs(A[i]));
  }
  for (let i = 0; i < n; i++) Q[n * i + i] = 1;
  return scale;
}

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
  const scale = startDecomposition(A, n, a, Q);
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

/**
 * The same decomposition as symmetricEigen by Householder reduction to tridiagonal form and implicit QR sweeps
 * with Wilkinson shifts: about a quarter of Jacobi's work at n = 9, which is what the contact barrier's many
 * projections need. Eigenvalues come out with absolute error near 1e-16 times the largest entry (Jacobi's is
 * relative to each eigenvalue); falls back to Jacobi in the unlikely case the sweeps do not settle. Same arguments.
 */
export function tridiagonalEigen(
  A: ArrayLike<number>,
  n: number,
  values: Float64Array,
  Q: Float64Array,
  work: Float64Array,
): void {
  const a = work;
  const scale = startDecomposition(A, n, a, Q);
  if (!(scale > 0)) {
    for (let i = 0; i < n; i++) values[i] = a[n * i + i];
    return;
  }
  // work on A / scale: entries in [-1, 1], so plain sqrt(x^2 + z^2) neither overflows nor loses to underflow
  const unit = 1 / scale;
  for (let i = 0; i < n * n; i++) a[i] *= unit;
  const v = values; // Householder vectors live in values until the end
  // Householder: zero column k below its subdiagonal with H = I - 2 u u^T acting on rows/columns k+1..n-1.
  for (let k = 0; k < n - 2; k++) {
    const b = k + 1;
    let tail = 0;
    for (let i = b + 1; i < n; i++) tail += a[n * i + k] * a[n * i + k];
    if (tail <= 1e-300) continue; // already tridiagonal in this column
    const x0 = a[n * b + k];
    const sigma = Math.sqrt(x0 * x0 + tail);
    const alpha = x0 >= 0 ? -sigma : sigma; // the sign that avoids cancellation in u_0 = x_0 - alpha
    const u0 = x0 - alpha;
    const inv = 1 / Math.sqrt(u0 * u0 + tail);
    v[b] = u0 * inv;
    for (let i = b + 1; i < n; i++) v[i] = a[n * i + k] * inv;
    // trailing block B <- H B H = B - u w^T - w u^T, w = 2 (p - (u^T p) u), p = B u
    let K = 0;
    for (let i = b; i < n; i++) {
      let p = 0;
      for (let j = b; j < n; j++) p += a[n * i + j] * v[j];
      a[n * i + k] = p; // column k is rewritten below: borrow it for p
      K += v[i] * p;
    }
    for (let i = b; i < n; i++) a[n * i + k] = 2 * (a[n * i + k] - K * v[i]);
    for (let i = b; i < n; i++) {
      const wi = a[n * i + k];
      for (let j = b; j <= i; j++) {
        const e = a[n * i + j] - v[i] * a[n * j + k] - wi * v[j];
        a[n * i + j] = e;
        a[n * j + i] = e;
      }
    }
    for (let i = b + 1; i < n; i++) a[n * i + k] = a[n * k + i] = 0;
    a[n * b + k] = a[n * k + b] = alpha;
    // Q <- Q H
    for (let i = 0; i < n; i++) {
      let t = 0;
      for (let j = b; j < n; j++) t += Q[n * i + j] * v[j];
      t *= 2;
      for (let j = b; j < n; j++) Q[n * i + j] -= t * v[j];
    }
  }
  // Implicit symmetric QR on the tridiagonal matrix (still stored dense): rotations in planes (k, k+1) chase the
  // bulge down the unreduced block [p, q]; T <- J^T T J touches rows/columns k-1..k+2 only, Q <- Q J.
  let q = n - 1;
  let sweeps = 0;
  while (q > 0) {
    if (negligibleSubdiagonal(a, n, q - 1)) {
      a[n * q + q - 1] = a[n * (q - 1) + q] = 0;
      q--;
      continue;
    }
    let p = q - 1;
    while (p > 0 && !negligibleSubdiagonal(a, n, p - 1)) p--;
    if (p > 0) a[n * p + p - 1] = a[n * (p - 1) + p] = 0;
    if (++sweeps > 30 * n) {
      symmetricEigen(A, n, values, Q, work);
      return;
    }
    // Wilkinson shift: the eigenvalue of the trailing 2x2 block nearer its last diagonal entry
    const dq = a[n * q + q];
    const eq = a[n * q + q - 1];
    const delta = (a[n * (q - 1) + q - 1] - dq) / 2;
    const mu = dq - (eq * eq) / (delta + (delta >= 0 ? 1 : -1) * Math.sqrt(delta * delta + eq * eq));
    let x = a[n * p + p] - mu;
    let z = a[n * (p + 1) + p];
    for (let k = p; k < q; k++) {
      if (k > p) {
        x = a[n * k + k - 1];
        z = a[n * (k + 1) + k - 1];
      }
      const r = Math.sqrt(x * x + z * z);
      if (r === 0) continue;
      const c = x / r;
      const s = -z / r;
      const lo = Math.max(p, k - 1);
      const hi = Math.min(q, k + 2);
      for (let i = lo; i <= hi; i++) {
        const aik = a[n * i + k];
        const ail = a[n * i + k + 1];
        a[n * i + k] = c * aik - s * ail;
        a[n * i + k + 1] = s * aik + c * ail;
      }
      for (let j = lo; j <= hi; j++) {
        const akj = a[n * k + j];
        const alj = a[n * (k + 1) + j];
        a[n * k + j] = c * akj - s * alj;
        a[n * (k + 1) + j] = s * akj + c * alj;
      }
      if (k > p) a[n * (k + 1) + k - 1] = a[n * (k - 1) + k + 1] = 0; // the bulge just chased
      for (let i = 0; i < n; i++) {
        const qik = Q[n * i + k];
        const qil = Q[n * i + k + 1];
        Q[n * i + k] = c * qik - s * qil;
        Q[n * i + k + 1] = s * qik + c * qil;
      }
    }
  }
  for (let i = 0; i < n; i++) values[i] = a[n * i + i] * scale;
}

/** Entry (i + 1, i) of a matrix scaled to entries <= 1 is round-off against its diagonal neighbours (or against 1). */
function negligibleSubdiagonal(a: Float64Array, n: number, i: number): boolean {
  const e = Math.abs(a[n * (i + 1) + i]);
  return e <= 1e-17 || e <= 2.3e-16 * (Math.abs(a[n * i + i]) + Math.abs(a[n * (i + 1) + i + 1]));
}

/** Length of the scratch array projectPsdInPlace needs for an n x n matrix. */
export function psdScratchLength(n: number): number {
  return 2 * n * n + n;
}

/**
 * Replaces the symmetric A by its nearest positive semi-definite matrix in the Frobenius norm: negative eigenvalues
 * clamped to 0; or, with `absolute`, by |A| (negative eigenvalues replaced by their absolute value, the same
 * eigenvectors). Returns the number of negative eigenvalues. `scratch` needs psdScratchLength(n) entries.
 */
export function projectPsdInPlace(A: Float64Array, n: number, scratch: Float64Array, absolute = false): number {
  // Most element Hessians are already positive definite: a successful Cholesky proves it at a fraction of the
  // cost of the eigen-decomposition, and leaves A untouched.
  if (isPositiveDefinite(A, n, scratch)) return 0;
  const nn = n * n;
  const Q = scratch.subarray(0, nn);
  const work = scratch.subarray(nn, 2 * nn);
  const values = scratch.subarray(2 * nn, 2 * nn + n);
  tridiagonalEigen(A, n, values, Q, work);
  let clamped = 0;
  for (let k = 0; k < n; k++) if (values[k] < 0) clamped++;
  if (clamped === 0) return 0;
  // A+ = A - sum over the negative pairs of lambda q q^T (|A| = A - 2 sum ...): cheaper than rebuilding from the
  // positive ones when few are negative (the usual contact pair), and equal up to round-off.
  const subtract = 2 * clamped <= n;
  const removed = absolute ? 2 : 1;
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) {
        const lambda = values[k];
        if (subtract) {
          if (lambda < 0) s += Q[n * i + k] * lambda * Q[n * j + k];
        } else if (lambda > 0 || absolute) s += Q[n * i + k] * Math.abs(lambda) * Q[n * j + k];
      }
      if (subtract) s = A[n * i + j] - removed * s;
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
 * Helmert's orthonormal basis of the vectors of R^m whose entries sum to zero: vector b (1..m-1) is
 * (1, ..., 1, -b, 0, ...) w_b with b ones and w_b = 1 / sqrt(b (b + 1)). HELMERT_WEIGHT[b] = w_b.
 */
const HELMERT_WEIGHT = Float64Array.from([0, 1, 2, 3], (b) => (b > 0 ? 1 / Math.sqrt(b * (b + 1)) : 0));

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
 * Returns the number of eigenvalues clamped (with `absolute`, replaced by their absolute value). No allocation.
 */
export function projectPsdTranslationInvariant(A: Float64Array, k: number, absolute = false): number {
  if (k < 1 || k > 4) throw new Error(`projectPsdTranslationInvariant: 1 to 4 points, got ${k}`);
  const n = 3 * k;
  let m = 0;
  for (let u = 0; u < k; u++) {
    let used = false;
    for (let r = 3 * u; r < 3 * u + 3 && !used; r++) for (let c = 0; c < n; c++) if (A[n * r + c] !== 0) { used = true; break; }
    if (used) tiNodes[m++] = u;
  }
  if (m < 2) return 0; // one point alone: a translation-invariant function of it is constant
  const r = 3 * (m - 1);
  const w = HELMERT_WEIGHT;
  // Helmert component b (1..m-1) of blocks y_0..y_{m-1} is (y_0 + ... + y_{b-1} - b y_b) w_b: running sums make
  // each product with Q or Q^T linear in m. T = A_used Q (3m x r), then R = Q^T T (r x r).
  const T = tiT, R = tiReduced;
  for (let u = 0; u < m; u++) {
    for (let i = 0; i < 3; i++) {
      const row = n * (3 * tiNodes[u] + i);
      const t = r * (3 * u + i);
      for (let j = 0; j < 3; j++) {
        let sum = A[row + 3 * tiNodes[0] + j];
        for (let b = 1; b < m; b++) {
          const y = A[row + 3 * tiNodes[b] + j];
          T[t + 3 * (b - 1) + j] = (sum - b * y) * w[b];
          sum += y;
        }
      }
    }
  }
  for (let i = 0; i < 3; i++) {
    for (let c = 0; c < r; c++) {
      let sum = T[r * i + c];
      for (let a = 1; a < m; a++) {
        const y = T[r * (3 * a + i) + c];
        R[r * (3 * (a - 1) + i) + c] = (sum - a * y) * w[a];
        sum += y;
      }
    }
  }
  const clamped = projectPsdInPlace(R, r, tiScratch, absolute);
  if (clamped === 0) return 0; // A = Q R Q^T was already positive semi-definite
  // Back: block u of Q z is sum_{a > u} w_a z_a - u w_u z_u (suffix sums). T = Q R (3m x r), then A_used = T Q^T.
  for (let i = 0; i < 3; i++) {
    for (let c = 0; c < r; c++) {
      let sum = 0;
      for (let u = m - 1; u >= 0; u--) {
        const z = u > 0 ? w[u] * R[r * (3 * (u - 1) + i) + c] : 0;
        T[r * (3 * u + i) + c] = sum - u * z;
        sum += z;
      }
    }
  }
  for (let u = 0; u < m; u++) {
    for (let i = 0; i < 3; i++) {
      const row = n * (3 * tiNodes[u] + i);
      const t = r * (3 * u + i);
      for (let j = 0; j < 3; j++) {
        let sum = 0;
        for (let v = m - 1; v >= 0; v--) {
          const z = v > 0 ? w[v] * T[t + 3 * (v - 1) + j] : 0;
          A[row + 3 * tiNodes[v] + j] = sum - v * z;
          sum += z;
        }
      }
    }
  }
  return clamped;
}
