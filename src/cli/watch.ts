/**
 * `oas watch` (issue 36): the team's watchlists from a terminal, where the server keeps them (the
 * SQLite file of data_dir, or Redis with redis_url): `add NAME --every 6h [--engines ...] TEXT|--file
 * PATH` (its baseline runs here and now), `list`, `show NAME` (its runs and what changed), `run NAME`
 * (now, here, to its end) and `remove NAME`. `oas serve` runs them on schedule. Errors are one
 * line, exit 2 for bad input; what comes from outside (observables, reasons) is written inert.
 */
import type { App } from '../app.js';
import type { WatchlistService } from '../automation/watchlist-service.js';
import type { WatchlistStore } from '../automation/watchlist-store.js';
import { checkName, type Watchlist, type WatchlistRun } from '../automation/watchlist.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { openAuditLog, osUser, type AuditAction, type AuditLog } from '../fs/audit-log.js';
import { USER_NAME } from '../store/users.js';
import { inertColumns, inertLine, jsonInert } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';
import { engineNames } from './output.js';

export interface WatchOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  every?: string;
  engines?: string;
  set?: string;
  file?: string[];
  column?: string[];
  tlp?: string;
  pap?: string;
  owner?: string;
  json?: boolean;
}

export type WatchAction = 'add' | 'list' | 'show' | 'run' | 'remove';

export async function watchCommand(action: WatchAction, name: string | undefined, words: string[], options: WatchOptions): Promise<number> {
  if (action !== 'list') {
    if (name === undefined || name === '') throw new UsageError(`give the watchlist's name: oas watch ${action} NAME`);
    checkName(name);
  }
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const settings = { file: options.config, flags };
  if (action === 'add' || action === 'run') return runHere(action, name!, words, options, settings);
  return readOrRemove(action, name, options, settings);
}

type Settings = { file: string | undefined; flags: Partial<Config> };

/** `add` and `run`: the whole app (catalog, runner), its analyses where the team's are. */
async function runHere(action: 'add' | 'run', name: string, words: string[], options: WatchOptions, settings: Settings): Promise<number> {
  if (action === 'add') checkAddOptions(options, words);
  const { createApp } = await import('../app.js');
  const { config } = loadConfig(settings);
  // With Redis: the analyses go where the servers' are (Redis), and run in this process.
  const app = await createApp(settings, { role: config.redis_url ? 'worker' : 'cli' });
  const audit = auditOf(app.config);
  try {
    await app.scale?.link.whenReady(5_000);
    const { watchlistsOf, closeWatchlists } = await import('../automation/watchlists-app.js');
    const service = watchlistsOf(app, { origin: 'cli', pollMs: { first: 50, max: 500 } });
    try {
      return action === 'add' ? await add(app, service, name, words, options, audit) : await runNow(service, name, options, audit);
    } finally {
      await closeWatchlists(app);
    }
  } finally {
    await app.close();
  }
}

function checkAddOptions(options: WatchOptions, words: string[]): void {
  if (options.every === undefined) throw new UsageError('--every is required: how often to run it, e.g. --every 6h (at least 5m)');
  if ((options.file ?? []).length === 0 && words.join(' ').trim() === '') throw new UsageError('give the observables to watch: oas watch add NAME --every 6h TEXT, or --file PATH');
  if ((options.column ?? []).length > 0 && (options.file ?? []).length === 0) throw new UsageError('--column chooses the columns of a CSV given with --file');
  if (options.owner !== undefined && !USER_NAME.test(options.owner)) throw new UsageError(`--owner must be a user's name: letters, digits and . _ @ + - (at most 128), starting with a letter or digit`);
}

