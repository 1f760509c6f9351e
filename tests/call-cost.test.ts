/**
 * What one engine call costs (issue 33), counted, not timed: N calls through the real runner
 * (src/runner/runner.ts, pivot, cached call, context, HTTP client, DNS helpers) in this process,
 * with the objects and callbacks a call may make counted by patching their constructors and
 * registrations for the duration of the test (this file runs in a process of its own). A change
 * that adds work to every call (an AbortController, a listener, a timer, a URL, a resolver, a
 * cache round trip, a few more promises) fails here, whatever the machine's speed.
 *
 * Three engines, each over 200 observables after a warm-up (first connections, pooled
 * resolvers): `noop` answers at once; `web` asks a loopback HTTP server (plain node:http, whose
 * handler makes no promise) for JSON through ctx.http.json; `reverse_dns` (the real engine) asks
 * a loopback DNS server for A and AAAA. The cache is a stub that counts its reads and writes (a
 * Keyv store adds promises of its own, which are not the runner's to bound). What each bound is,
 * and what the code before issue 33's changes did, is written beside it in `BOUNDS`.
 */
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import dns from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type Keyv from 'keyv';
import * as v from 'valibot';
import reverseDns from '../engines/reverse_dns.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import { HttpTransport } from '../src/http/client.js';
import type { Observable } from '../src/observables/types.js';
import { EngineRunner } from '../src/runner/runner.js';
import type { Selection } from '../src/runner/types.js';
import { startFakeDns, type FakeDnsServer, type Zone } from './fakes/dns.js';

const N = 200;

const KINDS = ['abortControllers', 'signalListeners', 'derivedSignals', 'timers', 'urls', 'resolvers', 'cacheReads', 'cacheWrites', 'promises'] as const;
type Kind = (typeof KINDS)[number];
type Counts = Record<Kind, number>;

const zero = (): Counts => Object.fromEntries(KINDS.map((k) => [k, 0])) as Counts;
let counts = zero();
let counting = false;
const count = (kind: Kind) => {
  if (counting) counts[kind]++;
};

/**
 * At most this many per call (the averages over the N calls). This test on the code before issue
 * 33's changes measured: noop 1 AbortController, 1 listener, 47 promises; web 1 AbortController,
 * 3 listeners, 2 URLs, 67 promises; from the cache 22 promises; reverse_dns 1 AbortController,
 * 3 listeners, 2 resolvers, 56 promises. The promise bounds are today's counts plus 2: what
 * makes more than two promises more per call fails (a further async layer with its awaits
 * makes one to three, counted with the async hook on).
 */
const BOUNDS: Record<string, Counts> = {
  noop: {
    // The call's AbortSignal is made only when the engine reads ctx.signal.
    abortControllers: 0,
    signalListeners: 0,
    // AbortSignal.any and AbortSignal.timeout.
    derivedSignals: 0,
    // The call's deadline.
    timers: 1,
    urls: 0,
    resolvers: 0,
    cacheReads: 0,
    // Its answer, written once.
    cacheWrites: 1,
    // 27 today: the analysis and the observable, the call, its two slots, the lookup and its
    // race, the cache write.
    promises: 29,
  },
  web: {
    // The HTTP client is told of the call's end through the call itself, not its signal.
    abortControllers: 0,
    signalListeners: 0,
    derivedSignals: 0,
    // The call's deadline, and the timer undici sets on its connection for each request.
    timers: 2.05,
    // The request's URL; undici's redirect handler (and its URL) only for an answer that redirects.
    urls: 1,
    resolvers: 0,
    cacheReads: 0,
    cacheWrites: 1,
    // 35 today: the above, the request (its retry loop, its attempt, the exchange) and its JSON.
    promises: 37,
  },
  cached: {
    abortControllers: 0,
    signalListeners: 0,
    derivedSignals: 0,
    // No context: no deadline.
    timers: 0,
    urls: 0,
    resolvers: 0,
    cacheReads: 1,
    cacheWrites: 0,
    // 13 today.
    promises: 15,
  },
  reverse_dns: {
    // reverse_dns reads ctx.signal (a DNS query listens to it): one, made then.
    abortControllers: 1,
    // One per query (A and AAAA), to cancel it.
    signalListeners: 2,
    derivedSignals: 0,
    timers: 1,
    urls: 0,
    // Resolvers are reused from a pool: none made once warm.
    resolvers: 0.05,
    cacheReads: 0,
    cacheWrites: 1,
    // 40 today: the noop's, and the two queries.
    promises: 42,
  },
};

const restore: (() => void)[] = [];

function patch<T extends object, K extends keyof T>(target: T, key: K, value: T[K]): void {
  const original = target[key];
  target[key] = value;
  restore.push(() => {
    target[key] = original;
  });
}

