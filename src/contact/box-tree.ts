/**
 * A bounding-volume hierarchy over one kind of primitive (vertices, edges or triangles) for the contact broad phase.
 *
 * The tree's shape is built once, from the primitives' positions at the first query: primitives of one collision
 * group (a body) stay in one subtree, split at the median along the widest axis, and the groups themselves are
 * split the same way by their centroids. Later queries only refit the boxes (a body deforms and moves but keeps its
 * topology), so a query costs a linear refit plus a traversal that visits overlapping node pairs only.
 */

/** Primitives per leaf at most. */
const LEAF_SIZE = 4;

/** Receives a pair of primitives whose boxes overlap. */
export type PairVisitor = (p: number, q: number) => void;

/** Node-level filter: false skips every pair between the subtrees (group ranges [loA, hiA] and [loB, hiB]). */
export type GroupFilter = (loA: number, hiA: number, loB: number, hiB: number) => boolean;

export class BoxTree {
  /** Primitive ids in leaf order. */
  private readonly order: Int32Array;
  /** Per node: first child (or -1 for a leaf), leaf range start and count, group range, box (6 numbers). */
  private readonly left: Int32Array;
  private readonly right: Int32Array;
  private readonly start: Int32Array;
  private readonly count: Int32Array;
  private readonly groupLo: Int32Array;
  private readonly groupHi: Int32Array;
  readonly box: Float64Array;
  /**
   * The primitives' boxes in leaf order (copied by refit): a leaf's boxes are then adjacent in memory, and the
   * primitive pairs of two leaves are tested without a lookup per box.
   */
  private readonly leafBoxes: Float64Array;
  private nodes = 0;
  private stack = new Int32Array(256);

  /**
   * centers: 3 numbers per primitive (its position when the shape is chosen); group: the group of each primitive.
   */
  constructor(centers: Float64Array, group: Int32Array) {
    const n = group.length;
    const capacity = Math.max(1, 2 * n);
    this.order = Int32Array.from({ length: n }, (_, i) => i);
    this.left = new Int32Array(capacity);
    this.right = new Int32Array(capacity);
    this.start = new Int32Array(capacity);
    this.count = new Int32Array(capacity);
    this.groupLo = new Int32Array(capacity);
    this.groupHi = new Int32Array(capacity);
    this.box = new Float64Array(6 * capacity);
    this.leafBoxes = new Float64Array(6 * n);
    if (n > 0) this.build(0, n, centers, group);
  }

  /** Recursively splits order[lo, hi): by groups while the range spans several, then by the median primitive. */
  private build(lo: number, hi: number, centers: Float64Array, group: Int32Array): number {
    const node = this.nodes++;
    const ids = this.order;
    let gLo = Infinity, gHi = -Infinity;
    for (let i = lo; i < hi; i++) {
      gLo = Math.min(gLo, group[ids[i]]);
      gHi = Math.max(gHi, group[ids[i]]);
    }
    this.groupLo[node] = gLo;
    this.groupHi[node] = gHi;
    if (gLo === gHi && hi - lo <= LEAF_SIZE) {
      this.left[node] = this.right[node] = -1;
      this.start[node] = lo;
      this.count[node] = hi - lo;
      return node;
    }
    let mid: number;
    const slice = Array.from(ids.subarray(lo, hi));
    if (gLo !== gHi) {
      // Several groups: order them by centroid along the widest axis and cut between groups near the middle.
      const sums = new Map<number, [number, number, number, number]>();
      for (const p of slice) {
        const s = sums.get(group[p]) ?? [0, 0, 0, 0];
        for (let d = 0; d < 3; d++) s[d] += centers[3 * p + d];
        s[3]++;
        sums.set(group[p], s);
      }
      const axis = widestAxis([...sums.values()].map((s) => [s[0] / s[3], s[1] / s[3], s[2] / s[3]]));
      const key = (g: number) => { const s = sums.get(g)!; return s[axis] / s[3]; };
      slice.sort((a, b) => key(group[a]) - key(group[b]) || group[a] - group[b]);
      // The group boundary closest to the middle of the range.
      const half = slice.length / 2;
      let best = -1;
      for (let i = 1; i < slice.length; i++) {
        if (group[slice[i]] !== group[slice[i - 1]] && (best < 0 || Math.abs(i - half) < Math.abs(best - half))) best = i;
      }
      mid = lo + best;
    } else {
      const axis = widestAxis(slice.map((p) => [centers[3 * p], centers[3 * p + 1], centers[3 * p + 2]]));
      slice.sort((a, b) => centers[3 * a + axis] - centers[3 * b + axis] || a - b);
      mid = lo + (slice.length >> 1);
    }
    ids.set(slice, lo);
    this.start[node] = lo;
    this.count[node] = hi - lo;
    this.left[node] = this.build(lo, mid, centers, group);
    this.right[node] = this.build(mid, hi, centers, group);
    return node;
  }

