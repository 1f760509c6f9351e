/**
 * TLP and PAP levels (issue 34) and where each engine sends an observable: the levels read as the
 * API reads them, refusals naming the allowed values, the default ceilings, and every file of
 * engines/ stating its `disclosure` and `touchesTarget` itself.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { loadEngineDefinitions } from '../src/engine/catalog.js';
import { defaultMaxPap, defaultMaxTlp, MarkingError, parsePap, parseTlp, papRank, tlpRank } from '../src/marking/levels.js';

describe('TLP and PAP levels', () => {
  test('read with or without the prefix, in any case, spaces around', () => {
    assert.equal(parseTlp('TLP:RED'), 'RED');
    assert.equal(parseTlp('red'), 'RED');
    assert.equal(parseTlp(' tlp:amber+strict '), 'AMBER+STRICT');
    assert.equal(parseTlp('Clear'), 'CLEAR');
    assert.equal(parsePap('PAP:GREEN'), 'GREEN');
    assert.equal(parsePap('amber'), 'AMBER');
  });

  test('in the standards\' order', () => {
    assert.deepEqual(['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED'].map((l) => tlpRank(parseTlp(l))), [0, 1, 2, 3, 4]);
    assert.deepEqual(['CLEAR', 'GREEN', 'AMBER', 'RED'].map((l) => papRank(parsePap(l))), [0, 1, 2, 3]);
  });

  test('anything else is refused, naming the allowed values', () => {
    for (const bad of ['WHITE', 'PAP:RED', 'amber strict', '', 3, null, undefined, ['RED']]) {
      assert.throws(() => parseTlp(bad), (error: Error) => error instanceof MarkingError && /use one of CLEAR, GREEN, AMBER, AMBER\+STRICT, RED/.test(error.message), String(bad));
    }
    assert.throws(() => parsePap('AMBER+STRICT'), /use one of CLEAR, GREEN, AMBER, RED/);
    assert.throws(() => parsePap('TLP:RED'), /no PAP level/);
  });

  test('default ceilings: a third party AMBER, in-house RED; PAP GREEN when it reaches the target, AMBER for a third party, RED in-house', () => {
    assert.equal(defaultMaxTlp('third_party'), 'AMBER');
    assert.equal(defaultMaxTlp('internal'), 'RED');
    assert.equal(defaultMaxTlp('none'), 'RED');
    assert.equal(defaultMaxPap('third_party', false), 'AMBER');
    assert.equal(defaultMaxPap('third_party', true), 'GREEN');
    assert.equal(defaultMaxPap('internal', false), 'RED');
    assert.equal(defaultMaxPap('none', false), 'RED');
  });
});

describe('where each engine sends an observable', () => {
  test('every file of engines/ states its disclosure and whether it touches the target', () => {
    const dir = new URL('../../engines/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 30);
    for (const file of files) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      assert.match(source, /^ {2}disclosure: '(none|internal|third_party)',$/m, `engines/${file} states its disclosure`);
      assert.match(source, /^ {2}touchesTarget: (true|false),$/m, `engines/${file} states touchesTarget`);
    }
  });

  test('the team\'s own servers are internal, the local lists none, the resolvers touch the target', async () => {
    const engines = await loadEngineDefinitions();
    const by = (pick: (e: (typeof engines)[number]) => boolean) => engines.filter(pick).map((e) => e.service).sort();
    assert.deepEqual(by((e) => e.disclosure === 'internal'), ['crowdstrike', 'dfir_iris', 'hister', 'mde', 'misp', 'misp_feedback', 'opencti', 'rl_analyze']);
    assert.deepEqual(by((e) => e.disclosure === 'none'), ['bad_asn']);
    assert.deepEqual(by((e) => e.touchesTarget), ['google_dns', 'reverse_dns']);
    assert.ok(by((e) => e.disclosure === 'third_party').includes('virustotal'));
  });
});
