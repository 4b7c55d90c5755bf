/**
 * Entry of a Node worker thread of NodeThreadPool (node-threads.ts): hands each message to the core's
 * handleThreadMessage and, for a task, counts it done in the shared control word the calling thread waits on.
 * An error is written to the shared error buffer (the calling thread throws it after its wait).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { handleThreadMessage } from '../solver/thread-tasks.js';
import type { ThreadMessage } from '../solver/threads.js';

const { control, errorText } = workerData as { control: Int32Array; errorText: Uint8Array };

function recordError(err: unknown): void {
  // Only the first error is kept: claim the slot (0 -> -1), write the text, then publish its length.
  if (Atomics.compareExchange(control, 1, 0, -1) !== 0) return;
  const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
  const bytes = new TextEncoder().encode(text).subarray(0, errorText.length);
  errorText.set(bytes);
  Atomics.store(control, 1, bytes.length);
}

// Loaded: the pool's constructor waits for this.
Atomics.add(control, 2, 1);
Atomics.notify(control, 2);

parentPort!.on('message', ({ counted, message }: { counted: boolean; message: ThreadMessage }) => {
  try {
    handleThreadMessage(message);
  } catch (err) {
    recordError(err);
  } finally {
    if (counted) {
      Atomics.sub(control, 0, 1);
      Atomics.notify(control, 0);
    }
  }
});
