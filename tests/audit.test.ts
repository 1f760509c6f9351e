/**
 * The audit trail (setting `audit_log`, issue 25) over real HTTP, `oas serve` and `oas users` as
 * subprocesses sharing one configuration, engines on loopback fakes (a custom engine whose key
 * comes from the environment, and a built-in engine's key in the file):
 *
 * - Each action writes its line, with `time`, `user`, `client`, `action`, `outcome` first:
 *   sign_in (success, and failure with its reason), bad_token, analysis_started (observable
 *   count, engines, origin api, web and mcp), results_read (API, the analysis view once complete,
 *   MCP get_results; an unknown id as a failure), export_read (its format), user_added,
 *   user_token, user_role and user_removed (by `oas users`, client `cli`), config_reloaded on
 *   SIGHUP (the keys that changed, never a value; an invalid file as a failure with its reason).
 * - Nothing secret in the file: not the API token, any user's token (old and new) or its hash,
 *   an engine's key; and no observable text.
 * - The file is 0600 in a folder created 0700; a restart appends after the old lines (and a file
 *   found wider is narrowed).
 * - Behind a trusted proxy the client is what X-Forwarded-For names, and a user the proxy names for
 *   the first time is a user_added line (via proxy); from any other address the header is ignored.
 * - Two servers on one Redis (audit_log from OAS_AUDIT_LOG), with `oas users` beside them, append
 *   to one file under load: every line whole.
 * - A file that cannot be written: the server answers as usual and says so once on stderr.
 *
 * Loopback only; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashToken } from '../src/store/users.js';
import { startInternalIntel, intelDefinitions, type InternalIntelFake } from './fakes/internal-intel.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { call, textOf, type McpSession } from './helpers/mcp.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'audit-test-api-token-Hx7Lq2Vn9Rc4';
const INTEL_KEY = 'intel-key-of-the-audit-test-Zp3Wm8';
const ABUSE_KEY = 'abuseipdb-key-of-the-audit-test-Kd5Tb1';
const NEW_ABUSE_KEY = 'abuseipdb-key-after-reload-Qy6Ns2';
/** Observables: none of them may appear in the trail. */
const TEXT = 'seen 203.0.113.77 and audit-marker.example.org today';
const OBSERVABLES = ['203.0.113.77', 'audit-marker.example.org'];
const ENGINES = ['intel', 'reverse_dns'];

type Headers = Record<string, string>;
type Line = Record<string, unknown>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

/** Polls `check` until it holds (15 s at most: a bound, not a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  assert.fail(`never: ${what}`);
}

/** Every line of the trail, each checked to be one whole JSON object starting with the five common fields. */
function linesOf(file: string): Line[] {
  const text = readFileSync(file, 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'the file ends with a whole line');
  return text.split('\n').filter((line) => line !== '').map((raw) => {
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      assert.fail(`not a JSON line: ${raw.slice(0, 200)}`);
    }
    assert.deepEqual(Object.keys(line).slice(0, 5), ['time', 'user', 'client', 'action', 'outcome'], raw);
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(line.user === null || typeof line.user === 'string', raw);
    assert.ok(line.outcome === 'success' || line.outcome === 'failure', raw);
    if ('reason' in line) assert.equal(Object.keys(line).at(-1), 'reason', `reason last: ${raw}`);
    return line;
  });
}

/** The lines matching `fields` (each field equal). */
function matching(lines: Line[], fields: Line): Line[] {
  return lines.filter((line) => Object.entries(fields).every(([key, value]) => JSON.stringify(line[key]) === JSON.stringify(value)));
}

/** The one line added since `before` lines that matches `fields`. */
function oneNew(file: string, before: number, fields: Line): Line {
  const found = matching(linesOf(file).slice(before), fields);
  assert.equal(found.length, 1, `one new line ${JSON.stringify(fields)}; found ${JSON.stringify(found)}`);
  return found[0]!;
}

async function users(dir: string, args: string[], code = 0, env: Record<string, string> = {}): Promise<Run> {
  const run = await runOas(dir, ['users', ...args], { env });
  assert.equal(run.code, code, `oas users ${args.join(' ')}: ${run.stderr}`);
  noStack(run.stderr);
  return run;
}

async function get(url: string, headers: Headers = {}): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.text() };
}

