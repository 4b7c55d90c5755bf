/**
 * The viewer's server side and the page's parsers, without a browser: run and compare folders, the HTTP server
 * (files only from inside the run folders, byte ranges, host check), `vivace view` as a process, the OBJ frame and
 * metrics readers, body grouping, and the demo's ball mesh. The browser tests are in browser.test.ts.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.js';
import { formatObj } from '../src/io/mesh-files.js';
import { tetVolume } from '../src/mesh/generators.js';
import { RunCatalog, RunFolderError, listRun } from '../src/viewer/run-folders.js';
import { splitPath, startServer, type RunningServer } from '../src/viewer/server.js';
import { bodyGroups } from '../web/shared/body-groups.js';
import { MetricsSeries } from '../web/shared/metrics.js';
import { parseObjFrame, parseObjPositions } from '../web/shared/obj-frame.js';
import { gridBall } from '../web/demo/scenes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'vivace-viewer-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** A compare folder with two runs of a 2-particle scene, written by the CLI (fast: 0.3 s of the oscillator). */
async function makeCompare(dir: string): Promise<void> {
  const quiet = { write: () => true, isTTY: false };
  const code = await main(['compare', 'oscillator', '--integrators', 'bdf2,a-search', '--duration', '0.3', '--out', dir, '--quiet'], { stdout: quiet, stderr: quiet });
  assert.equal(code, 0);
}

/** GET with the path sent exactly as given (no normalisation of `..` or `%2e`), returning status and body. */
function get(server: RunningServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', fail);
    req.end();
  });
}

const compareDir = join(tmp, 'compare');
const pageDir = join(tmp, 'page');
mkdirSync(pageDir);
writeFileSync(join(pageDir, 'index.html'), '<!doctype html><title>page</title>');
const SECRET = 'secret-outside-the-run-folders';

test('a compare folder opens as its runs in the report\'s order; a run folder as itself; other folders are refused by name', async () => {
  await makeCompare(compareDir);
  const catalog = new RunCatalog([compareDir, join(compareDir, 'a-search')]);
  const runs = catalog.runs();
  assert.deepEqual(runs.map((r) => r.dir.split('/').pop()), ['bdf2', 'a-search'], 'report order, and a folder given twice is one run');
  const listings = runs.map(listRun);
  assert.deepEqual(listings.map((l) => l.label), ['bdf2', 'a-search']);
  for (const l of listings) {
    assert.equal(l.done, true);
    assert.equal(l.frames, 4, '0.3 s at 10 frames per second: frames 0 to 3');
    assert.ok(Math.abs(l.frameSeconds! - 0.1) < 1e-12);
    assert.ok(l.metricsBytes > 0);
  }
  assert.throws(() => new RunCatalog([join(tmp, 'nowhere')]), (e: Error) => e instanceof RunFolderError && /nowhere: no such folder/.test(e.message));
  assert.throws(() => new RunCatalog([pageDir]), (e: Error) => e instanceof RunFolderError && /page: not a run folder/.test(e.message));
});

test('a comparison in progress: runs appear in the listing as their folders appear; an unfinished run is not done', () => {
  const dir = join(tmp, 'growing');
  mkdirSync(join(dir, 'bdf2'), { recursive: true });
  cpSync(join(compareDir, 'bdf2'), join(dir, 'bdf2'), { recursive: true });
  const catalog = new RunCatalog([dir]);
  assert.deepEqual(catalog.runs().map((r) => r.id), ['0']);
  mkdirSync(join(dir, 'a-search', 'frames'), { recursive: true });
  cpSync(join(compareDir, 'a-search', 'metrics.csv'), join(dir, 'a-search', 'metrics.csv'));
  cpSync(join(compareDir, 'a-search', 'frames', 'frame_00000.obj'), join(dir, 'a-search', 'frames', 'frame_00000.obj'));
  const runs = catalog.runs();
  assert.deepEqual(runs.map((r) => r.id), ['0', '1'], 'the first run keeps its id');
  const listing = listRun(runs[1]);
  assert.equal(listing.done, false);
  assert.equal(listing.frames, 1);
  assert.equal(listing.frameSeconds, null);
});

