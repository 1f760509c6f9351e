/**
 * Scale out on Redis (issue 16), as a team runs it: two `oas serve` (each with its in-process
 * worker) and two `oas worker` as subprocesses sharing one real redis-server, the engines against
 * loopback fakes with some latency.
 *
 * - A worker and the server that accepted an analysis are SIGKILLed in the middle of it: the
 *   analysis completes (the killed worker's jobs are taken over), served by the other server,
 *   every observable once, in order; results, history and exports answer the same from every
 *   server, a freshly started one included.
 * - The engine cache is shared between servers; `ignore_cache` bypasses it.
 * - `oas worker` stopped with SIGTERM while it holds jobs finishes them and exits 0.
 * - No credential (API token, engine keys) appears anywhere in Redis: key names or values of any
 *   type (the analyses, the cache, BullMQ's jobs and event streams, the counters).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { startFakeHttp, type FakeHttpServer, type FakeRequest } from './fakes/http.js';
import * as ipinfoFake from './fakes/ipinfo.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, spawnWorker, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { removeTempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

/** Secrets every process is configured with: none may reach Redis. */
const API_TOKEN = 'OASSECRET-api-token-7c41e9d2b6';
const IPINFO_KEY = 'OASSECRET-ipinfo-key-3f8a0b5e11';
const VIRUSTOTAL_KEY = 'OASSECRET-vt-key-unused-9d2c64a7';
const SECRETS = [API_TOKEN, IPINFO_KEY, VIRUSTOTAL_KEY];

/** Two keyless engines on the fakes: reverse_dns (DNS over UDP) and provider_13 (ipquery, HTTP). */
const ENGINES = ['reverse_dns', 'provider_13'];
const WORKER_CONCURRENCY = 4;
/** Added to every fake upstream answer: an analysis of a few hundred observables takes seconds. */
const UPSTREAM_LATENCY_MS = 40;

/**
 * ipquery.io's answer for `ip`: a VPN (so `suspicious`) when its last octet is a multiple of 3,
 * else nothing to judge (`unknown`): the verdict counts of an analysis are known in advance.
 */
function ipqueryAnswer(ip: string) {
  return {
    ip,
    isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' },
    location: { country: 'United States', country_code: 'US', city: 'Mountain View', state: 'California' },
    risk: { is_mobile: false, is_vpn: isVpn(ip), is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 },
  };
}

const isVpn = (ip: string) => Number(ip.split('.')[3]) % 3 === 0;
const ipqueryRoute = (req: FakeRequest) => ({ json: ipqueryAnswer(req.path.slice('/ipquery/'.length)) });

