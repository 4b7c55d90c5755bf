/**
 * Hyperelasticity of a tetrahedral body with linear (P1) elements: E(x) = sum_e V_e psi(F_e), where
 * F_e = Ds(x) Dm^{-1}, Ds = [x1 - x0, x2 - x0, x3 - x0] and Dm the same for the rest positions X.
 *
 * dF_rc / dx_(k+1, r) = Dm^{-1}_kc (node k+1 of the tet, coordinate r) and node 0 gets minus the sum, so the
 * element gradient is V P Dm^{-T} and a direction M of F-space maps to the vector M Dm^{-T} on nodes 1-3. The
 * stiffness is built from the material's principal-frame eigensystem (materials.ts) by a 3x3-coupled update and
 * six rank-one updates on the 9x9 block of nodes 1-3; node 0's rows follow from translation invariance (they are
 * minus the sums of the others).
 */
import type { BsrMatrix, PatternBuilder } from '../math/bsr.js';
import type { PotentialTerm } from './potential.js';
import { HessianEigensystem, type Material } from './materials.js';
import { filterEigenvalue, type EigenvalueFilter } from './eigenvalue-filter.js';
import { det3, inverse3 } from '../math/small.js';
import { svd3, type Svd3Factors } from '../math/svd3.js';
import { newThreadTermId, rangeBound, type ThreadMessage, type ThreadPool } from '../solver/threads.js';
import { materialFromLame, type MaterialModel } from './materials.js';
import { tetVolume } from '../mesh/tet-mesh.js';

// Signed volume det(Ds)/6 of a tet, re-exported for callers that work with this term.
export { tetVolume };

/** Fraction of the first inversion time the line search may go (IPC's inversion-free filter uses the same idea). */
export const INVERSION_STEP_FRACTION = 0.8;
/** A tet counts as degenerate when its volume is below this times (longest edge)^3 (a regular tet has 0.118). */
const DEGENERATE_VOLUME_RATIO = 1e-12;
const SQRT1_2 = Math.SQRT1_2;
/** A body is split over threads only with at least this many tets per thread (a hand-over costs tens of us). */
export const THREADED_MIN_TETS = 1000;
/**
 * The calling thread's range, as a fraction of an equal share: it also sums and scatters every tet's results into
 * the gradient or the Hessian (about a fifth of the work of computing them, for the Hessian).
 */
const CALLER_SHARE = 0.8;
/** The `kind` of ElasticTets' messages to worker threads. */
export const ELASTIC_TETS_THREAD_KIND = 'elastic-tets';
/** Per-tet entry of the SVD cache: F (9), then U (9), V (9) and sigma (3) of svd3(F). */
const FRAME_STRIDE = 30;

/**
 * Adds density * V_e / 4 to each node of each tet. `out` holds per-node masses (length n) or per-DOF masses
 * (length 3n, each node's mass repeated for x, y, z), as the caller prefers; n = X.length / 3.
 */
export function lumpedMass(X: Float64Array, tets: Uint32Array, density: number, out: Float64Array): void {
  const n = X.length / 3;
  const perDof = out.length === 3 * n;
  if (!perDof && out.length !== n)
    throw new Error(`lumpedMass: out has length ${out.length}, expected ${n} (per node) or ${3 * n} (per DOF)`);
  for (let e = 0; e < tets.length / 4; e++) {
    const m = (density * Math.abs(tetVolume(X, tets, e))) / 4;
    for (let a = 0; a < 4; a++) {
      const i = tets[4 * e + a];
      if (perDof) {
        out[3 * i] += m;
        out[3 * i + 1] += m;
        out[3 * i + 2] += m;
      } else out[i] += m;
    }
  }
}

/** The per-tet arrays of a body's elasticity: those a worker thread needs (constant ones are copied, the rest shared). */
interface TetArrays {
  tets: Uint32Array;
  /** Dm^{-1} per tet, 9 entries row-major. */
  dmInverse: Float64Array;
  /** Rest volume per tet. */
  restVolume: Float64Array;
  /**
   * For materials whose stress needs the SVD (corotated): each tet's last decomposition and the F it was taken at
   * (FRAME_STRIDE per tet; empty otherwise). The gradient and the Hessian at a Newton iterate see the same F, so one
   * SVD per tet serves the whole iteration (the energy needs none). A cache hit needs F equal to the bit, which makes
   * the reuse exact: svd3 is a function of F alone.
   */
  frameCache: Float64Array;
}

/**
 * The per-tet arithmetic of ElasticTets: F, the SVD cache, the energy density, the nodal forces and the stiffness.
 * The calling thread and the worker threads run this same code on the same arrays, which is what makes a threaded
 * loop give the numbers of a single thread. Scratch only: no allocation per tet.
 */
class TetKernel {
  readonly F = new Float64Array(9);
  private readonly P = new Float64Array(9);
  private readonly eigensystem = new HessianEigensystem();
  /** Dm^{-1} v_j per column j of V. */
  private readonly W = new Float64Array(9);
  /** Up to nine directions on nodes 1-3 (9 entries each) and the Hessian applied to them. */
  private readonly G = new Float64Array(81);
  private readonly Y = new Float64Array(81);
  /** The SVD of this.F (filled by principalFrame), in the eigensystem's own arrays so the Hessian copies nothing. */
  private readonly frame: Svd3Factors = { U: this.eigensystem.U, sigma: this.eigensystem.sigma, V: this.eigensystem.V };
  private readonly cached: boolean;

  constructor(
    readonly arrays: TetArrays,
    readonly material: Material,
  ) {
    this.cached = material.stressUsesSvd;
  }

  /** F of tet e at positions x into this.F; returns det F. */
  deformationGradient(x: Float64Array, e: number): number {
    const t = this.arrays.tets;
    const i0 = 3 * t[4 * e];
    const i1 = 3 * t[4 * e + 1];
    const i2 = 3 * t[4 * e + 2];
    const i3 = 3 * t[4 * e + 3];
    const D = this.arrays.dmInverse;
    const o = 9 * e;
    const F = this.F;
    for (let r = 0; r < 3; r++) {
      const x0 = x[i0 + r];
      const d1 = x[i1 + r] - x0;
      const d2 = x[i2 + r] - x0;
      const d3 = x[i3 + r] - x0;
      F[3 * r] = d1 * D[o] + d2 * D[o + 3] + d3 * D[o + 6];
      F[3 * r + 1] = d1 * D[o + 1] + d2 * D[o + 4] + d3 * D[o + 7];
      F[3 * r + 2] = d1 * D[o + 2] + d2 * D[o + 5] + d3 * D[o + 8];
    }
    return det3(F);
  }

