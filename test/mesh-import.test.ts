/**
 * Tet meshes from other tools' formats (io/mesh-import.ts): Gmsh 4.1 ASCII and binary, legacy VTK ASCII (versions 3
 * and 5.1) and binary, VTU ascii and inline binary (plain and zlib), and vivace's own VTU frames read back as a mesh.
 * Hand-written fixtures hold a tet plus cells that must be skipped; binary fixtures are laid out byte by byte here
 * from the format specifications. Every reading is compared with the same geometry read from a TetGen file. Malformed
 * files name the file and line.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { formatVtu, vtuCells } from '../src/io/frame-files.js';
import { MeshFileError, writeTetgen } from '../src/io/mesh-files.js';
import { findOnPath, readTetMesh, tetrahedralizeHint, unsupportedMeshFormat } from '../src/io/mesh-import.js';
import { boxGrid } from '../src/mesh/generators.js';
import type { TetMesh } from '../src/mesh/tet-mesh.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-mesh-import-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

function write(name: string, data: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, data);
  return path;
}

/** A mesh as a sorted list of tets, each the sorted coordinates of its corners: independent of numbering and order. */
function geometry(mesh: TetMesh): string[] {
  const out: string[] = [];
  for (let t = 0; t < mesh.tets.length; t += 4) {
    const corners: string[] = [];
    for (let k = 0; k < 4; k++) {
      const i = mesh.tets[t + k];
      corners.push(Array.from(mesh.positions.subarray(3 * i, 3 * i + 3), (x) => x.toFixed(9)).join(','));
    }
    out.push(corners.sort().join(' | '));
  }
  return out.sort();
}

// One tet (0,0,0) (1,0,0) (0,1,0) (0,0,1) and, to be skipped, a triangle and a point; node 5 is on no tet.
const ONE_TET = geometry({ positions: Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]), tets: Uint32Array.from([0, 1, 2, 3]) });

const GMSH41 = `$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
1
3 1 "solid"
$EndPhysicalNames
$Entities
1 0 0 1
1 0 0 0 0
1 0 0 0 1 1 1 0 0
$EndEntities
$Nodes
2 5 1 5
0 1 0 1
5
2 0 0
3 1 0 4
1
2
3
4
0 0 0
1 0 0
0 1 0
0 0 1
$EndNodes
$Elements
3 3 1 3
0 1 15 1
1 5
2 1 2 1
2 1 2 3
3 1 4 1
3 1 4 3 2
$EndElements
`;

const VTK3 = `# vtk DataFile Version 3.0
one tet, a triangle and a vertex

ASCII
DATASET UNSTRUCTURED_GRID
POINTS 5 double
0 0 0  1 0 0
0 1 0  0 0 1
2 0 0
CELLS 3 11
3 0 1 2
4 0 1 3 2
1 4
CELL_TYPES 3
5
10
1
POINT_DATA 5
SCALARS s float
LOOKUP_TABLE default
0 0 0 0 0
`;

const VTK51 = `# vtk DataFile Version 5.1
vtk output
ASCII
DATASET UNSTRUCTURED_GRID
POINTS 5 float
0 0 0 1 0 0 0 1 0
0 0 1 2 0 0
METADATA
INFORMATION 0

CELLS 4 8
OFFSETS vtktypeint64
0 3 7 8
CONNECTIVITY vtktypeint64
0 1 2 0 1 3 2 4
CELL_TYPES 3
5
10
1
`;

