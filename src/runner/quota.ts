/**
 * Per-engine request quotas, enforced across the whole process: at most `limit` calls start in
 * any window of `windowMs` (a sliding window, so an analysis of many observables spreads its calls
 * within the quota instead of failing). Calls over the limit wait their turn in the fair order of
 * src/runner/fair-queue.ts (across owners, then analyses, then arrival). A 429 from the upstream
 * pauses the engine for its Retry-After time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { EngineError } from '../engine/contract.js';
import type { Share } from './fair-queue.js';
import { FairTurns, type QuotaWaitListener } from './turns.js';

/** The quota is used up for longer than a call is willing to wait (e.g. a daily quota). */
export class QuotaExhaustedError extends EngineError {
  override name = 'QuotaExhaustedError';
}

export type { QuotaWaitListener } from './turns.js';

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** What the runner needs of an engine's quota: this process's (Quota) or the team's (RedisQuota). */
export interface EngineQuota {
  readonly limit: number;
  readonly windowMs: number;
  /**
   * Resolves when a call may start (undefined: at once); see Quota.acquire. Waiting calls start in
   * the fair order of `share` (src/runner/fair-queue.ts).
   */
  acquire(onWait?: QuotaWaitListener, share?: Share): Promise<void> | undefined;
  /** No call starts before `ms` from now (the upstream said so, with a 429). */
  pause(ms: number): void;
}

/** Makes the quota of one engine: `limit` calls (Infinity: none) per `windowMs`. */
export type QuotaFactory = (engineId: string, limit: number, windowMs: number, maxWaitMs: number | undefined) => EngineQuota;

export class Quota implements EngineQuota {
  /** Start times of the calls inside the current window, oldest first. */
  private readonly starts: number[] = [];
  private pausedUntil = 0;
  /** The calls waiting, admitted one at a time in the fair order. */
  private readonly turns: FairTurns;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    /** A call that would have to wait longer than this fails instead (QuotaExhaustedError). */
    readonly maxWaitMs: number = 5 * 60_000,
    private readonly clock: Clock = realClock,
  ) {
    this.turns = new FairTurns((tell) => this.waitForSlot(tell), limit === Number.POSITIVE_INFINITY ? 0 : windowMs, () => clock.now());
  }

  /**
   * Resolves when a call may start (undefined: it may start at once); `onWait` is told each time
   * the call next in line has to wait, for how long, and whether the wait is the upstream's
   * (`paused`: a 429 asked to retry later) rather than the quota's own.
   */
  acquire(onWait?: QuotaWaitListener, share?: Share): Promise<void> | undefined {
    // Nobody waiting and a slot free: no queue (most engines have no quota at all).
    if (this.turns.size === 0 && this.nextSlot().wait === 0) {
      this.turns.started(share);
      return undefined;
    }
    return this.turns.wait(share, onWait);
  }

  /** No call starts before `ms` from now (the upstream said so, with a 429). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
  }

  /**
   * Counts a call that may start now and returns a wait of 0, or returns how long the next one
   * must wait and whether that is a 429's pause rather than the quota's window.
   */
  private nextSlot(): { wait: number; paused: boolean } {
    const now = this.clock.now();
    const paused = this.pausedUntil - now;
    let full = 0;
    if (this.limit !== Number.POSITIVE_INFINITY) {
      while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
      if (this.starts.length >= this.limit) full = this.starts[0]! + this.windowMs - now;
    }
    const wait = Math.max(paused, full);
    if (wait > 0) return { wait, paused: paused >= full };
    if (this.limit !== Number.POSITIVE_INFINITY) this.starts.push(now);
    return { wait: 0, paused: false };
  }

  private async waitForSlot(onWait: QuotaWaitListener): Promise<void> {
    for (;;) {
      const { wait, paused } = this.nextSlot();
      if (wait === 0) return;
      const reason = paused ? 'paused after HTTP 429' : `quota of ${this.limit} per ${describeWindow(this.windowMs)} reached`;
      if (wait > this.maxWaitMs) throw new QuotaExhaustedError(`${reason}: next call possible in ${describeWait(wait)}`);
      onWait(wait, reason, paused);
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
