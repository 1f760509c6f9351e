/** Starts the API and the pages for an App on its configured host and port. */
import { uploadLimits } from '../files/upload.js';
import { markingSettings } from '../marking/policy.js';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { getPath } from 'hono/utils/url';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { App } from '../app.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import { accessLog, type Logger } from './access-log.js';
import { createApi } from './api.js';
import { auditRequests } from './audit.js';
import { createAuth, RedisSessionStore, SessionStore, type Sessions } from './auth.js';
import { corsFor } from './cors.js';
import { allowedHosts, hostGuard } from './host-guard.js';
import { drainUnreadBody } from './drain-body.js';
import { healthRoutes, type HealthState } from './health.js';
import { createMcpRoute } from './mcp.js';
import { createMetrics, type ServerMetrics } from './metrics.js';
import { createPages } from './pages.js';
import { createPacer, type Pacer } from './pacer.js';
import type { Share } from '../runner/fair-queue.js';
import { createProxyAuth } from './proxy-auth.js';
import { redact } from '../http/redact.js';
import type { ExtractionPool } from '../observables/extract-pool.js';
import { analysisLimiter, failureLimiter, rateLimitAnalyses } from './rate-limit.js';
import { redisGate, unavailableResponse } from './redis-gate.js';
import { requireRole } from './require-role.js';
import { createWatchlistApi } from './watchlists.js';
import { createPushApi } from './push.js';
import { createDoctorApi } from './doctor.js';
import { createKnowledgeApi } from './knowledge.js';
import { pushSecrets } from '../push/settings.js';
import { watchlistsOf } from '../automation/watchlists-app.js';
import type { WatchlistService } from '../automation/watchlist-service.js';

export interface RunningServer {
  server: ServerType;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  /**
   * Builds the HTTP surface again from the app's configuration (reloaded: api_token, limits,
   * allowed_hosts, cors_origins...): requests from now on meet the new one, those under way finish
   * on the old. Signed-in sessions, and the limits' counts whose setting is unchanged, carry over.
   */
  rebuild(options?: HttpOptions): void;
  /** Paces the analyses this process runs, for as long as it listens (pacer.ts). */
  pacer: Pacer;
  close(): Promise<void>;
}

/**
 * What outlives a rebuild of the HTTP surface (a configuration reloaded): the signed-in sessions,
 * and each limiter while its setting keeps its value (a changed one starts counting afresh).
 */
export interface HttpKeep {
  sessions?: Sessions;
  failures?: { perMinute: number; limiter: RateLimiterAbstract | undefined };
  analyses?: { perMinute: number; limiter: RateLimiterAbstract | undefined };
  /** The Cortex API's jobs of this process (src/enrichment/cortex.ts CortexJobs), kept across a reload. */
  cortexJobs?: object;
}

export interface HttpOptions {
  /** The request log (`oas serve`); none when omitted. */
  logger?: Logger;
  /** oas's version, for the MCP server's description of itself. */
  version?: string;
  /**
   * The metrics of GET /metrics, whose observers `oas serve` gave createApp; without them, a
   * registry of this app's own with the HTTP and process metrics only.
   */
  metrics?: ServerMetrics;
  /** `stopping` turns /healthz to 503 (`oas serve` sets it as it stops). */
  health?: HealthState;
  /** Kept across builds of the surface (`listen` keeps one for its rebuilds). */
  keep?: HttpKeep;
  /** Where the API extracts large texts (default: the process's pool; tests give their own). */
  extractionPool?: ExtractionPool;
  /** The watchlists (issue 36; `oas serve` makes them with its events): default the app's (watchlistsOf). */
  watchlists?: WatchlistService;
}

/**
 * The whole HTTP surface, in the order a request meets it: the metrics' count, the request log,
 * an unread upload drained before the answer (see drain-body.ts), /healthz and /readyz (public,
 * health.ts), the Host check (421), CORS (closed unless `cors_origins`), MISP's enrichment
 * (`misp_modules`: its own clients, no token), the token (401, when
 * `api_token` is set) with the sign-in pages, the analyses' rate limit (429), /metrics (the
 * admin's, require-role.ts), then the spec's three endpoints and the pages.
 */
