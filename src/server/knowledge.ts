/**
 * What the team already knows (issue 38), under the configured prefix: `GET` and `POST
 * {prefix}allowlist`, `DELETE {prefix}allowlist/<value>`; `GET` and `POST {prefix}marks`,
 * `DELETE {prefix}marks/<value>` (the value URL-encoded: `10.20.0.0%2F16`). Viewers read;
 * analysts and admins change (the token middleware checks it: auth.ts `roleFor`). The author of a
 * change is the signed-in user; every change, refused ones included, is an audit line. Errors are
 * JSON `{"error": "..."}` like the rest of the API.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { KnowledgeNotFoundError, type TeamKnowledge } from '../analysis/knowledge.js';
import { InputError } from '../analysis/request.js';
import type { AuditAction } from '../fs/audit-log.js';
import { jsonBody } from './json-body.js';
import { originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';

export interface KnowledgeApiOptions {
  prefix: string;
  maxBodyBytes: number;
  knowledge: TeamKnowledge;
  audit?: AuditRequest;
  /** The answer to an unexpected error (Redis gone: 503); default a logged 500. */
  onError?: (error: Error, c: Context) => Response | Promise<Response>;
}

export function createKnowledgeApi(options: KnowledgeApiOptions): Hono {
  const { prefix, knowledge } = options;
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const app = new Hono();
  if (options.onError) app.onError(options.onError);
  const who = (c: Context) => c.get('oasUser')?.name ?? 'anonymous';
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413) });
  const noStore = (c: Context) => c.header('Cache-Control', 'no-store');
  /** A refused change: its audit line, and 404 for an unknown value, else 400. */
  const refused = (c: Context, action: AuditAction, error: unknown, value: unknown) => {
    if (!(error instanceof InputError)) throw error;
    audit(c, { action, outcome: 'failure', origin: originOf(c), ...(typeof value === 'string' ? { value: value.slice(0, 200) } : {}), reason: error.message });
    return c.json({ error: error.message }, error instanceof KnowledgeNotFoundError ? 404 : 400);
  };
  const valueOf = (body: unknown) => (typeof body === 'object' && body !== null ? (body as { value?: unknown }).value : undefined);

  app.get(`${prefix}allowlist`, async (c) => {
    noStore(c);
    return c.json(await knowledge.allowEntries());
  });
  app.post(`${prefix}allowlist`, limit, async (c) => {
    noStore(c);
    const read = await jsonBody(c, '{"value", "reason", "expires"}');
    if (read instanceof Response) return read;
    try {
      const { entry, replaced } = await knowledge.allow(read.body, who(c));
      audit(c, { action: 'allowlist_added', outcome: 'success', origin: originOf(c), value: entry.value, entry_reason: entry.reason, expires: entry.expires ?? undefined, replaced });
      return c.json(entry, replaced ? 200 : 201);
    } catch (error) {
      return refused(c, 'allowlist_added', error, valueOf(read.body));
    }
  });
  app.delete(`${prefix}allowlist/:value`, async (c) => {
    noStore(c);
    const value = c.req.param('value');
    try {
      const entry = await knowledge.unallow(value);
      audit(c, { action: 'allowlist_removed', outcome: 'success', origin: originOf(c), value: entry.value });
      return c.json({ removed: entry.value });
    } catch (error) {
      return refused(c, 'allowlist_removed', error, value);
    }
  });

  app.get(`${prefix}marks`, async (c) => {
    noStore(c);
    return c.json(await knowledge.marks());
  });
  app.post(`${prefix}marks`, limit, async (c) => {
    noStore(c);
    const read = await jsonBody(c, '{"value", "verdict", "note", "expires"}');
    if (read instanceof Response) return read;
    try {
      const { mark, replaced } = await knowledge.mark(read.body, who(c));
      audit(c, { action: 'mark_added', outcome: 'success', origin: originOf(c), value: mark.value, verdict: mark.verdict, note: mark.note, expires: mark.expires ?? undefined, replaced });
      return c.json(mark, replaced ? 200 : 201);
    } catch (error) {
      return refused(c, 'mark_added', error, valueOf(read.body));
    }
  });
  app.delete(`${prefix}marks/:value`, async (c) => {
    noStore(c);
    const value = c.req.param('value');
    try {
      const mark = await knowledge.unmark(value);
      audit(c, { action: 'mark_removed', outcome: 'success', origin: originOf(c), value: mark.value, verdict: mark.verdict });
      return c.json({ removed: mark.value });
    } catch (error) {
      return refused(c, 'mark_removed', error, value);
    }
  });
  return app;
}
