/**
 * Local math of IPC's lagged, smoothed Coulomb friction in displacement form (Li et al. 2020,
 * "Incremental Potential Contact"; the friction mollifier as ipc-toolkit writes it).
 *
 * A friction contact k has a stencil of n nodes (1 for a vertex against a static plane, 4 for vertex-triangle and
 * edge-edge), closest-point weights w (n numbers) and an orthonormal tangent basis P (3x2), all frozen at the step
 * start x_n together with mu and the normal force lambda. The relative tangential displacement over the step is
 *   u3 = sum_i w_i (x_i - xn_i),   u = P^T u3 (a 2-vector),
 * and the friction potential is D_k(x) = mu lambda f0(|u|), with the mollifier (eps a displacement, eps = epsV h)
 *   f0(y) = -y^3/(3 eps^2) + y^2/eps + eps/3  (y < eps),   y  (y >= eps)
 *   f1 = f0' = -y^2/eps^2 + 2y/eps (y < eps), 1 otherwise      (the Coulomb force fraction, in [0, 1])
 *   f1'       = -2y/eps^2 + 2/eps  (y < eps), 0 otherwise
 * f0 is C2 at eps. Derivatives of D (G = mu lambda):
 *   grad_i D = G (f1(y)/y) w_i P u                 (so -grad D is the friction force, magnitude mu lambda f1)
 *   H_ij     = G w_i w_j P M2 P^T,   M2 = ((f1' y - f1)/y^3) u u^T + (f1/y) I_2.
 * M2 has eigenvector u/|u| with eigenvalue f1'(y) and the perpendicular one with f1(y)/y: both are >= 0 for this
 * mollifier (static: 2/eps - 2y/eps^2 and 2/eps - y/eps^2; sliding: 0 and 1/y), so the exact Hessian is already
 * PSD; we still clamp the two eigenvalues at 0 (the "project M2" step), which only guards roundoff. Since w w^T
 * and P M2 P^T are PSD, so is their Kronecker product, the whole local Hessian.
 * Everything is evaluated from y = |u| >= 0 and needs eps > 0.
 *
 * Reversing contacts (frictionLocal's `reversing`): a sliding contact has no curvature along u (f1' = 0), so when
 * the rest of the system stops it, Newton's step carries its slip through u = 0 and past the smoothing zone to the
 * other side, where the force flips; the line search then cuts the whole step to 1/32-1/512 and the next
 * iteration overshoots back (a stick/slip zigzag: on the dice landing, 20-35 iterations of one step). For such a
 * contact the curvature along u is raised to f1/y as well, M2 = (f1/y) I_2: the Hessian of the majorizer
 * G (|v|^2 / (2y) + y/2) >= G |v|, which touches f0 at v = u (for y >= eps), so the step brings the slip to rest
 * instead of through it. Only the Newton direction changes, not the energy, its gradient or its minimiser (Newton
 * stops within its tolerance of that, along another path).
 */
import {
  EDGE_EDGE_PARALLEL_THRESHOLD,
  EdgeEdgeDistanceType,
  PointTriangleDistanceType,
  edgeEdgeParallelDistanceType,
} from './distance.js';

/** Default smoothing velocity epsV (m/s); the displacement threshold is eps = epsV * h. */
export const DEFAULT_FRICTION_EPS_V = 1e-3;

/**
 * The scene value of epsV that takes the Newton tolerance instead of a number. Newton stops when |dx| <= tol h, an
 * accuracy of tol in velocity; with epsV below tol, its smoothing zone epsV h is narrower than that accuracy, and
 * on landings the stick/slip switch of contacts inside it makes the line search halve steps again and again
 * (README: dice landing, 141 against 94 Newton iterations). Sticking contacts creep at up to epsV, so this is
 * a change of the friction model, chosen per scene, never the default.
 */
export const FRICTION_VELOCITY_AT_TOLERANCE = 'newton-tolerance';

export type FrictionVelocitySetting = number | typeof FRICTION_VELOCITY_AT_TOLERANCE;

/** epsV (m/s) of a scene setting, given the Newton tolerance (SolveSettings.tolerance, a velocity). */
export function frictionVelocityFor(setting: FrictionVelocitySetting, newtonTolerance: number): number {
  return setting === FRICTION_VELOCITY_AT_TOLERANCE ? newtonTolerance : setting;
}

