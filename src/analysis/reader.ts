/**
 * Reading analyses back: a stored header, whether it is complete, the freshest copy with its
 * results (a running analysis's live state and saved rows), its results a page at a time, and the
 * history. Nothing here starts or changes an analysis (src/analysis/service.ts does).
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { AnalysisHeader, AnalysisRecord, AnalysisStore, HistoryQuery, RowWrite, StoredResult } from '../store/analysis-store.js';
import { parseVerdict, type ObservableVerdict } from '../verdict/verdict.js';
import type { HistoryView } from '../view/types.js';

/** Rows read at once when results are read back in order. */
export const READ_PAGE = 500;
/** Ids known to be complete (they stay complete): a poll for them reads nothing. */
const COMPLETE_IDS_KEPT = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Stands for the result of an observable the caller said it holds (`latest(id, have)`): never
 * read, never sent (the view leaves such observables out).
 */
const HELD: ObservableResult = Object.freeze({ observable: '', type: 'FQDN', reversed_success: false }) as ObservableResult;

/** A running analysis: its header (progress live) and its results not saved yet. */
export interface LiveAnalysis {
  header: AnalysisHeader;
  /** Index -> its row (result JSON and verdict), until the row is written. */
  unsaved: Map<number, RowWrite>;
}

export class AnalysisReader {
  /** Ids seen complete, oldest first. */
  private readonly completeIds = new Set<string>();

  constructor(
    /** For the engines' labels of the history (replaced with the catalog of a reloaded configuration). */
    public catalog: Catalog,
    private readonly store: AnalysisStore,
    /** The analyses this process runs, by id: their live state. */
    private readonly live: ReadonlyMap<string, LiveAnalysis>,
    /** Whether this process runs the analysis. */
    private readonly isRunning: (id: string) => boolean,
  ) {}

  /** The stored header (with the results inside for records of older versions). */
  async get(id: string): Promise<AnalysisHeader | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.store.getHeader(id.toLowerCase());
  }

  /** One page of the history, newest first. */
  history(query: HistoryQuery): Promise<HistoryView> {
    return this.store.history(query, (key) => this.catalog.find(key)?.label ?? key);
  }

  /**
   * Whether the analysis is complete; undefined for an unknown id. Reads nothing for an analysis
   * this process runs or has seen complete; else one field of its header.
   */
  async isComplete(id: string): Promise<boolean | undefined> {
    if (!UUID.test(id)) return undefined;
    const key = id.toLowerCase();
    if (this.isRunning(key)) return false;
    if (this.completeIds.has(key)) return true;
    const complete = await this.store.completeOf(key);
    if (complete) this.rememberComplete(key);
    return complete;
  }

  rememberComplete(id: string): void {
    this.completeIds.add(id);
    if (this.completeIds.size > COMPLETE_IDS_KEPT) this.completeIds.delete(this.completeIds.values().next().value!);
  }

  /**
   * The freshest copy with its results: the running analysis in memory and its saved rows, else
   * the stored record. `have`: indices the caller already holds; their results, when finished,
   * are a placeholder (the live view leaves them out) and are not read.
   */
  async latest(id: string, have: ReadonlySet<number> = new Set()): Promise<AnalysisRecord | undefined> {
    const key = id.toLowerCase();
    const running = this.live.get(key);
    const header = running?.header ?? (await this.get(id));
    if (!header) return undefined;
    if (header.results) return { ...header, results: header.results };
    const results: (ObservableResult | null)[] = header.observables.map(() => null);
    // Each result's verdict as stored when it finished (none in rows of older versions).
    const verdicts: (ObservableVerdict | undefined)[] = header.observables.map(() => undefined);
    const rows = await this.store.rows(header.id, have);
    for (const row of rows) {
      if (row.idx < 0 || row.idx >= results.length) continue;
      results[row.idx] = row.value === null ? HELD : (JSON.parse(row.value) as ObservableResult);
      if (row.value !== null) verdicts[row.idx] = parseVerdict(row.verdict);
    }
    // Live may have ended meanwhile: its unsaved results are then in the rows just read.
    for (const [index, [, text, verdict]] of running?.unsaved ?? []) {
      if (results[index] !== null) continue;
      results[index] = have.has(index) ? HELD : (JSON.parse(text) as ObservableResult);
      if (!have.has(index)) verdicts[index] = parseVerdict(verdict);
    }
    let progress = header.progress;
    if (!running && !header.complete) {
      // Stored while running: its progress is as of the start; the rows say how far it got.
      progress = { done: Math.min(progress.total, rows.length * header.engines.length), total: progress.total };
    }
    return { ...header, progress: { ...progress }, results, result_verdicts: verdicts };
  }

  /**
   * The results of an analysis in input order (one per finished observable), each as its JSON
   * text with the verdict stored beside it, a page at a time: the whole document is never built.
   * Records of older versions (results inside) have no stored verdicts.
   */
  async *storedResults(header: AnalysisHeader): AsyncGenerator<StoredResult[]> {
    if (header.results) {
      for (let i = 0; i < header.results.length; i += READ_PAGE) {
        yield header.results.slice(i, i + READ_PAGE).filter((r) => r !== null).map((r) => ({ value: JSON.stringify(r) }));
      }
      return;
    }
    for (let after = -1; ;) {
      const rows = await this.store.rowPage(header.id, after, READ_PAGE);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.idx;
      yield rows;
      if (rows.length < READ_PAGE) return;
    }
  }
}
