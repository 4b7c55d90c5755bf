/**
 * Numeric test helpers shared by the test files: a seeded generator, random rotations, max-norm comparisons,
 * dense eigenvalues, Hessian assembly of a potential term and central finite differences.
 */
import type { PotentialTerm } from '../src/energies/potential.js';
import { BsrMatrix, PatternBuilder, type BsrPattern } from '../src/math/bsr.js';
import { symmetricEigen } from '../src/math/eigen-sym.js';
import { multiplyABt } from '../src/math/small.js';

/** Deterministic uniform [0, 1) generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random 3x3 rotation (row-major) from a random unit quaternion. */
export function randomRotation(rand: () => number): Float64Array {
  let w = 0;
  let x = 0;
  let y = 0;
  let z = 0;
  let n = 0;
  do {
    w = 2 * rand() - 1;
    x = 2 * rand() - 1;
    y = 2 * rand() - 1;
    z = 2 * rand() - 1;
    n = Math.hypot(w, x, y, z);
  } while (n < 0.1 || n > 1);
  w /= n;
  x /= n;
  y /= n;
  z /= n;
  return Float64Array.from([
    1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
    2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
    2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
  ]);
}

/** U diag(s) V^T for 3x3 row-major U, V. */
export function composeSvd(U: Float64Array, s: ArrayLike<number>, V: Float64Array): Float64Array {
  const US = new Float64Array(9);
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) US[3 * r + c] = U[3 * r + c] * s[c];
  return multiplyABt(US, V, new Float64Array(9));
}

/** Largest absolute entry. */
export function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

/** Largest absolute entry of a - b. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** |x - ref| / |ref| in the Euclidean norm. */
export function relativeError(x: ArrayLike<number>, ref: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.length; i++) {
    num += (x[i] - ref[i]) ** 2;
    den += ref[i] ** 2;
  }
  return Math.sqrt(num / den);
}

/** Rows of a dense matrix as one row-major array. */
export function flattenRows(rows: readonly ArrayLike<number>[]): Float64Array {
  const cols = rows.length > 0 ? rows[0].length : 0;
  const flat = new Float64Array(rows.length * cols);
  rows.forEach((row, r) => flat.set(row, r * cols));
  return flat;
}

/** Smallest eigenvalue of a dense symmetric matrix given by its rows. */
export function minEigenvalue(rows: readonly ArrayLike<number>[]): number {
  const m = rows.length;
  const values = new Float64Array(m);
  symmetricEigen(flattenRows(rows), m, values, new Float64Array(m * m), new Float64Array(m * m));
  return Math.min(...values);
}

/** An all-zero Hessian on the term's own pattern over `nodeCount` nodes, with the term bound to it. */
export function assembleHessianPattern(term: PotentialTerm, nodeCount: number): BsrMatrix {
  const builder = new PatternBuilder(nodeCount);
  term.addPattern(builder);
  const H = new BsrMatrix(builder.build());
  term.bindPattern?.(H);
  return H;
}

/** Pattern of the nx x ny x nz grid graph, node (i, j, k) = i + nx (j + ny k), edges along the axes. */
export function gridPattern(nx: number, ny: number, nz: number): BsrPattern {
  const id = (i: number, j: number, k: number): number => i + nx * (j + ny * k);
  const b = new PatternBuilder(nx * ny * nz);
  for (let k = 0; k < nz; k++)
    for (let j = 0; j < ny; j++)
      for (let i = 0; i < nx; i++) {
        if (i + 1 < nx) b.addClique([id(i, j, k), id(i + 1, j, k)]);
        if (j + 1 < ny) b.addClique([id(i, j, k), id(i, j + 1, k)]);
        if (k + 1 < nz) b.addClique([id(i, j, k), id(i, j, k + 1)]);
      }
  return b.build();
}

/**
 * Central differences of scale * f at x with step h: entry d is (scale (f(x + h e_d) - f(x - h e_d))) / (2 h).
 * x itself is left untouched.
 */
export function centralDifferenceGradient(f: (x: Float64Array) => number, x: Float64Array, scale: number, h: number): Float64Array {
  const y = Float64Array.from(x);
  const fd = new Float64Array(x.length);
  for (let d = 0; d < y.length; d++) {
    const yd = y[d];
    y[d] = yd + h;
    const ep = f(y);
    y[d] = yd - h;
    const em = f(y);
    y[d] = yd;
    fd[d] = (scale * (ep - em)) / (2 * h);
  }
  return fd;
}

/**
 * Central-difference Jacobian of a vector field: `field(x, out)` adds (or writes) the field at x into a zeroed
 * out of x's length. Returns the square Jacobian row-major: entry (r, d) is (out_r(x + h e_d) - out_r(x - h e_d))
 * / (2 h). x itself is left untouched.
 */
export function centralDifferenceJacobian(field: (x: Float64Array, out: Float64Array) => void, x: Float64Array, h: number): Float64Array {
  const m = x.length;
  const y = Float64Array.from(x);
  const plus = new Float64Array(m);
  const minus = new Float64Array(m);
  const J = new Float64Array(m * m);
  for (let d = 0; d < m; d++) {
    const yd = y[d];
    plus.fill(0);
    minus.fill(0);
    y[d] = yd + h;
    field(y, plus);
    y[d] = yd - h;
    field(y, minus);
    y[d] = yd;
    for (let r = 0; r < m; r++) J[m * r + d] = (plus[r] - minus[r]) / (2 * h);
  }
  return J;
}

/**
 * A term's gradient and exact Hessian (dense rows) at x, times `scale`, beside their central differences with step
 * h (of the energy and of the gradient): the finite-difference check every energy gets.
 */
export function derivativesAndDifferences(
  term: PotentialTerm,
  x: Float64Array,
  scale: number,
  h = 1e-6,
): { g: Float64Array; H: number[][]; fdGradient: Float64Array; fdHessian: Float64Array } {
  const g = new Float64Array(x.length);
  term.addGradient(x, scale, g);
  const matrix = assembleHessianPattern(term, x.length / 3);
  term.addHessian(x, scale, matrix, false);
  return {
    g,
    H: matrix.toDense().map((row) => Array.from(row)),
    fdGradient: centralDifferenceGradient((y) => term.energy(y), x, scale, h),
    fdHessian: centralDifferenceJacobian((y, out) => term.addGradient(y, scale, out), x, h),
  };
}
