/**
 * Analyses: validate a request, record it, run it in the background, persist partial results as
 * observables finish and the final results before `complete` turns true. Pending analyses the
 * server accepted are resumed after a restart, so an accepted analysis always completes; one that
 * `oas analyze` started and that was interrupted is left as it was (re-running it would spend the
 * engines' quotas a second time for a result nobody is waiting for).
 */
import { randomUUID } from 'node:crypto';
import { UnknownEngineError, type Catalog } from '../engine/catalog.js';
import { extractObservables } from '../observables/extract.js';
import type { Observable } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';
import type { EngineRunner, Progress, Selection } from '../runner/runner.js';
import type { AnalysisStore, HistoryQuery } from '../store/analysis-store.js';
import { worse, type Verdict } from '../verdict/verdict.js';
import type { HistoryView, VerdictCountsView } from '../view/types.js';
import { observableVerdict } from './rows.js';

/** Bad input from the caller (HTTP 400, CLI exit 2). */
export class InputError extends Error {
  override name = 'InputError';
}

/** More observables than `max_observables`: the analysis is refused whole (HTTP 413, CLI exit 2). */
export class TooManyObservablesError extends InputError {
  override name = 'TooManyObservablesError';
}

export interface AnalysisLimits {
  /** Most observables one analysis may hold (setting max_observables). */
  maxObservables?: number | undefined;
}

/** An engine error of an analysis, for the server's log (the reason is already redacted). */
export interface EngineErrorEvent {
  analysis: string;
  engine: string;
  error: string;
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
  /** Engine names as the caller gave them (they are the result keys). */
  engines: string[];
  ignore_cache: boolean;
  observables: Observable[];
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
  verdicts?: VerdictCounts;
}

/** How many observables of an analysis got each verdict, and the most severe one. */
export type VerdictCounts = VerdictCountsView;

export function noVerdicts(): VerdictCounts {
  return { malicious: 0, suspicious: 0, clean: 0, unknown: 0, worst: 'unknown' };
}

function count(counts: VerdictCounts, verdict: Verdict): void {
  counts[verdict] += 1;
  counts.worst = worse(counts.worst, verdict);
}

/** Counts the verdict of one stored result (JSON text); a row that cannot be read judges nothing. */
export function countRow(counts: VerdictCounts, text: string, catalog: Catalog): void {
  let verdict: Verdict = 'unknown';
  try {
    verdict = observableVerdict(JSON.parse(text) as ObservableResult, catalog).verdict;
  } catch {
    // unknown
  }
  count(counts, verdict);
}

/** The header of a finished analysis: complete, timed, its verdicts counted (rows all written). */
export function completedHeader(header: AnalysisHeader, verdicts: VerdictCounts, durationMs: number): AnalysisHeader {
  const total = header.progress.total;
  const final: AnalysisHeader = {
    ...header,
    complete: true,
    finished_at: new Date().toISOString(),
    duration_ms: durationMs,
    progress: { done: total, total },
    format: 2,
    verdicts,
  };
  delete final.results;
  return final;
}

/**
 * Runs accepted analyses somewhere else than in this process: with `redis_url`, each observable
 * becomes a job on the BullMQ queue that every worker takes from (src/scale/queue.ts).
 */
export interface AnalysisDispatcher {
  dispatch(header: AnalysisHeader, selections: readonly Selection[]): Promise<void>;
}

/** An analysis with its results (the live view; records of older versions). */
export interface AnalysisRecord extends AnalysisHeader {
  /** In input order; null for an observable not finished yet. */
  results: (ObservableResult | null)[];
}

export interface AnalysisRequest {
  text: string;
  /** Engine ids or aliases; undefined means the default engines. */
  engines?: readonly string[] | undefined;
  ignore_cache?: boolean | undefined;
}

export interface PreparedAnalysis {
  observables: Observable[];
  selections: Selection[];
}

const SAVE_INTERVAL_MS = 250;
/** Finished observables waiting for their save: past this many they are saved at once. */
const SAVE_BATCH = 500;
/** Rows read at once when results are read back in order. */
export const READ_PAGE = 500;
/**
 * Observables of one analysis handed to the runner at once (a sliding window): far more calls than
 * any concurrency limit lets run, so the engines are never starved, while the state of a
 * 10 000-observable analysis stays bounded.
 */
