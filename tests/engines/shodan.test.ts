import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { shodanDetails, shodanLookup, shodanSummary, type ShodanResult } from '../../engines/shodan.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { fakeRoutes, fakeSettings } from '../fakes/shodan.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { describeIpFake, KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { answeringUpstream } from '../helpers/answers.js';

const KEY = 'SECRET-KEY-1234567890';

/** One banner of Shodan's `data` (the members the engine reads, plus the usual others). */
function banner(ip: string, port: number, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    ip_str: ip, port, transport: 'tcp', hash: -1633212876, timestamp: '2026-01-07T21:14:03.512938',
    location: { city: 'Brisbane', region_code: 'QLD', country_code: 'AU', country_name: 'Australia', latitude: -27.46794, longitude: 153.02809 },
    _shodan: { region: 'eu', module: 'http', ptr: true, options: {}, id: '5b7c6f4e-9a4d-4a57-8d8e-3f7a2b1c0d9e', crawler: '6e3e1d4c2b0a9f8e7d6c5b4a3928171605f4e3d2' },
    opts: {},
    ...fields,
  };
}

/** Shodan's host answer for 1.1.1.1 (engines.md 5.25's example, completed). Ports unsorted, as Shodan sends them. */
const CLOUDFLARE = {
  region_code: 'QLD', ip: 16843009, postal_code: null, country_code: 'AU', city: 'Brisbane', dma_code: null,
  last_update: '2026-01-08T03:11:52.401285', latitude: -27.46794, tags: ['cdn'], area_code: null, country_name: 'Australia',
  hostnames: ['one.one.one.one'], org: 'APNIC and Cloudflare DNS Resolver project', asn: 'AS13335', isp: 'Cloudflare, Inc.',
  longitude: 153.02809, domains: ['one.one'], ip_str: '1.1.1.1', os: null, ports: [443, 80, 53],
  data: [
    banner('1.1.1.1', 443, { product: 'CloudFlare', http: { status: 403, title: null, server: 'cloudflare' }, data: 'HTTP/1.1 403 Forbidden\r\nServer: cloudflare\r\n' }),
    banner('1.1.1.1', 53, { transport: 'udp', dns: { resolver_hostname: null, recursive: true, software: null }, data: '\nRecursion: enabled' }),
    banner('1.1.1.1', 80, { product: 'CloudFlare', http: { status: 301, title: '301 Moved Permanently' }, data: 'HTTP/1.1 301 Moved Permanently\r\n' }),
  ],
};

