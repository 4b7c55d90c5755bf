import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findIntersection } from '../src/contact/intersection.js';
import { MappedTerm } from '../src/contact/mapped-term.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { torusSurface } from '../src/mesh/generators.js';
import { surfaceMoments } from '../src/model/affine-body.js';
import { contactPositions, type Model } from '../src/model/model.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { assembleHessianPattern, centralDifferenceGradient, centralDifferenceJacobian, rng } from './numeric-helpers.js';

const stiff = { model: 'neo-hookean', youngsModulus: 1e8, poissonRatio: 0.3, density: 1000 } as const;

/**
 * A FEM block, an affine box resting on it 0.4 dhat above (turned 10 degrees about y, so edges cross edges) and a
 * second affine box 0.4 dhat beside the first: body-FEM, body-body and plane pairs, all within dhat.
 */
function threeBodies(): Model {
  const dhat = 1e-3;
  const gap = 0.4 * dhat;
  const input: SceneInput = {
    name: 'mapped-contact',
    duration: 0.01,
    dt: 0.01,
    gravity: [0, 0, 0],
    contact: { kappa: 1e4, dhat, selfContact: false },
    obstacles: [{ type: 'plane', point: [0, -gap, 0] }],
    bodies: [
      { name: 'block', mesh: { type: 'box', size: [0.3, 0.1, 0.3], cells: [2, 1, 2] }, transform: { translate: [-0.15, 0, -0.15] }, material: stiff },
      {
        name: 'a',
        kind: 'affine',
        mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] },
        transform: { center: true, rotate: { axis: [0, 1, 0], degrees: 10 }, translate: [0, 0.15 + gap, 0] },
        material: stiff,
      },
      {
        name: 'b',
        kind: 'affine',
        mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] },
        transform: { center: true, translate: [0.05 * Math.cos(Math.PI / 18) + 0.05 * Math.sin(Math.PI / 18) + 0.05 + gap, 0.15 + gap, 0] },
        material: stiff,
      },
    ],
  };
  return buildModel(parseScene(input));
}

test('mapped contact: barrier gradient J^T g and Hessian J^T H J against central differences over the DOFs (body-body, body-FEM, plane)', () => {
  const model = threeBodies();
  const term = model.terms.find((t): t is MappedTerm => t instanceof MappedTerm);
  assert.ok(term, 'the barrier acts through the vertex map');
  const rand = rng(3);
  const x = Float64Array.from(model.x0);
  // Small motions of every free DOF (1e-5 m, 1e-4 on the matrix columns) keep every pair apart.
  for (let d = 0; d < x.length; d++) if (!model.constrained[d]) x[d] += (rand() - 0.5) * (d >= 3 * model.nNodes - 24 ? 1e-4 : 1e-5);
  assert.equal(findIntersection(model.contact!.mesh, contactPositions(model, x)), null);
  const active = model.contact!.barrier.activeContacts(contactPositions(model, x), []);
  assert.ok(active.count > 20, `${active.count} active pairs`);
  term.patternStale(x);
  const H = assembleHessianPattern(term, model.nNodes);
  term.addHessian(x, 1, H, false);
  const g = new Float64Array(x.length);
  term.addGradient(x, 1, g);
  // Only free DOFs: constrained (none here) would be dropped by the solver.
  const fdG = centralDifferenceGradient((y) => term.energy(y), x, 1, 1e-8);
  const gMax = Math.max(...g.map(Math.abs));
  for (let d = 0; d < x.length; d++) assert.ok(Math.abs(fdG[d] - g[d]) < 1e-5 * gMax, `gradient ${d}: ${g[d]} vs ${fdG[d]}`);
  const fdH = centralDifferenceJacobian((y, out) => term.addGradient(y, 1, out), x, 1e-8);
  const dense = H.toDense();
  const n = x.length;
  let hMax = 0;
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) hMax = Math.max(hMax, Math.abs(dense[r][c]));
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) assert.ok(Math.abs(fdH[n * r + c] - dense[r][c]) < 1e-4 * hMax, `Hessian (${r}, ${c}): ${dense[r][c]} vs ${fdH[n * r + c]}`);
  }
  // Affine-affine and affine-FEM couplings are there: blocks between the two bodies' nodes and to the block's nodes.
  const pNodeA = model.bodies[1].affineNode!;
  const pNodeB = model.bodies[2].affineNode!;
  assert.ok(dense[3 * pNodeA][3 * pNodeB] !== 0 || dense[3 * pNodeA + 1][3 * pNodeB + 1] !== 0 || dense[3 * pNodeA + 2][3 * pNodeB + 2] !== 0, 'body-body block');
  let femCoupling = 0;
  for (let d = 0; d < 3 * pNodeA - 0; d++) femCoupling += Math.abs(dense[3 * pNodeA + 1][d]);
  assert.ok(femCoupling > 0, 'body-FEM blocks');
});

