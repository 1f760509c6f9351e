/**
 * What `oas analyze` says while it runs: the runner's wait events (quota, Retry-After), the line
 * off a terminal (`waiting 12 s for ipapi quota (1/12 s)`), `--quiet`, and the spinner through a
 * pseudo-terminal (script(1)) with `--no-color` / NO_COLOR. The quota is a short real window
 * (1 call per 12 s: one wait well over the 5 s threshold); nothing asserts how long anything took.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { ProgressState, WAIT_LINE_MS, describeRate, describeWait, startProgress } from '../src/cli/progress.js';
import { defineEngine } from '../src/engine/contract.js';
import type { Observable } from '../src/observables/types.js';
import type { Progress, WaitEvent } from '../src/runner/types.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { runOas } from './helpers/cli.js';
import { redisSkip, startRedis } from './helpers/redis.js';
import { runnerHarness } from './helpers/runner.js';
import { BIN } from './helpers/serve.js';
import { tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const wait = (over: Partial<WaitEvent>): WaitEvent => ({
  engine: 'provider_24', service: 'virustotal', kind: 'quota', ms: 57_000, until: 57_000, reason: 'quota of 4 per minute reached', limit: 4, windowMs: 60_000, ...over,
});

describe('wait lines', () => {
  test('a quota wait and a Retry-After wait, by service name', () => {
    assert.equal(describeWait(wait({})), 'waiting 57 s for virustotal quota (4/minute)');
    assert.equal(describeWait(wait({ kind: 'retry', ms: 30_000, status: 429, limit: undefined, windowMs: undefined, reason: 'HTTP 429 Too Many Requests (retry after 30 s)' })),
      'waiting 30 s: virustotal asked to retry later (429)');
    assert.equal(describeWait(wait({}), 12_400), 'waiting 13 s for virustotal quota (4/minute)', 'the remaining time, rounded up');
    assert.deepEqual([describeRate(4, 60_000), describeRate(1, 6000), describeRate(500, 86_400_000), describeRate(10, 300_000), describeRate(2, 300)],
      ['4/minute', '1/6 s', '500/day', '10/5 min', '2/300 ms']);
  });

  test('off a terminal: one line per wait over 5 s; concurrent calls waiting for the same end share it', () => {
    const state = new ProgressState([{ key: 'virustotal', service: 'virustotal' }], 3);
    const at = (now: number, w: WaitEvent): string | undefined => state.update({ done: 0, total: 3, waiting: w.reason, wait: w }, now);
    assert.equal(at(0, wait({ ms: WAIT_LINE_MS, until: WAIT_LINE_MS })), undefined, 'a short wait says nothing');
    assert.equal(at(0, wait({ ms: 57_000, until: 57_000 })), 'waiting 57 s for virustotal quota (4/minute)');
    assert.equal(at(100, wait({ ms: 56_950, until: 57_050 })), undefined, 'the same wait, told once');
    assert.equal(at(57_000, wait({ ms: 60_000, until: 117_000 })), 'waiting 60 s for virustotal quota (4/minute)', 'the next window');
    assert.equal(at(57_000, wait({ kind: 'retry', status: 429, ms: 30_000, until: 87_000 })), 'waiting 30 s: virustotal asked to retry later (429)');
  });

  test('the spinner text: done/total, the engines waited on, each wait counting down', () => {
    const state = new ProgressState([{ key: 'vt', service: 'virustotal' }, { key: 'urlscan', service: 'urlscan' }, { key: 'provider_23', service: 'urlscan' }], 2);
    const progress = (p: Progress, now: number) => state.update(p, now);
    progress({ done: 1, total: 6, finished: 'urlscan' }, 0);
    progress({ done: 2, total: 6, finished: 'urlscan' }, 0);
    progress({ done: 2, total: 6, waiting: 'x', wait: wait({ engine: 'provider_24', until: 57_000 }) }, 0);
    const text = state.text('Analyzing 2 observable(s) with 3 engine(s)', { done: 2, total: 6 }, 20_000, 100);
    assert.deepEqual(text.split('\n'), [
      'Analyzing 2 observable(s) with 3 engine(s): 2/6 done · waiting on virustotal, urlscan',
      '  waiting 37 s for virustotal quota (4/minute)',
    ]);
    assert.equal(state.text('label', { done: 2, total: 6 }, 60_000, 100), 'label: 2/6 done · waiting on virustotal, urlscan', 'a wait that is over is gone');
    for (const line of state.text('Analyzing 2 observable(s) with 3 engine(s)', { done: 2, total: 6 }, 1000, 40).split('\n')) assert.ok(line.length <= 40, line);
  });

  test('--quiet: no display at all; off a terminal the lines go to the stream given', async () => {
    assert.equal(await startProgress({ observables: 1, selections: [], spinner: false, quiet: true, color: false }), undefined);
    const written: string[] = [];
    const stream = { write: (text: string) => written.push(text) } as unknown as NodeJS.WritableStream;
    const display = await startProgress({ observables: 2, selections: [{ key: 'ipapi', service: 'ipapi' }], spinner: false, quiet: false, color: false, stream, now: () => 0 });
    display!.update({ done: 1, total: 2, waiting: 'x', wait: wait({ service: 'ipapi', limit: 1, windowMs: 6000, ms: 5990, until: 5990 }) });
    display!.stop();
    assert.deepEqual(written, ['waiting 6 s for ipapi quota (1/6 s)\n']);
  });
});

describe('the runner reports every wait with what a display needs', () => {
  let fake: FakeHttpServer;
  before(async () => {
    fake = await startFakeHttp({ 'GET /ok/*': (req) => ({ json: { ip: req.path.slice(4) } }) });
  });
  after(() => fake.close());

  const engine = (id: string, service: string, defaults: Record<string, unknown>) => defineEngine({
    id,
    service,
    label: service,
    description: 'test engine',
    tags: ['IP'],
    types: ['IPv4'],
    defaults: { timeout_ms: 5000, base_url: '', ...defaults },
    summary: () => '',
    run: async (o: Observable, ctx) => ctx.http.json(`${String(ctx.settings.base_url)}/${o.value}`, v.object({ ip: v.string() })),
  });
  const ips = (prefix: string, n: number): Observable[] => Array.from({ length: n }, (_, i) => ({ value: `${prefix}${i + 1}`, type: 'IPv4' }));

  test('a quota wait: engine, service, limit and window; each finished lookup names its key', async () => {
    const harness = runnerHarness([engine('provider_90', 'slowsvc', { rate_limit: 1, rate_window_ms: 200 })], { settings: { provider_90: { base_url: `${fake.url}/ok` } } });
    try {
      const events: Progress[] = [];
      await harness.analyze(ips('8.8.5.', 2), ['slowsvc'], { onProgress: (p) => events.push(p) });
      const waits = events.filter((p) => p.wait).map((p) => p.wait!);
      assert.ok(waits.length > 0, 'the second call waited');
      assert.deepEqual({ ...waits[0]!, ms: 0, until: 0 }, { engine: 'provider_90', service: 'slowsvc', kind: 'quota', ms: 0, until: 0, limit: 1, windowMs: 200, reason: 'quota of 1 per 200 ms reached' });
      assert.ok(waits[0]!.until >= Date.now() - 60_000 && waits[0]!.ms > 0);
      assert.match(events.find((p) => p.wait)!.waiting!, /^provider_90: quota of 1 per 200 ms reached, waiting 1 s$/, 'the one-line form is unchanged');
      assert.deepEqual(events.filter((p) => p.finished).map((p) => p.finished), ['slowsvc', 'slowsvc']);
    } finally {
      await harness.close();
    }
  });

  test('a Retry-After wait (429): kind retry, status 429, service name', async () => {
    fake.route('GET /busy/*', sequence(reply.tooMany(1), (req) => ({ json: { ip: req.path.slice(6) } })));
    const harness = runnerHarness([engine('provider_91', 'busysvc', {})], { settings: { provider_91: { base_url: `${fake.url}/busy` } } });
    try {
      const waits: WaitEvent[] = [];
      const [result] = await harness.analyze(ips('8.8.6.', 1), ['provider_91'], { onProgress: (p) => p.wait && waits.push(p.wait) });
      assert.deepEqual(result!.provider_91, { ip: '8.8.6.1' });
      assert.ok(waits.length > 0, 'the retry was reported');
      assert.equal(waits[0]!.kind, 'retry');
      assert.equal(waits[0]!.status, 429);
      assert.equal(waits[0]!.service, 'busysvc');
      assert.equal(describeWait(waits[0]!, 1000), 'waiting 1 s: busysvc asked to retry later (429)');
    } finally {
      await harness.close();
    }
  });
});

describe('oas analyze as a subprocess, with a quota of 1 call per 12 s', () => {
  let upstreams: Upstreams;
  let config: ReturnType<typeof configFor>;
  const cwd = tempDir('oas-progress-');
  let runs = 0;
  /** A data directory of its own per run: nothing answered from the cache, a quota of its own. */
  const args = (...extra: string[]) => ['analyze', '8.8.8.8 1.1.1.1', '--engines', 'ipapi', '--config', config.file, '--data-dir', join(cwd, `data-${++runs}`), ...extra];

  before(async () => {
    upstreams = await startUpstreams();
    // 12 s: the second call's wait stays over the 5 s threshold of a line even when the machine is
    // so loaded that the two calls start seconds apart (a 6 s window left it under, now and then).
    config = configFor(upstreams, { engines: { ipapi: { rate_limit: 1, rate_window_ms: 12_000 } } });
  });
  after(() => upstreams.close());

  test('off a terminal: stdout holds only the results; stderr one line for the wait; --quiet silences it', async () => {
    const [json, table, jsonl, quiet, fresh, freshTable] = await Promise.all([
      runOas(cwd, args('--json')),
      runOas(cwd, args()),
      runOas(cwd, args('--format', 'jsonl')),
      runOas(cwd, args('--json', '--quiet')),
      // Issue 32: with --ignore-cache the calls reach the quota while the analysis is being
      // started, before the command listened to its progress: the wait was told to nobody.
      runOas(cwd, args('--json', '--ignore-cache')),
      runOas(cwd, args('--ignore-cache')),
    ]);
    for (const run of [json, table, jsonl, fresh, freshTable]) {
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /^waiting \d+ s for ipapi quota \(1\/12 s\)\n$/);
      assert.doesNotMatch(run.stdout, /waiting/);
    }
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, 2);
    assert.equal(jsonl.stdout.trim().split('\n').length, 2);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '', '--quiet');
    assert.deepEqual(JSON.parse(quiet.stdout), JSON.parse(json.stdout));
  });

  test('with --redis (the team\'s quota, src/scale/redis-quota.ts): the same line for the same wait', { skip: redisSkip }, async () => {
    const redis = await startRedis();
    try {
      const run = await runOas(cwd, [...args('--json'), '--redis', redis.url]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /^waiting \d+ s for ipapi quota \(1\/12 s\)\n$/);
      assert.equal((JSON.parse(run.stdout) as unknown[]).length, 2);
    } finally {
      await redis.close();
    }
  });

  test('on a terminal (script(1)): the spinner shows done/total, the engine waited on and the wait; --no-color and NO_COLOR drop colours', async (t) => {
    if (spawnSync('script', ['--version']).status !== 0) {
      t.skip('script(1) not installed: no pseudo-terminal to test with');
      return;
    }
    /** Runs in a 100-column pseudo-terminal (stdout and stderr both on it); resolves with what it shows. */
    const inTerminal = (argv: string[], env: Record<string, string> = {}) => new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      const command = `stty cols 100 rows 40; exec ${[process.execPath, BIN, ...argv].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`;
      // Asynchronous: the fakes answer from this process.
      const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, TERM: 'xterm', ...tmpEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, text }));
    });
    const sgr = /\u001b\[[0-9;]*m/;
    const [plain, colored, noColorEnv] = await Promise.all([
      inTerminal(args('--no-color')),
      inTerminal(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--config', config.file, '--data-dir', join(cwd, `data-${++runs}`)]),
      inTerminal(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--config', config.file, '--data-dir', join(cwd, `data-${++runs}`)], { NO_COLOR: '1' }),
    ]);
    assert.equal(plain.code, 0, plain.text);
    assert.match(plain.text, /Analyzing 2 observable\(s\) with 1 engine\(s\): 1\/2 done · waiting on ipapi/);
    assert.match(plain.text, /\n {2}waiting \d+ s for ipapi quota \(1\/12 s\)/);
    assert.match(plain.text, /8\.8\.8\.8/, 'then the results');
    assert.doesNotMatch(plain.text, sgr, '--no-color: no colour on the spinner or the table');
    assert.equal(colored.code, 0, colored.text);
    assert.match(colored.text, sgr, 'colours on a terminal by default');
    assert.equal(noColorEnv.code, 0, noColorEnv.text);
    assert.doesNotMatch(noColorEnv.text, sgr, 'NO_COLOR');
  });
});
