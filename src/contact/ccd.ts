/**
 * Narrow-phase continuous collision detection (CCD) for point-triangle and edge-edge pairs moving linearly from
 * t = 0 to t = 1, by additive CCD (Li et al. 2021, as ipc-toolkit implements it) plus a refinement that tells real
 * contacts from near misses.
 *
 * Conservative advancement: let D(t) be the distance between the primitives and l_p an upper bound on |D'(t)|.
 * After subtracting the mean displacement of the 4 vertices (distances are translation invariant),
 * l_p = max displacement over primitive A's vertices + max over primitive B's vertices bounds the relative
 * velocity of any pair of closest points. So D stays above the separation xi on [t, t + (D(t) - xi)/l_p), and
 * stepping by eta (D - xi)/l_p (the notes' eta (d^2 - xi^2)/((d + xi) l_p), written without the cancellation)
 * never skips a contact.
 *
 * A second bound serves pairs that stay close while they move a lot (sliding past each other): for any unit vector
 * n, the distance is at least the gap between the two primitives' vertices projected on n (each primitive is the
 * convex hull of its vertices), and with linear motion each vertex pair's projected gap is linear in t. Along the
 * direction between the closest points this gap equals D(t) and closes only as fast as the vertices approach along n,
 * not at l_p: a pair gliding 1e-8 apart over a motion of 1e-3 is cleared in one evaluation, not ~1e5 additive steps.
 * Each iteration takes the longer of the two safe steps.
 *
 * Phase 1 (additive CCD): advance until the gap D - xi drops below (1 - eta) times its initial value; the time
 * of impact (ToI) is the last time before that, so moving there keeps a gap of at least (1 - eta)(D0 - xi).
 * Phase 2 (refinement, on by default): keep advancing from there until the gap is within the tolerance (a real
 * contact: the phase-1 ToI is returned) or the safe interval reaches past t = 1 (no contact: Infinity). This
 * removes the false positives of plain additive CCD on near misses without losing conservativeness.
 *
 * Return value: the ToI in [0, 1] when the primitives come within minDistance + tolerance during [0, 1] (or might,
 * when the iteration budget ran out), else Infinity. 0 means already in contact at t = 0. A step filter takes
 * min(1, toi) over all candidate pairs (scaled by a safety factor if it wants extra room).
 */
import { closestOffset, pointTriangleDistanceSq, segmentSegmentDistanceSq } from './ccd-distance.js';

/** Anything indexable with 3 coordinates: Float64Array, number[] or a subarray view. */
export type Vec3Like = ArrayLike<number>;

export interface CcdOptions {
  /** Fraction of the safe interval taken per step (ipc-toolkit: 0.9). */
  eta?: number;
  /** Total distance evaluations allowed (both phases); when exhausted the answer is a conservative hit. */
  maxIterations?: number;
  /**
   * Gap (absolute distance) counted as contact. Default: relativeTolerance x the largest coordinate magnitude of
   * the 8 positions in the pair's own frame (relative to its first vertex at t = 0), which covers rounding in the
   * distance evaluations, and at least 1e-4 of that for the positions' magnitude in the scene (their own rounding).
   */
  tolerance?: number;
  /** See `tolerance`; default 1e-9. */
  relativeTolerance?: number;
  /** Phase 2 (tell near misses from contacts). false = plain additive CCD: any gap reduction reports a hit. */
  refine?: boolean;
}

/** Diagnostics of one query, filled when passed as `out`. */
export interface CcdStats {
  /** Distance evaluations used. */
  iterations: number;
  /** True when the iteration budget ran out (the answer is then a conservative hit). */
  exhausted: boolean;
  /** Distance at the returned ToI (the initial distance if none). */
  distanceAtToi: number;
}

export const ccdDefaults: Readonly<Required<Omit<CcdOptions, 'tolerance'>>> = {
  eta: 0.9,
  maxIterations: 100_000,
  relativeTolerance: 1e-9,
  refine: true,
};

export const NO_CONTACT = Infinity;

/** Running totals over every query of this process (for benchmarks and tests: read the difference). */
export const ccdWork = { queries: 0, distanceEvaluations: 0 };

// Packed scratch (4 vertices): positions at t = 0, mean-free displacement, positions at the current time.
const x0 = new Float64Array(12);
const dx = new Float64Array(12);
const xt = new Float64Array(12);

type DistanceSq = (x: Float64Array) => number;
const pointTriangle: DistanceSq = (x) => pointTriangleDistanceSq(x, 0, 1, 2, 3);
const edgeEdge: DistanceSq = (x) => segmentSegmentDistanceSq(x, 0, 1, 2, 3);

/**
 * Loads vertex i (a at t = 0, b at t = 1) relative to `origin` (the first vertex at t = 0): distances do not change
 * under a translation, and in the pair's own frame the tolerance follows the pair's size and motion rather than
 * where it is in the scene. Returns the largest local coordinate magnitude.
 */
