/**
 * Custom engines (setting `custom_engines`, issue 23) against a loopback fake of a team's internal
 * threat-intel API (tests/fakes/internal-intel.ts): the request each definition makes (a key in a
 * header, a JSON body with a Bearer token, a key in the query string, URL encoding), the result
 * its JSON Pointers give, its summary and evidence (every operator), not_found, the failures an
 * upstream may cause (401, 403, 429 with Retry-After, 500, timeout, malformed JSON), the reversed
 * IP, quota, concurrency, ssl_verify and the cache, through the app in this process; then `oas
 * engines`, `oas analyze` with every export, and `oas serve`'s API, as users run them.
 * Loopback only; no timing assertion.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { createApp, type App } from '../src/app.js';
import type { ObservableResult } from '../src/runner/result.js';
import type { AnalyzeOptions, Progress } from '../src/runner/types.js';
import { CSV_COLUMNS } from '../src/export/csv.js';
import { evidenceOf, verdictOf } from '../src/verdict/verdict.js';
import { startFakeDns, type FakeDnsServer } from './fakes/dns.js';
import { reply, sequence, type FakeRequest } from './fakes/http.js';
import { INTEL_KEY, intelDefinitions, startInternalIntel, type InternalIntelFake, type IntelRecord } from './fakes/internal-intel.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { UNKNOWN } from './helpers/observables.js';
import { ZONE } from './helpers/upstreams.js';

/** What the fake knows: public addresses (private and documentation ranges are never sent out). */
const RECORDS: Record<string, IntelRecord> = {
  // A: high score, no notes.
  '185.220.101.7': { score: 91, category: 'Botnet', tags: ['c2', 'scanner'], asn: { number: 64500, org: 'Bad Hosting' } },
  // B: a score on the boundary, notes, no ASN.
  '45.33.32.156': { score: 50, category: 'scanner', tags: ['research'], notes: 'seen SCANNING port 22' },
  // D: low score.
  '9.9.9.10': { score: 10, category: 'dns', tags: [] },
  // Where example.com resolves (the reversed IP).
  '93.184.215.14': { score: 85, category: 'cdn-abuse', tags: ['c2'] },
  '2606:4700:4700::1111': { score: 45, category: 'resolver', tags: [] },
  'evil-login.com': { score: 95, category: 'phishing', tags: ['kit'], notes: 'kit v2' },
  'parked-site.net': { score: 5, category: 'parking', tags: ['Parked'] },
};
const A = '185.220.101.7';
const B = '45.33.32.156';
/** Not in the fake: a 404. */
const C = '8.8.4.4';
const D = '9.9.9.10';

let intel: InternalIntelFake;
let dns: FakeDnsServer;
/** `custom_engines` of the fake (intel, intel_search, intel_domain). */
let defs: Record<string, Record<string, unknown>>;

before(async () => {
  intel = await startInternalIntel({ records: RECORDS });
  dns = await startFakeDns(ZONE);
  defs = intelDefinitions(intel.url) as Record<string, Record<string, unknown>>;
  // Documents whose shape the pointer tests need, and an echo of the request line.
  intel.server.route('GET /v1/doc/*', {
    json: { 'a/b': 1, 'm~n': 2, list: [10, 20], nested: { deep: { x: true } }, zero: 0, no: false, nothing: null, text: 'hello' },
  });
  intel.server.route('GET /v1/echo/*', (req) => ({ json: { path: req.path, query: Object.fromEntries(req.query) } }));
  intel.server.route('POST /v1/form', (req) => ({ json: { type: req.headers['content-type'], form: Object.fromEntries(new URLSearchParams(req.body)) } }));
});
after(async () => {
  await intel?.close();
  await dns?.close();
});

/** Requests the fake received whose path starts with `path`. */
const hits = (path: string): FakeRequest[] => intel.server.requests.filter((r) => r.path.startsWith(path));

// ---------------------------------------------------------------------------------------------
// The app in this process

const apps: App[] = [];
after(async () => {
  for (const app of apps) await app.close();
});

/**
 * A configuration file with these custom engines (and `extra` top-level settings), in a folder of
 * its own with its own data directory.
 */
function writeConfig(custom: Record<string, unknown>, extra: Record<string, unknown> = {}, dataDir?: string): { file: string; dataDir: string } {
  const dir = tempDir('oas-custom-');
  const data = dataDir ?? join(dir, 'data');
  const file = join(dir, 'oas.config.json');
  writeFileSync(file, JSON.stringify({ data_dir: data, dns_servers: [dns.address], custom_engines: custom, ...extra }, null, 2));
  return { file, dataDir: data };
}

/** The app as `oas analyze` builds it, on these custom engines; the key in INTEL_API_KEY unless `env` says otherwise. */
async function appWith(
  custom: Record<string, unknown>,
  options: { extra?: Record<string, unknown>; env?: Record<string, string>; dataDir?: string } = {},
): Promise<App> {
  const { file } = writeConfig(custom, options.extra, options.dataDir);
  const app = await createApp({ file, env: options.env ?? { INTEL_API_KEY: INTEL_KEY } });
  apps.push(app);
  return app;
}

/** Runs the engines named on the observables found in `text`, as an analysis does. */
async function analyze(app: App, text: string, engines: string[], options: AnalyzeOptions = {}): Promise<ObservableResult[]> {
  const prepared = app.analyses.prepare({ text, engines });
  return app.runner.analyze(prepared.observables, prepared.selections, options);
}

/** The one result of an analysis of one observable. */
async function analyzeOne(app: App, text: string, engines: string[], options: AnalyzeOptions = {}): Promise<ObservableResult> {
  const results = await analyze(app, text, engines, options);
  assert.equal(results.length, 1, JSON.stringify(results));
  return results[0]!;
}

