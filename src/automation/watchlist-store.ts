/**
 * Where watchlists live (issue 36), beside the team's users: the SQLite file of data_dir (table
 * `watchlists`, one row per watchlist, its runs inside), or Redis with `redis_url`
 * (watchlist-store-redis.ts), so that every server, `oas watch` and the schedule see the same ones.
 *
 * Several processes change a watchlist (the schedule claims a run, a server finishes it, `oas watch
 * run` claims another): `update` is a compare-and-swap on the stored text, so a decision such as
 * "due, and nobody claimed it" is taken on what is stored, never on a stale copy.
 */
import type KeyvSqlite from '@keyv/sqlite';
import type { Watchlist } from './watchlist.js';

export interface WatchlistStore {
  /** Adds a watchlist; false when the name is taken. */
  add(watchlist: Watchlist): Promise<boolean>;
  get(name: string): Promise<Watchlist | undefined>;
  /** Every watchlist, by name. */
  list(): Promise<Watchlist[]>;
  /** False for an unknown name. */
  remove(name: string): Promise<boolean>;
  /**
   * Changes one watchlist in one step: `change` sees it as stored and returns what to store, or
   * undefined to leave it as it is; when another process wrote it meanwhile, `change` sees the
   * newer one and decides again. Returns what was stored; undefined for an unknown name or when
   * `change` left it.
   */
  update(name: string, change: (current: Watchlist) => Watchlist | undefined): Promise<Watchlist | undefined>;
}

/** What a backend does: read a watchlist's text, and replace it only if it is still `before`. */
export interface SwapBackend {
  read(name: string): Promise<string | undefined>;
  /** True when the stored text was `before` and is now `after`. */
  swap(name: string, before: string, after: string): Promise<boolean>;
}

/** Tries of an update that keeps meeting other writers before it gives up (it never should). */
const MAX_TRIES = 50;

/** `update` over a backend's compare-and-swap. */
export async function updateBySwap(backend: SwapBackend, name: string, change: (current: Watchlist) => Watchlist | undefined): Promise<Watchlist | undefined> {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const text = await backend.read(name);
    if (text === undefined) return undefined;
    const next = change(JSON.parse(text) as Watchlist);
    if (next === undefined) return undefined;
    if (await backend.swap(name, text, JSON.stringify(next))) return next;
  }
  throw new Error(`watchlist ${name}: changed by others ${MAX_TRIES} times in a row`);
}

const TABLE = 'watchlists';

/** The watchlists in the SQLite file, on the analyses table's connection (like the users). */
export function sqliteWatchlists(table: KeyvSqlite): WatchlistStore {
  let ready: Promise<unknown> | undefined;
  const query = async <T>(sql: string, ...params: unknown[]): Promise<T[]> => {
    ready ??= table.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    await ready;
    return (await table.query(sql, ...params)) as T[];
  };
  const backend: SwapBackend = {
    async read(name) {
      const [row] = await query<{ value: string }>(`SELECT value FROM ${TABLE} WHERE name = ?`, name);
      return row?.value;
    },
    async swap(name, before, after) {
      // One statement: SQLite runs it whole, so nobody writes between the comparison and the write.
      const rows = await query<{ name: string }>(`UPDATE ${TABLE} SET value = ? WHERE name = ? AND value = ? RETURNING name`, after, name, before);
      return rows.length === 1;
    },
  };
  return {
    async add(watchlist) {
      const rows = await query<{ name: string }>(`INSERT INTO ${TABLE} (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING RETURNING name`, watchlist.name, JSON.stringify(watchlist));
      return rows.length === 1;
    },
    async get(name) {
      const text = await backend.read(name);
      return text === undefined ? undefined : (JSON.parse(text) as Watchlist);
    },
    async list() {
      return (await query<{ value: string }>(`SELECT value FROM ${TABLE} ORDER BY name`)).map((row) => JSON.parse(row.value) as Watchlist);
    },
    async remove(name) {
      return (await query<{ name: string }>(`DELETE FROM ${TABLE} WHERE name = ? RETURNING name`, name)).length === 1;
    },
    update: (name, change) => updateBySwap(backend, name, change),
  };
}
