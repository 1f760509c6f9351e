import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { epochSeconds, mispDetails, mispLookup, mispSummary, TYPE_FILTERS, type MispResult } from '../../engines/misp.js';
import opencti from '../../engines/opencti.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { attribute, AUTH_FAILED, fakeRoutes, fakeSettings, KNOWN, restSearch } from '../fakes/misp.js';
import { fakeRoutes as openCtiRoutes, fakeSettings as openCtiSettings } from '../fakes/opencti.js';
import { proxiedSuite } from '../fakes/proxy.js';
import { harnessOnFake } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { answeringUpstream } from '../helpers/answers.js';
import { UNKNOWN } from '../helpers/observables.js';
import { suiteRunners } from '../helpers/runner.js';

const KEY = 'MISPKEY-5eCr3t-0123456789abcdefABCDEF';
const OTHER_KEY = 'OPENCTI-TOKEN-9f8e7d6c5b4a';
const watch = new KeyWatch(KEY);

const IP_FILTER = ['ip-dst', 'ip-src', 'ip-src|port', 'ip-dst|port', 'domain|ip'];
const DOMAIN_FILTER = ['domain', 'domain|ip', 'hostname', 'hostname|port'];

const TYPES: ObservableType[] = ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'];

describe('provider_15 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_15');
    assert.equal(engine.service, 'misp');
    assert.equal(engine.label, 'MISP');
    assert.deepEqual(engine.tags, ['IP', 'domain', 'URL', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.catalogs, ['main', 'older']);
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Server URL', env: ['MISP_URL'], secret: false },
      { setting: 'api_key', label: 'API key', env: ['MISP_API_KEY'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000 });
    assert.equal(engine.run, mispLookup);
    assert.equal(engine.summary, mispSummary);
    assert.equal(engine.details, mispDetails);
  });

  test('the type filters of engines.md 5.18', () => {
    assert.deepEqual(TYPE_FILTERS, {
      IPv4: IP_FILTER, IPv6: IP_FILTER, FQDN: DOMAIN_FILTER, URL: 'url', MD5: 'md5', SHA1: 'sha1', SHA256: 'sha256',
    });
  });

  test('timestamps read as numbers', () => {
    assert.equal(epochSeconds('1717200000'), 1717200000);
    assert.equal(epochSeconds('999999999'), 999999999);
    assert.equal(epochSeconds(1704067200), 1704067200);
    assert.equal(epochSeconds(undefined), null);
    assert.equal(epochSeconds(null), null);
    assert.equal(epochSeconds(''), null);
    assert.equal(epochSeconds('2024-01-01'), null);
  });

  test('summary and details', () => {
    const result: MispResult = {
      count: 3,
      events: [
        { title: 'Phishing kit infra', url: 'https://misp.local/events/view/30', timestamp: '1717200000' },
        { title: 'Cobalt Strike C2 list', url: 'https://misp.local/events/view/12', timestamp: '1704067200' },
      ],
      link: 'https://misp.local/attributes/index?value=1.2.3.4',
      first_seen: '2024-01-01',
      last_seen: '2024-06-01',
    };
    assert.equal(mispSummary(result), '3 attributes · latest event: Phishing kit infra · seen 2024-01-01 to 2024-06-01');
    assert.equal(mispSummary({ ...result, count: 1, events: [result.events[1]!], first_seen: '2024-01-01', last_seen: '2024-01-01' }),
      '1 attribute · latest event: Cobalt Strike C2 list · seen 2024-01-01');
    assert.equal(mispSummary({ count: 0, events: [], link: result.link, first_seen: null, last_seen: null }), 'no attribute');
    assert.deepEqual(mispDetails(result), [
      { label: 'Attributes', value: '3' },
      { label: 'First seen', value: '2024-01-01' },
      { label: 'Last seen', value: '2024-06-01' },
      { label: 'Event 1', value: 'Phishing kit infra', href: 'https://misp.local/events/view/30' },
      { label: 'Event 2', value: 'Cobalt Strike C2 list', href: 'https://misp.local/events/view/12' },
      { label: 'Open in MISP', value: 'https://misp.local/attributes/index?value=1.2.3.4', href: 'https://misp.local/attributes/index?value=1.2.3.4' },
    ]);
  });
});

