/**
 * Mesh file readers and writers: OBJ surfaces, TetGen .node/.ele (optionally gzip-compressed), Gmsh .msh v2 ASCII
 * tets, and the meshes the project ships under data/meshes (mesh-import.ts reads Gmsh 4.1 and VTK files, and picks
 * the reader of a file).
 *
 * Readers return positively oriented tets (see tet-mesh.ts) and throw MeshFileError naming the file, the line and
 * what was expected. Writers replace files atomically: they write a temporary file in the same folder and rename
 * it over the target, so a crashed process never leaves a half-written mesh (not fsync'd: a power loss may still
 * lose the latest write).
 */

import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type TetMesh, type TriSurface, checkTetMesh, orientTets, tetVolume6 } from '../mesh/tet-mesh.js';
import { fsErrorText } from './fs-errors.js';

export class MeshFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${detail}` : `${file}: ${detail}`);
    this.name = 'MeshFileError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Plumbing

/** Largest text a mesh file may hold (V8's string limit is about 512 MiB); also caps what a .gz may inflate to. */
const MAX_TEXT_BYTES = 2 ** 29 - 64;

/** Read a text file, gunzipping it first when the name ends in .gz; failures are MeshFileErrors naming the file. */
export function readTextFile(path: string): string {
  return readFileBytes(path).toString('utf8');
}

/** The bytes of a file, gunzipped first when the name ends in .gz; failures are MeshFileErrors naming the file. */
export function readFileBytes(path: string): Buffer {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (err) {
    throw new MeshFileError(path, 0, `cannot read: ${fsErrorText(err)}`);
  }
  if (path.endsWith('.gz')) {
    try {
      raw = gunzipSync(raw, { maxOutputLength: MAX_TEXT_BYTES });
    } catch (err) {
      const tooLarge = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
      throw new MeshFileError(path, 0, tooLarge ? `inflates to more than ${MAX_TEXT_BYTES} bytes` : `not a valid gzip file (${(err as Error).message}); a name ending in .gz must be gzip-compressed`);
    }
  }
  if (raw.length > MAX_TEXT_BYTES) throw new MeshFileError(path, 0, `too large (${raw.length} bytes; at most ${MAX_TEXT_BYTES})`);
  return raw;
}

/**
 * Replace `path` with `data` atomically: write a sibling temporary file, then rename it over the target (rename is
 * atomic within one file system). A name ending in .gz is gzip-compressed.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const payload = path.endsWith('.gz') ? gzipSync(bytes, { level: 9 }) : bytes;
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  try {
    writeFileSync(tmp, payload);
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // The temporary file may not exist (failed before creating it); nothing to clean.
    }
    throw err;
  }
}

/** Lines of a text with their 1-based numbers, '#' comments and surrounding blanks removed, empty lines skipped. */
function* dataLines(text: string, stripComments: boolean): Generator<[number, string]> {
  let lineNo = 0;
  let pos = 0;
  const n = text.length;
  while (pos <= n) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = n;
    lineNo++;
    let line = text.slice(pos, end);
    pos = end + 1;
    if (stripComments) {
      const hash = line.indexOf('#');
      if (hash >= 0) line = line.slice(0, hash);
    }
    line = line.trim();
    if (line.length > 0) yield [lineNo, line];
    if (end === n) break;
  }
}

function parseNumber(tok: string | undefined, file: string, line: number, what: string): number {
  const v = tok === undefined ? NaN : Number(tok);
  if (tok === undefined || tok === '' || !Number.isFinite(v)) {
    throw new MeshFileError(file, line, `expected ${what} (a finite number), got ${tok === undefined ? 'end of line' : JSON.stringify(tok)}`);
  }
  return v;
}

function parseInteger(tok: string | undefined, file: string, line: number, what: string): number {
  const v = tok === undefined ? NaN : Number(tok);
  if (tok === undefined || tok === '' || !Number.isInteger(v)) {
    throw new MeshFileError(file, line, `expected ${what} (an integer), got ${tok === undefined ? 'end of line' : JSON.stringify(tok)}`);
  }
  return v;
}

/** The header of a TetGen file (layout names its fields for the error on an empty file) and the lines after it. */
function tetgenHeader(text: string, file: string, layout: string): { lines: Generator<[number, string]>; hLine: number; h: string[] } {
  const lines = dataLines(text, true);
  const head = lines.next();
  if (head.done) throw new MeshFileError(file, 0, `expected a header "${layout}", got an empty file`);
  const [hLine, hText] = head.value;
  return { lines, hLine, h: hText.split(/\s+/) };
}

/** Passes each of the `count` records of `lines` (0-based number `read`) to `record`; fails on more or fewer. */
function forEachRecord(
  lines: Iterable<[number, string]>,
  count: number,
  what: string,
  file: string,
  record: (lineNo: number, line: string, read: number) => void,
): void {
  let read = 0;
  for (const [lineNo, line] of lines) {
    if (read === count) throw new MeshFileError(file, lineNo, `expected end of file after ${count} ${what}, got ${JSON.stringify(line)}`);
    record(lineNo, line, read);
    read++;
  }
  if (read < count) throw new MeshFileError(file, 0, `expected ${count} ${what} as the header says, found ${read}`);
}

/** Shortest decimal with `digits` significant digits (no trailing zeros): compact, for files we ship. */
function formatShort(x: number, digits: number): string {
  return String(Number(x.toPrecision(digits)));
}

// ---------------------------------------------------------------------------------------------------------------
// OBJ

/**
 * Parse an OBJ surface: `v x y z` nodes and `f` polygons (fan-triangulated; `i`, `i/t`, `i//n`, `i/t/n` corners;
 * 1-based or negative = relative to the latest node). Other statements (vn, vt, o, g, s, usemtl, ...) are ignored.
 */
