/**
 * The scenes of the in-browser demo: built-in scenes of the package at a resolution a browser tab computes in
 * seconds. Each is the scene file itself (the same JSON the command line runs) with a coarser mesh; the bouncing
 * ball's mesh is a box grid mapped onto the ball (the shipped 7,138-tet ball needs file I/O and minutes). Pure: the
 * Node tests build the same scenes to compare the browser's energies with a Node run.
 */

import oscillatorJson from '../../scenes/oscillator.json' with { type: 'json' };
import cubeJson from '../../scenes/rotating-cube-soft.json' with { type: 'json' };
import ballJson from '../../scenes/bouncing-ball-medium.json' with { type: 'json' };
import { boxGrid, type TetMesh } from '../../src/mesh/generators.js';
import type { MeshResolver } from '../../src/scene/build.js';
import { toRunOptions } from '../../src/scene/run-options.js';
import { parseScene, type Scene } from '../../src/scene/schema.js';
import type { IntegratorParams } from '../../src/integrators/integrator.js';
import type { RunOptions } from '../../src/sim/simulate.js';

export interface DemoScene {
  name: string;
  title: string;
  /** What differs from the built-in scene it comes from. */
  note: string;
  /** Simulated seconds run by default (the scene files run longer). */
  duration: number;
  /** The scene JSON with the demo's coarser mesh. */
  input: Record<string, unknown>;
}

/** Cells per side of the demo ball's grid (125 nodes, 384 tets). */
export const DEMO_BALL_CELLS = 4;

function withBody(json: object, change: (body: Record<string, unknown>) => void): Record<string, unknown> {
  const input = structuredClone(json) as Record<string, unknown> & { bodies: Record<string, unknown>[] };
  change(input.bodies[0]);
  return input;
}

export const DEMO_SCENES: readonly DemoScene[] = [
  {
    name: 'bouncing-ball',
    title: 'Bouncing ball',
    note: `bouncing-ball-medium with a ${DEMO_BALL_CELLS}×${DEMO_BALL_CELLS}×${DEMO_BALL_CELLS}-cell ball (384 tets instead of 7,138)`,
    duration: 3,
    input: withBody(ballJson, (body) => {
      body.mesh = { type: 'builtin', name: 'ball' };
    }),
  },
  {
    name: 'rotating-cube',
    title: 'Rotating cube',
    note: 'rotating-cube-soft with 5×5×5 cells (750 tets instead of 6,000)',
    duration: 5,
    input: withBody(cubeJson, (body) => {
      body.mesh = { type: 'box', size: [0.1, 0.1, 0.1], cells: [5, 5, 5] };
    }),
  },
  {
    name: 'oscillator',
    title: 'Oscillator',
    note: 'the oscillator scene as it is',
    duration: 20,
    input: structuredClone(oscillatorJson) as Record<string, unknown>,
  },
];

export function findDemoScene(name: string): DemoScene {
  const found = DEMO_SCENES.find((s) => s.name === name);
  if (!found) throw new Error(`unknown demo scene '${name}'; allowed: ${DEMO_SCENES.map((s) => s.name).join(', ')}`);
  return found;
}

export interface DemoSettings {
  integrator?: string;
  params?: IntegratorParams;
  dt?: number;
  duration?: number;
}

/** The validated scene of a demo with the chosen integrator, parameters, step and duration. */
export function demoScene(name: string, settings: DemoSettings = {}): Scene {
  const demo = findDemoScene(name);
  const input = structuredClone(demo.input) as Record<string, unknown> & { integrator?: { name?: string; params?: IntegratorParams } };
  const integrator = settings.integrator ?? input.integrator?.name ?? 'a-search';
  const sameIntegrator = integrator === (input.integrator?.name ?? 'a-search');
  input.integrator = { name: integrator, params: { ...(sameIntegrator ? input.integrator?.params : {}), ...settings.params } };
  if (settings.dt !== undefined) input.dt = settings.dt;
  input.duration = settings.duration ?? demo.duration;
  return parseScene(input, `demo scene ${name}`);
}

/** Gives the demo ball for the 'ball' built-in mesh (the only mesh the demo scenes take from outside). */
export const demoMeshes: MeshResolver = (body, index) => {
  if (body.mesh.type === 'builtin' && body.mesh.name === 'ball') return gridBall(0.05, DEMO_BALL_CELLS);
  throw new Error(`bodies[${index}].mesh: the demo has no mesh '${JSON.stringify(body.mesh)}'`);
};

/** The simulate() options of a demo scene (the same mapping as the command line's). */
export function demoRunOptions(scene: Scene): RunOptions {
  return toRunOptions(scene);
}

/**
 * A ball of tets: a box grid of cells^3 cells on [-1, 1]^3 mapped onto the unit ball by the smooth cube-to-sphere
 * map (x sqrt(1 - y^2/2 - z^2/2 + y^2 z^2/3), ... ), which sends the cube's faces onto the sphere, then scaled to
 * `radius`. The map is one-to-one, so no tet inverts; those at the cube's corners are the flattest.
 */
export function gridBall(radius: number, cells: number): TetMesh {
  const mesh = boxGrid([2, 2, 2], [cells, cells, cells], { origin: [-1, -1, -1] });
  const p = mesh.positions;
  for (let i = 0; i < p.length; i += 3) {
    const x = p[i];
    const y = p[i + 1];
    const z = p[i + 2];
    const x2 = x * x;
    const y2 = y * y;
    const z2 = z * z;
    p[i] = radius * x * Math.sqrt(1 - y2 / 2 - z2 / 2 + (y2 * z2) / 3);
    p[i + 1] = radius * y * Math.sqrt(1 - z2 / 2 - x2 / 2 + (z2 * x2) / 3);
    p[i + 2] = radius * z * Math.sqrt(1 - x2 / 2 - y2 / 2 + (x2 * y2) / 3);
  }
  return mesh;
}
