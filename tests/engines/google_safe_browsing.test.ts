import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { decodeSearchUrlsResponse, lookupUrl, safeBrowsingDetails, safeBrowsingLookup, safeBrowsingSummary, type SafeBrowsingResult } from '../../engines/google_safe_browsing.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { fakeRoutes, fakeSettings, searchUrlsResponse } from '../fakes/google_safe_browsing.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';

const KEY = 'SECRET-KEY-1234567890';
const PATH = '/v5alpha1/urls:search';

/** engines.md 5.11's example answer: one URL under two lists. */
const LISTED = {
  threats: [
    { url: 'http://malware.example/', threatTypes: ['SOCIAL_ENGINEERING', 'MALWARE'] },
    { url: 'http://malware.example/download/setup.exe', threatTypes: ['MALWARE', 'UNWANTED_SOFTWARE'] },
  ],
  cacheDuration: '300s',
};

/** Google's error body (https://cloud.google.com/apis/design/errors). */
function googleError(code: number, status: string, message: string, reason: string): FakeReply {
  return reply.json({
    error: {
      code,
      message,
      status,
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'safebrowsing.googleapis.com' } }],
    },
  }, code);
}

// A few protobuf encoders, to build the binary form of SearchUrlsResponse.
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}
function lengthDelimited(field: number, bytes: Buffer | number[]): Buffer {
  const body = Buffer.from(bytes);
  return Buffer.concat([Buffer.from([...varint((field << 3) | 2), ...varint(body.length)]), body]);
}
function varintField(field: number, value: number): Buffer {
  return Buffer.from([...varint(field << 3), ...varint(value)]);
}

/** Every value a test got back (results, error messages): none may contain the key. */
const seen: unknown[] = [];

async function fails(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await rejectsWith(promise.catch((error: Error) => {
    seen.push(error.message);
    throw error;
  }), pattern, { secret: KEY });
}

describe('safe_browsing declaration', () => {
  test('id, alias, tags, types, credential, quota', () => {
    assert.equal(engine.id, 'safe_browsing');
    assert.equal(engine.service, 'google_safe_browsing');
    assert.equal(engine.label, 'Safe Browsing');
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.tags, ['risk', 'domain', 'IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['GOOGLE_SAFE_BROWSING'] }]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 5000,
      base_url: 'https://safebrowsing.googleapis.com/v5alpha1',
      rate_limit: 10_000,
      rate_window_ms: 86_400_000,
    });
    assert.equal(engine.run, safeBrowsingLookup);
  });

  test('summary', () => {
    assert.equal(safeBrowsingSummary({ threat_found: 'Threat found', details: [{ url: 'http://a.example/', threatTypes: ['SOCIAL_ENGINEERING'] }], threat_types: ['SOCIAL_ENGINEERING'] }), 'listed: SOCIAL_ENGINEERING');
    assert.equal(safeBrowsingSummary({ threat_found: 'Threat found', details: [], threat_types: ['MALWARE', 'SOCIAL_ENGINEERING'] }), 'listed: MALWARE, SOCIAL_ENGINEERING');
    assert.equal(safeBrowsingSummary({ threat_found: 'No threat found', details: null, threat_types: [] }), 'not listed');
    assert.equal(engine.summary, safeBrowsingSummary);
  });

  test('lookup URL: a URL as is, a domain or IPv4 as http://<host>', () => {
    assert.equal(lookupUrl({ value: 'https://evil.example/login?x=1', type: 'URL' }), 'https://evil.example/login?x=1');
    assert.equal(lookupUrl({ value: 'evil.example', type: 'FQDN' }), 'http://evil.example');
    assert.equal(lookupUrl({ value: '203.0.113.7', type: 'IPv4' }), 'http://203.0.113.7');
    assert.equal(lookupUrl({ value: 'd41d8cd98f00b204e9800998ecf8427e', type: 'MD5' }), null);
  });

  test('Bug fixed: an IPv6 address is bracketed (the reference sent http://2606:4700::1111, not a URL)', () => {
    const url = lookupUrl({ value: '2606:4700:4700::1111', type: 'IPv6' })!;
    assert.equal(url, 'http://[2606:4700:4700::1111]');
    assert.equal(new URL(url).hostname, '[2606:4700:4700::1111]');
    assert.throws(() => new URL('http://2606:4700:4700::1111'));
  });
});

