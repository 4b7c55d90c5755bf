import { z } from 'zod';
import { FRICTION_VELOCITY_AT_TOLERANCE } from '../contact/friction.js';
import { HESSIAN_PROJECTIONS } from '../energies/eigenvalue-filter.js';
import { integratorNames } from '../integrators/registry.js';
import { defaultSolverOptions } from '../sim/simulate.js';
import { MAX_THREADS } from '../solver/threads.js';

/**
 * The scene format (JSON). Every field is documented here with its default; `vivace scenes --schema` prints this
 * documentation, and errors name the field path and the allowed values.
 * Units: SI (m, kg, s, Pa). Axis convention: y up, gravity along -y, ground at y = 0.
 */

const vec3 = z.tuple([z.number(), z.number(), z.number()]);
const positive = z.number().positive();
const cellCount = z.number().int().positive();
/** A message lists at most this many issues, each cut to MAX_ISSUE_LENGTH characters (inputs can be huge). */
const MAX_ISSUES = 20;
const MAX_ISSUE_LENGTH = 300;
/** Arrays longer than this are scanned for bad elements before zod checks them (see list). */
const SCAN_LENGTH = 1000;

/**
 * Scans a long array or record (more than SCAN_LENGTH entries) with `element` and reports its first bad entries
 * (MAX_ISSUES lines in all): zod makes an issue object per bad entry, which for a 50 MB file takes minutes and then
 * overflows the stack or the heap. When the scan finds a bad entry, zod's own check is skipped; a long valid input
 * is checked twice.
 */
function scanLong(element: z.ZodType) {
  return (value: unknown, ctx: z.RefinementCtx): unknown => {
    if (value === null || typeof value !== 'object' || !isLong(value)) return value;
    let bad = 0;
    // Reports a bad entry; false when the message is full (the scan stops there).
    const check = (at: string | number, item: unknown): boolean => {
      const result = element.safeParse(item);
      if (result.success) return true;
      if (++bad >= MAX_ISSUES) {
        ctx.addIssue({ code: 'custom', path: [at], message: 'and more bad entries from here on' });
        return false;
      }
      for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: [at, ...issue.path] } as z.core.$ZodRawIssue);
      return true;
    };
    const record = value as Record<string, unknown>;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length && check(i, value[i]); i++);
    } else {
      // for-in, not Object.entries: the entries of a 2-million-key object take seconds to build.
      for (const key in record) if (!check(key, record[key])) break;
    }
    return value;
  };
}

/** More than SCAN_LENGTH elements or keys (counting stops there). */
function isLong(value: object): boolean {
  if (Array.isArray(value)) return value.length > SCAN_LENGTH;
  let n = 0;
  for (const _ in value) if (++n > SCAN_LENGTH) return true;
  return false;
}

/** z.array(element) with at least `min` elements, scanned first when long (scanLong). */
function list<T extends z.ZodType>(element: T, min = 0) {
  return z.preprocess(scanLong(element), z.array(element).min(min));
}

/** Volume of one cell of a box grid (m^3): zero or infinite when the sizes are beyond double precision. */
function cellVolume(size: readonly number[], cells: readonly number[]): number {
  return (size[0] / cells[0]) * (size[1] / cells[1]) * (size[2] / cells[2]);
}

/** A direction (rotation axis, plane normal, ...): normalised on use, so it must not be the zero vector. */
const direction = vec3.refine((v) => v[0] !== 0 || v[1] !== 0 || v[2] !== 0, { message: 'must be a non-zero vector' });

/** The tet mesh file formats a `file` mesh may be in (mesh-files.ts reads them; errors and docs list them). */
export const TET_MESH_FORMATS = [
  'TetGen .node + .ele (each optionally .gz)',
  'Gmsh .msh 2 ASCII or 4.1 ASCII/binary',
  'legacy VTK .vtk unstructured grid (ASCII/binary)',
  'VTK XML .vtu unstructured grid (ascii or inline binary, optionally zlib)',
] as const;

/**
 * A scene name becomes part of the default output path (out/<name>-<integrator>), so it is one plain path component:
 * letters, digits, '.', '_' and '-', starting with a letter or digit, never '..', at most 100 characters.
 */
