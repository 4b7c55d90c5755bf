/**
 * Conjugate gradient preconditioned by a lagged sparse Cholesky factor.
 *
 * Newton matrices change little from one Newton iteration to the next, and often from one time step to the next.
 * A factor of an earlier matrix is then an excellent preconditioner for the current one: PCG converges in a few
 * iterations, each a sparse product plus two triangular solves, much cheaper than a new factorisation. The factor
 * is renewed when it stops paying: when a solve needs more than `refactorAfter` iterations (the matrix drifted),
 * or when the pattern changes. (Trying the old factor on a grown pattern first was measured on the bunny splash's
 * landing, steps 16-17: 68 instead of 74 factorizations, but 155 instead of 107 CG iterations and no less time; new
 * contact blocks are stiff.) With a fresh factor the first iteration is an exact solve, so this is never worse than
 * factoring every time by more than one product.
 *
 * The preconditioner's solves read a float32 copy of the factor (LdltSolver's compactCopy): a solve is bound by
 * memory bandwidth, so half the bytes make it about 1.5x faster, and the rounded factor is as good a preconditioner.
 * The exact solve with a fresh factor uses the float64 one, so a run that refactors every time (as `ldlt`) gives
 * the same result to round-off.
 *
 * Between renewals the factor is corrected for changes confined to a few diagonal blocks (DiagonalCorrection): on a
 * body resting in contact those are nearly all the change, and the barrier's stiffness swings enough from step to
 * step to make the plain old factor stale every second or third solve.
 *
 * Bodies that turn turn their Hessians with them (group-turns.ts): given the positions each matrix was assembled at,
 * and where the bodies have turned by more than TURN_ANGLE since the factorization, the preconditioner is the old
 * factor turned by each body's fitted rotation, Q (L D L^T)^-1 Q^T. (The diagonal correction is not used on such
 * solves: it measures changes against the unturned matrix.) On the rotating cubes, which turn 0.5 rad a step, this
 * keeps one factor for many steps where the plain one failed at the first solve of each.
 *
 * A failed attempt (PCG gave up and the solve refactored) costs about one factorisation. When the matrix changes a
 * lot from one Newton iteration to the next (a body landing in a pile: new contacts every iteration), attempts keep
 * failing, so after a failure the next 1, 2, 4, then 8 solves refactor at once, until an attempt succeeds again.
 */
import type { BsrMatrix, BsrPattern } from './bsr.js';
import { DiagonalCorrection } from './diagonal-correction.js';
import type { GroupTurns } from './group-turns.js';
import { LdltSolver, type LdltSymbolic } from './ldlt.js';
import type { LinearSolveStats, LinearSolver, LinearSolverTiming } from './linear-solver.js';

export interface LaggedCholeskyOptions {
  /** Relative residual |r| <= tolerance |b| (default 1e-4, as plain PCG: Newton needs a descent direction, not an exact one). */
  tolerance?: number;
  /** Renew the factor for the next solve when this one took more iterations (at least; default 4). */
  refactorAfter?: number;
  /** Give up on the old factor, refactor and solve again, past this many iterations (at most; default 40). */
  maxIterations?: number;
  /** A factorization is made only when this accepts its analysis (AutoLinearSolver's limits); see trySolve. */
  accept?: (sym: LdltSymbolic) => boolean;
  /** Correct the old factor for changed diagonal blocks (DiagonalCorrection; default true). */
  diagonalCorrection?: boolean;
  /** The bodies as node groups, to turn the old factor with them (see the class comment; default: no turning). */
  turns?: GroupTurns;
}

/**
 * Past this rotation of some body since the factorization (radians), the factor is turned with the bodies. Below
 * it the turn changes the matrix less than what else changes between Newton iterations (a flying bunny turns
 * 0.015-0.03 rad an iteration, and a turned factor did not help it, README stop 34), and the diagonal correction
 * keeps working.
 */
const TURN_ANGLE = 0.05;

/** Measured (factor time / iteration time) / (flops / nnz(L)); see limits(). */
const ITERATIONS_PER_FLOP_RATIO = 0.06;

/**
 * The diagonal correction makes new columns only once this many solves in a row had the same pattern: where
 * contact pairs come and go every few Newton iterations (a tumbling, self-touching bunny) every new pattern
 * renews the factor anyway, and the columns would be wasted solves.
 */
const SETTLED_PATTERN = 8;

