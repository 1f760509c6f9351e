import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { jsonObject, parseWith } from '../src/http/client.js';
import { flag, flagOrNull, list, num, numOrNull, text } from '../src/http/lenient.js';

const Item = jsonObject({ name: v.string() });
const Answer = jsonObject({ on: flag(), n: num(), m: numOrNull(), s: text(), items: list(Item) });

test('absent, null and empty forms read as the defaults', () => {
  for (const empty of [{}, { on: null, n: null, m: null, s: null, items: null }]) {
    assert.deepEqual(parseWith(Answer, empty), { on: false, n: 0, m: null, s: null, items: [] });
  }
  assert.deepEqual(parseWith(Answer, { on: '', n: '', m: '', s: '', items: '' }), { on: false, n: 0, m: null, s: '', items: [] });
});

test('text(): a present value is kept as sent, "" and 0 included (issue 32)', () => {
  const Texts = jsonObject({ s: text() });
  assert.equal(parseWith(Texts, { s: '' }).s, '');
  assert.equal(parseWith(Texts, { s: ' ' }).s, ' ');
  assert.equal(parseWith(Texts, { s: 0 }).s, '0');
  assert.equal(parseWith(Texts, { s: null }).s, null);
  assert.equal(parseWith(Texts, {}).s, null);
});

test('other spellings of false and true, numbers as text, one object for a list, null items', () => {
  assert.deepEqual(parseWith(Answer, { on: 0, n: '7', m: '2.5', s: 12, items: { name: 'a' } }), { on: false, n: 7, m: 2.5, s: '12', items: [{ name: 'a' }] });
  assert.equal(parseWith(Answer, { on: 'true' }).on, true);
  assert.equal(parseWith(Answer, { on: 1 }).on, true);
  assert.equal(parseWith(Answer, { on: '0' }).on, false);
  assert.deepEqual(parseWith(Answer, { items: [null, { name: 'b' }] }).items, [{ name: 'b' }]);
});

test('what cannot be understood still fails, naming the field', () => {
  assert.throws(() => parseWith(Answer, { n: 'many' }), /at n: expected a number/);
  assert.throws(() => parseWith(Answer, { on: 'maybe' }), /at on: expected a boolean/);
  assert.throws(() => parseWith(Answer, { on: { x: 1 } }), /at on/);
  assert.throws(() => parseWith(Answer, { items: [{ name: 3 }] }), /at items\.0\.name/);
});

test('a needed part that is absent: "missing", naming it', () => {
  const Needed = jsonObject({ data: jsonObject({ id: v.string() }) });
  assert.throws(() => parseWith(Needed, {}), /^BadResponseError: unexpected answer from upstream at data: missing$/);
  assert.throws(() => parseWith(Needed, { data: {} }), /at data\.id: missing$/);
  assert.throws(() => parseWith(Needed, { data: { id: 3 } }), /at data\.id: Invalid type: Expected string but received 3$/);
});

test('flagOrNull: null when the upstream says nothing, else a flag', () => {
  const Known = jsonObject({ on: flagOrNull() });
  assert.deepEqual(parseWith(Known, {}), { on: null });
  assert.equal(parseWith(Known, { on: null }).on, null);
  assert.equal(parseWith(Known, { on: '' }).on, false);
  assert.equal(parseWith(Known, { on: 0 }).on, false);
  assert.equal(parseWith(Known, { on: 'true' }).on, true);
  assert.equal(parseWith(Known, { on: 1 }).on, true);
  assert.throws(() => parseWith(Known, { on: 'maybe' }), /at on: expected a boolean/);
});
