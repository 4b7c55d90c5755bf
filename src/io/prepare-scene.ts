/**
 * From a loaded scene to a run that is ready to start: overrides applied, the work checked against the limits before
 * anything is built, the model built with each mesh file read once, and the simulate() options. Shared by the CLI
 * and the library; every error is typed (OverrideError, WorkError, SceneError, each naming its field), so each
 * front end can name its own flag or option.
 */

import type { Model } from '../model/model.js';
import type { TriSurface } from '../mesh/tet-mesh.js';
import { buildSceneModel, type MeshObstacle, type MeshResolver, type ResolvedMesh } from '../scene/build.js';
import type { Scene } from '../scene/schema.js';
import { checkWork, estimateWork, WORK_LIMITS, type WorkLimits } from '../scene/work-estimate.js';
import type { RunOptions } from '../sim/simulate.js';
import { applyOverrides, meshResolver, toRunOptions, type LoadedScene, type SceneOverrides } from './scene-files.js';

/** meshResolver that reads each mesh file once: the work estimate reads it first, the build (every copy) reuses it. */
export function readOnceMeshes(baseDir: string): MeshResolver {
  const read = meshResolver(baseDir);
  const cache = new Map<string, ResolvedMesh>();
  const surfaces = new Map<string, TriSurface>();
  const bodies: MeshResolver = (body, index) => {
    const key = JSON.stringify(body.mesh);
    let mesh = cache.get(key);
    if (!mesh) {
      mesh = read(body, index);
      cache.set(key, mesh);
    }
    return mesh;
  };
  return Object.assign(bodies, {
    surface(obstacle: MeshObstacle, index: number): TriSurface {
      let surface = surfaces.get(obstacle.path);
      if (!surface) {
        surface = read.surface!(obstacle, index);
        surfaces.set(obstacle.path, surface);
      }
      return surface;
    },
  });
}

/** The work limits asked for: the defaults, another step limit, or none at all (`allowLarge`). */
export function workLimits(ask: { maxSteps?: number; allowLarge?: boolean }): WorkLimits {
  if (ask.allowLarge) return { steps: Infinity, memoryBytes: Infinity, outputBytes: Infinity, bodies: Infinity };
  return { ...WORK_LIMITS, steps: ask.maxSteps ?? WORK_LIMITS.steps };
}

/** Refuses (WorkError) a run without steps or beyond the limits, from the scene description and its meshes' sizes. */
export function checkSceneWork(scene: Scene, meshes: MeshResolver, limits: WorkLimits = WORK_LIMITS, runs = 1): void {
  const sizes = (body: Scene['bodies'][number], index: number) => {
    const mesh = meshes(body, index);
    return { nodes: mesh.positions.length / 3, tets: mesh.tets.length / 4 };
  };
  const surfaceSizes = meshes.surface
    ? (o: MeshObstacle, index: number) => {
        const surface = meshes.surface!(o, index);
        return { nodes: surface.positions.length / 3, triangles: surface.triangles.length / 3 };
      }
    : undefined;
  checkWork(scene, estimateWork(scene, sizes, runs, surfaceSizes), limits);
}

export interface PreparedScene {
  /** The effective scene: every default filled in and every override applied. */
  scene: Scene;
  /** Where the scene came from (a file's absolute path, a parametric scene's name and parameters, ...). */
  source: string;
  model: Model;
  options: RunOptions;
}

/** Applies the overrides, checks the work against `limits`, builds the model and derives the run options. */
export function prepareScene(loaded: LoadedScene, overrides: SceneOverrides = {}, limits: WorkLimits = WORK_LIMITS): PreparedScene {
  const scene = applyOverrides(loaded.scene, overrides);
  const meshes = readOnceMeshes(loaded.baseDir);
  checkSceneWork(scene, meshes, limits);
  return { scene, source: loaded.source, model: buildSceneModel(scene, meshes), options: toRunOptions(scene) };
}
