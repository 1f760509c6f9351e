import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { rostiDetails, rostiLookup, type RostiResult } from '../../engines/rosti.js';
import { HttpStatusError } from '../../src/http/errors.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { EMPTY, PREFIX, fakeRoutes, fakeSettings, iocs } from '../fakes/rosti.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { KeyWatch } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';
const PATH = `${PREFIX}/iocs`;

/** engines.md 5.24's example as Rösti sends it. */
const EXAMPLE = {
  data: [{
    id: 'ioc-001', value: 'evil.example.com', type: 'domain', category: 'c2', date: '2025-01-15',
    comment: 'seen in loader config', ids: true, report: 'r-2025-0042', timestamp: 1736899200, risk: 'high',
  }],
  meta: { total: 1, has_more: false },
};

const EXAMPLE_RESULT: RostiResult = {
  count: 1,
  results: [{
    value: 'evil.example.com', type: 'domain', category: 'c2', date: '2025-01-15', comment: 'seen in loader config',
    ids: true, report: 'r-2025-0042', link: 'https://rosti.bin.re/reports/r-2025-0042', timestamp: 1736899200, risk: 'high', id: 'ioc-001',
  }],
  total: 1,
  has_more: false,
};

/** Every value the engine returned or threw in these tests, checked for the key at the end. */
const watch = new KeyWatch(KEY);
const closers: (() => Promise<void>)[] = [];

async function setup(route: FakeRoute, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ [`GET ${PATH}`]: route });
  const inner = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY, ...settings } });
  closers.push(() => inner.close(), () => fake.close());
  return { fake, harness: watch.watch(inner) };
}

after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_19 declaration', () => {
  test('catalog fields, credential, quota', () => {
    assert.equal(engine.id, 'provider_19');
    assert.equal(engine.service, 'rosti');
    assert.deepEqual(engine.tags, ['IP', 'domain', 'URL', 'email']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['ROSTI_API_KEY'] }]);
    assert.equal(engine.defaults.base_url, 'https://api.rosti.bin.re/v2');
    assert.equal(typeof engine.defaults.rate_limit, 'number');
    assert.equal(typeof engine.defaults.rate_window_ms, 'number');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, rostiLookup);
  });

  test('summary', () => {
    assert.equal(engine.summary(EXAMPLE_RESULT), '1 IOC in 1 report (c2)');
    const two = { ...EXAMPLE_RESULT, results: [...EXAMPLE_RESULT.results, { ...EXAMPLE_RESULT.results[0]!, report: 'r-2', category: 'payload_delivery' }] };
    assert.equal(engine.summary({ ...two, count: 2, total: 40, has_more: true }), '40 IOCs in 2 reports (c2, payload_delivery), more available');
    assert.equal(engine.summary({ count: 0, results: [], total: 0, has_more: false }), 'no IOC');
  });
});

