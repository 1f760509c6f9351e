/**
 * Redis going away (issue 16), with subprocesses as users run them: an `oas serve --no-worker`
 * and an `oas worker` on a test Redis with a password and AOF (appendfsync always), which is then
 * SIGKILLed. Meanwhile the API answers 503 with one line and Retry-After at once, the worker says
 * it retries with a growing delay, `oas analyze --redis` fails with one line; once Redis is back
 * the API answers again by itself, the analysis completed before the outage is intact, and a new
 * one completes. The password never appears in any output. Then the command-line errors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { freePort, redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { BIN, spawnServe, spawnWorker, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { removeTempDir, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const PASSWORD = `pw${randomBytes(12).toString('hex')}`;
const ENGINES = ['reverse_dns', 'provider_13'];
const TEXT = '8.8.8.8 example.com';

/** Bounded wait for `condition` (fails with `what` when it never holds). */
async function until(condition: () => boolean | Promise<boolean>, what: () => string, ms = 15_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await condition());) {
    assert.ok(Date.now() < deadline, what());
    await sleep(50);
  }
}

/** One line, no stack frame. */
function assertOneLine(text: string, what: string): void {
  assert.ok(text.trim() !== '', `${what}: says something`);
  assert.ok(!text.trim().includes('\n'), `${what}: one line, got ${JSON.stringify(text)}`);
  assert.doesNotMatch(text, /\bat (async )?\S+ \(\S+:\d+:\d+\)|\bat \S+:\d+:\d+/, `${what}: no stack frame`);
}

