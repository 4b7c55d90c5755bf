/**
 * The fuzz corpus (test/fuzz/manifest.json): malformed and extreme scene files and flags, each answered with the
 * exit code it lists (2 for bad input, 0 or 3 where the input is valid), a message matching its regexp (naming the
 * field, file, flag or primitive), no stack trace, a short message, and nothing written on exit 2.
 *
 * Most cases call the CLI's entry function in a few runner processes (test/fuzz/run-cases.ts, one start-up for many
 * cases); cases marked "process" go through the real program (bin/vivace.js) to check its exit code and stderr.
 * A runner that reports nothing for HANG_MS is killed and its case fails as hung. Large inputs (50 MB) are made at
 * test time into a scratch folder, never committed.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATORS } from './fuzz/generators.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fuzzDir = join(root, 'test', 'fuzz');
const bin = join(root, 'bin', 'vivace.js');
const tmp = mkdtempSync(join(tmpdir(), 'vivace-fuzz-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Two cores: two processes at a time. */
const POOL = 2;
/** A case (or a runner between two cases) silent this long is taken as hung. */
const HANG_MS = 60_000;
/** A message longer than this is not "a message" (it likely repeats the input). */
const MAX_MESSAGE = 8000;

interface FuzzCase {
  id: string;
  category: string;
  /** A scene file relative to test/fuzz, `builtin:<name>`, or `generated:<name>` (made by GENERATORS). */
  scene?: string;
  /** The command (default run); argv is [command, scene, ...args] unless `argv` is given whole. */
  command?: string;
  args?: string[];
  argv?: string[];
  exit: number | number[];
  /** A regexp the output (stderr then stdout) must match. */
  message?: string;
  /** Run through bin/vivace.js as its own process. */
  process?: boolean;
  note?: string;
}

interface Outcome {
  code: number | null;
  out: { text: string; length: number };
  err: { text: string; length: number };
  ms: number;
  /** CPU time of an in-process case. */
  cpuMs?: number;
  hung?: boolean;
}

const manifest = JSON.parse(readFileSync(join(fuzzDir, 'manifest.json'), 'utf8')) as { cases: FuzzCase[] };

/** Every file under dir (relative paths), folders with a trailing slash. */
function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        out.push(`${relative(dir, p)}/`);
        walk(p);
      } else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

/** Case folders: <tmp>/cases/<id>/w/a/b is the working folder, so that a name like ../../x still lands inside. */
function caseRoot(id: string): string {
  return join(tmp, 'cases', id);
}
const WORK = join('w', 'a', 'b');
const EMPTY_CASE = ['w/', 'w/a/', 'w/a/b/'];

function argvOf(c: FuzzCase, generated: Map<string, string>): string[] {
  let scenePath = '';
  if (c.scene?.startsWith('builtin:')) scenePath = c.scene.slice('builtin:'.length);
  else if (c.scene?.startsWith('generated:')) scenePath = generated.get(c.scene.slice('generated:'.length))!;
  else if (c.scene !== undefined) scenePath = join(fuzzDir, c.scene);
  const fill = (s: string) => s.replaceAll('{root}', caseRoot(c.id)).replaceAll('{scene}', scenePath).replaceAll('{fuzz}', fuzzDir);
  if (c.argv) return c.argv.map(fill);
  return [c.command ?? 'run', scenePath, ...(c.args ?? []).map(fill)];
}

/** Runs `node args` in cwd, passing each stdout line to onLine; kills it after HANG_MS without a line. */
function runNode(args: string[], cwd: string, onLine?: (line: string) => void): Promise<{ code: number | null; out: string; err: string; ms: number; hung: boolean }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VIVACE_DEBUG: '' } });
    let out = '';
    let err = '';
    let pending = '';
    let hung = false;
    let timer = setTimeout(kill, HANG_MS);
    function kill() {
      hung = true;
      child.kill('SIGKILL');
    }
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      clearTimeout(timer);
      timer = setTimeout(kill, HANG_MS);
      if (out.length < 1e6) out += s;
      if (!onLine) return;
      pending += s;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      if (err.length < 1e6) err += s;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, ms: performance.now() - t0, hung });
    });
  });
}

