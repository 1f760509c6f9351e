/** Builds the EngineContext for one engine call: settings, deadline, HTTP client, storage. */
import { setMaxListeners } from 'node:events';
import type { HttpTransport } from '../http/client.js';
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
}

export interface BoundContext {
  ctx: EngineContext;
  /** Releases the call's timer. */
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

export function createEngineContext(
  engine: EngineDefinition,
  settings: EngineSettings,
  services: ContextServices,
  scope: CallScope = {},
): BoundContext {
  const timeoutMs = settings.timeout_ms;
  const deadline = Date.now() + timeoutMs;
  const controller = new AbortController();
  // Each request and DNS query of the call listens to its signal (public_dns asks ~10 at once,
  // each request twice): well over the default warning threshold of 10, without any leak.
  setMaxListeners(100, controller.signal);
  // The requests in flight, so that the call's timeout names what it was waiting for (the latest
  // one still running; none when it waits on something else, a DNS or WHOIS server).
  const inFlight: string[] = [];
  const timer = setTimeout(() => controller.abort(new TimeoutError(timeoutMs, inFlight.at(-1))), timeoutMs);
  const onOuterAbort = () => controller.abort(scope.signal?.reason);
  scope.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const ctx: EngineContext = {
    settings,
    http: services.transport.client({
      signal: controller.signal,
      deadline,
      timeoutMs,
      retries: settings.retries,
      secrets: secretsOf(engine, settings),
      ...(scope.onWait ? { onWait: scope.onWait } : {}),
      ...(scope.onThrottled ? { onThrottled: scope.onThrottled } : {}),
      onRequest: (where) => {
        inFlight.push(where);
        return () => inFlight.splice(inFlight.lastIndexOf(where), 1);
      },
    }),
    dnsServers: services.dnsServers,
    signal: controller.signal,
    deadline,
    store: services.storeFor(engine.id),
    dataDir: services.dataDir,
    dependencies: scope.dependencies ?? {},
  };
  return {
    ctx,
    dispose: () => {
      clearTimeout(timer);
      scope.signal?.removeEventListener('abort', onOuterAbort);
      // Cancels whatever the lookup left running (a request it gave up on, a DNS query...).
      if (!controller.signal.aborted) controller.abort(CALL_FINISHED);
    },
  };
}

function stripUndefined(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
