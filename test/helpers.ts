import { Springs } from '../src/energies/springs.js';
import type { PotentialTerm } from '../src/energies/potential.js';
import { Dynamics, type SolveSettings } from '../src/integrators/dynamics.js';
import { EnergyTarget, type EnergyTargetOptions, defaultEnergyTarget } from '../src/integrators/energy-target.js';
import type { Integrator, IntegratorParams } from '../src/integrators/integrator.js';
import { findIntegrator } from '../src/integrators/registry.js';
import { createLinearSolver } from '../src/math/linear-solver.js';
import type { Model } from '../src/model/model.js';
import { parseScene } from '../src/scene/schema.js';
import { rectangleSheet } from '../src/mesh/shell-shapes.js';
import { boxGrid } from '../src/mesh/generators.js';
import { lumpedMass } from '../src/energies/elastic-tets.js';
import { main } from '../src/cli/main.js';

/**
 * The oscillator of the issue: a particle of mass m on a zero-rest-length spring of stiffness k to a fixed anchor
 * at the origin. Node 0 is the particle, node 1 the anchor.
 */
export function oscillatorModel(m = 1, k = 1, x0: [number, number, number] = [1, 0, 0], v0: [number, number, number] = [0, 0, 0]): Model {
  const terms: PotentialTerm[] = [new Springs(Uint32Array.from([0, 1]), Float64Array.from([k]), Float64Array.from([0]))];
  return {
    nNodes: 2,
    rest: Float64Array.from([...x0, 0, 0, 0]),
    x0: Float64Array.from([...x0, 0, 0, 0]),
    v0: Float64Array.from([...v0, 0, 0, 0]),
    mass: Float64Array.from([m, m, m, m, m, m]),
    constrained: Uint8Array.from([0, 0, 0, 1, 1, 1]),
    motions: [],
    terms,
    bodies: [],
    surface: new Uint32Array(0),
  };
}

export function tightSettings(overrides: Partial<SolveSettings> = {}): SolveSettings {
  return {
    tolerance: 1e-12,
    maxIterations: 50,
    projectPsd: true,
    linearSolver: createLinearSolver('ldlt'),
    rayleigh: 0,
    ...overrides,
  };
}

export interface Harness {
  dyn: Dynamics;
  target: EnergyTarget;
  integrator: Integrator;
}

export function makeIntegrator(
  model: Model,
  name: string,
  params: IntegratorParams = {},
  settings: SolveSettings = tightSettings(),
  energy: EnergyTargetOptions = defaultEnergyTarget,
): Harness {
  const dyn = new Dynamics(model, settings);
  const target = new EnergyTarget(energy);
  const integrator = findIntegrator(name).create({ dyn, target }, params);
  return { dyn, target, integrator };
}

/**
 * Two 10 cm Neo-Hookean cubes (2x2x2 cells, 1 kg each) thrown down and sideways, the second above the first, over
 * the ground plane: they hit the ground and each other within a few steps at h = 1/120 s (24 steps).
 */
export function fallingCubesScene(name: string, contact: Record<string, unknown>, integrator = 'a-search') {
  const cube = (body: string, at: [number, number, number]) => ({
    name: body,
    mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [2, 2, 2] },
    transform: { translate: at },
    velocity: { linear: [0.4, -1, 0] },
    material: { model: 'neo-hookean', youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
  });
  return parseScene({
    name,
    duration: 24 / 120,
    dt: 1 / 120,
    integrator: { name: integrator },
    solver: { linear: 'ldlt' },
    contact,
    obstacles: [{ type: 'plane' }],
    bodies: [cube('a', [0, 0.01, 0]), cube('b', [0.04, 0.114, 0.02])],
  });
}

/** Runs the CLI in-process (main) with captured output. */
export async function runCli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    stdout: { write: (s: string) => out.push(s), isTTY: false },
    stderr: { write: (s: string) => err.push(s), isTTY: false },
  });
  return { code, out: out.join(''), err: err.join('') };
}

/**
 * A strip folded into a U (shell self-contact tests and bench/shell-offset.ts): a bottom layer at y = r (x from 0 to
 * L), a half circle of radius r, a top layer at y = 3 r; 0.05 m wide, 43 x 4 cells.
 */
export function uFoldedStrip(r: number, L: number): { positions: Float64Array; triangles: Uint32Array } {
  const total = 2 * L + Math.PI * r;
  const { positions, triangles } = rectangleSheet([total, 0.05], [43, 4]);
  for (let i = 0; i < positions.length; i += 3) {
    const s = positions[i];
    let x: number, y: number;
    if (s <= L) [x, y] = [s, r];
    else if (s <= L + Math.PI * r) {
      const phi = -Math.PI / 2 + (s - L) / r;
      [x, y] = [L + r * Math.cos(phi), 2 * r + r * Math.sin(phi)];
    } else [x, y] = [L - (s - L - Math.PI * r), 3 * r];
    positions[i] = x;
    positions[i + 1] = y;
  }
  return { positions, triangles };
}

/**
 * A 0.25 x 1 x 0.25 m bar of 1 x 4 x 1 cells (eigenvalue-filter tests and bench/eigenvalue-filter.ts) with both ends
 * fixed and its top turned by `twist` about the bar's axis and moved to `squash` times its height. The free nodes
 * start on the same map (a uniformly twisted and squashed bar), or, with `topOnly`, at rest (strongly distorted next
 * to the top). Lumped masses of the given density.
 */
export function twistedSquashedBar(twist: number, squash: number, density: number, topOnly = false) {
  const mesh = boxGrid([0.25, 1, 0.25], [1, 4, 1]);
  const X = mesh.positions;
  const nNodes = X.length / 3;
  const mass = new Float64Array(3 * nNodes);
  lumpedMass(X, mesh.tets, density, mass);
  const constrained = new Uint8Array(3 * nNodes);
  const x = new Float64Array(X);
  for (let i = 0; i < nNodes; i++) {
    const y = X[3 * i + 1];
    if (y < 1e-9 || y > 1 - 1e-9) constrained.fill(1, 3 * i, 3 * i + 3);
    if (topOnly && y < 1 - 1e-9) continue;
    const a = twist * y;
    const cx = X[3 * i] - 0.125;
    const cz = X[3 * i + 2] - 0.125;
    x[3 * i] = 0.125 + Math.cos(a) * cx - Math.sin(a) * cz;
    x[3 * i + 1] = squash * y;
    x[3 * i + 2] = 0.125 + Math.sin(a) * cx + Math.cos(a) * cz;
  }
  return { rest: X, tets: mesh.tets, nNodes, x, mass, constrained };
}
