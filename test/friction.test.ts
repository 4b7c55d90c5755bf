import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EdgeEdgeDistanceType,
  PointTriangleDistanceType,
  edgeEdgeDistance2,
  edgeEdgeDistanceType,
  pointTriangleDistance2,
  pointTriangleDistanceType,
} from '../src/contact/distance.js';
import {
  edgeEdgeFrictionBasis,
  f0,
  f1,
  f1Derivative,
  f1OverY,
  f2Term,
  frictionDissipation,
  frictionLocal,
  frictionTangentialDisplacement,
  planeFrictionBasis,
  vertexTriangleFrictionBasis,
} from '../src/contact/friction.js';
import { symmetricEigen } from '../src/math/eigen-sym.js';
import { centralDifferenceGradient, centralDifferenceJacobian, maxAbs, maxAbsDiff, rng } from './numeric-helpers.js';

const EPS = 1e-3;

function dot(a: ArrayLike<number>, b: ArrayLike<number>, ao = 0, bo = 0): number {
  return a[ao] * b[bo] + a[ao + 1] * b[bo + 1] + a[ao + 2] * b[bo + 2];
}

function weightedSum(x: ArrayLike<number>, n: number, w: ArrayLike<number>): Float64Array {
  const s = new Float64Array(3);
  for (let i = 0; i < n; i++) for (let c = 0; c < 3; c++) s[c] += w[i] * x[3 * i + c];
  return s;
}

function minEig(A: Float64Array, n: number): number {
  const values = new Float64Array(n);
  symmetricEigen(A, n, values, new Float64Array(n * n), new Float64Array(n * n));
  return Math.min(...values);
}

/** Checks P is orthonormal and, when given, orthogonal to the unit vector nrm. Returns the worst deviation. */
function basisError(P: Float64Array, nrm: ArrayLike<number> | null): number {
  let e = Math.max(Math.abs(dot(P, P) - 1), Math.abs(dot(P, P, 3, 3) - 1), Math.abs(dot(P, P, 0, 3)));
  if (nrm !== null) e = Math.max(e, Math.abs(dot(P, nrm)), Math.abs(dot(P, nrm, 3, 0)));
  return e;
}

test('mollifier: f1 = f0\', f1\' = FD of f1, f2Term = (f1\' y - f1)/y^3, limits and continuity at eps', () => {
  const h = 1e-9;
  for (const y of [1e-5, 1e-4, 3e-4, 5e-4, 9e-4, 0.99e-3, 1.01e-3, 2e-3, 0.1, 3]) {
    const df0 = (f0(y + h, EPS) - f0(y - h, EPS)) / (2 * h);
    assert.ok(Math.abs(df0 - f1(y, EPS)) < 1e-6, `f0' at ${y}`);
    const df1 = (f1(y + h, EPS) - f1(y - h, EPS)) / (2 * h);
    assert.ok(Math.abs(df1 - f1Derivative(y, EPS)) < 1e-3 * Math.max(1, 1 / EPS), `f1' at ${y}`);
    assert.ok(Math.abs(f1OverY(y, EPS) - f1(y, EPS) / y) <= 1e-12 * Math.abs(f1OverY(y, EPS)), `f1/y at ${y}`);
    const expected = (df1 * y - f1(y, EPS)) / (y * y * y);
    assert.ok(Math.abs(f2Term(y, EPS) - expected) <= 1e-5 * Math.abs(expected), `f2Term at ${y}`);
  }
  // Values at 0 and the eps/3 offset; the limit 2/eps of f1/y.
  assert.equal(f0(0, EPS), EPS / 3);
  assert.equal(f1(0, EPS), 0);
  assert.ok(Math.abs(f1OverY(0, EPS) - 2 / EPS) < 1e-9);
  assert.ok(Math.abs(f1Derivative(0, EPS) - 2 / EPS) < 1e-9);
  // C2 at eps: f0, f1, f1' continuous.
  const below = EPS * (1 - 1e-12);
  const above = EPS * (1 + 1e-12);
  assert.ok(Math.abs(f0(below, EPS) - f0(above, EPS)) < 1e-14);
  assert.ok(Math.abs(f1(below, EPS) - f1(above, EPS)) < 1e-10);
  assert.ok(Math.abs(f1Derivative(below, EPS) - f1Derivative(above, EPS)) < 1e-6);
  assert.ok(Math.abs(f0(EPS, EPS) - EPS) < 1e-18);
  // f0 increasing and f1 within [0, 1].
  for (let k = 0; k <= 40; k++) {
    const y = (k / 20) * EPS;
    assert.ok(f1(y, EPS) >= 0 && f1(y, EPS) <= 1);
    assert.ok(f1Derivative(y, EPS) >= 0);
  }
});

