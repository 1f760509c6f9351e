/**
 * Running one analysis in this process: its observables through the runner a window at a time,
 * each result's verdict worked out once and saved with it as a row (in batches), its verdicts
 * counted, its engine errors reported, and its header marked complete once every row is written.
 * Before they run, the earlier analyses that held its observables are looked up once (issue 38):
 * each result carries them as `seen`, and each finished observable is recorded with its row.
 */
import type { Catalog } from '../engine/catalog.js';
import type { Share } from '../runner/fair-queue.js';
import type { ObservableResult, SeenBefore } from '../runner/result.js';
import type { EngineRunner } from '../runner/runner.js';
import type { Progress, Selection } from '../runner/types.js';
import type { Observable } from '../observables/types.js';
import type { AnalysisHeader, AnalysisStore, RowWrite } from '../store/analysis-store.js';
import { verdictText, type ObservableVerdict } from '../verdict/verdict.js';
import { READ_PAGE, type LiveAnalysis } from './reader.js';
import { observableVerdict } from './rows.js';
import { recordedMarking } from '../marking/levels.js';
import { completedHeader, countRow, countVerdict, noVerdicts, type VerdictCounts } from './verdict-counts.js';
import { lookUpSeen, seenRecord } from './seen.js';
import type { SeenRecord } from '../store/seen.js';
import { NO_KNOWLEDGE, type KnowledgeSnapshot } from './knowledge.js';

const SAVE_INTERVAL_MS = 250;
/** Finished observables waiting for their save: past this many they are saved at once. */
const SAVE_BATCH = 500;
/**
 * Observables of one analysis handed to the runner at once (a sliding window): far more calls than
 * any concurrency limit lets run, so the engines are never starved, while the state of a
 * 10 000-observable analysis stays bounded.
 */
const OBSERVABLE_WINDOW = 256;

/**
 * Whose calls an analysis makes, for the fair order of the engines' slots: its owner is who
 * started it (a user's name, `anonymous`, `cli`; analyses recorded before `started_by` existed
 * count as `anonymous`), so one person's analyses share one part.
 */
export function shareOf(header: Pick<AnalysisHeader, 'id' | 'started_by'>): Share {
  return { owner: header.started_by ?? 'anonymous', analysis: header.id };
}

/** An engine error of an analysis, for the server's log (the reason is already redacted). */
export interface EngineErrorEvent {
  analysis: string;
  engine: string;
  error: string;
}

/** What a launched analysis uses; the listeners are looked up at each event. */
export interface LaunchServices {
  catalog: Catalog;
  runner: EngineRunner;
  store: AnalysisStore;
  progressListener(id: string): ((p: Progress) => void) | undefined;
  /** Told of each finished observable with its verdict (the one stored with it). */
  observableListener(id: string): ((index: number, result: ObservableResult, judged: ObservableVerdict) => void) | undefined;
  engineErrorListener(): ((event: EngineErrorEvent) => void) | undefined;
  /**
   * A place for each observable before it starts, given back (called) once it is done; at once, or
   * a promise of it (`oas serve` paces its analyses so that they never starve its HTTP surface:
   * src/server/pacer.ts). Without, every observable of the window starts at once.
   */
  pace?(share: Share): (() => void) | Promise<() => void>;
  /**
   * What the team knows as the analysis starts (issue 38): the allowlist its observables are
   * checked against, the analysts' marks they carry. None: nothing.
   */
  knowledge?(): Promise<KnowledgeSnapshot>;
}

/**
 * Runs the observables of `header` whose index is not in `saved`, saving each result as a row.
 * `live` is its state while it runs; `done` resolves with the completed header, stored.
 */
