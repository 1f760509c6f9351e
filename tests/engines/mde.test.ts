import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import engine, { mdeDetails, mdeLookup, mdeSummary, mdeTarget, utcDay, type MdeResult } from '../../engines/mde.js';
import { Catalog } from '../../src/engine/catalog.js';
import { HttpTransport } from '../../src/http/client.js';
import { clearTokenCache } from '../../src/http/oauth.js';
import type { Observable, ObservableType } from '../../src/observables/types.js';
import { EngineRunner } from '../../src/runner/runner.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import { openStorage } from '../../src/store/storage.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { FAKE_TENANT, FILES, MDE_DATA, fakeRoutes, fakeSettings, mdeFake, type MdeFake, type MdeFakeOptions } from '../fakes/mde.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { KeyWatch } from '../helpers/key-watch.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { removeTempDir, tempDir } from '../helpers/temp.js';

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT_ID = 'mde-app-3c9e1f20-5b7d-4e8a-9f61';
const SECRET = 'MDE~SECRET.8Q~aZ3kLmN0pQrStUvWxYz';
const WRONG_SECRET = 'MDE~WRONG.0000111122223333';
const PORTAL = 'https://security.microsoft.com';

const watch = new KeyWatch(SECRET);
const fakes: MdeFake[] = [];
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
  mde: MdeFake;
  api: string;
  login: string;
  base: string;
  loginUrl: string;
  harness(settings?: Record<string, unknown>): EngineHarness;
  run(value: string, type: ObservableType, settings?: Record<string, unknown>): Promise<MdeResult | null>;
}

/** An MDE fake and token endpoint of their own under fresh prefixes of the shared server; `overrides` replace routes. */
function mount(options: MdeFakeOptions = {}, overrides: (api: string, login: string, mde: MdeFake) => Record<string, FakeRoute> = () => ({})): Mounted {
  const n = ++mounted;
  const api = `/mde${n}`;
  const login = `/login${n}`;
  const mde = mdeFake({ tenantId: TENANT, clientId: CLIENT_ID, clientSecret: SECRET, ...options, apiPrefix: api, loginPrefix: login });
  for (const [key, route] of Object.entries({ ...mde.routes, ...overrides(api, login, mde) })) server.route(key, route);
  fakes.push(mde);
  const base = `${server.url}${api}`;
  const loginUrl = `${server.url}${login}`;
  const harness = (settings: Record<string, unknown> = {}) => {
    const inner = engineHarness(engine, {
      settings: { base_url: base, login_url: loginUrl, tenant_id: TENANT, client_id: CLIENT_ID, client_secret: SECRET, retries: 0, ...settings },
    });
    closers.push(() => inner.close());
    return watch.watch(inner);
  };
  return { mde, api, login, base, loginUrl, harness, run: async (value, type, settings) => (await harness(settings).run(value, type)) as MdeResult | null };
}

/** engines.md 5.17's IP example, as the engine returns it. */
const PRIVATE_IP_RESULT = {
  '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgIPStats',
  ipAddress: '10.209.67.177',
  orgPrevalence: 63515,
  organizationPrevalence: 63515,
  orgFirstSeen: '2017-07-30',
  orgLastSeen: '2017-08-29',
  link: `${PORTAL}/ip/10.209.67.177/overview`,
};

const SHA1_RESULT = {
  '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgFileStats',
  sha1: FILES.sha1,
  organizationPrevalence: 14850,
  orgPrevalence: '14850',
  orgFirstSeen: '2019-12-07',
  orgLastSeen: '2020-01-06',
  globalPrevalence: 7329,
  globalFirstObserved: '2018-07-17T18:17:27.5909748Z',
  globalLastObserved: '2020-01-06T13:39:36Z',
  topFileNames: ['swscan.exe', 'swscan.dll'],
  link: `${PORTAL}/file/${FILES.sha1}`,
  issuer: 'Microsoft Windows Production PCA 2011',
  signer: 'Microsoft Windows',
  isValidCertificate: true,
  filePublisher: 'Microsoft Corporation',
  fileProductName: 'Microsoft Windows Operating System',
  determinationType: 'Clean',
  determinationValue: 'Good',
};

const UNKNOWN_FILE = {
  issuer: 'Unknown', signer: 'Unknown', isValidCertificate: 'Unknown', filePublisher: 'Unknown', fileProductName: 'Unknown',
  determinationType: 'Unknown', determinationValue: 'Unknown',
};

