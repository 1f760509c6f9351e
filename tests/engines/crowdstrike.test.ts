import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import engine, {
  crowdStrikeDetails, crowdStrikeLookup, crowdStrikeSummary, crowdStrikeTarget, falconLink, type CrowdStrikeResult,
} from '../../engines/crowdstrike.js';
import mdeEngine from '../../engines/mde.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { HttpTransport } from '../../src/http/client.js';
import { clearTokenCache } from '../../src/http/oauth.js';
import type { Observable, ObservableType } from '../../src/observables/types.js';
import { EngineRunner } from '../../src/runner/runner.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import { openStorage } from '../../src/store/storage.js';
import { EICAR, falconFake, fakeRoutes, fakeSettings, type FalconFake, type FalconFakeOptions } from '../fakes/crowdstrike.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { mdeFake } from '../fakes/mde.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { KeyWatch } from '../helpers/key-watch.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { removeTempDir, tempDir } from '../helpers/temp.js';

const CLIENT_ID = 'cs-client-7f3a9b21c0d4e5f6';
const SECRET = 'CS-SECRET-9d8c7b6a5f4e3d2c1b0a';
const FALCON = 'https://falcon.crowdstrike.com';

const watch = new KeyWatch(SECRET);
/** Every fake of this file: their issued tokens must appear in no output. */
const fakes: FalconFake[] = [];
const closers: (() => Promise<void>)[] = [];
let server: FakeHttpServer;
let mounted = 0;

/** Every token the fakes issued, whole and its first 24 characters (an error cut at its length limit). */
function issuedTokens(): string[] {
  return fakes.flatMap((f) => f.issued).flatMap((token) => [token, token.slice(0, 24)]);
}

before(async () => {
  server = await startFakeHttp();
});
after(async () => {
  for (const close of closers.reverse()) await close();
  await server.close();
});

interface Mounted {
  falcon: FalconFake;
  prefix: string;
  base: string;
  harness(settings?: Record<string, unknown>): EngineHarness;
  run(value: string, type: ObservableType, settings?: Record<string, unknown>): Promise<CrowdStrikeResult | null>;
}

/**
 * A Falcon fake of its own under a fresh prefix of the shared server (so a token URL of its
 * own, so a token cache entry of its own), expecting CLIENT_ID/SECRET; `overrides` replace
 * some of its routes.
 */
function mount(
  options: FalconFakeOptions = {},
  overrides: (prefix: string, falcon: FalconFake) => Record<string, FakeRoute> = () => ({}),
): Mounted {
  const prefix = `/falcon${++mounted}`;
  const falcon = falconFake({ clientId: CLIENT_ID, clientSecret: SECRET, ...options, prefix });
  for (const [key, route] of Object.entries({ ...falcon.routes, ...overrides(prefix, falcon) })) server.route(key, route);
  fakes.push(falcon);
  const base = `${server.url}${prefix}`;
  const harness = (settings: Record<string, unknown> = {}) => {
    const inner = engineHarness(engine, { settings: { base_url: base, client_id: CLIENT_ID, client_secret: SECRET, retries: 0, ...settings } });
    closers.push(() => inner.close());
    return watch.watch(inner);
  };
  return { falcon, prefix, base, harness, run: async (value, type, settings) => (await harness(settings).run(value, type)) as CrowdStrikeResult | null };
}

function link(value: string): string {
  return `${FALCON}/search/?term=_all%3A~%27${encodeURIComponent(value)}%27`;
}

const NOT_FOUND = (value: string, devices = 0): CrowdStrikeResult => ({ device_count: devices, link: link(value), indicator_found: false });

const C2_RESULT: CrowdStrikeResult = {
  device_count: 3,
  link: link('malware-c2.example'),
  indicator_found: true,
  published_date: '2024-01-01',
  last_updated: '2024-06-01',
  actors: ['FANCYBEAR'],
  malicious_confidence: 'high',
  threat_types: ['Criminal'],
  kill_chain: ['C2'],
  malware_families: ['Emotet'],
  vulnerabilities: ['CVE-2023-1234'],
};