const SCENE_NAME_PATTERN = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A value for a message: JSON, cut to `max` characters (a name can be megabytes long). */
function quote(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…" (${text.length} characters)`;
}

const sceneName = z
  .string()
  .regex(SCENE_NAME_PATTERN, {
    error: (issue) =>
      `must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit, without '..' (it names the output folder out/<name>-<integrator>); got ${quote(issue.input)}`,
  })
  .describe("scene name: letters, digits, '.', '_', '-' (it names the default output folder)");

/** Objects told apart by their `type`; an unknown or missing type is reported with the list of known ones. */
function byType<const T extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(options: T) {
  const types = options.map((o) => `'${String(o._zod.propValues.type?.values().next().value)}'`).join(', ');
  return z.discriminatedUnion('type', options, { error: `expected an object whose "type" is one of ${types}` });
}

export const regionSchema = z.union(
  [
    z.strictObject({ box: z.strictObject({ min: vec3, max: vec3 }).describe('axis-aligned box in world coordinates (after transform and deform)') }),
    z.strictObject({ nodes: list(z.number().int().nonnegative()).describe('node indices of the body (0-based)') }),
    z.strictObject({ boundary: z.literal(true).describe("a shell's rim: the nodes on edges of only one triangle") }),
  ],
  { error: 'expected a region: { "box": { "min": [x, y, z], "max": [x, y, z] } }, { "nodes": [whole numbers >= 0] } or { "boundary": true } (shells)' },
);

/** The flat shapes a shell may be generated as (x-z plane, y = 0, before the body's transform). */
export const shellShapeSchema = byType([
  z.strictObject({
    type: z.literal('rectangle'),
    size: z.tuple([positive, positive]).describe('extent along x and z (m), corner at the origin'),
    cells: z.tuple([cellCount, cellCount]).describe('cells along x and z, two right triangles each (diagonals alternating)'),
  }),
  z.strictObject({
    type: z.literal('disc'),
    radius: positive.describe('m, centred at the origin'),
    rings: cellCount.describe('concentric rings of nodes, ring k holding 6 k nodes: 1 + 3 rings (rings + 1) nodes, 6 rings^2 triangles'),
  }),
  z.strictObject({
    type: z.literal('polygon'),
    sides: z.number().int().min(3).describe('corners of the regular polygon (one on +x)'),
    radius: positive.describe('circumradius (m), centred at the origin'),
    rings: cellCount.describe('nested copies of the outline, copy k with k nodes per side'),
  }),
  z.strictObject({
    type: z.literal('file'),
    path: z.string().min(1).describe('an OBJ surface (v and f lines; polygons fan-triangulated), relative to the scene file; a manifold triangle mesh'),
  }),
]);

