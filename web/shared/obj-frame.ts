/**
 * Reads the OBJ frames a run writes (frames/frame_NNNNN.obj): vertices, triangles, optional `o` groups (one per
 * body or obstacle) and an optional time comment (`# t = 0.25`). Only `v`, `f`, `o`/`g` and comments are read;
 * faces may use the `v/vt/vn` forms. Pure: also used by the Node tests.
 */

export interface ObjGroup {
  name: string;
  /** First triangle of the group and how many follow it. */
  firstTriangle: number;
  triangleCount: number;
}

export interface ObjFrame {
  positions: Float32Array;
  /** 0-based vertex indices, three per triangle. */
  triangles: Uint32Array;
  groups: ObjGroup[];
  /** Simulated time from a `# t = ...` comment, when the frame carries one. */
  t?: number;
}

const TIME_COMMENT = /^#.*\bt\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/;

/** Parses a whole frame (geometry and topology). Throws naming the line on malformed input. */
export function parseObjFrame(text: string, source = 'frame'): ObjFrame {
  const positions: number[] = [];
  const triangles: number[] = [];
  const groups: ObjGroup[] = [];
  let t: number | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const c = line.charCodeAt(0);
    if (c === 35 /* # */) {
      const m = t === undefined ? TIME_COMMENT.exec(line) : null;
      if (m) t = Number(m[1]);
      continue;
    }
    const parts = line.split(/\s+/);
    switch (parts[0]) {
      case 'v':
        if (parts.length < 4) throw new Error(`${source}: line ${i + 1}: a vertex needs x y z`);
        positions.push(Number(parts[1]), Number(parts[2]), Number(parts[3]));
        break;
      case 'f': {
        const ids = parts.slice(1).map((p) => parseInt(p, 10));
        if (ids.length < 3 || ids.some((k) => !Number.isInteger(k) || k === 0)) throw new Error(`${source}: line ${i + 1}: a face needs 3 or more vertex indices`);
        const nv = positions.length / 3;
        const idx = ids.map((k) => (k < 0 ? nv + k : k - 1));
        for (let k = 1; k + 1 < idx.length; k++) triangles.push(idx[0], idx[k], idx[k + 1]);
        break;
      }
      case 'o':
      case 'g':
        closeGroup(groups, triangles.length / 3);
        groups.push({ name: parts.slice(1).join(' '), firstTriangle: triangles.length / 3, triangleCount: 0 });
        break;
      default:
        break; // vn, vt, s, usemtl ...: not needed to draw
    }
  }
  closeGroup(groups, triangles.length / 3);
  const nv = positions.length / 3;
  for (const k of triangles) if (k < 0 || k >= nv) throw new Error(`${source}: a face refers to vertex ${k + 1} of ${nv}`);
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles), groups: groups.filter((g) => g.triangleCount > 0 || g.name), t };
}

function closeGroup(groups: ObjGroup[], triangleEnd: number): void {
  const last = groups[groups.length - 1];
  if (last) last.triangleCount = triangleEnd - last.firstTriangle;
}

/**
 * Reads only the vertex positions of a frame whose topology is already known (every frame of a run has the same
 * surface): faster than a full parse (faces are skipped unread; with `o` groups they may come between vertices). Returns null when the vertex count differs.
 */
export function parseObjPositions(text: string, vertexCount: number): { positions: Float32Array; t?: number } | null {
  const out = new Float32Array(3 * vertexCount);
  let n = 0;
  let t: number | undefined;
  let start = 0;
  const len = text.length;
  while (start < len) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = len;
    const c0 = text.charCodeAt(start);
    if (c0 === 118 /* v */ && text.charCodeAt(start + 1) === 32) {
      if (n >= vertexCount) return null;
      const line = text.slice(start + 2, end).trim().split(/\s+/);
      out[3 * n] = Number(line[0]);
      out[3 * n + 1] = Number(line[1]);
      out[3 * n + 2] = Number(line[2]);
      n++;
    } else if (c0 === 35 /* # */ && t === undefined) {
      const m = TIME_COMMENT.exec(text.slice(start, end));
      if (m) t = Number(m[1]);
    }
    start = end + 1;
  }
  return n === vertexCount ? { positions: out, t } : null;
}
