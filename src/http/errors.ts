import { STATUS_CODES } from 'node:http';

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

/** `HTTP 403 Forbidden[: detail]`, the status text filled in. */
export function statusError(status: number, detail?: string, retryAfterMs?: number): HttpStatusError {
  return new HttpStatusError(status, STATUS_CODES[status] ?? '', retryAfterMs, detail);
}

export class TimeoutError extends UpstreamError {
  override name = 'TimeoutError';
  constructor(ms: number) {
    super(`timeout after ${ms} ms`, true);
  }
}

export class NetworkError extends UpstreamError {
  override name = 'NetworkError';
}

/** The upstream answered, but not with what its API documents (bad JSON, unexpected shape). */
export class BadResponseError extends UpstreamError {
  override name = 'BadResponseError';
}
