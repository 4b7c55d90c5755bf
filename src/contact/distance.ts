/**
 * Squared distances between contact primitives, with closest-feature classification, gradients and Hessians
 * (Li et al. 2020, "Incremental Potential Contact", organised as ipc-toolkit organises them).
 *
 * Stencils are packed coordinate arrays, vertex-major:
 *   point-point    [p, q]                 6 numbers
 *   point-edge     [p, e0, e1]            9 numbers
 *   point-triangle [p, t0, t1, t2]       12 numbers
 *   edge-edge      [ea0, ea1, eb0, eb1]   12 numbers
 * Gradients have one entry per stencil coordinate; Hessians are dense, row-major, (3n x 3n).
 *
 * Every distance is a function of a few difference vectors of the stencil (r = p - t0, u = t1 - t0, ...). The
 * kernels below differentiate with respect to those "reduced" vectors, then `pullBack` maps the derivatives to the
 * stencil coordinates through the constant +-1 coefficients, so each closed form is written once:
 *   point-point  d = |r|^2
 *   point-line   d = |r x e|^2 / |e|^2
 *   plane-like   d = (r . n)^2 / |n|^2, n = u x v   (point-plane and line-line alike)
 * The other types reuse point-point and point-line on a sub-stencil.
 */

/** Closest feature of an edge to a point: an endpoint or the edge interior. */
export const PointEdgeDistanceType = { P_E0: 0, P_E1: 1, P_E: 2 } as const;
export type PointEdgeDistanceType = (typeof PointEdgeDistanceType)[keyof typeof PointEdgeDistanceType];

/**
 * Closest feature of a triangle to a point: vertex i (P_Ti), edge i from t_i to t_{i+1 mod 3} (P_Ei), or the
 * face interior (P_T).
 */
export const PointTriangleDistanceType = { P_T0: 0, P_T1: 1, P_T2: 2, P_E0: 3, P_E1: 4, P_E2: 5, P_T: 6 } as const;
export type PointTriangleDistanceType = (typeof PointTriangleDistanceType)[keyof typeof PointTriangleDistanceType];

/** Closest features of two edges a and b: EA0/EA1/EA (endpoint or interior of a) times EB0/EB1/EB. */
export const EdgeEdgeDistanceType = {
  EA0_EB0: 0,
  EA0_EB1: 1,
  EA1_EB0: 2,
  EA1_EB1: 3,
  EA_EB0: 4,
  EA_EB1: 5,
  EA0_EB: 6,
  EA1_EB: 7,
  EA_EB: 8,
} as const;
export type EdgeEdgeDistanceType = (typeof EdgeEdgeDistanceType)[keyof typeof EdgeEdgeDistanceType];

/** Edges count as parallel when |ea x eb|^2 < this * |ea|^2 |eb|^2 (sin^2 of the angle; ipc-toolkit's value). */
export const EDGE_EDGE_PARALLEL_THRESHOLD = 2.5e-16;
/**
 * Relative round-off allowed in the numerators of the interior closest-point parameters before edges count as
 * parallel (1e-16 round-off over a 1e-5 tolerance on s and t; see edgeEdgeDistanceType). Without it, two collinear
 * edges a millimetre apart along their line (a bunny mesh has such pairs) were classed interior with distance 1e-11.
 */
const EDGE_EDGE_ROUND_OFF = 1e-11;

// ---------------------------------------------------------------------------------------------------------------
// Scratch (module level: the hot paths allocate nothing).

/** coef[4 k + v]: coefficient of stencil vertex v in reduced vector k (at most 3 reduced vectors, 4 vertices). */
const coef = new Float64Array(12);
/** Gradient w.r.t. the reduced vectors, 3K entries. */
const redG = new Float64Array(9);
/** Hessian w.r.t. the reduced vectors, (3K x 3K) row-major with stride 3K. */
const redH = new Float64Array(81);
const vr = new Float64Array(3);
const vu = new Float64Array(3);
const vv = new Float64Array(3);
const vn = new Float64Array(3);
const gn = new Float64Array(3);
const Hnn = new Float64Array(9);
const Hrn = new Float64Array(9);
const Au = new Float64Array(9);
const Av = new Float64Array(9);
const tmpA = new Float64Array(9);
const tmpB = new Float64Array(9);

