/**
 * Google APIs (Custom Search, Safe Browsing): one request and error format for every
 * googleapis.com service, shared by the search_engine and safe_browsing engines.
 */
import * as v from 'valibot';
import type { EngineContext } from '../engine/contract.js';
import { oneLine } from '../lookup/wording.js';
import type { HttpResponse, RequestOptions } from '../engine/contract.js';
import { parseJson, parseWith } from './client.js';
import { statusError, UpstreamError } from './errors.js';

/**
 * Google's error body (https://cloud.google.com/apis/design/errors):
 * `{"error": {"code": 400, "message": "API key not valid...", "status": "INVALID_ARGUMENT",
 *   "errors": [{"reason": "badRequest", ...}], "details": [{"reason": "API_KEY_INVALID", ...}]}}`.
 * Some older endpoints answer a plain string instead of the object.
 */
const GoogleErrorSchema = v.looseObject({
  error: v.union([
    v.looseObject({
      code: v.nullish(v.number()),
      message: v.nullish(v.string()),
      status: v.nullish(v.string()),
      errors: v.nullish(v.array(v.looseObject({ reason: v.nullish(v.string()), message: v.nullish(v.string()) }))),
      details: v.nullish(v.array(v.looseObject({ reason: v.nullish(v.string()) }))),
    }),
    v.string(),
  ]),
});

/** Non-2xx statuses that are answers to explain (bad key, bad cx, API disabled...), not retried. */
const EXPLAINED_STATUSES = [400, 401, 403, 404];

/**
 * One GET to a Google API. A 4xx becomes `HTTP 403 Forbidden: <Google's message> (<reason>)`,
 * secrets masked; 429 and 5xx are retried by the shared client (honouring Retry-After) and then
 * reported as `HTTP 429 Too Many Requests`.
 */
export async function googleRequest(ctx: EngineContext, url: string, query: RequestOptions['query']): Promise<HttpResponse> {
  const response = await ctx.http.request(url, {
    query,
    headers: { accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) {
    throw statusError(response.status, googleErrorReason(ctx, response.text()));
  }
  return response;
}

/**
 * A 2xx Google JSON body validated against `schema`. A body carrying `error` (the reference saw
 * these too) is an error, not an answer.
 */
export function googleJson<S extends v.GenericSchema>(ctx: EngineContext, text: string, schema: S): v.InferOutput<S> {
  const data = parseJson(text, v.unknown());
  const failure = v.safeParse(GoogleErrorSchema, data);
  if (failure.success) {
    const code = typeof failure.output.error === 'object' ? failure.output.error.code : undefined;
    const reason = describeGoogleError(ctx, failure.output.error) ?? 'unspecified error';
    throw new UpstreamError(`Google API error${typeof code === 'number' ? ` ${code}` : ''}: ${reason}`);
  }
  return parseWith(schema, data);
}

/** Google's message and machine reason from an error body, one line, secrets masked. */
function googleErrorReason(ctx: EngineContext, body: string): string | undefined {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(GoogleErrorSchema, data);
  return parsed.success ? describeGoogleError(ctx, parsed.output.error) : undefined;
}

function describeGoogleError(ctx: EngineContext, error: v.InferOutput<typeof GoogleErrorSchema>['error']): string | undefined {
  if (typeof error === 'string') return error.trim() ? oneLine(ctx.http.redact(error)) : undefined;
  const message = error.message ?? error.errors?.find((e) => e.message)?.message ?? undefined;
  // ErrorInfo's reason (API_KEY_INVALID) is the precise one; the legacy `errors[].reason` otherwise.
  const reason = error.details?.find((d) => d.reason)?.reason ?? error.errors?.find((e) => e.reason)?.reason ?? error.status ?? undefined;
  const text = [message, reason && !message?.includes(reason) ? `(${reason})` : undefined].filter(Boolean).join(' ');
  return text ? oneLine(ctx.http.redact(text)) : undefined;
}
