/**
 * `npm run bench` (issue 12): how close oas gets to the physical limit of its upstreams, what a
 * poll costs, how fast the CLI starts, and what 10 000 observables cost in time and memory.
 * Not a test: nothing is asserted, it prints a report.
 *
 * Set-up: the upstream fakes run in a worker thread (fleet.ts: every keyless HTTP engine on its own
 * loopback origin, and DNS), answering every request after BENCH_LATENCY_MS (default 200 ms). oas
 * runs as a real `oas serve` subprocess (bin/oas.js, so its CPU and memory are its own), driven
 * through its HTTP API by this process; the CLI figures are whole `oas` processes.
 *
 * The "lower bound" of a workload is physical: the longest chain of upstream round trips that must
 * follow one another for one (engine, observable) pair — the pivot's DNS answer before an IP-only
 * engine can run on a domain, the engines it depends on, its own call — times the latency. It is
 * computed from the engines' declarations (types, reversedIp, dependsOn) and never from oas's own
 * concurrency settings, which are printed in the header as settings only.
 */
import { benchFiles } from './files.js';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { historyPage } from '../../src/store/history.js';
import type { AnalysisRecord } from '../../src/store/analysis-store.js';
import { createApp } from '../../src/app.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { missingCredentials } from '../../src/engine/context.js';
import { extractObservables } from '../../src/observables/extract.js';
import { hostOf, ipVersion } from '../../src/observables/host.js';
import type { Observable } from '../../src/observables/types.js';
import type { ObservableResult } from '../../src/runner/result.js';
import { appliesTo } from '../../src/runner/pivot.js';
import { analysisView } from '../../src/view/analysis-view.js';
import { fairnessRun } from './fairness.js';
import { goal, printGoals, type GoalRow } from './goals.js';
import { scaleRun } from './scale.js';
import { seenRun } from './seen.js';
import { CPU_TICK_MS, OAS_BIN, cpuMsOf, peakRssKiBOf, runNode, startServer, type ExitStats, type ServerProcess } from './proc.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 200);
/** Latency of the fleet for the big runs (10 000 observables, the 500-observable poll target, cache fills). */
const FAST_LATENCY_MS = Number(process.env.BENCH_FAST_LATENCY_MS ?? 3);
const RUNS = 5;
const STARTUP_RUNS = 7;
const POLLS = 2000;
const POLL_EVERY_MS = 5;
/**
 * Poll interval for the big analyses (the web page polls every second): polling a 10 000-observable
 * analysis every 5 ms would measure the poll, not the analysis. 50 ms, up to 500 ms at 10 000.
 */
const bigPollEveryMs = (observables: number) => Math.min(500, Math.max(50, Math.round(observables / 20)));
const SCALE = (process.env.BENCH_SCALE ?? '1000,5000,10000').split(',').map(Number);
/**
 * Deadline of each many-observable run (CLI and API): past it the run is stopped and reported as
 * such, with its peak RSS so far, so that a super-linear oas cannot make the bench last forever.
 */
const BIG_DEADLINE_MS = Number(process.env.BENCH_BIG_DEADLINE_MS ?? 40_000);

const benchStarted = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'oas-bench-'));

// ---------------------------------------------------------------------------------------------
// The fleet of fakes, in a worker thread.
const fleet = new Worker(new URL('./fleet.js', import.meta.url), { workerData: { latencyMs: LATENCY_MS } });
const ask = async <T>(message: unknown): Promise<T> => {
  const reply = once(fleet, 'message');
  fleet.postMessage(message);
  return ((await reply) as [T])[0];
};
const { settings } = ((await once(fleet, 'message')) as [{ settings: { dns_servers: string[]; engines: Record<string, Record<string, unknown>> } }])[0];
const setLatency = (ms: number) => ask<{ latencyMs: number }>({ type: 'latency', ms });
/** Upstream requests since the last call (HTTP requests, DNS queries), then reset. */
const upstreamCounts = () => ask<{ http: number; dns: number }>({ type: 'counts' });

const writeConfig = (name: string) => {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ data_dir: join(dir, name), dns_servers: settings.dns_servers, engines: settings.engines }, null, 2));
  return file;
};
const serverConfig = writeConfig('server');
const cliConfig = writeConfig('cli');

// The settings in effect, read from an app built from the same configuration (own data dir):
// also the catalog for the bounds, and the in-process library calls of the "pages" section.
const app = await createApp({ file: serverConfig, env: {}, flags: { data_dir: join(dir, 'in-process') } });
const prefix = app.config.api_prefix;
const engineOf = (name: string): EngineDefinition => {
  const engine = app.catalog.find(name);
  if (!engine) throw new Error(`bench: unknown engine ${name}`);
  return engine;
};

