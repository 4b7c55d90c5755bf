/**
 * The command-line run selection both 1D-collision analyses share (--quick, --steps, --cases, --integrators, --block):
 * the parseArgs options, and the selection with a bad flag reported and exit code 2.
 */
import type { ParseArgsConfig } from 'node:util';
import { commaList, selectCollision1dRuns } from '../src/analysis/collision-1d.js';

export const runSelectionOptions = {
  quick: { type: 'boolean', default: false },
  steps: { type: 'string' },
  cases: { type: 'string' },
  integrators: { type: 'string' },
  /** Run the 3D block variants (collision-1d-block-*) instead of the chains. */
  block: { type: 'boolean', default: false },
} as const satisfies ParseArgsConfig['options'];

export function selectRunsOrExit(
  command: string,
  values: { quick?: boolean; steps?: string; cases?: string; integrators?: string },
  defaultIntegrators: readonly string[],
): ReturnType<typeof selectCollision1dRuns> & { integrators: string[] } {
  try {
    return { ...selectCollision1dRuns(values), integrators: commaList(values.integrators) ?? [...defaultIntegrators] };
  } catch (err) {
    console.error(`${command}: ${(err as Error).message}`);
    process.exit(2);
  }
}
