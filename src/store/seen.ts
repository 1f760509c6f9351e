/**
 * "Seen before" (issue 38): which analyses held which observable, kept beside the analyses (the
 * SQLite file's `observable_seen` table, created and filled by src/store/storage.ts, read and
 * written by src/store/sqlite-analyses.ts; Redis's keys in src/scale/redis-analyses.ts), so that
 * an analysis can say of each of its observables how often the team's store held it before, since
 * when, and what it was judged the last time (`seenText` of src/analysis/rows.ts says it in one
 * line); and `oas history VALUE` can list them. This module loads nothing: its types and the key.
 *
 * The index is keyed by the observable as oas compares it: case-insensitive, except a URL, whose
 * path and query are not (`seenKey`). Only ASCII letters are lowered, as SQLite's lower() does,
 * so the rows filled from older analyses in SQL (storage.ts) have the same keys as those recorded
 * as analyses finish.
 */
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

/** Keys per lookup (one SQLite statement, one Redis script): a few hundred, never one per key. */
export const SEEN_LOOKUP_BATCH = 500;
