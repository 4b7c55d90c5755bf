/**
 * Contact broad phase: lists the vertex-triangle and edge-edge pairs of boundary primitives whose axis-aligned
 * boxes overlap, with a uniform spatial hash (default) or with box trees refitted each query (options.method
 * 'bvh', box-tree.ts: the trees prune whole bodies at once, which makes pairs across bodies much cheaper to find),
 * either
 *   - proximity (active set): boxes at positions x, each inflated by dhat/2, so every pair closer than dhat is
 *     listed (a per-axis gap never exceeds the Euclidean distance), or
 *   - along a motion (a Newton step's candidates, candidate-set.ts): every node moves linearly from x to x + m,
 *     all together; every pair that could come closer than dhat at some moment of it is listed. The hash bins
 *     boxes swept by each primitive's own motion; the trees compare the motions of the two primitives (box-tree.ts),
 *     which lists far fewer pairs where neighbours move alike. Both are supersets of the pairs that come that close.
 *
 * Triangles and edges are binned into the cells their boxes cover (an open-addressing table keyed on integer cell
 * coordinates, entries grouped per cell). Each vertex (resp. edge) then visits the cells of its own box and tests
 * the box of every triangle (resp. later edge) found there. A pair whose boxes overlap shares several cells; it is
 * reported only in the cell holding the lowest corner of the boxes' intersection, which is the componentwise max
 * of the two boxes' lowest cells (floor is monotone), so every pair comes out exactly once without a set.
 *
 * findEdgeTriangleCandidates lists edge-triangle pairs the same way (boxes at x, no inflation), for intersection
 * checks.
 *
 * The trees search triangle pairs only when every vertex and edge belongs to a triangle: each triangle owns some of its
 * vertices and edges, and the owned features of two triangles whose boxes meet are tested against each other (see
 * `owners`). Either way a query's pairs are sorted at the end (vertex-triangle by vertex then triangle, edge-edge by
 * lower then higher edge), so the same query gives the same list, in the same order, whatever searched it.
 *
 * Self-contact is included: primitives of the same body are paired like any other, minus the pairs that share a
 * node (a vertex of the triangle, a common edge endpoint), whose distance is zero by construction. With collision
 * groups (options.groupOfNode) a query can ask for the pairs inside one group only, or across groups only: the
 * other kind is rejected before any box test, which matters because a body's own near pairs far outnumber the
 * pairs it has with anything else.
 *
 * All buffers live in the object and only grow, so repeated queries on the same surface allocate nothing once
 * the largest query has been seen.
 */

import { BoxTree, meet, type GroupFilter, type PairVisitor } from './box-tree.js';

export interface BroadPhaseSurface {
  /** Node ids of the surface vertices. */
  vertices: ArrayLike<number>;
  /** Surface edges, 2 node ids each. */
  edges: ArrayLike<number>;
  /** Surface triangles, 3 node ids each. */
  triangles: ArrayLike<number>;
}

export interface BroadPhaseOptions {
  /**
   * Per node, nonzero = fixed (prescribed). When given, pairs whose nodes are all fixed are skipped: they can
   * neither move into contact nor be pushed apart.
   */
  fixedNodes?: ArrayLike<number> | null;
  /**
   * Multiplies the automatic cell size (mean largest box extent over the edges); default 2. Twice the mean edge
   * box lists the same pairs from fewer cell entries: the contact check of a bunny on the stairs took 80-88 ms
   * against 140-152 with cells of one mean extent (one scene and state, medians of 25 calls), 27 % less on the
   * trampoline; 1.5 and 3 were no better than 2.
   */
  cellSizeScale?: number;
  /**
   * How vertex-triangle and edge-edge candidates are found: 'hash' (default; the spatial hash, no state between
   * queries) or 'bvh' (box trees whose shape is fixed at the first query and refitted after: faster for bodies
   * that keep their topology, which every simulated body does).
   */
  method?: 'hash' | 'bvh';
  /** Collision group of each node (a body, an obstacle): enables the `pairs` argument of the queries. */
  groupOfNode?: ArrayLike<number> | null;
  /** Per group, nonzero = its own primitives can touch each other (queries for 'same-group' pairs skip the others). */
  selfContact?: ArrayLike<number> | null;
}

/**
 * Which pairs a query lists: all, only pairs inside one collision group (of a group with self-contact), or only
 * pairs across groups. The last two need options.groupOfNode.
 */
export type PairKind = 'all' | 'same-group' | 'cross-group';

/** Hash-table slot marker meaning "empty in this generation". */
const NO_SLOT = -1;
/** Cell indices stay below this, so products and sums of them are exact and fit Int32 arithmetic. */
const MAX_CELLS_PER_AXIS = 1 << 30;
/** BroadPhaseOptions.cellSizeScale's default. */
const DEFAULT_CELL_SIZE_SCALE = 2;

/** Grows an Int32Array to at least `size` entries, keeping the first `keep` ones. */
function growInt32(a: Int32Array<ArrayBuffer>, size: number, keep: number): Int32Array<ArrayBuffer> {
  if (a.length >= size) return a;
  let n = Math.max(16, a.length);
  while (n < size) n *= 2;
  const b = new Int32Array(n);
  b.set(a.subarray(0, keep));
  return b;
}

/**
 * Cells -> primitive ids. Primitive p covers the cells lo..hi (inclusive) given by cells[6p..6p+5]
 * = (lo x, lo y, lo z, hi x, hi y, hi z).
 */
class CellTable {
  private capacity = 0;
  private mask = 0;
  /** Cell coordinates of each slot, 3 per slot; valid where stamp[slot] === generation. */
  private keys = new Int32Array(0);
  private stamp = new Int32Array(0);
  private generation = 0;
  /** Entries of slot s are entries[begin[s] .. end[s]). */
  begin = new Int32Array(0);
  end = new Int32Array(0);
  entries = new Int32Array(0);
  private usedSlots = new Int32Array(0);

