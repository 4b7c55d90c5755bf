/**
 * One kind of contact pair (IPC's collision stencils, as ipc-toolkit's collisions/normal organises them: a small
 * type per pair kind, the potentials generic over them). A kind knows its stencil, its distance, its barrier terms,
 * its CCD, its friction frame and how to name its pairs; the barrier potential, the friction term, the candidate
 * sets and the invariant checks loop over kinds (registry.ts) and pairs (PairList) and never ask which kind a
 * pair is. A new kind is one module and one registry line.
 *
 * Conventions shared by every kind:
 *   - a pair is addressed as (list, k): pair k of a PairList of the kind;
 *   - stencil nodes [0, split) belong to the first primitive, [split, size) to the second (none for an obstacle):
 *     the CCD's motion bound and the candidate sets' slack use that split;
 *   - the barrier of a pair is m b(d^2; dhat^2) (barrier.ts), m the kind's mollifier (1 unless near-parallel
 *     edges); a kind's per-pair kernels return its energy unscaled and its gradient and Hessian already multiplied
 *     by the caller's scale s (so each kind keeps its own rounding: the plane's rank-one forms, say), and the list
 *     loops of live-pairs.ts add them up;
 *   - kernels read and write a PairScratch, allocate nothing, and gather and scatter through stencil.ts.
 *
 * What the kinds that thin shells and codimensional points need would add: vertex-vertex and vertex-edge pairs
 * (free particles, rods) are surface kinds found by the broad phase (which would list vertex-vertex and
 * vertex-edge box pairs); shells' two-sided triangles need no new kind (the distances are unsigned).
 *
 * Contact offsets (Codim-IPC thickness): every pair has an offset xi (PairList.offsets, the sum of its two
 * primitives' groups' offsets; 0 for solids and planes). A kind's kernels put the barrier on d - xi (barrier.ts's
 * offsetBarrier), count a pair live below (dhat + xi)^2 (PairScratch.reach2), and its maxStep keeps d above xi
 * (the CCD's minimum separation). With xi = 0 every one of these is the plain formula, to the last bit.
 */
import type { BsrMatrix } from '../../math/bsr.js';
import type { SpatialHashBroadPhase } from '../broad-phase.js';
import type { CollisionMesh } from '../collision-mesh.js';
import type { PairList } from './pair-list.js';
import { MAX_STENCIL } from './stencil.js';

/**
 * The local Newton matrix a kernel returns: 'exact' (the Hessian of m b(d^2)), 'projected' (the exact one with its
 * negative eigenvalues clamped) or 'gauss-newton' (PSD by construction; BarrierHessian in barrier-potential.ts).
 */
export type PairHessian = 'exact' | 'projected' | 'gauss-newton';

/** One active contact at some x, as the friction term needs it (lagged at x_n). */
export interface ActiveContact {
  /** The pair kind's name: 'vertex-triangle', 'edge-edge', 'vertex-plane'. */
  kind: string;
  /** Stencil nodes (the kind's size). */
  nodes: number[];
  /** The two primitives, numbered as the kind numbers them (vertex node, triangle, edge or plane index). */
  primitives: [number, number];
  /** Squared distance and the distance type used (distance.ts), -1 for planes. */
  d2: number;
  type: number;
  /** The pair's contact offset xi (m): the barrier acts on d - xi (0 for most pairs). */
  offset: number;
  /** Normal force magnitude -dB/dd = -kappa/dhat^2 * m f'(d^2) * 2d (f the offset barrier, b itself for xi = 0). */
  normalForce: number;
}

/** Settings and scratch of the pair kernels: one per caller, so kernels keep no state of their own. */
export class PairScratch {
  /** Activation distance and its square. */
  dhat = 0;
  dhat2 = 0;
  /** Distance type of the last distance2 (distance.ts; -1 where the kind has none). */
  type = -1;
  /** Stencil positions left by distance2 and the kernels (3 per node). */
  readonly xs = new Float64Array(3 * MAX_STENCIL);
  /** Per-pair kernel outputs: scaled gradient (3n) and Hessian ((3n)^2, row-major). */
  readonly gradient = new Float64Array(3 * MAX_STENCIL);
  readonly hessian = new Float64Array(9 * MAX_STENCIL * MAX_STENCIL);
  /** Gradient and Hessian of d^2 and of the mollifier. */
  readonly dg = new Float64Array(3 * MAX_STENCIL);
  readonly dh = new Float64Array(9 * MAX_STENCIL * MAX_STENCIL);
  readonly mg = new Float64Array(3 * MAX_STENCIL);
  readonly mh = new Float64Array(9 * MAX_STENCIL * MAX_STENCIL);
  /** CCD end points: the stencil at the start [0, size) and at the end [MAX_STENCIL, MAX_STENCIL + size). */
  readonly ccdPoints = Array.from({ length: 2 * MAX_STENCIL }, () => new Float64Array(3));

