/**
 * Seed 000 appendix E, large-step collision study, in one command:
 *
 *   npm run analysis:particle-wall [-- --quick] [-- --out DIR]
 *   (tsx scripts/particle-wall-table.ts [--quick] [--out DIR])
 *
 * Runs the `particle-wall` scene (one 1 kg particle at 1 m/s into an IPC wall, no gravity) at its default large
 * step (h = 100 s, kappa = 1 N/m, dhat = 1 m: h^2 kappa / m = 1e4, a step flies 100 dhat) for phases beta = 0,
 * 0.05, ..., 0.95 with trapezoidal, A-1, A-search and implicit Euler, and compares the outgoing speeds, collision
 * steps and energy-loss steps with the appendix's statements. Without --quick it also sweeps h (and a soft kappa)
 * to show where the large-step behaviour sets in. Writes, under out/analysis/particle-wall/ (or DIR):
 *   table.md          the tables and the statement-by-statement comparison
 *   results.csv       one row per (h, kappa, integrator, phase)
 *   trajectories.csv  every step of every run
 *   speeds.svg        outgoing speed against phase per integrator, with the appendix's limits dashed
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import {
  appendixLimit,
  collisionVelocities,
  ENERGY_LOSS_TOL,
  resultsCsv,
  runParticleWall,
  speedTableMarkdown,
  summarize,
  trajectoriesCsv,
  velocityTableMarkdown,
  type ParticleWallResult,
} from '../src/analysis/particle-wall.js';
import { linePlotSvg, type PlotSeries } from '../src/io/plot.js';
import { PACKAGE_ROOT } from '../src/io/scene-files.js';
import { parametricScenes } from '../src/scene/parametric.js';

const INTEGRATORS = ['trapezoidal', 'a-1', 'a-search', 'implicit-euler'];
/** "Agrees" for a speed or velocity statement: within this of the appendix's value (m/s; |v_0| = 1). */
const SPEED_TOL = 0.01;
const ALPHA_MAX = 1.1; // the A-search default, used by the limit formulas

function parseArgs(argv: string[]): { quick: boolean; out: string } {
  let quick = false;
  let out = join(PACKAGE_ROOT, 'out', 'analysis', 'particle-wall');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') quick = true;
    else if (a === '--out' && argv[i + 1] !== undefined) out = resolve(argv[++i]);
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: tsx scripts/particle-wall-table.ts [--quick] [--out DIR]\n');
      process.exit(0);
    } else {
      process.stderr.write(`particle-wall-table: unknown argument '${a}' (expected --quick or --out DIR)\n`);
      process.exit(2);
    }
  }
  return { quick, out };
}

const f = (x: number, d = 4) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const set = (xs: number[]) => `{${xs.join(', ')}}`;
const yesNo = (ok: boolean) => (ok ? 'yes' : '**no**');

function runGrid(h: number, kappa: number, dhat: number, phases: number[]): ParticleWallResult[] {
  const out: ParticleWallResult[] = [];
  for (const integrator of INTEGRATORS) for (const phase of phases) out.push(runParticleWall({ integrator, phase, kappa, dhat, h }));
  return out;
}

