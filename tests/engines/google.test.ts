import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { searchEngineDetails, searchEngineLookup, searchEngineSummary, type SearchEngineResult } from '../../engines/google.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { cseResponse, fakeRoutes, fakeSettings } from '../fakes/google.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';

const KEY = 'SECRET-KEY-1234567890';
const CX = 'SECRET-CX-0987654321abc';

/** engines.md 5.9's example, completed into the full page Google sends (see tests/fakes/google.ts). */
const PAGE = cseResponse('"example.com"', CX);

/** Google's answer when nothing matches: no `items`, totalResults "0". */
const NO_HITS = (() => {
  const { items: _items, ...rest } = cseResponse('"nothing-matches.example"', CX, 0);
  return { ...rest, queries: { request: [{ ...(rest.queries as { request: object[] }).request[0], totalResults: '0' }] } };
})();

/** Google's error body (https://cloud.google.com/apis/design/errors), as googleapis.com sends it. */
function googleError(code: number, status: string, message: string, reason: string, legacyReason = 'badRequest'): FakeReply {
  return reply.json({
    error: {
      code,
      message,
      errors: [{ message, domain: 'global', reason: legacyReason }],
      status,
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com' } }],
    },
  }, code);
}

/** The daily-quota answer of engines.md 5.9 (the reference turned it into a fake "API Error" hit). */
const QUOTA_BODY = {
  error: {
    code: 429,
    message: "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'customsearch.googleapis.com' for consumer 'project_number:123456789012'.",
    errors: [{ message: "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'customsearch.googleapis.com' for consumer 'project_number:123456789012'.", domain: 'global', reason: 'rateLimitExceeded' }],
    status: 'RESOURCE_EXHAUSTED',
  },
};

/** Every value a test got back (results, error messages): none may contain a credential. */
const seen: unknown[] = [];

function assertNoSecret(value: unknown): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  assert.ok(!text.includes(KEY), `no API key in: ${text}`);
  assert.ok(!text.includes(CX), `no cx in: ${text}`);
  assert.ok(!text.includes(encodeURIComponent(CX)), `no cx in: ${text}`);
}

/** Rejects with a one-line message matching `pattern` that names neither the key nor the cx. */
async function fails(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await rejectsWith(promise.catch((error: Error) => {
    seen.push(error.message);
    throw error;
  }), pattern, { secret: KEY });
}

describe('search_engine declaration', () => {
  test('id, alias, tags, types, credentials, quota', () => {
    assert.equal(engine.id, 'search_engine');
    assert.equal(engine.service, 'google');
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [
      { setting: 'api_key', label: 'API key', env: ['GOOGLE_CSE_KEY'] },
      { setting: 'cx', label: 'search engine ID (cx)', env: ['GOOGLE_CSE_CX'] },
    ]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 10_000,
      base_url: 'https://www.googleapis.com/customsearch/v1',
      rate_limit: 100,
      rate_window_ms: 86_400_000,
    });
    assert.equal(engine.run, searchEngineLookup);
  });

  test('summary: count and first title, or no results', () => {
    assert.equal(
      searchEngineSummary({ results: [{ title: 'Threat report – example.com', description: '…', url: 'https://blog.example/report' }], total: 1240 }),
      '1,240 results · Threat report – example.com',
    );
    assert.equal(searchEngineSummary({ results: [{ title: '', description: '', url: 'https://a.example/' }], total: 1 }), '1 result · https://a.example/');
    assert.equal(searchEngineSummary({ results: [], total: 0 }), 'no results');
    assert.equal(engine.summary, searchEngineSummary);
  });
});

