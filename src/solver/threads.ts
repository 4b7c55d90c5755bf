/**
 * Worker threads for element loops. The core never starts threads itself (it runs in a browser): the host provides
 * a ThreadPool (Node: sim/node-threads.ts, on worker_threads) through setThreadPoolProvider, and without one
 * everything runs on the calling thread. The simulation is synchronous, so the calling thread posts tasks, works on
 * its own share, then blocks until the workers are done.
 *
 * Results do not depend on the number of threads, to the bit: threads only compute per-element values into
 * shared buffers, and the calling thread sums and scatters them in element order, as one thread does.
 */

/** Threads an element loop uses when the scene does not say (`solver.threads`): both cores of a 2-core machine. */
export const DEFAULT_THREADS = 2;
/** Most threads `solver.threads` accepts. */
export const MAX_THREADS = 64;

/** A message to the workers: the setup of a term (its shared buffers), a task on it, or its release. */
export interface ThreadMessage {
  /** 'release', or the kind of term, whose setup or task this is (thread-tasks.ts dispatches on it). */
  kind: string;
  /** The term, unique in the process (newThreadTermId). */
  id: number;
  /** A task's operation; absent for a setup. */
  op?: string;
  [field: string]: unknown;
}

export interface ThreadPool {
  /** Worker threads; the calling thread works besides them. */
  readonly workers: number;
  /**
   * Starts the workers when they are not yet running; false when they cannot start (the host says why once), and
   * then the caller stays on one thread. Call before anything else but shared memory.
   */
  available(): boolean;
  /** Memory the workers see (a SharedArrayBuffer). */
  sharedFloat64(length: number): Float64Array;
  sharedInt32(length: number): Int32Array;
  sharedUint32(length: number): Uint32Array;
  /** Sends a setup or release message to every worker; messages reach each worker in the order sent. */
  broadcast(message: ThreadMessage): void;
  /** Posts tasks[i] to worker i (at most `workers` tasks) and returns at once. */
  start(tasks: readonly ThreadMessage[]): void;
  /** Blocks until every started task is done; throws a worker's error. */
  wait(): void;
}

/** A pool of `workers` worker threads, not yet started (the host's; cached by the host); null when it has none. */
export type ThreadPoolProvider = (workers: number) => ThreadPool | null;

let provider: ThreadPoolProvider | null = null;
let hostCpus: () => number = () => Infinity;

/**
 * Called once by the host (Node's entry points) to make threads available; `cpus` tells how many CPUs the process
 * may run on now (its affinity: `taskset`, a cpuset).
 */
export function setThreadPoolProvider(next: ThreadPoolProvider | null, cpus: () => number = () => Infinity): void {
  provider = next;
  hostCpus = cpus;
}

/**
 * The threads a run uses for `solver.threads`: no more than the CPUs the process may run on, since threads beyond
 * them only take turns on the same cores. (The bunny stairs pinned to one core: the same CPU time on one thread as
 * on two within the machine's noise, and 348 instead of 394 MiB at peak without the worker's shared buffers.)
 */
export function usableThreads(requested: number): number {
  return Math.max(1, Math.min(requested, Math.floor(hostCpus())));
}

/** A pool for `threads` threads in all (the caller included), or null for one thread or when no host provides one. */
export function threadPoolFor(threads: number): ThreadPool | null {
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`solver.threads must be a positive integer (got ${threads})`);
  if (threads === 1 || provider === null) return null;
  return provider(threads - 1);
}

let lastTermId = 0;

/** A process-unique id for a term's buffers on the workers. */
export function newThreadTermId(): number {
  return ++lastTermId;
}

/**
 * Splits [0, count) into `parts` contiguous ranges of nearly equal length; range i is [bounds(i), bounds(i + 1)).
 */
export function rangeBound(count: number, parts: number, i: number): number {
  return Math.floor((count * i) / parts);
}
