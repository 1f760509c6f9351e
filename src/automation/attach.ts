/**
 * The webhooks of a server or worker (issue 36), made over its app: the outbox of its storage
 * (the SQLite file, or Redis with `redis_url`), the app's HTTP client, configuration and catalog,
 * its audit trail; attached to the app (`app.webhooks`, `app.events`) and to the analyses this
 * process completes (`app.analyses.onCompleted`; a Redis worker's completions go through
 * `app.webhooks` too: src/scale/worker.ts). `oas serve` and `oas worker` call it at start, after
 * `checkWebhookSecrets`, then `start()` the deliveries.
 */
import type { App } from '../app.js';
import type { Clock } from '../runner/quota.js';
import type { DeliveryObserver, OutboxHooks } from './outbox.js';
import { redisOutbox } from './redis-outbox.js';
import { sqliteOutbox } from './sqlite-outbox.js';
import { createWebhooks, type Webhooks } from './webhooks.js';

export interface AttachOptions {
  /** Values no body may hold: the engines' keys and the API token (secretValues of src/server/listen.ts). */
  secrets?: () => readonly string[];
  /** The server's metrics (src/server/metrics.ts). */
  observer?: DeliveryObserver | undefined;
  /** One line for the log (a delivery given up, a failure to queue). */
  warn?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Tests: a virtual clock for the SQLite outbox's waits, shorter waits, a shorter try. */
  clock?: Clock;
  waits?: readonly number[];
  timeoutMs?: number;
}

/** Whether the configuration asks for webhooks at all (endpoints, or callbacks allowed). */
export function wantsWebhooks(config: App['config']): boolean {
  return config.webhooks.length > 0 || config.callback_hosts.length > 0;
}

export function attachWebhooks(app: App, options: AttachOptions = {}): Webhooks {
  const outbox = (hooks: OutboxHooks) => {
    const shared = { ...hooks, ...(options.waits ? { waits: options.waits } : {}) };
    if (app.scale) return redisOutbox(app.scale.link, { ...shared, lockMs: app.config.job_lock_ms });
    return sqliteOutbox(app.storage!.analysesTable, { ...shared, ...(options.clock ? { clock: options.clock } : {}), ...(options.warn ? { warn: options.warn } : {}) });
  };
  const webhooks = createWebhooks({
    config: () => app.config,
    catalog: () => app.catalog,
    outbox,
    transport: () => app.transport,
    results: (header) => app.analyses.storedResults(header),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.env ? { env: options.env } : {}),
    observer: options.observer,
    audit: app.audit,
    ...(options.warn ? { warn: options.warn } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  app.webhooks = webhooks;
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`oas: ${line}\n`));
  app.analyses.onCompleted = (header) => webhooks.analysisCompleted(header).catch((error: unknown) => {
    warn(`webhooks: the events of analysis ${header.id} were not queued: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  });
  return webhooks;
}
