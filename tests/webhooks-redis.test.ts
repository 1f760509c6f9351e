/**
 * Issue 36, webhooks on Redis (`redis_url`): deliveries are BullMQ jobs of their own queue
 * (`oas:webhooks:deliveries`), so that they survive a restart and a killed worker.
 *
 * - In this process: a receiver that fails twice then answers (the same webhook-id on each try,
 *   each verified with the Standard Webhooks library); Retry-After sets the next wait; a 4xx is
 *   final; a delivery queued twice is one job; deliveries queued by a process that stopped are
 *   delivered by the next one that takes jobs. Nothing but the body, the endpoint's name and the
 *   ids is kept in Redis (no URL of a named webhook, no secret).
 * - As a team runs it: `oas serve --no-worker` and `oas worker` as subprocesses; the worker that
 *   completes an analysis queues its analysis.completed and starts delivering it; it is SIGKILLed
 *   while the receiver holds the request; another worker, started afterwards, delivers it once its
 *   lock lapses.
 *
 * Loopback only; no timing assertion (the waits between tries are made short here, and the one
 * Retry-After waited for is a second).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, afterEach, before, describe, test } from 'node:test';
import { createWebhooks, type Webhooks } from '../src/automation/webhooks.js';
import { DELIVERY_PREFIX, redisOutbox } from '../src/automation/redis-outbox.js';
import type { OasEvent } from '../src/automation/events.js';
import type { DeliveryOutcome } from '../src/automation/outbox.js';
import { defaultConfig, type Config, type WebhookSettings } from '../src/config/schema.js';
import { Catalog, loadEngineDefinitions } from '../src/engine/catalog.js';
import { HttpTransport } from '../src/http/client.js';
import { openRedis, type RedisLink } from '../src/scale/redis.js';
import { newSecret, startWebhookReceiver, type WebhookReceiver } from './fakes/webhook-receiver.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, spawnWorker, startAnalysis, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const SECRET = newSecret();
const ENV = { OAS_TEST_HOOK_SECRET: SECRET };

function endpoint(url: string): WebhookSettings {
  return { name: 'soc', url, events: ['analysis.completed', 'watchlist.changed'], secret_env: 'OAS_TEST_HOOK_SECRET', format: 'standard', min_verdict: 'suspicious', max_tlp: 'AMBER' };
}

const watchEvent = (n: number): OasEvent => ({ type: 'watchlist.changed', timestamp: new Date().toISOString(), analysis: { id: `a-${n}`, tlp: 'GREEN' }, data: { watchlist: 'c2', analysis_id: `a-${n}`, link: `/results/a-${n}`, changes: [] } });

/** Polls `check` until it holds (30 s at most: a bound, not a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  assert.fail(`never: ${what}`);
}

describe('webhook deliveries on Redis', { skip: redisSkip, timeout: 180_000 }, () => {
  let redis: RedisServer;
  let receiver: WebhookReceiver;
  let catalog: Catalog;
  const open: { link: RedisLink; webhooks: Webhooks; transport: HttpTransport }[] = [];

  before(async () => {
    redis = await startRedis();
    receiver = await startWebhookReceiver({ secret: SECRET });
    catalog = new Catalog(await loadEngineDefinitions(), 'main', {});
  });
  /** Stops every process of the test (each test's jobs are taken by its own processes only). */
  async function closeAll(): Promise<void> {
    for (const { webhooks, transport, link } of open.splice(0)) {
      await webhooks.close();
      await transport.close();
      await link.close();
    }
  }
  afterEach(closeAll);
  after(async () => {
    await receiver?.close();
    await redis?.close();
  });

  /** Webhooks of a process on the Redis, with short waits between tries; `start`: it takes jobs. */
  function processOnRedis(outcomes: DeliveryOutcome[], start = true): Webhooks {
    const link = openRedis(redis.url);
    const transport = new HttpTransport();
    const config: Config = { ...defaultConfig({}), webhooks: [endpoint(receiver.url)] };
    const webhooks = createWebhooks({
      config: () => config,
      catalog: () => catalog,
      outbox: (hooks) => redisOutbox(link, { ...hooks, lockMs: 1_000, waits: [20, 40, 60, 80, 100, 120, 140] }),
      transport: () => transport,
      results: async function* () {},
      env: ENV,
      observer: { onDelivery: (outcome) => outcomes.push(outcome) },
      warn: () => {},
      timeoutMs: 2_000,
    });
    if (start) webhooks.start();
    open.push({ link, webhooks, transport });
    return webhooks;
  }

  const mine = (n: number) => receiver.received.filter((r) => r.body.includes(`"a-${n}"`));

  test('failed twice, then delivered: one webhook-id, each try verified, each counted', async () => {
    const outcomes: DeliveryOutcome[] = [];
    const webhooks = processOnRedis(outcomes);
    receiver.failNext(2, 500);
    webhooks.emit(watchEvent(1));
    await until(() => outcomes.some((o) => o.outcome === 'delivered'), 'delivered');
    assert.deepEqual(outcomes.map((o) => [o.attempt, o.outcome, o.status]), [[1, 'retry', 500], [2, 'retry', 500], [3, 'delivered', 200]]);
    assert.deepEqual(outcomes.slice(0, 2).map((o) => o.waitMs), [20, 40]);
    const tries = mine(1);
    assert.equal(tries.length, 3);
    assert.ok(tries.every((r) => r.verified));
    assert.equal(new Set(tries.map((r) => r.headers['webhook-id'])).size, 1);
  });

  test('Retry-After sets the next wait; a 4xx other than 429 is final', async () => {
    const outcomes: DeliveryOutcome[] = [];
    const webhooks = processOnRedis(outcomes);
    receiver.failNext(1, { status: 429, retryAfter: '1' });
    webhooks.emit(watchEvent(2));
    await until(() => outcomes.some((o) => o.outcome === 'delivered'), 'delivered after Retry-After');
    assert.deepEqual(outcomes.map((o) => [o.outcome, o.waitMs]), [['retry', 1_000], ['delivered', undefined]]);
    receiver.failNext(1, 410);
    webhooks.emit(watchEvent(3));
    await until(() => outcomes.some((o) => o.outcome === 'failed'), 'given up');
    assert.equal(mine(3).length, 1);
    assert.deepEqual(outcomes.at(-1)!.status, 410);
  });

  test('kept in Redis: deliveries queued by a process that stopped are delivered by the next one; one job per id', async () => {
    const queued: DeliveryOutcome[] = [];
    const first = processOnRedis(queued, false);
    first.emit(watchEvent(4));
    await until(async () => {
      for (const key of await redis.client.keys(`${DELIVERY_PREFIX}:deliveries:msg_*`)) if ((await redis.client.hget(key, 'data'))?.includes('"a-4"')) return true;
      return false;
    }, 'the job in Redis');
    const entry = open.find((o) => o.webhooks === first)!;
    await first.close();
    await entry.link.close();
    open.splice(open.indexOf(entry), 1);
    const outcomes: DeliveryOutcome[] = [];
    processOnRedis(outcomes);
    await until(() => outcomes.some((o) => o.outcome === 'delivered' && o.delivery.analysis_id === 'a-4'), 'delivered by the next process');
    assert.equal(mine(4).length, 1);
    assert.equal(queued.length, 0, 'the first process took no job');

    // What Redis keeps: the body, the endpoint's name, the ids; never its URL or a secret.
    const keys = await redis.client.keys(`${DELIVERY_PREFIX}:*`);
    for (const key of keys) {
      const type = await redis.client.type(key);
      const text = type === 'hash' ? JSON.stringify(await redis.client.hgetall(key)) : type === 'string' ? String(await redis.client.get(key)) : '';
      assert.ok(!text.includes(SECRET) && !text.includes('/hooks/oas'), `${key} holds no secret or URL`);
    }
  });
});