// ---------------------------------------------------------------------------------------------------------------
// Mollifier.

/** f0(y): the smoothed |u|, eps/3 at 0, y beyond eps. */
export function f0(y: number, eps: number): number {
  if (y >= eps) return y;
  return (y * y * (3 * eps - y)) / (3 * eps * eps) + eps / 3;
}

/** f1 = f0': the fraction of the Coulomb force mu lambda that acts, rising from 0 at y = 0 to 1 at y = eps. */
export function f1(y: number, eps: number): number {
  if (y >= eps) return 1;
  return (y * (2 * eps - y)) / (eps * eps);
}

/** f1(y)/y, finite at 0 (limit 2/eps). */
export function f1OverY(y: number, eps: number): number {
  if (y >= eps) return 1 / y;
  return (2 * eps - y) / (eps * eps);
}

/** f1'(y) = f0''(y): 2/eps at 0, falling linearly to 0 at eps, 0 beyond. */
export function f1Derivative(y: number, eps: number): number {
  if (y >= eps) return 0;
  return (2 * (eps - y)) / (eps * eps);
}

/** (f1'(y) y - f1(y)) / y^3: -1/(y eps^2) below eps, -1/y^3 beyond (-Infinity at y = 0, where u u^T vanishes). */
export function f2Term(y: number, eps: number): number {
  if (y >= eps) return -1 / (y * y * y);
  return -1 / (y * eps * eps);
}

// ---------------------------------------------------------------------------------------------------------------
// Lagged data: closest-point weights and tangent bases. Each builder writes w (length >= n) and P (length 6,
// column-major 3x2: P[0..2] the first tangent, P[3..5] the second) and returns the stencil size n.

const diff = new Float64Array(3);
const nrm = new Float64Array(3);

function clamp01(s: number): number {
  return s <= 0 ? 0 : s >= 1 ? 1 : s;
}

/**
 * Clamped projection parameter of x[p] on the segment x[e0] -> x[e1] (0 for a degenerate segment).
 * Vertex indices into the packed stencil.
 */
function segmentParameter(x: ArrayLike<number>, p: number, e0: number, e1: number): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < 3; i++) {
    const e = x[3 * e1 + i] - x[3 * e0 + i];
    num += e * (x[3 * p + i] - x[3 * e0 + i]);
    den += e * e;
  }
  return den > 0 ? clamp01(num / den) : 0;
}

/** diff = sum_i w_i x_i over n stencil vertices. */
function weightedSum(x: ArrayLike<number>, n: number, w: ArrayLike<number>, out: Float64Array): void {
  out[0] = 0;
  out[1] = 0;
  out[2] = 0;
  for (let i = 0; i < n; i++) {
    out[0] += w[i] * x[3 * i];
    out[1] += w[i] * x[3 * i + 1];
    out[2] += w[i] * x[3 * i + 2];
  }
}

/** Largest squared distance between stencil vertex 0 and the others: the scale for "is this vector zero". */
function stencilScale2(x: ArrayLike<number>, n: number): number {
  let m = 0;
  for (let i = 1; i < n; i++) {
    const dx = x[3 * i] - x[0];
    const dy = x[3 * i + 1] - x[1];
    const dz = x[3 * i + 2] - x[2];
    m = Math.max(m, dx * dx + dy * dy + dz * dz);
  }
  return m;
}

/** Normalises v in place when its squared length exceeds tiny2 (and is finite); returns whether it did. */
function normalizeIfLong(v: Float64Array, tiny2: number): boolean {
  const l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  if (!(l2 > tiny2) || !Number.isFinite(l2)) return false;
  const inv = 1 / Math.sqrt(l2);
  v[0] *= inv;
  v[1] *= inv;
  v[2] *= inv;
  return true;
}

