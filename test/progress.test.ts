import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProgress } from '../src/cli/progress.js';
import type { StepRecord } from '../src/sim/records.js';

function record(step: number): StepRecord {
  return { step, t: step / 100, total: 1 } as StepRecord;
}

/** The seconds of the line's "elapsed" and "ETA" fields. */
function times(line: string): { elapsed: number; eta: number } {
  const m = /elapsed ([\d.]+) s, ETA ([\d.]+) s/.exec(line);
  assert.ok(m, `no elapsed / ETA in: ${line}`);
  return { elapsed: Number(m[1]), eta: Number(m[2]) };
}

test('progress lines: the ETA of a resumed run counts only the steps this process made', async () => {
  const lines: string[] = [];
  const sink = { write: (text: string) => lines.push(text) };
  // resumed after step 80 of 100: 10 steps take the elapsed time, so 10 more take about as long again
  const progress = createProgress(sink, { label: 'resumed', totalSteps: 100, duration: 1, startStep: 80 });
  await sleep(600); // lines start after half a second
  progress.update(record(81)); // still in the 80 % decile the run started in: no line
  assert.equal(lines.length, 0);
  progress.update(record(90));
  assert.equal(lines.length, 1);
  assert.match(lines[0], /step 90\/100 \(90%\)/);
  const { elapsed, eta } = times(lines[0]);
  assert.ok(Math.abs(eta - elapsed) <= 0.11, `ETA ${eta} s should be about the elapsed ${elapsed} s`);
});

test('progress lines: a fresh run estimates from all its steps', async () => {
  const lines: string[] = [];
  const progress = createProgress({ write: (text: string) => lines.push(text) }, { label: 'fresh', totalSteps: 100, duration: 1 });
  await sleep(600);
  progress.update(record(25));
  assert.equal(lines.length, 1);
  const { elapsed, eta } = times(lines[0]);
  assert.ok(Math.abs(eta - 3 * elapsed) <= 0.31, `ETA ${eta} s should be about three times the elapsed ${elapsed} s`);
});

test('progress bar: a resumed run starts at its checkpoint step', () => {
  let text = '';
  const sink = { write: (chunk: string) => (text += chunk), isTTY: true, columns: 200, cursorTo() {}, clearLine() {}, moveCursor() {} };
  const progress = createProgress(sink, { label: 'bar', totalSteps: 360, duration: 3, startStep: 289 });
  progress.stop();
  assert.match(text, /289\/360 steps/);
});
