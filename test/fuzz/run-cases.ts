/**
 * Runs fuzz-corpus cases through the CLI's entry function, one after another in this process (one start-up for many
 * cases), for test/fuzz-corpus.test.ts. Input: the path of a JSON file [{ id, argv, cwd }]. Output on stdout, one
 * JSON object per line: { start: id } before a case (so that the parent can name a case that hangs), then
 * { id, code, out, err, ms, cpuMs }.
 */

import { readFileSync } from 'node:fs';
import { main } from '../../src/cli/main.js';

interface Job {
  id: string;
  argv: string[];
  cwd: string;
}

/** Keeps the head of a long output (a message that repeats a 50 MB input must still fail the check, not the pipe). */
const KEEP = 20000;

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8')) as Job[];
for (const job of jobs) {
  process.stdout.write(`${JSON.stringify({ start: job.id })}\n`);
  const out: string[] = [];
  const err: string[] = [];
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const code = await main(job.argv, { stdout: { write: (s: string) => out.push(s), isTTY: false }, stderr: { write: (s: string) => err.push(s), isTTY: false } }, job.cwd);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const text = (parts: string[]) => {
    const s = parts.join('');
    return { text: s.slice(0, KEEP), length: s.length };
  };
  process.stdout.write(`${JSON.stringify({ id: job.id, code, out: text(out), err: text(err), ms, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
}
