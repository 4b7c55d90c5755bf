/**
 * The test problems of seeds 004 (Eurographics 2004 tutorial on time integration) and 001 (Dinev, Liu, Kavan,
 * "Stabilizing Integrators for Real-Time Physics"), run through the project's integrators, against the numbers the
 * seeds publish or that our research notes on them derive. Every reference number
 * names its source: [004 ...] / [001 ...] for the seed, [notes ...] for the notes.
 *
 * Damped problems use the semi-implicit Rayleigh damping (force -mu K(x_n) v): on a zero-rest-length spring K = k I
 * is constant, so it is exactly the linear damping c = mu k of the seed's ODEs. Every implicit integrator but blending
 * accepts it (the registry's noRayleigh says why the others do not).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gravity } from '../src/energies/gravity.js';
import { Springs } from '../src/energies/springs.js';
import { SquaredLengthSprings } from '../src/energies/squared-springs.js';
import type { Dynamics } from '../src/integrators/dynamics.js';
import { newCounters, type Integrator, type IntegratorState } from '../src/integrators/integrator.js';
import { loadScene, toRunOptions } from '../src/io/scene-files.js';
import type { Model } from '../src/model/model.js';
import { buildModel } from '../src/scene/build.js';
import type { Scene } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { makeIntegrator, oscillatorModel, tightSettings } from './helpers.js';
import { rng } from './numeric-helpers.js';

function close(actual: number, expected: number, relTol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= relTol * Math.abs(expected), `${what}: got ${actual}, expected ${expected} (rel tol ${relTol})`);
}

interface Run {
  dyn: Dynamics;
  integrator: Integrator;
  state: IntegratorState;
  /** Steps once; returns the step report. */
  step(): ReturnType<Integrator['step']>;
}

/** An integrator on a model from (x0, v0) (the model's own initial state unless given), solver settings tight. */
function start(model: Model, name: string, h: number, opts: { rayleigh?: number; tolerance?: number; params?: Record<string, number>; v0?: Float64Array } = {}): Run {
  const settings = tightSettings({ rayleigh: opts.rayleigh ?? 0, ...(opts.tolerance ? { tolerance: opts.tolerance } : {}) });
  const { dyn, target, integrator } = makeIntegrator(model, name, opts.params ?? {}, settings);
  const state: IntegratorState = { t: 0, x: new Float64Array(model.x0), v: new Float64Array(opts.v0 ?? model.v0) };
  dyn.constrain(0, state.x);
  target.reset(dyn.hamiltonian(state.x, state.v));
  return {
    dyn,
    integrator,
    state,
    step() {
      const t = state.t;
      const report = integrator.step(state, h, newCounters());
      target.advance(t, h, report.dissipated);
      return report;
    },
  };
}

/** A built-in scene (scenes/<name>.json) and its model. */
function builtin(name: string): { scene: Scene; model: Model } {
  const { scene } = loadScene(name);
  return { scene, model: buildModel(scene) };
}

// ---------------------------------------------------------------------------------------------------------------
// Linear reference solutions (2x2, independent of the project): y = (x, v), y' = A y + b, A = [[0, 1], [-p, -q]].

type Vec2 = [number, number];

/** y_{n+1} = (I - s A)^{-1} (r + s b): one solve of (I - s A) y = rhs. */
function solveShifted(p: number, q: number, s: number, rhs: Vec2): Vec2 {
  // [[1, -s], [s p, 1 + s q]] y = rhs
  const det = 1 + s * q + s * s * p;
  return [((1 + s * q) * rhs[0] + s * rhs[1]) / det, (rhs[1] - s * p * rhs[0]) / det];
}

/** Implicit Euler on y' = A y + (0, g): y_{n+1} = (I - hA)^{-1} (y_n + h (0, g)). */
function implicitEulerLinear(p: number, q: number, g: number, h: number, y0: Vec2, steps: number): Vec2[] {
  const out: Vec2[] = [y0];
  for (let i = 0; i < steps; i++) {
    const y = out[i];
    out.push(solveShifted(p, q, h, [y[0], y[1] + h * g]));
  }
  return out;
}

/** BDF2 (implicit Euler start) on y' = A y + (0, g): y_{n+1} = (I - 2/3 h A)^{-1} (4/3 y_n - 1/3 y_{n-1} + 2/3 h (0, g)). */
function bdf2Linear(p: number, q: number, g: number, h: number, y0: Vec2, steps: number): Vec2[] {
  const out = implicitEulerLinear(p, q, g, h, y0, 1);
  const s = (2 / 3) * h;
  for (let i = 1; i < steps; i++) {
    const [a, b] = [out[i], out[i - 1]];
    out.push(solveShifted(p, q, s, [(4 * a[0] - b[0]) / 3, (4 * a[1] - b[1]) / 3 + s * g]));
  }
  return out;
}

