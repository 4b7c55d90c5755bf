/**
 * Procedural meshes: structured box grids of tets and icosphere surfaces.
 *
 * Box grids split every hexahedral cell into tets so that the triangulations of shared cell faces agree (a
 * conforming mesh): either 6 tets along the main diagonal (Kuhn/Freudenthal) or 5 tets whose pattern alternates
 * with the cell parity.
 */

import { type TetMesh, type TriSurface, type Vec3, orientTets } from './tet-mesh.js';

export { type TetMesh, type TriSurface, type MeshStats, meshStats, orientTets, tetVolume, tetVolume6 } from './tet-mesh.js';

export interface BoxGridOptions {
  /** Corner with the smallest coordinates; default (0, 0, 0). */
  origin?: Vec3;
  /** 6 (Kuhn, default) or 5 (alternating) tets per cell. */
  tetsPerCell?: 5 | 6;
}

/** Node index of grid point (i, j, k) for a grid of nx x ny x nz cells. */
export function boxGridNode(i: number, j: number, k: number, cells: Vec3): number {
  return i + (cells[0] + 1) * (j + (cells[1] + 1) * k);
}

// Local corner c = a + 2b + 4c' of a cell, where (a, b, c') in {0,1}^3 are the x, y, z offsets.
// Kuhn: one tet per permutation of the axes, walking from corner 0 to corner 7 one axis at a time. Every cell face
// is then split along the diagonal through its lowest corner, the same from both sides.
const KUHN_TETS = (() => {
  const perms: Vec3[] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
  const out: number[] = [];
  for (const p of perms) {
    const c1 = 1 << p[0];
    const c2 = c1 | (1 << p[1]);
    // det[e_p0, e_p0 + e_p1, 1] equals the sign of the permutation: swap two nodes on odd ones.
    const odd = (p[0] + 1) % 3 !== p[1];
    if (odd) out.push(0, c2, c1, 7);
    else out.push(0, c1, c2, 7);
  }
  return Uint8Array.from(out);
})();

// 5-tet split: the four corners of one parity form a central tet; each corner of the other parity cuts off a
// corner tet with its three axis neighbours. Which parity is central alternates between cells (by i+j+k), so each
// face diagonal joins the two nodes of even global parity and neighbouring cells agree.
const FIVE_EVEN = Uint8Array.from([
  // central tet on corners 0, 3, 5, 6 (local parity even)
  0, 3, 5, 6,
  // corner tets at 1, 2, 4, 7
  1, 0, 3, 5,
  2, 0, 3, 6,
  4, 0, 5, 6,
  7, 3, 5, 6,
]);
const FIVE_ODD = Uint8Array.from([
  1, 2, 4, 7,
  0, 1, 2, 4,
  3, 1, 2, 7,
  5, 1, 4, 7,
  6, 2, 4, 7,
]);

/**
 * Structured tet mesh of a box: size (metres) split into cells[0] x cells[1] x cells[2] hexahedra, each split into 5
 * or 6 positively oriented tets. Node (i, j, k) has index i + (nx+1)(j + (ny+1)k) and position origin + (i dx, j dy,
 * k dz).
 */
