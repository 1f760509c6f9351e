/**
 * The front end in a real browser: headless Chromium against `oas serve` (a subprocess) on
 * loopback, every engine pointed at the loopback fakes. One upstream answer is held back so the
 * results page is seen mid-analysis; ipapi flags 8.8.8.8 as a Tor exit, so it is suspicious. Screenshots of every page in both themes go to
 * test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { intelRoutes } from './fakes/intel.js';
import type { FakeHandler } from './fakes/http.js';
import { launchChromium, SCREENSHOTS, skipReason } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser tests skipped: ${skip}\n`);

const XSS_URL = 'https://shop.example.com/search?q=<script>window.pwned=1</script>';
const TEXT = `Alert 4711: beacon from 8.8.8.8 and 1.1.1.1\nclicked hxxps://shop[.]example[.]com/search?q=<script>window.pwned=1</script>`;

describe('the front end in Chromium', { skip }, () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  let analysisId = '';
  /** Lets the held-back ipapi answer for 1.1.1.1 go (as a 500). */
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  /** Every request any page made, and every console error (CSP violations included). */
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    const ipapi = intelRoutes()['POST /ipapi'] as FakeHandler;
    upstreams.intel.route('POST /ipapi', async (req) => {
      const q = (JSON.parse(req.body) as { q: string }).q;
      if (q === '8.8.8.8') {
        const answer = (await ipapi(req)) as { json: Record<string, unknown> };
        return { ...answer, json: { ...answer.json, is_tor: true } };
      }
      if (q !== '1.1.1.1') return ipapi(req);
      await held;
      return { status: 500, json: { error: 'internal error' } };
    });
    const config = configFor(upstreams, { engines: { provider_11: { timeout_ms: 120_000, retries: 0 } } });
    server = await spawnServe(config.file);
    browser = await launchChromium();
  });
  after(async () => {
    release();
    await browser?.close();
    await server?.stop();
    await upstreams?.close();
  });

  async function open(options: { dark?: boolean; phone?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      colorScheme: options.dark ? 'dark' : 'light',
      viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
      deviceScaleFactor: 1,
      acceptDownloads: true,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    return { context, page };
  }

  const row = (page: Page, observable: string) => page.locator(`tbody tr[data-observable="${observable.replace(/"/g, '\\"')}"]`);

  test('submit from the form with Ctrl+Enter; rows appear before the analysis completes', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    for (const id of ['reverse_dns', 'rdap_whois', 'provider_11']) assert.equal(await page.isChecked(`#engine-${id}`), true, `${id} preselected`);
    assert.equal(await page.isChecked('#engine-public_dns'), false);
    assert.equal(await page.isDisabled('#engine-provider_24'), true, 'VirusTotal without a key is not selectable');
    assert.match(await page.locator('[data-engine="provider_24"] .needs-key').innerText(), /OAS_VIRUSTOTAL_API_KEY/);

    await page.click('button[data-tag="ports"]');
    assert.equal(await page.locator('[data-engine="provider_20"]').isVisible(), true);
    assert.equal(await page.locator('[data-engine="reverse_dns"]').isVisible(), false);
    await page.click('button[data-tag="all"]');
    await page.fill('#engine-search', 'dns');
    assert.equal(await page.locator('[data-engine="public_dns"]').isVisible(), true);
    assert.equal(await page.locator('[data-engine="provider_11"]').isVisible(), false);
    await page.fill('#engine-search', '');

    await page.fill('#text', TEXT);
    await page.focus('#text');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    analysisId = page.url().split('/').pop()!;

    await row(page, '8.8.8.8').and(page.locator('[data-state="done"]')).waitFor();
    assert.equal(await page.getAttribute('#analysis-status', 'data-complete'), 'false');
    assert.equal(await row(page, '1.1.1.1').getAttribute('data-state'), 'pending');
    assert.match(await page.innerText('#progress-text'), /^Running: \d+ of \d+ lookups done/);
    await page.screenshot({ path: join(SCREENSHOTS, 'results-running-light.png'), fullPage: true });

    release();
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.match(await page.innerText('#progress-text'), /^Complete: 3 observables/);
    await context.close();
  });

  test('table: errors shown, observables with <script> shown as text, sorting, filtering, copy', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();

    const error = row(page, '1.1.1.1').locator('td[data-engine="provider_11"]');
    assert.match(await error.getAttribute('class') ?? '', /status-error/);
    assert.match(await error.innerText(), /ERROR[\s\S]*500/i);

    assert.equal(await row(page, XSS_URL).locator('code.obs').innerText(), XSS_URL);
    assert.equal(await page.evaluate('window.pwned'), undefined);
    assert.equal(await page.locator('main script').count(), 0);

    await page.click('button[data-column="observable"]');
    assert.equal(await page.getAttribute('th:has(button[data-column="observable"])', 'aria-sort'), 'ascending');
    assert.equal(await page.locator('tbody tr').first().getAttribute('data-observable'), '1.1.1.1');
    await page.click('button[data-column="observable"]');
    assert.equal(await page.locator('tbody tr').first().getAttribute('data-observable'), XSS_URL);

    await page.fill('#results-filter', 'dns.google');
    assert.deepEqual(await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-observable'))), ['8.8.8.8']);
    assert.equal(await page.innerText('#shown-count'), '1 of 3 observables shown');
    await page.fill('#results-filter', '');
    assert.equal(await page.locator('tbody tr').count(), 3);

    await row(page, '8.8.8.8').locator('button[data-copy="Defanged"]').click();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), '8[.]8[.]8[.]8');
    await row(page, XSS_URL).locator('button[data-copy="Defanged"]').click();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), 'hxxps://shop[.]example[.]com/search?q=<script>window[.]pwned=1</script>');
    await row(page, '8.8.8.8').locator('button[data-copy="JSON"]').click();
    const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()')) as { observable: string; reverse_dns: unknown };
    assert.equal(copied.observable, '8.8.8.8');
    assert.deepEqual(copied.reverse_dns, { reverse_dns: ['dns.google'] });
    await context.close();
  });

  test('cards and raw JSON views; the JSON is the API result', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await page.click('button[data-view="cards"]');
    assert.equal(await page.locator('article.card').count(), 3);
    assert.equal(await page.getAttribute('button[data-view="cards"]', 'aria-pressed'), 'true');
    const ipCard = page.locator('article.card[data-observable="1.1.1.1"]');
    assert.match(await ipCard.locator('.engine-section.status-error').innerText(), /IPapi[\s\S]*500/);
    const urlCard = page.locator(`article.card[data-observable="${XSS_URL}"]`);
    assert.equal(await urlCard.locator('h2 code').innerText(), XSS_URL);
    const rdap = urlCard.locator('.engine-section[data-engine="rdap_whois"]');
    assert.match(await rdap.innerText(), /registrar/i);
    const link = rdap.locator('dd a').first();
    assert.match(await link.getAttribute('href') ?? '', /^https?:\/\//);
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await page.evaluate('window.pwned'), undefined);

    await page.click('button[data-view="json"]');
    const shown = JSON.parse(await page.innerText('#raw-json')) as unknown;
    const api = (await (await fetch(`${server.url}/api/results/${analysisId}`)).json()) as unknown;
    assert.deepEqual(shown, api);
    assert.match(page.url(), /#json$/);
    await page.reload();
    assert.equal(await page.getAttribute('button[data-view="json"]', 'aria-pressed'), 'true', 'the view survives a reload');
    await context.close();
  });

  test('verdicts: a badge with its word in the table and the cards, reasons, a filter and a sort by verdict', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const badge = (observable: string) => row(page, observable).locator('td.verdict-cell .verdict');
    assert.equal(await page.locator('thead th').nth(1).innerText(), 'Verdict', 'the column after the observable');
    assert.equal(await badge('8.8.8.8').getAttribute('data-verdict'), 'suspicious');
    assert.match(await badge('8.8.8.8').innerText(), /suspicious/i, 'the word shows, not only a colour');
    assert.match(await row(page, '8.8.8.8').locator('td.verdict-cell .reasons li').first().innerText(), /^provider_11: .*Tor/);
    // ipapi failed for 1.1.1.1: an error is never "clean".
    assert.equal(await badge('1.1.1.1').getAttribute('data-verdict'), 'unknown');
    assert.match(await badge('1.1.1.1').innerText(), /unknown/i);

    await page.selectOption('#verdict-filter', 'suspicious');
    assert.deepEqual(await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-observable'))), ['8.8.8.8']);
    assert.equal(await page.innerText('#shown-count'), '1 of 3 observables shown');
    await page.selectOption('#verdict-filter', 'unknown');
    assert.deepEqual((await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-observable')))).sort(), ['1.1.1.1', XSS_URL].sort());
    await page.selectOption('#verdict-filter', 'malicious');
    assert.equal(await page.locator('tbody tr').count(), 0);
    assert.match(await page.locator('#verdict-filter option[value="flagged"]').innerText(), /\(1\)$/, 'each option says how many it shows');
    await page.selectOption('#verdict-filter', 'flagged');
    await page.click('button[data-view="cards"]');
    assert.equal(await page.locator('article.card').count(), 1);
    const card = page.locator('article.card[data-observable="8.8.8.8"]');
    assert.equal(await card.locator('.card-head .verdict').getAttribute('data-verdict'), 'suspicious');
    assert.match(await card.locator('.card-head .reasons').innerText(), /provider_11: /);
    await page.selectOption('#verdict-filter', '');
    assert.equal(await page.locator('article.card').count(), 3);

    await page.click('button[data-view="table"]');
    await page.click('button[data-column="verdict"]');
    assert.equal(await page.locator('tbody tr').first().getAttribute('data-observable'), '8.8.8.8', 'most severe first');

    // The other downloads point at the export route with their format.
    for (const format of ['xlsx', 'stix', 'misp']) {
      assert.equal(await page.getAttribute(`#export-${format}`, 'href'), `/export/${analysisId}?format=${format}`);
      assert.equal(await page.getAttribute(`#export-${format}`, 'aria-disabled'), null);
    }
    await context.close();
  });

  test('CSV export downloads the analysis', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    assert.equal(download.suggestedFilename(), `oas-${analysisId}.csv`);
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    assert.match(lines[0]!, /^observable,type,reversed_ip,engine,status,summary,result(,|$)/);
    assert.ok(lines.some((l) => l.startsWith('8.8.8.8,IPv4,,reverse_dns,ok,dns.google,')), csv);
    assert.ok(lines.some((l) => l.startsWith('1.1.1.1,IPv4,,provider_11,error,')), csv);
    assert.ok(lines.some((l) => l.startsWith(`${XSS_URL},URL,`)), csv);
    await context.close();
  });

  test('history: newest first, searchable, links to the results', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/history`);
    const first = page.locator('#history-list tbody tr').first();
    assert.equal(await first.getAttribute('data-id'), analysisId);
    assert.match(await first.innerText(), /8\.8\.8\.8[\s\S]*1\.1\.1\.1/);
    // The worst verdict and the count of flagged observables, from the analysis's header.
    assert.equal(await first.locator('.history-verdict .verdict').getAttribute('data-verdict'), 'suspicious');
    assert.equal(await first.locator('.history-verdict .verdict-counts').innerText(), '1 suspicious');
    await page.fill('#history-search', 'no-such-observable.example');
    await page.locator('#history-list .empty').waitFor();
    await page.fill('#history-search', '1.1.1.1');
    await page.locator(`#history-list tr[data-id="${analysisId}"]`).waitFor();
    assert.match(page.url(), /\?q=1\.1\.1\.1$/);
    await page.click(`#history-list tr[data-id="${analysisId}"] a`);
    await page.waitForURL(`${server.url}/results/${analysisId}`);
    await context.close();
  });

  test('keyboard: the form is reachable and usable without a mouse', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    await page.locator('#text').waitFor();
    const reached = new Set<string>();
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate<string>("document.activeElement?.id || document.activeElement?.dataset?.tag || document.activeElement?.tagName || ''"));
    }
    for (const id of ['engine-search', 'engine-reverse_dns', 'ignore-cache', 'submit', 'ports']) assert.ok(reached.has(id), `${id} reachable: ${[...reached].join(' ')}`);
    await context.close();
  });

  test('screenshots of every page, light and dark, desktop and phone', async () => {
    for (const dark of [false, true]) {
      const theme = dark ? 'dark' : 'light';
      for (const phone of [false, true]) {
        const { context, page } = await open({ dark, phone });
        const size = phone ? 'phone' : 'desktop';
        await page.goto(`${server.url}/`);
        await page.locator('#engine-reverse_dns').waitFor();
        await page.fill('#text', TEXT);
        await page.screenshot({ path: join(SCREENSHOTS, `index-${size}-${theme}.png`), fullPage: !phone });
        for (const view of ['table', 'cards', 'json']) {
          await page.goto(`${server.url}/results/${analysisId}#${view}`);
          await page.locator('#analysis-status[data-complete="true"]').waitFor();
          if (view === 'table') {
            // As drawn: every verdict badge's text on its background at least 4.5:1 (WCAG AA).
            const colours = await page.locator('.verdict').evaluateAll((badges) => badges.map((b) => { const style = b.ownerDocument.defaultView!.getComputedStyle(b); return [style.color, style.backgroundColor]; }));
            assert.ok(colours.length >= 3);
            for (const [fg, bg] of colours) assert.ok(contrastOf(fg!, bg!) >= 4.5, `${theme}: ${fg} on ${bg}`);
          }
          await page.screenshot({ path: join(SCREENSHOTS, `results-${view}-${size}-${theme}.png`), fullPage: false });
        }
        await page.goto(`${server.url}/history`);
        await page.locator('#history-list tbody tr').first().waitFor();
        await page.screenshot({ path: join(SCREENSHOTS, `history-${size}-${theme}.png`), fullPage: false });
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
        assert.equal(background, dark ? 'rgb(13, 17, 23)' : 'rgb(245, 246, 248)', `${theme} theme follows the system`);
        await context.close();
      }
    }
  });

  test('no request ever left oas, and no page logged an error', () => {
    assert.ok(requests.length > 0);
    const foreign = requests.filter((url) => !url.startsWith(`${server.url}/`) && !url.startsWith('data:'));
    assert.deepEqual(foreign, []);
    assert.deepEqual(consoleErrors, []);
  });
});

