/**
 * Scene files on disk: built-in scenes shipped in scenes/, user JSON files, the meshes they refer to, and the
 * mapping from a validated Scene (plus command-line overrides) to the RunOptions of simulate().
 *
 * Every failure caused by the input throws a SceneError (OverrideError for a bad override) whose message names the
 * file, the field and what is allowed, so the CLI can report it and exit before it writes anything.
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IntegratorParams } from '../integrators/integrator.js';
import { checkParams, findIntegrator, integratorNames } from '../integrators/registry.js';
import { LINEAR_SOLVER_NAMES, type LinearSolverName } from '../math/linear-solver.js';
import type { TriSurface } from '../mesh/tet-mesh.js';
import type { MeshObstacle, MeshResolver, ResolvedMesh } from '../scene/build.js';
import { parseScene, SceneError, sceneSchema, SURFACE_MESH_FORMATS, type Scene } from '../scene/schema.js';
import { checkSceneParams } from '../scene/validate.js';
import { findParametricScene, formatSceneParams, makeParametricScene, parametricSceneNames, SceneParamError, type SceneParameter, type SceneParams } from '../scene/parametric.js';
import { MeshFileError, readObj, readTetgen, tetgenPaths } from './mesh-files.js';
import { readSurfaceMesh, readTetMesh, tetMeshKind, unsupportedMeshFormat } from './mesh-import.js';

/** Root of the package (where scenes/ and data/ live), found from this module so the CWD does not matter. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BUILTIN_SCENE_DIR = join(PACKAGE_ROOT, 'scenes');
export const BUILTIN_MESH_DIR = join(PACKAGE_ROOT, 'data', 'meshes');

export interface LoadedScene {
  scene: Scene;
  /** Folder that relative mesh paths of the scene are resolved against. */
  baseDir: string;
  /** The file the scene came from (absolute path); for a parametric scene, its name and parameters. */
  source: string;
  /** The full parameter set of a parametric scene (defaults included); absent for scene files. */
  parameters?: SceneParams;
}

export interface LoadSceneOptions {
  /** Parameters of a parametric scene (src/scene/parametric.ts); an error for any other scene. */
  params?: SceneParams;
  /** The run's time step: passed to a parametric scene that declares a `dt` parameter unless `params` sets it. */
  dt?: number;
}

/**
 * Loads a built-in scene by name (scenes/<name>.json of the package, then the parametric scenes) or a scene JSON
 * file by path. A bad parameter throws SceneParamError naming it.
 */
export function loadScene(nameOrPath: string, options: LoadSceneOptions = {}): LoadedScene {
  const given = options.params ?? {};
  const parametric = isParametricName(nameOrPath) ? findParametricScene(nameOrPath) : undefined;
  if (parametric) {
    const params = { ...given };
    if (options.dt !== undefined && params.dt === undefined && 'dt' in parametric.parameters) params.dt = options.dt;
    const made = makeParametricScene(nameOrPath, params);
    const source = `${nameOrPath} (parametric scene: ${formatSceneParams(made.params)})`;
    const scene = parseScene(made.input, `parametric scene ${source}`);
    checkSceneParams(scene, `parametric scene ${nameOrPath}`);
    return { scene, baseDir: BUILTIN_SCENE_DIR, source, parameters: made.params };
  }
  const source = locateScene(nameOrPath);
  const names = Object.keys(given);
  if (names.length > 0) {
    throw new SceneParamError(names[0], `scene ${source} has no parameters (parametric scenes: ${parametricSceneNames().join(', ')})`);
  }
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (err) {
    throw new SceneError(`cannot read scene file ${source}: ${(err as Error).message}`);
  }
  const json = parseJsonText(text, source);
  const scene = parseScene(json, `scene file ${source}`);
  checkSceneParams(scene, `scene file ${source}`);
  return { scene, baseDir: dirname(source), source };
}

/** A name (not an existing file, nor a path, nor a JSON built-in) that the parametric registry may know. */
function isParametricName(nameOrPath: string): boolean {
  if (!/^[\w.-]+$/.test(nameOrPath) || nameOrPath.endsWith('.json')) return false;
  const asPath = resolve(nameOrPath);
  if (existsSync(asPath) && statSync(asPath).isFile()) return false;
  return !existsSync(join(BUILTIN_SCENE_DIR, `${nameOrPath}.json`));
}