test('mapped contact: the line-search filter stops an affine box that is driven through the block, exactly on its vertex lines', () => {
  const model = threeBodies();
  const term = model.terms.find((t): t is MappedTerm => t instanceof MappedTerm)!;
  const x = Float64Array.from(model.x0);
  const dx = new Float64Array(x.length);
  const p = 3 * model.bodies[1].affineNode!;
  dx[p + 1] = -0.01; // 10 mm down, with a little rotation of its matrix (a column tilted)
  dx[p + 3 + 1] = 0.002;
  const t = term.maxStep(x, dx);
  assert.ok(t > 0 && t < 0.04, `t = ${t}`);
  // At x + t dx (and at every point of the way: the vertices move on lines) nothing intersects and pairs stay apart.
  for (const s of [0.25, 0.5, 0.75, 1]) {
    const y = x.map((xi, d) => xi + s * t * dx[d]);
    const q = contactPositions(model, y);
    assert.equal(findIntersection(model.contact!.mesh, q), null);
    assert.ok(model.contact!.barrier.activeContacts(q, null).minDistance > 0);
  }
});

/** A 10 cm cube of `kind`, dropped from 2 cm onto the ground, stiff material; its centre height at every frame. */
function dropHeights(kind: 'deformable' | 'affine'): { y: number[]; newton: number } {
  const scene = parseScene({
    name: `drop-${kind}`,
    duration: 0.3,
    dt: 1 / 120,
    contact: { kappa: 1e5, dhat: 1e-3, selfContact: false },
    obstacles: [{ type: 'plane' }],
    bodies: [{ name: 'cube', kind, mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [2, 2, 2] }, transform: { translate: [0, 0.02, 0] }, material: { ...stiff, youngsModulus: 1e7 } }],
  });
  const model = buildModel(scene);
  const linear = model.linearMass ?? model.mass;
  const total = linear.reduce((s, m, d) => (d % 3 === 1 ? s + m : s), 0);
  const y: number[] = [];
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    check(_step, x) {
      let m = 0;
      for (let d = 1; d < x.length; d += 3) m += linear[d] * x[d];
      y.push(m / total);
    },
  });
  assert.equal(summary.stopped, undefined);
  return { y, newton: summary.newtonIterations };
}

test('a stiff cube dropped on the ground: the affine cube and the FEM cube of the same material follow the same centre height', () => {
  const fem = dropHeights('deformable');
  const abd = dropHeights('affine');
  assert.equal(fem.y.length, abd.y.length);
  let diff = 0;
  for (let k = 0; k < fem.y.length; k++) diff = Math.max(diff, Math.abs(fem.y[k] - abd.y[k]));
  // Free fall 2 cm (0.064 s), contact, rebound: the centres differ by less than 1 mm over the 0.3 s.
  assert.ok(Math.min(...abd.y) < 0.0512 && Math.min(...abd.y) > 0.05, `the affine cube reaches the ground: ${Math.min(...abd.y)}`);
  assert.ok(abd.y[abd.y.length - 1] > 0.055, `and bounces: ${abd.y[abd.y.length - 1]}`);
  assert.ok(diff < 1e-3, `max centre height difference ${diff} m`);
});

test('mixed scene: an affine ball dropped on a FEM block on the ground keeps the invariants on every step', () => {
  const { baseDir } = loadScene('bouncing-ball-stiff');
  const input: SceneInput = {
    name: 'abd-ball-on-block',
    duration: 0.25,
    dt: 1 / 120,
    contact: { kappa: 1e5, dhat: 1e-3, selfContact: false },
    obstacles: [{ type: 'plane' }],
    bodies: [
      { name: 'block', mesh: { type: 'box', size: [0.3, 0.05, 0.3], cells: [4, 1, 4] }, transform: { translate: [-0.15, 0.0005, -0.15] }, material: { ...stiff, youngsModulus: 1e6 } },
      { name: 'ball', kind: 'affine', mesh: { type: 'builtin', name: 'ball' }, transform: { center: true, translate: [0.01, 0.05 + 0.05 + 0.03, 0] }, material: { ...stiff, youngsModulus: 1e7 } },
    ],
  };
  const scene = parseScene(input);
  const model = buildModel(scene, meshResolver(baseDir));
  let steps = 0;
  let minDistance = Infinity;
  let touched = false;
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    step(r) {
      steps++;
      assert.equal(r.inverted, 0, `step ${r.step}: inverted tets`);
      if (r.activeContacts > 0) minDistance = Math.min(minDistance, r.minDistance);
      if (r.potentials.get('contact')! > 0) touched = true;
    },
  });
  assert.equal(summary.stopped, undefined, summary.stopped ?? '');
  assert.equal(steps, 31);
  assert.ok(touched, 'the ball reached the block');
  assert.ok(minDistance > 0 && minDistance < 1e-3, `min distance ${minDistance}`);
});

