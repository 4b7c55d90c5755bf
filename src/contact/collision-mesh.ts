/**
 * The one collision system of a model: every primitive that can touch another, with the group it belongs to.
 *
 *   - body surfaces: boundary vertices, edges and triangles of every tet body (one group per body),
 *   - shells: all vertices, edges and triangles of a thin shell (one group per shell; both sides collide),
 *   - codimensional points: free particles (a group per particle body; vertices only),
 *   - obstacle meshes (stairs, imported triangle meshes): nodes of the model that are fixed, in groups of their own,
 *   - planes: analytic half-spaces, paired with every collision vertex that is not fixed.
 *
 * All ids are global node ids of the model's position vector, so distances, barrier and CCD read positions
 * straight from x. Groups let the broad phase treat pairs inside one body (self-contact) apart from pairs across
 * bodies, and name primitives in error messages.
 */

export interface ContactPlane {
  readonly name: string;
  /** Unit outward normal: the free side is { p : normal . p > offset }. */
  readonly normal: readonly [number, number, number];
  readonly offset: number;
  /** Friction coefficient of the plane's surface (the pair uses the smaller of the two). */
  readonly friction: number;
}

export interface CollisionGroup {
  readonly name: string;
  /**
   * 'body' (tet surface), 'shell' (a thin shell's triangles, two-sided: the distances are unsigned, so it needs no
   * pair kind of its own), 'particles' (codimensional points) or 'obstacle' (fixed triangle mesh).
   */
  readonly kind: 'body' | 'shell' | 'particles' | 'obstacle';
  readonly friction: number;
  /** Whether pairs of primitives both in this group are considered. */
  readonly selfContact: boolean;
  /**
   * Contact offset of the group's primitives (m, default 0; Codim-IPC thickness): a pair keeps its two primitives'
   * offsets summed apart, so two layers of a shell with offset t/2 stay a thickness t apart.
   */
  readonly contactOffset?: number;
}

export interface CollisionMesh {
  readonly nNodes: number;
  /** Node ids of the collision vertices (sorted, unique). */
  readonly vertices: Uint32Array;
  /** 2 node ids per edge. */
  readonly edges: Uint32Array;
  /** 3 node ids per triangle, outward winding for body surfaces. */
  readonly triangles: Uint32Array;
  /** Per node: index into `groups`, or -1 for nodes that take no part in contact. */
  readonly groupOfNode: Int32Array;
  readonly groups: readonly CollisionGroup[];
  /** Per node, 1 = never moves (obstacle or fixed node): pairs of fixed primitives are skipped. */
  readonly fixedNodes: Uint8Array;
  readonly planes: readonly ContactPlane[];
  /** Per node, its group's contactOffset; absent when no group has one (then every pair's offset is 0). */
  readonly offsetOfNode?: Float64Array;
  /** The largest offset of a pair: twice the largest group offset (0 without offsets). */
  readonly maxPairOffset?: number;
}

/** Input to buildCollisionMesh: one entry per group, with global node ids. */
export interface CollisionGroupInput extends CollisionGroup {
  /** Surface triangles (global ids); empty for particles. */
  readonly triangles: Uint32Array;
  /** Extra collision vertices that lie on no triangle (particles). */
  readonly points?: Uint32Array;
  /** Optional explicit edges; by default the unique edges of the triangles. */
  readonly edges?: Uint32Array;
}

/** Unique undirected edges (a < b) of a triangle list, sorted. */
export function uniqueEdges(triangles: Uint32Array): Uint32Array {
  const keys: number[] = [];
  for (let t = 0; t < triangles.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      const a = triangles[t + k];
      const b = triangles[t + ((k + 1) % 3)];
      keys.push(Math.min(a, b) * 2 ** 26 + Math.max(a, b));
    }
  }
  keys.sort((p, q) => p - q);
  const out: number[] = [];
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && keys[i] === keys[i - 1]) continue;
    out.push(Math.floor(keys[i] / 2 ** 26), keys[i] % 2 ** 26);
  }
  return Uint32Array.from(out);
}

