/**
 * A bounding-volume hierarchy over one kind of primitive (vertices, edges or triangles) for the contact broad phase.
 *
 * The tree's shape is built once, from the primitives' positions at the first query: primitives of one collision
 * group (a body) stay in one subtree, split at the median along the widest axis, and the groups themselves are
 * split the same way by their centroids. Later queries only refit the boxes (a body deforms and moves but keeps its
 * topology), so a query costs a linear refit plus a traversal that visits overlapping node pairs only.
 *
 * A query along a motion (every node moving linearly from x to x + m, all at once) also refits the boxes at the
 * motion's end. Two subtrees are then skipped when, on some axis, the one lies beyond the other both at the start and
 * at the end: every point of a primitive moves linearly, so the lower bound of a box along an axis is a concave
 * function of the moment (the least of linear ones) and the upper bound a convex one, and the gap between them,
 * positive at both ends, stays positive in between. Neighbours that move alike (a turning or swinging body) are
 * paired only if near, where boxes swept by each primitive's own motion would pair everything along a long step.
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
  /** Per node and in leaf order: boxes at the motion's end (6 numbers each), for queries along a motion. */
  private readonly endBox: Float64Array;
  private readonly leafEnd: Float64Array;
  /** Whether the last refit had end boxes. */
  private moving = false;
  private nodes = 0;
  private stack = new Int32Array(256);
  /**
   * Three node ids per primitive in leaf order, when pairs of primitives that share a node are to be left out (a
   * tree of triangles whose neighbours' features the caller lists from the topology); null: every pair is visited.
   */
  private leafNodes: Int32Array | null = null;

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
    this.endBox = new Float64Array(6 * capacity);
    this.leafEnd = new Float64Array(6 * n);
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

  /**
   * Leaves out of `pairs` every two primitives that share a node: `nodes` holds 3 node ids per primitive (triangles),
   * in the primitives' order.
   */
  skipSharedNodes(nodes: Int32Array): void {
    const leaf = new Int32Array(3 * this.order.length);
    for (let i = 0; i < this.order.length; i++) leaf.set(nodes.subarray(3 * this.order[i], 3 * this.order[i] + 3), 3 * i);
    this.leafNodes = leaf;
  }

  /**
   * Sets every node's box from the primitives' boxes (6 numbers each: min xyz, max xyz), and with `end` (the
   * primitives' boxes at the end of a motion, same layout) every node's end box; without it, the tree is still.
   */
  refit(primitiveBoxes: Float64Array, end: Float64Array | null = null): void {
    this.fit(primitiveBoxes, this.leafBoxes, this.box);
    this.moving = end !== null;
    if (end !== null) this.fit(end, this.leafEnd, this.endBox);
  }

  /**
   * Copies the primitives' boxes into leaf order (leaf) and sets every node's box from them (node); the children of a
   * node come after it, so a reverse sweep sees them first.
   */
  private fit(primitiveBoxes: Float64Array, leaf: Float64Array, node: Float64Array): void {
    const { order, left, right, start, count } = this;
    for (let i = 0; i < order.length; i++) {
      const p = 6 * order[i], o = 6 * i;
      for (let d = 0; d < 6; d++) leaf[o + d] = primitiveBoxes[p + d];
    }
    for (let n = this.nodes - 1; n >= 0; n--) {
      const o = 6 * n;
      const l = left[n];
      if (l < 0) {
        let x0 = Infinity, y0 = Infinity, z0 = Infinity, x1 = -Infinity, y1 = -Infinity, z1 = -Infinity;
        for (let p = 6 * start[n], e = p + 6 * count[n]; p < e; p += 6) {
          if (leaf[p] < x0) x0 = leaf[p];
          if (leaf[p + 1] < y0) y0 = leaf[p + 1];
          if (leaf[p + 2] < z0) z0 = leaf[p + 2];
          if (leaf[p + 3] > x1) x1 = leaf[p + 3];
          if (leaf[p + 4] > y1) y1 = leaf[p + 4];
          if (leaf[p + 5] > z1) z1 = leaf[p + 5];
        }
        node[o] = x0;
        node[o + 1] = y0;
        node[o + 2] = z0;
        node[o + 3] = x1;
        node[o + 4] = y1;
        node[o + 5] = z1;
      } else {
        const a = 6 * l, b = 6 * right[n];
        for (let d = 0; d < 3; d++) {
          const lo = node[a + d], lo2 = node[b + d], hi = node[a + 3 + d], hi2 = node[b + 3 + d];
          node[o + d] = lo < lo2 ? lo : lo2;
          node[o + 3 + d] = hi > hi2 ? hi : hi2;
        }
      }
    }
  }

  /**
   * Every pair (p of this tree, q of `other`) whose primitive boxes overlap; with other === this, every unordered
   * pair of distinct primitives once. Both trees must be refitted, with end boxes or both without: with them,
   * boxes that no axis keeps apart over the whole motion (see the module comment). `filter` prunes subtree pairs by
   * group range.
   */
  pairs(other: BoxTree, filter: GroupFilter, visit: PairVisitor): void {
    if (this.nodes === 0 || other.nodes === 0) return;
    const self = other === this;
    if (this.moving !== other.moving) throw new Error('box tree: both trees must be refitted with end boxes or both without');
    const moving = this.moving;
    let stack = this.stack;
    let top = 0;
    stack[top++] = 0;
    stack[top++] = 0;
    while (top > 0) {
      const j = stack[--top];
      const i = stack[--top];
      if (!filter(this.groupLo[i], this.groupHi[i], other.groupLo[j], other.groupHi[j])) continue;
      if (!(self && i === j) && !(moving ? meet(this.box, this.endBox, 6 * i, other.box, other.endBox, 6 * j) : overlap(this.box, 6 * i, other.box, 6 * j))) continue;
      const li = this.left[i], lj = other.left[j];
      if (li < 0 && lj < 0) {
        if (moving) this.movingLeafPairs(i, other, j, self && i === j, visit);
        else this.leafPairs(i, other, j, self && i === j, visit);
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
    const shared = other === this ? this.leafNodes : null;
    for (let s = a0; s < a1; s++) {
      const o = 6 * s;
      const x0 = A[o], y0 = A[o + 1], z0 = A[o + 2], x1 = A[o + 3], y1 = A[o + 4], z1 = A[o + 5];
      for (let t = same ? s + 1 : b0; t < b1; t++) {
        const p = 6 * t;
        if (x0 <= B[p + 3] && B[p] <= x1 && y0 <= B[p + 4] && B[p + 1] <= y1 && z0 <= B[p + 5] && B[p + 2] <= z1) {
          if (shared === null || !shareNode(shared, s, t)) visit(this.order[s], other.order[t]);
        }
      }
    }
  }

  private movingLeafPairs(i: number, other: BoxTree, j: number, same: boolean, visit: PairVisitor): void {
    const a0 = this.start[i], a1 = a0 + this.count[i];
    const b0 = other.start[j], b1 = b0 + other.count[j];
    const A = this.leafBoxes, B = other.leafBoxes, EA = this.leafEnd, EB = other.leafEnd;
    const shared = other === this ? this.leafNodes : null;
    for (let s = a0; s < a1; s++) {
      for (let t = same ? s + 1 : b0; t < b1; t++) {
        if (meet(A, EA, 6 * s, B, EB, 6 * t) && (shared === null || !shareNode(shared, s, t))) visit(this.order[s], other.order[t]);
      }
    }
  }
}

/** Whether primitives s and t (leaf order; 3 node ids each in `nodes`) share a node. */
function shareNode(nodes: Int32Array, s: number, t: number): boolean {
  const a = nodes[3 * s], b = nodes[3 * s + 1], c = nodes[3 * s + 2];
  const d = nodes[3 * t], e = nodes[3 * t + 1], f = nodes[3 * t + 2];
  return a === d || a === e || a === f || b === d || b === e || b === f || c === d || c === e || c === f;
}

/**
 * Whether boxes a and b (offsets o and p; at the end of the motion ea and eb) can overlap at some moment of it:
 * false when on some axis one lies beyond the other both at the start and at the end (see the module comment).
 */
export function meet(a: Float64Array, ea: Float64Array, o: number, b: Float64Array, eb: Float64Array, p: number): boolean {
  // Written out, not looped over the axes: a self-contact query along a Newton step makes this test a few hundred
  // thousand times (with the fill loops of fillBoxes, this took the bunny's queries from 26.8 to 23.4 ms).
  return (
    !(b[p] > a[o + 3] && eb[p] > ea[o + 3]) && !(a[o] > b[p + 3] && ea[o] > eb[p + 3]) &&
    !(b[p + 1] > a[o + 4] && eb[p + 1] > ea[o + 4]) && !(a[o + 1] > b[p + 4] && ea[o + 1] > eb[p + 4]) &&
    !(b[p + 2] > a[o + 5] && eb[p + 2] > ea[o + 5]) && !(a[o + 2] > b[p + 5] && ea[o + 2] > eb[p + 5])
  );
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
