import { z } from 'zod';
import { integratorNames } from '../integrators/registry.js';

/**
 * The scene format (JSON). Every field is documented here with its default; `vivace scenes --schema` prints this
 * documentation, and errors name the field path and the allowed values.
 * Units: SI (m, kg, s, Pa). Axis convention: y up, gravity along -y, ground at y = 0.
 */

const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const positive = z.number().positive();
const cellCount = z.number().int().positive();

export const regionSchema = z.union([
  z.strictObject({ box: z.strictObject({ min: vec3, max: vec3 }).describe('axis-aligned box in world coordinates (after transform and deform)') }),
  z.strictObject({ nodes: z.array(z.number().int().nonnegative()).describe('node indices of the body (0-based)') }),
]);

export const meshSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('box'),
    size: vec3.describe('edge lengths (m)'),
    cells: z.tuple([cellCount, cellCount, cellCount]).describe('cells along x, y, z'),
    tetsPerCell: z.union([z.literal(5), z.literal(6)]).default(6).describe('5 (alternating) or 6 (Kuhn) tets per cell'),
  }),
  z.strictObject({
    type: z.literal('file'),
    path: z.string().min(1).describe('TetGen .node (with .ele beside it, optionally .gz) or Gmsh .msh v2, relative to the scene file'),
  }),
  z.strictObject({
    type: z.literal('builtin'),
    name: z.enum(['armadillo', 'bunny', 'ball']).describe('a mesh shipped in data/meshes'),
  }),
  z.strictObject({
    type: z.literal('particles'),
    positions: z.array(vec3).min(1).describe('particle positions (m)'),
    masses: z.array(positive).min(1).describe('particle masses (kg), one per particle'),
    springs: z
      .array(
        z.strictObject({
          a: z.number().int().nonnegative(),
          b: z.number().int().nonnegative(),
          stiffness: positive.describe('N/m'),
          restLength: z.number().nonnegative().optional().describe('m; default: the initial distance'),
          kind: z
            .enum(['hookean', 'squared-length'])
            .default('hookean')
            .describe("'hookean': k/2 (|d| - L)^2; 'squared-length': k/2 (|d|^2 - L^2)^2 (seed 001 Eq. 7)"),
        }),
      )
      .default([])
      .describe('linear springs between particles (seed 004 mass-spring systems)'),
  }),
]);

export const materialSchema = z.strictObject({
  model: z.enum(['corotated', 'neo-hookean', 'stable-neo-hookean', 'stvk', 'linear']).default('neo-hookean'),
  youngsModulus: positive.describe('Pa'),
  poissonRatio: z.number().gt(-1).lt(0.5).default(0.3),
  density: positive.default(1000).describe('kg/m^3'),
});

export const bodySchema = z.strictObject({
  name: z.string().optional(),
  mesh: meshSchema,
  transform: z
    .strictObject({
      height: positive.optional().describe('uniform scale so that the mesh bounding box is this tall (y), applied first'),
      scale: positive.default(1).describe('uniform scale (after height)'),
      rotate: z.strictObject({ axis: vec3, degrees: z.number() }).optional().describe('rotation about the origin, after scaling'),
      center: z.boolean().default(false).describe('move the bounding-box centre to the origin before rotate/translate'),
      translate: vec3.default([0, 0, 0]),
    })
    .prefault({}),
  material: materialSchema.optional().describe('required for tet meshes'),
  deform: z
    .strictObject({
      axis: vec3.describe('long axis of the body; s in [0, 1] runs along it over the body'),
      twistDegrees: z.number().default(0).describe('rotation about the axis growing linearly with s'),
      bend: vec3.default([0, 0, 0]).describe('displacement growing as s^2 (m at s = 1)'),
    })
    .optional()
    .describe('initial (pre-stressed) positions; the rest shape stays the undeformed mesh'),
  velocity: z
    .strictObject({
      linear: vec3.default([0, 0, 0]).describe('m/s'),
      angular: vec3.optional().describe('rad/s, rigid rotation about `center`'),
      center: vec3.default([0, 0, 0]),
      ramp: z
        .strictObject({ velocity: vec3, along: vec3 })
        .optional()
        .describe('v = velocity * s, s in [0, 1] the normalised coordinate along `along` over the body'),
    })
    .prefault({}),
  fixed: z.array(regionSchema).default([]).describe('nodes held at their initial position'),
  lockAxes: z
    .array(z.enum(['x', 'y', 'z']))
    .default([])
    .describe("coordinates held at their initial value for every node (['y', 'z'] keeps a bar moving along x only)"),
  friction: z.number().nonnegative().optional().describe('friction coefficient of this body\'s surface (default contact.friction); a pair uses the smaller of its two'),
  selfContact: z.boolean().optional().describe('collide the body with itself (default contact.selfContact)'),
  repeat: z
    .strictObject({
      counts: z.tuple([cellCount, cellCount, cellCount]).describe('copies along x, y, z'),
      spacing: vec3.describe('offset between neighbouring copies (m)'),
    })
    .optional()
    .describe('an array of identical bodies, named name[i,j,k] (regions are selected per copy)'),
  moving: z
    .array(z.strictObject({ region: regionSchema, velocity: vec3.describe('constant velocity of the handle (m/s)') }))
    .default([])
    .describe('prescribed (scripted) nodes'),
});

