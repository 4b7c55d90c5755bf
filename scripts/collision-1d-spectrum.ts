/**
 * `npm run analysis:spectrum`: seed 000 section 5.5, Figs. 16-19. The linear eigenmodes of the 1D chain at rest
 * (K phi = w^2 M phi on its 31 free x DOFs, src/analysis/spectrum.ts), and the energy the chain holds in each mode
 * at the end of the collision run (1/2 q'^2 + 1/2 w^2 q^2, displacement taken from rest minus the rigid translation),
 * per integrator (BDF2, A-1, A-search, implicit Euler) and step size (1/30, 1/300, 1/3000 s).
 *
 * With --block, the 3D block variants (collision-1d-block-*): two bases, the block reduced to section-uniform motion
 * (each of the 31 cross-sections moving as one: the same 31 modes as the chain), which the plots show, and its 124
 * 3D modes, 93 of them motions in which a section's four nodes move against each other (warping); the summary gives
 * the energy in those ("off-1D").
 *
 * Writes out/analysis/spectrum/ (with --block out/analysis/spectrum-block/): spectrum-<case>.svg (one panel per step
 * size, log10 of the energy per 1D mode against the mode's frequency), spectrum-<case>.csv (the 1D modes: frequency,
 * energy per run), with --block modes-3d-<case>.csv (the same for the 3D modes), and summary.md (energies by band).
 *
 * Options: --quick (h = 1/30 s only), --steps 30,300,3000, --cases soft,medium,stiff,damped,
 * --integrators bdf2,a-1,a-search,implicit-euler, --block, --reuse (take the final states analysis:collision-1d saved
 * in its states/ folder (--states DIR, default out/analysis/collision-1d/states, -block/states with --block) when they
 * were made from the same scene, descriptions aside, instead of re-running), --out DIR.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runSelectionOptions, selectRunsOrExit } from './collision-1d-args.js';
import { caseScene, centerOfMassVelocity, runCollision1d, sceneFingerprint, stepLabel } from '../src/analysis/collision-1d.js';
import { longitudinalFraction, modalBasis, projectOntoModes, type ModalBasis } from '../src/analysis/spectrum.js';
import { panelPlotSvg, type Panel } from '../src/io/plot.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';

/** Energies below this are drawn at it (log plot). */
const ENERGY_FLOOR = 1e-12;

const { values } = parseArgs({
  options: {
    ...runSelectionOptions,
    reuse: { type: 'boolean', default: false },
    states: { type: 'string' },
    out: { type: 'string' },
  },
});

const { steps, cases, integrators } = selectRunsOrExit('analysis:spectrum', values, ['bdf2', 'a-1', 'a-search', 'implicit-euler']);
const block = values.block!;
const outDir = values.out ?? (block ? 'out/analysis/spectrum-block' : 'out/analysis/spectrum');
const statesDir = values.states ?? (block ? 'out/analysis/collision-1d-block/states' : 'out/analysis/collision-1d/states');
mkdirSync(outDir, { recursive: true });

interface SavedState {
  fingerprint: string;
  t: number;
  x: number[];
  v: number[];
}

/** The table command's final state of this run, when it exists and came from the same scene (description aside). */
function savedState(caseKey: string, integrator: string, s: number, fingerprint: string): SavedState | null {
  if (!values.reuse) return null;
  const file = join(statesDir, `${caseKey}_${integrator}_${s}.json`);
  if (!existsSync(file)) return null;
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedState;
  return saved.fingerprint === fingerprint ? saved : null;
}

const bands = ['low', 'medium', 'high'] as const;

/** A state's modal energies summed: the rigid modes (translation) and the others split into thirds of [0, w_max]. */
function energyBands(basis: ModalBasis, energy: Float64Array): { translation: number; band: number[]; vibration: number } {
  const wMax = basis.omega[basis.omega.length - 1];
  const band = [0, 0, 0];
  let translation = 0;
  for (let j = 0; j < energy.length; j++) {
    if (basis.rigid[j]) translation += energy[j];
    else band[Math.min(2, Math.floor((3 * basis.omega[j]) / wMax))] += energy[j];
  }
  return { translation, band, vibration: band[0] + band[1] + band[2] };
}