describe('provider_04 declaration', () => {
  test('catalog fields, credentials, defaults', () => {
    assert.equal(engine.id, 'provider_04');
    assert.equal(engine.service, 'crowdstrike');
    assert.equal(engine.label, 'CrowdStrike');
    assert.deepEqual(engine.tags, ['hash', 'IP', 'domain', 'URL']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.pivot, false);
    assert.equal(engine.acceptsPrivateIp, false);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [
      { setting: 'client_id', label: 'API client ID', env: ['CROWDSTRIKE_CLIENT_ID'] },
      { setting: 'client_secret', label: 'API client secret', env: ['CROWDSTRIKE_CLIENT_SECRET'] },
      { setting: 'falcon_url', label: 'Falcon console URL', required: false, secret: false, env: ['CROWDSTRIKE_FALCON_BASE_URL'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.crowdstrike.com', falcon_url: FALCON });
    assert.equal(engine.run, crowdStrikeLookup);
    assert.equal(engine.summary, crowdStrikeSummary);
    assert.equal(engine.details, crowdStrikeDetails);
  });

  test('what Falcon is asked: type, lower-cased value, intel id; a URL is its host (bug 15)', () => {
    const t = (value: string, type: ObservableType) => crowdStrikeTarget({ value, type });
    assert.deepEqual(t('Malware-C2.Example.', 'FQDN'), { type: 'domain', value: 'malware-c2.example', id: 'domain_malware-c2.example' });
    assert.deepEqual(t('45.155.205.66', 'IPv4'), { type: 'ipv4', value: '45.155.205.66', id: 'ip_address_45.155.205.66' });
    assert.deepEqual(t('2A03:B0C0:3:D0::1AF:1', 'IPv6'), { type: 'ipv6', value: '2a03:b0c0:3:d0::1af:1', id: 'ip_address_2a03:b0c0:3:d0::1af:1' });
    assert.deepEqual(t(EICAR.md5.toUpperCase(), 'MD5'), { type: 'md5', value: EICAR.md5, id: `hash_md5_${EICAR.md5}` });
    assert.deepEqual(t(EICAR.sha1, 'SHA1'), { type: 'sha1', value: EICAR.sha1, id: `hash_sha1_${EICAR.sha1}` });
    assert.deepEqual(t(EICAR.sha256, 'SHA256'), { type: 'sha256', value: EICAR.sha256, id: `hash_sha256_${EICAR.sha256}` });
    // The reference split on "/" and ":": userinfo and IPv6 literals broke it.
    assert.deepEqual(t('https://user:pa:ss@Login.Phish.Example:8443/a/b?c=d', 'URL'), { type: 'domain', value: 'login.phish.example', id: 'domain_login.phish.example' });
    assert.deepEqual(t('http://[2A03:B0C0:3:D0::1AF:1]:8080/x', 'URL'), { type: 'ipv6', value: '2a03:b0c0:3:d0::1af:1', id: 'ip_address_2a03:b0c0:3:d0::1af:1' });
    assert.deepEqual(t('http://45.155.205.66/gate.php', 'URL'), { type: 'ipv4', value: '45.155.205.66', id: 'ip_address_45.155.205.66' });
    assert.equal(t('alice@example.com', 'Email'), null);
  });

  test('link: falcon_url with its path kept (bug 16); the default console when unset or not a URL', () => {
    assert.equal(falconLink('https://falcon.eu-1.crowdstrike.com', 'a.example'), 'https://falcon.eu-1.crowdstrike.com/search/?term=_all%3A~%27a.example%27');
    assert.equal(falconLink('https://proxy.corp.example/falcon/', 'a.example'), 'https://proxy.corp.example/falcon/search/?term=_all%3A~%27a.example%27');
    assert.equal(falconLink('https://proxy.corp.example/tools/falcon?x=1', '2001:db8::1'), 'https://proxy.corp.example/tools/falcon/search/?term=_all%3A~%272001%3Adb8%3A%3A1%27');
    assert.equal(falconLink(undefined, 'a.example'), link('a.example'));
    assert.equal(falconLink('not a url', 'a.example'), link('a.example'));
  });

  test('summary and details', () => {
    assert.equal(engine.summary(C2_RESULT), 'high confidence · actors FANCYBEAR · Emotet · seen on 3 devices');
    assert.equal(engine.summary(NOT_FOUND('x.example')), 'not in Falcon Intelligence · seen on no device');
    assert.equal(engine.summary(NOT_FOUND('x.example', 1)), 'not in Falcon Intelligence · seen on 1 device');
    assert.deepEqual(crowdStrikeDetails(C2_RESULT), [
      { label: 'Devices', value: '3' },
      { label: 'Falcon Intelligence', value: 'malicious confidence high' },
      { label: 'Actors', value: 'FANCYBEAR' },
      { label: 'Malware families', value: 'Emotet' },
      { label: 'Threat types', value: 'Criminal' },
      { label: 'Kill chain', value: 'C2' },
      { label: 'Vulnerabilities', value: 'CVE-2023-1234' },
      { label: 'Published', value: '2024-01-01' },
      { label: 'Last updated', value: '2024-06-01' },
      { label: 'Open in Falcon', value: link('malware-c2.example'), href: link('malware-c2.example') },
    ]);
    assert.deepEqual(crowdStrikeDetails(NOT_FOUND('x.example')), [
      { label: 'Devices', value: '0' },
      { label: 'Falcon Intelligence', value: 'not found' },
      { label: 'Open in Falcon', value: link('x.example'), href: link('x.example') },
    ]);
  });
});

describe('provider_04 against a loopback Falcon API', () => {
  let ok: Mounted;
  before(() => {
    ok = mount();
  });

  test('domain found: engines.md\'s example, field by field; the three requests', async () => {
    clearTokenCache();
    ok.falcon.apiCalls.length = 0;
    server.reset();
    assert.deepEqual(await ok.run('malware-c2.example', 'FQDN'), C2_RESULT);
    const [tokenRequest, ...moreTokens] = server.hits(`POST ${ok.prefix}/oauth2/token`);
    assert.equal(moreTokens.length, 0);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(tokenRequest!.body)), { client_id: CLIENT_ID, client_secret: SECRET });
    assert.match(String(tokenRequest!.headers['content-type']), /application\/x-www-form-urlencoded/);
    const [count] = server.hits(`GET ${ok.prefix}/iocs/aggregates/indicators/device-count/v1`);
    assert.deepEqual(Object.fromEntries(count!.query), { type: 'domain', value: 'malware-c2.example' });
    const [intel] = server.hits(`POST ${ok.prefix}/intel/entities/indicators/GET/v1`);
    assert.deepEqual(JSON.parse(intel!.body), { ids: ['domain_malware-c2.example'] });
    const token = ok.falcon.issued.at(-1)!;
    for (const r of [count!, intel!]) assert.equal(r.headers.authorization, `Bearer ${token}`);
    assert.equal(server.requests.length, 3);
  });

  test('domain not found: exactly device_count 0, link, indicator_found false', async () => {
    assert.deepEqual(await ok.run('clean.example', 'FQDN'), NOT_FOUND('clean.example'));
  });

  test('domain lower-cased, trailing dot dropped; seen on devices but not in intel', async () => {
    assert.deepEqual(await ok.run('Example.COM.', 'FQDN'), NOT_FOUND('example.com', 12));
  });

  test('IPv4 found and not found', async () => {
    assert.deepEqual(await ok.run('45.155.205.66', 'IPv4'), {
      device_count: 1, link: link('45.155.205.66'), indicator_found: true, published_date: '2024-01-01', last_updated: '2024-06-01',
      actors: ['WIZARDSPIDER'], malicious_confidence: 'low', threat_types: ['Criminal', 'Ransomware'], kill_chain: ['C2', 'ActionOnObjectives'],
      malware_families: ['TrickBot', 'Conti'], vulnerabilities: [],
    });
    assert.deepEqual(await ok.run('8.8.8.8', 'IPv4'), NOT_FOUND('8.8.8.8', 25));
    assert.deepEqual(await ok.run('198.51.100.7', 'IPv4'), NOT_FOUND('198.51.100.7'));
  });

  test('IPv6 found (lower-cased) and not found', async () => {
    server.reset();
    const found = await ok.run('2A03:B0C0:3:D0::1AF:1', 'IPv6');
    assert.equal(found?.indicator_found, true);
    assert.equal(found?.device_count, 4);
    assert.equal(found?.indicator_found && found.malicious_confidence, 'unverified');
    assert.equal(found?.link, link('2a03:b0c0:3:d0::1af:1'));
    assert.deepEqual(Object.fromEntries(server.hits(`GET ${ok.prefix}/iocs/`)[0]!.query), { type: 'ipv6', value: '2a03:b0c0:3:d0::1af:1' });
    assert.deepEqual(await ok.run('2001:db8::99', 'IPv6'), NOT_FOUND('2001:db8::99'));
  });

  test('URL: its host, from the proper parser (userinfo, port); found and not found', async () => {
    server.reset();
    const found = await ok.run('https://bob:s3cr:et@Login.Phish.Example:8443/wp/login.php?next=/', 'URL');
    assert.deepEqual(found, {
      device_count: 2, link: link('login.phish.example'), indicator_found: true, published_date: '2024-05-31', last_updated: '2024-07-03',
      actors: [], malicious_confidence: 'medium', threat_types: ['Phishing'], kill_chain: ['Delivery'], malware_families: [], vulnerabilities: [],
    });
    assert.deepEqual(Object.fromEntries(server.hits(`GET ${ok.prefix}/iocs/`)[0]!.query), { type: 'domain', value: 'login.phish.example' });
    assert.deepEqual(JSON.parse(server.hits(`POST ${ok.prefix}/intel/`)[0]!.body), { ids: ['domain_login.phish.example'] });
    assert.deepEqual(await ok.run('http://downloads.clean.example/setup.exe', 'URL'), NOT_FOUND('downloads.clean.example'));
  });

  test('URL with an IPv6 literal: looked up as that IPv6 address', async () => {
    server.reset();
    const result = await ok.run('http://[2a03:b0c0:3:d0::1af:1]:8080/panel/', 'URL');
    assert.equal(result?.indicator_found, true);
    assert.equal(result?.device_count, 4);
    assert.deepEqual(JSON.parse(server.hits(`POST ${ok.prefix}/intel/`)[0]!.body), { ids: ['ip_address_2a03:b0c0:3:d0::1af:1'] });
  });

  test('MD5, SHA1, SHA256 found and not found', async () => {
    const eicar = (devices: number, published: string | null): CrowdStrikeResult => ({
      device_count: devices, link: '', indicator_found: true, published_date: published, last_updated: '2024-06-01', actors: [],
      malicious_confidence: 'high', threat_types: ['Commodity'], kill_chain: [], malware_families: ['EICAR-Test-File'], vulnerabilities: [],
    });
    assert.deepEqual(await ok.run(EICAR.md5.toUpperCase(), 'MD5'), { ...eicar(7, '2024-01-01'), link: link(EICAR.md5) });
    // No device saw it (Falcon's 404) and no published_date: 0 devices, a null date (the reference wrote 1970-01-01).
    assert.deepEqual(await ok.run(EICAR.sha1, 'SHA1'), { ...eicar(0, null), link: link(EICAR.sha1) });
    assert.deepEqual(await ok.run(EICAR.sha256, 'SHA256'), { ...eicar(7, '2024-01-01'), link: link(EICAR.sha256) });
    const md5 = 'd41d8cd98f00b204e9800998ecf8427e';
    const sha1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    const sha256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    assert.deepEqual(await ok.run(md5, 'MD5'), NOT_FOUND(md5));
    assert.deepEqual(await ok.run(sha1, 'SHA1'), NOT_FOUND(sha1));
    assert.deepEqual(await ok.run(sha256, 'SHA256'), NOT_FOUND(sha256));
  });

  test('dates are UTC whatever the time zone (a timestamp one second before midnight UTC)', async () => {
    const saved = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      // The zone took effect: locally that instant is already the next day.
      assert.equal(new Date(1717199999 * 1000).getDate(), 1);
      const result = await ok.run('login.phish.example', 'FQDN');
      assert.equal(result?.indicator_found && result.published_date, '2024-05-31');
      assert.equal(result?.indicator_found && result.last_updated, '2024-07-03');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('a custom falcon_url: the link keeps its path (bug 16)', async () => {
    const result = await ok.run('malware-c2.example', 'FQDN', { falcon_url: 'https://gateway.corp.example/crowdstrike/' });
    assert.equal(result?.link, 'https://gateway.corp.example/crowdstrike/search/?term=_all%3A~%27malware-c2.example%27');
  });

  test('a 200 with empty device resources: 0 devices (the reference crashed into null)', async () => {
    const m = mount({}, (p) => ({ [`GET ${p}/iocs/aggregates/indicators/device-count/v1`]: reply.json({ meta: {}, resources: [], errors: [] }) }));
    assert.deepEqual(await m.run('malware-c2.example', 'FQDN'), { ...C2_RESULT, device_count: 0 });
  });

  test('an intel 200 with empty resources: not found', async () => {
    const m = mount({}, (p) => ({ [`POST ${p}/intel/entities/indicators/GET/v1`]: reply.json({ meta: {}, resources: [], errors: [] }) }));
    assert.deepEqual(await m.run('malware-c2.example', 'FQDN'), NOT_FOUND('malware-c2.example', 3));
  });

  test('not a type the engine takes: null, nothing asked', async () => {
    server.reset();
    assert.equal(await ok.run('alice@example.com', 'Email'), null);
    assert.equal(server.requests.length, 0);
  });

  test('called directly without a secret: an error before any request', async () => {
    server.reset();
    await watch.rejectsWith(ok.harness({ client_secret: undefined }).run('malware-c2.example', 'FQDN'), /^not configured: client_secret$/);
    assert.equal(server.requests.length, 0);
  });
});

describe('provider_04 token: one per process, shared, refreshed', () => {
  beforeEach(() => clearTokenCache());

  test('reused across many observables: one token request', async () => {
    const m = mount();
    const observables: [string, ObservableType][] = [
      ['malware-c2.example', 'FQDN'], ['clean.example', 'FQDN'], ['45.155.205.66', 'IPv4'], [EICAR.md5, 'MD5'], ['https://login.phish.example/', 'URL'],
    ];
    for (const [value, type] of observables) assert.ok(await m.run(value, type));
    assert.equal(m.falcon.tokenRequests(), 1);
    assert.equal(m.falcon.apiCalls.length, 10);
    assert.ok(m.falcon.apiCalls.every((c) => c.token === m.falcon.issued[0]));
  });

  test('concurrent callers share one in-flight token request', async () => {
    const m = mount();
    const h = m.harness();
    const values = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example', 'malware-c2.example'];
    const results = await Promise.all(values.map((value) => h.run(value, 'FQDN')));
    assert.equal(results.length, 6);
    assert.equal(m.falcon.tokenRequests(), 1);
  });

  test('expires_in as a string is understood: reused', async () => {
    const m = mount({ expiresIn: '1799' });
    await m.run('a.example', 'FQDN');
    await m.run('b.example', 'FQDN');
    assert.equal(m.falcon.tokenRequests(), 1);
  });

  test('expired: a token whose expires_in is within the safety margin is refreshed for the next observable', async () => {
    const m = mount({ expiresIn: 60 });
    for (const value of ['a.example', 'b.example', 'c.example']) {
      assert.deepEqual(await m.run(value, 'FQDN'), NOT_FOUND(value));
    }
    assert.equal(m.falcon.tokenRequests(), 3);
    assert.equal(new Set(m.falcon.issued).size, 3);
    // Each observable used its own token (a stale one is never handed out again).
    assert.deepEqual([...new Set(m.falcon.apiCalls.map((c) => c.token))], m.falcon.issued);
  });

  test('401 from the API: the token is refreshed once and the call retried; exactly 2 token requests', async () => {
    const m = mount({ rejectFirst: 1 });
    assert.deepEqual(await m.run('malware-c2.example', 'FQDN'), C2_RESULT);
    assert.equal(m.falcon.tokenRequests(), 2);
    const [first, second] = m.falcon.issued;
    assert.deepEqual(m.falcon.apiCalls.filter((c) => c.token === first).length, 2, 'both calls tried the first token');
    assert.deepEqual(m.falcon.apiCalls.filter((c) => c.token === second).length, 2, 'both retried with the second');
    // The new token serves the next observables.
    await m.run('clean.example', 'FQDN');
    assert.equal(m.falcon.tokenRequests(), 2);
  });

  test('the API rejects every token: one refresh only, then a one-line authentication error', async () => {
    const m = mount({ rejectFirst: 1000 });
    await watch.rejectsWith(m.run('malware-c2.example', 'FQDN'), /^CrowdStrike: authentication failed \(HTTP 401 Unauthorized: access denied, invalid bearer token\)$/);
    assert.equal(m.falcon.tokenRequests(), 2);
  });

  test('wrong credentials: the token endpoint\'s 401 is a one-line authentication error, no API call', async () => {
    const m = mount();
    await watch.rejectsWith(m.run('malware-c2.example', 'FQDN', { client_secret: 'CS-WRONG-SECRET-000111222' }),
      /^CrowdStrike: authentication failed \(HTTP 401 Unauthorized: access denied, invalid client\)$/);
    assert.equal(m.falcon.apiCalls.length, 0);
    assert.equal(m.falcon.tokenRequests(), 1, 'the two calls shared the failed token request');
    // A failure is not cached: the next observable asks again.
    await watch.rejectsWith(m.run('clean.example', 'FQDN', { client_secret: 'CS-WRONG-SECRET-000111222' }), /^CrowdStrike: authentication failed/);
    assert.equal(m.falcon.tokenRequests(), 2);
  });

  test('a token endpoint that echoes the secret: masked', async () => {
    const m = mount({}, (p) => ({
      [`POST ${p}/oauth2/token`]: (req) => reply.json({ errors: [{ code: 403, message: `access denied for ${new URLSearchParams(req.body).get('client_secret')}` }] }, 403),
    }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: authentication failed \(HTTP 403 Forbidden: access denied for \*\*\*\)$/);
  });

  test('token endpoint 500: a one-line error naming CrowdStrike', async () => {
    const m = mount({}, (p) => ({ [`POST ${p}/oauth2/token`]: reply.status(500) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: token request failed \(HTTP 500 Internal Server Error\)$/);
  });

  test('token answer without an access token: a clean error', async () => {
    const m = mount({}, (p) => ({ [`POST ${p}/oauth2/token`]: reply.json({ token_type: 'bearer', expires_in: 1799 }, 201) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: unusable token answer \(unexpected answer from upstream at access_token: /);
  });

  test('token endpoint hanging: timeout', async () => {
    const m = mount({}, (p) => ({ [`POST ${p}/oauth2/token`]: reply.hang() }));
    await watch.rejectsWith(m.run('a.example', 'FQDN', { timeout_ms: 300 }), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(server.url).port}$`));
  });
});

describe('provider_04 upstream failures', () => {
  const COUNT = (p: string) => `GET ${p}/iocs/aggregates/indicators/device-count/v1`;
  const INTEL = (p: string) => `POST ${p}/intel/entities/indicators/GET/v1`;

  test('HTTP 500: an error, not null', async () => {
    const m = mount({}, (p) => ({ [COUNT(p)]: reply.status(500) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 then 200: retried (Retry-After honoured), succeeds', async () => {
    const m = mount({}, (p, falcon) => ({ [INTEL(p)]: sequence(reply.tooMany(0), falcon.routes[INTEL(p)]!) }));
    assert.deepEqual(await m.run('malware-c2.example', 'FQDN', { retries: 2 }), C2_RESULT);
  });

  test('429 that persists: an error after the retries', async () => {
    const m = mount({}, (p) => ({ [INTEL(p)]: reply.tooMany(0) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN', { retries: 1 }), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON: a clean error', async () => {
    const m = mount({}, (p) => ({ [INTEL(p)]: reply.malformed() }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    const m = mount({}, (p) => ({ [COUNT(p)]: reply.json({ meta: {}, resources: [{ device_count: 'three' }], errors: [] }) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^unexpected answer from upstream at resources\.0\.device_count: /);
  });

  test('API hanging: timeout', async () => {
    const m = mount({}, (p) => ({ [COUNT(p)]: reply.hang() }));
    await watch.rejectsWith(m.run('a.example', 'FQDN', { timeout_ms: 300 }), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(server.url).port}$`));
  });

  test('403 (an API client without the intel scope): an error with Falcon\'s reason, not "not found"', async () => {
    const m = mount({}, (p) => ({ [INTEL(p)]: reply.json({ meta: {}, errors: [{ code: 403, message: 'access denied, authorization failed' }] }, 403) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: HTTP 403 Forbidden: access denied, authorization failed$/);
  });

  test('an API that echoes the token and the secret in its error: both masked', async () => {
    const m = mount({}, (p) => ({
      [INTEL(p)]: (req) => reply.json({ errors: [{ code: 403, message: `denied: ${req.headers.authorization} for ${SECRET}` }] }, 403),
    }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: HTTP 403 Forbidden: denied: Bearer \*\*\* for \*\*\*$/);
  });

  test('a 404 that is not Falcon\'s (a wrong base_url): an error, not 0 devices', async () => {
    const m = mount({}, (p) => ({ [COUNT(p)]: reply.json({ error: 'not_found' }, 404) }));
    await watch.rejectsWith(m.run('a.example', 'FQDN'), /^CrowdStrike: HTTP 404 Not Found: not_found$/);
  });

  test('a network failure: a one-line error', async () => {
    const h = engineHarness(engine, { settings: { base_url: 'http://127.0.0.1:1', client_id: CLIENT_ID, client_secret: SECRET, retries: 0 } });
    closers.push(() => h.close());
    await watch.rejectsWith(watch.watch(h).run('a.example', 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('provider_04: minimal and degenerate answers (issue 26)', () => {
  const COUNT = (p: string) => `GET ${p}/iocs/aggregates/indicators/device-count/v1`;
  const INTEL = (p: string) => `POST ${p}/intel/entities/indicators/GET/v1`;
  /** A Falcon answering `count` and `intel` (JSON bodies, status 200 unless given) to every value. */
  const answering = (count: unknown, intel: unknown, intelStatus = 200) =>
    mount({}, (p) => ({ [COUNT(p)]: reply.json(count), [INTEL(p)]: reply.json(intel, intelStatus) }));
  /** Found, and Falcon said nothing more than that. */
  const BARE_FOUND = (devices: number): CrowdStrikeResult => ({
    device_count: devices,
    link: link('a.example'),
    indicator_found: true,
    published_date: null,
    last_updated: null,
    actors: [],
    malicious_confidence: null,
    threat_types: [],
    kill_chain: [],
    malware_families: [],
    vulnerabilities: [],
  });

  test('the minimal answers: a device count alone, an indicator with its id alone', async () => {
    const m = answering({ resources: [{ device_count: 3 }] }, { resources: [{ id: 'domain_a.example' }] });
    assert.deepEqual(await m.run('a.example', 'FQDN'), BARE_FOUND(3));
  });

  test('no meta, no errors, no resources: 0 devices, not found', async () => {
    for (const empty of [{}, { resources: null, errors: null }, { resources: {} }, { resources: [null] }]) {
      assert.deepEqual(await answering(empty, empty).run('a.example', 'FQDN'), NOT_FOUND('a.example'), JSON.stringify(empty));
    }
  });

  test('a device resource without its count, or null / "" / a numeric string: 0, 0, 0, the number', async () => {
    for (const [resource, devices] of [[{ id: 'domain:a.example' }, 0], [{ device_count: null }, 0], [{ device_count: '' }, 0], [{ device_count: '7' }, 7]] as const) {
      assert.deepEqual(await answering({ resources: [resource] }, {}).run('a.example', 'FQDN'), NOT_FOUND('a.example', devices), JSON.stringify(resource));
    }
  });

  test('one indicator for a list, one string for a list, null lists, "" confidence, dates as strings', async () => {
    const m = answering({ resources: { device_count: 1 } }, {
      resources: {
        id: 'domain_a.example',
        published_date: '1704067200',
        last_updated: '',
        malicious_confidence: '',
        actors: 'FANCYBEAR',
        threat_types: null,
        kill_chains: ['C2', null],
        malware_families: [],
      },
    });
    // `malicious_confidence: ""` is a value Falcon sent: kept as "" (issue 32; it was null before).
    const result = await m.run('a.example', 'FQDN') as CrowdStrikeResult;
    assert.deepEqual(result, { ...BARE_FOUND(1), published_date: '2024-01-01', actors: ['FANCYBEAR'], kill_chain: ['C2'], malicious_confidence: '' });
    // Summary, evidence and card read "" as no grade, never as an empty word.
    assert.equal(engine.summary!(result), 'in Falcon Intelligence · actors FANCYBEAR · seen on 1 device');
    assert.equal(engine.evidence!(result)?.reason, 'Falcon Intelligence indicator · actors FANCYBEAR · seen on 1 device of your tenant');
    assert.deepEqual(engine.details!(result, 'a.example').find((f) => f.label === 'Falcon Intelligence')?.value, 'malicious confidence unknown');
  });

  test('Falcon\'s 404 with errors: null is still "nothing here"', async () => {
    const m = answering({ resources: [] }, { meta: {}, resources: null, errors: null }, 404);
    assert.deepEqual(await m.run('a.example', 'FQDN'), NOT_FOUND('a.example'));
  });

  test('what cannot be understood still fails, naming the field', async () => {
    await watch.rejectsWith(answering({ resources: [] }, { resources: [{ actors: [{ name: 'X' }] }] }).run('a.example', 'FQDN'),
      /^unexpected answer from upstream at resources\.0\.actors\.0: expected a string$/);
    await watch.rejectsWith(answering([], {}).run('a.example', 'FQDN'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
  });
});

describe('provider_04 whole-system fake', () => {
  test('fakeRoutes/fakeSettings answer every type with any credentials', async () => {
    clearTokenCache();
    const fake = await startFakeHttp(fakeRoutes());
    const h = engineHarness(engine, { settings: { ...fakeSettings(fake.url), client_id: 'any-id', client_secret: 'any-secret-1234' } });
    try {
      const cases: Observable[] = [
        { value: '8.8.8.8', type: 'IPv4' }, { value: 'example.com', type: 'FQDN' }, { value: 'https://www.example.com/login?id=1', type: 'URL' },
        { value: EICAR.md5, type: 'MD5' }, { value: '2606:4700:4700::1111', type: 'IPv6' },
      ];
      const results = [];
      for (const o of cases) results.push((await h.run(o.value, o.type)) as CrowdStrikeResult);
      assert.deepEqual(results.map((r) => [r.device_count, r.indicator_found]), [[25, false], [12, false], [0, false], [7, true], [0, false]]);
      assert.equal(fake.hits('POST /crowdstrike/oauth2/token').length, 1);
    } finally {
      await h.close();
      await fake.close();
    }
  });
});

describe('provider_04 through the runner', () => {
  const runners: RunnerHarness[] = [];
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
  });
  beforeEach(() => clearTokenCache());

  function runner(m: Mounted, settings: Record<string, unknown> = { client_id: CLIENT_ID, client_secret: SECRET }, engines: EngineDefinition[] = [engine], more: Record<string, Record<string, unknown>> = {}): RunnerHarness {
    const r = runnerHarness(engines, { settings: { provider_04: { base_url: m.base, retries: 0, ...settings }, ...more } });
    runners.push(r);
    return r;
  }

  test('the alias is the result key; a domain is looked up as it is (no reversed IP: pre-pivot engine)', async () => {
    const m = mount();
    const [result] = await runner(m).analyze([{ value: 'malware-c2.example', type: 'FQDN' }], ['crowdstrike']);
    watch.result(result);
    assert.deepEqual(result, { observable: 'malware-c2.example', type: 'FQDN', reversed_success: false, crowdstrike: C2_RESULT });
    assert.equal(m.falcon.apiCalls.length, 2);
  });

  test('by id; a private IP and an e-mail are not applicable: null, nothing asked', async () => {
    const m = mount();
    const results = await runner(m).analyze([{ value: '10.1.2.3', type: 'IPv4' }, { value: 'alice@example.com', type: 'Email' }], ['provider_04']);
    assert.deepEqual(results.map((r) => [r.provider_04, r.errors, r.reversed_ip]), [[null, undefined, undefined], [null, undefined, undefined]]);
    assert.equal(m.falcon.tokenRequests(), 0);
    assert.equal(m.falcon.apiCalls.length, 0);
  });

  test('missing credentials: "not configured: engines.provider_04.<setting>", no request at all', async () => {
    const m = mount();
    server.reset();
    const [none] = await runner(m, {}).analyze([{ value: 'malware-c2.example', type: 'FQDN' }], ['crowdstrike']);
    assert.equal(none!.crowdstrike, null);
    assert.deepEqual(none!.errors, { crowdstrike: 'not configured: engines.provider_04.client_id or OAS_CROWDSTRIKE_CLIENT_ID, engines.provider_04.client_secret or OAS_CROWDSTRIKE_CLIENT_SECRET' });
    const [noSecret] = await runner(m, { client_id: CLIENT_ID }).analyze([{ value: 'malware-c2.example', type: 'FQDN' }], ['provider_04']);
    assert.deepEqual(noSecret!.errors, { provider_04: 'not configured: engines.provider_04.client_secret or OAS_CROWDSTRIKE_CLIENT_SECRET' });
    assert.equal(server.requests.length, 0);
  });

  test('20 observables in one run: exactly 1 token request (bug 17: the reference made one per observable)', async () => {
    const m = mount();
    const observables: Observable[] = Array.from({ length: 20 }, (_, i) => ({ value: `host${i}.example`, type: 'FQDN' }));
    observables[7] = { value: 'malware-c2.example', type: 'FQDN' };
    const results = await runner(m).analyze(observables, ['crowdstrike']);
    watch.result(results);
    assert.equal(m.falcon.tokenRequests(), 1);
    assert.equal(m.falcon.apiCalls.length, 40);
    assert.ok(results.every((r) => r.errors === undefined));
    assert.deepEqual(results[7]!.crowdstrike, C2_RESULT);
    assert.deepEqual(results[0]!.crowdstrike, NOT_FOUND('host0.example'));
  });

  test('wrong credentials: a one-line errors entry without the secret; another engine unaffected', async () => {
    const m = mount();
    const mde = mdeFake({ apiPrefix: `${m.prefix}-mde`, loginPrefix: `${m.prefix}-login` });
    for (const [key, route] of Object.entries(mde.routes)) server.route(key, route);
    const r = runner(m, { client_id: CLIENT_ID, client_secret: 'CS-WRONG-SECRET-000111222' }, [engine, mdeEngine as EngineDefinition], {
      provider_14: { base_url: `${server.url}${m.prefix}-mde`, login_url: `${server.url}${m.prefix}-login`, tenant_id: 'tenant-1', client_id: 'mde-id', client_secret: 'mde-secret-123' },
    });
    const [result] = await r.analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['crowdstrike', 'mde']);
    watch.result(result);
    assert.equal(result!.crowdstrike, null);
    assert.deepEqual(result!.errors, { crowdstrike: 'CrowdStrike: authentication failed (HTTP 401 Unauthorized: access denied, invalid client) (key refused: check engines.provider_04.client_id or OAS_CROWDSTRIKE_CLIENT_ID, engines.provider_04.client_secret or OAS_CROWDSTRIKE_CLIENT_SECRET)' });
    assert.equal((result!.mde as { ipAddress: string }).ipAddress, '8.8.8.8');
  });

  test('leaks: no secret and no issued token in the SQLite data directory after runs with failures', async () => {
    const dataDir = tempDir('oas-provider04-');
    const storage = await openStorage(dataDir);
    const transport = new HttpTransport();
    try {
      const echo = mount({}, (p) => ({
        [`POST ${p}/intel/entities/indicators/GET/v1`]: (req) => reply.json({ errors: [{ code: 403, message: `denied ${req.headers.authorization} ${SECRET}` }] }, 403),
      }));
      const good = mount({ rejectFirst: 1 });
      for (const [m, secret] of [[good, SECRET], [echo, SECRET], [mount(), 'CS-WRONG-SECRET-000111222']] as const) {
        const runnerInstance = new EngineRunner({
          catalog: [engine],
          services: { transport, dnsServers: [], dataDir, storeFor: (id) => keyvEngineStore(storage.engineData, id) },
          cache: storage.results,
          cacheTtlSeconds: 3600,
          concurrency: 8,
          engineSettings: { provider_04: { base_url: m.base, client_id: CLIENT_ID, client_secret: secret, retries: 0 } },
        });
        const results = await runnerInstance.analyze(
          [{ value: 'malware-c2.example', type: 'FQDN' }, { value: EICAR.sha256, type: 'SHA256' }, { value: 'https://login.phish.example/x', type: 'URL' }],
          new Catalog([engine]).select(['crowdstrike']),
          // Results are cached by engine and observable, not by settings: each run must ask.
          { ignoreCache: true },
        );
        await storage.analyses.set(`analysis-${m.prefix}`, results);
        watch.result(results);
      }
      assert.deepEqual([good.falcon.issued.length, echo.falcon.issued.length], [2, 1]);
    } finally {
      await transport.close();
      await storage.close();
    }
    const files = readdirSync(dataDir);
    assert.ok(files.includes('oas.sqlite'));
    const contents = files.map((file) => readFileSync(join(dataDir, file), 'latin1'));
    assert.ok(contents.join('').includes('malware-c2.example'), 'the results were stored');
    assert.ok(contents.join('').includes('access denied, invalid client'), 'the errors were stored');
    const tokens = issuedTokens();
    for (const [i, file] of files.entries()) {
      const content = contents[i]!;
      for (const secret of [SECRET, 'CS-WRONG-SECRET-000111222', CLIENT_ID, ...tokens]) assert.ok(!content.includes(secret), `${file} holds a secret or a token`);
    }
    removeTempDir(dataDir);
  });
});

describe('provider_04 secrets', () => {
  test('neither the client secret, the client id nor any issued token appears in a result or an error of these tests', () => {
    watch.assertNoKey(30);
    const tokens = issuedTokens();
    assert.ok(tokens.length >= 30, `tokens issued: ${tokens.length / 2}`);
    for (const output of watch.outputs) {
      for (const secret of ['CS-WRONG-SECRET-000111222', CLIENT_ID, ...tokens]) assert.ok(!output.includes(secret), `a secret or token leaked in: ${output}`);
    }
  });
});
