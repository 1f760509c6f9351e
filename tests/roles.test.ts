/**
 * People and roles (issue 25) over real HTTP, `oas serve` and `oas users` as subprocesses sharing
 * one configuration (its data_dir), engines on loopback fakes:
 *
 * - `oas users add` prints the token alone on standard output (47 characters: `oas_` and the
 *   base64url of 32 bytes); `list` (table and --json) never shows a token nor its hash.
 * - Each role (viewer, analyst, admin, and api_token acting as admin) against each route: the
 *   spec's three endpoints, /ui/ (history, an analysis, engines, me), /export/, /mcp through the
 *   SDK's client (a viewer's analyze is a tool error naming its role), /metrics (admin only); no
 *   token: 401; a wrong role: 403 with one line naming the role.
 * - `oas users token` (the old token 401 at once, the new one works) and `oas users remove` (401 at
 *   once, and a browser session signed in with that user's token ends with it).
 * - auth_failures_per_minute: past it, 429 with Retry-After even with a valid token, while a page
 *   without credentials still loads.
 * - started_by: the analysis view and the history show who started an analysis; `?mine=1` lists
 *   the requester's only; `oas analyze` records `cli`; /api/results keeps the spec's format.
 * - A server without authentication: everyone is `anonymous`, an admin.
 * - Two servers on one Redis: a user added once (`oas users add --redis`) is accepted by both, a
 *   session signed in on one holds on the other, and a removal applies on both.
 *
 * Loopback only; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashToken } from '../src/store/users.js';
import type { AnalysisView, HistoryView, MeView } from '../src/view/types.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { call, textOf, toolError, type Analyzed, type McpSession, type Results } from './helpers/mcp.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const API_TOKEN = 'roles-test-api-token-Qm4Zr8Tk2Wp6';
const TOKEN_LINE = /^oas_[A-Za-z0-9_-]{43}\n$/;
const ENGINE = 'reverse_dns';

type Headers = Record<string, string>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

/** Polls `check` until it holds (15 s at most: a bound, not a timing assertion). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  assert.fail(`never: ${what}`);
}

/** `oas users ...` with this configuration (or flags such as --redis); exit 0 asserted unless `code` says otherwise. */
async function users(dir: string, args: string[], code = 0): Promise<Run> {
  const run = await runOas(dir, ['users', ...args]);
  assert.equal(run.code, code, `oas users ${args.join(' ')}: ${run.stderr}`);
  noStack(run.stderr);
  return run;
}

/** `oas users add NAME --role ROLE`: its token, checked to be the only thing on standard output. */
async function addUser(dir: string, name: string, role: string, where: string[]): Promise<string> {
  const run = await users(dir, ['add', name, '--role', role, ...where]);
  assert.match(run.stdout, TOKEN_LINE, 'one line: the token');
  assert.equal(run.stdout.length, 48, '47 characters and the line feed');
  assert.equal(Buffer.from(run.stdout.slice(4, 47), 'base64url').length, 32, '32 random bytes');
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, new RegExp(`${name}.*${role}`));
  return run.stdout.trim();
}

async function get(url: string, headers: Headers = {}): Promise<{ status: number; body: string; headers: globalThis.Headers }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: await res.text(), headers: res.headers };
}

async function getJson<T>(url: string, headers: Headers): Promise<T> {
  const res = await get(url, headers);
  assert.equal(res.status, 200, `${url}: ${res.body}`);
  return JSON.parse(res.body) as T;
}

