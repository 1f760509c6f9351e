/**
 * Issue 38 with `redis_url`: two `oas serve` on one Redis (each with its worker) see the same
 * allowlist and marks at once. An entry added on one keeps the next analysis on the other from
 * sending what it covers to any engine; a mark made on the second shows in the first's list and
 * decides the verdict of its next analysis; `oas allow list` and `oas marks` with the same
 * redis_url read them too. Engines on loopback fakes; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'knowledge-redis-token-Qm8Zr2Lx5Vt9';

interface Row { observable: string; intel: unknown; withheld?: Record<string, string>; allowlisted?: Record<string, unknown>; mark?: Record<string, unknown> }

describe('allowlist and marks on one Redis', { skip: redisSkip, timeout: 120_000 }, () => {
  let redis: RedisServer;
  let upstreams: Upstreams;
  let intel: FakeHttpServer;
  let config: { dir: string; file: string };
  const servers: ServeProcess[] = [];

  before(async () => {
    redis = await startRedis();
    upstreams = await startUpstreams();
    intel = await startFakeHttp({ 'GET /intel/*': () => ({ json: { score: 10 } }) });
    config = configFor(upstreams, {
      redis_url: redis.url,
      api_token: TOKEN,
      custom_engines: { intel: { types: ['IPv4', 'FQDN'], request: { url: `${intel.url}/intel/{value}` }, fields: { score: '/score' }, summary: 'score {score}' } },
    });
    servers.push(await spawnServe(config.file, { cwd: config.dir }), await spawnServe(config.file, { cwd: config.dir }));
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await Promise.all([upstreams?.close(), intel?.close()]);
    await redis?.close();
  });

  const call = async (server: ServeProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/${path}`, {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const analyse = async (server: ServeProcess, text: string): Promise<Map<string, Row>> => {
    const started = await call(server, 'POST', 'analyze', { text, engines: ['intel'], ignore_cache: true });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const id = (started.body as { analysis_id: string }).analysis_id;
    for (;;) {
      if (((await call(server, 'GET', `is_analysis_complete/${id}`)).body as { complete: boolean }).complete) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return new Map(((await call(server, 'GET', `results/${id}`)).body as Row[]).map((row) => [row.observable, row]));
  };
  const asked = () => intel.hits('GET /intel/').map((hit) => decodeURIComponent(hit.path.slice('/intel/'.length))).sort();

  test('an entry added on one server applies to the next analysis on the other', async () => {
    const [one, two] = servers as [ServeProcess, ServeProcess];
    assert.equal((await call(one, 'POST', 'allowlist', { value: '*.acme-corp.com', reason: 'our own domains' })).status, 201);
    intel.reset();
    const rows = await analyse(two, 'mail.acme-corp.com 8.8.8.8');
    assert.deepEqual(asked(), ['8.8.8.8']);
    assert.deepEqual(rows.get('mail.acme-corp.com')!.withheld, { intel: 'allowlisted: our own domains' });
    assert.equal(rows.get('mail.acme-corp.com')!.allowlisted!['value'], '*.acme-corp.com');
    const listed = await runOas(config.dir, ['allow', 'list', '--json', '--redis', redis.url]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual((JSON.parse(listed.stdout) as { value: string }[]).map((e) => e.value), ['*.acme-corp.com']);
    // Removed on the second, the first sends it again.
    assert.equal((await call(two, 'DELETE', `allowlist/${encodeURIComponent('*.acme-corp.com')}`)).status, 200);
    intel.reset();
    await analyse(one, 'mail.acme-corp.com');
    assert.deepEqual(asked(), ['mail.acme-corp.com']);
  });

  test('a mark made on one server shows in the other\'s list and decides its next analysis', async () => {
    const [one, two] = servers as [ServeProcess, ServeProcess];
    assert.equal((await call(two, 'POST', 'marks', { value: '8.8.4.4', verdict: 'malicious', note: 'red-team C2 for exercise X' })).status, 201);
    const marks = (await call(one, 'GET', 'marks')).body as { value: string; by: string }[];
    assert.deepEqual(marks.map((m) => [m.value, m.by]), [['8.8.4.4', 'api_token']]);
    const row = (await analyse(one, '8.8.4.4')).get('8.8.4.4')!;
    assert.equal(row.mark!['verdict'], 'malicious');
    assert.equal(row.mark!['note'], 'red-team C2 for exercise X');
    const cli = await runOas(config.dir, ['marks', '--redis', redis.url]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^8\.8\.4\.4\s+malicious\s+red-team C2 for exercise X\s+api_token\s/m);
  });
});
