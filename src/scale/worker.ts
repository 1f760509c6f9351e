/**
 * A worker: takes observable jobs from the queue (src/scale/queue.ts), runs the engines the job
 * names with this process's runner (its own credentials, the team's cache and quotas), writes the
 * observable's row with its verdict, and completes the analysis when the last row is written.
 * `oas worker` is one; `oas serve` runs one too unless `--no-worker`.
 *
 * Safe to run twice: a job whose row already exists (its worker died after writing it) calls no
 * engine again, and completing is idempotent. So a job taken over after a SIGKILL neither loses
 * nor duplicates an observable.
 *
 * Each row goes with the record that its analysis held the observable (issue 38, in the same
 * transaction); its result carries `seen`, what the earlier analyses said of it, as the job
 * brought it from the queue (looked up for the whole analysis when it was queued), or looked up
 * here for a job of an older version.
 *
 * The analysis's webhooks (issue 36, `onCompleted`: src/automation/) are queued by the job that
 * completes it, after the header is marked complete and before the job ends: a job taken over
 * after its worker died there queues them again (they are one delivery each: their ids are the
 * same), so an analysis's events are never lost.
 */
import { Worker, type Job } from 'bullmq';
import type { App } from '../app.js';
import { shareOf, withMark, type EngineErrorEvent } from '../analysis/launch.js';
import { NO_KNOWLEDGE, type KnowledgeSnapshot, type TeamKnowledge } from '../analysis/knowledge.js';
import { READ_PAGE } from '../analysis/reader.js';
import { observableVerdict } from '../analysis/rows.js';
import { completedHeader, countRow, noVerdicts } from '../analysis/verdict-counts.js';
import type { AnalysisHeader } from '../store/analysis-store.js';
import { UnknownEngineError, type Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { EngineRunner } from '../runner/runner.js';
import type { Selection } from '../runner/types.js';
import { verdictText, type ObservableVerdict } from '../verdict/verdict.js';
import { seenRecord } from '../analysis/seen.js';
import { seenKey, type SeenRecord } from '../store/seen.js';
import { recordedMarking } from '../marking/levels.js';
import { jobBackoffMs, QUEUE_NAME, QUEUE_PREFIX, type ObservableJob } from './queue.js';
import type { RedisAnalysisStore } from './redis-analyses.js';
import type { RedisLink } from './redis.js';

export interface WorkerOptions {
  link: RedisLink;
  store: RedisAnalysisStore;
  /** Read as each job starts (a reloaded configuration's, from the next job on). */
  readonly runner: EngineRunner;
  readonly catalog: Catalog;
  /** Observables analysed at once (`--concurrency`, setting worker_concurrency). */
  concurrency: number;
  /** BullMQ's lock on a job (setting job_lock_ms); a dead worker's jobs move on after it lapses. */
  lockMs: number;
  onEngineError?: ((event: EngineErrorEvent) => void) | undefined;
  /**
   * What the team knows as an analysis's first observable starts here (issue 38): read once per
   * analysis (`knowledgePerAnalysis`); none: nothing.
   */
  knowledge?: ((analysisId: string) => Promise<KnowledgeSnapshot>) | undefined;
  /** Told of each analysis this worker completes, with its stored header (the webhooks); awaited: a failure fails the job, which is tried again. */
  onCompleted?: ((header: AnalysisHeader) => Promise<void> | void) | undefined;
}

/** How long a stopping server or worker finishes the jobs it holds before letting go of them. */
export const STOP_GRACE_MS = 30_000;

export interface RunningWorker {
  /** Jobs being worked on now. */
  active(): number;
  /**
   * Stops taking jobs and finishes those it holds; past `graceMs` (default STOP_GRACE_MS), or at
   * once while Redis is unreachable, it lets go of them instead (their locks lapse and another
   * worker takes them over).
   */
  close(graceMs?: number): Promise<void>;
}

/** The worker of an app with `redis_url` (`oas worker`, and `oas serve` without --no-worker). */
export function startAppWorker(app: App, logger?: { engineError(entry: EngineErrorEvent): void }): RunningWorker {
  const { link, store } = app.scale!;
  return startWorker({
    link,
    store: store!,
    // The app's current ones: after a reload (SIGHUP), the jobs taken from then on use the new
    // configuration's; a job already running finishes with the runner it started with.
    get runner() {
      return app.runner;
    },
    get catalog() {
      return app.catalog;
    },
    concurrency: app.config.worker_concurrency,
    lockMs: app.config.job_lock_ms,
    onEngineError: logger ? (entry) => logger.engineError(entry) : undefined,
    knowledge: knowledgePerAnalysis(() => app.analyses.knowledge),
    // The webhooks the app has when the analysis completes (src/automation/attach.ts), if any.
    onCompleted: (header) => app.webhooks?.analysisCompleted(header),
  });
}

export function startWorker(options: WorkerOptions): RunningWorker {
  const { store } = options;
  let active = 0;
  const worker = new Worker<ObservableJob>(QUEUE_NAME, async (job: Job<ObservableJob>) => {
    active++;
    try {
      await processJob(job.data, store, options.runner, options.catalog, options.onEngineError, options.onCompleted, options.knowledge);
    } finally {
      active--;
    }
  }, {
    connection: options.link.blocking(),
    prefix: QUEUE_PREFIX,
    concurrency: options.concurrency,
    lockDuration: options.lockMs,
    stalledInterval: options.lockMs,
    // A job is taken over after each death of its worker; only one that keeps killing its
    // workers (over and over) is given up.
    maxStalledCount: 10,
    settings: { backoffStrategy: (attemptsMade: number) => jobBackoffMs(attemptsMade) },
  });
  worker.on('error', () => {}); // Redis errors are told by the link (src/scale/redis.ts)
  // A job that failed its last try (Redis gone for all of them) still ends its observable, with
  // the reason, so that the analysis completes.
  worker.on('failed', (job, error) => {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    void giveUp(job.data, error, store, options.catalog, options.onCompleted).catch(() => {});
  });
  const within = <T>(promise: Promise<T>, ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), ms);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  };
  return {
    active: () => active,
    close: async (graceMs = STOP_GRACE_MS) => {
      // Without Redis nothing held can be finished (a result cannot be written): let go at once.
      const outcome = options.link.ready() ? await within(worker.close().then(() => 'done' as const), graceMs) : 'late';
      if (outcome === 'late') await within(worker.close(true).catch(() => {}), 2_000);
    },
  };
}