function post(url: string, body: unknown, headers: Headers = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** A 401 or 403: JSON with one line, no stack; its message. */
async function refusal(res: Response | { status: number; body: string }, status: number): Promise<string> {
  const text = res instanceof Response ? await res.text() : res.body;
  assert.equal(res.status, status, text);
  const error = (JSON.parse(text) as { error: string }).error;
  assert.equal(typeof error, 'string');
  assert.ok(!error.includes('\n'), `one line: ${error}`);
  noStack(error);
  return error;
}

/** Starts an analysis as `headers` and waits for it; its id. */
async function analyze(base: string, headers: Headers, text = '8.8.8.8'): Promise<string> {
  const res = await post(`${base}/api/analyze`, { text, engines: [ENGINE] }, headers);
  const body = (await res.json()) as { analysis_id: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  await until(async () => (JSON.parse((await get(`${base}/api/is_analysis_complete/${body.analysis_id}`, headers)).body) as { complete?: boolean }).complete === true, `analysis ${body.analysis_id} complete`);
  return body.analysis_id;
}

/** Signs in at /signin with a token as the sign-in form does; the session cookie (`oas_session=...`). */
async function signIn(base: string, token: string): Promise<string> {
  const res = await fetch(`${base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ token, next: '/history' }).toString(),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 303);
  const cookie = /oas_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0];
  assert.ok(cookie, 'a session cookie');
  assert.ok(!cookie.includes(token), 'the cookie never holds the token');
  return cookie;
}

const sessions: McpSession[] = [];
async function mcp(base: string, headers: Headers): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers } });
  const messages: string[] = [];
  transport.onmessage = (message) => messages.push(JSON.stringify(message));
  const client = new Client({ name: 'oas-roles-tests', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  const session: McpSession = { client, messages, close: () => client.close() };
  sessions.push(session);
  return session;
}

let upstreams: Upstreams;

before(async () => {
  upstreams = await startUpstreams();
});

after(async () => {
  for (const session of sessions) await session.close().catch(() => {});
  await upstreams?.close();
});

describe('roles on one server (SQLite, with api_token)', { timeout: 90_000 }, () => {
  let dir: string;
  let file: string;
  let server: ServeProcess;
  const tokens = new Map<string, string>();
  const ROLE_OF: Record<string, string> = { vera: 'viewer', alice: 'analyst', bob: 'analyst', ada: 'admin' };
  /** Who each principal of the matrix is: its headers and the role it acts as. */
  let principals: { who: string; role: 'viewer' | 'analyst' | 'admin'; headers: Headers }[];
  /** An analysis finished before the matrix (by the admin). */
  let shared: string;

  before(async () => {
    // A high failure limit: the bad tokens of these tests never reach it (its own server below).
    ({ dir, file } = configFor(upstreams, { api_token: API_TOKEN, auth_failures_per_minute: 1000 }));
    server = await spawnServe(file);
    for (const [name, role] of Object.entries(ROLE_OF)) tokens.set(name, await addUser(dir, name, role, ['--config', file]));
    principals = [
      { who: 'vera', role: 'viewer', headers: bearer(tokens.get('vera')!) },
      { who: 'alice', role: 'analyst', headers: bearer(tokens.get('alice')!) },
      { who: 'ada', role: 'admin', headers: { 'x-api-key': tokens.get('ada')! } },
      { who: 'api_token', role: 'admin', headers: bearer(API_TOKEN) },
    ];
    shared = await analyze(server.url, bearer(API_TOKEN));
  });

  after(async () => {
    await server?.stop();
  });

  test('oas users add: a name taken, a bad role or name are refused with one line, nothing on standard output', async () => {
    for (const args of [['add', 'alice', '--role', 'viewer'], ['add', 'carol', '--role', 'owner'], ['add', 'carol'], ['add', 'bad name', '--role', 'viewer'], ['token', 'nobody'], ['remove', 'nobody']]) {
      const run = await users(dir, [...args, '--config', file], 2);
      assert.equal(run.stdout, '', args.join(' '));
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    }
  });

  test('oas users list: names, roles, created, last used; never a token nor its hash', async () => {
    // alice's token was used (the matrix below may not have run yet: use it now).
    await getJson<MeView>(`${server.url}/ui/me`, bearer(tokens.get('alice')!));
    const table = await users(dir, ['list', '--config', file]);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^Name\s+Role\s+Created\s+Last used$/);
    for (const [name, role] of Object.entries(ROLE_OF)) assert.match(table.stdout, new RegExp(`^${name}\\s+${role}\\s+\\d{4}-\\d\\d-\\d\\dT`, 'm'));
    const listed = await users(dir, ['list', '--json', '--config', file]);
    const list = JSON.parse(listed.stdout) as Record<string, unknown>[];
    assert.deepEqual(list.map((u) => u['name']).sort(), Object.keys(ROLE_OF).sort());
    for (const user of list) {
      assert.deepEqual(Object.keys(user).sort(), ['created_at', 'last_used_at', 'name', 'role']);
      assert.equal(user['role'], ROLE_OF[user['name'] as string]);
    }
    assert.match(String(list.find((u) => u['name'] === 'alice')!['last_used_at']), /^\d{4}-/, 'alice has used her token');
    for (const run of [table, listed]) {
      assert.doesNotMatch(run.stdout, /oas_/);
      for (const token of tokens.values()) {
        assert.ok(!run.stdout.includes(token) && !run.stdout.includes(hashToken(token)), 'no token, no hash');
        assert.ok(!run.stderr.includes(token) && !run.stderr.includes(hashToken(token)));
      }
    }
  });

  test('each role against each route', async () => {
    const base = server.url;
    const reads = [
      `/api/is_analysis_complete/${shared}`,
      `/api/results/${shared}`,
      '/ui/history',
      `/ui/analyses/${shared}`,
      '/ui/engines',
      '/ui/me',
      `/export/${shared}?format=csv`,
    ];
    for (const { who, role, headers } of principals) {
      for (const path of reads) assert.equal((await get(`${base}${path}`, headers)).status, 200, `${who} GET ${path}`);
      assert.deepEqual(await getJson<MeView>(`${base}/ui/me`, headers), { name: who, role });
      const started = await post(`${base}/api/analyze`, { text: '8.8.4.4', engines: [ENGINE] }, headers);
      if (role === 'viewer') {
        const error = await refusal(started, 403);
        assert.match(error, /vera is a viewer/);
        assert.match(error, /analyst/);
      } else {
        assert.equal(started.status, 200, await started.clone().text());
        await started.arrayBuffer();
      }
      const metrics = await get(`${base}/metrics`, headers);
      if (role === 'admin') {
        assert.equal(metrics.status, 200, `${who} /metrics`);
        assert.match(metrics.body, /^# HELP oas_/m);
      } else {
        assert.match(await refusal(metrics, 403), new RegExp(`${who} is an? ${role}; this needs the admin role`));
      }
    }
    // Without a token: the data and /metrics are refused, the pages themselves load (they sign in).
    for (const path of [...reads, '/metrics']) await refusal(await get(`${base}${path}`), 401);
    await refusal(await post(`${base}/api/analyze`, { text: '8.8.4.4', engines: [ENGINE] }), 401);
    await refusal(await post(`${base}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' }), 401);
    await refusal(await get(`${base}/ui/me`, bearer('oas_not-a-token-of-anyone')), 401);
    for (const path of ['/', '/history', `/results/${shared}`, '/signin']) assert.equal((await get(`${base}${path}`)).status, 200, path);
  });

  test('/mcp: a viewer lists engines and reads results; its analyze is a tool error naming its role; an analyst analyzes', async () => {
    const viewer = await mcp(server.url, bearer(tokens.get('vera')!));
    const engines = await call(viewer, 'list_engines');
    assert.notEqual(engines.isError, true, textOf(engines));
    assert.match(textOf(engines), new RegExp(ENGINE));
    const results = await call(viewer, 'get_results', { analysis_id: shared });
    assert.notEqual(results.isError, true, textOf(results));
    assert.equal((results.structuredContent as unknown as Results).analysis_id, shared);
    const refused = await toolError(viewer, 'analyze', { text: '9.9.9.9', engines: [ENGINE] });
    assert.match(refused, /vera is a viewer/);
    assert.match(refused, /analyst/);

    const analyst = await mcp(server.url, bearer(tokens.get('bob')!));
    const done = await call(analyst, 'analyze', { text: '8.8.8.8', engines: [ENGINE], wait_seconds: 30 });
    assert.notEqual(done.isError, true, textOf(done));
    const analyzed = done.structuredContent as unknown as Analyzed;
    assert.equal(analyzed.complete, true);
    const view = await getJson<AnalysisView>(`${server.url}/ui/analyses/${analyzed.analysis_id}`, bearer(API_TOKEN));
    assert.equal(view.started_by, 'bob', 'an analysis started over MCP records its user');
  });

  test('oas users token: the old token is refused at once, the new one works', async () => {
    const old = await addUser(dir, 'rot', 'analyst', ['--config', file]);
    assert.equal((await getJson<MeView>(`${server.url}/ui/me`, bearer(old))).name, 'rot');
    const run = await users(dir, ['token', 'rot', '--config', file]);
    assert.match(run.stdout, TOKEN_LINE);
    const fresh = run.stdout.trim();
    assert.notEqual(fresh, old);
    await refusal(await get(`${server.url}/ui/me`, bearer(old)), 401);
    await refusal(await post(`${server.url}/api/analyze`, { text: '8.8.8.8', engines: [ENGINE] }, bearer(old)), 401);
    assert.deepEqual(await getJson<MeView>(`${server.url}/ui/me`, bearer(fresh)), { name: 'rot', role: 'analyst' });
    const listed = await users(dir, ['list', '--json', '--config', file]);
    assert.ok(!listed.stdout.includes(fresh) && !listed.stdout.includes(hashToken(fresh)));
  });

  test('oas users remove: the token is refused at once, and a browser session of that user ends', async () => {
    const token = await addUser(dir, 'gone', 'viewer', ['--config', file]);
    const cookie = await signIn(server.url, token);
    assert.deepEqual(await getJson<MeView>(`${server.url}/ui/me`, { cookie }), { name: 'gone', role: 'viewer' });
    assert.equal((await get(`${server.url}/ui/history`, { cookie })).status, 200);
    const run = await users(dir, ['remove', 'gone', '--config', file]);
    assert.equal(run.stdout, '');
    await refusal(await get(`${server.url}/ui/me`, bearer(token)), 401);
    await refusal(await get(`${server.url}/ui/me`, { cookie }), 401);
    await refusal(await get(`${server.url}/ui/history`, { cookie }), 401);
    const listed = await users(dir, ['list', '--json', '--config', file]);
    assert.ok(!(JSON.parse(listed.stdout) as { name: string }[]).some((u) => u.name === 'gone'));
  });

  test('started_by: shown in the analysis view and the history; ?mine=1 lists the requester\'s only', async () => {
    const base = server.url;
    const alice = bearer(tokens.get('alice')!);
    const bob = bearer(tokens.get('bob')!);
    const id = await analyze(base, alice, 'alices-own.example.com 8.8.8.8');
    const view = await getJson<AnalysisView>(`${base}/ui/analyses/${id}`, bob);
    assert.equal(view.started_by, 'alice', 'every role reads every analysis, and sees who started it');
    const everyone = await getJson<HistoryView>(`${base}/ui/history?per_page=100`, bob);
    assert.equal(everyone.items.find((item) => item.id === id)?.started_by, 'alice');
    assert.equal(everyone.items.find((item) => item.id === shared)?.started_by, 'api_token');

    for (const mine of ['1', 'true']) {
      const hers = await getJson<HistoryView>(`${base}/ui/history?mine=${mine}&per_page=100`, alice);
      assert.ok(hers.items.some((item) => item.id === id));
      assert.ok(hers.items.every((item) => item.started_by === 'alice'), JSON.stringify(hers.items.map((i) => i.started_by)));
      assert.equal(hers.total, hers.items.length);
      const his = await getJson<HistoryView>(`${base}/ui/history?mine=${mine}&per_page=100`, bob);
      assert.ok(!his.items.some((item) => item.id === id), 'not in bob\'s');
      assert.ok(his.items.every((item) => item.started_by === 'bob'));
    }
    // The search and "mine" together; mine=0 or false: everyone's.
    const searched = await getJson<HistoryView>(`${base}/ui/history?mine=1&q=ALICES-own`, alice);
    assert.deepEqual(searched.items.map((item) => item.id), [id]);
    assert.equal((await getJson<HistoryView>(`${base}/ui/history?mine=1&q=ALICES-own`, bob)).total, 0);
    for (const mine of ['0', 'false']) assert.equal((await getJson<HistoryView>(`${base}/ui/history?mine=${mine}&per_page=100`, alice)).total, everyone.total);
    for (const bad of ['mine=yes', 'mine=', 'mine=2', 'mine=1&mine=1']) {
      assert.match(await refusal(await get(`${base}/ui/history?${bad}`, alice), 400), /"mine"/, bad);
    }

    // The spec's endpoints keep their format: no started_by there (seen, issue 38, is a field
    // beyond the spec's, as verdict is elsewhere).
    const results = await get(`${base}/api/results/${id}`, alice);
    assert.equal(results.status, 200);
    const rows = JSON.parse(results.body) as Record<string, unknown>[];
    assert.ok(Array.isArray(rows));
    for (const row of rows) assert.deepEqual(Object.keys(row).sort(), ['observable', 'reverse_dns', 'reversed_success', 'seen', 'type']);
    assert.doesNotMatch(results.body, /started_by|"alice"/);
    assert.deepEqual(JSON.parse((await get(`${base}/api/is_analysis_complete/${id}`, alice)).body), { complete: true });
  });

  test('oas analyze run locally records cli', async () => {
    const run = await runOas(dir, ['analyze', 'cli-run.example.com', '--engines', ENGINE, '--json', '--config', file]);
    assert.equal(run.code, 0, run.stderr);
    const history = await getJson<HistoryView>(`${server.url}/ui/history?q=cli-run.example.com`, bearer(API_TOKEN));
    assert.equal(history.total, 1);
    assert.equal(history.items[0]!.started_by, 'cli');
    const view = await getJson<AnalysisView>(`${server.url}/ui/analyses/${history.items[0]!.id}`, bearer(API_TOKEN));
    assert.equal(view.started_by, 'cli');
  });

  test('no token, key nor hash in the server\'s log', () => {
    const log = server.log();
    for (const token of [...tokens.values(), API_TOKEN]) {
      assert.ok(!log.includes(token), 'no token in the log');
      assert.ok(!log.includes(hashToken(token)), 'no hash in the log');
    }
  });
});

