import type { Model } from '../model/model.js';

/**
 * Newton start points that carry each body's rotation through a step exactly. The displacement u over the step
 * (x~ - x: h v_n for implicit Euler) is fitted per body by a rigid motion, u ~ h (v_c + w x (x - c)) (least squares
 * weighted by mass: v_c from the momentum, w = I^-1 L from the angular momentum about the centre of mass c), and the
 * body is turned by the finite rotation R(h w) instead of being moved along the tangents:
 *
 *   about the centre:  x' = c + h v_c + R(h w) (x - c)
 *   screw:             x' = a + h v_par + R(h w) (x - a),  a = c + w x v_c / |w|^2 on the instantaneous axis,
 *                      v_par the part of v_c along w (a body turning about a hinge or a fixed edge)
 *
 * The linear predictor x + u stretches a body spinning h|w| rad per step by sqrt(1 + (h|w|)^2) (11.8 % at 0.5 rad,
 * the rotating cubes at h = 1/30 s), which Newton must first undo; the turned body keeps its shape. The non-rigid
 * part of u is left out (after A-search's velocity correction it is mostly high-frequency motion that the implicit
 * solve damps). Constrained nodes take part in the fit with 10^4 times their mass (their motion is given: a fixed
 * edge pins the axis); only free DOFs are written by the caller. Only bodies that a rotation can move without
 * breaking their constraints are turned (see turnable).
 */
export class RigidPredictor {
  /** Nodes of each body with at least 4 nodes. */
  private readonly groups: Uint32Array[] = [];
  /** Per-DOF weights of the fit. */
  private readonly weights: Float64Array;

  constructor(model: Model) {
    const { constrained, mass } = model;
    this.weights = new Float64Array(mass.length);
    for (let d = 0; d < mass.length; d++) this.weights[d] = constrained[d] ? 1e4 * mass[d] : mass[d];
    const driven = new Set<number>();
    for (const motion of model.motions) for (const node of motion.nodes) driven.add(node);
    for (const body of model.bodies) {
      const nodes = new Set<number>();
      for (const node of body.tets) nodes.add(node);
      if (nodes.size >= 4 && turnable([...nodes], model, driven)) this.groups.push(Uint32Array.from([...nodes].sort((a, b) => a - b)));
    }
  }

  /** True when the model has a body to turn. */
  get applies(): boolean {
    return this.groups.length > 0;
  }

