/**
 * What the pair kinds between two mesh primitives share (vertex-triangle and edge-edge; vertex-vertex and
 * vertex-edge would too): the barrier terms from the kind's squared distance, the CCD's step, friction coefficient
 * and message pieces.
 *
 * The pair's barrier is m b(d^2); its gradient and local Newton matrix follow from those of d^2 (c.dg, c.dh) and
 * of m (c.mg, c.mh). The Gauss-Newton matrix is taken in the distance d rather than d^2: the curvature of b(d^2)
 * along d is 4 d^2 b'' + 2 b' (> 0 on 0 < d < dhat), i.e. (b'' + b' / (2 d^2)) on grad(d^2) grad(d^2)^T. Taking
 * b'' alone (Gauss-Newton in d^2) doubles the stiffness along the normal near contact (b' ~ -dhat^4/d^2), which
 * halves every Newton step toward a contact and leaves a linearly converging tail. The mollifier is held fixed there.
 *
 * A pair with a contact offset xi (PairList.offsets) has the barrier f(d^2) = b((d - xi)^2) instead (barrier.ts):
 * the same formulas with f, f', f'' in place of b, b', b'', and the CCD keeps d above xi.
 */
import { projectPsdTranslationInvariant } from '../../math/eigen-sym.js';
import { offsetBarrier, offsetBarrierFirstDerivative, offsetBarrierSecondDerivative } from '../barrier.js';
import { pairFriction, type CollisionMesh } from '../collision-mesh.js';
import type { pointTriangleCcd } from '../ccd.js';
import type { ActiveContact, PairHessian, PairScratch } from './pair-kind.js';
import type { PairList } from './pair-list.js';
import { gatherEndpoints } from './stencil.js';

/** c.gradient = s grad(m f(d^2)) over `size` stencil nodes, f the barrier with offset xi. */
export function distanceBarrierGradient(c: PairScratch, size: number, d2: number, xi: number, m: number, mollified: boolean, s: number): void {
  const b = mollified ? offsetBarrier(d2, xi, c.dhat2) : 0;
  const b1 = offsetBarrierFirstDerivative(d2, xi, c.dhat2);
  const { dg, mg, gradient } = c;
  for (let i = 0; i < 3 * size; i++) gradient[i] = s * (m * b1 * dg[i] + (mollified ? b * mg[i] : 0));
}

/**
 * c.hessian = s times the local Newton matrix of m f(d^2) over `size` stencil nodes (f the barrier with offset xi):
 * exact, projected onto the PSD cone in the directions a common translation leaves out (the barrier depends on
 * differences of the nodes only), or Gauss-Newton.
 */
export function distanceBarrierHessian(c: PairScratch, size: number, d2: number, xi: number, m: number, mollified: boolean, s: number, model: PairHessian): void {
  const n = 3 * size;
  const b1 = offsetBarrierFirstDerivative(d2, xi, c.dhat2);
  const b2 = offsetBarrierSecondDerivative(d2, xi, c.dhat2);
  const { dg, dh, mg, mh, hessian: h } = c;
  if (model === 'gauss-newton') {
    const coefficient = m * Math.max(0, b2 + b1 / (2 * d2));
    for (let i = 0; i < n; i++) {
      const ci = coefficient * dg[i];
      for (let j = 0; j < n; j++) h[n * i + j] = s * (ci * dg[j]);
    }
    return;
  }
  const b = mollified ? offsetBarrier(d2, xi, c.dhat2) : 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let v = m * b2 * dg[i] * dg[j] + m * b1 * dh[n * i + j];
      if (mollified) v += b1 * (mg[i] * dg[j] + dg[i] * mg[j]) + b * mh[n * i + j];
      h[n * i + j] = v;
    }
  }
  if (model === 'projected') projectPsdTranslationInvariant(h, size);
  for (let i = 0; i < n * n; i++) h[i] *= s; // after the projection, which must see the unscaled matrix
}

/**
 * The largest step fraction in [0, t] that keeps a 4-node pair apart (more than its offset xi): t times the time of
 * impact its CCD, with xi as the minimum separation, finds on the way from x to x + t dx.
 */
export function stepBeforeImpact(list: PairList, k: number, x: Float64Array, dx: Float64Array, t: number, c: PairScratch, ccd: typeof pointTriangleCcd): number {
  gatherEndpoints(x, dx, t, list.nodes, 4 * k, 4, c.ccdPoints);
  const p = c.ccdPoints;
  const toi = ccd(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], list.offsets[k]);
  return toi < 1 ? t * toi : t;
}

/** Friction coefficient of a pair of two mesh primitives: the smaller of their groups' (split: the second's first node). */
export function surfaceFriction(mesh: CollisionMesh, contact: ActiveContact, split: number): number {
  const { groupOfNode, groups } = mesh;
  return pairFriction(groups[groupOfNode[contact.nodes[0]]].friction, groups[groupOfNode[contact.nodes[split]]].friction);
}

/** "at distance 1.23e-4 m" from a squared distance (and the pair's offset xi when it has one), for blocked-step messages. */
export function atDistance(d2: number, xi: number): string {
  const offset = xi > 0 ? ` (contact offset ${xi.toExponential(2)} m)` : '';
  return `at distance ${Math.sqrt(d2).toExponential(2)} m${offset}`;
}
