/**
 * Builds the browser pages into dist/web/ with esbuild (`npm run build:viewer`; `npm install` runs it through
 * `prepare`, and `npm pack` ships the result):
 *
 *   dist/web/viewer/  index.html, viewer.js, viewer.css   the run viewer that `vivace view` and `vivace render` serve
 *   dist/web/demo/    index.html, demo.js, demo.css, worker.js   the in-browser simulator (`vivace demo`, or any static host)
 *
 * three.js, uPlot and the simulation core are bundled in; nothing is fetched at run time.
 */

import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const WEB_OUT = join(root, 'dist', 'web');

const common: BuildOptions = {
  bundle: true,
  minify: true,
  target: ['es2022', 'chrome100', 'firefox110', 'safari16'],
  legalComments: 'eof',
  logLevel: 'warning',
  absWorkingDir: root,
};

export async function buildWeb(): Promise<void> {
  rmSync(WEB_OUT, { recursive: true, force: true });
  await build({ ...common, entryPoints: { 'viewer/viewer': 'web/viewer/main.ts', 'demo/demo': 'web/demo/main.ts' }, format: 'esm', outdir: WEB_OUT });
  // A classic worker script: module workers are newer in some browsers, and the worker imports nothing at run time.
  await build({ ...common, entryPoints: { 'demo/worker': 'web/demo/worker.ts' }, format: 'iife', outdir: WEB_OUT });
  for (const page of ['viewer', 'demo']) {
    mkdirSync(join(WEB_OUT, page), { recursive: true });
    copyFileSync(join(root, 'web', page, 'index.html'), join(WEB_OUT, page, 'index.html'));
  }
}

const invokedDirectly = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly) {
  const start = performance.now();
  await buildWeb();
  const size = (f: string) => `${(statSync(join(WEB_OUT, f)).size / 1024).toFixed(0)} KiB`;
  console.log(`built dist/web in ${((performance.now() - start) / 1000).toFixed(2)} s: viewer.js ${size('viewer/viewer.js')}, demo.js ${size('demo/demo.js')}, worker.js ${size('demo/worker.js')}`);
}
