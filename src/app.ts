/** Wiring shared by `oas analyze`, `oas serve` and `oas engines`: catalog, config, storage, runner. */
import type { AnalysisService } from './analysis/service.js';
import { loadConfig, type LoadOptions } from './config/load.js';
import type { Config } from './config/schema.js';
import { Catalog, loadEngineDefinitions, loadEngineModules } from './engine/catalog.js';
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
  const { declaredDefinitions, saveDeclarations } = await import('./engine/declarations.js');
  try {
    const definitions = await declaredDefinitions(() => Object.keys(loadConfig(options).config.engines ?? {}));
    if (definitions) {
      const { config } = loadConfig({ ...options, engines: definitions });
      return { config, catalog: new Catalog(definitions, config.catalog) };
    }
  } catch {
    // Reported by the usual path below.
  }
  const modules = await loadEngineModules();
  const definitions = modules.map((m) => m.definition);
  const { config } = loadConfig({ ...options, engines: definitions });
  saveDeclarations(modules);
  return { config, catalog: new Catalog(definitions, config.catalog) };
}

export async function createApp(options: Omit<LoadOptions, 'engines'>): Promise<App> {
  const [{ config, catalog }, { openStorage }, { keyvEngineStore }, { EngineRunner }, { AnalysisService }, { HttpTransport }] = await Promise.all([
    loadSettings(options),
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
