import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScene } from '../src/api/run-scene.js';
import { BODIES_COLUMNS } from '../src/io/run-output.js';
import { loadScene, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { bodyRecords } from '../src/sim/body-records.js';
import type { StepRecord } from '../src/sim/records.js';
import { simulate } from '../src/sim/simulate.js';
import { rng } from './numeric-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-bodies-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

/** Rows of a CSV without quoted fields, as objects keyed by the header. */
function readCsv(file: string): Record<string, string>[] {
  const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  const names = header.split(',');
  return rows.map((row) => Object.fromEntries(row.split(',').map((v, i) => [names[i], v])));
}

/** One body of every kind, apart from each other (no contact), falling and turning under gravity; the soft affine ball stretches as it spins. */
const mixedScene: SceneInput = {
  name: 'mixed-bodies',
  duration: 0.05,
  dt: 0.01,
  frameRate: 50,
  integrator: { name: 'a-search' },
  bodies: [
    { name: 'ball', kind: 'affine', mesh: { type: 'builtin', name: 'ball' }, transform: { translate: [0, 0.5, 0] }, material: { youngsModulus: 1e3, density: 1000 }, velocity: { linear: [0.3, 0, 0], angular: [1, 2, 3] } },
    { name: 'block', mesh: { type: 'box', size: [0.3, 0.1, 0.3], cells: [3, 1, 3] }, transform: { translate: [-0.15, 0, -0.15] }, material: { youngsModulus: 1e5, density: 500 }, fixed: [{ box: { min: [-1, -0.01, -1], max: [0, 0.01, 1] } }], velocity: { angular: [0, 0.5, 0] } },
    { name: 'sheet', mesh: { type: 'shell', shape: { type: 'rectangle', size: [0.3, 0.2], cells: [3, 2] }, thickness: 0.001, areaDensity: 0.4 }, material: { model: 'stvk', youngsModulus: 1e6 }, transform: { translate: [1, 1, 0] }, fixed: [{ box: { min: [0.9, 0.9, -1], max: [1.01, 1.1, 1] } }] },
    { name: 'pair', mesh: { type: 'particles', positions: [[-1, 1, 0], [-1, 1.2, 0.1]], masses: [0.5, 0.7], springs: [{ a: 0, b: 1, stiffness: 100, restLength: 0.1 }] } },
    { name: 'rope', mesh: { type: 'chain', length: 0.4, cells: 4, area: 1e-4 }, transform: { translate: [0, 1.5, 1] }, material: { youngsModulus: 1e6, density: 1000 }, fixed: [{ nodes: [0] }] },
  ],
};

test('per-body energies and momenta sum to the model totals in metrics.csv (every output frame) and at the end in summary.json', async () => {
  const out = join(tmp, 'mixed');
  const run = await runScene(mixedScene, { out });
  assert.equal(run.summary.stopped, undefined);
  const metrics = readCsv(join(out, 'metrics.csv'));
  const bodiesText = readFileSync(join(out, 'bodies.csv'), 'utf8');
  assert.equal(bodiesText.split('\n')[0], BODIES_COLUMNS.join(','));
  const bodies = readCsv(join(out, 'bodies.csv'));
  // Frames every 2 steps of 5: rows on steps 0, 2, 4, one per body.
  assert.deepEqual([...new Set(bodies.map((r) => Number(r.step)))], [0, 2, 4]);
  assert.deepEqual(bodies.filter((r) => r.step === '0').map((r) => `${r.name}:${r.kind}`), ['ball:affine', 'block:tets', 'sheet:shell', 'pair:particles', 'rope:chain']);
  const sumOver = (rows: Record<string, string>[], col: string) => rows.reduce((s, r) => s + Number(r[col]), 0);
  const close = (a: number, b: number, scale: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-10 * Math.abs(scale) + 1e-300, `${what}: bodies ${a} vs model ${b}`);
  for (const step of [0, 2, 4]) {
    const rows = bodies.filter((r) => Number(r.step) === step);
    const m = metrics[step];
    assert.equal(Number(rows[0].t), Number(m.t));
    const energyScale = Math.abs(Number(m.kinetic)) + Math.abs(Number(m.potential)) + Math.abs(Number(m.gravity));
    close(sumOver(rows, 'kinetic'), Number(m.kinetic), energyScale, `step ${step} kinetic`);
    close(sumOver(rows, 'gravity'), Number(m.gravity), energyScale, `step ${step} gravity`);
    // No contact here: the rest of the potential is the bodies' internal energy, term by term: the affine body's
    // orthogonality potential, the particles' spring, the elasticity of the tets, the shell and the chain.
    close(sumOver(rows, 'elastic'), Number(m.potential) - Number(m.gravity), energyScale, `step ${step} internal`);
    const internal = (kinds: string[]) => sumOver(rows.filter((r) => kinds.includes(r.kind)), 'elastic');
    close(internal(['affine']), Number(m.orthogonality), Number(m.orthogonality), `step ${step} orthogonality`);
    close(internal(['particles']), Number(m.spring), Number(m.spring), `step ${step} spring`);
    close(internal(['tets', 'shell', 'chain']), Number(m.elastic), Number(m.elastic), `step ${step} elastic`);
    if (step > 0) for (const kind of ['affine', 'particles', 'tets', 'shell', 'chain']) assert.ok(internal([kind]) > 1e-8, `step ${step}: ${kind} elastic ${internal([kind])}`);
    for (const c of ['px', 'py', 'pz', 'lx', 'ly', 'lz']) close(sumOver(rows, c), Number(m[c]), 10, `step ${step} ${c}`);
    // Every kind has motion or energy of its own: none of these sums is carried by one body alone.
    assert.ok(rows.filter((r) => Number(r.kinetic) > 0).length >= (step === 0 ? 2 : 5), `step ${step}: moving bodies`);
  }
  // summary.json: the last step (5, not a frame step), from the state kept for it.
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.equal(summary.steps, 5);
  assert.equal(summary.outputs.bodies, 'bodies.csv');
  assert.equal(summary.bodies.length, 5);
  const last = run.metrics[5];
  const final = summary.bodies as { kinetic: number; elastic: number; gravity: number; momentum: number[]; angularMomentum: number[] }[];
  const add = (f: (b: (typeof final)[number]) => number) => final.reduce((s, b) => s + f(b), 0);
  const scale = Math.abs(last.kinetic) + Math.abs(last.potential);
  close(add((b) => b.kinetic), last.kinetic, scale, 'final kinetic');
  close(add((b) => b.elastic + b.gravity), last.potential, scale, 'final potential');
  for (let a = 0; a < 3; a++) {
    close(add((b) => b.momentum[a]), last.momentum[a], 1, `final p${a}`);
    close(add((b) => b.angularMomentum[a]), last.angularMomentum[a], 1, `final L${a}`);
  }
});

test('per-body sums with contact: an affine box resting on a FEM block on the ground; the barrier stays the model\'s', () => {
  const dhat = 1e-3;
  const gap = 0.5 * dhat;
  const stiff = { youngsModulus: 1e6, density: 1000 };
  const scene = parseScene({
    name: 'box-on-block',
    duration: 0.03,
    dt: 0.01,
    frameRate: 100,
    integrator: { name: 'a-search' },
    contact: { kappa: 1e3, dhat },
    obstacles: [{ type: 'plane', point: [0, -gap, 0] }],
    bodies: [
      { name: 'block', mesh: { type: 'box', size: [0.3, 0.1, 0.3], cells: [2, 1, 2] }, transform: { translate: [-0.15, 0, -0.15] }, material: stiff },
      { name: 'box', kind: 'affine', mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] }, transform: { center: true, translate: [0, 0.15 + gap, 0] }, material: stiff, velocity: { angular: [0, 1, 0] } },
    ],
  });
  const model = buildModel(scene);
  const rows: StepRecord[] = [];
  const { summary } = simulate(model, toRunOptions(scene), { step: (r) => rows.push(r) });
  assert.equal(summary.stopped, undefined);
  assert.equal(rows.length, 4);
  for (const r of rows) {
    const bodies = r.bodies!;
    assert.deepEqual(bodies.map((b) => b.kind), ['tets', 'affine']);
    const contact = r.potentials.get('contact')!;
    assert.ok(contact > 0, `step ${r.step}: the box rests on the block (barrier ${contact} J)`);
    // The invariants (simulate also checks for intersections on every frame, here every step).
    assert.ok(r.inverted === 0 && r.minDistance > 0, `step ${r.step}: ${r.inverted} inverted, distance ${r.minDistance}`);
    const sum = (f: (b: (typeof bodies)[number]) => number) => bodies.reduce((s, b) => s + f(b), 0);
    const scale = Math.abs(r.kinetic) + Math.abs(r.potential) + Math.abs(r.potentials.get('gravity')!);
    const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-13 * scale, `step ${r.step} ${what}: bodies ${a} vs model ${b}`);
    close(sum((b) => b.kinetic), r.kinetic, 'kinetic');
    close(sum((b) => b.gravity), r.potentials.get('gravity')!, 'gravity');
    close(sum((b) => b.elastic), r.potential - r.potentials.get('gravity')! - contact, 'elastic');
    for (let a = 0; a < 3; a++) {
      close(sum((b) => b.momentum[a]), r.momentum[a], `p${a}`);
      close(sum((b) => b.angularMomentum[a]), r.angularMomentum[a], `L${a}`);
    }
  }
});

