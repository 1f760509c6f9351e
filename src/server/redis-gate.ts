/**
 * With `redis_url`, everything an analysis is made of lives in Redis. While Redis does not answer,
 * the API, the pages' data (`/ui/`), the exports and the results pages answer 503 at once with
 * one line (no stack trace, no request left hanging), and `Retry-After`; they answer again by
 * themselves as soon as the connection is back (ioredis reconnects in the background).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { isConnectionError, unavailableMessage, type RedisLink } from '../scale/redis.js';

const RETRY_AFTER_S = 5;

export function redisGate(link: RedisLink, prefix: string): MiddlewareHandler {
  const needsRedis = (path: string) => path.startsWith(prefix) || path.startsWith('/ui/') || path.startsWith('/export/') || path.startsWith('/results/');
  return async (c, next) => {
    if (!link.ready() && needsRedis(c.req.path)) return unavailable(c, link);
    await next();
  };
}

/** The 503 for an error that means Redis went away during the request; undefined for any other. */
export function unavailableResponse(c: Context, link: RedisLink, error: unknown): Response | undefined {
  // An error while the connection is down is taken for the outage it most likely is.
  return isConnectionError(error) || !link.ready() ? unavailable(c, link) : undefined;
}

function unavailable(c: Context, link: RedisLink): Response {
  c.header('Retry-After', String(RETRY_AFTER_S));
  c.header('Cache-Control', 'no-store');
  return c.json({ error: unavailableMessage(link.label) }, 503);
}
