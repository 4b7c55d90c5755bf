import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boxGrid, boxGridNode, icosphere } from '../src/mesh/generators.js';
import { type TetMesh, meshStats, orientTets, sortTetsSpatially, tetVolume } from '../src/mesh/tet-mesh.js';
import { enclosedVolume, extractSurface, surfaceEdges } from '../src/mesh/surface.js';
import {
  MeshFileError,
  parseGmsh,
  parseObj,
  parseTetgenEle,
  parseTetgenNode,
  readObj,
  readShippedMesh,
  readTetgen,
  writeObj,
  writeTetgen,
  type ShippedMeshName,
} from '../src/io/mesh-files.js';

// ---------------------------------------------------------------------------------------------------------------
// Independent checks (string-keyed maps, no code shared with surface.ts)

function edgeUse(triangles: Uint32Array): Map<string, number> {
  const m = new Map<string, number>();
  for (let t = 0; t < triangles.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const a = triangles[t + k];
      const b = triangles[t + ((k + 1) % 3)];
      const key = a < b ? `${a},${b}` : `${b},${a}`;
      m.set(key, (m.get(key) ?? 0) + 1);
    }
  }
  return m;
}

/** Directed edges: in a consistently wound closed surface each directed edge appears exactly once. */
function directedEdgesUnique(triangles: Uint32Array): boolean {
  const s = new Set<string>();
  for (let t = 0; t < triangles.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const key = `${triangles[t + k]}>${triangles[t + ((k + 1) % 3)]}`;
      if (s.has(key)) return false;
      s.add(key);
    }
  }
  return true;
}

function faceUse(tets: Uint32Array): Map<string, number> {
  const m = new Map<string, number>();
  for (let t = 0; t < tets.length; t += 4) {
    for (let skip = 0; skip < 4; skip++) {
      const f: number[] = [];
      for (let k = 0; k < 4; k++) if (k !== skip) f.push(tets[t + k]);
      f.sort((a, b) => a - b);
      const key = f.join(',');
      m.set(key, (m.get(key) ?? 0) + 1);
    }
  }
  return m;
}

function assertClosedOutward(mesh: TetMesh, what: string, relTol = 1e-9): void {
  const stats = meshStats(mesh);
  const { triangles, surfaceNodes } = extractSurface(mesh);
  const use = edgeUse(triangles);
  for (const [e, n] of use) assert.equal(n, 2, `${what}: edge ${e} is used by ${n} triangles`);
  assert.ok(directedEdgesUnique(triangles), `${what}: triangles are not consistently wound`);
  const vol = enclosedVolume(mesh.positions, triangles);
  assert.ok(Math.abs(vol - stats.totalVolume) <= relTol * stats.totalVolume, `${what}: surface volume ${vol} vs tets ${stats.totalVolume}`);
  const V = surfaceNodes.length;
  const E = use.size;
  const F = triangles.length / 3;
  assert.equal(V - E + F, 2, `${what}: Euler characteristic`);
}

// ---------------------------------------------------------------------------------------------------------------
// Generators

test('boxGrid node/tet counts of the seed grids', () => {
  const cube = boxGrid([0.1, 0.1, 0.1], [10, 10, 10]);
  assert.equal(cube.positions.length / 3, 1331);
  assert.equal(cube.tets.length / 4, 6000);
  const bar = boxGrid([0.2, 0.1, 0.05], [20, 20, 10]);
  assert.equal(bar.positions.length / 3, 4851);
  assert.equal(bar.tets.length / 4, 24000);
  // Seed 002 writes "5 x (32 x 4 x 4) = 1920"; the product is 2560 (825 nodes agree with 32 x 4 x 4 cells).
  const beam = boxGrid([4, 0.5, 0.5], [32, 4, 4], { tetsPerCell: 5 });
  assert.equal(beam.positions.length / 3, 825);
  assert.equal(beam.tets.length / 4, 2560);
});

