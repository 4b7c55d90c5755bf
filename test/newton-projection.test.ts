import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toRunOptions } from '../src/io/scene-files.js';
import type { BsrMatrix } from '../src/math/bsr.js';
import { createLinearSolver, type LinearSolver } from '../src/math/linear-solver.js';
import { NotPositiveDefiniteError } from '../src/math/not-positive-definite.js';
import { buildModel } from '../src/scene/build.js';
import { validateScene } from '../src/scene/validate.js';
import { simulate } from '../src/sim/simulate.js';
import { IncrementalPotential } from '../src/solver/incremental-potential.js';
import { EXACT_HESSIAN_STALLS, NewtonSolver } from '../src/solver/newton.js';

/** The twisted bar of seed 000 section 5.1, coarse (8 x 4 x 2 cells): one end fixed, twisted 90 degrees, released. */
function twistedBar(duration: number) {
  const scene = validateScene({
    name: 'coarse-twisted-bar',
    duration,
    dt: 1 / 30,
    integrator: { name: 'a-search' },
    bodies: [
      {
        name: 'bar',
        mesh: { type: 'box', size: [0.2, 0.1, 0.05], cells: [8, 4, 2] },
        transform: { translate: [0, 0.4, -0.025] },
        material: { model: 'corotated', youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
        deform: { axis: [1, 0, 0], twistDegrees: 90, bend: [0, 0.03, 0] },
        fixed: [{ box: { min: [-0.0001, -1, -1], max: [0.0001, 2, 1] } }],
      },
    ],
  });
  const model = buildModel(scene, () => {
    throw new Error('no mesh files');
  });
  return { model, options: toRunOptions(scene) };
}

/** Turns projection on demand off for the model's terms (every Newton matrix projected, as before it). */
function projectAlways(model: ReturnType<typeof twistedBar>['model']): void {
  for (const term of model.terms) Object.defineProperty(term, 'exactNearMinimum', { value: false });
}

test('projection on demand: the twisted bar converges in fewer Newton iterations to the same motion', () => {
  const onDemand = twistedBar(10 / 30);
  const projected = twistedBar(10 / 30);
  projectAlways(projected.model);
  const run = (bar: ReturnType<typeof twistedBar>) => {
    const rows: { kinetic: number; gravity: number }[] = [];
    const { summary } = simulate(bar.model, bar.options, {
      step(r) {
        rows.push({ kinetic: r.kinetic, gravity: r.potentials.get('gravity') ?? NaN });
      },
    });
    return { summary, rows };
  };
  const a = run(onDemand);
  const b = run(projected);
  assert.equal(a.summary.stopped, undefined);
  assert.equal(b.summary.stopped, undefined);
  assert.equal(a.summary.newtonLimitSteps, 0);
  // Measured: 40 Newton iterations on demand, 49 projected every time.
  const [na, nb] = [a.summary.newtonIterations, b.summary.newtonIterations];
  assert.ok(na <= 0.85 * nb, `Newton iterations: ${na} on demand, ${nb} projected`);
  // Both stop within the tolerance of the same solutions: kinetic energy and height (gravity's potential) agree
  // step by step. Newton's tolerance (|dx| <= 0.01 h) allows velocity errors of about 0.01 m/s, on this 1 kg bar at
  // up to 2.2 m/s kinetic energy errors of about 0.02 J, 0.8 % of the energy in motion (2.7 J). Measured: 0.008 J.
  const scale = a.summary.initialEnergy - Math.min(...a.rows.map((r) => r.gravity));
  let worst = 0;
  for (let k = 0; k < a.rows.length; k++) {
    worst = Math.max(worst, Math.abs(a.rows[k].kinetic - b.rows[k].kinetic), Math.abs(a.rows[k].gravity - b.rows[k].gravity));
  }
  assert.ok(worst <= 0.01 * scale, `largest difference ${worst} J of ${scale} J`);
});

/**
 * The coarse bar's first implicit Euler step as a minimisation, whose Hessian assemblies are recorded (exact or
 * projected, in order) and passed through `adjust` when it is given.
 */
function barStep(adjust?: (H: BsrMatrix, exact: boolean) => void) {
  const { model } = twistedBar(1 / 30);
  const ip = new IncrementalPotential(model);
  const h = 1 / 30;
  const x = Float64Array.from(model.x0);
  ip.predictor.set(x);
  ip.weight = h * h;
  const assemble = ip.assembleHessian.bind(ip);
  const exactFlags: boolean[] = [];
  ip.assembleHessian = (at, projectPsd, filter, exact = false) => {
    exactFlags.push(exact);
    const H = assemble(at, projectPsd, filter, exact);
    adjust?.(H, exact);
    return H;
  };
  return { model, ip, h, x, exactFlags };
}

test('projection on demand: an exact Newton matrix that is not positive definite is solved again projected', () => {
  // Newton's first iteration is always projected; the solver refuses the first exact matrix, as the Cholesky
  // refuses an indefinite one: that iteration must be redone with the projected matrix, and the rest stay projected.
  const { model, ip, h, x, exactFlags } = barStep();
  const real = createLinearSolver('ldlt');
  let refused = 0;
  const refusing: LinearSolver = {
    name: real.name,
    timing: real.timing,
    solve(A, b, out) {
      if (exactFlags.at(-1) && refused++ === 0) throw new NotPositiveDefiniteError('test: refused');
      return real.solve(A, b, out);
    },
  };
  const newton = new NewtonSolver();
  const result = newton.minimize(ip, x, { tolerance: 0.01, h, maxIterations: 50, projectPsd: true, linearSolver: refusing });
  assert.ok(result.converged);
  assert.equal(refused, 1);
  assert.equal(newton.exactHessianFallbacks, 1);
  const first = exactFlags.indexOf(true);
  assert.ok(first > 0, `assemblies (exact or not): ${exactFlags.join(' ')}`);
  assert.ok(exactFlags.slice(first + 1).every((e) => !e), `assemblies after the refusal: ${exactFlags.join(' ')}`);
  // Another error is not a fallback: it reaches the caller.
  const failing: LinearSolver = { ...refusing, solve: () => { throw new Error('test: broken'); } };
  assert.throws(() => new NewtonSolver().minimize(ip, Float64Array.from(model.x0), { tolerance: 0.01, h, maxIterations: 50, projectPsd: true, linearSolver: failing }), /broken/);
});

test('projection on demand: exact steps that stall below the tolerance hand the solve back to the projected Hessian', () => {
  // A stand-in for an exact matrix whose steps do not converge: ten times too stiff, so each of its steps is a tenth
  // of Newton's; they fall below the tolerance while the velocity residual after them stays above its bound.
  const { ip, h, x, exactFlags } = barStep((H, exact) => {
    if (exact) for (let i = 0; i < H.values.length; i++) H.values[i] *= 10;
  });
  const newton = new NewtonSolver();
  const result = newton.minimize(ip, x, { tolerance: 0.01, h, maxIterations: 100, projectPsd: true, linearSolver: createLinearSolver('ldlt') });
  assert.ok(result.converged);
  assert.equal(newton.exactHessianStalls, 1);
  assert.equal(newton.exactHessianFallbacks, 0);
  // The exact matrix was used until EXACT_HESSIAN_STALLS of its steps stalled, and never after.
  const exact = exactFlags.filter((e) => e).length;
  assert.ok(exact >= EXACT_HESSIAN_STALLS, `assemblies (exact or not): ${exactFlags.join(' ')}`);
  const last = exactFlags.lastIndexOf(true);
  assert.ok(last < exactFlags.length - 1, `assemblies: ${exactFlags.join(' ')}`);
  // Measured: 24 iterations, 18 of them exact; without the hand-back, 50, all exact from the sixth on.
  assert.ok(result.iterations <= 30, `${result.iterations} Newton iterations; assemblies: ${exactFlags.join(' ')}`);
});