describe('provider_14 declaration', () => {
  test('catalog fields, credentials, defaults', () => {
    assert.equal(engine.id, 'provider_14');
    assert.equal(engine.service, 'mde');
    assert.equal(engine.label, 'Microsoft Defender for Endpoint');
    assert.deepEqual(engine.tags, ['hash', 'IP', 'domain', 'URL']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.acceptsPrivateIp, true);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [
      { setting: 'tenant_id', label: 'Tenant ID', env: ['MDE_TENANT_ID'], secret: false },
      { setting: 'client_id', label: 'Client ID', env: ['MDE_CLIENT_ID'] },
      { setting: 'client_secret', label: 'Client secret', env: ['MDE_CLIENT_SECRET'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000, base_url: 'https://api.securitycenter.microsoft.com', login_url: 'https://login.microsoftonline.com' });
    assert.equal(engine.run, mdeLookup);
    assert.equal(engine.summary, mdeSummary);
    assert.equal(engine.details, mdeDetails);
  });

  test('paths and links per type; a URL is its host from the proper parser (bug 15)', () => {
    const t = (value: string, type: ObservableType) => mdeTarget({ value, type });
    assert.deepEqual(t(FILES.sha1.toUpperCase(), 'SHA1'), { path: `/api/files/${FILES.sha1}/stats`, link: `${PORTAL}/file/${FILES.sha1}`, file: FILES.sha1 });
    assert.deepEqual(t('10.209.67.177', 'IPv4'), { path: '/api/ips/10.209.67.177/stats', link: `${PORTAL}/ip/10.209.67.177/overview`, file: null });
    assert.deepEqual(t('2001:DB8:5::7', 'IPv6'), { path: '/api/ips/2001%3Adb8%3A5%3A%3A7/stats', link: `${PORTAL}/ip/2001:db8:5::7/overview`, file: null });
    assert.deepEqual(t('Example.COM.', 'FQDN'), { path: '/api/domains/example.com/stats', link: `${PORTAL}/domains?urlDomain=example.com`, file: null });
    const url = 'https://bob:pw@Login.Phish.Example:8443/a?b=c&d=e';
    assert.deepEqual(t(url, 'URL'), { path: '/api/domains/login.phish.example/stats', link: `${PORTAL}/url?url=${encodeURIComponent(url)}`, file: null });
    assert.equal(t('http://[2001:db8:5::7]:8080/x', 'URL')?.path, '/api/ips/2001%3Adb8%3A5%3A%3A7/stats');
    assert.equal(t('http://8.8.8.8/x', 'URL')?.path, '/api/ips/8.8.8.8/stats');
    assert.equal(t('alice@example.com', 'Email'), null);
  });

  test('utcDay: the UTC date of a timestamp, offsets converted, anything else cut before T', () => {
    assert.equal(utcDay('2017-07-30T13:36:06Z'), '2017-07-30');
    assert.equal(utcDay('2018-07-17T18:17:27.5909748Z'), '2018-07-17');
    assert.equal(utcDay('2024-02-29T23:59:59.9999999Z'), '2024-02-29');
    assert.equal(utcDay('2026-01-08T20:30:00-05:00'), '2026-01-09');
    assert.equal(utcDay('2026-01-09T01:30:00+02:00'), '2026-01-08');
    assert.equal(utcDay('2017-07-30T13:36:06'), '2017-07-30');
    assert.equal(utcDay('2017-07-30'), '2017-07-30');
  });

  test('summary and details', () => {
    assert.equal(engine.summary(PRIVATE_IP_RESULT), 'prevalence 63515 · first seen 2017-07-30 · last seen 2017-08-29');
    assert.equal(engine.summary(SHA1_RESULT), 'prevalence 14850 · first seen 2019-12-07 · last seen 2020-01-06 · Clean (Good)');
    assert.equal(engine.summary({ link: 'x', orgFirstSeen: null, ...UNKNOWN_FILE }), 'no prevalence');
    assert.deepEqual(mdeDetails(SHA1_RESULT), [
      { label: 'Prevalence in the organisation', value: '14850' },
      { label: 'First seen', value: '2019-12-07' },
      { label: 'Last seen', value: '2020-01-06' },
      { label: 'Global prevalence', value: '7329' },
      { label: 'File names', value: 'swscan.exe, swscan.dll' },
      { label: 'Determination', value: 'Clean (Good)' },
      { label: 'Signer', value: 'Microsoft Windows' },
      { label: 'Issuer', value: 'Microsoft Windows Production PCA 2011' },
      { label: 'Valid certificate', value: 'yes' },
      { label: 'Publisher', value: 'Microsoft Corporation' },
      { label: 'Product', value: 'Microsoft Windows Operating System' },
      { label: 'Open in Microsoft Defender', value: SHA1_RESULT.link, href: SHA1_RESULT.link },
    ]);
    assert.deepEqual(mdeDetails({ link: `${PORTAL}/file/x`, organizationPrevalence: 1, ...UNKNOWN_FILE }), [
      { label: 'Prevalence in the organisation', value: '1' },
      { label: 'Open in Microsoft Defender', value: `${PORTAL}/file/x`, href: `${PORTAL}/file/x` },
    ]);
  });
});

describe('provider_14 against a loopback Defender API', () => {
  let ok: Mounted;
  before(() => {
    ok = mount();
  });

  test('private IP found (bug 10: queried): engines.md\'s example; the token and stats requests', async () => {
    clearTokenCache();
    server.reset();
    assert.deepEqual(await ok.run('10.209.67.177', 'IPv4'), PRIVATE_IP_RESULT);
    const [tokenRequest, ...more] = server.hits(`POST ${ok.login}/`);
    assert.equal(more.length, 0);
    assert.equal(tokenRequest!.path, `${ok.login}/${TENANT}/oauth2/token`);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(tokenRequest!.body)), {
      resource: ok.base, grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: SECRET,
    });
    const [stats] = server.hits(`GET ${ok.api}/`);
    assert.equal(stats!.path, `${ok.api}/api/ips/10.209.67.177/stats`);
    assert.equal(stats!.headers.authorization, `Bearer ${ok.mde.issued.at(-1)}`);
    assert.equal(server.requests.length, 2);
  });

  test('the resource is base_url (the reference\'s https://api.securitycenter.microsoft.com by default), or the resource setting', async () => {
    clearTokenCache();
    await ok.run('8.8.8.8', 'IPv4', { resource: 'https://api.securitycenter.microsoft.com' });
    assert.equal(ok.mde.tokenForms.at(-1)!.get('resource'), 'https://api.securitycenter.microsoft.com');
  });

  test('IPv4 not found: MDE\'s 404 is null', async () => {
    assert.equal(await ok.run('203.0.113.9', 'IPv4'), null);
  });

  test('IPv6 found (lower-cased) and not found', async () => {
    const result = await ok.run('2001:DB8:5::7', 'IPv6');
    assert.equal(result?.ipAddress, '2001:db8:5::7');
    assert.equal(result?.orgFirstSeen, '2025-12-31');
    assert.equal(result?.orgLastSeen, '2026-01-02');
    assert.equal(result?.link, `${PORTAL}/ip/2001:db8:5::7/overview`);
    assert.equal(await ok.run('2001:db8::dead', 'IPv6'), null);
  });

  test('domain found (lower-cased, trailing dot dropped) and not found', async () => {
    assert.deepEqual(await ok.run('Example.COM.', 'FQDN'), {
      '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgDomainStats',
      host: 'example.com', orgPrevalence: '4070', organizationPrevalence: 4070, orgFirstSeen: '2017-07-30', orgLastSeen: '2017-08-29',
      link: `${PORTAL}/domains?urlDomain=example.com`,
    });
    assert.equal(await ok.run('unknown.example', 'FQDN'), null);
  });

  test('URL found: its host\'s stats, the URL page link; an offset date converted to UTC; not found', async () => {
    server.reset();
    const url = 'https://bob:pw@Login.Phish.Example:8443/wp/login.php?next=/&a=b';
    const result = await ok.run(url, 'URL');
    assert.deepEqual(result, {
      '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgDomainStats',
      host: 'login.phish.example', orgPrevalence: '2', organizationPrevalence: 2, orgFirstSeen: '2026-01-09', orgLastSeen: '2026-01-09',
      link: `${PORTAL}/url?url=${encodeURIComponent(url)}`,
    });
    assert.equal(server.hits(`GET ${ok.api}/`)[0]!.path, `${ok.api}/api/domains/login.phish.example/stats`);
    assert.equal(await ok.run('https://downloads.unknown.example/setup.exe', 'URL'), null);
  });

  test('URL with an IP host: the IP\'s stats', async () => {
    const result = await ok.run('http://8.8.8.8/dns-query', 'URL');
    assert.equal(result?.ipAddress, '8.8.8.8');
    assert.equal(result?.link, `${PORTAL}/url?url=${encodeURIComponent('http://8.8.8.8/dns-query')}`);
  });

  test('SHA1 found: stats, link, then the file fields, in the reference\'s order', async () => {
    server.reset();
    const result = await ok.run(FILES.sha1, 'SHA1');
    assert.deepEqual(result, SHA1_RESULT);
    assert.deepEqual(Object.keys(result!), Object.keys(SHA1_RESULT));
    assert.deepEqual(server.hits(`GET ${ok.api}/`).map((r) => r.path).sort(), [`${ok.api}/api/files/${FILES.sha1}`, `${ok.api}/api/files/${FILES.sha1}/stats`]);
  });

  test('SHA256 found: absent file fields are "Unknown" (false stays false); 7-digit fractions; a null date stays null', async () => {
    assert.deepEqual(await ok.run(FILES.sha256.toUpperCase(), 'SHA256'), {
      '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgFileStats',
      sha256: FILES.sha256, organizationPrevalence: 120, orgPrevalence: '120', orgFirstSeen: '2024-02-29', orgLastSeen: null,
      globalPrevalence: 1000000, globalFirstObserved: '2016-01-01T00:00:00Z', globalLastObserved: '2026-01-09T10:00:00Z', topFileNames: ['empty.txt'],
      link: `${PORTAL}/file/${FILES.sha256}`,
      ...UNKNOWN_FILE, isValidCertificate: false,
    });
  });

  test('MD5 with stats but no file record (404 on the file call): the file fields are "Unknown"', async () => {
    const result = await ok.run(FILES.md5, 'MD5');
    assert.deepEqual(result, { ...MDE_DATA.stats[`files/${FILES.md5}`], orgFirstSeen: '2025-06-01', orgLastSeen: '2025-06-01', link: `${PORTAL}/file/${FILES.md5}`, ...UNKNOWN_FILE });
  });

  test('hashes not found: null for each type', async () => {
    assert.equal(await ok.run('d41d8cd98f00b204e9800998ecf8427e', 'MD5'), null);
    assert.equal(await ok.run('da39a3ee5e6b4b0d3255bfef95601890afd80709', 'SHA1'), null);
    assert.equal(await ok.run('5f1ba9a4c5fe1e2d4fb8a9dbc62af3ce3ba7bb7a1e8e05d4dc8fb4f5e2bd0f5a', 'SHA256'), null);
  });

  test('dates are UTC whatever the time zone', async () => {
    const saved = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      assert.equal(new Date('2025-12-31T23:30:00Z').getDate(), 1, 'the zone took effect');
      const result = await ok.run('2001:db8:5::7', 'IPv6');
      assert.equal(result?.orgFirstSeen, '2025-12-31');
      assert.equal((await ok.run('login.phish.example', 'FQDN'))?.orgFirstSeen, '2026-01-09');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('not a type the engine takes: null, nothing asked', async () => {
    server.reset();
    assert.equal(await ok.run('alice@example.com', 'Email'), null);
    assert.equal(server.requests.length, 0);
  });

  test('called directly without a secret: an error before any request', async () => {
    server.reset();
    await watch.rejectsWith(ok.harness({ client_secret: '' }).run('8.8.8.8', 'IPv4'), /^not configured: client_secret$/);
    assert.equal(server.requests.length, 0);
  });
});

describe('provider_14 token: one per process, shared, refreshed, never on disk', () => {
  beforeEach(() => clearTokenCache());

  test('reused across many observables: one token request ("expires_in" is a string, as Azure AD sends it)', async () => {
    const m = mount();
    const observables: [string, ObservableType][] = [
      ['10.209.67.177', 'IPv4'], ['example.com', 'FQDN'], [FILES.sha1, 'SHA1'], ['https://login.phish.example/', 'URL'], ['203.0.113.9', 'IPv4'],
    ];
    for (const [value, type] of observables) await m.run(value, type);
    assert.equal(m.mde.tokenRequests(), 1);
    assert.equal(m.mde.apiCalls.length, 6);
    assert.ok(m.mde.apiCalls.every((c) => c.token === m.mde.issued[0]));
  });

  test('concurrent callers share one in-flight token request', async () => {
    const m = mount();
    const h = m.harness();
    await Promise.all([FILES.sha1, FILES.sha256, FILES.md5].map((hash) => h.run(hash, hash.length === 40 ? 'SHA1' : hash.length === 64 ? 'SHA256' : 'MD5')));
    assert.equal(m.mde.tokenRequests(), 1);
    assert.equal(m.mde.apiCalls.length, 6);
  });

  test('expired: a token whose expires_in is within the safety margin is refreshed for the next observable', async () => {
    const m = mount({ expiresIn: '60' });
    for (const ip of ['10.209.67.177', '8.8.8.8', '203.0.113.9']) await m.run(ip, 'IPv4');
    assert.equal(m.mde.tokenRequests(), 3);
    assert.deepEqual([...new Set(m.mde.apiCalls.map((c) => c.token))], m.mde.issued);
  });

  test('no expires_in: the JWT exp decides (an hour: reused; within the margin: refreshed)', async () => {
    const long = mount({ expiresIn: null, jwtLifetime: 3600 });
    for (const ip of ['10.209.67.177', '8.8.8.8']) await long.run(ip, 'IPv4');
    assert.equal(long.mde.tokenRequests(), 1);
    const short = mount({ expiresIn: null, jwtLifetime: 30 });
    for (const ip of ['10.209.67.177', '8.8.8.8']) await short.run(ip, 'IPv4');
    assert.equal(short.mde.tokenRequests(), 2);
  });

  test('401 from the API: refreshed once and retried; exactly 2 token requests; the new token serves the next observables', async () => {
    const m = mount({ rejectFirst: 1 });
    assert.deepEqual(await m.run(FILES.sha1, 'SHA1'), SHA1_RESULT);
    assert.equal(m.mde.tokenRequests(), 2);
    assert.deepEqual(await m.run('10.209.67.177', 'IPv4'), PRIVATE_IP_RESULT);
    assert.equal(m.mde.tokenRequests(), 2);
  });

  test('the API rejects every token: one refresh only, then a one-line authentication error', async () => {
    const m = mount({ rejectFirst: 1000 });
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'),
      /^Microsoft Defender for Endpoint: authentication failed \(HTTP 401 Unauthorized: Unauthorized: Authorization has been denied for this request\.\)$/);
    assert.equal(m.mde.tokenRequests(), 2);
  });

  test('wrong client secret: the first sentence of Azure\'s 401 on one line (no trace ids, no advice after it), no API call', async () => {
    const m = mount();
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { client_secret: WRONG_SECRET }),
      /^Microsoft Defender for Endpoint: authentication failed \(HTTP 401 Unauthorized: AADSTS7000215: Invalid client secret provided\.\)$/);
    assert.equal(m.mde.apiCalls.length, 0);
  });

  test('unknown client id and unknown tenant: Azure\'s 400 on one line', async () => {
    const m = mount();
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { client_id: 'mde-app-unknown-0000' }),
      /^Microsoft Defender for Endpoint: authentication failed \(HTTP 400 Bad Request: AADSTS700016: Application with identifier '\*\*\*' was not found/);
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { tenant_id: 'not-my-tenant' }),
      /^Microsoft Defender for Endpoint: authentication failed \(HTTP 400 Bad Request: AADSTS90002: Tenant 'not-my-tenant' not found\.\)$/);
    assert.equal(m.mde.apiCalls.length, 0);
  });

  test('a wrong login_url (an HTML 404): a one-line error', async () => {
    const m = mount();
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { login_url: `${server.url}${m.login}/nowhere` }),
      /^Microsoft Defender for Endpoint: token request failed \(HTTP 404 Not Found\)$/);
  });

  test('a hanging token endpoint: timeout (bug 2: the reference had none)', async () => {
    const m = mount({}, (_api, login) => ({ [`POST ${login}/*`]: reply.hang() }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { timeout_ms: 300 }), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(server.url).port}$`));
  });
});

describe('provider_14 upstream failures', () => {
  const API = (api: string) => `GET ${api}/api/*`;

  test('HTTP 500: an error, not null', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.status(500) }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 then 200: retried, succeeds', async () => {
    const m = mount({}, (api, _login, mde) => ({ [API(api)]: sequence(reply.tooMany(0), mde.routes[API(api)]!) }));
    assert.deepEqual(await m.run('10.209.67.177', 'IPv4', { retries: 2 }), PRIVATE_IP_RESULT);
  });

  test('429 that persists: an error after the retries', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.tooMany(0) }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { retries: 1 }), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON: a clean error', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.malformed() }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('a date of the wrong type: an error naming the field', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.json({ ipAddress: '8.8.8.8', orgFirstSeen: 1500000000 }) }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'), /^unexpected answer from upstream at orgFirstSeen: /);
  });

  test('a hanging stats call: timeout', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.hang() }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4', { timeout_ms: 300 }), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(server.url).port}$`));
  });

  test('a hanging file-info call: timeout (bug 2: the reference had none)', async () => {
    const m = mount({}, (api, _login, mde) => ({
      [`GET ${api}/api/files/${FILES.sha1}`]: reply.hang(),
      [`GET ${api}/api/files/${FILES.sha1}/stats`]: mde.routes[API(api)]!,
    }));
    await watch.rejectsWith(m.run(FILES.sha1, 'SHA1', { timeout_ms: 300 }), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(server.url).port}$`));
  });

  test('a file-info call failing (500): the engine reports it', async () => {
    const m = mount({}, (api, _login, mde) => ({
      [`GET ${api}/api/files/${FILES.sha1}`]: reply.status(500),
      [`GET ${api}/api/files/${FILES.sha1}/stats`]: mde.routes[API(api)]!,
    }));
    await watch.rejectsWith(m.run(FILES.sha1, 'SHA1'), /^HTTP 500 Internal Server Error$/);
  });

  test('403 (a missing application role): MDE\'s reason, named after the service', async () => {
    const m = mount({}, (api) => ({
      [API(api)]: reply.json({ error: { code: 'Forbidden', message: 'Missing application roles. API required roles: Ip.Read.All', target: 'x' } }, 403),
    }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'),
      /^Microsoft Defender for Endpoint: HTTP 403 Forbidden: Forbidden: Missing application roles\. API required roles: Ip\.Read\.All$/);
  });

  test('an API that echoes the token and the secret: both masked', async () => {
    const m = mount({}, (api) => ({
      [API(api)]: (req) => reply.json({ error: { code: 'Forbidden', message: `denied ${req.headers.authorization} ${SECRET}` } }, 403),
    }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'), /^Microsoft Defender for Endpoint: HTTP 403 Forbidden: Forbidden: denied Bearer \*\*\* \*\*\*$/);
  });

  test('a 404 that is not MDE\'s (a wrong base_url): an error, not "not found"', async () => {
    const m = mount({}, (api) => ({ [API(api)]: reply.html('<html>Not Found</html>', 404) }));
    await watch.rejectsWith(m.run('8.8.8.8', 'IPv4'), /^Microsoft Defender for Endpoint: HTTP 404 Not Found$/);
  });
});

describe('provider_14: minimal and degenerate answers (issue 26)', () => {
  const STATS = (api: string, kind: string, value: string) => `GET ${api}/api/${kind}/${value}/stats`;
  const HASH = '0123456789abcdef0123456789abcdef01234567';
  /** A Defender answering `stats` to the observable's stats call and `info` to the file call. */
  const answering = (kind: string, value: string, stats: unknown, info?: unknown) => mount({}, (api) => ({
    [STATS(api, kind, value)]: reply.json(stats),
    ...(info === undefined ? {} : { [`GET ${api}/api/files/${value}`]: reply.json(info) }),
  }));

  test('the minimal stats: an empty object is the result with its link alone', async () => {
    assert.deepEqual(await answering('ips', '192.0.2.1', {}).run('192.0.2.1', 'IPv4'), { link: `${PORTAL}/ip/192.0.2.1/overview` });
    assert.deepEqual(await answering('domains', 'quiet.example', {}).run('quiet.example', 'FQDN'), { link: `${PORTAL}/domains?urlDomain=quiet.example` });
  });

  test('a file with empty stats and an empty file record: every file field "Unknown"', async () => {
    assert.deepEqual(await answering('files', HASH, {}, {}).run(HASH, 'SHA1'), { link: `${PORTAL}/file/${HASH}`, ...UNKNOWN_FILE });
  });

  test('file fields sent as null: "Unknown"; as "": "" (issue 32); a certificate flag as 0/1 or "true"/"false": a boolean', async () => {
    const nulls = Object.fromEntries(Object.keys(UNKNOWN_FILE).map((name) => [name, null]));
    assert.deepEqual(await answering('files', HASH, {}, nulls).run(HASH, 'SHA1'), { link: `${PORTAL}/file/${HASH}`, ...UNKNOWN_FILE });
    // A value MDE sent is kept, "" included, as the reference copied it (it was "Unknown" before issue 32).
    const empties = Object.fromEntries(Object.keys(UNKNOWN_FILE).map((name) => [name, '']));
    const result = await answering('files', HASH, {}, empties).run(HASH, 'SHA1') as MdeResult;
    assert.deepEqual(result, { link: `${PORTAL}/file/${HASH}`, ...empties });
    assert.equal(mdeSummary(result), 'no prevalence');
    assert.equal(engine.evidence!(result), undefined);
    assert.deepEqual(engine.details!(result, HASH).map((f) => f.label), ['Open in Microsoft Defender']);
    for (const [sent, read] of [[0, false], [1, true], ['false', false], ['True', true]] as const) {
      assert.deepEqual(await answering('files', HASH, {}, { isValidCertificate: sent, signer: 'Acme' }).run(HASH, 'SHA1'),
        { link: `${PORTAL}/file/${HASH}`, ...UNKNOWN_FILE, signer: 'Acme', isValidCertificate: read }, String(sent));
    }
  });

  test('dates null or "": kept as sent; other stats keys as MDE sent them', async () => {
    assert.deepEqual(await answering('ips', '192.0.2.1', { orgFirstSeen: null, orgLastSeen: '', organizationPrevalence: '' }).run('192.0.2.1', 'IPv4'),
      { orgFirstSeen: null, orgLastSeen: '', organizationPrevalence: '', link: `${PORTAL}/ip/192.0.2.1/overview` });
  });

  test('what cannot be understood still fails, naming it', async () => {
    await watch.rejectsWith(answering('ips', '192.0.2.1', []).run('192.0.2.1', 'IPv4'), /^unexpected answer from upstream at \(root\): /);
    await watch.rejectsWith(answering('files', HASH, {}, { signer: { name: 'Acme' } }).run(HASH, 'SHA1'), /^unexpected answer from upstream at signer: /);
  });
});

