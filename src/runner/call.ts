/**
 * The cached call: one engine on one target. Its credentials are checked, its answer is read from
 * the cache (or from a write on its way there), identical calls in flight are shared, its quota
 * and the concurrency limits (the engine's own, then the global one) are waited for in the fair
 * order of its share (src/runner/fair-queue.ts: across owners, then analyses), its deadline
 * is enforced, and a failure becomes one line naming what to check. Answers are cached per
 * (engine, settings that change its answers, observable); nothing here knows about pivots or
 * dependencies (src/runner/pivot.ts).
 */
import { createHash } from 'node:crypto';
import type Keyv from 'keyv';
import type { CredentialSpec, EngineDefinition, EngineSettings } from '../engine/contract.js';
import { CredentialsRefusedError, EngineError } from '../engine/contract.js';
import { createEngineContext, missingCredentials, resolveSettings, secretsOf, type ContextServices } from '../engine/context.js';
import { secretCredentials, whereToSet } from '../engine/credentials.js';
import { HttpStatusError, InvalidHostError, TimeoutError, UpstreamError } from '../http/errors.js';
import { redact } from '../http/redact.js';
import type { Observable } from '../observables/types.js';
import { ceilingsOf, InternalScope, withholdReason, type Ceilings, type Marking } from '../marking/policy.js';
import type { CallObserver, CallOutcomeKind, WaitEvent } from './types.js';
import type { Share } from './fair-queue.js';
import { Quota, QuotaExhaustedError, type EngineQuota, type QuotaFactory } from './quota.js';
import { Semaphore } from './semaphore.js';

/** What the cached call needs of the runner's options. */
export interface CallerOptions {
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
  /** Told of each call's outcome and quota wait (`oas serve`'s metrics); none by default. */
  observer?: CallObserver | undefined;
  /** The team's networks and domains (`internal_networks`, `internal_domains`); default: the built-in ones. */
  internalScope?: InternalScope | undefined;
  /** The marking of an analysis that names none (`default_tlp`, `default_pap`); default TLP:AMBER, PAP:GREEN. */
  defaultMarking?: Marking | undefined;
}

const DEFAULT_MARKING: Marking = { tlp: 'AMBER', pap: 'GREEN' };

/** An answer, a failure, or (`withheld`) a call that was not made: `error` then says why. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: string; withheld?: true };

/** The call's own scope: what the cache may keep of it, and what it is told. */
export interface CallScope {
  ignoreCache: boolean;
  signal: AbortSignal | undefined;
  dependencies: Record<string, unknown> | undefined;
  onWait: (reason: string, wait: WaitEvent) => void;
  /** False when a dependency failed: the answer may be incomplete, so it is not cached. */
  cacheable?: boolean;
  /** Whose call it is: waiting calls get their slots in the fair order (src/runner/fair-queue.ts). */
  share?: Share | undefined;
  /**
   * Why the engine may not be sent this target (TLP/PAP, src/marking/policy.ts): then only the
   * cache may answer (using it sends nothing), and nothing else happens (no request, no quota).
   */
  withheld?: string | undefined;
}

interface CachedEntry {
  value: unknown;
  at: number;
}

/**
 * What the callers of one process share across configurations (a reload, `EngineRunner.withSettings`):
 * the answers on their way to the cache, and the limits and quotas, each kept under the values it
 * was made with, so that a reload that leaves an engine's `concurrency` or quota as they were
 * leaves its count running (a changed one starts afresh). Calls in flight are not shared: two
 * configurations may send different keys for the same cache key.
 */
export class CallerState {
  readonly globals = new Map<number, Semaphore>();
  readonly perEngine = new Map<string, Semaphore>();
  readonly quotas = new Map<string, EngineQuota>();
  /**
   * Answers on their way to the cache, read from here until stored: an engine's answer never
   * waits for the disk (one SQLite transaction per write), and the next call still finds it.
   */
  readonly unwritten = new Map<string, CachedEntry>();
  readonly writes = new Set<Promise<void>>();
}