interface Contact {
  n: number;
  w: Float64Array;
  P: Float64Array;
  xn: Float64Array;
  normal: Float64Array;
}

/** A random contact of each kind: at x_n, the vertex-triangle and edge-edge stencils are random 4-node sets. */
function randomContact(rand: () => number, kind: number): Contact {
  const w = new Float64Array(4);
  const P = new Float64Array(6);
  if (kind === 0) {
    const normal = Float64Array.from([rand() - 0.5, rand() - 0.5, rand() + 0.2]);
    const n = planeFrictionBasis(normal, w, P);
    const len = Math.hypot(normal[0], normal[1], normal[2]);
    for (let c = 0; c < 3; c++) normal[c] /= len;
    return { n, w, P, xn: Float64Array.from([rand(), rand(), rand()]), normal };
  }
  const xn = new Float64Array(12);
  for (let i = 0; i < 12; i++) xn[i] = 2 * rand() - 1;
  const n =
    kind === 1
      ? vertexTriangleFrictionBasis(xn, pointTriangleDistanceType(xn), w, P)
      : edgeEdgeFrictionBasis(xn, edgeEdgeDistanceType(xn), w, P);
  const normal = weightedSum(xn, 4, w);
  const len = Math.hypot(normal[0], normal[1], normal[2]);
  for (let c = 0; c < 3; c++) normal[c] /= len;
  return { n, w, P, xn, normal };
}

/** The stencil vertex with the largest |w_i| (edge-edge weights may vanish at vertex 0). */
function heaviest(c: Contact): number {
  let best = 0;
  for (let i = 1; i < c.n; i++) if (Math.abs(c.w[i]) > Math.abs(c.w[best])) best = i;
  return best;
}

/** x = x_n + (a displacement of one vertex giving tangential slip of length `slip`) + normal motion + noise. */
function displaced(rand: () => number, c: Contact, slip: number, noise: number): Float64Array {
  const x = Float64Array.from(c.xn);
  const v = heaviest(c);
  const a = 2 * Math.PI * rand();
  const along = Math.cos(a) * slip;
  const across = Math.sin(a) * slip;
  const normalMove = (rand() - 0.5) * 0.01;
  for (let k = 0; k < 3; k++) x[3 * v + k] += (along * c.P[k] + across * c.P[3 + k] + normalMove * c.normal[k]) / c.w[v];
  for (let i = 0; i < 3 * c.n; i++) x[i] += noise * (2 * rand() - 1);
  return x;
}

