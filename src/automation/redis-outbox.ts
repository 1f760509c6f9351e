/**
 * The deliveries of a team on Redis (`redis_url`, issue 36): a BullMQ queue of its own
 * (`deliveries`, keys under `oas:webhooks:`), one job per delivery, its id the delivery's
 * `webhook-id` (a delivery queued twice is one job). Every `oas serve` and `oas worker` takes
 * jobs from it (`start`), so deliveries survive a restart and a killed process: a job whose
 * worker died is taken over once its lock (`job_lock_ms`) lapses (BullMQ's stalled-job check),
 * and tried again. Retries are BullMQ's (attempts and a custom back-off reading retry.ts, the
 * receiver's Retry-After first); a final answer ends the job at once (UnrecoverableError).
 * Finished jobs are kept a week, so a late duplicate of an id is still recognised.
 */
import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import type { RedisLink } from '../scale/redis.js';
import type { Delivery } from './delivery.js';
import type { Attempter, DeliveryOutcome, Outbox } from './outbox.js';
import { MAX_ATTEMPTS, nextStep, RETRY_WAITS_MS, retryWaitMs } from './retry.js';

export const DELIVERY_QUEUE = 'deliveries';
/** BullMQ's keys: `oas:webhooks:deliveries:...`, apart from the observables' queue. */
export const DELIVERY_PREFIX = 'oas:webhooks';

const WEEK_S = 7 * 24 * 3600;
/** How long closing waits for the tries under way (one try's timeout and a margin). */
const CLOSE_GRACE_MS = 12_000;

export interface RedisOutboxOptions {
  attempt: Attempter;
  report: (outcome: DeliveryOutcome) => void;
  /** BullMQ's lock on a job (setting job_lock_ms). */
  lockMs: number;
  /** Tries at once in this process (default 8). */
  concurrency?: number;
  waits?: readonly number[];
  maxAttempts?: number;
}

/** A try worth repeating: its wait is the back-off's answer. */
class RetryLater extends Error {
  override name = 'RetryLater';
  constructor(message: string, readonly waitMs: number) {
    super(message);
  }
}

export function redisOutbox(link: RedisLink, options: RedisOutboxOptions): Outbox {
  const waits = options.waits ?? RETRY_WAITS_MS;
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  const jobOptions: JobsOptions = {
    attempts: maxAttempts,
    backoff: { type: 'custom' },
    removeOnComplete: { age: WEEK_S },
    removeOnFail: { age: WEEK_S },
  };
  let queue: Queue<Delivery> | undefined;
  let worker: Worker<Delivery> | undefined;
  const open = () => {
    const opened = new Queue<Delivery>(DELIVERY_QUEUE, { connection: link.commands, prefix: DELIVERY_PREFIX, defaultJobOptions: jobOptions });
    opened.on('error', () => {}); // the caller that needed it gets the error
    return opened;
  };

  const processDelivery = async (job: Job<Delivery>) => {
    const attempt = job.attemptsMade + 1;
    const result = await options.attempt(job.data, attempt);
    const step = nextStep(result, attempt, maxAttempts, waits);
    options.report({ delivery: job.data, attempt, outcome: step.outcome, ...(result.status !== undefined ? { status: result.status } : {}), ...(step.waitMs !== undefined ? { waitMs: step.waitMs } : {}), reason: result.reason });
    if (step.outcome === 'delivered') return;
    if (step.outcome === 'failed') throw new UnrecoverableError(result.reason);
    throw new RetryLater(result.reason, step.waitMs!);
  };

  return {
    async add(deliveries) {
      if (deliveries.length === 0) return;
      const current = queue ??= open();
      try {
        await current.addBulk(deliveries.map((d) => ({ name: d.event, data: d, opts: { jobId: d.id } })));
      } catch (error) {
        if (queue === current) queue = undefined;
        await current.close().catch(() => {});
        throw error;
      }
    },
    start() {
      if (worker) return;
      worker = new Worker<Delivery>(DELIVERY_QUEUE, processDelivery, {
        connection: link.blocking(),
        prefix: DELIVERY_PREFIX,
        concurrency: options.concurrency ?? 8,
        lockDuration: options.lockMs,
        stalledInterval: options.lockMs,
        maxStalledCount: 10,
        settings: {
          backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) => (error instanceof RetryLater ? error.waitMs : retryWaitMs(attemptsMade, undefined, waits)),
        },
      });
      worker.on('error', () => {}); // Redis errors are told by the link (src/scale/redis.ts)
    },
    async close() {
      // Tries under way finish (each within its own timeout); past CLOSE_GRACE_MS, or at once while
      // Redis is unreachable, they are let go of: their locks lapse and another worker takes them.
      if (worker) {
        const current = worker;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), link.ready() ? CLOSE_GRACE_MS : 0);
        });
        const outcome = await Promise.race([current.close().then(() => 'done' as const, () => 'late' as const), late]);
        clearTimeout(timer);
        if (outcome === 'late') await current.close(true).catch(() => {});
      }
      await queue?.close().catch(() => {});
    },
  };
}
