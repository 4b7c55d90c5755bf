import type { BsrPattern } from '../math/bsr.js';
import { polarDecomposition } from '../math/small.js';
import type { SpatialHashBroadPhase } from './broad-phase.js';
import type { CollisionMesh } from './collision-mesh.js';
import { PairScratch, type SurfacePairKind } from './pairs/pair-kind.js';
import { PairList } from './pairs/pair-list.js';
import { SURFACE_PAIR_KINDS } from './pairs/registry.js';
import { stencilInPattern } from './pairs/stencil.js';

/**
 * Contact candidates of one reach, pairs inside one body (self-contact) or pairs across groups, one PairList per
 * surface pair kind (vertex-triangle, edge-edge).
 *
 * Each collision group (a body, an obstacle) has its own margin m_g. The set is built from a box per vertex,
 * inflated by (dhat + m_g)/2 for the primitives of group g: a pair of groups g and h left out has a gap of at least
 * dhat + (m_g + m_h)/2 along some axis between their vertices' boxes. It stays valid while every collision vertex of
 * every group g stays within m_g/2 (per axis) of its box, because that gap then stays at least dhat. Per group,
 * because one fast body (a falling ball) would otherwise widen the reach of every resting one: in an interlocked
 * chain net a 1 cm reach everywhere lists 2.4 million pairs where the links' own motion needs a few percent of that.
 *
 * The boxes are points (`rebuild` at x), or enclose the segments x .. x + t dx of one or more steps
 * (`rebuildAlong`): a Newton step's, whose line-search trial points and accepted point are then inside, so one
 * broad phase per Newton iteration serves the line search's energies, its CCD and the next iteration's
 * derivatives; or Newton's start candidates, all at once.
 *
 * Inside one body a rigid motion changes no distance, so there each vertex is compared with its box in the body's
 * frame. Point boxes undo the body's best-fitting rigid motion (centroids and the polar rotation of their
 * covariance): a falling, flying or tumbling body keeps its self-contact set for many steps; only its deformation
 * counts. Boxes along steps are swept by the steps less the body's mean motion (a falling body's long sweep would
 * list every neighbour), and a point is compared with them after its mean displacement from x is undone.
 *
 * Per candidate the lists keep its distance at the build's x (distanceRef) and, after each `update`, how much closer
 * it can be now (slack: the largest displacement from that x among its first primitive's nodes plus the largest
 * among its second's, Euclidean, in the body's frame inside one) and whether it is live (can be closer than dhat);
 * `covered` says whether its Hessian blocks are in the bound pattern.
 */
export class CandidateSet {
  /** The candidates, one list per surface pair kind. */
  readonly lists: readonly PairList<SurfacePairKind>[] = SURFACE_PAIR_KINDS.map((kind) => new PairList(kind));
  /** Per group: the margin m_g of the last build. */
  readonly margin: Float64Array;
  /** Per group: the largest per-axis distance of a vertex from its box at the x of the last `displacement`. */
  readonly delta: Float64Array;
  private built = false;
  /** Candidate builds so far (a broad phase each). */
  builds = 0;
  /** x of the last `update` that found the set valid; `update` at the same x again has nothing to do. */
  private readonly xUpdated: Float64Array;
  private updatedValid = false;
  /** Positions of the last build: the reference point, or the start of the step the boxes follow. */
  private readonly xRef: Float64Array;
  /** Boxes built along steps: each vertex's box is xRef + [boxLo, boxHi] per axis; point boxes: both 0. */
  private alongStep = false;
  private readonly boxLo: Float64Array;
  private readonly boxHi: Float64Array;
  /** The step less each group's mean motion (inside a body), for `rebuildAlong` and the caller's CCD. */
  private readonly relative: Float64Array;
  /** Euclidean displacement of each node from xRef, in the frame `displacement` uses (the vertices checked only). */
  private readonly moved: Float64Array;
  /** Per vertex checked: its displacement from xRef at the x of the last `displacement`, in the frame used there. */
  private readonly framed: Float64Array;
  private readonly scratch = new PairScratch();
  /**
   * The vertices whose motion matters: across bodies the free ones; inside a body every vertex of a self-contact
   * body, fixed ones too, since undoing the body's motion moves them in its frame.
   */
  private readonly vertices: Uint32Array;
  /** Per group: centroid now and at the reference (3 each), and the rotation from the reference (9, row-major). */
  private readonly center: Float64Array;
  private readonly centerRef: Float64Array;
  private readonly rotation: Float64Array;
  private readonly groupSize: Float64Array;
  /** Per group: its mean displacement (relativeMotion, and from xRef inside boxes along a step). */
  private readonly shift: Float64Array;
  private readonly covariance: Float64Array;
  /** Per group: how far coversStep's step takes its vertices from their boxes. */
  private readonly groupMotion: Float64Array;

