import { test } from 'node:test';
import assert from 'node:assert/strict';
import { integratorNames } from '../src/integrators/registry.js';
import { newCounters, type IntegratorState } from '../src/integrators/integrator.js';
import { solveAlpha } from '../src/integrators/a-search.js';
import { defaultEnergyTarget } from '../src/integrators/energy-target.js';
import { defaultSolverOptions, simulate } from '../src/sim/simulate.js';
import { makeIntegrator, oscillatorModel } from './helpers.js';

/** Runs `steps` steps of `name` on the oscillator (m, k) from (x0, v0) along x; returns the states. */
function run(name: string, h: number, steps: number, x0: number, v0: number, opts: { m?: number; k?: number; params?: Record<string, number | boolean> } = {}) {
  const m = opts.m ?? 1;
  const k = opts.k ?? 1;
  const model = oscillatorModel(m, k, [x0, 0, 0], [v0, 0, 0]);
  const { integrator, dyn, target } = makeIntegrator(model, name, opts.params ?? {});
  const state: IntegratorState = { t: 0, x: new Float64Array(model.x0), v: new Float64Array(model.v0) };
  target.reset(dyn.hamiltonian(state.x, state.v));
  const xs = [x0];
  const vs = [v0];
  const alphas: number[] = [];
  for (let s = 0; s < steps; s++) {
    const t = state.t;
    const r = integrator.step(state, h, newCounters());
    target.advance(t, h, r.dissipated);
    xs.push(state.x[0]);
    vs.push(state.v[0]);
    alphas.push(r.alpha);
    assert.equal(state.x[1], 0);
    assert.equal(state.x[3], 0, 'the anchor must not move');
  }
  const energy = (i: number) => 0.5 * m * vs[i] * vs[i] + 0.5 * k * xs[i] * xs[i];
  return { xs, vs, alphas, energy };
}

/** The one-step matrix Q of an integrator on the oscillator, column by column from unit initial states. */
function oneStepMatrix(name: string, h: number, opts: { m?: number; k?: number; params?: Record<string, number | boolean> } = {}) {
  const a = run(name, h, 1, 1, 0, opts);
  const b = run(name, h, 1, 0, 1, opts);
  const Q = [
    [a.xs[1], b.xs[1]],
    [a.vs[1], b.vs[1]],
  ];
  return { Q, det: Q[0][0] * Q[1][1] - Q[0][1] * Q[1][0], trace: Q[0][0] + Q[1][1] };
}