export const meshSchema = byType([
  z
    .strictObject({
      type: z.literal('box'),
      size: z.tuple([positive, positive, positive]).describe('edge lengths (m)'),
      cells: z.tuple([cellCount, cellCount, cellCount]).describe('cells along x, y, z'),
      tetsPerCell: z.literal([5, 6]).default(6).describe('5 (alternating) or 6 (Kuhn) tets per cell'),
    })
    .refine((b) => [...b.size, ...b.cells].some((x) => !(x > 0)) || (cellVolume(b.size, b.cells) > 0 && Number.isFinite(cellVolume(b.size, b.cells))), {
      path: ['size'],
      error: (issue) => {
        const b = issue.input as { size: number[]; cells: number[] };
        return `cells of ${b.size.map((s, a) => s / b.cells[a]).join(' x ')} m have a volume of ${cellVolume(b.size, b.cells)} m^3 in double precision; sizes must give cells of a positive, finite volume`;
      },
    }),
  z.strictObject({
    type: z.literal('file'),
    path: z.string().min(1).describe(`${TET_MESH_FORMATS.join(' or ')}, relative to the scene file`),
  }),
  z.strictObject({
    type: z.literal('builtin'),
    name: z.enum(['armadillo', 'armadillo-quality', 'bunny', 'ball']).describe('a mesh shipped in data/meshes'),
  }),
  z.strictObject({
    type: z.literal('particles'),
    positions: list(vec3, 1).describe('particle positions (m)'),
    masses: list(positive, 1).describe('particle masses (kg), one per particle'),
    springs: list(
      z
        .strictObject({
          a: z.number().int().nonnegative(),
          b: z.number().int().nonnegative(),
          stiffness: positive.describe('N/m'),
          restLength: z.number().nonnegative().optional().describe('m; default: the initial distance'),
          kind: z
            .enum(['hookean', 'squared-length'])
            .default('hookean')
            .describe("'hookean': k/2 (|d| - L)^2; 'squared-length': k/2 (|d|^2 - L^2)^2 (seed 001 Eq. 7)"),
        })
        .refine((s) => s.a !== s.b, { path: ['b'], error: (issue) => `joins particle ${(issue.input as { a: number }).a} to itself` }),
    )
      .default([])
      .describe('linear springs between particles (seed 004 mass-spring systems)'),
  }),
  z.strictObject({
    type: z.literal('torus'),
    majorRadius: positive.describe('radius of the tube\'s centre line (m)'),
    minorRadius: positive.describe('radius of the tube (m), less than majorRadius'),
    segments: z.number().int().min(3).default(24).describe('divisions around the ring'),
    sides: z.number().int().min(3).default(8).describe('divisions around the tube'),
  }).describe("a closed torus surface about the y axis (a ring in the xz plane) for an affine body (kind 'affine'): a chain link"),
  z.strictObject({
    type: z.literal('chain'),
    length: positive.describe('rest length (m): cells + 1 nodes evenly spaced along x from the body origin (before transform)'),
    cells: cellCount.describe('segments between consecutive nodes'),
    area: positive.describe(
      "cross-section area A (m^2, not scaled by transform): each segment stores A L psi(diag(s, 1, 1)) of the body's material (stretch s along it, lateral stretches held at 1: a block with y and z locked whose cross-sections move as one) and gives density A L / 2 to each end node",
    ),
  }),
  z.strictObject({
    type: z.literal('shell'),
    shape: shellShapeSchema,
    thickness: positive.describe('slab thickness t (m): membrane energy t A psi, bending stiffness from E t^3'),
    areaDensity: positive.optional().describe('kg/m^2 (lumped, a third of each triangle to each corner); default material.density * thickness'),
    bendingModulus: z
      .number()
      .nonnegative()
      .optional()
      .describe("bending Young's modulus E_b (Pa) of the discrete-shells hinges, D = E_b t^3 / (12 (1 - nu^2)); default material.youngsModulus; 0 = a membrane without bending"),
    contactOffset: z
      .union([z.number().nonnegative(), z.literal('thickness')], { error: "expected a number >= 0 (m) or 'thickness'" })
      .default(0)
      .describe(
        "Codim-IPC contact offset xi of the shell's primitives (m): a pair keeps its two primitives' offsets summed apart (the barrier acts on d - xi; solids and planes have 0), so two layers of the shell stay 2 xi apart and a solid xi from its mid-surface; 'thickness' = thickness / 2 (the shell's faces collide); 0 (default) = the mid-surfaces collide",
      ),
  }),
]);

export const materialSchema = z.strictObject({
  model: z.enum(['corotated', 'neo-hookean', 'stable-neo-hookean', 'stvk', 'linear']).default('neo-hookean'),
  youngsModulus: positive.describe('Pa'),
  poissonRatio: z.number().gt(-1).lt(0.5).default(0.3),
  density: positive.default(1000).describe('kg/m^3'),
});

/** Placement of a mesh read or generated in its own coordinates (bodies and mesh obstacles). */
export const transformSchema = z
  .strictObject({
    height: positive.optional().describe('uniform scale so that the mesh bounding box is this tall (y), applied first'),
    scale: positive.default(1).describe('uniform scale (after height)'),
    rotate: z.strictObject({ axis: direction, degrees: z.number() }).optional().describe('rotation about the origin, after scaling'),
    center: z.boolean().default(false).describe('move the bounding-box centre to the origin before rotate/translate'),
    translate: vec3.default([0, 0, 0]),
  })
  .prefault({});

