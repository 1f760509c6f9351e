/** Wiring shared by `oas analyze`, `oas serve` and `oas engines`: catalog, config, storage, runner. */
import type { AnalysisObserver, AnalysisService } from './analysis/service.js';
import { ConfigError, loadConfig, type LoadOptions } from './config/load.js';
import type { Config } from './config/schema.js';
import type { EngineDefinition } from './engine/contract.js';
import { Catalog, EngineSetMemberError, loadEngineDefinitions } from './engine/catalog.js';
import type { HttpTransport } from './http/client.js';
import type { EngineRunner } from './runner/runner.js';
import type { CallObserver } from './runner/types.js';
import type { RedisAnalysisStore } from './scale/redis-analyses.js';
import type { RedisLink } from './scale/redis.js';
import type { Storage } from './store/storage.js';
import type { UserStore } from './store/users.js';
import type { AuditLog } from './fs/audit-log.js';
import type { EventSink } from './automation/events.js';
import type { Webhooks } from './automation/webhooks.js';
import type { KnowledgeSources, TeamKnowledge } from './analysis/knowledge.js';

// Start-up cost: `oas engines` needs only the settings (loadSettings); SQLite, the runner and the
// HTTP client are imported by createApp, and the HTTP transport (its connection pool) is created
// at the first engine call, so an analysis answered from the cache never loads undici.

export interface App {
  /**
   * The configuration, the catalog and the runner in effect: replaced together by `apply` (a
   * reload), so read them when needed rather than keeping them.
   */
  readonly config: Config;
  readonly catalog: Catalog;
  /** The SQLite file; undefined when the analyses live in Redis (`redis_url`, server or worker). */
  storage: Storage | undefined;
  /** With `redis_url`: the connection, and the analyses there (server and worker). */
  scale: { link: RedisLink; store: RedisAnalysisStore | undefined } | undefined;
  readonly runner: EngineRunner;
  analyses: AnalysisService;
  /** The team's users (the SQLite file, or Redis with `redis_url`). */
  users: UserStore;
  /** What the team already knows (issue 38): the allowlist and the analysts' marks. */
  knowledge: TeamKnowledge;
  /** The audit trail (setting audit_log; a server's and a worker's: local commands write none but `oas users`'). */
  audit: AuditLog;
  /**
   * The one HTTP client (its pool, proxy, TLS setting), made at its first use: the engines' calls
   * and the webhooks' deliveries go through it.
   */
  readonly transport: HttpTransport;
  /**
   * The webhooks of `webhooks` and `callback_url` (issue 36), once `oas serve` or `oas worker`
   * attached them (src/automation/attach.ts); undefined before, and in local commands.
   */
  webhooks: Webhooks | undefined;
  /** Where events go: the webhooks when attached, else nowhere (NO_EVENTS). */
  readonly events: EventSink;
  /**
   * A new configuration and its catalog (SIGHUP, src/cli/reload.ts) for the analyses started from
   * now on: engine settings and keys, timeouts, concurrency, the cache's lifetime, custom engines,
   * engine sets, max_observables. Analyses running keep what they started with. What the app
   * opened with the old one (data_dir, redis_url, the HTTP client's proxy_url, ssl_verify and
   * dns_servers) stays: the caller keeps those keys' old values in `config`.
   */
  apply(settings: { config: Config; catalog: Catalog }): void;
  close(): Promise<void>;
}

/**
 * Who the app is for. With `redis_url`: `cli` (`oas analyze`) keeps its analyses in the SQLite
 * file and shares the team's cache and quotas; `server` and `worker` keep everything in Redis,
 * and the server's analyses run as queue jobs.
 */
export type AppRole = 'cli' | 'server' | 'worker';

type SettingsOptions = Omit<LoadOptions, 'engines' | 'custom'>;

/** What makes the engines of `custom_engines` (src/custom/engines.ts), once a configuration defines some. */
type CustomFactory = NonNullable<LoadOptions['custom']>;

/**
 * The setting `allowlist` (issue 38) checked: an entry naming nothing an allowlist holds is a
 * configuration error. src/marking/allowlist.ts (and ipaddr.js) is loaded only when it has
 * entries, or for a server or worker, which may be given some on a reload.
 */
