/**
 * Access to `oas serve`, over real HTTP against the binary: the API token (both header forms,
 * constant-time check, the browser's sign-in and session cookie), the refusal to serve beyond
 * loopback without a token, the Host check (421, DNS rebinding), CORS, the request log, and
 * concurrent authenticated clients. The token must never show in a response, a log line or the
 * data directory.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runOas, noStack } from './helpers/cli.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'oas-test-token-Zk3q9VwL2xP7mN4c';
const ENV_TOKEN = 'env-token-Hq8Rt5Yu1Io0Pa3S';
const IPINFO_KEY = 'ipinfo-key-Bn6Mv2Cx9Zl4Kj7H';
const cwd = tempDir('oas-auth-');

let upstreams: Upstreams;
/** Token in the config file, text log, one CORS origin, one extra host name. */
let server: ServeProcess;
let config: ReturnType<typeof configFor>;
/** Token from OAS_API_TOKEN, `--log-format json`, no CORS origin. */
let envServer: ServeProcess;
let envConfig: ReturnType<typeof configFor>;

const bearer = (token = TOKEN) => ({ authorization: `Bearer ${token}` });
const json = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startAnalysis(base: string, headers: Record<string, string>, text = 'example.com', engines = ['reverse_dns']): Promise<string> {
  const res = await fetch(`${base}/api/analyze`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ text, engines }) });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