test('frictionLocal: gradient and Hessian against central differences, in the static and sliding regimes', () => {
  const rand = rng(11);
  const mu = 0.4;
  const lambda = 2.5;
  const G = mu * lambda;
  let worstG = 0;
  let worstH = 0;
  for (let trial = 0; trial < 60; trial++) {
    const kind = trial % 3;
    const c = randomContact(rand, kind);
    const dim = 3 * c.n;
    // Slips from well inside the static zone to well into sliding, keeping away from the C2 seam at eps.
    const slips = [0.05, 0.3, 0.7, 1.6, 4];
    const x = displaced(rand, c, slips[Math.floor(trial / 3) % slips.length] * EPS, 1e-6);
    const y = frictionTangentialDisplacement(x, c.xn, c.n, c.w, c.P, new Float64Array(2));
    if (Math.abs(y - EPS) < 0.02 * EPS) continue;
    const grad = new Float64Array(dim);
    const hess = new Float64Array(dim * dim);
    frictionLocal(x, c.xn, c.n, c.w, c.P, mu, lambda, EPS, grad, hess);
    const D = (z: Float64Array): number => frictionLocal(z, c.xn, c.n, c.w, c.P, mu, lambda, EPS, null, null);
    const gFd = centralDifferenceGradient(D, x, 1, 1e-8);
    const gErr = maxAbsDiff(grad, gFd) / G;
    worstG = Math.max(worstG, gErr);
    assert.ok(gErr < 1e-5, `gradient trial ${trial}: ${gErr}`);
    const gradField = (z: Float64Array, out: Float64Array): void => {
      frictionLocal(z, c.xn, c.n, c.w, c.P, mu, lambda, EPS, out, null);
    };
    const hFd = centralDifferenceJacobian(gradField, x, 1e-9);
    const hErr = maxAbsDiff(hess, hFd) / (G / EPS);
    worstH = Math.max(worstH, hErr);
    assert.ok(hErr < 1e-4, `Hessian trial ${trial} (|u|/eps = ${y / EPS}): ${hErr}`);
    // Sliding: the friction force has the full Coulomb magnitude mu lambda on the (w-weighted) stencil.
    if (y > EPS) {
      const v = heaviest(c);
      const g3 = Math.hypot(grad[3 * v], grad[3 * v + 1], grad[3 * v + 2]) / Math.abs(c.w[v]);
      assert.ok(Math.abs(g3 - G) < 1e-12 * G);
    }
  }
  console.log(`friction FD: worst gradient error ${worstG.toExponential(2)} (rel. mu lambda), Hessian ${worstH.toExponential(2)} (rel. mu lambda/eps)`);
});

test('frictionLocal: Hessian is PSD and equals the unprojected formula (the mollifier needs no projection)', () => {
  const rand = rng(12);
  const mu = 0.3;
  const lambda = 7;
  const G = mu * lambda;
  const uv = new Float64Array(2);
  for (let trial = 0; trial < 90; trial++) {
    const c = randomContact(rand, trial % 3);
    const dim = 3 * c.n;
    const slip = [0, 1e-6, 0.2, 0.999, 1, 1.001, 3, 100][trial % 8] * EPS;
    const x = displaced(rand, c, slip, 0);
    const hess = new Float64Array(dim * dim);
    frictionLocal(x, c.xn, c.n, c.w, c.P, mu, lambda, EPS, null, hess);
    const scale = maxAbs(hess);
    assert.ok(scale > 0);
    assert.ok(minEig(hess, dim) >= -1e-9 * scale, `PSD trial ${trial}`);
    // Symmetric.
    for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) assert.equal(hess[dim * i + j], hess[dim * j + i]);
    // Unprojected: G w_i w_j P (f2Term u u^T + (f1/y) I) P^T, built independently (y > 0 only).
    const y = frictionTangentialDisplacement(x, c.xn, c.n, c.w, c.P, uv);
    if (y === 0) {
      // Limit at rest: G (2/eps) w w^T kron P P^T.
      for (let i = 0; i < c.n; i++)
        for (let j = 0; j < c.n; j++)
          for (let r = 0; r < 3; r++)
            for (let s = 0; s < 3; s++) {
              const ppt = c.P[r] * c.P[s] + c.P[3 + r] * c.P[3 + s];
              const e = G * c.w[i] * c.w[j] * (2 / EPS) * ppt;
              assert.ok(Math.abs(hess[(3 * i + r) * dim + 3 * j + s] - e) < 1e-9 * scale);
            }
      continue;
    }
    const a = f2Term(y, EPS);
    const b = f1OverY(y, EPS);
    const M = [a * uv[0] * uv[0] + b, a * uv[0] * uv[1], a * uv[1] * uv[1] + b];
    let err = 0;
    for (let i = 0; i < c.n; i++)
      for (let j = 0; j < c.n; j++)
        for (let r = 0; r < 3; r++)
          for (let s = 0; s < 3; s++) {
            const pr = [c.P[r], c.P[3 + r]];
            const ps = [c.P[s], c.P[3 + s]];
            const m = pr[0] * (M[0] * ps[0] + M[1] * ps[1]) + pr[1] * (M[1] * ps[0] + M[2] * ps[1]);
            err = Math.max(err, Math.abs(hess[(3 * i + r) * dim + 3 * j + s] - G * c.w[i] * c.w[j] * m));
          }
    assert.ok(err < 1e-9 * scale, `unprojected trial ${trial}: ${err / scale}`);
  }
});

