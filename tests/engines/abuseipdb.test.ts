import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { abuseIpdbDetails, abuseIpdbEvidence, abuseIpdbLookup, type AbuseIpdbResult } from '../../engines/abuseipdb.js';
import { Catalog } from '../../src/engine/catalog.js';
import { HttpStatusError } from '../../src/http/errors.js';
import { fakeRoutes, fakeSettings } from '../fakes/abuseipdb.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import type { EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';

/** AbuseIPDB's check answer for a Tor exit (engines.md 5.3, with every field the API sends). */
const TOR_EXIT = {
  data: {
    ipAddress: '185.220.101.1',
    isPublic: true,
    ipVersion: 4,
    isWhitelisted: false,
    abuseConfidenceScore: 100,
    countryCode: 'DE',
    usageType: 'Data Center/Web Hosting/Transit',
    isp: 'Tor Exit',
    domain: 'example.org',
    hostnames: ['tor-exit.example.org'],
    isTor: true,
    totalReports: 1532,
    numDistinctUsers: 310,
    lastReportedAt: '2026-01-10T08:00:00+00:00',
  },
};

/** An address nobody reported: AbuseIPDB still answers, with zero reports and no last report. */
const NEVER_REPORTED = {
  data: {
    ipAddress: '2001:4860:4860::8888',
    isPublic: true,
    ipVersion: 6,
    isWhitelisted: true,
    abuseConfidenceScore: 0,
    countryCode: 'US',
    usageType: 'Content Delivery Network',
    isp: 'Google LLC',
    domain: 'google.com',
    hostnames: ['dns.google'],
    isTor: false,
    totalReports: 0,
    numDistinctUsers: 0,
    lastReportedAt: null,
  },
};

/** Nulls where the result promises a type (isWhitelisted and countryCode are null for some addresses). */
const NULLS = {
  data: {
    ipAddress: '203.0.113.9',
    isPublic: true,
    ipVersion: 4,
    isWhitelisted: null,
    abuseConfidenceScore: 0,
    countryCode: null,
    usageType: null,
    isp: null,
    domain: null,
    hostnames: [],
    isTor: false,
    totalReports: 0,
    numDistinctUsers: 0,
    lastReportedAt: null,
  },
};

const BY_IP: Record<string, object> = {
  '185.220.101.1': TOR_EXIT,
  '2001:4860:4860::8888': NEVER_REPORTED,
  '203.0.113.9': NULLS,
};

function byIp(req: FakeRequest): FakeReply {
  return reply.json(BY_IP[req.query.get('ipAddress') ?? ''] ?? TOR_EXIT);
}

const authFailed = (status: number, detail: string): FakeReply =>
  reply.status(status, { errors: [{ detail, status }] });

/** Every result and error message a test saw: none may contain the key. */
const watch = new KeyWatch(KEY);

describe('provider_03 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_03');
    assert.equal(engine.service, 'abuseipdb');
    assert.equal(engine.label, 'AbuseIPDB');
    assert.deepEqual(engine.tags, ['IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['ABUSEIPDB'] }]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 5000,
      base_url: 'https://api.abuseipdb.com/api/v2',
      rate_limit: 1000,
      rate_window_ms: 86_400_000,
    });
    assert.equal(engine.run, abuseIpdbLookup);
  });

  test('summary: score, reports and last report, flags, country, usage, ISP', () => {
    const base: AbuseIpdbResult = {
      ip_address: '185.220.101.1', reports: 1532, risk_score: 100, is_whitelisted: false, country_code: 'DE',
      country_name: 'Germany', usage_type: 'Data Center/Web Hosting/Transit', isp: 'Tor Exit', domain: 'example.org',
      hostnames: [], is_tor: true, last_reported_at: '2026-01-10T08:00:00+00:00', link: 'https://www.abuseipdb.com/check/185.220.101.1',
    };
    assert.equal(engine.summary(base), 'risk 100 · 1532 reports, last 2026-01-10 · Tor · DE · Data Center/Web Hosting/Transit · Tor Exit');
    assert.equal(
      engine.summary({ ...base, reports: 0, risk_score: 0, is_tor: false, is_whitelisted: true, last_reported_at: null, country_code: '', usage_type: '', isp: '' }),
      'risk 0 · 0 reports · whitelisted',
    );
    assert.equal(engine.summary({ ...base, reports: 1, is_tor: false }), 'risk 100 · 1 report, last 2026-01-10 · DE · Data Center/Web Hosting/Transit · Tor Exit');
  });
});

