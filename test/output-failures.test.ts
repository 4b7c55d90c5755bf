/**
 * Output folders that cannot be written: refused before anything is written (exit 2: a path under /proc or a file,
 * a full disk), a start that fails anyway leaves nothing behind, and a disk that fills up mid-run names the file
 * and keeps what was written (exit 1). The full-disk cases mount a small tmpfs in a private mount namespace
 * (`unshare -m`, root only): it vanishes with the process; they are skipped where that is not allowed.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.js';
import { checkOutputDir, makeDirs, MIN_FREE_BYTES, OutputDirError } from '../src/io/output-dir.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'vivace.js');
const tmp = mkdtempSync(join(tmpdir(), 'vivace-outfail-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const code = await main(argv, { stdout: { write: () => true, isTTY: false }, stderr: { write: (s: string) => err.push(s), isTTY: false } }, tmp);
  return { code, err: err.join('') };
}

test('checkOutputDir refuses /proc, /sys and paths under a file, creating nothing; makeDirs fails at once there (no spinning)', () => {
  const file = join(tmp, 'a-file');
  writeFileSync(file, 'x');
  const refuses = (dir: string, pattern: RegExp) => assert.throws(() => checkOutputDir(dir), (e: Error) => e instanceof OutputDirError && pattern.test(e.message), dir);
  refuses('/proc/vivace-test/out', /cannot create \/proc\/vivace-test\/out: \/proc is on the proc file system/);
  refuses('/sys/vivace-test', /\/sys is on the sysfs file system/);
  refuses(join(file, 'sub', 'dir'), /cannot create .*a-file\/sub\/dir: .*a-file is a file, not a folder/);
  refuses(file, /a-file exists and is a file, not a folder/);
  const fresh = join(tmp, 'new', 'nested', 'out');
  checkOutputDir(fresh);
  assert.equal(existsSync(join(tmp, 'new')), false, 'the check creates nothing');
  // Node's recursive mkdir loops forever on this path; ours stops at the first level it cannot create.
  assert.throws(() => makeDirs('/proc/vivace-test/a/b'), /cannot create the folder \/proc\/vivace-test: no such file or folder \(ENOENT\)/);
  assert.deepEqual(makeDirs(fresh), [join(tmp, 'new'), join(tmp, 'new', 'nested'), fresh]);
  assert.deepEqual(makeDirs(fresh), [], 'an existing folder is left as it is');
});

const ENOSPC = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** Runs the CLI with fs.writeSync replaced by `fake` (given the real one), as every module importing it sees it. */
async function cliWithWriteSync(fake: (real: typeof fs.writeSync) => typeof fs.writeSync, ...argv: string[]) {
  const real = fs.writeSync;
  fs.writeSync = fake(real);
  syncBuiltinESMExports();
  try {
    return await cli(...argv);
  } finally {
    fs.writeSync = real;
    syncBuiltinESMExports();
  }
}

test('a start that cannot write metrics.csv (the disk filled up after the check) exits 2 and leaves no folder behind', async () => {
  const out = join(tmp, 'start-fails', 'out');
  const failing = (() => {
    throw ENOSPC();
  }) as typeof fs.writeSync;
  const r = await cliWithWriteSync(() => failing, 'run', 'oscillator', '--duration', '0.2', '--out', out);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /cannot write \S*start-fails\/out\/metrics\.csv: no space left on the device \(ENOSPC\)/);
  assert.equal(existsSync(join(tmp, 'start-fails')), false, 'the folders the run created are removed again');
});

test('metrics.csv that cannot be written to the end (a short write, then ENOSPC): exit 1 naming it, cut back to whole rows', async () => {
  const out = join(tmp, 'short-write');
  let calls = 0;
  let metricsFd: number | undefined;
  // metrics.csv (the first file written): the header goes through; the rows' chunk (step 0's row, flushed before
  // the first frame) is written in part, then the disk is full. Other files (frames) are written as usual.
  const shortThenFull = (real: typeof fs.writeSync) =>
    ((fd: number, buffer: Uint8Array, offset?: number, length?: number, ...rest: unknown[]) => {
      metricsFd ??= fd;
      if (fd !== metricsFd) return (real as (...a: unknown[]) => number)(fd, buffer, offset, length, ...rest);
      calls++;
      if (calls === 1) return real(fd, buffer, offset, length);
      if (calls === 2) return real(fd, buffer, offset, Math.floor((length ?? buffer.length) / 2));
      throw ENOSPC();
    }) as typeof fs.writeSync;
  const r = await cliWithWriteSync(shortThenFull, 'run', 'oscillator', '--duration', '1', '--out', out);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /cannot write \S*short-write\/metrics\.csv: no space left on the device \(ENOSPC\); the run stopped after step 0: .*metrics\.csv keeps only its header, frames\/ 0 frames/);
  assert.ok(calls >= 3, 'the short write was followed by another try');
  const metrics = readFileSync(join(out, 'metrics.csv'), 'utf8');
  assert.equal(metrics.split('\n').length, 2, 'the header and nothing of the half-written rows');
  assert.ok(metrics.startsWith('step,t,') && metrics.endsWith('\n'));
});