/** Trapezoidal rule on y' = A y: y_{n+1} = (I - h/2 A)^{-1} (I + h/2 A) y_n. */
function trapezoidalLinear(p: number, q: number, h: number, y0: Vec2, steps: number): Vec2[] {
  const out: Vec2[] = [y0];
  for (let i = 0; i < steps; i++) {
    const [x, v] = out[i];
    const s = h / 2;
    out.push(solveShifted(p, q, s, [x + s * v, v + s * (-p * x - q * v)]));
  }
  return out;
}

/** The x (axis 0) trajectory of a run on a one-particle model, steps + 1 values. */
function trajectory(run: Run, steps: number, axis = 0): Vec2[] {
  const out: Vec2[] = [[run.state.x[axis], run.state.v[axis]]];
  for (let i = 0; i < steps; i++) {
    run.step();
    out.push([run.state.x[axis], run.state.v[axis]]);
  }
  return out;
}

function assertTrajectory(actual: Vec2[], expected: Vec2[], absTol: number, what: string): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < actual.length; i++) {
    for (let c = 0; c < 2; c++) {
      assert.ok(Math.abs(actual[i][c] - expected[i][c]) <= absTol, `${what} step ${i} ${c ? 'v' : 'x'}: got ${actual[i][c]}, expected ${expected[i][c]}`);
    }
  }
}

// ===============================================================================================================
// Seed 004

test('seed 004 example 1b: y\' = -15 y at h = 0.1 as a damped-oscillator mode; implicit Euler gives (1/2.5)^10, BDF2 its recurrence', () => {
  // [004 example 1] y' = lambda y, y(0) = 1, lambda = -15, t in [0, 1]; [notes B3] implicit Euler at h = 0.1, 10 steps:
  // (1/2.5)^10 = 1.048576e-4. Scene: m = 1, k = 15, c = mu k = 16, so the modes are -1 and -15 and (x, v) = (1, -15)
  // lies on the -15 mode; a linear one-step method multiplies each mode by R(h lambda).
  const { scene, model } = builtin('seed004-dahlquist-stiff');
  assert.equal(scene.dt, 0.1);
  const rayleigh = scene.damping.rayleigh;
  const ie = start(model, 'implicit-euler', scene.dt, { rayleigh });
  for (let i = 0; i < 10; i++) ie.step();
  close(ie.state.x[0], 1.048576e-4, 1e-9, 'implicit Euler x(1)');
  close(ie.state.v[0] / ie.state.x[0], -15, 1e-9, 'stays on the lambda = -15 mode');
  // The other mode (lambda = -1) from (1, -1): R(-0.1)^10 = (1/1.1)^10.
  const slow = start(model, 'implicit-euler', scene.dt, { rayleigh, v0: Float64Array.from([-1, 0, 0, 0, 0, 0]) });
  for (let i = 0; i < 10; i++) slow.step();
  close(slow.state.x[0], Math.pow(1 / 1.1, 10), 1e-12, 'implicit Euler, lambda = -1 mode');
  // BDF2 (implicit Euler start, [004 Eq. 37]) on the scalar mode: y_{n+1} = (4/3 y_n - 1/3 y_{n-1}) / (1 - 2/3 h lambda).
  let [yPrev, y] = [1, 1 / 2.5];
  for (let i = 2; i <= 10; i++) [yPrev, y] = [y, ((4 / 3) * y - yPrev / 3) / (1 + (2 / 3) * 1.5)];
  const bdf = start(model, 'bdf2', scene.dt, { rayleigh });
  for (let i = 0; i < 10; i++) bdf.step();
  close(bdf.state.x[0], y, 1e-8, 'BDF2 x(1)');
  // Both overshoot the exact exp(-15) = 3.059e-7 [notes B3] by orders of magnitude: stable, not accurate
  // [004 section 2.3: implicit Euler "looses accuracy when the time steps become large"].
  assert.ok(ie.state.x[0] > 100 * Math.exp(-15) && bdf.state.x[0] > 100 * Math.exp(-15));
});

test('seed 004 example 1b: the trapezoidal rule and implicit midpoint (damping at the midpoint velocity) give (1/7)^10 = 3.5401e-9', () => {
  // [notes B3] implicit midpoint at h = 0.1, 10 steps: (1/7)^10; on a linear ODE the trapezoidal rule (Newmark
  // 1/4, 1/2 [001 section 3]) has the same R(z) = (1 + z/2) / (1 - z/2) [notes C1].
  const { scene, model } = builtin('seed004-dahlquist-stiff');
  const ex2 = builtin('seed004-overdamped');
  for (const name of ['trapezoidal', 'implicit-midpoint']) {
    const run = start(model, name, scene.dt, { rayleigh: scene.damping.rayleigh });
    for (let i = 0; i < 10; i++) run.step();
    // Round-off in the slow mode is amplified by 0.37 / 3.5e-9 relative to the answer: 1e-6 relative is the floor.
    close(run.state.x[0], Math.pow(1 / 7, 10), 1e-6, `${name} x(1)`);
    // The same on example 2 (y(0) = 0, y'(0) = 1): the whole trajectory against the trapezoidal linear recurrence.
    const got = trajectory(start(ex2.model, name, 0.1, { rayleigh: ex2.scene.damping.rayleigh }), 100);
    assertTrajectory(got, trapezoidalLinear(2.5, 5, 0.1, [0, 1], 100), 1e-10, `${name}, example 2`);
  }
});

