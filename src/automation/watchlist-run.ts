/**
 * One run of a watchlist (issue 36), in three steps that any process may take and that survive a
 * process dying between them:
 *
 * 1. claim: the run is written into the watchlist, in one compare-and-swap, only when the
 *    caller's condition holds on what is stored (due and unclaimed; this interval not run yet);
 * 2. start: an ordinary analysis of the watchlist's text and engines (in the history, with the
 *    quotas and the fair share of its owner, who starts it), asking the engines again
 *    (`ignore_cache`), marked with the watchlist's name; its id goes into the run;
 * 3. finish, once the analysis is complete: compared with the run before (watchlist-compare.ts),
 *    the changes stored in the run in one compare-and-swap that only the first finisher wins, and
 *    that one alone fires `watchlist.changed` (never for the baseline, nor for a run without
 *    changes).
 */
import { randomUUID } from 'node:crypto';
import type { AnalysisRequest } from '../analysis/request.js';
import type { AnalysisService } from '../analysis/service.js';
import type { Catalog } from '../engine/catalog.js';
import type { Observable } from '../observables/types.js';
import type { AnalysisOrigin } from '../store/analysis-store.js';
import type { EventSink } from './events.js';
import { compareRuns } from './watchlist-compare.js';
import type { WatchlistStore } from './watchlist-store.js';
import { MAX_CHANGES, MAX_RUNS, previousDone, type Watchlist, type WatchlistRun } from './watchlist.js';

export interface RunServices {
  store: WatchlistStore;
  analyses: Pick<AnalysisService, 'start' | 'prepareWith' | 'get' | 'storedResults'>;
  /** The catalog in effect (read at each step: a reload replaces it). */
  catalog(): Catalog;
  events: EventSink;
  /** The link of an analysis in an event (a path, or absolute with the webhooks' public_url). */
  linkOf(analysisId: string): string;
  now(): number;
  /** `server` for `oas serve` (with Redis its analyses are queue jobs), `cli` for `oas watch run`. */
  origin: AnalysisOrigin;
  /** How the text's observables are found (the server: off its thread). */
  extract(text: string): Promise<Observable[]>;
}

export interface Claim {
  trigger: WatchlistRun['trigger'];
  /** The interval a scheduled run is for (ms since the epoch). */
  scheduledFor?: number;
  /** Whether the run may be claimed, on the watchlist as stored (default: always). */
  when?: (watchlist: Watchlist) => boolean;
}

/** Step 1: the run written into the watchlist, or undefined (unknown name, or `when` said no). */
export async function claimRun(services: Pick<RunServices, 'store' | 'now'>, name: string, claim: Claim): Promise<{ watchlist: Watchlist; run: WatchlistRun } | undefined> {
  const run: WatchlistRun = {
    id: randomUUID(),
    analysis_id: null,
    at: new Date(services.now()).toISOString(),
    trigger: claim.trigger,
    ...(claim.scheduledFor !== undefined ? { scheduled_for: new Date(claim.scheduledFor).toISOString() } : {}),
    status: 'running',
    baseline: false,
    changes: [],
  };
  const watchlist = await services.store.update(name, (current) => {
    if (claim.when && !claim.when(current)) return undefined;
    return { ...current, last_run: run.at, runs: [run, ...current.runs].slice(0, MAX_RUNS) };
  });
  return watchlist ? { watchlist, run } : undefined;
}

/** Changes one run of a stored watchlist (undefined: the watchlist or the run is gone, or `change` left it). */
export function updateRun(store: WatchlistStore, name: string, runId: string, change: (run: WatchlistRun, watchlist: Watchlist) => WatchlistRun | undefined) {
  return store.update(name, (current) => {
    const index = current.runs.findIndex((run) => run.id === runId);
    if (index === -1) return undefined;
    const next = change(current.runs[index]!, current);
    if (next === undefined) return undefined;
    const runs = [...current.runs];
    runs[index] = next;
    return { ...current, runs };
  });
}

/** The analysis request of a run: the owner starts it, the engines are asked again. */
export function requestOf(watchlist: Watchlist): AnalysisRequest {
  return {
    text: watchlist.text,
    engines: watchlist.engines,
    ignore_cache: true,
    tlp: watchlist.tlp,
    pap: watchlist.pap,
    started_by: watchlist.owner,
    watchlist: watchlist.name,
  };
}

/**
 * Step 2: the run's analysis started and its id written into the run. An analysis that cannot
 * start (an engine or set removed from the configuration since, too many observables) fails the
 * run with its reason; an unexpected error (Redis gone) fails it too, and is thrown.
 */
export async function startRun(services: RunServices, watchlist: Watchlist, run: WatchlistRun): Promise<WatchlistRun> {
  let analysisId: string;
  try {
    const request = requestOf(watchlist);
    const prepared = await services.analyses.prepareWith(request, services.extract);
    analysisId = (await services.analyses.start(request, prepared, services.origin)).id;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    await failRun(services.store, watchlist.name, run.id, reason).catch(() => undefined);
    throw error;
  }
  const stored = await updateRun(services.store, watchlist.name, run.id, (current) => ({ ...current, analysis_id: analysisId }));
  return stored?.runs.find((r) => r.id === run.id) ?? { ...run, analysis_id: analysisId };
}

/** A run that could not run: `failed`, with its reason. */
export function failRun(store: WatchlistStore, name: string, runId: string, reason: string) {
  return updateRun(store, name, runId, (current) => (current.status === 'running' ? { ...current, status: 'failed', error: reason.slice(0, 300) } : undefined));
}

/**
 * Step 3, once its analysis is complete: the changes since the run before, written once; the
 * finisher that wrote them fires `watchlist.changed` when there are some. Returns the run as
 * stored (undefined when the watchlist or the run is gone).
 */
export async function finishRun(services: RunServices, name: string, runId: string): Promise<WatchlistRun | undefined> {
  const watchlist = await services.store.get(name);
  const run = watchlist?.runs.find((r) => r.id === runId);
  if (!watchlist || !run || run.analysis_id === null) return run;
  if (run.status !== 'running') return run;
  const header = await services.analyses.get(run.analysis_id);
  if (!header) return (await failRun(services.store, name, runId, `its analysis ${run.analysis_id} is gone`))?.runs.find((r) => r.id === runId);
  const previous = previousDone(watchlist, runId);
  const previousHeader = previous?.analysis_id ? await services.analyses.get(previous.analysis_id) : undefined;
  const all = previousHeader ? await compareRuns(services.analyses.storedResults(previousHeader), services.analyses.storedResults(header), services.catalog()) : [];
  const changes = all.slice(0, MAX_CHANGES);
  const more = all.length - changes.length;
  const baseline = previousHeader === undefined;
  let won = false;
  const stored = await updateRun(services.store, name, runId, (current) => {
    won = current.status === 'running'; // decided again on each try, on what is stored
    if (!won) return undefined;
    return { ...current, status: 'done', baseline, changes, ...(more > 0 ? { more_changes: more } : {}) };
  });
  const done = stored?.runs.find((r) => r.id === runId);
  if (won && done && !baseline && changes.length > 0) {
    services.events.emit({
      type: 'watchlist.changed',
      timestamp: new Date(services.now()).toISOString(),
      analysis: { id: header.id, tlp: header.tlp },
      data: {
        watchlist: name,
        analysis_id: header.id,
        link: services.linkOf(header.id),
        previous_analysis_id: previousHeader!.id,
        changes,
        ...(more > 0 ? { more_changes: more } : {}),
      },
    });
  }
  return done ?? run;
}
