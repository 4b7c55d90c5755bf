import { test } from 'node:test';
import assert from 'node:assert/strict';
import { svd3 } from '../src/math/svd3.js';
import {
  isPositiveDefinite,
  projectPsdInPlace,
  projectPsdTranslationInvariant,
  psdScratchLength,
  symmetricEigen,
  tridiagonalEigen,
} from '../src/math/eigen-sym.js';
import {
  cofactor3,
  det3,
  inverse3,
  multiply3,
  multiplyABt,
  multiplyAtB,
  polarDecomposition,
  transpose3,
} from '../src/math/small.js';
import { composeSvd, maxAbsDiff, randomRotation, rng } from './numeric-helpers.js';

function randomMatrix(rand: () => number, scale = 1): Float64Array {
  return Float64Array.from({ length: 9 }, () => scale * (2 * rand() - 1));
}

const I3 = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);

function checkSvd(F: Float64Array, label: string): Float64Array {
  const U = new Float64Array(9);
  const V = new Float64Array(9);
  const s = new Float64Array(3);
  svd3(F, U, s, V);
  // Max entry rather than a norm: squares of 1e-200 underflow.
  const scale = 3 * Math.max(...Array.from(F, Math.abs));
  assert.ok(maxAbsDiff(composeSvd(U, s, V), F) <= 1e-14 * scale, `${label}: U S V^T != F`);
  assert.ok(maxAbsDiff(multiplyAtB(U, U, new Float64Array(9)), I3) < 1e-14, `${label}: U not orthogonal`);
  assert.ok(maxAbsDiff(multiplyAtB(V, V, new Float64Array(9)), I3) < 1e-14, `${label}: V not orthogonal`);
  assert.ok(Math.abs(det3(U) - 1) < 1e-14, `${label}: det U = ${det3(U)}`);
  assert.ok(Math.abs(det3(V) - 1) < 1e-14, `${label}: det V = ${det3(V)}`);
  // Ordered up to round-off (the values come from different dot products).
  const ulp = 4e-16 * s[0];
  assert.ok(s[0] >= s[1] - ulp && s[1] >= Math.abs(s[2]) - ulp, `${label}: order ${Array.from(s)}`);
  assert.ok(s[1] >= 0, `${label}: sigma_2 < 0`);
  const d = det3(F);
  if (Math.abs(d) > 1e-12 * scale ** 3 && scale > 1e-100 && scale < 1e100) assert.equal(Math.sign(s[2]), Math.sign(d), `${label}: sign of sigma_3`);
  return s;
}

test('svd3 reconstructs random matrices with proper rotations', () => {
  const rand = rng(1);
  for (let trial = 0; trial < 2000; trial++) {
    const scale = 10 ** (6 * rand() - 3);
    checkSvd(randomMatrix(rand, scale), `random ${trial}`);
  }
});

test('svd3 gets singular values of known matrices, including reflections and degenerate spectra', () => {
  const rand = rng(2);
  const spectra: number[][] = [
    [3, 2, 1],
    [2, 2, 1], // repeated
    [2, 1, 1],
    [1, 1, 1], // rotation
    [1.5, 1.5, 1.5],
    [2, 1, -0.5], // inverted
    [1, 1, -1], // reflection
    [3, 1, 0], // rank 2
    [3, 0, 0], // rank 1
    [5, 1e-9, 1e-12], // nearly rank 1
    [1 + 1e-13, 1, 1 - 1e-13],
    [1e-200, 1e-201, 1e-202],
    [1e200, 1e199, -1e198],
  ];
  for (const target of spectra) {
    for (let trial = 0; trial < 50; trial++) {
      const U = randomRotation(rand);
      const V = randomRotation(rand);
      const F = composeSvd(U, target, V);
      const s = checkSvd(F, `spectrum ${target} trial ${trial}`);
      const scale = Math.abs(target[0]);
      for (let k = 0; k < 3; k++)
        assert.ok(Math.abs(s[k] - target[k]) <= 1e-13 * scale, `spectrum ${target}: got ${Array.from(s)}`);
    }
  }
});

