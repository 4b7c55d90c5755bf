/**
 * The simulate() options of a validated scene: pure (no files), so the browser demo maps scenes the same way as the
 * command line does.
 */

import type { DecayPiece, EnergyTargetOptions } from '../integrators/energy-target.js';
import type { RunOptions } from '../sim/simulate.js';
import type { Scene } from './schema.js';

/**
 * The frame files a run may write (--frames, the library's `frames`): OBJ surfaces (what the viewer plays), VTU
 * unstructured grids with a .pvd collection (ParaView), or both.
 */
export const FRAME_FORMATS = ['obj', 'vtu', 'both'] as const;
export type FrameFormat = (typeof FRAME_FORMATS)[number];
/** The one default of --frames and of the library's `frames`. */
export const DEFAULT_FRAME_FORMAT: FrameFormat = 'obj';

export interface RunOptionOverrides {
  /** Stop as unstable when |H| exceeds this multiple of the initial energy scale (default 1e3). */
  blowUpFactor?: number;
  /** Name in summaries (default scene.name). */
  sceneName?: string;
}

/** The simulate() options of a validated scene. */
export function toRunOptions(scene: Scene, overrides: RunOptionOverrides = {}): RunOptions {
  return {
    sceneName: overrides.sceneName ?? scene.name,
    integrator: scene.integrator.name,
    params: { ...scene.integrator.params },
    h: scene.dt,
    duration: scene.duration,
    frameRate: scene.frameRate,
    solver: { ...scene.solver },
    rayleigh: scene.damping.rayleigh,
    energy: energyTargetOptions(scene),
    blowUpFactor: overrides.blowUpFactor ?? 1e3,
  };
}

/** A schedule, when given, wins over tau/decayStart; neither means conserve the energy. */
function energyTargetOptions(scene: Scene): EnergyTargetOptions {
  const e = scene.energy;
  let decay: DecayPiece[] = [];
  if (e.schedule.length > 0) decay = e.schedule.map((p) => ({ from: p.from, tau: p.tau }));
  else if (e.tau !== undefined) decay = [{ from: e.decayStart, tau: e.tau }];
  return { scale: e.scale, ground: e.ground, decay };
}
