/**
 * Contact invariants of a configuration: IPC keeps every pair of surfaces apart, so after a step nothing may
 * intersect. Two queries over a CollisionMesh:
 *
 *   - findIntersection: the first violation found, in this order
 *       (a) a surface edge crossing a surface triangle it shares no node with (coplanar overlap counts),
 *       (b) a collision vertex that is not fixed on or below an obstacle (a plane: normal . p - offset <= 0),
 *       (c) a pair of mesh primitives (every surface pair kind: vertex-triangle, edge-edge) at distance exactly 0,
 *       (d) with contact offsets (Codim-IPC thickness), a pair with offset xi > 0 at distance d <= xi: such pairs
 *           must stay more than xi apart, so closing onto the offset counts as touching ((b) likewise compares a
 *           vertex's signed distance with its offset);
 *   - minimumDistance: the smallest surface-pair distance within a search radius, and the signed distance of every
 *     free vertex to every obstacle.
 *
 * Both follow the collision system's pairing rules: pairs whose nodes are all fixed (obstacle against obstacle)
 * are skipped, and pairs inside one group only count when that group has selfContact.
 *
 * The edge-triangle test uses orientation signs (signed tet volumes). A value within a small relative band of
 * zero (ORIENTATION_TOLERANCE times the product of the three edge lengths) counts as zero, and zero counts as
 * touching, so the test leans towards reporting: a segment lying in the triangle's plane is decided by an
 * inclusive 2D overlap test in the projection that drops the normal's largest axis.
 */

import { SpatialHashBroadPhase } from './broad-phase.js';
import { type CollisionMesh, describeEdge, describeTriangle } from './collision-mesh.js';
import { type ObstaclePairKind, PairScratch, type SurfacePairKind } from './pairs/pair-kind.js';
import { PairList } from './pairs/pair-list.js';
import { OBSTACLE_PAIR_KINDS, SURFACE_PAIR_KINDS } from './pairs/registry.js';

export interface IntersectionReport {
  /** 'edge-triangle', or the pair kind that touches or crosses ('vertex-plane', 'vertex-triangle', 'edge-edge'). */
  kind: string;
  /** Names both primitives, e.g. "edge 5 (nodes 3, 4) of body 'ball' intersects triangle 7 (...) of obstacle 'stairs'". */
  message: string;
}

export interface MinimumDistance {
  /** Unsigned for pairs of mesh primitives; signed (negative below) for obstacles. */
  distance: number;
  message: string;
}

/**
 * Orientation values within this fraction of the product of the edge lengths involved count as zero. Far above
 * the rounding error of the determinant (a few ulps of that product), far below any gap IPC keeps.
 */
export const ORIENTATION_TOLERANCE = 1e-12;

/** Triangles with |n| below this fraction of |u| |v| are slivers: no plane to cross, skipped by test (a). */
const DEGENERATE_TRIANGLE = 1e-12;

/** What the checks of one collision mesh keep between calls: a broad phase and the pair lists, one per kind. */
interface Checker {
  broadPhase: SpatialHashBroadPhase;
  surfacePairs: PairList<SurfacePairKind>[];
  /** Every free vertex with every obstacle (fixed, like the mesh). */
  obstaclePairs: PairList<ObstaclePairKind>[];
  scratch: PairScratch;
  /**
   * Whether any pair of mesh primitives can count at all: some group with self-contact has primitives, or two
   * groups have. A lone body without self-contact above planes (the bouncing balls) has none, and its checks then
   * skip the surface broad phases, which would list only its own pairs to drop them.
   */
  surfacePairsPossible: boolean;
}

// One checker per collision mesh, so repeated checks on one model reuse its buffers.
const checkers = new WeakMap<CollisionMesh, Checker>();

