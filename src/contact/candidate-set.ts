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
 * Each collision group (a body, an obstacle) has its own margin m_g. The set is built at a reference position from
 * boxes inflated by (dhat + m_g)/2 for the primitives of group g: a pair of groups g and h left out has a gap of at
 * least dhat + (m_g + m_h)/2 along some axis there. It stays valid while every collision vertex of every group g
 * stays within m_g/2 (per axis) of the reference, because that gap then stays at least dhat. Per group, because one
 * fast body (a falling ball) would otherwise widen the reach of every resting one: in an interlocked chain net a
 * 1 cm reach everywhere lists 2.4 million pairs where the links' own motion needs a few percent of that. Inside one
 * body a rigid motion changes no
 * distance, so there each vertex is compared with the reference after the body's best-fitting rigid motion is
 * undone (centroids and the polar rotation of their covariance): a falling, flying or tumbling body keeps its
 * self-contact set for many steps; only its deformation counts.
 *
 * Per candidate the lists keep its distance at the reference (distanceRef) and, after each `update`, how much closer
 * it can be now (slack: the largest displacement among its first primitive's nodes plus the largest among its
 * second's, Euclidean, relative to the body's rigid motion inside a body) and whether it is live (can be closer
 * than dhat); `covered` says whether its Hessian blocks are in the bound pattern.
 */
export class CandidateSet {
  /** The candidates, one list per surface pair kind. */
  readonly lists: readonly PairList<SurfacePairKind>[] = SURFACE_PAIR_KINDS.map((kind) => new PairList(kind));
  /** Per group: the margin m_g of the last build. */
  readonly margin: Float64Array;
  /** Per group: the largest per-axis vertex displacement from the reference at the x of the last `displacement`. */
  readonly delta: Float64Array;
  private built = false;
  /** x of the last `update` that found the set valid; `update` at the same x again has nothing to do. */
  private readonly xUpdated: Float64Array;
  private updatedValid = false;
  private readonly xRef: Float64Array;
  /** Euclidean displacement of each node from the reference (free collision vertices only). */
  private readonly moved: Float64Array;
  private readonly scratch = new PairScratch();
  /** The free vertices whose motion matters: all of them across bodies, those of self-contact bodies inside one. */
  private readonly vertices: Uint32Array;
  /** Per group: centroid now and at the reference (3 each), and the rotation from the reference (9, row-major). */
  private readonly center: Float64Array;
  private readonly centerRef: Float64Array;
  private readonly rotation: Float64Array;
  private readonly groupSize: Float64Array;
  private readonly covariance: Float64Array;
  /** Per group: the largest squared vertex motion of the step `coversStep` was asked about. */
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
    this.moved = new Float64Array(mesh.nNodes);
    this.vertices = sameGroup ? freeVertices.filter((v) => mesh.groups[mesh.groupOfNode[v]].selfContact) : freeVertices;
    const groups = mesh.groups.length;
    this.center = new Float64Array(3 * groups);
    this.centerRef = new Float64Array(3 * groups);
    this.rotation = new Float64Array(9 * groups);
    this.covariance = new Float64Array(9 * groups);
    this.groupSize = new Float64Array(groups);
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
    const { nodes } = list;
    const { size, split } = list.kind;
    const moved = this.moved;
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
   * Whether moving by t dx from the x of the last `update` keeps every pair outside the set more than `keep` apart
   * (the largest pair offset; 0 without offsets), with 10 % to spare, judged group by group: a pair of groups g and
   * h left out is at least dhat + s_g + s_h apart (dhat here the set's reach; s_g = m_g/2 - delta_g, what group g
   * has left of its half margin) and closes by at most t (mu_g + mu_h), mu_g the largest vertex motion in g; so
   * t mu_g < 0.9 ((dhat - keep)/2 + s_g) for every group suffices. Per group, because a fast body with a wide
   * margin and a slow one with a narrow margin are each covered where the one worst case of both (the fastest
   * motion against the narrowest margin) is not.
   */
  coversStep(dx: Float64Array, t: number, keep: number): boolean {
    const motion = this.groupMotion, g = this.mesh.groupOfNode;
    motion.fill(0);
    for (const v of this.vertices) {
      const a = dx[3 * v], b = dx[3 * v + 1], c = dx[3 * v + 2];
      const n = a * a + b * b + c * c;
      if (n > motion[g[v]]) motion[g[v]] = n;
    }
    for (let k = 0; k < motion.length; k++) {
      const spare = 0.5 * this.margin[k] - this.delta[k];
      if (!(t * Math.sqrt(motion[k]) < 0.9 * (0.5 * (this.dhat - keep) + spare))) return false;
    }
    return true;
  }

  /**
   * Per group, the largest per-axis displacement of its vertices since the reference (inside a body: after undoing
   * the body's best-fitting rigid motion), into `delta`; leaves each vertex's Euclidean displacement in `moved`.
   */
  displacement(x: Float64Array): void {
    const r = this.xRef, g = this.mesh.groupOfNode, moved = this.moved, delta = this.delta;
    if (this.sameGroup) this.fitRigidMotions(x);
    const { center: c, centerRef: cr, rotation: R } = this;
    delta.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v;
      let a: number, b: number, d: number;
      if (this.sameGroup) {
        // y = R^T (x - c) + cRef: x carried back to the reference frame.
        const q = 3 * g[v], Q = 9 * g[v];
        const px = x[o] - c[q], py = x[o + 1] - c[q + 1], pz = x[o + 2] - c[q + 2];
        a = Math.abs(R[Q] * px + R[Q + 3] * py + R[Q + 6] * pz + cr[q] - r[o]);
        b = Math.abs(R[Q + 1] * px + R[Q + 4] * py + R[Q + 7] * pz + cr[q + 1] - r[o + 1]);
        d = Math.abs(R[Q + 2] * px + R[Q + 5] * py + R[Q + 8] * pz + cr[q + 2] - r[o + 2]);
      } else {
        a = Math.abs(x[o] - r[o]);
        b = Math.abs(x[o + 1] - r[o + 1]);
        d = Math.abs(x[o + 2] - r[o + 2]);
      }
      moved[v] = Math.sqrt(a * a + b * b + d * d);
      const m = Math.max(a, b, d);
      if (m > delta[g[v]]) delta[g[v]] = m;
    }
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
   * Rebuilds the set at x from a proximity query of the broad phase (run here with dhat and the groups' margins),
   * listing only its kind of pairs.
   */
  rebuild(x: Float64Array, broadPhase: SpatialHashBroadPhase): void {
    // Each group's look-ahead follows the motion it made since the last build, so a fast body does not rebuild
    // every call. Inside a body the neighbourhood is dense (the set grows with the square of the reach), so the
    // cap is lower. Across bodies the floor is 2 dhat: a body that was still at the last build and is then pushed
    // would otherwise force a rebuild per Newton iteration (the chain net: 42 rebuilds in its first 12 steps
    // instead of 69, 18 % less CPU).
    if (this.built) {
      this.displacement(x);
      const floor = (this.sameGroup ? 1 : 2) * this.dhat, cap = (this.sameGroup ? 4 : 10) * this.dhat;
      for (let g = 0; g < this.margin.length; g++) this.margin[g] = Math.min(cap, Math.max(floor, 2 * this.delta[g]));
    }
    broadPhase.findProximityCandidates(x, this.dhat, this.sameGroup ? 'same-group' : 'cross-group', this.margin);
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

