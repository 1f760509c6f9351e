import { createRequire } from 'node:module';

/**
 * Failures of upstream calls. Every message is one line, written for the analyst, and carries no
 * secret (the client redacts before constructing them).
 */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  /** Whether trying again later may succeed (network errors, 429, 5xx, timeouts). */
  readonly retryable: boolean;
  constructor(message: string, retryable = false) {
    super(message);
    this.retryable = retryable;
  }
}

export class HttpStatusError extends UpstreamError {
  override name = 'HttpStatusError';
  readonly status: number;
  /** Seconds the upstream asked us to wait (Retry-After), if any. */
  readonly retryAfterMs: number | undefined;
  constructor(status: number, statusText: string, retryAfterMs?: number, detail?: string) {
    const wait = retryAfterMs !== undefined ? ` (retry after ${Math.ceil(retryAfterMs / 1000)} s)` : '';
    super(`HTTP ${status}${statusText ? ` ${statusText}` : ''}${wait}${detail ? `: ${detail}` : ''}`, status === 429 || status >= 500);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Node's status texts, read from node:http when a status error is first made: node:http (its
 * client, server and agent modules) is not loaded at start for this (`oas engines`, a cached
 * `oas analyze`: issue 33).
 */
let statusTexts: Record<number, string | undefined> | undefined;
const statusText = (status: number): string => {
  statusTexts ??= (createRequire(import.meta.url)('node:http') as typeof import('node:http')).STATUS_CODES;
  return statusTexts[status] ?? '';
};

/** `HTTP 403 Forbidden[: detail]`, the status text filled in. */
export function statusError(status: number, detail?: string, retryAfterMs?: number): HttpStatusError {
  return new HttpStatusError(status, statusText(status), retryAfterMs, detail);
}

export class TimeoutError extends UpstreamError {
  override name = 'TimeoutError';
  /** The host the call was waiting for, when known. */
  readonly host: string | undefined;
  constructor(ms: number, host?: string) {
    super(`timeout after ${ms} ms${host ? ` waiting for ${host}` : ''}`, true);
    this.host = host;
  }
}

export class NetworkError extends UpstreamError {
  override name = 'NetworkError';
}

/**
 * A host name no resolver can look up (a label over 63 characters, a name over 253, an empty
 * label, a character DNS names do not hold): `<host> is not a valid host name: <why>`. Never
 * retried; the runner adds the setting that holds the name (`engines.<id>.base_url`).
 */
export class InvalidHostError extends NetworkError {
  override name = 'InvalidHostError';
  readonly host: string;
  constructor(host: string, problem: string) {
    super(`${host.length > 100 ? `${host.slice(0, 60)}…${host.slice(-20)}` : host} is not a valid host name: ${problem}`, false);
    this.host = host;
  }
}

/**
 * What makes `host` (a URL's hostname: lowercase, punycode) unusable as a DNS name, or undefined
 * when nothing does (an IP address included). Resolvers refuse such names with codes that say
 * little (EBADNAME, EINVAL, or ENOTFOUND as if the name did not exist).
 */
export function hostNameProblem(host: string): string | undefined {
  if (host.includes(':')) return undefined; // an IPv6 address, with or without its brackets
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length > 253) return `${name.length} characters, 253 at most`;
  for (const label of name.split('.')) {
    if (label === '') return 'an empty label (two dots in a row)';
    if (label.length > 63) return `a label of ${label.length} characters, 63 at most`;
    const bad = /[^a-z0-9_-]/i.exec(label);
    if (bad) return `"${bad[0]}" in a label (letters, digits, "-" and "_" only)`;
  }
  return undefined;
}

/**
 * A network failure in words an analyst can act on: what failed, where (host, port, or the proxy)
 * and what to check. `code` is the system's or undici's error code; `via` the proxy, if any;
 * `urlSetting` what holds the address (an engine's `its base_url`, a webhook's URL, `push.misp.url`).
 */
export function networkFailure(code: string | undefined, host: string, port: string, via?: string, urlSetting = 'its base_url'): string {
  const where = via ? `${host} through the proxy ${via}` : host;
  const endpoint = via ? `the proxy ${via}` : `${host}:${port}`;
  const proxyHint = via ? 'check proxy_url' : `is the service up? check ${urlSetting}, or set proxy_url`;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return via
        ? `cannot resolve the proxy ${via}: no DNS answer (check proxy_url)`
        : `cannot resolve ${host}: no DNS answer (offline? set proxy_url or dns_servers)`;
    case 'ECONNREFUSED':
      return `connection refused by ${endpoint} (${proxyHint})`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return `connection reset by ${endpoint} while asking ${where} (a firewall or proxy in the way? check proxy_url)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
      return `cannot reach ${endpoint}: no route to it (offline? set proxy_url)`;
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return `no answer from ${endpoint} while connecting (offline or firewalled? check proxy_url)`;
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `TLS certificate of ${where} not trusted (${code}): a proxy that inspects TLS needs its CA in NODE_EXTRA_CA_CERTS, or ssl_verify false for this engine`;
    default:
      return `network error talking to ${where}${code ? `: ${code}` : ''}`;
  }
}

/** The upstream answered, but not with what its API documents (bad JSON, unexpected shape). */
export class BadResponseError extends UpstreamError {
  override name = 'BadResponseError';
}
