/**
 * Contact invariants of a configuration: IPC keeps every pair of surfaces apart, so after a step nothing may
 * intersect. Two queries over a CollisionMesh:
 *
 *   - findIntersection: the first violation found, in this order
 *       (a) a surface edge crossing a surface triangle it shares no node with (coplanar overlap counts),
 *       (b) a collision vertex that is not fixed on or below a plane (normal . p - offset <= 0),
 *       (c) a vertex-triangle or edge-edge pair at distance exactly 0;
 *   - minimumDistance: the smallest vertex-triangle / edge-edge distance within a search radius, and the signed
 *     distance of every free vertex to every plane.
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
import { type CollisionMesh, describeEdge, describeTriangle, describeVertex, planeSignedDistance } from './collision-mesh.js';
import { edgeEdgeDistance2, pointTriangleDistance2 } from './distance.js';

export interface IntersectionReport {
  kind: 'edge-triangle' | 'vertex-plane' | 'vertex-triangle' | 'edge-edge';
  /** Names both primitives, e.g. "edge 5 (nodes 3, 4) of body 'ball' intersects triangle 7 (...) of obstacle 'stairs'". */
  message: string;
}

export interface MinimumDistance {
  /** Unsigned for vertex-triangle and edge-edge pairs; signed (negative below) for planes. */
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

// One broad phase per collision mesh, so repeated checks on one model reuse its buffers.
const broadPhases = new WeakMap<CollisionMesh, SpatialHashBroadPhase>();

function broadPhaseOf(mesh: CollisionMesh): SpatialHashBroadPhase {
  let bp = broadPhases.get(mesh);
  if (bp === undefined) {
    bp = new SpatialHashBroadPhase(
      { vertices: mesh.vertices, edges: mesh.edges, triangles: mesh.triangles },
      { fixedNodes: mesh.fixedNodes },
    );
    broadPhases.set(mesh, bp);
  }
  return bp;
}

/** Whether a pair of primitives whose first nodes are a and b is excluded by the groups' selfContact flags. */
function skippedBySelfContact(mesh: CollisionMesh, a: number, b: number): boolean {
  const g = mesh.groupOfNode[a];
  return g >= 0 && g === mesh.groupOfNode[b] && !mesh.groups[g].selfContact;
}

// Packed stencil for the distance functions.
const stencil = new Float64Array(12);

function packStencil(x: Float64Array, a: number, b: number, c: number, d: number): Float64Array {
  for (let k = 0; k < 3; k++) {
    stencil[k] = x[3 * a + k];
    stencil[3 + k] = x[3 * b + k];
    stencil[6 + k] = x[3 * c + k];
    stencil[9 + k] = x[3 * d + k];
  }
  return stencil;
}

export function findIntersection(mesh: CollisionMesh, x: Float64Array): IntersectionReport | null {
  const bp = broadPhaseOf(mesh);
  const E = mesh.edges, T = mesh.triangles;

  // (a) edges through triangles.
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

  // (b) free vertices on or below a plane.
  for (const plane of mesh.planes) {
    for (let i = 0; i < mesh.vertices.length; i++) {
      const v = mesh.vertices[i];
      if (mesh.fixedNodes[v] !== 0) continue;
      const s = planeSignedDistance(plane, x, v);
      if (s <= 0) {
        return {
          kind: 'vertex-plane',
          message: `${describeVertex(mesh, v)} lies on or below plane '${plane.name}' (signed distance ${s})`,
        };
      }
    }
  }

  // (c) pairs touching exactly: boxes without inflation list every pair at distance 0.
  bp.findProximityCandidates(x, 0);
  for (let k = 0; k < bp.vertexTriangleCount; k++) {
    const v = bp.vertexTrianglePairs[2 * k], t = bp.vertexTrianglePairs[2 * k + 1];
    const a = T[3 * t], b = T[3 * t + 1], c = T[3 * t + 2];
    if (skippedBySelfContact(mesh, v, a)) continue;
    if (pointTriangleDistance2(packStencil(x, v, a, b, c)) === 0) {
      return { kind: 'vertex-triangle', message: `${describeVertex(mesh, v)} touches ${describeTriangle(mesh, t)} (distance 0)` };
    }
  }
  for (let k = 0; k < bp.edgeEdgeCount; k++) {
    const ea = bp.edgeEdgePairs[2 * k], eb = bp.edgeEdgePairs[2 * k + 1];
    const a0 = E[2 * ea], a1 = E[2 * ea + 1], b0 = E[2 * eb], b1 = E[2 * eb + 1];
    if (skippedBySelfContact(mesh, a0, b0)) continue;
    if (edgeEdgeDistance2(packStencil(x, a0, a1, b0, b1)) === 0) {
      return { kind: 'edge-edge', message: `${describeEdge(mesh, ea)} touches ${describeEdge(mesh, eb)} (distance 0)` };
    }
  }
  return null;
}

/**
 * Smallest distance over the vertex-triangle and edge-edge pairs closer than searchRadius (pairs farther away are
 * ignored) and over every free vertex against every plane (signed, no radius limit). null when no pair is within
 * the radius and there is no plane (or no free vertex). The radius sizes the broad phase's boxes, so keep it to the
 * scale of the contact gap (dhat or a few times it).
 */
export function minimumDistance(mesh: CollisionMesh, x: Float64Array, searchRadius: number): MinimumDistance | null {
  if (!(searchRadius >= 0 && Number.isFinite(searchRadius))) {
    throw new Error(`minimumDistance: searchRadius must be finite and >= 0, got ${searchRadius}`);
  }
  const bp = broadPhaseOf(mesh);
  const E = mesh.edges, T = mesh.triangles;
  const r2 = searchRadius * searchRadius;
  // Best pair so far, squared; described only once at the end.
  let best2 = Infinity;
  let bestKind = 0; // 1 vertex-triangle, 2 edge-edge
  let bestA = -1, bestB = -1;

  bp.findProximityCandidates(x, searchRadius);
  for (let k = 0; k < bp.vertexTriangleCount; k++) {
    const v = bp.vertexTrianglePairs[2 * k], t = bp.vertexTrianglePairs[2 * k + 1];
    const a = T[3 * t], b = T[3 * t + 1], c = T[3 * t + 2];
    if (skippedBySelfContact(mesh, v, a)) continue;
    const d2 = pointTriangleDistance2(packStencil(x, v, a, b, c));
    if (d2 <= r2 && d2 < best2) {
      best2 = d2;
      bestKind = 1;
      bestA = v;
      bestB = t;
    }
  }
  for (let k = 0; k < bp.edgeEdgeCount; k++) {
    const ea = bp.edgeEdgePairs[2 * k], eb = bp.edgeEdgePairs[2 * k + 1];
    const a0 = E[2 * ea], a1 = E[2 * ea + 1], b0 = E[2 * eb], b1 = E[2 * eb + 1];
    if (skippedBySelfContact(mesh, a0, b0)) continue;
    const d2 = edgeEdgeDistance2(packStencil(x, a0, a1, b0, b1));
    if (d2 <= r2 && d2 < best2) {
      best2 = d2;
      bestKind = 2;
      bestA = ea;
      bestB = eb;
    }
  }

  let best = Math.sqrt(best2);
  let bestPlane = -1;
  let bestVertex = -1;
  mesh.planes.forEach((plane, pi) => {
    for (let i = 0; i < mesh.vertices.length; i++) {
      const v = mesh.vertices[i];
      if (mesh.fixedNodes[v] !== 0) continue;
      const s = planeSignedDistance(plane, x, v);
      if (s < best) {
        best = s;
        bestPlane = pi;
        bestVertex = v;
      }
    }
  });

  if (bestPlane >= 0) {
    return {
      distance: best,
      message: `${describeVertex(mesh, bestVertex)} and plane '${mesh.planes[bestPlane].name}' at signed distance ${best}`,
    };
  }
  if (bestKind === 1) {
    return { distance: best, message: `${describeVertex(mesh, bestA)} and ${describeTriangle(mesh, bestB)} at distance ${best}` };
  }
  if (bestKind === 2) {
    return { distance: best, message: `${describeEdge(mesh, bestA)} and ${describeEdge(mesh, bestB)} at distance ${best}` };
  }
  return null;
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
  return !(anyPositive && anyNegative);
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
