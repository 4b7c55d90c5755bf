import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import '../src/sim/node-threads.js';
import { ElasticTets, THREADED_MIN_TETS } from '../src/energies/elastic-tets.js';
import { createMaterial, type MaterialModel } from '../src/energies/materials.js';
import { boxGrid } from '../src/mesh/generators.js';
import { threadPoolFor, usableThreads } from '../src/solver/threads.js';
import { assembleHessianPattern, rng } from './numeric-helpers.js';

/** A 10 x 10 x 5-cell box (3000 tets), twisted and jittered so that rotations and indefinite elements occur. */
function twistedBox(seed: number) {
  const mesh = boxGrid([0.1, 0.1, 0.05], [10, 10, 5]);
  const rand = rng(seed);
  const X = mesh.positions;
  const x = new Float64Array(X.length);
  for (let n = 0; n < X.length / 3; n++) {
    const angle = 8 * X[3 * n + 2];
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    x[3 * n] = c * X[3 * n] - s * X[3 * n + 1] + 0.001 * rand();
    x[3 * n + 1] = s * X[3 * n] + c * X[3 * n + 1] + 0.001 * rand();
    x[3 * n + 2] = 0.85 * X[3 * n + 2] + 0.001 * rand();
  }
  return { X, tets: mesh.tets, x };
}

test('element loops on 2 threads give the energy, gradient and Hessian of 1 thread, bit for bit', () => {
  const pool = threadPoolFor(2);
  assert.ok(pool && pool.workers === 1, 'node-threads provides a pool with one worker for 2 threads');
  for (const model of ['corotated', 'neo-hookean', 'stable-neo-hookean'] as MaterialModel[]) {
    const { X, tets, x } = twistedBox(31);
    const make = () => new ElasticTets(X, tets, createMaterial(model, { youngsModulus: 1e5, poissonRatio: 0.4 }));
    const one = make();
    const two = make();
    two.useThreads(pool);
    assert.ok(one.tetCount >= 2 * THREADED_MIN_TETS, 'the body is large enough to be split');
    assert.equal(two.threadCount, 2);
    const results = [one, two].map((term) => {
      const energy = term.energy(x);
      const g = new Float64Array(x.length);
      term.addGradient(x, 0.7, g);
      const H = assembleHessianPattern(term, x.length / 3);
      term.addHessian(x, 0.7, H, true);
      const exact = assembleHessianPattern(term, x.length / 3);
      term.addHessian(x, 0.7, exact, false);
      return { energy, g, H: H.values, exact: exact.values };
    });
    two.useThreads(null);
    assert.ok(Object.is(results[0].energy, results[1].energy), `${model}: energy ${results[0].energy} vs ${results[1].energy}`);
    assert.deepEqual(results[1].g, results[0].g, `${model}: gradient`);
    assert.deepEqual(results[1].H, results[0].H, `${model}: projected Hessian`);
    assert.deepEqual(results[1].exact, results[0].exact, `${model}: exact Hessian`);
    assert.ok(results[0].g.some((v) => v !== 0) && results[0].H.some((v) => v !== 0));
  }
});

test('a threaded loop names the first inverted tet as one thread does', () => {
  const pool = threadPoolFor(2);
  const { X, tets, x } = twistedBox(32);
  const term = new ElasticTets(X, tets, createMaterial('neo-hookean', { youngsModulus: 1e5, poissonRatio: 0.4 }));
  const serial = new ElasticTets(X, tets, createMaterial('neo-hookean', { youngsModulus: 1e5, poissonRatio: 0.4 }));
  term.useThreads(pool);
  // Invert tets in both halves of the body: the error must name the one with the lowest index, as one thread does.
  const late = tets.length / 4 - 10;
  const early = 100;
  for (const e of [late, early]) {
    const n = tets[4 * e];
    x[3 * n + 2] += 0.2;
  }
  const g = new Float64Array(x.length);
  const message = (f: () => void) => {
    try {
      f();
    } catch (err) {
      return (err as Error).message;
    }
    return 'no error';
  };
  const expected = message(() => serial.addGradient(x, 1, g));
  assert.match(expected, /is inverted/);
  assert.equal(message(() => term.addGradient(x, 1, g)), expected);
  const H = assembleHessianPattern(term, x.length / 3);
  assert.equal(message(() => term.addHessian(x, 1, H, true)), message(() => serial.addHessian(x, 1, assembleHessianPattern(serial, x.length / 3), true)));
  term.useThreads(null);
});

test("a worker's error reaches the calling thread, which goes on working", () => {
  const pool = threadPoolFor(2)!;
  assert.ok(pool.available());
  pool.start([{ kind: 'elastic-tets', id: -1, op: 'energy' }]);
  assert.throws(() => pool.wait(), /worker thread: .*no term -1 \(elastic-tets\) was set up/);
  // The pool is usable afterwards: a real term still gets the one-thread numbers.
  const { X, tets, x } = twistedBox(33);
  const term = new ElasticTets(X, tets, createMaterial('corotated', { youngsModulus: 1e5, poissonRatio: 0.4 }));
  const serial = term.energy(x);
  term.useThreads(pool);
  assert.equal(term.threadCount, 2);
  assert.ok(Object.is(term.energy(x), serial));
  term.useThreads(null);
});

test('a run uses no more threads than the CPUs the process may run on', (t) => {
  assert.equal(usableThreads(1), 1);
  assert.equal(usableThreads(64), Math.min(64, availableParallelism()));
  // Pinned to one CPU (taskset, util-linux), a child process asking for 2 threads gets 1.
  const script =
    "import('./src/sim/node-threads.ts').then(() => import('./src/solver/threads.ts')).then((m) => console.log(m.usableThreads(2)))";
  const child = spawnSync('taskset', ['-c', '0', process.execPath, '--import', 'tsx', '-e', script], { encoding: 'utf8', cwd: new URL('..', import.meta.url).pathname });
  if (child.error) return t.skip(`taskset is not available: ${child.error.message}`);
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), '1');
});
