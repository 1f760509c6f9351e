/**
 * The graph view's model (src/view/graph-view.ts): from results in the real engines' shapes, the
 * nodes (observables, resolved IPs, ASNs, flagging engines) and edges each observable gives, and
 * that the live view (/ui/analyses/<id>) carries them.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { AnalysisRecord } from '../src/store/analysis-store.js';
import { loadCatalog, type Catalog } from '../src/engine/catalog.js';
import type { ObservableResult } from '../src/runner/result.js';
import { analysisView } from '../src/view/analysis-view.js';
import { asnOf, observableGraph } from '../src/view/graph-view.js';
import type { ObservableGraphView } from '../src/view/types.js';

/** A domain resolved to 203.0.113.7: four network engines name the ASN, bad_asn lists it, ipapi sees Tor, VirusTotal flags the domain. */
const domain: ObservableResult = {
  observable: 'evil.example',
  type: 'FQDN',
  reversed_success: true,
  reversed_ip: '203.0.113.7',
  provider_11: { ip: '203.0.113.7', is_tor: true, is_vpn: false, is_proxy: false, is_abuser: false, asn: { asn: 'AS203999', org: 'Bad Hosting Ltd' } },
  ipinfo: { ip: '203.0.113.7', geolocation: 'Unknown, Unknown', country_code: 'NL', country_name: 'Netherlands', hostname: 'Unknown', asn: 'AS203999 Bad Hosting Ltd', link: 'https://ipinfo.io/203.0.113.7' },
  provider_13: { ip: '203.0.113.7', asn: 'AS203999', isp: 'Bad Hosting', is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, is_mobile: false, risk_score: 10 },
  bad_asn: { status: 'malicious', source: 'Spamhaus ASNDROP (BADHOST, bad.example, RU), Brianhama Bad ASN List (x)', details: '...', asn: '203999', legitimate_but_abused: false, risk_score: 90, asn_org_name: 'Bad Hosting Ltd' },
  virustotal: { detection_ratio: '7/90', total_malicious: 7, total_suspicious: 0, link: 'https://www.virustotal.com/gui/domain/evil.example', community_score: -5 },
};

/** An IP, clean: one ASN from webscout, nothing flags it; Shodan failed. */
const ip: ObservableResult = {
  observable: '198.51.100.5',
  type: 'IPv4',
  reversed_success: false,
  provider_25: { ip: '198.51.100.5', asn: 'AS64500', as_org: 'Example Net', is_vpn: false, is_tor: false, is_proxy: false, behavior: [], location: 'Unknown' },
  virustotal: { detection_ratio: '0/90', total_malicious: 0, total_suspicious: 0, link: 'https://www.virustotal.com/gui/ip-address/198.51.100.5', community_score: 0 },
  shodan: null,
  errors: { shodan: 'HTTP 500' },
};

/** The resolved IP of the domain, analysed as an observable too. */
const sameIp: ObservableResult = {
  observable: '203.0.113.7',
  type: 'IPv4',
  reversed_success: false,
  provider_11: { ip: '203.0.113.7', is_tor: false, asn: { asn: 'AS203999', org: 'Bad Hosting Ltd' } },
};

const ids = (graph: ObservableGraphView) => ({ nodes: graph.nodes.map((n) => n.id).sort(), edges: graph.edges.map((e) => e.id).sort() });

