import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { criminalIpDetails, criminalIpLookup, type CriminalIpResult } from '../../engines/criminalip.js';
import { HttpStatusError } from '../../src/http/errors.js';
import { fakeRoutes, fakeSettings } from '../fakes/criminalip.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import type { EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';

/** Criminal IP's suspicious-info answer for 1.1.1.1 (engines.md 5.6), with keys the result drops. */
const CLOUDFLARE = {
  status: 200,
  ip: '1.1.1.1',
  abuse_record_count: 5,
  score: { inbound: 'Low', outbound: 'Safe' },
  issues: {
    is_anonymous_vpn: false, is_cloud: true, is_darkweb: false, is_hosting: false, is_mobile: false,
    is_proxy: false, is_scanner: false, is_snort: false, is_tor: false, is_vpn: false,
  },
  current_opened_port: {
    count: 1,
    data: [{
      port: 443, is_vulnerability: false, product_name: 'nginx', product_version: '1.20', protocol: 'https',
      socket_type: 'tcp', confirmed_time: '2025-01-01 00:00:00', has_vulnerability: false, app_name: 'Cloudflare',
    }],
  },
  ids: { count: 0, data: [] },
  whois: {
    count: 1,
    data: [{
      as_name: 'CLOUDFLARENET', as_no: 13335, city: 'San Francisco', region: 'California', org_name: 'Cloudflare Inc.',
      postal_code: '94107', latitude: 37.77, longitude: -122.42, org_country_code: 'US', confirmed_time: '2025-01-01 00:00:00',
    }],
  },
  representative_domain: 'cloudflare.com',
  vpn: { count: 0, data: [] },
  hosting: { count: 1, data: [{ hosting_name: 'Cloudflare' }] },
  mobile: { count: 0, data: [] },
};

/** A scanner seen by Criminal IP's IDS, with a score level the reference's enum did not know. */
const SCANNER = {
  status: 200,
  ip: '45.148.10.81',
  abuse_record_count: 212,
  score: { inbound: 'Critical', outbound: 'Very Dangerous' },
  issues: {
    is_anonymous_vpn: false, is_cloud: false, is_darkweb: false, is_hosting: true, is_mobile: false,
    is_proxy: true, is_scanner: true, is_snort: true, is_tor: false, is_vpn: false,
  },
  current_opened_port: {
    count: 2,
    data: [
      { port: 22, is_vulnerability: true, product_name: 'OpenSSH', product_version: '7.4', protocol: 'ssh', socket_type: 'tcp', confirmed_time: '2025-12-30 10:00:00' },
      { port: 3389, protocol: 'rdp', socket_type: 'tcp' },
    ],
  },
  ids: {
    count: 1,
    data: [{
      classification: 'Attempted Information Leak', confirmed_time: '2025-12-31 03:11:52',
      message: 'ET SCAN Suspicious inbound to mySQL port 3306', source_system: 'Criminal IP IDS', url: 'https://www.criminalip.io/asset/report/45.148.10.81',
    }],
  },
  whois: { data: [{ as_name: 'TECHOFF SRV LIMITED', as_no: 48090, org_country_code: 'NL' }] },
  representative_domain: '',
};

/** What Criminal IP says about an address it knows nothing of (engines.md 5.6). */
const MINIMAL = { status: 200, ip: '192.0.2.77', abuse_record_count: 0 };

const BY_IP: Record<string, object> = { '1.1.1.1': CLOUDFLARE, '45.148.10.81': SCANNER, '192.0.2.77': MINIMAL };

function byIp(req: FakeRequest): FakeReply {
  return reply.json(BY_IP[req.query.get('ip') ?? ''] ?? CLOUDFLARE);
}

const PATH = 'feature/ip/suspicious-info';
/** Every result and error message a test saw: none may contain the key. */
const watch = new KeyWatch(KEY);

