import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import engine, { webscoutDetails, webscoutLookup, webscoutSummary, type WebscoutResult } from '../../engines/webscout.js';
import badAsn, { type BadAsnListed } from '../../engines/bad_asn.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { startFakeBadAsn, type FakeBadAsn } from '../fakes/bad-asn.js';
import { fakeRoutes, fakeSettings, webscoutAnswer } from '../fakes/webscout.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { KeyWatch, describeIpFake, prefixHarnesses } from '../helpers/key-watch.js';
import { answeringUpstream } from '../helpers/answers.js';

const KEY = 'SECRET-KEY-1234567890';

/** engines.md 5.30's upstream example. */
const CLOUDFLARE = webscoutAnswer('1.1.1.1');

/** engines.md 5.30's result for it, exactly. */
const CLOUDFLARE_RESULT: WebscoutResult = {
  ip: '1.1.1.1', risk_score: null, is_proxy: false, is_tor: false, is_vpn: false, country_code: 'US',
  country_name: 'United States', location: 'United States, Los Angeles', hostnames: ['one.one.one.one'], domains_on_ip: null,
  network_type: 'hosting', network_provider: 'Cloudflare, Inc.', network_service: 'CDN', network_service_region: 'us-west',
  network_provider_services: ['CDN', 'DNS'], behavior: ['scanner', 'botnet'], as_org: 'CLOUDFLARENET', asn: 'AS13335',
  description: 'Web infrastructure and security company',
};

/** A NordVPN exit on M247 (an ASN the bad-ASN lists carry). */
const VPN_EXIT = {
  status: 'success',
  data: {
    ip: '146.70.117.10',
    location: { country_iso: 'GB', city: 'London' },
    network: { type: 'hosting', service: 'VPN', region: 'eu-west' },
    company: { name: 'M247 Europe SRL', business: ['Hosting', 'Colocation', 'VPN'], description: 'Hosting and connectivity provider' },
    as: { as_number: 9009, organization: 'M247 Europe SRL' },
    anonymization: { proxy: true, tor: false, vpn: true },
    osint: { services: [{ name: 'NordVPN', tags: ['vpn'] }, { name: 'honeypot', tags: ['scanner', 'vpn', 'bruteforce'] }, { tags: [] }] },
    hostnames: [],
  },
};

const GOOGLE_V6 = {
  status: 'success',
  data: {
    ip: '2001:4860:4860::8888',
    location: { country_iso: 'US', city: 'Mountain View' },
    network: { type: 'hosting', service: 'DNS', region: 'us-central' },
    company: { name: 'Google LLC', business: ['Cloud', 'DNS'], description: 'Search and cloud company' },
    as: { as_number: 15169, organization: 'GOOGLE' },
    anonymization: { proxy: false, tor: false, vpn: false },
    osint: { services: [] },
    hostnames: ['dns.google'],
  },
};

/** Sections empty or missing, as webscout answers for addresses it knows little of. */
const SPARSE = { status: 'success', data: { ip: '5.255.255.77', location: {}, network: {}, company: {}, as: {}, anonymization: {}, osint: {}, hostnames: [] } };
/** An unknown country code and an ASN given as "AS..." text. */
const ODD = { status: 'success', data: { ip: '45.155.205.66', location: { country_iso: 'ZZ', city: null }, as: { as_number: 'AS203999', organization: 'BADHOST-AS' } } };

const BY_IP: Record<string, object> = {
  '1.1.1.1': CLOUDFLARE, '146.70.117.10': VPN_EXIT, '2001:4860:4860::8888': GOOGLE_V6, '5.255.255.77': SPARSE, '45.155.205.66': ODD,
};

/** `/<prefix>/query/ip/<ip>` from BY_IP; unknown addresses get webscout's "IP not found". */
function byIp(req: FakeRequest): FakeReply {
  const ip = req.path.split('/query/ip/')[1] ?? '';
  return reply.json(BY_IP[ip] ?? { status: 'error', message: 'IP not found' });
}

const watch = new KeyWatch(KEY);

