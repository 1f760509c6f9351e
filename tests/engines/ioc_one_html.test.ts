import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import engine, { iocOneHtmlLookup, type IocOneResult } from '../../engines/ioc_one_html.js';
import { iocOneDetails } from '../../src/scrape/ioc-one.js';
import { EngineError } from '../../src/engine/contract.js';
import { BROWSER_USER_AGENT, parseIocOnePage, plainText } from '../../src/scrape/ioc-one.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import {
  CAPTCHA_PAGE,
  changedLayoutPage,
  ERROR_PAGE,
  HTML_CARDS,
  iocOneRoutes,
  LOGIN_PAGE,
  resultsPage,
  type FakeCard,
} from '../fakes/ioc-one.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { rejectsWith } from '../helpers/assert.js';

const PATH = '/auth/deep_search';

/** Every fake and harness started here, closed in `after`. */
const closers: (() => Promise<void>)[] = [];

after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A fake ioc.one answering `answers` by search value, and a harness pointed at it. */
async function setup(
  answers: Record<string, string | FakeRoute> = {},
  settings: Record<string, unknown> = {},
): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp(iocOneRoutes('html', answers));
  const harness = engineHarness(engine, { settings: { base_url: fake.url, retries: 0, timeout_ms: 3000, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}

/** Asserts an EngineError-or-upstream rejection with a one-line message matching `pattern`. */

const page = (query: string, cards: readonly FakeCard[]) => resultsPage('html', query, cards);

describe('provider_09 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_09');
    assert.equal(engine.service, 'ioc_one_html');
    assert.equal(engine.label, 'Ioc.One (HTML)');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash', 'scraping']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.pivot, false);
    assert.deepEqual(engine.credentials, []);
    assert.equal(engine.defaults.timeout_ms, 20000);
    assert.equal(engine.defaults.base_url, 'https://ioc.one');
    assert.equal(engine.defaults.max_results, 5);
    assert.equal(engine.defaults.user_agent, BROWSER_USER_AGENT);
    assert.equal(engine.run, iocOneHtmlLookup);
  });

  test('settings schema: max_results 1..50, user_agent a non-empty string', () => {
    const schema = engine.settingsSchema!;
    assert.ok(v.safeParse(schema, { max_results: 10, user_agent: 'Mozilla/5.0' }).success);
    assert.ok(v.safeParse(schema, { base_url: 'http://127.0.0.1:1' }).success);
    assert.equal(v.safeParse(schema, { max_results: 0 }).success, false);
    assert.equal(v.safeParse(schema, { max_results: 2.5 }).success, false);
    assert.equal(v.safeParse(schema, { max_results: '5' }).success, false);
    assert.equal(v.safeParse(schema, { user_agent: '' }).success, false);
  });

  test('details: report count, each report (title linked to it, labelled by its card header), the search page', () => {
    const link = 'https://ioc.one/auth/deep_search?search=evil.example.com';
    const results = parseIocOnePage(page('evil.example.com', HTML_CARDS), link, 'html');
    const result: IocOneResult = { results, link, count: results.length };
    assert.deepEqual(engine.details!(result, 'evil.example.com'), [
      { label: 'Reports', value: '5' },
      { label: '2024-05-14 · securelist.com', value: 'New campaign uses evil.example.com', href: 'https://securelist.com/report' },
      {
        label: '2024-04-02 · unit42.paloaltonetworks.com',
        value: 'Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS',
        href: 'https://unit42.paloaltonetworks.com/cve-2024-3400/',
      },
      {
        label: '2024-03-21 · www.welivesecurity.com',
        value: 'Evasive Panda leverages Monlam Festival to target Tibetans',
        href: 'https://www.welivesecurity.com/en/eset-research/evasive-panda-leverages-monlam-festival-target-tibetans/',
      },
      {
        label: '2024-02-29 · blog.talosintelligence.com',
        value: 'TinyTurla Next Generation — Turla APT spies on Polish NGOs',
        href: 'https://blog.talosintelligence.com/tinyturla-next-generation/',
      },
      {
        label: '2024-01-17 · www.mandiant.com',
        value: 'Ivanti Connect Secure VPN Post-Exploitation Lateral Movement Case Studies',
        href: 'https://www.mandiant.com/resources/blog/investigating-ivanti-zero-day-exploitation',
      },
      { label: 'Open in ioc.one', value: link, href: link },
    ]);
    // A card without header is numbered; no reports leaves the count and the search page.
    const bare = { header: '', title: 'Untitled campaign', source: 'https://reports.example/x' };
    assert.deepEqual(iocOneDetails({ results: [bare], link, count: 1 })[1], { label: 'Report 1', value: 'Untitled campaign', href: 'https://reports.example/x' });
    assert.deepEqual(iocOneDetails({ results: [], link, count: 0 }), [
      { label: 'Reports', value: '0' },
      { label: 'Open in ioc.one', value: link, href: link },
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to iocOneDetails's type).
    assert.equal(engine.details, iocOneDetails);
  });
});

