/**
 * Thin shells in IPC contact (two-sided: the distances are unsigned): shell-solid, shell-obstacle and shell
 * self-contact on short runs, with the contact invariants (no intersecting pair, every distance above zero) checked
 * on every step by the run and again here on every frame.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findIntersection, minimumDistance } from '../src/contact/intersection.js';
import { meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { formatObj } from '../src/io/mesh-files.js';
import type { Model } from '../src/model/model.js';
import { buildModel, type MeshResolver } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { uFoldedStrip } from './helpers.js';

const sheetMaterial = { model: 'neo-hookean', youngsModulus: 1e6, poissonRatio: 0.3 } as const;

/** Runs the scene checking the invariants on every step; returns the model, the records' min distances and the frames. */
function runChecked(input: SceneInput, resolve?: MeshResolver): { model: Model; minDistances: number[]; frames: Float64Array[] } {
  const scene = parseScene(input);
  const model = buildModel(scene, resolve);
  assert.ok(model.contact, 'contact is on');
  const minDistances: number[] = [];
  const frames: Float64Array[] = [];
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    step(rec) {
      assert.equal(rec.inverted, 0, `step ${rec.step}: inverted tets`);
      // NaN: no pair near enough for the candidate sets to keep one (min_distance in the README's outputs)
      minDistances.push(Number.isNaN(rec.minDistance) ? Infinity : rec.minDistance);
    },
    frame(_k, _t, x) {
      assert.equal(findIntersection(model.contact!.mesh, x), null, 'no intersecting pair');
      frames.push(Float64Array.from(x));
    },
  });
  assert.equal(summary.stopped, undefined, `the run completes: ${summary.stopped}`);
  for (const d of minDistances) assert.ok(d > 0, `min distance ${d}`);
  return { model, minDistances, frames };
}

test('a ball dropped on a pinned sheet: the sheet catches it (shell-solid contact, both sides unsigned)', () => {
  const { model, minDistances, frames } = runChecked({
    name: 'ball-on-sheet',
    duration: 0.06,
    dt: 0.005,
    frameRate: 200,
    integrator: { name: 'implicit-euler' },
    contact: { dhat: 1e-3, kappa: 1e5 },
    bodies: [
      {
        name: 'sheet',
        mesh: { type: 'shell', shape: { type: 'rectangle', size: [0.3, 0.3], cells: [6, 6] }, thickness: 0.001, areaDensity: 0.4 },
        material: sheetMaterial,
        transform: { translate: [-0.15, 0.2, -0.15] },
        fixed: [
          { box: { min: [-1, 0, -1], max: [-0.15, 1, 1] } },
          { box: { min: [0.15, 0, -1], max: [1, 1, 1] } },
        ],
      },
      {
        name: 'ball',
        mesh: { type: 'box', size: [0.04, 0.04, 0.04], cells: [2, 2, 2] },
        material: { model: 'neo-hookean', youngsModulus: 1e5, density: 1000 },
        transform: { center: true, translate: [0.01, 0.2225, 0.01] },
        velocity: { linear: [0, -1, 0] },
      },
    ],
  });
  const ball = model.bodies[1];
  const ballNodes = new Set(ball.surface);
  const lowest = (x: Float64Array) => Math.min(...[...ballNodes].map((i) => x[3 * i + 1]));
  // The ball starts 2.5 mm above the sheet at 1 m/s: contact within the first steps.
  assert.ok(Math.min(...minDistances) < 1e-3, 'the barrier became active');
  // Without the sheet it would fall 6 cm plus; the sheet (pinned at x = +-0.15) holds it within a few cm.
  const end = frames[frames.length - 1];
  assert.ok(lowest(end) > 0.2 - 0.05, `ball bottom at ${lowest(end)}`);
  // The ball is above the sheet's centre: the sheet's lowest node is below the ball's lowest point.
  const sheetLow = Math.min(...Array.from({ length: 49 }, (_, i) => end[3 * i + 1]));
  assert.ok(sheetLow < lowest(end), 'the ball stays on top of the sheet');
});

