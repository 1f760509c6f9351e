import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  basicAuthorization, MISP_FEEDBACK_TYPES, mispFeedbackDetails, mispFeedbackLookup, mispFeedbackSummary, type MispFeedbackResult,
} from '../../engines/misp_feedback.js';
import hister from '../../engines/hister.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { fakeRoutes as histerRoutes, fakeSettings as histerSettings, KNOWN as HISTER_KNOWN } from '../fakes/hister.js';
import { basicFor, CLEAN, fakeRoutes, fakeSettings, KNOWN, lookup, PRIVATE } from '../fakes/misp_feedback.js';
import { proxiedSuite } from '../fakes/proxy.js';
import { harnessOnFake } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { suiteRunners } from '../helpers/runner.js';

const TOKEN = 'mfb-T0ken-7f3a9c2e5b1d4a6f';
/** The token's Basic form (`base64(":" + token)`): as secret as the token. */
const BASIC = basicFor(TOKEN).slice('Basic '.length);
const HISTER_TOKEN = 'hister-access-0a1b2c3d4e5f';
const watch = new KeyWatch(TOKEN);

type Known = keyof typeof KNOWN;
const TYPES: Known[] = ['IPv4', 'IPv6', 'FQDN', 'MD5', 'SHA1', 'SHA256'];

describe('misp_feedback declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'misp_feedback');
    assert.equal(engine.service, 'misp_feedback');
    assert.equal(engine.label, 'MISP-feedback');
    assert.deepEqual(engine.catalogs, [], 'beyond the spec: in no variant');
    assert.ok(!engine.tags.includes('default'));
    assert.deepEqual(engine.tags, ['hash', 'IP', 'domain', 'free_no_key']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.types, MISP_FEEDBACK_TYPES);
    assert.equal(engine.acceptsPrivateIp, true, 'the warning lists hold the private ranges');
    assert.equal(engine.reversedIp, false);
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Server URL', env: ['MISP_FEEDBACK_SERVER_URL'], secret: false },
      { setting: 'token', label: 'Token', env: ['MISP_FEEDBACK_TOKEN'], required: false },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 10000 });
    assert.equal(engine.run, mispFeedbackLookup);
    assert.equal(engine.summary, mispFeedbackSummary);
    assert.equal(engine.details, mispFeedbackDetails);
  });

  test('the Basic authorization of engines.md 9.3: empty user name, the token as password', () => {
    assert.equal(basicAuthorization('s3cr3t'), 'Basic OnMzY3IzdA==');
    assert.equal(basicAuthorization(TOKEN), basicFor(TOKEN));
  });

  test('summary and details', () => {
    const hit: MispFeedbackResult = { status: 'HIT', warninglists: [...KNOWN.IPv4.lists] };
    assert.equal(mispFeedbackSummary(hit),
      'on 2 warning lists: List of known IPv4 public DNS resolvers, Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters');
    assert.equal(mispFeedbackSummary({ status: 'HIT', warninglists: ['List of RFC 1918 CIDR blocks'] }), 'on 1 warning list: List of RFC 1918 CIDR blocks');
    assert.equal(mispFeedbackSummary({ status: 'CLEAN', warninglists: [] }), 'on no warning list');
    assert.deepEqual(mispFeedbackDetails(hit), [
      { label: 'Status', value: 'HIT (on a warning list: likely benign or well known)' },
      { label: 'Warning list 1', value: 'List of known IPv4 public DNS resolvers' },
      { label: 'Warning list 2', value: 'Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters' },
    ]);
    assert.deepEqual(mispFeedbackDetails({ status: 'CLEAN', warninglists: [] }), [{ label: 'Status', value: 'CLEAN (on no warning list)' }]);
  });
});

