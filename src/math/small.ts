/**
 * 3x3 matrix helpers on Float64Array, row-major (A[3 * row + col]), gl-matrix style: results go to an out
 * argument, nothing is allocated. `out` may alias an input only where a function says so.
 */
import { svd3 } from './svd3.js';

export function det3(A: ArrayLike<number>): number {
  return (
    A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6])
  );
}

/** Cofactor matrix, cof(A) = det(A) A^{-T} = dJ/dA; defined for singular A too. out must not alias A. */
export function cofactor3(A: ArrayLike<number>, out: Float64Array): Float64Array {
  out[0] = A[4] * A[8] - A[5] * A[7];
  out[1] = A[5] * A[6] - A[3] * A[8];
  out[2] = A[3] * A[7] - A[4] * A[6];
  out[3] = A[2] * A[7] - A[1] * A[8];
  out[4] = A[0] * A[8] - A[2] * A[6];
  out[5] = A[1] * A[6] - A[0] * A[7];
  out[6] = A[1] * A[5] - A[2] * A[4];
  out[7] = A[2] * A[3] - A[0] * A[5];
  out[8] = A[0] * A[4] - A[1] * A[3];
  return out;
}

/** out = A^{-1}; returns det(A). With det = 0 the result holds Infinity/NaN: callers check the return value. */
export function inverse3(A: ArrayLike<number>, out: Float64Array): number {
  const c00 = A[4] * A[8] - A[5] * A[7];
  const c01 = A[5] * A[6] - A[3] * A[8];
  const c02 = A[3] * A[7] - A[4] * A[6];
  const det = A[0] * c00 + A[1] * c01 + A[2] * c02;
  const inv = 1 / det;
  // The inverse is the transposed cofactor matrix over det; read A fully before writing (out may alias A).
  const c10 = A[2] * A[7] - A[1] * A[8];
  const c11 = A[0] * A[8] - A[2] * A[6];
  const c12 = A[1] * A[6] - A[0] * A[7];
  const c20 = A[1] * A[5] - A[2] * A[4];
  const c21 = A[2] * A[3] - A[0] * A[5];
  const c22 = A[0] * A[4] - A[1] * A[3];
  out[0] = c00 * inv;
  out[1] = c10 * inv;
  out[2] = c20 * inv;
  out[3] = c01 * inv;
  out[4] = c11 * inv;
  out[5] = c21 * inv;
  out[6] = c02 * inv;
  out[7] = c12 * inv;
  out[8] = c22 * inv;
  return det;
}

export function transpose3(A: ArrayLike<number>, out: Float64Array): Float64Array {
  const a1 = A[1];
  const a2 = A[2];
  const a5 = A[5];
  out[0] = A[0];
  out[1] = A[3];
  out[2] = A[6];
  out[3] = a1;
  out[4] = A[4];
  out[5] = A[7];
  out[6] = a2;
  out[7] = a5;
  out[8] = A[8];
  return out;
}

/** out = A B. out must not alias A or B. */
export function multiply3(A: ArrayLike<number>, B: ArrayLike<number>, out: Float64Array): Float64Array {
  for (let r = 0; r < 3; r++) {
    const a0 = A[3 * r];
    const a1 = A[3 * r + 1];
    const a2 = A[3 * r + 2];
    out[3 * r] = a0 * B[0] + a1 * B[3] + a2 * B[6];
    out[3 * r + 1] = a0 * B[1] + a1 * B[4] + a2 * B[7];
    out[3 * r + 2] = a0 * B[2] + a1 * B[5] + a2 * B[8];
  }
  return out;
}

/** out = A B^T. out must not alias A or B. */
export function multiplyABt(A: ArrayLike<number>, B: ArrayLike<number>, out: Float64Array): Float64Array {
  for (let r = 0; r < 3; r++) {
    const a0 = A[3 * r];
    const a1 = A[3 * r + 1];
    const a2 = A[3 * r + 2];
    out[3 * r] = a0 * B[0] + a1 * B[1] + a2 * B[2];
    out[3 * r + 1] = a0 * B[3] + a1 * B[4] + a2 * B[5];
    out[3 * r + 2] = a0 * B[6] + a1 * B[7] + a2 * B[8];
  }
  return out;
}

/** out = A^T B. out must not alias A or B. */
export function multiplyAtB(A: ArrayLike<number>, B: ArrayLike<number>, out: Float64Array): Float64Array {
  for (let r = 0; r < 3; r++) {
    const a0 = A[r];
    const a1 = A[3 + r];
    const a2 = A[6 + r];
    out[3 * r] = a0 * B[0] + a1 * B[3] + a2 * B[6];
    out[3 * r + 1] = a0 * B[1] + a1 * B[4] + a2 * B[7];
    out[3 * r + 2] = a0 * B[2] + a1 * B[5] + a2 * B[8];
  }
  return out;
}

/** Sum of squares of the entries (|A|_F^2). */
export function frobeniusSquared(A: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < 9; i++) s += A[i] * A[i];
  return s;
}

const polarU = new Float64Array(9);
const polarV = new Float64Array(9);
const polarSigma = new Float64Array(3);

/**
 * Polar decomposition F = R S with R a proper rotation (det R = +1) and S symmetric, from the rotation-variant
 * SVD: R = U V^T, S = V diag(sigma) V^T. For det F < 0, S has one negative eigenvalue: that is the convention
 * of the fixed-corotated model (R stays a rotation, never a reflection). S may be null when only R is needed.
 */
export function polarDecomposition(F: ArrayLike<number>, R: Float64Array, S: Float64Array | null): void {
  svd3(F, polarU, polarSigma, polarV);
  multiplyABt(polarU, polarV, R);
  if (S) {
    const V = polarV;
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++)
        S[3 * r + c] =
          V[3 * r] * polarSigma[0] * V[3 * c] +
          V[3 * r + 1] * polarSigma[1] * V[3 * c + 1] +
          V[3 * r + 2] * polarSigma[2] * V[3 * c + 2];
  }
}