/** The engine's summary line of a result, as the CLI block and the CSV show it. */
function summaryOf(app: App, id: string, result: ObservableResult): string {
  return app.catalog.find(id)!.summary(result[id] as never);
}

/** The definition of the intel engine, changed by `patch`. */
function intelWith(patch: Record<string, unknown>): Record<string, unknown> {
  return { ...defs.intel, ...patch };
}

describe('the request a custom engine makes', () => {
  let app: App;
  before(async () => {
    app = await appWith(defs);
  });

  test('GET with the key in a header: the fields its JSON Pointers name, and nothing else', async () => {
    const result = await analyzeOne(app, A, ['intel']);
    assert.deepEqual(result.intel, { score: 91, category: 'Botnet', tags: ['c2', 'scanner'], asn: 64500, notes: null });
    assert.equal(result.errors, undefined);
    const [request] = hits(`/v1/ip/${A}`);
    assert.equal(request!.method, 'GET');
    assert.equal(request!.headers['x-api-key'], INTEL_KEY, 'the secret from INTEL_API_KEY, sent as it is');
    assert.equal(summaryOf(app, 'intel', result), '91/100, Botnet');
    assert.ok(!JSON.stringify(result).includes(INTEL_KEY), 'no key in the result');
  });

  test('an IPv6 address in the path: encoded, it arrives whole', async () => {
    const result = await analyzeOne(app, '2606:4700:4700::1111', ['intel']);
    assert.equal(result.type, 'IPv6');
    assert.deepEqual(result.intel, { score: 45, category: 'resolver', tags: [], asn: null, notes: null });
    assert.equal(hits('/v1/ip/2606:4700:4700::1111').length, 1);
  });

  test('POST with a JSON body template and a Bearer token: {raw}, {type} and literals', async () => {
    const mark = intel.server.requests.length;
    const [domain, hash] = await analyze(app, `evil-login.com ${UNKNOWN.SHA256}`, ['intel_search']);
    assert.deepEqual(domain!.intel_search, { total: 1, category: 'phishing', score: 95 });
    assert.deepEqual(hash!.intel_search, { total: 0, category: null, score: null }, 'a pointer into an empty list is null');
    const requests = intel.server.requests.slice(mark);
    assert.equal(requests.length, 2);
    for (const request of requests) {
      assert.equal(request.method, 'POST');
      assert.match(String(request.headers['content-type']), /^application\/json/);
      assert.equal(request.headers.authorization, `Bearer ${INTEL_KEY}`);
    }
    assert.deepEqual(requests.map((r) => JSON.parse(r.body) as unknown).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [
      { indicator: UNKNOWN.SHA256, kind: 'SHA256', options: { limit: 1 } },
      { indicator: 'evil-login.com', kind: 'FQDN', options: { limit: 1 } },
    ]);
    assert.equal(summaryOf(app, 'intel_search', domain!), '1 hit(s): phishing');
    assert.equal(summaryOf(app, 'intel_search', hash!), '0 hit(s): -', 'an absent field reads "-" in a template');
  });

  test('the key in the query string, URL-encoded with the value (the key has "+", "/", "=", " " and "&")', async () => {
    const result = await analyzeOne(app, 'evil-login.com', ['intel_domain']);
    assert.deepEqual(result.intel_domain, { verdict: 'phishing', risk: 95, tags: ['kit'], notes: 'kit v2' });
    const [request] = hits('/v1/domain').filter((r) => r.query.get('name') === 'evil-login.com');
    assert.equal(request!.query.get('apikey'), INTEL_KEY, 'the fake accepted the key: it arrived whole');
    assert.equal(summaryOf(app, 'intel_domain', result), 'phishing (risk 95)');
  });

  test('{value} is URL-encoded in the path and the query, {raw} is not, {type} is the type', async () => {
    const echo = await appWith({
      enc: { types: ['URL'], request: { url: `${intel.url}/v1/echo/{value}`, query: { t: '{type}', v: '{value}' } }, fields: { path: '/path', query: '/query' } },
      inline: { types: ['URL'], request: { url: `${intel.url}/v1/echo/x?v={value}&t={type}` }, fields: { path: '/path', query: '/query' } },
      raw: { types: ['URL'], request: { url: `${intel.url}/v1/echo/{raw}` }, fields: { path: '/path', query: '/query' } },
    });
    const url = 'https://evil-login.com/a?x=1&y=2';
    const result = await analyzeOne(echo, url, ['enc', 'inline', 'raw']);
    assert.equal(result.observable, url);
    assert.deepEqual(result.enc, { path: `/v1/echo/${url}`, query: { t: 'URL', v: url } }, 'the whole URL is one path segment; the query is encoded too');
    assert.deepEqual(result.inline, { path: '/v1/echo/x', query: { v: url, t: 'URL' } }, 'a placeholder in the URL\'s own query');
    assert.deepEqual(result.raw, { path: '/v1/echo/https://evil-login.com/a', query: { x: '1', y: '2' } }, 'raw: the URL\'s own query becomes the request\'s');
  });

  test('a form body when its Content-Type says application/x-www-form-urlencoded', async () => {
    const form = await appWith({
      form: {
        types: ['FQDN'],
        request: { method: 'POST', url: `${intel.url}/v1/form`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: { q: '{raw}', kind: '{type}', limit: 5, exact: true } },
        fields: { type: '/type', form: '/form' },
      },
    });
    const result = await analyzeOne(form, 'evil-login.com', ['form']);
    assert.deepEqual(result.form, { type: 'application/x-www-form-urlencoded', form: { q: 'evil-login.com', kind: 'FQDN', limit: '5', exact: 'true' } });
  });

  test('a custom engine takes only its types: an address engine is not asked about a hash', async () => {
    const before = intel.server.requests.length;
    const result = await analyzeOne(app, UNKNOWN.MD5, ['intel', 'intel_domain']);
    assert.equal(result.intel, null);
    assert.equal(result.intel_domain, null);
    assert.equal(result.errors, undefined);
    assert.equal(intel.server.requests.length, before, 'no call');
  });
});

