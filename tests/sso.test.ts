/**
 * Single sign-on behind a reverse proxy, and X-Forwarded-For (issue 25), over real HTTP against
 * `oas serve` subprocesses and `oas users` as a subprocess. On the loopback, "from a trusted proxy"
 * is a server whose trusted_proxies holds 127.0.0.1, and "from any other address" one that trusts
 * only 10.9.9.9/32 (then every loopback request is untrusted).
 *
 * - From a trusted peer the auth_header names the user: created on first sight with
 *   auth_header_role (`oas users list` shows it), its analyses started_by that name, a role an
 *   admin gave it (`oas users add`, `oas users role`) applying at once; a malformed name is
 *   ignored. From an untrusted peer the header is ignored (401 without a token).
 * - X-Forwarded-For from a trusted peer is the client for the access log, the analyses' rate limit
 *   and the failure limit; from an untrusted one it is ignored (the log shows 127.0.0.1, and every
 *   request counts against it).
 * - Two servers on one Redis: a user the proxy named through one is a user of both, a role changed
 *   applies on both, and the failure limit counts the forwarded client across both.
 * - The pure parts of src/server/proxy-auth.ts: ranges, IPv4-mapped peers, the right-most untrusted
 *   hop, malformed and overlong headers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { forwardedClient, inRanges, parseRange } from '../src/server/proxy-auth.js';
import { noStack, runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'sso-test-token-Rw4Lp8Zq2Xm6Vn1B';
const HEADER = 'X-Forwarded-User';
const cwd = tempDir('oas-sso-');
const json = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let upstreams: Upstreams;
/** Trusts 127.0.0.1: auth_header names the user; api_token too; 3 failures a minute. */
let trusted: ServeProcess;
let trustedConfig: ReturnType<typeof configFor>;
/** Trusts only 10.9.9.9/32: the same headers are ignored. */
let untrusted: ServeProcess;
let untrustedConfig: ReturnType<typeof configFor>;
/** No authentication, trusts 127.0.0.1, one analysis a minute per client. */
let openTrusted: ServeProcess;
/** No authentication, trusts only 10.9.9.9/32, one analysis a minute per client. */
let openUntrusted: ServeProcess;

before(async () => {
  upstreams = await startUpstreams();
  const sso = { auth_header: HEADER, auth_header_role: 'analyst', api_token: TOKEN, log_format: 'json' };
  trustedConfig = configFor(upstreams, { ...sso, trusted_proxies: ['127.0.0.1'], auth_failures_per_minute: 3 });
  untrustedConfig = configFor(upstreams, { ...sso, trusted_proxies: ['10.9.9.9/32'] });
  const open = { rate_limit_per_minute: 1, log_format: 'json' };
  const openTrustedConfig = configFor(upstreams, { ...open, trusted_proxies: ['127.0.0.0/8'] });
  // The variable's form of the setting (comma-separated).
  const openUntrustedConfig = configFor(upstreams, open);
  // Each one that started is stopped by after(), even when another did not start.
  const started = await Promise.allSettled([
    spawnServe(trustedConfig.file, { cwd }),
    spawnServe(untrustedConfig.file, { cwd }),
    spawnServe(openTrustedConfig.file, { cwd }),
    spawnServe(openUntrustedConfig.file, { cwd, env: { OAS_TRUSTED_PROXIES: '10.9.9.9/32,fd00::/8' } }),
  ]);
  [trusted, untrusted, openTrusted, openUntrusted] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as [ServeProcess, ServeProcess, ServeProcess, ServeProcess];
  for (const s of started) if (s.status === 'rejected') throw s.reason;
});
after(async () => {
  await Promise.all([trusted?.stop(), untrusted?.stop(), openTrusted?.stop(), openUntrusted?.stop()]);
  await upstreams?.close();
});