  /** The SVD of this.F (tet e) into this.frame: from the cache when it holds this F, else computed and cached. */
  private principalFrame(e: number): Svd3Factors {
    const F = this.F;
    const c = this.arrays.frameCache;
    const o = FRAME_STRIDE * e;
    const { U, sigma, V } = this.frame;
    if (
      c[o] === F[0] && c[o + 1] === F[1] && c[o + 2] === F[2] &&
      c[o + 3] === F[3] && c[o + 4] === F[4] && c[o + 5] === F[5] &&
      c[o + 6] === F[6] && c[o + 7] === F[7] && c[o + 8] === F[8]
    ) {
      for (let k = 0; k < 9; k++) {
        U[k] = c[o + 9 + k];
        V[k] = c[o + 18 + k];
      }
      sigma[0] = c[o + 27];
      sigma[1] = c[o + 28];
      sigma[2] = c[o + 29];
      return this.frame;
    }
    svd3(F, U, sigma, V);
    for (let k = 0; k < 9; k++) {
      c[o + k] = F[k];
      c[o + 9 + k] = U[k];
      c[o + 18 + k] = V[k];
    }
    c[o + 27] = sigma[0];
    c[o + 28] = sigma[1];
    c[o + 29] = sigma[2];
    return this.frame;
  }

  /** psi(this.F) (after deformationGradient): no SVD kept, as the energy needs none (Material.energyDensity). */
  energyDensity(): number {
    return this.material.energyDensity(this.F);
  }

  /**
   * The forces w P Dm^{-T} of tet e (after deformationGradient) into out[o + 3r + k] for node k+1, coordinate r;
   * node 0 gets minus the sum over k.
   */
  forces(e: number, w: number, out: Float64Array, o: number): void {
    const P = this.P;
    if (this.cached) this.material.firstPiola(this.F, P, this.principalFrame(e));
    else this.material.firstPiola(this.F, P);
    const D = this.arrays.dmInverse;
    const d = 9 * e;
    for (let r = 0; r < 3; r++) {
      const p0 = w * P[3 * r];
      const p1 = w * P[3 * r + 1];
      const p2 = w * P[3 * r + 2];
      out[o + 3 * r] = p0 * D[d] + p1 * D[d + 1] + p2 * D[d + 2];
      out[o + 3 * r + 1] = p0 * D[d + 3] + p1 * D[d + 4] + p2 * D[d + 5];
      out[o + 3 * r + 2] = p0 * D[d + 6] + p1 * D[d + 7] + p2 * D[d + 8];
    }
  }

  /** V_e psi(F_e) into out[e] for the tets in [begin, end). */
  energyRange(x: Float64Array, begin: number, end: number, out: Float64Array): void {
    const volume = this.arrays.restVolume;
    for (let e = begin; e < end; e++) {
      this.deformationGradient(x, e);
      out[e] = volume[e] * this.energyDensity();
    }
  }

  /**
   * forces(e, scale V_e) into out[9e...] for the tets in [begin, end); returns the first tet inverted where the
   * material forbids it (then stops), or -1.
   */
  forcesRange(x: Float64Array, begin: number, end: number, scale: number, out: Float64Array): number {
    const checkInversion = this.material.blocksInversion;
    const volume = this.arrays.restVolume;
    for (let e = begin; e < end; e++) {
      const J = this.deformationGradient(x, e);
      if (checkInversion && !(J > 0)) return e;
      this.forces(e, scale * volume[e], out, 9 * e);
    }
    return -1;
  }

  /** stiffness(e) into out[81e...] for the tets in [begin, end); returns the first inverted tet as forcesRange. */
  stiffnessRange(x: Float64Array, begin: number, end: number, project: false | EigenvalueFilter, out: Float64Array): number {
    const checkInversion = this.material.blocksInversion;
    for (let e = begin; e < end; e++) {
      const J = this.deformationGradient(x, e);
      if (checkInversion && !(J > 0)) return e;
      this.stiffness(e, project, out, 81 * e);
    }
    return -1;
  }

  /**
   * Stiffness of tet e's nodes 1-3 (9x9, entry (3k + r, 3l + s) couples node k+1 coordinate r with node l+1
   * coordinate s) per unit volume, into K[ko...ko + 81), from the material's eigensystem at this.F.
   *
   * A direction u v^T of F-space maps to the 9-vector u (x) w on nodes 1-3, w = Dm^{-1} v (entry 3k + r is
   * u_r w_k). The stiffness is sum_m g_m y_m^T over the directions g_m: the three scaling directions u_i (x) w_i
   * with y = (block g)_i, and the nonzero flips and twists (u_i (x) w_j +- u_j (x) w_i)/sqrt2 with y = value * g.
   * A material with a closed form (Material.nodeStiffness) skips all this where the filter would change nothing,
   * and where it changes only flip or twist values, corrects the closed form along those directions alone
   * (correctedStiffness).
   */
  stiffness(e: number, project: false | EigenvalueFilter, K: Float64Array, ko: number): void {
    const es = this.eigensystem;
    const material = this.material;
    const D = this.arrays.dmInverse;
    const o = 9 * e;
    if (material.nodeStiffness?.(this.F, D, o, project, K, ko)) return;
    if (material.stressUsesSvd) material.hessianEigensystem(this.F, false, es, this.principalFrame(e));
    else material.hessianEigensystem(this.F, false, es);
    this.frameColumns(es.V, o);
    if (project) {
      if (material.nodeStiffness && positiveDefinite3(es.block)) {
        this.correctedStiffness(o, project, K, ko);
        return;
      }
      es.applyFilter(project);
    }
    const { U, block, pairs } = es;
    const W = this.W;
    const G = this.G;
    const Y = this.Y;
    for (let i = 0; i < 3; i++) {
      const u0 = U[i];
      const u1 = U[3 + i];
      const u2 = U[6 + i];
      for (let k = 0; k < 3; k++) {
        const wk = W[3 * i + k];
        G[9 * i + 3 * k] = u0 * wk;
        G[9 * i + 3 * k + 1] = u1 * wk;
        G[9 * i + 3 * k + 2] = u2 * wk;
      }
    }
    for (let i = 0; i < 3; i++) {
      const b0 = block[3 * i];
      const b1 = block[3 * i + 1];
      const b2 = block[3 * i + 2];
      for (let a = 0; a < 9; a++) Y[9 * i + a] = b0 * G[a] + b1 * G[9 + a] + b2 * G[18 + a];
    }
    let count = 3;
    for (let k = 0; k < 6; k++) {
      const lam = pairs[k];
      if (lam === 0) continue;
      const go = 9 * count;
      this.pairDirection(k, G, go);
      for (let a = go; a < go + 9; a++) Y[a] = lam * G[a];
      count++;
    }
    symmetricOuterSum(G, Y, count, K, ko);
  }