/** pcg's result when it met p^T A p <= 0. */
const NOT_POSITIVE = -2;

/** Most solves that refactor without trying the old factor after failed attempts (see the class comment). */
const MAX_SKIPPED_ATTEMPTS = 8;

export class LaggedCholeskySolver implements LinearSolver {
  readonly name = 'ldlt-lagged' as const;
  private readonly direct = new LdltSolver({ compactCopy: true });
  private readonly tolerance: number;
  private readonly refactorAfter: number;
  private readonly maxIterations: number;
  /** Limits given explicitly are used as they are (no adaptation to measured costs). */
  private readonly fixedLimits: boolean;
  private readonly accept: ((sym: LdltSymbolic) => boolean) | undefined;
  private readonly correction: DiagonalCorrection | null;
  private readonly turns: GroupTurns | null;
  /** Whether the turns' reference is the factored matrix's positions, and whether the current attempt turns it. */
  private turnsCaptured = false;
  private turned = false;
  private turnedVector = new Float64Array(0);
  private readonly solveWithFactor = (b: Float64Array, x: Float64Array): void => this.direct.solveFactored(b, x, true);
  private stale = true;
  /** The pattern of the last solve, and how many solves in a row had it. */
  private patternId = -1;
  private solvesOnPattern = 0;
  /** Consecutive failed attempts, and solves left that refactor without an attempt. */
  private failures = 0;
  private skipAttempts = 0;
  private r = new Float64Array(0);
  private z = new Float64Array(0);
  private p = new Float64Array(0);
  private q = new Float64Array(0);

  constructor(options: LaggedCholeskyOptions = {}) {
    this.tolerance = options.tolerance ?? 1e-4;
    this.refactorAfter = options.refactorAfter ?? 4;
    this.maxIterations = options.maxIterations ?? 40;
    this.fixedLimits = options.refactorAfter !== undefined || options.maxIterations !== undefined;
    this.accept = options.accept;
    this.correction = options.diagonalCorrection === false ? null : new DiagonalCorrection();
    this.turns = options.turns ?? null;
  }

  get timing(): LinearSolverTiming {
    return this.direct.timing;
  }

  /** The symbolic analysis of a pattern, without factoring (see LdltSolver.plan). */
  plan(pattern: BsrPattern): LdltSymbolic {
    return this.direct.plan(pattern);
  }

  solve(A: BsrMatrix, b: Float64Array, x: Float64Array, positions?: Float64Array): LinearSolveStats {
    const stats = this.trySolve(A, b, x, positions);
    if (!stats) throw new Error('LaggedCholeskySolver: the factorization this solve needs was not accepted');
    return stats;
  }

  /** As solve, but null (x unspecified) when the solve needs a factorization that `accept` turns down. */
  trySolve(A: BsrMatrix, b: Float64Array, x: Float64Array, positions?: Float64Array): LinearSolveStats | null {
    if (A.pattern.id !== this.patternId) {
      this.patternId = A.pattern.id;
      this.solvesOnPattern = 0;
    }
    this.solvesOnPattern++;
    if (this.stale || this.direct.factorAnalysis?.patternId !== A.pattern.id) {
      return this.refactorAndSolve(A, b, x, positions);
    }
    if (this.skipAttempts > 0) {
      this.skipAttempts--;
      return this.refactorAndSolve(A, b, x, positions);
    }
    const { giveUp, renew } = this.limits();
    this.turned = this.turnsCaptured && positions !== undefined && this.turns!.fit(positions) > TURN_ANGLE;
    if (!this.turned) this.correction?.prepare(A, this.solveWithFactor, this.solvesOnPattern >= SETTLED_PATTERN);
    const its = this.pcg(A, b, x, giveUp);
    // Negative curvature (p^T A p <= 0) says A is not positive definite, not that the factor is stale: the fresh
    // factorization reports it (an unprojected Newton matrix may be indefinite, see newton.ts).
    if (its === NOT_POSITIVE) return this.refactorAndSolve(A, b, x, positions);
    if (its < 0) {
      this.failures++;
      this.skipAttempts = Math.min(MAX_SKIPPED_ATTEMPTS, 2 ** (this.failures - 1));
      this.failedAttempts++;
      return this.refactorAndSolve(A, b, x, positions);
    }
    this.failures = 0;
    if (its > renew) this.stale = true;
    return { iterations: its, residual: this.tolerance };
  }