describe('provider_15 against a loopback MISP', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(prefix: string, value: string, type: ObservableType, settings: Record<string, unknown> = {}): Promise<MispResult | null> {
    return watch.result((await harness(prefix, settings).run(value, type)) as MispResult | null);
  }
  const base = (prefix: string) => `${fake.url}/${prefix}`;

  before(async () => {
    const ok = restSearch({ key: KEY });
    fake = await startFakeHttp({
      'POST /misp/attributes/restSearch': ok,
      'POST /deep/path/misp/attributes/restSearch': ok,
      'POST /midnight/attributes/restSearch': restSearch({
        key: KEY,
        corpus: [
          // 2024-05-31T23:43:20Z and 2024-06-01T00:10:00Z: local time in Kiritimati (UTC+14) or
          // Honolulu (UTC-10) would shift one of them to another day.
          attribute('ip-dst', '203.0.113.50', '1717199000', { id: '7', info: 'Late' }),
          attribute('ip-src', '203.0.113.50', '1717200600', { id: '8', info: 'Early' }),
        ],
      }),
      'POST /numeric/attributes/restSearch': reply.json({ response: { Attribute: [
        { id: '1', event_id: '5', type: 'md5', value: KNOWN.MD5, timestamp: 1700000000, Event: { id: 5, info: 'Numeric ids' } },
        { id: '2', type: 'md5', value: KNOWN.MD5, timestamp: '1600000000' },
      ] } }),
      'POST /empty-array/attributes/restSearch': reply.json({ response: [] }),
      'POST /unauthorized/attributes/restSearch': reply.json({ ...AUTH_FAILED, message: 'Unauthorized' }, 401),
      'POST /echo-key/attributes/restSearch': (req) => reply.json({ name: `Invalid key ${req.headers.authorization}`, message: 'Forbidden', url: '/attributes/restSearch' }, 403),
      'POST /status500/attributes/restSearch': reply.status(500, { name: 'An Internal Error Has Occurred.', message: 'An Internal Error Has Occurred.', url: '/attributes/restSearch' }),
      'POST /flaky/attributes/restSearch': sequence(reply.tooMany(1), ok),
      'POST /throttled/attributes/restSearch': reply.tooMany(1),
      'POST /malformed/attributes/restSearch': reply.malformed(),
      'POST /wrong-shape/attributes/restSearch': reply.json({ response: { Attribute: 'none' } }),
      'POST /login-page/attributes/restSearch': reply.html('<!DOCTYPE html><html><title>Users - MISP</title></html>'),
      'POST /hang/attributes/restSearch': reply.hang(),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('engines.md 5.18\'s example (IPv4): the result exactly', async () => {
    assert.deepEqual(await run('misp', KNOWN.IPv4, 'IPv4'), {
      count: 3,
      events: [
        { title: 'Phishing kit infra', url: `${base('misp')}/events/view/30`, timestamp: '1717200000' },
        { title: 'Cobalt Strike C2 list', url: `${base('misp')}/events/view/12`, timestamp: '1704067200' },
      ],
      link: `${base('misp')}/attributes/index?value=1.2.3.4`,
      first_seen: '2024-01-01',
      last_seen: '2024-06-01',
    });
  });

  test('the request: POST <base_url>/attributes/restSearch, the exact body, the key raw in Authorization', async () => {
    const expected: Record<string, unknown> = {
      IPv4: IP_FILTER, IPv6: IP_FILTER, FQDN: DOMAIN_FILTER, URL: 'url', MD5: 'md5', SHA1: 'sha1', SHA256: 'sha256',
    };
    for (const type of TYPES) {
      fake.reset();
      const value = KNOWN[type as keyof typeof KNOWN];
      await run('misp', value, type);
      assert.equal(fake.requests.length, 1, type);
      const req = fake.requests[0]!;
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/misp/attributes/restSearch');
      assert.equal(req.body, JSON.stringify({ returnFormat: 'json', value, type: expected[type] }), type);
      assert.equal(req.headers.authorization, KEY);
      assert.equal(req.headers.accept, 'application/json');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal([...req.query].length, 0, 'nothing in the query string');
    }
  });

  test('found, IPv6: a composite ip|port attribute; events by timestamp as numbers (bug 21)', async () => {
    // As strings "999999999" > "1717200000": the reference listed the 2001 event first.
    assert.deepEqual(await run('misp', KNOWN.IPv6, 'IPv6'), {
      count: 2,
      events: [
        { title: 'Phishing kit infra', url: `${base('misp')}/events/view/30`, timestamp: '1717200000' },
        { title: 'Old botnet (2001)', url: `${base('misp')}/events/view/3`, timestamp: '999999999' },
      ],
      link: `${base('misp')}/attributes/index?value=${encodeURIComponent(KNOWN.IPv6)}`,
      first_seen: '2001-09-09',
      last_seen: '2024-06-01',
    });
  });

  test('found, FQDN: an attribute without timestamp counts, its event comes last, dates ignore it', async () => {
    assert.deepEqual(await run('misp', KNOWN.FQDN, 'FQDN'), {
      count: 3,
      events: [
        { title: 'Phishing kit infra', url: `${base('misp')}/events/view/30`, timestamp: '1717200100' },
        { title: 'Cobalt Strike C2 list', url: `${base('misp')}/events/view/12`, timestamp: '1704067200' },
        { title: 'Imported without timestamps', url: `${base('misp')}/events/view/41`, timestamp: null },
      ],
      link: `${base('misp')}/attributes/index?value=evil.example.com`,
      first_seen: '2024-01-01',
      last_seen: '2024-06-01',
    });
  });

  test('found, URL: the whole URL searched, percent-encoded in the link', async () => {
    assert.deepEqual(await run('misp', KNOWN.URL, 'URL'), {
      count: 1,
      events: [{ title: 'Phishing kit infra', url: `${base('misp')}/events/view/30`, timestamp: '1717200000' }],
      link: `${base('misp')}/attributes/index?value=https%3A%2F%2Fevil.example.com%2Flogin.php%3Fid%3D1`,
      first_seen: '2024-06-01',
      last_seen: '2024-06-01',
    });
  });

  test('found, MD5', async () => {
    assert.deepEqual(await run('misp', KNOWN.MD5, 'MD5'), {
      count: 1,
      events: [{ title: 'OSINT feed 1', url: `${base('misp')}/events/view/201`, timestamp: '1700000000' }],
      link: `${base('misp')}/attributes/index?value=${KNOWN.MD5}`,
      first_seen: '2023-11-14',
      last_seen: '2023-11-14',
    });
  });

  test('found, SHA1: 10 digits before 9 (bug 21)', async () => {
    const result = await run('misp', KNOWN.SHA1, 'SHA1');
    assert.deepEqual(result?.events.map((e) => e.timestamp), ['1000000000', '999999999']);
    assert.equal(result?.count, 2);
    assert.equal(result?.first_seen, '2001-09-09');
    assert.equal(result?.last_seen, '2001-09-09');
  });

  test('found, SHA256: seven events, the five newest listed, count is every attribute', async () => {
    const result = await run('misp', KNOWN.SHA256, 'SHA256');
    assert.equal(result?.count, 7);
    assert.deepEqual(result?.events.map((e) => e.title), ['OSINT feed 7', 'OSINT feed 6', 'OSINT feed 5', 'OSINT feed 4', 'OSINT feed 3']);
    assert.equal(result?.first_seen, '2023-11-15');
    assert.equal(result?.last_seen, '2023-11-21');
  });

  test('not found, every type: the count 0 object of engines.md', async () => {
    for (const type of TYPES) {
      const value = UNKNOWN[type];
      assert.deepEqual(await run('misp', value, type), {
        count: 0, events: [], link: `${base('misp')}/attributes/index?value=${encodeURIComponent(value)}`, first_seen: null, last_seen: null,
      }, type);
    }
  });

  test('a value under a type outside the filter is not found', async () => {
    // The corpus has 1.2.3.4 as a `text` attribute too: the IP filter keeps it out (count 3, not 4).
    assert.equal((await run('misp', KNOWN.IPv4, 'IPv4'))?.count, 3);
  });

  test('"response": [] (older MISP) is not found too', async () => {
    assert.deepEqual(await run('empty-array', KNOWN.MD5, 'MD5'), {
      count: 0, events: [], link: `${base('empty-array')}/attributes/index?value=${KNOWN.MD5}`, first_seen: null, last_seen: null,
    });
  });

  test('numeric timestamp and ids, an attribute without Event: kept, "Unknown", no link', async () => {
    assert.deepEqual(await run('numeric', KNOWN.MD5, 'MD5'), {
      count: 2,
      events: [
        { title: 'Numeric ids', url: `${base('numeric')}/events/view/5`, timestamp: '1700000000' },
        { title: 'Unknown', url: null, timestamp: '1600000000' },
      ],
      link: `${base('numeric')}/attributes/index?value=${KNOWN.MD5}`,
      first_seen: '2020-09-13',
      last_seen: '2023-11-14',
    });
  });

  test('base_url with a path and trailing slashes: path kept, no double slash', async () => {
    fake.reset();
    const result = await run('x', KNOWN.IPv4, 'IPv4', { base_url: `${fake.url}/deep/path/misp//` });
    assert.deepEqual(fake.requests.map((r) => r.path), ['/deep/path/misp/attributes/restSearch']);
    assert.equal(result?.link, `${fake.url}/deep/path/misp/attributes/index?value=1.2.3.4`);
    assert.equal(result?.events[0]?.url, `${fake.url}/deep/path/misp/events/view/30`);
  });

  test('dates are UTC days whatever the machine\'s time zone', async () => {
    const saved = process.env.TZ;
    try {
      for (const zone of ['Pacific/Kiritimati', 'Pacific/Honolulu', 'UTC']) {
        process.env.TZ = zone;
        const result = await run('midnight', '203.0.113.50', 'IPv4');
        assert.equal(result?.first_seen, '2024-05-31', zone);
        assert.equal(result?.last_seen, '2024-06-01', zone);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('an e-mail address: not MISP\'s, null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('misp').run('someone@example.org', 'Email'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('called directly without key or base_url: an error before any request', async () => {
    fake.reset();
    await watch.rejectsWith(harness('misp', { api_key: undefined }).run(KNOWN.IPv4, 'IPv4'), /^not configured: api_key$/);
    await watch.rejectsWith(harness('misp', { base_url: '' }).run(KNOWN.IPv4, 'IPv4'), /^not configured: base_url$/);
    await watch.rejectsWith(harness('misp', { base_url: 'misp.local' }).run(KNOWN.IPv4, 'IPv4'), /^MISP: base_url is not a URL$/);
    assert.equal(fake.requests.length, 0);
  });

  test('a wrong key: MISP\'s 403, one line naming MISP, key masked', async () => {
    fake.reset();
    await watch.rejectsWith(harness('misp', { api_key: 'not-the-key-000' }).run(KNOWN.IPv4, 'IPv4'),
      /^MISP: authentication failed \(HTTP 403 Forbidden: Authentication failed\. Please make sure you pass the API key of an API enabled user along in the Authorization header\.\)$/);
    assert.equal(fake.requests.length, 1, 'not retried');
  });

  test('HTTP 401: an authentication error too', async () => {
    await watch.rejectsWith(harness('unauthorized').run(KNOWN.IPv4, 'IPv4'), /^MISP: authentication failed \(HTTP 401 Unauthorized: Authentication failed\. /);
  });

  test('a reason echoing the key: masked', async () => {
    await watch.rejectsWith(harness('echo-key').run(KNOWN.IPv4, 'IPv4'), /^MISP: authentication failed \(HTTP 403 Forbidden: Invalid key \*\*\*\)$/);
  });

  test('another 404 (a wrong base_url): an error, not "not found"', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^HTTP 404 Not Found\b/);
  });

  test('HTTP 500: an error, retried as configured', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 1 }).run(KNOWN.IPv4, 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('POST /status500/').length, 2);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run('flaky', KNOWN.IPv4, 'IPv4', { retries: 2 });
    assert.equal(result?.count, 3);
    assert.equal(fake.hits('POST /flaky/').length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    await watch.rejectsWith(harness('throttled', { retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON, a wrong shape, an HTML page: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^unexpected answer from upstream at response/);
    await watch.rejectsWith(harness('login-page', { retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a hanging server: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run(KNOWN.IPv4, 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a server that is down: a network error without the key', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1/misp', retries: 0 }).run(KNOWN.IPv4, 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('provider_15 fake for whole-system tests', () => {
  const suite = harnessOnFake(engine, () => startFakeHttp(fakeRoutes({ key: KEY })), (url) => ({ ...fakeSettings(url), api_key: KEY }));

  test('answers every known observable with the key, and nothing with another', async () => {
    const { fake, harness: h } = suite;
    for (const type of TYPES) {
      const result = watch.result((await h.run(KNOWN[type as keyof typeof KNOWN], type)) as MispResult);
      assert.ok(result.count > 0, type);
      assert.ok(result.events.every((e) => e.url?.startsWith(`${fake.url}/misp/events/view/`)), type);
    }
    assert.ok(fake.requests.every((r) => r.headers.authorization === KEY));
  });
});

describe('provider_15 through the runner', () => {
  let fake: FakeHttpServer;
  const runner = suiteRunners([engine, opencti]);
  const configured = () => ({ ...fakeSettings(fake.url), api_key: KEY });

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ key: KEY }),
      ...openCtiRoutes({ key: OTHER_KEY }),
      'POST /broken/attributes/restSearch': reply.status(500),
    });
  });
  after(() => fake.close());

  test('the result under the alias the caller named, or under the id', async () => {
    const r = runner(configured());
    const [byAlias] = await r.analyze([{ value: KNOWN.IPv4, type: 'IPv4' }], ['misp']);
    assert.equal(watch.result(byAlias!.misp as MispResult).count, 3);
    assert.equal(byAlias!.provider_15, undefined);
    assert.equal(byAlias!.errors, undefined);
    const [byId] = await r.analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['provider_15']);
    assert.equal((byId!.provider_15 as MispResult).count, 3);
  });

  test('a private IP is not sent to MISP (not applicable: null, no error)', async () => {
    fake.reset();
    const [result] = await runner(configured()).analyze([{ value: '10.0.0.5', type: 'IPv4' }], ['misp']);
    assert.equal(result!.misp, null);
    assert.equal(result!.errors, undefined);
    assert.equal(fake.requests.length, 0);
  });

  test('no base_url configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ api_key: KEY }).analyze([{ value: KNOWN.IPv4, type: 'IPv4' }], ['misp']);
    assert.equal(result!.misp, null);
    assert.deepEqual(result!.errors, { misp: 'not configured: engines.provider_15.base_url or OAS_MISP_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('no api_key configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner(fakeSettings(fake.url)).analyze([{ value: KNOWN.IPv4, type: 'IPv4' }], ['misp']);
    assert.deepEqual(result!.errors, { misp: 'not configured: engines.provider_15.api_key or OAS_MISP_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('a failing MISP: null plus an errors entry, the other engine unaffected', async () => {
    const [result] = await runner(
      { base_url: `${fake.url}/broken`, api_key: KEY },
      { provider_16: { ...openCtiSettings(fake.url), api_key: OTHER_KEY } },
    ).analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['misp', 'opencti']);
    watch.result(result);
    assert.equal(result!.misp, null);
    assert.deepEqual(result!.errors, { misp: 'HTTP 500 Internal Server Error' });
    assert.equal((result!.opencti as { global_count: number }).global_count, 2);
  });

  test('a wrong key through the runner: the one-line error, key masked', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: `${KEY}-old` }).analyze([{ value: KNOWN.IPv4, type: 'IPv4' }], ['misp']);
    watch.result(result);
    assert.match(result!.errors!.misp!, /^MISP: authentication failed \(HTTP 403 Forbidden: Authentication failed\./);
  });
});

describe('provider_15 through a proxy (proxy_url)', () => {
  const suite = proxiedSuite(engine, fakeRoutes({ key: KEY }), (url) => ({ ...fakeSettings(url), api_key: KEY }));

  test('the request goes through the configured proxy (the reference ignored it for self-hosted engines: bug 20)', async () => {
    const { fake, proxy, runner: r } = suite;
    const [result] = await r.analyze([{ value: KNOWN.IPv4, type: 'IPv4' }], ['misp']);
    watch.result(result);
    assert.equal(result!.errors, undefined);
    assert.equal((result!.misp as MispResult).count, 3);
    const authority = new URL(fake.url).host;
    assert.deepEqual(proxy.connects, [authority]);
    assert.equal(proxy.requests.length, 1);
    assert.equal(proxy.requests[0]!.method, 'POST');
    assert.equal(proxy.requests[0]!.url, `${fake.url}/misp/attributes/restSearch`);
    assert.equal(proxy.requests[0]!.body, JSON.stringify({ returnFormat: 'json', value: KNOWN.IPv4, type: IP_FILTER }));
    assert.equal(fake.requests.length, 1, 'the proxy forwarded it');
  });
});

describe('provider_15 minimal and degenerate answers (issue 26)', () => {
  const upstream = answeringUpstream(engine, 'POST /lenient/attributes/restSearch', [KNOWN.IPv4, 'IPv4'], { key: KEY, watch });
  const { run } = upstream;
  const none = (): MispResult => ({
    count: 0, events: [], link: `${upstream.fake.url}/lenient/attributes/index?value=${KNOWN.IPv4}`, first_seen: null, last_seen: null,
  });

  test('no response, or response / Attribute null, "", {} or []: no match', async () => {
    for (const body of [{}, { response: null }, { response: '' }, { response: {} }, { response: { Attribute: null } }, { response: { Attribute: [] } }, { response: [{}] }]) {
      assert.deepEqual(await run(body), none(), JSON.stringify(body));
    }
  });

  test('the minimal attribute (no timestamp, no Event, no event_id): counted, one "Unknown" event without link', async () => {
    assert.deepEqual(await run({ response: { Attribute: [{}] } }), {
      ...none(), count: 1, events: [{ title: 'Unknown', url: null, timestamp: null }],
    });
  });

  test('one attribute object in place of the list, null entries, an empty or numeric Event.info', async () => {
    const one = { event_id: '12', timestamp: '1704067200', Event: { id: '12', info: 'Cobalt Strike C2 list' } };
    assert.deepEqual(await run({ response: { Attribute: one } }), {
      ...none(), count: 1, events: [{ title: 'Cobalt Strike C2 list', url: `${upstream.fake.url}/lenient/events/view/12`, timestamp: '1704067200' }],
      first_seen: '2024-01-01', last_seen: '2024-01-01',
    });
    // `info: ""` is the title MISP sent: kept (issue 32; it was "Unknown" before), as the reference.
    const result = await run({ response: { Attribute: [null, { event_id: 3, timestamp: 1717200000, Event: { info: '' } }, null, { event_id: '4', Event: { id: 4, info: 2024 } }] } }) as MispResult;
    assert.deepEqual(result, {
      ...none(), count: 2,
      events: [
        { title: '', url: `${upstream.fake.url}/lenient/events/view/3`, timestamp: '1717200000' },
        { title: '2024', url: `${upstream.fake.url}/lenient/events/view/4`, timestamp: null },
      ],
      first_seen: '2024-06-01', last_seen: '2024-06-01',
    });
    // No "latest event: " without a title; the card links the untitled event by its address.
    assert.equal(engine.summary(result), '2 attributes · seen 2024-06-01');
    assert.deepEqual(engine.details!(result, '1.2.3.4').find((f) => f.label === 'Event 1'),
      { label: 'Event 1', value: `${upstream.fake.url}/lenient/events/view/3`, href: `${upstream.fake.url}/lenient/events/view/3` });
  });

  test('a list of {Attribute} parts: all their attributes', async () => {
    const result = await run({ response: [{ Attribute: [{ event_id: '1', timestamp: '1704067200' }] }, { Attribute: { event_id: '2', timestamp: '1717200000' } }] }) as MispResult;
    assert.equal(result.count, 2);
    assert.deepEqual(result.events.map((e) => e.url), [`${upstream.fake.url}/lenient/events/view/2`, `${upstream.fake.url}/lenient/events/view/1`]);
  });

  test('what cannot be read still fails, naming the field', async () => {
    await watch.rejectsWith(run([]), /^unexpected answer from upstream at \(root\)/);
    await watch.rejectsWith(run({ response: { Attribute: [{ Event: { info: { text: 'x' } } }] } }), /^unexpected answer from upstream at response\.0\.Attribute\.0\.Event\.info/);
  });
});

describe('provider_15 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(40);
  });
});
