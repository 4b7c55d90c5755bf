import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OrthogonalityPotential } from '../src/energies/orthogonality.js';
import { formatVtu, vtuCells } from '../src/io/frame-files.js';
import { loadScene, toRunOptions } from '../src/io/scene-files.js';
import { boxGrid } from '../src/mesh/generators.js';
import { extractSurface } from '../src/mesh/surface.js';
import { affineBodyLayout, surfaceMoments } from '../src/model/affine-body.js';
import { vertexMapOf } from '../src/model/model.js';
import { addPulledBackGradient, gatherVertices, vertexPositions } from '../src/model/vertex-map.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, SceneError } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { assembleHessianPattern, derivativesAndDifferences, minEigenvalue, randomRotation, rng } from './numeric-helpers.js';

/** A box grid's surface, rotated by R and moved by t (so the body frame is not the world's). */
function rotatedBox(size: [number, number, number], R: Float64Array, t: number[]): { positions: Float64Array; surface: Uint32Array } {
  const mesh = boxGrid(size, [3, 2, 2]);
  const p = mesh.positions;
  const out = new Float64Array(p.length);
  for (let i = 0; i < p.length; i += 3) {
    for (let a = 0; a < 3; a++) out[i + a] = R[3 * a] * p[i] + R[3 * a + 1] * p[i + 1] + R[3 * a + 2] * p[i + 2] + t[a];
  }
  return { positions: out, surface: extractSurface({ positions: out, tets: mesh.tets }).triangles };
}

test('volume moments by the divergence theorem: a rotated, moved box against its closed forms', () => {
  const rand = rng(5);
  const R = randomRotation(rand);
  const size: [number, number, number] = [0.2, 0.1, 0.05];
  const { positions, surface } = rotatedBox(size, R, [1, -2, 0.5]);
  const m = surfaceMoments(positions, surface);
  const V = size[0] * size[1] * size[2];
  assert.ok(Math.abs(m.volume - V) < 1e-14, `volume ${m.volume}`);
  // boxGrid spans [0, size]: the centre is R size/2 + t.
  const c = [0, 1, 2].map((a) => 0.5 * (R[3 * a] * size[0] + R[3 * a + 1] * size[1] + R[3 * a + 2] * size[2]) + [1, -2, 0.5][a]);
  for (let a = 0; a < 3; a++) assert.ok(Math.abs(m.centroid[a] - c[a]) < 1e-13, `centroid ${a}`);
  // Central second moment R diag(V L_k^2 / 12) R^T.
  for (let a = 0; a < 3; a++) {
    for (let b = 0; b < 3; b++) {
      let s = 0;
      for (let k = 0; k < 3; k++) s += R[3 * a + k] * ((V * size[k] ** 2) / 12) * R[3 * b + k];
      assert.ok(Math.abs(m.second[3 * a + b] - s) < 1e-16, `second moment (${a}, ${b}): ${m.second[3 * a + b]} vs ${s}`);
    }
  }
});

