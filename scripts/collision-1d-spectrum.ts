/**
 * `npm run analysis:spectrum`: seed 000 section 5.5, Figs. 16-19. The linear eigenmodes of the 1D block at rest
 * (K phi = w^2 M phi on its 124 free x DOFs, src/analysis/spectrum.ts), and the energy the block holds in each mode
 * at the end of the collision run (1/2 q'^2 + 1/2 w^2 q^2, displacement taken from rest minus the rigid translation),
 * per integrator (BDF2, A-1, A-search, implicit Euler) and step size (1/30, 1/300, 1/3000 s).
 *
 * Two bases: the 124 3D modes, and the block reduced to section-uniform motion (each of the 31 cross-sections moving
 * as one), which is exactly the seed's 1D chain; the plots show the latter (the 3D basis adds 93 modes in which a
 * section's four nodes move against each other, barely excited, that would zigzag the curves).
 *
 * Writes out/analysis/spectrum/: spectrum-<case>.svg (one panel per step size, log10 of the energy per 1D mode
 * against the mode's frequency), spectrum-<case>.csv (the 1D modes: frequency, energy per run), modes-3d-<case>.csv
 * (the same for the 3D modes) and summary.md (energies by band, both bases).
 *
 * Options: --quick (h = 1/30 s only), --steps 30,300,3000, --cases soft,medium,stiff,damped,
 * --integrators bdf2,a-1,a-search,implicit-euler, --reuse (take the final states analysis:collision-1d saved in
 * out/analysis/collision-1d/states when they were made from the same scene, descriptions aside, instead of re-running),
 * --out DIR.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runSelectionOptions, selectRunsOrExit } from './collision-1d-args.js';
import { centerOfMassVelocity, runCollision1d, sceneFingerprint, stepLabel } from '../src/analysis/collision-1d.js';
import { longitudinalFraction, modalBasis, projectOntoModes } from '../src/analysis/spectrum.js';
import { panelPlotSvg, type Panel } from '../src/io/plot.js';
import { loadScene, meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { buildModel } from '../src/scene/build.js';

/** Energies below this are drawn at it (log plot). */
const ENERGY_FLOOR = 1e-12;

const { values } = parseArgs({
  options: {
    ...runSelectionOptions,
    reuse: { type: 'boolean', default: false },
    states: { type: 'string', default: 'out/analysis/collision-1d/states' },
    out: { type: 'string', default: 'out/analysis/spectrum' },
  },
});

const { steps, cases, integrators } = selectRunsOrExit('analysis:spectrum', values, ['bdf2', 'a-1', 'a-search', 'implicit-euler']);
const outDir = values.out!;
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
  const file = join(values.states!, `${caseKey}_${integrator}_${s}.json`);
  if (!existsSync(file)) return null;
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedState;
  return saved.fingerprint === fingerprint ? saved : null;
}

const bands = ['low', 'medium', 'high'] as const;
const summaryLines = [
  '# 1D collision: energy per linear mode after the collision (seed 000, section 5.5, Figs. 16-19)',
  '',
  'Energies are linearised (1/2 q\'^2 + 1/2 w^2 q^2 per mode: an amplitude measure, not the Neo-Hookean energy), of the',
  'state at the end of the run. Two bases (src/analysis/spectrum.ts):',
  '- 1D modes (plotted): the block reduced to section-uniform motion (each cross-section moving as one; Galerkin',
  '  P^T K P, P^T M P), which is exactly the seed\'s 1D chain: 31 sections, 30 vibration modes.',
  '- 3D modes: all 124 free x DOFs, K phi = w^2 M phi. "vibration" sums the non-rigid modes, split into thirds of',
  '  [0, w_max] (low / medium / high); "off-1D" = vibration (3D) - vibration (1D): about the energy of motion in which',
  '  the four nodes of a section move against each other (the kinetic parts split exactly, the elastic ones up to a',
  '  cross term, hence tiny negative values). It gets excited because the Kuhn tets give each end section lumped',
  '  masses 3:1:1:1 against elastic (and wall) forces 2:1:1:2 or 1:1:1:1, so an end section is not pushed uniformly;',
  '  the soft block\'s large compression adds to it. The seed\'s 1D chain has no such modes.',
  'translation = 1/2 m v_com^2 (the rigid mode).',
  '',
];
const started = performance.now();