/** Sets reduced vector k to x[plus] - x[minus] (vertex indices) and stores its value in out. */
function setDifference(x: ArrayLike<number>, k: number, plus: number, minus: number, out: Float64Array): void {
  coef[4 * k] = 0;
  coef[4 * k + 1] = 0;
  coef[4 * k + 2] = 0;
  coef[4 * k + 3] = 0;
  coef[4 * k + plus] = 1;
  coef[4 * k + minus] = -1;
  out[0] = x[3 * plus] - x[3 * minus];
  out[1] = x[3 * plus + 1] - x[3 * minus + 1];
  out[2] = x[3 * plus + 2] - x[3 * minus + 2];
}

/** grad = C^T redG and hess = C^T redH C for K reduced vectors over nVerts stencil vertices (overwrites both). */
function pullBack(K: number, nVerts: number, grad: Float64Array | null, hess: Float64Array | null): void {
  const dim = 3 * nVerts;
  const rs = 3 * K;
  if (grad !== null) {
    for (let v = 0; v < nVerts; v++) {
      for (let i = 0; i < 3; i++) {
        let s = 0;
        for (let k = 0; k < K; k++) s += coef[4 * k + v] * redG[3 * k + i];
        grad[3 * v + i] = s;
      }
    }
  }
  if (hess !== null) {
    // Block (v, w) = sum over reduced pairs (k, l) of c_kv c_lw H_kl; the coefficients are sparse +-1.
    for (let v = 0; v < nVerts; v++) {
      for (let w = 0; w < nVerts; w++) {
        const base = 3 * v * dim + 3 * w;
        for (let i = 0; i < 3; i++) {
          hess[base + i * dim] = 0;
          hess[base + i * dim + 1] = 0;
          hess[base + i * dim + 2] = 0;
        }
        for (let k = 0; k < K; k++) {
          const ck = coef[4 * k + v];
          if (ck === 0) continue;
          for (let l = 0; l < K; l++) {
            const c = ck * coef[4 * l + w];
            if (c === 0) continue;
            const src = 3 * k * rs + 3 * l;
            for (let i = 0; i < 3; i++) {
              hess[base + i * dim] += c * redH[src + i * rs];
              hess[base + i * dim + 1] += c * redH[src + i * rs + 1];
              hess[base + i * dim + 2] += c * redH[src + i * rs + 2];
            }
          }
        }
      }
    }
  }
}

/** Writes the 3x3 block (k, l) of redH (stride rs) as M, or as M^T. */
function putBlock(k: number, l: number, rs: number, M: ArrayLike<number>, transpose: boolean): void {
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) redH[(3 * k + i) * rs + 3 * l + j] = transpose ? M[3 * j + i] : M[3 * i + j];
  }
}

function dot3(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

function cross3(a: ArrayLike<number>, b: ArrayLike<number>, out: Float64Array): void {
  const x = a[1] * b[2] - a[2] * b[1];
  const y = a[2] * b[0] - a[0] * b[2];
  const z = a[0] * b[1] - a[1] * b[0];
  out[0] = x;
  out[1] = y;
  out[2] = z;
}

/** out = s * [w]x, the matrix with ([w]x) y = w x y. */
function skew(w: ArrayLike<number>, s: number, out: Float64Array): void {
  out[0] = 0;
  out[1] = -s * w[2];
  out[2] = s * w[1];
  out[3] = s * w[2];
  out[4] = 0;
  out[5] = -s * w[0];
  out[6] = -s * w[1];
  out[7] = s * w[0];
  out[8] = 0;
}

/** out = A^T B (3x3); out must not alias. */
function mulAtB(A: ArrayLike<number>, B: ArrayLike<number>, out: Float64Array): void {
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
  }
}

