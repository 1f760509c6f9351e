import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { ipapiDetails, ipapiLookup, type IpapiResult } from '../../engines/ipapi.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeReply } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { answeringUpstream } from '../helpers/answers.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith as rejectsWithError } from '../helpers/assert.js';

/** ipapi.is' answer for 1.1.1.1 (engines.md 5.14, completed with the fields the API sends). */
const CLOUDFLARE = {
  ip: '1.1.1.1',
  rir: 'APNIC',
  is_bogon: false,
  is_mobile: false,
  is_satellite: false,
  is_crawler: false,
  is_datacenter: true,
  is_tor: false,
  is_proxy: false,
  is_vpn: false,
  is_abuser: false,
  datacenter: { datacenter: 'Cloudflare', network: '1.1.1.0/24' },
  company: { name: 'Cloudflare, Inc.', abuser_score: '0.0013 (Low)', domain: 'cloudflare.com', type: 'hosting', network: '1.1.1.0 - 1.1.1.255', whois: 'https://api.ipapi.is/?whois=1.1.1.0' },
  abuse: { name: 'APNIC RESEARCH', address: 'PO Box 3646, South Brisbane, QLD 4101, Australia', email: 'helpdesk@apnic.net', phone: '+61-7-3858-3188' },
  asn: {
    asn: 13335, abuser_score: '0.0045 (Low)', route: '1.1.1.0/24', descr: 'CLOUDFLARENET, US', country: 'us', active: true,
    org: 'Cloudflare, Inc.', domain: 'cloudflare.com', abuse: 'abuse@cloudflare.com', type: 'hosting',
    created: '2010-07-14', updated: '2017-02-17', rir: 'ARIN', whois: 'https://api.ipapi.is/?whois=AS13335',
  },
  location: {
    is_eu_member: false, calling_code: '61', currency_code: 'AUD', continent: 'OC', country: 'Australia', country_code: 'AU',
    state: 'Queensland', city: 'Brisbane', latitude: -27.46794, longitude: 153.02809, zip: '4000',
    timezone: 'Australia/Brisbane', local_time: '2026-01-10T20:00:00+10:00', local_time_unix: 1768039200, is_dst: false,
  },
  elapsed_ms: 0.6,
};

/** A NordVPN exit in a datacenter that is also a known abuser. */
const NORDVPN = {
  ip: '146.70.117.10',
  rir: 'RIPE',
  is_bogon: false,
  is_mobile: false,
  is_crawler: false,
  is_datacenter: true,
  is_tor: false,
  is_proxy: true,
  is_vpn: true,
  is_abuser: true,
  company: { name: 'M247 Europe SRL', domain: 'm247.com', type: 'hosting', network: '146.70.0.0 - 146.70.255.255' },
  abuse: { name: 'M247 Europe Abuse', email: 'abuse@m247.ro' },
  asn: { asn: 9009, route: '146.70.117.0/24', descr: 'M247, RO', country: 'ro', active: true, org: 'M247 Europe SRL', domain: 'm247.com', abuse: 'abuse@m247.ro', type: 'hosting' },
  location: { is_eu_member: false, continent: 'NA', country: 'United States', country_code: 'US', state: 'California', city: 'San Francisco', latitude: 37.77, longitude: -122.42, timezone: 'America/Los_Angeles' },
  vpn: { service: 'NordVPN', url: 'https://nordvpn.com', type: 'exit_node', last_seen: 1768000000, last_seen_str: '2026-01-09' },
  elapsed_ms: 1.2,
};

const CLOUDFLARE_V6 = {
  ...CLOUDFLARE,
  ip: '2606:4700:4700::1111',
  company: { ...CLOUDFLARE.company, network: '2606:4700::/32' },
  asn: { ...CLOUDFLARE.asn, route: '2606:4700:4700::/48' },
  location: { ...CLOUDFLARE.location, country: 'United States', country_code: 'US', state: 'California', city: 'San Francisco' },
};

/** An address nobody routes: no asn, no location. */
const UNROUTED = { ip: '198.18.0.1', rir: 'ARIN', is_bogon: false, is_mobile: false, is_crawler: false, is_datacenter: false, is_tor: false, is_proxy: false, is_vpn: false, is_abuser: false, elapsed_ms: 0.2 };

const BY_IP: Record<string, object> = {
  '1.1.1.1': CLOUDFLARE,
  '146.70.117.10': NORDVPN,
  '2606:4700:4700::1111': CLOUDFLARE_V6,
  '198.18.0.1': UNROUTED,
};

