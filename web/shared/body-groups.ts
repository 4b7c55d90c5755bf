/**
 * Which body each vertex of a frame belongs to, for colouring. Frames with `o` groups name their bodies; older
 * frames (one unnamed surface) are split into connected components of their triangles, one per body, in the order of
 * their first vertex (bodies come first in the node order, obstacle meshes after them).
 */

import type { ObjGroup } from './obj-frame.js';

export interface BodyGroups {
  /** Group index per vertex (-1: a vertex no triangle uses, i.e. a particle). */
  vertexGroup: Int32Array;
  names: string[];
  /** True for groups that are fixed obstacles (drawn grey), not bodies. */
  obstacle: boolean[];
  /** Vertices used by no triangle: free particles, drawn as spheres. */
  particles: Uint32Array;
}

/**
 * `obstacleNames`: names of the scene's mesh obstacles (stairs, meshes) in scene order; without `o` groups the last
 * that many components are taken as those obstacles.
 */
export function bodyGroups(vertexCount: number, triangles: Uint32Array, groups: ObjGroup[], obstacleNames: string[] = []): BodyGroups {
  const vertexGroup = new Int32Array(vertexCount).fill(-1);
  let names: string[];
  let obstacle: boolean[];
  if (groups.length > 0) {
    names = groups.map((g) => g.name);
    groups.forEach((g, gi) => {
      for (let k = 3 * g.firstTriangle; k < 3 * (g.firstTriangle + g.triangleCount); k++) vertexGroup[triangles[k]] = gi;
    });
    const known = new Set(obstacleNames);
    obstacle = names.map((n) => known.has(n));
  } else {
    const count = connectedComponents(vertexCount, triangles, vertexGroup);
    const nObstacles = Math.min(obstacleNames.length, count);
    names = Array.from({ length: count }, (_, i) => (i >= count - nObstacles ? obstacleNames[i - (count - nObstacles)] : `body ${i}`));
    obstacle = names.map((_, i) => i >= count - nObstacles);
  }
  const particles: number[] = [];
  for (let i = 0; i < vertexCount; i++) if (vertexGroup[i] < 0) particles.push(i);
  return { vertexGroup, names, obstacle, particles: Uint32Array.from(particles) };
}

/** Labels vertices by triangle connectivity (union-find); components are numbered by their smallest vertex. */
export function connectedComponents(vertexCount: number, triangles: Uint32Array, out: Int32Array): number {
  const parent = new Int32Array(vertexCount);
  for (let i = 0; i < vertexCount; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  const used = new Uint8Array(vertexCount);
  for (let k = 0; k < triangles.length; k += 3) {
    used[triangles[k]] = used[triangles[k + 1]] = used[triangles[k + 2]] = 1;
    for (let j = 1; j < 3; j++) {
      const a = find(triangles[k]);
      const b = find(triangles[k + j]);
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  }
  const label = new Int32Array(vertexCount).fill(-1);
  let count = 0;
  for (let i = 0; i < vertexCount; i++) {
    if (!used[i]) continue;
    const r = find(i);
    if (label[r] < 0) label[r] = count++;
    out[i] = label[r];
  }
  return count;
}
