import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  ransomwareLiveDetails, ransomwareLiveLookup, ransomwareLiveQuery, ransomwareLiveSummary, type RansomwareLiveResult,
} from '../../engines/ransomware_live.js';
import { loadConfig } from '../../src/config/load.js';
import { Catalog } from '../../src/engine/catalog.js';
import { EngineError, type EngineDefinition } from '../../src/engine/contract.js';
import { BadResponseError, HttpStatusError, NetworkError, TimeoutError } from '../../src/http/errors.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeReply } from '../fakes/http.js';
import {
  ACME, EXAMPLE_CORP, EXAMPLE_SHOP, INVALID_KEY, PREFIX, envelope, fakeRoutes, fakeSettings, permalink, searchHandler,
} from '../fakes/ransomware_live.js';
import { engineHarness } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { neighbour, runnerHarness, suiteRunners } from '../helpers/runner.js';
import { removeTempDir, tempDir } from '../helpers/temp.js';

const KEY = 'RL-PRO-SECRET-KEY-1234567890';
const watch = new KeyWatch(KEY);

/** engines.md 9.2's example result. */
const EXAMPLE_RESULT: RansomwareLiveResult = {
  found: true,
  count: 1,
  victims: [{
    post_title: 'Example Corp',
    group_name: 'lockbit3',
    website: 'example.com',
    discovered: '2025-03-14 08:21:45.123456',
    permalink: 'https://www.ransomware.live/id/RXhhbXBsZSBDb3JwQGxvY2tiaXQz',
  }],
  search_url: 'https://www.ransomware.live/search?q=example.com&scope=all',
};

const kept = (v: Record<string, unknown>) => ({
  post_title: v.post_title, group_name: v.group_name, website: v.website, discovered: v.discovered, permalink: v.permalink,
});

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('ransomware_live declaration', () => {
  test('catalog fields: the reference\'s name, beyond the spec, never default', () => {
    assert.equal(engine.id, 'ransomware_live');
    assert.equal(engine.service, 'ransomware_live');
    assert.equal(engine.label, 'Ransomware.Live');
    assert.deepEqual(engine.catalogs, []);
    assert.deepEqual(engine.tags, ['domain', 'URL']);
    assert.ok(!engine.tags.includes('default'));
    assert.deepEqual(engine.types, ['FQDN', 'URL']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'Pro API key', env: ['RANSOMWARE_LIVE_API_KEY'] }]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 10_000, base_url: 'https://api-pro.ransomware.live', rate_limit: 3000, rate_window_ms: 86_400_000,
    });
    assert.equal(engine.run, ransomwareLiveLookup);
    assert.equal(engine.summary, ransomwareLiveSummary);
    assert.equal(engine.details, ransomwareLiveDetails);
    for (const variant of ['main', 'older'] as const) {
      const catalog = new Catalog([engine as EngineDefinition], variant);
      assert.equal(catalog.variantOf(catalog.find('ransomware_live')!), 'beyond');
      assert.equal(catalog.isDefault(catalog.find('ransomware_live')!), false);
    }
  });

  test('the key from the reference\'s environment variable RANSOMWARE_LIVE_API_KEY', () => {
    const cwd = tempDir('oas-rl-');
    const { config } = loadConfig({ env: { RANSOMWARE_LIVE_API_KEY: KEY }, cwd, engines: [engine as EngineDefinition] });
    assert.equal(config.engines.ransomware_live?.api_key, KEY);
    removeTempDir(cwd);
  });

  test('query: a domain lower-cased, no trailing dot, punycode; a URL\'s parsed host', () => {
    assert.equal(ransomwareLiveQuery({ value: 'Example.COM.', type: 'FQDN' }), 'example.com');
    assert.equal(ransomwareLiveQuery({ value: 'bücher.de', type: 'FQDN' }), 'xn--bcher-kva.de');
    assert.equal(ransomwareLiveQuery({ value: 'https://Shop.Example.COM:8443/cart?x=1', type: 'URL' }), 'shop.example.com');
    assert.equal(ransomwareLiveQuery({ value: 'https://admin:pw@example.com/', type: 'URL' }), 'example.com');
    assert.equal(ransomwareLiveQuery({ value: 'https://', type: 'URL' }), null);
    assert.equal(ransomwareLiveQuery({ value: 'a@example.com', type: 'Email' }), null);
  });

  test('summary and card', () => {
    assert.equal(ransomwareLiveSummary(EXAMPLE_RESULT), '1 victim: Example Corp · group lockbit3');
    const two: RansomwareLiveResult = {
      found: true, count: 2, victims: [kept(EXAMPLE_CORP), kept(EXAMPLE_SHOP)] as RansomwareLiveResult['victims'],
      search_url: EXAMPLE_RESULT.search_url,
    };
    assert.equal(ransomwareLiveSummary(two), '2 victims: Example Corp, Example Shop · groups lockbit3, play');
    assert.equal(ransomwareLiveSummary({ found: false, count: 0, victims: [], search_url: EXAMPLE_RESULT.search_url }), 'no victim listed');
    assert.deepEqual(ransomwareLiveDetails(two), [
      { label: 'Listed as a victim', value: 'yes' },
      { label: 'Victims', value: '2' },
      { label: 'Groups', value: 'lockbit3, play' },
      { label: 'Victim', value: 'Example Corp — lockbit3, discovered 2025-03-14 (example.com)', href: permalink('Example Corp', 'lockbit3') },
      { label: 'Victim', value: 'Example Shop — play, discovered 2024-11-02 (shop.example.com)', href: permalink('Example Shop', 'play') },
      { label: 'Search Ransomware.live', value: EXAMPLE_RESULT.search_url, href: EXAMPLE_RESULT.search_url },
    ]);
    assert.deepEqual(ransomwareLiveDetails({ found: false, count: 0, victims: [], search_url: EXAMPLE_RESULT.search_url }), [
      { label: 'Listed as a victim', value: 'no' },
      { label: 'Victims', value: '0' },
      { label: 'Search Ransomware.live', value: EXAMPLE_RESULT.search_url, href: EXAMPLE_RESULT.search_url },
    ]);
    // A victim without any field still gets a line, without a link.
    const bare = ransomwareLiveDetails({
      found: true, count: 1, victims: [{ post_title: null, group_name: null, website: null, discovered: null, permalink: null }],
      search_url: EXAMPLE_RESULT.search_url,
    });
    assert.deepEqual(bare.find((f) => f.label === 'Victim'), { label: 'Victim', value: 'unnamed victim' });
  });
});

