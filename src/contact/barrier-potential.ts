import type { PotentialTerm } from '../energies/potential.js';
import type { BsrMatrix, BsrPattern, PatternBuilder } from '../math/bsr.js';
import { projectPsdTranslationInvariant } from '../math/eigen-sym.js';
import { barrier, barrierFirstDerivative, barrierSecondDerivative, edgeEdgeMollifier } from './barrier.js';
import { CandidateSet, freeStencilNodes, gatherNode, groupMeans } from './candidate-set.js';
import { SpatialHashBroadPhase } from './broad-phase.js';
import { edgeEdgeCcd, pointTriangleCcd } from './ccd.js';
import { pointTriangleDistanceSq, segmentSegmentDistanceSq } from './ccd-distance.js';
import { type CollisionMesh, describeGroup, describeVertex, planeSignedDistance } from './collision-mesh.js';
import { edgeEdgeDistance2, edgeEdgeDistanceType, pointTriangleDistance2, pointTriangleDistanceType } from './distance.js';

/**
 * How a pair's Hessian enters Newton's matrix. 'projected': the exact Hessian of b(d^2) with its negative eigenvalues
 * clamped (as ipc-toolkit does). 'gauss-newton': the Gauss-Newton matrix of b as a function of the distance d,
 * f''(d) grad d grad d^T with f''(d) = 4 d^2 b'' + 2 b' > 0, positive semi-definite as it stands, so no
 * eigen-decomposition; only the 2 d b' hess(d) part (the curvature of the distance itself) is dropped, and along
 * the normal it equals the exact Hessian (the Gauss-Newton idea GIPC, Huang et al. 2024, applies to the barrier).
 * Edge-edge pairs under the mollifier m (near-parallel edges) get m f''(d) grad d grad d^T: the mollifier's own,
 * indefinite, curvature is left out too. Either way only the search direction changes, not the minimiser Newton
 * converges to.
 */
export type BarrierHessian = 'projected' | 'gauss-newton';

export interface BarrierSettings {
  /** Barrier stiffness kappa (N/m): a pair's energy is kappa dhat^2 btilde(d^2 / dhat^2), see below. */
  kappa: number;
  /** Activation distance dhat (m). */
  dhat: number;
  /** Newton matrix of the pairs (default 'gauss-newton'). */
  hessian?: BarrierHessian;
}

/** Contact timings (ms), accumulated over a run: the "where the time goes" of contact scenes. */
export interface ContactTiming {
  /** Broad phase for the active set. */
  proximity: number;
  /** Broad phase and narrow-phase CCD of line-search filters. */
  ccd: number;
  /** Barrier energies, gradients and Hessians. */
  barrier: number;
}

/** One active contact at some x, as the friction term needs it (lagged at x_n). */
export interface ActiveContact {
  /** 'vertex-triangle', 'edge-edge' (nodes of both primitives, 4) or 'vertex-plane' (1 node + the plane index). */
  kind: 'vertex-triangle' | 'edge-edge' | 'vertex-plane';
  nodes: [number, number, number, number];
  plane: number;
  /** Squared distance and the distance type used (distance.ts), -1 for planes. */
  d2: number;
  type: number;
  /** Normal force magnitude -dB/dd = -kappa/dhat^2 * b'(d^2) * 2d (times the edge-edge mollifier). */
  normalForce: number;
}

const STENCIL = 12;

/**
 * The IPC contact barrier as a term of P (Li et al. 2020), so the energy A-search controls includes it:
 *
 *     B(x) = kappa / dhat^2 * sum_k m_k(x) b(d_k^2(x); dhat^2),   b(s; D) = -(s - D)^2 ln(s / D) for s < D
 *
 * over vertex-triangle and edge-edge pairs of the collision mesh and vertex-plane pairs (m_k the edge-edge
 * mollifier, 1 otherwise). Written as kappa dhat^2 btilde(d^2/dhat^2) with btilde(s) = -(s - 1)^2 ln s, the
 * stiffness kappa has units of N/m: near d = dhat/2 the barrier pushes with about 4 kappa dhat newtons, which is how
 * seed 000 quotes kappa = 1e5 N/m. Pairs are summed without merging duplicates (IPC's multiplicity).
 *
 * Candidates (candidate-set.ts) are reused while the vertices stay near where they were found. Blocks of pairs
 * across bodies (or far apart in one body) are not in the elastic Hessian pattern: `patternStale` tells the
 * incremental potential to rebuild its pattern when such a pair becomes active.
 */