export class EngineCaller {
  private readonly global: Semaphore;
  private readonly perEngine: Map<string, Semaphore>;
  private readonly quotas: Map<string, EngineQuota>;
  private readonly settings = new Map<string, EngineSettings>();
  /** Each engine's limiter and quota, found once in the shared state (by their settings' values). */
  private readonly limiters = new Map<string, Semaphore>();
  private readonly engineQuotas = new Map<string, EngineQuota>();
  private readonly fingerprints = new Map<string, string>();
  private readonly ceilings = new Map<string, Ceilings>();
  /** What is the team's own, and the marking of an analysis that names none. */
  readonly internalScope: InternalScope;
  readonly defaultMarking: Marking;
  /** Per engine: why it cannot run (undefined: it can), and its secrets, from its settings. */
  private readonly missing = new Map<string, string | undefined>();
  private readonly secrets = new Map<string, readonly string[]>();
  private readonly inflight = new Map<string, Promise<Outcome>>();
  private readonly unwritten: Map<string, CachedEntry>;
  private readonly writes: Set<Promise<void>>;

  constructor(private readonly options: CallerOptions, readonly state: CallerState = new CallerState()) {
    this.perEngine = state.perEngine;
    this.quotas = state.quotas;
    this.unwritten = state.unwritten;
    this.writes = state.writes;
    let global = state.globals.get(options.concurrency);
    if (!global) {
      global = new Semaphore(options.concurrency);
      state.globals.set(options.concurrency, global);
    }
    this.global = global;
    this.internalScope = options.internalScope ?? new InternalScope();
    this.defaultMarking = options.defaultMarking ?? DEFAULT_MARKING;
  }

  /**
   * Why the engine may not receive a target marked `marking` (one line), or undefined when it may;
   * `internal`: why the target is the team's own (src/marking/policy.ts).
   */
  withholding(engine: EngineDefinition, marking: Marking, internal?: string): string | undefined {
    let ceilings = this.ceilings.get(engine.id);
    if (!ceilings) {
      ceilings = ceilingsOf(engine, this.settingsFor(engine));
      this.ceilings.set(engine.id, ceilings);
    }
    return withholdReason(engine, ceilings, marking, internal);
  }

  settingsFor(engine: EngineDefinition): EngineSettings {
    let settings = this.settings.get(engine.id);
    if (!settings) {
      settings = resolveSettings(engine, this.options.engineSettings[engine.id], this.options.timeoutMs);
      this.settings.set(engine.id, settings);
    }
    return settings;
  }

  /** Why the engine cannot run (its required credentials not set), found once per engine. */
  private unconfigured(engine: EngineDefinition, settings: EngineSettings): string | undefined {
    if (this.missing.has(engine.id)) return this.missing.get(engine.id);
    const missing = missingCredentials(engine, settings);
    const why = missing.length > 0 ? notConfigured(engine, missing) : undefined;
    this.missing.set(engine.id, why);
    return why;
  }

