/**
 * The pages and roles (issue 25) in headless Chromium against `oas serve`, users added with
 * `oas users add`: a viewer signed in sees Analyze disabled with a one-line note saying why; an
 * analyst's form is as before; the history shows who started each analysis and its "Mine" toggle
 * keeps only the signed-in user's (with the search as typed, both kept in the address); the results
 * page says who started the analysis. Loopback only; no timing assertion.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { runOas } from './helpers/cli.js';
import { launchChromium, skipReason, signedInPage } from './helpers/browser.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'browser-roles-token-Vb7Nc3Xq9Lm1';
const skip = skipReason();

describe('roles in the pages', { skip, timeout: 90_000 }, () => {
  let upstreams: Upstreams;
  let server: ServeProcess;
  let browser: Browser;
  const tokens = new Map<string, string>();
  const consoleErrors: string[] = [];

  before(async () => {
    upstreams = await startUpstreams();
    const { dir, file } = configFor(upstreams, { api_token: API_TOKEN, auth_failures_per_minute: 1000 });
    for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
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
    await upstreams?.close();
  });

  /** A fresh browser signed in with `token` through the sign-in form, at `path`. */
  const signedIn = (token: string, path: string): Promise<Page> => signedInPage(browser, server.url, token, path, consoleErrors);

  async function start(token: string, text: string): Promise<string> {
    const res = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text, engines: ['reverse_dns'] }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { analysis_id: string }).analysis_id;
  }

  test('a viewer\'s form: Analyze disabled, and one line saying why', async () => {
    const page = await signedIn(tokens.get('vera')!, '/');
    await page.locator('#engine-reverse_dns').waitFor();
    const note = page.locator('#role-note');
    assert.equal(await note.innerText(), 'Your role (viewer) reads results; starting analyses needs analyst.');
    assert.equal(await page.locator('#submit').isDisabled(), true);
    assert.equal(await page.locator('#submit').getAttribute('aria-describedby'), 'role-note');
    // Ctrl+Enter does not start one either (the form would say "Starting…" at once).
    await page.fill('#text', '8.8.8.8');
    await page.focus('#text');
    await page.keyboard.press('Control+Enter');
    assert.equal(await page.locator('#submit').innerText(), 'Analyze');
    assert.equal(await page.locator('#form-error').isHidden(), true);
    assert.equal(new URL(page.url()).pathname, '/');
    await page.context().close();
  });

  test('an analyst\'s form is as before; the history shows who started each analysis, and Mine keeps the search', async () => {
    const own = await start(tokens.get('alice')!, 'mine-one.example.com 8.8.8.8');
    const theirs = await start(API_TOKEN, 'theirs-one.example.com 8.8.8.8');
    const page = await signedIn(tokens.get('alice')!, '/');
    await page.locator('#engine-reverse_dns').waitFor();
    assert.equal(await page.locator('#submit').isDisabled(), false);
    assert.equal(await page.locator('#role-note').count(), 0);

    await page.goto(`${server.url}/history`);
    await page.locator(`#history-list tr[data-id="${theirs}"]`).waitFor();
    assert.equal(await page.locator(`#history-list tr[data-id="${own}"] td.history-by`).innerText(), 'alice');
    assert.equal(await page.locator(`#history-list tr[data-id="${theirs}"] td.history-by`).innerText(), 'api_token');
    assert.equal(await page.locator('#history-list th').last().innerText(), 'Started by');

    const mine = page.locator('#history-mine');
    assert.equal(await mine.getAttribute('aria-pressed'), 'false');
    await page.fill('#history-search', 'one.example.com');
    await mine.click();
    await page.locator(`#history-list tr[data-id="${theirs}"]`).waitFor({ state: 'detached' });
    assert.equal(await mine.getAttribute('aria-pressed'), 'true');
    assert.deepEqual(await page.locator('#history-list tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id'))), [own]);
    const address = new URL(page.url()).searchParams;
    assert.equal(address.get('q'), 'one.example.com');
    assert.equal(address.get('mine'), '1');
    assert.match(await page.locator('#history-summary').innerText(), /started by you with an observable containing “one\.example\.com”/);

    // The address brings it back; pressing Mine again shows everyone's, the search still there.
    await page.reload();
    await page.locator(`#history-list tr[data-id="${own}"]`).waitFor();
    assert.equal(await page.locator('#history-mine').getAttribute('aria-pressed'), 'true');
    assert.equal(await page.inputValue('#history-search'), 'one.example.com');
    await page.locator('#history-mine').click();
    await page.locator(`#history-list tr[data-id="${theirs}"]`).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('mine'), null);
    assert.equal(new URL(page.url()).searchParams.get('q'), 'one.example.com');

    await page.goto(`${server.url}/results/${own}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.match(await page.locator('#analysis-meta').innerText(), /^Started .+ by alice · /);
    await page.context().close();
  });

  test('no console error', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
