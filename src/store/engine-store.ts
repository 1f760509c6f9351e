/**
 * Keyv as oas's stores use it: the engines' own store (`keyvEngineStore`, each engine under its
 * own key prefix), and the text every Keyv store of oas writes (`KEYV_TEXT`, SQLite and Redis).
 */
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

/**
 * Keyv's own format (@keyv/serialize: JSON where a text starting with `:` gets one more, and a
 * Buffer is `:base64:<data>`), read and written at JSON.stringify's and JSON.parse's speed: the
 * default serializer walks every value in JavaScript (~10 us for one engine answer, every engine
 * call writes one), its reader calls a reviver for every value. Both are only needed for a text
 * that holds such a string or a Buffer, which `MAY_ESCAPE` finds (in the JSON of either side):
 * the quote that opens a string, right after `[`, `,`, `:` or at the start, followed by `:`. A
 * quote inside a string is always `\"`, so it is never mistaken for one; a key that starts with
 * `:` is (a harmless detour through the slow path). Values are written and read as before.
 */
export const KEYV_TEXT = {
  serialize(data: unknown): string {
    const text = JSON.stringify(data);
    if (text !== undefined && !MAY_ESCAPE.test(text) && !text.includes('"type":"Buffer"')) return text;
    return JSON.stringify(data, escape) ?? 'null';
  },
  deserialize<T>(text: string): T {
    return (MAY_ESCAPE.test(text) ? JSON.parse(text, unescape) : JSON.parse(text)) as T;
  },
};

const MAY_ESCAPE = /(?:^|[[,:])\s*":/;

function escape(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === 58 ? `:${value}` : value;
  if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer') {
    const raw = (this as Record<string, unknown>)[key];
    if (Buffer.isBuffer(raw)) return `:base64:${raw.toString('base64')}`;
  }
  return value;
}

function unescape(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.startsWith(':base64:')) return Buffer.from(value.slice(8), 'base64');
  return value.startsWith(':') ? value.slice(1) : value;
}
