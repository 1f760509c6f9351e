/**
 * The watchlists' endpoints (issue 36), under the configured prefix: `GET` and `POST
 * {prefix}watchlists`, `GET` and `DELETE {prefix}watchlists/<name>`, `POST
 * {prefix}watchlists/<name>/run`. Viewers read; analysts and admins add, remove and run (the
 * token middleware checks it: auth.ts `roleFor`). Errors are JSON `{"error": "..."}` like the
 * rest of the API; adding, removing and running each write an audit line.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { InputError, TooManyObservablesError } from '../analysis/request.js';
import { WatchlistExistsError, type WatchlistService } from '../automation/watchlist-service.js';
import { WATCHLIST_NAME } from '../automation/watchlist.js';
import { jsonBody } from './json-body.js';
import { auditedId, originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';

export interface WatchlistApiOptions {
  prefix: string;
  maxBodyBytes: number;
  watchlists: WatchlistService;
  audit?: AuditRequest;
  /** The answer to an unexpected error (Redis gone: 503); default a logged 500. */
  onError?: (error: Error, c: Context) => Response | Promise<Response>;
}

export function createWatchlistApi(options: WatchlistApiOptions): Hono {
  const { prefix, watchlists } = options;
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const app = new Hono();
  const base = `${prefix}watchlists`;
  if (options.onError) app.onError(options.onError);

  const noStore = (c: Context) => c.header('Cache-Control', 'no-store');
  /** The name of the path, or undefined when it cannot be one (answered 404 like an unknown one). */
  const nameOf = (c: Context) => {
    const name = c.req.param('name') ?? '';
    return WATCHLIST_NAME.test(name) ? name : undefined;
  };
  const notFound = (c: Context) => c.json({ error: `watchlist not found: ${(c.req.param('name') ?? '').slice(0, 100)} (GET ${base} lists them)` }, 404);
  const who = (c: Context) => c.get('oasUser')?.name ?? 'anonymous';
  const fields = (c: Context, name: string | undefined) => ({ watchlist: name, origin: originOf(c) });

  app.get(base, async (c) => {
    noStore(c);
    return c.json(await watchlists.list());
  });

  app.post(base, bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413) }), async (c) => {
    noStore(c);
    const read = await jsonBody(c, '{"name", "text", "engines", "every", "tlp", "pap"}');
    if (read instanceof Response) return read;
    const { body } = read;
    const name = typeof body === 'object' && body !== null && typeof (body as { name?: unknown }).name === 'string' ? (body as { name: string }).name : undefined;
    const named = name !== undefined && WATCHLIST_NAME.test(name) ? name : undefined;
    try {
      const { watchlist, baseline } = await watchlists.add(body, who(c));
      audit(c, { action: 'watchlist_added', outcome: 'success', ...fields(c, watchlist.name), every: watchlist.every, engines: watchlist.engines, tlp: watchlist.tlp, pap: watchlist.pap, analysis_id: baseline?.run.analysis_id ?? undefined });
      c.header('Location', `${base}/${encodeURIComponent(watchlist.name)}`);
      return c.json(watchlist, 201);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      audit(c, { action: 'watchlist_added', outcome: 'failure', ...fields(c, named), reason: error.message });
      const status = error instanceof WatchlistExistsError ? 409 : error instanceof TooManyObservablesError ? 413 : 400;
      return c.json({ error: error.message }, status);
    }
  });

  app.get(`${base}/:name`, async (c) => {
    noStore(c);
    const name = nameOf(c);
    const watchlist = name === undefined ? undefined : await watchlists.get(name);
    return watchlist ? c.json(watchlist) : notFound(c);
  });

  app.delete(`${base}/:name`, async (c) => {
    noStore(c);
    const name = nameOf(c);
    if (name === undefined || !(await watchlists.remove(name))) {
      audit(c, { action: 'watchlist_removed', outcome: 'failure', ...fields(c, name), reason: 'watchlist not found' });
      return notFound(c);
    }
    audit(c, { action: 'watchlist_removed', outcome: 'success', ...fields(c, name) });
    return c.json({ removed: name });
  });

  app.post(`${base}/:name/run`, async (c) => {
    noStore(c);
    const name = nameOf(c);
    try {
      const started = name === undefined ? undefined : await watchlists.run(name);
      if (!started) {
        audit(c, { action: 'watchlist_run', outcome: 'failure', ...fields(c, name), reason: 'watchlist not found' });
        return notFound(c);
      }
      const id = started.run.analysis_id!;
      audit(c, { action: 'watchlist_run', outcome: 'success', ...fields(c, name), analysis_id: auditedId(id) });
      return c.json({ watchlist: name, run_id: started.run.id, analysis_id: id, link: `/results/${id}` });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      audit(c, { action: 'watchlist_run', outcome: 'failure', ...fields(c, name), reason: error.message });
      return c.json({ error: `watchlist ${name} could not run: ${error.message}` }, 409);
    }
  });

  return app;
}