/** The appendix's statements, each with what we measured and whether it agrees. */
function checksMarkdown(results: ParticleWallResult[], phases: number[]): string {
  const a1 = summarize(results, 'a-1');
  const tr = summarize(results, 'trapezoidal');
  const as = summarize(results, 'a-search');
  const ie = summarize(results, 'implicit-euler');
  const of = (name: string) => results.filter((r) => r.case.integrator === name).sort((a, b) => a.case.phase - b.case.phase);
  const lossCountsMatchLimit = (name: string) =>
    of(name).every((r) => r.energyLossSteps.length === appendixLimit(name, r.case.phase, ALPHA_MAX)!.lossSteps.length);
  // Gain or not, at the phases where the limit is clear of the boundary v_out = 1 (beta = 1/2 and 3/4 sit on it).
  const clear = of('trapezoidal').filter((r) => Math.abs(appendixLimit('trapezoidal', r.case.phase)!.outgoing - 1) > SPEED_TOL);
  const gainAgrees = clear.filter((r) => r.outgoingSpeed > 1 === appendixLimit('trapezoidal', r.case.phase)!.outgoing > 1).length;
  // A-search v_3 against the appendix's printed formula v_3 = 1 + v_2 (v_2 from its own formula).
  const paperV3Error = Math.max(
    ...of('a-search').map((r) => {
      const v = collisionVelocities(r, 3);
      return Math.abs(v[2] - (1 - Math.min(r.case.phase * ALPHA_MAX, 1)));
    }),
  );
  const rows: [string, string, string][] = [
    ['A-1 leaves at speed 1 whatever the phase', `max over phases of abs(v_out - 1) = ${f(a1.maxSpeedError, 5)}`, yesNo(a1.maxSpeedError <= SPEED_TOL)],
    ['A-1: the collision takes four steps to resolve', `collision steps ${set(a1.collisionSteps)}`, yesNo(a1.collisionSteps.length === 1 && a1.collisionSteps[0] === 4)],
    [
      'A-1: two steps with energy loss (v_2 = -beta, v_3 = 1 - beta; one step at beta = 0)',
      `loss-step counts ${set(a1.lossStepCounts)}; equal to the limit's count at every phase: ${lossCountsMatchLimit('a-1') ? 'yes' : 'no'}`,
      yesNo(lossCountsMatchLimit('a-1')),
    ],
    ['A-1 velocities -1, -beta, 1 - beta, 1', `max abs error over v_1..v_4 and phases = ${f(a1.maxVelocityError, 5)}`, yesNo(a1.maxVelocityError <= SPEED_TOL)],
    ['Trapezoidal: the collision takes two or three steps', `collision steps ${set(tr.collisionSteps)}`, yesNo(tr.collisionSteps.every((s) => s === 2 || s === 3))],
    [
      'Trapezoidal: the final velocity depends on the phase and goes up to 3',
      `v_out from ${f(tr.minSpeed)} to ${f(tr.maxSpeed)}`,
      yesNo(tr.maxSpeed <= 3 + SPEED_TOL && tr.maxSpeed >= 3 - 0.1 && tr.maxSpeed - tr.minSpeed > 1),
    ],
    [
      'Trapezoidal: three quarters of the phases gain energy (limit: v_out > 1 for beta < 1/2 or beta > 3/4)',
      `${Math.round(tr.gainFraction * phases.length)} of ${phases.length} phases leave faster than 1 m/s; gain or not as the limit says at ${gainAgrees} of the ${clear.length} phases not on a boundary (beta = 1/2, 3/4)`,
      yesNo(gainAgrees === clear.length),
    ],
    [
      'Trapezoidal velocities 1 - 2 beta, then 3 - 4 beta (beta < 2/3) or 2 beta - 1, 8 beta - 5 (beta > 2/3)',
      `max abs error = ${f(tr.maxVelocityError, 5)}`,
      yesNo(tr.maxVelocityError <= SPEED_TOL),
    ],
    ['A-search leaves at speed 1 (v_4 = 1)', `max abs(v_out - 1) = ${f(as.maxSpeedError, 5)}`, yesNo(as.maxSpeedError <= SPEED_TOL)],
    ['A-search: one or two steps of energy loss', `loss-step counts ${set(as.lossStepCounts)}`, yesNo(as.lossStepCounts.every((c) => c === 1 || c === 2))],
    [
      'A-search: v_2 = -min(beta alpha_max, 1), v_3 = 1 + v_2',
      `v_3 misses 1 + v_2 by up to ${f(paperV3Error, 3)}; against v_3 = min(alpha_max (1 + v_2), 1) (alpha_3 clipped at alpha_max, our derivation) the largest velocity error is ${f(as.maxVelocityError, 5)}`,
      paperV3Error <= SPEED_TOL
        ? 'yes'
        : as.maxVelocityError <= SPEED_TOL
          ? '**no** for v_3 as printed (it is alpha_3 = 1); yes with alpha_3 clipped at alpha_max'
          : '**no**',
    ],
    ['(reference) implicit Euler loses the bounce', `v_out from ${f(ie.minSpeed)} to ${f(ie.maxSpeed)}`, yesNo(ie.maxSpeed < 0.1)],
  ];
  const failures = [a1, tr, as, ie].filter((s) => s.failures > 0).map((s) => `${s.integrator}: ${s.failures} runs never left the barrier or stopped`);
  return [
    '| appendix E says | measured here | agrees |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    ...(failures.length ? ['', `Runs with problems: ${failures.join('; ')}.`] : []),
  ].join('\n');
}