  build(cells: Int32Array, count: number): void {
    let total = 0;
    for (let p = 0; p < count; p++) {
      const o = 6 * p;
      total += (cells[o + 3] - cells[o] + 1) * (cells[o + 4] - cells[o + 1] + 1) * (cells[o + 5] - cells[o + 2] + 1);
    }
    // At most `total` distinct cells; load factor <= 1/2 keeps linear probing short.
    let cap = 16;
    while (cap < 2 * total) cap *= 2;
    if (cap > this.capacity) {
      this.capacity = cap;
      this.mask = cap - 1;
      this.keys = new Int32Array(3 * cap);
      this.stamp = new Int32Array(cap);
      this.begin = new Int32Array(cap);
      this.end = new Int32Array(cap);
      this.generation = 0;
    }
    // A new generation empties the table without touching it (stamps of older generations are stale).
    this.generation++;
    if (this.generation === 0x7fffffff) {
      this.stamp.fill(0);
      this.generation = 1;
    }
    this.usedSlots = growInt32(this.usedSlots, total, 0);
    this.entries = growInt32(this.entries, total, 0);

    // Pass 1: find or create every covered cell, counting its entries in end[].
    let used = 0;
    for (let p = 0; p < count; p++) {
      const o = 6 * p;
      for (let iz = cells[o + 2]; iz <= cells[o + 5]; iz++) {
        for (let iy = cells[o + 1]; iy <= cells[o + 4]; iy++) {
          for (let ix = cells[o]; ix <= cells[o + 3]; ix++) {
            const s = this.probe(ix, iy, iz);
            if (this.stamp[s] !== this.generation) {
              this.stamp[s] = this.generation;
              this.keys[3 * s] = ix;
              this.keys[3 * s + 1] = iy;
              this.keys[3 * s + 2] = iz;
              this.end[s] = 0;
              this.usedSlots[used++] = s;
            }
            this.end[s]++;
          }
        }
      }
    }
    // Offsets; end[] becomes the fill cursor and ends at the true end.
    let offset = 0;
    for (let u = 0; u < used; u++) {
      const s = this.usedSlots[u];
      const n = this.end[s];
      this.begin[s] = offset;
      this.end[s] = offset;
      offset += n;
    }
    // Pass 2: fill.
    for (let p = 0; p < count; p++) {
      const o = 6 * p;
      for (let iz = cells[o + 2]; iz <= cells[o + 5]; iz++) {
        for (let iy = cells[o + 1]; iy <= cells[o + 4]; iy++) {
          for (let ix = cells[o]; ix <= cells[o + 3]; ix++) {
            const s = this.probe(ix, iy, iz);
            this.entries[this.end[s]++] = p;
          }
        }
      }
    }
  }

  /** Slot of cell (ix, iy, iz), or NO_SLOT when no primitive covers it. */
  find(ix: number, iy: number, iz: number): number {
    const s = this.probe(ix, iy, iz);
    return this.stamp[s] === this.generation ? s : NO_SLOT;
  }

  /** The slot holding the cell, or the empty slot where it would go. */
  private probe(ix: number, iy: number, iz: number): number {
    let s = ((Math.imul(ix, 0x8da6b343) ^ Math.imul(iy, 0xd8163841) ^ Math.imul(iz, 0xcb1ab31f)) >>> 0) & this.mask;
    const k = this.keys;
    while (this.stamp[s] === this.generation) {
      if (k[3 * s] === ix && k[3 * s + 1] === iy && k[3 * s + 2] === iz) return s;
      s = (s + 1) & this.mask;
    }
    return s;
  }
}

export class SpatialHashBroadPhase {
  /** Vertex-triangle candidates: [vertex node id, triangle index] per pair; the first `vertexTriangleCount` are valid. */
  vertexTrianglePairs = new Int32Array(0);
  vertexTriangleCount = 0;
  /** Edge-edge candidates: [edge index a, edge index b] with a < b; the first `edgeEdgeCount` are valid. */
  edgeEdgePairs = new Int32Array(0);
  edgeEdgeCount = 0;
  /**
   * Edge-triangle candidates of the last findEdgeTriangleCandidates: [edge index, triangle index] per pair; the
   * first `edgeTriangleCount` are valid.
   */
  edgeTrianglePairs = new Int32Array(0);
  edgeTriangleCount = 0;
  /** Cell size used by the last query. */
  cellSize = 0;

  private readonly vertices: Int32Array;
  private readonly edges: Int32Array;
  private readonly triangles: Int32Array;
  private readonly nv: number;
  private readonly ne: number;
  private readonly nt: number;
  private fixedNodes: ArrayLike<number> | null;
  /** Scratch for sortPairs. */
  private sortKeys: Float64Array<ArrayBuffer> = new Float64Array(0);
  private readonly cellSizeScale: number;

  // Boxes (min xyz, max xyz) and their cell ranges (lo xyz, hi xyz), 6 numbers per primitive.
  private readonly vertexBoxes: Float64Array;
  private readonly edgeBoxes: Float64Array;
  private readonly triangleBoxes: Float64Array;
  /** Boxes of the primitives at the end of the motion in a query along one (6 numbers each, as the boxes). */
  private readonly vertexEnd: Float64Array;
  private readonly edgeEnd: Float64Array;
  private readonly triangleEnd: Float64Array;
  /** x + motion, for the end boxes. */
  private endPositions = new Float64Array(0);
  private readonly vertexCells: Int32Array;
  private readonly edgeCells: Int32Array;
  private readonly triangleCells: Int32Array;
  private readonly edgeTable = new CellTable();
  private readonly triangleTable = new CellTable();
  /** Collision group of each vertex, edge and triangle (all 0 without options.groupOfNode). */
  private readonly vertexGroup: Int32Array;
  private readonly edgeGroup: Int32Array;
  private readonly triangleGroup: Int32Array;
  /** Per group, 1 when its pairs are listed by 'same-group' queries. */
  private readonly groupSelfContact: Uint8Array;
  private readonly hasGroups: boolean;
  /** Pair kind of the running query: 0 all, 1 same group, 2 across groups. */
  private pairMode = 0;
  private readonly method: 'hash' | 'bvh';
  /** Box trees over vertices, edges and triangles ('bvh' method; shaped at the first query). */
  private trees: { vertex: BoxTree | null; edge: BoxTree | null; triangle: BoxTree } | null = null;
  private readonly groupFilter: GroupFilter;
  /**
   * The pair rule both methods share, applied to a vertex-triangle (vertex index, triangle index) or edge-edge pair
   * whose boxes overlap: the query's pair kind, no shared node, not every node fixed; then the pair is listed.
   */
  private readonly visitVertexTriangle: PairVisitor;
  private readonly visitEdgeEdge: PairVisitor;
  /**
   * The features each triangle owns ('bvh' method; null when a vertex or an edge belongs to no triangle): the trees
   * then search triangle pairs only, and test the owned vertices and edges of the two triangles of each pair whose
   * boxes meet (representative triangles, after Curtis, Tamstorf and Manocha, "Fast collision detection for
   * deformable models using representative-triangles"). A triangle's box holds its vertices' and edges' boxes, so
   * every vertex-triangle pair (v, t) whose boxes meet is found once, from the triangles (owner of v, t), and every
   * edge-edge pair once, from the owners of its two edges; one search replaces two, over fewer and larger
   * primitives.
   */
  private readonly owners: FeatureOwners | null;
  /** Visits a pair of triangles for their owned features (see owners). */
  private readonly visitTrianglePair: PairVisitor;
  /** Whether the running query is along a motion compared by end boxes. */
  private queryMoving = false;