export function boxGrid(size: Vec3, cells: Vec3, opts: BoxGridOptions = {}): TetMesh {
  const [nx, ny, nz] = cells;
  for (const n of cells) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`boxGrid: cell counts must be positive integers, got [${cells.join(', ')}]`);
  }
  for (const s of size) {
    if (!(s > 0)) throw new Error(`boxGrid: sizes must be positive, got [${size.join(', ')}]`);
  }
  const per = opts.tetsPerCell ?? 6;
  if (per !== 5 && per !== 6) throw new Error(`boxGrid: tetsPerCell must be 5 or 6, got ${String(per)}`);
  const origin = opts.origin ?? [0, 0, 0];
  const dx = size[0] / nx;
  const dy = size[1] / ny;
  const dz = size[2] / nz;

  const nodes = (nx + 1) * (ny + 1) * (nz + 1);
  const positions = new Float64Array(3 * nodes);
  for (let k = 0; k <= nz; k++) {
    for (let j = 0; j <= ny; j++) {
      for (let i = 0; i <= nx; i++) {
        const n = 3 * (i + (nx + 1) * (j + (ny + 1) * k));
        // Exact end coordinates (i === nx) so that the box volume is not off by rounding.
        positions[n] = origin[0] + (i === nx ? size[0] : i * dx);
        positions[n + 1] = origin[1] + (j === ny ? size[1] : j * dy);
        positions[n + 2] = origin[2] + (k === nz ? size[2] : k * dz);
      }
    }
  }

  const tets = new Uint32Array(4 * per * nx * ny * nz);
  const corner = new Uint32Array(8);
  const sx = 1;
  const sy = nx + 1;
  const sz = (nx + 1) * (ny + 1);
  let w = 0;
  for (let k = 0; k < nz; k++) {
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        const base = i + sy * j + sz * k;
        for (let c = 0; c < 8; c++) corner[c] = base + (c & 1 ? sx : 0) + (c & 2 ? sy : 0) + (c & 4 ? sz : 0);
        const table = per === 6 ? KUHN_TETS : (i + j + k) % 2 === 0 ? FIVE_EVEN : FIVE_ODD;
        for (let q = 0; q < table.length; q++) tets[w++] = corner[table[q]];
      }
    }
  }
  // The 5-tet tables list nodes without caring for orientation; fix the sign from the exact grid geometry.
  const mesh = { positions, tets };
  if (per === 5) orientTets(mesh);
  return mesh;
}

/**
 * Icosphere: an icosahedron whose triangles are split into 4 `subdivisions` times, with new nodes pushed onto the
 * sphere. 10 * 4^s + 2 nodes, 20 * 4^s triangles, outward counter-clockwise winding, centred at `center`.
 */
export function icosphere(radius: number, subdivisions: number, center: Vec3 = [0, 0, 0]): TriSurface {
  if (!Number.isInteger(subdivisions) || subdivisions < 0) throw new Error(`icosphere: subdivisions must be a non-negative integer, got ${subdivisions}`);
  const g = (1 + Math.sqrt(5)) / 2;
  const pts: number[] = [
    -1, g, 0, 1, g, 0, -1, -g, 0, 1, -g, 0,
    0, -1, g, 0, 1, g, 0, -1, -g, 0, 1, -g,
    g, 0, -1, g, 0, 1, -g, 0, -1, -g, 0, 1,
  ];
  let tris: number[] = [
    0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11,
    1, 5, 9, 5, 11, 4, 11, 10, 2, 10, 7, 6, 7, 1, 8,
    3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9,
    4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1,
  ];
  const normalizeLast = (): void => {
    const n = pts.length - 3;
    const len = Math.hypot(pts[n], pts[n + 1], pts[n + 2]);
    pts[n] /= len;
    pts[n + 1] /= len;
    pts[n + 2] /= len;
  };
  for (let i = 0; i < 12; i++) {
    const len = Math.hypot(pts[3 * i], pts[3 * i + 1], pts[3 * i + 2]);
    for (let k = 0; k < 3; k++) pts[3 * i + k] /= len;
  }
  for (let s = 0; s < subdivisions; s++) {
    const midpoint = new Map<number, number>();
    const nodeCount = () => pts.length / 3;
    // Edge key from the two node ids; node counts stay far below 2^26, so the product is exact.
    const mid = (a: number, b: number): number => {
      const key = a < b ? a * 67108864 + b : b * 67108864 + a;
      let m = midpoint.get(key);
      if (m === undefined) {
        m = nodeCount();
        pts.push((pts[3 * a] + pts[3 * b]) / 2, (pts[3 * a + 1] + pts[3 * b + 1]) / 2, (pts[3 * a + 2] + pts[3 * b + 2]) / 2);
        normalizeLast();
        midpoint.set(key, m);
      }
      return m;
    };
    const next: number[] = [];
    for (let t = 0; t < tris.length; t += 3) {
      const a = tris[t];
      const b = tris[t + 1];
      const c = tris[t + 2];
      const ab = mid(a, b);
      const bc = mid(b, c);
      const ca = mid(c, a);
      next.push(a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca);
    }
    tris = next;
  }
  const positions = new Float64Array(pts.length);
  for (let i = 0; i < pts.length; i += 3) {
    positions[i] = center[0] + radius * pts[i];
    positions[i + 1] = center[1] + radius * pts[i + 1];
    positions[i + 2] = center[2] + radius * pts[i + 2];
  }
  return { positions, triangles: Uint32Array.from(tris) };
}

