import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import badAsn, {
  asnFromDependencies, assess, badAsnLookup, isLegitimateProvider, riskScore, summary, type BadAsnResult,
} from '../../engines/bad_asn.js';
import ipquery, { type IpqueryResult } from '../../engines/ipquery.js';
import {
  csvRecords, mergeLists, normalizeAsn, parseBrianhamaCsv, parseCsv, parseLethalForensicsCsv, parseSpamhausAsnDrop,
} from '../../src/badasn/lists.js';
import { resetBadAsnMemory, storePath } from '../../src/badasn/store.js';
import { defineEngine, EngineError } from '../../src/engine/contract.js';
import { BadResponseError } from '../../src/http/errors.js';
import { brianhamaCsv, ipapiAnswer, lethalForensicsCsv, listReplies, PATHS, spamhausBody, spamhausLines, startFakeBadAsn, type FakeBadAsn } from '../fakes/bad-asn.js';
import { startFakeDns, type FakeDnsServer } from '../fakes/dns.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import { rejectsWith as rejectsWithError } from '../helpers/assert.js';

// ---------------------------------------------------------------------------------------------
// Expected descriptions, written out from the fake lists (not computed by the code under test)

const SPAMHAUS_203999 = 'Spamhaus ASNDROP (BADHOST-AS, badhost.example, RU)';
const M247 = 'Brianhama Bad ASN List (M247, GB) + LETHAL-FORENSICS ASN Blacklist (M247 Europe SRL, CyberGhost VPN, ExpressVPN, HMA VPN, NordVPN, Pure VPN, Surfshark VPN, TunnelBear VPN, Windscribe VPN, 2024-12-17)';
const OVH = 'Brianhama Bad ASN List (OVH, FR) + LETHAL-FORENSICS ASN Blacklist (OVH SAS, ExpressVPN, PIA VPN, Pure VPN, Windscribe VPN, 2024-12-17)';
const ALEXHOST = 'Spamhaus ASNDROP (ALEXHOST, alexhost.example, MD) + Brianhama Bad ASN List (ASCLOUDATA, MD) + LETHAL-FORENSICS ASN Blacklist (ALEXHOST SRL, Pure VPN, 2024-12-17)';

/** ipapi's result as provider_11 reports it (engines.md 5.14: asn.asn as "AS<number>"). */
const ipapiResult = (asn: string, org: string) => ({ ip: '45.155.205.66', is_vpn: false, asn: { asn, org, route: '45.155.205.0/24' } });
const ipinfoResult = (asn: string) => ({ ip: '45.155.205.66', geolocation: 'Moscow, Moscow', country_code: 'RU', country_name: 'Russia', hostname: 'Unknown', asn, link: 'https://ipinfo.io/45.155.205.66' });
const ipqueryResult = (asn: string) => ({ ip: '45.155.205.66', geolocation: 'Moscow, Moscow', country_code: 'RU', country_name: 'Russia', isp: 'Bad Host LLC', asn, is_vpn: false, is_tor: false, is_proxy: false, risk_score: 0, link: 'https://api.ipquery.io/45.155.205.66' });
const webscoutResult = (asn: string, as_org: string) => ({ ip: '45.155.205.66', risk_score: null, is_proxy: false, is_tor: false, is_vpn: false, country_code: 'MD', asn, as_org });

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oas-bad-asn-'));
  dirs.push(dir);
  return dir;
}

/** Asserts a rejection with a one-line message matching `pattern`. */
/** Failures of bad_asn are EngineErrors unless a test says otherwise. */
const rejectsWith = (promise: Promise<unknown>, pattern: RegExp, type: new (...args: never[]) => Error = EngineError) =>
  rejectsWithError(promise, pattern, { type });

