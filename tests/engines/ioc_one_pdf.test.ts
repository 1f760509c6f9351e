import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, { iocOnePdfLookup, type IocOneResult } from '../../engines/ioc_one_pdf.js';
import { iocOneDetails } from '../../src/scrape/ioc-one.js';
import htmlEngine from '../../engines/ioc_one_html.js';
import { EngineError } from '../../src/engine/contract.js';
import { parseIocOnePage } from '../../src/scrape/ioc-one.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import { CAPTCHA_PAGE, changedLayoutPage, HTML_CARDS, iocOneRoutes, LOGIN_PAGE, PDF_CARDS, resultsPage } from '../fakes/ioc-one.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

const PATH = '/auth/deep_search/pdf';

/** Every fake and harness started here, closed in `after`. */
const closers: (() => Promise<void>)[] = [];

after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A fake ioc.one (PDF search) answering `answers` by search value, and a harness pointed at it. */
async function setup(
  answers: Record<string, string | FakeRoute> = {},
  settings: Record<string, unknown> = {},
): Promise<{ fake: FakeHttpServer; harness: EngineHarness }> {
  const fake = await startFakeHttp(iocOneRoutes('pdf', answers));
  const harness = engineHarness(engine, { settings: { base_url: fake.url, retries: 0, timeout_ms: 3000, ...settings } });
  closers.push(() => harness.close(), () => fake.close());
  return { fake, harness };
}


describe('provider_10 declaration', () => {
  test('catalog fields; same defaults, types and settings as provider_09', () => {
    assert.equal(engine.id, 'provider_10');
    assert.equal(engine.service, 'ioc_one_pdf');
    assert.equal(engine.label, 'Ioc.One (PDF)');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash', 'scraping']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.defaults.timeout_ms, 20000);
    assert.equal(engine.defaults.base_url, 'https://ioc.one');
    assert.deepEqual(engine.defaults, htmlEngine.defaults);
    assert.equal(engine.settingsSchema, htmlEngine.settingsSchema);
    assert.equal(engine.run, iocOnePdfLookup);
  });

  test('details: report count, each PDF (title linked to it, labelled by its card header), the search page', () => {
    const sha256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
    const link = `https://ioc.one/auth/deep_search/pdf?search=${sha256}`;
    const results = parseIocOnePage(resultsPage('pdf', sha256, PDF_CARDS), link, 'pdf');
    const result: IocOneResult = { results, link, count: results.length };
    assert.deepEqual(engine.details!(result, sha256), [
      { label: 'Reports', value: '3' },
      {
        label: '2024-05-02 · Kaspersky ICS CERT',
        value: 'APT attacks on industrial organizations in H2 2023',
        href: 'https://ioc.one/static/pdf/2024/kaspersky-ics-apt-h2-2023.pdf',
      },
      {
        label: '2024-02-07 · CISA',
        value: 'AA24-038A PRC State-Sponsored Actors Compromise U.S. Critical Infrastructure',
        href: 'https://www.cisa.gov/sites/default/files/2024-02/aa24-038a-jcsa-prc-state-sponsored-actors.pdf',
      },
      {
        label: '2023-10-19 · ioc.one mirror',
        value: 'Operation Triangulation — technical appendix',
        href: 'https://ioc.one/auth/deep_search/reports/triangulation-appendix.pdf',
      },
      { label: 'Open in ioc.one', value: link, href: link },
    ]);
    // The engine declares it (checked last: the assertion narrows `engine.details` to iocOneDetails's type).
    assert.equal(engine.details, iocOneDetails);
  });
});