/** A path when the argument names an existing file or looks like one; else the built-in scene of that name. */
function locateScene(nameOrPath: string): string {
  if (nameOrPath.trim() === '') throw new SceneError(`no scene given; built-in scenes: ${builtinSceneNames().join(', ')}`);
  const looksLikePath = nameOrPath.endsWith('.json') || nameOrPath.includes('/') || nameOrPath.includes('\\');
  const asPath = resolve(nameOrPath);
  if (existsSync(asPath) && statSync(asPath).isFile()) return asPath;
  if (existsSync(asPath) && looksLikePath) throw new SceneError(`scene file ${asPath} is ${statSync(asPath).isDirectory() ? 'a folder' : 'not a regular file'}`);
  if (looksLikePath) throw new SceneError(`scene file ${asPath} does not exist`);
  const builtin = join(BUILTIN_SCENE_DIR, `${nameOrPath}.json`);
  if (/^[\w.-]+$/.test(nameOrPath) && existsSync(builtin)) return builtin;
  const all = [...builtinSceneNames(), ...parametricSceneNames()].sort();
  throw new SceneError(`unknown scene '${nameOrPath}': no such file and no built-in scene of that name; built-in scenes: ${all.join(', ')}`);
}

function builtinSceneNames(): string[] {
  if (!existsSync(BUILTIN_SCENE_DIR)) return [];
  return readdirSync(BUILTIN_SCENE_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => basename(f, '.json'))
    .sort();
}

export interface SceneListing {
  name: string;
  description: string;
  dt: number;
  duration: number;
  bodies: number;
  integrator: string;
  /** Set instead of the fields above when the shipped file does not validate. */
  error?: string;
  /** A parametric scene's parameters (the other fields are those of its defaults). */
  parameters?: Record<string, SceneParameter>;
}

/** The built-in scenes (JSON files and parametric scenes at their defaults) with the facts `vivace scenes` lists. */
export function listScenes(): SceneListing[] {
  const files = builtinSceneNames().map((name): SceneListing => {
    try {
      const { scene } = loadScene(join(BUILTIN_SCENE_DIR, `${name}.json`));
      return { name, description: scene.description, dt: scene.dt, duration: scene.duration, bodies: scene.bodies.length, integrator: scene.integrator.name };
    } catch (err) {
      return { name, description: '', dt: NaN, duration: NaN, bodies: 0, integrator: '', error: (err as Error).message };
    }
  });
  const parametric = parametricSceneNames()
    .filter((name) => !files.some((f) => f.name === name))
    .map((name): SceneListing => {
      const { parameters, description } = findParametricScene(name)!;
      try {
        const { scene } = loadScene(name);
        return { name, description, dt: scene.dt, duration: scene.duration, bodies: scene.bodies.length, integrator: scene.integrator.name, parameters };
      } catch (err) {
        return { name, description: '', dt: NaN, duration: NaN, bodies: 0, integrator: '', error: (err as Error).message, parameters };
      }
    });
  return [...files, ...parametric].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------------------------
// JSON with positions in its errors

/** JSON.parse, but a syntax error names the file, line and column (JSON.parse alone gives an offset at best). */
export function parseJsonText(text: string, file: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    const found = findJsonSyntaxError(body);
    const offset = found?.offset ?? offsetFromMessage((err as Error).message) ?? body.length;
    const { line, column } = lineColumn(body, offset);
    const what = found?.message ?? (err as Error).message;
    throw new SceneError(`${file}:${line}:${column}: invalid JSON: ${what}`);
  }
}

