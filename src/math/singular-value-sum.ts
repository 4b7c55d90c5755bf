/**
 * The sum of the signed singular values of a 3x3 matrix, s = sigma_1 + sigma_2 + sigma_3 (sigma_3 < 0 exactly when
 * det F < 0, as svd3 gives them), without decomposing F. This is the trace of F's polar rotation applied to F,
 * max over rotations R of tr(R^T F), and all the corotated energy needs of the SVD:
 * sum (sigma_i - 1)^2 = |F|^2 - 2 s + 3.
 *
 * With I1 = |F|^2 = sum sigma_i^2, I2 = |cof F|^2 = sum_{i<j} sigma_i^2 sigma_j^2 and J = det F, the pairwise sum
 * t = sigma_1 sigma_2 + sigma_1 sigma_3 + sigma_2 sigma_3 satisfies s^2 = I1 + 2 t and t^2 = I2 + 2 J s, so s is a
 * root of the quartic
 *
 *     f(s) = (s^2 - I1)^2 - 4 I2 - 8 J s,
 *
 * whose four roots are the sums +-sigma_1 +- sigma_2 +- sigma_3 with an even number of minus signs: s is the
 * largest. All roots are real, so Newton's method started above the largest one, at sqrt(3 I1) >= s
 * (Cauchy-Schwarz), descends to it monotonically. It is cheap (a few dozen flops against the Jacobi SVD's few
 * hundred) and accurate where f'(s) = 8 (sigma_1 + sigma_2)(sigma_1 + sigma_3)(sigma_2 + sigma_3) is not small. It
 * is small only where sigma_2 + sigma_3 nears 0, an element inverted through a flat state (there two roots meet and
 * F's polar rotation itself jumps): there the sum returns NaN and the caller takes the SVD.
 */
/** Rounding of f near the root, amplified by 1/f'(s), beyond which the SVD is asked for: about 1e-14 relative in s. */
const MAX_AMPLIFICATION = 100;
/** Newton from sqrt(3 I1) takes 0-8 iterations for stretches up to 100:1; more means a (near) double root. */
const MAX_ITERATIONS = 40;
/** The range of |F|^2 in which the quartic's terms, all of order |F|^4, stay normal doubles. */
const SMALLEST_I1 = 1e-70;
const LARGEST_I1 = 1e70;

/**
 * sigma_1 + sigma_2 + sigma_3 of F (3x3 row-major, sigma_3 signed as svd3's), or NaN where it cannot be had
 * accurately this way (near sigma_2 + sigma_3 = 0, or F not finite): the caller then uses svd3.
 */
export function signedSingularValueSum(F: ArrayLike<number>): number {
  const a = F[0], b = F[1], c = F[2];
  const d = F[3], e = F[4], f = F[5];
  const g = F[6], h = F[7], k = F[8];
  const I1 = a * a + b * b + c * c + d * d + e * e + f * f + g * g + h * h + k * k;
  // Fourth powers of the entries must neither overflow nor underflow; beyond this range (or for NaN) the SVD,
  // which scales F first, takes over.
  if (!(I1 > SMALLEST_I1 && I1 < LARGEST_I1)) return isZero(F) ? 0 : NaN;
  // |cof F|^2: the squared 2x2 minors (no cancellation, unlike (I1^2 - |F^T F|^2) / 2).
  const m0 = e * k - f * h, m1 = d * k - f * g, m2 = d * h - e * g;
  const m3 = b * k - c * h, m4 = a * k - c * g, m5 = a * h - b * g;
  const m6 = b * f - c * e, m7 = a * f - c * d, m8 = a * e - b * d;
  const I2 = m0 * m0 + m1 * m1 + m2 * m2 + m3 * m3 + m4 * m4 + m5 * m5 + m6 * m6 + m7 * m7 + m8 * m8;
  const J8 = 8 * (a * m0 - b * m1 + c * m2);
  const I2x4 = 4 * I2;
  let s = Math.sqrt(3 * I1);
  let q = s * s - I1;
  let slope = 4 * s * q - J8;
  for (let it = 0; ; it++) {
    const value = q * q - I2x4 - J8 * s;
    // Above the largest root f and f' are positive; f <= 0 is the root reached to round-off (or a start on it).
    if (!(value > 0) || !(slope > 0)) break;
    const next = s - value / slope;
    if (!(next < s)) break;
    if (it === MAX_ITERATIONS) return NaN;
    s = next;
    q = s * s - I1;
    slope = 4 * s * q - J8;
  }
  // |f| rounds at about eps I1^2; the root moves by that over f'(s). Relative to s, past MAX_AMPLIFICATION eps: SVD.
  return slope * s * MAX_AMPLIFICATION > I1 * I1 ? s : NaN;
}

function isZero(F: ArrayLike<number>): boolean {
  for (let i = 0; i < 9; i++) if (F[i] !== 0) return false;
  return true;
}
