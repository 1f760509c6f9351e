/**
 * Analyses in the SQLite file (the default): each header a record of the `analyses` Keyv table,
 * each finished observable a row of `analysis_results` (storage.ts), its verdict beside it, and
 * which analyses held which observable in `observable_seen` (issue 38). Reads
 * run in SQLite, so a poll, a page of results or the history never loads more than it shows.
 */
import type { AnalysisHeader, AnalysisStore } from './analysis-store.js';
import { historyPage } from './history.js';
import type KeyvSqlite from '@keyv/sqlite';
import type { SeenBefore } from '../runner/result.js';
import { seenKey, SEEN_LOOKUP_BATCH, type SeenHistory, type SeenItem, type SeenRecord } from './seen.js';
import { ANALYSIS_RESULTS_TABLE, KEYV_TEXT, SEEN_TABLE, type Storage } from './storage.js';

/** Rows per INSERT statement (4 parameters each: under SQLite's oldest limit of 999). */
const INSERT_ROWS = 240;

export function sqliteAnalysisStore(storage: Storage): AnalysisStore {
  const table = storage.analysesTable;
  return {
    putHeader: async (header) => {
      if (!header.cortex) return void (await storage.analyses.set(header.id, header));
      // A Cortex job marked deleted (markCortexDeleted) stays so, whatever header is written after
      // it (the runner completing it writes the one it started with): one statement, as Keyv
      // writes the record, keeping the mark.
      await table.query(
        `INSERT INTO analyses (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value =
         CASE WHEN json_extract(analyses.value, '$.value.cortex.deleted') THEN json_set(excluded.value, '$.value.cortex.deleted', json('true')) ELSE excluded.value END`,
        header.id,
        KEYV_TEXT.serialize({ value: header }),
      );
    },
    getHeader: async (id) => (await storage.analyses.get(id)) as AnalysisHeader | undefined,
    completeOf: async (id) => {
      const rows = (await table.query("SELECT json_extract(value, '$.value.complete') AS complete FROM analyses WHERE key = ?", id)) as { complete: unknown }[];
      if (rows.length === 0) return undefined;
      return rows[0]!.complete === 1 || rows[0]!.complete === true;
    },
    putRows: async (id, rows) => {
      for (let i = 0; i < rows.length; i += INSERT_ROWS) {
        const chunk = rows.slice(i, i + INSERT_ROWS);
        await table.query(
          `INSERT OR REPLACE INTO ${ANALYSIS_RESULTS_TABLE} (id, idx, value, verdict) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`,
          chunk.flatMap(([index, text, verdict]) => [id, index, text, verdict ?? null]),
        );
      }
    },
    rows: async (id, have) => (await table.query(
      `SELECT idx, CASE WHEN idx IN (SELECT value FROM json_each(?2)) THEN NULL ELSE value END AS value,
       CASE WHEN idx IN (SELECT value FROM json_each(?2)) THEN NULL ELSE verdict END AS verdict FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ?1`,
      id,
      JSON.stringify([...have]),
    )) as { idx: number; value: string | null; verdict: string | null }[],
    rowPage: async (id, after, limit) => (await table.query(
      `SELECT idx, value, verdict FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ? AND idx > ? ORDER BY idx LIMIT ${Math.floor(limit)}`,
      id,
      after,
    )) as { idx: number; value: string; verdict: string | null }[],
    savedIndices: async (id) => ((await table.query(`SELECT idx FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ?`, id)) as { idx: number }[]).map((row) => row.idx),
    unfinished: async () => {
      const rows = (await table.query(
        "SELECT value FROM analyses WHERE json_extract(value, '$.value.complete') = 0 AND json_extract(value, '$.value.origin') = 'server'",
      )) as { value: string }[];
      return rows.map((row) => (JSON.parse(row.value) as { value: AnalysisHeader }).value);
    },
    remove: async (id) => {
      const header = (await storage.analyses.get(id)) as AnalysisHeader | undefined;
      if (header) await sqliteForgetSeen(table, id, header.created_at, header.observables.map((o) => seenKey(o.value, o.type)));
      await table.query(`DELETE FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ?`, id);
      await storage.analyses.delete(id);
    },
    history: (query, labelOf) => historyPage(storage, query, labelOf),
    seenBefore: (keys, exclude) => sqliteSeenBefore(table, keys, exclude),
    recordSeen: (records) => sqliteRecordSeen(table, records),
    observableHistory: (key, limit) => sqliteSeenHistory(table, key, limit),
    cortexJobs: async (limit) => ((await table.query(
      `SELECT value FROM analyses WHERE json_extract(value, '$.value.cortex.analyzer') IS NOT NULL
       AND coalesce(json_extract(value, '$.value.cortex.deleted'), 0) = 0
       ORDER BY json_extract(value, '$.value.created_at') DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    )) as { value: string }[]).map((row) => (JSON.parse(row.value) as { value: AnalysisHeader }).value),
    // One statement: the header as stored now, whatever a runner wrote since it was read.
    markCortexDeleted: async (id) => {
      await table.query(
        "UPDATE analyses SET value = json_set(value, '$.value.cortex.deleted', json('true')) WHERE key = ? AND json_extract(value, '$.value.cortex.analyzer') IS NOT NULL",
        id,
      );
    },
  };
}

/** Rows per INSERT into observable_seen (4 parameters each: under SQLite's oldest limit of 999). */
const SEEN_INSERT_ROWS = 240;
/** Separates the fields of the packed "last" row (at, id, verdict): no key, id or verdict holds it. */
const SEP = '\u001f';

/** The earlier analyses (all but `exclude`) that held each of `keys`; a key none held is absent. */
async function sqliteSeenBefore(table: KeyvSqlite, keys: readonly string[], exclude = ''): Promise<Map<string, SeenBefore>> {
  const found = new Map<string, SeenBefore>();
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += SEEN_LOOKUP_BATCH) {
    // The keys drive the loop (CROSS JOIN keeps them outside): one index range per key. The last
    // row is the greatest of (at, id, verdict) packed in one text: one aggregate says it.
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
async function sqliteRecordSeen(table: KeyvSqlite, records: readonly SeenRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += SEEN_INSERT_ROWS) {
    const chunk = records.slice(i, i + SEEN_INSERT_ROWS);
    await table.query(
      `INSERT OR REPLACE INTO ${SEEN_TABLE} (value, at, id, verdict) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`,
      chunk.flatMap((r) => [r.value, r.at, r.analysis_id, r.verdict]),
    );
  }
}

/** The analyses that held `key`, newest first, at most `limit`. */
async function sqliteSeenHistory(table: KeyvSqlite, key: string, limit: number): Promise<SeenHistory> {
  const [count] = (await table.query(`SELECT count(*) AS n FROM ${SEEN_TABLE} WHERE value = ?`, key)) as { n: number }[];
  const rows = (await table.query(
    `SELECT id AS analysis_id, at, verdict FROM ${SEEN_TABLE} WHERE value = ? ORDER BY at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    key,
  )) as SeenItem[];
  return { total: count?.n ?? 0, items: rows.map(({ analysis_id, at, verdict }) => ({ analysis_id, at, verdict })) };
}

/** Forgets what analysis `id` (begun at `at`) held of `keys`. */
async function sqliteForgetSeen(table: KeyvSqlite, id: string, at: string, keys: readonly string[]): Promise<void> {
  const unique = [...new Set(keys)];
  for (let i = 0; i < unique.length; i += SEEN_LOOKUP_BATCH) {
    await table.query(`DELETE FROM ${SEEN_TABLE} WHERE value IN (SELECT value FROM json_each(?1)) AND at = ?2 AND id = ?3`, JSON.stringify(unique.slice(i, i + SEEN_LOOKUP_BATCH)), at, id);
  }
}