test('a sheet draped on a box: it rests on the box top, its free corners fall past the edges', () => {
  const { model, minDistances, frames } = runChecked({
    name: 'sheet-on-box',
    duration: 0.1,
    dt: 0.005,
    frameRate: 200,
    integrator: { name: 'implicit-euler' },
    contact: { dhat: 1e-3, kappa: 1e4 },
    bodies: [
      {
        name: 'sheet',
        mesh: { type: 'shell', shape: { type: 'rectangle', size: [0.3, 0.3], cells: [8, 8] }, thickness: 0.001, areaDensity: 0.4 },
        material: sheetMaterial,
        transform: { translate: [-0.15, 0.103, -0.15] },
        velocity: { linear: [0, -1, 0] },
      },
      {
        name: 'box',
        mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [2, 2, 2] },
        material: { model: 'neo-hookean', youngsModulus: 1e6 },
        transform: { translate: [-0.05, 0, -0.05] },
        fixed: [{ box: { min: [-1, -1, -1], max: [1, 1, 1] } }],
      },
    ],
  });
  assert.ok(Math.min(...minDistances) < 1e-3, 'the barrier became active');
  const end = frames[frames.length - 1];
  const sheetNodes = 9 * 9;
  // Still resting on the box at the end (the barrier active), nothing of the sheet inside the box's footprint below
  // its top, the corners hanging past its edges.
  assert.ok(minDistances[minDistances.length - 1] < 1e-3, `in contact at the end: ${minDistances[minDistances.length - 1]}`);
  for (let i = 0; i < sheetNodes; i++) {
    const inside = Math.abs(end[3 * i]) < 0.05 && Math.abs(end[3 * i + 2]) < 0.05;
    if (inside) assert.ok(end[3 * i + 1] > 0.1, `node ${i} above the box top`);
  }
  for (const corner of [0, 8, 72, 80]) assert.ok(end[3 * corner + 1] < 0.09, `corner ${corner} hangs past the box: y = ${end[3 * corner + 1]}`);
  assert.equal(model.nNodes, sheetNodes + 27);
});


