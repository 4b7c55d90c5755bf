/**
 * Obstacles from triangle-mesh files ({"type": "mesh", "path": ...}): OBJ and STL (ASCII and binary) read alike; a
 * box set on a 20 degree ramp read from an OBJ file stays put with mu = 0.6 (tan 20 deg = 0.36) and slides at
 * g sin(theta) without friction; every frame is checked (no inverted tet, no intersection, gap above zero), and
 * the frames hold the ramp as its own group (OBJ) and as triangles (VTU).
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findIntersection } from '../src/contact/intersection.js';
import { loadScene, runScene } from '../src/api/run-scene.js';
import { meshResolver } from '../src/io/scene-files.js';
import type { Model } from '../src/model/model.js';
import { buildModel } from '../src/scene/build.js';
import { estimateWork } from '../src/scene/work-estimate.js';
import { MeshFileError } from '../src/io/mesh-files.js';
import { readSurfaceMesh } from '../src/io/mesh-import.js';
import { tetVolume } from '../src/energies/elastic-tets.js';
import { bodyGroups } from '../web/shared/body-groups.js';
import { parseObjFrame } from '../web/shared/obj-frame.js';
import { runCli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-mesh-obstacle-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** A 2 m x 2 m square in the xz-plane at y = 0 as a 2 x 2 grid of quads: 9 vertices, 8 triangles (plus an unused vertex). */
const RAMP_OBJ = [
  '# ramp: tilted by the scene transform',
  'o ramp',
  ...[-1, 0, 1].flatMap((z) => [-1, 0, 1].map((x) => `v ${x} 0 ${z}`)),
  'v 5 5 5',
  'vn 0 1 0',
  ...[0, 1].flatMap((j) => [0, 1].map((i) => `f ${1 + i + 3 * j} ${1 + i + 3 * (j + 1)} ${2 + i + 3 * (j + 1)} ${2 + i + 3 * j}`)),
  '',
].join('\n');

function rampTriangles(): number[][] {
  const out: number[][] = [];
  for (let j = 0; j < 2; j++)
    for (let i = 0; i < 2; i++) {
      const p = (a: number, b: number) => [i + a - 1, 0, j + b - 1];
      out.push([...p(0, 0), ...p(0, 1), ...p(1, 1)], [...p(0, 0), ...p(1, 1), ...p(1, 0)]);
    }
  return out;
}

function stlAscii(tris: number[][]): string {
  const facets = tris.map((t) => `facet normal 0 1 0\n  outer loop\n${[0, 1, 2].map((k) => `    vertex ${t[3 * k]} ${t[3 * k + 1]} ${t[3 * k + 2]}`).join('\n')}\n  endloop\nendfacet`);
  return `solid ramp\n${facets.join('\n')}\nendsolid ramp\n`;
}

function stlBinary(tris: number[][]): Buffer {
  const b = Buffer.alloc(84 + 50 * tris.length);
  b.write('solid but binary', 0); // a binary header may start with "solid": the size tells them apart
  b.writeUInt32LE(tris.length, 80);
  tris.forEach((t, i) => t.forEach((x, k) => b.writeFloatLE(x, 84 + 50 * i + 12 + 4 * k)));
  return b;
}

/** The surface as a sorted list of triangles, each its sorted corner coordinates. */
function shape(path: string): string[] {
  const s = readSurfaceMesh(path);
  const out: string[] = [];
  for (let t = 0; t < s.triangles.length; t += 3) {
    const c = [0, 1, 2].map((k) => Array.from(s.positions.subarray(3 * s.triangles[t + k], 3 * s.triangles[t + k] + 3)).join(','));
    out.push(c.sort().join(' | '));
  }
  return out.sort();
}