function vtu(format: 'ascii' | 'binary', zlib = false, header: 'UInt32' | 'UInt64' = 'UInt32', together = false): string {
  const arrays = {
    Points: { type: 'Float64', values: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 0], components: 3 },
    connectivity: { type: 'Int64', values: [0, 1, 2, 0, 1, 3, 2, 4] },
    offsets: { type: 'Int32', values: [3, 7, 8] },
    types: { type: 'UInt8', values: [5, 10, 1] },
  };
  const encode = (type: string, values: number[]): string => {
    if (format === 'ascii') return values.join(' ');
    const size = type === 'UInt8' ? 1 : type === 'Int32' ? 4 : 8;
    const data = Buffer.alloc(size * values.length);
    values.forEach((v, i) => {
      if (type === 'Float64') data.writeDoubleLE(v, 8 * i);
      else if (type === 'Int64') data.writeBigInt64LE(BigInt(v), 8 * i);
      else if (type === 'Int32') data.writeInt32LE(v, 4 * i);
      else data.writeUInt8(v, i);
    });
    const word = (n: number) => {
      const b = Buffer.alloc(header === 'UInt64' ? 8 : 4);
      if (header === 'UInt64') b.writeBigUInt64LE(BigInt(n));
      else b.writeUInt32LE(n);
      return b;
    };
    let head: Buffer;
    let body: Buffer;
    if (zlib) {
      body = deflateSync(data);
      head = Buffer.concat([word(1), word(data.length), word(data.length), word(body.length)]);
    } else {
      head = word(data.length);
      body = data;
    }
    return together ? Buffer.concat([head, body]).toString('base64') : head.toString('base64') + body.toString('base64');
  };
  const da = (name: string) => {
    const a = arrays[name as keyof typeof arrays];
    const comps = 'components' in a ? ` NumberOfComponents="${a.components}"` : '';
    return `<DataArray type="${a.type}"${name === 'Points' ? '' : ` Name="${name}"`}${comps} format="${format}">\n${encode(a.type, a.values)}\n</DataArray>`;
  };
  return `<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="${header}"${zlib ? ' compressor="vtkZLibDataCompressor"' : ''}>
  <UnstructuredGrid>
    <Piece NumberOfPoints="5" NumberOfCells="3">
      <PointData></PointData>
      <Points>${da('Points')}</Points>
      <Cells>${da('connectivity')}${da('offsets')}${da('types')}</Cells>
    </Piece>
  </UnstructuredGrid>
</VTKFile>
`;
}

test('hand-written Gmsh 4.1, legacy VTK (3.0 and 5.1) and VTU files give their one tet; other cells and unused nodes are skipped', () => {
  assert.deepEqual(geometry(readTetMesh(write('one.msh', GMSH41))), ONE_TET);
  assert.deepEqual(geometry(readTetMesh(write('one.vtk', VTK3))), ONE_TET);
  assert.deepEqual(geometry(readTetMesh(write('one51.vtk', VTK51))), ONE_TET);
  for (const [fmt, zlib, header, together] of [
    ['ascii', false, 'UInt32', false],
    ['binary', false, 'UInt32', false],
    ['binary', false, 'UInt64', true],
    ['binary', true, 'UInt32', false],
    ['binary', true, 'UInt64', true],
  ] as const) {
    const mesh = readTetMesh(write(`one-${fmt}-${zlib}-${header}-${together}.vtu`, vtu(fmt, zlib, header, together)));
    assert.deepEqual(geometry(mesh), ONE_TET, `${fmt} zlib=${zlib} ${header} together=${together}`);
  }
});

/** A 2x1x1 box of 12 tets, its nodes in two Gmsh entity blocks, written as binary Gmsh 4.1 (little-endian, size_t 8). */
function gmsh41Binary(mesh: TetMesh): Buffer {
  const n = mesh.positions.length / 3;
  const half = Math.floor(n / 2);
  const parts: Buffer[] = [Buffer.from('$MeshFormat\n4.1 1 8\n')];
  const int = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    return b;
  };
  const size = (v: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return b;
  };
  const dbl = (v: number) => {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    return b;
  };
  parts.push(int(1), Buffer.from('\n$EndMeshFormat\n$Entities\n'));
  // A binary $Entities section (one volume, no bounding entities), skipped by its end marker.
  parts.push(size(0), size(0), size(0), size(1), int(1), ...[0, 0, 0, 2, 1, 1].map(dbl), size(0), size(0), Buffer.from('\n$EndEntities\n$Nodes\n'));
  parts.push(size(2), size(n), size(1), size(n));
  for (const [first, count] of [[0, half], [half, n - half]]) {
    parts.push(int(3), int(1), int(0), size(count));
    for (let i = first; i < first + count; i++) parts.push(size(100 + i)); // tags need not start at 1
    for (let i = first; i < first + count; i++) for (let a = 0; a < 3; a++) parts.push(dbl(mesh.positions[3 * i + a]));
  }
  const nt = mesh.tets.length / 4;
  parts.push(Buffer.from('\n$EndNodes\n$Elements\n'), size(2), size(nt + 1), size(1), size(nt + 1));
  parts.push(int(2), int(1), int(2), size(1), size(1), size(100), size(101), size(102)); // a triangle
  parts.push(int(3), int(1), int(4), size(nt));
  for (let t = 0; t < nt; t++) {
    parts.push(size(2 + t));
    for (let k = 0; k < 4; k++) parts.push(size(100 + mesh.tets[4 * t + k]));
  }
  parts.push(Buffer.from('\n$EndElements\n'));
  return Buffer.concat(parts);
}

