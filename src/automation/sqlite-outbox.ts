/**
 * The deliveries of one `oas serve` without Redis (issue 36), kept in its SQLite file
 * (`webhook_deliveries`, beside the analyses): added in the background when an event happens,
 * tried a few at a time, each row removed once delivered or given up and otherwise given the time
 * of its next try (retry.ts). A server that stops (or dies) keeps them; its next start tries those
 * waiting for their next try at once (their tries so far still count). The time is an injectable
 * clock (tests run an hour of waits on a virtual one).
 *
 * A row being tried is leased (`leased`, its next time set `LEASE_MS` ahead, by a compare-and-set),
 * so a process that dies mid-try leaves it to be tried again after the lease, and two processes on
 * one file never try it at once: at least once, rarely twice, never lost.
 */
import type KeyvSqlite from '@keyv/sqlite';
import type { Clock } from '../runner/quota.js';
import type { Delivery } from './delivery.js';
import type { Attempter, DeliveryOutcome, Outbox } from './outbox.js';
import { MAX_ATTEMPTS, nextStep, RETRY_WAITS_MS } from './retry.js';

export const DELIVERIES_TABLE = 'webhook_deliveries';

/** How long a try holds its row (the longest try, 10 s, and a wide margin). */
export const LEASE_MS = 120_000;

export interface SqliteOutboxOptions {
  attempt: Attempter;
  report: (outcome: DeliveryOutcome) => void;
  /** Default: the real time. */
  clock?: Clock;
  /** Tries at once (default 8). */
  concurrency?: number;
  waits?: readonly number[];
  maxAttempts?: number;
  /** Told of a failure of the file itself (the loop waits a second and goes on). */
  warn?: (line: string) => void;
}

interface Row {
  id: string;
  due: number;
  attempts: number;
  delivery: string;
}

/** At most this many rows per INSERT (SQLite's bound parameters). */
const INSERT_ROWS = 100;

