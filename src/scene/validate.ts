/**
 * A scene object checked the way a scene file is: the schema (field paths and allowed values in the error), then the
 * integrator's parameters against the registry. Pure, so the browser and the library validate with the CLI's messages.
 */

import { checkParams, findIntegrator } from '../integrators/registry.js';
import { parseScene, SceneError, type Scene } from './schema.js';

/** Checks the scene's own integrator parameters (parseScene accepts any names; the registry knows the allowed ones). */
export function checkSceneParams(scene: Scene, source = 'scene'): void {
  try {
    checkParams(findIntegrator(scene.integrator.name), scene.integrator.params);
  } catch (err) {
    throw new SceneError(`invalid ${source}:\n  integrator.params: ${(err as Error).message}`);
  }
}

/** The validated scene (every default filled in) of a scene object; a SceneError names each bad field. */
export function validateScene(input: unknown, source = 'scene'): Scene {
  const scene = parseScene(input, source);
  checkSceneParams(scene, source);
  return scene;
}