  /** The engine's secrets (`secretsOf`), found once per engine. */
  private secretsFor(engine: EngineDefinition, settings: EngineSettings): readonly string[] {
    let secrets = this.secrets.get(engine.id);
    if (!secrets) {
      secrets = secretsOf(engine, settings);
      this.secrets.set(engine.id, secrets);
    }
    return secrets;
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

  /** One engine on one target: cache, credentials, shared in-flight calls, limits, deadline. */
  call(
    engine: EngineDefinition,
    target: Observable,
    scope: CallScope,
  ): Promise<Outcome> {
    const settings = this.settingsFor(engine);
    if (scope.withheld !== undefined) return this.cachedOrWithheld(engine, target, scope, settings, scope.withheld);
    const unconfigured = this.unconfigured(engine, settings);
    if (unconfigured !== undefined) {
      this.tell(engine, 'error');
      return Promise.resolve({ ok: false, error: unconfigured });
    }

    const key = cacheKey(engine, target, this.fingerprintFor(engine, settings));
    const ttlMs = this.options.cacheTtlSeconds * 1000;
    if (!scope.ignoreCache && ttlMs > 0) return this.cachedOrCalled(engine, settings, target, scope, key, ttlMs);
    return this.called(engine, settings, target, scope, key, ttlMs);
  }

  /** The cached answer (unless the cache is to be ignored), else the reason it was withheld. */
  private async cachedOrWithheld(engine: EngineDefinition, target: Observable, scope: CallScope, settings: EngineSettings, reason: string): Promise<Outcome> {
    if (!scope.ignoreCache && this.options.cacheTtlSeconds > 0) {
      const cached = await this.readCache(cacheKey(engine, target, this.fingerprintFor(engine, settings)));
      if (cached) {
        this.tell(engine, 'cached');
        return { ok: true, value: cached.value };
      }
    }
    return { ok: false, error: reason, withheld: true };
  }

  /** The cached answer, else the call. */
  private async cachedOrCalled(engine: EngineDefinition, settings: EngineSettings, target: Observable, scope: CallScope, key: string, ttlMs: number): Promise<Outcome> {
    const cached = await this.readCache(key);
    if (cached) {
      this.tell(engine, 'cached');
      return { ok: true, value: cached.value };
    }
    return this.called(engine, settings, target, scope, key, ttlMs);
  }

  /** The call, shared with an identical one in flight, its answer then cached. */
  private called(engine: EngineDefinition, settings: EngineSettings, target: Observable, scope: CallScope, key: string, ttlMs: number): Promise<Outcome> {
    // A call missing some of its inputs shares no one's call: its answer may differ.
    if (!(scope.cacheable ?? true)) return this.invoke(engine, settings, target, scope);
    const running = this.inflight.get(key);
    if (running) return running;
    const promise = this.invoke(engine, settings, target, scope).then((outcome) => {
      this.inflight.delete(key);
      if (outcome.ok && ttlMs > 0) this.store(key, { value: outcome.value, at: Date.now() }, ttlMs);
      return outcome;
    }, (error: unknown) => {
      this.inflight.delete(key);
      throw error;
    });
    this.inflight.set(key, promise);
    return promise;
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
    const queued = performance.now();
    let turn: Promise<void> | undefined;
    try {
      turn = quota.acquire((ms, reason, paused) => scope.onWait(
        `${engine.id}: ${reason}, waiting ${Math.ceil(ms / 1000)} s`,
        // A pause is the upstream's 429 (Retry-After) held for every call of the engine.
        waitOf(ms, reason, paused ? { kind: 'retry', status: 429 } : { kind: 'quota', limit: quota.limit, windowMs: quota.windowMs }),
      ), scope.share);
      if (turn) await turn;
    } catch (error) {
      if (error instanceof QuotaExhaustedError) {
        this.tell(engine, 'error');
        return { ok: false, error: error.message };
      }
      throw error;
    } finally {
      // Time spent in the engine's quota queue (only engines with a quota, or paused, have one).
      if (turn && this.options.observer) this.told(() => this.options.observer!.onQuotaWait(engine.id, (performance.now() - queued) / 1000));
    }
    return limiter.run(() => this.global.run(async () => {
      const started = performance.now();
      const ran = (outcome: CallOutcomeKind) => this.tell(engine, outcome, (performance.now() - started) / 1000);
      const secrets = this.secretsFor(engine, settings);
      const { ctx, race, dispose } = createEngineContext(engine, settings, this.options.services, {
        signal: scope.signal,
        dependencies: scope.dependencies ?? {},
        onWait: (ms, reason, status) => scope.onWait(`${engine.id}: ${reason}, retrying in ${Math.ceil(ms / 1000)} s`, waitOf(ms, reason, { kind: 'retry', ...(status === undefined ? {} : { status }) })),
        onThrottled: (ms) => quota.pause(ms),
        secrets,
      });
      try {
        // The deadline also covers lookups that ignore the abort signal.
        const value = await race(engine.run(target, ctx));
        ran(value === null || value === undefined ? 'not_found' : 'ok');
        return { ok: true, value: value ?? null };
      } catch (error) {
        ran('error');
        return { ok: false, error: describeFailure(error, secrets, engine, settings) };
      } finally {
        dispose();
      }
    }, scope.share), scope.share);
  }

  /** Tells the observer, if any, of a call's outcome; an observer's failure never fails a call. */
  private tell(engine: EngineDefinition, outcome: CallOutcomeKind, seconds?: number): void {
    const observer = this.options.observer;
    if (!observer) return;
    try {
      observer.onCall(engine.id, outcome, seconds);
    } catch {
      // Metrics are never worth an engine call.
    }
  }

  private told(report: () => void): void {
    try {
      report();
    } catch {
      // Metrics are never worth an engine call.
    }
  }

  private engineLimiter(engine: EngineDefinition, settings: EngineSettings): Semaphore {
    const mine = this.limiters.get(engine.id);
    if (mine) return mine;
    const size = Math.max(1, settings.concurrency);
    const key = `${engine.id}\n${size}`;
    let limiter = this.perEngine.get(key);
    if (!limiter) {
      limiter = new Semaphore(size);
      this.perEngine.set(key, limiter);
    }
    this.limiters.set(engine.id, limiter);
    return limiter;
  }

  /** The engine's quota: `rate_limit` calls per `rate_window_ms`, or unlimited (still pausable on 429). */
  private quotaFor(engine: EngineDefinition, settings: EngineSettings): EngineQuota {
    const mine = this.engineQuotas.get(engine.id);
    if (mine) return mine;
    const limit = typeof settings.rate_limit === 'number' ? settings.rate_limit : Number.POSITIVE_INFINITY;
    const windowMs = typeof settings.rate_window_ms === 'number' ? settings.rate_window_ms : 60_000;
    const maxWait = typeof settings.quota_max_wait_ms === 'number' ? settings.quota_max_wait_ms : undefined;
    const key = `${engine.id}\n${limit}\n${windowMs}\n${maxWait}`;
    let quota = this.quotas.get(key);
    if (!quota) {
      quota = this.options.quotaOf ? this.options.quotaOf(engine.id, limit, windowMs, maxWait) : new Quota(limit, windowMs, maxWait);
      this.quotas.set(key, quota);
    }
    this.engineQuotas.set(engine.id, quota);
    return quota;
  }

  /** Writes an answer to the cache in the background (see `unwritten`; `flush` waits for it). */
  private store(key: string, entry: CachedEntry, ttlMs: number): void {
    this.unwritten.set(key, entry);
    // Written or not (a cache that cannot be written costs a later call, never this one).
    const written = () => {
      if (this.unwritten.get(key) === entry) this.unwritten.delete(key);
      this.writes.delete(write);
    };
    const write: Promise<void> = this.options.cache.set(key, entry, ttlMs).then(written, written);
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

/**
 * One line, no stack, no secret: the engines' words and what to check (`oas doctor` words its
 * failures with it too, src/doctor/engines.ts).
 */
export function describeFailure(error: unknown, secrets: readonly string[], engine: EngineDefinition, settings: EngineSettings): string {
  const message = error instanceof UpstreamError || error instanceof EngineError
    ? error.message
    : `internal error: ${error instanceof Error ? error.message : String(error)}`;
  const line = redact(message.split('\n')[0]!.trim(), secrets).slice(0, 300);
  return line + whatToCheck(error, engine, secrets.length > 0, settings);
}

/** `not configured: engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY`. */
export function notConfigured(engine: EngineDefinition, missing: readonly CredentialSpec[]): string {
  return `not configured: ${missing.map((c) => whereToSet(engine, c)).join(', ')}`;
}

/**
 * What to check after a failure, named by the settings that govern it: the timeout's settings,
 * the setting holding a host name that cannot be one, or for a 401/403 from an engine with a key,
 * the key's setting and environment variable (only the refused one's when the upstream said which).
 */
function whatToCheck(error: unknown, engine: EngineDefinition, keySent: boolean, settings: EngineSettings): string {
  const scope = engine.custom ? 'custom_engines' : 'engines';
  if (error instanceof TimeoutError) return ` (limit: ${scope}.${engine.id}.timeout_ms or engine_timeout_ms)`;
  if (error instanceof InvalidHostError) {
    const setting = settingHolding(settings, error.host);
    if (setting) return ` (check ${scope}.${engine.id}.${setting})`;
    return engine.custom ? ` (check custom_engines.${engine.id}.request.url)` : '';
  }
  const refused = error instanceof HttpStatusError
    ? error.status === 401 || error.status === 403
    : error instanceof CredentialsRefusedError;
  if (refused) {
    // The credential the upstream named (its client secret rather than its client id, or the
    // tenant, which is no secret), else every secret one.
    const named = error instanceof CredentialsRefusedError && error.settings
      ? engine.credentials.filter((c) => error.settings!.includes(c.setting))
      : [];
    const keys = named.length > 0 ? named : secretCredentials(engine);
    const where = keys.map((c) => whereToSet(engine, c)).join(', ');
    if (keys.length > 0) return keySent ? ` (key refused: check ${where})` : ` (no key sent: set ${where})`;
  }
  return '';
}

/** The setting whose URL has this host (`base_url`, `login_url`...), if one has. */
function settingHolding(settings: EngineSettings, host: string): string | undefined {
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value !== 'string' || !value.includes('://')) continue;
    try {
      if (new URL(value).hostname === host) return name;
    } catch {
      // not a URL
    }
  }
  return undefined;
}
