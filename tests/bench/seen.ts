/**
 * The bench's "seen before" section (issue 38): what looking up `seen` adds to one analysis of
 * 10 000 observables when the store holds 1 000 000 earlier observable rows, on SQLite and on
 * Redis. The goal: at most 10 % over the same analysis on a store that holds none.
 *
 * The earlier rows are written straight through the store (`recordSeen`: SQLite in one
 * transaction, Redis in pipelines), never through analyses: 200 000 distinct public IPv4 addresses
 * held by 5 analyses each. The analysis holds 10 000 of them, so every observable is found (5
 * earlier analyses each): the lookup's worst case, not a miss. Each run is an ordinary analysis in
 * this process (`runToEnd`, as `oas analyze` runs one) of the 10 000 addresses x ipquery (one HTTP
 * call each to the fleet's fake, at the fleet's latency), `ignore_cache` so that every run is
 * cold, with and without the rows taking turns after a warm-up run each; the medians are compared. The lookup alone
 * (`seenBefore` of the 10 000 keys) is timed too, as a share of the analysis.
 *
 * `seenRun(fleet)` is called by bench.ts with its fleet of fakes (at its fast latency);
 * `BENCH_LATENCY_MS=3 node dist/tests/bench/seen.js` runs it alone. Redis needs redis-server (else
 * that half says why it did not run).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import type { AnalysisStore } from '../../src/store/analysis-store.js';
import type { SeenRecord } from '../../src/store/seen.js';
import { sqliteAnalysisStore } from '../../src/store/sqlite-analyses.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { goal } from './goals.js';
import { ms, row, runAlone, title, type ScaleFleet } from './scale.js';

const OBSERVABLES = Number(process.env.BENCH_SEEN_OBSERVABLES ?? 10_000);
const EARLIER_ROWS = Number(process.env.BENCH_SEEN_ROWS ?? 1_000_000);
/** Analyses holding each earlier value: EARLIER_ROWS / HELD distinct values. */
const HELD = 5;
/** Runs of each kind (with and without the rows), taking turns. */
const RUNS = Number(process.env.BENCH_SEEN_RUNS ?? 5);
/** Records written per `recordSeen` call while filling. */
const FILL_BATCH = 20_000;
const BOUND = 10;

