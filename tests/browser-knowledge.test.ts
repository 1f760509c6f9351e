/**
 * What the team already knows (issue 38) in the web UI, against `oas serve` (people added with
 * `oas users add`, an engine of the test on a loopback fake judging by a score: 185.220.101.* is
 * malicious, the rest clean):
 * - the JSON the results page reads (GET /ui/analyses/<id>): each observable's `mark` and
 *   `computed_verdict` when a mark decided, and `mark_now` on an earlier analysis for a mark made
 *   since it (its verdict unchanged);
 * - in headless Chromium: the Allowlist page, linked from the navigation, lists the configuration's
 *   entries (marked, no Remove) and an expired one; an analyst adds an entry with the form (a refusal
 *   shown beside it, markup in the reason kept as text) and removes it (a refusal shown as text); a
 *   viewer reads, with no form and no button;
 * - an analyst marks observables from the results page (table and cards): the dialog shows who
 *   marks, a refusal, then that later analyses will show it; a new analysis shows each mark with
 *   its author and the engines' verdict beside it, struck through for a false positive; the
 *   earlier analysis says "marked ... since this analysis"; a viewer sees marks, no Mark button;
 *   a hostile note stays text.
 * Loopback only; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { launchChromium, SCREENSHOTS, skipReason } from './helpers/browser.js';
import { runOas } from './helpers/cli.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import type { AllowEntryView, AnalysisView, MarkView, ObservableView } from '../src/view/types.js';

const API_TOKEN = 'browser-knowledge-token-Tz4Kp8Wq2Nm6';
const BAD = '185.220.101.7';
const GOOD = '104.16.1.1';
const HOSTILE_NOTE = '<b>ours</b> <img src=x onerror="document.title=\'owned\'"> red-team box';
const skip = skipReason();

let upstreams: Upstreams;
let intel: FakeHttpServer;
let server: ServeProcess;
const tokens = new Map<string, string>();

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({ 'GET /intel/*': (req) => ({ json: { score: req.path.includes('185.220.101.') ? 95 : 10 } }) });
  const { dir, file } = configFor(upstreams, {
    api_token: API_TOKEN,
    auth_failures_per_minute: 1000,
    custom_engines: {
      intel: {
        types: ['IPv4', 'FQDN'],
        request: { url: `${intel.url}/intel/{value}` },
        fields: { score: '/score' },
        summary: 'score {score}',
        evidence: [{ field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' }, { field: 'score', op: '<', value: 80, verdict: 'clean', reason: 'score {score}' }],
      },
    },
    allowlist: [{ value: '*.vendor-cdn.net', reason: 'a vendor we use' }],
  });
  for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
    const run = await runOas(dir, ['users', 'add', name, '--role', role, '--config', file]);
    assert.equal(run.code, 0, run.stderr);
    tokens.set(name, run.stdout.trim());
  }
  // An entry that expired a moment ago, written as stored (no clock is waited for).
  const { openKnowledge } = await import('../src/app.js');
  const opened = await openKnowledge({ file, env: {} });
  try {
    const past = new Date(Date.now() - 1_000).toISOString();
    const lists = (opened.knowledge as unknown as { sources: { allowlist: { put(k: string, v: unknown): Promise<boolean> } } }).sources;
    await lists.allowlist.put('198.51.100.50', { value: '198.51.100.50', reason: 'was fine', by: 'alice', at: past, expires: past });
  } finally {
    await opened.close();
  }
  server = await spawnServe(file, { cwd: dir });
});
after(async () => {
  await server?.stop();
  await Promise.all([upstreams?.close(), intel?.close()]);
});

async function call<T>(who: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens.get(who)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as T };
}

/** A complete analysis of `text` by the test's engine, started by alice. */
async function analysed(text: string): Promise<string> {
  const started = await call<{ analysis_id: string }>('alice', 'POST', '/api/analyze', { text, engines: ['intel'], ignore_cache: true });
  assert.equal(started.status, 200);
  const id = started.json.analysis_id;
  for (let i = 0; i < 400; i++) {
    if ((await call<{ complete: boolean }>('alice', 'GET', `/api/is_analysis_complete/${id}`)).json.complete) return id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`analysis ${id} not complete`);
}

const rowOf = (view: AnalysisView, value: string): ObservableView => {
  const row = view.observables.find((o) => o.observable === value);
  assert.ok(row, value);
  return row;
};

