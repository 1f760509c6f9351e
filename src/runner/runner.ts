/**
 * The engine runner shared by the CLI and the server.
 *
 * Per observable, every applicable engine runs concurrently. IP-only "reversed IP" engines run on
 * the first address that resolving a domain/URL gave (the pivot engine's answer); engines that
 * depend on others run after them. Calls are bounded overall and per engine, each has a deadline,
 * results are cached per (engine, settings that change its answers, observable), identical calls
 * in flight are shared, and an engine failure becomes a one-line entry in `errors`: it never
 * fails the analysis. A failure of what an engine depended on (the resolution of the pivot, a
 * dependency engine) is that engine's error too, never a cached "no data".
 */
import { createHash } from 'node:crypto';
import type { EngineDefinition, EngineSettings } from '../engine/contract.js';
import { EngineError } from '../engine/contract.js';
import { createEngineContext, missingCredentials, resolveSettings, secretsOf, type ContextServices } from '../engine/context.js';
import { secretCredentials, whereToSet } from '../engine/credentials.js';
import { HttpStatusError, TimeoutError, UpstreamError } from '../http/errors.js';
import { redact } from '../http/redact.js';
import { hostOf, ipVersion, isPrivateIp } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import type { ObservableResult } from './result.js';
import { Quota, QuotaExhaustedError, type EngineQuota, type QuotaFactory } from './quota.js';
import { Semaphore } from './semaphore.js';
import type Keyv from 'keyv';

/** An engine as the caller selected it: `key` is the name they used (id or alias). */
export interface Selection {
  key: string;
  engine: EngineDefinition;
}

export interface RunnerOptions {
  /** All registered engines (to find the pivot engine and dependencies not selected). */
  catalog: readonly EngineDefinition[];
  services: ContextServices;
  /** Cached engine results. */
  cache: Keyv;
  /** Seconds a result stays cached; 0 disables caching. */
  cacheTtlSeconds: number;
  /** Engine calls at once across all analyses. */
  concurrency: number;
  /** Per-engine settings from the configuration (`engines.<id>`). */
  engineSettings: Readonly<Record<string, Record<string, unknown>>>;
  /** Overrides every engine's default timeout (`engine_timeout_ms`). */
  timeoutMs?: number | undefined;
  /** Makes each engine's quota; default: this process's own (with `redis_url`: the team's). */
  quotaOf?: QuotaFactory | undefined;
}

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

export interface AnalyzeOptions {
  ignoreCache?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Told as soon as each observable's result is final. */
  onObservable?: (index: number, result: ObservableResult) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

/** Where an engine runs for an observable: a target, nowhere (null), or not knowable (error). */
type Target = { target: Observable | null } | { error: string };

/** The call's own scope: what the cache may keep of it, and what it is told. */
interface CallScope {
  ignoreCache: boolean;
  signal: AbortSignal | undefined;
  dependencies: Record<string, unknown> | undefined;
  onWait: (reason: string, wait: WaitEvent) => void;
  /** False when a dependency failed: the answer may be incomplete, so it is not cached. */
  cacheable?: boolean;
}

interface CachedEntry {
  value: unknown;
  at: number;
}

export class EngineRunner {
  private readonly global: Semaphore;
  private readonly perEngine = new Map<string, Semaphore>();
  private readonly quotas = new Map<string, EngineQuota>();
  private readonly settings = new Map<string, EngineSettings>();
  private readonly fingerprints = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<Outcome>>();
  /**
   * Answers on their way to the cache, read from here until stored: an engine's answer never
   * waits for the disk (one SQLite transaction per write), and the next call still finds it.
   */
  private readonly unwritten = new Map<string, CachedEntry>();
  private readonly writes = new Set<Promise<void>>();
  private readonly pivot: EngineDefinition | undefined;

  constructor(private readonly options: RunnerOptions) {
    this.global = new Semaphore(options.concurrency);
    this.pivot = options.catalog.find((e) => e.pivot);
  }

  settingsFor(engine: EngineDefinition): EngineSettings {
    let settings = this.settings.get(engine.id);
    if (!settings) {
      settings = resolveSettings(engine, this.options.engineSettings[engine.id], this.options.timeoutMs);
      this.settings.set(engine.id, settings);
    }
    return settings;
  }

  /** The part of an engine's cache key that stands for its settings (see `settingsFingerprint`). */
  private fingerprintFor(engine: EngineDefinition, settings: EngineSettings): string {
    let fingerprint = this.fingerprints.get(engine.id);
    if (fingerprint === undefined) {
      fingerprint = settingsFingerprint(engine, settings, this.options.services.dnsServers);
      this.fingerprints.set(engine.id, fingerprint);
    }
    return fingerprint;
  }

