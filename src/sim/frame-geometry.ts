/**
 * What an output frame shows of a model: the boundary surface of the tet bodies (obstacle surfaces included) and the
 * free particles; interior tet nodes are left out. Shared by the frame files and the browser demo.
 */

import { vertexMapOf, type Model } from '../model/model.js';

/** A named run of consecutive frame triangles: one body or one mesh obstacle (an `o` group of an OBJ frame). */
export interface FrameGroup {
  name: string;
  firstTriangle: number;
  triangleCount: number;
  obstacle: boolean;
}

/**
 * The vertices a frame shows (surface vertices and nodes of no tet, i.e. particles; vertex ids of the model's
 * vertex map, node ids when it is the identity) and the surface renumbered to them. gatherVertices gives their
 * positions.
 */
export function frameGeometry(model: Model): { nodes: Uint32Array; triangles: Uint32Array; groups: FrameGroup[] } {
  const n = vertexMapOf(model).nVertices;
  const inTet = new Uint8Array(n);
  for (const body of model.bodies) for (let k = 0; k < body.tets.length; k++) inTet[body.tets[k]] = 1;
  const shown = new Uint8Array(n);
  for (let k = 0; k < model.surface.length; k++) shown[model.surface[k]] = 1;
  for (let i = 0; i < n; i++) if (!inTet[i]) shown[i] = 1;
  const slot = new Int32Array(n).fill(-1);
  const nodes: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!shown[i]) continue;
    slot[i] = nodes.length;
    nodes.push(i);
  }
  const triangles = new Uint32Array(model.surface.length);
  for (let k = 0; k < triangles.length; k++) triangles[k] = slot[model.surface[k]];
  return { nodes: Uint32Array.from(nodes), triangles, groups: frameGroups(model) };
}

/**
 * One group per body, then per mesh obstacle, when `model.surface` is their surfaces end to end (as buildModel lays it
 * out); otherwise (a model assembled by hand) none, and readers split the surface themselves.
 */
export function frameGroups(model: Model): FrameGroup[] {
  const parts = [
    ...model.bodies.map((b) => ({ name: b.name, count: b.surface.length / 3, obstacle: false })),
    ...(model.obstacles ?? []).map((o) => ({ name: o.name, count: o.triangles.length / 3, obstacle: true })),
  ];
  if (3 * parts.reduce((s, p) => s + p.count, 0) !== model.surface.length) return [];
  const groups: FrameGroup[] = [];
  let first = 0;
  for (const p of parts) {
    groups.push({ name: p.name, firstTriangle: first, triangleCount: p.count, obstacle: p.obstacle });
    first += p.count;
  }
  return groups;
}