  /**
   * The direction of flip (k < 3) or twist (k >= 3) value k of this.eigensystem on nodes 1-3,
   * (u_i (x) w_j +- u_j (x) w_i)/sqrt2 for its pair (i, j), into g[at ... at + 9); needs this.W (frameColumns).
   */
  private pairDirection(k: number, g: Float64Array, at: number): void {
    const U = this.eigensystem.U;
    const W = this.W;
    const pair = k < 3 ? k : k - 3;
    const i = pair === 2 ? 1 : 0;
    const j = pair === 0 ? 1 : 2;
    const sign = k < 3 ? SQRT1_2 : -SQRT1_2;
    const ui0 = SQRT1_2 * U[i];
    const ui1 = SQRT1_2 * U[3 + i];
    const ui2 = SQRT1_2 * U[6 + i];
    const uj0 = sign * U[j];
    const uj1 = sign * U[3 + j];
    const uj2 = sign * U[6 + j];
    for (let n = 0; n < 3; n++) {
      const wj = W[3 * j + n];
      const wi = W[3 * i + n];
      g[at + 3 * n] = ui0 * wj + uj0 * wi;
      g[at + 3 * n + 1] = ui1 * wj + uj1 * wi;
      g[at + 3 * n + 2] = ui2 * wj + uj2 * wi;
    }
  }

  /** W = the columns Dm^{-1} v_j of tet o/9's frame V (entry 3j + k). */
  private frameColumns(V: Float64Array, o: number): void {
    const D = this.arrays.dmInverse;
    const W = this.W;
    for (let j = 0; j < 3; j++) {
      const v0 = V[j];
      const v1 = V[3 + j];
      const v2 = V[6 + j];
      W[3 * j] = D[o] * v0 + D[o + 1] * v1 + D[o + 2] * v2;
      W[3 * j + 1] = D[o + 3] * v0 + D[o + 4] * v1 + D[o + 5] * v2;
      W[3 * j + 2] = D[o + 6] * v0 + D[o + 7] * v1 + D[o + 8] * v2;
    }
  }

  /**
   * The filtered stiffness of a tet whose scaling block is positive definite (the filter leaves it alone): the exact
   * closed form (Material.nodeStiffness, no filter) plus, for each flip or twist value the filter changes, that
   * change times the outer product of its direction on the nodes. A compressed tet has one to three negative twist
   * values, so this is the closed form and at most three rank-one updates instead of the sum over all nine
   * directions. Needs this.eigensystem unfiltered and this.W (frameColumns) for the tet at this.F, Dm^{-1} at o.
   */
  private correctedStiffness(o: number, project: EigenvalueFilter, K: Float64Array, ko: number): void {
    const pairs = this.eigensystem.pairs;
    this.material.nodeStiffness!(this.F, this.arrays.dmInverse, o, false, K, ko);
    const g = this.G;
    for (let k = 0; k < 6; k++) {
      const lam = pairs[k];
      const change = filterEigenvalue(lam, project) - lam;
      if (change === 0) continue;
      this.pairDirection(k, g, 0);
      for (let a = 0; a < 9; a++) {
        const ca = change * g[a];
        const row = ko + 9 * a;
        for (let b = 0; b < 9; b++) K[row + b] += ca * g[b];
      }
    }
  }
}

/** Whether a symmetric 3x3 (row-major) is positive definite: its leading minors are positive (Sylvester). */
function positiveDefinite3(B: Float64Array): boolean {
  const m2 = B[0] * B[4] - B[1] * B[3];
  return B[0] > 0 && m2 > 0 && det3(B) > 0;
}

export class ElasticTets implements PotentialTerm {
  readonly name = 'elastic';
  /** Near a minimiser the clamped eigenvalues (compressed elements' twist modes) are what slows Newton down. */
  readonly exactNearMinimum = true;
  readonly tetCount: number;
  /** Rest volume per tet. */
  readonly restVolume: Float64Array;
  /** Bsr slots of the 16 blocks (a, b) of each tet, 16 per tet, row-major in (a, b). */
  private readonly slots: Int32Array;
  private slotsPatternId = -1;
  private readonly arrays: TetArrays;
  private kernel: TetKernel;
  // Scratch (no allocation in element loops): one tet's forces and stiffness (nodes 1-3).
  private readonly tetForces = new Float64Array(9);
  private readonly K = new Float64Array(81);
  private readonly nodeList = new Uint32Array(4);
  /** Set by useThreads: the pool and the buffers shared with its workers. */
  private threads: ThreadedTets | null = null;
  /** The energy reduced by runThreaded. */
  private energySum = 0;
  /** The DOFs of this body's nodes, [firstDof, firstDof + energyMemo.length), at the last energy(), and that energy. */
  private readonly firstDof: number;
  private readonly energyMemo: Float64Array;
  private memoEnergy = NaN;

