/**
 * The scale run of `npm run bench` (issue 16): oas on Redis + BullMQ, one `oas serve --no-worker`
 * (the API) and 1, then 3, `oas worker --concurrency C` subprocesses sharing one test redis-server,
 * on N public IPv4 addresses (default 2 000) x 2 engines whose only work is one plain HTTP call
 * each (ipquery, ipapi), every upstream answer delayed by the fleet's latency (200 ms), with
 * `ignore_cache` so that the shared cache answers nothing.
 *
 * A job is one observable; its two engine calls run side by side, so a job lasts one latency and
 * each worker's concurrency C is the bottleneck by construction: the runner's own limits
 * (`concurrency`, 512 per process, and `engines.<id>.concurrency`, 64) are above C and are printed,
 * and neither engine has a quota. The physical limit of a run is then
 * ceil(N / (workers x C)) x latency: every worker slot busy all the time.
 *
 * Figures per run: wall time from POST /api/analyze to is_analysis_complete true, the ratio to the
 * limit, throughput (observables and engine calls per second), CPU per engine call (user + system
 * of every worker and the server between the POST and the completion, /proc/<pid>/stat) and peak
 * RSS per worker (/proc/<pid>/status VmHWM). The results are checked (N rows, both engines
 * answered, no error) and so is the number of requests the fakes saw, so the figures mean what
 * they say. Without redis-server the run is skipped, and says why.
 *
 * `scaleRun(fleet)` is called by bench.ts with its fleet of fakes; `node dist/tests/bench/scale.js`
 * runs this part alone, with a fleet of its own (BENCH_LATENCY_MS, default 200).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createApp } from '../../src/app.js';
import type { ObservableResult } from '../../src/runner/result.js';
import { freePort, redisSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { CPU_TICK_MS, OAS_BIN, PRELOAD, ROOT, cleanEnv, cpuMsOf, peakRssKiBOf } from './proc.js';
import { goals } from './goals.js';

/** Observables per analysis (BENCH_SCALE_OBSERVABLES). */
const OBSERVABLES = Number(process.env.BENCH_SCALE_OBSERVABLES ?? 2000);
/** `oas worker --concurrency` (BENCH_SCALE_CONCURRENCY). */
const CONCURRENCY = Number(process.env.BENCH_SCALE_CONCURRENCY ?? 25);
const WORKER_COUNTS = [1, 3];
/** Two engines of one plain HTTP call each on an IP, with no dependency, pivot or quota. */
const ENGINES = ['ipquery', 'ipapi'];
const POLL_EVERY_MS = 50;
/** A run still going after this is stopped and reported as such. */
const DEADLINE_MS = Number(process.env.BENCH_SCALE_DEADLINE_MS ?? 60_000);

export interface ScaleFleet {
  settings: { dns_servers: string[]; engines: Record<string, Record<string, unknown>> };
  /** The fleet's latency now (every HTTP answer and DNS answer). */
  latencyMs: number;
  /** Upstream requests since the last call (HTTP requests, DNS queries), then reset. */
  upstreamCounts(): Promise<{ http: number; dns: number }>;
}

export const row = (name: string, value: string) => console.log(`  ${name.padEnd(58)} ${value}`);
export const title = (text: string) => console.log(`\n${text}`);
export const ms = (value: number, digits = 0) => `${value.toFixed(digits)} ms`;
export const seconds = (value: number) => `${(value / 1000).toFixed(2)} s`;
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `n` distinct public IPv4 addresses (34.<octet>.x.y), a new octet per call (shared by every
 * caller in this process, so no two calls give the same address).
 */
let octet = 100;
export const ips = (n: number) => {
  octet++;
  return Array.from({ length: n }, (_, i) => `34.${octet}.${Math.floor(i / 250) % 256}.${(i % 250) + 1}`);
};

