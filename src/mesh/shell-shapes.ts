/**
 * Flat triangle meshes for thin shells, in the x-z plane (y = 0): a rectangle grid, a disc and a regular polygon.
 * Every generator lists its triangles with one orientation (normal +y), so neighbouring triangles agree on it.
 */
import type { TriSurface } from './tet-mesh.js';

/**
 * A rectangle of size[0] along x by size[1] along z with its corner at the origin, cells[0] x cells[1] cells, each
 * split in two right triangles. The diagonals are the same along each row of cells (along x) and alternate from row
 * to row: then bending along x folds only the hinges across x, as in a beam. (A checkerboard of diagonals lets the
 * dihedral-angle bending energy fold the diagonals in a zig-zag that is 21 % softer in bending, and one diagonal
 * everywhere couples bending to twist as much: a clamped strip of either sags about 26 % more than beam theory.)
 */
export function rectangleSheet(size: readonly [number, number], cells: readonly [number, number]): TriSurface {
  const [nx, nz] = cells;
  const positions = new Float64Array(3 * (nx + 1) * (nz + 1));
  const node = (i: number, k: number) => k * (nx + 1) + i;
  for (let k = 0; k <= nz; k++) {
    for (let i = 0; i <= nx; i++) {
      positions[3 * node(i, k)] = (size[0] * i) / nx;
      positions[3 * node(i, k) + 2] = (size[1] * k) / nz;
    }
  }
  const triangles = new Uint32Array(6 * nx * nz);
  let t = 0;
  for (let k = 0; k < nz; k++) {
    for (let i = 0; i < nx; i++) {
      const a = node(i, k), b = node(i + 1, k), c = node(i + 1, k + 1), d = node(i, k + 1);
      // Counter-clockwise seen from +y in (x, z) means the order a, d, c (x then z axes are clockwise from +y).
      if (k % 2 === 0) triangles.set([a, d, c, a, c, b], t);
      else triangles.set([a, d, b, b, d, c], t);
      t += 6;
    }
  }
  return { positions, triangles };
}

/**
 * A disc of the given radius centred at the origin: a centre node and `rings` concentric rings, ring k holding
 * 6 k evenly spaced nodes at radius k R / rings (1 + 3 rings (rings + 1) nodes, 6 rings^2 nearly equilateral
 * triangles).
 */
export function discSheet(radius: number, rings: number): TriSurface {
  return ringSheet(rings, 6, (k, j) => {
    const r = (radius * k) / rings;
    const phi = (2 * Math.PI * j) / (6 * k);
    return [r * Math.cos(phi), r * Math.sin(phi)];
  });
}

/**
 * A regular polygon with `sides` corners on the circle of the given radius (a corner on +x), filled by `rings`
 * nested copies of its outline: copy k has k nodes per side (sides * k in all), so its triangles are the same
 * shape across the polygon.
 */
export function polygonSheet(sides: number, radius: number, rings: number): TriSurface {
  return ringSheet(rings, sides, (k, j) => {
    const r = (radius * k) / rings;
    const side = Math.floor(j / k);
    const f = (j - side * k) / k;
    const a0 = (2 * Math.PI * side) / sides;
    const a1 = (2 * Math.PI * (side + 1)) / sides;
    return [r * ((1 - f) * Math.cos(a0) + f * Math.cos(a1)), r * ((1 - f) * Math.sin(a0) + f * Math.sin(a1))];
  });
}

/**
 * Centre node plus rings 1..rings of perRing * k nodes each (node j of ring k at place(k, j) = [x, z], in order of
 * angle), with the band between consecutive rings triangulated by walking both rings by angle.
 */
function ringSheet(rings: number, perRing: number, place: (k: number, j: number) => [number, number]): TriSurface {
  const nodeCount = 1 + (perRing * rings * (rings + 1)) / 2;
  const positions = new Float64Array(3 * nodeCount);
  const start = new Int32Array(rings + 2); // first node of ring k
  start[1] = 1;
  for (let k = 1; k <= rings; k++) {
    start[k + 1] = start[k] + perRing * k;
    for (let j = 0; j < perRing * k; j++) {
      const [x, z] = place(k, j);
      positions[3 * (start[k] + j)] = x;
      positions[3 * (start[k] + j) + 2] = z;
    }
  }
  const triangles = new Uint32Array(3 * perRing * rings * rings);
  let t = 0;
  for (let k = 1; k <= rings; k++) {
    const nIn = k === 1 ? 1 : perRing * (k - 1);
    const nOut = perRing * k;
    const inner = (i: number) => (k === 1 ? 0 : start[k - 1] + (i % nIn));
    const outer = (j: number) => start[k] + (j % nOut);
    let i = k === 1 ? nIn : 0; // the centre is a single node: only the outer ring advances
    let j = 0;
    while (i < nIn || j < nOut) {
      // Advance on the ring whose next node comes first by angle (fraction of the turn); ties go outward.
      const nextIn = (i + 1) / nIn;
      const nextOut = (j + 1) / nOut;
      if (j >= nOut || (i < nIn && nextIn < nextOut)) {
        triangles.set([inner(i), inner(i + 1), outer(j)], t);
        i++;
      } else {
        triangles.set([inner(i), outer(j + 1), outer(j)], t);
        j++;
      }
      t += 3;
    }
  }
  return { positions, triangles: t === triangles.length ? triangles : triangles.slice(0, t) };
}

/** Node and triangle counts of ringSheet(rings, perRing, ...). */
function ringSheetSize(perRing: number, rings: number): { nodes: number; triangles: number } {
  return { nodes: 1 + (perRing * rings * (rings + 1)) / 2, triangles: perRing * rings * rings };
}

/** A generated shell shape as the scene describes it (the 'file' shape is read by the caller). */
export type GeneratedShellShape =
  | { type: 'rectangle'; size: readonly [number, number]; cells: readonly [number, number] }
  | { type: 'disc'; radius: number; rings: number }
  | { type: 'polygon'; sides: number; radius: number; rings: number };

export function generateShellShape(shape: GeneratedShellShape): TriSurface {
  if (shape.type === 'rectangle') return rectangleSheet(shape.size, shape.cells);
  if (shape.type === 'disc') return discSheet(shape.radius, shape.rings);
  return polygonSheet(shape.sides, shape.radius, shape.rings);
}

/** Node and triangle counts of generateShellShape(shape), without building it (work estimates). */
export function shellShapeSize(shape: GeneratedShellShape): { nodes: number; triangles: number } {
  if (shape.type === 'rectangle') return { nodes: (shape.cells[0] + 1) * (shape.cells[1] + 1), triangles: 2 * shape.cells[0] * shape.cells[1] };
  return ringSheetSize(shape.type === 'disc' ? 6 : shape.sides, shape.rings);
}