export function buildCollisionMesh(
  nNodes: number,
  groups: readonly CollisionGroupInput[],
  planes: readonly ContactPlane[],
  fixedNodes: Uint8Array,
): CollisionMesh {
  if (nNodes >= 2 ** 26) throw new Error(`collision mesh: ${nNodes} nodes exceed the supported 2^26`);
  const groupOfNode = new Int32Array(nNodes).fill(-1);
  const vertexSet = new Uint8Array(nNodes);
  const edges: number[] = [];
  const triangles: number[] = [];
  groups.forEach((g, gi) => {
    const claim = (node: number) => {
      if (node >= nNodes) throw new Error(`collision group '${g.name}': node ${node} out of range`);
      if (groupOfNode[node] !== -1 && groupOfNode[node] !== gi) {
        throw new Error(`collision groups '${groups[groupOfNode[node]].name}' and '${g.name}' share node ${node}`);
      }
      groupOfNode[node] = gi;
      vertexSet[node] = 1;
    };
    for (const node of g.triangles) claim(node);
    for (const node of g.points ?? []) claim(node);
    for (const t of g.triangles) triangles.push(t);
    for (const e of g.edges ?? uniqueEdges(g.triangles)) edges.push(e);
  });
  const vertices: number[] = [];
  for (let i = 0; i < nNodes; i++) if (vertexSet[i]) vertices.push(i);
  let offsetOfNode: Float64Array | undefined;
  let maxGroupOffset = 0;
  groups.forEach((g) => {
    const offset = g.contactOffset ?? 0;
    if (!(offset >= 0 && Number.isFinite(offset))) throw new Error(`collision group '${g.name}': contactOffset must be a finite number >= 0, got ${offset}`);
    maxGroupOffset = Math.max(maxGroupOffset, offset);
  });
  if (maxGroupOffset > 0) {
    offsetOfNode = new Float64Array(nNodes);
    for (let i = 0; i < nNodes; i++) if (groupOfNode[i] >= 0) offsetOfNode[i] = groups[groupOfNode[i]].contactOffset ?? 0;
  }
  for (const p of planes) {
    const [a, b, c] = p.normal;
    const len = Math.hypot(a, b, c);
    if (!(Math.abs(len - 1) < 1e-12)) throw new Error(`plane '${p.name}': normal must be a unit vector`);
  }
  return {
    nNodes,
    vertices: Uint32Array.from(vertices),
    edges: Uint32Array.from(edges),
    triangles: Uint32Array.from(triangles),
    groupOfNode,
    groups: groups.map(({ name, kind, friction, selfContact, contactOffset }) => ({ name, kind, friction, selfContact, contactOffset: contactOffset ?? 0 })),
    fixedNodes,
    planes,
    offsetOfNode,
    maxPairOffset: 2 * maxGroupOffset,
  };
}

/** "triangle 12 (nodes 3, 4, 9) of body 'ball'", for error messages. */
export function describeTriangle(mesh: CollisionMesh, t: number): string {
  const a = mesh.triangles[3 * t], b = mesh.triangles[3 * t + 1], c = mesh.triangles[3 * t + 2];
  return `triangle ${t} (nodes ${a}, ${b}, ${c}) of ${describeGroup(mesh, a)}`;
}

export function describeEdge(mesh: CollisionMesh, e: number): string {
  const a = mesh.edges[2 * e], b = mesh.edges[2 * e + 1];
  return `edge ${e} (nodes ${a}, ${b}) of ${describeGroup(mesh, a)}`;
}

export function describeVertex(mesh: CollisionMesh, node: number): string {
  return `vertex ${node} of ${describeGroup(mesh, node)}`;
}

export function describeGroup(mesh: CollisionMesh, node: number): string {
  const g = mesh.groupOfNode[node];
  if (g < 0) return 'no collision group';
  const group = mesh.groups[g];
  return `${group.kind === 'obstacle' || group.kind === 'particles' || group.kind === 'shell' ? group.kind : 'body'} '${group.name}'`;
}

/** Friction coefficient of a pair: the smaller of the two surfaces' coefficients (the slipperier one wins). */
export function pairFriction(a: number, b: number): number {
  return Math.min(a, b);
}
