/**
 * The package as a user gets it: `npm pack` of a copy of this checkout (its `prepare` builds dist/ there, so the test
 * neither reads nor races the checkout's own dist/), the tarball's file list, `npm install <tarball>` into an empty
 * folder (from npm's cache when it has the dependencies: `npm ci` put them there), then with plain `node`: the
 * README's Library example verbatim, the `exports` map, the command, and the type declarations under tsc.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '../src/core.js';
import * as vivace from '../src/index.js';
import { runScene } from '../src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'vivace-package-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };

/** The npm that runs this test (npm test), else the one on the PATH. */
const npmCommand: string[] = /npm-cli\.[cm]?js$/.test(process.env.npm_execpath ?? '') ? [process.execPath, process.env.npm_execpath!] : ['npm'];

/** The environment without what `npm test` sets for its own package (a nested npm would take it for the project). */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_config_call$|npm_command$|INIT_CWD$)/.test(k)),
);

function run(command: string[], cwd: string): SpawnSyncReturns<string> & { seconds: number } {
  const start = performance.now();
  const r = spawnSync(command[0], command.slice(1), { cwd, env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  return Object.assign(r, { seconds: (performance.now() - start) / 1000 });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} failed (exit ${r.status}${r.error ? `, ${r.error.message}` : ''}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const npm = (args: string[], cwd: string) => run([...npmCommand, ...args], cwd);
const noNpm = npm(['--version'], tmp).status !== 0;

/** Every file under dir (relative paths; Node 20 before 20.12 names the folder `path`, not `parentPath`). */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[]).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)));
}

/**
 * True when the checkout's compiled library (dist/ outside dist/web, `npm run build:lib`) has one module per source
 * of src/ and every module is newer than every source and tsconfig.
 */
function libBuildIsFresh(): boolean {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'index.js'))) return false;
  const sources = filesUnder(join(root, 'src')).filter((f) => f.endsWith('.ts'));
  const modules = filesUnder(dist).filter((f) => f.endsWith('.js') && !f.startsWith(`web${sep}`));
  if (sources.map((f) => f.replace(/\.ts$/, '.js')).sort().join() !== modules.sort().join()) return false;
  const newestInput = Math.max(...sources.map((f) => statSync(join(root, 'src', f)).mtimeMs), ...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(root, f)).mtimeMs));
  const outputs = filesUnder(dist).filter((f) => !f.startsWith(`web${sep}`));
  return outputs.every((f) => statSync(join(dist, f)).mtimeMs >= newestInput);
}

/** The first ```js block of the README's Library section, verbatim. */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Library\n');
  assert.ok(start >= 0, 'README has a ## Library section');
  const block = /\n```js\n([\s\S]*?)\n```\n/.exec(readme.slice(start));
  assert.ok(block, 'the Library section has a ```js block');
  return `${block[1]}\n`;
}

/** Relative module paths reachable from a compiled module, and every other specifier they import. */
function importGraph(entry: string): { modules: string[]; external: string[] } {
  const seen = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*'([^']+)'|import\('([^']+)'\)/g)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith('.')) visit(join(dirname(file), spec));
      else external.add(spec);
    }
  };
  visit(entry);
  return { modules: [...seen], external: [...external].sort() };
}

