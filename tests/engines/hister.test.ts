import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  addedDay, HISTER_LIMIT, HISTER_ORIGIN, histerDetails, histerLookup, histerSummary, quotePath, searchQuery, type HisterResult,
} from '../../engines/hister.js';
import mispFeedback from '../../engines/misp_feedback.js';
import { OBSERVABLE_TYPES, type ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { DOCUMENTS, fakeRoutes, fakeSettings, KNOWN, PRIVATE_IP, search, UNKNOWN } from '../fakes/hister.js';
import { fakeRoutes as mfbRoutes, fakeSettings as mfbSettings, KNOWN as MFB_KNOWN } from '../fakes/misp_feedback.js';
import { proxiedSuite } from '../fakes/proxy.js';
import { harnessOnFake } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { suiteRunners } from '../helpers/runner.js';

const TOKEN = 'hister-4cc3ss-T0k3n-9e8d7c6b5a';
const watch = new KeyWatch(TOKEN);

/** engines.md 9.4's example for example.com (two documents with the same url, the first kept). */
const EXAMPLE_RESULTS = [
  { url: 'https://pastebin.com/AbCdEf12', title: 'Paste mentioning example.com', added: '2023-11-14' },
  { url: 'https://github.com/someone/iocs/blob/main/list.txt', title: 'iocs/list.txt at main', added: '2024-03-09' },
];

/** What the fake's index holds for each known observable. */
const FOUND: Record<ObservableType, { url: string; title: string; added: string }[]> = {
  IPv4: [{ url: 'https://www.abuseipdb.com/check/185.220.101.4', title: 'AbuseIPDB » 185.220.101.4', added: '2024-04-24' }],
  IPv6: [{ url: 'https://bgp.he.net/ip/2001:db8:85a3::8a2e:370:7334', title: '2001:db8:85a3::8a2e:370:7334 - bgp.he.net', added: '2024-04-01' }],
  FQDN: EXAMPLE_RESULTS,
  URL: [{ url: 'https://urlscan.io/result/0190aa1e-5b6f-7c3d-8e9f-0a1b2c3d4e5f/', title: 'urlscan.io - evil.example.net', added: '2024-06-21' }],
  MD5: [{ url: `https://www.virustotal.com/gui/file/${KNOWN.SHA256}`, title: 'VirusTotal - eicar.com', added: '2024-01-11' }],
  SHA1: [{ url: `https://www.virustotal.com/gui/file/${KNOWN.SHA256}`, title: 'VirusTotal - eicar.com', added: '2024-01-11' }],
  SHA256: [{ url: `https://www.virustotal.com/gui/file/${KNOWN.SHA256}`, title: 'VirusTotal - eicar.com', added: '2024-01-11' }],
  Email: [{ url: 'https://mail.example.org/thread/8812', title: 'Fwd: Invoice overdue', added: '2024-05-18' }],
  CHROME_EXTENSION: [{ url: `https://chromewebstore.google.com/detail/ublock-origin/${KNOWN.CHROME_EXTENSION}`, title: 'uBlock Origin - Chrome Web Store', added: '2023-11-26' }],
};

describe('hister declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'hister');
    assert.equal(engine.service, 'hister');
    assert.equal(engine.label, 'Hister');
    assert.deepEqual(engine.catalogs, [], 'beyond the spec: in no variant');
    assert.ok(!engine.tags.includes('default'));
    assert.deepEqual(engine.tags, ['domain', 'URL', 'email', 'IP', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION']);
    assert.deepEqual([...engine.types].sort(), [...OBSERVABLE_TYPES].sort(), 'every observable type');
    assert.equal(engine.acceptsPrivateIp, true);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Server URL', env: ['HISTER_BASE_URL'], secret: false },
      { setting: 'token', label: 'Access token', env: ['HISTER_TOKEN'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000 });
    assert.equal(engine.run, histerLookup);
    assert.equal(engine.summary, histerSummary);
    assert.equal(engine.details, histerDetails);
  });

  test('the query JSON, spaced as Python\'s json.dumps, non-ASCII escaped', () => {
    assert.equal(searchQuery('example.com'), '{"text": "example.com", "limit": 10, "fields": ["url", "title", "text"]}');
    assert.equal(searchQuery('bücher.de'), '{"text": "b\\u00fccher.de", "limit": 10, "fields": ["url", "title", "text"]}');
    assert.equal(searchQuery('a"b\\c'), '{"text": "a\\"b\\\\c", "limit": 10, "fields": ["url", "title", "text"]}');
    assert.equal(HISTER_LIMIT, 10);
    assert.equal(HISTER_ORIGIN, 'hister://');
  });

  test('the link\'s encoding is Python\'s quote: "/" kept, everything else reserved encoded', () => {
    assert.equal(quotePath('example.com'), 'example.com');
    assert.equal(quotePath('https://evil.example.net/login.php?id=1'), 'https%3A//evil.example.net/login.php%3Fid%3D1');
    assert.equal(quotePath('a b!*\'()~_.-@'), 'a%20b%21%2A%27%28%29~_.-%40');
    assert.equal(quotePath('2001:db8::1'), '2001%3Adb8%3A%3A1');
  });

  test('added: the UTC day of Unix seconds, "" when unknown', () => {
    assert.equal(addedDay(1700000000), '2023-11-14');
    assert.equal(addedDay('1710000000'), '2024-03-09');
    assert.equal(addedDay(0), '');
    assert.equal(addedDay(undefined), '');
    assert.equal(addedDay(null), '');
    assert.equal(addedDay('yesterday'), '');
    assert.equal(addedDay(1e20), '');
    assert.equal(addedDay({}), '');
  });

  test('summary and details', () => {
    const result: HisterResult = { total: 3, results: EXAMPLE_RESULTS, link: 'https://hister.example.com/?q=example.com' };
    assert.equal(histerSummary(result), '3 hits in your index · 2 pages: pastebin.com, github.com');
    assert.equal(histerSummary({ total: 1, results: [EXAMPLE_RESULTS[0]!], link: result.link }), '1 hit in your index · 1 page: pastebin.com');
    assert.equal(histerSummary({ total: 0, results: [], link: result.link }), 'not in your index');
    assert.deepEqual(histerDetails(result), [
      { label: 'Hits', value: '3' },
      { label: 'Page 1', value: 'Paste mentioning example.com · 2023-11-14', href: 'https://pastebin.com/AbCdEf12' },
      { label: 'Page 2', value: 'iocs/list.txt at main · 2024-03-09', href: 'https://github.com/someone/iocs/blob/main/list.txt' },
      { label: 'Open in Hister', value: 'https://hister.example.com/?q=example.com', href: 'https://hister.example.com/?q=example.com' },
    ]);
    assert.deepEqual(histerDetails({ total: 1, results: [{ url: 'https://a.example/x', title: '', added: '' }], link: result.link })[1],
      { label: 'Page 1', value: 'https://a.example/x', href: 'https://a.example/x' });
  });
});

