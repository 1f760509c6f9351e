/**
 * The one SQLite file in the data directory, shared by `oas analyze` and `oas serve`.
 * Three Keyv stores, one table each: engine results (with TTL), analyses, engine-private data.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';

export const DATABASE_FILE = 'oas.sqlite';

export interface Storage {
  /** Cached engine results, keyed by engine and observable. */
  results: Keyv;
  /** Analyses by id. */
  analyses: Keyv;
  /** Raw access to the analyses table, for listing. */
  analysesTable: KeyvSqlite;
  /** Engine-private data (bootstrap files, lists...). */
  engineData: Keyv;
  path: string;
  close(): Promise<void>;
}

export async function openStorage(dataDir: string): Promise<Storage> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, DATABASE_FILE);
  const open = (table: string) => new KeyvSqlite({ uri: `sqlite://${path}`, table, busyTimeout: 10_000 });
  const resultsTable = open('results');
  // WAL lets a running server and a CLI analysis share the file without blocking readers.
  await resultsTable.query('PRAGMA journal_mode=WAL');
  const analysesTable = open('analyses');
  const engineTable = open('engine_data');
  const keyv = (store: KeyvSqlite) => {
    const k = new Keyv({ store, namespace: '' });
    k.on('error', () => {}); // failures surface as rejected promises where they matter
    return k;
  };
  const results = keyv(resultsTable);
  const analyses = keyv(analysesTable);
  const engineData = keyv(engineTable);
  await Promise.all([analysesTable.query('SELECT 1'), engineTable.query('SELECT 1')]);
  return {
    results,
    analyses,
    analysesTable,
    engineData,
    path,
    close: async () => {
      await Promise.allSettled([resultsTable.close(), analysesTable.close(), engineTable.close()]);
    },
  };
}
