import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { validateScene } from '../src/scene/validate.js';
import { simulate } from '../src/sim/simulate.js';
import type { NewtonIteration } from '../src/solver/newton.js';

const TOL = 0.01;

/** A 5 cm Neo-Hookean cube dropped from 2 cm onto the ground: free flight, a landing, contact. */
function droppedCube(integrator: string) {
  const scene = validateScene({
    name: 'dropped-cube',
    duration: 0.15,
    dt: 1 / 120,
    integrator: { name: integrator },
    solver: { tolerance: TOL },
    contact: { kappa: 1e5, dhat: 1e-3 },
    obstacles: [{ type: 'plane', name: 'ground', point: [0, 0, 0], normal: [0, 1, 0] }],
    bodies: [
      {
        name: 'cube',
        mesh: { type: 'box', size: [0.05, 0.05, 0.05], cells: [2, 2, 2] },
        transform: { translate: [0, 0.045, 0] },
        material: { model: 'neo-hookean', youngsModulus: 1e6, poissonRatio: 0.3, density: 1000 },
      },
    ],
  });
  const model = buildModel(scene, () => {
    throw new Error('no mesh files');
  });
  return { model, options: toRunOptions(scene) };
}

for (const integrator of ['implicit-euler', 'a-search']) {
  test(`Newton trace (${integrator}): one report per linear solve, consistent with the step records, and no effect on the run`, () => {
    const traced = droppedCube(integrator);
    const reports = new Map<number, NewtonIteration[]>();
    const records = new Map<number, number>();
    const withTrace = simulate(traced.model, traced.options, {
      newtonIteration(step, info, x) {
        assert.equal(x.length, traced.model.x0.length);
        if (!reports.has(step)) reports.set(step, []);
        reports.get(step)!.push({ ...info });
      },
      step(record) {
        records.set(record.step, record.newtonIterations);
      },
    });
    const plain = droppedCube(integrator);
    const without = simulate(plain.model, plain.options);

    // Reading the trace changes nothing: the same positions and velocities to the bit.
    assert.deepEqual(withTrace.state.x, without.state.x);
    assert.deepEqual(withTrace.state.v, without.state.v);
    assert.equal(withTrace.summary.newtonLimitSteps, 0);

    let landed = false;
    for (const [step, iterations] of records) {
      if (step === 0) continue;
      const list = reports.get(step) ?? [];
      // Every solve converged, so its reports are the counted iterations plus the step that confirmed convergence.
      assert.equal(list.length, iterations + 1, `step ${step}: ${list.length} reports for ${iterations} iterations`);
      list.forEach((it, k) => assert.equal(it.iteration, k, `step ${step}: iterations numbered from 0`));
      const last = list[list.length - 1];
      assert.ok(last.stepNorm <= TOL, `step ${step}: the last step is within the tolerance (${last.stepNorm} m/s)`);
      let energy = Infinity;
      for (const it of list) {
        assert.ok(it.alpha >= 0 && it.alpha <= it.filterBound && it.filterBound <= 1, `step ${step}: alpha ${it.alpha} within the filter's ${it.filterBound}`);
        // Newton takes a full step that raises the objective by round-off only (1e-13 of it) near the minimiser.
        assert.ok(it.energy <= energy + 1e-13 * Math.abs(energy), `step ${step} iteration ${it.iteration}: the objective does not rise (${energy} -> ${it.energy})`);
        assert.ok(it.linearIterations >= 1);
        energy = it.energy;
        if (it.filterBound < 1) landed = true;
      }
    }
    assert.ok(landed, 'the landing cut some step short (the filter is reported)');
  });
}