describe('provider_03 catalog variants (spec, "Differences in the older catalog variant")', () => {
  test('main catalog: unchanged', () => {
    assert.equal(new Catalog([engine]).find('abuseipdb'), engine);
    assert.deepEqual(engine.tags, ['IP']);
  });

  test('older catalog: the single tag risk; key and lookup unchanged', () => {
    const older = new Catalog([engine], 'older').find('provider_03')!;
    assert.deepEqual(older.tags, ['risk']);
    assert.equal(older.run, abuseIpdbLookup);
    assert.deepEqual(older.credentials, engine.credentials);
    assert.deepEqual(older.types, engine.types);
    assert.deepEqual(older.defaults, engine.defaults);
  });
});

describe('provider_03 against a loopback AbuseIPDB', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(h: EngineHarness, ip: string, type: 'IPv4' | 'IPv6' = 'IPv4'): Promise<AbuseIpdbResult | null> {
    return watch.result((await h.run(ip, type)) as AbuseIpdbResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/check': byIp,
      'GET /unauthorized/check': authFailed(401, 'Authentication failed. Your API key is either missing, incorrect, or revoked. Note: The APIv2 key differs from the APIv1 key.'),
      'GET /forbidden/check': authFailed(403, `Your API key ${KEY} is not allowed to use this endpoint.`),
      'GET /bare401/check': { status: 401, body: '' },
      'GET /unprocessable/check': authFailed(422, 'The ip address must be a valid IPv4 or IPv6 address (e.g. 8.8.8.8 or 2001:4860:4860::8888).'),
      'GET /status500/check': reply.status(500, { errors: [{ detail: 'Internal Server Error', status: 500 }] }),
      'GET /flaky/check': sequence(
        { ...authFailed(429, 'Daily rate limit of 1000 requests exceeded for this endpoint.'), headers: { 'retry-after': '1' } },
        byIp,
      ),
      'GET /malformed/check': reply.malformed(),
      'GET /no-data/check': reply.json({ errors: [] }),
      // Issue 26: a count as numeric text ('1532') is read; text that is no number is not.
      'GET /wrong-shape/check': reply.json({ data: { ...TOR_EXIT.data, totalReports: 'many' } }),
      'GET /hang/check': reply.hang(),
      ...fakeRoutes(),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('the result, field by field', async () => {
    fake.reset();
    const result = await run(harness('ok'), '185.220.101.1');
    assert.ok(result);
    assert.equal(result.ip_address, '185.220.101.1');
    assert.equal(result.reports, 1532);
    assert.equal(result.risk_score, 100);
    assert.equal(result.is_whitelisted, false);
    assert.equal(result.country_code, 'DE');
    assert.equal(result.country_name, 'Germany');
    assert.equal(result.usage_type, 'Data Center/Web Hosting/Transit');
    assert.equal(result.isp, 'Tor Exit');
    assert.equal(result.domain, 'example.org');
    assert.deepEqual(result.hostnames, ['tor-exit.example.org']);
    assert.equal(result.is_tor, true);
    assert.equal(result.last_reported_at, '2026-01-10T08:00:00+00:00');
    assert.equal(result.link, 'https://www.abuseipdb.com/check/185.220.101.1');
    assert.deepEqual(Object.keys(result), [
      'ip_address', 'reports', 'risk_score', 'is_whitelisted', 'country_code', 'country_name', 'usage_type', 'isp',
      'domain', 'hostnames', 'is_tor', 'last_reported_at', 'link',
    ]);
    assert.equal(engine.summary(result), 'risk 100 · 1532 reports, last 2026-01-10 · Tor · DE · Data Center/Web Hosting/Transit · Tor Exit');
  });

  test('details: score, reports, last report, Tor, country, usage, ISP, domain, hostnames, the check page on AbuseIPDB', async () => {
    const result = await run(harness('ok'), '185.220.101.1');
    assert.ok(result);
    assert.deepEqual(engine.details!(result, '185.220.101.1'), [
      { label: 'Confidence score', value: '100' },
      { label: 'Reports', value: '1532' },
      { label: 'Last reported', value: '2026-01-10T08:00:00+00:00' },
      { label: 'Tor exit node', value: 'yes' },
      { label: 'Country', value: 'Germany (DE)' },
      { label: 'Usage type', value: 'Data Center/Web Hosting/Transit' },
      { label: 'ISP', value: 'Tor Exit' },
      { label: 'Domain', value: 'example.org' },
      { label: 'Hostnames', value: 'tor-exit.example.org' },
      { label: 'Open in AbuseIPDB', value: 'https://www.abuseipdb.com/check/185.220.101.1', href: 'https://www.abuseipdb.com/check/185.220.101.1' },
    ]);
    assert.ok(!JSON.stringify(engine.details!(result, '185.220.101.1')).includes(KEY));
    // Never reported, whitelisted, no country: no "Last reported", no Tor line, no "Unknown".
    const quiet = { ...result, reports: 0, risk_score: 0, last_reported_at: null, is_tor: false, is_whitelisted: true, country_code: '', country_name: 'Unknown' };
    assert.deepEqual(abuseIpdbDetails(quiet).slice(0, 4).map((f) => [f.label, f.value]), [
      ['Confidence score', '0'], ['Reports', '0'], ['Whitelisted', 'yes'], ['Usage type', 'Data Center/Web Hosting/Transit'],
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to abuseIpdbDetails's type).
    assert.equal(engine.details, abuseIpdbDetails);
  });

  test('the request: GET /check?ipAddress=<ip>, the key in the Key header only', async () => {
    fake.reset();
    await run(harness('ok'), '185.220.101.1');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, '/ok/check');
    assert.deepEqual([...req!.query.entries()], [['ipAddress', '185.220.101.1']]);
    assert.equal(req!.headers.key, KEY);
    assert.equal(req!.headers.accept, 'application/json');
    const elsewhere = Object.entries(req!.headers).filter(([name, value]) => name !== 'key' && String(value).includes(KEY));
    assert.deepEqual(elsewhere, []);
  });

  test('IPv6, never reported: the documented empty result (zero reports, no last report)', async () => {
    fake.reset();
    const result = await run(harness('ok'), '2001:4860:4860::8888', 'IPv6');
    assert.deepEqual(result, {
      ip_address: '2001:4860:4860::8888',
      reports: 0,
      risk_score: 0,
      is_whitelisted: true,
      country_code: 'US',
      country_name: 'United States',
      usage_type: 'Content Delivery Network',
      isp: 'Google LLC',
      domain: 'google.com',
      hostnames: ['dns.google'],
      is_tor: false,
      last_reported_at: null,
      link: 'https://www.abuseipdb.com/check/2001:4860:4860::8888',
    });
    assert.equal(fake.requests[0]!.query.get('ipAddress'), '2001:4860:4860::8888');
  });

  test('quirk fixed: upstream nulls get the documented defaults (the reference kept null)', async () => {
    const result = await run(harness('ok'), '203.0.113.9');
    assert.ok(result);
    assert.equal(result.is_whitelisted, false);
    assert.equal(result.country_code, '');
    assert.equal(result.country_name, 'Unknown');
    assert.equal(result.usage_type, '');
    assert.equal(result.isp, '');
    assert.equal(result.domain, '');
    assert.deepEqual(result.hostnames, []);
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('401: "HTTP 401 Unauthorized" with AbuseIPDB\'s reason', async () => {
    await watch.rejectsWith(
      harness('unauthorized', { retries: 0 }).run('185.220.101.1', 'IPv4'),
      /^HTTP 401 Unauthorized: Authentication failed\. Your API key is either missing, incorrect, or revoked\./,
      { type: HttpStatusError },
    );
  });

  test('401 without a body: "HTTP 401 Unauthorized"', async () => {
    await watch.rejectsWith(harness('bare401', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^HTTP 401 Unauthorized$/);
  });

  test('403 whose reason quotes the key: the key is masked', async () => {
    await watch.rejectsWith(
      harness('forbidden', { retries: 0 }).run('185.220.101.1', 'IPv4'),
      /^HTTP 403 Forbidden: Your API key \*\*\* is not allowed to use this endpoint\.$/,
    );
  });

  test('422 (address rejected): an error with the reason', async () => {
    await watch.rejectsWith(harness('unprocessable', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^HTTP 422 Unprocessable Entity: The ip address must be a valid/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 2, timeout_ms: 5000 }), '185.220.101.1');
    assert.equal(result?.reports, 1532);
    assert.equal(fake.hits('GET /flaky/check').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('an answer without data: an error (the reference returned null)', async () => {
    await watch.rejectsWith(harness('no-data', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^unexpected answer from upstream at data: /);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^unexpected answer from upstream at data\.totalReports: /);
  });

  test('minimal answer: data with nothing in it, every field its documented default', async () => {
    for (const data of [{}, { ipAddress: '192.0.2.44' }]) {
      fake.route('GET /minimal/check', reply.json({ data }));
      const result = await run(harness('minimal'), '192.0.2.44');
      assert.deepEqual(result, {
        ip_address: '192.0.2.44',
        reports: 0,
        risk_score: 0,
        is_whitelisted: false,
        country_code: '',
        country_name: 'Unknown',
        usage_type: '',
        isp: '',
        domain: '',
        hostnames: [],
        is_tor: false,
        last_reported_at: null,
        link: 'https://www.abuseipdb.com/check/192.0.2.44',
      });
      assert.equal(abuseIpdbEvidence(result)?.level, 'clean');
    }
  });

  test('degenerate forms: flags as 0/1/"", counts as text, "" and null strings, one host name for the list', async () => {
    fake.route('GET /odd/check', reply.json({
      data: {
        isWhitelisted: '', abuseConfidenceScore: '80', countryCode: '', usageType: null, isp: 'Tor Exit', domain: '',
        hostnames: 'tor-exit.example.org', isTor: 1, totalReports: '12', lastReportedAt: '',
      },
    }));
    assert.deepEqual(await run(harness('odd'), '185.220.101.1'), {
      ip_address: '185.220.101.1',
      reports: 12,
      risk_score: 80,
      is_whitelisted: false,
      country_code: '',
      country_name: 'Unknown',
      usage_type: '',
      isp: 'Tor Exit',
      domain: '',
      hostnames: ['tor-exit.example.org'],
      is_tor: true,
      last_reported_at: '', // as sent (issue 32; it was null before)
      link: 'https://www.abuseipdb.com/check/185.220.101.1',
    });
    fake.route('GET /odd/check', reply.json({ data: { hostnames: [null, 'a.example', null], isTor: 0, isWhitelisted: 'true', totalReports: '' } }));
    const result = await run(harness('odd'), '185.220.101.1');
    assert.deepEqual([result?.hostnames, result?.is_tor, result?.is_whitelisted, result?.reports], [['a.example'], false, true, 0]);
  });

  test('data that is no object: an error naming it', async () => {
    fake.route('GET /odd/check', reply.json({ data: null }));
    await watch.rejectsWith(harness('odd', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^unexpected answer from upstream at data: /);
    fake.route('GET /odd/check', reply.json({ data: [] }));
    await watch.rejectsWith(harness('odd', { retries: 0 }).run('185.220.101.1', 'IPv4'), /^unexpected answer from upstream at data: expected a JSON object$/);
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('185.220.101.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('RU: the shared country names (Node\'s ICU names, not pycountry\'s "Russian Federation")', async () => {
    fake.route('GET /russia/check', reply.json({ data: { ...TOR_EXIT.data, ipAddress: '95.213.0.1', countryCode: 'ru' } }));
    const result = await run(harness('russia'), '95.213.0.1');
    assert.equal(result?.country_code, 'RU');
    assert.equal(result?.country_name, 'Russia');
  });

  test('called directly without a key: refused before any request', async () => {
    fake.reset();
    const keyless = harness('ok', { api_key: undefined, retries: 0 });
    await rejectsWith(keyless.run('185.220.101.1', 'IPv4'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('the shared fake: a full answer for any address; a request without the key refused (401)', async () => {
    const h = harness('', { ...fakeSettings(fake.url), retries: 0 });
    const result = await run(h, '198.51.100.23');
    assert.equal(result?.ip_address, '198.51.100.23');
    assert.equal(result?.country_name, 'Netherlands');
    assert.equal(result?.reports, 214);
    const { base_url: base } = fakeSettings(fake.url) as { base_url: string };
    const keyless = await fetch(`${base}/check?ipAddress=198.51.100.23`);
    assert.equal(keyless.status, 401);
    assert.match(JSON.stringify(await keyless.json()), /Authentication failed/);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(10);
  });
});

describe('provider_03 through the runner', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    fake = await startFakeHttp({ 'GET /check': byIp, 'GET /bad-key/check': authFailed(401, `Invalid key ${KEY}`) });
    dns = await startFakeDns({
      'tor.example': { A: ['185.220.101.1'] },
      'v6.example': { AAAA: ['2001:4860:4860::8888'] },
    });
    runner = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_03: { base_url: fake.url, api_key: KEY, retries: 0 } } });
  });
  after(async () => {
    await runner.close();
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain: AbuseIPDB asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'tor.example', type: 'FQDN' }], ['abuseipdb']);
    assert.equal(result!.reversed_ip, '185.220.101.1');
    const abuse = result!.abuseipdb as AbuseIpdbResult;
    assert.equal(abuse.ip_address, '185.220.101.1');
    assert.equal(abuse.risk_score, 100);
    assert.deepEqual(fake.requests.map((r) => r.query.get('ipAddress')), ['185.220.101.1']);
    assert.equal(fake.requests[0]!.headers.key, KEY);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });

  test('a domain with IPv6 only: the IPv6 address', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'v6.example', type: 'FQDN' }], ['provider_03']);
    assert.equal(result!.reversed_ip, '2001:4860:4860::8888');
    assert.equal((result!.provider_03 as AbuseIpdbResult).reports, 0);
  });

  test('no key configured: "not configured: api_key", AbuseIPDB not called', async () => {
    fake.reset();
    const keyless = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_03: { base_url: fake.url } } });
    try {
      const [ip, domain] = await keyless.analyze(
        [{ value: '185.220.101.1', type: 'IPv4' }, { value: 'tor.example', type: 'FQDN' }],
        ['provider_03'],
      );
      assert.equal(ip!.provider_03, null);
      assert.deepEqual(ip!.errors, { provider_03: 'not configured: engines.provider_03.api_key or OAS_ABUSEIPDB_API_KEY' });
      assert.deepEqual(domain!.errors, { provider_03: 'not configured: engines.provider_03.api_key or OAS_ABUSEIPDB_API_KEY' });
      assert.equal(fake.requests.length, 0);
    } finally {
      await keyless.close();
    }
  });

  test('a bad key: the error is reported, without the key', async () => {
    const bad = runnerHarness([engine], { settings: { provider_03: { base_url: `${fake.url}/bad-key`, api_key: KEY, retries: 0 } } });
    try {
      const [result] = await bad.analyze([{ value: '185.220.101.1', type: 'IPv4' }], ['provider_03']);
      assert.equal(result!.provider_03, null);
      assert.deepEqual(result!.errors, { provider_03: 'HTTP 401 Unauthorized: Invalid key *** (key refused: check engines.provider_03.api_key or OAS_ABUSEIPDB_API_KEY)' });
      assert.ok(!JSON.stringify(result).includes(KEY));
    } finally {
      await bad.close();
    }
  });
});