  constructor(surface: BroadPhaseSurface, options: BroadPhaseOptions = {}) {
    if (surface.edges.length % 2 !== 0) throw new Error('broad phase: edges must hold 2 node ids each');
    if (surface.triangles.length % 3 !== 0) throw new Error('broad phase: triangles must hold 3 node ids each');
    this.vertices = Int32Array.from(surface.vertices);
    this.edges = Int32Array.from(surface.edges);
    this.triangles = Int32Array.from(surface.triangles);
    this.nv = this.vertices.length;
    this.ne = this.edges.length / 2;
    this.nt = this.triangles.length / 3;
    this.fixedNodes = options.fixedNodes ?? null;
    this.cellSizeScale = options.cellSizeScale ?? DEFAULT_CELL_SIZE_SCALE;
    if (!(this.cellSizeScale > 0)) throw new Error('broad phase: cellSizeScale must be positive');
    this.vertexBoxes = new Float64Array(6 * this.nv);
    this.edgeBoxes = new Float64Array(6 * this.ne);
    this.triangleBoxes = new Float64Array(6 * this.nt);
    this.vertexEnd = new Float64Array(6 * this.nv);
    this.edgeEnd = new Float64Array(6 * this.ne);
    this.triangleEnd = new Float64Array(6 * this.nt);
    this.vertexCells = new Int32Array(6 * this.nv);
    this.edgeCells = new Int32Array(6 * this.ne);
    this.triangleCells = new Int32Array(6 * this.nt);
    const group = options.groupOfNode ?? null;
    this.hasGroups = group !== null;
    const groupOf = (nodes: Int32Array, arity: number) => Int32Array.from({ length: nodes.length / arity }, (_, p) => (group ? group[nodes[arity * p]] : 0));
    this.vertexGroup = groupOf(this.vertices, 1);
    this.edgeGroup = groupOf(this.edges, 2);
    this.triangleGroup = groupOf(this.triangles, 3);
    let groups = 1;
    for (const g of this.vertexGroup) groups = Math.max(groups, g + 1);
    this.groupSelfContact = new Uint8Array(groups);
    for (let g = 0; g < groups; g++) this.groupSelfContact[g] = options.selfContact ? (options.selfContact[g] ? 1 : 0) : 1;
    this.method = options.method ?? 'hash';
    this.owners = this.method === 'bvh' ? ownFeatures(this.vertices, this.edges, this.triangles) : null;
    this.groupFilter = (loA, hiA, loB, hiB) => {
      const mode = this.pairMode;
      if (mode === 0) return true;
      if (mode === 2) return !(loA === hiA && loB === hiB && loA === loB);
      if (hiA < loB || hiB < loA) return false;
      return !(loA === hiA && this.groupSelfContact[loA] === 0) && !(loB === hiB && this.groupSelfContact[loB] === 0);
    };
    this.visitVertexTriangle = (i, t) => {
      const g = this.vertexGroup[i];
      if (this.skipGroup(g) || this.skipGroups(g, this.triangleGroup[t])) return;
      const v = this.vertices[i];
      const t0 = this.triangles[3 * t], t1 = this.triangles[3 * t + 1], t2 = this.triangles[3 * t + 2];
      if (v === t0 || v === t1 || v === t2 || this.allFixed(v, t0, t1, t2)) return;
      this.pushVertexTriangle(v, t);
    };
    this.visitEdgeEdge = (p, q) => {
      const a = Math.min(p, q), b = Math.max(p, q);
      const g = this.edgeGroup[a];
      if (this.skipGroup(g) || this.skipGroups(g, this.edgeGroup[b])) return;
      const e = this.edges;
      const a0 = e[2 * a], a1 = e[2 * a + 1], b0 = e[2 * b], b1 = e[2 * b + 1];
      if (a0 === b0 || a0 === b1 || a1 === b0 || a1 === b1 || this.allFixed(a0, a1, b0, b1)) return;
      this.pushEdgeEdge(a, b);
    };
    this.visitTrianglePair = (p, q) => {
      const { vertexStart, vertexOf, edgeStart, edgeOf } = this.owners!;
      const moving = this.queryMoving;
      const vb = this.vertexBoxes, tb = this.triangleBoxes, eb = this.edgeBoxes;
      const ve = this.vertexEnd, te = this.triangleEnd, ee = this.edgeEnd;
      for (let k = vertexStart[p]; k < vertexStart[p + 1]; k++) {
        const i = vertexOf[k];
        if (moving ? meet(vb, ve, 6 * i, tb, te, 6 * q) : boxesOverlap(vb, 6 * i, tb, 6 * q)) this.visitVertexTriangle(i, q);
      }
      for (let k = vertexStart[q]; k < vertexStart[q + 1]; k++) {
        const i = vertexOf[k];
        if (moving ? meet(vb, ve, 6 * i, tb, te, 6 * p) : boxesOverlap(vb, 6 * i, tb, 6 * p)) this.visitVertexTriangle(i, p);
      }
      for (let k = edgeStart[p]; k < edgeStart[p + 1]; k++) {
        const a = edgeOf[k];
        for (let l = edgeStart[q]; l < edgeStart[q + 1]; l++) {
          const b = edgeOf[l];
          if (moving ? meet(eb, ee, 6 * a, eb, ee, 6 * b) : boxesOverlap(eb, 6 * a, eb, 6 * b)) this.visitEdgeEdge(a, b);
        }
      }
    };
  }

