/**
 * Edge-edge pairs: two surface edges without a common node. Stencil [ea0, ea1, eb0, eb1]; primitives (edge a,
 * edge b), a < b; one constant, the mollifier threshold eps_x from the rest positions (barrier.ts): the barrier of
 * nearly parallel edges is multiplied by the mollifier m, which goes to 0 with |ea x eb|^2.
 */
import { offsetBarrier, edgeEdgeMollifier, edgeEdgeMollifierThreshold } from '../barrier.js';
import { edgeEdgeCcd } from '../ccd.js';
import { segmentSegmentDistanceSq } from '../ccd-distance.js';
import { describeEdge, describeGroup } from '../collision-mesh.js';
import { edgeEdgeDistance2, edgeEdgeDistanceType, type EdgeEdgeDistanceType } from '../distance.js';
import { edgeEdgeFrictionBasis } from '../friction.js';
import { atDistance, distanceBarrierGradient, distanceBarrierHessian, stepBeforeImpact, surfaceFriction } from './distance-pair.js';
import { addLiveGradients, addLiveHessians, sumLiveEnergy } from './live-pairs.js';
import type { PairHessian, PairScratch, SurfacePairKind } from './pair-kind.js';
import type { PairList } from './pair-list.js';
import { gatherStencil } from './stencil.js';

function distance2(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  gatherStencil(x, list.nodes, 4 * k, 4, c.xs);
  const type = edgeEdgeDistanceType(c.xs);
  c.type = type;
  return edgeEdgeDistance2(c.xs, type);
}

const restStencil = new Float64Array(12);

function energy(list: PairList, k: number, x: Float64Array, c: PairScratch): number {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  return d2 >= c.reach2(xi) ? 0 : edgeEdgeMollifier(c.xs, list.constants[k]) * offsetBarrier(d2, xi, c.dhat2);
}

function gradient(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch): boolean {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  if (d2 >= c.reach2(xi)) return false;
  const m = edgeEdgeMollifier(c.xs, list.constants[k], c.mg, null);
  edgeEdgeDistance2(c.xs, c.type as EdgeEdgeDistanceType, c.dg, null);
  distanceBarrierGradient(c, 4, d2, xi, m, m < 1, s);
  return true;
}

function hessian(list: PairList, k: number, x: Float64Array, s: number, c: PairScratch, model: PairHessian): boolean {
  const d2 = distance2(list, k, x, c);
  const xi = list.offsets[k];
  if (d2 >= c.reach2(xi)) return false;
  const exact = model !== 'gauss-newton'; // the Gauss-Newton matrix needs neither hess(d^2) nor m's derivatives
  const m = edgeEdgeMollifier(c.xs, list.constants[k], exact ? c.mg : null, exact ? c.mh : null);
  edgeEdgeDistance2(c.xs, c.type as EdgeEdgeDistanceType, c.dg, exact ? c.dh : null);
  distanceBarrierHessian(c, 4, d2, xi, m, m < 1, s, model);
  return true;
}

export const edgeEdge: SurfacePairKind = {
  name: 'edge-edge',
  size: 4,
  split: 2,
  constantCount: 1,

  collect(broadPhase, mesh, rest, list) {
    const n = broadPhase.edgeEdgeCount;
    const pairs = broadPhase.edgeEdgePairs;
    const E = mesh.edges;
    list.reserve(n);
    for (let k = 0; k < n; k++) {
      const a = pairs[2 * k], b = pairs[2 * k + 1];
      list.nodes[4 * k] = E[2 * a];
      list.nodes[4 * k + 1] = E[2 * a + 1];
      list.nodes[4 * k + 2] = E[2 * b];
      list.nodes[4 * k + 3] = E[2 * b + 1];
      list.primitives[2 * k] = a;
      list.primitives[2 * k + 1] = b;
      if (rest === null) continue;
      gatherStencil(rest, list.nodes, 4 * k, 4, restStencil);
      list.constants[k] = edgeEdgeMollifierThreshold(restStencil);
    }
    list.count = n;
  },

  distance2,
  mollifier: (list, k, c) => edgeEdgeMollifier(c.xs, list.constants[k]),
  sumEnergy: (list, x, c, e) => sumLiveEnergy(list, x, c, e, energy),
  addGradients: (list, x, s, g, c) => addLiveGradients(list, x, s, g, c, gradient),
  addHessians: (list, x, s, H, fixed, c, model) => addLiveHessians(list, x, s, H, fixed, c, model, hessian),
  maxStep: (list, k, x, dx, t, c) => stepBeforeImpact(list, k, x, dx, t, c, edgeEdgeCcd),

  frictionCoefficient: (mesh, contact) => surfaceFriction(mesh, contact, 2),
  frictionFrame: (_mesh, contact, xs, w, P) => edgeEdgeFrictionBasis(xs, contact.type as EdgeEdgeDistanceType, w, P),

  describe: (mesh, list, k) => [describeEdge(mesh, list.primitives[2 * k]), describeEdge(mesh, list.primitives[2 * k + 1])],
  explainBlocked(mesh, list, k, x) {
    const [a, b, c, d] = list.nodes.subarray(4 * k, 4 * k + 4);
    return `the edge on nodes ${a}, ${b} of ${describeGroup(mesh, a)} and the edge on nodes ${c}, ${d} of ${describeGroup(mesh, c)} are in contact ${atDistance(segmentSegmentDistanceSq(x, a, b, c, d), list.offsets[k])}`;
  },
};
