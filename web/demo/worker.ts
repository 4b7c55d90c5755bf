/**
 * The demo's simulation worker: builds a demo scene with the same core the command line runs and streams the run
 * to the page while it computes (energy rows in batches, every output frame). The page stops a run by terminating
 * the worker.
 */

import { SpringSet } from '../../src/energies/spring-set.js';
import { integrators } from '../../src/integrators/registry.js';
import { vertexMapOf } from '../../src/model/model.js';
import { gatherVertices } from '../../src/model/vertex-map.js';
import { buildModel } from '../../src/scene/build.js';
import { frameGeometry } from '../../src/sim/frame-geometry.js';
import { frameInterval, simulate } from '../../src/sim/simulate.js';
import type { StepRecord } from '../../src/sim/records.js';
import { type ReadyMessage, type StartMessage, type WorkerMessage } from './protocol.js';
import { DEMO_SCENES, demoMeshes, demoRunOptions, demoScene } from './scenes.js';

const post = (message: WorkerMessage, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(message, transfer);

// What the page offers: the demo scenes and the integrators with their parameters, from the same registry as the CLI.
post({
  type: 'catalog',
  scenes: DEMO_SCENES.map((s) => ({ name: s.name, title: s.title, note: s.note, duration: s.duration, dt: (s.input as { dt: number }).dt })),
  integrators: integrators.map((i) => ({ name: i.name, summary: i.summary, params: i.params })),
});

self.onmessage = (event: MessageEvent<StartMessage>) => {
  if (event.data.type !== 'start') return;
  try {
    run(event.data);
  } catch (err) {
    post({ type: 'error', message: (err as Error).message });
  }
};

function run(start: StartMessage): void {
  const scene = demoScene(start.scene, { integrator: start.integrator, params: start.params, dt: start.dt, duration: start.duration });
  const model = buildModel(scene, demoMeshes);
  const options = demoRunOptions(scene);
  const { nodes, triangles } = frameGeometry(model);
  const vertexMap = vertexMapOf(model);
  const mapped = new Float64Array(3 * nodes.length);
  const slot = new Int32Array(vertexMap.nVertices).fill(-1);
  nodes.forEach((node, i) => (slot[node] = i));

  // Bodies by their surface (tet bodies, then obstacle meshes as one group each), particles by themselves.
  const vertexBody = new Int32Array(nodes.length).fill(-1);
  const bodyNames: string[] = [];
  const obstacleBodies: boolean[] = [];
  const markSurface = (surface: Uint32Array, name: string, obstacle: boolean) => {
    const index = bodyNames.length;
    bodyNames.push(name);
    obstacleBodies.push(obstacle);
    for (const node of surface) if (slot[node] >= 0) vertexBody[slot[node]] = index;
  };
  for (const body of model.bodies) if (body.surface.length > 0) markSurface(body.surface, body.name, false);
  const bodySurface = new Set<number>();
  for (const body of model.bodies) for (const node of body.surface) bodySurface.add(node);
  const obstacleSurface = Uint32Array.from([...model.surface].filter((node) => !bodySurface.has(node)));
  if (obstacleSurface.length > 0) markSurface(obstacleSurface, 'obstacles', true);

  const lines: number[] = [];
  for (const term of model.terms) {
    if (!(term instanceof SpringSet)) continue;
    for (let k = 0; k < term.springs.length; k += 2) {
      const a = slot[term.springs[k]];
      const b = slot[term.springs[k + 1]];
      if (a >= 0 && b >= 0) lines.push(a, b);
    }
  }
  const ready: ReadyMessage = {
    type: 'ready',
    vertexCount: nodes.length,
    triangles,
    vertexBody,
    bodyNames,
    obstacleBodies,
    lines: Uint32Array.from(lines),
    planes: scene.obstacles.flatMap((o) => (o.type === 'plane' ? [{ name: o.name, point: o.point, normal: o.normal }] : [])),
    h: options.h,
    steps: Math.round(options.duration / options.h),
    frameSeconds: frameInterval(options) * options.h,
  };
  post(ready);

  let rows: number[] = [];
  let hasContact = false;
  let lastPost = performance.now();
  const flush = () => {
    if (rows.length === 0) return;
    const batch = Float64Array.from(rows);
    post({ type: 'rows', rows: batch, hasContact }, [batch.buffer]);
    rows = [];
    lastPost = performance.now();
  };
  const onStep = (r: StepRecord) => {
    const contact = r.potentials.get('contact');
    if (contact !== undefined) hasContact = true;
    rows.push(r.t, r.kinetic, r.potential, contact ?? NaN, r.total, r.target, r.alpha); // the order of SERIES
    if (performance.now() - lastPost > 50) flush();
  };
  const computeStart = performance.now();
  const { summary } = simulate(model, options, {
    step: onStep,
    frame: (index, t, x) => {
      flush();
      gatherVertices(vertexMap, x, nodes, mapped);
      const positions = Float32Array.from(mapped);
      post({ type: 'frame', index, t, positions, sentMs: performance.now() - computeStart }, [positions.buffer]);
    },
  });
  flush();
  post({ type: 'done', summary, sentMs: performance.now() - computeStart });
}