describe('signing in to a server with api_token, in Chromium', { skip }, () => {
  const TOKEN = 'browser-token-Lp4Kj8Hg2Fd6';
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  const consoleErrors: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    server = await spawnServe(configFor(upstreams, { api_token: TOKEN }).file);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await upstreams?.close();
  });

  test('a page sends the browser to the sign-in form, which comes back; the session cookie works until sign-out', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    // 401s are expected here (the page finds out it must sign in); anything else is an error.
    page.on('console', (message) => message.type() === 'error' && !/401/.test(message.text()) && consoleErrors.push(message.text()));
    page.on('pageerror', (error) => consoleErrors.push(error.message));

    await page.goto(`${server.url}/history`);
    await page.waitForURL(`${server.url}/signin?next=%2Fhistory`);
    await page.screenshot({ path: join(SCREENSHOTS, 'signin-desktop-light.png'), fullPage: false });
    await page.fill('#token', 'not-the-token');
    await page.click('button[type="submit"]');
    assert.match(await page.innerText('.form-error'), /not the API token/);
    await page.fill('#token', TOKEN);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${server.url}/history`);

    await page.goto(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    await page.fill('#text', 'example.com');
    await page.focus('#text');
    await page.keyboard.press('Control+Enter');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'results-signed-in-desktop-light.png'), fullPage: false });

    assert.equal(await page.evaluate('document.cookie'), '', 'the session cookie is HttpOnly');
    const [cookie] = await context.cookies();
    assert.equal(cookie!.name, 'oas_session');
    assert.equal(cookie!.sameSite, 'Strict');
    assert.ok(!cookie!.value.includes(TOKEN));
    assert.ok(!page.url().includes(TOKEN));

    await page.click('#signout');
    await page.waitForURL(`${server.url}/signin`);
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/signin?next=%2F`);
    assert.deepEqual(consoleErrors, []);
    await context.close();
  });
});

/** WCAG 2 contrast of two computed colours (`rgb(r, g, b)`). */
function contrastOf(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, bl] = (colour.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((c) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    assert.ok(r !== undefined && g !== undefined && bl !== undefined, colour);
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
  return (x + 0.05) / (y + 0.05);
}