describe('the graph view model', () => {
  let catalog: Catalog;
  before(async () => {
    catalog = await loadCatalog('main');
  });

  test('a domain: its resolved IP, the ASN its engines agree on, the engines that flag it', () => {
    const graph = observableGraph(domain, catalog);
    assert.deepEqual(ids(graph), {
      nodes: ['asn:203999', 'engine:bad_asn', 'engine:provider_11', 'engine:virustotal', 'ip:203.0.113.7', 'obs:evil.example'],
      edges: [
        'flags:engine:bad_asn>ip:203.0.113.7',
        'flags:engine:provider_11>ip:203.0.113.7',
        'flags:engine:virustotal>obs:evil.example',
        'in_asn:ip:203.0.113.7>asn:203999',
        'resolves_to:obs:evil.example>ip:203.0.113.7',
      ],
    });
    const node = (id: string) => graph.nodes.find((n) => n.id === id)!;
    assert.deepEqual(node('obs:evil.example'), { id: 'obs:evil.example', kind: 'observable', label: 'evil.example', type: 'FQDN', verdict: 'malicious' });
    assert.deepEqual(node('ip:203.0.113.7'), { id: 'ip:203.0.113.7', kind: 'ip', label: '203.0.113.7' });
    assert.deepEqual(node('asn:203999'), { id: 'asn:203999', kind: 'asn', label: 'AS203999 Bad Hosting Ltd', listed: true });
    assert.equal(node('engine:provider_11').label, 'IPapi');
    assert.equal(node('engine:provider_11').level, 'suspicious');
    assert.equal(node('engine:virustotal').level, 'malicious');
    assert.equal(node('engine:bad_asn').level, 'malicious');

    const edge = (id: string) => graph.edges.find((e) => e.id === id)!;
    assert.equal(edge('in_asn:ip:203.0.113.7>asn:203999').note, 'according to IPapi, IPinfo, IPquery, Bad ASN Check (listed in bad-ASN lists)');
    assert.deepEqual(edge('flags:engine:provider_11>ip:203.0.113.7'), {
      id: 'flags:engine:provider_11>ip:203.0.113.7', source: 'engine:provider_11', target: 'ip:203.0.113.7', relation: 'flags', level: 'suspicious', note: 'suspicious: flagged Tor',
    });
    assert.equal(edge('flags:engine:virustotal>obs:evil.example').note, 'malicious: 7/90 engines flag it');
    // Most severe first: the malicious flags come before ipapi's suspicious one.
    assert.deepEqual(graph.edges.filter((e) => e.relation === 'flags').map((e) => e.level), ['malicious', 'malicious', 'suspicious']);
  });

  test('a clean IP: its ASN, no engine, an engine that failed says nothing', () => {
    const graph = observableGraph(ip, catalog);
    assert.deepEqual(ids(graph), { nodes: ['asn:64500', 'ip:198.51.100.5'], edges: ['in_asn:ip:198.51.100.5>asn:64500'] });
    assert.equal(graph.nodes.find((n) => n.kind === 'observable')?.verdict, 'clean');
    assert.deepEqual(graph.nodes.find((n) => n.kind === 'asn'), { id: 'asn:64500', kind: 'asn', label: 'AS64500 Example Net', listed: false });
  });

  test('an IP observable shares its node id with the same address reached by resolution', () => {
    const a = observableGraph(domain, catalog);
    const b = observableGraph(sameIp, catalog);
    assert.ok(a.nodes.some((n) => n.id === 'ip:203.0.113.7' && n.kind === 'ip'));
    assert.ok(b.nodes.some((n) => n.id === 'ip:203.0.113.7' && n.kind === 'observable'));
    assert.ok(b.edges.some((e) => e.id === 'in_asn:ip:203.0.113.7>asn:203999'));
  });

  test('ASNs from every shape that carries one; "Unknown", bogons and other shapes give none', () => {
    assert.deepEqual(asnOf(catalog.find('ipapi'), { asn: { asn: 'AS13335', org: 'Cloudflare' } }), { asn: '13335', org: 'Cloudflare', listed: false });
    assert.equal(asnOf(catalog.find('ipapi'), { asn: { asn: 'Unknown', org: 'Unknown' } }), null);
    assert.deepEqual(asnOf(catalog.find('ipinfo'), { asn: 'AS15169 Google LLC' }), { asn: '15169', org: 'Google LLC', listed: false });
    assert.equal(asnOf(catalog.find('ipinfo'), { asn: 'BOGON' }), null);
    assert.deepEqual(asnOf(catalog.find('ipquery'), { asn: 'AS13335', isp: 'Unknown' }), { asn: '13335', org: null, listed: false });
    assert.equal(asnOf(catalog.find('ipquery'), { asn: null }), null);
    assert.deepEqual(asnOf(catalog.find('webscout'), { asn: 'AS64500', as_org: 'Example' }), { asn: '64500', org: 'Example', listed: false });
    assert.deepEqual(asnOf(catalog.find('shodan'), { asn: 'AS64501', org: 'Shodan Org' }), { asn: '64501', org: 'Shodan Org', listed: false });
    assert.deepEqual(asnOf(catalog.find('criminalip'), { whois: { data: [{ as_no: 64502, as_name: 'CIP' }] } }), { asn: '64502', org: 'CIP', listed: false });
    assert.deepEqual(asnOf(catalog.find('bad_asn'), { status: 'unlisted', asn: '64503', details: '' }), { asn: '64503', org: null, listed: false });
    assert.deepEqual(asnOf(catalog.find('bad_asn'), { status: 'potentially_legitimate', asn: '16509', asn_org_name: 'Amazon' }), { asn: '16509', org: 'Amazon', listed: true });
    assert.equal(asnOf(catalog.find('virustotal'), { asn: 'AS1' }), null);
    assert.equal(asnOf(catalog.find('ipapi'), null), null);
    assert.equal(asnOf(catalog.find('ipapi'), 'AS1'), null);
  });

  test('the live view carries each finished observable\'s graph, and none for one still running', () => {
    const record: AnalysisRecord = {
      id: '00000000-0000-4000-8000-000000000001',
      created_at: '2025-01-01T00:00:00.000Z',
      finished_at: null,
      duration_ms: null,
      engines: ['provider_11', 'ipinfo', 'provider_13', 'bad_asn', 'virustotal', 'provider_25', 'shodan'],
      ignore_cache: false,
      observables: [{ value: 'evil.example', type: 'FQDN' }, { value: '198.51.100.5', type: 'IPv4' }, { value: '192.0.2.1', type: 'IPv4' }],
      complete: false,
      progress: { done: 10, total: 15 },
      results: [domain, ip, null],
    } as unknown as AnalysisRecord;
    const view = analysisView(record, catalog);
    assert.deepEqual(view.observables[0]!.graph, observableGraph(domain, catalog));
    assert.deepEqual(view.observables[1]!.graph, observableGraph(ip, catalog));
    assert.equal(view.observables[2]!.graph, undefined);
    // A poll that already holds the first two gets only the third.
    assert.deepEqual(analysisView(record, catalog, new Set([0, 1])).observables.map((o) => o.index), [2]);
  });
});
