/**
 * Bending of a thin shell, discrete shells (Grinspun, Hirani, Desbrun and Schroeder 2003, "Discrete Shells"): per
 * interior edge (a hinge: the edge x1 x2 and the opposite vertices x0 and x3 of its two triangles)
 *   E_e = k (theta_e - theta_e0)^2 |e0|^2 / A_e0,
 * theta_e the dihedral angle (0 when flat), theta_e0 its rest value, |e0| the rest edge length and A_e0 the two
 * triangles' combined rest area.
 *
 * Calibration, k = D / 2 with D = E_b t^3 / (12 (1 - nu^2)) the plate bending stiffness: bend a grid of right
 * triangles (cells c x c, the rectangle generator's mesh) into a cylinder of curvature kappa about one grid axis.
 * The linear interpolant of w = kappa s^2 / 2 has the same slope on both triangles of a cell, so only the edges
 * across the bending direction fold, each by theta = kappa c, with |e|^2 / A_e = c^2 / c^2 = 1, one per cell:
 * sum_e theta^2 |e|^2 / A_e = kappa^2 per unit area, and k kappa^2 = D kappa^2 / 2 is the plate's energy density.
 * The hinge energy depends on the mesh: on equilateral triangles the same k gives half the cylindrical bending
 * stiffness (each edge direction folds by kappa_n h with h = 2 inradii; summing over the three directions gives
 * kappa^2 / 2 per area).
 *
 * The angle: with e = x2 - x1, a = x0 - x1, b = x3 - x1, the normals e x a and b x e give
 *   X = (e x a).(b x e) = (e.a)(e.b) - |e|^2 (a.b),  Y = |e|^-1 ((e x a) x (b x e)).e = -|e| det[e, a, b],
 * theta = atan2(Y, X): polynomials in the positions but for |e|, so the gradient and the exact Hessian follow by the
 * chain rule through atan2 (no normals to normalise). Newton's matrix: see addHessian.
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import { projectPsdTranslationInvariant } from '../math/eigen-sym.js';
import type { EigenvalueFilter } from './eigenvalue-filter.js';
import type { PotentialTerm } from './potential.js';
import { triangleArea } from './shell-membrane.js';

/** Plate bending stiffness D = E t^3 / (12 (1 - nu^2)) (N m). */
export function plateBendingStiffness(youngsModulus: number, poissonRatio: number, thickness: number): number {
  return (youngsModulus * thickness ** 3) / (12 * (1 - poissonRatio * poissonRatio));
}

/**
 * The hinges of a triangle mesh: 4 nodes per interior edge (x0, x1, x2, x3) with x1 x2 the edge and x0, x3 the
 * opposite vertices, and the two triangles. Throws on an edge shared by more than two triangles (naming it).
 */
export function findHinges(triangles: Uint32Array, label = 'shell'): { nodes: Uint32Array; faces: Uint32Array } {
  const first = new Map<number, number>(); // edge key -> 3 * triangle + local edge
  const nodes: number[] = [];
  const faces: number[] = [];
  const seen = new Map<number, number>();
  const n = triangles.reduce((m, v) => Math.max(m, v), 0) + 1;
  for (let t = 0; t < triangles.length / 3; t++) {
    for (let k = 0; k < 3; k++) {
      const p = triangles[3 * t + k], q = triangles[3 * t + ((k + 1) % 3)];
      const key = Math.min(p, q) * n + Math.max(p, q);
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      if (count > 2) throw new Error(`${label}: the edge between nodes ${p} and ${q} belongs to more than two triangles (a shell must be a manifold surface)`);
      const other = first.get(key);
      if (other === undefined) {
        first.set(key, 3 * t + k);
        continue;
      }
      const s = Math.floor(other / 3), j = other % 3;
      nodes.push(triangles[3 * s + ((j + 2) % 3)], p, q, triangles[3 * t + ((k + 2) % 3)]);
      faces.push(s, t);
    }
  }
  return { nodes: Uint32Array.from(nodes), faces: Uint32Array.from(faces) };
}

