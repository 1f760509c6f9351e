/**
 * The load run of `npm run bench` (issue 33, "the server answers under load"): one real `oas serve`
 * subprocess, its engines pointed at the fleet's loopback fakes, fuzzed for BENCH_LOAD_SECONDS
 * (default 20 s) by 32 clients (BENCH_LOAD_CLIENTS), each from a loopback address of its own (a
 * client of its own for the rate limit too), each sending its next request as soon as its last
 * one is answered, a mix of:
 *  - big analyses: ~1 MiB bodies, a text of ~0.9 MB holding a few thousand distinct public IPs
 *    among prose, hashes and URLs (`ignore_cache`: every engine call is real), and an `engines`
 *    list of 10 000 names, two valid names repeated (accepted: 200; 429 past the rate limit; 503
 *    when the server has too many texts to extract already);
 *  - unknown engines: the same text with 10 000 names, mostly invalid (thousands of distinct
 *    unknown names) and the rest repeated: 400;
 *  - malformed: a ~1 MiB body cut in the middle of its JSON, or with `text` not a string: 400;
 *  - reads: a poll (`is_analysis_complete`) of an analysis the run started, or the results of a
 *    small analysis completed before the run.
 * Besides the clients, a probe (from an address of its own) sends, every PROBE_EVERY_MS, a poll,
 * a results read and a small malformed POST, one after the other: how fast the HTTP surface
 * answers what costs nothing while the server is busy.
 *
 * Printed: requests per second answered, p50/p99/max latency over every request, requests not
 * answered within 10 s (and those never answered), the latency of each kind, and of the probe's
 * requests, each next to its goal: every request answered, p99 <= 2 s, every malformed request's
 * 400 within 1 s; and the server's event loop delay (its /metrics). A request is given up after 30 s.
 *
 * `node dist/tests/bench/load.js` runs this part alone, with a fleet of its own (BENCH_LATENCY_MS,
 * default 200); bench.ts runs it so, as a process of its own, and reads its figures back from
 * BENCH_GOALS_FILE.
 * BENCH_LOAD_BIN runs another build's bin/oas.js (a before/after comparison), BENCH_LOAD_NODE_ARGS
 * adds node options to the server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 as prng } from '../helpers/prng.js';
import { goal } from './goals.js';
import { OAS_BIN } from './proc.js';
import { ms, row, runAlone, sleep, startOas, title, type ScaleFleet } from './scale.js';

const CLIENTS = Number(process.env.BENCH_LOAD_CLIENTS ?? 32);
const DURATION_MS = Number(process.env.BENCH_LOAD_SECONDS ?? 20) * 1000;
const PROBE_EVERY_MS = 250;
/** A request answered after this counts as unanswered (the issue's measure). */
const ANSWERED_WITHIN_MS = 10_000;
/** A request is given up after this. */
const GIVE_UP_MS = 30_000;
const GOAL_P99_MS = 2000;
const GOAL_MALFORMED_MS = 1000;
/** Bodies of the big requests: at most max_body_bytes (default 1 MiB). */
const BODY_BYTES = 1024 * 1024 - 1024;
const NAMES = 10_000;
const VALID = ['ipquery', 'ipapi'];
/** Distinct IPs in the text of one big analysis (under max_observables, 10 000). */
const IPS_PER_TEXT = 3000;
/** Distinct bodies of each big kind (each analysis of a body has its own addresses). */
const VARIANTS = 4;

type Kind = 'analysis' | 'unknown engines' | 'malformed' | 'poll' | 'results';
const KINDS: readonly Kind[] = ['analysis', 'unknown engines', 'malformed', 'poll', 'results'];

interface Sample {
  kind: Kind | 'probe poll' | 'probe results' | 'probe malformed';
  ms: number;
  status: number | undefined;
  error?: string;
}


const WORDS = 'alert host connection blocked from to the at via user reported suspicious beacon outbound inbound rule matched firewall proxy sensor'.split(' ');

