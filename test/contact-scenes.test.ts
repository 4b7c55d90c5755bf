import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findIntersection } from '../src/contact/intersection.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { simulate } from '../src/sim/simulate.js';

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
