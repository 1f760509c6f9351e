/**
 * When a delivery is tried again (issue 36): on a refused or broken connection, a timeout, 429 or
 * a 5xx, with growing waits, 8 tries in all over about an hour (30 s, 1, 2, 5, 10, 15, 30 min
 * between them); the receiver's `Retry-After` sets the next wait instead (at most an hour). Any
 * other answer is final: 2xx delivered, another 4xx (or a 3xx: redirects are not followed) failed.
 * One policy for both queues (the SQLite file's and Redis's).
 */

/** Tries of one delivery, the first included. */
export const MAX_ATTEMPTS = 8;

/** The wait after the n-th failed try (n = 1 .. MAX_ATTEMPTS - 1), in ms. */
export const RETRY_WAITS_MS: readonly number[] = [30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000];

/** The longest wait a `Retry-After` may ask for. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** The wait after failed try `attempt` (1-based): `retryAfterMs` when the receiver gave one. */
export function retryWaitMs(attempt: number, retryAfterMs?: number, waits: readonly number[] = RETRY_WAITS_MS): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs)) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterMs));
  return waits[Math.min(Math.max(attempt, 1), waits.length) - 1] ?? waits[waits.length - 1] ?? 0;
}

/** What one try came to. */
export interface AttemptResult {
  /** `retry`: worth another try (if any is left). */
  outcome: 'delivered' | 'retry' | 'failed';
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Its Retry-After, in ms. */
  retryAfterMs?: number;
  /** One line: `HTTP 503 Service Unavailable`, `timeout after 10000 ms ...`. */
  reason: string;
  /** The start of the receiver's answer (for `oas webhooks test`; never written to the audit trail). */
  answer?: string;
}

/** How a receiver's HTTP status counts. */
export function statusOutcome(status: number): AttemptResult['outcome'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 429 || status >= 500) return 'retry';
  return 'failed';
}

/** A try's outcome with the tries left: a `retry` at the last try is `failed`; otherwise the wait before the next. */
export function nextStep(result: AttemptResult, attempt: number, maxAttempts = MAX_ATTEMPTS, waits: readonly number[] = RETRY_WAITS_MS): { outcome: AttemptResult['outcome']; waitMs?: number } {
  if (result.outcome !== 'retry') return { outcome: result.outcome };
  if (attempt >= maxAttempts) return { outcome: 'failed' };
  return { outcome: 'retry', waitMs: retryWaitMs(attempt, result.retryAfterMs, waits) };
}