/** The answer ipapi.is gives for the `q` of the request. */
function byQuery(req: FakeRequest): FakeReply {
  const { q } = JSON.parse(req.body) as { q: string };
  return BY_IP[q] ? reply.json(BY_IP[q]) : reply.json({ error: `Invalid IP Address or AS Number: ${q}` }, 400);
}

/** 32 characters: the reference would have dropped it (it sent only 20-character keys). */
const KEY32 = 'k3y-0123456789abcdef0123456789ab';
const KEY20 = 'abcdefghij0123456789';

function bodyOf(req: FakeRequest): Record<string, unknown> {
  return JSON.parse(req.body) as Record<string, unknown>;
}

const rejectsWith = (promise: Promise<unknown>, pattern: RegExp, secret?: string) =>
  rejectsWithError(promise, pattern, secret ? { secret } : {});

describe('provider_11 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_11');
    assert.equal(engine.service, 'ipapi');
    assert.equal(engine.label, 'IPapi');
    assert.deepEqual(engine.tags, ['default', 'IP', 'risk', 'VPN', 'proxy']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', required: false, env: ['IPAPI'] }]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.ipapi.is' });
    assert.equal(engine.run, ipapiLookup);
  });

  test('summary: ASN and owner, place, then the flags that are set', () => {
    const cloudflare = { ...CLOUDFLARE, location: { ...CLOUDFLARE.location, country_code: 'US', city: 'San Francisco' }, asn: { ...CLOUDFLARE.asn, asn: 'AS13335' } };
    assert.equal(engine.summary(cloudflare as IpapiResult), 'AS13335 Cloudflare, Inc. · US, San Francisco · datacenter');
    assert.equal(
      engine.summary({ ...NORDVPN, is_tor: true, asn: { ...NORDVPN.asn, asn: 'AS9009' } } as IpapiResult),
      'AS9009 M247 Europe SRL · US, San Francisco · datacenter · VPN (NordVPN) · proxy · Tor · abuser',
    );
    assert.equal(engine.summary({ ...UNROUTED, asn: { asn: 'Unknown', org: 'Unknown' } } as IpapiResult), '198.18.0.1: no data');
  });
});

