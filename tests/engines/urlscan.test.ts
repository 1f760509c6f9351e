import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { searchQuery, urlscanDetails, urlscanLookup, type UrlscanResult } from '../../engines/urlscan.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

/** One scan as urlscan's search API lists it. */
function scan(id: string, domain: string | undefined, time: string): Record<string, unknown> {
  const url = domain ? `https://${domain}/` : undefined;
  return {
    _id: id,
    _score: null,
    sort: [Date.parse(time), id],
    task: { visibility: 'public', method: 'api', domain, apexDomain: domain, time, uuid: id, url, tags: [] },
    stats: { uniqIPs: 3, uniqCountries: 1, dataLength: 98213, encodedDataLength: 40123, requests: 12 },
    page: {
      ...(domain ? { domain, apexDomain: domain, url } : {}),
      country: 'US', server: 'ECS (dcb/7F83)', ip: '93.184.215.14', mimeType: 'text/html',
      title: 'Example Domain', status: '200', tlsValidDays: 364, tlsAgeDays: 120, ptr: 'example.com', asn: 'AS15133', asnname: 'EDGECAST, US',
    },
    result: `https://urlscan.io/api/v1/result/${id}/`,
    screenshot: `https://urlscan.io/screenshots/${id}.png`,
  };
}

/** example.com: 1523 scans in all; this page holds 6, newest first (sorted by date, as the API does). */
const SEARCH = {
  results: [
    scan('0194a1b2-0001-7000-8000-000000000001', 'www.example.com', '2026-01-09T10:00:00.000Z'),
    scan('0194a1b2-0002-7000-8000-000000000002', 'example.com', '2026-01-08T09:30:00.000Z'),
    scan('0194a1b2-0003-7000-8000-000000000003', 'example.com', '2026-01-07T12:00:00.000Z'),
    scan('0194a1b2-0004-7000-8000-000000000004', undefined, '2026-01-06T12:00:00.000Z'),
    scan('0194a1b2-0005-7000-8000-000000000005', 'www.example.com', '2026-01-05T12:00:00.000Z'),
    scan('0194a1b2-0006-7000-8000-000000000006', 'example.com', '2025-12-31T23:59:59.000Z'),
  ],
  total: 1523,
  took: 12,
  has_more: true,
};

const RESULT: UrlscanResult = {
  scan_count: 1523,
  top_domains: [{ domain: 'example.com', count: 3 }, { domain: 'www.example.com', count: 2 }, { domain: 'Unknown', count: 1 }],
  link: 'https://urlscan.io/search/#page.domain:example.com',
  last_scan: '2026-01-09T10:00:00.000Z',
};

const EMPTY = { results: [], total: 0, took: 3, has_more: false };

const closers: (() => Promise<void>)[] = [];

async function setup(route: FakeRoute, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ 'GET /api/v1/search/': route });
  const harness = engineHarness(engine, { settings: { base_url: `${fake.url}/api/v1/search/`, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}


after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_23 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_23');
    assert.equal(engine.service, 'urlscan');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash', 'free_no_key']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, []);
    assert.equal(engine.defaults.base_url, 'https://urlscan.io/api/v1/search/');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, urlscanLookup);
  });

  test('summary', () => {
    assert.equal(engine.summary(RESULT), '1523 scans, last 2026-01-09');
    assert.equal(engine.summary({ ...RESULT, scan_count: 1 }), '1 scan, last 2026-01-09');
    assert.equal(engine.summary({ scan_count: 0, top_domains: [], link: RESULT.link, last_scan: null }), 'no scans');
  });

  test('details: scans, last scan, top page domains with their counts, the search on urlscan.io', () => {
    assert.deepEqual(engine.details!(RESULT, 'example.com'), [
      { label: 'Scans', value: '1523' },
      { label: 'Last scan', value: '2026-01-09T10:00:00.000Z' },
      { label: 'Top page domains', value: 'example.com (3), www.example.com (2), Unknown (1)' },
      { label: 'Open in urlscan.io', value: 'https://urlscan.io/search/#page.domain:example.com', href: 'https://urlscan.io/search/#page.domain:example.com' },
    ]);
    assert.deepEqual(urlscanDetails({ scan_count: 0, top_domains: [], link: RESULT.link, last_scan: null }).map((f) => [f.label, f.value]), [
      ['Scans', '0'],
      ['Open in urlscan.io', RESULT.link],
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to urlscanDetails's type).
    assert.equal(engine.details, urlscanDetails);
  });

  test('search per type', () => {
    const cases: [string, ObservableType, string | null][] = [
      ['93.184.215.14', 'IPv4', 'ip:93.184.215.14'],
      ['2001:db8::1', 'IPv6', 'ip:"2001:db8::1"'],
      ['D41D8CD98F00B204E9800998ECF8427E', 'MD5', 'files.md5:d41d8cd98f00b204e9800998ecf8427e'],
      ['da39a3ee5e6b4b0d3255bfef95601890afd80709', 'SHA1', 'files.sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709'],
      ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'SHA256', 'files.sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['Example.COM', 'FQDN', 'page.domain:example.com'],
      ['https://example.com/login?x=1', 'URL', 'page.domain:example.com'],
      // engines.md 8 item 15: splitting on "/" then ":" gave "user" and "[2001" for these two.
      ['https://user:pw@login.example.com:8443/a', 'URL', 'page.domain:login.example.com'],
      ['http://[2001:db8::1]:8080/x', 'URL', 'page.ip:"2001:db8::1"'],
      ['http://192.0.2.10/bins/x86', 'URL', 'page.ip:192.0.2.10'],
      ['jane@example.com', 'Email', null],
      ['http://exa mple.com/', 'URL', null],
    ];
    for (const [value, type, expected] of cases) assert.equal(searchQuery({ value, type }), expected, value);
  });
});

