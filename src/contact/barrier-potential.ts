import type { PotentialTerm } from '../energies/potential.js';
import type { BsrMatrix, BsrPattern, PatternBuilder } from '../math/bsr.js';
import { offsetBarrierFirstDerivative } from './barrier.js';
import { CandidateSet, groupMeans } from './candidate-set.js';
import { SpatialHashBroadPhase } from './broad-phase.js';
import type { CollisionMesh } from './collision-mesh.js';
import { type ActiveContact, type ObstaclePairKind, type PairHessian, type PairKind, PairScratch, type SurfacePairKind } from './pairs/pair-kind.js';
import { PairList } from './pairs/pair-list.js';
import { OBSTACLE_PAIR_KINDS, SURFACE_PAIR_KINDS } from './pairs/registry.js';
import { MAX_STENCIL, freeStencilNodes } from './pairs/stencil.js';

export type { ActiveContact } from './pairs/pair-kind.js';

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

/**
 * The IPC contact barrier as a term of P (Li et al. 2020), so the energy A-search controls includes it:
 *
 *     B(x) = kappa / dhat^2 * sum_k m_k(x) b(d_k^2(x); dhat^2),   b(s; D) = -(s - D)^2 ln(s / D) for s < D
 *
 * over the contact pairs of every kind (pairs/registry.ts: vertex-triangle and edge-edge pairs of the collision
 * mesh, vertex-plane pairs; m_k the kind's mollifier, 1 but for near-parallel edges). Written as
 * kappa dhat^2 btilde(d^2/dhat^2) with btilde(s) = -(s - 1)^2 ln s, the stiffness kappa has units of N/m: near
 * d = dhat/2 the barrier pushes with about 4 kappa dhat newtons, which is how seed 000 quotes kappa = 1e5 N/m. Pairs
 * are summed without merging duplicates (IPC's multiplicity).
 *
 * Pairs live in PairLists, one per kind: the candidate sets' (candidate-set.ts: surface pairs inside one body and
 * across bodies, reused while the vertices stay near where they were found) and one per obstacle kind (every free
 * vertex with every plane, fixed). Every loop here goes list by list, so within a list one kind's kernel runs.
 * Blocks of pairs across bodies (or far apart in one body) are not in the elastic Hessian pattern: `patternStale`
 * tells the incremental potential to rebuild its pattern when such a pair becomes active.
 *
 * Contact offsets (Codim-IPC thickness; CollisionGroup.contactOffset): a pair with offset xi has its barrier on
 * d - xi (pair kinds), so it is active below xi + dhat: the candidate sets reach dhat plus the largest pair offset,
 * the sweeps look that much farther, and the line-search filter keeps every pair more than its xi apart.
 */
export class BarrierPotential implements PotentialTerm {
  readonly name = 'contact';
  kappa: number;
  readonly dhat: number;
  readonly timing: ContactTiming = { proximity: 0, ccd: 0, barrier: 0 };

  private readonly broadPhase: SpatialHashBroadPhase;
  private readonly freeVertices: Uint32Array;
  /** Surface pairs inside one body, and across bodies and obstacles. */
  private readonly sets: readonly CandidateSet[];
  /** Pairs of the free vertices with the obstacles (planes): all of them, always live. */
  private readonly obstaclePairs: readonly PairList<ObstaclePairKind>[];
  /** Every list the sums visit, in this order: the candidate sets', then the obstacle pairs. */
  private readonly lists: readonly PairList[];
  /** The swept broad phase's pairs (maxStep's full sweep), one list per surface kind. */
  private readonly sweptPairs: readonly PairList<SurfacePairKind>[];
  private boundPattern: BsrPattern | null = null;
  /** Free nodes of every stencil a pattern has been asked for (see addPattern), and their keys. */
  private readonly patternCliques: number[][] = [];
  private readonly patternKeys = new Set<string>();
  private patternX: Float64Array | null = null;
  /** patternCliques[0 .. boundCliques) are in the bound pattern. */
  private boundCliques = 0;
  /** Newton matrix of the pairs (BarrierHessian). */
  readonly hessianModel: BarrierHessian;

