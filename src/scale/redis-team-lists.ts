/**
 * The team's lists (src/store/team-lists.ts: the allowlist's run-time entries, the analysts' marks)
 * in Redis with `redis_url`: the hashes `oas:allowlist` and `oas:marks`, key -> the item as JSON.
 * Every server, worker and command of the team reads the same hash; a Redis that does not answer
 * is an error, never an empty list.
 */
import type { Redis } from 'ioredis';
import type { TeamList, TeamListName } from '../store/team-lists.js';

export const teamListKey = (name: TeamListName) => `oas:${name}`;

export function redisTeamList<T>(redis: Redis, name: TeamListName): TeamList<T> {
  const key = teamListKey(name);
  return {
    async list() {
      const all = await redis.hgetall(key);
      return Object.keys(all).sort().map((field) => JSON.parse(all[field]!) as T);
    },
    async get(field) {
      const text = await redis.hget(key, field);
      return text === null ? undefined : (JSON.parse(text) as T);
    },
    put: async (field, item) => (await redis.hset(key, field, JSON.stringify(item))) === 0,
    remove: async (field) => (await redis.hdel(key, field)) === 1,
  };
}
