/**
 * Seed 000 section 5.2, figure 4: the vibrating membrane's u21 mode over time, per integrator and step.
 *
 *   npm run analysis:membrane-modes [-- --quick] [-- --rings N] [-- --tol T] [-- --duration S] [-- --runs a-search:120,bdf2:3000@1e-4,...] [-- --out DIR]
 *
 * Runs the `vibrating-membrane` scene (its file, its disc remeshed with N rings: 73 is the
 * scene's 16,207 nodes) with each integrator:steps-per-second pair (`@T`: that run's Newton tolerance), projects every output frame's out-of-plane
 * displacement and velocity on the lowest drum modes (src/analysis/membrane-modes.ts: mass-weighted least squares on
 * J_m(j_mn r / R) cos / sin(m theta)), and writes under out/analysis/membrane-modes/ (or DIR):
 *   table.md   per run: CPU, Newton iterations, H_end / H_0, and per 0.1 s window the largest |u21| displacement
 *              coefficient and the largest norm of the other modes' coefficients
 *   modes.csv  every frame of every run: time and the coefficients
 *   u21.svg    the u21 displacement coefficient over time, one line per run
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DrumProjection, LOWEST_DRUM_MODES, modeName, windowedAmplitudes, type ModeHistory } from '../src/analysis/membrane-modes.js';
import { linePlotSvg } from '../src/io/plot.js';
import { loadScene, meshResolver, PACKAGE_ROOT, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';
import type { Scene } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The scene with its disc remeshed, run with the integrator at h = 1 / stepsPerSecond; frames at 240 per second or every step. */
export function runMembrane(base: Scene, baseDir: string, integrator: string, stepsPerSecond: number, rings: number, duration: number, tolerance = base.solver.tolerance): ModeHistory {
  const body = base.bodies[0];
  if (body.mesh.type !== 'shell' || body.mesh.shape.type !== 'disc' || !body.velocity.drumMode) throw new Error('membrane-modes: the scene must be a disc shell started in a drum mode');
  const { radius } = body.mesh.shape;
  const scene: Scene = {
    ...base,
    duration,
    dt: 1 / stepsPerSecond,
    frameRate: Math.min(240, stepsPerSecond),
    integrator: { name: integrator, params: {} },
    solver: { ...base.solver, tolerance },
    bodies: [{ ...body, mesh: { ...body.mesh, shape: { type: 'disc', radius, rings } } }],
  };
  const model = buildModel(scene, meshResolver(baseDir));
  const nodes = Uint32Array.from({ length: model.nNodes }, (_, i) => i);
  const center = body.velocity.drumMode.center as [number, number, number];
  const projection = new DrumProjection(LOWEST_DRUM_MODES, model.rest, model.mass, nodes, center, radius);
  const history: ModeHistory = { label: `${integrator} h=1/${stepsPerSecond}`, modes: LOWEST_DRUM_MODES, t: [], w: [], v: [], cpuSeconds: 0, newtonIterations: 0, energyKept: null };
  const { summary } = simulate(model, toRunOptions(scene), {
    frame(_k, t, x, v) {
      history.t.push(t);
      history.w.push(projection.project(x, new Float64Array(LOWEST_DRUM_MODES.length), model.rest));
      history.v.push(projection.project(v, new Float64Array(LOWEST_DRUM_MODES.length)));
    },
  });
  return { ...history, cpuSeconds: summary.cpuSeconds ?? NaN, newtonIterations: summary.newtonIterations, energyKept: summary.energyKept, stopped: summary.stopped };
}