/** Polls until complete (bounded: 30 s), then returns the results. */
async function waitResults(base: string, id: string, headers: Record<string, string>): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${base}/api/is_analysis_complete/${id}`, { headers });
    assert.equal(res.status, 200, await res.clone().text());
    if (((await res.json()) as { complete: boolean }).complete) break;
    assert.ok(Date.now() < deadline, `analysis ${id} did not complete within 30 s`);
    await sleep(25);
  }
  const res = await fetch(`${base}/api/results/${id}`, { headers });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>[];
}

/** A request with any Host header (fetch does not allow setting it). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET', headers, setHost: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every file under `dir`, read as bytes and searched for `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...filesContaining(path, needle));
    else if (readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

/** The Set-Cookie header parsed: value and attributes (lower-cased names). */
function parseSetCookie(header: string | null): { name: string; value: string; attrs: Map<string, string> } {
  assert.ok(header, 'a Set-Cookie header');
  const [pair, ...rest] = header.split(';').map((s) => s.trim());
  const [name, value] = pair!.split('=') as [string, string];
  return { name, value, attrs: new Map(rest.map((a) => { const [k, v = ''] = a.split('='); return [k!.toLowerCase(), v]; })) };
}

async function signIn(base: string, token: string, headers: Record<string, string> = {}, next = '/'): Promise<Response> {
  return fetch(`${base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, ...headers },
    body: new URLSearchParams({ token, next }).toString(),
  });
}

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams, {
    api_token: TOKEN,
    // These tests send many wrong tokens on purpose; the failure limit has its own tests.
    auth_failures_per_minute: 10_000,
    cors_origins: ['https://soc.example'],
    allowed_hosts: ['oas.team.example'],
    engines: { provider_12: { api_key: IPINFO_KEY, base_url: upstreams.doh.url } },
  });
  envConfig = configFor(upstreams, { auth_failures_per_minute: 10_000 });
  [server, envServer] = await Promise.all([
    spawnServe(config.file, { cwd }),
    spawnServe(envConfig.file, { cwd, env: { OAS_API_TOKEN: ENV_TOKEN }, args: ['--log-format', 'json'] }),
  ]);
});
after(async () => {
  await Promise.all([server?.stop(), envServer?.stop()]);
  await upstreams.close();
});

describe('api_token', () => {
  test('without the token: 401 {"error"} with WWW-Authenticate: Bearer on the API, /ui/, /export/ and unknown paths', async () => {
    const id = await startAnalysis(server.url, bearer());
    const requests: [string, string][] = [
      ['POST', '/api/analyze'],
      ['GET', `/api/is_analysis_complete/${id}`],
      ['GET', `/api/results/${id}`],
      ['GET', '/api/nothing-here'],
      ['GET', '/ui/engines'],
      ['GET', `/ui/analyses/${id}`],
      ['GET', '/ui/history?page=1'],
      ['GET', `/export/${id}?format=csv`],
      ['GET', '/no/such/path'],
    ];
    for (const [method, path] of requests) {
      const res = await fetch(`${server.url}${path}`, { method, headers: method === 'POST' ? json : {}, body: method === 'POST' ? JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) : undefined });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer', `${method} ${path}`);
      const body = (await res.json()) as { error: string };
      assert.match(body.error, /api_token/);
      assert.deepEqual(Object.keys(body), ['error']);
    }
  });

  test('Authorization: Bearer and X-API-Key both work, on every kind of endpoint', async () => {
    for (const headers of [bearer(), { 'x-api-key': TOKEN }]) {
      const id = await startAnalysis(server.url, headers, 'example.com 8.8.8.8');
      const results = await waitResults(server.url, id, headers);
      assert.deepEqual(results.map((r) => r.observable), ['example.com', '8.8.8.8']);
      for (const path of ['/ui/engines', `/ui/analyses/${id}`, '/ui/history', `/export/${id}?format=json`, `/export/${id}?format=csv`]) {
        const res = await fetch(`${server.url}${path}`, { headers });
        assert.equal(res.status, 200, path);
        assert.ok(!(await res.text()).includes(TOKEN), `no token in ${path}`);
      }
    }
  });

  test('wrong tokens of every length, other schemes and the token in the query string are refused', async () => {
    const wrong = [
      '', 'x', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), `x${TOKEN.slice(1)}`, ` ${TOKEN}x `,
      'a'.repeat(TOKEN.length), 'a'.repeat(4096), TOKEN.slice(0, 8), ENV_TOKEN,
    ];
    for (const token of wrong) {
      for (const headers of [bearer(token), { 'x-api-key': token }]) {
        const res = await fetch(`${server.url}/ui/engines`, { headers });
        assert.equal(res.status, 401, `${JSON.stringify(headers).slice(0, 80)}`);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer');
        assert.match(((await res.json()) as { error: string }).error, /invalid API token/);
      }
    }
    for (const authorization of [`Basic ${TOKEN}`, TOKEN, `Token ${TOKEN}`, 'Bearer', `Bearer${TOKEN}`]) {
      assert.equal((await fetch(`${server.url}/ui/engines`, { headers: { authorization } })).status, 401, authorization);
    }
    for (const query of [`token=${TOKEN}`, `api_key=${TOKEN}`, `access_token=${TOKEN}`]) {
      assert.equal((await fetch(`${server.url}/ui/engines?${query}`)).status, 401, query);
    }
    // The scheme is case-insensitive, surrounding spaces are ignored.
    assert.equal((await fetch(`${server.url}/ui/engines`, { headers: { authorization: `bearer   ${TOKEN}  ` } })).status, 200);
  });

  test('OAS_API_TOKEN sets the token too', async () => {
    assert.equal((await fetch(`${envServer.url}/ui/engines`)).status, 401);
    assert.equal((await fetch(`${envServer.url}/ui/engines`, { headers: bearer(TOKEN) })).status, 401);
    assert.equal((await fetch(`${envServer.url}/ui/engines`, { headers: bearer(ENV_TOKEN) })).status, 200);
  });

  test('the pages, their assets and the sign-in page load without the token, and hold no token', async () => {
    const id = await startAnalysis(server.url, bearer());
    for (const path of ['/', '/history', `/results/${id}`, '/assets/oas.css', '/assets/api.js', '/signin']) {
      const res = await fetch(`${server.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.ok(!(await res.text()).includes(TOKEN), `no token in ${path}`);
    }
    const page = await (await fetch(`${server.url}/`)).text();
    assert.match(page, /data-auth="token"/, 'the pages know to sign in');
  });

  test('sign-in: a plain form (no inline script, same CSP); the right token sets an HttpOnly SameSite=Strict session cookie', async () => {
    const form = await fetch(`${server.url}/signin?next=/history`);
    const html = await form.text();
    assert.match(html, /<form method="post" action="\/signin">/);
    assert.match(html, /type="password"[^>]*name="token"/);
    assert.match(html, /name="next" value="\/history"/);
    assert.doesNotMatch(html, /<script/);
    assert.match(form.headers.get('content-security-policy')!, /script-src 'self'/);

    const wrong = await signIn(server.url, 'not-the-token');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    assert.match(await wrong.text(), /not the API token of this server/);

    const res = await signIn(server.url, TOKEN, {}, '/history?q=example.com');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/history?q=example.com');
    const cookie = parseSetCookie(res.headers.get('set-cookie'));
    assert.equal(cookie.name, 'oas_session');
    assert.ok(cookie.attrs.has('httponly'), 'HttpOnly');
    assert.equal(cookie.attrs.get('samesite'), 'Strict');
    assert.equal(cookie.attrs.get('path'), '/');
    assert.ok(!cookie.attrs.has('secure'), 'not Secure over plain HTTP');
    assert.ok(Number(cookie.attrs.get('max-age')) > 0);
    assert.ok(!cookie.value.includes(TOKEN) && cookie.value.length >= 32, 'a random session id, not the token');

    // The cookie reaches /ui/, /export/ and the API calls the pages make.
    const headers = { cookie: `oas_session=${cookie.value}` };
    assert.equal((await fetch(`${server.url}/ui/engines`, { headers })).status, 200);
    const id = await startAnalysis(server.url, { ...headers, origin: server.url });
    await waitResults(server.url, id, headers);
    assert.equal((await fetch(`${server.url}/export/${id}?format=csv`, { headers })).status, 200);

    // A state-changing request on the cookie from another origin is refused (CSRF).
    const crossOrigin: Record<string, string>[] = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const extra of crossOrigin) {
      const res2 = await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { ...json, ...headers, ...extra }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) });
      assert.equal(res2.status, 403, JSON.stringify(extra));
    }

    // Sign-out ends the session on the server, not only in the browser.
    const out = await fetch(`${server.url}/signout`, { headers, redirect: 'manual' });
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/signin');
    const cleared = parseSetCookie(out.headers.get('set-cookie'));
    assert.equal(cleared.name, 'oas_session');
    assert.equal(cleared.value, '');
    assert.equal(cleared.attrs.get('max-age'), '0');
    assert.equal((await fetch(`${server.url}/ui/engines`, { headers })).status, 401);
    assert.equal((await fetch(`${server.url}/ui/engines`, { headers: { cookie: 'oas_session=forged-session-id-value' } })).status, 401);
  });

  test('sign-in: Secure behind HTTPS (X-Forwarded-Proto), cross-origin posts refused, no open redirect', async () => {
    const secure = await signIn(server.url, TOKEN, { 'x-forwarded-proto': 'https' });
    assert.equal(secure.status, 303);
    assert.ok(parseSetCookie(secure.headers.get('set-cookie')).attrs.has('secure'), 'Secure over HTTPS');

    const crossOrigin: Record<string, string>[] = [{ origin: 'http://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }];
    for (const extra of crossOrigin) {
      const res = await signIn(server.url, TOKEN, extra);
      assert.equal(res.status, 403, JSON.stringify(extra));
      assert.equal(res.headers.get('set-cookie'), null);
    }
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/signout']) {
      const res = await signIn(server.url, TOKEN, {}, next);
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/', next);
    }
  });

  test('the token is nowhere in the data directory, and nowhere in the log', async () => {
    const id = await startAnalysis(server.url, bearer(), '8.8.8.8', ['reverse_dns', 'provider_12']);
    await waitResults(server.url, id, bearer());
    await startAnalysis(envServer.url, bearer(ENV_TOKEN));
    await sleep(300); // the analyses' last writes
    assert.deepEqual(filesContaining(config.dataDir, TOKEN), []);
    assert.deepEqual(filesContaining(envConfig.dataDir, ENV_TOKEN), []);
    assert.ok(!server.log().includes(TOKEN));
    assert.ok(!envServer.log().includes(ENV_TOKEN));
  });
});

