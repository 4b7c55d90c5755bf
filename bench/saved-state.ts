/**
 * The state files of `bench/resume.ts save`: a scene's positions then velocities, little-endian float64. Read here
 * for the benchmarks that start from one (resume, contact-terms, self-queries).
 */
import { readFileSync } from 'node:fs';

/** Positions and velocities (n numbers each) from `file`; exits with code 2, naming the file, when it cannot be read or its size is not 16 n bytes. */
export function readSavedState(file: string, sceneName: string, n: number): { x: Float64Array; v: Float64Array } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    console.error(`${file}: cannot read the saved state (${(err as Error).message})`);
    process.exit(2);
  }
  if (bytes.byteLength !== 16 * n) {
    console.error(`${file}: ${bytes.byteLength} bytes, but scene '${sceneName}' needs ${16 * n} (positions and velocities of ${n / 3} nodes)`);
    process.exit(2);
  }
  const state = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return { x: state.slice(0, n), v: state.slice(n) };
}
