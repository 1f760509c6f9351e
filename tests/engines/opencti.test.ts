import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  INDICATOR_QUERY, latestDay, openCtiDetails, openCtiLookup, openCtiSummary, SEARCH_QUERY, SEARCH_QUERY_ID, searchValue, searchVariables,
  type OpenCtiMatch, type OpenCtiResult,
} from '../../engines/opencti.js';
import misp from '../../engines/misp.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest } from '../fakes/http.js';
import { fakeRoutes as mispRoutes, fakeSettings as mispSettings } from '../fakes/misp.js';
import { AUTH_REQUIRED, fakeRoutes, fakeSettings, graphql, KNOWN, KNOWN_URL, searchAnswer } from '../fakes/opencti.js';
import { proxiedSuite } from '../fakes/proxy.js';
import { harnessOnFake } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { suiteRunners } from '../helpers/runner.js';

const KEY = 'octi-7c1e4b2a-9d3f-4e8a-b6c5-0f1e2d3c4b5a';
const MISP_KEY = 'MISPKEY-other-0123456789';
const watch = new KeyWatch(KEY);

const NO_INDICATOR = {
  latest_indicator_link: null, latest_indicator_name: null, x_opencti_score: null, revoked: null, valid_from: null, valid_until: null, confidence: null,
};

