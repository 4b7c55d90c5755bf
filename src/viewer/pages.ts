/** Where the prebuilt browser pages are (dist/web/, made by `npm run build:viewer`; shipped in the package). */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../io/scene-files.js';

export type PageName = 'viewer' | 'demo';

export const WEB_DIR = join(PACKAGE_ROOT, 'dist', 'web');

/** The folder of a built page; throws, saying how to build it, when it is missing (a checkout without the build). */
export function pageDir(page: PageName): string {
  const dir = join(WEB_DIR, page);
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`the ${page} page is not built (${dir} is missing): run 'npm run build:viewer' in ${PACKAGE_ROOT}`);
  }
  return dir;
}