/** The triangle-surface file formats a `mesh` obstacle may be in (mesh-files.ts reads them; errors and docs list them). */
export const SURFACE_MESH_FORMATS = ['Wavefront .obj', 'STL .stl (ASCII or binary)'] as const;

/** How a body's mesh moves: its own nodes (FEM tets, particles, chains), or as one affine body of 12 DOFs. */
export const BODY_KINDS = ['deformable', 'affine'] as const;

export const bodySchema = z.strictObject({
  name: z.string().optional(),
  mesh: meshSchema,
  kind: z
    .enum(BODY_KINDS)
    .default('deformable')
    .describe(
      "'deformable': the mesh's nodes are the DOFs; 'affine': the body moves as x = A X + p (Lan et al. 2022, Affine Body Dynamics; 12 DOFs, mass from the mesh's closed surface, near-rigid through the orthogonality potential with kappa = material.youngsModulus); `fixed` then holds the whole body when its regions select any node; no moving, lockAxes, deform or velocity.ramp",
    ),
  transform: transformSchema,
  material: materialSchema.optional().describe("required for tet meshes, chains and shells (a shell's membrane: 'neo-hookean' or 'stvk', plane stress)"),
  deform: z
    .strictObject({
      axis: direction.describe('long axis of the body; s in [0, 1] runs along it over the body'),
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
        .strictObject({ velocity: vec3, along: direction })
        .optional()
        .describe('v = velocity * s, s in [0, 1] the normalised coordinate along `along` over the body'),
      drumMode: z
        .strictObject({
          m: z.number().int().nonnegative().describe('angular order'),
          n: z.number().int().positive().describe('radial order: j_mn is the n-th zero of J_m'),
          amplitude: z.number().describe('peak velocity (m/s)'),
          radius: positive.describe('drum radius R (m)'),
          center: vec3.default([0, 0, 0]).describe('drum centre (m, world coordinates after transform)'),
        })
        .optional()
        .describe('adds v_y = amplitude J_m(j_mn r / R) cos(m theta) (r, theta about center in the x-z plane, theta from +x toward +z; 0 beyond R): a mode of a clamped circular membrane'),
    })
    .prefault({}),
  fixed: list(regionSchema).default([]).describe('nodes held at their initial position'),
  lockAxes: list(z.enum(['x', 'y', 'z']))
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
  moving: list(z.strictObject({ region: regionSchema, velocity: vec3.describe('constant velocity of the handle (m/s)') }))
    .default([])
    .describe('prescribed (scripted) nodes'),
});