/** Not in the corpus, one per type. */
const UNKNOWN: [string, ObservableType, string][] = [
  ['198.51.100.77', 'IPv4', '198.51.100.77'],
  ['2a00:1450:4001:80b::200e', 'IPv6', '2a00:1450:4001:80b::200e'],
  ['Benign.Example.org.', 'FQDN', 'benign.example.org'],
  ['https://benign.example.org/x?y=1', 'URL', 'benign.example.org'],
  ['d41d8cd98f00b204e9800998ecf8427e', 'MD5', 'd41d8cd98f00b204e9800998ecf8427e'],
  ['da39a3ee5e6b4b0d3255bfef95601890afd80709', 'SHA1', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
  ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'SHA256', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
];

interface GraphqlBody {
  id?: string;
  query: string;
  variables: Record<string, unknown>;
}
const bodyOf = (req: FakeRequest) => JSON.parse(req.body) as GraphqlBody;

describe('provider_16 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_16');
    assert.equal(engine.service, 'opencti');
    assert.equal(engine.label, 'OpenCTI');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.catalogs, ['main', 'older']);
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Server URL', env: ['OPENCTI_URL'], secret: false },
      { setting: 'api_key', label: 'API key', env: ['OPENCTI_API_KEY'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000 });
    assert.equal(engine.run, openCtiLookup);
    assert.equal(engine.summary, openCtiSummary);
    assert.equal(engine.details, openCtiDetails);
  });

  test('the search value: a URL\'s host from the shared parser, a domain as the domain it is (bug 15)', () => {
    assert.equal(searchValue({ value: 'httpbin.org', type: 'FQDN' }), 'httpbin.org');
    assert.equal(searchValue({ value: 'Evil.Example.COM.', type: 'FQDN' }), 'evil.example.com');
    assert.equal(searchValue({ value: KNOWN_URL, type: 'URL' }), 'phish.example.net');
    assert.equal(searchValue({ value: 'http://[2001:db8::1]:8080/a', type: 'URL' }), '2001:db8::1');
    assert.equal(searchValue({ value: 'https://httpbin.org/get', type: 'URL' }), 'httpbin.org');
    assert.equal(searchValue({ value: '1.2.3.4', type: 'IPv4' }), '1.2.3.4');
    assert.equal(searchValue({ value: KNOWN.SHA256, type: 'SHA256' }), KNOWN.SHA256);
  });

  test('the search query: engines.md 5.19\'s globalSearch with its arguments and fields', () => {
    assert.equal(SEARCH_QUERY_ID, 'SearchStixCoreObjectsLinesPaginationQuery');
    const flat = SEARCH_QUERY.replace(/\s+/g, ' ');
    assert.match(flat, /^query SearchStixCoreObjectsLinesPaginationQuery\( \$types: \[String\] \$search: String \$count: Int! \$cursor: ID \$orderBy: StixCoreObjectsOrdering \$orderMode: OrderingMode \$filters: FilterGroup \)/);
    assert.match(flat, /globalSearch\( types: \$types search: \$search first: \$count after: \$cursor orderBy: \$orderBy orderMode: \$orderMode filters: \$filters \)/);
    assert.match(flat, /edges \{ node \{ id entity_type created_at createdBy \{ name id \} creators \{ id name \} objectMarking \{ id definition_type definition x_opencti_order x_opencti_color \} \} cursor \}/);
    assert.match(flat, /pageInfo \{ endCursor hasNextPage globalCount \}/);
    assert.equal(INDICATOR_QUERY, 'query GetIndicator($id: String!) { indicator(id: $id) { name x_opencti_score revoked valid_from valid_until confidence } }');
    assert.equal(JSON.stringify(searchVariables('x')), JSON.stringify({
      count: 100, orderMode: 'desc', orderBy: 'created_at', search: 'x',
      filters: { mode: 'and', filters: [{ key: 'entity_type', values: ['Stix-Core-Object'], operator: 'eq', mode: 'or' }], filterGroups: [] },
    }));
  });

  test('latest date by value, not by string', () => {
    assert.equal(latestDay(['2025-06-11T01:00:00+05:00', '2025-06-10T21:00:00.000Z']), '2025-06-10');
    // As strings the first is the latest (date part 06-11, the reference's answer); as dates it is 06-10T20:00Z.
    assert.equal(latestDay(['2025-06-11T01:00:00+05:00', '2025-06-10T21:00:00.000Z']), '2025-06-10');
    // As strings the first is the latest again, but it is 06-10T20:00Z: the second (06-11T00:30Z) is.
    assert.equal(latestDay(['2025-06-11T01:00:00+05:00', '2025-06-11T00:30:00Z']), '2025-06-11');
    assert.equal(latestDay(['2025-06-10T23:30:00-02:00', '2025-06-11T00:30:00Z']), '2025-06-11');
    assert.equal(latestDay(['not a date', null, undefined]), null);
    assert.equal(latestDay([]), null);
  });

  test('summary and details', () => {
    const full: OpenCtiMatch = {
      entity_counts: { Indicator: 1, 'Domain-Name': 1 }, global_count: 2, search_link: 'https://cti.example/dashboard/search/knowledge/evil.example.com',
      latest_created_at: '2025-06-10', latest_indicator_link: 'https://cti.example/dashboard/observations/indicators/a1', latest_indicator_name: 'evil.example.com',
      x_opencti_score: 80, revoked: false, valid_from: '2025-05-02', valid_until: '2026-05-02', confidence: 75,
    };
    assert.equal(openCtiSummary(full), '2 objects: Indicator 1, Domain-Name 1 · latest 2025-06-10 · indicator evil.example.com, score 80');
    assert.equal(openCtiSummary({ ...full, revoked: true }), '2 objects: Indicator 1, Domain-Name 1 · latest 2025-06-10 · indicator evil.example.com, score 80, revoked');
    assert.equal(openCtiSummary({ ...full, entity_counts: { 'Domain-Name': 1 }, global_count: 1, ...NO_INDICATOR }), '1 object: Domain-Name 1 · latest 2025-06-10');
    assert.equal(openCtiSummary({ entity_counts: {}, global_count: 0, search_link: full.search_link, latest_created_at: null }), 'no match');
    assert.deepEqual(openCtiDetails(full), [
      { label: 'Matches', value: '2' },
      { label: 'Entity types', value: 'Indicator: 1, Domain-Name: 1' },
      { label: 'Latest created', value: '2025-06-10' },
      { label: 'Latest indicator', value: 'evil.example.com', href: 'https://cti.example/dashboard/observations/indicators/a1' },
      { label: 'Score', value: '80' },
      { label: 'Confidence', value: '75' },
      { label: 'Revoked', value: 'no' },
      { label: 'Valid from', value: '2025-05-02' },
      { label: 'Valid until', value: '2026-05-02' },
      { label: 'Search in OpenCTI', value: full.search_link, href: full.search_link },
    ]);
    assert.deepEqual(openCtiDetails({ entity_counts: {}, global_count: 0, search_link: full.search_link, latest_created_at: null }), [
      { label: 'Matches', value: '0' },
      { label: 'Search in OpenCTI', value: full.search_link, href: full.search_link },
    ]);
  });
});

