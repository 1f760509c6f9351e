import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { crtshDetails, crtshLookup, crtshQuery, crtshSummary, topDomains, type CrtshResult } from '../../engines/crtsh.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { resolveSettings } from '../../src/engine/context.js';
import { HttpTransport } from '../../src/http/client.js';
import { BadResponseError, HttpStatusError, NetworkError, TimeoutError } from '../../src/http/errors.js';
import type { ObservableType } from '../../src/observables/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { EXAMPLE_ORG_ROWS, EXAMPLE_ORG_TOP, PREFIX, fakeRoutes, fakeSettings, hugeBody, jsonHandler, overloaded, rowsFor } from '../fakes/crtsh.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';
import { neighbour, suiteRunners } from '../helpers/runner.js';

const link = (host: string) => `https://crt.sh/?q=${host}`;

/** A row as crt.sh writes it, with the given names. */
function row(commonName: string | null, nameValue: string | null, id = 1): Record<string, unknown> {
  return { ...EXAMPLE_ORG_ROWS[0], common_name: commonName, name_value: nameValue, id };
}

/** Seven names, each in one row, so every count is 1: their order is the order of the answer. */
const TIES = [
  row('b.example', 'b.example\na.example', 1),
  row('g.example', 'g.example', 2),
  row('c.example', 'c.example\nf.example\ne.example', 3),
  row('d.example', 'd.example', 4),
];

/** Counting rules: once per row, trimmed, CRLF and blank lines, no common name, no case folding. */
const MIXED = [
  row('www.example.net', 'www.example.net\nwww.example.net\nexample.net', 1),
  row(null, ' example.net \r\n\r\n*.example.net\n', 2),
  row('', 'WWW.example.net\nexample.net', 3),
  row('example.net ', 'example.net', 4),
];