test('seed 004 example 1b with the L-stable DIRKs of seed 002: TR-BDF2 and SDIRK2 multiply each damped mode by their R(z)', () => {
  // Stability functions of the two methods as published (Bank et al. 1985 for TR-BDF2 with gamma = 1/2; Alexander
  // 1977 for the two-stage SDIRK with gamma = 1 - 1/sqrt2, the same method as TR-BDF2 with gamma = 2 - sqrt2):
  //   TR-BDF2: R(z) = (1 + 5z/12) / ((1 - z/4)(1 - z/3)),   SDIRK2: R(z) = (1 + (1 - 2g) z) / (1 - g z)^2.
  // Both stages see the damping force, the first (a trapezoidal stage) also at (x_n, v_n): dropping that half
  // changes R. Modes lambda = -15 from (1, -15) and -1 from (1, -1), h = 0.1, 10 steps.
  const { scene, model } = builtin('seed004-dahlquist-stiff');
  const g = 1 - Math.SQRT1_2;
  const R: Record<string, (z: number) => number> = {
    'tr-bdf2': (z) => (1 + (5 * z) / 12) / ((1 - z / 4) * (1 - z / 3)),
    sdirk2: (z) => (1 + (1 - 2 * g) * z) / (1 - g * z) ** 2,
  };
  for (const [name, stability] of Object.entries(R)) {
    assert.ok(Math.abs(stability(-1e9)) < 1e-8, `${name} is L-stable`);
    for (const lambda of [-15, -1]) {
      const run = start(model, name, scene.dt, { rayleigh: scene.damping.rayleigh, v0: Float64Array.from([lambda, 0, 0, 0, 0, 0]) });
      for (let i = 0; i < 10; i++) run.step();
      close(run.state.x[0], Math.pow(stability(lambda * scene.dt), 10), 1e-8, `${name}, lambda = ${lambda}`);
      close(run.state.v[0] / run.state.x[0], lambda, 1e-6, `${name} stays on the lambda = ${lambda} mode`);
    }
  }
});

test('seed 004 example 3: implicit midpoint reports exactly the energy its damping removes (quadratic potential)', () => {
  // On a quadratic P the midpoint rule conserves energy, so H_0 - H_n is what the damping force -mu K v_mid did:
  // h v_mid^T mu K v_mid per step, what the step reports. The spring is linear along its axis, K constant there.
  const { scene, model } = builtin('seed004-damped-spring');
  const run = start(model, 'implicit-midpoint', scene.dt, { rayleigh: scene.damping.rayleigh });
  const h0 = run.dyn.hamiltonian(run.state.x, run.state.v);
  let reported = 0;
  for (let i = 0; i < 50; i++) {
    const r = run.step();
    assert.equal(r.frictionLoss, 0);
    reported += r.dissipated;
  }
  const lost = h0 - run.dyn.hamiltonian(run.state.x, run.state.v);
  assert.ok(lost > 0.1, `the damping removed energy: ${lost}`);
  close(reported, lost, 1e-9, 'reported damping loss vs energy lost');
});

test('seed 004 example 2: overdamped oscillator, implicit Euler first and BDF2 second order toward the analytic y(10)', () => {
  // [004 example 2] y'' = lambda/2 y + lambda y', lambda = -5, y(0) = 0, y'(0) = 1, t in [0, 10], analytic
  // y(t) = sqrt15/15 (e^{(-5+sqrt15)t/2} - e^{-(5+sqrt15)t/2}); [notes B3] the captions' "-5y' - 5y" is a typo,
  // y(10) = 9.21868e-4. Scene: m = 1, k = 2.5, mu = 2 (c = 5).
  const { scene, model } = builtin('seed004-overdamped');
  const [p, q] = [2.5, 5];
  const r15 = Math.sqrt(15);
  const exact = (t: number) => (r15 / 15) * (Math.exp(0.5 * (-5 + r15) * t) - Math.exp(-0.5 * (5 + r15) * t));
  close(exact(10), 9.21868e-4, 1e-5, 'analytic y(10) [notes B3]');
  const rayleigh = scene.damping.rayleigh;
  const errors: Record<string, number[]> = { 'implicit-euler': [], bdf2: [] };
  for (const h of [0.1, 0.05]) {
    const steps = Math.round(10 / h);
    for (const name of ['implicit-euler', 'bdf2'] as const) {
      const got = trajectory(start(model, name, h, { rayleigh }), steps);
      const reference = name === 'bdf2' ? bdf2Linear(p, q, 0, h, [0, 1], steps) : implicitEulerLinear(p, q, 0, h, [0, 1], steps);
      assertTrajectory(got, reference, 1e-10, `${name} h=${h}`);
      errors[name].push(Math.abs(got[steps][0] - exact(10)));
    }
  }
  // [004 Fig. 5] implicit methods converge "with a slope given by their order": halving h divides the error by 2^order.
  const ieRatio = errors['implicit-euler'][0] / errors['implicit-euler'][1];
  const bdfRatio = errors.bdf2[0] / errors.bdf2[1];
  assert.ok(ieRatio > 1.8 && ieRatio < 2.2, `implicit Euler error ratio ${ieRatio}`);
  assert.ok(bdfRatio > 3.5 && bdfRatio < 4.5, `BDF2 error ratio ${bdfRatio}`);
  // [notes B3] explicit Euler needs h < 2 / 4.436492 = 0.4508; the implicit methods stay bounded far above it
  // [004 Fig. 5: they "never loose stability"]; at h = 2 both decay like the slow mode.
  for (const name of ['implicit-euler', 'bdf2']) {
    const got = trajectory(start(model, name, 2, { rayleigh }), 5);
    for (const [x] of got) assert.ok(Math.abs(x) <= 1, `${name} h=2: |x| = ${Math.abs(x)}`);
    assert.ok(Math.abs(got[5][0]) < 0.1, `${name} h=2 did not decay: ${got[5][0]}`);
  }
});