describe('provider_16 against a loopback OpenCTI', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(prefix: string, value: string, type: ObservableType, settings: Record<string, unknown> = {}): Promise<OpenCtiResult | null> {
    return watch.result((await harness(prefix, settings).run(value, type)) as OpenCtiResult | null);
  }
  const base = (prefix: string) => `${fake.url}/${prefix}`;
  const searchLink = (prefix: string, value: string) => `${base(prefix)}/dashboard/search/knowledge/${encodeURIComponent(value)}`;
  const indicatorLink = (prefix: string, id: string) => `${base(prefix)}/dashboard/observations/indicators/${id}`;

  before(async () => {
    const ok = graphql({ key: KEY });
    fake = await startFakeHttp({
      'POST /opencti/graphql': ok,
      'POST /deep/opencti/graphql': ok,
      'POST /graphql': reply.json({ errors: [{ message: 'wrong endpoint: the base path was dropped' }], data: null }, 404),
      'POST /auth-401/graphql': reply.json(AUTH_REQUIRED, 401),
      'POST /forbidden/graphql': reply.json({ errors: [{ message: 'You are not allowed to do this.', extensions: { code: 'FORBIDDEN_ACCESS' } }], data: null }),
      'POST /gql-error/graphql': (req) => reply.json({ errors: [{ message: `Elasticsearch is unavailable (token ${String(req.headers.authorization).slice(7)})`, extensions: { code: 'DATABASE_ERROR' } }], data: null }),
      'POST /validation/graphql': reply.json({ errors: [{ message: 'Unknown argument "orderBy" on field "Query.globalSearch".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }, 400),
      'POST /indicator-error/graphql': (req) => (/globalSearch/.test(req.body) ? ok(req) : reply.json({ errors: [{ message: 'Indicator lookup failed' }], data: null })),
      'POST /status500/graphql': reply.status(500, { errors: [{ message: 'Internal server error' }] }),
      'POST /flaky/graphql': sequence(reply.tooMany(1), ok),
      'POST /throttled/graphql': reply.tooMany(1),
      'POST /malformed/graphql': reply.malformed(),
      'POST /no-data/graphql': reply.json({ data: null }),
      'POST /wrong-shape/graphql': reply.json({ data: { globalSearch: { edges: 'none', pageInfo: { globalCount: 0 } } } }),
      'POST /hang/graphql': reply.hang(),
      'POST /many/graphql': (req) => {
        const nodes = Array.from({ length: 150 }, (_, i) => ({
          id: `n${i}`, entity_type: i % 3 === 0 ? 'Report' : 'Domain-Name', created_at: new Date(Date.UTC(2025, 0, 1) - i * 86_400_000).toISOString(),
        }));
        return reply.json(searchAnswer(nodes, bodyOf(req).variables.count as number));
      },
    });
  });
  after(async () => {
    await fake.close();
  });

  test('engines.md 5.19\'s example (FQDN): the full result exactly, two requests', async () => {
    fake.reset();
    const id = 'a1b2c3d4-0000-4000-8000-000000000001';
    assert.deepEqual(await run('opencti', KNOWN.FQDN, 'FQDN'), {
      entity_counts: { Indicator: 1, 'Domain-Name': 1 },
      global_count: 2,
      search_link: searchLink('opencti', 'evil.example.com'),
      latest_created_at: '2025-06-10',
      latest_indicator_link: indicatorLink('opencti', id),
      latest_indicator_name: 'evil.example.com',
      x_opencti_score: 80,
      revoked: false,
      valid_from: '2025-05-02',
      valid_until: '2026-05-02',
      confidence: 75,
    });
    assert.equal(fake.requests.length, 2);
  });

  test('the requests: POST <base_url>/graphql, Bearer key, the exact id/query/variables', async () => {
    fake.reset();
    await run('opencti', KNOWN.FQDN, 'FQDN');
    const [search, detail] = fake.requests;
    for (const req of [search!, detail!]) {
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/opencti/graphql');
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal(req.headers.accept, 'application/json');
    }
    assert.equal(search!.body, JSON.stringify({ id: SEARCH_QUERY_ID, query: SEARCH_QUERY, variables: searchVariables('evil.example.com') }));
    assert.equal(detail!.body, JSON.stringify({ query: INDICATOR_QUERY, variables: { id: 'a1b2c3d4-0000-4000-8000-000000000001' } }));
  });

  test('found, IPv4: latest created_at by date, not string (offsets); indicator dates as UTC days', async () => {
    assert.deepEqual(await run('opencti', KNOWN.IPv4, 'IPv4'), {
      entity_counts: { 'IPv4-Addr': 1, Report: 2, Indicator: 1 },
      global_count: 4,
      search_link: searchLink('opencti', '1.2.3.4'),
      latest_created_at: '2025-06-10',
      latest_indicator_link: indicatorLink('opencti', 'a1b2c3d4-0000-4000-8000-000000000002'),
      latest_indicator_name: '[ipv4-addr:value = \'1.2.3.4\']',
      x_opencti_score: 100,
      revoked: true,
      valid_from: '2024-01-01',
      valid_until: '2024-12-31',
      confidence: 90,
    });
  });

  test('found, IPv6: no indicator, the full shape with null indicator fields, one request', async () => {
    fake.reset();
    assert.deepEqual(await run('opencti', KNOWN.IPv6, 'IPv6'), {
      entity_counts: { 'IPv6-Addr': 1 },
      global_count: 1,
      search_link: searchLink('opencti', KNOWN.IPv6),
      latest_created_at: '2025-02-14',
      ...NO_INDICATOR,
    });
    assert.equal(fake.requests.length, 1);
    assert.equal(bodyOf(fake.requests[0]!).variables.search, KNOWN.IPv6);
  });

  test('found, URL: searched by its host (userinfo, port and "http" in the query do not matter: bug 15)', async () => {
    fake.reset();
    const result = await run('opencti', KNOWN_URL, 'URL');
    assert.equal(bodyOf(fake.requests[0]!).variables.search, 'phish.example.net');
    assert.deepEqual(result, {
      entity_counts: { Url: 1, Indicator: 1, 'Domain-Name': 1 },
      global_count: 3,
      search_link: searchLink('opencti', 'phish.example.net'),
      latest_created_at: '2025-04-01',
      latest_indicator_link: indicatorLink('opencti', 'a1b2c3d4-0000-4000-8000-000000000003'),
      latest_indicator_name: 'phish.example.net',
      x_opencti_score: 60,
      revoked: false,
      valid_from: '2025-03-01',
      valid_until: '2025-09-01',
      confidence: 50,
    });
  });

  test('found, a domain containing "http" (httpbin.org): searched as is (the reference failed: bug 15)', async () => {
    fake.reset();
    assert.deepEqual(await run('opencti', 'httpbin.org', 'FQDN'), {
      entity_counts: { 'Domain-Name': 1 },
      global_count: 1,
      search_link: searchLink('opencti', 'httpbin.org'),
      latest_created_at: '2024-08-08',
      ...NO_INDICATOR,
    });
    assert.equal(bodyOf(fake.requests[0]!).variables.search, 'httpbin.org');
  });

  test('found, MD5, SHA1, SHA256: the file, its indicator and malware', async () => {
    for (const type of ['MD5', 'SHA1', 'SHA256'] as const) {
      fake.reset();
      const result = await run('opencti', KNOWN[type], type);
      assert.equal(bodyOf(fake.requests[0]!).variables.search, KNOWN[type], type);
      assert.deepEqual(result, {
        entity_counts: { StixFile: 1, Indicator: 1, Malware: 1 },
        global_count: 3,
        search_link: searchLink('opencti', KNOWN[type]),
        latest_created_at: '2024-06-01',
        latest_indicator_link: indicatorLink('opencti', 'a1b2c3d4-0000-4000-8000-000000000004'),
        latest_indicator_name: 'EICAR test file',
        x_opencti_score: 40,
        revoked: false,
        valid_from: '2024-06-01',
        valid_until: '2025-06-01',
        confidence: 100,
      }, type);
    }
  });

  test('not found, every type: exactly the four keys, one request', async () => {
    for (const [value, type, search] of UNKNOWN) {
      fake.reset();
      assert.deepEqual(await run('opencti', value, type), {
        entity_counts: {}, global_count: 0, search_link: searchLink('opencti', search), latest_created_at: null,
      }, type);
      assert.equal(fake.requests.length, 1, type);
      assert.equal(bodyOf(fake.requests[0]!).variables.search, search, type);
    }
  });

  test('the indicator query answering null: indicator fields null, the rest kept (bug 16)', async () => {
    assert.deepEqual(await run('opencti', KNOWN.GHOST, 'FQDN'), {
      entity_counts: { 'Domain-Name': 1, Indicator: 1 },
      global_count: 2,
      search_link: searchLink('opencti', KNOWN.GHOST),
      latest_created_at: '2025-01-05',
      latest_indicator_link: indicatorLink('opencti', 'a1b2c3d4-0000-4000-8000-0000000000ff'),
      latest_indicator_name: null,
      x_opencti_score: null,
      revoked: null,
      valid_from: null,
      valid_until: null,
      confidence: null,
    });
  });

  test('base_url with a path: kept for the endpoint and the links (bug 16)', async () => {
    fake.reset();
    const result = (await run('x', KNOWN.FQDN, 'FQDN', { base_url: `${fake.url}/deep/opencti/` })) as OpenCtiMatch;
    assert.deepEqual(fake.requests.map((r) => r.path), ['/deep/opencti/graphql', '/deep/opencti/graphql']);
    assert.equal(result.search_link, `${fake.url}/deep/opencti/dashboard/search/knowledge/evil.example.com`);
    assert.equal(result.latest_indicator_link, `${fake.url}/deep/opencti/dashboard/observations/indicators/a1b2c3d4-0000-4000-8000-000000000001`);
  });

  test('100 edges at most are counted; global_count is OpenCTI\'s total', async () => {
    fake.reset();
    const result = await run('many', 'busy.example', 'FQDN');
    assert.equal(result?.global_count, 150);
    assert.deepEqual(result?.entity_counts, { Report: 34, 'Domain-Name': 66 });
    assert.equal(result?.latest_created_at, '2025-01-01');
  });

  test('dates are UTC days whatever the machine\'s time zone', async () => {
    const saved = process.env.TZ;
    try {
      for (const zone of ['Pacific/Kiritimati', 'Pacific/Honolulu']) {
        process.env.TZ = zone;
        const ip = (await run('opencti', KNOWN.IPv4, 'IPv4')) as OpenCtiMatch;
        assert.equal(ip.valid_from, '2024-01-01', zone); // 23:30 UTC
        assert.equal(ip.valid_until, '2024-12-31', zone);
        assert.equal((await run('opencti', KNOWN.IPv6, 'IPv6'))?.latest_created_at, '2025-02-14', zone); // 23:59 UTC
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  test('an e-mail address: not OpenCTI\'s, null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('opencti').run('someone@example.org', 'Email'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('called directly without key or base_url: an error before any request', async () => {
    fake.reset();
    await watch.rejectsWith(harness('opencti', { api_key: '' }).run(KNOWN.FQDN, 'FQDN'), /^not configured: api_key$/);
    await watch.rejectsWith(harness('opencti', { base_url: undefined }).run(KNOWN.FQDN, 'FQDN'), /^not configured: base_url$/);
    await watch.rejectsWith(harness('opencti', { base_url: 'ftp://cti.example' }).run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: base_url must be an http\(s\) URL$/);
    assert.equal(fake.requests.length, 0);
  });

  test('a wrong key: OpenCTI\'s AUTH_REQUIRED error, one line naming OpenCTI, key masked', async () => {
    fake.reset();
    await watch.rejectsWith(harness('opencti', { api_key: 'octi-wrong-token-0000' }).run(KNOWN.FQDN, 'FQDN'),
      /^OpenCTI: authentication failed \(You must be logged in to do this\.\)$/);
    assert.equal(fake.requests.length, 1);
  });

  test('HTTP 401 and FORBIDDEN_ACCESS: authentication errors too', async () => {
    await watch.rejectsWith(harness('auth-401').run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: authentication failed \(HTTP 401 Unauthorized: You must be logged in to do this\.\)$/);
    await watch.rejectsWith(harness('forbidden').run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: authentication failed \(You are not allowed to do this\.\)$/);
  });

  test('a GraphQL error: one line with OpenCTI\'s message, redacted', async () => {
    await watch.rejectsWith(harness('gql-error').run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: Elasticsearch is unavailable \(token \*\*\*\)$/);
    await watch.rejectsWith(harness('validation').run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: Unknown argument "orderBy" on field "Query\.globalSearch"\.$/);
    await watch.rejectsWith(harness('indicator-error').run(KNOWN.FQDN, 'FQDN'), /^OpenCTI: Indicator lookup failed$/);
  });

  test('the reference\'s endpoint (path dropped) is not used', async () => {
    fake.reset();
    await run('opencti', KNOWN.FQDN, 'FQDN');
    assert.equal(fake.hits('POST /graphql').length, 0);
  });

  test('another 404 (a wrong base_url): an error', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^HTTP 404 Not Found\b/);
  });

  test('HTTP 500: an error, retried as configured', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 1 }).run(KNOWN.FQDN, 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits('POST /status500/').length, 2);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run('flaky', KNOWN.IPv6, 'IPv6', { retries: 2 });
    assert.equal(result?.global_count, 1);
    assert.equal(fake.hits('POST /flaky/').length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    await watch.rejectsWith(harness('throttled', { retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON, no data, a wrong shape: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('no-data', { retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^unexpected answer from upstream at data/);
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^unexpected answer from upstream at globalSearch\.edges/);
  });

  test('a hanging server: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run(KNOWN.FQDN, 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a server that is down: a network error without the key', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1/opencti', retries: 0 }).run(KNOWN.FQDN, 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('provider_16 fake for whole-system tests', () => {
  const suite = harnessOnFake(engine, () => startFakeHttp(fakeRoutes({ key: KEY })), (url) => ({ ...fakeSettings(url), api_key: KEY }));

  test('answers every known observable with the key', async () => {
    const { fake, harness: h } = suite;
    const cases: [string, ObservableType][] = [
      [KNOWN.IPv4, 'IPv4'], [KNOWN.IPv6, 'IPv6'], [KNOWN.FQDN, 'FQDN'], [KNOWN_URL, 'URL'], [KNOWN.MD5, 'MD5'], [KNOWN.SHA1, 'SHA1'], [KNOWN.SHA256, 'SHA256'],
    ];
    for (const [value, type] of cases) {
      const result = watch.result((await h.run(value, type)) as OpenCtiResult);
      assert.ok(result.global_count > 0, type);
      assert.ok(result.search_link.startsWith(`${fake.url}/opencti/dashboard/search/knowledge/`), type);
    }
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`));
  });
});

describe('provider_16 through the runner', () => {
  let fake: FakeHttpServer;
  const runner = suiteRunners([engine, misp]);
  const configured = () => ({ ...fakeSettings(fake.url), api_key: KEY });

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ key: KEY }),
      ...mispRoutes({ key: MISP_KEY }),
      'POST /broken/graphql': reply.status(500),
    });
  });
  after(() => fake.close());

  test('the result under the alias the caller named, or under the id', async () => {
    const r = runner(configured());
    const [byAlias] = await r.analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['opencti']);
    assert.equal(watch.result(byAlias!.opencti as OpenCtiMatch).latest_indicator_name, 'evil.example.com');
    assert.equal(byAlias!.provider_16, undefined);
    assert.equal(byAlias!.errors, undefined);
    const [byId] = await r.analyze([{ value: KNOWN_URL, type: 'URL' }], ['provider_16']);
    assert.equal((byId!.provider_16 as OpenCtiMatch).global_count, 3);
  });

  test('no base_url configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ api_key: KEY }).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['opencti']);
    assert.equal(result!.opencti, null);
    assert.deepEqual(result!.errors, { opencti: 'not configured: engines.provider_16.base_url or OAS_OPENCTI_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('no api_key configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner(fakeSettings(fake.url)).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['opencti']);
    assert.deepEqual(result!.errors, { opencti: 'not configured: engines.provider_16.api_key or OAS_OPENCTI_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('a failing OpenCTI: null plus an errors entry, the other engine unaffected', async () => {
    const [result] = await runner(
      { base_url: `${fake.url}/broken`, api_key: KEY },
      { provider_15: { ...mispSettings(fake.url), api_key: MISP_KEY } },
    ).analyze([{ value: '1.2.3.4', type: 'IPv4' }], ['opencti', 'misp']);
    watch.result(result);
    assert.equal(result!.opencti, null);
    assert.deepEqual(result!.errors, { opencti: 'HTTP 500 Internal Server Error' });
    assert.equal((result!.misp as { count: number }).count, 3);
  });

  test('a wrong key through the runner: the one-line error', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: `${KEY}-revoked` }).analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['opencti']);
    watch.result(result);
    assert.deepEqual(result!.errors, { opencti: 'OpenCTI: authentication failed (You must be logged in to do this.) (key refused: check engines.provider_16.api_key or OAS_OPENCTI_API_KEY)' });
  });
});

describe('provider_16 through a proxy (proxy_url)', () => {
  const suite = proxiedSuite(engine, fakeRoutes({ key: KEY }), (url) => ({ ...fakeSettings(url), api_key: KEY }));

  test('both GraphQL requests go through the configured proxy (bug 20 for self-hosted engines)', async () => {
    const { fake, proxy, runner: r } = suite;
    const [result] = await r.analyze([{ value: KNOWN.FQDN, type: 'FQDN' }], ['opencti']);
    watch.result(result);
    assert.equal(result!.errors, undefined);
    assert.equal((result!.opencti as OpenCtiMatch).x_opencti_score, 80);
    assert.ok(proxy.connects.length >= 1);
    assert.ok(proxy.connects.every((c) => c === new URL(fake.url).host));
    assert.deepEqual(proxy.requests.map((p) => [p.method, p.url]), [
      ['POST', `${fake.url}/opencti/graphql`],
      ['POST', `${fake.url}/opencti/graphql`],
    ]);
    assert.match(proxy.requests[0]!.body, /"id":"SearchStixCoreObjectsLinesPaginationQuery"/);
    assert.match(proxy.requests[1]!.body, /GetIndicator/);
    assert.equal(fake.requests.length, 2, 'the proxy forwarded both');
  });
});

describe('provider_16 minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  let search: unknown = {};
  let indicator: unknown = {};
  const harness = prefixHarnesses(engine, () => fake, KEY, { watch });
  before(async () => {
    fake = await startFakeHttp({ 'POST /lenient/graphql': (req) => reply.json(/globalSearch/.test(req.body) ? search : indicator) });
  });
  after(async () => {
    await fake.close();
  });
  async function run(searchData: unknown, indicatorData: unknown = { indicator: null }): Promise<unknown> {
    search = { data: searchData };
    indicator = { data: indicatorData };
    fake.reset();
    return harness('lenient').run(KNOWN.FQDN, 'FQDN');
  }
  const none = (count: number): OpenCtiResult => ({
    entity_counts: {}, global_count: count, search_link: `${fake.url}/lenient/dashboard/search/knowledge/${KNOWN.FQDN}`, latest_created_at: null,
  });
  const NO_INDICATOR = {
    latest_indicator_link: null, latest_indicator_name: null, x_opencti_score: null, revoked: null, valid_from: null, valid_until: null, confidence: null,
  };

  test('the minimal search answer, an empty globalSearch: no match, global_count 0', async () => {
    assert.deepEqual(await run({ globalSearch: {} }), none(0));
    assert.equal(fake.requests.length, 1);
  });

  test('edges null, "", {}, null entries or edges without node; pageInfo null or without globalCount', async () => {
    for (const globalSearch of [
      { edges: null, pageInfo: null },
      { edges: '', pageInfo: {} },
      { edges: {}, pageInfo: { globalCount: null } },
      { edges: [null, {}, { node: null }], pageInfo: { globalCount: '' } },
    ]) {
      assert.deepEqual(await run({ globalSearch }), none(0), JSON.stringify(globalSearch));
    }
    assert.deepEqual(await run({ globalSearch: { edges: [], pageInfo: { globalCount: '7' } } }), none(7));
  });

  test('one edge object in place of the list; minimal nodes; no globalCount: the edges are counted', async () => {
    assert.deepEqual(await run({ globalSearch: { edges: { node: { id: 'd1', entity_type: 'Domain-Name', created_at: '2025-06-10T08:00:00.000Z' } } } }), {
      ...none(1), entity_counts: { 'Domain-Name': 1 }, latest_created_at: '2025-06-10', ...NO_INDICATOR,
    });
    assert.deepEqual(await run({ globalSearch: { edges: [{ node: {} }, { node: { entity_type: 'Report', created_at: '' } }] } }), {
      ...none(2), entity_counts: { Unknown: 1, Report: 1 }, ...NO_INDICATOR,
    });
    assert.equal(fake.requests.length, 1, 'no indicator: no detail query');
  });

  test('an indicator without id is skipped for the next one; its detail minimal, or with 0/""/text forms', async () => {
    const edges = [{ node: { entity_type: 'Indicator' } }, { node: { id: 'i2', entity_type: 'Indicator', created_at: '2025-05-02T10:00:00.000Z' } }];
    const found = { ...none(2), entity_counts: { Indicator: 2 }, latest_created_at: '2025-05-02', ...NO_INDICATOR, latest_indicator_link: `${fake.url}/lenient/dashboard/observations/indicators/i2` };
    for (const detail of [{}, { indicator: null }, { indicator: {} }, { indicator: { name: null, x_opencti_score: null, revoked: null, valid_from: '', valid_until: null, confidence: '' } }]) {
      assert.deepEqual(await run({ globalSearch: { edges } }, detail), found, JSON.stringify(detail));
      assert.deepEqual(JSON.parse(fake.requests[1]!.body).variables, { id: 'i2' });
    }
    // A name sent as "" is what OpenCTI said: kept (issue 32; it was null before); summary and card show no empty name.
    const unnamed = await run({ globalSearch: { edges } }, { indicator: { name: '', x_opencti_score: 50 } }) as OpenCtiMatch;
    assert.deepEqual(unnamed, { ...found, latest_indicator_name: '', x_opencti_score: 50 });
    assert.equal(engine.summary(unnamed), '2 objects: Indicator 2 · latest 2025-05-02 · indicator (unnamed), score 50');
    assert.deepEqual(engine.details!(unnamed, 'x').find((f) => f.label === 'Latest indicator')?.value, found.latest_indicator_link);
    assert.deepEqual(await run({ globalSearch: { edges } }, { indicator: { name: 'evil.example.com', x_opencti_score: '80', revoked: 0, valid_from: '2025-05-02T10:00:00.000Z', confidence: '75' } }), {
      ...found, latest_indicator_name: 'evil.example.com', x_opencti_score: 80, revoked: false, valid_from: '2025-05-02', confidence: 75,
    });
    assert.equal((await run({ globalSearch: { edges } }, { indicator: { revoked: '1' } }) as OpenCtiMatch).revoked, true);
  });

  test('issue 32: an indicator whose id is "" is skipped like one without; an entity_type "" is counted as sent', async () => {
    const edges = [{ node: { id: '', entity_type: 'Indicator' } }, { node: { id: 'i2', entity_type: 'Indicator' } }, { node: { id: 'd1', entity_type: '' } }];
    const result = await run({ globalSearch: { edges } }, { indicator: { name: 'evil.example.com' } }) as OpenCtiMatch;
    assert.deepEqual(result.entity_counts, { Indicator: 2, '': 1 });
    assert.equal(result.latest_indicator_link, `${fake.url}/lenient/dashboard/observations/indicators/i2`);
    assert.deepEqual(JSON.parse(fake.requests[1]!.body).variables, { id: 'i2' });
    assert.equal(engine.summary(result), '3 objects: Indicator 2, Unknown 1 · indicator evil.example.com');
    assert.equal(engine.details!(result, 'x').find((f) => f.label === 'Entity types')?.value, 'Indicator: 2, Unknown: 1');
  });

  test('what cannot be read still fails, naming the missing or wrong part', async () => {
    await watch.rejectsWith(run({}), /^unexpected answer from upstream at globalSearch/);
    await watch.rejectsWith(run({ globalSearch: null }), /^unexpected answer from upstream at globalSearch/);
    await watch.rejectsWith(run({ globalSearch: { edges: [{ node: { id: 'x', entity_type: ['Indicator'] } }] } }), /^unexpected answer from upstream at globalSearch\.edges\.0\.node\.entity_type/);
    await watch.rejectsWith(run({ globalSearch: { edges: [], pageInfo: { globalCount: 'many' } } }), /^unexpected answer from upstream at globalSearch\.pageInfo\.globalCount: expected a number/);
  });
});

describe('provider_16 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(50);
  });
});
