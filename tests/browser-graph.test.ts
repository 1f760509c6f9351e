/**
 * The results page's graph view in headless Chromium against `oas serve` (a subprocess) on
 * loopback, with the engines pointed at the loopback fakes: a domain resolving to an IP, two IPs
 * in two ASNs, ipapi flagging 8.8.8.8 as a Tor exit. The graph library is served by oas itself
 * and loaded only when the view opens; the canvas has a size, the text alternative lists the same
 * nodes and links, the keyboard reaches both, and nothing breaks the CSP. Screenshots in both
 * themes go to test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { intelRoutes } from './fakes/intel.js';
import type { FakeHandler } from './fakes/http.js';
import { launchChromium, openPage, SCREENSHOTS, skipReason } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser graph tests skipped: ${skip}\n`);

describe('the graph view in Chromium', { skip }, () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  let analysisId = '';
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  /** Lets the held-back ipapi answer for 9.9.9.9 go. */
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    upstreams = await startUpstreams();
    const ipapi = intelRoutes()['POST /ipapi'] as FakeHandler;
    upstreams.intel.route('POST /ipapi', async (req) => {
      const q = (JSON.parse(req.body) as { q: string }).q;
      const answer = (await ipapi(req)) as { json: Record<string, unknown> };
      if (q === '8.8.8.8') return { ...answer, json: { ...answer.json, is_tor: true } };
      if (q === '1.1.1.1') return { ...answer, json: { ...answer.json, asn: { asn: 13335, org: 'Cloudflare, Inc.' } } };
      if (q === '9.9.9.9') {
        await held;
        return { ...answer, json: { ...answer.json, asn: { asn: 19281, org: 'Quad9' } } };
      }
      return answer;
    });
    server = await spawnServe(configFor(upstreams).file);
    browser = await launchChromium();

    const response = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: '8.8.8.8 1.1.1.1 example.com', engines: ['ipapi', 'provider_13'] }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    analysisId = ((await response.json()) as { analysis_id: string }).analysis_id;
    for (let i = 0; i < 200; i++) {
      const status = (await (await fetch(`${server.url}/api/is_analysis_complete/${analysisId}`)).json()) as { complete: boolean };
      if (status.complete) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  after(async () => {
    release();
    await browser?.close();
    await server?.stop();
    await upstreams?.close();
  });

  const open = (options: { dark?: boolean; phone?: boolean } = {}) => openPage(browser, { requests, consoleErrors }, options);

  /**
   * Every label cytoscape draws, with its size on screen at the current zoom: its style's font
   * size × the zoom (the instance is the one cytoscape registers on its container).
   */
  function labelSizes(page: Page): Promise<{ id: string; px: number }[]> {
    return page.evaluate(`(() => {
      const cy = document.getElementById('graph-canvas')._cyreg.cy;
      return cy.elements().filter((e) => String(e.style('label') || '') !== '')
        .map((e) => ({ id: e.id(), px: parseFloat(e.style('font-size')) * cy.zoom() }));
    })()`);
  }

  /** Waits until cytoscape has drawn: its canvases are in the graph's element. */
  async function graphDrawn(page: Page): Promise<void> {
    await page.locator('#graph-canvas canvas').first().waitFor({ state: 'attached' });
  }

  test('the library loads only when the graph view opens, from oas itself', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}#table`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await page.locator('tbody tr').first().waitFor();
    assert.equal(requests.some((url) => url.endsWith('/assets/cytoscape.js')), false, 'not loaded by the table view');

    await page.click('button[data-view="graph"]');
    assert.equal(await page.getAttribute('button[data-view="graph"]', 'aria-pressed'), 'true');
    await graphDrawn(page);
    assert.ok(requests.includes(`${server.url}/assets/cytoscape.js`));
    assert.ok(requests.every((url) => url.startsWith(server.url) || url.startsWith('data:')), 'nothing from another origin');
    const library = await fetch(`${server.url}/assets/cytoscape.js`);
    assert.equal(library.status, 200);
    assert.match(library.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.ok(library.headers.get('etag'));
    assert.equal((await fetch(`${server.url}/assets/cytoscape.js`, { headers: { 'if-none-match': library.headers.get('etag')! } })).status, 304);
    assert.match(new URL(page.url()).hash, /^#graph$/);
    await context.close();
  });

  for (const dark of [false, true]) {
    test(`the graph renders on a canvas with a size and the text lists its nodes and links (${dark ? 'dark' : 'light'})`, async () => {
      const { context, page } = await open({ dark });
      await page.goto(`${server.url}/results/${analysisId}#graph`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      await graphDrawn(page);

      const box = await page.locator('#graph-canvas').boundingBox();
      assert.ok(box && box.width > 300 && box.height > 200, `graph area ${JSON.stringify(box)}`);
      const canvases = await page.evaluate<{ w: number; h: number }[]>(`[...document.querySelectorAll('#graph-canvas canvas')].map((c) => ({ w: c.width, h: c.height }))`);
      assert.ok(canvases.length > 0 && canvases.every((c) => c.w > 0 && c.h > 0), JSON.stringify(canvases));
      // Something is drawn: the canvases hold more than a few colours.
      const colours = await page.evaluate<number>(`(() => {
        const seen = new Set();
        for (const c of document.querySelectorAll('#graph-canvas canvas')) {
          const data = c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data;
          if (!data) continue;
          for (let i = 0; i < data.length; i += 4 * 7) seen.add([data[i], data[i + 1], data[i + 2], data[i + 3]].join());
        }
        return seen.size;
      })()`);
      assert.ok(colours > 3, `only ${colours} colours drawn`);

      const nodes = await page.locator('#graph-nodes li').evaluateAll((items) => items.map((li) => li.getAttribute('data-node')));
      for (const id of ['ip:8.8.8.8', 'ip:1.1.1.1', 'obs:example.com', 'ip:93.184.215.14', 'asn:15169', 'asn:13335', 'engine:ipapi']) {
        assert.ok(nodes.includes(id), `${id} in ${JSON.stringify(nodes)}`);
      }
      const observables = await page.locator('#graph-nodes ul[data-kind="observable"] li code').allInnerTexts();
      assert.deepEqual(observables.sort(), ['1.1.1.1', '8.8.8.8', 'example.com']);
      assert.match(await page.locator('#graph-nodes').innerText(), /8\.8\.8\.8 \(IPv4, suspicious\)/);
      const edgeRows = await page.locator('#graph-edges tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
      assert.ok(edgeRows.some((r) => r[0] === 'example.com' && r[1] === 'resolves to' && r[2] === '93.184.215.14' && r[3] === 'the address the IP engines looked up'), JSON.stringify(edgeRows));
      assert.ok(edgeRows.some((r) => r[0] === '1.1.1.1' && r[1] === 'is in' && r[2] === 'AS13335 Cloudflare, Inc.' && r[3] === 'according to IPapi'), JSON.stringify(edgeRows));
      assert.ok(edgeRows.some((r) => r[1] === 'flags (suspicious)' && r[2] === '8.8.8.8' && /Tor/.test(r[3] ?? '')), JSON.stringify(edgeRows));

      // The labels are the page's text colour on its surface colour: readable in this theme.
      const contrast = await page.evaluate<number>(`(() => {
        const css = getComputedStyle(document.documentElement);
        const rgb = (value) => {
          const probe = document.createElement('span');
          probe.style.color = value;
          document.body.appendChild(probe);
          const parts = getComputedStyle(probe).color.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
          probe.remove();
          return parts.map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
        };
        const lum = (v) => 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
        const [a, b] = [lum(rgb(css.getPropertyValue('--fg'))), lum(rgb(css.getPropertyValue('--surface')))];
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      })()`);
      assert.ok(contrast >= 4.5, `label contrast ${contrast}`);
      await page.screenshot({ path: join(SCREENSHOTS, `results-graph-${dark ? 'dark' : 'light'}.png`), fullPage: true });
      await context.close();
    });
  }

  test('the keyboard reaches the graph and its text; the keys zoom; the filters apply', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${analysisId}#graph`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await graphDrawn(page);

    await page.focus('button[data-view="graph"]');
    const reached: string[] = [];
    for (let i = 0; i < 80 && !reached.includes('graph-text'); i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate<string>(`document.activeElement?.id ?? ''`);
      if (id) reached.push(id);
    }
    assert.ok(reached.includes('graph-canvas'), `Tab reached ${JSON.stringify(reached)}`);
    assert.ok(reached.includes('graph-text'), `Tab reached ${JSON.stringify(reached)}`);
    assert.ok(reached.indexOf('graph-canvas') < reached.indexOf('graph-text'));
    assert.equal(await page.getAttribute('#graph-canvas', 'role'), 'img');
    assert.match(await page.getAttribute('#graph-canvas', 'aria-label') ?? '', /^Graph of 3 observables, 1 resolved IP, 2 ASNs and 1 flagging engine$/);

    // + zooms in: the drawing changes.
    await page.focus('#graph-canvas');
    const before = await page.locator('#graph-canvas').screenshot();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await page.waitForTimeout(100);
    const zoomed = await page.locator('#graph-canvas').screenshot();
    assert.notDeepEqual(zoomed, before);

    await page.selectOption('#verdict-filter', 'suspicious');
    await page.locator('#graph-nodes ul[data-kind="observable"] li').first().waitFor();
    assert.deepEqual(await page.locator('#graph-nodes ul[data-kind="observable"] li code').allInnerTexts(), ['8.8.8.8']);
    assert.equal(await page.locator('#graph-canvas canvas').first().isVisible(), true);
    assert.equal(await page.evaluate<string>('document.activeElement?.id'), 'graph-canvas', 'the focus stays on the graph across a re-render');
    await context.close();
  });

  test('the labels are at least 11 CSS px at the default zoom (font size × zoom), at 1280 and 390 px', async () => {
    for (const phone of [false, true]) {
      const { context, page } = await open({ phone });
      await page.goto(`${server.url}/results/${analysisId}#graph`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      await graphDrawn(page);
      const labels = await labelSizes(page);
      assert.ok(labels.length >= 7, JSON.stringify(labels));
      const smallest = Math.min(...labels.map((l) => l.px));
      assert.ok(smallest >= 11, `at ${phone ? 390 : 1280} px the smallest label is ${smallest.toFixed(1)} px: ${JSON.stringify(labels.filter((l) => l.px < 11))}`);
      await context.close();
    }
  });

  test('observables with no link are laid out as a grid, not a row, with readable labels (1280 and 390 px)', async () => {
    const addresses = Array.from({ length: 9 }, (_, i) => `192.0.2.${i + 1}`);
    const response = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: addresses.join(' '), engines: ['reverse_dns'] }),
    });
    const id = ((await response.json()) as { analysis_id: string }).analysis_id;
    for (const phone of [false, true]) {
      const { context, page } = await open({ phone });
      await page.goto(`${server.url}/results/${id}#graph`);
      await page.locator('#analysis-status[data-complete="true"]').waitFor();
      await graphDrawn(page);
      await page.locator('#graph-nodes li[data-node="ip:192.0.2.9"]').waitFor();
      const nodes = await page.evaluate<{ id: string; x: number; y: number; degree: number }[]>(`(() => {
        const cy = document.getElementById('graph-canvas')._cyreg.cy;
        return cy.nodes().map((n) => ({ id: n.id(), x: n.renderedPosition('x'), y: n.renderedPosition('y'), degree: n.degree(false) }));
      })()`);
      assert.equal(nodes.length, 9);
      assert.ok(nodes.every((n) => n.degree === 0), 'no links');
      const columns = new Set(nodes.map((n) => Math.round(n.x)));
      const rows = new Set(nodes.map((n) => Math.round(n.y)));
      const where = `${phone ? 390 : 1280} px: ${columns.size} columns, ${rows.size} rows`;
      assert.ok(columns.size > 1 && rows.size > 1, where);
      assert.ok(columns.size * rows.size >= 9 && columns.size * rows.size < 9 + Math.max(columns.size, rows.size), `${where}: a grid, not a scatter`);
      const smallest = Math.min(...(await labelSizes(page)).map((l) => l.px));
      assert.ok(smallest >= 11, `${where}: smallest label ${smallest}`);
      await page.locator('#graph-canvas').screenshot({ path: join(SCREENSHOTS, `results-graph-grid-${phone ? 'phone' : 'desktop'}.png`) });
      await context.close();
    }
  });

  test('phone width: the graph fits, nothing overflows', async () => {
    const { context, page } = await open({ phone: true });
    await page.goto(`${server.url}/results/${analysisId}#graph`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await graphDrawn(page);
    const box = await page.locator('#graph-canvas').boundingBox();
    assert.ok(box && box.width > 200 && box.width <= 390 && box.height > 150, JSON.stringify(box));
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.equal(overflow, 0);
    await page.screenshot({ path: join(SCREENSHOTS, 'results-graph-phone.png'), fullPage: true });
    await context.close();
  });

  test('while the analysis runs: a running observable is drawn alone, its links come when it finishes', async () => {
    const response = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: '9.9.9.9 8.8.8.8', engines: ['ipapi'] }),
    });
    const id = ((await response.json()) as { analysis_id: string }).analysis_id;
    const { context, page } = await open();
    await page.goto(`${server.url}/results/${id}#graph`);
    await graphDrawn(page);
    await page.locator('#graph-nodes li[data-node="ip:8.8.8.8"]').waitFor();
    assert.match(await page.locator('#graph-nodes li[data-node="ip:9.9.9.9"]').innerText(), /^9\.9\.9\.9 \(IPv4, running\)$/);
    assert.equal(await page.locator('#graph-nodes li[data-node="asn:19281"]').count(), 0);
    release();
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    await page.locator('#graph-nodes li[data-node="asn:19281"]').waitFor();
    assert.match(await page.locator('#graph-nodes li[data-node="ip:9.9.9.9"]').innerText(), /\(IPv4, unknown\)$/);
    assert.equal(await page.locator('#graph-canvas canvas').first().isVisible(), true);
    await context.close();
  });

  test('no console error and no CSP violation on any page above', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