async function add(app: App, service: WatchlistService, name: string, words: string[], options: WatchOptions, audit: AuditLog): Promise<number> {
  const paths = options.file ?? [];
  let text = words.join(' ');
  if (paths.length > 0) {
    // The files' observables, as `oas analyze --file` reads them, kept as text: one per line.
    const { readInputFiles } = await import('./files-in.js');
    const files = await readInputFiles(paths, app.config, { columns: options.column?.length ? options.column : undefined });
    text = [text, ...files.flatMap((file) => file.observables.map((o) => o.value))].filter((line) => line.trim() !== '').join('\n');
    if (text === '') throw new UsageError(`no observable found in ${paths.join(', ')}`);
  }
  const engines = engineNames(options);
  const body = { name, text, every: options.every!, ...(engines ? { engines } : {}), ...(options.tlp !== undefined ? { tlp: options.tlp } : {}), ...(options.pap !== undefined ? { pap: options.pap } : {}) };
  const owner = options.owner ?? 'cli';
  let added;
  try {
    added = await service.add(body, owner);
  } catch (error) {
    write(audit, 'watchlist_added', name, 'failure', { reason: error instanceof Error ? error.message : String(error) });
    throw error;
  }
  const { watchlist, baseline } = added;
  write(audit, 'watchlist_added', name, 'success', { every: watchlist.every, engines: watchlist.engines, tlp: watchlist.tlp, pap: watchlist.pap, owner, analysis_id: baseline?.run.analysis_id ?? undefined });
  process.stderr.write(`oas: watchlist ${name} added (every ${watchlist.every}, TLP:${watchlist.tlp}, PAP:${watchlist.pap}); running its baseline now\n`);
  const done = baseline ? await baseline.finished : undefined;
  if (options.json) process.stdout.write(`${jsonInert(JSON.stringify((await service.get(name)) ?? watchlist, null, 2))}\n`);
  else if (done) process.stderr.write(`oas: baseline done (analysis ${done.analysis_id}); oas serve runs it every ${watchlist.every} and oas watch show ${name} lists what changes\n`);
  return EXIT_OK;
}

async function runNow(service: WatchlistService, name: string, options: WatchOptions, audit: AuditLog): Promise<number> {
  let started;
  try {
    started = await service.run(name);
  } catch (error) {
    write(audit, 'watchlist_run', name, 'failure', { reason: error instanceof Error ? error.message : String(error) });
    throw error;
  }
  if (!started) {
    write(audit, 'watchlist_run', name, 'failure', { reason: 'watchlist not found' });
    throw new UsageError(unknown(name));
  }
  write(audit, 'watchlist_run', name, 'success', { analysis_id: started.run.analysis_id ?? undefined });
  process.stderr.write(`oas: running watchlist ${name} (analysis ${started.run.analysis_id})\n`);
  const run = (await started.finished) ?? started.run;
  if (options.json) process.stdout.write(`${jsonInert(JSON.stringify(run, null, 2))}\n`);
  else process.stdout.write(runLines(run).join('\n') + '\n');
  return EXIT_OK;
}

/** `list`, `show`, `remove`: the store alone (and with Redis the job schedulers, for `remove`). */
async function readOrRemove(action: 'list' | 'show' | 'remove', name: string | undefined, options: WatchOptions, settings: Settings): Promise<number> {
  const { config } = loadConfig(settings);
  const opened = await openStore(config);
  try {
    const { store } = opened;
    if (action === 'list') {
      const all = await store.list();
      if (options.json) process.stdout.write(`${jsonInert(JSON.stringify(all, null, 2))}\n`);
      else process.stdout.write(all.length === 0 ? 'no watchlist yet: oas watch add NAME --every 6h --engines ... TEXT\n' : `${listTable(all)}\n`);
      return EXIT_OK;
    }
    if (action === 'show') {
      const watchlist = await store.get(name!);
      if (!watchlist) throw new UsageError(unknown(name!));
      process.stdout.write(options.json ? `${jsonInert(JSON.stringify(watchlist, null, 2))}\n` : `${showText(watchlist)}\n`);
      return EXIT_OK;
    }
    const audit = auditOf(config);
    if (!(await store.remove(name!))) {
      write(audit, 'watchlist_removed', name!, 'failure', { reason: 'watchlist not found' });
      throw new UsageError(unknown(name!));
    }
    if (opened.link) {
      const { queueSchedule } = await import('../automation/watchlist-queue.js');
      const schedule = queueSchedule(opened.link);
      try {
        await schedule.removed(name!);
      } finally {
        await schedule.close();
      }
    }
    write(audit, 'watchlist_removed', name!, 'success', {});
    process.stderr.write(`oas: watchlist ${name} removed (its runs' analyses stay in the history)\n`);
    return EXIT_OK;
  } finally {
    await opened.close();
  }
}