describe('provider_10: results page', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  const sha256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
  before(async () => {
    ({ fake, harness } = await setup({ [sha256]: resultsPage('pdf', sha256, PDF_CARDS) }));
  });

  test('field by field; PDF links on the site resolved against the page URL', async () => {
    const result = await harness.run(sha256, 'SHA256') as IocOneResult;
    assert.deepEqual(result, {
      results: [
        {
          header: '2024-05-02 · Kaspersky ICS CERT',
          title: 'APT attacks on industrial organizations in H2 2023',
          source: `${fake.url}/static/pdf/2024/kaspersky-ics-apt-h2-2023.pdf`,
        },
        {
          header: '2024-02-07 · CISA',
          title: 'AA24-038A PRC State-Sponsored Actors Compromise U.S. Critical Infrastructure',
          source: 'https://www.cisa.gov/sites/default/files/2024-02/aa24-038a-jcsa-prc-state-sponsored-actors.pdf',
        },
        {
          header: '2023-10-19 · ioc.one mirror',
          title: 'Operation Triangulation — technical appendix',
          // Relative to the page /auth/deep_search/pdf: its directory is /auth/deep_search/.
          source: `${fake.url}/auth/deep_search/reports/triangulation-appendix.pdf`,
        },
      ],
      link: `${fake.url}/auth/deep_search/pdf?search=${sha256}`,
      count: 3,
    });
    assert.equal(engine.summary(result), '3 reports, first: APT attacks on industrial organizations in H2 2023 (2024-05-02 · Kaspersky ICS CERT)');
  });

  test('one GET of the PDF search page', async () => {
    fake.reset();
    await harness.run(sha256, 'SHA256');
    assert.deepEqual(fake.requests.map((r) => [r.method, r.path, r.query.get('search')]), [['GET', PATH, sha256]]);
    assert.match(String(fake.requests[0]!.headers['user-agent']), /^Mozilla\/5\.0 /);
  });

  test('first five of many cards', async () => {
    const { harness: h } = await setup({ 'evil.example.com': resultsPage('pdf', 'evil.example.com', [...PDF_CARDS, ...HTML_CARDS]) });
    const result = await h.run('evil.example.com', 'FQDN') as IocOneResult;
    assert.equal(result.count, 5);
    assert.deepEqual(result.results.map((r) => r.title).slice(3), ['New campaign uses evil.example.com', 'Threat Brief: Exploitation of CVE-2024-3400 in PAN-OS']);
  });

  test('the PDF button (mx-1) wins over another primary button of the card; the margin is only a preference', () => {
    const html = resultsPage('pdf', 'q', PDF_CARDS.slice(1, 2)).replace(
      '<div class="d-flex flex-wrap">',
      '<div class="d-flex flex-wrap"><a class="btn border btn-primary m-1" target="_blank" href="https://elsewhere.example/html-version">HTML</a>',
    );
    const pdfUrl = 'https://www.cisa.gov/sites/default/files/2024-02/aa24-038a-jcsa-prc-state-sponsored-actors.pdf';
    assert.equal(parseIocOnePage(html, 'https://ioc.one/auth/deep_search/pdf?search=q', 'pdf')[0]!.source, pdfUrl);
    assert.equal(parseIocOnePage(html, 'https://ioc.one/auth/deep_search?search=q', 'html')[0]!.source, 'https://elsewhere.example/html-version');
    // A PDF page read with the HTML engine's preference still finds the (only) primary button.
    const plain = resultsPage('pdf', 'q', PDF_CARDS.slice(1, 2));
    assert.equal(parseIocOnePage(plain, 'https://ioc.one/auth/deep_search?search=q', 'html')[0]!.source, pdfUrl);
  });

  test('a title with escaped <script> stays literal text', async () => {
    const { harness: h } = await setup({
      'xss.example': resultsPage('pdf', 'xss.example', [{ header: 'h', title: 'Report <script>alert(1)</script>.pdf', source: '/static/pdf/x.pdf' }]),
    });
    const result = await h.run('xss.example', 'FQDN') as IocOneResult;
    assert.equal(result.results[0]!.title, 'Report <script>alert(1)</script>.pdf');
  });
});

describe('provider_10: no results and pages that are not results', () => {
  let fake: FakeHttpServer;
  let harness: EngineHarness;
  before(async () => {
    ({ fake, harness } = await setup({ captcha: CAPTCHA_PAGE, login: LOGIN_PAGE, redesign: changedLayoutPage('redesign') }));
  });

  test('an empty results page: results [], count 0', async () => {
    const result = await harness.run('198.51.100.7', 'IPv4') as IocOneResult;
    assert.deepEqual(result, { results: [], link: `${fake.url}/auth/deep_search/pdf?search=198.51.100.7`, count: 0 });
    assert.equal(engine.summary(result), 'no reports');
  });

  test('captcha, login wall: one-line EngineErrors naming the PDF engine', async () => {
    await rejectsWith(harness.run('captcha', 'FQDN'), /^ioc\.one \(PDF\) answered with a captcha/, EngineError);
    await rejectsWith(harness.run('login', 'FQDN'), /^ioc\.one \(PDF\) answered with a login page/, EngineError);
  });

  test('a changed layout without cards is "no reports", as the reference (issue 26: the old refusal was wrong)', async () => {
    assert.deepEqual(await harness.run('redesign', 'FQDN'), { results: [], link: `${fake.url}${PATH}?search=redesign`, count: 0 });
  });

  test('a malformed body', async () => {
    const { harness: h } = await setup({ json: reply.malformed() });
    await rejectsWith(h.run('json', 'FQDN'), /answered with application\/json, not an HTML page/, EngineError);
  });
});

describe('provider_10: upstream failures', () => {
  test('HTTP 500 is an error', async () => {
    const { harness } = await setup({ down: reply.html('<h1>Internal Server Error</h1>', 500) });
    await rejectsWith(harness.run('down', 'FQDN'), /^HTTP 500 Internal Server Error$/);
  });

  test('429 with Retry-After: 1, then the page: succeeds on the retry', async () => {
    const { fake, harness } = await setup(
      { 'evil.example.com': sequence(reply.tooMany(1), reply.html(resultsPage('pdf', 'evil.example.com', PDF_CARDS))) },
      { retries: 1 },
    );
    assert.equal((await harness.run('evil.example.com', 'FQDN') as IocOneResult).count, 3);
    assert.equal(fake.hits(`GET ${PATH}`).length, 2);
  });

  test('a hanging upstream times out', async () => {
    const { fake, harness } = await setup({ slow: reply.hang() }, { timeout_ms: 300, retries: 0 });
    await rejectsWith(harness.run('slow', 'FQDN'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });
});
