/** Wiring shared by `oas analyze`, `oas serve` and `oas engines`: catalog, config, storage, runner. */
import type { AnalysisService } from './analysis/service.js';
import { loadConfig, type LoadOptions } from './config/load.js';
import type { Config } from './config/schema.js';
import type { EngineDefinition } from './engine/contract.js';
import { Catalog, loadEngineDefinitions } from './engine/catalog.js';
import type { HttpTransport } from './http/client.js';
import type { EngineRunner } from './runner/runner.js';
import type { RedisAnalysisStore } from './scale/redis-analyses.js';
import type { RedisLink } from './scale/redis.js';
import type { Storage } from './store/storage.js';

// Start-up cost: `oas engines` needs only the settings (loadSettings); SQLite, the runner and the
// HTTP client are imported by createApp, and the HTTP transport (its connection pool) is created
// at the first engine call, so an analysis answered from the cache never loads undici.

export interface App {
  config: Config;
  catalog: Catalog;
  /** The SQLite file; undefined when the analyses live in Redis (`redis_url`, server or worker). */
  storage: Storage | undefined;
  /** With `redis_url`: the connection, and the analyses there (server and worker). */
  scale: { link: RedisLink; store: RedisAnalysisStore | undefined } | undefined;
  runner: EngineRunner;
  analyses: AnalysisService;
  close(): Promise<void>;
}

/**
 * Who the app is for. With `redis_url`: `cli` (`oas analyze`) keeps its analyses in the SQLite
 * file and shares the team's cache and quotas; `server` and `worker` keep everything in Redis,
 * and the server's analyses run as queue jobs.
 */
export type AppRole = 'cli' | 'server' | 'worker';

export async function loadSettings(options: Omit<LoadOptions, 'engines'>): Promise<{ config: Config; catalog: Catalog }> {
  const definitions = await loadEngineDefinitions();
  const { config } = loadConfig({ ...options, engines: definitions });
  return { config, catalog: new Catalog(definitions, config.catalog) };
}

/**
 * The settings and the catalog for listing it (`oas engines`): the same as loadSettings, but from
 * the engines' cached declarations when a fresh copy exists (src/engine/declarations.ts), which
 * spares importing every engine module. Any problem on that path (a configuration error
 * included) is left to loadSettings, which then reports it as usual and refreshes the copy.
 */
export async function loadListingSettings(options: Omit<LoadOptions, 'engines'>): Promise<{ config: Config; catalog: Catalog }> {
  return loadDeclaredSettings(options, () => new Set());
}

/**
 * The settings and the catalog for one analysis (`oas analyze`): from the cached declarations,
 * with the code of only the engines it may run imported (those named, else the defaults, their
 * dependencies and the pivot). Any problem (an unknown name included) goes the usual way.
 */
export async function loadAnalysisSettings(options: Omit<LoadOptions, 'engines'>, engines: readonly string[] | undefined): Promise<{ config: Config; catalog: Catalog }> {
  return loadDeclaredSettings(options, (declared) => {
    const { config } = loadConfig({ ...options, engines: declared });
    const catalog = new Catalog(declared, config.catalog);
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
  options: Omit<LoadOptions, 'engines'>,
  real: (declared: readonly EngineDefinition[]) => ReadonlySet<string>,
): Promise<{ config: Config; catalog: Catalog }> {
  const { declaredDefinitions, importedDefinitions } = await import('./engine/declarations.js');
  try {
    const definitions = await declaredDefinitions(() => loadConfig(options).config.engines ?? {}, real);
    if (definitions) {
      const { config } = loadConfig({ ...options, engines: definitions });
      return { config, catalog: new Catalog(definitions, config.catalog) };
    }
  } catch {
    // Reported by the usual path below.
  }
  const definitions = await importedDefinitions();
  const { config } = loadConfig({ ...options, engines: definitions });
  return { config, catalog: new Catalog(definitions, config.catalog) };
}

export interface CreateOptions {
  /** For one analysis of these engines (undefined: the defaults): only their code is loaded. */
  analysisOf?: { engines: readonly string[] | undefined };
  /** Default `cli`. */
  role?: AppRole;
}

export async function createApp(options: Omit<LoadOptions, 'engines'>, create: CreateOptions = {}): Promise<App> {
  const [{ config, catalog }, { openStorage }, { keyvEngineStore }, { EngineRunner }, { AnalysisService }, { HttpTransport }] = await Promise.all([
    create.analysisOf ? loadAnalysisSettings(options, create.analysisOf.engines) : loadSettings(options),
    import('./store/storage.js'),
    import('./store/engine-store.js'),
    import('./runner/runner.js'),
    import('./analysis/service.js'),
    import('./http/client.js'),
  ]);
  const role = create.role ?? 'cli';
  const redis = config.redis_url ? await openScale(config.redis_url, role) : undefined;
  const storage = redis && role !== 'cli' ? undefined : await openStorage(config.data_dir);
  const cache = redis?.keyvs ?? storage!;
  let transport: HttpTransport | undefined;
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
  });
  const { sqliteAnalysisStore } = await import('./store/sqlite-analyses.js');
  const store = redis?.store ?? sqliteAnalysisStore(storage!);
  const analyses = new AnalysisService(catalog, runner, store, { maxObservables: config.max_observables }, role === 'server' ? redis?.dispatcher : undefined);
  return {
    config,
    catalog,
    storage,
    scale: redis ? { link: redis.link, store: redis.store } : undefined,
    runner,
    analyses,
    close: async () => {
      await analyses.idle();
      await transport?.close();
      await runner.flush(); // engine answers still on their way to the cache
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
  const [{ openRedis, reasonOf, RedisUnavailableError }, { openRedisKeyvs }, { redisQuotas }, { RedisAnalysisStore }, { queueDispatcher }] = await Promise.all([
    import('./scale/redis.js'),
    import('./scale/redis-keyv.js'),
    import('./scale/redis-quota.js'),
    import('./scale/redis-analyses.js'),
    import('./scale/queue.js'),
  ]);
  const link = openRedis(url);
  if (role === 'cli') {
    // The first refusal is the answer: a terminal should not wait for retries.
    const refused = new Promise<never>((_, reject) => {
      link.commands.once('error', (error: unknown) => reject(new RedisUnavailableError(`Redis at ${link.label} is unreachable (${reasonOf(error)}): check redis_url (--redis, OAS_REDIS_URL)`)));
    });
    try {
      await Promise.race([link.whenReady(5_000), refused]);
    } catch (error) {
      await link.close();
      throw error;
    }
  }
  const keyvs = openRedisKeyvs(url);
  const dispatcher = role === 'server' ? queueDispatcher(link) : undefined;
  return {
    link,
    keyvs,
    quotas: redisQuotas(link.commands),
    store: role === 'cli' ? undefined : new RedisAnalysisStore(link.commands),
    dispatcher,
    close: async () => {
      await dispatcher?.close();
      await keyvs.close();
      await link.close();
    },
  };
}
