/**
 * The IPC clamped log barrier on squared distances and the edge-edge mollifier (Li et al. 2020, "Incremental Potential
 * Contact"; the conventions of ipc-toolkit).
 *
 * Barrier, with d = d^2 (a squared distance) and D = dhat^2:
 *   b(d) = -(d - D)^2 ln(d / D)                for 0 < d < D, 0 for d >= D, +inf for d <= 0
 *   b'(d) = (D - d) (2 ln(d/D) - D/d + 1)
 *   b''(d) = (D/d)(D/d + 2) - 2 ln(d/D) - 3
 * All three vanish at d = D, so b is C2 there.
 *
 * Mollifier of nearly parallel edge pairs, on x = |ea x eb|^2 with eps_x = 1e-3 |ea_rest|^2 |eb_rest|^2:
 *   m(x) = (2 - x/eps_x) x/eps_x for x < eps_x, 1 otherwise;  m' = (2/eps_x)(1 - x/eps_x);  m'' = -2/eps_x^2.
 * m is C1 at eps_x (m = 1, m' = 0 on both sides).
 *
 * Contact offset (Codim-IPC, Li et al. 2021, "Codimensional Incremental Potential Contact"): a pair whose
 * primitives carry a thickness keeps them xi apart by putting the barrier on the gap g = d - xi instead of d,
 * f(s) = b((sqrt(s) - xi)^2) for s = d^2, active for xi < d < xi + dhat and infinite for d <= xi. Written as a
 * function of the squared distance s, every formula of a pair's barrier in b, b', b'' holds with f, f', f'':
 *   f'(s) = b'(g^2) g / d,    f''(s) = b''(g^2) g^2 / d^2 + b'(g^2) xi / (2 d^3).
 * kappa keeps its meaning: a pair with an offset pushes at gap g as a pair without one does at distance g.
 * With xi = 0 these are b, b', b'' themselves (the same numbers, not just the same values up to rounding).
 */
import { edgeEdgeCrossSquaredNorm } from './distance.js';

/** b(d2; dhat2). +Infinity for d2 <= 0, 0 for d2 >= dhat2. */
export function barrier(d2: number, dhat2: number): number {
  if (d2 <= 0) return Infinity;
  if (d2 >= dhat2) return 0;
  const g = d2 - dhat2;
  return -g * g * Math.log(d2 / dhat2);
}

/** db/d(d2). -Infinity for d2 <= 0, 0 for d2 >= dhat2. */
export function barrierFirstDerivative(d2: number, dhat2: number): number {
  if (d2 <= 0) return -Infinity;
  if (d2 >= dhat2) return 0;
  return (dhat2 - d2) * (2 * Math.log(d2 / dhat2) - dhat2 / d2 + 1);
}

/** d^2 b / d(d2)^2. +Infinity for d2 <= 0, 0 for d2 >= dhat2. */
export function barrierSecondDerivative(d2: number, dhat2: number): number {
  if (d2 <= 0) return Infinity;
  if (d2 >= dhat2) return 0;
  const q = dhat2 / d2;
  return q * (q + 2) - 2 * Math.log(d2 / dhat2) - 3;
}

/** Factor of eps_x in the mollifier threshold (ipc-toolkit's value). */
export const EDGE_EDGE_MOLLIFIER_FACTOR = 1e-3;

/** eps_x = 1e-3 |ea1 - ea0|^2 |eb1 - eb0|^2 from the rest positions [ea0, ea1, eb0, eb1]. */
export function edgeEdgeMollifierThreshold(rest: ArrayLike<number>): number {
  let la = 0;
  let lb = 0;
  for (let i = 0; i < 3; i++) {
    const a = rest[3 + i] - rest[i];
    const b = rest[9 + i] - rest[6 + i];
    la += a * a;
    lb += b * b;
  }
  return EDGE_EDGE_MOLLIFIER_FACTOR * la * lb;
}

