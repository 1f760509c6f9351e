import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { codeSearchLookup, type CodeSearchResult } from '../../engines/github.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

/** grep.app's answer for "evil.example": 7 files in 6 repositories (owner1/repo1 twice). */
const SEARCH = {
  time: 42,
  facets: {
    count: 7,
    lang: { buckets: [{ val: 'Python', count: 3 }, { val: 'Markdown', count: 2 }, { val: 'Text', count: 2 }] },
    repo: { buckets: [{ val: 'owner1/repo1', count: 2 }, { val: 'owner2/repo2', count: 1 }] },
    path: { buckets: [{ val: 'src/', count: 1 }] },
  },
  hits: {
    total: 7,
    hits: [
      {
        repo: 'owner1/repo1', branch: 'main', path: 'src/config.py',
        content: { snippet: '<table class="highlight-table"><tr data-line="12"><td><div class="lineno">12</div></td><td><div class="highlight"><pre>BLOCKLIST = [&quot;<mark>evil.example</mark>&quot;]</pre></div></td></tr></table>' },
        total_matches: '1',
      },
      { repo: 'owner1/repo1', branch: 'main', path: 'docs/list.md', content: { snippet: '<table>...</table>' }, total_matches: '3' },
      { repo: 'owner2/repo2', branch: 'dev', path: 'iocs.txt', content: { snippet: '<table>...</table>' }, total_matches: '1' },
      { repo: 'owner3/repo3', branch: 'master', path: 'feeds/domains.csv', content: { snippet: '<table>...</table>' }, total_matches: '1' },
      { repo: 'owner4/repo4', branch: 'main', path: 'README.md', content: { snippet: '<table>...</table>' }, total_matches: '2' },
      { repo: 'owner5/repo5', branch: 'gh-pages', path: 'index.html', content: { snippet: '<table>...</table>' }, total_matches: '1' },
      { repo: 'owner6/repo6', branch: 'main', path: 'rules.yar', content: { snippet: '<table>...</table>' }, total_matches: '1' },
    ],
  },
};

/** What SEARCH gives: one entry per repository, in hit order, at most 5. */
const RESULT: CodeSearchResult = {
  results: [
    { title: 'owner1/repo1', url: 'https://github.com/owner1/repo1/blob/main/src/config.py', description: 'src/config.py' },
    { title: 'owner2/repo2', url: 'https://github.com/owner2/repo2/blob/dev/iocs.txt', description: 'iocs.txt' },
    { title: 'owner3/repo3', url: 'https://github.com/owner3/repo3/blob/master/feeds/domains.csv', description: 'feeds/domains.csv' },
    { title: 'owner4/repo4', url: 'https://github.com/owner4/repo4/blob/main/README.md', description: 'README.md' },
    { title: 'owner5/repo5', url: 'https://github.com/owner5/repo5/blob/gh-pages/index.html', description: 'index.html' },
  ],
  total: 7,
};

const NO_HITS = { time: 3, facets: { count: 0 }, hits: { total: 0, hits: [] } };

const closers: (() => Promise<void>)[] = [];

async function setup(route: FakeRoute, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ 'GET /api/search': route });
  const harness = engineHarness(engine, { settings: { base_url: `${fake.url}/api/search`, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}


after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_07 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_07');
    assert.equal(engine.service, 'github');
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, []);
    assert.equal(engine.defaults.base_url, 'https://grep.app/api/search');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, codeSearchLookup);
  });

  test('summary', () => {
    assert.equal(engine.summary(RESULT), '7 code hits: owner1/repo1, owner2/repo2, owner3/repo3 +2 more');
    assert.equal(engine.summary({ results: [RESULT.results[0]!], total: 1 }), '1 code hit: owner1/repo1');
    assert.equal(engine.summary({ results: [] }), 'no code hits');
  });

  test('details: the count, each file linked to GitHub, the search on grep.app', () => {
    const details = engine.details!(RESULT, 'evil.example');
    assert.deepEqual(details.slice(0, 3), [
      { label: 'Code hits', value: '7' },
      { label: 'owner1/repo1', value: 'src/config.py', href: 'https://github.com/owner1/repo1/blob/main/src/config.py' },
      { label: 'owner2/repo2', value: 'iocs.txt', href: 'https://github.com/owner2/repo2/blob/dev/iocs.txt' },
    ]);
    assert.equal(details.length, 7);
    assert.deepEqual(details[5], { label: 'owner5/repo5', value: 'index.html', href: 'https://github.com/owner5/repo5/blob/gh-pages/index.html' });
    assert.deepEqual(details[6], {
      label: 'Search on grep.app',
      value: 'https://grep.app/search?q=evil.example',
      href: 'https://grep.app/search?q=evil.example',
    });
    assert.deepEqual(engine.details!({ results: [] }, 'https://x.example/?a=1&b=2'), [
      { label: 'Code hits', value: '0' },
      {
        label: 'Search on grep.app',
        value: 'https://grep.app/search?q=https%3A%2F%2Fx.example%2F%3Fa%3D1%26b%3D2',
        href: 'https://grep.app/search?q=https%3A%2F%2Fx.example%2F%3Fa%3D1%26b%3D2',
      },
    ]);
  });
});

