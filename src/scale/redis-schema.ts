/**
 * The schema version of the team's Redis (`redis_url`): the hash `oas:schema` (schema, oas: the
 * version of oas that recorded it, upgraded_at, upgraded_from). Schema 1 is the layout of
 * oas 0.1.0 (src/scale/redis-analyses.ts), which recorded none: a Redis without the hash (oas
 * 0.1.0's, or a new one) is at schema 1, nothing to migrate, and the hash is written. A Redis of
 * a newer schema is refused with one line naming both versions, nothing written.
 */
import type { Redis } from 'ioredis';
import { ConfigError } from '../config/load.js';
import { oasVersion } from '../config/version.js';

export const REDIS_SCHEMA = 1;

/**
 * Records the schema when none is (atomically: a newer one written meanwhile is kept); answers
 * the schema found and the oas that recorded it.
 */
const RECORD = `
local found = redis.call('HGET', KEYS[1], 'schema')
if found then return {found, redis.call('HGET', KEYS[1], 'oas') or ''} end
redis.call('HSET', KEYS[1], 'schema', ARGV[1], 'oas', ARGV[2], 'upgraded_at', ARGV[3], 'upgraded_from', '0')
return {ARGV[1], ARGV[2]}`;

/** One read when recorded; throws a ConfigError for a newer schema (`label`: the Redis, no password). */
export async function checkRedisSchema(redis: Redis, label: string, prefix = 'oas:'): Promise<void> {
  const key = `${prefix}schema`;
  let [schema, oas] = await redis.hmget(key, 'schema', 'oas');
  if (schema === null) [schema, oas] = (await redis.eval(RECORD, 1, key, String(REDIS_SCHEMA), oasVersion(), new Date().toISOString())) as [string, string];
  const found = Number(schema);
  if (!(found > REDIS_SCHEMA)) return;
  const writer = oas && /^[\w.+-]{1,40}$/.test(oas) ? ` (oas ${oas})` : '';
  throw new ConfigError(`Redis at ${label} was written by schema ${schema}${writer}; this oas ${oasVersion()} reads schema ${REDIS_SCHEMA} and older: upgrade oas`);
}
