import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import engine, { ipinfoDetails, ipinfoLookup, ipinfoSummary, type IpinfoResult } from '../../engines/ipinfo.js';
import { countryName } from '../../src/lookup/country.js';
import badAsn, { type BadAsnResult } from '../../engines/bad_asn.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { startFakeBadAsn, type FakeBadAsn } from '../fakes/bad-asn.js';
import { fakeRoutes, fakeSettings } from '../fakes/ipinfo.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { describeIpFake, KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { answeringUpstream } from '../helpers/answers.js';
import { HttpStatusError } from '../../src/http/errors.js';

const KEY = 'SECRET-KEY-1234567890';

/** ipinfo.io's answers (engines.md 5.15's example, completed with the fields the free plan sends). */
const GOOGLE = {
  ip: '8.8.8.8', hostname: 'dns.google', city: 'Mountain View', region: 'California', country: 'US',
  loc: '37.4056,-122.0775', org: 'AS15169 Google LLC', postal: '94043', timezone: 'America/Los_Angeles', anycast: true,
};
const CLOUDFLARE = {
  ip: '1.1.1.1', hostname: 'one.one.one.one', city: 'Brisbane', region: 'Queensland', country: 'AU',
  loc: '-27.4820,153.0136', org: 'AS13335 Cloudflare, Inc.', postal: '4101', timezone: 'Australia/Brisbane', anycast: true,
};
const GOOGLE_V6 = {
  ip: '2001:4860:4860::8888', hostname: 'dns.google', city: 'Mountain View', region: 'California', country: 'US',
  loc: '37.4056,-122.0775', org: 'AS15169 Google LLC', postal: '94043', timezone: 'America/Los_Angeles', anycast: true,
};
/** No host name, no city, an empty region: each becomes Unknown. */
const SPARSE = { ip: '45.155.205.66', city: '', region: 'Moscow', country: 'RU', loc: '55.7522,37.6156', org: 'AS203999 Bad Host LLC', timezone: 'Europe/Moscow' };
/** Shared address space, which ipinfo reports as a bogon. */
const BOGON = { ip: '100.64.0.1', bogon: true };
/** An address ipinfo knows nothing about. */
const NOTHING = { ip: '5.255.255.77' };

const BY_IP: Record<string, object> = {
  '8.8.8.8': GOOGLE, '1.1.1.1': CLOUDFLARE, '2001:4860:4860::8888': GOOGLE_V6, '45.155.205.66': SPARSE,
  '100.64.0.1': BOGON, '5.255.255.77': NOTHING,
};

/** `/<prefix>/<ip>/json` answered from BY_IP; anything else as ipinfo answers a bad address. */
function byIp(req: FakeRequest): FakeReply {
  const [, , ip, format] = req.path.split('/');
  const answer = format === 'json' && ip ? BY_IP[ip] : undefined;
  return answer ? reply.json(answer) : reply.json({ status: 404, error: { title: 'Wrong ip', message: 'Please provide a valid IP address' } }, 404);
}

/** Every result and error message of these tests: none may contain the key. */
const watch = new KeyWatch(KEY);

