import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { ipqueryDetails, ipqueryLookup, type IpqueryResult } from '../../engines/ipquery.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeReply } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { Catalog } from '../../src/engine/catalog.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { answeringUpstream } from '../helpers/answers.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';

/** ipquery.io's answer for 1.1.1.1 (engines.md 5.16). */
const CLOUDFLARE = {
  ip: '1.1.1.1',
  isp: { asn: 'AS13335', org: 'Cloudflare, Inc.', isp: 'Cloudflare, Inc.' },
  location: {
    country: 'Australia', country_code: 'AU', city: 'Sydney', state: 'New South Wales', zipcode: '1001',
    latitude: -33.86, longitude: 151.2, timezone: 'Australia/Sydney', localtime: '2026-01-10T10:00:00',
  },
  risk: { is_mobile: false, is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 },
};

/** A Tor exit that is also flagged as VPN and proxy. */
const TOR_EXIT = {
  ip: '185.220.101.1',
  isp: { asn: 'AS60729', org: 'Stiftung Erneuerbare Freiheit', isp: 'Zwiebelfreunde e.V.' },
  location: {
    country: 'Germany', country_code: 'DE', city: 'Berlin', state: 'Land Berlin', zipcode: '10115',
    latitude: 52.52, longitude: 13.405, timezone: 'Europe/Berlin', localtime: '2026-01-10T01:00:00',
  },
  risk: { is_mobile: false, is_vpn: true, is_tor: true, is_proxy: true, is_datacenter: true, risk_score: 100 },
};

const GOOGLE_V6 = {
  ip: '2001:4860:4860::8888',
  isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' },
  location: {
    country: 'United States', country_code: 'US', city: 'Mountain View', state: 'California', zipcode: '94043',
    latitude: 37.4056, longitude: -122.0775, timezone: 'America/Los_Angeles', localtime: '2026-01-09T16:00:00',
  },
  risk: { is_mobile: false, is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 },
};

/** Partial data: no ISP section, location without city, no risk score. */
const SPARSE = {
  ip: '203.0.113.77',
  isp: null,
  location: { country: 'Japan', country_code: 'JP', state: 'Tokyo' },
  risk: { is_mobile: true, is_vpn: false },
};

/** What ipquery.io says about an address it knows nothing of. */
const EMPTY = { ip: '198.51.100.1', isp: {}, location: {}, risk: {} };

const BY_IP: Record<string, object> = {
  '1.1.1.1': CLOUDFLARE,
  '185.220.101.1': TOR_EXIT,
  '2001:4860:4860::8888': GOOGLE_V6,
  '203.0.113.77': SPARSE,
  '198.51.100.1': EMPTY,
};

/** Answers `/<prefix>/<ip>` from BY_IP; unknown addresses get 404. */
function byIp(req: FakeRequest): FakeReply {
  const ip = req.path.split('/').pop()!;
  return BY_IP[ip] ? reply.json(BY_IP[ip]) : reply.status(404, { error: 'not found' });
}