let allowlistModule: typeof import('./marking/allowlist.js') | undefined;
async function checkAllowlist(config: Config, mayReload: boolean): Promise<void> {
  if (config.allowlist.length > 0 || mayReload) allowlistModule ??= await import('./marking/allowlist.js');
  checkAllowlistNow(config);
}
function checkAllowlistNow(config: Config): void {
  if (config.allowlist.length === 0) return;
  if (!allowlistModule) throw new ConfigError('allowlist: set at a reload of a process started without one; restart it');
  try {
    allowlistModule.configuredAllowlist(config.allowlist);
  } catch (error) {
    throw new ConfigError(`invalid "${(error as Error).message.replace(/^(allowlist\.\d+\.value): /, '$1": ')}`);
  }
}

/**
 * Where the team's allowlist and marks are (issue 38): Redis with `redis_url` (every command of
 * the team, `oas analyze` included, shares them), else the SQLite file of data_dir.
 */
async function knowledgeLists(link: RedisLink | undefined, storage: Storage | undefined): Promise<Pick<KnowledgeSources, 'allowlist' | 'marks'>> {
  if (link) {
    const { redisTeamList } = await import('./scale/redis-team-lists.js');
    return { allowlist: redisTeamList(link.commands, 'allowlist'), marks: redisTeamList(link.commands, 'marks') };
  }
  const { sqliteTeamList } = await import('./store/team-lists.js');
  return { allowlist: sqliteTeamList(storage!.analysesTable, 'allowlist'), marks: sqliteTeamList(storage!.analysesTable, 'marks') };
}

/**
 * The maker of custom engines when the configuration defines some, else undefined. Start-up cost:
 * src/custom/ (five modules) is imported only then. A configuration that cannot be read is left to
 * settingsWith, which reports it.
 */
async function customFactoryFor(options: SettingsOptions, plain?: Config): Promise<CustomFactory | undefined> {
  let config = plain;
  try {
    config ??= loadConfig(options).config;
  } catch {
    return (await import('./custom/engines.js')).customEngines;
  }
  const defined = config.custom_engines;
  if (defined === undefined || (typeof defined === 'object' && defined !== null && !Array.isArray(defined) && Object.keys(defined).length === 0)) return undefined;
  return (await import('./custom/engines.js')).customEngines;
}

export async function loadSettings(options: SettingsOptions): Promise<{ config: Config; catalog: Catalog }> {
  return settingsOf(options, await loadEngineDefinitions());
}

/** settingsWith, the custom engines' code loaded when the configuration defines some. */
export async function settingsOf(options: SettingsOptions, definitions: readonly EngineDefinition[]): Promise<{ config: Config; catalog: Catalog }> {
  return settingsWith(options, definitions, await customFactoryFor(options));
}

/**
 * The configuration and the catalog of its variant: the engines of `engines/` given, the custom
 * engines the configuration defines (`custom_engines`, made by `custom`: see customFactoryFor),
 * and its engine sets (`engine_sets`), a set naming an unknown engine being a configuration error.
 */
export function settingsWith(options: SettingsOptions, definitions: readonly EngineDefinition[], custom?: CustomFactory): { config: Config; catalog: Catalog } {
  const loaded = loadConfig({ ...options, engines: definitions, custom: custom ?? noCustomEngines });
  try {
    return { config: loaded.config, catalog: new Catalog(loaded.definitions, loaded.config.catalog, loaded.config.engine_sets) };
  } catch (error) {
    if (error instanceof EngineSetMemberError) throw new ConfigError(`${loaded.sourceOf('engine_sets')}: ${error.message}`);
    throw error;
  }
}

/** Used when the custom engines' code was not loaded: right only for a configuration that defines none. */
const noCustomEngines: CustomFactory = (definitions) => {
  if (Object.keys(definitions).length > 0) throw new Error('custom engines defined, but their code was not loaded (customFactoryFor)');
  return [];
};

/**
 * The settings and the catalog for listing it (`oas engines`): the same as loadSettings, but from
 * the engines' cached declarations when a fresh copy exists (src/engine/declarations.ts), which
 * spares importing every engine module. Any problem on that path (a configuration error
 * included) is left to loadSettings, which then reports it as usual and refreshes the copy.
 */