test('a sheet folding onto itself: the free layer of a U-shaped strip falls onto the fixed layer (self-contact)', () => {
  const r = 0.01, L = 0.2;
  const { positions, triangles } = uFoldedStrip(r, L);
  const dir = mkdtempSync(join(tmpdir(), 'vivace-fold-'));
  try {
    writeFileSync(join(dir, 'u.obj'), formatObj(positions, triangles, 12));
    const { minDistances, frames } = runChecked(
      {
        name: 'fold',
        duration: 0.06,
        dt: 0.005,
        frameRate: 200,
        integrator: { name: 'implicit-euler' },
        contact: { dhat: 1e-3, kappa: 1e4 },
        bodies: [
          {
            name: 'strip',
            mesh: { type: 'shell', shape: { type: 'file', path: 'u.obj' }, thickness: 0.001, areaDensity: 0.4, bendingModulus: 1e4 },
            material: sheetMaterial,
            velocity: { linear: [0, -1, 0] },
            fixed: [{ box: { min: [-1, 0, -1], max: [L, r, 1] } }],
          },
        ],
      },
      meshResolver(dir),
    );
    // One body, no obstacle: an active barrier is self-contact between the two layers.
    assert.ok(Math.min(...minDistances) < 1e-3, `self-contact became active (min distance ${Math.min(...minDistances)})`);
    const end = frames[frames.length - 1];
    // The top layer's free end (x < 0.1) has come down onto the bottom layer: within 2 * dhat above y = 1 cm.
    let lowest = Infinity;
    for (let i = 0; i < end.length; i += 3) if (positions[i + 1] > 2.5 * r && positions[i] < 0.1) lowest = Math.min(lowest, end[i + 1]);
    assert.ok(lowest > r && lowest < r + 2e-3, `top layer lies on the bottom one: lowest y ${lowest}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Contact offsets (Codim-IPC thickness): with contactOffset 'thickness' a shell's primitives carry half its thickness,
// so a solid keeps t/2 from its mid-surface and two layers keep t apart.

test('a ball dropped on a pinned sheet with contactOffset: it lands and rests more than half the thickness above the mid-surface', () => {
  const thickness = 0.004, xi = thickness / 2, dhat = 1e-3;
  const sheet = (contactOffset: number | 'thickness') => ({
    name: 'sheet',
    mesh: { type: 'shell' as const, shape: { type: 'rectangle' as const, size: [0.3, 0.3] as [number, number], cells: [6, 6] as [number, number] }, thickness, areaDensity: 0.4, contactOffset },
    material: sheetMaterial,
    transform: { translate: [-0.15, 0.2, -0.15] as [number, number, number] },
    fixed: [{ box: { min: [-1, 0, -1] as [number, number, number], max: [-0.15, 1, 1] as [number, number, number] } }, { box: { min: [0.15, 0, -1] as [number, number, number], max: [1, 1, 1] as [number, number, number] } }],
  });
  const run = (contactOffset: number | 'thickness') => {
    const { model, frames } = runChecked({
      name: 'ball-on-thick-sheet',
      duration: 0.1,
      dt: 0.005,
      frameRate: 200,
      integrator: { name: 'implicit-euler' },
      contact: { dhat, kappa: 1e5 },
      bodies: [
        sheet(contactOffset),
        {
          name: 'ball',
          mesh: { type: 'box', size: [0.04, 0.04, 0.04], cells: [2, 2, 2] },
          material: { model: 'neo-hookean', youngsModulus: 1e5, density: 1000 },
          // Its bottom face starts 2.5 mm above the offset surface (xi above the sheet), falling at 0.5 m/s.
          transform: { center: true, translate: [0.01, 0.22 + xi + 2.5e-3, 0.01] },
          velocity: { linear: [0, -0.5, 0] },
        },
      ],
    });
    // The distance between the ball's surface and the sheet's mid-surface, every step (frames are every step).
    return { model, distances: frames.map((x) => minimumDistance(model.contact!.mesh, x, 0.01)?.distance ?? Infinity) };
  };
  const thick = run('thickness');
  assert.equal(thick.model.contact!.mesh.maxPairOffset, 2 * xi, 'the sheet carries half its thickness');
  for (const [step, d] of thick.distances.entries()) assert.ok(d > xi, `step ${step}: ball ${d} from the mid-surface, offset ${xi}`);
  const end = thick.distances[thick.distances.length - 1];
  assert.ok(end > xi && end < xi + dhat, `resting on the offset surface: ${end} (xi ${xi}, dhat ${dhat})`);
  // The same drop with the offset given in metres lands the same; without an offset the ball comes to within dhat.
  const metres = run(xi);
  assert.equal(metres.distances[metres.distances.length - 1], end);
  const thin = run(0);
  assert.ok(thin.distances[thin.distances.length - 1] < dhat, `without offset the ball rests within dhat: ${thin.distances[thin.distances.length - 1]}`);
});

test('a strip folding onto itself with contactOffset: the layers stay more than the thickness apart', () => {
  const r = 0.01, L = 0.2, thickness = 0.003, dhat = 1e-3;
  const { positions, triangles } = uFoldedStrip(r, L);
  const dir = mkdtempSync(join(tmpdir(), 'vivace-fold-offset-'));
  try {
    writeFileSync(join(dir, 'u.obj'), formatObj(positions, triangles, 12));
    const { model, minDistances, frames } = runChecked(
      {
        name: 'fold-offset',
        duration: 0.06,
        dt: 0.005,
        frameRate: 200,
        integrator: { name: 'implicit-euler' },
        contact: { dhat, kappa: 1e4 },
        bodies: [
          {
            name: 'strip',
            mesh: { type: 'shell', shape: { type: 'file', path: 'u.obj' }, thickness, areaDensity: 0.4, bendingModulus: 1e4, contactOffset: 'thickness' },
            material: sheetMaterial,
            velocity: { linear: [0, -1, 0] },
            fixed: [{ box: { min: [-1, 0, -1], max: [L, r, 1] } }],
          },
        ],
      },
      meshResolver(dir),
    );
    // Records give the gap d - xi: the barrier became active between the layers.
    assert.ok(Math.min(...minDistances) < dhat, `self-contact became active (min gap ${Math.min(...minDistances)})`);
    for (const [step, x] of frames.entries()) {
      const closest = minimumDistance(model.contact!.mesh, x, 0.01);
      if (closest) assert.ok(closest.distance > thickness, `step ${step}: layers ${closest.distance} apart (${closest.message}), thickness ${thickness}`);
    }
    const end = frames[frames.length - 1];
    let lowest = Infinity;
    for (let i = 0; i < end.length; i += 3) if (positions[i + 1] > 2.5 * r && positions[i] < 0.1) lowest = Math.min(lowest, end[i + 1]);
    assert.ok(lowest > r + thickness && lowest < r + thickness + 2 * dhat, `top layer lies a thickness above the bottom one: lowest y ${lowest}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
