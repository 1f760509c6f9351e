/**
 * Quotas shared through Redis (issue 16): one `oas serve --no-worker` and three `oas worker`
 * subprocesses on one test Redis, an engine (provider_13, ipquery) limited to 4 calls per short
 * window against a loopback fake that records when each request arrives. The limit holds across
 * all three workers, a 429's Retry-After pauses the engine on every worker, and
 * `oas analyze --redis` shares the cache and the same quota.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { reply, startFakeHttp, type FakeHttpServer, type FakeReply } from './fakes/http.js';
import { noStack, runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, spawnWorker, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { removeTempDir, tempDir } from './helpers/temp.js';

const ENGINE = 'provider_13';
const LIMIT = 4;
const WINDOW_MS = 1500;
/** Receipt times lag call starts (counted in Redis) by a few ms, more on a busy machine: a window shrunk by this holds at most LIMIT. */
const FUZZ_MS = 400;
const PAUSE_S = 2;
const QUOTA_KEY = `oas:quota:${ENGINE}`;
const WORKERS = ['w1', 'w2', 'w3'];
/** ipapi (provider_11), no quota: the first call of each worker. */
const WARM_UP = 'provider_11';

interface Arrival {
  ip: string;
  /** Which worker called: each has a base_url of its own (`/w<n>/ipquery`). */
  worker: string;
  at: number;
}

const ipqueryAnswer = (ip: string) => ({
  ip,
  isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' },
  location: { country: 'United States', country_code: 'US', city: 'Mountain View', state: 'California' },
  risk: { is_mobile: false, is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 },
});

/** `n` public addresses of a /24 of their own. */
const ips = (block: number, n: number) => Array.from({ length: n }, (_, i) => `8.${block}.4.${i + 1}`);

/** The largest number of arrivals in any window of `ms` starting at an arrival. */
function busiest(arrivals: readonly Arrival[], ms: number): number {
  return Math.max(0, ...arrivals.map((a) => arrivals.filter((b) => b.at >= a.at && b.at < a.at + ms).length));
}

