/**
 * The evidence rules of the public-intelligence engines (VirusTotal, AbuseIPDB, OTX, Criminal IP,
 * ThreatFox, PhishTank, Safe Browsing, urlscan, bad_asn, ipapi, ipquery, webscout, ipinfo, Spur,
 * Shodan), each engine run against its loopback fake, the fake's body altered for each level;
 * then `verdictOf` over results the real runner produced.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import abuseipdb from '../engines/abuseipdb.js';
import alienvault from '../engines/alienvault.js';
import badAsn from '../engines/bad_asn.js';
import criminalip from '../engines/criminalip.js';
import safeBrowsing from '../engines/google_safe_browsing.js';
import ipapi from '../engines/ipapi.js';
import ipinfo from '../engines/ipinfo.js';
import ipquery from '../engines/ipquery.js';
import phishtank from '../engines/phishtank.js';
import shodan from '../engines/shodan.js';
import spur from '../engines/spur.js';
import threatfox from '../engines/threatfox.js';
import urlscan from '../engines/urlscan.js';
import virustotal from '../engines/virustotal.js';
import webscout from '../engines/webscout.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import type { ObservableType } from '../src/observables/types.js';
import { resetBadAsnMemory } from '../src/badasn/store.js';
import type { Evidence } from '../src/engine/contract.js';
import { verdictOf } from '../src/verdict/verdict.js';
import * as abuseipdbFake from './fakes/abuseipdb.js';
import * as alienvaultFake from './fakes/alienvault.js';
import { ipapiAnswer } from './fakes/bad-asn.js';
import * as criminalipFake from './fakes/criminalip.js';
import * as safeBrowsingFake from './fakes/google_safe_browsing.js';
import { reply, startFakeHttp, type FakeHandler, type FakeHttpServer, type FakeRoute } from './fakes/http.js';
import { intelRoutes, intelSettings } from './fakes/intel.js';
import * as ipinfoFake from './fakes/ipinfo.js';
import * as shodanFake from './fakes/shodan.js';
import * as spurFake from './fakes/spur.js';
import * as threatfoxFake from './fakes/threatfox.js';
import * as vtFake from './fakes/virustotal.js';
import * as webscoutFake from './fakes/webscout.js';
import { engineHarness } from './helpers/engine.js';
import { runnerHarness } from './helpers/runner.js';
import { removeTempDir, tempDir } from './helpers/temp.js';

const KEY = 'verdict-test-key-0123456789';

const closers: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function fake(routes: Record<string, FakeRoute>): Promise<FakeHttpServer> {
  const server = await startFakeHttp(routes);
  closers.push(() => server.close());
  return server;
}

type Judge = (value: string, type: ObservableType) => Promise<Evidence | undefined>;

/** Runs the engine (as resolved by a catalog variant, if given) and returns its evidence. */
function judge<R>(engine: EngineDefinition<R>, settings: Record<string, unknown>, options: { dependencies?: Record<string, unknown>; dataDir?: string } = {}): Judge {
  const definition = engine as unknown as EngineDefinition;
  const harness = engineHarness(definition, { settings: { retries: 0, ...settings }, ...options });
  closers.push(() => harness.close());
  return async (value, type) => {
    assert.ok(definition.evidence, `${definition.id} declares evidence`);
    return definition.evidence(await harness.run(value, type));
  };
}

