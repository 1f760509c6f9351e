/**
 * "Seen before" (issue 38): which analyses held which observable, kept beside the analyses (the
 * SQLite file's `observable_seen` table here, Redis's keys in src/scale/redis-analyses.ts), so
 * that an analysis can say of each of its observables how often the team's store held it before,
 * since when, and what it was judged the last time (`seenText`, the line every surface shows); and
 * `oas history VALUE` can list them. Nothing here is loaded but types: the CLI's layout takes
 * `seenText` from here without loading a store.
 *
 * The index is keyed by the observable as oas compares it: case-insensitive, except a URL, whose
 * path and query are not (`seenKey`). Only ASCII letters are lowered, as SQLite's lower() does,
 * so the rows filled from older analyses in SQL (`createSeenTable`) have the same keys as those
 * recorded as analyses finish.
 */
import type KeyvSqlite from '@keyv/sqlite';
import type { SeenBefore } from '../runner/result.js';

/** One observable held by one analysis: its key (`seenKey`), when the analysis began, its id, the observable's verdict there. */
export interface SeenRecord {
  value: string;
  /** The analysis's created_at, ISO 8601. */
  at: string;
  analysis_id: string;
  verdict: string;
}

/** One analysis that held an observable, for its history. */
export interface SeenItem {
  analysis_id: string;
  /** When the analysis began, ISO 8601. */
  at: string;
  verdict: string;
}

/** The analyses that held an observable, newest first (at most the limit asked), and how many there are. */
export interface SeenHistory {
  total: number;
  items: SeenItem[];
}

/**
 * The index's key of an observable: its value with ASCII letters lowered, a URL's as it is (its
 * path and query are case-sensitive). `type` is the observable's; without it, a value with a
 * scheme (`https://...`) counts as a URL.
 */