  constructor(
    restPositions: Float64Array,
    readonly tets: Uint32Array,
    readonly material: Material,
    /** Names the body in error messages. */
    readonly label = 'elastic body',
  ) {
    if (tets.length % 4 !== 0)
      throw new Error(`ElasticTets (${label}): tets has length ${tets.length}, not a multiple of 4`);
    const nodeCount = restPositions.length / 3;
    this.tetCount = tets.length / 4;
    const restVolume = new Float64Array(this.tetCount);
    const dmInverse = new Float64Array(9 * this.tetCount);
    this.restVolume = restVolume;
    this.slots = new Int32Array(16 * this.tetCount);
    const frameCache = new Float64Array(material.stressUsesSvd ? FRAME_STRIDE * this.tetCount : 0).fill(NaN);
    this.arrays = { tets, dmInverse, restVolume, frameCache };
    this.kernel = new TetKernel(this.arrays, material);
    let lowest = nodeCount;
    let highest = -1;
    for (const i of tets) {
      if (i < lowest) lowest = i;
      if (i > highest) highest = i;
    }
    const empty = highest < 0;
    this.firstDof = empty ? 0 : 3 * lowest;
    this.energyMemo = new Float64Array(empty ? 0 : 3 * (highest + 1 - lowest));
    const X = restPositions;
    const Dm = new Float64Array(9);
    const inv = new Float64Array(9);
    for (let e = 0; e < this.tetCount; e++) {
      for (let a = 0; a < 4; a++) {
        const i = tets[4 * e + a];
        if (i >= nodeCount)
          throw new Error(`ElasticTets (${label}): tet ${e} refers to node ${i}, but there are ${nodeCount}`);
      }
      const i0 = 3 * tets[4 * e];
      let longest = 0;
      for (let k = 0; k < 3; k++) {
        const ik = 3 * tets[4 * e + k + 1];
        for (let r = 0; r < 3; r++) Dm[3 * r + k] = X[ik + r] - X[i0 + r];
      }
      for (let a = 0; a < 4; a++)
        for (let b = a + 1; b < 4; b++) {
          const ia = 3 * tets[4 * e + a];
          const ib = 3 * tets[4 * e + b];
          const dx = X[ia] - X[ib];
          const dy = X[ia + 1] - X[ib + 1];
          const dz = X[ia + 2] - X[ib + 2];
          longest = Math.max(longest, Math.sqrt(dx * dx + dy * dy + dz * dz));
        }
      const volume = det3(Dm) / 6;
      if (!(volume > 0))
        throw new Error(
          `ElasticTets (${label}): ${this.describeTet(e)} has rest volume ${volume} <= 0 ` +
            '(inverted orientation or flat); orient tets so that det[x1-x0, x2-x0, x3-x0] > 0',
        );
      if (volume < DEGENERATE_VOLUME_RATIO * longest * longest * longest)
        throw new Error(
          `ElasticTets (${label}): ${this.describeTet(e)} is degenerate: ` +
            `rest volume ${volume} for longest edge ${longest}`,
        );
      inverse3(Dm, inv);
      dmInverse.set(inv, 9 * e);
      restVolume[e] = volume;
    }
  }

  private describeTet(e: number): string {
    return `tet ${e} (nodes ${Array.from(this.tets.subarray(4 * e, 4 * e + 4)).join(', ')})`;
  }

  private inversionError(e: number, J: number, where: string): Error {
    return new Error(
      `ElasticTets.${where} (${this.label}): ${this.describeTet(e)} is inverted (det F = ${J}); ` +
        `the ${this.material.model} energy is infinite there (the line search must filter steps with maxStep)`,
    );
  }

  /** Threads the element loops run on (1 unless useThreads gave a pool and the body is large enough). */
  get threadCount(): number {
    return this.threads ? this.threads.pool.workers + 1 : 1;
  }

  /**
   * Runs the element loops on `pool`'s workers besides the calling thread (null: on the calling thread only).
   * Bodies under THREADED_MIN_TETS tets per thread stay on one thread (the hand-over would cost more than it saves).
   * Results are the same to the bit either way. The SVD cache moves to shared memory; the per-tet results take
   * 8 x (1 + 9 + 81) bytes per tet.
   */
  useThreads(pool: ThreadPool | null): void {
    if (this.threads) this.threads.pool.broadcast({ kind: 'release', id: this.threads.id });
    this.threads = null;
    if (!pool || this.tetCount < THREADED_MIN_TETS * (pool.workers + 1) || !pool.available()) return;
    const frameCache = pool.sharedFloat64(this.arrays.frameCache.length);
    frameCache.set(this.arrays.frameCache);
    this.arrays.frameCache = frameCache;
    this.kernel = new TetKernel(this.arrays, this.material);
    const threads: ThreadedTets = {
      pool,
      id: newThreadTermId(),
      x: pool.sharedFloat64(0),
      energies: pool.sharedFloat64(this.tetCount),
      forces: pool.sharedFloat64(9 * this.tetCount),
      stiffness: pool.sharedFloat64(81 * this.tetCount),
      failed: pool.sharedInt32(pool.workers),
    };
    this.threads = threads;
    const { tets, dmInverse, restVolume } = this.arrays;
    pool.broadcast({
      kind: ELASTIC_TETS_THREAD_KIND, id: threads.id, model: this.material.model, mu: this.material.mu, lambda: this.material.lambda,
      tets, dmInverse, restVolume, frameCache, energies: threads.energies, forces: threads.forces, stiffness: threads.stiffness, failed: threads.failed,
    });
  }

  /**
   * Runs op on every thread's share of the tets at x and reduces the per-tet results into `target` (g or H's values;
   * the energy into this.energySum) in tet order, as one thread does. The calling thread takes the first range and
   * reduces it while the workers still compute, then the rest; its range is a little shorter (CALLER_SHARE) for
   * that work. Returns the first tet that failed (inverted), or -1 (then the reduction is complete).
   */
  private runThreaded(threads: ThreadedTets, op: TetOp, x: Float64Array, scale: number, project: false | EigenvalueFilter, target: Float64Array): number {
    const { pool } = threads;
    if (threads.x.length !== x.length) {
      threads.x = pool.sharedFloat64(x.length);
      pool.broadcast({ kind: ELASTIC_TETS_THREAD_KIND, id: threads.id, op: 'positions', x: threads.x });
    }
    threads.x.set(x);
    const count = this.tetCount;
    const workers = pool.workers;
    const own = Math.floor((count * CALLER_SHARE) / (workers + 1));
    const tasks: ThreadMessage[] = [];
    for (let w = 0; w < workers; w++) {
      const begin = own + rangeBound(count - own, workers, w);
      const end = own + rangeBound(count - own, workers, w + 1);
      tasks.push({ kind: ELASTIC_TETS_THREAD_KIND, id: threads.id, op, slot: w, begin, end, scale, project });
    }
    this.energySum = 0;
    pool.start(tasks);
    let failed = -1;
    try {
      failed = runTetTask(this.kernel, threads.x, op, 0, own, scale, project, threads);
      if (failed < 0) this.reduce(threads, op, 0, own, scale, target);
    } finally {
      pool.wait();
    }
    for (let w = 0; w < workers && failed < 0; w++) failed = threads.failed[w];
    if (failed < 0) this.reduce(threads, op, own, count, scale, target);
    return failed;
  }