  private readonly scratch = new PairScratch();
  /** The pair that held the last maxStep at 0 (a copy, in the list of its kind in blockedCopies), or null. */
  private blocked: PairList | null = null;
  private readonly blockedCopies: Map<PairKind, PairList>;
  private readonly dxRelative: Float64Array;
  private readonly groupShift: Float64Array;
  private readonly groupCountBuffer: Float64Array;
  /** The largest contact offset of a pair (0 without offsets). */
  private readonly maxOffset: number;

  constructor(
    readonly mesh: CollisionMesh,
    rest: Float64Array,
    settings: BarrierSettings,
  ) {
    if (!(settings.kappa > 0)) throw new Error(`contact: kappa must be positive, got ${settings.kappa}`);
    if (!(settings.dhat > 0)) throw new Error(`contact: dhat must be positive, got ${settings.dhat}`);
    this.kappa = settings.kappa;
    this.dhat = settings.dhat;
    this.scratch.setDhat(settings.dhat);
    this.hessianModel = settings.hessian ?? 'gauss-newton';
    this.freeVertices = mesh.vertices.filter((v) => !mesh.fixedNodes[v]);
    this.maxOffset = mesh.maxPairOffset ?? 0;
    // A pair is active below dhat + its offset: the sets reach that far.
    const reach = this.dhat + this.maxOffset;
    const groupCount = mesh.groups.length;
    const selfContact = mesh.groups.map((g) => (g.selfContact ? 1 : 0));
    this.broadPhase = new SpatialHashBroadPhase(mesh, { fixedNodes: mesh.fixedNodes, groupOfNode: mesh.groupOfNode, selfContact, method: 'bvh' });
    const sets: CandidateSet[] = [];
    if (mesh.groups.some((g) => g.selfContact && g.kind !== 'particles')) sets.push(new CandidateSet(mesh, rest, true, reach, this.freeVertices));
    if (groupCount > 1) sets.push(new CandidateSet(mesh, rest, false, reach, this.freeVertices));
    this.sets = sets;
    this.obstaclePairs = OBSTACLE_PAIR_KINDS.map((kind) => {
      const list = new PairList(kind);
      kind.collect(mesh, this.freeVertices, list);
      list.fillOffsets(mesh);
      list.setAllLive();
      return list;
    });
    this.lists = [...sets.flatMap((set) => set.lists), ...this.obstaclePairs];
    this.sweptPairs = SURFACE_PAIR_KINDS.map((kind) => new PairList(kind));
    this.blockedCopies = new Map([...SURFACE_PAIR_KINDS, ...OBSTACLE_PAIR_KINDS].map((kind) => [kind, new PairList<PairKind>(kind)]));
    this.dxRelative = new Float64Array(3 * mesh.nNodes);
    this.groupShift = new Float64Array(3 * groupCount);
    this.groupCountBuffer = new Float64Array(groupCount);
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

  /**
   * True when an active pair at x (d < dhat) couples free nodes whose block the bound pattern lacks (a new contact
   * between two bodies, say); the incremental potential then rebuilds its pattern through addPattern. Only surface
   * pairs couple nodes: an obstacle pair's stencil is one vertex, whose diagonal block is always there.
   */
  patternStale(x: Float64Array): boolean {
    this.ensureCandidates(x);
    this.patternX = x;
    const c = this.scratch;
    for (const set of this.sets) {
      for (const list of set.lists) {
        const { kind, live, covered, offsets } = list;
        for (let q = 0; q < list.liveCount; q++) {
          const k = live[q];
          if (!covered[k] && kind.distance2(list, k, x, c) < c.reach2(offsets[k])) return true;
        }
      }
    }
    return false;
  }

  /**
   * Couplings of the pairs within 2 dhat (plus their offset) at the last x given to patternStale (a little room to
   * approach). Grown from the bound pattern (builder.base), also those of every pair it had: blocks stay, so a pair
   * that separates and touches again (a vibrating body does this all the time) needs no new pattern, hence no new
   * symbolic analysis and no forced refactorisation. A pattern built from scratch (the incremental potential does
   * this every so often) drops the pairs that have parted: kept for good, their blocks add fill to every
   * factorization for the rest of the run.
   */
  addPattern(builder: PatternBuilder): void {
    const x = this.patternX;
    if (!x) return;
    if (builder.base === null) {
      this.patternCliques.length = 0;
      this.patternKeys.clear();
      this.boundPattern = null;
    }
    const fixed = this.mesh.fixedNodes;
    const free = new Int32Array(MAX_STENCIL);
    // Grown from the bound pattern, the builder has every clique added so far: only new ones need adding.
    const known = builder.base !== null && builder.base === this.boundPattern ? this.boundCliques : 0;
    for (const set of this.sets) {
      for (const list of set.lists) {
        const { kind, live, covered, offsets } = list;
        for (let q = 0; q < list.liveCount; q++) {
          const k = live[q];
          const reach = 2 * this.dhat + offsets[k];
          // Blocks of a covered candidate are in the bound pattern, so in any pattern its terms build again.
          if (this.boundPattern && covered[k]) continue;
          if (kind.distance2(list, k, x, this.scratch) >= reach * reach) continue;
          const m = freeStencilNodes(list.nodes, kind.size * k, kind.size, fixed, free);
          if (m < 2) continue;
          const nodes = Array.from(free.subarray(0, m)).sort((a, b) => a - b);
          const key = nodes.join(',');
          if (this.patternKeys.has(key)) continue;
          this.patternKeys.add(key);
          this.patternCliques.push(nodes);
        }
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
    const c = this.scratch;
    let e = 0;
    for (const list of this.lists) e = list.kind.sumEnergy(list, x, c, e);
    this.timing.barrier += performance.now() - t0;
    return this.scale * e;
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    this.ensureCandidates(x);
    const t0 = performance.now();
    const s = scale * this.scale;
    const c = this.scratch;
    for (const list of this.lists) list.kind.addGradients(list, x, s, g, c);
    this.timing.barrier += performance.now() - t0;
  }

  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean): void {
    this.ensureCandidates(x);
    const t0 = performance.now();
    const s = scale * this.scale;
    const fixed = this.mesh.fixedNodes;
    const c = this.scratch;
    // The exact Hessian when asked for it; else the chosen PSD model.
    const model: PairHessian = !projectPsd ? 'exact' : this.hessianModel === 'gauss-newton' ? 'gauss-newton' : 'projected';
    for (const list of this.lists) list.kind.addHessians(list, x, s, H, fixed, c, model);
    this.timing.barrier += performance.now() - t0;
  }

  // ---- line-search filter -----------------------------------------------------------------------------------

  /**
   * The largest t <= limit (at most 1) such that no pair touches on the way from x to x + t dx: the obstacle pairs
   * first (closed forms, cheap, and a shorter t shrinks the sweeps), then additive CCD for surface pairs. Pairs inside one body
   * are swept in the body's own frame (its mean displacement removed), which keeps a fast-moving body's boxes small.
   */
  maxStep(x: Float64Array, dx: Float64Array, limit = 1): number {
    const t0 = performance.now();
    this.blocked = null;
    if (!(limit > 0)) return 0; // held by another term already (which explains it)
    let t = Math.min(1, limit);
    for (const list of this.obstaclePairs) {
      for (let k = 0; k < list.count; k++) t = this.pairStep(list, k, x, dx, t);
    }
    if (this.sets.length > 0) {
      this.ensureCandidates(x);
      for (const set of this.sets) {
        const motion = set.sameGroup ? this.relativeDisplacement(dx) : dx;
        // When the pairs outside the set are far enough apart for the step (set.coversStep, body by body), only
        // the set's pairs can touch, and of those only the ones whose distance (at least dRef - slack) the step
        // can close: a pair closes by at most twice the largest vertex motion per unit step. Otherwise sweep the
        // whole surface.
        const closing = 2 * maxNormOverVertices(motion, this.freeVertices);
        if (set.coversStep(motion, t, this.maxOffset)) t = Math.min(t, this.sweepSet(set, x, motion, t, closing));
        else t = Math.min(t, this.sweep(x, motion, t, set.sameGroup));
      }
    }
    this.timing.ccd += performance.now() - t0;
    return t;
  }

  /** Pair k's bound on the step (at most t); keeps the first pair that allows no motion for explainBlockedStep. */
  private pairStep(list: PairList, k: number, x: Float64Array, dx: Float64Array, t: number): number {
    const step = list.kind.maxStep(list, k, x, dx, t, this.scratch);
    if (step === 0 && this.blocked === null) {
      const copy = this.blockedCopies.get(list.kind)!;
      copy.copyPair(list, k);
      this.blocked = copy;
    }
    return step;
  }

  /** CCD over the set's pairs that the step can close (see maxStep). */
  private sweepSet(set: CandidateSet, x: Float64Array, motion: Float64Array, tMax: number, closing: number): number {
    let t = tMax;
    for (const list of set.lists) {
      const { distanceRef, slack, offsets } = list;
      for (let k = 0; k < list.count; k++) {
        if (distanceRef[k] - slack[k] - offsets[k] > closing * t) continue;
        t = this.pairStep(list, k, x, motion, t);
      }
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

  /** CCD over the swept candidates of one reach (same-group pairs with relative motion, or cross-group pairs). */
  private sweep(x: Float64Array, dx: Float64Array, tMax: number, sameGroup: boolean): number {
    const bp = this.broadPhase;
    bp.findSweptCandidates(x, dx, tMax, this.maxOffset, sameGroup ? 'same-group' : 'cross-group');
    let t = tMax;
    for (const list of this.sweptPairs) {
      list.kind.collect(bp, this.mesh, null, list);
      list.fillOffsets(this.mesh);
      for (let k = 0; k < list.count; k++) t = this.pairStep(list, k, x, dx, t);
    }
    return t;
  }

  /**
   * Why the last maxStep returned 0: the first pair found already within the CCD's tolerance of contact, with its
   * distance at x. Newton's "no motion" error quotes it.
   */
  explainBlockedStep(x: Float64Array): string | undefined {
    const pair = this.blocked;
    if (pair === null) return undefined;
    const hint = `; a barrier too weak for the load lets Newton press a pair onto the CCD tolerance: raise contact.kappa (now ${this.kappa})`;
    return pair.kind.explainBlocked(this.mesh, pair, 0, x) + hint;
  }

  // ---- diagnostics ------------------------------------------------------------------------------------------

  /**
   * Active contacts at x (d < dhat + xi) with their normal force magnitudes, and the smallest gap among the
   * candidates and obstacle pairs: the distance d, less the pair's offset xi where it has one (Infinity when none
   * is within reach of the candidate sets).
   */
  activeContacts(x: Float64Array, out: ActiveContact[] | null): { count: number; minDistance: number } {
    this.ensureCandidates(x);
    const c = this.scratch;
    let count = 0;
    let min2 = Infinity;
    let minGap = Infinity; // over pairs with an offset (kept apart so that pairs without one give the same numbers)
    for (const list of this.lists) {
      const { kind, nodes, primitives, offsets } = list;
      const size = kind.size;
      for (let k = 0; k < list.count; k++) {
        const d2 = kind.distance2(list, k, x, c);
        const xi = offsets[k];
        if (xi === 0) {
          if (d2 < min2) min2 = d2;
        } else {
          const gap = Math.sqrt(d2) - xi;
          if (gap < minGap) minGap = gap;
        }
        if (d2 >= c.reach2(xi)) continue;
        count++;
        if (out) {
          const m = kind.mollifier(list, k, c);
          out.push({
            kind: kind.name,
            nodes: Array.from(nodes.subarray(size * k, size * k + size)),
            primitives: [primitives[2 * k], primitives[2 * k + 1]],
            d2,
            type: c.type,
            offset: xi,
            normalForce: -this.scale * m * offsetBarrierFirstDerivative(d2, xi, c.dhat2) * 2 * Math.sqrt(d2),
          });
        }
      }
    }
    return { count, minDistance: Math.min(Math.sqrt(min2), minGap) };
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
