/**
 * Frame files (--frames obj|vtu|both): the VTU frames and the .pvd are read back with a small XML reader written
 * here (not the writer's code) and checked against the model (points, cell connectivity and types), the metrics
 * (elastic energy = sum of rest volume x energy density; frame times) and the OBJ frames of the same run, which the
 * viewer's own OBJ reader parses (groups per body, time comment).
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScene } from '../src/api/run-scene.js';
import { loadScene } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { DEFAULT_FRAME_FORMAT } from '../src/scene/run-options.js';
import { parseObjFrame } from '../web/shared/obj-frame.js';
import { runCli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-frames-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------------------------
// A minimal XML reader: elements with attributes and text, enough for VTK's XML files (no DTD, CDATA or entities
// beyond the five predefined ones).

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);
}

function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack = [root];
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w.:-]+\s*=\s*"[^"]*")*)\s*(\/?)>|<\?[^?]*\?>|<!--[\s\S]*?-->/g;
  let last = 0;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    stack[stack.length - 1].text += text.slice(last, m.index);
    last = tag.lastIndex;
    if (!m[2]) continue; // declaration or comment
    if (m[1]) {
      const open = stack.pop()!;
      assert.equal(open.name, m[2], `closing </${m[2]}> matches <${open.name}>`);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const a of m[3].matchAll(/([\w.:-]+)\s*=\s*"([^"]*)"/g)) attributes[a[1]] = unescapeXml(a[2]);
    const element: XmlElement = { name: m[2], attributes, children: [], text: '' };
    stack[stack.length - 1].children.push(element);
    if (!m[4]) stack.push(element);
  }
  assert.equal(stack.length, 1, 'every element is closed');
  assert.equal(text.slice(last).trim(), '', 'nothing after the root element');
  return root;
}

function child(e: XmlElement, name: string): XmlElement {
  const c = e.children.find((x) => x.name === name);
  assert.ok(c, `<${e.name}> has a <${name}>`);
  return c;
}

function numbers(e: XmlElement): number[] {
  assert.equal(e.attributes.format, 'ascii');
  const s = e.text.trim();
  return s === '' ? [] : s.split(/\s+/).map(Number);
}

function dataArray(parent: XmlElement, name: string | undefined): number[] {
  const arrays = parent.children.filter((c) => c.name === 'DataArray' && (name === undefined || c.attributes.Name === name));
  assert.equal(arrays.length, 1, `one DataArray ${name ?? ''} in <${parent.name}>`);
  return numbers(arrays[0]);
}

interface VtuFrame {
  t: number;
  points: number[];
  connectivity: number[];
  offsets: number[];
  types: number[];
  velocity: number[];
  displacement: number[];
  density: number[];
  body: number[];
}

function readVtu(file: string): VtuFrame {
  const doc = child(parseXml(readFileSync(file, 'utf8')), 'VTKFile');
  assert.equal(doc.attributes.type, 'UnstructuredGrid');
  const grid = child(doc, 'UnstructuredGrid');
  const piece = child(grid, 'Piece');
  const nPoints = Number(piece.attributes.NumberOfPoints);
  const nCells = Number(piece.attributes.NumberOfCells);
  const cells = child(piece, 'Cells');
  const pointData = child(piece, 'PointData');
  const cellData = child(piece, 'CellData');
  const f: VtuFrame = {
    t: dataArray(child(grid, 'FieldData'), 'TimeValue')[0],
    points: dataArray(child(piece, 'Points'), undefined),
    connectivity: dataArray(cells, 'connectivity'),
    offsets: dataArray(cells, 'offsets'),
    types: dataArray(cells, 'types'),
    velocity: dataArray(pointData, 'velocity'),
    displacement: dataArray(pointData, 'displacement'),
    density: dataArray(cellData, 'elastic_energy_density'),
    body: dataArray(cellData, 'body'),
  };
  assert.equal(f.points.length, 3 * nPoints);
  assert.equal(f.velocity.length, 3 * nPoints);
  assert.equal(f.displacement.length, 3 * nPoints);
  for (const a of [f.offsets, f.types, f.density, f.body]) assert.equal(a.length, nCells);
  assert.equal(f.offsets[nCells - 1], f.connectivity.length);
  return f;
}

/** The cells of one VTK type, as node lists. */
function cellsOfType(f: VtuFrame, type: number): number[][] {
  const out: number[][] = [];
  for (let c = 0; c < f.types.length; c++) {
    if (f.types[c] !== type) continue;
    out.push(f.connectivity.slice(c === 0 ? 0 : f.offsets[c - 1], f.offsets[c]));
  }
  return out;
}

function tetVolume(p: number[], tet: number[]): number {
  const d = (k: number, a: number) => p[3 * tet[k] + a] - p[3 * tet[0] + a];
  const [ax, ay, az, bx, by, bz, cx, cy, cz] = [d(1, 0), d(1, 1), d(1, 2), d(2, 0), d(2, 1), d(2, 2), d(3, 0), d(3, 1), d(3, 2)];
  return (ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)) / 6;
}

