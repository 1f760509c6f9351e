/**
 * Analyses: validate a request (src/analysis/request.ts), record it, run it in the background
 * (src/analysis/launch.ts), and resume after a restart the pending analyses the server accepted,
 * so an accepted analysis always completes; one that `oas analyze` started and that was
 * interrupted is left as it was (re-running it would spend the engines' quotas a second time for
 * a result nobody is waiting for). Reading analyses back is src/analysis/reader.ts's job; the
 * service hands those calls on.
 */
import { randomUUID } from 'node:crypto';
import type { Catalog } from '../engine/catalog.js';
import type { Observable } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';
import type { EngineRunner } from '../runner/runner.js';
import type { Share } from '../runner/fair-queue.js';
import type { Progress, Selection } from '../runner/types.js';
import type { AnalysisHeader, AnalysisOrigin, AnalysisRecord, AnalysisStore, HistoryQuery, StoredResult } from '../store/analysis-store.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import type { HistoryView } from '../view/types.js';
import { launchAnalysis, type EngineErrorEvent, type LaunchServices } from './launch.js';
import { observableKey } from './seen.js';
import type { SeenHistory } from '../store/seen.js';
import { NO_KNOWLEDGE, type TeamKnowledge } from './knowledge.js';
import { AnalysisReader, type LiveAnalysis } from './reader.js';
import { prepareAnalysis, prepareAnalysisWith, type AnalysisLimits, type AnalysisRequest, type PreparedAnalysis } from './request.js';

/**
 * Runs accepted analyses somewhere else than in this process: with `redis_url`, each observable
 * becomes a job on the BullMQ queue that every worker takes from (src/scale/queue.ts).
 */
export interface AnalysisDispatcher {
  dispatch(header: AnalysisHeader, selections: readonly Selection[]): Promise<void>;
}

/**
 * Told of the analyses (`oas serve`'s metrics, src/server/metrics.ts, is one). Optional; a watcher
 * that throws never fails an analysis.
 */
export interface AnalysisObserver {
  /** An analysis was accepted (recorded, and started here or handed to the queue). */
  onStarted(origin: AnalysisOrigin, observables: number): void;
  /**
   * The analyses this process runs itself: +1 as one starts or resumes here, -1 as it ends. With
   * a dispatcher (`redis_url`) the server's analyses run as queue jobs, not here.
   */
  onRunning(change: 1 | -1): void;
}

const NO_PACE = () => {};

/** Told of each observable as it finishes, with its verdict (worked out once, stored with it). */
export type ObservableListener = (index: number, result: ObservableResult, judged: ObservableVerdict) => void;

/** Who is told of an analysis's progress and of each observable as it finishes. */
export interface AnalysisListeners {
  progress?: ((p: Progress) => void) | undefined;
  observable?: ObservableListener | undefined;
}

export class AnalysisService {
  private readonly running = new Map<string, Promise<AnalysisHeader>>();
  /** Running analyses: progress and results not saved yet. */
  private readonly live = new Map<string, LiveAnalysis>();
  private readonly reader: AnalysisReader;
  /** Read by each analysis as it starts: it keeps this catalog and runner to its end. */
  private launching: LaunchServices;

  constructor(
    private catalog: Catalog,
    runner: EngineRunner,
    private readonly store: AnalysisStore,
    private limits: AnalysisLimits = {},
    /** Where the server's analyses run when not here (the queue, with `redis_url`). */
    private readonly dispatcher?: AnalysisDispatcher,
    /** Told of each analysis accepted, started and ended (`oas serve`'s metrics). */
    private readonly observer?: AnalysisObserver,
  ) {
    this.reader = new AnalysisReader(catalog, store, this.live, (id) => this.running.has(id));
    this.launching = {
      catalog,
      runner,
      store,
      progressListener: (id) => this.progressListeners.get(id),
      observableListener: (id) => this.observableListeners.get(id),
      engineErrorListener: () => this.onEngineError,
      pace: (share) => this.pace?.(share) ?? NO_PACE,
      knowledge: () => this.knowledge?.snapshot() ?? Promise.resolve(NO_KNOWLEDGE),
    };
  }

  /** What the team already knows (issue 38): each analysis takes a snapshot as it starts. None: nothing. */
  knowledge: TeamKnowledge | undefined;

