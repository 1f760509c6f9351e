/**
 * The schema version of the team's Redis (`redis_url`): the hash `oas:schema` (schema, oas: the
 * version of oas that recorded it, upgraded_at, upgraded_from). Schema 1 is the layout of
 * oas 0.1.0 (src/scale/redis-analyses.ts), which recorded none: a Redis without the hash (oas
 * 0.1.0's, or a new one) is at schema 1. Schema 2 adds the index of Cortex jobs
 * (`oas:analyses:cortex`), filled from the stored headers by the first command of this version
 * (again harmlessly when two start at once). A Redis of a newer schema is refused with one line
 * naming both versions, nothing written.
 */
import type { Redis } from 'ioredis';
import { ConfigError } from '../config/load.js';
import { oasVersion } from '../config/version.js';

export const REDIS_SCHEMA = 2;

/**
 * Records the schema reached unless a newer one is recorded meanwhile (kept); answers the schema
 * recorded and the oas that recorded it.
 */
const RECORD = `
local found = redis.call('HGET', KEYS[1], 'schema')
if found and tonumber(found) >= tonumber(ARGV[1]) then return {found, redis.call('HGET', KEYS[1], 'oas') or ''} end
redis.call('HSET', KEYS[1], 'schema', ARGV[1], 'oas', ARGV[2], 'upgraded_at', ARGV[3], 'upgraded_from', ARGV[4])
return {ARGV[1], ARGV[2]}`;

/**
 * One read when this build's; upgrades an older Redis (schema 1 → 2: the Cortex jobs' index);
 * throws a ConfigError for a newer schema (`label`: the Redis, no password).
 */
export async function checkRedisSchema(redis: Redis, label: string, prefix = 'oas:'): Promise<void> {
  const key = `${prefix}schema`;
  let [schema, oas] = await redis.hmget(key, 'schema', 'oas');
  const from = schema === null ? 1 : Number(schema);
  if (from < REDIS_SCHEMA) {
    const { RedisAnalysisStore } = await import('./redis-analyses.js');
    await new RedisAnalysisStore(redis, prefix).indexCortexJobs();
    [schema, oas] = (await redis.eval(RECORD, 1, key, String(REDIS_SCHEMA), oasVersion(), new Date().toISOString(), schema === null ? '0' : String(from))) as [string, string];
  }
  const found = Number(schema);
  if (!(found > REDIS_SCHEMA)) return;
  const writer = oas && /^[\w.+-]{1,40}$/.test(oas) ? ` (oas ${oas})` : '';
  throw new ConfigError(`Redis at ${label} was written by schema ${schema}${writer}; this oas ${oasVersion()} reads schema ${REDIS_SCHEMA} and older: upgrade oas`);
}