function load(i: number, a: Vec3Like, b: Vec3Like, origin: Vec3Like): number {
  let scale = 0;
  for (let k = 0; k < 3; k++) {
    const p = a[k] - origin[k];
    x0[3 * i + k] = p;
    dx[3 * i + k] = b[k] - a[k];
    scale = Math.max(scale, Math.abs(p), Math.abs(p + dx[3 * i + k]));
  }
  return scale;
}

/**
 * What the relative tolerance multiplies for a query whose positions are at most `local` (per coordinate) from
 * `origin`: the local size, but no less than WORLD_FLOOR times the positions' magnitude (at most |origin| + local).
 * Far from the origin the positions carry rounding of about 2e-16 of their magnitude, and the floor keeps the
 * tolerance 450 times above it.
 */
function toleranceScale(local: number, origin: Vec3Like): number {
  const world = Math.max(Math.abs(origin[0]), Math.abs(origin[1]), Math.abs(origin[2])) + local;
  return Math.max(local, WORLD_FLOOR * world);
}

/** See toleranceScale. */
const WORLD_FLOOR = 1e-4;

function displacementNorm(i: number): number {
  return Math.hypot(dx[3 * i], dx[3 * i + 1], dx[3 * i + 2]);
}

function distanceAt(t: number, distanceSq: DistanceSq): number {
  // Positions recomputed from t = 0 (not accumulated) so rounding does not drift along the trajectory.
  for (let k = 0; k < 12; k++) xt[k] = x0[k] + t * dx[k];
  return Math.sqrt(distanceSq(xt));
}

// Per vertex, its position at the current time and its displacement, projected on the separating direction.
const along = new Float64Array(4);
const alongRate = new Float64Array(4);

/**
 * Projects the vertices at the current time (xt) and their displacements on the direction between the closest
 * points of the last distance evaluation, oriented from primitive A (vertices 0..splitAt-1) towards B. False when
 * that direction is undefined (zero distance).
 */
function projectOnSeparation(splitAt: number): boolean {
  const ox = closestOffset[0], oy = closestOffset[1], oz = closestOffset[2];
  const length = Math.hypot(ox, oy, oz);
  if (!(length > 0)) return false;
  let minA = Infinity, maxA = -Infinity, minB = Infinity, maxB = -Infinity;
  for (let i = 0; i < 4; i++) {
    const p = (xt[3 * i] * ox + xt[3 * i + 1] * oy + xt[3 * i + 2] * oz) / length;
    along[i] = p;
    alongRate[i] = (dx[3 * i] * ox + dx[3 * i + 1] * oy + dx[3 * i + 2] * oz) / length;
    if (i < splitAt) {
      minA = Math.min(minA, p);
      maxA = Math.max(maxA, p);
    } else {
      minB = Math.min(minB, p);
      maxB = Math.max(maxB, p);
    }
  }
  // The offset's sign depends on which candidate was closest: take the orientation in which A lies below B.
  if (minA - maxB > minB - maxA) {
    for (let i = 0; i < 4; i++) {
      along[i] = -along[i];
      alongRate[i] = -alongRate[i];
    }
  }
  return true;
}

/**
 * How long from the current time every vertex of B stays more than `level` above every vertex of A along the
 * projected direction (Infinity when no such gap closes, 0 when one is at or below `level` already).
 */
function separatedSpan(splitAt: number, level: number): number {
  let span = Infinity;
  for (let i = 0; i < splitAt; i++) {
    for (let j = splitAt; j < 4; j++) {
      const gap = along[j] - along[i];
      if (!(gap > level)) return 0;
      const rate = alongRate[j] - alongRate[i];
      if (rate < 0) span = Math.min(span, (gap - level) / -rate);
    }
  }
  return span;
}

function report(out: CcdStats | undefined, toi: number, iterations: number, exhausted: boolean, distance: number): number {
  ccdWork.queries++;
  ccdWork.distanceEvaluations += iterations;
  if (out) {
    out.iterations = iterations;
    out.exhausted = exhausted;
    out.distanceAtToi = distance;
  }
  return toi;
}