/** Value `i` of the earlier rows: a public IPv4 address, 45.a.b.c (c from 1 to 250), distinct for i < 16 million. */
const value = (i: number) => `45.${Math.floor(i / 62_500) % 256}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;

/** The distinct earlier values, each held by HELD analyses. */
const values = () => Array.from({ length: Math.ceil(EARLIER_ROWS / HELD) }, (_, i) => value(i));

interface Variant {
  name: string;
  /** An app on an empty store, and one whose store is to hold the earlier rows. */
  open(withRows: boolean): Promise<App>;
  /** The app's analysis store (its index). */
  storeOf(app: App): AnalysisStore;
  /** Writes the records at once (one transaction, or pipelines). */
  fill(app: App, write: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function seenRun(fleet: ScaleFleet): Promise<void> {
  title(`Seen before (issue 38): one analysis of ${OBSERVABLES} IPs x ipquery, with and without ${EARLIER_ROWS.toLocaleString('en')} earlier observable rows in the store; fakes at ${fleet.latencyMs} ms; median of ${RUNS} each, taking turns`);
  const dir = mkdtempSync(join(tmpdir(), 'oas-bench-seen-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ dns_servers: fleet.settings.dns_servers, engines: fleet.settings.engines }));
  const all = values();
  const text = all.slice(0, OBSERVABLES).join('\n');
  try {
    const sqlite: Variant = {
      name: 'SQLite',
      open: (withRows) => createApp({ file: config, env: {}, flags: { data_dir: join(dir, withRows ? 'with' : 'without') } }),
      storeOf: (app) => sqliteAnalysisStore(app.storage!),
      fill: async (app, write) => {
        const table = app.storage!.analysesTable;
        await table.query('BEGIN');
        try {
          await write();
          await table.query('COMMIT');
        } catch (error) {
          await table.query('ROLLBACK').catch(() => {});
          throw error;
        }
      },
      close: async () => {},
    };
    await measure(sqlite, all, text);

    if (redisSkip) {
      row('Redis', `not measured: ${redisSkip}`);
      goal('seen before, Redis: added to a 10 000-observable analysis', 'n/a', `<= ${BOUND} %`, undefined);
      return;
    }
    const servers: RedisServer[] = [];
    const redis: Variant = {
      name: 'Redis',
      open: async (withRows) => {
        const server = await startRedis();
        servers.push(server);
        return createApp({ file: config, env: {}, flags: { data_dir: join(dir, withRows ? 'redis-with' : 'redis-without'), redis_url: server.url } }, { role: 'worker' });
      },
      storeOf: (app) => app.scale!.store!,
      fill: (_app, write) => write(),
      close: async () => {
        await Promise.all(servers.map((server) => server.close()));
      },
    };
    try {
      await measure(redis, all, text);
    } finally {
      await redis.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(variant: Variant, all: readonly string[], text: string): Promise<void> {
  const without = await variant.open(false);
  const withRows = await variant.open(true);
  try {
    await without.scale?.link.whenReady(5_000);
    await withRows.scale?.link.whenReady(5_000);
    const store = variant.storeOf(withRows);
    const fillStart = performance.now();
    await variant.fill(withRows, async () => {
      let batch: SeenRecord[] = [];
      for (let analysis = 0; analysis < HELD; analysis++) {
        const id = `00000000-0000-4000-8000-${String(analysis).padStart(12, '0')}`;
        const at = new Date(Date.UTC(2026, 0, 1 + analysis)).toISOString();
        const verdict = analysis === HELD - 1 ? 'malicious' : 'clean';
        for (const v of all) {
          batch.push({ value: v, at, analysis_id: id, verdict });
          if (batch.length >= FILL_BATCH) {
            await store.recordSeen(batch);
            batch = [];
          }
        }
      }
      if (batch.length > 0) await store.recordSeen(batch);
    });
    row(`${variant.name}: ${(all.length * HELD).toLocaleString('en')} earlier rows written through the store`, ms(performance.now() - fillStart));

    // One run each first, not counted: the code, the fake's connections and SQLite's pages warm.
    for (const app of [without, withRows]) await app.analyses.runToEnd({ text: text.split('\n').slice(0, 1000).join('\n'), engines: ['ipquery'], ignore_cache: true });
    const times = { without: [] as number[], with: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      for (const [kind, app] of [['without', without], ['with', withRows]] as const) {
        const started = performance.now();
        const header = await app.analyses.runToEnd({ text, engines: ['ipquery'], ignore_cache: true });
        times[kind].push(performance.now() - started);
        if (header.observables.length !== OBSERVABLES) row(`${variant.name}: note`, `the analysis held ${header.observables.length} observables, not ${OBSERVABLES}`);
      }
    }
    // The lookup alone, as an analysis makes it (every observable held before: the worst case).
    const lookupStart = performance.now();
    const found = await store.seenBefore(text.split('\n'), 'none');
    const lookupMs = performance.now() - lookupStart;

    const base = median(times.without);
    const loaded = median(times.with);
    const added = ((loaded - base) / base) * 100;
    row(`${variant.name}: the analysis, store without the rows`, `${ms(base)} (runs: ${times.without.map((t) => ms(t)).join(', ')})`);
    row(`${variant.name}: the analysis, store with the rows`, `${ms(loaded)} (runs: ${times.with.map((t) => ms(t)).join(', ')})`);
    row(`${variant.name}: added`, `${added >= 0 ? '+' : ''}${added.toFixed(1)} % (bound ${BOUND} %)`);
    row(`${variant.name}: the lookup alone (${OBSERVABLES} keys, ${found.size} found)`, `${ms(lookupMs)}, ${((lookupMs / base) * 100).toFixed(1)} % of the analysis`);
    goal(`seen before, ${variant.name}: added to a ${OBSERVABLES}-observable analysis over ${EARLIER_ROWS.toLocaleString('en')} rows`, `${added >= 0 ? '+' : ''}${added.toFixed(1)} % (lookup ${ms(lookupMs)})`, `<= ${BOUND} %`, added <= BOUND);
  } finally {
    await Promise.all([without.close(), withRows.close()]);
  }
}

// `node dist/tests/bench/seen.js`: this part alone, with a fleet of its own.
await runAlone(import.meta.url, seenRun);