  async analyze(observables: readonly Observable[], selections: readonly Selection[], options: AnalyzeOptions = {}): Promise<ObservableResult[]> {
    const progress: Progress = { done: 0, total: observables.length * selections.length };
    const report = () => options.onProgress?.({ ...progress });
    report();
    return Promise.all(observables.map(async (observable, index) => {
      const result = await this.analyzeOne(observable, selections, options, (key) => {
        progress.done++;
        options.onProgress?.({ ...progress, finished: key });
      }, (waiting, wait) => {
        options.onProgress?.({ ...progress, waiting, wait });
      });
      options.onObservable?.(index, result);
      return result;
    }));
  }

  private async analyzeOne(
    observable: Observable,
    selections: readonly Selection[],
    options: AnalyzeOptions,
    onKeyDone: (key: string) => void,
    onWait: (reason: string, wait: WaitEvent) => void,
  ): Promise<ObservableResult> {
    const result: ObservableResult = { observable: observable.value, type: observable.type, reversed_success: false };
    for (const { key } of selections) result[key] = null;
    const selected = uniqueEngines(selections.map((s) => s.engine));
    const call = (engine: EngineDefinition, target: Observable, dependencies?: Record<string, unknown>, cacheable = true) =>
      this.call(engine, target, { ignoreCache: options.ignoreCache ?? false, signal: options.signal, dependencies, onWait, cacheable });

    // The address IP-only engines run on: the URL's IP host, else the pivot engine's first answer.
    const host = hostOf(observable);
    const hostIsIp = host !== null && ipVersion(host) !== 0;
    const needsPivot = (observable.type === 'FQDN' || observable.type === 'URL') && !hostIsIp;
    const pivotSelected = selected.find((e) => e.pivot && appliesTo(e, observable));
    const wantsReversed = selected.some((e) => e.reversedIp && !appliesTo(e, observable));

    const outcomes = new Map<string, Promise<Outcome>>();
    const runDirect = (engine: EngineDefinition) => {
      if (!outcomes.has(engine.id)) outcomes.set(engine.id, call(engine, observable));
      return outcomes.get(engine.id)!;
    };

    let pivotOutcome: Promise<Outcome> | undefined;
    if (pivotSelected) pivotOutcome = runDirect(pivotSelected);
    else if (wantsReversed && needsPivot && this.pivot) pivotOutcome = call(this.pivot, observable);

    // The resolved IP, or why there is none: a failed resolution is not "no address" (the
    // engines waiting for it report the failure instead of an empty answer).
    const reversedTarget: Promise<Target> = (async () => {
      if (!wantsReversed) return { target: null };
      let ip: string | undefined;
      if (hostIsIp) ip = host!;
      else if (needsPivot && pivotOutcome) {
        const outcome = await pivotOutcome;
        if (!outcome.ok) return { error: `${this.pivot?.id ?? 'the resolution'} failed: ${outcome.error}` };
        ip = firstAddress(outcome.value);
      }
      if (!ip) return { target: null };
      return { target: { value: ip, type: ipVersion(ip) === 6 ? 'IPv6' : 'IPv4' } };
    })();

    /** Where an engine runs for this observable: the observable itself, the reversed IP, or nowhere. */
    const targetOf = async (engine: EngineDefinition): Promise<Target> => {
      if (appliesTo(engine, observable)) return { target: observable };
      if (!engine.reversedIp) return { target: null };
      const reversed = await reversedTarget;
      if ('error' in reversed) return reversed;
      return { target: reversed.target && appliesTo(engine, reversed.target) ? reversed.target : null };
    };

    const outcomeOf = async (engine: EngineDefinition): Promise<Outcome> => {
      const existing = outcomes.get(engine.id);
      if (existing) return existing;
      const promise = (async (): Promise<Outcome> => {
        const where = await targetOf(engine);
        if ('error' in where) return { ok: false, error: where.error };
        const { target } = where;
        if (!target) return { ok: true, value: null };
        if (engine.dependsOn.length === 0) return call(engine, target);
        const inputs = await this.dependenciesOf(engine, selected, outcomeOf);
        if (inputs === null) {
          return { ok: false, error: `needs one of ${engine.dependsOn.join(', ')}, and none of them can run` };
        }
        const { dependencies, failures } = inputs;
        // Nothing to work from because what it depends on failed: that failure, not "no data".
        if (failures.length > 0 && Object.keys(dependencies).length === 0) return { ok: false, error: failures.join('; ') };
        const outcome = await call(engine, target, dependencies, failures.length === 0);
        // A null that may come from a missing input is not an answer either.
        if (outcome.ok && outcome.value === null && failures.length > 0) return { ok: false, error: failures.join('; ') };
        return outcome;
      })();
      outcomes.set(engine.id, promise);
      return promise;
    };

    const errors: Record<string, string> = {};
    await Promise.all(selections.map(async ({ key, engine }) => {
      const outcome = await outcomeOf(engine);
      if (outcome.ok) result[key] = outcome.value ?? null;
      else errors[key] = outcome.error;
      onKeyDone(key);
    }));

    if (pivotOutcome) {
      const pivot = await pivotOutcome;
      result.reversed_success = pivot.ok && hasAnswer(pivot.value);
    }
    const reversed = await reversedTarget;
    const target = 'target' in reversed ? reversed.target : null;
    if (target && target.value !== observable.value && selected.some((e) => e.reversedIp && !appliesTo(e, observable))) {
      result.reversed_ip = target.value;
    }
    if (Object.keys(errors).length > 0) result.errors = errors;
    return reorder(result, selections);
  }

