/**
 * An engine's quota shared by every process on one Redis (`redis_url`): at most `limit` calls
 * start in any window of `windowMs`, whichever worker makes them, and a 429's Retry-After pauses
 * the engine on every worker. The window is a sorted set of call start times, checked and added
 * to by one Lua script on Redis's own clock (the machines' clocks may differ); the pause is a key
 * that expires when the pause ends.
 *
 *   oas:quota:<engine>          sorted set: one member per call started in the window
 *   oas:quota:<engine>:paused   exists while a 429 pauses the engine
 *
 * Calls of one process queue in the fair order of src/runner/fair-queue.ts before asking Redis,
 * the call next in line asking for the next slot: across workers, each worker's next call competes. When Redis cannot be
 * asked, this process's own quota (the same limit) decides, so a call is never lost to it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Share } from '../runner/fair-queue.js';
import { describeWait, describeWindow, Quota, QuotaExhaustedError, type EngineQuota, type QuotaFactory, type QuotaWaitListener } from '../runner/quota.js';
import { FairTurns } from '../runner/turns.js';
import { KEY_PREFIX } from './redis-analyses.js';

/** Returns {wait ms, paused 1/0}: wait 0 means the call was counted and may start. */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return {paused, 1} end
local limit = tonumber(ARGV[1])
if limit < 0 then return {0, 0} end
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {0, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {math.max(1, tonumber(oldest[2]) + window - now), 0}
`;

/** Sets the pause unless a longer one is already set. */
const PAUSE = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
`;

type QuotaRedis = Redis & {
  oasQuotaTake(starts: string, paused: string, limit: number, windowMs: number, member: string): Promise<[number, number]>;
  oasQuotaPause(paused: string, ms: number): Promise<number>;
};

/** The factory the runner uses with `redis_url`. */
export function redisQuotas(redis: Redis, prefix = KEY_PREFIX): QuotaFactory {
  const client = redis as QuotaRedis;
  if (typeof client.oasQuotaTake !== 'function') {
    redis.defineCommand('oasQuotaTake', { numberOfKeys: 2, lua: TAKE });
    redis.defineCommand('oasQuotaPause', { numberOfKeys: 1, lua: PAUSE });
  }
  return (engineId, limit, windowMs, maxWaitMs) => new RedisQuota(client, `${prefix}quota:${engineId}`, limit, windowMs, maxWaitMs);
}

class RedisQuota implements EngineQuota {
  private readonly local: Quota;
  private readonly member = randomUUID();
  private calls = 0;
  /** This process's calls waiting, the next in the fair order asking Redis. */
  private readonly turns: FairTurns;

  constructor(
    private readonly redis: QuotaRedis,
    private readonly key: string,
    readonly limit: number,
    readonly windowMs: number,
    private readonly maxWaitMs = 5 * 60_000,
  ) {
    this.local = new Quota(limit, windowMs, maxWaitMs);
    this.turns = new FairTurns((tell) => this.waitForSlot(tell), limit === Number.POSITIVE_INFINITY ? 0 : windowMs);
  }

  acquire(onWait?: QuotaWaitListener, share?: Share): Promise<void> {
    // Unlimited engines only ask whether a 429 paused them: no need to queue behind each other.
    if (this.limit === Number.POSITIVE_INFINITY) return this.waitForSlot(onWait);
    return this.turns.wait(share, onWait);
  }

  pause(ms: number): void {
    this.local.pause(ms);
    this.redis.oasQuotaPause(`${this.key}:paused`, Math.ceil(ms)).catch(() => {});
  }

  private async waitForSlot(onWait?: QuotaWaitListener): Promise<void> {
    for (;;) {
      let wait: number;
      let paused: boolean;
      try {
        const limit = this.limit === Number.POSITIVE_INFINITY ? -1 : this.limit;
        [wait, paused] = await this.redis.oasQuotaTake(this.key, `${this.key}:paused`, limit, this.windowMs, `${this.member}:${++this.calls}`)
          .then(([ms, p]) => [Number(ms), p === 1] as [number, boolean]);
      } catch {
        // Redis cannot be asked: this process's own count decides.
        return this.local.acquire(onWait);
      }
      if (wait <= 0) return;
      const reason = paused ? 'paused after HTTP 429' : `quota of ${this.limit} per ${describeWindow(this.windowMs)} reached`;
      if (wait > this.maxWaitMs) throw new QuotaExhaustedError(`${reason}: next call possible in ${describeWait(wait)}`);
      onWait?.(wait, reason, paused);
      await sleep(wait);
    }
  }
}