// ---------------------------------------------------------------------------------------------
// Observables: distinct in every run, so every run is cold even for a cache oas might keep
// outside `ignore_cache` (none should exist).
let seed = 0;
const domains = (n: number, tag = `r${++seed}`) => Array.from({ length: n }, (_, i) => `${tag}-site${i}.com`);
const ips = (n: number, octet = 1 + (++seed % 200)) => Array.from({ length: n }, (_, i) => `34.${octet}.${Math.floor(i / 250) % 256}.${(i % 250) + 1}`);
const hashes = (n: number, tag = `h${++seed}`) => Array.from({ length: n }, (_, i) => createHash('sha256').update(`${tag}-${i}`).digest('hex'));
/** Interleaves lists: a, b, c, a, b, c, ... then whatever is left. */
const mix = (...lists: string[][]) => {
  const out: string[] = [];
  for (let i = 0; i < Math.max(...lists.map((l) => l.length)); i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
};
const mixed = (d: number, ip: number, h: number) => mix(domains(d), ips(ip), hashes(h)).join('\n');

// ---------------------------------------------------------------------------------------------
// The physical lower bound, from the declarations.
const pivot = app.catalog.engines.find((e) => e.pivot);
/** Engines keeping first-time downloads (RDAP bootstrap, bad-ASN lists): one more round on a fresh data dir. */
const bootstraps = (engine: EngineDefinition) => 'bootstrap_url' in engine.defaults || 'refresh_hours' in engine.defaults;

/** Round trips one after another for `engine` on `target`: its dependencies, then its own call. */
function roundsOn(engine: EngineDefinition, target: Observable, selected: readonly EngineDefinition[]): number {
  let before = 0;
  if (engine.dependsOn.length > 0) {
    let providers = engine.dependsOn.map((id) => selected.find((e) => e.id === id)).filter((e): e is EngineDefinition => e !== undefined);
    if (providers.length === 0) {
      const fallback = engine.dependsOn.map((id) => app.catalog.find(id))
        .find((e) => e !== undefined && missingCredentials(e, app.runner.settingsFor(e)).length === 0);
      providers = fallback ? [fallback] : [];
    }
    before = Math.max(0, ...providers.filter((p) => appliesTo(p, target)).map((p) => roundsOn(p, target, selected)));
  }
  return before + 1;
}

/** Rounds for one (engine, observable) pair; 0 when the engine does not apply. */
function pairRounds(engine: EngineDefinition, observable: Observable, selected: readonly EngineDefinition[]): number {
  if (appliesTo(engine, observable)) return roundsOn(engine, observable, selected);
  if (!engine.reversedIp) return 0;
  const host = hostOf(observable);
  if (host !== null && ipVersion(host) !== 0) {
    const target: Observable = { value: host, type: ipVersion(host) === 6 ? 'IPv6' : 'IPv4' };
    return appliesTo(engine, target) ? roundsOn(engine, target, selected) : 0;
  }
  if ((observable.type === 'FQDN' || observable.type === 'URL') && pivot) {
    // The fakes resolve every name to a public IPv4 address.
    const target: Observable = { value: '45.0.0.1', type: 'IPv4' };
    return appliesTo(engine, target) ? roundsOn(pivot, observable, selected) + roundsOn(engine, target, selected) : 0;
  }
  return 0;
}

interface Plan {
  rounds: number;
  /** Engine calls the analysis needs (pivot calls included), for the CPU-per-call figures. */
  calls: number;
  pivotCalls: number;
  bootstrapping: string[];
}

function plan(text: string, names: readonly string[]): Plan {
  const selected = [...new Map(names.map((n) => engineOf(n)).map((e) => [e.id, e])).values()];
  let rounds = 0;
  let calls = 0;
  let pivotCalls = 0;
  for (const observable of extractObservables(text)) {
    let pivotNeeded = false;
    for (const engine of selected) {
      const r = pairRounds(engine, observable, selected);
      rounds = Math.max(rounds, r);
      if (r > 0) calls++;
      if (r > 0 && !appliesTo(engine, observable) && (observable.type === 'FQDN' || observable.type === 'URL')) pivotNeeded = true;
    }
    if (pivotNeeded && !selected.some((e) => e.pivot)) pivotCalls++;
  }
  return { rounds, calls: calls + pivotCalls, pivotCalls, bootstrapping: selected.filter(bootstraps).map((e) => e.id) };
}

// ---------------------------------------------------------------------------------------------
// The API client.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ApiRun {
  ms: number;
  id: string;
  results: ObservableResult[];
  failures: number;
  firstErrors: string[];
  /** is_analysis_complete requests sent. */
  polls: number;
  /** Not complete at the deadline: stopped polling, no results. */
  timedOut: boolean;
}

function failuresOf(results: readonly ObservableResult[]): { failures: number; firstErrors: string[] } {
  const errors = results.flatMap((r) => Object.entries(r.errors ?? {}).map(([key, message]) => `${r.observable} ${key}: ${message}`));
  return { failures: errors.length, firstErrors: errors.slice(0, 3) };
}