  setDhat(dhat: number): void {
    this.dhat = dhat;
    this.dhat2 = dhat * dhat;
  }

  /** Squared distance at and beyond which a pair with offset xi is inactive: (dhat + xi)^2 (dhat2 for xi = 0). */
  reach2(xi: number): number {
    if (xi === 0) return this.dhat2;
    const r = this.dhat + xi;
    return r * r;
  }
}

export interface PairKind {
  /** 'vertex-triangle', 'edge-edge', 'vertex-plane', ...: in messages, metrics and ActiveContact.kind. */
  readonly name: string;
  /** Stencil nodes per pair, and where the second primitive's begin (size for an obstacle). */
  readonly size: number;
  readonly split: number;
  /** Per-pair constants kept in PairList.constants. */
  readonly constantCount: number;

  /** Squared distance of pair k at x (0 on or below an obstacle); leaves the stencil in c.xs and the type in c.type. */
  distance2(list: PairList, k: number, x: Float64Array, c: PairScratch): number;
  /** The mollifier m at the stencil c.xs of pair k (1 for kinds without one). */
  mollifier(list: PairList, k: number, c: PairScratch): number;
  /**
   * e plus the barrier m b(d^2; dhat^2) of each live pair of the list (0 for d >= dhat, Infinity for a pair that
   * touches or crosses). The barrier's loops are the kind's own (live-pairs.ts), over its typed arrays.
   */
  sumEnergy(list: PairList, x: Float64Array, c: PairScratch, e: number): number;
  /** g += s grad(m b) of each live pair. */
  addGradients(list: PairList, x: Float64Array, s: number, g: Float64Array, c: PairScratch): void;
  /** H += s times the local Newton matrix of m b of each live pair, blocks of fixed nodes left out. */
  addHessians(list: PairList, x: Float64Array, s: number, H: BsrMatrix, fixed: Uint8Array, c: PairScratch, model: PairHessian): void;
  /** The largest step fraction in [0, t] along dx from x that keeps the pair apart (CCD, or a closed form). */
  maxStep(list: PairList, k: number, x: Float64Array, dx: Float64Array, t: number, c: PairScratch): number;

  /** Friction's coefficient for the pair: the smaller of its two surfaces'. */
  frictionCoefficient(mesh: CollisionMesh, contact: ActiveContact): number;
  /**
   * Friction's lagged frame at the stencil positions xs: closest-point weights w (sum w_i x_i is the contact
   * vector) and an orthonormal tangent basis P (3x2, column-major); returns the stencil size (friction.ts).
   */
  frictionFrame(mesh: CollisionMesh, contact: ActiveContact, xs: Float64Array, w: Float64Array, P: Float64Array): number;

  /** The two primitives of pair k, named for messages ("vertex 3 of body 'ball'", "plane 'ground'"). */
  describe(mesh: CollisionMesh, list: PairList, k: number): [string, string];
  /** Why pair k blocks a step at x (maxStep returned 0): the pair and its distance. */
  explainBlocked(mesh: CollisionMesh, list: PairList, k: number, x: Float64Array): string;
}

/** A kind of pair between primitives of the collision mesh, found by the broad phase. */
export interface SurfacePairKind extends PairKind {
  /**
   * The kind's pairs among the broad phase's last candidates into list (count, nodes, primitives), and their
   * constants from the rest positions when given (a CCD sweep needs none).
   */
  collect(broadPhase: SpatialHashBroadPhase, mesh: CollisionMesh, rest: Float64Array | null, list: PairList): void;
}

/** A kind of pair between a collision vertex and an analytic obstacle: every free vertex with every obstacle. */
export interface ObstaclePairKind extends PairKind {
  /** Every pair of the given vertices with the mesh's obstacles of this kind into list. */
  collect(mesh: CollisionMesh, vertices: Uint32Array, list: PairList): void;
  /** Signed distance of pair k at x (negative below the obstacle). */
  signedDistance(list: PairList, k: number, x: Float64Array): number;
}
