/** Wiring shared by `oas analyze`, `oas serve` and `oas engines`: catalog, config, storage, runner. */
import { AnalysisService } from './analysis/service.js';
import { loadConfig, type LoadOptions } from './config/load.js';
import type { Config } from './config/schema.js';
import { Catalog, loadEngineDefinitions } from './engine/catalog.js';
import { HttpTransport } from './http/client.js';
import { EngineRunner } from './runner/runner.js';
import { keyvEngineStore } from './store/engine-store.js';
import { openStorage, type Storage } from './store/storage.js';

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

export async function createApp(options: Omit<LoadOptions, 'engines'>): Promise<App> {
  const { config, catalog } = await loadSettings(options);
  const storage = await openStorage(config.data_dir);
  const transport = new HttpTransport({ proxyUrl: config.proxy_url, sslVerify: config.ssl_verify });
  const runner = new EngineRunner({
    catalog: catalog.engines,
    services: {
      transport,
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
      await transport.close();
      await storage.close();
    },
  };
}