async function analyze(base: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${base}/api/analyze`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ text: 'example.com', engines: ['reverse_dns'] }) });
}

async function analysisId(res: Response): Promise<string> {
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

/** The request log's JSON lines so far. */
function logLines(server: ServeProcess): { client: string; method: string; path: string; status: number }[] {
  return server.log().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { client: string; method: string; path: string; status: number }).filter((e) => typeof e.client === 'string');
}

/** The log line of a request (written as its answer is sent: waited for, 10 s at most). */
async function loggedRequest(server: ServeProcess, from: number, method: string, path: string): Promise<{ client: string; status: number }> {
  for (let i = 0; i < 400; i++) {
    const found = logLines(server).slice(from).find((e) => e.method === method && e.path === path);
    if (found) return found;
    await sleep(25);
  }
  throw new Error(`no log line for ${method} ${path}:\n${server.log()}`);
}

async function usersList(configFile: string): Promise<{ name: string; role: string }[]> {
  const run = await runOas(cwd, ['users', 'list', '--json', '--config', configFile]);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as { name: string; role: string }[];
}

async function oasUsers(args: string[], configFile: string): Promise<void> {
  const run = await runOas(cwd, ['users', ...args, '--config', configFile]);
  assert.equal(run.code, 0, run.stderr);
  noStack(run.stderr);
}

describe('proxy-auth: addresses (pure)', () => {
  const ranges = ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::ffff:192.168.0.0/112'].map((r) => parseRange(r)!);

  test('addresses and CIDR ranges; IPv4-mapped IPv6 peers and ranges are IPv4', () => {
    assert.ok(inRanges('127.0.0.1', ranges));
    assert.ok(inRanges('::ffff:127.0.0.1', ranges), 'a dual-stack socket\'s peer');
    assert.ok(inRanges('10.200.3.4', ranges));
    assert.ok(inRanges('::ffff:10.200.3.4', ranges));
    assert.ok(inRanges('fd12::1', ranges));
    assert.ok(inRanges('192.168.7.7', ranges), 'a range written as IPv4-mapped IPv6');
    assert.ok(!inRanges('127.0.0.2', ranges));
    assert.ok(!inRanges('11.0.0.1', ranges));
    assert.ok(!inRanges('::1', ranges));
    assert.ok(!inRanges('fe80::1', ranges));
    assert.ok(!inRanges('unknown', ranges));
    assert.ok(!inRanges('', ranges));
    assert.equal(parseRange('10.0.0.0/33'), undefined);
    assert.equal(parseRange('example.org'), undefined);
  });

  test('X-Forwarded-For: the right-most hop that is not a trusted proxy', () => {
    assert.equal(forwardedClient('127.0.0.1', undefined, ranges), '127.0.0.1');
    assert.equal(forwardedClient('::ffff:127.0.0.1', undefined, ranges), '127.0.0.1', 'logged as IPv4');
    assert.equal(forwardedClient('127.0.0.1', '198.51.100.7', ranges), '198.51.100.7');
    assert.equal(forwardedClient('127.0.0.1', '198.51.100.7, 10.1.1.1', ranges), '198.51.100.7', 'a chain of trusted proxies');
    assert.equal(forwardedClient('127.0.0.1', '6.6.6.6, 198.51.100.7', ranges), '198.51.100.7', 'what the client wrote to the left proves nothing');
    assert.equal(forwardedClient('127.0.0.1', '2001:db8::5', ranges), '2001:db8::5');
    assert.equal(forwardedClient('127.0.0.1', '::ffff:198.51.100.9', ranges), '198.51.100.9');
    assert.equal(forwardedClient('127.0.0.1', '10.1.1.1, 10.2.2.2', ranges), '10.1.1.1', 'all trusted: the left-most');
  });

  test('malformed X-Forwarded-For: ignored, the last trusted hop stays the client', () => {
    for (const value of ['garbage', '', ' ', '198.51.100.7:8080', '[2001:db8::5]', '999.1.1.1', 'unknown', '198.51.100.7 198.51.100.8', '0x7f.1']) {
      assert.equal(forwardedClient('127.0.0.1', value, ranges), '127.0.0.1', JSON.stringify(value));
    }
    assert.equal(forwardedClient('127.0.0.1', '198.51.100.7, garbage, 10.1.1.1', ranges), '10.1.1.1');
    assert.equal(forwardedClient('127.0.0.1', `${'1.1.1.1, '.repeat(400)}198.51.100.7`, ranges), '127.0.0.1', 'overlong: ignored whole');
  });
});

describe('single sign-on from a trusted proxy', () => {
  test('the header is the user: created as auth_header_role, listed by oas users, started_by its name', async () => {
    const id = await analysisId(await analyze(trusted.url, { [HEADER]: 'alice@soc.example' }));
    const view = await fetch(`${trusted.url}/ui/analyses/${id}`, { headers: { [HEADER]: 'alice@soc.example' } });
    assert.equal(view.status, 200);
    assert.equal(((await view.json()) as { started_by?: string }).started_by, 'alice@soc.example');
    const history = await fetch(`${trusted.url}/ui/history`, { headers: { [HEADER]: 'alice@soc.example' } });
    assert.equal(history.status, 200);
    const users = await usersList(trustedConfig.file);
    assert.deepEqual(users.find((u) => u.name === 'alice@soc.example')?.role, 'analyst');
    const run = await runOas(cwd, ['users', 'list', '--config', trustedConfig.file]);
    assert.match(run.stdout, /^alice@soc\.example\s+analyst\s+\S+\s+\S+$/m);
  });

  test('the pages work without signing in; /signin goes back; /signout says where to sign out', async () => {
    const headers = { [HEADER]: 'alice@soc.example' };
    for (const path of ['/', '/history', '/ui/engines']) {
      const res = await fetch(`${trusted.url}${path}`, { headers });
      assert.equal(res.status, 200, path);
    }
    assert.equal((await fetch(`${trusted.url}/ui/engines`)).status, 401, 'nobody named: a token is needed');
    const signin = await fetch(`${trusted.url}/signin?next=/history`, { headers, redirect: 'manual' });
    assert.equal(signin.status, 303);
    assert.equal(signin.headers.get('location'), '/history');
    const signout = await fetch(`${trusted.url}/signout`, { headers, redirect: 'manual' });
    assert.equal(signout.status, 200);
    const page = await signout.text();
    assert.match(page, /single sign-on/);
    assert.match(page, /alice@soc\.example/);
    assert.match(signout.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    // Without the header, /signout is the usual redirect to the sign-in form.
    const plain = await fetch(`${trusted.url}/signout`, { redirect: 'manual' });
    assert.equal(plain.status, 303);
    assert.equal(plain.headers.get('location'), '/signin');
  });

  test('MCP: the header is the user', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'sso-test', version: '1' } } });
    const headers = { ...json, accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(`${trusted.url}/mcp`, { method: 'POST', headers: { ...headers, [HEADER]: 'alice@soc.example' }, body })).status, 200);
    assert.equal((await fetch(`${trusted.url}/mcp`, { method: 'POST', headers, body })).status, 401);
  });

  test('a role an admin gave applies: added as viewer before, or changed with oas users role', async () => {
    await oasUsers(['add', 'bob', '--role', 'viewer'], trustedConfig.file);
    const refused = await analyze(trusted.url, { [HEADER]: 'bob' });
    assert.equal(refused.status, 403);
    const { error } = (await refused.json()) as { error: string };
    assert.match(error, /^forbidden: bob is a viewer; starting analyses needs the analyst or admin role/);
    assert.doesNotMatch(error, /\n/);
    assert.equal((await fetch(`${trusted.url}/ui/history`, { headers: { [HEADER]: 'bob' } })).status, 200, 'a viewer reads');

    await analysisId(await analyze(trusted.url, { [HEADER]: 'carol' }));
    assert.equal((await usersList(trustedConfig.file)).find((u) => u.name === 'carol')?.role, 'analyst');
    await oasUsers(['role', 'carol', '--role', 'viewer'], trustedConfig.file);
    assert.equal((await usersList(trustedConfig.file)).find((u) => u.name === 'carol')?.role, 'viewer');
    assert.equal((await analyze(trusted.url, { [HEADER]: 'carol' })).status, 403, 'at once');
    await oasUsers(['role', 'carol', '--role', 'admin'], trustedConfig.file);
    assert.equal((await fetch(`${trusted.url}/metrics`, { headers: { [HEADER]: 'carol' } })).status, 200);
    assert.equal((await fetch(`${trusted.url}/metrics`, { headers: { [HEADER]: 'alice@soc.example' } })).status, 403, 'an analyst is no admin');
  });

  test('oas users role: one line for an unknown user, a bad role or none', async () => {
    for (const [args, pattern] of [
      [['role', 'nobody', '--role', 'viewer'], /no user named nobody/],
      [['role', 'carol', '--role', 'root'], /--role must be one of viewer, analyst, admin/],
      [['role', 'carol'], /--role is required/],
    ] as const) {
      const run = await runOas(cwd, ['users', ...args, '--config', trustedConfig.file]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, pattern);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      noStack(run.stderr);
    }
  });

  test('a malformed name is ignored: 401 without a token, the token alone counts with one', async () => {
    for (const name of ['alice smith', 'a'.repeat(300), '.hidden', 'alice,bob', 'ali\tce', 'alice/../bob', '"alice"']) {
      const res = await analyze(trusted.url, { [HEADER]: name });
      assert.equal(res.status, 401, JSON.stringify(name));
    }
    const withToken = await analysisId(await analyze(trusted.url, { [HEADER]: 'alice smith', authorization: `Bearer ${TOKEN}` }));
    const view = await fetch(`${trusted.url}/ui/analyses/${withToken}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(((await view.json()) as { started_by?: string }).started_by, 'api_token');
    const names = (await usersList(trustedConfig.file)).map((u) => u.name);
    assert.ok(!names.some((n) => n.startsWith('alice ') || n.startsWith('aaaa')), names.join(', '));
  });

  test('requests without the header still use tokens', async () => {
    const id = await analysisId(await analyze(trusted.url, { authorization: `Bearer ${TOKEN}` }));
    assert.equal((await fetch(`${trusted.url}/api/is_analysis_complete/${id}`, { headers: { 'x-api-key': TOKEN } })).status, 200);
    assert.equal((await analyze(trusted.url, {})).status, 401);
  });
});

