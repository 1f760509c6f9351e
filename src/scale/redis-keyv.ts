/**
 * The engine cache and the engines' own data in Redis (`redis_url`), through Keyv's Redis adapter:
 * `oas:cache::<engine>#<settings>:<type>:<observable>` with the cache's TTL, and
 * `oas:engine-data::<engine>:<key>`. The adapter's client fails at once while Redis is down (no
 * offline queue) and reconnects in the background: a cache that cannot be read costs a call to the
 * engine, never a failed or hanging analysis.
 */
import KeyvRedis, { createClient } from '@keyv/redis';
import Keyv from 'keyv';
import { KEYV_TEXT } from '../store/storage.js';
import { backoffMs } from './redis.js';

export interface RedisKeyvs {
  results: Keyv;
  engineData: Keyv;
  close(): Promise<void>;
}

export function openRedisKeyvs(url: string): RedisKeyvs {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 3_000, reconnectStrategy: (attempt: number) => backoffMs(attempt + 1) },
  });
  client.on('error', () => {}); // a failed read is a cache miss; the link tells of outages
  client.connect().catch(() => {});
  const keyv = (namespace: string) => {
    const store = new KeyvRedis(client, { namespace, throwOnConnectError: false, throwOnErrors: false });
    store.on('error', () => {});
    const k = new Keyv({ store, namespace, useKeyPrefix: false, ...KEYV_TEXT });
    k.on('error', () => {});
    return k;
  };
  return {
    results: keyv('oas:cache'),
    engineData: keyv('oas:engine-data'),
    close: async () => {
      try {
        await client.close();
      } catch {
        client.destroy();
      }
    },
  };
}
