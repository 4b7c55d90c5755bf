/**
 * A worker thread's side of the element loops: keeps each term's kernel (built from its setup message) and runs
 * the tasks sent to it. Browser-safe; the host's worker entry (Node: sim/thread-worker.ts) feeds it the messages.
 */
import { ELASTIC_TETS_THREAD_KIND, elasticTetsWorker } from '../energies/elastic-tets.js';
import type { ThreadMessage } from './threads.js';

type TaskHandler = (task: ThreadMessage) => void;

/** How each kind of term sets itself up on a worker. */
const setups: Record<string, (setup: ThreadMessage) => TaskHandler> = {
  [ELASTIC_TETS_THREAD_KIND]: elasticTetsWorker,
};

const handlers = new Map<number, TaskHandler>();

/**
 * Handles one message: a setup (no `op`) builds the term's handler, 'release' drops it, anything else is a task
 * for the handler of its term.
 */
export function handleThreadMessage(message: ThreadMessage): void {
  if (message.kind === 'release') {
    handlers.delete(message.id);
    return;
  }
  if (message.op === undefined) {
    const setup = setups[message.kind];
    if (!setup) throw new Error(`thread task: unknown kind of term '${message.kind}'`);
    handlers.set(message.id, setup(message));
    return;
  }
  const handler = handlers.get(message.id);
  if (!handler) throw new Error(`thread task: no term ${message.id} (${message.kind}) was set up on this thread`);
  handler(message);
}
