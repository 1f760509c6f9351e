import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Keyv from 'keyv';
import * as v from 'valibot';
import engine, {
  CONSENT_COOKIES, hitUrl, LYNX_USER_AGENT, parseSearchPage, scrapeSearchLookup, searchEngineDetails, searchEngineLookup, searchEngineSummary,
  type ScrapedSearchResult, type SearchEngineResult,
} from '../../engines/google.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { HttpTransport } from '../../src/http/client.js';
import { cacheKey, settingsFingerprint } from '../../src/runner/call.js';
import { EngineRunner } from '../../src/runner/runner.js';
import { resolveSettings } from '../../src/engine/context.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { cseResponse, fakeRoutes, fakeSettings } from '../fakes/google.js';
import {
  CONSENT_PAGE, fakeScrapeRoutes, fakeScrapeSettings, firstPageHits, noResultsPage, pagesByStart, redirectHref, searchPage, sorryPage, type FakeHit,
} from '../fakes/google_search_page.js';
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
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION']);
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
      'GET /wrong-shape': reply.json({ ...PAGE, items: [{ title: { text: 'not a title' } }] }),
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
    await fails(harness('wrong-shape', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at items\.0\.title: /);
  });

  test('a hanging upstream: timeout', async () => {
    await fails(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
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

describe('search_engine: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];
  const answers: Record<string, unknown> = {
    // engines.md 5.9's "no hits": items absent, the estimate "0"; here not even the estimate.
    nothing: {},
    'null-parts': { kind: null, searchInformation: null, items: null },
    'empty-items': { searchInformation: { totalResults: '' }, items: {} },
    // One item where the list belongs, its parts only partly there; no estimate.
    single: { items: { title: 'Threat report', link: 'https://blog.example/r' } },
    // Null items, items with null or "" parts; an estimate sent as a number.
    degenerate: {
      searchInformation: { totalResults: 12 },
      items: [null, { title: null, link: 'https://a.example/', snippet: '' }, { snippet: 'only a snippet' }],
    },
  };
  const lookup = async (name: string) => {
    const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${name}`, api_key: KEY, cx: CX, retries: 0 } });
    harnesses.push(h);
    return h.run('example.com', 'FQDN');
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}`, reply.json(body)])));
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
  });

  test('no items, null or {} items, no estimate: no results, total 0', async () => {
    for (const name of ['nothing', 'null-parts', 'empty-items']) assert.deepEqual(await lookup(name), { results: [], total: 0 }, name);
  });

  test('one item in place of a list; no estimate: the hits on the page', async () => {
    assert.deepEqual(await lookup('single'), { results: [{ title: 'Threat report', description: '', url: 'https://blog.example/r' }], total: 1 });
  });

  test('null items dropped; null or "" parts are \'\'; an estimate sent as a number', async () => {
    assert.deepEqual(await lookup('degenerate'), {
      results: [
        { title: '', description: '', url: 'https://a.example/' },
        { title: '', description: 'only a snippet', url: '' },
      ],
      total: 12,
    });
  });

  test('an answer that is not an object: a clean error', async () => {
    fake.route('GET /list', reply.json([]));
    await rejectsWith(lookup('list'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
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
    assert.deepEqual(result.errors, { google: 'not configured: engines.search_engine.api_key or OAS_GOOGLE_API_KEY' });
    assert.equal(fake.requests.length, 0);
    assertNoSecret(result);
  });

  test('missing cx: "not configured: cx", nothing asked', async () => {
    fake.reset();
    const result = await analyze({ ...fakeSettings(fake.url), cx: '', api_key: KEY });
    assert.deepEqual(result.errors, { google: 'not configured: engines.search_engine.cx or OAS_GOOGLE_CX' });
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
      assert.deepEqual(result.errors, { google: 'HTTP 403 Forbidden: The key *** is blocked. (API_KEY_SERVICE_BLOCKED) (key refused: check engines.search_engine.api_key or OAS_GOOGLE_API_KEY, engines.search_engine.cx or OAS_GOOGLE_CX)' });
      assertNoSecret(result);
    } finally {
      await errorFake.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The older catalog: Google's results page scraped without a key (engines.md 6.2.a).
// ---------------------------------------------------------------------------------------------

/** The definition as the older catalog resolves it. */
const older = new Catalog([engine as EngineDefinition], 'older').find('search_engine')!;

/** The hits engines.md 6.2.a's parsing gives for the fake's first page, field by field. */
function firstPageResults(term: string) {
  return [
    {
      title: `Threat report – ${term}`,
      description: `Oct 12, 2026 — … ${term} was used as C2 by the campaign; the infrastructure rotated weekly …`,
      url: 'https://blog.example/2026/10/threat-report',
    },
    {
      title: 'Tom & Jerry\'s "IOC" list <October>',
      description: `Indicators: ${term}, 203.0.113.7 & 44d88612fea8a8f36de82e1278abb02f …`,
      url: 'https://cert.example/iocs?year=2026&month=10#list',
    },
    { title: `${term} - community notes`, description: '', url: 'https://forum.example/t/notes/8841' },
  ];
}

describe('search_engine, older catalog: declaration', () => {
  test('no key, scraping tags, no e-mail, its own defaults, cached apart', () => {
    assert.equal(older.id, 'search_engine');
    assert.equal(older.service, 'google');
    assert.equal(older.label, 'Google');
    assert.match(older.description, /scrap/i);
    assert.match(older.description, /without an? (API )?key/i);
    assert.deepEqual(older.tags, ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping']);
    assert.deepEqual(older.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION']);
    assert.deepEqual(older.credentials, []);
    assert.deepEqual(older.defaults, { timeout_ms: 15_000, search_url: 'https://www.google.com', user_agent: LYNX_USER_AGENT, concurrency: 2 });
    assert.equal(older.cacheScope, 'older');
    assert.equal(older.run, scrapeSearchLookup);
    assert.equal(older.summary, searchEngineSummary);
    assert.equal(older.details, searchEngineDetails);
    assert.equal(new Catalog([engine as EngineDefinition], 'older').isDefault(older), false);
  });

  test('the main catalog keeps the Custom Search engine', () => {
    const main = new Catalog([engine as EngineDefinition]).find('google')!;
    assert.equal(main.run, searchEngineLookup);
    assert.deepEqual(main.tags, ['domain', 'URL', 'IP', 'hash']);
    assert.deepEqual(main.credentials.map((c) => c.setting), ['api_key', 'cx']);
    assert.equal(main.defaults.base_url, 'https://www.googleapis.com/customsearch/v1');
    assert.equal(main.cacheScope, undefined);
    assert.notEqual(cacheKey(main, { value: 'Example.com', type: 'FQDN' }), cacheKey(older, { value: 'Example.com', type: 'FQDN' }));
  });

  test('settings: search_url must be a URL', () => {
    const schema = older.settingsSchema!;
    assert.ok(v.safeParse(schema, { search_url: 'https://www.google.de', timeout_ms: 5000 }).success);
    assert.ok(!v.safeParse(schema, { search_url: 'www.google.de' }).success);
    assert.ok(!v.safeParse(schema, { user_agent: '' }).success);
    // The file is checked with the main declaration: it validates search_url too.
    assert.ok(!v.safeParse(engine.settingsSchema!, { search_url: 'nope' }).success);
  });

  test('summary and card of scraped hits: no total, hits linked (http(s) only)', () => {
    const result: ScrapedSearchResult = { results: firstPageResults('evil.example') };
    assert.equal(searchEngineSummary(result), '3 hits · Threat report – evil.example');
    assert.equal(searchEngineSummary({ results: [result.results[0]!] }), '1 hit · Threat report – evil.example');
    assert.equal(searchEngineSummary({ results: [] }), 'no results');
    assert.deepEqual(searchEngineDetails(result, 'evil.example'), [
      { label: 'Result 1', value: 'Threat report – evil.example', href: 'https://blog.example/2026/10/threat-report' },
      { label: 'Result 2', value: 'Tom & Jerry\'s "IOC" list <October>', href: 'https://cert.example/iocs?year=2026&month=10#list' },
      { label: 'Result 3', value: 'evil.example - community notes', href: 'https://forum.example/t/notes/8841' },
      { label: 'Search on Google', value: 'https://www.google.com/search?q=%22evil.example%22', href: 'https://www.google.com/search?q=%22evil.example%22' },
    ]);
    const odd = searchEngineDetails({ results: [{ title: 'x', description: '', url: 'javascript:alert(1)' }] }, 'a.example');
    assert.deepEqual(odd[0], { label: 'Result 1', value: 'x' });
    assert.deepEqual(searchEngineDetails({ results: [] }, 'a.example').map((f) => f.label), ['Search on Google']);
  });

  test('hit links: /url?q= unwrapped, cut at the first &, decoded; only http(s)', () => {
    assert.equal(hitUrl('/url?q=https://blog.example/report&sa=U&ved=2ahUKE'), 'https://blog.example/report');
    assert.equal(hitUrl(redirectHref('https://a.example/p?x=1&y=%20#z')), 'https://a.example/p?x=1&y=%20#z');
    assert.equal(hitUrl('https://www.google.com/url?q=https%3A%2F%2Fb.example%2F&sa=U'), 'https://b.example/');
    assert.equal(hitUrl('https://direct.example/page?a=1&b=2'), 'https://direct.example/page?a=1&b=2');
    assert.equal(hitUrl('/url?q=javascript:alert(1)&sa=U'), undefined);
    assert.equal(hitUrl('/url?q=%E0%A4%A&sa=U'), undefined);
    assert.equal(hitUrl('/search?q=x&tbm=isch'), undefined);
    assert.equal(hitUrl('/aclk?sa=l&ai=x'), undefined);
    assert.equal(hitUrl(undefined), undefined);
  });
});

describe('search_engine, older catalog, against a loopback Google', () => {
  let fake: FakeHttpServer;
  const harnesses: EngineHarness[] = [];

  /** The older definition with search_url = `<fake>/<prefix>`, no key. */
  function harness(prefix: string, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(older, { settings: { search_url: `${fake.url}/${prefix}`, retries: 0, ...settings } });
    harnesses.push(h);
    return h;
  }

  const run = async (h: EngineHarness, value: string, type: Parameters<EngineHarness['run']>[1] = 'FQDN') => (await h.run(value, type)) as ScrapedSearchResult;

  const termOf = (req: FakeRequest) => (req.query.get('q') ?? '').replace(/^"|"$/g, '');
  const manyHits = (term: string, n: number, from = 0): FakeHit[] =>
    Array.from({ length: n }, (_, i) => ({ url: `https://site${from + i}.example/${term}`, title: `Page ${from + i}`, description: `about ${term}` }));

  before(async () => {
    fake = await startFakeHttp({
      ...fakeScrapeRoutes(),
      'GET /scrape/search': pagesByStart,
      // Google repeats the same hits on the next page: nothing new, so no third page.
      'GET /repeat/search': (req) => reply.html(searchPage(req.query.get('q')!, firstPageHits(termOf(req)), { ad: true, related: true })),
      'GET /many/search': (req) => reply.html(searchPage(req.query.get('q')!, manyHits(termOf(req), 8))),
      // One new hit per page: the page cap ends the search.
      'GET /trickle/search': (req) => reply.html(searchPage(req.query.get('q')!, manyHits(termOf(req), 1, Number(req.query.get('start'))))),
      'GET /none/search': (req) => reply.html(noResultsPage(req.query.get('q')!)),
      'GET /sorry/search': (req) => reply.html(sorryPage(req.query.get('q')!), 429),
      'GET /blocked/search': (req) => ({ status: 302, headers: { location: `/sorry/index?continue=${encodeURIComponent(`https://www.google.com/search?q=${req.query.get('q')}`)}` }, body: '' }),
      'GET /sorry/index': (req) => reply.html(sorryPage(req.query.get('continue') ?? ''), 429),
      'GET /sorry200/search': (req) => reply.html(sorryPage(req.query.get('q')!)),
      'GET /consent/search': { status: 302, headers: { location: '/consent/ml?continue=https://www.google.com/search&gl=US&hl=en&pc=s&src=1' }, body: '' },
      'GET /consent/ml': reply.html(CONSENT_PAGE),
      'GET /status500/search': reply.html('<html><body><h1>Server Error</h1></body></html>', 500),
      'GET /json/search': reply.json({ error: 'no' }),
      'GET /bare/search': reply.html('<html><body></body></html>'),
      'GET /empty/search': { status: 200, headers: {}, body: '' },
      'GET /minimal/search': { status: 200, headers: {}, body: '<div class="ezO2md"><a href="/url?q=https://blog.example/r&amp;sa=U"><span class="CVA68e">Report</span></a></div>' },
      'GET /changed/search': reply.html('<!DOCTYPE html><html><head><title>Google</title></head><body><div class="new-layout"><p>Results moved.</p></div></body></html>'),
      'GET /skip/search': (req) => reply.html(searchPage(req.query.get('q')!, [
        { url: 'https://x.example/', href: '/url?q=javascript:alert(document.cookie)&sa=U&ved=1', title: 'Click me' },
        { url: 'https://x.example/', href: '/url?q=%E0%A4%A&sa=U&ved=2', title: 'Broken escape' },
        { url: 'https://untitled.example/', title: '' },
        { url: 'https://good.example/a b', title: 'Good <b>one</b>', titleHtml: 'Good <b>one</b><script>x()</script>', descriptionHtml: 'Line one<br>\n   line&nbsp;two' },
      ], { ad: true, images: true, related: true })),
      'GET /page2-fails/search': (req) => (req.query.get('start') === '0'
        ? reply.html(searchPage(req.query.get('q')!, manyHits(termOf(req), 2)))
        : reply.html(sorryPage(req.query.get('q')!), 429)),
      'GET /flaky/search': sequence({ status: 429, headers: { 'retry-after': '0' }, body: '' }, pagesByStart),
      'GET /hang/search': reply.hang(),
    });
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await fake.close();
  });

  test('the request: GET /search, the exact phrase and the fixed parameters, Lynx, */*, consent cookies', async () => {
    fake.reset();
    await run(harness('google/www', fakeScrapeSettings(fake.url)), 'https://evil.example/login?x=1&y=2', 'URL');
    const [first, second, ...more] = fake.hits('GET /google/www/search');
    assert.equal(more.length, 0);
    for (const [req, start] of [[first!, '0'], [second!, '10']] as const) {
      assert.equal(req.path, '/google/www/search');
      assert.deepEqual([...req.query.entries()], [
        ['q', '"https://evil.example/login?x=1&y=2"'], ['num', '7'], ['hl', 'en'], ['start', start], ['safe', 'active'], ['gl', 'US'],
      ]);
      assert.equal(req.headers['user-agent'], LYNX_USER_AGENT);
      assert.match(req.headers['user-agent']!, /^Lynx\/\d+\.\d+\.\d+ libwww-FM\//);
      assert.equal(req.headers.accept, '*/*');
      assert.equal(req.headers.cookie, 'CONSENT=PENDING+987; SOCS=CAESHAgBEhIaAB');
      assert.equal(req.headers.cookie, CONSENT_COOKIES);
    }
  });

  test('a search_url with a trailing slash, and a user_agent setting', async () => {
    fake.reset();
    await run(harness('many/', { user_agent: 'Lynx/2.8.9rel.1 libwww-FM/2.14' }), '8.8.8.8', 'IPv4');
    const [req] = fake.hits('GET /many/search');
    assert.equal(req!.path, '/many/search');
    assert.equal(req!.query.get('q'), '"8.8.8.8"');
    assert.equal(req!.headers['user-agent'], 'Lynx/2.8.9rel.1 libwww-FM/2.14');
  });

  test('parsing: every div.ezO2md with a link is a hit; entities decoded; no description is ""; ad and related blocks skipped', async () => {
    const result = await run(harness('repeat'), 'evil.example');
    assert.deepEqual(result, { results: firstPageResults('evil.example') });
    assert.deepEqual(Object.keys(result), ['results']);
    assert.equal(older.summary(result), '3 hits · Threat report – evil.example');
  });

  test('pagination: fewer than 5 hits -> next page (start=10); the result is capped at 5', async () => {
    fake.reset();
    const result = await run(harness('scrape'), 'evil.example');
    assert.equal(result.results.length, 5);
    assert.deepEqual(result.results.slice(0, 3), firstPageResults('evil.example'));
    assert.deepEqual(result.results.slice(3).map((h) => h.url), ['https://sandbox.example/report/9f2c', 'https://pastebin.example/raw/Qx8kP2']);
    assert.equal(result.results[4]!.description, 'evil.example 203.0.113.9 …');
    assert.deepEqual(fake.hits('GET /scrape/search').map((r) => r.query.get('start')), ['0', '10']);
  });

  test('a page bringing nothing new ends the search', async () => {
    fake.reset();
    const result = await run(harness('repeat'), 'evil.example');
    assert.equal(result.results.length, 3);
    assert.deepEqual(fake.hits('GET /repeat/search').map((r) => r.query.get('start')), ['0', '10']);
  });

  test('a full first page: 5 hits, one request', async () => {
    fake.reset();
    const result = await run(harness('many'), 'a'.repeat(64), 'SHA256');
    assert.deepEqual(result.results.map((h) => h.title), ['Page 0', 'Page 1', 'Page 2', 'Page 3', 'Page 4']);
    assert.equal(fake.hits('GET /many/search').length, 1);
  });

  test('at most three pages', async () => {
    fake.reset();
    const result = await run(harness('trickle'), 'evil.example');
    assert.deepEqual(result.results.map((h) => h.title), ['Page 0', 'Page 10', 'Page 20']);
    assert.deepEqual(fake.hits('GET /trickle/search').map((r) => r.query.get('start')), ['0', '10', '20']);
  });

  test('no hits: {results: []}, no total, no second page', async () => {
    fake.reset();
    const result = await run(harness('none'), 'nothing-matches.example');
    assert.deepEqual(result, { results: [] });
    assert.equal(older.summary(result), 'no results');
    assert.equal(fake.hits('GET /none/search').length, 1);
  });

  test('blocks without a usable link or title are skipped, not fatal; text stays text', async () => {
    const result = await run(harness('skip'), 'evil.example');
    assert.deepEqual(result, { results: [{ title: 'Good one', description: 'Line one line two', url: 'https://good.example/a b' }] });
  });

  test('429 (Google\'s "unusual traffic" block): an error, not null', async () => {
    await rejectsWith(harness('sorry').run('evil.example', 'FQDN'), /^HTTP 429 Too Many Requests$/);
    // The usual way: a redirect to /sorry/index, which answers 429.
    fake.reset();
    await rejectsWith(harness('blocked').run('evil.example', 'FQDN'), /^HTTP 429 Too Many Requests$/);
    assert.equal(fake.hits('GET /sorry/index').length, 1);
  });

  test('a captcha page served with 200: an error', async () => {
    await rejectsWith(harness('sorry200').run('evil.example', 'FQDN'), /^Google answered with a captcha \("unusual traffic"\) page instead of search results$/);
  });

  test('the consent page (after a redirect): an error', async () => {
    await rejectsWith(harness('consent').run('evil.example', 'FQDN'), /^Google answered with its consent page instead of search results$/);
  });

  test('HTTP 500, a non-HTML answer, a hanging upstream: errors', async () => {
    await rejectsWith(harness('status500').run('evil.example', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    await rejectsWith(harness('json').run('evil.example', 'FQDN'), /^Google answered with application\/json, not a results page$/);
    await rejectsWith(harness('hang', { timeout_ms: 300 }).run('evil.example', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a page without hits or search box is no hit, as the reference (issue 26: the old refusal was wrong)', async () => {
    for (const prefix of ['changed', 'bare', 'empty']) {
      assert.deepEqual(await run(harness(prefix), 'evil.example'), { results: [] }, prefix);
    }
  });

  test('a minimal hit block: a link holding its title, nothing else (no description, no content type)', async () => {
    assert.deepEqual(await run(harness('minimal'), 'evil.example'), { results: [{ title: 'Report', description: '', url: 'https://blog.example/r' }] });
  });

  test('429 then the page: retried by the shared client', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 1 }), 'evil.example');
    assert.equal(result.results.length, 5);
    assert.equal(fake.hits('GET /flaky/search').length, 3);
  });

  test('a refused follow-up page keeps the first page\'s hits (and is not retried)', async () => {
    fake.reset();
    const result = await run(harness('page2-fails', { retries: 2 }), 'evil.example');
    assert.deepEqual(result.results.map((h) => h.title), ['Page 0', 'Page 1']);
    assert.deepEqual(fake.hits('GET /page2-fails/search').map((r) => r.query.get('start')), ['0', '10']);
  });

  test('parseSearchPage on its own: the fake\'s first page', () => {
    assert.deepEqual(parseSearchPage(searchPage('"x.example"', firstPageHits('x.example'), { ad: true, images: true, related: true })), firstPageResults('x.example'));
    assert.deepEqual(parseSearchPage(noResultsPage('"x.example"')), []);
    assert.throws(() => parseSearchPage(CONSENT_PAGE), /consent page/);
  });
});

describe('search_engine, older catalog, through the runner', () => {
  let fake: FakeHttpServer;

  before(async () => {
    fake = await startFakeHttp({ ...fakeScrapeRoutes(), ...fakeRoutes() });
  });
  after(async () => {
    await fake.close();
  });

  test('no key configured: the older variant works, the main one is "not configured" and asks nothing', async () => {
    // The same configuration for both: the cx and both URLs, no API key.
    const settings = { search_engine: { ...fakeSettings(fake.url), ...fakeScrapeSettings(fake.url) } };
    fake.reset();
    const olderRunner = runnerHarness([older], { settings });
    try {
      const [result] = await olderRunner.analyze([{ value: 'evil.example', type: 'FQDN' }], ['google']);
      assert.equal(result!.errors, undefined);
      const hits = result!.google as ScrapedSearchResult;
      assert.deepEqual(Object.keys(hits), ['results']);
      assert.equal(hits.results.length, 5);
      assert.deepEqual(hits.results[0], firstPageResults('evil.example')[0]);
      assert.equal(fake.hits('GET /google/www/search').length, 2);
    } finally {
      await olderRunner.close();
    }

    fake.reset();
    const mainRunner = runnerHarness([engine], { settings });
    try {
      const [result] = await mainRunner.analyze([{ value: 'evil.example', type: 'FQDN' }], ['google']);
      assert.equal(result!.google, null);
      assert.deepEqual(result!.errors, { google: 'not configured: engines.search_engine.api_key or OAS_GOOGLE_API_KEY' });
      assert.equal(fake.requests.length, 0);
    } finally {
      await mainRunner.close();
    }
  });

  test('an e-mail address is not searched by the older variant', async () => {
    fake.reset();
    const runner = runnerHarness([older], { settings: { search_engine: fakeScrapeSettings(fake.url) } });
    try {
      const [result] = await runner.analyze([{ value: 'a@evil.example', type: 'Email' }], ['search_engine']);
      assert.equal(result!.search_engine, null);
      assert.equal(result!.errors, undefined);
      assert.equal(fake.requests.length, 0);
    } finally {
      await runner.close();
    }
  });

  test('a block is an errors entry under the name used', async () => {
    const blocked = await startFakeHttp({ 'GET /search': (req) => reply.html(sorryPage(req.query.get('q')!), 429) });
    const runner = runnerHarness([older], { settings: { search_engine: { search_url: blocked.url, retries: 0 } } });
    try {
      const [result] = await runner.analyze([{ value: 'evil.example', type: 'FQDN' }], ['google']);
      assert.equal(result!.google, null);
      assert.deepEqual(result!.errors, { google: 'HTTP 429 Too Many Requests' });
    } finally {
      await runner.close();
      await blocked.close();
    }
  });

  test('one shared cache: the main and older results do not collide', async () => {
    const cache = new Keyv();
    const transport = new HttpTransport();
    const settings = { search_engine: { ...fakeSettings(fake.url), ...fakeScrapeSettings(fake.url), api_key: KEY } };
    const runnerFor = (definition: EngineDefinition) => new EngineRunner({
      catalog: [definition],
      services: { transport, dnsServers: [], dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(new Keyv(), id) },
      cache,
      cacheTtlSeconds: 3600,
      concurrency: 4,
      engineSettings: settings,
    });
    const observable = { value: 'evil.example', type: 'FQDN' } as const;
    const main = new Catalog([engine as EngineDefinition]).find('google')!;
    try {
      fake.reset();
      const [fromMain] = await runnerFor(main).analyze([observable], [{ key: 'google', engine: main }]);
      assert.equal((fromMain!.google as SearchEngineResult).total, 1240);
      assert.equal(fake.hits('GET /google/customsearch/v1').length, 1);

      // Same engine id, same observable, same cache: the older variant still asks Google's page.
      const [fromOlder] = await runnerFor(older).analyze([observable], [{ key: 'google', engine: older }]);
      const scraped = fromOlder!.google as ScrapedSearchResult;
      assert.equal('total' in scraped, false);
      assert.equal(scraped.results.length, 5);
      assert.equal(fake.hits('GET /google/www/search').length, 2);

      // Each is served from its own cache entry now.
      fake.reset();
      const [againOlder] = await runnerFor(older).analyze([observable], [{ key: 'google', engine: older }]);
      const [againMain] = await runnerFor(main).analyze([observable], [{ key: 'google', engine: main }]);
      assert.deepEqual(againOlder!.google, scraped);
      assert.deepEqual(againMain!.google, fromMain!.google);
      assert.equal(fake.requests.length, 0);
      // The key: engine, variant (when it changes the engine), settings fingerprint, observable.
      const keyOf = (definition: EngineDefinition) =>
        cacheKey(definition, observable, settingsFingerprint(definition, resolveSettings(definition, settings.search_engine), []));
      assert.match(keyOf(older), /^search_engine@older#[\w-]+:FQDN:evil\.example$/);
      assert.match(keyOf(main), /^search_engine#[\w-]+:FQDN:evil\.example$/);
      assert.ok(await cache.has(keyOf(older)));
      assert.ok(await cache.has(keyOf(main)));
      assertNoSecret([fromMain, fromOlder]);
    } finally {
      await transport.close();
    }
  });
});
