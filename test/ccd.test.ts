import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { edgeEdgeCcd, pointTriangleCcd, NO_CONTACT, type CcdOptions, type CcdStats } from '../src/contact/ccd.js';
import { closestOffset, pointTriangleDistanceSq, segmentSegmentDistanceSq } from '../src/contact/ccd-distance.js';
import { runCcdQuery } from '../src/contact/ccd-queries.js';
import { readCcdQueryTree } from '../src/io/ccd-query-files.js';

const dataRoot = fileURLToPath(new URL('./data/ccd/', import.meta.url));

/** Deterministic uniform numbers in [-1, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}

test('point-triangle and segment-segment distances match dense parameter sampling', () => {
  const rand = lcg(7);
  const x = new Float64Array(12);
  const y = new Float64Array(3);
  const n = 60;
  for (let trial = 0; trial < 40; trial++) {
    for (let k = 0; k < 12; k++) x[k] = rand();
    // Point-triangle: minimum over a barycentric grid is an upper bound within O(1/n) of the truth.
    let sampled = Infinity;
    for (let i = 0; i <= n; i++) {
      for (let j = 0; i + j <= n; j++) {
        const b = i / n, c = j / n, a = 1 - b - c;
        for (let k = 0; k < 3; k++) y[k] = a * x[3 + k] + b * x[6 + k] + c * x[9 + k] - x[k];
        sampled = Math.min(sampled, y[0] ** 2 + y[1] ** 2 + y[2] ** 2);
      }
    }
    const exact = Math.sqrt(pointTriangleDistanceSq(x, 0, 1, 2, 3));
    assert.ok(Math.abs(Math.hypot(...closestOffset) - exact) <= 1e-12, 'the closest-point offset has the distance as its length');
    assert.ok(exact <= Math.sqrt(sampled) + 1e-12, `point-triangle ${exact} > sampled ${Math.sqrt(sampled)}`);
    assert.ok(exact >= Math.sqrt(sampled) - 0.05, `point-triangle ${exact} << sampled ${Math.sqrt(sampled)}`);
    // Segment-segment over an (s, t) grid.
    sampled = Infinity;
    for (let i = 0; i <= n; i++) {
      for (let j = 0; j <= n; j++) {
        const s = i / n, t = j / n;
        for (let k = 0; k < 3; k++) y[k] = x[k] + s * (x[3 + k] - x[k]) - x[6 + k] - t * (x[9 + k] - x[6 + k]);
        sampled = Math.min(sampled, y[0] ** 2 + y[1] ** 2 + y[2] ** 2);
      }
    }
    const exactEE = Math.sqrt(segmentSegmentDistanceSq(x, 0, 1, 2, 3));
    assert.ok(Math.abs(Math.hypot(...closestOffset) - exactEE) <= 1e-12, 'the closest-point offset has the distance as its length');
    assert.ok(exactEE <= Math.sqrt(sampled) + 1e-12, `edge-edge ${exactEE} > sampled ${Math.sqrt(sampled)}`);
    assert.ok(exactEE >= Math.sqrt(sampled) - 0.05, `edge-edge ${exactEE} << sampled ${Math.sqrt(sampled)}`);
  }
  // Closed forms: crossing segments, parallel segments, degenerate triangle.
  x.set([0, 0, 0, 1, 0, 0, 0.5, -1, 0.3, 0.5, 1, 0.3]);
  assert.ok(Math.abs(segmentSegmentDistanceSq(x, 0, 1, 2, 3) - 0.09) < 1e-15);
  x.set([0, 0, 0, 1, 0, 0, 0.5, 0.2, 0, 2, 0.2, 0]);
  assert.ok(Math.abs(segmentSegmentDistanceSq(x, 0, 1, 2, 3) - 0.04) < 1e-15);
  x.set([0.5, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0]); // collinear triangle along x
  assert.ok(Math.abs(pointTriangleDistanceSq(x, 0, 1, 2, 3) - 1) < 1e-15);
});

test('point falling onto a triangle: ToI before the exact impact, with a gap left', () => {
  const tri0 = [[-1, -1, 0], [2, -1, 0], [-1, 2, 0]];
  const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
  // Point from z = 1 to z = -1 hits at t = 0.5; the triangle is static.
  const toi = pointTriangleCcd([0, 0, 1], tri0[0], tri0[1], tri0[2], [0, 0, -1], tri0[0], tri0[1], tri0[2], 0, stats);
  assert.ok(toi < 0.5 && toi > 0.4, `toi ${toi}`);
  assert.ok(stats.distanceAtToi >= 0.1 * 1 - 1e-12 && Math.abs(stats.distanceAtToi - (1 - 2 * toi)) < 1e-12);
  assert.equal(stats.exhausted, false);
  // With a minimum separation of 0.2, impact of the 0.2-shell at t = 0.4.
  const toiXi = pointTriangleCcd([0, 0, 1], tri0[0], tri0[1], tri0[2], [0, 0, -1], tri0[0], tri0[1], tri0[2], 0.2, stats);
  assert.ok(toiXi < 0.4 && toiXi > 0.3, `toi with xi ${toiXi}`);
  assert.ok(stats.distanceAtToi > 0.2);
  // Passing beside the triangle (x = 3): no contact; stopping short of it: no contact.
  assert.equal(pointTriangleCcd([3, 0, 1], tri0[0], tri0[1], tri0[2], [3, 0, -1], tri0[0], tri0[1], tri0[2]), NO_CONTACT);
  assert.equal(pointTriangleCcd([0, 0, 1], tri0[0], tri0[1], tri0[2], [0, 0, 1e-3], tri0[0], tri0[1], tri0[2]), NO_CONTACT);
  // Touching at t = 0 gives 0; translating everything together never collides.
  assert.equal(pointTriangleCcd([0, 0, 0], tri0[0], tri0[1], tri0[2], [0, 0, -1], tri0[0], tri0[1], tri0[2]), 0);
  const shift = (v: number[]) => [v[0] + 5, v[1] - 3, v[2] + 7];
  assert.equal(
    pointTriangleCcd([0, 0, 1], tri0[0], tri0[1], tri0[2], shift([0, 0, 1]), shift(tri0[0]), shift(tri0[1]), shift(tri0[2])),
    NO_CONTACT,
  );
});

test('crossing edges: ToI before the impact; near miss with refinement vs plain additive CCD', () => {
  // Edge a along x at z = 1 moving to z = -1, edge b static along y at z = 0: impact at t = 0.5.
  const a0 = [-1, 0, 1], a1 = [1, 0, 1], b0 = [0, -1, 0], b1 = [0, 1, 0];
  const toi = edgeEdgeCcd(a0, a1, b0, b1, [-1, 0, -1], [1, 0, -1], b0, b1);
  assert.ok(toi < 0.5 && toi > 0.4, `toi ${toi}`);
  // Same motion, edge a shifted 1e-4 beyond b's end (y = 1 + 1e-4): a near miss.
  const c0 = [-1, 1 + 1e-4, 1], c1 = [1, 1 + 1e-4, 1];
  const plain: CcdOptions = { refine: false };
  assert.equal(edgeEdgeCcd(c0, c1, b0, b1, [-1, 1 + 1e-4, -1], [1, 1 + 1e-4, -1], b0, b1), NO_CONTACT);
  assert.ok(edgeEdgeCcd(c0, c1, b0, b1, [-1, 1 + 1e-4, -1], [1, 1 + 1e-4, -1], b0, b1, 0, undefined, plain) < 0.5);
  // Out of iterations: a conservative hit, flagged.
  const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
  const capped = edgeEdgeCcd(c0, c1, b0, b1, [-1, 1 + 1e-4, -1], [1, 1 + 1e-4, -1], b0, b1, 0, stats, { maxIterations: 4 });
  assert.ok(capped <= 0.5 && stats.exhausted && stats.iterations === 4);
  // Parallel edges sliding onto each other: exact touching at t = 1 must be reported.
  assert.ok(edgeEdgeCcd(a0, a1, [-1, 0, 2], [1, 0, 2], [-1, 0, 1], [1, 0, 1], [-1, 0, 1], [1, 0, 1]) <= 1);
});

test('the tolerance follows the pair, not where it is: a 10 cm pair 1e-6 m apart 1e4 m from the origin is not touching', () => {
  // Edge a 1e-6 m above edge b (crossing it), moving 1e-7 m closer: no contact anywhere. With a tolerance of 1e-9 of
  // the world coordinates (1e-5 m out here) the pair would count as touching at t = 0 and block every step.
  for (const offset of [0, 1e4, -3e4]) {
    const p = (x: number, y: number, z: number) => [x + offset, y + offset, z + offset];
    const toi = edgeEdgeCcd(p(-0.05, 0, 1e-6), p(0.05, 0, 1e-6), p(0, -0.05, 0), p(0, 0.05, 0), p(-0.05, 0, 9e-7), p(0.05, 0, 9e-7), p(0, -0.05, 0), p(0, 0.05, 0));
    assert.equal(toi, NO_CONTACT, `offset ${offset}: toi ${toi}`);
    // Moving through b: hit before the impact at t = 1e-6 / 2e-6 = 0.5, wherever the pair is.
    const hit = edgeEdgeCcd(p(-0.05, 0, 1e-6), p(0.05, 0, 1e-6), p(0, -0.05, 0), p(0, 0.05, 0), p(-0.05, 0, -1e-6), p(0.05, 0, -1e-6), p(0, -0.05, 0), p(0, 0.05, 0));
    assert.ok(hit > 0.4 && hit < 0.5, `offset ${offset}: toi ${hit}`);
    const onTriangle = pointTriangleCcd(p(0, 0, 1e-6), p(-0.05, -0.05, 0), p(0.1, -0.05, 0), p(-0.05, 0.1, 0), p(0, 0, 9e-7), p(-0.05, -0.05, 0), p(0.1, -0.05, 0), p(-0.05, 0.1, 0));
    assert.equal(onTriangle, NO_CONTACT, `offset ${offset}: point-triangle toi ${onTriangle}`);
  }
});

test('Sample-Queries conformance (Wang et al. 2021): zero false negatives', () => {
  const files = readCcdQueryTree(dataRoot);
  assert.ok(files.length >= 40, `expected the sample CSVs under ${dataRoot}`);
  const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
  for (const mode of [{ name: 'refined', options: {} }, { name: 'plain additive', options: { refine: false } }]) {
    let queries = 0, positives = 0, falseNegatives = 0, falsePositives = 0, iterations = 0, exhausted = 0;
    let seconds = 0;
    const missed: string[] = [];
    for (const file of files) {
      const list = file.queries;
      const start = process.hrtime.bigint();
      list.forEach((q, i) => {
        const toi = runCcdQuery(q, file.edgeEdge, mode.options, stats);
        iterations += stats.iterations;
        if (stats.exhausted) exhausted++;
        const hit = toi <= 1;
        if (hit) assert.ok(toi >= 0);
        if (q.collides) positives++;
        if (q.collides && !hit) {
          falseNegatives++;
          missed.push(`${file.path.slice(dataRoot.length)}#${i}`);
        }
        if (!q.collides && hit) falsePositives++;
      });
      seconds += Number(process.hrtime.bigint() - start) * 1e-9;
      queries += list.length;
    }
    console.log(
      `[ccd ${mode.name}] ${queries} queries (${positives} colliding): false negatives ${falseNegatives}, ` +
        `false positives ${falsePositives}, ${((seconds / queries) * 1e6).toFixed(2)} us/query, ` +
        `${(iterations / queries).toFixed(1)} distance evaluations/query, budget exhausted ${exhausted}`,
    );
    assert.equal(falseNegatives, 0, `missed: ${missed.slice(0, 10).join(', ')}`);
  }
});

test('edge-edge CCD: two parallel diagonals of one face moving together never touch (regression: the line-line formula made them distance 0)', () => {
  // Positions logged from a falling cube (2x2x2 cells) whose sweep reported contact at t = 0; round-off in the last
  // digits makes the edges not exactly parallel.
  const start = [
    [-0.04999999999999998, 0.20096295203125, 1.0362860606614738e-17],
    [2.4319324964968537e-17, 0.20096295203124998, 0.05000000000000001],
    [2.1125216436321565e-17, 0.20096295203125, 7.360744650965233e-18],
    [0.05000000000000003, 0.20096295203124998, 0.05000000000000002],
  ];
  const ends = [
    [
      [-0.05000000000000002, 0.2052103565612593, -7.551497311720201e-17],
      [4.182288141654978e-17, 0.20521035656125908, 0.05000000000000004],
      [-2.0182410286966267e-17, 0.2052103565612593, -4.873711501060902e-17],
      [0.049999999999999996, 0.20521035656125913, 0.05000000000000005],
    ],
    [
      [-0.04999999999999999, 0.1951903353575874, 1.127765401366509e-17],
      [1.0784487199699772e-16, 0.19519033535758717, 0.049999999999999975],
      [1.9334302095290586e-16, 0.19519033535758698, 4.511924344938389e-18],
      [0.050000000000000044, 0.19519033535758706, 0.049999999999999926],
    ],
  ];
  for (const end of ends) {
    const toi = edgeEdgeCcd(start[0], start[1], start[2], start[3], end[0], end[1], end[2], end[3]);
    assert.equal(toi, NO_CONTACT, `toi ${toi}`);
  }
});

test('pairs sliding along each other at a small gap take a few distance evaluations, not motion/gap of them', () => {
  // The additive step is sized by the whole motion, so a pair that stays 1e-6 apart while sliding by 1 needed about
  // 1e6 steps (the 100,000 budget ran out and a conservative hit came back); the separating direction clears it.
  const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
  const gap = 1e-6;
  const tri = [[-1, -1, 0], [2, -1, 0], [-1, 2, 0]];
  const cases = [
    {
      name: 'nearly parallel edges, one sliding past the other 1e-6 above it',
      run: () => edgeEdgeCcd([0, 0, 0], [1, 0, 0], [0.2, gap, 0.01], [0.8, gap, -0.01], [0, 0, 0], [1, 0, 0], [1.2, gap, 0.01], [1.8, gap, -0.01], 0, stats),
      toi: NO_CONTACT,
    },
    {
      name: 'a point gliding over a triangle 1e-7 above it',
      run: () => pointTriangleCcd([0, 0, 1e-7], tri[0], tri[1], tri[2], [0.5, 0.3, 1e-7], tri[0], tri[1], tri[2], 0, stats),
      toi: NO_CONTACT,
    },
    {
      name: 'a point sliding while it sinks through the triangle at t = 0.5',
      run: () => pointTriangleCcd([0, 0, 1e-3], tri[0], tri[1], tri[2], [0.5, 0.3, -1e-3], tri[0], tri[1], tri[2], 0, stats),
      toi: 0.5,
    },
    {
      name: 'an edge sliding and tilting onto another: its end reaches it at t = 0.5',
      run: () => edgeEdgeCcd([0, 0, 0], [1, 0, 0], [0.25, gap, 0], [0.75, gap, 0], [0, 0, 0], [1, 0, 0], [0.55, -gap, 0], [1.05, gap, 0], 0, stats),
      toi: 0.5,
    },
  ];
  for (const c of cases) {
    const toi = c.run();
    assert.equal(stats.exhausted, false, c.name);
    assert.ok(stats.iterations <= 10, `${c.name}: ${stats.iterations} distance evaluations`);
    if (c.toi === NO_CONTACT) assert.equal(toi, NO_CONTACT, `${c.name}: toi ${toi}`);
    else assert.ok(toi < c.toi && toi > 0.8 * c.toi, `${c.name}: toi ${toi}, contact at ${c.toi}`);
  }
});

test('CCD finds every contact of random sliding, tilting pairs built to touch at a known time (no false negatives)', () => {
  // Each pair is built so that a point of A meets a point of B exactly at time tc, after sliding a long way at a
  // gap of 1e-8 .. 1e-2 (the regime where the separating direction takes over from the additive step).
  const rand = lcg(12);
  const stats: CcdStats = { iterations: 0, exhausted: false, distanceAtToi: 0 };
  const at = (a: number[], b: number[], t: number) => a.map((v, k) => v + t * (b[k] - v));
  const mix = (a: number[], b: number[], w: number) => a.map((v, k) => (1 - w) * v + w * b[k]);
  let evaluations = 0;
  for (let trial = 0; trial < 400; trial++) {
    const tc = 0.05 + 0.9 * Math.abs(rand());
    const gap = 10 ** (-8 + 6 * Math.abs(rand()));
    const wobble = () => [0.05 * rand(), 0.05 * rand(), 0.05 * rand()];
    const slide = [2 * rand(), 0, 2 * rand()];
    const move = (p: number[]) => p.map((v, k) => v + slide[k] + 0.05 * rand());
    if (trial % 2 === 0) {
      // Triangle near y = 0, point just above it; at tc the point sits at a random barycentric spot of the triangle.
      const t0 = [[-1, 0, -1], [1, 0, -1], [0, 0, 1]].map((v) => v.map((c, k) => c + wobble()[k]));
      const t1 = t0.map(move);
      const u = Math.abs(rand()), v = (1 - u) * Math.abs(rand());
      const tAt = t0.map((p, i) => at(p, t1[i], tc));
      const meet = tAt[0].map((c, k) => (1 - u - v) * c + u * tAt[1][k] + v * tAt[2][k]);
      const p0 = [meet[0] - slide[0] * tc, gap + 0.01 * Math.abs(rand()), meet[2] - slide[2] * tc];
      const p1 = p0.map((c, k) => c + (meet[k] - c) / tc);
      const toi = pointTriangleCcd(p0, t0[0], t0[1], t0[2], p1, t1[0], t1[1], t1[2], 0, stats);
      assert.ok(toi <= tc, `point-triangle trial ${trial}: toi ${toi} after the contact at ${tc} (gap ${gap})`);
    } else {
      // Edge b slides over edge a; at tc a point of b coincides with a point of a.
      const a0 = [[-1, 0, 0.1 * rand()], [1, 0, 0.1 * rand()]];
      const a1 = a0.map(move);
      const s = Math.abs(rand()), w = 0.1 + 0.8 * Math.abs(rand());
      const meet = mix(at(a0[0], a1[0], tc), at(a0[1], a1[1], tc), s);
      const b00 = [-0.5 + 0.1 * rand(), gap + 0.01 * Math.abs(rand()), 0.3 * rand()];
      const b01 = move(b00);
      const bStartAtTc = at(b00, b01, tc);
      const b1AtTc = bStartAtTc.map((c, k) => (meet[k] - (1 - w) * c) / w);
      const b10 = [b1AtTc[0] - slide[0] * tc + 0.05 * rand(), gap + 0.01 * Math.abs(rand()), b1AtTc[2] - slide[2] * tc];
      const b11 = b10.map((c, k) => c + (b1AtTc[k] - c) / tc);
      const toi = edgeEdgeCcd(a0[0], a0[1], b00, b10, a1[0], a1[1], b01, b11, 0, stats);
      assert.ok(toi <= tc, `edge-edge trial ${trial}: toi ${toi} after the contact at ${tc} (gap ${gap})`);
    }
    assert.equal(stats.exhausted, false, `trial ${trial}`);
    evaluations += stats.iterations;
  }
  console.log(`[ccd sliding contacts] 400 pairs, ${(evaluations / 400).toFixed(1)} distance evaluations per pair`);
});