  /**
   * Results of the engines `engine` depends on, and which of them failed (`<id> failed: <why>`).
   * Selected ones are awaited; when none is selected the first one that can run (credentials
   * present) is run internally, unreported. Null when none can run.
   */
  private async dependenciesOf(
    engine: EngineDefinition,
    selected: readonly EngineDefinition[],
    outcomeOf: (e: EngineDefinition) => Promise<Outcome>,
  ): Promise<{ dependencies: Record<string, unknown>; failures: string[] } | null> {
    let providers = engine.dependsOn
      .map((id) => selected.find((e) => e.id === id))
      .filter((e): e is EngineDefinition => e !== undefined);
    if (providers.length === 0) {
      const fallback = engine.dependsOn
        .map((id) => this.options.catalog.find((e) => e.id === id))
        .find((e) => e !== undefined && missingCredentials(e, this.settingsFor(e)).length === 0);
      if (!fallback) return null;
      providers = [fallback];
    }
    const dependencies: Record<string, unknown> = {};
    const failures: string[] = [];
    for (const provider of providers) {
      const outcome = await outcomeOf(provider);
      if (!outcome.ok) failures.push(`${provider.id} failed: ${outcome.error}`);
      else if (outcome.value !== null) dependencies[provider.id] = outcome.value;
    }
    return { dependencies, failures };
  }

  /** One engine on one target: cache, credentials, shared in-flight calls, limits, deadline. */
  private async call(
    engine: EngineDefinition,
    target: Observable,
    scope: CallScope,
  ): Promise<Outcome> {
    const settings = this.settingsFor(engine);
    const missing = missingCredentials(engine, settings);
    if (missing.length > 0) return { ok: false, error: notConfigured(engine, missing) };

    const cacheable = scope.cacheable ?? true;
    const key = cacheKey(engine, target, this.fingerprintFor(engine, settings));
    const ttlMs = this.options.cacheTtlSeconds * 1000;
    if (!scope.ignoreCache && ttlMs > 0) {
      const cached = await this.readCache(key);
      if (cached) return { ok: true, value: cached.value };
    }
    // A call missing some of its inputs shares no one's call: its answer may differ.
    const running = cacheable ? this.inflight.get(key) : undefined;
    if (running) return running;
    if (!cacheable) return this.invoke(engine, settings, target, scope);

    const promise = (async (): Promise<Outcome> => {
      const outcome = await this.invoke(engine, settings, target, scope);
      if (outcome.ok && ttlMs > 0) this.store(key, { value: outcome.value, at: Date.now() }, ttlMs);
      return outcome;
    })();
    this.inflight.set(key, promise);
    try {
      return await promise;
    } finally {
      this.inflight.delete(key);
    }
  }

