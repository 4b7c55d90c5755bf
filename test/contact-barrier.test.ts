import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  barrier,
  barrierFirstDerivative,
  barrierSecondDerivative,
  edgeEdgeMollifier,
  edgeEdgeMollifierActive,
  edgeEdgeMollifierThreshold,
  mollifier,
  mollifierFirstDerivative,
  mollifierSecondDerivative,
} from '../src/contact/barrier.js';
import { edgeEdgeCrossSquaredNorm } from '../src/contact/distance.js';
import { rng } from './numeric-helpers.js';

const relErr = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-300);

for (const dhat2 of [1, 1e-6, 0.25e-6]) {
  test(`barrier derivatives match central differences (dhat^2 = ${dhat2})`, () => {
    const rand = rng(21);
    for (let k = 0; k < 200; k++) {
      const d = dhat2 * (0.01 + 0.98 * rand());
      const h = 1e-6 * d;
      const fd1 = (barrier(d + h, dhat2) - barrier(d - h, dhat2)) / (2 * h);
      const fd2 = (barrierFirstDerivative(d + h, dhat2) - barrierFirstDerivative(d - h, dhat2)) / (2 * h);
      const b1 = barrierFirstDerivative(d, dhat2);
      const b2 = barrierSecondDerivative(d, dhat2);
      // absolute floor scaled to the natural magnitudes of b' (~dhat2) and b'' (~1)
      assert.ok(Math.abs(fd1 - b1) < 1e-6 * Math.max(Math.abs(b1), dhat2 * 1e-3), `b' at ${d}: ${b1} vs ${fd1}`);
      assert.ok(Math.abs(fd2 - b2) < 1e-6 * Math.max(Math.abs(b2), 1e-3), `b'' at ${d}: ${b2} vs ${fd2}`);
    }
  });

  test(`barrier is C2 at dhat and has the right shape (dhat^2 = ${dhat2})`, () => {
    assert.equal(barrier(dhat2, dhat2), 0);
    assert.equal(barrierFirstDerivative(dhat2, dhat2), 0);
    assert.equal(barrierSecondDerivative(dhat2, dhat2), 0);
    assert.equal(barrier(2 * dhat2, dhat2), 0);
    assert.equal(barrierSecondDerivative(2 * dhat2, dhat2), 0);
    // From below, d = dhat2 (1 - eps): b ~ eps^3 dhat2^2, b' ~ -3 eps^2 dhat2, b'' ~ 6 eps.
    let prev = [Infinity, Infinity, Infinity];
    for (const eps of [1e-2, 1e-3, 1e-4, 1e-5]) {
      const d = dhat2 * (1 - eps);
      const v = [
        barrier(d, dhat2) / (dhat2 * dhat2),
        barrierFirstDerivative(d, dhat2) / dhat2,
        barrierSecondDerivative(d, dhat2),
      ];
      const ok = Math.abs(v[0]) < 1.1 * eps ** 3 && Math.abs(v[1]) < 3.3 * eps ** 2 && Math.abs(v[2]) < 6.6 * eps;
      assert.ok(ok, `${v} at ${eps}`);
      for (let i = 0; i < 3; i++) assert.ok(Math.abs(v[i]) < Math.abs(prev[i]));
      prev = v.map(Math.abs);
    }
    // Closed form at d = dhat2/e: -(d - D)^2 ln(1/e) = (D (1 - 1/e))^2.
    const d = dhat2 / Math.E;
    assert.ok(relErr(barrier(d, dhat2), (dhat2 * (1 - 1 / Math.E)) ** 2) < 1e-14);
    // Positive, decreasing, convex inside; unbounded at contact.
    const rand = rng(22);
    for (let k = 0; k < 100; k++) {
      const x = dhat2 * (1e-6 + (1 - 2e-6) * rand());
      assert.ok(barrier(x, dhat2) > 0 && barrierFirstDerivative(x, dhat2) < 0 && barrierSecondDerivative(x, dhat2) > 0);
    }
    assert.equal(barrier(0, dhat2), Infinity);
    assert.equal(barrier(-dhat2, dhat2), Infinity);
    assert.ok(barrier(1e-12 * dhat2, dhat2) > 20 * dhat2 * dhat2);
  });
}