describe('ransomware_live against a loopback Pro API', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY, { watch });

  const onlyExample = (req: FakeRequest): FakeReply => (req.query.get('q') === 'example.com'
    ? reply.json({ ...envelope('example.com', [EXAMPLE_CORP]) })
    : reply.json(envelope(req.query.get('q') ?? '', [])));

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/victims/search': searchHandler({ key: KEY }),
      'GET /example/victims/search': onlyExample,
      'GET /forbidden/victims/search': (req) => reply.json({ detail: `API key ${String(req.headers['x-api-key'])} has expired` }, 403),
      'GET /unavailable/victims/search': reply.status(503, { detail: 'Service Unavailable' }),
      'GET /flaky/victims/search': sequence(reply.status(502, { detail: 'Bad Gateway' }), searchHandler({ key: KEY })),
      'GET /quota/victims/search': reply.json({ detail: 'Daily quota of 3000 requests exceeded' }, 429),
      'GET /quota-then-ok/victims/search': sequence(reply.tooMany(0), searchHandler({ key: KEY })),
      'GET /malformed/victims/search': reply.malformed(),
      'GET /list/victims/search': reply.json([EXAMPLE_CORP]),
      'GET /string-victims/victims/search': reply.json({ query: 'example.com', count: 1, victims: 'Example Corp' }),
      'GET /wrong-field/victims/search': reply.json(envelope('example.com', [EXAMPLE_CORP, { ...EXAMPLE_SHOP, group_name: 42 }])),
      'GET /odd-items/victims/search': reply.json(envelope('example.com', ['Example Corp', null, 7, [EXAMPLE_SHOP], { post_title: 'Bare Victim' }, EXAMPLE_CORP])),
      'GET /no-victims-key/victims/search': reply.json({ query: 'example.com', count: 0 }),
      'GET /null-victims/victims/search': reply.json({ query: 'example.com', count: 0, victims: null }),
      'GET /error-200/victims/search': (req) => reply.json({ detail: `Key ${String(req.headers['x-api-key'])} is not enabled for search` }),
      'GET /hang/victims/search': reply.hang(),
    });
    closers.push(() => fake.close());
  });

  test('engines.md\'s example, exactly: four keys, five fields per victim, the envelope\'s extras dropped', async () => {
    const result = await harness('example').run('example.com', 'FQDN');
    assert.deepEqual(result, EXAMPLE_RESULT);
  });

  test('the request: GET <base_url>/victims/search?q=<host>, the key in X-API-KEY only', async () => {
    fake.reset();
    await harness('ok').run('example.com', 'FQDN');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, '/ok/victims/search');
    assert.deepEqual([...req!.query], [['q', 'example.com']]);
    assert.equal(req!.headers['x-api-key'], KEY);
    assert.equal(req!.headers.authorization, undefined);
    assert.ok(!req!.path.includes(KEY) && ![...req!.query.values()].includes(KEY), 'no key in the URL');
  });

  test('a keyword search: every hit counts, in the API\'s order (no filtering to the exact domain)', async () => {
    const result = await harness('ok').run('example.com', 'FQDN');
    assert.deepEqual(result, {
      found: true,
      count: 2,
      victims: [kept(EXAMPLE_CORP), kept(EXAMPLE_SHOP)],
      search_url: 'https://www.ransomware.live/search?q=example.com&scope=all',
    });
  });

  test('a URL: its parsed host is searched', async () => {
    fake.reset();
    const result = await harness('ok').run('https://Shop.Example.com:8443/checkout?step=2', 'URL') as RansomwareLiveResult;
    assert.equal(fake.requests[0]!.query.get('q'), 'shop.example.com');
    assert.deepEqual(result.victims, [kept(EXAMPLE_SHOP)]);
    assert.equal(result.search_url, 'https://www.ransomware.live/search?q=shop.example.com&scope=all');
  });

  test('found by name, a domain in capitals: the same lower-case search', async () => {
    fake.reset();
    const result = await harness('ok').run('ACME-Logistics.de', 'FQDN') as RansomwareLiveResult;
    assert.equal(fake.requests[0]!.query.get('q'), 'acme-logistics.de');
    assert.deepEqual(result.victims, [kept(ACME)]);
  });

  test('not listed: the documented empty result, not null', async () => {
    const result = await harness('ok').run('unknown.example', 'FQDN');
    assert.deepEqual(result, {
      found: false, count: 0, victims: [], search_url: 'https://www.ransomware.live/search?q=unknown.example&scope=all',
    });
  });

  test('the search link percent-encodes the host (an IPv6 literal)', async () => {
    const result = await harness('ok').run('http://[2001:db8::1]/', 'URL') as RansomwareLiveResult;
    assert.equal(result.search_url, 'https://www.ransomware.live/search?q=2001%3Adb8%3A%3A1&scope=all');
  });

  test('not a domain or URL: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('8.8.8.8', 'IPv4'), null);
    assert.equal(await harness('ok').run('https://', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('no key, called directly: an error before any request', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('example.com', 'FQDN'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('wrong key (401): a one-line authentication error naming the service', async () => {
    await watch.rejectsWith(
      harness('ok', { api_key: 'WRONG-KEY-0987654321' }).run('example.com', 'FQDN'),
      /^Ransomware\.live: authentication failed \(HTTP 401 Unauthorized: Invalid or missing API key\)$/,
      { type: EngineError },
    );
  });

  test('403 echoing the key: the reason with the key masked', async () => {
    await watch.rejectsWith(
      harness('forbidden').run('example.com', 'FQDN'),
      /^Ransomware\.live: authentication failed \(HTTP 403 Forbidden: API key \*\*\* has expired\)$/,
      { type: EngineError },
    );
  });

  test('5xx: an error after the retries; a 502 then an answer succeeds', async () => {
    await watch.rejectsWith(harness('unavailable', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 503 Service Unavailable$/, { type: HttpStatusError });
    fake.reset();
    const result = await harness('flaky', { retries: 2 }).run('example.com', 'FQDN') as RansomwareLiveResult;
    assert.equal(result.count, 2);
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('429 (the daily quota): an error after the retries; a 429 then an answer succeeds', async () => {
    fake.reset();
    await watch.rejectsWith(harness('quota', { retries: 1 }).run('example.com', 'FQDN'), /^HTTP 429 Too Many Requests$/, { type: HttpStatusError });
    assert.equal(fake.hits('GET /quota/').length, 2);
    const result = await harness('quota-then-ok', { retries: 2 }).run('example.com', 'FQDN') as RansomwareLiveResult;
    assert.equal(result.count, 2);
  });

  test('a wrong base_url (404): an error, not a silent null; a base_url that is no URL', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 404 Not Found\b/, { type: HttpStatusError });
    await watch.rejectsWith(harness('ok', { base_url: 'api-pro.ransomware.live' }).run('example.com', 'FQDN'), /^Ransomware\.live: base_url is not a URL$/);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed').run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/, { type: BadResponseError });
  });

  test('quirk fixed: a list body, or victims that is no list, is a malformed answer, not "no victim"', async () => {
    await watch.rejectsWith(harness('list').run('example.com', 'FQDN'), /^unexpected answer from upstream at \(root\): Invalid type: Expected Object$/, { type: BadResponseError });
    await watch.rejectsWith(harness('string-victims').run('example.com', 'FQDN'), /^unexpected answer from upstream at victims: .*Array/, { type: BadResponseError });
  });

  test('a victim field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-field').run('example.com', 'FQDN'), /^unexpected answer from upstream at victims\.1\.group_name: /, { type: BadResponseError });
  });

  test('items that are not objects are skipped; absent fields are null', async () => {
    const result = await harness('odd-items').run('example.com', 'FQDN') as RansomwareLiveResult;
    assert.equal(result.count, 2);
    assert.deepEqual(result.victims, [
      { post_title: 'Bare Victim', group_name: null, website: null, discovered: null, permalink: null },
      kept(EXAMPLE_CORP),
    ]);
  });

  test('victims missing or null: no victim', async () => {
    for (const prefix of ['no-victims-key', 'null-victims']) {
      assert.deepEqual(await harness(prefix).run('example.com', 'FQDN'), {
        found: false, count: 0, victims: [], search_url: 'https://www.ransomware.live/search?q=example.com&scope=all',
      });
    }
  });

  test('an error message in a 200 answer without victims: an error, key masked', async () => {
    await watch.rejectsWith(harness('error-200').run('example.com', 'FQDN'), /^Ransomware\.live: Key \*\*\* is not enabled for search$/, { type: EngineError });
  });

  test('a hanging API: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`), { type: TimeoutError });
  });

  test('connection refused: a network error without the key', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('example.com', 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/, { type: NetworkError });
  });
});