  constructor(
    private readonly mesh: CollisionMesh,
    private readonly rest: Float64Array,
    /** true: pairs inside one group (of groups with self-contact); false: pairs across groups. */
    readonly sameGroup: boolean,
    /** The reach of a live pair: the barrier's dhat, plus the largest pair offset where there are offsets. */
    private readonly dhat: number,
    /** Vertices that can move (the validity test looks at them only). */
    freeVertices: Uint32Array,
  ) {
    this.xRef = new Float64Array(3 * mesh.nNodes);
    this.xUpdated = new Float64Array(3 * mesh.nNodes);
    this.boxLo = new Float64Array(3 * mesh.nNodes);
    this.boxHi = new Float64Array(3 * mesh.nNodes);
    this.relative = new Float64Array(3 * mesh.nNodes);
    this.moved = new Float64Array(mesh.nNodes);
    this.framed = new Float64Array(3 * mesh.nNodes);
    this.vertices = sameGroup ? mesh.vertices.filter((v) => mesh.groups[mesh.groupOfNode[v]].selfContact) : freeVertices;
    const groups = mesh.groups.length;
    this.center = new Float64Array(3 * groups);
    this.centerRef = new Float64Array(3 * groups);
    this.rotation = new Float64Array(9 * groups);
    this.covariance = new Float64Array(9 * groups);
    this.groupSize = new Float64Array(groups);
    this.shift = new Float64Array(3 * groups);
    this.margin = new Float64Array(groups).fill(dhat);
    this.delta = new Float64Array(groups);
    this.groupMotion = new Float64Array(groups);
  }

  /**
   * Prepares the set for x: false when x is out of its reach (rebuild, then update again). Otherwise lists the
   * live candidates: those whose reference distance minus their slack is below dhat.
   */
  update(x: Float64Array): boolean {
    if (!this.built) return false;
    if (this.updatedValid && sameValues(x, this.xUpdated)) return true;
    this.displacement(x);
    let spare = Infinity;
    for (let g = 0; g < this.delta.length; g++) spare = Math.min(spare, this.margin[g] - 2 * this.delta[g]);
    if (spare < 0) {
      this.updatedValid = false; // displacement overwrote `moved` and `delta`
      return false;
    }
    for (const list of this.lists) {
      const { distanceRef, slack, live } = list;
      let n = 0;
      for (let k = 0; k < list.count; k++) {
        const s = this.slackOf(list, k);
        slack[k] = s;
        if (distanceRef[k] - s < this.dhat) live[n++] = k;
      }
      list.liveCount = n;
    }
    this.xUpdated.set(x);
    this.updatedValid = true;
    return true;
  }

  /** The largest displacement among pair k's first primitive's nodes plus the largest among its second's. */
  private slackOf(list: PairList, k: number): number {
    const moved = this.moved;
    const { nodes } = list;
    const { size, split } = list.kind;
    const o = size * k;
    if (size === 4) {
      // Every kind today has 4 nodes: written out, which keeps this loop over all candidates as fast as it was.
      const a = moved[nodes[o]], b = moved[nodes[o + 1]], c = moved[nodes[o + 2]], d = moved[nodes[o + 3]];
      return split === 1 ? a + Math.max(b, c, d) : split === 2 ? Math.max(a, b) + Math.max(c, d) : Math.max(a, b, c) + d;
    }
    let first = 0;
    let second = 0;
    for (let i = 0; i < split; i++) first = Math.max(first, moved[nodes[o + i]]);
    for (let i = split; i < size; i++) second = Math.max(second, moved[nodes[o + i]]);
    return first + second;
  }

