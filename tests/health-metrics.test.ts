/**
 * Health and metrics of `oas serve` (issue 25), over real HTTP with `oas serve` as a subprocess,
 * its engines pointed at loopback fakes: /healthz and /readyz (public, tiny JSON, ahead of the
 * Host check), /readyz 503 while the store is gone (the SQLite file moved away; Redis stopped)
 * and 200 once it is back, /healthz 503 once the server stops, and /metrics behind the token,
 * read by a strict parser of the Prometheus text format (tests/helpers/prometheus.ts), whose
 * counters move as analyses run: analyses and observables, engine calls by outcome (ok,
 * not_found, error, cached) with their durations, quota waits, and HTTP requests by route
 * template, never by id.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApp } from '../src/app.js';
import { listen } from '../src/server/listen.js';
import { createMetrics } from '../src/server/metrics.js';
import { ExpositionError, parseExposition, samplesOf, valueOf, type Family } from './helpers/prometheus.js';
import { freePort, redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'metrics-test-token-3f9a1c';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** Polls `check` until it holds (15 s at most: a bound, not a timing assertion). */
async function until(check: () => Promise<boolean>, what: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  assert.fail(`never: ${what()}`);
}

/** GET with a Host header of our choosing (fetch does not let one set it). */
function getWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

/** GET /metrics, checked as Prometheus reads it; returns the text and its families. */
async function scrape(url: string, headers: Record<string, string> = AUTH): Promise<{ text: string; families: Map<string, Family> }> {
  const res = await fetch(`${url}/metrics`, { headers });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return { text, families: parseExposition(text) };
}

async function analyze(url: string, text: string, engines: string[], headers: Record<string, string> = AUTH): Promise<string> {
  const res = await fetch(`${url}/api/analyze`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ text, engines }) });
  const body = await json(res);
  assert.equal(res.status, 200, JSON.stringify(body));
  const id = body.analysis_id as string;
  await until(async () => ((await json(await fetch(`${url}/api/is_analysis_complete/${id}`, { headers }))).complete === true), () => `analysis ${id} complete`);
  const results = await fetch(`${url}/api/results/${id}`, { headers });
  assert.equal(results.status, 200);
  await results.arrayBuffer();
  return id;
}

