import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { dfirIrisDetails, dfirIrisLookup, searchPattern, type DfirIrisResult } from '../../engines/dfir_iris.js';
import { defineEngine } from '../../src/engine/contract.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { IOCS, MD5, SHA1, SHA256, fakeRoutes, fakeSettings, irisError, searchHandler } from '../fakes/dfir_iris.js';
import { proxiedHarness, startFakeProxy, type FakeProxy } from '../fakes/proxy.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import type { ObservableType } from '../../src/observables/types.js';

const KEY = 'IRIS-SECRET-KEY-8f3a2c9d1e';

const watch = new KeyWatch(KEY);

function typeOf(value: string): ObservableType {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(value)) return 'IPv4';
  if (value.includes(':') && !value.includes('/')) return 'IPv6';
  if (/^https?:\/\//.test(value)) return 'URL';
  if (/^[0-9a-f]{32}$/i.test(value)) return 'MD5';
  if (/^[0-9a-f]{40}$/i.test(value)) return 'SHA1';
  if (/^[0-9a-f]{64}$/i.test(value)) return 'SHA256';
  return 'FQDN';
}

describe('provider_06 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_06');
    assert.equal(engine.service, 'dfir_iris');
    assert.equal(engine.label, 'DFIR-IRIS');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.acceptsPrivateIp, true);
    assert.equal(engine.reversedIp, false);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Server URL', env: ['DFIR_IRIS_URL'], secret: false },
      { setting: 'api_key', label: 'API key', env: ['DFIR_IRIS_API_KEY'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000 });
    assert.equal(engine.run, dfirIrisLookup);
    assert.equal(engine.details, dfirIrisDetails);
  });

  test('search patterns (engines.md 5.7): suffix wildcard for IPs and hashes, prefix wildcard for domains and URLs', () => {
    assert.equal(searchPattern({ value: '185.220.101.4', type: 'IPv4' }), '%185.220.101.4');
    assert.equal(searchPattern({ value: '10.0.0.5', type: 'IPv4' }), '%10.0.0.5');
    assert.equal(searchPattern({ value: 'fe80::1', type: 'IPv6' }), '%fe80::1');
    assert.equal(searchPattern({ value: MD5, type: 'MD5' }), `%${MD5}`);
    assert.equal(searchPattern({ value: SHA1, type: 'SHA1' }), `%${SHA1}`);
    assert.equal(searchPattern({ value: SHA256, type: 'SHA256' }), `%${SHA256}`);
    assert.equal(searchPattern({ value: 'evil.example.com', type: 'FQDN' }), 'evil.example.com%');
    assert.equal(searchPattern({ value: 'https://evil.example.com/a', type: 'URL' }), 'https://evil.example.com/a%');
  });

  test('summary and details', () => {
    const result: DfirIrisResult = { reports: 2, links: ['https://iris.local/case/ioc?cid=3', 'https://iris.local/case/ioc?cid=12'] };
    assert.equal(engine.summary(result), 'in 2 cases: #3, #12');
    assert.equal(engine.summary({ reports: 1, links: ['https://iris.local/case/ioc?cid=7'] }), 'in 1 case: #7');
    assert.deepEqual(dfirIrisDetails(result), [
      { label: 'Cases', value: '2' },
      { label: 'Case #3', value: 'https://iris.local/case/ioc?cid=3', href: 'https://iris.local/case/ioc?cid=3' },
      { label: 'Case #12', value: 'https://iris.local/case/ioc?cid=12', href: 'https://iris.local/case/ioc?cid=12' },
    ]);
  });
});