function checkerOf(mesh: CollisionMesh): Checker {
  let checker = checkers.get(mesh);
  if (checker === undefined) {
    const freeVertices = mesh.vertices.filter((v) => mesh.fixedNodes[v] === 0);
    checker = {
      broadPhase: new SpatialHashBroadPhase(
        { vertices: mesh.vertices, edges: mesh.edges, triangles: mesh.triangles },
        { fixedNodes: mesh.fixedNodes },
      ),
      surfacePairs: SURFACE_PAIR_KINDS.map((kind) => new PairList(kind)),
      obstaclePairs: OBSTACLE_PAIR_KINDS.map((kind) => {
        const list = new PairList(kind);
        kind.collect(mesh, freeVertices, list);
        list.fillOffsets(mesh);
        return list;
      }),
      scratch: new PairScratch(),
      surfacePairsPossible: surfacePairsPossible(mesh),
    };
    checkers.set(mesh, checker);
  }
  return checker;
}

function surfacePairsPossible(mesh: CollisionMesh): boolean {
  const withPrimitives = new Set<number>();
  for (const v of mesh.vertices) {
    const g = mesh.groupOfNode[v];
    if (g < 0) continue;
    if (mesh.groups[g].selfContact) return true;
    withPrimitives.add(g);
  }
  return withPrimitives.size >= 2;
}

/**
 * The surface pairs of the broad phase's last query into the checker's lists, minus those inside one group
 * without selfContact (the broad phase here knows no groups).
 */
function collectSurfacePairs(mesh: CollisionMesh, checker: Checker): void {
  for (const list of checker.surfacePairs) {
    list.kind.collect(checker.broadPhase, mesh, null, list);
    list.fillOffsets(mesh);
    const { size, split } = list.kind;
    let n = 0;
    for (let k = 0; k < list.count; k++) {
      if (!skippedBySelfContact(mesh, list.nodes[size * k], list.nodes[size * k + split])) list.live[n++] = k;
    }
    list.liveCount = n;
  }
}

/** Whether a pair of primitives whose first nodes are a and b is excluded by the groups' selfContact flags. */
function skippedBySelfContact(mesh: CollisionMesh, a: number, b: number): boolean {
  const g = mesh.groupOfNode[a];
  return g >= 0 && g === mesh.groupOfNode[b] && !mesh.groups[g].selfContact;
}

export function findIntersection(mesh: CollisionMesh, x: Float64Array): IntersectionReport | null {
  const checker = checkerOf(mesh);
  const bp = checker.broadPhase;
  const E = mesh.edges, T = mesh.triangles;
  const surfaces = checker.surfacePairsPossible;

  // (a) edges through triangles.
  if (surfaces) {
    bp.findEdgeTriangleCandidates(x);
    for (let k = 0; k < bp.edgeTriangleCount; k++) {
      const e = bp.edgeTrianglePairs[2 * k], t = bp.edgeTrianglePairs[2 * k + 1];
      const p = E[2 * e], q = E[2 * e + 1];
      const a = T[3 * t], b = T[3 * t + 1], c = T[3 * t + 2];
      if (skippedBySelfContact(mesh, p, a)) continue;
      if (segmentIntersectsTriangle(x, p, q, a, b, c)) {
        return { kind: 'edge-triangle', message: `${describeEdge(mesh, e)} intersects ${describeTriangle(mesh, t)}` };
      }
    }
  }

  // (b) free vertices on or below an obstacle.
  for (const list of checker.obstaclePairs) {
    for (let k = 0; k < list.count; k++) {
      const s = list.kind.signedDistance(list, k, x);
      const xi = list.offsets[k];
      if (s <= xi) {
        const [vertex, obstacle] = list.kind.describe(mesh, list, k);
        if (xi > 0) return { kind: list.kind.name, message: `${vertex} is within its contact offset ${xi} of ${obstacle} (signed distance ${s})` };
        return { kind: list.kind.name, message: `${vertex} lies on or below ${obstacle} (signed distance ${s})` };
      }
    }
  }

  if (!surfaces) return null;

  // (c) pairs touching exactly: boxes without inflation list every pair at distance 0.
  bp.findProximityCandidates(x, 0);
  collectSurfacePairs(mesh, checker);
  for (const list of checker.surfacePairs) {
    for (let q = 0; q < list.liveCount; q++) {
      const k = list.live[q];
      if (list.kind.distance2(list, k, x, checker.scratch) === 0) {
        const [first, second] = list.kind.describe(mesh, list, k);
        return { kind: list.kind.name, message: `${first} touches ${second} (distance 0)` };
      }
    }
  }

  // (d) pairs with an offset at or within it: boxes inflated by the largest pair offset list them all.
  const maxOffset = mesh.maxPairOffset ?? 0;
  if (maxOffset > 0) {
    bp.findProximityCandidates(x, maxOffset);
    collectSurfacePairs(mesh, checker);
    for (const list of checker.surfacePairs) {
      for (let q = 0; q < list.liveCount; q++) {
        const k = list.live[q];
        const xi = list.offsets[k];
        if (xi === 0) continue;
        const d = Math.sqrt(list.kind.distance2(list, k, x, checker.scratch));
        if (d <= xi) {
          const [first, second] = list.kind.describe(mesh, list, k);
          return { kind: list.kind.name, message: `${first} is within the contact offset ${xi} of ${second} (distance ${d})` };
        }
      }
    }
  }
  return null;
}

