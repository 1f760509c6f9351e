/**
 * The Watchlists page (issue 36) in headless Chromium against `oas serve` (engines on loopback
 * fakes, people added with `oas users add`): linked from the pages' navigation; the list with each
 * watchlist's runs and what changed (PhishTank's answer changed between two runs: the URL's verdict
 * clean -> malicious); an analyst's add form (a refusal shown beside it, the watchlist added and
 * listed, markup typed in it kept as text), Run now and Remove; a viewer reads, with no form and no
 * buttons. No timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Watchlist } from '../src/automation/watchlist.js';
import { runOas } from './helpers/cli.js';
import { join } from 'node:path';
import { launchChromium, SCREENSHOTS, skipReason } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { phishTank } from './helpers/watchlists.js';

const API_TOKEN = 'browser-watchlists-token-Pq7Rt2Wz5Xc8';
const URL_VALUE = 'https://login.evil-bank.example/verify';
const skip = skipReason();

describe('the Watchlists page', { skip, timeout: 120_000 }, () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  const tokens = new Map<string, string>();
  const consoleErrors: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens.get('alice')}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: await res.json() as Record<string, unknown> };
  };
  const settled = async (name: string, runs: number): Promise<Watchlist> => {
    for (let i = 0; i < 400; i++) {
      const watchlist = (await api('GET', `watchlists/${name}`)).json as unknown as Watchlist;
      if (watchlist.runs.length === runs && watchlist.runs.every((r) => r.status === 'done')) return watchlist;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`watchlist ${name}: ${runs} runs never done`);
  };

  before(async () => {
    upstreams = await startUpstreams();
    phishTank(upstreams.intel, false);
    const { dir, file } = configFor(upstreams, { api_token: API_TOKEN, auth_failures_per_minute: 1000 });
    for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
      const run = await runOas(dir, ['users', 'add', name, '--role', role, '--config', file]);
      assert.equal(run.code, 0, run.stderr);
      tokens.set(name, run.stdout.trim());
    }
    server = await spawnServe(file);
    browser = await launchChromium();
    // A watchlist whose second run finds the URL turned malicious.
    assert.equal((await api('POST', 'watchlists', { name: 'phish-watch', text: `Reported: hxxps://login.evil-bank[.]example/verify`, engines: ['provider_17'], every: '6h' })).status, 201);
    await settled('phish-watch', 1);
    phishTank(upstreams.intel, true);
    assert.equal((await api('POST', 'watchlists/phish-watch/run')).status, 200);
    await settled('phish-watch', 2);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await upstreams?.close();
  });

  async function signedIn(who: string, path: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    // A refusal (the form's 400, a sign-in's 401) is the browser's line about the answer, not an error of the page.
    page.on('console', (message) => message.type() === 'error' && !/status of 40[01]/.test(message.text()) && consoleErrors.push(message.text()));
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${server.url}/signin?next=${encodeURIComponent(path)}`);
    await page.fill('#token', tokens.get(who)!);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${server.url}${path}`);
    return page;
  }

  test('linked from the navigation; the list shows each run and what changed', async () => {
    const page = await signedIn('alice', '/history');
    await page.click('nav a[href="/watchlists"]');
    await page.waitForURL(`${server.url}/watchlists`);
    assert.equal(await page.locator('nav a[href="/watchlists"]').getAttribute('aria-current'), 'page');
    const section = page.locator('section[data-name="phish-watch"]');
    await section.waitFor();
    assert.equal(await section.locator('h2').innerText(), 'phish-watch');
    assert.match(await section.locator('.watchlist-meta').innerText(), /Every 6h · owner alice/);
    assert.equal(await section.locator('.watchlist-meta .marking[data-kind="tlp"]').innerText(), 'TLP:AMBER');
    const rows = section.locator('table.watchlist-runs tbody tr');
    assert.equal(await rows.count(), 2);
    assert.match(await rows.nth(0).innerText(), /run now/);
    assert.match(String(await rows.nth(0).locator('td').nth(2).textContent()), /^\d+ changes?$/);
    assert.match(await rows.nth(1).innerText(), /baseline, when added/);
    const change = rows.nth(0).locator('li[data-kind="verdict"]');
    assert.equal(await change.locator('code.obs').innerText(), URL_VALUE);
    assert.deepEqual(await change.locator('.verdict').evaluateAll((badges) => badges.map((b) => b.getAttribute('data-verdict'))), ['clean', 'malicious']);
    assert.match(await rows.nth(0).locator('li[data-kind="reason"]').innerText(), /provider_17: verified phish/);
    const link = rows.nth(0).locator('td a');
    assert.match(String(await link.getAttribute('href')), /^\/results\/[0-9a-f-]{36}$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'watchlists.png'), fullPage: true });
    await page.context().close();
  });

  test('an analyst adds one with the form (a refusal says why; markup stays text), runs and removes it', async () => {
    const page = await signedIn('alice', '/watchlists');
    await page.locator('#watchlist-form').waitFor();
    await page.fill('#watchlist-name', 'form-watch');
    await page.fill('#watchlist-text', '<img src=x onerror="document.title=1"> login-verify-bank[.]com');
    await page.fill('#watchlist-every', '1m');
    await page.fill('#watchlist-engines', 'provider_17');
    await page.click('#watchlist-add');
    await page.locator('#watchlist-problem', { hasText: 'at least 5m' }).waitFor();
    await page.fill('#watchlist-every', '1d');
    await page.click('#watchlist-add');
    const section = page.locator('section[data-name="form-watch"]');
    await section.waitFor();
    assert.equal(await page.locator('#watchlist-problem').isHidden(), true);
    assert.equal(await page.inputValue('#watchlist-name'), '', 'the form is emptied');
    assert.deepEqual(await section.locator('.watchlist-text code').allTextContents(), ['<img src=x onerror="document.title=1"> login-verify-bank[.]com']);
    assert.equal(await page.locator('main img').count(), 0, 'no element made of the text');
    assert.notEqual(await page.title(), '1');
    // Its baseline shows up (the page asks again while it runs).
    await section.locator('tr[data-status="done"]').waitFor();
    assert.match(await section.locator('tbody tr').first().innerText(), /baseline/);

    await section.locator('button.watchlist-run').click();
    await section.locator('tbody tr').nth(1).waitFor();
    await section.locator('tbody tr').first().locator('text=no change').waitFor();

    await section.locator('button.watchlist-remove').click();
    await section.waitFor({ state: 'detached' });
    assert.equal((await api('GET', 'watchlists/form-watch')).status, 404);
    await page.context().close();
  });

  test('a viewer reads: no form, no buttons', async () => {
    const page = await signedIn('vera', '/watchlists');
    await page.locator('section[data-name="phish-watch"] table.watchlist-runs').waitFor();
    assert.equal(await page.locator('#watchlist-form').count(), 0);
    assert.equal(await page.locator('button.watchlist-run, button.watchlist-remove').count(), 0);
    assert.match(await page.locator('main').innerText(), /Viewers read them; analysts and admins add and remove them/);
    await page.context().close();
  });

  test('no console error', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
