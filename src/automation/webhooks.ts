/**
 * The webhooks (issue 36): events turned into deliveries for the endpoints of the setting
 * `webhooks` (and a request's `callback_url`), kept by an outbox (SQLite or Redis) and tried in
 * the background, so that an event never waits for, or fails with, a receiver.
 *
 * - `emit(event)`: any event (`watchlist.changed` from the watchlists) to every endpoint that
 *   subscribes to its type.
 * - `analysisCompleted(header)`: an analysis's `analysis.completed`, its `observable.verdict`s (each
 *   endpoint's `min_verdict`), and its callback.
 *
 * Each endpoint gets the event as its `max_tlp` allows (render.ts: above it, only the analysis's id
 * and link; then a single `observable.verdict` per analysis, since they would all be the same),
 * with every known secret masked, in its format. The configuration is read at each event and
 * each try: a reload's endpoints apply from then on, and an endpoint removed meanwhile is a
 * failed delivery. Each try is told to the observer (metrics) and the audit trail (no body, no
 * URL, no secret: the endpoint's name, the event, the outcome).
 */
import type { Config, WebhookSettings } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { AuditLog } from '../fs/audit-log.js';
import type { HttpTransport } from '../http/client.js';
import { callbackProblem } from '../analysis/request.js';
import type { AnalysisHeader, StoredResult } from '../store/analysis-store.js';
import type { Verdict } from '../verdict/verdict.js';
import { atLeast, completedEvent, leastOf, verdictEvents } from './analysis-events.js';
import { CALLBACK, randomMessageId, sendOnce, stableMessageId, type Delivery, type Target } from './delivery.js';
import type { EventSink, OasEvent } from './events.js';
import { resultsLink } from './links.js';
import type { DeliveryObserver, DeliveryOutcome, Outbox, OutboxHooks } from './outbox.js';
import { forTlp, renderBody, scrub, withinTlp } from './render.js';
import type { AttemptResult } from './retry.js';
import { callbackSecret, signingSecrets, webhookSecret } from './secrets.js';

export interface WebhooksOptions {
  /** The configuration in effect (read at each event and try). */
  config: () => Config;
  catalog: () => Catalog;
  /** Makes the outbox that keeps the deliveries, trying each through `attempt` and telling `report`. */
  outbox: (hooks: OutboxHooks) => Outbox;
  /** The shared HTTP client (the app's). */
  transport: () => HttpTransport;
  /** An analysis's stored results with their verdicts, a page at a time. */
  results: (header: AnalysisHeader) => AsyncIterable<StoredResult[]>;
  /** Values no body may hold besides the signing secrets: engine keys, the API token. */
  secrets?: () => readonly string[];
  env?: NodeJS.ProcessEnv;
  observer?: DeliveryObserver | undefined;
  audit?: AuditLog | undefined;
  /** One line about a delivery given up or a failure to queue one (the server's log). */
  warn?: (line: string) => void;
  /** One try's limit (default 10 s). */
  timeoutMs?: number;
}

export interface Webhooks extends EventSink {
  /** Queues the deliveries of a completed analysis; resolves once they are kept (rejects if they cannot be). */
  analysisCompleted(header: AnalysisHeader): Promise<void>;
  /** Starts trying deliveries (those kept from before first). */
  start(): void;
  close(): Promise<void>;
}

/** Deliveries added to the outbox at once. */
const BATCH = 500;