/**
 * Smallest distance over the surface pairs closer than searchRadius (pairs farther away are ignored) and over every
 * free vertex against every obstacle (signed, no radius limit). null when no pair is within the radius and there is
 * no obstacle (or no free vertex). The radius sizes the broad phase's boxes, so keep it to the scale of the contact
 * gap (dhat or a few times it).
 */
export function minimumDistance(mesh: CollisionMesh, x: Float64Array, searchRadius: number): MinimumDistance | null {
  if (!(searchRadius >= 0 && Number.isFinite(searchRadius))) {
    throw new Error(`minimumDistance: searchRadius must be finite and >= 0, got ${searchRadius}`);
  }
  const checker = checkerOf(mesh);
  const r2 = searchRadius * searchRadius;
  // Best pair so far (squared distance for surface pairs); described only once at the end.
  let best2 = Infinity;
  let bestList: PairList | null = null;
  let bestK = -1;

  checker.broadPhase.findProximityCandidates(x, searchRadius);
  collectSurfacePairs(mesh, checker);
  for (const list of checker.surfacePairs) {
    for (let q = 0; q < list.liveCount; q++) {
      const k = list.live[q];
      const d2 = list.kind.distance2(list, k, x, checker.scratch);
      if (d2 <= r2 && d2 < best2) {
        best2 = d2;
        bestList = list;
        bestK = k;
      }
    }
  }

  let best = Math.sqrt(best2);
  let signed = false;
  for (const list of checker.obstaclePairs) {
    for (let k = 0; k < list.count; k++) {
      const s = list.kind.signedDistance(list, k, x);
      if (s < best) {
        best = s;
        bestList = list;
        bestK = k;
        signed = true;
      }
    }
  }

  if (bestList === null) return null;
  const [first, second] = bestList.kind.describe(mesh, bestList, bestK);
  return { distance: best, message: `${first} and ${second} at ${signed ? 'signed ' : ''}distance ${best}` };
}

// ---------------------------------------------------------------------------------------------------------------
// Segment-triangle intersection.

/** Sign (-1, 0, 1) of the signed volume of (a, b, c, d), nodes of x; zero within the relative tolerance. */
function orientation3(x: Float64Array, a: number, b: number, c: number, d: number): number {
  const ax = x[3 * a], ay = x[3 * a + 1], az = x[3 * a + 2];
  const ux = x[3 * b] - ax, uy = x[3 * b + 1] - ay, uz = x[3 * b + 2] - az;
  const vx = x[3 * c] - ax, vy = x[3 * c + 1] - ay, vz = x[3 * c + 2] - az;
  const wx = x[3 * d] - ax, wy = x[3 * d + 1] - ay, wz = x[3 * d + 2] - az;
  const det = (uy * vz - uz * vy) * wx + (uz * vx - ux * vz) * wy + (ux * vy - uy * vx) * wz;
  const tol = ORIENTATION_TOLERANCE * Math.sqrt((ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz) * (wx * wx + wy * wy + wz * wz));
  return det > tol ? 1 : det < -tol ? -1 : 0;
}

