import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShellBending, findHinges, hingeAngle, plateBendingStiffness } from '../src/energies/shell-bending.js';
import { ShellMembrane, lumpedShellMass, membraneLame } from '../src/energies/shell-membrane.js';
import { discSheet, polygonSheet, rectangleSheet } from '../src/mesh/shell-shapes.js';
import { assembleHessianPattern, derivativesAndDifferences, maxAbs, minEigenvalue, rng } from './numeric-helpers.js';

/** A small sheet (rectangle 3 x 2 cells) moved to a random non-flat pose: stretched, sheared, bent. */
function randomPose(rand: () => number, amplitude: number): { rest: Float64Array; x: Float64Array; triangles: Uint32Array } {
  const { positions: rest, triangles } = rectangleSheet([0.3, 0.2], [3, 2]);
  const x = Float64Array.from(rest, (v) => 1.1 * v + amplitude * (2 * rand() - 1));
  return { rest, x, triangles };
}

function checkDerivatives(term: ShellMembrane | ShellBending, x: Float64Array, what: string): void {
  const { g, H, fdGradient, fdHessian } = derivativesAndDifferences(term, x, 1.7, 1e-7);
  const m = x.length;
  const gScale = maxAbs(g);
  const hScale = Math.max(...H.map((row) => maxAbs(row)));
  assert.ok(gScale > 0 && hScale > 0, `${what}: nonzero derivatives`);
  for (let d = 0; d < m; d++) {
    assert.ok(Math.abs(fdGradient[d] - g[d]) < 1e-6 * gScale, `${what}: gradient ${d}: ${g[d]} vs ${fdGradient[d]}`);
    for (let r = 0; r < m; r++) {
      assert.ok(Math.abs(fdHessian[m * r + d] - H[r][d]) < 1e-5 * hScale, `${what}: Hessian ${r},${d}: ${H[r][d]} vs ${fdHessian[m * r + d]}`);
    }
  }
}

for (const model of ['neo-hookean', 'stvk'] as const) {
  test(`${model} membrane: gradient and Hessian match central differences of the energy`, () => {
    const rand = rng(model === 'stvk' ? 7 : 8);
    for (let trial = 0; trial < 4; trial++) {
      const { rest, x, triangles } = randomPose(rand, 0.03);
      checkDerivatives(new ShellMembrane(rest, triangles, model, 2e5, 0.3, 1e-3), x, `${model} trial ${trial}`);
    }
  });

  test(`${model} membrane: zero energy and force at rest and under rigid motion; projected Hessian is PSD`, () => {
    const { positions: rest, triangles } = discSheet(0.1, 3);
    const term = new ShellMembrane(rest, triangles, model, 1e5, 0.25, 2e-3);
    const c = Math.cos(0.7), s = Math.sin(0.7);
    const moved = new Float64Array(rest.length);
    for (let i = 0; i < rest.length; i += 3) {
      moved[i] = c * rest[i] - s * rest[i + 1] + 0.3;
      moved[i + 1] = s * rest[i] + c * rest[i + 1] - 1;
      moved[i + 2] = rest[i + 2] + 2;
    }
    for (const x of [rest, moved]) {
      assert.ok(Math.abs(term.energy(x)) < 1e-12);
      const g = new Float64Array(x.length);
      term.addGradient(x, 1, g);
      assert.ok(maxAbs(g) < 1e-9, `force at rest ${maxAbs(g)}`);
    }
    const rand = rng(3);
    const x = Float64Array.from(rest, (v) => 0.8 * v + 0.02 * (2 * rand() - 1)); // compressed: StVK is indefinite
    const H = assembleHessianPattern(term, x.length / 3);
    term.addHessian(x, 1, H, true);
    assert.ok(minEigenvalue(H.toDense()) > -1e-6 * maxAbs(H.values), 'projected Hessian PSD');
  });
}

test('membrane: a uniaxial stretch by 1 + eps stores E t eps^2 / 2 per area (nu = 0) and the plane-stress Lame values', () => {
  const { positions: rest, triangles } = rectangleSheet([0.2, 0.1], [4, 2]);
  const eps = 1e-4;
  const x = Float64Array.from(rest, (v, d) => (d % 3 === 0 ? (1 + eps) * v : v));
  for (const model of ['neo-hookean', 'stvk'] as const) {
    const term = new ShellMembrane(rest, triangles, model, 1e6, 0, 1e-3);
    const expected = 0.5 * 1e6 * 1e-3 * eps * eps * 0.02;
    assert.ok(Math.abs(term.energy(x) / expected - 1) < 1e-3, `${model}: ${term.energy(x)} vs ${expected}`);
  }
  const { mu, lambda } = membraneLame(1e6, 0.3);
  assert.ok(Math.abs(mu - 1e6 / 2.6) < 1e-6 && Math.abs(lambda - 3e5 / 0.91) < 1e-6);
});