describe('Redis unreachable, then back', { skip: redisSkip, timeout: 120_000 }, () => {
  let redis: RedisServer;
  let upstreams: Upstreams;
  let config: ReturnType<typeof configFor>;
  /** The second worker's: its ipquery calls go to a path of their own (`/w2/ipquery`). */
  let config2: ReturnType<typeof configFor>;
  let server: ServeProcess | undefined;
  const workers: WorkerProcess[] = [];
  /** Everything `oas analyze` printed. */
  const cliOutput: string[] = [];
  let before1: { id: string; results: string; history: unknown };
  /** Where each worker's stderr was when Redis went away. */
  let marks: number[] = [];

  const paths = (id: string) => [`/api/is_analysis_complete/${id}`, `/api/results/${id}`, '/ui/history', `/export/${id}`];

  before(async () => {
    redis = await startRedis({ appendonly: true, appendfsync: 'always', requirepass: PASSWORD });
    assert.ok(redis.url.includes(PASSWORD));
    upstreams = await startUpstreams();
    const settings = { redis_url: redis.url, job_lock_ms: 5000, worker_concurrency: 2 };
    config = configFor(upstreams, settings);
    config2 = configFor(upstreams, { ...settings, engines: { provider_13: { base_url: `${upstreams.intel.url}/w2/ipquery` } } });
    upstreams.intel.route('GET /w2/ipquery/*', (req) => ({ json: { ip: req.path.split('/').pop(), isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' } } }));
    const [serving, worker] = await Promise.allSettled([spawnServe(config.file, { args: ['--no-worker'] }), spawnWorker(config.file)]);
    // Whatever started is stopped by `after`, even if the other did not start.
    if (serving.status === 'fulfilled') server = serving.value;
    if (worker.status === 'fulfilled') workers.push(worker.value);
    for (const p of [serving, worker]) if (p.status === 'rejected') throw p.reason;
  });

  after(async () => {
    await Promise.allSettled([server?.stop(), ...workers.map((w) => w.stop())]);
    await redis?.close();
    await upstreams?.close();
    for (const c of [config, config2]) if (c) removeTempDir(c.dir);
  });

  const get = (path: string) => fetch(`${server!.url}${path}`, { signal: AbortSignal.timeout(4000) });
  const post = () => fetch(`${server!.url}/api/analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXT, engines: ENGINES, ignore_cache: true }),
    signal: AbortSignal.timeout(4000),
  });

  async function analyse(): Promise<string> {
    const res = await post();
    assert.equal(res.status, 200, await res.clone().text());
    const { analysis_id: id } = (await res.json()) as { analysis_id: string };
    await until(async () => ((await (await get(`/api/is_analysis_complete/${id}`)).json()) as { complete: boolean }).complete, () => `analysis ${id} completes`);
    return id;
  }

  async function analyseFromTerminal(): Promise<Run> {
    const cwd = tempDir('oas-outage-cli-');
    try {
      // The file points the engines at the fakes; Redis is given as a team member would.
      const run = await runOas(cwd, ['analyze', '--config', config.file, '--redis', redis.url, '--json', '-e', 'reverse_dns', '8.8.8.8']);
      cliOutput.push(run.stdout, run.stderr);
      return run;
    } finally {
      removeTempDir(cwd);
    }
  }

  test('with Redis up, an analysis completes through the worker', async () => {
    const id = await analyse();
    const results = await (await get(`/api/results/${id}`)).text();
    assert.equal((JSON.parse(results) as unknown[]).length, 2);
    before1 = { id, results, history: await (await get('/ui/history')).json() };
  });

  test('Redis killed: the API answers 503 at once, one line of JSON and Retry-After', async () => {
    marks = workers.map((w) => w.stderr().length);
    await redis.stop(true);
    const answers = [await post(), ...await Promise.all(paths(before1.id).map(get))];
    for (const res of answers) {
      const body = await res.text();
      assert.equal(res.status, 503, `${res.url}: ${body}`);
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/, `${res.url}: Retry-After`);
      assert.ok(!body.includes('\n'), `${res.url}: one line, got ${JSON.stringify(body)}`);
      const json = JSON.parse(body) as { error: string };
      assert.deepEqual(Object.keys(json), ['error']);
      assertOneLine(json.error, res.url);
      assert.match(json.error, /Redis .*unreachable/i);
      assert.ok(!body.includes(PASSWORD), 'no password in the answer');
    }
  });

  test('oas worker says Redis is unreachable and that it retries, with a growing delay', async () => {
    // One more worker started while Redis is down: it waits too.
    workers.push(await spawnWorker(config2.file));
    marks.push(0);
    const retries = (i: number) => [...workers[i]!.stderr().slice(marks[i]).matchAll(/unreachable.*retrying in (\d+(?:\.\d+)?) s/g)].map((m) => Number(m[1]));
    for (const i of workers.keys()) {
      await until(() => retries(i).length >= 3, () => `worker ${i} retries more than once: ${workers[i]!.stderr()}`);
      const delays = retries(i);
      assert.ok(delays.every((d, n) => n === 0 || d >= delays[n - 1]!) && delays[delays.length - 1]! > delays[0]!, `a growing delay: ${delays.join(', ')}`);
      for (const line of workers[i]!.stderr().slice(marks[i]).trim().split('\n')) assertOneLine(line, `worker ${i} stderr`);
    }
  });

  test('oas analyze --redis while Redis is down: exit 1, one line saying so', async () => {
    const started = Date.now();
    const run = await analyseFromTerminal();
    assert.equal(run.code, 1, run.stderr);
    assertOneLine(run.stderr, 'analyze stderr');
    assert.match(run.stderr, /^oas: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/);
    assert.equal(run.stdout, '');
    assert.ok(Date.now() - started < 20_000, 'within a bounded time');
  });

  test('Redis back: the API answers again by itself, the analysis persisted before the kill is intact, a new one completes', async () => {
    await redis.restart();
    await until(async () => {
      const statuses = await Promise.all(paths(before1.id).map(async (p) => (await get(p)).status));
      return statuses.every((s) => s === 200);
    }, () => `every page answers 200 again\n${server!.log()}`);
    assert.equal(await (await get(`/api/results/${before1.id}`)).text(), before1.results, 'the same results after the SIGKILL (AOF, appendfsync always)');
    assert.deepEqual(await (await get('/ui/history')).json(), before1.history);
    const id = await analyse();
    assert.equal((JSON.parse(await (await get(`/api/results/${id}`)).text()) as unknown[]).length, 2);
  });

  test('oas worker says Redis is back, and both workers take jobs again', async () => {
    for (const i of workers.keys()) {
      await until(() => /Redis at redis:\/\/127\.0\.0\.1:\d+ is back/.test(workers[i]!.stderr().slice(marks[i])), () => `worker ${i} says Redis is back: ${workers[i]!.stderr()}`);
    }
    // Which worker ran a job: the first calls ipquery at /ipquery/, the second at /w2/ipquery/.
    upstreams.intel.reset();
    for (let round = 0; !(upstreams.intel.hits('GET /ipquery/').length > 0 && upstreams.intel.hits('GET /w2/ipquery/').length > 0); round++) {
      assert.ok(round < 10, `both workers take jobs: ${upstreams.intel.requests.map((r) => r.path).join(' ')}`);
      await Promise.all([1, 2, 3].map(() => analyse()));
    }
    const run = await analyseFromTerminal();
    assert.equal(run.code, 0, run.stderr);
  });

  test('the Redis password appears in no output of serve, worker or analyze', async () => {
    const outputs = [server!.log(), ...workers.flatMap((w) => [w.stdout(), w.stderr()]), ...cliOutput];
    for (const output of outputs) assert.ok(!output.includes(PASSWORD), `no password in: ${output}`);
    assert.match(server!.log(), /unreachable/, 'the server told of the outage');
    // A recovery is news, not an error.
    assert.match(server!.log(), /^\S+ info: Redis at redis:\/\/127\.0\.0\.1:\d+ is back$/m, server!.log());
    assert.doesNotMatch(server!.log(), /error: Redis .* is back/);
  });
});

describe('command-line errors about Redis: one line, no stack trace', { concurrency: true, timeout: 120_000 }, () => {
  const cwd = tempDir('oas-outage-errors-');
  after(() => removeTempDir(cwd));

  function assertError(run: Run, code: number, pattern: RegExp): void {
    assert.equal(run.code, code, `exit ${code}: ${run.stderr}`);
    assertOneLine(run.stderr, 'stderr');
    noStack(run.stderr);
    assert.match(run.stderr, pattern);
  }

  test('oas worker without redis_url: exit 2, naming redis_url', async () => {
    assertError(await runOas(cwd, ['worker']), 2, /^oas: .*redis_url/);
  });

  test('oas serve --no-worker without Redis: exit 2', async () => {
    assertError(await runOas(cwd, ['serve', '--port', '0', '--no-worker']), 2, /^oas: .*--no-worker.*redis_url/);
  });

  test('a --redis that is not a Redis URL: exit 2, naming redis_url, never echoing a password', async () => {
    for (const command of [['worker'], ['serve', '--port', '0'], ['analyze', '8.8.8.8']]) {
      const plain = await runOas(cwd, [...command, '--redis', 'http://x']);
      assertError(plain, 2, /^oas: .*redis_url/);
      const secret = await runOas(cwd, [...command, '--redis', `http://:${PASSWORD}@x:6379`]);
      assertError(secret, 2, /^oas: .*redis_url/);
      assert.ok(!secret.stderr.includes(PASSWORD), `no password in: ${secret.stderr}`);
    }
  });

  test('oas analyze --redis with nothing listening: exit 1, one line saying Redis is unreachable', async () => {
    const port = await freePort();
    const started = Date.now();
    const run = await runOas(cwd, ['analyze', '--redis', `redis://:${PASSWORD}@127.0.0.1:${port}`, '-e', 'reverse_dns', 'example.com']);
    assertError(run, 1, new RegExp(`^oas: Redis at redis://127\\.0\\.0\\.1:${port} is unreachable`));
    assert.ok(!run.stderr.includes(PASSWORD), `no password in: ${run.stderr}`);
    assert.ok(Date.now() - started < 15_000, 'within a bounded time');
  });

  test('oas worker and oas serve whose Redis is down stop promptly on SIGTERM', async () => {
    const port = await freePort();
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}`;
    const stopped = async (args: string[], ready: RegExp) => {
      const child = spawn(process.execPath, [BIN, ...args, '--redis', url], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        await until(() => ready.test(output), () => `${args[0]} is up: ${output}`);
        child.kill('SIGTERM');
        const outcome = await Promise.race([exit, sleep(15_000, 'still running' as const, { ref: false })]);
        assert.equal(outcome, 0, `${args[0]} exits 0 within 15 s of SIGTERM: ${output}`);
        for (const line of output.trim().split('\n')) assertOneLine(line, args[0]!);
        assert.ok(!output.includes(PASSWORD), `no password in: ${output}`);
      } finally {
        child.kill('SIGKILL');
      }
    };
    await Promise.all([
      // Its signal handlers are set when it says it takes jobs.
      stopped(['worker'], /taking engine jobs(.|\n)*retrying in (.|\n)*retrying in /),
      stopped(['serve', '--port', '0', '--data-dir', join(cwd, 'serve-data')], /taking engine jobs/),
    ]);
  });

  test('oas worker --concurrency 0: exit 2', async () => {
    assertError(await runOas(cwd, ['worker', '--concurrency', '0', '--redis', 'redis://127.0.0.1:1']), 2, /^oas: .*--concurrency/);
  });
});