  /** Adds the per-tet results of tets [begin, end) of op into target (or this.energySum), in tet order. */
  private reduce(threads: ThreadedTets, op: TetOp, begin: number, end: number, scale: number, target: Float64Array): void {
    if (op === 'energy') {
      const energies = threads.energies;
      let total = this.energySum;
      for (let e = begin; e < end; e++) total += energies[e];
      this.energySum = total;
    } else if (op === 'forces') {
      for (let e = begin; e < end; e++) this.scatterForces(e, threads.forces, 9 * e, target);
    } else {
      const volume = this.restVolume;
      for (let e = begin; e < end; e++) this.scatter(e, scale * volume[e], target, threads.stiffness, 81 * e);
    }
  }

  /**
   * The elastic energy at x. A step asks for it at the same positions several times (the integrator's energy
   * bookkeeping, the output records, the next step's start), so the last positions of this body's nodes and the
   * energy there are kept: a call at positions equal to the bit returns that energy without the element loop.
   */
  energy(x: Float64Array): number {
    const memo = this.energyMemo;
    const from = this.firstDof;
    let d = 0;
    while (d < memo.length && memo[d] === x[from + d]) d++;
    if (d === memo.length && !Number.isNaN(this.memoEnergy)) return this.memoEnergy;
    const total = this.energyLoop(x);
    memo.set(x.subarray(from, from + memo.length));
    this.memoEnergy = total;
    return total;
  }

  private energyLoop(x: Float64Array): number {
    const kernel = this.kernel;
    const volume = this.restVolume;
    const threads = this.threads;
    if (threads) {
      this.runThreaded(threads, 'energy', x, 1, false, volume);
      return this.energySum;
    }
    let total = 0;
    for (let e = 0; e < this.tetCount; e++) {
      kernel.deformationGradient(x, e);
      total += volume[e] * kernel.energyDensity();
    }
    return total;
  }

  /** The energy density psi(F) (J/m^3 of rest volume) of each tet at x into out (length tetCount), for output frames. */
  energyDensities(x: Float64Array, out: Float64Array): void {
    const kernel = this.kernel;
    for (let e = 0; e < this.tetCount; e++) {
      kernel.deformationGradient(x, e);
      out[e] = kernel.energyDensity();
    }
  }

  addGradient(x: Float64Array, scale: number, g: Float64Array): void {
    const kernel = this.kernel;
    const threads = this.threads;
    if (threads) {
      const failed = this.runThreaded(threads, 'forces', x, scale, false, g);
      if (failed >= 0) throw this.inversionError(failed, kernel.deformationGradient(x, failed), 'addGradient');
      return;
    }
    const checkInversion = this.material.blocksInversion;
    const volume = this.restVolume;
    const f = this.tetForces;
    for (let e = 0; e < this.tetCount; e++) {
      const J = kernel.deformationGradient(x, e);
      if (checkInversion && !(J > 0)) throw this.inversionError(e, J, 'addGradient');
      kernel.forces(e, scale * volume[e], f, 0);
      this.scatterForces(e, f, 0, g);
    }
  }

  /** Adds tet e's forces f[o...o + 9) (nodes 1-3, TetKernel.forces) and node 0's, minus their sum, into g. */
  private scatterForces(e: number, f: Float64Array, o: number, g: Float64Array): void {
    const t = this.tets;
    const i0 = 3 * t[4 * e];
    const i1 = 3 * t[4 * e + 1];
    const i2 = 3 * t[4 * e + 2];
    const i3 = 3 * t[4 * e + 3];
    for (let r = 0; r < 3; r++) {
      const f1 = f[o + 3 * r];
      const f2 = f[o + 3 * r + 1];
      const f3 = f[o + 3 * r + 2];
      g[i1 + r] += f1;
      g[i2 + r] += f2;
      g[i3 + r] += f3;
      g[i0 + r] -= f1 + f2 + f3;
    }
  }

  addPattern(builder: PatternBuilder): void {
    for (let e = 0; e < this.tetCount; e++) builder.addClique(this.tets.subarray(4 * e, 4 * e + 4));
  }

  bindPattern(H: BsrMatrix): void {
    const pattern = H.pattern;
    if (pattern.remapSlots(this.slotsPatternId, this.slots)) {
      this.slotsPatternId = pattern.id;
      return;
    }
    const nodes = this.nodeList;
    for (let e = 0; e < this.tetCount; e++) {
      for (let a = 0; a < 4; a++) nodes[a] = this.tets[4 * e + a];
      pattern.elementSlots(nodes, this.slots, 16 * e);
    }
    this.slotsPatternId = pattern.id;
  }

  /** With projectPsd, `filter` says what becomes of each tet's negative eigenvalues (clamped by default). */
  addHessian(x: Float64Array, scale: number, H: BsrMatrix, projectPsd: boolean, filter: EigenvalueFilter = 'clamp'): void {
    if (this.slotsPatternId !== H.pattern.id) this.bindPattern(H);
    const project = projectPsd ? filter : false;
    const Hv = H.values;
    const kernel = this.kernel;
    const volume = this.restVolume;
    const threads = this.threads;
    if (threads) {
      const failed = this.runThreaded(threads, 'stiffness', x, scale, project, Hv);
      if (failed >= 0) throw this.inversionError(failed, kernel.deformationGradient(x, failed), 'addHessian');
      return;
    }
    const checkInversion = this.material.blocksInversion;
    const K = this.K;
    for (let e = 0; e < this.tetCount; e++) {
      const J = kernel.deformationGradient(x, e);
      if (checkInversion && !(J > 0)) throw this.inversionError(e, J, 'addHessian');
      kernel.stiffness(e, project, K, 0);
      this.scatter(e, scale * volume[e], Hv, K, 0);
    }
  }