/** Evidence of a result given directly (missing fields, shapes the lookups never return). */
function evidenceOf<R>(engine: EngineDefinition<R>, result: unknown): Evidence | undefined {
  return (engine as unknown as EngineDefinition).evidence?.(result); // no rule: the engine never judges
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a fake's JSON body, edited in place
type Body = any;

/** The fake's own answer, with its JSON body (a copy) changed by `change`. */
function altered(route: FakeRoute | undefined, change: (body: Body) => unknown): FakeHandler {
  assert.ok(route, 'the fake has that route');
  return async (req) => {
    const answer = typeof route === 'function' ? await route(req) : route;
    const body = structuredClone(answer.json) as Body;
    change(body); // edits in place; what it returns is ignored
    return { ...answer, json: body };
  };
}

const malicious = (reason: string): Evidence => ({ level: 'malicious', reason });
const suspicious = (reason: string): Evidence => ({ level: 'suspicious', reason });
const clean = (reason: string): Evidence => ({ level: 'clean', reason });

describe('evidence of each public-intelligence engine, from its fake', () => {
  test('provider_24 virustotal: >= 3 detections malicious, 1-2 suspicious, 0 of N clean, no analysis nothing', async () => {
    const routes = vtFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(virustotal, { ...vtFake.fakeSettings(server.url), api_key: KEY });
    const ipRoute = `GET ${vtFake.PREFIX}/ip_addresses/*`;
    const withStats = (stats: Record<string, number>) => (req: { path: string }) => ({ json: vtFake.ipAddress(req.path.split('/').pop()!, stats) });

    assert.deepEqual(await run('93.184.215.14', 'IPv4'), malicious('5/94 engines flag it, 1 suspicious'));
    assert.deepEqual(await run('44d88612fea8a8f36de82e1278abb02f', 'MD5'), malicious('61/76 engines flag it'));
    server.route(ipRoute, withStats({ malicious: 3, suspicious: 0, undetected: 20, harmless: 70 }));
    assert.deepEqual(await run('93.184.215.14', 'IPv4'), malicious('3/93 engines flag it'));
    server.route(ipRoute, withStats({ malicious: 2, suspicious: 0, undetected: 20, harmless: 70 }));
    assert.deepEqual(await run('93.184.215.14', 'IPv4'), suspicious('2/92 engines flag it'));
    server.route(ipRoute, withStats({ malicious: 0, suspicious: 2, undetected: 20, harmless: 70 }));
    assert.deepEqual(await run('93.184.215.14', 'IPv4'), suspicious('0/92 engines flag it, 2 suspicious'));
    server.route(ipRoute, withStats({ malicious: 0, suspicious: 1, undetected: 24, harmless: 64, timeout: 0 }));
    assert.deepEqual(await run('93.184.215.14', 'IPv4'), clean('0/89 engines flag it, 1 suspicious'));
    // Never analysed (no stats): 0/0 judges nothing; unknown to VirusTotal (null): nothing.
    server.route(ipRoute, withStats({}));
    assert.equal(await run('93.184.215.14', 'IPv4'), undefined);
    server.route(ipRoute, reply.json(vtFake.NOT_FOUND, 404));
    assert.equal(await run('93.184.215.14', 'IPv4'), undefined);
    assert.equal(evidenceOf(virustotal, { detection_ratio: '5/94', link: 'x', community_score: 0 }), undefined);
  });

  test('provider_03 abuseipdb: confidence >= 75 malicious, >= 25 suspicious, below clean with the reports', async () => {
    const routes = abuseipdbFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(abuseipdb, { ...abuseipdbFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /abuseipdb/api/v2/check';
    const score = (n: number, extra: Record<string, unknown> = {}) =>
      server.route(path, altered(routes[path], (body) => void Object.assign(body.data, { abuseConfidenceScore: n, ...extra })));

    assert.deepEqual(await run('167.99.1.1', 'IPv4'), malicious('confidence 87%, 214 reports'));
    score(75, { isTor: true });
    assert.deepEqual(await run('167.99.1.1', 'IPv4'), malicious('confidence 75%, 214 reports, Tor exit'));
    score(74);
    assert.deepEqual(await run('167.99.1.1', 'IPv4'), suspicious('confidence 74%, 214 reports'));
    score(25);
    assert.deepEqual(await run('167.99.1.1', 'IPv4'), suspicious('confidence 25%, 214 reports'));
    score(24, { totalReports: 1 });
    assert.deepEqual(await run('167.99.1.1', 'IPv4'), clean('confidence 24%, 1 report'));
    score(0, { totalReports: 0, lastReportedAt: null, isWhitelisted: true });
    assert.deepEqual(await run('8.8.8.8', 'IPv4'), clean('confidence 0%, 0 reports, whitelisted'));
    assert.equal(evidenceOf(abuseipdb, null), undefined);
    assert.equal(evidenceOf(abuseipdb, { ip_address: '8.8.8.8', reports: 3 }), undefined);
  });

  test('provider_02 alienvault: >= 5 pulses naming malware or an adversary malicious, any pulse suspicious, none clean', async () => {
    const routes = alienvaultFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(alienvault, { ...alienvaultFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /alienvault/api/v1/indicators/*';
    const change = (edit: (info: Body) => void) => server.route(path, altered(routes[path], (body) => void edit(body.pulse_info)));

    assert.deepEqual(await run('45.155.205.66', 'IPv4'), suspicious('in 2 OTX pulses naming Emotet, Apnic, Mirai'));
    change((info) => void (info.count = 12));
    assert.deepEqual(await run('45.155.205.66', 'IPv4'), malicious('in 12 OTX pulses naming Emotet, Apnic, Mirai'));
    change((info) => {
      info.count = 12;
      info.related = {};
      for (const pulse of info.pulses) Object.assign(pulse, { malware_families: [], adversary: '' });
    });
    assert.deepEqual(await run('45.155.205.66', 'IPv4'), suspicious('in 12 OTX pulses'));
    change((info) => Object.assign(info, { count: 0, pulses: [], related: {} }));
    assert.deepEqual(await run('45.155.205.66', 'IPv4'), clean('in no OTX pulse'));
    server.route(path, reply.json({ detail: 'Not found.' }, 404));
    assert.equal(await run('45.155.205.66', 'IPv4'), undefined);
  });

  test('provider_05 criminalip: Dangerous/Critical malicious, Moderate or an anonymiser/scanner flag suspicious, Safe/Low clean', async () => {
    const routes = criminalipFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(criminalip, { ...criminalipFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /criminalip/v2/feature/ip/suspicious-info';
    const change = (edit: (body: Body) => void) => server.route(path, altered(routes[path], edit));

    // The fake: inbound Low, outbound Safe, 5 abuse records, cloud + IDS flags (which do not count).
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), clean('inbound Low, outbound Safe · 5 abuse records'));
    change((body) => void (body.score.outbound = 'Dangerous'));
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), malicious('inbound Low, outbound Dangerous · 5 abuse records'));
    change((body) => void (body.score = { inbound: 'Critical', outbound: 'Safe' }));
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), malicious('inbound Critical, outbound Safe · 5 abuse records'));
    change((body) => void (body.score.inbound = 'Moderate'));
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), suspicious('inbound Moderate, outbound Safe · 5 abuse records'));
    change((body) => Object.assign(body.issues, { is_tor: true, is_scanner: true }));
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), suspicious('inbound Low, outbound Safe · Tor · scanner · 5 abuse records'));
    change((body) => Object.assign(body, { score: null, abuse_record_count: 0, issues: { ...body.issues, is_vpn: true } }));
    assert.deepEqual(await run('1.1.1.1', 'IPv4'), suspicious('VPN'));
    // No level and no flag that counts: nothing to judge on.
    change((body) => Object.assign(body, { score: null }));
    assert.equal(await run('1.1.1.1', 'IPv4'), undefined);
    assert.equal(await run('2001:db8::1', 'IPv6'), undefined); // IPv4 only: null
  });

  test('provider_22 threatfox: any IOC malicious, none clean ("not listed"), not asked nothing; older catalog alike', async () => {
    const server = await fake(threatfoxFake.fakeRoutes({ keyless: true }));
    const run = judge(threatfox, { ...threatfoxFake.fakeSettings(server.url), api_key: KEY });
    const older = new Catalog([threatfox as unknown as EngineDefinition], 'older').find('threatfox')!;
    assert.notEqual(older.run, threatfox.run);
    const runOlder = judge(older, threatfoxFake.fakeSettings(server.url));

    assert.deepEqual(await run('evil.example.com', 'FQDN'), malicious('3 IOCs: Cobalt Strike, Emotet'));
    assert.deepEqual(await runOlder('185.220.101.4', 'IPv4'), malicious('3 IOCs: Cobalt Strike, Emotet'));
    server.route(`POST ${threatfoxFake.PATH}`, reply.json(threatfoxFake.NO_RESULT));
    assert.deepEqual(await run('example.org', 'FQDN'), clean('not listed'));
    assert.deepEqual(await runOlder('example.org', 'FQDN'), clean('not listed'));
    // null only for an observable ThreatFox is never asked about: no hit was looked for.
    assert.equal(await run('d41d8cd98f00b204e9800998ecf8427e', 'MD5'), undefined);
  });

  test('provider_17 phishtank: verified phish malicious, unverified suspicious, verified-not-phish and absent clean', async () => {
    const routes = intelRoutes();
    const server = await fake(routes);
    const run = judge(phishtank, intelSettings(server.url).provider_17!);
    const path = 'POST /phishtank';
    const entry = (flags: Record<string, unknown>) => server.route(path, altered(routes[path], (body) => {
      Object.assign(body.results, {
        in_database: true, phish_id: 9127384, phish_detail_page: 'http://www.phishtank.com/phish_detail.php?phish_id=9127384',
        verified_at: '2026-01-09T10:00:00+00:00', ...flags,
      });
    }));

    assert.deepEqual(await run('https://login.example.com/signin', 'URL'), clean('not in PhishTank'));
    entry({ verified: true, valid: true });
    assert.deepEqual(await run('https://login.example.com/signin', 'URL'), malicious('verified phish (phish #9127384)'));
    entry({ in_database: 'y', verified: 'y', valid: 'y' }); // PhishTank's older "y"/"n" flags
    assert.deepEqual(await run('login.example.com', 'FQDN'), malicious('verified phish (phish #9127384)'));
    entry({ verified: false, valid: null, verified_at: null });
    assert.deepEqual(await run('https://login.example.com/signin', 'URL'), suspicious('reported, not verified yet (phish #9127384)'));
    entry({ verified: true, valid: false });
    assert.deepEqual(await run('https://login.example.com/signin', 'URL'), clean('verified, not a phish (phish #9127384)'));
    assert.equal(evidenceOf(phishtank, null), undefined);
  });

  test('safe_browsing: any match malicious, no match clean, not asked nothing', async () => {
    const routes = safeBrowsingFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(safeBrowsing, { ...safeBrowsingFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /google_safe_browsing/v5alpha1/urls:search';

    assert.deepEqual(await run('http://evil.example/login', 'URL'), malicious('listed: SOCIAL_ENGINEERING'));
    server.route(path, (req) => ({ json: safeBrowsingFake.searchUrlsResponse(req.query.getAll('urls'), ['UNWANTED_SOFTWARE', 'MALWARE']) }));
    assert.deepEqual(await run('evil.example', 'FQDN'), malicious('listed: MALWARE, UNWANTED_SOFTWARE'));
    server.route(path, reply.json({}));
    assert.deepEqual(await run('example.org', 'FQDN'), clean('not listed'));
    assert.equal(await run('d41d8cd98f00b204e9800998ecf8427e', 'MD5'), undefined);
  });

  test('provider_23 urlscan: scan counts never judge', () => {
    assert.equal((urlscan as unknown as EngineDefinition).evidence, undefined, 'no rule declared');
    assert.equal(evidenceOf(urlscan, { scan_count: 0, top_domains: [], link: 'x', last_scan: null }), undefined);
    assert.equal(evidenceOf(urlscan, null), undefined);
  });

  test('bad_asn: listed with risk >= 70 malicious, other listings suspicious, unlisted clean', async () => {
    const server = await fake(intelRoutes());
    const dataDir = tempDir('oas-verdict-');
    closers.push(() => removeTempDir(dataDir));
    resetBadAsnMemory();
    const settings = intelSettings(server.url).bad_asn!;
    const asn = (number: number, org: string) =>
      judge(badAsn, settings, { dataDir, dependencies: { provider_11: ipapiAnswer('45.155.205.66', number, org) } })('45.155.205.66', 'IPv4');

    // Spamhaus ASN-DROP alone, RU: 50 + 10 + 10.
    assert.deepEqual(await asn(203999, 'BADHOST-AS'), malicious('AS203999 listed: Spamhaus ASN-DROP, risk 70/100'));
    // Spamhaus ASN-DROP alone, US: 60.
    assert.deepEqual(await asn(398722, 'SCANFARM-LLC'), suspicious('AS398722 listed: Spamhaus ASN-DROP, risk 60/100'));
    assert.deepEqual(await asn(200019, 'ALEXHOST SRL'), malicious('AS200019 listed: Spamhaus ASN-DROP + brianhama + LETHAL-FORENSICS, risk 90/100'));
    // A cloud provider abused now and then: never more than suspicious.
    assert.deepEqual(await asn(16509, 'Amazon.com, Inc.'), suspicious('AS16509 listed: brianhama, risk 20/100 (legitimate provider, may be abused)'));
    assert.deepEqual(await asn(15169, 'Google LLC'), clean('AS15169 not listed'));
    assert.equal(evidenceOf(badAsn, null), undefined);
  });

  test('provider_11 ipapi: Tor, VPN, proxy or abuser flag suspicious, no flag nothing', async () => {
    const routes = intelRoutes();
    const server = await fake(routes);
    const run = judge(ipapi, intelSettings(server.url).provider_11!);
    const path = 'POST /ipapi';
    const change = (edit: (body: Body) => void) => server.route(path, altered(routes[path], edit));

    assert.equal(await run('8.8.8.8', 'IPv4'), undefined); // datacenter only
    change((body) => Object.assign(body, { is_vpn: true, vpn: { service: 'NordVPN', url: 'https://nordvpn.com', type: 'exit_node' } }));
    assert.deepEqual(await run('89.187.1.1', 'IPv4'), suspicious('flagged VPN (NordVPN)'));
    change((body) => Object.assign(body, { is_tor: true, is_proxy: true }));
    assert.deepEqual(await run('185.220.101.4', 'IPv4'), suspicious('flagged Tor, proxy'));
    server.route(path, (req) => ({ json: ipapiAnswer((JSON.parse(req.body) as { q: string }).q, 203999, 'BADHOST-AS') }));
    assert.deepEqual(await run('45.155.205.66', 'IPv4'), suspicious('flagged abuser'));
  });

  test('provider_13 ipquery: Tor, VPN or proxy flag or risk >= 75 suspicious, else nothing; older catalog alike', async () => {
    const routes = intelRoutes();
    const server = await fake(routes);
    const run = judge(ipquery, intelSettings(server.url).provider_13!);
    const path = 'GET /ipquery/*';
    const change = (edit: (body: Body) => void) => server.route(path, altered(routes[path], edit));

    assert.equal(await run('8.8.8.8', 'IPv4'), undefined);
    change((body) => void (body.risk.is_tor = true));
    assert.deepEqual(await run('185.220.101.4', 'IPv4'), suspicious('flagged Tor, risk 0/100'));
    change((body) => Object.assign(body.risk, { is_vpn: true, is_proxy: true, risk_score: 80 }));
    assert.deepEqual(await run('89.187.1.1', 'IPv4'), suspicious('flagged VPN, proxy, risk 80/100'));
    change((body) => void (body.risk.risk_score = 75));
    assert.deepEqual(await run('45.155.205.66', 'IPv4'), suspicious('risk 75/100'));
    change((body) => void (body.risk.risk_score = 74));
    assert.equal(await run('45.155.205.66', 'IPv4'), undefined);
    const older = new Catalog([ipquery as unknown as EngineDefinition], 'older').find('ipquery')!;
    assert.equal(older.evidence, ipquery.evidence);
  });

  test('provider_25 webscout: Tor, VPN or proxy flag or observed behaviour suspicious, else nothing', async () => {
    const routes = webscoutFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(webscout, { ...webscoutFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /webscout/query/ip/*';
    const change = (edit: (body: Body) => void) => server.route(path, altered(routes[path], edit));

    assert.deepEqual(await run('1.1.1.1', 'IPv4'), suspicious('behaviour scanner, botnet'));
    change((body) => void (body.data.osint.services = []));
    assert.equal(await run('1.1.1.1', 'IPv4'), undefined);
    change((body) => Object.assign(body.data, { osint: { services: [] }, anonymization: { proxy: true, tor: true, vpn: false } }));
    assert.deepEqual(await run('185.220.101.4', 'IPv4'), suspicious('flagged Tor, proxy'));
    change((body) => void (body.data.anonymization.vpn = true));
    assert.deepEqual(await run('89.187.1.1', 'IPv4'), suspicious('flagged VPN · behaviour scanner, botnet'));
  });

  test('provider_12 ipinfo: owner and place never judge', () => {
    assert.equal((ipinfo as unknown as EngineDefinition).evidence, undefined, 'no rule declared');
    assert.equal(evidenceOf(ipinfo, null), undefined);
  });

  test('provider_21 spur: a tunnel or a risk suspicious, not anonymous nothing; the older page too', async () => {
    const server = await fake(spurFake.fakeRoutes());
    const run = judge(spur, { ...spurFake.fakeSettings(server.url), api_key: KEY });
    const older = new Catalog([spur as unknown as EngineDefinition], 'older').find('spur')!;
    assert.notEqual(older.run, spur.run);
    const runOlder = judge(older, spurFake.fakeOlderSettings(server.url));

    assert.deepEqual(await run('89.187.1.1', 'IPv4'), suspicious('tunnel NORD_VPN (VPN) · risks TUNNEL, CALLBACK_PROXY'));
    assert.deepEqual(await run('2003:e1::1', 'IPv6'), suspicious('tunnel LUMINATI_PROXY (PROXY) · risks CALLBACK_PROXY, GEO_MISMATCH'));
    assert.equal(await run('8.8.8.8', 'IPv4'), undefined);
    assert.deepEqual(await runOlder('89.187.1.1', 'IPv4'), suspicious('tunnel NordVPN'));
    assert.equal(await runOlder('8.8.8.8', 'IPv4'), undefined);
    // The reference's stand-in for a failed call is no answer.
    assert.equal(evidenceOf(spur, { link: 'https://spur.us/context/1.2.3.4', tunnels: 'Unknown - Behind Captcha' }), undefined);
  });

  test('provider_20 shodan: c2/malware/compromised tag malicious, tor/vpn/proxy/scanner tag suspicious, ports and CVEs nothing', async () => {
    const routes = shodanFake.fakeRoutes();
    const server = await fake(routes);
    const run = judge(shodan, { ...shodanFake.fakeSettings(server.url), api_key: KEY });
    const path = 'GET /shodan/shodan/host/*';
    const tags = (list: string[]) => server.route(path, altered(routes[path], (body) => void (body.tags = list)));

    assert.equal(await run('203.0.113.7', 'IPv4'), undefined); // tag "cloud", one CVE
    tags(['self-signed', 'C2']);
    assert.deepEqual(await run('203.0.113.7', 'IPv4'), malicious('tagged c2'));
    tags(['cloud', 'vpn']);
    assert.deepEqual(await run('203.0.113.7', 'IPv4'), suspicious('tagged vpn'));
    server.route(path, reply.json({ error: 'No information available for that IP.' }, 404));
    assert.equal(await run('203.0.113.7', 'IPv4'), undefined);
  });
});

/**
 * A threat list whose empty answer is `null` (the contract's "nothing to report", evidence of
 * clean): with it, an error recorded as `null` would read as clean if verdictOf counted errors.
 */
const nullList = defineEngine<{ listed: true }>({
  id: 'null_list',
  service: 'null_list',
  label: 'Null list',
  description: 'test list: GET {base_url}/<value> answers {"listed": true}, 404 when not listed',
  tags: ['IP'],
  types: ['IPv4'],
  defaults: { timeout_ms: 5000 },
  summary: () => 'listed',
  evidence: (result) => (result ? { level: 'malicious', reason: 'listed' } : { level: 'clean', reason: 'not listed' }),
  async run(observable, ctx) {
    const response = await ctx.http.request(`${String(ctx.settings.base_url)}/${observable.value}`, { acceptStatus: [404] });
    return response.status === 404 ? null : { listed: true };
  },
});

describe('verdictOf over results the runner produced', () => {
  const engines = [virustotal, threatfox, abuseipdb, ipinfo, urlscan, spur, phishtank, nullList].map((e) => e as unknown as EngineDefinition);

  async function analyze(routes: Record<string, FakeRoute>, value: string, type: ObservableType, names: string[]) {
    const server = await fake(routes);
    const intel = intelSettings(server.url);
    const harness = runnerHarness(engines, {
      settings: {
        provider_24: { ...vtFake.fakeSettings(server.url), api_key: KEY, retries: 0 },
        provider_22: { ...threatfoxFake.fakeSettings(server.url), api_key: KEY, retries: 0 },
        provider_03: { ...abuseipdbFake.fakeSettings(server.url), api_key: KEY, retries: 0 },
        provider_12: { ...ipinfoFake.fakeSettings(server.url), api_key: KEY, retries: 0 },
        provider_21: { ...spurFake.fakeSettings(server.url), api_key: KEY, retries: 0 },
        provider_23: { ...intel.provider_23, retries: 0 },
        provider_17: { ...intel.provider_17, retries: 0 },
        null_list: { base_url: `${server.url}/null_list`, retries: 0 },
      },
    });
    closers.push(() => harness.close());
    const [result] = await harness.analyze([{ value, type }], names);
    assert.ok(result);
    return { result, catalog: harness.catalog };
  }

  const allRoutes = () => ({
    ...vtFake.fakeRoutes(), ...threatfoxFake.fakeRoutes(), ...abuseipdbFake.fakeRoutes(), ...ipinfoFake.fakeRoutes(),
    ...spurFake.fakeRoutes(), ...intelRoutes(),
  });

  test('the most severe evidence wins; one reason per judging engine, by result key, most severe first', async () => {
    const routes = { ...allRoutes(), [`POST ${threatfoxFake.PATH}`]: reply.json(threatfoxFake.NO_RESULT) };
    const { result, catalog } = await analyze(routes, '89.187.1.1', 'IPv4', ['provider_22', 'spur', 'ipinfo', 'virustotal', 'urlscan']);
    assert.equal(result.errors, undefined);
    assert.deepEqual(verdictOf(result, catalog), {
      verdict: 'malicious',
      reasons: [
        'virustotal: 5/94 engines flag it, 1 suspicious',
        'spur: tunnel NORD_VPN (VPN) · risks TUNNEL, CALLBACK_PROXY',
        'provider_22: not listed',
      ],
    });
  });

  test('an engine error never counts, least of all as clean', async () => {
    const routes = {
      ...allRoutes(),
      [`GET ${vtFake.PREFIX}/ip_addresses/*`]: reply.status(500),
      [`POST ${threatfoxFake.PATH}`]: reply.status(502),
      'GET /abuseipdb/api/v2/check': reply.status(503),
    };
    const failed = await analyze({ ...routes, 'GET /null_list/*': reply.status(500) }, '8.8.8.8', 'IPv4', ['provider_24', 'provider_22', 'provider_03', 'provider_12', 'null_list']);
    assert.deepEqual(Object.keys(failed.result.errors ?? {}).sort(), ['null_list', 'provider_03', 'provider_22', 'provider_24']);
    assert.equal(failed.result.null_list, null);
    assert.deepEqual(verdictOf(failed.result, failed.catalog), { verdict: 'unknown', reasons: [] });

    const partly = await analyze({ ...allRoutes(), [`GET ${vtFake.PREFIX}/ip_addresses/*`]: reply.status(500), [`POST ${threatfoxFake.PATH}`]: reply.json(threatfoxFake.NO_RESULT) },
      '8.8.8.8', 'IPv4', ['provider_24', 'provider_22']);
    assert.deepEqual(Object.keys(partly.result.errors ?? {}), ['provider_24']);
    assert.deepEqual(verdictOf(partly.result, partly.catalog), { verdict: 'clean', reasons: ['provider_22: not listed'] });

    // The same null without an error is the list's answer.
    const answered = await analyze({ ...allRoutes(), 'GET /null_list/*': reply.status(404) }, '8.8.8.8', 'IPv4', ['null_list', 'ipinfo']);
    assert.equal(answered.result.errors, undefined);
    assert.deepEqual(verdictOf(answered.result, answered.catalog), { verdict: 'clean', reasons: ['null_list: not listed'] });
  });

  test('unknown when nothing judged: engines that do not judge, or that were not asked about this type', async () => {
    const hash = await analyze(allRoutes(), 'd41d8cd98f00b204e9800998ecf8427e', 'MD5', ['provider_22', 'phishtank', 'urlscan']);
    assert.equal(hash.result.provider_22, null);
    assert.equal(hash.result.phishtank, null);
    assert.deepEqual(verdictOf(hash.result, hash.catalog), { verdict: 'unknown', reasons: [] });

    const ip = await analyze(allRoutes(), '8.8.8.8', 'IPv4', ['ipinfo', 'spur', 'urlscan']);
    assert.ok(ip.result.ipinfo && ip.result.spur && ip.result.urlscan);
    assert.deepEqual(verdictOf(ip.result, ip.catalog), { verdict: 'unknown', reasons: [] });
  });

  test('suspicious over clean; the older catalog judges its own result shapes', async () => {
    const routes = { ...allRoutes(), [`POST ${threatfoxFake.PATH}`]: reply.json(threatfoxFake.NO_RESULT) };
    const { result, catalog } = await analyze(routes, '89.187.1.1', 'IPv4', ['threatfox', 'spur']);
    assert.deepEqual(verdictOf(result, catalog), {
      verdict: 'suspicious',
      reasons: ['spur: tunnel NORD_VPN (VPN) · risks TUNNEL, CALLBACK_PROXY', 'threatfox: not listed'],
    });

    const older = new Catalog(engines, 'older');
    const server = await fake(spurFake.fakeRoutes());
    const page = engineHarness(older.find('spur')!, { settings: { ...spurFake.fakeOlderSettings(server.url), retries: 0 } });
    closers.push(() => page.close());
    const olderResult = { observable: '89.187.1.1', type: 'IPv4' as const, reversed_success: false, spur: await page.run('89.187.1.1', 'IPv4') };
    assert.deepEqual(verdictOf(olderResult, older), { verdict: 'suspicious', reasons: ['spur: tunnel NordVPN'] });
  });
});