/**
 * Sign of the 2D orientation of (a, b, c) in the coordinate plane (i, j): positive counter-clockwise, zero within
 * the relative tolerance.
 */
function orientation2(x: Float64Array, i: number, j: number, a: number, b: number, c: number): number {
  const ux = x[3 * b + i] - x[3 * a + i], uy = x[3 * b + j] - x[3 * a + j];
  const vx = x[3 * c + i] - x[3 * a + i], vy = x[3 * c + j] - x[3 * a + j];
  const det = ux * vy - uy * vx;
  const tol = ORIENTATION_TOLERANCE * Math.sqrt((ux * ux + uy * uy) * (vx * vx + vy * vy));
  return det > tol ? 1 : det < -tol ? -1 : 0;
}

/** Whether the closed segment [p, q] meets the closed triangle (a, b, c); coplanar overlap counts. */
export function segmentIntersectsTriangle(x: Float64Array, p: number, q: number, a: number, b: number, c: number): boolean {
  const ax = x[3 * a], ay = x[3 * a + 1], az = x[3 * a + 2];
  const ux = x[3 * b] - ax, uy = x[3 * b + 1] - ay, uz = x[3 * b + 2] - az;
  const vx = x[3 * c] - ax, vy = x[3 * c + 1] - ay, vz = x[3 * c + 2] - az;
  const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
  const nn = nx * nx + ny * ny + nz * nz;
  const uuvv = (ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz);
  if (!(nn > DEGENERATE_TRIANGLE * DEGENERATE_TRIANGLE * uuvv)) return false;

  const sp = orientation3(x, a, b, c, p);
  const sq = orientation3(x, a, b, c, q);
  if (sp !== 0 && sp === sq) return false; // both strictly on one side
  if (sp === 0 && sq === 0) {
    // In the plane: project along the normal's largest axis, which keeps the triangle non-degenerate.
    const anx = Math.abs(nx), any = Math.abs(ny), anz = Math.abs(nz);
    const drop = anx >= any && anx >= anz ? 0 : any >= anz ? 1 : 2;
    return coplanarSegmentMeetsTriangle(x, (drop + 1) % 3, (drop + 2) % 3, p, q, a, b, c);
  }
  // The segment reaches the plane; the line through it meets the triangle iff the three volumes it spans with the
  // triangle's edges do not take both strict signs.
  const s0 = orientation3(x, p, q, a, b);
  const s1 = orientation3(x, p, q, b, c);
  const s2 = orientation3(x, p, q, c, a);
  const anyPositive = s0 > 0 || s1 > 0 || s2 > 0;
  const anyNegative = s0 < 0 || s1 < 0 || s2 < 0;
  if (anyPositive && anyNegative) return false;
  if (s0 !== 0 && s1 !== 0 && s2 !== 0) return true;
  // A volume within the tolerance of zero: the segment passes near an edge of the triangle, or lies nearly in its
  // plane (neighbouring triangles of a flat shell), where every volume is tiny and says nothing. Decide on the point
  // where the segment crosses the plane, in the plane's coordinates.
  return crossingInTriangle(x, p, q, a, b, c, nx, ny, nz);
}

/**
 * Whether the point where [p, q] crosses the plane of (a, b, c) (normal n; p and q not strictly on one side) lies
 * in the closed triangle, tested in the coordinate plane across the normal's largest axis.
 */
