/**
 * Every contact pair kind, in the order the potentials visit them. A new kind is a module and a line here (a
 * surface kind may also need its primitive pairs listed by the broad phase).
 */
import { edgeEdge } from './edge-edge.js';
import type { ObstaclePairKind, PairKind, SurfacePairKind } from './pair-kind.js';
import { vertexPlane } from './vertex-plane.js';
import { vertexTriangle } from './vertex-triangle.js';

/** Pairs of collision-mesh primitives, found by the broad phase. */
export const SURFACE_PAIR_KINDS: readonly SurfacePairKind[] = [vertexTriangle, edgeEdge];

/** Pairs of a free collision vertex with an analytic obstacle. */
export const OBSTACLE_PAIR_KINDS: readonly ObstaclePairKind[] = [vertexPlane];

const byName = new Map<string, PairKind>([...SURFACE_PAIR_KINDS, ...OBSTACLE_PAIR_KINDS].map((kind) => [kind.name, kind]));

/** The kind of an ActiveContact. */
export function pairKindNamed(name: string): PairKind {
  const kind = byName.get(name);
  if (!kind) throw new Error(`contact: unknown pair kind '${name}'`);
  return kind;
}