/** Shared driver once x0 and dx hold the 4 vertices; vertices 0..splitAt-1 form primitive A. */
function additiveCcd(
  splitAt: number,
  distanceSq: DistanceSq,
  scale: number,
  minDistance: number,
  out: CcdStats | undefined,
  options: CcdOptions | undefined,
): number {
  const eta = options?.eta ?? ccdDefaults.eta;
  const maxIterations = options?.maxIterations ?? ccdDefaults.maxIterations;
  const refine = options?.refine ?? ccdDefaults.refine;
  const tolerance = options?.tolerance ?? (options?.relativeTolerance ?? ccdDefaults.relativeTolerance) * scale;
  // Steps are sized against the true separation xi; gaps within the tolerance of it count as touching (the
  // advancement only approaches xi geometrically, so it needs a threshold to stop at).
  const xi = minDistance;
  const xiHit = minDistance + tolerance;

  for (let k = 0; k < 3; k++) {
    const mean = 0.25 * (dx[k] + dx[3 + k] + dx[6 + k] + dx[9 + k]);
    for (let i = 0; i < 4; i++) dx[3 * i + k] -= mean;
  }
  let maxA = 0, maxB = 0;
  for (let i = 0; i < 4; i++) {
    if (i < splitAt) maxA = Math.max(maxA, displacementNorm(i));
    else maxB = Math.max(maxB, displacementNorm(i));
  }
  const lp = maxA + maxB;

  let d = distanceAt(0, distanceSq);
  let iterations = 1;
  const d0 = d;
  let toi = NO_CONTACT;
  let distanceAtToi = d;

  if (!(d > xiHit)) return report(out, 0, iterations, false, d0); // touching already (also catches NaN input)
  if (lp === 0) return report(out, NO_CONTACT, iterations, false, d0);

  const targetGap = (1 - eta) * (d - xi);
  let t = 0;
  for (;;) {
    // No contact on [t, t + (d - xi)/lp); no gap below the tolerance on [t, t + (d - xiHit)/lp). The separating
    // direction gives a second safe interval: the pair is at least as far apart as its vertices' projections.
    // Past t = 1 without touching: no contact (a phase-1 ToI, if any, was a near miss).
    const separated = projectOnSeparation(splitAt);
    if (t + (d - xiHit) / lp > 1 || (separated && t + separatedSpan(splitAt, xiHit) > 1)) {
      return report(out, NO_CONTACT, iterations, false, d0);
    }
    if (iterations >= maxIterations) {
      if (toi === NO_CONTACT) {
        toi = t;
        distanceAtToi = d;
      }
      return report(out, toi, iterations, true, distanceAtToi);
    }
    // Either step keeps the distance above xi + (1 - eta) (gap now - xi) until tNext; take the longer.
    const step = Math.max((eta * (d - xi)) / lp, separated ? eta * separatedSpan(splitAt, xi) : 0);
    const tNext = Math.min(1, t + step);
    const dNext = distanceAt(tNext, distanceSq);
    iterations++;
    if (toi === NO_CONTACT && t > 0 && dNext - xi < targetGap) {
      // Phase 1 done: t still has a gap of at least targetGap. As in ipc-toolkit the first step is always taken
      // (it is safe, and this keeps the ToI above 0 whenever the primitives start apart).
      toi = t;
      distanceAtToi = d;
      if (!refine) return report(out, toi, iterations, false, distanceAtToi);
    }
    if (!(dNext > xiHit)) {
      // Touching. Phase 1 has usually ended already; not when the tolerance is a sizeable part of the first gap.
      if (toi === NO_CONTACT) {
        toi = t;
        distanceAtToi = d;
      }
      return report(out, toi, iterations, false, distanceAtToi);
    }
    t = tNext;
    d = dNext;
  }
}

/**
 * CCD of point p against triangle (t0, t1, t2), each moving linearly from the first set of positions (time 0)
 * to the second (time 1). Returns the ToI in [0, 1] or Infinity (NO_CONTACT); see the module comment.
 */
export function pointTriangleCcd(
  p0: Vec3Like, t00: Vec3Like, t10: Vec3Like, t20: Vec3Like,
  p1: Vec3Like, t01: Vec3Like, t11: Vec3Like, t21: Vec3Like,
  minDistance = 0,
  out?: CcdStats,
  options?: CcdOptions,
): number {
  const local = Math.max(load(0, p0, p1, p0), load(1, t00, t01, p0), load(2, t10, t11, p0), load(3, t20, t21, p0));
  return additiveCcd(1, pointTriangle, toleranceScale(local, p0), minDistance, out, options);
}

/**
 * CCD of edge (ea0, ea1) against edge (eb0, eb1), each vertex moving linearly from its time-0 to its time-1
 * position. Returns the ToI in [0, 1] or Infinity (NO_CONTACT); see the module comment.
 */
export function edgeEdgeCcd(
  ea00: Vec3Like, ea10: Vec3Like, eb00: Vec3Like, eb10: Vec3Like,
  ea01: Vec3Like, ea11: Vec3Like, eb01: Vec3Like, eb11: Vec3Like,
  minDistance = 0,
  out?: CcdStats,
  options?: CcdOptions,
): number {
  const local = Math.max(load(0, ea00, ea01, ea00), load(1, ea10, ea11, ea00), load(2, eb00, eb01, ea00), load(3, eb10, eb11, ea00));
  return additiveCcd(2, edgeEdge, toleranceScale(local, ea00), minDistance, out, options);
}
