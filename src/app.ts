/** Wiring shared by `oas analyze`, `oas serve` and `oas engines`: catalog, config, storage, runner. */
import type { AnalysisService } from './analysis/service.js';
import { loadConfig, type LoadOptions } from './config/load.js';
import type { Config } from './config/schema.js';
import type { EngineDefinition } from './engine/contract.js';
import { Catalog, loadEngineDefinitions } from './engine/catalog.js';
import type { HttpTransport } from './http/client.js';
import type { EngineRunner } from './runner/runner.js';
import type { Storage } from './store/storage.js';

// Start-up cost: `oas engines` needs only the settings (loadSettings); SQLite, the runner and the
// HTTP client are imported by createApp, and the HTTP transport (its connection pool) is created
// at the first engine call, so an analysis answered from the cache never loads undici.

export interface App {
  config: Config;
  catalog: Catalog;
  storage: Storage;
  runner: EngineRunner;
  analyses: AnalysisService;
  close(): Promise<void>;
}

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
  const storage = await openStorage(config.data_dir);
  let transport: HttpTransport | undefined;
  const runner = new EngineRunner({
    catalog: catalog.engines,
    services: {
      get transport() {
        return transport ??= new HttpTransport({ proxyUrl: config.proxy_url, sslVerify: config.ssl_verify });
      },
      dnsServers: config.dns_servers,
      dataDir: config.data_dir,
      storeFor: (id) => keyvEngineStore(storage.engineData, id),
    },
    cache: storage.results,
    cacheTtlSeconds: config.api_cache_timeout,
    concurrency: config.concurrency,
    engineSettings: config.engines,
    timeoutMs: config.engine_timeout_ms,
  });
  const analyses = new AnalysisService(catalog, runner, storage, { maxObservables: config.max_observables });
  return {
    config,
    catalog,
    storage,
    runner,
    analyses,
    close: async () => {
      await analyses.idle();
      await transport?.close();
      await runner.flush(); // engine answers still on their way to the cache
      await storage.close();
    },
  };
}
