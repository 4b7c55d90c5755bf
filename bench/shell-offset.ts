/**
 * Shell contact with and without a Codim-IPC contact offset (mesh.contactOffset): per scene and offset, Newton
 * iterations, CPU seconds (process.cpuUsage), the smallest gap d - xi of the records and where the shell ends up.
 *
 *   npx tsx bench/shell-offset.ts [ball|fold] [offset ...]    offsets: a number (m), 'thickness', or '-' (field absent)
 *
 *   ball: a 4 cm box (3 x 3 x 3 cells) dropped at 1 m/s from 5 mm onto a 0.3 m sheet (12 x 12 cells, 2 mm thick)
 *         pinned on two sides, friction 0.3, implicit Euler h = 5 ms, 0.3 s; prints the ball's bottom above the
 *         sheet node under it at the end.
 *   fold: the U-folded strip of test/shell-contact.test.ts (3 mm thick), its free layer thrown down at 1 m/s onto
 *         the fixed one, friction 0.2, 0.3 s; prints the free layer's lowest point above the fixed layer.
 * Positions at the end are hashed, so '-' against 0 shows the field's default changes nothing.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { meshResolver, toRunOptions } from '../src/io/scene-files.js';
import { formatObj } from '../src/io/mesh-files.js';
import { buildModel } from '../src/scene/build.js';
import { parseScene, type SceneInput } from '../src/scene/schema.js';
import { simulate } from '../src/sim/simulate.js';
import { uFoldedStrip } from '../test/helpers.js';

const [which = 'ball', ...offsetArgs] = process.argv.slice(2);
if (which !== 'ball' && which !== 'fold') {
  console.error('usage: npx tsx bench/shell-offset.ts [ball|fold] [offset ...]');
  process.exit(2);
}
const offsets = offsetArgs.length > 0 ? offsetArgs : ['-', '0', 'thickness'];

function withOffset(mesh: Record<string, unknown>, offset: string): Record<string, unknown> {
  if (offset === '-') return mesh;
  return { ...mesh, contactOffset: offset === 'thickness' ? 'thickness' : Number(offset) };
}

const dir = mkdtempSync(join(tmpdir(), 'vivace-shell-offset-'));
const r = 0.01, L = 0.2;
const strip = uFoldedStrip(r, L);
writeFileSync(join(dir, 'u.obj'), formatObj(strip.positions, strip.triangles, 12));

function sceneFor(offset: string): SceneInput {
  const sheetMaterial = { model: 'neo-hookean', youngsModulus: 1e6, poissonRatio: 0.3 } as const;
  const common = { duration: 0.3, dt: 0.005, frameRate: 200, integrator: { name: 'implicit-euler' } } as const;
  if (which === 'fold') {
    return {
      name: 'fold',
      ...common,
      contact: { dhat: 1e-3, kappa: 1e4, friction: 0.2 },
      bodies: [
        {
          name: 'strip',
          mesh: withOffset({ type: 'shell', shape: { type: 'file', path: 'u.obj' }, thickness: 0.003, areaDensity: 0.4, bendingModulus: 1e4 }, offset),
          material: sheetMaterial,
          velocity: { linear: [0, -1, 0] },
          fixed: [{ box: { min: [-1, 0, -1], max: [L, r, 1] } }],
        },
      ],
    } as SceneInput;
  }
  return {
    name: 'ball-on-sheet',
    ...common,
    contact: { dhat: 1e-3, kappa: 1e5, friction: 0.3 },
    bodies: [
      {
        name: 'sheet',
        mesh: withOffset({ type: 'shell', shape: { type: 'rectangle', size: [0.3, 0.3], cells: [12, 12] }, thickness: 0.002, areaDensity: 0.4 }, offset),
        material: sheetMaterial,
        transform: { translate: [-0.15, 0.2, -0.15] },
        fixed: [{ box: { min: [-1, 0, -1], max: [-0.15, 1, 1] } }, { box: { min: [0.15, 0, -1], max: [1, 1, 1] } }],
      },
      {
        name: 'ball',
        mesh: { type: 'box', size: [0.04, 0.04, 0.04], cells: [3, 3, 3] },
        material: { model: 'neo-hookean', youngsModulus: 1e5, density: 1000 },
        transform: { center: true, translate: [0.01, 0.225, 0.01] },
        velocity: { linear: [0, -1, 0] },
      },
    ],
  } as SceneInput;
}

try {
  for (const offset of offsets) {
    const scene = parseScene(sceneFor(offset));
    const model = buildModel(scene, meshResolver(dir));
    let newton = 0;
    let minGap = Infinity;
    let last = new Float64Array(0);
    const c0 = process.cpuUsage();
    const { summary } = simulate(model, { ...toRunOptions(scene), contactChecks: 'steps' }, {
      step(rec) {
        newton += rec.newtonIterations;
        if (rec.minDistance < minGap) minGap = rec.minDistance;
      },
      frame(_k, _t, x) {
        last = Float64Array.from(x);
      },
    });
    const cpu = process.cpuUsage(c0);
    let rest: number;
    if (which === 'fold') {
      let lowest = Infinity;
      for (let i = 0; i < last.length; i += 3) if (strip.positions[i + 1] > 2.5 * r && strip.positions[i] < 0.1) lowest = Math.min(lowest, last[i + 1]);
      rest = lowest - r;
    } else {
      const [sheet, ball] = model.bodies;
      let bottom = Infinity;
      for (const i of ball.surface) bottom = Math.min(bottom, last[3 * i + 1]);
      let under = 0, best = Infinity;
      for (const i of new Set(sheet.surface)) {
        const radius = Math.hypot(last[3 * i] - 0.01, last[3 * i + 2] - 0.01);
        if (radius < best) [best, under] = [radius, last[3 * i + 1]];
      }
      rest = bottom - under;
    }
    const hash = createHash('sha256').update(new Uint8Array(last.buffer)).digest('hex').slice(0, 12);
    const where = which === 'fold' ? 'free layer above the fixed one' : 'ball bottom above the sheet';
    console.log(
      `${which} contactOffset ${offset.padEnd(9)} Newton ${newton}, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s, min gap ${(minGap * 1e3).toFixed(3)} mm, ${where} ${(rest * 1e3).toFixed(3)} mm, positions ${hash}${summary.stopped ? `, stopped: ${summary.stopped}` : ''}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
