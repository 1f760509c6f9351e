/**
 * The runner's behaviour with real engines and engines declared here against loopback fakes:
 * the pivot to a resolved IP, dependencies, per-engine errors, deadlines, caching, limits.
 */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, beforeEach, describe, test } from 'node:test';
import Keyv from 'keyv';
import * as v from 'valibot';
import reverseDns from '../engines/reverse_dns.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import { HttpTransport } from '../src/http/client.js';
import type { Observable } from '../src/observables/types.js';
import { EngineRunner, type RunnerOptions } from '../src/runner/runner.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { startFakeDns, type FakeDnsServer } from './fakes/dns.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from './fakes/http.js';

let http: FakeHttpServer;
let dns: FakeDnsServer;
const transport = new HttpTransport();

/** An IP-only intelligence engine, also run on the IP a domain resolves to. */
const ipIntel = defineEngine({
  id: 'ip_intel',
  service: 'ipintelsvc',
  label: 'IP intel',
  description: 'test engine: GET /ip/<ip>',
  tags: ['IP'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  defaults: { timeout_ms: 2000, base_url: '' },
  summary: (r: { asn: string }) => r.asn,
  run: async (o: Observable, ctx) =>
    ctx.http.json(`${String(ctx.settings.base_url)}/ip/${o.value}`, v.object({ ip: v.string(), asn: v.string() })),
});

/** Depends on ip_intel's answer (like bad_asn). */
const asnCheck = defineEngine({
  id: 'asn_check',
  service: 'asncheck',
  label: 'ASN check',
  description: 'test engine using ip_intel',
  tags: ['IP', 'risk'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  dependsOn: ['ip_intel'],
  defaults: { timeout_ms: 2000 },
  summary: () => '',
  run: async (o, ctx) => {
    const intel = ctx.dependencies.ip_intel as { asn: string } | undefined;
    return { ip: o.value, asn: intel?.asn ?? null, listed: intel?.asn === 'AS666' };
  },
});

/** Works on anything textual, for errors, timeouts and caching. */
const lookup = defineEngine({
  id: 'lookup',
  service: 'lookupsvc',
  label: 'Lookup',
  description: 'test engine: GET /lookup?q=',
  tags: ['domain', 'hash'],
  types: ['FQDN', 'URL', 'MD5', 'SHA256', 'IPv4'],
  defaults: { timeout_ms: 1500, base_url: '' },
  summary: () => '',
  run: async (o, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/lookup`, v.object({ hits: v.number() }), { query: { q: o.value } }),
});

const keyed = defineEngine({
  id: 'keyed',
  service: 'keyedsvc',
  label: 'Keyed',
  description: 'test engine needing a key',
  tags: ['IP'],
  types: ['IPv4'],
  credentials: [{ setting: 'api_key', label: 'API key' }],
  defaults: { timeout_ms: 1500, base_url: '' },
  summary: () => '',
  run: async (o, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/keyed/${o.value}`, v.object({ ok: v.boolean() }), {
    query: { key: String(ctx.settings.api_key) },
  }),
});

/** Ignores its abort signal: the runner's deadline must still end it. */
const stubborn = defineEngine({
  id: 'stubborn',
  service: 'stubbornsvc',
  label: 'Stubborn',
  description: 'never finishes on its own',
  tags: ['hash'],
  types: ['MD5'],
  defaults: { timeout_ms: 200 },
  summary: () => '',
  run: () => new Promise(() => {}),
});

const all: EngineDefinition[] = [reverseDns as EngineDefinition, ipIntel, asnCheck, lookup, keyed, stubborn];
const catalog = new Catalog(all);

function runner(overrides: Partial<RunnerOptions> = {}): EngineRunner {
  const storage = new Keyv();
  return new EngineRunner({
    catalog: all,
    services: { transport, dnsServers: [dns.address], dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(storage, id) },
    cache: new Keyv(),
    cacheTtlSeconds: 3600,
    concurrency: 16,
    engineSettings: {
      ip_intel: { base_url: http.url },
      lookup: { base_url: http.url, retries: 0 },
      keyed: { base_url: http.url },
    },
    ...overrides,
  });
}

const obs = (value: string, type: Observable['type']): Observable => ({ value, type });

before(async () => {
  http = await startFakeHttp({
    'GET /ip/*': (req) => ({ json: { ip: req.path.slice(4), asn: req.path.endsWith('.66') ? 'AS666' : 'AS15169' } }),
    'GET /lookup': (req) => ({ json: { hits: req.query.get('q')!.length } }),
  });
  dns = await startFakeDns({
    'example.com': { A: ['93.184.215.14', '93.184.215.15'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
    'evil.example': { A: ['45.155.205.66'] },
    'bad.com': { A: ['185.220.101.66'] },
    'internal.example.com': { A: ['10.1.2.3'] },
    '14.215.184.93.in-addr.arpa': { PTR: ['edge.example.com'] },
  });
});
after(async () => {
  await http.close();
  await dns.close();
  await transport.close();
});
beforeEach(() => http.reset());

describe('runner: result shape', () => {
  test('one element per observable in input order, keys named as the caller named the engines', async () => {
    const r = runner();
    const results = await r.analyze(
      [obs('example.com', 'FQDN'), obs('44d88612fea8a8f36de82e1278abb02f', 'MD5')],
      catalog.select(['lookupsvc', 'reverse_dns']),
    );
    assert.equal(results.length, 2);
    assert.deepEqual(Object.keys(results[0]!), ['observable', 'type', 'reversed_success', 'lookupsvc', 'reverse_dns']);
    assert.deepEqual(results[0]!.lookupsvc, { hits: 11 });
    assert.deepEqual(results[0]!.reverse_dns, { reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    assert.equal(results[0]!.reversed_success, true);
    // An engine that does not apply to the type gives null, not an absent key.
    assert.equal(results[1]!.reverse_dns, null);
    assert.equal(results[1]!.reversed_success, false);
    assert.equal(results[1]!.errors, undefined);
  });
});

describe('runner: the pivot to the resolved IP', () => {
  test('IP-only engines run on the first IPv4 the domain resolved to, and the result says which', async () => {
    const [result] = await runner().analyze([obs('example.com', 'FQDN')], catalog.select(['reverse_dns', 'ip_intel']));
    assert.equal(result!.reversed_success, true);
    assert.equal(result!.reversed_ip, '93.184.215.14');
    assert.deepEqual(result!.ip_intel, { ip: '93.184.215.14', asn: 'AS15169' });
    assert.equal(http.hits('GET /ip/').length, 1);
  });

  test('without reverse_dns selected the domain is still resolved, and reverse_dns is not reported', async () => {
    const [result] = await runner().analyze([obs('https://example.com/login?x=1', 'URL')], catalog.select(['ip_intel']));
    assert.deepEqual(Object.keys(result!), ['observable', 'type', 'reversed_success', 'reversed_ip', 'ip_intel']);
    assert.equal(result!.reversed_success, true);
    assert.deepEqual(result!.ip_intel, { ip: '93.184.215.14', asn: 'AS15169' });
  });

  test('a URL whose host is an IP runs IP engines on that IP (the reference turned it into a PTR name)', async () => {
    const [result] = await runner().analyze([obs('http://93.184.215.14:8080/a', 'URL')], catalog.select(['reverse_dns', 'ip_intel']));
    assert.deepEqual(result!.reverse_dns, { reverse_dns: ['edge.example.com'] });
    assert.deepEqual(result!.ip_intel, { ip: '93.184.215.14', asn: 'AS15169' });
    assert.equal(result!.reversed_ip, '93.184.215.14');
  });

  test('an IP observable is looked up directly; no reversed_ip', async () => {
    const [result] = await runner().analyze([obs('93.184.215.14', 'IPv4')], catalog.select(['reverse_dns', 'ip_intel']));
    assert.equal(result!.reversed_success, true, 'a PTR answer counts as resolved');
    assert.equal(result!.reversed_ip, undefined);
    assert.deepEqual(result!.ip_intel, { ip: '93.184.215.14', asn: 'AS15169' });
  });

  test('no pivot when the domain does not resolve or resolves to a private address', async () => {
    const r = runner();
    const [missing, internal] = await r.analyze(
      [obs('nxdomain.example.com', 'FQDN'), obs('internal.example.com', 'FQDN')],
      catalog.select(['reverse_dns', 'ip_intel']),
    );
    assert.equal(missing!.reversed_success, false);
    assert.equal(missing!.reverse_dns, null);
    assert.equal(missing!.ip_intel, null);
    assert.equal(internal!.reversed_success, true);
    assert.equal(internal!.ip_intel, null, 'private addresses are not sent to IP intelligence engines');
    assert.equal(http.hits('GET /ip/').length, 0);
  });
});

describe('runner: dependencies', () => {
  test('a dependent engine runs after the one it needs and gets its result', async () => {
    const [result] = await runner().analyze([obs('evil.example', 'FQDN')], catalog.select(['asn_check', 'ip_intel']));
    assert.deepEqual(result!.asn_check, { ip: '45.155.205.66', asn: 'AS666', listed: true });
    assert.equal(http.hits('GET /ip/').length, 1, 'the provider ran once for both');
  });

  test('when its provider is not selected, the runner runs it unreported', async () => {
    const [result] = await runner().analyze([obs('185.220.101.66', 'IPv4')], catalog.select(['asn_check']));
    assert.deepEqual(Object.keys(result!), ['observable', 'type', 'reversed_success', 'asn_check']);
    assert.deepEqual(result!.asn_check, { ip: '185.220.101.66', asn: 'AS666', listed: true });
  });
});

/** `127.0.0.1:<port>` of a UDP port nobody listens on (a dead DNS server). */
async function deadUdpAddress(): Promise<string> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

describe('runner: a null that comes from a failure is an error, never a cached "no data"', () => {
  test('the resolution failed: engines waiting for the resolved IP report it; nothing is called or cached', async () => {
    const store = new Map<string, unknown>();
    const storage = new Keyv();
    const r = runner({
      cache: new Keyv({ store }),
      services: { transport, dnsServers: [await deadUdpAddress()], dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(storage, id) },
      engineSettings: { ip_intel: { base_url: http.url }, reverse_dns: { timeout_ms: 1000, retries: 0 } },
    });
    const [selected] = await r.analyze([obs('example.com', 'FQDN')], catalog.select(['reverse_dns', 'ip_intel', 'asn_check']));
    const [unselected] = await r.analyze([obs('https://evil.example/x', 'URL')], catalog.select(['ip_intel']));
    assert.equal(selected!.reverse_dns, null);
    assert.match(selected!.errors!.reverse_dns!, /DNS/);
    for (const key of ['ip_intel', 'asn_check']) {
      assert.equal(selected![key], null);
      assert.equal(selected!.errors![key], `reverse_dns failed: ${selected!.errors!.reverse_dns}`, key);
    }
    assert.equal(selected!.reversed_success, false);
    // reverse_dns not selected: it is still named as the cause.
    assert.equal(unselected!.ip_intel, null);
    assert.match(unselected!.errors!.ip_intel!, /^reverse_dns failed: DNS/);
    assert.equal(http.hits('GET /ip/').length, 0);
    assert.deepEqual([...store.keys()], [], 'nothing cached');
  });

  test('a dependency failed: its dependent reports it and caches nothing; it answers once the dependency does', async () => {
    http.route('GET /ip/*', reply.status(500));
    const r = runner({ engineSettings: { ip_intel: { base_url: http.url, retries: 0 } } });
    try {
      const [alone] = await r.analyze([obs('185.220.101.66', 'IPv4')], catalog.select(['asn_check']));
      assert.equal(alone!.asn_check, null);
      assert.equal(alone!.errors!.asn_check, 'ip_intel failed: HTTP 500 Internal Server Error');
      const [both] = await r.analyze([obs('185.220.101.66', 'IPv4')], catalog.select(['ip_intel', 'asn_check']));
      assert.equal(both!.errors!.ip_intel, 'HTTP 500 Internal Server Error');
      assert.equal(both!.errors!.asn_check, 'ip_intel failed: HTTP 500 Internal Server Error');
    } finally {
      http.route('GET /ip/*', (req) => ({ json: { ip: req.path.slice(4), asn: req.path.endsWith('.66') ? 'AS666' : 'AS15169' } }));
    }
    const [recovered] = await r.analyze([obs('185.220.101.66', 'IPv4')], catalog.select(['asn_check']));
    assert.deepEqual(recovered!.asn_check, { ip: '185.220.101.66', asn: 'AS666', listed: true }, 'no "no data" was cached');
    assert.equal(recovered!.errors, undefined);
  });
});

describe('runner: failures stay with their engine', () => {
  test('HTTP 500, malformed JSON and a timeout become one-line errors; other engines still answer', async () => {
    http.route('GET /ip/*', reply.status(500));
    http.route('GET /lookup', reply.malformed());
    try {
      const r = runner({ engineSettings: { ip_intel: { base_url: http.url, retries: 0 }, lookup: { base_url: http.url, retries: 0 } } });
      const [ip, hash] = await r.analyze(
        [obs('8.8.8.8', 'IPv4'), obs('44d88612fea8a8f36de82e1278abb02f', 'MD5')],
        catalog.select(['ip_intel', 'lookup', 'stubborn']),
      );
      assert.equal(ip!.ip_intel, null);
      assert.match(ip!.errors!.ip_intel!, /^HTTP 500/);
      assert.match(hash!.errors!.lookup!, /malformed JSON/);
      assert.equal(hash!.errors!.stubborn, 'timeout after 200 ms (limit: engines.stubborn.timeout_ms or engine_timeout_ms)');
      for (const message of [...Object.values(ip!.errors!), ...Object.values(hash!.errors!)]) {
        assert.doesNotMatch(message, /\n|\bat .*\.js:\d+/, 'one line, no stack');
      }
    } finally {
      http.route('GET /ip/*', (req) => ({ json: { ip: req.path.slice(4), asn: 'AS15169' } }));
      http.route('GET /lookup', (req) => ({ json: { hits: req.query.get('q')!.length } }));
    }
  });

  test('429 with Retry-After is waited out and retried', async () => {
    http.route('GET /lookup', sequence(reply.tooMany(1), reply.json({ hits: 3 })));
    try {
      const waits: string[] = [];
      const r = runner({ engineSettings: { lookup: { base_url: http.url, timeout_ms: 5000 } } });
      const [result] = await r.analyze([obs('abc.com', 'FQDN')], catalog.select(['lookup']), {
        onProgress: (p) => p.waiting && waits.push(p.waiting),
      });
      assert.deepEqual(result!.lookup, { hits: 3 });
      assert.equal(http.hits('GET /lookup').length, 2);
      assert.match(waits[0]!, /lookup: HTTP 429.*retrying in 1 s/);
    } finally {
      http.route('GET /lookup', (req) => ({ json: { hits: req.query.get('q')!.length } }));
    }
  });

  test('a missing API key is reported without calling out', async () => {
    const [result] = await runner().analyze([obs('8.8.8.8', 'IPv4')], catalog.select(['keyed']));
    assert.equal(result!.errors!.keyed, 'not configured: engines.keyed.api_key or OAS_KEYEDSVC_API_KEY');
    assert.equal(http.hits('/keyed').length, 0);
  });

  test('a key sent in the query string never shows in an error', async () => {
    http.route('GET /keyed/*', reply.status(401, { error: 'bad key' }));
    const secret = 'SUPERSECRET-KEY-123456';
    const r = runner({ engineSettings: { keyed: { base_url: 'http://127.0.0.1:1', api_key: secret, retries: 0 } } });
    const [result] = await r.analyze([obs('8.8.8.8', 'IPv4')], catalog.select(['keyed']));
    assert.match(result!.errors!.keyed!, /^connection refused by 127\.0\.0\.1:1 /);
    assert.doesNotMatch(JSON.stringify(result), /SUPERSECRET/);
  });
});

describe('runner: cache', () => {
  test('a second analysis within the lifetime makes no upstream call; ignore_cache makes one', async () => {
    const r = runner();
    const selection = catalog.select(['lookup']);
    const first = await r.analyze([obs('cached.com', 'FQDN')], selection);
    const second = await r.analyze([obs('CACHED.com', 'FQDN')], selection);
    assert.deepEqual(second, [{ ...first[0], observable: 'CACHED.com' }]);
    assert.equal(http.hits('GET /lookup').length, 1);
    await r.analyze([obs('cached.com', 'FQDN')], selection, { ignoreCache: true });
    assert.equal(http.hits('GET /lookup').length, 2);
  });

  test('entries expire after api_cache_timeout', async () => {
    const r = runner({ cacheTtlSeconds: 1 });
    const selection = catalog.select(['lookup']);
    await r.analyze([obs('expiring.com', 'FQDN')], selection);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await r.analyze([obs('expiring.com', 'FQDN')], selection);
    assert.equal(http.hits('GET /lookup').length, 2);
  });

  test('failures are not cached', async () => {
    http.route('GET /lookup', sequence(reply.status(500), reply.json({ hits: 1 })));
    try {
      const r = runner();
      const selection = catalog.select(['lookup']);
      const [failed] = await r.analyze([obs('flaky.com', 'FQDN')], selection);
      assert.ok(failed!.errors?.lookup);
      const [ok] = await r.analyze([obs('flaky.com', 'FQDN')], selection);
      assert.deepEqual(ok!.lookup, { hits: 1 });
    } finally {
      http.route('GET /lookup', (req) => ({ json: { hits: req.query.get('q')!.length } }));
    }
  });

  test('identical calls in flight are made once', async () => {
    const r = runner();
    await Promise.all([1, 2, 3].map(() => r.analyze([obs('same.com', 'FQDN')], catalog.select(['lookup']))));
    assert.equal(http.hits('GET /lookup').length, 1);
  });
});

describe('runner: limits', () => {
  test('per-engine concurrency bounds the calls in flight', async () => {
    let active = 0;
    let peak = 0;
    http.route('GET /lookup', async (req) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 30));
      active--;
      return { json: { hits: req.query.get('q')!.length } };
    });
    try {
      const r = runner({ engineSettings: { lookup: { base_url: http.url, concurrency: 3 } } });
      const observables = Array.from({ length: 12 }, (_, i) => obs(`host${i}.com`, 'FQDN'));
      const progress: number[] = [];
      const results = await r.analyze(observables, catalog.select(['lookup']), { onProgress: (p) => progress.push(p.done) });
      assert.equal(results.length, 12);
      assert.equal(peak, 3);
      assert.equal(progress.at(-1), 12);
    } finally {
      http.route('GET /lookup', (req) => ({ json: { hits: req.query.get('q')!.length } }));
    }
  });
});