/** `n` distinct public IPv4 addresses under `prefix` (two octets). */
function ips(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}.${Math.floor(i / 200) + 1}.${(i % 200) + 1}`);
}

const children: ChildProcess[] = [];

async function worker(configFile: string): Promise<WorkerProcess> {
  const started = await spawnWorker(configFile, { args: ['--concurrency', String(WORKER_CONCURRENCY)] });
  children.push(started.child);
  return started;
}

async function serve(configFile: string): Promise<ServeProcess> {
  const server = await spawnServe(configFile);
  children.push(server.child);
  return server;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exit;
}

const auth = { authorization: `Bearer ${API_TOKEN}` };

async function get(server: ServeProcess, path: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { headers: auth });
}

async function getJson<T = unknown>(server: ServeProcess, path: string): Promise<T> {
  const res = await get(server, path);
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return (await res.json()) as T;
}

async function getText(server: ServeProcess, path: string): Promise<string> {
  const res = await get(server, path);
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return res.text();
}

async function analyze(server: ServeProcess, body: { text: string; engines: string[]; ignore_cache?: boolean; tlp?: string }): Promise<string> {
  const res = await fetch(`${server.url}/api/analyze`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

/** Polls `check` until it is true; fails with `what` past the (generous) deadline. */
async function until(check: () => Promise<boolean>, what: string, deadlineMs = 60_000, everyMs = 25): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function complete(server: ServeProcess, id: string): Promise<void> {
  await until(async () => (await getJson<{ complete: boolean }>(server, `/api/is_analysis_complete/${id}`)).complete, `analysis ${id} to complete`);
}

type Result = Record<string, unknown> & { observable: string; errors?: Record<string, string> };

/** One result per observable, in input order, with every engine's key and no error. */
function assertWhole(results: Result[], input: string[]): void {
  assert.equal(results.length, input.length, 'one result per observable');
  assert.deepEqual(results.map((r) => r.observable), input, 'the observables in input order, none lost or duplicated');
  for (const result of results) {
    for (const engine of ENGINES) assert.ok(engine in result, `${result.observable} has a ${engine} entry`);
    assert.equal(result.errors, undefined, `${result.observable}: ${JSON.stringify(result.errors)}`);
  }
}

interface HistoryItem {
  id: string;
  complete: boolean;
  observable_count: number;
  verdicts: { malicious: number; suspicious: number; clean: number; unknown: number; worst: string } | null;
}

async function historyItem(server: ServeProcess, id: string, first: string): Promise<HistoryItem | undefined> {
  const page = await getJson<{ items: HistoryItem[] }>(server, `/ui/history?q=${encodeURIComponent(first)}&per_page=50`);
  return page.items.find((item) => item.id === id);
}

/** Everything in the Redis: every key's name and its value, whatever its type. */
async function dumpRedis(client: Redis): Promise<{ text: string; types: Set<string>; keys: string[] }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  const parts: string[] = [];
  const types = new Set<string>();
  for (const key of keys) {
    const type = await client.type(key);
    types.add(type);
    parts.push(`${type} ${key}`);
    switch (type) {
      case 'string': parts.push((await client.getBuffer(key))?.toString('latin1') ?? ''); break;
      case 'hash': parts.push(...Object.entries(await client.hgetall(key)).flat()); break;
      case 'list': parts.push(...await client.lrange(key, 0, -1)); break;
      case 'set': parts.push(...await client.smembers(key)); break;
      case 'zset': parts.push(...await client.zrange(key, 0, -1, 'WITHSCORES')); break;
      case 'stream': parts.push(...(await client.xrange(key, '-', '+')).flatMap(([entry, fields]) => [entry, ...fields])); break;
      case 'none': break; // gone since the scan (a lock, a marker)
      default: assert.fail(`key ${key} of a type this dump does not read: ${type}`);
    }
  }
  return { text: parts.join('\n'), types, keys };
}

describe('many servers and workers on one Redis', { skip: redisSkip, timeout: 180_000 }, () => {
  let redis: RedisServer;
  let upstreams: Upstreams;
  let ipinfo: FakeHttpServer;
  let config: { dir: string; file: string };
  let serverA: ServeProcess;
  let serverB: ServeProcess;
  let serverC: ServeProcess | undefined;
  let worker1: WorkerProcess;
  let worker2: WorkerProcess;
  /** Everything in Redis at some moments: mid-run (jobs waiting and held) and at the end. */
  const dumps: Awaited<ReturnType<typeof dumpRedis>>[] = [];

  before(async () => {
    redis = await startRedis();
    upstreams = await startUpstreams({ latencyMs: UPSTREAM_LATENCY_MS });
    upstreams.intel.route('GET /ipquery/*', ipqueryRoute);
    ipinfo = await startFakeHttp(ipinfoFake.fakeRoutes(), { latencyMs: UPSTREAM_LATENCY_MS });
    config = configFor(upstreams, {
      redis_url: redis.url,
      job_lock_ms: 1000,
      worker_concurrency: WORKER_CONCURRENCY,
      api_token: API_TOKEN,
      // The API limiter's counters live in Redis too (per client: never the token itself).
      rate_limit_per_minute: 100_000,
      engines: {
        provider_12: { ...ipinfoFake.fakeSettings(ipinfo.url), api_key: IPINFO_KEY },
        provider_24: { api_key: VIRUSTOTAL_KEY },
      },
    });
    [serverA, serverB, worker1, worker2] = await Promise.all([serve(config.file), serve(config.file), worker(config.file), worker(config.file)]);
  });

  after(async () => {
    await Promise.all(children.map(kill));
    await upstreams?.close();
    await ipinfo?.close();
    await redis?.close();
    if (config) removeTempDir(config.dir);
  });

  test('a worker and the accepting server SIGKILLed mid-analysis: it completes, nothing lost or duplicated, every server answers the same', async () => {
    const input = ips('45.79', 240);
    const id = await analyze(serverA, { text: input.join('\n'), engines: ENGINES });
    const rows = `oas:analysis:${id}:rows`;
    await until(async () => (await redis.client.hlen(rows)) >= 24, 'the first observables to finish', 30_000, 10);
    await Promise.all([kill(worker1.child), kill(serverA.child)]);
    const doneAtKill = await redis.client.hlen(rows);
    assert.ok(doneAtKill < input.length, `killed in the middle (${doneAtKill} of ${input.length} done)`);

    await complete(serverB, id);
    const results = await getJson<Result[]>(serverB, `/api/results/${id}`);
    assertWhole(results, input);
    assert.equal(await redis.client.hlen(rows), input.length, 'one row per observable');
    // The killed worker's jobs were taken over (BullMQ's stalled-job check), not lost.
    const events = await redis.client.xrange('oas:bull:observables:events', '-', '+');
    assert.ok(events.some(([, fields]) => fields[1] === 'stalled'), 'the dead worker\'s jobs were taken over as stalled jobs');

    serverC = await serve(config.file);
    const itemB = await historyItem(serverB, id, input[0]!);
    assert.ok(itemB, 'the analysis is in the history');
    assert.equal(itemB.complete, true);
    assert.equal(itemB.observable_count, input.length);
    const suspicious = input.filter(isVpn).length;
    assert.deepEqual(itemB.verdicts, { malicious: 0, suspicious, clean: 0, unknown: input.length - suspicious, worst: 'suspicious' }, 'the history shows its verdict counts');
    for (const server of [serverB, serverC]) {
      assert.deepEqual(await getJson(server, `/api/is_analysis_complete/${id}`), { complete: true });
      assert.deepEqual(await getJson(server, `/api/results/${id}`), results);
      assert.deepEqual(await historyItem(server, id, input[0]!), itemB);
    }
    for (const format of ['json', 'csv']) {
      const fromB = await getText(serverB, `/export/${id}?format=${format}`);
      assert.ok(fromB.includes(input[input.length - 1]!), `the ${format} export holds the observables`);
      assert.equal(await getText(serverC, `/export/${id}?format=${format}`), fromB, `${format} export from B and C`);
    }
  });

  test('the engine cache is shared: a result cached through one server is a hit through another; ignore_cache bypasses it', async () => {
    assert.ok(serverC, 'server C was started');
    const input = ips('45.80', 20);
    const engines = [...ENGINES, 'provider_12'];
    const calls = () => ({
      ipquery: upstreams.intel.hits('GET /ipquery/').length,
      ipinfo: ipinfo.hits('GET /ipinfo/').length,
      dns: upstreams.dns.queries.length,
    });
    const first = await analyze(serverB, { text: input.join('\n'), engines });
    await complete(serverB, first);
    const before = calls();
    assert.ok(before.ipquery >= input.length && before.ipinfo >= input.length, 'the first analysis called the upstreams');

    const second = await analyze(serverC, { text: input.join('\n'), engines });
    await complete(serverC, second);
    assert.deepEqual(calls(), before, 'no upstream called again: every answer came from the shared cache');
    const cached = await getJson<Result[]>(serverC, `/api/results/${second}`);
    const earlier = await getJson<Result[]>(serverB, `/api/results/${first}`);
    // Seen before (issue 38): the second carries the first; the rest is the same, from the cache.
    assert.ok(earlier.every((r) => r.seen === null), 'no analysis held these before the first');
    assert.ok(cached.every((r) => (r.seen as { last_analysis_id?: string } | null)?.last_analysis_id === first), 'the second says the first held them');
    const unseen = (results: Result[]) => results.map(({ seen: _seen, ...rest }) => rest);
    assert.deepEqual(unseen(cached), unseen(earlier));

    const third = await analyze(serverC, { text: input.join('\n'), engines, ignore_cache: true });
    await complete(serverC, third);
    const now = calls();
    assert.ok(now.ipquery >= before.ipquery + input.length, 'ignore_cache: ipquery called again for each observable');
    assert.ok(now.ipinfo >= before.ipinfo + input.length, 'ignore_cache: ipinfo called again for each observable');
    assert.ok(now.dns > before.dns, 'ignore_cache: DNS asked again');
  });

  test('the analysis\'s TLP holds on the workers: at TLP:RED a third-party engine is sent nothing, its key null and the reason in withheld', async () => {
    const input = ips('45.81', 6);
    const before = upstreams.intel.hits('GET /ipquery/').length;
    const id = await analyze(serverB, { text: input.join('\n'), engines: ['provider_13'], ignore_cache: true, tlp: 'RED' });
    await complete(serverB, id);
    const results = await getJson<Result[]>(serverB, `/api/results/${id}`);
    assert.equal(results.length, input.length);
    for (const result of results) {
      assert.equal(result['provider_13'], null, `${result.observable}: no answer`);
      assert.match(String((result.withheld as Record<string, string> | undefined)?.['provider_13']), /TLP:RED/, `${result.observable}: withheld, saying why`);
    }
    assert.equal(upstreams.intel.hits('GET /ipquery/').length, before, 'no request reached ipquery');
  });

  test('oas worker stopped with SIGTERM while it holds jobs finishes them, exits 0, and the analysis completes whole', async () => {
    assert.ok(serverC, 'server C was started');
    // Taking jobs now: servers B and C and worker 2, each WORKER_CONCURRENCY at once. ipquery's
    // answers are held until every one of them holds its share, so worker 2 surely holds jobs.
    const holders = 3 * WORKER_CONCURRENCY;
    const waiting: (() => void)[] = [];
    let open = false;
    const release = () => {
      open = true;
      for (const go of waiting.splice(0)) go();
    };
    const safety = setTimeout(release, 20_000);
    upstreams.intel.route('GET /ipquery/*', async (req) => {
      if (!open) await new Promise<void>((go) => waiting.push(go));
      return ipqueryRoute(req);
    });
    try {
      const input = ips('45.81', 60);
      const id = await analyze(serverC!, { text: input.join('\n'), engines: [...ENGINES, 'provider_12'] });
      await until(async () => waiting.length >= holders, `${holders} ipquery calls held`, 20_000, 10);
      // Redis with jobs waiting and held, for the secrets test.
      const midRun = await dumpRedis(redis.client);
      assert.ok(midRun.keys.some((key) => key.startsWith(`oas:bull:observables:${id}-`)), 'the dump holds the analysis\'s jobs');
      dumps.push(midRun);
      worker2.child.kill('SIGTERM');
      await until(async () => /stopping/.test(worker2.stderr()), 'worker 2 to say it is stopping', 10_000, 10);
      const held = /finishing (\d+) job/.exec(worker2.stderr());
      assert.ok(held && Number(held[1]) > 0, `worker 2 held jobs when told to stop: ${worker2.stderr()}`);
      release();
      assert.equal(await worker2.exited, 0, 'oas worker exits 0 after SIGTERM');
      assert.doesNotMatch(worker2.log(), /\n\s+at .+:\d+:\d+/, 'no stack trace');

      await complete(serverB, id);
      assertWhole(await getJson<Result[]>(serverB, `/api/results/${id}`), input);
      assert.equal(await redis.client.hlen(`oas:analysis:${id}:rows`), input.length);
    } finally {
      clearTimeout(safety);
      release();
      upstreams.intel.route('GET /ipquery/*', ipqueryRoute);
    }
  });

  test('no secret in Redis: not in a key name, a job, a cached value, a stream, a counter or a session', async () => {
    assert.ok(serverC, 'server C was started');
    // A browser signs in through server B: its session is in Redis, and good on server C too.
    const signin = await fetch(`${serverB.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: serverB.url },
      body: new URLSearchParams({ token: API_TOKEN, next: '/' }).toString(),
    });
    assert.equal(signin.status, 303);
    const cookie = /oas_session=([^;]+)/.exec(signin.headers.get('set-cookie') ?? '');
    assert.ok(cookie, 'a session cookie');
    const session = cookie[1]!;
    const fromC = await fetch(`${serverC!.url}/ui/history`, { headers: { cookie: `oas_session=${session}` } });
    assert.equal(fromC.status, 200, 'the session is good on another server');
    await fromC.body?.cancel();

    dumps.push(await dumpRedis(redis.client));
    const text = dumps.map((d) => d.text).join('\n');
    const types = new Set(dumps.flatMap((d) => [...d.types]));
    const keys = dumps.flatMap((d) => d.keys);
    // What the dump must hold for its absence of secrets to mean something.
    for (const type of ['hash', 'zset', 'stream', 'string']) assert.ok(types.has(type), `the dump read ${type} keys`);
    assert.ok(keys.some((k) => k.startsWith('oas:bull:')), 'BullMQ\'s keys are there');
    assert.match(text, /"engines":\["reverse_dns","provider_13","provider_12"\]/, 'jobs naming the keyed engine are there');
    assert.ok(keys.some((k) => k.startsWith('oas:cache')), 'the engine cache is there');
    assert.ok(text.includes('45.80.1.1') && text.includes('Mountain View'), 'observables and cached ipinfo answers are there');
    assert.ok(keys.some((k) => k.startsWith('oas:session:')), 'the session is there');
    for (const secret of [...SECRETS, session]) {
      for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
        assert.ok(!text.includes(form), `Redis holds the secret ${secret}`);
      }
    }
  });
});