export async function loadListingSettings(options: SettingsOptions): Promise<{ config: Config; catalog: Catalog }> {
  return loadDeclaredSettings(options, () => new Set());
}

/**
 * The settings and the catalog for one analysis (`oas analyze`): from the cached declarations,
 * with the code of only the engines it may run imported (those named, else the defaults, their
 * dependencies and the pivot). Any problem (an unknown name included) goes the usual way.
 */
export async function loadAnalysisSettings(options: SettingsOptions, engines: readonly string[] | undefined): Promise<{ config: Config; catalog: Catalog }> {
  return loadDeclaredSettings(options, (declared, custom) => {
    const { catalog } = settingsWith(options, declared, custom);
    const wanted = new Set<string>();
    const add = (engine: EngineDefinition | undefined) => {
      if (!engine || wanted.has(engine.id)) return;
      wanted.add(engine.id);
      for (const id of engine.dependsOn) add(catalog.find(id));
    };
    for (const { engine } of catalog.select(engines ?? catalog.defaults().map((e) => e.id))) add(engine);
    for (const engine of catalog.engines) if (engine.pivot) add(engine);
    return wanted;
  });
}

async function loadDeclaredSettings(
  options: SettingsOptions,
  real: (declared: readonly EngineDefinition[], custom: CustomFactory | undefined) => ReadonlySet<string>,
): Promise<{ config: Config; catalog: Catalog }> {
  const { declaredDefinitions, importedDefinitions } = await import('./engine/declarations.js');
  let custom: CustomFactory | undefined;
  try {
    // The configuration as written (no engine known yet): its engine settings and custom engines.
    const plain = loadConfig(options).config;
    custom = await customFactoryFor(options, plain);
    const definitions = await declaredDefinitions(() => plain.engines ?? {}, (declared) => real(declared, custom));
    if (definitions) return settingsWith(options, definitions, custom);
  } catch {
    // Reported by the usual path below.
  }
  const [definitions, factory] = await Promise.all([importedDefinitions(), custom ? Promise.resolve(custom) : customFactoryFor(options)]);
  return settingsWith(options, definitions, factory);
}

/** Events that go nowhere (no webhooks attached); src/automation/events.ts's NO_EVENTS, not imported: `oas analyze` loads no more modules for it. */
const NO_EVENTS: EventSink = { emit: () => {} };

/** A trail that writes nothing: local commands' (oas analyze, oas engines). */
const NO_AUDIT: AuditLog = { path: undefined, write: () => {} };

export interface CreateOptions {
  /** For one analysis of these engines (undefined: the defaults): only their code is loaded. */
  analysisOf?: { engines: readonly string[] | undefined };
  /** Default `cli`. */
  role?: AppRole;
  /** Told of every engine call and analysis (`oas serve`'s metrics, src/server/metrics.ts). */
  observers?: { calls?: CallObserver; analyses?: AnalysisObserver };
}