test('npm pack, npm install <tarball>, then the README example, the exports, the command and the types from the installed package', { skip: noNpm && 'npm is not on the PATH' }, async (t) => {
  // A copy of the checkout (what a git clone has), built by npm pack's own prepare.
  const stage = join(tmp, 'checkout');
  mkdirSync(stage);
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.') || ['node_modules', 'dist', 'out'].includes(entry)) continue; // .git, .tmp, ...: not packed
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
  // The compiled library takes tsc some 12 CPU seconds: when the checkout's build is up to date (as after `npm ci`,
  // whose prepare built it), its copy saves them and only the pages are built; else npm pack's prepare builds all.
  const fresh = libBuildIsFresh();
  if (fresh) {
    cpSync(join(root, 'dist'), join(stage, 'dist'), { recursive: true, filter: (src) => src !== join(root, 'dist', 'web') });
    ok(npm(['run', 'build:viewer'], stage), 'npm run build:viewer');
  }
  const packed = npm(['pack', '--json', '--pack-destination', tmp, ...(fresh ? ['--ignore-scripts'] : [])], stage);
  const packOut = ok(packed, 'npm pack');
  const [info] = JSON.parse(packOut.slice(packOut.search(/^\[/m))) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
  const files = info.files.map((f) => f.path);
  t.diagnostic(`npm pack (${fresh ? "the checkout's dist/ was up to date" : 'prepare built dist/'}): ${packed.seconds.toFixed(1)} s; ${info.entryCount} files, ${(info.size / 2 ** 20).toFixed(2)} MiB packed, ${(info.unpackedSize / 2 ** 20).toFixed(2)} MiB unpacked`);

  // What ships: the compiled library with its declarations, the pages, the command, the scenes and their meshes.
  for (const f of ['package.json', 'README.md', 'bin/vivace.js', 'dist/index.js', 'dist/index.d.ts', 'dist/core.js', 'dist/core.d.ts', 'dist/cli/main.js', 'dist/web/viewer/index.html', 'dist/web/demo/worker.js', 'scenes/oscillator.json']) {
    assert.ok(files.includes(f), `${f} is in the package`);
  }
  for (const f of readdirSync(join(root, 'data', 'meshes'))) assert.ok(files.includes(`data/meshes/${f}`), `data/meshes/${f} is in the package`);
  for (const f of readdirSync(join(root, 'scenes'))) assert.ok(files.includes(`scenes/${f}`), `scenes/${f} is in the package`);
  // What does not: tests and their data, sources, benchmarks, scripts, docs.
  assert.deepEqual(
    files.filter((f) => /^(test|src|web|bench|scripts|docs)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')) || /\.test\./.test(f)),
    [],
  );

  // An empty folder (a package.json without "type", as npm leaves one), the package installed as a user would.
  const app = join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "vivace-example", "private": true }\n');
  const installed = npm(['install', join(tmp, info.filename), '--prefer-offline', '--no-audit', '--no-fund'], app);
  ok(installed, 'npm install <tarball>');
  t.diagnostic(`npm install <tarball> --prefer-offline: ${installed.seconds.toFixed(1)} s`);
  const modules = join(app, 'node_modules');
  assert.ok(existsSync(join(modules, 'vivace', 'dist', 'index.js')));
  // The compiled package needs none of the build tools at run time.
  for (const tool of ['tsx', 'typescript', 'esbuild']) assert.ok(!existsSync(join(modules, tool)), `${tool} was installed with the package`);

  // The README's example, verbatim, with plain node.
  writeFileSync(join(app, 'example.mjs'), readmeExample());
  const example = run([process.execPath, 'example.mjs'], app);
  const out = ok(example, 'node example.mjs');
  t.diagnostic(`node example.mjs: ${example.seconds.toFixed(1)} s`);
  const jsonStart = out.search(/^\{/m);
  assert.ok(jsonStart > 0, `progress lines, then the summary:\n${out}`);
  assert.ok(out.slice(0, jsonStart).trim().split('\n').every((line) => line.startsWith('t = ')), out);
  const summary = JSON.parse(out.slice(jsonStart));
  assert.equal(summary.steps, Math.round(summary.duration / summary.h));
  assert.equal(summary.stopped, undefined);
  // The same numbers as the sources compute.
  const fromSources = await runScene(summary.scene, { integrator: summary.integrator, dt: summary.h, duration: summary.duration });
  for (const k of ['initialEnergy', 'finalEnergy', 'minEnergy', 'maxEnergy', 'energyKept', 'newtonIterations', 'linearIterations'] as const) {
    assert.equal(summary[k], fromSources.summary[k], k);
  }

  // The exports map: both entries, the package.json, and nothing deeper; vivace/core never reaches a node: module.
  writeFileSync(
    join(app, 'exports.mjs'),
    `import * as vivace from 'vivace';
import * as core from 'vivace/core';
import { createRequire } from 'node:module';
let deep;
try {
  await import('vivace/dist/index.js');
  deep = 'imported';
} catch (err) {
  deep = err.code;
}
const version = createRequire(import.meta.url)('vivace/package.json').version;
console.log(JSON.stringify({ main: Object.keys(vivace).sort(), core: Object.keys(core).sort(), deep, version, resolved: import.meta.resolve('vivace'), coreResolved: import.meta.resolve('vivace/core') }));
`,
  );
  const exported = JSON.parse(ok(run([process.execPath, 'exports.mjs'], app), 'node exports.mjs'));
  assert.deepEqual(exported.main, Object.keys(vivace).sort());
  assert.deepEqual(exported.core, Object.keys(core).sort());
  assert.equal(exported.deep, 'ERR_PACKAGE_PATH_NOT_EXPORTED');
  assert.equal(exported.version, pkg.version);
  assert.equal(fileURLToPath(exported.resolved), join(modules, 'vivace', 'dist', 'index.js'));
  assert.equal(fileURLToPath(exported.coreResolved), join(modules, 'vivace', 'dist', 'core.js'));
  const coreGraph = importGraph(join(modules, 'vivace', 'dist', 'core.js'));
  assert.ok(coreGraph.modules.some((f) => f.endsWith(join('sim', 'simulate.js'))), 'the import graph was followed');
  assert.deepEqual(coreGraph.external, ['zod']);

  // The command, from the compiled JavaScript (no src/ in the package, no tsx installed): a run with all its outputs.
  const bin = join(modules, '.bin', 'vivace');
  assert.equal(ok(run([bin, '--version'], app), 'vivace --version').trim(), pkg.version);
  assert.match(ok(run([bin, 'scenes'], app), 'vivace scenes'), /^oscillator /m);
  ok(run([bin, 'run', 'oscillator', '--duration', '1', '--out', 'osc', '--quiet'], app), 'vivace run oscillator');
  for (const f of ['metrics.csv', 'summary.json', 'energy.svg', 'frames/frame_00010.obj']) assert.ok(existsSync(join(app, 'osc', f)), `vivace run wrote ${f}`);

  // The declarations under tsc: a Node consumer of both entries (with @types/node, as a Node project has), and a
  // consumer of vivace/core with neither Node's nor the DOM's types. The @ts-expect-error lines fail if the types
  // were `any`.
  writeFileSync(
    join(app, 'node-consumer.ts'),
    `import { loadScene, runScene, type SceneRunWithOutputs, type StepRecord } from 'vivace';
import { simulateScene, type SceneRun } from 'vivace/core';
export const run: Promise<SceneRunWithOutputs> = runScene('oscillator', { dt: 0.05, onStep: (r: StepRecord) => r.step < 10 });
export const direct: SceneRun = simulateScene(loadScene('oscillator').scene);
// @ts-expect-error: no such option
void runScene('oscillator', { timeStep: 0.05 });
// @ts-expect-error: energies are numbers
export const wrong: string = direct.summary.energyKept;
`,
  );
  writeFileSync(
    join(app, 'browser-consumer.ts'),
    `import { simulateScene, validateScene, type StepRecord } from 'vivace/core';
const scene = validateScene({ name: 'drop', duration: 0.1, dt: 0.01, bodies: [{ mesh: { type: 'box', size: [0.1, 0.1, 0.1], cells: [1, 1, 1] }, material: { youngsModulus: 1e5 } }] });
export const totals: number[] = simulateScene(scene, { onStep: (r: StepRecord) => r.step < 5 }).metrics.map((r) => r.total);
// @ts-expect-error: vivace/core has no runScene
export { runScene } from 'vivace/core';
`,
  );
  const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext' };
  writeFileSync(join(app, 'tsconfig.node.json'), JSON.stringify({ files: ['node-consumer.ts'], compilerOptions: { ...compilerOptions, typeRoots: [join(root, 'node_modules', '@types')], types: ['node'] } }));
  writeFileSync(join(app, 'tsconfig.browser.json'), JSON.stringify({ files: ['browser-consumer.ts'], compilerOptions: { ...compilerOptions, lib: ['es2022'], types: [] } }));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const nodeTypes = run([process.execPath, tsc, '-p', 'tsconfig.node.json'], app);
  ok(nodeTypes, 'tsc on a Node consumer');
  const browserTypes = run([process.execPath, tsc, '-p', 'tsconfig.browser.json'], app);
  ok(browserTypes, 'tsc on a browser consumer of vivace/core');
  t.diagnostic(`tsc on the two consumers: ${(nodeTypes.seconds + browserTypes.seconds).toFixed(1)} s`);
});
