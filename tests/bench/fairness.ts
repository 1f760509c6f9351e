/**
 * The fair-share run of `npm run bench` ("an analyst's lookup never waits behind someone else's
 * bulk job"): 5 analyses of 2 000 public IPs posted at once by one client (user `automation`) and,
 * started after them, 10 one-observable analyses from another client (user `analyst`), on the
 * ipquery engine only (one plain HTTP call per IP, no key, no quota), every upstream answer delayed
 * by the fleet's latency (200 ms), `ignore_cache` and fresh addresses so nothing is cached, with
 * `engines.ipquery.concurrency` 64. Two set-ups: (A) one `oas serve` alone (no Redis), (B) one
 * `oas serve --no-worker` + 3 `oas worker --concurrency 64` on one test redis-server (skipped,
 * with the reason, without redis-server).
 *
 * In each set-up, with both users made by `oas users add` (same configuration file) before the
 * server starts, and a warm-up not counted:
 *  1. alone: the 10 one-observable analyses one after another, nothing else running (POST to
 *     is_analysis_complete true, polled every 20 ms);
 *  2. bulk alone: the 5 bulk analyses posted at once, from the first POST until all 5 are complete
 *     (each polled every 250 ms); its physical bound is ceil(10 000 / slots) x latency, slots being
 *     the engine's concurrency (64) locally and 3 x 64 worker slots on Redis;
 *  3. mixed: the 5 bulk analyses again (new addresses) and, from 1 s after them, the 10
 *     one-observable analyses posted one every 1.5 s (each timed alone) while the bulk runs.
 * Goals: every one-observable analysis of 3. within 2x the median of 1.; the bulk of 3. within
 * 1.05x the bulk of 2. The results are checked (rows, answers, no error) and so is the number of
 * requests the fakes saw. Every analysis has a deadline (BENCH_FAIR_DEADLINE_MS, 120 s): a run
 * past it is reported, never waited for.
 *
 * `fairnessRun(fleet)` is called by bench.ts with its fleet of fakes; `node
 * dist/tests/bench/fairness.js` runs this part alone, with a fleet of its own (BENCH_LATENCY_MS,
 * default 200).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../src/app.js';
import { missingCredentials } from '../../src/engine/context.js';
import { freePort, redisSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { OAS_BIN, ROOT, cleanEnv } from './proc.js';
import { analyzeUntilComplete, checkResults, ips, ms, row, runAlone, seconds, sleep, startOas, title, type Completion, type OasProcess, type ScaleFleet } from './scale.js';

const ENGINES = ['ipquery'];
/** `engines.ipquery.concurrency`, set explicitly in the configuration. */
const ENGINE_CONCURRENCY = 64;
const WORKERS = 3;
/** `oas worker --concurrency`. */
const WORKER_CONCURRENCY = 64;
const BULK_ANALYSES = 5;
const BULK_OBSERVABLES = 2000;
const BULK_CALLS = BULK_ANALYSES * BULK_OBSERVABLES * ENGINES.length;
const SMALL_ANALYSES = 10;
/** The first one-observable analysis of the mixed run, after the bulk's POSTs... */
const SMALL_START_MS = 1000;
/** ...then one every this long, whether the previous one is complete or not. */
const SMALL_EVERY_MS = 1500;
const SMALL_POLL_MS = 20;
const BULK_POLL_MS = 250;
/** An analysis still going after this is no longer polled and is reported as such. */
const DEADLINE_MS = Number(process.env.BENCH_FAIR_DEADLINE_MS ?? 120_000);
const GOAL_SMALL = 2;
const GOAL_BULK = 1.05;

const execFileAsync = promisify(execFile);
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const verdict = (ratio: number, goal: number) => (ratio <= goal ? 'met' : 'NOT MET');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** `oas users add <name> --role analyst --config <file>`: the token it prints on stdout. */
async function addUser(configFile: string, name: string): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [OAS_BIN, 'users', 'add', name, '--role', 'analyst', '--config', configFile], { cwd: ROOT, env: cleanEnv(), encoding: 'utf8' });
  const token = stdout.trim();
  if (!/^oas_\S+$/.test(token)) throw new Error(`fairness: oas users add ${name} printed no token`);
  return token;
}

/** What one set-up measured, for the summary (undefined: not measured or past the deadline). */
interface Figures {
  label: string;
  smallAloneMedian?: number;
  smallMixedMax?: number;
  bulkAlone?: number;
  bulkMixed?: number;
  limitMs: number;
}

