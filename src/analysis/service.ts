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
import type { Storage } from '../store/storage.js';

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

export interface AnalysisRecord {
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
  progress: Progress;
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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export class AnalysisService {
  private readonly running = new Map<string, Promise<AnalysisRecord>>();
  /** Records of running analyses: fresher than the stored copy, which is saved every 250 ms. */
  private readonly live = new Map<string, AnalysisRecord>();

  constructor(
    private readonly catalog: Catalog,
    private readonly runner: EngineRunner,
    private readonly storage: Storage,
    private readonly limits: AnalysisLimits = {},
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
      throw new InputError('no observable found in the text: give a domain, IP address, URL, hash (MD5, SHA1, SHA256) or e-mail address');
    }
    const max = this.limits.maxObservables;
    if (max !== undefined && observables.length > max) {
      throw new TooManyObservablesError(`too many observables: the text holds ${observables.length}, more than max_observables (${max}); split it into smaller analyses or raise max_observables`);
    }
    return { observables, selections };
  }

  /** Records the analysis and starts it in the background. */
  async start(request: AnalysisRequest, prepared = this.prepare(request), origin: AnalysisOrigin = 'server'): Promise<AnalysisRecord> {
    const record: AnalysisRecord = {
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
      results: prepared.observables.map(() => null),
    };
    await this.storage.analyses.set(record.id, record);
    this.launch(record, prepared.selections);
    return record;
  }

  /** Runs an analysis to the end (the CLI), recording it like any other. */
  async runToEnd(request: AnalysisRequest, onProgress?: (p: Progress) => void, prepared = this.prepare(request)): Promise<AnalysisRecord> {
    const record = await this.start(request, prepared, 'cli');
    const done = this.running.get(record.id)!;
    if (onProgress) this.progressListeners.set(record.id, onProgress);
    try {
      return await done;
    } finally {
      this.progressListeners.delete(record.id);
    }
  }

  private readonly progressListeners = new Map<string, (p: Progress) => void>();

  async get(id: string): Promise<AnalysisRecord | undefined> {
    if (!UUID.test(id)) return undefined;
    return (await this.storage.analyses.get(id.toLowerCase())) as AnalysisRecord | undefined;
  }

  /** The freshest copy: the running analysis in memory, else the stored record. */
  async latest(id: string): Promise<AnalysisRecord | undefined> {
    return this.live.get(id.toLowerCase()) ?? this.get(id);
  }

  /**
   * Stored analyses the server accepted and that are not complete yet (read in SQLite: the
   * finished ones are never loaded). Those of `oas analyze` (or without an origin) are left out.
   */
  private async unfinished(): Promise<AnalysisRecord[]> {
    const rows = (await this.storage.analysesTable.query(
      "SELECT value FROM analyses WHERE json_extract(value, '$.value.complete') = 0 AND json_extract(value, '$.value.origin') = 'server'",
    )) as { value: string }[];
    return rows.map((row) => (JSON.parse(row.value) as { value: AnalysisRecord }).value);
  }

  /** Restarts the server's analyses that were accepted but not finished (the process stopped). */
  async resumePending(): Promise<number> {
    const pending = (await this.unfinished()).filter((r) => r.origin === 'server' && !this.running.has(r.id));
    for (const record of pending) {
      let selections: Selection[];
      try {
        selections = this.catalog.select(record.engines);
      } catch {
        selections = this.catalog.select(record.engines.filter((name) => this.catalog.find(name)));
      }
      this.launch(record, selections);
    }
    return pending.length;
  }

  /** Resolves when every running analysis has finished (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  private launch(record: AnalysisRecord, selections: Selection[]): void {
    const started = Date.now();
    let dirty = false;
    let saving: Promise<void> = Promise.resolve();
    const save = () => {
      dirty = false;
      saving = saving.then(() => this.storage.analyses.set(record.id, record)).then(() => {}, () => {});
    };
    const timer = setInterval(() => dirty && save(), SAVE_INTERVAL_MS);
    timer.unref();

    const work = this.runner
      .analyze(record.observables, selections, {
        ignoreCache: record.ignore_cache,
        onProgress: (p) => {
          record.progress = { done: p.done, total: p.total };
          this.progressListeners.get(record.id)?.(p);
        },
        onObservable: (index, result) => {
          record.results[index] = result;
          dirty = true;
          if (this.onEngineError && result.errors) {
            for (const [key, error] of Object.entries(result.errors)) {
              const engine = selections.find((s) => s.key === key)?.engine.id ?? key;
              try {
                this.onEngineError({ analysis: record.id, engine, error });
              } catch {
                // A log that cannot be written never stops an analysis.
              }
            }
          }
        },
      })
      .then((results) => {
        record.results = results;
      })
      .catch((error: unknown) => {
        // Never expected (engine failures are results), but an accepted analysis must finish.
        record.results = record.results.map((r, i) => r ?? {
          observable: record.observables[i]!.value,
          type: record.observables[i]!.type,
          reversed_success: false,
          errors: { analysis: `internal error: ${error instanceof Error ? error.message : String(error)}` },
        });
      })
      .then(async () => {
        clearInterval(timer);
        await saving;
        // One write carries the final results and complete=true together. The live record never
        // says complete: whoever sees complete=true can read the stored results.
        const final: AnalysisRecord = { ...record, complete: true, finished_at: new Date().toISOString(), duration_ms: Date.now() - started };
        await this.storage.analyses.set(record.id, final);
        return final;
      })
      .finally(() => {
        this.running.delete(record.id);
        this.live.delete(record.id);
      });
    this.running.set(record.id, work);
    this.live.set(record.id, record);
  }
}
