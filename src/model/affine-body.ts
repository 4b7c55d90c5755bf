/**
 * An affine body (Lan et al. 2022, "Affine Body Dynamics"): every point of it is x = A X + p, 12 DOFs.
 *
 * The 12x12 mass matrix is M = integral of rho J^T J dV with J(X) = [I, X_1 I, X_2 I, X_3 I] once A is stored by
 * columns c_k (x = p + sum_k X_k c_k). It holds the mass m, the first moment m c and the second moment
 * S = integral of rho X X^T dV. We write the body in its own frame: X = R^T (X_world - c) with c the centre of mass
 * and R the eigenvectors of the central second moment. There the first moment is 0 and S is diagonal (s_1, s_2, s_3),
 * so M = diag(m I, s_1 I, s_2 I, s_3 I) exactly: the 4 "nodes" p, c_1, c_2, c_3 carry the masses m, s_1, s_2, s_3
 * like lumped nodes, and the integrators' diagonal mass, kinetic energy and the angular momentum sum
 * sum_nodes m x x v (= m p x p' + sum_k s_k c_k x c_k', the body's exact angular momentum about the origin) need no
 * special case. Only sums that weigh positions by mass (gravity, linear momentum) read the first moment per DOF,
 * which is m for p and 0 for the columns (Model.linearMass).
 *
 * The moments come from the closed outward surface by the divergence theorem: the body is the signed sum of the
 * tets (o, a, b, c) over its triangles (abc), o a reference point, so a tet mesh (through its boundary) and a
 * surface-only mesh are handled alike.
 */
import { symmetricEigen } from '../math/eigen-sym.js';

/** Volume, centroid and central second moment (integral of (X - c)(X - c)^T dV, row-major) of unit density. */
export interface VolumeMoments {
  volume: number;
  centroid: [number, number, number];
  second: Float64Array;
}

/** Moments of the solid bounded by a closed surface with outward triangles (volume < 0 if they point inward). */
export function surfaceMoments(positions: Float64Array, triangles: Uint32Array): VolumeMoments {
  // Reference point o: the mean of the triangle corners, so the tets are small and the sums do not cancel.
  const o = [0, 0, 0];
  for (let k = 0; k < triangles.length; k++) for (let a = 0; a < 3; a++) o[a] += positions[3 * triangles[k] + a] / triangles.length;
  let volume = 0;
  const first = [0, 0, 0];
  const second = new Float64Array(9);
  const v = new Float64Array(9);
  for (let t = 0; t < triangles.length; t += 3) {
    for (let i = 0; i < 3; i++) for (let a = 0; a < 3; a++) v[3 * i + a] = positions[3 * triangles[t + i] + a] - o[a];
    // 6 x signed volume of the tet (o, a, b, c).
    const d =
      v[0] * (v[4] * v[8] - v[5] * v[7]) - v[1] * (v[3] * v[8] - v[5] * v[6]) + v[2] * (v[3] * v[7] - v[4] * v[6]);
    volume += d / 6;
    // Over a tet with corners w_i (here o = 0, a, b, c): integral of x dV = V/4 sum w_i and
    // integral of x x^T dV = V/20 (sum w_i w_i^T + s s^T), s = sum w_i.
    for (let a = 0; a < 3; a++) {
      const sa = v[a] + v[3 + a] + v[6 + a];
      first[a] += (d / 24) * sa;
      for (let b = 0; b < 3; b++) {
        const sb = v[b] + v[3 + b] + v[6 + b];
        second[3 * a + b] += (d / 120) * (v[a] * v[b] + v[3 + a] * v[3 + b] + v[6 + a] * v[6 + b] + sa * sb);
      }
    }
  }
  const local = first.map((f) => f / volume);
  // Parallel axis: central moment = moment about o - V l l^T (l the centroid relative to o).
  for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) second[3 * a + b] -= volume * local[a] * local[b];
  return { volume, centroid: [o[0] + local[0], o[1] + local[1], o[2] + local[2]], second };
}