/** The 5 bulk analyses posted at once: wall time from the first POST until the last is complete. */
async function bulkRun(api: string, lists: readonly string[][], headers: Record<string, string>) {
  const started = performance.now();
  const runs = await Promise.all(lists.map((list) => analyzeUntilComplete(api, list.join('\n'), DEADLINE_MS, { engines: ENGINES, headers, pollEveryMs: BULK_POLL_MS })));
  return { ms: performance.now() - started, runs, timedOut: runs.some((r) => r.timedOut) };
}

/** Problems of finished runs: rows, answers, errors (checkResults), and the requests the fakes saw. */
async function problemsOf(api: string, runs: readonly { run: Completion; observables: readonly string[]; headers: Record<string, string> }[], fleet: ScaleFleet, calls: number): Promise<string[]> {
  const problems: string[] = [];
  for (const { run, observables, headers } of runs) {
    if (run.timedOut) continue;
    for (const problem of await checkResults(api, run.id, observables, ENGINES, headers)) problems.push(`${run.id.slice(0, 8)}: ${problem}`);
  }
  const counts = await fleet.upstreamCounts();
  if (counts.http !== calls) problems.push(`the fakes saw ${counts.http} HTTP requests for ${calls} engine calls`);
  if (counts.dns !== 0) problems.push(`the fakes saw ${counts.dns} DNS queries (none expected)`);
  return problems;
}