test('seed 004 example 3: damped spring particle under gravity, analytic solution and implicit Euler at large steps', () => {
  // [004 example 3, Eq. 8] z'' = k (l0 - z)/m - d/m z' + g_z, m = 0.1, k = 100, l0 = -1, d = 1, g_z = -10, z0 = -1,
  // v0 = -5, t in [0, 2]. [notes B3] equilibrium z* = l0 + m g_z / k = -1.01, eigenvalues -5 +- i sqrt975,
  // z(t) = -1.01 + e^{-5t} (0.01 cos wt - 0.1585269 sin wt), z(2) = -1.0099968966. Scene: y is the seed's z.
  const { scene, model } = builtin('seed004-damped-spring');
  const [m, k, d, g] = [0.1, 100, 1, -10];
  const w = Math.sqrt(975);
  const zStar = -1 + (m * g) / k;
  const B = (-5 + 5 * (-1 - zStar)) / w; // z'(0) = -5 (z0 - z*) + w B = -5 with z0 - z* = 0.01
  close(B, -0.1585269, 1e-6, 'sine coefficient [notes B3]');
  const exact = (t: number) => zStar + Math.exp(-5 * t) * ((-1 - zStar) * Math.cos(w * t) + B * Math.sin(w * t));
  close(exact(2), -1.0099968966, 1e-10, 'z(2) [notes B3]');
  const rayleigh = scene.damping.rayleigh;
  close(rayleigh * k, d, 1e-12, 'scene damping mu k = d');
  // The ODE as y' = A y + (0, g): p = k/m, q = d/m, gravity g. The spring of rest length 1 to the origin is exactly
  // linear along the axis while the particle stays below the origin.
  const [p, q] = [k / m, d / m];
  const forcing = g + p * -1; // g_z + k l0 / m with l0 = -1
  const y0: Vec2 = [-1, -5];
  // Implicit Euler on the scene's own step (the explicit Euler limit [notes B3]: h < 0.01) and at 10x it: it matches
  // its linear recurrence, stays stable, and at h = 0.1 settles on the equilibrium within t = 2 [004 Fig. 2b].
  for (const h of [scene.dt, 0.1]) {
    const steps = Math.round(2 / h);
    const got = trajectory(start(model, 'implicit-euler', h, { rayleigh }), steps, 1);
    assertTrajectory(got, implicitEulerLinear(p, q, forcing, h, y0, steps), 1e-9, `implicit Euler h=${h}`);
    for (const [z] of got) assert.ok(Math.abs(z - zStar) <= 0.2, `implicit Euler h=${h}: z = ${z}`);
    if (h === 0.1) assert.ok(Math.abs(got[steps][0] - zStar) < 1e-9, `not at the equilibrium: ${got[steps][0]}`);
  }
  // Convergence toward the analytic solution at t = 0.2 (where the transient is still 37% of its size): BDF2 second
  // order, implicit Euler first [004 Fig. 5].
  const errorAt = (name: string, h: number) => {
    const steps = Math.round(0.2 / h);
    const got = trajectory(start(model, name, h, { rayleigh }), steps, 1);
    return Math.abs(got[steps][0] - exact(0.2));
  };
  const ieRatio = errorAt('implicit-euler', 0.002) / errorAt('implicit-euler', 0.001);
  const bdfRatio = errorAt('bdf2', 0.002) / errorAt('bdf2', 0.001);
  assert.ok(ieRatio > 1.8 && ieRatio < 2.2, `implicit Euler error ratio ${ieRatio}`);
  assert.ok(bdfRatio > 3.5 && bdfRatio < 4.5, `BDF2 error ratio ${bdfRatio}`);
  assert.ok(errorAt('bdf2', 0.001) < 2e-4, 'BDF2 at h = 0.001 is accurate');
});

