/**
 * `oas worker`: takes engine jobs from the team's Redis (`redis_url`, `--redis`) until SIGTERM or
 * SIGINT, then finishes the jobs it holds (past a grace time it lets go of them: they go back to
 * the queue for another worker; while Redis is unreachable it lets go of them at once). Engine
 * errors and Redis outages are one line each on stderr; while Redis is unreachable it retries with
 * a growing back-off and says so.
 */
import { createApp, loadSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import { secretValues } from '../server/listen.js';
import { reportOutages } from '../scale/redis.js';
import { EXIT_OK, UsageError } from './errors.js';
import { startAppWorker, STOP_GRACE_MS } from '../scale/worker.js';
import { onSighup, readReload, ReloadableLogger, reloadLines } from './reload.js';
import { attachWebhooks, wantsWebhooks } from '../automation/attach.js';
import { checkWebhookSecrets } from '../automation/secrets.js';

/** How long closing may take once the jobs are finished or let go (Redis may be unreachable). */
const CLOSE_LIMIT_MS = 3_000;

export interface WorkerCommandOptions {
  concurrency?: string;
  config?: string;
  redis?: string;
}

export async function workerCommand(options: WorkerCommandOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.redis !== undefined) flags.redis_url = options.redis;
  if (options.concurrency !== undefined) {
    const n = Number(options.concurrency);
    if (!/^\d+$/.test(options.concurrency.trim()) || !Number.isInteger(n) || n < 1) {
      throw new UsageError(`--concurrency must be a whole number of at least 1, got "${options.concurrency}"`);
    }
    flags.worker_concurrency = n;
  }
  const { config: settings } = await loadSettings({ file: options.config, flags });
  if (!settings.redis_url) {
    throw new UsageError('a worker needs a Redis to take jobs from: set redis_url (--redis redis://host:6379 or OAS_REDIS_URL)');
  }
  checkWebhookSecrets(settings);
  const app = await createApp({ file: options.config, flags }, { role: 'worker' });
  const { config } = app;
  const link = app.scale!.link;
  const logger = new ReloadableLogger(config.log_format, secretValues(config, app.catalog));
  const say = (line: string) => process.stderr.write(`oas worker: ${line}\n`);
  reportOutages(link, say);
  // Webhooks (issue 36): the events of the analyses this worker completes are queued in Redis, and
  // it takes delivery jobs like any server (the same webhooks settings and secrets on every process).
  if (wantsWebhooks(config)) attachWebhooks(app, { secrets: () => secretValues(app.config, app.catalog), warn: say }).start();
  const worker = startAppWorker(app, logger);
  // SIGHUP: the configuration read again, for the jobs taken from now on (src/cli/reload.ts).
  const stopReloads = onSighup(async () => {
    const outcome = await readReload(app.config, { file: options.config, flags }, (next) => checkWebhookSecrets(next));
    if (outcome.ok) {
      app.apply(outcome);
      logger.replace(outcome.config.log_format, secretValues(outcome.config, outcome.catalog));
    }
    for (const { line } of reloadLines(outcome)) say(line);
  });
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      stopReloads();
      const held = worker.active();
      // While Redis is unreachable no job can be finished (its row cannot be written): let go at once.
      const up = link.ready();
      const grace = up ? STOP_GRACE_MS : 0;
      say(held === 0 ? 'stopping'
        : up ? `stopping: finishing ${held} job(s) (after ${STOP_GRACE_MS / 1000} s they go back to the queue)`
          : `stopping: Redis is unreachable, so the ${held} job(s) held go back to the queue once it is back`);
      const exit = () => {
        resolve(EXIT_OK);
        setImmediate(() => process.exit(EXIT_OK));
      };
      // Closing BullMQ's connections waits for Redis, which may be gone: never past this.
      const limit = setTimeout(exit, grace + CLOSE_LIMIT_MS);
      void worker.close(grace)
        .then(() => app.close())
        .finally(() => {
          clearTimeout(limit);
          exit();
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Announced once SIGTERM stops it cleanly: whoever waits for this line may stop it at once (a
    // signal before the handler would end the process by the default action, not exit 0).
    process.stdout.write(`oas worker: taking engine jobs from Redis at ${link.label} (concurrency ${config.worker_concurrency})\n`);
  });
}
