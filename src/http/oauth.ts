/**
 * OAuth2 client-credentials tokens for the engines that need one (CrowdStrike, Microsoft Defender
 * for Endpoint).
 *
 * - One token per process per (token URL, client id, client secret, extra form fields), kept in
 *   memory only, in a map keyed by a SHA-256 of those (never by the raw secret). It is never
 *   written to the data directory, a log, a result or an error.
 * - Concurrent callers share one in-flight token request.
 * - A token is reused until `expires_in` (seconds, number or string) minus a safety margin has
 *   passed; without `expires_in`, until the JWT's `exp` minus the margin (the claim is only read
 *   to schedule the refresh, never trusted for anything else); without either, for five minutes.
 * - When the API rejects a token (401), it is dropped, a new one is requested once and the call is
 *   retried once (`withBearer`).
 * - Token requests go through the call's `ctx.http` (proxy, TLS, deadline, retries on 429/5xx).
 *   A refused token request is one line: `CrowdStrike: authentication failed (HTTP 401
 *   Unauthorized: access denied, invalid client)`, the first sentence of the upstream's reason,
 *   the client secret and the token masked. When the token endpoint says which credential it
 *   refused (Microsoft's `error_codes`: an invalid or expired secret, an unknown application),
 *   the error names that setting only (`engines.provider_14.client_secret or OAS_MDE_CLIENT_SECRET`).
 */
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { CredentialsRefusedError, type EngineContext } from '../engine/contract.js';
import { reasonLine } from '../lookup/wording.js';
import type { HttpClient, HttpResponse } from '../engine/contract.js';
import { parseJson } from './client.js';
import { HttpStatusError, UpstreamError, statusError } from './errors.js';
import { redact } from './redact.js';

/** How to obtain a token: the token endpoint and the client's credentials. */
export interface TokenSpec {
  /** Names the upstream in errors (`CrowdStrike`, `Microsoft Defender for Endpoint`). */
  service: string;
  /** The token endpoint, e.g. `https://api.crowdstrike.com/oauth2/token`. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Further form fields (`grant_type`, `resource`, `scope`); `client_id` and `client_secret` are added. */
  form?: Readonly<Record<string, string>>;
  /**
   * The engine's settings holding the client id and secret (and the tenant, for Microsoft's
   * endpoints), as its credentials declare them (default `client_id`, `client_secret`, no tenant):
   * a refusal names the one to check.
   */
  settings?: { clientId: string; clientSecret: string; tenant?: string };
}

/** Seconds before the announced expiry at which a token is no longer used. */
export const EXPIRY_MARGIN_SECONDS = 60;
/** Lifetime assumed when the token endpoint says nothing about it (a 401 still triggers a refresh). */
export const DEFAULT_LIFETIME_SECONDS = 300;

/** The token endpoint refused the client (or failed): the message names the service. */
export class AuthenticationError extends UpstreamError {
  override name = 'AuthenticationError';
}

interface Token {
  value: string;
  /** Epoch milliseconds from which the token is stale. */
  staleAt: number;
}

type Entry = { token: Token } | { pending: Promise<Token> };

const tokens = new Map<string, Entry>();

/** Forgets every token of the process (tests; a credential change). */
export function clearTokenCache(): void {
  tokens.clear();
}

/** Standard OAuth2 token answer; CrowdStrike and Azure AD v1 both fit. */
const TokenSchema = v.looseObject({
  access_token: v.pipe(v.string(), v.minLength(1)),
  token_type: v.nullish(v.string()),
  expires_in: v.nullish(v.union([v.number(), v.string()])),
});

/**
 * Reasons in error bodies: OAuth2 (`error`, `error_description`; Microsoft adds `error_codes`),
 * CrowdStrike (`errors[]`), Microsoft Graph-style (`error.{code,message}`).
 */
