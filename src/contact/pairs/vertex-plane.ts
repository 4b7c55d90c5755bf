/**
 * Vertex-plane pairs: every free collision vertex against every analytic plane (a half-space obstacle). Stencil
 * [v]; primitives (vertex node, plane index); constants: the plane's unit normal and offset, so the signed distance
 * is d = n . x_v - offset (negative below).
 *
 * The barrier b(d^2) has the rank-one Hessian (4 d^2 b'' + 2 b') n n^T: exact along n, so the Gauss-Newton and
 * projected matrices are the same (its one eigenvalue clamped at 0). The step filter is closed-form: a vertex
 * moving toward the plane keeps at least a tenth of its gap.
 *
 * A vertex with a contact offset xi (a shell's, PairList.offsets) has the barrier on its gap g = d - xi instead of d:
 * since g is linear in x like d, every formula above holds with g for d (and xi = 0 gives g = d exactly).
 */
import { barrier, barrierFirstDerivative, barrierSecondDerivative } from '../barrier.js';
import { describeVertex, pairFriction } from '../collision-mesh.js';
import { planeFrictionBasis } from '../friction.js';
import { addLiveGradients, addLiveHessians, sumLiveEnergy } from './live-pairs.js';
import type { ObstaclePairKind, PairHessian, PairScratch } from './pair-kind.js';
import type { PairList } from './pair-list.js';

/** Fraction of its gap a vertex may close in one step. */
const GAP_FRACTION = 0.9;

function signedDistance(list: PairList, k: number, x: Float64Array): number {
  const v = list.nodes[k], q = 4 * k, n = list.constants;
  return n[q] * x[3 * v] + n[q + 1] * x[3 * v + 1] + n[q + 2] * x[3 * v + 2] - n[q + 3];
}

/** The vertex's gap above the plane, less its contact offset: d - xi. */
function gap(list: PairList, k: number, x: Float64Array): number {
  return signedDistance(list, k, x) - list.offsets[k];
}

function energy(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  const d = gap(list, k, x);
  if (d <= 0) return Infinity;
  return d < c.dhat ? barrier(d * d, c.dhat2) : 0;
}

function gradient(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch): boolean {
  const d = gap(list, k, x);
  if (d >= c.dhat) return false;
  // d/dx b(d^2) = b'(d^2) 2 d n
  const f = s * barrierFirstDerivative(d * d, c.dhat2) * 2 * d;
  const q = 4 * k, n = list.constants;
  c.gradient[0] = f * n[q];
  c.gradient[1] = f * n[q + 1];
  c.gradient[2] = f * n[q + 2];
  return true;
}

function hessian(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch, model: PairHessian): boolean {
  const d = gap(list, k, x);
  if (d >= c.dhat) return false;
  let curvature = 4 * d * d * barrierSecondDerivative(d * d, c.dhat2) + 2 * barrierFirstDerivative(d * d, c.dhat2);
  if (model !== 'exact' && curvature < 0) curvature = 0;
  const q = 4 * k, n = list.constants;
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) c.hessian[3 * i + j] = s * curvature * n[q + i] * n[q + j];
  return true;
}

export const vertexPlane: ObstaclePairKind = {
  name: 'vertex-plane',
  size: 1,
  split: 1,
  constantCount: 4,

  collect(mesh, vertices, list) {
    list.reserve(mesh.planes.length * vertices.length);
    let k = 0;
    mesh.planes.forEach((plane, p) => {
      for (const v of vertices) {
        list.nodes[k] = v;
        list.primitives[2 * k] = v;
        list.primitives[2 * k + 1] = p;
        list.constants.set(plane.normal, 4 * k);
        list.constants[4 * k + 3] = plane.offset;
        k++;
      }
    });
    list.count = k;
  },

  signedDistance,
  distance2(list, k, x, c) {
    c.type = -1;
    const d = signedDistance(list, k, x);
    return d > 0 ? d * d : 0;
  },
  mollifier: () => 1,

  sumEnergy: (list, x, c, e) => sumLiveEnergy(list, x, c, e, energy),
  addGradients: (list, x, s, g, c) => addLiveGradients(list, x, s, g, c, gradient),
  addHessians: (list, x, s, H, fixed, c, model) => addLiveHessians(list, x, s, H, fixed, c, model, hessian),
  maxStep(list, k, x, dx, t) {
    const o = 3 * list.nodes[k], q = 4 * k, n = list.constants;
    const rate = n[q] * dx[o] + n[q + 1] * dx[o + 1] + n[q + 2] * dx[o + 2];
    if (rate >= 0) return t;
    const tv = (GAP_FRACTION * gap(list, k, x)) / -rate;
    return tv < t ? Math.max(0, tv) : t;
  },

  frictionCoefficient(mesh, contact) {
    const { groupOfNode, groups, planes } = mesh;
    return pairFriction(groups[groupOfNode[contact.nodes[0]]].friction, planes[contact.primitives[1]].friction);
  },
  frictionFrame: (mesh, contact, _xs, w, P) => planeFrictionBasis(mesh.planes[contact.primitives[1]].normal, w, P),

  describe: (mesh, list, k) => [describeVertex(mesh, list.nodes[k]), `plane '${mesh.planes[list.primitives[2 * k + 1]].name}'`],
  explainBlocked(mesh, list, k, x) {
    const [vertex, plane] = vertexPlane.describe(mesh, list, k);
    const xi = list.offsets[k];
    const offset = xi > 0 ? `, contact offset ${xi.toExponential(2)} m` : '';
    return `${vertex} touches ${plane} (signed distance ${signedDistance(list, k, x).toExponential(2)} m${offset})`;
  },
};