describe('provider_25 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_25');
    assert.equal(engine.service, 'webscout');
    assert.equal(engine.label, 'WebScout');
    assert.deepEqual(engine.tags, ['IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['WEBSCOUT'] }]);
    // The reference's 1 s sleep became a declared quota the runner enforces.
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.webscout.io', rate_limit: 1, rate_window_ms: 1000 });
    assert.equal(engine.run, webscoutLookup);
    assert.equal(engine.summary, webscoutSummary);
  });

  test('summary', () => {
    assert.equal(engine.summary(CLOUDFLARE_RESULT), 'AS13335 CLOUDFLARENET · United States, Los Angeles · hosting (CDN) · behaviour scanner, botnet');
    assert.equal(
      engine.summary({ ...CLOUDFLARE_RESULT, is_vpn: true, is_proxy: true, is_tor: true, behavior: [], network_service: '' }),
      'AS13335 CLOUDFLARENET · United States, Los Angeles · hosting · VPN · proxy · Tor',
    );
    assert.equal(engine.summary({
      ...CLOUDFLARE_RESULT, asn: 'Unknown', as_org: 'Unknown', location: 'Unknown, Unknown', network_type: '', behavior: [],
    }), '1.1.1.1: no data');
  });

  test('details: anonymization, behaviour, owner, network, place, names; Unknowns left out, no link', () => {
    assert.deepEqual(engine.details!(CLOUDFLARE_RESULT, '1.1.1.1'), [
      { label: 'Anonymization', value: 'none' },
      { label: 'Behaviour', value: 'scanner, botnet' },
      { label: 'Network owner', value: 'AS13335 CLOUDFLARENET' },
      { label: 'Company', value: 'Cloudflare, Inc.' },
      { label: 'Network type', value: 'hosting (CDN)' },
      { label: 'Service region', value: 'us-west' },
      { label: 'Location', value: 'United States, Los Angeles' },
      { label: 'Host names', value: 'one.one.one.one' },
      { label: 'Company services', value: 'CDN, DNS' },
      { label: 'Description', value: 'Web infrastructure and security company' },
    ]);
    // A VPN exit whose company is its AS organisation: the flags, the company not repeated.
    const vpn = webscoutDetails({ ...CLOUDFLARE_RESULT, is_vpn: true, is_proxy: true, network_provider: 'CLOUDFLARENET' });
    assert.deepEqual(vpn[0], { label: 'Anonymization', value: 'VPN, proxy' });
    assert.equal(vpn.find((f) => f.label === 'Company'), undefined);
    // webscout's sparse answer: only what is known.
    assert.deepEqual(webscoutDetails({
      ...CLOUDFLARE_RESULT, country_code: 'Unknown', country_name: 'Unknown', location: 'Unknown, Unknown', hostnames: [], network_type: '',
      network_provider: 'Unknown', network_service: '', network_service_region: '', network_provider_services: [], behavior: [],
      as_org: 'Unknown', asn: 'Unknown', description: 'Unknown',
    }), [{ label: 'Anonymization', value: 'none' }]);
    assert.ok(engine.details!(CLOUDFLARE_RESULT, '1.1.1.1').every((f) => f.href === undefined));
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, webscoutDetails);
  });
});

