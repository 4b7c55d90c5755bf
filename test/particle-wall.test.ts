import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendixLimit, collisionVelocities, runParticleWall } from '../src/analysis/particle-wall.js';
import { collectSceneParam } from '../src/cli/args.js';
import { main } from '../src/cli/main.js';
import { prepareRun } from '../src/cli/run-command.js';
import { loadScene } from '../src/io/scene-files.js';
import { makeParametricScene, parametricSceneNames, SceneParamError } from '../src/scene/parametric.js';
import { parseScene } from '../src/scene/schema.js';

const tmp = mkdtempSync(join(tmpdir(), 'vivace-particle-wall-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { stdout: { write: (s: string) => out.push(s), isTTY: false }, stderr: { write: (s: string) => err.push(s), isTTY: false } });
  return { code, out: out.join(''), err: err.join('') };
}

/**
 * Tolerance on speeds against the appendix's values, which are the h^2 kappa / m -> infinity limit. At the scene's
 * defaults (h = 100 s, kappa = 1 N/m, dhat = 1 m: h^2 kappa/m = 1e4, a step flies 100 dhat) the finite-step
 * corrections measured by scripts/particle-wall-table.ts are below 3e-3 (A-1 below 3e-4); at h = 10 they reach
 * 6e-3 for A-1. 0.01 keeps margin for that, and is two orders below the O(1) effects checked (trapezoidal leaving at
 * 2 m/s, implicit Euler at ~0).
 */
const SPEED_TOL = 0.01;

test('the parametric registry: particle-wall defaults, a valid scene, errors naming the parameter', () => {
  assert.ok(parametricSceneNames().includes('particle-wall'));
  const { input, params } = makeParametricScene('particle-wall');
  assert.deepEqual(params, { phase: 0, kappa: 1, dhat: 1, dt: 100 });
  const scene = parseScene(input);
  assert.equal(scene.dt, 100);
  assert.deepEqual(scene.gravity, [0, 0, 0]);
  assert.deepEqual(scene.contact && [scene.contact.kappa, scene.contact.dhat], [1, 1]);
  const body = scene.bodies[0];
  assert.equal(body.mesh.type, 'particles');
  if (body.mesh.type === 'particles') {
    assert.deepEqual(body.mesh.masses, [1]);
    assert.deepEqual(body.mesh.positions, [[1, 0, 0]]); // phase 0: exactly at the threshold dhat
  }
  assert.deepEqual(body.velocity.linear, [-1, 0, 0]);
  assert.deepEqual(scene.obstacles.map((o) => o.type === 'plane' && o.normal), [[1, 0, 0]]);

  assert.throws(
    () => makeParametricScene('particle-wall', { speed: 2 }),
    (e: unknown) => e instanceof SceneParamError && e.param === 'speed' && /no parameter 'speed'.*phase, kappa, dhat, dt/.test(e.message),
  );
  for (const [name, value] of [['phase', 1], ['phase', -0.1], ['kappa', 0], ['dhat', NaN], ['dt', -1]] as const) {
    assert.throws(
      () => makeParametricScene('particle-wall', { [name]: value }),
      (e: unknown) => e instanceof SceneParamError && e.param === name && e.message.includes(`parameter '${name}'`),
      `${name} = ${value}`,
    );
  }
  assert.throws(() => makeParametricScene('no-such-scene'), /unknown parametric scene 'no-such-scene'/);
});

test('phase shifts the start by phase * h * |v| beyond the threshold dhat; loadScene passes the run step', () => {
  const start = (p: Record<string, number>) => {
    const m = parseScene(makeParametricScene('particle-wall', p).input).bodies[0].mesh;
    return m.type === 'particles' ? m.positions[0][0] : NaN;
  };
  assert.equal(start({ phase: 0.3, dhat: 0.5, dt: 10 }), 0.5 + 0.3 * 10);
  assert.equal(start({ phase: 0.75, dhat: 2, dt: 0.01 }), 2 + 0.75 * 0.01);
  // Free flight after n steps is at dhat + (phase - n) h: the samples move by (phase2 - phase1) h between phases.
  assert.ok(Math.abs(start({ phase: 0.8, dt: 100 }) - start({ phase: 0.2, dt: 100 }) - 0.6 * 100) < 1e-12);

  const loaded = loadScene('particle-wall', { params: { phase: 0.5 }, dt: 4 });
  assert.equal(loaded.scene.dt, 4);
  assert.deepEqual(loaded.parameters, { phase: 0.5, kappa: 1, dhat: 1, dt: 4 });
  const m = loaded.scene.bodies[0].mesh;
  assert.equal(m.type === 'particles' && m.positions[0][0], 1 + 0.5 * 4);
  assert.match(loaded.source, /particle-wall.*phase=0\.5/);
  assert.equal(loadScene('particle-wall', { params: { dt: 2 }, dt: 4 }).scene.dt, 2, 'an explicit dt parameter wins');
  assert.throws(() => loadScene('oscillator', { params: { phase: 0.1 } }), (e: unknown) => e instanceof SceneParamError && /has no parameters/.test(e.message));
  assert.equal(loadScene('oscillator').scene.name, 'oscillator', 'scene files load as before');
});

test('appendix limits: A-1 keeps speed 1; trapezoidal 3 - 4 beta / 8 beta - 5 is continuous at beta = 2/3', () => {
  assert.deepEqual(appendixLimit('a-1', 0.25)!.velocities, [-1, -0.25, 0.75, 1]);
  assert.deepEqual(appendixLimit('a-1', 0.25)!.lossSteps, [2, 3]);
  const below = appendixLimit('trapezoidal', 2 / 3 - 1e-9)!;
  const above = appendixLimit('trapezoidal', 2 / 3 + 1e-9)!;
  assert.ok(Math.abs(below.outgoing - above.outgoing) < 1e-7 && Math.abs(below.outgoing - 1 / 3) < 1e-7);
  assert.deepEqual([below.collisionSteps, above.collisionSteps], [2, 3]);
  assert.equal(appendixLimit('a-search', 0.5)!.outgoing, 1);
  assert.equal(appendixLimit('bdf2', 0.5), null);
});

test('large h^2 kappa / m: A-1 leaves at 1 m/s in four steps (v = -1, -beta, 1 - beta, 1); trapezoidal does not', () => {
  for (const phase of [0.3, 0.8]) {
    const r = runParticleWall({ integrator: 'a-1', phase, kappa: 1, dhat: 1, h: 100 });
    assert.equal(r.stopped, undefined);
    assert.ok(Math.abs(r.outgoingSpeed - 1) < SPEED_TOL, `A-1 phase ${phase}: v_out = ${r.outgoingSpeed}`);
    assert.equal(r.collisionSteps, 4, `A-1 phase ${phase}`);
    const v = collisionVelocities(r, 4);
    [-1, -phase, 1 - phase, 1].forEach((want, k) => assert.ok(Math.abs(v[k] - want) < SPEED_TOL, `A-1 phase ${phase}: v_${k + 1} = ${v[k]}, limit ${want}`));
    assert.deepEqual(r.energyLossSteps, [2, 3], 'energy is lost on steps 2 and 3 and comes back');
    assert.ok(Math.abs(r.finalEnergyRatio - 1) < 2 * SPEED_TOL);
  }
  // Trapezoidal's outgoing speed depends on the phase: 3 - 4 beta below 2/3, 8 beta - 5 above (both far from 1 here).
  for (const [phase, limit] of [[0.25, 2], [0.9, 2.2]]) {
    const r = runParticleWall({ integrator: 'trapezoidal', phase, kappa: 1, dhat: 1, h: 100 });
    assert.ok(Math.abs(r.outgoingSpeed - limit) < 5 * SPEED_TOL, `trapezoidal phase ${phase}: v_out = ${r.outgoingSpeed}, limit ${limit}`);
    assert.ok(r.outgoingSpeed > 1.5, 'the bounce gains energy');
  }
  // A-search: back to 1 m/s with one or two steps of energy loss (appendix E).
  const s = runParticleWall({ integrator: 'a-search', phase: 0.5, kappa: 1, dhat: 1, h: 100 });
  assert.ok(Math.abs(s.outgoingSpeed - 1) < 1e-3, `A-search v_out = ${s.outgoingSpeed}`);
  assert.ok(s.energyLossSteps.length >= 1 && s.energyLossSteps.length <= 2, `loss steps ${s.energyLossSteps}`);
  // Implicit Euler, the reference: the bounce is lost.
  assert.ok(runParticleWall({ integrator: 'implicit-euler', phase: 0.5, kappa: 1, dhat: 1, h: 100 }).outgoingSpeed < 0.01);
});

test('CLI: --scene-param sets parameters (with --dt as the step), bad ones exit 2 naming the parameter; scenes lists them', async () => {
  // What `vivace run particle-wall --dt 10 --scene-param phase=1/2 --scene-param kappa=2` prepares (no plotting).
  const flags = { dt: 10, sceneParam: collectSceneParam('kappa=2', collectSceneParam('phase=1/2', undefined)) };
  const run = prepareRun('particle-wall', { dt: flags.dt, integrator: 'a-1' }, join(tmp, 'run'), tmp, flags.sceneParam);
  assert.equal(run.options.h, 10);
  assert.equal(run.options.integrator, 'a-1');
  assert.match(run.source, /phase=0\.5, kappa=2, dhat=1, dt=10/);
  assert.equal(run.model.x0[0], 1 + 0.5 * 10, 'starts at dhat + phase * dt');
  assert.equal(run.model.contact?.barrier && run.scene.contact?.kappa, 2);

  const unknown = await cli('run', 'particle-wall', '--scene-param', 'speed=2', '--quiet', '--out', join(tmp, 'x'));
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /--scene-param speed: .*no parameter 'speed'/);
  const range = await cli('compare', 'particle-wall', '--integrators', 'a-1,trapezoidal', '--scene-param', 'phase=1.5', '--quiet', '--out', join(tmp, 'x'));
  assert.equal(range.code, 2);
  assert.match(range.err, /--scene-param phase: .*\[0, 1\)/);
  const value = await cli('run', 'particle-wall', '--scene-param', 'phase=abc', '--quiet');
  assert.equal(value.code, 2);
  assert.match(value.err, /scene parameter 'phase' must be a number/);
  const notParametric = await cli('run', 'oscillator', '--scene-param', 'phase=0.1', '--quiet', '--out', join(tmp, 'x'));
  assert.equal(notParametric.code, 2);
  assert.match(notParametric.err, /--scene-param phase: .*has no parameters/);

  const scenes = await cli('scenes');
  assert.equal(scenes.code, 0);
  assert.match(scenes.out, /^particle-wall\s+100\s+/m);
  assert.match(scenes.out, /^\s+phase=0\s+beta of seed 000 appendix E/m);
});