function post(url: string, body: unknown, headers: Headers = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Posts the sign-in form; its status and the session cookie when it succeeded. */
async function signIn(base: string, token: string | undefined): Promise<{ status: number; cookie: string | undefined }> {
  const res = await fetch(`${base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ ...(token === undefined ? {} : { token }), next: '/' }).toString(),
  });
  await res.arrayBuffer();
  return { status: res.status, cookie: /oas_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0] };
}

/** Starts an analysis and waits for it; its id. */
async function analyze(base: string, headers: Headers, text = TEXT, engines = ENGINES): Promise<string> {
  const res = await post(`${base}/api/analyze`, { text, engines }, headers);
  const body = (await res.json()) as { analysis_id: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  await until(async () => (JSON.parse((await get(`${base}/api/is_analysis_complete/${body.analysis_id}`, headers)).body) as { complete?: boolean }).complete === true, `analysis ${body.analysis_id} complete`);
  return body.analysis_id;
}

const sessions: McpSession[] = [];
async function mcp(base: string, headers: Headers): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers } });
  const client = new Client({ name: 'oas-audit-tests', version: '1.0.0' });
  await client.connect(transport);
  const session: McpSession = { client, messages: [], close: () => client.close() };
  sessions.push(session);
  return session;
}

/** No secret and no observable anywhere in the trail. */
function assertClean(file: string, secrets: string[]): void {
  const text = readFileSync(file, 'utf8');
  for (const secret of secrets) {
    assert.ok(!text.includes(secret), `a secret in the trail: ${secret.slice(0, 6)}...`);
    assert.ok(!text.includes(encodeURIComponent(secret)), `a secret (URL-encoded) in the trail: ${secret.slice(0, 6)}...`);
    if (secret.startsWith('oas_')) assert.ok(!text.includes(hashToken(secret)), 'a token\'s hash in the trail');
  }
  for (const observable of OBSERVABLES) assert.ok(!text.includes(observable), `an observable in the trail: ${observable}`);
}

let upstreams: Upstreams;
let intel: InternalIntelFake;

before(async () => {
  upstreams = await startUpstreams();
  intel = await startInternalIntel({ key: INTEL_KEY, records: { '203.0.113.77': { score: 90, category: 'c2', tags: ['botnet'] } } });
});

after(async () => {
  for (const session of sessions) await session.close().catch(() => {});
  await upstreams?.close();
  await intel?.close();
});

/** The configuration of these tests: the custom engine `intel` (its key from INTEL_API_KEY) and a built-in engine's key. */
function settings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    api_token: API_TOKEN,
    auth_failures_per_minute: 1000,
    custom_engines: { intel: (intelDefinitions(intel.url) as Record<string, unknown>).intel },
    ...extra,
    engines: { abuseipdb: { api_key: ABUSE_KEY } },
  };
}
const ENV = { INTEL_API_KEY: INTEL_KEY };

describe('the audit trail of one server (SQLite) and oas users', { timeout: 90_000 }, () => {
  let dir: string;
  let file: string;
  let trail: string;
  let server: ServeProcess;
  const secrets: string[] = [API_TOKEN, INTEL_KEY, ABUSE_KEY, NEW_ABUSE_KEY];
  let alice: string;
  let vera: string;
  let analysis: string;

  before(async () => {
    ({ dir, file } = configFor(upstreams, settings()));
    trail = join(dir, 'audit', 'trail.jsonl'); // its folder does not exist yet
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...config, audit_log: trail }, null, 2));
    alice = (await users(dir, ['add', 'alice', '--role', 'analyst', '--config', file])).stdout.trim();
    secrets.push(alice);
    vera = (await users(dir, ['add', 'vera', '--role', 'viewer', '--config', file])).stdout.trim();
    secrets.push(vera);
    server = await spawnServe(file, { env: ENV });
  });

  after(async () => {
    await server?.stop();
  });

  test('oas users: user_added, user_token, user_role, user_removed with client cli; a refusal as a failure', async () => {
    const lines = linesOf(trail);
    const added = matching(lines, { action: 'user_added', outcome: 'success' });
    assert.deepEqual(added.map((l) => [l.user, l.role, l.client]), [['alice', 'analyst', 'cli'], ['vera', 'viewer', 'cli']]);
    assert.equal(typeof added[0]!.os_user, 'string', 'the account that ran oas users');

    let before = linesOf(trail).length;
    secrets.push((await users(dir, ['add', 'tmp', '--role', 'viewer', '--config', file])).stdout.trim());
    oneNew(trail, before, { action: 'user_added', outcome: 'success', user: 'tmp', client: 'cli', role: 'viewer' });

    before = linesOf(trail).length;
    const rotated = (await users(dir, ['token', 'tmp', '--config', file])).stdout.trim();
    secrets.push(rotated);
    const token = oneNew(trail, before, { action: 'user_token', outcome: 'success', user: 'tmp', client: 'cli' });
    assert.equal('role' in token, false);

    before = linesOf(trail).length;
    await users(dir, ['role', 'tmp', '--role', 'analyst', '--config', file]);
    oneNew(trail, before, { action: 'user_role', outcome: 'success', user: 'tmp', role: 'analyst' });

    before = linesOf(trail).length;
    await users(dir, ['remove', 'tmp', '--config', file]);
    oneNew(trail, before, { action: 'user_removed', outcome: 'success', user: 'tmp', client: 'cli' });

    before = linesOf(trail).length;
    await users(dir, ['remove', 'nobody', '--config', file], 2);
    const refused = oneNew(trail, before, { action: 'user_removed', outcome: 'failure', user: 'nobody' });
    assert.match(String(refused.reason), /no user named nobody/);
    await users(dir, ['add', 'alice', '--role', 'viewer', '--config', file], 2);
    assert.match(String(oneNew(trail, before, { action: 'user_added', outcome: 'failure', user: 'alice' }).reason), /exists already/);

    // list changes nothing: no line.
    before = linesOf(trail).length;
    await users(dir, ['list', '--config', file]);
    assert.equal(linesOf(trail).length, before);
  });

  test('sign_in: success, a wrong token and no token (with their reasons); bad_token for a refused header', async () => {
    let before = linesOf(trail).length;
    const ok = await signIn(server.url, alice);
    assert.equal(ok.status, 303);
    oneNew(trail, before, { action: 'sign_in', outcome: 'success', user: 'alice', client: '127.0.0.1' });

    before = linesOf(trail).length;
    assert.equal((await signIn(server.url, 'oas_wrong-token-typed-in-the-form')).status, 401);
    oneNew(trail, before, { action: 'sign_in', outcome: 'failure', user: null, client: '127.0.0.1', reason: 'invalid token' });
    assert.equal((await signIn(server.url, undefined)).status, 401);
    oneNew(trail, before, { action: 'sign_in', outcome: 'failure', user: null, reason: 'no token' });

    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/api/is_analysis_complete/x`, bearer('oas_a-token-nobody-has-Vb8Jd3'))).status, 401);
    assert.equal((await get(`${server.url}/ui/history`, { 'x-api-key': 'another-wrong-key-Wq2' })).status, 401);
    const bad = matching(linesOf(trail).slice(before), { action: 'bad_token', outcome: 'failure', user: null, client: '127.0.0.1', reason: 'invalid token' });
    assert.equal(bad.length, 2);
    // The wrong tokens are not written either.
    assert.ok(!readFileSync(trail, 'utf8').includes('a-token-nobody-has') && !readFileSync(trail, 'utf8').includes('another-wrong-key'));
  });

  test('analysis_started (api and web), results_read (API, view, a failure), export_read with its format', async () => {
    let before = linesOf(trail).length;
    analysis = await analyze(server.url, bearer(alice));
    const started = oneNew(trail, before, { action: 'analysis_started', outcome: 'success', user: 'alice', client: '127.0.0.1', analysis_id: analysis });
    assert.equal(started.origin, 'api');
    assert.equal(started.observables, 2);
    assert.deepEqual(started.engines, ENGINES);

    // The analyze form: a browser's same-origin request with its session cookie.
    const { cookie } = await signIn(server.url, alice);
    before = linesOf(trail).length;
    const res = await post(`${server.url}/api/analyze`, { text: TEXT, engines: ['reverse_dns'] }, { cookie: cookie!, 'sec-fetch-site': 'same-origin', origin: server.url });
    assert.equal(res.status, 200, await res.clone().text());
    const web = (await res.json()) as { analysis_id: string };
    const fromWeb = oneNew(trail, before, { action: 'analysis_started', analysis_id: web.analysis_id });
    assert.deepEqual([fromWeb.user, fromWeb.origin, fromWeb.observables, fromWeb.engines], ['alice', 'web', 2, ['reverse_dns']]);

    // An analysis the API token starts is recorded as api_token.
    before = linesOf(trail).length;
    const byToken = await analyze(server.url, bearer(API_TOKEN), '198.51.100.9', ['reverse_dns']);
    assert.equal(oneNew(trail, before, { action: 'analysis_started', analysis_id: byToken }).user, 'api_token');

    // Results: the API, by a viewer too (every role reads every analysis).
    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/api/results/${analysis}`, bearer(alice))).status, 200);
    oneNew(trail, before, { action: 'results_read', outcome: 'success', user: 'alice', analysis_id: analysis, origin: 'api', format: 'json' });
    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/api/results/${analysis}`, { cookie: cookie!, 'sec-fetch-site': 'same-origin' })).status, 200);
    oneNew(trail, before, { action: 'results_read', outcome: 'success', user: 'alice', analysis_id: analysis, origin: 'web', format: 'json' });
    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/api/results/no-such-analysis`, bearer(API_TOKEN))).status, 404);
    oneNew(trail, before, { action: 'results_read', outcome: 'failure', user: 'api_token', analysis_id: 'no-such-analysis', reason: 'analysis not found' });

    // The results page's view: once complete (a running analysis's polls write nothing).
    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/ui/analyses/${analysis}`, { cookie: cookie!, 'sec-fetch-site': 'same-origin' })).status, 200);
    oneNew(trail, before, { action: 'results_read', outcome: 'success', user: 'alice', analysis_id: analysis, origin: 'web', format: 'view' });

    // Exports, each with its format.
    for (const format of ['csv', 'json', 'stix']) {
      before = linesOf(trail).length;
      assert.equal((await get(`${server.url}/export/${analysis}?format=${format}`, bearer(vera))).status, 200, format);
      oneNew(trail, before, { action: 'export_read', outcome: 'success', user: 'vera', analysis_id: analysis, format });
    }
    before = linesOf(trail).length;
    assert.equal((await get(`${server.url}/export/nope?format=csv`, bearer(alice))).status, 404);
    oneNew(trail, before, { action: 'export_read', outcome: 'failure', analysis_id: 'nope', format: 'csv', reason: 'analysis not found' });

    // What is not audited: the pages, the history, polls, engines.
    before = linesOf(trail).length;
    for (const path of ['/', '/history', `/results/${analysis}`, '/ui/history', '/ui/engines', '/ui/me', `/api/is_analysis_complete/${analysis}`]) {
      assert.equal((await get(`${server.url}${path}`, bearer(alice))).status, 200, path);
    }
    assert.equal(linesOf(trail).length, before);
  });

  test('/mcp: analyze is analysis_started with origin mcp; get_results a results_read; an unknown id a failure', async () => {
    const session = await mcp(server.url, bearer(alice));
    let before = linesOf(trail).length;
    const done = await call(session, 'analyze', { text: TEXT, engines: ENGINES, wait_seconds: 30 });
    assert.notEqual(done.isError, true, textOf(done));
    const id = (done.structuredContent as { analysis_id: string }).analysis_id;
    const started = oneNew(trail, before, { action: 'analysis_started', analysis_id: id });
    assert.deepEqual([started.user, started.client, started.origin, started.observables, started.engines], ['alice', '127.0.0.1', 'mcp', 2, ENGINES]);

    before = linesOf(trail).length;
    const results = await call(session, 'get_results', { analysis_id: id });
    assert.notEqual(results.isError, true, textOf(results));
    oneNew(trail, before, { action: 'results_read', outcome: 'success', user: 'alice', analysis_id: id, origin: 'mcp', format: 'get_results' });

    before = linesOf(trail).length;
    const missing = await call(session, 'get_results', { analysis_id: 'not-an-analysis' });
    assert.equal(missing.isError, true);
    oneNew(trail, before, { action: 'results_read', outcome: 'failure', analysis_id: 'not-an-analysis', origin: 'mcp', reason: 'analysis not found' });

    // list_engines and extract_observables read no analysis.
    before = linesOf(trail).length;
    await call(session, 'list_engines');
    await call(session, 'extract_observables', { text: TEXT });
    assert.equal(linesOf(trail).length, before);
  });

  test('SIGHUP: config_reloaded with the keys that changed (never a value); an invalid file as a failure', async () => {
    const original = readFileSync(file, 'utf8');
    const config = JSON.parse(original) as { engines: Record<string, Record<string, unknown>> };
    let before = linesOf(trail).length;
    writeFileSync(file, JSON.stringify({ ...config, engines: { ...config.engines, abuseipdb: { api_key: NEW_ABUSE_KEY } } }, null, 2));
    server.child.kill('SIGHUP');
    await until(() => matching(linesOf(trail).slice(before), { action: 'config_reloaded' }).length > 0, 'config_reloaded');
    const reloaded = oneNew(trail, before, { action: 'config_reloaded', outcome: 'success', user: null, client: 'cli' });
    // The key's path (abuseipdb under its engine id), never its value.
    assert.deepEqual((reloaded.changed as string[]).map((path) => path.replace(/^engines\.[a-z0-9_]+\./, 'engines.*.')), ['engines.*.api_key']);

    before = linesOf(trail).length;
    writeFileSync(file, `{ "engines": { "abuseipdb": { "api_key": "${NEW_ABUSE_KEY}" } } oops`);
    server.child.kill('SIGHUP');
    await until(() => matching(linesOf(trail).slice(before), { action: 'config_reloaded' }).length > 0, 'config_reloaded (refused)');
    const refused = oneNew(trail, before, { action: 'config_reloaded', outcome: 'failure' });
    assert.match(String(refused.reason), /not valid JSON/);
    writeFileSync(file, original);
  });

  test('no token, key, hash or observable in the file; 0600 in a folder made 0700; a restart appends', async () => {
    assertClean(trail, secrets);
    assert.equal(statSync(trail).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'audit')).mode & 0o777, 0o700);

    const old = readFileSync(trail, 'utf8');
    await server.stop();
    chmodSync(trail, 0o644); // widened while stopped: narrowed again at start
    server = await spawnServe(file, { env: ENV });
    assert.equal(statSync(trail).mode & 0o777, 0o600);
    assert.equal((await signIn(server.url, 'oas_after-the-restart')).status, 401);
    const now = readFileSync(trail, 'utf8');
    assert.ok(now.startsWith(old), 'the old lines stay as they were');
    const added = linesOf(trail).slice(old.split('\n').length - 1);
    assert.deepEqual(added.map((l) => [l.action, l.outcome]), [['sign_in', 'failure']]);
    assert.doesNotMatch(server.log(), /audit/);
    assertClean(trail, secrets);
  });
});

