import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DrumProjection, LOWEST_DRUM_MODES, besselJ, besselZero, modeName, windowedAmplitudes } from '../src/analysis/membrane-modes.js';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { runMembrane } from '../scripts/membrane-modes.js';

test('Bessel functions and the drum zeros j_mn (tables: 2.40483, 3.83171, 5.13562, 5.52008, 6.38016)', () => {
  assert.ok(Math.abs(besselJ(0, 1) - 0.7651976866) < 1e-10);
  assert.ok(Math.abs(besselJ(2, 3) - 0.4860912606) < 1e-10);
  const table: [number, number, number][] = [[0, 1, 2.404825558], [1, 1, 3.831705970], [2, 1, 5.135622302], [0, 2, 5.520078110], [3, 1, 6.380161896]];
  for (const [m, n, j] of table) assert.ok(Math.abs(besselZero(m, n) - j) < 1e-8, `j_${m}${n}`);
});

test('vibrating-membrane: 16,207 nodes, fixed rim, and its initial velocity projects on u21 alone with amplitude 1 m/s', () => {
  const { scene, baseDir } = loadScene('vibrating-membrane');
  assert.equal(scene.dt, 1 / 120);
  const model = buildModel(scene, meshResolver(baseDir));
  assert.equal(model.nNodes, 16207);
  assert.equal(model.surface.length / 3, 31974);
  let fixed = 0;
  for (let i = 0; i < model.nNodes; i++) {
    const r = Math.hypot(model.x0[3 * i], model.x0[3 * i + 2]);
    if (model.constrained[3 * i]) {
      fixed++;
      assert.ok(Math.abs(r - 0.1) < 1e-12, 'only the rim is fixed');
    }
  }
  assert.equal(fixed, 6 * 73);
  let mass = 0;
  for (let d = 0; d < model.mass.length; d += 3) mass += model.mass[d];
  // The 438-gon inscribed in the circle: area within 0.004 % of pi R^2.
  assert.ok(Math.abs(mass / (0.4 * Math.PI * 0.01) - 1) < 1e-4, `mass ${mass}`);
  const nodes = Uint32Array.from({ length: model.nNodes }, (_, i) => i);
  const projection = new DrumProjection(LOWEST_DRUM_MODES, model.rest, model.mass, nodes, [0, 0.5, 0], 0.1);
  const c = projection.project(model.v0, new Float64Array(LOWEST_DRUM_MODES.length));
  LOWEST_DRUM_MODES.forEach((mode, k) => {
    const name = modeName(mode);
    if (name === 'u21c') assert.ok(Math.abs(c[k] - 1) < 1e-12, `${name}: ${c[k]}`);
    else assert.ok(Math.abs(c[k]) < 2e-3, `${name}: ${c[k]}`);
  });
});

test('mode projection on a reduced disc (8 rings): modes are mass-orthogonal, and a short run keeps its motion in u21', () => {
  const { scene, baseDir } = loadScene('vibrating-membrane');
  // Each mode shape projects on itself with coefficient 1 and on the others with little.
  const small = { ...scene, bodies: [{ ...scene.bodies[0], mesh: { ...scene.bodies[0].mesh, shape: { type: 'disc' as const, radius: 0.1, rings: 8 } } }] };
  const model = buildModel(small as typeof scene, meshResolver(baseDir));
  const nodes = Uint32Array.from({ length: model.nNodes }, (_, i) => i);
  const projection = new DrumProjection(LOWEST_DRUM_MODES, model.rest, model.mass, nodes, [0, 0.5, 0], 0.1);
  const field = new Float64Array(3 * model.nNodes);
  const c = new Float64Array(LOWEST_DRUM_MODES.length);
  projection.shapes.forEach((phi, k) => {
    phi.forEach((value, a) => (field[3 * a + 1] = 0.3 * value));
    projection.project(field, c);
    c.forEach((value, j) => assert.ok(Math.abs(value - (j === k ? 0.3 : 0)) < (j === k ? 1e-12 : 0.03), `${modeName(LOWEST_DRUM_MODES[k])} on ${modeName(LOWEST_DRUM_MODES[j])}: ${value}`));
  });
  // Two steps of A-search at h = 1/120 s: u21 displacement grows as the integral of its velocity (about t for
  // these first steps, the mode's period being about 0.1 s); the modes of other angular order or phase stay below
  // 1e-4 of it (not zero: the ring triangulation is not mirror-symmetric).
  const history = runMembrane(scene, baseDir, 'a-search', 120, 8, 2 / 120);
  assert.equal(history.stopped, undefined);
  const u21 = LOWEST_DRUM_MODES.findIndex((m) => m.m === 2 && m.n === 1 && !m.sine);
  const first = history.w[1][u21];
  assert.ok(first > 0.7 / 120 && first < 1 / 120, `after one step: ${first}`);
  for (let f = 1; f < history.t.length; f++) {
    assert.ok(history.w[f][u21] > history.w[f - 1][u21], 'u21 grows over the first quarter period');
    LOWEST_DRUM_MODES.forEach((mode, k) => {
      if (mode.m % 2 === 1 || mode.sine) assert.ok(Math.abs(history.w[f][k]) < 1e-4 * history.w[f][u21], `${modeName(mode)}: ${history.w[f][k]}`);
    });
  }
  const windows = windowedAmplitudes(history, u21, 0.01);
  assert.equal(windows.length, 2);
  assert.equal(windows[windows.length - 1].mode, Math.abs(history.w[history.w.length - 1][u21]));
});
