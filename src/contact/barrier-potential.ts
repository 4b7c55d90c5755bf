import type { PotentialTerm } from '../energies/potential.js';
import type { BsrMatrix, BsrPattern, PatternBuilder } from '../math/bsr.js';
import { offsetBarrierFirstDerivative } from './barrier.js';
import { CandidateSet, relativeMotionBound } from './candidate-set.js';
import { ccdDefaults } from './ccd.js';
import { SpatialHashBroadPhase } from './broad-phase.js';
import type { CollisionMesh } from './collision-mesh.js';
import { type ActiveContact, type ObstaclePairKind, type PairHessian, type PairKind, PairScratch } from './pairs/pair-kind.js';
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
  /** Candidate-set builds (the broad phase, at a point or along a Newton step), wherever they happen. */
  proximity: number;
  /** The rest of the line-search filters: narrow-phase CCD and the checks that decide which pairs need it. */
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
 * across bodies, reused while the vertices stay near where they were found, and built along a Newton step when its
 * line-search filter needs more than they hold) and one per obstacle kind (every free
 * vertex with every plane, fixed). Every loop here goes list by list, so within a list one kind's kernel runs.
 * Blocks of pairs across bodies (or far apart in one body) are not in the elastic Hessian pattern: `patternStale`
 * tells the incremental potential to rebuild its pattern when such a pair becomes active.
 *
 * Contact offsets (Codim-IPC thickness; CollisionGroup.contactOffset): a pair with offset xi has its barrier on
 * d - xi (pair kinds), so it is active below xi + dhat: the candidate sets reach dhat plus the largest pair offset,
 * and the line-search filter keeps every pair more than its xi apart.
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
    this.blockedCopies = new Map([...SURFACE_PAIR_KINDS, ...OBSTACLE_PAIR_KINDS].map((kind) => [kind, new PairList<PairKind>(kind)]));
  }

  /** kappa / dhat^2: the factor in front of b(d^2; dhat^2). */
  private get scale(): number {
    return this.kappa / (this.dhat * this.dhat);
  }

  // ---- candidates and pattern -------------------------------------------------------------------------------

  private ensureCandidates(x: Float64Array): void {
    for (const set of this.sets) if (!set.update(x)) this.rebuildSet(set, x, null, 0);
  }

  /** Rebuilds a set at x, or along the step x .. x + t dx when dx is given, and prepares it for x. */
  private rebuildSet(set: CandidateSet, x: Float64Array, dx: Float64Array | null, t: number): void {
    const t0 = performance.now();
    if (dx === null) set.rebuild(x, this.broadPhase);
    else set.rebuildAlong(x, dx, t, this.broadPhase);
    if (this.boundPattern) set.markCovered(this.boundPattern);
    set.update(x);
    this.timing.proximity += performance.now() - t0;
  }

  /** Candidate-set builds so far (each a broad phase over the surfaces). */
  get candidateBuilds(): number {
    let n = 0;
    for (const set of this.sets) n += set.builds;
    return n;
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
   * Couplings of the active pairs (closer than dhat plus their offset) at the last x given to patternStale. Not
   * also those within 2 dhat: how many of them a set holds depends on how it was built (one built along a Newton
   * step holds more), and their blocks made the dice's factorizations 22 % dearer over their roll. Grown from the
   * bound pattern (builder.base), also those of every pair it had: blocks stay, so a pair
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
          const reach = this.dhat + offsets[k];
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
   * first (closed forms, cheap, and a shorter t leaves less to check), then additive CCD for the candidate sets'
   * surface pairs. Pairs inside one body are swept in the body's own frame (its mean displacement removed), which
   * keeps a fast-moving body's boxes small.
   */
  maxStep(x: Float64Array, dx: Float64Array, limit = 1): number {
    const t0 = performance.now();
    const proximity0 = this.timing.proximity;
    this.blocked = null;
    if (!(limit > 0)) return 0; // held by another term already (which explains it)
    let t = Math.min(1, limit);
    for (const list of this.obstaclePairs) {
      for (let k = 0; k < list.count; k++) t = this.pairStep(list, k, x, dx, t);
    }
    for (const set of this.sets) {
      // Only the set's pairs can touch when the pairs outside it are far enough apart for the step (coversStep, body
      // by body). Otherwise the set is built again along this step: then it also holds every pair the line search's
      // trial points (on this step) can bring within reach, so their energies need no other broad phase.
      const motion = set.relativeMotion(dx); // rebuildAlong makes the same again
      if (!set.update(x) || !set.coversStep(motion, t, this.maxOffset)) this.rebuildSet(set, x, dx, t);
      t = Math.min(t, this.sweepSet(set, x, motion, t, 2 * set.largestMotion(motion)));
    }
    this.timing.ccd += performance.now() - t0 - (this.timing.proximity - proximity0);
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

  /**
   * CCD over the set's pairs that the step can close. A pair's distance now is at least distanceRef - slack, and a
   * step of t closes it by at most t times the largest relative motion of a node of its first primitive against a
   * node of its second (every point of a primitive moves by a convex combination of its nodes' motions): at most
   * `closing` (twice the largest vertex motion), a bound checked first because it costs nothing per pair, and
   * often far less (a spinning body: nearby nodes move alike), which saves the CCD of most close pairs.
   */
  private sweepSet(set: CandidateSet, x: Float64Array, motion: Float64Array, tMax: number, closing: number): number {
    // The CCD counts a pair within its tolerance as touching (relative to the pair's size and motion, at most twice
    // the largest coordinate magnitude): a skipped pair must stay farther than that, or the next filter query would
    // find it already in contact.
    const tolerance = 2 * ccdDefaults.relativeTolerance * set.largestCoordinate(x, motion, tMax);
    let t = tMax;
    for (const list of set.lists) {
      const { distanceRef, slack, offsets, nodes } = list;
      const { size, split } = list.kind;
      for (let k = 0; k < list.count; k++) {
        const gap = distanceRef[k] - slack[k] - offsets[k] - tolerance;
        if (gap > closing * t || gap > t * relativeMotionBound(motion, nodes, size * k, split, size)) continue;
        t = this.pairStep(list, k, x, motion, t);
      }
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