/** out = A B (3x3); out must not alias. */
function mulAB(A: ArrayLike<number>, B: ArrayLike<number>, out: Float64Array): void {
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  }
}

/**
 * Chain rule through n = u x v. Given g_n = df/dn and H_nn (in the module scratch gn, Hnn) and the current u, v
 * (vu, vv), writes df/du, df/dv into redG blocks bu, bv and the (u, v) blocks of redH (stride rs).
 *   dn = -[v]x du + [u]x dv, so A_u = -[v]x, A_v = [u]x;
 *   g_u = A_u^T g_n = v x g_n, g_v = A_v^T g_n = g_n x u;
 *   H_uu = A_u^T H_nn A_u, H_vv = A_v^T H_nn A_v,
 *   H_uv = A_u^T H_nn A_v + S with du^T S dv = g_n . (du x dv), i.e. S = -[g_n]x (n is bilinear in u, v).
 * Leaves A_u, A_v in the scratch Au, Av for callers with further blocks.
 */
function crossChain(bu: number, bv: number, rs: number, wantH: boolean): void {
  cross3(vv, gn, tmpA);
  redG[3 * bu] = tmpA[0];
  redG[3 * bu + 1] = tmpA[1];
  redG[3 * bu + 2] = tmpA[2];
  cross3(gn, vu, tmpA);
  redG[3 * bv] = tmpA[0];
  redG[3 * bv + 1] = tmpA[1];
  redG[3 * bv + 2] = tmpA[2];
  if (!wantH) return;
  skew(vv, -1, Au);
  skew(vu, 1, Av);
  // H_uu
  mulAB(Hnn, Au, tmpA);
  mulAtB(Au, tmpA, tmpB);
  putBlock(bu, bu, rs, tmpB, false);
  // H_uv = A_u^T (H_nn A_v) - [g_n]x
  mulAB(Hnn, Av, tmpA);
  mulAtB(Au, tmpA, tmpB);
  tmpB[1] += gn[2];
  tmpB[2] -= gn[1];
  tmpB[3] -= gn[2];
  tmpB[5] += gn[0];
  tmpB[6] += gn[1];
  tmpB[7] -= gn[0];
  putBlock(bu, bv, rs, tmpB, false);
  putBlock(bv, bu, rs, tmpB, true);
  // H_vv
  mulAtB(Av, tmpA, tmpB);
  putBlock(bv, bv, rs, tmpB, false);
}

// ---------------------------------------------------------------------------------------------------------------
// Reduced kernels. Each sets coef, returns the squared distance and, on request, fills redG / redH.

/** d = |x[a] - x[b]|^2. One reduced vector r = x[a] - x[b]: g_r = 2 r, H_rr = 2 I. */
function pointPointKernel(x: ArrayLike<number>, a: number, b: number, wantG: boolean, wantH: boolean): number {
  setDifference(x, 0, a, b, vr);
  if (wantG) {
    redG[0] = 2 * vr[0];
    redG[1] = 2 * vr[1];
    redG[2] = 2 * vr[2];
  }
  if (wantH) {
    for (let i = 0; i < 9; i++) redH[i] = 0;
    redH[0] = 2;
    redH[4] = 2;
    redH[8] = 2;
  }
  return dot3(vr, vr);
}

/**
 * Squared distance from x[p] to the line through x[e0], x[e1]. Reduced vectors r = p - e0, e = e1 - e0; with
 * a = r.e, s = e.e, alpha = a/s, d = r.r - a^2/s (evaluated as |r x e|^2 / s to avoid cancellation):
 *   g_r = 2 r - 2 alpha e
 *   g_e = -2 alpha r + 2 alpha^2 e
 *   H_rr = 2 I - (2/s) e e^T
 *   H_re = -(2/s) e r^T - 2 alpha I + (4 alpha/s) e e^T          (rows r, columns e)
 *   H_ee = -(2/s) r r^T + (4 alpha/s)(r e^T + e r^T) + 2 alpha^2 I - (8 alpha^2/s) e e^T
 */