const ReasonSchema = v.looseObject({
  error: v.nullish(v.union([v.string(), v.looseObject({ code: v.nullish(v.string()), message: v.nullish(v.string()) })])),
  error_description: v.nullish(v.string()),
  error_codes: v.nullish(v.array(v.unknown())),
  errors: v.nullish(v.array(v.looseObject({ code: v.nullish(v.unknown()), message: v.nullish(v.string()) }))),
  message: v.nullish(v.string()),
});

/**
 * The reason an OAuth2 server or an API gives in an error body, on one line with secrets masked
 * by `http`, cut to its first sentence: `AADSTS7000215: Invalid client secret provided.`,
 * `access denied, invalid bearer token`... An OAuth2 description stands without its code
 * (`invalid_client`), which says less; what follows the first sentence (Azure's advice, then its
 * trace and correlation ids) is left out.
 */
export function errorReason(body: string, http: HttpClient): string | undefined {
  let parts: (string | null | undefined)[] = [];
  try {
    const parsed = v.safeParse(ReasonSchema, JSON.parse(body));
    if (!parsed.success) return undefined;
    const { error, error_description: description, errors, message } = parsed.output;
    if (typeof error === 'string') parts = [description?.trim() ? description : error];
    else if (error) parts = [error.code, error.message];
    else if (errors && errors.length > 0) parts = [errors[0]!.message];
    else parts = [message];
  } catch {
    const text = body.trim();
    if (text !== '' && !text.startsWith('<') && text.length <= 300) parts = [text];
  }
  const reason = parts
    .map((part) => part?.split(/\r?\n/)[0]?.trim())
    .filter((part): part is string => Boolean(part))
    .join(': ');
  return reason ? reasonLine(http.redact(reason)) : undefined;
}

/** Microsoft identity platform codes (`error_codes`, AADSTS...) that say which credential was refused. */
const SECRET_REFUSED = new Set([
  7000215, // invalid client secret
  7000222, // client secret expired
  7000218, // no client secret sent
]);
const CLIENT_ID_REFUSED = new Set([
  700016, // no application with this identifier in the directory
]);
const TENANT_REFUSED = new Set([
  90002, // tenant not found
  900023, // the tenant identifier is not a valid one
]);

/** The setting of the credential a token endpoint's error body says it refused, if it says so. */
function refusedSetting(body: string, spec: TokenSpec): string | undefined {
  let codes: unknown[] | null | undefined;
  try {
    const parsed = v.safeParse(ReasonSchema, JSON.parse(body));
    codes = parsed.success ? parsed.output.error_codes : undefined;
  } catch {
    return undefined;
  }
  const settings: { clientId: string; clientSecret: string; tenant?: string } = spec.settings ?? { clientId: 'client_id', clientSecret: 'client_secret' };
  for (const code of codes ?? []) {
    if (SECRET_REFUSED.has(Number(code))) return settings.clientSecret;
    if (CLIENT_ID_REFUSED.has(Number(code))) return settings.clientId;
    if (TENANT_REFUSED.has(Number(code)) && settings.tenant) return settings.tenant;
  }
  return undefined;
}

function keyOf(spec: TokenSpec): string {
  const form = Object.entries(spec.form ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify([spec.tokenUrl, spec.clientId, spec.clientSecret, form])).digest('hex');
}

/**
 * A valid token for `spec`: the process's cached one, the one being requested by another caller,
 * or a new one. `rejected` is a token the API just refused: it is not handed out again.
 */
export async function getToken(ctx: EngineContext, spec: TokenSpec, rejected?: string): Promise<string> {
  const key = keyOf(spec);
  const entry = tokens.get(key);
  if (entry && 'pending' in entry) return (await entry.pending).value;
  if (entry && entry.token.value !== rejected && Date.now() < entry.token.staleAt) return entry.token.value;
  const holder: { pending: Promise<Token> } = {
    pending: requestToken(ctx, spec).then(
      (token) => {
        if (tokens.get(key) === holder) tokens.set(key, { token });
        return token;
      },
      (error: unknown) => {
        if (tokens.get(key) === holder) tokens.delete(key);
        throw error;
      },
    ),
  };
  tokens.set(key, holder);
  return (await holder.pending).value;
}

