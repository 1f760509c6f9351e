import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { urlId, virusTotalDetails, virusTotalLookup, virusTotalTarget, type VirusTotalResult } from '../../engines/virustotal.js';
import { HttpStatusError } from '../../src/http/errors.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { FILE_STATS, NOT_FOUND, PREFIX, fakeRoutes, fakeSettings, ipAddress } from '../fakes/virustotal.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { KeyWatch } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';
const SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const PHISH_URL = 'https://example.com/login?x=1';
const PHISH_ID = 'aHR0cHM6Ly9leGFtcGxlLmNvbS9sb2dpbj94PTE';

/** engines.md 5.29's example, completed as VirusTotal sends it. */
const GOOGLE_DNS = ipAddress('8.8.8.8', { harmless: 62, malicious: 1, suspicious: 0, undetected: 29, timeout: 0 }, 526);

/** Every value an engine returned or threw in these tests, checked for the key at the end. */
const watch = new KeyWatch(KEY);
const closers: (() => Promise<void>)[] = [];

async function setup(routes: Record<string, FakeRoute>, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp(routes);
  const inner = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY, ...settings } });
  closers.push(() => inner.close(), () => fake.close());
  return { fake, harness: watch.watch(inner) };
}

/** A fake answering every object path with `route`. */
const everywhere = (route: FakeRoute): Record<string, FakeRoute> => ({ [`${PREFIX}/*`]: route });

after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_24 declaration', () => {
  test('catalog fields, credential, quota', () => {
    assert.equal(engine.id, 'provider_24');
    assert.equal(engine.service, 'virustotal');
    assert.deepEqual(engine.tags, ['hash', 'risk', 'IP', 'domain', 'URL']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['VIRUSTOTAL'] }]);
    assert.equal(engine.defaults.base_url, 'https://www.virustotal.com/api/v3');
    assert.equal(engine.defaults.rate_limit, 4);
    assert.equal(engine.defaults.rate_window_ms, 60_000);
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, virusTotalLookup);
  });

  test('summary', () => {
    const result: VirusTotalResult = { detection_ratio: '5/94', total_malicious: 5, total_suspicious: 1, link: 'x', community_score: -12 };
    assert.equal(engine.summary(result), '5/94 malicious, 1 suspicious · reputation -12');
    assert.equal(engine.summary({ ...result, detection_ratio: '0/92', total_malicious: 0, total_suspicious: 0, community_score: 526 }), '0/92 malicious · reputation 526');
  });

  test('URL id: unpadded base64url of the URL', () => {
    assert.equal(urlId(PHISH_URL), PHISH_ID);
    // 26 bytes: standard base64 would end in "==" and use "/" or "+" for some bytes.
    assert.equal(urlId('http://www.virustotal.com/'), 'aHR0cDovL3d3dy52aXJ1c3RvdGFsLmNvbS8');
    assert.equal(urlId('https://a.example/?q=~~~>>>'), 'aHR0cHM6Ly9hLmV4YW1wbGUvP3E9fn5-Pj4-');
  });

  test('object per type', () => {
    assert.deepEqual(virusTotalTarget({ value: '8.8.8.8', type: 'IPv4' }), { collection: 'ip_addresses', gui: 'ip-address', id: '8.8.8.8' });
    assert.deepEqual(virusTotalTarget({ value: 'Evil.Example.COM.', type: 'FQDN' }), { collection: 'domains', gui: 'domain', id: 'evil.example.com' });
    assert.deepEqual(virusTotalTarget({ value: PHISH_URL, type: 'URL' }), { collection: 'urls', gui: 'url', id: PHISH_ID });
    assert.deepEqual(virusTotalTarget({ value: SHA256, type: 'SHA256' }), { collection: 'files', gui: 'file', id: SHA256 });
    assert.equal(virusTotalTarget({ value: 'jane@example.com', type: 'Email' }), null);
  });
});