after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('bad_asn declaration', () => {
  test('catalog fields', () => {
    assert.equal(badAsn.id, 'bad_asn');
    assert.equal(badAsn.service, 'bad_asn');
    assert.equal(badAsn.label, 'Bad ASN Check');
    assert.deepEqual(badAsn.tags, ['IP', 'risk', 'free_no_key']);
    assert.deepEqual(badAsn.types, ['IPv4', 'IPv6']);
    assert.equal(badAsn.reversedIp, true);
    assert.deepEqual(badAsn.dependsOn, ['provider_11', 'provider_12', 'provider_13', 'provider_25']);
    assert.deepEqual(badAsn.credentials, []);
    assert.equal(badAsn.defaults.timeout_ms, 30000);
    assert.equal(badAsn.defaults.spamhaus_url, 'https://www.spamhaus.org/drop/asndrop.json');
    assert.equal(badAsn.defaults.brianhama_url, 'https://raw.githubusercontent.com/brianhama/bad-asn-list/master/bad-asn-list.csv');
    assert.equal(badAsn.defaults.lethal_forensics_url, 'https://raw.githubusercontent.com/LETHAL-FORENSICS/Microsoft-Analyzer-Suite/refs/heads/main/Blacklists/ASN-Blacklist.csv');
    assert.equal(badAsn.defaults.refresh_hours, 24);
    assert.equal(badAsn.run, badAsnLookup);
  });

  test('settings schema: URLs and numbers checked', () => {
    const schema = badAsn.settingsSchema!;
    assert.ok(v.safeParse(schema, { spamhaus_url: 'http://127.0.0.1:1/x', refresh_hours: 6, refresh_retry_minutes: 0 }).success);
    assert.ok(!v.safeParse(schema, { brianhama_url: 'not a url' }).success);
    assert.ok(!v.safeParse(schema, { refresh_hours: -1 }).success);
    assert.ok(!v.safeParse(schema, { refresh_hours: '24' }).success);
  });

  test('summary', () => {
    assert.equal(summary(assess('203999', SPAMHAUS_203999, 'Bad Host LLC')), 'AS203999 listed: Spamhaus ASN-DROP, risk 70/100');
    assert.equal(summary(assess('13335', undefined, null)), 'AS13335 not listed');
    assert.equal(summary(assess('9009', M247, null)), 'AS9009 listed: brianhama + LETHAL-FORENSICS, risk 70/100');
    assert.equal(summary(assess('16276', OVH, null)), 'AS16276 listed: brianhama + LETHAL-FORENSICS, risk 40/100 (legitimate provider, may be abused)');
    assert.equal(badAsn.summary(assess('200019', ALEXHOST, null)), 'AS200019 listed: Spamhaus ASN-DROP + brianhama + LETHAL-FORENSICS, risk 90/100');
  });

  test('details: verdict, ASN linked to bgp.he.net, organisation, score, lists and their entries', () => {
    assert.deepEqual(badAsn.details!(assess('203999', SPAMHAUS_203999, 'Bad Host LLC'), '45.155.205.66'), [
      { label: 'Status', value: 'listed as malicious' },
      { label: 'ASN', value: 'AS203999', href: 'https://bgp.he.net/AS203999' },
      { label: 'AS organization', value: 'Bad Host LLC' },
      { label: 'Risk score', value: '70/100' },
      { label: 'Lists', value: 'Spamhaus ASN-DROP' },
      { label: 'List entries', value: SPAMHAUS_203999 },
    ]);
    const ovh = badAsn.details!(assess('16276', OVH, null), '51.38.1.1');
    assert.deepEqual(ovh.map((f) => f.label), ['Status', 'ASN', 'Risk score', 'Lists', 'List entries']);
    assert.equal(ovh[0]!.value, 'listed, but a legitimate provider that may be abused');
    assert.equal(ovh[3]!.value, 'brianhama, LETHAL-FORENSICS');
    assert.deepEqual(badAsn.details!(assess('13335', undefined, 'Cloudflare, Inc.'), '1.1.1.1'), [
      { label: 'Status', value: 'not listed' },
      { label: 'ASN', value: 'AS13335', href: 'https://bgp.he.net/AS13335' },
    ]);
  });
});

