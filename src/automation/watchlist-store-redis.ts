/**
 * The watchlists in Redis (`redis_url`), so that every server and worker of a team sees the same
 * ones: the hash `oas:watchlists`, name -> the watchlist as JSON (its runs inside). A change is a
 * compare-and-swap in one Lua script (watchlist-store.ts `update`); a Redis that does not answer
 * is an error, never "no watchlists".
 */
import type { Redis } from 'ioredis';
import { updateBySwap, type SwapBackend, type WatchlistStore } from './watchlist-store.js';
import type { Watchlist } from './watchlist.js';

export const WATCHLISTS_KEY = 'oas:watchlists';

/** Replaces field ARGV[1] with ARGV[3] only when it holds ARGV[2]. */
const SWAP = `if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) return 1 end return 0`;

export function redisWatchlists(redis: Redis): WatchlistStore {
  const backend: SwapBackend = {
    read: async (name) => (await redis.hget(WATCHLISTS_KEY, name)) ?? undefined,
    swap: async (name, before, after) => (await redis.eval(SWAP, 1, WATCHLISTS_KEY, name, before, after)) === 1,
  };
  return {
    add: async (watchlist) => (await redis.hsetnx(WATCHLISTS_KEY, watchlist.name, JSON.stringify(watchlist))) === 1,
    async get(name) {
      const text = await backend.read(name);
      return text === undefined ? undefined : (JSON.parse(text) as Watchlist);
    },
    async list() {
      const all = (await redis.hvals(WATCHLISTS_KEY)).map((text) => JSON.parse(text) as Watchlist);
      return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    remove: async (name) => (await redis.hdel(WATCHLISTS_KEY, name)) === 1,
    update: (name, change) => updateBySwap(backend, name, change),
  };
}
