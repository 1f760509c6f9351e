/**
 * `oas history VALUE [--limit N] [--json]` (issue 38): the analyses that held an observable,
 * newest first, with its verdict in each and the link to its results, read where the team's
 * analyses are (the SQLite file of data_dir, or Redis with redis_url). The value is written as for
 * `oas analyze` (defanged or not); what comes back is written inert.
 */
import type { Config } from '../config/schema.js';
import { resultsLink } from '../automation/links.js';
import { inertLine, jsonInert } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';

export interface HistoryCommandOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  limit?: string;
  json?: boolean;
}

/** Analyses listed when `--limit` is not given, and the most it may ask for. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

export async function historyCommand(value: string, options: HistoryCommandOptions): Promise<number> {
  if (value.trim() === '') throw new UsageError('give the observable: oas history VALUE (a domain, an IP, a URL, a hash, an e-mail address)');
  const limit = options.limit === undefined ? DEFAULT_LIMIT : /^\d{1,5}$/.test(options.limit.trim()) ? Number(options.limit) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT} (not "${options.limit}")`);
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const settings = { file: options.config, flags };
  const { loadConfig } = await import('../config/load.js');
  const { config } = loadConfig(settings);
  const { createApp } = await import('../app.js');
  // With Redis: the analyses the servers keep there.
  const app = await createApp(settings, { role: config.redis_url ? 'worker' : 'cli' });
  try {
    await app.scale?.link.whenReady(5_000);
    const { total, items } = await app.analyses.observableHistory(value, limit);
    const listed = items.map((item) => ({ analysis_id: item.analysis_id, created_at: item.at, verdict: item.verdict, link: resultsLink(app.config.public_url, item.analysis_id) }));
    if (options.json) {
      process.stdout.write(`${jsonInert(JSON.stringify({ value, total, items: listed }, null, 2))}\n`);
      return EXIT_OK;
    }
    const shown = inertLine(value.trim());
    if (total === 0) {
      process.stdout.write(`${shown}: no analysis of this store held it\n`);
      return EXIT_OK;
    }
    const lines = [`${shown}: held by ${total === 1 ? '1 analysis' : `${total} analyses`}${listed.length < total ? `, the newest ${listed.length} listed` : ''}, newest first`];
    const width = Math.max(...listed.map((item) => inertLine(item.verdict).length));
    for (const item of listed) lines.push(`  ${inertLine(item.created_at)}  ${inertLine(item.verdict).padEnd(width)}  ${inertLine(item.link)}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return EXIT_OK;
  } finally {
    await app.close();
  }
}