describe('serving beyond loopback', () => {
  test('a non-loopback address without api_token: exit 2, one line naming api_token and allow_unauthenticated', async () => {
    const data = configFor(upstreams);
    for (const args of [['--host', '0.0.0.0'], ['--host', '::']]) {
      const run = await runOas(cwd, ['serve', '--port', '0', '--config', data.file, ...args]);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^oas: .*api_token.*allow_unauthenticated: true.*OAS_ALLOW_UNAUTHENTICATED/);
      noStack(run.stderr);
    }
    const viaEnv = await runOas(cwd, ['serve', '--port', '0', '--config', data.file], { env: { OAS_HOST: '0.0.0.0' } });
    assert.equal(viaEnv.code, 2);
  });

  test('allow_unauthenticated (or a token) lets it start; loopback addresses never need one', async () => {
    const data = configFor(upstreams);
    const cases: { env: Record<string, string>; args: string[]; status: number }[] = [
      { env: { OAS_ALLOW_UNAUTHENTICATED: 'true' }, args: ['--host', '0.0.0.0'], status: 200 },
      { env: { OAS_API_TOKEN: ENV_TOKEN }, args: ['--host', '0.0.0.0'], status: 401 },
      { env: {}, args: ['--host', '127.0.0.2'], status: 200 },
    ];
    for (const { env, args, status } of cases) {
      const opened = await spawnServe(data.file, { cwd, env, args });
      try {
        const port = new URL(opened.url).port;
        const res = await fetch(`http://127.0.0.1:${port}/ui/engines`).catch(() => fetch(`http://127.0.0.2:${port}/ui/engines`));
        assert.equal(res.status, status, JSON.stringify({ env, args }));
      } finally {
        await opened.stop();
      }
    }
  });
});