describe('single sign-on from an untrusted address', () => {
  test('the header is ignored: 401 without a token, never a user', async () => {
    const res = await analyze(untrusted.url, { [HEADER]: 'mallory' });
    assert.equal(res.status, 401);
    assert.equal((await fetch(`${untrusted.url}/ui/history`, { headers: { [HEADER]: 'mallory' } })).status, 401);
    assert.equal((await fetch(`${untrusted.url}/metrics`, { headers: { [HEADER]: 'mallory' } })).status, 401);
    const id = await analysisId(await analyze(untrusted.url, { [HEADER]: 'mallory', authorization: `Bearer ${TOKEN}` }));
    const view = await fetch(`${untrusted.url}/ui/analyses/${id}`, { headers: { [HEADER]: 'mallory', authorization: `Bearer ${TOKEN}` } });
    assert.equal(((await view.json()) as { started_by?: string }).started_by, 'api_token');
    assert.deepEqual((await usersList(untrustedConfig.file)).map((u) => u.name), []);
  });

  test('X-Forwarded-For is ignored: the log shows the peer', async () => {
    const from = logLines(untrusted).length;
    await fetch(`${untrusted.url}/ui/engines?probe=untrusted`, { headers: { 'x-forwarded-for': '198.51.100.66', authorization: `Bearer ${TOKEN}` } });
    const line = await loggedRequest(untrusted, from, 'GET', '/ui/engines');
    assert.equal(line.client, '127.0.0.1');
    assert.ok(!untrusted.log().includes('198.51.100.66'));
  });
});