/** m(x) for x = |ea x eb|^2. */
export function mollifier(x: number, epsX: number): number {
  if (x >= epsX) return 1;
  const y = x / epsX;
  return (2 - y) * y;
}

/** dm/dx. */
export function mollifierFirstDerivative(x: number, epsX: number): number {
  if (x >= epsX) return 0;
  return (2 / epsX) * (1 - x / epsX);
}

/** d^2 m/dx^2. */
export function mollifierSecondDerivative(x: number, epsX: number): number {
  if (x >= epsX) return 0;
  return -2 / (epsX * epsX);
}

/** Whether the pair [ea0, ea1, eb0, eb1] is close enough to parallel for the mollifier to be active. */
export function edgeEdgeMollifierActive(x12: ArrayLike<number>, epsX: number): boolean {
  return edgeEdgeCrossSquaredNorm(x12) < epsX;
}

const crossGrad = new Float64Array(12);
const crossHess = new Float64Array(144);

/**
 * m(|ea x eb|^2) for [ea0, ea1, eb0, eb1], with gradient (12) and Hessian (144, row-major) w.r.t. the 12
 * coordinates when given: grad m = m' grad x, hess m = m'' grad x grad x^T + m' hess x.
 */
export function edgeEdgeMollifier(
  x12: ArrayLike<number>,
  epsX: number,
  grad: Float64Array | null = null,
  hess: Float64Array | null = null,
): number {
  const wantH = hess !== null;
  // Most edge pairs are far from parallel (m = 1): their derivatives are zero and need no cross-product chain rule.
  let c = edgeEdgeCrossSquaredNorm(x12);
  if (c >= epsX) {
    if (grad !== null) grad.fill(0, 0, 12);
    if (hess !== null) hess.fill(0, 0, 144);
    return 1;
  }
  if (grad !== null || wantH) c = edgeEdgeCrossSquaredNorm(x12, crossGrad, wantH ? crossHess : null);
  const m1 = mollifierFirstDerivative(c, epsX);
  if (grad !== null) for (let i = 0; i < 12; i++) grad[i] = m1 * crossGrad[i];
  if (hess !== null) {
    const m2 = mollifierSecondDerivative(c, epsX);
    for (let i = 0; i < 12; i++) {
      for (let j = 0; j < 12; j++) hess[12 * i + j] = m2 * crossGrad[i] * crossGrad[j] + m1 * crossHess[12 * i + j];
    }
  }
  return mollifier(c, epsX);
}

/** f(d2) = b((d - xi)^2; dhat2) with d = sqrt(d2): +Infinity for d <= xi, 0 for d >= xi + dhat. */
export function offsetBarrier(d2: number, xi: number, dhat2: number): number {
  if (xi === 0) return barrier(d2, dhat2);
  const g = Math.sqrt(d2) - xi;
  return g > 0 ? barrier(g * g, dhat2) : Infinity;
}

/** df/d(d2) of offsetBarrier: b'(g^2) g / d. */
export function offsetBarrierFirstDerivative(d2: number, xi: number, dhat2: number): number {
  if (xi === 0) return barrierFirstDerivative(d2, dhat2);
  const d = Math.sqrt(d2);
  const g = d - xi;
  return g > 0 ? (barrierFirstDerivative(g * g, dhat2) * g) / d : -Infinity;
}

/** d^2 f/d(d2)^2 of offsetBarrier: b''(g^2) g^2 / d^2 + b'(g^2) xi / (2 d^3). */
export function offsetBarrierSecondDerivative(d2: number, xi: number, dhat2: number): number {
  if (xi === 0) return barrierSecondDerivative(d2, dhat2);
  const d = Math.sqrt(d2);
  const g = d - xi;
  if (!(g > 0)) return Infinity;
  const g2 = g * g;
  return (barrierSecondDerivative(g2, dhat2) * g2) / d2 + (barrierFirstDerivative(g2, dhat2) * xi) / (2 * d2 * d);
}