describe('safe_browsing against a loopback Safe Browsing v5 API', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];

  /** A harness whose base_url is `<fake>/<name>/v5alpha1`: each test has its own route. */
  function harness(name: string, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${name}/v5alpha1`, api_key: KEY, ...settings } });
    harnesses.push(h);
    return h;
  }

  async function run(h: EngineHarness, value: string, type: Parameters<EngineHarness['run']>[1]): Promise<SafeBrowsingResult> {
    const result = (await h.run(value, type)) as SafeBrowsingResult;
    seen.push(result);
    return result;
  }

  // The fake sends string bodies: these protobuf fixtures keep every byte below 0x80 (ASCII).
  const protobuf = (body: Buffer): FakeReply => ({ status: 200, headers: { 'content-type': 'application/x-protobuf' }, body: body.toString('latin1') });

  before(async () => {
    fake = await startFakeHttp({
      [`GET /listed${PATH}`]: reply.json(LISTED),
      [`GET /echo${PATH}`]: (req: FakeRequest) => reply.json(searchUrlsResponse(req.query.getAll('urls'))),
      [`GET /clean${PATH}`]: reply.json({ cacheDuration: '300s' }),
      [`GET /empty${PATH}`]: reply.json({}),
      [`GET /empty-list${PATH}`]: reply.json({ threats: [], cacheDuration: '300s' }),
      [`GET /status500${PATH}`]: googleError(500, 'INTERNAL', 'Internal error encountered.', 'INTERNAL'),
      [`GET /flaky${PATH}`]: sequence(reply.tooMany(1), reply.json(LISTED)),
      [`GET /malformed${PATH}`]: reply.malformed(),
      [`GET /wrong-shape${PATH}`]: reply.json({ threats: [{ url: 'http://malware.example/', threatTypes: [{ type: 'MALWARE' }] }] }),
      [`GET /hang${PATH}`]: reply.hang(),
      [`GET /bad-key${PATH}`]: googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'),
      [`GET /unauthorized${PATH}`]: googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'CREDENTIALS_MISSING'),
      [`GET /forbidden${PATH}`]: (req: FakeRequest) => googleError(403, 'PERMISSION_DENIED', `Requests from this API key (${req.query.get('key')}) are blocked.`, 'API_KEY_SERVICE_BLOCKED'),
      [`GET /error200${PATH}`]: reply.json({ error: { code: 429, message: "Quota exceeded for quota metric 'Lookup API requests' and limit 'Lookup API requests per day'.", status: 'RESOURCE_EXHAUSTED' } }),
      [`GET /proto${PATH}`]: protobuf(Buffer.concat([
        // ThreatUrl with packed threat types (MALWARE, SOCIAL_ENGINEERING)...
        lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from('http://malware.example/')), lengthDelimited(2, [1, 2])])),
        // ...one with unpacked ones (UNWANTED_SOFTWARE, an enum value this code does not know)...
        lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from('http://malware.example/dl')), varintField(2, 3), varintField(2, 9)])),
        // ...and the cache duration (google.protobuf.Duration {seconds: 60}), ignored.
        lengthDelimited(2, varintField(1, 60)),
      ])),
      [`GET /proto-clean${PATH}`]: protobuf(lengthDelimited(2, varintField(1, 60))),
      [`GET /proto-truncated${PATH}`]: protobuf(lengthDelimited(1, Buffer.from('http://malware.example/')).subarray(0, 10)),
    });
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
    for (const value of seen) assert.ok(!JSON.stringify(value).includes(KEY), `no key in ${JSON.stringify(value)}`);
  });

  test('a listed URL: the result field by field', async () => {
    const result = await run(harness('listed'), 'http://malware.example/', 'URL');
    assert.deepEqual(Object.keys(result), ['threat_found', 'details', 'threat_types']);
    assert.equal(result.threat_found, 'Threat found');
    assert.deepEqual(result.details, LISTED.threats);
    assert.deepEqual(result.threat_types, ['MALWARE', 'SOCIAL_ENGINEERING', 'UNWANTED_SOFTWARE']);
    assert.equal(engine.summary(result), 'listed: MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE');
  });

  test('details: verdict, threat types, listed URLs as text (never links), then Google\'s site status page', async () => {
    const result = await run(harness('listed'), 'http://malware.example/', 'URL');
    const status = 'https://transparencyreport.google.com/safe-browsing/search?url=http%3A%2F%2Fmalware.example%2F';
    assert.deepEqual(engine.details!(result, 'http://malware.example/'), [
      { label: 'Status', value: 'Threat found' },
      { label: 'Threat types', value: 'MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE' },
      { label: 'Listed URL', value: 'http://malware.example/ (SOCIAL_ENGINEERING, MALWARE)' },
      { label: 'Listed URL', value: 'http://malware.example/download/setup.exe (MALWARE, UNWANTED_SOFTWARE)' },
      { label: 'Site status', value: status, href: status },
    ]);
    const clean = await run(harness('clean'), 'example.com', 'FQDN');
    assert.deepEqual(safeBrowsingDetails(clean, 'example.com'), [
      { label: 'Status', value: 'No threat found' },
      {
        label: 'Site status',
        value: 'https://transparencyreport.google.com/safe-browsing/search?url=example.com',
        href: 'https://transparencyreport.google.com/safe-browsing/search?url=example.com',
      },
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, safeBrowsingDetails);
  });

  test('the request: GET urls:search with the key and the URL in the query string', async () => {
    fake.reset();
    await run(harness('echo'), 'https://evil.example/login?next=/account&x=1', 'URL');
    const [req, ...more] = fake.hits(`GET /echo${PATH}`);
    assert.equal(more.length, 0);
    assert.equal(req!.query.get('key'), KEY);
    assert.deepEqual(req!.query.getAll('urls'), ['https://evil.example/login?next=/account&x=1']);
    assert.deepEqual([...req!.query.keys()].sort(), ['key', 'urls']);
    assert.equal(req!.body, '');
  });

  test('a domain, an IPv4 and an IPv6 are asked as http://<host>', async () => {
    fake.reset();
    const h = harness('echo');
    const domain = await run(h, 'evil.example', 'FQDN');
    const v4 = await run(h, '203.0.113.7', 'IPv4');
    const v6 = await run(h, '2606:4700:4700::1111', 'IPv6');
    assert.deepEqual(fake.hits(`GET /echo${PATH}`).map((r) => r.query.get('urls')), [
      'http://evil.example',
      'http://203.0.113.7',
      'http://[2606:4700:4700::1111]',
    ]);
    assert.deepEqual(domain.details, [{ url: 'http://evil.example', threatTypes: ['SOCIAL_ENGINEERING'] }]);
    assert.equal(engine.summary(v4), 'listed: SOCIAL_ENGINEERING');
    assert.deepEqual(v6.threat_types, ['SOCIAL_ENGINEERING']);
  });

  test('not listed: the documented empty result', async () => {
    const expected = { threat_found: 'No threat found', details: null, threat_types: [] };
    assert.deepEqual(await run(harness('clean'), 'example.com', 'FQDN'), expected);
    assert.deepEqual(await run(harness('empty'), 'example.com', 'FQDN'), expected);
    assert.deepEqual(await run(harness('empty-list'), 'example.com', 'FQDN'), expected);
    assert.equal(engine.summary(expected as SafeBrowsingResult), 'not listed');
  });

  test('a protobuf answer is decoded (packed and unpacked threat types, unknown enum values kept)', async () => {
    const result = await run(harness('proto'), 'http://malware.example/', 'URL');
    assert.deepEqual(result, {
      threat_found: 'Threat found',
      details: [
        { url: 'http://malware.example/', threatTypes: ['MALWARE', 'SOCIAL_ENGINEERING'] },
        { url: 'http://malware.example/dl', threatTypes: ['UNWANTED_SOFTWARE', 'THREAT_TYPE_9'] },
      ],
      threat_types: ['MALWARE', 'SOCIAL_ENGINEERING', 'THREAT_TYPE_9', 'UNWANTED_SOFTWARE'],
    });
    assert.deepEqual(await run(harness('proto-clean'), 'example.com', 'FQDN'), { threat_found: 'No threat found', details: null, threat_types: [] });
    assert.deepEqual(decodeSearchUrlsResponse(Buffer.alloc(0)), []);
  });

  test('protobuf decoding: multi-byte varints, long strings, unknown fields skipped', () => {
    const url = `http://malware.example/${'a'.repeat(200)}`;
    const body = Buffer.concat([
      varintField(7, 123_456), // unknown varint field
      Buffer.from([(8 << 3) | 5, 1, 2, 3, 4]), // unknown fixed32
      Buffer.from([(9 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]), // unknown fixed64
      lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from(url)), lengthDelimited(2, [4, ...varint(300)]), lengthDelimited(3, Buffer.from('x'))])),
      lengthDelimited(2, Buffer.concat([varintField(1, 86_400), varintField(2, 500_000_000)])),
    ]);
    assert.deepEqual(decodeSearchUrlsResponse(body), [{ url, threatTypes: ['POTENTIALLY_HARMFUL_APPLICATION', 'THREAT_TYPE_300'] }]);
    assert.throws(() => decodeSearchUrlsResponse(Buffer.from([(1 << 3) | 2, 50, 1])), /^BadResponseError: upstream answered with malformed protobuf$/);
    assert.throws(() => decodeSearchUrlsResponse(Buffer.from([(1 << 3) | 3])), /malformed protobuf/);
    assert.throws(() => decodeSearchUrlsResponse(Buffer.from([0x80])), /malformed protobuf/);
  });

  test('a truncated protobuf answer: a clean error', async () => {
    await fails(harness('proto-truncated', { retries: 0 }).run('http://malware.example/', 'URL'), /^upstream answered with malformed protobuf$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await fails(harness('status500', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits(`GET /status500${PATH}`).length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 2, timeout_ms: 5000 }), 'http://malware.example/', 'URL');
    assert.equal(result.threat_found, 'Threat found');
    assert.equal(fake.hits(`GET /flaky${PATH}`).length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await fails(harness('malformed', { retries: 0 }).run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await fails(harness('wrong-shape', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at threats\.0\.threatTypes\.0: expected a threat type$/);
  });

  test('a hanging upstream: timeout', async () => {
    await fails(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a bad key (Google answers 400 API_KEY_INVALID): Google\'s reason, not retried', async () => {
    fake.reset();
    await fails(harness('bad-key', { retries: 2 }).run('example.com', 'FQDN'), /^HTTP 400 Bad Request: API key not valid\. Please pass a valid API key\. \(API_KEY_INVALID\)$/);
    assert.equal(fake.hits(`GET /bad-key${PATH}`).length, 1);
  });

  test('401 and 403: a clear one-line error, the key masked in Google\'s message', async () => {
    await fails(
      harness('unauthorized', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 401 Unauthorized: Request is missing required authentication credential\. .* \(CREDENTIALS_MISSING\)$/,
    );
    await fails(
      harness('forbidden', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 403 Forbidden: Requests from this API key \(\*\*\*\) are blocked\. \(API_KEY_SERVICE_BLOCKED\)$/,
    );
  });

  test('an {"error"} body with status 200: an error, not "No threat found"', async () => {
    await fails(
      harness('error200', { retries: 0 }).run('example.com', 'FQDN'),
      /^Google API error 429: Quota exceeded for quota metric 'Lookup API requests' and limit 'Lookup API requests per day'\. \(RESOURCE_EXHAUSTED\)$/,
    );
  });

  test('not a host or URL: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('echo').run('d41d8cd98f00b204e9800998ecf8427e', 'MD5'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('safe_browsing: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];
  const URL_ASKED = 'http://malware.example/';
  const answers: Record<string, unknown> = {
    // The minimal answers: nothing listed (not even cacheDuration), and a threat with its two parts.
    nothing: {},
    minimal: { threats: [{ url: URL_ASKED, threatTypes: ['MALWARE'] }] },
    'null-threats': { threats: null, cacheDuration: null },
    'object-threats': { threats: {} },
    // One threat in place of the list, one type in place of threatTypes.
    single: { threats: { url: URL_ASKED, threatTypes: 'SOCIAL_ENGINEERING' } },
    // Null threats, a threat without url, one without types, null types among them.
    degenerate: { threats: [null, { threatTypes: ['MALWARE', null] }, { url: 'http://malware.example/dl', threatTypes: null }] },
    // A threat whose url Google sent as "".
    'empty-url': { threats: [{ url: '', threatTypes: ['MALWARE'] }] },
  };
  const lookup = async (name: string) => {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${name}/v5alpha1`, api_key: KEY, retries: 0 } });
    harnesses.push(h);
    const result = await h.run(URL_ASKED, 'URL');
    seen.push(result);
    return result;
  };
  const CLEAN: SafeBrowsingResult = { threat_found: 'No threat found', details: null, threat_types: [] };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}${PATH}`, reply.json(body)])));
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
  });

  test('the minimal answers: {} is not listed; a threat with url and types alone is listed', async () => {
    assert.deepEqual(await lookup('nothing'), CLEAN);
    assert.deepEqual(await lookup('minimal'), { threat_found: 'Threat found', details: [{ url: URL_ASKED, threatTypes: ['MALWARE'] }], threat_types: ['MALWARE'] });
  });

  test('threats null or {}: not listed', async () => {
    assert.deepEqual(await lookup('null-threats'), CLEAN);
    assert.deepEqual(await lookup('object-threats'), CLEAN);
  });

  test('one threat for the list, one type for threatTypes', async () => {
    assert.deepEqual(await lookup('single'), {
      threat_found: 'Threat found',
      details: [{ url: URL_ASKED, threatTypes: ['SOCIAL_ENGINEERING'] }],
      threat_types: ['SOCIAL_ENGINEERING'],
    });
  });

  test('null entries dropped; a threat without url is the URL asked about, one without types still listed', async () => {
    assert.deepEqual(await lookup('degenerate'), {
      threat_found: 'Threat found',
      details: [{ url: URL_ASKED, threatTypes: ['MALWARE'] }, { url: 'http://malware.example/dl', threatTypes: [] }],
      threat_types: ['MALWARE'],
    });
  });

  test('issue 32: a url sent as "" is kept in details as received; the card shows the URL asked about', async () => {
    const result = await lookup('empty-url') as SafeBrowsingResult;
    assert.deepEqual(result, { threat_found: 'Threat found', details: [{ url: '', threatTypes: ['MALWARE'] }], threat_types: ['MALWARE'] });
    assert.deepEqual(engine.details!(result, URL_ASKED).find((f) => f.label === 'Listed URL'), { label: 'Listed URL', value: `${URL_ASKED} (MALWARE)` });
  });
});

