/**
 * Checkpoint files (simulate's RunCheckpoint): JSON, the position and velocity arrays as base64 of little-endian
 * float64 (exact), non-finite numbers as strings. Written to a temporary file and renamed, so a run killed while
 * writing leaves the previous checkpoint intact.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import type { RunCheckpoint } from '../sim/simulate.js';

const finiteOrNot = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity']).transform(Number)]);
const vec3 = z.tuple([z.number(), z.number(), z.number()]);

const checkpointSchema = z.strictObject({
  version: z.literal(1),
  scene: z.string(),
  integrator: z.string(),
  h: z.number().positive(),
  step: z.number().int().nonnegative(),
  t: z.number(),
  x: z.string(),
  v: z.string(),
  target: finiteOrNot,
  adaptiveStiffness: z.strictObject({ kappa: z.number().positive(), hadContact: z.boolean() }).nullable(),
  initial: z.strictObject({ total: z.number(), kinetic: z.number(), potential: z.number(), angularMomentum: vec3 }),
  totals: z.strictObject({
    newtonIterations: z.number().int().nonnegative(),
    linearIterations: z.number().int().nonnegative(),
    minEnergy: finiteOrNot,
    maxEnergy: finiteOrNot,
    maxInverted: z.number().int().nonnegative(),
    minDistance: finiteOrNot,
    maxActiveContacts: z.number().int().nonnegative(),
    wallSeconds: z.number().nonnegative(),
    cpuSeconds: finiteOrNot,
    timing: z.record(z.string(), z.number()),
  }),
});

function encode(a: Float64Array): string {
  const bytes = new Uint8Array(a.length * 8);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < a.length; i++) view.setFloat64(8 * i, a[i], true);
  return Buffer.from(bytes).toString('base64');
}

function decode(text: string, field: string, file: string): Float64Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 8 !== 0) throw new Error(`${file}: checkpoint field '${field}' is not a float64 array (${bytes.length} bytes)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(8 * i, true);
  return out;
}

export function writeCheckpoint(file: string, checkpoint: RunCheckpoint): void {
  const text = JSON.stringify({ ...checkpoint, x: encode(checkpoint.x), v: encode(checkpoint.v) }, (_key, value) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
  );
  const temporary = `${file}.partial`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** Reads a checkpoint file; a malformed one is refused naming the file and the field. */
export function readCheckpoint(file: string): RunCheckpoint {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not a checkpoint (${(err as Error).message})`);
  }
  const parsed = checkpointSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: checkpoint field '${issue.path.join('.')}': ${issue.message}`);
  }
  const c = parsed.data;
  return { ...c, x: decode(c.x, 'x', file), v: decode(c.v, 'v', file) };
}