function crossingInTriangle(x: Float64Array, p: number, q: number, a: number, b: number, c: number, nx: number, ny: number, nz: number): boolean {
  const side = (k: number) => nx * (x[3 * k] - x[3 * a]) + ny * (x[3 * k + 1] - x[3 * a + 1]) + nz * (x[3 * k + 2] - x[3 * a + 2]);
  const dp = side(p), dq = side(q);
  const t = dp === dq ? 0 : Math.min(1, Math.max(0, dp / (dp - dq)));
  const anx = Math.abs(nx), any = Math.abs(ny), anz = Math.abs(nz);
  const drop = anx >= any && anx >= anz ? 0 : any >= anz ? 1 : 2;
  const i = (drop + 1) % 3, j = (drop + 2) % 3;
  const pi = x[3 * p + i] + t * (x[3 * q + i] - x[3 * p + i]);
  const pj = x[3 * p + j] + t * (x[3 * q + j] - x[3 * p + j]);
  const o = (u: number, w: number) => {
    const ux = x[3 * w + i] - x[3 * u + i], uy = x[3 * w + j] - x[3 * u + j];
    const vx = pi - x[3 * u + i], vy = pj - x[3 * u + j];
    const det = ux * vy - uy * vx;
    const tol = ORIENTATION_TOLERANCE * Math.sqrt((ux * ux + uy * uy) * (vx * vx + vy * vy));
    return det > tol ? 1 : det < -tol ? -1 : 0;
  };
  const o0 = o(a, b), o1 = o(b, c), o2 = o(c, a);
  return !((o0 > 0 || o1 > 0 || o2 > 0) && (o0 < 0 || o1 < 0 || o2 < 0));
}

/** 2D (coordinates i, j): does the closed segment [p, q] meet the closed triangle (a, b, c)? */
function coplanarSegmentMeetsTriangle(x: Float64Array, i: number, j: number, p: number, q: number, a: number, b: number, c: number): boolean {
  if (pointInTriangle2(x, i, j, p, a, b, c) || pointInTriangle2(x, i, j, q, a, b, c)) return true;
  // Both ends outside: the segment meets the triangle iff it crosses its boundary.
  return segmentsMeet2(x, i, j, p, q, a, b) || segmentsMeet2(x, i, j, p, q, b, c) || segmentsMeet2(x, i, j, p, q, c, a);
}

function pointInTriangle2(x: Float64Array, i: number, j: number, p: number, a: number, b: number, c: number): boolean {
  const s0 = orientation2(x, i, j, a, b, p);
  const s1 = orientation2(x, i, j, b, c, p);
  const s2 = orientation2(x, i, j, c, a, p);
  return !((s0 > 0 || s1 > 0 || s2 > 0) && (s0 < 0 || s1 < 0 || s2 < 0));
}

/** Closed 2D segments [p, q] and [a, b], collinear overlap included. */
function segmentsMeet2(x: Float64Array, i: number, j: number, p: number, q: number, a: number, b: number): boolean {
  const s1 = orientation2(x, i, j, p, q, a);
  const s2 = orientation2(x, i, j, p, q, b);
  if (s1 === 0 && s2 === 0) {
    // Collinear: overlap of the projections on the axis along which the segments spread most.
    const span = Math.abs(x[3 * q + i] - x[3 * p + i]) + Math.abs(x[3 * b + i] - x[3 * a + i]);
    const spanJ = Math.abs(x[3 * q + j] - x[3 * p + j]) + Math.abs(x[3 * b + j] - x[3 * a + j]);
    const k = span >= spanJ ? i : j;
    const p0 = x[3 * p + k], p1 = x[3 * q + k], a0 = x[3 * a + k], a1 = x[3 * b + k];
    return Math.max(Math.min(p0, p1), Math.min(a0, a1)) <= Math.min(Math.max(p0, p1), Math.max(a0, a1));
  }
  if (s1 !== 0 && s1 === s2) return false;
  const s3 = orientation2(x, i, j, a, b, p);
  const s4 = orientation2(x, i, j, a, b, q);
  return !(s3 !== 0 && s3 === s4);
}
