import type { BsrPattern, PatternBuilder } from '../math/bsr.js';
import { edgeEdgeMollifierThreshold } from './barrier.js';
import type { SpatialHashBroadPhase } from './broad-phase.js';
import type { CollisionMesh } from './collision-mesh.js';
import { edgeEdgeDistance2, edgeEdgeDistanceType, pointTriangleDistance2, pointTriangleDistanceType } from './distance.js';
import { polarDecomposition } from '../math/small.js';

/**
 * Contact candidates of one kind, pairs inside one body (self-contact) or pairs across groups, kept as 4-node
 * stencils: [vertex, t0, t1, t2] for vertex-triangle pairs, [ea0, ea1, eb0, eb1] for edge-edge pairs.
 *
 * The set is built at a reference position from boxes inflated by (dhat + margin)/2: a pair left out has a gap of at
 * least dhat + margin along some axis there. It stays valid while every collision vertex stays within margin/2 (per
 * axis) of the reference, because that gap then stays at least dhat. Inside one body a rigid motion changes no
 * distance, so there each vertex is compared with the reference after the body's best-fitting rigid motion is
 * undone (centroids and the polar rotation of their covariance): a falling, flying or tumbling body keeps its
 * self-contact set for many steps; only its deformation counts.
 */
export class CandidateSet {
  count = 0;
  /** 4 node ids per candidate. */
  nodes = new Int32Array(0);
  /** 1 for edge-edge pairs. */
  edgeEdge = new Uint8Array(0);
  /** Edge-edge mollifier threshold eps_x (from rest positions); 0 for vertex-triangle pairs. */
  mollifierEps = new Float64Array(0);
  /** 1 when every coupling of the candidate between free nodes is a block of the bound Hessian pattern. */
  covered = new Uint8Array(0);
  /** Distance of each candidate at the reference position. */
  distanceRef = new Float64Array(0);
  /**
   * Per candidate, how much closer than distanceRef it can be at the x of the last `update`: the largest
   * displacement among its first primitive's nodes plus the largest among its second's (Euclidean, relative to
   * the group's mean for pairs inside a body).
   */
  slack = new Float64Array(0);
  /** Candidates that can be closer than dhat at the x of the last `update` (the others provably are not). */
  live = new Int32Array(0);
  liveCount = 0;
  margin: number;
  /** Largest per-axis vertex displacement from the reference at the x of the last `update`. */
  delta = 0;
  private built = false;
  private readonly xRef: Float64Array;
  /** Euclidean displacement of each node from the reference (free collision vertices only). */
  private readonly moved: Float64Array;
  private readonly scratch = new Float64Array(12);
  /** The free vertices whose motion matters: all of them across bodies, those of self-contact bodies inside one. */
  private readonly vertices: Uint32Array;
  /** Per group: centroid now and at the reference (3 each), and the rotation from the reference (9, row-major). */
  private readonly center: Float64Array;
  private readonly centerRef: Float64Array;
  private readonly rotation: Float64Array;
  private readonly groupSize: Float64Array;
  private readonly covariance: Float64Array;

  constructor(
    private readonly mesh: CollisionMesh,
    private readonly rest: Float64Array,
    /** true: pairs inside one group (of groups with self-contact); false: pairs across groups. */
    readonly sameGroup: boolean,
    private readonly dhat: number,
    /** Vertices that can move (the validity test looks at them only). */
    freeVertices: Uint32Array,
  ) {
    this.margin = dhat;
    this.xRef = new Float64Array(3 * mesh.nNodes);
    this.moved = new Float64Array(mesh.nNodes);
    this.vertices = sameGroup ? freeVertices.filter((v) => mesh.groups[mesh.groupOfNode[v]].selfContact) : freeVertices;
    const groups = mesh.groups.length;
    this.center = new Float64Array(3 * groups);
    this.centerRef = new Float64Array(3 * groups);
    this.rotation = new Float64Array(9 * groups);
    this.covariance = new Float64Array(9 * groups);
    this.groupSize = new Float64Array(groups);
  }

  /**
   * Prepares the set for x: false when x is out of its reach (rebuild, then update again). Otherwise lists the
   * live candidates: those whose reference distance minus their slack is below dhat.
   */
  update(x: Float64Array): boolean {
    if (!this.built) return false;
    const delta = this.displacement(x);
    if (2 * delta > this.margin) return false;
    this.delta = delta;
    const { nodes, edgeEdge, distanceRef, slack, live, moved } = this;
    let n = 0;
    for (let k = 0; k < this.count; k++) {
      const o = 4 * k;
      const a = moved[nodes[o]], b = moved[nodes[o + 1]], c = moved[nodes[o + 2]], d = moved[nodes[o + 3]];
      // Vertex-triangle: [v | t0 t1 t2]; edge-edge: [a0 a1 | b0 b1].
      const s = edgeEdge[k] ? Math.max(a, b) + Math.max(c, d) : a + Math.max(b, c, d);
      slack[k] = s;
      if (distanceRef[k] - s < this.dhat) live[n++] = k;
    }
    this.liveCount = n;
    return true;
  }

  /**
   * Distance that every pair outside the set keeps at the x of the last `update` (at least dhat): a step that
   * closes less than this can only bring the set's own pairs into contact.
   */
  get outsideGap(): number {
    return this.dhat + this.margin - 2 * this.delta;
  }

