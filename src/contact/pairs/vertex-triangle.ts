/**
 * Vertex-triangle pairs: a collision vertex against a surface triangle it is not a corner of. Stencil
 * [v, t0, t1, t2] (the vertex, then the triangle); primitives (vertex node, triangle index); no constants.
 * The distance is to the closed triangle, its type the closest feature (distance.ts).
 */
import { offsetBarrier } from '../barrier.js';
import { pointTriangleCcd } from '../ccd.js';
import { pointTriangleDistanceSq } from '../ccd-distance.js';
import { describeGroup, describeTriangle, describeVertex } from '../collision-mesh.js';
import { pointTriangleDistance2, pointTriangleDistanceType, type PointTriangleDistanceType } from '../distance.js';
import { vertexTriangleFrictionBasis } from '../friction.js';
import { atDistance, distanceBarrierGradient, distanceBarrierHessian, stepBeforeImpact, surfaceFriction } from './distance-pair.js';
import { addLiveGradients, addLiveHessians, sumLiveEnergy } from './live-pairs.js';
import type { PairHessian, PairScratch, SurfacePairKind } from './pair-kind.js';
import type { PairList } from './pair-list.js';
import { gatherStencil } from './stencil.js';

function distance2(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  gatherStencil(x, list.nodes, 4 * k, 4, c.xs);
  const type = pointTriangleDistanceType(c.xs);
  c.type = type;
  return pointTriangleDistance2(c.xs, type);
}

function energy(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  return d2 >= c.reach2(xi) ? 0 : offsetBarrier(d2, xi, c.dhat2);
}

function gradient(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch): boolean {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  if (d2 >= c.reach2(xi)) return false;
  pointTriangleDistance2(c.xs, c.type as PointTriangleDistanceType, c.dg, null);
  distanceBarrierGradient(c, 4, d2, xi, 1, false, s);
  return true;
}

function hessian(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch, model: PairHessian): boolean {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  if (d2 >= c.reach2(xi)) return false;
  pointTriangleDistance2(c.xs, c.type as PointTriangleDistanceType, c.dg, model === 'gauss-newton' ? null : c.dh);
  distanceBarrierHessian(c, 4, d2, xi, 1, false, s, model);
  return true;
}

export const vertexTriangle: SurfacePairKind = {
  name: 'vertex-triangle',
  size: 4,
  split: 1,
  constantCount: 0,

  collect(broadPhase, mesh, _rest, list) {
    const n = broadPhase.vertexTriangleCount;
    const pairs = broadPhase.vertexTrianglePairs;
    const T = mesh.triangles;
    list.reserve(n);
    for (let k = 0; k < n; k++) {
      const v = pairs[2 * k], t = pairs[2 * k + 1];
      list.nodes[4 * k] = v;
      list.nodes[4 * k + 1] = T[3 * t];
      list.nodes[4 * k + 2] = T[3 * t + 1];
      list.nodes[4 * k + 3] = T[3 * t + 2];
      list.primitives[2 * k] = v;
      list.primitives[2 * k + 1] = t;
    }
    list.count = n;
  },

  distance2,
  mollifier: () => 1,
  sumEnergy: (list, x, c, e) => sumLiveEnergy(list, x, c, e, energy),
  addGradients: (list, x, s, g, c) => addLiveGradients(list, x, s, g, c, gradient),
  addHessians: (list, x, s, H, fixed, c, model) => addLiveHessians(list, x, s, H, fixed, c, model, hessian),
  maxStep: (list, k, x, dx, t, c) => stepBeforeImpact(list, k, x, dx, t, c, pointTriangleCcd),

  frictionCoefficient: (mesh, contact) => surfaceFriction(mesh, contact, 1),
  frictionFrame: (_mesh, contact, xs, w, P) => vertexTriangleFrictionBasis(xs, contact.type as PointTriangleDistanceType, w, P),

  describe: (mesh, list, k) => [describeVertex(mesh, list.primitives[2 * k]), describeTriangle(mesh, list.primitives[2 * k + 1])],
  explainBlocked(mesh, list, k, x) {
    const [a, b, c, d] = list.nodes.subarray(4 * k, 4 * k + 4);
    return `${describeVertex(mesh, a)} and the triangle on nodes ${b}, ${c}, ${d} of ${describeGroup(mesh, b)} are in contact ${atDistance(pointTriangleDistanceSq(x, a, b, c, d), list.offsets[k])}`;
  },
};