test('seed 004 figure 7: non-staggered Verlet (symplectic Euler) on y\'\' = -5 y is bounded for h < 2/sqrt5 only', () => {
  // [004 Eqs. 43-45] v_n - v_{n-1} = h f(x_n), x_{n+1} - x_n = h v_n, equivalent to x_{n+1} - 2 x_n + x_{n-1} = h^2 f(x_n).
  // [notes B2.8, Z5] for y'' = -5 y the limit is h < 2/sqrt5 = 0.894427: h = 0.89 bounded, h = 0.9 blows up.
  const { scene, model } = builtin('seed004-undamped');
  assert.equal(scene.integrator.name, 'symplectic-euler');
  const xs = trajectory(start(model, 'symplectic-euler', 0.5), 50).map(([x]) => x);
  for (let n = 1; n < 50; n++) assert.ok(Math.abs(xs[n + 1] - 2 * xs[n] + xs[n - 1] + 0.25 * 5 * xs[n]) < 1e-12, `Eq. 43 at step ${n}`);
  const bounded = trajectory(start(model, 'symplectic-euler', 0.89), 2000);
  const peak = Math.max(...bounded.map(([x]) => Math.abs(x)));
  assert.ok(peak < 20, `h = 0.89: |x| reached ${peak}`);
  const late = Math.max(...bounded.slice(1000).map(([x]) => Math.abs(x)));
  assert.ok(late > 0.5 * peak, 'h = 0.89: no decay either (a bounded orbit)');
  const unstable = trajectory(start(model, 'symplectic-euler', 0.9), 200);
  // |eigenvalue| = 1.25 at h = 0.9: 1.25^200 ~ 2e19.
  assert.ok(Math.abs(unstable[200][0]) > 1e10, `h = 0.9: |x| only ${Math.abs(unstable[200][0])}`);
});

// ===============================================================================================================
// Seed 001

const SIMPLE_SPRING = { k: 1e5, m: 0.5, x0: [1.5, 0, 0] as [number, number, number], v0: [0, 10, 0] as [number, number, number] };

/** [001 Eq. 7] E = k/2 (|x|^2 - 1)^2, one particle on a squared-length spring to a fixed anchor at the origin. */
function simpleSpringModel(): Model {
  const base = oscillatorModel(SIMPLE_SPRING.m, 1, SIMPLE_SPRING.x0, SIMPLE_SPRING.v0);
  return { ...base, terms: [new SquaredLengthSprings(Uint32Array.from([0, 1]), Float64Array.from([SIMPLE_SPRING.k]), Float64Array.from([1]))] };
}

function radius(x: Float64Array): number {
  return Math.hypot(x[0], x[1], x[2]);
}

function angularMomentumZ(run: Run): number {
  const { x, v } = run.state;
  return SIMPLE_SPRING.m * (x[0] * v[1] - x[1] * v[0]);
}

test('seed 001 Eq. 7 simple spring: H0 = 78,150 J (not the quoted 25,000 J), implicit midpoint at h = 0.033 blows up with L_z conserved', () => {
  const model = simpleSpringModel();
  // The Newton tolerance 1e-12 h is below round-off for k = 1e5; 1e-9 h (3e-11 m) still pins the root.
  const im = start(model, 'implicit-midpoint', 0.033, { tolerance: 1e-9 });
  const h0 = im.dyn.hamiltonian(im.state.x, im.state.v);
  // [notes A4.3, Z3] 1/2 1e5 (1.5^2 - 1)^2 + 1/2 0.5 10^2 = 78,125 + 25 J; [001 section 3] says "around 25,000 J".
  assert.equal(h0, 78150);
  const l0 = angularMomentumZ(im);
  assert.equal(l0, 7.5);
  const radii: number[] = [];
  const energies: number[] = [];
  for (let i = 1; i <= 10; i++) {
    im.step();
    radii.push(radius(im.state.x));
    energies.push(im.dyn.hamiltonian(im.state.x, im.state.v));
    close(angularMomentumZ(im), l0, 1e-7, `L_z at step ${i} [001: IM conserves angular momentum]`);
  }
  // [001 Figs. 2-3] with h_large = 0.033 the spring extends beyond its initial 1.5 m in the first steps and the energy
  // grows "several orders of magnitude". [notes Z3] radius 0.539 (step 1), 2.367 (step 2), 3.695 (step 5);
  // H = 1.06e6 J (step 2), 1.86e7 J (step 9).
  close(radii[0], 0.539, 2e-3, 'radius, step 1');
  close(radii[1], 2.367, 2e-3, 'radius, step 2');
  close(radii[4], 3.695, 2e-3, 'radius, step 5');
  close(energies[1], 1.06e6, 5e-3, 'H, step 2');
  close(energies[8], 1.86e7, 5e-3, 'H, step 9');
  assert.ok(Math.max(...radii.slice(0, 6)) > 1.5, 'leaves the 1.5 m circle by t = 0.198 s');
  assert.ok(Math.max(...energies) > 100 * h0, 'energy grows by orders of magnitude');
});

