/**
 * The absolute-value eigenvalue filter of projected Newton (solver.hessianProjection 'abs'): the dense projection,
 * the materials' 9x9 dP/dF, the 12x12 tet stiffness and the shells' element Hessians, all against exact Hessians from
 * finite differences and a dense eigen-decomposition; and Newton's iteration counts with each filter.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MATERIAL_MODELS, createMaterial, type Material } from '../src/energies/materials.js';
import { ElasticTets } from '../src/energies/elastic-tets.js';
import { filterEigenvalue, type EigenvalueFilter, type HessianProjection } from '../src/energies/eigenvalue-filter.js';
import { createLinearSolver } from '../src/math/linear-solver.js';
import type { Model } from '../src/model/model.js';
import { IncrementalPotential } from '../src/solver/incremental-potential.js';
import { NewtonSolver } from '../src/solver/newton.js';
import { projectPsdInPlace, projectPsdTranslationInvariant, psdScratchLength, symmetricEigen } from '../src/math/eigen-sym.js';
import { orientTets } from '../src/mesh/tet-mesh.js';
import { MEMBRANE_MODELS, ShellMembrane } from '../src/energies/shell-membrane.js';
import { ShellBending } from '../src/energies/shell-bending.js';
import type { PotentialTerm } from '../src/energies/potential.js';
import {
  assembleHessianPattern,
  centralDifferenceJacobian,
  composeSvd,
  flattenRows,
  maxAbs,
  maxAbsDiff,
  randomRotation,
  rng,
} from './numeric-helpers.js';
import { twistedSquashedBar } from './helpers.js';

/** Eigenvalues (ascending) of the symmetric n x n A, and its eigenvectors (columns of Q, in symmetricEigen's order). */
function eigen(A: Float64Array, n: number): { values: number[]; Q: Float64Array } {
  const w = new Float64Array(n);
  const Q = new Float64Array(n * n);
  symmetricEigen(A, n, w, Q, new Float64Array(n * n));
  return { values: Array.from(w).sort((a, b) => a - b), Q };
}

/** sum_k f(lambda_k) q_k q_k^T from a dense eigen-decomposition of A (the oracle). */
function spectralMap(A: Float64Array, n: number, f: (lambda: number) => number): Float64Array {
  const w = new Float64Array(n);
  const Q = new Float64Array(n * n);
  symmetricEigen(A, n, w, Q, new Float64Array(n * n));
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += Q[n * i + k] * f(w[k]) * Q[n * j + k];
      out[n * i + j] = s;
    }
  return out;
}

const abs = (v: number) => Math.abs(v);
const sortedAbs = (values: number[]) => values.map(abs).sort((a, b) => a - b);

/** (A + A^T) / 2 of an n x n matrix (finite differences are symmetric only to their error). */
function symmetrize(A: Float64Array, n: number): Float64Array {
  const S = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) S[n * i + j] = 0.5 * (A[n * i + j] + A[n * j + i]);
  return S;
}

test('filterEigenvalue: clamp gives max(v, 0), abs gives |v|, NaN stays NaN', () => {
  assert.equal(filterEigenvalue(2, 'clamp'), 2);
  assert.equal(filterEigenvalue(-3, 'clamp'), 0);
  assert.equal(filterEigenvalue(2, 'abs'), 2);
  assert.equal(filterEigenvalue(-3, 'abs'), 3);
  assert.ok(Number.isNaN(filterEigenvalue(NaN, 'clamp')) && Number.isNaN(filterEigenvalue(NaN, 'abs')));
});