describe('provider_09: results page', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup({
      'evil.example.com': page('evil.example.com', HTML_CARDS),
      '203.0.113.45': page('203.0.113.45', HTML_CARDS.slice(1, 2)),
    }));
  });

  test('the first five cards, field by field; link and count', async () => {
    const result = await harness.run('evil.example.com', 'FQDN') as IocOneResult;
    assert.deepEqual(result, {
      results: [
        { header: '2024-05-14 · securelist.com', title: 'New campaign uses evil.example.com', source: 'https://securelist.com/report' },
        // Line breaks and runs of spaces inside the title collapse to single spaces.
        {
          header: '2024-04-02 · unit42.paloaltonetworks.com',
          title: 'Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS',
          source: 'https://unit42.paloaltonetworks.com/cve-2024-3400/',
        },
        {
          header: '2024-03-21 · www.welivesecurity.com',
          title: 'Evasive Panda leverages Monlam Festival to target Tibetans',
          source: 'https://www.welivesecurity.com/en/eset-research/evasive-panda-leverages-monlam-festival-target-tibetans/',
        },
        {
          header: '2024-02-29 · blog.talosintelligence.com',
          title: 'TinyTurla Next Generation — Turla APT spies on Polish NGOs',
          source: 'https://blog.talosintelligence.com/tinyturla-next-generation/',
        },
        {
          header: '2024-01-17 · www.mandiant.com',
          title: 'Ivanti Connect Secure VPN Post-Exploitation Lateral Movement Case Studies',
          source: 'https://www.mandiant.com/resources/blog/investigating-ivanti-zero-day-exploitation',
        },
      ],
      link: `${fake.url}/auth/deep_search?search=evil.example.com`,
      count: 5,
    });
    assert.equal(engine.summary(result), '5 reports, first: New campaign uses evil.example.com (2024-05-14 · securelist.com)');
  });

  test('one GET of the deep-search page, with a browser User-Agent and an HTML Accept', async () => {
    fake.reset();
    await harness.run('evil.example.com', 'FQDN');
    assert.equal(fake.requests.length, 1);
    const [request] = fake.requests;
    assert.equal(request!.method, 'GET');
    assert.equal(request!.path, PATH);
    assert.deepEqual([...request!.query], [['search', 'evil.example.com']]);
    assert.equal(request!.headers['user-agent'], BROWSER_USER_AGENT);
    assert.match(String(request!.headers.accept), /^text\/html/);
  });

  test('an IP and a single card: count 1, singular summary', async () => {
    const result = await harness.run('203.0.113.45', 'IPv4') as IocOneResult;
    assert.equal(result.count, 1);
    assert.equal(result.results[0]!.source, 'https://unit42.paloaltonetworks.com/cve-2024-3400/');
    assert.equal(result.link, `${fake.url}/auth/deep_search?search=203.0.113.45`);
    assert.equal(engine.summary(result), '1 report, first: Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS (2024-04-02 · unit42.paloaltonetworks.com)');
  });

  test('max_results and user_agent settings', async () => {
    const { fake: other, harness: h } = await setup({ 'evil.example.com': page('evil.example.com', HTML_CARDS) }, { max_results: 2, user_agent: 'oas-test/1.0' });
    const two = await h.run('evil.example.com', 'FQDN') as IocOneResult;
    assert.deepEqual(two.results.map((r) => r.title), ['New campaign uses evil.example.com', 'Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS']);
    assert.equal(two.count, 2);
    assert.equal(other.requests[0]!.headers['user-agent'], 'oas-test/1.0');
    const { harness: all } = await setup({ 'evil.example.com': page('evil.example.com', HTML_CARDS) }, { max_results: 50 });
    assert.equal((await all.run('evil.example.com', 'FQDN') as IocOneResult).count, HTML_CARDS.length);
  });

  // Quirk fixed (engines.md 5.13): the reference put the raw value into the URL, so a URL
  // observable's own `&`/`#` cut the search term and broke `link`. Here the value is encoded.
  test('a URL observable with & and # is searched whole, and link is a valid URL for it', async () => {
    const value = 'https://evil.example.com/gate.php?id=7&t=x#frag';
    fake.reset();
    const result = await harness.run(value, 'URL') as IocOneResult;
    assert.equal(fake.requests[0]!.query.get('search'), value);
    assert.equal(new URL(result.link).searchParams.get('search'), value);
    assert.equal(new URL(result.link).pathname, PATH);
    assert.equal(new URL(result.link).hash, '');
    assert.deepEqual({ results: result.results, count: result.count }, { results: [], count: 0 });
  });

  test('an IPv6 address and a hash are searched as written', async () => {
    fake.reset();
    await harness.run('2001:db8::1', 'IPv6');
    await harness.run('44d88612fea8a8f36de82e1278abb02f', 'MD5');
    assert.deepEqual(fake.requests.map((r) => r.query.get('search')), ['2001:db8::1', '44d88612fea8a8f36de82e1278abb02f']);
  });
});

