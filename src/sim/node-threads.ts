/**
 * Node's worker threads for the core's element loops (solver/threads.ts): importing this module provides them
 * (the library's and the command line's entry points do). One pool per thread count; its workers start when a term
 * first asks for them (a run of small bodies starts none) and stay for the process (without keeping it alive).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { setThreadPoolProvider, type ThreadMessage, type ThreadPool } from '../solver/threads.js';

/** Room for a worker's error message (with its stack). */
const ERROR_BYTES = 8192;

/** How long a new pool waits for its workers to load before it gives up (ms). */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts a worker on thread-worker next to this module: the compiled .js in a package, the .ts source through tsx's
 * API in a checkout (the parent may run tsx without command-line flags). A failure to load is reported through
 * the shared control words, since the calling thread blocks and would not see the worker's error event.
 */
function startWorker(workerData: { control: Int32Array; errorText: Uint8Array }): Worker {
  const self = import.meta.url;
  // tsx's API loads a module under a URL with a query (?tsx-namespace=...): look at the path alone.
  const ts = new URL(self).pathname.endsWith('.ts');
  const entry = new URL(ts ? './thread-worker.ts' : './thread-worker.js', self).href;
  const load = ts
    ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((api) => api.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(self)}))`
    : `import(${JSON.stringify(entry)})`;
  const boot =
    `const { workerData } = require('node:worker_threads');\n` +
    `${load}.catch((err) => { console.error(err); Atomics.store(workerData.control, 3, 1); Atomics.notify(workerData.control, 2); });`;
  return new Worker(boot, { eval: true, workerData });
}

class NodeThreadPool implements ThreadPool {
  /**
   * [0]: tasks still running; [1]: length of the error text (0: none, -1: being written); [2]: workers loaded;
   * [3]: 1 when a worker failed to load.
   */
  private readonly control = new Int32Array(new SharedArrayBuffer(16));
  private readonly errorText = new Uint8Array(new SharedArrayBuffer(ERROR_BYTES));
  private readonly threads: Worker[] = [];
  /** null until available() first ran; then whether the workers loaded. */
  private started: boolean | null = null;

  constructor(readonly workers: number) {}

  available(): boolean {
    if (this.started === null) {
      try {
        this.startWorkers();
        this.started = true;
      } catch (err) {
        // Threads change no result, only the speed: go on with one thread, and say so once.
        this.started = false;
        process.emitWarning(`vivace: running the element loops on one thread: ${(err as Error).message}`);
      }
    }
    return this.started;
  }

  private startWorkers(): void {
    for (let i = 0; i < this.workers; i++) {
      const worker = startWorker({ control: this.control, errorText: this.errorText });
      worker.unref();
      this.threads.push(worker);
    }
    const deadline = performance.now() + START_TIMEOUT_MS;
    for (;;) {
      const ready = Atomics.load(this.control, 2);
      if (ready === this.workers) break;
      const left = deadline - performance.now();
      if (Atomics.load(this.control, 3) !== 0 || left <= 0) {
        for (const worker of this.threads) void worker.terminate();
        throw new Error(Atomics.load(this.control, 3) !== 0 ? 'a worker thread failed to load (its error is above)' : `worker threads did not load within ${START_TIMEOUT_MS / 1000} s`);
      }
      Atomics.wait(this.control, 2, ready, left);
    }
  }

  sharedFloat64(length: number): Float64Array {
    return new Float64Array(new SharedArrayBuffer(8 * length));
  }

  sharedInt32(length: number): Int32Array {
    return new Int32Array(new SharedArrayBuffer(4 * length));
  }

  sharedUint32(length: number): Uint32Array {
    return new Uint32Array(new SharedArrayBuffer(4 * length));
  }

  broadcast(message: ThreadMessage): void {
    for (const worker of this.threads) worker.postMessage({ counted: false, message });
  }

  start(tasks: readonly ThreadMessage[]): void {
    if (tasks.length > this.workers) throw new Error(`thread pool: ${tasks.length} tasks for ${this.workers} workers`);
    Atomics.store(this.control, 0, tasks.length);
    tasks.forEach((message, i) => this.threads[i].postMessage({ counted: true, message }));
  }

  wait(): void {
    const control = this.control;
    for (;;) {
      const pending = Atomics.load(control, 0);
      if (pending === 0) break;
      Atomics.wait(control, 0, pending);
    }
    let length = Atomics.load(control, 1);
    while (length < 0) length = Atomics.load(control, 1);
    if (length > 0) {
      const text = new TextDecoder().decode(this.errorText.slice(0, length));
      Atomics.store(control, 1, 0);
      throw new Error(`worker thread: ${text}`);
    }
  }
}

const pools = new Map<number, NodeThreadPool>();

setThreadPoolProvider((workers) => {
  let pool = pools.get(workers);
  if (!pool) {
    pool = new NodeThreadPool(workers);
    pools.set(workers, pool);
  }
  return pool;
}, availableParallelism);