describe('provider_19 against a loopback Rösti', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup((req) => {
      const q = req.query.get('q');
      if (q === 'evil.example.com') return reply.json(EXAMPLE);
      if (q === 'clean.example.org') return reply.json(EMPTY);
      return reply.json(iocs(q ?? ''));
    }));
  });

  test('the example of engines.md, field by field; the key in X-API-Key', async () => {
    fake.reset();
    const result = await harness.run('evil.example.com', 'FQDN') as RostiResult;
    assert.equal(result.count, 1);
    assert.equal(result.total, 1);
    assert.equal(result.has_more, false);
    const [item] = result.results;
    assert.equal(item!.value, 'evil.example.com');
    assert.equal(item!.type, 'domain');
    assert.equal(item!.category, 'c2');
    assert.equal(item!.date, '2025-01-15');
    assert.equal(item!.comment, 'seen in loader config');
    assert.equal(item!.ids, true);
    assert.equal(item!.report, 'r-2025-0042');
    assert.equal(item!.link, 'https://rosti.bin.re/reports/r-2025-0042');
    assert.equal(item!.timestamp, 1736899200);
    assert.equal(item!.risk, 'high');
    assert.equal(item!.id, 'ioc-001');
    assert.deepEqual(result, EXAMPLE_RESULT);
    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0]!;
    assert.equal(req.method, 'GET');
    assert.equal(req.path, PATH);
    assert.equal(req.query.get('q'), 'evil.example.com');
    assert.equal(req.query.get('pattern'), 'true');
    assert.equal(req.headers['x-api-key'], KEY);
    assert.ok(![...req.query.values()].includes(KEY), 'the key is not in the URL');
  });

  test('every observable type is searched as written', async () => {
    fake.reset();
    const values: [string, 'IPv4' | 'IPv6' | 'URL' | 'Email' | 'SHA256'][] = [
      ['185.220.101.4', 'IPv4'],
      ['2001:db8::1', 'IPv6'],
      ['https://evil.example.com/gate.php?id=1&x=2', 'URL'],
      ['jane.doe@example.com', 'Email'],
      ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'SHA256'],
    ];
    for (const [value, type] of values) {
      const result = await harness.run(value, type) as RostiResult;
      assert.equal(result.count, 2, value);
      assert.equal(result.results[0]!.value, value);
    }
    assert.deepEqual(fake.requests.map((r) => r.query.get('q')), values.map(([value]) => value));
  });

  test('all IOCs, not truncated; several reports', async () => {
    const many = { data: Array.from({ length: 25 }, (_, i) => ({ ...EXAMPLE.data[0], id: `ioc-${i}`, report: `r-${i % 3}` })), meta: { total: 60, has_more: true } };
    const { harness: big } = await setup(reply.json(many));
    const result = await big.run('evil.example.com', 'FQDN') as RostiResult;
    assert.equal(result.count, 25);
    assert.equal(result.results.length, 25);
    assert.equal(result.total, 60);
    assert.equal(result.has_more, true);
    assert.equal(engine.summary(result), '60 IOCs in 3 reports (c2), more available');
  });

  test('missing fields are null; no report, no link; non-object entries skipped', async () => {
    const { harness: sparse } = await setup(reply.json({
      data: [{ value: '185.220.101.4', type: 'ip' }, 'garbage', null, 7, ['x'], { id: 42, report: 'r/with space', ids: ['sid:2030001'], timestamp: '2025-01-15T10:00:00Z' }],
    }));
    const result = await sparse.run('185.220.101.4', 'IPv4');
    assert.deepEqual(result, {
      count: 2,
      results: [
        { value: '185.220.101.4', type: 'ip', category: null, date: null, comment: null, ids: null, report: null, link: null, timestamp: null, risk: null, id: null },
        {
          value: null, type: null, category: null, date: null, comment: null, ids: ['sid:2030001'], report: 'r/with space',
          link: 'https://rosti.bin.re/reports/r%2Fwith%20space', timestamp: '2025-01-15T10:00:00Z', risk: null, id: 42,
        },
      ],
      total: null,
      has_more: false,
    });
  });

  test('details: count, categories, risk, types, values, dates, then each report linked to its page', async () => {
    const result = await harness.run('bad.example.net', 'FQDN') as RostiResult;
    assert.deepEqual(engine.details!(result, 'bad.example.net'), [
      { label: 'IOCs', value: '2' },
      { label: 'Categories', value: 'c2, payload_delivery' },
      { label: 'Risk', value: 'high, medium' },
      { label: 'IOC types', value: 'domain, url' },
      { label: 'Matched values', value: 'bad.example.net, hxxps://bad.example.net/panel/login.php' },
      { label: 'Dates', value: '2025-01-15 – 2025-02-03' },
      { label: 'Report', value: 'r-2025-0042: seen in loader config', href: 'https://rosti.bin.re/reports/r-2025-0042' },
      { label: 'Report', value: 'r-2025-0107: second stage download', href: 'https://rosti.bin.re/reports/r-2025-0107' },
    ]);
    // Seven reports and more IOCs upstream: five reports linked, the rest counted.
    const ioc = EXAMPLE_RESULT.results[0]!;
    const seven = Array.from({ length: 7 }, (_, i) => ({ ...ioc, report: `r-${i}`, link: `https://rosti.bin.re/reports/r-${i}`, comment: null }));
    const fields = rostiDetails({ count: 7, results: seven, total: 40, has_more: true });
    assert.deepEqual(fields[0], { label: 'IOCs', value: '40 (more available)' });
    assert.deepEqual(fields.filter((f) => f.label === 'Report').map((f) => [f.value, f.href]), [0, 1, 2, 3, 4].map((i) => [`r-${i}`, `https://rosti.bin.re/reports/r-${i}`]));
    assert.deepEqual(fields.at(-1), { label: 'More reports', value: '2' });
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, rostiDetails);
  });

  test('no match: the empty result, not null', async () => {
    const result = await harness.run('clean.example.org', 'FQDN');
    assert.deepEqual(result, { count: 0, results: [], total: 0, has_more: false });
    assert.equal(engine.summary(result as RostiResult), 'no IOC');
  });
});