/** Dihedral angle (0 when flat) of the hinge x0..x3 at q (12 coordinates); see the module comment. */
export function hingeAngle(q: ArrayLike<number>): number {
  const ex = q[6] - q[3], ey = q[7] - q[4], ez = q[8] - q[5];
  const ax = q[0] - q[3], ay = q[1] - q[4], az = q[2] - q[5];
  const bx = q[9] - q[3], by = q[10] - q[4], bz = q[11] - q[5];
  const ea = ex * ax + ey * ay + ez * az, eb = ex * bx + ey * by + ez * bz, ab = ax * bx + ay * by + az * bz;
  const ee = ex * ex + ey * ey + ez * ez;
  const det = ex * (ay * bz - az * by) + ey * (az * bx - ax * bz) + ez * (ax * by - ay * bx);
  return Math.atan2(-Math.sqrt(ee) * det, ea * eb - ee * ab);
}

/** Wraps an angle difference into (-pi, pi]. */
function wrapAngle(d: number): number {
  if (d > Math.PI) return d - 2 * Math.PI;
  if (d <= -Math.PI) return d + 2 * Math.PI;
  return d;
}

// Index of e, a, b in the 9-vector of edge vectors; coefficient of hinge node n in each (e = x2 - x1, a = x0 - x1,
// b = x3 - x1): NODE_COEF[3 * n + u].
const E = 0, A = 3, B = 6;
const NODE_COEF = [0, 1, 0, -1, -1, -1, 1, 0, 0, 0, 0, 1];

/**
 * Angle derivatives of hinges: theta, its gradient (12) and Hessian (12 x 12) at 12 coordinates, in scratch
 * arrays (no allocation per call).
 */
export class HingeAngle {
  readonly grad = new Float64Array(12);
  readonly hess = new Float64Array(144);
  private readonly v = new Float64Array(9); // e, a, b
  private readonly gx = new Float64Array(9);
  private readonly gy = new Float64Array(9);
  private readonly hx = new Float64Array(81);
  private readonly hy = new Float64Array(81);
  private readonly g9 = new Float64Array(9);
  /** Gradient of t = det[e, a, b] in (e, a, b): a x b, b x e, e x a. */
  private readonly gt = new Float64Array(9);
  private readonly h9 = new Float64Array(81);