/** ~`bytes` of alert text around `IPS_PER_TEXT` distinct public IPs (block `block`), hashes and URLs. */
function alertText(bytes: number, block: number, random: () => number): string {
  const ips = Array.from({ length: IPS_PER_TEXT }, (_, i) => `34.${block}.${Math.floor(i / 250)}.${(i % 250) + 1}`);
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
    const piece = i % 7 === 3 ? `hxxps://cdn${i % 50}[.]example[.]com/p/${i % 500}?id=${block}`
      : i % 7 === 5 ? ((i % 500) * 2654435761 + block >>> 0).toString(16).padStart(8, '0').repeat(8)
        : `${word()} ${word()} ${ips[i % ips.length]} ${word()}`;
    parts.push(piece);
    size += piece.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

/** A JSON body of `text` and `engines` filled with text up to BODY_BYTES. */
function bigBody(engines: string[], block: number, random: () => number, extra: Record<string, unknown> = {}): Buffer {
  const head = JSON.stringify({ ...extra, engines, text: '' });
  const text = alertText(BODY_BYTES - Buffer.byteLength(head), block, random);
  const body = Buffer.from(JSON.stringify({ ...extra, engines, text }));
  if (body.length > BODY_BYTES) throw new Error(`load: a body of ${body.length} bytes, over ${BODY_BYTES}`);
  return body;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Each client has a loopback address of its own (127.0.1.<n>, the probe 127.0.0.2): 33 clients
 * for the rate limit too (setting rate_limit_per_minute, analyses per client and minute).
 */
const PROBE_ADDRESS = '127.0.0.2';
const clientAddress = (index: number) => `127.0.1.${index + 1}`;

/** One client: its connection (kept alive) and its address. */
interface Client {
  agent: http.Agent;
  address: string;
}

function send(client: Client, url: URL, method: string, path: string, body?: Buffer): Promise<{ status: number | undefined; ms: number; body: string; error?: string }> {
  const started = performance.now();
  const { agent, address: localAddress } = client;
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, agent, localAddress, headers: body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {} }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        if (size < 512 * 1024) chunks.push(d);
        size += d.length;
      });
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error) => resolve({ status: undefined, ms: performance.now() - started, body: '', error: error.message }));
    });
    req.setTimeout(GIVE_UP_MS, () => req.destroy(new Error(`no answer after ${GIVE_UP_MS / 1000} s`)));
    req.on('error', (error) => resolve({ status: undefined, ms: performance.now() - started, body: '', error: error.message }));
    req.end(body);
  });
}

let probe: Client = { agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), address: PROBE_ADDRESS };

/** The server's event loop delay (prom-client's, reset at each read of /metrics): max and p99, ms. */
async function eventLoopLag(url: URL): Promise<{ max: number; p99: number } | undefined> {
  const answer = await send(probe, url, 'GET', '/metrics');
  const metrics = answer.status === 200 ? answer.body : '';
  const gauge = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics)?.[1]) * 1000;
  const max = gauge('nodejs_eventloop_lag_max_seconds');
  return Number.isFinite(max) ? { max, p99: gauge('nodejs_eventloop_lag_p99_seconds') } : undefined;
}

interface Serve {
  url: URL;
  stop(): Promise<{ cpuMs: number; maxRssKiB: number } | undefined>;
}