describe('provider_19 minimal and degenerate answers (issue 26)', () => {
  const NONE: RostiResult = { count: 0, results: [], total: null, has_more: false };
  const BARE = { value: null, type: null, category: null, date: null, comment: null, ids: null, report: null, link: null, timestamp: null, risk: null, id: null };

  test('the minimal answer, an empty object: no IOC', async () => {
    const { harness } = await setup(reply.json({}));
    assert.deepEqual(await harness.run('evil.example.com', 'FQDN'), NONE);
  });

  test('data null, "", {} or a string; meta null or empty: no IOC, total null, has_more false', async () => {
    for (const answer of [{ data: null }, { data: '' }, { data: {} }, { data: 'none', meta: null }, { data: [], meta: {} }, { meta: { total: 0 } }]) {
      const { harness } = await setup(reply.json(answer));
      const expected = answer.meta && 'total' in answer.meta ? { ...NONE, total: 0 } : NONE;
      assert.deepEqual(await harness.run('evil.example.com', 'FQDN'), expected, JSON.stringify(answer));
    }
  });

  test('one IOC object in place of the list: that IOC', async () => {
    const { harness } = await setup(reply.json({ data: EXAMPLE.data[0], meta: EXAMPLE.meta }));
    assert.deepEqual(await harness.run('evil.example.com', 'FQDN'), EXAMPLE_RESULT);
  });

  test('null entries and fields, "" and numbers for text, 0/1/"" for flags, numbers as text in meta', async () => {
    const { harness } = await setup(reply.json({
      data: [
        null,
        { value: 'evil.example.com', type: '', category: null, date: '', comment: '', ids: 0, report: '', timestamp: '', risk: 3, id: '' },
        { value: 'evil.example.com', ids: 1, report: 2025 },
        { value: 'evil.example.com', ids: '' },
      ],
      meta: { total: '3', has_more: 0 },
    }));
    // Texts, `timestamp` and `id` sent as "" are kept as sent (issue 32; they were null before), as the reference copied them.
    const result = await harness.run('evil.example.com', 'FQDN') as RostiResult;
    assert.deepEqual(result, {
      count: 3,
      results: [
        { ...BARE, value: 'evil.example.com', type: '', date: '', comment: '', ids: false, report: '', timestamp: '', risk: '3', id: '' },
        { ...BARE, value: 'evil.example.com', ids: true, report: '2025', link: 'https://rosti.bin.re/reports/2025' },
        { ...BARE, value: 'evil.example.com', ids: false },
      ],
      total: 3,
      has_more: false,
    });
    // No empty report, category or date in the summary or the card.
    assert.equal(engine.summary(result), '3 IOCs in 1 report');
    assert.deepEqual(engine.details!(result, 'evil.example.com').map((f) => [f.label, f.value]), [
      ['IOCs', '3'], ['Risk', '3'], ['Matched values', 'evil.example.com'], ['Report', '2025'],
    ]);
    const { harness: more } = await setup(reply.json({ data: [], meta: { total: null, has_more: '1' } }));
    assert.deepEqual(await more.run('evil.example.com', 'FQDN'), { ...NONE, has_more: true });
  });

  test('what cannot be read still fails, naming the field', async () => {
    const { harness } = await setup(reply.json({ data: [{ value: 'a', ids: 'maybe' }] }));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at data\.0\.ids/);
    const { harness: flagWord } = await setup(reply.json({ data: [], meta: { has_more: 'perhaps' } }));
    await rejectsWith(flagWord.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at meta\.has_more: expected a boolean/);
  });
});