export const obstacleSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('plane'),
    name: z.string().default('ground'),
    point: vec3.default([0, 0, 0]).describe('a point of the plane (m)'),
    normal: vec3.default([0, 1, 0]).describe('normal toward the free side (normalised on load)'),
    friction: z.number().nonnegative().optional().describe('friction coefficient (default contact.friction)'),
  }),
  z.strictObject({
    type: z.literal('stairs'),
    name: z.string().default('stairs'),
    steps: z.number().int().positive().describe('number of steps, going down along +x from the highest'),
    stepHeight: positive.describe('rise of each step (m)'),
    stepDepth: positive.describe('run of each step (m)'),
    width: positive.describe('extent along z (m)'),
    origin: vec3.default([0, 0, 0]).describe('back-bottom corner: the highest step starts at x = origin.x, the bottom riser ends at y = origin.y'),
    friction: z.number().nonnegative().optional(),
  }),
]);

export const contactSchema = z.strictObject({
  kappa: positive.default(1e5).describe('barrier stiffness (N/m; seed 000 default 1e5)'),
  dhat: positive.default(1e-3).describe('barrier activation distance (m; seed 000 default 1 mm)'),
  adaptiveKappa: z.boolean().default(false).describe("IPC's adaptive barrier stiffness: kappa grows when contacts get too close (kappa is then the starting value's lower bound)"),
  friction: z.number().nonnegative().default(0).describe('default friction coefficient of every surface'),
  frictionVelocity: positive.default(1e-3).describe('eps_v (m/s): below this sliding speed friction is smoothed toward static'),
  selfContact: z.boolean().default(true).describe('default for bodies: collide a body with itself'),
  barrierHessian: z
    .enum(['projected', 'gauss-newton'])
    .default('gauss-newton')
    .describe("Newton matrix of the contact pairs: 'gauss-newton' f''(d) grad d grad d^T of the barrier as a function of the distance (exact along the normal, PSD without eigen-decomposition; the edge-edge mollifier held fixed), or 'projected', the exact Hessian with negative eigenvalues clamped; same solution, other search directions"),
});

const decayPieceSchema = z.strictObject({ from: z.number().nonnegative(), tau: positive });

export const sceneSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(''),
  duration: z.number().nonnegative().describe('simulated time (s)'),
  dt: positive.describe('time step h (s)'),
  frameRate: positive.default(30).describe('output frames per second'),
  gravity: vec3.default([0, -9.8, 0]),
  integrator: z
    .strictObject({
      name: z.enum(integratorNames as [string, ...string[]]).default('a-search'),
      params: z.record(z.string(), z.union([z.number(), z.boolean()])).default({}),
    })
    .prefault({}),
  energy: z
    .strictObject({
      scale: positive.default(1).describe('E_0 = scale * H_0'),
      ground: z.number().default(0).describe('ground energy E_g the decay tends to (J)'),
      tau: positive.optional().describe('exponential decay time constant (s); none = conserve'),
      decayStart: z.number().nonnegative().default(0).describe('time the decay with `tau` starts (s)'),
      schedule: z.array(decayPieceSchema).default([]).describe('piecewise tau: [{from, tau}], overrides tau/decayStart'),
    })
    .prefault({}),
  damping: z.strictObject({ rayleigh: z.number().nonnegative().default(0).describe('semi-implicit Rayleigh mu (s)') }).prefault({}),
  solver: z
    .strictObject({
      linear: z
        .enum(['auto', 'pcg', 'ldlt', 'ldlt-lagged'])
        .default('auto')
        .describe("'pcg' Jacobi CG, 'ldlt' Cholesky per solve, 'ldlt-lagged' CG on a reused Cholesky factor; 'auto': ldlt-lagged while a factorization needs at most 5e10 flops and 1 GiB (predicted by its symbolic analysis), pcg beyond"),
      tolerance: positive.default(0.01).describe('Newton stop |dx|_inf <= tolerance * h'),
      maxNewtonIterations: z.number().int().positive().default(100),
      cgTolerance: positive.default(1e-4).describe('PCG relative residual'),
      projectPsd: z.boolean().default(true),
    })
    .prefault({}),
  contact: contactSchema.optional().describe('IPC contact; on when given or when there are obstacles'),
  obstacles: z.array(obstacleSchema).default([]).describe('static planes and triangle meshes'),
  bodies: z.array(bodySchema).min(1),
});

export type SceneInput = z.input<typeof sceneSchema>;
export type Scene = z.output<typeof sceneSchema>;
export type BodyDef = z.output<typeof bodySchema>;
export type Region = z.output<typeof regionSchema>;
export type Obstacle = z.output<typeof obstacleSchema>;
export type ContactSettings = z.output<typeof contactSchema>;

/** Validates a scene object; the error names each offending field path and what was expected. */
export function parseScene(input: unknown, source = 'scene'): Scene {
  const result = sceneSchema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
    return `  ${path}: ${issue.message}`;
  });
  throw new SceneError(`invalid ${source}:\n${lines.join('\n')}`);
}

export class SceneError extends Error {
  override name = 'SceneError';
}
