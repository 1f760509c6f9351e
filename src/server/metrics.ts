/**
 * `GET /metrics` of `oas serve`: the Prometheus text format, through prom-client, from a Registry
 * of the server's own (never the global one, so several apps in one process, tests included, do
 * not mix their counts). What is counted:
 *
 * - analyses: accepted (`oas_analyses_started_total{origin}`), their observables
 *   (`oas_observables_total`), and those this process runs now (`oas_analyses_running`);
 * - engine calls (`oas_engine_calls_total{engine,outcome}`, outcome ok, error, cached or
 *   not_found), how long each engine ran (`oas_engine_call_duration_seconds{engine}`), and the
 *   time calls waited for their engine's quota (`oas_quota_wait_seconds_total{engine}`);
 * - HTTP requests (`oas_http_requests_total{method,route,status}`,
 *   `oas_http_request_duration_seconds{route}`);
 * - webhook deliveries' tries (`oas_webhook_deliveries_total{webhook,outcome}`: outcome
 *   delivered, retry or failed; webhook an endpoint's name of the setting `webhooks`, or
 *   `callback` for a request's callback_url, never a URL);
 * - the process (prom-client's default metrics: CPU, memory, event loop, handles, GC).
 *
 * Every label is bounded: `route` is the matched route's template (`/api/results/:id`, never an
 * id) or `unmatched`, `method` one of the usual methods or `OTHER`, `engine` an id of the catalog.
 * The runner and the analysis service tell of their calls and analyses through the observers
 * they take (src/runner/types.ts, src/analysis/service.ts); neither knows this module.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AnalysisObserver } from '../analysis/service.js';
import type { CallObserver } from '../runner/types.js';
import type { DeliveryObserver } from '../automation/outbox.js';

export interface ServerMetrics {
  registry: Registry;
  /** For the runner's options (createApp's `observers`). */
  calls: CallObserver;
  /** For the analysis service (createApp's `observers`). */
  analyses: AnalysisObserver;
  /** For the webhooks' deliveries (src/automation/attach.ts). */
  deliveries: DeliveryObserver;
  /** Counts and times every request: install first. */
  middleware: MiddlewareHandler;
  /** The handler of `GET /metrics` (behind the token: see require-role.ts). */
  handler(c: Context): Promise<Response>;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Seconds: from a cache-fast lookup to an engine's longest deadline. */
const ENGINE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const started = new Counter({
    name: 'oas_analyses_started_total',
    help: 'Analyses accepted, by origin (server: the API, the web pages and MCP; cli: oas analyze).',
    labelNames: ['origin'] as const,
    registers,
  });
  const running = new Gauge({
    name: 'oas_analyses_running',
    help: 'Analyses this process is running now (with redis_url the server hands them to the queue and this stays 0).',
    registers,
  });
  const observables = new Counter({
    name: 'oas_observables_total',
    help: 'Observables of the analyses accepted.',
    registers,
  });
  const calls = new Counter({
    name: 'oas_engine_calls_total',
    help: 'Engine calls made by this process, by engine and outcome (ok, not_found: nothing to report, error, cached: answered from the cache).',
    labelNames: ['engine', 'outcome'] as const,
    registers,
  });
  const callSeconds = new Histogram({
    name: 'oas_engine_call_duration_seconds',
    help: 'How long each engine call ran (its quota wait and cache hits left out), by engine.',
    labelNames: ['engine'] as const,
    buckets: ENGINE_BUCKETS,
    registers,
  });
  const quotaWait = new Counter({
    name: 'oas_quota_wait_seconds_total',
    help: 'Seconds engine calls waited for their engine\'s quota (rate_limit, or a pause after HTTP 429), by engine.',
    labelNames: ['engine'] as const,
    registers,
  });
  const requests = new Counter({
    name: 'oas_http_requests_total',
    help: 'HTTP requests answered, by method, route template (unmatched: no route) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'oas_http_request_duration_seconds',
    help: 'Seconds until the response started, by route template.',
    labelNames: ['route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });

  const deliveries = new Counter({
    name: 'oas_webhook_deliveries_total',
    help: 'Webhook delivery tries made by this process, by webhook (an endpoint\'s name, or callback) and outcome (delivered; retry: tried again later; failed: given up).',
    labelNames: ['webhook', 'outcome'] as const,
    registers,
  });

  return {
    registry,
    deliveries: {
      onDelivery({ delivery, outcome }) {
        deliveries.inc({ webhook: delivery.webhook, outcome });
      },
    },
    calls: {
      onCall(engine, outcome, seconds) {
        calls.inc({ engine, outcome });
        if (seconds !== undefined) callSeconds.observe({ engine }, seconds);
      },
      onQuotaWait(engine, seconds) {
        quotaWait.inc({ engine }, seconds);
      },
    },
    analyses: {
      onStarted(origin, count) {
        started.inc({ origin });
        observables.inc(count);
      },
      onRunning(change) {
        running.inc(change);
      },
    },
    middleware: async (c, next) => {
      const begun = performance.now();
      try {
        await next();
      } finally {
        const route = routeOf(c);
        const method = METHODS.has(c.req.method) ? c.req.method : 'OTHER';
        requests.inc({ method, route, status: String(c.res.status) });
        requestSeconds.observe({ route }, (performance.now() - begun) / 1000);
      }
    },
    handler: async (c) => c.body(await registry.metrics(), 200, {
      'Content-Type': registry.contentType,
      'Cache-Control': 'no-store',
    }),
  };
}

/**
 * The template of the route that answers the request (`/api/results/:id`), or `unmatched`: the
 * last matched route that is a handler (middleware is mounted for every method, `ALL`), so a
 * request a middleware refused (401, 421, 429) is counted under the route it asked for.
 */
function routeOf(c: Context): string {
  try {
    const handler = matchedRoutes(c).findLast((route) => route.method !== 'ALL');
    return handler?.path ?? 'unmatched';
  } catch {
    return 'unmatched';
  }
}
