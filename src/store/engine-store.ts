/** EngineStore backed by a Keyv namespace: each engine gets its own key prefix. */
import type Keyv from 'keyv';
import type { EngineStore } from '../engine/contract.js';

export function keyvEngineStore(keyv: Keyv, engineId: string): EngineStore {
  return {
    get: async <T>(key: string) => (await keyv.get(`${engineId}:${key}`)) as T | undefined,
    set: async (key, value, ttlMs) => {
      await keyv.set(`${engineId}:${key}`, value, ttlMs);
    },
  };
}