describe('provider_24 against a loopback VirusTotal', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup({
      ...fakeRoutes(),
      [`GET ${PREFIX}/ip_addresses/8.8.8.8`]: reply.json(GOOGLE_DNS),
      [`GET ${PREFIX}/ip_addresses/198.51.100.7`]: reply.json(NOT_FOUND, 404),
    }));
  });

  test('IP: the example of engines.md, field by field; the key in x-apikey', async () => {
    fake.reset();
    const result = await harness.run('8.8.8.8', 'IPv4') as VirusTotalResult;
    assert.equal(result.detection_ratio, '1/92');
    assert.equal(result.total_malicious, 1);
    assert.equal(result.total_suspicious, 0);
    assert.equal(result.link, 'https://www.virustotal.com/gui/ip-address/8.8.8.8/detection');
    assert.equal(result.community_score, 526);
    assert.deepEqual(Object.keys(result).sort(), ['community_score', 'detection_ratio', 'link', 'total_malicious', 'total_suspicious']);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.method, 'GET');
    assert.equal(fake.requests[0]!.path, `${PREFIX}/ip_addresses/8.8.8.8`);
    assert.equal(fake.requests[0]!.headers['x-apikey'], KEY);
    assert.equal(fake.requests[0]!.query.toString(), '', 'the key is not in the URL');
    assert.equal(engine.summary(result), '1/92 malicious · reputation 526');
  });

  test('IPv6', async () => {
    fake.reset();
    const result = await harness.run('2606:4700:4700::1111', 'IPv6') as VirusTotalResult;
    assert.equal(fake.requests[0]!.path, `${PREFIX}/ip_addresses/2606:4700:4700::1111`);
    assert.equal(result.link, 'https://www.virustotal.com/gui/ip-address/2606:4700:4700::1111/detection');
    assert.equal(result.detection_ratio, '5/94');
  });

  test('domain: lower-cased, link to the domain page', async () => {
    fake.reset();
    const result = await harness.run('Evil.Example.COM', 'FQDN');
    assert.deepEqual(result, {
      detection_ratio: '5/94',
      total_malicious: 5,
      total_suspicious: 1,
      link: 'https://www.virustotal.com/gui/domain/evil.example.com/detection',
      community_score: -12,
    });
    assert.equal(fake.requests[0]!.path, `${PREFIX}/domains/evil.example.com`);
    assert.equal(engine.summary(result as VirusTotalResult), '5/94 malicious, 1 suspicious · reputation -12');
  });

  test('details: detection ratio, suspicious, community score, then the VirusTotal page', async () => {
    const result = await harness.run('Evil.Example.COM', 'FQDN') as VirusTotalResult;
    assert.deepEqual(engine.details!(result, 'evil.example.com'), [
      { label: 'Detection ratio', value: '5/94' },
      { label: 'Suspicious', value: '1' },
      { label: 'Community score', value: '-12' },
      {
        label: 'Open in VirusTotal',
        value: 'https://www.virustotal.com/gui/domain/evil.example.com/detection',
        href: 'https://www.virustotal.com/gui/domain/evil.example.com/detection',
      },
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, virusTotalDetails);
  });

  test('URL: looked up by its unpadded base64url id', async () => {
    fake.reset();
    const result = await harness.run(PHISH_URL, 'URL') as VirusTotalResult;
    assert.equal(fake.requests[0]!.path, `${PREFIX}/urls/${PHISH_ID}`);
    assert.equal(result.link, `https://www.virustotal.com/gui/url/${PHISH_ID}/detection`);
    assert.equal(result.detection_ratio, '5/94');
  });

  test('hash: every stat bucket counts in the denominator, as in the reference', async () => {
    fake.reset();
    const result = await harness.run(SHA256, 'SHA256');
    const total = Object.values(FILE_STATS).reduce((a, b) => a + b, 0);
    assert.equal(total, 76);
    assert.deepEqual(result, {
      detection_ratio: '61/76',
      total_malicious: 61,
      total_suspicious: 0,
      link: `https://www.virustotal.com/gui/file/${SHA256}/detection`,
      community_score: -47,
    });
    assert.equal(fake.requests[0]!.path, `${PREFIX}/files/${SHA256}`);
    await harness.run('d41d8cd98f00b204e9800998ecf8427e', 'MD5');
    await harness.run('da39a3ee5e6b4b0d3255bfef95601890afd80709', 'SHA1');
    assert.deepEqual(fake.requests.slice(1).map((r) => r.path), [
      `${PREFIX}/files/d41d8cd98f00b204e9800998ecf8427e`,
      `${PREFIX}/files/da39a3ee5e6b4b0d3255bfef95601890afd80709`,
    ]);
  });

  test('unknown object: VirusTotal\'s NotFoundError is null', async () => {
    assert.equal(await harness.run('198.51.100.7', 'IPv4'), null);
  });

  test('no stats and no reputation: 0/0, score 0', async () => {
    const { harness: bare } = await setup(everywhere(reply.json({ data: { id: 'new.example', type: 'domain', attributes: { last_analysis_stats: {} } } })));
    assert.deepEqual(await bare.run('new.example', 'FQDN'), {
      detection_ratio: '0/0', total_malicious: 0, total_suspicious: 0,
      link: 'https://www.virustotal.com/gui/domain/new.example/detection', community_score: 0,
    });
  });

  test('the fixture routes answer any observable', async () => {
    fake.reset();
    for (const [value, type] of [['1.2.3.4', 'IPv4'], ['a.example', 'FQDN'], ['http://a.example/x', 'URL'], [SHA256, 'SHA256']] as const) {
      const result = await harness.run(value, type) as VirusTotalResult;
      assert.match(result.detection_ratio, /^\d+\/\d+$/, value);
    }
    assert.equal(fake.requests.length, 4);
  });
});