  /** theta at q; the gradient into grad, and when withHessian the Hessian into hess. */
  evaluate(q: ArrayLike<number>, withHessian: boolean): number {
    const v = this.v;
    for (let i = 0; i < 3; i++) {
      v[E + i] = q[6 + i] - q[3 + i];
      v[A + i] = q[i] - q[3 + i];
      v[B + i] = q[9 + i] - q[3 + i];
    }
    const ea = dot(v, E, A), eb = dot(v, E, B), ab = dot(v, A, B), ee = dot(v, E, E);
    const s = Math.sqrt(ee);
    const gt = this.gt;
    cross(v, gt, E, A, B);
    cross(v, gt, A, B, E);
    cross(v, gt, B, E, A);
    const t = v[E] * gt[E] + v[E + 1] * gt[E + 1] + v[E + 2] * gt[E + 2];
    const X = ea * eb - ee * ab;
    const Y = -s * t;
    const gx = this.gx, gy = this.gy;
    for (let i = 0; i < 3; i++) {
      gx[E + i] = v[A + i] * eb + v[B + i] * ea - 2 * v[E + i] * ab;
      gx[A + i] = v[E + i] * eb - ee * v[B + i];
      gx[B + i] = v[E + i] * ea - ee * v[A + i];
      // Y = -s t: dY = -(t ds + s dt), ds = e / s in e only.
      gy[E + i] = -(t * v[E + i] / s + s * gt[E + i]);
      gy[A + i] = -s * gt[A + i];
      gy[B + i] = -s * gt[B + i];
    }
    const r2 = X * X + Y * Y;
    const theta = Math.atan2(Y, X);
    const g9 = this.g9;
    for (let i = 0; i < 9; i++) g9[i] = r2 > 0 ? (X * gy[i] - Y * gx[i]) / r2 : 0;
    this.mapGradient();
    if (!withHessian) return theta;
    // Hessians of X and Y in (e, a, b), 9 x 9 row-major.
    const hx = this.hx, hy = this.hy;
    hx.fill(0);
    hy.fill(0);
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const I = i === j ? 1 : 0;
        // X
        hx[9 * (E + i) + E + j] = v[A + i] * v[B + j] + v[B + i] * v[A + j] - 2 * ab * I;
        const xea = eb * I + v[B + i] * v[E + j] - 2 * v[E + i] * v[B + j];
        const xeb = ea * I + v[A + i] * v[E + j] - 2 * v[E + i] * v[A + j];
        const xab = v[E + i] * v[E + j] - ee * I;
        hx[9 * (E + i) + A + j] = xea;
        hx[9 * (A + j) + E + i] = xea;
        hx[9 * (E + i) + B + j] = xeb;
        hx[9 * (B + j) + E + i] = xeb;
        hx[9 * (A + i) + B + j] = xab;
        hx[9 * (B + j) + A + i] = xab;
        // Y = -(t S + ds dt^T + dt ds^T + s T): S = d2s/de2 = (I - e e^T / s^2) / s in (e, e); ds in e only.
        hy[9 * (E + i) + E + j] = -(t * (I - (v[E + i] * v[E + j]) / ee) / s + (v[E + i] / s) * gt[E + j] + gt[E + i] * (v[E + j] / s));
      }
    }
    // The e-a and e-b blocks of Y also carry ds dt^T (ds in e, dt in a, b), then s times the Hessian of t:
    // d2t/de da = -[b]x, d2t/de db = [a]x, d2t/da db = -[e]x (and their transposes).
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const yea = -((v[E + i] / s) * gt[A + j] + s * skew(v, B, i, j, -1));
        const yeb = -((v[E + i] / s) * gt[B + j] + s * skew(v, A, i, j, 1));
        const yab = -s * skew(v, E, i, j, -1);
        hy[9 * (E + i) + A + j] = yea;
        hy[9 * (A + j) + E + i] = yea;
        hy[9 * (E + i) + B + j] = yeb;
        hy[9 * (B + j) + E + i] = yeb;
        hy[9 * (A + i) + B + j] = yab;
        hy[9 * (B + j) + A + i] = yab;
      }
    }
    // theta = atan2(Y, X): H = (dX dY^T - dY dX^T + X HY - Y HX) / r2 - g (2 X dX + 2 Y dY)^T / r2, g = dtheta.
    const h9 = this.h9;
    if (r2 > 0) {
      for (let i = 0; i < 9; i++) {
        for (let j = 0; j < 9; j++) {
          h9[9 * i + j] =
            (gy[i] * gx[j] - gx[i] * gy[j] + X * hy[9 * i + j] - Y * hx[9 * i + j]) / r2 - (g9[i] * 2 * (X * gx[j] + Y * gy[j])) / r2;
        }
      }
      // Symmetric in exact arithmetic; average away the round-off.
      for (let i = 0; i < 9; i++) {
        for (let j = i + 1; j < 9; j++) {
          const m = 0.5 * (h9[9 * i + j] + h9[9 * j + i]);
          h9[9 * i + j] = m;
          h9[9 * j + i] = m;
        }
      }
    } else h9.fill(0);
    this.mapHessian();
    return theta;
  }

  /** grad (12) from g9 (9) through e = x2 - x1, a = x0 - x1, b = x3 - x1. */
  private mapGradient(): void {
    for (let n = 0; n < 4; n++) {
      for (let i = 0; i < 3; i++) {
        let sum = 0;
        for (let u = 0; u < 3; u++) sum += NODE_COEF[3 * n + u] * this.g9[3 * u + i];
        this.grad[3 * n + i] = sum;
      }
    }
  }

  /** hess (12 x 12) = P^T h9 P. */
  private mapHessian(): void {
    const h = this.hess, h9 = this.h9;
    for (let n = 0; n < 4; n++) {
      for (let m = 0; m < 4; m++) {
        for (let i = 0; i < 3; i++) {
          for (let j = 0; j < 3; j++) {
            let sum = 0;
            for (let u = 0; u < 3; u++) {
              const cu = NODE_COEF[3 * n + u];
              if (cu === 0) continue;
              for (let w = 0; w < 3; w++) {
                const cw = NODE_COEF[3 * m + w];
                if (cw !== 0) sum += cu * cw * h9[9 * (3 * u + i) + 3 * w + j];
              }
            }
            h[12 * (3 * n + i) + 3 * m + j] = sum;
          }
        }
      }
    }
  }
}

