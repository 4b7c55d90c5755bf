/**
 * Rotation-variant SVD of a 3x3 matrix: F = U diag(sigma) V^T with U and V proper rotations (det = +1),
 * sigma_1 >= sigma_2 >= |sigma_3| (up to round-off), and sigma_3 < 0 exactly when det F < 0. This is the form
 * isotropic elasticity wants (Irving et al. 2004): an inverted element keeps rotations in its polar factor and
 * shows the inversion in the sign of the smallest singular value.
 *
 * Method: one-sided (Hestenes) Jacobi. Plane rotations V applied to the columns of F until they are mutually
 * orthogonal; then the column norms are the singular values and the normalised columns are U. Working on F itself
 * rather than on F^T F keeps small singular values accurate to about eps * |F| and needs no eigen-solver. The
 * third column of U is u1 x u2, so U is a rotation by construction and sigma_3 = u3 . (F v3) carries the sign.
 * Matrices are row-major (A[3 * row + col]). Everything lives in local variables (a_jr: row r of column j of
 * A = F V; v_jr: of V): this runs once per tet per Newton iteration, and locals are several times faster than
 * scratch arrays in V8.
 */

/** Squared relative orthogonality at which a column pair counts as converged (cosine below ~1e-15). */
const TOL2 = 1e-30;
/**
 * Beyond this |zeta| the rotation angle t < 5e-7, and the first-order formulas carry relative errors of order
 * t^2 < 2.5e-13 in an angle whose effect on the columns is itself t-small: below double round-off. Saves two
 * square roots in the last sweeps, which is most of the rotations.
 */
const SMALL_ANGLE_ZETA = 1e6;
/** Quadratic convergence makes 3-5 sweeps typical; the cap only guards against pathological inputs. */
const MAX_SWEEPS = 30;

/** The factors of one decomposition F = U diag(sigma) V^T as svd3 writes them (passed on so no one decomposes F twice). */
export interface Svd3Factors {
  readonly U: Float64Array;
  readonly sigma: Float64Array;
  readonly V: Float64Array;
}

/**
 * Writes U (3x3), sigma (3) and V (3x3) with F = U diag(sigma) V^T. F = 0 gives U = V = I, sigma = 0.
 * No allocation.
 */
