#!/usr/bin/env node
// The `oas` executable: runs the compiled CLI (built by `npm install` / `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('oas: not built yet: run `npm install` (or `npm run build`) in the oas directory\n');
  process.exit(1);
}
await import(entry.href);
