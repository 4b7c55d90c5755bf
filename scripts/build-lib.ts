/**
 * Compiles src/ into dist/ with tsc (JavaScript and type declarations, tsconfig.build.json): what `import 'vivace'`
 * and the packaged `vivace` command run (`npm run build:lib`; `npm install` in a checkout runs it through `prepare`,
 * and `npm pack` ships the result). src/x/y.ts becomes dist/x/y.js, the same depth, so paths found from a module
 * (the package root, scenes/, data/meshes/) hold in both. Earlier output is removed first, except dist/web (the
 * pages, build-web.ts), so a deleted module does not linger in the package.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const LIB_OUT = join(root, 'dist');
const KEEP = new Set(['web']);

export function buildLib(): void {
  if (existsSync(join(root, 'src', 'web'))) throw new Error('src/web would compile into dist/web, where the pages are built');
  if (existsSync(LIB_OUT)) for (const entry of readdirSync(LIB_OUT)) if (!KEEP.has(entry)) rmSync(join(LIB_OUT, entry), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit code ${r.status})`);
}

const invokedDirectly = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly) {
  const start = performance.now();
  buildLib();
  const files = (dir: string): number => readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? (e.name === 'web' && dir === LIB_OUT ? 0 : files(join(dir, e.name))) : e.name.endsWith('.js') ? 1 : 0), 0);
  console.log(`built dist/ in ${((performance.now() - start) / 1000).toFixed(2)} s: ${files(LIB_OUT)} modules with type declarations`);
}
