/**
 * Tetrahedral and triangle meshes as flat typed arrays, plus the few measures every other module needs
 * (signed tet volume, orientation repair, summary statistics).
 *
 * Convention: a tet (x0, x1, x2, x3) is positively oriented when det[x1-x0, x2-x0, x3-x0] > 0, i.e. x3 lies on the
 * side of triangle (x0, x1, x2) that its right-hand normal points to. Its outward faces are then
 * (0,2,1), (0,1,3), (0,3,2), (1,2,3).
 */

export interface TetMesh {
  /** 3 coordinates per node. */
  positions: Float64Array;
  /** 4 node indices per tet, positively oriented. */
  tets: Uint32Array;
}

export interface TriSurface {
  /** 3 coordinates per node. */
  positions: Float64Array;
  /** 3 node indices per triangle, counter-clockwise seen from outside. */
  triangles: Uint32Array;
}

export type Vec3 = [number, number, number];

export interface MeshStats {
  nodes: number;
  tets: number;
  /** Smallest and largest signed volume (a non-positive minVolume means an inverted or flat tet). */
  minVolume: number;
  maxVolume: number;
  totalVolume: number;
  /** Tets whose signed volume is <= 0. */
  nonPositive: number;
  bboxMin: Vec3;
  bboxMax: Vec3;
}

/** Six times the signed volume of the tet on nodes (n0, n1, n2, n3): det[x1-x0, x2-x0, x3-x0]. */
export function signedVolume6(positions: Float64Array, n0: number, n1: number, n2: number, n3: number): number {
  const a = 3 * n0;
  const b = 3 * n1;
  const c = 3 * n2;
  const d = 3 * n3;
  const x0 = positions[a];
  const y0 = positions[a + 1];
  const z0 = positions[a + 2];
  const ux = positions[b] - x0;
  const uy = positions[b + 1] - y0;
  const uz = positions[b + 2] - z0;
  const vx = positions[c] - x0;
  const vy = positions[c + 1] - y0;
  const vz = positions[c + 2] - z0;
  const wx = positions[d] - x0;
  const wy = positions[d + 1] - y0;
  const wz = positions[d + 2] - z0;
  return ux * (vy * wz - vz * wy) - uy * (vx * wz - vz * wx) + uz * (vx * wy - vy * wx);
}

/** Six times the signed volume of tet t: det[x1-x0, x2-x0, x3-x0]. */
export function tetVolume6(positions: Float64Array, tets: Uint32Array, t: number): number {
  return signedVolume6(positions, tets[4 * t], tets[4 * t + 1], tets[4 * t + 2], tets[4 * t + 3]);
}

/** Signed volume of tet t (positive for the project's orientation). Works on deformed positions too. */
export function tetVolume(positions: Float64Array, tets: Uint32Array, t: number): number {
  return tetVolume6(positions, tets, t) / 6;
}

/**
 * Make every tet positively oriented by swapping its last two nodes where the volume is negative. Works in place
 * and returns how many tets were flipped. Flat tets (volume exactly 0) are left alone: no ordering fixes them.
 */
export function orientTets(mesh: TetMesh): number {
  const { positions, tets } = mesh;
  const n = tets.length / 4;
  let flipped = 0;
  for (let t = 0; t < n; t++) {
    if (tetVolume6(positions, tets, t) < 0) {
      const tmp = tets[4 * t + 2];
      tets[4 * t + 2] = tets[4 * t + 3];
      tets[4 * t + 3] = tmp;
      flipped++;
    }
  }
  return flipped;
}

/** Axis-aligned bounding box of a flat xyz array. */
export function boundingBox(positions: Float64Array): { min: Vec3; max: Vec3 } {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i += 3) {
    for (let k = 0; k < 3; k++) {
      const v = positions[i + k];
      if (v < min[k]) min[k] = v;
      if (v > max[k]) max[k] = v;
    }
  }
  return { min, max };
}

