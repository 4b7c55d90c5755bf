import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  COLLISION_1D_CASES,
  CrossSections,
  RUN_CSV_COLUMNS,
  centerOfMassVelocity,
  collisionRunsCsv,
  freeMass,
  runCollision1d,
  velocityTableMarkdown,
} from '../src/analysis/collision-1d.js';
import { elasticStiffness, freeDofs, linearizedEnergy, longitudinalFraction, modalBasis, projectOntoModes, type ModalBasis } from '../src/analysis/spectrum.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import type { Model } from '../src/model/model.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type Scene } from '../src/scene/schema.js';
import { rng } from './numeric-helpers.js';

const CELLS = 30;

/** Free-free chain of N + 1 lumped masses (ends m/2) and N springs k: w_j = 2 sqrt(k/m) sin(j pi / (2N)). */
function chainFrequency(j: number, k: number, m: number, n = CELLS): number {
  return 2 * Math.sqrt(k / m) * Math.sin((j * Math.PI) / (2 * n));
}

/** A case's chain scene, or with `block` its 3D block variant, and the model. */
function loadCase(key: string, block = false): { model: Model; scene: Scene } {
  const c = COLLISION_1D_CASES.find((x) => x.key === key)!;
  const { scene, baseDir } = loadScene(block ? c.blockScene : c.scene);
  return { model: buildModel(scene, meshResolver(baseDir)), scene };
}

/** The scene with its body's material replaced. */
function withMaterial(scene: Scene, material: Partial<NonNullable<Scene['bodies'][number]['material']>>): Scene {
  const body = scene.bodies[0];
  return { ...scene, bodies: [{ ...body, material: { ...body.material!, ...material } }] };
}

/** Elastic energy of a model (every term but the contact barrier). */
function elasticEnergy(model: Model, x: Float64Array): number {
  return model.terms.filter((t) => t.name !== 'contact').reduce((e, t) => e + t.energy(x), 0);
}

/** Column j of the basis as a vector over its coordinates. */
function mode(basis: ModalBasis, j: number): Float64Array {
  const n = basis.mass.length;
  return Float64Array.from({ length: n }, (_, i) => basis.modes[i * n + j]);
}

test('a spring chain (particles, y and z locked) has the closed-form free-free frequencies', () => {
  const k = 250;
  const m = 0.4;
  const scene = parseScene({
    name: 'chain',
    duration: 1,
    dt: 0.01,
    gravity: [0, 0, 0],
    bodies: [
      {
        mesh: {
          type: 'particles',
          positions: Array.from({ length: CELLS + 1 }, (_, i) => [i / CELLS, 0, 0]),
          masses: Array.from({ length: CELLS + 1 }, (_, i) => (i === 0 || i === CELLS ? m / 2 : m)),
          springs: Array.from({ length: CELLS }, (_, i) => ({ a: i, b: i + 1, stiffness: k })),
        },
        lockAxes: ['y', 'z'],
      },
    ],
  });
  const model = buildModel(scene);
  const basis = modalBasis(model);
  assert.equal(basis.omega.length, CELLS + 1);
  assert.deepEqual(Array.from(basis.rigid), [1, ...new Array(CELLS).fill(0)]);
  for (let j = 0; j <= CELLS; j++) {
    const expected = chainFrequency(j, k, m);
    assert.ok(Math.abs(basis.omega[j] - expected) <= 1e-9 * chainFrequency(CELLS, k, m), `mode ${j}: ${basis.omega[j]} vs ${expected}`);
  }
});

