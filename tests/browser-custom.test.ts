/**
 * Custom engines and engine sets in the web pages (issue 23), in headless Chromium against
 * `oas serve` (a subprocess) on loopback: the configuration defines the internal threat-intel
 * engines of tests/fakes/internal-intel.ts (their key in an environment variable the server gets)
 * and one more whose variable is not set, and engine sets mixing them with built-in engines. The
 * picker shows the custom engines in a group of their own, none preselected, the unconfigured one
 * not selectable and naming its variable; a set's chip selects exactly its engines; an analysis
 * started from the form shows the custom engine's summary and verdict in the table, the cards and
 * the graph. Screenshots go to test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { INTEL_KEY, intelDefinitions, startInternalIntel, type InternalIntelFake } from './fakes/internal-intel.js';
import { launchChromium, openPage, SCREENSHOTS, skipReason } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import type { CatalogView } from '../src/view/types.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser custom-engine tests skipped: ${skip}\n`);

/** The variable holding the intel key (given to the server), and one nobody sets. */
const KEY_ENV = 'OAS_TEST_BROWSER_INTEL_KEY';
const MISSING_ENV = 'OAS_TEST_BROWSER_INTEL_OFFLINE_KEY';
const CUSTOM = ['intel', 'intel_domain', 'intel_offline', 'intel_search'];
const SETS = { triage: ['intel', 'reverse_dns'], domains: ['intel_domain', 'rdap_whois', 'intel_offline'] };
const FLAGGED_IP = '45.155.205.233';

