/**
 * The team's own lists (issue 38): the allowlist's entries added at run time and the analysts'
 * marks, each a list of JSON items keyed by the observable (or pattern) they are about. They live
 * beside the users: in the SQLite file (tables `allowlist` and `marks`), or in Redis with
 * `redis_url` (src/scale/redis-team-lists.ts), so that every server, worker and `oas` command of a
 * team reads the same ones at once.
 */
import type KeyvSqlite from '@keyv/sqlite';

export type TeamListName = 'allowlist' | 'marks';

export interface TeamList<T> {
  /** Every item, by key. */
  list(): Promise<T[]>;
  get(key: string): Promise<T | undefined>;
  /** Adds or replaces the item of `key`; true when it replaced one. */
  put(key: string, item: T): Promise<boolean>;
  /** False for an unknown key. */
  remove(key: string): Promise<boolean>;
}

/** A team list in the SQLite file, on the analyses table's connection (like the users). */
export function sqliteTeamList<T>(table: KeyvSqlite, name: TeamListName): TeamList<T> {
  let ready: Promise<unknown> | undefined;
  const query = async <R>(sql: string, ...params: unknown[]): Promise<R[]> => {
    ready ??= table.query(`CREATE TABLE IF NOT EXISTS ${name} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    await ready;
    return (await table.query(sql, ...params)) as R[];
  };
  return {
    async list() {
      return (await query<{ value: string }>(`SELECT value FROM ${name} ORDER BY key`)).map((row) => JSON.parse(row.value) as T);
    },
    async get(key) {
      const [row] = await query<{ value: string }>(`SELECT value FROM ${name} WHERE key = ?`, key);
      return row ? (JSON.parse(row.value) as T) : undefined;
    },
    async put(key, item) {
      const existed = (await query<{ key: string }>(`SELECT key FROM ${name} WHERE key = ?`, key)).length > 0;
      await query(`INSERT INTO ${name} (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, JSON.stringify(item));
      return existed;
    },
    async remove(key) {
      return (await query<{ key: string }>(`DELETE FROM ${name} WHERE key = ? RETURNING key`, key)).length === 1;
    },
  };
}