test('projectPsdInPlace with absolute: |A| of a dense eigen-decomposition, PSD matrices unchanged', () => {
  const rand = rng(41);
  const scratch = new Float64Array(psdScratchLength(12));
  let indefinite = 0;
  for (const n of [3, 6, 9, 12]) {
    for (let trial = 0; trial < 20; trial++) {
      const A = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) A[n * i + j] = A[n * j + i] = 2 * rand() - 1;
      // Half the trials PSD (A^T A), half indefinite, some with a single negative eigenvalue (the subtract path).
      if (trial % 2 === 0) {
        const B = Float64Array.from(A);
        for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
          let s = 0;
          for (let k = 0; k < n; k++) s += B[n * k + i] * B[n * k + j];
          A[n * i + j] = s;
        }
        if (trial % 4 === 2) for (let i = 0; i < n; i++) A[n * i + i] -= 0.05 * (1 + eigen(A, n).values[0]);
      }
      const { values } = eigen(A, n);
      if (values[0] < 0) indefinite++;
      const filtered = Float64Array.from(A);
      const count = projectPsdInPlace(filtered, n, scratch, true);
      assert.equal(count, values.filter((v) => v < 0).length, `n=${n} trial ${trial}: negative eigenvalue count`);
      const oracle = spectralMap(A, n, abs);
      assert.ok(maxAbsDiff(filtered, oracle) < 1e-10 * Math.max(1, maxAbs(A)), `n=${n} trial ${trial}: |A| differs from the oracle`);
      const got = eigen(filtered, n).values;
      const want = sortedAbs(values);
      for (let k = 0; k < n; k++) assert.ok(Math.abs(got[k] - want[k]) < 1e-10 * Math.max(1, maxAbs(A)), `n=${n}: eigenvalue ${k}`);
      if (values[0] >= 0) assert.deepEqual(Array.from(filtered), Array.from(A), 'a PSD matrix is left untouched');
    }
  }
  assert.ok(indefinite >= 30, `only ${indefinite} indefinite samples`);
});

test('projectPsdTranslationInvariant with absolute: |A| for translation-invariant 6x6 to 12x12 Hessians', () => {
  const rand = rng(42);
  for (const k of [2, 3, 4]) {
    const n = 3 * k;
    for (let trial = 0; trial < 10; trial++) {
      // A = D^T S D with D the differences of points 1.. to point 0: invariant under a common translation.
      const m = 3 * (k - 1);
      const S = new Float64Array(m * m);
      for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) S[m * i + j] = S[m * j + i] = 2 * rand() - 1;
      const D = new Float64Array(m * n);
      for (let a = 1; a < k; a++) for (let r = 0; r < 3; r++) {
        D[n * (3 * (a - 1) + r) + 3 * a + r] = 1;
        D[n * (3 * (a - 1) + r) + r] = -1;
      }
      const A = new Float64Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
        let s = 0;
        for (let p = 0; p < m; p++) for (let q = 0; q < m; q++) s += D[n * p + i] * S[m * p + q] * D[n * q + j];
        A[n * i + j] = s;
      }
      const oracle = spectralMap(A, n, abs);
      const filtered = Float64Array.from(A);
      projectPsdTranslationInvariant(filtered, k, true);
      assert.ok(maxAbsDiff(filtered, oracle) < 1e-10 * Math.max(1, maxAbs(A)), `k=${k} trial ${trial}: differs from the dense |A|`);
    }
  }
});

/** F = U diag(s) V^T with random rotations. */
function withSingularValues(rand: () => number, s: number[]): Float64Array {
  return composeSvd(randomRotation(rand), s, randomRotation(rand));
}

/** Compressed, stretched, twisted (a rotation between U and V is part of every sample) and, where allowed, inverted. */
function samples(material: Material, rand: () => number): Float64Array[] {
  const out: Float64Array[] = [];
  for (let i = 0; i < 6; i++) out.push(withSingularValues(rand, [0.4 + 1.5 * rand(), 0.4 + rand(), 0.3 + 0.7 * rand()].sort((a, b) => b - a)));
  out.push(withSingularValues(rand, [0.6, 0.5, 0.4]), withSingularValues(rand, [1.8, 0.5, 0.5]), withSingularValues(rand, [1.2, 1.2, 0.7]));
  for (let i = 0; i < 3; i++) out.push(Float64Array.from({ length: 9 }, (_, k) => (k % 4 === 0 ? 1 : 0) + 0.1 * (2 * rand() - 1)));
  if (!material.blocksInversion) out.push(withSingularValues(rand, [1.4, 0.9, -0.5]), withSingularValues(rand, [1.2, 0.8, -0.05]));
  return out;
}