async function analyze(server: ServerProcess, text: string, engines: readonly string[], ignoreCache: boolean, pollEveryMs = POLL_EVERY_MS, deadlineMs = Infinity): Promise<ApiRun> {
  const api = `${server.url}${prefix}`;
  const started = performance.now();
  const posted = await fetch(`${api}analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, engines, ignore_cache: ignoreCache }),
  });
  if (!posted.ok) throw new Error(`bench: POST analyze answered ${posted.status}: ${await posted.text()}`);
  const { analysis_id: id } = (await posted.json()) as { analysis_id: string };
  let polls = 0;
  for (;;) {
    polls++;
    const poll = await fetch(`${api}is_analysis_complete/${id}`);
    if (!poll.ok) throw new Error(`bench: is_analysis_complete answered ${poll.status}: ${await poll.text()}`);
    if (((await poll.json()) as { complete: boolean }).complete) break;
    if (performance.now() - started > deadlineMs) return { ms: performance.now() - started, id, results: [], polls, failures: 0, firstErrors: [], timedOut: true };
    await sleep(pollEveryMs);
  }
  const answer = await fetch(`${api}results/${id}`);
  if (!answer.ok) throw new Error(`bench: results answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
  const results = (await answer.json()) as ObservableResult[];
  const ms = performance.now() - started;
  return { ms, id, results, polls, timedOut: false, ...failuresOf(results) };
}

// ---------------------------------------------------------------------------------------------
// Formatting.
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (value: number, digits = 0) => `${value.toFixed(digits)} ms`;
/** A difference with its sign: `+3 ms`, `-1 ms`. */
const signedMs = (value: number) => { const rounded = Math.round(value) || 0; return `${rounded < 0 ? '' : '+'}${ms(rounded)}`; };
const mib = (kib: number | undefined) => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);
const execFileAsync = promisify(execFile);
const POLL_CLIENT = fileURLToPath(new URL('./poll-client.js', import.meta.url));
const CALL_FLOOR = fileURLToPath(new URL('./call-floor.js', import.meta.url));
const row = (name: string, value: string) => console.log(`  ${name.padEnd(58)} ${value}`);
const title = (text: string) => console.log(`\n${text}`);
const elapsed = () => `${((performance.now() - benchStarted) / 1000).toFixed(0)} s`;

// ---------------------------------------------------------------------------------------------
// Header.
const WORKLOADS = [
  { name: 'W1', what: '1 domain', engines: ['urlscan', 'phishtank', 'hudsonrock', 'github'], text: () => domains(1).join('\n'), goal: 1.25 },
  { name: 'W2', what: '10 domains', engines: ['urlscan', 'phishtank', 'hudsonrock', 'github'], text: () => domains(10).join('\n'), goal: 1.15 },
  { name: 'W3', what: '10 public IPs', engines: ['ipquery', 'urlscan', 'github', 'ipapi'], text: () => ips(10).join('\n'), goal: 1.15 },
  { name: 'W4', what: '50 mixed (20 dom., 20 IPs, 10 hashes)', engines: ['urlscan', 'github', 'ipquery'], text: () => mixed(20, 20, 10), goal: 2 },
];
const allEngines = [...new Set(WORKLOADS.flatMap((w) => w.engines))];

console.log('oas benchmark (issue 12)');
row('upstream latency (every HTTP request and DNS query)', `${LATENCY_MS} ms (big runs: ${FAST_LATENCY_MS} ms)`);
row('Node.js', `${process.version} on ${availableParallelism()} cores`);
row('oas under test', `\`oas serve\` subprocess (${OAS_BIN}); the fakes in a worker thread, one origin per engine`);
console.log('  settings in effect (oas\'s own limits: shown for reading the figures, never part of a bound)');
row('  global concurrency', String(app.config.concurrency));
const perClient = (app.config as unknown as Record<string, unknown>).rate_limit_per_minute;
if (typeof perClient === 'number') row('  API: analyses per client and minute', `${perClient || 'no limit'} (this bench starts at most ~30 per server)`);
for (const name of [...allEngines, ...(pivot ? [pivot.id] : [])]) {
  const engine = engineOf(name);
  const s = app.runner.settingsFor(engine);
  const quota = typeof s.rate_limit === 'number' ? `${s.rate_limit} per ${typeof s.rate_window_ms === 'number' ? s.rate_window_ms : 60_000} ms` : 'none';
  row(`  ${name} (${engine.id})${engine.pivot ? ', the pivot' : ''}`, `concurrency ${s.concurrency}, quota ${quota}, timeout ${s.timeout_ms} ms`);
}

// ---------------------------------------------------------------------------------------------
// 1. Workloads W1-W4 through the API, cold.
const server = await startServer(serverConfig, join(dir, 'server.stats'), prefix);
const warmStart = performance.now();
const warm = await analyze(server, mix(domains(2), ips(2), hashes(1)).join('\n'), allEngines, true);
const warmMs = performance.now() - warmStart;