export function parseObj(text: string, file = '<obj>'): TriSurface {
  const pos: number[] = [];
  const tri: number[] = [];
  const corner: number[] = [];
  for (const [lineNo, line] of dataLines(text, true)) {
    const tok = line.split(/\s+/);
    const kw = tok[0];
    if (kw === 'v') {
      if (tok.length < 4) throw new MeshFileError(file, lineNo, `expected "v x y z", got ${JSON.stringify(line)}`);
      pos.push(
        parseNumber(tok[1], file, lineNo, 'vertex x'),
        parseNumber(tok[2], file, lineNo, 'vertex y'),
        parseNumber(tok[3], file, lineNo, 'vertex z'),
      );
    } else if (kw === 'f') {
      if (tok.length < 4) throw new MeshFileError(file, lineNo, `expected a face with at least 3 corners, got ${JSON.stringify(line)}`);
      const nv = pos.length / 3;
      corner.length = 0;
      for (let k = 1; k < tok.length; k++) {
        const slash = tok[k].indexOf('/');
        const idx = parseInteger(slash >= 0 ? tok[k].slice(0, slash) : tok[k], file, lineNo, `face corner ${k} vertex index`);
        const v = idx > 0 ? idx - 1 : nv + idx;
        if (idx === 0 || v < 0 || v >= nv) {
          throw new MeshFileError(file, lineNo, `face corner ${k} refers to vertex ${idx}, but ${nv} vertices are defined so far`);
        }
        corner.push(v);
      }
      for (let k = 1; k + 1 < corner.length; k++) tri.push(corner[0], corner[k], corner[k + 1]);
    }
  }
  return { positions: Float64Array.from(pos), triangles: Uint32Array.from(tri) };
}

export function readObj(path: string): TriSurface {
  return parseObj(readTextFile(path), path);
}

/** OBJ text of a triangle surface; positions with `digits` significant digits (default 7). */
export function formatObj(positions: Float64Array, triangles: Uint32Array, digits = 7): string {
  const lines: string[] = [];
  pushObjVertices(lines, positions, digits);
  pushObjFaces(lines, triangles, 0, triangles.length / 3);
  lines.push('');
  return lines.join('\n');
}

/** Appends one `v` line per vertex, with `digits` significant digits. */
export function pushObjVertices(lines: string[], positions: Float64Array, digits: number): void {
  const nv = positions.length / 3;
  for (let i = 0; i < nv; i++) {
    // Plain toPrecision (trailing zeros kept) is ~4x faster than the shortest form; OBJ frames are written often.
    lines.push(`v ${positions[3 * i].toPrecision(digits)} ${positions[3 * i + 1].toPrecision(digits)} ${positions[3 * i + 2].toPrecision(digits)}`);
  }
}

/** Appends the 1-based `f` lines of triangles [from, to). */
export function pushObjFaces(lines: string[], triangles: Uint32Array, from: number, to: number): void {
  for (let t = from; t < to; t++) lines.push(`f ${triangles[3 * t] + 1} ${triangles[3 * t + 1] + 1} ${triangles[3 * t + 2] + 1}`);
}