/** Dot product of the 3-vectors at v[u] and v[w]. */
function dot(v: Float64Array, u: number, w: number): number {
  return v[u] * v[w] + v[u + 1] * v[w + 1] + v[u + 2] * v[w + 2];
}

/** out[o .. o + 3) = v[u] x v[w] (3-vectors at those offsets). */
function cross(v: Float64Array, out: Float64Array, o: number, u: number, w: number): void {
  out[o] = v[u + 1] * v[w + 2] - v[u + 2] * v[w + 1];
  out[o + 1] = v[u + 2] * v[w] - v[u] * v[w + 2];
  out[o + 2] = v[u] * v[w + 1] - v[u + 1] * v[w];
}

/** sign * [w]x entry (i, j) with w = v[o .. o + 3): [w]x = [[0, -w2, w1], [w2, 0, -w0], [-w1, w0, 0]]. */
function skew(v: Float64Array, o: number, i: number, j: number, sign: number): number {
  if (i === j) return 0;
  const k = 3 - i - j; // the third index
  // [w]x_(i, j) = -eps_(i j k) w_k
  const even = (i === 0 && j === 1) || (i === 1 && j === 2) || (i === 2 && j === 0);
  return sign * (even ? -v[o + k] : v[o + k]);
}

export class ShellBending implements PotentialTerm {
  readonly name = 'elastic';
  readonly count: number;
  /** 4 nodes per hinge (x0, x1, x2, x3). */
  readonly hinges: Uint32Array;
  /** k |e0|^2 / A_e0 per hinge. */
  readonly weight: Float64Array;
  readonly restAngle: Float64Array;
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly angle = new HingeAngle();
  private readonly q = new Float64Array(12);
  private readonly K = new Float64Array(144);

  /** `stiffness` is k of the module comment (plateBendingStiffness / 2 for the calibrated plate). */
  constructor(rest: Float64Array, triangles: Uint32Array, stiffness: number, readonly label = 'shell') {
    const { nodes, faces } = findHinges(triangles, label);
    this.hinges = nodes;
    this.count = nodes.length / 4;
    this.weight = new Float64Array(this.count);
    this.restAngle = new Float64Array(this.count);
    this.slots = new Int32Array(16 * this.count);
    for (let h = 0; h < this.count; h++) {
      this.gather(rest, h);
      this.restAngle[h] = hingeAngle(this.q);
      const q = this.q;
      const e2 = (q[6] - q[3]) ** 2 + (q[7] - q[4]) ** 2 + (q[8] - q[5]) ** 2;
      const area = triangleArea(rest, triangles, faces[2 * h]) + triangleArea(rest, triangles, faces[2 * h + 1]);
      this.weight[h] = (stiffness * e2) / area;
    }
  }