const checked = (what: string, problems: readonly string[], whole: string) =>
  row(`  ${what}`, problems.length === 0 ? whole : `NOT COMPLETE, the figures do not count: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (+${problems.length - 3} more)` : ''}`);

async function setUpRun(fleet: ScaleFleet, kind: 'local' | 'redis', base: Record<string, unknown>, prefix: string, dir: string): Promise<Figures> {
  const latency = fleet.latencyMs;
  const slots = kind === 'local' ? ENGINE_CONCURRENCY : WORKERS * WORKER_CONCURRENCY;
  const limitMs = Math.ceil(BULK_CALLS / slots) * latency;
  const label = kind === 'local' ? '(A) local' : `(B) Redis, ${WORKERS} workers`;
  const figures: Figures = { label, limitMs };
  title(kind === 'local'
    ? `  (A) local: one \`oas serve\` (no Redis), ${ENGINE_CONCURRENCY} ipquery calls at once`
    : `  (B) Redis: one \`oas serve --no-worker\` + ${WORKERS} \`oas worker --concurrency ${WORKER_CONCURRENCY}\`, one redis-server, ${slots} calls at once`);
  if (kind === 'redis' && redisSkip) {
    row('  skipped', redisSkip);
    return figures;
  }
  let redis: RedisServer | undefined;
  const running: OasProcess[] = [];
  try {
    if (kind === 'redis') redis = await startRedis();
    const configFile = join(dir, `${kind}.json`);
    writeFileSync(configFile, JSON.stringify({ ...base, data_dir: join(dir, kind), ...(redis ? { redis_url: redis.url } : {}) }, null, 2));
    // Users before the server starts (it caches whether any user exists); with Redis they live there.
    const automation = bearer(await addUser(configFile, 'automation'));
    const analyst = bearer(await addUser(configFile, 'analyst'));
    const server = await startOas('oas serve', ['serve', ...(redis ? ['--no-worker'] : []), '--config', configFile, '--port', String(await freePort())], /listening on (http:\/\/\S+)/, join(dir, `${kind}-serve.stats`));
    running.push(server);
    for (let i = 0; kind === 'redis' && i < WORKERS; i++) {
      running.push(await startOas(`oas worker ${i + 1}`, ['worker', '--concurrency', String(WORKER_CONCURRENCY), '--config', configFile], /taking engine jobs/, join(dir, `${kind}-worker-${i}.stats`)));
    }
    const api = `${/listening on (http:\/\/\S+)/.exec(server.stdout)![1]!}${prefix}`;

    // Warm-up, not counted: one lookup for analyst, and for automation two rounds of every slot
    // locally, a whole bulk run on Redis: there the first 10 000 jobs on a fresh redis-server and
    // fresh workers ran 5-10 % slower than the next ones (12.7 s then 11.9 s, 13.9 s then 12.6 s, on
    // 2 cores), which would count against the bulk alone only; locally the first run is no slower.
    const warmStarted = performance.now();
    const warmLookup = await analyzeUntilComplete(api, ips(1).join('\n'), DEADLINE_MS, { engines: ENGINES, headers: analyst, pollEveryMs: SMALL_POLL_MS });
    const warmBulk = await bulkRun(api, kind === 'local' ? [ips(2 * slots)] : Array.from({ length: BULK_ANALYSES }, () => ips(BULK_OBSERVABLES)), automation);
    if (warmLookup.timedOut || warmBulk.timedOut) throw new Error(`the warm-up did not complete within ${DEADLINE_MS / 1000} s`);
    await fleet.upstreamCounts();
    row('  warm-up, not counted', `1 lookup, then ${kind === 'local' ? `${2 * slots} IPs` : `${BULK_ANALYSES} x ${BULK_OBSERVABLES} IPs`} (automation): ${seconds(performance.now() - warmStarted)}`);

    // 1. The one-observable analyses alone, one after another.
    const aloneIps = ips(SMALL_ANALYSES);
    const alone: Completion[] = [];
    for (const ip of aloneIps) alone.push(await analyzeUntilComplete(api, ip, DEADLINE_MS, { engines: ENGINES, headers: analyst, pollEveryMs: SMALL_POLL_MS }));
    const aloneProblems = await problemsOf(api, alone.map((run, i) => ({ run, observables: [aloneIps[i]!], headers: analyst })), fleet, SMALL_ANALYSES);
    const aloneDone = alone.filter((r) => !r.timedOut).map((r) => r.ms);
    row(`  1. alone: ${SMALL_ANALYSES} x 1 IP (analyst), one after another`, alone.map((r) => (r.timedOut ? `>${DEADLINE_MS / 1000} s` : r.ms.toFixed(0))).join(', ') + ' ms');
    if (aloneDone.length === SMALL_ANALYSES) {
      figures.smallAloneMedian = median(aloneDone);
      row('     median / max (bound: one call, 1 x latency)', `${ms(figures.smallAloneMedian)} / ${ms(Math.max(...aloneDone))} (${ms(latency)})`);
    } else row('     median / max', `${SMALL_ANALYSES - aloneDone.length} stopped at the deadline (BENCH_FAIR_DEADLINE_MS)`);
    checked('   results', aloneProblems, `complete (${SMALL_ANALYSES} x 1 row, no error; ${SMALL_ANALYSES} upstream requests)`);

    // 2. The bulk alone.
    const bulkLists = Array.from({ length: BULK_ANALYSES }, () => ips(BULK_OBSERVABLES));
    const bulk = await bulkRun(api, bulkLists, automation);
    const bulkProblems = await problemsOf(api, bulk.runs.map((run, i) => ({ run, observables: bulkLists[i]!, headers: automation })), fleet, BULK_CALLS);
    if (bulk.timedOut) row(`  2. bulk alone: ${BULK_ANALYSES} x ${BULK_OBSERVABLES} IPs (automation), at once`, `stopped at the deadline (>${DEADLINE_MS / 1000} s), unfinished; bound ${seconds(limitMs)}`);
    else {
      figures.bulkAlone = bulk.ms;
      row(`  2. bulk alone: ${BULK_ANALYSES} x ${BULK_OBSERVABLES} IPs (automation), at once`, `${seconds(bulk.ms)}, bound ${seconds(limitMs)}, ratio ${(bulk.ms / limitMs).toFixed(2)}`);
    }
    checked('   results', bulkProblems, `complete (${BULK_ANALYSES} x ${BULK_OBSERVABLES} rows, no error; ${BULK_CALLS} upstream requests)`);

    // 3. Mixed: the bulk again (new addresses) and the one-observable analyses posted while it runs.
    const mixedLists = Array.from({ length: BULK_ANALYSES }, () => ips(BULK_OBSERVABLES));
    const mixedIps = ips(SMALL_ANALYSES);
    const started = performance.now();
    let bulkEnd: number | undefined;
    const mixedBulk = bulkRun(api, mixedLists, automation).then((result) => {
      bulkEnd = performance.now() - started;
      return result;
    });
    const smalls = mixedIps.map(async (ip, i) => {
      await sleep(Math.max(0, started + SMALL_START_MS + i * SMALL_EVERY_MS - performance.now()));
      const postedAt = performance.now() - started;
      const duringBulk = bulkEnd === undefined;
      const run = await analyzeUntilComplete(api, ip, DEADLINE_MS, { engines: ENGINES, headers: analyst, pollEveryMs: SMALL_POLL_MS });
      return { run, postedAt, duringBulk };
    });
    const [mixed, ...small] = await Promise.all([mixedBulk, ...smalls]);
    const mixedProblems = await problemsOf(api, [
      ...mixed.runs.map((run, i) => ({ run, observables: mixedLists[i]!, headers: automation })),
      ...small.map(({ run }, i) => ({ run, observables: [mixedIps[i]!], headers: analyst })),
    ], fleet, BULK_CALLS + SMALL_ANALYSES);
    const during = small.filter((s) => s.duringBulk).length;
    row(`  3. mixed: bulk again + ${SMALL_ANALYSES} x 1 IP from ${SMALL_START_MS / 1000} s, every ${SMALL_EVERY_MS / 1000} s`, `${during} of ${SMALL_ANALYSES} lookups posted while the bulk was running`);
    for (const [i, s] of small.entries()) {
      const time = s.run.timedOut ? `>${DEADLINE_MS / 1000} s, unfinished` : ms(s.run.ms);
      const ratio = !s.run.timedOut && figures.smallAloneMedian !== undefined ? ` (${(s.run.ms / figures.smallAloneMedian).toFixed(1)}x alone)` : '';
      const post = s.run.timedOut ? '' : `; POST answered in ${ms(s.run.postMs)}, ${s.run.polls} polls`;
      row(`     lookup ${String(i + 1).padStart(2)} posted at ${seconds(s.postedAt)}${s.duringBulk ? ', bulk running' : ', bulk done   '}`, `${time}${ratio}${post}`);
    }
    const smallDone = small.filter((s) => !s.run.timedOut).map((s) => s.run.ms);
    if (smallDone.length === SMALL_ANALYSES) {
      figures.smallMixedMax = Math.max(...smallDone);
      row('     median / max', `${ms(median(smallDone))} / ${ms(figures.smallMixedMax)}`);
      if (figures.smallAloneMedian !== undefined) {
        const ratio = figures.smallMixedMax / figures.smallAloneMedian;
        row(`     max / alone median (goal <= ${GOAL_SMALL}x)`, `${ratio.toFixed(2)}x: ${verdict(ratio, GOAL_SMALL)}`);
      }
    } else row('     median / max', `${SMALL_ANALYSES - smallDone.length} stopped at the deadline (BENCH_FAIR_DEADLINE_MS): goal NOT MET`);
    if (mixed.timedOut) row('     bulk', `stopped at the deadline (>${DEADLINE_MS / 1000} s), unfinished; bound ${seconds(limitMs)}`);
    else {
      figures.bulkMixed = mixed.ms;
      row('     bulk', `${seconds(mixed.ms)}, bound ${seconds(limitMs)}, ratio ${(mixed.ms / limitMs).toFixed(2)}`);
      if (figures.bulkAlone !== undefined) {
        const ratio = mixed.ms / figures.bulkAlone;
        row(`     bulk mixed / bulk alone (goal <= ${GOAL_BULK})`, `${ratio.toFixed(3)}: ${verdict(ratio, GOAL_BULK)}`);
      }
    }
    checked('   results', mixedProblems, `complete (${BULK_ANALYSES} x ${BULK_OBSERVABLES} + ${SMALL_ANALYSES} x 1 rows, no error; ${BULK_CALLS + SMALL_ANALYSES} upstream requests)`);
  } catch (error) {
    row(`  ${label} failed`, error instanceof Error ? error.message.split('\n')[0]! : String(error));
  } finally {
    for (const p of running.reverse()) await p.stop().catch(() => {});
    await redis?.close().catch(() => {});
    if (redis) rmSync(redis.dir, { recursive: true, force: true });
  }
  return figures;
}

