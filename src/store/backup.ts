/**
 * A copy of the SQLite file (`oas backup`) and putting one back (`oas restore`). The copy is
 * SQLite's `VACUUM INTO`: one read transaction, so it is consistent while a server writes (WAL
 * readers do not block writers), and compact. It is written beside its target and renamed onto
 * it, 0600 (it holds the users' token hashes), so a failure leaves no half file under that name.
 */
import { chmodSync, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import KeyvSqlite from '@keyv/sqlite';
import { ConfigError } from '../config/load.js';
import { PRIVATE_FILE_MODE } from '../fs/private.js';
import { checkDataDir, DATABASE_FILE, headerSchema, openStorage, SCHEMA } from './storage.js';

export interface BackupWritten {
  path: string;
  bytes: number;
  schema: number;
  analyses: number;
}

/** Writes a consistent copy of the data folder's file (upgraded first if older) to `target`, replacing it. */
export async function backupStore(dataDir: string, target: string): Promise<BackupWritten> {
  const storage = await openStorage(dataDir);
  const partial = join(dirname(target), `.${DATABASE_FILE}.partial-${randomBytes(4).toString('hex')}`);
  try {
    const [{ n }] = (await storage.analysesTable.query('SELECT count(*) AS n FROM analyses')) as [{ n: number }];
    await storage.analysesTable.query('VACUUM INTO ?', partial);
    chmodSync(partial, PRIVATE_FILE_MODE);
    renameSync(partial, target);
    return { path: target, bytes: statSync(target).size, schema: SCHEMA, analyses: n };
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    await storage.close();
  }
}

export interface Restored {
  /** The backup's schema (upgraded to SCHEMA as it was put back when older). */
  schema: number;
  /** Where the file it replaced was kept, when there was one. */
  previous?: string;
}

/**
 * Puts the backup `source` in place of the data folder's file. The file it replaces (its WAL folded
 * in first) is kept as `oas.sqlite.before-restore` (replacing an older one); the backup is
 * copied, never moved. Refuses a file that is no SQLite file, or of a newer schema, before
 * touching anything; the caller makes sure no server uses the folder.
 */
export async function restoreStore(dataDir: string, source: string): Promise<Restored> {
  const schema = headerSchema(source);
  if (schema === undefined) throw new ConfigError(`${source} is no oas backup (not a SQLite file)`);
  if (schema > SCHEMA) {
    const { newerSchemaError } = await import('./schema.js');
    throw await newerSchemaError(source, `the backup ${source}`, schema, SCHEMA);
  }
  checkDataDir(dataDir);
  const database = join(dataDir, DATABASE_FILE);
  let previous: string | undefined;
  if (existsSync(database)) {
    await foldWal(database);
    previous = `${database}.before-restore`;
    renameSync(database, previous);
  }
  for (const companion of ['-wal', '-shm', '-journal']) rmSync(database + companion, { force: true });
  const partial = join(dataDir, `.${DATABASE_FILE}.restoring-${randomBytes(4).toString('hex')}`);
  try {
    copyFileSync(source, partial);
    chmodSync(partial, PRIVATE_FILE_MODE);
    renameSync(partial, database);
  } finally {
    rmSync(partial, { force: true });
  }
  // Upgraded now rather than by the next command.
  await (await openStorage(dataDir)).close();
  return { schema, ...(previous ? { previous } : {}) };
}

/** Writes what the WAL of `database` holds into it and removes the WAL (a process that stopped without closing it). */
async function foldWal(database: string): Promise<void> {
  if (!existsSync(`${database}-wal`)) return;
  const table = new KeyvSqlite({ uri: `sqlite://${database}`, table: 'analyses', busyTimeout: 10_000 });
  try {
    await table.query('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    await table.close();
  }
}