const HUGE_DEFAULT = hugeBody(10 * 1024 * 1024 + 4096);

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** `crtsh` with `base_url` = `<fake>/<prefix>`; no pacing (crt.sh's 1 a second) in these tests. */
function harnessFor(fake: FakeHttpServer, prefix: string, settings: Record<string, unknown> = {}): EngineHarness {
  const h = engineHarness(engine, { settings: { base_url: `${fake.url}/${prefix}`, ...settings } });
  closers.push(() => h.close());
  return h;
}

/** Runs the lookup the way the runner does, on a transport of our own (a smaller size limit). */
async function runOn(transport: HttpTransport, settings: Record<string, unknown>, value: string, type: ObservableType): Promise<unknown> {
  return engineHarness(engine, { settings, transport }).run(value, type);
}

describe('crtsh declaration', () => {
  test('catalog fields: the reference\'s name, beyond the spec, never default', () => {
    assert.equal(engine.id, 'crtsh');
    assert.equal(engine.service, 'crtsh');
    assert.equal(engine.label, 'crt.sh');
    assert.deepEqual(engine.catalogs, []);
    assert.deepEqual(engine.tags, ['domain', 'URL', 'free_no_key']);
    assert.ok(!engine.tags.includes('default'));
    assert.deepEqual(engine.types, ['FQDN', 'URL']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.pivot, false);
    assert.deepEqual(engine.credentials, []);
    assert.deepEqual(engine.dependsOn, []);
    assert.equal(engine.run, crtshLookup);
    assert.equal(engine.summary, crtshSummary);
    assert.equal(engine.details, crtshDetails);
  });

  test('defaults: the reference\'s 20 s timeout, crt.sh\'s address, its throttling', () => {
    assert.deepEqual(engine.defaults, {
      timeout_ms: 20_000, base_url: 'https://crt.sh', rate_limit: 1, rate_window_ms: 1000, concurrency: 5,
    });
    const h = engineHarness(engine);
    closers.push(() => h.close());
    assert.equal(h.settings.timeout_ms, 20_000);
    assert.equal(h.settings.base_url, 'https://crt.sh');
    // An operator's timeout wins.
    assert.equal(resolveSettings(engine, { timeout_ms: 60_000 }).timeout_ms, 60_000);
  });

  test('offered by both catalog variants as an extra, never preselected', () => {
    for (const variant of ['main', 'older'] as const) {
      const catalog = new Catalog([engine as EngineDefinition], variant);
      const found = catalog.find('crtsh');
      assert.ok(found, variant);
      assert.equal(catalog.isDefault(found), false);
      assert.equal(catalog.variantOf(found), 'beyond');
    }
  });

  test('query: a domain lower-cased, no trailing dot, punycode; a URL\'s parsed host', () => {
    assert.equal(crtshQuery({ value: 'Example.ORG.', type: 'FQDN' }), 'example.org');
    assert.equal(crtshQuery({ value: 'bücher.de', type: 'FQDN' }), 'xn--bcher-kva.de');
    assert.equal(crtshQuery({ value: 'https://WWW.Example.COM:8443/a?b=c', type: 'URL' }), 'www.example.com');
    assert.equal(crtshQuery({ value: 'https://bücher.de/', type: 'URL' }), 'xn--bcher-kva.de');
    // engines.md 8 item 15: userinfo and IPv6 literals no longer break the host.
    assert.equal(crtshQuery({ value: 'https://user:p@ss@login.example.org/x', type: 'URL' }), 'login.example.org');
    assert.equal(crtshQuery({ value: 'http://[2001:db8::1]:8080/', type: 'URL' }), '2001:db8::1');
    assert.equal(crtshQuery({ value: 'https://', type: 'URL' }), null);
    assert.equal(crtshQuery({ value: '8.8.8.8', type: 'IPv4' }), null);
  });

  test('counting: engines.md\'s example', () => {
    assert.deepEqual(topDomains(EXAMPLE_ORG_ROWS), EXAMPLE_ORG_TOP);
    assert.deepEqual(topDomains([]), []);
  });

  test('summary and card', () => {
    const result: CrtshResult = { top_domains: EXAMPLE_ORG_TOP, link: link('example.org') };
    assert.equal(crtshSummary(result), 'top names: example.org (3), www.example.org (2), mail.example.org (1), *.example.org (1)');
    assert.equal(crtshSummary({ top_domains: [], link: link('nothing.example') }), 'no certificate logged');
    assert.deepEqual(crtshDetails(result), [
      { label: 'Top names', value: 'example.org (3 certificates), www.example.org (2 certificates), mail.example.org (1 certificate), *.example.org (1 certificate)' },
      { label: 'Open in crt.sh', value: 'https://crt.sh/?q=example.org', href: 'https://crt.sh/?q=example.org' },
    ]);
    assert.deepEqual(crtshDetails({ top_domains: [], link: link('nothing.example') }), [
      { label: 'Top names', value: 'no certificate logged' },
      { label: 'Open in crt.sh', value: 'https://crt.sh/?q=nothing.example', href: 'https://crt.sh/?q=nothing.example' },
    ]);
  });
});

describe('crtsh against a loopback crt.sh', () => {
  let fake: FakeHttpServer;

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/json': jsonHandler(),
      'GET /ties/json': reply.json(TIES),
      'GET /mixed/json': reply.json(MIXED),
      'GET /bad-gateway/json': overloaded(502),
      'GET /unavailable/json': overloaded(503),
      'GET /flaky/json': sequence(overloaded(503), jsonHandler()),
      'GET /throttled/json': sequence(reply.tooMany(0), jsonHandler()),
      'GET /always-throttled/json': reply.tooMany(0),
      'GET /malformed/json': reply.malformed(),
      'GET /html/json': reply.html('<!DOCTYPE html><html><head><title>crt.sh | example.org</title></head><body>Sorry, something went wrong</body></html>'),
      'GET /object/json': reply.json({ error: 'statement timeout' }),
      'GET /strings/json': reply.json(['example.org', 'www.example.org']),
      'GET /wrong-type/json': reply.json([row('example.org', 'example.org'), { ...row('x', 'y'), name_value: 42 }]),
      'GET /hang/json': reply.hang(),
      'GET /huge/json': { status: 200, headers: { 'content-type': 'application/json' }, body: HUGE_DEFAULT },
      'GET /big/json': { status: 200, headers: { 'content-type': 'application/json' }, body: hugeBody(60_000) },
      'GET /large-ok/json': { status: 200, headers: { 'content-type': 'application/json' }, body: hugeBody(30_000) },
    });
    closers.push(() => fake.close());
  });

  test('engines.md\'s example, exactly: two keys, ties in order of first appearance', async () => {
    const result = await harnessFor(fake, 'ok').run('example.org', 'FQDN');
    assert.deepEqual(result, { top_domains: EXAMPLE_ORG_TOP, link: 'https://crt.sh/?q=example.org' });
  });

  test('the request: GET <base_url>/json?q=<host>, nothing else', async () => {
    fake.reset();
    await harnessFor(fake, 'ok').run('example.org', 'FQDN');
    assert.equal(fake.requests.length, 1);
    const [req] = fake.requests;
    assert.equal(req!.method, 'GET');
    assert.equal(req!.path, '/ok/json');
    assert.deepEqual([...req!.query], [['q', 'example.org']]);
    assert.equal(req!.headers.authorization, undefined);
    assert.match(String(req!.headers.accept), /application\/json/);
  });

  test('a base_url with a trailing slash, a base_url that is no URL', async () => {
    fake.reset();
    await harnessFor(fake, 'ok/').run('example.org', 'FQDN');
    assert.equal(fake.requests[0]!.path, '/ok/json');
    await rejectsWith(harnessFor(fake, 'ok', { base_url: 'crt.sh' }).run('example.org', 'FQDN'), /^crt\.sh: base_url is not a URL$/);
  });

  test('nothing logged: the documented empty result, not null', async () => {
    const result = await harnessFor(fake, 'ok').run('nothing.example', 'FQDN');
    assert.deepEqual(result, { top_domains: [], link: 'https://crt.sh/?q=nothing.example' });
  });

  test('a URL: crt.sh asked about its parsed host (lower-cased, no port, no userinfo)', async () => {
    fake.reset();
    const h = harnessFor(fake, 'ok');
    const result = await h.run('https://WWW.Example.COM:8443/a?b=c', 'URL') as CrtshResult;
    assert.equal(result.link, 'https://crt.sh/?q=www.example.com');
    assert.deepEqual(result.top_domains, [
      { domain: 'www.example.com', count: 2 },
      { domain: 'www.www.example.com', count: 2 },
      { domain: 'mail.www.example.com', count: 1 },
    ]);
    await h.run('https://analyst:hunter2@login.example.org/path', 'URL');
    await h.run('https://bücher.de/', 'URL');
    await h.run('http://[2001:db8::1]/', 'URL');
    assert.deepEqual(fake.requests.map((r) => r.query.get('q')), ['www.example.com', 'login.example.org', 'xn--bcher-kva.de', '2001:db8::1']);
  });

  test('a domain written in capitals with a trailing dot: the same query and result as lower case', async () => {
    fake.reset();
    const result = await harnessFor(fake, 'ok').run('Example.ORG.', 'FQDN');
    assert.deepEqual(result, { top_domains: EXAMPLE_ORG_TOP, link: 'https://crt.sh/?q=example.org' });
    assert.equal(fake.requests[0]!.query.get('q'), 'example.org');
  });

  test('quirk fixed: equal counts in order of first appearance, every time; at most 5', async () => {
    const h = harnessFor(fake, 'ties');
    const expected = ['b.example', 'a.example', 'g.example', 'c.example', 'f.example'].map((domain) => ({ domain, count: 1 }));
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(((await h.run('example', 'FQDN')) as CrtshResult).top_domains, expected);
    }
  });

  test('counting: a name once per row, lines trimmed, CRLF and blank lines, no case folding, wildcards kept', async () => {
    const result = await harnessFor(fake, 'mixed').run('example.net', 'FQDN') as CrtshResult;
    assert.deepEqual(result.top_domains, [
      { domain: 'example.net', count: 4 },
      { domain: 'www.example.net', count: 1 },
      { domain: '*.example.net', count: 1 },
      { domain: 'WWW.example.net', count: 1 },
    ]);
  });

  test('not a domain or URL, or a URL without a host: null, nothing asked', async () => {
    fake.reset();
    const h = harnessFor(fake, 'ok');
    assert.equal(await h.run('8.8.8.8', 'IPv4'), null);
    assert.equal(await h.run('https://', 'URL'), null);
    assert.equal(await h.run('44d88612fea8a8f36de82e1278abb02f', 'MD5'), null);
    assert.equal(fake.requests.length, 0);
  });

  test('overloaded (502, 503): an error naming the status, not null', async () => {
    await rejectsWith(harnessFor(fake, 'bad-gateway', { retries: 0 }).run('example.org', 'FQDN'), /^HTTP 502 Bad Gateway$/, HttpStatusError);
    await rejectsWith(harnessFor(fake, 'unavailable', { retries: 0 }).run('example.org', 'FQDN'), /^HTTP 503 Service Unavailable$/, HttpStatusError);
  });

  test('engines.md 8 item 4: a 503 then an answer succeeds after one retry', async () => {
    fake.reset();
    const result = await harnessFor(fake, 'flaky', { retries: 2 }).run('example.org', 'FQDN');
    assert.deepEqual(result, { top_domains: EXAMPLE_ORG_TOP, link: link('example.org') });
    assert.equal(fake.hits('GET /flaky/').length, 2);
  });

  test('429 then an answer succeeds; 429 to the end is an error after the retries', async () => {
    fake.reset();
    const result = await harnessFor(fake, 'throttled', { retries: 2 }).run('example.org', 'FQDN');
    assert.deepEqual((result as CrtshResult).top_domains, EXAMPLE_ORG_TOP);
    assert.equal(fake.hits('GET /throttled/').length, 2);
    await rejectsWith(harnessFor(fake, 'always-throttled', { retries: 1 }).run('example.org', 'FQDN'), /^HTTP 429 Too Many Requests\b/, HttpStatusError);
    assert.equal(fake.hits('GET /always-throttled/').length, 2);
  });

  test('bug fixed (HEAD): a body that is not an array of objects is an error, not an escaped exception', async () => {
    await rejectsWith(harnessFor(fake, 'malformed').run('example.org', 'FQDN'), /^upstream answered with malformed JSON$/, BadResponseError);
    await rejectsWith(harnessFor(fake, 'html').run('example.org', 'FQDN'), /^upstream answered with malformed JSON$/, BadResponseError);
    await rejectsWith(harnessFor(fake, 'object').run('example.org', 'FQDN'), /^unexpected answer from upstream at \(root\): .*Array/, BadResponseError);
    await rejectsWith(harnessFor(fake, 'strings').run('example.org', 'FQDN'), /^unexpected answer from upstream at 0: .*Object/, BadResponseError);
    await rejectsWith(harnessFor(fake, 'wrong-type').run('example.org', 'FQDN'), /^unexpected answer from upstream at 1\.name_value: /, BadResponseError);
  });

  test('minimal and degenerate rows: missing or null names, null rows, one row for the array', async () => {
    const answering = async (body: unknown) => {
      const one = await startFakeHttp({ 'GET /json': reply.json(body) });
      closers.push(() => one.close());
      const h = engineHarness(engine, { settings: { base_url: one.url } });
      closers.push(() => h.close());
      return h.run('example.org', 'FQDN');
    };
    const link = 'https://crt.sh/?q=example.org';
    assert.deepEqual(await answering([{ name_value: 'example.org' }, { common_name: 'www.example.org' }, {}]), {
      top_domains: [{ domain: 'example.org', count: 1 }, { domain: 'www.example.org', count: 1 }], link,
    });
    assert.deepEqual(await answering([null, { common_name: null, name_value: 'example.org\nmail.example.org' }, null, { common_name: 'example.org', name_value: null }]), {
      top_domains: [{ domain: 'example.org', count: 2 }, { domain: 'mail.example.org', count: 1 }], link,
    });
    assert.deepEqual(await answering({ common_name: 'example.org', name_value: 'example.org\n*.example.org' }), {
      top_domains: [{ domain: 'example.org', count: 1 }, { domain: '*.example.org', count: 1 }], link,
    });
    assert.deepEqual(await answering([]), { top_domains: [], link });
  });

  test('a hanging crt.sh: timeout', async () => {
    await rejectsWith(harnessFor(fake, 'hang', { retries: 0, timeout_ms: 300 }).run('example.org', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`), TimeoutError);
  });

  test('bug fixed (HEAD): connection refused is an error, not an escaped exception', async () => {
    await rejectsWith(engineHarness(engine, { settings: { base_url: 'http://127.0.0.1:1', retries: 0 } }).run('example.org', 'FQDN'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/, NetworkError);
  });

  test('a huge answer (a domain with too many certificates): stopped at the shared client\'s 10 MiB, said so', async () => {
    assert.ok(HUGE_DEFAULT.length > 10 * 1024 * 1024);
    await rejectsWith(
      harnessFor(fake, 'huge', { retries: 0 }).run('example.org', 'FQDN'),
      /^crt\.sh: too many certificates for example\.org \(response larger than 10485760 bytes\); see https:\/\/crt\.sh\/\?q=example\.org$/,
      BadResponseError,
    );
  });

  test('the size limit is the transport\'s: a smaller one stops a smaller answer, an answer under it is counted', async () => {
    const transport = new HttpTransport({ maxResponseBytes: 50_000 });
    closers.push(() => transport.close());
    await rejectsWith(
      runOn(transport, { base_url: `${fake.url}/big`, retries: 0 }, 'example.org', 'FQDN'),
      /^crt\.sh: too many certificates for example\.org \(response larger than 50000 bytes\); see /,
      BadResponseError,
    );
    const rows = JSON.parse(hugeBody(30_000)) as unknown[];
    const result = await runOn(transport, { base_url: `${fake.url}/large-ok` }, 'example.org', 'FQDN');
    assert.deepEqual(result, { top_domains: [{ domain: 'host.example.org', count: rows.length }], link: link('example.org') });
  });
});

describe('crtsh fake for whole-system tests', () => {
  test('answers any name; .invalid names have no certificate', async () => {
    const fake = await startFakeHttp(fakeRoutes());
    closers.push(() => fake.close());
    const h = engineHarness(engine, { settings: fakeSettings(fake.url) });
    closers.push(() => h.close());
    assert.deepEqual(await h.run('example.org', 'FQDN'), { top_domains: EXAMPLE_ORG_TOP, link: link('example.org') });
    assert.deepEqual(((await h.run('https://cyberbro.net/x', 'URL')) as CrtshResult).top_domains, [
      { domain: 'cyberbro.net', count: 2 },
      { domain: 'www.cyberbro.net', count: 2 },
      { domain: 'mail.cyberbro.net', count: 1 },
    ]);
    assert.deepEqual(await h.run('host.invalid', 'FQDN'), { top_domains: [], link: link('host.invalid') });
    assert.equal(rowsFor('example.com').length, 3);
    assert.ok(fake.requests.every((r) => r.path === `${PREFIX}/json`));
  });
});

describe('crtsh through the runner', () => {
  let fake: FakeHttpServer;
  /** `neighbour` runs on the same observables, to show it is unaffected by crtsh's failures. */
  const runner = suiteRunners([engine, neighbour], () => fakeSettings(fake.url));

  before(async () => {
    fake = await startFakeHttp({
      ...fakeRoutes(),
      'GET /down/json': overloaded(502),
      'GET /huge/json': { status: 200, headers: { 'content-type': 'application/json' }, body: HUGE_DEFAULT },
      'GET /strings/json': reply.json(['example.org']),
    });
  });
  after(() => fake.close());

  test('a domain and a URL: the result under the name the caller used, no pivot', async () => {
    fake.reset();
    const results = await runner().analyze(
      [{ value: 'example.org', type: 'FQDN' }, { value: 'https://www.example.org/login', type: 'URL' }],
      ['crtsh'],
    );
    assert.equal(results.length, 2);
    assert.deepEqual(results[0], {
      observable: 'example.org', type: 'FQDN', reversed_success: false,
      crtsh: { top_domains: EXAMPLE_ORG_TOP, link: link('example.org') },
    });
    assert.equal((results[1]!.crtsh as CrtshResult).link, link('www.example.org'));
    assert.equal(results[1]!.errors, undefined);
    assert.deepEqual(fake.requests.map((r) => r.query.get('q')).sort(), ['example.org', 'www.example.org']);
  });

  test('an IP: not applicable, null without a call or an error', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: '8.8.8.8', type: 'IPv4' }], ['crtsh']);
    assert.equal(result!.crtsh, null);
    assert.equal(result!.errors, undefined);
    assert.equal(fake.requests.length, 0);
  });

  test('crt.sh down: null plus an errors entry; the observable and the other engine are kept', async () => {
    const [result] = await runner({ base_url: `${fake.url}/down` }).analyze([{ value: 'example.org', type: 'FQDN' }], ['crtsh', 'neighbour_alias']);
    assert.equal(result!.observable, 'example.org');
    assert.equal(result!.crtsh, null);
    assert.deepEqual(result!.neighbour_alias, { seen: 'example.org' });
    assert.deepEqual(result!.errors, { crtsh: 'HTTP 502 Bad Gateway' });
  });

  test('bug fixed (HEAD): connection refused and a non-array body no longer make the observable disappear', async () => {
    const refused = await runner({ base_url: 'http://127.0.0.1:1' }).analyze(
      [{ value: 'example.org', type: 'FQDN' }, { value: 'example.net', type: 'FQDN' }],
      ['crtsh', 'neighbour'],
    );
    assert.deepEqual(refused.map((r) => r.observable), ['example.org', 'example.net']);
    for (const result of refused) {
      assert.equal(result.crtsh, null);
      assert.match(result.errors!.crtsh!, /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
      assert.deepEqual(result.neighbour, { seen: result.observable });
    }
    const [strings] = await runner({ base_url: `${fake.url}/strings` }).analyze([{ value: 'example.org', type: 'FQDN' }], ['crtsh']);
    assert.match(strings!.errors!.crtsh!, /^unexpected answer from upstream at 0: /);
  });

  test('a huge answer: an errors entry, the analysis goes on', async () => {
    const [result] = await runner({ base_url: `${fake.url}/huge` }).analyze([{ value: 'example.org', type: 'FQDN' }], ['crtsh', 'neighbour']);
    assert.equal(result!.crtsh, null);
    assert.match(result!.errors!.crtsh!, /^crt\.sh: too many certificates for example\.org \(response larger than 10485760 bytes\)/);
    assert.deepEqual(result!.neighbour, { seen: 'example.org' });
  });
});
