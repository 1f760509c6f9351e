#!/usr/bin/env node
// `npm pack` (the `prepack` script): puts the SQLite binding built by `npm ci` (an N-API module, so
// one build serves Node 20, 22 and 24 on this OS and CPU) into the package, as prebuilds/<name>
// (bin/sqlite3-prebuild.mjs). `npm install -g oas-<version>.tgz` on the same OS and CPU then uses it
// (bin/build-sqlite3.mjs, the `preinstall` script) instead of building sqlite3 from source again;
// elsewhere, or when it does not load, the install builds it as a clone's `npm ci` does.
import { existsSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BINDING, packBinding, prebuildName } from './sqlite3-prebuild.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sqliteDir = dirname(createRequire(join(root, 'package.json')).resolve('sqlite3/package.json'));
if (!existsSync(join(sqliteDir, BINDING))) {
  process.stderr.write(`pack-sqlite3: no SQLite binding at ${join(sqliteDir, BINDING)}: run \`npm ci\` first\n`);
  process.exit(1);
}
const prebuilds = join(root, 'prebuilds');
rmSync(prebuilds, { recursive: true, force: true });
const file = join(prebuilds, prebuildName(sqliteDir));
packBinding(sqliteDir, file);
process.stderr.write(`pack-sqlite3: prebuilds/${prebuildName(sqliteDir)} (${Math.round(statSync(file).size / 1024)} KB)\n`);