test('the server gives the listing, run files and byte ranges, on 127.0.0.1 only', async () => {
  const server = await startServer({ pageDir, runs: new RunCatalog([compareDir]) });
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const index = await get(server, '/');
    assert.equal(index.status, 200);
    assert.match(index.body, /<title>page<\/title>/);
    const list = JSON.parse((await get(server, '/api/runs')).body) as { id: string; label: string; summary: { integrator: string } }[];
    assert.deepEqual(list.map((r) => [r.id, r.label, r.summary.integrator]), [['0', 'bdf2', 'bdf2'], ['1', 'a-search', 'a-search']]);
    const metrics = readFileSync(join(compareDir, 'a-search', 'metrics.csv'), 'utf8');
    assert.equal((await get(server, '/runs/1/metrics.csv')).body, metrics);
    const tail = await get(server, '/runs/1/metrics.csv', { Range: 'bytes=100-' });
    assert.equal(tail.status, 206);
    assert.equal(tail.body, metrics.slice(100));
    assert.equal((await get(server, '/runs/1/metrics.csv', { Range: `bytes=${metrics.length}-` })).status, 416, 'nothing new');
    const frame = await get(server, '/runs/0/frames/frame_00003.obj');
    assert.equal(frame.body, readFileSync(join(compareDir, 'bdf2', 'frames', 'frame_00003.obj'), 'utf8'));
    assert.equal((await get(server, '/runs/7/metrics.csv')).status, 404);
    assert.equal((await get(server, '/api/runs', { Host: 'attacker.example:80' })).status, 403, 'DNS rebinding: another host name is refused');
    assert.equal((await get(server, '/api/runs', { Host: `localhost:${server.port}` })).status, 200);
  } finally {
    await server.close();
  }
});

test('nothing outside the page and run folders is served: .., encoded, double-encoded, backslashes, NUL, symlinks', async () => {
  const runDir = join(tmp, 'compare', 'bdf2');
  writeFileSync(join(tmp, 'compare', 'secret.txt'), SECRET);
  writeFileSync(join(tmp, 'secret.txt'), SECRET);
  symlinkSync(join(tmp, 'secret.txt'), join(runDir, 'link.txt'));
  symlinkSync(tmp, join(runDir, 'frames', 'up'));
  const server = await startServer({ pageDir, runs: new RunCatalog([compareDir]) });
  const attempts = [
    '/runs/0/../secret.txt',
    '/runs/0/../../secret.txt',
    '/runs/0/%2e%2e/secret.txt',
    '/runs/0/%2E%2E/%2e%2e/secret.txt',
    '/runs/0/..%2fsecret.txt',
    '/runs/0/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/runs/0/frames/..%2f..%2fsecret.txt',
    '/runs/0/%252e%252e/secret.txt',
    '/runs/0/%252e%252e%252fsecret.txt',
    '/runs/0/..%5csecret.txt',
    '/runs/0/..\\..\\secret.txt',
    '/runs/0/%00/../secret.txt',
    '/runs/0/frames/%00',
    '/runs/0//secret.txt',
    '/runs/0/link.txt',
    '/runs/0/frames/up/secret.txt',
    '/runs/..%2f..%2fsecret.txt',
    '/runs/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/%2e%2e/secret.txt',
    '/../secret.txt',
    '//etc/passwd',
    '/%2fetc%2fpasswd',
    '/runs/0/%2fetc%2fpasswd',
    '/runs/0/.%2e/secret.txt',
    '/runs/0/%c0%ae%c0%ae/secret.txt',
  ];
  try {
    for (const path of attempts) {
      const r = await get(server, path);
      assert.ok(r.status === 400 || r.status === 404, `${path}: status ${r.status}`);
      assert.ok(!r.body.includes(SECRET) && !r.body.includes('root:'), `${path} leaked a file`);
    }
  } finally {
    await server.close();
    rmSync(join(runDir, 'link.txt'));
    rmSync(join(runDir, 'frames', 'up'));
  }
  assert.deepEqual(splitPath('/runs/0/frames/frame_00001.obj'), ['runs', '0', 'frames', 'frame_00001.obj']);
  assert.deepEqual(splitPath('/a%20b'), ['a b']);
  for (const bad of ['/a/../b', '/%2e%2e', '/a%2fb', '/a%5cb', '/.hidden', '/a//b', '/%zz', 'relative']) assert.equal(splitPath(bad), null, bad);
});