describe('behind a trusted proxy: the forwarded client, and users the proxy names', { timeout: 60_000 }, () => {
  test('X-Forwarded-For from a trusted proxy is the client; a user named for the first time is user_added via proxy', async () => {
    const { dir, file } = configFor(upstreams, settings({ trusted_proxies: ['127.0.0.1'], auth_header: 'X-Forwarded-User' }));
    const trail = join(dir, 'audit.jsonl');
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...config, audit_log: trail }, null, 2));
    const server = await spawnServe(file, { env: ENV });
    try {
      const proxied = { 'x-forwarded-user': 'pat', 'x-forwarded-for': '198.51.100.1, 192.0.2.10' };
      assert.equal((await get(`${server.url}/ui/me`, proxied)).status, 200);
      assert.equal((await get(`${server.url}/ui/me`, proxied)).status, 200);
      const added = matching(linesOf(trail), { action: 'user_added' });
      assert.deepEqual(added.map((l) => [l.user, l.client, l.outcome, l.role, l.via]), [['pat', '192.0.2.10', 'success', 'analyst', 'proxy']]);
      const id = await analyze(server.url, proxied);
      const started = matching(linesOf(trail), { action: 'analysis_started', analysis_id: id });
      assert.deepEqual(started.map((l) => [l.user, l.client]), [['pat', '192.0.2.10']]);
      assert.equal((await get(`${server.url}/ui/me`, { ...bearer('oas_not-valid'), 'x-forwarded-for': '192.0.2.11' })).status, 401);
      assert.deepEqual(matching(linesOf(trail), { action: 'bad_token' }).map((l) => l.client), ['192.0.2.11']);
    } finally {
      await server.stop();
    }
  });

  test('from an address that is not a trusted proxy, X-Forwarded-For is ignored: the peer is the client', async () => {
    const { dir, file } = configFor(upstreams, settings({ trusted_proxies: ['10.0.0.0/8'] }));
    const trail = join(dir, 'audit.jsonl');
    const server = await spawnServe(file, { env: { ...ENV, OAS_AUDIT_LOG: trail } });
    try {
      assert.equal((await get(`${server.url}/ui/me`, { ...bearer('oas_not-valid'), 'x-forwarded-for': '192.0.2.11' })).status, 401);
      assert.deepEqual(matching(linesOf(trail), { action: 'bad_token' }).map((l) => l.client), ['127.0.0.1']);
    } finally {
      await server.stop();
    }
  });
});

