/**
 * The SQLite file's numbered migrations, oldest first: migration N brings a file of schema N-1 to
 * schema N. src/store/schema.ts runs those a file lacks, in order, in one transaction, and records
 * the schema reached. Each step also finds its work already done in a file written before schema
 * versions were recorded (schema 0: every oas 0.1.0 build, whatever its layout), so a file of any
 * earlier layout runs them all. Never change a released step: add one.
 */
import type KeyvSqlite from '@keyv/sqlite';

/**
 * How a record of a Keyv table is read and written (storage.ts's KEYV_TEXT, given by it: this
 * module imports nothing of storage.ts, which loads it). The table names below are literal: a
 * migration is history, it keeps the names it was written with.
 */
export interface KeyvText {
  serialize(data: unknown): string;
  deserialize<T>(text: string): T;
}

export interface Migration {
  /** The schema it brings the file to. */
  to: number;
  /** What it does, for the docs and the tests. */
  what: string;
  run(table: KeyvSqlite, text: KeyvText): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    to: 1,
    what: 'results stored one row per observable (the analysis_results table), beside each analysis\'s header',
    run: async (table) => {
      await table.query(`CREATE TABLE IF NOT EXISTS analysis_results (id TEXT NOT NULL, idx INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (id, idx)) WITHOUT ROWID`);
    },
  },
  {
    to: 2,
    what: 'each result\'s verdict stored beside it (the verdict column; NULL in older rows: readers work it out)',
    run: async (table) => {
      const columns = (await table.query(`SELECT name FROM pragma_table_info('analysis_results')`)) as { name: string }[];
      if (!columns.some((column) => column.name === 'verdict')) await table.query(`ALTER TABLE analysis_results ADD COLUMN verdict TEXT`);
    },
  },
  {
    to: 3,
    what: 'analyses of the first format (results inside the header, format 1) moved to rows (format 2)',
    run: moveResultsOutOfHeaders,
  },
  {
    to: 4,
    what: 'which analyses held which observable (the observable_seen table), filled from the stored results',
    run: createSeenTable,
  },
];

/** Headers read at once by migration 3 (a header of the first format holds all its results). */
const HEADER_PAGE = 100;
/** Rows per INSERT statement (3 parameters each: under SQLite's oldest limit of 999). */
const INSERT_ROWS = 240;

/**
 * Each record of the analyses table that still holds `results` (the first format, before its
 * results had rows): its results written as rows (no verdict: none was stored), then its header
 * rewritten without them, as `format: 2`. Records are read and written as Keyv's text
 * in its envelope `{ value, expires }`, so a string such as `::1` keeps its escape.
 */
async function moveResultsOutOfHeaders(table: KeyvSqlite, text: KeyvText): Promise<void> {
  let after = '';
  for (;;) {
    const page = (await table.query(
      `SELECT key, value FROM analyses WHERE key > ? AND json_valid(value) AND json_type(value, '$.value.results') = 'array' ORDER BY key LIMIT ${HEADER_PAGE}`,
      after,
    )) as { key: string; value: string }[];
    if (page.length === 0) return;
    for (const { key, value } of page) {
      const envelope = text.deserialize<{ value: { results?: unknown[]; format?: number } }>(value);
      const { results, ...header } = envelope.value;
      const rows = (results ?? []).flatMap((result, index) => (result == null ? [] : [[index, JSON.stringify(result)] as const]));
      for (let i = 0; i < rows.length; i += INSERT_ROWS) {
        const chunk = rows.slice(i, i + INSERT_ROWS);
        await table.query(
          `INSERT OR REPLACE INTO analysis_results (id, idx, value, verdict) VALUES ${chunk.map(() => '(?, ?, ?, NULL)').join(', ')}`,
          chunk.flatMap(([index, text]) => [key, index, text]),
        );
      }
      await table.query('UPDATE analyses SET value = ? WHERE key = ?', text.serialize({ ...envelope, value: { ...header, format: 2 } }), key);
    }
    after = page[page.length - 1]!.key;
  }
}

/**
 * `observable_seen`, filled with the rows of the analyses already stored: each result row of
 * `analysis_results` (the observable and type in its JSON, its stored verdict, or `unknown` for a
 * row of a version that stored none) dated by its analysis's header, keyed as `seenKey` keys it
 * (SQLite's lower() lowers ASCII letters only, as it does). A file that has the table keeps it.
 */
async function createSeenTable(table: KeyvSqlite): Promise<void> {
  const exists = ((await table.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'observable_seen'`)) as unknown[]).length > 0;
  if (exists) return;
  await table.query(`CREATE TABLE observable_seen (value TEXT NOT NULL, at TEXT NOT NULL, id TEXT NOT NULL, verdict TEXT NOT NULL, PRIMARY KEY (value, at, id)) WITHOUT ROWID`);
  // Each header's created_at read once (a header holds its observables: it can be large).
  await table.query(`
    WITH heads AS MATERIALIZED (
      SELECT key AS id, json_extract(value, '$.value.created_at') AS at FROM analyses WHERE json_valid(value)
    ),
    held AS (
      SELECT heads.at AS at, r.id AS id, json_extract(r.value, '$.observable') AS observable, json_extract(r.value, '$.type') AS type,
             CASE WHEN json_valid(r.verdict) THEN json_extract(r.verdict, '$.verdict') END AS verdict
        FROM heads CROSS JOIN analysis_results AS r ON r.id = heads.id
       WHERE typeof(heads.at) = 'text' AND json_valid(r.value)
    )
    INSERT OR IGNORE INTO observable_seen (value, at, id, verdict)
    SELECT CASE WHEN type = 'URL' THEN observable ELSE lower(observable) END, at, id, coalesce(verdict, 'unknown')
      FROM held WHERE typeof(observable) = 'text'`);
}
