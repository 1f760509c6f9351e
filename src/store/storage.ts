/**
 * The one SQLite file in the data directory, shared by `oas analyze` and `oas serve`.
 * Three Keyv stores, one table each: engine results (with TTL), analyses, engine-private data;
 * and plain tables beside the analyses: `analysis_results`, one row per finished observable, and
 * `observable_seen`, which analyses held which observable (issue 38, src/store/seen.ts). Its
 * schema is SCHEMA (src/store/schema.ts upgrades an older file and refuses a newer one).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';
import { ConfigError } from '../config/load.js';
import { BatchedKeyvSqlite } from './batched-sqlite.js';
import { ensurePrivateDir, ensurePrivateFile, narrow, warnIfShared } from '../fs/private.js';

export const DATABASE_FILE = 'oas.sqlite';

/**
 * The schema of the SQLite file this build reads and writes (src/store/schema.ts, its history in
 * src/store/migrations.ts and docs/upgrades.md): a file of an older one is upgraded as it is
 * opened, a file of a newer one refused.
 */
export const SCHEMA = 4;

/**
 * The text of every Keyv store of oas (these SQLite tables, and the Redis cache): Keyv's own
 * format (@keyv/serialize: JSON where a text starting with `:` gets one more, and a
 * Buffer is `:base64:<data>`), read and written at JSON.stringify's and JSON.parse's speed: the
 * default serializer walks every value in JavaScript (~10 us for one engine answer, every engine
 * call writes one), its reader calls a reviver for every value. Both are only needed for a text
 * that holds such a string or a Buffer, which `MAY_ESCAPE` finds (in the JSON of either side):
 * the quote that opens a string, right after `[`, `,`, `:` or at the start, followed by `:`. A
 * quote inside a string is always `\"`, so it is never mistaken for one; a key that starts with
 * `:` is (a harmless detour through the slow path). Values are written and read as before.
 */
export const KEYV_TEXT = {
  serialize(data: unknown): string {
    const text = JSON.stringify(data);
    if (text !== undefined && !MAY_ESCAPE.test(text) && !text.includes('"type":"Buffer"')) return text;
    return JSON.stringify(data, escapeText) ?? 'null';
  },
  deserialize<T>(text: string): T {
    return (MAY_ESCAPE.test(text) ? JSON.parse(text, unescapeText) : JSON.parse(text)) as T;
  },
};

const MAY_ESCAPE = /(?:^|[[,:])\s*":/;

function escapeText(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === 58 ? `:${value}` : value;
  if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer') {
    const raw = (this as Record<string, unknown>)[key];
    if (Buffer.isBuffer(raw)) return `:base64:${raw.toString('base64')}`;
  }
  return value;
}

function unescapeText(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.startsWith(':base64:')) return Buffer.from(value.slice(8), 'base64');
  return value.startsWith(':') ? value.slice(1) : value;
}

/**
 * One row per finished observable of an analysis: `(id, idx, value, verdict)`, value the
 * observable's result as JSON, verdict its verdict and reasons as JSON (worked out once as it
 * finished; NULL in rows of older versions, which had no such column: migration 2 adds it to
 * their table, src/store/migrations.ts). The analyses table keeps only each analysis's header
 * (what it is, whether it is complete): a poll or a save never reads or rewrites the results, and
 * they are read back in order, a page at a time. Records of the first format, which held their
 * results inside the header, are moved to rows by migration 3.
 */
export const ANALYSIS_RESULTS_TABLE = 'analysis_results';

/**
 * Which analyses held which observable (issue 38, "seen before"): `(value, at, id, verdict)`, the
 * observable's key (`seenKey` of src/store/seen.ts), when the analysis began, its id, the
 * observable's verdict there. The primary key starts with the key: a lookup is a range of the
 * index, never a scan. Read and written by src/store/sqlite-analyses.ts.
 */
export const SEEN_TABLE = 'observable_seen';

export interface Storage {
  /** Cached engine results, keyed by engine and observable. */
  results: Keyv;
  /** Analyses by id. */
  analyses: Keyv;
  /**
   * Raw access to the analyses table (for listing) and to `analysis_results` (ANALYSIS_RESULTS_TABLE),
   * on the same connection.
   */
  analysesTable: KeyvSqlite;
  /** Engine-private data (bootstrap files, lists...). */
  engineData: Keyv;
  path: string;
  close(): Promise<void>;
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a parent is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'name too long',
  ENOENT: 'no such file or directory',
};

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
  return REASONS[code] ?? (message || code);
}

/**
 * Makes sure the data directory exists (created 0700 when missing), is a directory and can be
 * written, before any work starts; else a ConfigError naming `data_dir`, e.g.
 * `data_dir /srv/oas: not writable (read-only file system)`. The test is a real write (a file
 * created and removed), which also holds for root and for read-only mounts.
 */