describe('provider_09: no results', () => {
  test('an empty results page is the documented empty result, not null', async () => {
    const { fake, harness } = await setup();
    const result = await harness.run('nothing.example', 'FQDN') as IocOneResult;
    assert.deepEqual(result, { results: [], link: `${fake.url}/auth/deep_search?search=nothing.example`, count: 0 });
    assert.equal(engine.summary(result), 'no reports');
  });
});

describe('provider_09: scraped text stays text', () => {
  test('a title holding <script> markup (escaped by the site) is returned as literal text', async () => {
    const { harness } = await setup({
      'xss.example': page('xss.example', [
        { header: '2024-06-01 · blog.example', title: '<script>alert(document.cookie)</script> Loader <b>analysis</b>', source: 'https://blog.example/a' },
      ]),
    });
    const result = await harness.run('xss.example', 'FQDN') as IocOneResult;
    assert.equal(result.results[0]!.title, '<script>alert(document.cookie)</script> Loader <b>analysis</b>');
  });

  test('real markup inside a title gives its visible text only: no tags, no script body', async () => {
    const { harness } = await setup({
      'markup.example': page('markup.example', [
        {
          header: '2024-06-02 · <i>blog.example</i>',
          titleHtml: 'Loader <b>analysis</b><script>steal()</script><style>h5{}</style> <img src=x onerror="alert(1)">part&nbsp;2',
          source: 'https://blog.example/b',
        },
      ]),
    });
    const [card] = (await harness.run('markup.example', 'FQDN') as IocOneResult).results;
    // The header was escaped by the site: its angle brackets are text.
    assert.deepEqual(card, { header: '2024-06-02 · <i>blog.example</i>', title: 'Loader analysis part 2', source: 'https://blog.example/b' });
  });

  test('control, zero-width and bidi-override characters are removed', () => {
    assert.equal(plainText('  Evil\u202egnp.exe\u0007 \u200bdropper\r\n\t report \u001b[31m '), 'Evilgnp.exe dropper report [31m');
  });
});

describe('provider_09: links', () => {
  const cards: FakeCard[] = [
    { header: 'relative to the site', title: 'Root-relative', source: '/auth/report/7.html' },
    { header: 'relative to the page', title: 'Path-relative', source: 'report/8.html?lang=en' },
    { header: 'protocol-relative', title: 'Protocol-relative', source: '//cdn.example.net/r/9.html' },
    { header: 'script link', title: 'Script link', source: 'javascript:alert(1)' },
    { header: 'data link', title: 'Data link', source: 'data:text/html,<script>alert(1)</script>' },
    { header: 'absolute', title: 'Absolute', source: 'https://securelist.com/report' },
  ];

  test('relative links are resolved against the page URL; only http(s) links are kept', async () => {
    const { fake, harness } = await setup({ 'links.example': page('links.example', cards) });
    const result = await harness.run('links.example', 'FQDN') as IocOneResult;
    assert.deepEqual(result.results.map((r) => [r.title, r.source]), [
      ['Root-relative', `${fake.url}/auth/report/7.html`],
      ['Path-relative', `${fake.url}/auth/report/8.html?lang=en`],
      ['Protocol-relative', 'http://cdn.example.net/r/9.html'],
      ['Absolute', 'https://securelist.com/report'],
    ]);
    assert.equal(result.count, 4);
  });

  test('a <base href> in the page is honoured', () => {
    const html = page('q', cards.slice(0, 2)).replace('<head>', '<head><base href="https://ioc.one/auth/reports/">');
    assert.deepEqual(parseIocOnePage(html, 'http://127.0.0.1:1/auth/deep_search?search=q', 'html').map((r) => r.source), [
      'https://ioc.one/auth/report/7.html',
      'https://ioc.one/auth/reports/report/8.html?lang=en',
    ]);
  });
});