test('abs-filtered dP/dF (9x9) is |dP/dF|: PSD, the exact one where that is PSD, eigenvalues |lambda| of the exact one', () => {
  const rand = rng(43);
  const exact = new Float64Array(81);
  const filtered = new Float64Array(81);
  const clamped = new Float64Array(81);
  let indefinite = 0;
  let psd = 0;
  for (const nu of [0.3, 0.45]) {
    for (const model of MATERIAL_MODELS) {
      const material = createMaterial(model, { youngsModulus: 10, poissonRatio: nu });
      for (const F of samples(material, rand)) {
        // The oracle: central differences of P, symmetrised (independent of the eigensystem the filter works in).
        const fd = symmetrize(centralDifferenceJacobian((G, P) => material.firstPiola(G, P), F, 1e-6), 9);
        material.stressDerivative(F, exact);
        material.projectedStressDerivative(F, filtered, 'abs');
        material.projectedStressDerivative(F, clamped, 'clamp');
        const scale = Math.max(maxAbs(exact), material.mu);
        const label = `${model} nu=${nu} F=[${Array.from(F, (v) => v.toFixed(3))}]`;
        const exactValues = eigen(fd, 9).values;
        const got = eigen(filtered, 9).values;
        assert.ok(got[0] >= -1e-9 * scale, `${label}: filtered has eigenvalue ${got[0]}`);
        const want = sortedAbs(exactValues);
        for (let k = 0; k < 9; k++) assert.ok(Math.abs(got[k] - want[k]) < 1e-5 * scale, `${label}: eigenvalue ${k} ${got[k]} vs |exact| ${want[k]}`);
        assert.ok(maxAbsDiff(filtered, spectralMap(fd, 9, abs)) < 1e-5 * scale, `${label}: differs from |FD dP/dF|`);
        if (exactValues[0] < -1e-6 * scale) {
          indefinite++;
          // |A| - A = 2 (A+ - A): the two filters remove the same negative part, abs twice.
          for (let p = 0; p < 81; p++) assert.ok(Math.abs(filtered[p] - exact[p] - 2 * (clamped[p] - exact[p])) < 1e-9 * scale, `${label}: |A| - A != 2 (A+ - A)`);
        } else if (exactValues[0] > 1e-6 * scale) {
          psd++;
          assert.ok(maxAbsDiff(filtered, exact) < 1e-12 * scale, `${label}: a PSD dP/dF must be left as it is`);
        }
      }
    }
  }
  assert.ok(indefinite >= 20, `only ${indefinite} indefinite samples`);
  assert.ok(psd >= 20, `only ${psd} positive definite samples`);
});

/** Dense Hessian of a term at x: exact (projectPsd false) or filtered. */
function denseHessian(term: PotentialTerm, nodes: number, x: Float64Array, filter: 'exact' | 'clamp' | 'abs'): Float64Array {
  const H = assembleHessianPattern(term, nodes);
  H.zero();
  if (filter === 'exact') term.addHessian(x, 1, H, false);
  else term.addHessian(x, 1, H, true, filter);
  return flattenRows(H.toDense());
}

/**
 * A hinge's matrix under 'clamp' is its Gauss-Newton matrix 2w dtheta dtheta^T. With E = w (theta - theta0)^2 and
 * g = grad E = 2w (theta - theta0) dtheta, that is g g^T / (2E).
 */
function checkHingeGaussNewton(term: ShellBending, x: Float64Array, label: string): void {
  const n = 12;
  const clamped = denseHessian(term, 4, x, 'clamp');
  const g = new Float64Array(n);
  term.addGradient(x, 1, g);
  let gg = 0;
  for (let i = 0; i < n; i++) gg += g[i] * g[i];
  let gHg = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) gHg += g[i] * clamped[n * i + j] * g[j];
  const c = gHg / (gg * gg);
  assert.ok(c > 0, `${label}: Gauss-Newton coefficient ${c}`);
  const scale = maxAbs(clamped);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) assert.ok(Math.abs(clamped[n * i + j] - c * g[i] * g[j]) < 1e-9 * scale, `${label}: not a multiple of g g^T`);
  // One hinge: E = w d^2 and g = 2w d dtheta, so 2w dtheta dtheta^T = g g^T / (2E): the multiple is 1 / (2E).
  const energy = term.energy(x);
  assert.ok(Math.abs(2 * energy * c - 1) < 1e-9, `${label}: Gauss-Newton multiple ${c}, want 1 / (2E) = ${1 / (2 * energy)}`);
}

