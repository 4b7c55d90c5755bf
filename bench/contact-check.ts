/**
 * CPU milliseconds of the contact check a run makes after every output frame (findIntersection: edges through
 * triangles, vertices below obstacles, pairs touching), on a scene's state:
 *
 *   npx tsx bench/contact-check.ts <scene> <file | init> [--calls N] [--cells S1,S2,...]
 *
 * <file> is a state written by `bench/resume.ts save`; `init` takes the scene's initial state. Prints the median and
 * the fastest of N calls (default 25) and whether the state passed. With --cells, also the check's two broad-phase
 * queries (edge-triangle candidates, and vertex-triangle and edge-edge candidates at distance 0) on spatial hashes of
 * each cell scale (BroadPhaseOptions.cellSizeScale), the scales taking turns in one process, with their pair counts:
 * a cell scale changes the tables' shape, never the pairs.
 */
import { readSavedState } from './saved-state.js';
import { loadScene, meshResolver } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import { contactPositions } from '../src/model/model.js';
import { findIntersection } from '../src/contact/intersection.js';
import { SpatialHashBroadPhase } from '../src/contact/broad-phase.js';

const usage = 'usage: npx tsx bench/contact-check.ts <scene> <file | init> [--calls N] [--cells S1,S2,...]';
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const [sceneName, file] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const calls = Number(option('--calls') ?? 25);
const cells = option('--cells')?.split(',').map(Number) ?? [];
if (!sceneName || !file || !(calls >= 1) || cells.some((s) => !(s > 0))) {
  console.error(usage);
  process.exit(2);
}
const { scene, baseDir } = loadScene(sceneName);
const model = buildModel(scene, meshResolver(baseDir));
if (!model.contact) {
  console.error(`scene '${sceneName}' has no contact: nothing to check`);
  process.exit(2);
}
const x = contactPositions(model, file === 'init' ? model.x0 : readSavedState(file, sceneName, model.x0.length).x);
const mesh = model.contact.mesh;

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const summary = (times: number[]): string => {
  const sorted = [...times].sort((a, b) => a - b);
  return `median ${sorted[sorted.length >> 1].toFixed(1)} ms, fastest ${sorted[0].toFixed(1)} ms`;
};

const times: number[] = [];
let verdict = '';
for (let c = 0; c < calls; c++) {
  const t0 = cpuMs();
  const hit = findIntersection(mesh, x);
  times.push(cpuMs() - t0);
  verdict = hit ? `violated: ${hit.message}` : 'passed';
}
console.log(`${sceneName} (${file}): contact check ${summary(times)} over ${calls} calls; ${verdict}`);

if (cells.length > 0) {
  const surface = { vertices: mesh.vertices, edges: mesh.edges, triangles: mesh.triangles };
  const phases = cells.map((cellSizeScale) => new SpatialHashBroadPhase(surface, { fixedNodes: mesh.fixedNodes, cellSizeScale }));
  const queryTimes = cells.map(() => [] as number[]);
  for (let c = 0; c < calls; c++) {
    phases.forEach((bp, k) => {
      const t0 = cpuMs();
      bp.findEdgeTriangleCandidates(x);
      bp.findProximityCandidates(x, 0);
      queryTimes[k].push(cpuMs() - t0);
    });
  }
  phases.forEach((bp, k) => {
    const pairs = `${bp.edgeTriangleCount} edge-triangle, ${bp.vertexTriangleCount} vertex-triangle, ${bp.edgeEdgeCount} edge-edge pairs`;
    console.log(`  cells ${cells[k]} x the mean edge box: queries ${summary(queryTimes[k])}; ${pairs}`);
  });
}
