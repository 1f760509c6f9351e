/**
 * Quotas: the limiter on a virtual clock, then through the runner with a short real window
 * (never a minute of sleeping).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Observable } from '../src/observables/types.js';
import { Quota, QuotaExhaustedError } from '../src/runner/quota.js';
import { reply, startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { limitedEngine, runnerHarness } from './helpers/runner.js';
import { virtualClock } from './helpers/virtual-clock.js';

describe('Quota', () => {
  test('at most `limit` starts in any window; later calls wait their turn in order', async () => {
    const clock = virtualClock();
    const quota = new Quota(2, 1000, 60_000, clock);
    const starts: [number, number][] = [];
    await Promise.all([0, 1, 2, 3, 4].map(async (i) => {
      await quota.acquire();
      starts.push([i, clock.now()]);
    }));
    assert.deepEqual(starts, [[0, 0], [1, 0], [2, 1000], [3, 1000], [4, 2000]]);
  });

  test('a 429 pause delays every later call', async () => {
    const clock = virtualClock();
    const quota = new Quota(Number.POSITIVE_INFINITY, 60_000, 60_000, clock);
    await quota.acquire();
    quota.pause(5000);
    const reasons: string[] = [];
    await quota.acquire((ms, reason) => reasons.push(`${ms} ${reason}`));
    assert.equal(clock.now(), 5000);
    assert.deepEqual(reasons, ['5000 paused after HTTP 429']);
  });

  test('a call that would wait longer than the maximum fails clearly instead', async () => {
    const quota = new Quota(1, 86_400_000, 60_000, virtualClock());
    await quota.acquire();
    await assert.rejects(async () => quota.acquire(), (error: Error) => {
      assert.ok(error instanceof QuotaExhaustedError);
      assert.equal(error.message, 'quota of 1 per day reached: next call possible in 24.0 h');
      return true;
    });
  });
});

describe('quotas through the runner', () => {
  let fake: FakeHttpServer;
  const times: number[] = [];

  const starts: number[] = [];
  const limited = limitedEngine(2, 300, starts);

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': (req) => {
        times.push(Date.now());
        return { json: { ip: req.path.slice(4) } };
      },
    });
  });
  after(() => fake.close());

  const ips = (n: number): Observable[] => Array.from({ length: n }, (_, i) => ({ value: `8.8.4.${i + 1}`, type: 'IPv4' }));

  test('an analysis of many observables spreads its calls within the quota and says it is waiting', async () => {
    const harness = runnerHarness([limited], { settings: { limited: { base_url: `${fake.url}/ok` } } });
    try {
      times.length = 0;
      starts.length = 0;
      const results = await harness.analyze(ips(6), ['limited']);
      assert.equal(results.filter((r) => r.limited !== null).length, 6, 'every call waited its turn, none failed');
      // Each call's start (not its receipt at the fake, which a new connection or a busy machine
      // delays by tens of ms) by the quota's clock; a window shrunk by a margin for the time between
      // a call's slot and its start holds at most 2.
      assert.equal(starts.length, 6);
      for (const t of starts) assert.ok(starts.filter((u) => u >= t && u < t + 250).length <= 2, `calls started at ${starts.map((u) => u - starts[0]!)}`);
      assert.equal(times.length, 6, 'each call reached the fake');
    } finally {
      await harness.close();
    }
  });

  test('progress reports the quota wait (what the CLI spinner shows)', async () => {
    const harness = runnerHarness([limited], { settings: { limited: { base_url: `${fake.url}/ok` } } });
    try {
      const waits: string[] = [];
      await harness.analyze(ips(3).map((o) => ({ ...o, value: o.value.replace('8.8.4.', '9.9.9.') })), ['limited'], {
        onProgress: (p) => p.waiting && waits.push(p.waiting),
      });
      assert.match(waits[0]!, /^limited: quota of 2 per 300 ms reached, waiting \d+ s$/);
    } finally {
      await harness.close();
    }
  });

  test('a 429 pauses the engine for Retry-After; the failed call is retried after it', async () => {
    let calls = 0;
    fake.route('GET /throttled/*', (req) => {
      calls++;
      times.push(Date.now());
      return calls === 1 ? reply.tooMany(1) : { json: { ip: req.path.slice('/throttled/'.length) } };
    });
    const harness = runnerHarness([limited], {
      settings: { limited: { base_url: `${fake.url}/throttled`, rate_limit: 100, timeout_ms: 5000 } },
    });
    try {
      times.length = 0;
      const results = await harness.analyze(ips(1), ['limited']);
      assert.deepEqual(results[0]!.limited, { ip: '8.8.4.1' });
      const later = await harness.analyze([{ value: '1.0.0.1', type: 'IPv4' }], ['limited']);
      assert.deepEqual(later[0]!.limited, { ip: '1.0.0.1' });
      assert.equal(calls, 3);
    } finally {
      await harness.close();
    }
  });

  test('a used-up daily quota is an error for the engine, not a day-long wait', async () => {
    const harness = runnerHarness([limited], {
      settings: { limited: { base_url: `${fake.url}/ok`, rate_limit: 1, rate_window_ms: 86_400_000 } },
    });
    try {
      const [first, second] = await harness.analyze([{ value: '4.4.4.4', type: 'IPv4' }, { value: '4.4.4.5', type: 'IPv4' }], ['limited']);
      const failed = [first!, second!].filter((r) => r.errors?.limited);
      assert.equal(failed.length, 1);
      assert.match(failed[0]!.errors!.limited!, /^quota of 1 per day reached: next call possible in \d+\.\d h$/);
    } finally {
      await harness.close();
    }
  });
});