  /** Sets every node's box from the primitives' boxes (6 numbers each: min xyz, max xyz). */
  refit(primitiveBoxes: Float64Array): void {
    const box = this.box, leafBoxes = this.leafBoxes, order = this.order;
    for (let i = 0; i < order.length; i++) {
      const p = 6 * order[i], o = 6 * i;
      for (let d = 0; d < 6; d++) leafBoxes[o + d] = primitiveBoxes[p + d];
    }
    // Children are created after their parent, so a reverse sweep sees them first.
    for (let node = this.nodes - 1; node >= 0; node--) {
      const o = 6 * node;
      const l = this.left[node];
      if (l < 0) {
        box.fill(Infinity, o, o + 3);
        box.fill(-Infinity, o + 3, o + 6);
        for (let i = this.start[node], e = i + this.count[node]; i < e; i++) {
          const p = 6 * i;
          for (let d = 0; d < 3; d++) {
            if (leafBoxes[p + d] < box[o + d]) box[o + d] = leafBoxes[p + d];
            if (leafBoxes[p + 3 + d] > box[o + 3 + d]) box[o + 3 + d] = leafBoxes[p + 3 + d];
          }
        }
      } else {
        const a = 6 * l, b = 6 * this.right[node];
        for (let d = 0; d < 3; d++) {
          box[o + d] = Math.min(box[a + d], box[b + d]);
          box[o + 3 + d] = Math.max(box[a + 3 + d], box[b + 3 + d]);
        }
      }
    }
  }

  /**
   * Every pair (p of this tree, q of `other`) whose primitive boxes overlap; with other === this, every unordered
   * pair of distinct primitives once. Both trees must be refitted. `filter` prunes subtree pairs by group range.
   */
  pairs(other: BoxTree, filter: GroupFilter, visit: PairVisitor): void {
    if (this.nodes === 0 || other.nodes === 0) return;
    const self = other === this;
    let stack = this.stack;
    let top = 0;
    stack[top++] = 0;
    stack[top++] = 0;
    while (top > 0) {
      const j = stack[--top];
      const i = stack[--top];
      if (!filter(this.groupLo[i], this.groupHi[i], other.groupLo[j], other.groupHi[j])) continue;
      if (!(self && i === j) && !overlap(this.box, 6 * i, other.box, 6 * j)) continue;
      const li = this.left[i], lj = other.left[j];
      if (li < 0 && lj < 0) {
        this.leafPairs(i, other, j, self && i === j, visit);
        continue;
      }
      if (top + 8 > stack.length) {
        const grown = new Int32Array(2 * stack.length);
        grown.set(stack);
        this.stack = stack = grown;
      }
      if (self && i === j) {
        // A subtree with itself: each child with itself, and the two children with each other.
        stack[top++] = li; stack[top++] = li;
        stack[top++] = this.right[i]; stack[top++] = this.right[i];
        stack[top++] = li; stack[top++] = this.right[i];
      } else if (lj < 0 || (li >= 0 && this.count[i] >= other.count[j])) {
        stack[top++] = li; stack[top++] = j;
        stack[top++] = this.right[i]; stack[top++] = j;
      } else {
        stack[top++] = i; stack[top++] = lj;
        stack[top++] = i; stack[top++] = other.right[j];
      }
    }
  }

  private leafPairs(i: number, other: BoxTree, j: number, same: boolean, visit: PairVisitor): void {
    const a0 = this.start[i], a1 = a0 + this.count[i];
    const b0 = other.start[j], b1 = b0 + other.count[j];
    const A = this.leafBoxes, B = other.leafBoxes;
    for (let s = a0; s < a1; s++) {
      const o = 6 * s;
      const x0 = A[o], y0 = A[o + 1], z0 = A[o + 2], x1 = A[o + 3], y1 = A[o + 4], z1 = A[o + 5];
      for (let t = same ? s + 1 : b0; t < b1; t++) {
        const p = 6 * t;
        if (x0 <= B[p + 3] && B[p] <= x1 && y0 <= B[p + 4] && B[p + 1] <= y1 && z0 <= B[p + 5] && B[p + 2] <= z1) visit(this.order[s], other.order[t]);
      }
    }
  }
}

function overlap(a: Float64Array, o: number, b: Float64Array, p: number): boolean {
  return a[o] <= b[p + 3] && b[p] <= a[o + 3] && a[o + 1] <= b[p + 4] && b[p + 1] <= a[o + 4] && a[o + 2] <= b[p + 5] && b[p + 2] <= a[o + 5];
}

function widestAxis(points: number[][]): number {
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const p of points) for (let d = 0; d < 3; d++) { lo[d] = Math.min(lo[d], p[d]); hi[d] = Math.max(hi[d], p[d]); }
  const ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
  return ext[0] >= ext[1] && ext[0] >= ext[2] ? 0 : ext[1] >= ext[2] ? 1 : 2;
}
