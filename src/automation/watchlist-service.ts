/**
 * The watchlists as the API, the CLI and the page use them (issue 36): add (checked as an analysis
 * would be, then its baseline run at once), list, show, remove, run now; and following each run's
 * analysis to its end, here, to compare it and fire its event (watchlist-run.ts). What runs them
 * on schedule is beside it: a timer in the server (watchlist-timer.ts) or, with `redis_url`, a
 * BullMQ job scheduler (watchlist-queue.ts), which `hooks` keeps in step as watchlists come and go.
 */
import { InputError } from '../analysis/request.js';
import type { AnalysisService } from '../analysis/service.js';
import { claimRun, failRun, finishRun, startRun, type Claim, type RunServices } from './watchlist-run.js';
import { checkName, parseEvery, parseWatchlistInput, type Watchlist, type WatchlistInput, type WatchlistRun } from './watchlist.js';

/** A name taken already (HTTP 409, CLI exit 2). */
export class WatchlistExistsError extends InputError {
  override name = 'WatchlistExistsError';
}

/** Told when a watchlist is added or removed (with `redis_url`: its job scheduler). */
export interface ScheduleHooks {
  added(watchlist: Watchlist): Promise<void>;
  removed(name: string): Promise<void>;
}

export interface WatchlistServiceOptions {
  services: RunServices & { analyses: Pick<AnalysisService, 'isComplete'> };
  /** The engines of a watchlist that names none: the catalog's defaults (read at add). */
  defaultEngines(): string[];
  hooks?: ScheduleHooks | undefined;
  /** Told of each run once it is compared (the server's log; tests). */
  onRunDone?: ((name: string, run: WatchlistRun) => void) | undefined;
  /** The real-time wait between two checks of a run's analysis (tests shorten it). */
  pollMs?: { first: number; max: number } | undefined;
}

/** A run claimed and started, and its end (compared, its event fired) once its analysis completes. */
export interface StartedRun {
  run: WatchlistRun;
  finished: Promise<WatchlistRun | undefined>;
}

/** A run claimed but without an analysis this long is abandoned (its process stopped in between). */
const UNSTARTED_MS = 10 * 60_000;

export class WatchlistService {
  /** Runs followed here, by run id. */
  private readonly following = new Map<string, Promise<WatchlistRun | undefined>>();
  private closed = false;

  constructor(private readonly options: WatchlistServiceOptions) {}

  private get services(): WatchlistServiceOptions['services'] {
    return this.options.services;
  }

  /**
   * Adds a watchlist owned by `owner` (a body as the API takes it, or the CLI's fields), checked as
   * an analysis would be (observables, engines, TLP and PAP), and starts its baseline run.
   */
  async add(body: unknown, owner: string): Promise<{ watchlist: Watchlist; baseline: StartedRun | undefined }> {
    const input: WatchlistInput = parseWatchlistInput(body);
    const every = input.every.trim().toLowerCase();
    const engines = input.engines ? [...input.engines] : this.options.defaultEngines();
    const request = { text: input.text, engines, tlp: input.tlp, pap: input.pap };
    const prepared = await this.services.analyses.prepareWith(request, this.services.extract);
    const watchlist: Watchlist = {
      name: input.name,
      text: input.text.trim(),
      engines,
      every,
      tlp: prepared.marking.tlp,
      pap: prepared.marking.pap,
      owner,
      created: new Date(this.services.now()).toISOString(),
      last_run: null,
      runs: [],
    };
    if (!(await this.services.store.add(watchlist))) throw new WatchlistExistsError(`a watchlist named ${input.name} exists already (oas watch remove ${input.name} first to replace it)`);
    await this.options.hooks?.added(watchlist);
    // The baseline: unless something (the schedule, another process) claimed a first run already.
    const baseline = await this.run(watchlist.name, { trigger: 'added', when: (current) => current.runs.length === 0 });
    return { watchlist: (await this.services.store.get(watchlist.name)) ?? watchlist, baseline };
  }