export function checkDataDir(dataDir: string): void {
  const fail = (what: string): never => {
    throw new ConfigError(`data_dir ${dataDir}: ${what}`);
  };
  let isDirectory: boolean | undefined;
  try {
    isDirectory = statSync(dataDir).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') fail('not a directory (a parent is a file)');
    if (code !== 'ENOENT') fail(`not accessible (${reason(error)})`);
  }
  if (isDirectory === false) fail('not a directory');
  if (isDirectory === undefined) {
    try {
      ensurePrivateDir(dataDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      fail(code === 'EEXIST' ? 'not a directory' : `cannot be created (${reason(error)})`);
    }
  }
  const probe = join(dataDir, `.oas-write-test-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    fail(`not writable (${reason(error)})`);
  }
  try {
    unlinkSync(probe);
  } catch {
    // left behind: harmless
  }
  const database = join(dataDir, DATABASE_FILE);
  try {
    if (!statSync(database).isFile()) fail(`${database} is not a regular file`);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') fail(`${database}: not accessible (${reason(error)})`);
  }
}

/**
 * The data directory's database, 0600; a data directory other users can read is named on stderr
 * once it works (see `warnIfShared`).
 */
export async function openStorage(dataDir: string): Promise<Storage> {
  checkDataDir(dataDir);
  const path = join(dataDir, DATABASE_FILE);
  // A file of a newer oas is refused before anything opens it (nothing written, not even its mode).
  const header = headerSchema(path);
  if (header !== undefined && header > SCHEMA) throw await (await import('./schema.js')).newerSchemaError(path, `the data folder ${dataDir}`, header, SCHEMA);
  // 0600 before SQLite opens it: its WAL and shared-memory files take the database file's mode.
  ensurePrivateFile(path);
  for (const companion of ['-wal', '-shm', '-journal']) narrow(path + companion);
  let storage: Storage;
  try {
    // Processes opening one file at once (a server and a CLI, or two of them) may find it busy
    // while another turns on WAL or upgrades it, and SQLite does not always wait for it: tried again.
    for (let attempt = 1; ; attempt++) {
      try {
        storage = await openDatabase(path, dataDir);
        break;
      } catch (error) {
        if (attempt >= OPEN_ATTEMPTS || (error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
        await new Promise((wake) => setTimeout(wake, 50 * attempt));
      }
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_NOTADB...: the data directory's file, not oas.
    throw new ConfigError(`data_dir ${dataDir}: cannot open the database ${path} (${reason(error)})`);
  }
  warnIfShared(dataDir, 'data_dir');
  return storage;
}

/** Tries of opening the file when SQLite answers SQLITE_BUSY without waiting (openStorage). */
const OPEN_ATTEMPTS = 5;

async function openDatabase(path: string, dataDir: string): Promise<Storage> {
  const open = (table: string) => new KeyvSqlite({ uri: `sqlite://${path}`, table, busyTimeout: 10_000 });
  // The engine cache: one read and one write per engine call, batched per turn of the event loop.
  const resultsTable = new BatchedKeyvSqlite({ uri: `sqlite://${path}`, table: 'results', busyTimeout: 10_000 });
  try {
    // WAL lets a running server and a CLI analysis share the file without blocking readers.
    await resultsTable.query('PRAGMA journal_mode=WAL');
  } catch (error) {
    await resultsTable.close().catch(() => {});
    throw error;
  }
  const analysesTable = open('analyses');
  const engineTable = open('engine_data');
  const keyv = (store: KeyvSqlite) => {
    const k = new Keyv({ store, namespace: '', ...KEYV_TEXT });
    k.on('error', () => {}); // failures surface as rejected promises where they matter
    return k;
  };
  const results = keyv(resultsTable);
  const analyses = keyv(analysesTable);
  const engineData = keyv(engineTable);
  // One read when the file is up to date (src/store/schema.ts otherwise, loaded for it alone).
  try {
    const [found] = await Promise.all([userVersion(analysesTable), engineTable.query('SELECT 1')]);
    if (found !== SCHEMA) {
      const { upgradeSchema } = await import('./schema.js');
      await upgradeSchema(analysesTable, { path, dataDir, schema: SCHEMA, text: KEYV_TEXT });
    }
  } catch (error) {
    await Promise.allSettled([resultsTable.close(), analysesTable.close(), engineTable.close()]);
    throw error;
  }
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

/** The schema SQLite reads in the file of `table`'s connection. */
export async function userVersion(table: KeyvSqlite): Promise<number> {
  const rows = (await table.query('PRAGMA user_version')) as { user_version: number }[];
  return rows[0]?.user_version ?? 0;
}

/**
 * The schema in the header of the SQLite file `path` (its user_version, 4 bytes big-endian at
 * offset 60), without opening it as a database; undefined for a file that is missing, empty or
 * not SQLite. A file in WAL mode may have a newer header in its WAL: storage.ts reads the
 * version again through SQLite.
 */
export function headerSchema(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return undefined;
    return header.readUInt32BE(60);
  } finally {
    closeSync(fd);
  }
}