test('the block modes solve K phi = w^2 M phi, are M-orthonormal, and its sections form the 1D chain exactly', () => {
  const { model } = loadCase('soft', true);
  const full = modalBasis(model);
  const n = full.mass.length;
  assert.equal(n, 31 * 4, 'one free DOF (x) per node');
  assert.equal(full.rigid.reduce((a, b) => a + b, 0), 1, 'one rigid translation');
  const K = elasticStiffness(model, model.rest, full.dofs);
  let kNorm = 0;
  for (const value of K) kNorm = Math.max(kNorm, Math.abs(value));
  for (let j = 0; j < n; j++) {
    const phi = mode(full, j);
    let residual = 0;
    for (let i = 0; i < n; i++) {
      let Kphi = 0;
      for (let l = 0; l < n; l++) Kphi += K[i * n + l] * phi[l];
      residual = Math.max(residual, Math.abs(Kphi - full.omega[j] ** 2 * full.mass[i] * phi[i]));
    }
    assert.ok(residual < 1e-9 * kNorm * Math.sqrt(n / 10), `mode ${j}: residual ${residual}`);
    for (const l of [0, 1, j >> 1, n - 1]) {
      const psi = mode(full, l);
      let dot = 0;
      for (let i = 0; i < n; i++) dot += phi[i] * full.mass[i] * psi[i];
      assert.ok(Math.abs(dot - (l === j ? 1 : 0)) < 1e-9, `phi_${j}^T M phi_${l} = ${dot}`);
    }
  }
  // Section-uniform motion: springs EA/dx and section masses rho A dx (ends half), i.e. k/m = c^2/dx^2 with c = 1 m/s.
  const bar = modalBasis(model, { sectionsAlong: 0 });
  assert.equal(bar.omega.length, CELLS + 1);
  const kOverM = CELLS * CELLS;
  for (let j = 0; j <= CELLS; j++) {
    const expected = chainFrequency(j, kOverM, 1);
    assert.ok(Math.abs(bar.omega[j] - expected) < 1e-8 * chainFrequency(CELLS, kOverM, 1), `1D mode ${j}: ${bar.omega[j]} vs ${expected}`);
  }
  // The lowest 3D modes are the bar's (the cross-section modes start higher).
  const share = longitudinalFraction(model, full, 0);
  for (let j = 1; j <= 5; j++) {
    assert.ok(Math.abs(full.omega[j] / bar.omega[j] - 1) < 2e-3, `3D mode ${j} ${full.omega[j]} vs 1D ${bar.omega[j]}`);
    assert.ok(share[j] > 0.99, `3D mode ${j} is longitudinal (${share[j]})`);
  }
});

test('projecting a state built from known modes gives back their energies and the linearised total', () => {
  const { model } = loadCase('medium');
  const basis = modalBasis(model);
  const n = basis.mass.length;
  const [a, b, c, d, shift, drift] = [2e-3, -5e-4, 0.3, -0.02, 0.25, 0.5];
  const u = new Float64Array(n);
  const w = new Float64Array(n);
  const phi3 = mode(basis, 3);
  const phi10 = mode(basis, 10);
  const phi20 = mode(basis, 20);
  for (let i = 0; i < n; i++) {
    u[i] = a * phi3[i] + b * phi10[i] + shift;
    w[i] = c * phi3[i] + d * phi20[i] + drift;
  }
  const x = new Float64Array(model.rest);
  const v = new Float64Array(x.length);
  basis.dofs.forEach((dof, i) => {
    x[dof] += u[i];
    v[dof] = w[i];
  });
  const { energy } = projectOntoModes(basis, model.rest, x, v);
  const expected = new Float64Array(n);
  expected[0] = 0.5 * freeMass(model) * drift * drift;
  expected[3] = 0.5 * c * c + 0.5 * basis.omega[3] ** 2 * a * a;
  expected[10] = 0.5 * basis.omega[10] ** 2 * b * b;
  expected[20] = 0.5 * d * d;
  const total = linearizedEnergy(elasticStiffness(model, model.rest, basis.dofs), basis, model.rest, x, v);
  let sum = 0;
  for (let j = 0; j < n; j++) {
    assert.ok(Math.abs(energy[j] - expected[j]) < 1e-9 * total, `mode ${j}: ${energy[j]} vs ${expected[j]}`);
    sum += energy[j];
  }
  assert.ok(Math.abs(sum - total) < 1e-9 * total, `sum ${sum} vs linearised total ${total}`);
  assert.ok(Math.abs(centerOfMassVelocity(model, v) - drift) < 1e-12);
});

