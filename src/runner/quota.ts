/**
 * Per-engine request quotas, enforced across the whole process: at most `limit` calls start in
 * any window of `windowMs` (a sliding window, so an analysis of many observables spreads its calls
 * within the quota instead of failing). Calls over the limit wait their turn, first come first
 * served. A 429 from the upstream pauses the engine for its Retry-After time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../engine/contract.js';

/** The quota is used up for longer than a call is willing to wait (e.g. a daily quota). */
export class QuotaExhaustedError extends EngineError {
  override name = 'QuotaExhaustedError';
}

/** Told of each wait: how long, why (one line), and whether it is a 429's pause (else the quota). */
export type QuotaWaitListener = (ms: number, reason: string, paused: boolean) => void;

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** What the runner needs of an engine's quota: this process's (Quota) or the team's (RedisQuota). */
export interface EngineQuota {
  readonly limit: number;
  readonly windowMs: number;
  /** Resolves when a call may start (undefined: at once); see Quota.acquire. */
  acquire(onWait?: QuotaWaitListener): Promise<void> | undefined;
  /** No call starts before `ms` from now (the upstream said so, with a 429). */
  pause(ms: number): void;
}

/** Makes the quota of one engine: `limit` calls (Infinity: none) per `windowMs`. */
export type QuotaFactory = (engineId: string, limit: number, windowMs: number, maxWaitMs: number | undefined) => EngineQuota;

export class Quota implements EngineQuota {
  /** Start times of the calls inside the current window, oldest first. */
  private readonly starts: number[] = [];
  private pausedUntil = 0;
  /** Serialises waiters so they are served in arrival order. */
  private turn: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    /** A call that would have to wait longer than this fails instead (QuotaExhaustedError). */
    readonly maxWaitMs: number = 5 * 60_000,
    private readonly clock: Clock = realClock,
  ) {}

  /**
   * Resolves when a call may start (undefined: it may start at once); `onWait` is told each time it
   * has to wait, for how long, and whether the wait is the upstream's (`paused`: a 429 asked to
   * retry later) rather than the quota's own.
   */
  acquire(onWait?: QuotaWaitListener): Promise<void> | undefined {
    // Most engines have no quota: nothing to count or queue unless a 429 paused them.
    if (this.limit === Number.POSITIVE_INFINITY && this.waiting === 0 && this.pausedUntil <= this.clock.now()) return undefined;
    this.waiting++;
    const mine = this.turn.then(() => this.waitForSlot(onWait)).finally(() => this.waiting--);
    this.turn = mine.catch(() => {});
    return mine;
  }

  /** No call starts before `ms` from now (the upstream said so, with a 429). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
  }

  private async waitForSlot(onWait?: QuotaWaitListener): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
      const paused = this.pausedUntil - now;
      const full = this.starts.length >= this.limit ? this.starts[0]! + this.windowMs - now : 0;
      const wait = Math.max(paused, full);
      if (wait <= 0) {
        this.starts.push(now);
        return;
      }
      const reason = paused >= full ? 'paused after HTTP 429' : `quota of ${this.limit} per ${describeWindow(this.windowMs)} reached`;
      if (wait > this.maxWaitMs) throw new QuotaExhaustedError(`${reason}: next call possible in ${describeWait(wait)}`);
      onWait?.(wait, reason, paused >= full);
      await this.clock.sleep(wait);
    }
  }
}

export function describeWindow(ms: number): string {
  if (ms % 86_400_000 === 0) return ms === 86_400_000 ? 'day' : `${ms / 86_400_000} days`;
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hour' : `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return ms === 60_000 ? 'minute' : `${ms / 60_000} min`;
  return `${ms} ms`;
}

export function describeWait(ms: number): string {
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  if (ms >= 60_000) return `${Math.ceil(ms / 60_000)} min`;
  return `${Math.ceil(ms / 1000)} s`;
}
