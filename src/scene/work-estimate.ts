/**
 * What a run will cost, estimated from the validated scene before anything is built: steps, nodes, tets, memory
 * and output size, and the limits above which the CLI refuses a run unless the user raises them. An absurd request
 * (2e9 steps, a 1000^3-cell box, a 100^3 `repeat`) is refused in milliseconds instead of growing until the machine
 * gives out. Pure: the sizes of file meshes come from the caller (one read of each file; `repeat` multiplies them).
 */

import { shellShapeSize } from '../mesh/shell-shapes.js';
import { findIntegrator } from '../integrators/registry.js';
import { AUTO_SOLVER_LIMITS } from '../math/linear-solver.js';
import { frameInterval } from '../sim/simulate.js';
import { SceneError, type BodyDef, type Scene } from './schema.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** The default limits of one run (`vivace run`; each run of `vivace compare`, whose outputs add up). */
export const WORK_LIMITS = {
  /** Time steps: a million steps of the smallest scene take minutes and write ~300 MB of metrics. */
  steps: 1_000_000,
  /** Estimated peak memory. */
  memoryBytes: 8 * GiB,
  /** Estimated size of metrics.csv, bodies.csv and frames/ together. */
  outputBytes: 10 * GiB,
  /**
   * Bodies after `repeat`: each body costs about 1 ms to set up (measured: 27,000 boxes of one cell built in 26 s),
   * so a 100^3 `repeat` would spend a quarter of an hour building before its first step.
   */
  bodies: 10_000,
} as const;

export type WorkLimits = { [K in keyof typeof WORK_LIMITS]: number };

/**
 * Memory model, fitted to the peak RSS of one-step runs of boxes on the ground (10^3 to 40^3 cells): about 150 MiB
 * for the process (Node, tsx, the plot library), 600 bytes per node and 450 per tet (state, mass, element data,
 * the sparse Hessian, contact mesh), plus the sparse Cholesky factor of the direct solvers, whose fill grows as
 * dofs^(4/3) in a 3D mesh (nested dissection): 270 bytes x dofs^(4/3) matched 27,783 and 89,373 DOFs within 2%.
 * The energy series kept for the plot costs 40 bytes per step.
 */
const MEMORY_MODEL = { baseBytes: 150 * MiB, perNode: 600, perTet: 450, factorPerDof43: 270, perStep: 40 };

/** Output model: a metrics.csv row of ~25 columns, a bodies.csv row per body and frame, and OBJ frame lines (`v x y z`, `f a b c`). */
const OUTPUT_MODEL = { metricsRowBytes: 300, bodiesRowBytes: 180, frameVertexBytes: 45, frameTriangleBytes: 15 };

export interface MeshSize {
  nodes: number;
  tets: number;
}

/** The size of a body's 'file' or 'builtin' mesh (`index` is the body's place in `scene.bodies`). */
export type MeshSizer = (body: BodyDef, index: number) => MeshSize;
/** Vertices and triangles of a `mesh` obstacle (obstacles[index]), read by the caller. */
export type SurfaceSizer = (obstacle: Extract<Scene['obstacles'][number], { type: 'mesh' }>, index: number) => { nodes: number; triangles: number };

export interface WorkEstimate {
  steps: number;
  frames: number;
  nodes: number;
  tets: number;
  /** Bodies after `repeat`. */
  bodies: number;
  /** Estimated peak memory of the run (bytes). */
  memoryBytes: number;
  /** Estimated size of metrics.csv, bodies.csv and the frames of all runs (bytes). */
  outputBytes: number;
}

/** A request refused by checkWork; `field` says what to change: the scene's dt or duration, or a limit. */
export class WorkError extends SceneError {
  override name = 'WorkError';
  constructor(
    readonly field: 'dt' | 'duration' | 'steps' | 'bodies' | 'memory' | 'output',
    message: string,
  ) {
    super(message);
  }
}

/** Steps of a run: round(duration / dt), as simulate() takes them. */
export function stepCount(scene: Pick<Scene, 'duration' | 'dt'>): number {
  return Math.round(scene.duration / scene.dt);
}

/** Nodes, tets and drawn surface of one copy of a body, from its description (a box) or the caller (a file). */
function bodySize(body: BodyDef, index: number, meshSize: MeshSizer): { nodes: number; tets: number; drawnNodes: number; triangles: number } {
  const mesh = body.mesh;
  if (mesh.type === 'particles') return { nodes: mesh.positions.length, tets: 0, drawnNodes: mesh.positions.length, triangles: 0 };
  if (mesh.type === 'box') {
    const [a, b, c] = mesh.cells;
    const nodes = (a + 1) * (b + 1) * (c + 1);
    return { nodes, tets: mesh.tetsPerCell * a * b * c, drawnNodes: nodes - Math.max(0, (a - 1) * (b - 1) * (c - 1)), triangles: 4 * (a * b + b * c + c * a) };
  }
  if (mesh.type === 'chain') return { nodes: mesh.cells + 1, tets: 0, drawnNodes: mesh.cells + 1, triangles: 0 };
  if (mesh.type === 'torus') {
    const n = mesh.segments * mesh.sides;
    return { nodes: n, tets: 0, drawnNodes: n, triangles: 2 * n };
  }
  if (mesh.type === 'shell') {
    // A surface file has about twice as many triangles as nodes.
    const { nodes, triangles } = mesh.shape.type === 'file' ? { nodes: meshSize(body, index).nodes, triangles: 2 * meshSize(body, index).nodes } : shellShapeSize(mesh.shape);
    return { nodes, tets: 0, drawnNodes: nodes, triangles };
  }
  const { nodes, tets } = meshSize(body, index);
  // A compact solid shows about 6 n^(2/3) of its n nodes on the surface (a cube exactly), with twice as many triangles.
  const drawnNodes = Math.min(nodes, 6 * Math.cbrt(nodes) ** 2);
  return { nodes, tets, drawnNodes, triangles: 2 * drawnNodes };
}

