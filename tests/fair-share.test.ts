/**
 * Fair share (issue 27): an analyst's lookup never waits behind someone else's bulk job.
 *
 * - The scheduler: a call of an analysis with one pending is dispatched before the next call of
 *   an analysis with thousands; owners first, then their analyses; one analysis alone (or calls
 *   without a share) first come, first served, every slot used.
 * - Quotas: two analyses sharing a 4-calls-a-window engine, on a virtual clock and through the
 *   runner.
 * - End to end, one `oas serve` and one on Redis (BullMQ priorities): a user's one-observable
 *   analysis posted while another user's bulk analysis has hundreds of calls queued is served
 *   next, and the bulk analysis's results are whole and in the order of its text.
 *
 * Nothing here is timed: the assertions are on the order in which the upstream saw the calls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Observable } from '../src/observables/types.js';
import type { Share } from '../src/runner/fair-queue.js';
import { Quota } from '../src/runner/quota.js';
import { Semaphore } from '../src/runner/semaphore.js';
import { jobPriority, LOWEST_PRIORITY } from '../src/scale/queue.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { limitedEngine, runnerHarness } from './helpers/runner.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { virtualClock } from './helpers/virtual-clock.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const share = (owner: string, analysis: string): Share => ({ owner, analysis });

/** Lets every granted acquire run its continuation. */
const settle = () => new Promise((done) => setImmediate(done));

/**
 * A semaphore whose grants are recorded in `order` (`<analysis>#<n>`, n counting that analysis's
 * calls): `queue` makes calls that wait for a slot, `releaseOldest` frees the slot held longest.
 */
function recorded(limit: number) {
  const semaphore = new Semaphore(limit);
  const order: string[] = [];
  const releases: (() => void)[] = [];
  return {
    semaphore,
    order,
    queue: async (who: Share | undefined, n: number) => {
      for (let i = 0; i < n; i++) {
        void semaphore.acquire(who).then((release) => {
          order.push(who ? `${who.analysis}#${i}` : `#${i}`);
          releases.push(release);
        });
      }
      await settle();
    },
    releaseOldest: async (times = 1) => {
      for (let i = 0; i < times; i++) {
        releases.shift()!();
        await settle();
      }
    },
    held: () => releases.length,
  };
}

describe('the fair order of an engine\'s slots', () => {
  test('an analysis with one pending call is dispatched before the next call of an analysis with thousands', async () => {
    const slots = recorded(2);
    await slots.queue(share('automation', 'bulk'), 3000);
    assert.deepEqual(slots.order, ['bulk#0', 'bulk#1'], 'the bulk analysis holds both slots');
    await slots.queue(share('analyst', 'lookup'), 1);
    await slots.releaseOldest();
    assert.equal(slots.order[2], 'lookup#0', 'the freed slot goes to the one-call analysis');
    // The bulk analysis then takes every slot again, in the order of its calls.
    await slots.releaseOldest(10);
    assert.deepEqual(slots.order.slice(3), Array.from({ length: 10 }, (_, i) => `bulk#${i + 2}`));
    assert.equal(slots.semaphore.pending, 3000 - 12);
  });

  test('the same owner\'s small analysis also goes before their own bulk one', async () => {
    const slots = recorded(1);
    await slots.queue(share('alice', 'bulk'), 500);
    await slots.queue(share('alice', 'lookup'), 1);
    await slots.releaseOldest();
    assert.deepEqual(slots.order, ['bulk#0', 'lookup#0']);
  });

  test('fair across people first: ten bulk analyses of one owner share one part with another owner\'s one', async () => {
    const slots = recorded(1);
    await slots.queue(share('nobody', 'first'), 1);
    for (let a = 0; a < 10; a++) await slots.queue(share('automation', `x${a}`), 100);
    await slots.queue(share('analyst', 'y'), 100);
    await slots.releaseOldest(41);
    const first40 = slots.order.slice(1, 41);
    assert.equal(first40.filter((label) => label.startsWith('y#')).length, 20, `one call in two is the analyst's: ${first40.join(' ')}`);
    // The automation's twenty go round its ten analyses: two calls each.
    const perAnalysis = new Map<string, number>();
    for (const label of first40.filter((l) => l.startsWith('x'))) perAnalysis.set(label.split('#')[0]!, (perAnalysis.get(label.split('#')[0]!) ?? 0) + 1);
    assert.deepEqual([...perAnalysis.values()], Array(10).fill(2));
    // Within one analysis, its calls in the order they were made.
    assert.deepEqual(first40.filter((l) => l.startsWith('y#')), Array.from({ length: 20 }, (_, i) => `y#${i}`));
  });

  test('two bulk analyses converge to equal shares of the slots', async () => {
    const slots = recorded(10);
    await slots.queue(share('a', 'first'), 1000);
    await slots.queue(share('b', 'second'), 1000);
    // Each round frees the slot held longest; after a few rounds each holds half.
    await slots.releaseOldest(60);
    const holding = slots.order.slice(-10);
    assert.equal(holding.filter((l) => l.startsWith('first')).length, 5, holding.join(' '));
  });

  test('one analysis alone, or calls without a share, use every slot first come, first served', async () => {
    for (const who of [share('cli', 'only'), undefined]) {
      const slots = recorded(3);
      await slots.queue(who, 50);
      assert.equal(slots.order.length, 3, 'every slot used at once');
      await slots.releaseOldest(50);
      assert.deepEqual(slots.order, Array.from({ length: 50 }, (_, i) => (who ? `only#${i}` : `#${i}`)));
      assert.equal(slots.semaphore.pending, 0);
      assert.equal(slots.held(), 0);
    }
  });
});