title(`Workloads through the API, cold (ignore_cache true), median of ${RUNS}; poll every ${POLL_EVERY_MS} ms`);
row('first analysis of the server (not counted)', `${ms(warmMs)} (5 observables x ${allEngines.length} engines: lazy loading, first connections; ${warm.failures} failures)`);
console.log(`  ${'workload'.padEnd(68)} ${'runs (ms)'.padEnd(28)} ${'median'.padStart(7)} ${'bound'.padStart(15)} ${'ratio'.padStart(6)} ${'goal'.padStart(6)}  failures/run`);
let w4Cpu: { cpuMs: number; calls: number; http: number; dns: number; polls: number } | undefined;
const workloadRecords: ObservableResult[][] = [];
for (const w of WORKLOADS) {
  const runs: ApiRun[] = [];
  let p: Plan | undefined;
  await upstreamCounts();
  const cpuBefore = cpuMsOf(server.pid);
  for (let i = 0; i < RUNS; i++) {
    const text = w.text();
    p = plan(text, w.engines);
    runs.push(await analyze(server, text, w.engines, true));
  }
  const cpuAfter = cpuMsOf(server.pid);
  const counts = await upstreamCounts();
  if (w.name === 'W4' && cpuBefore !== undefined && cpuAfter !== undefined) {
    w4Cpu = { cpuMs: cpuAfter - cpuBefore, calls: p!.calls * RUNS, http: counts.http, dns: counts.dns, polls: runs.reduce((n, r) => n + r.polls, 0) };
  }
  workloadRecords.push(runs[0]!.results);
  const wall = median(runs.map((r) => r.ms));
  const bound = p!.rounds * LATENCY_MS;
  const label = `${w.name} ${w.what} x ${w.engines.join(', ')}`;
  const boundText = `${bound} (${p!.rounds} rnd${p!.rounds > 1 ? 's' : ''})`;
  console.log(`  ${label.padEnd(68)} ${runs.map((r) => r.ms.toFixed(0)).join(' ').padEnd(28)} ${wall.toFixed(0).padStart(7)} ${boundText.padStart(15)} ${(wall / bound).toFixed(2).padStart(6)} ${`<=${w.goal}`.padStart(6)}  ${runs.map((r) => r.failures).join(' ')}`);
  goal(`${w.name} (${w.what} x ${w.engines.length} engines) over its bound`, `${(wall / bound).toFixed(2)}x (${wall.toFixed(0)} / ${bound} ms)`, `<= ${w.goal}x`, wall / bound <= w.goal);
  for (const r of runs) for (const e of r.firstErrors) console.log(`      failure: ${e}`);
  if (p!.bootstrapping.length > 0) console.log(`      (+1 round on a fresh data dir for ${p!.bootstrapping.join(', ')}: not in the bound above)`);
  const expectedHttp = (p!.calls - p!.pivotCalls) * RUNS;
  if (counts.http !== expectedHttp) console.log(`      note: the fakes saw ${counts.http} HTTP requests for ${expectedHttp} planned engine calls`);
}
console.log('  bound = longest chain of upstream rounds for one (engine, observable) pair x latency: 1 for the call, +1 when an');
console.log('  IP-only engine waits for the pivot\'s DNS answer on a domain, + the rounds of its dependencies; no concurrency limit.');

// ---------------------------------------------------------------------------------------------
// 2. Cached 100-observable analysis through the API.
title(`Cached 100-observable analysis through the API (POST -> complete -> results), median of ${RUNS}`);
{
  const text = mixed(40, 40, 20);
  const engines = WORKLOADS[3]!.engines;
  await setLatency(FAST_LATENCY_MS);
  const fill = await analyze(server, text, engines, false);
  await setLatency(LATENCY_MS);
  await upstreamCounts();
  const runs: ApiRun[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await analyze(server, text, engines, false));
  const counts = await upstreamCounts();
  row(`100 mixed x ${engines.join(', ')} (goal < 150 ms)`, `${ms(median(runs.map((r) => r.ms)))} (runs ${runs.map((r) => r.ms.toFixed(0)).join(' ')}; failures ${runs.map((r) => r.failures).join(' ')})`);
  goal('cached 100-observable analysis through the API', ms(median(runs.map((r) => r.ms))), '< 150 ms', median(runs.map((r) => r.ms)) < 150);
  row('upstream requests during the cached runs', `${counts.http} HTTP, ${counts.dns} DNS (0 = every engine answered from the cache; fill run: ${fill.failures} failures)`);
}