describe('provider_13 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_13');
    assert.equal(engine.service, 'ipquery');
    assert.equal(engine.label, 'IPquery');
    assert.deepEqual(engine.tags, ['IP', 'risk', 'VPN', 'proxy', 'free_no_key']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6']);
    assert.equal(engine.reversedIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, []);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.ipquery.io' });
    assert.equal(engine.run, ipqueryLookup);
  });

  test('summary: ASN and ISP, country, risk, then the flags that are set', () => {
    const base: IpqueryResult = {
      ip: '1.1.1.1', geolocation: 'San Francisco, California', country_code: 'US', country_name: 'United States',
      isp: 'Cloudflare', asn: 'AS13335', is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: false,
      is_mobile: false, risk_score: 0, link: 'https://api.ipquery.io/1.1.1.1',
    };
    assert.equal(engine.summary(base), 'AS13335 Cloudflare · US · risk 0');
    assert.equal(engine.summary({ ...base, is_vpn: true, is_proxy: true, is_tor: true, risk_score: 100 }), 'AS13335 Cloudflare · US · risk 100 · VPN · proxy · Tor');
    assert.equal(
      engine.summary({ ...base, asn: 'Unknown', isp: 'Unknown', country_code: 'Unknown', risk_score: 'Unknown', is_mobile: true }),
      'risk unknown · mobile',
    );
    assert.equal(engine.summary({ ...base, asn: '', isp: '', country_code: '' }), 'risk 0');
  });

  test('details: risk score and flags, ISP, ASN, country, location, then the answer on ipquery.io', () => {
    // What the lookup returns for TOR_EXIT with the default base_url.
    const torExit: IpqueryResult = {
      ip: '185.220.101.1', geolocation: 'Berlin, Land Berlin', country_code: 'DE', country_name: 'Germany',
      isp: 'Zwiebelfreunde e.V.', asn: 'AS60729', is_vpn: true, is_tor: true, is_proxy: true, is_datacenter: true,
      is_mobile: false, risk_score: 100, link: 'https://api.ipquery.io/185.220.101.1',
    };
    assert.deepEqual(engine.details!(torExit, '185.220.101.1'), [
      { label: 'Risk score', value: '100' },
      { label: 'Flags', value: 'VPN, proxy, Tor, datacenter' },
      { label: 'ISP', value: 'Zwiebelfreunde e.V.' },
      { label: 'ASN', value: 'AS60729' },
      { label: 'Country', value: 'Germany (DE)' },
      { label: 'Location', value: 'Berlin, Land Berlin' },
      { label: 'Open in ipquery.io', value: 'https://api.ipquery.io/185.220.101.1', href: 'https://api.ipquery.io/185.220.101.1' },
    ]);
    // Sparse data: the "Unknown" placeholders drop out, no flag reads "none".
    const sparse: IpqueryResult = {
      ...torExit, geolocation: 'Unknown, Tokyo', country_code: 'JP', country_name: 'Japan', isp: 'Unknown', asn: 'Unknown',
      is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: false, risk_score: 'Unknown',
    };
    assert.deepEqual(ipqueryDetails(sparse).map((f) => [f.label, f.value]), [
      ['Risk score', 'Unknown'], ['Flags', 'none'], ['Country', 'Japan (JP)'], ['Location', 'Tokyo'], ['Open in ipquery.io', torExit.link],
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to ipqueryDetails's type).
    assert.equal(engine.details, ipqueryDetails);
  });
});

describe('provider_13 catalog variants (engines.md 6.5)', () => {
  test('main catalog: unchanged, not a default engine', () => {
    const main = new Catalog([engine]);
    assert.equal(main.find('ipquery'), engine);
    assert.deepEqual(engine.tags, ['IP', 'risk', 'VPN', 'proxy', 'free_no_key']);
    assert.equal(main.isDefault(engine), false);
  });

  test('older catalog: tagged default (pre-selected); the lookup is the same', () => {
    const catalog = new Catalog([engine], 'older');
    const older = catalog.find('provider_13')!;
    assert.deepEqual(older.tags, ['default', 'IP', 'risk', 'VPN', 'proxy', 'free_no_key']);
    assert.equal(catalog.isDefault(older), true);
    assert.deepEqual(catalog.defaults().map((e) => e.id), ['provider_13']);
    assert.equal(older.run, ipqueryLookup);
    assert.deepEqual(older.credentials, []);
    assert.deepEqual(older.types, engine.types);
    assert.deepEqual(older.defaults, engine.defaults);
    assert.equal(older.description, engine.description);
  });
});