describe('the strict exposition parser', () => {
  test('reads what the format allows: escapes, timestamps, blank lines, comments, histograms', () => {
    const families = parseExposition([
      '# a comment',
      '# HELP x_total A "help" with \\\\ and \\n.',
      '# TYPE x_total counter',
      'x_total{a="q\\"uo\\\\te\\nd",b="2",} 3 1700000000000',
      '',
      '# TYPE h histogram',
      'h_bucket{le="0.5"} 1',
      'h_bucket{le="+Inf"} 2',
      'h_sum 0.75',
      'h_count 2',
      'g NaN',
      'n Nan',
      'i -Inf',
      '',
    ].join('\n'));
    assert.equal(families.get('x_total')!.help, 'A "help" with \\ and \n.');
    assert.deepEqual(families.get('x_total')!.samples[0], { name: 'x_total', labels: { a: 'q"uo\\te\nd', b: '2' }, value: 3, timestamp: 1700000000000 });
    assert.equal(valueOf(families, 'h_count'), 2);
    assert.equal(families.get('g')!.type, 'untyped');
    assert.ok(Number.isNaN(valueOf(families, 'n')), 'Nan, as prom-client writes it and Go reads it');
    assert.equal(valueOf(families, 'i'), Number.NEGATIVE_INFINITY);
  });

  test('refuses what Prometheus refuses', () => {
    const bad: [string, RegExp][] = [
      ['x 1', /line feed/],
      ['x{a="1"} 1\nx{a="1"} 2\n', /seen before/],
      ['x{a="\\t"} 1\n', /invalid escape/],
      ['x{a="1} 1\n', /unterminated|expected/],
      ['x{1a="1"} 1\n', /label name/],
      ['x{__a="1"} 1\n', /reserved/],
      ['x 1 2 3\n', /value and at most a timestamp/],
      ['x one\n', /invalid value/],
      ['x 1 1.5\n', /timestamp/],
      ['x{a="1"}1\n', /blanks/],
      ['# TYPE x counter\n# TYPE x counter\n', /second TYPE/],
      ['x 1\n# TYPE x counter\n', /after its samples/],
      ['# TYPE x summery\n', /unknown type/],
      ['# TYPE c counter\nc -1\n', /below zero/],
      ['# TYPE s summary\ns 1\n', /summary sample without quantile/],
      ['# TYPE s summary\ns{quantile="2"} 1\ns_sum 1\ns_count 1\n', /outside 0..1/],
      ['x{a="1"} 1\ny 1\nx{a="2"} 1\n', /not one group/],
      ['# HELP x bad \\t escape\n', /invalid escape/],
      ['# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /\+Inf/],
      ['# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="0.5"} 2\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n', /increasing le/],
      ['# TYPE h histogram\nh_bucket{le="0.5"} 2\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n', /cumulative/],
      ['# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', /differs/],
      ['# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 2\n', /no _sum/],
      ['# TYPE h histogram\nh 2\n', /sample named h\b/],
      ['x\r 1\n', /carriage return/],
    ];
    for (const [text, message] of bad) {
      assert.throws(() => parseExposition(text), (error: unknown) => error instanceof ExpositionError && message.test(error.message), JSON.stringify(text));
    }
  });
});

describe('oas serve with api_token: health and metrics', { timeout: 120_000 }, () => {
  let upstreams: Upstreams;
  let config: ReturnType<typeof configFor>;
  let server: ServeProcess;
  const QUOTA_ENGINE = 'provider_11'; // ipapi, answered by the intel fake for any address
  const FAILING_ENGINE = 'provider_13'; // ipquery, pointed at a closed loopback port
  const UNCONFIGURED_ENGINE = 'provider_02'; // alienvault, no API key

  before(async () => {
    upstreams = await startUpstreams();
    const closed = await freePort();
    config = configFor(upstreams, {
      api_token: TOKEN,
      engines: {
        [QUOTA_ENGINE]: { rate_limit: 1, rate_window_ms: 500 },
        [FAILING_ENGINE]: { base_url: `http://127.0.0.1:${closed}/ipquery`, retries: 0 },
      },
    });
    server = await spawnServe(config.file);
  });
  after(async () => {
    await server?.stop();
    await upstreams?.close();
  });

  test('/healthz and /readyz answer 200 without a token, with a tiny JSON', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${server.url}${path}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.deepEqual(await res.json(), { status: 'ok' });
    }
  });

  test('the probes answer whatever Host names the server; everything else is still checked (421)', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await getWithHost(`${server.url}${path}`, '10.1.2.3:8080');
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(JSON.parse(res.body), { status: 'ok' });
    }
    assert.equal((await getWithHost(`${server.url}/metrics`, '10.1.2.3:8080', AUTH)).status, 421);
  });

  test('/metrics needs the token: 401 without it or with a wrong one, 200 with it (Bearer or X-API-Key)', async () => {
    const none = await fetch(`${server.url}/metrics`);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.doesNotMatch(await none.text(), /oas_|process_/);
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    assert.equal(wrong.status, 401);
    await wrong.arrayBuffer();
    await scrape(server.url);
    await scrape(server.url, { 'x-api-key': TOKEN });
  });

  test('the text is valid Prometheus exposition, with every oas metric typed and the process defaults', async () => {
    const { families } = await scrape(server.url);
    const expected: Record<string, string> = {
      oas_analyses_started_total: 'counter',
      oas_analyses_running: 'gauge',
      oas_observables_total: 'counter',
      oas_engine_calls_total: 'counter',
      oas_engine_call_duration_seconds: 'histogram',
      oas_quota_wait_seconds_total: 'counter',
      oas_http_requests_total: 'counter',
      oas_http_request_duration_seconds: 'histogram',
      process_cpu_user_seconds_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
      nodejs_heap_size_used_bytes: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) {
      const family = families.get(name);
      assert.ok(family, `${name} is exposed`);
      assert.equal(family.type, type, name);
      assert.ok(family.help && family.help.length > 0, `${name} has a HELP`);
    }
  });

  test('counters move as analyses run: analyses, observables, engine calls by outcome, durations, quota waits, routes', async () => {
    const before = (await scrape(server.url)).families;
    const engines = ['reverse_dns', QUOTA_ENGINE, FAILING_ENGINE];
    // 8.8.8.8 has a PTR name (ok), 1.2.3.4 none (not_found); the failing engine errs on both; the
    // quota engine (1 call per 500 ms) makes its second call wait.
    const first = await analyze(server.url, '8.8.8.8 1.2.3.4', engines);
    // Again: reverse_dns and the quota engine from the cache (errors are not cached).
    const second = await analyze(server.url, '8.8.8.8 1.2.3.4', engines);
    // An engine without its key: an error, and no duration (it never ran).
    const third = await analyze(server.url, '8.8.8.8', [UNCONFIGURED_ENGINE]);
    // Unknown id and unknown path: a template and `unmatched`, never the id.
    const unknownId = '0badc0de-0000-4000-8000-00000000abcd';
    assert.equal((await fetch(`${server.url}/api/results/${unknownId}`, { headers: AUTH })).status, 404);
    assert.equal((await fetch(`${server.url}/no-such-page-7f3e9b`, { headers: AUTH })).status, 404);
    assert.equal((await fetch(`${server.url}/no-such-page-unauthenticated-5d1c`)).status, 401);

    let now!: { text: string; families: Map<string, Family> };
    await until(async () => {
      now = await scrape(server.url);
      return valueOf(now.families, 'oas_analyses_running') === 0;
    }, () => 'oas_analyses_running back to 0');
    const { text, families } = now;
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(families, name, labels) - valueOf(before, name, labels);

    assert.equal(delta('oas_analyses_started_total', { origin: 'server' }), 3);
    assert.equal(delta('oas_observables_total'), 5);
    const calls = (engine: string, outcome: string) => delta('oas_engine_calls_total', { engine, outcome });
    assert.equal(calls('reverse_dns', 'ok'), 1);
    assert.equal(calls('reverse_dns', 'not_found'), 1);
    assert.equal(calls('reverse_dns', 'cached'), 2);
    assert.equal(calls(QUOTA_ENGINE, 'ok'), 2);
    assert.equal(calls(QUOTA_ENGINE, 'cached'), 2);
    assert.equal(calls(FAILING_ENGINE, 'error'), 4);
    assert.equal(calls(FAILING_ENGINE, 'cached'), 0);
    assert.equal(calls(UNCONFIGURED_ENGINE, 'error'), 1);
    // A duration for every call the engine made, none for the cached ones.
    assert.equal(delta('oas_engine_call_duration_seconds_count', { engine: 'reverse_dns' }), 2);
    assert.equal(delta('oas_engine_call_duration_seconds_count', { engine: QUOTA_ENGINE }), 2);
    assert.equal(delta('oas_engine_call_duration_seconds_count', { engine: FAILING_ENGINE }), 4);
    assert.equal(delta('oas_engine_call_duration_seconds_bucket', { engine: FAILING_ENGINE, le: '+Inf' }), 4);
    assert.equal(delta('oas_engine_call_duration_seconds_count', { engine: UNCONFIGURED_ENGINE }), 0);
    assert.ok(delta('oas_quota_wait_seconds_total', { engine: QUOTA_ENGINE }) > 0, 'the quota engine waited for its quota');
    assert.equal(valueOf(families, 'oas_quota_wait_seconds_total', { engine: 'reverse_dns' }), 0, 'an engine without a quota never waits for one');

    const requests = (method: string, route: string, status: string) => delta('oas_http_requests_total', { method, route, status });
    assert.equal(requests('POST', '/api/analyze', '200'), 3);
    assert.equal(requests('GET', '/api/results/:id', '200'), 3);
    assert.equal(requests('GET', '/api/results/:id', '404'), 1);
    assert.ok(requests('GET', '/api/is_analysis_complete/:id', '200') >= 3);
    assert.equal(requests('GET', 'unmatched', '404'), 1);
    assert.equal(requests('GET', 'unmatched', '401'), 1);
    assert.equal(delta('oas_http_request_duration_seconds_count', { route: '/api/results/:id' }), 4);

    // No id, no path of an unknown page, no token, anywhere in the text; every route a template.
    for (const secret of [first, second, third, unknownId, 'no-such-page', TOKEN]) assert.ok(!text.includes(secret), `${secret} is not in the metrics`);
    const routes = new Set(samplesOf(families, 'oas_http_requests_total').map((s) => s.labels.route!));
    for (const route of routes) assert.match(route, /^(unmatched|\/[a-z_/]*(:id|:name)?)$/, route);
    const outcomes = new Set(samplesOf(families, 'oas_engine_calls_total').map((s) => s.labels.outcome));
    assert.deepEqual([...outcomes].filter((o) => !['ok', 'error', 'cached', 'not_found'].includes(o!)), []);
  });

  test('/readyz: 503 with one line while the SQLite file is gone from data_dir, 200 once it is back', async () => {
    const file = join(config.dataDir, 'oas.sqlite');
    const moved = `${file}.moved`;
    renameSync(file, moved);
    try {
      const res = await fetch(`${server.url}/readyz`);
      assert.equal(res.status, 503);
      const body = await json(res);
      assert.equal(body.status, 'unavailable');
      assert.match(body.reason as string, /^the SQLite database is missing from data_dir$/);
      assert.ok(!JSON.stringify(body).includes(config.dataDir), 'no path in the answer');
      // Alive all the same.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    } finally {
      renameSync(moved, file);
    }
    const back = await fetch(`${server.url}/readyz`);
    assert.equal(back.status, 200);
    assert.deepEqual(await back.json(), { status: 'ok' });
  });
});