test('lumped shell mass: area density times area, one third per triangle corner', () => {
  const { positions, triangles } = rectangleSheet([0.2, 0.1], [4, 3]);
  const m = new Float64Array(positions.length / 3);
  lumpedShellMass(positions, triangles, 0.4, m);
  assert.ok(Math.abs(m.reduce((s, v) => s + v, 0) - 0.4 * 0.02) < 1e-15);
});

test('hinges: interior edges of the generated sheets; an edge of three triangles is refused', () => {
  const rect = rectangleSheet([1, 1], [3, 2]);
  // Interior edges of a 3 x 2 grid with one diagonal per cell: 2 * 2 (along z, between columns) + 3 (along x) + 6 diagonals.
  assert.equal(findHinges(rect.triangles).nodes.length / 4, 2 * 2 + 3 * 1 + 6);
  const disc = discSheet(1, 4);
  // Euler: V - E + F = 1 with boundary edges = boundary nodes = 24.
  const V = disc.positions.length / 3, F = disc.triangles.length / 3;
  assert.equal(findHinges(disc.triangles).nodes.length / 4, V + F - 1 - 24);
  const octagon = polygonSheet(8, 1, 3);
  assert.equal(octagon.positions.length / 3, 1 + 8 * 6);
  assert.throws(() => findHinges(Uint32Array.from([0, 1, 2, 1, 0, 3, 0, 1, 4])), /nodes 0 and 1 belongs to more than two triangles/);
});

test('dihedral angle: 0 flat, +-pi/2 at a right angle (sign by side), pi folded', () => {
  const flat = [0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5, 0, -1];
  assert.ok(Math.abs(hingeAngle(flat)) < 1e-15);
  const up = [0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5, 1, 0];
  const down = [0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5, -1, 0];
  assert.ok(Math.abs(Math.abs(hingeAngle(up)) - Math.PI / 2) < 1e-12);
  assert.ok(Math.abs(hingeAngle(up) + hingeAngle(down)) < 1e-12);
  assert.ok(Math.abs(Math.abs(hingeAngle([0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5, 0, 1])) - Math.PI) < 1e-12);
});

test('bending: gradient and Hessian match central differences; zero at rest; projected Hessian PSD', () => {
  const rand = rng(11);
  for (let trial = 0; trial < 4; trial++) {
    const { rest, x, triangles } = randomPose(rand, 0.03);
    // A curved rest shape too (rest angles away from 0).
    const curvedRest = Float64Array.from(rest, (v, d) => (d % 3 === 1 ? 0.5 * rest[d - 1] ** 2 : v));
    for (const r of [rest, curvedRest]) {
      const term = new ShellBending(r, triangles, 0.3);
      checkDerivatives(term, x, `bending trial ${trial}`);
      assert.ok(Math.abs(term.energy(r)) < 1e-20);
      const H = assembleHessianPattern(term, x.length / 3);
      term.addHessian(x, 1, H, true);
      assert.ok(minEigenvalue(H.toDense()) > -1e-8 * maxAbs(H.values));
    }
  }
});

test('bending calibration: a grid bent into a cylinder about a grid axis stores D kappa^2 / 2 per area', () => {
  const L = 0.2, W = 0.1, kappa = 0.5;
  const { positions: rest, triangles } = rectangleSheet([L, W], [40, 20]);
  const E = 1e9, t = 1e-3;
  const D = plateBendingStiffness(E, 0, t);
  const term = new ShellBending(rest, triangles, D / 2);
  for (const axis of [0, 2]) {
    // Nodes on the cylinder of radius 1 / kappa: arc length s along `axis` -> (sin(kappa s) / kappa, (1 - cos) / kappa).
    const x = new Float64Array(rest);
    for (let i = 0; i < x.length; i += 3) {
      const s = rest[i + axis];
      x[i + axis] = Math.sin(kappa * s) / kappa;
      x[i + 1] = (1 - Math.cos(kappa * s)) / kappa;
    }
    // Hinges at the boundary are missing half a cell on each side: compare per folding edge, i.e. over the area
    // between the first and last interior fold lines plus one cell (cells - 1 folds, each carrying one cell's worth).
    const cells = axis === 0 ? 40 : 20;
    const area = L * W * (cells - 1) / cells;
    const expected = (D / 2) * kappa * kappa * area;
    assert.ok(Math.abs(term.energy(x) / expected - 1) < 1e-3, `axis ${axis}: ${term.energy(x)} vs ${expected}`);
  }
});
