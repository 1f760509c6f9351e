/**
 * Where analyses live: their headers and their result rows. Two implementations: the SQLite file
 * (src/store/sqlite-analyses.ts, the default) and Redis (src/scale/redis-analyses.ts, with
 * `redis_url`). The analysis service only ever talks to this interface.
 */
import type { Pap, Tlp } from '../marking/levels.js';
import type { Observable } from '../observables/types.js';
import type { AnalysisSource } from '../files/types.js';
import type { ObservableResult, SeenBefore } from '../runner/result.js';
import type { Progress } from '../runner/types.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import type { HistoryView, VerdictCountsView } from '../view/types.js';
import type { SeenHistory, SeenRecord } from './seen.js';

/** What a Cortex job (issue 39) is beside its analysis: its analyzer, what it was asked, and whether it was deleted. */
export interface CortexJobFields {
  analyzer: string;
  data_type: string;
  data: string;
  message: string;
  parameters: Record<string, unknown>;
  deleted?: boolean;
}

/** Who started an analysis: `oas analyze` or `oas serve` (its API). */
export type AnalysisOrigin = 'cli' | 'server';

/**
 * What the analyses table keeps of an analysis: everything but the results, which are stored one
 * row per observable (`analysis_results`) as observables finish. Small next to the results: a poll,
 * a save or the history never reads or rewrites them.
 */
export interface AnalysisHeader {
  id: string;
  /** Only the server's own unfinished analyses are resumed. Absent in records of older versions. */
  origin?: AnalysisOrigin;
  created_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  /** Who started it: a user's name, `api_token`, `anonymous` (no authentication), `cli` (a local run). Absent in older records. */
  started_by?: string;
  /** Engine names as the caller gave them (they are the result keys). */
  engines: string[];
  ignore_cache: boolean;
  /** Analysed even what the allowlist covers (issue 38); absent: the allowlist applied. */
  ignore_allowlist?: boolean;
  /** Its TLP and PAP (issue 34): what its engines were allowed to receive. Absent in older records. */
  tlp?: Tlp;
  pap?: Pap;
  observables: Observable[];
  /** Its files, when it was made from files (issue 35): formats and sizes, never names or content. */
  source?: AnalysisSource;
  /**
   * Where its `analysis.completed` event also goes (issue 36): the request's `callback_url`, a host
   * of the setting `callback_hosts`. Kept here so that whichever process completes it (a Redis
   * worker) delivers it.
   */
  callback_url?: string;
  /** The watchlist it is a run of (issue 36), when a watchlist started it. */
  watchlist?: string;
  /** When it is a Cortex job (issue 39): what only Cortex knows of the job, so it outlives the process. */
  cortex?: CortexJobFields;
  complete: boolean;
  /** Stored: as of the start, and at the end. The running analysis's own copy is live. */
  progress: Progress;
  /** 2: results in `analysis_results`. Absent in records of older versions, which hold `results`. */
  format?: 2;
  /** Only in records of older versions: every result, in the record itself. */
  results?: (ObservableResult | null)[];
  /**
   * The verdicts of its observables, counted when it completed (the history shows them without
   * reading the results). Absent while it runs and in records of older versions.
   */
  verdicts?: VerdictCountsView;
}

/** An analysis with its results (the live view; records of older versions). */
export interface AnalysisRecord extends AnalysisHeader {
  /** In input order; null for an observable not finished yet. */
  results: (ObservableResult | null)[];
  /**
   * Beside `results`, by index: each result's verdict as stored when it finished; undefined where
   * none was stored (rows of older versions, results inside the record) or not read. Absent: none.
   */
  result_verdicts?: (ObservableVerdict | undefined)[];
}

export interface HistoryQuery {
  /** Case-insensitive substring of any observable of the analysis; empty matches all. */
  query: string;
  /** 1-based. */
  page: number;
  perPage: number;
  /** Only the analyses this user started (`started_by`, the history's "mine"); absent: everyone's. */
  startedBy?: string;
}

/** One finished observable as stored: its result, and beside it its verdict. */
export interface StoredResult {
  /** The result, JSON text. */
  value: string;
  /**
   * Its verdict and reasons, JSON text (`verdictText` of src/verdict/verdict.ts), worked out once
   * as the observable finished. Absent or null in rows written by older versions: a reader works it
   * out then.
   */
  verdict?: string | null | undefined;
}

/** One finished observable: its index in the analysis, its result and verdict as stored. */
export interface ResultRow extends StoredResult {
  idx: number;
}

/** A row to write: the observable's index, its result (JSON text) and its verdict (`verdictText`; none: readers work it out). */
export type RowWrite = readonly [index: number, value: string, verdict?: string];

export interface AnalysisStore {
  /** Creates or replaces an analysis's header. */
  putHeader(header: AnalysisHeader): Promise<void>;
  /** The stored header (id already lower-case and well-formed); undefined when unknown. */
  getHeader(id: string): Promise<AnalysisHeader | undefined>;
  /** Only whether it is complete (never the observables or the results); undefined when unknown. */
  completeOf(id: string): Promise<boolean | undefined>;
  /** Writes result rows (each with its verdict), replacing any of the same index. */
  putRows(id: string, rows: readonly RowWrite[]): Promise<void>;
  /** Every saved row, in no particular order; `value` (and `verdict`) null for the indices in `have` (not read). */
  rows(id: string, have: ReadonlySet<number>): Promise<{ idx: number; value: string | null; verdict?: string | null | undefined }[]>;
  /** Up to `limit` rows of index greater than `after`, in index order, each with its stored verdict. */
  rowPage(id: string, after: number, limit: number): Promise<ResultRow[]>;
  /** The indices of the saved rows. */
  savedIndices(id: string): Promise<number[]>;
  /** The server's accepted analyses that are not complete (the finished ones are never loaded). */
  unfinished(): Promise<AnalysisHeader[]>;
  /** Forgets an analysis (its header, rows and place in the history). */
  remove(id: string): Promise<void>;
  /** One page of the history, newest first; `labelOf` turns an engine key into its label. */
  history(query: HistoryQuery, labelOf: (key: string) => string): Promise<HistoryView>;
  /**
   * "Seen before" (issue 38, src/store/seen.ts): for each observable key (`seenKey`), the analyses
   * but `excludeAnalysisId` that held it (count, first, last, the last one's verdict and id); a
   * key none held is absent. Batched: a few hundred keys per query, never one per key.
   */
  seenBefore(keys: readonly string[], excludeAnalysisId?: string): Promise<Map<string, SeenBefore>>;
  /** Notes that these analyses held these observables (written again: replaced). */
  recordSeen(records: readonly SeenRecord[]): Promise<void>;
  /** The analyses that held the observable of key `key`, newest first, at most `limit`. */
  observableHistory(key: string, limit: number): Promise<SeenHistory>;
  /**
   * Cortex's job/_search (issue 39): the headers of the analyses started as Cortex jobs (those with
   * `cortex`) and not deleted, newest first, at most `limit`: every server's, since any restart.
   */
  cortexJobs(limit: number): Promise<AnalysisHeader[]>;
  /**
   * Marks a Cortex job deleted (`cortex.deleted`) without rewriting the rest of its header, which
   * a runner may be completing at the same moment; a header written after it keeps the mark.
   */
  markCortexDeleted(id: string): Promise<void>;
}
