import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  chromeExtensionDetails,
  chromeExtensionLookup,
  chromeExtensionSummary,
  chromeStoreUrl,
  edgeStoreUrl,
  type ChromeExtensionResult,
} from '../../engines/chrome_extension.js';
import github from '../../engines/github.js';
import google from '../../engines/google.js';
import iocOneHtml from '../../engines/ioc_one_html.js';
import iocOnePdf from '../../engines/ioc_one_pdf.js';
import opencti from '../../engines/opencti.js';
import { Catalog, loadEngineDefinitions } from '../../src/engine/catalog.js';
import { resolveSettings } from '../../src/engine/context.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { extractObservables } from '../../src/observables/extract.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer, type FakeRoute } from '../fakes/http.js';
import {
  AUTO_REFRESH_EDGE_ID,
  CAPTCHA_PAGE,
  CHROME_GENERIC_PAGE,
  CHROME_HOME_PAGE,
  CHROME_ITEMS,
  chromeDetailPage,
  chromeRoutes,
  CONSENT_PAGE,
  edgeDetailPage,
  EDGE_ITEMS,
  edgeRoutes,
  fakeRoutes,
  fakeSettings,
  TRANSLATE_CHROME_ID,
  UBLOCK_CHROME_ID,
  UBLOCK_EDGE_ID,
  UNKNOWN_ID,
} from '../fakes/chrome_extension.js';
import { intelRoutes, intelSettings } from '../fakes/intel.js';
import { fakeRoutes as openCtiRoutes, fakeSettings as openCtiSettings } from '../fakes/opencti.js';
import { fakeRoutes as googleRoutes, fakeSettings as googleSettings } from '../fakes/google.js';
import { rejectsWith } from '../helpers/assert.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness, suiteRunners } from '../helpers/runner.js';

/** Every harness and fake started here, closed at the end. */
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** Chrome Web Store routes under `/chrome`, Edge Add-ons routes under `/edge`, plus `extra`. */
async function stores(extra: Record<string, FakeRoute> = {}): Promise<FakeHttpServer> {
  const fake = await startFakeHttp({ ...chromeRoutes('/chrome'), ...edgeRoutes('/edge'), ...extra });
  closers.push(() => fake.close());
  return fake;
}

/** A harness whose Chrome Web Store is `<fake>/<chrome>` and Edge Add-ons `<fake>/<edge>`. */
function harness(fake: FakeHttpServer, settings: Record<string, unknown> = {}, chrome = 'chrome', edge = 'edge'): EngineHarness {
  const h = engineHarness(engine, {
    settings: { base_url: `${fake.url}/${chrome}`, edge_base_url: `${fake.url}/${edge}`, retries: 0, timeout_ms: 4000, ...settings },
  });
  closers.push(() => h.close());
  return h;
}

const lookup = (h: EngineHarness, id: string) => h.run(id, 'CHROME_EXTENSION') as Promise<ChromeExtensionResult | null>;

