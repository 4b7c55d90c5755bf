import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrictionPotential } from '../src/contact/friction-potential.js';
import { scatterHessian, scatterHessianAt, stencilSlots } from '../src/contact/pairs/stencil.js';
import { BsrMatrix, PatternBuilder, type BsrPattern } from '../src/math/bsr.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene } from '../src/scene/schema.js';
import { IncrementalPotential } from '../src/solver/incremental-potential.js';
import { rng } from './numeric-helpers.js';

/**
 * A 10 cm cube of 2x2x2 cells on the ground with friction (dhat 1 cm; 4 mm above the ground: its bottom contacts are
 * active) and, with `gap`, a second one `gap` above it (4 mm: many active pairs between the two).
 */
function frictionModel(gap: number | null = 0.004) {
  const cube = (name: string, at: [number, number, number]) => ({
    name,
    mesh: { type: 'box' as const, size: [0.1, 0.1, 0.1] as [number, number, number], cells: [2, 2, 2] as [number, number, number] },
    transform: { translate: at },
    material: { model: 'neo-hookean' as const, youngsModulus: 1e5, poissonRatio: 0.3, density: 1000 },
  });
  const bodies = [cube('a', [0, 0.004, 0])];
  if (gap !== null) bodies.push(cube('b', [0.03, 0.104 + gap, 0.02]));
  const scene = parseScene({
    name: 'slots',
    duration: 0.1,
    dt: 1 / 60,
    contact: { kappa: 1e5, dhat: 0.01, friction: 0.5 },
    obstacles: [{ type: 'plane' }],
    bodies,
  });
  return buildModel(scene);
}

/** The value of block (i, j) of H (9 numbers), zeros when the pattern lacks it. */
function block(H: BsrMatrix, i: number, j: number): number[] {
  const s = H.pattern.slot(i, j);
  return s < 0 ? new Array(9).fill(0) : Array.from(H.values.subarray(9 * s, 9 * s + 9));
}

/** A pattern with `base`'s blocks plus couplings of random node pairs (the slots of most blocks move). */
function grown(base: BsrPattern, seed: number): BsrPattern {
  const b = new PatternBuilder(base.n, base);
  const r = rng(seed);
  for (let t = 0; t < 200; t++) b.addClique([Math.floor(r() * base.n), Math.floor(r() * base.n)]);
  return b.build();
}

test('stencilSlots + scatterHessianAt add the same numbers to the same blocks as scatterHessian, skipping fixed nodes', () => {
  const nodes = new Int32Array([7, 2, 5, 9, 0, 3]);
  const b = new PatternBuilder(12);
  b.addClique([2, 5, 9, 0]);
  b.addClique([7, 2]);
  const pattern = b.build();
  const fixed = new Uint8Array(12);
  fixed[9] = 1;
  const local = Float64Array.from({ length: 144 }, (_, i) => Math.sin(i + 1));
  const expected = new BsrMatrix(pattern);
  scatterHessian(expected, nodes, 1, 4, fixed, local, 0.5);
  const slots = new Int32Array(20).fill(-7);
  stencilSlots(pattern, nodes, 1, 4, fixed, slots, 3);
  assert.equal(slots[3 + 2 * 4 + 1], -1, 'a block of a fixed node has no slot');
  const got = new BsrMatrix(pattern);
  scatterHessianAt(got.values, slots, 3, 4, local, 0.5);
  assert.deepEqual(Array.from(got.values), Array.from(expected.values));
  // A block between free nodes that the pattern lacks is an error, as in scatterHessian.
  assert.throws(() => stencilSlots(pattern, new Int32Array([7, 5]), 0, 2, fixed, slots, 0), /Hessian block \(7, 5\) missing/);
});