describe('search_engine against a loopback Custom Search API', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];

  function harness(path: string, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${path}`, api_key: KEY, cx: CX, ...settings } });
    harnesses.push(h);
    return h;
  }

  async function run(h: EngineHarness, value: string, type: Parameters<EngineHarness['run']>[1]): Promise<SearchEngineResult> {
    const result = (await h.run(value, type)) as SearchEngineResult;
    seen.push(result);
    return result;
  }

  const byQuery = (req: FakeRequest): FakeReply => reply.json(cseResponse(req.query.get('q') ?? '', req.query.get('cx') ?? ''));

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok': byQuery,
      'GET /none': reply.json(NO_HITS),
      'GET /status500': googleError(500, 'INTERNAL', 'Internal error encountered.', 'INTERNAL', 'backendError'),
      'GET /flaky': sequence(reply.tooMany(1), byQuery),
      'GET /quota429': reply.json(QUOTA_BODY, 429),
      'GET /quota200': reply.json(QUOTA_BODY),
      'GET /malformed': reply.malformed(),
      'GET /wrong-shape': reply.json({ ...PAGE, items: { title: 'not a list' } }),
      'GET /hang': reply.hang(),
      'GET /bad-key': googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'),
      'GET /unauthorized': googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'CREDENTIALS_MISSING', 'required'),
      'GET /forbidden': googleError(403, 'PERMISSION_DENIED', 'Custom Search JSON API has not been used in project 123456789012 before or it is disabled.', 'SERVICE_DISABLED', 'accessNotConfigured'),
      // Upstream texts that repeat the credentials: they must come out masked.
      'GET /echo-key': (req) => googleError(403, 'PERMISSION_DENIED', `API key ${req.query.get('key')} expired for engine ${req.query.get('cx')}. Renew it.`, 'API_KEY_EXPIRED', 'forbidden'),
      'GET /echo-url': (req) => googleError(400, 'INVALID_ARGUMENT', `Bad request: ${fake.url}/echo-url?key=${req.query.get('key')}&cx=${req.query.get('cx')}`, 'BAD_REQUEST'),
    });
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
    for (const value of seen) assertNoSecret(value);
  });

  test('a domain: the hits field by field, total as a number', async () => {
    const result = await run(harness('ok'), 'example.com', 'FQDN');
    assert.deepEqual(Object.keys(result), ['results', 'total']);
    assert.equal(result.total, 1240);
    assert.equal(result.results.length, 3);
    assert.deepEqual(result.results[0], {
      title: 'Threat report – example.com',
      description: '… example.com was used as C2 by the campaign; the infrastructure rotated weekly …',
      url: 'https://blog.example/2026/10/threat-report',
    });
    assert.deepEqual(result.results[1], {
      title: 'IOC list October 2026 | Example CERT',
      description: 'Indicators: example.com, 203.0.113.7, 44d88612fea8a8f36de82e1278abb02f …',
      url: 'https://cert.example/iocs/2026-10.txt',
    });
    assert.deepEqual(result.results[2], {
      title: 'example.com - community notes',
      description: 'Anyone seen example.com in their logs? We blocked it at the proxy.',
      url: 'https://forum.example/t/notes/8841',
    });
    assert.equal(engine.summary(result), '1,240 results · Threat report – example.com');
  });

  test('details: the estimate, the first pages linked, then the same search on google.com', async () => {
    const result = await run(harness('ok'), 'example.com', 'FQDN');
    const fields = engine.details!(result, 'example.com');
    assert.deepEqual(fields, [
      { label: 'Results', value: '1240' },
      { label: 'Result 1', value: 'Threat report – example.com', href: 'https://blog.example/2026/10/threat-report' },
      { label: 'Result 2', value: 'IOC list October 2026 | Example CERT', href: 'https://cert.example/iocs/2026-10.txt' },
      { label: 'Result 3', value: 'example.com - community notes', href: 'https://forum.example/t/notes/8841' },
      { label: 'Search on Google', value: 'https://www.google.com/search?q=%22example.com%22', href: 'https://www.google.com/search?q=%22example.com%22' },
    ]);
    assertNoSecret(fields);
    // A full page: five hits shown, the rest counted; a hit without a title shows its address.
    const hits = Array.from({ length: 8 }, (_, i) => ({ title: i === 0 ? '' : `Page ${i}`, description: '…', url: `https://site${i}.example/` }));
    const many = searchEngineDetails({ results: hits, total: 37 }, 'a@b.example');
    assert.deepEqual(many.filter((f) => f.label.startsWith('Result ')).map((f) => f.value), ['https://site0.example/', 'Page 1', 'Page 2', 'Page 3', 'Page 4']);
    assert.deepEqual(many.at(-2), { label: 'More on this page', value: '3' });
    assert.equal(many.at(-1)!.href, 'https://www.google.com/search?q=%22a%40b.example%22');
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, searchEngineDetails);
  });

  test('the request: GET with key, cx and the value as an exact phrase in the query string', async () => {
    fake.reset();
    await run(harness('ok'), 'https://evil.example/login?x=1', 'URL');
    const [req, ...more] = fake.hits('GET /ok');
    assert.equal(more.length, 0);
    assert.equal(req!.query.get('key'), KEY);
    assert.equal(req!.query.get('cx'), CX);
    assert.equal(req!.query.get('q'), '"https://evil.example/login?x=1"');
    assert.deepEqual([...req!.query.keys()].sort(), ['cx', 'key', 'q']);
    assert.equal(req!.headers['x-goog-api-key'], undefined);
  });

  test('the credentials never appear in the result, although Google echoes the cx in its page', async () => {
    const result = await run(harness('ok'), '44d88612fea8a8f36de82e1278abb02f', 'MD5');
    assert.ok(JSON.stringify(PAGE).includes(CX), 'the fixture does echo the cx');
    assertNoSecret(result);
    assert.equal(result.results[0]!.title, 'Threat report – 44d88612fea8a8f36de82e1278abb02f');
  });

  test('IPs, hashes and e-mail addresses are searched too', async () => {
    fake.reset();
    const h = harness('ok');
    for (const [value, type] of [['8.8.8.8', 'IPv4'], ['2606:4700:4700::1111', 'IPv6'], ['analyst@example.com', 'Email'], ['a'.repeat(64), 'SHA256']] as const) {
      const result = await run(h, value, type);
      assert.equal(result.total, 1240);
    }
    assert.deepEqual(fake.hits('GET /ok').map((r) => r.query.get('q')), ['"8.8.8.8"', '"2606:4700:4700::1111"', '"analyst@example.com"', `"${'a'.repeat(64)}"`]);
  });

  test('no hits: the documented empty result', async () => {
    const result = await run(harness('none'), 'nothing-matches.example', 'FQDN');
    assert.deepEqual(result, { results: [], total: 0 });
    assert.equal(engine.summary(result), 'no results');
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await fails(harness('status500', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('GET /status500').length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 2, timeout_ms: 5000 }), 'example.com', 'FQDN');
    assert.equal(result.total, 1240);
    assert.equal(fake.hits('GET /flaky').length, 2);
  });

  test('Bug fixed: the quota answer is an error, not a fake "API Error" hit', async () => {
    await fails(harness('quota429', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 429 Too Many Requests$/);
    // The same body with status 200 (the reference checked for `error` in any body).
    await fails(
      harness('quota200', { retries: 0 }).run('example.com', 'FQDN'),
      /^Google API error 429: Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'customsearch\.googleapis\.com' for consumer 'project_number:123456789012'\. \(rateLimitExceeded\)$/,
    );
  });

  test('malformed JSON: a clean error', async () => {
    await fails(harness('malformed', { retries: 0 }).run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await fails(harness('wrong-shape', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at items: /);
  });

  test('a hanging upstream: timeout', async () => {
    await fails(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), /^timeout after 300 ms$/);
  });

  test('a bad key (Google answers 400 API_KEY_INVALID): Google\'s reason, one line', async () => {
    fake.reset();
    await fails(
      harness('bad-key', { retries: 2 }).run('example.com', 'FQDN'),
      /^HTTP 400 Bad Request: API key not valid\. Please pass a valid API key\. \(API_KEY_INVALID\)$/,
    );
    assert.equal(fake.hits('GET /bad-key').length, 1, 'a bad key is not retried');
  });

  test('401 and 403: a clear one-line error with Google\'s reason', async () => {
    await fails(
      harness('unauthorized', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 401 Unauthorized: Request is missing required authentication credential\. .* \(CREDENTIALS_MISSING\)$/,
    );
    await fails(
      harness('forbidden', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 403 Forbidden: Custom Search JSON API has not been used in project 123456789012 before or it is disabled\. \(SERVICE_DISABLED\)$/,
    );
  });

  test('an upstream message repeating the key or the cx comes out masked', async () => {
    await fails(
      harness('echo-key', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 403 Forbidden: API key \*\*\* expired for engine \*\*\*\. Renew it\. \(API_KEY_EXPIRED\)$/,
    );
    await fails(
      harness('echo-url', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 400 Bad Request: Bad request: http:\/\/127\.0\.0\.1:\d+\/echo-url\?key=\*\*\*&cx=\*\*\* \(BAD_REQUEST\)$/,
    );
  });
});

describe('search_engine through the runner', () => {
  let fake: FakeHttpServer;

  before(async () => {
    fake = await startFakeHttp(fakeRoutes());
  });
  after(async () => {
    await fake.close();
  });

  async function analyze(settings: Record<string, unknown>, value = 'example.com') {
    const runner = runnerHarness([engine], { settings: { search_engine: settings } });
    try {
      const [result] = await runner.analyze([{ value, type: 'FQDN' }], ['google']);
      return result!;
    } finally {
      await runner.close();
    }
  }

  test('missing API key: "not configured: api_key", nothing asked', async () => {
    fake.reset();
    const result = await analyze({ ...fakeSettings(fake.url), cx: CX });
    assert.equal(result.google, null);
    assert.deepEqual(result.errors, { google: 'not configured: engines.search_engine.api_key' });
    assert.equal(fake.requests.length, 0);
    assertNoSecret(result);
  });

  test('missing cx: "not configured: cx", nothing asked', async () => {
    fake.reset();
    const result = await analyze({ ...fakeSettings(fake.url), cx: '', api_key: KEY });
    assert.deepEqual(result.errors, { google: 'not configured: engines.search_engine.cx' });
    assert.equal(fake.requests.length, 0);
    assertNoSecret(result);
  });

  test('the fake\'s own settings plus a key: a result, no credential anywhere in it', async () => {
    fake.reset();
    const settings = fakeSettings(fake.url);
    const result = await analyze({ ...settings, api_key: KEY }, 'evil.example');
    const hits = result.google as SearchEngineResult;
    assert.equal(result.errors, undefined);
    assert.equal(hits.total, 1240);
    assert.equal(hits.results[0]!.title, 'Threat report – evil.example');
    assert.equal(fake.requests[0]!.query.get('key'), KEY);
    assert.equal(fake.requests[0]!.query.get('cx'), settings.cx);
    assertNoSecret(result);
    assert.ok(!JSON.stringify(result).includes(String(settings.cx)));
  });

  test('an upstream failure is reported in errors, without the credentials', async () => {
    const errorFake = await startFakeHttp({ 'GET /denied': (req) => googleError(403, 'PERMISSION_DENIED', `The key ${req.query.get('key')} is blocked.`, 'API_KEY_SERVICE_BLOCKED', 'forbidden') });
    try {
      const result = await analyze({ base_url: `${errorFake.url}/denied`, api_key: KEY, cx: CX, retries: 0 });
      assert.equal(result.google, null);
      assert.deepEqual(result.errors, { google: 'HTTP 403 Forbidden: The key *** is blocked. (API_KEY_SERVICE_BLOCKED)' });
      assertNoSecret(result);
    } finally {
      await errorFake.close();
    }
  });
});