describe('provider_11 against a loopback ipapi.is', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];

  /** A harness whose base_url is `<fake>/<path>`, so each test has its own route. */
  function harness(path: string, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${path}`, ...settings } });
    harnesses.push(h);
    return h;
  }

  before(async () => {
    fake = await startFakeHttp({
      'POST /ok': byQuery,
      'POST /status500': reply.status(500, { error: 'internal error' }),
      'POST /flaky': sequence(reply.tooMany(1), byQuery),
      'POST /malformed': reply.malformed(),
      'POST /wrong-shape': reply.json({ ...CLOUDFLARE, is_vpn: 'maybe' }),
      'POST /no-ip': reply.json({ rir: 'APNIC', elapsed_ms: 0.1 }),
      'POST /hang': reply.hang(),
      'POST /bad-key': (req) => reply.json({ error: `Invalid API key: ${String(bodyOf(req).key)}` }, 403),
      'POST /quota': (req) => reply.json({ error: `Daily request limit exceeded for key ${String(bodyOf(req).key)}. Upgrade your plan.` }),
      'POST /asn-as-string': reply.json({ ...CLOUDFLARE, asn: { ...CLOUDFLARE.asn, asn: 'AS13335' } }),
      'POST /asn-empty': reply.json({ ...CLOUDFLARE, asn: '' }),
    });
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
  });

  test('the upstream object, field by field, with asn.asn as "AS13335"', async () => {
    fake.reset();
    const result = (await harness('ok').run('1.1.1.1', 'IPv4')) as IpapiResult;
    assert.equal(result.ip, '1.1.1.1');
    assert.equal(result.rir, 'APNIC');
    assert.equal(result.is_bogon, false);
    assert.equal(result.is_mobile, false);
    assert.equal(result.is_crawler, false);
    assert.equal(result.is_datacenter, true);
    assert.equal(result.is_tor, false);
    assert.equal(result.is_proxy, false);
    assert.equal(result.is_vpn, false);
    assert.equal(result.is_abuser, false);
    assert.deepEqual(result.company, CLOUDFLARE.company);
    assert.deepEqual(result.abuse, CLOUDFLARE.abuse);
    assert.deepEqual(result.location, CLOUDFLARE.location);
    assert.equal(result.asn.asn, 'AS13335');
    assert.equal(result.asn.org, 'Cloudflare, Inc.');
    assert.deepEqual(result.asn, { ...CLOUDFLARE.asn, asn: 'AS13335' });
    assert.equal(result.vpn, undefined);
    // Everything else exactly as ipapi.is sent it.
    assert.deepEqual(result, { ...CLOUDFLARE, asn: { ...CLOUDFLARE.asn, asn: 'AS13335' } });
    assert.equal(engine.summary(result), 'AS13335 Cloudflare, Inc. · AU, Brisbane · datacenter');
  });

  test('the request: POST, JSON body {q} without a key when none is configured', async () => {
    fake.reset();
    await harness('ok').run('1.1.1.1', 'IPv4');
    const [req, ...more] = fake.hits('POST /ok');
    assert.equal(more.length, 0);
    assert.match(String(req!.headers['content-type']), /^application\/json/);
    assert.deepEqual(bodyOf(req!), { q: '1.1.1.1' });
  });

  test('an empty api_key is no key', async () => {
    fake.reset();
    await harness('ok', { api_key: '' }).run('1.1.1.1', 'IPv4');
    assert.deepEqual(bodyOf(fake.hits('POST /ok')[0]!), { q: '1.1.1.1' });
  });

  test('Quirk fixed: a configured key of any length is sent as is (the reference sent 20-character keys only)', async () => {
    fake.reset();
    await harness('ok', { api_key: KEY32 }).run('1.1.1.1', 'IPv4');
    await harness('ok', { api_key: KEY20 }).run('1.1.1.1', 'IPv4');
    const [long, short] = fake.hits('POST /ok');
    assert.deepEqual(bodyOf(long!), { q: '1.1.1.1', key: KEY32 });
    assert.deepEqual(bodyOf(short!), { q: '1.1.1.1', key: KEY20 });
  });

  test('the key never appears in the result', async () => {
    const result = await harness('ok', { api_key: KEY32 }).run('146.70.117.10', 'IPv4');
    assert.ok(!JSON.stringify(result).includes(KEY32));
  });

  test('a VPN exit: vpn object kept, flags in the summary', async () => {
    const result = (await harness('ok').run('146.70.117.10', 'IPv4')) as IpapiResult;
    assert.equal(result.is_vpn, true);
    assert.equal(result.is_proxy, true);
    assert.equal(result.is_abuser, true);
    assert.deepEqual(result.vpn, NORDVPN.vpn);
    assert.deepEqual(result.asn, { ...NORDVPN.asn, asn: 'AS9009' });
    assert.equal(engine.summary(result), 'AS9009 M247 Europe SRL · US, San Francisco · datacenter · VPN (NordVPN) · proxy · abuser');
  });

  test('details: ASN and owner, place, flags, VPN service, network, abuse contact, the public lookup on ipapi.is', async () => {
    const h = harness('ok');
    const vpn = (await h.run('146.70.117.10', 'IPv4')) as IpapiResult;
    assert.deepEqual(engine.details!(vpn, '146.70.117.10'), [
      { label: 'ASN', value: 'AS9009 M247 Europe SRL' },
      { label: 'Country', value: 'United States (US)' },
      { label: 'City', value: 'San Francisco, California' },
      { label: 'Flags', value: 'VPN, proxy, abuser, datacenter' },
      { label: 'VPN service', value: 'NordVPN', href: 'https://nordvpn.com/' },
      { label: 'Usage type', value: 'hosting' },
      { label: 'Network', value: '146.70.117.0/24' },
      { label: 'Abuse contact', value: 'abuse@m247.ro' },
      { label: 'RIR', value: 'RIPE' },
      { label: 'Open in ipapi.is', value: 'https://api.ipapi.is/?q=146.70.117.10', href: 'https://api.ipapi.is/?q=146.70.117.10' },
    ]);
    // Nothing known but the registry: "none" for the flags, no "Unknown" ASN; an IPv6 link is encoded.
    const unrouted = (await h.run('198.18.0.1', 'IPv4')) as IpapiResult;
    assert.deepEqual(ipapiDetails(unrouted, '198.18.0.1').map((f) => [f.label, f.value]), [
      ['Flags', 'none'], ['RIR', 'ARIN'], ['Open in ipapi.is', 'https://api.ipapi.is/?q=198.18.0.1'],
    ]);
    const v6 = (await h.run('2606:4700:4700::1111', 'IPv6')) as IpapiResult;
    assert.equal(ipapiDetails(v6, '2606:4700:4700::1111').at(-1)!.href, 'https://api.ipapi.is/?q=2606%3A4700%3A4700%3A%3A1111');
    // The engine declares it (checked last: the assertion narrows `engine.details` to ipapiDetails's type).
    assert.equal(engine.details, ipapiDetails);
  });

  test('IPv6', async () => {
    fake.reset();
    const result = (await harness('ok').run('2606:4700:4700::1111', 'IPv6')) as IpapiResult;
    assert.equal(result.ip, '2606:4700:4700::1111');
    assert.equal(result.asn.asn, 'AS13335');
    assert.deepEqual(bodyOf(fake.hits('POST /ok')[0]!), { q: '2606:4700:4700::1111' });
  });

  test('an address without ASN: the documented empty asn {"asn": "Unknown", "org": "Unknown"}', async () => {
    const result = (await harness('ok').run('198.18.0.1', 'IPv4')) as IpapiResult;
    assert.deepEqual(result, { ...UNROUTED, asn: { asn: 'Unknown', org: 'Unknown' } });
    const empty = (await harness('asn-empty').run('1.1.1.1', 'IPv4')) as IpapiResult;
    assert.deepEqual(empty.asn, { asn: 'Unknown', org: 'Unknown' });
  });

  test('an asn already written "AS13335" is not prefixed twice', async () => {
    const result = (await harness('asn-as-string').run('1.1.1.1', 'IPv4')) as IpapiResult;
    assert.equal(result.asn.asn, 'AS13335');
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('POST /status500').length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = (await harness('flaky', { retries: 2, timeout_ms: 5000 }).run('1.1.1.1', 'IPv4')) as IpapiResult;
    assert.equal(result.ip, '1.1.1.1');
    assert.equal(fake.hits('POST /flaky').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await rejectsWith(harness('wrong-shape', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at is_vpn: /);
  });

  test('an answer without ip: an error (the reference returned null)', async () => {
    await rejectsWith(harness('no-ip', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at ip: missing$/);
  });

  test('a hanging upstream: timeout', async () => {
    await rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('1.1.1.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('the upstream\'s reason for a 4xx is shown, with the key masked', async () => {
    await rejectsWith(
      harness('bad-key', { api_key: KEY32, retries: 0 }).run('1.1.1.1', 'IPv4'),
      /^HTTP 403 Forbidden: Invalid API key: \*\*\*$/,
      KEY32,
    );
    await rejectsWith(
      harness('ok', { retries: 0 }).run('192.0.2.1', 'IPv4'),
      /^HTTP 400 Bad Request: Invalid IP Address or AS Number: 192\.0\.2\.1$/,
    );
  });

  test('an {"error"} answer with status 200: an error, with the key masked', async () => {
    await rejectsWith(
      harness('quota', { api_key: KEY32, retries: 0 }).run('1.1.1.1', 'IPv4'),
      /^ipapi\.is: Daily request limit exceeded for key \*\*\*\. Upgrade your plan\.$/,
      KEY32,
    );
  });
});

describe('provider_11 minimal and degenerate answers (issue 26)', () => {
  const { run } = answeringUpstream(engine, 'POST /lenient', ['203.0.113.9', 'IPv4'], { settings: { retries: 0 } });
  const FLAGS = { is_bogon: false, is_mobile: false, is_crawler: false, is_datacenter: false, is_tor: false, is_proxy: false, is_vpn: false, is_abuser: false };

  test('the minimal answer, {"ip"}: every flag false, the Unknown ASN', async () => {
    const result = await run({ ip: '203.0.113.9' }) as IpapiResult;
    assert.deepEqual(result, { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'Unknown', org: 'Unknown' } });
    assert.equal(engine.summary(result), '203.0.113.9: no data');
  });

  test('flags sent as null, 0 or "" are false; as 1 or "true" true', async () => {
    assert.deepEqual(await run({ ip: '203.0.113.9', is_vpn: 0, is_tor: '', is_proxy: null, is_abuser: '0', error: null }), {
      ip: '203.0.113.9', ...FLAGS, asn: { asn: 'Unknown', org: 'Unknown' },
    });
    assert.deepEqual(await run({ ip: '203.0.113.9', is_vpn: 1, is_datacenter: 'true', error: '' }), {
      ip: '203.0.113.9', ...FLAGS, is_vpn: true, is_datacenter: true, asn: { asn: 'Unknown', org: 'Unknown' },
    });
  });

  test('asn null, 0, false, "", [] or {}: the Unknown ASN; its org null: Unknown, "": kept (issue 32)', async () => {
    for (const asn of [null, 0, false, '', [], {}, { asn: '', org: null }]) {
      assert.deepEqual(await run({ ip: '203.0.113.9', asn }), { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'Unknown', org: 'Unknown' } }, JSON.stringify(asn));
    }
    assert.deepEqual(await run({ ip: '203.0.113.9', asn: { asn: 64500, org: null } }), { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'AS64500', org: 'Unknown' } });
    // An org sent as "" is what ipapi.is said (it was "Unknown" before issue 32); the summary shows no empty name.
    const result = await run({ ip: '203.0.113.9', asn: { asn: 64500, org: '' } }) as IpapiResult;
    assert.deepEqual(result, { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'AS64500', org: '' } });
    assert.equal(engine.summary(result), 'AS64500');
    assert.deepEqual(await run({ ip: '203.0.113.9', asn: { asn: '', org: '' } }), { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'Unknown', org: '' } });
  });

  test('location and vpn with null fields: null; with "" fields: "" as sent (issue 32)', async () => {
    const result = await run({ ip: '203.0.113.9', location: { city: '', country_code: null, latitude: 1.5 }, vpn: { service: '' }, is_vpn: true }) as IpapiResult;
    assert.deepEqual(result, {
      ip: '203.0.113.9', ...FLAGS, is_vpn: true, asn: { asn: 'Unknown', org: 'Unknown' },
      location: { city: '', state: null, country: null, country_code: null, latitude: 1.5 },
      vpn: { service: '', url: null, type: null },
    });
    assert.equal(engine.summary(result), 'VPN');
    assert.deepEqual(engine.details!(result, '203.0.113.9').map((f) => f.label), ['Flags', 'Open in ipapi.is']);
    assert.deepEqual(await run({ ip: '203.0.113.9', location: null, vpn: null }), { ip: '203.0.113.9', ...FLAGS, asn: { asn: 'Unknown', org: 'Unknown' }, location: null, vpn: null });
  });

  test('what cannot be read still fails: no ip, "" as ip, a flag that is no boolean, no object', async () => {
    await rejectsWith(run({}), /^unexpected answer from upstream at ip: missing$/);
    await rejectsWith(run({ ip: '' }), /^unexpected answer from upstream at ip: missing$/);
    await rejectsWith(run({ ip: '203.0.113.9', is_tor: { exit: true } }), /^unexpected answer from upstream at is_tor: /);
    await rejectsWith(run([{ ip: '203.0.113.9' }]), /^unexpected answer from upstream at \(root\): /);
  });
});

describe('provider_11 through the runner (reversed IP)', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    fake = await startFakeHttp({ 'POST /': byQuery, 'POST /bad-key': reply.json({ error: `Invalid API key: ${KEY32}` }, 403) });
    dns = await startFakeDns({
      'one.one.example': { A: ['1.1.1.1'] },
      'vpn.example': { A: ['146.70.117.10'], AAAA: ['2606:4700:4700::1111'] },
    });
    runner = runnerHarness([engine], {
      dnsServers: [dns.address],
      settings: { provider_11: { base_url: fake.url, api_key: KEY32, retries: 0 } },
    });
  });
  after(async () => {
    await runner.close();
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain: ipapi.is asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'one.one.example', type: 'FQDN' }], ['ipapi']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    assert.equal((result!.ipapi as IpapiResult).ip, '1.1.1.1');
    assert.equal((result!.ipapi as IpapiResult).asn.asn, 'AS13335');
    assert.deepEqual(fake.requests.map(bodyOf), [{ q: '1.1.1.1', key: KEY32 }]);
  });

  test('a URL: the first IPv4 address of its host', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'https://vpn.example/path?x=1', type: 'URL' }], ['provider_11']);
    assert.equal(result!.reversed_ip, '146.70.117.10');
    assert.equal((result!.provider_11 as IpapiResult).vpn?.service, 'NordVPN');
    assert.deepEqual(fake.requests.map((r) => bodyOf(r).q), ['146.70.117.10']);
  });

  test('an upstream error is reported in errors, without the key', async () => {
    const bad = runnerHarness([engine], {
      dnsServers: [dns.address],
      settings: { provider_11: { base_url: `${fake.url}/bad-key`, api_key: KEY32, retries: 0 } },
    });
    try {
      const [result] = await bad.analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['provider_11']);
      assert.equal(result!.provider_11, null);
      const errors = result!.errors as Record<string, string>;
      assert.match(errors.provider_11!, /^HTTP 403 Forbidden: Invalid API key: \*\*\* \(key refused: check engines\.provider_11\.api_key or OAS_IPAPI_API_KEY\)$/);
      assert.ok(!JSON.stringify(result).includes(KEY32));
    } finally {
      await bad.close();
    }
  });
});