describe('an audit_log that cannot be written', { timeout: 60_000 }, () => {
  test('the server answers as usual and says so once on stderr, naming audit_log', async () => {
    const { dir, file } = configFor(upstreams, settings());
    // A file where its folder should be: not writable, whoever runs the test (root included).
    writeFileSync(join(dir, 'not-a-folder'), 'x');
    const trail = join(dir, 'not-a-folder', 'audit.jsonl');
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...config, audit_log: trail }, null, 2));
    const token = (await users(dir, ['add', 'ann', '--role', 'analyst', '--config', file])).stdout.trim();
    const server = await spawnServe(file, { env: ENV });
    try {
      assert.equal((await signIn(server.url, token)).status, 303);
      assert.equal((await signIn(server.url, 'oas_wrong')).status, 401);
      const id = await analyze(server.url, bearer(token));
      assert.equal((await get(`${server.url}/api/results/${id}`, bearer(token))).status, 200);
      assert.equal((await get(`${server.url}/export/${id}?format=csv`, bearer(token))).status, 200);
      const said = server.log().split('\n').filter((line) => /audit/.test(line));
      assert.equal(said.length, 1, server.log());
      assert.match(said[0]!, /cannot write the audit trail to .*not-a-folder.*audit_log/);
      noStack(server.log());
      assert.equal(existsSync(trail), false);
    } finally {
      await server.stop();
    }
    // oas users says so too, once, and does its work.
    const run = await users(dir, ['add', 'bea', '--role', 'viewer', '--config', file]);
    assert.equal(run.stderr.split('\n').filter((line) => /audit_log/.test(line)).length, 1, run.stderr);
    assert.match(run.stdout, /^oas_/);
  });
});