/** Runs `script` (sh) in a private mount namespace with a tmpfs of `size` at `mnt`; null when that is not allowed. */
function inTmpfs(mnt: string, size: string, script: string): { status: number | null; out: string; err: string } | null {
  mkdirSync(mnt, { recursive: true });
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o size=${size} tmpfs '${mnt}'`], { encoding: 'utf8' });
  if (probe.status !== 0) return null;
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o size=${size} tmpfs '${mnt}' && ${script}`], {
    encoding: 'utf8',
    cwd: tmp,
    timeout: 120_000,
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

test('a disk already full at the start: exit 2, the message names the folder, nothing is written', (t) => {
  const mnt = join(tmp, 'full');
  // Fill the tmpfs, run, then list what is on it.
  const r = inTmpfs(mnt, '256k', `dd if=/dev/zero of='${mnt}/fill' bs=4k 2>/dev/null; node '${bin}' run oscillator --out '${mnt}/o' --quiet; echo "exit=$?"; ls -A '${mnt}'`);
  if (!r) return t.skip('cannot mount a tmpfs here (needs root and unshare)');
  assert.match(r.out, /exit=2/, r.err);
  assert.match(r.err, new RegExp(`--out: cannot create ${mnt}/o: ${mnt}: no space left on the device \\(\\d+ bytes free, a run needs at least ${MIN_FREE_BYTES}\\)`));
  assert.deepEqual(r.out.split('\n').slice(1).filter(Boolean), ['fill'], 'only the filler is on the disk');
});

test('a disk that fills up mid-run: exit 1, the message names the file, the outputs so far are kept in whole rows', (t) => {
  const mnt = join(tmp, 'filling');
  const kept = join(tmp, 'kept');
  const scene = join(tmp, 'fall.json');
  // A falling 8^3-cell box with a frame every step: about 25 kB per frame, so 1.5 MB fill up within the second.
  writeFileSync(scene, JSON.stringify({ name: 'fall', duration: 1, dt: 0.01, frameRate: 100, bodies: [{ name: 'b', mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [8, 8, 8] }, material: { youngsModulus: 1e5 } }] }));
  const r = inTmpfs(mnt, '1500k', `node '${bin}' run '${scene}' --out '${mnt}/o' --quiet; echo "exit=$?"; cp -r '${mnt}/o' '${kept}'`);
  if (!r) return t.skip('cannot mount a tmpfs here (needs root and unshare)');
  assert.match(r.out, /exit=1/, r.err);
  const m = new RegExp(`cannot write ${mnt}/o/(\\S+): no space left on the device \\(ENOSPC\\); the run stopped after step (\\d+): the outputs written so far stay in ${mnt}/o \\(metrics\\.csv keeps steps 0 to (\\d+), frames/ (\\d+) frames\\)`).exec(r.err);
  assert.ok(m, r.err);
  assert.doesNotMatch(r.err, /^\s+at /m, 'no stack trace');
  const [, , stopped, lastRow, frames] = m.map(Number);
  const metrics = readFileSync(join(kept, 'metrics.csv'), 'utf8');
  assert.ok(metrics.endsWith('\n'), 'metrics.csv ends with a whole row');
  const rows = metrics.trimEnd().split('\n').slice(1);
  assert.equal(rows.length, lastRow + 1, 'the rows the message says are kept');
  assert.deepEqual(rows.map((row) => Number(row.split(',')[0])), rows.map((_, i) => i), 'steps 0, 1, 2, ... in order');
  assert.ok(lastRow <= stopped && stopped < 100, `stopped at step ${stopped} of 100`);
  assert.equal(readdirSync(join(kept, 'frames')).filter((f) => f.endsWith('.obj')).length, frames);
  assert.equal(existsSync(join(kept, 'summary.json')), false, 'no summary: the run did not finish');
});
