/**
 * Headless Chromium for `vivace render` and the browser tests, driven by playwright-core (which downloads no browser
 * of its own): the binary is $VIVACE_CHROMIUM, else the first of the usual install paths (Debian's package installs
 * /usr/bin/chromium; scripts/install-chromium.sh installs it when missing).
 */

import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

/**
 * No sandbox (root in a container has none to use); WebGL through SwiftShader (no GPU here); and no background
 * networking, sync or component updates, which a machine without internet access refuses at every start.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function findChromium(explicit?: string): string | null {
  const given = explicit ?? process.env.VIVACE_CHROMIUM;
  if (given) return existsSync(given) ? given : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export function chromiumMissingMessage(explicit?: string): string {
  const given = explicit ?? process.env.VIVACE_CHROMIUM;
  if (given) return `Chromium not found at ${given}`;
  return `no Chromium found (looked for ${CANDIDATES.slice(0, 4).join(', ')}); install it (Debian: 'apt-get install chromium', or the package's scripts/install-chromium.sh as root), or give its path with --chromium or VIVACE_CHROMIUM`;
}

/** Starts headless Chromium (playwright gives it a fresh temporary profile). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}
