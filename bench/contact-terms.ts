/**
 * CPU milliseconds per call of the contact barrier's methods on a saved state (one from `bench/resume.ts save`),
 * to compare contact code without the solver around it:
 *
 *   npx tsx bench/contact-terms.ts <scene> <file> [<calls>]
 *
 * Each method runs `calls` times (default 50) in 15 rounds; the fastest round is reported, which keeps other load
 * on the machine out of the figure. maxStep takes a step of twice the state's velocity times h. Scenes with
 * friction also time the lagged friction term (frozen at the state, evaluated after a step of the state's velocity).
 * Scenes with self-contact also time the broad phase's self-contact query as the candidate sets run it (box trees,
 * margin dhat): at the state, and along that step less each body's mean motion.
 */
import { readSavedState } from './saved-state.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { BsrMatrix, PatternBuilder } from '../src/math/bsr.js';
import { frictionVelocityFor } from '../src/contact/friction.js';
import { FrictionPotential } from '../src/contact/friction-potential.js';
import { buildModel } from '../src/scene/build.js';
import { SpatialHashBroadPhase } from '../src/contact/broad-phase.js';
import { groupMeans } from '../src/contact/group-motion.js';

const [sceneName, file, callsText] = process.argv.slice(2);
const calls = Number(callsText ?? 50);
if (!sceneName || !file || !Number.isInteger(calls) || calls < 1) {
  console.error('usage: npx tsx bench/contact-terms.ts <scene> <file> [<calls>]');
  process.exit(2);
}
const { scene, baseDir } = loadScene(sceneName);
const model = buildModel(scene, meshResolver(baseDir));
const barrier = model.contact?.barrier;
if (!barrier) {
  console.error(`scene '${sceneName}' has no contact`);
  process.exit(2);
}
const n = model.x0.length;
const state = readSavedState(file, sceneName, n);
const x = state.x;
const h = toRunOptions(scene).h;
const dx = Float64Array.from(state.v, (v) => 2 * h * v);

barrier.patternStale(x);
const builder = new PatternBuilder(model.nNodes);
for (const term of model.terms) term.addPattern(builder);
const H = new BsrMatrix(builder.build());
for (const term of model.terms) term.bindPattern?.(H);
const g = new Float64Array(n);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const methods: Record<string, () => unknown> = {
  energy: () => barrier.energy(x),
  gradient: () => barrier.addGradient(x, 1, g),
  hessian: () => barrier.addHessian(x, 1, H, true),
  maxStep: () => barrier.maxStep(x, dx),
  activeContacts: () => barrier.activeContacts(x, null),
  patternStale: () => barrier.patternStale(x),
};
const contact = model.contact!;
if (contact.hasFriction) {
  const friction = new FrictionPotential(contact.mesh, barrier, frictionVelocityFor(contact.frictionVelocity, toRunOptions(scene).solver.tolerance));
  friction.lag(x, x, h);
  const xf = Float64Array.from(x, (v, d) => v + 0.5 * dx[d]);
  // The friction stencils in the matrix's pattern (the barrier's active pairs already are; plane pairs are diagonal).
  const fb = new PatternBuilder(model.nNodes, H.pattern);
  friction.addPattern(fb);
  const HF = new BsrMatrix(fb.build());
  friction.bindPattern(HF);
  console.log(`  (friction: ${friction.activeCount} lagged contacts)`);
  methods.frictionEnergy = () => friction.energy(xf);
  methods.frictionGradient = () => friction.addGradient(xf, 1, g);
  methods.frictionHessian = () => friction.addHessian(xf, 1, HF, true);
}
const mesh = contact.mesh;
if (mesh.groups.some((group) => group.selfContact && group.kind !== 'particles')) {
  const selfContact = mesh.groups.map((group) => (group.selfContact ? 1 : 0));
  const broadPhase = new SpatialHashBroadPhase(mesh, { fixedNodes: mesh.fixedNodes, groupOfNode: mesh.groupOfNode, selfContact, method: 'bvh' });
  const dhat = barrier.dhat;
  const margins = new Float64Array(mesh.groups.length).fill(dhat);
  // The step less each body's mean motion over its surface vertices, as the self-contact sets sweep it.
  const mean = new Float64Array(3 * mesh.groups.length);
  groupMeans(mesh, mesh.vertices, dx, null, mean, new Float64Array(mesh.groups.length));
  const relative = Float64Array.from(dx);
  for (const v of mesh.vertices) for (let a = 0; a < 3; a++) relative[3 * v + a] -= mean[3 * mesh.groupOfNode[v] + a];
  methods.selfQuery = () => broadPhase.findProximityCandidates(x, dhat, 'same-group', margins);
  methods.selfQueryAlong = () => broadPhase.findProximityCandidates(x, dhat, 'same-group', margins, relative, true);
}
console.log(`${sceneName}: ${barrier.activeContacts(x, null).count} active pairs; CPU ms per call (fastest of 15 rounds of ${calls})`);
for (const [name, run] of Object.entries(methods)) {
  for (let i = 0; i < Math.max(3, calls / 10); i++) run();
  let best = Infinity;
  for (let round = 0; round < 15; round++) {
    const t0 = cpuMs();
    for (let i = 0; i < calls; i++) run();
    best = Math.min(best, (cpuMs() - t0) / calls);
  }
  console.log(`  ${name.padEnd(15)} ${best.toFixed(4)}`);
}
