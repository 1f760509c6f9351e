/**
 * TLP and PAP in the pages (issue 34), in headless Chromium against `oas serve` (a subprocess) on
 * loopback, every engine at the loopback fakes: the form offers both markings, the server's
 * defaults chosen at first, and says which selected engines a marking keeps the observables from;
 * an analysis started at TLP:RED shows its TLP and PAP as labels in FIRST's colours (the level's
 * colour on black) on the results page, each withheld engine's cell says `withheld` and why (table
 * and cards; not styled as an error) while an engine allowed RED answers; the history shows the
 * labels; "Re-run with other engines" keeps the marking. Screenshots go to test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { openPage, SCREENSHOTS, servedInChromium, skipReason } from './helpers/browser.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser marking tests skipped: ${skip}\n`);

/** FIRST TLP 2.0's colours as the browser computes them, and black. */
const RGB = { RED: 'rgb(255, 43, 43)', AMBER: 'rgb(255, 192, 0)', GREEN: 'rgb(51, 255, 0)', CLEAR: 'rgb(255, 255, 255)', black: 'rgb(0, 0, 0)' };

describe('TLP and PAP in Chromium', { skip, timeout: 120_000 }, () => {
  // ipapi (provider_11) may receive TLP:RED here; reverse_dns and rdap_whois keep their default (AMBER).
  const suite = servedInChromium({ default_pap: 'green', engines: { provider_11: { max_tlp: 'RED' } } });
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  let analysisId = '';

  const open = () => openPage(suite.browser, { requests, consoleErrors });
  const label = (page: Page, scope: string, kind: 'tlp' | 'pap') => page.locator(`${scope} .marking[data-kind="${kind}"]`);
  async function colours(page: Page, selector: string): Promise<{ color: string; background: string }> {
    return page.locator(selector).evaluate((node) => {
      const style = node.ownerDocument.defaultView!.getComputedStyle(node);
      return { color: style.color, background: style.backgroundColor };
    });
  }

  test('the form: TLP and PAP choices at the server\'s defaults; at TLP:RED it names the engines kept out; the analysis starts marked', async () => {
    const { context, page } = await open();
    await page.goto(`${suite.server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    // Labelled choices, the levels as the standard writes them, the defaults chosen.
    for (const kind of ['tlp', 'pap']) {
      const labels = await page.locator(`#${kind}`).evaluate((select) => [...(select as unknown as { labels: Iterable<{ textContent: string | null }> }).labels].map((l) => l.textContent));
      assert.equal(labels.length, 1, `#${kind} has its label`);
      assert.match(labels[0]!, new RegExp(`^${kind.toUpperCase()} `));
    }
    assert.deepEqual(await page.locator('#tlp option').allInnerTexts(), ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED']);
    assert.deepEqual(await page.locator('#pap option').allInnerTexts(), ['PAP:CLEAR', 'PAP:GREEN', 'PAP:AMBER', 'PAP:RED']);
    assert.equal(await page.inputValue('#tlp'), 'AMBER', 'default_tlp');
    assert.equal(await page.inputValue('#pap'), 'GREEN', 'default_pap');
    assert.equal(await page.locator('#marking-note').innerText(), '', 'every default engine may be sent them at TLP:AMBER');

    await page.selectOption('#tlp', 'RED');
    const note = await page.locator('#marking-note').innerText();
    assert.match(note, /^Not sent at TLP:RED and PAP:GREEN: /);
    assert.match(note, /Reverse DNS \(max TLP:AMBER, PAP:GREEN\)/);
    assert.doesNotMatch(note, /ipapi/i, 'ipapi may receive RED here');

    await page.fill('#text', '8.8.8.8 and example.com');
    await page.screenshot({ path: join(SCREENSHOTS, 'marking-form.png'), fullPage: true });
    const [post] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/api/analyze'),
      page.click('#submit'),
    ]);
    const body = post.postDataJSON() as { tlp?: string; pap?: string };
    assert.deepEqual([body.tlp, body.pap], ['RED', 'GREEN']);
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    analysisId = page.url().split('/').pop()!;
    await context.close();
  });

  test('the results page: TLP:RED and PAP:GREEN in FIRST\'s colours on black; withheld cells say why, in the table and the cards', async () => {
    const { context, page } = await open();
    await page.goto(`${suite.server.url}/results/${analysisId}#table`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();

    const tlp = label(page, '#analysis-marking', 'tlp');
    const pap = label(page, '#analysis-marking', 'pap');
    assert.equal(await tlp.innerText(), 'TLP:RED');
    assert.equal(await pap.innerText(), 'PAP:GREEN');
    assert.deepEqual(await colours(page, '#analysis-marking .marking[data-kind="tlp"]'), { color: RGB.RED, background: RGB.black });
    assert.deepEqual(await colours(page, '#analysis-marking .marking[data-kind="pap"]'), { color: RGB.GREEN, background: RGB.black });

    // reverse_dns (a third party, max TLP:AMBER) was sent nothing: withheld, with the reason, not an error.
    const row = (observable: string) => page.locator(`tbody tr[data-observable="${observable}"]`);
    const withheld = row('8.8.8.8').locator('td[data-engine="reverse_dns"]');
    assert.match(await withheld.getAttribute('class') ?? '', /\bstatus-withheld\b/);
    assert.doesNotMatch(await withheld.getAttribute('class') ?? '', /status-error/);
    const text = await withheld.innerText();
    assert.match(text, /^withheld /i);
    assert.match(text, /not sent: TLP:RED allows only engines that keep data in-house \(.*engines\.reverse_dns\.max_tlp is AMBER\)/);
    const errorColour = await withheld.evaluate((cell) => {
      const probe = cell.ownerDocument.createElement('span');
      probe.className = 'status-error';
      cell.ownerDocument.body.appendChild(probe);
      const colour = cell.ownerDocument.defaultView!.getComputedStyle(probe).color;
      probe.remove();
      return colour;
    });
    assert.notEqual((await colours(page, 'tbody tr[data-observable="8.8.8.8"] td[data-engine="reverse_dns"]')).color, errorColour, 'not in the error colour');
    // ipapi may receive RED: it answered for the address; for the domain it was not sent its address.
    assert.match(await row('8.8.8.8').locator('td[data-engine="provider_11"]').getAttribute('class') ?? '', /\bstatus-ok\b/);
    assert.match(await row('example.com').locator('td[data-engine="provider_11"]').innerText(), /withheld[\s\S]*example\.com was not resolved: TLP:RED/i);
    assert.match(await row('example.com').locator('td[data-engine="rdap_whois"]').getAttribute('class') ?? '', /\bstatus-withheld\b/);
    await page.screenshot({ path: join(SCREENSHOTS, 'marking-results-table.png'), fullPage: true });

    await page.click('button[data-view="cards"]');
    const section = page.locator('article[data-observable="8.8.8.8"] section[data-engine="reverse_dns"]');
    assert.match(await section.getAttribute('class') ?? '', /\bstatus-withheld\b/);
    assert.equal((await section.locator('.badge').innerText()).toLowerCase(), 'withheld');
    assert.match(await section.locator('.withheld-text').innerText(), /^not sent: TLP:RED allows only engines that keep data in-house/);
    assert.equal(await section.locator('.error-text').count(), 0);
    await page.screenshot({ path: join(SCREENSHOTS, 'marking-results-cards.png'), fullPage: true });

    // A re-run keeps the marking.
    const rerun = await page.getAttribute('#rerun', 'href');
    assert.match(rerun ?? '', /[#&]tlp=RED(&|$)/);
    await page.goto(`${suite.server.url}${rerun}`);
    await page.locator('#engine-reverse_dns').waitFor();
    assert.deepEqual([await page.inputValue('#tlp'), await page.inputValue('#pap')], ['RED', 'GREEN']);
    await context.close();
  });

  test('the history: each analysis with its TLP and PAP labels', async () => {
    // One more analysis, unmarked: the server's defaults.
    const res = await fetch(`${suite.server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'example.org', engines: ['reverse_dns'] }) });
    assert.equal(res.status, 200);
    const plain = ((await res.json()) as { analysis_id: string }).analysis_id;

    const { context, page } = await open();
    await page.goto(`${suite.server.url}/history`);
    await page.locator(`#history-list tr[data-id="${plain}"]`).waitFor();
    const cell = (id: string) => `#history-list tr[data-id="${id}"] td.history-marking`;
    assert.equal(await label(page, cell(analysisId), 'tlp').innerText(), 'TLP:RED');
    assert.equal(await label(page, cell(analysisId), 'pap').innerText(), 'PAP:GREEN');
    assert.equal(await label(page, cell(plain), 'tlp').innerText(), 'TLP:AMBER');
    assert.deepEqual(await colours(page, `${cell(plain)} .marking[data-kind="tlp"]`), { color: RGB.AMBER, background: RGB.black });
    assert.deepEqual(await colours(page, `${cell(analysisId)} .marking[data-kind="tlp"]`), { color: RGB.RED, background: RGB.black });
    assert.equal(await page.locator('.history-table thead th').nth(1).innerText(), 'Marking');
    await page.screenshot({ path: join(SCREENSHOTS, 'marking-history.png'), fullPage: true });
    await context.close();
    assert.deepEqual(consoleErrors, [], 'no console error (CSP included)');
  });
});