export function writeObj(path: string, positions: Float64Array, triangles: Uint32Array, opts: { digits?: number } = {}): void {
  writeFileAtomic(path, formatObj(positions, triangles, opts.digits ?? 7));
}

// ---------------------------------------------------------------------------------------------------------------
// TetGen .node / .ele

export interface TetgenNodes {
  positions: Float64Array;
  /** Index of the first node in the file (0 or 1); .ele files refer to nodes with the same base. */
  firstIndex: number;
}

/**
 * Parse a TetGen .node file: header `<#points> 3 <#attributes> <0|1 markers>`, then `<index> x y z [attributes]
 * [marker]` per point, indices consecutive from 0 or 1.
 */
export function parseTetgenNode(text: string, file = '<node>'): TetgenNodes {
  const { lines, hLine, h } = tetgenHeader(text, file, '<#points> 3 <#attributes> <#markers>');
  const count = parseInteger(h[0], file, hLine, 'number of points in the header');
  const dim = h.length > 1 ? parseInteger(h[1], file, hLine, 'dimension in the header') : 3;
  const attrs = h.length > 2 ? parseInteger(h[2], file, hLine, 'number of attributes in the header') : 0;
  const markers = h.length > 3 ? parseInteger(h[3], file, hLine, 'boundary marker flag in the header') : 0;
  if (count <= 0) throw new MeshFileError(file, hLine, `expected a positive number of points, got ${count}`);
  if (dim !== 3) throw new MeshFileError(file, hLine, `expected dimension 3, got ${dim}`);
  const fields = 4 + attrs + (markers ? 1 : 0);
  const positions = new Float64Array(3 * count);
  let firstIndex = 0;
  forEachRecord(lines, count, 'points', file, (lineNo, line, read) => {
    const tok = line.split(/\s+/);
    if (tok.length < 4) throw new MeshFileError(file, lineNo, `expected "<index> x y z" (${fields} fields), got ${JSON.stringify(line)}`);
    const idx = parseInteger(tok[0], file, lineNo, 'point index');
    if (read === 0) {
      if (idx !== 0 && idx !== 1) throw new MeshFileError(file, lineNo, `expected the first point index to be 0 or 1, got ${idx}`);
      firstIndex = idx;
    } else if (idx !== firstIndex + read) {
      throw new MeshFileError(file, lineNo, `expected point index ${firstIndex + read}, got ${idx}`);
    }
    positions[3 * read] = parseNumber(tok[1], file, lineNo, 'x');
    positions[3 * read + 1] = parseNumber(tok[2], file, lineNo, 'y');
    positions[3 * read + 2] = parseNumber(tok[3], file, lineNo, 'z');
  });
  return { positions, firstIndex };
}

/**
 * Parse a TetGen .ele file: header `<#tets> <4|10 nodes per tet> <#attributes>`, then `<index> n0 n1 n2 n3 ...`
 * per tet; node ids use `firstIndex` (from the .node file). Second-order tets keep their 4 corners.
 */
export function parseTetgenEle(text: string, file: string, nodeCount: number, firstIndex: number): Uint32Array {
  const { lines, hLine, h } = tetgenHeader(text, file, '<#tets> <nodes per tet> <#attributes>');
  const count = parseInteger(h[0], file, hLine, 'number of tetrahedra in the header');
  const per = h.length > 1 ? parseInteger(h[1], file, hLine, 'nodes per tetrahedron in the header') : 4;
  if (count < 0) throw new MeshFileError(file, hLine, `expected a non-negative number of tetrahedra, got ${count}`);
  if (per !== 4 && per !== 10) throw new MeshFileError(file, hLine, `expected 4 or 10 nodes per tetrahedron, got ${per}`);
  const tets = new Uint32Array(4 * count);
  let elementBase = -1;
  forEachRecord(lines, count, 'tetrahedra', file, (lineNo, line, read) => {
    const tok = line.split(/\s+/);
    if (tok.length < 1 + per) throw new MeshFileError(file, lineNo, `expected "<index>" and ${per} node ids, got ${JSON.stringify(line)}`);
    const idx = parseInteger(tok[0], file, lineNo, 'tetrahedron index');
    if (read === 0) elementBase = idx;
    else if (idx !== elementBase + read) throw new MeshFileError(file, lineNo, `expected tetrahedron index ${elementBase + read}, got ${idx}`);
    for (let k = 0; k < 4; k++) {
      const id = parseInteger(tok[1 + k], file, lineNo, `node id ${k + 1}`);
      const v = id - firstIndex;
      if (v < 0 || v >= nodeCount) {
        throw new MeshFileError(file, lineNo, `expected a node id in [${firstIndex}, ${firstIndex + nodeCount - 1}], got ${id}`);
      }
      tets[4 * read + k] = v;
    }
  });
  return tets;
}