describe('a server without authentication (loopback, no api_token, no user)', { timeout: 60_000 }, () => {
  let server: ServeProcess;

  before(async () => {
    server = await spawnServe(configFor(upstreams).file);
  });

  after(async () => {
    await server?.stop();
  });

  test('everyone is anonymous, an admin; analyses record anonymous, and Mine lists them', async () => {
    assert.deepEqual(await getJson<MeView>(`${server.url}/ui/me`, {}), { name: 'anonymous', role: 'admin' });
    const id = await analyze(server.url, {});
    assert.equal((await getJson<AnalysisView>(`${server.url}/ui/analyses/${id}`, {})).started_by, 'anonymous');
    const mine = await getJson<HistoryView>(`${server.url}/ui/history?mine=1`, {});
    assert.deepEqual(mine.items.map((item) => [item.id, item.started_by]), [[id, 'anonymous']]);
  });
});

describe('auth_failures_per_minute', { timeout: 60_000 }, () => {
  let server: ServeProcess;
  let token: string;

  before(async () => {
    const { dir, file } = configFor(upstreams, { auth_failures_per_minute: 3 });
    token = await addUser(dir, 'alice', 'analyst', ['--config', file]);
    server = await spawnServe(file);
  });

  after(async () => {
    await server?.stop();
  });

  test('past 3 bad tokens, 429 with Retry-After even with a valid token; a page without credentials still loads', async () => {
    const base = server.url;
    assert.equal((await get(`${base}/ui/me`, bearer(token))).status, 200, 'before: the token works');
    for (let i = 0; i < 3; i++) await refusal(await get(`${base}/ui/me`, bearer(`oas_wrong-${i}`)), 401);
    for (const headers of [bearer(token), { 'x-api-key': token }, bearer('oas_wrong-again')]) {
      const limited = await get(`${base}/ui/me`, headers);
      const error = await refusal(limited, 429);
      assert.match(error, /auth_failures_per_minute/);
      const retry = Number(limited.headers.get('retry-after'));
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After: ${limited.headers.get('retry-after')}`);
      assert.ok(!error.includes(token));
    }
    await refusal(await post(`${base}/api/analyze`, { text: '8.8.8.8', engines: [ENGINE] }, bearer(token)), 429);
    // The pages and their assets load (they say to sign in); the sign-in form too, but not signing in.
    for (const path of ['/', '/history', '/signin', '/healthz']) assert.equal((await get(`${base}${path}`)).status, 200, path);
    const signin = await fetch(`${base}/signin`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });
    await signin.arrayBuffer();
    assert.equal(signin.status, 429);
  });
});

describe('two servers on one Redis: the same users', { skip: redisSkip, timeout: 90_000 }, () => {
  let redis: RedisServer;
  let a: ServeProcess;
  let b: ServeProcess;
  let cwd: string;
  let alice: string;

  before(async () => {
    redis = await startRedis();
    const first = configFor(upstreams, { redis_url: redis.url, auth_failures_per_minute: 1000 });
    const second = configFor(upstreams, { redis_url: redis.url, auth_failures_per_minute: 1000 });
    cwd = tempDir('oas-roles-cli-');
    // Added once, before either server starts, with --redis and no configuration at all; no
    // api_token: the users alone make authentication required (keeper stays, so they always do).
    alice = await addUser(cwd, 'alice', 'analyst', ['--redis', redis.url]);
    await addUser(cwd, 'keeper', 'viewer', ['--redis', redis.url]);
    [a, b] = await Promise.all([spawnServe(first.file), spawnServe(second.file)]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.close();
  });

  test('both accept the token; the history and a session are shared; a removal applies on both', async () => {
    for (const server of [a, b]) {
      assert.deepEqual(await getJson<MeView>(`${server.url}/ui/me`, bearer(alice)), { name: 'alice', role: 'analyst' });
      await refusal(await get(`${server.url}/ui/me`), 401);
    }
    const id = await analyze(a.url, bearer(alice), 'redis-shared.example.com');
    const onB = await getJson<HistoryView>(`${b.url}/ui/history?mine=1`, bearer(alice));
    assert.deepEqual(onB.items.map((item) => [item.id, item.started_by]), [[id, 'alice']]);
    assert.equal((await getJson<AnalysisView>(`${b.url}/ui/analyses/${id}`, bearer(alice))).started_by, 'alice');

    const cookie = await signIn(a.url, alice);
    assert.equal((await getJson<MeView>(`${b.url}/ui/me`, { cookie })).name, 'alice', 'signed in on a, signed in on b');

    const listed = await users(cwd, ['list', '--json', '--redis', redis.url]);
    assert.deepEqual((JSON.parse(listed.stdout) as { name: string }[]).map((u) => u.name).sort(), ['alice', 'keeper']);
    assert.ok(!listed.stdout.includes(alice) && !listed.stdout.includes(hashToken(alice)));

    await users(cwd, ['remove', 'alice', '--redis', redis.url]);
    for (const server of [a, b]) {
      await refusal(await get(`${server.url}/ui/me`, bearer(alice)), 401);
      await refusal(await get(`${server.url}/ui/me`, { cookie }), 401);
    }
    for (const server of [a, b]) assert.ok(!server.log().includes(alice), 'no token in the log');
  });
});