function pointLineKernel(
  x: ArrayLike<number>,
  p: number,
  e0: number,
  e1: number,
  wantG: boolean,
  wantH: boolean,
): number {
  setDifference(x, 0, p, e0, vr);
  setDifference(x, 1, e1, e0, vu);
  const s = dot3(vu, vu);
  const a = dot3(vr, vu);
  const alpha = a / s;
  cross3(vr, vu, vn);
  const d = dot3(vn, vn) / s;
  if (wantG) {
    for (let i = 0; i < 3; i++) {
      redG[i] = 2 * vr[i] - 2 * alpha * vu[i];
      redG[3 + i] = -2 * alpha * vr[i] + 2 * alpha * alpha * vu[i];
    }
  }
  if (wantH) {
    const rs = 6;
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const id = i === j ? 1 : 0;
        const ee = vu[i] * vu[j];
        redH[i * rs + j] = 2 * id - (2 / s) * ee;
        const hre = -(2 / s) * vu[i] * vr[j] - 2 * alpha * id + ((4 * alpha) / s) * ee;
        redH[i * rs + 3 + j] = hre;
        redH[(3 + j) * rs + i] = hre;
        redH[(3 + i) * rs + 3 + j] =
          -(2 / s) * vr[i] * vr[j] +
          ((4 * alpha) / s) * (vr[i] * vu[j] + vu[i] * vr[j]) +
          2 * alpha * alpha * id -
          ((8 * alpha * alpha) / s) * ee;
      }
    }
  }
  return d;
}

/**
 * d = (r . n)^2 / |n|^2 with n = u x v, for reduced vectors r = x[r1] - x[r0], u = x[u1] - x[u0],
 * v = x[v1] - x[v0]. Point-plane: r = p - t0, u = t1 - t0, v = t2 - t0. Line-line: r = eb0 - ea0, u = ea1 - ea0,
 * v = eb1 - eb0. With a = r.n, s = n.n, beta = a/s, first in (r, n):
 *   g_r = 2 beta n
 *   g_n = 2 beta r - 2 beta^2 n
 *   H_rr = (2/s) n n^T
 *   H_rn = (2/s) n r^T + 2 beta I - (4 beta/s) n n^T                 (rows r, columns n)
 *   H_nn = (2/s) r r^T - (4 beta/s)(r n^T + n r^T) - 2 beta^2 I + (8 beta^2/s) n n^T
 * then through n = u x v (crossChain): H_ru = H_rn A_u, H_rv = H_rn A_v.
 */
function planeKernel(
  x: ArrayLike<number>,
  r1: number,
  r0: number,
  u1: number,
  u0: number,
  v1: number,
  v0: number,
  wantG: boolean,
  wantH: boolean,
): number {
  setDifference(x, 0, r1, r0, vr);
  setDifference(x, 1, u1, u0, vu);
  setDifference(x, 2, v1, v0, vv);
  cross3(vu, vv, vn);
  const s = dot3(vn, vn);
  const a = dot3(vr, vn);
  const beta = a / s;
  if (wantG || wantH) {
    for (let i = 0; i < 3; i++) {
      redG[i] = 2 * beta * vn[i];
      gn[i] = 2 * beta * vr[i] - 2 * beta * beta * vn[i];
    }
    if (wantH) {
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 3; j++) {
          const id = i === j ? 1 : 0;
          const nn = vn[i] * vn[j];
          Hnn[3 * i + j] =
            (2 / s) * vr[i] * vr[j] -
            ((4 * beta) / s) * (vr[i] * vn[j] + vn[i] * vr[j]) -
            2 * beta * beta * id +
            ((8 * beta * beta) / s) * nn;
          Hrn[3 * i + j] = (2 / s) * vn[i] * vr[j] + 2 * beta * id - ((4 * beta) / s) * nn;
          redH[i * 9 + j] = (2 / s) * nn;
        }
      }
    }
    crossChain(1, 2, 9, wantH);
    if (wantH) {
      mulAB(Hrn, Au, tmpA);
      putBlock(0, 1, 9, tmpA, false);
      putBlock(1, 0, 9, tmpA, true);
      mulAB(Hrn, Av, tmpA);
      putBlock(0, 2, 9, tmpA, false);
      putBlock(2, 0, 9, tmpA, true);
    }
  }
  return (a * a) / s;
}

