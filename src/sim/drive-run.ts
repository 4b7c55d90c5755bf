/**
 * Drives simulateSteps' generator asynchronously, so that whatever the caller waits for can happen between steps:
 * Node delivers Ctrl-C, and an AbortSignal is aborted, only while the event loop turns, and a step is synchronous.
 */

import type { RunResult } from './simulate.js';

/** Longest the run computes without letting the event loop turn (ms): a stop request is seen within this of a step's end. */
const TURN_EVERY_MS = 10;

/** setImmediate where there is one (Node); a zero timeout elsewhere (a browser). */
const turn = (): Promise<void> => new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

/**
 * Runs simulateSteps' generator to its end, letting the event loop turn after any step that ends TURN_EVERY_MS or
 * more after the last turn, and stopping the run there once `shouldStop()` is true.
 */
export async function driveRun(steps: Generator<number, RunResult, boolean | undefined>, shouldStop: () => boolean): Promise<RunResult> {
  let next = steps.next();
  let lastTurn = performance.now();
  while (!next.done) {
    if (performance.now() - lastTurn >= TURN_EVERY_MS) {
      await turn();
      lastTurn = performance.now();
    }
    next = steps.next(shouldStop());
  }
  return next.value;
}