test('frictionLocal reversing: the Hessian is G w_i w_j (f1/y) P P^T (curvature f1/y along u too); D and its gradient unchanged', () => {
  const rand = rng(14);
  const mu = 0.4;
  const lambda = 5;
  const G = mu * lambda;
  for (let trial = 0; trial < 30; trial++) {
    const c = randomContact(rand, trial % 3);
    const dim = 3 * c.n;
    const slip = [0.2, 0.999, 1.5, 3, 100][trial % 5] * EPS;
    const x = displaced(rand, c, slip, 0);
    const gradPlain = new Float64Array(dim);
    const gradReversing = new Float64Array(dim);
    const plain = new Float64Array(dim * dim);
    const hess = new Float64Array(dim * dim);
    const D = frictionLocal(x, c.xn, c.n, c.w, c.P, mu, lambda, EPS, gradPlain, plain);
    assert.equal(frictionLocal(x, c.xn, c.n, c.w, c.P, mu, lambda, EPS, gradReversing, hess, true), D);
    assert.deepEqual(Array.from(gradReversing), Array.from(gradPlain));
    const y = frictionTangentialDisplacement(x, c.xn, c.n, c.w, c.P, new Float64Array(2));
    const q = f1OverY(y, EPS);
    let err = 0;
    for (let i = 0; i < c.n; i++)
      for (let j = 0; j < c.n; j++)
        for (let r = 0; r < 3; r++)
          for (let s = 0; s < 3; s++) {
            const ppt = c.P[r] * c.P[s] + c.P[3 + r] * c.P[3 + s];
            err = Math.max(err, Math.abs(hess[(3 * i + r) * dim + 3 * j + s] - G * c.w[i] * c.w[j] * q * ppt));
          }
    assert.ok(err < 1e-9 * maxAbs(hess), `trial ${trial}: ${err}`);
    // Sliding (y >= eps), the plain Hessian has no curvature along u, the reversing one G w^2 / y.
    if (slip >= EPS) assert.ok(minEig(plain, dim) < 1e-9 * maxAbs(plain) && minEig(hess, dim) < 1e-9 * maxAbs(hess));
  }
});

test('frictionLocal at x = x_n: D = mu lambda eps/3, zero gradient, zero dissipation; dissipation = mu lambda f1 |u| |u|', () => {
  const rand = rng(13);
  const uv = new Float64Array(2);
  for (let kind = 0; kind < 3; kind++) {
    const c = randomContact(rand, kind);
    const grad = new Float64Array(3 * c.n).fill(7);
    const D = frictionLocal(c.xn, c.xn, c.n, c.w, c.P, 0.5, 3, EPS, grad, null);
    assert.ok(Math.abs(D - (0.5 * 3 * EPS) / 3) < 1e-18);
    assert.equal(maxAbs(grad), 0);
    assert.equal(frictionDissipation(c.xn, c.xn, c.n, c.w, c.P, 0.5, 3, EPS), 0);
    for (const slip of [0.3, 2]) {
      const x = displaced(rand, c, slip * EPS, 0);
      const y = frictionTangentialDisplacement(x, c.xn, c.n, c.w, c.P, uv);
      assert.ok(Math.abs(y - slip * EPS) < 1e-12, 'slip built along P has length slip');
      const work = frictionDissipation(x, c.xn, c.n, c.w, c.P, 0.5, 3, EPS);
      const expected = slip >= 1 ? 1.5 * y : 1.5 * (y * (2 * EPS - y)) / (EPS * EPS) * y;
      assert.ok(Math.abs(work - expected) < 1e-12 * expected && work > 0);
    }
  }
});