export function createHttpApp(app: App, options: HttpOptions = {}): Hono {
  const { config } = app;
  const root = new Hono({ getPath: pathWithSingleSlashes });
  const metrics = options.metrics ?? createMetrics();
  const keep = options.keep ?? {};
  root.use('*', metrics.middleware);
  // The client behind a trusted proxy (X-Forwarded-For), and single sign-on by its header: the
  // same address for the log, the failure limit and the rate limit (proxy-auth.ts).
  const proxy = createProxyAuth({
    trustedProxies: config.trusted_proxies,
    authHeader: config.auth_header,
    authHeaderRole: config.auth_header_role,
    users: app.users,
    onUserAdded: (name, role, c) => app.audit.write({ action: 'user_added', outcome: 'success', user: name, client: proxy.clientAddress(c), role, via: 'proxy' }),
  });
  if (options.logger) root.use('*', accessLog(options.logger, proxy.clientAddress));
  // The audit trail (audit_log): sign-ins, analyses started, results and exports read.
  const audit = auditRequests(app.audit, proxy.clientAddress);
  root.use('*', drainUnreadBody(config.max_body_bytes));
  // Before the Host check: a probe names the server by its address, and learns nothing else.
  root.route('/', healthRoutes(app, options.health ?? { stopping: false }));
  root.use('*', hostGuard(allowedHosts(config.host, config.allowed_hosts)));
  const cors = corsFor(config.cors_origins);
  if (cors) root.use('*', cors);
  if (config.misp_modules) {
    // MISP's enrichment (issue 39): GET /modules and POST /query for the clients of
    // misp_modules_clients (403 for any other), before the token: MISP sends none. Loaded at the
    // first such request (src/server/misp-modules.ts).
    let misp: Promise<MiddlewareHandler> | undefined;
    root.use('*', async (c, next) => {
      if (c.req.path !== '/modules' && c.req.path !== '/query') return next();
      misp ??= import('./misp-modules.js').then((m) => m.mispModulesRoutes({
        services: () => ({ config: app.config, catalog: app.catalog, analyses: app.analyses }),
        version: options.version ?? '0',
        clients: config.misp_modules_clients,
        clientAddress: proxy.clientAddress,
        limiter: () => keep.analyses?.limiter,
        maxBodyBytes: config.max_body_bytes,
        audit,
        onError,
      }));
      return (await misp)(c, next);
    });
  }
  if (config.cortex) {
    // The Cortex API (issue 39) answers in Cortex's error body {type, message}, the token's 401
    // and 403 and the rate limit's 429 included (oas's own {error} turned into it).
    root.use('/cortex/*', async (c, next) => {
      await next();
      if (c.res.status >= 400 && c.res.headers.get('content-type')?.startsWith('application/json')) {
        const body = (await c.res.clone().json().catch(() => undefined)) as { error?: unknown } | undefined;
        if (typeof body?.error === 'string') {
          const status = c.res.status;
          const type = status === 401 ? 'AuthenticationError' : status === 403 ? 'AuthorizationError' : status === 404 ? 'NotFoundError'
            : status === 429 ? 'TooManyRequests' : status === 503 ? 'ServiceUnavailable' : status >= 500 ? 'InternalError' : 'BadRequest';
          const headers = new Headers(c.res.headers);
          headers.delete('content-length');
          c.res = new Response(JSON.stringify({ type, message: body.error }), { status: c.res.status, headers });
        }
      }
    });
  }
  {
    // Always installed: `api_token`, or a user of `oas users` (added even while the server runs),
    // or a trusted proxy's header makes authentication required; without any, the server is
    // loopback-only and everyone is its admin.
    const link = app.scale?.link;
    if (keep.failures?.perMinute !== config.auth_failures_per_minute) {
      keep.failures = { perMinute: config.auth_failures_per_minute, limiter: failureLimiter(config.auth_failures_per_minute, link?.commands) };
    }
    keep.sessions ??= link ? new RedisSessionStore(link.commands) : new SessionStore();
    const auth = createAuth({
      token: config.api_token,
      prefix: config.api_prefix,
      users: app.users,
      failures: keep.failures.limiter,
      clientAddress: proxy.clientAddress,
      ...(proxy.proxyUser ? { proxyUser: proxy.proxyUser } : {}),
      sessions: keep.sessions,
      onEvent: (event) => app.audit.write({ ...event, user: event.user ?? null }),
    });
    root.use('*', auth.middleware);
    root.route('/', auth.routes);
  }
  const link = app.scale?.link;
  if (link) root.use('*', redisGate(link, config.api_prefix));
  if (keep.analyses?.perMinute !== config.rate_limit_per_minute) {
    keep.analyses = { perMinute: config.rate_limit_per_minute, limiter: analysisLimiter(config.rate_limit_per_minute, link?.commands) };
  }
  const limiter = keep.analyses.limiter;
  if (limiter) root.post(`${config.api_prefix}analyze`, rateLimitAnalyses(limiter, proxy.clientAddress));
  root.get('/metrics', requireRole('admin', { tokenRequired: Boolean(config.api_token) }), metrics.handler);
  // Redis gone in the middle of a request: 503 with one line, like the gate; else a 500.
  const onError = (error: Error, c: Context) => {
    if (link) {
      const unavailable = unavailableResponse(c, link, error);
      if (unavailable) return unavailable;
    }
    const line = `internal error on ${c.req.method} ${c.req.path}: ${error.message.split('\n')[0]}`;
    if (options.logger) options.logger.error(line);
    else process.stderr.write(`oas: ${line}\n`);
    return c.json({ error: 'internal error' }, 500);
  };
  root.route('/', createApi({
    prefix: config.api_prefix,
    maxBodyBytes: config.max_body_bytes,
    analyses: app.analyses,
    onError,
    audit,
    uploads: { ...uploadLimits(config), background: true },
    internalScope: markingSettings(config).internalScope,
    ...(options.extractionPool ? { extractionPool: options.extractionPool } : {}),
  }));
  root.route('/', createPushApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, services: () => ({ config: app.config, catalog: app.catalog, transport: app.transport, analyses: app.analyses }), audit }));
  root.route('/', createWatchlistApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, watchlists: options.watchlists ?? watchlistsOf(app), audit, onError }));
  root.route('/', createDoctorApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, app, audit }));
  root.route('/', createKnowledgeApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, knowledge: app.knowledge, audit, onError }));
  if (config.mcp) {
    const secrets = secretValues(config, app.catalog);
    root.route('/', createMcpRoute({ app, version: options.version ?? '0', limiter, clientAddress: proxy.clientAddress, audit, redact: (text) => redact(text, secrets) }));
  }
  if (config.cortex) {
    // The Cortex REST API (issue 39) under /cortex, behind the token; loaded at its first request.
    let cortex: Promise<Hono> | undefined;
    // A job is an analysis: it counts towards rate_limit_per_minute as POST <prefix>analyze does.
    if (limiter) root.post('/cortex/api/analyzer/:id/run', rateLimitAnalyses(limiter, proxy.clientAddress));
    root.all('/cortex/*', async (c) => {
      cortex ??= import('./cortex.js').then((m) => m.cortexRoutes({
        services: () => ({ config: app.config, catalog: app.catalog, analyses: app.analyses }),
        version: options.version ?? '0',
        maxBodyBytes: config.max_body_bytes,
        audit,
        onError,
        keep,
      }));
      // Who the token's middleware found, handed to the Cortex routes with the request.
      return (await cortex).fetch(c.req.raw, { ...(c.env as object), oasUser: c.get('oasUser') });
    });
  }
  root.route('/', createPages({ config, catalog: app.catalog, analyses: app.analyses, audit, knowledge: app.knowledge }));
  root.onError(onError);
  root.notFound((c) => c.json({ error: `not found: ${c.req.method} ${c.req.path}` }, 404));
  return root;
}

