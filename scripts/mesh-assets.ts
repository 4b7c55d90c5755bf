/**
 * Helper of scripts/tetrahedralize.sh (run by a developer, not by tests or CI).
 *
 *   tsx scripts/mesh-assets.ts surface <armadillo|bunny|ball> <source> <out.off>
 *     Write the TetGen input surface in metres, y up, bounding-box centre at the origin:
 *       armadillo  <source> = armadillo.obj; scaled to 0.5 m height (y)
 *       bunny      <source> = index.js of the npm package `bunny`; scaled to 0.25 m length (largest extent)
 *       ball       <source> = icosphere subdivision level; 0.1 m diameter
 *   tsx scripts/mesh-assets.ts import <tetgen output base> <out base> <provenance comment>
 *     Read TetGen's .node/.ele, orient the tets, check the mesh, write <out base>.node.gz / .ele.gz and print
 *     the counts as JSON.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readObj, readTetgen, writeTetgen } from '../src/io/mesh-files.js';
import { icosphere } from '../src/mesh/generators.js';
import { extractSurface, enclosedVolume } from '../src/mesh/surface.js';
import { type TriSurface, boundingBox, meshStats, orientTets } from '../src/mesh/tet-mesh.js';

function normalize(surface: TriSurface, scale: number): void {
  const { min, max } = boundingBox(surface.positions);
  const p = surface.positions;
  for (let i = 0; i < p.length; i += 3) {
    for (let k = 0; k < 3; k++) p[i + k] = scale * (p[i + k] - 0.5 * (min[k] + max[k]));
  }
}

function writeOff(path: string, s: TriSurface): void {
  const lines = ['OFF', `${s.positions.length / 3} ${s.triangles.length / 3} 0`];
  for (let i = 0; i < s.positions.length; i += 3) lines.push(`${s.positions[i].toPrecision(12)} ${s.positions[i + 1].toPrecision(12)} ${s.positions[i + 2].toPrecision(12)}`);
  for (let t = 0; t < s.triangles.length; t += 3) lines.push(`3 ${s.triangles[t]} ${s.triangles[t + 1]} ${s.triangles[t + 2]}`);
  lines.push('');
  writeFileSync(path, lines.join('\n'));
}

function surfaceCommand(name: string, source: string, out: string): void {
  let s: TriSurface;
  if (name === 'armadillo') {
    s = readObj(source);
    const { min, max } = boundingBox(s.positions);
    normalize(s, 0.5 / (max[1] - min[1]));
  } else if (name === 'bunny') {
    // The npm package is a CommonJS module exporting { positions: [x,y,z][], cells: [a,b,c][] }.
    const data = createRequire(import.meta.url)(source) as { positions: number[][]; cells: number[][] };
    s = { positions: Float64Array.from(data.positions.flat()), triangles: Uint32Array.from(data.cells.flat()) };
    const { min, max } = boundingBox(s.positions);
    normalize(s, 0.25 / Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2]));
  } else if (name === 'ball') {
    s = icosphere(0.05, Number(source));
  } else {
    throw new Error(`unknown surface ${name}`);
  }
  const vol = enclosedVolume(s.positions, s.triangles);
  if (!(vol > 0)) throw new Error(`${name}: surface encloses volume ${vol}; expected outward triangles`);
  writeOff(out, s);
  const { min, max } = boundingBox(s.positions);
  console.log(JSON.stringify({ name, vertices: s.positions.length / 3, triangles: s.triangles.length / 3, enclosedVolume: vol, bboxMin: min, bboxMax: max }));
}

function importCommand(input: string, outBase: string, comment: string): void {
  const mesh = readTetgen(input);
  const flipped = orientTets(mesh);
  const nodes = mesh.positions.length / 3;
  const used = new Uint8Array(nodes);
  for (let i = 0; i < mesh.tets.length; i++) used[mesh.tets[i]] = 1;
  const unused = nodes - used.reduce((a, b) => a + b, 0);
  if (unused > 0) throw new Error(`${input}: ${unused} nodes belong to no tet (tetgen -j drops them)`);
  writeTetgen(outBase, mesh, { gzip: true, digits: 9, comment });
  // Check what was written (rounded coordinates), not what was computed.
  const back = readTetgen(`${outBase}.node.gz`);
  const stats = meshStats(back);
  if (stats.nonPositive > 0) throw new Error(`${outBase}: ${stats.nonPositive} tets with non-positive volume after rounding`);
  const surf = extractSurface(back);
  const closedVolume = enclosedVolume(back.positions, surf.triangles);
  console.log(JSON.stringify({
    out: outBase,
    nodes: stats.nodes,
    tets: stats.tets,
    flippedOnImport: flipped,
    surfaceNodes: surf.surfaceNodes.length,
    surfaceTriangles: surf.triangles.length / 3,
    volume: stats.totalVolume,
    surfaceEnclosedVolume: closedVolume,
    minVolume: stats.minVolume,
    maxVolume: stats.maxVolume,
    bboxMin: stats.bboxMin,
    bboxMax: stats.bboxMax,
    nodeFileBytes: readFileSync(`${outBase}.node.gz`).length,
    eleFileBytes: readFileSync(`${outBase}.ele.gz`).length,
  }));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'surface' && args.length === 3) surfaceCommand(args[0], args[1], args[2]);
else if (cmd === 'import' && args.length === 3) importCommand(args[0], args[1], args[2]);
else {
  console.error('usage: mesh-assets.ts surface <armadillo|bunny|ball> <source> <out.off> | import <tetgen base> <out base> <comment>');
  process.exit(2);
}