// A twisted (pre-stressed) block falling onto stairs, a particle body, and a ground plane.
const sceneFile = join(tmp, 'mixed.json');
writeFileSync(
  sceneFile,
  JSON.stringify({
    name: 'mixed',
    dt: 0.01,
    duration: 0.04,
    frameRate: 50,
    bodies: [
      {
        name: 'twisted block',
        mesh: { type: 'box', size: [0.3, 0.1, 0.1], cells: [3, 1, 1] },
        material: { youngsModulus: 1e5 },
        transform: { translate: [0, 0.3, 0] },
        deform: { axis: [1, 0, 0], twistDegrees: 20 },
        velocity: { linear: [0.5, -1, 0] },
      },
      { name: 'dots', mesh: { type: 'particles', positions: [[1, 1, 1], [1, 1.5, 1]], masses: [1, 1], springs: [{ a: 0, b: 1, stiffness: 10 }] } },
    ],
    obstacles: [{ type: 'plane' }, { type: 'stairs', name: 'steps', steps: 2, stepHeight: 0.05, stepDepth: 0.1, width: 0.2, origin: [2, 0, 0] }],
  }),
);

test('--frames both: VTU frames read back match the model, the metrics and the OBJ frames; frames.pvd lists their times', async () => {
  const out = join(tmp, 'both');
  const r = await runCli('run', sceneFile, '--frames', 'both', '--out', out);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /3 OBJ \+ VTU frames/);
  assert.match(r.out, /frames\.pvd/);
  const model = buildModel(loadScene(sceneFile).scene);
  const names = readdirSync(join(out, 'frames')).sort();
  assert.deepEqual(names, ['frame_00000.obj', 'frame_00000.vtu', 'frame_00001.obj', 'frame_00001.vtu', 'frame_00002.obj', 'frame_00002.vtu']);

  // The collection: one DataSet per frame, in order, with the frame's time.
  const pvd = child(parseXml(readFileSync(join(out, 'frames.pvd'), 'utf8')), 'VTKFile');
  assert.equal(pvd.attributes.type, 'Collection');
  const sets = child(pvd, 'Collection').children;
  assert.deepEqual(
    sets.map((s) => [s.attributes.file, Number(s.attributes.timestep)]),
    [0, 1, 2].map((i) => [`frames/frame_0000${i}.vtu`, i * 0.02]),
  );

  const rows = readFileSync(join(out, 'metrics.csv'), 'utf8').trim().split('\n').map((l) => l.split(','));
  const col = (name: string) => rows[0].indexOf(name);
  for (const [i, set] of sets.entries()) {
    const f = readVtu(join(out, set.attributes.file));
    assert.equal(f.t, Number(set.attributes.timestep), 'TimeValue = the collection time');
    assert.equal(f.points.length, 3 * model.nNodes, 'every node of the model is a point');
    // Cells: the block's tets, the stairs' triangles (as the model has them), the two particles as vertices.
    const tets = cellsOfType(f, 10);
    assert.deepEqual(tets.flat(), Array.from(model.bodies[0].tets));
    assert.deepEqual(cellsOfType(f, 5).flat(), Array.from(model.obstacles![0].triangles));
    const particles = cellsOfType(f, 1).flat();
    assert.equal(particles.length, 2);
    assert.equal(model.bodies[0].tets.length / 4 + model.obstacles![0].triangles.length / 3 + 2, f.types.length, 'no other cells');
    assert.deepEqual([...new Set(f.body)], [0, 2, -1], 'body index per cell: block, stairs (after the 2 bodies), particles');
    // Rest positions = points - displacement: the rest tet volumes weight the energy densities.
    const rest = f.points.map((p, k) => p - f.displacement[k]);
    for (let k = 0; k < rest.length; k++) assert.ok(Math.abs(rest[k] - model.rest[k]) < 1e-6, 'displacement = x - rest');
    let elastic = 0;
    tets.forEach((tet, c) => (elastic += tetVolume(rest, tet) * f.density[c]));
    const row = rows[1 + 2 * i]; // frames every 2 steps
    assert.equal(Number(row[col('t')]), f.t);
    const expected = Number(row[col('elastic')]);
    assert.ok(expected > 1e-3, 'the twist stores energy');
    assert.ok(Math.abs(elastic - expected) <= 1e-6 * expected, `sum V psi = ${elastic}, metrics elastic = ${expected}`);
    for (let c = tets.length; c < f.types.length; c++) assert.equal(f.density[c], 0, 'no elastic energy outside tets');
    if (i === 0) for (let k = 0; k < f.velocity.length; k++) assert.ok(Math.abs(f.velocity[k] - model.v0[k]) < 1e-9, 'frame 0 holds v0');

    // The OBJ frame of the same time: the viewer's reader finds one group per body and obstacle and the time.
    const obj = parseObjFrame(readFileSync(join(out, 'frames', `frame_0000${i}.obj`), 'utf8'));
    assert.equal(obj.t, f.t);
    assert.deepEqual(obj.groups.map((g) => g.name), ['twisted block', 'dots', 'steps']);
    assert.equal(obj.groups[0].triangleCount, model.bodies[0].surface.length / 3);
    assert.equal(obj.groups[1].triangleCount, 0);
    assert.equal(obj.groups[2].triangleCount, model.obstacles![0].triangles.length / 3);
    // Its first vertex is node 0 (a corner of the block, on the surface): the same position as in the VTU.
    for (let a = 0; a < 3; a++) assert.ok(Math.abs(obj.positions[a] - f.points[a]) < 1e-6 * Math.max(1, Math.abs(f.points[a])));
  }
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.equal(summary.outputs.frameFormat, 'both');
  assert.equal(summary.outputs.pvd, 'frames.pvd');
});