test('friction Hessian: its cached slots follow a new pattern (same blocks, bit for bit, in a grown pattern)', () => {
  const model = frictionModel();
  const contact = model.contact!;
  const friction = new FrictionPotential(contact.mesh, contact.barrier, 1e-3);
  const xn = model.x0;
  const xHat = new Float64Array(xn);
  friction.lag(xn, xHat, 1 / 60);
  assert.ok(friction.activeCount > 10, `friction contacts: ${friction.activeCount}`);
  assert.ok(Number.isFinite(friction.energy(xn)));
  // Some tangential slip, so that the local Hessians differ from contact to contact.
  const r = rng(5);
  const x = Float64Array.from(xn, (v, d) => (d % 3 === 1 ? v : v + 2e-5 * (2 * r() - 1)));

  const ip = new IncrementalPotential(model);
  const builder = new PatternBuilder(model.nNodes, ip.hessian.pattern);
  friction.addPattern(builder);
  const first = builder.build();
  const second = grown(first, 11);
  assert.notEqual(second.nnzBlocks, first.nnzBlocks);

  const H1 = new BsrMatrix(first);
  friction.addHessian(x, 1, H1, true);
  const H2 = new BsrMatrix(second);
  friction.addHessian(x, 1, H2, true);
  let nonzero = 0;
  for (let i = 0; i < second.n; i++) {
    for (let q = second.rowStart[i]; q < second.rowStart[i + 1]; q++) {
      const j = second.col[q];
      const want = block(H1, i, j);
      assert.deepEqual(block(H2, i, j), want, `block (${i}, ${j})`);
      if (want.some((v) => v !== 0)) nonzero++;
    }
  }
  assert.ok(nonzero > 20, `friction blocks: ${nonzero}`);
  assert.ok(H1.values.every(Number.isFinite));
  // Back on the first pattern (and again after a new lag) the slots are looked up again.
  const H3 = new BsrMatrix(first);
  friction.lag(xn, xHat, 1 / 60);
  friction.addHessian(x, 1, H3, true);
  assert.deepEqual(Array.from(H3.values), Array.from(H1.values));
});

test('friction Hessian: a contact whose slip turns back between Newton iterations gets curvature along its slip until it slides on past it', () => {
  // One cube resting within dhat of the ground: vertex-plane contacts (ground normal +y, slip in x and z).
  const model = frictionModel(null);
  const contact = model.contact!;
  const friction = new FrictionPotential(contact.mesh, contact.barrier, 1e-3);
  const xn = model.x0;
  friction.lag(xn, new Float64Array(xn), 1 / 60); // eps = 1e-3 / 60 m
  assert.ok(friction.activeCount > 0);
  let node = 0;
  for (let i = 1; i < model.nNodes; i++) if (xn[3 * i + 1] < xn[3 * node + 1]) node = i;
  const builder = new PatternBuilder(model.nNodes, new IncrementalPotential(model).hessian.pattern);
  friction.addPattern(builder);
  const pattern = builder.build();
  // The whole cube slides along x by `shift` (every contact slips by the same u); the node's block: xx along u, zz across.
  const curvatures = (shift: number) => {
    const x = Float64Array.from(xn, (v, d) => (d % 3 === 0 ? v + shift : v));
    const H = new BsrMatrix(pattern);
    friction.addHessian(x, 1, H, true);
    const b = block(H, node, node);
    return { along: b[0], across: b[8] };
  };
  const first = curvatures(1e-3); // sliding: no curvature along u
  assert.ok(first.across > 0);
  assert.ok(Math.abs(first.along) <= 1e-12 * first.across, `along ${first.along}`);
  const back = curvatures(-5e-4); // turned back: reversing, curvature f1/y = 1/y along u as across
  assert.ok(back.across > 0);
  assert.ok(Math.abs(back.along - back.across) <= 1e-12 * back.across, `along ${back.along}, across ${back.across}`);
  const nearer = curvatures(-2e-4); // same direction, not past the last slip: still reversing
  assert.ok(Math.abs(nearer.along - nearer.across) <= 1e-12 * nearer.across);
  const on = curvatures(-6e-4); // slides on past the last slip: sliding again
  assert.ok(Math.abs(on.along) <= 1e-12 * on.across, `along ${on.along}`);
  // A new lag forgets the last slips.
  friction.lag(xn, new Float64Array(xn), 1 / 60);
  const fresh = curvatures(-5e-4);
  assert.ok(Math.abs(fresh.along) <= 1e-12 * fresh.across);
});