  /**
   * Whether moving by t dx (dx from relativeMotion) from the x of the last `update` keeps every pair outside the set
   * more than `keep` apart (the largest pair offset; 0 without offsets), with 10 % to spare, judged group by group. A
   * pair of groups g and h left out is at least dhat + (m_g + m_h)/2 apart along some axis between its vertices'
   * boxes (dhat here the set's reach); if every vertex of g stays within e_g of its box per axis over the step, the
   * pair stays more than keep apart when e_g < (dhat - keep)/2 + m_g/2 for every group. Per group, because a fast
   * body with a wide margin and a slow one with a narrow margin are each covered where the one worst case of both
   * (the fastest motion against the narrowest margin) is not.
   *
   * e_g: where positions are compared with the boxes after a translation only (across bodies; boxes along steps),
   * a vertex moves by t dx in that frame too, and its distance from a box, convex along the step, is largest at an
   * end: e_g is the largest per-axis distance at x (delta_g) or at x + t dx. After a best-fitting rigid motion (point
   * boxes inside a body) the frame itself turns with the step, so the bound is delta_g + t mu_g, mu_g the largest
   * vertex motion in g.
   */
  coversStep(dx: Float64Array, t: number, keep: number): boolean {
    const reach = this.groupMotion, g = this.mesh.groupOfNode;
    if (this.sameGroup && !this.alongStep) {
      reach.fill(0);
      for (const v of this.vertices) {
        const a = dx[3 * v], b = dx[3 * v + 1], c = dx[3 * v + 2];
        const n = a * a + b * b + c * c;
        if (n > reach[g[v]]) reach[g[v]] = n;
      }
      for (let k = 0; k < reach.length; k++) reach[k] = this.delta[k] + t * Math.sqrt(reach[k]);
    } else {
      const p = this.framed, lo = this.boxLo, hi = this.boxHi;
      reach.set(this.delta);
      for (const v of this.vertices) {
        for (let o = 3 * v; o < 3 * v + 3; o++) {
          const e = outside(p[o] + t * dx[o], lo[o], hi[o]);
          if (e > reach[g[v]]) reach[g[v]] = e;
        }
      }
    }
    for (let k = 0; k < reach.length; k++) {
      if (!(reach[k] < 0.9 * (0.5 * (this.dhat - keep) + 0.5 * this.margin[k]))) return false;
    }
    return true;
  }

