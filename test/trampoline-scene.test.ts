/**
 * The armadillo trampoline (seed 000 section 5.3, appendix A (8)): the three scene variants as stated, the quality
 * armadillo mesh, and an initial state without intersection. One step of this scene costs several CPU seconds, so
 * the run itself is measured outside the suite (README, Measured results).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findIntersection, minimumDistance } from '../src/contact/intersection.js';
import { readShippedMesh } from '../src/io/mesh-files.js';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';

/** Smallest interior dihedral angle (degrees) over all tets: the angle between the two faces at each of the 6 edges. */
function minDihedralDegrees(positions: Float64Array, tets: Uint32Array): number {
  const p = (i: number) => [positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]];
  const sub = (a: number[], b: number[]) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const edges = [[0, 1, 2, 3], [0, 2, 1, 3], [0, 3, 1, 2], [1, 2, 0, 3], [1, 3, 0, 2], [2, 3, 0, 1]];
  let min = 180;
  for (let t = 0; t < tets.length; t += 4) {
    const v = [p(tets[t]), p(tets[t + 1]), p(tets[t + 2]), p(tets[t + 3])];
    for (const [a, b, c, d] of edges) {
      const e = sub(v[b], v[a]);
      // Normals of the faces (a, b, c) and (a, b, d) with the edge's component removed: the angle between the faces.
      const n1 = cross(e, sub(v[c], v[a]));
      const n2 = cross(e, sub(v[d], v[a]));
      const cos = dot(n1, n2) / Math.sqrt(dot(n1, n1) * dot(n2, n2));
      min = Math.min(min, (Math.acos(Math.min(1, Math.max(-1, cos))) * 180) / Math.PI);
    }
  }
  return min;
}

test('armadillo-quality: the shipped tetgen mesh has the stated counts and no sliver below 7 degrees (the old one: 1.6)', () => {
  const mesh = readShippedMesh('armadillo-quality');
  assert.equal(mesh.positions.length / 3, 7052);
  assert.equal(mesh.tets.length / 4, 30525);
  const angle = minDihedralDegrees(mesh.positions, mesh.tets);
  assert.ok(angle > 7 && angle < 7.5, `min dihedral ${angle.toFixed(3)} deg (tetgen reported 7.45)`);
});

test('armadillo-trampoline: the three variants as seed 000 states them, built, and starting without intersection', () => {
  const taus: Record<string, number | undefined> = {
    'armadillo-trampoline': undefined,
    'armadillo-trampoline-tau3': 3,
    'armadillo-trampoline-tau1.5': 1.5,
  };
  for (const [name, tau] of Object.entries(taus)) {
    const { scene } = loadScene(name);
    assert.equal(scene.integrator.name, 'a-search');
    assert.equal(scene.energy.tau, tau, name);
    assert.equal(scene.duration, 3);
    assert.ok(Math.abs(scene.dt - 1 / 120) < 1e-15);
    assert.equal(scene.contact?.dhat, 0.0005);
  }
  const { scene, baseDir } = loadScene('armadillo-trampoline');
  const [sheet, armadillo] = scene.bodies;
  assert.equal(sheet.mesh.type, 'shell');
  assert.equal(armadillo.material?.youngsModulus, 1e5);
  assert.equal(armadillo.material?.model, 'neo-hookean');
  const model = buildModel(scene, meshResolver(baseDir));
  const sheetNodes = 1 + 4 * 32 * 33;
  assert.equal(model.nNodes, sheetNodes + 7052);
  // Sheet: 1 m across the corners at y = 0, 0.4 kg/m^2 (octagon area 2 sqrt(2) R^2); only its 8 corners fixed.
  let sheetMass = 0;
  const corners: number[] = [];
  for (let i = 0; i < sheetNodes; i++) {
    sheetMass += model.mass[3 * i];
    assert.ok(Math.abs(model.x0[3 * i + 1]) < 1e-12);
    if (model.constrained[3 * i]) corners.push(i);
  }
  assert.ok(Math.abs(sheetMass - 0.4 * 2 * Math.SQRT2 * 0.25) < 1e-9, `sheet mass ${sheetMass}`);
  assert.equal(corners.length, 8);
  for (const i of corners) assert.ok(Math.abs(Math.hypot(model.x0[3 * i], model.x0[3 * i + 2]) - 0.5) < 1e-9);
  for (let i = sheetNodes; i < model.nNodes; i++) assert.equal(model.constrained[3 * i], 0, 'the armadillo is free');
  // Armadillo: 0.5 m tall, feet 0.2 m above the sheet, so a fall from rest reaches it at sqrt(2 * 0.2 / 9.8) = 0.20 s.
  let low = Infinity, high = -Infinity;
  for (let i = sheetNodes; i < model.nNodes; i++) {
    low = Math.min(low, model.x0[3 * i + 1]);
    high = Math.max(high, model.x0[3 * i + 1]);
  }
  assert.ok(Math.abs(high - low - 0.4985) < 1e-3 && Math.abs(low - 0.2009) < 1e-3, `armadillo from ${low} to ${high}`);
  assert.ok(Math.sqrt((2 * low) / 9.8) < 0.3, 'lands within the first 0.3 s');
  // Initial state: no intersecting pair, and every pair (the armadillo's own surface included) farther than dhat.
  const mesh = model.contact!.mesh;
  assert.equal(findIntersection(mesh, model.x0), null);
  const closest = minimumDistance(mesh, model.x0, 0.01);
  assert.ok(closest === null || closest.distance > 0.0005, `closest pair ${closest?.distance}`);
});