/** Checks a term's abs-filtered Hessian at x against central differences of its gradient; returns true if indefinite. */
function checkElementFilter(term: PotentialTerm, nodes: number, x: Float64Array, label: string, exactIsAbs: boolean, clampIsProjection = true): boolean {
  const n = 3 * nodes;
  const fd = symmetrize(centralDifferenceJacobian((y, g) => term.addGradient(y, 1, g), x, 1e-6), n);
  const exact = denseHessian(term, nodes, x, 'exact');
  const filtered = denseHessian(term, nodes, x, 'abs');
  const scale = maxAbs(fd);
  assert.ok(maxAbsDiff(exact, fd) < 1e-5 * scale, `${label}: exact Hessian differs from finite differences`);
  const got = eigen(filtered, n).values;
  assert.ok(got[0] >= -1e-9 * scale, `${label}: abs-filtered Hessian has eigenvalue ${got[0]}`);
  const exactValues = eigen(fd, n).values;
  const indefinite = exactValues[0] < -1e-6 * scale;
  if (!indefinite) assert.ok(maxAbsDiff(filtered, exact) < 1e-10 * scale, `${label}: a PSD element Hessian must be left as it is`);
  // Per element the filters remove the same negative part of the element's own Hessian, abs twice over.
  if (clampIsProjection) {
    const clamped = denseHessian(term, nodes, x, 'clamp');
    for (let p = 0; p < n * n; p++) assert.ok(Math.abs(filtered[p] - fd[p] - 2 * (clamped[p] - fd[p])) < 1e-5 * scale, `${label}: |H| - H != 2 (H+ - H)`);
  }
  // Where the filter works on the element Hessian itself (shells), it is |H|: eigenvalues |lambda| of the exact ones.
  if (exactIsAbs) {
    const want = sortedAbs(exactValues);
    for (let k = 0; k < n; k++) assert.ok(Math.abs(got[k] - want[k]) < 1e-5 * scale, `${label}: eigenvalue ${k} ${got[k]} vs |exact| ${want[k]}`);
  }
  return indefinite;
}

test('abs-filtered tet stiffness (12x12): PSD, exact where that is PSD, |H| - H = 2 (H+ - H) against finite differences', () => {
  const rand = rng(44);
  let indefinite = 0;
  for (const model of MATERIAL_MODELS) {
    const material = createMaterial(model, { youngsModulus: 100, poissonRatio: 0.4 });
    for (let trial = 0; trial < 6; trial++) {
      const X = Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1], (v) => v + 0.15 * (2 * rand() - 1));
      const tets = Uint32Array.from([0, 1, 2, 3]);
      orientTets({ positions: X, tets });
      const term = new ElasticTets(X, tets, material);
      // Compressed along a random axis and twisted about another: F = R S with S a squeeze.
      const F = withSingularValues(rand, [1.1 + 0.3 * rand(), 0.7 + 0.2 * rand(), 0.45 + 0.2 * rand()]);
      const x = new Float64Array(12);
      for (let a = 0; a < 4; a++) for (let r = 0; r < 3; r++) x[3 * a + r] = F[3 * r] * X[3 * a] + F[3 * r + 1] * X[3 * a + 1] + F[3 * r + 2] * X[3 * a + 2];
      if (checkElementFilter(term, 4, x, `${model} tet ${trial}`, false)) indefinite++;
    }
  }
  assert.ok(indefinite >= 8, `only ${indefinite} indefinite tets`);
});

test('abs-filtered shell membrane (9x9) and hinge (12x12) Hessians are |H| of the exact ones', () => {
  const rand = rng(45);
  let indefinite = 0;
  for (let trial = 0; trial < 8; trial++) {
    const rest = Float64Array.from([0, 0, 0, 1, 0, 0, 0.2, 1, 0, 1.1, 1.0, 0.1]);
    const x = Float64Array.from(rest, (v) => v + 0.35 * (2 * rand() - 1));
    for (const model of MEMBRANE_MODELS) {
      const membrane = new ShellMembrane(rest.subarray(0, 9), Uint32Array.from([0, 1, 2]), model, 1e3, 0.3, 0.01);
      if (checkElementFilter(membrane, 3, x.slice(0, 9), `${model} membrane ${trial}`, true)) indefinite++;
    }
    const bending = new ShellBending(rest, Uint32Array.from([0, 1, 2, 1, 3, 2]), 1);
    if (checkElementFilter(bending, 4, x, `hinge ${trial}`, true, false)) indefinite++;
    checkHingeGaussNewton(bending, x, `hinge ${trial}`);
  }
  assert.ok(indefinite >= 4, `only ${indefinite} indefinite shell elements`);
});