export function sqliteOutbox(table: KeyvSqlite, options: SqliteOutboxOptions): Outbox & { pending(): Promise<number>; drained(): Promise<void> } {
  const clock = options.clock;
  const now = () => (clock ? clock.now() : Date.now());
  const concurrency = options.concurrency ?? 8;
  const waits = options.waits ?? RETRY_WAITS_MS;
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  let ready: Promise<unknown> | undefined;
  const query = async <T>(sql: string, ...params: unknown[]): Promise<T[]> => {
    ready ??= table.query(`CREATE TABLE IF NOT EXISTS ${DELIVERIES_TABLE} (id TEXT PRIMARY KEY, due INTEGER NOT NULL, leased INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL, delivery TEXT NOT NULL)`);
    await ready;
    return (await table.query(sql, ...params)) as T[];
  };

  const count = async () => (await query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${DELIVERIES_TABLE}`))[0]?.n ?? 0;
  const inflight = new Map<string, Promise<void>>();
  let started = false;
  let closed = false;
  let loopDone: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Something changed since the loop last looked (a poke while it was not waiting is not lost). */
  let dirty = false;
  const poke = () => {
    dirty = true;
    const resolve = wake;
    wake = undefined;
    if (timer) clearTimeout(timer);
    timer = undefined;
    resolve?.();
  };
  const idleWaiters = new Set<() => void>();

  const notIn = () => (inflight.size ? ` AND id NOT IN (${[...inflight.keys()].map(() => '?').join(', ')})` : '');

  /** Up to `limit` rows due now, each leased by this process. */
  const claim = async (limit: number): Promise<Row[]> => {
    const at = now();
    const due = await query<Row>(`SELECT id, due, attempts, delivery FROM ${DELIVERIES_TABLE} WHERE due <= ?${notIn()} ORDER BY due LIMIT ?`, at, ...inflight.keys(), limit);
    const won: Row[] = [];
    for (const row of due) {
      const taken = await query<{ id: string }>(`UPDATE ${DELIVERIES_TABLE} SET due = ?, leased = 1 WHERE id = ? AND due = ? RETURNING id`, at + LEASE_MS, row.id, row.due);
      if (taken.length > 0) won.push(row);
    }
    return won;
  };

  const run = (row: Row) => {
    const work = (async () => {
      let delivery: Delivery;
      try {
        delivery = JSON.parse(row.delivery) as Delivery;
      } catch {
        await query(`DELETE FROM ${DELIVERIES_TABLE} WHERE id = ?`, row.id);
        return;
      }
      const attempt = row.attempts + 1;
      const result = await options.attempt(delivery, attempt);
      if (closed) return; // abandoned: tried again after its lease, by the next start
      const step = nextStep(result, attempt, maxAttempts, waits);
      if (step.outcome === 'retry') await query(`UPDATE ${DELIVERIES_TABLE} SET due = ?, leased = 0, attempts = ? WHERE id = ?`, now() + step.waitMs!, attempt, row.id);
      else await query(`DELETE FROM ${DELIVERIES_TABLE} WHERE id = ?`, row.id);
      options.report({ delivery, attempt, outcome: step.outcome, ...(result.status !== undefined ? { status: result.status } : {}), ...(step.waitMs !== undefined ? { waitMs: step.waitMs } : {}), reason: result.reason });
    })().catch((error: unknown) => options.warn?.(`webhook delivery ${row.id}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`))
      .finally(() => {
        inflight.delete(row.id);
        poke();
      });
    inflight.set(row.id, work);
  };

  const loop = async () => {
    // A new start: what was waiting for its next try is tried now (a lease is left to lapse: its
    // process may still be trying it).
    try {
      await query(`UPDATE ${DELIVERIES_TABLE} SET due = ? WHERE leased = 0 AND due > ?`, now(), now());
    } catch (error) {
      options.warn?.(`webhook deliveries (${DELIVERIES_TABLE}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
    while (!closed) {
      dirty = false;
      let next: number | undefined;
      try {
        if (inflight.size < concurrency) {
          const rows = await claim(concurrency - inflight.size);
          if (closed) return;
          for (const row of rows) run(row);
          if (rows.length > 0) continue;
          const [first] = await query<{ due: number | null }>(`SELECT MIN(due) AS due FROM ${DELIVERIES_TABLE} WHERE 1 = 1${notIn()}`, ...inflight.keys());
          next = first?.due ?? undefined;
        }
      } catch (error) {
        if (closed) return;
        options.warn?.(`webhook deliveries (${DELIVERIES_TABLE}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        next = now() + 1000;
      }
      // Drained: nothing in flight and nothing kept (counted now: a try may have ended meanwhile).
      if (next === undefined && inflight.size === 0 && idleWaiters.size > 0) {
        const left = await count().catch(() => 1);
        if (left === 0 && inflight.size === 0) for (const done of idleWaiters) done();
        else if (left > 0) continue;
      }
      if (dirty || closed || (next !== undefined && next <= now())) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (next === undefined) return;
        const ms = next - now();
        if (clock) void clock.sleep(ms).then(poke);
        else {
          timer = setTimeout(poke, ms);
          timer.unref();
        }
      });
    }
  };

  return {
    async add(deliveries) {
      const at = now();
      for (let i = 0; i < deliveries.length; i += INSERT_ROWS) {
        const part = deliveries.slice(i, i + INSERT_ROWS);
        await query(`INSERT OR IGNORE INTO ${DELIVERIES_TABLE} (id, due, attempts, delivery) VALUES ${part.map(() => '(?, ?, 0, ?)').join(', ')}`, ...part.flatMap((d) => [d.id, at, JSON.stringify(d)]));
      }
      poke();
    },
    start() {
      if (started || closed) return;
      started = true;
      loopDone = loop();
    },
    pending: count,
    /** Resolves once no delivery is kept or being tried (all delivered or given up; tests). */
    drained: () => new Promise<void>((resolve) => {
      const done = () => {
        idleWaiters.delete(done);
        resolve();
      };
      idleWaiters.add(done);
      poke();
    }),
    async close() {
      closed = true;
      poke();
      // Tries under way are abandoned (they end by their own timeout and write nothing): their
      // rows stay leased, and the next start tries them again once the lease is over.
      await loopDone;
    },
  };
}
