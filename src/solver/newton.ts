import type { LinearSolver } from '../math/linear-solver.js';
import { NotPositiveDefiniteError } from '../math/not-positive-definite.js';
import type { IncrementalPotential } from './incremental-potential.js';
import type { EigenvalueFilter, HessianProjection } from '../energies/eigenvalue-filter.js';

export interface NewtonOptions {
  /**
   * Stop when the Newton step satisfies |dx|_inf <= tol * h (seed 000: 0.01 h) and the leftover gradient, seen as a
   * velocity error M^-1 g / h (mass-weighted RMS over the free DOFs), is below tol before that step or below tol / 10
   * after it. The second test matters for A-1/A-search, which read the velocity from grad P(x*): without it a
   * barely converged stiff solve leaks M^-1 g / h into v. The test before the step alone cost a Newton iteration
   * whenever the step was already small but the gradient before it was not; the test after it (one gradient
   * evaluation) saves most of those.
   */
  tolerance: number;
  /**
   * Also require the velocity residual (above); default true. False: seed 000's rule alone, |dx|_inf <= tol * h, for
   * integrators that take the velocity from the positions only (BDF2), where a leftover gradient does not enter v.
   */
  residualTest?: boolean;
  /** The time step h whose multiple the tolerance is (for multi-stage methods, the stage's own step a*h). */
  h: number;
  maxIterations: number;
  projectPsd: boolean;
  /** What projectPsd does with the elements' negative eigenvalues (eigenvalue-filter.ts); default 'clamp'. */
  hessianProjection?: HessianProjection;
  linearSolver: LinearSolver;
  /** E(x) at the start point when the caller already has it (Newton's start candidates evaluate it); saves one evaluation. */
  startEnergy?: number;
  /** Called after each accepted step; returns true when it changed the objective (adaptive barrier stiffness). */
  afterIteration?: (x: Float64Array) => boolean;
  /** Called after every iteration's line search with what it did and the point it reached (a trace, read only). */
  onIteration?: (info: NewtonIteration, x: Float64Array) => void;
}

/** One Newton iteration, as NewtonOptions.onIteration reports it. */
export interface NewtonIteration {
  /** 0 for the first. */
  iteration: number;
  /** The objective after the line search (unchanged when it accepted no step). */
  energy: number;
  /** |dx|_inf / h of the Newton step and the velocity residual before it (m/s; the tolerance's units, as NewtonResult). */
  stepNorm: number;
  residualNorm: number;
  /** The largest fraction of the step the line-search filter allowed (contact, inversion), and the one taken (0: none). */
  filterBound: number;
  alpha: number;
  /** Whether the step came from the exact (unprojected) elastic Hessian (projection on demand). */
  exactHessian: boolean;
  /** Linear-solver iterations of this Newton iteration. */
  linearIterations: number;
}

export interface NewtonResult {
  converged: boolean;
  /**
   * Newton iterations as seed 000's Table 1 counts them: the linear solves whose step still had to be taken to
   * converge. The last solve of a converged minimisation, whose step is already below the tolerance, only confirms
   * convergence and is not counted (its step is still applied); a start that is already converged counts 0.
   */
  iterations: number;
  linearIterations: number;
  /** Final |dx|_inf / h and the RMS velocity error |M^-1 g|_M / (sqrt(m) h). */
  stepNorm: number;
  residualNorm: number;
}

/** Cumulative milliseconds spent in each phase, for benchmarks ("where the time goes"). */
export interface SolverTiming {
  assembly: number;
  linearSolve: number;
  lineSearch: number;
}

export function newSolverTiming(): SolverTiming {
  return { assembly: 0, linearSolve: 0, lineSearch: 0 };
}