/** A VPS with SSH and nginx, and two CVEs on its OpenSSH. */
const VPS = {
  ip: 758916348, ip_str: '45.60.13.252', ports: [22, 80, 443], tags: [], hostnames: ['vps-45-60-13-252.example.net'],
  domains: ['example.net'], org: 'Example Hosting', isp: 'Example Hosting', asn: 'AS64500', os: 'Linux',
  country_code: 'DE', country_name: 'Germany', city: 'Frankfurt am Main', region_code: 'HE', latitude: 50.11, longitude: 8.68,
  last_update: '2026-01-06T17:40:02.118004', vulns: ['CVE-2023-38408', 'CVE-2023-51385'],
  data: [
    banner('45.60.13.252', 22, { product: 'OpenSSH', version: '8.9p1 Ubuntu-3ubuntu0.6', cpe23: ['cpe:2.3:a:openbsd:openssh:8.9p1'], ssh: { type: 'ssh-ed25519' }, data: 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\n' }),
    banner('45.60.13.252', 80, { product: 'nginx', http: { status: 200, title: 'Welcome to nginx!' }, data: 'HTTP/1.1 200 OK\r\nServer: nginx\r\n' }),
    banner('45.60.13.252', 443, { product: 'nginx', ssl: { versions: ['TLSv1.2', 'TLSv1.3'] }, data: 'HTTP/1.1 200 OK\r\nServer: nginx\r\n' }),
  ],
};

const GOOGLE_V6 = {
  ip_str: '2001:4860:4860::8888', ports: [53, 443], tags: [], hostnames: ['dns.google'], domains: ['dns.google'], org: 'Google LLC',
  isp: 'Google LLC', asn: 'AS15169', os: null, country_code: 'US', city: 'Mountain View', last_update: '2026-01-05T08:00:00.000000',
  data: [banner('2001:4860:4860::8888', 53, { transport: 'udp' }), banner('2001:4860:4860::8888', 443, { product: 'Google frontend' })],
};

/** A host Shodan saw with nothing open any more: no ports, no data. */
const CLOSED = { ip_str: '198.51.100.20', ports: [], tags: [], hostnames: [], domains: [], org: null, isp: null, asn: null, data: [] };

const BY_IP: Record<string, object> = { '1.1.1.1': CLOUDFLARE, '45.60.13.252': VPS, '2001:4860:4860::8888': GOOGLE_V6, '198.51.100.20': CLOSED };

/** `/<prefix>/shodan/host/<ip>` from BY_IP; unknown addresses get Shodan's 404. */
function byIp(req: FakeRequest): FakeReply {
  const ip = req.path.split('/shodan/host/')[1] ?? '';
  return BY_IP[ip] ? reply.json(BY_IP[ip]) : reply.json({ error: 'No information available for that IP.' }, 404);
}

const watch = new KeyWatch(KEY);

const empty: ShodanResult = {
  ports: [], tags: [], link: 'https://www.shodan.io/host/192.0.2.1', ip: '192.0.2.1', hostnames: [], domains: [], org: null, isp: null,
  asn: null, os: null, country_code: null, city: null, vulns: [], last_update: null, services: [],
};

describe('provider_20 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_20');
    assert.equal(engine.service, 'shodan');
    assert.equal(engine.label, 'Shodan');
    assert.deepEqual(engine.tags, ['ports', 'IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['SHODAN'] }]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.shodan.io', rate_limit: 1, rate_window_ms: 1000 });
    assert.equal(engine.run, shodanLookup);
    assert.equal(engine.summary, shodanSummary);
  });

  test('summary: ports in order, products with their short version, CVEs, tags', () => {
    assert.equal(engine.summary({
      ...empty,
      ports: [443, 22, 80],
      services: [
        { port: 22, transport: 'tcp', product: 'OpenSSH', version: '8.9p1 Ubuntu-3ubuntu0.6' },
        { port: 80, transport: 'tcp', product: 'nginx', version: null },
        { port: 443, transport: 'tcp', product: 'nginx', version: null },
      ],
    }), 'open ports 22, 80, 443 · OpenSSH 8.9, nginx');
    assert.equal(engine.summary({ ...empty, ports: [53], tags: ['cdn', 'vpn'], vulns: ['CVE-2024-6387'] }), 'open ports 53 · 1 CVE · tags cdn, vpn');
    assert.equal(engine.summary(empty), 'no open ports');
  });
});