  /** Changes the fixed-node mask (null: keep every pair). */
  setFixedNodes(fixedNodes: ArrayLike<number> | null): void {
    this.fixedNodes = fixedNodes;
  }

  /**
   * Active-set candidates: every pair whose distance at x could be below dhat (boxes inflated by dhat/2). With
   * groupReach (per collision group, needs options.groupOfNode) the boxes of a group's primitives grow by
   * groupReach[g]/2 more: a pair of groups g and h is then listed when it could be closer than
   * dhat + (groupReach[g] + groupReach[h])/2, so a body that moves fast can be given a longer look-ahead than its
   * resting neighbours. With `motion` (3 numbers per node), every pair that could be that close at some moment
   * while all nodes move linearly from x to x + motion together: with `relative` (the 'bvh' method only) by
   * comparing the two primitives' motions, otherwise by boxes swept by each primitive's own motion. Comparing pays
   * where neighbours move alike (inside a turning, swinging body); against a still obstacle, sweeping is as tight
   * and cheaper.
   */
  findProximityCandidates(
    x: ArrayLike<number>, dhat: number, pairs: PairKind = 'all', groupReach: ArrayLike<number> | null = null,
    motion: ArrayLike<number> | null = null, relative = true,
  ): void {
    if (!(dhat >= 0)) throw new Error(`broad phase: dhat must be >= 0, got ${dhat}`);
    if (groupReach !== null && !this.hasGroups) throw new Error('broad phase: groupReach needs options.groupOfNode');
    this.run(x, 0.5 * dhat, pairs, groupReach, motion, relative && this.method === 'bvh');
  }

  /**
   * Intersection candidates: every edge-triangle pair whose boxes at x (no inflation) overlap, minus the pairs
   * that share a node and those whose five nodes are all fixed. Fills edgeTrianglePairs/edgeTriangleCount only;
   * the vertex-triangle and edge-edge lists of an earlier query are left as they were.
   */
  findEdgeTriangleCandidates(x: ArrayLike<number>): void {
    this.pairMode = 0;
    fillBoxes(this.vertices, 1, x, 0, this.vertexBoxes);
    fillBoxes(this.edges, 2, x, 0, this.edgeBoxes);
    fillBoxes(this.triangles, 3, x, 0, this.triangleBoxes);
    this.chooseGrid();
    this.triangleTable.build(this.triangleCells, this.nt);
    this.edgeTriangleCount = 0;
    this.collectEdgeTriangle();
  }

  private run(
    x: ArrayLike<number>, inflate: number, pairs: PairKind, groupReach: ArrayLike<number> | null, motion: ArrayLike<number> | null,
    relative: boolean,
  ): void {
    if (pairs !== 'all' && !this.hasGroups) throw new Error(`broad phase: '${pairs}' pairs need options.groupOfNode`);
    this.pairMode = pairs === 'all' ? 0 : pairs === 'same-group' ? 1 : 2;
    const moving = motion !== null && relative;
    const sweep = relative ? null : motion;
    fillBoxes(this.vertices, 1, x, inflate, this.vertexBoxes, sweep);
    fillBoxes(this.edges, 2, x, inflate, this.edgeBoxes, sweep);
    fillBoxes(this.triangles, 3, x, inflate, this.triangleBoxes, sweep);
    if (moving) {
      if (this.endPositions.length < x.length) this.endPositions = new Float64Array(x.length);
      const end = this.endPositions;
      for (let i = 0; i < x.length; i++) end[i] = x[i] + motion[i];
      fillBoxes(this.vertices, 1, end, inflate, this.vertexEnd);
      fillBoxes(this.edges, 2, end, inflate, this.edgeEnd);
      fillBoxes(this.triangles, 3, end, inflate, this.triangleEnd);
    }
    if (groupReach !== null) {
      growBoxes(this.vertexBoxes, this.vertexGroup, groupReach);
      growBoxes(this.edgeBoxes, this.edgeGroup, groupReach);
      growBoxes(this.triangleBoxes, this.triangleGroup, groupReach);
      if (moving) {
        growBoxes(this.vertexEnd, this.vertexGroup, groupReach);
        growBoxes(this.edgeEnd, this.edgeGroup, groupReach);
        growBoxes(this.triangleEnd, this.triangleGroup, groupReach);
      }
    }
    if (this.method === 'bvh') {
      this.collectWithTrees(moving);
    } else {
      this.chooseGrid();
      this.edgeTable.build(this.edgeCells, this.ne);
      this.triangleTable.build(this.triangleCells, this.nt);
      this.vertexTriangleCount = 0;
      this.edgeEdgeCount = 0;
      this.collectVertexTriangle();
      this.collectEdgeEdge();
    }
    this.sortKeys = sortPairs(this.vertexTrianglePairs, this.vertexTriangleCount, this.nt, this.sortKeys);
    this.sortKeys = sortPairs(this.edgeEdgePairs, this.edgeEdgeCount, this.ne, this.sortKeys);
  }

