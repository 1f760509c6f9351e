/**
 * The server answers under load (issue 33), without asserting any timing: the work one request
 * may cost is bounded, and what is costly runs where it does not hold up the HTTP surface.
 * - A list of 10 000 engine names, mostly unknown, gets its 400 naming at most MAX_UNKNOWN_NAMED
 *   of them (with their did-you-mean) and how many more there are: the suggestions, an edit
 *   distance to every name of the catalog each, are computed for those few only.
 * - A large text is extracted by a worker thread (the pool's counts say which), with the same
 *   observables as on this thread; while a worker holds one (a test worker that waits to be let
 *   go), a poll is answered, and the analysis after it. A text with too much work ahead of it is
 *   refused at once (503, Retry-After).
 * - Large bodies are checked within a budget per turn of the event loop: past it, the next waits
 *   for the next turn (after that turn's I/O).
 * - The analyses of `oas serve` are paced (src/server/pacer.ts): at most `limit` observables run
 *   at once, the rest get their place in the fair order, and the limit shrinks while the event
 *   loop is late.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { InputError, MAX_UNKNOWN_NAMED, prepareAnalysis } from '../src/analysis/request.js';
import { loadCatalog } from '../src/engine/catalog.js';
import { extractObservables } from '../src/observables/extract.js';
import { ExtractionBusyError, ExtractionPool, OFF_THREAD_MIN_CHARS } from '../src/observables/extract-pool.js';
import { createPacer, type Release } from '../src/server/pacer.js';
import { createTurnBudget } from '../src/server/turn-budget.js';
import { listen } from '../src/server/listen.js';
import { appOnUpstreams } from './helpers/app.js';

const served = appOnUpstreams();
const HELD_WORKER = new URL('./helpers/held-extract-worker.js', import.meta.url);

async function post(body: unknown, base = served.server.url): Promise<Response> {
  return fetch(`${base}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** ~`bytes` of alert text holding a few observables many times over (extraction scans it all). */
function alertText(bytes: number): string {
  const line = 'alert: host example.com resolved to 8.8.8.8, blocked hxxps://www[.]example[.]com/login for a@example.org\n';
  return line.repeat(Math.ceil(bytes / line.length));
}

/** A pool whose worker holds each text until `release()`; `started()` counts the texts it holds or held. */
function heldPool() {
  const gate = new Int32Array(new SharedArrayBuffer(8));
  const pool = new ExtractionPool({ size: 1, workerUrl: HELD_WORKER, workerData: gate });
  return {
    pool,
    started: () => Atomics.load(gate, 1),
    release: (texts = 1) => {
      Atomics.add(gate, 0, texts);
      Atomics.notify(gate, 0);
    },
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) await sleep(5);
  assert.ok(condition(), `never: ${what}`);
}