  /**
   * Iteration limits from the factor's size: an iteration costs about one pair of triangular solves, so a
   * factorisation is worth `factor / solve` iterations. Give up on the old factor past that many (the options'
   * maxIterations caps it) and renew it for the next solve past half of it (refactorAfter is the floor).
   * The ratio comes from the symbolic analysis, flops / nnz(L) times a constant measured here (factor and solve
   * timings of the rotating cube, twisted bar and ball gave 0.052-0.073), not from timings of this run: a run must
   * give the same result every time, whatever else the machine is doing.
   */
  private limits(): { giveUp: number; renew: number } {
    const sym = this.direct.analysis;
    if (this.fixedLimits || !sym) return { giveUp: this.maxIterations, renew: this.refactorAfter };
    const worth = ITERATIONS_PER_FLOP_RATIO * (sym.flops / sym.nnzL);
    const giveUp = Math.max(3, Math.min(this.maxIterations, Math.floor(worth)));
    return { giveUp, renew: Math.max(this.refactorAfter, Math.floor(giveUp / 2)) };
  }

  private refactorAndSolve(A: BsrMatrix, b: Float64Array, x: Float64Array, positions?: Float64Array): LinearSolveStats | null {
    if (this.accept && !this.accept(this.direct.plan(A.pattern))) return null;
    this.direct.factor(A);
    this.correction?.reset(A);
    this.turnsCaptured = this.turns !== null && positions !== undefined;
    if (this.turnsCaptured) this.turns!.capture(positions!);
    this.stale = false;
    this.direct.solveFactored(b, x);
    return { iterations: 1, residual: 0 };
  }

  /** PCG from x = 0 with the current factor; the iteration count, -1 when it did not converge, NOT_POSITIVE at p^T A p <= 0. */
  private pcg(A: BsrMatrix, b: Float64Array, x: Float64Array, maxIterations: number): number {
    const n = b.length;
    if (this.r.length !== n) {
      this.r = new Float64Array(n);
      this.z = new Float64Array(n);
      this.p = new Float64Array(n);
      this.q = new Float64Array(n);
    }
    const { r, z, p, q } = this;
    const t0 = performance.now();
    let bb = 0;
    for (let i = 0; i < n; i++) bb += b[i] * b[i];
    x.fill(0);
    if (bb === 0) return 0;
    const target = this.tolerance * this.tolerance * bb;
    r.set(b);
    this.precondition(r, z);
    p.set(z);
    let rz = 0;
    for (let i = 0; i < n; i++) rz += r[i] * z[i];
    for (let it = 1; it <= maxIterations; it++) {
      A.multiply(p, q);
      let pq = 0;
      for (let i = 0; i < n; i++) pq += p[i] * q[i];
      if (!(pq > 0)) {
        this.pcgMs += performance.now() - t0;
        return NOT_POSITIVE;
      }
      const alpha = rz / pq;
      let rr = 0;
      for (let i = 0; i < n; i++) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
        rr += r[i] * r[i];
      }
      if (rr <= target) {
        this.pcgMs += performance.now() - t0;
        return it;
      }
      this.precondition(r, z);
      let rzNew = 0;
      for (let i = 0; i < n; i++) rzNew += r[i] * z[i];
      const beta = rzNew / rz;
      rz = rzNew;
      for (let i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    this.pcgMs += performance.now() - t0;
    return -1;
  }

  /** z = P^-1 r: the old factor's solve, corrected for changed diagonal blocks, or turned with the bodies. */
  private precondition(r: Float64Array, z: Float64Array): void {
    if (this.turned) {
      const turns = this.turns!;
      if (this.turnedVector.length !== r.length) this.turnedVector = new Float64Array(r.length);
      turns.toReference(r, this.turnedVector);
      this.direct.solveFactored(this.turnedVector, z, true);
      turns.fromReference(z);
      return;
    }
    this.direct.solveFactored(r, z, true);
    this.correction?.apply(z);
  }

  /** Milliseconds spent in the preconditioned iterations (triangular solves included). */
  pcgMs = 0;
  /** Columns the diagonal correction made (one solve with the factor each). */
  get correctionColumns(): number {
    return this.correction?.columnsMade ?? 0;
  }

  /** Attempts with the old factor that gave up (each followed by a refactorisation). */
  failedAttempts = 0;
}
