/**
 * Watchlists with `redis_url` (issue 36): two servers on one Redis (each with its observables'
 * worker and the watchlists' BullMQ worker, in this process) run each interval once: one run per
 * interval (distinct `scheduled_for`), one analysis per run, whichever server takes the job. Then,
 * everything stopped for a few intervals, one server back runs the missed interval once at start
 * (not once per interval missed). The schedulers' interval is shortened to one second here (a
 * user's is at least 5m); nothing asserts how long anything took.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApp, type App } from '../src/app.js';
import { closeWatchlists, startWatchlistSchedule, watchlistStoreOf, watchlistsOf, type RunningSchedule } from '../src/automation/watchlists-app.js';
import type { Watchlist } from '../src/automation/watchlist.js';
import { startAppWorker, type RunningWorker } from '../src/scale/worker.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { phishTank, waitFor } from './helpers/watchlists.js';
import { runOas } from './helpers/cli.js';
import { dirname } from 'node:path';

const EVERY_MS = 1_000;
const NAME = 'shared';

interface Server {
  app: App;
  worker: RunningWorker;
  schedule: RunningSchedule;
}

describe('watchlists on one Redis', { skip: redisSkip, timeout: 120_000 }, () => {
  let redis: RedisServer;
  let upstreams: Upstreams;
  let file: string;
  const servers: Server[] = [];

  before(async () => {
    redis = await startRedis();
    upstreams = await startUpstreams();
    phishTank(upstreams.intel, false);
    file = configFor(upstreams, { redis_url: redis.url }).file;
  });
  after(async () => {
    for (const server of servers.splice(0)) await stop(server);
    await upstreams?.close();
    await redis?.close();
  });

  /** An `oas serve` as it runs: the app, its observables' worker, the watchlists' schedule. */
  async function serve(): Promise<Server> {
    const app = await createApp({ file, env: {} }, { role: 'server' });
    await app.scale!.link.whenReady(5_000);
    const worker = startAppWorker(app);
    const schedule = await startWatchlistSchedule(app, { intervalOf: () => EVERY_MS, pollMs: { first: 10, max: 100 } });
    const server = { app, worker, schedule };
    servers.push(server);
    return server;
  }
  async function stop(server: Server): Promise<void> {
    await server.schedule.stop();
    await closeWatchlists(server.app);
    await server.worker.close();
    await server.app.close();
    servers.splice(servers.indexOf(server), 1);
  }
  /** Stops taking the schedulers' jobs on every server, lets the runs under way end, then stops them all. */
  async function stopAll(store: ReturnType<typeof watchlistStoreOf>): Promise<Watchlist> {
    for (const server of servers) await server.schedule.stop();
    const settled = await waitFor(store, NAME, (w) => w.runs.every((r) => r.status !== 'running'), 'the runs under way end');
    for (const server of [...servers]) await stop(server);
    return settled;
  }
  /** The analyses marked with the watchlist's name, from their headers in Redis. */
  async function analysesOf(name: string): Promise<string[]> {
    const ids: string[] = [];
    for (const key of await redis.client.keys('oas:analysis:*')) {
      if (/:(rows|verdicts)$/.test(key)) continue;
      const header = await redis.client.hget(key, 'header');
      const parsed = header ? JSON.parse(header) as { id: string; watchlist?: string } : undefined;
      if (parsed?.watchlist === name) ids.push(parsed.id);
    }
    return ids.sort();
  }
  const slots = (w: Watchlist) => w.runs.filter((r) => r.trigger === 'schedule').map((r) => Date.parse(r.scheduled_for!));

  let first: Watchlist;

  test('oas watch --redis: the watchlist and its runs where the servers see them, its job scheduler made and removed', async () => {
    const dir = dirname(file);
    const add = await runOas(dir, ['watch', 'add', 'from-cli', '--every', '2h', '-e', 'provider_17', 'login-verify-bank.com', '--redis', redis.url, '--config', file]);
    assert.equal(add.code, 0, add.stderr);
    const stored = JSON.parse(String(await redis.client.hget('oas:watchlists', 'from-cli'))) as Watchlist;
    assert.equal(stored.runs[0]!.baseline, true);
    const header = JSON.parse(String(await redis.client.hget(`oas:analysis:${stored.runs[0]!.analysis_id}`, 'header'))) as { watchlist?: string; complete: boolean };
    assert.deepEqual([header.watchlist, header.complete], ['from-cli', true], 'its baseline\'s analysis is in Redis');
    const next = await redis.client.zscore('oas:bull:watchlists:repeat', 'from-cli');
    assert.ok(Number(next) >= Date.parse(stored.created) + 2 * 3_600_000 - 1_000, `its scheduler's first job an interval on: ${next}`);
    const remove = await runOas(dir, ['watch', 'remove', 'from-cli', '--redis', redis.url, '--config', file]);
    assert.equal(remove.code, 0, remove.stderr);
    assert.equal(await redis.client.hexists('oas:watchlists', 'from-cli'), 0);
    assert.equal(await redis.client.zscore('oas:bull:watchlists:repeat', 'from-cli'), null, 'its scheduler removed');
  });

  test('two servers run each interval once', async () => {
    const [a] = [await serve(), await serve()];
    const store = watchlistStoreOf(a!.app);
    const { baseline } = await watchlistsOf(a!.app).add({ name: NAME, text: 'login-verify-bank.com', engines: ['provider_17'], every: '5m' }, 'alice');
    assert.ok(baseline, 'the baseline runs at once');
    await waitFor(store, NAME, (w) => w.runs.filter((r) => r.trigger === 'schedule' && r.status === 'done').length >= 4, 'four scheduled runs');
    first = await stopAll(store);
    const scheduled = slots(first);
    assert.equal(new Set(scheduled).size, scheduled.length, `each interval once: ${scheduled.map((s) => new Date(s).toISOString()).join(', ')}`);
    for (const slot of scheduled) assert.equal((slot - scheduled.at(-1)!) % EVERY_MS, 0, 'on the schedulers\' intervals');
    assert.deepEqual(await analysesOf(NAME), first.runs.map((r) => r.analysis_id!).sort(), 'one analysis per run, none more');
    assert.equal(first.runs.at(-1)!.trigger, 'added');
    assert.ok(first.runs.every((r) => r.status === 'done'), JSON.stringify(first.runs.map((r) => [r.status, r.error])));
  });

  test('a run missed while everything was down runs once at start', async () => {
    assert.ok(first, "after the first test");
    const lastSlot = Math.max(...slots(first));
    // Down for a few intervals.
    await new Promise((resolve) => setTimeout(resolve, 3.5 * EVERY_MS));
    const startedAt = Date.now();
    const server = await serve();
    const store = watchlistStoreOf(server.app);
    // Until the first interval after the start has run too: the missed one came before it.
    await waitFor(store, NAME, (w) => slots(w).some((slot) => slot > startedAt) && w.runs.every((r) => r.status !== 'running'), 'a run after the start');
    const after = await stopAll(store);
    const missed = slots(after).filter((slot) => slot > lastSlot && slot <= startedAt);
    assert.equal(missed.length, 1, `one run for the intervals missed: ${missed.map((s) => new Date(s).toISOString()).join(', ')}`);
    assert.deepEqual(await analysesOf(NAME), after.runs.map((r) => r.analysis_id!).sort());
  });
});