test('OBJ, ASCII STL and binary STL surfaces read alike; STL corners are welded and unused vertices dropped', () => {
  writeFileSync(join(tmp, 'ramp.obj'), RAMP_OBJ);
  writeFileSync(join(tmp, 'ramp.stl'), stlAscii(rampTriangles()));
  writeFileSync(join(tmp, 'ramp-bin.stl'), stlBinary(rampTriangles()));
  const obj = readSurfaceMesh(join(tmp, 'ramp.obj'));
  assert.equal(obj.positions.length / 3, 9, 'the unused vertex is dropped');
  assert.equal(obj.triangles.length / 3, 8);
  for (const stl of ['ramp.stl', 'ramp-bin.stl']) {
    assert.equal(readSurfaceMesh(join(tmp, stl)).positions.length / 3, 9, `${stl}: 24 corners welded to 9 vertices`);
    assert.deepEqual(shape(join(tmp, stl)), shape(join(tmp, 'ramp.obj')));
  }
  const refused = (name: string, text: string, pattern: RegExp) => {
    writeFileSync(join(tmp, name), text);
    assert.throws(() => readSurfaceMesh(join(tmp, name)), (e: Error) => e instanceof MeshFileError && pattern.test(e.message), `${name}: ${pattern}`);
  };
  refused('bad.obj', 'v 0 0 0\nv 1 0 0\nv 0 0 one\nf 1 2 3\n', /bad\.obj:3: expected vertex z \(a finite number\), got "one"/);
  refused('flat.obj', 'v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n', /flat\.obj: triangle 1 of 1 \(vertices 1, 2, 3\) has zero area/);
  refused('none.obj', 'v 0 0 0\n', /none\.obj: has no triangles/);
  refused('four.stl', 'solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nvertex 1 1 0\n', /four\.stl:7: expected 3 vertices per facet, got a 4th/);
  refused('garbage.stl', 'hello', /garbage\.stl:1: expected "solid <name>" \(ASCII STL\) or a binary STL/);
});

const THETA = (20 * Math.PI) / 180;
const SIZE = 0.1;
const GAP = 5e-4; // starts within dhat (1 mm) of the ramp

/** The box set on the ramp (its bottom face GAP above it), both tilted by THETA about z. */
function rampScene(friction: number) {
  const n = [-Math.sin(THETA), Math.cos(THETA), 0];
  const lift = SIZE / 2 + GAP;
  return {
    name: 'box-on-ramp',
    dt: 0.01,
    duration: 0.3,
    frameRate: 100,
    integrator: { name: 'implicit-euler' },
    contact: { kappa: 1e5, dhat: 1e-3, friction },
    obstacles: [{ type: 'mesh', name: 'ramp', path: 'ramp.obj', transform: { rotate: { axis: [0, 0, 1], degrees: 20 } } }],
    bodies: [
      {
        name: 'box',
        mesh: { type: 'box', size: [SIZE, SIZE, SIZE], cells: [2, 2, 2] },
        material: { youngsModulus: 1e6, density: 1000 },
        transform: { center: true, rotate: { axis: [0, 0, 1], degrees: 20 }, translate: n.map((c) => c * lift) },
      },
    ],
  };
}

/** The model of the ramp scene, built as runScene builds it (the ramp read from ramp.obj in tmp). */
function rampModel(friction: number): Model {
  const loaded = loadScene(rampScene(friction), { baseDir: tmp });
  return buildModel(loaded.scene, meshResolver(loaded.baseDir));
}

/** Runs the ramp scene, checking every frame; returns the box centre's travel along the slope (m, up positive). */
async function slide(friction: number, out?: string): Promise<number> {
  const model = rampModel(friction);
  const tets = model.bodies[0].tets;
  const boxNodes = 27;
  const along = [Math.cos(THETA), Math.sin(THETA), 0];
  let first: number | undefined;
  let last = 0;
  let frames = 0;
  const run = await runScene(rampScene(friction), {
    baseDir: tmp,
    out,
    frames: 'both',
    onFrame(_i, _t, x) {
      frames++;
      // Every frame: no inverted tet, no intersection with the ramp, every box node above the ramp's plane.
      for (let e = 0; e < tets.length / 4; e++) assert.ok(tetVolume(x, tets, e) > 0, `tet ${e} not inverted`);
      assert.equal(findIntersection(model.contact!.mesh, x), null, 'no intersection');
      let c = 0;
      for (let i = 0; i < boxNodes; i++) {
        const height = -Math.sin(THETA) * x[3 * i] + Math.cos(THETA) * x[3 * i + 1];
        assert.ok(height > 0, `node ${i} above the ramp (${height})`);
        c += along[0] * x[3 * i] + along[1] * x[3 * i + 1];
      }
      c /= boxNodes;
      first ??= c;
      last = c;
    },
  });
  assert.equal(run.summary.stopped, undefined, `ran to the end: ${run.summary.stopped}`);
  assert.equal(frames, 31);
  for (const r of run.metrics) assert.equal(r.inverted, 0);
  return last - first!;
}