/** The .node and .ele paths for `path` given as `base`, `base.node[.gz]` or `base.ele[.gz]`. */
export function tetgenPaths(path: string): { nodePath: string; elePath: string } {
  const m = /^(.*)\.(node|ele)(\.gz)?$/.exec(path);
  if (m) return { nodePath: `${m[1]}.node${m[3] ?? ''}`, elePath: `${m[1]}.ele${m[3] ?? ''}` };
  const gz = !existsSync(`${path}.node`) && existsSync(`${path}.node.gz`) ? '.gz' : '';
  return { nodePath: `${path}.node${gz}`, elePath: `${path}.ele${gz}` };
}

/** Read a TetGen mesh (path as in tetgenPaths, or both files named explicitly). Tets come back positively oriented. */
export function readTetgen(path: string, elePath?: string): TetMesh {
  const paths = elePath === undefined ? tetgenPaths(path) : { nodePath: path, elePath };
  const { positions, firstIndex } = parseTetgenNode(readTextFile(paths.nodePath), paths.nodePath);
  const tets = parseTetgenEle(readTextFile(paths.elePath), paths.elePath, positions.length / 3, firstIndex);
  const mesh = { positions, tets };
  orientTets(mesh);
  requireSolidTets(mesh, paths.nodePath, paths.elePath, (i) => i + firstIndex);
  return mesh;
}

/**
 * Refuses what would give a body without a rest shape or a mass: no tets, a tet of zero volume (a repeated node, or
 * four nodes in one plane: its elastic energy is NaN), or a node in no tet (a free node with no mass). `nodeId`
 * gives a node's number in the file, for the messages.
 */
function requireSolidTets(mesh: TetMesh, nodeFile: string, tetFile: string, nodeId: (i: number) => number): void {
  const nTets = mesh.tets.length / 4;
  if (nTets === 0) throw new MeshFileError(tetFile, 0, 'has no tetrahedra');
  const used = new Uint8Array(mesh.positions.length / 3);
  for (let t = 0; t < nTets; t++) {
    const nodes = Array.from(mesh.tets.subarray(4 * t, 4 * t + 4));
    for (const i of nodes) used[i] = 1;
    if (tetVolume6(mesh.positions, mesh.tets, t) > 0) continue;
    const why = new Set(nodes).size < 4 ? 'a node repeats' : 'its nodes lie in one plane';
    throw new MeshFileError(tetFile, 0, `tetrahedron ${t + 1} of ${nTets} (nodes ${nodes.map(nodeId).join(', ')}) has zero volume (${why})`);
  }
  const unused = used.indexOf(0);
  if (unused >= 0) throw new MeshFileError(nodeFile, 0, `node ${nodeId(unused)} belongs to no tetrahedron (it would have no mass)`);
}

export interface TetgenWriteOptions {
  /** Significant digits of coordinates (default 9). */
  digits?: number;
  /** Write `.node.gz` / `.ele.gz` (default false). */
  gzip?: boolean;
  /** Index of the first node and tet, 0 (default) or 1. */
  firstIndex?: 0 | 1;
  /** Comment lines written at the top of both files (provenance). */
  comment?: string;
}

export function formatTetgenNode(positions: Float64Array, digits = 9, firstIndex = 0, comment?: string): string {
  const n = positions.length / 3;
  const lines: string[] = [];
  if (comment) for (const c of comment.split('\n')) lines.push(`# ${c}`);
  lines.push(`${n} 3 0 0`);
  for (let i = 0; i < n; i++) {
    lines.push(`${i + firstIndex} ${formatShort(positions[3 * i], digits)} ${formatShort(positions[3 * i + 1], digits)} ${formatShort(positions[3 * i + 2], digits)}`);
  }
  lines.push('');
  return lines.join('\n');
}

