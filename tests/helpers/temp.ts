/**
 * Temporary folders and child processes of the tests, cleaned up by the test file's process as it
 * exits, whether its tests passed or failed: each child still running is killed (SIGKILL), then
 * each folder is removed. A test that wants its folder gone sooner calls `removeTempDir`.
 *
 * `npm test` (tests/run.ts) runs the suite with TMPDIR pointing at a folder of its own and fails
 * when anything is left in it, so a test must make its temporary folders here, not with
 * `mkdtempSync(join(tmpdir(), ...))`, and must stop the servers and processes it starts (a child
 * process still running after the test file exits could write into a removed folder again).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const folders = new Set<string>();
const children = new Set<ChildProcess>();

function cleanUp(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  folders.clear();
}

process.once('exit', cleanUp);

/**
 * A fresh folder `<parent>/<prefix>XXXXXX` (parent: the OS temporary directory, read at each call
 * so TMPDIR is honoured), removed with everything in it when this process exits.
 */
export function tempDir(prefix: string, parent: string = tmpdir()): string {
  const folder = mkdtempSync(join(parent, prefix));
  folders.add(folder);
  return folder;
}

/** Removes a folder of `tempDir` now (and forgets it). */
export function removeTempDir(folder: string): void {
  rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  folders.delete(folder);
}

/**
 * Kills `child` (SIGKILL) if it still runs when this process exits: the last resort for a test
 * that failed before stopping it. Returns `child`.
 */
export function killAtExit<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * `{ TMPDIR }` when it is set, for a child process given a clean environment, so what it writes
 * in the temporary directory lands where `npm test` looks for leftovers.
 */
export function tmpEnv(): { TMPDIR?: string } {
  const dir = process.env.TMPDIR;
  return dir ? { TMPDIR: dir } : {};
}