export const obstacleSchema = byType([
  z.strictObject({
    type: z.literal('plane'),
    name: z.string().default('ground'),
    point: vec3.default([0, 0, 0]).describe('a point of the plane (m)'),
    normal: direction.default([0, 1, 0]).describe('normal toward the free side (normalised on load)'),
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
  z.strictObject({
    type: z.literal('mesh'),
    name: z.string().default('mesh'),
    path: z.string().min(1).describe(`a triangle surface, ${SURFACE_MESH_FORMATS.join(' or ')} (optionally .gz), relative to the scene file`),
    transform: transformSchema.describe('placement of the file\'s triangles, as for bodies'),
    friction: z.number().nonnegative().optional().describe('friction coefficient (default contact.friction)'),
  }),
]);

export const contactSchema = z.strictObject({
  kappa: positive.default(1e5).describe('barrier stiffness (N/m; seed 000 default 1e5)'),
  dhat: positive.default(1e-3).describe('barrier activation distance (m; seed 000 default 1 mm)'),
  adaptiveKappa: z.boolean().default(false).describe("IPC's adaptive barrier stiffness: kappa grows when contacts get too close (kappa is then the starting value's lower bound)"),
  friction: z.number().nonnegative().default(0).describe('default friction coefficient of every surface'),
  frictionVelocity: z
    .union([positive, z.literal(FRICTION_VELOCITY_AT_TOLERANCE)], { error: `expected a positive number (m/s) or '${FRICTION_VELOCITY_AT_TOLERANCE}'` })
    .default(1e-3)
    .describe(`eps_v (m/s): below this sliding speed friction is smoothed toward static; '${FRICTION_VELOCITY_AT_TOLERANCE}': the Newton tolerance (solver.tolerance, a velocity), so that the smoothing zone eps_v h is as wide as the accuracy Newton stops at`),
  selfContact: z.boolean().default(true).describe('default for bodies: collide a body with itself'),
  barrierHessian: z
    .enum(['projected', 'gauss-newton'])
    .default('gauss-newton')
    .describe("Newton matrix of the contact pairs: 'gauss-newton' f''(d) grad d grad d^T of the barrier as a function of the distance (exact along the normal, PSD without eigen-decomposition; the edge-edge mollifier held fixed), or 'projected', the exact Hessian with negative eigenvalues clamped; same solution, other search directions"),
});

const integratorParam = z.union([z.number(), z.boolean()], { error: 'expected a number or true/false' });

const decayPieceSchema = z.strictObject({ from: z.number().nonnegative(), tau: positive });

export const sceneSchema = z.strictObject({
  name: sceneName,
  description: z.string().default(''),
  duration: z.number().nonnegative().describe('simulated time (s)'),
  dt: positive.describe('time step h (s)'),
  frameRate: positive.default(30).describe('output frames per second'),
  gravity: vec3.default([0, -9.8, 0]),
  integrator: z
    .strictObject({
      name: z.enum(integratorNames as [string, ...string[]]).default('a-search'),
      params: z.preprocess(scanLong(integratorParam), z.record(z.string(), integratorParam)).default({}),
    })
    .prefault({}),
  energy: z
    .strictObject({
      scale: positive.default(1).describe('E_0 = scale * H_0'),
      ground: z.number().default(0).describe('ground energy E_g the decay tends to (J)'),
      tau: positive.optional().describe('exponential decay time constant (s); none = conserve'),
      decayStart: z.number().nonnegative().default(0).describe('time the decay with `tau` starts (s)'),
      schedule: list(decayPieceSchema)
        .superRefine((pieces, ctx) => {
          for (let i = 1; i < pieces.length; i++) {
            if (pieces[i].from > pieces[i - 1].from) continue;
            ctx.addIssue({ code: 'custom', path: [i, 'from'], message: `${pieces[i].from} is not after the previous piece's from (${pieces[i - 1].from}): the pieces must be in increasing time order` });
          }
        })
        .default([])
        .describe('piecewise tau: [{from, tau}] in increasing order of from; overrides tau/decayStart'),
    })
    .prefault({}),
  damping: z.strictObject({ rayleigh: z.number().nonnegative().default(0).describe('semi-implicit Rayleigh mu (s)') }).prefault({}),
  solver: z
    .strictObject({
      linear: z
        .enum(['auto', 'pcg', 'ldlt', 'ldlt-lagged'])
        .default(defaultSolverOptions.linear)
        .describe("'pcg' Jacobi CG, 'ldlt' Cholesky per solve, 'ldlt-lagged' CG on a reused Cholesky factor; 'auto': ldlt-lagged while a factorization needs at most 5e10 flops and 1 GiB (predicted by its symbolic analysis), pcg beyond"),
      tolerance: positive.default(defaultSolverOptions.tolerance).describe('Newton stop |dx|_inf <= tolerance * h'),
      maxNewtonIterations: z.number().int().positive().default(defaultSolverOptions.maxNewtonIterations),
      cgTolerance: positive.default(defaultSolverOptions.cgTolerance).describe('relative residual at which PCG stops (pcg, and the CG on the lagged Cholesky factor of ldlt-lagged and auto)'),
      projectPsd: z.boolean().default(defaultSolverOptions.projectPsd),
      hessianProjection: z
        .enum(HESSIAN_PROJECTIONS)
        .default(defaultSolverOptions.hessianProjection)
        .describe("with projectPsd, what becomes of each element's negative eigenvalues (tets, shell triangles and hinges): 'clamp' to 0, 'abs' their absolute value, 'adaptive' per Newton iteration, 'clamp' when the last step's trust-region ratio is within 0.01 of 1, else 'abs'"),
      threads: z
        .number()
        .int()
        .min(1)
        .max(MAX_THREADS)
        .default(defaultSolverOptions.threads!)
        .describe('threads of the element loops (energy, gradient, Hessian of each body of at least 1000 tets per thread); at most the CPUs the process may run on (its affinity, e.g. under taskset); results are the same to the bit for any count'),
    })
    .prefault({}),
  contact: contactSchema.optional().describe('IPC contact; on when given or when there are obstacles'),
  obstacles: list(obstacleSchema).default([]).describe('static planes and triangle meshes'),
  bodies: list(bodySchema, 1).superRefine(checkBodyNames),
});

/**
 * Body names must be unique: messages, summaries and contact reports name bodies. Names as the model gives them:
 * `body <k>` when unnamed (k counts the copies of repeated bodies before it), `<name>[i,j,k]` for the copies of a
 * repeated body (compared by pattern, without listing the copies).
 */
function checkBodyNames(bodies: z.output<typeof bodySchema>[], ctx: z.RefinementCtx): void {
  const plain = new Map<string, number>();
  const repeated = new Map<string, number>();
  let modelIndex = 0;
  bodies.forEach((body, i) => {
    const counts = body.repeat?.counts;
    const name = body.name ?? `body ${counts ? i : modelIndex}`;
    const names = counts ? repeated : plain;
    const first = names.get(name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `'${name}' is already the name of bodies[${first}]: body names must be unique` });
    else names.set(name, i);
    modelIndex += counts ? counts[0] * counts[1] * counts[2] : 1;
  });
  for (const [name, i] of plain) {
    const copy = /^(.*)\[(\d+),(\d+),(\d+)\]$/.exec(name);
    const j = copy ? repeated.get(copy[1]) : undefined;
    const counts = j === undefined ? undefined : bodies[j].repeat?.counts;
    const index = copy ? copy.slice(2, 5).map(Number) : [];
    if (counts && index.every((k, a) => k < counts[a])) {
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `'${name}' is the name of a copy of the repeated bodies[${j}]: body names must be unique` });
    }
  }
}

