import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { otxDetails, otxIndicator, otxLookup, type OtxResult } from '../../engines/alienvault.js';
import { HttpStatusError } from '../../src/http/errors.js';
import type { ObservableType } from '../../src/observables/types.js';
import { fakeRoutes, fakeSettings } from '../fakes/alienvault.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from '../fakes/http.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import type { EngineHarness } from '../helpers/engine.js';
import { runnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';

const KEY = 'SECRET-KEY-1234567890';
const OTX = 'https://otx.alienvault.com';

/** A pulse as OTX sends it (the fields the engine ignores included). */
function pulse(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    description: 'Indicators shared by the OTX community.',
    modified: fields.created,
    tags: ['c2'],
    references: [],
    public: 1,
    adversary: '',
    targeted_countries: [],
    malware_families: [],
    attack_ids: [{ id: 'T1071', name: 'Application Layer Protocol', display_name: 'T1071 - Application Layer Protocol' }],
    industries: [],
    TLP: 'white',
    cloned_from: null,
    export_count: 3,
    upvotes_count: 0,
    downvotes_count: 0,
    votes_count: 0,
    locked: false,
    pulse_source: 'web',
    validator_count: 0,
    comment_count: 0,
    follower_count: 0,
    vote: 0,
    author: { username: 'analyst', id: '112233', avatar_url: '/otxapi/users/avatar_image/media/avatars/default.png', is_subscribed: false, is_following: false },
    indicator_type_counts: { domain: 4, IPv4: 2 },
    indicator_count: 6,
    is_author: false,
    is_subscribing: null,
    subscriber_count: 12,
    modified_text: '3 days ago ',
    is_modified: false,
    groups: [],
    in_group: false,
    threat_hunter_scannable: true,
    threat_hunter_has_agents: 1,
    related_indicator_type: 'domain',
    related_indicator_is_active: 1,
    ...fields,
  };
}

const family = (name: string) => ({ id: name, display_name: name, target: null });

/**
 * OTX's general section for example.com: the engines.md 5.2 example, completed with pulses
 * covering each rule (order by time, duplicate reports, incomplete pulses, the 5-pulse cap).
 */
const EXAMPLE_COM = {
  sections: ['general', 'geo', 'url_list', 'passive_dns', 'malware', 'whois', 'http_scans'],
  whois: 'http://whois.domaintools.com/example.com',
  alexa: 'http://www.alexa.com/siteinfo/example.com',
  indicator: 'example.com',
  type: 'domain',
  type_title: 'Domain',
  validation: [{ source: 'majestic', message: 'Whitelisted domain example.com', name: 'Whitelisted domain' }],
  base_indicator: { id: 1043592, indicator: 'example.com', type: 'domain', title: '', description: '', content: '', access_type: 'public', access_reason: '' },
  pulse_info: {
    count: 9,
    pulses: [
      pulse({ id: 'a6', name: 'TA505 phishing', created: '2024-12-01T10:00:00', references: ['https://cert.example/ta505'], adversary: 'TA505', malware_families: [family('Dridex')] }),
      pulse({ id: 'a2', name: 'Mirai variants (copy)', created: '2025-06-01T08:00:00.000000', references: ['https://blog.example/report'], adversary: 'Copycat', malware_families: [family('Gafgyt')] }),
      pulse({ id: 'a1', name: 'Mirai botnet C2', created: '2025-07-07T01:21:00.423000', references: ['https://blog.example/report'], adversary: 'APT99', malware_families: [family('Mirai')] }),
      pulse({ name: 'A pulse without id', created: '2026-01-01T00:00:00' }),
      pulse({ id: 'a4', created: '2026-01-02T00:00:00' }),
      pulse({ id: 'a5', name: 'Emotet epoch 5 spam', created: '2025-05-01T12:30:00.100000', references: [], malware_families: [family('emotet')] }),
      pulse({ id: 'a7', name: 'Old campaign', created: '2024-01-01T00:00:00', references: ['', 'https://old.example/'], adversary: 'apt99' }),
      pulse({ id: 'a8', name: 'Oldest kept', created: '2023-01-01T00:00:00', references: [] }),
      pulse({ id: 'a9', name: 'Beyond the cap', created: '2022-01-01T00:00:00', references: [], adversary: 'Nobody', malware_families: [family('Zeus')] }),
    ],
    references: ['https://blog.example/report', 'https://cert.example/ta505'],
    related: {
      alienvault: { adversary: [], malware_families: ['Emotet'], industries: [] },
      other: { adversary: ['Lazarus'], malware_families: ['Apnic'], industries: ['Technology'] },
    },
  },
  false_positive: [],
};

