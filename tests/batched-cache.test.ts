/**
 * The engine cache's table batches its reads and writes (src/store/batched-sqlite.ts, issue 33):
 * the statements SQLite runs for N engine calls in one turn are counted, not timed. The stored
 * format is @keyv/sqlite's, so Keyv reads what it writes and the other way round.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';
import { BatchedKeyvSqlite } from '../src/store/batched-sqlite.js';
import { KEYV_TEXT } from '../src/store/storage.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('oas-batched-');
const opened: KeyvSqlite[] = [];
after(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

/** A batched table in its own file, counting the statements it sends to SQLite. */
function counted(file: string): { store: BatchedKeyvSqlite; statements: string[] } {
  const store = new BatchedKeyvSqlite({ uri: `sqlite://${join(dir, file)}`, table: 'results' });
  opened.push(store);
  const statements: string[] = [];
  const query = store.query.bind(store);
  store.query = async (sql: string, ...params: unknown[]) => {
    statements.push(sql.trim().split(/\s+/)[0]!.toUpperCase());
    return query(sql, ...params);
  };
  return { store, statements };
}

describe('the engine cache, batched', () => {
  test('1 000 writes and then 1 000 reads in one turn each: two upserts of 500 rows and one read, not 2 000 statements', async () => {
    const { store, statements } = counted('a.sqlite');
    const cache = new Keyv({ store, namespace: '' });
    await cache.get('warm-up'); // the table exists
    statements.length = 0;
    await Promise.all(Array.from({ length: 1000 }, (_, i) => cache.set(`k${i}`, { value: i, at: 1 }, 60_000)));
    assert.deepEqual(statements, ['INSERT', 'INSERT'], 'upserts of 500 rows');
    statements.length = 0;
    const values = await Promise.all(Array.from({ length: 1000 }, (_, i) => cache.get(`k${i}`)));
    assert.deepEqual(values, Array.from({ length: 1000 }, (_, i) => ({ value: i, at: 1 })));
    assert.deepEqual(statements, ['SELECT'], 'one read of 1 000 keys');
  });

  test('a read while the write is pending answers the written value; a missing key is undefined; a rewrite keeps the last', async () => {
    const { store } = counted('b.sqlite');
    const cache = new Keyv({ store, namespace: '' });
    const written = cache.set('x', { value: 'first', at: 1 });
    const rewritten = cache.set('x', { value: 'second', at: 2 });
    assert.deepEqual(await cache.get('x'), { value: 'second', at: 2 });
    await Promise.all([written, rewritten]);
    assert.deepEqual(await cache.get('x'), { value: 'second', at: 2 });
    assert.equal(await cache.get('nothing'), undefined);
  });

  test('the same rows as @keyv/sqlite: each reads what the other wrote, expiry included', async () => {
    const file = join(dir, 'c.sqlite');
    const batched = new BatchedKeyvSqlite({ uri: `sqlite://${file}`, table: 'results' });
    const plain = new KeyvSqlite({ uri: `sqlite://${file}`, table: 'results' });
    opened.push(batched, plain);
    const viaBatched = new Keyv({ store: batched, namespace: '' });
    const viaPlain = new Keyv({ store: plain, namespace: '' });
    await viaPlain.set('old', { value: 'written by an earlier version', at: 1 });
    await viaBatched.set('new', { value: ['a', 1, null], at: 2 });
    await viaBatched.set('gone', { value: 1, at: 3 }, 1);
    assert.deepEqual(await viaBatched.get('old'), { value: 'written by an earlier version', at: 1 });
    assert.deepEqual(await viaPlain.get('new'), { value: ['a', 1, null], at: 2 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await viaBatched.get('gone'), undefined, 'expired');
  });

  test('a batch that fails fails its callers (Keyv reports false and an error), and the next batch works', async () => {
    const { store } = counted('d.sqlite');
    const cache = new Keyv({ store, namespace: '' });
    const errors: unknown[] = [];
    cache.on('error', (error) => errors.push(error));
    await cache.get('warm-up');
    const query = store.query;
    store.query = async () => {
      throw new Error('SQLITE_BUSY: database is locked');
    };
    assert.deepEqual(await Promise.all([cache.set('a', 1), cache.set('c', 3)]), [false, false]);
    assert.equal(errors.length, 2);
    assert.match(String(errors[0]), /SQLITE_BUSY/);
    store.query = query;
    await cache.set('b', 2);
    assert.equal(await cache.get('b'), 2);
  });
});

describe("the cache's text (KEYV_TEXT)", () => {
  // Keyv's own serializer and reader (@keyv/serialize), as a Keyv made without options has them.
  const keyv = new Keyv();
  const VALUES: unknown[] = [
    { value: { ip: '192.0.2.1', asn: 'AS1', flags: [true, false, null], score: 1.5, nested: { list: [{ a: 'b' }] } }, expires: 1 },
    { value: { a: ':colon', b: [':x', 'y', { ':key': '::two' }], c: 'not: this', d: ':base64:aGk=' }, expires: undefined },
    { value: { buffer: Buffer.from('hi'), inList: [Buffer.from([0, 255])], date: new Date(0), gone: undefined, holes: [1, undefined, 2] } },
    { value: { type: 'Buffer', data: [1, 2] }, expires: 3 },
    { value: ':top', expires: 4 },
    { value: { 'a,': 1, 'b:': ':c', 'd[ ': [':e'], quote: 'say "::x"', tricky: '[":' }, expires: 5 },
    { value: 'text\n"quoted"\u2028', expires: null },
  ];

  test('is written as @keyv/serialize writes it, and read back as it reads it', () => {
    for (const value of VALUES) {
      const text = KEYV_TEXT.serialize(value);
      assert.equal(text, keyv.serialize!(value as never), text);
      assert.deepEqual(KEYV_TEXT.deserialize(text), keyv.deserialize!(text), text);
    }
  });

  test('reads what Keyv wrote before, and Keyv reads what it writes, through SQLite', async () => {
    const { store } = counted('e.sqlite');
    const ours = new Keyv({ store, namespace: '', ...KEYV_TEXT });
    const theirs = new Keyv({ store, namespace: '' });
    for (const [i, entry] of VALUES.entries()) {
      const { value } = entry as { value: unknown };
      await theirs.set(`old-${i}`, value);
      await ours.set(`new-${i}`, value);
    }
    for (const [i, entry] of VALUES.entries()) {
      assert.deepEqual(await ours.get(`old-${i}`), await theirs.get(`old-${i}`));
      assert.deepEqual(await theirs.get(`new-${i}`), await ours.get(`new-${i}`));
    }
    // Texts that start with a colon come back as they were, ':base64:' included.
    assert.deepEqual(await ours.get('new-1'), (VALUES[1] as { value: unknown }).value);
  });
});
