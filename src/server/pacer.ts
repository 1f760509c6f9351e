/**
 * `oas serve` paces its analyses so that they never starve the HTTP surface (issue 33). Every
 * engine call's answer is work on the server's only thread (its parsing, its cache entry, its
 * row); with thousands of calls in flight, their answers came back in bursts that kept one turn of
 * the event loop busy for half a second and more, and a poll, a results read or a 400 waited for
 * each turn it needed.
 *
 * Each observable an analysis runs here is admitted by `pace` (src/analysis/launch.ts) and gives
 * its place back when it is done. At most `limit` observables run at once, and the limit follows
 * the event loop: a timer every SAMPLE_MS measures how late it fires; late by more than
 * `maxLagMs`, the limit shrinks (x0.7, down to `minLimit`), on time it grows again (by a
 * sixteenth, up to `maxLimit`). The analyses then use what the thread has to spare, and a request
 * is answered within a few short turns whatever they are doing. Observables waiting for a place
 * get it in the runner's fair order (src/runner/fair-queue.ts: across owners, then analyses): a
 * lookup never waits behind someone's bulk analysis for its admission either.
 */
import { FairQueue, type Holding, type Share } from '../runner/fair-queue.js';

export interface PacerOptions {
  /** The loop is late past this (ms): the limit shrinks. */
  maxLagMs?: number;
  /** Observables running at once: at first, and the bounds of the limit. */
  initialLimit?: number;
  minLimit?: number;
  maxLimit?: number;
}

export interface PacerStats {
  /** Observables admitted after waiting for a place. */
  waited: number;
  /** Waiting now. */
  waiting: number;
  /** Running now. */
  running: number;
  /** The limit now. */
  limit: number;
  /** How late the last timer fired (ms). */
  lagMs: number;
}

/** Called once the observable is done: its place goes to the next. */
export type Release = () => void;

export interface Pacer {
  /** A place for one observable of `share`: at once, or once one is free. */
  pace(share: Share): Release | Promise<Release>;
  stats(): PacerStats;
  /** Stops pacing: everything waiting starts, and so does everything after. */
  close(): void;
}

const SAMPLE_MS = 10;
const MAX_LAG_MS = 20;
const INITIAL_LIMIT = 256;
const MIN_LIMIT = 4;
const MAX_LIMIT = 4096;

export function createPacer(options: PacerOptions = {}): Pacer {
  const maxLag = options.maxLagMs ?? MAX_LAG_MS;
  const minLimit = options.minLimit ?? MIN_LIMIT;
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  let limit = options.initialLimit ?? INITIAL_LIMIT;
  const queue = new FairQueue<(release: Release) => void>();
  let running = 0;
  let waited = 0;
  let lag = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let expected = 0;

  const free = () => closed || running < Math.floor(limit);
  const releaseOf = (holding: Holding): Release => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      running--;
      queue.release(holding);
      admit();
      if (running === 0 && queue.size === 0) stopTimer();
    };
  };
  const admit = () => {
    while (queue.size > 0 && free()) {
      const next = queue.shift(true)!;
      running++;
      next.item(releaseOf(next.holding));
    }
  };
  const tick = () => {
    const now = performance.now();
    lag = Math.max(0, now - expected);
    expected = now + SAMPLE_MS;
    limit = lag > maxLag ? Math.max(minLimit, limit * 0.7) : Math.min(maxLimit, limit + Math.max(1, limit / 16));
    admit();
  };
  // The timer runs only while observables run or wait: an idle server has no wake-ups.
  const startTimer = () => {
    if (timer || closed) return;
    expected = performance.now() + SAMPLE_MS;
    timer = setInterval(tick, SAMPLE_MS);
    timer.unref();
  };
  const stopTimer = () => {
    clearInterval(timer);
    timer = undefined;
    lag = 0;
  };

  return {
    pace(share) {
      startTimer();
      if (queue.size === 0 && free()) {
        running++;
        return releaseOf(queue.take(share));
      }
      waited++;
      return new Promise<Release>((resolve) => queue.push(share, resolve));
    },
    stats: () => ({ waited, waiting: queue.size, running, limit: Math.floor(limit), lagMs: lag }),
    close() {
      closed = true;
      stopTimer();
      admit();
    },
  };
}