  /**
   * Adds w * K (tet e's stiffness of nodes 1-3, K[kOffset...kOffset + 81)) into H: blocks (a, b) of nodes 1-3, then
   * node 0's blocks from translation invariance: block (a, 0) is minus the row sum C_a = sum_b K(a, b), block
   * (0, a) its transpose, block (0, 0) = sum_a C_a.
   */
  private scatter(e: number, w: number, Hv: Float64Array, K: Float64Array, kOffset: number): void {
    const slots = this.slots;
    const so = 16 * e;
    let h0 = 0;
    let h1 = 0;
    let h2 = 0;
    let h3 = 0;
    let h4 = 0;
    let h5 = 0;
    let h6 = 0;
    let h7 = 0;
    let h8 = 0;
    for (let a = 1; a < 4; a++) {
      let c0 = 0;
      let c1 = 0;
      let c2 = 0;
      let c3 = 0;
      let c4 = 0;
      let c5 = 0;
      let c6 = 0;
      let c7 = 0;
      let c8 = 0;
      for (let b = 1; b < 4; b++) {
        const base = 9 * slots[so + 4 * a + b];
        const ko = kOffset + 27 * (a - 1) + 3 * (b - 1);
          const k0 = ko + 0;
          const v0 = w * K[k0 + 0];
          const v1 = w * K[k0 + 1];
          const v2 = w * K[k0 + 2];
          const k1 = ko + 9;
          const v3 = w * K[k1 + 0];
          const v4 = w * K[k1 + 1];
          const v5 = w * K[k1 + 2];
          const k2 = ko + 18;
          const v6 = w * K[k2 + 0];
          const v7 = w * K[k2 + 1];
          const v8 = w * K[k2 + 2];
          Hv[base + 0] += v0;
          Hv[base + 1] += v1;
          Hv[base + 2] += v2;
          Hv[base + 3] += v3;
          Hv[base + 4] += v4;
          Hv[base + 5] += v5;
          Hv[base + 6] += v6;
          Hv[base + 7] += v7;
          Hv[base + 8] += v8;
          c0 += v0;
          c1 += v1;
          c2 += v2;
          c3 += v3;
          c4 += v4;
          c5 += v5;
          c6 += v6;
          c7 += v7;
          c8 += v8;
      }
      const baseA0 = 9 * slots[so + 4 * a];
      const base0A = 9 * slots[so + a];
        Hv[baseA0 + 0] -= c0;
        Hv[baseA0 + 1] -= c1;
        Hv[baseA0 + 2] -= c2;
        Hv[baseA0 + 3] -= c3;
        Hv[baseA0 + 4] -= c4;
        Hv[baseA0 + 5] -= c5;
        Hv[baseA0 + 6] -= c6;
        Hv[baseA0 + 7] -= c7;
        Hv[baseA0 + 8] -= c8;
        Hv[base0A + 0] -= c0;
        Hv[base0A + 3] -= c1;
        Hv[base0A + 6] -= c2;
        Hv[base0A + 1] -= c3;
        Hv[base0A + 4] -= c4;
        Hv[base0A + 7] -= c5;
        Hv[base0A + 2] -= c6;
        Hv[base0A + 5] -= c7;
        Hv[base0A + 8] -= c8;
      h0 += c0;
      h1 += c1;
      h2 += c2;
      h3 += c3;
      h4 += c4;
      h5 += c5;
      h6 += c6;
      h7 += c7;
      h8 += c8;
    }
    const base00 = 9 * slots[so];
        Hv[base00 + 0] += h0;
        Hv[base00 + 1] += h1;
        Hv[base00 + 2] += h2;
        Hv[base00 + 3] += h3;
        Hv[base00 + 4] += h4;
        Hv[base00 + 5] += h5;
        Hv[base00 + 6] += h6;
        Hv[base00 + 7] += h7;
        Hv[base00 + 8] += h8;
  }

  /**
   * For log-J materials: the largest t in (0, 1] such that every tet keeps det F > 0 along x + s dx, s in [0, t]:
   * 0.8 times the first positive root of the cubic det(Ds(x) + s Ds(dx)), or 1. Returns 0 when x itself has an
   * inverted tet. Materials without a barrier get 1 (their energy is finite for inverted tets).
   */
  maxStep(x: Float64Array, dx: Float64Array): number {
    if (!this.material.blocksInversion) return 1;
    const limit = 1 / INVERSION_STEP_FRACTION;
    let first = limit;
    for (let e = 0; e < this.tetCount; e++) {
      const root = firstInversionTime(x, dx, this.tets, e, first);
      if (root < first) first = root;
      if (first <= 0) return 0;
    }
    return Math.min(1, INVERSION_STEP_FRACTION * first);
  }

  /** Number of tets with det F <= 0 at x (for invariant checks). */
  countInverted(x: Float64Array): number {
    let count = 0;
    for (let e = 0; e < this.tetCount; e++) if (!(tetVolume(x, this.tets, e) > 0)) count++;
    return count;
  }
}

/**
 * First s in (0, sMax] where f(s) = det(Ds(x) + s Ds(dx)) reaches 0, or sMax when it does not; 0 when f(0) <= 0.
 * f is a cubic; its critical points split [0, sMax] into monotone pieces, and the first piece whose end is <= 0
 * holds the root, found by bisection. The value returned has f > 0 (the lower end of the final bracket).
 */