for (const c of cases) {
  const loaded = loadScene(c.scene);
  const fingerprint = sceneFingerprint(loaded.scene);
  const base = toRunOptions(loaded.scene);
  const restModel = buildModel(loaded.scene, meshResolver(loaded.baseDir));
  const full = modalBasis(restModel);
  const bar = modalBasis(restModel, { sectionsAlong: 0 });
  const uniformity = longitudinalFraction(restModel, full, 0);
  const nFull = full.omega.length;
  const nBar = bar.omega.length;
  const wMax = full.omega[nFull - 1];
  const hzFull = Array.from(full.omega, (w) => w / (2 * Math.PI));
  const hzBar = Array.from(bar.omega, (w) => w / (2 * Math.PI));
  const barVibrating = Array.from({ length: nBar }, (_, j) => j).filter((j) => !bar.rigid[j]);
  console.log(
    `${c.key}: ${nFull} free DOFs (3D modes ${hzFull[1].toFixed(3)} - ${hzFull[nFull - 1].toFixed(3)} Hz), ` +
      `${nBar} sections (1D modes ${hzBar[1].toFixed(3)} - ${hzBar[nBar - 1].toFixed(3)} Hz)`,
  );

  const barColumns: { name: string; energy: Float64Array }[] = [];
  const fullColumns: { name: string; energy: Float64Array }[] = [];
  const panels: Panel[] = [];
  summaryLines.push(`## ${c.label} (${c.scene})`, '');
  summaryLines.push('| h (s) | integrator | v_com (m/s) | translation (J) | vibration, 1D (J) | vibration, 3D (J) | low (J) | medium (J) | high (J) | off-1D (J) | source |');
  summaryLines.push('|---|---|---|---|---|---|---|---|---|---|---|');
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
      const fullEnergy = projectOntoModes(full, restModel.rest, x, v).energy;
      barColumns.push({ name, energy: barEnergy });
      fullColumns.push({ name, energy: fullEnergy });
      panel.series.push({
        name: integrator,
        t: barVibrating.map((j) => hzBar[j]),
        y: barVibrating.map((j) => Math.log10(Math.max(ENERGY_FLOOR, barEnergy[j]))),
      });
      const band = [0, 0, 0];
      let translation = 0;
      for (let j = 0; j < nFull; j++) {
        if (full.rigid[j]) translation += fullEnergy[j];
        else band[Math.min(2, Math.floor((3 * full.omega[j]) / wMax))] += fullEnergy[j];
      }
      let barVibration = 0;
      for (const j of barVibrating) barVibration += barEnergy[j];
      const vib = band[0] + band[1] + band[2];
      const vCom = centerOfMassVelocity(restModel, v);
      summaryLines.push(
        `| ${stepLabel(s)} | ${integrator} | ${vCom.toFixed(4)} | ${translation.toFixed(4)} | ${barVibration.toExponential(3)} | ${vib.toExponential(3)} | ` +
          `${band.map((e) => e.toExponential(2)).join(' | ')} | ${(vib - barVibration).toExponential(2)} | ${source} |`,
      );
      console.log(
        `  ${integrator} h = ${stepLabel(s)}: v_com ${vCom.toFixed(4)} m/s, vibration ${barVibration.toExponential(3)} J (1D) ${vib.toExponential(3)} J (3D: ` +
          `${bands.map((b, i) => `${b} ${band[i].toExponential(2)}`).join(', ')}) [${source}]`,
      );
    }
    panels.push(panel);
  }
  summaryLines.push('');

  const barCsv = [['mode', 'omega_rad_s', 'frequency_hz', 'rigid', ...barColumns.map((col) => col.name)].join(',')];
  for (let j = 0; j < nBar; j++) barCsv.push([j, bar.omega[j], hzBar[j], bar.rigid[j], ...barColumns.map((col) => col.energy[j])].join(','));
  writeFileSync(join(outDir, `spectrum-${c.key}.csv`), barCsv.join('\n') + '\n');
  const fullCsv = [['mode', 'omega_rad_s', 'frequency_hz', 'rigid', 'longitudinal_fraction', ...fullColumns.map((col) => col.name)].join(',')];
  for (let j = 0; j < nFull; j++) fullCsv.push([j, full.omega[j], hzFull[j], full.rigid[j], uniformity[j], ...fullColumns.map((col) => col.energy[j])].join(','));
  writeFileSync(join(outDir, `modes-3d-${c.key}.csv`), fullCsv.join('\n') + '\n');
  const svg = await panelPlotSvg(panels, {
    title: `1D collision, ${c.label.toLowerCase()}: energy per linear mode after the collision`,
    subtitle: `${c.scene}; ${barVibrating.length} 1D modes (section-uniform motion); linearised energy 1/2 q'^2 + 1/2 w^2 q^2, floored at ${ENERGY_FLOOR} J`,
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
for (const c of cases) console.log(`  spectrum-${c.key}.svg / .csv, modes-3d-${c.key}.csv`);
console.log(`  summary.md   ${join(outDir, 'summary.md')}`);