/** A brick given as an affine body and as tets of the same mesh (the tets' rest positions are the body's). */
function brickScene(kind: 'affine' | 'deformable', cells: [number, number, number]): SceneInput {
  return {
    name: 'brick',
    duration: 0.01,
    dt: 0.01,
    gravity: [0, 0, 0],
    bodies: [
      {
        name: 'brick',
        kind,
        mesh: { type: 'box', size: [0.2, 0.1, 0.05], cells },
        transform: { rotate: { axis: [1, 2, 3], degrees: 40 }, translate: [0.3, -0.2, 0.1] },
        material: { youngsModulus: 1e8, density: 1000 },
      },
    ],
  };
}

test('affine body: kinetic energy, momentum and angular momentum of any affine motion equal the integrals over its tet mesh', () => {
  const affine = buildModel(parseScene(brickScene('affine', [1, 1, 1])));
  const node = affine.bodies[0].firstNode;
  assert.equal(affine.bodies[0].nodeCount, 4);
  // Rest frame: p0 (centre of mass) and orthonormal columns c0_k; a point X has body coordinates r_k = (X - p0) . c0_k.
  const q0 = affine.rest.slice(3 * node, 3 * node + 12);
  // A general (not rigid) affine state and velocity.
  const rand = rng(11);
  const x = new Float64Array(affine.x0);
  const v = new Float64Array(affine.v0);
  for (let i = 0; i < 12; i++) {
    x[3 * node + i] += 0.3 * (rand() - 0.5);
    v[3 * node + i] = 2 * (rand() - 0.5);
  }
  const [rec] = bodyRecords(affine, x, v);
  const field = (X: ArrayLike<number>, q: Float64Array): number[] => {
    const r = [0, 1, 2].map((k) => [0, 1, 2].reduce((s, a) => s + (X[a] - q0[a]) * q0[3 + 3 * k + a], 0));
    return [0, 1, 2].map((a) => q[3 * node + a] + r[0] * q[3 * node + 3 + a] + r[1] * q[3 * node + 6 + a] + r[2] * q[3 * node + 9 + a]);
  };
  const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  /** Kinetic energy, momentum and angular momentum of the affine field over the tets of a mesh, consistent or lumped mass. */
  const integrate = (cells: [number, number, number], lumped: boolean) => {
    const fem = buildModel(parseScene(brickScene('deformable', cells)));
    const { tets } = fem.bodies[0];
    const rest = fem.rest;
    let kinetic = 0;
    const p = [0, 0, 0];
    const L = [0, 0, 0];
    for (let t = 0; t < tets.length; t += 4) {
      const X = [0, 1, 2, 3].map((i) => rest.subarray(3 * tets[t + i], 3 * tets[t + i] + 3));
      const e = [1, 2, 3].map((i) => [0, 1, 2].map((a) => X[i][a] - X[0][a]));
      const volume = Math.abs(cross(e[0], e[1]).reduce((s, c, a) => s + c * e[2][a], 0)) / 6;
      const xs = X.map((Xi) => field(Xi, x));
      const vs = X.map((Xi) => field(Xi, v));
      // Consistent mass of a linear tet: rho V (1 + delta_ij) / 20; lumped: rho V / 4 on the diagonal.
      for (let i = 0; i < 4; i++) {
        for (let j = 0; j < 4; j++) {
          const mij = lumped ? (i === j ? (1000 * volume) / 4 : 0) : (1000 * volume * (i === j ? 2 : 1)) / 20;
          if (mij === 0) continue;
          kinetic += 0.5 * mij * (vs[i][0] * vs[j][0] + vs[i][1] * vs[j][1] + vs[i][2] * vs[j][2]);
          const l = cross(xs[i], vs[j]);
          for (let a = 0; a < 3; a++) {
            p[a] += mij * vs[j][a];
            L[a] += mij * l[a];
          }
        }
      }
    }
    return { kinetic, p, L };
  };
  const exact = integrate([2, 2, 1], false);
  const rel = (a: number[], b: number[]) => Math.hypot(...a.map((ai, k) => ai - b[k])) / Math.hypot(...b);
  assert.ok(Math.abs(rec.kinetic / exact.kinetic - 1) < 1e-12, `kinetic ${rec.kinetic} vs ${exact.kinetic}`);
  assert.ok(rel(rec.momentum, exact.p) < 1e-12, `momentum ${rec.momentum} vs ${exact.p}`);
  assert.ok(rel(rec.angularMomentum, exact.L) < 1e-12, `angular momentum ${rec.angularMomentum} vs ${exact.L}`);
  // Summing m_i x_i x v_i over lumped nodes converges to it (second order) as the sampling gets finer.
  const coarse = rel(integrate([2, 1, 1], true).L, rec.angularMomentum);
  const fine = rel(integrate([16, 8, 4], true).L, rec.angularMomentum);
  assert.ok(coarse > 1e-4 && fine < coarse / 20, `lumped sampling: error ${coarse} (1 cell thick) then ${fine} (8x finer)`);
});

