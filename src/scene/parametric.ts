/**
 * Built-in parametric scenes: scenes made by code from a few numbers instead of read from a JSON file. Each entry
 * declares its parameters (default, meaning, allowed range) and `make(params)` returns a scene object that
 * parseScene validates like any scene file. `vivace run <name> --scene-param name=value` picks them by name.
 */

import { SceneError, type SceneInput } from './schema.js';

export type SceneParams = Record<string, number>;

export interface SceneParameter {
  default: number;
  description: string;
  /** Allowed range; a bound is inclusive unless its *Exclusive flag is set. */
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxExclusive?: boolean;
}

export interface ParametricScene {
  description: string;
  parameters: Record<string, SceneParameter>;
  /** The scene for a complete, checked set of parameters (every declared name present). */
  make(params: SceneParams): SceneInput;
}

/** A bad scene parameter: `param` is the offending name (null when the scene takes none at all). */
export class SceneParamError extends SceneError {
  override name = 'SceneParamError';
  constructor(
    readonly param: string | null,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// particle-wall: seed 000 appendix E, the large-step collision study

/** Incoming speed (m/s) and mass (kg) of the particle: the appendix's normalisation |v| = 1 (and m = 1). */
export const PARTICLE_WALL_SPEED = 1;
export const PARTICLE_WALL_MASS = 1;
/** Absolute Newton step tolerance, as a fraction of dhat: the A-1 velocity reads grad P at the solved positions. */
const PARTICLE_WALL_NEWTON_TOL = 1e-9;

/**
 * Distance from the wall at t = 0: the barrier threshold dhat plus phase * h * |v|. Free flight would put the
 * particle at dhat + (phase - n) h |v| after n steps, so `phase` shifts where the step samples fall relative to the
 * threshold, as x_0 = beta h does for the quadratic barrier of seed 000 appendix E (threshold at 0 there).
 */
export function particleWallStartDistance(p: { phase: number; dhat: number; dt: number }): number {
  return p.dhat + p.phase * p.dt * PARTICLE_WALL_SPEED;
}

/** Steps of the default run: 12, plus enough for a slow (small-step) collision of about 20 dhat / |v| seconds. */
export function particleWallSteps(p: { dhat: number; dt: number }): number {
  return 12 + Math.ceil((20 * p.dhat) / (PARTICLE_WALL_SPEED * p.dt));
}

const particleWall: ParametricScene = {
  description:
    'Seed 000 appendix E: one particle (1 kg) at 1 m/s toward a wall (plane x = 0, normal +x), no gravity, IPC ' +
    'barrier with kappa and dhat. It starts phase * dt * 1 m/s beyond the barrier threshold dhat, so `phase` ' +
    '(the appendix\'s beta) sets where the steps fall relative to the threshold. Defaults give the large-step limit ' +
    '(h^2 kappa / m = 1e4, step length 100 dhat) in which A-1 leaves at 1 m/s for every phase and trapezoidal does not. ' +
    'Our barrier is kappa dhat^2 b((d/dhat)^2) with b(s) = -(s-1)^2 ln s; the appendix uses kappa (x-1)^2 ln x on ' +
    'the unsquared distance: the same shape up to a factor between 2 and 8.',
  parameters: {
    phase: { default: 0, min: 0, max: 1, maxExclusive: true, description: 'beta of seed 000 appendix E: start at dhat + phase * dt * |v| from the wall (phase 1 is phase 0 one step later)' },
    kappa: { default: 1, min: 0, minExclusive: true, description: 'barrier stiffness (N/m); h^2 kappa / m is the appendix\'s dimensionless stiffness' },
    dhat: { default: 1, min: 0, minExclusive: true, description: 'barrier activation distance (m); the appendix normalises dhat = 1 with |v| = 1' },
    dt: { default: 100, min: 0, minExclusive: true, description: 'time step h (s): the scene\'s dt and the unit of the phase offset (`--dt` of run/compare sets it too)' },
  },
  make(p) {
    const x0 = particleWallStartDistance({ phase: p.phase, dhat: p.dhat, dt: p.dt });
    return {
      name: 'particle-wall',
      description: `${particleWall.description} This instance: phase = ${p.phase}, kappa = ${p.kappa} N/m, dhat = ${p.dhat} m, dt = ${p.dt} s.`,
      duration: particleWallSteps({ dhat: p.dhat, dt: p.dt }) * p.dt,
      dt: p.dt,
      frameRate: 30,
      gravity: [0, 0, 0],
      integrator: { name: 'a-search' },
      // |dx|_inf <= tolerance * h must stay far below the barrier's depth scale whatever the step.
      solver: { tolerance: (PARTICLE_WALL_NEWTON_TOL * p.dhat) / (PARTICLE_WALL_SPEED * p.dt) },
      contact: { kappa: p.kappa, dhat: p.dhat },
      obstacles: [{ type: 'plane', name: 'wall', point: [0, 0, 0], normal: [1, 0, 0] }],
      bodies: [
        {
          name: 'particle',
          mesh: { type: 'particles', positions: [[x0, 0, 0]], masses: [PARTICLE_WALL_MASS] },
          velocity: { linear: [-PARTICLE_WALL_SPEED, 0, 0] },
          // One degree of freedom, as in the appendix (nothing pushes y or z anyway; this keeps round-off out).
          lockAxes: ['y', 'z'],
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Registry

export const parametricScenes: Readonly<Record<string, ParametricScene>> = {
  'particle-wall': particleWall,
};

export function parametricSceneNames(): string[] {
  return Object.keys(parametricScenes).sort();
}

export function findParametricScene(name: string): ParametricScene | undefined {
  return Object.hasOwn(parametricScenes, name) ? parametricScenes[name] : undefined;
}

/** "[0, 1)", "> 0", ... for messages and listings; '' when unbounded. */
export function describeRange(p: SceneParameter): string {
  const lo = p.min !== undefined ? `${p.minExclusive ? '(' : '['}${p.min}` : '';
  const hi = p.max !== undefined ? `${p.max}${p.maxExclusive ? ')' : ']'}` : '';
  if (lo && hi) return `${lo}, ${hi}`;
  if (lo) return p.minExclusive ? `> ${p.min}` : `>= ${p.min}`;
  if (hi) return p.maxExclusive ? `< ${p.max}` : `<= ${p.max}`;
  return '';
}

/** The defaults with `given` over them, each value checked; unknown names and out-of-range values throw. */
export function resolveSceneParams(sceneName: string, scene: ParametricScene, given: SceneParams = {}): SceneParams {
  const names = Object.keys(scene.parameters);
  const out: SceneParams = {};
  for (const [name, spec] of Object.entries(scene.parameters)) out[name] = spec.default;
  for (const [name, value] of Object.entries(given)) {
    const spec = Object.hasOwn(scene.parameters, name) ? scene.parameters[name] : undefined;
    if (!spec) throw new SceneParamError(name, `scene '${sceneName}' has no parameter '${name}'; parameters: ${names.join(', ')}`);
    const tooLow = spec.min !== undefined && (spec.minExclusive ? !(value > spec.min) : !(value >= spec.min));
    const tooHigh = spec.max !== undefined && (spec.maxExclusive ? !(value < spec.max) : !(value <= spec.max));
    if (typeof value !== 'number' || !Number.isFinite(value) || tooLow || tooHigh) {
      const range = describeRange(spec);
      const where = range === '' ? '' : /^[[(]/.test(range) ? ` in ${range}` : ` ${range}`;
      throw new SceneParamError(name, `parameter '${name}' of scene '${sceneName}' must be a finite number${where} (got ${String(value)})`);
    }
    out[name] = value;
  }
  return out;
}

/** The scene object of a parametric scene (not yet validated: parseScene does that) and the parameters used. */
export function makeParametricScene(name: string, given: SceneParams = {}): { input: SceneInput; params: SceneParams } {
  const scene = findParametricScene(name);
  if (!scene) throw new SceneError(`unknown parametric scene '${name}'; parametric scenes: ${parametricSceneNames().join(', ')}`);
  const params = resolveSceneParams(name, scene, given);
  return { input: scene.make(params), params };
}

/** "phase=0.25, kappa=1, ..." in the declared order. */
export function formatSceneParams(params: SceneParams): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}