describe('chrome_extension declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'chrome_extension');
    assert.equal(engine.service, 'chrome_extension');
    assert.equal(engine.label, 'Chrome / Edge extension');
    assert.deepEqual(engine.catalogs, []);
    assert.deepEqual(engine.tags, ['free_no_key', 'scraping']);
    assert.ok(!(engine.tags as readonly string[]).includes('default'));
    assert.deepEqual(engine.types, ['CHROME_EXTENSION']);
    assert.equal(engine.reversedIp, false);
    assert.equal(engine.pivot, false);
    assert.deepEqual(engine.credentials, []);
    assert.deepEqual(engine.defaults, {
      timeout_ms: 10_000,
      base_url: 'https://chromewebstore.google.com',
      edge_base_url: 'https://microsoftedge.microsoft.com',
      concurrency: 4,
    });
    assert.equal(engine.run, chromeExtensionLookup);
    assert.equal(engine.summary, chromeExtensionSummary);
    assert.equal(engine.details, chromeExtensionDetails);
  });

  test('the default store pages are the reference\'s', () => {
    const settings = resolveSettings(engine, undefined);
    assert.equal(chromeStoreUrl(String(settings.base_url), UBLOCK_CHROME_ID), `https://chromewebstore.google.com/detail/${UBLOCK_CHROME_ID}`);
    assert.equal(edgeStoreUrl(String(settings.edge_base_url), UBLOCK_EDGE_ID), `https://microsoftedge.microsoft.com/addons/detail/${UBLOCK_EDGE_ID}`);
    // Trailing slashes of a configured address do not double; a path is kept.
    assert.equal(chromeStoreUrl('http://127.0.0.1:8080/mirror/cws/', 'x'), 'http://127.0.0.1:8080/mirror/cws/detail/x');
    assert.equal(edgeStoreUrl('http://127.0.0.1:8080/', 'x'), 'http://127.0.0.1:8080/addons/detail/x');
  });

  test('offered by both catalog variants, beyond the spec, never preselected; its id is its alias', () => {
    for (const variant of ['main', 'older'] as const) {
      const catalog = new Catalog([engine as EngineDefinition], variant);
      const found = catalog.find('chrome_extension');
      assert.ok(found, variant);
      assert.equal(catalog.isDefault(found), false);
      assert.equal(catalog.variantOf(found), 'beyond');
      assert.deepEqual(catalog.defaults(), []);
    }
  });

  test('summary and card', () => {
    const chrome = { name: 'uBlock Origin', url: `https://chromewebstore.google.com/detail/${UBLOCK_CHROME_ID}` };
    const edge = { name: 'uBlock Origin', url: `https://microsoftedge.microsoft.com/addons/detail/${UBLOCK_EDGE_ID}` };
    assert.equal(engine.summary(chrome), 'uBlock Origin (Chrome Web Store)');
    assert.equal(engine.summary(edge), 'uBlock Origin (Edge Add-ons)');
    assert.deepEqual(chromeExtensionDetails(chrome), [
      { label: 'Name', value: 'uBlock Origin', href: chrome.url },
      { label: 'Store', value: 'Chrome Web Store' },
      { label: 'Open in the Chrome Web Store', value: chrome.url, href: chrome.url },
    ]);
    assert.deepEqual(chromeExtensionDetails(edge), [
      { label: 'Name', value: 'uBlock Origin', href: edge.url },
      { label: 'Store', value: 'Edge Add-ons' },
      { label: 'Open in Edge Add-ons', value: edge.url, href: edge.url },
    ]);
  });
});