describe('provider_19 credentials and upstream failures', () => {
  test('401: a clear one-line error, no key', async () => {
    const { harness } = await setup(reply.json({ detail: `Invalid API key ${KEY}` }, 401));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 401 Unauthorized$/, { type: HttpStatusError, secret: KEY });
  });

  test('403: a clear one-line error, no key', async () => {
    const { harness } = await setup(reply.json({ detail: 'Not authenticated' }, 403));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 403 Forbidden$/, { type: HttpStatusError, secret: KEY });
  });

  test('HTTP 500: an error, not null', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/, { secret: KEY });
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(sequence(reply.tooMany(1), reply.json(EXAMPLE)));
    assert.deepEqual(await harness.run('evil.example.com', 'FQDN'), EXAMPLE_RESULT);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /malformed JSON/, { secret: KEY });
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    // A missing `data` was refused here before issue 26; it is now no IOC (see below).
    const { harness } = await setup(reply.json([EXAMPLE]));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at \(root\)/);
    const { harness: badItem } = await setup(reply.json({ data: ['skipped', { value: 'a' }, { value: 'b', risk: { level: 9 } }] }));
    await rejectsWith(badItem.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at data\.2\.risk/);
    const { harness: badMeta } = await setup(reply.json({ data: [], meta: { total: 'many' } }));
    await rejectsWith(badMeta.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at meta\.total/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`), { secret: KEY });
  });
});

describe('provider_19 through the runner', () => {
  let fake: FakeHttpServer;
  let withKey: RunnerHarness;
  let withoutKey: RunnerHarness;
  before(async () => {
    fake = await startFakeHttp(fakeRoutes());
    withKey = runnerHarness([engine], { settings: { provider_19: { ...fakeSettings(fake.url), api_key: KEY } } });
    withoutKey = runnerHarness([engine], { settings: { provider_19: fakeSettings(fake.url) } });
  });
  after(async () => {
    await Promise.all([withKey.close(), withoutKey.close()]);
    await fake.close();
  });

  test('missing key: "not configured: api_key", no request', async () => {
    fake.reset();
    const [result] = await withoutKey.analyze([{ value: 'jane.doe@example.com', type: 'Email' }], ['rosti']);
    assert.equal(result!.rosti, null);
    assert.deepEqual(result!.errors, { rosti: 'not configured: engines.provider_19.api_key or OAS_ROSTI_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('with a key: the fixture\'s result, and the key nowhere in it', async () => {
    fake.reset();
    const [result] = await withKey.analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['provider_19']);
    assert.equal(result!.errors, undefined);
    const rosti = result!.provider_19 as RostiResult;
    assert.equal(rosti.count, 2);
    assert.deepEqual(rosti.results.map((r) => r.link), ['https://rosti.bin.re/reports/r-2025-0042', 'https://rosti.bin.re/reports/r-2025-0107']);
    assert.equal(result!.reversed_ip, undefined, 'not an IP-only engine: no pivot');
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers['x-api-key'], KEY);
    watch.result(result);
  });

  test('bad key: the error in errors, without the key', async () => {
    const bad = await startFakeHttp({ [`GET ${PATH}`]: reply.json({ detail: `Invalid API key ${KEY}` }, 401) });
    const runner = runnerHarness([engine], { settings: { provider_19: { ...fakeSettings(bad.url), api_key: KEY } } });
    try {
      const [result] = await runner.analyze([{ value: '185.220.101.4', type: 'IPv4' }], ['provider_19']);
      assert.equal(result!.provider_19, null);
      assert.deepEqual(result!.errors, { provider_19: 'HTTP 401 Unauthorized (key refused: check engines.provider_19.api_key or OAS_ROSTI_API_KEY)' });
      watch.result(result);
    } finally {
      await runner.close();
      await bad.close();
    }
  });
});

describe('provider_19 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(16);
  });
});
