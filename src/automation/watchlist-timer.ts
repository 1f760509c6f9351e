/**
 * The schedule of the watchlists without Redis (issue 36): a timer in `oas serve`. A watchlist is
 * due one interval (`every`) after its latest run started; at start, one whose run was missed
 * while the server was down is due, and runs once (not once per interval missed). The timer
 * sleeps until the next watchlist is due, at most a minute, so that one added by `oas watch add`
 * in another process is seen. Each due run is claimed in the store before it starts (a
 * compare-and-swap: `oas watch run` or a second process cannot make it run twice). The clock is
 * the caller's: tests give a virtual one and never wait for real hours.
 */
import type { WatchlistService } from './watchlist-service.js';
import { busy } from './watchlist-service.js';
import { parseEvery, type Watchlist } from './watchlist.js';

export interface ScheduleClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_CLOCK: ScheduleClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
};

/** The longest sleep: a watchlist added elsewhere is seen within it. */
export const POLL_MS = 60_000;

/** When `watchlist` is next due (ms since the epoch): one interval after its latest run; at once without any. */
export function nextDue(watchlist: Watchlist): number {
  return watchlist.last_run === null ? Number.NEGATIVE_INFINITY : Date.parse(watchlist.last_run) + parseEvery(watchlist.every);
}

/** Whether it is due at `now`, with no run of its own still running (see `busy`). */
export function isDue(watchlist: Watchlist, now: number): boolean {
  return nextDue(watchlist) <= now && !busy(watchlist, now);
}

export interface WatchlistTimer {
  /**
   * Claims and starts every watchlist due now (and returns their names); their comparisons follow
   * in the background (WatchlistService.idle waits for them).
   */
  runDue(): Promise<string[]>;
  /** Stops the timer (runs started go on to their end). */
  stop(): Promise<void>;
}

/**
 * Starts the timer: the runs left running picked up, then the due watchlists run at once and
 * again as each comes due. `onError` is told of a round that failed (the store not answering);
 * the next round tries again.
 */
export function startWatchlistTimer(service: WatchlistService, options: { clock?: ScheduleClock; onError?: (error: unknown) => void } = {}): WatchlistTimer {
  const clock = options.clock ?? REAL_CLOCK;
  let stopped = false;
  let wake: () => void = () => {};
  const stopping = new Promise<void>((resolve) => (wake = resolve));

  const runDue = async (): Promise<string[]> => {
    const now = clock.now();
    const started: string[] = [];
    for (const watchlist of await service.list()) {
      if (!isDue(watchlist, now)) continue;
      const scheduledFor = Math.max(nextDue(watchlist), Date.parse(watchlist.created) || now);
      try {
        const run = await service.run(watchlist.name, { trigger: 'schedule', scheduledFor, when: (current) => isDue(current, now) });
        if (run) started.push(watchlist.name);
      } catch (error) {
        options.onError?.(error); // this watchlist's run failed (its reason is in the run); the others go on
      }
    }
    return started;
  };

  const loop = (async () => {
    try {
      await service.recover();
    } catch (error) {
      options.onError?.(error);
    }
    while (!stopped) {
      let sleep = POLL_MS;
      try {
        await runDue();
        const now = clock.now();
        for (const watchlist of await service.list()) sleep = Math.min(sleep, Math.max(0, nextDue(watchlist) - now));
        // Now and then, runs another process left behind.
        await service.recover();
      } catch (error) {
        options.onError?.(error);
      }
      // A watchlist due now but still running its last run: look again in a while, not at once.
      await Promise.race([clock.sleep(Math.max(sleep, 1_000)), stopping]);
    }
  })();

  return {
    runDue,
    stop: async () => {
      stopped = true;
      wake();
      await loop;
    },
  };
}