test('vivace view serves until interrupted, prints its 127.0.0.1 URL, and refuses a folder that is no run', async () => {
  const err: string[] = [];
  const quiet = { write: () => true, isTTY: false };
  assert.equal(await main(['view', join(tmp, 'page')], { stdout: quiet, stderr: { write: (s: string) => err.push(s), isTTY: false } }), 2);
  assert.match(err.join(''), /page: not a run folder/);

  const child = spawn(process.execPath, [join(root, 'bin', 'vivace.js'), 'view', compareDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((done, fail) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) done(m[1]);
    });
    child.on('exit', (code) => fail(new Error(`vivace view exited (${code}) before printing a URL: ${out}`)));
  });
  assert.match(out, /vivace view: 2 runs at http:\/\/127\.0\.0\.1:\d+\//);
  const res = await fetch(`${url}api/runs`);
  assert.equal(((await res.json()) as unknown[]).length, 2);
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  child.kill('SIGINT');
  assert.equal(await exit, 0);
});

test('OBJ frames: vertices, fan-triangulated faces in every index form, o groups and the time comment', () => {
  const text = ['# vivace frame 3, t = 0.25 s', 'o ball', 'v 0 0 0', 'v 1 0 0', 'v 0 1 0', 'v 1 1 0', 'f 1 2 4 3', 'o ground', 'v 5 5 5', 'v 6 5 5', 'v 5 6 5', 'f -3/1 -2//2 -1/3/3', 'v 9 9 9', ''].join('\n');
  const f = parseObjFrame(text);
  assert.equal(f.t, 0.25);
  assert.deepEqual([...f.triangles], [0, 1, 3, 0, 3, 2, 4, 5, 6]);
  assert.deepEqual(f.groups, [{ name: 'ball', firstTriangle: 0, triangleCount: 2 }, { name: 'ground', firstTriangle: 2, triangleCount: 1 }]);
  assert.equal(f.positions.length, 24);
  const moved = parseObjPositions(text.replace('v 1 1 0', 'v 1 2 0'), 8)!;
  assert.equal(moved.t, 0.25);
  assert.deepEqual([...moved.positions.slice(9, 12)], [1, 2, 0]);
  assert.equal(parseObjPositions(text, 7), null, 'another vertex count is refused');
  assert.throws(() => parseObjFrame('v 0 0 0\nf 1 2 3\n', 'x.obj'), /x\.obj: a face refers to vertex 2 of 1/);
  // The frames `vivace run` writes today: no groups, no time; parsed the same as by the writer's own format.
  const plain = formatObj(Float64Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0]), Uint32Array.from([0, 1, 2]));
  const p = parseObjFrame(plain);
  assert.equal(p.t, undefined);
  assert.deepEqual([...p.triangles], [0, 1, 2]);
  assert.deepEqual(p.groups, []);
});

