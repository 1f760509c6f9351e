/**
 * `oas serve`: the HTTP API on @hono/node-server, bound to 127.0.0.1 unless told otherwise.
 * Bound to any other address it needs `api_token` (or the explicit `allow_unauthenticated`).
 * One log line per request on stderr (`log_format`); "listening on <url>" on stdout.
 */
import ipaddr from 'ipaddr.js';
import { createApp, loadSettings } from '../app.js';
import { VERSION } from './version.js';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { invalidHosts } from '../server/host-guard.js';
import { listen, secretValues } from '../server/listen.js';
import { createMetrics } from '../server/metrics.js';
import { reportOutages } from '../scale/redis.js';
import { holdServing } from '../fs/serving.js';
import { attachWebhooks, wantsWebhooks } from '../automation/attach.js';
import { checkWebhookSecrets } from '../automation/secrets.js';
import type { WatchlistRun } from '../automation/watchlist.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';
import { onSighup, readReload, ReloadableLogger, reloadLines } from './reload.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  prefix?: string;
  config?: string;
  dataDir?: string;
  catalog?: string;
  logFormat?: string;
  /** `--redis URL` (setting redis_url). */
  redis?: string;
  /** false with `--no-worker`: this server takes no engine jobs (other processes do). */
  worker?: boolean;
}


