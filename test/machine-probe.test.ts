import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatMachineSpeed, machineSpeed } from '../bench/machine-probe.js';
import { DENSE_KERNEL_KINDS } from '../src/math/dense-kernel.js';

// `npm run bench` prints these before and after its rows; a broken probe would stop the bench before its first row.
test('machine probe: three finite, positive speeds and the dense kernel that ran', () => {
  const speed = machineSpeed();
  for (const value of [speed.denseGflops, speed.svdMillionsPerSecond, speed.memoryGBs]) assert.ok(Number.isFinite(value) && value > 0, `${value}`);
  assert.ok(DENSE_KERNEL_KINDS.includes(speed.denseKernel), speed.denseKernel);
  assert.match(formatMachineSpeed(speed), /GFlop\/s .* M\/s, memory .* GB\/s/);
});