describe('provider_20 against a loopback Shodan', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(prefix: string, ip: string, settings: Record<string, unknown> = {}): Promise<ShodanResult | null> {
    return watch.result((await harness(prefix, settings).run(ip, ip.includes(':') ? 'IPv6' : 'IPv4')) as ShodanResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': byIp,
      'GET /status500/*': reply.status(500, { error: 'Internal server error' }),
      'GET /flaky/*': sequence(reply.tooMany(1), byIp),
      'GET /malformed/*': reply.malformed(),
      'GET /wrong-shape/*': reply.json({ ...VPS, ports: '22,80,443' }),
      'GET /hang/*': reply.hang(),
      'GET /unauthorized/*': reply.json({ error: 'Invalid API key' }, 401),
      'GET /forbidden/*': (req) => reply.json({ error: `Access denied (403 Forbidden) for key ${req.query.get('key')}` }, 403),
      'GET /error-200/*': (req) => reply.json({ error: `Request rate limit reached for ${req.query.get('key')}` }),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('a full answer, field by field', async () => {
    const result = await run('ok', '45.60.13.252');
    assert.ok(result);
    assert.deepEqual(result.ports, [22, 80, 443]);
    assert.deepEqual(result.tags, []);
    assert.equal(result.link, 'https://www.shodan.io/host/45.60.13.252');
    assert.equal(result.ip, '45.60.13.252');
    assert.deepEqual(result.hostnames, ['vps-45-60-13-252.example.net']);
    assert.deepEqual(result.domains, ['example.net']);
    assert.equal(result.org, 'Example Hosting');
    assert.equal(result.isp, 'Example Hosting');
    assert.equal(result.asn, 'AS64500');
    assert.equal(result.os, 'Linux');
    assert.equal(result.country_code, 'DE');
    assert.equal(result.city, 'Frankfurt am Main');
    assert.deepEqual(result.vulns, ['CVE-2023-38408', 'CVE-2023-51385']);
    assert.equal(result.last_update, '2026-01-06T17:40:02.118004');
    assert.deepEqual(result.services, [
      { port: 22, transport: 'tcp', product: 'OpenSSH', version: '8.9p1 Ubuntu-3ubuntu0.6' },
      { port: 80, transport: 'tcp', product: 'nginx', version: null },
      { port: 443, transport: 'tcp', product: 'nginx', version: null },
    ]);
    assert.equal(engine.summary(result), 'open ports 22, 80, 443 · OpenSSH 8.9, nginx · 2 CVEs');
  });

  test('details: ports, services, CVEs, names, owner, OS, place, last update, then the Shodan page', async () => {
    const result = await run('ok', '45.60.13.252');
    assert.ok(result);
    assert.deepEqual(engine.details!(result, '45.60.13.252'), [
      { label: 'Open ports', value: '22, 80, 443' },
      { label: 'Services', value: '22/tcp OpenSSH 8.9p1 Ubuntu-3ubuntu0.6, 80/tcp nginx, 443/tcp nginx' },
      { label: 'Vulnerabilities', value: 'CVE-2023-38408, CVE-2023-51385' },
      { label: 'Host names', value: 'vps-45-60-13-252.example.net' },
      { label: 'Domains', value: 'example.net' },
      { label: 'Owner', value: 'AS64500 Example Hosting' },
      { label: 'Operating system', value: 'Linux' },
      { label: 'Location', value: 'Frankfurt am Main, DE' },
      { label: 'Last update', value: '2026-01-06T17:40:02.118004' },
      { label: 'Open in Shodan', value: 'https://www.shodan.io/host/45.60.13.252', href: 'https://www.shodan.io/host/45.60.13.252' },
    ]);
    // Tags, and an ISP that is not the organisation, are shown; a closed host says so.
    const cloudflare = shodanDetails((await run('ok', '1.1.1.1'))!, '1.1.1.1');
    assert.deepEqual(cloudflare.find((f) => f.label === 'Tags'), { label: 'Tags', value: 'cdn' });
    assert.deepEqual(cloudflare.find((f) => f.label === 'ISP'), { label: 'ISP', value: 'Cloudflare, Inc.' });
    assert.deepEqual(shodanDetails(empty, '192.0.2.1'), [
      { label: 'Open ports', value: 'none' },
      { label: 'Open in Shodan', value: 'https://www.shodan.io/host/192.0.2.1', href: 'https://www.shodan.io/host/192.0.2.1' },
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, shodanDetails);
  });

  test('engines.md\'s example: ports and tags as Shodan sends them, services in port order', async () => {
    const result = await run('ok', '1.1.1.1');
    assert.ok(result);
    assert.deepEqual(result.ports, [443, 80, 53]);
    assert.deepEqual(result.tags, ['cdn']);
    assert.equal(result.link, 'https://www.shodan.io/host/1.1.1.1');
    assert.deepEqual(result.hostnames, ['one.one.one.one']);
    assert.equal(result.os, null);
    assert.deepEqual(result.vulns, []);
    assert.deepEqual(result.services.map((s) => [s.port, s.transport, s.product]), [[53, 'udp', null], [80, 'tcp', 'CloudFlare'], [443, 'tcp', 'CloudFlare']]);
    assert.equal(engine.summary(result), 'open ports 53, 80, 443 · CloudFlare · tags cdn');
  });

  test('the request: GET <base_url>/shodan/host/<ip>, the key in the key parameter only', async () => {
    fake.reset();
    await run('ok', '1.1.1.1');
    const [req, ...more] = fake.hits('GET /ok/');
    assert.equal(more.length, 0);
    assert.equal(req!.path, '/ok/shodan/host/1.1.1.1');
    assert.deepEqual([...req!.query], [['key', KEY]]);
    assert.match(String(req!.headers.accept), /application\/json/);
    assert.ok(!JSON.stringify(req!.headers).includes(KEY), 'no key in the headers');
  });

  test('IPv6', async () => {
    fake.reset();
    const result = await run('ok', '2001:4860:4860::8888');
    assert.deepEqual(result?.ports, [53, 443]);
    assert.equal(result?.link, 'https://www.shodan.io/host/2001:4860:4860::8888');
    assert.equal(fake.hits('GET /ok/')[0]!.path, '/ok/shodan/host/2001:4860:4860::8888');
  });

  test('a host with nothing open: the documented empty lists', async () => {
    const result = await run('ok', '198.51.100.20');
    assert.deepEqual(result, { ...empty, ip: '198.51.100.20', link: 'https://www.shodan.io/host/198.51.100.20' });
    assert.equal(engine.summary(result!), 'no open ports');
  });

  test('not found: Shodan\'s 404 "No information available for that IP." is null', async () => {
    assert.equal(await run('ok', '5.255.255.77'), null);
  });

  test('another 404 (a wrong base_url): an error, not a silent null', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 404 Not Found\b/);
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('no key: an error before any request (the reference sent ?key= empty)', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('1.1.1.1', 'IPv4'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 401: a clear error with Shodan\'s reason', async () => {
    await watch.rejectsWith(harness('unauthorized', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 401 Unauthorized: Invalid API key$/);
  });

  test('HTTP 403: the reason, with the echoed key masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 403 Forbidden: Access denied \(403 Forbidden\) for key \*\*\*$/);
  });

  test('an {"error"} answer with status 200: an error, key masked', async () => {
    await watch.rejectsWith(harness('error-200', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^Shodan: Request rate limit reached for \*\*\*$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('GET /status500/').length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run('flaky', '45.60.13.252', { retries: 2, timeout_ms: 5000 });
    assert.deepEqual(result?.ports, [22, 80, 443]);
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('45.60.13.252', 'IPv4'), /^unexpected answer from upstream at ports\.0: /);
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('1.1.1.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a request failing on the network: no key in the error', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('1.1.1.1', 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(15);
  });
});

describe('provider_20 minimal and degenerate answers (issue 26)', () => {
  const { run } = answeringUpstream(engine, 'GET /lenient/*', ['192.0.2.1', 'IPv4'], { key: KEY, watch });

  test('the minimal answer, an empty object: the documented empty lists', async () => {
    assert.deepEqual(await run({}), empty);
  });

  test('every field null or ""; lists "" or {}; an empty error', async () => {
    const nulls = Object.fromEntries(['ip_str', 'ports', 'tags', 'hostnames', 'domains', 'org', 'isp', 'asn', 'os', 'country_code', 'city', 'vulns', 'last_update', 'data', 'error'].map((k) => [k, null]));
    assert.deepEqual(await run(nulls), empty);
    // `org: ""` is what Shodan sent: kept (issue 32; it was null before); an empty `error` is still no error.
    const result = await run({ ip_str: '', ports: '', tags: {}, hostnames: '', domains: [], org: '', vulns: {}, data: '', error: '' }) as ShodanResult;
    assert.deepEqual(result, { ...empty, org: '' });
    assert.deepEqual(engine.details!(result, '192.0.2.10').map((f) => f.label), ['Open ports', 'Open in Shodan']);
  });

  test('one value in place of a list, null entries, vulns keyed by CVE, banners without port or transport', async () => {
    assert.deepEqual(await run({
      ports: 22, tags: 'vpn', hostnames: [null, 'vpn.example.net'], vulns: { 'CVE-2023-38408': { cvss: 9.8 }, 'CVE-2023-51385': {} },
      data: [null, { port: 22, product: 'OpenSSH', version: '' }, { transport: 'udp' }, { port: null }],
    }), {
      ...empty, ports: [22], tags: ['vpn'], hostnames: ['vpn.example.net'], vulns: ['CVE-2023-38408', 'CVE-2023-51385'],
      services: [{ port: 22, transport: 'tcp', product: 'OpenSSH', version: null }],
    });
    assert.deepEqual(await run({ data: { port: '443', transport: 'tcp', product: 'nginx' } }), {
      ...empty, services: [{ port: 443, transport: 'tcp', product: 'nginx', version: null }],
    });
  });

  test('what cannot be read still fails, naming the field', async () => {
    await watch.rejectsWith(run([]), /^unexpected answer from upstream at \(root\)/);
    await watch.rejectsWith(run({ data: [{ port: 'ssh' }] }), /^unexpected answer from upstream at data\.0\.port: expected a number$/);
    await watch.rejectsWith(run({ org: { name: 'x' } }), /^unexpected answer from upstream at org: /);
  });

  // Recorded after the suite's own key check ran: checked again, with these answers' results.
  test('the key appears in none of these results or errors either', () => {
    watch.assertNoKey(15);
  });
});

describeIpFake({
  engine,
  key: KEY,
  start: () => startFakeHttp(fakeRoutes()),
  settings: fakeSettings,
  check: (result: ShodanResult, ip) => {
    assert.equal(result.ip, ip);
    assert.equal(engine.summary(result), 'open ports 22, 80, 443 · OpenSSH 8.9, nginx 1.18.0 · 1 CVE · tags cloud');
  },
  keyOf: (r) => r.query.get('key'),
});

describe('provider_20 through the runner', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  const runners: RunnerHarness[] = [];

  function runner(settings: Record<string, unknown> = { api_key: KEY }): RunnerHarness {
    const r = runnerHarness([engine], {
      dnsServers: [dns.address],
      // A generous quota so that the runner does not pace these few calls at Shodan's 1 per second.
      settings: { provider_20: { base_url: `${fake.url}/ok`, retries: 0, rate_limit: 100, ...settings } },
    });
    runners.push(r);
    return r;
  }

  before(async () => {
    fake = await startFakeHttp({ 'GET /ok/*': byIp });
    dns = await startFakeDns({ 'vps.example': { A: ['45.60.13.252'] }, 'gone.example': { A: ['5.255.255.77'] } });
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain: Shodan asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: 'vps.example', type: 'FQDN' }], ['shodan']);
    assert.equal(result!.reversed_ip, '45.60.13.252');
    assert.equal((result!.shodan as ShodanResult).ip, '45.60.13.252');
    assert.deepEqual((result!.shodan as ShodanResult).ports, [22, 80, 443]);
    assert.deepEqual(fake.requests.map((r) => r.path), ['/ok/shodan/host/45.60.13.252']);
    assert.equal(result!.errors, undefined);
  });

  test('a URL whose address Shodan does not know: null, no error', async () => {
    const [result] = await runner().analyze([{ value: 'https://gone.example/login', type: 'URL' }], ['provider_20']);
    assert.equal(result!.reversed_ip, '5.255.255.77');
    assert.equal(result!.provider_20, null);
    assert.equal(result!.errors, undefined);
  });

  test('no key configured: "not configured: api_key", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({}).analyze([{ value: '45.60.13.252', type: 'IPv4' }], ['provider_20']);
    assert.equal(result!.provider_20, null);
    assert.deepEqual(result!.errors, { provider_20: 'not configured: engines.provider_20.api_key or OAS_SHODAN_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });
});