describe('hister against a loopback Hister', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, TOKEN, { setting: 'token', watch });
  const run = async (prefix: string, value: string, type: ObservableType, settings: Record<string, unknown> = {}) =>
    (await harness(prefix, settings).run(value, type)) as HisterResult | null;
  const base = (prefix: string) => `${fake.url}/${prefix}`;
  const answer = (documents: unknown, total: unknown = 42) => reply.json({
    total, query: { text: 'x', limit: 10 }, documents, history: [], search_duration: '0.91ms', query_suggestion: '', page_key: '',
  });

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ token: TOKEN }),
      ...fakeRoutes({ token: TOKEN, prefix: '/deep/path/hister' }),
      'GET /odd/search': answer([
        { url: 'https://a.example/1', title: 'First', added: 1717199000 },
        { url: '', title: 'No url', added: 1717199000 },
        { title: 'Url missing', added: 1717199000 },
        'not a document',
        null,
        ['https://b.example/list'],
        { url: 'https://a.example/1', title: 'Same url again', added: 1745000000 },
        { url: 'https://a.example/2', title: null, added: 'last tuesday' },
        { url: 'https://a.example/3', added: 0 },
        { url: 'https://a.example/4', title: 'String time', added: '1717200600' },
        { url: 'https://a.example/5', title: 'Far future', added: 1e20 },
      ]),
      'GET /midnight/search': answer([
        // 2024-05-31T23:43:20Z and 2024-06-01T00:10:00Z: local time in Kiritimati (UTC+14) or
        // Honolulu (UTC-10) would move one of them to another day.
        { url: 'https://late.example/', title: 'Late', added: 1717199000 },
        { url: 'https://early.example/', title: 'Early', added: 1717200600 },
      ], 2),
      'GET /documents-null/search': answer(null, 0),
      'GET /documents-missing/search': reply.json({ search_duration: '0.2ms' }),
      'GET /list/search': reply.json([{ url: 'https://a.example/1' }]),
      'GET /string/search': reply.json('ok'),
      'GET /total-text/search': answer([], 'many'),
      'GET /foreign-origin/search': search({ token: TOKEN }),
      'GET /echo/search': (req) => reply.json({ error: `invalid token in ${req.headers.authorization}` }, 403),
      'GET /status500/search': reply.status(500),
      'GET /flaky/search': sequence(reply.tooMany(1), search({ token: TOKEN })),
      'GET /throttled/search': reply.tooMany(0),
      'GET /malformed/search': reply.malformed(),
      'GET /login-page/search': reply.html('<html><body>Hister login</body></html>'),
      'GET /hang/search': reply.hang(),
    });
  });
  after(() => fake.close());

  test('request: GET {base_url}/search?query=<JSON>, Bearer token, Origin hister://', async () => {
    fake.reset();
    await run('hister', 'example.com', 'FQDN');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, '/hister/search');
    assert.deepEqual([...req!.query.keys()], ['query']);
    assert.equal(req!.query.get('query'), '{"text": "example.com", "limit": 10, "fields": ["url", "title", "text"]}');
    assert.equal(req!.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req!.headers.origin, 'hister://');
    assert.equal(req!.headers['x-access-token'], undefined);
    assert.equal(req!.body, '');
  });

  test('engines.md 9.4\'s example: total 3, the duplicate url dropped, UTC days, the link', async () => {
    assert.deepEqual(await run('hister', 'example.com', 'FQDN'), {
      total: 3,
      results: EXAMPLE_RESULTS,
      link: `${base('hister')}/?q=example.com`,
    });
  });

  test('found, every observable type (the value searched as written)', async () => {
    for (const type of OBSERVABLE_TYPES) {
      const value = KNOWN[type];
      assert.deepEqual(await run('hister', value, type), { total: FOUND[type].length === 2 ? 3 : 1, results: FOUND[type], link: `${base('hister')}/?q=${quotePath(value)}` }, type);
    }
  });

  test('the links of a URL, an e-mail address and an IPv6 address', async () => {
    assert.equal((await run('hister', KNOWN.URL, 'URL'))?.link, `${base('hister')}/?q=https%3A//evil.example.net/login.php%3Fid%3D1`);
    assert.equal((await run('hister', KNOWN.Email, 'Email'))?.link, `${base('hister')}/?q=billing%40phish-payments.example`);
    assert.equal((await run('hister', KNOWN.IPv6, 'IPv6'))?.link, `${base('hister')}/?q=2001%3Adb8%3A85a3%3A%3A8a2e%3A370%3A7334`);
  });

  test('a private IP is searched too', async () => {
    assert.deepEqual(await run('hister', PRIVATE_IP, 'IPv4'), {
      total: 1,
      results: [{ url: 'https://wiki.corp.example/infra/backup-servers', title: 'Backup servers - Infra wiki', added: '2024-06-10' }],
      link: `${base('hister')}/?q=10.20.30.40`,
    });
  });

  test('not found, every observable type: total 0, no results, the link', async () => {
    for (const type of OBSERVABLE_TYPES) {
      const value = UNKNOWN[type];
      assert.deepEqual(await run('hister', value, type), { total: 0, results: [], link: `${base('hister')}/?q=${quotePath(value)}` }, type);
    }
  });

  test('odd documents: no url or not an object skipped, first url wins, title "", a date that is no number is "" (reference bug)', async () => {
    assert.deepEqual(await run('odd', 'x', 'FQDN'), {
      total: 42,
      results: [
        { url: 'https://a.example/1', title: 'First', added: '2024-05-31' },
        { url: 'https://a.example/2', title: '', added: '' },
        { url: 'https://a.example/3', title: '', added: '' },
        { url: 'https://a.example/4', title: 'String time', added: '2024-06-01' },
        { url: 'https://a.example/5', title: 'Far future', added: '' },
      ],
      link: `${base('odd')}/?q=x`,
    });
  });

  test('documents and total missing: nothing found', async () => {
    assert.deepEqual(await run('documents-missing', 'x', 'FQDN'), { total: 0, results: [], link: `${base('documents-missing')}/?q=x` });
  });

  test('"documents": null (Hister\'s index search failed): an error, not a crash (reference bug)', async () => {
    await watch.rejectsWith(harness('documents-null').run('x', 'FQDN'), /^Hister: its index search failed \(answered "documents": null\)$/);
  });

  test('JSON that is no object, a total that is no number: errors, not a crash (reference bug)', async () => {
    await watch.rejectsWith(harness('list', { retries: 0 }).run('x', 'FQDN'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
    await watch.rejectsWith(harness('string', { retries: 0 }).run('x', 'FQDN'), /^unexpected answer from upstream at \(root\): /);
    await watch.rejectsWith(harness('total-text', { retries: 0 }).run('x', 'FQDN'), /^unexpected answer from upstream at total: /);
  });

  test('dates are UTC days whatever the machine\'s time zone', async () => {
    const saved = process.env.TZ;
    try {
      for (const zone of ['Pacific/Kiritimati', 'Pacific/Honolulu', 'UTC']) {
        process.env.TZ = zone;
        const result = await run('midnight', 'x', 'FQDN');
        assert.deepEqual(result?.results.map((r) => r.added), ['2024-05-31', '2024-06-01'], zone);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('base_url with a path and trailing slashes: path kept, no double slash, in the link too', async () => {
    fake.reset();
    const result = await run('x', 'example.com', 'FQDN', { base_url: `${fake.url}/deep/path/hister//` });
    assert.deepEqual(fake.requests.map((r) => r.path), ['/deep/path/hister/search']);
    assert.equal(result?.link, `${fake.url}/deep/path/hister/?q=example.com`);
  });

  test('called directly without token or base_url: an error before any request', async () => {
    fake.reset();
    await watch.rejectsWith(harness('hister', { token: undefined }).run('example.com', 'FQDN'), /^not configured: token$/);
    await watch.rejectsWith(harness('hister', { token: ' ' }).run('example.com', 'FQDN'), /^not configured: token$/);
    await watch.rejectsWith(harness('hister', { base_url: '' }).run('example.com', 'FQDN'), /^not configured: base_url$/);
    await watch.rejectsWith(harness('hister', { base_url: 'hister.local:4433' }).run('example.com', 'FQDN'), /^Hister: base_url must be an http\(s\) URL$/);
    assert.equal(fake.requests.length, 0);
  });

  test('a wrong token: Hister\'s 403, one line naming Hister, not retried', async () => {
    fake.reset();
    await watch.rejectsWith(harness('hister', { token: 'not-the-token-000' }).run('example.com', 'FQDN'),
      /^Hister: authentication failed \(HTTP 403 Forbidden: Forbidden\)$/);
    assert.equal(fake.requests.length, 1, 'not retried');
  });

  test('a reason echoing the token: masked', async () => {
    await watch.rejectsWith(harness('echo').run('example.com', 'FQDN'), /^Hister: authentication failed \(HTTP 403 Forbidden: invalid token in Bearer \*\*\*\)$/);
  });

  test('HTTP 500 (e.g. Hister refusing the origin): an error, retried as configured', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 1 }).run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error/);
    assert.equal(fake.hits('GET /status500/').length, 2);
  });

  test('a wrong base_url (404): an error, not "not found"', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 404 Not Found\b/);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    assert.equal((await run('flaky', 'example.com', 'FQDN', { retries: 2 }))?.total, 3);
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    await watch.rejectsWith(harness('throttled', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON, an HTML page: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('login-page', { retries: 0 }).run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
  });

  test('a hanging server: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a server that is down: a network error', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1/hister', retries: 0 }).run('example.com', 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('hister: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, TOKEN, { setting: 'token', watch });
  const run = async (prefix: string) => (await harness(prefix).run('x', 'FQDN')) as HisterResult | null;
  const link = (prefix: string) => `${fake.url}/${prefix}/?q=x`;
  const answers: Record<string, unknown> = {
    // The minimal answer: a total and documents, each document its url alone.
    minimal: { total: 1, documents: [{ url: 'https://a.example/1' }] },
    nothing: {},
    'empty-forms': { total: '', documents: {} },
    'null-total': { total: null, documents: '' },
    // One document in place of the list; total as text; a title sent as a number.
    single: { total: '7', documents: { url: 'https://a.example/1', title: 404, added: '1717199000' } },
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}/search`, reply.json(body)])));
  });
  after(() => fake.close());

  test('the minimal answer: total, and a document with its url alone', async () => {
    assert.deepEqual(await run('minimal'), { total: 1, results: [{ url: 'https://a.example/1', title: '', added: '' }], link: link('minimal') });
  });

  test('no total, no documents, or both in an empty form: nothing found', async () => {
    for (const prefix of ['nothing', 'empty-forms', 'null-total']) {
      assert.deepEqual(await run(prefix), { total: 0, results: [], link: link(prefix) }, prefix);
    }
  });

  test('one document in place of the list, total as text, a numeric title', async () => {
    assert.deepEqual(await run('single'), { total: 7, results: [{ url: 'https://a.example/1', title: '404', added: '2024-05-31' }], link: link('single') });
  });
});

describe('hister fake for whole-system tests', () => {
  const suite = harnessOnFake(engine, () => startFakeHttp(fakeRoutes({ token: TOKEN })), (url) => ({ ...fakeSettings(url), token: TOKEN }), (h) => watch.watch(h));

  test('answers every known observable with the token', async () => {
    const { fake, harness: h } = suite;
    for (const type of OBSERVABLE_TYPES) {
      const result = (await h.run(KNOWN[type], type)) as HisterResult;
      assert.ok(result.total > 0 && result.results.length > 0, type);
    }
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && r.headers.origin === 'hister://'));
  });

  test('Hister\'s own checks: foreign origin 500, X-Access-Token accepted, no token 403, q= accepted, limit honoured', async () => {
    const { fake } = suite;
    const query = encodeURIComponent(searchQuery('example.com'));
    const get = (path: string, headers: Record<string, string>) => fetch(`${fake.url}${path}`, { headers });
    assert.equal((await get(`/hister/search?query=${query}`, { origin: 'https://evil.example', authorization: `Bearer ${TOKEN}` })).status, 500);
    assert.equal((await get(`/hister/search?query=${query}`, { authorization: `Bearer ${TOKEN}` })).status, 500, 'no origin');
    const own = new URL(fake.url).origin;
    assert.equal((await get(`/hister/search?query=${query}`, { origin: own, authorization: `Bearer ${TOKEN}` })).status, 200, 'its own origin');
    assert.equal((await get(`/hister/search?query=${query}`, { origin: 'hister://', 'x-access-token': TOKEN })).status, 200);
    assert.equal((await get(`/hister/search?query=${query}`, { origin: 'hister://' })).status, 403);
    assert.equal((await get('/hister/search', { origin: 'hister://', authorization: `Bearer ${TOKEN}` })).status, 400, 'no query: a WebSocket upgrade');
    const limited = await get(`/hister/search?q=${encodeURIComponent('{"text": "example.com", "limit": 1}')}`, { origin: 'hister://', authorization: `Bearer ${TOKEN}` });
    const body = (await limited.json()) as { total: number; documents: unknown[] };
    assert.equal(body.total, 3);
    assert.equal(body.documents.length, 1);
    assert.ok(DOCUMENTS.length >= 10);
  });
});

describe('hister through the runner', () => {
  let fake: FakeHttpServer;
  const runner = suiteRunners([engine, mispFeedback]);
  const configured = () => ({ ...fakeSettings(fake.url), token: TOKEN });

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ token: TOKEN }),
      ...mfbRoutes(),
      'GET /broken/search': reply.status(500),
      'GET /documents-null/search': reply.json({ total: 0, documents: null }),
    });
  });
  after(() => fake.close());

  test('the result under the name the caller used; an extension id, an e-mail and a private IP are searched', async () => {
    const r = runner(configured());
    const results = await r.analyze([
      { value: KNOWN.FQDN, type: 'FQDN' },
      { value: KNOWN.CHROME_EXTENSION, type: 'CHROME_EXTENSION' },
      { value: KNOWN.Email, type: 'Email' },
      { value: PRIVATE_IP, type: 'IPv4' },
    ], ['hister']);
    watch.result(results);
    assert.deepEqual(results[0]!.hister, { total: 3, results: EXAMPLE_RESULTS, link: `${fake.url}/hister/?q=example.com` });
    assert.deepEqual((results[1]!.hister as HisterResult).results, FOUND.CHROME_EXTENSION);
    assert.equal(results[1]!.type, 'CHROME_EXTENSION');
    assert.deepEqual((results[2]!.hister as HisterResult).results, FOUND.Email);
    assert.equal((results[3]!.hister as HisterResult).total, 1);
    assert.ok(results.every((result) => result.errors === undefined));
  });

  test('offered by the main catalog as an extra, never default', () => {
    const r = runner(configured());
    assert.equal(r.catalog.find('hister'), engine);
    assert.equal(r.catalog.isDefault(engine), false);
  });

  test('no token configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner(fakeSettings(fake.url)).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['hister']);
    assert.equal(result!.hister, null);
    assert.deepEqual(result!.errors, { hister: 'not configured: engines.hister.token or OAS_HISTER_TOKEN' });
    assert.equal(fake.requests.length, 0);
  });

  test('no base_url configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ token: TOKEN }).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['hister']);
    watch.result(result);
    assert.deepEqual(result!.errors, { hister: 'not configured: engines.hister.base_url or OAS_HISTER_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('neither configured: both named, nothing asked', async () => {
    fake.reset();
    const [result] = await runner({}).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['hister']);
    assert.deepEqual(result!.errors, { hister: 'not configured: engines.hister.base_url or OAS_HISTER_BASE_URL, engines.hister.token or OAS_HISTER_TOKEN' });
    assert.equal(fake.requests.length, 0);
  });

  test('a failing Hister: null plus an errors entry, the other engine unaffected', async () => {
    const [result] = await runner({ base_url: `${fake.url}/broken`, token: TOKEN }, { misp_feedback: mfbSettings(fake.url) })
      .analyze([{ value: MFB_KNOWN.IPv4.value, type: 'IPv4' }], ['hister', 'misp_feedback']);
    watch.result(result);
    assert.equal(result!.hister, null);
    assert.deepEqual(result!.errors, { hister: 'HTTP 500 Internal Server Error' });
    assert.deepEqual(result!.misp_feedback, { status: 'HIT', warninglists: [...MFB_KNOWN.IPv4.lists] });
  });

  test('"documents": null: an errors entry, the observable kept (the reference lost it)', async () => {
    const [result] = await runner({ base_url: `${fake.url}/documents-null`, token: TOKEN }).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['hister']);
    watch.result(result);
    assert.equal(result!.observable, KNOWN.FQDN);
    assert.deepEqual(result!.errors, { hister: 'Hister: its index search failed (answered "documents": null)' });
  });

  test('a wrong token through the runner: the one-line error, token masked', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), token: `${TOKEN}-old` }).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['hister']);
    watch.result(result);
    assert.equal(result!.errors!.hister, 'Hister: authentication failed (HTTP 403 Forbidden: Forbidden) (key refused: check engines.hister.token or OAS_HISTER_TOKEN)');
  });
});

describe('hister through a proxy (proxy_url)', () => {
  const suite = proxiedSuite(engine, fakeRoutes({ token: TOKEN }), (url) => ({ ...fakeSettings(url), token: TOKEN }));

  test('the request goes through the proxy; the query percent-encoded with "+" for spaces, as the reference sent it', async () => {
    const { fake, proxy, runner: r } = suite;
    const [result] = await r.analyze([{ value: 'example.com', type: 'FQDN' }], ['hister']);
    watch.result(result);
    assert.equal(result!.errors, undefined);
    assert.equal((result!.hister as HisterResult).total, 3);
    assert.equal(proxy.requests.length, 1);
    assert.equal(proxy.requests[0]!.method, 'GET');
    assert.equal(proxy.requests[0]!.url,
      `${fake.url}/hister/search?query=%7B%22text%22%3A+%22example.com%22%2C+%22limit%22%3A+10%2C+%22fields%22%3A+%5B%22url%22%2C+%22title%22%2C+%22text%22%5D%7D`);
    assert.equal(proxy.requests[0]!.headers.origin, 'hister://');
  });
});

describe('hister secrets', () => {
  test('the token appears in no result and no error of these tests', () => {
    watch.assertNoKey(60);
  });
});