describe('two analyses sharing a 4-calls-a-window engine', () => {
  test('the quota\'s next window goes first to the analysis that has had none', async () => {
    const clock = virtualClock();
    const quota = new Quota(4, 1000, 60_000, clock);
    const starts: string[] = [];
    const calls = (who: Share, n: number) => Array.from({ length: n }, async (_, i) => {
      await quota.acquire(undefined, who);
      starts.push(`${clock.now()} ${who.analysis}#${i}`);
    });
    // The bulk's calls are made first (its first four start at once), then the lookup's.
    const bulk = calls(share('automation', 'bulk'), 12);
    const lookup = calls(share('analyst', 'lookup'), 2);
    await Promise.all([...bulk, ...lookup]);
    assert.deepEqual(starts, [
      '0 bulk#0', '0 bulk#1', '0 bulk#2', '0 bulk#3',
      // The second window: the lookup first (it had none in the first), then one each in turn.
      '1000 lookup#0', '1000 bulk#4', '1000 lookup#1', '1000 bulk#5',
      '2000 bulk#6', '2000 bulk#7', '2000 bulk#8', '2000 bulk#9',
      '3000 bulk#10', '3000 bulk#11',
    ]);
  });

  test('two bulk analyses alternate in the quota\'s windows', async () => {
    const clock = virtualClock();
    const quota = new Quota(4, 1000, 60_000, clock);
    const starts: string[] = [];
    const calls = (who: Share, n: number) => Array.from({ length: n }, async () => {
      await quota.acquire(undefined, who);
      starts.push(`${clock.now()} ${who.analysis}`);
    });
    await Promise.all([...calls(share('a', 'A'), 8), ...calls(share('b', 'B'), 8)]);
    // The first four arrived before anyone waited (A's); from then on, one each in turn, B first
    // (it had none in the first window).
    assert.deepEqual(starts.slice(4), ['1000 B', '1000 A', '1000 B', '1000 A', '2000 B', '2000 A', '2000 B', '2000 A', '3000 B', '3000 B', '3000 B', '3000 B']);
  });

  describe('through the runner, with a real window', () => {
    let fake: FakeHttpServer;
    const limited = limitedEngine(4, 250);
    before(async () => {
      fake = await startFakeHttp({ 'GET /ip/*': (req) => ({ json: { ip: req.path.slice(4) } }) });
    });
    after(() => fake.close());

    test('an analyst\'s call gets one of the next window\'s four slots, not the twelfth', async () => {
      const harness = runnerHarness([limited], { settings: { limited: { base_url: `${fake.url}/ip` } } });
      try {
        const bulkIps: Observable[] = Array.from({ length: 12 }, (_, i) => ({ value: `8.8.4.${i + 1}`, type: 'IPv4' }));
        const bulk = harness.analyze(bulkIps, ['limited'], { share: share('automation', 'bulk') });
        while (fake.requests.length < 4) await new Promise((done) => setTimeout(done, 5));
        const lookup = await harness.analyze([{ value: '9.9.9.9', type: 'IPv4' }], ['limited'], { share: share('analyst', 'lookup') });
        assert.deepEqual(lookup[0]!.limited, { ip: '9.9.9.9' });
        const results = await bulk;
        assert.deepEqual(results.map((r) => r.observable), bulkIps.map((o) => o.value), 'every result, in order');
        assert.ok(results.every((r) => r.limited !== null));
        const seen = fake.requests.map((r) => r.path.slice(4));
        assert.ok(seen.indexOf('9.9.9.9') < 8, `the lookup in the second window: ${seen.join(' ')}`);
      } finally {
        await harness.close();
      }
    });
  });
});

