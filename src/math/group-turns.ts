/**
 * Per group of nodes (a body), the rotation that best carries the group's positions at a reference moment onto its
 * current ones, and that rotation applied to vectors of 3-blocks: what lets a lagged Cholesky factor follow bodies
 * that turn (lagged-cholesky.ts).
 *
 * The Hessian of an energy that does not change when its body turns rigidly (elasticity, the inertia of lumped
 * masses) turns with the body: at Q x it is Q H(x) Q^T, Q holding the rotation R on each node's 3x3 block. So a
 * factor of H taken when the body stood turned back by R still serves: Q H^-1 Q^T r solves the turned system. A
 * rotating cube turns 0.5 rad a step; untouched, its old factor fails at the first solve of every step, and those
 * failures (and the refactorisations after them) were half of its linear-solver time.
 *
 * The rotation is the polar factor of the covariance sum (x - c)(x_ref - c_ref)^T over the group's nodes (the
 * least-squares fit, unweighted). Nodes in no group (group -1) are left as they are.
 */
import { polarDecomposition } from './small.js';

export class GroupTurns {
  /** Per group: the fitted rotation from the reference to the current positions (9, row-major). */
  readonly rotation: Float64Array;
  private readonly reference: Float64Array;
  private readonly referenceCenter: Float64Array;
  private readonly center: Float64Array;
  private readonly covariance: Float64Array;
  private readonly count: Float64Array;
  private captured = false;

  constructor(
    /** Per node, its group (0 .. groups - 1), or -1 for a node no rotation applies to. */
    private readonly groupOfNode: Int32Array,
    readonly groups: number,
  ) {
    this.reference = new Float64Array(3 * groupOfNode.length);
    this.referenceCenter = new Float64Array(3 * groups);
    this.center = new Float64Array(3 * groups);
    this.covariance = new Float64Array(9 * groups);
    this.count = new Float64Array(groups);
    this.rotation = new Float64Array(9 * groups);
    for (let group = 0; group < groups; group++) this.rotation.set(IDENTITY, 9 * group);
  }

  /** Takes x as the reference (the positions the factored matrix was assembled at). */
  capture(x: Float64Array): void {
    this.reference.set(x.subarray(0, this.reference.length));
    this.centroids(this.reference, this.referenceCenter);
    this.captured = true;
  }

  /**
   * Fits every group's rotation from the reference to x; returns the largest rotation angle (radians), or NaN
   * before the first capture.
   */
  fit(x: Float64Array): number {
    if (!this.captured) return NaN;
    const groupOf = this.groupOfNode;
    const ref = this.reference;
    const c = this.center;
    const c0 = this.referenceCenter;
    const A = this.covariance;
    this.centroids(x, c);
    A.fill(0);
    for (let node = 0; node < groupOf.length; node++) {
      const group = groupOf[node];
      if (group < 0) continue;
      const o = 3 * node;
      const q = 3 * group;
      const Q = 9 * group;
      for (let i = 0; i < 3; i++) {
        const p = x[o + i] - c[q + i];
        for (let j = 0; j < 3; j++) A[Q + 3 * i + j] += p * (ref[o + j] - c0[q + j]);
      }
    }
    let largest = 0;
    for (let group = 0; group < this.groups; group++) {
      const R = this.rotation.subarray(9 * group, 9 * group + 9);
      if (this.count[group] < 2) R.set(IDENTITY);
      else polarDecomposition(A.subarray(9 * group, 9 * group + 9), R, null);
      // cos(angle) = (tr R - 1) / 2, clamped against round-off.
      const cosine = Math.min(1, Math.max(-1, (R[0] + R[4] + R[8] - 1) / 2));
      largest = Math.max(largest, Math.acos(cosine));
    }
    return largest;
  }

  /** out = Q^T v: each grouped node's 3-block turned back by its group's rotation (others copied). */
  toReference(v: Float64Array, out: Float64Array): void {
    this.apply(v, out, true);
  }

  /** v = Q v in place: each grouped node's 3-block turned by its group's rotation. */
  fromReference(v: Float64Array): void {
    this.apply(v, v, false);
  }

  private apply(v: Float64Array, out: Float64Array, transposed: boolean): void {
    const groupOf = this.groupOfNode;
    const rotation = this.rotation;
    for (let node = 0; node < groupOf.length; node++) {
      const o = 3 * node;
      const group = groupOf[node];
      const a = v[o];
      const b = v[o + 1];
      const c = v[o + 2];
      if (group < 0) {
        out[o] = a;
        out[o + 1] = b;
        out[o + 2] = c;
        continue;
      }
      const R = 9 * group;
      // Entry (i, j) of R is rotation[R + 3i + j]; transposed swaps the roles of i and j.
      const s = transposed ? 1 : 3;
      const t = transposed ? 3 : 1;
      out[o] = rotation[R] * a + rotation[R + t] * b + rotation[R + 2 * t] * c;
      out[o + 1] = rotation[R + s] * a + rotation[R + s + t] * b + rotation[R + s + 2 * t] * c;
      out[o + 2] = rotation[R + 2 * s] * a + rotation[R + 2 * s + t] * b + rotation[R + 2 * s + 2 * t] * c;
    }
  }

  /** Per group, the mean of its nodes' positions in y into out (and the node counts into this.count). */
  private centroids(y: Float64Array, out: Float64Array): void {
    const groupOf = this.groupOfNode;
    const count = this.count;
    out.fill(0);
    count.fill(0);
    for (let node = 0; node < groupOf.length; node++) {
      const group = groupOf[node];
      if (group < 0) continue;
      count[group]++;
      for (let i = 0; i < 3; i++) out[3 * group + i] += y[3 * node + i];
    }
    for (let group = 0; group < this.groups; group++) {
      if (count[group] > 0) for (let i = 0; i < 3; i++) out[3 * group + i] /= count[group];
    }
  }
}

const IDENTITY = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