export class BarrierPotential implements PotentialTerm {
  readonly name = 'contact';
  kappa: number;
  readonly dhat: number;
  readonly timing: ContactTiming = { proximity: 0, ccd: 0, barrier: 0 };

  private readonly broadPhase: SpatialHashBroadPhase;
  private readonly freeVertices: Uint32Array;
  private readonly anySelfContact: boolean;
  private readonly groupCount: number;
  /** Pairs inside one body, and pairs across bodies and obstacles. */
  private readonly sets: readonly CandidateSet[];
  private boundPattern: BsrPattern | null = null;
  /** Free nodes of every stencil a pattern has been asked for (see addPattern), and their keys. */
  private readonly patternCliques: number[][] = [];
  private readonly patternKeys = new Set<string>();
  private patternX: Float64Array | null = null;
  /** patternCliques[0 .. boundCliques) are in the bound pattern. */
  private boundCliques = 0;
  /** Newton matrix of the pairs (BarrierHessian). */
  readonly hessianModel: BarrierHessian;

  // Scratch.
  /** Set by localBarrier: h12 is positive semi-definite already (the Gauss-Newton part). */
  private hessianIsPsd = false;
  private readonly x12 = new Float64Array(STENCIL);
  private readonly g12 = new Float64Array(STENCIL);
  private readonly h12 = new Float64Array(STENCIL * STENCIL);
  private readonly dg = new Float64Array(STENCIL);
  private readonly dh = new Float64Array(STENCIL * STENCIL);
  private readonly mg = new Float64Array(STENCIL);
  private readonly mh = new Float64Array(STENCIL * STENCIL);
  private readonly nodes4 = new Int32Array(4);
  private readonly ccdPoints = Array.from({ length: 8 }, () => new Float64Array(3));
  /** The pair that held the last maxStep at 0 (kind 0 none, 1 vertex-triangle, 2 edge-edge, 3 vertex-plane). */
  private blockedKind = 0;
  private readonly blockedNodes = new Int32Array(4);
  private readonly dxRelative: Float64Array;
  private readonly groupShift: Float64Array;
  private readonly groupCountBuffer: Float64Array;

  constructor(
    readonly mesh: CollisionMesh,
    rest: Float64Array,
    settings: BarrierSettings,
  ) {
    if (!(settings.kappa > 0)) throw new Error(`contact: kappa must be positive, got ${settings.kappa}`);
    if (!(settings.dhat > 0)) throw new Error(`contact: dhat must be positive, got ${settings.dhat}`);
    this.kappa = settings.kappa;
    this.dhat = settings.dhat;
    this.hessianModel = settings.hessian ?? 'gauss-newton';
    this.freeVertices = mesh.vertices.filter((v) => !mesh.fixedNodes[v]);
    this.groupCount = mesh.groups.length;
    const selfContact = mesh.groups.map((g) => (g.selfContact ? 1 : 0));
    this.broadPhase = new SpatialHashBroadPhase(mesh, { fixedNodes: mesh.fixedNodes, groupOfNode: mesh.groupOfNode, selfContact, method: 'bvh' });
    this.anySelfContact = mesh.groups.some((g) => g.selfContact && g.kind !== 'particles');
    const sets: CandidateSet[] = [];
    if (this.anySelfContact) sets.push(new CandidateSet(mesh, rest, true, this.dhat, this.freeVertices));
    if (this.groupCount > 1) sets.push(new CandidateSet(mesh, rest, false, this.dhat, this.freeVertices));
    this.sets = sets;
    this.dxRelative = new Float64Array(3 * mesh.nNodes);
    this.groupShift = new Float64Array(3 * this.groupCount);
    this.groupCountBuffer = new Float64Array(this.groupCount);
  }

  /** kappa / dhat^2: the factor in front of b(d^2; dhat^2). */
  private get scale(): number {
    return this.kappa / (this.dhat * this.dhat);
  }

  // ---- candidates and pattern -------------------------------------------------------------------------------

  private ensureCandidates(x: Float64Array): void {
    for (const set of this.sets) {
      if (set.update(x)) continue;
      const t0 = performance.now();
      set.rebuild(x, this.broadPhase);
      if (this.boundPattern) set.markCovered(this.boundPattern);
      set.update(x);
      this.timing.proximity += performance.now() - t0;
    }
  }