  /**
   * A configuration reloaded (SIGHUP): the analyses started from now on select their engines from
   * `catalog`, run on `runner` (its engine settings, keys and limits) and obey `limits`; those
   * running finish with the catalog and runner they started with.
   */
  reconfigure(catalog: Catalog, runner: EngineRunner, limits: AnalysisLimits): void {
    this.catalog = catalog;
    this.limits = limits;
    this.reader.catalog = catalog;
    this.launching = { ...this.launching, catalog, runner };
  }

  /** Called for every engine error of every analysis (`oas serve` logs them). */
  onEngineError: ((event: EngineErrorEvent) => void) | undefined;

  /**
   * Called as each analysis this process runs completes, with its header as stored (`oas serve`
   * hands it to the webhooks, src/automation/); a throw or a rejection never fails the analysis.
   */
  onCompleted: ((header: AnalysisHeader) => void | Promise<void>) | undefined;

  /**
   * A place for each observable of the analyses running here, before it starts, given back once
   * it is done (`oas serve` sets it: src/server/pacer.ts); unset, they start at once.
   */
  pace: ((share: Share) => (() => void) | Promise<() => void>) | undefined;

  /** Turns a request into observables and engine selections, or throws InputError. */
  prepare(request: AnalysisRequest): PreparedAnalysis {
    return prepareAnalysis(this.catalog, this.limits, request);
  }

  /**
   * The same, the text's observables extracted by `extract` (`oas serve`: by a worker thread when
   * the text is large, so that the server's thread keeps answering meanwhile).
   */
  prepareWith(request: AnalysisRequest, extract: (text: string) => Promise<Observable[]>): Promise<PreparedAnalysis> {
    return prepareAnalysisWith(this.catalog, this.limits, request, extract);
  }

  /** Records the analysis and starts it in the background. */
  async start(
    request: AnalysisRequest,
    prepared = this.prepare(request),
    origin: AnalysisOrigin = 'server',
    /** Told of its progress and finished observables from its first event on (runToEnd). */
    listeners: AnalysisListeners = {},
  ): Promise<AnalysisHeader> {
    const header: AnalysisHeader = {
      id: randomUUID(),
      origin,
      started_by: request.started_by ?? (origin === 'cli' ? 'cli' : 'anonymous'),
      created_at: new Date().toISOString(),
      finished_at: null,
      duration_ms: null,
      engines: prepared.selections.map((s) => s.key),
      ignore_cache: request.ignore_cache ?? false,
      ...(request.ignore_allowlist ? { ignore_allowlist: true } : {}),
      tlp: prepared.marking.tlp,
      pap: prepared.marking.pap,
      observables: prepared.observables,
      ...(prepared.source ? { source: prepared.source } : {}),
      ...(request.watchlist ? { watchlist: request.watchlist } : {}),
      ...(request.cortex ? { cortex: request.cortex } : {}),
      ...(prepared.callback_url ? { callback_url: prepared.callback_url } : {}),
      complete: false,
      progress: { done: 0, total: prepared.observables.length * prepared.selections.length },
      format: 2,
    };
    await this.store.putHeader(header);
    // Before it starts: a call can wait for its quota, and say so, before launch returns.
    if (listeners.progress) this.progressListeners.set(header.id, listeners.progress);
    if (listeners.observable) this.observableListeners.set(header.id, listeners.observable);
    if (origin === 'server' && this.dispatcher) {
      try {
        await this.dispatcher.dispatch(header, prepared.selections);
      } catch (error) {
        // Not accepted (the caller gets the error): it must not stay in the history as running.
        await this.store.remove(header.id).catch(() => {});
        throw error;
      }
    } else this.launch(header, prepared.selections, new Set());
    this.tell((observer) => observer.onStarted(origin, header.observables.length));
    return header;
  }

  /**
   * Runs an analysis to the end (the CLI), recording it like any other. Its results are read
   * back with `storedResults`.
   */
  async runToEnd(
    request: AnalysisRequest,
    onProgress?: (p: Progress) => void,
    prepared = this.prepare(request),
    onObservable?: ObservableListener,
  ): Promise<AnalysisHeader> {
    const header = await this.start(request, prepared, 'cli', { progress: onProgress, observable: onObservable });
    const done = this.running.get(header.id)!;
    try {
      return await done;
    } finally {
      this.progressListeners.delete(header.id);
      this.observableListeners.delete(header.id);
    }
  }

