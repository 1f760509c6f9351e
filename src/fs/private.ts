/**
 * Private by default: the folders oas creates (the data directory, the cache of engine
 * declarations, downloaded lists) are 0700 and the files in them 0600, whatever the umask, so on
 * a shared machine no other user reads an analysis. A folder that already exists and that other
 * users can read is left as it is (it may be shared on purpose) but named once on stderr.
 */
import { chmodSync, mkdirSync, openSync, closeSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Folders already named by a warning in this process. */
const warned = new Set<string>();

/**
 * `mkdir -p` with every level it creates 0700 (chmod after mkdir, so the umask cannot widen or
 * narrow it). Node's recursive mkdir retries forever where a parent exists but refuses children
 * with ENOENT (/proc), so missing parents are found first.
 */
export function ensurePrivateDir(dir: string): void {
  const missing: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    try {
      statSync(current);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.unshift(current);
    }
  }
  for (const path of missing) {
    mkdirSync(path, { mode: PRIVATE_DIR_MODE });
    chmodSync(path, PRIVATE_DIR_MODE);
  }
}

/**
 * One stderr line, once per process, for an existing folder that group or others may read,
 * naming it and `what` it is (`data_dir`). Called once the folder is known to work, so that a
 * refusal is the only line a failing command prints.
 */
export function warnIfShared(dir: string, what: string): void {
  dir = resolve(dir);
  if (warned.has(dir) || process.platform === 'win32') return;
  let mode: number;
  try {
    const info = statSync(dir);
    if (!info.isDirectory()) return;
    mode = info.mode & 0o777;
  } catch {
    return;
  }
  if ((mode & 0o044) === 0) return;
  warned.add(dir);
  process.stderr.write(`warning: ${what} ${dir} can be read by other users (mode ${mode.toString(8).padStart(4, '0')}); to keep analyses private: chmod 700 ${dir}\n`);
}

/**
 * Makes `file` 0600: created empty when missing (so that SQLite, which gives its journal and WAL
 * files the database file's mode, creates them 0600 too), narrowed when it exists wider.
 */
export function ensurePrivateFile(file: string): void {
  try {
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  } catch {
    return; // the caller's own open reports what is wrong, with its words
  }
  narrow(file);
}

/** Narrows an existing file to 0600 when group or others have any access; silent when missing. */
export function narrow(file: string): void {
  try {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, PRIVATE_FILE_MODE);
  } catch {
    // missing or not ours: nothing to narrow
  }
}