describe('provider_06 against a loopback DFIR-IRIS', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);
  const link = (prefix: string, cid: number) => `${fake.url}/${prefix}/case/ioc?cid=${cid}`;

  async function run(prefix: string, value: string, settings: Record<string, unknown> = {}): Promise<DfirIrisResult | null> {
    return watch.result((await harness(prefix, settings).run(value, typeOf(value))) as DfirIrisResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'POST /ok/search': searchHandler({ key: KEY }),
      'POST /status500/search': reply.status(500, irisError('Internal server error')),
      'POST /flaky/search': sequence(reply.tooMany(0), searchHandler({ key: KEY })),
      'POST /toomany/search': reply.tooMany(0),
      'POST /malformed/search': reply.malformed(),
      'POST /wrong-shape/search': reply.json({ status: 'success', message: 'Results fetched', data: 'evil.example.com' }),
      'POST /status-error/search': (req) => reply.json(irisError(`Invalid token ${String(req.headers.authorization).slice(7)}`)),
      'POST /forbidden/search': (req) => reply.json(irisError(`Permission denied for ${String(req.headers.authorization)}`), 403),
      'POST /hang/search': reply.hang(),
      'POST /no-data/search': reply.json({ status: 'success', message: 'Results fetched' }),
      'POST /null-data/search': reply.json({ status: 'success', message: 'Results fetched', data: null }),
      'POST /orphans/search': reply.json({ status: 'success', message: 'Results fetched', data: [{ ioc_name: 'x', case_id: null }, { ioc_name: 'y' }, 'junk'] }),
      'POST /string-ids/search': reply.json({
        status: 'success', message: 'Results fetched',
        data: [{ ioc_name: 'a', case_id: '12' }, { ioc_name: 'b', case_id: 3 }, { ioc_name: 'c', case_id: '3' }, { ioc_name: 'd', case_id: 101 }, { ioc_name: 'e', case_id: 'n/a' }],
      }),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('the request: POST <base_url>/search?cid=1, the exact JSON body, Bearer key, JSON content type', async () => {
    fake.reset();
    await run('ok', 'evil.example.com');
    const [req, ...more] = fake.requests;
    assert.equal(more.length, 0);
    assert.equal(req!.method, 'POST');
    assert.equal(req!.path, '/ok/search');
    assert.deepEqual([...req!.query], [['cid', '1']]);
    assert.equal(req!.body, '{"search_value":"evil.example.com%","search_type":"ioc"}');
    assert.equal(req!.headers.authorization, `Bearer ${KEY}`);
    assert.match(String(req!.headers['content-type']), /^application\/json/);
  });

  test('found, domain: one link per case, sorted by case id as a number (cid=3 before cid=12)', async () => {
    const result = await run('ok', 'evil.example.com');
    assert.deepEqual(result, { reports: 2, links: [link('ok', 3), link('ok', 12)] });
    assert.equal(engine.summary(result!), 'in 2 cases: #3, #12');
  });

  test('found, URL: prefix match (the same URL with a query string counts)', async () => {
    fake.reset();
    const result = await run('ok', 'https://evil.example.com/login.php');
    assert.deepEqual(result, { reports: 2, links: [link('ok', 12), link('ok', 40)] });
    assert.equal(JSON.parse(fake.requests[0]!.body).search_value, 'https://evil.example.com/login.php%');
  });

  test('found, IPv4 and IPv6: suffix match', async () => {
    fake.reset();
    assert.deepEqual(await run('ok', '185.220.101.4'), { reports: 2, links: [link('ok', 7), link('ok', 21)] });
    assert.deepEqual(await run('ok', '2a01:4f8:c17:b8f::2'), { reports: 1, links: [link('ok', 5)] });
    assert.deepEqual(fake.requests.map((r) => JSON.parse(r.body).search_value), ['%185.220.101.4', '%2a01:4f8:c17:b8f::2']);
  });

  test('found, MD5 / SHA1 / SHA256; an IOC without case_id is skipped, not fatal', async () => {
    fake.reset();
    assert.deepEqual(await run('ok', MD5), { reports: 1, links: [link('ok', 4)] });
    assert.deepEqual(await run('ok', SHA1), { reports: 1, links: [link('ok', 30)] });
    // The fake holds three SHA256 IOCs: cases 30, 4 and one without case_id.
    assert.equal(IOCS.filter((i) => i.ioc_name === SHA256).length, 3);
    assert.deepEqual(await run('ok', SHA256), { reports: 2, links: [link('ok', 4), link('ok', 30)] });
    assert.deepEqual(fake.requests.map((r) => JSON.parse(r.body).search_value), [`%${MD5}`, `%${SHA1}`, `%${SHA256}`]);
  });

  test('not found, every type: "data": [] is null', async () => {
    const misses = ['198.51.100.7', '2001:4860:4860::8888', 'good.example.org', 'https://good.example.org/', 'd41d8cd98f00b204e9800998ecf8427e',
      'da39a3ee5e6b4b0d3255bfef95601890afd80709', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'];
    assert.deepEqual(misses.map(typeOf), ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    fake.reset();
    for (const value of misses) assert.equal(await run('ok', value), null, value);
    assert.equal(fake.requests.length, misses.length);
  });

  test('a private IP is searched with the suffix wildcard too (engines.md 8 item 10)', async () => {
    fake.reset();
    const result = await run('ok', '10.0.0.5');
    assert.equal(JSON.parse(fake.requests[0]!.body).search_value, '%10.0.0.5');
    // "dst:10.0.0.5" (case 2) is only found thanks to the wildcard.
    assert.deepEqual(result, { reports: 2, links: [link('ok', 2), link('ok', 12)] });
  });

  test('case ids sent as strings, duplicated or not numeric: numeric order, one link each, the odd one skipped (engines.md 8 item 21)', async () => {
    const result = await run('string-ids', '185.220.101.4');
    assert.deepEqual(result?.links, [link('string-ids', 3), link('string-ids', 12), link('string-ids', 101)]);
    assert.equal(result?.reports, 3);
    // The reference's string sort would have given 101, 12, 3.
    assert.notDeepEqual(result?.links, [...result!.links].sort());
  });

  test('only items without a case id: nothing to link to, null', async () => {
    assert.equal(await run('orphans', SHA256), null);
  });

  test('"data" missing or null: not found, null', async () => {
    assert.equal(await run('no-data', 'evil.example.com'), null);
    assert.equal(await run('null-data', 'evil.example.com'), null);
  });

  test('a trailing slash on base_url never gives //search nor //case', async () => {
    fake.reset();
    const result = await run('x', 'evil.example.com', { base_url: `${fake.url}/ok//` });
    assert.deepEqual(fake.requests.map((r) => r.path), ['/ok/search']);
    assert.deepEqual(result?.links, [link('ok', 3), link('ok', 12)]);
  });

  test('wrong key (401): a one-line authentication error naming DFIR-IRIS', async () => {
    await watch.rejectsWith(harness('ok', { api_key: 'WRONG-KEY-000000', retries: 0 }).run('evil.example.com', 'FQDN'),
      /^DFIR-IRIS: authentication failed \(HTTP 401 Unauthorized: Authentication required\)$/);
  });

  test('403 echoing the key: the same authentication error, key masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run('evil.example.com', 'FQDN'),
      /^DFIR-IRIS: authentication failed \(HTTP 403 Forbidden: Permission denied for Bearer \*\*\*\)$/);
  });

  test('"status": "error" with HTTP 200: an error with IRIS\'s message, key masked', async () => {
    await watch.rejectsWith(harness('status-error', { retries: 0 }).run('evil.example.com', 'FQDN'), /^DFIR-IRIS: Invalid token \*\*\*$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('evil.example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 then 200: retried, found', async () => {
    fake.reset();
    assert.deepEqual(await run('flaky', 'evil.example.com', { retries: 2 }), { reports: 2, links: [link('flaky', 3), link('flaky', 12)] });
    assert.equal(fake.requests.length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    fake.reset();
    await watch.rejectsWith(harness('toomany', { retries: 1 }).run('evil.example.com', 'FQDN'), /^HTTP 429 Too Many Requests\b/);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON / a field of the wrong type: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('evil.example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('evil.example.com', 'FQDN'), /^unexpected answer from upstream at data: /);
  });

  test('a hanging server: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('evil.example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a server that is down: a network error without the key', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('evil.example.com', 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('called directly without base_url or key, or with a base_url that is no http(s) URL: an error, nothing sent', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('evil.example.com', 'FQDN'), /^not configured: api_key$/);
    const bare = engineHarness(engine, { settings: { api_key: KEY } });
    try {
      await watch.rejectsWith(bare.run('evil.example.com', 'FQDN'), /^not configured: base_url$/);
    } finally {
      await bare.close();
    }
    await watch.rejectsWith(harness('x', { base_url: 'ftp://iris.local' }).run('evil.example.com', 'FQDN'), /^DFIR-IRIS: base_url must be an http\(s\) URL$/);
    await watch.rejectsWith(harness('x', { base_url: 'iris.local' }).run('evil.example.com', 'FQDN'), /^DFIR-IRIS: base_url is not a URL$/);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_06: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);
  const run = async (prefix: string) => watch.result((await harness(prefix).run('evil.example.com', 'FQDN')) as DfirIrisResult | null);
  const answers: Record<string, unknown> = {
    // Only the IOCs, each with only its case.
    minimal: { data: [{ case_id: 3 }] },
    // One IOC where a list belongs.
    single: { status: 'success', data: { ioc_name: 'evil.example.com', case_id: '12' } },
    // Null items among the IOCs; status and message null.
    'null-items': { status: null, message: null, data: [null, { case_id: 3 }, null] },
    'empty-object': { status: 'success', data: {} },
    'empty-string': { status: '', data: '' },
    nothing: {},
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`POST /${name}/search`, reply.json(body)])));
  });
  after(async () => {
    await fake.close();
  });

  test('the minimal answer: data alone, its IOC with its case id alone', async () => {
    assert.deepEqual(await run('minimal'), { reports: 1, links: [`${fake.url}/minimal/case/ioc?cid=3`] });
  });

  test('one IOC in place of a list, and null IOCs among them, are read', async () => {
    assert.deepEqual(await run('single'), { reports: 1, links: [`${fake.url}/single/case/ioc?cid=12`] });
    assert.deepEqual(await run('null-items'), { reports: 1, links: [`${fake.url}/null-items/case/ioc?cid=3`] });
  });

  test('data as {} or "", or an empty object: not found, null', async () => {
    for (const prefix of ['empty-object', 'empty-string', 'nothing']) assert.equal(await run(prefix), null, prefix);
  });

  test('an answer that is not an object: a clean error', async () => {
    fake.route('POST /list/search', reply.json([{ case_id: 3 }]));
    await watch.rejectsWith(harness('list', { retries: 0 }).run('evil.example.com', 'FQDN'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
  });
});

describe('provider_06 through a forward proxy (proxy_url, engines.md 8 item 20)', () => {
  let fake: FakeHttpServer;
  let proxy: FakeProxy;
  const harnesses: EngineHarness[] = [];

  before(async () => {
    fake = await startFakeHttp(fakeRoutes({ key: KEY }));
    proxy = await startFakeProxy();
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await Promise.all([fake.close(), proxy.close()]);
  });

  test('the request goes through the proxy, unchanged', async () => {
    const h = proxiedHarness(engine, proxy.url, { ...fakeSettings(fake.url), api_key: KEY, retries: 0 });
    harnesses.push(h);
    const result = watch.result(await h.run('evil.example.com', 'FQDN'));
    assert.deepEqual(result, { reports: 2, links: [`${fake.url}/dfir_iris/case/ioc?cid=3`, `${fake.url}/dfir_iris/case/ioc?cid=12`] });
    assert.equal(proxy.requests.length, 1);
    const carried = proxy.requests[0]!;
    assert.equal(carried.method, 'POST');
    assert.equal(carried.url, `${fake.url}/dfir_iris/search?cid=1`);
    assert.equal(carried.body, '{"search_value":"evil.example.com%","search_type":"ioc"}');
    assert.equal(carried.headers.authorization, `Bearer ${KEY}`);
    assert.deepEqual(proxy.connects, [new URL(fake.url).host]);
    assert.equal(fake.requests.length, 1);
  });

  test('a proxy that is down: the call fails instead of going direct', async () => {
    fake.reset();
    const h = proxiedHarness(engine, 'http://127.0.0.1:1', { ...fakeSettings(fake.url), api_key: KEY, retries: 0 });
    harnesses.push(h);
    await watch.rejectsWith(h.run('evil.example.com', 'FQDN'), /^connection refused by the proxy 127\.0\.0\.1:1 \(check proxy_url\)$/);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_06 fake for whole-system tests', () => {
  test('fakeRoutes/fakeSettings answer every type, and check the key', async () => {
    const fake = await startFakeHttp(fakeRoutes({ key: KEY }));
    const h = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY, retries: 0 } });
    const wrong = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: 'WRONG-KEY-000000', retries: 0 } });
    try {
      for (const value of ['185.220.101.4', '2a01:4f8:c17:b8f::2', 'evil.example.com', 'https://evil.example.com/login.php', MD5, SHA1, SHA256]) {
        const result = watch.result((await h.run(value, typeOf(value))) as DfirIrisResult | null);
        assert.ok(result && result.reports > 0, value);
      }
      await watch.rejectsWith(wrong.run('evil.example.com', 'FQDN'), /^DFIR-IRIS: authentication failed/);
    } finally {
      await Promise.all([h.close(), wrong.close()]);
      await fake.close();
    }
  });
});

