import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoxTree } from '../src/contact/box-tree.js';

/** A crumpled grid of triangles: (n+1)^2 nodes, 2 n^2 triangles, with random heights so that boxes overlap. */
function crumpledGrid(n: number, seed: number): { x: Float64Array; triangles: Int32Array } {
  let s = seed;
  const random = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const x = new Float64Array(3 * (n + 1) * (n + 1));
  for (let j = 0; j <= n; j++) {
    for (let i = 0; i <= n; i++) {
      const k = j * (n + 1) + i;
      x.set([i / n, j / n, 0.3 * random()], 3 * k);
    }
  }
  const triangles: number[] = [];
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      const a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
      triangles.push(a, b, d, a, d, c);
    }
  }
  return { x, triangles: Int32Array.from(triangles) };
}

function triangleBoxes(x: Float64Array, triangles: Int32Array, inflate: number): Float64Array {
  const boxes = new Float64Array(2 * triangles.length);
  for (let t = 0; t < triangles.length / 3; t++) {
    for (let a = 0; a < 3; a++) {
      let lo = Infinity, hi = -Infinity;
      for (let k = 0; k < 3; k++) {
        const v = x[3 * triangles[3 * t + k] + a];
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      boxes[6 * t + a] = lo - inflate;
      boxes[6 * t + 3 + a] = hi + inflate;
    }
  }
  return boxes;
}

const key = (p: number, q: number) => `${Math.min(p, q)},${Math.max(p, q)}`;

test('box tree: a self query lists every pair of overlapping boxes once; with skipSharedNodes, all but those that share a node', () => {
  for (const seed of [3, 4]) {
    const { x, triangles } = crumpledGrid(8, seed);
    const nt = triangles.length / 3;
    const boxes = triangleBoxes(x, triangles, 0.02);
    const centers = Float64Array.from({ length: 3 * nt }, (_, k) => 0.5 * (boxes[6 * Math.floor(k / 3) + (k % 3)] + boxes[6 * Math.floor(k / 3) + 3 + (k % 3)]));
    const shares = (p: number, q: number) => [0, 1, 2].some((a) => [0, 1, 2].some((b) => triangles[3 * p + a] === triangles[3 * q + b]));
    const overlapping: string[] = [];
    for (let p = 0; p < nt; p++) {
      for (let q = p + 1; q < nt; q++) {
        let meets = true;
        for (let a = 0; a < 3; a++) meets &&= boxes[6 * p + a] <= boxes[6 * q + 3 + a] && boxes[6 * q + a] <= boxes[6 * p + 3 + a];
        if (meets) overlapping.push(key(p, q));
      }
    }
    const apart = overlapping.filter((k) => !shares(...(k.split(',').map(Number) as [number, number])));
    assert.ok(overlapping.length > apart.length && apart.length > 50, `seed ${seed}: both kinds of pair occur (${overlapping.length}, ${apart.length})`);
    const everything = () => true;
    for (const skip of [false, true]) {
      const tree = new BoxTree(centers, new Int32Array(nt));
      if (skip) tree.skipSharedNodes(triangles);
      // Still and along a motion whose end boxes equal the start boxes: the same pairs.
      for (const end of [null, boxes]) {
        tree.refit(boxes, end);
        const got: string[] = [];
        tree.pairs(tree, everything, (p, q) => got.push(key(p, q)));
        assert.equal(new Set(got).size, got.length, `seed ${seed}: each pair once`);
        assert.deepEqual(got.sort(), (skip ? apart : overlapping).slice().sort(), `seed ${seed}, skip ${skip}, moving ${end !== null}`);
      }
    }
  }
});