describe('allowed_hosts', () => {
  test('a foreign Host gets 421 {"error"} and no data, even with the token (DNS rebinding)', async () => {
    const id = await startAnalysis(server.url, bearer());
    for (const host of ['evil.example', `evil.example:${new URL(server.url).port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '']) {
      for (const path of ['/', `/api/results/${id}`, '/ui/engines', '/assets/oas.css', '/signin']) {
        const res = await rawGet(server.url, path, { host, ...bearer() });
        assert.equal(res.status, 421, `${host} ${path}`);
        assert.deepEqual(Object.keys(JSON.parse(res.body) as object), ['error']);
        assert.match(res.body, /allowed_hosts/);
        assert.doesNotMatch(res.body, /reverse_dns|example\.com|<html/);
      }
    }
    // Hosts the HTTP layer itself finds malformed are a 400, with no data either.
    for (const host of ['evil.example@127.0.0.1', 'localhost:1@evil.example', 'EVIL.example']) {
      const res = await rawGet(server.url, '/ui/engines', { host, ...bearer() });
      assert.ok(res.status === 400 || res.status === 421, `${host}: ${res.status}`);
      assert.doesNotMatch(res.body, /reverse_dns|example\.com/);
    }
  });

  test('localhost, 127.0.0.1 and [::1] with any port, and the configured names, are answered', async () => {
    const port = new URL(server.url).port;
    for (const host of ['localhost', `localhost:${port}`, 'localhost:1', `127.0.0.1:${port}`, '127.0.0.1', '[::1]', `[::1]:${port}`, 'oas.team.example', 'oas.team.example:443', 'oas.team.example.']) {
      const res = await rawGet(server.url, '/ui/engines', { host, ...bearer() });
      assert.equal(res.status, 200, host);
    }
    // The configured name belongs to one server only.
    assert.equal((await rawGet(envServer.url, '/ui/engines', { host: 'oas.team.example', ...bearer(ENV_TOKEN) })).status, 421);
  });
});

describe('CORS', () => {
  const preflight = (base: string, origin: string) => fetch(`${base}/api/analyze`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });

  test('closed by default: no Access-Control-Allow-Origin, preflight or not', async () => {
    const res = await preflight(envServer.url, 'https://soc.example');
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const get = await fetch(`${envServer.url}/ui/engines`, { headers: { origin: 'https://soc.example', ...bearer(ENV_TOKEN) } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), null);
  });

  test('a listed origin gets exactly its origin back (never *), preflight included; others get nothing', async () => {
    const res = await preflight(server.url, 'https://soc.example');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://soc.example');
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(',');
    for (const header of ['authorization', 'x-api-key', 'content-type']) assert.ok(allowed.includes(header), header);
    assert.match(res.headers.get('access-control-allow-methods')!, /POST/);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);

    const post = await fetch(`${server.url}/api/analyze`, {
      method: 'POST',
      headers: { origin: 'https://soc.example', ...json, ...bearer() },
      body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }),
    });
    assert.equal(post.status, 200);
    assert.equal(post.headers.get('access-control-allow-origin'), 'https://soc.example');
    assert.match(post.headers.get('vary')!, /Origin/i);

    for (const origin of ['https://evil.example', 'https://soc.example.evil.example', 'http://soc.example', 'null']) {
      const other = await preflight(server.url, origin);
      assert.equal(other.headers.get('access-control-allow-origin'), null, origin);
      const get = await fetch(`${server.url}/ui/engines`, { headers: { origin, ...bearer() } });
      assert.equal(get.headers.get('access-control-allow-origin'), null, origin);
    }
  });
});

describe('request log', () => {
  test('text: one line per request on stderr (time, client, method, path, status, ms), no query string, no token', async () => {
    const before = server.log().length;
    const id = await startAnalysis(server.url, bearer());
    await fetch(`${server.url}/ui/history?q=secret-search-${TOKEN.slice(3)}&page=1`, { headers: bearer() });
    await fetch(`${server.url}/ui/engines?token=${TOKEN}`);
    await fetch(`${server.url}/api/results/${id}?api_key=${TOKEN}`, { headers: { 'x-api-key': TOKEN } });
    await sleep(100);
    const lines = server.log().slice(before).trim().split('\n').filter((l) => !l.startsWith('oas listening'));
    const re = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) ([A-Z]+) (\S+) (\d{3}) (\d+)ms$/;
    const requests = lines.filter((l) => re.test(l)).map((l) => re.exec(l)!.slice(1));
    assert.ok(requests.some(([, client, method, path, status]) => client === '127.0.0.1' && method === 'POST' && path === '/api/analyze' && status === '200'), lines.join('\n'));
    assert.ok(requests.some(([, , method, path, status]) => method === 'GET' && path === '/ui/history' && status === '200'), lines.join('\n'));
    assert.ok(requests.some(([, , , path, status]) => path === '/ui/engines' && status === '401'), lines.join('\n'));
    assert.ok(requests.some(([, , , path]) => path === `/api/results/${id}`), lines.join('\n'));
    assert.ok(!Number.isNaN(Date.parse(requests[0]![0]!)));
    const text = server.log();
    assert.ok(!text.includes(TOKEN), 'no token in the log');
    assert.ok(!text.includes('secret-search'), 'no query string in the log');
  });

  test('json (--log-format json): one object per line with the same fields', async () => {
    const before = envServer.log().length;
    const id = await startAnalysis(envServer.url, { 'x-api-key': ENV_TOKEN });
    await fetch(`${envServer.url}/ui/history?q=hidden-query`, { headers: bearer(ENV_TOKEN) });
    await fetch(`${envServer.url}/ui/engines`, { headers: bearer('wrong') });
    await sleep(100);
    const lines = envServer.log().slice(before).trim().split('\n');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of entries) {
      assert.deepEqual(Object.keys(e).sort(), ['client', 'method', 'ms', 'path', 'status', 'time']);
      assert.equal(typeof e.ms, 'number');
      assert.equal(typeof e.status, 'number');
      assert.equal(e.client, '127.0.0.1');
    }
    assert.ok(entries.some((e) => e.method === 'POST' && e.path === '/api/analyze' && e.status === 200));
    assert.ok(entries.some((e) => e.path === '/ui/history' && e.status === 200));
    assert.ok(entries.some((e) => e.path === '/ui/engines' && e.status === 401));
    assert.ok(!envServer.log().includes('hidden-query'));
    assert.ok(!envServer.log().includes(ENV_TOKEN));
    assert.ok(id);
  });

  test('an engine error is logged with the engine id and its reason, never the engine key', async () => {
    const before = server.log().length;
    const id = await startAnalysis(server.url, bearer(), '8.8.8.8', ['provider_12']);
    const [result] = await waitResults(server.url, id, bearer());
    const reason = (result!.errors as Record<string, string>).provider_12!;
    assert.ok(reason, 'the engine failed (its base_url is not ipinfo)');
    const line = server.log().slice(before).split('\n').find((l) => l.includes('engine error'));
    assert.ok(line, server.log().slice(before));
    assert.match(line, /engine error: provider_12 \(analysis [0-9a-f-]{36}\): /);
    assert.ok(line.includes(reason), `${line} has ${reason}`);
    assert.ok(!server.log().includes(IPINFO_KEY), 'no engine key in the log');
  });
});

describe('concurrent authenticated clients', () => {
  test('20 analyses in parallel, half with Bearer and half with X-API-Key, all complete', async () => {
    const domains = ['example.com', 'www.example.com', 'cyberbro.net', '8.8.8.8'];
    const runs = Array.from({ length: 20 }, async (_, i) => {
      const headers = i % 2 ? bearer() : { 'x-api-key': TOKEN };
      const text = `${domains[i % domains.length]} 93.184.215.14`;
      const id = await startAnalysis(server.url, headers, text, ['reverse_dns', 'public_dns']);
      const results = await waitResults(server.url, id, headers);
      assert.equal(results.length, 2);
      assert.ok(results.every((r) => 'reverse_dns' in r && 'public_dns' in r));
      return id;
    });
    const ids = await Promise.all(runs);
    assert.equal(new Set(ids).size, 20);
  });
});