/** Speeds (linear momentum / mass) per step of a box of `kind` sliding at 1 m/s on the ground with friction mu. */
function slide(kind: 'deformable' | 'affine', mu: number): number[] {
  // kappa = 100 N/m: the barrier carries the box's weight near d = dhat / 2, so it keeps sliding on the ground.
  const scene = parseScene({
    name: `slide-${kind}`,
    duration: 0.1,
    dt: 1 / 120,
    contact: { kappa: 100, dhat: 1e-3, friction: mu, selfContact: false },
    obstacles: [{ type: 'plane' }],
    bodies: [{ name: 'box', kind, mesh: { type: 'box', size: [0.1, 0.05, 0.1], cells: [2, 1, 2] }, transform: { translate: [0, 0.0005, 0] }, material: stiff, velocity: { linear: [1, 0, 0] } }],
  });
  const model = buildModel(scene);
  const m = 0.5; // 0.1 x 0.05 x 0.1 m at 1000 kg/m^3
  const vx: number[] = [];
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    step(r) {
      assert.ok(r.activeContacts > 0, `step ${r.step}: the box left the ground`);
      vx.push(r.momentum[0] / m);
    },
  });
  assert.equal(summary.stopped, undefined, summary.stopped ?? '');
  return vx;
}

test('friction on mapped vertices: an affine box slides like the FEM box of the same stiff material and slows at about mu g', () => {
  const mu = 0.5;
  const abd = slide('affine', mu);
  const fem = slide('deformable', mu);
  for (let k = 0; k < abd.length; k++) assert.ok(Math.abs(abd[k] - fem[k]) < 3e-3, `step ${k}: ${abd[k]} vs ${fem[k]} m/s`);
  // The normal force oscillates about the weight on the soft barrier: the mean deceleration is near mu g.
  const rate = (abd[0] - abd[abd.length - 1]) / ((abd.length - 1) / 120);
  assert.ok(Math.abs(rate - mu * 9.8) < 0.15 * mu * 9.8, `deceleration ${rate} m/s^2 vs mu g = ${mu * 9.8}`);
});

test('torus links: the surface moments approach the solid torus; a link hanging from a held ring is caught by it', () => {
  const R = 0.02;
  const r = 0.004;
  const ring = torusSurface(R, r, 64, 32);
  const V = 2 * Math.PI ** 2 * R * r * r;
  const m = surfaceMoments(ring.positions, ring.triangles);
  assert.ok(Math.abs(m.volume / V - 1) < 0.01, `volume ${m.volume} vs ${V}`);
  // integral y^2 dV = V r^2 / 4, integral x^2 dV = V (R^2 / 2 + 3 r^2 / 8) for the solid torus about y.
  assert.ok(Math.abs(m.second[4] / ((V * r * r) / 4) - 1) < 0.02, `yy ${m.second[4]}`);
  assert.ok(Math.abs(m.second[0] / (V * (R * R / 2 + (3 * r * r) / 8)) - 1) < 0.02, `xx ${m.second[0]}`);
  // A flat ring held by `fixed`, a standing link (major radius 31 mm) through its hole 8 mm from its centre; the
  // link falls until the ring's tube meets the top of its hole (13 mm down), then swings about that point: hanging
  // straight its centre is R2 - 2r = 23 mm below the ring's tube. Through the ring it would keep falling.
  const scene = parseScene({
    name: 'hanging-link',
    duration: 0.2,
    dt: 1 / 120,
    contact: { kappa: 1e5, dhat: 1e-3, selfContact: false },
    bodies: [
      // At y = 1 m, so the energies are well away from 0 (the run's blow-up check compares with H_0).
      { name: 'ring', kind: 'affine', mesh: { type: 'torus', majorRadius: R, minorRadius: r }, transform: { translate: [0, 1, 0] }, material: stiff, fixed: [{ nodes: [0] }] },
      { name: 'link', kind: 'affine', mesh: { type: 'torus', majorRadius: 0.031, minorRadius: r, segments: 32 }, transform: { rotate: { axis: [1, 0, 0], degrees: 90 }, translate: [0.039, 1, 0] }, material: stiff },
    ],
  });
  const model = buildModel(scene);
  assert.deepEqual(Array.from(model.constrained.subarray(0, 12)), new Array(12).fill(1), 'the ring is held: all 12 DOFs');
  const link = 3 * model.bodies[1].affineNode!;
  let lowest = 0;
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    check(_step, x) {
      for (let d = 0; d < 12; d++) assert.equal(x[d], model.x0[d], 'the held ring does not move');
      lowest = Math.min(lowest, x[link + 1] - 1);
    },
  });
  assert.equal(summary.stopped, undefined, summary.stopped ?? '');
  assert.ok(lowest < -0.013 && lowest > -0.0235, `the link's centre fell to ${lowest} m: caught by the ring`);
});