describe('quotas shared through Redis by three workers', { skip: redisSkip, timeout: 120_000 }, () => {
  let redis: RedisServer;
  let fake: FakeHttpServer;
  let dir: string;
  let server: ServeProcess | undefined;
  const workers: WorkerProcess[] = [];
  const arrivals: Arrival[] = [];
  const warm = new Set<string>();
  /** What the fake answers next, for the 429 test; then 200. */
  let next: FakeReply | undefined;
  const engineSettings = (who: string) => ({ base_url: `${fake.url}/${who}/ipquery`, rate_limit: LIMIT, rate_window_ms: WINDOW_MS, retries: 2, timeout_ms: 8000 });
  const writeConfig = (who: string) => {
    const file = join(dir, `${who}.config.json`);
    writeFileSync(file, JSON.stringify({
      data_dir: join(dir, `${who}-data`),
      redis_url: redis.url,
      job_lock_ms: 5000,
      worker_concurrency: 2,
      engines: { [ENGINE]: engineSettings(who), [WARM_UP]: { base_url: `${fake.url}/${who}/ipapi` } },
    }));
    return file;
  };

  before(async () => {
    redis = await startRedis();
    fake = await startFakeHttp({
      'GET /*': (req) => {
        const [, worker, ip] = /^\/([^/]+)\/ipquery\/(.+)$/.exec(req.path) ?? [];
        if (!worker || !ip) return reply.status(404);
        arrivals.push({ ip, worker, at: Date.now() });
        const answer = next ?? { json: ipqueryAnswer(ip) };
        next = undefined;
        return answer;
      },
      // Warm-up calls: slow enough that the jobs spread over the workers.
      'POST /*': (req) => {
        warm.add(req.path.split('/')[1]!);
        return { delayMs: 300, json: {} };
      },
    });
    dir = tempDir('oas-scale-quota-');
    const [serving, ...spawned] = await Promise.allSettled([
      spawnServe(writeConfig('server'), { args: ['--no-worker'] }),
      ...WORKERS.map((who) => spawnWorker(writeConfig(who))),
    ]);
    // Whatever started is stopped by `after`, even if another process did not start.
    if (serving!.status === 'fulfilled') server = serving!.value as ServeProcess;
    for (const w of spawned) if (w.status === 'fulfilled') workers.push(w.value as WorkerProcess);
    for (const p of [serving!, ...spawned]) if (p.status === 'rejected') throw p.reason;
    // Each worker's first call loads its HTTP client and connects: between its turn in the quota
    // and its arrival, hundreds of ms on a busy machine. Done first, with an engine of no quota.
    for (let block = 10; warm.size < WORKERS.length; block++) {
      assert.ok(block < 15, `every worker made a warm-up call: ${[...warm].join(' ')}`);
      await results(await analyse(ips(block, 6), true, WARM_UP));
    }
  });

  after(async () => {
    await Promise.allSettled([server?.stop(), ...workers.map((w) => w.stop())]);
    await fake?.close();
    await redis?.close();
    if (dir) removeTempDir(dir);
  });

  async function analyse(values: readonly string[], ignoreCache = true, engine = ENGINE): Promise<string> {
    const res = await fetch(`${server!.url}/api/analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: values.join(' '), engines: [engine], ignore_cache: ignoreCache }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { analysis_id: string }).analysis_id;
  }

  async function results(id: string): Promise<Record<string, unknown>[]> {
    for (const deadline = Date.now() + 30_000; ;) {
      const res = await fetch(`${server!.url}/api/is_analysis_complete/${id}`);
      assert.equal(res.status, 200);
      if (((await res.json()) as { complete: boolean }).complete) break;
      assert.ok(Date.now() < deadline, `analysis ${id} completes\n${workers.map((w) => w.log()).join('\n')}`);
      await sleep(50);
    }
    const res = await fetch(`${server!.url}/api/results/${id}`);
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, unknown>[];
  }

  /** Every observable answered by the engine, in order. */
  function assertAnswered(rows: Record<string, unknown>[], values: readonly string[]): void {
    assert.deepEqual(rows.map((r) => r['observable']), values);
    for (const row of rows) {
      assert.equal(row['errors'], undefined, `no engine error for ${String(row['observable'])}: ${JSON.stringify(row['errors'])}`);
      assert.equal((row[ENGINE] as { ip?: string } | null)?.ip, row['observable']);
    }
  }

  test(`at most ${LIMIT} calls per window across the three workers; each observable called once`, async () => {
    arrivals.length = 0;
    const values = ips(1, 14);
    const rows = await results(await analyse(values));
    assertAnswered(rows, values);
    assert.deepEqual(arrivals.map((a) => a.ip).sort(), [...values].sort(), 'one request per observable');
    const start = arrivals[0]!.at;
    const most = busiest(arrivals, WINDOW_MS - FUZZ_MS);
    assert.ok(most <= LIMIT, `at most ${LIMIT} requests in ${WINDOW_MS - FUZZ_MS} ms, got ${most}: ${arrivals.map((a) => a.at - start).join(' ')}`);
    // More jobs than two workers hold at once (concurrency 2): every worker called the engine.
    assert.deepEqual([...new Set(arrivals.map((a) => a.worker))].sort(), WORKERS);
  });

  test('a 429 with Retry-After pauses the engine on every worker', async () => {
    arrivals.length = 0;
    await redis.client.del(QUOTA_KEY);
    next = reply.tooMany(PAUSE_S);
    const first = ips(2, 1);
    const throttled = analyse(first);
    // The throttled call's worker tells Redis; then more work for every worker.
    for (const deadline = Date.now() + 10_000; (await redis.client.pttl(`${QUOTA_KEY}:paused`)) <= 0;) {
      assert.ok(Date.now() < deadline, 'the 429 pauses the engine in Redis');
      await sleep(10);
    }
    const throttledAt = arrivals[0]!.at;
    const more = ips(3, 8);
    const moreId = await analyse(more);
    const firstRows = await results(await throttled);
    const moreRows = await results(moreId);
    assertAnswered(firstRows, first);
    assertAnswered(moreRows, more);
    const later = arrivals.slice(1);
    assert.deepEqual(later.map((a) => a.ip).sort(), [...first, ...more].sort(), 'the throttled call was tried again, every other observable once');
    assert.deepEqual([...new Set(later.map((a) => a.worker))].sort(), WORKERS, 'every worker held calls during the pause');
    for (const arrival of later) {
      assert.ok(arrival.at >= throttledAt + PAUSE_S * 1000 - FUZZ_MS, `${arrival.ip} arrived ${arrival.at - throttledAt} ms after the 429, during the ${PAUSE_S} s pause`);
    }
  });

  test('oas analyze --redis shares the cache and counts against the same quota', async () => {
    const [value] = ips(4, 1) as [string];
    arrivals.length = 0;
    assertAnswered(await results(await analyse([value], false)), [value]);
    assert.equal(arrivals.length, 1);
    // The cache key holds base_url: the terminal is configured as the worker that called.
    const { worker } = arrivals[0]!;

    // The terminal's own configuration: no redis_url (given with --redis), a window of 20 s.
    const cliDir = tempDir('oas-scale-quota-cli-');
    try {
      const cliConfig = join(cliDir, 'oas.config.json');
      writeFileSync(cliConfig, JSON.stringify({ data_dir: join(cliDir, 'data'), engines: { [ENGINE]: { ...engineSettings(worker), rate_window_ms: 20_000 } } }));
      const run = (extra: string[]) => runOas(cliDir, ['analyze', '--config', cliConfig, '--redis', redis.url, '--json', '-q', '-e', ENGINE, ...extra, value]);

      const cached = await run([]);
      assert.equal(cached.code, 0, cached.stderr);
      noStack(cached.stderr);
      const [row] = JSON.parse(cached.stdout) as [Record<string, unknown>];
      assert.equal((row[ENGINE] as { ip: string }).ip, value);
      assert.equal(arrivals.length, 1, 'answered from the cache the server filled: no request upstream');

      // The shared window is full: four calls that leave it 3 s from now (Redis's clock).
      const [seconds, micros] = await redis.client.time();
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      await redis.client.del(QUOTA_KEY);
      await redis.client.zadd(QUOTA_KEY, ...[1, 2, 3, 4].flatMap((n) => [now - 20_000 + 3000, `someone-else:${n}`]));
      const filledAt = Date.now();
      const fresh = await run(['--ignore-cache']);
      assert.equal(fresh.code, 0, fresh.stderr);
      noStack(fresh.stderr);
      assert.equal(arrivals.length, 2, 'with --ignore-cache the engine is called');
      assert.ok(arrivals[1]!.at >= filledAt + 3000 - FUZZ_MS, `the call waited for the shared window: it came ${arrivals[1]!.at - filledAt} ms after it was filled`);
      const members = await redis.client.zrange(QUOTA_KEY, 0, -1);
      assert.equal(members.length, 1, `the call is counted in ${QUOTA_KEY}: ${members.join(' ')}`);
      assert.doesNotMatch(members[0]!, /^someone-else/);
    } finally {
      removeTempDir(cliDir);
    }
  });
});
