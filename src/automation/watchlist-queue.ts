/**
 * The schedule of the watchlists with `redis_url` (issue 36): one BullMQ job scheduler per
 * watchlist (`upsertJobScheduler`, id = its name, every = its interval) on the queue `watchlists`,
 * whose jobs every `oas serve` takes. BullMQ makes one job per interval, whatever the number of
 * servers: each interval runs once across all of them. A run is claimed in the store for its
 * interval (`scheduled_for`) before it starts, so a job taken over after its server died starts
 * no second analysis. While everything is down the next job waits in Redis; the first server back
 * takes it at once, and the scheduler's next one is aligned after now: a missed run runs once at
 * start, not once per interval missed.
 *
 * The scheduler of a new watchlist starts one interval on (its baseline ran when it was added);
 * a server at start makes one for any watchlist that has none (then it runs when due, at once if
 * overdue) and removes those of watchlists gone.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { InputError } from '../analysis/request.js';
import { QUEUE_PREFIX } from '../scale/queue.js';
import type { RedisLink } from '../scale/redis.js';
import type { ScheduleHooks, WatchlistService } from './watchlist-service.js';
import { busy } from './watchlist-service.js';
import { parseEvery, type Watchlist } from './watchlist.js';

/** BullMQ's keys: `oas:bull:watchlists:...`. */
export const WATCHLIST_QUEUE = 'watchlists';

interface WatchlistJob {
  watchlist: string;
}

/** The schedulers' jobs: kept a day when they fail (Redis gone while they ran), tried again meanwhile. */
const TEMPLATE_OPTIONS = { removeOnComplete: true, removeOnFail: { age: 86_400 }, attempts: 10, backoff: { type: 'exponential', delay: 2_000 } } as const;

export interface QueueSchedule extends ScheduleHooks {
  /**
   * Makes the schedulers match the watchlists `list` gives: one for each (kept as it is when it
   * exists), none for others. The schedulers are read first, then the watchlists: one added
   * meanwhile (stored, then its scheduler made) is never taken for a scheduler left behind.
   */
  sync(list: () => Promise<readonly Watchlist[]>): Promise<void>;
  close(): Promise<void>;
}

/** A watchlist's interval in milliseconds (its `every`; tests shorten it). */
export type IntervalOf = (watchlist: Watchlist) => number;

/** The job schedulers, on the commands connection (fails at once while Redis is down: the API's 503). */
export function queueSchedule(link: RedisLink, now: () => number = Date.now, intervalOf: IntervalOf = (w) => parseEvery(w.every)): QueueSchedule {
  let queue: Queue<WatchlistJob> | undefined;
  const open = () => {
    if (queue) return queue;
    queue = new Queue<WatchlistJob>(WATCHLIST_QUEUE, { connection: link.commands, prefix: QUEUE_PREFIX });
    queue.on('error', () => {}); // the caller gets the error
    return queue;
  };
  const upsert = async (watchlist: Watchlist, startAt: number) => {
    await open().upsertJobScheduler(watchlist.name, { every: intervalOf(watchlist), startDate: new Date(startAt) }, { name: 'watchlist', data: { watchlist: watchlist.name }, opts: TEMPLATE_OPTIONS });
  };
  return {
    added: (watchlist) => upsert(watchlist, now() + intervalOf(watchlist)),
    removed: async (name) => {
      await open().removeJobScheduler(name);
    },
    sync: async (list) => {
      const current = open();
      const known = new Set((await current.getJobSchedulers(0, -1)).map((s) => s.key));
      for (const watchlist of await list()) {
        // An existing scheduler keeps its slots (BullMQ ignores startDate then): nothing moves.
        if (!known.has(watchlist.name)) await upsert(watchlist, Math.max(now(), watchlist.last_run === null ? now() : Date.parse(watchlist.last_run) + intervalOf(watchlist)));
        known.delete(watchlist.name);
      }
      for (const gone of known) await current.removeJobScheduler(gone);
    },
    close: async () => {
      // A Redis gone: nothing to wait for.
      if (queue) await within(queue.close().catch(() => {}), link.ready() ? 5_000 : 500);
    },
  };
}

/** `promise`, or 'late' after `ms`: a stop never hangs on a Redis that does not answer. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The interval a scheduler's job is for: its id is `repeat:<scheduler>:<ms>`. */
export function slotOf(job: Pick<Job, 'id' | 'timestamp' | 'delay'>): number {
  const millis = Number(job.id?.slice(job.id.lastIndexOf(':') + 1));
  return Number.isFinite(millis) && millis > 0 ? millis : job.timestamp + (job.delay ?? 0);
}

export interface RunningWatchlistWorker {
  close(): Promise<void>;
}

/**
 * Takes the schedulers' jobs (every `oas serve`, `--no-worker` or not: a job only claims a run and
 * hands its analysis to the observables' queue). A job claims the run of its interval unless that
 * interval ran already (a job taken over) or the watchlist's previous run still runs; a run that
 * cannot start (an engine removed since) is failed with its reason, not retried.
 */
export function startWatchlistWorker(link: RedisLink, service: WatchlistService, options: { concurrency?: number; onError?: (error: unknown) => void } = {}): RunningWatchlistWorker {
  const worker = new Worker<WatchlistJob>(WATCHLIST_QUEUE, async (job) => {
    const slot = slotOf(job);
    const scheduledFor = new Date(slot).toISOString();
    try {
      await service.run(job.data.watchlist, {
        trigger: 'schedule',
        scheduledFor: slot,
        when: (current) => !current.runs.some((run) => run.scheduled_for === scheduledFor) && !busy(current, Date.now()),
      });
    } catch (error) {
      if (error instanceof InputError) return; // its reason is in the failed run
      options.onError?.(error);
      throw error;
    }
  }, { connection: link.blocking(), prefix: QUEUE_PREFIX, concurrency: options.concurrency ?? 4 });
  worker.on('error', (error) => options.onError?.(error));
  return {
    // A job only claims a run and starts its analysis: finished at once, or let go of without Redis.
    close: async () => {
      const outcome = link.ready() ? await within(worker.close(), 10_000) : 'late';
      if (outcome === 'late') await within(worker.close(true).catch(() => {}), 2_000);
    },
  };
}
