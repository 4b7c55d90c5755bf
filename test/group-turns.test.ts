import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BsrMatrix } from '../src/math/bsr.js';
import { GroupTurns } from '../src/math/group-turns.js';
import { LaggedCholeskySolver } from '../src/math/lagged-cholesky.js';
import { LdltSolver } from '../src/math/ldlt.js';
import { bodyTurns } from '../src/model/model.js';
import { buildModel } from '../src/scene/build.js';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { gridPattern, maxAbsDiff, randomRotation, rng } from './numeric-helpers.js';

/** R p + shift for each point p (3 per point) of ys[from, to). */
function turn(ys: Float64Array, R: Float64Array, shift: readonly number[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const [a, b, c] = [ys[3 * i], ys[3 * i + 1], ys[3 * i + 2]];
    for (let r = 0; r < 3; r++) ys[3 * i + r] = R[3 * r] * a + R[3 * r + 1] * b + R[3 * r + 2] * c + shift[r];
  }
}

test('GroupTurns: fits each group\'s rotation and its angle, turns 3-blocks of grouped nodes only, and the two turns invert each other', () => {
  const rand = rng(41);
  // Nodes 0-9 in group 0, 10-19 in group 1, 20-21 in none.
  const groupOfNode = Int32Array.from({ length: 22 }, (_, i) => (i < 10 ? 0 : i < 20 ? 1 : -1));
  const turns = new GroupTurns(groupOfNode, 2);
  const reference = Float64Array.from({ length: 66 }, () => 2 * rand() - 1);
  assert.ok(Number.isNaN(turns.fit(reference)), 'no fit before a reference');
  turns.capture(reference);
  assert.ok(turns.fit(reference) < 1e-7, 'no turn at the reference');
  const R0 = randomRotation(rand);
  const R1 = randomRotation(rand);
  const x = Float64Array.from(reference);
  turn(x, R0, [1, 2, 3], 0, 10);
  turn(x, R1, [-4, 0, 5], 10, 20);
  const largest = turns.fit(x);
  assert.ok(maxAbsDiff(turns.rotation.subarray(0, 9), R0) < 1e-12);
  assert.ok(maxAbsDiff(turns.rotation.subarray(9, 18), R1) < 1e-12);
  const angle = (R: Float64Array) => Math.acos(Math.min(1, Math.max(-1, (R[0] + R[4] + R[8] - 1) / 2)));
  assert.ok(Math.abs(largest - Math.max(angle(R0), angle(R1))) < 1e-7);
  const v = Float64Array.from({ length: 66 }, () => rand());
  const back = new Float64Array(66);
  turns.toReference(v, back);
  // Node 3 of group 0: R0^T v; node 21 (no group): unchanged.
  for (let r = 0; r < 3; r++) {
    const expected = R0[r] * v[9] + R0[3 + r] * v[10] + R0[6 + r] * v[11];
    assert.ok(Math.abs(back[9 + r] - expected) < 1e-14);
  }
  assert.deepEqual(Array.from(back.subarray(60)), Array.from(v.subarray(60)));
  turns.fromReference(back);
  assert.ok(maxAbsDiff(back, v) < 1e-14);
});

test('lagged Cholesky with GroupTurns: a body turned by 0.5 rad keeps its factor (exact after the turn); without, it refactors', () => {
  // A0 = (Laplacian + I/2) (x) S on a grid, S an anisotropic 3x3 SPD block: turned by R at every node it becomes
  // Q A0 Q^T, what the Hessian of an elastic body does when the body turns.
  const side = 5;
  const nodes = side ** 3;
  const pattern = gridPattern(side, side, side);
  const S = [6, 1, 0, 1, 2, 0.5, 0, 0.5, 1];
  const angle = 0.5;
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const R = Float64Array.from([c, -s, 0, s, c, 0, 0, 0, 1]);
  const RS = Array.from({ length: 9 }, (_, k) => {
    const [i, j] = [Math.floor(k / 3), k % 3];
    let sum = 0;
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) sum += R[3 * i + a] * S[3 * a + b] * R[3 * j + b];
    return sum;
  });
  const matrix = (block: readonly number[]) => {
    const A = new BsrMatrix(pattern);
    const { rowStart, col, diagSlot } = pattern;
    for (let i = 0; i < nodes; i++) {
      for (let t = rowStart[i]; t < rowStart[i + 1]; t++) {
        const weight = col[t] === i ? rowStart[i + 1] - rowStart[i] - 1 + 0.5 : -1;
        for (let k = 0; k < 9; k++) A.values[9 * t + k] = weight * block[k];
      }
      assert.ok(diagSlot[i] >= 0);
    }
    return A;
  };
  const positions = new Float64Array(3 * nodes);
  for (let i = 0; i < nodes; i++) positions.set([i % side, Math.floor(i / side) % side, Math.floor(i / side ** 2)], 3 * i);
  const turnedPositions = Float64Array.from(positions);
  turn(turnedPositions, R, [0.3, -1, 2], 0, nodes);
  const b = Float64Array.from({ length: 3 * nodes }, (_, i) => Math.sin(i + 1));
  const expected = new Float64Array(3 * nodes);
  new LdltSolver().solve(matrix(RS), b, expected);
  const run = (withTurns: boolean) => {
    const solver = new LaggedCholeskySolver({ tolerance: 1e-10, turns: withTurns ? new GroupTurns(new Int32Array(nodes), 1) : undefined });
    const x = new Float64Array(3 * nodes);
    solver.solve(matrix(S), b, x, positions);
    const stats = solver.solve(matrix(RS), b, x, turnedPositions);
    assert.ok(maxAbsDiff(x, expected) < 1e-8 * Math.max(...Array.from(expected, Math.abs)), `turns ${withTurns}: solution`);
    return { iterations: stats.iterations, factorizations: solver.timing.factorizations };
  };
  const turned = run(true);
  assert.equal(turned.factorizations, 1, 'the turned factor serves the turned matrix');
  assert.ok(turned.iterations <= 2, `turned: ${turned.iterations} CG iterations`);
  const plain = run(false);
  assert.ok(plain.factorizations === 2 || plain.iterations > 5 * turned.iterations, `plain: ${JSON.stringify(plain)}`);
});

test('bodyTurns: one group per body, every node of the hinged rotating cube in it (its hinge nodes are fixed in all three DOFs)', () => {
  const loaded = loadScene('rotating-cube-soft');
  const model = buildModel(loaded.scene, meshResolver(loaded.baseDir));
  const turns = bodyTurns(model);
  assert.equal(turns.groups, 1);
  const x = Float64Array.from(model.x0);
  turns.capture(x);
  const R = randomRotation(rng(43));
  turn(x, R, [0, 0, 0], 0, model.nNodes);
  turns.fit(x);
  assert.ok(maxAbsDiff(turns.rotation.subarray(0, 9), R) < 1e-12, 'all nodes take part in the fit');
});