/** Sets v to (x[b] - x[a]) x (x[d] - x[c]) for stencil vertices a, b, c, d. */
function crossOfDifferences(x: ArrayLike<number>, a: number, b: number, c: number, d: number, v: Float64Array): void {
  const ux = x[3 * b] - x[3 * a];
  const uy = x[3 * b + 1] - x[3 * a + 1];
  const uz = x[3 * b + 2] - x[3 * a + 2];
  const vx = x[3 * d] - x[3 * c];
  const vy = x[3 * d + 1] - x[3 * c + 1];
  const vz = x[3 * d + 2] - x[3 * c + 2];
  v[0] = uy * vz - uz * vy;
  v[1] = uz * vx - ux * vz;
  v[2] = ux * vy - uy * vx;
}

/**
 * P = an orthonormal basis of the plane orthogonal to the unit vector n: the coordinate axis least aligned with n,
 * made orthogonal to n, then n x that. Any rotation within the plane gives the same |P^T u3|, so the choice is free.
 */
function tangentBasis(n: ArrayLike<number>, P: Float64Array): void {
  const ax = Math.abs(n[0]);
  const ay = Math.abs(n[1]);
  const az = Math.abs(n[2]);
  const k = ax <= ay && ax <= az ? 0 : ay <= az ? 1 : 2;
  // t1 = e_k - n_k n
  let t0 = -n[k] * n[0];
  let t1 = -n[k] * n[1];
  let t2 = -n[k] * n[2];
  if (k === 0) t0 += 1;
  else if (k === 1) t1 += 1;
  else t2 += 1;
  const inv = 1 / Math.sqrt(t0 * t0 + t1 * t1 + t2 * t2);
  t0 *= inv;
  t1 *= inv;
  t2 *= inv;
  P[0] = t0;
  P[1] = t1;
  P[2] = t2;
  P[3] = n[1] * t2 - n[2] * t1;
  P[4] = n[2] * t0 - n[0] * t2;
  P[5] = n[0] * t1 - n[1] * t0;
}

/** Sets out to a unit vector orthogonal to the (nonzero) v: the cross with its least aligned axis. */
function anyPerpendicular(v: ArrayLike<number>, out: Float64Array): void {
  const ax = Math.abs(v[0]);
  const ay = Math.abs(v[1]);
  const az = Math.abs(v[2]);
  if (ax <= ay && ax <= az) {
    out[0] = 0;
    out[1] = v[2];
    out[2] = -v[1];
  } else if (ay <= az) {
    out[0] = -v[2];
    out[1] = 0;
    out[2] = v[0];
  } else {
    out[0] = v[1];
    out[1] = -v[0];
    out[2] = 0;
  }
  if (!normalizeIfLong(out, 0)) {
    out[0] = 1;
    out[1] = 0;
    out[2] = 0;
  }
}

/** Relative squared length below which a closest-point difference counts as zero (its direction is noise). */
const ZERO_DISTANCE_RELATIVE2 = 1e-24;

/**
 * Friction data of a vertex-triangle contact [p, t0, t1, t2] whose closest feature is `type` (from
 * pointTriangleDistanceType): w = [1, -b0, -b1, -b2] with b the barycentric coordinates of the closest point c
 * (sum w_i x_i = p - c), and P orthogonal to the contact normal (p - c)/|p - c|, or to the triangle normal when
 * p touches the triangle. Edge parameters are clamped to the edge; the face case keeps the plane projection
 * (inside the face for a consistent type). Returns 4.
 */
