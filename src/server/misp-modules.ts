/**
 * MISP's enrichment on `oas serve` (issue 39, setting `misp_modules`): `GET /modules` and
 * `POST /query` at the root, as a misp-modules server answers them (src/enrichment/), so that
 * MISP's `Plugin.Enrichment_services_url` and `_port` can point at oas.
 *
 * MISP sends no credential to its modules server, so these two paths are not behind the token:
 * listen.ts hands them here before the token's middleware, and they answer only the clients of
 * `misp_modules_clients` (addresses and CIDR ranges; the client as the rate limit sees it: the
 * peer, or behind `trusted_proxies` what X-Forwarded-For names). Any other client gets 403, token
 * or not. A query that starts an analysis counts towards `rate_limit_per_minute` as the API's do
 * (keyed by the client's address); over it, and for any other failure, the answer is misp-modules'
 * `{"error": "..."}` with status 200, which MISP shows (it discards any other status). Loaded at
 * the first request to either path: a server without the setting loads none of this.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { mispModules, moduleListing } from '../enrichment/misp-modules.js';
import { answerQuery, MISP_STARTED_BY, type QueryServices } from '../enrichment/misp-query.js';
import type { AuditRequest } from './audit.js';
import { inRanges, parseRange } from './proxy-auth.js';

export interface MispModulesOptions {
  /** The configuration, catalog and analyses as of now. */
  services: () => QueryServices;
  /** oas's version, each module's `meta.version`. */
  version: string;
  /** Setting misp_modules_clients. */
  clients: readonly string[];
  /** The client's address (src/server/proxy-auth.ts). */
  clientAddress: (c: Context) => string;
  /** The analyses' rate limit (rate_limit_per_minute); undefined for none. */
  limiter: () => RateLimiterAbstract | undefined;
  maxBodyBytes: number;
  audit: AuditRequest;
  /** The server's answer to an unexpected error: it logs it; its words are kept only for Redis gone (503). */
  onError: (error: Error, c: Context) => Response | Promise<Response>;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The handler of `/modules` and `/query` (listen.ts calls it for those two paths only). */
export function mispModulesRoutes(options: MispModulesOptions): MiddlewareHandler {
  const ranges = options.clients.map(parseRange).filter((range): range is NonNullable<ReturnType<typeof parseRange>> => range !== undefined);
  // A query larger than max_body_bytes is not read past it (hono's bodyLimit, as the API's routes).
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ error: `the query is larger than max_body_bytes (${options.maxBodyBytes} bytes)` }) });
  return async (c) => {
    const client = options.clientAddress(c);
    if (!inRanges(client, ranges)) {
      return c.json({ error: `forbidden: ${client} is not a MISP server this oas answers (setting misp_modules_clients)` }, 403, NO_STORE);
    }
    if (c.req.path === '/modules') {
      if (c.req.method !== 'GET') return notAllowed(c);
      const { config, catalog } = options.services();
      return c.json(moduleListing(mispModules(catalog, config), options.version));
    }
    if (c.req.method !== 'POST') return notAllowed(c);
    let answer: Response | undefined;
    const refused = await limit(c, async () => {
      try {
        answer = c.json(await query(c, client, options));
      } catch (error) {
        answer = c.json({ error: await unexpected(error as Error, c, options) });
      }
    });
    return refused ?? answer!;
  };
}

async function query(c: Context, client: string, options: MispModulesOptions): Promise<unknown> {
  const raw = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { error: 'the query is not valid JSON' };
  }
  const limiter = options.limiter();
  const key = `address:${client}`;
  if (limiter) {
    try {
      await limiter.consume(key, 1);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      c.header('Retry-After', String(seconds));
      return { error: `too many analyses: at most ${limiter.points} per minute per client (setting rate_limit_per_minute); retry in ${seconds} s` };
    }
  }
  let started = false;
  try {
    return await answerQuery(body, options.services(), {
      signal: c.req.raw.signal,
      started: (header, module) => {
        started = true;
        options.audit(c, { action: 'analysis_started', outcome: 'success', user: MISP_STARTED_BY, analysis_id: header.id, origin: 'misp', module: module.name, observables: header.observables.length, engines: header.engines, tlp: header.tlp, pap: header.pap });
      },
      read: (header, module, complete) => {
        options.audit(c, { action: 'results_read', outcome: complete ? 'success' : 'failure', user: MISP_STARTED_BY, analysis_id: header.id, origin: 'misp', format: module.format, ...(complete ? {} : { reason: 'analysis not complete yet' }) });
      },
    });
  } finally {
    // Only analyses that start count, as with the API's refusals.
    if (!started && limiter) await limiter.reward(key, 1).catch(() => undefined);
  }
}

function notAllowed(c: Context) {
  return c.json({ error: `method not allowed: ${c.req.method} ${c.req.path} (misp-modules answers GET /modules and POST /query)` }, 405, { Allow: c.req.path === '/modules' ? 'GET' : 'POST' });
}

/** The server's handling of the error (its log line); MISP gets one line: Redis's own words, else where to look. */
async function unexpected(error: Error, c: Context, options: MispModulesOptions): Promise<string> {
  const answer = await options.onError(error, c);
  if (answer.status === 503) {
    try {
      const body = (await answer.json()) as { error?: unknown };
      if (typeof body.error === 'string') return body.error;
    } catch {
      // A body of another shape: the general line below.
    }
  }
  return 'internal error: the oas server could not answer this query (its log says why)';
}