export function launchAnalysis(
  services: LaunchServices,
  header: AnalysisHeader,
  selections: readonly Selection[],
  saved: ReadonlySet<number>,
): { live: LiveAnalysis; done: Promise<AnalysisHeader> } {
  const { catalog, runner, store } = services;
  const started = Date.now();
  const { id, observables } = header;
  const live: LiveAnalysis = { header: { ...header, progress: { ...header.progress } }, unsaved: new Map() };
  const perObservable = selections.length;
  const share = shareOf(header);
  const total = observables.length * perObservable;
  let done = saved.size * perObservable;
  live.header.progress = { done, total };

  // Verdicts are counted as observables finish; those saved before a restart when it completes.
  const verdicts = noVerdicts();
  // Finished results are queued and written in batches (every SAVE_INTERVAL_MS, or at once past
  // SAVE_BATCH); each stays in `unsaved` until its row is written.
  let queue: RowWrite[] = [];
  // Beside each row, that this analysis held its observable (issue 38): written after the rows.
  let seenQueue: SeenRecord[] = [];
  const unrecorded: SeenRecord[] = [];
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    if (queue.length === 0) return;
    const batch = queue;
    const seenBatch = seenQueue;
    queue = [];
    seenQueue = [];
    saving = saving.then(() => store.putRows(id, batch)).then(() => {
      for (const row of batch) if (live.unsaved.get(row[0]) === row) live.unsaved.delete(row[0]);
    }, () => {}).then(() => store.recordSeen(seenBatch)).catch(() => {
      unrecorded.push(...seenBatch);
    });
  };
  const timer = setInterval(save, SAVE_INTERVAL_MS);
  timer.unref();

  // The runner's event (a wait, the lookup that finished) with the analysis's counts.
  const report = (event?: Progress) => {
    live.header.progress = { done, total };
    services.progressListener(id)?.({ ...event, done, total });
  };
  // The earlier analyses that held each observable, looked up before any runs (undefined: not known).
  let seenOf: ((index: number) => SeenBefore | null) | undefined;
  const finish = (index: number, result: ObservableResult) => {
    if (seenOf) result.seen = seenOf(index);
    // Its verdict, worked out here once: stored beside the result, every reader takes it from there.
    const judged = observableVerdict(result, catalog);
    const row: RowWrite = [index, JSON.stringify(result), verdictText(judged)];
    live.unsaved.set(index, row);
    queue.push(row);
    seenQueue.push(seenRecord(observables[index]!, header, judged.verdict));
    if (queue.length >= SAVE_BATCH) save();
    countVerdict(verdicts, judged.verdict);
    services.observableListener(id)?.(index, result, judged);
    const onEngineError = services.engineErrorListener();
    if (onEngineError && result.errors) {
      for (const [key, error] of Object.entries(result.errors)) {
        const engine = selections.find((s) => s.key === key)?.engine.id ?? key;
        try {
          onEngineError({ analysis: id, engine, error });
        } catch {
          // A log that cannot be written never stops an analysis.
        }
      }
    }
  };

  // An older record has none: the configuration's defaults.
  const marking = recordedMarking(header);
  let knowledge: KnowledgeSnapshot = NO_KNOWLEDGE;
  const runOne = async (index: number) => {
    const observable = observables[index]!;
    let counted = 0;
    try {
      const [result] = await runner.analyze([observable], selections, {
        ignoreCache: header.ignore_cache,
        ignoreAllowlist: header.ignore_allowlist,
        allowlist: knowledge.allowlist,
        marking,
        share,
        onProgress: (p) => {
          done += p.done - counted;
          counted = p.done;
          report(p);
        },
      });
      withMark(result!, knowledge, observable);
      finish(index, result!);
    } catch (error) {
      // Never expected (engine failures are results), but an accepted analysis must finish.
      done += perObservable - counted;
      report();
      finish(index, {
        observable: observable.value,
        type: observable.type,
        ...(observable.found_in ? { found_in: observable.found_in } : {}),
        reversed_success: false,
        errors: { analysis: `internal error: ${error instanceof Error ? error.message : String(error)}` },
      });
    }
  };

  const todo: number[] = [];
  for (let index = 0; index < observables.length; index++) if (!saved.has(index)) todo.push(index);
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const place = services.pace?.(share);
      const release = place instanceof Promise ? await place : place;
      try {
        if (next < todo.length) await runOne(todo[next++]!);
      } finally {
        release?.();
      }
    }
  };

  report();
  // Seen before: one lookup for every observable, before any runs (a resumed analysis's own rows
  // left out), side by side with the team's knowledge.
  const seenLookup = todo.length > 0 ? lookUpSeen(store, observables, id) : Promise.resolve(undefined);
  const work = Promise.all([services.knowledge?.() ?? NO_KNOWLEDGE, seenLookup])
    .then(([known, found]) => {
      knowledge = known;
      seenOf = found;
      return Promise.all(Array.from({ length: Math.min(OBSERVABLE_WINDOW, todo.length) }, worker));
    })
    .then(async () => {
      clearInterval(timer);
      save();
      await saving;
      // A batch whose write failed is still unsaved: written now, or the analysis stays
      // incomplete (and, from the server, resumes at the next start).
      if (live.unsaved.size > 0) await store.putRows(id, [...live.unsaved.values()].sort(([a], [b]) => a - b));
      if (unrecorded.length > 0) await store.recordSeen(unrecorded);
      if (saved.size > 0) await countSaved(store, catalog, id, saved, verdicts);
      // Every row is written before complete turns true: whoever sees it can read them all.
      const final = completedHeader({ ...header, progress: { done: total, total } }, verdicts, Date.now() - started);
      await store.putHeader(final);
      return final;
    })
    .finally(() => clearInterval(timer));
  return { live, done: work };
}

/** The analyst's mark on the observable, if one applies (issue 38): carried in its result. */
export function withMark(result: ObservableResult, knowledge: KnowledgeSnapshot, observable: Observable): void {
  const mark = knowledge.markOf(observable);
  if (mark) result.mark = mark;
}

/** Counts the verdicts of the results saved before a restart (indices `saved`), a page at a time. */
async function countSaved(store: AnalysisStore, catalog: Catalog, id: string, saved: ReadonlySet<number>, verdicts: VerdictCounts): Promise<void> {
  for (let after = -1; ;) {
    const rows = await store.rowPage(id, after, READ_PAGE);
    for (const row of rows) if (saved.has(row.idx)) countRow(verdicts, row, catalog);
    if (rows.length < READ_PAGE) return;
    after = rows[rows.length - 1]!.idx;
  }
}
