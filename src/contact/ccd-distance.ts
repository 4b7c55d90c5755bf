/**
 * Private squared-distance helpers for narrow-phase CCD (src/contact/ccd.ts). Positions live in one packed
 * Float64Array of 4 vertices (x, y, z each); vertices are addressed by index 0..3.
 *
 * Robustness matters more than speed here: every function returns the exact squared distance up to rounding,
 * and in doubtful (near-degenerate) cases it leans towards a smaller value, which only makes CCD more
 * conservative. Each closed-primitive distance is the minimum of a convex quadratic over a simplex of
 * parameters, so it is attained either at the unconstrained minimiser (when that lies inside) or on the boundary,
 * i.e. at a point-segment distance; we take the minimum of all candidates.
 */

/** Barycentric slack: a projection this far outside still counts as inside (lower bound, hence conservative). */
const INSIDE_SLACK = 1e-10;

/**
 * Left by every function below: the vector between the two closest points it found (its squared length is the
 * returned value; its sign depends on the candidate). CCD reads it as the direction that separates the pair.
 */
export const closestOffset = new Float64Array(3);

/** Offset of the closest candidate so far, while a function compares several. */
let bestX = 0, bestY = 0, bestZ = 0;

/** Keeps closestOffset as the best offset when d2 improves on best; returns the new best (NaN wins, as in Math.min). */
function keepCloser(d2: number, best: number): number {
  if (d2 >= best || Number.isNaN(best)) return best;
  bestX = closestOffset[0];
  bestY = closestOffset[1];
  bestZ = closestOffset[2];
  return d2;
}

/** Stores (x, y, z) as the best offset. */
function setBest(x: number, y: number, z: number): void {
  bestX = x;
  bestY = y;
  bestZ = z;
}

/** Publishes the best offset as closestOffset and returns d2. */
function finish(d2: number): number {
  closestOffset[0] = bestX;
  closestOffset[1] = bestY;
  closestOffset[2] = bestZ;
  return d2;
}

/** Squared distance from vertex p to the closed segment [a, b]; a degenerate segment is a point. */
export function pointSegmentDistanceSq(x: Float64Array, p: number, a: number, b: number): number {
  const pi = 3 * p, ai = 3 * a, bi = 3 * b;
  const ex = x[bi] - x[ai], ey = x[bi + 1] - x[ai + 1], ez = x[bi + 2] - x[ai + 2];
  const wx = x[pi] - x[ai], wy = x[pi + 1] - x[ai + 1], wz = x[pi + 2] - x[ai + 2];
  const ee = ex * ex + ey * ey + ez * ez;
  let s = 0;
  if (ee > 0) {
    s = (wx * ex + wy * ey + wz * ez) / ee;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
  }
  const rx = wx - s * ex, ry = wy - s * ey, rz = wz - s * ez;
  closestOffset[0] = rx;
  closestOffset[1] = ry;
  closestOffset[2] = rz;
  return rx * rx + ry * ry + rz * rz;
}

/** Squared distance from vertex p to the closed triangle (a, b, c), degenerate triangles included. */
export function pointTriangleDistanceSq(x: Float64Array, p: number, a: number, b: number, c: number): number {
  let best = keepCloser(pointSegmentDistanceSq(x, p, a, b), Infinity);
  best = keepCloser(pointSegmentDistanceSq(x, p, b, c), best);
  best = keepCloser(pointSegmentDistanceSq(x, p, c, a), best);
  const pi = 3 * p, ai = 3 * a, bi = 3 * b, ci = 3 * c;
  const e1x = x[bi] - x[ai], e1y = x[bi + 1] - x[ai + 1], e1z = x[bi + 2] - x[ai + 2];
  const e2x = x[ci] - x[ai], e2y = x[ci + 1] - x[ai + 1], e2z = x[ci + 2] - x[ai + 2];
  const wx = x[pi] - x[ai], wy = x[pi + 1] - x[ai + 1], wz = x[pi + 2] - x[ai + 2];
  const nx = e1y * e2z - e1z * e2y, ny = e1z * e2x - e1x * e2z, nz = e1x * e2y - e1y * e2x;
  const nn = nx * nx + ny * ny + nz * nz;
  if (nn > 0) {
    // Barycentrics of the projection: w = lb e1 + lc e2 in-plane, so (w x e2).n = lb nn and (e1 x w).n = lc nn.
    const lb = ((wy * e2z - wz * e2y) * nx + (wz * e2x - wx * e2z) * ny + (wx * e2y - wy * e2x) * nz) / nn;
    const lc = ((e1y * wz - e1z * wy) * nx + (e1z * wx - e1x * wz) * ny + (e1x * wy - e1y * wx) * nz) / nn;
    if (lb >= -INSIDE_SLACK && lc >= -INSIDE_SLACK && lb + lc <= 1 + INSIDE_SLACK) {
      // Distance to the plane: never larger than the distance to the triangle, so safe even if lb, lc are noisy.
      const wn = wx * nx + wy * ny + wz * nz;
      const plane = (wn * wn) / nn;
      if (plane < best) {
        best = plane;
        setBest((wn / nn) * nx, (wn / nn) * ny, (wn / nn) * nz);
      }
    }
  }
  return finish(best);
}

