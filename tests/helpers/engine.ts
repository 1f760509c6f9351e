/**
 * Runs one engine's lookup directly, the way the runner does, against loopback fakes.
 * Storage is an in-memory Keyv, so each call of `engineHarness` starts empty.
 */
import { after, before } from 'node:test';
import Keyv from 'keyv';
import type { EngineDefinition, EngineSettings } from '../../src/engine/contract.js';
import { createEngineContext, resolveSettings } from '../../src/engine/context.js';
import { HttpTransport } from '../../src/http/client.js';
import type { Observable, ObservableType } from '../../src/observables/types.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import type { FakeHttpServer } from '../fakes/http.js';

export interface HarnessOptions {
  /** As in `engines.<id>` of the configuration (base_url pointing at a fake, ...). */
  settings?: Record<string, unknown>;
  dnsServers?: string[];
  dataDir?: string;
  dependencies?: Record<string, unknown>;
  /** The HTTP transport (default: a direct one); `close()` closes it. */
  transport?: HttpTransport;
}

export interface EngineHarness {
  run(value: string, type: ObservableType): Promise<unknown>;
  settings: EngineSettings;
  storage: Keyv;
  close(): Promise<void>;
}

export function engineHarness(engine: EngineDefinition, options: HarnessOptions = {}): EngineHarness {
  const transport = options.transport ?? new HttpTransport();
  const storage = new Keyv();
  const settings = resolveSettings(engine, options.settings);
  return {
    settings,
    storage,
    async run(value, type) {
      const observable: Observable = { value, type };
      const { ctx, dispose } = createEngineContext(engine, settings, {
        transport,
        dnsServers: options.dnsServers ?? [],
        dataDir: options.dataDir ?? '/nonexistent',
        storeFor: (id) => keyvEngineStore(storage, id),
      }, { dependencies: options.dependencies ?? {} });
      try {
        return await engine.run(observable, ctx);
      } finally {
        dispose();
      }
    },
    close: () => transport.close(),
  };
}

export interface HarnessOnFake {
  fake: FakeHttpServer;
  harness: EngineHarness;
}

/**
 * For a suite against one fake (such as the one whole-system tests use): before it, `start()` and
 * a harness with `settings(fake.url)`, passed through `wrap` when given (e.g. a KeyWatch's
 * `watch`); after it, both closed. The fields are set once `before` has run.
 */
export function harnessOnFake(
  engine: EngineDefinition,
  start: () => Promise<FakeHttpServer>,
  settings: (url: string) => Record<string, unknown>,
  wrap: (harness: EngineHarness) => EngineHarness = (harness) => harness,
): HarnessOnFake {
  const suite = {} as HarnessOnFake;
  before(async () => {
    suite.fake = await start();
    suite.harness = wrap(engineHarness(engine, { settings: settings(suite.fake.url) }));
  });
  after(async () => {
    await suite.harness?.close();
    await suite.fake?.close();
  });
  return suite;
}