/** One row per (h, kappa): the range of outgoing speeds over phases and the largest miss of the limit. */
function sweepMarkdown(groups: { h: number; kappa: number; dhat: number; results: ParticleWallResult[] }[]): string {
  const head = `| h (s) | kappa (N/m) | h^2 kappa/m | h abs(v)/dhat | ${INTEGRATORS.map((n) => `${n}: v_out range; max abs(v_out - limit); steps`).join(' | ')} |`;
  const rule = `|---:|---:|---:|---:|${INTEGRATORS.map(() => '---').join('|')}|`;
  const rows = groups.map((g) => {
    const cells = INTEGRATORS.map((n) => {
      const s = summarize(g.results, n);
      const fail = s.failures ? `; ${s.failures} did not leave` : '';
      return `${f(s.minSpeed, 3)} to ${f(s.maxSpeed, 3)}; ${f(s.maxLimitError, 3)}; ${set(s.collisionSteps)}${fail}`;
    });
    return `| ${g.h} | ${g.kappa} | ${Number((g.h * g.h * g.kappa).toPrecision(6))} | ${Number((g.h / g.dhat).toPrecision(6))} | ${cells.join(' | ')} |`;
  });
  return [head, rule, ...rows].join('\n');
}

async function speedsSvg(results: ParticleWallResult[], h: number, kappa: number, dhat: number): Promise<string> {
  const series: PlotSeries[] = INTEGRATORS.map((name) => {
    const rs = results.filter((r) => r.case.integrator === name).sort((a, b) => a.case.phase - b.case.phase);
    return { name, t: rs.map((r) => r.case.phase), y: rs.map((r) => r.outgoingSpeed) };
  });
  const fine = Array.from({ length: 301 }, (_, i) => i / 300).filter((b) => b < 1);
  const trapLimit = { name: 'limit: trapezoidal', t: fine, y: fine.map((b) => appendixLimit('trapezoidal', b)!.outgoing) };
  const oneLimit = { name: 'limit: A-1/A-search', t: [0, 1], y: [1, 1] };
  return linePlotSvg([...series, trapLimit, oneLimit], {
    title: 'particle-wall: outgoing speed after the collision (incoming 1 m/s)',
    subtitle: `h = ${h} s, kappa = ${kappa} N/m, dhat = ${dhat} m, m = 1 kg: h^2 kappa/m = ${h * h * kappa}; dashed: seed 000 appendix E, quadratic barrier, hbar -> infinity`,
    xTitle: 'phase beta (start at dhat + beta h |v|)',
    yTitle: 'outgoing speed (m/s)',
    dashed: [trapLimit.name, oneLimit.name],
  });
}

