/**
 * What /api/runs tells the viewer page of each run (src/viewer/run-folders.ts writes it, web/viewer reads it). Pure
 * types: the page imports them too.
 */

/** The parts of summary.json the page uses (the file has more). */
export interface ListedSummary {
  scene?: string;
  integrator?: string;
  stopped?: string | null;
  options?: { h?: number; frameRate?: number };
  effectiveScene?: { obstacles?: { type: string; name?: string; point?: [number, number, number]; normal?: [number, number, number] }[] } | null;
  [key: string]: unknown;
}

export interface RunListing {
  id: string;
  label: string;
  comparison: string | null;
  /** Frames frame_00000.obj ... present without a gap. */
  frames: number;
  /** Size of metrics.csv in bytes (the page fetches only what it has not read). */
  metricsBytes: number;
  /** summary.json is there: the run has ended (finished or stopped). */
  done: boolean;
  /** Seconds between frames, when known (from summary.json); else the page reads frame times or estimates. */
  frameSeconds: number | null;
  summary: ListedSummary | null;
}