test('seed 001 Eq. 7 simple spring: implicit midpoint at h = 0.00033 stays inside the 1.5 m circle up to t = 0.198 s', () => {
  // [001 Figs. 2-3] h_small = 0.00033 s: the spring stays within its initial radius. [notes Z3] max radius 1.49998,
  // H(0.198) = 77,507 J (-0.8%: IM's bounded energy oscillation).
  const im = start(simpleSpringModel(), 'implicit-midpoint', 0.00033, { tolerance: 1e-8 });
  const h0 = im.dyn.hamiltonian(im.state.x, im.state.v);
  let maxRadius = 0;
  let maxDrift = 0;
  for (let i = 1; i <= 600; i++) {
    im.step();
    maxRadius = Math.max(maxRadius, radius(im.state.x));
    maxDrift = Math.max(maxDrift, Math.abs(im.dyn.hamiltonian(im.state.x, im.state.v) / h0 - 1));
  }
  assert.ok(maxRadius <= 1.5, `radius reached ${maxRadius}`);
  assert.ok(maxRadius > 1.4999, `radius ${maxRadius}: the orbit should touch its starting radius`);
  assert.ok(maxDrift < 0.02, `energy drifted ${maxDrift}`);
  close(angularMomentumZ(im), 7.5, 1e-5, 'L_z at t = 0.198');
});

test('seed 001 Eq. 7 simple spring: blending keeps H within its 1% band at h = 0.033 where IM explodes and BE damps', () => {
  const model = simpleSpringModel();
  const blend = start(model, 'blending', 0.033, { tolerance: 1e-9 });
  const h0 = blend.dyn.hamiltonian(blend.state.x, blend.state.v);
  // [notes Z4] step 1 takes 1.6% forward Euler and L_z jumps from 7.5 to 52.2 (the FE velocity is ~2.5e4 m/s).
  const first = blend.step();
  assert.ok(first.alpha < -0.01 && first.alpha > -0.02, `step 1 alpha ${first.alpha}`);
  close(angularMomentumZ(blend), 52.2, 1e-2, 'L_z after step 1 [notes Z4]');
  // [001 Eq. 24] |H - H_total| < eps H with eps = 1%; [notes Z4] H/H0 in [0.98994, 1.01001] over 2000 steps.
  for (let i = 1; i <= 1000; i++) {
    if (i > 1) blend.step();
    const ratio = blend.dyn.hamiltonian(blend.state.x, blend.state.v) / h0;
    assert.ok(Math.abs(ratio - 1) <= 0.01 * (1 + 1e-9), `step ${i}: H/H0 = ${ratio}`);
  }
  // [001 section 1] backward Euler "underestimates the energy" and "loses angular momentum".
  const be = start(model, 'implicit-euler', 0.033, { tolerance: 1e-9 });
  for (let i = 0; i < 100; i++) be.step();
  assert.ok(be.dyn.hamiltonian(be.state.x, be.state.v) < 1e-3 * h0, 'BE keeps less than 0.1% of the energy');
  assert.ok(Math.abs(angularMomentumZ(be)) < 0.5 * 7.5, `BE L_z ${angularMomentumZ(be)}`);
});

/** Five particles (node 4 fixed), springs in a closed chain plus diagonals, gravity; zero rest length = convex, else not. */
function springNetwork(rand: () => number, hookean: boolean): Model {
  const n = 5;
  const x0 = Float64Array.from({ length: 3 * n }, () => 2 * rand() - 1);
  const v0 = Float64Array.from({ length: 3 * n }, (_, d) => (d >= 12 ? 0 : 2 * rand() - 1));
  const pairs = Uint32Array.from([0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 2, 1, 3]);
  const count = pairs.length / 2;
  const stiffness = Float64Array.from({ length: count }, () => 1 + 20 * rand());
  const rest = Float64Array.from({ length: count }, () => (hookean ? 0.5 + 1.5 * rand() : 0));
  const mass = Float64Array.from({ length: 3 * n }, (_, d) => 0.5 + 0.3 * Math.floor(d / 3));
  const constrained = Uint8Array.from({ length: 3 * n }, (_, d) => (d >= 12 ? 1 : 0));
  const terms = [new Springs(pairs, stiffness, rest), new Gravity(mass, [0, -9.8, 0])];
  return { nNodes: n, rest: x0, x0, v0, mass, constrained, motions: [], terms, bodies: [], surface: new Uint32Array(0) };
}