describe('provider_07 against a loopback grep.app', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup((req) => (req.query.get('q') === 'nothing.example' ? reply.json(NO_HITS) : reply.json(SEARCH))));
  });

  test('hits: first file per repository, at most 5, with the total', async () => {
    fake.reset();
    const result = await harness.run('evil.example', 'FQDN') as CodeSearchResult;
    assert.deepEqual(result, RESULT);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.query.get('q'), 'evil.example');
  });

  test('the example of engines.md, field by field', async () => {
    const { harness: small } = await setup(reply.json({
      time: 42, facets: {},
      hits: { total: 3, hits: [
        { repo: 'owner1/repo1', branch: 'main', path: 'src/config.py', content: { snippet: '<table>...</table>' } },
        { repo: 'owner1/repo1', branch: 'main', path: 'docs/list.md' },
        { repo: 'owner2/repo2', branch: 'dev', path: 'iocs.txt' },
      ] },
    }));
    const result = await small.run('evil.example', 'FQDN') as CodeSearchResult;
    assert.equal(result.total, 3);
    assert.equal(result.results.length, 2);
    assert.deepEqual(result.results[0], { title: 'owner1/repo1', url: 'https://github.com/owner1/repo1/blob/main/src/config.py', description: 'src/config.py' });
    assert.deepEqual(result.results[1], { title: 'owner2/repo2', url: 'https://github.com/owner2/repo2/blob/dev/iocs.txt', description: 'iocs.txt' });
  });

  test('the raw value is the query, encoded once by the client (URL with query string, e-mail, hash)', async () => {
    const values: [string, 'URL' | 'Email' | 'SHA256' | 'IPv6'][] = [
      ['https://user:pw@evil.example:8443/a b/login.php?id=1&next=/x#frag', 'URL'],
      ['jane.doe+tag@evil.example', 'Email'],
      ['E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855', 'SHA256'],
      ['2001:db8::1', 'IPv6'],
    ];
    for (const [value, type] of values) {
      fake.reset();
      await harness.run(value, type);
      assert.equal(fake.requests[0]!.query.get('q'), value);
    }
  });

  test('browser-like headers (grep.app answers 429 to library agents)', async () => {
    fake.reset();
    await harness.run('evil.example', 'FQDN');
    const headers = fake.requests[0]!.headers;
    assert.match(String(headers['user-agent']), /^Mozilla\/5\.0 .*Firefox\//);
    assert.equal(headers.accept, 'application/json, text/plain, */*');
    assert.equal(headers.referer, `${fake.url}/`);
    assert.equal(headers.origin, fake.url);
    assert.equal(headers['sec-fetch-mode'], 'cors');
  });

  test('user_agent setting', async () => {
    const { fake: other, harness: custom } = await setup(reply.json(NO_HITS), { user_agent: 'analyst-bot/1.0' });
    await custom.run('evil.example', 'FQDN');
    assert.equal(other.requests[0]!.headers['user-agent'], 'analyst-bot/1.0');
  });

  test('no hit: {"results": []} without total', async () => {
    const result = await harness.run('nothing.example', 'FQDN') as CodeSearchResult;
    assert.deepEqual(result, { results: [] });
    assert.ok(!('total' in result));
    assert.equal(engine.summary(result), 'no code hits');
  });

  test('older format: values wrapped as {"raw": ...}', async () => {
    const { harness: old } = await setup(reply.json({
      facets: {},
      hits: { total: 2, hits: [
        { repo: { raw: 'owner1/repo1' }, branch: { raw: 'main' }, path: { raw: 'src/config.py' }, content: { snippet: '' } },
        { repo: { raw: 'owner2/repo2' }, branch: { raw: 'dev' }, path: { raw: 'iocs.txt' } },
      ] },
    }));
    assert.deepEqual(await old.run('evil.example', 'FQDN'), {
      results: [RESULT.results[0], RESULT.results[1]],
      total: 2,
    });
  });

  // Better than the reference, which concatenated branch and path raw into the link.
  test('branch and path are percent-encoded per segment in the link', async () => {
    const { harness: odd } = await setup(reply.json({
      facets: {},
      hits: { total: 1, hits: [{ repo: 'owner1/repo1', branch: 'feature/iocs', path: 'lists/bad #1?.txt' }] },
    }));
    const result = await odd.run('evil.example', 'FQDN') as CodeSearchResult;
    assert.deepEqual(result.results, [{
      title: 'owner1/repo1',
      url: 'https://github.com/owner1/repo1/blob/feature/iocs/lists/bad%20%231%3F.txt',
      description: 'lists/bad #1?.txt',
    }]);
  });
});