export function vertexTriangleFrictionBasis(
  x: ArrayLike<number>,
  type: PointTriangleDistanceType,
  w: Float64Array,
  P: Float64Array,
): number {
  w[0] = 1;
  w[1] = 0;
  w[2] = 0;
  w[3] = 0;
  switch (type) {
    case PointTriangleDistanceType.P_T0:
    case PointTriangleDistanceType.P_T1:
    case PointTriangleDistanceType.P_T2:
      w[1 + type] = -1;
      break;
    case PointTriangleDistanceType.P_E0:
    case PointTriangleDistanceType.P_E1:
    case PointTriangleDistanceType.P_E2: {
      const e = type - PointTriangleDistanceType.P_E0; // edge t_e -> t_{e+1}
      const a = 1 + e;
      const b = 1 + ((e + 1) % 3);
      const s = segmentParameter(x, 0, a, b);
      w[a] = -(1 - s);
      w[b] = -s;
      break;
    }
    default: {
      // Normal equations of p - t0 = b1 (t1 - t0) + b2 (t2 - t0), by Cramer's rule; det = |e1 x e2|^2.
      const e1x = x[6] - x[3];
      const e1y = x[7] - x[4];
      const e1z = x[8] - x[5];
      const e2x = x[9] - x[3];
      const e2y = x[10] - x[4];
      const e2z = x[11] - x[5];
      const rx = x[0] - x[3];
      const ry = x[1] - x[4];
      const rz = x[2] - x[5];
      const a11 = e1x * e1x + e1y * e1y + e1z * e1z;
      const a12 = e1x * e2x + e1y * e2y + e1z * e2z;
      const a22 = e2x * e2x + e2y * e2y + e2z * e2z;
      const r1 = rx * e1x + ry * e1y + rz * e1z;
      const r2 = rx * e2x + ry * e2y + rz * e2z;
      crossOfDifferences(x, 1, 2, 1, 3, nrm);
      const det = nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2];
      if (det > 0) {
        const b1 = (r1 * a22 - r2 * a12) / det;
        const b2 = (r2 * a11 - r1 * a12) / det;
        w[1] = -(1 - b1 - b2);
        w[2] = -b1;
        w[3] = -b2;
      } else {
        // Degenerate triangle: the closest point of its three edges.
        let best = Infinity;
        for (let e = 0; e < 3; e++) {
          const a = 1 + e;
          const b = 1 + ((e + 1) % 3);
          const s = segmentParameter(x, 0, a, b);
          let d2 = 0;
          for (let i = 0; i < 3; i++) {
            const c = x[i] - (1 - s) * x[3 * a + i] - s * x[3 * b + i];
            d2 += c * c;
          }
          if (d2 < best) {
            best = d2;
            w[1] = 0;
            w[2] = 0;
            w[3] = 0;
            w[a] = -(1 - s);
            w[b] = -s;
          }
        }
      }
    }
  }
  // Degenerate triangle touched by p: fall back to its normal, then to a plane through an edge direction.
  return basisFromClosestPoints(x, w, P, 1, 2, 1, 3);
}

/**
 * Friction data of an edge-edge contact [ea0, ea1, eb0, eb1] whose closest features are `type` (from
 * edgeEdgeDistanceType): closest points ca = ea0 + s (ea1 - ea0), cb = eb0 + t (eb1 - eb0) with s, t clamped to
 * [0, 1], w = [1 - s, s, -(1 - t), -t] (sum w_i x_i = ca - cb), and P orthogonal to the contact normal
 * (ca - cb)/|ca - cb|, else to ea x eb, else to any direction perpendicular to the edges. An EA_EB type on
 * (nearly) parallel edges, whose interior closest points are ill-defined, is re-typed by
 * edgeEdgeParallelDistanceType. Returns 4.
 */