export async function createApp(options: SettingsOptions, create: CreateOptions = {}): Promise<App> {
  const [{ config, catalog }, { openStorage }, { keyvEngineStore }, { EngineRunner }, { AnalysisService }, { HttpTransport }, { markingSettings }] = await Promise.all([
    create.analysisOf ? loadAnalysisSettings(options, create.analysisOf.engines) : loadSettings(options),
    import('./store/storage.js'),
    import('./store/engine-store.js'),
    import('./runner/runner.js'),
    import('./analysis/service.js'),
    import('./http/client.js'),
    // The withholding's settings (ipaddr.js): not loaded by `oas engines` or `oas --help`.
    import('./marking/policy.js'),
  ]);
  const role = create.role ?? 'cli';
  const redis = config.redis_url ? await openScale(config.redis_url, role) : undefined;
  const storage = redis && role !== 'cli' ? undefined : await openStorage(config.data_dir);
  const cache = redis?.keyvs ?? storage!;
  let transport: HttpTransport | undefined;
  await checkAllowlist(config, role !== 'cli');
  const marks = markingSettings(config);
  const runner = new EngineRunner({
    catalog: catalog.engines,
    services: {
      get transport() {
        return transport ??= new HttpTransport({ proxyUrl: config.proxy_url, sslVerify: config.ssl_verify, dnsServers: config.dns_servers });
      },
      dnsServers: config.dns_servers,
      dataDir: config.data_dir,
      storeFor: (id) => keyvEngineStore(cache.engineData, id),
    },
    cache: cache.results,
    cacheTtlSeconds: config.api_cache_timeout,
    concurrency: config.concurrency,
    engineSettings: config.engines,
    timeoutMs: config.engine_timeout_ms,
    quotaOf: redis?.quotas,
    observer: create.observers?.calls,
    ...marks,
  });
  const { sqliteAnalysisStore } = await import('./store/sqlite-analyses.js');
  const store = redis?.store ?? sqliteAnalysisStore(storage!);
  const analyses = new AnalysisService(catalog, runner, store, { maxObservables: config.max_observables, defaultMarking: marks.defaultMarking, callbackHosts: config.callback_hosts }, role === 'server' ? redis?.dispatcher : undefined, create.observers?.analyses);
  const { TeamKnowledge } = await import('./analysis/knowledge.js');
  const knowledge = new TeamKnowledge({ ...(await knowledgeLists(redis?.link, storage)), configured: () => current.config.allowlist });
  analyses.knowledge = knowledge;
  const users = redis ? (await import('./scale/redis-users.js')).redisUsers(redis.link.commands) : (await import('./store/users.js')).sqliteUsers(storage!.analysesTable);
  // Local commands write no audit trail: the trail's module is a server's (and a worker's, whose
  // webhook deliveries are audited) only.
  const audit: AuditLog = role === 'server' || role === 'worker' ? (await import('./fs/audit-log.js')).openAuditLog(config.audit_log) : NO_AUDIT;
  let current = { config, catalog, runner };
  let webhooks: Webhooks | undefined;
  return {
    get config() {
      return current.config;
    },
    get catalog() {
      return current.catalog;
    },
    get runner() {
      return current.runner;
    },
    storage,
    scale: redis ? { link: redis.link, store: redis.store } : undefined,
    analyses,
    users,
    knowledge,
    audit,
    get transport() {
      return transport ??= new HttpTransport({ proxyUrl: config.proxy_url, sslVerify: config.ssl_verify, dnsServers: config.dns_servers });
    },
    get webhooks() {
      return webhooks;
    },
    set webhooks(attached) {
      webhooks = attached;
    },
    get events() {
      return webhooks ?? NO_EVENTS;
    },
    apply: (next) => {
      checkAllowlistNow(next.config);
      const nextMarks = markingSettings(next.config);
      const replaced = current.runner.withSettings({
        catalog: next.catalog.engines,
        engineSettings: next.config.engines,
        timeoutMs: next.config.engine_timeout_ms,
        concurrency: next.config.concurrency,
        cacheTtlSeconds: next.config.api_cache_timeout,
        ...nextMarks,
      });
      analyses.reconfigure(next.catalog, replaced, { maxObservables: next.config.max_observables, defaultMarking: nextMarks.defaultMarking, callbackHosts: next.config.callback_hosts });
      current = { config: next.config, catalog: next.catalog, runner: replaced };
    },
    close: async () => {
      await analyses.idle();
      await webhooks?.close();
      await transport?.close();
      await current.runner.flush(); // engine answers still on their way to the cache (every runner's: they share the writes)
      await storage?.close();
      await redis?.close();
    },
  };
}

/**
 * What `redis_url` brings: the connection, the cache and engine data (Keyv's Redis adapter), the
 * shared quotas, and for a server or worker the analyses and the queue. `oas analyze` first makes
 * sure Redis answers (one line and exit 1 if not); a server or worker starts anyway and waits
 * for it (503 meanwhile).
 */