export function seenKey(value: string, type?: string): string {
  const url = type === undefined ? /^[a-z][a-z0-9+.-]*:\/\//i.test(value) : type === 'URL';
  return url ? value : value.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** `seen 3 times since 2026-11-02, last malicious`; `seen once, on 2026-11-02, clean` for one. */
export function seenText(seen: SeenBefore): string {
  const day = (iso: string) => iso.slice(0, 10);
  if (seen.count === 1) return `seen once, on ${day(seen.first)}, ${seen.last_verdict}`;
  return `seen ${seen.count} times since ${day(seen.first)}, last ${seen.last_verdict}`;
}

export const SEEN_TABLE = 'observable_seen';

/** Keys per lookup statement (one JSON parameter): a few hundred, never one statement per value. */
export const SEEN_LOOKUP_BATCH = 500;
/** Rows per INSERT (4 parameters each: under SQLite's oldest limit of 999). */
const SEEN_INSERT_ROWS = 240;
/** Separates the fields of the packed "last" row (at, id, verdict): no key, id or verdict holds it. */
const SEP = '\u001f';

/**
 * Creates the table once, in one transaction with the rows of the analyses already stored: each
 * result row of `analysis_results` (the observable and type in its JSON, its stored verdict, or
 * `unknown` for a row of a version that stored none) dated by its analysis's header. A database
 * that has the table is left as it is; two processes opening a new one at once fill it once (the
 * second waits for the first's transaction, then finds the table). Records of the oldest format,
 * whose results are inside the header, are not read.
 *
 * The primary key starts with the observable: a lookup is a range of the index, never a scan.
 */
export async function createSeenTable(table: KeyvSqlite, resultsTable: string): Promise<void> {
  const exists = async () => ((await table.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '${SEEN_TABLE}'`)) as unknown[]).length > 0;
  if (await exists()) return;
  await table.query('BEGIN IMMEDIATE');
  try {
    if (!(await exists())) {
      await table.query(`CREATE TABLE ${SEEN_TABLE} (value TEXT NOT NULL, at TEXT NOT NULL, id TEXT NOT NULL, verdict TEXT NOT NULL, PRIMARY KEY (value, at, id)) WITHOUT ROWID`);
      // Each header's created_at read once (a header holds its observables: it can be large).
      await table.query(`
        WITH heads AS MATERIALIZED (
          SELECT key AS id, json_extract(value, '$.value.created_at') AS at FROM analyses WHERE json_valid(value)
        ),
        held AS (
          SELECT heads.at AS at, r.id AS id, json_extract(r.value, '$.observable') AS observable, json_extract(r.value, '$.type') AS type,
                 CASE WHEN json_valid(r.verdict) THEN json_extract(r.verdict, '$.verdict') END AS verdict
            FROM heads CROSS JOIN ${resultsTable} AS r ON r.id = heads.id
           WHERE typeof(heads.at) = 'text' AND json_valid(r.value)
        )
        INSERT OR IGNORE INTO ${SEEN_TABLE} (value, at, id, verdict)
        SELECT CASE WHEN type = 'URL' THEN observable ELSE lower(observable) END, at, id, coalesce(verdict, 'unknown')
          FROM held WHERE typeof(observable) = 'text'`);
    }
    await table.query('COMMIT');
  } catch (error) {
    await table.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** The earlier analyses (all but `exclude`) that held each of `keys`; a key none held is absent. */
export async function sqliteSeenBefore(table: KeyvSqlite, keys: readonly string[], exclude = ''): Promise<Map<string, SeenBefore>> {
  const found = new Map<string, SeenBefore>();
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += SEEN_LOOKUP_BATCH) {
    // The keys drive the loop (CROSS JOIN keeps them outside): one index range per key.
    const rows = (await table.query(
      `SELECT s.value AS value, count(*) AS n, min(s.at) AS first, max(s.at || '${SEP}' || s.id || '${SEP}' || s.verdict) AS last
         FROM json_each(?1) AS k CROSS JOIN ${SEEN_TABLE} AS s ON s.value = k.value
        WHERE s.id <> ?2 GROUP BY s.value`,
      JSON.stringify(unique.slice(i, i + SEEN_LOOKUP_BATCH)),
      exclude,
    )) as { value: string; n: number; first: string; last: string }[];
    for (const row of rows) {
      const [last, id, verdict] = row.last.split(SEP) as [string, string, string];
      found.set(row.value, { count: row.n, first: row.first, last, last_verdict: verdict, last_analysis_id: id });
    }
  }
  return found;
}

/** Writes the records (one row per observable and analysis: writing one again replaces it). */
export async function sqliteRecordSeen(table: KeyvSqlite, records: readonly SeenRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += SEEN_INSERT_ROWS) {
    const chunk = records.slice(i, i + SEEN_INSERT_ROWS);
    await table.query(
      `INSERT OR REPLACE INTO ${SEEN_TABLE} (value, at, id, verdict) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`,
      chunk.flatMap((r) => [r.value, r.at, r.analysis_id, r.verdict]),
    );
  }
}

/** The analyses that held `key`, newest first, at most `limit`. */
export async function sqliteSeenHistory(table: KeyvSqlite, key: string, limit: number): Promise<SeenHistory> {
  const [count] = (await table.query(`SELECT count(*) AS n FROM ${SEEN_TABLE} WHERE value = ?`, key)) as { n: number }[];
  const rows = (await table.query(
    `SELECT id AS analysis_id, at, verdict FROM ${SEEN_TABLE} WHERE value = ? ORDER BY at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    key,
  )) as SeenItem[];
  return { total: count?.n ?? 0, items: rows.map(({ analysis_id, at, verdict }) => ({ analysis_id, at, verdict })) };
}

/** Forgets what analysis `id` (begun at `at`) held of `keys`. */
export async function sqliteForgetSeen(table: KeyvSqlite, id: string, at: string, keys: readonly string[]): Promise<void> {
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += SEEN_LOOKUP_BATCH) {
    await table.query(`DELETE FROM ${SEEN_TABLE} WHERE value IN (SELECT value FROM json_each(?1)) AND at = ?2 AND id = ?3`, JSON.stringify(unique.slice(i, i + SEEN_LOOKUP_BATCH)), at, id);
  }
}
