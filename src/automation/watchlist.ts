/**
 * What a watchlist is (issue 36): observables analysed again on a schedule, each run compared with
 * the one before so that the team hears when something changes (a domain turned malicious, a new
 * reason, an engine that now knows the address). This module holds its shape as the API, the CLI
 * and the page show it, and the checks of what a caller gives (a name, an interval, the body of
 * `POST {prefix}watchlists`); storing, running and comparing live beside it
 * (watchlist-store.ts, watchlist-run.ts, watchlist-compare.ts).
 */
import * as v from 'valibot';
import { InputError } from '../analysis/request.js';
import type { WatchlistRunView, WatchlistView } from '../view/types.js';

/** A name: short, letters, digits, `_`, `.`, `-`, starting with a letter or digit (it goes in paths). */
export const WATCHLIST_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The shortest interval: a watchlist asks every engine again, without the cache. */
export const MIN_EVERY_MS = 5 * 60_000;
/** The longest: 90 days. */
export const MAX_EVERY_MS = 90 * 24 * 3_600_000;

/** Runs kept per watchlist (the newest); older ones stay in the history as analyses. */
export const MAX_RUNS = 50;
/** Changes kept per run (and sent in its event); past it, `more_changes` counts the rest. */
export const MAX_CHANGES = 200;

/** The JSON shapes (the API's and the page's): src/view/types.d.ts. */
export type { WatchlistView as Watchlist, WatchlistRunView as WatchlistRun, WatchlistChangeView as WatchlistChange } from '../view/types.js';

/** What a caller gives to add one (`POST {prefix}watchlists`, `oas watch add`). */
export interface WatchlistInput {
  name: string;
  text: string;
  engines?: readonly string[] | undefined;
  every: string;
  tlp?: string | undefined;
  pap?: string | undefined;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * The interval in milliseconds: one or more `<number><unit>`, units `s`, `m`, `h`, `d`, `w`
 * (`6h`, `30m`, `1d`, `1h30m`); at least 5 minutes, at most 90 days. Anything else is an
 * InputError saying what is allowed.
 */
export function parseEvery(every: string): number {
  const text = every.trim().toLowerCase();
  const parts = /^(?:\d{1,6}[smhdw])+$/.test(text) ? text.match(/\d+[smhdw]/g)! : undefined;
  if (!parts) throw new InputError(`invalid "every" ${JSON.stringify(every.slice(0, 40))}: give an interval such as 30m, 6h or 1d (units s, m, h, d, w; at least 5m)`);
  const ms = parts.reduce((sum, part) => sum + Number(part.slice(0, -1)) * UNITS[part.slice(-1)]!, 0);
  if (ms < MIN_EVERY_MS) throw new InputError(`"every" must be at least 5m (a watchlist asks every engine again each time), not ${every.trim()}`);
  if (ms > MAX_EVERY_MS) throw new InputError(`"every" must be at most 90d, not ${every.trim()}`);
  return ms;
}

/** A name as WATCHLIST_NAME wants it, or an InputError. */
export function checkName(name: string): string {
  if (!WATCHLIST_NAME.test(name)) {
    throw new InputError(`invalid watchlist name ${JSON.stringify(name.slice(0, 70))}: 1 to 64 letters, digits and _ . - , starting with a letter or digit`);
  }
  return name;
}

const MESSAGES = {
  name: '"name" is required: 1 to 64 letters, digits and _ . - , starting with a letter or digit',
  text: '"text" is required and must be a string holding the observables to watch',
  every: '"every" is required: an interval such as 30m, 6h or 1d (at least 5m)',
};

/**
 * The body of `POST {prefix}watchlists`: the watchlist's own fields (`text` holding the
 * observables). `owner`, `created`, `last_run` and `runs` are the server's: refused when given.
 */
export const watchlistInputSchema = v.strictObject({
  name: v.pipe(v.string(MESSAGES.name), v.regex(WATCHLIST_NAME, '"name" must be 1 to 64 letters, digits and _ . - , starting with a letter or digit')),
  text: v.pipe(v.string(MESSAGES.text), v.trim(), v.minLength(1, '"text" must not be empty: give the domains, IP addresses, URLs, hashes or e-mail addresses to watch')),
  engines: v.optional(v.pipe(
    v.array(v.string('"engines" must be an array of engine names (strings)'), '"engines" must be an array of engine ids, aliases or @sets'),
    v.minLength(1, '"engines" must name at least one engine (or be left out for the default engines)'),
  )),
  every: v.pipe(v.string(MESSAGES.every), v.minLength(1, MESSAGES.every)),
  tlp: v.optional(v.string('"tlp" must be a string: CLEAR, GREEN, AMBER, AMBER+STRICT or RED')),
  pap: v.optional(v.string('"pap" must be a string: CLEAR, GREEN, AMBER or RED')),
}, (issue) => (issue.expected === 'never'
  ? `unknown field ${JSON.stringify(String(issue.path?.[issue.path.length - 1]?.key ?? ''))} in a watchlist: it takes name, text, engines, every, tlp and pap`
  : 'a watchlist must be a JSON object with "name", "text", "every" and optionally "engines", "tlp", "pap"'));

/** A body as a WatchlistInput, or an InputError naming the first problem. */
export function parseWatchlistInput(body: unknown): WatchlistInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InputError('request body must be a JSON object with "name", "text", "every" and optionally "engines", "tlp", "pap"');
  }
  for (const key of ['name', 'text', 'every'] as const) {
    if (!(key in body)) throw new InputError(MESSAGES[key]);
  }
  const parsed = v.safeParse(watchlistInputSchema, body);
  if (!parsed.success) throw new InputError(parsed.issues[0].message);
  parseEvery(parsed.output.every);
  return parsed.output;
}

/**
 * The run a run is compared with: the latest one started before it that completed (runs are kept
 * newest first). Undefined when there is none: the run is then the baseline.
 */
export function previousDone(watchlist: Pick<WatchlistView, 'runs'>, runId: string): WatchlistRunView | undefined {
  const index = watchlist.runs.findIndex((run) => run.id === runId);
  return watchlist.runs.slice(index === -1 ? 0 : index + 1).find((run) => run.status === 'done' && run.analysis_id !== null);
}