test('svd3 handles exact special matrices: zero, identity, diagonal with sign flips, permutations', () => {
  const cases: number[][] = [
    [0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 1, 0, 0, 0, 1],
    [-1, 0, 0, 0, 1, 0, 0, 0, 1],
    [-1, 0, 0, 0, -1, 0, 0, 0, -1],
    [0, 1, 0, 1, 0, 0, 0, 0, 1],
    [0, 0, 2, 0, 3, 0, 1, 0, 0],
    [1, 1, 1, 1, 1, 1, 1, 1, 1],
    [1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 5],
    [1, 2, 3, 2, 4, 6, 3, 6, 9],
  ];
  for (const c of cases) checkSvd(Float64Array.from(c), `case ${c}`);
  const s = checkSvd(Float64Array.from([-1, 0, 0, 0, -1, 0, 0, 0, -1]), 'minus identity');
  assert.deepEqual(Array.from(s).map((v) => Math.round(v * 1e12) / 1e12), [1, 1, -1]);
});

test('polar decomposition: R rotation, S symmetric, F = R S, R = Q for F = Q S0', () => {
  const rand = rng(3);
  const R = new Float64Array(9);
  const S = new Float64Array(9);
  for (let trial = 0; trial < 200; trial++) {
    const Q = randomRotation(rand);
    const A = randomMatrix(rand, 0.3);
    // S0 = I + sym(A) stays positive definite for |A| small.
    const S0 = new Float64Array(9);
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) S0[3 * r + c] = (r === c ? 1 : 0) + 0.5 * (A[3 * r + c] + A[3 * c + r]);
    const F = multiply3(Q, S0, new Float64Array(9));
    polarDecomposition(F, R, S);
    assert.ok(maxAbsDiff(R, Q) < 1e-12);
    assert.ok(maxAbsDiff(S, S0) < 1e-12);
    assert.ok(maxAbsDiff(multiply3(R, S, new Float64Array(9)), F) < 1e-12);
  }
});

test('3x3 helpers agree with each other', () => {
  const rand = rng(4);
  for (let trial = 0; trial < 200; trial++) {
    const A = randomMatrix(rand);
    const B = randomMatrix(rand);
    const inv = new Float64Array(9);
    const d = inverse3(A, inv);
    assert.ok(Math.abs(d - det3(A)) < 1e-14);
    assert.ok(maxAbsDiff(multiply3(A, inv, new Float64Array(9)), I3) < 1e-9 / Math.min(1, Math.abs(d)));
    const cof = cofactor3(A, new Float64Array(9));
    assert.ok(maxAbsDiff(transpose3(inv, new Float64Array(9)).map((v) => v * d), cof) < 1e-12);
    const AB = multiply3(A, B, new Float64Array(9));
    assert.ok(maxAbsDiff(multiplyABt(A, transpose3(B, new Float64Array(9)), new Float64Array(9)), AB) < 1e-14);
    assert.ok(maxAbsDiff(multiplyAtB(transpose3(A, new Float64Array(9)), B, new Float64Array(9)), AB) < 1e-14);
    // inverse3 may alias its input.
    const copy = Float64Array.from(A);
    inverse3(copy, copy);
    assert.ok(maxAbsDiff(copy, inv) === 0);
  }
});

for (const [name, eigen] of [['symmetricEigen', symmetricEigen], ['tridiagonalEigen', tridiagonalEigen]] as const) {
test(`${name}: A Q = Q diag(values), Q orthogonal, for random and repeated spectra`, () => {
  const rand = rng(5);
  for (const n of [1, 2, 3, 6, 9, 12]) {
    for (let trial = 0; trial < 20; trial++) {
      const A = new Float64Array(n * n);
      for (let i = 0; i < n; i++)
        for (let j = i; j < n; j++) A[n * i + j] = A[n * j + i] = 2 * rand() - 1;
      if (trial % 4 === 1) {
        // Repeated eigenvalues: Q0 diag(1, 1, ..., -2, -2) Q0^T from a random orthogonal Q0.
        const Q0 = new Float64Array(n * n);
        const w = new Float64Array(n);
        symmetricEigen(A, n, w, Q0, new Float64Array(n * n));
        A.fill(0);
        for (let i = 0; i < n; i++)
          for (let j = 0; j < n; j++)
            for (let k = 0; k < n; k++) A[n * i + j] += Q0[n * i + k] * (k < n / 2 ? 1 : -2) * Q0[n * j + k];
      }
      const values = new Float64Array(n);
      const Q = new Float64Array(n * n);
      eigen(A, n, values, Q, new Float64Array(n * n));
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < n; k++) {
          let aq = 0;
          for (let j = 0; j < n; j++) aq += A[n * i + j] * Q[n * j + k];
          assert.ok(Math.abs(aq - values[k] * Q[n * i + k]) < 1e-12, `n=${n}: A q != lambda q`);
          let qq = 0;
          for (let j = 0; j < n; j++) qq += Q[n * j + i] * Q[n * j + k];
          assert.ok(Math.abs(qq - (i === k ? 1 : 0)) < 1e-12, `n=${n}: Q not orthogonal`);
        }
      }
    }
  }
});
}