// ---------------------------------------------------------------------------------------------------------------
// Classification.

/** Projection parameter of x[p] on the edge x[e0] -> x[e1] (0 at e0, 1 at e1). */
function edgeParameter(x: ArrayLike<number>, p: number, e0: number, e1: number): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < 3; i++) {
    const e = x[3 * e1 + i] - x[3 * e0 + i];
    num += e * (x[3 * p + i] - x[3 * e0 + i]);
    den += e * e;
  }
  return num / den;
}

function pointEdgeTypeAt(x: ArrayLike<number>, p: number, e0: number, e1: number): PointEdgeDistanceType {
  const t = edgeParameter(x, p, e0, e1);
  if (t > 1) return PointEdgeDistanceType.P_E1;
  // t < 0, and a degenerate edge (t NaN), go to the first endpoint.
  if (!(t >= 0)) return PointEdgeDistanceType.P_E0;
  return PointEdgeDistanceType.P_E;
}

/** Classifies [p, e0, e1] by the projection parameter t of p on the edge: t < 0 -> P_E0, t > 1 -> P_E1. */
export function pointEdgeDistanceType(x: ArrayLike<number>): PointEdgeDistanceType {
  return pointEdgeTypeAt(x, 0, 1, 2);
}

const sPar = new Float64Array(3);

/**
 * Classifies [p, t0, t1, t2] by the Voronoi regions of the triangle, in the plane of the triangle: for each edge i
 * (t_i -> t_{i+1}) take the projection parameter s_i of p and the sign of (p - t_i) . (e_i x n), which is >= 0
 * on the outer side of that edge's line. Edge region: 0 < s_i < 1 and outer side. Vertex i region: s_i <= 0 and
 * s_{i-1} >= 1 (p lies in the normal cone of the corner). Anything else projects inside the face.
 */
export function pointTriangleDistanceType(x: ArrayLike<number>): PointTriangleDistanceType {
  const ux = x[6] - x[3];
  const uy = x[7] - x[4];
  const uz = x[8] - x[5];
  const wx = x[9] - x[3];
  const wy = x[10] - x[4];
  const wz = x[11] - x[5];
  const nx = uy * wz - uz * wy;
  const ny = uz * wx - ux * wz;
  const nz = ux * wy - uy * wx;
  for (let i = 0; i < 3; i++) {
    const a = 1 + i;
    const b = 1 + ((i + 1) % 3);
    const ex = x[3 * b] - x[3 * a];
    const ey = x[3 * b + 1] - x[3 * a + 1];
    const ez = x[3 * b + 2] - x[3 * a + 2];
    const rx = x[0] - x[3 * a];
    const ry = x[1] - x[3 * a + 1];
    const rz = x[2] - x[3 * a + 2];
    const s = (ex * rx + ey * ry + ez * rz) / (ex * ex + ey * ey + ez * ez);
    sPar[i] = s;
    // (e x n) . r
    const outer = (ey * nz - ez * ny) * rx + (ez * nx - ex * nz) * ry + (ex * ny - ey * nx) * rz;
    if (s > 0 && s < 1 && outer >= 0) return (PointTriangleDistanceType.P_E0 + i) as PointTriangleDistanceType;
  }
  for (let i = 0; i < 3; i++) {
    if (sPar[i] <= 0 && sPar[(i + 2) % 3] >= 1) return i as PointTriangleDistanceType;
  }
  return PointTriangleDistanceType.P_T;
}

/**
 * Classifies [ea0, ea1, eb0, eb1] by the closest points of the two segments, points ea0 + s (ea1 - ea0) and
 * eb0 + t (eb1 - eb0). Minimising the convex quadratic over the unit square: take the unconstrained s, clamp it;
 * take the best t for that s (the unconstrained t if s was inside); if t is out of [0, 1] clamp it and recompute
 * the best s for it, clamped. (For a convex quadratic whose free minimum violates a bound, the constrained minimum
 * lies on that bound's side, which is why two clamping passes suffice.) Nearly parallel edges go to
 * edgeEdgeParallelDistanceType, since the free minimum is then ill-defined.
 */