export async function listen(app: App, options: HttpOptions = {}): Promise<RunningServer> {
  const { config } = app;
  const keep: HttpKeep = options.keep ?? {};
  let fetch = createHttpApp(app, { ...options, keep }).fetch;
  const server = serve({ fetch: (...args: Parameters<typeof fetch>) => fetch(...args), hostname: config.host, port: config.port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const info = server.address() as AddressInfo;
  const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  // The analyses never starve the requests (pacer.ts).
  const pacer = createPacer();
  const pace = (share: Share) => pacer.pace(share);
  const paced = app.analyses.pace;
  app.analyses.pace = pace;
  return {
    server,
    url: `http://${host}:${info.port}`,
    rebuild: (changed = options) => {
      fetch = createHttpApp(app, { ...changed, keep }).fetch;
    },
    pacer,
    close: () => new Promise<void>((resolve) => {
      if (app.analyses.pace === pace) app.analyses.pace = paced;
      pacer.close();
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    }),
  };
}

/** The values no log line may show: the API token and every engine secret that is set. */
export function secretValues(config: Config, catalog: Catalog): string[] {
  const secrets = new Set<string>();
  if (config.api_token) secrets.add(config.api_token);
  for (const engine of catalog.engines) {
    for (const credential of engine.credentials) {
      if (credential.secret === false) continue;
      const value = config.engines[engine.id]?.[credential.setting];
      if (typeof value === 'string' && value) secrets.add(value);
    }
  }
  for (const settings of Object.values(config.engines)) {
    for (const [name, value] of Object.entries(settings)) {
      if (typeof value === 'string' && value && /key|secret|token|password/i.test(name)) secrets.add(value);
    }
  }
  // The push targets' keys (issue 37), from the setting and their environment variables.
  for (const key of pushSecrets(config)) secrets.add(key);
  return [...secrets];
}

/**
 * The request's path with runs of slashes as one: a client that joins its base URL and a prefix
 * written `/api` sends `//api/analyze` (the reference's MCP server does with API_PREFIX=/api),
 * and is answered as `/api/analyze`.
 */
function pathWithSingleSlashes(request: Request): string {
  const path = getPath(request);
  return path.includes('//') ? path.replace(/\/{2,}/g, '/') : path;
}
