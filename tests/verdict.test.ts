/** verdictOf: the most severe evidence wins; errors and engines that were never asked never count. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import type { ObservableResult } from '../src/runner/result.js';
import type { Evidence } from '../src/engine/contract.js';
import { verdictOf } from '../src/verdict/verdict.js';

/** A threat list of IPs: a hit is malicious, no hit (null) is clean. */
const ipList = defineEngine<{ hit: boolean }>({
  id: 'ip_list', service: 'ip_list', label: 'IP list', description: 'test', tags: [], types: ['IPv4'], defaults: { timeout_ms: 1000 },
  summary: () => '',
  evidence: (r): Evidence => (r?.hit ? { level: 'malicious', reason: 'listed' } : { level: 'clean', reason: 'not listed' }),
  run: async () => null,
});
const reputation = defineEngine<{ score: number }>({
  id: 'reputation', service: 'reputation', label: 'Reputation', description: 'test', tags: [], types: ['IPv4', 'FQDN'], defaults: { timeout_ms: 1000 },
  summary: () => '',
  evidence: (r) => (r ? { level: r.score > 50 ? 'suspicious' : 'clean', reason: `score ${r.score}` } : undefined),
  run: async () => null,
});
const catalog = new Catalog([ipList, reputation] as unknown as EngineDefinition[]);
const result = (fields: Partial<ObservableResult>): ObservableResult => ({ observable: 'x', type: 'IPv4', reversed_success: false, ...fields });

test('the most severe evidence wins, reasons most severe first, keyed by the caller\'s name', () => {
  const v = verdictOf(result({ ip_list: { hit: true }, reputation: { score: 80 } }), catalog);
  assert.equal(v.verdict, 'malicious');
  assert.deepEqual(v.reasons, ['ip_list: listed', 'reputation: score 80']);
  assert.equal(verdictOf(result({ ip_list: null, reputation: { score: 80 } }), catalog).verdict, 'suspicious');
  assert.equal(verdictOf(result({ ip_list: null, reputation: { score: 10 } }), catalog).verdict, 'clean');
});

test('an engine error never counts, least of all as clean; nothing judged is unknown', () => {
  const v = verdictOf(result({ ip_list: null, errors: { ip_list: 'timeout' } }), catalog);
  assert.deepEqual(v, { verdict: 'unknown', reasons: [] });
  assert.equal(verdictOf(result({ reputation: null }), catalog).verdict, 'unknown');
});

test('an engine that does not take the observable\'s type was never asked: its null is not clean', () => {
  const domain = verdictOf(result({ type: 'FQDN', observable: 'example.com', ip_list: null }), catalog);
  assert.deepEqual(domain, { verdict: 'unknown', reasons: [] });
  assert.equal(verdictOf(result({ ip_list: null }), catalog).verdict, 'clean');
});