function offsetFromMessage(message: string): number | undefined {
  const m = /position (\d+)/.exec(message);
  return m ? Number(m[1]) : undefined;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

const OPEN_OBJECT = 123; // {
const CLOSE_OBJECT = 125; // }
const OPEN_ARRAY = 91; // [
const CLOSE_ARRAY = 93; // ]
const QUOTE = 34;
const COMMA = 44;
const COLON = 58;
const BACKSLASH = 92;
const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Scans JSON text for its first syntax error; null when the text is valid. Only run after JSON.parse failed. Open
 * brackets are kept on a stack (no recursion), so any nesting depth is scanned to the real error.
 */
export function findJsonSyntaxError(text: string): { offset: number; message: string } | null {
  const n = text.length;
  let i = 0;
  const stack: number[] = [];
  const fail = (message: string, at = i): never => {
    throw { offset: at, message };
  };
  const describe = (at: number): string => (at >= n ? 'end of input' : JSON.stringify(text[at]));
  const ws = () => {
    for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) {
      if (text[i + k] !== word[k]) fail(`expected '${word}', got ${JSON.stringify(text.slice(i, i + k + 1))}`);
    }
    i += word.length;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i++;
        return;
      }
      if (c < 32) fail('control character (a raw line break?) inside a string');
      if (c === BACKSLASH) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape in a string');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(`bad escape '\\${e ?? ''}' in a string`);
      } else i++;
    }
  };
  // A value at i: a scalar is read whole; a bracket is pushed (true: its members follow).
  const value = (): boolean => {
    ws();
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      stack.push(c);
      i++;
      return true;
    }
    if (c === QUOTE) string();
    else if (text[i] === 't') literal('true');
    else if (text[i] === 'f') literal('false');
    else if (text[i] === 'n') literal('null');
    else {
      JSON_NUMBER.lastIndex = i;
      const m = JSON_NUMBER.exec(text);
      if (!m) fail(`expected a value, got ${describe(i)}`);
      i += (m as RegExpExecArray)[0].length;
    }
    return false;
  };
  // One member of the innermost container: `"name": value` in an object, a value in an array.
  const member = (): boolean => {
    ws();
    if (stack[stack.length - 1] === OPEN_ARRAY) return value();
    if (text.charCodeAt(i) !== QUOTE) fail(`expected a double-quoted property name, got ${describe(i)}${text.charCodeAt(i) === CLOSE_OBJECT ? ' (trailing comma?)' : ''}`);
    string();
    ws();
    if (text.charCodeAt(i) !== COLON) fail(`expected ':' after a property name, got ${describe(i)}`);
    i++;
    return value();
  };
  try {
    let opened = value();
    for (;;) {
      if (opened) {
        // Right after '{' or '[': empty, or the first member.
        ws();
        if (text.charCodeAt(i) !== (stack[stack.length - 1] === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          opened = member();
          continue;
        }
        stack.pop();
        i++;
        opened = false;
      }
      if (stack.length === 0) break;
      // After a member: ',' and the next one, or the closing bracket.
      ws();
      const isObject = stack[stack.length - 1] === OPEN_OBJECT;
      const close = isObject ? CLOSE_OBJECT : CLOSE_ARRAY;
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i++;
        ws();
        if (!isObject && text.charCodeAt(i) === CLOSE_ARRAY) fail("expected a value, got ']' (trailing comma?)");
        opened = member();
      } else if (c === close) {
        stack.pop();
        i++;
      } else fail(`expected ',' or '${String.fromCharCode(close)}' after ${isObject ? 'a property value' : 'an array element'}, got ${describe(i)}`);
    }
    ws();
    if (i < n) fail(`unexpected ${describe(i)} after the end of the JSON value`);
    return null;
  } catch (err) {
    if (err && typeof err === 'object' && 'offset' in err) return err as { offset: number; message: string };
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Meshes

/** Loads 'file' meshes relative to baseDir and 'builtin' meshes from data/meshes of the package. */
export function meshResolver(baseDir: string, meshDir = BUILTIN_MESH_DIR): MeshResolver {
  const surface = (obstacle: MeshObstacle, index: number): TriSurface => {
    const where = `obstacles[${index}].path`;
    const path = isAbsolute(obstacle.path) ? obstacle.path : resolve(baseDir, obstacle.path);
    if (!/\.(obj|stl)(\.gz)?$/i.test(path)) throw new SceneError(`${where}: ${JSON.stringify(obstacle.path)}: expected a triangle surface, ${SURFACE_MESH_FORMATS.join(' or ')}, by its extension`);
    if (!existsSync(path)) throw new SceneError(`${where}: mesh file ${path} not found (path '${obstacle.path}' is relative to ${baseDir})`);
    return readMeshFile(() => readSurfaceMesh(path), where);
  };
  return Object.assign(bodyMeshResolver(baseDir, meshDir), { surface });
}

function bodyMeshResolver(baseDir: string, meshDir: string): MeshResolver {
  return (body, index): ResolvedMesh => {
    const where = `bodies[${index}].mesh`;
    const mesh = body.mesh;
    if (mesh.type === 'file') {
      const path = isAbsolute(mesh.path) ? mesh.path : resolve(baseDir, mesh.path);
      const unsupported = unsupportedMeshFormat(path);
      if (unsupported) throw new SceneError(`${where}.path: ${JSON.stringify(mesh.path)}: ${unsupported}`);
      const needed = tetMeshKind(path) === 'tetgen' ? Object.values(tetgenPaths(path)) : [path];
      const missing = needed.filter((p) => !existsSync(p));
      if (missing.length) throw new SceneError(`${where}.path: mesh file ${missing.join(' and ')} not found (path '${mesh.path}' is relative to ${baseDir})`);
      return readMeshFile(() => readTetMesh(path), `${where}.path`);
    }
    if (mesh.type === 'shell' && mesh.shape.type === 'file') {
      const file = mesh.shape.path;
      const path = isAbsolute(file) ? file : resolve(baseDir, file);
      if (!/\.obj$/i.test(path)) throw new SceneError(`${where}.shape.path: ${JSON.stringify(file)}: a shell is read from an OBJ surface (.obj)`);
      if (!existsSync(path)) throw new SceneError(`${where}.shape.path: surface file ${path} not found (path '${file}' is relative to ${baseDir})`);
      return readMeshFile(() => ({ ...readObj(path), tets: new Uint32Array(0) }), `${where}.shape.path`);
    }
    if (mesh.type === 'builtin') {
      const nodePath = join(meshDir, `${mesh.name}.node.gz`);
      const elePath = join(meshDir, `${mesh.name}.ele.gz`);
      const missing = [nodePath, elePath].filter((p) => !existsSync(p));
      if (missing.length) throw new SceneError(`${where}.name: the built-in mesh '${mesh.name}' is missing from this installation (${missing.join(', ')} not found)`);
      return readMeshFile(() => readTetgen(nodePath, elePath), where);
    }
    throw new SceneError(`${where}.type: '${mesh.type}' is not a mesh read from a file`);
  };
}

function readMeshFile<T>(read: () => T, where: string): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof MeshFileError) throw new SceneError(`${where}: ${err.message}`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Overrides (command-line flags over scene fields) and RunOptions

export interface SceneOverrides {
  integrator?: string;
  dt?: number;
  duration?: number;
  /** Merged over the scene's params when the integrator stays the same; they replace them when it changes. */
  params?: IntegratorParams;
  linear?: 'auto' | LinearSolverName;
  /** Newton tolerance (|dx|_inf <= tolerance * h). */
  tolerance?: number;
  frameRate?: number;
  /** Any solver settings, merged over the scene's (linear/tolerance above win over these). */
  solver?: Partial<Scene['solver']>;
}

/** A bad override value; `field` is the SceneOverrides key, so a front end can name its own flag. */
export class OverrideError extends SceneError {
  override name = 'OverrideError';
  constructor(
    readonly field: keyof SceneOverrides,
    message: string,
  ) {
    super(message);
  }
}

/** The fields overrides can change: only they are validated again (a scene can hold 50 MB of particles). */
const overridableFields = sceneSchema.pick({ dt: true, duration: true, frameRate: true, integrator: true, solver: true });

/** A new validated scene with the overrides applied; the input scene is not modified (unchanged parts are shared). */
export function applyOverrides(scene: Scene, overrides: SceneOverrides): Scene {
  const next: Scene = { ...scene, integrator: { ...scene.integrator, params: { ...scene.integrator.params } }, solver: { ...scene.solver } };
  const o = overrides;
  const positive = (field: 'dt' | 'duration' | 'tolerance' | 'frameRate', value: number | undefined, allowZero = false) => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
      throw new OverrideError(field, `${field} must be a ${allowZero ? 'non-negative' : 'positive'} finite number (got ${String(value)})`);
    }
  };
  positive('dt', o.dt);
  positive('duration', o.duration, true);
  positive('tolerance', o.tolerance);
  positive('frameRate', o.frameRate);
  if (o.integrator !== undefined) {
    if (!integratorNames.includes(o.integrator)) {
      throw new OverrideError('integrator', `unknown integrator '${o.integrator}'; allowed: ${integratorNames.join(', ')}`);
    }
    // Parameters in the scene belong to the scene's integrator.
    if (o.integrator !== scene.integrator.name) next.integrator.params = {};
    next.integrator.name = o.integrator;
  }
  if (o.params) {
    for (const [k, v] of Object.entries(o.params)) {
      if (typeof v !== 'number' && typeof v !== 'boolean') throw new OverrideError('params', `integrator parameter '${k}' must be a number or true/false (got '${String(v)}')`);
      next.integrator.params[k] = v;
    }
  }
  if (o.solver !== undefined) Object.assign(next.solver, o.solver);
  if (o.linear !== undefined) {
    if (o.linear !== 'auto' && !LINEAR_SOLVER_NAMES.includes(o.linear)) throw new OverrideError('linear', `linear solver must be auto, ${LINEAR_SOLVER_NAMES.join(', ')} (got '${String(o.linear)}')`);
    next.solver.linear = o.linear;
  }
  if (o.dt !== undefined) next.dt = o.dt;
  if (o.duration !== undefined) next.duration = o.duration;
  if (o.tolerance !== undefined) next.solver.tolerance = o.tolerance;
  if (o.frameRate !== undefined) next.frameRate = o.frameRate;
  let validated: Scene;
  try {
    const { dt, duration, frameRate, integrator, solver } = next;
    validated = { ...next, ...parseScene({ dt, duration, frameRate, integrator, solver }, 'scene after overrides', overridableFields) };
  } catch (err) {
    // Only the solver block can still be wrong here: every other override was checked above.
    throw new OverrideError('solver', (err as Error).message);
  }
  try {
    checkParams(findIntegrator(validated.integrator.name), validated.integrator.params);
  } catch (err) {
    throw new OverrideError('params', (err as Error).message);
  }
  return validated;
}

export { toRunOptions, type RunOptionOverrides } from '../scene/run-options.js';
export { checkSceneParams } from '../scene/validate.js';