test('affine layout: a diagonal 12x12 mass equal to integral rho J^T J, and mapped vertices x = A X + p', () => {
  const rand = rng(7);
  const R = randomRotation(rand);
  const { positions, surface } = rotatedBox([0.2, 0.1, 0.05], R, [0.3, 0.4, -0.1]);
  const density = 1000;
  const L = affineBodyLayout(positions, surface, density);
  assert.ok(Math.abs(L.mass - 1) < 1e-12);
  // The body-frame masses are the principal second moments m L_k^2 / 12 (in some order).
  const s = [L.dofMass[3], L.dofMass[6], L.dofMass[9]].sort((a, b) => a - b);
  const expected = [0.05, 0.1, 0.2].map((l) => l * l / 12);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(s[k] - expected[k]) < 1e-15, `s_${k} = ${s[k]}`);
  // At q0 every vertex maps onto its rest position; columns orthonormal and right-handed.
  const map = { nVertices: L.vertices.length, identityCount: 0, start: Int32Array.from({ length: L.vertices.length + 1 }, (_, i) => 4 * i), nodes: new Int32Array(4 * L.vertices.length), weights: new Float64Array(4 * L.vertices.length) };
  for (let i = 0; i < L.vertices.length; i++) {
    map.nodes.set([0, 1, 2, 3], 4 * i);
    map.weights.set([1, L.restCoordinates[3 * i], L.restCoordinates[3 * i + 1], L.restCoordinates[3 * i + 2]], 4 * i);
  }
  const x = new Float64Array(3 * L.vertices.length);
  vertexPositions(map, L.q0, x);
  for (let i = 0; i < L.vertices.length; i++) for (let a = 0; a < 3; a++) assert.ok(Math.abs(x[3 * i + a] - positions[3 * L.vertices[i] + a]) < 1e-15);
  // Kinetic energy of a random DOF velocity: 1/2 qdot^T diag(dofMass) qdot equals 1/2 integral rho |v|^2 over the
  // box's tets (v = Adot X + pdot is linear, so the vertex rule per tet with the mid-edge points is exact; here the
  // same integral through the central moments: m |pdot|^2 + sum_kl S_kl cdot_k . cdot_l with S diagonal).
  const qd = Float64Array.from({ length: 12 }, () => rand() - 0.5);
  let diag = 0;
  for (let d = 0; d < 12; d++) diag += L.dofMass[d] * qd[d] * qd[d];
  // Direct quadrature: sum over the surface tets (o = centroid) of integral |pdot + sum_k X_k cdot_k|^2.
  const m = surfaceMoments(positions, surface);
  let direct = L.mass * (qd[0] ** 2 + qd[1] ** 2 + qd[2] ** 2);
  // integral rho (Adot X)(Adot X) with X = R^T (x - c): Adot X = sum_k cdot_k (R^T d)_k; S_world = m.second.
  const Rb = [0, 1, 2].map((k) => [0, 1, 2].map((a) => L.q0[3 + 3 * k + a])); // body axes in world
  for (let k = 0; k < 3; k++) {
    for (let l = 0; l < 3; l++) {
      let Skl = 0; // integral X_k X_l = e_k^T R^T S_world R e_l
      for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) Skl += Rb[k][a] * m.second[3 * a + b] * Rb[l][b];
      const dot = qd[3 + 3 * k] * qd[3 + 3 * l] + qd[4 + 3 * k] * qd[4 + 3 * l] + qd[5 + 3 * k] * qd[5 + 3 * l];
      direct += density * Skl * dot;
    }
  }
  assert.ok(Math.abs(diag - direct) < 1e-12 * direct, `${diag} vs ${direct}`);
  // J^T g: the gradient of g . x(q) with respect to q, by central differences.
  const gv = Float64Array.from({ length: x.length }, () => rand() - 0.5);
  const gq = new Float64Array(12);
  addPulledBackGradient(map, gv, 1, gq);
  const q = Float64Array.from(L.q0);
  for (let d = 0; d < 12; d++) {
    const f = (qq: Float64Array) => {
      vertexPositions(map, qq, x);
      return x.reduce((sum, xi, i) => sum + xi * gv[i], 0);
    };
    const h = 1e-6;
    q[d] += h;
    const fp = f(q);
    q[d] -= 2 * h;
    const fm = f(q);
    q[d] += h;
    assert.ok(Math.abs((fp - fm) / (2 * h) - gq[d]) < 1e-8, `J^T g entry ${d}`);
  }
});

test('orthogonality potential: zero on rotations, gradient and Hessian against central differences, PSD projection', () => {
  const rand = rng(11);
  // Two bodies; DOF nodes (p, c1, c2, c3) each, the columns listed by node id.
  const columns = Uint32Array.from([1, 2, 3, 5, 6, 7]);
  const term = new OrthogonalityPotential(columns, Float64Array.from([2.5, 0.7]));
  const x = new Float64Array(24);
  const R = randomRotation(rand);
  for (let k = 0; k < 3; k++) for (let a = 0; a < 3; a++) x[3 + 3 * k + a] = R[3 * a + k];
  for (let k = 0; k < 3; k++) for (let a = 0; a < 3; a++) x[15 + 3 * k + a] = R[3 * a + k];
  assert.ok(term.energy(x) < 1e-28);
  const g0 = new Float64Array(24);
  term.addGradient(x, 1, g0);
  assert.ok(g0.every((v) => Math.abs(v) < 1e-14));
  for (const spread of [0.05, 0.6]) {
    for (let d = 0; d < 24; d++) x[d] += spread * (rand() - 0.5);
    const { g, H, fdGradient, fdHessian } = derivativesAndDifferences(term, x, 1.3);
    for (let d = 0; d < 24; d++) {
      assert.ok(Math.abs(fdGradient[d] - g[d]) < 1e-7 * (1 + Math.abs(g[d])), `gradient ${d}: ${g[d]} vs ${fdGradient[d]}`);
      for (let r = 0; r < 24; r++) assert.ok(Math.abs(fdHessian[24 * r + d] - H[r][d]) < 1e-6, `Hessian ${r},${d}`);
    }
  }
  // A compressed A (columns shortened) has a negative curvature direction; projected, the matrix is PSD.
  for (let d = 3; d < 12; d++) x[d] *= 0.3;
  const exact = assembleHessianPattern(term, 8);
  term.addHessian(x, 1, exact, false);
  assert.ok(minEigenvalue(exact.toDense()) < -1e-3, 'the exact Hessian of a compressed body is indefinite');
  const projected = assembleHessianPattern(term, 8);
  term.addHessian(x, 1, projected, true);
  assert.ok(minEigenvalue(projected.toDense()) > -1e-10);
});