export function createWebhooks(options: WebhooksOptions): Webhooks {
  const env = options.env ?? process.env;
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`oas: ${line}\n`));
  const secretsOf = (config: Config) => [...(options.secrets?.() ?? []), ...signingSecrets(config, env)];

  /** `event` for `endpoint`: cut to its max_tlp, secrets masked, in its format. */
  const deliveryFor = (endpoint: WebhookSettings, event: OasEvent, id: string, config: Config, secrets: readonly string[]): Delivery => ({
    id,
    webhook: endpoint.name,
    format: endpoint.format,
    event: event.type,
    body: renderBody(endpoint.format, scrub(forTlp(event, endpoint.max_tlp, config.default_tlp), secrets)),
    ...(event.analysis ? { analysis_id: event.analysis.id } : {}),
  });

  const subscribed = (config: Config, type: string) => config.webhooks.filter((w) => (w.events as readonly string[]).includes(type));

  /** Deliveries being added (close waits for them: an event emitted is kept). */
  const adding = new Set<Promise<void>>();
  const keep = (deliveries: Delivery[]): Promise<void> => {
    const added = (async () => {
      for (let i = 0; i < deliveries.length; i += BATCH) await outbox.add(deliveries.slice(i, i + BATCH));
    })();
    adding.add(added);
    void added.catch(() => {}).finally(() => adding.delete(added));
    return added;
  };

  const report = (outcome: DeliveryOutcome) => {
    const { delivery } = outcome;
    try {
      options.observer?.onDelivery(outcome);
    } catch {
      // Metrics are never worth a delivery.
    }
    options.audit?.write({
      action: 'webhook_delivery',
      outcome: outcome.outcome === 'delivered' ? 'success' : 'failure',
      user: null,
      client: 'oas',
      webhook: delivery.webhook,
      event: delivery.event,
      delivery_id: delivery.id,
      analysis_id: delivery.analysis_id,
      attempt: outcome.attempt,
      result: outcome.outcome,
      status: outcome.status,
      retry_in_ms: outcome.waitMs,
      reason: outcome.outcome === 'delivered' ? undefined : outcome.reason,
    });
    if (outcome.outcome === 'failed') warn(`webhook ${delivery.webhook}: ${delivery.event} delivery ${delivery.id} given up after ${outcome.attempt} tr${outcome.attempt === 1 ? 'y' : 'ies'}: ${outcome.reason}`);
  };

  /** Where a delivery goes now, or why it cannot go anywhere. */
  const targetOf = (delivery: Delivery, config: Config): Target | string => {
    if (delivery.webhook === CALLBACK) {
      const problem = callbackProblem(delivery.url, config.callback_hosts);
      if (problem) return `${problem} any more`;
      const secret = callbackSecret(config, env);
      if (!secret) return `callback_secret_env's variable${config.callback_secret_env ? ` ${config.callback_secret_env}` : ''} holds no whsec_... secret`;
      return { url: delivery.url!, secret };
    }
    const endpoint = config.webhooks.find((w) => w.name === delivery.webhook);
    if (!endpoint) return `webhook "${delivery.webhook}" is no longer in the setting webhooks`;
    const secret = webhookSecret(endpoint, env);
    if (!secret && endpoint.format === 'standard') return `the environment variable ${endpoint.secret_env ?? '(secret_env)'} of webhook "${endpoint.name}" holds no whsec_... secret`;
    return { url: endpoint.url, secret };
  };

  const attempt = async (delivery: Delivery): Promise<AttemptResult> => {
    const target = targetOf(delivery, options.config());
    if (typeof target === 'string') return { outcome: 'failed', reason: target };
    return sendOnce(options.transport(), target, delivery, { ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
  };
  const outbox = options.outbox({ attempt, report });

  return {
    emit(event) {
      try {
        const config = options.config();
        const endpoints = subscribed(config, event.type);
        if (endpoints.length === 0) return;
        const secrets = secretsOf(config);
        const verdict = typeof event.data['verdict'] === 'string' ? (event.data['verdict'] as Verdict) : undefined;
        const deliveries = endpoints
          .filter((w) => event.type !== 'observable.verdict' || verdict === undefined || atLeast(verdict, w.min_verdict))
          .map((w) => deliveryFor(w, event, randomMessageId(), config, secrets));
        void keep(deliveries).catch((error: unknown) => warn(`webhooks: ${event.type} not queued: ${reasonOf(error)}`));
      } catch (error) {
        warn(`webhooks: ${event.type} not queued: ${reasonOf(error)}`);
      }
    },

    async analysisCompleted(header) {
      const config = options.config();
      const secrets = secretsOf(config);
      const link = resultsLink(config.public_url, header.id);
      const completed = completedEvent(header, link);
      const deliveries: Delivery[] = subscribed(config, 'analysis.completed')
        .map((w) => deliveryFor(w, completed, stableMessageId(header.id, w.name, completed.type), config, secrets));
      if (header.callback_url) {
        deliveries.push({
          id: stableMessageId(header.id, CALLBACK, header.callback_url, completed.type),
          webhook: CALLBACK,
          url: header.callback_url,
          format: 'standard',
          event: completed.type,
          body: renderBody('standard', scrub(completed, secrets)),
          analysis_id: header.id,
        });
      }
      await keep(deliveries);
      const verdictEndpoints = subscribed(config, 'observable.verdict');
      const least = leastOf(verdictEndpoints.map((w) => w.min_verdict));
      if (least === undefined) return;
      /** Endpoints above their max_tlp get one cut event per analysis: the first one. */
      const withheldSent = new Set<string>();
      let pending: Delivery[] = [];
      for await (const { index, verdict, event } of verdictEvents(header, options.results(header), least, options.catalog(), link)) {
        for (const endpoint of verdictEndpoints) {
          if (!atLeast(verdict, endpoint.min_verdict)) continue;
          if (!withinTlp(header.tlp, endpoint.max_tlp, config.default_tlp)) {
            if (withheldSent.has(endpoint.name)) continue;
            withheldSent.add(endpoint.name);
          }
          pending.push(deliveryFor(endpoint, event, stableMessageId(header.id, endpoint.name, event.type, index), config, secrets));
        }
        if (pending.length >= BATCH) {
          await keep(pending);
          pending = [];
        }
      }
      await keep(pending);
    },

    start: () => outbox.start(),
    close: async () => {
      await Promise.allSettled([...adding]);
      await outbox.close();
    },
  };
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
