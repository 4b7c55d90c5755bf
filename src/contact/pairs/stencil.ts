/**
 * Where contact meets the degrees of freedom: a pair's stencil (its nodes, at most MAX_STENCIL) is read from the
 * position vector, and its local gradient and Hessian (3 per node; Hessians (3n x 3n) row-major) are added into the
 * global ones, here and nowhere else.
 *
 * Today every collision vertex is a node of x with its own 3 DOFs. For vertices mapped from fewer DOFs (an affine
 * body: x_v = A x_rest + p, linear in its 12 DOFs q) the kinds would read vertex positions the model evaluates once
 * per x, and the scatters here would add J^T g and J^T H J into the DOFs' blocks (the pattern helpers naming those
 * blocks); a vertex's trajectory stays linear along a Newton step, so the CCD end points below stay exact. The pair
 * kinds would not change.
 */
import type { BsrMatrix, BsrPattern, PatternBuilder } from '../../math/bsr.js';

/** The most nodes a pair's stencil has (vertex-triangle and edge-edge: 4). */
export const MAX_STENCIL = 4;

export function gatherNode(x: Float64Array, node: number, out: Float64Array, o: number): void {
  out[o] = x[3 * node];
  out[o + 1] = x[3 * node + 1];
  out[o + 2] = x[3 * node + 2];
}

/** Positions of the stencil nodes[offset .. offset + size) packed into out (3 per node). */
export function gatherStencil(x: Float64Array, nodes: Int32Array, offset: number, size: number, out: Float64Array): void {
  for (let i = 0; i < size; i++) gatherNode(x, nodes[offset + i], out, 3 * i);
}

/** g += scale * local over the stencil nodes[offset .. offset + size). */
export function scatterGradient(g: Float64Array, nodes: Int32Array, offset: number, size: number, local: Float64Array, scale: number): void {
  for (let i = 0; i < size; i++) {
    const o = 3 * nodes[offset + i];
    g[o] += scale * local[3 * i];
    g[o + 1] += scale * local[3 * i + 1];
    g[o + 2] += scale * local[3 * i + 2];
  }
}

/**
 * H += scale * local over the blocks between free nodes of the stencil nodes[offset .. offset + size); every such
 * block must be in H's pattern (patternStale and addPattern see to that).
 */
export function scatterHessian(
  H: BsrMatrix,
  nodes: Int32Array,
  offset: number,
  size: number,
  fixed: Uint8Array,
  local: Float64Array,
  scale: number,
): void {
  const { values, pattern } = H;
  const dim = 3 * size;
  for (let a = 0; a < size; a++) {
    const na = nodes[offset + a];
    if (fixed[na]) continue;
    for (let b = 0; b < size; b++) {
      const nb = nodes[offset + b];
      if (fixed[nb]) continue;
      const slot = a === b ? pattern.diagSlot[na] : pattern.slot(na, nb);
      if (slot < 0) throw new Error(`contact: Hessian block (${na}, ${nb}) missing (patternStale was not consulted)`);
      const o = 9 * slot;
      for (let i = 0; i < 3; i++) {
        const r = (3 * a + i) * dim + 3 * b;
        values[o + 3 * i] += scale * local[r];
        values[o + 3 * i + 1] += scale * local[r + 1];
        values[o + 3 * i + 2] += scale * local[r + 2];
      }
    }
  }
}

/**
 * The pattern slots of a stencil's blocks (nodes[offset .. offset + size)), row-major size x size into
 * out[at ..]: -1 where either node is fixed. Throws when a block between free nodes is missing, as scatterHessian.
 * A term whose stencils stay put over many assemblies (lagged friction) looks them up once with this and adds
 * with scatterHessianAt, instead of searching the pattern on every assembly.
 */
export function stencilSlots(pattern: BsrPattern, nodes: Int32Array, offset: number, size: number, fixed: Uint8Array, out: Int32Array, at: number): void {
  for (let a = 0; a < size; a++) {
    const na = nodes[offset + a];
    for (let b = 0; b < size; b++) {
      const nb = nodes[offset + b];
      let slot = -1;
      if (!fixed[na] && !fixed[nb]) {
        slot = a === b ? pattern.diagSlot[na] : pattern.slot(na, nb);
        if (slot < 0) throw new Error(`contact: Hessian block (${na}, ${nb}) missing (patternStale was not consulted)`);
      }
      out[at + a * size + b] = slot;
    }
  }
}

/** scatterHessian with the stencil's slots from stencilSlots (slots[at ..]): the same sums in the same order. */
export function scatterHessianAt(values: Float64Array, slots: Int32Array, at: number, size: number, local: Float64Array, scale: number): void {
  const dim = 3 * size;
  for (let a = 0; a < size; a++) {
    for (let b = 0; b < size; b++) {
      const slot = slots[at + a * size + b];
      if (slot < 0) continue;
      const o = 9 * slot;
      for (let i = 0; i < 3; i++) {
        const r = (3 * a + i) * dim + 3 * b;
        values[o + 3 * i] += scale * local[r];
        values[o + 3 * i + 1] += scale * local[r + 1];
        values[o + 3 * i + 2] += scale * local[r + 2];
      }
    }
  }
}

/** Whether every coupling between the free nodes of a stencil (nodes[offset .. offset + size)) is a block of the pattern. */
export function stencilInPattern(pattern: BsrPattern, nodes: Int32Array, offset: number, size: number, fixed: Uint8Array): boolean {
  for (let a = 0; a < size; a++) {
    const na = nodes[offset + a];
    if (fixed[na]) continue;
    for (let b = a + 1; b < size; b++) {
      const nb = nodes[offset + b];
      if (!fixed[nb] && pattern.slot(na, nb) < 0) return false;
    }
  }
  return true;
}

/** The free nodes of a stencil (nodes[offset .. offset + size)) into `free` (MAX_STENCIL long); returns how many. */
export function freeStencilNodes(nodes: Int32Array, offset: number, size: number, fixed: Uint8Array, free: Int32Array): number {
  let m = 0;
  for (let a = 0; a < size; a++) if (!fixed[nodes[offset + a]]) free[m++] = nodes[offset + a];
  return m;
}

/** Registers the couplings between the free nodes of a stencil (nodes[offset .. offset + size)); `free` is MAX_STENCIL-long scratch. */
export function addStencilPattern(builder: PatternBuilder, nodes: Int32Array, offset: number, size: number, fixed: Uint8Array, free: Int32Array): void {
  const m = freeStencilNodes(nodes, offset, size, fixed, free);
  if (m > 1) builder.addClique(free.subarray(0, m));
}

/**
 * CCD end points of the stencil nodes[offset .. offset + size): positions at x into points[0 .. size) and at
 * x + t dx into points[MAX_STENCIL .. MAX_STENCIL + size).
 */
export function gatherEndpoints(
  x: Float64Array,
  dx: Float64Array,
  t: number,
  nodes: Int32Array,
  offset: number,
  size: number,
  points: readonly Float64Array[],
): void {
  for (let i = 0; i < size; i++) {
    const o = 3 * nodes[offset + i];
    const start = points[i], end = points[MAX_STENCIL + i];
    for (let a = 0; a < 3; a++) {
      start[a] = x[o + a];
      end[a] = x[o + a] + t * dx[o + a];
    }
  }
}