/** An affine body's DOFs, masses and surface, ready to be placed in a model. */
export interface AffineBodyLayout {
  /** Rest volume (m^3) and mass (kg). */
  volume: number;
  mass: number;
  /** 4 nodes (p, c_1, c_2, c_3), 12 values: at rest p = centre of mass and c_k = the body frame's axes. */
  q0: Float64Array;
  /** Mass per DOF: m, m, m, s_1 x3, s_2 x3, s_3 x3. */
  dofMass: Float64Array;
  /** First moment per DOF (gravity, linear momentum): m on p, 0 on the columns. */
  linearMass: Float64Array;
  /** The surface's vertices, as indices into the input positions (sorted), and their body-frame coordinates. */
  vertices: Uint32Array;
  restCoordinates: Float64Array;
  /** The surface triangles renumbered to indices into `vertices`. */
  triangles: Uint32Array;
}

/**
 * Lays out an affine body with the given closed outward surface (indices into positions, world coordinates at rest)
 * and density. Throws a plain Error naming the problem (the caller adds the field).
 */
export function affineBodyLayout(positions: Float64Array, surface: Uint32Array, density: number): AffineBodyLayout {
  if (surface.length === 0) throw new Error('an affine body needs a closed surface (it has no triangles)');
  const m = surfaceMoments(positions, surface);
  if (!(m.volume > 0)) throw new Error(`its surface encloses a volume of ${m.volume} m^3 (an affine body needs a closed, outward surface)`);
  const values = new Float64Array(3);
  const R = new Float64Array(9);
  symmetricEigen(m.second, 3, values, R, new Float64Array(9));
  // A right-handed body frame, so that A = R at rest is a rotation.
  const det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
  if (det < 0) for (let a = 0; a < 3; a++) R[3 * a + 2] = -R[3 * a + 2];
  const mass = density * m.volume;
  const q0 = new Float64Array(12);
  const dofMass = new Float64Array(12);
  const linearMass = new Float64Array(12);
  for (let a = 0; a < 3; a++) {
    q0[a] = m.centroid[a];
    dofMass[a] = mass;
    linearMass[a] = mass;
  }
  for (let k = 0; k < 3; k++) {
    const s = density * values[k];
    if (!(s > 0)) throw new Error(`it is flat: its second moment along an axis is ${s} kg m^2 (an affine body needs a volume in every direction)`);
    for (let a = 0; a < 3; a++) {
      q0[3 + 3 * k + a] = R[3 * a + k];
      dofMass[3 + 3 * k + a] = s;
    }
  }
  const used = new Int32Array(positions.length / 3).fill(-1);
  const list: number[] = [];
  for (const i of surface) if (used[i] < 0) used[i] = list.push(i) - 1;
  const order = Uint32Array.from(list).sort();
  order.forEach((node, k) => (used[node] = k));
  const restCoordinates = new Float64Array(3 * order.length);
  order.forEach((node, i) => {
    const d = [0, 1, 2].map((a) => positions[3 * node + a] - m.centroid[a]);
    for (let k = 0; k < 3; k++) restCoordinates[3 * i + k] = R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2];
  });
  const triangles = Uint32Array.from(surface, (node) => used[node]);
  return { volume: m.volume, mass, q0, dofMass, linearMass, vertices: order, restCoordinates, triangles };
}

/**
 * The DOF velocities of a rigid motion v(x) = linear + omega x (x - center) at q: p' = v(p), c_k' = omega x c_k.
 */
export function rigidVelocity(q: Float64Array, linear: readonly number[], omega: readonly number[], center: readonly number[], out: Float64Array): void {
  const [wx, wy, wz] = omega;
  for (let node = 0; node < 4; node++) {
    const o = 3 * node;
    // The translation moves with the point p; the columns are directions (no translation, no centre).
    const x = node === 0 ? q[o] - center[0] : q[o];
    const y = node === 0 ? q[o + 1] - center[1] : q[o + 1];
    const z = node === 0 ? q[o + 2] - center[2] : q[o + 2];
    out[o] = (node === 0 ? linear[0] : 0) + wy * z - wz * y;
    out[o + 1] = (node === 0 ? linear[1] : 0) + wz * x - wx * z;
    out[o + 2] = (node === 0 ? linear[2] : 0) + wx * y - wy * x;
  }
}