/** The observable's places in its file(s), for its result (absent for a pasted text). */
const foundIn = (job: ObservableJob) => (job.observable.found_in ? { found_in: job.observable.found_in } : {});

/** The row of an observable whose job was given up: every engine null, the reason in `errors`. */
async function giveUp(job: ObservableJob, error: Error, store: RedisAnalysisStore, catalog: Catalog, onCompleted?: WorkerOptions['onCompleted']): Promise<void> {
  if (await store.hasRow(job.analysis, job.index)) return;
  const result: ObservableResult = { observable: job.observable.value, type: job.observable.type, ...foundIn(job), reversed_success: false };
  for (const name of job.engines) result[name] = null;
  result.errors = { analysis: `given up after repeated failures: ${error.message.split('\n')[0]!.slice(0, 200)}` };
  if (job.seen !== undefined) result.seen = job.seen;
  const judged = observableVerdict(result, catalog);
  const count = await store.addRow(job.analysis, job.index, JSON.stringify(result), verdictText(judged), await recordOf(job, store, judged));
  if (count >= job.total) await complete(job.analysis, store, catalog, onCompleted);
}

/** One observable of one analysis: its row, then the analysis's completion when it is the last. */
export async function processJob(
  job: ObservableJob,
  store: RedisAnalysisStore,
  runner: EngineRunner,
  catalog: Catalog,
  onEngineError?: (event: EngineErrorEvent) => void,
  onCompleted?: WorkerOptions['onCompleted'],
  knowledgeOf?: WorkerOptions['knowledge'],
): Promise<void> {
  let count: number;
  if (await store.hasRow(job.analysis, job.index)) {
    count = await store.rowCount(job.analysis);
  } else {
    const knowledge = (await knowledgeOf?.(job.analysis)) ?? NO_KNOWLEDGE;
    const result = await analyse(job, runner, catalog, knowledge);
    withMark(result, knowledge, job.observable);
    const seen = job.seen !== undefined ? job.seen : await seenHere(job, store);
    if (seen !== undefined) result.seen = seen;
    // Its verdict, worked out here once and stored beside it: readers take it from there.
    const judged = observableVerdict(result, catalog);
    count = await store.addRow(job.analysis, job.index, JSON.stringify(result), verdictText(judged), await recordOf(job, store, judged));
    if (onEngineError && result.errors) {
      for (const [key, error] of Object.entries(result.errors)) {
        try {
          onEngineError({ analysis: job.analysis, engine: catalog.find(key)?.id ?? key, error });
        } catch {
          // A log that cannot be written never stops an analysis.
        }
      }
    }
  }
  if (count >= job.total) await complete(job.analysis, store, catalog, onCompleted);
}

/** What the earlier analyses say of a job's observable, for a job queued without it; undefined when Redis cannot say. */
async function seenHere(job: ObservableJob, store: RedisAnalysisStore): Promise<ObservableResult['seen']> {
  const key = seenKey(job.observable.value, job.observable.type);
  try {
    return (await store.seenBefore([key], job.analysis)).get(key) ?? null;
  } catch {
    return undefined;
  }
}