test('the four collision-1d scenes load and build: a 10 kg chain moving along x only toward the wall, and its block variant', () => {
  const soft = loadCase('soft');
  for (const c of COLLISION_1D_CASES) {
    for (const block of [false, true]) {
      const { model, scene } = loadCase(c.key, block);
      const name = `${c.key}${block ? ' (block)' : ''}`;
      assert.equal(model.nNodes, block ? 124 : 31, name);
      assert.equal(scene.bodies[0].mesh.type, block ? 'box' : 'chain', name);
      for (let node = 0; node < model.nNodes; node++) {
        assert.equal(model.constrained[3 * node], 0, `${name}: node ${node} x is free`);
        assert.equal(model.constrained[3 * node + 1], 1, `${name}: node ${node} y is locked`);
        assert.equal(model.constrained[3 * node + 2], 1, `${name}: node ${node} z is locked`);
        assert.equal(model.v0[3 * node], -1);
      }
      assert.ok(Math.abs(freeMass(model) - 10) < 1e-9, `${name}: mass ${freeMass(model)}`);
      let left = Infinity;
      for (let node = 0; node < model.nNodes; node++) left = Math.min(left, model.x0[3 * node]);
      assert.ok(Math.abs(left - 0.05) < 1e-12);
      const material = scene.bodies[0].material!;
      const waveSpeed = Math.sqrt(material.youngsModulus / material.density);
      assert.ok(Math.abs(waveSpeed - { soft: 1, medium: 10, stiff: 100, damped: 1 }[c.key]!) < 1e-9, `${name}: c = ${waveSpeed}`);
      assert.equal(material.poissonRatio, 0);
      assert.deepEqual(scene.gravity, [0, 0, 0]);
      assert.ok(model.contact, 'the wall makes contact on');
      assert.equal(model.contact.barrier.kappa, 1e5);
      assert.equal(scene.damping.rayleigh, c.key === 'damped' ? 0.05 : 0);
      if (c.key === 'damped' && !block) assert.deepEqual(scene.bodies, soft.scene.bodies, 'damped is the soft chain');
    }
  }
});

