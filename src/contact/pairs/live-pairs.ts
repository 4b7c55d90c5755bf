/**
 * The loops of the barrier potential over a list's live pairs, written once and instantiated by each kind with its
 * own per-pair kernels (`sumEnergy: (list, x, c, e) => sumLiveEnergy(list, x, c, e, energy)`): each kind's loop
 * calls one known kernel, which the JIT can inline, instead of dispatching on the kind per pair (measured: a call
 * per pair through the kind made the gradient and Hessian loops about a fifth slower; planes pair every free vertex,
 * thousands of cheap pairs per call). The kernels return false (nothing written) for a pair with d >= dhat.
 */
import type { BsrMatrix } from '../../math/bsr.js';
import type { PairHessian, PairScratch } from './pair-kind.js';
import type { PairList } from './pair-list.js';
import { scatterGradient, scatterHessianAt } from './stencil.js';

/** m b(d^2) of pair k (unscaled). */
export type PairEnergy = (list: PairList, k: number, x: Float64Array, c: PairScratch) => number;
/** s grad(m b) of pair k into c.gradient. */
export type PairGradient = (list: PairList, k: number, x: Float64Array, s: number, c: PairScratch) => boolean;
/** s times the local Newton matrix of pair k into c.hessian. */
export type PairNewtonMatrix = (list: PairList, k: number, x: Float64Array, s: number, c: PairScratch, model: PairHessian) => boolean;

export function sumLiveEnergy(list: PairList, x: Float64Array, c: PairScratch, e: number, energy: PairEnergy): number {
  const live = list.live;
  for (let q = 0; q < list.liveCount; q++) e += energy(list, live[q], x, c);
  return e;
}

export function addLiveGradients(list: PairList, x: Float64Array, s: number, g: Float64Array, c: PairScratch, gradient: PairGradient): void {
  const { live, nodes } = list;
  const size = list.kind.size;
  for (let q = 0; q < list.liveCount; q++) {
    const k = live[q];
    if (gradient(list, k, x, s, c)) scatterGradient(g, nodes, size * k, size, c.gradient, 1);
  }
}

export function addLiveHessians(
  list: PairList,
  x: Float64Array,
  s: number,
  H: BsrMatrix,
  fixed: Uint8Array,
  c: PairScratch,
  model: PairHessian,
  hessian: PairNewtonMatrix,
): void {
  const { live } = list;
  const size = list.kind.size;
  for (let q = 0; q < list.liveCount; q++) {
    const k = live[q];
    if (!hessian(list, k, x, s, c, model)) continue;
    const at = list.slotsOf(H.pattern, k, fixed);
    scatterHessianAt(H.values, list.slotArray, at, size, c.hessian, 1);
  }
}