describe('provider_23 against a loopback urlscan', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup((req) => reply.json(req.query.get('q') === 'page.domain:example.com' ? SEARCH : EMPTY)));
  });

  test('domain: count, top domains of the page, link, last scan', async () => {
    fake.reset();
    const result = await harness.run('example.com', 'FQDN') as UrlscanResult;
    assert.equal(result.scan_count, 1523);
    assert.deepEqual(result.top_domains, RESULT.top_domains);
    assert.equal(result.link, 'https://urlscan.io/search/#page.domain:example.com');
    assert.equal(result.last_scan, '2026-01-09T10:00:00.000Z');
    assert.deepEqual(result, RESULT);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.query.get('q'), 'page.domain:example.com');
  });

  test('the example of engines.md', async () => {
    const { harness: small } = await setup(reply.json({
      results: [
        {
          _id: '0194...', task: { url: 'https://example.com/', time: '2026-01-09T10:00:00.000Z', visibility: 'public' },
          page: { domain: 'example.com', ip: '93.184.215.14', url: 'https://example.com/', country: 'US', status: '200' },
          result: 'https://urlscan.io/api/v1/result/0194.../',
        },
        { _id: '...', page: { domain: 'www.example.com' } },
      ],
      total: 1523, took: 12, has_more: true,
    }));
    assert.deepEqual(await small.run('example.com', 'FQDN'), {
      scan_count: 1523,
      top_domains: [{ domain: 'example.com', count: 1 }, { domain: 'www.example.com', count: 1 }],
      link: 'https://urlscan.io/search/#page.domain:example.com',
      last_scan: '2026-01-09T10:00:00.000Z',
    });
  });

  test('at most 5 top domains, most scanned first', async () => {
    const domains = ['a.example', 'b.example', 'b.example', 'c.example', 'd.example', 'e.example', 'f.example', 'f.example', 'f.example'];
    const { harness: many } = await setup(reply.json({
      results: domains.map((d, i) => scan(`id-${i}`, d, `2026-01-0${(i % 9) + 1}T00:00:00.000Z`)), total: 9, took: 5, has_more: false,
    }));
    const result = await many.run('example.com', 'FQDN') as UrlscanResult;
    assert.deepEqual(result.top_domains, [
      { domain: 'f.example', count: 3 },
      { domain: 'b.example', count: 2 },
      { domain: 'a.example', count: 1 },
      { domain: 'c.example', count: 1 },
      { domain: 'd.example', count: 1 },
    ]);
    assert.equal(result.last_scan, '2026-01-09T00:00:00.000Z');
  });

  // Bug in the reference (engines.md 8 item 20): HEAD percent-encoded the value and then sent
  // it as a parameter (q=ip%3A2001%253Adb8...), v0.11 did not encode it at all. Here the
  // upstream receives exactly `<field>:<value>`, encoded once on the wire.
  test('Bug fixed: the query reaches urlscan encoded once', async () => {
    fake.reset();
    await harness.run('2001:db8::1', 'IPv6');
    await harness.run('https://user:pw@login.example.com:8443/a?b=c', 'URL');
    assert.deepEqual(fake.requests.map((r) => r.query.get('q')), ['ip:"2001:db8::1"', 'page.domain:login.example.com']);
  });

  test('IPv6 link: the quoted query in the fragment', async () => {
    const result = await harness.run('2001:db8::1', 'IPv6') as UrlscanResult;
    assert.equal(result.link, 'https://urlscan.io/search/#ip:%222001:db8::1%22');
  });

  test('hash: lower-cased under files.<type>', async () => {
    fake.reset();
    await harness.run('E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855', 'SHA256');
    assert.equal(fake.requests[0]!.query.get('q'), 'files.sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  test('no scan: the empty result, not null', async () => {
    const result = await harness.run('198.51.100.7', 'IPv4') as UrlscanResult;
    assert.deepEqual(result, { scan_count: 0, top_domains: [], link: 'https://urlscan.io/search/#ip:198.51.100.7', last_scan: null });
    assert.equal(engine.summary(result), 'no scans');
  });

  test('unparsable URL: null, no request', async () => {
    fake.reset();
    assert.equal(await harness.run('http://exa mple.com/', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_23 minimal and degenerate answers (issue 26)', () => {
  const none = (total: number): UrlscanResult => ({ scan_count: total, top_domains: [], link: 'https://urlscan.io/search/#page.domain:example.com', last_scan: null });

  test('the minimal answer, an empty object: no scan', async () => {
    const { harness } = await setup(reply.json({}));
    assert.deepEqual(await harness.run('example.com', 'FQDN'), none(0));
  });

  test('results null, "", {} or null entries; total null, "" or text', async () => {
    for (const [answer, total] of [
      [{ results: null, total: null }, 0],
      [{ results: '', total: '' }, 0],
      [{ results: {}, total: 4 }, 4],
      [{ results: [null, null], total: '1523' }, 1523],
      [{ total: 3, took: 2 }, 3],
    ] as const) {
      const { harness } = await setup(reply.json(answer));
      assert.deepEqual(await harness.run('example.com', 'FQDN'), none(total), JSON.stringify(answer));
    }
  });

  test('one scan object in place of the list, no total: that scan, counted', async () => {
    const { harness } = await setup(reply.json({ results: SEARCH.results[1] }));
    assert.deepEqual(await harness.run('example.com', 'FQDN'), {
      ...none(1), top_domains: [{ domain: 'example.com', count: 1 }], last_scan: '2026-01-08T09:30:00.000Z',
    });
  });

  test('minimal scans: no task, no page, null or "" domain and time', async () => {
    const { harness } = await setup(reply.json({ results: [{}, { task: null, page: null }, { task: { time: '' }, page: { domain: '' } }, { page: { domain: 'example.com' } }], total: null }));
    // A domain sent as "" is counted as "" (issue 32; it was counted as "Unknown" before), as the reference.
    const result = await harness.run('example.com', 'FQDN') as UrlscanResult;
    assert.deepEqual(result, {
      ...none(4), top_domains: [{ domain: 'Unknown', count: 2 }, { domain: '', count: 1 }, { domain: 'example.com', count: 1 }],
    });
    assert.equal(engine.details!(result, 'example.com').find((f) => f.label === 'Top page domains')?.value, 'Unknown (2), (empty) (1), example.com (1)');
  });
});

describe('provider_23 upstream failures', () => {
  test('HTTP 500: an error, not an empty result', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(sequence(reply.tooMany(1), reply.json(SEARCH)));
    assert.deepEqual(await harness.run('example.com', 'FQDN'), RESULT);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('example.com', 'FQDN'), /malformed JSON/);
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    // A missing `results` and a total sent as text were refused here before issue 26; they are
    // now read (see the minimal and degenerate answers below).
    const { harness } = await setup(reply.json({ total: 3, results: [{ page: { domain: ['example.com'] } }] }));
    await rejectsWith(harness.run('example.com', 'FQDN'), /unexpected answer from upstream at results\.0\.page\.domain/);
    const { harness: badTotal } = await setup(reply.json({ results: [], total: 'many' }));
    await rejectsWith(badTotal.run('example.com', 'FQDN'), /unexpected answer from upstream at total/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});