describe('safe_browsing through the runner', () => {
  let fake: FakeHttpServer;

  before(async () => {
    fake = await startFakeHttp(fakeRoutes());
  });
  after(async () => {
    await fake.close();
  });

  async function analyze(settings: Record<string, unknown>, value: string, type: 'FQDN' | 'URL' | 'IPv4') {
    const runner = runnerHarness([engine], { settings: { safe_browsing: settings } });
    try {
      const [result] = await runner.analyze([{ value, type }], ['google_safe_browsing', 'safe_browsing']);
      return result!;
    } finally {
      await runner.close();
    }
  }

  test('missing API key: "not configured: api_key", nothing asked', async () => {
    fake.reset();
    const result = await analyze(fakeSettings(fake.url), 'evil.example', 'FQDN');
    assert.equal(result.safe_browsing, null);
    assert.deepEqual(result.errors, { google_safe_browsing: 'not configured: engines.safe_browsing.api_key or OAS_GOOGLE_SAFE_BROWSING_API_KEY', safe_browsing: 'not configured: engines.safe_browsing.api_key or OAS_GOOGLE_SAFE_BROWSING_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('the fake\'s settings plus a key: a domain is checked itself (no pivot), no key in the result', async () => {
    fake.reset();
    const result = await analyze({ ...fakeSettings(fake.url), api_key: KEY }, 'evil.example', 'FQDN');
    assert.equal(result.errors, undefined);
    assert.equal(result.reversed_ip, undefined);
    assert.deepEqual(result.safe_browsing, {
      threat_found: 'Threat found',
      details: [{ url: 'http://evil.example', threatTypes: ['SOCIAL_ENGINEERING'] }],
      threat_types: ['SOCIAL_ENGINEERING'],
    });
    assert.deepEqual(result.google_safe_browsing, result.safe_browsing);
    assert.equal(fake.requests.length, 1, 'one call for the id and the alias');
    assert.equal(fake.requests[0]!.query.get('key'), KEY);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });

  test('an upstream failure is reported in errors, without the key', async () => {
    const errorFake = await startFakeHttp({ [`GET /denied${PATH}`]: (req) => googleError(403, 'PERMISSION_DENIED', `API key ${req.query.get('key')} is blocked.`, 'API_KEY_SERVICE_BLOCKED') });
    try {
      const result = await analyze({ base_url: `${errorFake.url}/denied/v5alpha1`, api_key: KEY, retries: 0 }, 'http://evil.example/', 'URL');
      assert.equal(result.safe_browsing, null);
      assert.equal((result.errors as Record<string, string>).safe_browsing, 'HTTP 403 Forbidden: API key *** is blocked. (API_KEY_SERVICE_BLOCKED) (key refused: check engines.safe_browsing.api_key or OAS_GOOGLE_SAFE_BROWSING_API_KEY)');
      assert.ok(!JSON.stringify(result).includes(KEY));
    } finally {
      await errorFake.close();
    }
  });
});