// Bug fixed (engines.md 5.13 and 8 item 22): the reference matched the exact class strings and
// failed the whole engine (null) when a single card lacked its header, title or link.
describe('provider_09: card matching (reference bug 22)', () => {
  test('class tokens in any order, with extra classes, are still cards and source buttons', () => {
    const html = page('q', [
      { header: 'h1', title: 'Reordered card', source: 'https://a.example/1', cardClass: 'my-1 card shadow-sm box-shadow' },
      { header: 'h2', title: 'Reordered button', source: 'https://a.example/2', sourceClass: 'btn-primary btn btn-sm m-1 border' },
    ]);
    assert.deepEqual(parseIocOnePage(html, 'https://ioc.one/auth/deep_search?search=q', 'html'), [
      { header: 'h1', title: 'Reordered card', source: 'https://a.example/1' },
      { header: 'h2', title: 'Reordered button', source: 'https://a.example/2' },
    ]);
  });

  test('an incomplete card is skipped (no title / no source) or kept with an empty header; the rest still counts', async () => {
    const { harness } = await setup({
      'partial.example': page('partial.example', [
        { header: '2024-05-01 · no-title.example', source: 'https://no-title.example/r' },
        { title: 'Report without a header', source: 'https://no-header.example/r' },
        { header: '2024-05-03 · no-source.example', title: 'Report without a source' },
        ...HTML_CARDS,
      ]),
    });
    const result = await harness.run('partial.example', 'FQDN') as IocOneResult;
    assert.deepEqual(result.results.map((r) => r.title), [
      'Report without a header',
      'New campaign uses evil.example.com',
      'Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS',
      'Evasive Panda leverages Monlam Festival to target Tibetans',
      'TinyTurla Next Generation — Turla APT spies on Polish NGOs',
    ]);
    assert.deepEqual(result.results[0], { header: '', title: 'Report without a header', source: 'https://no-header.example/r' });
    assert.equal(result.count, 5);
  });

  test('the details button (no new tab) is never taken for the source', () => {
    const html = page('q', [{ header: 'h', title: 'Only details', source: undefined }]);
    assert.match(html, /href="\/auth\/report\/1000"/);
    assert.throws(() => parseIocOnePage(html, 'https://ioc.one/auth/deep_search?search=q', 'html'), EngineError);
  });
});

