/**
 * What the watchlists' tests share (issue 36): a clock whose time moves only when the test says so
 * (the schedule's sleeps end then), a recording event sink, a PhishTank fake the test switches
 * between "not in the database" and "verified phish", and waiting for a watchlist's runs.
 */
import type { EventSink, OasEvent } from '../../src/automation/events.js';
import type { WatchlistStore } from '../../src/automation/watchlist-store.js';
import type { Watchlist } from '../../src/automation/watchlist.js';
import type { ScheduleClock } from '../../src/automation/watchlist-timer.js';
import type { FakeHttpServer } from '../fakes/http.js';

export const HOUR = 3_600_000;

/**
 * A clock at `start` whose time moves only by `advance`: each sleep ends once the time has passed
 * its end (on the next turn of the event loop after the advance). Nothing waits for real hours.
 */
export function steppedClock(start: number): ScheduleClock & { advance(ms: number): Promise<void>; sleepers(): number } {
  let now = start;
  const sleeping: { until: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms) => new Promise<void>((wake) => sleeping.push({ until: now + ms, wake })),
    sleepers: () => sleeping.length,
    advance: async (ms) => {
      now += ms;
      for (const sleeper of sleeping.filter((s) => s.until <= now)) {
        sleeping.splice(sleeping.indexOf(sleeper), 1);
        sleeper.wake();
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** A sink that keeps every event. */
export function recordingSink(): EventSink & { events: OasEvent[] } {
  const events: OasEvent[] = [];
  return { events, emit: (event) => void events.push(event) };
}

/** PhishTank (provider_17) answers for every URL: in its database as a verified phish, or not at all. */
export function phishTank(intel: FakeHttpServer, phish: boolean): void {
  intel.route('POST /phishtank', (req) => {
    const url = Buffer.from(new URLSearchParams(req.body).get('url') ?? '', 'base64').toString('utf8');
    return {
      json: {
        meta: { status: 'success' },
        results: phish
          ? { url, in_database: true, phish_id: 8841207, verified: true, verified_at: '2026-10-01T09:12:00+00:00', valid: true }
          : { url, in_database: false },
      },
    };
  });
}

/** Real-time waiting (bounded) until `watchlist` as stored satisfies `done`. */
export async function waitFor(store: WatchlistStore, name: string, done: (watchlist: Watchlist) => boolean, what: string, ms = 30_000): Promise<Watchlist> {
  const until = Date.now() + ms;
  for (;;) {
    const watchlist = await store.get(name);
    if (watchlist && done(watchlist)) return watchlist;
    if (Date.now() > until) throw new Error(`watchlist ${name}: ${what} did not happen within ${ms / 1000} s: ${JSON.stringify(watchlist?.runs.map((r) => [r.trigger, r.status, r.scheduled_for]))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