describe('a list of 10 000 engine names', () => {
  test('mostly unknown: 400 naming at most MAX_UNKNOWN_NAMED of them, and how many more', async () => {
    // Near misses of real names: each would get its own "did you mean" if one were computed per name.
    const engines = Array.from({ length: 10_000 }, (_, i) => (i % 5 === 0 ? 'reverse_dns' : `reverse_dn${i}`));
    const res = await post({ text: 'example.com', engines });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    const unknown = new Set(engines.filter((name) => name !== 'reverse_dns'));
    const shown = [...unknown].slice(0, MAX_UNKNOWN_NAMED);
    assert.ok(error.startsWith(`unknown engines: ${shown.join(', ')} and ${unknown.size - MAX_UNKNOWN_NAMED} more; did you mean `), error.slice(0, 300));
    assert.equal([...error.matchAll(/\(for reverse_dn\d+\)/g)].length, MAX_UNKNOWN_NAMED);
    assert.match(error, /\(valid engines: .*reverse_dns/);
    assert.ok(!error.includes(`reverse_dn${MAX_UNKNOWN_NAMED * 2}`), 'an unknown name past the first ones is named');
  });

  test('valid names repeated: each engine selected once', async () => {
    const catalog = await loadCatalog();
    const engines = Array.from({ length: 10_000 }, (_, i) => ['reverse_dns', ' reverse_dns ', 'public_dns'][i % 3]!);
    const prepared = prepareAnalysis(catalog, {}, { text: 'example.com', engines });
    assert.deepEqual(prepared.selections.map((s) => s.key), ['reverse_dns', 'public_dns']);
  });

  test('as many unknown names as may be named: each named, as before', async () => {
    const catalog = await loadCatalog();
    const engines = Array.from({ length: MAX_UNKNOWN_NAMED }, (_, i) => `reverse_dn${i}`);
    assert.throws(() => prepareAnalysis(catalog, {}, { text: 'example.com', engines }), (error: Error) => {
      assert.ok(error instanceof InputError);
      assert.ok(error.message.startsWith(`unknown engines: ${engines.join(', ')}; did you mean `), error.message.slice(0, 300));
      assert.ok(!error.message.includes(' more;'));
      return true;
    });
  });
});

describe('extraction of large texts', () => {
  test('a large text is extracted by a worker, a short one here, with the same observables', async () => {
    const pool = new ExtractionPool({ size: 1 });
    try {
      const large = alertText(1024 * 1024);
      const short = 'example.com and 8.8.8.8';
      assert.ok(short.length < OFF_THREAD_MIN_CHARS && large.length >= OFF_THREAD_MIN_CHARS);
      assert.deepEqual(await pool.extract(large), extractObservables(large));
      assert.deepEqual(await pool.extract(short), extractObservables(short));
      const stats = pool.stats();
      assert.deepEqual([stats.offThread, stats.inThread, stats.queued, stats.running], [1, 1, 0, 0]);
    } finally {
      await pool.close();
    }
  });

  test('a text with more than maxWaitMs of work ahead of it is refused at once', async () => {
    const held = heldPool();
    try {
      const text = alertText(OFF_THREAD_MIN_CHARS * 4);
      const first = held.pool.extract(text, { maxWaitMs: 0 });
      await until(() => held.started() === 1, 'the worker holds the first text');
      await assert.rejects(held.pool.extract(text, { maxWaitMs: 0 }), (error: Error) => {
        assert.ok(error instanceof ExtractionBusyError);
        assert.ok(error.retryAfterMs > 0);
        assert.match(error.message, /^1 large text is being extracted before it/);
        return true;
      });
      const second = held.pool.extract(text);
      held.release(2);
      assert.deepEqual(await first, extractObservables(text));
      assert.deepEqual(await second, extractObservables(text));
      assert.equal(held.pool.stats().refused, 1);
    } finally {
      await held.pool.close();
    }
  });

  test('a worker that dies: its text is extracted on this thread', async () => {
    const pool = new ExtractionPool({ size: 1, workerUrl: new URL('data:text/javascript,process.exit(3)') });
    try {
      const text = alertText(OFF_THREAD_MIN_CHARS * 2);
      assert.deepEqual(await pool.extract(text), extractObservables(text));
      assert.equal(pool.stats().inThread, 1);
    } finally {
      await pool.close();
    }
  });

  test('through the API: a poll is answered while a worker holds a 1 MiB text, then the analysis', async () => {
    const held = heldPool();
    const server = await listen(served.app, { extractionPool: held.pool });
    try {
      const small = await post({ text: 'example.com', engines: ['reverse_dns'] }, server.url);
      assert.equal(small.status, 200);
      const { analysis_id: id } = (await small.json()) as { analysis_id: string };
      const events: string[] = [];
      const big = post({ text: alertText(1000 * 1000), engines: ['reverse_dns'] }, server.url).then(async (res) => {
        events.push(`analysis ${res.status}`);
        return (await res.json()) as { analysis_id: string };
      });
      await until(() => held.started() === 1, 'the worker holds the text');
      const poll = await fetch(`${server.url}/api/is_analysis_complete/${id}`);
      events.push(`poll ${poll.status}`);
      assert.equal(held.pool.stats().running, 1, 'the text is still being extracted');
      held.release();
      const { analysis_id: bigId } = await big;
      assert.deepEqual(events, ['poll 200', 'analysis 200']);
      assert.deepEqual(held.pool.stats().offThread, 1);
      const header = await served.app.analyses.get(bigId);
      assert.deepEqual(header?.observables, extractObservables(alertText(1000 * 1000)));
    } finally {
      held.release(100);
      await server.close();
      await held.pool.close();
    }
  });

  test('through the API: a large text with too much work ahead of it gets 503 and Retry-After at once', async () => {
    const held = heldPool();
    const server = await listen(served.app, { extractionPool: held.pool });
    const pending: Promise<Response>[] = [];
    try {
      const body = { text: alertText(600 * 1000), engines: ['reverse_dns'] };
      let refused: Response | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        const answer = post(body, server.url);
        // Each text is queued (or refused) before the next is sent.
        await until(() => held.pool.stats().queued + held.pool.stats().running === i + 1 || held.pool.stats().refused > 0, 'the text queued or refused');
        const settled = held.pool.stats().refused > 0 ? await answer : undefined;
        if (settled?.status === 503) refused = settled;
        else pending.push(answer);
      }
      assert.ok(refused, 'no text refused');
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.match(((await refused.json()) as { error: string }).error, /^server busy: \d+ large texts are being extracted before it \(about \d+ s of work\); retry in \d+ s$/);
      assert.equal(held.pool.stats().refused, 1);
      held.release(100);
      for (const answer of pending) assert.equal((await answer).status, 200);
    } finally {
      held.release(100);
      await Promise.allSettled(pending);
      await server.close();
      await held.pool.close();
    }
  });
});