/** OTX's general section for an address in no pulse. */
function noPulses(indicator: string, type: string): Record<string, unknown> {
  return {
    whois: `http://whois.domaintools.com/${indicator}`,
    reputation: 0,
    indicator,
    type,
    type_title: type,
    base_indicator: {},
    pulse_info: { count: 0, pulses: [], references: [], related: { alienvault: { adversary: [], malware_families: [], industries: [] }, other: { adversary: [], malware_families: [], industries: [] } } },
    false_positive: [],
    validation: [],
    asn: 'AS15169 google llc',
    country_code: 'US',
    country_name: 'United States of America',
    sections: ['general', 'geo', 'reputation', 'url_list', 'passive_dns', 'malware', 'nids_list', 'http_scans'],
  };
}

/** Answers `/<prefix>/indicators/<section>/<value>/general`: example.com is rich, others have no pulses, `unknown.example` is 404. */
function general(req: FakeRequest): FakeReply {
  const match = /\/indicators\/([^/]+)\/(.+)\/general$/.exec(req.path);
  if (!match) return reply.status(404, { detail: 'Not found.' });
  const [, section, value] = match as unknown as [string, string, string];
  if (value === 'unknown.example') return reply.status(404, { detail: 'Not found.' });
  if (section === 'domain' && value === 'example.com') return reply.json(EXAMPLE_COM);
  return reply.json(noPulses(value, section === 'file' ? 'FileHash-SHA256' : section));
}

/** Every result and error message a test saw: none may contain the key. */
const watch = new KeyWatch(KEY);

describe('provider_02 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_02');
    assert.equal(engine.service, 'alienvault');
    assert.equal(engine.label, 'Alienvault');
    assert.deepEqual(engine.tags, ['IP']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.reversedIp, false);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [{ setting: 'api_key', label: 'API key', env: ['ALIENVAULT'] }]);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 5000,
      base_url: 'https://otx.alienvault.com/api/v1',
      rate_limit: 10_000,
      rate_window_ms: 3_600_000,
    });
    assert.equal(engine.run, otxLookup);
  });

  test('section per type; a URL by its host (bug fixed: userinfo, port, IP literals)', () => {
    const cases: [string, ObservableType, string, string][] = [
      ['8.8.8.8', 'IPv4', 'IPv4', '8.8.8.8'],
      ['2001:4860:4860::8888', 'IPv6', 'IPv6', '2001:4860:4860::8888'],
      ['Example.COM.', 'FQDN', 'domain', 'example.com'],
      ['https://user:pw@Sub.Example.com:8443/login?next=/', 'URL', 'domain', 'sub.example.com'],
      ['http://203.0.113.5:8080/gate.php', 'URL', 'IPv4', '203.0.113.5'],
      ['http://[2001:db8::1]:8080/x', 'URL', 'IPv6', '2001:db8::1'],
      ['44d88612fea8a8f36de82e1278abb02f', 'MD5', 'file', '44d88612fea8a8f36de82e1278abb02f'],
      ['3395856ce81f2b7382dee72602f798b642f14140', 'SHA1', 'file', '3395856ce81f2b7382dee72602f798b642f14140'],
      ['275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', 'SHA256', 'file', '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f'],
    ];
    for (const [value, type, section, indicator] of cases) {
      assert.deepEqual(otxIndicator({ value, type }), { section, indicator }, value);
    }
    assert.equal(otxIndicator({ value: 'someone@example.com', type: 'Email' }), null);
  });

  test('summary', () => {
    const result: OtxResult = {
      count: 9,
      pulses: [{ title: 'Mirai botnet C2', url: 'https://blog.example/report' }],
      malware_families: ['Emotet', 'Mirai'],
      adversary: ['APT99'],
      link: `${OTX}/browse/global/pulses?q=example.com`,
    };
    assert.equal(engine.summary(result), '9 pulses · malware: Emotet, Mirai · adversary: APT99 · latest: Mirai botnet C2');
    assert.equal(engine.summary({ ...result, count: 1, malware_families: [], adversary: [] }), '1 pulse · latest: Mirai botnet C2');
    assert.equal(engine.summary({ ...result, count: 0, pulses: [], malware_families: [], adversary: [] }), 'in no OTX pulse');
  });
});

