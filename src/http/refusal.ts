/**
 * Upstream refusals (bad or missing key, plan, quota, unknown address): the status with the
 * upstream's own reason on one line, secrets masked. Shared by the engines that take a key.
 */
import * as v from 'valibot';
import { EngineError, type EngineContext } from '../engine/contract.js';
import { reasonLine } from '../lookup/wording.js';
import type { HttpResponse } from '../engine/contract.js';
import { HttpStatusError, statusError } from './errors.js';

/**
 * Non-2xx statuses whose body says why the upstream refused (bad request, bad or missing key,
 * plan or quota, unknown address). 429 and 5xx are not among them: the client retries those.
 */
export const EXPLAINED_STATUSES: readonly number[] = [400, 401, 402, 403, 404, 422];

/** The API key from the settings; a lookup called without one fails before any request. */
export function apiKeyOf(ctx: EngineContext): string {
  const key = ctx.settings.api_key;
  if (typeof key !== 'string' || key === '') throw new EngineError('not configured: api_key');
  return key;
}

const ReasonSchema = v.looseObject({
  error: v.optional(v.union([
    v.string(),
    v.looseObject({ title: v.optional(v.string()), message: v.optional(v.string()) }),
  ])),
  message: v.optional(v.string()),
  detail: v.optional(v.string()),
});

/**
 * The reason an upstream gives in an error body, on one line with secrets masked, cut to its
 * first sentence (the rest is advice, links, request ids): `{"error": "..."}`,
 * `{"error": {"title", "message"}}` (ipinfo), `{"message": "..."}`, `{"detail": "..."}`, or a
 * short plain-text body. HTML pages (proxies, load balancers) say nothing.
 */
export function upstreamReason(body: string, ctx: EngineContext): string | undefined {
  let reason: string | undefined;
  try {
    const parsed = v.safeParse(ReasonSchema, JSON.parse(body));
    if (parsed.success) {
      const { error, message, detail } = parsed.output;
      reason = typeof error === 'string'
        ? error
        : error ? [error.title, error.message].filter((s) => s && s.trim() !== '').join(': ') : undefined;
      reason ||= message || detail;
    }
  } catch {
    const text = body.trim();
    if (text !== '' && !text.startsWith('<') && text.length <= 300) reason = text;
  }
  return reason ? reasonLine(ctx.http.redact(reason)) : undefined;
}

/** `HTTP 403 Forbidden: <the upstream's reason>` for a refused call. */
export function refusedError(response: HttpResponse, ctx: EngineContext): HttpStatusError {
  return statusError(response.status, upstreamReason(response.text(), ctx));
}