describe('ransomware_live: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY, { watch });
  const SEARCH_URL = 'https://www.ransomware.live/search?q=example.com&scope=all';
  const NONE: RansomwareLiveResult = { found: false, count: 0, victims: [], search_url: SEARCH_URL };
  const BARE = { post_title: null, group_name: null, website: null, discovered: null, permalink: null };
  const answers: Record<string, unknown> = {
    // Only the victims, each with nothing but its name.
    minimal: { victims: [{ post_title: 'Example Corp' }] },
    nothing: {},
    'empty-forms': { victims: {} },
    'empty-string': { victims: '' },
    // One victim in place of the list, with fields sent as "" and null.
    single: { count: '1', victims: { post_title: 'Example Corp', group_name: '', website: null, discovered: '', permalink: 'https://www.ransomware.live/id/x' } },
    // A victim with no field at all still counts: the API listed it.
    'empty-victim': { victims: [{}] },
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}/victims/search`, reply.json(body)])));
    closers.push(() => fake.close());
  });
  const run = async (prefix: string) => await harness(prefix).run('example.com', 'FQDN') as RansomwareLiveResult;

  test('the minimal answer: victims alone, a victim with its name alone', async () => {
    assert.deepEqual(await run('minimal'), { found: true, count: 1, victims: [{ ...BARE, post_title: 'Example Corp' }], search_url: SEARCH_URL });
  });

  test('no victims, or victims as {} or "": no victim', async () => {
    for (const prefix of ['nothing', 'empty-forms', 'empty-string']) assert.deepEqual(await run(prefix), NONE, prefix);
  });

  test('one victim in place of the list; its null fields are null, its "" fields "" as sent (issue 32)', async () => {
    // The "" fields were null before issue 32; the reference passes them through.
    const result = await run('single');
    assert.deepEqual(result, {
      found: true, count: 1, victims: [{ ...BARE, post_title: 'Example Corp', group_name: '', discovered: '', permalink: 'https://www.ransomware.live/id/x' }], search_url: SEARCH_URL,
    });
    assert.equal(engine.summary(result), '1 victim: Example Corp');
    assert.equal(engine.evidence!(result)?.reason, 'listed as ransomware victim (Example Corp): the domain is a victim, not an attacker');
    assert.deepEqual(engine.details!(result, 'example.com').find((f) => f.label === 'Victim'),
      { label: 'Victim', value: 'Example Corp', href: 'https://www.ransomware.live/id/x' });
  });

  test('a victim without any field: still a victim, every field null', async () => {
    assert.deepEqual(await run('empty-victim'), { found: true, count: 1, victims: [BARE], search_url: SEARCH_URL });
  });
});

describe('ransomware_live fake for whole-system tests', () => {
  test('searches its victims with the caller\'s key; no key is a 401', async () => {
    const fake = await startFakeHttp(fakeRoutes());
    closers.push(() => fake.close());
    const h = watch.watch(engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY } }));
    closers.push(() => h.close());
    assert.equal(((await h.run('example.com', 'FQDN')) as RansomwareLiveResult).count, 2);
    assert.equal(((await h.run('https://www.cyberbro.net/', 'URL')) as RansomwareLiveResult).found, false);
    assert.ok(fake.requests.every((r) => r.path === `${PREFIX}/victims/search` && r.headers['x-api-key'] === KEY));
    const res = await fetch(`${fake.url}${PREFIX}/victims/search?q=example.com`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), INVALID_KEY);
  });
});

describe('ransomware_live through the runner', () => {
  let fake: FakeHttpServer;
  const runner = suiteRunners([engine, neighbour], () => fakeSettings(fake.url));

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ key: KEY }),
      'GET /down/victims/search': reply.status(500, { detail: 'Internal Server Error' }),
    });
  });
  after(() => fake.close());

  test('missing key: "not configured: engines.ransomware_live.api_key", nothing asked, the other engine runs', async () => {
    fake.reset();
    const [result] = await runner({}).analyze([{ value: 'example.com', type: 'FQDN' }], ['ransomware_live', 'neighbour']);
    assert.equal(result!.ransomware_live, null);
    assert.deepEqual(result!.errors, { ransomware_live: 'not configured: engines.ransomware_live.api_key or OAS_RANSOMWARE_LIVE_API_KEY' });
    assert.deepEqual(result!.neighbour, { seen: 'example.com' });
    assert.equal(fake.requests.length, 0);
    // A blank key is no key either.
    const [blank] = await runner({ api_key: '   ' }).analyze([{ value: 'example.com', type: 'FQDN' }], ['ransomware_live']);
    assert.deepEqual(blank!.errors, { ransomware_live: 'not configured: engines.ransomware_live.api_key or OAS_RANSOMWARE_LIVE_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('with the key: the result under the name the caller used, the key nowhere in it', async () => {
    fake.reset();
    const [domain, url] = await runner({ api_key: KEY }).analyze(
      [{ value: 'example.com', type: 'FQDN' }, { value: 'https://shop.example.com/cart', type: 'URL' }],
      ['ransomware_live'],
    );
    watch.result([domain, url]);
    assert.deepEqual(domain, {
      observable: 'example.com', type: 'FQDN', reversed_success: false,
      ransomware_live: {
        found: true, count: 2, victims: [kept(EXAMPLE_CORP), kept(EXAMPLE_SHOP)],
        search_url: 'https://www.ransomware.live/search?q=example.com&scope=all',
      },
    });
    assert.deepEqual((url!.ransomware_live as RansomwareLiveResult).victims, [kept(EXAMPLE_SHOP)]);
    assert.equal(fake.requests.length, 2);
  });

  test('a wrong key and a failing API: null plus an errors entry without the key, the other engine unaffected', async () => {
    const [wrong] = await runner({ api_key: 'WRONG-KEY-0987654321' }).analyze([{ value: 'example.com', type: 'FQDN' }], ['ransomware_live', 'neighbour_alias']);
    watch.result(wrong);
    assert.equal(wrong!.ransomware_live, null);
    assert.deepEqual(wrong!.errors, { ransomware_live: 'Ransomware.live: authentication failed (HTTP 401 Unauthorized: Invalid or missing API key) (key refused: check engines.ransomware_live.api_key or OAS_RANSOMWARE_LIVE_API_KEY)' });
    assert.deepEqual(wrong!.neighbour_alias, { seen: 'example.com' });
    const [down] = await runner({ api_key: KEY, base_url: `${fake.url}/down` }).analyze([{ value: 'example.com', type: 'FQDN' }], ['ransomware_live', 'neighbour']);
    watch.result(down);
    assert.deepEqual(down!.errors, { ransomware_live: 'HTTP 500 Internal Server Error' });
    assert.deepEqual(down!.neighbour, { seen: 'example.com' });
  });

  test('an error echoing the key: masked in the errors entry', async () => {
    const echo = await startFakeHttp({
      [`GET ${PREFIX}/victims/search`]: (req) => reply.json({ detail: `API key ${String(req.headers['x-api-key'])} has expired` }, 403),
    });
    const r = runnerHarness([engine], { settings: { ransomware_live: { ...fakeSettings(echo.url), api_key: KEY } } });
    try {
      const [result] = await r.analyze([{ value: 'example.com', type: 'FQDN' }], ['ransomware_live']);
      watch.result(result);
      assert.deepEqual(result!.errors, { ransomware_live: 'Ransomware.live: authentication failed (HTTP 403 Forbidden: API key *** has expired) (key refused: check engines.ransomware_live.api_key or OAS_RANSOMWARE_LIVE_API_KEY)' });
    } finally {
      await r.close();
      await echo.close();
    }
  });
});

describe('ransomware_live secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(30);
  });
});
