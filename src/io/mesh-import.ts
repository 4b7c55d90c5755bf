/**
 * Tet meshes written by other tools: Gmsh .msh 4.1 (ASCII and binary), legacy VTK unstructured grids (.vtk, ASCII
 * and binary) and VTK XML unstructured grids (.vtu: ascii, or inline base64 binary, optionally zlib-compressed);
 * and the triangle surfaces of mesh obstacles (.obj, .stl ASCII and binary).
 * Only the tetrahedra are kept (linear, or the corners of quadratic ones); other cells are skipped, and so are the
 * nodes no tet uses. Errors are MeshFileErrors naming the file and the line (a byte offset inside binary data).
 */

import { accessSync, constants, existsSync } from 'node:fs';
import { basename, delimiter, extname, join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { TetMesh, TriSurface } from '../mesh/tet-mesh.js';
import { SURFACE_MESH_FORMATS, TET_MESH_FORMATS } from '../scene/schema.js';
import { MeshFileError, parseGmsh, parseObj, readFileBytes, readTetgen, tetgenPaths, tetMeshFromNodeIds } from './mesh-files.js';

/** Reads a tet mesh by its extension: .msh (Gmsh 2 or 4.1), .vtk, .vtu or TetGen (.node/.ele or the base name). */
export function readTetMesh(path: string): TetMesh {
  const kind = tetMeshKind(path);
  if (kind === 'tetgen') return readTetgen(path);
  const bytes = readFileBytes(path);
  if (kind === 'vtk') return parseLegacyVtk(bytes, path);
  if (kind === 'vtu') return parseVtu(bytes.toString('utf8'), path);
  const version = gmshVersion(bytes);
  return version !== null && version.startsWith('4') ? parseGmsh4(bytes, path) : parseGmsh(bytes.toString('utf8'), path);
}

/** Which reader a path goes to (a .gz suffix is looked through). */
export function tetMeshKind(path: string): 'gmsh' | 'vtk' | 'vtu' | 'tetgen' {
  const m = /\.(msh|vtk|vtu)(\.gz)?$/i.exec(path);
  if (!m) return 'tetgen';
  const ext = m[1].toLowerCase();
  return ext === 'msh' ? 'gmsh' : (ext as 'vtk' | 'vtu');
}

/** Surface formats often tried first: their error says how to tetrahedralize. */
const SURFACE_FORMATS = new Set(['.obj', '.stl', '.ply', '.off']);

/** The path of an executable `name` on the PATH, or null. */
export function findOnPath(name: string, pathVar = process.env.PATH ?? ''): string | null {
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** How to turn a surface file into a tet mesh vivace reads: the tetgen command line, and whether tetgen is here. */
export function tetrahedralizeHint(path: string, tetgen = findOnPath('tetgen')): string {
  const name = basename(path.replace(/\.gz$/, ''));
  const ext = extname(name).toLowerCase();
  const stem = name.slice(0, name.length - ext.length);
  // TetGen reads .stl, .ply and .off surfaces, not .obj.
  const convert = ext === '.obj' ? 'convert it to STL, PLY or OFF (e.g. with MeshLab or Blender), then ' : '';
  const where = tetgen ? `TetGen is installed here (${tetgen})` : "TetGen is Debian's package tetgen (apt-get install tetgen)";
  return `${ext} holds a surface, not tetrahedra: ${convert}tetrahedralize it, e.g. \`tetgen -pq1.4a0.0001 ${ext === '.obj' ? `${stem}.stl` : name}\` in its folder (-a: the largest tet volume, in the file's units cubed), and give the ${stem}.1.node it writes (with ${stem}.1.ele) as the path; ${where}`;
}

/**
 * Why `path` cannot name a tet mesh (an extension no reader knows, with no TetGen files named after it), or null.
 * A TetGen base name may contain dots (`cube.v2` for cube.v2.node), so an unknown extension is only refused when
 * `<path>.node` is not there either.
 */
export function unsupportedMeshFormat(path: string): string | null {
  if (/\.(node|ele|msh|vtk|vtu)(\.gz)?$/i.test(path)) return null;
  const ext = extname(path.replace(/\.gz$/, '')).toLowerCase();
  if (ext === '' || existsSync(tetgenPaths(path).nodePath)) return null;
  if (SURFACE_FORMATS.has(ext)) return tetrahedralizeHint(path);
  return `'${ext}' is not a tet mesh format vivace reads; supported: ${TET_MESH_FORMATS.join(', ')}`;
}

/** Reads a file's bytes as lines and whitespace-separated tokens (ASCII) or as little/big-endian numbers (binary). */
class Cursor {
  pos = 0;
  /** 1-based line of `pos`, counted over the text read as lines and tokens. */
  line = 1;
  littleEndian = true;

  constructor(
    readonly buf: Buffer,
    readonly file: string,
  ) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  fail(detail: string, binary = false): never {
    throw new MeshFileError(this.file, binary ? 0 : this.line, binary ? `at byte ${this.pos}: ${detail}` : detail);
  }

  /** The next line that is not blank (trimmed), or null at the end. */
  nextLine(): string | null {
    while (this.pos < this.buf.length) {
      let end = this.buf.indexOf(10, this.pos);
      if (end < 0) end = this.buf.length;
      const text = this.buf.toString('latin1', this.pos, end).trim();
      this.pos = end + 1;
      if (text !== '') return text;
      this.line++;
    }
    return null;
  }

  /** nextLine() that counts the line it read (call after using the line's number in a message). */
  takeLine(what: string): string {
    const text = this.nextLine();
    if (text === null) this.fail(`expected ${what}, got end of file`);
    return text;
  }

  endLine(): void {
    this.line++;
  }

  /** The next whitespace-separated token (crossing lines), or fails naming `what`. */
  token(what: string): string {
    const b = this.buf;
    while (this.pos < b.length && (b[this.pos] === 32 || b[this.pos] === 9 || b[this.pos] === 13 || b[this.pos] === 10)) {
      if (b[this.pos] === 10) this.line++;
      this.pos++;
    }
    const start = this.pos;
    while (this.pos < b.length && b[this.pos] !== 32 && b[this.pos] !== 9 && b[this.pos] !== 13 && b[this.pos] !== 10) this.pos++;
    if (start === this.pos) this.fail(`expected ${what}, got end of file`);
    return b.toString('latin1', start, this.pos);
  }

  number(what: string): number {
    const t = this.token(what);
    const v = Number(t);
    if (!Number.isFinite(v)) this.fail(`expected ${what} (a finite number), got ${JSON.stringify(t)}`);
    return v;
  }

  integer(what: string): number {
    const t = this.token(what);
    const v = Number(t);
    if (!Number.isSafeInteger(v)) this.fail(`expected ${what} (an integer), got ${JSON.stringify(t)}`);
    return v;
  }

  /** Skips the rest of the current line (after tokens, before the next keyword line). */
  skipToLineEnd(): void {
    const end = this.buf.indexOf(10, this.pos);
    this.pos = end < 0 ? this.buf.length : end + 1;
    this.line++;
  }

  private need(bytes: number, what: string): void {
    if (this.pos + bytes > this.buf.length) this.fail(`expected ${what}, got end of file`, true);
  }

  int32(what: string): number {
    this.need(4, what);
    const v = this.littleEndian ? this.buf.readInt32LE(this.pos) : this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  /** An unsigned integer of `size` bytes (4 or 8). */
  unsigned(size: number, what: string): number {
    this.need(size, what);
    let v: number;
    if (size === 8) {
      const big = this.littleEndian ? this.buf.readBigUInt64LE(this.pos) : this.buf.readBigUInt64BE(this.pos);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} ${big} is too large`, true);
      v = Number(big);
    } else v = this.littleEndian ? this.buf.readUInt32LE(this.pos) : this.buf.readUInt32BE(this.pos);
    this.pos += size;
    return v;
  }

  float(size: 4 | 8, what: string): number {
    this.need(size, what);
    const b = this.buf;
    const v = size === 8 ? (this.littleEndian ? b.readDoubleLE(this.pos) : b.readDoubleBE(this.pos)) : this.littleEndian ? b.readFloatLE(this.pos) : b.readFloatBE(this.pos);
    if (!Number.isFinite(v)) this.fail(`expected ${what} (a finite number), got ${v}`, true);
    this.pos += size;
    return v;
  }

  /** Moves past the line `marker` (e.g. $EndEntities), searching the bytes (binary sections are skipped unread). */
  skipPast(marker: string, from: string): void {
    const at = this.buf.indexOf(marker, this.pos, 'latin1');
    if (at < 0) this.fail(`expected ${marker} to close ${from}, got end of file`);
    for (let i = this.pos; i < at; i++) if (this.buf[i] === 10) this.line++;
    this.pos = at;
    this.takeLine(marker);
    this.endLine();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Gmsh 4.1

/** Nodes per element of the Gmsh element types a mesh may hold besides tets (to skip them). */
const GMSH_NODES_PER_TYPE: Record<number, number> = {
  1: 2, 2: 3, 3: 4, 4: 4, 5: 8, 6: 6, 7: 5, 8: 3, 9: 6, 10: 9, 11: 10, 12: 27, 13: 18, 14: 14, 15: 1, 16: 8, 17: 20, 18: 15, 19: 13,
  20: 9, 21: 10, 22: 12, 23: 15, 24: 15, 25: 21, 26: 4, 27: 5, 28: 6, 29: 20, 30: 35, 31: 56, 92: 64, 93: 125,
};
const GMSH_TET4 = 4;
const GMSH_TET10 = 11;

/** The version of a .msh file ("2.2", "4.1", ...) from its $MeshFormat section, or null when it has none. */
export function gmshVersion(bytes: Buffer): string | null {
  const m = /\$MeshFormat\s*\r?\n\s*(\S+)/.exec(bytes.toString('latin1', 0, Math.min(bytes.length, 4096)));
  return m ? m[1] : null;
}

/** The tetrahedra of a Gmsh .msh 4.1 file, ASCII or binary (element types 4 and 11). */
export function parseGmsh4(bytes: Buffer, file = '<msh>'): TetMesh {
  const c: Cursor = new Cursor(bytes, file);
  let binary = false;
  let sizeT = 8;
  let nodeIds: number[] | null = null;
  let xyz: number[] = [];
  const corners: number[] = [];
  let sawFormat = false;
  // In binary files, numbers come as bytes; in ASCII, as tokens.
  const size = (what: string) => (binary ? c.unsigned(sizeT, what) : c.integer(what));
  const int = (what: string) => (binary ? c.int32(what) : c.integer(what));
  const real = (what: string) => (binary ? c.float(8, what) : c.number(what));
  const where = () => (binary ? 0 : c.line);
  for (let line = c.nextLine(); line !== null; line = c.nextLine()) {
    if (line === '$MeshFormat') {
      c.endLine();
      const fmtLine = c.line;
      const tok = c.takeLine('"version file-type data-size"').split(/\s+/);
      if (tok[0] !== '4.1') throw new MeshFileError(file, fmtLine, `expected format version 4.1 here, got ${JSON.stringify(tok[0])} (Gmsh 2.x files are read too; 4.0 is not: save as 4.1 or 2.2)`);
      binary = tok[1] === '1';
      if (!binary && tok[1] !== '0') throw new MeshFileError(file, fmtLine, `expected file type 0 (ASCII) or 1 (binary), got ${JSON.stringify(tok[1])}`);
      sizeT = Number(tok[2]);
      if (sizeT !== 4 && sizeT !== 8) throw new MeshFileError(file, fmtLine, `expected data size 4 or 8, got ${JSON.stringify(tok[2])}`);
      c.endLine();
      if (binary) {
        // A binary file writes the integer 1 next, in the machine's byte order.
        const one = c.buf.readInt32LE(c.pos);
        if (one !== 1) {
          if (c.buf.readInt32BE(c.pos) !== 1) c.fail('expected the binary integer 1 after the format line', true);
          c.littleEndian = false;
        }
        c.pos += 4;
      }
      if (c.takeLine('$EndMeshFormat') !== '$EndMeshFormat') c.fail('expected $EndMeshFormat');
      c.endLine();
      sawFormat = true;
    } else if (line === '$Nodes') {
      c.endLine();
      if (!sawFormat) c.fail('expected $MeshFormat before $Nodes');
      const blocks = size('the number of node blocks');
      const count = size('the number of nodes');
      size('the smallest node tag');
      size('the largest node tag');
      nodeIds = [];
      xyz = [];
      for (let b = 0; b < blocks; b++) {
        const dim = int(`node block ${b + 1}: entity dimension`);
        int(`node block ${b + 1}: entity tag`);
        const parametric = int(`node block ${b + 1}: parametric flag`);
        const n = size(`node block ${b + 1}: number of nodes`);
        if (nodeIds.length + n > count) throw new MeshFileError(file, where(), `node block ${b + 1} holds ${n} nodes, beyond the ${count} the $Nodes header gives`);
        for (let i = 0; i < n; i++) nodeIds.push(size(`node tag ${i + 1} of block ${b + 1}`));
        for (let i = 0; i < n; i++) {
          for (let a = 0; a < 3; a++) xyz.push(real(`coordinate ${'xyz'[a]} of node ${i + 1} of block ${b + 1}`));
          if (parametric === 1) for (let a = 0; a < dim; a++) real('a parametric coordinate');
        }
      }
      if (nodeIds.length !== count) throw new MeshFileError(file, where(), `expected ${count} nodes as the $Nodes header says, found ${nodeIds.length}`);
      if (!binary) c.skipToLineEnd();
      if (c.takeLine('$EndNodes') !== '$EndNodes') c.fail('expected $EndNodes');
      c.endLine();
    } else if (line === '$Elements') {
      c.endLine();
      if (!nodeIds) c.fail('expected $Nodes before $Elements');
      const blocks = size('the number of element blocks');
      size('the number of elements');
      size('the smallest element tag');
      size('the largest element tag');
      for (let b = 0; b < blocks; b++) {
        int(`element block ${b + 1}: entity dimension`);
        int(`element block ${b + 1}: entity tag`);
        const blockLine = where();
        const type = int(`element block ${b + 1}: element type`);
        const n = size(`element block ${b + 1}: number of elements`);
        const perElement = GMSH_NODES_PER_TYPE[type];
        if (perElement === undefined) throw new MeshFileError(file, blockLine, `element block ${b + 1} has element type ${type}, which vivace does not know (tets are types 4 and 11)`);
        const tet = type === GMSH_TET4 || type === GMSH_TET10;
        for (let e = 0; e < n; e++) {
          size(`element tag ${e + 1} of block ${b + 1}`);
          const elementLine = where();
          for (let k = 0; k < perElement; k++) {
            const id = size(`node ${k + 1} of element ${e + 1} of block ${b + 1}`);
            if (tet && k < 4) corners.push(id, elementLine);
          }
        }
      }
      if (!binary) c.skipToLineEnd();
      if (c.takeLine('$EndElements') !== '$EndElements') c.fail('expected $EndElements');
      c.endLine();
    } else if (line.startsWith('$') && !line.startsWith('$End')) {
      // $Entities, $PhysicalNames, $NodeData, ...: not needed (binary ones are skipped by their end marker).
      c.endLine();
      c.skipPast(`$End${line.slice(1)}`, line);
    } else c.fail(`expected a section such as $Nodes, got ${JSON.stringify(line.slice(0, 60))}`);
  }
  if (!sawFormat) throw new MeshFileError(file, 1, 'expected a $MeshFormat section');
  if (!nodeIds) throw new MeshFileError(file, 0, 'expected a $Nodes section');
  if (corners.length === 0) throw new MeshFileError(file, 0, 'expected at least one tetrahedron (element type 4 or 11)');
  return tetMeshFromNodeIds(nodeIds, Float64Array.from(xyz), corners, file);
}

// ---------------------------------------------------------------------------------------------------------------
// VTK (legacy and XML)

const VTK_TETRA = 10;
const VTK_QUADRATIC_TETRA = 24;

/** Tets (corner node indices, each with its line) out of VTK cell arrays; other cell types are skipped. */
function vtkTets(offsets: ArrayLike<number>, connectivity: ArrayLike<number>, types: ArrayLike<number>, nPoints: number, file: string, line: (cell: number) => number): number[] {
  const corners: number[] = [];
  for (let cell = 0; cell < types.length; cell++) {
    const start = offsets[cell];
    const end = offsets[cell + 1];
    if (!(start >= 0 && end >= start && end <= connectivity.length)) throw new MeshFileError(file, line(cell), `cell ${cell} has offsets ${start} to ${end}, outside the ${connectivity.length} connectivity entries`);
    if (types[cell] !== VTK_TETRA && types[cell] !== VTK_QUADRATIC_TETRA) continue;
    const need = types[cell] === VTK_TETRA ? 4 : 10;
    if (end - start !== need) throw new MeshFileError(file, line(cell), `cell ${cell} is a ${need === 4 ? 'tetrahedron' : 'quadratic tetrahedron'} with ${end - start} nodes, expected ${need}`);
    for (let k = 0; k < 4; k++) {
      const node = connectivity[start + k];
      if (!(Number.isInteger(node) && node >= 0 && node < nPoints)) throw new MeshFileError(file, line(cell), `cell ${cell} refers to point ${node}, but there are ${nPoints} points (numbered from 0)`);
      corners.push(node, line(cell));
    }
  }
  if (corners.length === 0) throw new MeshFileError(file, 0, 'expected at least one tetrahedron (VTK cell type 10 or 24)');
  return corners;
}

function pointIds(n: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => i);
}

/** A tet mesh from a legacy VTK file (DATASET UNSTRUCTURED_GRID, ASCII or BINARY, versions 2 to 5.1). */
export function parseLegacyVtk(bytes: Buffer, file = '<vtk>'): TetMesh {
  const c: Cursor = new Cursor(bytes, file);
  c.littleEndian = false; // legacy binary VTK is big-endian
  const head = c.takeLine('"# vtk DataFile Version x.y"');
  const version = /^# vtk DataFile Version (\d+(?:\.\d+)?)/i.exec(head);
  if (!version) c.fail(`expected "# vtk DataFile Version x.y" on the first line, got ${JSON.stringify(head.slice(0, 60))}`);
  c.endLine();
  // The title line may be blank: read it raw.
  const titleEnd = bytes.indexOf(10, c.pos);
  c.pos = titleEnd < 0 ? bytes.length : titleEnd + 1;
  c.endLine();
  const mode = c.takeLine('ASCII or BINARY').toUpperCase();
  if (mode !== 'ASCII' && mode !== 'BINARY') c.fail(`expected ASCII or BINARY, got ${JSON.stringify(mode)}`);
  c.endLine();
  const binary = mode === 'BINARY';
  const dataset = c.takeLine('DATASET UNSTRUCTURED_GRID');
  if (!/^DATASET\s+UNSTRUCTURED_GRID$/i.test(dataset)) c.fail(`expected DATASET UNSTRUCTURED_GRID (a grid of cells holding the tets), got ${JSON.stringify(dataset.slice(0, 60))}`);
  c.endLine();
  const intOf = (type: string, what: string) => {
    if (!binary) return c.integer(what);
    if (type === 'vtktypeint64' || type === 'long') return c.unsigned(8, what);
    return c.int32(what);
  };
  let xyz: Float64Array | null = null;
  let offsets: number[] | null = null;
  let connectivity: number[] | null = null;
  let types: number[] | null = null;
  let cellsLine = 0;
  /** The line each cell starts on (ASCII files before version 5, where a cell is one record). */
  const cellLines: number[] = [];
  for (let line = c.nextLine(); line !== null; line = c.nextLine()) {
    const tok = line.split(/\s+/);
    const key = tok[0].toUpperCase();
    const keyLine = c.line;
    c.endLine();
    const count = (i: number, what: string) => {
      const v = Number(tok[i]);
      if (!Number.isSafeInteger(v) || v < 0) throw new MeshFileError(file, keyLine, `expected ${what} after ${key}, got ${JSON.stringify(tok[i] ?? 'end of line')}`);
      return v;
    };
    if (key === 'POINTS') {
      const n = count(1, 'the number of points');
      const type = (tok[2] ?? '').toLowerCase();
      if (type !== 'float' && type !== 'double') throw new MeshFileError(file, keyLine, `expected float or double points, got ${JSON.stringify(tok[2] ?? 'end of line')}`);
      xyz = new Float64Array(3 * n);
      for (let i = 0; i < 3 * n; i++) xyz[i] = binary ? c.float(type === 'float' ? 4 : 8, `coordinate ${i % 3} of point ${Math.floor(i / 3)}`) : c.number(`coordinate ${'xyz'[i % 3]} of point ${Math.floor(i / 3)}`);
    } else if (key === 'METADATA') {
      // Information keys, up to a blank line.
      const blank = /\n[ \t\r]*\n/.exec(bytes.toString('latin1', c.pos));
      if (!blank) throw new MeshFileError(file, keyLine, 'expected a blank line to end METADATA');
      for (let i = 0; i < blank.index + blank[0].length; i++) if (bytes[c.pos + i] === 10) c.endLine();
      c.pos += blank.index + blank[0].length;
      continue;
    } else if (key === 'CELLS') {
      cellsLine = keyLine;
      const a = count(1, 'the number of cells');
      const b = count(2, 'the size of the cell list');
      if (Number(version[1]) >= 5) {
        // CELLS <offsets> <connectivity>, then OFFSETS and CONNECTIVITY arrays.
        for (const [name, n] of [['OFFSETS', a], ['CONNECTIVITY', b]] as const) {
          if (name === 'CONNECTIVITY' && !binary) c.skipToLineEnd();
          const sub = c.takeLine(name).split(/\s+/);
          if (sub[0].toUpperCase() !== name) c.fail(`expected ${name} <type>, got ${JSON.stringify(sub.join(' ').slice(0, 60))}`);
          c.endLine();
          const values: number[] = [];
          for (let i = 0; i < n; i++) values.push(intOf((sub[1] ?? '').toLowerCase(), `${name.toLowerCase()} entry ${i}`));
          if (name === 'OFFSETS') offsets = values;
          else connectivity = values;
        }
      } else {
        // CELLS <cells> <size>: each cell as its node count followed by its nodes.
        offsets = [0];
        connectivity = [];
        for (let cell = 0; cell < a; cell++) {
          const n = intOf('int', `the node count of cell ${cell}`);
          cellLines.push(binary ? cellsLine : c.line);
          if (n < 0 || connectivity.length + n + cell + 1 > b) throw new MeshFileError(file, binary ? 0 : c.line, `cell ${cell} has ${n} nodes, beyond the list size ${b} that CELLS gives`);
          for (let k = 0; k < n; k++) connectivity.push(intOf('int', `node ${k} of cell ${cell}`));
          offsets.push(connectivity.length);
        }
      }
    } else if (key === 'CELL_TYPES') {
      const n = count(1, 'the number of cells');
      types = [];
      for (let i = 0; i < n; i++) types.push(intOf('int', `the type of cell ${i}`));
    } else if (key === 'POINT_DATA' || key === 'CELL_DATA' || key === 'FIELD') {
      break; // attributes follow: not needed
    } else throw new MeshFileError(file, keyLine, `expected POINTS, CELLS or CELL_TYPES, got ${JSON.stringify(line.slice(0, 60))}`);
    if (!binary) c.skipToLineEnd();
  }
  if (!xyz) throw new MeshFileError(file, 0, 'expected a POINTS section');
  if (!offsets || !connectivity) throw new MeshFileError(file, 0, 'expected a CELLS section');
  if (!types) throw new MeshFileError(file, 0, 'expected a CELL_TYPES section');
  if (types.length !== offsets.length - 1) throw new MeshFileError(file, cellsLine, `CELLS lists ${offsets.length - 1} cells, CELL_TYPES ${types.length}`);
  const nPoints = xyz.length / 3;
  const corners = vtkTets(offsets, connectivity, types, nPoints, file, (cell) => cellLines[cell] ?? cellsLine);
  return tetMeshFromNodeIds(pointIds(nPoints), xyz, corners, file);
}

interface XmlArray {
  attributes: Record<string, string>;
  text: string;
  /** Line of the <DataArray> tag. */
  line: number;
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function xmlAttributes(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]] = m[2] ?? m[3];
  return out;
}

/** The DataArrays inside the first <section>...</section> of a .vtu text. */
function vtuSection(text: string, section: string, file: string): XmlArray[] {
  const open = new RegExp(`<${section}\\b[^>]*>`).exec(text);
  if (!open) throw new MeshFileError(file, 0, `expected a <${section}> element`);
  const close = text.indexOf(`</${section}>`, open.index);
  if (close < 0) throw new MeshFileError(file, lineAt(text, open.index), `<${section}> is not closed`);
  const arrays: XmlArray[] = [];
  const re = /<DataArray\b([^>]*?)(\/?)>/g;
  re.lastIndex = open.index;
  for (let m = re.exec(text); m && m.index < close; m = re.exec(text)) {
    const end = m[2] ? m.index + m[0].length : text.indexOf('</DataArray>', re.lastIndex);
    if (end < 0) throw new MeshFileError(file, lineAt(text, m.index), '<DataArray> is not closed');
    arrays.push({ attributes: xmlAttributes(m[1]), text: m[2] ? '' : text.slice(re.lastIndex, end), line: lineAt(text, m.index) });
  }
  return arrays;
}

const VTU_TYPES: Record<string, { bytes: number; read: (b: Buffer, at: number) => number }> = {
  Float32: { bytes: 4, read: (b, at) => b.readFloatLE(at) },
  Float64: { bytes: 8, read: (b, at) => b.readDoubleLE(at) },
  Int8: { bytes: 1, read: (b, at) => b.readInt8(at) },
  UInt8: { bytes: 1, read: (b, at) => b.readUInt8(at) },
  Int16: { bytes: 2, read: (b, at) => b.readInt16LE(at) },
  UInt16: { bytes: 2, read: (b, at) => b.readUInt16LE(at) },
  Int32: { bytes: 4, read: (b, at) => b.readInt32LE(at) },
  UInt32: { bytes: 4, read: (b, at) => b.readUInt32LE(at) },
  Int64: { bytes: 8, read: (b, at) => Number(b.readBigInt64LE(at)) },
  UInt64: { bytes: 8, read: (b, at) => Number(b.readBigUInt64LE(at)) },
};

/**
 * The numbers of a DataArray: `ascii`, or `binary` (base64 of a byte-count header and the data, or with
 * vtkZLibDataCompressor of a block header and zlib blocks; header and data encoded together or one after the other).
 */
function vtuValues(a: XmlArray, file: string, opts: { headerBytes: 4 | 8; zlib: boolean }): number[] {
  const name = a.attributes.Name ? `DataArray "${a.attributes.Name}"` : 'DataArray';
  const format = a.attributes.format ?? 'ascii';
  const type = VTU_TYPES[a.attributes.type];
  if (!type) throw new MeshFileError(file, a.line, `${name}: expected a type such as Float64 or Int64, got ${JSON.stringify(a.attributes.type ?? 'none')}`);
  if (format === 'ascii') {
    const s = a.text.trim();
    if (s === '') return [];
    return s.split(/\s+/).map((t) => {
      const v = Number(t);
      if (!Number.isFinite(v)) throw new MeshFileError(file, a.line, `${name}: expected numbers, got ${JSON.stringify(t.slice(0, 30))}`);
      return v;
    });
  }
  if (format !== 'binary') throw new MeshFileError(file, a.line, `${name}: format "${format}" is not read (appended data): save the grid with ascii or binary (inline) data, e.g. ParaView's Data Mode "Ascii" or "Binary"`);
  const b64 = a.text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/=]*$/.test(b64)) throw new MeshFileError(file, a.line, `${name}: binary data must be base64`);
  const h = opts.headerBytes;
  const readHeader = (buf: Buffer, i: number) => (h === 8 ? Number(buf.readBigUInt64LE(i * 8)) : buf.readUInt32LE(i * 4));
  let data: Buffer;
  // The header alone, when it was encoded on its own, ends with padding where a joint encoding would not have it.
  const decodeHeader = (words: number): { header: Buffer; rest: Buffer } => {
    const chars = 4 * Math.ceil((words * h) / 3);
    if ((words * h) % 3 !== 0 && b64[chars - 1] === '=') return { header: Buffer.from(b64.slice(0, chars), 'base64'), rest: Buffer.from(b64.slice(chars), 'base64') };
    const all = Buffer.from(b64, 'base64');
    return { header: all.subarray(0, words * h), rest: all.subarray(words * h) };
  };
  try {
    if (!opts.zlib) {
      const { header, rest } = decodeHeader(1);
      const n = readHeader(header, 0);
      if (n > rest.length) throw new Error(`the header gives ${n} bytes, the data holds ${rest.length}`);
      data = rest.subarray(0, n);
    } else {
      // The first word (the block count) decodes alike whether the header was encoded alone or with the data.
      const blocks = readHeader(Buffer.from(b64.slice(0, 4 * Math.ceil(h / 3)), 'base64'), 0);
      const { header, rest } = decodeHeader(3 + blocks);
      const parts: Buffer[] = [];
      let at = 0;
      for (let k = 0; k < blocks; k++) {
        const size = readHeader(header, 3 + k);
        parts.push(inflateSync(rest.subarray(at, at + size)));
        at += size;
      }
      data = Buffer.concat(parts);
    }
  } catch (err) {
    throw new MeshFileError(file, a.line, `${name}: cannot decode its binary data (${(err as Error).message})`);
  }
  if (data.length % type.bytes !== 0) throw new MeshFileError(file, a.line, `${name}: ${data.length} bytes is not a whole number of ${a.attributes.type} values`);
  const out = new Array<number>(data.length / type.bytes);
  for (let i = 0; i < out.length; i++) out[i] = type.read(data, i * type.bytes);
  return out;
}

/** A tet mesh from a VTK XML UnstructuredGrid (.vtu; one piece), such as vivace's own VTU frames. */
export function parseVtu(text: string, file = '<vtu>'): TetMesh {
  const root = /<VTKFile\b([^>]*)>/.exec(text);
  if (!root) throw new MeshFileError(file, 1, 'expected a <VTKFile> element (a VTK XML file)');
  const attrs = xmlAttributes(root[1]);
  const rootLine = lineAt(text, root.index);
  if (attrs.type !== 'UnstructuredGrid') throw new MeshFileError(file, rootLine, `expected type="UnstructuredGrid", got ${JSON.stringify(attrs.type ?? 'none')}`);
  if (attrs.byte_order && attrs.byte_order !== 'LittleEndian') throw new MeshFileError(file, rootLine, 'big-endian binary data is not read: save with byte_order="LittleEndian"');
  if (attrs.compressor && attrs.compressor !== 'vtkZLibDataCompressor') throw new MeshFileError(file, rootLine, `compressor ${attrs.compressor} is not read (vtkZLibDataCompressor is)`);
  const opts = { headerBytes: (attrs.header_type === 'UInt64' ? 8 : 4) as 4 | 8, zlib: attrs.compressor === 'vtkZLibDataCompressor' };
  if ((text.match(/<Piece\b/g) ?? []).length > 1) throw new MeshFileError(file, rootLine, 'holds several pieces: merge them into one (e.g. ParaView\'s Merge Blocks) and save again');
  const piece = /<Piece\b([^>]*)>/.exec(text);
  if (!piece) throw new MeshFileError(file, 0, 'expected a <Piece> element');
  const pieceAttrs = xmlAttributes(piece[1]);
  const nPoints = Number(pieceAttrs.NumberOfPoints);
  const nCells = Number(pieceAttrs.NumberOfCells);
  const pieceLine = lineAt(text, piece.index);
  if (!Number.isSafeInteger(nPoints) || nPoints < 0 || !Number.isSafeInteger(nCells) || nCells < 0) throw new MeshFileError(file, pieceLine, 'expected whole NumberOfPoints and NumberOfCells on <Piece>');
  const points = vtuSection(text, 'Points', file);
  if (points.length !== 1) throw new MeshFileError(file, 0, `expected one DataArray in <Points>, found ${points.length}`);
  const xyz = vtuValues(points[0], file, opts);
  if (Number(points[0].attributes.NumberOfComponents ?? 3) !== 3 || xyz.length !== 3 * nPoints) throw new MeshFileError(file, points[0].line, `expected ${nPoints} points of 3 coordinates, found ${xyz.length} numbers`);
  const cells = vtuSection(text, 'Cells', file);
  const array = (name: string) => {
    const a = cells.find((x) => x.attributes.Name === name);
    if (!a) throw new MeshFileError(file, 0, `expected a DataArray Name="${name}" in <Cells>`);
    return { a, values: vtuValues(a, file, opts) };
  };
  const conn = array('connectivity');
  const off = array('offsets');
  const typ = array('types');
  if (off.values.length !== nCells || typ.values.length !== nCells) throw new MeshFileError(file, off.a.line, `expected ${nCells} offsets and types (NumberOfCells), found ${off.values.length} and ${typ.values.length}`);
  const corners = vtkTets([0, ...off.values], conn.values, typ.values, nPoints, file, () => conn.a.line);
  return tetMeshFromNodeIds(pointIds(nPoints), Float64Array.from(xyz), corners, file);
}

// ---------------------------------------------------------------------------------------------------------------
// Triangle surfaces (mesh obstacles): OBJ and STL

/** A triangle surface from an STL file, ASCII or binary (told apart by the size a binary file must have). */
export function parseStl(bytes: Buffer, file = '<stl>'): TriSurface {
  const xyz: number[] = [];
  if (bytes.length >= 84 && bytes.length === 84 + 50 * bytes.readUInt32LE(80)) {
    const n = bytes.readUInt32LE(80);
    for (let t = 0; t < n; t++) {
      for (let k = 0; k < 9; k++) {
        const v = bytes.readFloatLE(84 + 50 * t + 12 + 4 * k);
        if (!Number.isFinite(v)) throw new MeshFileError(file, 0, `triangle ${t + 1} of ${n} (binary STL): coordinate ${v} is not finite`);
        xyz.push(v);
      }
    }
  } else {
    const c: Cursor = new Cursor(bytes, file);
    const head = c.nextLine();
    if (head === null || !/^solid\b/i.test(head)) throw new MeshFileError(file, 1, `expected "solid <name>" (ASCII STL) or a binary STL of 84 + 50 x (triangle count) bytes, got ${bytes.length} bytes starting ${JSON.stringify(bytes.toString('latin1', 0, 20))}`);
    c.endLine();
    let inFacet = false;
    let corners = 0;
    let facetLine = 0;
    for (let line = c.nextLine(); line !== null; line = c.nextLine()) {
      const tok = line.split(/\s+/);
      const key = tok[0].toLowerCase();
      if (key === 'facet') {
        if (inFacet) c.fail('expected endfacet before the next facet');
        inFacet = true;
        corners = 0;
        facetLine = c.line;
      } else if (key === 'vertex') {
        if (!inFacet) c.fail('expected a vertex inside facet ... endfacet');
        if (++corners > 3) c.fail('expected 3 vertices per facet, got a 4th');
        for (let a = 1; a <= 3; a++) {
          const v = Number(tok[a]);
          if (tok[a] === undefined || !Number.isFinite(v)) c.fail(`expected "vertex x y z" (finite numbers), got ${JSON.stringify(line.slice(0, 60))}`);
          xyz.push(v);
        }
      } else if (key === 'endfacet') {
        if (corners !== 3) throw new MeshFileError(file, facetLine, `expected 3 vertices in this facet, got ${corners}`);
        inFacet = false;
      } else if (key === 'endsolid') {
        break;
      } else if (key !== 'outer' && key !== 'endloop' && key !== 'solid') {
        c.fail(`expected facet, vertex or endfacet, got ${JSON.stringify(line.slice(0, 60))}`);
      }
      c.endLine();
    }
    if (inFacet) c.fail('expected endfacet, got end of file');
  }
  // STL repeats each corner per triangle: weld equal positions so the triangles share their edges.
  const index = new Map<string, number>();
  const positions: number[] = [];
  const triangles = new Uint32Array(xyz.length / 3);
  for (let i = 0; i < triangles.length; i++) {
    const key = `${xyz[3 * i]},${xyz[3 * i + 1]},${xyz[3 * i + 2]}`;
    let k = index.get(key);
    if (k === undefined) {
      k = positions.length / 3;
      index.set(key, k);
      positions.push(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
    }
    triangles[i] = k;
  }
  return { positions: Float64Array.from(positions), triangles };
}

/**
 * The triangle surface of a mesh obstacle: .obj or .stl (optionally .gz). Vertices no triangle uses are dropped; a
 * surface without triangles or with a triangle of zero area (two corners alike, or in a line) is refused.
 */
export function readSurfaceMesh(path: string): TriSurface {
  const format = /\.(obj|stl)(\.gz)?$/i.exec(path)?.[1].toLowerCase();
  if (!format) throw new MeshFileError(path, 0, `expected a triangle surface: ${SURFACE_MESH_FORMATS.join(' or ')} (by the file's extension)`);
  const bytes = readFileBytes(path);
  const surface = format === 'obj' ? parseObj(bytes.toString('utf8'), path) : parseStl(bytes, path);
  const nt = surface.triangles.length / 3;
  if (nt === 0) throw new MeshFileError(path, 0, 'has no triangles (an OBJ needs f lines, an STL facets)');
  const p = surface.positions;
  const tri = surface.triangles;
  for (let t = 0; t < nt; t++) {
    const [a, b, c] = [3 * tri[3 * t], 3 * tri[3 * t + 1], 3 * tri[3 * t + 2]];
    const u = [p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]];
    const v = [p[c] - p[a], p[c + 1] - p[a + 1], p[c + 2] - p[a + 2]];
    const area2 = Math.hypot(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]);
    if (!(area2 > 0)) throw new MeshFileError(path, 0, `triangle ${t + 1} of ${nt} (vertices ${a / 3 + 1}, ${b / 3 + 1}, ${c / 3 + 1}) has zero area`);
  }
  // Keep only the vertices of triangles, in file order.
  const slot = new Int32Array(p.length / 3).fill(-1);
  for (const i of tri) slot[i] = 0;
  let n = 0;
  for (let i = 0; i < slot.length; i++) if (slot[i] === 0) slot[i] = n++;
  const positions = new Float64Array(3 * n);
  for (let i = 0; i < slot.length; i++) if (slot[i] >= 0) positions.set(p.subarray(3 * i, 3 * i + 3), 3 * slot[i]);
  return { positions, triangles: Uint32Array.from(tri, (i) => slot[i]) };
}
