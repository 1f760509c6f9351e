/**
 * Seen before (issue 38) in headless Chromium, against `oas serve` and an engine of the test on a
 * loopback fake (a score: malicious from 80): after two analyses of the same domain, the results
 * page's table and cards say under it "Seen once, on <day>, malicious", linked to
 * /observables/<value>, which lists both analyses newest first with their verdicts and links; an
 * observable no earlier analysis held says nothing; a hostile value in the page's address stays
 * text. Loopback only; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { launchChromium, openPage, SCREENSHOTS, skipReason, type PageWatch } from './helpers/browser.js';
import { completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const skip = skipReason();
const SEEN = 'seen-web.com';
const NEW = 'first-time-web.com';

describe('seen before in the browser', { skip }, () => {
  let upstreams: Upstreams;
  let intel: FakeHttpServer;
  let server: ServeProcess;
  let browser: Browser;
  const ids: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    intel = await startFakeHttp({ 'GET /intel/*': () => ({ json: { score: 95 } }) });
    const { dir, file } = configFor(upstreams, {
      custom_engines: {
        intel: {
          types: ['FQDN'],
          request: { url: `${intel.url}/intel/{value}` },
          fields: { score: '/score' },
          summary: 'score {score}',
          evidence: [{ field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' }],
        },
      },
    });
    server = await spawnServe(file, { cwd: dir });
    browser = await launchChromium();
    ids.push(await startAnalysis(server.url, SEEN, ['intel']));
    await completedResults(server.url, ids[0]!);
    ids.push(await startAnalysis(server.url, `${SEEN} ${NEW}`, ['intel']));
    await completedResults(server.url, ids[1]!);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await Promise.all([upstreams?.close(), intel?.close()]);
  });

  test('the table and the cards say it under the observable, linked to the list of those analyses', async () => {
    const watch: PageWatch = { requests: [], consoleErrors: [] };
    const { context, page } = await openPage(browser, watch);
    try {
      await page.goto(`${server.url}/results/${ids[1]}`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      const day = new Date().toISOString().slice(0, 10);
      const line = page.locator(`tr[data-observable="${SEEN}"] .seen`);
      assert.equal(await line.textContent(), `Seen once, on ${day}, malicious`);
      assert.equal(await line.getAttribute('data-seen-count'), '1');
      assert.equal(await line.locator('a').getAttribute('href'), `/observables/${SEEN}`);
      assert.equal(await page.locator(`tr[data-observable="${NEW}"] .seen`).count(), 0, 'never seen: nothing said');
      await page.screenshot({ path: join(SCREENSHOTS, 'results-seen.png'), fullPage: true });

      await page.click('button.tab[data-view="cards"]');
      assert.equal(await page.locator(`article.card[data-observable="${SEEN}"] .seen`).textContent(), `Seen once, on ${day}, malicious`);
      assert.equal(await page.locator(`article.card[data-observable="${NEW}"] .seen`).count(), 0);

      // The link: the analyses that held it, newest first, each with its verdict and its results.
      await page.locator(`article.card[data-observable="${SEEN}"] .seen a`).click();
      await page.waitForURL(`${server.url}/observables/${SEEN}`);
      await page.locator('#observable-list tbody tr').first().waitFor();
      assert.equal(await page.locator('#observable-value').textContent(), SEEN);
      assert.equal(await page.locator('#observable-summary').textContent(), '2 analyses held it.');
      const rows = page.locator('#observable-list tbody tr');
      assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id'))), [ids[1], ids[0]]);
      assert.deepEqual(await page.locator('#observable-list td[data-verdict]').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-verdict'))), ['malicious', 'malicious']);
      await rows.nth(1).locator('a').first().click();
      await page.waitForURL(`${server.url}/results/${ids[0]}`);
      assert.deepEqual(watch.consoleErrors, []);
    } finally {
      await context.close();
    }
  });

  test('a value the store never held, hostile or not, is said so, as text', async () => {
    const watch: PageWatch = { requests: [], consoleErrors: [] };
    const { context, page } = await openPage(browser, watch);
    const hostile = '<img src=x onerror="document.title=\'owned\'">';
    try {
      await page.goto(`${server.url}/observables/${encodeURIComponent(hostile)}`);
      await page.locator('#observable-summary', { hasText: 'No analysis of this server held it.' }).waitFor();
      assert.equal(await page.locator('#observable-value').textContent(), hostile);
      assert.equal(await page.locator('main img').count(), 0);
      assert.notEqual(await page.title(), 'owned');
      assert.deepEqual(watch.consoleErrors, []);
    } finally {
      await context.close();
    }
  });
});