test('abd-tumbling-brick: initial energy and momentum in closed form; the flip starts, A-search keeps |L| and energy, the brick stays rigid', () => {
  const { scene } = loadScene('abd-tumbling-brick');
  const model = buildModel(scene);
  assert.equal(model.nNodes, 4);
  // Principal moments of inertia of a 1 kg brick: I = m (b^2 + c^2) / 12 ...
  const I = [0.1 ** 2 + 0.05 ** 2, 0.2 ** 2 + 0.05 ** 2, 0.2 ** 2 + 0.1 ** 2].map((v) => v / 12);
  const w = [0.05, 5, 0];
  const H0 = 0.5 * (I[0] * w[0] ** 2 + I[1] * w[1] ** 2);
  // The intermediate axis is the column of the middle second moment (0.1 m edge).
  const masses = [3, 6, 9].map((d) => model.mass[d]);
  const mid = [0, 1, 2].sort((a, b) => masses[a] - masses[b])[1];
  const records: { total: number; L: number[] }[] = [];
  let flipped = Infinity;
  let maxStrain = 0;
  const { summary } = simulate(model, toRunOptions(scene), {
    step(r) {
      records.push({ total: r.total, L: r.angularMomentum });
    },
    check(step, x) {
      const yOfAxis = x[3 + 3 * mid + 1]; // the intermediate axis' y component; L is along y
      if (yOfAxis < -0.9 && flipped === Infinity) flipped = step * scene.dt;
      for (let k = 0; k < 3; k++) {
        for (let l = 0; l < 3; l++) {
          const dot = x[3 + 3 * k] * x[3 + 3 * l] + x[4 + 3 * k] * x[4 + 3 * l] + x[5 + 3 * k] * x[5 + 3 * l];
          maxStrain = Math.max(maxStrain, Math.abs(dot - (k === l ? 1 : 0)));
        }
      }
    },
  });
  assert.equal(summary.stopped, undefined);
  assert.ok(Math.abs(records[0].total - H0) < 1e-12 * H0, `H0 ${records[0].total} vs ${H0}`);
  assert.ok(Math.abs(records[0].L[0] - I[0] * w[0]) < 1e-12 && Math.abs(records[0].L[1] - I[1] * w[1]) < 1e-12, `L0 ${records[0].L}`);
  // The flip: with a 1 % perturbation and growth rate w sqrt((I2 - I1)(I3 - I2) / (I1 I3)) = 3 /s it comes at ~1.5 s.
  assert.ok(flipped > 0.5 && flipped < 3, `the intermediate axis turned over at t = ${flipped}`);
  const L0 = Math.hypot(...records[0].L);
  for (const r of records) {
    assert.ok(Math.abs(Math.hypot(...r.L) / L0 - 1) < 1e-2, `|L| ${Math.hypot(...r.L)} vs ${L0}`);
    assert.ok(r.total <= H0 * (1 + 1e-3) && r.total > 0.98 * H0, `H ${r.total} vs ${H0}`);
  }
  assert.ok(maxStrain < 1e-3, `|A^T A - I| reached ${maxStrain}`);
});

test('affine scenes: frames write the mapped surface; unsupported fields are refused by name', () => {
  const { scene } = loadScene('abd-tumbling-brick');
  const model = buildModel(scene);
  const map = vertexMapOf(model);
  assert.equal(map.identityCount, 0);
  // 4 x 2 x 1 cells: 5 * 3 * 2 = 30 grid nodes, all on the surface.
  assert.equal(map.nVertices, 30);
  const out = new Float64Array(3 * map.nVertices);
  gatherVertices(map, model.x0, Uint32Array.from({ length: 30 }, (_, i) => i), out);
  for (let i = 0; i < 30; i++) {
    assert.ok(Math.abs(Math.abs(out[3 * i]) - 0.1) < 1e-12 || Math.abs(out[3 * i]) < 0.05 + 1e-12);
    assert.ok(Math.abs(out[3 * i + 2]) - 0.025 < 1e-12);
  }
  // VTU frames: the 30 mapped vertices as points (with their displacement from rest: zero at x0), 56 triangles.
  const cells = vtuCells(model);
  const vtu = formatVtu(model, cells, model.x0, model.v0, 0, new Float64Array(cells.count));
  assert.match(vtu, /NumberOfPoints="30" NumberOfCells="56"/);
  assert.match(vtu, /Name="displacement" NumberOfComponents="3" format="ascii">(0\.0+ ){89}0\.0+</);
  const bad = (body: Record<string, unknown>, field: RegExp) => {
    const input = JSON.parse(JSON.stringify({ ...scene, bodies: [{ ...scene.bodies[0], ...body }] }));
    assert.throws(() => buildModel(parseScene(input)), (err: Error) => err instanceof SceneError && field.test(err.message), JSON.stringify(body));
  };
  bad({ lockAxes: ['y'] }, /bodies\[0\]\.lockAxes: an affine body/);
  bad({ deform: { axis: [1, 0, 0], twistDegrees: 10 } }, /bodies\[0\]\.deform: an affine body/);
  bad({ velocity: { ramp: { velocity: [1, 0, 0], along: [1, 0, 0] } } }, /bodies\[0\]\.velocity\.ramp: an affine body/);
  bad({ mesh: { type: 'particles', positions: [[0, 0, 0]], masses: [1] } }, /bodies\[0\]\.kind: an affine body needs a closed surface/);
  assert.throws(() => parseScene({ ...scene, bodies: [{ ...scene.bodies[0], kind: 'rigid' }] }), /bodies\[0\]\.kind/);
});