test('tridiagonalEigen: the eigenvalues Jacobi finds, also for zero, diagonal, tridiagonal, tiny and huge matrices', () => {
  const rand = rng(55);
  const sorted = (v: Float64Array) => Array.from(v).sort((a, b) => a - b);
  const cases: Array<{ n: number; A: Float64Array }> = [];
  for (const n of [1, 2, 4, 9]) {
    cases.push({ n, A: new Float64Array(n * n) }); // zero
    const D = new Float64Array(n * n);
    for (let i = 0; i < n; i++) D[n * i + i] = i % 2 ? -i : i; // diagonal, repeated 0
    cases.push({ n, A: D });
    const T = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      T[n * i + i] = 2;
      if (i + 1 < n) T[n * i + i + 1] = T[n * (i + 1) + i] = -1; // 1D Laplacian: already tridiagonal
    }
    cases.push({ n, A: T });
    for (const scale of [1e-200, 1, 1e200]) {
      const R = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = i; j < n; j++) R[n * i + j] = R[n * j + i] = scale * (2 * rand() - 1);
      cases.push({ n, A: R });
    }
  }
  for (const { n, A } of cases) {
    const jac = new Float64Array(n);
    const tri = new Float64Array(n);
    symmetricEigen(A, n, jac, new Float64Array(n * n), new Float64Array(n * n));
    const Q = new Float64Array(n * n);
    tridiagonalEigen(A, n, tri, Q, new Float64Array(n * n));
    const scale = Math.max(...A.map(Math.abs));
    const a = sorted(jac);
    const b = sorted(tri);
    for (let k = 0; k < n; k++) assert.ok(Math.abs(a[k] - b[k]) <= 1e-13 * scale, `n=${n}: eigenvalue ${b[k]} vs ${a[k]}`);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < n; k++) {
        let qq = 0;
        for (let j = 0; j < n; j++) qq += Q[n * j + i] * Q[n * j + k];
        assert.ok(Math.abs(qq - (i === k ? 1 : 0)) < 1e-12, `n=${n}: Q not orthogonal`);
      }
    }
  }
});

test('projectPsdInPlace: leaves PSD matrices unchanged, clamps negative eigenvalues, nearest PSD', () => {
  const rand = rng(6);
  const n = 9;
  const scratch = new Float64Array(psdScratchLength(n));
  for (let trial = 0; trial < 30; trial++) {
    // B B^T is PSD (rank 5 here, so zero eigenvalues too).
    const B = Float64Array.from({ length: n * 5 }, () => 2 * rand() - 1);
    const P = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let k = 0; k < 5; k++) P[n * i + j] += B[5 * i + k] * B[5 * j + k];
    const copy = Float64Array.from(P);
    const clamped = projectPsdInPlace(copy, n, scratch);
    assert.ok(clamped <= 4); // round-off may flip the sign of a zero eigenvalue
    assert.ok(maxAbsDiff(copy, P) < 1e-12);

    // Indefinite: diag(2, -1) in a known basis -> projection keeps only the positive part.
    const A = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) A[n * i + j] = A[n * j + i] = 2 * rand() - 1;
    const values = new Float64Array(n);
    const Q = new Float64Array(n * n);
    symmetricEigen(A, n, values, Q, new Float64Array(n * n));
    const expected = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++)
        for (let k = 0; k < n; k++) expected[n * i + j] += Q[n * i + k] * Math.max(values[k], 0) * Q[n * j + k];
    const projected = Float64Array.from(A);
    const count = projectPsdInPlace(projected, n, scratch);
    assert.equal(count, values.filter((v) => v < 0).length);
    assert.ok(maxAbsDiff(projected, expected) < 1e-12);
    const after = new Float64Array(n);
    symmetricEigen(projected, n, after, Q, new Float64Array(n * n));
    assert.ok(Math.min(...after) > -1e-12);
  }
});