describe('provider_14 whole-system fake', () => {
  test('fakeRoutes/fakeSettings answer with any credentials', async () => {
    clearTokenCache();
    const fake = await startFakeHttp(fakeRoutes());
    const h = engineHarness(engine, { settings: { ...fakeSettings(fake.url), client_id: 'any-id', client_secret: 'any-secret-1234' } });
    try {
      const cases: Observable[] = [
        { value: '8.8.8.8', type: 'IPv4' }, { value: 'example.com', type: 'FQDN' }, { value: 'https://www.example.com/login?id=1', type: 'URL' },
        { value: FILES.md5, type: 'MD5' },
      ];
      const results = [];
      for (const o of cases) results.push((await h.run(o.value, o.type)) as MdeResult | null);
      assert.deepEqual(results.map((r) => r && mdeSummary(r)), [
        'prevalence 5120 · first seen 2019-03-01 · last seen 2026-01-08',
        'prevalence 4070 · first seen 2017-07-30 · last seen 2017-08-29',
        null,
        'prevalence 1 · first seen 2025-06-01 · last seen 2025-06-01',
      ]);
      assert.equal(fake.hits(`POST /mde-login/${FAKE_TENANT}/oauth2/token`).length, 1);
    } finally {
      await h.close();
      await fake.close();
    }
  });
});

