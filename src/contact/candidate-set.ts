import type { BsrPattern } from '../math/bsr.js';
import type { SpatialHashBroadPhase } from './broad-phase.js';
import type { CollisionMesh } from './collision-mesh.js';
import { GroupMotionFit, groupMeans } from './group-motion.js';
import { PairScratch, type SurfacePairKind } from './pairs/pair-kind.js';
import { PairList } from './pairs/pair-list.js';
import { SURFACE_PAIR_KINDS } from './pairs/registry.js';
import { stencilInPattern } from './pairs/stencil.js';

/**
 * Contact candidates of one reach, pairs inside one body (self-contact) or pairs across groups, one PairList per
 * surface pair kind (vertex-triangle, edge-edge).
 *
 * Each collision group (a body, an obstacle) has its own margin m_g. The set is built around a reference: a point
 * (`rebuild` at x), or a segment (`rebuildAlong`: every vertex moving linearly from x to x + w_v, all together,
 * w = t dx for a Newton step, whose line-search trial points and accepted point all lie on it). The broad phase
 * lists every pair whose primitives, inflated by (dhat + m_g)/2 for group g, can overlap at some moment of that
 * motion (inside a body the box trees compare the two primitives' motions; across groups, where the other side
 * is mostly a still obstacle, boxes swept by each primitive's own motion are as tight and cheaper): a pair of groups
 * g and h left out is, at every moment, more than dhat + (m_g + m_h)/2 apart along some axis. The set stays valid at x' while every collision
 * vertex of every group g is within m_g/2 (per axis) of the reference point at one common moment s (the point
 * itself, or x + s w for the s that fits x' best), because that gap then stays at least dhat. Per group, because one
 * fast body (a falling ball) would otherwise widen the reach of every resting one: in an interlocked chain net a
 * 1 cm reach everywhere lists 2.4 million pairs where the links' own motion needs a few percent of that.
 *
 * Of the pairs the broad phase lists, the build keeps only those that can come within sqrt(3) (dhat + (m_g + m_h)/2)
 * (Euclidean) at some moment of the reference: their distance at x less their approach (below). Per-axis deviations
 * of m_g/2 move a point by at most sqrt(3) m_g/2, so a pair dropped this way stays at least sqrt(3) dhat apart while
 * the set is valid, and every bound on how far a step may bring a pair left out (coversStep, affineCovers) holds for
 * it with that factor. Most of the dropped pairs are features of neighbouring triangles, whose boxes meet although
 * they are an edge length or more apart: about two thirds of a flying bunny's 13,600 pairs.
 *
 * One broad phase per Newton iteration then serves the line search's energies, its CCD and the next iteration's
 * derivatives. Comparing the primitives' motions, not boxes swept by each one's own, matters: the first Newton
 * steps of a tumbling, jiggling bunny move its surface by 1-5 cm, where boxes swept by each vertex listed 214,000
 * self-contact pairs against 13,000 at a point, and nearby nodes move alike.
 *
 * Inside one body a rigid motion changes no distance, so there each vertex is compared with its reference in the
 * body's frame. A point reference undoes the body's best-fitting rigid motion (centroids and the polar rotation of
 * their covariance): a falling, flying or tumbling body keeps its self-contact set for many steps; only its
 * deformation counts. A segment is the step less the body's mean motion, and a point is compared with it after its
 * mean displacement from x is undone.
 *
 * Per candidate the lists keep its distance at the build's x (distanceRef), how fast it can close along the
 * segment (approach: the largest motion of a node of one primitive relative to a node of the other), and after
 * each `update` how much closer it can be now (slack: s times approach, plus the largest deviation from the
 * reference among its first primitive's nodes and the largest among its second's, Euclidean, in the body's frame
 * inside one) and whether it is live (can be closer than dhat); `covered` says whether its Hessian blocks are in the
 * bound pattern.
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
  /** Positions of the last build: the reference point, or the start of the segment. */
  private readonly xRef: Float64Array;
  /** A segment reference: each vertex moves from xRef by s segment (s in [0, 1], in the frame); a point: all 0. */
  private alongStep = false;
  private readonly segment: Float64Array;
  /** Sum of the segment's squared entries over the vertices checked (0 for a point reference). */
  private segmentNorm2 = 0;
  /** The moment s on the segment that fits the x of the last `displacement` best (0 for a point reference). */
  private moment = 0;
  /** The step less each group's mean motion (inside a body), for `rebuildAlong` and the caller's CCD. */
  private readonly relative: Float64Array;
  /** Euclidean deviation of each node from its reference, in the frame `displacement` uses (the vertices checked only). */
  private readonly moved: Float64Array;
  /** Per vertex checked: its deviation from the reference at the x of the last `displacement`, in the frame used there. */
  private readonly framed: Float64Array;
  private readonly scratch = new PairScratch();
  /**
   * The vertices whose motion matters: across bodies the free ones; inside a body every vertex of a self-contact
   * body, fixed ones too, since undoing the body's motion moves them in its frame.
   */
  private readonly vertices: Uint32Array;
  /** Per group: the centroid at the reference (3 each). */
  private readonly centerRef: Float64Array;
  private readonly groupSize: Float64Array;
  /** Per group: its mean displacement (relativeMotion, and from xRef on a segment). */
  private readonly shift: Float64Array;
  /** Per group: how far coversStep's step takes its vertices from their reference. */
  private readonly groupMotion: Float64Array;
  /** The rigid motion from the reference (point references inside bodies) and the affine fit of a step (affineCovers). */
  private readonly fit: GroupMotionFit;

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
    this.segment = new Float64Array(3 * mesh.nNodes);
    this.relative = new Float64Array(3 * mesh.nNodes);
    this.moved = new Float64Array(mesh.nNodes);
    this.framed = new Float64Array(3 * mesh.nNodes);
    this.vertices = sameGroup ? mesh.vertices.filter((v) => mesh.groups[mesh.groupOfNode[v]].selfContact) : freeVertices;
    const groups = mesh.groups.length;
    this.centerRef = new Float64Array(3 * groups);
    this.groupSize = new Float64Array(groups);
    this.shift = new Float64Array(3 * groups);
    this.margin = new Float64Array(groups).fill(dhat);
    this.delta = new Float64Array(groups);
    this.groupMotion = new Float64Array(groups);
    this.fit = new GroupMotionFit(mesh, this.vertices);
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

  /**
   * How much closer than at the build pair k can be now: it closes by at most moment * approach along the segment,
   * plus the largest deviation among its first primitive's nodes and the largest among its second's.
   */
  private slackOf(list: PairList, k: number): number {
    const along = this.moment * list.approach[k];
    const moved = this.moved;
    const { nodes } = list;
    const { size, split } = list.kind;
    const o = size * k;
    if (size === 4) {
      // Every kind today has 4 nodes: written out, which keeps this loop over all candidates as fast as it was.
      const a = moved[nodes[o]], b = moved[nodes[o + 1]], c = moved[nodes[o + 2]], d = moved[nodes[o + 3]];
      return along + (split === 1 ? a + Math.max(b, c, d) : split === 2 ? Math.max(a, b) + Math.max(c, d) : Math.max(a, b, c) + d);
    }
    let first = 0;
    let second = 0;
    for (let i = 0; i < split; i++) first = Math.max(first, moved[nodes[o + i]]);
    for (let i = split; i < size; i++) second = Math.max(second, moved[nodes[o + i]]);
    return along + first + second;
  }

  /**
   * Whether moving by t dx (dx from relativeMotion) from the x of the last `update` keeps every pair outside the set
   * more than `keep` apart (the largest pair offset; 0 without offsets), with 10 % to spare, judged group by group. A
   * pair of groups g and h left out is at least dhat + (m_g + m_h)/2 apart along some axis at every moment of the
   * reference (dhat here the set's reach); if every vertex of g stays within e_g per axis of its reference point at
   * the moment fitted last, over the whole step, the pair stays more than keep apart when
   * e_g < (dhat - keep)/2 + m_g/2 for every group. Per group, because a fast body with a wide margin and a slow one
   * with a narrow margin are each covered where the one worst case of both (the fastest motion against the narrowest
   * margin) is not.
   *
   * e_g: where positions are compared with the reference after a translation only (across bodies; segments), a
   * vertex moves by t dx in that frame too, and its deviation, convex along the step, is largest at an end: e_g is
   * the largest per-axis deviation at x (delta_g) or at x + t dx. After a best-fitting rigid motion (a point
   * reference inside a body) the frame itself turns with the step, so the bound is delta_g + t mu_g, mu_g the largest
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
      // On a segment, the moment may move along with the step: s(tau) = s + tau sigma, sigma the least-squares fit
      // of dx onto the segment, as long as it stays in [0, 1]; the deviation is linear in tau, largest at an end.
      const e = this.framed, w = this.segment;
      let sigma = 0;
      const ww = this.segmentNorm2;
      if (ww > 0 && t > 0) {
        let dw = 0;
        for (const v of this.vertices) for (let o = 3 * v; o < 3 * v + 3; o++) dw += dx[o] * w[o];
        sigma = dw / ww;
        const end = this.moment + t * sigma;
        if (end > 1) sigma = (1 - this.moment) / t;
        else if (end < 0) sigma = -this.moment / t;
      }
      reach.set(this.delta);
      for (const v of this.vertices) {
        for (let o = 3 * v; o < 3 * v + 3; o++) {
          const end = Math.abs(e[o] + t * (dx[o] - sigma * w[o]));
          if (end > reach[g[v]]) reach[g[v]] = end;
        }
      }
    }
    let affine = false;
    for (let k = 0; k < reach.length; k++) {
      if (reach[k] < 0.9 * (0.5 * (this.dhat - keep) + 0.5 * this.margin[k])) continue;
      // Inside a body, a step that is mostly a turn (a rigid start candidate) moves neighbours alike.
      if (!this.sameGroup) return false;
      if (!affine) this.fit.fitAffine(this.xUpdated, dx);
      affine = true;
      if (!this.affineCovers(k, t, keep)) return false;
    }
    return true;
  }

  /**
   * Whether group g's pairs outside the set stay more than `keep` apart (10 % of the gap to spare) over the step
   * t dx, judged by how the step changes distances (affineClosingBound). A pair outside the set is at least
   * D0 = dhat + m_g - 2 delta_g apart now. A turn by theta has a = 2 sin(theta/2) and E = 0: the pairs keep
   * 1 - theta of their distance, where bounding each vertex's motion alone (coversStep) lets them close by twice
   * the largest.
   */
  private affineCovers(g: number, t: number, keep: number): boolean {
    const gap = this.dhat + this.margin[g];
    const lower = affineClosingBound(gap - 2 * this.delta[g], this.fit.mapNorm(g), this.fit.residual[g], t);
    return lower > keep + 0.1 * (gap - keep);
  }

  /**
   * Each vertex's deviation at x from its reference point (inside a body: after undoing the body's motion, see the
   * class comment): on a segment, the point at the moment s that fits x best (least squares over the vertices, s in
   * [0, 1]), kept in `moment`. Per group the largest per-axis deviation into `delta`; each vertex's deviation into
   * `framed`, its Euclidean length into `moved`.
   */
  displacement(x: Float64Array): void {
    const r = this.xRef, w = this.segment, g = this.mesh.groupOfNode, moved = this.moved, delta = this.delta;
    const framed = this.framed;
    const rigid = this.sameGroup && !this.alongStep, translated = this.sameGroup && this.alongStep;
    if (rigid) this.fit.fitRigid(x, r, this.centerRef);
    if (translated) groupMeans(this.mesh, this.vertices, x, r, this.shift, this.groupSize);
    const { centerRef: cr, shift } = this;
    const { center: c, rotation: R } = this.fit;
    let pw = 0;
    for (const v of this.vertices) {
      const o = 3 * v, q = 3 * g[v];
      // The displacement from xRef: inside a body after its best-fitting rigid motion is undone (R^T (x - c) + cRef
      // - xRef) or, on a segment, its mean displacement (the segment holds the step less its mean).
      let px: number, py: number, pz: number;
      if (rigid) {
        const Q = 9 * g[v];
        const ux = x[o] - c[q], uy = x[o + 1] - c[q + 1], uz = x[o + 2] - c[q + 2];
        px = R[Q] * ux + R[Q + 3] * uy + R[Q + 6] * uz + cr[q] - r[o];
        py = R[Q + 1] * ux + R[Q + 4] * uy + R[Q + 7] * uz + cr[q + 1] - r[o + 1];
        pz = R[Q + 2] * ux + R[Q + 5] * uy + R[Q + 8] * uz + cr[q + 2] - r[o + 2];
      } else if (translated) {
        px = x[o] - r[o] - shift[q];
        py = x[o + 1] - r[o + 1] - shift[q + 1];
        pz = x[o + 2] - r[o + 2] - shift[q + 2];
      } else {
        px = x[o] - r[o];
        py = x[o + 1] - r[o + 1];
        pz = x[o + 2] - r[o + 2];
      }
      framed[o] = px;
      framed[o + 1] = py;
      framed[o + 2] = pz;
      pw += px * w[o] + py * w[o + 1] + pz * w[o + 2];
    }
    const ww = this.segmentNorm2;
    const s = ww > 0 ? Math.min(1, Math.max(0, pw / ww)) : 0;
    this.moment = s;
    delta.fill(0);
    for (const v of this.vertices) {
      const o = 3 * v;
      const ex = framed[o] - s * w[o], ey = framed[o + 1] - s * w[o + 1], ez = framed[o + 2] - s * w[o + 2];
      framed[o] = ex;
      framed[o + 1] = ey;
      framed[o + 2] = ez;
      moved[v] = Math.sqrt(ex * ex + ey * ey + ez * ez);
      const m = Math.max(Math.abs(ex), Math.abs(ey), Math.abs(ez));
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
   * Rebuilds the set around the point x from a proximity query of the broad phase (run here with dhat and the
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
    this.segment.fill(0);
    this.build(x, false, broadPhase);
  }

  /**
   * Rebuilds the set around the segment x .. x + t dx (inside bodies less their mean motion, see relativeMotion),
   * with the smallest margins: the step's own motion is in the segment already. (Margins that would allow another
   * step like this one made the chain net's first 0.1 s 1.8x slower at 4 dhat and 4.3x at 10 dhat: its links are
   * interlocked, and the set grows with the square of the reach.)
   */
  rebuildAlong(x: Float64Array, dx: Float64Array, t: number, broadPhase: SpatialHashBroadPhase): void {
    const w = this.segment;
    const motion = this.relativeMotion(dx);
    for (let i = 0; i < w.length; i++) w[i] = t * motion[i];
    this.margin.fill(this.marginFloor);
    this.build(x, true, broadPhase);
  }

  private get marginCap(): number {
    return (this.sameGroup ? 4 : 10) * this.dhat;
  }

  private get marginFloor(): number {
    return (this.sameGroup ? 1 : 2) * this.dhat;
  }

  /** Builds the set around x, or (alongStep) around the segment from x by `segment`. */
  private build(x: Float64Array, alongStep: boolean, broadPhase: SpatialHashBroadPhase): void {
    const pairs = this.sameGroup ? 'same-group' : 'cross-group';
    const w = this.segment;
    broadPhase.findProximityCandidates(x, this.dhat, pairs, this.margin, alongStep ? w : null, this.sameGroup);
    this.alongStep = alongStep;
    for (const list of this.lists) {
      list.kind.collect(broadPhase, this.mesh, this.rest, list);
      list.fillOffsets(this.mesh);
      const { distanceRef, approach, nodes } = list;
      const { size, split } = list.kind;
      const group = this.mesh.groupOfNode, margin = this.margin;
      let kept = 0;
      for (let k = 0; k < list.count; k++) {
        const distance = Math.sqrt(list.kind.distance2(list, k, x, this.scratch));
        const closing = alongStep ? relativeMotionBound(w, nodes, size * k, split, size) : 0;
        // Far apart all along the reference (see the class comment): never live while the set is valid, and no
        // step that coversStep passes brings it into contact.
        const reach = this.dhat + 0.5 * (margin[group[nodes[size * k]]] + margin[group[nodes[size * k + split]]]);
        if (distance - closing > SQRT3 * reach) continue;
        if (kept !== k) list.copyEntry(list, k, kept);
        distanceRef[kept] = distance;
        approach[kept] = closing;
        kept++;
      }
      list.count = kept;
    }
    let ww = 0;
    if (alongStep) {
      for (const v of this.vertices) {
        const o = 3 * v;
        ww += w[o] * w[o] + w[o + 1] * w[o + 1] + w[o + 2] * w[o + 2];
      }
    }
    this.segmentNorm2 = ww;
    this.xRef.set(x);
    if (this.sameGroup) groupMeans(this.mesh, this.vertices, x, null, this.centerRef, this.groupSize);
    this.moved.fill(0);
    this.framed.fill(0);
    this.moment = 0;
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

/**
 * The least distance, over a step s dx with s in [0, t], of two points at least d0 apart when the step is affine up
 * to a residual: dx_v = A (x_v - c) + b + e_v with |A| <= a (any norm at least the spectral one, such as Frobenius)
 * and |e_v| <= E. Points of primitives move by convex combinations of their nodes' steps, so the same holds for
 * them. Their difference u moves by the constant A u0 + e_p - e_q, u0 its value at the start (the step is a straight
 * line per point), so |u(s)| >= |u0| (1 - s a) - 2 s E, which is smallest at s = t and, while a t < 1, at
 * |u0| = d0. A bound that lets the closing rate shrink with the distance, as (d0 + 2E/a) exp(-a t) - 2E/a does, is
 * wrong here: a squeeze A = -a n n^T brings a pair along n to d0 (1 - a t), below d0 exp(-a t).
 */
export function affineClosingBound(d0: number, a: number, E: number, t: number): number {
  return a * t < 1 ? d0 * (1 - a * t) - 2 * E * t : -Infinity;
}

/**
 * The largest motion (3 numbers per node in m) of a node of a stencil's first primitive (its first `split` nodes
 * from offset o) relative to a node of its second: every point of a primitive moves by a convex combination of its
 * nodes' motions, so the pair's distance changes by at most this along the motion.
 */
export function relativeMotionBound(m: Float64Array, stencil: Int32Array, o: number, split: number, size: number): number {
  let largest = 0;
  for (let a = o; a < o + split; a++) {
    const i = 3 * stencil[a];
    for (let b = o + split; b < o + size; b++) {
      const j = 3 * stencil[b];
      const u = m[i] - m[j], v = m[i + 1] - m[j + 1], w = m[i + 2] - m[j + 2];
      const n = u * u + v * v + w * w;
      if (n > largest) largest = n;
    }
  }
  return Math.sqrt(largest);
}

const SQRT3 = Math.sqrt(3);

/** Whether a and b hold the same numbers. */
function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