test('the chain is the block with each cross-section tied: same section masses, elastic energy, gradient and Hessian', () => {
  // For section-uniform motion every tet of a cell has F = diag(s, 1, 1), so the block stores exactly what the chain's
  // segments store (bar-segments.ts): for any material. The projected Hessians agree where the projection leaves the
  // stretch direction alone (Neo-Hookean with Poisson 0, the study's material; and Poisson 0 St. Venant-Kirchhoff).
  const rand = rng(1234);
  const materials = [
    { model: 'neo-hookean', poissonRatio: 0, projected: true },
    { model: 'neo-hookean', poissonRatio: 0.3, projected: false },
    { model: 'stvk', poissonRatio: 0, projected: true },
    { model: 'corotated', poissonRatio: 0.25, projected: false },
  ] as const;
  for (const m of materials) {
    const name = `${m.model}, nu ${m.poissonRatio}`;
    const chainScene = withMaterial(loadCase('soft').scene, m);
    const blockScene = withMaterial(loadCase('soft', true).scene, m);
    const chain = buildModel(chainScene);
    const block = buildModel(blockScene);
    const sections = new CrossSections(block);
    assert.equal(sections.count, chain.nNodes);
    for (let i = 0; i < chain.nNodes; i++) {
      assert.ok(Math.abs(sections.restX[i] - chain.rest[3 * i]) < 1e-15, `${name}: section ${i} at x = ${sections.restX[i]}`);
      assert.ok(Math.abs(sections.mass[i] - chain.mass[3 * i]) < 1e-12, `${name}: section ${i} mass ${sections.mass[i]} vs ${chain.mass[3 * i]}`);
    }
    const chainDofs = freeDofs(chain);
    const blockDofs = freeDofs(block);
    const n = chain.nNodes;
    for (let trial = 0; trial < 5; trial++) {
      // Sections moved as one, each cell stretched by s in [0.3, 2] (strong compression included), the whole shifted.
      const xc = new Float64Array(chain.rest);
      xc[0] += 0.1 * rand();
      for (let i = 1; i < n; i++) xc[3 * i] = xc[3 * i - 3] + (0.3 + 1.7 * rand()) * (chain.rest[3 * i] - chain.rest[3 * i - 3]);
      const xb = new Float64Array(block.rest);
      for (let node = 0; node < block.nNodes; node++) xb[3 * node] = xc[3 * sections.sectionOf[node]];
      const eChain = elasticEnergy(chain, xc);
      const eBlock = elasticEnergy(block, xb);
      assert.ok(Math.abs(eChain - eBlock) <= 1e-12 * eBlock, `${name}: energy ${eChain} vs block ${eBlock}`);
      // Gradient: the force on a chain node is the sum over its section's nodes.
      const gChain = new Float64Array(3 * n);
      const gBlock = new Float64Array(3 * block.nNodes);
      for (const t of chain.terms) if (t.name !== 'contact') t.addGradient(xc, 1, gChain);
      for (const t of block.terms) if (t.name !== 'contact') t.addGradient(xb, 1, gBlock);
      const gReduced = new Float64Array(n);
      for (let node = 0; node < block.nNodes; node++) gReduced[sections.sectionOf[node]] += gBlock[3 * node];
      let gScale = 0;
      for (let i = 0; i < n; i++) gScale = Math.max(gScale, Math.abs(gChain[3 * i]));
      for (let i = 0; i < n; i++) assert.ok(Math.abs(gChain[3 * i] - gReduced[i]) <= 1e-10 * gScale, `${name}: force on section ${i}`);
      // Hessian: P^T K P with P the 0/1 map from sections to the block's x DOFs.
      for (const projected of m.projected ? [false, true] : [false]) {
        const Kc = elasticStiffness(chain, xc, chainDofs, projected);
        const Kb = elasticStiffness(block, xb, blockDofs, projected);
        const nb = blockDofs.length;
        const Kr = new Float64Array(n * n);
        for (let i = 0; i < nb; i++) for (let j = 0; j < nb; j++) Kr[sections.sectionOf[blockDofs[i] / 3] * n + sections.sectionOf[blockDofs[j] / 3]] += Kb[i * nb + j];
        let kScale = 0;
        for (const value of Kc) kScale = Math.max(kScale, Math.abs(value));
        for (let i = 0; i < n * n; i++) assert.ok(Math.abs(Kc[i] - Kr[i]) <= 1e-10 * kScale, `${name}${projected ? ' (projected)' : ''}: K[${Math.floor(i / n)}, ${i % n}] ${Kc[i]} vs ${Kr[i]}`);
      }
    }
  }
});

test('the study is one-dimensional: each case is a chain whose cross-sections never warp, unlike the 3D block variant', () => {
  // A cross-section of the block is its four nodes with one rest x; of the chain, one node. The study reads the
  // centre-of-mass velocity of 1D motion: a model in which the nodes of a section can move apart (the block, at
  // impact) puts part of the 5 J into that warping instead of the rebound.
  for (const c of COLLISION_1D_CASES) {
    const { model } = loadCase(c.key);
    const sections = new CrossSections(model);
    assert.equal(sections.count, model.nNodes, `${c.key}: one node per cross-section`);
  }
  const chain = loadCase('soft');
  const block = loadCase('soft', true);
  // Through the impact (contact from t = 0.05 s): 0.2 s at h = 1/300 s.
  const chainRun = runCollision1d(chain.model, toRunOptions(chain.scene), 'soft', 'a-search', 300, 0.2);
  const blockRun = runCollision1d(block.model, toRunOptions(block.scene), 'soft', 'a-search', 300, 0.2);
  for (const run of [chainRun, blockRun]) {
    assert.equal(run.stopped, undefined);
    assert.ok(run.contactStart !== null, 'the impact happened');
  }
  assert.ok(chainRun.maxSectionSpread < 1e-9, `chain: sections spread ${chainRun.maxSectionSpread} m`);
  assert.ok(blockRun.maxSectionSpread > 1e-3, `block: sections spread ${blockRun.maxSectionSpread} m (the measure must see warping)`);
  assert.ok(chainRun.minStretch > 0 && chainRun.minStretch < 0.9, `chain compressed to ${chainRun.minStretch} at impact, never inverted`);
});