export async function serveCommand(options: ServeOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.host !== undefined) flags.host = options.host;
  if (options.prefix !== undefined) flags.api_prefix = options.prefix;
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  if (options.logFormat !== undefined) flags.log_format = options.logFormat as Config['log_format'];
  if (options.redis !== undefined) flags.redis_url = options.redis;
  if (options.port !== undefined) {
    const port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${options.port}"`);
    flags.port = port;
  }
  // Refusals come before anything is opened or created.
  const settings = (await loadSettings({ file: options.config, flags })).config;
  checkServing(settings);
  if (options.worker === false && !settings.redis_url) {
    throw new UsageError('--no-worker needs redis_url (--redis URL or OAS_REDIS_URL): without Redis the server runs its analyses itself');
  }
  // GET /metrics: this process's own counts, its engine calls and analyses told by the runner and
  // the service (with redis_url, the engine calls of the jobs this server's worker takes).
  const metrics = createMetrics();
  const health = { stopping: false };
  const app = await createApp({ file: options.config, flags }, { role: 'server', observers: metrics });
  const { config } = app;
  // `oas restore` refuses while this process uses the SQLite file (src/fs/serving.ts; released at exit).
  const releaseFolder = app.storage ? holdServing(config.data_dir) : undefined;
  const logger = new ReloadableLogger(config.log_format, secretValues(config, app.catalog));
  app.analyses.onEngineError = (entry) => logger.engineError(entry);
  // Webhooks (issue 36): queued as analyses complete (here, or with redis_url by the worker that
  // completes them) and as watchlists change; tried in the background from the SQLite file, or
  // from Redis by every process that takes jobs.
  const webhooks = wantsWebhooks(config)
    ? attachWebhooks(app, { secrets: () => secretValues(app.config, app.catalog), observer: metrics.deliveries, warn: (line) => logger.error(line) })
    : undefined;
  if (app.scale) {
    reportOutages(app.scale.link, (line, level) => (level === 'info' ? logger.info(line) : logger.error(line)));
    // Served at once all the same if Redis is not there yet: 503 until it is.
    await app.scale.link.whenReady(5_000).catch((error: Error) => logger.error(`${error.message}; serving anyway (503 until it answers)`));
  }
  // The watchlists (issue 36): made before the API so that both share one service and its runs.
  const { watchlistsOf, startWatchlistSchedule, closeWatchlists } = await import('../automation/watchlists-app.js');
  const watchlistOptions = {
    onRunDone: (name: string, run: WatchlistRun) => logger.info(run.status === 'failed'
      ? `watchlist ${name}: run failed: ${run.error ?? 'unknown reason'}`
      : `watchlist ${name}: run ${run.analysis_id} done, ${run.baseline ? 'its baseline' : `${run.changes.length} change(s)`}`),
    onError: (error: unknown) => logger.error(`watchlists: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
  };
  const watchlists = watchlistsOf(app, watchlistOptions);
  let running;
  try {
    running = await listen(app, { logger, version: VERSION, metrics, health, watchlists });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `${config.host}:${config.port} is already in use`
      : code === 'EACCES' ? `no permission to listen on ${config.host}:${config.port}`
        : (error as Error).message;
    process.stderr.write(`oas: cannot serve: ${reason}\n`);
    await app.close();
    return EXIT_FAILED;
  }
  // Listening: from now on SIGTERM and SIGINT stop the server cleanly, also while it is still
  // resuming analyses or starting its worker (a stop asked then waits for those steps).
  let stop: (() => void) | undefined;
  let stopAsked = false;
  const askStop = () => {
    if (stopAsked) return;
    stopAsked = true;
    stop?.();
  };
  process.once('SIGINT', askStop);
  process.once('SIGTERM', askStop);
  // SIGHUP: the configuration read again as it was at start, for the analyses started from now on;
  // refused whole when invalid (src/cli/reload.ts).
  const stopReloads = onSighup(async () => {
    const outcome = await readReload(app.config, { file: options.config, flags }, checkServing);
    if (outcome.ok) {
      app.apply(outcome);
      logger.replace(outcome.config.log_format, secretValues(outcome.config, outcome.catalog));
      running.rebuild();
    }
    for (const { level, line } of reloadLines(outcome)) logger[level](line);
    // The audit trail: key paths only (never a value), or why it was refused.
    app.audit.write(outcome.ok
      ? { action: 'config_reloaded', outcome: 'success', user: null, client: 'cli', via: 'SIGHUP', changed: outcome.changed, restart: outcome.restart }
      : { action: 'config_reloaded', outcome: 'failure', user: null, client: 'cli', via: 'SIGHUP', reason: outcome.reason });
  });
  const where = app.scale ? `data in Redis at ${app.scale.link.label}` : `data in ${config.data_dir}`;
  process.stdout.write(`oas listening on ${running.url} (API under ${config.api_prefix}, ${where})\n`);
  if (isWildcard(config.host) && config.allowed_hosts.length === 0) {
    process.stdout.write(`oas: bound to ${config.host}: only requests naming localhost, 127.0.0.1 or [::1] as their Host are answered (421 otherwise); list the names clients use in allowed_hosts (OAS_ALLOWED_HOSTS)\n`);
  }
  const resumed = await app.analyses.resumePending();
  if (resumed > 0) process.stdout.write(`oas: resumed ${resumed} unfinished analysis(es)\n`);
  // Deliveries kept from before are tried again now; with --no-worker they are left to the workers.
  if (webhooks && (!app.scale || options.worker !== false)) webhooks.start();
  const worker = app.scale && options.worker !== false ? await import('../scale/worker.js').then((w) => w.startAppWorker(app, logger)) : undefined;
  // On schedule: a timer here, or with Redis the job schedulers every server takes from (--no-worker too).
  const schedule = await startWatchlistSchedule(app, watchlistOptions);
  if (app.scale) {
    process.stdout.write(worker
      ? `oas: taking engine jobs from Redis at ${app.scale.link.label} (concurrency ${config.worker_concurrency})\n`
      : 'oas: --no-worker: engine jobs are left to `oas worker` processes\n');
  }

  return new Promise<number>((resolve) => {
    stop = () => {
      stopReloads();
      health.stopping = true; // /healthz answers 503 from now on
      // SQLite: unfinished analyses stay recorded and resume at the next start; in-flight lookups
      // are abandoned, so the process exits rather than waiting for them. Redis: the worker
      // finishes the jobs it holds (or hands them back to the queue past STOP_GRACE_MS).
      void running.close()
        .then(() => schedule.stop())
        .then(() => closeWatchlists(app))
        .then(() => worker?.close())
        .then(() => app.webhooks?.close())
        .then(() => app.runner.flush())
        .then(() => app.storage?.close())
        .then(() => app.scale?.link.close())
        .finally(() => {
          releaseFolder?.();
          resolve(EXIT_OK);
          setImmediate(() => process.exit(EXIT_OK));
        });
    };
    if (stopAsked) stop();
  });
}

/** What `oas serve` refuses at start and on a reload: checkAccess, and webhooks it cannot sign for. */
function checkServing(config: Config): void {
  checkAccess(config);
  checkWebhookSecrets(config);
}

/**
 * Serving beyond this machine without a token would let anyone who can reach it run analyses on
 * the team's keys: refused unless `api_token` is set or `allow_unauthenticated` says so.
 */
function checkAccess(config: Config): void {
  const bad = invalidHosts(config.allowed_hosts);
  if (bad.length > 0) {
    throw new ConfigError(`invalid "allowed_hosts": ${JSON.stringify(bad[0])} is not a host name (expected a name or an address, optionally with :port)`);
  }
  if (config.auth_header && config.trusted_proxies.length === 0) {
    throw new ConfigError(`"auth_header" needs "trusted_proxies": the addresses of the proxies allowed to name the user with ${config.auth_header} (OAS_TRUSTED_PROXIES); from any other address the header is ignored`);
  }
  // With auth_header every request needs a user (the proxy's header or a token): not open.
  const proxied = config.auth_header !== '' && config.trusted_proxies.length > 0;
  if (!config.api_token && !proxied && !config.allow_unauthenticated && !isLoopback(config.host)) {
    throw new UsageError(`refusing to serve on ${config.host} without an API token: anyone who can reach it could run analyses on your engines' keys; set api_token (OAS_API_TOKEN), or allow_unauthenticated: true (OAS_ALLOW_UNAUTHENTICATED=true) to serve it without one`);
  }
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. */
export function isLoopback(host: string): boolean {
  const name = host.trim().replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(name)) return false;
  return ipaddr.process(name).range() === 'loopback';
}

function isWildcard(host: string): boolean {
  const name = host.trim().replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(name) && ipaddr.parse(name).range() === 'unspecified';
}