export function meshStats(mesh: TetMesh): MeshStats {
  const { positions, tets } = mesh;
  const nt = tets.length / 4;
  let minVolume = Infinity;
  let maxVolume = -Infinity;
  let totalVolume = 0;
  let nonPositive = 0;
  for (let t = 0; t < nt; t++) {
    const v = tetVolume6(positions, tets, t) / 6;
    if (v < minVolume) minVolume = v;
    if (v > maxVolume) maxVolume = v;
    if (v <= 0) nonPositive++;
    totalVolume += v;
  }
  const { min, max } = boundingBox(positions);
  return {
    nodes: positions.length / 3,
    tets: nt,
    minVolume: nt > 0 ? minVolume : 0,
    maxVolume: nt > 0 ? maxVolume : 0,
    totalVolume,
    nonPositive,
    bboxMin: min,
    bboxMax: max,
  };
}

/**
 * Throw if the arrays do not describe a tet mesh: lengths not multiples of 3/4, non-finite coordinates, or node
 * indices out of range. Readers call it so that a bad file fails at load time rather than deep in a solver.
 */
export function checkTetMesh(mesh: TetMesh, what = 'tet mesh'): void {
  const { positions, tets } = mesh;
  if (positions.length % 3 !== 0) throw new Error(`${what}: positions length ${positions.length} is not a multiple of 3`);
  if (tets.length % 4 !== 0) throw new Error(`${what}: tets length ${tets.length} is not a multiple of 4`);
  for (let i = 0; i < positions.length; i++) {
    if (!Number.isFinite(positions[i])) throw new Error(`${what}: coordinate ${i} of node ${Math.floor(i / 3)} is not finite`);
  }
  const n = positions.length / 3;
  for (let i = 0; i < tets.length; i++) {
    if (tets[i] >= n) throw new Error(`${what}: tet ${Math.floor(i / 4)} refers to node ${tets[i]}, but there are ${n} nodes`);
  }
}

/** Apply x -> scale * x + offset to every node, in place (used to put imported meshes in SI units). */
export function transformPositions(positions: Float64Array, scale: number, offset: Vec3 = [0, 0, 0]): void {
  for (let i = 0; i < positions.length; i += 3) {
    positions[i] = scale * positions[i] + offset[0];
    positions[i + 1] = scale * positions[i + 1] + offset[1];
    positions[i + 2] = scale * positions[i + 2] + offset[2];
  }
}

/** Number of tets whose signed volume at `positions` is not positive (inverted or flat): an invariant check. */
export function countInvertedTets(positions: Float64Array, tets: Uint32Array): number {
  let count = 0;
  for (let t = 0; t < tets.length / 4; t++) if (!(tetVolume6(positions, tets, t) > 0)) count++;
  return count;
}

/** Spreads the low 10 bits of v to every third bit (bit b goes to bit 3b), for Morton codes. */
function spreadBits10(v: number): number {
  let r = 0;
  for (let b = 0; b < 10; b++) r |= ((v >> b) & 1) << (3 * b);
  return r;
}

/**
 * The tets reordered along a Morton (Z-order) curve through their centroids, node numbering unchanged. Tets that
 * follow each other in the list then share nodes, so the element loops (gather positions, scatter Hessian blocks)
 * hit memory they touched a moment ago; meshes from files often list tets in no spatial order. Returns a new array.
 */
export function sortTetsSpatially(positions: Float64Array, tets: Uint32Array): Uint32Array {
  const n = tets.length / 4;
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i++) {
    lo[i % 3] = Math.min(lo[i % 3], positions[i]);
    hi[i % 3] = Math.max(hi[i % 3], positions[i]);
  }
  const code = new Float64Array(n);
  for (let e = 0; e < n; e++) {
    let key = 0;
    for (let d = 0; d < 3; d++) {
      let c = 0;
      for (let a = 0; a < 4; a++) c += positions[3 * tets[4 * e + a] + d];
      const cell = Math.min(1023, Math.max(0, Math.floor((1024 * (c / 4 - lo[d])) / (hi[d] - lo[d] || 1))));
      key += spreadBits10(cell) * 2 ** (2 - d);
    }
    code[e] = key;
  }
  const order = Array.from({ length: n }, (_, e) => e).sort((a, b) => code[a] - code[b] || a - b);
  const out = new Uint32Array(tets.length);
  order.forEach((e, r) => out.set(tets.subarray(4 * e, 4 * e + 4), 4 * r));
  return out;
}
