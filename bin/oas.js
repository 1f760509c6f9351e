#!/usr/bin/env node
// The `oas` executable: runs the compiled CLI (built by `npm install` / `npm run build`).
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';

// `oas --version` (or -V) alone is answered here, from package.json: the answer commander would
// give, without loading commander and the CLI (start-up cost, guarded by tests/startup-budget.test.ts).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.on('error', () => {}); // `oas --version | true`: a reader gone is no error
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  // Node 22.1 and later keep the compiled code of the modules loaded here in a cache on disk
  // (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it
  // off), so that the next `oas` skips most of their compilation. Node 20 has no such cache.
  module.enableCompileCache?.();
  const entry = new URL('../dist/src/cli/main.js', import.meta.url);
  if (!existsSync(entry)) {
    process.stderr.write('oas: not built yet: run `npm install` (or `npm run build`) in the oas directory\n');
    process.exit(1);
  }
  await import(entry.href);
}