// ---------------------------------------------------------------------------------------------
// 3. Poll cost on a stored 500-observable analysis.
title(`Poll cost: ${POLLS} sequential GET ${prefix}is_analysis_complete/<id> over HTTP`);
let big: ApiRun;
{
  const engines = ['urlscan', 'github', 'ipquery', 'phishtank', 'hudsonrock', 'ipapi'];
  await setLatency(FAST_LATENCY_MS);
  big = await analyze(server, mixed(200, 200, 100), engines, true, bigPollEveryMs(500));
  const small = await analyze(server, domains(1).join('\n'), ['urlscan'], true);
  await setLatency(LATENCY_MS);
  const api = `${server.url}${prefix}is_analysis_complete/`;
  // The client is a small process of its own (poll-client.ts), so that this process's heap and
  // garbage collector are not in the figures.
  const pollCost = async (id: string, count: number) => {
    const before = cpuMsOf(server.pid);
    const { stdout } = await execFileAsync(process.execPath, [POLL_CLIENT, `${api}${id}`, String(count)], { maxBuffer: 16 * 1024 * 1024 });
    const after = cpuMsOf(server.pid);
    const { times, refused } = JSON.parse(stdout) as { times: number[]; refused: number };
    const cpu = before !== undefined && after !== undefined ? `${((after - before) / (count + 50)).toFixed(3)} ms server CPU per poll` : 'server CPU n/a (no /proc)';
    return { text: `p50 ${ms(percentile(times, 50), 2)}, p99 ${ms(percentile(times, 99), 2)}, max ${ms(Math.max(...times), 1)}; ${cpu}${refused ? `; ${refused} answers not 200!` : ''}`, p99: percentile(times, 99) };
  };
  const bigPoll = await pollCost(big.id, POLLS);
  row(`500 observables x ${engines.length} engines (goal p99 < 2 ms)`, bigPoll.text);
  goal('poll of a 500-observable analysis, p99', ms(bigPoll.p99, 2), '< 2 ms', bigPoll.p99 < 2);
  row('for comparison: 1 observable x 1 engine', (await pollCost(small.id, 500)).text);
  // The machine's own floor: a bare node:http server answering the same JSON, timed the same way.
  {
    const bare = spawn(process.execPath, ['-e', "const s=require('node:http').createServer((q,r)=>{r.setHeader('content-type','application/json');r.end('{\"complete\":true}')}).listen(0,'127.0.0.1',()=>console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'ignore'] });
    const [port] = (await once(bare.stdout!, 'data')) as [Buffer];
    const { stdout } = await execFileAsync(process.execPath, [POLL_CLIENT, `http://127.0.0.1:${String(port).trim()}/`, String(POLLS)]);
    const { times } = JSON.parse(stdout) as { times: number[] };
    bare.kill();
    row('the floor: a bare node:http server, same client', `p50 ${ms(percentile(times, 50), 2)}, p99 ${ms(percentile(times, 99), 2)}, max ${ms(Math.max(...times), 1)}`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(big.results));
  console.log(`  the 500-observable analysis: ${(bytes / 1024).toFixed(0)} KiB of results, ${big.failures} engine failures; client round trip included; CPU resolution ${CPU_TICK_MS} ms over the whole series`);
}

// ---------------------------------------------------------------------------------------------
// 4. CPU per engine call (W4).
title('CPU per engine call (the oas server process, user + system)');
if (w4Cpu) {
  row(`over the ${RUNS} W4 runs (goal <= 0.3 ms)`, `${ms(w4Cpu.cpuMs / w4Cpu.calls, 2)} per call (${w4Cpu.cpuMs.toFixed(0)} ms CPU / ${w4Cpu.calls} calls; includes serving ${RUNS} POSTs, ${w4Cpu.polls} polls, ${RUNS} results)`);
  goal('server CPU per engine call (W4)', ms(w4Cpu.cpuMs / w4Cpu.calls, 2), '<= 0.3 ms', w4Cpu.cpuMs / w4Cpu.calls <= 0.3);
  row('  upstream requests seen by the fakes', `${w4Cpu.http} HTTP + ${w4Cpu.dns} DNS queries (the pivot asks A and AAAA)`);
  // The machine's own floor: a bare HTTP client (call-floor.ts, a process of its own) sending W4's
  // requests (20 to urlscan's fake, 20 to ipquery's, 10 to grep.app's, at once) and parsing each answer.
  const base = (id: string) => String(settings.engines[id]?.base_url);
  const urls = [
    ...Array.from({ length: 20 }, (_, i) => `${base('provider_23')}?q=${encodeURIComponent(`domain:floor${i}.com`)}`),
    ...Array.from({ length: 20 }, (_, i) => `${base('provider_13')}/34.250.0.${i + 1}`),
    ...Array.from({ length: 10 }, (_, i) => `${base('provider_07')}?q=floor${i}`),
  ];
  const { stdout } = await execFileAsync(process.execPath, [CALL_FLOOR, '10', ...urls]);
  const floor = JSON.parse(stdout) as { cpuMsPerRequest: number; requests: number };
  row('the floor: a bare undici client, one request + JSON parse', `${ms(floor.cpuMsPerRequest, 2)} per request (${floor.requests} requests, 50 at once, after 250 not counted; the same fakes, its own process)`);
} else {
  row('over the W4 runs', 'n/a: needs /proc to read the server\'s CPU time');
  goal('server CPU per engine call (W4)', 'n/a (no /proc)', '<= 0.3 ms', undefined);
}

const mainStats = await server.stop();

// ---------------------------------------------------------------------------------------------
// 5. CLI start-up, whole processes.
title(`CLI start-up: whole processes, spawn to exit, stdio ignored, median of ${STARTUP_RUNS}`);
{
  const domain = domains(1)[0]!;
  const fill = await runNode([OAS_BIN, 'analyze', domain, '--engines', 'urlscan', '--json', '--config', cliConfig], { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  if (fill.code !== 0) console.log(`  note: filling the cache exited ${fill.code}: ${fill.stderr.trim()}`);
  const commands = [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'oas --version', args: [OAS_BIN, '--version'], goal: '<= +20 ms over node -e 0', over: 20 },
    { name: 'oas engines --json', args: [OAS_BIN, 'engines', '--json'], goal: '<= +40 ms over node -e 0', over: 40 },
    { name: `oas analyze ${domain} --engines urlscan --json (cached)`, args: [OAS_BIN, 'analyze', domain, '--engines', 'urlscan', '--json', '--config', cliConfig], goal: '<= 120 ms', total: 120 },
  ];
  await runNode(['-e', '0'], { cwd: dir }); // file system cache
  await upstreamCounts();
  const times = commands.map(() => [] as number[]);
  const codes = commands.map(() => new Set<number | null>());
  for (let round = 0; round < STARTUP_RUNS; round++) {
    for (const [i, command] of commands.entries()) {
      const run = await runNode(command.args, { cwd: dir });
      times[i]!.push(run.ms);
      codes[i]!.add(run.code);
    }
  }
  const counts = await upstreamCounts();
  const bare = median(times[0]!);
  for (const [i, command] of commands.entries()) {
    const m = median(times[i]!);
    const exit = [...codes[i]!].join(',');
    row(command.name, i === 0 ? ms(m) : `${ms(m)} (${signedMs(m - bare)} over node -e 0; goal ${command.goal}${exit === '0' ? '' : `; exit ${exit}`})`);
    if ('over' in command) goal(`${command.name} over node -e 0`, `${signedMs(m - bare)} (${ms(m)} vs ${ms(bare)})`, command.goal!, exit === '0' && m - bare <= command.over!);
    if ('total' in command) goal(command.name.replace(domain, '<domain>'), `${ms(m)} (${signedMs(m - bare)} over node -e 0)`, command.goal!, exit === '0' && m <= command.total!);
  }
  row('upstream requests during the cached analyses', `${counts.http} HTTP, ${counts.dns} DNS (0 = answered from the cache)`);
}

// ---------------------------------------------------------------------------------------------
// 6. 10 000 observables: CLI from stdin, and the API.
const BIG_ENGINES = ['urlscan', 'github', 'ipquery'];
title(`Many observables (40% domains, 40% IPs, 20% hashes) x ${BIG_ENGINES.join(', ')}, fakes at ${FAST_LATENCY_MS} ms; goal peak RSS <= 256 MiB, time linear`);
console.log(`  ${'run'.padEnd(34)} ${'time'.padStart(9)} ${'per obs.'.padStart(10)} ${'peak RSS'.padStart(9)} ${'CPU/call'.padStart(9)} ${'calls'.padStart(7)}  failures`);
await setLatency(FAST_LATENCY_MS);
const bigRow = (name: string, time: number, n: number, rssKiB: number | undefined, cpuMs: number | undefined, calls: number, failures: string, timedOut: boolean) => {
  if (timedOut) {
    console.log(`  ${name.padEnd(34)} ${`>${(BIG_DEADLINE_MS / 1000).toFixed(0)} s`.padStart(9)} ${`>${ms(BIG_DEADLINE_MS / n, 2)}`.padStart(10)} ${`>=${mib(rssKiB)}`.padStart(9)} ${'n/a'.padStart(9)} ${String(calls).padStart(7)}  stopped at the deadline, unfinished`);
    return;
  }
  console.log(`  ${name.padEnd(34)} ${ms(time).padStart(9)} ${ms(time / n, 2).padStart(10)} ${mib(rssKiB).padStart(9)} ${(cpuMs === undefined ? 'n/a' : ms(cpuMs / calls, 2)).padStart(9)} ${String(calls).padStart(7)}  ${failures}`);
};
// Issue 33's figure: 10 000 public IPs x one HTTP engine (ipquery: one request each, no pivot),
// `oas analyze --json < file` into a file, a fresh data dir; goal <= 4 s and <= 200 MiB.
{
  const n = 10_000;
  const input = join(dir, 'in-one-engine.txt');
  const output = join(dir, 'out-one-engine.json');
  writeFileSync(input, ips(n).join('\n'));
  const stdin = openSync(input, 'r');
  const stdout = openSync(output, 'w');
  const cli = await runNode([OAS_BIN, 'analyze', '--json', '--engines', 'ipquery', '--config', cliConfig, '--data-dir', join(dir, 'cli-one-engine')], {
    stdio: [stdin, stdout, 'pipe'],
    statsFile: join(dir, 'cli-one-engine.stats'),
    deadlineMs: BIG_DEADLINE_MS,
  });
  closeSync(stdin);
  closeSync(stdout);
  let failures = 'n/a';
  if (!cli.timedOut) {
    try {
      const { failures: count, firstErrors } = failuresOf(JSON.parse(readFileSync(output, 'utf8')) as ObservableResult[]);
      failures = `${count}${firstErrors.length ? ` (${firstErrors[0]})` : ''}`;
    } catch {
      failures = `no JSON output (exit ${cli.code}: ${cli.stderr.trim().split('\n')[0] ?? ''})`;
    }
  }
  rmSync(output, { force: true });
  bigRow(`CLI ${n} IPs x ipquery from stdin`, cli.ms, n, cli.stats?.maxRssKiB, cli.stats?.cpuMs, n, failures, cli.timedOut);
  const rss = cli.stats?.maxRssKiB;
  goal(`CLI ${n} IPs x ipquery from stdin: time`, cli.timedOut ? `> ${BIG_DEADLINE_MS / 1000} s` : `${(cli.ms / 1000).toFixed(2)} s (${cli.stats ? `${(cli.stats.cpuMs / 1000).toFixed(1)} s CPU` : 'CPU n/a'})`, '<= 4 s', !cli.timedOut && cli.ms <= 4000 && failures === '0');
  goal(`CLI ${n} IPs x ipquery from stdin: peak RSS`, mib(rss), '<= 200 MiB', rss === undefined ? undefined : rss <= 200 * 1024);
}
let cliOver = false;
let apiOver = false;
const skipped = (name: string) => console.log(`  ${name.padEnd(34)} skipped: a smaller run was already stopped at the deadline`);
for (const n of SCALE) {
  const text = mixed(Math.round(n * 0.4), Math.round(n * 0.4), n - 2 * Math.round(n * 0.4));
  const p = plan(text, BIG_ENGINES);
  // CLI: `oas analyze --json --engines ... < file`, a fresh data dir, stdout to a file.
  const input = join(dir, `in-${n}.txt`);
  const output = join(dir, `out-${n}.json`);
  writeFileSync(input, text);
  if (cliOver) skipped(`CLI ${n} from stdin`);
  else {
    const stdin = openSync(input, 'r');
    const stdout = openSync(output, 'w');
    const cli = await runNode([OAS_BIN, 'analyze', '--json', '--engines', BIG_ENGINES.join(','), '--config', cliConfig, '--data-dir', join(dir, `cli-${n}`)], {
      stdio: [stdin, stdout, 'pipe'],
      statsFile: join(dir, `cli-${n}.stats`),
      deadlineMs: BIG_DEADLINE_MS,
    });
    closeSync(stdin);
    closeSync(stdout);
    let cliFailures = '';
    if (!cli.timedOut) {
      try {
        const { failures, firstErrors } = failuresOf(JSON.parse(readFileSync(output, 'utf8')) as ObservableResult[]);
        cliFailures = `${failures}${firstErrors.length ? ` (${firstErrors[0]})` : ''}`;
      } catch {
        cliFailures = `no JSON output (exit ${cli.code}: ${cli.stderr.trim().split('\n')[0] ?? ''})`;
      }
    }
    rmSync(output, { force: true });
    bigRow(`CLI ${n} from stdin`, cli.ms, n, cli.stats?.maxRssKiB, cli.stats?.cpuMs, p.calls, cliFailures, cli.timedOut);
    cliOver = cli.timedOut;
  }

  // API: a fresh server, POST, poll, GET the results.
  if (apiOver) {
    skipped(`API ${n}`);
    continue;
  }
  const apiConfig = writeConfig(`api-${n}`);
  const apiServer = await startServer(apiConfig, join(dir, `api-${n}.stats`), prefix);
  const before = cpuMsOf(apiServer.pid);
  const run = await analyze(apiServer, text, BIG_ENGINES, true, bigPollEveryMs(n), BIG_DEADLINE_MS);
  const after = cpuMsOf(apiServer.pid);
  const rssSoFar = peakRssKiBOf(apiServer.pid);
  const stats: ExitStats | undefined = await apiServer.stop();
  const cpu = before !== undefined && after !== undefined ? after - before : undefined;
  bigRow(`API ${n} (poll every ${bigPollEveryMs(n)} ms)`, run.ms, n, stats?.maxRssKiB ?? rssSoFar, cpu, p.calls, `${run.failures}${run.firstErrors.length ? ` (${run.firstErrors[0]})` : ''}`, run.timedOut);
  apiOver = run.timedOut;
  await upstreamCounts();
}
await setLatency(LATENCY_MS);
console.log('  time: spawn to exit (CLI, start-up included), POST to results received (API). peak RSS: the oas process alone');
console.log('  (maxRSS at exit, preload.js). CPU/call: whole CLI process life (start-up included) / engine calls; API: server CPU');
console.log('  from POST to results / engine calls. engine calls include the pivot\'s calls for domains. A run still going');
console.log(`  after ${(BIG_DEADLINE_MS / 1000).toFixed(0)} s (BENCH_BIG_DEADLINE_MS) is stopped: its peak RSS is the peak until then (/proc).`);

// ---------------------------------------------------------------------------------------------
// 7. The pages' building blocks, as library calls in this process.
title('Pages and extraction (library calls in the bench process)');
{
  const names = ['urlscan', 'github', 'ipquery', 'phishtank', 'hudsonrock', 'ipapi'];
  const record: AnalysisRecord = {
    id: '00000000-0000-4000-8000-000000000500',
    created_at: new Date().toISOString(),
    finished_at: new Date().toISOString(),
    duration_ms: 1,
    engines: names,
    ignore_cache: true,
    observables: big.results.map((r) => ({ value: r.observable, type: r.type })),
    complete: true,
    progress: { done: big.results.length * names.length, total: big.results.length * names.length },
    results: big.results,
  };
  const viewStart = performance.now();
  const viewBytes = Buffer.byteLength(JSON.stringify(analysisView(record, app.catalog)));
  const viewMs = performance.now() - viewStart;
  const heldBytes = Buffer.byteLength(JSON.stringify(analysisView(record, app.catalog, new Set(record.observables.map((_, i) => i)))));
  row(`live view of 500 observables x ${names.length} engines`, `${ms(viewMs)} to build, ${(viewBytes / 1024).toFixed(0)} KiB of JSON (${(heldBytes / 1024).toFixed(1)} KiB once every observable is held)`);

  const HISTORY = 2000;
  const writeStart = performance.now();
  for (let i = 0; i < HISTORY; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const from = (i * 10) % 490;
    await app.storage!.analyses.set(id, { ...record, id, created_at: new Date(Date.now() - i * 1000).toISOString(), observables: record.observables.slice(from, from + 10), results: record.results.slice(from, from + 10) });
  }
  const writeMs = performance.now() - writeStart;
  const historyStart = performance.now();
  await historyPage(app.storage!, { query: '', page: 1, perPage: 20 });
  const historyMs = performance.now() - historyStart;
  const needle = record.observables[42]!.value;
  const searchStart = performance.now();
  const found = await historyPage(app.storage!, { query: needle, page: 1, perPage: 20 });
  const searchMs = performance.now() - searchStart;
  row(`history page 1 of ${HISTORY} analyses`, `${ms(historyMs)} (writing them: ${ms(writeMs)})`);
  row('history search by observable', `${ms(searchMs)} (${found.total} matches)`);

  const mb = 'Host 10.0.0.5 hit hxxps://evil[.]com/a?b=1 and 2001:db8::1 from a@b.example.org '.repeat(13_000);
  const extractStart = performance.now();
  const extracted = extractObservables(mb).length;
  const extractMs = performance.now() - extractStart;
  row('extraction of 1 MB of alert text', `${ms(extractMs)} (${(mb.length / 1e6).toFixed(2)} MB, ${extracted} distinct observables)`);
}

// ---------------------------------------------------------------------------------------------
// 7b. Files in (issue 35): a 10 MB e-mail and a 200-page PDF, by `oas extract` and by the server.
await benchFiles(dir, serverConfig, prefix, { row, title });

// ---------------------------------------------------------------------------------------------
// 7c. Seen before (issue 38): a 10 000-observable analysis with and without 1 000 000 earlier
// observable rows in the store, SQLite and Redis (seen.ts), the fleet still at its fast latency.
await setLatency(FAST_LATENCY_MS);
await seenRun({ settings, latencyMs: FAST_LATENCY_MS, upstreamCounts });

// ---------------------------------------------------------------------------------------------
// 8. Scale out on Redis (issue 16): 1 and 3 `oas worker` processes on one Redis (scale.ts).
await setLatency(LATENCY_MS);
await scaleRun({ settings, latencyMs: LATENCY_MS, upstreamCounts });

// ---------------------------------------------------------------------------------------------
// 9. Fair share: 10 one-observable analyses of one user while another's 5 x 2 000 IPs run, locally
// and with 3 workers on Redis (fairness.ts).
await setLatency(LATENCY_MS);
await fairnessRun({ settings, latencyMs: LATENCY_MS, upstreamCounts });

// ---------------------------------------------------------------------------------------------
// 10. Load (issue 33): 32 clients fuzz one `oas serve` with ~1 MiB bodies and 10 000-engine lists
// (load.ts), run as a process of its own with a fleet of its own, as the poll client is: by now this
// process holds hundreds of MiB of earlier results, and its garbage collector's pauses would be
// counted as the server's latency by the 32 clients it would run.
{
  const goalsFile = join(dir, 'load-goals.json');
  const child = spawn(process.execPath, [fileURLToPath(new URL('./load.js', import.meta.url))], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_LATENCY_MS: String(LATENCY_MS), BENCH_GOALS_FILE: goalsFile },
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  try {
    for (const r of JSON.parse(readFileSync(goalsFile, 'utf8')) as GoalRow[]) goal(r.figure, r.value, r.goal, r.met);
  } catch {
    goal('fuzzing oas serve', `the load run exited ${code} without its figures`, 'every request answered, p99 <= 2 s', false);
  }
}

printGoals();

title('Processes');
row('oas serve (W1-W4, cached, polls): peak RSS', `${mib(mainStats?.maxRssKiB)}, ${mainStats ? ms(mainStats.cpuMs) : 'n/a'} CPU over its life`);
row('this bench process (client, in-process library calls)', `peak RSS ${mib(process.resourceUsage().maxRSS)}`);
row('total bench time', elapsed());

await app.close();
const fleetExit = once(fleet, 'exit');
fleet.postMessage({ type: 'close' });
await fleetExit;
rmSync(dir, { recursive: true, force: true });