  /** Cell size and origin from the boxes, then every primitive's cell range. */
  private chooseGrid(): void {
    const lo = gridLo, hi = gridHi;
    lo.fill(Infinity);
    hi.fill(-Infinity);
    growBounds(this.vertexBoxes, lo, hi);
    growBounds(this.edgeBoxes, lo, hi);
    growBounds(this.triangleBoxes, lo, hi);
    if (!(lo[0] <= hi[0])) {
      this.cellSize = 1;
      return; // no primitives
    }
    // Mean largest extent of the edge boxes: the typical triangle then covers a handful of cells per axis.
    let sum = 0;
    const eb = this.edgeBoxes;
    for (let o = 0; o < eb.length; o += 6) sum += Math.max(eb[o + 3] - eb[o], eb[o + 4] - eb[o + 1], eb[o + 5] - eb[o + 2]);
    let h = this.ne > 0 ? (this.cellSizeScale * sum) / this.ne : 0;
    const span = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    // Keep cell indices in range (huge domain, tiny edges) and avoid h = 0 (all boxes degenerate).
    h = Math.max(h, span / MAX_CELLS_PER_AXIS);
    if (!(h > 0)) h = 1;
    if (!Number.isFinite(h)) throw new Error('broad phase: non-finite positions');
    // A few huge boxes (a long sweep) would cover millions of small cells: coarsen until the tables stay linear.
    const budget = 64 * (this.ne + this.nt) + 4096;
    for (;;) {
      const inv = 1 / h;
      const covered = cellRanges(this.edgeBoxes, lo, inv, this.edgeCells) + cellRanges(this.triangleBoxes, lo, inv, this.triangleCells);
      if (covered <= budget) break;
      h *= 2;
    }
    this.cellSize = h;
    cellRanges(this.vertexBoxes, lo, 1 / h, this.vertexCells);
    if (this.pairMode === 1) {
      // Primitives of groups without self-contact take no part in a same-group query: an empty cell range keeps
      // them out of the tables (an obstacle's large triangles would otherwise cover many cells).
      emptyRanges(this.vertexCells, this.vertexGroup, this.groupSelfContact);
      emptyRanges(this.edgeCells, this.edgeGroup, this.groupSelfContact);
      emptyRanges(this.triangleCells, this.triangleGroup, this.groupSelfContact);
    }
  }

  /**
   * The 'bvh' method: refit the trees to the boxes just filled (shaping them on the first call; `moving`: and to
   * the boxes at the motion's end) and traverse.
   */
  private collectWithTrees(moving: boolean): void {
    if (!this.trees) {
      const centers = (boxes: Float64Array) => Float64Array.from({ length: boxes.length / 2 }, (_, k) => {
        const o = 6 * Math.floor(k / 3) + (k % 3);
        return 0.5 * (boxes[o] + boxes[o + 3]);
      });
      // With owned features only the triangles need a tree.
      const own = this.owners !== null;
      this.trees = {
        vertex: own ? null : new BoxTree(centers(this.vertexBoxes), this.vertexGroup),
        edge: own ? null : new BoxTree(centers(this.edgeBoxes), this.edgeGroup),
        triangle: new BoxTree(centers(this.triangleBoxes), this.triangleGroup),
      };
      // Triangles that share a node: their features are listed once, from the topology (visitNeighbourFeatures).
      if (own) this.trees.triangle.skipSharedNodes(this.triangles);
    }
    const { vertex, edge, triangle } = this.trees;
    if (this.owners !== null) {
      triangle.refit(this.triangleBoxes, moving ? this.triangleEnd : null);
      this.queryMoving = moving;
      this.vertexTriangleCount = 0;
      this.edgeEdgeCount = 0;
      triangle.pairs(triangle, this.groupFilter, this.visitTrianglePair);
      // Triangles that share a node belong to one group: an across-groups query has no use for them.
      if (this.pairMode !== 2) this.visitNeighbourFeatures(this.owners, moving);
      return;
    }
    if (vertex === null || edge === null) throw new Error('broad phase: vertex and edge trees missing');
    vertex.refit(this.vertexBoxes, moving ? this.vertexEnd : null);
    edge.refit(this.edgeBoxes, moving ? this.edgeEnd : null);
    triangle.refit(this.triangleBoxes, moving ? this.triangleEnd : null);
    this.vertexTriangleCount = 0;
    this.edgeEdgeCount = 0;
    vertex.pairs(triangle, this.groupFilter, this.visitVertexTriangle);
    edge.pairs(edge, this.groupFilter, this.visitEdgeEdge);
  }

  /**
   * The owned-feature pairs of the triangles that share a node (FeatureOwners.neighbourVertexTriangle and
   * neighbourEdgeEdge), which the triangle tree leaves out (skipSharedNodes): each pair whose boxes meet goes through
   * the pair rule as from the visitor, so the query lists what it listed before. Its group tests (a 'same-group'
   * query skips the groups without self-contact) stand in for the trees' group filter.
   */
  private visitNeighbourFeatures(owners: FeatureOwners, moving: boolean): void {
    const vb = this.vertexBoxes, tb = this.triangleBoxes, eb = this.edgeBoxes;
    const ve = this.vertexEnd, te = this.triangleEnd, ee = this.edgeEnd;
    const vt = owners.neighbourVertexTriangle, edgePairs = owners.neighbourEdgeEdge;
    for (let k = 0; k < vt.length; k += 2) {
      const i = vt[k], t = vt[k + 1];
      if (moving ? meet(vb, ve, 6 * i, tb, te, 6 * t) : boxesOverlap(vb, 6 * i, tb, 6 * t)) this.visitVertexTriangle(i, t);
    }
    for (let k = 0; k < edgePairs.length; k += 2) {
      const a = edgePairs[k], b = edgePairs[k + 1];
      if (moving ? meet(eb, ee, 6 * a, eb, ee, 6 * b) : boxesOverlap(eb, 6 * a, eb, 6 * b)) this.visitEdgeEdge(a, b);
    }
  }

  /** Whether the running query skips pairs between groups ga and gb (see PairKind). */
  private skipGroups(ga: number, gb: number): boolean {
    const mode = this.pairMode;
    return mode === 1 ? ga !== gb : mode === 2 && ga === gb;
  }

  /** Whether the running query lists no pair of a primitive of group g ('same-group' queries, g without self-contact). */
  private skipGroup(g: number): boolean {
    return this.pairMode === 1 && this.groupSelfContact[g] === 0;
  }

  private allFixed(a: number, b: number, c: number, d: number): boolean {
    const f = this.fixedNodes;
    return f !== null && f[a] !== 0 && f[b] !== 0 && f[c] !== 0 && f[d] !== 0;
  }