describe('provider_12 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_12');
    assert.equal(engine.service, 'ipinfo');
    assert.equal(engine.label, 'IPinfo');
    assert.deepEqual(engine.tags, ['IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['IPINFO'] }]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 5000, base_url: 'https://ipinfo.io', rate_limit: 50_000, rate_window_ms: 30 * 86_400_000,
    });
    assert.equal(engine.run, ipinfoLookup);
    assert.equal(engine.summary, ipinfoSummary);
  });

  test('summary: owner, place, host name', () => {
    const result: IpinfoResult = {
      ip: '8.8.8.8', geolocation: 'Mountain View, California', country_code: 'US', country_name: 'United States',
      hostname: 'dns.google', asn: 'AS15169 Google LLC', link: 'https://ipinfo.io/8.8.8.8',
    };
    assert.equal(engine.summary(result), 'AS15169 Google LLC · Mountain View, California, US · dns.google');
    assert.equal(engine.summary({ ...result, geolocation: 'Unknown, Moscow', country_code: 'RU', hostname: 'Unknown' }), 'AS15169 Google LLC · Moscow, RU');
    assert.equal(engine.summary({ ...result, asn: 'Unknown', geolocation: 'Unknown, Unknown', country_code: 'Unknown', hostname: 'Unknown' }), '8.8.8.8: no data');
    assert.equal(engine.summary({ ...result, geolocation: '', country_code: '', country_name: 'Bogon', hostname: 'Private IP', asn: 'BOGON' }), 'bogon (private or reserved address)');
  });

  test('details: owner, host name, place, country, then the ipinfo.io page; Unknowns left out', () => {
    const result: IpinfoResult = {
      ip: '8.8.8.8', geolocation: 'Mountain View, California', country_code: 'US', country_name: 'United States',
      hostname: 'dns.google', asn: 'AS15169 Google LLC', link: 'https://ipinfo.io/8.8.8.8',
    };
    const link = { label: 'Open in IPinfo', value: 'https://ipinfo.io/8.8.8.8', href: 'https://ipinfo.io/8.8.8.8' };
    assert.deepEqual(engine.details!(result, '8.8.8.8'), [
      { label: 'Network owner', value: 'AS15169 Google LLC' },
      { label: 'Host name', value: 'dns.google' },
      { label: 'Location', value: 'Mountain View, California' },
      { label: 'Country', value: 'United States (US)' },
      link,
    ]);
    assert.deepEqual(ipinfoDetails({ ...result, geolocation: 'Unknown, Moscow', country_code: 'RU', country_name: 'Russia', hostname: 'Unknown' }, '8.8.8.8'), [
      { label: 'Network owner', value: 'AS15169 Google LLC' },
      { label: 'Location', value: 'Moscow' },
      { label: 'Country', value: 'Russia (RU)' },
      link,
    ]);
    assert.deepEqual(ipinfoDetails({ ...result, geolocation: '', country_code: '', country_name: 'Bogon', hostname: 'Private IP', asn: 'BOGON' }, '8.8.8.8'), [
      { label: 'Address', value: 'bogon (private or reserved address)' },
      link,
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, ipinfoDetails);
  });

  test('country names (shared with provider_25)', () => {
    assert.equal(countryName('US'), 'United States');
    assert.equal(countryName('gb'), 'United Kingdom');
    assert.equal(countryName('AU'), 'Australia');
    assert.equal(countryName('ZZ'), 'Unknown');
    assert.equal(countryName('QQ'), 'Unknown');
    assert.equal(countryName('USA'), 'Unknown');
    assert.equal(countryName(''), 'Unknown');
    assert.equal(countryName(null), 'Unknown');
  });
});