async function main(): Promise<void> {
  // --quick: a coarse smoke version (8 rings, 0.3 s, A-search and BDF2 at 1/120 s).
  const quick = process.argv.includes('--quick');
  const rings = Number(arg('rings') ?? (quick ? 8 : 73));
  const duration = Number(arg('duration') ?? (quick ? 0.3 : 1));
  // The reference at h = 1/3000 s runs with a tight Newton tolerance: with the scene's 0.01 h its predictor passes the
  // stop untouched every step (0 Newton iterations), so `@1e-4` makes it converge.
  const runs = (arg('runs') ?? (quick ? 'a-search:120,bdf2:120' : 'a-search:120,bdf2:120,a-search:240,bdf2:240,bdf2:3000@1e-4')).split(',').map((r) => {
    const [spec, tol] = r.split('@');
    const [name, steps] = spec.split(':');
    if (!name || !(Number(steps) > 0) || (tol !== undefined && !(Number(tol) > 0))) throw new Error(`membrane-modes: --runs entry '${r}' is not integrator:steps-per-second[@tolerance]`);
    return { name, steps: Number(steps), tolerance: tol === undefined ? undefined : Number(tol) };
  });
  const out = resolve(arg('out') ?? join(PACKAGE_ROOT, 'out', 'analysis', 'membrane-modes'));
  mkdirSync(out, { recursive: true });
  const { scene, baseDir } = loadScene('vibrating-membrane');
  // --tol: Newton's stop |dx| <= tol * h for the runs without their own `@tolerance`.
  const tolerance = Number(arg('tol') ?? scene.solver.tolerance);
  const u21 = LOWEST_DRUM_MODES.findIndex((m) => m.m === 2 && m.n === 1 && !m.sine);
  const histories: ModeHistory[] = [];
  const lines: string[] = [`# Vibrating membrane: u21 over time (disc of ${rings} rings, ${1 + 3 * rings * (rings + 1)} nodes, ${duration} s, Newton tolerance ${tolerance} h unless a run gives its own)`, ''];
  lines.push('Per 0.1 s window: largest |u21| displacement coefficient (mm) / largest norm of the other modes\' coefficients (mm).', '');
  let header = '| run | CPU s | Newton | H_end/H_0 |';
  let rule = '|---|---|---|---|';
  for (let w = 0; w < Math.ceil(duration / 0.1 - 1e-9); w++) {
    header += ` ${(w * 0.1).toFixed(1)} |`;
    rule += '---|';
  }
  lines.push(header, rule);
  for (const run of runs) {
    const h = runMembrane(scene, baseDir, run.name, run.steps, rings, duration, run.tolerance ?? tolerance);
    if (run.tolerance !== undefined) h.label += ` tol=${run.tolerance}`;
    histories.push(h);
    const cells = windowedAmplitudes(h, u21, 0.1).map((c) => ` ${(1000 * c.mode).toFixed(2)} / ${(1000 * c.others).toFixed(2)} |`);
    lines.push(`| ${h.label}${h.stopped ? ` (stopped: ${h.stopped})` : ''} | ${h.cpuSeconds.toFixed(1)} | ${h.newtonIterations} | ${h.energyKept?.toFixed(4) ?? '-'} |${cells.join('')}`);
    console.log(lines[lines.length - 1]);
  }
  writeFileSync(join(out, 'table.md'), `${lines.join('\n')}\n`);
  const names = LOWEST_DRUM_MODES.map(modeName);
  const csv = ['run,t,' + names.map((n) => `w_${n}`).join(',') + ',' + names.map((n) => `v_${n}`).join(',')];
  for (const h of histories) h.t.forEach((t, f) => csv.push(`${h.label},${t},${Array.from(h.w[f]).join(',')},${Array.from(h.v[f]).join(',')}`));
  writeFileSync(join(out, 'modes.csv'), `${csv.join('\n')}\n`);
  const svg = await linePlotSvg(
    histories.map((h) => ({ name: h.label, t: h.t, y: h.w.map((w) => w[u21]) })),
    { title: 'vibrating membrane: u21 displacement coefficient', xTitle: 't (s)', yTitle: 'm' },
  );
  writeFileSync(join(out, 'u21.svg'), svg);
  console.log(`wrote ${out}/table.md, modes.csv, u21.svg`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename ?? '')) await main();
