/**
 * Checkpoint files (simulate's RunCheckpoint): JSON, the position and velocity arrays as base64 of little-endian
 * float64 (exact), non-finite numbers as strings. Written to a temporary file and renamed, so a run killed while
 * writing leaves the previous checkpoint intact. The last field, `checksum`, is the SHA-256 of the JSON text of all
 * the others: a file changed or damaged after it was written (one flipped character in the positions) is refused
 * rather than resumed from a wrong state.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import type { RunCheckpoint } from '../sim/simulate.js';

const finiteOrNot = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity']).transform(Number)]);
const vec3 = z.tuple([z.number(), z.number(), z.number()]);

/** The format this build writes and reads. */
const CHECKPOINT_VERSION = 2;

const checkpointSchema = z.strictObject({
  version: z.literal(CHECKPOINT_VERSION),
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
  frames: z.number().int().positive(),
  totals: z.strictObject({
    newtonIterations: z.number().int().nonnegative(),
    linearIterations: z.number().int().nonnegative(),
    newtonLimitSteps: z.number().int().nonnegative(),
    newtonLimitFirstSteps: z.array(z.number().int().positive()),
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

/** JSON text with non-finite numbers as strings: the text the checksum is taken of, both when writing and reading. */
function jsonText(doc: object): string {
  return JSON.stringify(doc, (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function writeCheckpoint(file: string, checkpoint: RunCheckpoint): void {
  const body = jsonText({ ...checkpoint, x: encode(checkpoint.x), v: encode(checkpoint.v) });
  // The checksum goes last, so that the text before it is exactly what it was taken of.
  const text = `${body.slice(0, -1)},"checksum":"${sha256(body)}"}`;
  const temporary = `${file}.partial`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** Refuses a checkpoint whose checksum is missing or does not match the rest of its contents. */
function checkChecksum(checksum: unknown, body: Record<string, unknown>, file: string): void {
  if (typeof checksum !== 'string') throw new Error(`${file}: checkpoint field 'checksum' is missing: cannot tell whether the state is intact`);
  const actual = sha256(jsonText(body));
  if (actual !== checksum) {
    throw new Error(`${file}: checksum mismatch: the checkpoint was changed or damaged after it was written (stored ${checksum.slice(0, 12)}..., contents give ${actual.slice(0, 12)}...); refusing to resume from a wrong state`);
  }
}

/** Reads a checkpoint file; a malformed or damaged one is refused naming the file (and the field). */
export function readCheckpoint(file: string): RunCheckpoint {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not a checkpoint (${(err as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${file}: not a checkpoint (not a JSON object)`);
  const { checksum, ...body } = raw as Record<string, unknown>;
  if (body.version !== CHECKPOINT_VERSION) {
    throw new Error(`${file}: checkpoint format version ${JSON.stringify(body.version)}, this build reads ${CHECKPOINT_VERSION} (written by another version of vivace: start the run again without --resume)`);
  }
  const parsed = checkpointSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: checkpoint field '${issue.path.join('.')}': ${issue.message}`);
  }
  checkChecksum(checksum, body, file);
  const c = parsed.data;
  return { ...c, x: decode(c.x, 'x', file), v: decode(c.v, 'v', file) };
}