test('a coarse medium collision (A-search, h = 1/300 s) bounces back without inversion or penetration', () => {
  const { model, scene } = loadCase('medium');
  const run = runCollision1d(model, toRunOptions(scene), 'medium', 'a-search', 300, 0.6);
  assert.equal(run.stopped, undefined);
  assert.equal(run.steps, 180);
  assert.ok(run.finalVelocity > 0.5 && run.finalVelocity <= 1.0001, `v_com = ${run.finalVelocity}`);
  assert.ok(run.separated, 'left the wall');
  assert.equal(run.maxInverted, 0);
  assert.equal(run.penetrated, false);
  assert.ok(run.minDistance !== null && run.minDistance > 0, `min distance ${run.minDistance}`);
  assert.ok(run.contactStart !== null && run.contactStart > 0.04 && run.contactStart < 0.06, `contact from ${run.contactStart}`);
  // Contact lasts about 2L/c = 0.2 s.
  assert.ok(run.lastContact !== null && run.lastContact > 0.2 && run.lastContact < 0.3, `contact until ${run.lastContact}`);
  assert.ok(Math.abs(centerOfMassVelocity(model, run.finalV) - run.finalVelocity) < 1e-15);
  for (let node = 0; node < model.nNodes; node++) {
    for (const a of [1, 2]) {
      assert.equal(run.finalX[3 * node + a], model.x0[3 * node + a], `node ${node} kept its ${'xyz'[a]}`);
      assert.equal(run.finalV[3 * node + a], 0);
    }
  }

  const csv = collisionRunsCsv([run]).trim().split('\n');
  assert.equal(csv.length, 2);
  assert.equal(csv[1].split(',').length, RUN_CSV_COLUMNS.length);
  const table = velocityTableMarkdown([run], [COLLISION_1D_CASES[1]], ['a-search', 'bdf2'], [300, 30]).split('\n');
  assert.equal(table.length, 5, 'header, rule, two step sizes, seed row');
  assert.match(table[2], new RegExp(`^\\| 1/300 \\| ${run.finalVelocity.toFixed(3)} \\| skipped \\|$`));
  assert.match(table[3], /^\| 1\/30 \| skipped \| skipped \|$/);
});

test('stiff chain at h = 1/30 s: A-1 and A-search bounce it off whole, as a point mass, with no velocity leaking from the solve', () => {
  // Seed 000 section 5.5: at h = 1/30 s the stiff block behaves as a point mass and A-1 / A-search resolve the
  // collision with negligible vibration (appendix E: a particle leaves the barrier at its incoming speed). A-1 reads v
  // from grad P(x*), so Newton must converge the leftover gradient too (M^-1 g / h, solver/newton.ts): with only the
  // |dx| <= 0.01 h stop this run left the wall at 1.083 m/s, more energy than it came with.
  for (const integrator of ['a-1', 'a-search']) {
    // A fresh model per run: terms keep caches (contact active sets) a run must not inherit.
    const { model, scene } = loadCase('stiff');
    const run = runCollision1d(model, toRunOptions(scene), 'stiff', integrator, 30);
    assert.equal(run.stopped, undefined);
    assert.equal(run.unconvergedSteps, 0);
    assert.ok(run.separated && !run.penetrated && run.minStretch > 0, `${integrator}: left the wall cleanly`);
    assert.ok(Math.abs(run.finalVelocity - 1) < 2e-3, `${integrator}: v_com = ${run.finalVelocity}`);
  }
});
