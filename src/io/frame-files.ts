/**
 * The frame files of a run (--frames obj|vtu|both):
 *
 *   frames/frame_00000.obj  the drawn surface: a `# ... t = <time>` comment, the vertices, then one `o <name>` group
 *                           of faces per body and per mesh obstacle (what `vivace view` plays)
 *   frames/frame_00000.vtu  a VTK XML UnstructuredGrid (ASCII) of every node: tets as VTK_TETRA, triangle bodies and
 *                           mesh obstacles as VTK_TRIANGLE, nodes of no cell (particles) as VTK_VERTEX; point data
 *                           velocity and displacement, cell data elastic_energy_density (psi, J/m^3) and body
 *   frames.pvd              a ParaView collection of the VTU frames with each frame's time (rewritten with every frame)
 *
 * Each file is written atomically. The cell layout is fixed for a run, so its text is made once.
 */

import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ElasticTets } from '../energies/elastic-tets.js';
import { vertexMapOf, type Model } from '../model/model.js';
import { gatherVertices, isIdentityMap, vertexPositions } from '../model/vertex-map.js';
import type { FrameFormat } from '../scene/run-options.js';
import { frameGeometry, type FrameGroup } from '../sim/frame-geometry.js';
import { pushObjFaces, pushObjVertices, writeFileAtomic } from './mesh-files.js';

export const PVD_FILE = 'frames.pvd';

/** VTK cell type ids (vtkCellType.h). */
export const VTK_CELL = { vertex: 1, triangle: 5, tetra: 10 } as const;

/** The extensions of the frame files a format writes. */
export function frameExtensions(format: FrameFormat): ('obj' | 'vtu')[] {
  return format === 'both' ? ['obj', 'vtu'] : [format];
}

/** frame_00000.obj, frame_00001.vtu, ... */
export function frameFileName(index: number, ext: 'obj' | 'vtu' = 'obj'): string {
  return `frame_${String(index).padStart(5, '0')}.${ext}`;
}

/** A body or obstacle name as one line of text (an OBJ `o` line, an XML attribute). */
function oneLine(name: string): string {
  return name.replace(/[\s\u0000-\u001f]+/g, ' ').trim() || 'unnamed';
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A float for a VTU file: 9 significant digits; VTK's ASCII reader takes no NaN or Infinity, so those become 0. */
function vtuNumber(x: number): string {
  return Number.isFinite(x) ? x.toPrecision(9) : '0';
}

/** An OBJ frame: time comment, vertices (7 significant digits), one `o` group of 1-based faces per group. */
export function formatObjFrame(positions: Float64Array, triangles: Uint32Array, groups: readonly FrameGroup[], index: number, t: number): string {
  const lines: string[] = [`# vivace frame ${index} t = ${t}`];
  pushObjVertices(lines, positions, 7);
  if (groups.length === 0) pushObjFaces(lines, triangles, 0, triangles.length / 3);
  for (const g of groups) {
    lines.push(`o ${oneLine(g.name)}`);
    pushObjFaces(lines, triangles, g.firstTriangle, g.firstTriangle + g.triangleCount);
  }
  lines.push('');
  return lines.join('\n');
}

/** The cells of a model's VTU frames: fixed for a run. */
export interface VtuCells {
  /** Number of cells. */
  count: number;
  /** The <Cells> element, formatted once. */
  cellsXml: string;
  /** The `body` cell data: body index, mesh obstacles numbered after the bodies, -1 for particles. */
  bodyXml: string;
  /** Where each tet body's energy densities go: its ElasticTets term and its first cell. */
  elastic: { term: ElasticTets; firstCell: number }[];
}

/** Cells in order: each body's tets (or, without tets, its surface triangles), the obstacles' triangles, then lone nodes. */
export function vtuCells(model: Model): VtuCells {
  const connectivity: number[] = [];
  const offsets: number[] = [];
  const types: number[] = [];
  const body: number[] = [];
  const nVertices = vertexMapOf(model).nVertices;
  const inCell = new Uint8Array(nVertices);
  const elastic: VtuCells['elastic'] = [];
  const add = (nodes: ArrayLike<number>, size: number, type: number, owner: number) => {
    for (let c = 0; c < nodes.length; c += size) {
      for (let k = 0; k < size; k++) {
        connectivity.push(nodes[c + k]);
        inCell[nodes[c + k]] = 1;
      }
      offsets.push(connectivity.length);
      types.push(type);
      body.push(owner);
    }
  };
  model.bodies.forEach((b, bi) => {
    if (b.tets.length > 0) {
      const term = model.terms.find((t): t is ElasticTets => t instanceof ElasticTets && t.tets === b.tets);
      if (term) elastic.push({ term, firstCell: types.length });
      add(b.tets, 4, VTK_CELL.tetra, bi);
    } else add(b.surface, 3, VTK_CELL.triangle, bi);
  });
  (model.obstacles ?? []).forEach((o, oi) => add(o.triangles, 3, VTK_CELL.triangle, model.bodies.length + oi));
  for (let i = 0; i < nVertices; i++) if (!inCell[i]) add([i], 1, VTK_CELL.vertex, -1);
  const cellsXml = [
    '      <Cells>',
    `        <DataArray type="Int64" Name="connectivity" format="ascii">${connectivity.join(' ')}</DataArray>`,
    `        <DataArray type="Int64" Name="offsets" format="ascii">${offsets.join(' ')}</DataArray>`,
    `        <DataArray type="UInt8" Name="types" format="ascii">${types.join(' ')}</DataArray>`,
    '      </Cells>',
  ].join('\n');
  const bodyXml = `        <DataArray type="Int32" Name="body" format="ascii">${body.join(' ')}</DataArray>`;
  return { count: types.length, cellsXml, bodyXml, elastic };
}

function vectorArray(name: string, values: ArrayLike<number>, minus?: Float64Array): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = vtuNumber(minus ? values[i] - minus[i] : values[i]);
  return `        <DataArray type="Float64" Name="${name}" NumberOfComponents="3" format="ascii">${parts.join(' ')}</DataArray>`;
}

