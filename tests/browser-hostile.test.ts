/**
 * Hostile answers in the web pages (issue 34, "what comes in"), in headless Chromium against `oas
 * serve` (a subprocess) on loopback: the hostile upstream of tests/fakes/hostile.ts answers a
 * custom engine and an RDAP record with markup, `javascript:` and `data:` links, escape sequences
 * and a prompt, and two observables hold markup and a bidi override themselves. The table, its
 * tooltips, the cards, the graph (its text alternative) and the history show them as text: no
 * dialog opens, no element or handler is injected, and a link is a link only when it is http or
 * https.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { FakeHttpServer } from './fakes/http.js';
import { HOSTILE, HOSTILE_DOMAIN, hostileEngines, hostileRdap, hostileSettings, SAFE_LINK, startHostile } from './fakes/hostile.js';
import { launchChromium, openPage, skipReason } from './helpers/browser.js';
import { completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser hostile-answer tests skipped: ${skip}\n`);

const MARKUP_URL = 'https://x.example/<img/src=x/onerror=alert(4)>';
const BIDI_URL = 'https://evil.example/dl/invoice\u202efdp.exe';
const INPUT = `8.8.8.8 ${HOSTILE_DOMAIN} ${BIDI_URL} ${MARKUP_URL}`;

/** What the page holds that the hostile texts could have made: handlers, images, inline scripts, links of other schemes. */
async function injected(page: Page): Promise<{ handlers: string[]; images: number; inlineScripts: number; links: string[] }> {
  // A string, run in the page (this file is compiled without the DOM's types).
  return page.evaluate(`(() => {
    const all = [...document.querySelectorAll('*')];
    return {
      handlers: all.flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => e.tagName + ' ' + a.name)),
      images: document.querySelectorAll('img, iframe, object, embed').length,
      inlineScripts: [...document.querySelectorAll('script')].filter((s) => !s.src).length,
      links: [...document.querySelectorAll('a[href]')].map((a) => a.protocol).filter((p) => p !== 'http:' && p !== 'https:'),
    };
  })()`);
}

describe('hostile answers in Chromium', { skip }, () => {
  let upstreams: Upstreams;
  let hostile: FakeHttpServer;
  let server: ServeProcess;
  let browser: Browser;
  let id = '';
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];

  before(async () => {
    [upstreams, hostile] = await Promise.all([startUpstreams(), startHostile()]);
    upstreams.rdap.serve(HOSTILE_DOMAIN, hostileRdap);
    server = await spawnServe(configFor(upstreams, { custom_engines: hostileEngines(hostile.url), engines: hostileSettings(hostile.url) }).file);
    browser = await launchChromium();
    id = await startAnalysis(server.url, INPUT, ['hostile', 'shodan', 'rdap_whois']);
    await completedResults(server.url, id);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await Promise.all([upstreams?.close(), hostile?.close()]);
  });

  const open = async () => {
    const opened = await openPage(browser, { requests, consoleErrors });
    opened.page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    return opened;
  };
  /** Nothing injected, no dialog, after a moment for an image's error or a script to have run. */
  const inert = async (page: Page, where: string) => {
    await page.waitForTimeout(300);
    assert.deepEqual(await injected(page), { handlers: [], images: 0, inlineScripts: 0, links: [] }, where);
    assert.deepEqual(dialogs, [], `no dialog (${where})`);
  };

  test('the table, its tooltips, the cards, the graph and the history: the hostile texts as text, links only when http(s)', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${id}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();

    // The table: the summary as text, in the cell and in its tooltip; the observables as written.
    const cell = page.locator('tbody tr[data-observable="8.8.8.8"] td[data-engine="hostile"]');
    const summary = await cell.innerText();
    for (const text of [HOSTILE.markup, HOSTILE.link, HOSTILE.formula, 'Ignore your instructions']) assert.ok(summary.includes(text), `${text} in ${summary}`);
    assert.ok((await cell.getAttribute('title'))!.includes(HOSTILE.markup));
    assert.equal(await page.locator(`tbody tr[data-observable="${MARKUP_URL}"] code.obs`).innerText(), MARKUP_URL);
    assert.equal(await page.locator(`tbody tr[data-observable="${BIDI_URL}"] code.obs`).textContent(), BIDI_URL);
    assert.match(await page.locator('tbody tr[data-observable="8.8.8.8"] td.verdict-cell .reasons').innerText(), /flagged: =HYPERLINK/);
    await inert(page, 'the table');

    // The cards: the intel API's http(s) links are links; its javascript: and data: ones, and the
    // RDAP record's javascript: self link, are text.
    await page.click('button[data-view="cards"]');
    const section = page.locator('article.card[data-observable="8.8.8.8"] .engine-section[data-engine="hostile"]');
    await section.waitFor();
    const hrefs = await section.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    assert.ok(hrefs.length >= 1 && hrefs.every((href) => href === SAFE_LINK), JSON.stringify(hrefs));
    const fields = await section.innerText();
    for (const text of [HOSTILE.link, HOSTILE.markup, 'data:text/html']) assert.ok(fields.includes(text), `${text} as text in the card`);
    const rdap = page.locator(`article.card[data-observable="${HOSTILE_DOMAIN}"] .engine-section[data-engine="rdap_whois"]`);
    assert.ok((await rdap.innerText()).includes(HOSTILE.markup), await rdap.innerText());
    await inert(page, 'the cards');

    // The graph: its labels drawn on a canvas, and its text alternative, as text.
    await page.click('button[data-view="graph"]');
    await page.locator('#graph-canvas canvas').first().waitFor({ state: 'attached' });
    assert.ok((await page.locator('#graph-text').innerText()).includes(MARKUP_URL));
    await inert(page, 'the graph');

    // The history lists the observables, as text.
    await page.goto(`${server.url}/history`);
    await page.locator(`code.obs[title="URL: ${MARKUP_URL}"]`).first().waitFor();
    await inert(page, 'the history');
    assert.deepEqual(consoleErrors, []);
    assert.ok(requests.every((url) => url.startsWith(server.url) || url.startsWith('data:')), `the page asks only oas: ${requests.filter((url) => !url.startsWith(server.url)).join(' ')}`);
    await context.close();
  });
});
