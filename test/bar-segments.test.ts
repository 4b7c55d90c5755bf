import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BarSegments } from '../src/energies/bar-segments.js';
import { MATERIAL_MODELS, makeMaterial } from '../src/energies/materials.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';
import { assembleHessianPattern, derivativesAndDifferences, minEigenvalue, rng } from './numeric-helpers.js';

function hessian(term: BarSegments, x: Float64Array, project: boolean, scale = 1.5): number[][] {
  const H = assembleHessianPattern(term, x.length / 3);
  term.addHessian(x, scale, H, project);
  return H.toDense().map((row) => Array.from(row));
}

/** A 5-node chain in 3D with random node positions: segments both stretched and compressed (s in about 0.4 - 2). */
function randomChain(rand: () => number, model: (typeof MATERIAL_MODELS)[number], poissonRatio: number): { x: Float64Array; term: BarSegments } {
  const x = Float64Array.from({ length: 15 }, () => 2 * rand() - 1);
  const pairs = Uint32Array.from([0, 1, 1, 2, 2, 3, 3, 4]);
  const rest = new Float64Array(4);
  for (let k = 0; k < 4; k++) {
    const l = Math.hypot(x[3 * k] - x[3 * k + 3], x[3 * k + 1] - x[3 * k + 4], x[3 * k + 2] - x[3 * k + 5]);
    rest[k] = l / (0.4 + 1.6 * rand());
  }
  const area = Float64Array.from({ length: 4 }, () => 0.01 + 0.1 * rand());
  return { x, term: new BarSegments(pairs, area, rest, makeMaterial(model, 1e4 * (1 + rand()), poissonRatio)) };
}

test('Neo-Hookean segment, Poisson 0: E = A L (mu/2)(s^2 - 1 - 2 ln s), force A mu (s - 1/s), stiffness (A/L) mu (1 + 1/s^2)', () => {
  const E = 9000;
  const mu = E / 2;
  const A = 1 / 900;
  const L = 1 / 30;
  const term = new BarSegments(Uint32Array.from([0, 1]), Float64Array.from([A]), Float64Array.from([L]), makeMaterial('neo-hookean', E, 0));
  for (const s of [0.05, 0.3, 0.9, 1, 1.2, 3]) {
    // Node 1 at s L to the right of node 0, along x.
    const x = Float64Array.from([0.2, 0, 0, 0.2 + s * L, 0, 0]);
    const energy = A * L * (mu / 2) * (s * s - 1 - 2 * Math.log(s));
    assert.ok(Math.abs(term.energy(x) - energy) <= 1e-14 * Math.max(energy, A * L * mu), `s = ${s}: ${term.energy(x)} vs ${energy}`);
    const g = new Float64Array(6);
    term.addGradient(x, 1, g);
    const force = A * mu * (s - 1 / s);
    assert.ok(Math.abs(g[3] - force) <= 1e-12 * Math.max(Math.abs(force), A * mu) && Math.abs(g[0] + force) <= 1e-12 * Math.max(Math.abs(force), A * mu));
    const H = hessian(term, x, false, 1);
    const k = (A / L) * mu * (1 + 1 / (s * s));
    assert.ok(Math.abs(H[3][3] - k) <= 1e-12 * k && Math.abs(H[0][3] + k) <= 1e-12 * k, `s = ${s}: ${H[3][3]} vs ${k}`);
  }
  // Small strain e: a spring of stiffness E A / L (the next term is -e/3 relative).
  const e = 1e-4;
  const x = Float64Array.from([0, 0, 0, L * (1 + e), 0, 0]);
  assert.ok(Math.abs(term.energy(x) / (0.5 * ((E * A) / L) * (L * e) ** 2) - 1) < 1e-4);
  // Zero length: infinite energy (the nodes may not pass each other).
  assert.equal(term.energy(Float64Array.from([0.1, 0, 0, 0.1, 0, 0])), Infinity);
});

test('bar segments: gradient and exact Hessian match central differences in 3D, every material model', () => {
  const rand = rng(77);
  for (const model of MATERIAL_MODELS) {
    for (const nu of [0, 0.3]) {
      for (let trial = 0; trial < 4; trial++) {
        const { x, term } = randomChain(rand, model, nu);
        const m = x.length;
        const { g, H, fdGradient, fdHessian } = derivativesAndDifferences(term, x, 1.5);
        let gScale = 0;
        for (const value of g) gScale = Math.max(gScale, Math.abs(value));
        let hScale = 0;
        for (const row of H) for (const value of row) hScale = Math.max(hScale, Math.abs(value));
        for (let d = 0; d < m; d++) {
          assert.ok(Math.abs(fdGradient[d] - g[d]) < 1e-6 * gScale, `${model} nu ${nu}: gradient ${d}: ${g[d]} vs ${fdGradient[d]}`);
          for (let r = 0; r < m; r++) {
            assert.ok(Math.abs(fdHessian[m * r + d] - H[r][d]) < 1e-5 * hScale, `${model} nu ${nu}: Hessian ${r},${d}: ${H[r][d]} vs ${fdHessian[m * r + d]}`);
          }
        }
      }
    }
  }
});

