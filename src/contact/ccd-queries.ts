/**
 * Parser for the CCD Sample-Queries CSV format (Wang et al. 2021): 8 rows per query, each row
 * `xNum,xDen,yNum,yDen,zNum,zDen,truth`, rows = 4 vertices at t = 0 then the same 4 at t = 1. Rationals can exceed
 * 2^53, so numerator and denominator are read as BigInt and divided as doubles. Pure text in, numbers out.
 */
import { edgeEdgeCcd, pointTriangleCcd, type CcdOptions, type CcdStats } from './ccd.js';

export interface CcdQuery {
  /** 24 doubles: 4 vertices at t = 0, then the same 4 at t = 1. */
  positions: Float64Array;
  /** Ground truth: the primitives touch at some t in [0, 1]. */
  collides: boolean;
}

function rational(num: string, den: string): number {
  const n = BigInt(num.trim()), d = BigInt(den.trim());
  // Both convert with one rounding each; exact when they fit in 53 bits (the sample set's denominators are powers
  // of two, so only the numerator rounds).
  return Number(n) / Number(d);
}

export function parseCcdQueries(text: string): CcdQuery[] {
  const rows = text.split(/\r?\n/).filter((line) => line.trim().length > 0);
  if (rows.length % 8 !== 0) throw new Error(`CCD query file: ${rows.length} rows, not a multiple of 8`);
  const queries: CcdQuery[] = [];
  for (let q = 0; q < rows.length; q += 8) {
    const positions = new Float64Array(24);
    let collides = false;
    for (let r = 0; r < 8; r++) {
      const cols = rows[q + r].split(',');
      if (cols.length !== 7) throw new Error(`CCD query file: row ${q + r + 1} has ${cols.length} columns, not 7`);
      for (let k = 0; k < 3; k++) positions[3 * r + k] = rational(cols[2 * k], cols[2 * k + 1]);
      if (r === 0) collides = cols[6].trim() === '1';
    }
    queries.push({ positions, collides });
  }
  return queries;
}

/**
 * Runs one query through the narrow phase: vertex-face queries as point-triangle CCD, edge-edge ones as edge-edge
 * CCD, with zero minimum separation. Returns the time of impact (NO_CONTACT when none).
 */
export function runCcdQuery(q: CcdQuery, edgeEdge: boolean, options?: CcdOptions, stats?: CcdStats): number {
  const v = (i: number) => q.positions.subarray(3 * i, 3 * i + 3);
  const ccd = edgeEdge ? edgeEdgeCcd : pointTriangleCcd;
  return ccd(v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7), 0, stats, options);
}