describe('GET /ui/analyses/<id>: marks', { timeout: 60_000 }, () => {
  test('a mark that decided is carried with the engines\' verdict; an earlier analysis gains mark_now, its verdict unchanged', async () => {
    const value = '185.220.101.77';
    const earlier = await analysed(value);
    const before = (await call<AnalysisView>('vera', 'GET', `/ui/analyses/${earlier}`)).json;
    assert.deepEqual([rowOf(before, value).verdict, rowOf(before, value).mark, rowOf(before, value).computed_verdict, rowOf(before, value).mark_now], ['malicious', null, null, undefined]);

    const marked = await call<MarkView>('alice', 'POST', '/api/marks', { value, verdict: 'false_positive', note: 'our scanner' });
    assert.equal(marked.status, 201);
    const mark: MarkView = { verdict: 'false_positive', note: 'our scanner', by: 'alice', at: marked.json.at, expires: null };

    const now = rowOf((await call<AnalysisView>('vera', 'GET', `/ui/analyses/${earlier}`)).json, value);
    assert.equal(now.verdict, 'malicious', 'the earlier analysis is not rewritten');
    assert.equal(now.mark, null);
    assert.deepEqual(now.mark_now, mark);

    const later = await analysed(value);
    const row = rowOf((await call<AnalysisView>('vera', 'GET', `/ui/analyses/${later}`)).json, value);
    assert.equal(row.verdict, 'clean');
    assert.deepEqual(row.mark, mark);
    assert.deepEqual(row.computed_verdict, { verdict: 'malicious', reasons: ['intel: score 95'] });
    assert.equal(row.mark_now, undefined, 'the mark its result carries is not said twice');
    assert.deepEqual(row.reasons, [`marked false positive by alice on ${mark.at.slice(0, 10)}: our scanner`]);

    assert.equal((await call('alice', 'DELETE', `/api/marks/${value}`)).status, 200);
    assert.equal(rowOf((await call<AnalysisView>('vera', 'GET', `/ui/analyses/${earlier}`)).json, value).mark_now, undefined, 'removed, no longer said');
  });
});

