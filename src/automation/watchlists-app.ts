/**
 * The watchlists of an App (issue 36): their store where the app keeps its data (the SQLite file,
 * or Redis with `redis_url`), their service (watchlist-service.ts) on the app's analyses, and, for
 * `oas serve`, their schedule: a timer (watchlist-timer.ts), or with Redis the BullMQ job
 * schedulers and their worker (watchlist-queue.ts, loaded only then).
 */
import type { App } from '../app.js';
import { extractObservables } from '../observables/extract.js';
import type { AnalysisOrigin } from '../store/analysis-store.js';
import type { EventSink } from './events.js';
import { resultsLink } from './links.js';
import type { IntervalOf, QueueSchedule } from './watchlist-queue.js';
import { redisWatchlists } from './watchlist-store-redis.js';
import { sqliteWatchlists, type WatchlistStore } from './watchlist-store.js';
import { WatchlistService, type ScheduleHooks, type WatchlistServiceOptions } from './watchlist-service.js';
import { startWatchlistTimer, type ScheduleClock } from './watchlist-timer.js';
import type { WatchlistRun } from './watchlist.js';

export interface WatchlistsOptions {
  /** Where `watchlist.changed` goes; default the app's events (its webhooks when attached, else none). */
  events?: EventSink;
  /** The link of an analysis in an event; default the results page, absolute with public_url. */
  linkOf?: (analysisId: string) => string;
  /** The clock of runs' times and of the timer (tests: a virtual one). */
  clock?: ScheduleClock;
  /** `server` (default) for `oas serve`; `cli` for `oas watch` (its runs' analyses run in the terminal). */
  origin?: AnalysisOrigin;
  onRunDone?: (name: string, run: WatchlistRun) => void;
  pollMs?: WatchlistServiceOptions['pollMs'];
  /** With Redis: a watchlist's interval in ms for its job scheduler (default its `every`; tests shorten it). */
  intervalOf?: IntervalOf;
}

/** Where the app's watchlists are: Redis with `redis_url`, else its SQLite file. */
export function watchlistStoreOf(app: Pick<App, 'scale' | 'storage'>): WatchlistStore {
  if (app.scale) return redisWatchlists(app.scale.link.commands);
  return sqliteWatchlists(app.storage!.analysesTable);
}

const made = new WeakMap<object, { service: WatchlistService; close(): Promise<void> }>();

/** Keeps the job schedulers in step (Redis only; BullMQ is loaded at the first change). */
function lazyQueue(app: App, now: () => number, intervalOf: IntervalOf | undefined): ScheduleHooks & { get(): Promise<QueueSchedule>; close(): Promise<void> } {
  let schedule: Promise<QueueSchedule> | undefined;
  const get = () => (schedule ??= import('./watchlist-queue.js').then((q) => q.queueSchedule(app.scale!.link, now, intervalOf)));
  return {
    get,
    added: async (watchlist) => (await get()).added(watchlist),
    removed: async (name) => (await get()).removed(name),
    close: async () => {
      if (schedule) await (await schedule).close();
    },
  };
}

/**
 * The app's watchlists: made at the first call (with these options), the same service after
 * (the API, the schedule and the CLI share its runs).
 */
export function watchlistsOf(app: App, options: WatchlistsOptions = {}): WatchlistService {
  const known = made.get(app);
  if (known) return known.service;
  const now = options.clock ? () => options.clock!.now() : () => Date.now();
  const queue = app.scale ? lazyQueue(app, now, options.intervalOf) : undefined;
  const origin = options.origin ?? 'server';
  const service = new WatchlistService({
    services: {
      store: watchlistStoreOf(app),
      analyses: app.analyses,
      catalog: () => app.catalog,
      // The app's events (its webhooks, once `oas serve` attached them), read as each event fires.
      events: options.events ?? { emit: (event) => app.events.emit(event) },
      // Absolute with the setting public_url (the webhooks' links), else a path.
      linkOf: options.linkOf ?? ((id) => resultsLink(app.config.public_url, id)),
      now,
      origin,
      // The server's thread keeps answering while a large watchlist's text is read.
      extract: origin === 'server'
        ? async (text) => (await import('../observables/extract-pool.js')).extractObservablesOffThread(text)
        : async (text) => extractObservables(text),
    },
    defaultEngines: () => app.catalog.defaults().map((engine) => engine.id),
    hooks: queue,
    onRunDone: options.onRunDone,
    pollMs: options.pollMs,
  });
  made.set(app, { service, close: async () => queue?.close() });
  return service;
}

/** Stops following runs and closes the job schedulers' queue (the app closes the rest). */
export async function closeWatchlists(app: App): Promise<void> {
  const known = made.get(app);
  if (!known) return;
  made.delete(app);
  known.service.close();
  await known.close();
}

export interface RunningSchedule {
  stop(): Promise<void>;
}

/**
 * `oas serve`'s schedule of the watchlists: without Redis a timer; with Redis the job schedulers
 * made to match the watchlists, their worker, and now and then the runs other servers left
 * behind picked up. `onError` is told of what failed (a round, a job).
 */
export async function startWatchlistSchedule(app: App, options: WatchlistsOptions & { onError?: (error: unknown) => void } = {}): Promise<RunningSchedule> {
  const service = watchlistsOf(app, options);
  const onError = options.onError ?? (() => {});
  if (!app.scale) {
    const timer = startWatchlistTimer(service, { ...(options.clock ? { clock: options.clock } : {}), onError });
    return { stop: () => timer.stop() };
  }
  const { queueSchedule, startWatchlistWorker } = await import('./watchlist-queue.js');
  const schedule = queueSchedule(app.scale.link, Date.now, options.intervalOf);
  // The runs other servers left behind, and schedulers missing (a watchlist added while Redis
  // went away between its storing and its scheduler) or left behind: at start and every minute.
  const tidy = async () => {
    await service.recover();
    await schedule.sync(() => service.list());
  };
  await tidy().catch(onError); // Redis not there yet: the worker waits for it; the next round tidies
  const worker = startWatchlistWorker(app.scale.link, service, { onError });
  const round = setInterval(() => void tidy().catch(onError), 60_000);
  round.unref();
  return {
    stop: async () => {
      clearInterval(round);
      await worker.close();
      await schedule.close();
    },
  };
}
