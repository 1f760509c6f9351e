/**
 * Past analyses for the history page: newest first, searched by observable, one page at a time.
 * The query runs in SQLite over the stored records, so a long history is never loaded whole.
 */
import { PAP_LEVELS, TLP_LEVELS } from '../marking/levels.js';
import type { HistoryQuery } from './analysis-store.js';
import type { Storage } from './storage.js';
import type { HistoryItemView, HistoryView, VerdictCountsView, VerdictName } from '../view/types.js';

/** Observables an item of the history shows (the count says how many there are). */
export const SHOWN_OBSERVABLES = 5;

const MATCH = `(?1 = '' OR EXISTS (
  SELECT 1 FROM json_each(analyses.value, '$.value.observables') AS o
  WHERE instr(lower(json_extract(o.value, '$.value')), ?1) > 0))`;
/** ?2: who started it (the history's "mine"), or NULL for everyone's. */
const MINE = `(?2 IS NULL OR json_extract(analyses.value, '$.value.started_by') = ?2)`;

/** `labelOf` turns an engine key into its display label. */
export async function historyPage(storage: Storage, q: HistoryQuery, labelOf: (key: string) => string = (key) => key): Promise<HistoryView> {
  const needle = q.query.trim().toLowerCase();
  const table = storage.analysesTable;
  const startedBy = q.startedBy ?? null;
  const [count] = (await table.query(`SELECT count(*) AS n FROM analyses WHERE ${MATCH} AND ${MINE}`, needle, startedBy)) as { n: number }[];
  const rows = (await table.query(
    `SELECT json_extract(value, '$.value.id') AS id,
            json_extract(value, '$.value.created_at') AS created_at,
            json_extract(value, '$.value.complete') AS complete,
            json_extract(value, '$.value.duration_ms') AS duration_ms,
            json_extract(value, '$.value.engines') AS engines,
            json_array_length(value, '$.value.observables') AS observable_count,
            json_extract(value, '$.value.verdicts') AS verdicts,
            json_extract(value, '$.value.started_by') AS started_by,
            json_extract(value, '$.value.tlp') AS tlp,
            json_extract(value, '$.value.pap') AS pap,
            (SELECT json_group_array(json_object('value', json_extract(o.value, '$.value'), 'type', json_extract(o.value, '$.type')))
               FROM (SELECT value FROM json_each(analyses.value, '$.value.observables') LIMIT ${SHOWN_OBSERVABLES}) AS o) AS observables
       FROM analyses WHERE ${MATCH} AND ${MINE}
      ORDER BY created_at DESC LIMIT ?3 OFFSET ?4`,
    needle,
    startedBy,
    q.perPage,
    (q.page - 1) * q.perPage,
  )) as Record<string, unknown>[];
  const items: HistoryItemView[] = rows.map((row) => {
    const engines = JSON.parse(String(row['engines'] ?? '[]')) as string[];
    return {
      id: String(row['id']),
      created_at: String(row['created_at']),
      complete: row['complete'] === 1,
      duration_ms: typeof row['duration_ms'] === 'number' ? row['duration_ms'] : null,
      engines,
      engine_labels: engines.map(labelOf),
      observable_count: Number(row['observable_count'] ?? 0),
      observables: JSON.parse(String(row['observables'] ?? '[]')) as { value: string; type: string }[],
      verdicts: row['complete'] === 1 ? parseVerdictCounts(row['verdicts']) : null,
      started_by: typeof row['started_by'] === 'string' ? row['started_by'] : null,
      ...storedMarking(row['tlp'], row['pap']),
    };
  });
  return { query: q.query, page: q.page, per_page: q.perPage, total: count?.n ?? 0, items };
}

const VERDICT_NAMES: readonly VerdictName[] = ['malicious', 'suspicious', 'clean', 'unknown'];

/** The stored counts (JSON text, or the value), or null when absent (older records) or not as written. */
export function parseVerdictCounts(text: unknown): VerdictCountsView | null {
  let value: unknown = text;
  if (typeof text === 'string') {
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const counts = VERDICT_NAMES.map((name) => v[name]);
  if (!counts.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)) return null;
  if (!VERDICT_NAMES.includes(v['worst'] as VerdictName)) return null;
  const [malicious, suspicious, clean, unknown] = counts as number[];
  return { malicious: malicious!, suspicious: suspicious!, clean: clean!, unknown: unknown!, worst: v['worst'] as VerdictName };
}

/** The stored TLP and PAP as the history shows them: null when absent (older records) or not a level. */
export function storedMarking(tlp: unknown, pap: unknown): Pick<HistoryItemView, 'tlp' | 'pap'> {
  return {
    tlp: (TLP_LEVELS as readonly unknown[]).includes(tlp) ? (tlp as HistoryItemView['tlp']) : null,
    pap: (PAP_LEVELS as readonly unknown[]).includes(pap) ? (pap as HistoryItemView['pap']) : null,
  };
}
