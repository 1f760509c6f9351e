/**
 * The audit trail from the HTTP surface (the file and its line format: src/fs/audit-log.ts): who
 * the request is (the token middleware's principal), its client address (the peer, or behind a
 * trusted proxy what X-Forwarded-For names), and where it came from.
 */
import type { Context } from 'hono';
import type { AuditAction, AuditLog, AuditOrigin, AuditValue } from '../fs/audit-log.js';
import { remoteAddress } from './rate-limit.js';
import { requestHeader } from './request-header.js';

/** An event of a request: `user` is the request's unless given; `client` is the request's. */
export interface RequestEvent {
  action: AuditAction;
  outcome: 'success' | 'failure';
  user?: string | null;
  reason?: string | undefined;
  [field: string]: AuditValue;
}

export type AuditRequest = (c: Context, event: RequestEvent) => void;

/** Writes nothing (no audit_log, or a surface built without one). */
export const NO_AUDIT_REQUEST: AuditRequest = () => {};

export function auditRequests(log: AuditLog, clientAddress: (c: Context) => string = remoteAddress): AuditRequest {
  return (c, event) => {
    if (log.path === undefined) return;
    const user = 'user' in event ? event.user : c.get('oasUser')?.name ?? null;
    log.write({ ...event, user, client: clientAddress(c) });
  };
}

/**
 * `web` for a request a browser sent from oas's own pages (`Sec-Fetch-Site: same-origin`: the
 * analyze form and the results page call the API like any client), else `api`. It says which
 * surface was used, not who: any client can send that header.
 */
export function originOf(c: Context): Exclude<AuditOrigin, 'mcp' | 'misp' | 'cortex'> {
  return requestHeader(c, 'sec-fetch-site') === 'same-origin' ? 'web' : 'api';
}

/** The analysis id of the path when it looks like one (an arbitrary path segment is not written). */
export function auditedId(id: string | undefined): string | undefined {
  return id !== undefined && /^[A-Za-z0-9_-]{1,100}$/.test(id) ? id : undefined;
}