describe('custom engines and engine sets in Chromium', { skip }, () => {
  let intel: InternalIntelFake;
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  before(async () => {
    intel = await startInternalIntel({ records: { [FLAGGED_IP]: { score: 91, category: 'botnet', tags: ['c2'] } } });
    upstreams = await startUpstreams();
    const defined = intelDefinitions(intel.url, KEY_ENV);
    const offline = { ...(intelDefinitions(intel.url, MISSING_ENV).intel_domain as Record<string, unknown>), label: 'Offline intel', description: 'An intel source whose key is not set' };
    const config = configFor(upstreams, { custom_engines: { ...defined, intel_offline: offline }, engine_sets: SETS });
    server = await spawnServe(config.file, { env: { [KEY_ENV]: INTEL_KEY } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await upstreams?.close();
    await intel?.close();
  });

  const open = () => openPage(browser, { requests, consoleErrors }, { origin: server.url });
  const checked = (page: Page) => page.locator('input[name="engines"]:checked').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('value') ?? '').sort());
  const pressed = (page: Page) => page.locator('.engine-sets button[aria-pressed="true"]').evaluateAll((chips) => chips.map((c) => c.getAttribute('data-set')));

  test('/ui/engines: the custom engines as `custom`, never default, and the sets by engine id', async () => {
    const view = (await (await fetch(`${server.url}/ui/engines`)).json()) as CatalogView;
    const custom = view.engines.filter((e) => e.catalog === 'custom');
    assert.deepEqual(custom.map((e) => e.id).sort(), CUSTOM);
    assert.ok(custom.every((e) => !e.default && !e.tags.includes('default')));
    const offline = custom.find((e) => e.id === 'intel_offline')!;
    assert.equal(offline.configured, false);
    assert.equal(offline.configure_hint, MISSING_ENV);
    assert.ok(custom.filter((e) => e.id !== 'intel_offline').every((e) => e.configured));
    assert.deepEqual(view.sets, [{ name: 'triage', engines: SETS.triage }, { name: 'domains', engines: SETS.domains }]);
  });

  test('the picker: a group of custom engines, none preselected; set chips select exactly their engines', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    const group = page.locator('section.engine-group[aria-label="Custom engines"]');
    await group.waitFor();
    assert.deepEqual((await group.locator('[data-engine]').evaluateAll((items) => items.map((i) => i.getAttribute('data-engine')))).sort(), CUSTOM);
    assert.match(await group.locator('h3').innerText(), /^Custom engines\b.*custom_engines/);
    assert.equal(await page.locator('section.engine-group[aria-label="Older catalog"] [data-engine^="intel"]').count(), 0, 'not among the older catalog');
    const defaults = await checked(page);
    assert.ok(defaults.includes('reverse_dns'), 'the server\'s defaults are preselected');
    assert.deepEqual(defaults.filter((id) => CUSTOM.includes(id)), [], 'no custom engine is preselected');

    // The one whose variable is not set: shown, not selectable, its hint naming the variable.
    assert.equal(await page.isDisabled('#engine-intel_offline'), true);
    assert.equal(await page.isEnabled('#engine-intel'), true);
    assert.match(await page.locator('[data-engine="intel_offline"] .needs-key').innerText(), new RegExp(MISSING_ENV));
    assert.match(await page.locator('[data-engine="intel_offline"]').getAttribute('class') ?? '', /\bunavailable\b/);

    // The chips, in the configuration's order, none pressed by the defaults.
    const chips = page.locator('.engine-sets button.set-chip');
    assert.deepEqual(await chips.allInnerTexts(), ['@triage', '@domains']);
    assert.deepEqual(await pressed(page), []);
    await page.click('button[data-set="triage"]');
    assert.deepEqual(await checked(page), ['intel', 'reverse_dns'], 'exactly the set, in place of the defaults');
    assert.deepEqual(await pressed(page), ['triage']);
    assert.equal(await page.innerText('#selected-count'), '2 engines selected');
    // A set with an engine that cannot run: the others are selected, the chip says which is missing.
    assert.match(await page.getAttribute('button[data-set="domains"]', 'title') ?? '', /not configured: Offline intel/);
    await page.click('button[data-set="domains"]');
    assert.deepEqual(await checked(page), ['intel_domain', 'rdap_whois']);
    assert.deepEqual(await pressed(page), ['domains']);
    // Changing the selection by hand: no set is pressed any more.
    await page.check('#engine-public_dns');
    assert.deepEqual(await pressed(page), []);
    // By keyboard: a chip is a button.
    await page.focus('button[data-set="triage"]');
    await page.keyboard.press('Space');
    assert.deepEqual(await checked(page), ['intel', 'reverse_dns']);
    assert.deepEqual(await pressed(page), ['triage']);
    await page.screenshot({ path: join(SCREENSHOTS, 'index-custom-engines-light.png'), fullPage: true });
    // A re-run link may name a set as the API does: `@triage` stands for its engines.
    await page.goto('about:blank'); // a new load, not a change of the fragment only
    await page.goto(`${server.url}/#text=${FLAGGED_IP}&engines=@triage`);
    await page.locator('#prefill-note').waitFor();
    assert.deepEqual(await checked(page), ['intel', 'reverse_dns']);
    assert.deepEqual(await pressed(page), ['triage']);
    assert.deepEqual(consoleErrors, []);
    await context.close();
  });

  test('an analysis with a set: the custom engine\'s summary and verdict in the table, the cards and the graph', async () => {
    const { context, page } = await open();
    await page.goto(`${server.url}/`);
    await page.fill('#text', `beacon to ${FLAGGED_IP}`);
    await page.click('button[data-set="triage"]');
    await page.click('#submit');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();

    const row = page.locator(`tbody tr[data-observable="${FLAGGED_IP}"]`);
    assert.equal(await page.locator('thead th:has(button[data-column="intel"])').innerText(), 'Internal intel');
    assert.equal(await page.locator('thead button[data-column="intel_search"]').count(), 0, 'only the set\'s engines ran');
    const cell = row.locator('td[data-engine="intel"]');
    assert.match(await cell.innerText(), /91\/100, botnet/);
    assert.match(await cell.getAttribute('class') ?? '', /risk-malicious/);
    assert.equal(await row.locator('td.verdict-cell .verdict').getAttribute('data-verdict'), 'malicious');
    assert.match(await row.locator('td.verdict-cell .reasons li').first().innerText(), /^Internal intel: score 91\/100 \(botnet\)/);

    await page.click('button[data-view="cards"]');
    const section = page.locator(`article.card[data-observable="${FLAGGED_IP}"] .engine-section[data-engine="intel"]`);
    assert.match(await section.locator('h3').innerText(), /^Internal intel\b/);
    assert.match(await section.innerText(), /91\/100, botnet/);
    assert.equal(await section.getAttribute('data-evidence'), 'malicious');
    assert.equal(await page.locator(`article.card[data-observable="${FLAGGED_IP}"] .card-head .verdict`).getAttribute('data-verdict'), 'malicious');

    await page.click('button[data-view="graph"]');
    await page.locator('#graph-canvas canvas').first().waitFor({ state: 'attached' });
    assert.equal(await page.locator('#graph-nodes li[data-node="engine:intel"]').count(), 1);
    const edges = await page.locator('#graph-edges tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    assert.ok(edges.some((r) => r[0] === 'Internal intel' && r[1] === 'flags (malicious)' && r[2] === FLAGGED_IP && /91\/100/.test(r[3] ?? '')), JSON.stringify(edges));
    await page.screenshot({ path: join(SCREENSHOTS, 'results-custom-engine-light.png'), fullPage: true });
    assert.deepEqual(consoleErrors, []);
    assert.ok(requests.every((url) => url.startsWith(server.url) || url.startsWith('data:')), 'the page asks only oas');
    await context.close();
  });
});