describe('pacing the analyses of oas serve', () => {
  const A1 = { owner: 'automation', analysis: 'a1' };
  const B1 = { owner: 'analyst', analysis: 'b1' };

  test('at most `limit` observables run; the others get their place as one is given back, in the fair order', async () => {
    const pacer = createPacer({ initialLimit: 2, minLimit: 2, maxLimit: 2 });
    try {
      const first = pacer.pace(A1);
      const second = pacer.pace(A1);
      assert.equal(typeof first, 'function');
      assert.equal(typeof second, 'function');
      const order: string[] = [];
      const waiting = [A1, A1, A1, B1].map((share, i) => Promise.resolve(pacer.pace(share)).then((release) => {
        order.push(`${share.owner} ${i}`);
        return release;
      }));
      assert.deepEqual([pacer.stats().running, pacer.stats().waiting], [2, 4]);
      (first as Release)();
      (first as Release)(); // a second call gives nothing back twice
      const next = await waiting[3]!;
      assert.deepEqual(order, ['analyst 3'], 'the analyst waits behind no bulk observable');
      assert.deepEqual([pacer.stats().running, pacer.stats().waiting], [2, 3]);
      (second as Release)();
      next();
      for (const place of waiting.slice(0, 3)) (await place)();
      assert.deepEqual(order, ['analyst 3', 'automation 0', 'automation 1', 'automation 2']);
      assert.deepEqual([pacer.stats().running, pacer.stats().waiting, pacer.stats().waited], [0, 0, 4]);
    } finally {
      pacer.close();
    }
  });

  test('the limit shrinks while the event loop is late', async () => {
    const pacer = createPacer({ initialLimit: 64 });
    try {
      const release = pacer.pace(A1) as Release;
      await sleep(30);
      const busyUntil = performance.now() + 200;
      while (performance.now() < busyUntil); // the loop held for 200 ms
      await sleep(1);
      assert.ok(pacer.stats().limit < 64, `limit ${pacer.stats().limit}`);
      release();
    } finally {
      pacer.close();
    }
  });

  test('oas serve paces the analyses it runs while it listens', async () => {
    assert.equal(typeof served.app.analyses.pace, 'function');
    const res = await post({ text: 'example.com 8.8.8.8', engines: ['reverse_dns'] });
    assert.equal(res.status, 200);
    await served.app.analyses.idle();
    const stats = served.server.pacer.stats();
    assert.deepEqual([stats.running, stats.waiting], [0, 0]);
  });
});

describe('large bodies checked within a budget per turn of the event loop', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  test('past the budget, the next check waits for the next turn', async () => {
    const turns = createTurnBudget(0);
    const order: string[] = [];
    const first = await turns.enter();
    const second = turns.enter().then((done) => {
      order.push('second');
      return done;
    });
    const third = turns.enter().then((done) => {
      order.push('third');
      return done;
    });
    first();
    first(); // given back twice: nothing more
    for (let i = 0; i < 10; i++) await Promise.resolve();
    assert.deepEqual([order, turns.waiting()], [[], 2], 'started in the same turn');
    await nextTurn();
    assert.deepEqual(order, ['second']);
    (await second)();
    await nextTurn();
    assert.deepEqual(order, ['second', 'third']);
    (await third)();
    assert.equal(turns.waiting(), 0);
  });

  test('within the budget, one after the other in the same turn', async () => {
    const turns = createTurnBudget(60_000);
    const first = await turns.enter();
    let started = false;
    const second = turns.enter().then((done) => {
      started = true;
      return done;
    });
    assert.equal(started, false, 'one check at a time');
    first();
    for (let i = 0; i < 10 && !started; i++) await Promise.resolve();
    assert.equal(started, true);
    (await second)();
  });
});