describe('BullMQ priorities (with Redis)', () => {
  test('every analysis\'s first observable comes first; an owner\'s other running analyses slow their new one', () => {
    assert.equal(jobPriority(0, 0), 1);
    assert.equal(jobPriority(0, 9), 1);
    assert.equal(jobPriority(1999, 0), 2000);
    assert.equal(jobPriority(10, 1), 21);
    assert.equal(jobPriority(10, -1), 11, 'a count that lags is never below none');
    assert.equal(jobPriority(5_000_000, 3), LOWEST_PRIORITY);
  });
});

/** An ipquery fake answering after `delayMs`, keeping the order in which addresses were asked. */
async function slowIpquery(delayMs: number): Promise<FakeHttpServer> {
  return startFakeHttp({
    'GET /ipquery/*': (req) => ({
      delayMs,
      json: { ip: req.path.slice('/ipquery/'.length), isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' }, location: { country: 'United States', country_code: 'US' }, risk: { is_mobile: false, is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 } },
    }),
  });
}

const BULK = Array.from({ length: 120 }, (_, i) => `34.${100 + Math.floor(i / 200)}.${Math.floor(i / 50) + 1}.${(i % 50) + 1}`);
const LOOKUP = '8.8.8.8';

/** Posts an analysis of ipquery (provider_13) as the user with `token`; its id. */
async function post(server: ServeProcess, token: string, text: string): Promise<string> {
  const res = await fetch(`${server.url}/api/analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ text, engines: ['ipquery'], ignore_cache: true }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

async function resultsOf(server: ServeProcess, token: string, id: string): Promise<Record<string, unknown>[]> {
  const auth = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 600; i++) {
    const { complete } = (await (await fetch(`${server.url}/api/is_analysis_complete/${id}`, { headers: auth })).json()) as { complete: boolean };
    if (complete) return (await (await fetch(`${server.url}/api/results/${id}`, { headers: auth })).json()) as Record<string, unknown>[];
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`analysis ${id} not complete after 30 s`);
}

async function addUser(dir: string, file: string, name: string): Promise<string> {
  const run = await runOas(dir, ['users', 'add', name, '--role', 'analyst', '--config', file]);
  assert.equal(run.code, 0, run.stderr);
  noStack(run.stderr);
  return run.stdout.trim();
}

/**
 * Starts `oas serve` with `extra` settings and two users; `automation` posts the bulk analysis,
 * and once the fake has seen a few of its calls, `analyst` posts one address. The analyst's call
 * must reach the upstream among the next few, not after the bulk's queue.
 */
async function lookupDuringBulk(extra: Record<string, unknown>, serveArgs: string[] = []): Promise<void> {
  const fake = await slowIpquery(15);
  const dir = tempDir('oas-fair-');
  const file = join(dir, 'oas.json');
  writeFileSync(file, JSON.stringify({ data_dir: join(dir, 'data'), engines: { provider_13: { base_url: `${fake.url}/ipquery`, concurrency: 2 } }, ...extra }, null, 2));
  const automation = await addUser(dir, file, 'automation');
  const analyst = await addUser(dir, file, 'analyst');
  const server = await spawnServe(file, { args: serveArgs });
  try {
    const bulk = await post(server, automation, BULK.join('\n'));
    while (fake.requests.length < 6) await new Promise((done) => setTimeout(done, 5));
    const before = fake.requests.length;
    const lookup = await post(server, analyst, LOOKUP);
    const lookupResults = await resultsOf(server, analyst, lookup);
    assert.equal((lookupResults[0]!.ipquery as { ip: string }).ip, LOOKUP);
    const seen = fake.requests.map((r) => r.path.slice('/ipquery/'.length));
    const at = seen.indexOf(LOOKUP);
    // Two calls in flight and a few more let through while the POST was answered, never the
    // bulk's hundred-odd queued calls.
    assert.ok(at >= 0 && at < before + 8, `the lookup was call ${at} (${before} seen when it was posted) of ${BULK.length + 1}`);
    const results = await resultsOf(server, automation, bulk);
    assert.deepEqual(results.map((r) => r.observable), BULK, 'the bulk analysis whole, in the order of its text');
    assert.ok(results.every((r) => (r.ipquery as { ip?: string } | null)?.ip === r.observable));
    const history = (await (await fetch(`${server.url}/ui/history?mine=1`, { headers: { authorization: `Bearer ${analyst}` } })).text());
    assert.ok(history.includes(lookup), 'recorded as the analyst\'s');
  } finally {
    await server.stop();
    await fake.close();
  }
}

describe('end to end: one user\'s lookup during another\'s bulk analysis', () => {
  test('oas serve: the lookup is served next', async () => {
    await lookupDuringBulk({});
  });

  describe('on Redis, the server\'s worker taking jobs by priority', { skip: redisSkip }, () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedis();
    });
    after(() => redis?.close());

    test('oas serve with redis_url: the lookup\'s job is taken next', async () => {
      await lookupDuringBulk({ redis_url: redis.url, worker_concurrency: 2 });
    });
  });
});