/** That the job's analysis held its observable, judged so (dated from the analysis's header for an older job). */
async function recordOf(job: ObservableJob, store: RedisAnalysisStore, judged: ObservableVerdict): Promise<SeenRecord | undefined> {
  const at = job.created_at ?? (await store.createdAt(job.analysis));
  return at === undefined ? undefined : seenRecord(job.observable, { id: job.analysis, created_at: at }, judged.verdict);
}

async function analyse(job: ObservableJob, runner: EngineRunner, catalog: Catalog, knowledge: KnowledgeSnapshot): Promise<ObservableResult> {
  // Engines this worker does not know (another catalog, an older version) are that engine's error.
  const known = job.engines.filter((name) => catalog.find(name));
  let selections: Selection[] = [];
  try {
    selections = catalog.select(known);
  } catch (error) {
    if (!(error instanceof UnknownEngineError)) throw error;
  }
  let result: ObservableResult;
  try {
    const share = shareOf({ id: job.analysis, started_by: job.owner });
    // The analysis's marking: an engine above its TLP/PAP ceiling is not called here either.
    [result] = (await runner.analyze([job.observable], selections, { ignoreCache: job.ignore_cache, ignoreAllowlist: job.ignore_allowlist, allowlist: knowledge.allowlist, share, marking: recordedMarking(job) })) as [ObservableResult];
  } catch (error) {
    // Never expected (engine failures are results), but an accepted analysis must finish.
    result = { observable: job.observable.value, type: job.observable.type, ...foundIn(job), reversed_success: false, errors: { analysis: `internal error: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` } };
  }
  const unknown = job.engines.filter((name) => !known.includes(name));
  if (unknown.length === 0) return result;
  const ordered: ObservableResult = { observable: result.observable, type: result.type, ...(result.found_in ? { found_in: result.found_in } : {}), reversed_success: result.reversed_success };
  if (result.reversed_ip !== undefined) ordered.reversed_ip = result.reversed_ip;
  for (const name of job.engines) ordered[name] = result[name] ?? null;
  if (result.withheld) ordered.withheld = result.withheld;
  if (result.allowlisted) ordered.allowlisted = result.allowlisted;
  ordered.errors = { ...result.errors, ...Object.fromEntries(unknown.map((name) => [name, 'engine not available on the worker that ran this observable'])) };
  return ordered;
}

/**
 * Marks the analysis complete with its verdicts counted, unless it already is (atomically), then
 * tells `onCompleted` of the stored header (again, when a job run twice finds it complete: what it
 * queues is one delivery each).
 */
async function complete(id: string, store: RedisAnalysisStore, catalog: Catalog, onCompleted?: WorkerOptions['onCompleted']): Promise<void> {
  const header = await store.getHeader(id);
  if (!header) return;
  if (header.complete) {
    await onCompleted?.(header);
    return;
  }
  const verdicts = noVerdicts();
  for (let after = -1; ;) {
    const rows = await store.rowPage(id, after, READ_PAGE);
    for (const row of rows) countRow(verdicts, row, catalog);
    if (rows.length < READ_PAGE) break;
    after = rows[rows.length - 1]!.idx;
  }
  const final: AnalysisHeader = completedHeader(header, verdicts, Math.max(0, Date.now() - Date.parse(header.created_at)));
  // Two workers may get here at once (the same job run twice): one of them writes.
  const wrote = await store.completeOnce(final);
  if (!onCompleted) return;
  await onCompleted(wrote ? final : (await store.getHeader(id)) ?? final);
}

/** Analyses whose knowledge a worker keeps at once (the oldest is read again if it comes back). */
const KNOWN_ANALYSES = 64;

/**
 * The team's knowledge per analysis, read as its first observable starts on this worker and kept
 * for its others (one read per analysis, not per observable): an analysis sees the lists as they
 * were when it began here.
 */
export function knowledgePerAnalysis(knowledgeOf: () => TeamKnowledge | undefined): (analysisId: string) => Promise<KnowledgeSnapshot> {
  const known = new Map<string, Promise<KnowledgeSnapshot>>();
  return (analysisId) => {
    let snapshot = known.get(analysisId);
    if (!snapshot) {
      snapshot = knowledgeOf()?.snapshot() ?? Promise.resolve(NO_KNOWLEDGE);
      // A read that failed (Redis gone) is not kept: the job fails and is tried again.
      snapshot.catch(() => known.delete(analysisId));
      known.set(analysisId, snapshot);
      if (known.size > KNOWN_ANALYSES) known.delete(known.keys().next().value!);
    }
    return snapshot;
  };
}
