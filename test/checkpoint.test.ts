import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCheckpoint, writeCheckpoint } from '../src/io/checkpoint.js';
import { loadScene, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { INTERRUPTED, simulate, simulateSteps, type RunCheckpoint } from '../src/sim/simulate.js';
import { fallingCubesScene } from './helpers.js';

/**
 * Two cubes falling onto the ground and onto each other, with friction and adaptive kappa. At step 4 the cubes are
 * in contact and A-search's energy is below its target (alpha clipped), so the saved target matters.
 */
function setup(integrator = 'a-search') {
  const scene = fallingCubesScene('checkpoint-test', { kappa: 1e4, dhat: 0.002, friction: 0.3, adaptiveKappa: true }, integrator);
  return { model: buildModel(scene), options: toRunOptions(scene) };
}

/** The checkpoint of the setup() run after `steps` steps (its last one). */
function checkpointAfter(steps: number): RunCheckpoint {
  const run = setup();
  run.options.duration = steps / 120;
  run.options.checkpointEvery = steps;
  let saved: RunCheckpoint | undefined;
  simulate(run.model, run.options, { checkpoint: (cp) => (saved = cp) });
  assert.ok(saved, 'no checkpoint handed out');
  return saved;
}

const dir = mkdtempSync(join(tmpdir(), 'vivace-checkpoint-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('checkpoint: a run resumed from a checkpoint file ends where the uninterrupted run ends, with the same totals', () => {
  const whole = setup();
  const reference = simulate(whole.model, whole.options);
  assert.equal(reference.summary.stopped, undefined, `reference run stopped: ${reference.summary.stopped}`);
  assert.ok(reference.summary.maxActiveContacts > 0, 'the cubes never touched: the test would not exercise contact');

  const file = join(dir, 'half.json');
  const first = setup();
  first.options.checkpointEvery = 4;
  const written: number[] = [];
  simulate(first.model, first.options, {
    checkpoint(cp) {
      written.push(cp.step);
      if (cp.step === 4) writeCheckpoint(file, cp);
    },
  });
  assert.deepEqual(written, [4, 8, 12, 16, 20, 24], 'checkpoints every 4 steps');

  const second = setup();
  second.options.resume = readCheckpoint(file);
  const stepsSeen: number[] = [];
  const resumed = simulate(second.model, second.options, { step: (r) => stepsSeen.push(r.step) });
  assert.ok(second.options.resume.target > second.options.resume.totals.minEnergy, 'at step 4 the energy is below the target');
  assert.equal(stepsSeen[0], 5, 'the resumed run reports steps after the checkpoint only');
  assert.equal(resumed.summary.steps, 24);
  assert.equal(resumed.summary.initialEnergy, reference.summary.initialEnergy, 'initial energy comes from the checkpoint');
  assert.equal(resumed.summary.newtonIterations, reference.summary.newtonIterations, 'Newton iterations over both segments');
  assert.equal(resumed.summary.maxActiveContacts, reference.summary.maxActiveContacts);
  const x = resumed.state.x;
  const y = reference.state.x;
  let worst = 0;
  for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i] - y[i]));
  assert.ok(worst < 1e-9, `final positions differ by ${worst} m`);
  assert.ok(Math.abs(resumed.summary.finalEnergy - reference.summary.finalEnergy) <= 1e-9 * Math.abs(reference.summary.finalEnergy), 'final energy');
  assert.ok(resumed.summary.wallSeconds >= second.options.resume.totals.wallSeconds, 'wall time includes the first segment');
});

test('checkpoint: a resumed run goes on with the saved adaptive kappa, not the scene floor', () => {
  // In these scenes the gradient balance stays below the floor (kappa = 1e4), so kappa never moves on its own; a
  // checkpoint with a raised kappa shows whether the resumed run reads it.
  const saved = checkpointAfter(4);
  assert.ok(saved.adaptiveStiffness, 'adaptive kappa state missing from the checkpoint');
  assert.equal(saved.adaptiveStiffness.kappa, 1e4, 'kappa should sit at the floor at step 4');
  assert.ok(saved.adaptiveStiffness.hadContact, 'the cubes should be in contact at step 4');

  const run = (kappa: number) => {
    const next = setup();
    next.options.duration = 8 / 120;
    next.options.checkpointEvery = 4;
    next.options.resume = { ...saved, adaptiveStiffness: { kappa, hadContact: true } };
    let later: RunCheckpoint | undefined;
    const result = simulate(next.model, next.options, { checkpoint: (cp) => (later = cp) });
    assert.equal(result.summary.stopped, undefined, `resumed run stopped: ${result.summary.stopped}`);
    return { x: result.state.x, kappa: later?.adaptiveStiffness?.kappa };
  };
  const floor = run(1e4);
  const raised = run(3e4);
  assert.equal(raised.kappa, 3e4, 'the resumed run dropped the saved kappa (step 8 checkpoint)');
  assert.equal(floor.kappa, 1e4);
  let moved = 0;
  for (let i = 0; i < floor.x.length; i++) moved = Math.max(moved, Math.abs(floor.x[i] - raised.x[i]));
  assert.ok(moved > 1e-9, `a 3x stiffer barrier left the positions unchanged (${moved} m): the saved kappa was not used`);
});

