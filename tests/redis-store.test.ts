/**
 * Analyses in Redis (src/scale/redis-analyses.ts) against a real redis-server of the test's own:
 * headers, rows (order, paging, a row written twice counted once), the unfinished analyses, and
 * the history, paged and searched, giving the same items as the SQLite history for the same
 * analyses. Then a worker's job (src/scale/worker.ts `processJob`) with an in-process runner
 * against a fake engine: a job run twice (one after the other, or both at once) writes one row,
 * calls the engine once, and the analysis completes once with the right verdict counts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import Keyv from 'keyv';
import * as v from 'valibot';
import type { AnalysisHeader } from '../src/store/analysis-store.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine } from '../src/engine/contract.js';
import { HttpTransport } from '../src/http/client.js';
import type { Observable } from '../src/observables/types.js';
import { EngineRunner } from '../src/runner/runner.js';
import type { ObservableJob } from '../src/scale/queue.js';
import { RedisAnalysisStore } from '../src/scale/redis-analyses.js';
import { processJob } from '../src/scale/worker.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { sqliteAnalysisStore } from '../src/store/sqlite-analyses.js';
import { openStorage, type Storage } from '../src/store/storage.js';
import { parseVerdict, type Verdict } from '../src/verdict/verdict.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { removeTempDir, tempDir } from './helpers/temp.js';

const ENGINES = ['reverse_dns', 'provider_13'];

let clock = Date.parse('2026-03-01T08:00:00.000Z');

/** A header as the analysis service writes it; each one a minute younger than the last. */
function header(observables: Observable[], over: Partial<AnalysisHeader> = {}): AnalysisHeader {
  clock += 60_000;
  return {
    id: randomUUID(),
    origin: 'server',
    created_at: new Date(clock).toISOString(),
    finished_at: null,
    duration_ms: null,
    engines: ENGINES,
    ignore_cache: false,
    observables,
    complete: false,
    progress: { done: 0, total: observables.length * ENGINES.length },
    format: 2,
    ...over,
  };
}

function completed(h: AnalysisHeader, verdicts: AnalysisHeader['verdicts']): AnalysisHeader {
  const finished = Date.parse(h.created_at) + 1234;
  const final: AnalysisHeader = { ...h, complete: true, finished_at: new Date(finished).toISOString(), duration_ms: 1234, progress: { done: h.progress.total, total: h.progress.total } };
  if (verdicts) final.verdicts = verdicts;
  return final;
}