test('seed 001 appendices A and B: exactly solved forward Euler gains and backward Euler loses energy by the stated identities', () => {
  // [001 Eq. 43] FE:  H1 - H0 = [E(x1) - E(x0) - (x1 - x0).gradE(x0)] + h^2/2 |M^-1 gradE(x0)|_M^2
  // [001 Eq. 45] BE:  H0 - H1 = [E(x0) - E(x1) + (x1 - x0).gradE(x1)] + h^2/2 |M^-1 gradE(x1)|_M^2
  // Both hold for any E; the bracket (a Bregman divergence) is >= 0 when E is convex, so FE gains and BE loses.
  const rand = rng(1001);
  for (const hookean of [false, true]) {
    for (let trial = 0; trial < 6; trial++) {
      const model = springNetwork(rand, hookean);
      const h = 0.02 + 0.2 * rand();
      for (const name of ['explicit-euler', 'implicit-euler'] as const) {
        const run = start(model, name, h);
        const { dyn } = run;
        const x0 = new Float64Array(run.state.x);
        const H0 = dyn.hamiltonian(run.state.x, run.state.v);
        run.step();
        const x1 = run.state.x;
        const H1 = dyn.hamiltonian(x1, run.state.v);
        const at = name === 'explicit-euler' ? x0 : x1;
        const grad = new Float64Array(x0.length);
        dyn.gradient(at, grad);
        let dot = 0;
        let forceNorm = 0;
        for (let d = 0; d < x0.length; d++) {
          dot += (x1[d] - x0[d]) * grad[d];
          if (!model.constrained[d]) forceNorm += (grad[d] * grad[d]) / model.mass[d];
        }
        const scale = Math.abs(H0) + Math.abs(H1) + 0.5 * h * h * forceNorm;
        const kinetic = 0.5 * h * h * forceNorm;
        if (name === 'explicit-euler') {
          const bregman = dyn.potential(x1) - dyn.potential(x0) - dot;
          assert.ok(Math.abs(H1 - H0 - (bregman + kinetic)) <= 1e-12 * scale, `FE identity (hookean ${hookean}): ${H1 - H0} vs ${bregman + kinetic}`);
          if (!hookean) {
            assert.ok(bregman >= -1e-12 * scale, 'convex E: Bregman term >= 0');
            assert.ok(H1 > H0, 'FE gains energy on a convex potential');
          }
        } else {
          const bregman = dyn.potential(x0) - dyn.potential(x1) + dot;
          // The Newton tolerance 1e-12 h leaves a residual of that order in M (v1 - v0) + h gradE(x1).
          assert.ok(Math.abs(H0 - H1 - (bregman + kinetic)) <= 1e-9 * scale, `BE identity (hookean ${hookean}): ${H0 - H1} vs ${bregman + kinetic}`);
          if (!hookean) {
            assert.ok(bregman >= -1e-9 * scale, 'convex E: Bregman term >= 0');
            assert.ok(H1 < H0, 'BE loses energy on a convex potential');
          }
        }
      }
    }
  }
});

/** E_test of [001 Eq. 47] through the scene's springs: N2 = node 1 placed at (x, 0, 0). */
function appendixC(model: Model, dyn: Dynamics) {
  const x = new Float64Array(model.x0);
  const g = new Float64Array(x.length);
  const energy = (s: number) => {
    x[3] = s;
    return dyn.potential(x);
  };
  const slope = (s: number) => {
    x[3] = s;
    dyn.gradient(x, g);
    return g[3];
  };
  return { energy, slope };
}

test('seed 001 appendix C: the two-spring potential through the scene (E(0), x_max, beta) and backward Euler raising the energy', () => {
  const { scene, model } = builtin('seed001-two-springs');
  const run = start(model, 'implicit-euler', scene.dt);
  const { energy, slope } = appendixC(model, run.dyn);
  const k = 1;
  // [001 Eq. 47] E_test(x) = k (sqrt(x^2 + 1) - sqrt2)^2; [notes Z1] E_test(0) = (3 - 2 sqrt2) k = 0.1715729 k.
  close(energy(0), (3 - 2 * Math.SQRT2) * k, 1e-14, 'E_test(0)');
  close(energy(0.5), k * (Math.sqrt(1.25) - Math.SQRT2) ** 2, 1e-14, 'E_test(0.5)');
  assert.equal(energy(1), 0);
  // [001 Eq. 48] E'(x) = 2k (sqrt(x^2+1) - sqrt2) x / sqrt(x^2+1); its maximum on [-1, 1] by golden-section search.
  let [a, b] = [-1, 1];
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 80; i++) {
    const c = b - phi * (b - a);
    const d = a + phi * (b - a);
    if (slope(c) > slope(d)) b = d;
    else a = c;
  }
  const xMax = 0.5 * (a + b);
  close(xMax, -0.509825, 1e-5, 'x_max [notes Z1]');
  close(slope(xMax), 0.2650283 * k, 1e-6, "E'(x_max) [notes Z1]");
  // [001 Eq. 54] beta > 1 solves E(beta) = E(0) + (beta + 1) E'(x_max); [001 App. C] beta ~ 2.209, [notes Z1] 2.209477435.
  const f = (s: number) => energy(s) - energy(0) - (s + 1) * slope(xMax);
  let [lo, hi] = [1, 10];
  assert.ok(f(lo) < 0 && f(hi) > 0);
  for (let i = 0; i < 100; i++) {
    const mid = 0.5 * (lo + hi);
    if (f(mid) < 0) lo = mid;
    else hi = mid;
  }
  const beta = 0.5 * (lo + hi);
  close(beta, 2.209477435, 1e-8, 'beta');
  // [001 App. C] counterexample: x0 in (0, 1), v0 = -x0/h: x1 = 0, v1 = v0 solve BE exactly (E'(0) = 0), so the
  // kinetic energy stays and the potential climbs to E(0). Scene: x0 = 0.5, v0 = -5, h = 0.1 [notes Z1].
  const H0 = run.dyn.hamiltonian(run.state.x, run.state.v);
  run.step();
  assert.ok(Math.abs(run.state.x[3]) < 1e-9, `x1 = ${run.state.x[3]}`);
  close(run.state.v[3], -5, 1e-8, 'v1');
  const H1 = run.dyn.hamiltonian(run.state.x, run.state.v);
  close(H1 - H0, (3 - 2 * Math.SQRT2) * k - k * (Math.sqrt(1.25) - Math.SQRT2) ** 2, 1e-6, 'energy gain E(0) - E(0.5) = 0.0838506');
  assert.ok(H1 > H0);
});