  /** Squared distance of candidate k of a set at x (positions left in x12). */
  private candidateDistance2(set: CandidateSet, k: number, x: Float64Array): number {
    const x12 = this.x12;
    for (let i = 0; i < 4; i++) gatherNode(x, set.nodes[4 * k + i], x12, 3 * i);
    return set.edgeEdge[k] ? edgeEdgeDistance2(x12, edgeEdgeDistanceType(x12)) : pointTriangleDistance2(x12, pointTriangleDistanceType(x12));
  }

  /**
   * True when an active pair at x (d < dhat) couples free nodes whose block the bound pattern lacks (a new contact
   * between two bodies, say); the incremental potential then rebuilds its pattern through addPattern.
   */
  patternStale(x: Float64Array): boolean {
    this.ensureCandidates(x);
    this.patternX = x;
    const dhat2 = this.dhat * this.dhat;
    for (const set of this.sets) {
      for (let q = 0; q < set.liveCount; q++) {
        const k = set.live[q];
        if (!set.covered[k] && this.candidateDistance2(set, k, x) < dhat2) return true;
      }
    }
    return false;
  }

  /**
   * Couplings of the pairs within 2 dhat at the last x given to patternStale (a little room to approach), and of
   * every pair an earlier pattern had: blocks stay once added, so a pair that separates and touches again (a
   * vibrating body does this all the time) needs no new pattern, hence no new symbolic analysis and no forced
   * refactorisation. The pattern only grows, by the contacts the run has actually seen.
   */
  addPattern(builder: PatternBuilder): void {
    const x = this.patternX;
    if (!x) return;
    const fixed = this.mesh.fixedNodes;
    const reach2 = 4 * this.dhat * this.dhat;
    const scratch = new Int32Array(4);
    // Grown from the bound pattern, the builder has every clique added so far: only new ones need adding.
    const known = builder.base !== null && builder.base === this.boundPattern ? this.boundCliques : 0;
    for (const set of this.sets) {
      for (let q = 0; q < set.liveCount; q++) {
        const k = set.live[q];
        // Blocks of a covered candidate are in the bound pattern, so in any pattern its terms build again.
        if (this.boundPattern && set.covered[k]) continue;
        if (this.candidateDistance2(set, k, x) >= reach2) continue;
        const m = freeStencilNodes(set.nodes, 4 * k, 4, fixed, scratch);
        if (m < 2) continue;
        const free = Array.from(scratch.subarray(0, m)).sort((a, b) => a - b);
        const key = free.join(',');
        if (this.patternKeys.has(key)) continue;
        this.patternKeys.add(key);
        this.patternCliques.push(free);
      }
    }
    for (let c = known; c < this.patternCliques.length; c++) builder.addClique(this.patternCliques[c]);
  }

  bindPattern(H: BsrMatrix): void {
    this.boundPattern = H.pattern;
    this.boundCliques = this.patternCliques.length;
    for (const set of this.sets) set.markCovered(H.pattern);
  }

  // ---- energy, gradient, Hessian ----------------------------------------------------------------------------

  energy(x: Float64Array): number {
    this.ensureCandidates(x);
    const t0 = performance.now();
    const dhat2 = this.dhat * this.dhat;
    let e = 0;
    for (const set of this.sets) {
      for (let q = 0; q < set.liveCount; q++) {
        const k = set.live[q];
        const d2 = this.candidateDistance2(set, k, x);
        if (d2 >= dhat2) continue;
        const m = set.edgeEdge[k] ? edgeEdgeMollifier(this.x12, set.mollifierEps[k]) : 1;
        e += m * barrier(d2, dhat2);
      }
    }
    e += this.planeEnergy(x, dhat2);
    this.timing.barrier += performance.now() - t0;
    return this.scale * e;
  }