describe('provider_09: pages that are not results are errors', () => {
  let harness: EngineHarness;
  before(async () => {
    ({ harness } = await setup({
      captcha: CAPTCHA_PAGE,
      login: LOGIN_PAGE,
      redesign: changedLayoutPage('redesign'),
      error: ERROR_PAGE,
      broken: page('broken', [
        { header: 'a', title: 'No link', source: undefined },
        { header: 'b', title: 'Script link', source: 'javascript:void(0)' },
      ]),
      json: reply.malformed(),
      pdf: { status: 200, headers: { 'content-type': 'application/pdf' }, body: '%PDF-1.7\n' },
      truncated: { status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><head><title>IOC.one' },
    }));
  });

  test('a captcha / bot check', async () => {
    await rejectsWith(harness.run('captcha', 'FQDN'), /^ioc\.one \(HTML\) answered with a captcha \/ bot check instead of search results$/, EngineError);
  });

  test('a login wall', async () => {
    await rejectsWith(harness.run('login', 'FQDN'), /^ioc\.one \(HTML\) answered with a login page instead of search results$/, EngineError);
  });

  test('cards none of which is usable', async () => {
    await rejectsWith(harness.run('broken', 'FQDN'), /result cards have an unexpected layout: none of 2 has a title and a source link/, EngineError);
  });

  test('a malformed body: JSON, a PDF', async () => {
    await rejectsWith(harness.run('json', 'FQDN'), /answered with application\/json, not an HTML page/, EngineError);
    await rejectsWith(harness.run('pdf', 'FQDN'), /answered with application\/pdf, not an HTML page/, EngineError);
  });
});

describe('provider_09: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  /** The result every page below gives: no reports. */
  const none = (value: string): IocOneResult => ({ results: [], link: `${fake.url}${PATH}?search=${value}`, count: 0 });
  before(async () => {
    ({ fake, harness } = await setup({
      bare: '<html><body></body></html>',
      empty: '',
      redesign: changedLayoutPage('redesign'),
      error: ERROR_PAGE,
      truncated: { status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><head><title>IOC.one' },
      untyped: { status: 200, headers: {}, body: '<html><body><p>No results</p></body></html>' },
      signin: page('signin', []).replace('</nav>', '<form class="form-inline" action="/login" method="post"><input type="password" name="password"></form></nav>'),
      minimal: '<div class="card box-shadow"><h5 class="card-title">Only a title</h5><a class="btn-primary" target="_blank" href="/r/1">Source</a></div>',
    }));
  });

  test('a page without cards is "no reports", whatever else it holds or lacks (the old refusal without a search form was wrong)', async () => {
    for (const value of ['bare', 'empty', 'redesign', 'error', 'truncated', 'untyped']) {
      assert.deepEqual(await harness.run(value, 'FQDN'), none(value), value);
    }
  });

  test('an empty results page holding a sign-in box beside the search box is not a login wall', async () => {
    assert.deepEqual(await harness.run('signin', 'FQDN'), none('signin'));
  });

  test('a minimal card (no header, no card body, no border or margin classes), field by field', async () => {
    assert.deepEqual(await harness.run('minimal', 'FQDN'), {
      results: [{ header: '', title: 'Only a title', source: `${fake.url}/r/1` }],
      link: `${fake.url}${PATH}?search=minimal`,
      count: 1,
    });
  });
});

describe('provider_09: upstream failures', () => {
  test('HTTP 500 is an error', async () => {
    const { fake, harness } = await setup({ down: reply.html('<h1>Internal Server Error</h1>', 500) });
    await rejectsWith(harness.run('down', 'FQDN'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.hits(`GET ${PATH}`).length, 1);
  });

  test('HTTP 404 is an error, not "no results"', async () => {
    const { harness } = await setup({ gone: reply.html('<h1>Not Found</h1>', 404) });
    await rejectsWith(harness.run('gone', 'FQDN'), /^HTTP 404 Not Found$/);
  });

  test('429 with Retry-After: 1, then the page: succeeds on the retry', async () => {
    const { fake, harness } = await setup(
      { 'evil.example.com': sequence(reply.tooMany(1), reply.html(page('evil.example.com', HTML_CARDS))) },
      { retries: 1 },
    );
    const result = await harness.run('evil.example.com', 'FQDN') as IocOneResult;
    assert.equal(result.count, 5);
    assert.equal(fake.hits(`GET ${PATH}`).length, 2);
  });

  test('a hanging upstream times out', async () => {
    const { fake, harness } = await setup({ slow: reply.hang() }, { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('slow', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});

describe('provider_09 through the runner', () => {
  let fake: FakeHttpServer;
  let runner: RunnerHarness;
  before(async () => {
    fake = await startFakeHttp(iocOneRoutes('html', {
      'evil.example.com': page('evil.example.com', HTML_CARDS),
      redesign: changedLayoutPage('redesign'),
      broken: page('broken', [{ header: 'a', title: 'No link' }]),
    }));
    runner = runnerHarness([engine], { settings: { provider_09: { base_url: fake.url, retries: 0, timeout_ms: 3000 } } });
  });
  after(async () => {
    await runner.close();
    await fake.close();
  });

  test('a domain: results under the alias the caller used, no pivot (pre-pivot engine)', async () => {
    const [result] = await runner.analyze([{ value: 'evil.example.com', type: 'FQDN' }], ['ioc_one_html']);
    assert.equal((result!.ioc_one_html as IocOneResult).count, 5);
    assert.equal(result!.reversed_ip, undefined);
    assert.equal(result!.errors, undefined);
  });

  test('cards none of which is usable are reported as the engine error, the value null', async () => {
    const [result] = await runner.analyze([{ value: 'broken', type: 'FQDN' }], ['provider_09']);
    assert.equal(result!.provider_09, null);
    assert.match(result!.errors!.provider_09!, /unexpected layout/);
  });

  test('a changed layout without cards is "no reports", as the reference (issue 26)', async () => {
    const [result] = await runner.analyze([{ value: 'redesign', type: 'FQDN' }], ['provider_09']);
    assert.deepEqual(result!.provider_09, { results: [], link: `${fake.url}${PATH}?search=redesign`, count: 0 });
    assert.equal(result!.errors, undefined);
  });
});
