/**
 * Runs engines through the real runner (pivot, dependencies, cache, errors) with in-memory
 * storage: for tests of an engine's reversed-IP path or dependency rules. Pass the engines under
 * test; reverse_dns is always available as the pivot.
 */
import { after } from 'node:test';
import Keyv from 'keyv';
import * as v from 'valibot';
import reverseDns from '../../engines/reverse_dns.js';
import { Catalog } from '../../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../../src/engine/contract.js';
import { HttpTransport } from '../../src/http/client.js';
import type { Observable } from '../../src/observables/types.js';
import type { ObservableResult } from '../../src/runner/result.js';
import { EngineRunner } from '../../src/runner/runner.js';
import type { AnalyzeOptions } from '../../src/runner/types.js';
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

/**
 * For a suite through the runner: `runner(settings, extra)` is a runner over `engines` with
 * `engines.<id of the first>` = `{ ...base(), retries: 0, ...settings }` (`base` read at each call,
 * e.g. a fake's settings once `before` has started it) and `extra` for the others. Every runner
 * made is closed after the suite.
 */
export function suiteRunners(
  engines: EngineDefinition[],
  base: () => Record<string, unknown> = () => ({}),
): (settings?: Record<string, unknown>, extra?: Record<string, Record<string, unknown>>) => RunnerHarness {
  const runners: RunnerHarness[] = [];
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
  });
  return (settings = {}, extra = {}) => {
    const r = runnerHarness(engines, { settings: { [engines[0]!.id]: { ...base(), retries: 0, ...settings }, ...extra } });
    runners.push(r);
    return r;
  };
}

/**
 * A second engine on domains and URLs (alias `neighbour_alias`) that answers `{ seen: <value> }`:
 * run beside an engine under test, to show that its failures leave the other engine unaffected.
 */
export const neighbour = defineEngine<{ seen: string }>({
  id: 'neighbour',
  service: 'neighbour_alias',
  label: 'Neighbour',
  description: 'test engine',
  tags: ['domain'],
  types: ['FQDN', 'URL'],
  defaults: { timeout_ms: 1000 },
  summary: (r) => r.seen,
  run: async (observable) => ({ seen: observable.value }),
});

/**
 * An engine `limited` on IPv4 with a quota of `rateLimit` calls per `windowMs`: it asks
 * `<base_url>/<ip>` and expects `{ ip }` (a fake's route), for tests of quotas through the runner.
 * `starts`, when given, gets the time (Date.now(), the quota's clock) each call starts, before its
 * request: the quota's spacing without the network's lag in it.
 */
export function limitedEngine(rateLimit: number, windowMs: number, starts?: number[]) {
  return defineEngine({
    id: 'limited',
    service: 'limitedsvc',
    label: 'Limited',
    description: `test engine with a quota of ${rateLimit} calls per ${windowMs} ms`,
    tags: ['IP'],
    types: ['IPv4'],
    defaults: { timeout_ms: 5000, base_url: '', rate_limit: rateLimit, rate_window_ms: windowMs },
    summary: () => '',
    run: async (o: Observable, ctx) => {
      starts?.push(Date.now());
      return ctx.http.json(`${String(ctx.settings.base_url)}/${o.value}`, v.object({ ip: v.string() }));
    },
  });
}