function firstInversionTime(x: Float64Array, dx: Float64Array, tets: Uint32Array, e: number, sMax: number): number {
  const i0 = 3 * tets[4 * e];
  const i1 = 3 * tets[4 * e + 1];
  const i2 = 3 * tets[4 * e + 2];
  const i3 = 3 * tets[4 * e + 3];
  // A = Ds(x) columns a, b, c; B = Ds(dx) columns p, q, r.
  const a0 = x[i1] - x[i0];
  const a1 = x[i1 + 1] - x[i0 + 1];
  const a2 = x[i1 + 2] - x[i0 + 2];
  const b0 = x[i2] - x[i0];
  const b1 = x[i2 + 1] - x[i0 + 1];
  const b2 = x[i2 + 2] - x[i0 + 2];
  const c0 = x[i3] - x[i0];
  const c1 = x[i3 + 1] - x[i0 + 1];
  const c2 = x[i3 + 2] - x[i0 + 2];
  const p0 = dx[i1] - dx[i0];
  const p1 = dx[i1 + 1] - dx[i0 + 1];
  const p2 = dx[i1 + 2] - dx[i0 + 2];
  const q0 = dx[i2] - dx[i0];
  const q1 = dx[i2 + 1] - dx[i0 + 1];
  const q2 = dx[i2 + 2] - dx[i0 + 2];
  const r0 = dx[i3] - dx[i0];
  const r1 = dx[i3 + 1] - dx[i0 + 1];
  const r2 = dx[i3 + 2] - dx[i0 + 2];
  // det[a + s p, b + s q, c + s r] is trilinear in the columns: collect it by powers of s.
  const k0 = triple(a0, a1, a2, b0, b1, b2, c0, c1, c2);
  if (!(k0 > 0)) return 0;
  const k1 =
    triple(p0, p1, p2, b0, b1, b2, c0, c1, c2) +
    triple(a0, a1, a2, q0, q1, q2, c0, c1, c2) +
    triple(a0, a1, a2, b0, b1, b2, r0, r1, r2);
  const k2 =
    triple(a0, a1, a2, q0, q1, q2, r0, r1, r2) +
    triple(p0, p1, p2, b0, b1, b2, r0, r1, r2) +
    triple(p0, p1, p2, q0, q1, q2, c0, c1, c2);
  const k3 = triple(p0, p1, p2, q0, q1, q2, r0, r1, r2);
  // Most tets are far from inverting: f(s) >= k0 - |k1| s - |k2| s^2 - |k3| s^3 > 0 on [0, sMax] (kept a margin above
  // round-off) settles them without the critical points.
  if (k0 - sMax * (Math.abs(k1) + sMax * (Math.abs(k2) + sMax * Math.abs(k3))) > 1e-9 * k0) return sMax;

  // Critical points: roots of 3 k3 s^2 + 2 k2 s + k1 inside (0, sMax), sorted.
  let c1s = sMax;
  let c2s = sMax;
  const qa = 3 * k3;
  const qb = 2 * k2;
  const qc = k1;
  if (qa === 0) {
    if (qb !== 0) c1s = -qc / qb;
  } else {
    const disc = qb * qb - 4 * qa * qc;
    if (disc >= 0) {
      const qq = -0.5 * (qb + (qb >= 0 ? 1 : -1) * Math.sqrt(disc));
      c1s = qq / qa;
      c2s = qq !== 0 ? qc / qq : c1s;
    }
  }
  if (!(c1s > 0 && c1s < sMax)) c1s = sMax;
  if (!(c2s > 0 && c2s < sMax)) c2s = sMax;
  if (c2s < c1s) {
    const tmp = c1s;
    c1s = c2s;
    c2s = tmp;
  }
  let lo = 0;
  for (let piece = 0; piece < 3; piece++) {
    const hi = piece === 0 ? c1s : piece === 1 ? c2s : sMax;
    if (hi <= lo) continue;
    if (cubic(k0, k1, k2, k3, hi) > 0) {
      lo = hi;
      continue;
    }
    // f(lo) > 0 >= f(hi): bisect to relative precision.
    let h = hi;
    for (let it = 0; it < 200 && h - lo > 1e-14 * h; it++) {
      const mid = 0.5 * (lo + h);
      if (cubic(k0, k1, k2, k3, mid) > 0) lo = mid;
      else h = mid;
    }
    return lo;
  }
  return sMax;
}

/** det[u, v, w] = u . (v x w). */
function triple(
  ux: number,
  uy: number,
  uz: number,
  vx: number,
  vy: number,
  vz: number,
  wx: number,
  wy: number,
  wz: number,
): number {
  return ux * (vy * wz - vz * wy) + uy * (vz * wx - vx * wz) + uz * (vx * wy - vy * wx);
}

function cubic(k0: number, k1: number, k2: number, k3: number, s: number): number {
  return k0 + s * (k1 + s * (k2 + s * k3));
}

/**
 * K = sum_{m < count} G_m Y_m^T (into K[ko...ko + 81)) for 9-vectors G_m, Y_m (rows of G and Y) whose sum is known to be symmetric: the
 * upper triangle is accumulated and mirrored. Written out with 45 scalar accumulators because V8 keeps them in
 * registers and drops the bounds checks and index arithmetic: about 3x faster than the loop nest, and this is
 * the innermost kernel of every Newton iteration.
 */