  private readonly progressListeners = new Map<string, (p: Progress) => void>();
  /** Called as each observable of an analysis finishes (`oas analyze --format jsonl`). */
  private readonly observableListeners = new Map<string, ObservableListener>();

  /**
   * Marks a Cortex job deleted in its stored header (issue 39: DELETE /cortex/api/job/<id>); its
   * analysis stays in the history. False when it is no Cortex job.
   */
  async deleteCortexJob(id: string): Promise<boolean> {
    const header = await this.store.getHeader(id);
    if (!header?.cortex) return false;
    await this.store.markCortexDeleted(id);
    return true;
  }

  /** The stored Cortex jobs not deleted, newest first, at most `limit` (every server's). */
  cortexJobs(limit: number): Promise<AnalysisHeader[]> {
    return this.store.cortexJobs(limit);
  }

  get(id: string): Promise<AnalysisHeader | undefined> {
    return this.reader.get(id);
  }

  /** One page of the history, newest first. */
  history(query: HistoryQuery): Promise<HistoryView> {
    return this.reader.history(query);
  }

  /**
   * The analyses that held an observable (issue 38: `oas history`, GET /ui/observables/<value>),
   * newest first, at most `limit`: `value` as written (refanged, compared as `seenKey` does).
   */
  observableHistory(value: string, limit: number): Promise<SeenHistory> {
    return this.store.observableHistory(observableKey(value), limit);
  }

  /** Whether the analysis is complete; undefined for an unknown id (see AnalysisReader). */
  isComplete(id: string): Promise<boolean | undefined> {
    return this.reader.isComplete(id);
  }

  /** The freshest copy with its results (see AnalysisReader). */
  latest(id: string, have?: ReadonlySet<number>): Promise<AnalysisRecord | undefined> {
    return this.reader.latest(id, have);
  }

  /** The results of an analysis in input order, as JSON texts with their stored verdicts, a page at a time. */
  storedResults(header: AnalysisHeader): AsyncGenerator<StoredResult[]> {
    return this.reader.storedResults(header);
  }

  /**
   * Restarts the server's analyses that were accepted but not finished (the process stopped).
   * Results already saved are kept; only the other observables run again. With a dispatcher
   * there is nothing to do: the queue keeps the jobs of an analysis until they are done.
   */
  async resumePending(): Promise<number> {
    if (this.dispatcher) return 0;
    const pending = (await this.store.unfinished()).filter((r) => r.origin === 'server' && !this.running.has(r.id));
    // Records of the first format (results inside) have rows since schema 3 (src/store/migrations.ts).
    for (const header of pending) {
      let selections: Selection[];
      try {
        selections = this.catalog.select(header.engines);
      } catch {
        selections = this.catalog.select(header.engines.filter((name) => this.catalog.find(name)));
      }
      const indices = await this.store.savedIndices(header.id);
      const saved = new Set(indices.filter((idx) => idx >= 0 && idx < header.observables.length));
      this.launch(header, selections, saved);
    }
    return pending.length;
  }

  /** Resolves when every running analysis has finished (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Runs the observables of `header` whose index is not in `saved`, in the background. */
  private launch(header: AnalysisHeader, selections: Selection[], saved: ReadonlySet<number>): void {
    const { id } = header;
    const { live, done } = launchAnalysis(this.launching, header, selections, saved);
    const work = done
      .then((final) => {
        this.reader.rememberComplete(id);
        this.completed(final);
        return final;
      })
      .finally(() => {
        this.running.delete(id);
        this.live.delete(id);
        this.tell((observer) => observer.onRunning(-1));
      });
    this.running.set(id, work);
    this.live.set(id, live);
    this.tell((observer) => observer.onRunning(1));
  }

  /** Tells `onCompleted`, if set, in the background; its failure never fails the analysis. */
  private completed(header: AnalysisHeader): void {
    if (!this.onCompleted) return;
    try {
      void Promise.resolve(this.onCompleted(header)).catch(() => {});
    } catch {
      // Whoever listens never fails an analysis.
    }
  }

  /** Tells the observer, if any; its failure never fails an analysis. */
  private tell(report: (observer: AnalysisObserver) => void): void {
    if (!this.observer) return;
    try {
      report(this.observer);
    } catch {
      // Metrics are never worth an analysis.
    }
  }
}