  private planeEnergy(x: Float64Array, dhat2: number): number {
    let e = 0;
    for (const plane of this.mesh.planes) {
      const [nx, ny, nz] = plane.normal;
      for (const v of this.freeVertices) {
        const d = nx * x[3 * v] + ny * x[3 * v + 1] + nz * x[3 * v + 2] - plane.offset;
        if (d <= 0) return Infinity;
        if (d < this.dhat) e += barrier(d * d, dhat2);
      }
    }
    return e;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    this.ensureCandidates(x);
    const t0 = performance.now();
    const dhat2 = this.dhat * this.dhat;
    const s = scale * this.scale;
    for (const set of this.sets) {
      for (let q = 0; q < set.liveCount; q++) {
        const k = set.live[q];
        if (!this.localBarrier(set, k, x, dhat2, true, false)) continue;
        for (let i = 0; i < 4; i++) {
          const o = 3 * set.nodes[4 * k + i];
          g[o] += s * this.g12[3 * i];
          g[o + 1] += s * this.g12[3 * i + 1];
          g[o + 2] += s * this.g12[3 * i + 2];
        }
      }
    }
    for (const plane of this.mesh.planes) {
      const [nx, ny, nz] = plane.normal;
      for (const v of this.freeVertices) {
        const d = nx * x[3 * v] + ny * x[3 * v + 1] + nz * x[3 * v + 2] - plane.offset;
        if (d >= this.dhat) continue;
        // d/dx b(d^2) = b'(d^2) 2 d n
        const f = s * barrierFirstDerivative(d * d, dhat2) * 2 * d;
        g[3 * v] += f * nx;
        g[3 * v + 1] += f * ny;
        g[3 * v + 2] += f * nz;
      }
    }
    this.timing.barrier += performance.now() - t0;
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean): void {
    this.ensureCandidates(x);
    const t0 = performance.now();
    const dhat2 = this.dhat * this.dhat;
    const s = scale * this.scale;
    const fixed = this.mesh.fixedNodes;
    const values = H.values;
    const pattern = H.pattern;
    const gaussNewton = projectPsd && this.hessianModel === 'gauss-newton'; // the exact Hessian when asked for it
    for (const set of this.sets) {
      for (let q = 0; q < set.liveCount; q++) {
        const k = set.live[q];
        if (!this.localBarrier(set, k, x, dhat2, false, true, gaussNewton)) continue;
        // A pair's barrier depends on differences of its nodes only: the projection works in the 9 (or fewer)
        // directions a common translation leaves out.
        if (projectPsd && !this.hessianIsPsd) projectPsdTranslationInvariant(this.h12, 4);
        for (let a = 0; a < 4; a++) {
          const na = set.nodes[4 * k + a];
          if (fixed[na]) continue;
          for (let b = 0; b < 4; b++) {
            const nb = set.nodes[4 * k + b];
            if (fixed[nb]) continue;
            const slot = pattern.slot(na, nb);
            if (slot < 0) throw new Error(`contact: Hessian block (${na}, ${nb}) missing (patternStale was not consulted)`);
            const o = 9 * slot;
            for (let i = 0; i < 3; i++) {
              for (let j = 0; j < 3; j++) values[o + 3 * i + j] += s * this.h12[(3 * a + i) * STENCIL + 3 * b + j];
            }
          }
        }
      }
    }
    for (const plane of this.mesh.planes) {
      const n = plane.normal;
      for (const v of this.freeVertices) {
        const d = n[0] * x[3 * v] + n[1] * x[3 * v + 1] + n[2] * x[3 * v + 2] - plane.offset;
        if (d >= this.dhat) continue;
        // Hessian of b(d^2) along n: 4 d^2 b'' + 2 b' (a rank-one block n n^T).
        let c = 4 * d * d * barrierSecondDerivative(d * d, dhat2) + 2 * barrierFirstDerivative(d * d, dhat2);
        if (projectPsd && c < 0) c = 0;
        const o = 9 * H.pattern.diagSlot[v];
        for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) values[o + 3 * i + j] += s * c * n[i] * n[j];
      }
    }
    this.timing.barrier += performance.now() - t0;
  }

  /**
   * Local barrier of candidate k of a set at x: fills g12 (gradient) and/or h12 (Hessian) of m b(d^2) over the 12
   * stencil coordinates. Returns false when the pair is not active (d >= dhat). With gaussNewton, h12 is the
   * Gauss-Newton matrix in d (see BarrierHessian) and hessianIsPsd is set.
   */
  private localBarrier(
    set: CandidateSet,
    k: number,
    x: Float64Array,
    dhat2: number,
    wantGradient: boolean,
    wantHessian: boolean,
    gaussNewton = false,
  ): boolean {
    const isEdgeEdge = set.edgeEdge[k] === 1;
    const x12 = this.x12;
    for (let i = 0; i < 4; i++) gatherNode(x, set.nodes[4 * k + i], x12, 3 * i);
    const eeType = isEdgeEdge ? edgeEdgeDistanceType(x12) : 0;
    const ptType = isEdgeEdge ? 0 : pointTriangleDistanceType(x12);
    const d2 = isEdgeEdge ? edgeEdgeDistance2(x12, eeType) : pointTriangleDistance2(x12, ptType);
    if (d2 >= dhat2) return false;
    let m = 1;
    let mollified = false;
    if (isEdgeEdge) {
      const exactHessian = wantHessian && !gaussNewton;
      m = edgeEdgeMollifier(x12, set.mollifierEps[k], wantGradient || exactHessian ? this.mg : null, exactHessian ? this.mh : null);
      mollified = m < 1;
    }
    const psdModel = wantHessian && gaussNewton;
    this.hessianIsPsd = psdModel;
    const dh = wantHessian && !psdModel ? this.dh : null; // the Gauss-Newton matrix needs no hess(d^2)
    if (isEdgeEdge) edgeEdgeDistance2(x12, eeType, this.dg, dh);
    else pointTriangleDistance2(x12, ptType, this.dg, dh);
    const b = barrier(d2, dhat2);
    const b1 = barrierFirstDerivative(d2, dhat2);
    const dg = this.dg;
    if (wantGradient) {
      for (let i = 0; i < STENCIL; i++) this.g12[i] = m * b1 * dg[i] + (mollified ? b * this.mg[i] : 0);
    }
    if (!wantHessian) return true;
    const b2 = barrierSecondDerivative(d2, dhat2);
    const h = this.h12;
    if (psdModel) {
      // Gauss-Newton in the distance d rather than d^2: the curvature of b(d^2) along d is 4 d^2 b'' + 2 b' (> 0 on
      // 0 < d < dhat), i.e. (b'' + b' / (2 d^2)) on grad(d^2) grad(d^2)^T. Taking b'' alone (Gauss-Newton in d^2)
      // doubles the stiffness along the normal near contact (b' ~ -dhat^4/d^2), which halves every Newton step
      // toward a contact and leaves a linearly converging tail. The mollifier m is held fixed here.
      const coefficient = m * Math.max(0, b2 + b1 / (2 * d2));
      for (let i = 0; i < STENCIL; i++) {
        const ci = coefficient * dg[i];
        for (let j = 0; j < STENCIL; j++) h[STENCIL * i + j] = ci * dg[j];
      }
      return true;
    }
    const mg = this.mg, mh = this.mh;
    for (let i = 0; i < STENCIL; i++) {
      for (let j = 0; j < STENCIL; j++) {
        let v = m * b2 * dg[i] * dg[j] + m * b1 * this.dh[STENCIL * i + j];
        if (mollified) v += b1 * (mg[i] * dg[j] + dg[i] * mg[j]) + b * mh[STENCIL * i + j];
        h[STENCIL * i + j] = v;
      }
    }
    return true;
  }

  // ---- line-search filter -----------------------------------------------------------------------------------

  /**
   * The largest t <= 1 such that no pair touches on the way from x to x + t dx: analytic for planes (keeping at
   * least a tenth of each vertex's gap), additive CCD for mesh pairs. Pairs inside one body are swept in the
   * body's own frame (its mean displacement removed), which keeps a fast-moving body's boxes small.
   */
  maxStep(x: Float64Array, dx: Float64Array): number {
    const t0 = performance.now();
    this.blockedKind = 0;
    let t = 1;
    for (const plane of this.mesh.planes) {
      const [nx, ny, nz] = plane.normal;
      for (const v of this.freeVertices) {
        const o = 3 * v;
        const rate = nx * dx[o] + ny * dx[o + 1] + nz * dx[o + 2];
        if (rate >= 0) continue;
        const gap = nx * x[o] + ny * x[o + 1] + nz * x[o + 2] - plane.offset;
        const tv = (0.9 * gap) / -rate;
        if (tv < t) t = Math.max(0, tv);
        if (!(tv > 0)) this.noteBlocked(3, v, this.mesh.planes.indexOf(plane), 0, 0);
      }
    }
    if (this.sets.length > 0) {
      this.ensureCandidates(x);
      for (const set of this.sets) {
        const motion = set.sameGroup ? this.relativeDisplacement(dx) : dx;
        // A pair closes by at most twice the largest vertex motion per unit step, and every pair outside the set is
        // at least set.outsideGap apart at x: while the step closes less than that, only the set's pairs can touch,
        // and of those only the ones whose distance (at least dRef - slack) the step can close. Otherwise sweep
        // the whole surface.
        const closing = 2 * maxNormOverVertices(motion, this.freeVertices);
        if (closing * t < 0.9 * set.outsideGap) t = Math.min(t, this.sweepSet(set, x, motion, t, closing));
        else t = Math.min(t, this.sweep(x, motion, t, set.sameGroup));
      }
    }
    this.timing.ccd += performance.now() - t0;
    return t;
  }

  /** CCD over the set's pairs that the step can close (see maxStep). */
  private sweepSet(set: CandidateSet, x: Float64Array, motion: Float64Array, tMax: number, closing: number): number {
    const p = this.ccdPoints;
    let t = tMax;
    for (let k = 0; k < set.count; k++) {
      if (set.distanceRef[k] - set.slack[k] > closing * t) continue;
      const o = 4 * k;
      this.loadEndpoints(x, motion, t, set.nodes[o], set.nodes[o + 1], set.nodes[o + 2], set.nodes[o + 3]);
      const toi = set.edgeEdge[k] ? edgeEdgeCcd(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]) : pointTriangleCcd(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
      if (toi < 1) t *= toi;
      if (toi === 0) this.noteBlocked(set.edgeEdge[k] ? 2 : 1, set.nodes[o], set.nodes[o + 1], set.nodes[o + 2], set.nodes[o + 3]);
    }
    return t;
  }

  /** dx minus each group's mean vertex displacement (a common translation does not change distances within it). */
  private relativeDisplacement(dx: Float64Array): Float64Array {
    const { groupOfNode, vertices } = this.mesh;
    const shift = this.groupShift;
    groupMeans(this.mesh, vertices, dx, null, shift, this.groupCountBuffer);
    const out = this.dxRelative;
    out.set(dx);
    for (const v of vertices) {
      const g = groupOfNode[v];
      for (let a = 0; a < 3; a++) out[3 * v + a] -= shift[3 * g + a];
    }
    return out;
  }

  /** CCD over the swept candidates of one kind (same-group pairs with relative motion, or cross-group pairs). */
  private sweep(x: Float64Array, dx: Float64Array, tMax: number, sameGroup: boolean): number {
    const bp = this.broadPhase;
    bp.findSweptCandidates(x, dx, tMax, 0, sameGroup ? 'same-group' : 'cross-group');
    const { triangles, edges } = this.mesh;
    const p = this.ccdPoints;
    let t = tMax;
    for (let k = 0; k < bp.vertexTriangleCount; k++) {
      const v = bp.vertexTrianglePairs[2 * k], tri = bp.vertexTrianglePairs[2 * k + 1];
      this.loadEndpoints(x, dx, t, v, triangles[3 * tri], triangles[3 * tri + 1], triangles[3 * tri + 2]);
      const toi = pointTriangleCcd(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
      if (toi < 1) t *= toi;
      if (toi === 0) this.noteBlocked(1, v, triangles[3 * tri], triangles[3 * tri + 1], triangles[3 * tri + 2]);
    }
    for (let k = 0; k < bp.edgeEdgeCount; k++) {
      const a = bp.edgeEdgePairs[2 * k], b = bp.edgeEdgePairs[2 * k + 1];
      this.loadEndpoints(x, dx, t, edges[2 * a], edges[2 * a + 1], edges[2 * b], edges[2 * b + 1]);
      const toi = edgeEdgeCcd(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
      if (toi < 1) t *= toi;
      if (toi === 0) this.noteBlocked(2, edges[2 * a], edges[2 * a + 1], edges[2 * b], edges[2 * b + 1]);
    }
    return t;
  }

  private noteBlocked(kind: number, a: number, b: number, c: number, d: number): void {
    if (this.blockedKind !== 0) return;
    this.blockedKind = kind;
    this.blockedNodes.set([a, b, c, d]);
  }

  /**
   * Why the last maxStep returned 0: the first pair found already within the CCD's tolerance of contact, with its
   * distance at x. Newton's "no motion" error quotes it.
   */
  explainBlockedStep(x: Float64Array): string | undefined {
    const [a, b, c, d] = this.blockedNodes;
    const hint = `; a barrier too weak for the load lets Newton press a pair onto the CCD tolerance: raise contact.kappa (now ${this.kappa})`;
    const at = (d2: number) => `at distance ${Math.sqrt(d2).toExponential(2)} m`;
    switch (this.blockedKind) {
      case 1:
        return `${describeVertex(this.mesh, a)} and the triangle on nodes ${b}, ${c}, ${d} of ${describeGroup(this.mesh, b)} are in contact ${at(pointTriangleDistanceSq(x, a, b, c, d))}${hint}`;
      case 2:
        return `the edge on nodes ${a}, ${b} of ${describeGroup(this.mesh, a)} and the edge on nodes ${c}, ${d} of ${describeGroup(this.mesh, c)} are in contact ${at(segmentSegmentDistanceSq(x, a, b, c, d))}${hint}`;
      case 3: {
        const plane = this.mesh.planes[b];
        return `${describeVertex(this.mesh, a)} touches plane '${plane.name}' (signed distance ${planeSignedDistance(plane, x, a).toExponential(2)} m)${hint}`;
      }
      default:
        return undefined;
    }
  }

  /** Start (x) and end (x + t dx) positions of 4 nodes into ccdPoints[0..3] and [4..7]. */
  private loadEndpoints(x: Float64Array, dx: Float64Array, t: number, a: number, b: number, c: number, d: number): void {
    const p = this.ccdPoints;
    const ids = this.nodes4;
    ids[0] = a;
    ids[1] = b;
    ids[2] = c;
    ids[3] = d;
    for (let i = 0; i < 4; i++) {
      const o = 3 * ids[i];
      for (let k = 0; k < 3; k++) {
        p[i][k] = x[o + k];
        p[4 + i][k] = x[o + k] + t * dx[o + k];
      }
    }
  }

  // ---- diagnostics ------------------------------------------------------------------------------------------

  /**
   * Active contacts at x (d < dhat) with their normal force magnitudes, and the smallest distance among the
   * candidates and planes (Infinity when none is within reach of the candidate set).
   */
  activeContacts(x: Float64Array, out: ActiveContact[] | null): { count: number; minDistance: number } {
    this.ensureCandidates(x);
    const dhat2 = this.dhat * this.dhat;
    let count = 0;
    let min2 = Infinity;
    for (const set of this.sets) {
      for (let k = 0; k < set.count; k++) {
        const isEdgeEdge = set.edgeEdge[k] === 1;
        const x12 = this.x12;
        for (let i = 0; i < 4; i++) gatherNode(x, set.nodes[4 * k + i], x12, 3 * i);
        let type: number;
        let d2: number;
        if (isEdgeEdge) {
          const eeType = edgeEdgeDistanceType(x12);
          d2 = edgeEdgeDistance2(x12, eeType);
          type = eeType;
        } else {
          const ptType = pointTriangleDistanceType(x12);
          d2 = pointTriangleDistance2(x12, ptType);
          type = ptType;
        }
        if (d2 < min2) min2 = d2;
        if (d2 >= dhat2) continue;
        count++;
        if (out) {
          const m = isEdgeEdge ? edgeEdgeMollifier(x12, set.mollifierEps[k]) : 1;
          const n = set.nodes;
          out.push({
            kind: isEdgeEdge ? 'edge-edge' : 'vertex-triangle',
            nodes: [n[4 * k], n[4 * k + 1], n[4 * k + 2], n[4 * k + 3]],
            plane: -1,
            d2,
            type,
            normalForce: -this.scale * m * barrierFirstDerivative(d2, dhat2) * 2 * Math.sqrt(d2),
          });
        }
      }
    }
    this.mesh.planes.forEach((plane, pi) => {
      const [nx, ny, nz] = plane.normal;
      for (const v of this.freeVertices) {
        const d = nx * x[3 * v] + ny * x[3 * v + 1] + nz * x[3 * v + 2] - plane.offset;
        if (d * d < min2 || d <= 0) min2 = d <= 0 ? 0 : d * d;
        if (d >= this.dhat) continue;
        count++;
        out?.push({
          kind: 'vertex-plane',
          nodes: [v, -1, -1, -1],
          plane: pi,
          d2: d * d,
          type: -1,
          normalForce: -this.scale * barrierFirstDerivative(d * d, dhat2) * 2 * d,
        });
      }
    });
    return { count, minDistance: Math.sqrt(min2) };
  }
}


function maxNormOverVertices(v: Float64Array, vertices: Uint32Array): number {
  let m = 0;
  for (const i of vertices) {
    const a = v[3 * i], b = v[3 * i + 1], c = v[3 * i + 2];
    const n = a * a + b * b + c * c;
    if (n > m) m = n;
  }
  return Math.sqrt(m);
}
