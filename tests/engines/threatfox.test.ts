import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { searchTerm, threatFoxDetails, threatFoxKeylessLookup, threatFoxLookup, type ThreatFoxResult } from '../../engines/threatfox.js';
import { Catalog } from '../../src/engine/catalog.js';
import { EngineError } from '../../src/engine/contract.js';
import { HttpStatusError } from '../../src/http/errors.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRequest, type FakeRoute } from '../fakes/http.js';
import { NO_RESULT, PATH, fakeRoutes, fakeSettings, hits, ioc } from '../fakes/threatfox.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { KeyWatch } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';

/** engines.md 5.27's example, completed as ThreatFox sends it. */
const EXAMPLE = {
  query_status: 'ok',
  data: [ioc('1234567', 'evil.example.com', 'win.cobalt_strike', 'Cobalt Strike')],
};

/** Every value the engine returned or threw in these tests, checked for the key at the end. */
const watch = new KeyWatch(KEY);
const closers: (() => Promise<void>)[] = [];

async function setup(route: FakeRoute, settings: Record<string, unknown> = {}): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp({ [`POST ${PATH}`]: route });
  const inner = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY, ...settings } });
  closers.push(() => inner.close(), () => fake.close());
  return { fake, harness: watch.watch(inner) };
}

const bodyOf = (req: FakeRequest): unknown => JSON.parse(req.body);

after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('provider_22 declaration', () => {
  test('catalog fields, credential, quota', () => {
    assert.equal(engine.id, 'provider_22');
    assert.equal(engine.service, 'threatfox');
    assert.deepEqual(engine.tags, ['IP', 'domain', 'URL']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL']);
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['THREATFOX'] }]);
    assert.equal(engine.defaults.base_url, 'https://threatfox-api.abuse.ch/api/v1/');
    assert.equal(typeof engine.defaults.rate_limit, 'number');
    assert.equal(typeof engine.defaults.rate_window_ms, 'number');
    assert.equal(typeof engine.defaults.timeout_ms, 'number');
    assert.equal(engine.run, threatFoxLookup);
  });

  test('summary', () => {
    const link = 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aevil.example.com';
    assert.equal(engine.summary({ count: 3, malware_printable: ['Cobalt Strike', 'Emotet'], link }), '3 IOCs: Cobalt Strike, Emotet');
    assert.equal(engine.summary({ count: 1, malware_printable: ['Cobalt Strike'], link }), '1 IOC: Cobalt Strike');
    assert.equal(engine.summary({ count: 0, malware_printable: [], link }), 'no IOC');
  });

  // Bug in the reference (engines.md 8 item 15): the URL's host was the 3rd "/"-piece cut at
  // ":", which gave "user" for userinfo URLs and "[2001" for IPv6 literals.
  test('Bug fixed: search term per type, URL host from the URL parser', () => {
    const cases: [string, ObservableType, string | null][] = [
      ['185.220.101.4', 'IPv4', '185.220.101.4'],
      ['2001:db8::1', 'IPv6', '2001:db8::1'],
      ['Evil.Example.COM.', 'FQDN', 'evil.example.com'],
      ['https://evil.example.com:8443/gate.php?id=1', 'URL', 'evil.example.com'],
      ['https://user:pw@login.example.com/a', 'URL', 'login.example.com'],
      ['http://[2001:db8::1]:8080/x', 'URL', '2001:db8::1'],
      ['http://exa mple.com/', 'URL', null],
      ['d41d8cd98f00b204e9800998ecf8427e', 'MD5', null],
    ];
    for (const [value, type, expected] of cases) assert.equal(searchTerm({ value, type }), expected, value);
  });
});