  /**
   * out = x + u, with each body's nodes replaced by the body turned by its fitted rigid motion (above): about its
   * centre of mass, or with `screw` about its instantaneous axis. A body whose fit has no rotation is moved by u.
   */
  predict(x: Float64Array, u: Float64Array, out: Float64Array, screw: boolean): void {
    const m = this.weights;
    for (let d = 0; d < x.length; d++) out[d] = x[d] + u[d];
    for (const nodes of this.groups) {
      let mt = 0, cx = 0, cy = 0, cz = 0, px = 0, py = 0, pz = 0;
      for (const i of nodes) {
        const mi = m[3 * i];
        mt += mi;
        cx += mi * x[3 * i]; cy += mi * x[3 * i + 1]; cz += mi * x[3 * i + 2];
        px += mi * u[3 * i]; py += mi * u[3 * i + 1]; pz += mi * u[3 * i + 2];
      }
      cx /= mt; cy /= mt; cz /= mt;
      // Displacements of the centre (h v_c) and the rotation vector h w, fitted to u.
      const tx = px / mt, ty = py / mt, tz = pz / mt;
      let lx = 0, ly = 0, lz = 0, ixx = 0, iyy = 0, izz = 0, ixy = 0, ixz = 0, iyz = 0;
      for (const i of nodes) {
        const mi = m[3 * i];
        const rx = x[3 * i] - cx, ry = x[3 * i + 1] - cy, rz = x[3 * i + 2] - cz;
        const ux = u[3 * i] - tx, uy = u[3 * i + 1] - ty, uz = u[3 * i + 2] - tz;
        lx += mi * (ry * uz - rz * uy); ly += mi * (rz * ux - rx * uz); lz += mi * (rx * uy - ry * ux);
        ixx += mi * (ry * ry + rz * rz); iyy += mi * (rx * rx + rz * rz); izz += mi * (rx * rx + ry * ry);
        ixy -= mi * rx * ry; ixz -= mi * rx * rz; iyz -= mi * ry * rz;
      }
      // w = I^-1 L by the adjugate (I is positive definite unless the body is a line).
      const a00 = iyy * izz - iyz * iyz, a01 = ixz * iyz - ixy * izz, a02 = ixy * iyz - ixz * iyy;
      const a11 = ixx * izz - ixz * ixz, a12 = ixy * ixz - ixx * iyz, a22 = ixx * iyy - ixy * ixy;
      const det = ixx * a00 + ixy * a01 + ixz * a02;
      if (!(Math.abs(det) > 0)) continue;
      const wx = (a00 * lx + a01 * ly + a02 * lz) / det;
      const wy = (a01 * lx + a11 * ly + a12 * lz) / det;
      const wz = (a02 * lx + a12 * ly + a22 * lz) / det;
      const w2 = wx * wx + wy * wy + wz * wz;
      const angle = Math.sqrt(w2);
      if (!(angle > 1e-12) || !Number.isFinite(angle)) continue;
      const kx = wx / angle, ky = wy / angle, kz = wz / angle;
      const cs = Math.cos(angle), sn = Math.sin(angle);
      let ox = cx, oy = cy, oz = cz, sx = tx, sy = ty, sz = tz;
      if (screw) {
        ox = cx + (wy * tz - wz * ty) / w2; oy = cy + (wz * tx - wx * tz) / w2; oz = cz + (wx * ty - wy * tx) / w2;
        const along = (wx * tx + wy * ty + wz * tz) / w2;
        sx = along * wx; sy = along * wy; sz = along * wz;
      }
      for (const i of nodes) {
        // Rodrigues: R r = r cos t + (k x r) sin t + k (k . r)(1 - cos t).
        const rx = x[3 * i] - ox, ry = x[3 * i + 1] - oy, rz = x[3 * i + 2] - oz;
        const kr = kx * rx + ky * ry + kz * rz;
        out[3 * i] = ox + sx + rx * cs + (ky * rz - kz * ry) * sn + kx * kr * (1 - cs);
        out[3 * i + 1] = oy + sy + ry * cs + (kz * rx - kx * rz) * sn + ky * kr * (1 - cs);
        out[3 * i + 2] = oz + sz + rz * cs + (kx * ry - ky * rx) * sn + kz * kr * (1 - cs);
      }
    }
  }
}

/**
 * Whether a rigid rotation of the body can respect its constraints: no node is driven, and the fixed ones lie on one
 * line (none, a point, a hinge or a fixed edge). A body held by a fixed face (the twisted bar) or driven ends can only
 * deform, and a rigid start would only be a guess that moves Newton elsewhere.
 */
function turnable(nodes: number[], model: Model, driven: Set<number>): boolean {
  const { constrained, x0 } = model;
  const fixed = nodes.filter((i) => constrained[3 * i] || constrained[3 * i + 1] || constrained[3 * i + 2]);
  if (fixed.some((i) => driven.has(i))) return false;
  if (fixed.length < 3) return true;
  // The fixed node farthest from the first spans the line; every other must lie on it (to 1e-6 of its length).
  const p = (i: number, k: number) => x0[3 * i + k];
  const a = fixed[0];
  let b = a;
  let far = 0;
  for (const i of fixed) {
    const d = Math.hypot(p(i, 0) - p(a, 0), p(i, 1) - p(a, 1), p(i, 2) - p(a, 2));
    if (d > far) [far, b] = [d, i];
  }
  if (far === 0) return true;
  const ex = (p(b, 0) - p(a, 0)) / far, ey = (p(b, 1) - p(a, 1)) / far, ez = (p(b, 2) - p(a, 2)) / far;
  for (const i of fixed) {
    const rx = p(i, 0) - p(a, 0), ry = p(i, 1) - p(a, 1), rz = p(i, 2) - p(a, 2);
    const along = rx * ex + ry * ey + rz * ez;
    if (Math.hypot(rx - along * ex, ry - along * ey, rz - along * ez) > 1e-6 * far) return false;
  }
  return true;
}