async function openScale(url: string, role: AppRole) {
  const [{ openRedis }, { openRedisKeyvs }, { redisQuotas }, { RedisAnalysisStore }, { queueDispatcher }] = await Promise.all([
    import('./scale/redis.js'),
    import('./scale/redis-keyv.js'),
    import('./scale/redis-quota.js'),
    import('./scale/redis-analyses.js'),
    import('./scale/queue.js'),
  ]);
  // A terminal should not wait for retries: the first refusal is the answer.
  const link = role === 'cli' ? await redisAnswering(url) : openRedis(url);
  // A server or worker starts before Redis answers: its schema is checked when it first does.
  if (role !== 'cli') refuseNewerRedis(link);
  const keyvs = openRedisKeyvs(url);
  const store = role === 'cli' ? undefined : new RedisAnalysisStore(link.commands);
  const dispatcher = role === 'server' ? queueDispatcher(link, store!) : undefined;
  return {
    link,
    keyvs,
    quotas: redisQuotas(link.commands),
    store,
    dispatcher,
    close: async () => {
      await dispatcher?.close();
      await keyvs.close();
      await link.close();
    },
  };
}

/**
 * The team's users alone (`oas users`): from Redis with `redis_url`, else the SQLite file in
 * `data_dir`; nothing else is opened but the audit trail (audit_log), at its first line.
 */
export async function openUsers(options: SettingsOptions): Promise<{ config: Config; users: UserStore; audit: AuditLog; close(): Promise<void> }> {
  const { config } = loadConfig(options);
  const { openAuditLog } = await import('./fs/audit-log.js');
  if (config.redis_url) {
    const { redisUsers } = await import('./scale/redis-users.js');
    const link = await redisAnswering(config.redis_url);
    return { config, users: redisUsers(link.commands), audit: openAuditLog(config.audit_log, { prepare: false }), close: () => link.close() };
  }
  const [{ openStorage }, { sqliteUsers }] = await Promise.all([import('./store/storage.js'), import('./store/users.js')]);
  const storage = await openStorage(config.data_dir);
  return { config, users: sqliteUsers(storage.analysesTable), audit: openAuditLog(config.audit_log, { prepare: false }), close: () => storage.close() };
}

/**
 * When `link` first answers: a Redis of a newer schema stops this process (one line on stderr,
 * exit 2 as any configuration error) before it takes a job.
 */
function refuseNewerRedis(link: RedisLink): void {
  link.commands.once('ready', () => {
    void import('./scale/redis-schema.js')
      .then(({ checkRedisSchema }) => checkRedisSchema(link.commands, link.label))
      .catch((error: unknown) => {
        if (!(error instanceof Error) || error.name !== 'ConfigError') return; // Redis went away: checked by the next command
        process.stderr.write(`oas: ${error.message}\n`);
        process.exit(2);
      });
  });
}

/** A Redis connection that answers, or one line naming redis_url (the first refusal, or 5 s). */
async function redisAnswering(url: string): Promise<RedisLink> {
  const { openRedis, reasonOf, RedisUnavailableError } = await import('./scale/redis.js');
  const link = openRedis(url);
  const refused = new Promise<never>((_, reject) => {
    link.commands.once('error', (error: unknown) => reject(new RedisUnavailableError(`Redis at ${link.label} is unreachable (${reasonOf(error)}): check redis_url (--redis, OAS_REDIS_URL)`)));
  });
  try {
    await Promise.race([link.whenReady(5_000), refused]);
    const { checkRedisSchema } = await import('./scale/redis-schema.js');
    await checkRedisSchema(link.commands, link.label);
  } catch (error) {
    await link.close();
    throw error;
  }
  return link;
}

/**
 * The team's allowlist and marks alone (`oas allow`, `oas mark`): from Redis with `redis_url`, else
 * the SQLite file in `data_dir`; nothing else is opened but the audit trail, at its first line.
 */
export async function openKnowledge(options: SettingsOptions): Promise<{ config: Config; knowledge: TeamKnowledge; audit: AuditLog; close(): Promise<void> }> {
  const { config } = loadConfig(options);
  await checkAllowlist(config, false);
  const [{ openAuditLog }, { TeamKnowledge }] = await Promise.all([import('./fs/audit-log.js'), import('./analysis/knowledge.js')]);
  const link = config.redis_url ? await redisAnswering(config.redis_url) : undefined;
  const storage = link ? undefined : await (await import('./store/storage.js')).openStorage(config.data_dir);
  const knowledge = new TeamKnowledge({ ...(await knowledgeLists(link, storage)), configured: () => config.allowlist });
  return { config, knowledge, audit: openAuditLog(config.audit_log, { prepare: false }), close: async () => {
    await storage?.close();
    await link?.close();
  } };
}