/**
 * An open staircase surface (treads and risers, no underside): `steps` steps going down along +x, the top of step i
 * at height (steps - i) * stepHeight above origin.y, spanning z in [origin.z, origin.z + width]. Triangles face up
 * (treads) and toward +x (risers), the sides a falling body meets.
 */
export function stairsSurface(
  steps: number,
  stepHeight: number,
  stepDepth: number,
  width: number,
  origin: readonly [number, number, number],
): { positions: Float64Array; triangles: Uint32Array } {
  const positions: number[] = [];
  const triangles: number[] = [];
  const [ox, oy, oz] = origin;
  // The profile polyline in (x, y): for each step its tread's back and front corner, then down the riser.
  const profile: [number, number][] = [];
  for (let i = 0; i < steps; i++) {
    const top = oy + (steps - i) * stepHeight;
    profile.push([ox + i * stepDepth, top], [ox + (i + 1) * stepDepth, top]);
  }
  profile.push([ox + steps * stepDepth, oy]);
  for (const [x, y] of profile) positions.push(x, y, oz, x, y, oz + width);
  for (let k = 0; k + 1 < profile.length; k++) {
    const a = 2 * k, b = 2 * k + 1, c = 2 * k + 2, d = 2 * k + 3;
    // Quad (a, c, d, b) wound so that treads face +y and risers +x.
    triangles.push(a, b, c, c, b, d);
  }
  return { positions: Float64Array.from(positions), triangles: Uint32Array.from(triangles) };
}

/**
 * A torus surface about the y axis (a ring lying in the xz plane, centred at the origin): major radius R (to the
 * tube's centre line), minor radius r (the tube), `segments` around the ring and `sides` around the tube.
 * segments * sides nodes, 2 * segments * sides triangles, outward counter-clockwise winding. A closed surface
 * without tets: the links of a chain net as affine bodies.
 */
export function torusSurface(R: number, r: number, segments: number, sides: number): TriSurface {
  if (!(r > 0 && R > r)) throw new Error(`torus: needs 0 < minorRadius < majorRadius, got ${r} and ${R}`);
  if (!Number.isInteger(segments) || segments < 3 || !Number.isInteger(sides) || sides < 3) throw new Error('torus: segments and sides must be whole numbers >= 3');
  const positions = new Float64Array(3 * segments * sides);
  const triangles = new Uint32Array(6 * segments * sides);
  const id = (i: number, j: number) => (i % segments) * sides + (j % sides);
  for (let i = 0; i < segments; i++) {
    const u = (2 * Math.PI * i) / segments;
    for (let j = 0; j < sides; j++) {
      const v = (2 * Math.PI * j) / sides;
      const rho = R + r * Math.cos(v);
      const o = 3 * id(i, j);
      positions[o] = rho * Math.cos(u);
      positions[o + 1] = r * Math.sin(v);
      positions[o + 2] = rho * Math.sin(u);
      const t = 6 * id(i, j);
      triangles.set([id(i, j), id(i, j + 1), id(i + 1, j), id(i + 1, j), id(i, j + 1), id(i + 1, j + 1)], t);
    }
  }
  return { positions, triangles };
}