describe('the answer: not_found, JSON Pointers, summary', () => {
  test('a 404 (not_found by default) is "no data": null, no error', async () => {
    const app = await appWith(defs);
    const result = await analyzeOne(app, C, ['intel']);
    assert.equal(result.intel, null);
    assert.equal(result.errors, undefined);
    assert.equal(hits(`/v1/ip/${C}`).length, 1, 'it was asked');
  });

  test('not_found replaces the default: its statuses are "no data", a 404 then is an error', async () => {
    intel.server.route('GET /v1/ip/1.0.0.41', reply.status(410, { error: 'gone' }));
    const app = await appWith({ intel: intelWith({ not_found: [410, 204] }) }, { extra: { engines: { intel: { retries: 0 } } } });
    const [gone, missing] = await analyze(app, `1.0.0.41 ${C}`, ['intel']);
    assert.equal(gone!.intel, null);
    assert.equal(gone!.errors, undefined);
    assert.equal(missing!.intel, null);
    assert.match(missing!.errors!.intel!, /^HTTP 404/);
  });

  test('RFC 6901 pointers: escapes, indexes, the whole answer, the fragment form; absent is null, 0 and false stay', async () => {
    const app = await appWith({
      doc: {
        types: ['IPv4'],
        request: { url: `${intel.url}/v1/doc/{value}` },
        summary: '{{a/b}} = {slash}, {{list}}[1] = {second}',
        fields: {
          slash: '/a~1b', tilde: '/m~0n', second: '/list/1', beyond: '/list/5', leading_zero: '/list/01', dash: '/list/-',
          fragment: '#/nested/deep/x', encoded: '#/a~1b', zero: '/zero', no: '/no', nothing: '/nothing',
          missing: '/nested/none/x', into_scalar: '/text/0', whole: '',
        },
      },
    });
    const result = await analyzeOne(app, A, ['doc']);
    const document = { 'a/b': 1, 'm~n': 2, list: [10, 20], nested: { deep: { x: true } }, zero: 0, no: false, nothing: null, text: 'hello' };
    assert.deepEqual(result.doc, {
      slash: 1, tilde: 2, second: 20, beyond: null, leading_zero: null, dash: null,
      fragment: true, encoded: 1, zero: 0, no: false, nothing: null,
      missing: null, into_scalar: null, whole: document,
    });
    assert.deepEqual(Object.keys(result.doc as object), ['slash', 'tilde', 'second', 'beyond', 'leading_zero', 'dash', 'fragment', 'encoded', 'zero', 'no', 'nothing', 'missing', 'into_scalar', 'whole'], 'exactly the fields, in their order');
  });

  test('without a summary template: each field that has a value, "name: value"', async () => {
    const app = await appWith({ plain: { types: ['IPv4'], request: { url: `${intel.url}/v1/ip/{value}`, headers: { 'X-Api-Key': '{secret.K}' } }, secrets: { K: 'INTEL_API_KEY' }, fields: { score: '/data/score', tags: '/data/tags', notes: '/data/notes', asn: '/data/asn' } } });
    const [a, d] = await analyze(app, `${A} ${D}`, ['plain']);
    assert.equal(summaryOf(app, 'plain', a!), 'score: 91; tags: c2, scanner; asn: {"number":64500,"org":"Bad Hosting"}');
    assert.equal(summaryOf(app, 'plain', d!), 'score: 10; tags: -', 'an empty list reads "-", absent fields are left out');
    intel.server.route('GET /v1/ip/1.0.0.60', reply.json({ data: {} }));
    const empty = await analyzeOne(app, '1.0.0.60', ['plain']);
    assert.deepEqual(empty.plain, { score: null, tags: null, notes: null, asn: null });
    assert.equal(summaryOf(app, 'plain', empty), 'no field in the answer');
  });
});