  private collectVertexTriangle(): void {
    const vb = this.vertexBoxes, tb = this.triangleBoxes, vc = this.vertexCells, tc = this.triangleCells;
    const table = this.triangleTable;
    const vg = this.vertexGroup, tg = this.triangleGroup;
    for (let i = 0; i < this.nv; i++) {
      const o = 6 * i;
      const g = vg[i];
      if (this.skipGroup(g)) continue;
      for (let iz = vc[o + 2]; iz <= vc[o + 5]; iz++) {
        for (let iy = vc[o + 1]; iy <= vc[o + 4]; iy++) {
          for (let ix = vc[o]; ix <= vc[o + 3]; ix++) {
            const slot = table.find(ix, iy, iz);
            if (slot === NO_SLOT) continue;
            for (let q = table.begin[slot], qe = table.end[slot]; q < qe; q++) {
              const t = table.entries[q];
              if (this.skipGroups(g, tg[t])) continue;
              const p = 6 * t;
              // Report only in the cell of the intersection's lowest corner (see the module comment).
              if (Math.max(vc[o], tc[p]) !== ix || Math.max(vc[o + 1], tc[p + 1]) !== iy || Math.max(vc[o + 2], tc[p + 2]) !== iz) continue;
              if (boxesOverlap(vb, o, tb, p)) this.visitVertexTriangle(i, t);
            }
          }
        }
      }
    }
  }

  private collectEdgeEdge(): void {
    const eb = this.edgeBoxes, ec = this.edgeCells, table = this.edgeTable;
    const eg = this.edgeGroup;
    for (let a = 0; a < this.ne; a++) {
      const o = 6 * a;
      const g = eg[a];
      if (this.skipGroup(g)) continue;
      for (let iz = ec[o + 2]; iz <= ec[o + 5]; iz++) {
        for (let iy = ec[o + 1]; iy <= ec[o + 4]; iy++) {
          for (let ix = ec[o]; ix <= ec[o + 3]; ix++) {
            const slot = table.find(ix, iy, iz);
            if (slot === NO_SLOT) continue;
            for (let q = table.begin[slot], qe = table.end[slot]; q < qe; q++) {
              const b = table.entries[q];
              if (b <= a || this.skipGroups(g, eg[b])) continue; // each unordered pair once, from its lower edge
              const p = 6 * b;
              if (Math.max(ec[o], ec[p]) !== ix || Math.max(ec[o + 1], ec[p + 1]) !== iy || Math.max(ec[o + 2], ec[p + 2]) !== iz) continue;
              if (boxesOverlap(eb, o, eb, p)) this.visitEdgeEdge(a, b);
            }
          }
        }
      }
    }
  }

  private collectEdgeTriangle(): void {
    const eb = this.edgeBoxes, tb = this.triangleBoxes, ec = this.edgeCells, tc = this.triangleCells;
    const edges = this.edges, tris = this.triangles, table = this.triangleTable, f = this.fixedNodes;
    for (let e = 0; e < this.ne; e++) {
      const o = 6 * e;
      const e0 = edges[2 * e], e1 = edges[2 * e + 1];
      for (let iz = ec[o + 2]; iz <= ec[o + 5]; iz++) {
        for (let iy = ec[o + 1]; iy <= ec[o + 4]; iy++) {
          for (let ix = ec[o]; ix <= ec[o + 3]; ix++) {
            const slot = table.find(ix, iy, iz);
            if (slot === NO_SLOT) continue;
            for (let q = table.begin[slot], qe = table.end[slot]; q < qe; q++) {
              const t = table.entries[q];
              const p = 6 * t;
              // Same lowest-cell rule as the other collectors: each pair once.
              if (Math.max(ec[o], tc[p]) !== ix || Math.max(ec[o + 1], tc[p + 1]) !== iy || Math.max(ec[o + 2], tc[p + 2]) !== iz) continue;
              if (!boxesOverlap(eb, o, tb, p)) continue;
              const t0 = tris[3 * t], t1 = tris[3 * t + 1], t2 = tris[3 * t + 2];
              if (e0 === t0 || e0 === t1 || e0 === t2 || e1 === t0 || e1 === t1 || e1 === t2) continue;
              if (f !== null && f[e0] !== 0 && this.allFixed(e1, t0, t1, t2)) continue;
              this.pushEdgeTriangle(e, t);
            }
          }
        }
      }
    }
  }

  private pushEdgeTriangle(e: number, t: number): void {
    const k = 2 * this.edgeTriangleCount;
    if (k + 2 > this.edgeTrianglePairs.length) this.edgeTrianglePairs = growInt32(this.edgeTrianglePairs, k + 2, k);
    this.edgeTrianglePairs[k] = e;
    this.edgeTrianglePairs[k + 1] = t;
    this.edgeTriangleCount++;
  }

  private pushVertexTriangle(v: number, t: number): void {
    const k = 2 * this.vertexTriangleCount;
    if (k + 2 > this.vertexTrianglePairs.length) this.vertexTrianglePairs = growInt32(this.vertexTrianglePairs, k + 2, k);
    this.vertexTrianglePairs[k] = v;
    this.vertexTrianglePairs[k + 1] = t;
    this.vertexTriangleCount++;
  }

  private pushEdgeEdge(a: number, b: number): void {
    const k = 2 * this.edgeEdgeCount;
    if (k + 2 > this.edgeEdgePairs.length) this.edgeEdgePairs = growInt32(this.edgeEdgePairs, k + 2, k);
    this.edgeEdgePairs[k] = a;
    this.edgeEdgePairs[k + 1] = b;
    this.edgeEdgeCount++;
  }
}

/** Per triangle, the surface vertices (indices) and edges it owns, as CSR lists (see SpatialHashBroadPhase.owners). */
interface FeatureOwners {
  vertexStart: Int32Array;
  vertexOf: Int32Array;
  edgeStart: Int32Array;
  edgeOf: Int32Array;
  /**
   * The owned-feature pairs of the triangle pairs that share a node (see neighbourFeaturePairs): vertex-triangle
   * (vertex index, triangle index) and edge-edge (edge index, edge index) pairs, 2 ints each, those sharing a node
   * left out.
   */
  neighbourVertexTriangle: Int32Array;
  neighbourEdgeEdge: Int32Array;
}