test('chain-net builds: 66 affine links and ball, 16 border rings held, interlocked without touching (3.3 mm apart)', () => {
  const { scene, baseDir } = loadScene('chain-net');
  const model = buildModel(scene, meshResolver(baseDir));
  assert.equal(model.bodies.length, 66);
  const held = model.bodies.filter((b) => model.constrained[3 * b.affineNode!] === 1).length;
  assert.equal(held, 16);
  const y = contactPositions(model, model.x0);
  assert.equal(findIntersection(model.contact!.mesh, y), null);
  const { count, minDistance } = model.contact!.barrier.activeContacts(y, null);
  assert.equal(count, 0);
  // Links are placed so that tubes through one hole stay e sqrt 2 - 2 r = 3.3 mm apart.
  assert.ok(Math.abs(minDistance - (0.008 * Math.SQRT2 - 0.008)) < 1e-4, `min distance ${minDistance}`);
});

test('mixed scene: an affine box dropped on a pinned shell keeps the invariants on every step and is caught', () => {
  const scene = parseScene({
    name: 'abd-box-on-sheet',
    duration: 0.06,
    dt: 0.005,
    integrator: { name: 'implicit-euler' },
    contact: { dhat: 1e-3, kappa: 1e5 },
    bodies: [
      {
        name: 'sheet',
        mesh: { type: 'shell', shape: { type: 'rectangle', size: [0.3, 0.3], cells: [6, 6] }, thickness: 0.001, areaDensity: 0.4 },
        material: { model: 'neo-hookean', youngsModulus: 1e6, poissonRatio: 0.3 },
        transform: { translate: [-0.15, 0.2, -0.15] },
        fixed: [{ box: { min: [-1, 0, -1], max: [-0.15, 1, 1] } }, { box: { min: [0.15, 0, -1], max: [1, 1, 1] } }],
      },
      {
        name: 'box',
        kind: 'affine',
        mesh: { type: 'box', size: [0.04, 0.04, 0.04], cells: [2, 2, 2] },
        material: { youngsModulus: 1e7, density: 1000 },
        transform: { center: true, translate: [0.01, 0.2225, 0.01] },
        velocity: { linear: [0, -1, 0] },
      },
    ],
  });
  const model = buildModel(scene);
  const p = 3 * model.bodies[1].affineNode!;
  let minDistance = Infinity;
  let boxY = 0;
  let sheetLow = Infinity;
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    step(r) {
      if (r.activeContacts > 0) minDistance = Math.min(minDistance, r.minDistance);
    },
    check(_step, x) {
      boxY = x[p + 1];
      sheetLow = Math.min(...Array.from({ length: 49 }, (_, i) => x[3 * i + 1]));
    },
  });
  assert.equal(summary.stopped, undefined, summary.stopped ?? '');
  assert.ok(minDistance > 0 && minDistance < 1e-3, `min distance ${minDistance}`);
  // Without the sheet the box would fall 6 cm and more; the sheet holds it, below the box's bottom.
  assert.ok(boxY - 0.02 > 0.2 - 0.05, `box bottom at ${boxY - 0.02}`);
  assert.ok(sheetLow < boxY - 0.02, 'the box stays on top of the sheet');
});

test('scenes without affine bodies keep the identity map: the barrier acts on the nodes directly, not through the map', () => {
  const { scene, baseDir } = loadScene('bouncing-ball-stiff');
  const model = buildModel(scene, meshResolver(baseDir));
  assert.equal(model.vertexMap!.nVertices, model.nNodes);
  assert.equal(model.vertexMap!.identityCount, model.nNodes);
  assert.ok(model.terms.includes(model.contact!.barrier));
  assert.ok(!model.terms.some((t) => t instanceof MappedTerm));
  assert.equal(contactPositions(model, model.x0), model.x0);
});
