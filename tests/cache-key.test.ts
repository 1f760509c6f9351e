/**
 * The cache key covers every setting that changes an engine's answer (its own URL and server
 * settings, self-hosted servers and tenant ids, the top-level dns_servers, the catalog variant)
 * and nothing else: not the settings that only change how a call is made (timeouts, retries,
 * limits), and never a secret. Two configurations that differ in such a setting never share a
 * cached answer; the same configuration does.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Keyv from 'keyv';
import * as v from 'valibot';
import reverseDns from '../engines/reverse_dns.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import { resolveSettings } from '../src/engine/context.js';
import { HttpTransport } from '../src/http/client.js';
import type { Observable } from '../src/observables/types.js';
import { cacheKey, settingsFingerprint, SETTINGS_OUTSIDE_CACHE_KEY } from '../src/runner/call.js';
import { EngineRunner } from '../src/runner/runner.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { startFakeDns, type FakeDnsServer } from './fakes/dns.js';
import { dohHandler } from './fakes/doh.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { runOas } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { ZONE } from './helpers/upstreams.js';

/** Answers with the server it asked, so two base_urls give two different answers. */
const lookup = defineEngine({
  id: 'lookup',
  service: 'lookupsvc',
  label: 'Lookup',
  description: 'test engine: GET {base_url}/lookup?q=',
  tags: ['domain'],
  types: ['FQDN'],
  credentials: [{ setting: 'api_key', label: 'API key', required: false }],
  defaults: { timeout_ms: 2000, base_url: '' },
  summary: () => '',
  run: async (o: Observable, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/lookup`, v.object({ server: v.string() }), { query: { q: o.value } }),
});

/** The same lookup in both catalogs; the older one declares overrides, as variant engines do. */
const variant = defineEngine({
  ...lookup,
  id: 'variant',
  service: 'variantsvc',
  variants: { older: { label: 'Lookup (older catalog)' } },
});

/** A self-hosted engine: its server URL is a non-secret credential, its key a secret one. */
const selfHosted = defineEngine({
  ...lookup,
  id: 'self_hosted',
  service: 'selfhostedsvc',
  credentials: [
    { setting: 'base_url', label: 'Server URL', secret: false },
    { setting: 'tenant_id', label: 'Tenant', secret: false, required: false },
    { setting: 'api_key', label: 'API key' },
    { setting: 'client_secret', label: 'Client secret', required: false },
  ],
});

let one: FakeHttpServer;
let two: FakeHttpServer;
let dnsOne: FakeDnsServer;
let dnsTwo: FakeDnsServer;
const transport = new HttpTransport();

before(async () => {
  one = await startFakeHttp({ 'GET /lookup': { json: { server: 'one' } } });
  two = await startFakeHttp({ 'GET /lookup': { json: { server: 'two' } } });
  dnsOne = await startFakeDns(ZONE);
  dnsTwo = await startFakeDns(ZONE);
});
after(async () => {
  await Promise.all([one.close(), two.close(), dnsOne.close(), dnsTwo.close(), transport.close()]);
});

/** A runner over `cache` (shared between runners, as the SQLite file is between processes). */
function runner(cache: Keyv, engineSettings: Record<string, Record<string, unknown>>, dnsServers: string[] = [], engines: EngineDefinition[] = [lookup]): EngineRunner {
  const storage = new Keyv();
  return new EngineRunner({
    catalog: [reverseDns as EngineDefinition, ...engines],
    services: { transport, dnsServers, dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(storage, id) },
    cache,
    cacheTtlSeconds: 3600,
    concurrency: 8,
    engineSettings,
  });
}

const fp = (engine: EngineDefinition, settings: Record<string, unknown>, dns: string[] = []) =>
  settingsFingerprint(engine, resolveSettings(engine, settings), dns);

describe('cache key: what is in it', () => {
  test('settings that change answers change the key: base_url, engine settings, a server URL, a tenant, dns_servers', () => {
    const base = fp(selfHosted, { base_url: 'https://misp.one.example', api_key: 'k' });
    const different = [
      fp(selfHosted, { base_url: 'https://misp.two.example', api_key: 'k' }),
      fp(selfHosted, { base_url: 'https://misp.one.example', api_key: 'k', tenant_id: 'tenant-b' }),
      fp(selfHosted, { base_url: 'https://misp.one.example', api_key: 'k', zone: 'other.zone.example' }),
      fp(selfHosted, { base_url: 'https://misp.one.example', api_key: 'k', max_results: 3 }),
      fp(selfHosted, { base_url: 'https://misp.one.example', api_key: 'k' }, ['9.9.9.9']),
    ];
    for (const [i, other] of different.entries()) assert.notEqual(other, base, `case ${i}`);
    assert.equal(new Set(different).size, different.length);
    assert.equal(fp(lookup, {}, ['9.9.9.9', '149.112.112.112:53']), fp(lookup, {}, ['9.9.9.9', '149.112.112.112:53']));
    assert.notEqual(fp(lookup, {}, ['9.9.9.9', '149.112.112.112:53']), fp(lookup, {}, ['149.112.112.112:53', '9.9.9.9']), 'the order of resolvers matters');
  });

  test('timeouts, retries, concurrency and quotas do not: those answers are the same answers', () => {
    const base = fp(lookup, { base_url: 'https://a.example' });
    assert.deepEqual([...SETTINGS_OUTSIDE_CACHE_KEY].sort(), ['concurrency', 'quota_max_wait_ms', 'rate_limit', 'rate_window_ms', 'retries', 'timeout_ms']);
    assert.equal(fp(lookup, {
      base_url: 'https://a.example', timeout_ms: 99_000, retries: 7, concurrency: 1, rate_limit: 4, rate_window_ms: 60_000, quota_max_wait_ms: 5,
    }), base);
  });

  test('never a secret, nor anything derived from one: changing a key leaves the key unchanged', () => {
    const secret = 'SECRET-KEY-0123456789abcdef';
    const settings = { base_url: 'https://misp.one.example', api_key: secret, client_secret: 'other-secret-value' };
    const withKey = fp(selfHosted, settings);
    assert.equal(fp(selfHosted, { ...settings, api_key: 'another-key' }), withKey);
    assert.equal(fp(selfHosted, { ...settings, client_secret: 'yet-another' }), withKey);
    const key = cacheKey(selfHosted, { value: 'example.com', type: 'FQDN' }, withKey);
    assert.ok(!key.includes(secret) && !key.includes('other-secret-value'), key);
    // The optional key of a keyless engine is a secret too.
    assert.equal(fp(lookup, { api_key: secret }), fp(lookup, {}));
  });
});

describe('cache key: two configurations never share an answer, one configuration does', () => {
  const example: Observable[] = [{ value: 'example.com', type: 'FQDN' }];

  test('two base_urls: two upstream calls and two answers; the same base_url again: a cache hit', async () => {
    const cache = new Keyv();
    const select = new Catalog([lookup]).select(['lookup']);
    const [first] = await runner(cache, { lookup: { base_url: one.url } }).analyze(example, select);
    const [second] = await runner(cache, { lookup: { base_url: two.url } }).analyze(example, select);
    assert.deepEqual(first!.lookup, { server: 'one' });
    assert.deepEqual(second!.lookup, { server: 'two' }, 'not the answer cached for the other server');
    assert.equal(one.hits('GET /lookup').length, 1);
    assert.equal(two.hits('GET /lookup').length, 1);
    // Same answer-changing settings (only the timeout differs): served from the cache.
    const [again] = await runner(cache, { lookup: { base_url: one.url, timeout_ms: 9000, retries: 0 } }).analyze(example, select);
    assert.deepEqual(again!.lookup, { server: 'one' });
    assert.equal(one.hits('GET /lookup').length, 1, 'a cache hit');
  });

  test('two dns_servers: both are asked; the same servers again: a cache hit', async () => {
    const cache = new Keyv();
    const select = new Catalog([reverseDns as EngineDefinition]).select(['reverse_dns']);
    const asked = (dns: FakeDnsServer) => dns.queries.filter((q) => q.name === 'example.com').length;
    await runner(cache, {}, [dnsOne.address]).analyze(example, select);
    const afterOne = asked(dnsOne);
    assert.ok(afterOne > 0);
    const [second] = await runner(cache, {}, [dnsTwo.address]).analyze(example, select);
    assert.ok(asked(dnsTwo) > 0, 'the second configuration asked its own server');
    assert.deepEqual(second!.reverse_dns, { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    await runner(cache, {}, [dnsOne.address]).analyze(example, select);
    assert.equal(asked(dnsOne), afterOne, 'a cache hit');
  });

  test('the catalog variant that changes an engine: one call per variant', async () => {
    const cache = new Keyv();
    one.reset();
    for (const name of ['main', 'older'] as const) {
      const catalog = new Catalog([variant], name);
      const engine = catalog.find('variant')!;
      await runner(cache, { variant: { base_url: one.url } }, [], [engine]).analyze(example, catalog.select(['variant']));
    }
    assert.equal(one.hits('GET /lookup').length, 2);
  });

  test('oas analyze sharing a data directory: another base_url is asked, the same one is not', async () => {
    const dir = tempDir('oas-cache-key-');
    const dataDir = join(dir, 'data');
    const dohOne = await startFakeHttp({ 'GET /resolve': dohHandler(ZONE) });
    const dohTwo = await startFakeHttp({ 'GET /resolve': dohHandler(ZONE) });
    try {
      const config = (name: string, url: string) => {
        const file = join(dir, `${name}.json`);
        writeFileSync(file, JSON.stringify({ data_dir: dataDir, engines: { public_dns: { base_url: `${url}/resolve` } } }));
        return file;
      };
      const run = async (file: string) => {
        const result = await runOas(dir, ['analyze', 'example.com', '--engines', 'public_dns', '--json', '--config', file]);
        assert.equal(result.code, 0, result.stderr);
      };
      await run(config('one', dohOne.url));
      const firstCalls = dohOne.requests.length;
      assert.ok(firstCalls > 0);
      await run(config('two', dohTwo.url));
      assert.ok(dohTwo.requests.length > 0, 'the other server was asked, not the cache');
      await run(config('one-again', dohOne.url));
      assert.equal(dohOne.requests.length, firstCalls, 'the same settings: a cache hit');
    } finally {
      await Promise.all([dohOne.close(), dohTwo.close()]);
    }
  });
});
