/**
 * Ctrl-C (SIGINT) and SIGTERM during a run. Node delivers a signal to its handler only when the event loop runs,
 * and simulate()'s steps are synchronous, so the CLI drives the run step by step (simulateSteps) and lets the loop
 * turn between steps (driveRun, sim/drive-run.ts): the first signal then ends the run after the step in progress,
 * with its outputs, summary (`stopped: "interrupted"`) and, when checkpointing, a checkpoint; a second one quits at
 * once (the signal's default action, writing nothing more).
 */

import { constants } from 'node:os';

const WATCHED = ['SIGINT', 'SIGTERM'] as const;
type WatchedSignal = (typeof WATCHED)[number];

/** Exit code of a run ended by a signal: 128 + its number, as shells report it (130 for SIGINT, 143 for SIGTERM). */
export function signalExitCode(signal: WatchedSignal): number {
  return 128 + constants.signals[signal];
}

export interface StopWatch {
  /** The first signal received, or null. */
  readonly signal: WatchedSignal | null;
  /** Removes the handlers (signals take their default action again). */
  dispose(): void;
}

/** Listens for SIGINT and SIGTERM until disposed; `onFirst` says what will happen (called from the event loop). */
export function watchStopSignals(onFirst: (signal: WatchedSignal) => void = () => {}): StopWatch {
  let received: WatchedSignal | null = null;
  const handler = (signal: WatchedSignal): void => {
    if (received !== null) {
      dispose();
      process.kill(process.pid, signal);
      return;
    }
    received = signal;
    onFirst(signal);
  };
  const dispose = (): void => {
    for (const s of WATCHED) process.off(s, handler);
  };
  for (const s of WATCHED) process.on(s, handler);
  return {
    get signal() {
      return received;
    },
    dispose,
  };
}

export { driveRun } from '../sim/drive-run.js';