export function formatTetgenEle(tets: Uint32Array, firstIndex = 0, comment?: string): string {
  const n = tets.length / 4;
  const lines: string[] = [];
  if (comment) for (const c of comment.split('\n')) lines.push(`# ${c}`);
  lines.push(`${n} 4 0`);
  const b = firstIndex;
  for (let t = 0; t < n; t++) {
    lines.push(`${t + b} ${tets[4 * t] + b} ${tets[4 * t + 1] + b} ${tets[4 * t + 2] + b} ${tets[4 * t + 3] + b}`);
  }
  lines.push('');
  return lines.join('\n');
}

/** Write `base.node` and `base.ele` (or `.node.gz` / `.ele.gz`); returns the paths written. */
export function writeTetgen(basePath: string, mesh: TetMesh, opts: TetgenWriteOptions = {}): { nodePath: string; elePath: string } {
  checkTetMesh(mesh, basePath);
  const gz = opts.gzip ? '.gz' : '';
  const first = opts.firstIndex ?? 0;
  const nodePath = `${basePath}.node${gz}`;
  const elePath = `${basePath}.ele${gz}`;
  writeFileAtomic(nodePath, formatTetgenNode(mesh.positions, opts.digits ?? 9, first, opts.comment));
  writeFileAtomic(elePath, formatTetgenEle(mesh.tets, first, opts.comment));
  return { nodePath, elePath };
}

// ---------------------------------------------------------------------------------------------------------------
// Gmsh .msh v2 ASCII

const GMSH_TET4 = 4;
const GMSH_TET10 = 11;

/**
 * Parse the tetrahedra of a Gmsh .msh v2 ASCII file (element types 4 and 11; other elements are skipped). Nodes that
 * no tet uses (geometry points, surface-only nodes) are dropped and the rest renumbered in file order.
 */
export function parseGmsh(text: string, file = '<msh>'): TetMesh {
  const it = dataLines(text, false);
  const next = (what: string): [number, string] => {
    const r = it.next();
    if (r.done) throw new MeshFileError(file, 0, `expected ${what}, got end of file`);
    return r.value;
  };
  let nodeIds: Int32Array | null = null;
  let nodeXyz: Float64Array | null = null;
  const corners: number[] = [];
  let sawFormat = false;
  for (let r = it.next(); !r.done; r = it.next()) {
    const [lineNo, line] = r.value;
    if (line === '$MeshFormat') {
      const [fl, ft] = next('"version file-type data-size"');
      const tok = ft.split(/\s+/);
      const version = parseNumber(tok[0], file, fl, 'format version');
      const binary = parseInteger(tok[1], file, fl, 'file type');
      if (version < 2 || version >= 3) throw new MeshFileError(file, fl, `expected format version 2.x (save as "Version 2 ASCII"), got ${tok[0]}`);
      if (binary !== 0) throw new MeshFileError(file, fl, 'expected an ASCII file (file type 0), got binary');
      const [el, et] = next('$EndMeshFormat');
      if (et !== '$EndMeshFormat') throw new MeshFileError(file, el, `expected $EndMeshFormat, got ${JSON.stringify(et)}`);
      sawFormat = true;
    } else if (line === '$Nodes') {
      const [cl, ct] = next('the number of nodes');
      const count = parseInteger(ct, file, cl, 'number of nodes');
      nodeIds = new Int32Array(count);
      nodeXyz = new Float64Array(3 * count);
      for (let i = 0; i < count; i++) {
        const [nl, nt] = next(`node ${i + 1} of ${count}`);
        const tok = nt.split(/\s+/);
        if (tok.length < 4) throw new MeshFileError(file, nl, `expected "id x y z", got ${JSON.stringify(nt)}`);
        nodeIds[i] = parseInteger(tok[0], file, nl, 'node id');
        nodeXyz[3 * i] = parseNumber(tok[1], file, nl, 'x');
        nodeXyz[3 * i + 1] = parseNumber(tok[2], file, nl, 'y');
        nodeXyz[3 * i + 2] = parseNumber(tok[3], file, nl, 'z');
      }
      const [el, et] = next('$EndNodes');
      if (et !== '$EndNodes') throw new MeshFileError(file, el, `expected $EndNodes, got ${JSON.stringify(et)}`);
    } else if (line === '$Elements') {
      if (!nodeIds) throw new MeshFileError(file, lineNo, 'expected $Nodes before $Elements');
      const [cl, ct] = next('the number of elements');
      const count = parseInteger(ct, file, cl, 'number of elements');
      for (let i = 0; i < count; i++) {
        const [el, etx] = next(`element ${i + 1} of ${count}`);
        const tok = etx.split(/\s+/);
        const type = parseInteger(tok[1], file, el, 'element type');
        if (type !== GMSH_TET4 && type !== GMSH_TET10) continue;
        const ntags = parseInteger(tok[2], file, el, 'number of tags');
        const need = 3 + ntags + (type === GMSH_TET4 ? 4 : 10);
        if (tok.length < need) throw new MeshFileError(file, el, `expected ${need} fields for a tetrahedron with ${ntags} tags, got ${tok.length}`);
        for (let k = 0; k < 4; k++) corners.push(parseInteger(tok[3 + ntags + k], file, el, `tetrahedron node ${k + 1}`), el);
      }
      const [el, et] = next('$EndElements');
      if (et !== '$EndElements') throw new MeshFileError(file, el, `expected $EndElements, got ${JSON.stringify(et)}`);
    } else if (line.startsWith('$') && !line.startsWith('$End')) {
      // Unknown section ($PhysicalNames, $NodeData, ...): skip to its end marker.
      const end = `$End${line.slice(1)}`;
      for (;;) {
        const [, t] = next(end);
        if (t === end) break;
      }
    }
  }
  if (!sawFormat) throw new MeshFileError(file, 1, 'expected a $MeshFormat section (Gmsh .msh v2 ASCII)');
  if (!nodeIds || !nodeXyz) throw new MeshFileError(file, 0, 'expected a $Nodes section');
  if (corners.length === 0) throw new MeshFileError(file, 0, 'expected at least one tetrahedron (element type 4 or 11)');
  return tetMeshFromNodeIds(nodeIds, nodeXyz, corners, file);
}