export function edgeEdgeDistanceType(x: ArrayLike<number>): EdgeEdgeDistanceType {
  const ux = x[3] - x[0];
  const uy = x[4] - x[1];
  const uz = x[5] - x[2];
  const vx = x[9] - x[6];
  const vy = x[10] - x[7];
  const vz = x[11] - x[8];
  const wx = x[0] - x[6];
  const wy = x[1] - x[7];
  const wz = x[2] - x[8];
  const a = ux * ux + uy * uy + uz * uz;
  const b = ux * vx + uy * vy + uz * vz;
  const c = vx * vx + vy * vy + vz * vz;
  const d = ux * wx + uy * wy + uz * wz;
  const e = vx * wx + vy * wy + vz * wz;
  const cx = uy * vz - uz * vy;
  const cy = uz * vx - ux * vz;
  const cz = ux * vy - uy * vx;
  const D = cx * cx + cy * cy + cz * cz; // = a c - b^2, without the cancellation
  if (D < EDGE_EDGE_PARALLEL_THRESHOLD * a * c) return edgeEdgeParallelDistanceType(x);
  // |w + s u - t v|^2 is stationary at s = (b e - c d)/D, t = (a e - b d)/D. For nearly parallel edges both
  // numerators are differences of nearly equal products: once their round-off (~1e-16 of the products) could move
  // s or t by 1e-5, the interior closest points are unknowable and the endpoint types decide (for so small an
  // angle they differ from the line-line distance by a negligible amount, and the mollifier has muted the pair).
  if (EDGE_EDGE_ROUND_OFF * (Math.abs(b * e) + Math.abs(c * d) + Math.abs(a * e) + Math.abs(b * d)) > D) return edgeEdgeParallelDistanceType(x);
  const sN = b * e - c * d;
  let sCase: 0 | 1 | 2; // 0: s = 0, 1: s = 1, 2: interior
  let tN: number;
  let tD: number;
  if (sN <= 0) {
    sCase = 0;
    tN = e;
    tD = c;
  } else if (sN >= D) {
    sCase = 1;
    tN = e + b;
    tD = c;
  } else {
    sCase = 2;
    tN = a * e - b * d;
    tD = D;
  }
  if (tN <= 0) {
    // t = 0: best s = -d / a
    if (-d <= 0) return EdgeEdgeDistanceType.EA0_EB0;
    if (-d >= a) return EdgeEdgeDistanceType.EA1_EB0;
    return EdgeEdgeDistanceType.EA_EB0;
  }
  if (tN >= tD) {
    // t = 1: best s = (b - d) / a
    if (b - d <= 0) return EdgeEdgeDistanceType.EA0_EB1;
    if (b - d >= a) return EdgeEdgeDistanceType.EA1_EB1;
    return EdgeEdgeDistanceType.EA_EB1;
  }
  if (sCase === 0) return EdgeEdgeDistanceType.EA0_EB;
  if (sCase === 1) return EdgeEdgeDistanceType.EA1_EB;
  return EdgeEdgeDistanceType.EA_EB;
}

/** Squared distance from x[p] to segment x[e0] x[e1], and its point-edge type in peType[0]. */
function pointSegmentAt(x: ArrayLike<number>, p: number, e0: number, e1: number, peType: Int32Array): number {
  const t = pointEdgeTypeAt(x, p, e0, e1);
  peType[0] = t;
  if (t === PointEdgeDistanceType.P_E0) return pointPointKernel(x, p, e0, false, false);
  if (t === PointEdgeDistanceType.P_E1) return pointPointKernel(x, p, e1, false, false);
  return pointLineKernel(x, p, e0, e1, false, false);
}