test('boxGrid node numbering and coordinates', () => {
  const cells: [number, number, number] = [3, 2, 4];
  const m = boxGrid([0.3, 0.5, 0.2], cells, { origin: [1, -2, 0.5] });
  const n = boxGridNode(2, 1, 3, cells);
  assert.equal(n, 2 + 4 * (1 + 3 * 3));
  assert.ok(Math.abs(m.positions[3 * n] - (1 + 0.2)) < 1e-15);
  assert.ok(Math.abs(m.positions[3 * n + 1] - (-2 + 0.25)) < 1e-15);
  assert.ok(Math.abs(m.positions[3 * n + 2] - (0.5 + 0.15)) < 1e-15);
});

for (const per of [5, 6] as const) {
  test(`boxGrid ${per} tets/cell: positive volumes summing to the box, conforming faces`, () => {
    const size: [number, number, number] = [0.3, 0.2, 0.7];
    const cells: [number, number, number] = [3, 4, 5];
    const m = boxGrid(size, cells, { tetsPerCell: per, origin: [-1, 2, 3] });
    const s = meshStats(m);
    assert.equal(s.nonPositive, 0);
    const cellVolume = (0.3 / 3) * (0.2 / 4) * (0.7 / 5);
    for (let t = 0; t < s.tets; t++) assert.ok(tetVolume(m.positions, m.tets, t) > 1e-3 * cellVolume);
    assert.ok(Math.abs(s.totalVolume - 0.3 * 0.2 * 0.7) < 1e-14);
    // Conforming: every face is shared by at most 2 tets, and only the box faces (2 triangles per cell face)
    // are single. Mismatched diagonals across cells would leave extra single faces.
    const use = faceUse(m.tets);
    let single = 0;
    for (const n of use.values()) {
      assert.ok(n === 1 || n === 2);
      if (n === 1) single++;
    }
    const [nx, ny, nz] = cells;
    assert.equal(single, 2 * 2 * (nx * ny + ny * nz + nz * nx));
  });
}

test('surface of a box grid is closed, outward, Euler characteristic 2', () => {
  for (const per of [5, 6] as const) {
    const m = boxGrid([0.2, 0.1, 0.05], [6, 4, 3], { tetsPerCell: per, origin: [0.5, 0.5, 0.5] });
    assertClosedOutward(m, `box ${per}`);
    const { triangles, surfaceNodes } = extractSurface(m);
    // Surface nodes of a grid: all minus the interior (nx-1)(ny-1)(nz-1).
    assert.equal(surfaceNodes.length, 7 * 5 * 4 - 5 * 3 * 2);
    // Every normal points away from the box centre (convex body).
    const p = m.positions;
    for (let t = 0; t < triangles.length; t += 3) {
      const a = 3 * triangles[t];
      const b = 3 * triangles[t + 1];
      const c = 3 * triangles[t + 2];
      const u = [p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]];
      const v = [p[c] - p[a], p[c + 1] - p[a + 1], p[c + 2] - p[a + 2]];
      const nrm = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
      const d = [p[a] - 0.6, p[a + 1] - 0.55, p[a + 2] - 0.525];
      assert.ok(nrm[0] * d[0] + nrm[1] * d[1] + nrm[2] * d[2] > 0);
    }
  }
});

test('surfaceEdges lists each undirected edge once, sorted', () => {
  const m = boxGrid([1, 1, 1], [2, 3, 2]);
  const { triangles } = extractSurface(m);
  const edges = surfaceEdges(triangles);
  const expected = [...edgeUse(triangles).keys()].map((k) => k.split(',').map(Number)).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  assert.deepEqual(Array.from(edges), expected.flat());
});

test('extractSurface of single tets, either orientation, winds outward', () => {
  const positions = Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
  for (const tets of [Uint32Array.from([0, 1, 2, 3]), Uint32Array.from([0, 2, 1, 3])]) {
    const { triangles, surfaceNodes } = extractSurface({ positions, tets });
    assert.equal(triangles.length, 12);
    assert.deepEqual(Array.from(surfaceNodes), [0, 1, 2, 3]);
    assert.ok(directedEdgesUnique(triangles));
    assert.ok(Math.abs(enclosedVolume(positions, triangles) - 1 / 6) < 1e-15);
  }
});