/**
 * One VTU frame of a model at positions x and velocities v (time t in the TimeValue field). Its points are the
 * model's vertices (model/vertex-map.ts: the nodes themselves unless there are affine bodies).
 */
export function formatVtu(model: Model, cells: VtuCells, x: Float64Array, v: Float64Array, t: number, density: Float64Array): string {
  density.fill(0);
  for (const { term, firstCell } of cells.elastic) term.energyDensities(x, density.subarray(firstCell, firstCell + term.tetCount));
  const map = vertexMapOf(model);
  let rest = model.rest;
  if (!isIdentityMap(map)) {
    const mapped = (q: Float64Array) => {
      const out = new Float64Array(3 * map.nVertices);
      vertexPositions(map, q, out);
      return out;
    };
    [x, v, rest] = [mapped(x), mapped(v), mapped(model.rest)];
  }
  const psi = new Array<string>(cells.count);
  for (let c = 0; c < cells.count; c++) psi[c] = vtuNumber(density[c]);
  return [
    '<?xml version="1.0"?>',
    '<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian">',
    '  <UnstructuredGrid>',
    '    <FieldData>',
    `      <DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" format="ascii">${vtuNumber(t)}</DataArray>`,
    '    </FieldData>',
    `    <Piece NumberOfPoints="${map.nVertices}" NumberOfCells="${cells.count}">`,
    '      <Points>',
    vectorArray('Points', x).replace('Name="Points" ', ''),
    '      </Points>',
    cells.cellsXml,
    '      <PointData Vectors="velocity">',
    vectorArray('velocity', v),
    vectorArray('displacement', x, rest),
    '      </PointData>',
    '      <CellData Scalars="elastic_energy_density">',
    `        <DataArray type="Float64" Name="elastic_energy_density" format="ascii">${psi.join(' ')}</DataArray>`,
    cells.bodyXml,
    '      </CellData>',
    '    </Piece>',
    '  </UnstructuredGrid>',
    '</VTKFile>',
    '',
  ].join('\n');
}

