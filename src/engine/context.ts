/** Builds the EngineContext for one engine call: settings, deadline, HTTP client, storage. */
import { setMaxListeners } from 'node:events';
import type { CallOptions, Cancellation, HttpTransport } from '../http/client.js';
import { TimeoutError } from '../http/errors.js';
import type { CredentialSpec, EngineContext, EngineDefinition, EngineSettings, EngineStore } from './contract.js';

export interface ContextServices {
  transport: HttpTransport;
  dnsServers: readonly string[];
  dataDir: string;
  storeFor(engineId: string): EngineStore;
}

export interface CallScope {
  /** Aborts the call early (analysis abandoned). */
  signal?: AbortSignal;
  dependencies?: Readonly<Record<string, unknown>>;
  onWait?: (ms: number, reason: string, status?: number) => void;
  onThrottled?: (ms: number) => void;
  /** The engine's secrets (`secretsOf`), when the caller keeps them; else found here. */
  secrets?: readonly string[];
}

export interface BoundContext {
  ctx: EngineContext;
  /**
   * The engine's lookup, cut short by the call's deadline (or its outer signal): it then rejects
   * with the deadline's TimeoutError, also for a lookup that ignores the abort signal.
   */
  race<T>(lookup: Promise<T>): Promise<T>;
  /** Releases the call's timer and cancels what the lookup left running. */
  dispose(): void;
}

/** Abort reason once a call is over; shared, as building an Error per call costs a stack trace. */
const CALL_FINISHED = Object.freeze(new Error('engine call finished'));

/**
 * Defaults of every engine, under its own `defaults` and the operator's `engines.<id>`.
 * `concurrency`: calls of one engine at once. 64 for an upstream that documents no limit (the
 * reference ran every observable at once, unbounded); an engine with a documented limit sets a
 * quota (`rate_limit` / `rate_window_ms`) or a lower concurrency in its own defaults.
 */
export const SETTING_DEFAULTS = { concurrency: 64, retries: 2 } as const;

/** Engine defaults, then the operator's `engines.<id>` settings. */
export function resolveSettings(
  engine: EngineDefinition,
  configured: Readonly<Record<string, unknown>> | undefined,
  fallbackTimeoutMs?: number,
): EngineSettings {
  return {
    ...SETTING_DEFAULTS,
    ...engine.defaults,
    ...(fallbackTimeoutMs !== undefined ? { timeout_ms: fallbackTimeoutMs } : {}),
    ...stripUndefined(configured ?? {}),
  } as EngineSettings;
}

/** The configured values of an engine's credentials: they must never leave the process. */
export function secretsOf(engine: EngineDefinition, settings: EngineSettings): string[] {
  return engine.credentials
    .filter((c) => c.secret !== false)
    .map((c) => settings[c.setting])
    .filter((value): value is string => typeof value === 'string' && value !== '');
}

/** The required credentials that are not configured (their settings under `engines.<id>` are empty). */
export function missingCredentials(engine: EngineDefinition, settings: EngineSettings): CredentialSpec[] {
  return engine.credentials
    .filter((c) => c.required !== false)
    .filter((c) => typeof settings[c.setting] !== 'string' || (settings[c.setting] as string).trim() === '');
}

/**
 * One call's deadline and cancellation, and what its HTTP client needs of it (`CallOptions`).
 * The AbortSignal engines may read (`ctx.signal`) is created at its first read, already aborted
 * when the call has ended; the HTTP client is told of the call's end through `watch`, a Set, not
 * through listeners on that signal. A lookup that makes one request therefore costs one timer
 * and no AbortController.
 */