describe('provider_07: minimal and degenerate answers (issue 26)', () => {
  /** What grep.app's `answer` gives. */
  async function lookup(answer: unknown): Promise<CodeSearchResult> {
    const { harness } = await setup(reply.json(answer));
    return await harness.run('evil.example', 'FQDN') as CodeSearchResult;
  }
  const FILE = { title: 'owner1/repo1', url: 'https://github.com/owner1/repo1/blob/main/a.txt', description: 'a.txt' };

  test('the minimal answer: hits with their total and hits, each hit its repo, branch and path alone', async () => {
    assert.deepEqual(await lookup({ hits: { total: 1, hits: [{ repo: 'owner1/repo1', branch: 'main', path: 'a.txt' }] } }), { results: [FILE], total: 1 });
  });

  test('no total: the hits sent are the count; none sent: no hit', async () => {
    assert.deepEqual(await lookup({ hits: { hits: [{ repo: 'owner1/repo1', branch: 'main', path: 'a.txt' }] } }), { results: [FILE], total: 1 });
    assert.deepEqual(await lookup({ hits: {} }), { results: [] });
    assert.deepEqual(await lookup({ hits: { total: null, hits: null } }), { results: [] });
  });

  test('total as a numeric string, one hit for a list, null hits', async () => {
    assert.deepEqual(await lookup({ hits: { total: '4', hits: { repo: 'owner1/repo1', branch: 'main', path: 'a.txt' } } }), { results: [FILE], total: 4 });
    assert.deepEqual(await lookup({ hits: { total: 2, hits: [null, { repo: 'owner1/repo1', branch: 'main', path: 'a.txt' }] } }), { results: [FILE], total: 2 });
  });

  test('a hit without branch (or "") links on HEAD; without path (or null, "") to the repository', async () => {
    assert.deepEqual(await lookup({ hits: { total: 4, hits: [
      { repo: 'owner1/repo1', path: 'a.txt' },
      { repo: 'owner2/repo2', branch: null, path: null },
      { repo: { raw: 'owner3/repo3' }, branch: { raw: 'dev' }, path: '' },
      { repo: 'owner4/repo4', branch: '', path: 'b.txt' },
    ] } }), {
      results: [
        { title: 'owner1/repo1', url: 'https://github.com/owner1/repo1/blob/HEAD/a.txt', description: 'a.txt' },
        { title: 'owner2/repo2', url: 'https://github.com/owner2/repo2', description: '' },
        { title: 'owner3/repo3', url: 'https://github.com/owner3/repo3', description: '' },
        { title: 'owner4/repo4', url: 'https://github.com/owner4/repo4/blob/HEAD/b.txt', description: 'b.txt' },
      ],
      total: 4,
    });
  });

  test('no hits object, or not an object: a clean error naming it', async () => {
    const { harness } = await setup(reply.json({ time: 3 }));
    await rejectsWith(harness.run('evil.example', 'FQDN'), /^unexpected answer from upstream at hits: missing$/);
    const { harness: list } = await setup(reply.json({ hits: [] }));
    await rejectsWith(list.run('evil.example', 'FQDN'), /^unexpected answer from upstream at hits: expected an object$/);
  });
});

describe('provider_07 upstream failures', () => {
  test('HTTP 500: an error, not an empty result', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('evil.example', 'FQDN'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(sequence(reply.tooMany(1), reply.json(SEARCH)));
    assert.deepEqual(await harness.run('evil.example', 'FQDN'), RESULT);
    assert.equal(fake.requests.length, 2);
  });

  test('429 without retries left: the error names it', async () => {
    const { harness } = await setup(reply.tooMany(1), { retries: 0 });
    await rejectsWith(harness.run('evil.example', 'FQDN'), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('evil.example', 'FQDN'), /malformed JSON/);
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    const { harness } = await setup(reply.json({ hits: { total: 'many', hits: [] } }));
    await rejectsWith(harness.run('evil.example', 'FQDN'), /unexpected answer from upstream at hits\.total/);
    const { harness: noRepo } = await setup(reply.json({ hits: { total: 1, hits: [{ branch: 'main', path: 'a' }] } }));
    await rejectsWith(noRepo.run('evil.example', 'FQDN'), /unexpected answer from upstream at hits\.hits\.0\.repo/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('evil.example', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});
