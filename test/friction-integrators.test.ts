/**
 * Friction through every integrator: each implicit stage solve applies the lagged friction at the velocity that stage
 * produces, and every integrator reports the work the friction force did over the step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findIntersection } from '../src/contact/intersection.js';
import { integrators } from '../src/integrators/registry.js';
import { toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';

const MU = 0.5;
const G = 9.8;
const V0 = 2;
const H = 0.01;

/**
 * A 1 kg slab (20 x 2.5 x 20 cm, one cell) on the ground with mu = 0.5, moving at `speed` along x. Flat, so the
 * friction's torque barely shifts its weight between the front and back corners.
 */
function slabScene(integrator: string, duration: number, speed: number) {
  return parseScene({
    name: 'slide',
    duration,
    dt: H,
    integrator: { name: integrator },
    contact: { kappa: 1e5, dhat: 1e-3, friction: MU },
    obstacles: [{ type: 'plane' }],
    bodies: [
      {
        name: 'slab',
        mesh: { type: 'box', size: [0.2, 0.025, 0.2], cells: [1, 1, 1] },
        transform: { translate: [0, 0.00105, 0] },
        velocity: { linear: [speed, 0, 0] },
        material: { model: 'neo-hookean', youngsModulus: 1e7, poissonRatio: 0.3, density: 1000 },
      },
    ],
  });
}

/**
 * Resting positions on the barrier: implicit Euler lets the slab settle from just above d^. Every integrator starts
 * there, so the test sees the slide and not a landing, whose bounce the non-dissipative integrators (midpoint,
 * trapezoidal) keep: the normal force lagged at x_n then samples that ringing instead of m g.
 */
function restingPositions(): Float64Array {
  const s = slabScene('implicit-euler', 0.2, 0);
  const { state, summary } = simulate(buildModel(s), toRunOptions(s));
  assert.equal(summary.stopped, undefined);
  for (const v of state.v) assert.ok(Math.abs(v) < 1e-6, `settled: |v| = ${Math.abs(v)}`);
  return state.x;
}

test('friction: a 1 kg box sliding at 2 m/s with mu = 0.5 decelerates at mu g under every implicit integrator, and the reported loss is the work friction did', () => {
  const resting = restingPositions();
  const implicit = integrators.filter((s) => s.implicit);
  assert.ok(implicit.length >= 10, 'the registry lists the implicit integrators');
  const rows: string[] = [];
  for (const spec of implicit) {
    const s = slabScene(spec.name, 0.3, V0);
    const model = buildModel(s);
    model.x0.set(resting);
    let mass = 0;
    for (let d = 0; d < model.mass.length; d += 3) mass += model.mass[d];
    assert.ok(Math.abs(mass - 1) < 1e-12);
    const speeds: number[] = [];
    const losses: number[] = [];
    const { summary } = simulate(model, { ...toRunOptions(s), contactChecks: 'steps' as const }, {
      step(rec) {
        speeds.push(rec.momentum[0] / mass);
        losses.push(rec.frictionLoss);
        assert.equal(rec.inverted, 0, `${spec.name}: inverted tets at step ${rec.step}`);
        assert.equal(rec.dissipated, rec.frictionLoss, `${spec.name}: without damping, all that is dissipated is friction`);
        assert.ok(rec.frictionLoss >= 0, `${spec.name}: friction never adds energy`);
      },
      check(_step, x) {
        assert.equal(findIntersection(model.contact!.mesh, x), null);
      },
    });
    assert.equal(summary.stopped, undefined, `${spec.name}: ${summary.stopped}`);
    // From step k on (after the start, where Newmark's a_0 and BDF2's implicit Euler step sit) to the end, while the
    // slab still slides (v = 2 - 4.9 t > 0.5 m/s).
    const k = 2;
    const last = speeds.length - 1;
    const decel = (speeds[k] - speeds[last]) / ((last - k) * H);
    const keLost = 0.5 * mass * (speeds[k] ** 2 - speeds[last] ** 2);
    let work = 0;
    let ownLoss = 0; // implicit Euler's own dissipation m |dv|^2 / 2 per step, the bound for first-order steps
    for (let i = k + 1; i <= last; i++) {
      work += losses[i];
      ownLoss += 0.5 * mass * (speeds[i] - speeds[i - 1]) ** 2;
    }
    const order = spec.order({});
    rows.push(`${spec.name}: deceleration ${(decel / (MU * G)).toFixed(4)} mu g, friction work / kinetic energy lost ${(work / keLost).toFixed(4)} (order ${order})`);
    assert.ok(Math.abs(decel - MU * G) < 0.03 * MU * G, `${spec.name}: deceleration ${decel} vs mu g = ${MU * G}`);
    // Second-order steps are exact for the constant friction force: its work is the kinetic energy lost. First-order
    // ones lose their own m |dv|^2 / 2 per step besides, never less than the friction's work.
    const slack = 0.005 * keLost;
    const gap = keLost - work;
    const allowed = order >= 2 ? 0 : ownLoss;
    assert.ok(gap > -slack && gap < allowed + slack, `${spec.name}: friction work ${work} vs kinetic energy lost ${keLost} (own dissipation up to ${allowed})`);
  }
  if (process.env.VIVACE_TEST_VERBOSE) console.log(rows.join('\n'));
});