test('bodies: o groups name them; without groups, connected components in vertex order with the scene\'s mesh obstacles last', () => {
  // Two tetrahedra's surfaces (bodies), a separate triangle (the stairs) and a lone vertex (a particle).
  const tet = (o: number) => [o, o + 1, o + 2, o, o + 1, o + 3, o + 1, o + 2, o + 3, o, o + 2, o + 3];
  const triangles = Uint32Array.from([...tet(0), ...tet(4), 8, 9, 10]);
  const g = bodyGroups(12, triangles, [], ['stairs']);
  assert.deepEqual([...g.vertexGroup], [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, -1]);
  assert.deepEqual(g.names, ['body 0', 'body 1', 'stairs']);
  assert.deepEqual(g.obstacle, [false, false, true]);
  assert.deepEqual([...g.particles], [11]);
  // A component whose vertices connect only through a later triangle is still one body.
  const chain = bodyGroups(5, Uint32Array.from([0, 3, 4, 1, 2, 4]), []);
  assert.deepEqual([...chain.vertexGroup], [0, 0, 0, 0, 0]);
  const named = bodyGroups(12, triangles, [{ name: 'a', firstTriangle: 0, triangleCount: 4 }, { name: 'b', firstTriangle: 4, triangleCount: 4 }, { name: 'stairs', firstTriangle: 8, triangleCount: 1 }], ['stairs']);
  assert.deepEqual(named.names, ['a', 'b', 'stairs']);
  assert.deepEqual(named.obstacle, [false, false, true]);
});

test('metrics.csv read in pieces: whole lines only, byte offsets for the next range, empty fields as NaN', () => {
  const csv = readFileSync(join(compareDir, 'a-search', 'metrics.csv'), 'utf8');
  const whole = new MetricsSeries();
  whole.push(csv);
  const pieces = new MetricsSeries();
  // Feed it the way the page does: each request starts at `bytes`, and the server's answer may end mid-line.
  for (let end = 37; pieces.bytes < csv.length; end = Math.min(csv.length, end + 53)) pieces.push(csv.slice(pieces.bytes, end));
  assert.equal(pieces.bytes, Buffer.byteLength(csv));
  assert.equal(whole.length, 4, '0.3 s at h = 0.1: steps 0 to 3');
  assert.deepEqual(pieces.columns, whole.columns);
  assert.ok(Number.isNaN(whole.columns.alpha[0]), 'no alpha at step 0');
  assert.ok(Number.isFinite(whole.columns.alpha[1]));
  assert.ok(!whole.present.has('contact'), 'the oscillator has no contact column');
  assert.equal(whole.rowAt(0.15), 1);
  assert.equal(whole.rowAt(0.2), 2);
  assert.equal(whole.rowAt(99), 3);
  const partial = new MetricsSeries();
  partial.push('step,t,kinetic,potential,total,target,alpha\n0,0,1,2,3,3,\n1,0.1,1');
  assert.equal(partial.length, 1, 'the unfinished line waits');
  assert.throws(() => new MetricsSeries().push('a,b\n1,2\n'), /no t or total column/);
});

test('the demo ball: a box grid mapped onto the ball keeps every tet positive and puts the boundary on the sphere', () => {
  const radius = 0.05;
  const ball = gridBall(radius, 4);
  assert.equal(ball.positions.length / 3, 125);
  assert.equal(ball.tets.length / 4, 384);
  let minVolume = Infinity;
  for (let t = 0; t < ball.tets.length / 4; t++) minVolume = Math.min(minVolume, tetVolume(ball.positions, ball.tets, t));
  assert.ok(minVolume > 0, `smallest tet volume ${minVolume}`);
  let onSphere = 0;
  for (let i = 0; i < ball.positions.length; i += 3) {
    const r = Math.hypot(ball.positions[i], ball.positions[i + 1], ball.positions[i + 2]);
    assert.ok(r <= radius * (1 + 1e-12));
    if (Math.abs(r - radius) < 1e-12) onSphere++;
  }
  assert.equal(onSphere, 125 - 27, 'every grid node on the cube\'s faces lands on the sphere, the 3^3 inner ones inside');
});