describe('provider_02 against a loopback OTX', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);

  async function run(h: EngineHarness, value: string, type: ObservableType): Promise<OtxResult | null> {
    return watch.result((await h.run(value, type)) as OtxResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/indicators/*': general,
      'GET /unauthorized/indicators/*': reply.status(401, { detail: 'Authentication credentials were not provided.' }),
      'GET /forbidden/indicators/*': reply.status(403, { detail: `Invalid API key: ${KEY}` }),
      'GET /bare403/indicators/*': { status: 403, body: '' },
      'GET /status500/indicators/*': reply.status(500, { detail: 'Server Error (500)' }),
      'GET /flaky/indicators/*': sequence(reply.tooMany(1), general),
      'GET /malformed/indicators/*': reply.malformed(),
      'GET /no-indicator/indicators/*': reply.json({ ...EXAMPLE_COM, indicator: undefined }),
      'GET /wrong-shape/indicators/*': reply.json({ ...EXAMPLE_COM, pulse_info: { ...EXAMPLE_COM.pulse_info, count: 'nine' } }),
      'GET /hang/indicators/*': reply.hang(),
      ...fakeRoutes(),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('the result, field by field', async () => {
    const result = await run(harness('ok'), 'example.com', 'FQDN');
    assert.ok(result);
    // Bug fixed: OTX's count of pulses, not the number kept for display (5).
    assert.equal(result.count, 9);
    assert.deepEqual(result.pulses, [
      { title: 'Mirai botnet C2', url: 'https://blog.example/report' },
      { title: 'Emotet epoch 5 spam', url: `${OTX}/pulse/a5` },
      { title: 'TA505 phishing', url: 'https://cert.example/ta505' },
      { title: 'Old campaign', url: 'https://old.example/' },
      { title: 'Oldest kept', url: `${OTX}/pulse/a8` },
    ]);
    // related.alienvault, related.other, then the kept pulses' families; case-insensitive de-duplication.
    assert.deepEqual(result.malware_families, ['Emotet', 'Apnic', 'Mirai', 'Dridex']);
    // Bug fixed: related.other.adversary is used too; first-seen order.
    assert.deepEqual(result.adversary, ['Lazarus', 'APT99', 'TA505']);
    assert.equal(result.link, `${OTX}/browse/global/pulses?q=example.com`);
    assert.deepEqual(Object.keys(result), ['count', 'pulses', 'malware_families', 'adversary', 'link']);
    assert.equal(engine.summary(result), '9 pulses · malware: Emotet, Apnic, Mirai, Dridex · adversary: Lazarus, APT99, TA505 · latest: Mirai botnet C2');
  });

  test('details: pulse count, malware families, adversaries, the newest pulses linked to their reports, the OTX search', async () => {
    const result = await run(harness('ok'), 'example.com', 'FQDN');
    assert.ok(result);
    assert.deepEqual(engine.details!(result, 'example.com'), [
      { label: 'Pulses', value: '9' },
      { label: 'Malware families', value: 'Emotet, Apnic, Mirai, Dridex' },
      { label: 'Adversaries', value: 'Lazarus, APT99, TA505' },
      { label: 'Pulse 1', value: 'Mirai botnet C2', href: 'https://blog.example/report' },
      { label: 'Pulse 2', value: 'Emotet epoch 5 spam', href: `${OTX}/pulse/a5` },
      { label: 'Pulse 3', value: 'TA505 phishing', href: 'https://cert.example/ta505' },
      { label: 'Pulse 4', value: 'Old campaign', href: 'https://old.example/' },
      { label: 'Pulse 5', value: 'Oldest kept', href: `${OTX}/pulse/a8` },
      { label: 'Open in OTX', value: `${OTX}/browse/global/pulses?q=example.com`, href: `${OTX}/browse/global/pulses?q=example.com` },
    ]);
    assert.ok(!JSON.stringify(engine.details!(result, 'example.com')).includes(KEY));
    // The engine declares it (checked last: the assertion narrows `engine.details` to otxDetails's type).
    assert.equal(engine.details, otxDetails);
  });

  test('the request: GET /indicators/domain/<value>/general, the key in X-OTX-API-KEY only', async () => {
    fake.reset();
    await run(harness('ok'), 'example.com', 'FQDN');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, '/ok/indicators/domain/example.com/general');
    assert.equal([...req!.query.keys()].length, 0);
    assert.equal(req!.headers['x-otx-api-key'], KEY);
    const elsewhere = Object.entries(req!.headers).filter(([name, value]) => name !== 'x-otx-api-key' && String(value).includes(KEY));
    assert.deepEqual(elsewhere, []);
  });

  test('an address in no pulse: the documented empty result', async () => {
    assert.deepEqual(await run(harness('ok'), '8.8.8.8', 'IPv4'), {
      count: 0,
      pulses: [],
      malware_families: [],
      adversary: [],
      link: `${OTX}/browse/global/pulses?q=8.8.8.8`,
    });
  });

  test('each type reaches its section; URLs by host, hashes as files', async () => {
    fake.reset();
    const h = harness('ok');
    await run(h, '2001:4860:4860::8888', 'IPv6');
    await run(h, 'https://user:pw@Sub.Example.com:8443/login?next=/', 'URL');
    await run(h, 'http://[2001:db8::1]:8080/x', 'URL');
    await run(h, '44d88612fea8a8f36de82e1278abb02f', 'MD5');
    const sha256 = await run(h, '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', 'SHA256');
    assert.deepEqual(fake.requests.map((r) => r.path), [
      '/ok/indicators/IPv6/2001:4860:4860::8888/general',
      '/ok/indicators/domain/sub.example.com/general',
      '/ok/indicators/IPv6/2001:db8::1/general',
      '/ok/indicators/file/44d88612fea8a8f36de82e1278abb02f/general',
      '/ok/indicators/file/275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f/general',
    ]);
    assert.equal(sha256?.link, `${OTX}/browse/global/pulses?q=275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f`);
  });

  test('an IPv6 link is percent-encoded', async () => {
    const result = await run(harness('ok'), '2001:4860:4860::8888', 'IPv6');
    assert.equal(result?.link, `${OTX}/browse/global/pulses?q=2001%3A4860%3A4860%3A%3A8888`);
  });

  test('an indicator OTX does not know (404): null', async () => {
    assert.equal(await run(harness('ok'), 'unknown.example', 'FQDN'), null);
  });

  test('an e-mail address: null, nothing asked', async () => {
    fake.reset();
    assert.equal(await harness('ok').run('someone@example.com', 'Email'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('401: "HTTP 401 Unauthorized" with OTX\'s reason', async () => {
    await watch.rejectsWith(
      harness('unauthorized', { retries: 0 }).run('example.com', 'FQDN'),
      /^HTTP 401 Unauthorized: Authentication credentials were not provided\.$/,
      { type: HttpStatusError },
    );
  });

  test('403 whose reason quotes the key: the key is masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 403 Forbidden: Invalid API key: \*\*\*$/);
  });

  test('403 without a body: "HTTP 403 Forbidden"', async () => {
    await watch.rejectsWith(harness('bare403', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 403 Forbidden$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('example.com', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 with Retry-After: 1, then 200: succeeds after one retry', async () => {
    fake.reset();
    const result = await run(harness('flaky', { retries: 2, timeout_ms: 5000 }), 'example.com', 'FQDN');
    assert.equal(result?.count, 9);
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('malformed JSON: a clean error', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('example.com', 'FQDN'), /^upstream answered with malformed JSON$/);
  });

  test('an answer without indicator: an error (the reference returned null)', async () => {
    await watch.rejectsWith(harness('no-indicator', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at indicator: /);
  });

  test('a field of the wrong type: an error naming it', async () => {
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at pulse_info\.count: /);
  });

  test('minimal answer: the indicator only, the documented empty result', async () => {
    for (const body of [{ indicator: 'example.com' }, { indicator: 'example.com', pulse_info: null }, { indicator: 'example.com', pulse_info: {} }]) {
      fake.route('GET /minimal/indicators/*', reply.json(body));
      assert.deepEqual(await run(harness('minimal'), 'example.com', 'FQDN'), {
        count: 0, pulses: [], malware_families: [], adversary: [], link: `${OTX}/browse/global/pulses?q=example.com`,
      }, JSON.stringify(body));
    }
  });

  test('no count: the pulses in the answer; one pulse for the list, null entries and null lists', async () => {
    fake.route('GET /odd/indicators/*', reply.json({
      indicator: 'example.com',
      pulse_info: {
        count: null,
        pulses: { id: 'p1', name: 'Mirai botnet C2', created: '2025-07-07T01:21:00.423000', references: null, adversary: '', malware_families: { id: 'Mirai', display_name: 'Mirai' } },
        related: { alienvault: { adversary: null, malware_families: ['Emotet', null] }, other: null },
      },
    }));
    assert.deepEqual(await run(harness('odd'), 'example.com', 'FQDN'), {
      count: 1,
      pulses: [{ title: 'Mirai botnet C2', url: `${OTX}/pulse/p1` }],
      malware_families: ['Emotet', 'Mirai'],
      adversary: [],
      link: `${OTX}/browse/global/pulses?q=example.com`,
    });
    fake.route('GET /odd/indicators/*', reply.json({
      indicator: 'example.com',
      pulse_info: { count: '', pulses: [null, { id: 'p2', name: 'Second', references: 'https://blog.example/r' }, null, { name: 'no id' }] },
    }));
    // Null entries are no pulses: two are counted, one has no id so is not shown.
    assert.deepEqual(await run(harness('odd'), 'example.com', 'FQDN'), {
      count: 2,
      pulses: [{ title: 'Second', url: 'https://blog.example/r' }],
      malware_families: [],
      adversary: [],
      link: `${OTX}/browse/global/pulses?q=example.com`,
    });
  });

  test('a pulse that is no object: an error naming it', async () => {
    fake.route('GET /odd/indicators/*', reply.json({ indicator: 'example.com', pulse_info: { pulses: ['p1'] } }));
    await watch.rejectsWith(harness('odd', { retries: 0 }).run('example.com', 'FQDN'), /^unexpected answer from upstream at pulse_info\.pulses\.0: /);
  });

  test('a hanging upstream: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run('example.com', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('the shared fake: a full answer for any value; a request without the key refused (403)', async () => {
    const h = harness('', { ...fakeSettings(fake.url), retries: 0 });
    for (const [value, type] of [['198.51.100.23', 'IPv4'], ['2001:db8::7', 'IPv6'], ['malware.example', 'FQDN'], ['https://malware.example/x', 'URL'], ['44d88612fea8a8f36de82e1278abb02f', 'MD5']] as const) {
      const result = await run(h, value, type);
      assert.equal(result?.count, 2, value);
      assert.deepEqual(result?.pulses.map((p) => p.title), ['Mirai botnet C2', 'Commodity RAT infrastructure'], value);
    }
    const { base_url: base } = fakeSettings(fake.url) as { base_url: string };
    const keyless = await fetch(`${base}/indicators/IPv4/198.51.100.23/general`);
    assert.equal(keyless.status, 403);
    assert.deepEqual(await keyless.json(), { detail: 'Authentication credentials were not provided.' });
  });

  test('called directly without a key: refused before any request', async () => {
    fake.reset();
    const keyless = harness('ok', { api_key: undefined, retries: 0 });
    await rejectsWith(keyless.run('example.com', 'FQDN'), /^not configured: api_key$/);
    assert.equal(fake.requests.length, 0);
  });

  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(15);
  });
});

describe('provider_02 through the runner (pre-pivot)', () => {
  let fake: FakeHttpServer;
  let dns: FakeDnsServer;
  let runner: ReturnType<typeof runnerHarness>;

  before(async () => {
    fake = await startFakeHttp({ 'GET /indicators/*': general, 'GET /bad-key/indicators/*': reply.status(403, { detail: `Invalid API key: ${KEY}` }) });
    dns = await startFakeDns({ 'example.com': { A: ['93.184.215.14'] } });
    runner = runnerHarness([engine], { dnsServers: [dns.address], settings: { provider_02: { base_url: fake.url, api_key: KEY, retries: 0 } } });
  });
  after(async () => {
    await runner.close();
    await Promise.all([fake.close(), dns.close()]);
  });

  test('a domain is looked up as a domain, not as the IP it resolves to', async () => {
    fake.reset();
    const [result] = await runner.analyze([{ value: 'example.com', type: 'FQDN' }], ['alienvault', 'reverse_dns']);
    assert.equal(result!.reversed_ip, undefined);
    assert.equal((result!.alienvault as OtxResult).count, 9);
    assert.deepEqual(fake.requests.map((r) => r.path), ['/indicators/domain/example.com/general']);
    assert.equal(fake.requests[0]!.headers['x-otx-api-key'], KEY);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });

  test('no key configured: "not configured: api_key", OTX not called', async () => {
    fake.reset();
    const keyless = runnerHarness([engine], { settings: { provider_02: { base_url: fake.url } } });
    try {
      const results = await keyless.analyze(
        [{ value: '8.8.8.8', type: 'IPv4' }, { value: 'example.com', type: 'FQDN' }, { value: '44d88612fea8a8f36de82e1278abb02f', type: 'MD5' }],
        ['provider_02'],
      );
      for (const result of results) {
        assert.equal(result.provider_02, null);
        assert.deepEqual(result.errors, { provider_02: 'not configured: engines.provider_02.api_key or OAS_ALIENVAULT_API_KEY' });
      }
      assert.equal(fake.requests.length, 0);
    } finally {
      await keyless.close();
    }
  });

  test('a bad key: the error is reported, without the key', async () => {
    const bad = runnerHarness([engine], { settings: { provider_02: { base_url: `${fake.url}/bad-key`, api_key: KEY, retries: 0 } } });
    try {
      const [result] = await bad.analyze([{ value: 'example.com', type: 'FQDN' }], ['provider_02']);
      assert.equal(result!.provider_02, null);
      assert.deepEqual(result!.errors, { provider_02: 'HTTP 403 Forbidden: Invalid API key: *** (key refused: check engines.provider_02.api_key or OAS_ALIENVAULT_API_KEY)' });
      assert.ok(!JSON.stringify(result).includes(KEY));
    } finally {
      await bad.close();
    }
  });
});
