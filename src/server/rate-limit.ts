/**
 * `rate_limit_per_minute`: analyses (POST {prefix}analyze) one client may start per minute.
 * The client is the token (a digest of it, set by the auth middleware) when the request is
 * authenticated, else the remote address. Over the limit: 429 with `Retry-After` (seconds).
 * A request refused for another reason (400, 413, ...) gives its point back: only analyses that
 * start count.
 *
 * The limiter is any rate-limiter-flexible limiter: RateLimiterMemory for one process, and with
 * `redis_url` a RateLimiterRedis with the same points and duration, so the limit holds across all
 * the servers of a team (keys `oas:rate:analyze:<client>`: an address, or a digest of the token).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * A limiter of `perMinute` analyses per client and minute, in Redis when given one; undefined for
 * 0 (no limit).
 */
export function analysisLimiter(perMinute: number, redis?: Redis): RateLimiterAbstract | undefined {
  if (perMinute <= 0) return undefined;
  if (redis) return new RateLimiterRedis({ storeClient: redis, keyPrefix: 'oas:rate:analyze', points: perMinute, duration: 60 });
  return new RateLimiterMemory({ keyPrefix: 'oas-analyze', points: perMinute, duration: 60 });
}

/** The peer address of the request's connection ('unknown' outside a Node server). */
export function remoteAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * `clientAddress`: the client's address when the request is not authenticated (the peer, or behind
 * a trusted proxy the address X-Forwarded-For gives: src/server/proxy-auth.ts).
 */
export function rateLimitAnalyses(limiter: RateLimiterAbstract, clientAddress: (c: Context) => string = remoteAddress): MiddlewareHandler {
  return async (c, next) => {
    const key = c.get('oasClient') ?? `address:${clientAddress(c)}`;
    try {
      await limiter.consume(key, 1);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      return c.json(
        { error: `too many analyses: at most ${limiter.points} per minute per client (setting rate_limit_per_minute); retry in ${seconds} s` },
        429,
        { 'Retry-After': String(seconds), 'Cache-Control': 'no-store' },
      );
    }
    await next();
    if (c.res.status >= 400) await limiter.reward(key, 1).catch(() => undefined);
  };
}

/**
 * Failed sign-ins and bad tokens one client address may make per minute (auth_failures_per_minute),
 * in Redis when given one (keys `oas:rate:auth-failures:<address>`), shared by a team's servers.
 */
export function failureLimiter(perMinute: number, redis?: Redis): RateLimiterAbstract {
  if (redis) return new RateLimiterRedis({ storeClient: redis, keyPrefix: 'oas:rate:auth-failures', points: perMinute, duration: 60 });
  return new RateLimiterMemory({ keyPrefix: 'oas-auth-failures', points: perMinute, duration: 60 });
}