const OBSERVABLE_WINDOW = 256;
/** Ids known to be complete (they stay complete): a poll for them reads nothing. */
const COMPLETE_IDS_KEPT = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Stands for the result of an observable the caller said it holds (`latest(id, have)`): never
 * read, never sent (the view leaves such observables out).
 */
const HELD: ObservableResult = Object.freeze({ observable: '', type: 'FQDN', reversed_success: false }) as ObservableResult;

/** A running analysis: its header (progress live) and its results not saved yet. */
interface Live {
  header: AnalysisHeader;
  /** Index -> result JSON, until its row is written. */
  unsaved: Map<number, string>;
}

export class AnalysisService {
  private readonly running = new Map<string, Promise<AnalysisHeader>>();
  /** Running analyses: progress and results not saved yet. */
  private readonly live = new Map<string, Live>();
  /** Ids seen complete, oldest first. */
  private readonly completeIds = new Set<string>();

  constructor(
    private readonly catalog: Catalog,
    private readonly runner: EngineRunner,
    private readonly store: AnalysisStore,
    private readonly limits: AnalysisLimits = {},
    /** Where the server's analyses run when not here (the queue, with `redis_url`). */
    private readonly dispatcher?: AnalysisDispatcher,
  ) {}

  /** Called for every engine error of every analysis (`oas serve` logs them). */
  onEngineError: ((event: EngineErrorEvent) => void) | undefined;

  /** Turns a request into observables and engine selections, or throws InputError. */
  prepare(request: AnalysisRequest): PreparedAnalysis {
    const names = request.engines ?? this.catalog.defaults().map((e) => e.id);
    if (names.length === 0) throw new InputError('no engine selected: give at least one engine');
    let selections: Selection[];
    try {
      selections = this.catalog.select(names);
    } catch (error) {
      if (error instanceof UnknownEngineError) throw new InputError(error.message);
      throw error;
    }
    if (selections.length === 0) throw new InputError('no engine selected: give at least one engine');
    const observables = extractObservables(request.text);
    if (observables.length === 0) {
      throw new InputError('no observable found in the text: give a domain, IP address, URL, hash (MD5, SHA1, SHA256), e-mail address or browser extension id');
    }
    const max = this.limits.maxObservables;
    if (max !== undefined && observables.length > max) {
      throw new TooManyObservablesError(`too many observables: the text holds ${observables.length}, more than max_observables (${max}); split it into smaller analyses or raise max_observables`);
    }
    return { observables, selections };
  }

  /** Records the analysis and starts it in the background. */
  async start(request: AnalysisRequest, prepared = this.prepare(request), origin: AnalysisOrigin = 'server'): Promise<AnalysisHeader> {
    const header: AnalysisHeader = {
      id: randomUUID(),
      origin,
      created_at: new Date().toISOString(),
      finished_at: null,
      duration_ms: null,
      engines: prepared.selections.map((s) => s.key),
      ignore_cache: request.ignore_cache ?? false,
      observables: prepared.observables,
      complete: false,
      progress: { done: 0, total: prepared.observables.length * prepared.selections.length },
      format: 2,
    };
    await this.store.putHeader(header);
    if (origin === 'server' && this.dispatcher) {
      try {
        await this.dispatcher.dispatch(header, prepared.selections);
      } catch (error) {
        // Not accepted (the caller gets the error): it must not stay in the history as running.
        await this.store.remove(header.id).catch(() => {});
        throw error;
      }
    } else this.launch(header, prepared.selections, new Set());
    return header;
  }

  /**
   * Runs an analysis to the end (the CLI), recording it like any other. Its results are read
   * back with `resultTexts`.
   */
  async runToEnd(
    request: AnalysisRequest,
    onProgress?: (p: Progress) => void,
    prepared = this.prepare(request),
    onObservable?: (index: number, result: ObservableResult) => void,
  ): Promise<AnalysisHeader> {
    const header = await this.start(request, prepared, 'cli');
    const done = this.running.get(header.id)!;
    if (onProgress) this.progressListeners.set(header.id, onProgress);
    if (onObservable) this.observableListeners.set(header.id, onObservable);
    try {
      return await done;
    } finally {
      this.progressListeners.delete(header.id);
      this.observableListeners.delete(header.id);
    }
  }

