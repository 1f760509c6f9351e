/**
 * The runner's vocabulary, shared by its callers: an engine as selected, the options of an
 * analysis, and what the runner tells as it goes (counts, and the waits a display may show).
 */
import type { EngineDefinition } from '../engine/contract.js';
import type { Allowlist } from '../marking/allowlist.js';
import type { Marking } from '../marking/policy.js';
import type { Share } from './fair-queue.js';
import type { ObservableResult } from './result.js';

export interface Progress {
  done: number;
  total: number;
  /** Set while a call waits (retry back-off or quota). */
  waiting?: string;
  /** The wait `waiting` tells of, for a display (set with it). */
  wait?: WaitEvent;
  /** The selection key (the name the caller used) of the lookup that just finished, when `done` grew. */
  finished?: string;
}

/**
 * A call that waits before it may start (its engine's quota is used up) or before it tries again
 * (the upstream asked it to retry later: a 429 or 5xx, with or without Retry-After).
 */
export interface WaitEvent {
  /** Engine id and service name (the name people know). */
  engine: string;
  service: string;
  /** quota: the engine's own `rate_limit`; retry: the upstream asked to retry later, or a retry back-off. */
  kind: 'quota' | 'retry';
  ms: number;
  /** When the wait ends (epoch milliseconds): a display counts down to it. */
  until: number;
  /** The quota (kind quota): `limit` calls per `windowMs`. */
  limit?: number;
  windowMs?: number;
  /** The HTTP status that asked to retry later (kind retry), when there was one. */
  status?: number;
  /** One line: why it waits. */
  reason: string;
}

/** An engine as the caller selected it: `key` is the name they used (id or alias). */
export interface Selection {
  key: string;
  engine: EngineDefinition;
}

export interface AnalyzeOptions {
  ignoreCache?: boolean;
  /**
   * Whose analysis it is (its owner and id): its calls wait for their slots in the fair order of
   * src/runner/fair-queue.ts. None: one flow, first come, first served (the CLI).
   */
  share?: Share | undefined;
  signal?: AbortSignal;
  /**
   * The analysis's TLP and PAP (issue 34): an engine is sent an observable only up to its ceilings.
   * None: the configuration's `default_tlp` and `default_pap`.
   */
  marking?: Marking | undefined;
  /**
   * What the team knows to be its own or harmless (issue 38), as the analysis started: an
   * observable it covers is sent to no engine. None: nothing is.
   */
  allowlist?: Allowlist | undefined;
  /** Analyse even what the allowlist covers (issue 38: `ignore_allowlist`). */
  ignoreAllowlist?: boolean | undefined;
  onProgress?: (progress: Progress) => void;
  /** Told as soon as each observable's result is final. */
  onObservable?: (index: number, result: ObservableResult) => void;
}

/**
 * How an engine call ended, for a watcher: `ok` (an answer), `not_found` (the engine answered that
 * it has nothing to report: a null result), `error` (a failure, or refused before it ran: not
 * configured, quota exhausted), `cached` (answered from the cache, the engine not called).
 */
export type CallOutcomeKind = 'ok' | 'error' | 'cached' | 'not_found';

/**
 * Told of every engine call (`oas serve`'s metrics, src/server/metrics.ts, is one). Optional in the
 * runner's options; a watcher that throws never fails a call. A call that joins an identical one
 * already in flight is told once, by the call it joined.
 */
export interface CallObserver {
  /** `seconds`: how long the engine ran (after its quota); undefined when it did not run (cached, refused). */
  onCall(engineId: string, outcome: CallOutcomeKind, seconds?: number): void;
  /** A call waited `seconds` for its engine's quota (`rate_limit`, or a pause after HTTP 429). */
  onQuotaWait(engineId: string, seconds: number): void;
}