describe('provider_14 through the runner', () => {
  const runners: RunnerHarness[] = [];
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
  });
  beforeEach(() => clearTokenCache());

  function runner(m: Mounted, settings: Record<string, unknown> = { tenant_id: TENANT, client_id: CLIENT_ID, client_secret: SECRET }): RunnerHarness {
    const r = runnerHarness([engine], { settings: { provider_14: { base_url: m.base, login_url: m.loginUrl, retries: 0, ...settings } } });
    runners.push(r);
    return r;
  }

  test('the alias is the result key; a private IP is queried (bug 10)', async () => {
    const m = mount();
    const [result] = await runner(m).analyze([{ value: '10.209.67.177', type: 'IPv4' }], ['mde']);
    watch.result(result);
    assert.deepEqual(result, { observable: '10.209.67.177', type: 'IPv4', reversed_success: false, mde: PRIVATE_IP_RESULT });
  });

  test('a domain is looked up as it is (pre-pivot, no reversed IP); not found is null without an error', async () => {
    const m = mount();
    const results = await runner(m).analyze([{ value: 'example.com', type: 'FQDN' }, { value: 'unknown.example', type: 'FQDN' }], ['provider_14']);
    watch.result(results);
    assert.equal((results[0]!.provider_14 as MdeResult).host, 'example.com');
    assert.equal(results[0]!.reversed_ip, undefined);
    assert.equal(results[1]!.provider_14, null);
    assert.equal(results[1]!.errors, undefined);
    assert.deepEqual(m.mde.apiCalls.map((c) => c.path).sort(), [`${m.api}/api/domains/example.com/stats`, `${m.api}/api/domains/unknown.example/stats`]);
  });

  test('missing credentials: "not configured: engines.provider_14.<setting>", no request at all', async () => {
    const m = mount();
    server.reset();
    const [none] = await runner(m, {}).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['mde']);
    assert.equal(none!.mde, null);
    assert.deepEqual(none!.errors, { mde: 'not configured: engines.provider_14.tenant_id or OAS_MDE_TENANT_ID, engines.provider_14.client_id or OAS_MDE_CLIENT_ID, engines.provider_14.client_secret or OAS_MDE_CLIENT_SECRET' });
    const [noSecret] = await runner(m, { tenant_id: TENANT, client_id: CLIENT_ID }).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['provider_14']);
    assert.deepEqual(noSecret!.errors, { provider_14: 'not configured: engines.provider_14.client_secret or OAS_MDE_CLIENT_SECRET' });
    assert.equal(server.requests.length, 0);
  });

  test('20 observables in one run: exactly 1 token request', async () => {
    const m = mount();
    const observables: Observable[] = Array.from({ length: 20 }, (_, i) => ({ value: `10.0.0.${i + 1}`, type: 'IPv4' }));
    observables[4] = { value: '10.209.67.177', type: 'IPv4' };
    const results = await runner(m).analyze(observables, ['mde']);
    watch.result(results);
    assert.equal(m.mde.tokenRequests(), 1);
    assert.equal(m.mde.apiCalls.length, 20);
    assert.ok(results.every((r) => r.errors === undefined));
    assert.deepEqual(results[4]!.mde, PRIVATE_IP_RESULT);
    assert.equal(results[0]!.mde, null);
  });

  test('wrong credentials: a one-line errors entry without secrets', async () => {
    const m = mount();
    const [result] = await runner(m, { tenant_id: TENANT, client_id: CLIENT_ID, client_secret: WRONG_SECRET }).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['mde']);
    watch.result(result);
    assert.equal(result!.mde, null);
    assert.match(result!.errors!.mde!, /^Microsoft Defender for Endpoint: authentication failed \(HTTP 401 Unauthorized: AADSTS7000215: /);
  });

  test('a refused client secret (issue 32): one short line, Azure\'s first sentence and the setting of the secret', async () => {
    const m = mount();
    const [result] = await runner(m, { tenant_id: TENANT, client_id: CLIENT_ID, client_secret: WRONG_SECRET }).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['mde']);
    watch.result(result);
    const error = result!.errors!.mde!;
    assert.equal(error, 'Microsoft Defender for Endpoint: authentication failed (HTTP 401 Unauthorized: AADSTS7000215: Invalid client secret provided.) (key refused: check engines.provider_14.client_secret or OAS_MDE_CLIENT_SECRET)');
    assert.ok(error.length <= 210, `${error.length} characters`);
  });

  test('an unknown client id (issue 32): the setting of the client id, not the secret\'s', async () => {
    const m = mount();
    const [result] = await runner(m, { tenant_id: TENANT, client_id: 'mde-app-unknown-0000', client_secret: SECRET }).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['mde']);
    watch.result(result);
    assert.equal(result!.errors!.mde, 'Microsoft Defender for Endpoint: authentication failed (HTTP 400 Bad Request: AADSTS700016: Application with identifier \'***\' was not found in the directory \'72f988bf-86f1-41af-91ab-2d7cd011db47\'.) (key refused: check engines.provider_14.client_id or OAS_MDE_CLIENT_ID)');
  });

  test('an unknown tenant (issue 32): the setting of the tenant, which is no secret, not the client id and secret', async () => {
    const m = mount();
    const [result] = await runner(m, { tenant_id: 'not-my-tenant', client_id: CLIENT_ID, client_secret: SECRET }).analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['mde']);
    watch.result(result);
    assert.equal(result!.errors!.mde, 'Microsoft Defender for Endpoint: authentication failed (HTTP 400 Bad Request: AADSTS90002: Tenant \'not-my-tenant\' not found.) (key refused: check engines.provider_14.tenant_id or OAS_MDE_TENANT_ID)');
  });

  test('leaks: no secret and no issued token in the SQLite data directory (bug 18: no token file either)', async () => {
    const dataDir = tempDir('oas-provider14-');
    const storage = await openStorage(dataDir);
    const transport = new HttpTransport();
    try {
      const echo = mount({}, (api) => ({
        [`GET ${api}/api/*`]: (req) => reply.json({ error: { code: 'Forbidden', message: `denied ${req.headers.authorization} ${SECRET}` } }, 403),
      }));
      const good = mount({ rejectFirst: 1 });
      for (const [m, secret] of [[good, SECRET], [echo, SECRET], [mount(), WRONG_SECRET]] as const) {
        const runnerInstance = new EngineRunner({
          catalog: [engine],
          services: { transport, dnsServers: [], dataDir, storeFor: (id) => keyvEngineStore(storage.engineData, id) },
          cache: storage.results,
          cacheTtlSeconds: 3600,
          concurrency: 8,
          engineSettings: { provider_14: { base_url: m.base, login_url: m.loginUrl, tenant_id: TENANT, client_id: CLIENT_ID, client_secret: secret, retries: 0 } },
        });
        const results = await runnerInstance.analyze(
          [{ value: '10.209.67.177', type: 'IPv4' }, { value: FILES.sha1, type: 'SHA1' }, { value: 'https://login.phish.example/x', type: 'URL' }],
          new Catalog([engine]).select(['mde']),
          // Results are cached by engine and observable, not by settings: each run must ask.
          { ignoreCache: true },
        );
        await storage.analyses.set(`analysis-${m.api}`, results);
        watch.result(results);
      }
      assert.deepEqual([good.mde.issued.length, echo.mde.issued.length], [2, 1]);
    } finally {
      await transport.close();
      await storage.close();
    }
    const files = readdirSync(dataDir);
    assert.ok(files.includes('oas.sqlite'));
    const contents = files.map((file) => readFileSync(join(dataDir, file), 'latin1'));
    assert.ok(contents.join('').includes('swscan.exe'), 'the results were stored');
    assert.ok(contents.join('').includes('AADSTS7000215'), 'the errors were stored');
    const tokens = issuedTokens();
    for (const [i, file] of files.entries()) {
      for (const secret of [SECRET, WRONG_SECRET, CLIENT_ID, ...tokens]) assert.ok(!contents[i]!.includes(secret), `${file} holds a secret or a token`);
    }
    removeTempDir(dataDir);
  });
});

describe('provider_14 secrets', () => {
  test('neither the client secret, the client id nor any issued token appears in a result or an error of these tests', () => {
    watch.assertNoKey(30);
    const tokens = issuedTokens();
    assert.ok(tokens.length >= 30, `tokens issued: ${tokens.length / 2}`);
    for (const output of watch.outputs) {
      for (const secret of [WRONG_SECRET, CLIENT_ID, ...tokens]) assert.ok(!output.includes(secret), `a secret or token leaked in: ${output}`);
    }
  });
});
