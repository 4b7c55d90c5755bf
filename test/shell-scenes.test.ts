import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { runScene } from '../src/index.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { parseObjFrame } from '../web/shared/obj-frame.js';

test('shell-cantilever: the scene as the issue states it, and its free end at rest sags q L^4 / (8 D) = 9.41 mm within 3 %', () => {
  const { scene, baseDir } = loadScene('shell-cantilever');
  assert.equal(scene.integrator.name, 'implicit-euler');
  assert.equal(scene.dt, 0.01);
  assert.equal(scene.duration, 3);
  const model = buildModel(scene, meshResolver(baseDir));
  assert.equal(model.contact, undefined);
  const tip: number[] = [];
  let fixed = 0;
  for (let i = 0; i < model.nNodes; i++) {
    if (model.x0[3 * i] > 0.2 - 1e-9) tip.push(i);
    if (model.constrained[3 * i]) {
      fixed++;
      assert.ok(model.x0[3 * i] <= 1e-12, 'only nodes with x <= 0 are fixed');
    }
    assert.ok(Math.abs(model.x0[3 * i + 1] - 0.3) < 1e-12 && model.x0[3 * i] > -0.0025 - 1e-12 && model.x0[3 * i + 2] < 0.02 + 1e-12);
  }
  assert.equal(fixed, 2 * 9, 'the two columns of nodes at x = -c and x = 0');
  assert.equal(tip.length, 9);
  // The rest state, reached cheaply: the same model with implicit Euler at h = 0.1 s (strongly damped) for 1.5 s.
  const sags: number[] = [];
  const { summary } = simulate(model, { ...toRunOptions(scene), h: 0.1, duration: 1.5, frameRate: 10 }, {
    frame(_k, _t, x) {
      sags.push(tip.reduce((s, i) => s + (0.3 - x[3 * i + 1]), 0) / tip.length);
    },
  });
  assert.equal(summary.stopped, undefined);
  const q = 0.4 * 9.8, L = 0.2, D = (1e9 * 1e-3 ** 3) / 12;
  const beam = (q * L ** 4) / (8 * D);
  assert.ok(Math.abs(beam - 9.408e-3) < 1e-6);
  const sag = sags[sags.length - 1];
  assert.ok(Math.abs(sags[sags.length - 2] - sag) < 1e-6, `at rest: ${sags.slice(-3)}`);
  assert.ok(Math.abs(sag / beam - 1) < 0.03, `sag ${(sag * 1000).toFixed(3)} mm vs beam theory ${(beam * 1000).toFixed(3)} mm`);
});

/** A small shell scene: a 4 x 2 cell rectangle, pinned along x = 0. */
function sheetScene(mesh: Record<string, unknown>, material: Record<string, unknown> = { model: 'stvk', youngsModulus: 1e5, poissonRatio: 0.3 }): SceneInput {
  return {
    name: 'sheet',
    duration: 0.05,
    dt: 0.01,
    frameRate: 100,
    integrator: { name: 'implicit-euler' },
    bodies: [
      {
        name: 'sheet',
        mesh: { type: 'shell', thickness: 0.001, areaDensity: 0.4, ...mesh } as never,
        material: material as never,
        transform: { translate: [0, 1, 0] },
        fixed: [{ box: { min: [-1, 0, -1], max: [0, 2, 1] } }],
      },
    ],
  };
}

test('shells: masses from the area density, terms by bending modulus, OBJ shapes, and the frames carry the triangles', async () => {
  const rect = buildModel(parseScene(sheetScene({ shape: { type: 'rectangle', size: [0.4, 0.2], cells: [4, 2] } })));
  let mass = 0;
  for (let d = 0; d < rect.mass.length; d += 3) mass += rect.mass[d];
  assert.ok(Math.abs(mass - 0.4 * 0.08) < 1e-15);
  assert.deepEqual(rect.terms.map((t) => t.constructor.name), ['ShellMembrane', 'ShellBending', 'Gravity']);
  assert.equal(rect.surface.length, 3 * 16);
  const membraneOnly = buildModel(parseScene(sheetScene({ shape: { type: 'disc', radius: 0.1, rings: 3 }, bendingModulus: 0 })));
  assert.deepEqual(membraneOnly.terms.map((t) => t.constructor.name), ['ShellMembrane', 'Gravity']);
  // Default area density: material density times thickness.
  const dense = buildModel(parseScene(sheetScene({ shape: { type: 'polygon', sides: 8, radius: 0.5, rings: 2 }, areaDensity: undefined }, { model: 'neo-hookean', youngsModulus: 1e5, density: 500 })));
  let m2 = 0;
  for (let d = 0; d < dense.mass.length; d += 3) m2 += dense.mass[d];
  const octagonArea = 2 * Math.SQRT2 * 0.25;
  assert.ok(Math.abs(m2 - 500 * 0.001 * octagonArea) < 1e-12, `${m2}`);

  const dir = mkdtempSync(join(tmpdir(), 'vivace-shell-'));
  try {
    writeFileSync(join(dir, 'square.obj'), 'v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf 1 4 3 2\n');
    const input = sheetScene({ shape: { type: 'file', path: 'square.obj' } });
    writeFileSync(join(dir, 'sheet.json'), JSON.stringify(input));
    const fromFile = buildModel(parseScene(input), meshResolver(dir));
    assert.equal(fromFile.nNodes, 4);
    assert.equal(fromFile.surface.length, 6);
    const out = join(dir, 'run');
    await runScene(join(dir, 'sheet.json'), { out });
    const frame = parseObjFrame(readFileSync(join(out, 'frames', 'frame_00005.obj'), 'utf8'));
    assert.equal(frame.triangles.length, 6, 'both triangles of the square');
    assert.equal(frame.positions.length, 12);
    assert.ok(frame.positions[7] < 1, 'the free corner has fallen');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('shells: bad input names the field', () => {
  const build = (mesh: Record<string, unknown>, material?: Record<string, unknown>) => () => buildModel(parseScene(sheetScene(mesh, material)));
  assert.throws(build({ shape: { type: 'rectangle', size: [0.4, 0.2], cells: [4, 2] } }, { model: 'corotated', youngsModulus: 1e5 }), /bodies\[0\]\.material\.model: a shell's membrane is 'neo-hookean' or 'stvk', not 'corotated'/);
  assert.throws(build({ shape: { type: 'rectangle', size: [0.4, 0.2], cells: [4, 2] }, thickness: 0 }), /bodies\[0\]\.mesh\.thickness/);
  assert.throws(build({ shape: { type: 'disc', radius: 0.1 } }), /bodies\[0\]\.mesh\.shape\.rings/);
  assert.throws(build({ shape: { type: 'polygon', sides: 2, radius: 1, rings: 1 } }), /bodies\[0\]\.mesh\.shape\.sides/);
  assert.throws(build({ shape: { type: 'ring', radius: 1 } }), /bodies\[0\]\.mesh\.shape.*'rectangle', 'disc', 'polygon', 'file'/);
  assert.throws(() => meshResolver('/nonexistent')(parseScene(sheetScene({ shape: { type: 'file', path: 'a.stl' } })).bodies[0], 0), /bodies\[0\]\.mesh\.shape\.path: "a.stl": a shell is read from an OBJ surface/);
});