const peScratch = new Int32Array(1);
// For each endpoint candidate, the EE type of its P_E0, P_E1 and P_E outcomes.
const PARALLEL_TYPES: readonly (readonly EdgeEdgeDistanceType[])[] = [
  [EdgeEdgeDistanceType.EA0_EB0, EdgeEdgeDistanceType.EA0_EB1, EdgeEdgeDistanceType.EA0_EB], // ea0 vs b
  [EdgeEdgeDistanceType.EA1_EB0, EdgeEdgeDistanceType.EA1_EB1, EdgeEdgeDistanceType.EA1_EB], // ea1 vs b
  [EdgeEdgeDistanceType.EA0_EB0, EdgeEdgeDistanceType.EA1_EB0, EdgeEdgeDistanceType.EA_EB0], // eb0 vs a
  [EdgeEdgeDistanceType.EA0_EB1, EdgeEdgeDistanceType.EA1_EB1, EdgeEdgeDistanceType.EA_EB1], // eb1 vs a
];

/**
 * Type for (nearly) parallel edges. Two segments' distance is always reached with at least one endpoint when the
 * lines are parallel, so take the smallest of the four endpoint-to-other-segment distances (never EA_EB).
 */
export function edgeEdgeParallelDistanceType(x: ArrayLike<number>): EdgeEdgeDistanceType {
  let best = Infinity;
  let bestType: EdgeEdgeDistanceType = EdgeEdgeDistanceType.EA0_EB0;
  for (let k = 0; k < 4; k++) {
    const d = k < 2 ? pointSegmentAt(x, k, 2, 3, peScratch) : pointSegmentAt(x, k, 0, 1, peScratch);
    if (d < best) {
      best = d;
      bestType = PARALLEL_TYPES[k][peScratch[0]];
    }
  }
  return bestType;
}

// ---------------------------------------------------------------------------------------------------------------
// Public distances. grad (3n) and hess (3n x 3n, row-major) are overwritten when given; pass null to skip.

/** |p - q|^2 for [p, q]. */
export function pointPointDistance2(
  x: ArrayLike<number>,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const d = pointPointKernel(x, 0, 1, grad !== null, hess !== null);
  pullBack(1, 2, grad, hess);
  return d;
}

/** Squared distance from p to the infinite line through e0, e1, for [p, e0, e1]. */
export function pointLineDistance2(
  x: ArrayLike<number>,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const d = pointLineKernel(x, 0, 1, 2, grad !== null, hess !== null);
  pullBack(2, 3, grad, hess);
  return d;
}

/** Squared distance from p to the plane through t0, t1, t2, for [p, t0, t1, t2]. */
export function pointPlaneDistance2(
  x: ArrayLike<number>,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const d = planeKernel(x, 0, 1, 2, 1, 3, 1, grad !== null, hess !== null);
  pullBack(3, 4, grad, hess);
  return d;
}

/** Squared distance between the infinite lines through ea0, ea1 and eb0, eb1, for [ea0, ea1, eb0, eb1]. */
export function lineLineDistance2(
  x: ArrayLike<number>,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const d = planeKernel(x, 2, 0, 1, 0, 3, 2, grad !== null, hess !== null);
  pullBack(3, 4, grad, hess);
  return d;
}

/** Squared point-segment distance for [p, e0, e1]; `type` defaults to pointEdgeDistanceType(x). */
export function pointEdgeDistance2(
  x: ArrayLike<number>,
  type: PointEdgeDistanceType = pointEdgeDistanceType(x),
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const wantG = grad !== null;
  const wantH = hess !== null;
  let d: number;
  let K: number;
  switch (type) {
    case PointEdgeDistanceType.P_E0:
      d = pointPointKernel(x, 0, 1, wantG, wantH);
      K = 1;
      break;
    case PointEdgeDistanceType.P_E1:
      d = pointPointKernel(x, 0, 2, wantG, wantH);
      K = 1;
      break;
    default:
      d = pointLineKernel(x, 0, 1, 2, wantG, wantH);
      K = 2;
  }
  pullBack(K, 3, grad, hess);
  return d;
}