test('a box on a 20 degree ramp read from an OBJ file: friction 0.6 holds it, frictionless it slides at g sin(theta); frames hold the ramp', async (t) => {
  writeFileSync(join(tmp, 'ramp.obj'), RAMP_OBJ);
  const model = rampModel(0.6);
  assert.equal(model.nNodes, 27 + 9, 'the box nodes, then the ramp vertices');
  // The work estimate counts the ramp read from its file.
  const loaded = loadScene(rampScene(0.6), { baseDir: tmp });
  const work = estimateWork(loaded.scene, () => ({ nodes: 0, tets: 0 }), 1, (o, i) => {
    const surface = meshResolver(tmp).surface!(o, i);
    return { nodes: surface.positions.length / 3, triangles: surface.triangles.length / 3 };
  });
  assert.equal(work.nodes, 27 + 9);
  assert.equal(model.obstacles![0].triangles.length / 3, 8);

  const out = join(tmp, 'held');
  const held = await slide(0.6, out);
  assert.ok(Math.abs(held) < 2e-3, `friction holds the box: it moved ${held} m along the slope`);
  const free = await slide(0);
  // Frictionless, the centre falls 0.5 g sin(theta) t^2 = 0.151 m in 0.3 s (less the contact's first settling).
  const expected = -0.5 * 9.8 * Math.sin(THETA) * 0.3 ** 2;
  t.diagnostic(`travel along the slope in 0.3 s: ${held.toExponential(3)} m with mu = 0.6, ${free.toFixed(4)} m without friction (0.5 g sin(theta) t^2 = ${expected.toFixed(4)} m)`);
  assert.ok(Math.abs(free - expected) < 0.1 * Math.abs(expected), `frictionless slide ${free} m, expected ${expected} m`);

  // The frames: the ramp is the group 'ramp' of the OBJ frames and 8 triangles of the VTU frames.
  const obj = parseObjFrame(readFileSync(join(out, 'frames', 'frame_00030.obj'), 'utf8'));
  assert.deepEqual(obj.groups.map((g) => [g.name, g.triangleCount]), [['box', model.bodies[0].surface.length / 3], ['ramp', 8]]);
  const vtu = readFileSync(join(out, 'frames', 'frame_00030.vtu'), 'utf8');
  const types = /Name="types" format="ascii">([^<]*)</.exec(vtu)![1].split(' ');
  assert.equal(types.filter((t) => t === '5').length, 8, 'the ramp as 8 VTK_TRIANGLE cells');
  // The viewer takes the names of the scene's non-plane obstacles from summary.json and draws their groups grey.
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  const obstacleNames = summary.effectiveScene.obstacles.filter((o: { type: string }) => o.type !== 'plane').map((o: { name: string }) => o.name);
  assert.deepEqual(obstacleNames, ['ramp']);
  const drawn = bodyGroups(obj.positions.length / 3, obj.triangles, obj.groups, obstacleNames);
  assert.deepEqual(drawn.names, ['box', 'ramp']);
  assert.deepEqual(drawn.obstacle, [false, true]);
});

test('mesh obstacles: a missing file, a bad OBJ line, another format and no file loader are refused naming the field', async () => {
  const scene = (path: string) => ({ ...rampScene(0.6), obstacles: [{ type: 'mesh', path }] });
  const file = join(tmp, 'obstacle.json');
  writeFileSync(join(tmp, 'bad.obj'), 'v 0 0 0\nf 1 2 3\n');
  for (const [path, pattern] of [
    ['nothing.obj', /obstacles\[0\]\.path: mesh file \S*nothing\.obj not found/],
    ['bad.obj', /obstacles\[0\]\.path: \S*bad\.obj:2: face corner 2 refers to vertex 2, but 1 vertices are defined so far/],
    ['ramp.ply', /obstacles\[0\]\.path: "ramp\.ply": expected a triangle surface, Wavefront \.obj or STL \.stl \(ASCII or binary\)/],
  ] as const) {
    writeFileSync(file, JSON.stringify(scene(path)));
    const r = await runCli('run', file, '--out', join(tmp, 'refused'), '--quiet');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, pattern);
  }
  const { simulateScene } = await import('../src/core.js');
  assert.throws(() => simulateScene(scene('ramp.obj')), /obstacles\[0\]\.path: a 'mesh' obstacle is read from a file, which needs a mesh loader/);
});

test('the built-in scene box-on-ramp reads its ramp from scenes/ramp.obj', () => {
  const loaded = loadScene('box-on-ramp');
  const model = buildModel(loaded.scene, meshResolver(loaded.baseDir));
  assert.equal(model.obstacles![0].name, 'ramp');
  assert.equal(model.obstacles![0].triangles.length / 3, 16);
  assert.equal(model.nNodes, 2 * 125 + 15);
});
