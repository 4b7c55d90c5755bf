import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findIntersection } from '../src/contact/intersection.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { simulate } from '../src/sim/simulate.js';
import { fallingCubesScene } from './helpers.js';

const contactScenes = ['bouncing-ball-soft', 'bouncing-ball-medium', 'bouncing-ball-stiff', 'dice-roll', 'bunny-stairs', 'bunny-stairs-tau2', 'bunny-stairs-tau1', 'bunny-splash'];

test('built-in contact scenes build with contact and start intersection-free, every vertex clear of the planes', () => {
  for (const name of contactScenes) {
    const { scene, baseDir } = loadScene(name);
    const model = buildModel(scene, meshResolver(baseDir));
    assert.ok(model.contact, `${name}: contact is on`);
    assert.equal(findIntersection(model.contact.mesh, model.x0), null, name);
    const start = model.contact.barrier.activeContacts(model.x0, null);
    assert.ok(start.minDistance > 0, `${name}: min distance ${start.minDistance}`);
  }
});

test('bouncing ball (medium): the first steps fall freely under gravity and keep the invariants on every step', () => {
  const { scene, baseDir } = loadScene('bouncing-ball-medium');
  const model = buildModel(scene, meshResolver(baseDir));
  const opts = { ...toRunOptions(scene), duration: 3 * scene.dt, contactChecks: 'steps' as const };
  let mass = 0;
  for (let d = 0; d < model.mass.length; d += 3) mass += model.mass[d];
  const vy: number[] = [];
  const { summary } = simulate(model, opts, {
    step(rec) {
      assert.equal(rec.inverted, 0);
      vy.push(rec.momentum[1] / mass);
    },
  });
  assert.equal(summary.stopped, undefined);
  // Implicit Euler's free fall: v_n = -n g h exactly (alpha does not matter: gravity's gradient is constant).
  for (let n = 0; n < vy.length; n++) assert.ok(Math.abs(vy[n] + n * 9.8 * scene.dt) < 1e-6, `v_${n} = ${vy[n]}`);
});

test('a step that cannot be made feasible stops the run with a message naming the pair; the steps before stay valid', () => {
  // kappa = 30 N/m cannot hold a 1 kg cube at any distance the CCD can resolve: Newton presses a vertex onto the
  // other cube's surface until the line-search filter allows no motion.
  const scene = fallingCubesScene('too-weak-barrier', { kappa: 30, dhat: 0.002 });
  const model = buildModel(scene);
  let lastStep = -1;
  const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
    step(rec) {
      lastStep = rec.step;
      assert.equal(rec.inverted, 0, `step ${rec.step}: inverted tets`);
      assert.ok(rec.minDistance > 0, `step ${rec.step}: min distance ${rec.minDistance}`);
    },
  });
  assert.ok(summary.stopped, 'the run should stop: the barrier is too weak to hold the cube');
  assert.match(
    summary.stopped,
    /^step \d+ \(t = [\d.]+ s\): Newton: the line-search filter allows no motion at iteration \d+: (vertex \d+ of body '[ab]' and the triangle on nodes \d+, \d+, \d+ of body '[ab]'|the edge on nodes \d+, \d+ of body '[ab]' and the edge on nodes \d+, \d+ of body '[ab]') are in contact at distance [\d.e+-]+ m; .*raise contact\.kappa \(now 30\)/,
    `message: ${summary.stopped}`,
  );
  assert.ok(summary.steps >= 2, `stopped after ${summary.steps} steps: contact should come first`);
  assert.equal(summary.steps, lastStep, 'the summary counts the steps that completed and were reported');
  assert.match(summary.stopped, new RegExp(`^step ${summary.steps + 1} `), 'the message names the step that failed');
});