function close(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${what}: got ${actual}, expected ${expected}`);
}

test('every integrator of the issue is registered under its CLI name', () => {
  const wanted = ['explicit-euler', 'symplectic-euler', 'rk4', 'implicit-euler', 'bdf2', 'implicit-midpoint', 'trapezoidal', 'newmark', 'sdirk2', 'tr-bdf2', 'blending', 'a-1', 'a-search'];
  for (const name of wanted) assert.ok(integratorNames.includes(name), name);
});

test('A-search with fixed alpha reproduces seed 000 appendix C one-step matrix (det, trace, entries)', () => {
  for (const [m, k] of [
    [1, 1],
    [2, 50],
  ]) {
    for (const h of [0.01, 0.1, 1, 10]) {
      for (const alpha of [0, 0.5, 1, 1.1, 2]) {
        const hb = (h * h * k) / m;
        const { Q, det, trace } = oneStepMatrix('a-1', h, { m, k, params: { alpha } });
        const s = 1 / (1 + hb);
        const expected = [
          [s, s * h],
          [(-s * h * k * (1 + alpha * hb)) / m, s * (1 + alpha * hb)],
        ];
        for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) close(Q[i][j], expected[i][j], 1e-9, `Q[${i}][${j}] h=${h} alpha=${alpha} k/m=${k / m}`);
        close(det, 1 + ((alpha - 1) * hb) / (1 + hb), 1e-9, `det h=${h} alpha=${alpha}`);
        close(trace, (2 + alpha * hb) / (1 + hb), 1e-9, `trace h=${h} alpha=${alpha}`);
      }
    }
  }
});

test('alpha = 0 equals implicit Euler exactly', () => {
  const a = run('a-1', 0.3, 50, 1, 0.5, { params: { alpha: 0 } });
  const b = run('implicit-euler', 0.3, 50, 1, 0.5);
  assert.deepEqual(a.xs, b.xs);
  assert.deepEqual(a.vs, b.vs);
});

test('trapezoidal and implicit midpoint conserve the oscillator energy to round-off', () => {
  for (const name of ['trapezoidal', 'implicit-midpoint']) {
    for (const h of [0.1, 1, 10]) {
      const r = run(name, h, 200, 1, 0.3);
      const e0 = r.energy(0);
      for (let i = 1; i <= 200; i++) close(r.energy(i), e0, 1e-10, `${name} h=${h} step ${i}`);
    }
  }
});

test('A-1 keeps the oscillator energy bounded without decay over 10^4 steps at h^2 k/m = 100', () => {
  const r = run('a-1', 10, 10000, 1, 0);
  const e0 = r.energy(0);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i <= 10000; i++) {
    lo = Math.min(lo, r.energy(i));
    hi = Math.max(hi, r.energy(i));
  }
  // det Q = 1 and |tr Q| < 2: a bounded rotation in a sheared frame. The energy swings but neither drifts nor decays.
  assert.ok(hi / e0 < 200, `energy grew to ${hi / e0} x`);
  assert.ok(lo / e0 > 1e-3 || lo >= 0, 'energy went negative');
  // No secular decay: the last 1000 steps reach the same peak as the first 1000 (to 1%).
  const peak = (from: number, to: number) => Math.max(...Array.from({ length: to - from }, (_, i) => r.energy(from + i)));
  close(peak(9000, 10001), peak(0, 1001), 1e-2, 'peak energy late vs early');
  // Implicit Euler at the same step loses everything.
  const ie = run('implicit-euler', 10, 100, 1, 0);
  assert.ok(ie.energy(100) < 1e-100 * e0 || ie.energy(100) / e0 < 1e-10);
});

test('A-search meets the energy target whenever alpha is not clipped, and keeps it in the long run', () => {
  // With a wide alpha range the target is always reachable on the oscillator: energy is conserved every step.
  // Cross-check against an independent scalar implementation of Algorithm 1 (k = m = 1, alpha in [0, 10]).
  const wide = run('a-search', 0.5, 400, 1, 0, { params: { alphaMax: 10 } });
  const e0 = wide.energy(0);
  let x = 1;
  let v = 0;
  let met = 0;
  for (let i = 1; i <= 400; i++) {
    const h = 0.5;
    const x1 = (x + h * v) / (1 + h * h);
    const w = (x1 - x) / h;
    const dv = h * (x - x1);
    const qa = 0.5 * dv * dv;
    const qb = -w * dv;
    const qc = 0.5 * w * w + 0.5 * x1 * x1 - e0;
    const disc = qb * qb - 4 * qa * qc;
    let a: number;
    if (disc < 0) a = -qb / (2 * qa);
    else {
      const r1 = (-qb - Math.sqrt(disc)) / (2 * qa);
      const r2 = (-qb + Math.sqrt(disc)) / (2 * qa);
      a = Math.abs(r1 - 1) <= Math.abs(r2 - 1) ? r1 : r2;
    }
    a = Math.min(10, Math.max(0, a));
    v = w - a * dv;
    x = x1;
    close(wide.xs[i], x, 1e-9, `x step ${i}`);
    close(wide.vs[i], v, 1e-9, `v step ${i}`);
    assert.ok(wide.energy(i) <= e0 * (1 + 1e-9), `step ${i}: energy above the target`);
    if (Math.abs(wide.energy(i) - e0) <= 1e-9 * e0) met++;
  }
  assert.ok(met >= 300, `the target was met on only ${met} of 400 steps`);
  // The paper's [0, 1.1]: at h = 0.5 the first step would need alpha = 2 (H(alpha) = 0.32 + 0.08 (1 + alpha/4)^2),
  // so it is clipped and loses energy for a while; where alpha is inside the range the target is met exactly,
  // and over the run the energy comes back (no drift).
  const r = run('a-search', 0.5, 400, 1, 0);
  let unclipped = 0;
  for (let i = 1; i <= 400; i++) {
    const a = r.alphas[i - 1];
    assert.ok(a >= 0 && a <= 1.1, `alpha ${a} outside [0, 1.1]`);
    if (a > 1e-12 && a < 1.1 - 1e-12) {
      unclipped++;
      close(r.energy(i), e0, 1e-9, `unclipped step ${i}`);
    }
  }
  assert.ok(unclipped > 100, `only ${unclipped} unclipped steps`);
  const early = Array.from({ length: 100 }, (_, i) => r.energy(1 + i));
  const late = Array.from({ length: 100 }, (_, i) => r.energy(301 + i));
  assert.ok(Math.max(...late) >= 0.999 * e0, 'energy does not return to the target');
  assert.ok(Math.min(...late) >= 0.99 * Math.min(...early), 'the energy dips grow over time (drift)');
});

test('A-search follows an exponential decay schedule toward the ground energy', () => {
  const model = oscillatorModel(1, 1, [1, 0, 0], [0, 0, 0]);
  const tau = 5;
  const { integrator, dyn, target } = makeIntegrator(model, 'a-search', { alphaMax: 10 }, undefined, { scale: 0.9, ground: 0.1, decay: [{ from: 2, tau }] });
  const state: IntegratorState = { t: 0, x: new Float64Array(model.x0), v: new Float64Array(model.v0) };
  const h0 = dyn.hamiltonian(state.x, state.v);
  target.reset(h0);
  const h = 0.1;
  for (let s = 1; s <= 100; s++) {
    const t = state.t;
    const r = integrator.step(state, h, newCounters());
    target.advance(t, h, r.dissipated);
    const tNew = s * h;
    const expected = tNew <= 2 + 1e-9 ? 0.9 * h0 : 0.1 + Math.exp(-(tNew - 2) / tau) * (0.9 * h0 - 0.1);
    close(target.value, expected, 1e-12, `target at t = ${tNew}`);
    if (r.alpha > 0) close(dyn.hamiltonian(state.x, state.v), expected, 1e-9, `energy at t = ${tNew}`);
  }
});

test('solveAlpha: nearest root to 1, vertex without a root, clipping, free-fall convention', () => {
  // (alpha - 0.9)(alpha - 3) = alpha^2 - 3.9 alpha + 2.7: nearest root to 1 is 0.9.
  close(solveAlpha(1, -3.9, 2.7, 0, 1.1, 1), 0.9, 1e-12, 'nearest root');
  // (alpha - 1.5)^2 + 1 has no root: vertex 1.5, clipped to 1.1.
  close(solveAlpha(1, -3, 3.25, 0, 1.1, 1), 1.1, 1e-12, 'vertex clipped');
  close(solveAlpha(1, -3, 3.25, 0, 2, 1), 1.5, 1e-12, 'vertex');
  // Roots -2 and -0.5: nearest to 1 is -0.5, clipped to alphaMin = 0.
  close(solveAlpha(1, 2.5, 1, 0, 1.1, 1), 0, 1e-12, 'clip low');
  // No force difference: below the target -> alphaMax; above -> alphaMin.
  assert.equal(solveAlpha(0, 0, -1, 0, 1.1, 1), 1.1);
  assert.equal(solveAlpha(0, 0, 1, 0, 1.1, 1), 0);
});

test('implicit Euler and BDF2 dissipate; BDF2 less than implicit Euler; both match their linear recurrences', () => {
  const h = 0.2;
  const ie = run('implicit-euler', h, 100, 1, 0);
  const bdf = run('bdf2', h, 100, 1, 0);
  // Closed-form IE: (x1, v1) solves x1 = x0 + h v1, v1 = v0 - h x1.
  let x = 1;
  let v = 0;
  for (let i = 1; i <= 100; i++) {
    const x1 = (x + h * v) / (1 + h * h);
    v = (x1 - x) / h;
    x = x1;
    close(ie.xs[i], x, 1e-9, `IE x step ${i}`);
  }
  // Closed-form BDF2 after an IE start: x1 = 4/3 x_n - 1/3 x_{n-1} + 2/3 h v1, v1 = 4/3 v_n - 1/3 v_{n-1} - 2/3 h x1.
  const xs = [bdf.xs[0], bdf.xs[1]];
  const vs = [bdf.vs[0], bdf.vs[1]];
  close(xs[1], ie.xs[1], 1e-12, 'BDF2 starts with IE');
  for (let i = 2; i <= 100; i++) {
    const c = (2 / 3) * h;
    const xh = (4 * xs[i - 1] - xs[i - 2]) / 3;
    const vh = (4 * vs[i - 1] - vs[i - 2]) / 3;
    const x1 = (xh + c * vh) / (1 + c * c);
    xs.push(x1);
    vs.push(vh - c * x1);
    close(bdf.xs[i], x1, 1e-8, `BDF2 x step ${i}`);
  }
  assert.ok(ie.energy(100) < 0.5 * ie.energy(0));
  assert.ok(bdf.energy(100) < bdf.energy(0));
  assert.ok(bdf.energy(100) > ie.energy(100));
});

/** |R(i h)|^2 and 2 Re R(i h) of a lower-triangular Runge-Kutta tableau, for the oscillator's eigenvalue i. */
function stability(A: number[][], b: number[], h: number): { det: number; trace: number } {
  const s = b.length;
  const y: Array<[number, number]> = [];
  for (let i = 0; i < s; i++) {
    let re = 1;
    let im = 0;
    for (let j = 0; j < i; j++) {
      // += z a_ij y_j with z = i h
      re += -h * A[i][j] * y[j][1];
      im += h * A[i][j] * y[j][0];
    }
    // divide by (1 - z a_ii) = 1 - i h a_ii
    const dr = 1;
    const di = -h * A[i][i];
    const den = dr * dr + di * di;
    y.push([(re * dr + im * di) / den, (im * dr - re * di) / den]);
  }
  let Rr = 1;
  let Ri = 0;
  for (let i = 0; i < s; i++) {
    Rr += -h * b[i] * y[i][1];
    Ri += h * b[i] * y[i][0];
  }
  return { det: Rr * Rr + Ri * Ri, trace: 2 * Rr };
}

test('SDIRK2 and TR-BDF2 match their stability functions on the oscillator (seed 002 tableaux)', () => {
  const g = 2 - Math.SQRT2;
  const beta = Math.SQRT2 / 4;
  const tableaux: Record<string, { A: number[][]; b: number[] }> = {
    sdirk2: { A: [[0, 0, 0], [g / 2, g / 2, 0], [beta, beta, g / 2]], b: [beta, beta, g / 2] },
    'tr-bdf2': { A: [[0, 0, 0], [0.25, 0.25, 0], [1 / 3, 1 / 3, 1 / 3]], b: [1 / 3, 1 / 3, 1 / 3] },
  };
  for (const [name, { A, b }] of Object.entries(tableaux)) {
    for (const h of [0.1, 1, 5, 50]) {
      const { det, trace } = oneStepMatrix(name, h);
      const expected = stability(A, b, h);
      close(det, expected.det, 1e-8, `${name} det h=${h}`);
      close(trace, expected.trace, 1e-8, `${name} trace h=${h}`);
    }
  }
});

test('explicit methods match their stability functions', () => {
  for (const h of [0.1, 0.5, 1.5]) {
    const fe = oneStepMatrix('explicit-euler', h);
    close(fe.det, 1 + h * h, 1e-12, 'explicit Euler det');
    const se = oneStepMatrix('symplectic-euler', h);
    close(se.det, 1, 1e-12, 'symplectic Euler det');
    close(se.trace, 2 - h * h, 1e-12, 'symplectic Euler trace');
    const rk = oneStepMatrix('rk4', h);
    const z2 = h * h;
    const re = 1 - z2 / 2 + (z2 * z2) / 24;
    const im = h - (h * z2) / 6;
    close(rk.det, re * re + im * im, 1e-12, 'RK4 det');
    close(rk.trace, 2 * re, 1e-12, 'RK4 trace');
  }
});

test('Newmark(beta, gamma) matches its closed-form linear recurrence', () => {
  const h = 0.4;
  const beta = 0.3;
  const gamma = 0.6;
  const r = run('newmark', h, 50, 1, 0.2, { params: { beta, gamma } });
  let x = 1;
  let v = 0.2;
  let a = -x;
  for (let i = 1; i <= 50; i++) {
    // x1 = x + h v + h^2 ((1/2 - beta) a + beta a1), a1 = -x1
    const x1 = (x + h * v + h * h * (0.5 - beta) * a) / (1 + beta * h * h);
    const a1 = -x1;
    v += h * ((1 - gamma) * a + gamma * a1);
    x = x1;
    a = a1;
    close(r.xs[i], x, 1e-9, `x step ${i}`);
    close(r.vs[i], v, 1e-9, `v step ${i}`);
  }
});

test('blending keeps the oscillator energy within its 1% tolerance', () => {
  const r = run('blending', 0.5, 300, 1, 0);
  const e0 = r.energy(0);
  for (let i = 1; i <= 300; i++) assert.ok(Math.abs(r.energy(i) - e0) <= 0.0101 * e0, `step ${i}: ${r.energy(i)} vs ${e0}`);
});

test('simulate() keeps multistep history: BDF2 and A-search through the time loop equal direct stepping', () => {
  // The loop must not disturb the state between steps (BDF2 restarts with implicit Euler when it sees a state
  // it did not produce): 0.1 s steps make step * h and repeated additions differ in the last bits.
  for (const name of ['bdf2', 'a-search', 'newmark']) {
    const direct = run(name, 0.1, 200, 1, 0.3);
    const model = oscillatorModel(1, 1, [1, 0, 0], [0.3, 0, 0]);
    const xs: number[] = [];
    simulate(
      model,
      {
        sceneName: 'oscillator',
        integrator: name,
        params: {},
        h: 0.1,
        duration: 20,
        frameRate: 10,
        solver: { ...defaultSolverOptions, linear: 'ldlt', tolerance: 1e-12 },
        rayleigh: 0,
        energy: defaultEnergyTarget,
        blowUpFactor: 1e3,
      },
      { frame: (_i, _t, x) => void xs.push(x[0]) },
    );
    assert.equal(xs.length, 201);
    for (let i = 0; i <= 200; i++) close(xs[i], direct.xs[i], 1e-9, `${name} step ${i}`);
  }
});