export interface OasProcess {
  name: string;
  pid: number;
  /** SIGTERM, wait for the exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/**
 * `node [nodeArgs] --import preload <bin> <args>` (no OAS_* from this environment; bin: this
 * build's bin/oas.js unless another build is named), resolved once its stdout matches `ready`.
 */
export async function startOas(
  name: string,
  args: string[],
  ready: RegExp,
  statsFile: string,
  launch: { bin?: string; nodeArgs?: readonly string[] } = {},
): Promise<OasProcess & { stdout: string }> {
  writeFileSync(statsFile, '');
  const child: ChildProcess = spawn(process.execPath, [...(launch.nodeArgs ?? []), '--import', PRELOAD, launch.bin ?? OAS_BIN, ...args], {
    cwd: ROOT,
    env: cleanEnv({ BENCH_STATS_FILE: statsFile }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within 30 s: ${stderr.trim()}`));
    }, 30_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (ready.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${stderr.trim()}`));
    });
  });
  return {
    name,
    pid: child.pid!,
    stdout,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface Completion {
  ms: number;
  /** Until the POST's answer (the analysis stored, its jobs queued). */
  postMs: number;
  id: string;
  polls: number;
  timedOut: boolean;
}

export interface AnalyzeOptions {
  /** Default: this run's ENGINES. */
  engines?: readonly string[];
  /** Sent with every request (e.g. `authorization: Bearer <token>`). */
  headers?: Record<string, string>;
  /** Default: POLL_EVERY_MS. */
  pollEveryMs?: number;
}

/** POST /api/analyze (ignore_cache), then is_analysis_complete every POLL_EVERY_MS until true (or the deadline). */
export async function analyzeUntilComplete(api: string, text: string, deadlineMs: number, options: AnalyzeOptions = {}): Promise<Completion> {
  const headers = options.headers ?? {};
  const pollEveryMs = options.pollEveryMs ?? POLL_EVERY_MS;
  const started = performance.now();
  const posted = await fetch(`${api}analyze`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ text, engines: options.engines ?? ENGINES, ignore_cache: true }),
  });
  if (!posted.ok) throw new Error(`scale: POST analyze answered ${posted.status}: ${await posted.text()}`);
  const { analysis_id: id } = (await posted.json()) as { analysis_id: string };
  const postMs = performance.now() - started;
  let polls = 0;
  for (;;) {
    polls++;
    const poll = await fetch(`${api}is_analysis_complete/${id}`, { headers });
    if (!poll.ok) throw new Error(`scale: is_analysis_complete answered ${poll.status}: ${await poll.text()}`);
    if (((await poll.json()) as { complete: boolean }).complete) return { ms: performance.now() - started, postMs, id, polls, timedOut: false };
    if (performance.now() - started > deadlineMs) return { ms: performance.now() - started, postMs, id, polls, timedOut: true };
    await sleep(pollEveryMs);
  }
}

/** Whether the results are whole: one row per observable, each engine answered, no error. */
export async function checkResults(api: string, id: string, expected: readonly string[], engines: readonly string[] = ENGINES, headers: Record<string, string> = {}): Promise<string[]> {
  const answer = await fetch(`${api}results/${id}`, { headers });
  if (!answer.ok) return [`results answered ${answer.status}: ${(await answer.text()).slice(0, 200)}`];
  const results = (await answer.json()) as ObservableResult[];
  const problems: string[] = [];
  if (results.length !== expected.length) problems.push(`${results.length} rows for ${expected.length} observables`);
  const seen = new Set(results.map((r) => r.observable));
  const missing = expected.filter((value) => !seen.has(value));
  if (missing.length > 0) problems.push(`${missing.length} observables missing (first: ${missing[0]})`);
  if (seen.size !== results.length) problems.push(`${results.length - seen.size} duplicated rows`);
  const errors = results.flatMap((r) => Object.entries(r.errors ?? {}).map(([key, message]) => `${r.observable} ${key}: ${message}`));
  if (errors.length > 0) problems.push(`${errors.length} engine errors (first: ${errors[0]})`);
  const unanswered = results.filter((r) => engines.some((engine) => r[engine] === null || r[engine] === undefined));
  if (unanswered.length > 0) problems.push(`${unanswered.length} rows with an engine that did not answer (first: ${unanswered[0]!.observable})`);
  return problems;
}