export type SceneInput = z.input<typeof sceneSchema>;
export type Scene = z.output<typeof sceneSchema>;
export type BodyDef = z.output<typeof bodySchema>;
export type Region = z.output<typeof regionSchema>;
export type ShellShape = z.output<typeof shellShapeSchema>;
export type Obstacle = z.output<typeof obstacleSchema>;
export type ContactSettings = z.output<typeof contactSchema>;

/** Validates a scene object; the error names each offending field path and what was expected. */
export function parseScene(input: unknown, source?: string): Scene;
/** The same for a part of the scene schema (`sceneSchema.pick(...)`). */
export function parseScene<T extends z.ZodType>(input: unknown, source: string, schema: T): z.output<T>;
export function parseScene(input: unknown, source = 'scene', schema: z.ZodType = sceneSchema): unknown {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = issue.path.length ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
    const line = `  ${path}: ${issueMessage(issue)}`;
    return line.length <= MAX_ISSUE_LENGTH ? line : `${line.slice(0, MAX_ISSUE_LENGTH - 1)}…`;
  });
  if (issues.length > MAX_ISSUES) lines.push(`  ... and ${issues.length - MAX_ISSUES} more`);
  throw new SceneError(`invalid ${source}:\n${lines.join('\n')}`);
}

/** zod's message, except for a non-finite number (JSON has none, but 1e999 reads as Infinity): zod says "expected number, received number". */
function issueMessage(issue: z.core.$ZodIssue): string {
  const received = (issue as { received?: unknown }).received;
  if (issue.code === 'invalid_type' && issue.expected === 'number' && typeof received === 'string' && /^-?Infinity$|^NaN$/.test(received)) {
    return `expected a finite number, got ${received} (a number beyond the range of doubles, such as 1e999)`;
  }
  return issue.message;
}

export class SceneError extends Error {
  override name = 'SceneError';
}