describe('evidence: ordered rules, the first match is the engine\'s evidence and joins the verdict', () => {
  /** One engine per operator, each with one rule, over the same GET route. */
  const RULES: Record<string, { field: string; op: string; value?: unknown; reason?: string }> = {
    op_eq: { field: 'category', op: '==', value: 'botnet', reason: 'category {category}' },
    op_eq_text_number: { field: 'score', op: '==', value: '91' },
    op_ne: { field: 'category', op: '!=', value: 'botnet', reason: 'category {category}' },
    op_gt: { field: 'score', op: '>', value: 50 },
    op_ge: { field: 'score', op: '>=', value: 50 },
    op_lt: { field: 'score', op: '<', value: 50 },
    op_le: { field: 'score', op: '<=', value: 50 },
    op_contains_list: { field: 'tags', op: 'contains', value: 'C2', reason: 'tagged {tags}' },
    op_contains_text: { field: 'notes', op: 'contains', value: 'scanning', reason: 'notes: {notes}' },
    op_exists: { field: 'notes', op: 'exists' },
    op_exists_false: { field: 'notes', op: 'exists', value: false, reason: 'no notes (score {score})' },
  };
  /**
   * Which observables each rule matches, and its reason there: A (91, Botnet, [c2, scanner], no
   * notes), B (50, scanner, notes), C (not found: every field null), D (10, dns, no tags, no notes).
   */
  const EXPECTED: Record<string, Partial<Record<'A' | 'B' | 'C' | 'D', string>>> = {
    op_eq: { A: 'category Botnet' }, // case-insensitive text
    op_eq_text_number: { A: 'score == "91"' }, // a number equals its text; the default reason
    op_ne: { B: 'category scanner', D: 'category dns' }, // a field the answer lacks (C) matches no "!="
    op_gt: { A: 'score > 50' }, // 50 is not above 50
    op_ge: { A: 'score >= 50', B: 'score >= 50' },
    op_lt: { D: 'score < 50' }, // null is no number
    op_le: { B: 'score <= 50', D: 'score <= 50' },
    op_contains_list: { A: 'tagged c2, scanner' }, // an item of a list, case-insensitively
    op_contains_text: { B: 'notes: seen SCANNING port 22' }, // a part of a text, case-insensitively
    op_exists: { B: 'notes exists' },
    op_exists_false: { A: 'no notes (score 91)', C: 'no notes (score -)', D: 'no notes (score 10)' }, // a not-found answer has no field
  };

  test('every operator: ==, !=, >, >=, <, <=, contains (list and text), exists (true and false, on a not-found answer too)', async () => {
    const custom = Object.fromEntries(Object.entries(RULES).map(([id, rule]) => [id, {
      types: ['IPv4'],
      request: { url: `${intel.url}/v1/ip/{value}`, headers: { 'X-Api-Key': '{secret.KEY}' } },
      secrets: { KEY: 'INTEL_API_KEY' },
      fields: { score: '/data/score', category: '/data/category', tags: '/data/tags', notes: '/data/notes' },
      evidence: [{ ...rule, verdict: 'suspicious' }],
    }]));
    const app = await appWith(custom);
    const results = await analyze(app, `${A} ${B} ${C} ${D}`, Object.keys(RULES));
    const byName = { A: results[0]!, B: results[1]!, C: results[2]!, D: results[3]! };
    assert.deepEqual(results.map((r) => r.observable), [A, B, C, D]);
    assert.equal(byName.C.op_eq, null, 'C is not found');
    for (const [id, expected] of Object.entries(EXPECTED)) {
      for (const name of ['A', 'B', 'C', 'D'] as const) {
        const result = byName[name];
        assert.equal(result.errors, undefined, JSON.stringify(result.errors));
        const evidence = evidenceOf(result, id, app.catalog);
        const reason = expected[name];
        if (reason === undefined) assert.equal(evidence, undefined, `${id} does not match ${name}`);
        else assert.deepEqual(evidence, { level: 'suspicious', reason }, `${id} matches ${name}`);
      }
    }
  });

  test('the first matching rule wins; its verdict and reason join the observable\'s verdict', async () => {
    // intel: >= 80 malicious, >= 40 suspicious, exists clean.
    const app = await appWith(defs);
    const [a, b, c, d] = await analyze(app, `${A} ${B} ${C} ${D}`, ['intel']);
    assert.deepEqual(verdictOf(a!, app.catalog), { verdict: 'malicious', reasons: ['intel: score 91/100 (Botnet)'] });
    assert.deepEqual(verdictOf(b!, app.catalog), { verdict: 'suspicious', reasons: ['intel: score 50/100'] });
    assert.deepEqual(verdictOf(c!, app.catalog), { verdict: 'unknown', reasons: [] }, 'no rule matches a not-found answer here');
    assert.deepEqual(verdictOf(d!, app.catalog), { verdict: 'clean', reasons: ['intel: known, score 10/100'] });
  });

  test('beside other engines: the most severe evidence gives the verdict, reasons most severe first', async () => {
    const app = await appWith(defs);
    const [evil, parked] = await analyze(app, 'evil-login.com parked-site.net', ['intel_search', 'intel_domain']);
    assert.deepEqual(verdictOf(evil!, app.catalog), {
      verdict: 'malicious',
      reasons: ['intel_domain: known phishing domain', 'intel_search: listed as phishing'],
    });
    assert.deepEqual(verdictOf(parked!, app.catalog), {
      verdict: 'suspicious',
      reasons: ['intel_search: listed as parking', 'intel_domain: parked'],
    });
  });
});

