/**
 * Projected Newton's eigenvalue filters (solver.hessianProjection) on small static problems, the setting of
 * "Trust-Region Eigenvalue Filtering for Projected Newton": a 0.25 x 1 x 0.25 m bar (1 x 4 x 1 cells, E = 1e5 Pa,
 * nu = 0.45) with its bottom fixed and its top squashed and twisted; either every node starts on the same map (a
 * uniformly deformed bar) or only the top is moved (--top-only: the nodes next to it start strongly distorted).
 * The inertia term has a tiny density (1e-3 kg/m^3: nearly static) or 10 kg/m^3. Newton runs 200 iterations with
 * its stop rule out of reach; printed per filter: the iterations until the energy is within 1e-8 of the decrease of
 * the final one, and the final energy (J), so a filter that ends in another local minimum shows.
 *
 *   npx tsx bench/eigenvalue-filter.ts [--top-only]
 */
import { ElasticTets } from '../src/energies/elastic-tets.js';
import { HESSIAN_PROJECTIONS, type HessianProjection } from '../src/energies/eigenvalue-filter.js';
import { createMaterial, type MaterialModel } from '../src/energies/materials.js';
import { createLinearSolver } from '../src/math/linear-solver.js';
import type { Model } from '../src/model/model.js';
import { IncrementalPotential } from '../src/solver/incremental-potential.js';
import { NewtonSolver } from '../src/solver/newton.js';
import { twistedSquashedBar } from '../test/helpers.js';

const topOnly = process.argv.includes('--top-only');

function solve(model: MaterialModel, twist: number, squash: number, density: number, projection: HessianProjection): string {
  const { rest: X, tets, nNodes: n, x, mass, constrained } = twistedSquashedBar(twist, squash, density, topOnly);
  const term = new ElasticTets(X, tets, createMaterial(model, { youngsModulus: 1e5, poissonRatio: 0.45 }));
  const m: Model = { nNodes: n, rest: X, x0: Float64Array.from(x), v0: new Float64Array(3 * n), mass, constrained, motions: [], terms: [term], bodies: [], surface: new Uint32Array(0) };
  const ip = new IncrementalPotential(m);
  ip.predictor.set(x);
  const energies = [ip.value(x)];
  try {
    new NewtonSolver().minimize(ip, x, {
      tolerance: 1e-14, h: 1, maxIterations: 200, projectPsd: true, hessianProjection: projection, linearSolver: createLinearSolver('ldlt'),
      afterIteration: (y) => {
        energies.push(ip.value(y));
        return false;
      },
    });
  } catch (err) {
    return `failed (${(err as Error).message.slice(0, 40)})`;
  }
  const final = energies[energies.length - 1];
  const reached = energies.findIndex((e) => e - final <= 1e-8 * (energies[0] - final));
  return `${String(reached).padStart(3)} it, E ${final.toPrecision(8)}`;
}

console.log(`bar 1 x 4 x 1 cells, ${topOnly ? 'only the top moved' : 'every node on the map'}; iterations to 1e-8 of the decrease, final energy`);
for (const model of ['neo-hookean', 'stable-neo-hookean'] as MaterialModel[]) {
  for (const [twist, squash] of [[0, 0.5], [Math.PI / 2, 1], [Math.PI / 2, 0.6], [0, 2], [Math.PI / 2, 1.5]]) {
    if (topOnly && model === 'neo-hookean') continue; // inverted tets at the start: infinite energy
    for (const density of [1e-3, 10]) {
      const cells = HESSIAN_PROJECTIONS.map((p) => `${p} ${solve(model, twist, squash, density, p)}`);
      console.log(`${model.padEnd(18)} twist ${twist.toFixed(2)} squash ${squash} density ${density}: ${cells.join('  |  ')}`);
    }
  }
}