/** Squared distance between the closed segments [a0, a1] and [b0, b1], parallel and degenerate ones included. */
export function segmentSegmentDistanceSq(x: Float64Array, a0: number, a1: number, b0: number, b1: number): number {
  let best = keepCloser(pointSegmentDistanceSq(x, a0, b0, b1), Infinity);
  best = keepCloser(pointSegmentDistanceSq(x, a1, b0, b1), best);
  best = keepCloser(pointSegmentDistanceSq(x, b0, a0, a1), best);
  best = keepCloser(pointSegmentDistanceSq(x, b1, a0, a1), best);
  const i0 = 3 * a0, i1 = 3 * a1, j0 = 3 * b0, j1 = 3 * b1;
  const ux = x[i1] - x[i0], uy = x[i1 + 1] - x[i0 + 1], uz = x[i1 + 2] - x[i0 + 2];
  const vx = x[j1] - x[j0], vy = x[j1 + 1] - x[j0 + 1], vz = x[j1 + 2] - x[j0 + 2];
  const rx = x[i0] - x[j0], ry = x[i0 + 1] - x[j0 + 1], rz = x[i0 + 2] - x[j0 + 2];
  const uu = ux * ux + uy * uy + uz * uz, vv = vx * vx + vy * vy + vz * vz, uv = ux * vx + uy * vy + uz * vz;
  const ur = ux * rx + uy * ry + uz * rz, vr = vx * rx + vy * ry + vz * rz;
  const denom = uu * vv - uv * uv;
  // (Nearly) parallel: the distance is flat along the common direction, so the boundary (point-segment) terms give
  // the minimum to within rounding, while the line-line formulas below turn into noise (two parallel diagonals of
  // one face, 3.5 cm apart, came out at distance 0). sin^2 of the angle below 1e-12 counts as parallel.
  if (denom > 1e-12 * uu * vv) {
    // Minimiser of |r + s u - t v|^2 over the two lines (ill-conditioned when nearly parallel, see below).
    const s = (uv * vr - vv * ur) / denom;
    const t = (uu * vr - uv * ur) / denom;
    if (s >= -INSIDE_SLACK && s <= 1 + INSIDE_SLACK && t >= -INSIDE_SLACK && t <= 1 + INSIDE_SLACK) {
      // Two estimates, keep the smaller: the line-line distance (r.n)^2/|n|^2 is a lower bound in exact arithmetic
      // but noisy when n is tiny; the distance between the clamped points is accurate but an upper bound.
      const sc = s < 0 ? 0 : s > 1 ? 1 : s, tc = t < 0 ? 0 : t > 1 ? 1 : t;
      const dx = rx + sc * ux - tc * vx, dy = ry + sc * uy - tc * vy, dz = rz + sc * uz - tc * vz;
      const direct = dx * dx + dy * dy + dz * dz;
      if (direct < best) {
        best = direct;
        setBest(dx, dy, dz);
      }
      const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
      const nn = nx * nx + ny * ny + nz * nz;
      if (nn > 0) {
        const rn = rx * nx + ry * ny + rz * nz;
        const line = (rn * rn) / nn;
        if (line < best) {
          best = line;
          setBest((rn / nn) * nx, (rn / nn) * ny, (rn / nn) * nz);
        }
      }
    }
  }
  return finish(best);
}