describe('a worker killed mid-delivery', { skip: redisSkip, timeout: 180_000 }, () => {
  let redis: RedisServer;
  let upstreams: Upstreams;
  let receiver: WebhookReceiver;
  let configFile: string;
  const children: ChildProcess[] = [];
  let server: ServeProcess;

  before(async () => {
    redis = await startRedis();
    upstreams = await startUpstreams();
    receiver = await startWebhookReceiver({ secret: SECRET });
    configFile = configFor(upstreams, { redis_url: redis.url, job_lock_ms: 1000, webhooks: [endpoint(receiver.url)] }).file;
    server = await spawnServe(configFile, { args: ['--no-worker'], env: ENV });
    children.push(server.child);
  });
  after(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exit = new Promise((done) => child.once('exit', done));
        child.kill('SIGKILL');
        await exit;
      }
    }
    await receiver?.close();
    await upstreams?.close();
    await redis?.close();
  });

  async function worker(): Promise<WorkerProcess> {
    const started = await spawnWorker(configFile, { env: ENV });
    children.push(started.child);
    return started;
  }

  test('the analysis.completed being delivered by a killed worker is delivered once another worker is there', async () => {
    // The first try is held (no answer) until the worker trying it is gone.
    receiver.failNext(1, 'timeout');
    const first = await worker();
    const id = await startAnalysis(server.url, '8.8.8.8', ['provider_13']);
    const held = await receiver.until((all) => all.some((r) => r.body.includes(id)));
    const hung = held.find((r) => r.body.includes(id))!;
    assert.ok(hung.verified);
    assert.equal(hung.answered, 'timeout');
    const exit = new Promise((done) => first.child.once('exit', done));
    first.child.kill('SIGKILL');
    await exit;

    await worker();
    await receiver.until((all) => all.some((r) => r.body.includes(id) && r.answered === 'ok'), 60_000);
    const tries = receiver.received.filter((r) => r.body.includes(id));
    const delivered = tries.filter((r) => r.answered === 'ok');
    assert.equal(delivered.length, 1);
    assert.ok(delivered[0]!.verified, delivered[0]!.error);
    assert.equal(delivered[0]!.headers['webhook-id'], hung.headers['webhook-id'], 'the same message, tried again');
    const body = delivered[0]!.json as { type: string; data: { analysis_id: string; observables: number } };
    assert.equal(body.type, 'analysis.completed');
    assert.equal(body.data.analysis_id, id);
    assert.equal(body.data.observables, 1);
  });
});