test('checkpoint: refused for another run, for integrators with history, and when the file is malformed (naming the field)', () => {
  const file = join(dir, 'refuse.json');
  const saved = checkpointAfter(2);
  writeCheckpoint(file, saved);

  const other = setup();
  other.options.resume = { ...readCheckpoint(file), scene: 'something-else' };
  assert.throws(() => simulate(other.model, other.options), /checkpoint does not belong to this run: scene 'something-else'/);

  const bdf2 = setup('bdf2');
  bdf2.options.checkpointEvery = 1;
  assert.throws(() => simulate(bdf2.model, bdf2.options), /integrator 'bdf2' keeps history between steps/);

  const broken = join(dir, 'broken.json');
  writeFileSync(broken, JSON.stringify({ ...JSON.parse(JSON.stringify(saved, (_k, v) => (v instanceof Float64Array ? 'AAAA' : v))), step: -1 }));
  assert.throws(() => readCheckpoint(broken), /broken\.json: checkpoint field 'step'/);
});

test('checkpoint: the file carries a checksum; a flipped character in the state, an edited number or another format version is refused', () => {
  const saved = checkpointAfter(4);
  const file = join(dir, 'checksum.json');
  writeCheckpoint(file, saved);
  const text = readFileSync(file, 'utf8');
  assert.match(text, /"checksum":"[0-9a-f]{64}"\}$/);
  const back = readCheckpoint(file);
  assert.deepEqual(back.v, saved.v, 'round trip');
  assert.equal(back.frames, 2, 'frames 0 and 1 before step 4 (a frame every 4 steps at 30 frames/s)');

  const damaged = (edited: string, name: string) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, edited);
    return () => readCheckpoint(path);
  };
  const at = text.indexOf('"v":"') + 9;
  const flipV = text.slice(0, at) + (text[at] === 'Q' ? 'R' : 'Q') + text.slice(at + 1);
  assert.throws(damaged(flipV, 'flip-v'), /flip-v\.json: checksum mismatch: the checkpoint was changed or damaged/);
  const target = text.replace(/"target":([-\d.e+]+)/, (_m, x) => `"target":${Number(x) * 1.0001}`);
  assert.notEqual(target, text);
  assert.throws(damaged(target, 'target'), /target\.json: checksum mismatch/);
  assert.throws(damaged(text.replace(/,"checksum":"[0-9a-f]+"/, ''), 'no-sum'), /no-sum\.json: checkpoint field 'checksum' is missing/);
  assert.throws(damaged(text.replace('"version":2', '"version":1'), 'old'), /old\.json: checkpoint format version 1, this build reads 2/);
});

test('simulateSteps: next(true) ends the run after that step as "interrupted", with a checkpoint of it; after the last step it changes nothing', () => {
  const run = (stopAfter: number) => {
    const s = setup();
    s.options.duration = 6 / 120;
    s.options.checkpointEvery = 4;
    const checkpoints: number[] = [];
    const steps = simulateSteps(s.model, s.options, { checkpoint: (cp) => checkpoints.push(cp.step) });
    let next = steps.next();
    while (!next.done) next = steps.next(next.value >= stopAfter);
    return { summary: next.value.summary, checkpoints };
  };
  const stopped = run(3);
  assert.equal(stopped.summary.stopped, INTERRUPTED);
  assert.equal(stopped.summary.steps, 3);
  assert.deepEqual(stopped.checkpoints, [3], 'a checkpoint of step 3, to go on from');
  const atFour = run(4);
  assert.deepEqual(atFour.checkpoints, [4], 'step 4 was checkpointed already: not twice');
  const atEnd = run(6);
  assert.equal(atEnd.summary.stopped, undefined, 'a request after the last step is no interruption');
  assert.equal(atEnd.summary.steps, 6);
  assert.deepEqual(atEnd.checkpoints, [4, 6]);
});

test('checkpoint: steps at the Newton iteration limit are counted over the sittings of a resumed run', () => {
  const make = () => {
    const { scene } = loadScene('oscillator');
    const options = toRunOptions(scene);
    options.duration = 1;
    options.solver = { ...options.solver, tolerance: 1e-20, maxNewtonIterations: 4 };
    return { model: buildModel(scene), options };
  };
  const whole = make();
  const reference = simulate(whole.model, whole.options).summary;
  assert.ok(reference.newtonLimitSteps >= 5, `steps at the limit: ${reference.newtonLimitSteps}`);
  let saved: RunCheckpoint | undefined;
  const first = make();
  first.options.duration = 0.5;
  first.options.checkpointEvery = 5;
  simulate(first.model, first.options, { checkpoint: (cp) => (saved = cp) });
  const second = make();
  second.options.resume = saved;
  const resumed = simulate(second.model, second.options).summary;
  assert.equal(resumed.newtonLimitSteps, reference.newtonLimitSteps);
  assert.deepEqual(resumed.newtonLimitFirstSteps, reference.newtonLimitFirstSteps);
});
