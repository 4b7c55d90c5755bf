import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const runScript = fileURLToPath(new URL('../bench/run.ts', import.meta.url));

/** `npm run bench -- ARGS` for arguments that must not start a benchmark. */
function bench(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', runScript, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('npm run bench: --help lists the options and the scenes, and runs nothing', () => {
  const r = bench('--help');
  assert.equal(r.status, 0, r.stderr);
  for (const option of ['--contact', '--only', '--integrator', '--linear', '--json', '--checkpoint-dir']) assert.match(r.stdout, new RegExp(option));
  assert.match(r.stdout, /bunny-stairs-tau2/);
  assert.doesNotMatch(r.stdout, /machine at the start/);
});

test('npm run bench: an unknown option, scene, integrator or solver, or no row selected, is an error naming it, exit 2, before any run', () => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /--bogus/],
    [['--only', 'rotating-cube-soft,nope'], /--only: no bench row for nope/],
    [['--integrator', 'euler'], /--integrator: no bench row for euler/],
    [['--linear', 'cholmod'], /--linear: unknown solver cholmod/],
    [['--only'], /--only/],
    [['--only', 'vibrating-membrane', '--integrator', 'bdf2'], /no bench row is vibrating-membrane with bdf2/],
  ];
  for (const [args, message] of cases) {
    const r = bench(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '', `${args.join(' ')} printed ${r.stdout}`);
  }
});