/** `oas serve` of build `bin` on a free port (scale.ts's startOas), and its CPU and peak memory once stopped. */
async function startServe(bin: string, configFile: string, statsFile: string): Promise<Serve> {
  const nodeArgs = (process.env.BENCH_LOAD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const serve = await startOas('oas serve', ['serve', '--config', configFile, '--port', '0'], /listening on (http:\/\/\S+)/, statsFile, { bin, nodeArgs });
  const url = new URL(/listening on (http:\/\/\S+)/.exec(serve.stdout)![1]!);
  return {
    url,
    stop: async () => {
      await serve.stop();
      const line = readFileSync(statsFile, 'utf8').trim().split('\n').pop();
      if (!line) return undefined;
      const stats = JSON.parse(line) as { maxRssKiB: number; userUs: number; systemUs: number };
      return { cpuMs: (stats.userUs + stats.systemUs) / 1000, maxRssKiB: stats.maxRssKiB };
    },
  };
}

/** The load run: prints its section; never throws for a run that goes wrong (it says so). */
export async function loadRun(fleet: ScaleFleet): Promise<void> {
  const bin = process.env.BENCH_LOAD_BIN ?? OAS_BIN;
  title(`Load (issue 33): ${CLIENTS} clients for ${DURATION_MS / 1000} s against one \`oas serve\`, fakes at ${fleet.latencyMs} ms: ~1 MiB bodies, ${NAMES} engine names,`);
  console.log('  big analyses, unknown engines, malformed bodies, polls and results reads; plus a probe (a poll, a results read and a');
  console.log(`  malformed POST every ${PROBE_EVERY_MS} ms)${bin === OAS_BIN ? '' : `; server: ${bin}`}`);
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'oas-bench-load-'));
  let serve: Serve | undefined;
  try {
    const configFile = join(dir, 'oas.json');
    writeFileSync(configFile, JSON.stringify({ data_dir: join(dir, 'data'), dns_servers: fleet.settings.dns_servers, engines: fleet.settings.engines }, null, 2));
    const random = prng(33);
    const valid = Array.from({ length: NAMES }, (_, i) => VALID[i % VALID.length]!);
    const unknownNames = () => Array.from({ length: NAMES }, (_, i) => (i % 4 === 0 ? VALID[0]! : i % 4 === 1 ? `engine_${i % 97}` : `eng${Math.floor(random() * 1e9).toString(36)}`));
    const bodies = {
      analysis: Array.from({ length: VARIANTS }, (_, i) => bigBody(valid, 10 + i, random, { ignore_cache: true })),
      unknown: Array.from({ length: VARIANTS }, (_, i) => bigBody(unknownNames(), 20 + i, random)),
      malformed: [
        bigBody(valid, 30, random).subarray(0, BODY_BYTES >> 1),
        Buffer.from(JSON.stringify({ text: 12, engines: valid, padding: 'x'.repeat(BODY_BYTES - 200_000) })),
      ],
    };
    const probeMalformed = Buffer.from('{"text": "example.com", "engines": "ipquery"}');

    serve = await startServe(bin, configFile, join(dir, 'serve.stats'));
    const url = serve.url;
    const api = '/api/';
    probe = { agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), address: PROBE_ADDRESS };
    const clients: Client[] = Array.from({ length: CLIENTS }, (_, i) => ({ agent: new http.Agent({ keepAlive: true, maxSockets: 1 }), address: clientAddress(i) }));

    // A small analysis completed before the load: its poll and results are what the reads ask for.
    const small = await send(probe, url, 'POST', `${api}analyze`, Buffer.from(JSON.stringify({ text: '34.1.1.1 34.1.1.2', engines: VALID })));
    if (small.status !== 200) throw new Error(`the small analysis answered ${small.status}: ${small.body.slice(0, 200)}`);
    const smallId = (JSON.parse(small.body) as { analysis_id: string }).analysis_id;
    for (let i = 0; ; i++) {
      const poll = await send(probe, url, 'GET', `${api}is_analysis_complete/${smallId}`);
      if (poll.body.includes('true')) break;
      if (i > 200) throw new Error('the small analysis did not complete within 10 s');
      await sleep(50);
    }

    const samples: Sample[] = [];
    const accepted: string[] = [];
    const statuses = new Map<string, number>();
    const end = performance.now() + DURATION_MS;
    let turn = 0;
    const run = async (index: number) => {
      const pick = prng(1000 + index);
      const agent = clients[index]!;
      while (performance.now() < end) {
        const roll = pick();
        const kind: Kind = roll < 0.3 ? 'analysis' : roll < 0.55 ? 'unknown engines' : roll < 0.75 ? 'malformed' : roll < 0.9 ? 'poll' : 'results';
        const variant = turn++;
        const answer = kind === 'analysis' ? await send(agent, url, 'POST', `${api}analyze`, bodies.analysis[variant % VARIANTS])
          : kind === 'unknown engines' ? await send(agent, url, 'POST', `${api}analyze`, bodies.unknown[variant % VARIANTS])
            : kind === 'malformed' ? await send(agent, url, 'POST', `${api}analyze`, bodies.malformed[variant % bodies.malformed.length])
              : kind === 'poll' ? await send(agent, url, 'GET', `${api}is_analysis_complete/${accepted.length > 0 ? accepted[variant % accepted.length] : smallId}`)
                : await send(agent, url, 'GET', `${api}results/${smallId}`);
        samples.push({ kind, ms: answer.ms, status: answer.status, ...(answer.error ? { error: answer.error } : {}) });
        const key = `${kind} ${answer.status ?? answer.error}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (kind === 'analysis' && answer.status === 200) accepted.push((JSON.parse(answer.body) as { analysis_id: string }).analysis_id);
      }
    };
    const probing = async () => {
      while (performance.now() < end) {
        const next = performance.now() + PROBE_EVERY_MS;
        const poll = await send(probe, url, 'GET', `${api}is_analysis_complete/${accepted.length > 0 ? accepted[accepted.length - 1] : smallId}`);
        samples.push({ kind: 'probe poll', ms: poll.ms, status: poll.status });
        const results = await send(probe, url, 'GET', `${api}results/${smallId}`);
        samples.push({ kind: 'probe results', ms: results.ms, status: results.status });
        const malformed = await send(probe, url, 'POST', `${api}analyze`, probeMalformed);
        samples.push({ kind: 'probe malformed', ms: malformed.ms, status: malformed.status });
        await sleep(Math.max(0, next - performance.now()));
      }
    };
    await eventLoopLag(url);
    const loadStarted = performance.now();
    await Promise.all([...clients.map((_, i) => run(i)), probing()]);
    const loadMs = performance.now() - loadStarted;
    const lag = await eventLoopLag(url);
    for (const client of clients) client.agent.destroy();
    probe.agent.destroy();
    const stats = await serve.stop();
    serve = undefined;

    const load = samples.filter((s) => !s.kind.startsWith('probe'));
    const answered = load.filter((s) => s.status !== undefined && s.ms <= ANSWERED_WITHIN_MS);
    const late = load.filter((s) => s.status !== undefined && s.ms > ANSWERED_WITHIN_MS).length;
    const never = load.filter((s) => s.status === undefined).length;
    const busy = samples.filter((s) => s.status === 503).length;
    const server5xx = samples.filter((s) => s.status !== undefined && s.status >= 500 && s.status !== 503).length;
    const sorted = load.map((s) => s.ms).sort((a, b) => a - b);
    const p99 = percentile(sorted, 99);
    const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
    const figures = (list: readonly Sample[]) => {
      const values = list.map((s) => s.ms).sort((a, b) => a - b);
      return values.length === 0 ? 'none' : `p50 ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}, max ${ms(values[values.length - 1]!)} (${values.length})`;
    };
    title('  over every request of the clients');
    row('  requests answered per second', `${(answered.length / (loadMs / 1000)).toFixed(1)} (${load.length} sent in ${(loadMs / 1000).toFixed(1)} s)`);
    row('  latency p50 / p99 / max', `${ms(percentile(sorted, 50))} / ${ms(p99)} / ${ms(sorted[sorted.length - 1] ?? NaN)}   goal p99 <= ${ms(GOAL_P99_MS)}: ${met(p99 <= GOAL_P99_MS)}`);
    row(`  unanswered after ${ANSWERED_WITHIN_MS / 1000} s (of which never answered)`, `${late + never} (${never})   goal 0: ${met(late + never === 0)}`);
    row('  503 (busy: too much extraction ahead, Retry-After) / other 5xx', `${busy} / ${server5xx}`);
    title('  by kind: latency, answers');
    for (const kind of KINDS) {
      const list = load.filter((s) => s.kind === kind);
      const answers = [...statuses].filter(([key]) => key.startsWith(`${kind} `)).map(([key, n]) => `${key.slice(kind.length + 1)} x${n}`).join(', ');
      row(`  ${kind}`, `${figures(list)}; ${answers || 'none sent'}`);
    }
    const refused = load.filter((s) => (s.kind === 'malformed' || s.kind === 'unknown engines'));
    const refusedMax = Math.max(...refused.map((s) => s.ms));
    const refusedOk = refused.every((s) => s.status === 400 || s.status === 429);
    row('  malformed and unknown engines: slowest 400 (429 past the limit)', `${ms(refusedMax)}   goal <= ${ms(GOAL_MALFORMED_MS)}: ${met(refusedMax <= GOAL_MALFORMED_MS && refusedOk)}${refusedOk ? '' : ', not all 400 or 429'}`);
    goal('fuzzing oas serve: requests answered', `${(answered.length / (loadMs / 1000)).toFixed(1)} req/s, ${late + never} unanswered after ${ANSWERED_WITHIN_MS / 1000} s`, 'every request answered', late + never === 0);
    goal('fuzzing oas serve: latency p99', ms(p99), `<= ${ms(GOAL_P99_MS)}`, p99 <= GOAL_P99_MS);
    goal('fuzzing oas serve: slowest 400 of a malformed request', ms(refusedMax), `<= ${ms(GOAL_MALFORMED_MS)}`, refusedMax <= GOAL_MALFORMED_MS && refusedOk);
    title('  the probe (one request at a time, every 250 ms)');
    for (const kind of ['probe poll', 'probe results', 'probe malformed'] as const) {
      const list = samples.filter((s) => s.kind === kind);
      const worst = Math.max(...list.map((s) => s.ms));
      const goal = kind === 'probe malformed' ? GOAL_MALFORMED_MS : GOAL_P99_MS;
      const bad = list.filter((s) => s.status !== (kind === 'probe malformed' ? 400 : 200)).length;
      row(`  ${kind.slice(6)}`, `${figures(list)}   goal max <= ${ms(goal)}: ${met(worst <= goal && bad === 0)}${bad ? `, ${bad} unexpected answers` : ''}`);
    }
    row('  analyses accepted during the load', String(accepted.length));
    if (lag) row('  oas serve: event loop delay during the load, p99 / max', `${ms(lag.p99)} / ${ms(lag.max)}`);
    if (stats) row('  oas serve: CPU over its life, peak RSS', `${ms(stats.cpuMs)}, ${(stats.maxRssKiB / 1024).toFixed(0)} MiB`);
  } catch (error) {
    row('load run failed', error instanceof Error ? error.message.split('\n')[0]! : String(error));
    goal('fuzzing oas serve', 'the run failed', 'every request answered, p99 <= 2 s', false);
  } finally {
    await serve?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    row('load run time', `${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

// `node dist/tests/bench/load.js`: this part alone, with a fleet of its own.
await runAlone(import.meta.url, loadRun);
