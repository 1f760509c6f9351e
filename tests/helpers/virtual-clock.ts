/** A quota's clock for tests: no real waiting. */
import type { Clock } from '../../src/runner/quota.js';

/**
 * Time passes only when someone sleeps, once everything that could run at that time has run
 * (the sleep ends on the next turn of the event loop). `sleeps` lists every wait asked for.
 */
export function virtualClock(): Clock & { sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: (ms) => new Promise((resolve) => {
      sleeps.push(ms);
      setImmediate(() => {
        now += ms;
        resolve();
      });
    }),
  };
}