const summaryLines = [
  '# 1D collision: energy per linear mode after the collision (seed 000, section 5.5, Figs. 16-19)',
  '',
  'Energies are linearised (1/2 q\'^2 + 1/2 w^2 q^2 per mode: an amplitude measure, not the Neo-Hookean energy), of the',
  'state at the end of the run (src/analysis/spectrum.ts). translation = 1/2 m v_com^2 (the rigid mode); "vibration"',
  'sums the other modes, split into thirds of [0, w_max] (low / medium / high).',
  ...(block
    ? [
        'The 3D block variants. Two bases: 1D modes (plotted, and the bands), the block reduced to section-uniform motion',
        '(Galerkin P^T K P, P^T M P: the chain\'s 31 modes), and 3D modes, all 124 free x DOFs. "off-1D" = vibration (3D) -',
        'vibration (1D): about the energy of motion in which the four nodes of a section move against each other (the',
        'kinetic parts split exactly, the elastic ones up to a cross term, hence tiny negative values). The Kuhn tets lump',
        'an end section\'s mass 3:1:1:1 against elastic (and wall) forces 2:1:1:2 or 1:1:1:1, so the impact warps it.',
      ]
    : ['The chains: 31 nodes, 30 vibration modes and one translation; no other motion exists (no warping).']),
  '',
];
const started = performance.now();