/**
 * When the velocity error before the last step was above the tolerance, the one after it must be below this
 * fraction of it. At 1 the trapezoidal rule's sliding slab on the barrier decelerated 5 % off mu g (the
 * friction-integrators test allows 3 %); at 0.1 it is within it. Alone (without the test before the step), 0.1 cost
 * the twisted bar 15 % more iterations in its first second, where the residual converges linearly.
 */
const RESIDUAL_AFTER_STEP = 0.1;

/**
 * Projection on demand ("Pitfalls of Projection: A study of Newton-type solvers for incremental potentials",
 * Longva et al. 2023): the PSD projection clamps the negative curvature of strongly deformed elements (the twist
 * modes of compressed corotated tets), and near the minimiser that wrong Hessian makes Newton converge only
 * linearly: on the twisted bar each step shrank by a factor of about 0.4-0.5, for three to five more iterations a
 * time step. Once the last step is within this many tolerances (|dx|_inf <= EXACT_HESSIAN_WITHIN tol h), the terms
 * that allow it (PotentialTerm.exactNearMinimum) add their exact Hessian; with the mass term the Newton matrix is
 * then usually still positive definite and the last iterations converge quadratically. When it is not (the
 * Cholesky or CG reports it) or its step is no descent direction, the iteration is solved again with the projected
 * Hessian, and the rest of that minimisation stays projected. With hessianProjection 'clamp' (the default) only.
 * The twisted bar's first second: 189 Newton iterations projected, 147 / 144 / 142 from 5 / 30 / 100 tolerances on.
 */
export const EXACT_HESSIAN_WITHIN = 30;

/**
 * Projection on demand also ends, for the rest of a minimisation, when its steps stall: this many steps from the
 * exact Hessian fell below the tolerance while the velocity residual after them stayed above its bound. Near a
 * minimiser held by many contact pairs, the exact elastic Hessian beside the pairs' Gauss-Newton matrices can make
 * Newton circle: on the bunny's tau = 2 s stairs (step 117 from the state after 116) the steps stayed at 0.5-1
 * tolerance from iteration 18 on while the residual swung between 3 and 5 tolerances, to the 100-iteration
 * limit; projected throughout, the same step converges in 24 iterations, and with this rule in 22. (A step below
 * the tolerance is what the step rule calls converged: the stall is what only the residual test sees.)
 */
export const EXACT_HESSIAN_STALLS = 2;

/**
 * hessianProjection 'adaptive' clamps when the last step's trust-region ratio rho (actual energy decrease over the
 * decrease the quadratic model predicted) is within this of 1, and takes absolute values otherwise: the threshold of
 * "Trust-Region Eigenvalue Filtering for Projected Newton" (Chen et al. 2024).
 */
const TRUST_RATIO_TOLERANCE = 0.01;

/** Projected Newton with a filtered backtracking line search. */
export class NewtonSolver {
  private g = new Float64Array(0);
  private dx = new Float64Array(0);
  private trial = new Float64Array(0);
  readonly timing = newSolverTiming();
  /**
   * Iterations (as NewtonResult counts them) and linear-solver iterations of the current or last minimisation, kept
   * up to date while it runs: a minimisation that throws (an infeasible step, a failed solve) is still counted.
   */
  progress = { iterations: 0, linearIterations: 0 };
  /** Iterations whose exact Hessian (see EXACT_HESSIAN_WITHIN) was not positive definite and were solved again projected. */
  exactHessianFallbacks = 0;
  /** Minimisations whose exact-Hessian steps stalled (EXACT_HESSIAN_STALLS) and that went on projected. */
  exactHessianStalls = 0;