test('seed 001 appendix C, Lemma 1 and Theorem 1: exact backward Euler on the two-spring potential stays below max(H0, Hc)', () => {
  // [001 Lemma 1] |x_{n+1}| > 1 implies H_{n+1} <= H_n. [001 Theorem 1] H_n <= max(H_0, H_c),
  // H_c = E(0) + m/2 ((beta + 1)/h)^2 (Eq. 61); beta = 2.209477435 [notes Z1]. [notes Z2] randomized runs with
  // h log-uniform in [1e-2, 10], x0, v0 in [-3, 3]: H rises in some steps, never above the bound.
  const { model } = builtin('seed001-two-springs');
  const rand = rng(47);
  const beta = 2.209477435;
  const e0 = 3 - 2 * Math.SQRT2;
  let increases = 0;
  let steps = 0;
  for (let trial = 0; trial < 16; trial++) {
    const h = Math.pow(10, -2 + 3 * rand());
    const x0 = -3 + 6 * rand();
    const v0 = -3 + 6 * rand();
    const m: Model = { ...model, x0: Float64Array.from(model.x0, (c, d) => (d === 3 ? x0 : c)) };
    const run = start(m, 'implicit-euler', h, { v0: Float64Array.from([0, 0, 0, v0, 0, 0, 0, 0, 0]) });
    const hc = e0 + 0.5 * ((beta + 1) / h) ** 2;
    let H = run.dyn.hamiltonian(run.state.x, run.state.v);
    const bound = Math.max(H, hc);
    for (let i = 0; i < 60; i++) {
      run.step();
      assert.equal(run.state.x[4], 0, 'N2 stays on the x axis');
      const next = run.dyn.hamiltonian(run.state.x, run.state.v);
      const slack = 1e-9 * Math.max(1, H);
      if (Math.abs(run.state.x[3]) > 1) assert.ok(next <= H + slack, `Lemma 1: H rose from ${H} to ${next} with |x| = ${Math.abs(run.state.x[3])}`);
      assert.ok(next <= bound + slack, `Theorem 1: H = ${next} > ${bound} (h = ${h})`);
      if (next > H + slack) increases++;
      steps++;
      H = next;
    }
  }
  // [001 Fig. 18] backward Euler's energy has "little bumps" on this non-convex potential.
  assert.ok(increases > 0, `no energy increase in ${steps} steps`);
});

test('the seed scenes load, build and run through simulate() without stopping', () => {
  const names = ['seed001-simple-spring', 'seed001-two-springs', 'seed004-dahlquist-stiff', 'seed004-overdamped', 'seed004-damped-spring', 'seed004-undamped'];
  for (const name of names) {
    const { scene, model } = builtin(name);
    assert.equal(scene.name, name, 'scene name = file name');
    const opts = toRunOptions(scene);
    if (name === 'seed001-simple-spring') opts.duration = 0.33; // 10 steps are enough to see the blow-up
    const energies: number[] = [];
    const radii: number[] = [];
    const result = simulate(model, opts, {
      step(record) {
        energies.push(record.total);
      },
      frame(_i, _t, x) {
        radii.push(Math.hypot(x[0], x[1], x[2]));
      },
    });
    assert.equal(result.summary.stopped, undefined, `${name}: ${result.summary.stopped}`);
    assert.equal(result.summary.steps, Math.round(opts.duration / opts.h), name);
    if (name === 'seed001-simple-spring') {
      // Eq. 7 with a squared-length spring: H0 = 1e5/2 (1.5^2 - 1)^2 + 0.5 * 0.5 * 10^2 = 78,125 + 25 J [001 Eq. 7].
      close(energies[0], 78150, 1e-12, 'simple-spring scene H0');
      assert.ok(Math.max(...radii.slice(0, 7)) > 1.5, 'IM leaves the 1.5 m circle by t = 0.198 s');
      assert.ok(Math.max(...energies) > 10 * energies[0], 'IM gains an order of magnitude of energy');
    }
  }
});