class CallControl implements CallOptions, Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;
  private hooks: Set<(reason: unknown) => void> | undefined;
  /** The requests in flight, so that the call's timeout names what it was waiting for. */
  private inFlight: string[] | undefined;
  /** Rejects the engine's lookup (`race`) at the deadline or when the outer signal aborts. */
  private rejectLookup: ((reason: unknown) => void) | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onOuterAbort: (() => void) | undefined;
  readonly onWait: ((ms: number, reason: string, status?: number) => void) | undefined;
  readonly onThrottled: ((ms: number) => void) | undefined;

  constructor(
    readonly deadline: number,
    readonly timeoutMs: number,
    readonly retries: number,
    readonly secrets: readonly string[],
    scope: CallScope,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.onWait = scope.onWait;
    this.onThrottled = scope.onThrottled;
    this.timer = setTimeout(expire, timeoutMs, this);
    if (outer) {
      const onOuterAbort = () => this.abort(outer.reason);
      this.onOuterAbort = onOuterAbort;
      outer.addEventListener('abort', onOuterAbort, { once: true });
    }
  }

  get cancellation(): Cancellation {
    return this;
  }

  /** Aborted when the call's deadline passes, the analysis is abandoned or the call ends. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // Each request and DNS query of the call may listen to it (public_dns asks ~10 at once):
      // well over the default warning threshold of 10, without any leak.
      setMaxListeners(100, this.controller.signal);
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  watch(hook: (reason: unknown) => void): void {
    (this.hooks ??= new Set()).add(hook);
  }

  unwatch(hook: (reason: unknown) => void): void {
    this.hooks?.delete(hook);
  }

  onRequest(where: string): () => void {
    const inFlight = (this.inFlight ??= []);
    inFlight.push(where);
    return () => inFlight.splice(inFlight.lastIndexOf(where), 1);
  }

  /** Settles as `lookup` does, or rejects when the call times out or is abandoned first. */
  race<T>(lookup: Promise<T>): Promise<T> {
    if (this.aborted) return Promise.reject(lookupFailure(this.reason, this.timeoutMs));
    return new Promise<T>((resolve, reject) => {
      this.rejectLookup = reject;
      Promise.resolve(lookup).then(resolve, reject);
    });
  }

  timeout(): void {
    this.abort(new TimeoutError(this.timeoutMs, this.inFlight?.at(-1)));
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const reject = this.rejectLookup;
    this.rejectLookup = undefined;
    reject?.(lookupFailure(reason, this.timeoutMs));
    if (this.hooks) for (const hook of this.hooks) hook(reason);
    this.controller?.abort(reason);
  }

  dispose(): void {
    clearTimeout(this.timer);
    if (this.onOuterAbort) this.outer?.removeEventListener('abort', this.onOuterAbort);
    // The lookup is over: nothing is rejected any more, but whatever it left running (a request
    // it gave up on, a DNS query...) is cancelled.
    this.rejectLookup = undefined;
    this.abort(CALL_FINISHED);
  }
}

function expire(control: CallControl): void {
  control.timeout();
}

/** What a lookup cut short fails with: the deadline's TimeoutError, else a TimeoutError of the call's limit. */
function lookupFailure(reason: unknown, timeoutMs: number): TimeoutError {
  return reason instanceof TimeoutError ? reason : new TimeoutError(timeoutMs);
}

export function createEngineContext(
  engine: EngineDefinition,
  settings: EngineSettings,
  services: ContextServices,
  scope: CallScope = {},
): BoundContext {
  const timeoutMs = settings.timeout_ms;
  const deadline = Date.now() + timeoutMs;
  const control = new CallControl(deadline, timeoutMs, settings.retries, scope.secrets ?? secretsOf(engine, settings), scope, scope.signal);
  const ctx: EngineContext = {
    settings,
    http: services.transport.client(control),
    dnsServers: services.dnsServers,
    // An own getter (a spread `{ ...ctx }` still reads it): the signal is made at its first read.
    // The only one: each accessor of an object literal costs V8 more than a small object.
    get signal() {
      return control.signal;
    },
    deadline,
    store: services.storeFor(engine.id),
    dataDir: services.dataDir,
    dependencies: scope.dependencies ?? {},
  };
  return { ctx, race: (lookup) => control.race(lookup), dispose: () => control.dispose() };
}

function stripUndefined(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
