/**
 * Boundary surface of a tet mesh: the faces that belong to exactly one tet, wound so their normals point out of
 * the body, and the unique edges of a triangle set (contact needs both).
 *
 * Faces and edges are matched by bucketing them on their smallest node id (a CSR over nodes) and comparing the
 * remaining ids inside each small bucket: linear time, no string or BigInt keys.
 */

import { type TetMesh, signedVolume6, tetVolume6 } from './tet-mesh.js';

export interface ExtractedSurface {
  /** Boundary triangles, 3 global node ids each, outward (counter-clockwise seen from outside). */
  triangles: Uint32Array;
  /** Sorted ids of the nodes that lie on some boundary triangle. */
  surfaceNodes: Uint32Array;
}

// Outward faces of a positively oriented tet: face f is the one opposite local node f.
const FACE = Uint8Array.from([1, 2, 3, 0, 3, 2, 0, 1, 3, 0, 2, 1]);

/** Bucket `count` items by key: returns CSR offsets (length keys+1) and the items sorted by key. */
function bucketBy(keys: Uint32Array, keyCount: number): { start: Uint32Array; items: Uint32Array } {
  const start = new Uint32Array(keyCount + 1);
  for (let i = 0; i < keys.length; i++) start[keys[i] + 1]++;
  for (let k = 0; k < keyCount; k++) start[k + 1] += start[k];
  const fill = start.slice(0, keyCount);
  const items = new Uint32Array(keys.length);
  for (let i = 0; i < keys.length; i++) items[fill[keys[i]]++] = i;
  return { start, items };
}

export function extractSurface(mesh: TetMesh): ExtractedSurface {
  const { positions, tets } = mesh;
  const nodeCount = positions.length / 3;
  const nt = tets.length / 4;
  const nf = 4 * nt;
  // Sorted node triple of every tet face; face id = 4 * tet + local face.
  const lo = new Uint32Array(nf);
  const mid = new Uint32Array(nf);
  const hi = new Uint32Array(nf);
  for (let t = 0; t < nt; t++) {
    for (let f = 0; f < 4; f++) {
      let a = tets[4 * t + FACE[3 * f]];
      let b = tets[4 * t + FACE[3 * f + 1]];
      let c = tets[4 * t + FACE[3 * f + 2]];
      let s: number;
      if (a > b) { s = a; a = b; b = s; }
      if (b > c) { s = b; b = c; c = s; }
      if (a > b) { s = a; a = b; b = s; }
      const id = 4 * t + f;
      lo[id] = a;
      mid[id] = b;
      hi[id] = c;
    }
  }
  const { start, items } = bucketBy(lo, nodeCount);
  // Count how many faces share each face's node triple; boundary faces have multiplicity 1.
  const shared = new Uint8Array(nf);
  let boundary = 0;
  for (let n = 0; n < nodeCount; n++) {
    const s = start[n];
    const e = start[n + 1];
    for (let p = s; p < e; p++) {
      const f = items[p];
      if (shared[f]) continue;
      for (let q = p + 1; q < e; q++) {
        const g = items[q];
        if (mid[g] === mid[f] && hi[g] === hi[f]) {
          shared[f] = 1;
          shared[g] = 1;
        }
      }
      if (!shared[f]) boundary++;
    }
  }

  const triangles = new Uint32Array(3 * boundary);
  const onSurface = new Uint8Array(nodeCount);
  let w = 0;
  for (let id = 0; id < nf; id++) {
    if (shared[id]) continue;
    const t = id >> 2;
    const f = id & 3;
    const a = tets[4 * t + FACE[3 * f]];
    let b = tets[4 * t + FACE[3 * f + 1]];
    let c = tets[4 * t + FACE[3 * f + 2]];
    // The table assumes positive orientation; flip the winding for an inverted tet so the normal still points
    // away from the opposite node.
    if (tetVolume6(positions, tets, t) < 0) {
      const s = b;
      b = c;
      c = s;
    }
    triangles[w++] = a;
    triangles[w++] = b;
    triangles[w++] = c;
    onSurface[a] = 1;
    onSurface[b] = 1;
    onSurface[c] = 1;
  }
  let ns = 0;
  for (let n = 0; n < nodeCount; n++) ns += onSurface[n];
  const surfaceNodes = new Uint32Array(ns);
  let k = 0;
  for (let n = 0; n < nodeCount; n++) if (onSurface[n]) surfaceNodes[k++] = n;
  return { triangles, surfaceNodes };
}

/**
 * Unique undirected edges of a triangle set, 2 node ids per edge with the smaller first, sorted by (first, second).
 * nodeCount defaults to 1 + the largest id used.
 */
export function surfaceEdges(triangles: Uint32Array, nodeCount?: number): Uint32Array {
  let n = nodeCount ?? 0;
  if (nodeCount === undefined) for (let i = 0; i < triangles.length; i++) if (triangles[i] + 1 > n) n = triangles[i] + 1;
  const ne = triangles.length;
  const a = new Uint32Array(ne);
  const b = new Uint32Array(ne);
  for (let t = 0; t < ne; t += 3) {
    for (let k = 0; k < 3; k++) {
      const u = triangles[t + k];
      const v = triangles[t + (k === 2 ? 0 : k + 1)];
      a[t + k] = u < v ? u : v;
      b[t + k] = u < v ? v : u;
    }
  }
  const { start, items } = bucketBy(a, n);
  const out: number[] = [];
  const seen = new Uint8Array(ne);
  const scratch: number[] = [];
  for (let u = 0; u < n; u++) {
    scratch.length = 0;
    for (let p = start[u]; p < start[u + 1]; p++) {
      const e = items[p];
      if (seen[e]) continue;
      for (let q = p + 1; q < start[u + 1]; q++) if (b[items[q]] === b[e]) seen[items[q]] = 1;
      scratch.push(b[e]);
    }
    scratch.sort((x, y) => x - y);
    for (const v of scratch) out.push(u, v);
  }
  return Uint32Array.from(out);
}

/**
 * Volume enclosed by a closed triangle surface, by the divergence theorem: sum over triangles of
 * x0 . (x1 x x2) / 6, i.e. the signed volumes of the tets joining each triangle to one origin. Positive when the
 * triangles wind outward.
 */
export function enclosedVolume(positions: Float64Array, triangles: Uint32Array): number {
  if (triangles.length === 0) return 0;
  // Measure from a point on the surface rather than the origin: less cancellation for far-away bodies.
  const origin = triangles[0];
  let sum = 0;
  for (let t = 0; t < triangles.length; t += 3) sum += signedVolume6(positions, origin, triangles[t], triangles[t + 1], triangles[t + 2]);
  return sum / 6;
}