  /**
   * Largest per-axis displacement of a vertex since the reference (inside a body: after undoing the body's
   * best-fitting rigid motion); leaves each vertex's Euclidean displacement in `moved`.
   */
  displacement(x: Float64Array): number {
    const r = this.xRef, g = this.mesh.groupOfNode, moved = this.moved;
    if (this.sameGroup) this.fitRigidMotions(x);
    const { center: c, centerRef: cr, rotation: R } = this;
    let m = 0;
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
      if (a > m) m = a;
      if (b > m) m = b;
      if (d > m) m = d;
    }
    return m;
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
   * Rebuilds the set at x from a proximity query of the broad phase (run here with dhat + margin), listing only
   * its kind of pairs.
   */
  rebuild(x: Float64Array, broadPhase: SpatialHashBroadPhase): void {
    // The look-ahead grows with the motion seen since the last build, so a fast body does not rebuild every call.
    // Inside a body the neighbourhood is dense (the set grows with the square of the reach), so the cap is lower.
    if (this.built) this.margin = Math.min((this.sameGroup ? 4 : 10) * this.dhat, Math.max(this.dhat, 2 * this.displacement(x)));
    broadPhase.findProximityCandidates(x, this.dhat + this.margin, this.sameGroup ? 'same-group' : 'cross-group');
    const { triangles, edges } = this.mesh;
    const capacity = broadPhase.vertexTriangleCount + broadPhase.edgeEdgeCount;
    if (this.edgeEdge.length < capacity) {
      this.nodes = new Int32Array(4 * capacity);
      this.edgeEdge = new Uint8Array(capacity);
      this.mollifierEps = new Float64Array(capacity);
      this.covered = new Uint8Array(capacity);
      this.distanceRef = new Float64Array(capacity);
      this.slack = new Float64Array(capacity);
      this.live = new Int32Array(capacity);
    }
    let n = 0;
    for (let k = 0; k < broadPhase.vertexTriangleCount; k++) {
      const v = broadPhase.vertexTrianglePairs[2 * k], t = broadPhase.vertexTrianglePairs[2 * k + 1];
      const o = 4 * n;
      this.nodes[o] = v;
      this.nodes[o + 1] = triangles[3 * t];
      this.nodes[o + 2] = triangles[3 * t + 1];
      this.nodes[o + 3] = triangles[3 * t + 2];
      this.edgeEdge[n] = 0;
      this.mollifierEps[n] = 0;
      n++;
    }
    for (let k = 0; k < broadPhase.edgeEdgeCount; k++) {
      const a = broadPhase.edgeEdgePairs[2 * k], b = broadPhase.edgeEdgePairs[2 * k + 1];
      const o = 4 * n;
      this.nodes[o] = edges[2 * a];
      this.nodes[o + 1] = edges[2 * a + 1];
      this.nodes[o + 2] = edges[2 * b];
      this.nodes[o + 3] = edges[2 * b + 1];
      this.edgeEdge[n] = 1;
      for (let i = 0; i < 4; i++) gatherNode(this.rest, this.nodes[o + i], this.scratch, 3 * i);
      this.mollifierEps[n] = edgeEdgeMollifierThreshold(this.scratch);
      n++;
    }
    this.count = n;
    const x12 = this.scratch;
    for (let k = 0; k < n; k++) {
      for (let i = 0; i < 4; i++) gatherNode(x, this.nodes[4 * k + i], x12, 3 * i);
      const d2 = this.edgeEdge[k] ? edgeEdgeDistance2(x12, edgeEdgeDistanceType(x12)) : pointTriangleDistance2(x12, pointTriangleDistanceType(x12));
      this.distanceRef[k] = Math.sqrt(d2);
    }
    this.xRef.set(x);
    if (this.sameGroup) groupMeans(this.mesh, this.vertices, x, null, this.centerRef, this.groupSize);
    this.moved.fill(0);
    this.built = true;
  }

  /** Marks which candidates' couplings (between free nodes) are blocks of the pattern; returns how many are not. */
  markCovered(pattern: BsrPattern): number {
    const fixed = this.mesh.fixedNodes;
    let missing = 0;
    for (let k = 0; k < this.count; k++) {
      const ok = stencilInPattern(pattern, this.nodes, 4 * k, 4, fixed) ? 1 : 0;
      this.covered[k] = ok;
      if (!ok) missing++;
    }
    return missing;
  }
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

/** The free nodes of a stencil (nodes[offset .. offset + size)) into `free` (4-long); returns how many. */
export function freeStencilNodes(nodes: Int32Array, offset: number, size: number, fixed: Uint8Array, free: Int32Array): number {
  let m = 0;
  for (let a = 0; a < size; a++) if (!fixed[nodes[offset + a]]) free[m++] = nodes[offset + a];
  return m;
}

/** Registers the couplings between the free nodes of a stencil (nodes[offset .. offset + size)); `free` is 4-long scratch. */
export function addStencilPattern(builder: PatternBuilder, nodes: Int32Array, offset: number, size: number, fixed: Uint8Array, free: Int32Array): void {
  const m = freeStencilNodes(nodes, offset, size, fixed, free);
  if (m > 1) builder.addClique(free.subarray(0, m));
}

export function gatherNode(x: Float64Array, node: number, out: Float64Array, o: number): void {
  out[o] = x[3 * node];
  out[o + 1] = x[3 * node + 1];
  out[o + 2] = x[3 * node + 2];
}