describe('provider_12 against a loopback ipinfo.io', () => {
  let fake: FakeHttpServer;
  /** A harness whose base_url is `<fake>/<prefix>`, with the key unless told otherwise. */
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(prefix: string, ip: string, settings: Record<string, unknown> = {}): Promise<IpinfoResult | null> {
    return watch.result((await harness(prefix, settings).run(ip, ip.includes(':') ? 'IPv6' : 'IPv4')) as IpinfoResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': byIp,
      'GET /status500/*': reply.status(500, { error: 'internal error' }),
      'GET /flaky/*': sequence(reply.tooMany(1), byIp),
      'GET /malformed/*': reply.malformed(),
      'GET /wrong-shape/*': reply.json({ ...GOOGLE, org: { asn: 15169 } }),
      'GET /no-ip/*': reply.json({ city: 'Mountain View', country: 'US' }),
      'GET /hang/*': reply.hang(),
      // ipinfo's answer to an unknown token; this one also echoes the token it was given.
      'GET /unknown-token/*': (req) => reply.json({
        status: 403,
        error: { title: 'Unknown token', message: `Token ${req.query.get('token')} is not valid. Refer to https://ipinfo.io/developers for details.` },
      }, 403),
      'GET /unauthorized/*': reply.json({ status: 401, error: { title: 'Unauthorized', message: 'Please provide a valid token' } }, 401),
      'GET /unauthorized-html/*': reply.html('<html><body><h1>401 Authorization Required</h1></body></html>', 401),
      // A reason quoting a request URL with some other token in it.
      'GET /quota/*': reply.json({ error: { title: 'Forbidden', message: 'Plan limit reached for https://ipinfo.io/8.8.8.8/json?token=OTHER-TOKEN-42' } }, 403),
      // A redirect to a closed port: the request fails on the network.
      'GET /moved/*': { status: 302, headers: { location: `http://127.0.0.1:1/8.8.8.8/json?token=${KEY}` } },
    });
  });
  after(async () => {
    await fake.close();
  });

  test('a full answer, field by field', async () => {
    const result = await run('ok', '8.8.8.8');
    assert.ok(result);
    assert.equal(result.ip, '8.8.8.8');
    assert.equal(result.geolocation, 'Mountain View, California');
    assert.equal(result.country_code, 'US');
    assert.equal(result.country_name, 'United States');
    assert.equal(result.hostname, 'dns.google');
    assert.equal(result.asn, 'AS15169 Google LLC');
    assert.equal(result.link, 'https://ipinfo.io/8.8.8.8');
    assert.deepEqual(Object.keys(result), ['ip', 'geolocation', 'country_code', 'country_name', 'hostname', 'asn', 'link']);
    assert.equal(engine.summary(result), 'AS15169 Google LLC · Mountain View, California, US · dns.google');
  });

  test('the request: GET <base_url>/<ip>/json, the key in the token parameter only', async () => {
    fake.reset();
    await run('ok', '1.1.1.1');
    const [req, ...more] = fake.hits('GET /ok/');
    assert.equal(more.length, 0);
    assert.equal(req!.path, '/ok/1.1.1.1/json');
    assert.deepEqual([...req!.query], [['token', KEY]]);
    assert.match(String(req!.headers.accept), /application\/json/);
    assert.ok(!JSON.stringify(req!.headers).includes(KEY), 'no key in the headers');
  });

  test('IPv6', async () => {
    fake.reset();
    const result = await run('ok', '2001:4860:4860::8888');
    assert.equal(result?.ip, '2001:4860:4860::8888');
    assert.equal(result?.link, 'https://ipinfo.io/2001:4860:4860::8888');
    assert.equal(fake.hits('GET /ok/')[0]!.path, '/ok/2001:4860:4860::8888/json');
  });

  test('missing fields become Unknown, empty ones stay empty (issue 32, as the reference)', async () => {
    const result = await run('ok', '45.155.205.66');
    assert.deepEqual(result, {
      ip: '45.155.205.66', geolocation: ', Moscow', country_code: 'RU', country_name: 'Russia',
      hostname: 'Unknown', asn: 'AS203999 Bad Host LLC', link: 'https://ipinfo.io/45.155.205.66',
    });
  });

  test('a bogon answer: the documented bogon result', async () => {
    const result = await run('ok', '100.64.0.1');
    assert.deepEqual(result, {
      ip: '100.64.0.1', geolocation: '', country_code: '', country_name: 'Bogon', hostname: 'Private IP', asn: 'BOGON',
      link: 'https://ipinfo.io/100.64.0.1',
    });
  });

  test('an answer with nothing but the address: the result of Unknowns (engines.md 5.15; it was null before issue 32)', async () => {
    assert.deepEqual(await run('ok', '5.255.255.77'), {
      ip: '5.255.255.77', geolocation: 'Unknown, Unknown', country_code: 'Unknown', country_name: 'Unknown', hostname: 'Unknown', asn: 'Unknown',
      link: 'https://ipinfo.io/5.255.255.77',
    });
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('no key: an error before any request (the reference sent ?token= empty)', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('8.8.8.8', 'IPv4'), /^not configured: api_key$/);
    await watch.rejectsWith(harness('ok', { api_key: '' }).run('8.8.8.8', 'IPv4'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 401: a clear error with ipinfo\'s reason', async () => {
    await watch.rejectsWith(harness('unauthorized', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^HTTP 401 Unauthorized: Unauthorized: Please provide a valid token$/);
    await watch.rejectsWith(harness('unauthorized-html', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^HTTP 401 Unauthorized$/);
  });

  test('HTTP 403 for an unknown token: the reason\'s first sentence (issue 32), with the echoed key masked', async () => {
    const promise = harness('unknown-token', { retries: 0 }).run('8.8.8.8', 'IPv4');
    await watch.rejectsWith(promise, /^HTTP 403 Forbidden: Unknown token: Token \*\*\* is not valid\.$/);
    await assert.rejects(promise, HttpStatusError);
  });

  test('a token in a URL the upstream quotes is masked too', async () => {
    await watch.rejectsWith(
      harness('quota', { retries: 0 }).run('8.8.8.8', 'IPv4'),
      /^HTTP 403 Forbidden: Forbidden: Plan limit reached for https:\/\/ipinfo\.io\/8\.8\.8\.8\/json\?token=\*\*\*$/,
    );
  });

  test('HTTP 404 (a wrong address or base_url): an error, not a silent null', async () => {
    await watch.rejectsWith(harness('ok', { retries: 0 }).run('9.9.9.9', 'IPv4'), /^HTTP 404 Not Found: Wrong ip: Please provide a valid IP address$/);
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^HTTP 404 Not Found\b/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('GET /status500/').length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run('flaky', '8.8.8.8', { retries: 2, timeout_ms: 5000 });
    assert.equal(result?.asn, 'AS15169 Google LLC');
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^unexpected answer from upstream at org: /);
  });

  test('an answer without ip nor bogon: an error (the reference returned null)', async () => {
    await watch.rejectsWith(harness('no-ip', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^unexpected answer from upstream at ip: missing$/);
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('8.8.8.8', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a request failing on the network (after a redirect to a URL with the key): no key in the error', async () => {
    // 127.0.0.1:1, the redirect's target, refused: the message names it, not the first URL.
    await watch.rejectsWith(harness('moved', { retries: 0 }).run('8.8.8.8', 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('8.8.8.8', 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(20);
  });
});

describe('provider_12 minimal and degenerate answers (issue 26)', () => {
  const { run } = answeringUpstream(engine, 'GET /lenient/*', ['203.0.113.9', 'IPv4'], { key: KEY, watch });
  const UNKNOWNS: IpinfoResult = {
    ip: '203.0.113.9', geolocation: 'Unknown, Unknown', country_code: 'Unknown', country_name: 'Unknown', hostname: 'Unknown', asn: 'Unknown',
    link: 'https://ipinfo.io/203.0.113.9',
  };

  test('the minimal answers: {"ip"} alone is the result of Unknowns (engines.md 5.15, issue 32); {"bogon": true} the bogon result', async () => {
    // It was null ("not found") before issue 32; the reference gives the Unknowns.
    const unknowns = await run({ ip: '203.0.113.9' }) as IpinfoResult;
    assert.deepEqual(unknowns, UNKNOWNS);
    assert.equal(engine.summary(unknowns), '203.0.113.9: no data');
    assert.deepEqual(engine.details!(unknowns, '203.0.113.9'), [{ label: 'Open in IPinfo', value: 'https://ipinfo.io/203.0.113.9', href: 'https://ipinfo.io/203.0.113.9' }]);
    assert.deepEqual(await run({ bogon: true }), {
      ip: '203.0.113.9', geolocation: '', country_code: '', country_name: 'Bogon', hostname: 'Private IP', asn: 'BOGON', link: 'https://ipinfo.io/203.0.113.9',
    });
  });

  test('bogon sent as 1 or "true" is a bogon; as 0, "", false or null an ordinary answer', async () => {
    for (const bogon of [1, 'true']) assert.equal((await run({ bogon }) as IpinfoResult).asn, 'BOGON', JSON.stringify(bogon));
    for (const bogon of [0, '', false, null]) {
      assert.deepEqual(await run({ ip: '203.0.113.9', bogon, org: 'AS64500 Example' }), { ...UNKNOWNS, asn: 'AS64500 Example' }, JSON.stringify(bogon));
    }
  });

  test('fields null are Unknown, "" kept as sent (issue 32, as the reference); a number is its text; unread fields of any form are ignored', async () => {
    // The "" fields were "Unknown" before issue 32.
    const result = await run({ ip: '203.0.113.9', hostname: '', city: '', region: null, country: '', org: 'AS64500 Example' }) as IpinfoResult;
    assert.deepEqual(result, { ...UNKNOWNS, geolocation: ', Unknown', country_code: '', hostname: '', asn: 'AS64500 Example' });
    assert.equal(engine.summary(result), 'AS64500 Example');
    assert.deepEqual(engine.details!(result, '203.0.113.9').map((f) => f.label), ['Network owner', 'Open in IPinfo']);
    const empty = await run({ ip: '203.0.113.9', org: '' }) as IpinfoResult;
    assert.deepEqual(empty, { ...UNKNOWNS, asn: '' });
    assert.equal(engine.summary(empty), '203.0.113.9: no data');
    assert.equal(engine.asn!(empty), undefined);
    assert.deepEqual(await run({ ip: '203.0.113.9', hostname: null, city: null, region: null, country: null, org: 'AS64500 Example' }), { ...UNKNOWNS, asn: 'AS64500 Example' });
    assert.deepEqual(await run({ ip: '203.0.113.9', city: 1000, loc: [50.8, 4.3], postal: 1000, timezone: null, anycast: 'yes' }), { ...UNKNOWNS, geolocation: '1000, Unknown' });
  });

  test('what cannot be read still fails: no ip, an empty ip, a flag that is no boolean, no object', async () => {
    await watch.rejectsWith(run({}), /^unexpected answer from upstream at ip: missing$/);
    await watch.rejectsWith(run({ ip: '', city: 'Brussels' }), /^unexpected answer from upstream at ip: missing$/);
    await watch.rejectsWith(run({ ip: '203.0.113.9', bogon: 'perhaps' }), /^unexpected answer from upstream at bogon: expected a boolean$/);
    await watch.rejectsWith(run(['203.0.113.9']), /^unexpected answer from upstream at \(root\): /);
  });

  // Recorded after the suite's own key check ran: checked again, with these answers' results.
  test('the key appears in none of these results or errors either', () => {
    watch.assertNoKey(20);
  });
});

describeIpFake({
  engine,
  key: KEY,
  start: () => startFakeHttp(fakeRoutes()),
  settings: fakeSettings,
  check: (result: IpinfoResult, ip) => {
    assert.equal(result.ip, ip);
    assert.equal(result.asn, 'AS15169 Google LLC');
  },
  keyOf: (r) => r.query.get('token'),
});

describe('provider_12 through the runner', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let lists: FakeBadAsn;
  let dataDir: string;
  const runners: RunnerHarness[] = [];

  function runner(settings: Record<string, unknown> = { api_key: KEY }): RunnerHarness {
    const r = runnerHarness([engine, badAsn], {
      dnsServers: [dns.address],
      dataDir,
      settings: {
        provider_12: { base_url: `${fake.url}/ok`, retries: 0, ...settings },
        bad_asn: { ...lists.settings, retries: 0 },
      },
    });
    runners.push(r);
    return r;
  }

  before(async () => {
    fake = await startFakeHttp({ 'GET /ok/*': byIp });
    dns = await startFakeDns({ 'dns.example': { A: ['8.8.8.8'] }, 'evil.example': { A: ['45.155.205.66'] } });
    lists = await startFakeBadAsn();
    dataDir = mkdtempSync(join(tmpdir(), 'oas-provider12-'));
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await Promise.all([fake.close(), dns.close(), lists.http.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a domain: ipinfo asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: 'dns.example', type: 'FQDN' }], ['ipinfo']);
    assert.equal(result!.reversed_ip, '8.8.8.8');
    assert.equal((result!.ipinfo as IpinfoResult).ip, '8.8.8.8');
    assert.equal((result!.ipinfo as IpinfoResult).asn, 'AS15169 Google LLC');
    assert.deepEqual(fake.requests.map((r) => r.path), ['/ok/8.8.8.8/json']);
    assert.equal(result!.errors, undefined);
  });

  test('no key configured: "not configured: api_key", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({}).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['provider_12']);
    assert.equal(result!.provider_12, null);
    assert.deepEqual(result!.errors, { provider_12: 'not configured: engines.provider_12.api_key or OAS_IPINFO_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('bad_asn reads the ASN and owner from ipinfo\'s result (selected together)', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: 'evil.example', type: 'FQDN' }], ['provider_12', 'bad_asn']);
    assert.equal(result!.reversed_ip, '45.155.205.66');
    assert.equal((result!.provider_12 as IpinfoResult).asn, 'AS203999 Bad Host LLC');
    const verdict = result!.bad_asn as BadAsnResult & { asn_org_name?: string | null };
    assert.equal(verdict.status, 'malicious');
    assert.equal(verdict.asn, '203999');
    assert.equal(verdict.asn_org_name, 'Bad Host LLC');
    assert.equal(result!.errors, undefined);
    assert.equal(fake.requests.length, 1);
  });

  test('bad_asn alone runs ipinfo unreported', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['bad_asn']);
    assert.deepEqual(result!.bad_asn, { status: 'unlisted', asn: '15169', details: 'ASN 15169 is not listed in bad ASN databases' });
    assert.equal(result!.provider_12, undefined);
    assert.equal(fake.requests.length, 1);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });
});