const fqdn = (value: string): Observable => ({ value, type: 'FQDN' });
const ip = (value: string): Observable => ({ value, type: 'IPv4' });

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = (i * 7919 + 13) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('RedisAnalysisStore', { skip: redisSkip, timeout: 60_000 }, () => {
  let redis: RedisServer;
  let store: RedisAnalysisStore;

  before(async () => {
    redis = await startRedis();
    store = new RedisAnalysisStore(redis.client);
  });

  after(async () => {
    await redis?.close();
  });

  test('headers: putHeader, getHeader and completeOf; unknown ids are undefined', async () => {
    const unknown = randomUUID();
    assert.equal(await store.getHeader(unknown), undefined);
    assert.equal(await store.completeOf(unknown), undefined);

    const running = header([fqdn('example.com'), ip('8.8.8.8')]);
    await store.putHeader(running);
    assert.deepEqual(await store.getHeader(running.id), running);
    assert.equal(await store.completeOf(running.id), false);
    assert.equal(await redis.client.hget(`oas:analysis:${running.id}`, 'complete'), '0', 'the documented key layout');

    const done = completed(running, { malicious: 0, suspicious: 1, clean: 1, unknown: 0, worst: 'suspicious' });
    await store.putHeader(done);
    assert.deepEqual(await store.getHeader(running.id), done, 'replaced whole');
    assert.equal(await store.completeOf(running.id), true);
  });

  test('rows: putRows replaces by index, rowPage pages in index order, rows(have) skips what the caller holds', async () => {
    const id = randomUUID();
    assert.deepEqual(await store.rowPage(id, -1, 10), []);
    assert.deepEqual(await store.rows(id, new Set()), []);
    assert.deepEqual(await store.savedIndices(id), []);

    const n = 1234; // more than one HSET's worth
    const text = (i: number) => JSON.stringify({ observable: `host${i}.example.org`, n: i });
    await store.putRows(id, shuffled(Array.from({ length: n }, (_, i) => [i, text(i)] as const)));
    await store.putRows(id, [[5, 'replaced']]);
    const expected = (i: number) => (i === 5 ? 'replaced' : text(i));

    assert.deepEqual((await store.savedIndices(id)).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    const first = await store.rowPage(id, -1, 500);
    assert.deepEqual(first.map((r) => r.idx), Array.from({ length: 500 }, (_, i) => i), 'the first page in index order (numeric, not "10" before "2")');
    const all: { idx: number; value: string }[] = [];
    for (let after = -1; ;) {
      const page = await store.rowPage(id, after, 300);
      all.push(...page);
      if (page.length < 300) break;
      after = page[page.length - 1]!.idx;
    }
    assert.deepEqual(all, Array.from({ length: n }, (_, i) => ({ idx: i, value: expected(i) })), 'paged through: every row once, in order');
    assert.deepEqual(await store.rowPage(id, n - 1, 10), []);

    const have = new Set([0, 1, 700, 99_999]);
    const rows = (await store.rows(id, have)).sort((a, b) => a.idx - b.idx);
    assert.deepEqual(rows, Array.from({ length: n }, (_, i) => ({ idx: i, value: have.has(i) ? null : expected(i) })), 'held rows are listed but not read; no row for an index never written');

    const sparse = randomUUID();
    await store.putRows(sparse, [[10, 'ten'], [2, 'two'], [7, 'seven']]);
    assert.deepEqual(await store.rowPage(sparse, -1, 2), [{ idx: 2, value: 'two' }, { idx: 7, value: 'seven' }]);
    assert.deepEqual(await store.rowPage(sparse, 7, 2), [{ idx: 10, value: 'ten' }]);
  });

  test('verdicts: each row\'s is kept beside it and read with it; a row replaced without one keeps none; remove drops them', async () => {
    const id = randomUUID();
    await store.putRows(id, [[0, '"zero"', 'v0'], [1, '"one"'], [2, '"two"', 'v2']]);
    assert.deepEqual(await store.rowPage(id, -1, 10), [{ idx: 0, value: '"zero"', verdict: 'v0' }, { idx: 1, value: '"one"' }, { idx: 2, value: '"two"', verdict: 'v2' }]);
    assert.deepEqual(await store.rowPage(id, 0, 1), [{ idx: 1, value: '"one"' }], 'a row of an older version: no verdict');
    await store.putRows(id, [[2, '"two again"']]);
    assert.deepEqual(await store.rowPage(id, 1, 10), [{ idx: 2, value: '"two again"' }], 'the replaced row\'s verdict is gone with it');
    assert.deepEqual((await store.rows(id, new Set([1]))).sort((a, b) => a.idx - b.idx), [{ idx: 0, value: '"zero"', verdict: 'v0' }, { idx: 1, value: null }, { idx: 2, value: '"two again"' }]);
    await store.remove(id);
    assert.equal(await redis.client.exists(`oas:analysis:${id}:verdicts`), 0);
  });

  test('addRow: writing one observable twice counts it once (the count is the rows there are)', async () => {
    const id = randomUUID();
    assert.equal(await store.addRow(id, 3, '"a"', 'va'), 1);
    assert.equal(await store.addRow(id, 3, '"b"', 'vb'), 1, 'the same index again counts once');
    assert.equal(await store.addRow(id, 0, '"c"', 'vc'), 2);
    assert.equal(await store.hasRow(id, 3), true);
    assert.equal(await store.hasRow(id, 1), false);
    assert.equal(await store.rowCount(id), 2);
    const written = [{ idx: 0, value: '"c"', verdict: 'vc' }, { idx: 3, value: '"b"', verdict: 'vb' }];
    assert.deepEqual(await store.rowPage(id, -1, 10), written, 'the later write replaced the earlier, its verdict with it');
    assert.deepEqual((await store.rows(id, new Set())).sort((a, b) => a.idx - b.idx), written);
  });

  test('unfinished: the server\'s analyses not complete, and no longer once complete', async () => {
    const own = new RedisAnalysisStore(redis.client, 'unfinished-test:');
    const serverRunning = header([fqdn('a.example')]);
    const cliRunning = header([fqdn('b.example')], { origin: 'cli' });
    const serverDone = completed(header([fqdn('c.example')]), undefined);
    for (const h of [serverRunning, cliRunning, serverDone]) await own.putHeader(h);
    assert.deepEqual(await own.unfinished(), [serverRunning]);
    await own.putHeader(completed(serverRunning, { malicious: 0, suspicious: 0, clean: 0, unknown: 1, worst: 'unknown' }));
    assert.deepEqual(await own.unfinished(), []);
  });

  test('remove: an analysis that was never accepted leaves no header, row or history entry', async () => {
    const own = new RedisAnalysisStore(redis.client, 'remove-test:');
    const kept = header([fqdn('kept.example')]);
    const dropped = header([fqdn('dropped.example')]);
    for (const h of [kept, dropped]) await own.putHeader(h);
    await own.putRows(dropped.id, [[0, JSON.stringify({ observable: 'dropped.example', type: 'FQDN', reversed_success: false })]]);
    await own.remove(dropped.id);
    assert.equal(await own.getHeader(dropped.id), undefined);
    assert.deepEqual(await own.savedIndices(dropped.id), []);
    assert.deepEqual(await own.unfinished(), [kept]);
    const page = await own.history({ query: '', page: 1, perPage: 10 }, (key) => key);
    assert.deepEqual(page.items.map((item) => item.id), [kept.id]);
    assert.equal(page.total, 1);
  });

  test('cortexJobs: the Cortex jobs not deleted, newest first, as SQLite gives them; a deletion or a removal drops one', async () => {
    const dir = tempDir('oas-redis-cortex-');
    const storage = await openStorage(join(dir, 'data'));
    try {
      const stores = [new RedisAnalysisStore(redis.client, 'cortex-test:'), sqliteAnalysisStore(storage)];
      const job = (data: string, over: Partial<NonNullable<AnalysisHeader['cortex']>> = {}) =>
        header([fqdn(data)], { cortex: { analyzer: 'oas_Intel_1_0', data_type: 'fqdn', data, message: '', parameters: {}, ...over } });
      const first = job('first.cyberbro.net');
      const plain = header([fqdn('not-a-job.cyberbro.net')]);
      const second = completed(job('second.cyberbro.net'), undefined);
      const deleted = job('deleted.cyberbro.net', { deleted: true });
      const third = job('third.cyberbro.net');
      const removed = job('removed.cyberbro.net');
      for (const store of stores) {
        for (const h of [first, plain, second, deleted, third, removed]) await store.putHeader(h);
        await store.remove(removed.id);
        assert.deepEqual((await store.cortexJobs(10)).map((h) => h.id), [third.id, second.id, first.id]);
        assert.deepEqual(await store.cortexJobs(1), [third]);
        await store.putHeader({ ...third, cortex: { ...third.cortex!, deleted: true } });
        assert.deepEqual((await store.cortexJobs(10)).map((h) => h.id), [second.id, first.id]);
        // Marked deleted alone: the rest of the header as stored.
        await store.markCortexDeleted(first.id);
        assert.deepEqual((await store.cortexJobs(10)).map((h) => h.id), [second.id]);
        assert.deepEqual({ ...(await store.getHeader(first.id))! }, { ...first, cortex: { ...first.cortex!, deleted: true } });
        if (store instanceof RedisAnalysisStore) {
          // A worker completing it writes the header it read before: the job stays deleted
          // (in SQLite the jobs run in the server that deletes them: src/analysis/service.ts marks it again).
          await store.putHeader(completed(first, undefined));
          const read = (await store.getHeader(first.id))!;
          assert.deepEqual([read.complete, read.cortex?.deleted], [true, true]);
          assert.deepEqual((await store.cortexJobs(10)).map((h) => h.id), [second.id]);
        }
        await store.markCortexDeleted(plain.id);
        assert.equal((await store.getHeader(plain.id))!.cortex, undefined, 'no Cortex job: nothing marked');
      }
    } finally {
      await storage.close();
      removeTempDir(dir);
    }
  });

  describe('history: the same pages and searches as the SQLite history', () => {
    let dir: string;
    let storage: Storage;
    const own = () => new RedisAnalysisStore(redis.client, 'history-test:');
    const written = new Map<string, AnalysisHeader>();

    before(async () => {
      dir = tempDir('oas-redis-store-');
      storage = await openStorage(join(dir, 'data'));
      const sqlite = sqliteAnalysisStore(storage);
      const redisStore = own();
      const verdicts: Verdict[] = ['malicious', 'suspicious', 'clean', 'unknown'];
      for (let i = 0; i < 31; i++) {
        const observables = [
          fqdn(i % 3 === 0 ? `Host${i}.Example.COM` : `host${i}.other.net`),
          ip(`45.79.${i}.1`),
          ...(i % 4 === 0 ? Array.from({ length: 6 }, (_, k) => fqdn(`extra${k}.EVIL-domain.net`)) : []),
        ];
        const engines = i % 2 === 0 ? ENGINES : ['provider_13'];
        let h = header(observables, { engines, progress: { done: 0, total: observables.length * engines.length } });
        if (i % 5 !== 4) {
          const worst = verdicts[i % 4]!;
          h = completed(h, { malicious: worst === 'malicious' ? 1 : 0, suspicious: i % 4 === 1 ? 2 : 0, clean: observables.length - 1, unknown: 0, worst });
        }
        if (i === 7) delete h.verdicts; // a record of an older version: complete, no counts
        // Who started it: two users, the CLI, and (records of older versions) no one recorded.
        const by = (['alice', 'bob', 'cli', undefined] as const)[i % 4];
        if (by !== undefined) h.started_by = by;
        await sqlite.putHeader(h);
        await redisStore.putHeader(h);
        written.set(h.id, h);
      }
    });

    after(async () => {
      await storage?.close();
      if (dir) removeTempDir(dir);
    });

    const labelOf = (key: string) => `Label of ${key}`;
    // A needle spanning two observables (joined by a newline) matches none of them.
    const queries = ['', 'example', 'EXAMPLE.com', '  Evil-Domain  ', 'host1', '45.79.2', 'nothing-like-this', 'example.com\n45.79'];

    for (const query of queries) {
      test(`q=${JSON.stringify(query)}: every page as SQLite gives it`, async () => {
        const sqlite = sqliteAnalysisStore(storage);
        const redisStore = own();
        let seen = 0;
        for (let page = 1; page <= 6; page++) {
          const q = { query, page, perPage: 7 };
          const expected = await sqlite.history(q, labelOf);
          const actual = await redisStore.history(q, labelOf);
          assert.deepEqual(actual, expected, `page ${page}`);
          seen += actual.items.length;
        }
        const { total } = await sqlite.history({ query, page: 1, perPage: 7 }, labelOf);
        assert.equal(seen, total, 'the pages hold every match once');
        if (query === '' || query === 'example' || query === '  Evil-Domain  ') assert.ok(total > 7, 'more than one page');
        if (query === 'nothing-like-this') assert.equal(total, 0);
      });
    }

    // "mine": only the analyses one user started, searched or not; a name no analysis has lists none.
    for (const [startedBy, query] of [['alice', ''], ['bob', 'example'], ['cli', '45.79.1'], ['carol', ''], ['alice', 'nothing-like-this']] as const) {
      test(`startedBy=${startedBy} q=${JSON.stringify(query)}: every page as SQLite gives it, only that user's`, async () => {
        const sqlite = sqliteAnalysisStore(storage);
        const redisStore = own();
        let seen = 0;
        for (let page = 1; page <= 4; page++) {
          const q = { query, page, perPage: 3, startedBy };
          const expected = await sqlite.history(q, labelOf);
          const actual = await redisStore.history(q, labelOf);
          assert.deepEqual(actual, expected, `page ${page}`);
          for (const item of actual.items) assert.equal(item.started_by, startedBy);
          seen += actual.items.length;
        }
        const everyone = await sqlite.history({ query, page: 1, perPage: 100 }, labelOf);
        const theirs = everyone.items.filter((item) => item.started_by === startedBy).length;
        const { total } = await sqlite.history({ query, page: 1, perPage: 3, startedBy }, labelOf);
        assert.equal(total, theirs, 'the total counts only theirs');
        assert.equal(seen, Math.min(total, 12));
        if (startedBy === 'alice' && query === '') assert.ok(total > 3, 'more than one page');
        if (startedBy === 'carol') assert.equal(total, 0);
      });
    }

    test('items: newest first, five observables shown, verdict counts only when complete', async () => {
      const view = await own().history({ query: '', page: 1, perPage: 50 }, labelOf);
      assert.equal(view.total, 31);
      const times = view.items.map((item) => Date.parse(item.created_at));
      assert.deepEqual(times, [...times].sort((a, b) => b - a));
      const big = view.items.find((item) => item.observable_count === 8)!;
      assert.equal(big.observables.length, 5);
      for (const item of view.items) {
        const h = written.get(item.id)!;
        assert.deepEqual(item.verdicts, h.complete ? h.verdicts ?? null : null, 'counts when complete (none for a record of an older version)');
        assert.deepEqual(item.engine_labels, h.engines.map(labelOf));
        assert.equal(item.started_by, h.started_by ?? null, 'who started it (null when not recorded)');
      }
      assert.ok(view.items.some((item) => item.complete && item.verdicts === null), 'the older record is there');
      assert.ok(view.items.some((item) => !item.complete), 'running analyses are there');
    });
  });
});

describe('processJob: a worker\'s job', { skip: redisSkip, timeout: 60_000 }, () => {
  /** Judges by name: bad.* malicious, odd.* suspicious, anything else clean. */
  const judge = defineEngine({
    id: 'judge',
    service: 'judgesvc',
    label: 'Judge',
    description: 'test engine: GET /judge?q=',
    tags: ['domain'],
    types: ['FQDN'],
    defaults: { timeout_ms: 2000, base_url: '' },
    summary: (r: { level: string }) => r.level,
    evidence: (r) => (r ? { level: r.level as 'malicious' | 'suspicious' | 'clean', reason: `judged ${r.level}` } : undefined),
    run: async (o, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/judge`, v.object({ level: v.string() }), { query: { q: o.value } }),
  });

  let redis: RedisServer;
  let fake: FakeHttpServer;
  let transport: HttpTransport;
  let catalog: Catalog;
  let runner: EngineRunner;
  /** Closed in `after` even when a test fails. */
  const subscribers: Redis[] = [];

  /**
   * Counts the writes of an analysis's header hash as Redis reports them (keyspace
   * notifications): one when it is accepted, one when it completes.
   */
  async function headerWrites(id: string): Promise<{ count(): Promise<number> }> {
    await redis.client.config('SET', 'notify-keyspace-events', 'Kh');
    const subscriber = redis.client.duplicate();
    subscribers.push(subscriber);
    let writes = 0;
    subscriber.on('pmessage', (_pattern, _channel, event) => {
      if (event === 'hset') writes++;
    });
    await subscriber.psubscribe(`__keyspace@*__:oas:analysis:${id}`);
    return {
      // A round trip on the subscriber: every notification of a write already made is in before it.
      count: async () => {
        await subscriber.ping();
        return writes;
      },
    };
  }

  before(async () => {
    redis = await startRedis();
    fake = await startFakeHttp({
      'GET /judge': (req) => {
        const q = req.query.get('q') ?? '';
        return { json: { level: q.startsWith('bad.') ? 'malicious' : q.startsWith('odd.') ? 'suspicious' : 'clean' } };
      },
    }, { latencyMs: 20 });
    transport = new HttpTransport();
    catalog = new Catalog([judge]);
    runner = new EngineRunner({
      catalog: [judge],
      services: { transport, dnsServers: [], dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(new Keyv(), id) },
      cache: new Keyv(),
      cacheTtlSeconds: 0, // no cache: a second engine call would show
      concurrency: 8,
      engineSettings: { judge: { base_url: fake.url } },
    });
  });

  after(async () => {
    for (const subscriber of subscribers) subscriber.disconnect();
    await transport?.close();
    await fake?.close();
    await redis?.close();
  });

  function jobsOf(h: AnalysisHeader): ObservableJob[] {
    return h.observables.map((observable, index) => ({ analysis: h.id, index, observable, engines: ['judge'], ignore_cache: false, total: h.observables.length }));
  }

  const names = ['bad.example.com', 'odd.example.net', 'fine.example.org', 'also-fine.example.org'];

  test('run twice, one after the other: one row each, one engine call each, completed once with the verdicts counted', async () => {
    const store = new RedisAnalysisStore(redis.client);
    const h = header(names.map(fqdn), { engines: ['judge'], progress: { done: 0, total: names.length } });
    const writes = await headerWrites(h.id);
    await store.putHeader(h);
    const jobs = jobsOf(h);
    fake.reset();

    await processJob(jobs[0]!, store, runner, catalog);
    await processJob(jobs[0]!, store, runner, catalog);
    assert.equal(fake.hits('GET /judge').length, 1, 'a job whose row exists calls no engine');
    assert.equal(await store.rowCount(h.id), 1);
    assert.equal(await store.completeOf(h.id), false);

    for (const job of jobs.slice(1)) await processJob(job, store, runner, catalog);
    assert.equal(await store.completeOf(h.id), true);
    const final = (await store.getHeader(h.id))!;
    assert.deepEqual(final.verdicts, { malicious: 1, suspicious: 1, clean: 2, unknown: 0, worst: 'malicious' });
    assert.deepEqual(final.progress, { done: names.length, total: names.length });
    assert.ok(final.finished_at && typeof final.duration_ms === 'number');
    const rows = await store.rowPage(h.id, -1, 10);
    assert.deepEqual(rows.map((r) => (JSON.parse(r.value) as { observable: string }).observable), names, 'one row per observable');
    assert.deepEqual(JSON.parse(rows[0]!.value).judge, { level: 'malicious' });
    assert.deepEqual(rows.map((r) => parseVerdict(r.verdict)), [
      { verdict: 'malicious', reasons: ['judge: judged malicious'] },
      { verdict: 'suspicious', reasons: ['judge: judged suspicious'] },
      { verdict: 'clean', reasons: ['judge: judged clean'] },
      { verdict: 'clean', reasons: ['judge: judged clean'] },
    ], 'each row\'s verdict, worked out by its worker, stored beside it');

    for (const job of jobs) await processJob(job, store, runner, catalog);
    assert.equal(fake.hits('GET /judge').length, names.length, 'one engine call per observable in all');
    assert.equal(await store.rowCount(h.id), names.length);
    assert.equal(await writes.count(), 2, 'the header written when accepted, then once when complete');
    assert.deepEqual(await store.getHeader(h.id), final, 'the completed header is left as it was');

    const item = (await store.history({ query: names[0]!, page: 1, perPage: 5 }, (k) => k)).items.find((i) => i.id === h.id);
    assert.deepEqual(item?.verdicts, final.verdicts, 'the history shows the counts');
  });

  test('run twice at once (a job taken over from a worker still running it): one row, completed once', async () => {
    const store = new RedisAnalysisStore(redis.client);
    const h = header(names.map(fqdn), { engines: ['judge'], progress: { done: 0, total: names.length } });
    const writes = await headerWrites(h.id);
    await store.putHeader(h);
    const jobs = jobsOf(h);
    await Promise.all(jobs.slice(0, -1).map((job) => processJob(job, store, runner, catalog)));
    const last = jobs[jobs.length - 1]!;
    await Promise.all([processJob(last, store, runner, catalog), processJob(last, store, runner, catalog), processJob(jobs[0]!, store, runner, catalog)]);
    assert.equal(await store.rowCount(h.id), names.length);
    assert.equal(await store.completeOf(h.id), true);
    assert.equal(await writes.count(), 2, 'the header written when accepted, then once when complete');
    assert.deepEqual((await store.getHeader(h.id))!.verdicts, { malicious: 1, suspicious: 1, clean: 2, unknown: 0, worst: 'malicious' });
  });
});