test('friction ignores normal motion and rigid translations; tangential motion gives |u| = its length', () => {
  const rand = rng(14);
  const uv = new Float64Array(2);
  for (let trial = 0; trial < 30; trial++) {
    const c = randomContact(rand, trial % 3);
    // Vertex 0 pushed along the contact normal.
    const x = Float64Array.from(c.xn);
    for (let k = 0; k < 3; k++) x[k] += 0.37 * c.normal[k];
    assert.ok(frictionTangentialDisplacement(x, c.xn, c.n, c.w, c.P, uv) < 1e-14);
    // Whole stencil translated rigidly in a random direction (4-node weights sum to zero).
    if (c.n === 4) {
      let wsum = 0;
      for (let i = 0; i < 4; i++) wsum += c.w[i];
      assert.ok(Math.abs(wsum) < 1e-14);
      const t = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const xr = Float64Array.from(c.xn);
      for (let i = 0; i < 4; i++) for (let k = 0; k < 3; k++) xr[3 * i + k] += t[k];
      assert.ok(frictionTangentialDisplacement(xr, c.xn, c.n, c.w, c.P, uv) < 1e-14);
    }
    // Vertex 0 moved by a tangent vector tau: |u| = |w_0| |tau|.
    const tau = [0, 0, 0];
    const a = rand();
    const b = rand();
    for (let k = 0; k < 3; k++) tau[k] = a * c.P[k] + b * c.P[3 + k];
    const xt = Float64Array.from(c.xn);
    for (let k = 0; k < 3; k++) xt[k] += tau[k];
    const y = frictionTangentialDisplacement(xt, c.xn, c.n, c.w, c.P, uv);
    assert.ok(Math.abs(y - Math.abs(c.w[0]) * Math.hypot(a, b)) < 1e-14);
  }
});

test('vertexTriangleFrictionBasis: weights give p - closest point, matching distance.ts; P orthonormal and tangent', () => {
  const rand = rng(15);
  const w = new Float64Array(4);
  const P = new Float64Array(6);
  const seen = new Set<number>();
  for (let trial = 0; trial < 400; trial++) {
    const x = new Float64Array(12);
    for (let i = 3; i < 12; i++) x[i] = 2 * rand() - 1;
    for (let i = 0; i < 3; i++) x[i] = 4 * rand() - 2;
    const type = pointTriangleDistanceType(x);
    seen.add(type);
    assert.equal(vertexTriangleFrictionBasis(x, type, w, P), 4);
    assert.equal(w[0], 1);
    // -w[1..3] are barycentric coordinates of a point inside the triangle.
    assert.ok(Math.abs(w[1] + w[2] + w[3] + 1) < 1e-12);
    for (let i = 1; i < 4; i++) assert.ok(w[i] <= 1e-12 && w[i] >= -1 - 1e-12, `barycentric ${type}`);
    const d = weightedSum(x, 4, w);
    const d2 = dot(d, d);
    const ref = pointTriangleDistance2(x, type);
    assert.ok(Math.abs(d2 - ref) < 1e-12 * Math.max(1, ref), `type ${type}: ${d2} vs ${ref}`);
    // Brute force: no sampled point of the triangle is closer.
    for (let k = 0; k < 50; k++) {
      let b1 = rand();
      let b2 = rand();
      if (b1 + b2 > 1) {
        b1 = 1 - b1;
        b2 = 1 - b2;
      }
      let q2 = 0;
      for (let c = 0; c < 3; c++) {
        const q = (1 - b1 - b2) * x[3 + c] + b1 * x[6 + c] + b2 * x[9 + c];
        q2 += (x[c] - q) ** 2;
      }
      assert.ok(d2 <= q2 + 1e-12);
    }
    const len = Math.sqrt(d2);
    assert.ok(basisError(P, [d[0] / len, d[1] / len, d[2] / len]) < 1e-12);
  }
  assert.equal(seen.size, 7, `all point-triangle types covered: ${[...seen]}`);
  // Vertex on the triangle (distance 0): the basis spans the triangle's plane.
  const x = Float64Array.from([0.2, 0.3, 0.5, 0, 0, 0.5, 1, 0, 0.5, 0, 1, 0.5]);
  vertexTriangleFrictionBasis(x, PointTriangleDistanceType.P_T, w, P);
  assert.ok(basisError(P, [0, 0, 1]) < 1e-15);
  assert.ok(maxAbsDiff(w, [1, -0.5, -0.2, -0.3]) < 1e-15);
});

