/**
 * The one check of who may reach an administrator's endpoint (`GET /metrics`, for now).
 *
 * For now "admin" means what the token middleware (auth.ts) lets through: with `api_token` set, a
 * request that carried the token (bearer, X-API-Key, or a signed-in session); without it the
 * server is loopback-only (or explicitly `allow_unauthenticated`) and everyone who reaches it is
 * admitted, as for every other endpoint. Per-user roles will tighten this function, not its
 * callers.
 */
import type { MiddlewareHandler } from 'hono';

export type Role = 'admin';

export interface RoleOptions {
  /** Whether the server requires its token (`api_token` set): then an unauthenticated request is refused. */
  tokenRequired: boolean;
}

export function requireRole(role: Role, options: RoleOptions): MiddlewareHandler {
  return async (c, next) => {
    // The token middleware names every request that carried a valid credential (auth.ts): one
    // that did not reached here only if the path were public, which an admin's never is.
    if (options.tokenRequired && c.get('oasClient') === undefined) {
      return c.json({ error: `authentication required: this endpoint is for the ${role} (send the API token as "Authorization: Bearer <token>", setting api_token)` }, 401, {
        'WWW-Authenticate': 'Bearer',
        'Cache-Control': 'no-store',
      });
    }
    return next();
  };
}
