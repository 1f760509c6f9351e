/**
 * The limits of `oas serve` and `oas analyze`, over real HTTP and the CLI as a subprocess:
 * `rate_limit_per_minute` (429 with Retry-After; per token when authenticated, else per address;
 * only analyses that start count) and `max_observables` (the whole analysis refused: API 413,
 * CLI exit 2, naming the setting).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { noStack, runOas } from './helpers/cli.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'limits-token-Qw7Er4Ty1Ui8Op5A';
const cwd = tempDir('oas-limits-');
const json = { 'content-type': 'application/json' };

let upstreams: Upstreams;
const servers: ServeProcess[] = [];

async function serve(extra: Record<string, unknown>): Promise<ServeProcess> {
  const server = await spawnServe(configFor(upstreams, extra).file, { cwd });
  servers.push(server);
  return server;
}

function analyze(base: string, headers: Record<string, string> = {}, text = 'example.com'): Promise<Response> {
  return fetch(`${base}/api/analyze`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ text, engines: ['reverse_dns'] }) });
}

/** `n` distinct observables, one per line. */
const observables = (n: number) => Array.from({ length: n }, (_, i) => `host${i}.example.com`).join('\n');

before(async () => {
  upstreams = await startUpstreams();
});
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await upstreams.close();
});

describe('rate_limit_per_minute', () => {
  test('over the limit: 429 {"error"} naming the setting, with Retry-After in seconds; refused requests do not count', async () => {
    const server = await serve({ rate_limit_per_minute: 3 });
    // Requests refused for their own reasons give their point back.
    assert.equal((await analyze(server.url, {}, 'no observable here')).status, 400);
    assert.equal((await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: json, body: '{' })).status, 400);
    assert.equal((await analyze(server.url, { 'content-type': 'text/plain' })).status, 415);
    for (let i = 0; i < 3; i++) assert.equal((await analyze(server.url)).status, 200, `analysis ${i + 1}`);
    for (let i = 0; i < 2; i++) {
      const res = await analyze(server.url);
      assert.equal(res.status, 429);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers.get('retry-after')}`);
      const body = (await res.json()) as { error: string };
      assert.deepEqual(Object.keys(body), ['error']);
      assert.match(body.error, /rate_limit_per_minute/);
    }
    // Only starting analyses is limited: reading goes on.
    assert.equal((await fetch(`${server.url}/ui/engines`)).status, 200);
    assert.equal((await fetch(`${server.url}/ui/history`)).status, 200);
  });

  test('authenticated, the client is the token: Bearer, X-API-Key and the session cookie share one budget; 401s cost nothing', async () => {
    const server = await serve({ rate_limit_per_minute: 3, api_token: TOKEN });
    for (let i = 0; i < 5; i++) assert.equal((await analyze(server.url, { authorization: 'Bearer wrong' })).status, 401);
    const signin = await fetch(`${server.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: TOKEN }).toString(),
    });
    const cookie = /oas_session=[^;]+/.exec(signin.headers.get('set-cookie') ?? '')![0];
    assert.equal((await analyze(server.url, { authorization: `Bearer ${TOKEN}` })).status, 200);
    assert.equal((await analyze(server.url, { 'x-api-key': TOKEN })).status, 200);
    assert.equal((await analyze(server.url, { cookie, origin: server.url })).status, 200);
    const res = await analyze(server.url, { cookie, origin: server.url });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.equal((await analyze(server.url, { authorization: `Bearer ${TOKEN}` })).status, 429);
  });

  test('0 turns the limit off', async () => {
    const server = await serve({ rate_limit_per_minute: 0 });
    for (let i = 0; i < 12; i++) assert.equal((await analyze(server.url)).status, 200, `analysis ${i + 1}`);
  });
});

describe('max_observables', () => {
  test('API: more observables than max_observables is 413 naming the setting, nothing recorded; as many is fine', async () => {
    const server = await serve({ max_observables: 5, api_token: TOKEN });
    const auth = { 'x-api-key': TOKEN };
    const res = await analyze(server.url, auth, observables(6));
    assert.equal(res.status, 413);
    const body = (await res.json()) as { error: string };
    assert.deepEqual(Object.keys(body), ['error']);
    assert.match(body.error, /max_observables/);
    assert.match(body.error, /6/);
    const history = (await (await fetch(`${server.url}/ui/history`, { headers: auth })).json()) as { total: number };
    assert.equal(history.total, 0, 'the refused analysis is not recorded');
    assert.equal((await analyze(server.url, auth, observables(5))).status, 200);
    // Duplicates count once: this is one observable.
    assert.equal((await analyze(server.url, auth, 'example.com '.repeat(50))).status, 200);
  });

  test('CLI: exit 2 with one line naming max_observables, before any lookup', async () => {
    const config = configFor(upstreams, { max_observables: 3 });
    const run = await runOas(cwd, ['analyze', '--engines', 'reverse_dns', '--config', config.file], { input: observables(4) });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /^oas: too many observables: .*max_observables \(3\)/);
    noStack(run.stderr);
    const viaEnv = await runOas(cwd, ['analyze', 'example.com 8.8.8.8', '--engines', 'reverse_dns', '--json', '--config', config.file], { env: { OAS_MAX_OBSERVABLES: '1' } });
    assert.equal(viaEnv.code, 2);
    assert.match(viaEnv.stderr, /max_observables \(1\)/);
    const fits = await runOas(cwd, ['analyze', 'example.com 8.8.8.8', '--engines', 'reverse_dns', '--json', '--config', config.file]);
    assert.equal(fits.code, 0, fits.stderr);
  });
});