  private async invoke(
    engine: EngineDefinition,
    settings: EngineSettings,
    target: Observable,
    scope: CallScope,
  ): Promise<Outcome> {
    const limiter = this.engineLimiter(engine, settings);
    const quota = this.quotaFor(engine, settings);
    // The quota first (its wait is not part of the call's deadline), then the engine's own slot:
    // a call queued behind its engine must not hold a global slot.
    const waitOf = (ms: number, reason: string, detail: Partial<WaitEvent> & Pick<WaitEvent, 'kind'>): WaitEvent =>
      ({ engine: engine.id, service: engine.service, ms, until: Date.now() + ms, reason, ...detail });
    try {
      const turn = quota.acquire((ms, reason, paused) => scope.onWait(
        `${engine.id}: ${reason}, waiting ${Math.ceil(ms / 1000)} s`,
        // A pause is the upstream's 429 (Retry-After) held for every call of the engine.
        waitOf(ms, reason, paused ? { kind: 'retry', status: 429 } : { kind: 'quota', limit: quota.limit, windowMs: quota.windowMs }),
      ));
      if (turn) await turn;
    } catch (error) {
      if (error instanceof QuotaExhaustedError) return { ok: false, error: error.message };
      throw error;
    }
    return limiter.run(() => this.global.run(async () => {
      const { ctx, dispose } = createEngineContext(engine, settings, this.options.services, {
        ...(scope.signal ? { signal: scope.signal } : {}),
        dependencies: scope.dependencies ?? {},
        onWait: (ms, reason, status) => scope.onWait(`${engine.id}: ${reason}, retrying in ${Math.ceil(ms / 1000)} s`, waitOf(ms, reason, { kind: 'retry', ...(status === undefined ? {} : { status }) })),
        onThrottled: (ms) => quota.pause(ms),
      });
      try {
        // The deadline also covers lookups that ignore the abort signal.
        const aborted = new Promise<never>((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason instanceof TimeoutError ? ctx.signal.reason : new TimeoutError(settings.timeout_ms)), { once: true });
        });
        const value = await Promise.race([engine.run(target, ctx), aborted]);
        return { ok: true, value: value ?? null };
      } catch (error) {
        return { ok: false, error: describeFailure(error, secretsOf(engine, settings), engine) };
      } finally {
        dispose();
      }
    }));
  }

  private engineLimiter(engine: EngineDefinition, settings: EngineSettings): Semaphore {
    let limiter = this.perEngine.get(engine.id);
    if (!limiter) {
      limiter = new Semaphore(Math.max(1, settings.concurrency));
      this.perEngine.set(engine.id, limiter);
    }
    return limiter;
  }

  /** The engine's quota: `rate_limit` calls per `rate_window_ms`, or unlimited (still pausable on 429). */
  private quotaFor(engine: EngineDefinition, settings: EngineSettings): EngineQuota {
    let quota = this.quotas.get(engine.id);
    if (!quota) {
      const limit = typeof settings.rate_limit === 'number' ? settings.rate_limit : Number.POSITIVE_INFINITY;
      const windowMs = typeof settings.rate_window_ms === 'number' ? settings.rate_window_ms : 60_000;
      const maxWait = typeof settings.quota_max_wait_ms === 'number' ? settings.quota_max_wait_ms : undefined;
      quota = this.options.quotaOf ? this.options.quotaOf(engine.id, limit, windowMs, maxWait) : new Quota(limit, windowMs, maxWait);
      this.quotas.set(engine.id, quota);
    }
    return quota;
  }

  /** Writes an answer to the cache in the background (see `unwritten`; `flush` waits for it). */
  private store(key: string, entry: CachedEntry, ttlMs: number): void {
    this.unwritten.set(key, entry);
    const write: Promise<void> = this.options.cache.set(key, entry, ttlMs)
      .then(() => {}, () => {}) // a cache that cannot be written costs a later call, never this one
      .finally(() => {
        if (this.unwritten.get(key) === entry) this.unwritten.delete(key);
        this.writes.delete(write);
      });
    this.writes.add(write);
  }

  /** Resolves once every answer given so far is in the cache (before closing the storage). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  private async readCache(key: string): Promise<CachedEntry | undefined> {
    const unwritten = this.unwritten.get(key);
    if (unwritten) return unwritten;
    try {
      return (await this.options.cache.get(key)) as CachedEntry | undefined;
    } catch {
      return undefined; // an unreadable cache means a fresh call, not a failed analysis
    }
  }
}

/** Whether an engine accepts this observable as it is. */
export function appliesTo(engine: EngineDefinition, observable: Observable): boolean {
  if (!engine.types.includes(observable.type)) return false;
  if ((observable.type === 'IPv4' || observable.type === 'IPv6') && !engine.acceptsPrivateIp && isPrivateIp(observable.value)) return false;
  return true;
}

/**
 * Cache key: engine (with the catalog variant when that variant changes the engine), the
 * fingerprint of the settings that change its answers (`settingsFingerprint`), and the
 * normalised observable. Never contains a secret.
 */