describe('provider_22 against a loopback ThreatFox', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup((req) => {
      const term = (bodyOf(req) as { search_term: string }).search_term;
      if (term === 'evil.example.com') return reply.json(EXAMPLE);
      if (term === 'clean.example.org' || term === '198.51.100.7') return reply.json(NO_RESULT);
      return reply.json(hits(term));
    }));
  });

  test('the example of engines.md: count, families, link; POST search_ioc with Auth-Key', async () => {
    fake.reset();
    const result = await harness.run('evil.example.com', 'FQDN') as ThreatFoxResult;
    assert.equal(result.count, 1);
    assert.deepEqual(result.malware_printable, ['Cobalt Strike']);
    assert.equal(result.link, 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aevil.example.com');
    assert.deepEqual(Object.keys(result).sort(), ['count', 'link', 'malware_printable']);
    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, PATH);
    assert.deepEqual(bodyOf(req), { query: 'search_ioc', search_term: 'evil.example.com' });
    assert.equal(req.headers['auth-key'], KEY);
    assert.equal(req.query.toString(), '', 'the key is not in the URL');
    assert.ok(!req.body.includes(KEY), 'the key is not in the body');
  });

  test('several IOCs: distinct families in order of first appearance', async () => {
    const result = await harness.run('185.220.101.4', 'IPv4');
    assert.deepEqual(result, {
      count: 3,
      malware_printable: ['Cobalt Strike', 'Emotet'],
      link: 'https://threatfox.abuse.ch/browse.php?search=ioc%3A185.220.101.4',
    });
    assert.equal(engine.summary(result as ThreatFoxResult), '3 IOCs: Cobalt Strike, Emotet');
  });

  test('details: IOC count, malware families, then the search on ThreatFox\'s site', async () => {
    const result = await harness.run('185.220.101.4', 'IPv4') as ThreatFoxResult;
    assert.deepEqual(engine.details!(result, '185.220.101.4'), [
      { label: 'IOCs', value: '3' },
      { label: 'Malware families', value: 'Cobalt Strike, Emotet' },
      {
        label: 'Open in ThreatFox',
        value: 'https://threatfox.abuse.ch/browse.php?search=ioc%3A185.220.101.4',
        href: 'https://threatfox.abuse.ch/browse.php?search=ioc%3A185.220.101.4',
      },
    ]);
    const none = await harness.run('clean.example.org', 'FQDN') as ThreatFoxResult;
    assert.deepEqual(threatFoxDetails(none).map((f) => [f.label, f.value]), [
      ['IOCs', '0'],
      ['Open in ThreatFox', 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aclean.example.org'],
    ]);
    // Declared on the engine (checked last: assert.equal narrows engine.details to this function's type).
    assert.equal(engine.details, threatFoxDetails);
  });

  test('an IOC without a family: "Unknown"; one whose family is "": "" as sent (issue 32)', async () => {
    const { harness: unknown } = await setup(reply.json({
      query_status: 'ok',
      data: [ioc('1', 'a.example', null, null), ioc('2', 'a.example:80', 'win.emotet', 'Emotet'), ioc('3', 'a.example:81', null, '')],
    }));
    // The third IOC's "" family was "Unknown" before issue 32; the reference keeps "".
    assert.deepEqual((await unknown.run('a.example', 'FQDN') as ThreatFoxResult).malware_printable, ['Unknown', 'Emotet', '']);
  });

  test('URL: its host is searched (userinfo and port dropped)', async () => {
    fake.reset();
    const result = await harness.run('https://user:pw@evil.example.com:8443/gate.php', 'URL') as ThreatFoxResult;
    assert.deepEqual(fake.requests.map(bodyOf), [{ query: 'search_ioc', search_term: 'evil.example.com' }]);
    assert.equal(result.count, 1);
  });

  test('IPv6: the term percent-encoded in the link', async () => {
    const result = await harness.run('2001:db8::1', 'IPv6') as ThreatFoxResult;
    assert.equal(result.link, 'https://threatfox.abuse.ch/browse.php?search=ioc%3A2001%3Adb8%3A%3A1');
  });

  test('no result: count 0, not null', async () => {
    const result = await harness.run('clean.example.org', 'FQDN');
    assert.deepEqual(result, {
      count: 0,
      malware_printable: [],
      link: 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aclean.example.org',
    });
    assert.equal(engine.summary(result as ThreatFoxResult), 'no IOC');
  });

  test('unparsable URL: null, no request', async () => {
    fake.reset();
    assert.equal(await harness.run('http://exa mple.com/', 'URL'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_22: minimal and degenerate answers', () => {
  const LINK = 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aevil.example.com';

  async function read(body: unknown): Promise<unknown> {
    const { harness } = await setup(reply.json(body));
    return harness.run('evil.example.com', 'FQDN');
  }

  test('no query_status: data read as for "ok"', async () => {
    assert.deepEqual(await read({ data: [{ malware_printable: 'Cobalt Strike' }] }), { count: 1, malware_printable: ['Cobalt Strike'], link: LINK });
    assert.deepEqual(await read({}), { count: 0, malware_printable: [], link: LINK });
    assert.deepEqual(await read({ data: 'Your search did not yield any results' }), { count: 0, malware_printable: [], link: LINK });
  });

  test('data as one IOC object, null, {} or with null items', async () => {
    assert.deepEqual(await read({ query_status: 'ok', data: { ioc: 'evil.example.com', malware_printable: 'Emotet' } }),
      { count: 1, malware_printable: ['Emotet'], link: LINK });
    assert.deepEqual(await read({ query_status: 'ok', data: null }), { count: 0, malware_printable: [], link: LINK });
    assert.deepEqual(await read({ query_status: 'ok', data: {} }), { count: 0, malware_printable: [], link: LINK });
    assert.deepEqual(await read({ query_status: 'ok', data: [null, { malware_printable: null }, null, { ioc: 'x', malware_printable: 'Emotet' }] }),
      { count: 2, malware_printable: ['Unknown', 'Emotet'], link: LINK });
  });

  test('issue 32: a family sent as "" is kept as sent (it was "Unknown" before); an empty query_status is read as none', async () => {
    const result = await read({ query_status: '', data: [{ malware_printable: '' }, { malware_printable: 'Emotet' }] }) as ThreatFoxResult;
    assert.deepEqual(result, { count: 2, malware_printable: ['', 'Emotet'], link: LINK });
    assert.equal(engine.summary(result), '2 IOCs: unnamed family, Emotet');
    assert.equal(engine.evidence!(result)?.reason, '2 IOCs: unnamed family, Emotet');
    assert.equal(engine.details!(result, 'evil.example.com').find((f) => f.label === 'Malware families')?.value, 'unnamed family, Emotet');
  });

  test('no_result with a list or nothing: count 0', async () => {
    assert.deepEqual(await read({ query_status: 'no_result' }), { count: 0, malware_printable: [], link: LINK });
    assert.deepEqual(await read({ query_status: 'no_result', data: [] }), { count: 0, malware_printable: [], link: LINK });
  });

  test('an answer that is no object, an IOC that is no object: an error naming where', async () => {
    await rejectsWith(read([]), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
    await rejectsWith(read({ query_status: 'ok', data: ['evil.example.com'] }), /^unexpected answer from upstream at data\.0: /);
  });
});

describe('provider_22 credentials and upstream failures', () => {
  test('401: a clear one-line error, no key', async () => {
    const { harness } = await setup(reply.json({ query_status: 'unknown_auth_key' }, 401));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 401 Unauthorized$/, { type: HttpStatusError, secret: KEY });
  });

  test('403: a clear one-line error, no key', async () => {
    const { harness } = await setup(reply.json({ query_status: 'forbidden', data: `Auth-Key ${KEY} is banned` }, 403));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 403 Forbidden$/, { type: HttpStatusError, secret: KEY });
  });

  test('a refusal in query_status: ThreatFox\'s words, the key redacted', async () => {
    const { harness } = await setup(reply.json({ query_status: 'unknown_auth_key', data: `Auth-Key ${KEY} unknown` }));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^ThreatFox: unknown_auth_key \(Auth-Key \*\*\* unknown\)$/, { type: EngineError, secret: KEY });
    const { harness: illegal } = await setup(reply.json({ query_status: 'illegal_search_term' }));
    await rejectsWith(illegal.run('evil.example.com', 'FQDN'), /^ThreatFox: illegal_search_term$/, EngineError);
  });

  test('HTTP 500: an error, not null', async () => {
    const { harness } = await setup(reply.status(500), { retries: 0 });
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/, { secret: KEY });
  });

  test('429 with Retry-After: 1, then 200: succeeds', async () => {
    const { fake, harness } = await setup(sequence(reply.tooMany(1), reply.json(EXAMPLE)));
    assert.equal((await harness.run('evil.example.com', 'FQDN') as ThreatFoxResult).count, 1);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    const { harness } = await setup(reply.malformed());
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /malformed JSON/, { secret: KEY });
  });

  test('JSON of the wrong shape: a clean error naming the field', async () => {
    // Issue 26: an answer without query_status is read (see the minimal answers below), one whose
    // query_status is no text is not.
    const { harness } = await setup(reply.json({ query_status: { status: 'ok' }, data: [] }));
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at query_status/);
    const { harness: badItem } = await setup(reply.json({ query_status: 'ok', data: [{ ioc: 'a', malware_printable: 7 }] }));
    await rejectsWith(badItem.run('evil.example.com', 'FQDN'), /unexpected answer from upstream at data/);
  });

  test('an upstream that hangs: timeout', async () => {
    const { fake, harness } = await setup(reply.hang(), { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('evil.example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`), { secret: KEY });
  });
});

describe('provider_22 through the runner', () => {
  let fake: FakeHttpServer;
  let withKey: RunnerHarness;
  let withoutKey: RunnerHarness;
  before(async () => {
    fake = await startFakeHttp(fakeRoutes());
    withKey = runnerHarness([engine], { settings: { provider_22: { ...fakeSettings(fake.url), api_key: KEY } } });
    withoutKey = runnerHarness([engine], { settings: { provider_22: fakeSettings(fake.url) } });
  });
  after(async () => {
    await Promise.all([withKey.close(), withoutKey.close()]);
    await fake.close();
  });

  test('missing key: "not configured: api_key", no request', async () => {
    fake.reset();
    const [result] = await withoutKey.analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['threatfox']);
    assert.equal(result!.threatfox, null);
    assert.deepEqual(result!.errors, { threatfox: 'not configured: engines.provider_22.api_key or OAS_THREATFOX_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('with a key: the fixture\'s result, and the key nowhere in it', async () => {
    fake.reset();
    const [result] = await withKey.analyze([{ value: 'https://evil.example.com/gate.php', type: 'URL' }], ['provider_22']);
    assert.equal(result!.errors, undefined);
    assert.deepEqual(result!.provider_22, {
      count: 3,
      malware_printable: ['Cobalt Strike', 'Emotet'],
      link: 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aevil.example.com',
    });
    assert.equal(result!.reversed_ip, undefined, 'not an IP-only engine: no pivot');
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers['auth-key'], KEY);
    watch.result(result);
  });

  test('bad key: the error in errors, without the key', async () => {
    const bad = await startFakeHttp({ [`POST ${PATH}`]: reply.json({ query_status: 'unknown_auth_key', data: KEY }, 401) });
    const runner = runnerHarness([engine], { settings: { provider_22: { ...fakeSettings(bad.url), api_key: KEY } } });
    try {
      const [result] = await runner.analyze([{ value: '185.220.101.4', type: 'IPv4' }], ['provider_22']);
      assert.equal(result!.provider_22, null);
      assert.deepEqual(result!.errors, { provider_22: 'HTTP 401 Unauthorized (key refused: check engines.provider_22.api_key or OAS_THREATFOX_API_KEY)' });
      watch.result(result);
    } finally {
      await runner.close();
      await bad.close();
    }
  });
});

describe('provider_22 older catalog (engines.md 6.4: no key)', () => {
  const older = new Catalog([engine], 'older').find('provider_22')!;
  let keyless: FakeHttpServer;
  let today: FakeHttpServer;
  const harnesses: EngineHarness[] = [];
  const harness = (definition: typeof older, settings: Record<string, unknown>): EngineHarness => {
    const h = watch.watch(engineHarness(definition, { settings }));
    harnesses.push(h);
    return h;
  };
  before(async () => {
    keyless = await startFakeHttp(fakeRoutes({ keyless: true }));
    today = await startFakeHttp(fakeRoutes());
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await Promise.all([keyless.close(), today.close()]);
  });

  test('main definition unchanged: tags, key, lookup', () => {
    const main = new Catalog([engine]).find('threatfox')!;
    assert.equal(main, engine);
    assert.deepEqual(main.tags, ['IP', 'domain', 'URL']);
    assert.deepEqual(main.credentials, [{ setting: 'api_key', label: 'API key', env: ['THREATFOX'] }]);
    assert.equal(main.run, threatFoxLookup);
    assert.equal(main.cacheScope, undefined);
  });

  test('older definition: free_no_key, no credential, the key-less lookup', () => {
    assert.deepEqual(older.tags, ['IP', 'domain', 'URL', 'free_no_key']);
    assert.deepEqual(older.credentials, []);
    assert.equal(older.run, threatFoxKeylessLookup);
    assert.deepEqual(older.types, engine.types);
    assert.deepEqual(older.defaults, engine.defaults);
    assert.equal(older.cacheScope, 'older');
    assert.ok(new Catalog([engine], 'older').isConfigured(older, {}));
  });

  test('older: the same search, without any Auth-Key header', async () => {
    keyless.reset();
    const result = await harness(older, fakeSettings(keyless.url)).run('https://evil.example.com/gate.php', 'URL');
    assert.deepEqual(result, {
      count: 3,
      malware_printable: ['Cobalt Strike', 'Emotet'],
      link: 'https://threatfox.abuse.ch/browse.php?search=ioc%3Aevil.example.com',
    });
    const [req, ...more] = keyless.requests;
    assert.equal(more.length, 0);
    assert.equal(req!.method, 'POST');
    assert.deepEqual(bodyOf(req!), { query: 'search_ioc', search_term: 'evil.example.com' });
    assert.equal(req!.headers['auth-key'], undefined);
  });

  test('older: a stray api_key in its settings is not sent (the variant has no key setting)', async () => {
    keyless.reset();
    await harness(older, { ...fakeSettings(keyless.url), api_key: KEY }).run('185.220.101.4', 'IPv4');
    assert.equal(keyless.requests[0]!.headers['auth-key'], undefined);
    assert.ok(!JSON.stringify(keyless.requests[0]!.headers).includes(KEY));
  });

  test('older against today\'s ThreatFox, which refuses key-less calls: an error, not null', async () => {
    await rejectsWith(harness(older, { ...fakeSettings(today.url), retries: 0 }).run('evil.example.com', 'FQDN'), /^HTTP 401 Unauthorized$/, HttpStatusError);
  });

  test('main lookup called without a key: no empty Auth-Key header (engines.md 8 item 19)', async () => {
    today.reset();
    await rejectsWith(harness(engine, { ...fakeSettings(today.url), retries: 0 }).run('evil.example.com', 'FQDN'), /^HTTP 401 Unauthorized$/);
    assert.equal(today.requests.length, 1);
    assert.ok(!('auth-key' in today.requests[0]!.headers));
  });

  test('older through the runner: no key needed, the result under the alias', async () => {
    keyless.reset();
    const runner = runnerHarness([older], { settings: { provider_22: fakeSettings(keyless.url) } });
    try {
      const [result] = await runner.analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['threatfox']);
      assert.equal(result!.errors, undefined);
      assert.equal((result!.threatfox as ThreatFoxResult).count, 3);
      assert.equal(keyless.requests.length, 1);
      assert.equal(keyless.requests[0]!.headers['auth-key'], undefined);
    } finally {
      await runner.close();
    }
  });
});

describe('provider_22 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(16);
  });
});
