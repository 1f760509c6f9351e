/**
 * Where analyses live: their headers and their result rows. Two implementations: the SQLite file
 * (src/store/sqlite-analyses.ts, the default) and Redis (src/scale/redis-analyses.ts, with
 * `redis_url`). The analysis service only ever talks to this interface.
 */
import type { AnalysisHeader } from '../analysis/service.js';
import type { HistoryView } from '../view/types.js';

export interface HistoryQuery {
  /** Case-insensitive substring of any observable of the analysis; empty matches all. */
  query: string;
  /** 1-based. */
  page: number;
  perPage: number;
}

/** One finished observable: its index in the analysis and its result as JSON text. */
export interface ResultRow {
  idx: number;
  value: string;
}

export interface AnalysisStore {
  /** Creates or replaces an analysis's header. */
  putHeader(header: AnalysisHeader): Promise<void>;
  /** The stored header (id already lower-case and well-formed); undefined when unknown. */
  getHeader(id: string): Promise<AnalysisHeader | undefined>;
  /** Only whether it is complete (never the observables or the results); undefined when unknown. */
  completeOf(id: string): Promise<boolean | undefined>;
  /** Writes result rows, replacing any of the same index. */
  putRows(id: string, rows: readonly (readonly [number, string])[]): Promise<void>;
  /** Every saved row, in no particular order; `value` null for the indices in `have` (not read). */
  rows(id: string, have: ReadonlySet<number>): Promise<{ idx: number; value: string | null }[]>;
  /** Up to `limit` rows of index greater than `after`, in index order. */
  rowPage(id: string, after: number, limit: number): Promise<ResultRow[]>;
  /** The indices of the saved rows. */
  savedIndices(id: string): Promise<number[]>;
  /** The server's accepted analyses that are not complete (the finished ones are never loaded). */
  unfinished(): Promise<AnalysisHeader[]>;
  /** Forgets an analysis (its header, rows and place in the history). */
  remove(id: string): Promise<void>;
  /** One page of the history, newest first; `labelOf` turns an engine key into its label. */
  history(query: HistoryQuery, labelOf: (key: string) => string): Promise<HistoryView>;
}