describe('provider_06 through the runner', () => {
  let fake: FakeHttpServer;
  const runners: RunnerHarness[] = [];
  /** Another engine in the same analysis, to show a DFIR-IRIS failure does not touch it. */
  const other = defineEngine<{ ok: boolean }>({
    id: 'other_engine', service: 'other', label: 'Other', description: 'test engine', tags: ['IP'], types: ['IPv4', 'FQDN'],
    acceptsPrivateIp: true, defaults: { timeout_ms: 1000 }, summary: () => 'ok', run: async () => ({ ok: true }),
  });

  function runner(settings: Record<string, unknown>): RunnerHarness {
    const r = runnerHarness([engine, other], { settings: { provider_06: { retries: 0, ...settings } } });
    runners.push(r);
    return r;
  }

  before(async () => {
    fake = await startFakeHttp({ ...fakeRoutes({ key: KEY }), 'POST /broken/search': reply.status(500, irisError('Internal server error')) });
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await fake.close();
  });

  test('the result under the name the caller used (the alias), no error', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: KEY }).analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['dfir_iris']);
    watch.result(result);
    assert.deepEqual(result!.dfir_iris, { reports: 2, links: [`${fake.url}/dfir_iris/case/ioc?cid=3`, `${fake.url}/dfir_iris/case/ioc?cid=12`] });
    assert.equal(result!.provider_06, undefined);
    assert.equal(result!.errors, undefined);
  });

  test('a private IP is queried (with the wildcard), not skipped', async () => {
    fake.reset();
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: KEY }).analyze([{ value: '10.0.0.5', type: 'IPv4' }], ['provider_06']);
    watch.result(result);
    assert.equal((result!.provider_06 as DfirIrisResult).reports, 2);
    assert.equal(JSON.parse(fake.requests[0]!.body).search_value, '%10.0.0.5');
  });

  test('not found: null, no error', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: KEY }).analyze([{ value: 'good.example.org', type: 'FQDN' }], ['dfir_iris']);
    assert.equal(result!.dfir_iris, null);
    assert.equal(result!.errors, undefined);
  });

  test('no base_url: "not configured: engines.provider_06.base_url", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ api_key: KEY }).analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['dfir_iris']);
    watch.result(result);
    assert.equal(result!.dfir_iris, null);
    assert.deepEqual(result!.errors, { dfir_iris: 'not configured: engines.provider_06.base_url or OAS_DFIR_IRIS_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('no api_key: "not configured: engines.provider_06.api_key", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ ...fakeSettings(fake.url) }).analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['provider_06']);
    assert.equal(result!.provider_06, null);
    assert.deepEqual(result!.errors, { provider_06: 'not configured: engines.provider_06.api_key or OAS_DFIR_IRIS_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('a failing server: null plus an errors entry; the other engine unaffected', async () => {
    const [result] = await runner({ base_url: `${fake.url}/broken`, api_key: KEY }).analyze([{ value: '185.220.101.4', type: 'IPv4' }], ['dfir_iris', 'other']);
    watch.result(result);
    assert.equal(result!.dfir_iris, null);
    assert.deepEqual(result!.other, { ok: true });
    assert.deepEqual(result!.errors, { dfir_iris: 'HTTP 500 Internal Server Error' });
  });

  test('wrong key: the authentication error in errors, key masked', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: `${KEY}-old` }).analyze([{ value: '185.220.101.4', type: 'IPv4' }], ['dfir_iris']);
    watch.result(result);
    assert.deepEqual(result!.errors, { dfir_iris: 'DFIR-IRIS: authentication failed (HTTP 401 Unauthorized: Authentication required) (key refused: check engines.provider_06.api_key or OAS_DFIR_IRIS_API_KEY)' });
  });
});

describe('provider_06 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(30);
  });
});
