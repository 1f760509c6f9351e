// The SQLite binding (sqlite3's build/Release/node_sqlite3.node) as a "local prebuild": a .tar.gz
// named and laid out as sqlite3's own install script (`prebuild-install -r napi`) looks for it in
// sqlite3's `prebuilds/` folder before it downloads anything. Used by bin/pack-sqlite3.mjs (the
// package ships the binding built at `npm pack`) and bin/build-sqlite3.mjs (an install offers the
// binding it has to sqlite3's install script, which then needs neither GitHub nor nodejs.org).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const BINDING = 'build/Release/node_sqlite3.node';

/** libc as prebuild-install names it: '' for glibc (and every other OS), 'musl' otherwise. */
function libc() {
  if (process.platform !== 'linux') return '';
  return process.report.getReport().header.glibcVersionRuntime ? '' : 'musl';
}

const packageOf = (sqliteDir) => JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8'));

/**
 * The N-API version to build for: the highest sqlite3 lists (binary.napi_versions: 6 for 5.1.7)
 * that this Node supports, as its own prebuilt binaries are. Left to itself, node-gyp builds for
 * the N-API version of the Node that runs it, and a binding built so on Node 24 (N-API 10)
 * crashes Node 20 (N-API 9) as it loads; built for 6, one binding serves Node 20, 22 and 24.
 */
export function napiVersion(sqliteDir) {
  return Math.max(...(packageOf(sqliteDir).binary?.napi_versions ?? []).filter((version) => version <= Number(process.versions.napi)));
}

/** The file name prebuild-install looks for, for this Node, OS and CPU: sqlite3-v5.1.7-napi-v6-linux-x64.tar.gz. */
export function prebuildName(sqliteDir) {
  const pkg = packageOf(sqliteDir);
  return `${pkg.name}-v${pkg.version}-napi-v${napiVersion(sqliteDir)}-${process.platform}${libc()}-${process.arch}.tar.gz`;
}

/** sqlite3's own dependency `tar` (v6), so nothing is added to the package's dependencies. */
const tar = (sqliteDir) => createRequire(join(sqliteDir, 'package.json'))('tar');

/** Writes FILE: a .tar.gz holding sqlite3's built binding at build/Release/node_sqlite3.node. */
export function packBinding(sqliteDir, file) {
  mkdirSync(dirname(file), { recursive: true });
  tar(sqliteDir).c({ gzip: true, file, cwd: sqliteDir, sync: true, portable: true }, [BINDING]);
}

/** Unpacks FILE (written by packBinding) into sqlite3's folder. */
export function unpackBinding(sqliteDir, file) {
  tar(sqliteDir).x({ file, cwd: sqliteDir, sync: true });
}
