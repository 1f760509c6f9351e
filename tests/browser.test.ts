/**
 * The front end in a real browser: headless Chromium against `oas serve` (a subprocess) on
 * loopback, every engine pointed at the loopback fakes. One upstream answer is held back so the
 * results page is seen mid-analysis; ipapi flags 8.8.8.8 as a Tor exit, so it is suspicious. Screenshots of every page in both themes go to
 * test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { intelRoutes } from './fakes/intel.js';
import type { FakeHandler } from './fakes/http.js';
import { launchChromium, openPage, SCREENSHOTS, servedInChromium, skipReason } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser tests skipped: ${skip}\n`);

const XSS_URL = 'https://shop.example.com/search?q=<script>window.pwned=1</script>';
/**
 * The README's screenshots: written to docs/screenshots/ when OAS_README_SCREENSHOTS=1 (so a plain
 * `npm test` never rewrites tracked files), else next to the others.
 */
const README_SHOTS = process.env.OAS_README_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url)) : join(SCREENSHOTS, 'readme');
/** The README's analysis: a little of everything, one verified phish (PhishTank) and one Tor exit (ipapi). */
const README_TEXT = 'Alert 4711: beacon from 8.8.8.8 to example.com, then hxxps://www[.]example[.]com/login?session=9f2c; sample 44d88612fea8a8f36de82e1278abb02f mailed by billing[@]example[.]com';
const README_ENGINES = ['reverse_dns', 'provider_11', 'provider_17', 'bad_asn', 'rdap_whois'];
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
    // PhishTank knows one URL as a verified phish (the README's analysis).
    upstreams.intel.route('POST /phishtank', (req) => {
      const url = Buffer.from(new URLSearchParams(req.body).get('url') ?? '', 'base64').toString('utf8');
      const known = url.includes('/login');
      return { json: { meta: { status: 'success' }, results: known
        ? { url, in_database: true, phish_id: 8841207, phish_detail_page: 'https://phishtank.org/phish_detail.php?phish_id=8841207', verified: true, verified_at: '2026-10-01T09:12:00+00:00', valid: true }
        : { url, in_database: false } } };
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

  const open = (options: { dark?: boolean; phone?: boolean } = {}) => openPage(browser, { requests, consoleErrors }, { ...options, origin: server.url });

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
    // The reason names the engine as its column does (the API's reason keeps the key).
    const reason = row(page, '8.8.8.8').locator('td.verdict-cell .reasons li').first();
    assert.match(await reason.innerText(), /^IPapi: .*Tor/);
    assert.match(await reason.getAttribute('data-reason') ?? '', /^provider_11: .*Tor/);
    assert.equal(await page.locator('thead th:has(button[data-column="provider_11"])').innerText(), 'IPapi');
    const keys = await page.locator('.reasons li').evaluateAll((items) => items.map((li) => li.textContent ?? '').filter((t) => /^(provider_\d+|reverse_dns|rdap_whois|public_dns):/.test(t)));
    assert.deepEqual(keys, [], 'no reason drawn names an engine by its key');
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
    assert.match(await card.locator('.card-head .reasons').innerText(), /^IPapi: .*Tor/);
    assert.match(await card.locator('.engine-section[data-engine="provider_11"] h3').innerText(), /^IPapi\b/, 'the card section has the same name');
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

  test('contrast: every badge class of the stylesheet, in every place it is drawn, at least 4.5:1 in both themes', async () => {
    for (const dark of [false, true]) {
      const { context, page } = await open({ dark });
      await page.goto(`${server.url}/results/${analysisId}`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      // The classes come from the served stylesheet itself, so a new badge is checked too.
      const found = await page.evaluate<{ classes: string[]; results: { sample: string; fg: string; bg: string; ratio: number }[] }>(BADGE_CONTRASTS);
      for (const expected of ['badge-ok', 'badge-error', 'badge-empty', 'badge-pending', 'badge-not_applicable', 'verdict-malicious', 'verdict-suspicious', 'verdict-clean', 'verdict-unknown']) {
        assert.ok(found.classes.includes(expected), `${expected} among ${found.classes.join(' ')}`);
      }
      assert.ok(found.results.length >= found.classes.length * 4);
      const failing = found.results.filter((r) => r.ratio < 4.5).map((r) => `${r.sample}: ${r.fg} on ${r.bg} = ${r.ratio.toFixed(2)}`);
      assert.deepEqual(failing, [], dark ? 'dark theme' : 'light theme');
      await context.close();
    }
  });

  test('contrast and overflow: every text on every page, both themes, at 1280 and 390 px', async () => {
    for (const dark of [false, true]) {
      for (const phone of [false, true]) {
        const { context, page } = await open({ dark, phone });
        const where = `${dark ? 'dark' : 'light'} ${phone ? '390' : '1280'} px`;
        const pages: [string, string][] = [
          ['/', '#engine-reverse_dns'],
          [`/results/${analysisId}#table`, '#analysis-status[data-complete="true"]'],
          [`/results/${analysisId}#cards`, '#analysis-status[data-complete="true"]'],
          [`/results/${analysisId}#json`, '#analysis-status[data-complete="true"]'],
          ['/history', '#history-list tbody tr'],
          ['/allowlist', '#allowlist-list > *'],
        ];
        for (const [path, ready] of pages) {
          await page.goto(`${server.url}${path}`);
          await page.locator(ready).first().waitFor();
          const width = await page.evaluate<{ scroll: number; inner: number }>('({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth })');
          assert.ok(width.scroll <= width.inner, `${path} at ${where}: ${width.scroll} px wide in a ${width.inner} px window`);
          const failing = await page.evaluate<string[]>(TEXT_CONTRAST_FAILURES);
          assert.deepEqual(failing, [], `${path} at ${where}`);
        }
        await context.close();
      }
    }
  });

  test('risk at a glance: an engine summary that flags the observable is highlighted, with its level spelled', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}#table`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const flagged = row(page, '8.8.8.8').locator('td[data-engine="provider_11"]');
    assert.match(await flagged.getAttribute('class') ?? '', /\brisk-suspicious\b/);
    assert.match(await flagged.locator('.verdict-small').innerText(), /suspicious/i, 'the level is a word, not only a colour');
    // The same engine on an address it does not flag, and an engine that never judges: no highlight.
    assert.doesNotMatch(await row(page, XSS_URL).locator('td[data-engine="provider_11"]').getAttribute('class') ?? '', /risk/);
    assert.doesNotMatch(await row(page, '8.8.8.8').locator('td[data-engine="reverse_dns"]').getAttribute('class') ?? '', /risk/);
    assert.equal(await page.locator('td.risk').count(), 1);
    const colours = await flagged.evaluate((cell) => {
      const style = cell.ownerDocument.defaultView!.getComputedStyle;
      return [style(cell).backgroundColor, style(cell.parentElement!.querySelector('td[data-engine="reverse_dns"]')!).backgroundColor];
    });
    assert.notEqual(colours[0], colours[1], 'the flagged cell stands out');

    await page.click('button[data-view="cards"]');
    const section = page.locator('article.card[data-observable="8.8.8.8"] .engine-section[data-engine="provider_11"]');
    assert.match(await section.getAttribute('class') ?? '', /\brisk-suspicious\b/);
    assert.match(await section.locator('h3 .verdict').innerText(), /suspicious/i);
    assert.match(await section.locator('.evidence-reason').innerText(), /^Suspicious: .*Tor/i);
    assert.equal(await page.locator('article.card[data-observable="8.8.8.8"] .engine-section[data-engine="reverse_dns"].risk').count(), 0);
    await context.close();
  });

  test('filters by observable type and by verdict, alone and together, in the table and the cards', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}#table`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const shown = () => page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-observable')));
    const options = await page.locator('#type-filter option').evaluateAll((o) => o.map((x) => [x.getAttribute('value'), x.textContent]));
    assert.deepEqual(options, [['', 'All types (3)'], ['IPv4', 'IPv4 (2)'], ['URL', 'URL (1)']]);
    await page.selectOption('#type-filter', 'URL');
    assert.deepEqual(await shown(), [XSS_URL]);
    assert.equal(await page.innerText('#shown-count'), '1 of 3 observables shown');
    await page.selectOption('#type-filter', 'IPv4');
    assert.deepEqual(await shown(), ['8.8.8.8', '1.1.1.1']);
    await page.selectOption('#verdict-filter', 'unknown');
    assert.deepEqual(await shown(), ['1.1.1.1'], 'both filters apply');
    await page.click('button[data-view="cards"]');
    assert.deepEqual(await page.locator('article.card').evaluateAll((c) => c.map((x) => x.getAttribute('data-observable'))), ['1.1.1.1']);
    await page.selectOption('#verdict-filter', '');
    await page.selectOption('#type-filter', '');
    assert.equal(await page.locator('article.card').count(), 3);
    await context.close();
  });

  test('phone width: the cards are the default view, wider screens get the table; a chosen view wins', async () => {
    for (const phone of [true, false]) {
      const { context, page } = await open({ phone });
      await page.goto(`${server.url}/results/${analysisId}`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      const expected = phone ? 'cards' : 'table';
      assert.equal(await page.getAttribute(`button[data-view="${expected}"]`, 'aria-pressed'), 'true', `${expected} by default`);
      assert.equal(await page.locator(phone ? 'article.card' : 'table.results-table').first().isVisible(), true);
      await page.goto(`${server.url}/results/${analysisId}#table`);
      await page.locator('table.results-table').waitFor();
      assert.equal(await page.getAttribute('button[data-view="table"]', 'aria-pressed'), 'true');
      await context.close();
    }
  });

  /** The analyze form at 1280 px, or 390 px for a phone, its engines drawn; console errors kept in `logged`. */
  async function openAnalyzeForm(phone: boolean) {
    const logged: string[] = [];
    const { context, page } = await openPage(browser, { requests, consoleErrors: logged }, { phone, origin: server.url });
    await page.goto(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    return { context, page, logged, where: phone ? '390 px' : '1280 px' };
  }

  test('form errors: next to Analyze in the sticky bar, announced, in view, the focus on what needs fixing (1280 and 390 px)', async () => {
    for (const phone of [false, true]) {
      // The server's 400 is logged by Chromium as a failed load: expected here, nothing else is.
      const { context, page, where, logged } = await openAnalyzeForm(phone);

      await page.click('#submit');
      await expectFormProblem(page, /^Paste at least one observable/, '#text', `nothing pasted at ${where}`);
      assert.equal(await page.getAttribute('#text', 'aria-invalid'), 'true');

      // Text without any observable: the server refuses it, the page says so where Analyze is.
      await page.fill('#text', 'Hello team, nothing to look at in this message.');
      await page.click('#submit');
      await expectFormProblem(page, /^No observable found in the text/, '#text', `no observable at ${where}`);
      await page.screenshot({ path: join(SCREENSHOTS, `index-no-observable-${phone ? 'phone' : 'desktop'}-light.png`), fullPage: false });

      await page.fill('#text', '8.8.8.8');
      assert.equal(await page.getAttribute('#text', 'aria-invalid'), null, 'typing clears the mark');
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.click('#submit');
      await expectFormProblem(page, /^Select at least one engine/, 'input[name="engines"]', `no engine at ${where}`);
      assert.equal(await page.evaluate<string>('document.activeElement.closest(".engine-group")?.getAttribute("aria-label") ?? ""'), 'Ready to use', 'the first engine that can be chosen');
      assert.deepEqual(logged.filter((m) => !/status of 400/.test(m)), []);
      await context.close();
    }
  });

  test('nothing crosses its box at 1280 and 390 px: the form (with an error), history, results table and cards', async () => {
    for (const phone of [false, true]) {
      const { context, page, where, logged } = await openAnalyzeForm(phone);
      assert.deepEqual(await page.evaluate<string[]>(OVERFLOWS(['#analyze-form'])), [], `form at ${where}`);
      await page.fill('#text', 'no observable in here');
      await page.click('#submit');
      await page.locator('#form-error:not([hidden])').waitFor();
      assert.deepEqual(await page.evaluate<string[]>(OVERFLOWS(['#analyze-form'])), [], `form with its error at ${where}`);
      await page.goto(`${server.url}/history`);
      await page.locator('#history-list tbody tr').first().waitFor();
      assert.deepEqual(await page.evaluate<string[]>(OVERFLOWS(['main > .panel'])), [], `history at ${where}`);
      for (const view of ['table', 'cards']) {
        await page.goto(`${server.url}/results/${analysisId}#${view}`);
        await page.locator('#analysis-status[data-complete="true"]').waitFor();
        await page.locator(view === 'table' ? 'table.results-table' : 'article.card').first().waitFor();
        assert.deepEqual(await page.evaluate<string[]>(OVERFLOWS(['.results-head', '.toolbar', '#view'])), [], `${view} at ${where}`);
        if (phone) {
          // Open (the view changes in place: the menu may be open from the view before).
          if (await page.getAttribute('#more-toggle', 'aria-expanded') !== 'true') await page.click('#more-toggle');
          await page.locator('#more-controls #export-csv').waitFor();
          assert.deepEqual(await page.evaluate<string[]>(OVERFLOWS(['.toolbar'])), [], `${view} at ${where}, its menu open`);
        }
      }
      assert.deepEqual(logged.filter((m) => !/status of 400/.test(m)), []);
      await context.close();
    }
  });

  test('phone, 390 × 844: the first result card starts in the first screen; the secondary controls fold into one menu', async () => {
    const { context, page } = await open({ phone: true });
    await page.goto(`${server.url}/results/${analysisId}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const top = await page.locator('article.card').first().evaluate((card) => card.getBoundingClientRect().top);
    assert.ok(top < 844 * 0.6, `the first card starts at ${top} px`);
    for (const id of ['type-filter', 'verdict-filter', 'new-analysis', 'rerun', 'export-csv']) assert.equal(await page.locator(`#${id}`).isVisible(), false, `${id} folded`);
    assert.equal(await page.getAttribute('#more-toggle', 'aria-expanded'), 'false');
    await page.click('#more-toggle');
    assert.equal(await page.getAttribute('#more-toggle', 'aria-expanded'), 'true');
    for (const id of ['type-filter', 'verdict-filter', 'new-analysis', 'rerun', 'copy-observables', 'export-csv']) assert.equal(await page.locator(`#${id}`).isVisible(), true, `${id} in the menu`);
    await page.selectOption('#verdict-filter', 'suspicious');
    assert.deepEqual(await page.locator('article.card').evaluateAll((c) => c.map((x) => x.getAttribute('data-observable'))), ['8.8.8.8']);
    await page.screenshot({ path: join(SCREENSHOTS, 'results-phone-menu-light.png'), fullPage: false });
    await page.click('#more-toggle');
    assert.equal(await page.locator('#verdict-filter').isVisible(), false);
    // Wider screens: every control in view, no menu button.
    const desktop = await open();
    await desktop.page.goto(`${server.url}/results/${analysisId}`);
    await desktop.page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.equal(await desktop.page.locator('#more-toggle').isVisible(), false);
    for (const id of ['type-filter', 'verdict-filter', 'new-analysis', 'export-csv']) assert.equal(await desktop.page.locator(`#${id}`).isVisible(), true, `${id} at 1280 px`);
    await desktop.context.close();
    await context.close();
  });

  test('phone width: the Analyze button stays in reach while the engine list scrolls', async () => {
    const { context, page } = await open({ phone: true });
    await page.goto(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    const before = await page.evaluate<{ height: number; inner: number }>('({ height: document.scrollingElement.scrollHeight, inner: window.innerHeight })');
    assert.ok(before.height > before.inner * 2, 'the form is longer than the screen');
    for (const fraction of [0, 0.3, 0.6]) {
      await page.evaluate(`window.scrollTo(0, ${Math.round(before.height * fraction)})`);
      const seen = await page.evaluate<{ top: number; bottom: number; inner: number; hit: boolean }>(`(() => {
        const r = document.getElementById('submit').getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return { top: r.top, bottom: r.bottom, inner: window.innerHeight, hit: hit === document.getElementById('submit') };
      })()`);
      assert.ok(seen.top >= 0 && seen.bottom <= seen.inner, `scrolled to ${fraction}: Analyze at ${seen.top}-${seen.bottom} of ${seen.inner}`);
      assert.ok(seen.hit, `scrolled to ${fraction}: Analyze is not covered`);
    }
    await page.fill('#text', '8.8.8.8');
    await page.click('#submit');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await context.close();
  });

  test('phone width: history entries never break an IP or a hash in the middle', async () => {
    const hash = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
    const started = await (await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `${hash} 2001:db8:85a3::8a2e:370:7334 203.0.113.254 very-long-subdomain-name.of-a-rather-long-domain.example.com`, engines: ['reverse_dns'] }) })).json() as { analysis_id: string };
    const { context, page } = await open({ phone: true });
    await page.goto(`${server.url}/history`);
    const entry = page.locator(`#history-list tr[data-id="${started.analysis_id}"]`);
    await entry.waitFor();
    const lines = await entry.locator('.obs').evaluateAll((codes) => codes.map((c) => [c.textContent, c.getClientRects().length, c.ownerDocument.defaultView!.getComputedStyle(c).whiteSpace]));
    assert.equal(lines.length, 4);
    for (const [text, boxes, whiteSpace] of lines) {
      assert.equal(boxes, 1, `${text} on one line`);
      assert.equal(whiteSpace, 'nowrap', `${text}`);
    }
    assert.equal(await entry.locator('.obs').first().getAttribute('title'), `SHA256: ${hash}`, 'the whole value in its title');
    assert.ok(await page.evaluate<boolean>('document.scrollingElement.scrollWidth <= window.innerWidth'));
    await context.close();
  });

  test('after reading: new analysis, copy the observables (as written and defanged), re-run with other engines prefilled', async () => {
    const started = await (await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.com 8.8.8.8 user@example.com', engines: ['public_dns', 'ipapi'] }) })).json() as { analysis_id: string };
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${started.analysis_id}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.equal(await page.getAttribute('#new-analysis', 'href'), '/');

    await page.click('#copy-observables');
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), 'example.com\n8.8.8.8\nuser@example.com');
    await page.click('#copy-defanged');
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), 'example[.]com\n8[.]8[.]8[.]8\nuser[@]example[.]com');
    await page.selectOption('#type-filter', 'IPv4');
    await page.click('#copy-observables');
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), '8.8.8.8', 'the observables shown');
    await page.selectOption('#type-filter', '');

    await page.click('#rerun');
    await page.waitForURL(`${server.url}/#*`);
    await page.locator('#engine-reverse_dns').waitFor();
    assert.equal(await page.inputValue('#text'), 'example.com\n8.8.8.8\nuser@example.com');
    const checked = await page.locator('input[name="engines"]:checked').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('value')).sort());
    assert.deepEqual(checked, ['provider_11', 'public_dns'], 'the analysis\'s engines (the alias ipapi is provider_11), not the defaults');
    assert.match(await page.innerText('#prefill-note'), /previous analysis/);
    await page.check('#engine-rdap_whois');
    await page.click('#submit');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const results = await (await fetch(`${server.url}/api/results/${page.url().split('/').pop()}`)).json() as Record<string, unknown>[];
    assert.deepEqual(results.map((r) => r['observable']), ['example.com', '8.8.8.8', 'user@example.com']);
    assert.deepEqual(Object.keys(results[0]!).filter((k) => ['provider_11', 'public_dns', 'rdap_whois', 'reverse_dns'].includes(k)).sort(), ['provider_11', 'public_dns', 'rdap_whois']);

    await page.click('#new-analysis');
    await page.waitForURL(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    assert.equal(await page.inputValue('#text'), '');
    assert.equal(await page.isChecked('#engine-reverse_dns'), true, 'the defaults again');
    assert.equal(await page.locator('#prefill-note').count(), 0);
    await context.close();
  });

  test('the picker marks and preselects only the defaults of the catalog the server runs', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    // rdap is the older catalog's default, offered here as an extra: neither tagged default nor checked.
    assert.equal(await page.locator('[data-engine="rdap"] .tag-default').count(), 0);
    assert.equal(await page.isChecked('#engine-rdap'), false);
    const tagged = await page.locator('.engine:has(.tag-default) input').evaluateAll((b) => b.map((x) => x.getAttribute('value')).sort());
    const checked = await page.locator('input[name="engines"]:checked').evaluateAll((b) => b.map((x) => x.getAttribute('value')).sort());
    assert.deepEqual(checked, tagged);
    assert.deepEqual(checked, ['provider_11', 'rdap_whois', 'reverse_dns']);
    await page.click('button[data-tag="default"]');
    const visible = await page.locator('.engine:visible').evaluateAll((e) => e.map((x) => x.getAttribute('data-engine')).sort());
    assert.deepEqual(visible, ['provider_11', 'rdap_whois', 'reverse_dns']);
    await context.close();
  });

  test('README screenshots of a real analysis: table (light and dark), cards, phone', async () => {
    mkdirSync(README_SHOTS, { recursive: true });
    const started = await (await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: README_TEXT, engines: README_ENGINES }) })).json() as { analysis_id: string };
    const link = `${server.url}/results/${started.analysis_id}`;
    const shots: { name: string; dark?: boolean; phone?: boolean; view: string }[] = [
      { name: 'results-table-light.png', view: 'table' },
      { name: 'results-table-dark.png', dark: true, view: 'table' },
      { name: 'results-cards-light.png', view: 'cards' },
      { name: 'results-phone-light.png', phone: true, view: '' },
      { name: 'results-phone-cards-dark.png', phone: true, dark: true, view: '' },
    ];
    for (const shot of shots) {
      const { context, page } = await open(shot);
      await page.goto(shot.view ? `${link}#${shot.view}` : link);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      if (shot.view === 'table') {
        assert.equal(await row(page, 'https://www.example.com/login?session=9f2c').locator('td.verdict-cell .verdict').getAttribute('data-verdict'), 'malicious');
        assert.equal(await page.locator('td.risk').count(), 2, 'the phish and the Tor exit');
      }
      if (shot.phone) assert.equal(await page.locator('article.card').count(), 5, 'the cards by default');
      if (shot.phone && shot.dark) await page.locator('article.card').first().evaluate((card) => card.scrollIntoView());
      await page.screenshot({ path: join(README_SHOTS, shot.name), fullPage: false });
      await context.close();
    }
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    await page.fill('#text', README_TEXT);
    await page.screenshot({ path: join(README_SHOTS, 'analyze-light.png'), fullPage: false });
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

