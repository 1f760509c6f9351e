/**
 * The results page's "Send to ..." buttons (issue 37) in headless Chromium against `oas serve`,
 * with a loopback MISP (tests/fakes/misp-push.ts) configured as the push target and users added
 * with `oas users add`: an analyst sees "Send to MISP" once the analysis is complete (and no
 * button for the targets not configured); clicking it says "Sending…" with the button disabled,
 * then one line with what MISP made and a link to the event, and MISP has the event; a viewer's
 * button is disabled with a note saying why, and sends nothing; a server with no target shows
 * none; a hostile answer (markup in the message or the error, a `javascript:` link) stays text.
 * Loopback only; no timing assertion.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page, Route } from 'playwright-core';
import type { FakeHandler } from './fakes/http.js';
import { intelRoutes } from './fakes/intel.js';
import { startMispPushFake, type MispPushFake } from './fakes/misp-push.js';
import { runOas } from './helpers/cli.js';
import { launchChromium, SCREENSHOTS, skipReason, signedInPage } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'browser-push-token-Hc4Wm8Rt2Kq6';
const skip = skipReason();

describe('the results page\'s "Send to" buttons', { skip, timeout: 120_000 }, () => {
  let upstreams: Upstreams;
  let misp: MispPushFake;
  let server: ServeProcess;
  /** No push target, no authentication. */
  let bare: ServeProcess;
  let browser: Browser;
  const tokens = new Map<string, string>();
  const consoleErrors: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    // ipapi calls 8.8.8.8 a Tor exit: suspicious, what a push sends by default.
    const ipapi = intelRoutes()['POST /ipapi'] as FakeHandler;
    upstreams.intel.route('POST /ipapi', async (req) => {
      const answer = (await ipapi(req)) as { json: Record<string, unknown> };
      return (JSON.parse(req.body) as { q: string }).q === '8.8.8.8' ? { ...answer, json: { ...answer.json, is_tor: true } } : answer;
    });
    misp = await startMispPushFake();
    const { dir, file } = configFor(upstreams, {
      api_token: API_TOKEN,
      auth_failures_per_minute: 1000,
      push: { misp: { url: misp.url, api_key: misp.key } },
    });
    for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
      const run = await runOas(dir, ['users', 'add', name, '--role', role, '--config', file]);
      assert.equal(run.code, 0, run.stderr);
      tokens.set(name, run.stdout.trim());
    }
    server = await spawnServe(file);
    bare = await spawnServe(configFor(upstreams).file);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await bare?.stop();
    await misp?.close();
    await upstreams?.close();
  });

  /** A fresh browser signed in with `token` through the sign-in form, at `path`. */
  const signedIn = (token: string, path: string): Promise<Page> => signedInPage(browser, server.url, token, path, consoleErrors, /401|502|403/);

  /** An analysis of `text` by ipapi (8.8.8.8 a Tor exit: suspicious), complete. */
  async function analysed(base: string, text: string, token?: string): Promise<string> {
    const res = await fetch(`${base}/api/analyze`, {
      method: 'POST',
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
      body: JSON.stringify({ text, engines: ['ipapi'] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const id = ((await res.json()) as { analysis_id: string }).analysis_id;
    for (let i = 0; i < 200; i++) {
      const done = await fetch(`${base}/api/is_analysis_complete/${id}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      if (((await done.json()) as { complete: boolean }).complete) return id;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`analysis ${id} not complete`);
  }

  async function complete(page: Page): Promise<void> {
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
  }

  test('an analyst sends a complete analysis to MISP: "Sending…", then one line and a link, and MISP has the event', async () => {
    const id = await analysed(server.url, '8.8.8.8 example.com', tokens.get('alice'));
    const page = await signedIn(tokens.get('alice')!, `/results/${id}`);
    await complete(page);
    const button = page.locator('#push-misp');
    await button.waitFor();
    assert.equal(await button.innerText(), 'Send to MISP');
    assert.equal(await button.isEnabled(), true);
    assert.equal(await page.locator('#push .push-button').count(), 1, 'only the configured target: no OpenCTI, no TheHive');
    assert.equal(await page.locator('#push-role-note').count(), 0);
    assert.equal(await page.locator('#push-all').isChecked(), false);

    // Held until the button has been seen sending.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sent: unknown[] = [];
    await page.route('**/api/analyses/*/push', async (route: Route) => {
      sent.push(route.request().postDataJSON());
      await held;
      await route.continue();
    });
    await button.click();
    await page.locator('#push-misp[aria-busy="true"]').waitFor();
    assert.equal(await button.innerText(), 'Sending…');
    assert.equal(await button.isDisabled(), true);
    release();
    const line = page.locator('#push-lines .push-line[data-target="misp"]');
    await line.waitFor();
    assert.equal(await button.innerText(), 'Send to MISP');
    assert.equal(await button.isEnabled(), true);
    assert.deepEqual(sent, [{ target: 'misp' }], 'the server\'s default threshold: suspicious and up');

    assert.equal(misp.events.length, 1, `MISP got one event: ${await line.innerText()}`);
    const event = misp.events[0]!;
    assert.deepEqual(event.Attribute.filter((a) => a.type === 'ip-dst').map((a) => a.value), ['8.8.8.8'], 'the suspicious observable only');
    assert.match(await line.innerText(), new RegExp(`^MISP event ${event.id} created: \\d+ attributes? added`));
    assert.match(await line.locator('.push-message').innerText(), new RegExp(`\\(${misp.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/events/view/${event.id}\\)$`));
    const link = line.locator('a.push-link');
    assert.equal(await link.getAttribute('href'), `${misp.url}/events/view/${event.id}`);
    assert.equal(await link.innerText(), 'Open in MISP');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await page.locator('#push-lines').getAttribute('role'), 'status');
    await page.screenshot({ path: join(SCREENSHOTS, 'results-push.png') });

    // "all observables": every one; the line is replaced, not added to; nothing is made twice.
    await page.unroute('**/api/analyses/*/push');
    await page.check('#push-all');
    assert.match(await button.getAttribute('title') ?? '', /every observable/);
    await button.click();
    await page.locator('#push-lines .push-line', { hasText: / found: \d+ attributes? added, \d+ already there/ }).waitFor();
    assert.match(await line.innerText(), new RegExp(`^MISP event ${event.id} found: `));
    assert.equal(await page.locator('#push-lines .push-line').count(), 1);
    assert.equal(misp.events.length, 1, 'the same event');
    assert.ok(misp.events[0]!.Attribute.some((a) => a.value === 'example.com'), 'all observables sent the clean one too');
    assert.deepEqual(consoleErrors, []);
    await page.context().close();
  });

  test('a viewer sees the button disabled with a note saying why, and sends nothing', async () => {
    const id = await analysed(server.url, '8.8.8.8', tokens.get('alice'));
    const before = misp.events.length;
    const page = await signedIn(tokens.get('vera')!, `/results/${id}`);
    await complete(page);
    const button = page.locator('#push-misp');
    await button.waitFor();
    assert.equal(await button.isDisabled(), true);
    assert.equal(await button.getAttribute('aria-describedby'), 'push-role-note');
    assert.equal(await page.locator('#push-role-note').innerText(), 'Your role (viewer) reads results; sending them to a platform needs analyst.');
    assert.equal(await page.locator('#push-all').isDisabled(), true);
    await page.screenshot({ path: join(SCREENSHOTS, 'results-push-viewer.png') });
    const posts: string[] = [];
    page.on('request', (request) => request.method() === 'POST' && posts.push(request.url()));
    await button.click({ force: true });
    await button.dispatchEvent('click');
    await page.waitForTimeout(200);
    assert.deepEqual(posts, []);
    assert.equal(await page.locator('#push-lines .push-line').count(), 0);
    assert.equal(misp.events.length, before);
    await page.context().close();
  });

  test('no push target configured: no button at all', async () => {
    const id = await analysed(bare.url, '8.8.8.8');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const targets = page.waitForResponse((res) => res.url().endsWith('/ui/push-targets'));
    await page.goto(`${bare.url}/results/${id}`);
    await complete(page);
    assert.deepEqual(await (await targets).json(), { targets: [], can_push: true, role: 'admin' });
    assert.equal(await page.locator('#push').isHidden(), true);
    assert.equal(await page.locator('button.push-button').count(), 0);
    assert.doesNotMatch(await page.locator('main').innerText(), /Send to/);
    await context.close();
  });

  test('the buttons wait for the analysis to complete', async () => {
    const id = await analysed(server.url, '8.8.8.8', tokens.get('alice'));
    const page = await signedIn(tokens.get('alice')!, '/');
    // The live view says "still running" a few times before the real answer.
    let polls = 0;
    await page.route('**/ui/analyses/*', async (route: Route) => {
      const res = await route.fetch();
      const view = (await res.json()) as { complete: boolean };
      if (++polls <= 2) view.complete = false;
      await route.fulfill({ response: res, json: view });
    });
    await page.goto(`${server.url}/results/${id}`);
    await page.locator('#analysis-status[data-complete="false"]').waitFor();
    await page.locator('#progress-text', { hasText: /^Running/ }).waitFor();
    assert.equal(await page.locator('#push-misp').count(), 0, 'no button while it runs');
    await complete(page);
    await page.locator('#push-misp').waitFor();
    await page.context().close();
  });

  test('a hostile message, error or link stays text', async () => {
    const id = await analysed(server.url, '8.8.8.8', tokens.get('alice'));
    const page = await signedIn(tokens.get('alice')!, `/results/${id}`);
    await complete(page);
    await page.locator('#push-misp').waitFor();
    const hostile = 'MISP event 7 created: <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & <b>bold</b>';
    const answers = [
      { status: 200, json: { target: 'misp', kind: 'event', id: '7', link: 'javascript:window.__pwned=3', created: true, added: 1, existing: 0, selected: 1, withheld: 0, message: hostile } },
      { status: 502, json: { error: 'MISP at misp.example: HTTP 500: <img src=x onerror="window.__pwned=4"> <a href="javascript:window.__pwned=5">click</a>' } },
      { status: 200, json: { target: 'misp', kind: 'event', id: '8', link: 'https://misp.example/events/view/8"><img src=x onerror=window.__pwned=6>', created: true, added: 1, existing: 0, selected: 1, withheld: 0, message: 'MISP event 8 created' } },
    ];
    let next = 0;
    await page.route('**/api/analyses/*/push', (route: Route) => route.fulfill(answers[next++]!));
    const line = page.locator('#push-lines .push-line[data-target="misp"]');

    await page.click('#push-misp');
    await page.locator('#push-lines .push-line', { hasText: 'bold' }).waitFor();
    assert.equal(await line.locator('.push-message').innerText(), hostile);
    assert.equal(await line.locator('a').count(), 0, 'a javascript: link is no link');

    await page.click('#push-misp');
    await page.locator('#push-lines .push-line.push-failed').waitFor();
    assert.equal(await line.innerText(), 'MISP at misp.example: HTTP 500: <img src=x onerror="window.__pwned=4"> <a href="javascript:window.__pwned=5">click</a>');
    assert.equal(await line.locator('a').count(), 0);

    await page.click('#push-misp');
    await page.locator('#push-lines .push-line', { hasText: 'event 8' }).waitFor();
    // An http(s) address is a link, as the URL parser reads it: its quote and markup escaped, never attributes.
    const href = await line.locator('a.push-link').getAttribute('href');
    assert.ok(href?.startsWith('https://misp.example/events/view/8%22%3E%3Cimg'), href ?? '');

    assert.equal(await page.locator('#push img, #push script, #push b').count(), 0);
    assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined);
    await page.context().close();
  });
});