/** The fair-share run: prints its section; never throws for a run that goes wrong (it says so). */
export async function fairnessRun(fleet: ScaleFleet): Promise<void> {
  const latency = fleet.latencyMs;
  title(`Fair share: ${BULK_ANALYSES} x ${BULK_OBSERVABLES} public IPs (user automation) and, after them, ${SMALL_ANALYSES} x 1 IP (user analyst), ${ENGINES.join(', ')}, fakes at ${latency} ms, ignore_cache;`);
  console.log(`  goals: each one-observable analysis within ${GOAL_SMALL}x its time alone, the bulk no more than ${((GOAL_BULK - 1) * 100).toFixed(0)} % longer than without them`);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'oas-bench-fair-'));
  const results: Figures[] = [];
  try {
    const base = {
      dns_servers: fleet.settings.dns_servers,
      // Merged with the fleet's engines.<id of ipquery> (its base_url) by the configuration loader.
      engines: { ...fleet.settings.engines, ipquery: { concurrency: ENGINE_CONCURRENCY } },
    };
    // The settings in effect, from an app built from the same configuration (own data dir).
    const plainFile = join(dir, 'plain.json');
    writeFileSync(plainFile, JSON.stringify({ ...base, data_dir: join(dir, 'plain') }, null, 2));
    const app = await createApp({ file: plainFile, env: {}, flags: {} });
    const prefix = app.config.api_prefix;
    console.log('  settings in effect (every process reads the same file)');
    row('  global concurrency (engine calls per process)', String(app.config.concurrency));
    row('  API: analyses per client and minute', String(app.config.rate_limit_per_minute || 'no limit'));
    for (const name of ENGINES) {
      const engine = app.catalog.find(name);
      if (!engine) throw new Error(`fairness: unknown engine ${name}`);
      const s = app.runner.settingsFor(engine);
      const quota = typeof s.rate_limit === 'number' ? `${s.rate_limit} per ${typeof s.rate_window_ms === 'number' ? s.rate_window_ms : 60_000} ms` : 'none';
      const missing = missingCredentials(engine, s);
      row(`  engines.${name}.concurrency (${engine.id})`, `${s.concurrency}, quota ${quota}, timeout ${s.timeout_ms} ms, ${missing.length === 0 ? 'no key needed' : `MISSING ${missing.join(', ')}`}`);
    }
    row('  oas worker --concurrency (B)', `${WORKER_CONCURRENCY} observables (one call each) per worker`);
    await app.close();

    for (const kind of ['local', 'redis'] as const) results.push(await setUpRun(fleet, kind, base, prefix, dir));

    title('  summary');
    console.log(`  ${'set-up'.padEnd(24)} ${'lookup alone'.padStart(12)} ${'mixed max'.padStart(10)} ${`ratio (<=${GOAL_SMALL})`.padStart(12)} ${'bulk alone'.padStart(10)} ${'bulk mixed'.padStart(10)} ${`ratio (<=${GOAL_BULK})`.padStart(14)} ${'bound'.padStart(8)} ${'alone/bound'.padStart(11)}`);
    const cell = (value: number | undefined, format: (v: number) => string) => (value === undefined ? 'n/a' : format(value));
    for (const f of results) {
      const smallRatio = f.smallAloneMedian !== undefined && f.smallMixedMax !== undefined ? f.smallMixedMax / f.smallAloneMedian : undefined;
      const bulkRatio = f.bulkAlone !== undefined && f.bulkMixed !== undefined ? f.bulkMixed / f.bulkAlone : undefined;
      console.log(`  ${f.label.padEnd(24)} ${cell(f.smallAloneMedian, (v) => ms(v)).padStart(12)} ${cell(f.smallMixedMax, (v) => ms(v)).padStart(10)} ${cell(smallRatio, (v) => `${v.toFixed(2)}x`).padStart(12)} ${cell(f.bulkAlone, seconds).padStart(10)} ${cell(f.bulkMixed, seconds).padStart(10)} ${cell(bulkRatio, (v) => v.toFixed(3)).padStart(14)} ${seconds(f.limitMs).padStart(8)} ${cell(f.bulkAlone, (v) => (v / f.limitMs).toFixed(2)).padStart(11)}`);
    }
    console.log(`  lookup alone: median of the ${SMALL_ANALYSES} alone; mixed max: the slowest of the ${SMALL_ANALYSES} posted during the mixed run (POST to`);
    console.log(`  is_analysis_complete true, polled every ${SMALL_POLL_MS} ms). bulk: first POST to the last of the ${BULK_ANALYSES} complete (each polled every`);
    console.log(`  ${BULK_POLL_MS} ms). bound: ceil(${BULK_CALLS} / slots) x ${latency} ms, slots = ${ENGINE_CONCURRENCY} (engines.ipquery.concurrency) locally,`);
    console.log(`  ${WORKERS} x ${WORKER_CONCURRENCY} (workers x --concurrency) on Redis. All processes, redis-server and the fakes share this machine's cores.`);
  } catch (error) {
    row('fairness run failed', error instanceof Error ? error.message.split('\n')[0]! : String(error));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    row('fairness run time', `${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

// `node dist/tests/bench/fairness.js`: this part alone, with a fleet of its own.
await runAlone(import.meta.url, fairnessRun);