/** Runs jobs with at most `limit` at a time. */
async function pool(jobs: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

const STACK_LINE = /^\s+at .*(\(.*:\d+:\d+\)|:\d+:\d+)$|node:internal|^\w*Error: /m;

/** VIVACE_FUZZ=<regexp> runs only the cases whose id matches (to look at a few). */
const only = process.env.VIVACE_FUZZ ? new RegExp(process.env.VIVACE_FUZZ) : undefined;

test('fuzz corpus: every malformed or extreme input gets its exit code and a short message naming the culprit, nothing written on exit 2', async (t) => {
  const cases = manifest.cases.filter((c) => !only || only.test(c.id));
  const ids = new Set<string>();
  for (const c of cases) {
    assert.ok(/^[a-z0-9][a-z0-9.-]*$/.test(c.id), `case id '${c.id}': lowercase letters, digits, '-', '.'`);
    assert.ok(!ids.has(c.id), `case id '${c.id}' is listed twice`);
    ids.add(c.id);
    assert.ok(c.exit !== 1 && !(Array.isArray(c.exit) && c.exit.includes(1)), `${c.id}: exit 1 means a bug; no case may expect it`);
    if (c.message !== undefined) new RegExp(c.message, 'm');
    if (c.scene && !/^(builtin|generated):/.test(c.scene)) statSync(join(fuzzDir, c.scene));
  }
  if (!only) assert.ok(cases.length >= 100, `at least 100 cases (${cases.length})`);

  const genDir = join(tmp, 'generated');
  mkdirSync(genDir);
  const generated = new Map<string, string>();
  for (const c of cases) {
    const name = c.scene?.startsWith('generated:') ? c.scene.slice('generated:'.length) : undefined;
    if (name === undefined || generated.has(name)) continue;
    assert.ok(GENERATORS[name], `${c.id}: no generator '${name}'`);
    generated.set(name, GENERATORS[name](genDir));
  }
  for (const c of cases) mkdirSync(join(caseRoot(c.id), WORK), { recursive: true });
  const corpusBefore = listTree(fuzzDir);

  const outcomes = new Map<string, Outcome>();
  const jobs: (() => Promise<void>)[] = [];
  for (const c of cases.filter((c) => c.process)) {
    jobs.push(async () => {
      const r = await runNode([bin, ...argvOf(c, generated)], join(caseRoot(c.id), WORK));
      const clip = (s: string) => ({ text: s.slice(0, 20000), length: s.length });
      outcomes.set(c.id, { code: r.code, out: clip(r.out), err: clip(r.err), ms: r.ms, hung: r.hung });
    });
  }
  // In-process cases in a few runners; the heavy (generated) ones spread over them.
  const inProcess = cases.filter((c) => !c.process);
  const ordered = [...inProcess.filter((c) => c.scene?.startsWith('generated:')), ...inProcess.filter((c) => !c.scene?.startsWith('generated:'))];
  const chunks: FuzzCase[][] = [[], [], [], []];
  ordered.forEach((c, i) => chunks[i % chunks.length].push(c));
  for (const [k, chunk] of chunks.entries()) {
    jobs.push(async () => {
      const jobFile = join(tmp, `runner-${k}.json`);
      writeFileSync(jobFile, JSON.stringify(chunk.map((c) => ({ id: c.id, argv: argvOf(c, generated), cwd: join(caseRoot(c.id), WORK) }))));
      let running: string | undefined;
      const r = await runNode(['--import', 'tsx', join(fuzzDir, 'run-cases.ts'), jobFile], root, (line) => {
        const msg = JSON.parse(line) as { start?: string; id?: string } & Outcome;
        if (msg.start) running = msg.start;
        else if (msg.id) {
          outcomes.set(msg.id, msg);
          running = undefined;
        }
      });
      if (running) outcomes.set(running, { code: r.code, out: { text: r.out.slice(-2000), length: 0 }, err: { text: r.err.slice(0, 4000), length: 0 }, ms: r.ms, hung: r.hung });
      else if (r.code !== 0) assert.fail(`runner ${k} exited with ${r.code}: ${r.err.slice(0, 4000)}`);
    });
  }
  const t0 = performance.now();
  await pool(jobs, POOL);
  const wall = performance.now() - t0;

  for (const c of cases) {
    await t.test(`${c.category}: ${c.id}`, () => {
      const o = outcomes.get(c.id);
      assert.ok(o, `${c.id}: not run (its runner stopped before it)`);
      const text = `${o.err.text}${o.out.text}`;
      assert.ok(!o.hung, `${c.id}: no answer within ${HANG_MS / 1000} s (killed); output so far: ${text.slice(0, 1000)}`);
      const expected = Array.isArray(c.exit) ? c.exit : [c.exit];
      assert.ok(expected.includes(o.code as number), `${c.id}: exit ${o.code}, expected ${expected.join(' or ')}; output: ${text.slice(0, 2000)}`);
      if (c.message !== undefined) assert.match(text, new RegExp(c.message, 'm'), `${c.id}: message`);
      assert.doesNotMatch(text, STACK_LINE, `${c.id}: no stack trace or raw exception`);
      assert.ok(o.err.length <= MAX_MESSAGE, `${c.id}: message of ${o.err.length} characters (at most ${MAX_MESSAGE})`);
      if (o.code === 2) assert.deepEqual(listTree(caseRoot(c.id)), EMPTY_CASE, `${c.id}: exit 2 writes nothing`);
    });
  }
  assert.deepEqual(listTree(fuzzDir), corpusBefore, 'no case writes into the corpus folder');
  // Timings are reported, never asserted (the machine is shared); the hang guard above is the only limit.
  const cpu = (o: Outcome) => o.cpuMs ?? o.ms;
  const slowest = [...outcomes.entries()].sort((a, b) => cpu(b[1]) - cpu(a[1])).slice(0, 5);
  const inProcessCpu = [...outcomes.values()].reduce((sum, o) => sum + (o.cpuMs ?? 0), 0);
  t.diagnostic(
    `${cases.length} cases (${cases.filter((c) => c.process).length} as processes) in ${(wall / 1000).toFixed(1)} s wall; in-process cases ${(inProcessCpu / 1000).toFixed(1)} CPU s; ` +
      `slowest (CPU s in process, wall s as a process): ${slowest.map(([id, o]) => `${id} ${(cpu(o) / 1000).toFixed(1)}`).join(', ')}`,
  );
});