/**
 * Gives every surface vertex and edge one triangle it belongs to (the first one met); null when some vertex or edge
 * belongs to none (a rod, a free point), or when there are no triangles.
 */
function ownFeatures(vertices: Int32Array, edges: Int32Array, triangles: Int32Array): FeatureOwners | null {
  const nt = triangles.length / 3, nv = vertices.length, ne = edges.length / 2;
  if (nt === 0) return null;
  let top = 0;
  for (const v of vertices) top = Math.max(top, v + 1);
  for (const v of triangles) top = Math.max(top, v + 1);
  const indexOf = new Int32Array(top).fill(-1);
  for (let i = 0; i < nv; i++) indexOf[vertices[i]] = i;
  const edgeIndex = new Map<number, number>();
  for (let e = 0; e < ne; e++) {
    const a = edges[2 * e], b = edges[2 * e + 1];
    edgeIndex.set(Math.min(a, b) * top + Math.max(a, b), e);
  }
  const vertexOwner = new Int32Array(nv).fill(-1), edgeOwner = new Int32Array(ne).fill(-1);
  for (let t = 0; t < nt; t++) {
    for (let k = 0; k < 3; k++) {
      const a = triangles[3 * t + k], b = triangles[3 * t + ((k + 1) % 3)];
      const i = indexOf[a];
      if (i >= 0 && vertexOwner[i] < 0) vertexOwner[i] = t;
      const e = edgeIndex.get(Math.min(a, b) * top + Math.max(a, b));
      if (e !== undefined && edgeOwner[e] < 0) edgeOwner[e] = t;
    }
  }
  if (vertexOwner.includes(-1) || edgeOwner.includes(-1)) return null;
  const lists = (owner: Int32Array) => {
    const start = new Int32Array(nt + 1);
    for (const t of owner) start[t + 1]++;
    for (let t = 0; t < nt; t++) start[t + 1] += start[t];
    const of = new Int32Array(owner.length);
    const fill = start.slice(0, nt);
    for (let f = 0; f < owner.length; f++) of[fill[owner[f]]++] = f;
    return { start, of };
  };
  const v = lists(vertexOwner), e = lists(edgeOwner);
  const neighbours = neighbourFeaturePairs(vertices, edges, triangles, top, v, e);
  return { vertexStart: v.start, vertexOf: v.of, edgeStart: e.start, edgeOf: e.of, ...neighbours };
}

/**
 * The owned-feature pairs of every two triangles that share a node, fixed by the topology: for each such pair (p, q),
 * each vertex owned by p that is not a node of q with q (and the other way round), and each edge owned by p with each
 * edge owned by q when the two edges share no node. Such triangles' boxes always meet (the shared node is in both,
 * at the start and at the end of any motion), so a self-contact query would visit all of them, and on a closed
 * surface they are nearly nine in ten of the triangle pairs it visits (the bunny: 67,155 of 75,000), almost all of
 * whose features share a node. Listing their features once leaves a box test per listed pair for each query.
 */
function neighbourFeaturePairs(
  vertices: Int32Array, edges: Int32Array, triangles: Int32Array, top: number,
  vertexOwned: { start: Int32Array; of: Int32Array }, edgeOwned: { start: Int32Array; of: Int32Array },
): { neighbourVertexTriangle: Int32Array; neighbourEdgeEdge: Int32Array } {
  const nt = triangles.length / 3;
  // The triangles around each node (compressed rows).
  const around = new Int32Array(top + 1);
  for (const n of triangles) around[n + 1]++;
  for (let n = 0; n < top; n++) around[n + 1] += around[n];
  const aroundOf = new Int32Array(triangles.length);
  const fill = around.slice(0, top);
  for (let t = 0; t < nt; t++) for (let k = 0; k < 3; k++) aroundOf[fill[triangles[3 * t + k]]++] = t;
  const hasNode = (t: number, n: number) => triangles[3 * t] === n || triangles[3 * t + 1] === n || triangles[3 * t + 2] === n;
  const vt: number[] = [];
  const ee: number[] = [];
  const seen = new Int32Array(nt).fill(-1);
  for (let p = 0; p < nt; p++) {
    for (let k = 0; k < 3; k++) {
      const node = triangles[3 * p + k];
      for (let r = around[node]; r < around[node + 1]; r++) {
        const q = aroundOf[r];
        if (q <= p || seen[q] === p) continue;
        seen[q] = p;
        for (const [a, b] of [[p, q], [q, p]]) {
          for (let o = vertexOwned.start[a]; o < vertexOwned.start[a + 1]; o++) {
            const i = vertexOwned.of[o];
            if (!hasNode(b, vertices[i])) vt.push(i, b);
          }
        }
        for (let o = edgeOwned.start[p]; o < edgeOwned.start[p + 1]; o++) {
          const a = edgeOwned.of[o];
          const a0 = edges[2 * a], a1 = edges[2 * a + 1];
          for (let l = edgeOwned.start[q]; l < edgeOwned.start[q + 1]; l++) {
            const b = edgeOwned.of[l];
            const b0 = edges[2 * b], b1 = edges[2 * b + 1];
            if (a0 !== b0 && a0 !== b1 && a1 !== b0 && a1 !== b1) ee.push(a, b);
          }
        }
      }
    }
  }
  return { neighbourVertexTriangle: Int32Array.from(vt), neighbourEdgeEdge: Int32Array.from(ee) };
}

/**
 * Sorts the first `count` pairs (2 ints each: a, b with 0 <= b < base) by a, then b, in place; returns the key
 * scratch (grown when too short). A query's pairs then come out in one order whatever found them (the hash, the trees,
 * however the trees are shaped), and the energies, which sum over them in that order, do not depend on the search.
 */
function sortPairs(pairs: Int32Array, count: number, base: number, scratch: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  let keys = scratch;
  if (keys.length < count) keys = new Float64Array(Math.max(count, 2 * keys.length));
  for (let k = 0; k < count; k++) keys[k] = pairs[2 * k] * base + pairs[2 * k + 1];
  keys.subarray(0, count).sort();
  for (let k = 0; k < count; k++) {
    const key = keys[k];
    let a = Math.floor(key / base);
    if (a * base > key) a--; // the quotient rounded up
    pairs[2 * k] = a;
    pairs[2 * k + 1] = key - a * base;
  }
  return keys;
}

