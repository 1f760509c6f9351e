/**
 * Which `oas serve` processes use a data folder: each holds a file `oas-serve.<pid>.pid` there
 * while it runs (`holdServing`), removed as it exits. `oas restore` refuses while one of them is
 * alive (`servingPids`); a file whose process is gone (killed, machine restarted) is ignored.
 */
import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE } from './private.js';

const NAME = /^oas-serve\.(\d{1,10})\.pid$/;

/** Marks `dataDir` as used by this process until the returned release (or the process's exit). */
export function holdServing(dataDir: string): () => void {
  const file = join(dataDir, `oas-serve.${process.pid}.pid`);
  writeFileSync(file, `${process.pid}\n`, { mode: PRIVATE_FILE_MODE });
  const release = () => {
    process.off('exit', release);
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on('exit', release);
  return release;
}

/** The ids of the live processes that hold `dataDir` (none when the folder cannot be read). */
export function servingPids(dataDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    return [];
  }
  return names.map((name) => NAME.exec(name)?.[1]).filter((pid): pid is string => pid !== undefined).map(Number).filter(alive);
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