/** The work of `runs` runs of the scene (compare: one per integrator), from its description only. */
export function estimateWork(scene: Scene, meshSize: MeshSizer, runs = 1, surfaceSize?: SurfaceSizer): WorkEstimate {
  let nodes = 0;
  let tets = 0;
  let bodies = 0;
  let drawnNodes = 0;
  let triangles = 0;
  scene.bodies.forEach((body, index) => {
    const copies = body.repeat ? body.repeat.counts[0] * body.repeat.counts[1] * body.repeat.counts[2] : 1;
    const one = bodySize(body, index, meshSize);
    bodies += copies;
    nodes += copies * one.nodes;
    tets += copies * one.tets;
    drawnNodes += copies * one.drawnNodes;
    triangles += copies * one.triangles;
  });
  for (const [index, o] of scene.obstacles.entries()) {
    if (o.type === 'mesh' && surfaceSize) {
      const size = surfaceSize(o, index);
      nodes += size.nodes;
      drawnNodes += size.nodes;
      triangles += size.triangles;
    }
    if (o.type !== 'stairs') continue;
    // stairsSurface: a profile of 2 steps + 1 points, two nodes and (between points) two triangles each.
    nodes += 4 * o.steps + 2;
    drawnNodes += 4 * o.steps + 2;
    triangles += 4 * o.steps;
  }
  const steps = stepCount(scene);
  const frames = Math.floor(steps / frameInterval({ frameRate: scene.frameRate, h: scene.dt })) + 1;
  const dofs = 3 * nodes;
  const m = MEMORY_MODEL;
  const linear = scene.solver.linear;
  // 'auto' factors only while the factor stays within its memory limit, else it runs PCG (no factor).
  const factorModel = m.factorPerDof43 * dofs ** (4 / 3);
  const factorBytes = !findIntegrator(scene.integrator.name).implicit || linear === 'pcg' ? 0 : linear === 'auto' ? (factorModel <= AUTO_SOLVER_LIMITS.maxFactorBytes ? factorModel : 0) : factorModel;
  const memoryBytes = m.baseBytes + m.perNode * nodes + m.perTet * tets + factorBytes + m.perStep * steps;
  const o = OUTPUT_MODEL;
  const frameBytes = o.frameVertexBytes * drawnNodes + o.frameTriangleBytes * triangles;
  const outputBytes = runs * ((steps + 1) * o.metricsRowBytes + frames * (frameBytes + bodies * o.bodiesRowBytes));
  return { steps, frames, nodes, tets, bodies, memoryBytes, outputBytes };
}

/** Refuses a run without steps, or one above a limit, naming the number and the limit. */
export function checkWork(scene: Pick<Scene, 'duration' | 'dt'>, work: WorkEstimate, limits: WorkLimits = WORK_LIMITS): void {
  if (!(scene.duration > 0)) throw new WorkError('duration', `duration must be positive (got ${scene.duration} s): a run of no time has no step`);
  if (work.steps < 1) {
    throw new WorkError('dt', `dt = ${scene.dt} s gives no step over the duration of ${scene.duration} s (steps = round(duration / dt) = 0)`);
  }
  const size = `${count(work.nodes)} nodes, ${count(work.tets)} tets${work.bodies > 1 ? ` in ${count(work.bodies)} bodies` : ''}`;
  if (work.steps > limits.steps) {
    throw new WorkError('steps', `the run would take ${count(work.steps)} steps (duration ${scene.duration} s / dt ${scene.dt} s), above the limit of ${count(limits.steps)} steps`);
  }
  if (work.bodies > limits.bodies) {
    throw new WorkError('bodies', `the scene has ${count(work.bodies)} bodies (${size}), above the limit of ${count(limits.bodies)} bodies`);
  }
  if (work.memoryBytes > limits.memoryBytes) {
    throw new WorkError('memory', `the run would need about ${bytes(work.memoryBytes)} of memory (${size}), above the limit of ${bytes(limits.memoryBytes)}`);
  }
  if (work.outputBytes > limits.outputBytes) {
    throw new WorkError(
      'output',
      `the run would write about ${bytes(work.outputBytes)} (${count(work.steps + 1)} metrics rows, ${count(work.frames)} frames of ${size}), above the limit of ${bytes(limits.outputBytes)}`,
    );
  }
}

/** 2,000,000,000 up to a trillion, then 1.0e+15. */
function count(n: number): string {
  return n < 1e12 ? Math.round(n).toLocaleString('en-US') : n.toExponential(1);
}

/** Bytes in binary units: 350 MiB, 8 GiB, 2.5 TiB. */
export function bytes(b: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let x = b;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  if (!Number.isFinite(x) || x >= 1024) return `${b.toExponential(1)} bytes`;
  return `${Number(x.toPrecision(x < 10 ? 2 : 3))} ${units[i]}`;
}