test('tetVolume and orientTets', () => {
  const positions = Float64Array.from([0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4]);
  const tets = Uint32Array.from([0, 1, 2, 3, 0, 2, 1, 3, 1, 0, 2, 3]);
  assert.equal(tetVolume(positions, tets, 0), 4);
  assert.equal(tetVolume(positions, tets, 1), -4);
  const mesh = { positions, tets };
  assert.equal(orientTets(mesh), 2);
  for (let t = 0; t < 3; t++) assert.equal(tetVolume(positions, tets, t), 4);
  assert.equal(orientTets(mesh), 0);
});

test('icosphere: counts, closed, outward, volume approaches the ball', () => {
  let prevError = Infinity;
  for (let s = 0; s <= 3; s++) {
    const sph = icosphere(0.05, s, [1, 2, 3]);
    assert.equal(sph.positions.length / 3, 10 * 4 ** s + 2);
    assert.equal(sph.triangles.length / 3, 20 * 4 ** s);
    for (const n of edgeUse(sph.triangles).values()) assert.equal(n, 2);
    for (let i = 0; i < sph.positions.length; i += 3) {
      const r = Math.hypot(sph.positions[i] - 1, sph.positions[i + 1] - 2, sph.positions[i + 2] - 3);
      assert.ok(Math.abs(r - 0.05) < 1e-15);
    }
    const err = (4 / 3) * Math.PI * 0.05 ** 3 - enclosedVolume(sph.positions, sph.triangles);
    assert.ok(err > 0 && err < prevError);
    prevError = err;
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Files

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'vivace-mesh-'));
}