test('affine body: the spinning brick against the closed form L = I omega, kept by A-search over 30 steps', () => {
  const scene = loadScene('abd-tumbling-brick');
  const model = buildModel(scene.scene);
  const [rec] = bodyRecords(model, model.x0, model.v0);
  assert.equal(rec.kind, 'affine');
  // A centred 0.2 x 0.1 x 0.05 m brick of 1 kg at rest in the world axes, turning at omega = (0.05, 5, 0) rad/s.
  const m = 1000 * 0.2 * 0.1 * 0.05;
  const I = [(m / 12) * (0.1 ** 2 + 0.05 ** 2), (m / 12) * (0.2 ** 2 + 0.05 ** 2), (m / 12) * (0.2 ** 2 + 0.1 ** 2)];
  const omega = [0.05, 5, 0];
  const L = omega.map((w, a) => I[a] * w);
  for (let a = 0; a < 3; a++) assert.ok(Math.abs(rec.angularMomentum[a] - L[a]) < 1e-14, `L_${a}: ${rec.angularMomentum[a]} vs ${L[a]}`);
  const kinetic = 0.5 * omega.reduce((s, w, a) => s + I[a] * w * w, 0);
  assert.ok(Math.abs(rec.kinetic / kinetic - 1) < 1e-12, `kinetic ${rec.kinetic} vs ${kinetic}`);
  assert.ok(Math.abs(rec.elastic) < 1e-20 && rec.gravity === 0);
  // Free rigid motion keeps L; A-search keeps |L| within 1 % (0.4 % lost by step 30 here, implicit Euler 4.8 %).
  const opts = toRunOptions(scene.scene);
  const rows: StepRecord[] = [];
  const { summary } = simulate(model, { ...opts, duration: 30 * opts.h }, { step: (r) => rows.push(r) });
  assert.equal(summary.steps, 30);
  const end = summary.bodies[0].angularMomentum;
  const kept = Math.hypot(...end) / Math.hypot(...L);
  assert.ok(Math.abs(kept - 1) < 1e-2, `|L(T)| / |L(0)| = ${kept}`);
  // One body: its values are the model's.
  const lastRow = rows[rows.length - 1];
  for (let a = 0; a < 3; a++) assert.ok(Math.abs(end[a] - lastRow.angularMomentum[a]) < 1e-15 * Math.hypot(...L), `L_${a} of the body and the model`);
  assert.ok(Math.abs(summary.bodies[0].kinetic - lastRow.kinetic) < 1e-15 * kinetic);
});