describe('misp_feedback against a loopback MISP-feedback daemon', () => {
  let fake: FakeHttpServer;
  /** The lookup with base_url `<fake>/<prefix>` and the token, unless `settings` say otherwise. */
  const harness = prefixHarnesses(engine, () => fake, TOKEN, { setting: 'token', watch });
  const run = async (prefix: string, value: string, type: Known | 'URL' | 'Email' | 'CHROME_EXTENSION', settings: Record<string, unknown> = {}) =>
    (await harness(prefix, settings).run(value, type)) as MispFeedbackResult | null;

  before(async () => {
    fake = await startFakeHttp({
      // Behind a reverse proxy that wants the token; and an open daemon (the usual 127.0.0.1:3000).
      ...fakeRoutes({ token: TOKEN, prefix: '/proxied' }),
      ...fakeRoutes({ prefix: '/open' }),
      ...fakeRoutes({ token: TOKEN, prefix: '/deep/path/mfb' }),
      'POST /unnamed/lookup': reply.json({ value: '9.9.9.9', matched: true, matches: [
        { slug: 'no-name', description: 'a list without a name', list_type: 'cidr', category: 'false-positive', matching_attributes: ['ip-dst'] },
        { slug: 'null-name', name: null, list_type: 'cidr', category: 'known', matching_attributes: [] },
        { slug: 'quad9', name: 'Quad9 resolvers', list_type: 'cidr', category: 'false-positive', matching_attributes: ['ip-dst'] },
      ] }),
      'POST /matches-null/lookup': reply.json({ value: '9.9.9.9', matched: false, matches: null }),
      'POST /matches-missing/lookup': reply.json({ value: '9.9.9.9', matched: false }),
      'POST /matched-but-empty/lookup': reply.json({ value: '9.9.9.9', matched: true, matches: [] }),
      'POST /echo/lookup': (req) => reply.json({ message: `bad credentials: ${req.headers.authorization} (token ${TOKEN})` }, 403),
      'POST /forbidden/lookup': reply.json({ detail: 'token expired' }, 403),
      'POST /unprocessable/lookup': {
        status: 422,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: 'Failed to deserialize the JSON body into the target type: missing field `value` at line 1 column 2',
      },
      'POST /status500/lookup': reply.status(500),
      'POST /flaky/lookup': sequence(reply.tooMany(1), lookup()),
      'POST /throttled/lookup': reply.tooMany(0),
      'POST /malformed/lookup': reply.malformed(),
      'POST /list/lookup': reply.json([{ name: 'List of known IPv4 public DNS resolvers' }]),
      'POST /string/lookup': reply.json('ok'),
      'POST /null/lookup': { status: 200, headers: { 'content-type': 'application/json' }, body: 'null' },
      'POST /bad-match/lookup': reply.json({ value: '8.8.8.8', matched: true, matches: ['public-dns-v4'] }),
      'POST /login-page/lookup': reply.html('<html><body>Sign in</body></html>'),
      'POST /hang/lookup': reply.hang(),
    });
  });
  after(() => fake.close());

  test('request: POST {base_url}/lookup, the JSON body, JSON headers, the token as Basic auth', async () => {
    fake.reset();
    await run('proxied', KNOWN.IPv4.value, 'IPv4');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'POST');
    assert.equal(req!.path, '/proxied/lookup');
    assert.equal([...req!.query].length, 0, 'nothing in the query string');
    assert.equal(req!.body, '{"value":"8.8.8.8","false_positives_only":false}');
    assert.equal(req!.headers.accept, 'application/json');
    assert.equal(req!.headers['content-type'], 'application/json');
    assert.equal(req!.headers.authorization, `Basic ${BASIC}`);
    assert.equal(Buffer.from(BASIC, 'base64').toString('utf8'), `:${TOKEN}`);
  });

  test('no token configured: no Authorization header at all', async () => {
    fake.reset();
    const result = await run('open', KNOWN.IPv4.value, 'IPv4', { token: undefined });
    assert.equal(result?.status, 'HIT');
    assert.equal(fake.requests[0]!.headers.authorization, undefined);
    await run('open', KNOWN.IPv4.value, 'IPv4', { token: '  ' });
    assert.equal(fake.requests[1]!.headers.authorization, undefined, 'a blank token is no token');
  });

  test('engines.md 9.3\'s example, 8.8.8.8: HIT with both list names in the daemon\'s order', async () => {
    assert.deepEqual(await run('proxied', '8.8.8.8', 'IPv4'), {
      status: 'HIT',
      warninglists: ['List of known IPv4 public DNS resolvers', 'Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters'],
    });
  });

  test('HIT, every type the engine takes (lists of category "known" count too)', async () => {
    for (const type of TYPES) {
      const { value, lists } = KNOWN[type];
      assert.deepEqual(await run('proxied', value, type), { status: 'HIT', warninglists: [...lists] }, type);
    }
  });

  test('CLEAN, every type the engine takes', async () => {
    for (const type of TYPES) {
      assert.deepEqual(await run('proxied', CLEAN[type], type), { status: 'CLEAN', warninglists: [] }, type);
    }
  });

  test('private addresses are looked up and found on the RFC lists (the reference never asked)', async () => {
    assert.deepEqual(await run('proxied', PRIVATE.IPv4.value, 'IPv4'), { status: 'HIT', warninglists: [...PRIVATE.IPv4.lists] });
    assert.deepEqual(await run('proxied', PRIVATE.IPv6.value, 'IPv6'), { status: 'HIT', warninglists: [...PRIVATE.IPv6.lists] });
  });

  test('a list without a name is "Unknown"; slug and category are not reported', async () => {
    assert.deepEqual(await run('unnamed', '9.9.9.9', 'IPv4'), { status: 'HIT', warninglists: ['Unknown', 'Unknown', 'Quad9 resolvers'] });
  });

  test('matches null, missing or empty: CLEAN (whatever "matched" says)', async () => {
    for (const prefix of ['matches-null', 'matches-missing', 'matched-but-empty']) {
      assert.deepEqual(await run(prefix, '9.9.9.9', 'IPv4'), { status: 'CLEAN', warninglists: [] }, prefix);
    }
  });

  test('URL, e-mail, extension id: not the engine\'s, null, nothing asked', async () => {
    fake.reset();
    assert.equal(await run('proxied', 'https://www.google.com/search?q=x', 'URL'), null);
    assert.equal(await run('proxied', 'someone@google.com', 'Email'), null);
    assert.equal(await run('proxied', 'cjpalhdlnbpafiamejdnhcphjbkeiagm', 'CHROME_EXTENSION'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('base_url with a path and trailing slashes: path kept, no double slash', async () => {
    fake.reset();
    const result = await run('x', KNOWN.MD5.value, 'MD5', { base_url: `${fake.url}/deep/path/mfb//` });
    assert.equal(result?.status, 'HIT');
    assert.deepEqual(fake.requests.map((r) => r.path), ['/deep/path/mfb/lookup']);
  });

  test('called directly without base_url, or with one without scheme: an error before any request (the reference crashed on the latter)', async () => {
    fake.reset();
    await watch.rejectsWith(harness('x', { base_url: '' }).run(KNOWN.IPv4.value, 'IPv4'), /^not configured: base_url$/);
    await watch.rejectsWith(harness('x', { base_url: 'localhost:3000' }).run(KNOWN.IPv4.value, 'IPv4'), /^MISP-feedback: base_url must be an http\(s\) URL$/);
    await watch.rejectsWith(harness('x', { base_url: '127.0.0.1:3000' }).run(KNOWN.IPv4.value, 'IPv4'), /^MISP-feedback: base_url is not a URL$/);
    assert.equal(fake.requests.length, 0);
  });

  test('a wrong token: the reverse proxy\'s 401, one line naming MISP-feedback, not retried', async () => {
    fake.reset();
    await watch.rejectsWith(harness('proxied', { token: 'not-the-token-000' }).run(KNOWN.IPv4.value, 'IPv4'),
      /^MISP-feedback: authentication failed \(HTTP 401 Unauthorized\)$/);
    assert.equal(fake.requests.length, 1, 'not retried');
  });

  test('no token but the proxy wants one: the same authentication error', async () => {
    await watch.rejectsWith(harness('proxied', { token: undefined }).run(KNOWN.IPv4.value, 'IPv4'),
      /^MISP-feedback: authentication failed \(HTTP 401 Unauthorized\)$/);
  });

  test('HTTP 403 with a reason: the reason shown', async () => {
    await watch.rejectsWith(harness('forbidden').run(KNOWN.IPv4.value, 'IPv4'), /^MISP-feedback: authentication failed \(HTTP 403 Forbidden: token expired\)$/);
  });

  test('a reason echoing the Authorization header and the token: both masked', async () => {
    await watch.rejectsWith(harness('echo').run(KNOWN.IPv4.value, 'IPv4'),
      /^MISP-feedback: authentication failed \(HTTP 403 Forbidden: bad credentials: Basic \*\*\* \(token \*\*\*\)\)$/);
  });

  test('the daemon\'s 422: an error with its reason', async () => {
    await watch.rejectsWith(harness('unprocessable', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'),
      /^HTTP 422 Unprocessable Entity: Failed to deserialize the JSON body into the target type: missing field `value` at line 1 column 2$/);
  });

  test('a wrong base_url (404): an error, not CLEAN', async () => {
    await watch.rejectsWith(harness('nowhere', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^HTTP 404 Not Found\b/);
  });

  test('HTTP 500: an error, retried as configured', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 1 }).run(KNOWN.IPv4.value, 'IPv4'), /^HTTP 500 Internal Server Error/);
    assert.equal(fake.hits('POST /status500/').length, 2);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    assert.deepEqual(await run('flaky', KNOWN.SHA1.value, 'SHA1', { retries: 2 }), { status: 'HIT', warninglists: [...KNOWN.SHA1.lists] });
    assert.equal(fake.hits('POST /flaky/').length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    await watch.rejectsWith(harness('throttled', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^HTTP 429 Too Many Requests/);
  });

  test('malformed JSON, an HTML page: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('login-page', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^upstream answered with malformed JSON$/);
  });

  test('JSON that is no object (a list, a string, null): an error, not a crash (reference bug, engines.md 9.3)', async () => {
    for (const prefix of ['list', 'string', 'null']) {
      await watch.rejectsWith(harness(prefix, { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^unexpected answer from upstream at \(root\): /);
    }
    await watch.rejectsWith(harness('bad-match', { retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^unexpected answer from upstream at matches\.0: /);
  });

  test('a hanging daemon: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run(KNOWN.IPv4.value, 'IPv4'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('a daemon that is down: a network error, not a crash (reference bug, engines.md 9.3)', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run(KNOWN.IPv4.value, 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('misp_feedback fake for whole-system tests', () => {
  const suite = harnessOnFake(engine, () => startFakeHttp(fakeRoutes({ token: TOKEN })), (url) => ({ ...fakeSettings(url), token: TOKEN }), (h) => watch.watch(h));

  test('answers every known observable with the token, health and lists too', async () => {
    const { fake, harness: h } = suite;
    for (const type of TYPES) {
      assert.deepEqual(await h.run(KNOWN[type].value, type), { status: 'HIT', warninglists: [...KNOWN[type].lists] }, type);
    }
    assert.ok(fake.requests.every((r) => r.path === '/misp-feedback/lookup' && r.headers.authorization === `Basic ${BASIC}`));
    const health = await fetch(`${fake.url}/misp-feedback/health`);
    assert.deepEqual(await health.json(), { status: 'ok', lists_loaded: 9 });
    const lists = (await (await fetch(`${fake.url}/misp-feedback/lists`)).json()) as { count: number };
    assert.equal(lists.count, 9);
  });

  test('false_positives_only: lists of category "known" left out, as the daemon does', async () => {
    const { fake } = suite;
    const res = await fetch(`${fake.url}/misp-feedback/lookup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${BASIC}` },
      body: JSON.stringify({ value: 'www.google.com', false_positives_only: true }),
    });
    const body = (await res.json()) as { matches: { name: string }[] };
    assert.deepEqual(body.matches.map((m) => m.name), ['Top 1000 websites from Cisco Umbrella']);
  });

  test('the daemon\'s refusals: 415, 400, 422', async () => {
    const { fake } = suite;
    const post = (body: string, type = 'application/json') => fetch(`${fake.url}/misp-feedback/lookup`, {
      method: 'POST', headers: { 'content-type': type, authorization: `Basic ${BASIC}` }, body,
    });
    assert.equal((await post('{"value":"8.8.8.8"}', 'text/plain')).status, 415);
    assert.equal((await post('{')).status, 400);
    assert.equal((await post('{"val":"8.8.8.8"}')).status, 422);
  });
});

describe('misp_feedback through the runner', () => {
  let fake: FakeHttpServer;
  const runner = suiteRunners([engine, hister]);
  const configured = () => ({ ...fakeSettings(fake.url), token: TOKEN });

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes({ token: TOKEN }),
      ...histerRoutes({ token: HISTER_TOKEN }),
      'POST /not-an-object/lookup': reply.json(['8.8.8.8']),
    });
  });
  after(() => fake.close());

  test('the result under the name the caller used', async () => {
    const [result] = await runner(configured()).analyze([{ value: KNOWN.FQDN.value, type: 'FQDN' }], ['misp_feedback']);
    watch.result(result);
    assert.deepEqual(result!.misp_feedback, { status: 'HIT', warninglists: [...KNOWN.FQDN.lists] });
    assert.equal(result!.errors, undefined);
  });

  test('offered by the main catalog as an extra, never default', () => {
    const r = runner(configured());
    assert.equal(r.catalog.find('misp_feedback'), engine);
    assert.equal(r.catalog.isDefault(engine), false);
  });

  test('a private IP is looked up (the reference skipped it): the RFC 1918 list', async () => {
    fake.reset();
    const [result] = await runner(configured()).analyze([{ value: PRIVATE.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    watch.result(result);
    assert.deepEqual(result!.misp_feedback, { status: 'HIT', warninglists: ['List of RFC 1918 CIDR blocks'] });
    assert.equal(fake.requests.length, 1);
  });

  test('a URL: not applicable, null without error, nothing asked', async () => {
    fake.reset();
    const [result] = await runner(configured()).analyze([{ value: 'https://www.google.com/', type: 'URL' }], ['misp_feedback']);
    assert.equal(result!.misp_feedback, null);
    assert.equal(result!.errors, undefined);
    assert.equal(fake.hits('POST /misp-feedback/').length, 0);
  });

  test('no base_url configured: "not configured", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ token: TOKEN }).analyze([{ value: KNOWN.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    watch.result(result);
    assert.equal(result!.misp_feedback, null);
    assert.deepEqual(result!.errors, { misp_feedback: 'not configured: engines.misp_feedback.base_url or OAS_MISP_FEEDBACK_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('no token configured: the token is optional, the call is made without one', async () => {
    fake.reset();
    const [result] = await runner(fakeSettings(fake.url)).analyze([{ value: KNOWN.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    assert.match(result!.errors!.misp_feedback!, /^MISP-feedback: authentication failed \(HTTP 401 Unauthorized\) \(no key sent: set engines\.misp_feedback\.token or OAS_MISP_FEEDBACK_TOKEN\)$/);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.headers.authorization, undefined);
  });

  test('a daemon that is down: null plus an errors entry, the observable kept, the other engine unaffected', async () => {
    const [result] = await runner(
      { base_url: 'http://127.0.0.1:1', token: TOKEN },
      { hister: { ...histerSettings(fake.url), token: HISTER_TOKEN } },
    ).analyze([{ value: HISTER_KNOWN.FQDN, type: 'FQDN' }], ['misp_feedback', 'hister']);
    watch.result(result);
    assert.equal(result!.observable, HISTER_KNOWN.FQDN);
    assert.equal(result!.misp_feedback, null);
    assert.deepEqual(result!.errors, { misp_feedback: 'connection refused by 127.0.0.1:1 (is the service up? check its base_url, or set proxy_url)' });
    assert.equal((result!.hister as { total: number }).total, 3);
  });

  test('an answer that is no object: an errors entry, the observable kept', async () => {
    const [result] = await runner({ base_url: `${fake.url}/not-an-object`, token: TOKEN })
      .analyze([{ value: KNOWN.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    watch.result(result);
    assert.equal(result!.observable, KNOWN.IPv4.value);
    assert.match(result!.errors!.misp_feedback!, /^unexpected answer from upstream at \(root\)/);
  });

  test('a wrong token through the runner: the one-line error, nothing secret', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), token: `${TOKEN}-old` }).analyze([{ value: KNOWN.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    watch.result(result);
    assert.equal(result!.errors!.misp_feedback, 'MISP-feedback: authentication failed (HTTP 401 Unauthorized) (key refused: check engines.misp_feedback.token or OAS_MISP_FEEDBACK_TOKEN)');
  });
});

describe('misp_feedback through a proxy (proxy_url)', () => {
  const suite = proxiedSuite(engine, fakeRoutes({ token: TOKEN }), (url) => ({ ...fakeSettings(url), token: TOKEN }));

  test('the request goes through the configured proxy, as the reference\'s did', async () => {
    const { fake, proxy, runner: r } = suite;
    const [result] = await r.analyze([{ value: KNOWN.IPv4.value, type: 'IPv4' }], ['misp_feedback']);
    watch.result(result);
    assert.equal(result!.errors, undefined);
    assert.equal((result!.misp_feedback as MispFeedbackResult).status, 'HIT');
    assert.equal(proxy.requests.length, 1);
    assert.equal(proxy.requests[0]!.method, 'POST');
    assert.equal(proxy.requests[0]!.url, `${fake.url}/misp-feedback/lookup`);
    assert.equal(fake.requests.length, 1, 'the proxy forwarded it');
  });
});

describe('misp_feedback minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  let answer: unknown = {};
  const harness = prefixHarnesses(engine, () => fake, TOKEN, { setting: 'token', watch });
  before(async () => {
    fake = await startFakeHttp({ 'POST /lenient/lookup': () => reply.json(answer) });
  });
  after(() => fake.close());
  async function run(body: unknown): Promise<unknown> {
    answer = body;
    return harness('lenient').run('8.8.8.8', 'IPv4');
  }
  const CLEAN: MispFeedbackResult = { status: 'CLEAN', warninglists: [] };

  test('the minimal answer, an empty object, and matches "" or {}: CLEAN', async () => {
    for (const body of [{}, { matches: '' }, { matches: {} }, { value: null, matched: null, matches: [null] }]) {
      assert.deepEqual(await run(body), CLEAN, JSON.stringify(body));
    }
  });

  test('"matched" and "value" in other forms (0, "", a number) are not read', async () => {
    assert.deepEqual(await run({ value: 8, matched: 0, matches: [] }), CLEAN);
    assert.deepEqual(await run({ value: '', matched: '', matches: [{ name: 'Quad9 resolvers' }] }), { status: 'HIT', warninglists: ['Quad9 resolvers'] });
  });

  test('one match object in place of the list; null entries; empty, null or numeric names', async () => {
    assert.deepEqual(await run({ matched: true, matches: { slug: 'public-dns-v4', name: 'List of known IPv4 public DNS resolvers' } }), {
      status: 'HIT', warninglists: ['List of known IPv4 public DNS resolvers'],
    });
    // A name sent as "" is kept (issue 32; it was "Unknown" before); people read "unnamed list".
    const result = await run({ matches: [null, { name: '' }, { name: null }, {}, { name: 1918 }] }) as MispFeedbackResult;
    assert.deepEqual(result, { status: 'HIT', warninglists: ['', 'Unknown', 'Unknown', '1918'] });
    assert.equal(engine.summary(result), 'on 4 warning lists: unnamed list, Unknown, Unknown, 1918');
    assert.equal(engine.evidence!(result)?.reason, 'on warning lists unnamed list; Unknown; and 2 more: likely false positive');
    assert.equal(engine.details!(result, '8.8.8.8').find((f) => f.label === 'Warning list 1')?.value, 'unnamed list');
  });

  test('what cannot be read still fails, naming the field', async () => {
    await watch.rejectsWith(run({ matches: [{ name: { en: 'x' } }] }), /^unexpected answer from upstream at matches\.0\.name/);
    await watch.rejectsWith(run({ matches: 'public-dns-v4' }), /^unexpected answer from upstream at matches\.0: /);
  });
});

describe('misp_feedback secrets', () => {
  test('neither the token nor its Basic form appears in any result or error of these tests', () => {
    watch.assertNoKey(45);
    for (const output of watch.outputs) assert.ok(!output.includes(BASIC), `Basic form leaked in: ${output}`);
  });
});