  /**
   * Minimises ip from the start point x (updated in place). x must be feasible (finite energy); constrained DOFs
   * are left as they are.
   */
  minimize(ip: IncrementalPotential, x: Float64Array, opts: NewtonOptions): NewtonResult {
    const n = x.length;
    if (this.g.length !== n) {
      this.g = new Float64Array(n);
      this.dx = new Float64Array(n);
      this.trial = new Float64Array(n);
    }
    const { g, dx, trial } = this;
    const mass = ip.model.mass;
    const constrained = ip.model.constrained;
    const limit = opts.tolerance * opts.h;
    let energy = opts.startEnergy ?? ip.value(x);
    if (!Number.isFinite(energy)) throw new Error('Newton: the start point is infeasible (energy is not finite)');

    let linearIterations = 0;
    const progress = this.progress;
    progress.iterations = 0;
    progress.linearIterations = 0;
    let largestStep = 0;
    let stepNorm = Infinity;
    let residualNorm = Infinity;
    let haveGradient = false; // g already holds the gradient at x (computed for the residual test after a step)
    const projection = opts.hessianProjection ?? 'clamp';
    // For 'adaptive': the last accepted step alpha dx, the energy before it and the slope g . dx there (none yet).
    let lastStep = false;
    let energyBefore = 0;
    let slopeBefore = 0;
    let lastAlpha = 0;
    // Projection on demand with the default filter (unprojected Hessians are exact anyway; 'abs' and 'adaptive' are
    // filters chosen on purpose, and keep them).
    let exactAllowed = opts.projectPsd && projection === 'clamp';
    let stalls = 0;
    for (let it = 0; it < opts.maxIterations; it++) {
      progress.iterations = it;
      let t0 = performance.now();
      if (!haveGradient) {
        ip.gradient(x, g);
        residualNorm = this.velocityResidual(g, mass, constrained);
      }
      haveGradient = false;
      if (!Number.isFinite(residualNorm)) throw new Error(`Newton: gradient is not finite at iteration ${it}`);
      let filter: EigenvalueFilter = projection === 'abs' ? 'abs' : 'clamp';
      if (projection === 'adaptive') {
        filter = lastStep && Math.abs(this.trustRatio(energyBefore - energy, slopeBefore, lastAlpha) - 1) < TRUST_RATIO_TOLERANCE ? 'clamp' : 'abs';
      }
      const linearBefore = linearIterations;
      let exact = exactAllowed && stepNorm <= EXACT_HESSIAN_WITHIN * limit;
      let H = ip.assembleHessian(x, opts.projectPsd, filter, exact);
      let t1 = performance.now();
      this.timing.assembly += t1 - t0;

      for (let d = 0; d < n; d++) g[d] = -g[d];
      let slope = 0;
      let small = false;
      for (;;) {
        dx.fill(0);
        let solved = true;
        try {
          const stats = opts.linearSolver.solve(H, g, dx, x);
          linearIterations += stats.iterations;
        } catch (err) {
          if (!exact || !(err instanceof NotPositiveDefiniteError)) throw err;
          solved = false;
        }
        progress.linearIterations = linearIterations;
        progress.iterations = it + 1; // a failure from here on comes after this iteration's solve
        t0 = performance.now();
        this.timing.linearSolve += t0 - t1;

        stepNorm = 0;
        slope = 0;
        if (solved) {
          for (let d = 0; d < n; d++) {
            stepNorm = Math.max(stepNorm, Math.abs(dx[d]));
            slope -= g[d] * dx[d];
          }
          if (!Number.isFinite(stepNorm)) throw new Error(`Newton: linear solve returned a non-finite step at iteration ${it}`);
          // Converged when the step is below tolerance (seed 000's rule). It is still taken (one energy evaluation)
          // so that motion slower than tol is not frozen out, and the returned x is as exact as this step makes it.
          small = stepNorm <= limit;
          if (!exact || slope < 0 || small) break;
        }
        // The exact Hessian is not positive definite here (or its step is no descent direction): this iteration
        // again with the projected one, and the rest of this minimisation too.
        this.exactHessianFallbacks++;
        exact = false;
        exactAllowed = false;
        H = ip.assembleHessian(x, opts.projectPsd, filter);
        t1 = performance.now();
        this.timing.assembly += t1 - t0;
      }
      largestStep = Math.max(largestStep, stepNorm);
      // A step below tolerance only confirms convergence when the gradient before it agrees (or is not asked): it is
      // then taken only if it needs no backtracking. Otherwise it is a step like any other. A pair pressed to within
      // 4e-10 m (the armadillo trampoline) makes the gradient huge and the step tiny, and one that raised the energy
      // was once taken for convergence: nothing moved, step after step, without a warning.
      const confirming = small && (opts.residualTest === false || residualNorm <= limit);
      if (slope >= 0 && !confirming) {
        // An inexact linear solve can miss descent; fall back to the mass-scaled gradient direction.
        for (let d = 0; d < n; d++) dx[d] = constrained[d] ? 0 : g[d] / mass[d];
      }
      if (projection === 'adaptive') {
        energyBefore = energy;
        slopeBefore = 0;
        for (let d = 0; d < n; d++) slopeBefore -= g[d] * dx[d];
      }

      // Filtered backtracking: never leave the feasible set, then halve until the energy does not increase.
      let alpha = Math.min(1, ip.maxStep(x, dx));
      const filterBound = alpha;
      if (!(alpha > 0) && !small) {
        const why = ip.explainBlockedStep(x) ?? 'a contact pair or element is already at its limit';
        throw new Error(`Newton: the line-search filter allows no motion at iteration ${it}: ${why}; the step cannot be made feasible${oversizedStepNote(ip.model.x0, largestStep)}`);
      }
      let accepted = false;
      const tries = confirming ? 1 : 60;
      for (let ls = 0; ls < tries && alpha > 0; ls++) {
        for (let d = 0; d < n; d++) trial[d] = x[d] + alpha * dx[d];
        const e = ip.value(trial);
        // Near the minimiser a Newton step changes the energy by less than its round-off: accept the full step then
        // (it is a descent direction), or the solve would stall short of the accuracy the tolerance asks for.
        const withinRoundOff = ls === 0 && slope < 0 && e - energy <= 1e-13 * Math.abs(energy);
        if (e <= energy || withinRoundOff) {
          x.set(trial);
          energy = e;
          accepted = true;
          lastAlpha = alpha;
          break;
        }
        alpha *= 0.5;
      }
      t1 = performance.now();
      this.timing.lineSearch += t1 - t0;
      lastStep = accepted;
      opts.onIteration?.(
        {
          iteration: it,
          energy,
          stepNorm: stepNorm / opts.h,
          residualNorm: residualNorm / opts.h,
          filterBound,
          alpha: accepted ? lastAlpha : 0,
          exactHessian: exact,
          linearIterations: linearIterations - linearBefore,
        },
        x,
      );
      if (small) {
        // The step below tolerance only confirms convergence (seed 000 counts the iterations before it). A-1 and
        // A-search also read the velocity from grad P(x*), where a leftover gradient g leaks M^-1 g / h into v: so
        // (opts.residualTest) the gradient must be small too, as a velocity error: below tol before this last step,
        // or, if it was not, below tol / 10 after it. The second often holds when the first does not (quadratic convergence); when
        // neither does (a stiff contact), Newton goes on from here with the gradient after the step.
        if (!accepted && !confirming) {
          // The gradient says x is no minimiser, and no step along dx lowers the energy: report it, do not call it converged.
          return { converged: false, iterations: it + 1, linearIterations, stepNorm: stepNorm / opts.h, residualNorm: residualNorm / opts.h };
        }
        if (accepted && opts.residualTest !== false && !(residualNorm <= limit)) {
          t0 = performance.now();
          ip.gradient(x, g);
          residualNorm = this.velocityResidual(g, mass, constrained);
          this.timing.assembly += performance.now() - t0;
          if (!(residualNorm <= RESIDUAL_AFTER_STEP * limit)) {
            if (exact && ++stalls === EXACT_HESSIAN_STALLS) {
              exactAllowed = false;
              this.exactHessianStalls++;
            }
            if (opts.afterIteration?.(x)) {
              energy = ip.value(x);
              lastStep = false; // the objective changed: the step's ratio says nothing about the new one
            } else {
              haveGradient = true;
            }
            continue;
          }
        }
        progress.iterations = it;
        return { converged: true, iterations: it, linearIterations, stepNorm: stepNorm / opts.h, residualNorm: residualNorm / opts.h };
      }
      if (accepted && opts.afterIteration?.(x)) {
        energy = ip.value(x);
        lastStep = false;
      }
      if (!accepted) {
        // No decrease along dx: x is a minimiser up to round-off (or the direction is useless). Report honestly.
        return {
          converged: stepNorm <= limit * 10 && residualNorm <= limit * 10,
          iterations: it + 1,
          linearIterations,
          stepNorm: stepNorm / opts.h,
          residualNorm: residualNorm / opts.h,
        };
      }
    }
    progress.iterations = opts.maxIterations;
    return { converged: false, iterations: opts.maxIterations, linearIterations, stepNorm: stepNorm / opts.h, residualNorm: residualNorm / opts.h };
  }