async function main(): Promise<void> {
  const { quick, out } = parseArgs(process.argv.slice(2));
  const defaults = parametricScenes['particle-wall'].parameters;
  const h = defaults.dt.default;
  const kappa = defaults.kappa.default;
  const dhat = defaults.dhat.default;
  const phases = quick ? [0, 0.25, 0.5, 0.75, 0.9] : Array.from({ length: 20 }, (_, i) => i / 20);
  const started = performance.now();

  const results = runGrid(h, kappa, dhat, phases);
  const sweepPhases = Array.from({ length: 10 }, (_, i) => i / 10);
  const sweepConfigs = quick
    ? []
    : [
        { h: 0.1, kappa: 1 },
        { h: 1, kappa: 1 },
        { h: 10, kappa: 1 },
        { h: 100, kappa: 1 },
        { h: 1000, kappa: 1 },
        { h: 10, kappa: 0.01 },
        { h: 1000, kappa: 0.001 },
      ];
  const sweep = sweepConfigs.map((c) => ({ ...c, dhat, results: runGrid(c.h, c.kappa, dhat, sweepPhases) }));
  const seconds = (performance.now() - started) / 1000;

  const md: string[] = [
    '# particle-wall: the large-step collision study of seed 000 appendix E',
    '',
    `Command: \`npm run analysis:particle-wall${quick ? ' -- --quick' : ''}\` (${results.length + sweep.reduce((s, g) => s + g.results.length, 0)} runs, ${seconds.toFixed(1)} s).`,
    '',
    `Scene \`particle-wall\`: one particle, m = 1 kg, at 1 m/s toward the wall x = 0 (normal +x), no gravity, IPC barrier with kappa = ${kappa} N/m, dhat = ${dhat} m, time step h = ${h} s: h^2 kappa/m = ${h * h * kappa}, and one step of free flight covers ${h / dhat} dhat. It starts at distance dhat + beta h |v| from the wall, beta the phase: the appendix's x_0 = beta h, measured from the barrier threshold.`,
    '',
    'Barrier: ours is IPC\'s clamped log on the squared distance, kappa dhat^2 b((d/dhat)^2) with b(s) = -(s-1)^2 ln s; in r = d/dhat it equals the appendix\'s IPC barrier -kappa\' (r-1)^2 ln r with kappa\' = 2 kappa dhat^2 (1+r)^2, between 2 and 8 kappa dhat^2 (same cubic onset at the threshold, same log wall). The appendix derives its formulas for the quadratic barrier k x^2 / 2 in the limit h^2 k/m -> infinity and states that the IPC barrier behaves alike; the numbers in brackets below are those quadratic-barrier limits.',
    '',
    `Definitions: the collision starts at the first step that ends inside the barrier zone (d < dhat) and ends at the first later step that ends at d >= dhat moving away; "steps" counts both (exit - entry + 1). "Loss steps" are the steps of that window whose total energy H = kinetic + barrier is below (1 - ${ENERGY_LOSS_TOL}) H_0, numbered from the start of the run (the first step into the barrier is step 1 here, as in the appendix). A-search uses alpha in [0, ${ALPHA_MAX}] and the target H_0.`,
    '',
    '## Outgoing speed per phase',
    '',
    speedTableMarkdown(results, INTEGRATORS),
    '',
    '## Against the appendix',
    '',
    `"Agrees" means within ${SPEED_TOL} m/s for speeds and velocities, exactly for step counts.`,
    '',
    checksMarkdown(results, phases),
    '',
    '## Velocities through the collision (measured, appendix limit in brackets)',
    '',
    'v_k is the velocity after the k-th step counted from the first step into the barrier.',
    '',
    '### A-1',
    '',
    velocityTableMarkdown(results, 'a-1', 4),
    '',
    '### Trapezoidal',
    '',
    velocityTableMarkdown(results, 'trapezoidal', 3),
    '',
    `### A-search (limit: v_3 = min(alpha_max (1 + v_2), 1), see src/analysis/particle-wall.ts; the appendix prints v_3 = 1 + v_2)`,
    '',
    velocityTableMarkdown(results, 'a-search', 4),
    '',
  ];
  if (sweep.length) {
    md.push(
      '## Where the large-step behaviour sets in (phases 0, 0.1, ..., 0.9)',
      '',
      'Limit: the appendix\'s quadratic-barrier values (trapezoidal 3 - 4 beta or 8 beta - 5; A-1 and A-search 1; implicit Euler 0). At small h every integrator resolves the collision over many steps and the limit does not apply.',
      '',
      sweepMarkdown(sweep),
      '',
      'h^2 kappa/m alone does not measure how stiff the IPC barrier is: its curvature grows without bound toward the wall, so at small h the particle goes deep and the local stiffness, not kappa, sets the error. Where A-search leaves slower than 1 m/s at small h, its alpha sat at the clip alpha_max = 1.1 for several steps of the collision (alpha column of trajectories.csv); a larger clip (`--param alphaMax=1.5`) lets it reach the target again. This fits the remark of the appendix that A-search only damps bounces and never amplifies them.',
      '',
    );
  }
  md.push('Files: results.csv (one row per run), trajectories.csv (every step), speeds.svg (outgoing speed against phase).', '');

  mkdirSync(out, { recursive: true });
  const all = [...results, ...sweep.flatMap((g) => g.results)];
  const paths = {
    table: join(out, 'table.md'),
    results: join(out, 'results.csv'),
    trajectories: join(out, 'trajectories.csv'),
    plot: join(out, 'speeds.svg'),
  };
  writeFileSync(paths.table, md.join('\n'));
  writeFileSync(paths.results, resultsCsv(all));
  writeFileSync(paths.trajectories, trajectoriesCsv(all));
  writeFileSync(paths.plot, await speedsSvg(results, h, kappa, dhat));

  const show = (p: string) => {
    const r = relative(process.cwd(), p);
    return r && !r.startsWith('..') ? r : p;
  };
  process.stdout.write(checksMarkdown(results, phases) + '\n\n');
  process.stdout.write(`${all.length} runs in ${seconds.toFixed(1)} s. Outputs:\n`);
  for (const p of Object.values(paths)) process.stdout.write(`  ${show(p)}\n`);
}

await main();