test('edgeEdgeFrictionBasis: weights give ca - cb, matching distance.ts; P orthonormal and tangent; parallel edges', () => {
  const rand = rng(16);
  const w = new Float64Array(4);
  const P = new Float64Array(6);
  const seen = new Set<number>();
  for (let trial = 0; trial < 600; trial++) {
    const x = new Float64Array(12);
    for (let i = 0; i < 12; i++) x[i] = 2 * rand() - 1;
    // Short edges make endpoint types common.
    if (trial % 2 === 1) for (let i = 3; i < 6; i++) x[i] = x[i - 3] + 0.3 * (x[i] - x[i - 3]);
    const type = edgeEdgeDistanceType(x);
    seen.add(type);
    assert.equal(edgeEdgeFrictionBasis(x, type, w, P), 4);
    const s = w[1];
    const t = -w[3];
    assert.ok(s >= 0 && s <= 1 && t >= 0 && t <= 1);
    assert.ok(Math.abs(w[0] - (1 - s)) < 1e-15 && Math.abs(w[2] + (1 - t)) < 1e-15);
    const d = weightedSum(x, 4, w);
    const d2 = dot(d, d);
    const ref = edgeEdgeDistance2(x, type);
    assert.ok(Math.abs(d2 - ref) < 1e-12 * Math.max(1, ref), `type ${type}: ${d2} vs ${ref}`);
    for (let k = 0; k < 50; k++) {
      const ss = rand();
      const tt = rand();
      let q2 = 0;
      for (let c = 0; c < 3; c++) q2 += ((1 - ss) * x[c] + ss * x[3 + c] - (1 - tt) * x[6 + c] - tt * x[9 + c]) ** 2;
      assert.ok(d2 <= q2 + 1e-12);
    }
    const len = Math.sqrt(d2);
    assert.ok(basisError(P, [d[0] / len, d[1] / len, d[2] / len]) < 1e-12);
  }
  assert.equal(seen.size, 9, `all edge-edge types covered: ${[...seen]}`);

  // Crossing edges (distance 0): P spans the plane of the two edges, normal ea x eb.
  const cross = Float64Array.from([-1, 0, 0, 1, 0, 0, 0.2, -1, 0, 0.2, 1, 0]);
  edgeEdgeFrictionBasis(cross, EdgeEdgeDistanceType.EA_EB, w, P);
  assert.ok(basisError(P, [0, 0, 1]) < 1e-15);
  assert.ok(maxAbsDiff(w, [0.4, 0.6, -0.5, -0.5]) < 1e-15);

  // Parallel edges forced to EA_EB: re-typed through the parallel rule; distance still the segment distance.
  const par = Float64Array.from([0, 0, 0, 1, 0, 0, 0.5, 0.1, 0, 1.5, 0.1, 0]);
  edgeEdgeFrictionBasis(par, EdgeEdgeDistanceType.EA_EB, w, P);
  const dp = weightedSum(par, 4, w);
  assert.ok(Math.abs(dot(dp, dp) - 0.01) < 1e-15);
  assert.ok(basisError(P, [0, 1, 0]) < 1e-15);

  // Collinear, overlapping edges (distance 0, ea x eb = 0): the edge direction lies in the tangent plane.
  const col = Float64Array.from([0, 0, 0, 1, 0, 0, 0.5, 0, 0, 1.5, 0, 0]);
  edgeEdgeFrictionBasis(col, EdgeEdgeDistanceType.EA_EB, w, P);
  assert.ok(basisError(P, null) < 1e-15);
  assert.ok(Math.abs(Math.hypot(P[0], P[3]) - 1) < 1e-15, 'x axis in span(P)');
});

test('planeFrictionBasis: w = [1], P orthonormal and orthogonal to the normal', () => {
  const rand = rng(17);
  const w = new Float64Array(4);
  const P = new Float64Array(6);
  for (let trial = 0; trial < 50; trial++) {
    const nrm = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
    if (trial < 3) nrm.fill(0).splice(trial, 1, -2); // axis-aligned normals
    assert.equal(planeFrictionBasis(nrm, w, P), 1);
    assert.equal(w[0], 1);
    const len = Math.hypot(nrm[0], nrm[1], nrm[2]);
    assert.ok(basisError(P, [nrm[0] / len, nrm[1] / len, nrm[2] / len]) < 1e-15);
  }
  assert.throws(() => planeFrictionBasis([0, 0, 0], w, P));
});