function symmetricOuterSum(G: Float64Array, Y: Float64Array, count: number, K: Float64Array, ko: number): void {
  let k00 = 0, k01 = 0, k02 = 0, k03 = 0, k04 = 0, k05 = 0, k06 = 0, k07 = 0, k08 = 0;
  let k11 = 0, k12 = 0, k13 = 0, k14 = 0, k15 = 0, k16 = 0, k17 = 0, k18 = 0;
  let k22 = 0, k23 = 0, k24 = 0, k25 = 0, k26 = 0, k27 = 0, k28 = 0;
  let k33 = 0, k34 = 0, k35 = 0, k36 = 0, k37 = 0, k38 = 0;
  let k44 = 0, k45 = 0, k46 = 0, k47 = 0, k48 = 0;
  let k55 = 0, k56 = 0, k57 = 0, k58 = 0;
  let k66 = 0, k67 = 0, k68 = 0;
  let k77 = 0, k78 = 0;
  let k88 = 0;
  for (let m = 0; m < count; m++) {
    const o = 9 * m;
    const g0 = G[o + 0];
    const g1 = G[o + 1];
    const g2 = G[o + 2];
    const g3 = G[o + 3];
    const g4 = G[o + 4];
    const g5 = G[o + 5];
    const g6 = G[o + 6];
    const g7 = G[o + 7];
    const g8 = G[o + 8];
    const y0 = Y[o + 0];
    const y1 = Y[o + 1];
    const y2 = Y[o + 2];
    const y3 = Y[o + 3];
    const y4 = Y[o + 4];
    const y5 = Y[o + 5];
    const y6 = Y[o + 6];
    const y7 = Y[o + 7];
    const y8 = Y[o + 8];
    k00 += g0 * y0;
    k01 += g0 * y1;
    k02 += g0 * y2;
    k03 += g0 * y3;
    k04 += g0 * y4;
    k05 += g0 * y5;
    k06 += g0 * y6;
    k07 += g0 * y7;
    k08 += g0 * y8;
    k11 += g1 * y1;
    k12 += g1 * y2;
    k13 += g1 * y3;
    k14 += g1 * y4;
    k15 += g1 * y5;
    k16 += g1 * y6;
    k17 += g1 * y7;
    k18 += g1 * y8;
    k22 += g2 * y2;
    k23 += g2 * y3;
    k24 += g2 * y4;
    k25 += g2 * y5;
    k26 += g2 * y6;
    k27 += g2 * y7;
    k28 += g2 * y8;
    k33 += g3 * y3;
    k34 += g3 * y4;
    k35 += g3 * y5;
    k36 += g3 * y6;
    k37 += g3 * y7;
    k38 += g3 * y8;
    k44 += g4 * y4;
    k45 += g4 * y5;
    k46 += g4 * y6;
    k47 += g4 * y7;
    k48 += g4 * y8;
    k55 += g5 * y5;
    k56 += g5 * y6;
    k57 += g5 * y7;
    k58 += g5 * y8;
    k66 += g6 * y6;
    k67 += g6 * y7;
    k68 += g6 * y8;
    k77 += g7 * y7;
    k78 += g7 * y8;
    k88 += g8 * y8;
  }
  K[ko + 0] = k00;
  K[ko + 1] = K[ko + 9] = k01;
  K[ko + 2] = K[ko + 18] = k02;
  K[ko + 3] = K[ko + 27] = k03;
  K[ko + 4] = K[ko + 36] = k04;
  K[ko + 5] = K[ko + 45] = k05;
  K[ko + 6] = K[ko + 54] = k06;
  K[ko + 7] = K[ko + 63] = k07;
  K[ko + 8] = K[ko + 72] = k08;
  K[ko + 10] = k11;
  K[ko + 11] = K[ko + 19] = k12;
  K[ko + 12] = K[ko + 28] = k13;
  K[ko + 13] = K[ko + 37] = k14;
  K[ko + 14] = K[ko + 46] = k15;
  K[ko + 15] = K[ko + 55] = k16;
  K[ko + 16] = K[ko + 64] = k17;
  K[ko + 17] = K[ko + 73] = k18;
  K[ko + 20] = k22;
  K[ko + 21] = K[ko + 29] = k23;
  K[ko + 22] = K[ko + 38] = k24;
  K[ko + 23] = K[ko + 47] = k25;
  K[ko + 24] = K[ko + 56] = k26;
  K[ko + 25] = K[ko + 65] = k27;
  K[ko + 26] = K[ko + 74] = k28;
  K[ko + 30] = k33;
  K[ko + 31] = K[ko + 39] = k34;
  K[ko + 32] = K[ko + 48] = k35;
  K[ko + 33] = K[ko + 57] = k36;
  K[ko + 34] = K[ko + 66] = k37;
  K[ko + 35] = K[ko + 75] = k38;
  K[ko + 40] = k44;
  K[ko + 41] = K[ko + 49] = k45;
  K[ko + 42] = K[ko + 58] = k46;
  K[ko + 43] = K[ko + 67] = k47;
  K[ko + 44] = K[ko + 76] = k48;
  K[ko + 50] = k55;
  K[ko + 51] = K[ko + 59] = k56;
  K[ko + 52] = K[ko + 68] = k57;
  K[ko + 53] = K[ko + 77] = k58;
  K[ko + 60] = k66;
  K[ko + 61] = K[ko + 69] = k67;
  K[ko + 62] = K[ko + 78] = k68;
  K[ko + 70] = k77;
  K[ko + 71] = K[ko + 79] = k78;
  K[ko + 80] = k88;
}

/** An ElasticTets' worker threads and the buffers it shares with them. */
interface ThreadedTets {
  pool: ThreadPool;
  id: number;
  /** The positions the threads read (copied in before each task). */
  x: Float64Array;
  /** Per-tet results: V psi, the forces of nodes 1-3 (9), the stiffness of nodes 1-3 (81). */
  energies: Float64Array;
  forces: Float64Array;
  stiffness: Float64Array;
  /** Per worker, the first tet its last task found inverted, or -1. */
  failed: Int32Array;
}

type TetOp = 'energy' | 'forces' | 'stiffness';

/** Runs one thread's share [begin, end) of op; returns the first failed tet or -1. */
function runTetTask(
  kernel: TetKernel,
  x: Float64Array,
  op: TetOp,
  begin: number,
  end: number,
  scale: number,
  project: false | EigenvalueFilter,
  out: { energies: Float64Array; forces: Float64Array; stiffness: Float64Array },
): number {
  if (op === 'energy') {
    kernel.energyRange(x, begin, end, out.energies);
    return -1;
  }
  if (op === 'forces') return kernel.forcesRange(x, begin, end, scale, out.forces);
  if (op === 'stiffness') return kernel.stiffnessRange(x, begin, end, project, out.stiffness);
  throw new Error(`ElasticTets: unknown thread task '${String(op)}'`);
}

/**
 * A worker thread's side of an ElasticTets (thread-tasks.ts calls this with the setup message): rebuilds the
 * material and the kernel on the shared arrays and returns the task handler.
 */
export function elasticTetsWorker(setup: ThreadMessage): (task: ThreadMessage) => void {
  const m = setup as unknown as {
    model: MaterialModel; mu: number; lambda: number; tets: Uint32Array; dmInverse: Float64Array; restVolume: Float64Array;
    frameCache: Float64Array; energies: Float64Array; forces: Float64Array; stiffness: Float64Array; failed: Int32Array;
  };
  const kernel = new TetKernel({ tets: m.tets, dmInverse: m.dmInverse, restVolume: m.restVolume, frameCache: m.frameCache }, materialFromLame(m.model, m.mu, m.lambda));
  let x: Float64Array = new Float64Array(0);
  return (task) => {
    if (task.op === 'positions') {
      x = task.x as Float64Array;
      return;
    }
    const t = task as unknown as { op: TetOp; slot: number; begin: number; end: number; scale: number; project: false | EigenvalueFilter };
    m.failed[t.slot] = runTetTask(kernel, x, t.op, t.begin, t.end, t.scale, t.project, m);
  };
}