describe('X-Forwarded-For from a trusted proxy', () => {
  test('the access log shows the forwarded client', async () => {
    const from = logLines(trusted).length;
    await fetch(`${trusted.url}/ui/engines`, { headers: { 'x-forwarded-for': '203.0.113.5, 198.51.100.20', [HEADER]: 'alice@soc.example' } });
    assert.equal((await loggedRequest(trusted, from, 'GET', '/ui/engines')).client, '198.51.100.20', 'the right-most untrusted hop');
    const next = logLines(trusted).length;
    await fetch(`${trusted.url}/history`, { headers: { 'x-forwarded-for': 'not-an-address' } });
    assert.equal((await loggedRequest(trusted, next, 'GET', '/history')).client, '127.0.0.1', 'malformed: the proxy itself');
  });

  test('the failure limit counts per forwarded client', async () => {
    const bad = { authorization: 'Bearer not-the-token-at-all' };
    for (let i = 0; i < 3; i++) {
      assert.equal((await fetch(`${trusted.url}/ui/engines`, { headers: { ...bad, 'x-forwarded-for': '203.0.113.77' } })).status, 401);
    }
    const limited = await fetch(`${trusted.url}/ui/engines`, { headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.77' } });
    assert.equal(limited.status, 429, 'even with the valid token');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const other = await fetch(`${trusted.url}/ui/engines`, { headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.78' } });
    assert.equal(other.status, 200, 'another client behind the same proxy');
    assert.equal((await fetch(`${trusted.url}/ui/engines`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, 'the proxy itself');
  });

  test('the rate limit counts per forwarded client', async () => {
    const from = logLines(openTrusted).length;
    await analysisId(await analyze(openTrusted.url, { 'x-forwarded-for': '198.51.100.10' }));
    await analysisId(await analyze(openTrusted.url, { 'x-forwarded-for': '198.51.100.11' }));
    const again = await analyze(openTrusted.url, { 'x-forwarded-for': '198.51.100.10' });
    assert.equal(again.status, 429);
    assert.ok(Number(again.headers.get('retry-after')) >= 1);
    for (let i = 0; i < 400 && logLines(openTrusted).slice(from).filter((e) => e.path === '/api/analyze').length < 3; i++) await sleep(25);
    const clients = logLines(openTrusted).slice(from).filter((e) => e.path === '/api/analyze').map((e) => `${e.client} ${e.status}`);
    assert.deepEqual(clients, ['198.51.100.10 200', '198.51.100.11 200', '198.51.100.10 429']);
  });
});

describe('X-Forwarded-For from an untrusted address (OAS_TRUSTED_PROXIES elsewhere)', () => {
  test('ignored: both requests count against 127.0.0.1, and the log shows it', async () => {
    const from = logLines(openUntrusted).length;
    await analysisId(await analyze(openUntrusted.url, { 'x-forwarded-for': '198.51.100.10' }));
    const second = await analyze(openUntrusted.url, { 'x-forwarded-for': '198.51.100.11' });
    assert.equal(second.status, 429);
    for (let i = 0; i < 400 && logLines(openUntrusted).slice(from).filter((e) => e.path === '/api/analyze').length < 2; i++) await sleep(25);
    const clients = logLines(openUntrusted).slice(from).filter((e) => e.path === '/api/analyze').map((e) => `${e.client} ${e.status}`);
    assert.deepEqual(clients, ['127.0.0.1 200', '127.0.0.1 429']);
    assert.ok(!openUntrusted.log().includes('198.51.100.1'));
  });
});

describe('configuration', () => {
  test('auth_header without trusted_proxies is refused in one line; a bad range names the key', async () => {
    const noProxy = configFor(upstreams, { auth_header: HEADER });
    let run = await runOas(cwd, ['serve', '--port', '0', '--config', noProxy.file]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /"auth_header" needs "trusted_proxies"/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    noStack(run.stderr);
    run = await runOas(cwd, ['serve', '--port', '0', '--config', noProxy.file], { env: { OAS_TRUSTED_PROXIES: '10.0.0.0/40' } });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /trusted_proxies/);
    assert.match(run.stderr, /CIDR/);
    noStack(run.stderr);
  });

  test('with auth_header and a trusted proxy, a non-loopback host needs no api_token', async () => {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: past the access check, binding fails.
    const cfg = configFor(upstreams, { auth_header: HEADER, trusted_proxies: ['127.0.0.1'] });
    const open = configFor(upstreams, {});
    const refused = await runOas(cwd, ['serve', '--host', '192.0.2.1', '--port', '0', '--config', open.file]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /refusing to serve on 192\.0\.2\.1 without an API token/);
    const allowed = await runOas(cwd, ['serve', '--host', '192.0.2.1', '--port', '0', '--config', cfg.file]);
    assert.doesNotMatch(allowed.stderr, /refusing to serve/);
    assert.match(allowed.stderr, /cannot serve/);
    noStack(allowed.stderr);
  });
});

describe('two servers on one Redis', { skip: redisSkip, timeout: 60_000 }, () => {
  let redis: RedisServer;
  let a: ServeProcess;
  let b: ServeProcess;
  const me = async (server: ServeProcess, headers: Record<string, string>) => {
    const res = await fetch(`${server.url}/ui/me`, { headers });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as { name: string; role: string };
  };

  before(async () => {
    redis = await startRedis();
    const settings = { redis_url: redis.url, trusted_proxies: ['127.0.0.1'], auth_header: HEADER, auth_header_role: 'analyst', auth_failures_per_minute: 2 };
    const started = await Promise.allSettled([spawnServe(configFor(upstreams, settings).file, { cwd }), spawnServe(configFor(upstreams, settings).file, { cwd })]);
    [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as [ServeProcess, ServeProcess];
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.close();
  });

  test('a user named through one server is a user of both; a role changed applies on both', async () => {
    assert.deepEqual(await me(a, { [HEADER]: 'dave' }), { name: 'dave', role: 'analyst' });
    assert.deepEqual(await me(b, { [HEADER]: 'dave' }), { name: 'dave', role: 'analyst' });
    const listed = await runOas(cwd, ['users', 'list', '--json', '--redis', redis.url]);
    assert.deepEqual((JSON.parse(listed.stdout) as { name: string; role: string }[]).map((u) => [u.name, u.role]), [['dave', 'analyst']]);
    const run = await runOas(cwd, ['users', 'role', 'dave', '--role', 'viewer', '--redis', redis.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await me(b, { [HEADER]: 'dave' }), { name: 'dave', role: 'viewer' });
    assert.equal((await analyze(a.url, { [HEADER]: 'dave' })).status, 403);
  });

  test('the failure limit counts the forwarded client across both servers', async () => {
    const added = await runOas(cwd, ['users', 'add', 'erin', '--role', 'analyst', '--redis', redis.url]);
    assert.equal(added.code, 0, added.stderr);
    const token = added.stdout.trim();
    const bad = { authorization: 'Bearer not-a-token-of-anyone', 'x-forwarded-for': '203.0.113.90' };
    assert.equal((await fetch(`${a.url}/ui/engines`, { headers: bad })).status, 401);
    assert.equal((await fetch(`${b.url}/ui/engines`, { headers: bad })).status, 401);
    const limited = await fetch(`${a.url}/ui/engines`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.90' } });
    assert.equal(limited.status, 429);
    assert.equal((await fetch(`${b.url}/ui/engines`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.91' } })).status, 200);
    assert.equal((await fetch(`${b.url}/ui/engines`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'the proxy itself');
    for (const server of [a, b]) assert.ok(!server.log().includes(token), 'no token in the log');
  });
});
