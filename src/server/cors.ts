/**
 * CORS stays closed (no `Access-Control-Allow-Origin` at all) unless `cors_origins` lists origins;
 * then a request from one of them is answered with exactly its origin (never `*`), preflight
 * included, allowing the headers a client needs: Authorization, X-API-Key, Content-Type. No
 * credentials (cookies) cross origins: another site's page authenticates with the token.
 */
import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

/** The origin of each configured value (`https://soc.example/` -> `https://soc.example`). */
export function corsOriginSet(origins: readonly string[]): Set<string> {
  const set = new Set<string>();
  for (const value of origins) {
    try {
      const origin = new URL(value).origin;
      if (origin !== 'null') set.add(origin);
    } catch {
      // The configuration schema accepts only URLs; anything else is ignored.
    }
  }
  return set;
}

/** The CORS middleware for `origins`, or undefined when there are none (CORS closed). */
export function corsFor(origins: readonly string[]): MiddlewareHandler | undefined {
  const allowed = corsOriginSet(origins);
  if (allowed.size === 0) return undefined;
  return cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowHeaders: ['Authorization', 'X-API-Key', 'Content-Type'],
    exposeHeaders: ['Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
    credentials: false,
  });
}