test('dissipation rule: explicit methods refuse friction and Rayleigh damping, blending refuses damping, each naming who accepts it', () => {
  const withFriction = slabScene('rk4', 0.01, 0);
  for (const spec of integrators.filter((s) => !s.implicit)) {
    assert.throws(
      () => simulate(buildModel(withFriction), { ...toRunOptions(withFriction), integrator: spec.name }),
      (err: Error) => err.message.startsWith(`${spec.name}: friction acts through the implicit solve`) && err.message.includes('implicit-euler, bdf2, implicit-midpoint'),
    );
  }
  const damped = parseScene({
    name: 'damped',
    duration: 0.01,
    dt: H,
    damping: { rayleigh: 0.01 },
    bodies: [{ name: 'cube', mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] }, material: { model: 'neo-hookean', youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 } }],
  });
  const refusing = integrators.filter((s) => s.noRayleigh).map((s) => s.name);
  assert.deepEqual(refusing, ['explicit-euler', 'symplectic-euler', 'rk4', 'blending']);
  for (const spec of integrators) {
    const run = () => simulate(buildModel(damped), { ...toRunOptions(damped), integrator: spec.name });
    if (spec.noRayleigh) {
      assert.throws(run, (err: Error) => err.message.startsWith(`${spec.name}: Rayleigh damping is not supported`) && !err.message.includes('blending,') && err.message.includes('sdirk2'));
    } else {
      assert.equal(run().summary.stopped, undefined, spec.name);
    }
  }
});

test("contact.frictionVelocity 'newton-tolerance': eps_v is the solver's tolerance (the same run as that number), and bad values name the field", () => {
  // A slab slowing to a stop: the last steps are inside the smoothing zone, where eps_v changes the motion.
  const run = (frictionVelocity: unknown, tolerance?: number) => {
    const s = slabScene('implicit-euler', 0.3, 0.5);
    const input = JSON.parse(JSON.stringify(s));
    const scene = parseScene({ ...input, contact: { ...input.contact, frictionVelocity }, ...(tolerance ? { solver: { tolerance } } : {}) });
    const { state, summary } = simulate(buildModel(scene), toRunOptions(scene));
    assert.equal(summary.stopped, undefined);
    return Array.from(state.x);
  };
  const atTolerance = run('newton-tolerance');
  assert.deepEqual(atTolerance, run(0.01), "the default tolerance 0.01: eps_v = 0.01 m/s");
  assert.notDeepEqual(atTolerance, run(1e-3), 'eps_v changes the slide');
  assert.deepEqual(run('newton-tolerance', 0.002), run(0.002, 0.002), 'a given tolerance');
  const base = JSON.parse(JSON.stringify(slabScene('implicit-euler', 0.1, 0)));
  assert.throws(() => parseScene({ ...base, contact: { ...base.contact, frictionVelocity: 'tolerance' } }), /contact\.frictionVelocity.*newton-tolerance/s);
  assert.throws(() => parseScene({ ...base, contact: { ...base.contact, frictionVelocity: 0 } }), /contact\.frictionVelocity/);
});