/**
 * A new token for `spec`, neither read from the process's cache nor kept there: `oas doctor`
 * (issue 40) checks the credentials as they are now, with the one call of the token request.
 */
export async function grantedToken(ctx: EngineContext, spec: TokenSpec): Promise<string> {
  await requestToken(ctx, spec);
  return 'token granted';
}

async function requestToken(ctx: EngineContext, spec: TokenSpec): Promise<Token> {
  const http = ctx.http.withSecrets([spec.clientSecret]);
  let response: HttpResponse;
  try {
    response = await http.request(spec.tokenUrl, {
      method: 'POST',
      headers: { accept: 'application/json' },
      form: { ...spec.form, client_id: spec.clientId, client_secret: spec.clientSecret },
      acceptStatus: [400, 401, 403],
    });
  } catch (error) {
    // 404 (a wrong URL), 429 and 5xx after the client's retries; timeouts and network errors as they are.
    if (error instanceof HttpStatusError) throw new AuthenticationError(`${spec.service}: token request failed (${http.redact(error.message)})`);
    throw error;
  }
  if (response.status >= 300) {
    const body = response.text();
    const refused = refusedSetting(body, spec);
    throw new CredentialsRefusedError(spec.service, statusError(response.status, errorReason(body, http)).message, refused ? [refused] : undefined);
  }
  let answer: v.InferOutput<typeof TokenSchema>;
  try {
    answer = parseJson(response.text(), TokenSchema);
  } catch (error) {
    throw new AuthenticationError(`${spec.service}: unusable token answer (${http.redact((error as Error).message)})`);
  }
  const now = Date.now();
  const lifetime = secondsOf(answer.expires_in) ?? jwtLifetime(answer.access_token, now);
  const staleAt = lifetime === undefined
    ? now + DEFAULT_LIFETIME_SECONDS * 1000
    : now + (lifetime - EXPIRY_MARGIN_SECONDS) * 1000;
  return { value: answer.access_token, staleAt };
}

/** `1799` or `"3599"`; undefined when absent or not a number. */
function secondsOf(value: number | string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = typeof value === 'number' ? value : value.trim() === '' ? Number.NaN : Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** Seconds until the `exp` claim of a JWT, read without verification (only to schedule a refresh). */
export function jwtLifetime(token: string, now = Date.now()): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp - now / 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Masks the token and the client secret in an error's message (in place) and returns it. */
function scrub(error: unknown, secrets: readonly string[]): unknown {
  if (error instanceof Error) error.message = redact(error.message, secrets);
  return error;
}

/**
 * Runs `send` with a bearer token for `spec`, and the call's HTTP client that also masks that
 * token. When `send` throws an HttpStatusError 401 (the client does so for a 401 not in
 * `acceptStatus`; an engine that reads the reason throws `statusError(401, reason)`), the token
 * is dropped, a new one requested and `send` tried once more; a second 401 is an
 * AuthenticationError naming the service. Every error leaves with the token and secret masked.
 */
export async function withBearer<T>(
  ctx: EngineContext,
  spec: TokenSpec,
  send: (token: string, http: HttpClient) => Promise<T>,
): Promise<T> {
  let token = await getToken(ctx, spec);
  for (let attempt = 0; ; attempt++) {
    const secrets = [spec.clientSecret, token];
    try {
      return await send(token, ctx.http.withSecrets(secrets));
    } catch (error) {
      const unauthorized = error instanceof HttpStatusError && error.status === 401;
      if (unauthorized && attempt === 0) {
        token = await getToken(ctx, spec, token);
        continue;
      }
      if (unauthorized) {
        throw new CredentialsRefusedError(spec.service, redact((error as Error).message, secrets));
      }
      throw scrub(error, secrets);
    }
  }
}