describe('upstream failures are that engine\'s error, never the analysis\'s', () => {
  test('a missing secret: "not configured: <variable>", without a call', async () => {
    const app = await appWith(defs, { env: {} });
    const before = intel.server.requests.length;
    const result = await analyzeOne(app, A, ['intel']);
    assert.equal(result.intel, null);
    assert.deepEqual(result.errors, { intel: 'not configured: INTEL_API_KEY' });
    assert.equal(intel.server.requests.length, before, 'nothing was sent');
  });

  test('401: one line naming the secret\'s variable, without the key; the other engines still answer', async () => {
    const wrong = 'wrong+key/with=chars';
    const app = await appWith({ ...defs, ok: { types: ['IPv4'], request: { url: `${intel.url}/v1/doc/{value}` }, fields: { zero: '/zero' } } }, { env: { INTEL_API_KEY: wrong } });
    const [ip, domain] = await analyze(app, `${A} evil-login.com`, ['intel', 'intel_domain', 'intel_search', 'ok']);
    assert.deepEqual(ip!.errors, { intel: 'Internal intel: authentication failed (HTTP 401) (key refused: check INTEL_API_KEY)' });
    assert.deepEqual(domain!.errors, {
      intel_domain: 'Internal intel domains: authentication failed (HTTP 401) (key refused: check INTEL_API_KEY)',
      intel_search: 'Internal intel search: authentication failed (HTTP 401) (key refused: check INTEL_API_KEY)',
    });
    assert.deepEqual(ip!.ok, { zero: 0 }, 'a keyless engine beside it is unaffected');
    const text = JSON.stringify([ip, domain]);
    for (const form of [wrong, encodeURIComponent(wrong)]) assert.ok(!text.includes(form), `no key (${form}) in the results`);
    assert.deepEqual(verdictOf(ip!, app.catalog), { verdict: 'unknown', reasons: [] }, 'an error never counts as evidence');
  });

  test('403: the same authentication error', async () => {
    intel.server.route('GET /v1/ip/1.0.0.43', reply.status(403, { error: 'forbidden' }));
    const app = await appWith(defs, { extra: { engines: { intel: { retries: 0 } } } });
    const result = await analyzeOne(app, '1.0.0.43', ['intel']);
    assert.deepEqual(result.errors, { intel: 'Internal intel: authentication failed (HTTP 403) (key refused: check INTEL_API_KEY)' });
  });

  test('429: the call waits as Retry-After asks, then the answer is used', async () => {
    intel.server.route('GET /v1/ip/1.0.0.29', sequence(reply.tooMany(1), reply.json({ data: { score: 77, category: 'spam', tags: [] } })));
    const app = await appWith(defs);
    const waits: Progress[] = [];
    const result = await analyzeOne(app, '1.0.0.29', ['intel'], { onProgress: (p) => p.wait && waits.push(p) });
    assert.equal(result.errors, undefined);
    assert.deepEqual(result.intel, { score: 77, category: 'spam', tags: [], asn: null, notes: null });
    assert.equal(hits('/v1/ip/1.0.0.29').length, 2, 'asked again after the 429');
    const wait = waits.find((p) => p.wait!.status === 429);
    assert.ok(wait, `a wait for the 429 was told: ${JSON.stringify(waits)}`);
    assert.equal(wait.wait!.kind, 'retry');
    assert.equal(wait.wait!.ms, 1000, 'Retry-After: 1');
    assert.match(wait.waiting!, /^intel: HTTP 429/);
  });

  test('500, malformed JSON and a timeout: each is that observable\'s error; the others are answered', async () => {
    intel.server.route('GET /v1/ip/1.0.0.50', reply.status(500, { error: 'boom' }));
    intel.server.route('GET /v1/ip/1.0.0.51', reply.malformed());
    intel.server.route('GET /v1/ip/1.0.0.52', reply.hang());
    const app = await appWith({ ...defs, intel: intelWith({ timeout_ms: 300 }) }, { extra: { engines: { intel: { retries: 0 } } } });
    const results = await analyze(app, `1.0.0.50 1.0.0.51 1.0.0.52 ${A} evil-login.com`, ['intel', 'intel_domain']);
    const by = Object.fromEntries(results.map((r) => [r.observable, r]));
    assert.match(by['1.0.0.50']!.errors!.intel!, /^HTTP 500/);
    assert.equal(by['1.0.0.51']!.errors!.intel, 'upstream answered with malformed JSON');
    assert.match(by['1.0.0.52']!.errors!.intel!, /^timeout after 300 ms waiting for 127\.0\.0\.1:\d+ \(limit: custom_engines\.intel\.timeout_ms or engine_timeout_ms\)$/);
    for (const ip of ['1.0.0.50', '1.0.0.51', '1.0.0.52']) {
      assert.equal(by[ip]!.intel, null);
      assert.ok(!by[ip]!.errors!.intel!.includes('\n'), 'one line');
      assert.equal(verdictOf(by[ip]!, app.catalog).verdict, 'unknown');
    }
    assert.equal(by[A]!.errors, undefined);
    assert.equal((by[A]!.intel as { score: number }).score, 91);
    assert.equal((by['evil-login.com']!.intel_domain as { verdict: string }).verdict, 'phishing');
    assert.equal(hits('/v1/ip/1.0.0.50').length, 1, 'retries: 0 from engines.intel');
  });
});