export function svd3(F: ArrayLike<number>, U: Float64Array, sigma: Float64Array, V: Float64Array): void {
  // Scale to unit max entry so squared norms neither overflow nor underflow.
  let scale = 0;
  for (let i = 0; i < 9; i++) {
    const a = Math.abs(F[i]);
    if (a > scale) scale = a;
  }
  if (!(scale > 0) || !Number.isFinite(scale)) {
    U.fill(0);
    V.fill(0);
    U[0] = U[4] = U[8] = 1;
    V[0] = V[4] = V[8] = 1;
    sigma[0] = sigma[1] = sigma[2] = scale > 0 || Number.isNaN(scale) ? NaN : 0;
    return;
  }
  const inv = 1 / scale;
  let v00 = 1;
  let v01 = 0;
  let v02 = 0;
  let v10 = 0;
  let v11 = 1;
  let v12 = 0;
  let v20 = 0;
  let v21 = 0;
  let v22 = 1;
  // Columns of A = F V start as the columns of F (V = I), scaled.
  let a00 = F[0] * inv;
  let a01 = F[3] * inv;
  let a02 = F[6] * inv;
  let a10 = F[1] * inv;
  let a11 = F[4] * inv;
  let a12 = F[7] * inv;
  let a20 = F[2] * inv;
  let a21 = F[5] * inv;
  let a22 = F[8] * inv;

  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    let rotated = false;
    // Pair (0, 1).
    {
      const alpha = a00 * a00 + a01 * a01 + a02 * a02;
      const beta = a10 * a10 + a11 * a11 + a12 * a12;
      const gamma = a00 * a10 + a01 * a11 + a02 * a12;
      if (gamma * gamma > TOL2 * alpha * beta) {
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        let t: number;
        let c: number;
        if (Math.abs(zeta) > SMALL_ANGLE_ZETA) {
          // Tiny angle (late sweeps): t = 1/(2 zeta) and c = 1 - t^2/2 are exact to O(t^3), below round-off here.
          t = 0.5 / zeta;
          c = 1 - 0.5 * t * t;
        } else {
          t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
          c = 1 / Math.sqrt(1 + t * t);
        }
        const s = c * t;
        const x0 = a00;
        a00 = c * x0 - s * a10;
        a10 = s * x0 + c * a10;
        const x1 = a01;
        a01 = c * x1 - s * a11;
        a11 = s * x1 + c * a11;
        const x2 = a02;
        a02 = c * x2 - s * a12;
        a12 = s * x2 + c * a12;
        const y0 = v00;
        v00 = c * y0 - s * v10;
        v10 = s * y0 + c * v10;
        const y1 = v01;
        v01 = c * y1 - s * v11;
        v11 = s * y1 + c * v11;
        const y2 = v02;
        v02 = c * y2 - s * v12;
        v12 = s * y2 + c * v12;
      }
    }
    // Pair (0, 2).
    {
      const alpha = a00 * a00 + a01 * a01 + a02 * a02;
      const beta = a20 * a20 + a21 * a21 + a22 * a22;
      const gamma = a00 * a20 + a01 * a21 + a02 * a22;
      if (gamma * gamma > TOL2 * alpha * beta) {
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        let t: number;
        let c: number;
        if (Math.abs(zeta) > SMALL_ANGLE_ZETA) {
          // Tiny angle (late sweeps): t = 1/(2 zeta) and c = 1 - t^2/2 are exact to O(t^3), below round-off here.
          t = 0.5 / zeta;
          c = 1 - 0.5 * t * t;
        } else {
          t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
          c = 1 / Math.sqrt(1 + t * t);
        }
        const s = c * t;
        const x0 = a00;
        a00 = c * x0 - s * a20;
        a20 = s * x0 + c * a20;
        const x1 = a01;
        a01 = c * x1 - s * a21;
        a21 = s * x1 + c * a21;
        const x2 = a02;
        a02 = c * x2 - s * a22;
        a22 = s * x2 + c * a22;
        const y0 = v00;
        v00 = c * y0 - s * v20;
        v20 = s * y0 + c * v20;
        const y1 = v01;
        v01 = c * y1 - s * v21;
        v21 = s * y1 + c * v21;
        const y2 = v02;
        v02 = c * y2 - s * v22;
        v22 = s * y2 + c * v22;
      }
    }
    // Pair (1, 2).
    {
      const alpha = a10 * a10 + a11 * a11 + a12 * a12;
      const beta = a20 * a20 + a21 * a21 + a22 * a22;
      const gamma = a10 * a20 + a11 * a21 + a12 * a22;
      if (gamma * gamma > TOL2 * alpha * beta) {
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        let t: number;
        let c: number;
        if (Math.abs(zeta) > SMALL_ANGLE_ZETA) {
          // Tiny angle (late sweeps): t = 1/(2 zeta) and c = 1 - t^2/2 are exact to O(t^3), below round-off here.
          t = 0.5 / zeta;
          c = 1 - 0.5 * t * t;
        } else {
          t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
          c = 1 / Math.sqrt(1 + t * t);
        }
        const s = c * t;
        const x0 = a10;
        a10 = c * x0 - s * a20;
        a20 = s * x0 + c * a20;
        const x1 = a11;
        a11 = c * x1 - s * a21;
        a21 = s * x1 + c * a21;
        const x2 = a12;
        a12 = c * x2 - s * a22;
        a22 = s * x2 + c * a22;
        const y0 = v10;
        v10 = c * y0 - s * v20;
        v20 = s * y0 + c * v20;
        const y1 = v11;
        v11 = c * y1 - s * v21;
        v21 = s * y1 + c * v21;
        const y2 = v12;
        v12 = c * y2 - s * v22;
        v22 = s * y2 + c * v22;
      }
    }
    if (!rotated) break;
  }

  // Sort columns by decreasing norm.
  let n0 = a00 * a00 + a01 * a01 + a02 * a02;
  let n1 = a10 * a10 + a11 * a11 + a12 * a12;
  let n2 = a20 * a20 + a21 * a21 + a22 * a22;
  if (n0 < n1) {
    // Swap columns 0 and 1, negating the new column 1 so det V stays +1 and A = F V still holds.
    {
      const ta0 = a00;
      a00 = a10;
      a10 = -ta0;
      const ta1 = a01;
      a01 = a11;
      a11 = -ta1;
      const ta2 = a02;
      a02 = a12;
      a12 = -ta2;
      const tv0 = v00;
      v00 = v10;
      v10 = -tv0;
      const tv1 = v01;
      v01 = v11;
      v11 = -tv1;
      const tv2 = v02;
      v02 = v12;
      v12 = -tv2;
      const tn = n0;
      n0 = n1;
      n1 = tn;
    }
  }
  if (n0 < n2) {
    // Swap columns 0 and 2, negating the new column 2 so det V stays +1 and A = F V still holds.
    {
      const ta0 = a00;
      a00 = a20;
      a20 = -ta0;
      const ta1 = a01;
      a01 = a21;
      a21 = -ta1;
      const ta2 = a02;
      a02 = a22;
      a22 = -ta2;
      const tv0 = v00;
      v00 = v20;
      v20 = -tv0;
      const tv1 = v01;
      v01 = v21;
      v21 = -tv1;
      const tv2 = v02;
      v02 = v22;
      v22 = -tv2;
      const tn = n0;
      n0 = n2;
      n2 = tn;
    }
  }
  if (n1 < n2) {
    // Swap columns 1 and 2, negating the new column 2 so det V stays +1 and A = F V still holds.
    {
      const ta0 = a10;
      a10 = a20;
      a20 = -ta0;
      const ta1 = a11;
      a11 = a21;
      a21 = -ta1;
      const ta2 = a12;
      a12 = a22;
      a22 = -ta2;
      const tv0 = v10;
      v10 = v20;
      v20 = -tv0;
      const tv1 = v11;
      v11 = v21;
      v21 = -tv1;
      const tv2 = v12;
      v12 = v22;
      v22 = -tv2;
      const tn = n1;
      n1 = n2;
      n2 = tn;
    }
  }

  // u1 = a1 / |a1| (n0 > 0 since F != 0 and V is orthogonal).
  const s0 = Math.sqrt(n0);
  let u00 = a00 / s0;
  let u01 = a01 / s0;
  let u02 = a02 / s0;
  const un = 1 / Math.sqrt(u00 * u00 + u01 * u01 + u02 * u02);
  u00 *= un;
  u01 *= un;
  u02 *= un;

  // u2: a2 with its (round-off) component along u1 removed; any unit normal to u1 when a2 vanishes.
  const d = u00 * a10 + u01 * a11 + u02 * a12;
  let u10 = a10 - d * u00;
  let u11 = a11 - d * u01;
  let u12 = a12 - d * u02;
  let l1 = Math.sqrt(u10 * u10 + u11 * u11 + u12 * u12);
  if (!(l1 > 1e-30 * s0)) {
    // Cross u1 with the coordinate axis it is least aligned with.
    const ax = Math.abs(u00);
    const ay = Math.abs(u01);
    const az = Math.abs(u02);
    if (ax <= ay && ax <= az) {
      u10 = 0;
      u11 = u02;
      u12 = -u01;
    } else if (ay <= az) {
      u10 = -u02;
      u11 = 0;
      u12 = u00;
    } else {
      u10 = u01;
      u11 = -u00;
      u12 = 0;
    }
    l1 = Math.sqrt(u10 * u10 + u11 * u11 + u12 * u12);
  }
  u10 /= l1;
  u11 /= l1;
  u12 /= l1;

  // u3 = u1 x u2 makes U a rotation; sigma_3 takes the sign of det F.
  const u20 = u01 * u12 - u02 * u11;
  const u21 = u02 * u10 - u00 * u12;
  const u22 = u00 * u11 - u01 * u10;

  sigma[0] = s0 * scale;
  sigma[1] = (u10 * a10 + u11 * a11 + u12 * a12) * scale;
  sigma[2] = (u20 * a20 + u21 * a21 + u22 * a22) * scale;

  // Column j of U is u_j; column j of V is v_j.
  U[0] = u00;
  U[3] = u01;
  U[6] = u02;
  U[1] = u10;
  U[4] = u11;
  U[7] = u12;
  U[2] = u20;
  U[5] = u21;
  U[8] = u22;
  V[0] = v00;
  V[3] = v01;
  V[6] = v02;
  V[1] = v10;
  V[4] = v11;
  V[7] = v12;
  V[2] = v20;
  V[5] = v21;
  V[8] = v22;
}
