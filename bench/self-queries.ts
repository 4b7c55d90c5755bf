/**
 * CPU milliseconds of the broad phase's self-contact query along the Newton steps a run actually takes, to compare
 * broad-phase code on the queries that matter (bench/contact-terms.ts times one query along 2 h v, a far longer
 * motion that lists many more pairs):
 *
 *   npx tsx bench/self-queries.ts <scene> <steps> <file> [<rounds>]
 *
 * Runs <steps> steps from the state in <file> (written by `bench/resume.ts save`), keeps the point after every
 * Newton iteration, and then queries, for each two consecutive points of a step, the self-contact pairs along the
 * motion between them less each body's mean motion, with margin dhat (as a candidate set built along a Newton step
 * does; its segment is the filter's fraction of the step, this one the fraction the line search took). Every query
 * runs `rounds` times (default 20); the fastest round is reported, with the queries' candidate counts and a digest of
 * their pairs (a change meant to find the same pairs must leave it as it is).
 */
import { readSavedState } from './saved-state.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { contactPositions } from '../src/model/model.js';
import { simulate } from '../src/sim/simulate.js';
import { SpatialHashBroadPhase } from '../src/contact/broad-phase.js';
import { groupMeans } from '../src/contact/group-motion.js';

const usage = 'usage: npx tsx bench/self-queries.ts <scene> <steps> <file> [<rounds>]';
const [sceneName, stepsText, file, roundsText] = process.argv.slice(2);
const steps = Number(stepsText);
const rounds = Number(roundsText ?? 20);
if (!sceneName || !file || !Number.isInteger(steps) || steps < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error(usage);
  process.exit(2);
}
const loaded = loadScene(sceneName);
const model = buildModel(loaded.scene, meshResolver(loaded.baseDir));
const contact = model.contact;
if (!contact || !contact.mesh.groups.some((g) => g.selfContact && g.kind !== 'particles')) {
  console.error(`scene '${sceneName}' has no self-contact`);
  process.exit(2);
}
const n = model.x0.length;
const state = readSavedState(file, sceneName, n);
model.x0.set(state.x);
model.v0.set(state.v);
const options = toRunOptions(loaded.scene);
options.duration = steps * options.h;

// The contact positions after every Newton iteration, per step.
const points: Float64Array[][] = [];
simulate(model, options, {
  newtonIteration(step, _info, x) {
    (points[step] ??= []).push(Float64Array.from(contactPositions(model, x)));
  },
});

const mesh = contact.mesh;
const selfContact = mesh.groups.map((g) => (g.selfContact ? 1 : 0));
const broadPhase = new SpatialHashBroadPhase(mesh, { fixedNodes: mesh.fixedNodes, groupOfNode: mesh.groupOfNode, selfContact, method: 'bvh' });
const dhat = contact.barrier.dhat;
const margins = new Float64Array(mesh.groups.length).fill(dhat);
const queries: { x: Float64Array; motion: Float64Array }[] = [];
const mean = new Float64Array(3 * mesh.groups.length);
const size = new Float64Array(mesh.groups.length);
for (const stepPoints of points) {
  if (!stepPoints) continue;
  for (let k = 0; k + 1 < stepPoints.length; k++) {
    const x = stepPoints[k];
    const motion = Float64Array.from(stepPoints[k + 1], (v, d) => v - x[d]);
    groupMeans(mesh, mesh.vertices, motion, null, mean, size);
    for (const v of mesh.vertices) for (let a = 0; a < 3; a++) motion[3 * v + a] -= mean[3 * mesh.groupOfNode[v] + a];
    queries.push({ x, motion });
  }
}
if (queries.length === 0) {
  console.error('no Newton step to query (every step converged at its start)');
  process.exit(1);
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let digest = 0;
let vertexTriangle = 0;
let edgeEdge = 0;
let best = Infinity;
for (let round = 0; round <= rounds; round++) {
  const t0 = cpuMs();
  for (const q of queries) {
    broadPhase.findProximityCandidates(q.x, dhat, 'same-group', margins, q.motion, true);
    if (round === 0) {
      vertexTriangle += broadPhase.vertexTriangleCount;
      edgeEdge += broadPhase.edgeEdgeCount;
      for (let i = 0; i < 2 * broadPhase.vertexTriangleCount; i++) digest = (Math.imul(digest, 31) + broadPhase.vertexTrianglePairs[i]) | 0;
      for (let i = 0; i < 2 * broadPhase.edgeEdgeCount; i++) digest = (Math.imul(digest, 31) + broadPhase.edgeEdgePairs[i]) | 0;
    }
  }
  // Round 0 warms the code up and lists the pairs; it is not timed.
  if (round > 0) best = Math.min(best, (cpuMs() - t0) / queries.length);
}
console.log(
  `${sceneName}: ${queries.length} queries along Newton steps, on average ${Math.round(vertexTriangle / queries.length)} vertex-triangle ` +
    `and ${Math.round(edgeEdge / queries.length)} edge-edge candidates; pair digest ${digest >>> 0}`,
);
console.log(`  ${best.toFixed(2)} CPU ms per query (fastest of ${rounds} rounds)`);
