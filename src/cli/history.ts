/**
 * `oas history VALUE [--limit N] [--json]` (issue 38): the analyses that held an observable,
 * newest first, with its verdict in each and the link to its results, read where the team's
 * analyses are (the SQLite file of data_dir, or Redis with redis_url). The value is written as for
 * `oas analyze` (defanged or not); what comes back is written inert.
 */
import { resultsLink } from '../automation/links.js';
import { inertLine, jsonInert } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';
import { withTeamApp, type TeamAppOptions } from './team-app.js';

export interface HistoryCommandOptions extends TeamAppOptions {
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
  // The analyses the servers keep (the SQLite file of data_dir, or Redis).
  return withTeamApp(options, async (app) => {
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
  });
}