describe('provider_05 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_05');
    assert.equal(engine.service, 'criminalip');
    assert.equal(engine.label, 'Criminal IP');
    assert.deepEqual(engine.tags, ['IP']);
    assert.deepEqual(engine.types, ['IPv4']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['CRIMINALIP_API_KEY'] }]);
    assert.equal(engine.run, criminalIpLookup);
  });

  test('bug fixed: a timeout (the reference had none), the real API address, the free quota', () => {
    assert.deepEqual(engine.defaults, {
      timeout_ms: 5000,
      base_url: 'https://api.criminalip.io/v2',
      rate_limit: 50,
      rate_window_ms: 30 * 86_400_000,
    });
  });

  test('summary: score, abuse records, ports, IDS events, owner, issues', () => {
    const minimal: CriminalIpResult = {
      status: 200, abuse_record_count: 0, current_opened_port: null, ids: null, ip: '192.0.2.77', issues: null,
      representative_domain: '', score: null, whois: null,
    };
    assert.equal(engine.summary(minimal), '0 abuse records');
  });
});

describe('provider_05 against a loopback Criminal IP', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(h: EngineHarness, ip: string): Promise<CriminalIpResult | null> {
    return watch.result((await h.run(ip, 'IPv4')) as CriminalIpResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      [`GET /ok/${PATH}`]: byIp,
      [`GET /unauthorized/${PATH}`]: reply.status(401, { status: 401, message: 'unauthorized api key' }),
      [`GET /forbidden/${PATH}`]: reply.status(403, { status: 403, message: `api key ${KEY} has no access to this endpoint` }),
      [`GET /bare403/${PATH}`]: { status: 403, body: '<html><body>Forbidden</body></html>', headers: { 'content-type': 'text/html' } },
      [`GET /body401/${PATH}`]: reply.json({ status: 401, message: `invalid api key: ${KEY}` }),
      [`GET /body-quota/${PATH}`]: reply.json({ status: 429, message: 'Your credits for this month have run out.' }),
      [`GET /status500/${PATH}`]: reply.status(500, { status: 500, message: 'internal server error' }),
      [`GET /flaky/${PATH}`]: sequence(reply.tooMany(1), byIp),
      [`GET /malformed/${PATH}`]: reply.malformed(),
      [`GET /no-status/${PATH}`]: reply.json({ ip: '1.1.1.1', abuse_record_count: 5 }),
      [`GET /no-count/${PATH}`]: reply.json({ ...CLOUDFLARE, ids: { data: [] } }),
      [`GET /hang/${PATH}`]: reply.hang(),
      ...fakeRoutes(),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('the result, field by field (unknown keys dropped)', async () => {
    fake.reset();
    const result = await run(harness('ok'), '1.1.1.1');
    assert.ok(result);
    assert.equal(result.status, 200);
    assert.equal(result.abuse_record_count, 5);
    assert.deepEqual(result.current_opened_port, {
      count: 1,
      data: [{
        port: 443, is_vulnerability: false, product_name: 'nginx', product_version: '1.20', protocol: 'https',
        socket_type: 'tcp', confirmed_time: '2025-01-01 00:00:00',
      }],
    });
    assert.deepEqual(result.ids, { count: 0, data: [] });
    assert.equal(result.ip, '1.1.1.1');
    assert.deepEqual(result.issues, CLOUDFLARE.issues);
    assert.equal(result.representative_domain, 'cloudflare.com');
    assert.deepEqual(result.score, { inbound: 'Low', outbound: 'Safe' });
    assert.deepEqual(result.whois, CLOUDFLARE.whois);
    assert.deepEqual(Object.keys(result).sort(), [
      'abuse_record_count', 'current_opened_port', 'ids', 'ip', 'issues', 'representative_domain', 'score', 'status', 'whois',
    ]);
    assert.equal(engine.summary(result), 'inbound Low, outbound Safe · 5 abuse records · 1 open port · AS13335 CLOUDFLARENET, US · cloud');
  });

  test('the request: GET /v2/feature/ip/suspicious-info?ip=<ip>, the key in x-api-key only', async () => {
    fake.reset();
    await run(harness('ok'), '1.1.1.1');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, `/ok/${PATH}`);
    assert.deepEqual([...req!.query.entries()], [['ip', '1.1.1.1']]);
    assert.equal(req!.headers['x-api-key'], KEY);
    const elsewhere = Object.entries(req!.headers).filter(([name, value]) => name !== 'x-api-key' && String(value).includes(KEY));
    assert.deepEqual(elsewhere, []);
  });

  test('partial entries get null fields; whois.count defaults to 0; any score level is kept', async () => {
    const result = await run(harness('ok'), '45.148.10.81');
    assert.ok(result);
    assert.deepEqual(result.score, { inbound: 'Critical', outbound: 'Very Dangerous' });
    assert.deepEqual(result.current_opened_port!.data[1], {
      port: 3389, is_vulnerability: null, product_name: null, product_version: null, protocol: 'rdp', socket_type: 'tcp', confirmed_time: null,
    });
    assert.equal(result.ids!.count, 1);
    assert.equal(result.ids!.data[0]!.classification, 'Attempted Information Leak');
    assert.equal(result.whois!.count, 0);
    assert.deepEqual(result.whois!.data[0], {
      as_name: 'TECHOFF SRV LIMITED', as_no: 48090, city: null, region: null, org_name: null, postal_code: null,
      latitude: null, longitude: null, org_country_code: 'NL', confirmed_time: null,
    });
    assert.equal(result.representative_domain, '');
    assert.equal(
      engine.summary(result),
      'inbound Critical, outbound Very Dangerous · 212 abuse records · 2 open ports · 1 IDS event · AS48090 TECHOFF SRV LIMITED, NL · proxy · scanner · IDS alerts · hosting',
    );
  });

  test('details: risk, abuse records, flags, ports, IDS alert, owner, then the report page', async () => {
    const result = await run(harness('ok'), '45.148.10.81');
    assert.ok(result);
    assert.deepEqual(engine.details!(result, '45.148.10.81'), [
      { label: 'Inbound risk', value: 'Critical' },
      { label: 'Outbound risk', value: 'Very Dangerous' },
      { label: 'Abuse records', value: '212' },
      { label: 'Flags', value: 'proxy, scanner, IDS alerts, hosting' },
      { label: 'Open ports', value: '22/tcp ssh (OpenSSH 7.4, vulnerable), 3389/tcp rdp' },
      { label: 'IDS events', value: '1' },
      {
        label: 'IDS alert',
        value: 'ET SCAN Suspicious inbound to mySQL port 3306 (Attempted Information Leak) 2025-12-31 03:11:52',
        href: 'https://www.criminalip.io/asset/report/45.148.10.81',
      },
      { label: 'AS', value: 'AS48090 TECHOFF SRV LIMITED' },
      { label: 'Location', value: 'NL' },
      { label: 'Open in Criminal IP', value: 'https://www.criminalip.io/asset/report/45.148.10.81', href: 'https://www.criminalip.io/asset/report/45.148.10.81' },
    ]);
    // An address Criminal IP knows nothing of: the abuse count and the link only.
    const minimal = await run(harness('ok'), '192.0.2.77');
    assert.deepEqual(criminalIpDetails(minimal!, '192.0.2.77'), [
      { label: 'Abuse records', value: '0' },
      { label: 'Open in Criminal IP', value: 'https://www.criminalip.io/asset/report/192.0.2.77', href: 'https://www.criminalip.io/asset/report/192.0.2.77' },
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, criminalIpDetails);
  });

  test('an address Criminal IP knows nothing of: the documented result with null sections', async () => {
    assert.deepEqual(await run(harness('ok'), '192.0.2.77'), {
      status: 200,
      abuse_record_count: 0,
      current_opened_port: null,
      ids: null,
      ip: '192.0.2.77',
      issues: null,
      representative_domain: '',
      score: null,
      whois: null,
    });
  });

  test('IPv6 and non-IP values: null, nothing asked (the API takes IPv4 only)', async () => {
    fake.reset();
    const h = harness('ok');
    assert.equal(await h.run('2606:4700:4700::1111', 'IPv6'), null);
    assert.equal(await h.run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 401: "HTTP 401 Unauthorized" with Criminal IP\'s message', async () => {
    await watch.rejectsWith(harness('unauthorized', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 401 Unauthorized: unauthorized api key$/, { type: HttpStatusError });
  });

  test('HTTP 403 whose message quotes the key: the key is masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 403 Forbidden: api key \*\*\* has no access to this endpoint$/);
  });

  test('HTTP 403 with an HTML page: "HTTP 403 Forbidden"', async () => {
    await watch.rejectsWith(harness('bare403', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 403 Forbidden$/);
  });

  test('status 401 inside a 200 answer: an error, the key masked', async () => {
    await watch.rejectsWith(harness('body401', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^Criminal IP answered status 401 Unauthorized: invalid api key: \*\*\*$/);
  });

  test('an exhausted plan reported inside a 200 answer: an error with the message', async () => {
    await watch.rejectsWith(
      harness('body-quota', { retries: 0 }).run('1.1.1.1', 'IPv4'),
      /^Criminal IP answered status 429 Too Many Requests: Your credits for this month have run out\.$/,
    );
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 2, timeout_ms: 5000 }), '1.1.1.1');
    assert.equal(result?.abuse_record_count, 5);
    assert.equal(fake.hits(`GET /flaky/${PATH}`).length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('an answer without status: an error naming it', async () => {
    await watch.rejectsWith(harness('no-status', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at status: /);
  });

  test('a section without its count: counted from its data (issue 26: the old refusal was wrong)', async () => {
    const result = await run(harness('no-count', { retries: 0 }), '1.1.1.1');
    assert.deepEqual(result!.ids, { count: 0, data: [] });
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('1.1.1.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('the shared fake: a full answer for any address; a request without the key refused (status 401 in the body)', async () => {
    const h = harness('', { ...fakeSettings(fake.url), retries: 0 });
    const result = await run(h, '198.51.100.23');
    assert.equal(result?.ip, '198.51.100.23');
    assert.equal(result?.current_opened_port?.count, 1);
    assert.equal(result?.ids?.data[0]?.url, 'https://www.criminalip.io/asset/report/198.51.100.23');
    const { base_url: base } = fakeSettings(fake.url) as { base_url: string };
    const keyless = await fetch(`${base}/${PATH}?ip=198.51.100.23`);
    assert.equal(keyless.status, 200);
    assert.deepEqual(await keyless.json(), { status: 401, message: 'invalid api key' });
  });

  test('called directly without a key: refused before any request', async () => {
    fake.reset();
    const keyless = harness('ok', { api_key: undefined, retries: 0 });
    await rejectsWith(keyless.run('1.1.1.1', 'IPv4'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(10);
  });
});

describe('provider_05: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);
  const run = async (h: EngineHarness, ip: string) => watch.result((await h.run(ip, 'IPv4')) as CriminalIpResult | null);
  /** The documented result for an address Criminal IP knows nothing of. */
  const EMPTY: CriminalIpResult = {
    status: 200, abuse_record_count: 0, current_opened_port: null, ids: null, ip: '192.0.2.77',
    issues: null, representative_domain: '', score: null, whois: null,
  };
  const answers: Record<string, unknown> = {
    // Only what engines.md 5.6 marks as always there.
    minimal: { status: 200, ip: '192.0.2.77', abuse_record_count: 0 },
    // Not even those: the address asked about, no abuse record.
    'status-only': { status: 200 },
    // Every optional part empty in another form.
    nulls: {
      status: 200, ip: '', abuse_record_count: null, representative_domain: null, score: null,
      issues: null, current_opened_port: null, ids: null, whois: null, message: null,
    },
    strings: { status: 200, ip: '192.0.2.77', abuse_record_count: '', representative_domain: '' },
    degenerate: {
      status: 200,
      ip: '192.0.2.77',
      abuse_record_count: '3',
      issues: { is_tor: 1, is_vpn: 'false', is_proxy: null, is_scanner: 'true', is_cloud: 0 },
      // One port where a list belongs, and no count.
      current_opened_port: { data: { port: '8080', is_vulnerability: 0, protocol: 'http' } },
      ids: { count: null, data: null },
      whois: { count: '1', data: [null, { as_no: '64500', latitude: '52.1', longitude: '', org_country_code: 'NL' }] },
      score: { inbound: 'Low' },
    },
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}/${PATH}`, reply.json(body)])));
  });
  after(async () => {
    await fake.close();
  });

  test('the minimal answer, and the status alone: the documented result with null sections', async () => {
    assert.deepEqual(await run(harness('minimal'), '192.0.2.77'), EMPTY);
    assert.deepEqual(await run(harness('status-only'), '192.0.2.77'), EMPTY);
  });

  test('null and "" for every optional part: the same documented result, a text sent as "" kept (issue 32)', async () => {
    // `ip: ""` is a value Criminal IP sent: kept (it was the queried address before issue 32).
    assert.deepEqual(await run(harness('nulls'), '192.0.2.77'), { ...EMPTY, ip: '' });
    assert.deepEqual(await run(harness('strings'), '192.0.2.77'), EMPTY);
  });

  test('issue 32: texts sent as "" stay "" (ids.data[].url as in the reference); summary and card show no empty field', async () => {
    fake.route(`GET /empty-texts/${PATH}`, reply.json({
      status: 200,
      ip: '192.0.2.77',
      ids: { count: 1, data: [{ classification: '', confirmed_time: '', message: 'ET SCAN', source_system: '', url: '' }] },
      current_opened_port: { count: 1, data: [{ port: 22, product_name: '', product_version: '', protocol: '', socket_type: '', confirmed_time: '' }] },
      whois: { count: 1, data: [{ as_name: '', as_no: '', city: '', region: '', org_name: 'Example Org', org_country_code: '', confirmed_time: '' }] },
    }));
    const result = await run(harness('empty-texts'), '192.0.2.77');
    assert.deepEqual(result?.ids, { count: 1, data: [{ classification: '', confirmed_time: '', message: 'ET SCAN', source_system: '', url: '' }] });
    assert.deepEqual(result?.current_opened_port?.data[0], {
      port: 22, is_vulnerability: null, product_name: '', product_version: '', protocol: '', socket_type: '', confirmed_time: '',
    });
    assert.deepEqual(result?.whois?.data[0], {
      as_name: '', as_no: '', city: '', region: '', org_name: 'Example Org', postal_code: null,
      latitude: null, longitude: null, org_country_code: '', confirmed_time: '',
    });
    // An empty AS name gives way to the organisation; no "AS" without a number, no empty part.
    assert.equal(engine.summary!(result!), '0 abuse records · 1 open port · 1 IDS event · Example Org');
    const details = engine.details!(result!, '192.0.2.77');
    assert.ok(details.every((f) => f.value.trim() !== '' && !/\(\)|^AS$/.test(f.value)), JSON.stringify(details));
    assert.deepEqual(details.find((f) => f.label === 'IDS alert'), { label: 'IDS alert', value: 'ET SCAN' });
    assert.deepEqual(details.find((f) => f.label === 'Open ports'), { label: 'Open ports', value: '22/tcp' });
  });

  test('0/1 and "true"/"false" flags, numeric strings, one entry for a list, null entries, missing counts', async () => {
    assert.deepEqual(await run(harness('degenerate'), '192.0.2.77'), {
      status: 200,
      abuse_record_count: 3,
      current_opened_port: {
        count: 1,
        data: [{ port: '8080', is_vulnerability: false, product_name: null, product_version: null, protocol: 'http', socket_type: null, confirmed_time: null }],
      },
      ids: { count: 0, data: [] },
      ip: '192.0.2.77',
      issues: {
        is_anonymous_vpn: false, is_cloud: false, is_darkweb: false, is_hosting: false, is_mobile: false,
        is_proxy: false, is_scanner: true, is_snort: false, is_tor: true, is_vpn: false,
      },
      representative_domain: '',
      score: { inbound: 'Low', outbound: null },
      whois: {
        count: 1,
        data: [{
          as_name: null, as_no: '64500', city: null, region: null, org_name: null, postal_code: null,
          latitude: 52.1, longitude: null, org_country_code: 'NL', confirmed_time: null,
        }],
      },
    });
  });

  test('what cannot be understood still fails, naming the field', async () => {
    fake.route(`GET /bad/${PATH}`, reply.json({ status: 200, abuse_record_count: { n: 1 } }));
    await watch.rejectsWith(harness('bad', { retries: 0 }).run('192.0.2.77', 'IPv4'), /^unexpected answer from upstream at abuse_record_count: /);
    fake.route(`GET /list/${PATH}`, reply.json([]));
    await watch.rejectsWith(harness('list', { retries: 0 }).run('192.0.2.77', 'IPv4'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
  });
});

describe('provider_05 through the runner', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    fake = await startFakeHttp({ [`GET /${PATH}`]: byIp, [`GET /bad-key/${PATH}`]: reply.status(401, { status: 401, message: `bad key ${KEY}` }) });
    dns = await startFakeDns({
      'one.one.example': { A: ['1.1.1.1'], AAAA: ['2606:4700:4700::1111'] },
      'v6.example': { AAAA: ['2606:4700:4700::1111'] },
    });
    runner = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_05: { base_url: fake.url, api_key: KEY, retries: 0 } } });
  });
  after(async () => {
    await runner.close();
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain: Criminal IP asked about the IPv4 address it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'one.one.example', type: 'FQDN' }], ['criminalip']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    const info = result!.criminalip as CriminalIpResult;
    assert.equal(info.ip, '1.1.1.1');
    assert.equal(info.abuse_record_count, 5);
    assert.deepEqual(fake.requests.map((r) => r.query.get('ip')), ['1.1.1.1']);
    assert.equal(fake.requests[0]!.headers['x-api-key'], KEY);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });

  test('a URL: the IPv4 address of its host', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'https://one.one.example/login?next=/', type: 'URL' }], ['provider_05']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    assert.equal((result!.provider_05 as CriminalIpResult).ip, '1.1.1.1');
  });

  test('a domain with IPv6 only: nothing to ask, no request', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'v6.example', type: 'FQDN' }], ['provider_05']);
    assert.equal(result!.provider_05, null);
    assert.equal(result!.errors, undefined);
    assert.equal(fake.requests.length, 0);
  });

  test('no key configured: "not configured: api_key", Criminal IP not called', async () => {
    fake.reset();
    const keyless = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_05: { base_url: fake.url } } });
    try {
      const [ip, domain] = await keyless.analyze(
        [{ value: '1.1.1.1', type: 'IPv4' }, { value: 'one.one.example', type: 'FQDN' }],
        ['provider_05'],
      );
      assert.equal(ip!.provider_05, null);
      assert.deepEqual(ip!.errors, { provider_05: 'not configured: engines.provider_05.api_key or OAS_CRIMINALIP_API_KEY' });
      assert.deepEqual(domain!.errors, { provider_05: 'not configured: engines.provider_05.api_key or OAS_CRIMINALIP_API_KEY' });
      assert.equal(fake.requests.length, 0);
    } finally {
      await keyless.close();
    }
  });

  test('a bad key: the error is reported, without the key', async () => {
    const bad = runnerHarness([engine], { settings: { provider_05: { base_url: `${fake.url}/bad-key`, api_key: KEY, retries: 0 } } });
    try {
      const [result] = await bad.analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['provider_05']);
      assert.equal(result!.provider_05, null);
      assert.deepEqual(result!.errors, { provider_05: 'HTTP 401 Unauthorized: bad key *** (key refused: check engines.provider_05.api_key or OAS_CRIMINALIP_API_KEY)' });
      assert.ok(!JSON.stringify(result).includes(KEY));
    } finally {
      await bad.close();
    }
  });
});