test('scalar mollifier: derivatives match FD, C1 at eps_x, zero at x = 0', () => {
  const eps = 0.036;
  assert.equal(mollifier(0, eps), 0);
  assert.equal(mollifier(eps, eps), 1);
  assert.equal(mollifier(2 * eps, eps), 1);
  assert.equal(mollifierFirstDerivative(eps, eps), 0);
  assert.ok(Math.abs(mollifier(eps * (1 - 1e-6), eps) - 1) < 1e-11);
  assert.ok(Math.abs(mollifierFirstDerivative(eps * (1 - 1e-6), eps)) < 1e-4);
  const rand = rng(23);
  for (let k = 0; k < 100; k++) {
    const x = eps * (0.01 + 0.98 * rand());
    const h = 1e-6 * eps;
    const fd1 = (mollifier(x + h, eps) - mollifier(x - h, eps)) / (2 * h);
    const fd2 = (mollifierFirstDerivative(x + h, eps) - mollifierFirstDerivative(x - h, eps)) / (2 * h);
    assert.ok(Math.abs(fd1 - mollifierFirstDerivative(x, eps)) < 1e-7 / eps);
    assert.ok(relErr(fd2, mollifierSecondDerivative(x, eps)) < 1e-6);
  }
});

test('mollifier threshold from rest edges: 1e-3 |ea|^2 |eb|^2', () => {
  const rest = Float64Array.from([0, 0, 0, 2, 0, 0, 5, 5, 5, 5, 8, 5]);
  assert.ok(relErr(edgeEdgeMollifierThreshold(rest), 1e-3 * 4 * 9) < 1e-15);
});

test('edge-edge mollifier gradient and Hessian w.r.t. the 12 coordinates match FD', () => {
  const rand = rng(24);
  const g = new Float64Array(12);
  const H = new Float64Array(144);
  const gp = new Float64Array(12);
  const gm = new Float64Array(12);
  let active = 0;
  for (let k = 0; k < 30; k++) {
    const x0 = new Float64Array(12);
    for (let i = 0; i < 12; i++) x0[i] = 2 * rand() - 1;
    // eps_x above the current |ea x eb|^2 so the quadratic branch is active
    const c = edgeEdgeCrossSquaredNorm(x0);
    const eps = c * (1.2 + 2 * rand());
    assert.ok(edgeEdgeMollifierActive(x0, eps));
    active++;
    edgeEdgeMollifier(x0, eps, g, H);
    const x = Float64Array.from(x0);
    let gScale = 1e-12;
    let hScale = 1e-12;
    for (let i = 0; i < 12; i++) gScale = Math.max(gScale, Math.abs(g[i]));
    for (let i = 0; i < 144; i++) hScale = Math.max(hScale, Math.abs(H[i]));
    for (let i = 0; i < 12; i++) {
      const h = 1e-6;
      x[i] = x0[i] + h;
      const fp = edgeEdgeMollifier(x, eps, gp, null);
      x[i] = x0[i] - h;
      const fm = edgeEdgeMollifier(x, eps, gm, null);
      x[i] = x0[i];
      assert.ok(Math.abs((fp - fm) / (2 * h) - g[i]) < 1e-6 * gScale, `grad ${i}`);
      for (let j = 0; j < 12; j++) {
        assert.ok(Math.abs((gp[j] - gm[j]) / (2 * h) - H[12 * j + i]) < 1e-5 * hScale, `hess ${j},${i}`);
      }
    }
    // Outside the active range: m = 1 and no derivatives.
    assert.equal(edgeEdgeMollifier(x0, 0.5 * c, g, H), 1);
    assert.ok(g.every((v) => v === 0) && H.every((v) => v === 0));
  }
  assert.equal(active, 30);
});