test('isPositiveDefinite: accepts PD, rejects semi-definite and indefinite matrices', () => {
  const work = new Float64Array(9);
  assert.ok(isPositiveDefinite([2, -1, 0, -1, 2, -1, 0, -1, 2], 3, work));
  assert.ok(!isPositiveDefinite([1, 1, 0, 1, 1, 0, 0, 0, 1], 3, work)); // singular PSD
  assert.ok(!isPositiveDefinite([1, 2, 0, 2, 1, 0, 0, 0, 1], 3, work)); // eigenvalue -1
  assert.ok(!isPositiveDefinite([1, 0, 0, 0, 1, 0, 0, 0, -1e-300], 3, work));
  assert.ok(isPositiveDefinite([1e-300, 0, 0, 0, 1, 0, 0, 0, 1], 3, work));
  const rand = rng(7);
  for (let trial = 0; trial < 200; trial++) {
    const A = new Float64Array(9);
    for (let i = 0; i < 3; i++) for (let j = i; j < 3; j++) A[3 * i + j] = A[3 * j + i] = 2 * rand() - 1 + (i === j ? 0.8 : 0);
    const w = new Float64Array(3);
    symmetricEigen(A, 3, w, new Float64Array(9), new Float64Array(9));
    const minEig = Math.min(...w);
    if (Math.abs(minEig) > 1e-9) assert.equal(isPositiveDefinite(A, 3, work), minEig > 0);
  }
});

test('projectPsdTranslationInvariant: the same projection as the full eigenvalue clamp, for 2 to 4 points used of 4', () => {
  const r = rng(77);
  const scratch = new Float64Array(psdScratchLength(12));
  let indefinite = 0;
  for (let trial = 0; trial < 60; trial++) {
    // The Hessian of a function of the used points' differences to the first one: D^T M D with M random and
    // indefinite, D the difference map; the other points' rows and columns are zero.
    const used = [[0, 1], [0, 2], [1, 3], [0, 1, 2], [1, 2, 3], [0, 1, 2, 3]][trial % 6];
    const m = used.length;
    const B = Array.from({ length: 3 * m }, () => Array.from({ length: 3 * (m - 1) }, () => 2 * r() - 1));
    // Differences y_j = x_{j+1} - x_0 (j < m - 1): A_used = D^T M D with M = B'^T diag(+-) B' indefinite.
    const M = new Float64Array(9 * (m - 1) * (m - 1));
    const signs = Array.from({ length: 3 * m }, () => (r() < 0.6 ? 1 : -1));
    for (let i = 0; i < 3 * (m - 1); i++) for (let j = 0; j < 3 * (m - 1); j++) {
      let s = 0;
      for (let k = 0; k < 3 * m; k++) s += signs[k] * B[k][i] * B[k][j];
      M[3 * (m - 1) * i + j] = s;
    }
    const A = new Float64Array(144);
    const coeff = (j: number, u: number) => (u === 0 ? -1 : u === j + 1 ? 1 : 0); // d y_j / d x_u
    for (let u = 0; u < m; u++) for (let v = 0; v < m; v++) for (let i = 0; i < 3; i++) for (let k = 0; k < 3; k++) {
      let s = 0;
      for (let a = 0; a < m - 1; a++) for (let b = 0; b < m - 1; b++) s += coeff(a, u) * coeff(b, v) * M[3 * (m - 1) * (3 * a + i) + 3 * b + k];
      A[12 * (3 * used[u] + i) + 3 * used[v] + k] = s;
    }
    const full = Float64Array.from(A);
    const fullClamped = projectPsdInPlace(full, 12, scratch);
    const fast = Float64Array.from(A);
    const fastClamped = projectPsdTranslationInvariant(fast, 4);
    const scale = Math.max(...A.map(Math.abs));
    assert.ok(maxAbsDiff(full, fast) < 1e-12 * scale, `trial ${trial} (points ${used}): differs by ${maxAbsDiff(full, fast)}`);
    // The full clamp also counts the three translation eigenvalues (round-off zeros) when they come out negative.
    assert.ok(fastClamped <= fullClamped, `trial ${trial}: clamped ${fastClamped} vs ${fullClamped}`);
    if (fastClamped > 0) indefinite++;
    for (let u = 0; u < 4; u++) {
      if (used.includes(u)) continue;
      for (let c = 0; c < 12; c++) assert.equal(fast[12 * (3 * u) + c], 0, `unused point ${u} stays zero`);
    }
  }
  assert.ok(indefinite > 30, `most trials need clamping (${indefinite})`);
  assert.throws(() => projectPsdTranslationInvariant(new Float64Array(225), 5), /1 to 4 points/);
});
