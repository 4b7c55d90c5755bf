#!/usr/bin/env node
// The vivace command. In a git checkout (src/ present, tsx installed as a dev dependency) it runs the TypeScript
// sources through tsx, so an edit needs no rebuild; in an installed package it runs the compiled JavaScript of dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);

// A checkout installed without dev dependencies (no tsx) runs its build, when there is one.
const tsx = existsSync(sources)
  ? await import('tsx/esm/api').catch((err) => {
      if (err?.code === 'ERR_MODULE_NOT_FOUND' && existsSync(compiled)) return null;
      throw err;
    })
  : null;
const { main } = tsx ? await tsx.tsImport(sources.href, import.meta.url) : await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