/** The store where the server keeps watchlists: Redis (answering within 5 s) or the SQLite file. */
async function openStore(config: Config): Promise<{ store: WatchlistStore; link?: import('../scale/redis.js').RedisLink; close(): Promise<void> }> {
  if (config.redis_url) {
    const [{ openRedis }, { redisWatchlists }] = await Promise.all([import('../scale/redis.js'), import('../automation/watchlist-store-redis.js')]);
    const link = openRedis(config.redis_url);
    try {
      await link.whenReady(5_000);
      await (await import('../scale/redis-schema.js')).checkRedisSchema(link.commands, link.label);
    } catch (error) {
      await link.close();
      throw error;
    }
    return { store: redisWatchlists(link.commands), link, close: () => link.close() };
  }
  const [{ openStorage }, { sqliteWatchlists }] = await Promise.all([import('../store/storage.js'), import('../automation/watchlist-store.js')]);
  const storage = await openStorage(config.data_dir);
  return { store: sqliteWatchlists(storage.analysesTable), close: () => storage.close() };
}

/** The audit trail of the configuration's audit_log, as `oas users` opens it. */
function auditOf(config: Config): AuditLog {
  return openAuditLog(config.audit_log, { prepare: false });
}

/** A line of the audit trail: `client` cli, the account that ran the command, the watchlist. */
function write(log: AuditLog, action: AuditAction, name: string, outcome: 'success' | 'failure', fields: Record<string, string | readonly string[] | undefined>): void {
  log.write({ action, outcome, user: null, client: 'cli', os_user: osUser(), watchlist: name, ...fields });
}

function unknown(name: string): string {
  return `no watchlist named ${name} (oas watch list shows them)`;
}

function listTable(all: readonly Watchlist[]): string {
  const rows = all.map((w) => {
    const latest = w.runs[0];
    const state = !latest ? 'not run yet' : latest.status === 'running' ? 'running' : latest.status === 'failed' ? 'failed' : latest.baseline ? 'baseline'
      : latest.changes.length === 0 ? 'no change' : `${latest.changes.length + (latest.more_changes ?? 0)} change(s)`;
    return [w.name, w.every, w.last_run ?? 'never', state, w.owner, `TLP:${w.tlp} PAP:${w.pap}`, w.engines.join(',')];
  });
  return inertColumns([['Name', 'Every', 'Last run', 'Last result', 'Owner', 'Marking', 'Engines'], ...rows]);
}

/** A change in one line: `example.com  verdict: clean -> malicious`. */
function changeLine(change: WatchlistRun['changes'][number]): string {
  const what = change.kind === 'verdict' ? 'verdict' : change.kind === 'reason' ? 'new reason' : `${change.engine} has data`;
  const from = change.before === null ? '' : `${change.before} -> `;
  return `  ${inertLine(change.observable)}  ${inertLine(`${what}: ${from}${change.after}`)}`;
}

function runLines(run: WatchlistRun): string[] {
  const head = `${run.at}  ${run.trigger}  analysis ${run.analysis_id ?? '(none)'}  ${run.status === 'running' ? 'running'
    : run.status === 'failed' ? `failed: ${run.error ?? ''}`
      : run.baseline ? 'baseline (compared with nothing)'
        : run.changes.length === 0 ? 'no change' : `${run.changes.length + (run.more_changes ?? 0)} change(s)`}`;
  return [inertLine(head), ...run.changes.map(changeLine), ...(run.more_changes ? [`  ... and ${run.more_changes} more`] : [])];
}

function showText(w: Watchlist): string {
  const text = w.text.replace(/\s+/g, ' ');
  const head = [
    `Watchlist ${w.name}: every ${w.every}, TLP:${w.tlp} PAP:${w.pap}, owner ${w.owner}, added ${w.created}`,
    `Engines: ${w.engines.join(', ')}`,
    `Watches: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`,
    w.runs.length === 0 ? 'No run yet.' : `Runs (newest first, ${w.runs.length}):`,
  ].map(inertLine);
  return [...head, ...w.runs.flatMap(runLines)].join('\n');
}