describe('the Allowlist page and the Mark action', { skip, timeout: 180_000 }, () => {
  let browser: Browser;
  const consoleErrors: string[] = [];

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  /** A fresh browser signed in as `who` through the sign-in form, at `path`; `ready` resolves once the page has asked who it is. */
  async function signedIn(who: string, path: string): Promise<{ page: Page; ready: Promise<unknown> }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    // A refusal (the forms' 400 and 404) is the browser's line about the answer, not an error of the page.
    page.on('console', (message) => message.type() === 'error' && !/status of 40[0-4]/.test(message.text()) && consoleErrors.push(message.text()));
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${server.url}/signin?next=${encodeURIComponent(path)}`);
    await page.fill('#token', tokens.get(who)!);
    const ready = page.waitForResponse((response) => response.url().endsWith('/ui/me'));
    ready.catch(() => undefined); // not awaited by every test
    await page.click('button[type="submit"]');
    await page.waitForURL(`${server.url}${path}`);
    return { page, ready };
  }

  test('the Allowlist page: linked from the navigation; an analyst adds an entry (a refusal and markup shown as text) and removes it', async () => {
    const { page } = await signedIn('alice', '/history');
    await page.click('nav a[href="/allowlist"]');
    await page.waitForURL(`${server.url}/allowlist`);
    assert.equal(await page.locator('nav a[href="/allowlist"]').getAttribute('aria-current'), 'page');

    const configured = page.locator('tr[data-value="*.vendor-cdn.net"]');
    await configured.waitFor();
    assert.equal(await configured.getAttribute('data-origin'), 'config');
    assert.match(await configured.innerText(), /a vendor we use\s+configuration\s+—\s+never\s+from the configuration/i);
    assert.equal(await configured.locator('button').count(), 0, 'the configuration\'s entries are changed there');
    const expired = page.locator('tr[data-value="198.51.100.50"]');
    assert.equal(await expired.getAttribute('data-active'), 'false');
    assert.match(await expired.locator('.allowlist-expires').innerText(), /^EXPIRED /i);
    assert.match(await page.locator('#allowlist-summary').innerText(), /^2 entries, 1 expired$/);

    await page.fill('#allowlist-value', '*.com');
    await page.fill('#allowlist-reason', 'far too wide');
    await page.click('#allowlist-add');
    await page.locator('#allowlist-problem', { hasText: 'is no domain pattern' }).waitFor();

    const reason = '<img src=x onerror="document.title=\'owned\'"> our scanners';
    await page.fill('#allowlist-value', '45.33.0.0/16');
    await page.fill('#allowlist-reason', reason);
    await page.fill('#allowlist-expires', '30d');
    await page.click('#allowlist-add');
    const added = page.locator('tr[data-value="45.33.0.0/16"]');
    await added.waitFor();
    assert.equal(await page.locator('#allowlist-problem').isHidden(), true);
    assert.equal(await page.inputValue('#allowlist-value'), '', 'the form is emptied');
    assert.equal(await added.locator('.allowlist-reason').textContent(), reason);
    assert.equal(await page.locator('main img').count(), 0, 'no element made of the reason');
    assert.notEqual(await page.title(), 'owned');
    assert.equal(await added.getAttribute('data-origin'), 'runtime');
    assert.match(await added.innerText(), /\balice\b/);
    assert.doesNotMatch(await added.locator('.allowlist-expires').innerText(), /never|expired/i);
    const listed = (await call<AllowEntryView[]>('vera', 'GET', '/api/allowlist')).json;
    assert.ok(listed.some((e) => e.value === '45.33.0.0/16' && e.by === 'alice' && e.reason === reason && e.expires !== null));
    await page.screenshot({ path: join(SCREENSHOTS, 'allowlist.png'), fullPage: true });

    await added.locator('button.allowlist-remove').click();
    await added.waitFor({ state: 'detached' });
    assert.ok(!(await call<AllowEntryView[]>('vera', 'GET', '/api/allowlist')).json.some((e) => e.value === '45.33.0.0/16'));

    // Removed elsewhere meanwhile: the API's answer is said above the list.
    assert.equal((await call('alice', 'POST', '/api/allowlist', { value: 'gone.acme-corp.com', reason: 'briefly' })).status, 201);
    await page.reload();
    const gone = page.locator('tr[data-value="gone.acme-corp.com"]');
    await gone.waitFor();
    assert.equal((await call('alice', 'DELETE', '/api/allowlist/gone.acme-corp.com')).status, 200);
    await gone.locator('button.allowlist-remove').click();
    await page.locator('#allowlist-list-problem', { hasText: 'Could not remove gone.acme-corp.com: gone.acme-corp.com is not on the allowlist' }).waitFor();
    await gone.waitFor({ state: 'detached' });
    await page.context().close();
  });

  test('a viewer reads the allowlist: no form, no Remove', async () => {
    const { page } = await signedIn('vera', '/allowlist');
    await page.locator('tr[data-value="*.vendor-cdn.net"]').waitFor();
    assert.equal(await page.locator('#allowlist-form').count(), 0);
    assert.equal(await page.locator('button.allowlist-remove').count(), 0);
    assert.match(await page.locator('main').innerText(), /Viewers read it; analysts and admins add and remove entries/);
    await page.context().close();
  });

  test('an analyst marks from the results page; a new analysis shows the marks with their author, the false positive struck through; the earlier one says a mark exists since', async () => {
    const first = await analysed(`${BAD} ${GOOD}`);
    const { page } = await signedIn('alice', `/results/${first}`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const badRow = page.locator(`tr[data-observable="${BAD}"]`);
    assert.equal(await badRow.locator('td.verdict-cell').getAttribute('data-verdict'), 'malicious');

    // The table's Mark: the dialog says who marks; a refusal is shown in it.
    await badRow.locator('button.mark-button').click();
    const dialog = page.locator('#mark-dialog');
    await dialog.waitFor();
    assert.equal(await dialog.locator('#mark-title code').textContent(), BAD);
    assert.match(await page.locator('#mark-by').innerText(), /^Marked by alice \(analyst\)$/);
    await page.selectOption('#mark-verdict', 'false_positive');
    await page.fill('#mark-note', HOSTILE_NOTE);
    await page.fill('#mark-expires', 'soon');
    await page.click('#mark-submit');
    await page.locator('#mark-problem', { hasText: 'expiry "soon" is neither a duration' }).waitFor();
    await page.fill('#mark-expires', '90d');
    await page.screenshot({ path: join(SCREENSHOTS, 'mark-dialog.png') });
    await page.click('#mark-submit');
    await page.locator('#mark-done', { hasText: `Marked false positive. Later analyses of ${BAD} will show this mark; this analysis is not rewritten.` }).waitFor();
    await page.click('#mark-close');
    await dialog.waitFor({ state: 'detached' });
    const marks = (await call<(MarkView & { value: string })[]>('vera', 'GET', '/api/marks')).json;
    const badMark = marks.find((m) => m.value === BAD);
    assert.ok(badMark);
    assert.deepEqual([badMark.verdict, badMark.by, badMark.note], ['false_positive', 'alice', HOSTILE_NOTE]);
    const day = badMark.at.slice(0, 10);
    // This page says so at once, the analysis's verdict as it was.
    assert.equal(await badRow.locator('.mark-since').textContent(), `marked false positive by alice on ${day} since this analysis: ${HOSTILE_NOTE}`);
    assert.equal(await badRow.locator('td.verdict-cell').getAttribute('data-verdict'), 'malicious');

    // The cards' Mark.
    await page.click('button.tab[data-view="cards"]');
    const goodCard = page.locator(`article.card[data-observable="${GOOD}"]`);
    await goodCard.locator('button.mark-button').click();
    await page.selectOption('#mark-verdict', 'malicious');
    await page.fill('#mark-note', 'C2 seen by the IR team');
    await page.click('#mark-submit');
    await page.locator('#mark-done', { hasText: 'Marked malicious.' }).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.context().close();

    // A new analysis of the same observables: the marks decide, the engines' verdicts beside them.
    const second = await analysed(`${BAD} ${GOOD}`);
    const later = await signedIn('alice', `/results/${second}`);
    await later.page.locator('#analysis-status[data-complete="true"]').waitFor();
    const bad = later.page.locator(`tr[data-observable="${BAD}"] td.verdict-cell`);
    assert.equal(await bad.getAttribute('data-verdict'), 'clean');
    assert.equal(await bad.locator('.mark').getAttribute('data-mark-by'), 'alice');
    assert.equal(await bad.locator('.mark-line').textContent(), `marked false positive by alice on ${day}: ${HOSTILE_NOTE}`);
    assert.equal(await bad.locator('.computed-verdict').getAttribute('data-computed-verdict'), 'malicious');
    const struck = bad.locator('.computed-verdict s .verdict');
    assert.equal(await struck.getAttribute('data-verdict'), 'malicious');
    assert.match(await struck.evaluate((node) => (globalThis as unknown as { getComputedStyle(e: unknown): { textDecorationLine: string } }).getComputedStyle(node).textDecorationLine), /line-through/);
    assert.equal(await bad.locator('.computed-verdict .reasons').innerText(), 'intel: score 95');
    const good = later.page.locator(`tr[data-observable="${GOOD}"] td.verdict-cell`);
    assert.equal(await good.getAttribute('data-verdict'), 'malicious');
    assert.match(String(await good.locator('.mark-line').textContent()), new RegExp(`^marked malicious by alice on ${day}: C2 seen by the IR team$`));
    assert.equal(await good.locator('.computed-verdict').getAttribute('data-computed-verdict'), 'clean');
    assert.equal(await good.locator('.computed-verdict s').count(), 0, 'only a false positive strikes the engines\' verdict');
    assert.equal(await later.page.locator('.mark-since').count(), 0, 'the marks it carries are not said twice');
    // The hostile note is text: no element made of it, the title untouched.
    assert.equal(await later.page.locator('main img, main b').count(), 0);
    assert.notEqual(await later.page.title(), 'owned');
    await later.page.click('button.tab[data-view="cards"]');
    assert.equal(await later.page.locator(`article.card[data-observable="${BAD}"] .mark-line`).textContent(), `marked false positive by alice on ${day}: ${HOSTILE_NOTE}`);
    await later.page.screenshot({ path: join(SCREENSHOTS, 'results-marks.png'), fullPage: true });
    await later.page.context().close();

    // The earlier analysis, opened afresh: not rewritten, it says a mark exists since.
    const earlier = await signedIn('vera', `/results/${first}`);
    await earlier.page.locator('#analysis-status[data-complete="true"]').waitFor();
    await earlier.ready;
    const since = earlier.page.locator(`tr[data-observable="${BAD}"] td.verdict-cell`);
    assert.equal(await since.getAttribute('data-verdict'), 'malicious');
    assert.equal(await since.locator('.mark').count(), 0);
    assert.equal(await since.locator('.mark-since').textContent(), `marked false positive by alice on ${day} since this analysis: ${HOSTILE_NOTE}`);
    assert.match(String(await earlier.page.locator(`tr[data-observable="${GOOD}"] .mark-since`).textContent()), /^marked malicious by alice on .* since this analysis: C2 seen by the IR team$/);
    // A viewer sees the marks and has no Mark button.
    assert.equal(await earlier.page.locator('button.mark-button').count(), 0);
    await earlier.page.context().close();
  });

  test('no console error', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
