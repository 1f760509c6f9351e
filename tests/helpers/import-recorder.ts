/**
 * What an `oas` process did, recorded by a module given to node with `--import` that appends one
 * line per event to the file named by an environment variable (module-log.ts: the modules loaded;
 * statement-log.ts: the SQL statements run).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export interface ImportRecorder {
  /** For runOas's and spawnServe's `nodeArgs`. */
  nodeArgs: string[];
  /** For their `env`: records into `log` (emptied now). */
  env(log: string): Record<string, string>;
  /** The lines recorded in `log` so far, in order. */
  read(log: string): string[];
}

/** `module`: the recording module's file; `variable`: the environment variable naming the log it appends to. */
export function importRecorder(module: string, variable: string): ImportRecorder {
  return {
    nodeArgs: ['--import', pathToFileURL(module).href],
    env: (log) => {
      writeFileSync(log, '');
      return { [variable]: log };
    },
    read: (log) => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}