  private readonly progressListeners = new Map<string, (p: Progress) => void>();
  /** Called as each observable of an analysis finishes (`oas analyze --format jsonl`). */
  private readonly observableListeners = new Map<string, (index: number, result: ObservableResult) => void>();

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
    if (this.running.has(key)) return false;
    if (this.completeIds.has(key)) return true;
    const complete = await this.store.completeOf(key);
    if (complete) this.rememberComplete(key);
    return complete;
  }

  private rememberComplete(id: string): void {
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
    const rows = await this.store.rows(header.id, have);
    for (const row of rows) {
      if (row.idx >= 0 && row.idx < results.length) results[row.idx] = row.value === null ? HELD : (JSON.parse(row.value) as ObservableResult);
    }
    // Live may have ended meanwhile: its unsaved results are then in the rows just read.
    for (const [index, text] of running?.unsaved ?? []) {
      if (results[index] === null) results[index] = have.has(index) ? HELD : (JSON.parse(text) as ObservableResult);
    }
    let progress = header.progress;
    if (!running && !header.complete) {
      // Stored while running: its progress is as of the start; the rows say how far it got.
      progress = { done: Math.min(progress.total, rows.length * header.engines.length), total: progress.total };
    }
    return { ...header, progress: { ...progress }, results };
  }

  /**
   * The results of an analysis in input order, as JSON texts (one per finished observable), a
   * page at a time: the whole document is never built.
   */
  async *resultTexts(header: AnalysisHeader): AsyncGenerator<string[]> {
    if (header.results) {
      for (let i = 0; i < header.results.length; i += READ_PAGE) {
        yield header.results.slice(i, i + READ_PAGE).filter((r) => r !== null).map((r) => JSON.stringify(r));
      }
      return;
    }
    for (let after = -1; ;) {
      const rows = await this.store.rowPage(header.id, after, READ_PAGE);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.idx;
      yield rows.map((row) => row.value);
      if (rows.length < READ_PAGE) return;
    }
  }

  /**
   * Restarts the server's analyses that were accepted but not finished (the process stopped).
   * Results already saved are kept; only the other observables run again. With a dispatcher
   * there is nothing to do: the queue keeps the jobs of an analysis until they are done.
   */
  async resumePending(): Promise<number> {
    if (this.dispatcher) return 0;
    const pending = (await this.store.unfinished()).filter((r) => r.origin === 'server' && !this.running.has(r.id));
    for (const stored of pending) {
      let selections: Selection[];
      try {
        selections = this.catalog.select(stored.engines);
      } catch {
        selections = this.catalog.select(stored.engines.filter((name) => this.catalog.find(name)));
      }
      const header = await this.migrate(stored);
      const indices = await this.store.savedIndices(header.id);
      const saved = new Set(indices.filter((idx) => idx >= 0 && idx < header.observables.length));
      this.launch(header, selections, saved);
    }
    return pending.length;
  }

  /** A record of an older version (results inside) as a header and rows: the rows first. */
  private async migrate(record: AnalysisHeader): Promise<AnalysisHeader> {
    const { results, ...header } = record;
    if (!results) return record;
    const rows: [number, string][] = [];
    results.forEach((result, index) => {
      if (result) rows.push([index, JSON.stringify(result)]);
    });
    await this.store.putRows(record.id, rows);
    const migrated: AnalysisHeader = { ...header, format: 2 };
    await this.store.putHeader(migrated);
    return migrated;
  }

  /** Counts the verdicts of the results saved before a restart (indices `saved`), a page at a time. */
  private async countSaved(id: string, saved: ReadonlySet<number>, verdicts: VerdictCounts): Promise<void> {
    for (let after = -1; ;) {
      const rows = await this.store.rowPage(id, after, READ_PAGE);
      for (const row of rows) if (saved.has(row.idx)) countRow(verdicts, row.value, this.catalog);
      if (rows.length < READ_PAGE) return;
      after = rows[rows.length - 1]!.idx;
    }
  }

  /** Resolves when every running analysis has finished (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Runs the observables of `header` whose index is not in `saved`, saving each result as a row. */
  private launch(header: AnalysisHeader, selections: Selection[], saved: ReadonlySet<number>): void {
    const started = Date.now();
    const { id, observables } = header;
    const live: Live = { header: { ...header, progress: { ...header.progress } }, unsaved: new Map() };
    const perObservable = selections.length;
    const total = observables.length * perObservable;
    let done = saved.size * perObservable;
    live.header.progress = { done, total };

    // Verdicts are counted as observables finish; those saved before a restart when it completes.
    const verdicts = noVerdicts();
    // Finished results are queued and written in batches (every SAVE_INTERVAL_MS, or at once past
    // SAVE_BATCH); each stays in `unsaved` until its row is written.
    let queue: [number, string][] = [];
    let saving: Promise<void> = Promise.resolve();
    const save = () => {
      if (queue.length === 0) return;
      const batch = queue;
      queue = [];
      saving = saving.then(() => this.store.putRows(id, batch)).then(() => {
        for (const [index, text] of batch) if (live.unsaved.get(index) === text) live.unsaved.delete(index);
      }, () => {});
    };
    const timer = setInterval(save, SAVE_INTERVAL_MS);
    timer.unref();

    // The runner's event (a wait, the lookup that finished) with the analysis's counts.
    const report = (event?: Progress) => {
      live.header.progress = { done, total };
      this.progressListeners.get(id)?.({ ...event, done, total });
    };
    const finish = (index: number, result: ObservableResult) => {
      const text = JSON.stringify(result);
      live.unsaved.set(index, text);
      queue.push([index, text]);
      if (queue.length >= SAVE_BATCH) save();
      count(verdicts, observableVerdict(result, this.catalog).verdict);
      this.observableListeners.get(id)?.(index, result);
      if (this.onEngineError && result.errors) {
        for (const [key, error] of Object.entries(result.errors)) {
          const engine = selections.find((s) => s.key === key)?.engine.id ?? key;
          try {
            this.onEngineError({ analysis: id, engine, error });
          } catch {
            // A log that cannot be written never stops an analysis.
          }
        }
      }
    };

    const runOne = async (index: number) => {
      const observable = observables[index]!;
      let counted = 0;
      try {
        const [result] = await this.runner.analyze([observable], selections, {
          ignoreCache: header.ignore_cache,
          onProgress: (p) => {
            done += p.done - counted;
            counted = p.done;
            report(p);
          },
        });
        finish(index, result!);
      } catch (error) {
        // Never expected (engine failures are results), but an accepted analysis must finish.
        done += perObservable - counted;
        report();
        finish(index, {
          observable: observable.value,
          type: observable.type,
          reversed_success: false,
          errors: { analysis: `internal error: ${error instanceof Error ? error.message : String(error)}` },
        });
      }
    };

    const todo: number[] = [];
    for (let index = 0; index < observables.length; index++) if (!saved.has(index)) todo.push(index);
    let next = 0;
    const worker = async () => {
      while (next < todo.length) await runOne(todo[next++]!);
    };

    report();
    const work = Promise.all(Array.from({ length: Math.min(OBSERVABLE_WINDOW, todo.length) }, worker))
      .then(async () => {
        clearInterval(timer);
        save();
        await saving;
        // A batch whose write failed is still unsaved: written now, or the analysis stays
        // incomplete (and, from the server, resumes at the next start).
        if (live.unsaved.size > 0) await this.store.putRows(id, [...live.unsaved].sort(([a], [b]) => a - b));
        if (saved.size > 0) await this.countSaved(id, saved, verdicts);
        // Every row is written before complete turns true: whoever sees it can read them all.
        const final = completedHeader({ ...header, progress: { done: total, total } }, verdicts, Date.now() - started);
        await this.store.putHeader(final);
        this.rememberComplete(id);
        return final;
      })
      .finally(() => {
        clearInterval(timer);
        this.running.delete(id);
        this.live.delete(id);
      });
    this.running.set(id, work);
    this.live.set(id, live);
  }
}