  /**
   * Per group, the largest per-axis distance of its vertices from their boxes (inside a body: after undoing the
   * body's motion, see the class comment), into `delta`; leaves each vertex's Euclidean distance in `moved`.
   */
  displacement(x: Float64Array): void {
    const r = this.xRef, lo = this.boxLo, hi = this.boxHi, g = this.mesh.groupOfNode, moved = this.moved, delta = this.delta;
    const framed = this.framed;
    const frame = this.sameGroup, translated = frame && this.alongStep;
    if (frame) this.fitRigidMotions(x);
    if (translated) groupMeans(this.mesh, this.vertices, x, r, this.shift, this.groupSize);
    const { center: c, centerRef: cr, rotation: R, shift } = this;
    delta.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v];
      // p: the displacement from xRef, inside a body after its best-fitting rigid motion is undone (R^T (x - c) + cRef
      // - xRef), which bounds how far its pairs' distances can have changed.
      let px: number, py: number, pz: number;
      if (frame) {
        const Q = 9 * g[v];
        const ux = x[o] - c[q], uy = x[o + 1] - c[q + 1], uz = x[o + 2] - c[q + 2];
        px = R[Q] * ux + R[Q + 3] * uy + R[Q + 6] * uz + cr[q] - r[o];
        py = R[Q + 1] * ux + R[Q + 4] * uy + R[Q + 7] * uz + cr[q + 1] - r[o + 1];
        pz = R[Q + 2] * ux + R[Q + 5] * uy + R[Q + 8] * uz + cr[q + 2] - r[o + 2];
      } else {
        px = x[o] - r[o];
        py = x[o + 1] - r[o + 1];
        pz = x[o + 2] - r[o + 2];
      }
      moved[v] = Math.sqrt(px * px + py * py + pz * pz);
      if (translated) {
        // Boxes along steps hold the positions less the mean displacement only (see rebuildAlong).
        px = x[o] - r[o] - shift[q];
        py = x[o + 1] - r[o + 1] - shift[q + 1];
        pz = x[o + 2] - r[o + 2] - shift[q + 2];
      }
      framed[o] = px;
      framed[o + 1] = py;
      framed[o + 2] = pz;
      const m = Math.max(outside(px, lo[o], hi[o]), outside(py, lo[o + 1], hi[o + 1]), outside(pz, lo[o + 2], hi[o + 2]));
      if (m > delta[g[v]]) delta[g[v]] = m;
    }
  }

  /**
   * dx less each body's mean motion over its vertices for a set inside bodies (the frame `rebuildAlong` sweeps in;
   * any common translation of a body leaves its own pairs' distances, and so their CCD, unchanged), dx itself across
   * bodies. Inside bodies the result is the set's buffer, overwritten by the next call.
   */
  relativeMotion(dx: Float64Array): Float64Array {
    if (!this.sameGroup) return dx;
    const g = this.mesh.groupOfNode, shift = this.shift, out = this.relative;
    groupMeans(this.mesh, this.vertices, dx, null, shift, this.groupSize);
    out.set(dx);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v];
      for (let a = 0; a < 3; a++) out[o + a] -= shift[q + a];
    }
    return out;
  }

  /** The largest coordinate magnitude of the set's vertices at x and at x + t motion. */
  largestCoordinate(x: Float64Array, motion: Float64Array, t: number): number {
    let m = 0;
    for (const v of this.vertices) {
      for (let o = 3 * v; o < 3 * v + 3; o++) m = Math.max(m, Math.abs(x[o]), Math.abs(x[o] + t * motion[o]));
    }
    return m;
  }

  /** The largest Euclidean motion of the set's vertices in `motion` (from relativeMotion). */
  largestMotion(motion: Float64Array): number {
    let m = 0;
    for (const v of this.vertices) {
      const a = motion[3 * v], b = motion[3 * v + 1], c = motion[3 * v + 2];
      const n = a * a + b * b + c * c;
      if (n > m) m = n;
    }
    return Math.sqrt(m);
  }

  /**
   * Per group, the rigid motion that best carries the reference onto x: the centroids, and the rotation of the
   * polar decomposition of the covariance sum (x - c)(xRef - cRef)^T (any rigid motion keeps the set valid; the
   * best fit leaves the least displacement).
   */
  private fitRigidMotions(x: Float64Array): void {
    const { center: c, centerRef: cr, rotation: R, covariance: A } = this;
    const g = this.mesh.groupOfNode, r = this.xRef;
    groupMeans(this.mesh, this.vertices, x, null, c, this.groupSize);
    A.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v], Q = 9 * g[v];
      for (let i = 0; i < 3; i++) {
        const p = x[o + i] - c[q + i];
        for (let j = 0; j < 3; j++) A[Q + 3 * i + j] += p * (r[o + j] - cr[q + j]);
      }
    }
    for (let group = 0; group < this.groupSize.length; group++) {
      if (this.groupSize[group] > 0) polarDecomposition(A.subarray(9 * group, 9 * group + 9), R.subarray(9 * group, 9 * group + 9), null);
    }
  }

  /**
   * Rebuilds the set at x (point boxes) from a proximity query of the broad phase (run here with dhat and the
   * groups' margins), listing only its kind of pairs.
   */
  rebuild(x: Float64Array, broadPhase: SpatialHashBroadPhase): void {
    // Each group's look-ahead follows the motion it made since the last build, so a fast body does not rebuild
    // every call. Inside a body the neighbourhood is dense (the set grows with the square of the reach), so the
    // cap is lower. Across bodies the floor is 2 dhat: a body that was still at the last build and is then pushed
    // would otherwise force a rebuild per Newton iteration (the chain net: 42 rebuilds in its first 12 steps
    // instead of 69, 18 % less CPU).
    if (this.built) {
      this.displacement(x);
      for (let g = 0; g < this.margin.length; g++) this.margin[g] = Math.min(this.marginCap, Math.max(this.marginFloor, 2 * this.delta[g]));
    }
    this.boxLo.fill(0);
    this.boxHi.fill(0);
    this.build(x, false, broadPhase);
  }

  /**
   * Rebuilds the set from boxes enclosing the step x .. x + t dx (inside bodies less their mean motion, see
   * relativeMotion), with the smallest margins: the step's own motion is in the boxes already. (Margins that would
   * allow another step like this one made the chain net's first 0.1 s 1.8x slower at 4 dhat and 4.3x at 10 dhat:
   * its links are interlocked, and the set grows with the square of the reach.)
   */
  rebuildAlong(x: Float64Array, dx: Float64Array, t: number, broadPhase: SpatialHashBroadPhase): void {
    const lo = this.boxLo, hi = this.boxHi;
    const motion = this.relativeMotion(dx);
    for (let i = 0; i < lo.length; i++) {
      const w = t * motion[i];
      lo[i] = w < 0 ? w : 0;
      hi[i] = w > 0 ? w : 0;
    }
    this.margin.fill(this.marginFloor);
    this.build(x, true, broadPhase);
  }

  private get marginCap(): number {
    return (this.sameGroup ? 4 : 10) * this.dhat;
  }

  private get marginFloor(): number {
    return (this.sameGroup ? 1 : 2) * this.dhat;
  }

  /** Builds the set from the boxes in boxLo and boxHi around x (alongStep: they are not all points). */
  private build(x: Float64Array, alongStep: boolean, broadPhase: SpatialHashBroadPhase): void {
    const pairs = this.sameGroup ? 'same-group' : 'cross-group';
    broadPhase.findProximityCandidates(x, this.dhat, pairs, this.margin, alongStep ? { lo: this.boxLo, hi: this.boxHi } : null);
    this.alongStep = alongStep;
    for (const list of this.lists) {
      list.kind.collect(broadPhase, this.mesh, this.rest, list);
      list.fillOffsets(this.mesh);
      for (let k = 0; k < list.count; k++) list.distanceRef[k] = Math.sqrt(list.kind.distance2(list, k, x, this.scratch));
    }
    this.xRef.set(x);
    if (this.sameGroup) groupMeans(this.mesh, this.vertices, x, null, this.centerRef, this.groupSize);
    this.moved.fill(0);
    this.built = true;
    this.updatedValid = false;
    this.builds++;
  }

  /** Marks which candidates' couplings (between free nodes) are blocks of the pattern; returns how many are not. */
  markCovered(pattern: BsrPattern): number {
    const fixed = this.mesh.fixedNodes;
    let missing = 0;
    for (const list of this.lists) {
      const size = list.kind.size;
      for (let k = 0; k < list.count; k++) {
        const ok = stencilInPattern(pattern, list.nodes, size * k, size, fixed) ? 1 : 0;
        list.covered[k] = ok;
        if (!ok) missing++;
      }
    }
    return missing;
  }
}

/** The distance of p from the interval [lo, hi]. */
function outside(p: number, lo: number, hi: number): number {
  return p < lo ? lo - p : p > hi ? p - hi : 0;
}

/** Whether a and b hold the same numbers. */
function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Per collision group, the mean over `vertices` of a - b (b = null: of a), 3 numbers per group into `mean`
 * (`count` gets the group sizes). A group's common translation leaves distances inside it unchanged, so motion
 * relative to this mean is what self-contact sees.
 */
export function groupMeans(
  mesh: CollisionMesh,
  vertices: Uint32Array,
  a: Float64Array,
  b: Float64Array | null,
  mean: Float64Array,
  count: Float64Array,
): void {
  const g = mesh.groupOfNode;
  mean.fill(0);
  count.fill(0);
  for (const v of vertices) {
    const o = 3 * v, q = 3 * g[v];
    count[g[v]]++;
    for (let k = 0; k < 3; k++) mean[q + k] += b ? a[o + k] - b[o + k] : a[o + k];
  }
  for (let i = 0; i < count.length; i++) if (count[i] > 0) for (let k = 0; k < 3; k++) mean[3 * i + k] /= count[i];
}