test('BsrMatrix on given storage: zeroed, shared, and a new Hessian pattern in the reused memory assembles as a fresh one', () => {
  const b = new PatternBuilder(4);
  b.addClique([0, 1, 2]);
  const pattern = b.build();
  const storage = new Float64Array(9 * pattern.nnzBlocks + 5).fill(3);
  const A = new BsrMatrix(pattern, storage);
  assert.equal(A.values.length, 9 * pattern.nnzBlocks);
  assert.ok(A.values.every((v) => v === 0));
  A.values[0] = 2;
  assert.equal(storage[0], 2, 'the values live in the storage');
  assert.equal(storage[9 * pattern.nnzBlocks], 3, 'past the values the storage is untouched');
  assert.equal(new BsrMatrix(pattern, new Float64Array(2)).values.length, 9 * pattern.nnzBlocks, 'too short: own memory');

  // The incremental potential of a contact scene: the upper cube comes down (2.5 cm to 4 mm above the lower), then
  // slides 4 cm sideways over new triangles; each time the pattern changes, the second time into the same memory.
  const model = frictionModel(0.025);
  const ip = new IncrementalPotential(model);
  const x = model.x0;
  const upper = (d: number) => d % 3 === 1 && x[d] > 0.11;
  ip.assembleHessian(x, true);
  const down = Float64Array.from(x, (v, d) => (upper(d) ? v - 0.021 : v));
  const slid = Float64Array.from(down, (v, d) => (upper(d - 1) ? v + 0.04 : v));
  const rebuilds = ip.patternRebuilds;
  const first = ip.assembleHessian(down, true);
  assert.equal(ip.patternRebuilds, rebuilds + 1, 'the pattern grew');
  const firstBuffer = first.values.buffer;
  const firstBlocks = first.pattern.nnzBlocks;
  const second = ip.assembleHessian(slid, true);
  assert.equal(ip.patternRebuilds, rebuilds + 2, 'the pattern changed again');
  assert.ok(second.pattern !== first.pattern && second.pattern.nnzBlocks <= 1.25 * firstBlocks, 'test setup: the new pattern fits the room left');
  assert.ok(second.values.buffer === firstBuffer, 'the new Hessian reuses the memory');
  // The same values as a Hessian assembled in a potential of its own (its own memory, built at once).
  const fresh = new IncrementalPotential(model).assembleHessian(slid, true);
  assert.ok(second.values.every(Number.isFinite));
  const a = second.toDense();
  const f = fresh.toDense();
  let mismatches = 0;
  for (let i = 0; i < a.length; i++) for (let j = 0; j < a.length; j++) if (a[i][j] !== f[i][j]) mismatches++;
  assert.equal(mismatches, 0);
});

test('a grown pattern moves slots of its base in place (each block to its new slot), and refuses slots of any other pattern', () => {
  const model = frictionModel();
  const base = new IncrementalPotential(model).hessian.pattern;
  const next = grown(base, 3);
  const third = grown(next, 4);
  // Every block of the base, by its slot there: the remapped slot holds the same block in the grown pattern.
  const slots = new Int32Array(base.nnzBlocks);
  for (let s = 0; s < slots.length; s++) slots[s] = s;
  assert.ok(next.remapSlots(base.id, slots));
  for (let i = 0; i < base.n; i++) {
    for (let s = base.rowStart[i]; s < base.rowStart[i + 1]; s++) assert.equal(slots[s], next.slot(i, base.col[s]), `block (${i}, ${base.col[s]})`);
  }
  assert.ok(next.nnzBlocks > base.nnzBlocks, 'the grown pattern has blocks the base lacks');
  // Only from its own base: not from the base's base, nor from a pattern built from scratch.
  const before = Int32Array.from(slots);
  assert.equal(third.remapSlots(base.id, slots), false);
  assert.equal(base.remapSlots(next.id, slots), false);
  assert.deepEqual(slots, before);
});

test('elastic tets on a grown pattern: the remapped slots add the same blocks, bit for bit, as slots looked up afresh', () => {
  const model = frictionModel();
  const elastic = model.terms.find((t) => t.name === 'elastic')!;
  const base = new IncrementalPotential(model).hessian.pattern;
  const r = rng(9);
  const x = Float64Array.from(model.x0, (v) => v + 2e-3 * (2 * r() - 1));
  const H0 = new BsrMatrix(base);
  elastic.addHessian!(x, 1, H0, true); // binds the slots to the base
  const next = grown(base, 12);
  const remapped = new BsrMatrix(next);
  elastic.addHessian!(x, 1, remapped, true); // grown from the bound pattern: remapped
  // Bound to another pattern first (the same blocks, another id), the term looks every slot of `next` up afresh.
  const unrelated = new BsrMatrix(grown(new IncrementalPotential(model).hessian.pattern, 12));
  elastic.addHessian!(x, 1, unrelated, true);
  const fresh = new BsrMatrix(next);
  elastic.addHessian!(x, 1, fresh, true);
  assert.deepEqual(Array.from(remapped.values), Array.from(fresh.values));
  assert.ok(remapped.values.some((v) => v !== 0));
});