test('bar segments: the projected Hessian is PSD, and equals the exact one when every segment is stretched', () => {
  const rand = rng(78);
  let indefinite = 0;
  for (let trial = 0; trial < 20; trial++) {
    const { x, term } = randomChain(rand, 'neo-hookean', 0);
    const exact = hessian(term, x, false);
    if (minEigenvalue(exact) < -1e-6) indefinite++;
    assert.ok(minEigenvalue(hessian(term, x, true)) > -1e-9, `trial ${trial}`);
  }
  // Compressed segments pull inward across their direction (E'/l < 0): the exact Hessian is indefinite then.
  assert.ok(indefinite > 10, `${indefinite} of 20 random chains had an indefinite exact Hessian`);
  const x = Float64Array.from([0, 0, 0, 1.2, 0.3, 0, 1.5, 1.6, 0.2]);
  const term = new BarSegments(Uint32Array.from([0, 1, 1, 2]), Float64Array.from([0.1, 0.2]), Float64Array.from([1, 1]), makeMaterial('neo-hookean', 1e4, 0));
  assert.deepEqual(hessian(term, x, true), hessian(term, x, false));
});

test('bar segments: the line-search filter stops short of two nodes passing each other (log-J materials only)', () => {
  const pairs = Uint32Array.from([0, 1]);
  const nh = new BarSegments(pairs, Float64Array.from([0.01]), Float64Array.from([0.1]), makeMaterial('neo-hookean', 1e4, 0));
  const x = Float64Array.from([0, 0, 0, 0.1, 0, 0]);
  // Node 1 moves 0.2 to the left: it would reach node 0 at t = 1/2.
  const dx = Float64Array.from([0, 0, 0, -0.2, 0, 0]);
  assert.ok(Math.abs(nh.maxStep(x, dx) - 0.8 * 0.5) < 1e-15);
  assert.equal(nh.maxStep(x, Float64Array.from([0, 0, 0, 0.2, 0, 0])), 1, 'stretching is never limited');
  assert.equal(nh.maxStep(x, Float64Array.from([0, 0, 0, -0.05, 0, 0])), 1, 'a step that stops short of the other node is whole');
  const corotated = new BarSegments(pairs, Float64Array.from([0.01]), Float64Array.from([0.1]), makeMaterial('corotated', 1e4, 0));
  assert.equal(corotated.maxStep(x, dx), 1);
});

test('bar segments: input validation names the segment', () => {
  const material = makeMaterial('neo-hookean', 1e4, 0);
  assert.throws(() => new BarSegments(Uint32Array.from([0, 1]), Float64Array.from([0]), Float64Array.from([1]), material), /segment 0 has cross-section area 0/);
  assert.throws(() => new BarSegments(Uint32Array.from([0, 1]), Float64Array.from([1]), Float64Array.from([0]), material), /segment 0 has rest length 0/);
  assert.throws(() => new BarSegments(Uint32Array.from([1, 1]), Float64Array.from([1]), Float64Array.from([1]), material), /itself/);
});

test('a chain body builds from length, cells and area: nodes, lumped masses, bar segments, collision points', () => {
  const scene = parseScene({
    name: 'chain',
    duration: 1,
    dt: 0.01,
    obstacles: [{ type: 'plane' }],
    bodies: [
      {
        mesh: { type: 'chain', length: 2, cells: 4, area: 0.01 },
        // Stood up along +y, lifted 0.1 m above the ground.
        transform: { rotate: { axis: [0, 0, 1], degrees: 90 }, translate: [0.3, 0.1, 0] },
        material: { youngsModulus: 1e5, poissonRatio: 0, density: 500 },
      },
    ],
  });
  const model = buildModel(scene);
  assert.equal(model.nNodes, 5);
  const massPerCell = 500 * 0.01 * 0.5;
  for (let i = 0; i < 5; i++) {
    assert.ok(Math.abs(model.rest[3 * i] - 0.3) < 1e-15 && Math.abs(model.rest[3 * i + 1] - (0.1 + 0.5 * i)) < 1e-12, `node ${i}`);
    assert.ok(Math.abs(model.mass[3 * i] - (i === 0 || i === 4 ? massPerCell / 2 : massPerCell)) < 1e-12, `node ${i} mass ${model.mass[3 * i]}`);
  }
  const segments = model.terms.find((t) => t instanceof BarSegments) as BarSegments;
  assert.equal(segments.name, 'elastic', 'its energy counts as elastic in the metrics');
  assert.deepEqual(Array.from(segments.springs), [0, 1, 1, 2, 2, 3, 3, 4]);
  for (let k = 0; k < 4; k++) assert.ok(Math.abs(segments.restLength[k] - 0.5) < 1e-12 && segments.stiffness[k] === 0.01);
  assert.equal(segments.energy(model.rest), 0);
  // Every node is a contact point against the plane (the chain has no surface).
  assert.deepEqual(Array.from(model.contact!.mesh.vertices), [0, 1, 2, 3, 4]);
  assert.equal(model.surface.length, 0);
  const { material: _omitted, ...noMaterial } = scene.bodies[0];
  assert.throws(() => buildModel({ ...scene, bodies: [noMaterial] }), /bodies\[0\]\.material: required for a 'chain' mesh/);
  assert.throws(() => parseScene({ ...scene, bodies: [{ ...scene.bodies[0], mesh: { type: 'chain', length: 1, cells: 0, area: 1 } }] }), /bodies\[0\]\.mesh\.cells/);
});