describe('provider_24 minimal and degenerate answers (issue 26)', () => {
  const none: VirusTotalResult = {
    detection_ratio: '0/0', total_malicious: 0, total_suspicious: 0, link: 'https://www.virustotal.com/gui/ip-address/8.8.8.8/detection', community_score: 0,
  };

  test('the minimal answer, {"data": {"attributes": {}}}: 0/0, score 0', async () => {
    const { harness } = await setup(everywhere(reply.json({ data: { attributes: {} } })));
    assert.deepEqual(await harness.run('8.8.8.8', 'IPv4'), none);
  });

  test('stats and reputation null or ""; buckets null, "" or numbers as text', async () => {
    for (const attributes of [{ last_analysis_stats: null, reputation: null }, { reputation: '' }, { last_analysis_stats: { malicious: null, harmless: '' } }]) {
      const { harness } = await setup(everywhere(reply.json({ data: { id: 8, type: null, attributes } })));
      assert.deepEqual(await harness.run('8.8.8.8', 'IPv4'), none, JSON.stringify(attributes));
    }
    const { harness } = await setup(everywhere(reply.json({ data: { attributes: { last_analysis_stats: { malicious: '2', suspicious: 1, harmless: '60', undetected: null }, reputation: '-12' } } })));
    assert.deepEqual(await harness.run('8.8.8.8', 'IPv4'), { ...none, detection_ratio: '2/63', total_malicious: 2, total_suspicious: 1, community_score: -12 });
  });

  test('what cannot be read still fails, naming the missing part', async () => {
    for (const [answer, where] of [[{}, 'data'], [{ data: null }, 'data'], [{ data: {} }, 'data\\.attributes'], [{ data: { attributes: null } }, 'data\\.attributes']] as const) {
      const { harness } = await setup(everywhere(reply.json(answer)));
      await rejectsWith(harness.run('8.8.8.8', 'IPv4'), new RegExp(`^unexpected answer from upstream at ${where}: `), { secret: KEY });
    }
    const { harness } = await setup(everywhere(reply.json({ data: { attributes: { reputation: 'good' } } })));
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /^unexpected answer from upstream at data\.attributes\.reputation: expected a number$/);
  });
});