describe('chrome_extension against loopback stores', () => {
  let fake: FakeHttpServer;
  before(async () => {
    fake = await stores({
      // Chrome Web Store variants under their own prefixes; Edge Add-ons is always `/edge`.
      'GET /chrome-500/detail/*': reply.status(500, { error: 'Internal Server Error' }),
      'GET /chrome-503/detail/*': reply.status(503, { error: 'Service Unavailable' }),
      'GET /chrome-hang/detail/*': reply.hang(),
      'GET /chrome-generic/detail/*': reply.html(CHROME_GENERIC_PAGE),
      'GET /chrome-home/detail/*': { status: 302, headers: { location: '/chrome-home/' } },
      'GET /chrome-home/': reply.html(CHROME_HOME_PAGE),
      'GET /chrome-empty-h1/detail/*': reply.html(chromeDetailPage(UBLOCK_CHROME_ID, CHROME_ITEMS[UBLOCK_CHROME_ID]!, { nameHtml: '  <span> </span>\n ' })),
      'GET /chrome-consent/detail/*': reply.html(CONSENT_PAGE),
      'GET /chrome-captcha/detail/*': reply.html(CAPTCHA_PAGE, 200),
      'GET /chrome-json/detail/*': reply.json({ name: 'uBlock Origin' }),
      'GET /chrome-markup/detail/*': reply.html(chromeDetailPage(UBLOCK_CHROME_ID, CHROME_ITEMS[UBLOCK_CHROME_ID]!, {
        nameHtml: '\n  <span class="x">uBlock</span>\u202e <b>Origin</b> &amp; <script>alert(1)</script>friends\u0007  ',
      })),
      'GET /edge-500/addons/detail/*': reply.status(500, { error: 'Internal Server Error' }),
      'GET /edge-404/addons/detail/*': { status: 404, headers: { 'content-type': 'text/html' }, body: '<html><head><title>Microsoft Edge Addons</title></head><body></body></html>' },
      'GET /edge-flaky/addons/detail/*': sequence(reply.status(503, { error: 'Service Unavailable' }), (req) => reply.html(edgeDetailPage(req.path.split('/').pop()!, EDGE_ITEMS[req.path.split('/').pop()!]))),
      'GET /edge-notitle/addons/detail/*': reply.html('<!DOCTYPE html><html><head></head><body><div id="root"></div></body></html>'),
    });
  });

  test('listed on the Chrome Web Store: the first <h1>, the page requested as url; Edge not asked', async () => {
    fake.reset();
    const result = await lookup(harness(fake), UBLOCK_CHROME_ID);
    assert.deepEqual(result, { name: 'uBlock Origin', url: `${fake.url}/chrome/detail/${UBLOCK_CHROME_ID}` });
    // The redirect to /detail/<slug>/<id> is followed; the url stays the one requested.
    assert.deepEqual(fake.requests.map((r) => r.path), [`/chrome/detail/${UBLOCK_CHROME_ID}`, `/chrome/detail/ublock-origin/${UBLOCK_CHROME_ID}`]);
    assert.match(String(fake.requests[0]!.headers.accept), /text\/html/);
    assert.equal(fake.hits('GET /edge/').length, 0);
    assert.deepEqual(await lookup(harness(fake), TRANSLATE_CHROME_ID), { name: 'Google Translate', url: `${fake.url}/chrome/detail/${TRANSLATE_CHROME_ID}` });
  });

  test('not on the Chrome Web Store (404): Edge Add-ons, name from <title> without the store suffix', async () => {
    fake.reset();
    const result = await lookup(harness(fake), UBLOCK_EDGE_ID);
    assert.deepEqual(result, { name: 'uBlock Origin', url: `${fake.url}/edge/addons/detail/${UBLOCK_EDGE_ID}` });
    assert.deepEqual(fake.requests.map((r) => r.path), [`/chrome/detail/${UBLOCK_EDGE_ID}`, `/edge/addons/detail/${UBLOCK_EDGE_ID}`]);
    assert.equal(engine.summary(result!), 'uBlock Origin (Edge Add-ons)');
  });

  test('quirk fixed: a hyphen in an Edge name is kept (the reference cut "Auto-Refresh Plus" to "Auto")', async () => {
    const result = await lookup(harness(fake), AUTO_REFRESH_EDGE_ID);
    assert.equal(result?.name, 'Auto-Refresh Plus');
  });

  test('listed by neither store: null, both asked once', async () => {
    fake.reset();
    assert.equal(await lookup(harness(fake), UNKNOWN_ID), null);
    assert.deepEqual(fake.requests.map((r) => r.path), [`/chrome/detail/${UNKNOWN_ID}`, `/edge/addons/detail/${UNKNOWN_ID}`]);
    // Edge answering 404, or a page without any title: not listed either.
    assert.equal(await lookup(harness(fake, {}, 'chrome', 'edge-404'), UNKNOWN_ID), null);
    assert.equal(await lookup(harness(fake, {}, 'chrome', 'edge-notitle'), UNKNOWN_ID), null);
  });

  test('quirk fixed: Edge\'s bare "Microsoft Edge Addons" title is "not listed", not a name', async () => {
    const result = await lookup(harness(fake, {}, 'chrome', 'edge'), UNKNOWN_ID);
    assert.equal(result, null);
  });

  test('a Chrome page without a name (no <h1>, an empty <h1>): Edge Add-ons is asked', async () => {
    for (const chrome of ['chrome-generic', 'chrome-empty-h1']) {
      fake.reset();
      assert.deepEqual(await lookup(harness(fake, {}, chrome), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge/addons/detail/${UBLOCK_EDGE_ID}` }, chrome);
      assert.equal(fake.hits('GET /edge/').length, 1, chrome);
      assert.equal(await lookup(harness(fake, {}, chrome), UNKNOWN_ID), null, chrome);
    }
  });

  test('quirk fixed: a page with an <h1> that is not the extension\'s (the store\'s home page) is no name', async () => {
    fake.reset();
    assert.equal(await lookup(harness(fake, {}, 'chrome-home'), UNKNOWN_ID), null);
    assert.deepEqual(fake.requests.map((r) => r.path), [`/chrome-home/detail/${UNKNOWN_ID}`, '/chrome-home/', `/edge/addons/detail/${UNKNOWN_ID}`]);
  });

  test('quirk fixed: Google\'s consent page is no name: Edge gives it, or the lookup fails saying why', async () => {
    assert.deepEqual(await lookup(harness(fake, {}, 'chrome-consent'), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge/addons/detail/${UBLOCK_EDGE_ID}` });
    await rejectsWith(lookup(harness(fake, {}, 'chrome-consent'), UNKNOWN_ID),
      /^Chrome Web Store: answered with Google's consent page instead of the store page \(not listed on Edge Add-ons\)$/);
  });

  test('a captcha ("unusual traffic") page, or an answer that is no HTML: a failure of that store', async () => {
    await rejectsWith(lookup(harness(fake, {}, 'chrome-captcha'), UNKNOWN_ID),
      /^Chrome Web Store: answered with a captcha \("unusual traffic"\) page instead of the store page \(not listed on Edge Add-ons\)$/);
    await rejectsWith(lookup(harness(fake, {}, 'chrome-json'), UNKNOWN_ID),
      /^Chrome Web Store: answered with application\/json, not an HTML page \(not listed on Edge Add-ons\)$/);
  });

  test('the Chrome Web Store failing (HTTP 500): Edge\'s name if it has one, else an error (not a silent null)', async () => {
    fake.reset();
    assert.deepEqual(await lookup(harness(fake, { retries: 2 }, 'chrome-500'), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge/addons/detail/${UBLOCK_EDGE_ID}` });
    // One try only for the Chrome Web Store, so that Edge Add-ons keeps its time.
    assert.equal(fake.hits('GET /chrome-500/').length, 1);
    await rejectsWith(lookup(harness(fake, {}, 'chrome-500'), UNKNOWN_ID), /^Chrome Web Store: HTTP 500 Internal Server Error \(not listed on Edge Add-ons\)$/);
  });

  test('Edge Add-ons failing after a Chrome "not listed": an error naming Edge', async () => {
    await rejectsWith(lookup(harness(fake, {}, 'chrome', 'edge-500'), UNKNOWN_ID), /^Edge Add-ons: HTTP 500 Internal Server Error \(not listed on the Chrome Web Store\)$/);
    // Chrome found it: Edge is not asked, whatever state it is in.
    assert.equal((await lookup(harness(fake, {}, 'chrome', 'edge-500'), UBLOCK_CHROME_ID))?.name, 'uBlock Origin');
  });

  test('both stores failing: one line with both reasons', async () => {
    await rejectsWith(lookup(harness(fake, {}, 'chrome-503', 'edge-500'), UNKNOWN_ID),
      /^Chrome Web Store: HTTP 503 Service Unavailable; Edge Add-ons: HTTP 500 Internal Server Error$/);
  });

  test('Edge Add-ons answering 503 once: retried by the shared client', async () => {
    fake.reset();
    const result = await lookup(harness(fake, { retries: 2 }, 'chrome', 'edge-flaky'), UBLOCK_EDGE_ID);
    assert.equal(result?.name, 'uBlock Origin');
    assert.equal(fake.hits('GET /edge-flaky/').length, 2);
  });

  test('a hanging Chrome Web Store: given half the time, then Edge Add-ons answers', async () => {
    fake.reset();
    const h = harness(fake, { timeout_ms: 1000 }, 'chrome-hang');
    assert.deepEqual(await lookup(h, UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge/addons/detail/${UBLOCK_EDGE_ID}` });
    await rejectsWith(lookup(h, UNKNOWN_ID), new RegExp(`^Chrome Web Store: timeout after 500 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port} \\(not listed on Edge Add-ons\\)$`));
  });

  test('a store that cannot be reached: a network error', async () => {
    const h = engineHarness(engine, { settings: { base_url: 'http://127.0.0.1:1', edge_base_url: 'http://127.0.0.1:1', retries: 0 } });
    closers.push(() => h.close());
    await rejectsWith(lookup(h, UNKNOWN_ID), /^Chrome Web Store: connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\); Edge Add-ons: connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('the name is plain text: markup, scripts, control and bidi-override characters dropped', async () => {
    const result = await lookup(harness(fake, {}, 'chrome-markup'), UBLOCK_CHROME_ID);
    assert.equal(result?.name, 'uBlock Origin & friends');
  });

  test('not an extension id: null, nothing asked', async () => {
    fake.reset();
    const h = harness(fake);
    assert.equal(await h.run('example.com', 'FQDN'), null);
    assert.equal(await h.run('CJPALHDLNBPAFIAMEJDNHCPHJBKEIAGM', 'CHROME_EXTENSION'), null);
    assert.equal(await h.run('../../admin/cjpalhdlnbpafiamejdnh', 'CHROME_EXTENSION'), null);
    assert.equal(fake.requests.length, 0);
  });
});

describe('chrome_extension: minimal and degenerate pages (issue 26)', () => {
  let fake: FakeHttpServer;
  /** A page served with no content type at all. */
  const untyped = (body: string): FakeRoute => ({ status: 200, headers: {}, body });
  before(async () => {
    fake = await stores({
      // engines.md 9.5.2's minimal pages: a heading, a title, nothing else the store usually has.
      'GET /chrome-min/detail/*': untyped('<html><head><title>uBlock Origin - Chrome Web Store</title></head><body><main><h1 class="Pa2dE">uBlock Origin</h1></main></body></html>'),
      'GET /chrome-bare/detail/*': reply.html('<h1>uBlock Origin</h1>'),
      'GET /chrome-canonical/detail/*': (req) => reply.html(`<html><head><link rel="canonical" href="/detail/ublock-origin/${req.path.split('/').pop()}/?hl=en"></head><body><h1>uBlock Origin</h1></body></html>`),
      'GET /chrome-empty/detail/*': untyped(''),
      'GET /edge-min/addons/detail/*': untyped('<html><head><title>uBlock Origin - Microsoft Edge Addons</title></head><body><div id="root"></div></body></html>'),
      'GET /edge-nosuffix/addons/detail/*': reply.html('<title>uBlock Origin</title>'),
      'GET /edge-bar/addons/detail/*': reply.html('<title>uBlock Origin | Microsoft Edge Add-ons</title>'),
      // The suffix the Edge store puts on some pages: " - Microsoft Edge", without "Addons".
      'GET /edge-short/addons/detail/*': reply.html('<title>uBlock Origin - Microsoft Edge</title>'),
      'GET /edge-short-bare/addons/detail/*': reply.html('<title>Microsoft Edge</title>'),
    });
  });

  test('the minimal Chrome pages: a first <h1> is the name, with or without <head>, content type or canonical address', async () => {
    for (const chrome of ['chrome-min', 'chrome-bare', 'chrome-canonical']) {
      assert.deepEqual(await lookup(harness(fake, {}, chrome), UBLOCK_CHROME_ID), { name: 'uBlock Origin', url: `${fake.url}/${chrome}/detail/${UBLOCK_CHROME_ID}` }, chrome);
    }
  });

  test('the minimal Edge pages: the <title>, with the store suffix in any of its forms or without one', async () => {
    for (const edge of ['edge-min', 'edge-nosuffix', 'edge-bar', 'edge-short']) {
      assert.deepEqual(await lookup(harness(fake, {}, 'chrome', edge), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/${edge}/addons/detail/${UBLOCK_EDGE_ID}` }, edge);
    }
  });

  test('issue 32: the " - Microsoft Edge" suffix (without "Addons") is stripped too; "Microsoft Edge" alone is no name', async () => {
    assert.deepEqual(await lookup(harness(fake, {}, 'chrome', 'edge-short'), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge-short/addons/detail/${UBLOCK_EDGE_ID}` });
    assert.equal(await lookup(harness(fake, {}, 'chrome', 'edge-short-bare'), UNKNOWN_ID), null);
  });

  test('an empty Chrome page is "no name there": Edge Add-ons is asked, and neither listing it is null', async () => {
    assert.deepEqual(await lookup(harness(fake, {}, 'chrome-empty', 'edge-min'), UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edge-min/addons/detail/${UBLOCK_EDGE_ID}` });
    assert.equal(await lookup(harness(fake, {}, 'chrome-empty'), UNKNOWN_ID), null);
  });
});

describe('chrome_extension fake for whole-system tests', () => {
  test('both stores under one server: found on Chrome, on Edge, and nowhere', async () => {
    const fake = await startFakeHttp(fakeRoutes());
    closers.push(() => fake.close());
    const h = engineHarness(engine, { settings: { ...fakeSettings(fake.url), retries: 0 } });
    closers.push(() => h.close());
    assert.deepEqual(await lookup(h, TRANSLATE_CHROME_ID), { name: 'Google Translate', url: `${fake.url}/chromewebstore/detail/${TRANSLATE_CHROME_ID}` });
    assert.deepEqual(await lookup(h, UBLOCK_EDGE_ID), { name: 'uBlock Origin', url: `${fake.url}/edgeaddons/addons/detail/${UBLOCK_EDGE_ID}` });
    assert.equal(await lookup(h, UNKNOWN_ID), null);
  });
});

describe('chrome_extension through the runner', () => {
  let fake: FakeHttpServer;
  const runners = suiteRunners([engine, github], () => fakeSettings(fake.url));
  const runner = (settings: Record<string, unknown> = {}) => runners(settings, { provider_07: { ...intelSettings(fake.url).provider_07, retries: 0 } });

  before(async () => {
    fake = await startFakeHttp({ ...fakeRoutes(), ...intelRoutes(), 'GET /down/*': reply.status(502, { error: 'Bad Gateway' }) });
  });
  after(() => fake.close());

  test('extension ids pasted as text (a store link, a bare id): the result under `chrome_extension` when named', async () => {
    fake.reset();
    const observables = extractObservables(`Installed: hxxps://chromewebstore[.]google[.]com/detail/google-translate/${TRANSLATE_CHROME_ID} and ${UBLOCK_EDGE_ID}`);
    assert.deepEqual(observables.map((o) => `${o.type}:${o.value}`), [
      `URL:https://chromewebstore.google.com/detail/google-translate/${TRANSLATE_CHROME_ID}`,
      `CHROME_EXTENSION:${TRANSLATE_CHROME_ID}`,
      `CHROME_EXTENSION:${UBLOCK_EDGE_ID}`,
    ]);
    const results = await runner().analyze(observables, ['chrome_extension']);
    assert.deepEqual(results, [
      { observable: observables[0]!.value, type: 'URL', reversed_success: false, chrome_extension: null },
      {
        observable: TRANSLATE_CHROME_ID, type: 'CHROME_EXTENSION', reversed_success: false,
        chrome_extension: { name: 'Google Translate', url: `${fake.url}/chromewebstore/detail/${TRANSLATE_CHROME_ID}` },
      },
      {
        observable: UBLOCK_EDGE_ID, type: 'CHROME_EXTENSION', reversed_success: false,
        chrome_extension: { name: 'uBlock Origin', url: `${fake.url}/edgeaddons/addons/detail/${UBLOCK_EDGE_ID}` },
      },
    ]);
    // The URL observable asked nothing: the engine takes extension ids only.
    assert.deepEqual(fake.requests.map((r) => r.path).sort(), [
      `/chromewebstore/detail/${TRANSLATE_CHROME_ID}`,
      `/chromewebstore/detail/google-translate/${TRANSLATE_CHROME_ID}`,
      `/chromewebstore/detail/${UBLOCK_EDGE_ID}`,
      `/edgeaddons/addons/detail/${UBLOCK_EDGE_ID}`,
    ]);
  });

  test('unlike the reference, it runs only when named: another engine alone asks no store', async () => {
    fake.reset();
    const [result] = await runner().analyze([{ value: UBLOCK_CHROME_ID, type: 'CHROME_EXTENSION' }], ['github']);
    assert.ok(!('chrome_extension' in result!));
    assert.ok(!('extension' in result!));
    assert.ok(result!.github, 'github searched the id');
    assert.equal(fake.hits('GET /chromewebstore/').length + fake.hits('GET /edgeaddons/').length, 0);
  });

  test('both stores down: null plus an errors entry; the other engine is unaffected', async () => {
    const [result] = await runner({ base_url: `${fake.url}/down`, edge_base_url: `${fake.url}/down` })
      .analyze([{ value: UBLOCK_CHROME_ID, type: 'CHROME_EXTENSION' }], ['chrome_extension', 'github']);
    assert.equal(result!.chrome_extension, null);
    assert.deepEqual(result!.errors, { chrome_extension: 'Chrome Web Store: HTTP 502 Bad Gateway; Edge Add-ons: HTTP 502 Bad Gateway' });
    assert.ok(result!.github);
  });

  test('not found by either store: null, no error', async () => {
    const [result] = await runner().analyze([{ value: UNKNOWN_ID, type: 'CHROME_EXTENSION' }], ['chrome_extension']);
    assert.equal(result!.chrome_extension, null);
    assert.equal(result!.errors, undefined);
  });
});

describe('CHROME_EXTENSION in the other engines (engines.md 1.8, 9.5.1)', () => {
  test('exactly the reference\'s engines take it: github, google, ioc_one_html/pdf, opencti, hister, chrome_extension', async () => {
    const definitions = await loadEngineDefinitions();
    for (const variant of ['main', 'older'] as const) {
      const catalog = new Catalog(definitions, variant);
      const taking = definitions
        .map((d) => catalog.find(d.id))
        .filter((d): d is EngineDefinition => d !== undefined && d.types.includes('CHROME_EXTENSION'))
        .map((d) => d.service)
        .sort();
      assert.deepEqual(taking, ['chrome_extension', 'github', 'google', 'hister', 'ioc_one_html', 'ioc_one_pdf', 'opencti'], variant);
    }
  });

  test('each searches the id as it is', async () => {
    const KEY = 'TEST-KEY-0123456789';
    const fake = await startFakeHttp({ ...intelRoutes(), ...openCtiRoutes({ key: KEY }), ...googleRoutes() });
    closers.push(() => fake.close());
    const intel = intelSettings(fake.url);
    const r = runnerHarness([github, google, iocOneHtml, iocOnePdf, opencti], {
      settings: {
        provider_07: { ...intel.provider_07, retries: 0 },
        provider_09: { ...intel.provider_09, retries: 0 },
        provider_10: { ...intel.provider_10, retries: 0 },
        provider_16: { ...openCtiSettings(fake.url), api_key: KEY, retries: 0 },
        search_engine: { ...googleSettings(fake.url), api_key: KEY, retries: 0 },
      },
    });
    closers.push(() => r.close());
    const names = ['github', 'google', 'ioc_one_html', 'ioc_one_pdf', 'opencti'];
    const [result] = await r.analyze([{ value: UBLOCK_CHROME_ID, type: 'CHROME_EXTENSION' }], names);
    assert.equal(result!.errors, undefined, JSON.stringify(result!.errors));
    for (const name of names) assert.ok(result![name], `${name} answered`);
    assert.equal(fake.hits('GET /grep')[0]!.query.get('q'), UBLOCK_CHROME_ID);
    assert.equal(fake.hits('GET /google/')[0]!.query.get('q'), `"${UBLOCK_CHROME_ID}"`);
    assert.deepEqual(fake.hits('GET /iocone/').map((req) => req.query.get('search')), [UBLOCK_CHROME_ID, UBLOCK_CHROME_ID]);
    const search = fake.hits('POST /opencti/graphql').map((req) => (JSON.parse(req.body) as { variables: { search?: string } }).variables.search);
    assert.deepEqual(search, [UBLOCK_CHROME_ID]);
  });
});
