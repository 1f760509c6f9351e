/**
 * Where deliveries wait until they are delivered or given up (issue 36), and what each try is
 * reported as. Two kinds, one behaviour: the SQLite file of `data_dir` (sqlite-outbox.ts, one
 * `oas serve`) and Redis (redis-outbox.ts, `redis_url`: a BullMQ queue any server or worker
 * takes from). Both keep a delivery until its outcome is known, so nothing accepted is lost to a
 * restart, and try it again per retry.ts.
 */
import type { Delivery } from './delivery.js';
import type { AttemptResult } from './retry.js';

/** One try of one delivery, as metrics, the audit trail and the log are told of it. */
export interface DeliveryOutcome {
  delivery: Delivery;
  /** 1 for the first try. */
  attempt: number;
  /** `retry`: another try follows after `waitMs`; `failed`: given up (final answer, or no try left). */
  outcome: 'delivered' | 'retry' | 'failed';
  status?: number;
  waitMs?: number;
  reason: string;
}

/** Told of every try (src/server/metrics.ts counts them; the app writes the audit line). */
export interface DeliveryObserver {
  onDelivery(outcome: DeliveryOutcome): void;
}

/** Makes one try of a delivery (its target and secret looked up now); never throws. */
export type Attempter = (delivery: Delivery, attempt: number) => Promise<AttemptResult>;

/** What an outbox is given by the webhooks over it: how to try a delivery, and whom to tell. */
export interface OutboxHooks {
  attempt: Attempter;
  report: (outcome: DeliveryOutcome) => void;
}

export interface Outbox {
  /** Keeps the deliveries (a delivery whose id is kept already is kept once). */
  add(deliveries: readonly Delivery[]): Promise<void>;
  /** Starts trying them, those kept from before first; without it, they are only kept. */
  start(): void;
  /** Stops trying (a try under way is abandoned, and tried again later: at least once). */
  close(): Promise<void>;
}