/** The scale run: prints its section; never throws for a run that goes wrong (it says so). */
export async function scaleRun(fleet: ScaleFleet): Promise<void> {
  const latency = fleet.latencyMs;
  title(`Scale out on Redis: ${OBSERVABLES} public IPs x ${ENGINES.join(', ')} (one HTTP call each), fakes at ${latency} ms, ignore_cache;`);
  console.log(`  one \`oas serve --no-worker\` (the API) + 1, then ${WORKER_COUNTS[1]}, \`oas worker --concurrency ${CONCURRENCY}\`, one redis-server`);
  if (redisSkip) {
    row('skipped', redisSkip);
    return;
  }
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'oas-bench-scale-'));
  let redis: RedisServer | undefined;
  const running: OasProcess[] = [];
  try {
    redis = await startRedis();
    const base = { data_dir: join(dir, 'data'), dns_servers: fleet.settings.dns_servers, engines: fleet.settings.engines };
    const configFile = join(dir, 'oas.json');
    writeFileSync(configFile, JSON.stringify({ ...base, redis_url: redis.url }, null, 2));

    // The settings in effect, from an app built from the same configuration without Redis.
    const plainFile = join(dir, 'plain.json');
    writeFileSync(plainFile, JSON.stringify({ ...base, data_dir: join(dir, 'plain') }, null, 2));
    const app = await createApp({ file: plainFile, env: {}, flags: {} });
    const api = (url: string) => `${url}${app.config.api_prefix}`;
    console.log('  settings in effect (every process reads the same file; none of them caps below the worker\'s concurrency)');
    row('  worker concurrency (observables one worker runs at once)', `${CONCURRENCY}, i.e. ${CONCURRENCY * ENGINES.length} engine calls in flight per worker`);
    row('  global concurrency (engine calls per process)', String(app.config.concurrency));
    let capped = app.config.concurrency < CONCURRENCY * ENGINES.length;
    for (const name of ENGINES) {
      const engine = app.catalog.find(name);
      if (!engine) throw new Error(`scale: unknown engine ${name}`);
      const s = app.runner.settingsFor(engine);
      const quota = typeof s.rate_limit === 'number' ? `${s.rate_limit} per ${typeof s.rate_window_ms === 'number' ? s.rate_window_ms : 60_000} ms` : 'none';
      if (typeof s.rate_limit === 'number' || s.concurrency < CONCURRENCY) capped = true;
      row(`  ${name} (${engine.id})`, `concurrency ${s.concurrency}, quota ${quota}, timeout ${s.timeout_ms} ms`);
    }
    await app.close();
    if (capped) console.log('  note: a setting above caps below the worker\'s concurrency: the limit below is not the bottleneck');

    const redisPid = Number(/process_id:(\d+)/.exec(await redis.client.info('server'))?.[1]);
    const server = await startOas('oas serve', ['serve', '--no-worker', '--config', configFile, '--port', String(await freePort())], /listening on (http:\/\/\S+)/, join(dir, 'serve.stats'));
    running.push(server);
    const serverUrl = /listening on (http:\/\/\S+)/.exec(server.stdout)![1]!;

    console.log(`  ${'workers'.padEnd(8)} ${'wall'.padStart(9)} ${'limit'.padStart(8)} ${'ratio'.padStart(6)} ${'obs./s'.padStart(7)} ${'calls/s'.padStart(8)} ${'CPU/call'.padStart(9)} ${'(workers+API)'.padStart(16)} ${'redis/call'.padStart(11)}  peak RSS per worker`);
    const notes: string[] = [];
    for (const count of WORKER_COUNTS) {
      const workers: OasProcess[] = [];
      for (let i = 0; i < count; i++) {
        const worker = await startOas(`oas worker ${i + 1}`, ['worker', '--concurrency', String(CONCURRENCY), '--config', configFile], /taking engine jobs/, join(dir, `worker-${count}-${i}.stats`));
        workers.push(worker);
        running.push(worker);
      }
      // Warm-up, not counted: two rounds of every slot (lazy loading, first connections, JIT).
      const warm = await analyzeUntilComplete(api(serverUrl), ips(2 * count * CONCURRENCY).join('\n'), DEADLINE_MS);
      if (warm.timedOut) throw new Error(`scale: the warm-up with ${count} worker(s) did not complete within ${DEADLINE_MS / 1000} s`);
      await fleet.upstreamCounts();

      const observables = ips(OBSERVABLES);
      const pids = [server.pid, ...workers.map((w) => w.pid)];
      const cpuBefore = pids.map((pid) => cpuMsOf(pid));
      const redisBefore = cpuMsOf(redisPid);
      const run = await analyzeUntilComplete(api(serverUrl), observables.join('\n'), DEADLINE_MS);
      const cpuAfter = pids.map((pid) => cpuMsOf(pid));
      const redisAfter = cpuMsOf(redisPid);
      const rss = workers.map((w) => peakRssKiBOf(w.pid));
      const counts = await fleet.upstreamCounts();

      const calls = OBSERVABLES * ENGINES.length;
      const limitMs = Math.ceil(OBSERVABLES / (count * CONCURRENCY)) * latency;
      const label = `${count}`.padEnd(8);
      if (run.timedOut) {
        console.log(`  ${label} ${`>${(DEADLINE_MS / 1000).toFixed(0)} s`.padStart(9)} ${seconds(limitMs).padStart(8)}  stopped at the deadline (BENCH_SCALE_DEADLINE_MS), unfinished`);
      } else {
        const deltas = pids.map((_, i) => (cpuBefore[i] === undefined || cpuAfter[i] === undefined ? undefined : cpuAfter[i]! - cpuBefore[i]!));
        const known = deltas.every((d) => d !== undefined);
        const cpu = known ? deltas.reduce((a, b) => a! + b!, 0)! : undefined;
        const workerCpu = known ? deltas.slice(1).reduce((a, b) => a! + b!, 0)! : undefined;
        const split = known ? `${ms(workerCpu! / calls, 2)}+${ms(deltas[0]! / calls, 2)}` : 'n/a';
        const redisCpu = redisBefore !== undefined && redisAfter !== undefined ? ms((redisAfter - redisBefore) / calls, 2) : 'n/a';
        console.log(`  ${label} ${seconds(run.ms).padStart(9)} ${seconds(limitMs).padStart(8)} ${(run.ms / limitMs).toFixed(2).padStart(6)} ${(OBSERVABLES / (run.ms / 1000)).toFixed(0).padStart(7)} ${(calls / (run.ms / 1000)).toFixed(0).padStart(8)} ${(cpu === undefined ? 'n/a' : ms(cpu / calls, 2)).padStart(9)} ${split.padStart(16)} ${redisCpu.padStart(11)}  ${rss.map(mib).join(', ')}`);
        const problems = await checkResults(api(serverUrl), run.id, observables);
        if (counts.http !== calls) problems.push(`the fakes saw ${counts.http} HTTP requests for ${calls} engine calls`);
        if (counts.dns !== 0) problems.push(`the fakes saw ${counts.dns} DNS queries (none expected)`);
        notes.push(problems.length === 0
          ? `${count} worker(s): results complete (${OBSERVABLES} rows, ${ENGINES.length} answers each, no error; ${counts.http} upstream requests); POST answered in ${ms(run.postMs)}, ${run.polls} polls; warm-up ${seconds(warm.ms)} for ${2 * count * CONCURRENCY} obs.`
          : `${count} worker(s): RESULTS NOT COMPLETE, the figures above do not count: ${problems.join('; ')}`);
      }
      for (const worker of workers) {
        await worker.stop();
        running.splice(running.indexOf(worker), 1);
      }
    }
    for (const note of notes) console.log(`  ${note}`);
    console.log(`  wall: POST /api/analyze to is_analysis_complete true (polled every ${POLL_EVERY_MS} ms). limit: ceil(${OBSERVABLES} / (workers x ${CONCURRENCY})) x ${latency} ms,`);
    console.log('  every worker slot busy all the time (a job is one observable, its two calls side by side). CPU/call: user + system');
    console.log(`  CPU of every worker and the API server between the POST and the completion (/proc, ${CPU_TICK_MS} ms ticks) / ${OBSERVABLES * ENGINES.length}`);
    console.log('  calls, then split workers+API; redis/call: the redis-server alone, not in CPU/call. peak RSS: VmHWM of each worker');
    console.log('  (start-up and warm-up included). All processes, redis-server and the fakes share this machine\'s cores.');
  } catch (error) {
    row('scale run failed', error instanceof Error ? error.message.split('\n')[0]! : String(error));
  } finally {
    for (const p of running.reverse()) await p.stop().catch(() => {});
    await redis?.close().catch(() => {});
    if (redis) rmSync(redis.dir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    row('scale run time', `${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

/**
 * A bench section run alone (`node dist/tests/bench/<section>.js`): when `moduleUrl` is the
 * script node was started with, runs `section` with a fleet of its own (BENCH_LATENCY_MS,
 * default 200), then closes the fleet.
 */
export async function runAlone(moduleUrl: string, section: (fleet: ScaleFleet) => Promise<void>): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 200);
  const fleet = new Worker(new URL('./fleet.js', import.meta.url), { workerData: { latencyMs } });
  const { settings } = ((await once(fleet, 'message')) as [{ settings: ScaleFleet['settings'] }])[0];
  const upstreamCounts = async () => {
    const reply = once(fleet, 'message');
    fleet.postMessage({ type: 'counts' });
    return ((await reply) as [{ http: number; dns: number }])[0];
  };
  await section({ settings, latencyMs, upstreamCounts });
  // Run by bench.ts as a process of its own: the figures held against a goal go back to it.
  if (process.env.BENCH_GOALS_FILE) writeFileSync(process.env.BENCH_GOALS_FILE, JSON.stringify(goals()));
  const exited = once(fleet, 'exit');
  fleet.postMessage({ type: 'close' });
  await exited;
}

// `node dist/tests/bench/scale.js`: this part alone, with a fleet of its own.
await runAlone(import.meta.url, scaleRun);