describe('the form refused for its size, in Chromium', { skip }, () => {
  const suite = servedInChromium({ max_body_bytes: 2048, rate_limit_per_minute: 0 });

  test('413: the message next to Analyze, the focus on the text (1280 and 390 px)', async () => {
    for (const phone of [false, true]) {
      const { context, page } = await openPage(suite.browser, { requests: [], consoleErrors: [] }, { phone });
      await page.goto(`${suite.server.url}/`);
      await page.locator('#engine-reverse_dns').waitFor();
      await page.fill('#text', Array.from({ length: 200 }, (_, i) => `host-${i}.example.com`).join('\n'));
      await page.click('#submit');
      await expectFormProblem(page, /^Too much for one analysis \(request body larger than 2048 bytes\): split the text/, '#text', `413 at ${phone ? 390 : 1280} px`);
      await context.close();
    }
  });
});

describe('the form refused for too many analyses, in Chromium', { skip }, () => {
  const suite = servedInChromium({ rate_limit_per_minute: 1 });

  test('429: the message next to Analyze, the focus on Analyze (1280 and 390 px)', async () => {
    // The one analysis of this minute.
    const first = await fetch(`${suite.server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) });
    assert.equal(first.status, 200);
    for (const phone of [false, true]) {
      const { context, page } = await openPage(suite.browser, { requests: [], consoleErrors: [] }, { phone });
      await page.goto(`${suite.server.url}/`);
      await page.locator('#engine-reverse_dns').waitFor();
      await page.fill('#text', 'example.org');
      await page.click('#submit');
      await expectFormProblem(page, /^Too many analyses: at most 1 per minute .*retry in \d+ s\. Then press Analyze again\.$/, '#submit', `429 at ${phone ? 390 : 1280} px`);
      assert.equal(await page.isEnabled('#submit'), true, 'Analyze can be pressed again');
      await context.close();
    }
  });
});

describe('signing in to a server with api_token, in Chromium', { skip }, () => {
  const TOKEN = 'browser-token-Lp4Kj8Hg2Fd6';
  const suite = servedInChromium({ api_token: TOKEN });
  const consoleErrors: string[] = [];

  test('a page sends the browser to the sign-in form, which comes back; the session cookie works until sign-out', async () => {
    const { server, browser } = suite;
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

  test('401 from the form: the message and a sign-in link next to Analyze, the focus on the link; the text survives signing in (1280 and 390 px)', async () => {
    const { server, browser } = suite;
    for (const phone of [false, true]) {
      const { context, page } = await openPage(browser, { requests: [], consoleErrors: [] }, { phone });
      await page.goto(`${server.url}/`);
      await page.waitForURL(/\/signin/);
      await page.fill('#token', TOKEN);
      await page.click('button[type="submit"]');
      await page.waitForURL(`${server.url}/`);
      await page.locator('#engine-reverse_dns').waitFor();
      await page.fill('#text', 'example.com');
      await context.clearCookies(); // the session ends while the form is open
      await page.click('#submit');
      await expectFormProblem(page, /^Sign in to analyze/, '#form-signin', `401 at ${phone ? 390 : 1280} px`);
      assert.equal(page.url(), `${server.url}/`, 'the page stays, with what was typed');
      await page.click('#form-signin');
      await page.waitForURL(`${server.url}/signin?next=%2F`);
      await page.fill('#token', TOKEN);
      await page.click('button[type="submit"]');
      await page.waitForURL(`${server.url}/`);
      await page.locator('#engine-reverse_dns').waitFor();
      assert.equal(await page.inputValue('#text'), 'example.com', 'the text is back');
      assert.match(await page.innerText('#prefill-note'), /before signing in/);
      await page.click('#submit');
      await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
      await context.close();
    }
  });
});

describe('the engine picker of a server running the older catalog, in Chromium', { skip }, () => {
  const suite = servedInChromium({ catalog: 'older' });

  test('the older catalog\'s defaults (rdap among them) are tagged default and preselected, and nothing else is', async () => {
    const { server, browser } = suite;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.locator('#engine-rdap').waitFor();
    const expected = ((await (await fetch(`${server.url}/ui/engines`)).json()) as { engines: { id: string; default: boolean }[] }).engines.filter((e) => e.default).map((e) => e.id).sort();
    assert.deepEqual(expected, ['provider_13', 'rdap', 'reverse_dns']);
    const checked = await page.locator('input[name="engines"]:checked').evaluateAll((b) => b.map((x) => x.getAttribute('value')).sort());
    assert.deepEqual(checked, expected);
    const tagged = await page.locator('.engine:has(.tag-default)').evaluateAll((e) => e.map((x) => x.getAttribute('data-engine')).sort());
    assert.deepEqual(tagged, expected);
    assert.equal(await page.isChecked('#engine-rdap'), true);
    assert.equal(await page.locator('#engine-rdap_whois').count(), 0, 'the main catalog\'s rdap_whois is not offered');
    await page.fill('#text', 'example.com');
    await page.click('#submit');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.match(await page.locator('tbody tr[data-observable="example.com"] td[data-engine="rdap"]').getAttribute('class') ?? '', /status-ok/);
    await context.close();
  });
});

/**
 * The form's error after a submit: in the sticky bar with Analyze, announced (role="alert"), drawn
 * inside the window and not covered, and the focus on `focused` (a selector of what needs fixing).
 */
async function expectFormProblem(page: Page, message: RegExp, focused: string, where: string): Promise<void> {
  await page.locator('#form-error:not([hidden])').waitFor();
  assert.match(await page.innerText('#form-error'), message, where);
  const seen = await page.evaluate<{ role: string | null; inBar: boolean; rect: { top: number; bottom: number; left: number; right: number }; submit: { top: number; bottom: number }; inner: { w: number; h: number }; hit: boolean; sticky: string }>(`(() => {
    const error = document.getElementById('form-error');
    const bar = error.closest('.form-footer');
    const r = error.getBoundingClientRect();
    const s = document.getElementById('submit').getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {
      role: error.getAttribute('role'),
      inBar: !!bar && bar.contains(document.getElementById('submit')),
      rect: { top: r.top, bottom: r.bottom, left: r.left, right: r.right },
      submit: { top: s.top, bottom: s.bottom },
      inner: { w: window.innerWidth, h: window.innerHeight },
      hit: !!hit && error.contains(hit),
      sticky: bar ? getComputedStyle(bar).position : '',
    };
  })()`);
  assert.equal(seen.role, 'alert', where);
  assert.ok(seen.inBar, `${where}: the error is in the bar that holds Analyze`);
  assert.equal(seen.sticky, 'sticky', where);
  assert.ok(seen.rect.top >= 0 && seen.rect.bottom <= seen.inner.h && seen.rect.left >= 0 && seen.rect.right <= seen.inner.w, `${where}: error drawn at ${JSON.stringify(seen.rect)} in a ${seen.inner.w} × ${seen.inner.h} window`);
  assert.ok(seen.hit, `${where}: the error is not covered`);
  // Next to Analyze: on the same line, or right above it.
  assert.ok(seen.rect.bottom >= seen.submit.top - 40 && seen.rect.top <= seen.submit.bottom, `${where}: error ${JSON.stringify(seen.rect)}, Analyze ${JSON.stringify(seen.submit)}`);
  assert.equal(await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(focused)}) ?? false`), true, `${where}: the focus is on ${focused}, not ${await page.evaluate<string>('document.activeElement?.outerHTML.slice(0, 80)')}`);
}

/**
 * What crosses its box under the elements of `selectors` (each included): an element whose content
 * is wider than it (scrollWidth > clientWidth, for one that does not scroll by design), or whose
 * right edge is past its container's. Scroll regions (overflow auto or scroll, like the results
 * table's) hold wider content on purpose; out-of-flow elements (the history's visually hidden
 * header) are skipped; a `display: contents` wrapper is seen through.
 */
function OVERFLOWS(selectors: string[]): string {
  return String.raw`((selectors) => {
    const found = [];
    const label = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '');
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const drawn = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility === 'visible'; };
    for (const selector of selectors) {
      const roots = [...document.querySelectorAll(selector)];
      if (roots.length === 0) found.push(selector + ': nothing matches');
      for (const root of roots) {
        for (const el of [root, ...root.querySelectorAll('*')]) {
          if (!drawn(el)) continue;
          let outOfFlow = false;
          for (let n = el; n && n !== root.parentElement; n = n.parentElement) if (['absolute', 'fixed'].includes(getComputedStyle(n).position)) outOfFlow = true;
          if (outOfFlow) continue;
          if (el.clientWidth > 0 && getComputedStyle(el).overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1) found.push(selector + ' ' + label(el) + ': scrollWidth ' + el.scrollWidth + ' > clientWidth ' + el.clientWidth);
          let parent = el.parentElement;
          while (parent && getComputedStyle(parent).display === 'contents') parent = parent.parentElement;
          if (!parent || scrolls(parent)) continue;
          const inner = parent.getBoundingClientRect().right - parseFloat(getComputedStyle(parent).borderRightWidth);
          const right = el.getBoundingClientRect().right;
          if (right > inner + 1) found.push(selector + ' ' + label(el) + ': right edge ' + right.toFixed(1) + ' past ' + label(parent) + ' ' + inner.toFixed(1));
        }
      }
    }
    return found;
  })(${JSON.stringify(selectors)})`;
}

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

/**
 * Colour arithmetic run in the page: computed colours (rgb, rgba, color(srgb)), the background an
 * element is drawn on (every ancestor's background composited, root first), WCAG 2 contrast.
 */
const COLOUR_TOOLS = String.raw`
  const parse = (c) => {
    const rgb = c.match(/rgba?\(([^)]+)\)/);
    if (rgb) { const p = rgb[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p[3] ?? 1]; }
    const srgb = c.match(/color\(srgb ([^)]+)\)/);
    if (srgb) { const p = srgb[1].split(/[\s\/]+/).filter(Boolean).map(Number); return [p[0] * 255, p[1] * 255, p[2] * 255, p[3] ?? 1]; }
    throw new Error('unreadable colour ' + c);
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const backgroundOf = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) layers.push(parse(getComputedStyle(n).backgroundColor));
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255, 1]);
  };
  const opacityOf = (el) => { let o = 1; for (let n = el; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity); return o; };
  const luminance = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratioOf = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const show = (c) => 'rgb(' + c.slice(0, 3).map((v) => Math.round(v)).join(', ') + ')';
  const contrast = (el, colour) => {
    const bg = backgroundOf(el);
    const raw = parse(colour ?? getComputedStyle(el).color);
    const fg = over([raw[0], raw[1], raw[2], raw[3] * opacityOf(el)], bg);
    return { ratio: ratioOf(fg, bg), fg: show(fg), bg: show(bg) };
  };
`;

/**
 * Every badge class the served stylesheet defines (`.badge-*`, `.verdict-*`), drawn in each place
 * badges appear (panel, card section, risk-highlighted section and cell, history row): contrasts.
 */
const BADGE_CONTRASTS = String.raw`(() => {
  ${COLOUR_TOOLS}
  const classes = new Set();
  const visit = (rules) => { for (const rule of rules) {
    if (rule.selectorText) for (const m of rule.selectorText.matchAll(/\.((?:badge|verdict)-[A-Za-z0-9_]+)/g)) classes.add(m[1]);
    if (rule.cssRules) visit(rule.cssRules);
  } };
  for (const sheet of document.styleSheets) visit(sheet.cssRules);
  const make = (tag, cls, parent) => { const n = document.createElement(tag); if (cls) n.className = cls; parent.appendChild(n); return n; };
  const fixture = make('div', 'fixture', document.getElementById('main'));
  const contexts = {
    panel: () => make('section', 'panel', fixture),
    'card section': () => make('section', 'engine-section', make('article', 'card', make('div', 'cards', fixture))),
    'suspicious card section': () => make('section', 'engine-section risk risk-suspicious', make('article', 'card', make('div', 'cards', fixture))),
    'malicious card section': () => make('section', 'engine-section risk risk-malicious', make('article', 'card', make('div', 'cards', fixture))),
    'suspicious table cell': () => make('td', 'cell risk risk-suspicious', make('tr', '', make('tbody', '', make('table', 'results-table', fixture)))),
    'malicious table cell': () => make('td', 'cell risk risk-malicious', make('tr', '', make('tbody', '', make('table', 'results-table', fixture)))),
    'history row': () => make('td', 'history-verdict', make('tr', '', make('tbody', '', make('table', 'history-table', fixture)))),
  };
  const results = [];
  for (const cls of classes) {
    for (const [where, context] of Object.entries(contexts)) {
      const badge = make('span', (cls.startsWith('badge-') ? 'badge ' : 'verdict ') + cls, context());
      badge.textContent = 'sample';
      results.push({ sample: cls + ' in ' + where, ...contrast(badge) });
    }
  }
  fixture.remove();
  return { classes: [...classes], results };
})()`;

/**
 * Every text the page draws (each element with text of its own, form controls and placeholders):
 * the ones under 4.5:1. Disabled controls are exempt (WCAG 1.4.3), as are texts that are not drawn
 * (hidden, clipped for screen readers only, the skip link off screen until focused).
 */
const TEXT_CONTRAST_FAILURES = String.raw`(() => {
  ${COLOUR_TOOLS}
  const failures = [];
  const drawn = (el) => {
    if (el.closest('script, style, noscript, option, :disabled, [aria-disabled="true"]')) return false;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1 || rect.right <= 0 || rect.bottom <= 0) return false;
    return getComputedStyle(el).visibility === 'visible';
  };
  const check = (el, what, colour) => {
    const c = contrast(el, colour);
    if (c.ratio < 4.5) failures.push(what + ': ' + c.fg + ' on ' + c.bg + ' = ' + c.ratio.toFixed(2));
  };
  const label = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '') + (el.id ? '#' + el.id : '');
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    const el = text.parentElement;
    if (!el || seen.has(el) || text.textContent.trim() === '') continue;
    seen.add(el);
    if (drawn(el)) check(el, label(el) + ' "' + text.textContent.trim().slice(0, 40) + '"');
  }
  for (const control of document.querySelectorAll('input:not([type="checkbox"]):not([type="radio"]), textarea, select')) {
    if (!drawn(control)) continue;
    check(control, label(control));
    if (control.getAttribute('placeholder')) check(control, label(control) + ' placeholder', getComputedStyle(control, '::placeholder').color);
  }
  return failures;
})()`;