describe('provider_13 against a loopback ipquery.io', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];

  function harness(path: string, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${path}`, ...settings } });
    harnesses.push(h);
    return h;
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': byIp,
      'GET /status500/*': reply.status(500, { error: 'internal error' }),
      'GET /flaky/*': sequence(reply.tooMany(1), byIp),
      'GET /malformed/*': reply.malformed(),
      'GET /wrong-shape/*': reply.json({ ...CLOUDFLARE, risk: { ...CLOUDFLARE.risk, risk_score: 'low' } }),
      'GET /no-ip/*': reply.json({ isp: CLOUDFLARE.isp }),
      'GET /hang/*': reply.hang(),
    });
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
  });

  test('the result, field by field', async () => {
    fake.reset();
    const h = harness('ok');
    const result = (await h.run('1.1.1.1', 'IPv4')) as IpqueryResult;
    assert.equal(result.ip, '1.1.1.1');
    assert.equal(result.geolocation, 'Sydney, New South Wales');
    assert.equal(result.country_code, 'AU');
    assert.equal(result.country_name, 'Australia');
    assert.equal(result.isp, 'Cloudflare, Inc.');
    assert.equal(result.asn, 'AS13335');
    assert.equal(result.is_vpn, false);
    assert.equal(result.is_tor, false);
    assert.equal(result.is_proxy, false);
    assert.equal(result.is_datacenter, true);
    assert.equal(result.is_mobile, false);
    assert.equal(result.risk_score, 0);
    assert.equal(result.link, `${fake.url}/ok/1.1.1.1`);
    assert.deepEqual(Object.keys(result).sort(), [
      'asn', 'country_code', 'country_name', 'geolocation', 'ip', 'is_datacenter', 'is_mobile', 'is_proxy', 'is_tor',
      'is_vpn', 'isp', 'link', 'risk_score',
    ]);
    assert.equal(engine.summary(result), 'AS13335 Cloudflare, Inc. · AU · risk 0 · datacenter');
    const [req, ...more] = fake.hits('GET /ok/');
    assert.equal(more.length, 0);
    assert.equal(req!.path, '/ok/1.1.1.1');
  });

  test('the default link is the public API address of the queried IP', () => {
    assert.equal(`${String(engine.defaults.base_url)}/1.1.1.1`, 'https://api.ipquery.io/1.1.1.1');
  });

  test('a base_url with a trailing slash', async () => {
    fake.reset();
    await harness('ok/', {}).run('1.1.1.1', 'IPv4');
    assert.equal(fake.requests[0]!.path, '/ok/1.1.1.1');
  });

  test('a Tor exit: every flag and the score', async () => {
    const result = (await harness('ok').run('185.220.101.1', 'IPv4')) as IpqueryResult;
    assert.deepEqual(
      [result.is_vpn, result.is_tor, result.is_proxy, result.risk_score, result.asn],
      [true, true, true, 100, 'AS60729'],
    );
    assert.equal(engine.summary(result), 'AS60729 Zwiebelfreunde e.V. · DE · risk 100 · datacenter · VPN · proxy · Tor');
  });

  test('IPv6: the address in the path', async () => {
    fake.reset();
    const result = (await harness('ok').run('2001:4860:4860::8888', 'IPv6')) as IpqueryResult;
    assert.equal(result.ip, '2001:4860:4860::8888');
    assert.equal(result.asn, 'AS15169');
    assert.equal(result.geolocation, 'Mountain View, California');
    assert.equal(fake.requests[0]!.path, '/ok/2001:4860:4860::8888');
  });

  test('partial data: Unknown defaults, false flags, risk_score "Unknown", asn "Unknown" (as the reference; null before issue 32)', async () => {
    assert.deepEqual(await harness('ok').run('203.0.113.77', 'IPv4'), {
      ip: '203.0.113.77',
      geolocation: 'Unknown, Tokyo',
      country_code: 'JP',
      country_name: 'Japan',
      isp: 'Unknown',
      asn: 'Unknown',
      is_vpn: false,
      is_tor: false,
      is_proxy: false,
      is_datacenter: false,
      is_mobile: true,
      risk_score: 'Unknown',
      link: `${fake.url}/ok/203.0.113.77`,
    });
  });

  test('nothing known about the address: the Unknown defaults, as the reference (it was null before issue 32)', async () => {
    assert.deepEqual(await harness('ok').run('198.51.100.1', 'IPv4'), {
      ip: '198.51.100.1', geolocation: 'Unknown, Unknown', country_code: 'Unknown', country_name: 'Unknown', isp: 'Unknown', asn: 'Unknown',
      is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: false, is_mobile: false, risk_score: 'Unknown', link: `${fake.url}/ok/198.51.100.1`,
    });
  });

  test('404: null', async () => {
    assert.equal(await harness('ok').run('192.0.2.44', 'IPv4'), null);
  });

  test('not an IP: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('example.com', 'FQDN'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = (await harness('flaky', { retries: 2, timeout_ms: 5000 }).run('1.1.1.1', 'IPv4')) as IpqueryResult;
    assert.equal(result.asn, 'AS13335');
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await rejectsWith(harness('wrong-shape', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at risk\.risk_score: /);
  });

  test('an answer without ip: an error (the reference returned null)', async () => {
    await rejectsWith(harness('no-ip', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at ip: /);
  });

  test('a hanging upstream: timeout', async () => {
    await rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('1.1.1.1', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});

describe('provider_13 minimal and degenerate answers (issue 26)', () => {
  const upstream = answeringUpstream(engine, 'GET /lenient/*', ['203.0.113.9', 'IPv4'], { settings: { retries: 0 } });
  const { run } = upstream;
  const defaults = (): IpqueryResult => ({
    ip: '203.0.113.9', geolocation: 'Unknown, Unknown', country_code: 'Unknown', country_name: 'Unknown', isp: 'Unknown', asn: 'Unknown',
    is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: false, is_mobile: false, risk_score: 'Unknown', link: `${upstream.fake.url}/lenient/203.0.113.9`,
  });

  test('the minimal answer, {"ip"}: the Unknown defaults, asn "Unknown" (engines.md 5.16; null before issue 32); so are sections null, {} or of nulls', async () => {
    const minimal = await run({ ip: '203.0.113.9' }) as IpqueryResult;
    assert.deepEqual(minimal, defaults());
    assert.equal(engine.summary(minimal), 'risk unknown');
    assert.deepEqual(ipqueryDetails(minimal).map((f) => f.label), ['Risk score', 'Flags', 'Open in ipquery.io']);
    // The ASN is named by no engine reading: bad_asn and the graph take "Unknown" for none.
    assert.equal(engine.asn!(minimal)?.asn, 'Unknown');
    assert.deepEqual(await run({ ip: '203.0.113.9', isp: null, location: {}, risk: { is_vpn: null, risk_score: '' } }), defaults());
  });

  test('flags sent as 0 or "" are false (and known); 1 or "true" true; a score as text is its number', async () => {
    assert.deepEqual(await run({ ip: '203.0.113.9', risk: { is_vpn: 0, is_tor: '' } }), defaults());
    assert.deepEqual(await run({ ip: '203.0.113.9', risk: { is_vpn: 1, is_proxy: 'true', risk_score: '85' } }), {
      ...defaults(), is_vpn: true, is_proxy: true, risk_score: 85,
    });
  });

  test('texts sent as "" are kept as sent (issue 32, as the reference; they were Unknown before); summary and card skip them', async () => {
    const result = await run({ ip: '203.0.113.9', isp: { asn: '', org: 'Example Org', isp: '' }, location: { city: '', state: 'Bavaria', country: '', country_code: null } }) as IpqueryResult;
    assert.deepEqual(result, { ...defaults(), isp: '', asn: '', geolocation: ', Bavaria', country_name: '' });
    assert.equal(engine.summary(result), 'risk unknown');
    assert.deepEqual(ipqueryDetails(result).map((f) => [f.label, f.value]), [
      ['Risk score', 'Unknown'], ['Flags', 'none'], ['Location', 'Bavaria'], ['Open in ipquery.io', result.link],
    ]);
  });

  test('without isp.isp, the ISP is the org (the reference: Unknown)', async () => {
    assert.deepEqual(await run({ ip: '203.0.113.9', isp: { asn: 'AS64500', org: 'Example Org' } }), { ...defaults(), isp: 'Example Org', asn: 'AS64500' });
  });

  test('what cannot be read still fails, naming the field', async () => {
    await rejectsWith(run({}), /^unexpected answer from upstream at ip: /);
    await rejectsWith(run({ ip: '203.0.113.9', risk: { is_tor: 'perhaps' } }), /^unexpected answer from upstream at risk\.is_tor: expected a boolean$/);
    await rejectsWith(run([]), /^unexpected answer from upstream at \(root\): /);
  });
});

describe('provider_13 through the runner (reversed IP)', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    fake = await startFakeHttp({ 'GET /*': byIp });
    dns = await startFakeDns({
      'one.one.example': { A: ['1.1.1.1'] },
      'v6.example': { AAAA: ['2001:4860:4860::8888'] },
    });
    runner = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_13: { base_url: fake.url, retries: 0 } } });
  });
  after(async () => {
    await runner.close();
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain: ipquery.io asked about the IP it resolves to; reversed_ip set', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'one.one.example', type: 'FQDN' }], ['ipquery']);
    assert.equal(result!.reversed_ip, '1.1.1.1');
    assert.equal((result!.ipquery as IpqueryResult).ip, '1.1.1.1');
    assert.equal((result!.ipquery as IpqueryResult).asn, 'AS13335');
    assert.deepEqual(fake.requests.map((r) => r.path), ['/1.1.1.1']);
  });

  test('a domain with IPv6 only: the IPv6 address', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'v6.example', type: 'FQDN' }], ['provider_13']);
    assert.equal(result!.reversed_ip, '2001:4860:4860::8888');
    assert.equal((result!.provider_13 as IpqueryResult).asn, 'AS15169');
    assert.deepEqual(fake.requests.map((r) => r.path), ['/2001:4860:4860::8888']);
  });
});
