/**
 * Runs engines through the real runner (pivot, dependencies, cache, errors) with in-memory
 * storage: for tests of an engine's reversed-IP path or dependency rules. Pass the engines under
 * test; reverse_dns is always available as the pivot.
 */
import Keyv from 'keyv';
import reverseDns from '../../engines/reverse_dns.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { HttpTransport } from '../../src/http/client.js';
import type { Observable } from '../../src/observables/types.js';
import type { ObservableResult } from '../../src/runner/result.js';
import { EngineRunner, type AnalyzeOptions } from '../../src/runner/runner.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';

export interface RunnerHarnessOptions {
  /** `engines.<id>` settings (base_url pointing at fakes, ...). */
  settings?: Record<string, Record<string, unknown>>;
  dnsServers?: string[];
  dataDir?: string;
}

export interface RunnerHarness {
  catalog: Catalog;
  /** Analyses `observables` with the engines named (ids or aliases). */
  analyze(observables: Observable[], engines: string[], options?: AnalyzeOptions): Promise<ObservableResult[]>;
  close(): Promise<void>;
}

export function runnerHarness(engines: EngineDefinition[], options: RunnerHarnessOptions = {}): RunnerHarness {
  const all = [reverseDns as EngineDefinition, ...engines.filter((e) => e.id !== 'reverse_dns')];
  const catalog = new Catalog(all);
  const transport = new HttpTransport();
  const storage = new Keyv();
  const runner = new EngineRunner({
    catalog: all,
    services: {
      transport,
      dnsServers: options.dnsServers ?? [],
      dataDir: options.dataDir ?? '/nonexistent',
      storeFor: (id) => keyvEngineStore(storage, id),
    },
    cache: new Keyv(),
    cacheTtlSeconds: 3600,
    concurrency: 16,
    engineSettings: options.settings ?? {},
  });
  return {
    catalog,
    analyze: (observables, names, opts = {}) => runner.analyze(observables, catalog.select(names), opts),
    close: () => transport.close(),
  };
}