test('OBJ: write/read round trip, no temp files left', () => {
  const dir = tempDir();
  try {
    const sph = icosphere(0.05, 2, [0.1, -0.2, 123.456]);
    const path = join(dir, 'ball.obj');
    writeObj(path, sph.positions, sph.triangles);
    writeObj(path, sph.positions, sph.triangles); // overwrite in place
    assert.deepEqual(readdirSync(dir), ['ball.obj']);
    const back = readObj(path);
    assert.deepEqual(Array.from(back.triangles), Array.from(sph.triangles));
    assert.equal(back.positions.length, sph.positions.length);
    for (let i = 0; i < sph.positions.length; i++) {
      const x = sph.positions[i];
      assert.ok(Math.abs(back.positions[i] - x) <= 5e-7 * Math.abs(x) + 1e-300, `coordinate ${i}: ${back.positions[i]} vs ${x}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('OBJ parser: polygons, negative and slashed indices, comments', () => {
  const text = [
    '# a unit square and a triangle',
    'o thing',
    'v 0 0 0',
    'v 1 0 0 1.0',
    'v 1 1 0',
    'v 0 1 0  # trailing comment',
    'vt 0 0',
    'vn 0 0 1',
    'f 1/1/1 2/1/1 3//1 4',
    'f -4 -3 -1',
    '',
  ].join('\r\n');
  const s = parseObj(text, 'square.obj');
  assert.equal(s.positions.length, 12);
  assert.deepEqual(Array.from(s.triangles), [0, 1, 2, 0, 2, 3, 0, 1, 3]);
});

test('malformed files give errors naming file and line', () => {
  const bad: [() => unknown, RegExp][] = [
    [() => parseObj('v 0 0 0\nv 1 0 0\nv 1 x 0\n', 'bad.obj'), /^bad\.obj:3: expected vertex y/],
    [() => parseObj('v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 4\n', 'bad.obj'), /^bad\.obj:5: face corner 3 refers to vertex 4/],
    [() => parseObj('v 0 0 0\nf 1 2\n', 'bad.obj'), /^bad\.obj:2: expected a face with at least 3 corners/],
    [() => parseTetgenNode('# c\n2 3 0 0\n0 0 0 0\n1 0 zero 0\n', 'bad.node'), /^bad\.node:4: expected y/],
    [() => parseTetgenNode('2 3 0 0\n0 0 0 0\n2 1 0 0\n', 'bad.node'), /^bad\.node:3: expected point index 1, got 2/],
    [() => parseTetgenNode('3 3 0 0\n0 0 0 0\n1 1 0 0\n', 'bad.node'), /^bad\.node: expected 3 points as the header says, found 2/],
    [() => parseTetgenEle('1 4 0\n\n0 0 1 2 9\n', 'bad.ele', 4, 0), /^bad\.ele:3: expected a node id in \[0, 3\], got 9/],
    [() => parseTetgenEle('1 4 0\n0 0 1 2\n', 'bad.ele', 4, 0), /^bad\.ele:2: expected "<index>" and 4 node ids/],
    [() => parseGmsh('$MeshFormat\n4.1 0 8\n$EndMeshFormat\n', 'bad.msh'), /^bad\.msh:2: expected format version 2\.x/],
  ];
  for (const [fn, re] of bad) {
    assert.throws(fn, (err: unknown) => {
      assert.ok(err instanceof MeshFileError);
      assert.match(err.message, re);
      return true;
    });
  }
});

test('TetGen: round trip 0/1-based, plain and gzip', () => {
  const dir = tempDir();
  try {
    const m = boxGrid([0.1, 0.2, 0.3], [2, 3, 4], { tetsPerCell: 5, origin: [-0.05, 0, 1e-3] });
    for (const firstIndex of [0, 1] as const) {
      for (const gzip of [false, true]) {
        const base = join(dir, `box${firstIndex}${gzip ? 'z' : ''}`);
        const { nodePath } = writeTetgen(base, m, { firstIndex, gzip, comment: 'test mesh\nsecond line' });
        for (const path of [base, nodePath]) {
          const back = readTetgen(path);
          assert.deepEqual(Array.from(back.tets), Array.from(m.tets));
          // 9 significant digits by default.
          for (let i = 0; i < m.positions.length; i++) assert.ok(Math.abs(back.positions[i] - m.positions[i]) <= 5e-9 * Math.abs(m.positions[i]));
        }
      }
    }
    assert.ok(readdirSync(dir).every((f) => !f.endsWith('.tmp')));
    // Enough digits for an exact round trip.
    const exact = readTetgen(writeTetgen(join(dir, 'exact'), m, { digits: 17 }).nodePath);
    assert.deepEqual(Array.from(exact.positions), Array.from(m.positions));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('TetGen reader: 1-based with attributes, markers and comments; orients tets', () => {
  const node = ['# points', '4  3  1  1', '1 0 0 0 7.5 1', '2 1 0 0 7.5 1', '3 0 1 0 7.5 1 # c', '4 0 0 1 7.5 0'].join('\n');
  const nodes = parseTetgenNode(node, 'x.node');
  assert.equal(nodes.firstIndex, 1);
  assert.deepEqual(Array.from(nodes.positions), [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const tets = parseTetgenEle('1 4 0\n1 1 3 2 4\n', 'x.ele', 4, 1);
  assert.deepEqual(Array.from(tets), [0, 2, 1, 3]);
  const dir = tempDir();
  try {
    writeFileSync(join(dir, 'x.node'), node);
    writeFileSync(join(dir, 'x.ele'), '1 4 0\n1 1 3 2 4\n');
    const m = readTetgen(join(dir, 'x.ele'));
    assert.ok(tetVolume(m.positions, m.tets, 0) > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Gmsh v2 ASCII: tets kept, other elements and unused nodes dropped, orientation fixed', () => {
  const text = [
    '$MeshFormat', '2.2 0 8', '$EndMeshFormat',
    '$PhysicalNames', '1', '3 1 "body"', '$EndPhysicalNames',
    '$Nodes', '6',
    '10 0 0 0', '20 1 0 0', '30 0 1 0', '40 0 0 1', '50 1 1 1', '99 5 5 5',
    '$EndNodes',
    '$Elements', '4',
    '1 15 2 0 10 99',
    '2 2 2 0 1 10 20 30',
    '3 4 2 1 1 10 20 30 40',
    '4 4 2 1 1 20 30 50 40',
    '$EndElements',
  ].join('\n');
  const m = parseGmsh(text, 'two.msh');
  assert.equal(m.positions.length / 3, 5);
  assert.equal(m.tets.length / 4, 2);
  const s = meshStats(m);
  assert.equal(s.nonPositive, 0);
  assert.ok(Math.abs(s.totalVolume - (1 / 6 + 1 / 3)) < 1e-15);
});

test('atomic write: a failed rename leaves no temporary file behind', () => {
  const dir = tempDir();
  try {
    const target = join(dir, 'taken.obj');
    mkdirSync(target); // renaming a file over a directory fails
    const sph = icosphere(1, 0);
    assert.throws(() => writeObj(target, sph.positions, sph.triangles));
    assert.deepEqual(readdirSync(dir), ['taken.obj']);
    assert.throws(() => writeObj(join(dir, 'missing', 'x.obj'), sph.positions, sph.triangles));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Shipped meshes (data/meshes/README.md)

const SHIPPED: { name: ShippedMeshName; nodes: number; tets: number; extent: (size: number[]) => number; target: number }[] = [
  { name: 'armadillo', nodes: 31787, tets: 112517, extent: (s) => s[1], target: 0.5 },
  { name: 'bunny', nodes: 6522, tets: 22880, extent: (s) => Math.max(...s), target: 0.25 },
  { name: 'ball', nodes: 1737, tets: 7138, extent: (s) => Math.max(...s), target: 0.1 },
];

for (const spec of SHIPPED) {
  test(`shipped mesh ${spec.name}: loads, positive volumes, every node used, closed outward surface`, () => {
    const m = readShippedMesh(spec.name);
    const s = meshStats(m);
    assert.equal(s.nodes, spec.nodes);
    assert.equal(s.tets, spec.tets);
    assert.equal(s.nonPositive, 0);
    const used = new Uint8Array(s.nodes);
    for (let i = 0; i < m.tets.length; i++) used[m.tets[i]] = 1;
    assert.ok(used.every((u) => u === 1), 'a node belongs to no tet (zero mass)');
    const size = [0, 1, 2].map((k) => s.bboxMax[k] - s.bboxMin[k]);
    assert.ok(Math.abs(spec.extent(size) - spec.target) < 1e-6 * spec.target, `${spec.name} size ${size}`);
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(s.bboxMax[k] + s.bboxMin[k]) < 1e-6, 'bbox centred at the origin');
    assertClosedOutward(m, spec.name, 1e-9);
  });
}

test('sortTetsSpatially: the same tets (orientation kept) in an order where neighbours in the list share nodes', () => {
  const grid = boxGrid([1, 1, 1], [6, 6, 6]);
  // Shuffle the tets (a deterministic permutation), as a file might list them.
  const n = grid.tets.length / 4;
  const shuffled = new Uint32Array(grid.tets.length);
  for (let e = 0; e < n; e++) shuffled.set(grid.tets.subarray(4 * ((e * 7919) % n), 4 * ((e * 7919) % n) + 4), 4 * e);
  const sorted = sortTetsSpatially(grid.positions, shuffled);
  const key = (t: Uint32Array, e: number) => Array.from(t.subarray(4 * e, 4 * e + 4)).join(',');
  const before = new Set(Array.from({ length: n }, (_, e) => key(shuffled, e)));
  assert.equal(before.size, n);
  for (let e = 0; e < n; e++) assert.ok(before.has(key(sorted, e)), `tet ${key(sorted, e)} is one of the input tets, nodes in the same order`);
  const sharing = (t: Uint32Array) => {
    let count = 0;
    for (let e = 1; e < n; e++) if (Array.from(t.subarray(4 * e, 4 * e + 4)).some((v) => t.subarray(4 * e - 4, 4 * e).includes(v))) count++;
    return count / (n - 1);
  };
  assert.ok(sharing(sorted) > 0.8 && sharing(shuffled) < 0.2, `consecutive tets sharing a node: ${sharing(sorted)} sorted, ${sharing(shuffled)} shuffled`);
});