export function edgeEdgeFrictionBasis(
  x: ArrayLike<number>,
  type: EdgeEdgeDistanceType,
  w: Float64Array,
  P: Float64Array,
): number {
  let s = 0;
  let t = 0;
  if (type === EdgeEdgeDistanceType.EA_EB) {
    const ux = x[3] - x[0];
    const uy = x[4] - x[1];
    const uz = x[5] - x[2];
    const vx = x[9] - x[6];
    const vy = x[10] - x[7];
    const vz = x[11] - x[8];
    const rx = x[0] - x[6];
    const ry = x[1] - x[7];
    const rz = x[2] - x[8];
    const a = ux * ux + uy * uy + uz * uz;
    const b = ux * vx + uy * vy + uz * vz;
    const c = vx * vx + vy * vy + vz * vz;
    const d = ux * rx + uy * ry + uz * rz;
    const e = vx * rx + vy * ry + vz * rz;
    crossOfDifferences(x, 0, 1, 2, 3, nrm);
    const D = nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]; // a c - b^2
    if (D >= EDGE_EDGE_PARALLEL_THRESHOLD * a * c && D > 0) {
      // |r + s u - t v|^2 is stationary at s = (b e - c d)/D, t = (a e - b d)/D.
      s = clamp01((b * e - c * d) / D);
      t = clamp01((a * e - b * d) / D);
    } else {
      type = edgeEdgeParallelDistanceType(x);
    }
  }
  switch (type) {
    case EdgeEdgeDistanceType.EA0_EB0:
      s = 0;
      t = 0;
      break;
    case EdgeEdgeDistanceType.EA0_EB1:
      s = 0;
      t = 1;
      break;
    case EdgeEdgeDistanceType.EA1_EB0:
      s = 1;
      t = 0;
      break;
    case EdgeEdgeDistanceType.EA1_EB1:
      s = 1;
      t = 1;
      break;
    case EdgeEdgeDistanceType.EA_EB0:
      s = segmentParameter(x, 2, 0, 1);
      t = 0;
      break;
    case EdgeEdgeDistanceType.EA_EB1:
      s = segmentParameter(x, 3, 0, 1);
      t = 1;
      break;
    case EdgeEdgeDistanceType.EA0_EB:
      s = 0;
      t = segmentParameter(x, 0, 2, 3);
      break;
    case EdgeEdgeDistanceType.EA1_EB:
      s = 1;
      t = segmentParameter(x, 1, 2, 3);
      break;
    default:
      break; // EA_EB: s, t set above
  }
  w[0] = 1 - s;
  w[1] = s;
  w[2] = -(1 - t);
  w[3] = -t;
  // Parallel (or degenerate) touching edges: fall back to ea x eb, then to a normal perpendicular to an edge.
  return basisFromClosestPoints(x, w, P, 0, 1, 2, 3);
}

/**
 * P from the contact normal of a 4-node stencil: the closest-point difference sum w_i x_i when it is long enough,
 * else (touching) the normal of the edges (a0 -> a1) x (b0 -> b1), else any direction perpendicular to one of them.
 */
function basisFromClosestPoints(x: ArrayLike<number>, w: Float64Array, P: Float64Array, a0: number, a1: number, b0: number, b1: number): number {
  weightedSum(x, 4, w, diff);
  if (normalizeIfLong(diff, ZERO_DISTANCE_RELATIVE2 * stencilScale2(x, 4))) {
    tangentBasis(diff, P);
    return 4;
  }
  crossOfDifferences(x, a0, a1, b0, b1, nrm);
  if (!normalizeIfLong(nrm, 0)) {
    for (let k = 0; k < 3; k++) diff[k] = x[3 * a1 + k] - x[3 * a0 + k];
    if (!normalizeIfLong(diff, 0)) for (let k = 0; k < 3; k++) diff[k] = x[3 * b1 + k] - x[3 * b0 + k];
    anyPerpendicular(diff, nrm);
  }
  tangentBasis(nrm, P);
  return 4;
}