/** Closed boxes (touching counts as overlapping), 6 numbers each at offsets o and p. */
export function boxesOverlap(a: ArrayLike<number>, o: number, b: ArrayLike<number>, p: number): boolean {
  return (
    a[o] <= b[p + 3] && b[p] <= a[o + 3] &&
    a[o + 1] <= b[p + 4] && b[p + 1] <= a[o + 4] &&
    a[o + 2] <= b[p + 5] && b[p + 2] <= a[o + 5]
  );
}

/**
 * Box of each primitive (`arity` node ids each in `nodes`) over the values x of its nodes, grown by `inflate`; with
 * `sweep` (3 numbers per node), over x and x + sweep, which holds the primitive all along that linear motion.
 */
export function fillBoxes(
  nodes: ArrayLike<number>, arity: number, x: ArrayLike<number>, inflate: number, out: Float64Array, sweep: ArrayLike<number> | null = null,
): void {
  // One loop per arity without the sweep (every query fills boxes at least once, most without it): the general loop
  // below, with its inner loops over the arity and the sweep test per coordinate, took about a sixth of a self-contact
  // query of the bunny in a profile.
  if (sweep === null && x instanceof Float64Array && nodes instanceof Int32Array) {
    if (arity === 1) return fillPointBoxes(nodes, x, inflate, out);
    if (arity === 2) return fillEdgeBoxes(nodes, x, inflate, out);
    if (arity === 3) return fillTriangleBoxes(nodes, x, inflate, out);
  }
  const count = nodes.length / arity;
  for (let p = 0; p < count; p++) {
    const o = 6 * p;
    for (let d = 0; d < 3; d++) {
      let mn = Infinity, mx = -Infinity;
      for (let k = 0; k < arity; k++) {
        const i = 3 * nodes[arity * p + k] + d;
        const a = x[i];
        const b = sweep === null ? a : a + sweep[i];
        if (a < mn) mn = a;
        if (a > mx) mx = a;
        if (b < mn) mn = b;
        if (b > mx) mx = b;
      }
      out[o + d] = mn - inflate;
      out[o + 3 + d] = mx + inflate;
    }
  }
}

function fillPointBoxes(nodes: Int32Array, x: Float64Array, inflate: number, out: Float64Array): void {
  for (let p = 0, o = 0; p < nodes.length; p++, o += 6) {
    const i = 3 * nodes[p];
    const a = x[i], b = x[i + 1], c = x[i + 2];
    out[o] = a - inflate;
    out[o + 1] = b - inflate;
    out[o + 2] = c - inflate;
    out[o + 3] = a + inflate;
    out[o + 4] = b + inflate;
    out[o + 5] = c + inflate;
  }
}

function fillEdgeBoxes(nodes: Int32Array, x: Float64Array, inflate: number, out: Float64Array): void {
  for (let p = 0, o = 0; p < nodes.length; p += 2, o += 6) {
    const i = 3 * nodes[p], j = 3 * nodes[p + 1];
    for (let d = 0; d < 3; d++) {
      const a = x[i + d], b = x[j + d];
      out[o + d] = (a < b ? a : b) - inflate;
      out[o + 3 + d] = (a > b ? a : b) + inflate;
    }
  }
}

function fillTriangleBoxes(nodes: Int32Array, x: Float64Array, inflate: number, out: Float64Array): void {
  for (let p = 0, o = 0; p < nodes.length; p += 3, o += 6) {
    const i = 3 * nodes[p], j = 3 * nodes[p + 1], k = 3 * nodes[p + 2];
    for (let d = 0; d < 3; d++) {
      const a = x[i + d], b = x[j + d], c = x[k + d];
      let mn = a < b ? a : b;
      let mx = a > b ? a : b;
      if (c < mn) mn = c;
      if (c > mx) mx = c;
      out[o + d] = mn - inflate;
      out[o + 3 + d] = mx + inflate;
    }
  }
}

/** Grows box p (6 numbers each) by reach[group[p]]/2 on every side. */
function growBoxes(boxes: Float64Array, group: Int32Array, reach: ArrayLike<number>): void {
  for (let p = 0; p < group.length; p++) {
    const r = 0.5 * reach[group[p]];
    if (r === 0) continue;
    const o = 6 * p;
    for (let d = 0; d < 3; d++) {
      boxes[o + d] -= r;
      boxes[o + 3 + d] += r;
    }
  }
}

// Scratch for the grid's bounds.
const gridLo = new Float64Array(3);
const gridHi = new Float64Array(3);

function growBounds(boxes: Float64Array, lo: Float64Array, hi: Float64Array): void {
  for (let o = 0; o < boxes.length; o += 6) {
    for (let d = 0; d < 3; d++) {
      if (boxes[o + d] < lo[d]) lo[d] = boxes[o + d];
      if (boxes[o + 3 + d] > hi[d]) hi[d] = boxes[o + 3 + d];
    }
  }
}

/** Gives the primitives of groups whose flag is 0 an empty cell range (lo > hi). */
function emptyRanges(cells: Int32Array, group: Int32Array, keep: Uint8Array): void {
  for (let p = 0; p < group.length; p++) {
    if (keep[group[p]]) continue;
    cells[6 * p] = 1;
    cells[6 * p + 3] = 0;
  }
}

/** Cell range of every box on a grid of cell size 1/inv from origin; returns the number of cells covered. */
function cellRanges(boxes: Float64Array, origin: Float64Array, inv: number, out: Int32Array): number {
  let covered = 0;
  for (let o = 0; o < boxes.length; o += 6) {
    let n = 1;
    for (let d = 0; d < 3; d++) {
      const a = Math.floor((boxes[o + d] - origin[d]) * inv);
      const b = Math.floor((boxes[o + 3 + d] - origin[d]) * inv);
      out[o + d] = a;
      out[o + 3 + d] = b;
      n *= b - a + 1;
    }
    covered += n;
  }
  return covered;
}