  list(): Promise<Watchlist[]> {
    return this.services.store.list();
  }

  get(name: string): Promise<Watchlist | undefined> {
    return this.services.store.get(name);
  }

  /** Removes it (its runs' analyses stay in the history); false for an unknown name. */
  async remove(name: string): Promise<boolean> {
    checkName(name);
    const removed = await this.services.store.remove(name);
    if (removed) await this.options.hooks?.removed(name);
    return removed;
  }

  /**
   * Claims a run (see watchlist-run.ts `claimRun`), starts its analysis and follows it here.
   * Undefined for an unknown watchlist or a claim refused. An analysis that cannot start fails the
   * run and throws (an InputError for a cause the caller can fix).
   */
  async run(name: string, claim: Claim = { trigger: 'manual' }): Promise<StartedRun | undefined> {
    const claimed = await claimRun(this.services, name, claim);
    if (!claimed) return undefined;
    const run = await startRun(this.services, claimed.watchlist, claimed.run);
    return { run, finished: this.follow(name, run.id, run.analysis_id!) };
  }

  /**
   * Picks up the runs left running (a process stopped while its run's analysis ran, or before it
   * started one): follows those with an analysis, fails those without one for UNSTARTED_MS.
   * `oas serve` calls it at start and now and then. Returns how many it took up.
   */
  async recover(): Promise<number> {
    let taken = 0;
    for (const watchlist of await this.services.store.list()) {
      for (const run of watchlist.runs) {
        if (run.status !== 'running' || this.following.has(run.id)) continue;
        if (run.analysis_id !== null) {
          void this.follow(watchlist.name, run.id, run.analysis_id);
          taken++;
        } else if (this.services.now() - Date.parse(run.at) > UNSTARTED_MS) {
          await failRun(this.services.store, watchlist.name, run.id, 'its analysis never started (the process that claimed the run stopped)');
          taken++;
        }
      }
    }
    return taken;
  }

  /** Resolves when every run followed here is compared (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.following.size > 0) await Promise.allSettled([...this.following.values()]);
  }

  /** Stops following runs (another process, or this one's next start, finishes them). */
  close(): void {
    this.closed = true;
    for (const wake of this.pauses) wake();
  }

  /** Waits between two checks; ended at once by `close`. */
  private readonly pauses = new Set<() => void>();
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pauses.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pauses.add(wake);
    });
  }

  /** Waits (in real time) for the run's analysis to complete, then finishes the run. */
  private follow(name: string, runId: string, analysisId: string): Promise<WatchlistRun | undefined> {
    const known = this.following.get(runId);
    if (known) return known;
    const poll = this.options.pollMs ?? { first: 100, max: 2_000 };
    const work = (async () => {
      for (let wait = poll.first; !this.closed; wait = Math.min(poll.max, Math.ceil(wait * 1.5))) {
        try {
          // Unknown (undefined): finishRun fails the run, its analysis being gone.
          if ((await this.services.analyses.isComplete(analysisId)) !== false) {
            const done = await finishRun(this.services, name, runId);
            if (done && done.status !== 'running') this.tellDone(name, done);
            return done;
          }
        } catch {
          // The store does not answer now (Redis gone): ask again.
        }
        await this.pause(wait);
      }
      return undefined;
    })().finally(() => this.following.delete(runId));
    this.following.set(runId, work);
    return work;
  }

  private tellDone(name: string, run: WatchlistRun): void {
    try {
      this.options.onRunDone?.(name, run);
    } catch {
      // a listener never fails a run
    }
  }
}

/** The due time check of the timer and the queue: whether `watchlist` may run at `now` (a run of its own running less than one interval ago holds it). */
export function busy(watchlist: Watchlist, now: number): boolean {
  const latest = watchlist.runs[0];
  return latest !== undefined && latest.status === 'running' && now - Date.parse(latest.at) < parseEvery(watchlist.every);
}