  private gather(x: Float64Array, h: number): void {
    for (let k = 0; k < 4; k++) {
      const i = 3 * this.hinges[4 * h + k];
      this.q[3 * k] = x[i];
      this.q[3 * k + 1] = x[i + 1];
      this.q[3 * k + 2] = x[i + 2];
    }
  }

  energy(x: Float64Array): number {
    let total = 0;
    for (let h = 0; h < this.count; h++) {
      this.gather(x, h);
      const d = wrapAngle(hingeAngle(this.q) - this.restAngle[h]);
      total += this.weight[h] * d * d;
    }
    return total;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    const grad = this.angle.grad;
    for (let h = 0; h < this.count; h++) {
      this.gather(x, h);
      const d = wrapAngle(this.angle.evaluate(this.q, false) - this.restAngle[h]);
      const c = 2 * scale * this.weight[h] * d;
      for (let k = 0; k < 4; k++) {
        const i = 3 * this.hinges[4 * h + k];
        g[i] += c * grad[3 * k];
        g[i + 1] += c * grad[3 * k + 1];
        g[i + 2] += c * grad[3 * k + 2];
      }
    }
  }

  addPattern(builder: PatternBuilder): void {
    for (let h = 0; h < this.count; h++) builder.addClique(this.hinges.subarray(4 * h, 4 * h + 4));
  }

  bindPattern(H: BsrMatrix): void {
    if (H.pattern.remapSlots(this.slotsPatternId, this.slots)) {
      this.slotsPatternId = H.pattern.id;
      return;
    }
    for (let h = 0; h < this.count; h++) H.pattern.elementSlots(this.hinges.subarray(4 * h, 4 * h + 4), this.slots, 16 * h);
    this.slotsPatternId = H.pattern.id;
  }

  /**
   * The hinges' part of Newton's matrix: exact without projectPsd; with the 'abs' filter the exact one with its
   * eigenvalues made absolute; with 'clamp' (the default) the Gauss-Newton matrix 2 w dtheta dtheta^T, which is
   * positive semi-definite as it stands and leaves out only 2 w (theta - theta0) d2theta, small on a sheet bent a
   * little from its rest shape. It stands for the clamped projection, whose 12x12 eigen-decomposition per hinge took
   * 38 of 163 CPU s on the armadillo trampoline (2 steps in contact: 136.5 CPU s and 122 Newton iterations with the
   * projection, 101.2 s and 128 with this). Only the search direction changes, not the minimiser.
   */
  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean, filter: EigenvalueFilter = 'clamp'): void {
    if (this.slotsPatternId !== H.pattern.id) this.bindPattern(H);
    const { grad, hess } = this.angle;
    const K = this.K, v = H.values;
    // With the default filter the Gauss-Newton matrix stands for the clamped projection (see the method comment).
    const gaussNewton = projectPsd && filter === 'clamp';
    for (let h = 0; h < this.count; h++) {
      this.gather(x, h);
      const d = wrapAngle(this.angle.evaluate(this.q, !gaussNewton) - this.restAngle[h]);
      const c = 2 * scale * this.weight[h];
      if (gaussNewton) {
        for (let i = 0; i < 12; i++) for (let j = 0; j < 12; j++) K[12 * i + j] = c * grad[i] * grad[j];
      } else {
        // d2/dq2 of w (theta - theta0)^2 = 2 w (dtheta dtheta^T + (theta - theta0) d2theta).
        for (let i = 0; i < 12; i++) for (let j = 0; j < 12; j++) K[12 * i + j] = c * (grad[i] * grad[j] + d * hess[12 * i + j]);
        if (projectPsd) projectPsdTranslationInvariant(K, 4, filter === 'abs');
      }
      for (let a = 0; a < 4; a++) {
        for (let b = 0; b < 4; b++) {
          const o = 9 * this.slots[16 * h + 4 * a + b];
          for (let r = 0; r < 3; r++) for (let s = 0; s < 3; s++) v[o + 3 * r + s] += K[12 * (3 * a + r) + 3 * b + s];
        }
      }
    }
  }
}