describe('bad_asn list parsing', () => {
  test('normalizeAsn: digits on every path', () => {
    assert.equal(normalizeAsn('AS13335'), '13335');
    assert.equal(normalizeAsn('as13335'), '13335');
    assert.equal(normalizeAsn(' 13335 '), '13335');
    assert.equal(normalizeAsn('013335'), '13335');
    assert.equal(normalizeAsn(13335), '13335');
    assert.equal(normalizeAsn('AS4294967295'), '4294967295');
    for (const bad of ['Unknown', 'BOGON', '', 'AS', 'AS13335 Cloudflare', 'AS4294967296', '12a', -1, 1.5, null, undefined, {}]) {
      assert.equal(normalizeAsn(bad), null, String(bad));
    }
  });

  test('CSV: quoted fields with commas and doubled quotes, unquoted fields, CRLF, BOM, blank lines', () => {
    assert.deepEqual(parseCsv('\uFEFFASN,Entity\r\n15497,"COLOCALL ""ColoCALL"", UA"\r\n\r\n20264,WEBAIR - Webair, Inc.\n"1","a\nb",""\n'), [
      ['ASN', 'Entity'],
      ['15497', 'COLOCALL "ColoCALL", UA'],
      ['20264', 'WEBAIR - Webair', ' Inc.'],
      ['1', 'a\nb', ''],
    ]);
    assert.deepEqual(parseCsv('a,b'), [['a', 'b']], 'no final line break');
    assert.deepEqual(parseCsv('x,,y\n'), [['x', '', 'y']]);
    assert.deepEqual(parseCsv('5,say "hi"\n'), [['5', 'say "hi"']], 'a quote inside an unquoted field is a character');
    assert.throws(() => parseCsv('1,"never closed\n2,x\n'), BadResponseError);
  });

  test('CSV records: by header name, trimmed; a missing column is an error', () => {
    assert.deepEqual(csvRecords(' ASN , Entity \n7," X "\n8\n', ['asn', 'entity'], 'list'), [{ asn: '7', entity: 'X' }, { asn: '8', entity: '' }]);
    assert.throws(() => csvRecords('<html><body>Blocked</body></html>', ['ASN', 'Entity'], 'brianhama'), /brianhama: not the expected CSV \(no ASN, Entity column/);
  });

  test('Spamhaus ASN-DROP: metadata line skipped, missing fields as Unknown/??', () => {
    assert.deepEqual(parseSpamhausAsnDrop(spamhausBody()), {
      203999: SPAMHAUS_203999,
      200019: 'Spamhaus ASNDROP (ALEXHOST, alexhost.example, MD)',
      210644: 'Spamhaus ASNDROP (BPHOST-NETWORK, bulletproof.example, SC)',
      401120: 'Spamhaus ASNDROP (CHEAPY-HOST, Unknown, ??)',
      398722: 'Spamhaus ASNDROP (SCANFARM-LLC, scanfarm.example, US)',
      51381: 'Spamhaus ASNDROP (QUIETNET, quietnet.example, ??)',
    });
    assert.deepEqual(parseSpamhausAsnDrop('{"asn":"AS64500","asname":"","domain":null}\r\n'), { 64500: 'Spamhaus ASNDROP (Unknown, Unknown, ??)' });
  });

  test('Spamhaus ASN-DROP: a broken line or a list with only metadata is an error', () => {
    assert.throws(() => parseSpamhausAsnDrop('<!DOCTYPE html><html>Access denied</html>'), /Spamhaus ASN-DROP: malformed JSON on line 1/);
    assert.throws(() => parseSpamhausAsnDrop(`${JSON.stringify(spamhausLines[0])}\n{"asn": 1,`), /malformed JSON on line 2/);
    assert.throws(() => parseSpamhausAsnDrop('{"rir":"arin"}\n'), /unexpected entry on line 1/);
    assert.throws(() => parseSpamhausAsnDrop('{"asn":"ASX"}\n'), /invalid ASN on line 1/);
    assert.throws(() => parseSpamhausAsnDrop(spamhausBody([])), /Spamhaus ASN-DROP: empty list/);
  });

  test('brianhama: quoted and unquoted rows, quotes inside, first entry of a duplicate kept', () => {
    const table = parseBrianhamaCsv(brianhamaCsv);
    assert.equal(table[3223], 'Brianhama Bad ASN List (VOXILITY, RO)');
    assert.equal(table[15497], 'Brianhama Bad ASN List (COLOCALL Internet Data Center "ColoCALL", UA)');
    assert.equal(table[20264], 'Brianhama Bad ASN List (WEBAIR-INTERNET-2 - Webair Internet Development Company Inc.)');
    assert.equal(table[20248], 'Brianhama Bad ASN List (Take 2 Hosting, Inc.)');
    assert.equal(table[49505], 'Brianhama Bad ASN List (OOO Network of data-centers Selectel)');
    assert.equal(table[200019], 'Brianhama Bad ASN List (ASCLOUDATA, MD)');
    assert.equal(table[395978], 'Brianhama Bad ASN List (UNKNOWN)');
    assert.equal(Object.keys(table).length, 14, '16 rows, two ASNs twice');
    assert.deepEqual(parseBrianhamaCsv('ASN,Entity\nAS64501,"Example, NL"\nn/a,junk\n'), { 64501: 'Brianhama Bad ASN List (Example, NL)' });
    assert.throws(() => parseBrianhamaCsv('ASN,Entity\n'), /brianhama bad-asn-list: empty list/);
  });

  test('LETHAL-FORENSICS: OrgName, then Info and Date when present', () => {
    const table = parseLethalForensicsCsv(lethalForensicsCsv);
    assert.equal(table[174], 'LETHAL-FORENSICS ASN Blacklist (Cogent Communications, CyberGhost VPN, Mullvad VPN, PIA VPN, ProtonVPN, Pure VPN, 2024-12-17)');
    assert.equal(table[37684], 'LETHAL-FORENSICS ASN Blacklist (Angani Limited, CyberGhost VPN, ExpressVPN, Pure VPN, TunnelBear VPN, 2024-12-17)');
    assert.equal(table[136258], 'LETHAL-FORENSICS ASN Blacklist (BrainStorm Network, Inc, 2025-05-24)');
    assert.equal(Object.keys(table).length, 8);
    assert.deepEqual(parseLethalForensicsCsv('"ASN","OrgName"\n"AS64502","Only Org"\n'), { 64502: 'LETHAL-FORENSICS ASN Blacklist (Only Org)' });
    assert.throws(() => parseLethalForensicsCsv('"ASN","Name"\n"1","x"\n'), /no OrgName column/);
  });

  test('merge: " + " in the order Spamhaus, brianhama, LETHAL-FORENSICS, whatever the argument order', () => {
    const merged = mergeLists({
      lethal_forensics: parseLethalForensicsCsv(lethalForensicsCsv),
      brianhama: parseBrianhamaCsv(brianhamaCsv),
      spamhaus: parseSpamhausAsnDrop(spamhausBody()),
    });
    assert.equal(merged[200019], ALEXHOST);
    assert.equal(merged[9009], M247);
    assert.equal(merged[16276], OVH);
    assert.equal(merged[203999], SPAMHAUS_203999);
    assert.equal(merged[174]?.startsWith('LETHAL-FORENSICS ASN Blacklist (Cogent'), true);
    assert.equal(merged[13335], undefined);
    assert.deepEqual(mergeLists({ brianhama: { 1: 'b' } }), { 1: 'b' });
  });
});

describe('bad_asn verdict', () => {
  test('risk score: lists, legitimate providers, high-risk countries', () => {
    const cases: [string, number][] = [
      [SPAMHAUS_203999, 70], // 50 + 10 Spamhaus + 10 RU (engines.md's example)
      ['Spamhaus ASNDROP (SCANFARM-LLC, scanfarm.example, US)', 60],
      ['Spamhaus ASNDROP (CHEAPY-HOST, Unknown, ??)', 60],
      ['Brianhama Bad ASN List (RAMNODE - RamNode LLC, US)', 50], // brianhama alone: +0
      ['Brianhama Bad ASN List (H1ASN, RU)', 60], // its entity ends with a country too
      ['LETHAL-FORENSICS ASN Blacklist (Cogent Communications, Pure VPN, 2024-12-17)', 58],
      [M247, 70],
      [ALEXHOST, 90], // three lists + MD
      [OVH, 40], // two lists, legitimate provider
      ['Brianhama Bad ASN List (AMAZON-02 - Amazon.com, Inc., US)', 20],
      ['Spamhaus ASNDROP (HETZNER-CLOUD, hetzner.example, RU)', 40], // 50 + 10 − 30 + 10
    ];
    for (const [source, score] of cases) assert.equal(riskScore(source), score, source);
  });

  test('legitimate-provider keywords look at the list description, case-insensitively', () => {
    assert.equal(isLegitimateProvider('Brianhama Bad ASN List (DIGITALOCEAN-ASN - Digital Ocean, Inc., US)'), true);
    assert.equal(isLegitimateProvider('LETHAL-FORENSICS ASN Blacklist (SCALEWAY S.A.S., NordVPN, 2024-12-17)'), true);
    assert.equal(isLegitimateProvider(SPAMHAUS_203999), false);
  });

  test('listed, malicious: every field', () => {
    assert.deepEqual(assess('203999', SPAMHAUS_203999, 'Bad Host LLC'), {
      status: 'malicious',
      source: SPAMHAUS_203999,
      details: `ASN 203999 is listed as malicious in bad ASN databases (risk score 70/100). Source: ${SPAMHAUS_203999}`,
      asn: '203999',
      legitimate_but_abused: false,
      risk_score: 70,
      asn_org_name: 'Bad Host LLC',
    });
  });

  test('listed, potentially legitimate: every field', () => {
    const result = assess('16276', OVH, 'OVH SAS');
    assert.deepEqual(Object.keys(result), ['status', 'source', 'details', 'asn', 'legitimate_but_abused', 'risk_score', 'asn_org_name']);
    assert.equal(result.status, 'potentially_legitimate');
    assert.equal((result as { legitimate_but_abused: boolean }).legitimate_but_abused, true);
    assert.equal((result as { risk_score: number }).risk_score, 40);
    assert.match(result.details, /^ASN 16276 is listed in bad ASN databases but looks like a legitimate provider that can be abused \(risk score 40\/100\); verify/);
  });

  test('unlisted', () => {
    assert.deepEqual(assess('13335', undefined, 'Cloudflare, Inc.'), {
      status: 'unlisted', asn: '13335', details: 'ASN 13335 is not listed in bad ASN databases',
    });
  });
});

describe('bad_asn: the ASN from the providers', () => {
  test('provider_11 (ipapi): asn.asn and asn.org; a number is accepted too', () => {
    assert.deepEqual(asnFromDependencies({ provider_11: ipapiResult('AS203999', 'Bad Host LLC') }), { asn: '203999', org: 'Bad Host LLC' });
    assert.deepEqual(asnFromDependencies({ provider_11: { ip: '1.1.1.1', asn: { asn: 13335, org: 'Cloudflare, Inc.' } } }), { asn: '13335', org: 'Cloudflare, Inc.' });
  });

  test('provider_12 (ipinfo): "AS13335 Cloudflare, Inc." in asn, or in org', () => {
    assert.deepEqual(asnFromDependencies({ provider_12: ipinfoResult('AS13335 Cloudflare, Inc.') }), { asn: '13335', org: 'Cloudflare, Inc.' });
    assert.deepEqual(asnFromDependencies({ provider_12: { ip: '8.8.8.8', org: 'AS15169 Google LLC', country: 'US' } }), { asn: '15169', org: 'Google LLC' });
    assert.deepEqual(asnFromDependencies({ provider_12: ipinfoResult('AS64500') }), { asn: '64500', org: null });
  });

  test('provider_13 (ipquery): "AS13335" becomes digits (the reference kept the prefix)', () => {
    assert.deepEqual(asnFromDependencies({ provider_13: ipqueryResult('AS13335') }), { asn: '13335', org: null });
  });

  test('provider_25 (webscout): asn and as_org', () => {
    assert.deepEqual(asnFromDependencies({ provider_25: webscoutResult('AS200019', 'ALEXHOST') }), { asn: '200019', org: 'ALEXHOST' });
  });

  test('the first provider with an ASN wins; the organisation comes from ipapi, else ipinfo, else webscout', () => {
    assert.deepEqual(asnFromDependencies({
      provider_25: webscoutResult('AS3', 'WEBSCOUT-ORG'),
      provider_13: ipqueryResult('AS2'),
      provider_12: ipinfoResult('AS1 Ipinfo Org'),
    }), { asn: '1', org: 'Ipinfo Org' });
    assert.deepEqual(asnFromDependencies({
      provider_11: { ip: '45.155.205.66', asn: { asn: 'Unknown', org: 'Unknown' } },
      provider_13: ipqueryResult('AS203999'),
      provider_25: webscoutResult('Unknown', 'BADHOST-AS'),
    }), { asn: '203999', org: 'BADHOST-AS' });
  });

  test('Unknown and BOGON are not ASNs', () => {
    assert.deepEqual(asnFromDependencies({ provider_12: ipinfoResult('BOGON'), provider_25: webscoutResult('AS9009', 'Unknown') }), { asn: '9009', org: null });
  });

  test('results without an ASN: an error naming the providers, not a silent null', () => {
    assert.throws(() => asnFromDependencies({ provider_11: { ip: '1.2.3.4', asn: { asn: 'Unknown', org: 'Unknown' } } }),
      (e: Error) => e instanceof EngineError && e.message === 'no ASN available: provider_11 gave none');
    assert.throws(() => asnFromDependencies({ provider_12: ipinfoResult('Unknown'), provider_13: { ip: '1.2.3.4', asn: '' } }),
      (e: Error) => e instanceof EngineError && e.message === 'no ASN available: provider_12, provider_13 gave none');
    assert.throws(() => asnFromDependencies({ provider_11: 'not an object' }), /provider_11 gave none/);
  });

  test('no provider result at all: an error', () => {
    assert.throws(() => asnFromDependencies({}),
      (e: Error) => e instanceof EngineError && e.message === 'no ASN available: no result from provider_11, provider_12, provider_13 or provider_25');
    assert.throws(() => asnFromDependencies({ provider_11: null }), /no result from/);
  });
});

describe('bad_asn: minimal and degenerate provider results', () => {
  test('the least a provider gives: an ASN alone', () => {
    assert.deepEqual(asnFromDependencies({ provider_11: { asn: { asn: 'AS13335' } } }), { asn: '13335', org: null });
    assert.deepEqual(asnFromDependencies({ provider_12: { asn: 'AS13335' } }), { asn: '13335', org: null });
    assert.deepEqual(asnFromDependencies({ provider_13: { asn: 13335 } }), { asn: '13335', org: null });
    assert.deepEqual(asnFromDependencies({ provider_25: { asn: '13335' } }), { asn: '13335', org: null });
  });

  test('null, "", 0 and AS0 are no ASN; the next provider is asked', () => {
    const empty = { provider_11: { asn: { asn: 0, org: '' } }, provider_12: { asn: null, org: null }, provider_13: { asn: 'AS0' }, provider_25: { asn: '', as_org: null } };
    assert.throws(() => asnFromDependencies(empty),
      (e: Error) => e instanceof EngineError && e.message === 'no ASN available: provider_11, provider_12, provider_13, provider_25 gave none');
    assert.deepEqual(asnFromDependencies({ ...empty, provider_25: { asn: 'AS200019', as_org: 'ALEXHOST' } }), { asn: '200019', org: 'ALEXHOST' });
    assert.throws(() => asnFromDependencies({ provider_11: { asn: null } }), /provider_11 gave none/);
  });

  test('issue 32: ipquery\'s "Unknown" (the reference\'s word for no ASN) is no ASN, never looked up; the next provider is asked', () => {
    assert.throws(() => asnFromDependencies({ provider_13: { ip: '1.2.3.4', asn: 'Unknown' } }),
      (e: Error) => e instanceof EngineError && e.message === 'no ASN available: provider_13 gave none');
    assert.deepEqual(asnFromDependencies({ provider_13: { ip: '1.2.3.4', asn: 'Unknown' }, provider_25: { asn: 'AS9009', as_org: 'M247' } }), { asn: '9009', org: 'M247' });
  });

  test('a field of another type hides nothing beside it; an organisation sent as a number is its text', () => {
    assert.deepEqual(asnFromDependencies({ provider_11: { asn: { asn: 'AS203999', org: { name: 'Bad Host LLC' } } } }), { asn: '203999', org: null });
    assert.deepEqual(asnFromDependencies({ provider_12: { asn: { asn: 'AS1', name: 'x' }, org: 'AS64500 Example Org' } }), { asn: '64500', org: 'Example Org' });
    assert.deepEqual(asnFromDependencies({ provider_25: { asn: ['AS1'], as_org: 'ORG' }, provider_13: { asn: 'AS7' } }), { asn: '7', org: 'ORG' });
    assert.deepEqual(asnFromDependencies({ provider_25: { asn: 'AS9009', as_org: 42 } }), { asn: '9009', org: '42' });
    assert.deepEqual(asnFromDependencies({ provider_11: { asn: 'AS13335' }, provider_13: { asn: 'AS13335' } }), { asn: '13335', org: null });
  });
});

describe('bad_asn lookup against the lists', () => {
  let fake: FakeBadAsn;
  const harnesses: EngineHarness[] = [];

  function harness(dataDir: string, dependencies: Record<string, unknown>, settings: Record<string, unknown> = {}): EngineHarness {
    const h = engineHarness(badAsn, { dataDir, dependencies, settings: { ...fake.settings, retries: 0, timeout_ms: 5000, ...settings } });
    harnesses.push(h);
    return h;
  }
  const ipapi = (asn: string, org = 'Bad Host LLC') => ({ provider_11: ipapiResult(asn, org) });
  const readStore = (dir: string) => JSON.parse(readFileSync(storePath(dir), 'utf8')) as {
    last_updated: number; asns: Record<string, string>;
    lists: Record<string, { url: string; fetched_at: number | null; error: string | null; asns: Record<string, string> }>;
  };
  /** Makes the file look `hours` old. */
  const age = (dir: string, hours: number) => {
    const when = new Date(Date.now() - hours * 3_600_000);
    utimesSync(storePath(dir), when, when);
  };

  before(async () => {
    fake = await startFakeBadAsn();
  });
  after(async () => {
    await fake.http.close();
    await Promise.all(harnesses.map((h) => h.close()));
  });
  beforeEach(() => {
    fake.restore();
    fake.http.reset();
  });

  test('first lookup downloads the three lists into the data dir; the answer field by field', async () => {
    const dir = tempDir();
    const result = await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    assert.deepEqual(result, {
      status: 'malicious',
      source: SPAMHAUS_203999,
      details: `ASN 203999 is listed as malicious in bad ASN databases (risk score 70/100). Source: ${SPAMHAUS_203999}`,
      asn: '203999',
      legitimate_but_abused: false,
      risk_score: 70,
      asn_org_name: 'Bad Host LLC',
    } satisfies BadAsnResult);
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 });
    const accept = fake.http.hits(PATHS.spamhaus)[0]!.headers.accept;
    assert.match(String(accept), /json/);

    const file = readStore(dir);
    assert.deepEqual(Object.keys(file), ['last_updated', 'asns', 'lists']);
    assert.ok(Math.abs(file.last_updated - Date.now() / 1000) < 60);
    assert.equal(file.asns['200019'], ALEXHOST);
    assert.equal(file.lists.spamhaus!.url, fake.settings.spamhaus_url);
    assert.equal(file.lists.brianhama!.error, null);
    assert.equal(Object.keys(file.lists.lethal_forensics!.asns).length, 8);
    assert.deepEqual(readdirSync(join(dir, 'bad_asn')), ['lists.json'], 'no temporary file left');

    // Fresh lists: no download, whatever the ASN.
    assert.equal((await harness(dir, ipapi('AS13335', 'Cloudflare, Inc.')).run('1.1.1.1', 'IPv4') as BadAsnResult).status, 'unlisted');
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 });
  });

  test('each provider shape, end to end', async () => {
    const dir = tempDir();
    assert.deepEqual(await harness(dir, { provider_13: ipqueryResult('AS13335') }).run('1.1.1.1', 'IPv4'), {
      status: 'unlisted', asn: '13335', details: 'ASN 13335 is not listed in bad ASN databases',
    });
    // ipquery's "AS9009" is matched against the lists (the reference compared "AS9009" and missed).
    const m247 = await harness(dir, { provider_13: ipqueryResult('AS9009') }).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal(m247.asn, '9009');
    assert.equal(m247.status, 'malicious');
    assert.equal((m247 as { source: string }).source, M247);
    assert.equal((m247 as { asn_org_name: string | null }).asn_org_name, null);

    const ovh = await harness(dir, { provider_12: ipinfoResult('AS16276 OVH SAS') }).run('51.38.1.1', 'IPv4');
    assert.deepEqual(ovh, {
      status: 'potentially_legitimate',
      source: OVH,
      details: `ASN 16276 is listed in bad ASN databases but looks like a legitimate provider that can be abused (risk score 40/100); verify the activity before blocking. Source: ${OVH}`,
      asn: '16276',
      legitimate_but_abused: true,
      risk_score: 40,
      asn_org_name: 'OVH SAS',
    });

    const alex = await harness(dir, { provider_25: webscoutResult('AS200019', 'ALEXHOST') }).run('2a0a:4cc0::1', 'IPv6') as BadAsnResult;
    assert.equal(alex.status, 'malicious');
    assert.equal((alex as { risk_score: number }).risk_score, 90);
    assert.equal((alex as { source: string }).source, ALEXHOST);
    assert.equal((alex as { asn_org_name: string | null }).asn_org_name, 'ALEXHOST');
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 }, 'downloaded once for all');
  });

  test('no ASN: the error, and nothing downloaded', async () => {
    const dir = tempDir();
    await rejectsWith(harness(dir, { provider_11: { ip: '1.2.3.4', asn: { asn: 'Unknown', org: 'Unknown' } } }).run('1.2.3.4', 'IPv4'),
      /^no ASN available: provider_11 gave none$/);
    await rejectsWith(harness(dir, {}).run('1.2.3.4', 'IPv4'), /^no ASN available: no result from provider_11/);
    assert.equal(fake.http.requests.length, 0);
  });

  test('lists older than refresh_hours are downloaded again and the new content is used', async () => {
    const dir = tempDir();
    assert.equal((await harness(dir, ipapi('AS64512')).run('45.155.205.66', 'IPv4') as BadAsnResult).status, 'unlisted');
    fake.http.route(`GET ${PATHS.spamhaus}`, listReplies.spamhaus(spamhausBody([
      ...spamhausLines, { asn: 64512, rir: 'ripencc', domain: 'newbad.example', cc: 'CN', asname: 'NEWBAD-AS' },
    ])));

    age(dir, 23);
    assert.equal((await harness(dir, ipapi('AS64512')).run('45.155.205.66', 'IPv4') as BadAsnResult).status, 'unlisted', '23 h: still fresh');
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 });

    age(dir, 25);
    const result = await harness(dir, ipapi('AS64512')).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal(result.status, 'malicious');
    assert.equal((result as { source: string }).source, 'Spamhaus ASNDROP (NEWBAD-AS, newbad.example, CN)');
    assert.equal((result as { risk_score: number }).risk_score, 70);
    assert.deepEqual(fake.hits(), { spamhaus: 2, brianhama: 2, lethal_forensics: 2 });
    assert.ok(Date.now() - statSync(storePath(dir)).mtimeMs < 60_000, 'the file is new again');
  });

  test('refresh_hours is a setting', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    age(dir, 2);
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    assert.equal(fake.hits().spamhaus, 1, 'default 24 h');
    await harness(dir, ipapi('AS203999'), { refresh_hours: 1 }).run('45.155.205.66', 'IPv4');
    assert.deepEqual(fake.hits(), { spamhaus: 2, brianhama: 2, lethal_forensics: 2 });
  });

  test('a changed list URL is downloaded again', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    fake.http.route('GET /mirror/bad-asn-list.csv', listReplies.csv('ASN,Entity\n64513,"MIRRORED-AS, RU"\n'));
    const result = await harness(dir, ipapi('AS64513'), { brianhama_url: `${fake.http.url}/mirror/bad-asn-list.csv` }).run('45.155.205.66', 'IPv4');
    assert.equal((result as { source: string }).source, 'Brianhama Bad ASN List (MIRRORED-AS, RU)');
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 });
    assert.equal(fake.http.hits('/mirror/').length, 1, 'only the moved list');
  });

  test('a failed refresh keeps the old list, is not retried within the back-off, then is', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS3842')).run('45.155.205.66', 'IPv4');
    const before = readStore(dir);
    fake.http.route(`GET ${PATHS.brianhama}`, reply.status(500));
    age(dir, 30);

    // brianhama fails: its previous content still answers; the other two are refreshed.
    const result = await harness(dir, ipapi('AS3842')).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal((result as { source: string }).source, 'Brianhama Bad ASN List (RAMNODE - RamNode LLC, US)');
    assert.deepEqual(fake.hits(), { spamhaus: 2, brianhama: 2, lethal_forensics: 2 });
    const after = readStore(dir);
    assert.equal(after.lists.brianhama!.error, 'brianhama bad-asn-list: HTTP 500 Internal Server Error');
    assert.equal(after.lists.brianhama!.fetched_at, before.lists.brianhama!.fetched_at);
    assert.deepEqual(after.lists.brianhama!.asns, before.lists.brianhama!.asns);
    assert.ok(after.lists.spamhaus!.fetched_at! >= before.lists.spamhaus!.fetched_at!);
    assert.equal(after.lists.spamhaus!.error, null);

    // Within the back-off (10 minutes by default): no new attempt.
    await harness(dir, ipapi('AS3842')).run('45.155.205.66', 'IPv4');
    assert.deepEqual(fake.hits(), { spamhaus: 2, brianhama: 2, lethal_forensics: 2 });

    // Back-off over (0 minutes here) and the host healed: only the failed list is fetched.
    fake.restore();
    await harness(dir, ipapi('AS3842'), { refresh_retry_minutes: 0 }).run('45.155.205.66', 'IPv4');
    assert.deepEqual(fake.hits(), { spamhaus: 2, brianhama: 3, lethal_forensics: 2 });
    assert.equal(readStore(dir).lists.brianhama!.error, null);
  });

  test('a process restart reads the file without downloading', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    resetBadAsnMemory();
    const result = await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal(result.status, 'malicious');
    assert.equal(fake.http.requests.length, 3);
  });

  test('a file changed by another process is read again', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    const file = readStore(dir);
    file.lists.spamhaus!.asns['64514'] = 'Spamhaus ASNDROP (OTHER-PROCESS, other.example, IR)';
    writeFileSync(storePath(dir), JSON.stringify(file));
    const result = await harness(dir, ipapi('AS64514')).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal((result as { source: string }).source, 'Spamhaus ASNDROP (OTHER-PROCESS, other.example, IR)');
    assert.equal(fake.http.requests.length, 3, 'read, not downloaded');
  });

  test('a corrupt file is replaced by a download', async () => {
    const dir = tempDir();
    await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4');
    writeFileSync(storePath(dir), '{"last_updated": 1, "asns": {');
    assert.equal((await harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4') as BadAsnResult).status, 'malicious');
    assert.equal(fake.http.requests.length, 6);
    assert.equal(readStore(dir).asns['203999'], SPAMHAUS_203999);
  });

  test('concurrent lookups share one download', async () => {
    const dir = tempDir();
    fake.http.route(`GET ${PATHS.spamhaus}`, reply.slow(150, listReplies.spamhaus()));
    const results = await Promise.all(['AS203999', 'AS9009', 'AS13335', 'AS16276', 'AS174'].map((asn) => harness(dir, ipapi(asn)).run('45.155.205.66', 'IPv4')));
    assert.deepEqual(results.map((r) => (r as BadAsnResult).status), ['malicious', 'malicious', 'unlisted', 'potentially_legitimate', 'malicious']);
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 });
  });

  test('HTTP 500 on every list and nothing stored: an error with the reasons, and a back-off', async () => {
    const dir = tempDir();
    for (const path of Object.values(PATHS)) fake.http.route(`GET ${path}`, reply.status(500));
    await rejectsWith(harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4'),
      /^bad ASN lists unavailable: Spamhaus ASN-DROP: HTTP 500 Internal Server Error; brianhama bad-asn-list: HTTP 500 Internal Server Error; LETHAL-FORENSICS ASN Blacklist: HTTP 500 Internal Server Error; next attempt in 10 min$/);
    assert.equal(existsSync(storePath(dir)), false);
    await rejectsWith(harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4'), /^bad ASN lists unavailable: Spamhaus ASN-DROP: HTTP 500/);
    assert.deepEqual(fake.hits(), { spamhaus: 1, brianhama: 1, lethal_forensics: 1 }, 'not retried within the back-off');
  });

  test('HTTP 429 with Retry-After: 1 is waited out, then the list is used', async () => {
    const dir = tempDir();
    fake.http.route(`GET ${PATHS.spamhaus}`, sequence(reply.tooMany(1), listReplies.spamhaus()));
    const result = await harness(dir, ipapi('AS203999'), { retries: 2 }).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal(result.status, 'malicious');
    assert.equal(fake.hits().spamhaus, 2);
  });

  test('a malformed list: the others are used, and an ASN absent from them cannot be called unlisted', async () => {
    const dir = tempDir();
    fake.http.route(`GET ${PATHS.spamhaus}`, reply.html('<!DOCTYPE html><html><body>Checking your browser...</body></html>'));
    const m247 = await harness(dir, ipapi('AS9009')).run('45.155.205.66', 'IPv4') as BadAsnResult;
    assert.equal((m247 as { source: string }).source, M247);
    await rejectsWith(harness(dir, ipapi('AS13335')).run('1.1.1.1', 'IPv4'),
      /^cannot tell whether ASN 13335 is listed: Spamhaus ASN-DROP: malformed JSON on line 1 \(it is in none of the other lists\)$/);
    assert.equal(readStore(dir).lists.spamhaus!.fetched_at, null);
  });

  test('lists that never answer: timeout within the call budget', async () => {
    const dir = tempDir();
    for (const path of Object.values(PATHS)) fake.http.route(`GET ${path}`, reply.hang());
    const host = `127\\.0\\.0\\.1:${new URL(fake.http.url).port}`;
    await rejectsWith(harness(dir, ipapi('AS203999'), { timeout_ms: 300, retries: 0 }).run('45.155.205.66', 'IPv4'),
      new RegExp(`^bad ASN lists unavailable: Spamhaus ASN-DROP: timeout after 300 ms waiting for ${host}; .*LETHAL-FORENSICS ASN Blacklist: timeout after 300 ms waiting for ${host}; next attempt in 10 min$`));
  });

  test('a data dir that cannot be written: a clear error', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad_asn'), 'a file where the directory should be');
    await rejectsWith(harness(dir, ipapi('AS203999')).run('45.155.205.66', 'IPv4'), /^bad ASN lists unavailable: cannot write .*lists\.json: (EEXIST|ENOTDIR)/);
  });
});