  /**
   * Trust-region ratio of the last step s = alpha dx, from the energy decrease it made and the gradients before it
   * (slope g0 . dx) and after it (this.g, not yet negated). The paper's model decrease -(g0 . s + s^T H s / 2) takes
   * the exact Hessian at the start; here s^T H s is its secant estimate s . (g1 - g0), so the model decrease is
   * -(g0 + g1) . s / 2 and needs no second matrix (our own choice: the same to second order, and free, since the
   * next iteration needs g1 anyway). A decrease the model cannot predict (not positive) gives -Infinity.
   */
  private trustRatio(decrease: number, slopeBefore: number, alpha: number): number {
    const { g, dx } = this;
    let slopeAfter = 0;
    for (let d = 0; d < g.length; d++) slopeAfter += g[d] * dx[d];
    const predicted = -0.5 * alpha * (slopeBefore + slopeAfter);
    return predicted > 0 ? decrease / predicted : -Infinity;
  }

  /**
   * The leftover gradient as a velocity error M^-1 g (divided by h by the caller's tolerance), in the mass-weighted
   * RMS norm over the free DOFs (the norm of kinetic energy): a few light boundary nodes do not dominate it, a
   * misplaced body or contact region does.
   */
  private velocityResidual(g: Float64Array, mass: Float64Array, constrained: Uint8Array): number {
    let weighted = 0;
    let freeMass = 0;
    for (let d = 0; d < g.length; d++) {
      if (constrained[d]) continue;
      weighted += (g[d] * g[d]) / mass[d];
      freeMass += mass[d];
    }
    return freeMass > 0 ? Math.sqrt(weighted / freeMass) : 0;
  }
}

/**
 * For a step that could not be made feasible: when Newton asked for motion beyond the extent of the scene (a speed,
 * gravity or time step far too large for the bodies, e.g. 1e12 m/s into the ground), says so with the numbers, since
 * the load is then what to change. Empty otherwise.
 */
function oversizedStepNote(start: Float64Array, largestStep: number): string {
  let extent = 0;
  for (let k = 0; k < 3; k++) {
    let lo = Infinity, hi = -Infinity;
    for (let d = k; d < start.length; d += 3) {
      lo = Math.min(lo, start[d]);
      hi = Math.max(hi, start[d]);
    }
    extent = Math.max(extent, hi - lo);
  }
  if (!(extent > 0 && largestStep > extent)) return '';
  const ratio = (largestStep / extent).toExponential(1);
  return `; its Newton steps asked to move nodes by up to ${largestStep.toExponential(2)} m, ${ratio} times the extent of the scene ` +
    `at the start (${extent.toPrecision(3)} m): a step this large cannot be resolved, lower the speed, the gravity or the time step`;
}