export function cacheKey(engine: EngineDefinition, target: Observable, fingerprint = ''): string {
  const value = target.type === 'URL' ? target.value : target.value.toLowerCase();
  const scope = engine.cacheScope ? `@${engine.cacheScope}` : '';
  return `${engine.id}${scope}${fingerprint ? `#${fingerprint}` : ''}:${target.type}:${value}`;
}

/** Settings every engine has that change how a call is made, never what it answers. */
export const SETTINGS_OUTSIDE_CACHE_KEY: ReadonlySet<string> = new Set([
  'timeout_ms', 'concurrency', 'retries', 'rate_limit', 'rate_window_ms', 'quota_max_wait_ms',
]);

/**
 * A short hash of what may change an engine's answer: its resolved settings (defaults and
 * `engines.<id>`: `base_url`, `bootstrap_url`, `whois_server`, `zone`, `search_url`,
 * `max_results`, a self-hosted server's URL, a tenant id...) and the top-level `dns_servers`.
 * Left out: the settings of `SETTINGS_OUTSIDE_CACHE_KEY`, and every secret credential (nor its
 * hash: the key holds nothing derived from a secret). Two configurations that differ in any of
 * the rest never share a cached answer.
 */
export function settingsFingerprint(engine: EngineDefinition, settings: EngineSettings, dnsServers: readonly string[]): string {
  const secretSettings = new Set(engine.credentials.filter((c) => c.secret !== false).map((c) => c.setting));
  const secretValues = new Set(secretsOf(engine, settings));
  const kept = Object.entries(settings)
    .filter(([name, value]) => !SETTINGS_OUTSIDE_CACHE_KEY.has(name) && !secretSettings.has(name) && value !== undefined)
    .filter(([, value]) => !(typeof value === 'string' && secretValues.has(value)))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const material = canonicalJson({ settings: Object.fromEntries(kept), dns_servers: [...dnsServers] });
  return createHash('sha256').update(material).digest('base64url').slice(0, 16);
}

/** JSON with object keys sorted at every level, so equal settings always hash alike. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** One line, no stack, no secret. */
export function describeFailure(error: unknown, secrets: readonly string[], engine?: EngineDefinition): string {
  const message = error instanceof UpstreamError || error instanceof EngineError
    ? error.message
    : `internal error: ${error instanceof Error ? error.message : String(error)}`;
  const line = redact(message.split('\n')[0]!.trim(), secrets).slice(0, 300);
  return engine ? line + whatToCheck(error, engine) : line;
}

/** `not configured: engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY`. */
function notConfigured(engine: EngineDefinition, settings: readonly string[]): string {
  const where = settings.map((setting) => {
    const credential = engine.credentials.find((c) => c.setting === setting);
    return credential ? whereToSet(engine, credential) : `engines.${engine.id}.${setting}`;
  });
  return `not configured: ${where.join(', ')}`;
}

/**
 * What to check after a failure, named by the settings that govern it: the timeout's settings,
 * or for a 401/403 from an engine with a key, the key's setting and environment variable.
 */
function whatToCheck(error: unknown, engine: EngineDefinition): string {
  if (error instanceof TimeoutError) return ` (limit: engines.${engine.id}.timeout_ms or engine_timeout_ms)`;
  if (error instanceof HttpStatusError && (error.status === 401 || error.status === 403)) {
    const keys = secretCredentials(engine);
    if (keys.length > 0) return ` (key refused: check ${keys.map((c) => whereToSet(engine, c)).join(', ')})`;
  }
  return '';
}

function uniqueEngines(engines: readonly EngineDefinition[]): EngineDefinition[] {
  return [...new Map(engines.map((e) => [e.id, e])).values()];
}

/** First IP address in a pivot answer (`{reverse_dns: [...]}` or any object holding a list). */
function firstAddress(value: unknown): string | undefined {
  for (const list of Object.values(asRecord(value))) {
    if (Array.isArray(list)) {
      const ip = list.find((item): item is string => typeof item === 'string' && ipVersion(item) !== 0);
      if (ip) return ip;
    }
  }
  return undefined;
}

function hasAnswer(value: unknown): boolean {
  return Object.values(asRecord(value)).some((v) => Array.isArray(v) && v.length > 0);
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** observable, type, reversed_success, reversed_ip, then engine keys in selection order, then errors. */
function reorder(result: ObservableResult, selections: readonly Selection[]): ObservableResult {
  const out: ObservableResult = { observable: result.observable, type: result.type, reversed_success: result.reversed_success };
  if (result.reversed_ip !== undefined) out.reversed_ip = result.reversed_ip;
  for (const { key } of selections) out[key] = result[key];
  if (result.errors) out.errors = result.errors;
  return out;
}
