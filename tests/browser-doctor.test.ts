/**
 * The admin's check on the analysis page (issue 40) in headless Chromium against `oas serve`: an
 * admin presses "Check engines and settings" and reads the lines `POST /api/doctor` answers (an
 * upstream's words shown as text, never markup); an analyst has no such button. Loopback only; no
 * timing assertion.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { reply, startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import * as shodan from './fakes/shodan.js';
import { runOas } from './helpers/cli.js';
import { launchChromium, skipReason, signedInPage } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'browser-doctor-token-Qe4Rt7Yu1Io3';
const SHODAN_KEY = 'browser-doctor-shodan-key-8f7e6d5c';
/** Shodan's refusal, with markup in its words: the page must show it as text. */
const HOSTILE = '<img src=x onerror="document.title=1">Invalid <b>API</b> key';
const skip = skipReason();

describe('the admin\'s check on the analysis page', { skip, timeout: 90_000 }, () => {
  let upstreams: Upstreams;
  let keyed: FakeHttpServer;
  let server: ServeProcess;
  let browser: Browser;
  const tokens = new Map<string, string>();
  const consoleErrors: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    keyed = await startFakeHttp({ ...shodan.fakeRoutes({ key: SHODAN_KEY }), 'GET /shodan/api-info': reply.json({ error: HOSTILE }, 401) });
    const { dir, file } = configFor(upstreams, { api_token: API_TOKEN, auth_failures_per_minute: 1000, engines: { provider_20: { ...shodan.fakeSettings(keyed.url), api_key: SHODAN_KEY } } });
    for (const [name, role] of [['ada', 'admin'], ['ana', 'analyst']] as const) {
      const run = await runOas(dir, ['users', 'add', name, '--role', role, '--config', file]);
      assert.equal(run.code, 0, run.stderr);
      tokens.set(name, run.stdout.trim());
    }
    server = await spawnServe(file);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await keyed?.close();
    await upstreams?.close();
  });

  /** A fresh browser signed in with `token` through the sign-in form, at `path`. */
  const signedIn = (token: string, path: string): Promise<Page> => signedInPage(browser, server.url, token, path, consoleErrors);

  test('an admin presses the button and reads oas doctor\'s lines, the upstream\'s words as text', async () => {
    const page = await signedIn(tokens.get('ada')!, '/');
    await page.locator('#doctor-run').click();
    const last = page.locator('#doctor-lines li').last();
    await last.waitFor();
    const shown = await page.locator('#doctor-lines li').allInnerTexts();
    const answer = await fetch(`${server.url}/api/doctor`, { method: 'POST', headers: { authorization: `Bearer ${API_TOKEN}` } });
    const report = (await answer.json()) as { lines: string[] };
    // The same lines; the cost may differ (the server's RDAP bootstrap file is fresh in memory
    // at the second run: one call fewer).
    assert.deepEqual(shown.slice(1), report.lines.slice(1));
    assert.match(shown[0]!, /^one call per engine: 17 engines checked, \d+ HTTP requests made$/);
    assert.match(shown.at(-1)!, /^1 of \d+ checks failed$/);
    const refused = shown.find((line) => line.includes('provider_20'));
    assert.equal(refused, `FAIL  engine provider_20 (shodan): HTTP 401 Unauthorized: ${HOSTILE} (key refused: check engines.provider_20.api_key or OAS_SHODAN_API_KEY)`);
    assert.equal(await page.locator('#doctor-lines img, #doctor-lines b').count(), 0, 'no markup from the upstream');
    assert.equal(await page.locator('#doctor-status').innerText(), 'Some checks failed: each line says what to fix.');
    assert.notEqual(await page.title(), '1');
    assert.ok(!shown.join('\n').includes(SHODAN_KEY), 'no key shown');
    assert.deepEqual(consoleErrors, []);
    await page.context().close();
  });

  test('an analyst has no such button', async () => {
    const page = await signedIn(tokens.get('ana')!, '/');
    await page.locator('#engine-reverse_dns').waitFor();
    assert.equal(await page.locator('#doctor-run').count(), 0);
    await page.context().close();
  });
});