/** The same box as legacy binary VTK 3.0 (big-endian float and int). */
function vtkBinary(mesh: TetMesh): Buffer {
  const n = mesh.positions.length / 3;
  const nt = mesh.tets.length / 4;
  const pts = Buffer.alloc(12 * n);
  mesh.positions.forEach((x, i) => pts.writeFloatBE(x, 4 * i));
  const cells = Buffer.alloc(20 * nt);
  const types = Buffer.alloc(4 * nt);
  for (let t = 0; t < nt; t++) {
    cells.writeInt32BE(4, 20 * t);
    for (let k = 0; k < 4; k++) cells.writeInt32BE(mesh.tets[4 * t + k], 20 * t + 4 + 4 * k);
    types.writeInt32BE(10, 4 * t);
  }
  return Buffer.concat([
    Buffer.from(`# vtk DataFile Version 3.0\nbox\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS ${n} float\n`),
    pts,
    Buffer.from(`\nCELLS ${nt} ${5 * nt}\n`),
    cells,
    Buffer.from(`\nCELL_TYPES ${nt}\n`),
    types,
    Buffer.from('\n'),
  ]);
}

test('binary Gmsh 4.1 and binary legacy VTK give the same box as its TetGen file; so does a VTU frame vivace wrote', () => {
  const box = boxGrid([0.5, 0.25, 0.25], [2, 1, 1]);
  const { nodePath } = writeTetgen(join(tmp, 'box'), box);
  const expected = geometry(readTetMesh(nodePath));
  assert.equal(expected.length, 12);
  assert.deepEqual(geometry(readTetMesh(write('box.msh', gmsh41Binary(box)))), expected);
  assert.deepEqual(geometry(readTetMesh(write('box.vtk', vtkBinary(box)))), expected);

  // A frame written by vivace's VTU writer: the box body beside a stairs obstacle (triangles) and a particle.
  const scene = parseScene({
    name: 'frame',
    dt: 0.01,
    duration: 0.01,
    bodies: [
      { mesh: { type: 'box', size: [0.5, 0.25, 0.25], cells: [2, 1, 1] }, material: { youngsModulus: 1e5 } },
      { mesh: { type: 'particles', positions: [[3, 3, 3]], masses: [1], springs: [] } },
    ],
    obstacles: [{ type: 'stairs', steps: 1, stepHeight: 0.1, stepDepth: 0.1, width: 0.1, origin: [2, 0, 0] }],
  });
  const model = buildModel(scene);
  const cells = vtuCells(model);
  const text = formatVtu(model, cells, model.x0, model.v0, 0, new Float64Array(cells.count));
  assert.deepEqual(geometry(readTetMesh(write('frame.vtu', text))), expected);
});

function refused(name: string, data: string | Buffer, pattern: RegExp): void {
  const path = write(name, data);
  let message = 'no error';
  try {
    readTetMesh(path);
  } catch (err) {
    assert.ok(err instanceof MeshFileError, `${name}: a MeshFileError, got ${err}`);
    message = err.message;
  }
  assert.ok(message.startsWith(path) && pattern.test(message), `${name}: expected ${pattern}, got ${message}`);
}

