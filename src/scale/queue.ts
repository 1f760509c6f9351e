/**
 * The BullMQ queue of engine work (`redis_url`): one job per observable of an accepted analysis,
 * carrying the analysis id and owner, the observable's index and value, the engine names (never a
 * credential: each worker reads its own configuration) and what earlier analyses said of it. Any worker takes any job; a job
 * whose worker died is taken over by another (BullMQ's stalled-job check), and one that failed
 * for want of Redis is tried again with a growing back-off.
 *
 * Jobs are taken in the order of their priority (`jobPriority`), not of their arrival: the first
 * observable of every analysis comes before the second of any, so a one-observable analysis
 * queued behind a bulk one is next, bulk analyses progress side by side, and an owner's
 * analyses started while others of theirs run are spread out so that they share that owner's
 * part rather than take one part each.
 */
import { Queue, type JobsOptions } from 'bullmq';
import { shareOf } from '../analysis/launch.js';
import type { AnalysisDispatcher } from '../analysis/service.js';
import type { AnalysisHeader } from '../store/analysis-store.js';
import type { Observable } from '../observables/types.js';
import { recordedMarking, type Pap, type Tlp } from '../marking/levels.js';
import type { SeenBefore } from '../runner/result.js';
import type { Selection } from '../runner/types.js';
import { lookUpSeen } from '../analysis/seen.js';
import type { RedisAnalysisStore } from './redis-analyses.js';
import type { RedisLink } from './redis.js';

export const QUEUE_NAME = 'observables';
/** BullMQ's keys: `oas:bull:observables:...`. */
export const QUEUE_PREFIX = 'oas:bull';

/** What a job carries. */
export interface ObservableJob {
  analysis: string;
  index: number;
  observable: Observable;
  /** The engine names as the caller gave them (the result's keys). */
  engines: string[];
  ignore_cache: boolean;
  /** Analyse even what the allowlist covers (issue 38); absent: the allowlist applies. */
  ignore_allowlist?: boolean;
  /** Observables in the analysis: when this many have a result, it is complete. */
  total: number;
  /** Who started the analysis (`started_by`), for the fair order of the engines' slots. */
  owner?: string;
  /**
   * The analysis's TLP and PAP: what its engines may be sent (issue 34). Absent in jobs queued by
   * older versions: the configuration's defaults then.
   */
  tlp?: Tlp;
  pap?: Pap;
  /**
   * The earlier analyses that held the observable (issue 38), looked up for the whole analysis as
   * its jobs were queued; null: none did. Absent in jobs queued by older versions, or when the
   * lookup failed: the worker looks it up then.
   */
  seen?: SeenBefore | null;
  /** When the analysis began (its created_at): the date its observables are recorded under. Absent in older jobs. */
  created_at?: string;
}

/** BullMQ's largest priority (the lowest): 2^21 - 1. */
export const LOWEST_PRIORITY = 2 ** 21 - 1;

/**
 * The priority of the job of observable `index` (1 is taken first; equal ones in arrival order):
 * 1 + index x (1 + the owner's other analyses running when this one was accepted). Every
 * analysis's first observable has priority 1; an owner's second analysis advances at half the
 * pace of a newcomer's, their third at a third, and so on.
 */
export function jobPriority(index: number, othersRunning: number): number {
  return Math.min(LOWEST_PRIORITY, 1 + index * (1 + Math.max(0, othersRunning)));
}

/** Tries of a job that fails (Redis gone while it ran): the back-off reaches 30 s, about 25 min in all. */
export const JOB_ATTEMPTS = 50;

export const JOB_OPTIONS: JobsOptions = {
  attempts: JOB_ATTEMPTS,
  backoff: { type: 'custom' },
  // The result is the analysis's row; a finished job has nothing more to keep.
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** The wait before try `attempt` + 1 of a failed job. */
export function jobBackoffMs(attemptsMade: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
}

/** The job id: one per observable of an analysis, so adding it twice adds it once. */
export function jobId(analysis: string, index: number): string {
  return `${analysis}-${index}`;
}

/**
 * Accepted analyses go to the queue: all their jobs in one transaction. The queue is opened at
 * the first analysis (BullMQ checks the Redis version when it opens, which needs Redis up), and
 * opened again after a failure that was Redis's.
 */
export function queueDispatcher(link: RedisLink, store: Pick<RedisAnalysisStore, 'runningOf' | 'seenBefore'>): AnalysisDispatcher & { close(): Promise<void> } {
  let queue: Queue<ObservableJob> | undefined;
  const open = () => {
    const opened = new Queue<ObservableJob>(QUEUE_NAME, { connection: link.commands, prefix: QUEUE_PREFIX, defaultJobOptions: JOB_OPTIONS });
    opened.on('error', () => {}); // the request that needed it gets the error (503)
    return opened;
  };
  return {
    dispatch: async (header: AnalysisHeader, selections: readonly Selection[]) => {
      const engines = selections.map((s) => s.key);
      const total = header.observables.length;
      const { owner } = shareOf(header);
      const current = queue ??= open();
      try {
        // The header is stored already: it is one of the owner's running analyses.
        const others = (await store.runningOf(owner)) - 1;
        // Seen before (issue 38): one lookup for all of its observables, each job carrying its own.
        const seenOf = await lookUpSeen(store, header.observables, header.id);
        await current.addBulk(header.observables.map((observable, index) => ({
          name: 'observable',
          data: { analysis: header.id, index, observable: observable.found_in ? { value: observable.value, type: observable.type, found_in: observable.found_in } : { value: observable.value, type: observable.type }, engines, ignore_cache: header.ignore_cache, ...(header.ignore_allowlist ? { ignore_allowlist: true } : {}), total, owner, ...recordedMarking(header), created_at: header.created_at, ...(seenOf ? { seen: seenOf(index) } : {}) },
          // The rest: the queue's JOB_OPTIONS.
          opts: { jobId: jobId(header.id, index), priority: jobPriority(index, others) },
        })));
      } catch (error) {
        if (queue === current) queue = undefined;
        await current.close().catch(() => {});
        throw error;
      }
    },
    close: async () => {
      await queue?.close().catch(() => {});
    },
  };
}