for (const c of cases) {
  const sceneName = caseScene(c, block);
  const loaded = loadScene(sceneName);
  const fingerprint = sceneFingerprint(loaded.scene);
  const base = toRunOptions(loaded.scene);
  const restModel = buildModel(loaded.scene, meshResolver(loaded.baseDir));
  // The 1D modes: the chain's own, or the block's section-uniform reduction; the block's 3D modes beside them.
  const bar = modalBasis(restModel, block ? { sectionsAlong: 0 } : {});
  const full = block ? modalBasis(restModel) : null;
  const nBar = bar.omega.length;
  const hzBar = Array.from(bar.omega, (w) => w / (2 * Math.PI));
  const barVibrating = Array.from({ length: nBar }, (_, j) => j).filter((j) => !bar.rigid[j]);
  console.log(
    `${c.key}: ${nBar} sections (1D modes ${hzBar[1].toFixed(3)} - ${hzBar[nBar - 1].toFixed(3)} Hz)` +
      (full ? `, ${full.omega.length} free DOFs (3D modes up to ${(full.omega[full.omega.length - 1] / (2 * Math.PI)).toFixed(3)} Hz)` : ''),
  );

  const barColumns: { name: string; energy: Float64Array }[] = [];
  const fullColumns: { name: string; energy: Float64Array }[] = [];
  const panels: Panel[] = [];
  summaryLines.push(`## ${c.label} (${sceneName})`, '');
  const columns = ['h (s)', 'integrator', 'v_com (m/s)', 'translation (J)', 'vibration (J)', 'low (J)', 'medium (J)', 'high (J)', ...(full ? ['vibration, 3D (J)', 'off-1D (J)'] : []), 'source'];
  summaryLines.push(`| ${columns.join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`);
  for (const s of steps) {
    const panel: Panel = { title: `h = ${stepLabel(s)} s`, series: [] };
    for (const integrator of integrators) {
      let x: Float64Array;
      let v: Float64Array;
      let source: string;
      const saved = savedState(c.key, integrator, s, fingerprint);
      if (saved) {
        x = Float64Array.from(saved.x);
        v = Float64Array.from(saved.v);
        source = `table run, t = ${saved.t.toFixed(3)} s`;
      } else {
        const model = buildModel(loaded.scene, meshResolver(loaded.baseDir));
        const run = runCollision1d(model, base, c.key, integrator, s);
        x = run.finalX;
        v = run.finalV;
        source = `run, t = ${run.duration.toFixed(3)} s, ${run.wallSeconds.toFixed(1)} s wall${run.separated ? '' : ', STILL IN CONTACT'}${run.stopped ? `, stopped: ${run.stopped}` : ''}`;
      }
      const name = `${integrator}@${stepLabel(s)}`;
      const barEnergy = projectOntoModes(bar, restModel.rest, x, v).energy;
      barColumns.push({ name, energy: barEnergy });
      panel.series.push({
        name: integrator,
        t: barVibrating.map((j) => hzBar[j]),
        y: barVibrating.map((j) => Math.log10(Math.max(ENERGY_FLOOR, barEnergy[j]))),
      });
      const oneD = energyBands(bar, barEnergy);
      const vCom = centerOfMassVelocity(restModel, v);
      const cells = [stepLabel(s), integrator, vCom.toFixed(4), oneD.translation.toFixed(4), oneD.vibration.toExponential(3), ...oneD.band.map((e) => e.toExponential(2))];
      let line = `  ${integrator} h = ${stepLabel(s)}: v_com ${vCom.toFixed(4)} m/s, vibration ${oneD.vibration.toExponential(3)} J (${bands.map((b, i) => `${b} ${oneD.band[i].toExponential(2)}`).join(', ')})`;
      if (full) {
        const fullEnergy = projectOntoModes(full, restModel.rest, x, v).energy;
        fullColumns.push({ name, energy: fullEnergy });
        const threeD = energyBands(full, fullEnergy);
        cells.push(threeD.vibration.toExponential(3), (threeD.vibration - oneD.vibration).toExponential(2));
        line += `, 3D ${threeD.vibration.toExponential(3)} J (off-1D ${(threeD.vibration - oneD.vibration).toExponential(2)} J)`;
      }
      summaryLines.push(`| ${[...cells, source].join(' | ')} |`);
      console.log(`${line} [${source}]`);
    }
    panels.push(panel);
  }
  summaryLines.push('');

  const barCsv = [['mode', 'omega_rad_s', 'frequency_hz', 'rigid', ...barColumns.map((col) => col.name)].join(',')];
  for (let j = 0; j < nBar; j++) barCsv.push([j, bar.omega[j], hzBar[j], bar.rigid[j], ...barColumns.map((col) => col.energy[j])].join(','));
  writeFileSync(join(outDir, `spectrum-${c.key}.csv`), barCsv.join('\n') + '\n');
  if (full) {
    const uniformity = longitudinalFraction(restModel, full, 0);
    const fullCsv = [['mode', 'omega_rad_s', 'frequency_hz', 'rigid', 'longitudinal_fraction', ...fullColumns.map((col) => col.name)].join(',')];
    for (let j = 0; j < full.omega.length; j++) {
      fullCsv.push([j, full.omega[j], full.omega[j] / (2 * Math.PI), full.rigid[j], uniformity[j], ...fullColumns.map((col) => col.energy[j])].join(','));
    }
    writeFileSync(join(outDir, `modes-3d-${c.key}.csv`), fullCsv.join('\n') + '\n');
  }
  const svg = await panelPlotSvg(panels, {
    title: `1D collision, ${c.label.toLowerCase()}: energy per linear mode after the collision`,
    subtitle: `${sceneName}; ${barVibrating.length} 1D modes${block ? ' (section-uniform motion)' : ''}; linearised energy 1/2 q'^2 + 1/2 w^2 q^2, floored at ${ENERGY_FLOOR} J`,
    xTitle: 'mode frequency (Hz)',
    yTitle: 'log10 energy (J)',
    height: 220,
  });
  writeFileSync(join(outDir, `spectrum-${c.key}.svg`), svg);
}

const totalSeconds = (performance.now() - started) / 1000;
summaryLines.push(`Total wall time: ${totalSeconds.toFixed(1)} s.`, '');
writeFileSync(join(outDir, 'summary.md'), summaryLines.join('\n'));
console.log(`\nDone in ${totalSeconds.toFixed(1)} s. Outputs in ${outDir}:`);
for (const c of cases) console.log(`  spectrum-${c.key}.svg / .csv${block ? `, modes-3d-${c.key}.csv` : ''}`);
console.log(`  summary.md   ${join(outDir, 'summary.md')}`);
