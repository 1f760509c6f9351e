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
import { ceilingsOf, InternalScope, observableMarking, withholdReason } from '../src/marking/policy.js';
import type { Observable } from '../src/observables/types.js';

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

describe('what an engine may receive', () => {
  const virustotal = { id: 'provider_24', label: 'VirusTotal', disclosure: 'third_party' as const, touchesTarget: false };
  const misp = { id: 'provider_15', label: 'MISP', disclosure: 'internal' as const, touchesTarget: false };
  const resolver = { id: 'reverse_dns', label: 'Reverse DNS', disclosure: 'third_party' as const, touchesTarget: true };
  const defaults = (engine: typeof virustotal | typeof misp | typeof resolver) => ceilingsOf(engine, {});

  test('the defaults keep today\'s behaviour at TLP:AMBER / PAP:GREEN', () => {
    for (const engine of [virustotal, misp, resolver]) assert.equal(withholdReason(engine, defaults(engine), { tlp: 'AMBER', pap: 'GREEN' }), undefined, engine.id);
  });

  test('TLP:RED reaches only what keeps data in-house, saying which setting decides', () => {
    assert.equal(
      withholdReason(virustotal, defaults(virustotal), { tlp: 'RED', pap: 'GREEN' }),
      'not sent: TLP:RED allows only engines that keep data in-house (VirusTotal is a third party; engines.provider_24.max_tlp is AMBER)',
    );
    assert.equal(withholdReason(misp, defaults(misp), { tlp: 'RED', pap: 'RED' }), undefined);
    assert.match(withholdReason(virustotal, defaults(virustotal), { tlp: 'AMBER+STRICT', pap: 'CLEAR' })!, /^not sent: TLP:AMBER\+STRICT is above/);
  });

  test('PAP:AMBER resolves nothing; a third party\'s lookup stops past AMBER', () => {
    assert.match(withholdReason(resolver, defaults(resolver), { tlp: 'CLEAR', pap: 'AMBER' })!, /PAP:AMBER forbids any lookup that reaches the observable's own infrastructure .*engines\.reverse_dns\.max_pap is GREEN/);
    assert.equal(withholdReason(virustotal, defaults(virustotal), { tlp: 'CLEAR', pap: 'AMBER' }), undefined);
    assert.match(withholdReason(virustotal, defaults(virustotal), { tlp: 'CLEAR', pap: 'RED' })!, /PAP:RED is above what this engine may do/);
  });

  test('a ceiling set in the settings wins, read as the API reads levels', () => {
    assert.equal(withholdReason(virustotal, ceilingsOf(virustotal, { max_tlp: 'tlp:red' }), { tlp: 'RED', pap: 'GREEN' }), undefined);
    assert.match(withholdReason(misp, ceilingsOf(misp, { max_tlp: 'GREEN' }), { tlp: 'AMBER', pap: 'GREEN' })!, /engines\.provider_15\.max_tlp is GREEN/);
  });

  test('the team\'s own addresses and names are RED/RED whatever the analysis says', () => {
    const scope = new InternalScope(['203.0.113.0/24', '2001:db8:1::/48'], ['corp.example', '.intra.example.']);
    const internal = (value: string, type: Observable['type']) => scope.reasonFor({ value, type });
    for (const [value, type] of [
      ['10.1.2.3', 'IPv4'], ['192.168.0.1', 'IPv4'], ['127.0.0.1', 'IPv4'], ['169.254.1.1', 'IPv4'], ['100.64.0.1', 'IPv4'], ['fd00::1', 'IPv6'], ['::ffff:10.0.0.1', 'IPv6'],
      ['203.0.113.9', 'IPv4'], ['2001:db8:1::5', 'IPv6'],
      ['printer.local', 'FQDN'], ['nas.home.arpa', 'FQDN'], ['corp.example', 'FQDN'], ['wiki.corp.example', 'FQDN'], ['x.intra.example', 'FQDN'],
      ['https://wiki.corp.example/page', 'URL'], ['alice@corp.example', 'Email'], ['http://10.0.0.1/admin', 'URL'],
    ] as const) assert.ok(internal(value, type), `${value} is internal`);
    for (const [value, type] of [['8.8.8.8', 'IPv4'], ['example.com', 'FQDN'], ['notcorp.example', 'FQDN'], ['https://example.com/corp.example', 'URL'], ['44d88612fea8a8f36de82e1278abb02f', 'MD5']] as const) {
      assert.equal(internal(value, type), undefined, `${value} is not internal`);
    }
    const { marking, internal: why } = observableMarking({ tlp: 'CLEAR', pap: 'CLEAR' }, { value: '10.0.0.1', type: 'IPv4' }, scope);
    assert.deepEqual(marking, { tlp: 'RED', pap: 'RED' });
    assert.match(withholdReason(virustotal, defaults(virustotal), marking, why)!, /^not sent: TLP:RED allows only engines that keep data in-house \(10\.0\.0\.1 is a private address\)/);
  });
});