/** Friction data of a vertex against a static plane with the given (not necessarily unit) normal: w = [1]. */
export function planeFrictionBasis(normal: ArrayLike<number>, w: Float64Array, P: Float64Array): number {
  w[0] = 1;
  nrm[0] = normal[0];
  nrm[1] = normal[1];
  nrm[2] = normal[2];
  if (!normalizeIfLong(nrm, 0)) throw new Error('planeFrictionBasis: zero plane normal');
  tangentBasis(nrm, P);
  return 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Local potential.

const u3 = new Float64Array(3);
const uv = new Float64Array(2);
const B = new Float64Array(9);

/** Sets uv = P^T sum_i w_i (x_i - xn_i) and returns |uv|. */
function tangentialDisplacement(
  x: ArrayLike<number>,
  xn: ArrayLike<number>,
  n: number,
  w: ArrayLike<number>,
  P: ArrayLike<number>,
): number {
  u3[0] = 0;
  u3[1] = 0;
  u3[2] = 0;
  for (let i = 0; i < n; i++) {
    const wi = w[i];
    u3[0] += wi * (x[3 * i] - xn[3 * i]);
    u3[1] += wi * (x[3 * i + 1] - xn[3 * i + 1]);
    u3[2] += wi * (x[3 * i + 2] - xn[3 * i + 2]);
  }
  uv[0] = P[0] * u3[0] + P[1] * u3[1] + P[2] * u3[2];
  uv[1] = P[3] * u3[0] + P[4] * u3[1] + P[5] * u3[2];
  return Math.hypot(uv[0], uv[1]);
}

/** The tangential relative displacement u = P^T sum_i w_i (x_i - xn_i) into out (2 numbers); returns |u|. */
export function frictionTangentialDisplacement(
  x: ArrayLike<number>,
  xn: ArrayLike<number>,
  n: number,
  w: ArrayLike<number>,
  P: ArrayLike<number>,
  out: Float64Array,
): number {
  const y = tangentialDisplacement(x, xn, n, w, P);
  out[0] = uv[0];
  out[1] = uv[1];
  return y;
}

/**
 * D_k(x) = mu lambda f0(|u|) for one contact with stencil size n (x, xn: 3n numbers). When given, grad (3n) is
 * overwritten with dD/dx and hess (3n x 3n, row-major) with the PSD-projected Hessian (see the module comment), or
 * with `reversing`, the majorizer's (f1/y along u too; see the module comment).
 */
export function frictionLocal(
  x: ArrayLike<number>,
  xn: ArrayLike<number>,
  n: number,
  w: ArrayLike<number>,
  P: ArrayLike<number>,
  mu: number,
  lambda: number,
  eps: number,
  grad: Float64Array | null,
  hess: Float64Array | null,
  reversing = false,
): number {
  const y = tangentialDisplacement(x, xn, n, w, P);
  const G = mu * lambda;
  const q = f1OverY(y, eps);
  if (grad !== null) {
    // g3 = G (f1/y) P u, then grad_i = w_i g3.
    const c = G * q;
    const gx = c * (P[0] * uv[0] + P[3] * uv[1]);
    const gy = c * (P[1] * uv[0] + P[4] * uv[1]);
    const gz = c * (P[2] * uv[0] + P[5] * uv[1]);
    for (let i = 0; i < n; i++) {
      grad[3 * i] = w[i] * gx;
      grad[3 * i + 1] = w[i] * gy;
      grad[3 * i + 2] = w[i] * gz;
    }
  }
  if (hess !== null) {
    // M2 in its eigenbasis: f1' along u/|u| (f1/y when reversing), f1/y across, each clamped at 0;
    // M2 = (l1 - l2) uh uh^T + l2 I.
    const l2 = Math.max(0, q);
    const l1 = reversing ? l2 : Math.max(0, f1Derivative(y, eps));
    let m00 = l2;
    let m01 = 0;
    let m11 = l2;
    if (y > 0) {
      const h0 = uv[0] / y;
      const h1 = uv[1] / y;
      const dl = l1 - l2;
      m00 += dl * h0 * h0;
      m01 += dl * h0 * h1;
      m11 += dl * h1 * h1;
    }
    // B = P M2 P^T (3x3, symmetric).
    for (let r = 0; r < 3; r++) {
      const pr0 = P[r];
      const pr1 = P[3 + r];
      const a0 = m00 * pr0 + m01 * pr1;
      const a1 = m01 * pr0 + m11 * pr1;
      // Upper triangle, mirrored, so the local Hessian is exactly symmetric.
      for (let c = r; c < 3; c++) {
        const v = a0 * P[c] + a1 * P[3 + c];
        B[3 * r + c] = v;
        B[3 * c + r] = v;
      }
    }
    const dim = 3 * n;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const s = G * (w[i] * w[j]); // w_i w_j first: the same rounding for (i, j) and (j, i)
        const base = 3 * i * dim + 3 * j;
        for (let r = 0; r < 3; r++) {
          hess[base + r * dim] = s * B[3 * r];
          hess[base + r * dim + 1] = s * B[3 * r + 1];
          hess[base + r * dim + 2] = s * B[3 * r + 2];
        }
      }
    }
  }
  return G * f0(y, eps);
}

/**
 * Work done against friction over the step by one contact, mu lambda f1(|u|) |u| >= 0 (the lagged force magnitude
 * times the slip), for the energy bookkeeping.
 */
export function frictionDissipation(
  x: ArrayLike<number>,
  xn: ArrayLike<number>,
  n: number,
  w: ArrayLike<number>,
  P: ArrayLike<number>,
  mu: number,
  lambda: number,
  eps: number,
): number {
  const y = tangentialDisplacement(x, xn, n, w, P);
  return mu * lambda * f1(y, eps) * y;
}
