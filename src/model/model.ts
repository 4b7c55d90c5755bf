import type { BarrierPotential } from '../contact/barrier-potential.js';
import type { CollisionMesh } from '../contact/collision-mesh.js';
import type { FrictionVelocitySetting } from '../contact/friction.js';
import type { PotentialTerm } from '../energies/potential.js';
import { GroupTurns } from '../math/group-turns.js';
import { identityVertexMap, isIdentityMap, vertexPositions, type VertexMap } from './vertex-map.js';

/**
 * IPC contact of a model: the collision system, its barrier (one of `terms`, through the vertex map when that is not
 * the identity) and friction settings. Mesh ids are vertex ids (model/vertex-map.ts); the barrier reads vertex
 * positions (contactPositions).
 */
export interface ContactModel {
  readonly mesh: CollisionMesh;
  readonly barrier: BarrierPotential;
  /** eps_v (m/s) of the friction mollifier, or 'newton-tolerance' (the solver's tolerance; see friction.ts). */
  readonly frictionVelocity: FrictionVelocitySetting;
  /** True when some pair has a positive friction coefficient. */
  readonly hasFriction: boolean;
  /** IPC's adaptive barrier stiffness. */
  readonly adaptiveKappa: boolean;
}

/**
 * Positions of constrained DOFs over time. `fixed` nodes stay at their initial position; `moving` nodes follow a
 * prescribed path p(t) (a scripted handle).
 */
export interface ConstraintMotion {
  readonly nodes: Uint32Array;
  /** Writes p(t) for each of `nodes` into out[3 * node ...]. `initial` is x(0) of all nodes. */
  positions(t: number, initial: Float64Array, out: Float64Array): void;
}

/**
 * What a body is made of, as bodies.csv reports it: tets (FEM), a thin shell, particles (with their springs), a chain
 * of bar segments, or an affine body (12 DOFs).
 */
export type BodyKind = 'tets' | 'shell' | 'particles' | 'chain' | 'affine';

/** A body's mesh inside the model (node ids are global). */
export interface BodyInfo {
  readonly name: string;
  readonly kind: BodyKind;
  /** Its DOF nodes are firstNode .. firstNode + nodeCount - 1 (an affine body: its 4 nodes p, c_1, c_2, c_3). */
  readonly firstNode: number;
  readonly nodeCount: number;
  /**
   * Its internal energy terms, whose sum is the body's elastic energy in bodies.csv: its tets, bar segments, shell
   * membrane and bending, springs; for an affine body its share of the orthogonality potential (a term of its own,
   * for reports: the model's orthogonality term covers all affine bodies at once).
   */
  readonly terms: readonly PotentialTerm[];
  /** Tets over nodes (empty for particles and affine bodies). */
  readonly tets: Uint32Array;
  /** Outward boundary triangles (global vertex ids, see vertexMap): the surface written to frames/. */
  readonly surface: Uint32Array;
  /** An affine body's DOFs: its 4 nodes p, c_1, c_2, c_3 start at this node (see model/affine-body.ts). */
  readonly affineNode?: number;
}

/** A fixed triangle-mesh obstacle inside the model (node ids are global). */
export interface ObstacleMesh {
  readonly name: string;
  readonly triangles: Uint32Array;
}

/**
 * Everything the integrators need, independent of where it came from (scene file, API, test).
 * DOF d = 3 * node + axis. Data flows one way: scene -> Model -> integrator -> solver.
 */
export interface Model {
  readonly nNodes: number;
  /** Rest positions (reference configuration of the elements). */
  readonly rest: Float64Array;
  /** Initial state. */
  readonly x0: Float64Array;
  readonly v0: Float64Array;
  /** Lumped mass per DOF (each node's mass repeated on its 3 DOFs), constrained nodes included. */
  readonly mass: Float64Array;
  /** 1 where the DOF is fixed or prescribed (not a Newton unknown). */
  readonly constrained: Uint8Array;
  readonly motions: readonly ConstraintMotion[];
  readonly terms: readonly PotentialTerm[];
  readonly bodies: readonly BodyInfo[];
  /** All bodies' and obstacles' surface triangles in one array (global vertex ids), for frames/. */
  readonly surface: Uint32Array;
  /**
   * How DOFs map to the vertices that surfaces, frames and contact see (model/vertex-map.ts); absent = identity
   * (every node is a vertex of the same index). Affine bodies make it non-trivial.
   */
  readonly vertexMap?: VertexMap;
  /**
   * First moment per DOF: what gravity and linear momentum weigh positions and velocities by (sum_d linearMass_d
   * v_d is the momentum). The lumped mass for nodes; for an affine body m on its translation and 0 on its matrix
   * columns. Absent = `mass`.
   */
  readonly linearMass?: Float64Array;
  /** The fixed triangle-mesh obstacles (stairs, mesh files) in scene order; their triangles end `surface`. */
  readonly obstacles?: readonly ObstacleMesh[];
  /** Present when the scene has contact (obstacles or a `contact` section). */
  readonly contact?: ContactModel;
}

/**
 * The bodies as node groups whose Hessian blocks turn with them (math/group-turns.ts), for the linear solver: every
 * body but the affine ones, whose DOFs are an affine map rather than positions. A node with some but not all DOFs
 * constrained stays out, as do obstacles' nodes.
 */
export function bodyTurns(model: Model): GroupTurns {
  const groupOfNode = new Int32Array(model.nNodes).fill(-1);
  let groups = 0;
  for (const body of model.bodies) {
    if (body.kind === 'affine') continue;
    for (let node = body.firstNode; node < body.firstNode + body.nodeCount; node++) {
      const fixed = model.constrained[3 * node] + model.constrained[3 * node + 1] + model.constrained[3 * node + 2];
      if (fixed === 0 || fixed === 3) groupOfNode[node] = groups;
    }
    groups++;
  }
  return new GroupTurns(groupOfNode, groups);
}

/** Writes the positions of all constrained DOFs at time t into x (free DOFs untouched). */
export function applyConstraints(model: Model, t: number, x: Float64Array): void {
  const { constrained, x0 } = model;
  for (let d = 0; d < constrained.length; d++) if (constrained[d]) x[d] = x0[d];
  for (const motion of model.motions) motion.positions(t, x0, x);
}


/**
 * Vertex positions of the DOF vector x, what the collision mesh's ids index: x itself for the identity map, else a
 * new array (for checks and reports, not for inner loops).
 */
export function contactPositions(model: Model, x: Float64Array): Float64Array {
  const map = vertexMapOf(model);
  if (isIdentityMap(map)) return x;
  const y = new Float64Array(3 * map.nVertices);
  vertexPositions(map, x, y);
  return y;
}

/** The model's DOF-to-vertex map (the identity when it has none). */
export function vertexMapOf(model: Model): VertexMap {
  return model.vertexMap ?? identityVertexMap(model.nNodes);
}