/** A ParaView collection: one DataSet per frame file with its time. */
export function formatPvd(entries: readonly { t: number; file: string }[]): string {
  return [
    '<?xml version="1.0"?>',
    '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
    '  <Collection>',
    ...entries.map((e) => `    <DataSet timestep="${e.t}" group="" part="0" file="${xmlEscape(e.file)}"/>`),
    '  </Collection>',
    '</VTKFile>',
    '',
  ].join('\n');
}

/** Writes a run's frames in the chosen format(s) into `framesDir` (and the .pvd beside it, in `runDir`). */
export class FrameFiles {
  private readonly exts: ('obj' | 'vtu')[];
  // OBJ: only the surface nodes and the free particles (interior tet nodes are not drawn).
  private readonly objNodes: Uint32Array;
  private readonly objTriangles: Uint32Array;
  private readonly objGroups: FrameGroup[];
  private readonly objPositions: Float64Array;
  private vtu?: { cells: VtuCells; density: Float64Array };
  private readonly pvdEntries: { t: number; file: string }[] = [];
  readonly pvdPath: string | null;

  constructor(
    private readonly model: Model,
    readonly format: FrameFormat,
    private readonly framesDir: string,
    runDir: string,
    private readonly framesDirName: string,
  ) {
    this.exts = frameExtensions(format);
    ({ nodes: this.objNodes, triangles: this.objTriangles, groups: this.objGroups } = frameGeometry(model));
    this.objPositions = new Float64Array(3 * this.objNodes.length);
    this.pvdPath = this.exts.includes('vtu') ? join(runDir, PVD_FILE) : null;
  }

  /** Writes frame `index`; a failure throws with the path of the file in `file` of the error's cause chain. */
  write(index: number, t: number, x: Float64Array, v: Float64Array): void {
    for (const ext of this.exts) {
      const file = join(this.framesDir, frameFileName(index, ext));
      try {
        writeFileAtomic(file, ext === 'obj' ? this.objText(index, t, x) : this.vtuText(t, x, v));
      } catch (err) {
        throw new FrameWriteError(file, err);
      }
    }
    if (this.pvdPath) {
      this.pvdEntries.push({ t, file: `${this.framesDirName}/${frameFileName(index, 'vtu')}` });
      try {
        writeFileAtomic(this.pvdPath, formatPvd(this.pvdEntries));
      } catch (err) {
        throw new FrameWriteError(this.pvdPath, err);
      }
    }
  }

  /**
   * Resuming: deletes the frames after `lastFrame`, keeps the rest (the frame's time is index * frameStep) and
   * rewrites the .pvd for them. Returns how many frames are kept.
   */
  keepUpTo(lastFrame: number, frameStep: number): number {
    let kept = 0;
    for (const name of readdirSync(this.framesDir)) {
      const m = /^frame_(\d+)\.(obj|vtu)$/.exec(name);
      if (!m) continue;
      const index = Number(m[1]);
      if (index > lastFrame) rmSync(join(this.framesDir, name));
      else if (m[2] === this.exts[0]) kept++;
    }
    if (this.pvdPath) {
      this.pvdEntries.length = 0;
      for (let i = 0; i < kept; i++) this.pvdEntries.push({ t: i * frameStep, file: `${this.framesDirName}/${frameFileName(i, 'vtu')}` });
      writeFileAtomic(this.pvdPath, formatPvd(this.pvdEntries));
    }
    return kept;
  }

  private objText(index: number, t: number, x: Float64Array): string {
    const p = this.objPositions;
    gatherVertices(vertexMapOf(this.model), x, this.objNodes, p);
    return formatObjFrame(p, this.objTriangles, this.objGroups, index, t);
  }

  private vtuText(t: number, x: Float64Array, v: Float64Array): string {
    if (!this.vtu) {
      const cells = vtuCells(this.model);
      this.vtu = { cells, density: new Float64Array(cells.count) };
    }
    return formatVtu(this.model, this.vtu.cells, x, v, t, this.vtu.density);
  }
}

/** A frame file that could not be written (RunOutput turns it into its OutputWriteError). */
export class FrameWriteError extends Error {
  override name = 'FrameWriteError';
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(`cannot write ${file}`);
  }
}