describe('two servers on one Redis, one audit file (OAS_AUDIT_LOG)', { skip: redisSkip, timeout: 90_000 }, () => {
  let redis: RedisServer;
  let servers: ServeProcess[] = [];

  before(async () => {
    redis = await startRedis();
  });

  after(async () => {
    for (const server of servers) await server.stop();
    await redis?.close();
  });

  test('users and analyses of both are in the file, every line whole under concurrent writes', async () => {
    const { dir, file } = configFor(upstreams, settings({ redis_url: redis.url }));
    const trail = join(dir, 'shared-audit.jsonl');
    const env = { ...ENV, OAS_AUDIT_LOG: trail };
    const tokens = [(await users(dir, ['add', 'rita', '--role', 'analyst', '--config', file], 0, env)).stdout.trim()];
    servers = [await spawnServe(file, { env }), await spawnServe(file, { env })];
    const [one, two] = servers as [ServeProcess, ServeProcess];

    // Both servers see the user: an analysis started on one, read on the other.
    const id = await analyze(one.url, bearer(tokens[0]!));
    assert.equal((await get(`${two.url}/api/results/${id}`, bearer(tokens[0]!))).status, 200);

    // Concurrent writers: both servers and oas users, each line long enough to need care.
    const rounds = 150;
    const requests: Promise<unknown>[] = [];
    for (let i = 0; i < rounds; i++) {
      for (const server of servers) {
        requests.push(get(`${server.url}/api/results/missing-${'x'.repeat(60)}-${i}`, bearer(tokens[0]!)));
        requests.push(get(`${server.url}/ui/me`, bearer(`oas_bad-${i}`)));
      }
    }
    const cli = Promise.all(['sam', 'sue', 'sol'].map(async (name) => tokens.push((await users(dir, ['add', name, '--role', 'viewer', '--config', file], 0, env)).stdout.trim())));
    await Promise.all([...requests, cli]);

    const lines = linesOf(trail);
    assert.equal(matching(lines, { action: 'results_read', outcome: 'failure', reason: 'analysis not found' }).length, rounds * 2);
    assert.equal(matching(lines, { action: 'bad_token' }).length, rounds * 2);
    assert.deepEqual(matching(lines, { action: 'user_added', outcome: 'success' }).map((l) => l.user).sort(), ['rita', 'sam', 'sol', 'sue']);
    const started = matching(lines, { action: 'analysis_started', analysis_id: id });
    assert.deepEqual(started.map((l) => [l.user, l.origin, l.observables]), [['rita', 'api', 2]]);
    assert.equal(matching(lines, { action: 'results_read', outcome: 'success', analysis_id: id }).length, 1);
    assert.equal(statSync(trail).mode & 0o777, 0o600);
    assertClean(trail, [API_TOKEN, INTEL_KEY, ABUSE_KEY, ...tokens]);
  });
});