describe('oas serve with redis_url: /readyz follows Redis, engine calls of its worker are counted', { skip: redisSkip, timeout: 120_000 }, () => {
  let upstreams: Upstreams;
  let redis: RedisServer;
  let server: ServeProcess;

  before(async () => {
    upstreams = await startUpstreams();
    redis = await startRedis();
    // No api_token: loopback only, and /metrics open like everything else.
    const config = configFor(upstreams, { redis_url: redis.url });
    server = await spawnServe(config.file);
  });
  after(async () => {
    await server?.stop();
    await redis?.close();
    await upstreams?.close();
  });

  test('/readyz 200 with Redis up; /metrics open without api_token; the worker\'s calls are counted', async () => {
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 200, () => 'ready');
    await analyze(server.url, '8.8.8.8', ['reverse_dns'], {});
    const { families } = await scrape(server.url, {});
    assert.equal(valueOf(families, 'oas_analyses_started_total', { origin: 'server' }), 1);
    assert.equal(valueOf(families, 'oas_engine_calls_total', { engine: 'reverse_dns', outcome: 'ok' }), 1);
    assert.equal(valueOf(families, 'oas_engine_call_duration_seconds_count', { engine: 'reverse_dns' }), 1);
  });

  test('Redis stopped: /readyz 503 with one line (/healthz and /metrics still answer); back: 200', async () => {
    await redis.stop();
    let body: Record<string, unknown> = {};
    await until(async () => {
      const res = await fetch(`${server.url}/readyz`);
      body = await json(res);
      return res.status === 503;
    }, () => `readyz 503: ${JSON.stringify(body)}`);
    assert.deepEqual(body, { status: 'unavailable', reason: 'Redis does not answer' });
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    await scrape(server.url, {});
    await redis.restart();
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 200, () => 'ready again once Redis is back');
  });
});

describe('shutting down', { timeout: 60_000 }, () => {
  test('/healthz and /readyz answer 503 once the server begins to stop', async () => {
    const upstreams = await startUpstreams();
    const config = configFor(upstreams);
    const metrics = createMetrics();
    const app = await createApp({ file: config.file, flags: { port: 0 }, env: {} }, { role: 'server', observers: metrics });
    const health = { stopping: false };
    const running = await listen(app, { metrics, health });
    try {
      assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
      health.stopping = true; // what oas serve does on SIGTERM, before closing
      const healthz = await fetch(`${running.url}/healthz`);
      assert.equal(healthz.status, 503);
      assert.deepEqual(await healthz.json(), { status: 'shutting down' });
      const readyz = await fetch(`${running.url}/readyz`);
      assert.equal(readyz.status, 503);
      assert.deepEqual(await readyz.json(), { status: 'unavailable', reason: 'shutting down' });
      const { families } = await scrape(running.url, {});
      assert.equal(valueOf(families, 'oas_http_requests_total', { method: 'GET', route: '/healthz', status: '503' }), 1);
    } finally {
      await running.close();
      await app.close();
      await upstreams.close();
    }
  });
});
