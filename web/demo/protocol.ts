/** Messages between the demo page and its simulation worker. */

import type { IntegratorParams } from '../../src/integrators/integrator.js';
import type { ParamSpec } from '../../src/integrators/registry.js';
import type { RunSummary } from '../../src/sim/records.js';

export interface StartMessage {
  type: 'start';
  scene: string;
  integrator: string;
  params: IntegratorParams;
  dt?: number;
  duration?: number;
}

export interface PlaneInfo {
  name: string;
  point: [number, number, number];
  normal: [number, number, number];
}

/** The drawing of the model: what a frame shows (frame-geometry.ts), obstacle names, planes, springs. */
export interface ReadyMessage {
  type: 'ready';
  vertexCount: number;
  triangles: Uint32Array;
  /** Body (or obstacle) index per frame vertex, -1 for particles. */
  vertexBody: Int32Array;
  bodyNames: string[];
  obstacleBodies: boolean[];
  lines: Uint32Array;
  planes: PlaneInfo[];
  h: number;
  steps: number;
  frameSeconds: number;
}

/** Rows of t, kinetic, potential, contact, total, target, alpha (NaN where absent; the order of SERIES in metrics.ts). */
export interface RowsMessage {
  type: 'rows';
  rows: Float64Array;
  hasContact: boolean;
}

export interface FrameMessage {
  type: 'frame';
  index: number;
  t: number;
  positions: Float32Array;
  /** When the worker sent it, in ms since the run started computing (the tests check that frames stream out). */
  sentMs: number;
}

export interface DoneMessage {
  type: 'done';
  summary: RunSummary;
  /** When the worker sent it, in ms since the run started computing. */
  sentMs: number;
}

export interface ErrorMessage {
  type: 'error';
  message: string;
}

export interface CatalogMessage {
  type: 'catalog';
  scenes: { name: string; title: string; note: string; duration: number; dt: number }[];
  integrators: { name: string; summary: string; params: Record<string, ParamSpec> }[];
}

export type WorkerMessage = CatalogMessage | ReadyMessage | RowsMessage | FrameMessage | DoneMessage | ErrorMessage;