test('malformed files are refused naming the file and line', () => {
  refused('bad-coord.msh', GMSH41.replace('0 1 0\n0 0 1', '0 1 0\n0 zero 1'), /bad-coord\.msh:26: expected coordinate y of node 4 of block 2 \(a finite number\), got "zero"/);
  refused('v40.msh', GMSH41.replace('4.1 0 8', '4 0 8'), /v40\.msh:2: expected format version 4\.1 here, got "4"/);
  refused('short-nodes.msh', GMSH41.replace('2 5 1 5', '2 6 1 6'), /short-nodes\.msh:\d+: expected 6 nodes as the \$Nodes header says, found 5/);
  refused('unknown-type.msh', GMSH41.replace('3 1 4 1', '3 1 99 1'), /unknown-type\.msh:34: element block 3 has element type 99/);
  refused('cut.msh', GMSH41.slice(0, GMSH41.indexOf('$EndElements')), /cut\.msh:\d+: expected \$EndElements, got end of file/);
  refused('undefined-node.msh', GMSH41.replace('3 1 4 3 2', '3 1 4 3 9'), /undefined-node\.msh:35: tetrahedron refers to node 9/);
  refused('bad-point.vtk', VTK3.replace('0 1 0  0 0 1', '0 1 0  0 x 1'), /bad-point\.vtk:8: expected coordinate y of point 3 \(a finite number\), got "x"/);
  refused('polydata.vtk', VTK3.replace('UNSTRUCTURED_GRID', 'POLYDATA'), /polydata\.vtk:5: expected DATASET UNSTRUCTURED_GRID/);
  refused('range.vtk', VTK3.replace('4 0 1 3 2', '4 0 1 3 7'), /range\.vtk:12: cell 1 refers to point 7, but there are 5 points/);
  refused('no-tets.vtk', VTK3.replace('\n10\n', '\n9\n'), /no-tets\.vtk: expected at least one tetrahedron/);
  refused('empty.vtk', '# vtk DataFile Version 3.0\nx\nASCII\nDATASET UNSTRUCTURED_GRID\n', /empty\.vtk: expected a POINTS section/);
  refused('counts.vtk', VTK3.replace('CELL_TYPES 3\n5\n10\n1', 'CELL_TYPES 2\n5\n10'), /counts\.vtk:10: CELLS lists 3 cells, CELL_TYPES 2/);
  refused('word.vtu', vtu('ascii').replace('0 1 3 2', '0 1 three 2'), /word\.vtu:9: DataArray "connectivity": expected numbers, got "three"/);
  refused('appended.vtu', vtu('ascii').replace('format="ascii">\n0 0 0', 'format="appended" offset="0">\n0 0 0'), /appended\.vtu:6: DataArray: format "appended" is not read/);
  refused('polydata.vtu', vtu('ascii').replace('type="UnstructuredGrid"', 'type="PolyData"'), /polydata\.vtu:2: expected type="UnstructuredGrid"/);
  refused('points.vtu', vtu('ascii').replace('NumberOfPoints="5"', 'NumberOfPoints="6"'), /points\.vtu:6: expected 6 points of 3 coordinates, found 15 numbers/);
  refused('base64.vtu', vtu('binary').replace(/(Name="offsets" format="binary">\n)\S+/, '$1AAAA!!'), /base64\.vtu:\d+: DataArray "offsets": binary data must be base64/);
});

test('a surface OBJ or STL given for a solid body is refused with the tetgen command that tetrahedralizes it', () => {
  const obj = write('part.obj', 'v 0 0 0\n');
  const stl = write('part.stl', 'solid x\nendsolid x\n');
  assert.match(unsupportedMeshFormat(obj)!, /^\.obj holds a surface, not tetrahedra: convert it to STL, PLY or OFF .*then tetrahedralize it, e\.g\. `tetgen -pq1\.4a0\.0001 part\.stl` in its folder .*give the part\.1\.node it writes \(with part\.1\.ele\) as the path/);
  assert.match(unsupportedMeshFormat(stl)!, /^\.stl holds a surface, not tetrahedra: tetrahedralize it, e\.g\. `tetgen -pq1\.4a0\.0001 part\.stl`/);
  // Whether tetgen is installed decides the last clause.
  assert.match(tetrahedralizeHint(stl, '/usr/bin/tetgen'), /TetGen is installed here \(\/usr\/bin\/tetgen\)$/);
  assert.match(tetrahedralizeHint(stl, null), /TetGen is Debian's package tetgen \(apt-get install tetgen\)$/);
  const bin = mkdtempSync(join(tmp, 'bin-'));
  writeFileSync(join(bin, 'tetgen'), '#!/bin/sh\n', { mode: 0o755 });
  assert.equal(findOnPath('tetgen', `/nonexistent:${bin}`), join(bin, 'tetgen'));
  assert.equal(findOnPath('tetgen', '/nonexistent'), null);
  assert.equal(unsupportedMeshFormat(join(tmp, 'x.vtu')), null);
  assert.match(unsupportedMeshFormat(join(tmp, 'x.xyz'))!, /'\.xyz' is not a tet mesh format vivace reads; supported: TetGen .*Gmsh .msh 2 ASCII or 4\.1 ASCII\/binary.*\.vtk.*\.vtu/);
});