/**
 * The uniformly twisted and squashed bar of `twistedSquashedBar`, its elastic term wrapped so the test sees which
 * filter Newton asks for at each Hessian.
 */
function twistedBar(model: 'neo-hookean' | 'linear', twist: number, squash: number) {
  const { rest: X, tets, nNodes, x, mass, constrained } = twistedSquashedBar(twist, squash, 10);
  const elastic = new ElasticTets(X, tets, createMaterial(model, { youngsModulus: 1e5, poissonRatio: 0.45 }));
  const filters: EigenvalueFilter[] = [];
  const recorder: PotentialTerm = {
    name: 'elastic',
    energy: (y) => elastic.energy(y),
    addGradient: (y, scale, g) => elastic.addGradient(y, scale, g),
    addHessian: (y, scale, H, projectPsd, filter) => {
      filters.push(filter ?? 'clamp');
      elastic.addHessian(y, scale, H, projectPsd, filter);
    },
    addPattern: (builder) => elastic.addPattern(builder),
    bindPattern: (H) => elastic.bindPattern(H),
    maxStep: (y, dx) => elastic.maxStep(y, dx),
  };
  const model_: Model = { nNodes, rest: X, x0: Float64Array.from(x), v0: new Float64Array(3 * nNodes), mass, constrained, motions: [], terms: [recorder], bodies: [], surface: new Uint32Array(0) };
  return { model: model_, x, filters };
}

/** Minimises the bar's elastic energy plus a small inertia about its start, with the given projection. */
function solveBar(model: 'neo-hookean' | 'linear', twist: number, squash: number, projection: HessianProjection) {
  const bar = twistedBar(model, twist, squash);
  const ip = new IncrementalPotential(bar.model);
  ip.predictor.set(bar.x);
  const result = new NewtonSolver().minimize(ip, bar.x, { tolerance: 1e-9, h: 1, maxIterations: 300, projectPsd: true, hessianProjection: projection, linearSolver: createLinearSolver('ldlt') });
  return { ...result, x: bar.x, energy: ip.value(bar.x), filters: bar.filters };
}

test("adaptive projection: 'abs' until a step has been measured, 'clamp' once the quadratic model predicts the decrease", () => {
  // A quadratic energy (linear material): the model is exact, the trust-region ratio 1 after every step.
  const quadratic = solveBar('linear', 0.3, 0.9, 'adaptive');
  assert.ok(quadratic.converged);
  assert.equal(quadratic.filters[0], 'abs');
  assert.ok(quadratic.filters.length >= 2, `only ${quadratic.filters.length} Hessians`);
  assert.ok(quadratic.filters.slice(1).every((f) => f === 'clamp'), `filters ${quadratic.filters.join(', ')}`);
  // The fixed projections ask for their own filter every time.
  assert.ok(solveBar('linear', 0.3, 0.9, 'abs').filters.every((f) => f === 'abs'));
  assert.ok(solveBar('linear', 0.3, 0.9, 'clamp').filters.every((f) => f === 'clamp'));
});

test('clamp, abs and adaptive projections reach the same equilibrium of a compressed, twisted neo-Hookean bar', () => {
  const runs = (['clamp', 'abs', 'adaptive'] as const).map((projection) => ({ projection, ...solveBar('neo-hookean', Math.PI / 2, 0.6, projection) }));
  const [clamp] = runs;
  for (const run of runs) {
    assert.ok(run.converged, `${run.projection}: not converged in ${run.iterations} iterations`);
    assert.ok(Math.abs(run.energy - clamp.energy) <= 1e-9 * Math.abs(clamp.energy), `${run.projection}: energy ${run.energy} vs ${clamp.energy}`);
    assert.ok(maxAbsDiff(run.x, clamp.x) < 1e-6, `${run.projection}: positions differ by ${maxAbsDiff(run.x, clamp.x)}`);
  }
  // The adaptive rule switched both ways on this nonlinear problem.
  const adaptive = runs[2].filters;
  assert.ok(adaptive.includes('abs') && adaptive.includes('clamp'), `adaptive used ${[...new Set(adaptive)].join(', ')}`);
});