describe('the runner\'s machinery: reversed IP, quota, concurrency, cache, ssl_verify', () => {
  test('reversed_ip: a domain\'s engine runs on the address reverse_dns found, and judges the domain by it', async () => {
    const app = await appWith(defs);
    const result = await analyzeOne(app, 'example.com', ['reverse_dns', 'intel']);
    assert.equal(result.reversed_success, true);
    assert.equal(result.reversed_ip, '93.184.215.14');
    assert.deepEqual(result.intel, { score: 85, category: 'cdn-abuse', tags: ['c2'], asn: null, notes: null });
    assert.equal(hits('/v1/ip/93.184.215.14').length, 1);
    assert.deepEqual(verdictOf(result, app.catalog), { verdict: 'malicious', reasons: ['intel: score 85/100 (cdn-abuse)'] });
  });

  test('quota {calls, per_seconds}: the calls over it wait their turn, none fails', async () => {
    const app = await appWith({ intel: intelWith({ quota: { calls: 2, per_seconds: 0.4 } }) });
    const ips = ['1.0.1.1', '1.0.1.2', '1.0.1.3', '1.0.1.4', '1.0.1.5'];
    const waits: Progress[] = [];
    const results = await analyze(app, ips.join(' '), ['intel'], { onProgress: (p) => p.wait && waits.push(p) });
    assert.deepEqual(results.map((r) => [r.observable, r.intel, r.errors]), ips.map((ip) => [ip, null, undefined]), 'each asked (404: no data), none failed');
    assert.equal(ips.reduce((n, ip) => n + hits(`/v1/ip/${ip}`).length, 0), 5);
    const quota = waits.find((p) => p.wait!.kind === 'quota');
    assert.ok(quota, 'a quota wait was told');
    assert.equal(quota.wait!.limit, 2);
    assert.equal(quota.wait!.windowMs, 400);
    assert.match(quota.waiting!, /^intel: quota of 2 per 400 ms reached, waiting \d+ s$/);
  });

  test('concurrency: at most that many calls of the engine at once', async () => {
    let running = 0;
    let most = 0;
    intel.server.route('GET /v1/slow/*', async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
      return { json: { ok: true } };
    });
    const app = await appWith({ one: { types: ['IPv4'], concurrency: 1, request: { url: `${intel.url}/v1/slow/{value}` }, fields: { ok: '/ok' } } });
    const results = await analyze(app, '1.0.2.1 1.0.2.2 1.0.2.3 1.0.2.4', ['one']);
    assert.ok(results.every((r) => (r.one as { ok: boolean }).ok), JSON.stringify(results));
    assert.equal(most, 1);
  });

  test('answers are cached per observable; --ignore-cache asks again; a changed definition does not reuse them', async () => {
    const dataDir = join(tempDir('oas-custom-data-'), 'data');
    const first = await appWith(defs, { dataDir });
    const ip = '1.0.3.1';
    intel.server.route(`GET /v1/ip/${ip}`, reply.json({ data: { score: 42, category: 'proxy', tags: ['vpn'] } }));
    const one = await analyzeOne(first, ip, ['intel']);
    const two = await analyzeOne(first, ip, ['intel']);
    assert.deepEqual(two.intel, one.intel);
    assert.equal(hits(`/v1/ip/${ip}`).length, 1, 'the second analysis was answered from the cache');
    await analyzeOne(first, ip, ['intel'], { ignoreCache: true });
    assert.equal(hits(`/v1/ip/${ip}`).length, 2);

    await first.runner.flush(); // its answers are in the SQLite file before another app reads it
    // The same data directory, a definition with one more field: asked again, the field is there.
    const fields = { ...(defs.intel!.fields as Record<string, string>), first_tag: '/data/tags/0' };
    const changed = await appWith({ intel: intelWith({ fields }) }, { dataDir });
    const three = await analyzeOne(changed, ip, ['intel']);
    assert.equal(hits(`/v1/ip/${ip}`).length, 3);
    assert.equal((three.intel as { first_tag: string }).first_tag, 'vpn');
    // And the unchanged definition still finds its own answer.
    const again = await appWith(defs, { dataDir });
    await analyzeOne(again, ip, ['intel']);
    assert.equal(hits(`/v1/ip/${ip}`).length, 3);
  });

  test('ssl_verify: false takes a self-signed certificate; the default refuses it', async (t) => {
    const dir = tempDir('oas-custom-tls-');
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { encoding: 'utf8' });
    if (made.status !== 0) {
      t.skip(`openssl cannot make a certificate here: ${made.error?.message ?? made.stderr}`);
      return;
    }
    const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ score: 12 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/ip/{value}`;
      const definition = { types: ['IPv4'], request: { url }, fields: { score: '/score' } };
      const app = await appWith({ lax: { ...definition, ssl_verify: false }, strict: definition }, { extra: { engines: { strict: { retries: 0 } } } });
      const result = await analyzeOne(app, A, ['lax', 'strict']);
      assert.deepEqual(result.lax, { score: 12 });
      assert.equal(result.strict, null);
      assert.match(result.errors!.strict!, /^TLS certificate of 127\.0\.0\.1(:\d+)? not trusted \(/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// As users run it

describe('through oas: engines, analyze and its exports, serve', () => {
  const cwd = tempDir('oas-custom-cli-');
  const env = { INTEL_API_KEY: INTEL_KEY };
  let config: { file: string; dataDir: string };
  const oas = (args: string[], options: { env?: Record<string, string> } = {}): Promise<Run> => runOas(cwd, [...args, '--config', config.file], options);
  const TEXT = `${A} ${B} evil-login.com`;
  const ENGINES = 'intel,intel_domain,intel_search';

  before(() => {
    config = writeConfig(defs);
  });

  test('oas engines lists the custom engines, marked custom, never default, configured by their variable', async () => {
    const [without, withKey, json, older] = await Promise.all([oas(['engines']), oas(['engines'], { env }), oas(['engines', '--json'], { env }), oas(['engines', '--catalog', 'older'], { env })]);
    for (const run of [without, withKey, json, older]) {
      assert.equal(run.code, 0, run.stderr);
      noStack(run.stderr);
      assert.ok(!run.stdout.includes(INTEL_KEY), 'never the key');
    }
    assert.match(without.stdout, /^intel ~ +IP \(\+ reversed IP\) +no: INTEL_API_KEY$/m);
    assert.match(without.stdout, /^intel_domain ~ +domain +no: INTEL_API_KEY$/m);
    assert.match(withKey.stdout, /^intel_search ~ +domain, URL, hash +yes$/m);
    assert.match(withKey.stdout, /~ custom \(setting custom_engines\)/);
    assert.match(older.stdout, /^intel ~ +IP \(\+ reversed IP\) +yes$/m, 'every catalog variant offers them');
    const listed = JSON.parse(json.stdout) as { id: string; catalog: string; default: boolean; custom?: boolean; configured: boolean; label: string; types: string[]; reversed_ip: boolean; credentials: { label: string }[] }[];
    const custom = listed.filter((e) => e.custom);
    assert.deepEqual(custom.map((e) => e.id), ['intel', 'intel_domain', 'intel_search']);
    for (const engine of custom) {
      assert.equal(engine.catalog, 'custom');
      assert.equal(engine.default, false);
      assert.equal(engine.configured, true);
      assert.deepEqual(engine.credentials.map((c) => c.label), ['INTEL_API_KEY']);
    }
    assert.deepEqual(custom.map((e) => [e.label, e.types, e.reversed_ip]), [
      ['Internal intel', ['IPv4', 'IPv6'], true],
      ['Internal intel domains', ['FQDN'], false],
      ['Internal intel search', ['FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'], false],
    ]);
  });

  test('oas analyze: a block per observable with the verdict, its reasons and the summaries', async () => {
    const run = await oas(['analyze', TEXT, '--engines', ENGINES], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const [marking, ...blocks] = run.stdout.split('\n\n');
    assert.equal(marking, 'TLP:AMBER · PAP:GREEN');
    assert.match(blocks[0]!, /^malicious +185\.220\.101\.7 +IPv4\n {2}- intel: score 91\/100 \(Botnet\)\n {2}intel +91\/100, Botnet$/);
    assert.match(blocks[1]!, /^suspicious +45\.33\.32\.156 +IPv4\n {2}- intel: score 50\/100\n {2}intel +50\/100, scanner$/);
    assert.match(blocks[2]!, /^malicious +evil-login\.com +FQDN\n {2}- intel_domain: known phishing domain\n {2}- intel_search: listed as phishing\n/);
    assert.match(blocks[2]!, /^ {2}intel_domain +phishing \(risk 95\)$/m);
    assert.match(blocks[2]!, /^ {2}intel_search +1 hit\(s\): phishing$/m);
    assert.match(run.stdout, /Verdicts: 2 malicious, 1 suspicious, 0 clean, 0 unknown/);
    assert.match(run.stdout, /3 observable\(s\), 3 engine\(s\)/);
    assert.ok(!run.stdout.includes(INTEL_KEY));
  });

  test('oas analyze without --engines: a custom engine is never a default', async () => {
    const run = await oas(['analyze', A, '--json'], { env });
    assert.equal(run.code, 0, run.stderr);
    const [result] = JSON.parse(run.stdout) as Record<string, unknown>[];
    for (const id of ['intel', 'intel_domain', 'intel_search']) assert.ok(!(id in result!), `${id} did not run`);
  });

  test('a misspelt custom engine is refused with the usual suggestion; a wrong key is that engine\'s error', async () => {
    const misspelt = await oas(['analyze', A, '--engines', 'intle'], { env });
    assert.equal(misspelt.code, 2);
    assert.match(misspelt.stderr, /unknown engine: intle; did you mean intel\?/);
    noStack(misspelt.stderr);

    const wrong = await runOas(cwd, ['analyze', D, '--engines', 'intel', '--ignore-cache', '--config', writeConfig(defs).file], { env: { INTEL_API_KEY: 'not+the/key' } });
    assert.equal(wrong.code, 1, 'every lookup failed');
    assert.match(wrong.stdout, /^ {2}intel +error: Internal intel: authentication failed \(HTTP 401\) \(key refused: check INTEL_API_KEY\)$/m);
    for (const text of [wrong.stdout, wrong.stderr]) assert.ok(!text.includes('not+the/key') && !text.includes('not%2Bthe%2Fkey'), text);
  });

  test('--json and -f jsonl: the results with the fields, the verdict and the reasons', async () => {
    const [json, jsonl] = await Promise.all([
      oas(['analyze', TEXT, '--engines', ENGINES, '--json'], { env }),
      oas(['analyze', TEXT, '--engines', ENGINES, '-f', 'jsonl'], { env }),
    ]);
    for (const run of [json, jsonl]) assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(json.stdout) as Record<string, unknown>[];
    // Seen before (issue 38): the tests before analysed it (the last of them without the custom
    // engines: unknown). The two runs here go side by side: whether one counts the other (judged
    // malicious) depends on which looked first, so seen is set apart from the comparison of the two.
    const seen = results[0]!.seen as { count: number; last_verdict: string };
    assert.ok(seen.count >= 1 && ['malicious', 'unknown'].includes(seen.last_verdict), JSON.stringify(seen));
    assert.deepEqual(results[0], {
      observable: A, type: 'IPv4', reversed_success: false,
      intel: { score: 91, category: 'Botnet', tags: ['c2', 'scanner'], asn: 64500, notes: null },
      intel_domain: null, intel_search: null, seen,
      verdict: 'malicious', reasons: ['intel: score 91/100 (Botnet)'], tlp: 'AMBER', pap: 'GREEN',
    });
    assert.deepEqual(results.map((r) => [r.observable, r.verdict]), [[A, 'malicious'], [B, 'suspicious'], ['evil-login.com', 'malicious']]);
    assert.deepEqual(results[2]!.intel_search, { total: 1, category: 'phishing', score: 95 });
    const lines = jsonl.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const byObservable = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.observable).localeCompare(String(b.observable));
    const unseen = (list: Record<string, unknown>[]) => list.map(({ seen: _seen, ...rest }) => rest);
    assert.deepEqual(unseen(lines.sort(byObservable)), unseen([...results].sort(byObservable)), 'jsonl: the same elements, one a line as each observable is done');
  });

  test('-f csv, stix, misp and xlsx (-o): the custom engines\' rows, summaries, verdicts and reasons', async () => {
    const xlsx = join(tempDir('oas-custom-xlsx-'), 'out.xlsx');
    const [csv, stix, misp, book] = await Promise.all([
      oas(['analyze', TEXT, '--engines', ENGINES, '-f', 'csv'], { env }),
      oas(['analyze', TEXT, '--engines', ENGINES, '-f', 'stix'], { env }),
      oas(['analyze', TEXT, '--engines', ENGINES, '-f', 'misp'], { env }),
      oas(['analyze', TEXT, '--engines', ENGINES, '-f', 'xlsx', '-o', xlsx], { env }),
    ]);
    for (const run of [csv, stix, misp, book]) {
      assert.equal(run.code, 0, run.stderr);
      assert.ok(!run.stdout.includes(INTEL_KEY));
    }

    const lines = csv.stdout.trimEnd().split('\r\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.ok(lines.includes('185.220.101.7,IPv4,,intel,ok,"91/100, Botnet","{""score"":91,""category"":""Botnet"",""tags"":[""c2"",""scanner""],""asn"":64500,""notes"":null}",malicious,intel: score 91/100 (Botnet),TLP:AMBER,'), csv.stdout);
    assert.ok(lines.includes('evil-login.com,FQDN,,intel_domain,ok,phishing (risk 95),"{""verdict"":""phishing"",""risk"":95,""tags"":[""kit""],""notes"":""kit v2""}",malicious,intel_domain: known phishing domain; intel_search: listed as phishing,TLP:AMBER,'), csv.stdout);
    assert.ok(lines.some((l) => l.startsWith('evil-login.com,FQDN,,intel_search,ok,1 hit(s): phishing,')), csv.stdout);

    const bundle = JSON.parse(stix.stdout) as { type: string; objects: { type: string; name?: string; description?: string; content?: string; value?: string }[] };
    assert.equal(bundle.type, 'bundle');
    const indicators = bundle.objects.filter((o) => o.type === 'indicator');
    assert.deepEqual(indicators.map((o) => o.name), ['malicious: 185.220.101.7', 'suspicious: 45.33.32.156', 'malicious: evil-login.com']);
    assert.equal(indicators[0]!.description, 'oas verdict: malicious. intel: score 91/100 (Botnet)');
    assert.ok(bundle.objects.some((o) => o.type === 'note' && o.content?.includes('- intel_domain: phishing (risk 95)')), 'a note holds the custom engines\' summaries');

    const event = (JSON.parse(misp.stdout) as { Event: { Attribute: { type: string; value: string; comment: string }[] } }).Event;
    assert.deepEqual(event.Attribute.map((a) => [a.type, a.value, a.comment]), [
      ['ip-dst', A, 'oas verdict: malicious. intel: score 91/100 (Botnet)'],
      ['ip-dst', B, 'oas verdict: suspicious. intel: score 50/100'],
      ['domain', 'evil-login.com', 'oas verdict: malicious. intel_domain: known phishing domain; intel_search: listed as phishing'],
    ]);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(readFileSync(xlsx) as unknown as ExcelJS.Buffer);
    assert.deepEqual(workbook.worksheets.map((s) => s.name), ['Observables', 'intel', 'intel_domain', 'intel_search']);
    const cells = (name: string) => {
      const rows: string[][] = [];
      workbook.getWorksheet(name)!.eachRow((row) => rows.push((row.values as unknown[]).slice(1).map((v) => String(v ?? ''))));
      return rows;
    };
    const intelSheet = cells('intel');
    assert.ok(intelSheet.some((row) => row.includes(A) && row.includes('91/100, Botnet')), JSON.stringify(intelSheet));
    const observables = cells('Observables');
    assert.ok(observables.some((row) => row.includes('evil-login.com') && row.includes('malicious')), JSON.stringify(observables));
  });

  test('answers are cached per observable across runs of oas analyze', async () => {
    const own = writeConfig(defs);
    const ip = '1.0.4.1';
    intel.server.route(`GET /v1/ip/${ip}`, reply.json({ data: { score: 60, category: 'proxy', tags: [] } }));
    for (let i = 0; i < 2; i++) {
      const run = await runOas(cwd, ['analyze', ip, '--engines', 'intel', '--json', '--config', own.file], { env });
      assert.equal(run.code, 0, run.stderr);
      assert.equal((JSON.parse(run.stdout) as { verdict: string }[])[0]!.verdict, 'suspicious');
    }
    assert.equal(hits(`/v1/ip/${ip}`).length, 1);
  });

  describe('oas serve', () => {
    let served: ServeProcess;
    before(async () => {
      served = await spawnServe(writeConfig(defs).file, { cwd, env });
    });
    after(() => served?.stop());

    test('the API accepts custom engines like any other; results, exports and the engine list show them', async () => {
      const id = await startAnalysis(served.url, TEXT, ['intel', 'intel_domain', 'intel_search']);
      const results = await completedResults(served.url, id);
      assert.deepEqual(results.map((r) => r.observable), [A, B, 'evil-login.com']);
      assert.deepEqual(results[0]!.intel, { score: 91, category: 'Botnet', tags: ['c2', 'scanner'], asn: 64500, notes: null });
      assert.deepEqual(results[2]!.intel_domain, { verdict: 'phishing', risk: 95, tags: ['kit'], notes: 'kit v2' });
      assert.ok(!JSON.stringify(results).includes(INTEL_KEY));

      const exported = (await (await fetch(`${served.url}/export/${id}?format=json`)).json()) as { observable: string; verdict: string; reasons: string[] }[];
      assert.deepEqual(exported.map((r) => [r.observable, r.verdict, r.reasons]), [
        [A, 'malicious', ['intel: score 91/100 (Botnet)']],
        [B, 'suspicious', ['intel: score 50/100']],
        ['evil-login.com', 'malicious', ['intel_domain: known phishing domain', 'intel_search: listed as phishing']],
      ]);
      const csv = await (await fetch(`${served.url}/export/${id}?format=csv`)).text();
      assert.ok(csv.includes('45.33.32.156,IPv4,,intel,ok,"50/100, scanner",'), csv);

      const engines = (await (await fetch(`${served.url}/ui/engines`)).json()) as unknown;
      assert.match(JSON.stringify(engines), /"intel_search"/);
    });

    test('a misspelt custom engine is a 400 naming it', async () => {
      const res = await fetch(`${served.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: A, engines: ['intel_domian'] }) });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { error: string }).error, /^unknown engine: intel_domian; did you mean intel_domain\?/);
    });
  });
});