/** Squared point-triangle distance for [p, t0, t1, t2]; `type` defaults to pointTriangleDistanceType(x). */
export function pointTriangleDistance2(
  x: ArrayLike<number>,
  type: PointTriangleDistanceType = pointTriangleDistanceType(x),
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const wantG = grad !== null;
  const wantH = hess !== null;
  let d: number;
  let K = 1;
  switch (type) {
    case PointTriangleDistanceType.P_T0:
    case PointTriangleDistanceType.P_T1:
    case PointTriangleDistanceType.P_T2:
      d = pointPointKernel(x, 0, 1 + type, wantG, wantH);
      break;
    case PointTriangleDistanceType.P_E0:
    case PointTriangleDistanceType.P_E1:
    case PointTriangleDistanceType.P_E2: {
      const i = type - PointTriangleDistanceType.P_E0;
      d = pointLineKernel(x, 0, 1 + i, 1 + ((i + 1) % 3), wantG, wantH);
      K = 2;
      break;
    }
    default:
      d = planeKernel(x, 0, 1, 2, 1, 3, 1, wantG, wantH);
      K = 3;
  }
  pullBack(K, 4, grad, hess);
  return d;
}

/** Squared segment-segment distance for [ea0, ea1, eb0, eb1]; `type` defaults to edgeEdgeDistanceType(x). */
export function edgeEdgeDistance2(
  x: ArrayLike<number>,
  type: EdgeEdgeDistanceType = edgeEdgeDistanceType(x),
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const wantG = grad !== null;
  const wantH = hess !== null;
  let d: number;
  let K = 1;
  switch (type) {
    case EdgeEdgeDistanceType.EA0_EB0:
      d = pointPointKernel(x, 0, 2, wantG, wantH);
      break;
    case EdgeEdgeDistanceType.EA0_EB1:
      d = pointPointKernel(x, 0, 3, wantG, wantH);
      break;
    case EdgeEdgeDistanceType.EA1_EB0:
      d = pointPointKernel(x, 1, 2, wantG, wantH);
      break;
    case EdgeEdgeDistanceType.EA1_EB1:
      d = pointPointKernel(x, 1, 3, wantG, wantH);
      break;
    case EdgeEdgeDistanceType.EA_EB0:
      d = pointLineKernel(x, 2, 0, 1, wantG, wantH);
      K = 2;
      break;
    case EdgeEdgeDistanceType.EA_EB1:
      d = pointLineKernel(x, 3, 0, 1, wantG, wantH);
      K = 2;
      break;
    case EdgeEdgeDistanceType.EA0_EB:
      d = pointLineKernel(x, 0, 2, 3, wantG, wantH);
      K = 2;
      break;
    case EdgeEdgeDistanceType.EA1_EB:
      d = pointLineKernel(x, 1, 2, 3, wantG, wantH);
      K = 2;
      break;
    default:
      d = planeKernel(x, 2, 0, 1, 0, 3, 2, wantG, wantH);
      K = 3;
  }
  pullBack(K, 4, grad, hess);
  return d;
}

/**
 * |(ea1 - ea0) x (eb1 - eb0)|^2 for [ea0, ea1, eb0, eb1], the quantity the edge-edge mollifier acts on
 * (g_n = 2 n, H_nn = 2 I, then through the cross product).
 */
export function edgeEdgeCrossSquaredNorm(
  x: ArrayLike<number>,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  setDifference(x, 0, 1, 0, vu);
  setDifference(x, 1, 3, 2, vv);
  cross3(vu, vv, vn);
  const wantH = hess !== null;
  if (grad !== null || wantH) {
    for (let i = 0; i < 3; i++) gn[i] = 2 * vn[i];
    if (wantH) {
      for (let i = 0; i < 9; i++) Hnn[i] = 0;
      Hnn[0] = 2;
      Hnn[4] = 2;
      Hnn[8] = 2;
    }
    crossChain(0, 1, 6, wantH);
    pullBack(2, 4, grad, hess);
  }
  return dot3(vn, vn);
}