describe('provider_25 against a loopback webscout.io', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(prefix: string, ip: string, settings: Record<string, unknown> = {}): Promise<WebscoutResult | null> {
    return watch.result((await harness(prefix, settings).run(ip, ip.includes(':') ? 'IPv6' : 'IPv4')) as WebscoutResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': byIp,
      'GET /status500/*': reply.status(500, { status: 'error', message: 'Internal error' }),
      'GET /flaky/*': sequence(reply.tooMany(1), byIp),
      'GET /malformed/*': reply.malformed(),
      'GET /wrong-shape/*': reply.json({ ...VPN_EXIT, data: { ...VPN_EXIT.data, anonymization: { vpn: 'maybe' } } }),
      'GET /hang/*': reply.hang(),
      'GET /unauthorized/*': reply.json({ error: 'Invalid API key' }, 401),
      'GET /forbidden/*': (req) => reply.json({ status: 'error', message: `API key ${req.query.get('apikey')} has expired` }, 403),
      'GET /error-200/*': (req) => reply.json({ status: 'error', message: `Monthly quota exceeded for ${req.query.get('apikey')}` }),
      'GET /no-status/*': reply.json({ data: { ip: '1.1.1.1' } }),
      'GET /not-found-404/*': reply.json({ status: 'error', message: 'IP not found' }, 404),
      'GET /plain-404/*': { status: 404, headers: { 'content-type': 'text/plain' }, body: '404 page not found' },
    });
  });
  after(async () => {
    await fake.close();
  });

  test('engines.md\'s example, field by field', async () => {
    const result = await run('ok', '1.1.1.1');
    assert.ok(result);
    assert.equal(result.ip, '1.1.1.1');
    assert.equal(result.risk_score, null);
    assert.equal(result.is_proxy, false);
    assert.equal(result.is_tor, false);
    assert.equal(result.is_vpn, false);
    assert.equal(result.country_code, 'US');
    assert.equal(result.country_name, 'United States');
    assert.equal(result.location, 'United States, Los Angeles');
    assert.deepEqual(result.hostnames, ['one.one.one.one']);
    assert.equal(result.domains_on_ip, null);
    assert.equal(result.network_type, 'hosting');
    assert.equal(result.network_provider, 'Cloudflare, Inc.');
    assert.equal(result.network_service, 'CDN');
    assert.equal(result.network_service_region, 'us-west');
    assert.deepEqual(result.network_provider_services, ['CDN', 'DNS']);
    assert.deepEqual(result.behavior, ['scanner', 'botnet']);
    assert.equal(result.as_org, 'CLOUDFLARENET');
    assert.equal(result.asn, 'AS13335');
    assert.equal(result.description, 'Web infrastructure and security company');
    // Same keys, same order, same values as the reference's result.
    assert.deepEqual(Object.keys(result), Object.keys(CLOUDFLARE_RESULT));
    assert.deepEqual(result, CLOUDFLARE_RESULT);
  });

  test('the request: GET <base_url>/query/ip/<ip>, the key in the apikey parameter only', async () => {
    fake.reset();
    await run('ok', '1.1.1.1');
    const [req, ...more] = fake.hits('GET /ok/');
    assert.equal(more.length, 0);
    assert.equal(req!.path, '/ok/query/ip/1.1.1.1');
    assert.deepEqual([...req!.query], [['apikey', KEY]]);
    assert.match(String(req!.headers.accept), /application\/json/);
    assert.ok(!JSON.stringify(req!.headers).includes(KEY), 'no key in the headers');
  });

  test('a VPN exit: flags, behaviour de-duplicated in first-seen order, no host names', async () => {
    const result = await run('ok', '146.70.117.10');
    assert.ok(result);
    assert.equal(result.is_vpn, true);
    assert.equal(result.is_proxy, true);
    assert.equal(result.is_tor, false);
    assert.equal(result.country_name, 'United Kingdom');
    assert.deepEqual(result.behavior, ['vpn', 'scanner', 'bruteforce']);
    assert.deepEqual(result.hostnames, []);
    assert.equal(result.asn, 'AS9009');
    assert.equal(result.as_org, 'M247 Europe SRL');
    assert.equal(engine.summary(result), 'AS9009 M247 Europe SRL · United Kingdom, London · hosting (VPN) · VPN · proxy · behaviour vpn, scanner, bruteforce');
  });

  test('IPv6', async () => {
    fake.reset();
    const result = await run('ok', '2001:4860:4860::8888');
    assert.equal(result?.ip, '2001:4860:4860::8888');
    assert.equal(result?.asn, 'AS15169');
    assert.deepEqual(result?.behavior, []);
    assert.equal(fake.hits('GET /ok/')[0]!.path, '/ok/query/ip/2001:4860:4860::8888');
  });

  test('sparse data: the reference\'s defaults (Unknown, "", [])', async () => {
    const result = await run('ok', '5.255.255.77');
    assert.deepEqual(result, {
      ip: '5.255.255.77', risk_score: null, is_proxy: false, is_tor: false, is_vpn: false, country_code: 'Unknown',
      country_name: 'Unknown', location: 'Unknown, Unknown', hostnames: [], domains_on_ip: null, network_type: '',
      network_provider: 'Unknown', network_service: '', network_service_region: '', network_provider_services: [],
      behavior: [], as_org: 'Unknown', asn: 'Unknown', description: 'Unknown',
    });
  });

  test('an unknown country code keeps its code; an ASN given as "AS…" is not prefixed twice', async () => {
    const result = await run('ok', '45.155.205.66');
    assert.equal(result?.country_code, 'ZZ');
    assert.equal(result?.country_name, 'Unknown');
    assert.equal(result?.location, 'Unknown, Unknown');
    assert.equal(result?.asn, 'AS203999');
    assert.equal(result?.as_org, 'BADHOST-AS');
  });

  test('not found: webscout\'s "IP not found" is null (status 200 or 404)', async () => {
    assert.equal(await run('ok', '9.9.9.9'), null);
    assert.equal(await run('not-found-404', '9.9.9.9'), null);
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('no key: an error before any request', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('1.1.1.1', 'IPv4'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 401: a clear error with webscout\'s reason', async () => {
    await watch.rejectsWith(harness('unauthorized', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 401 Unauthorized: Invalid API key$/);
  });

  test('HTTP 403: the reason, with the echoed key masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 403 Forbidden: API key \*\*\* has expired$/);
  });

  test('status "error" with 200: an error with the message, key masked (the reference returned null)', async () => {
    await watch.rejectsWith(harness('error-200', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^webscout\.io: Monthly quota exceeded for \*\*\*$/);
    await watch.rejectsWith(harness('no-status', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^webscout\.io: status missing$/);
  });

  test('another 404 (a wrong base_url): an error', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 404 Not Found\b/);
    await watch.rejectsWith(harness('plain-404', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 404 Not Found: 404 page not found$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('GET /status500/').length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run('flaky', '1.1.1.1', { retries: 2, timeout_ms: 5000 });
    assert.deepEqual(result, CLOUDFLARE_RESULT);
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('146.70.117.10', 'IPv4'), /^unexpected answer from upstream at data\.anonymization\.vpn: /);
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('1.1.1.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a request failing on the network: no key in the error', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('1.1.1.1', 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(20);
  });
});

describe('provider_25 minimal and degenerate answers (issue 26)', () => {
  const { run } = answeringUpstream(engine, 'GET /lenient/*', ['203.0.113.9', 'IPv4'], { key: KEY, watch });
  /** The reference's defaults, for an address webscout says nothing about. */
  const DEFAULTS: WebscoutResult = {
    ip: '203.0.113.9', risk_score: null, is_proxy: false, is_tor: false, is_vpn: false, country_code: 'Unknown',
    country_name: 'Unknown', location: 'Unknown, Unknown', hostnames: [], domains_on_ip: null, network_type: '',
    network_provider: 'Unknown', network_service: '', network_service_region: '', network_provider_services: [],
    behavior: [], as_org: 'Unknown', asn: 'Unknown', description: 'Unknown',
  };

  test('the minimal answer, {"status": "success"}: every field at its default', async () => {
    assert.deepEqual(await run({ status: 'success' }), DEFAULTS);
    assert.deepEqual(await run({ status: 'success', data: null }), DEFAULTS);
    assert.deepEqual(await run({ status: 'success', data: {} }), DEFAULTS);
  });

  test('anonymization flags sent as 0 or "" are false, as 1 or "true" true', async () => {
    assert.deepEqual(await run({ status: 'success', data: { anonymization: { proxy: 0, tor: '', vpn: null } } }), DEFAULTS);
    assert.deepEqual(await run({ status: 'success', data: { anonymization: { proxy: 1, tor: 'true', vpn: '1' } } }), {
      ...DEFAULTS, is_proxy: true, is_tor: true, is_vpn: true,
    });
  });

  test('every section null, every field null or "" (texts sent as "" kept, issue 32)', async () => {
    assert.deepEqual(await run({ status: 'success', data: { ip: null, location: null, network: null, company: null, as: null, anonymization: null, osint: null, hostnames: null } }), DEFAULTS);
    // The texts sent as "" are what webscout said: kept, as the reference (they were the defaults
    // before issue 32); only country_code reads "" as Unknown, as the reference does.
    const result = await run({
      status: 'success',
      data: {
        ip: '', location: { country_iso: '', city: '' }, network: { type: '', service: null, region: '' },
        company: { name: '', business: '', description: null }, as: { as_number: '', organization: '' },
        anonymization: {}, osint: { services: null }, hostnames: '',
      },
    }) as WebscoutResult;
    assert.deepEqual(result, { ...DEFAULTS, ip: '', location: 'Unknown, ', network_provider: '', as_org: '' });
    assert.equal(engine.summary(result), 'no data');
    assert.deepEqual(engine.details!(result, '203.0.113.9'), [{ label: 'Anonymization', value: 'none' }]);
  });

  test('one value in place of a list; null entries and tags', async () => {
    assert.deepEqual(await run({
      status: 'success',
      data: {
        company: { business: 'Hosting' },
        osint: { services: [null, { tags: 'scanner' }, { tags: null }, {}, { tags: ['scanner', null, 'botnet'] }] },
        hostnames: 'host.example.net',
      },
    }), { ...DEFAULTS, network_provider_services: ['Hosting'], behavior: ['scanner', 'botnet'], hostnames: ['host.example.net'] });
    assert.deepEqual(await run({ status: 'success', data: { osint: { services: { tags: ['vpn'] } } } }), { ...DEFAULTS, behavior: ['vpn'] });
  });

  test('what cannot be read still fails: no status, a flag that is no boolean, a list of objects for host names', async () => {
    await watch.rejectsWith(run({ data: { ip: '203.0.113.9' } }), /^webscout\.io: status missing$/);
    await watch.rejectsWith(run({ status: 'success', data: { anonymization: { tor: { exit: true } } } }), /^unexpected answer from upstream at data\.anonymization\.tor/);
    await watch.rejectsWith(run({ status: 'success', data: { hostnames: [{ name: 'a' }] } }), /^unexpected answer from upstream at data\.hostnames\.0/);
  });

  // Recorded after the suite's own key check ran: checked again, with these answers' results.
  test('the key appears in none of these results or errors either', () => {
    watch.assertNoKey(20);
  });
});

describeIpFake<WebscoutResult>({
  engine,
  key: KEY,
  start: () => startFakeHttp(fakeRoutes()),
  settings: fakeSettings,
  check: (result, ip) => assert.deepEqual(result, { ...CLOUDFLARE_RESULT, ip }),
  keyOf: (r) => r.query.get('apikey'),
});

describe('provider_25 through the runner', () => {
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
        // A generous quota so that the runner does not pace these few calls at one per second.
        provider_25: { base_url: `${fake.url}/ok`, retries: 0, rate_limit: 100, ...settings },
        bad_asn: { ...lists.settings, retries: 0 },
      },
    });
    runners.push(r);
    return r;
  }

  before(async () => {
    fake = await startFakeHttp({ 'GET /ok/*': byIp });
    dns = await startFakeDns({
      'one.example': { A: ['1.1.1.1'] },
      'vpn.example': { A: ['146.70.117.10'] },
      'sparse.example': { A: ['5.255.255.77'] },
    });
    lists = await startFakeBadAsn();
    dataDir = mkdtempSync(join(tmpdir(), 'oas-provider25-'));
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await Promise.all([fake.close(), dns.close(), lists.http.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a domain: webscout asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: 'one.example', type: 'FQDN' }], ['webscout']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    assert.deepEqual(result!.webscout, CLOUDFLARE_RESULT);
    assert.deepEqual(fake.requests.map((r) => r.path), ['/ok/query/ip/1.1.1.1']);
    assert.equal(result!.errors, undefined);
  });

  test('no key configured: "not configured: api_key", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({}).analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['provider_25']);
    assert.equal(result!.provider_25, null);
    assert.deepEqual(result!.errors, { provider_25: 'not configured: engines.provider_25.api_key or OAS_WEBSCOUT_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('bad_asn reads asn and as_org from webscout\'s result', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: 'vpn.example', type: 'FQDN' }], ['provider_25', 'bad_asn']);
    assert.equal(result!.reversed_ip, '146.70.117.10');
    assert.equal((result!.provider_25 as WebscoutResult).asn, 'AS9009');
    const verdict = result!.bad_asn as BadAsnListed;
    assert.equal(verdict.status, 'malicious');
    assert.equal(verdict.asn, '9009');
    assert.equal(verdict.asn_org_name, 'M247 Europe SRL');
    assert.match(verdict.source, /M247/);
    assert.equal(result!.errors, undefined);
    assert.equal(fake.requests.length, 1);
  });

  test('bad_asn alone runs webscout unreported', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['bad_asn']);
    assert.deepEqual(result!.bad_asn, { status: 'unlisted', asn: '13335', details: 'ASN 13335 is not listed in bad ASN databases' });
    assert.equal(result!.provider_25, undefined);
    assert.equal(fake.requests.length, 1);
  });

  test('webscout\'s "Unknown" ASN is no ASN for bad_asn: it says so', async () => {
    const [result] = await runner().analyze([{ value: 'sparse.example', type: 'FQDN' }], ['provider_25', 'bad_asn']);
    assert.equal((result!.provider_25 as WebscoutResult).asn, 'Unknown');
    assert.equal(result!.bad_asn, null);
    assert.equal(result!.errors!.bad_asn, 'no ASN available: provider_25 gave none');
  });
});
