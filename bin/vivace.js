#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader (tsx is a dependency), so no build step is needed.
import { tsImport } from 'tsx/esm/api';

const { main } = await tsImport('../src/cli/main.ts', import.meta.url);
process.exitCode = await main(process.argv.slice(2));
