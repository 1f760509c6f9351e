/**
 * Analyses in the SQLite file (the default): each header a record of the `analyses` Keyv table,
 * each finished observable a row of `analysis_results` (storage.ts), its verdict beside it, and
 * which analyses held which observable in `observable_seen` (seen.ts). Reads
 * run in SQLite, so a poll, a page of results or the history never loads more than it shows.
 */
import type { AnalysisHeader, AnalysisStore } from './analysis-store.js';
import { historyPage } from './history.js';
import { seenKey, sqliteForgetSeen, sqliteRecordSeen, sqliteSeenBefore, sqliteSeenHistory } from './seen.js';
import { ANALYSIS_RESULTS_TABLE, type Storage } from './storage.js';

/** Rows per INSERT statement (4 parameters each: under SQLite's oldest limit of 999). */
const INSERT_ROWS = 240;

export function sqliteAnalysisStore(storage: Storage): AnalysisStore {
  const table = storage.analysesTable;
  return {
    putHeader: async (header) => {
      await storage.analyses.set(header.id, header);
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
  };
}