test(`frames default to ${DEFAULT_FRAME_FORMAT}; the library's frames: 'vtu' writes VTU frames only; a bad value is refused`, async () => {
  assert.equal(DEFAULT_FRAME_FORMAT, 'obj');
  const plain = join(tmp, 'plain');
  assert.equal((await runCli('run', sceneFile, '--out', plain, '--quiet')).code, 0);
  assert.ok(readdirSync(join(plain, 'frames')).every((n) => n.endsWith('.obj')));
  assert.equal(existsSync(join(plain, 'frames.pvd')), false);

  // Switching an output folder from VTU to OBJ frames removes the old collection.
  const vtu = join(tmp, 'vtu');
  const run = await runScene(sceneFile, { out: vtu, frames: 'vtu' });
  assert.equal(run.outputs?.pvd, join(vtu, 'frames.pvd'));
  assert.deepEqual(readdirSync(join(vtu, 'frames')).sort(), ['frame_00000.vtu', 'frame_00001.vtu', 'frame_00002.vtu']);
  await runScene(sceneFile, { out: vtu });
  assert.equal(existsSync(join(vtu, 'frames.pvd')), false);

  await assert.rejects(runScene(sceneFile, { out: vtu, frames: 'png' as never }), /frames: expected one of 'obj', 'vtu', 'both', got "png"/);
  const bad = await runCli('run', sceneFile, '--frames', 'png', '--out', join(tmp, 'bad'));
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--frames <format>' argument 'png' is invalid. Allowed choices are obj, vtu, both/);
});

test('a resumed run with VTU frames keeps the frames up to its checkpoint and rebuilds frames.pvd', async () => {
  const out = join(tmp, 'resume');
  const first = await runCli('run', sceneFile, '--frames', 'vtu', '--out', out, '--quiet', '--checkpoint-every', '2', '--integrator', 'implicit-euler', '--duration', '0.02');
  assert.equal(first.code, 0, first.err);
  const again = await runCli('run', sceneFile, '--frames', 'vtu', '--out', out, '--quiet', '--resume', '--integrator', 'implicit-euler');
  assert.equal(again.code, 0, again.err);
  const sets = child(child(parseXml(readFileSync(join(out, 'frames.pvd'), 'utf8')), 'VTKFile'), 'Collection').children;
  assert.deepEqual(sets.map((s) => Number(s.attributes.timestep)), [0, 0.02, 0.04]);
  assert.deepEqual(readdirSync(join(out, 'frames')).sort(), ['frame_00000.vtu', 'frame_00001.vtu', 'frame_00002.vtu']);
  assert.equal(readVtu(join(out, 'frames', 'frame_00002.vtu')).t, 0.04);
});

test('VTU frames hold a shell (a triangle body) as VTK_TRIANGLE cells beside a tet body', async () => {
  const out = join(tmp, 'shell');
  const run = await runScene(
    {
      name: 'sheet-and-block',
      dt: 0.01,
      duration: 0.02,
      frameRate: 100,
      integrator: { name: 'implicit-euler' },
      bodies: [
        { name: 'block', mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] }, material: { youngsModulus: 1e5 } },
        {
          name: 'sheet',
          mesh: { type: 'shell', thickness: 0.001, areaDensity: 0.4, shape: { type: 'rectangle', size: [0.4, 0.2], cells: [4, 2] } } as never,
          material: { model: 'stvk', youngsModulus: 1e5, poissonRatio: 0.3 },
          transform: { translate: [1, 1, 0] },
          fixed: [{ box: { min: [0, 0, -1], max: [1, 2, 1] } }],
        },
      ],
    },
    { out, frames: 'vtu' },
  );
  assert.equal(run.summary.stopped, undefined);
  const f = readVtu(join(out, 'frames', 'frame_00002.vtu'));
  const model = run.model;
  assert.equal(f.points.length, 3 * model.nNodes);
  assert.deepEqual(cellsOfType(f, 10).flat(), Array.from(model.bodies[0].tets));
  assert.deepEqual(cellsOfType(f, 5).flat(), Array.from(model.bodies[1].surface), 'the shell triangles, as the model has them');
  assert.equal(cellsOfType(f, 5).length, 16);
  assert.deepEqual([...new Set(f.body)], [0, 1]);
  assert.equal(cellsOfType(f, 1).length, 0, 'no lone nodes');
});