describe('provider_24 credentials and upstream failures', () => {
  test('401: a clear one-line error with VirusTotal\'s code, no key', async () => {
    const { harness } = await setup(everywhere(reply.json({ error: { code: 'WrongCredentialsError', message: 'Wrong API key' } }, 401)));
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /^HTTP 401 Unauthorized: WrongCredentialsError$/, { type: HttpStatusError, secret: KEY });
  });

  test('403: a clear one-line error, the key redacted even if the upstream echoes it', async () => {
    const { harness } = await setup(everywhere(reply.json({ error: { code: `ForbiddenError for ${KEY}`, message: `key ${KEY} is not allowed` } }, 403)));
    await rejectsWith(harness.run('example.com', 'FQDN'), /^HTTP 403 Forbidden: ForbiddenError for \*\*\*$/, { type: HttpStatusError, secret: KEY });
  });

  test('401 without a VirusTotal body: the status alone', async () => {
    const { harness } = await setup(everywhere({ status: 401, body: 'Unauthorized' }));
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /^HTTP 401 Unauthorized$/, { secret: KEY });
  });

  test('404 that is not VirusTotal\'s NotFoundError (a wrong base_url): an error, not "not found"', async () => {
    const { fake } = await setup(fakeRoutes());
    const lost = engineHarness(engine, { settings: { base_url: `${fake.url}/elsewhere/api/v3`, api_key: KEY } });
    closers.push(() => lost.close());
    await rejectsWith(lost.run('8.8.8.8', 'IPv4'), /^HTTP 404 Not Found$/, { type: HttpStatusError, secret: KEY });
  });

  test('HTTP 500: an error, not null', async () => {
    const { harness } = await setup(everywhere(reply.status(500)), { retries: 0 });
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /^HTTP 500 Internal Server Error$/, { secret: KEY });
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(everywhere(sequence(
      { status: 429, headers: { 'retry-after': '1' }, json: { error: { code: 'QuotaExceededError', message: 'Quota exceeded' } } },
      reply.json(GOOGLE_DNS),
    )));
    const result = await harness.run('8.8.8.8', 'IPv4') as VirusTotalResult;
    assert.equal(result.detection_ratio, '1/92');
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(everywhere(reply.malformed()));
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /malformed JSON/, { secret: KEY });
  });

  test('no data.attributes: a clean error naming the field (the reference returned null)', async () => {
    const { harness } = await setup(everywhere(reply.json({ data: { id: '8.8.8.8', type: 'ip_address' } })));
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), /unexpected answer from upstream at data\.attributes/, { secret: KEY });
    const { harness: badStats } = await setup(everywhere(reply.json({ data: { attributes: { last_analysis_stats: { malicious: 'five' } } } })));
    await rejectsWith(badStats.run('8.8.8.8', 'IPv4'), /unexpected answer from upstream at data\.attributes\.last_analysis_stats\.malicious/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(everywhere(reply.hang()), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('8.8.8.8', 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`), { secret: KEY });
  });
});

describe('provider_24 through the runner', () => {
  let fake: FakeHttpServer;
  let withKey: RunnerHarness;
  let withoutKey: RunnerHarness;
  before(async () => {
    fake = await startFakeHttp(fakeRoutes());
    withKey = runnerHarness([engine], { settings: { provider_24: { ...fakeSettings(fake.url), api_key: KEY } } });
    withoutKey = runnerHarness([engine], { settings: { provider_24: fakeSettings(fake.url) } });
  });
  after(async () => {
    await Promise.all([withKey.close(), withoutKey.close()]);
    await fake.close();
  });

  test('missing key: "not configured: api_key", no request', async () => {
    fake.reset();
    const [result] = await withoutKey.analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['virustotal']);
    assert.equal(result!.virustotal, null);
    assert.deepEqual(result!.errors, { virustotal: 'not configured: engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('with a key: the result, and the key nowhere in it', async () => {
    fake.reset();
    const [result] = await withKey.analyze([{ value: 'example.com', type: 'FQDN' }], ['provider_24']);
    assert.equal(result!.errors, undefined);
    assert.equal((result!.provider_24 as VirusTotalResult).detection_ratio, '5/94');
    assert.equal(result!.reversed_ip, undefined, 'not an IP-only engine: no pivot');
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers['x-apikey'], KEY);
    watch.result(result);
  });

  test('bad key: the error in errors, without the key', async () => {
    const bad = await startFakeHttp(everywhere(reply.json({ error: { code: 'WrongCredentialsError', message: `Wrong API key ${KEY}` } }, 401)));
    const runner = runnerHarness([engine], { settings: { provider_24: { ...fakeSettings(bad.url), api_key: KEY } } });
    try {
      const [result] = await runner.analyze([{ value: SHA256, type: 'SHA256' }], ['provider_24']);
      assert.equal(result!.provider_24, null);
      assert.deepEqual(result!.errors, { provider_24: 'HTTP 401 Unauthorized: WrongCredentialsError (key refused: check engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY)' });
      watch.result(result);
    } finally {
      await runner.close();
      await bad.close();
    }
  });
});

describe('provider_24 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(21);
  });
});