function instrument(): void {
  const OriginalController = globalThis.AbortController;
  patch(globalThis, 'AbortController', class extends OriginalController {
    constructor() {
      super();
      count('abortControllers');
    }
  });
  for (const method of ['any', 'timeout'] as const) {
    const original = AbortSignal[method] as (...args: unknown[]) => AbortSignal;
    patch(AbortSignal, method, function (this: unknown, ...args: unknown[]) {
      count('derivedSignals');
      return original.apply(this, args);
    } as never);
  }
  const addEventListener = EventTarget.prototype.addEventListener;
  patch(EventTarget.prototype, 'addEventListener', function (this: EventTarget, ...args: Parameters<EventTarget['addEventListener']>) {
    if (this instanceof AbortSignal) count('signalListeners');
    return addEventListener.apply(this, args);
  });
  const setTimeout = globalThis.setTimeout;
  patch(globalThis, 'setTimeout', function (...args: Parameters<typeof setTimeout>) {
    count('timers');
    return setTimeout(...args);
  } as typeof setTimeout);
  const OriginalUrl = globalThis.URL;
  patch(globalThis, 'URL', class extends OriginalUrl {
    constructor(...args: ConstructorParameters<typeof URL>) {
      super(...args);
      count('urls');
    }
  });
  const OriginalResolver = dns.Resolver;
  patch(dns, 'Resolver', class extends OriginalResolver {
    constructor(...args: ConstructorParameters<typeof OriginalResolver>) {
      super(...args);
      count('resolvers');
    }
  });
  syncBuiltinESMExports();
  restore.push(() => syncBuiltinESMExports());
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') count('promises');
    },
  }).enable();
  restore.push(() => hook.disable());
}

/** The runner's cache: a Map, its reads and writes counted. */
class CountingCache {
  private readonly entries = new Map<string, unknown>();
  async get(key: string): Promise<unknown> {
    count('cacheReads');
    return this.entries.get(key);
  }

  async set(key: string, value: unknown): Promise<boolean> {
    count('cacheWrites');
    this.entries.set(key, value);
    return true;
  }
}

const noop = defineEngine({
  id: 'noop', service: 'noop', label: 'No-op', description: 'answers at once', tags: ['IP'], types: ['IPv4'],
  defaults: { timeout_ms: 5000 },
  summary: () => '',
  run: async (observable: Observable) => ({ seen: observable.value }),
});

let server: Server;
let dnsServer: FakeDnsServer;
const transport = new HttpTransport();

const web = defineEngine({
  id: 'web', service: 'web', label: 'Web', description: 'one request for JSON', tags: ['IP'], types: ['IPv4'],
  defaults: { timeout_ms: 5000, base_url: '' },
  summary: () => '',
  run: async (observable: Observable, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/${observable.value}`, v.object({ ip: v.string() })),
});

const ips = (batch: number): Observable[] => Array.from({ length: N }, (_, i) => ({ value: `34.${batch}.${i >> 8}.${i & 255}`, type: 'IPv4' }));
const names = (batch: number): Observable[] => Array.from({ length: N }, (_, i) => ({ value: `host${i}.batch${batch}.example.com`, type: 'FQDN' }));

before(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ip: (req.url ?? '/').slice(1) }));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const zone: Zone = {};
  for (const batch of [1, 2]) for (const { value } of names(batch)) zone[value] = { A: ['198.51.100.7'] };
  dnsServer = await startFakeDns(zone);
  instrument();
});

after(async () => {
  for (const undo of restore.reverse()) undo();
  await transport.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dnsServer.close();
});

interface Run {
  fresh: Counts;
  cached: Counts;
}

/** Per call: N observables never seen (after a warm-up of N others), then the same N from the cache. */
async function perCall(engine: EngineDefinition, observables: (batch: number) => Observable[]): Promise<Run> {
  const catalog = [reverseDns as EngineDefinition, engine];
  const runner = new EngineRunner({
    catalog,
    services: {
      transport,
      dnsServers: [dnsServer.address],
      dataDir: '/nonexistent',
      storeFor: () => ({ get: async () => undefined, set: async () => {} }),
    },
    cache: new CountingCache() as unknown as Keyv,
    cacheTtlSeconds: 3600,
    concurrency: 16,
    engineSettings: { web: { base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } },
  });
  const selections: Selection[] = [{ key: engine.id, engine }];
  const measure = async (batch: number, ignoreCache: boolean): Promise<Counts> => {
    counts = zero();
    counting = true;
    try {
      const results = await runner.analyze(observables(batch), selections, { ignoreCache });
      await runner.flush();
      for (const result of results) assert.equal(result.errors, undefined, JSON.stringify(result.errors));
    } finally {
      counting = false;
    }
    return Object.fromEntries(KINDS.map((k) => [k, counts[k] / N])) as Counts;
  };
  await measure(1, true);
  return { fresh: await measure(2, true), cached: await measure(2, false) };
}

function within(label: string, measured: Counts, bounds: Counts): void {
  const over = KINDS.filter((k) => measured[k] > bounds[k]);
  assert.deepEqual(
    over.map((k) => `${k}: ${measured[k]} per call`),
    [],
    `${label}: over the bounds (${over.map((k) => `${k} <= ${bounds[k]}`).join(', ')}); measured ${JSON.stringify(measured)}`,
  );
}

describe('the cost of an engine call, counted (issue 33)', () => {
  test('an engine that answers at once: no AbortController, no listener, one timer, one cache write', async () => {
    const { fresh, cached } = await perCall(noop, ips);
    within('noop', fresh, BOUNDS.noop!);
    within('noop from the cache', cached, BOUNDS.cached!);
  });

  test('an engine that makes one HTTP request: no AbortController, no listener, one URL', async () => {
    const { fresh, cached } = await perCall(web, ips);
    within('web', fresh, BOUNDS.web!);
    within('web from the cache', cached, BOUNDS.cached!);
  });

  test('reverse_dns (A and AAAA): no resolver made once warm, one AbortController, a listener per query', async () => {
    const { fresh } = await perCall(reverseDns as EngineDefinition, names);
    within('reverse_dns', fresh, BOUNDS.reverse_dns!);
  });
});
