/**
 * One delivery (issue 36): an event's body for one endpoint, kept until it is delivered or given
 * up (in the SQLite file or in Redis), and one try of it through the shared HTTP client
 * (src/http/client.ts: proxy, TLS setting, timeouts; engines and webhooks share its pool).
 *
 * A try POSTs the body with the Standard Webhooks headers (`webhook-id`, the same on every try,
 * so a receiver can drop a repeat; `webhook-timestamp`, the try's time; `webhook-signature`,
 * `v1,<base64 HMAC-SHA256 of id.timestamp.body>`), signed by the specification's own library
 * (`standardwebhooks`: what receivers verify with, so both sides read the secret and build the
 * signed text the same way). Redirects are not followed: the URL's host is what was allowed.
 *
 * What a delivery keeps never holds a secret: an endpoint's URL (a Slack or Teams URL is its
 * own secret) and its signing secret are looked up by its name when it is tried; only a
 * `callback_url` (the caller's, checked against `callback_hosts`) is kept with it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookFormat } from '../config/schema.js';
import { STATUS_CODES } from 'node:http';
import { InvalidHostError, NetworkError, TimeoutError } from '../http/errors.js';
import { parseRetryAfter, type HttpTransport } from '../http/client.js';
import { statusOutcome, type AttemptResult } from './retry.js';

/** The name `callback_url` deliveries go by (metrics, audit lines). */
export const CALLBACK = 'callback';

export interface Delivery {
  /** `webhook-id`: `msg_...`, the same on every try. */
  id: string;
  /** The endpoint's name (setting `webhooks`), or CALLBACK. */
  webhook: string;
  /** Only for CALLBACK: the request's `callback_url`. */
  url?: string;
  format: WebhookFormat;
  /** The event's type. */
  event: string;
  /** The exact text sent and signed. */
  body: string;
  /** The analysis it is about, if any. */
  analysis_id?: string;
}

/** Where a delivery goes now, and what signs it. */
export interface Target {
  url: string;
  secret: string | undefined;
}

/** A fresh message id. */
export function randomMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}

/**
 * The same id for the same message (an analysis's event for one endpoint): a delivery queued twice
 * (a worker that died after completing the analysis, before it knew the deliveries were queued)
 * is one message, which a queue keeps once and a receiver can recognise.
 */
export function stableMessageId(...parts: (string | number)[]): string {
  return `msg_${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 32)}`;
}

export interface SendOptions {
  /** One try's limit (default 10 s). */
  timeoutMs?: number;
  /** The time the try is signed with (default now). */
  now?: () => Date;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const ALL_STATUSES = Array.from({ length: 500 }, (_, i) => 100 + i);
const ANSWER_CHARS = 2000;

/** The Standard Webhooks headers of one try. */
export function signedHeaders(id: string, body: string, secret: string | undefined, at: Date): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) };
  if (secret) headers['webhook-signature'] = new Webhook(secret).sign(id, at, body);
  return headers;
}

/** One try: POST, signed; what it came to (never throws). */
export async function sendOnce(transport: HttpTransport, target: Target, delivery: Pick<Delivery, 'id' | 'body'>, options: SendOptions = {}): Promise<AttemptResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const at = (options.now ?? (() => new Date()))();
  const secrets = [target.secret, target.url].filter((s): s is string => Boolean(s));
  const client = transport.client({ signal: AbortSignal.timeout(timeoutMs + 1000), deadline: Date.now() + timeoutMs + 1000, timeoutMs, retries: 0, secrets, urlSetting: 'the webhook\'s url' });
  try {
    const response = await client.request(target.url, {
      method: 'POST',
      body: delivery.body,
      headers: signedHeaders(delivery.id, delivery.body, target.secret, at),
      acceptStatus: ALL_STATUSES,
      retries: 0,
      timeoutMs,
      followRedirects: false,
    });
    const outcome = statusOutcome(response.status);
    const statusLine = `HTTP ${response.status}${STATUS_CODES[response.status] ? ` ${STATUS_CODES[response.status]}` : ''}`;
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    const redirect = response.status >= 300 && response.status < 400 ? ' (a redirect, not followed: give the final URL)' : '';
    return {
      outcome,
      status: response.status,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      reason: `${statusLine}${redirect}`,
      answer: client.redact(response.text().slice(0, ANSWER_CHARS)),
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    const retryable = (error instanceof TimeoutError || error instanceof NetworkError) && !(error instanceof InvalidHostError);
    return { outcome: retryable ? 'retry' : 'failed', reason: client.redact(reason) };
  }
}