/**
 * The tet mesh of a file that numbers its nodes with ids: `corners` holds (node id, line) pairs, four per tet (line 0
 * when unknown). Nodes no tet uses (geometry points, surface-only nodes) are dropped and the rest renumbered in file
 * order; tets are oriented positively and checked for volume.
 */
export function tetMeshFromNodeIds(nodeIds: ArrayLike<number>, nodeXyz: Float64Array, corners: readonly number[], file: string): TetMesh {
  const slotOfId = new Map<number, number>();
  for (let i = 0; i < nodeIds.length; i++) slotOfId.set(nodeIds[i], i);
  // Keep only nodes used by tets, in file order.
  const used = new Uint8Array(nodeIds.length);
  for (let i = 0; i < corners.length; i += 2) {
    const slot = slotOfId.get(corners[i]);
    if (slot === undefined) throw new MeshFileError(file, corners[i + 1], `tetrahedron refers to node ${corners[i]}, which $Nodes does not define`);
    used[slot] = 1;
  }
  const newIndex = new Int32Array(nodeIds.length).fill(-1);
  let n = 0;
  const fileId: number[] = [];
  for (let i = 0; i < used.length; i++) {
    if (!used[i]) continue;
    newIndex[i] = n++;
    fileId.push(nodeIds[i]);
  }
  const positions = new Float64Array(3 * n);
  for (let i = 0; i < used.length; i++) {
    if (newIndex[i] < 0) continue;
    positions.set(nodeXyz.subarray(3 * i, 3 * i + 3), 3 * newIndex[i]);
  }
  const tets = new Uint32Array(corners.length / 2);
  for (let i = 0; i < tets.length; i++) tets[i] = newIndex[slotOfId.get(corners[2 * i]) as number];
  const mesh = { positions, tets };
  orientTets(mesh);
  requireSolidTets(mesh, file, file, (i) => fileId[i]);
  return mesh;
}

export function readGmsh(path: string): TetMesh {
  return parseGmsh(readTextFile(path), path);
}

// ---------------------------------------------------------------------------------------------------------------
// Shipped meshes (data/meshes, see the README there)

export type ShippedMeshName = 'armadillo' | 'armadillo-quality' | 'bunny' | 'ball';

export const SHIPPED_MESH_DIR = fileURLToPath(new URL('../../data/meshes/', import.meta.url));

/** Base path (without .node.gz) of a mesh shipped in data/meshes. */
export function shippedMeshPath(name: ShippedMeshName): string {
  return join(SHIPPED_MESH_DIR, name);
}

/** Load a shipped mesh, in metres, as described in data/meshes/README.md. */
export function readShippedMesh(name: ShippedMeshName): TetMesh {
  return readTetgen(`${shippedMeshPath(name)}.node.gz`);
}