describe('bad_asn through the runner', () => {
  let lists: FakeBadAsn;
  let ipapiHttp: FakeHttpServer;
  let dns: FakeDnsServer;
  const runners: RunnerHarness[] = [];

  /** A minimal provider_11: GET <base_url>/ip/<ip>, reported as the reference's ipapi result. */
  const provider11 = defineEngine({
    id: 'provider_11',
    service: 'ipapi_test',
    label: 'IPapi (test)',
    description: 'test stand-in for ipapi.is',
    tags: ['IP'],
    types: ['IPv4', 'IPv6'],
    reversedIp: true,
    defaults: { timeout_ms: 2000, base_url: '' },
    summary: () => '',
    run: async (o, ctx) => {
      const answer = await ctx.http.json(`${String(ctx.settings.base_url)}/ip/${o.value}`, v.looseObject({
        ip: v.string(), asn: v.looseObject({ asn: v.number(), org: v.string() }),
      }));
      return { ...answer, asn: { ...answer.asn, asn: `AS${answer.asn.asn}` } };
    },
  });

  function runner(engines = [badAsn, provider11]): RunnerHarness {
    const r = runnerHarness(engines, {
      dataDir: tempDir(),
      dnsServers: [dns.address],
      settings: { bad_asn: { ...lists.settings, retries: 0 }, provider_11: { base_url: ipapiHttp.url, retries: 0 } },
    });
    runners.push(r);
    return r;
  }

  before(async () => {
    lists = await startFakeBadAsn();
    ipapiHttp = await startFakeHttp({
      'GET /ip/*': (req) => {
        const ip = req.path.slice('/ip/'.length);
        if (ip === '45.155.205.66') return reply.json(ipapiAnswer(ip, 203999, 'Bad Host LLC'));
        if (ip === '185.220.101.66') return reply.status(500);
        return reply.json(ipapiAnswer(ip, 13335, 'Cloudflare, Inc.'));
      },
    });
    dns = await startFakeDns({ 'evil.example': { A: ['45.155.205.66'] }, 'cdn.example': { A: ['104.16.1.1'] } });
  });
  after(async () => {
    await Promise.all([lists.http.close(), ipapiHttp.close(), dns.close()]);
    await Promise.all(runners.map((r) => r.close()));
  });

  test('issue 32: ipquery answering only its ip gives asn "Unknown" (as the reference); bad_asn reads it as no ASN', async () => {
    const ipqueryHttp = await startFakeHttp({ 'GET /*': (req) => reply.json({ ip: req.path.slice(1) }) });
    try {
      const r = runnerHarness([badAsn, ipquery], {
        dataDir: tempDir(),
        dnsServers: [dns.address],
        settings: { bad_asn: { ...lists.settings, retries: 0 }, provider_13: { base_url: ipqueryHttp.url, retries: 0 } },
      });
      runners.push(r);
      const [result] = await r.analyze([{ value: '45.155.205.66', type: 'IPv4' }], ['provider_13', 'bad_asn']);
      assert.equal((result!.provider_13 as IpqueryResult).asn, 'Unknown');
      assert.equal(result!.bad_asn, null);
      assert.equal(result!.errors!.bad_asn, 'no ASN available: provider_13 gave none');
    } finally {
      await ipqueryHttp.close();
    }
  });

  test('bad_asn alone with no provider registered: the runner says it needs one', async () => {
    const [result] = await runner([badAsn]).analyze([{ value: '45.155.205.66', type: 'IPv4' }], ['bad_asn']);
    assert.equal(result!.bad_asn, null);
    assert.equal(result!.errors!.bad_asn, 'needs one of provider_11, provider_12, provider_13, provider_25, and none of them can run');
  });

  test('bad_asn alone runs provider_11 unreported and uses its ASN', async () => {
    ipapiHttp.reset();
    const [result] = await runner().analyze([{ value: '45.155.205.66', type: 'IPv4' }], ['bad_asn']);
    assert.deepEqual(Object.keys(result!), ['observable', 'type', 'reversed_success', 'bad_asn']);
    assert.deepEqual(result!.bad_asn, {
      status: 'malicious', source: SPAMHAUS_203999,
      details: `ASN 203999 is listed as malicious in bad ASN databases (risk score 70/100). Source: ${SPAMHAUS_203999}`,
      asn: '203999', legitimate_but_abused: false, risk_score: 70, asn_org_name: 'Bad Host LLC',
    });
    assert.deepEqual(ipapiHttp.requests.map((r) => r.path), ['/ip/45.155.205.66']);
  });

  test('selected together: both reported, the provider called once', async () => {
    ipapiHttp.reset();
    const [result] = await runner().analyze([{ value: '104.16.1.1', type: 'IPv4' }], ['provider_11', 'bad_asn']);
    assert.equal((result!.provider_11 as { asn: { asn: string } }).asn.asn, 'AS13335');
    assert.deepEqual(result!.bad_asn, { status: 'unlisted', asn: '13335', details: 'ASN 13335 is not listed in bad ASN databases' });
    assert.equal(ipapiHttp.requests.length, 1);
  });

  test('a domain: runs on the IP it resolves to', async () => {
    ipapiHttp.reset();
    const [result] = await runner().analyze([{ value: 'evil.example', type: 'FQDN' }], ['bad_asn']);
    assert.equal(result!.reversed_ip, '45.155.205.66');
    assert.equal((result!.bad_asn as { asn: string }).asn, '203999');
    assert.deepEqual(ipapiHttp.requests.map((r) => r.path), ['/ip/45.155.205.66']);
    assert.equal(result!.errors, undefined);
  });

  test('the provider fails: bad_asn reports that failure instead of a silent null', async () => {
    const [result] = await runner().analyze([{ value: '185.220.101.66', type: 'IPv4' }], ['bad_asn']);
    assert.equal(result!.bad_asn, null);
    assert.match(result!.errors!.bad_asn!, /^provider_11 failed: /);
  });
});
