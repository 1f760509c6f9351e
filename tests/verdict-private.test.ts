/**
 * Verdict rules of the engines that ask your own tools and private feeds (CrowdStrike, Defender,
 * MISP, OpenCTI, DFIR-IRIS, Spectra Analyze, Rösti, MISP-feedback, Ransomware.live, Hudson Rock)
 * and of the ioc.one search engines (which never judge): each engine runs against its loopback
 * fake, as in tests/engines/<service>.test.ts, and its answer goes through the engine's own
 * `evidence`, then through `verdictOf` as the runner's results do.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crowdstrike from '../engines/crowdstrike.js';
import dfirIris from '../engines/dfir_iris.js';
import hudsonrock from '../engines/hudsonrock.js';
import iocOneHtml from '../engines/ioc_one_html.js';
import iocOnePdf from '../engines/ioc_one_pdf.js';
import mde from '../engines/mde.js';
import misp from '../engines/misp.js';
import mispFeedback from '../engines/misp_feedback.js';
import opencti from '../engines/opencti.js';
import ransomwareLive from '../engines/ransomware_live.js';
import rlAnalyze from '../engines/rl_analyze.js';
import rosti from '../engines/rosti.js';
import { Catalog } from '../src/engine/catalog.js';
import type { EngineDefinition } from '../src/engine/contract.js';
import type { ObservableType } from '../src/observables/types.js';
import type { ObservableResult } from '../src/runner/result.js';
import type { Evidence } from '../src/engine/contract.js';
import { verdictOf } from '../src/verdict/verdict.js';
import * as falcon from './fakes/crowdstrike.js';
import * as iris from './fakes/dfir_iris.js';
import { reply, startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { intelRoutes, intelSettings } from './fakes/intel.js';
import * as defender from './fakes/mde.js';
import * as mispFake from './fakes/misp.js';
import * as feedback from './fakes/misp_feedback.js';
import * as cti from './fakes/opencti.js';
import * as ransomware from './fakes/ransomware_live.js';
import * as rl from './fakes/rl_analyze.js';
import * as rostiFake from './fakes/rosti.js';
import { engineHarness, type EngineHarness } from './helpers/engine.js';

const KEY = 'verdict-test-key-0123456789';

/** Defender's data with two more files: one it calls malware, one potentially unwanted. */
const PUA_SHA256 = 'a'.repeat(64);
const DEFENDER_DATA: defender.MdeData = {
  stats: {
    ...defender.MDE_DATA.stats,
    [`files/${PUA_SHA256}`]: { sha256: PUA_SHA256, organizationPrevalence: 4, orgPrevalence: '4', orgFirstSeen: '2026-01-02T00:00:00Z', orgLastSeen: '2026-01-03T00:00:00Z' },
  },
  files: {
    ...defender.MDE_DATA.files,
    [defender.FILES.md5]: { ...defender.MDE_DATA.files[defender.FILES.sha1], md5: defender.FILES.md5, determinationType: 'Malware', determinationValue: 'Virus:DOS/EICAR_Test_File' },
    [PUA_SHA256]: { ...defender.MDE_DATA.files[defender.FILES.sha1], sha256: PUA_SHA256, determinationType: 'Pua', determinationValue: 'PUA:Win32/Presenoker' },
  },
};

/** Falcon's data with one more indicator that has no malicious_confidence at all. */
const FALCON_DATA: falcon.FalconData = {
  devices: falcon.FALCON_DATA.devices,
  intel: {
    ...falcon.FALCON_DATA.intel,
    'domain_ungraded.example': { ...falcon.FALCON_DATA.intel['domain_login.phish.example']!, id: 'domain_ungraded.example', indicator: 'ungraded.example', malicious_confidence: undefined },
  },
};

/** OpenCTI's EICAR indicator with a score too low to judge. */
const LOW_SCORE_INDICATORS: Record<string, cti.FakeIndicator> = {
  ...cti.INDICATORS,
  'a1b2c3d4-0000-4000-8000-000000000004': { ...cti.INDICATORS['a1b2c3d4-0000-4000-8000-000000000004']!, x_opencti_score: 10 },
};

/** E-mail search of an infected address (engines.md 5.12's example). */
const INFECTED_EMAIL = {
  message: 'This email address is associated with a computer that was infected by an info-stealer.',
  stealers: [{
    computer_name: 'DESKTOP-1A2B', operating_system: 'Windows 10 Pro x64', date_compromised: '2024-03-02T10:11:12.000Z',
    stealer_family: 'RedLine', malware_path: 'C:\\Users\\x\\AppData\\Local\\Temp\\a.exe', antiviruses: ['Windows Defender'],
    ip: '81.2.**.**', top_passwords: ['P••••••'], top_logins: ['j••••@example.com'], total_corporate_services: 2, total_user_services: 17,
  }],
  total_corporate_services: 2,
  total_user_services: 17,
};

/** Domain search with infected users (customers) but no infected employee. */
const USERS_ONLY_DOMAIN = {
  total: 40, totalStealers: 40, employees: 0, users: 40, third_parties: 0, totalUrls: 3,
  last_employee_compromised: null, last_user_compromised: '2026-01-05T00:00:00.000Z',
  stealerFamilies: { Lumma: 40, total: 40 }, data: { all_urls: [], clients_urls: [], employees_urls: [] },
};

let server: FakeHttpServer;
const harnesses: EngineHarness[] = [];

before(async () => {
  const falconFake = falcon.falconFake({ prefix: '/crowdstrike', data: FALCON_DATA });
  const defenderFake = defender.mdeFake({ data: DEFENDER_DATA });
  server = await startFakeHttp({
    ...falconFake.routes,
    ...defenderFake.routes,
    ...mispFake.fakeRoutes({ key: KEY }),
    ...cti.fakeRoutes({ key: KEY }),
    ...cti.fakeRoutes({ key: KEY, prefix: '/opencti-low', indicators: LOW_SCORE_INDICATORS }),
    ...iris.fakeRoutes({ key: KEY }),
    ...rl.fakeRoutes({ key: KEY }),
    ...rostiFake.fakeRoutes(),
    // The fake's second IOC alone (medium risk, not for detection), and Rösti's empty answer.
    'GET /rosti-context/v2/iocs': (req) => reply.json({ data: [(rostiFake.iocs(req.query.get('q') ?? '').data as unknown[])[1]], meta: { total: 1, has_more: false } }),
    'GET /rosti-empty/v2/iocs': reply.json(rostiFake.EMPTY),
    ...feedback.fakeRoutes(),
    ...ransomware.fakeRoutes({ key: KEY }),
    ...intelRoutes(),
    'GET /hudson-infected/search-by-email': reply.json(INFECTED_EMAIL),
    'GET /hudson-users/search-by-domain': reply.json(USERS_ONLY_DOMAIN),
  });
});

after(async () => {
  for (const h of harnesses) await h.close();
  await server.close();
});

/** The engine's answer for `value` from its fake, with `settings` (the fake's URL prepended by the caller). */
async function answer<R>(engine: EngineDefinition<R>, value: string, type: ObservableType, settings: Record<string, unknown>): Promise<unknown> {
  const h = engineHarness(engine as EngineDefinition, { settings: { retries: 0, ...settings } });
  harnesses.push(h);
  return h.run(value, type);
}

/** Runs the engine on its fake, then its evidence rule on the answer. */
async function judge<R>(engine: EngineDefinition<R>, value: string, type: ObservableType, settings: Record<string, unknown>): Promise<{ result: unknown; evidence: Evidence | undefined }> {
  const result = await answer(engine, value, type, settings);
  assert.ok(engine.evidence, `${engine.id} declares evidence`);
  return { result, evidence: engine.evidence(result as R | null) };
}

/** Asserts the level and that the reason holds every fragment. */
function assertEvidence(evidence: Evidence | undefined, level: Evidence['level'], ...fragments: string[]): void {
  assert.ok(evidence, `expected ${level} evidence, got none`);
  assert.equal(evidence.level, level, `reason: ${evidence.reason}`);
  assert.doesNotMatch(evidence.reason, /[\r\n]/, 'one line');
  for (const fragment of fragments) assert.ok(evidence.reason.includes(fragment), `"${evidence.reason}" should mention "${fragment}"`);
}

const catalog = new Catalog([crowdstrike, mde, misp, opencti, dfirIris, rlAnalyze, rosti, mispFeedback, ransomwareLive, hudsonrock, iocOneHtml, iocOnePdf] as EngineDefinition[]);

function observableResult(value: string, type: ObservableType, engines: Record<string, unknown>, errors?: Record<string, string>): ObservableResult {
  return { observable: value, type, reversed_success: false, ...engines, ...(errors ? { errors } : {}) };
}

describe('provider_04 CrowdStrike', () => {
  const settings = () => ({ base_url: `${server.url}/crowdstrike`, client_id: 'verdict-client', client_secret: KEY });

  test('malicious: a Falcon Intelligence indicator of high confidence, with its actors, families and devices', async () => {
    const { evidence } = await judge(crowdstrike, 'malware-c2.example', 'FQDN', settings());
    assertEvidence(evidence, 'malicious', 'high malicious confidence', 'FANCYBEAR', 'Emotet', 'seen on 3 devices');
  });

  test('malicious: a file hash of high confidence', async () => {
    const { evidence } = await judge(crowdstrike, falcon.EICAR.sha256, 'SHA256', settings());
    assertEvidence(evidence, 'malicious', 'EICAR-Test-File');
  });

  test('suspicious: medium, low and unverified confidence, and an indicator without a grade', async () => {
    assertEvidence((await judge(crowdstrike, 'login.phish.example', 'FQDN', settings())).evidence, 'suspicious', 'medium malicious confidence');
    assertEvidence((await judge(crowdstrike, '45.155.205.66', 'IPv4', settings())).evidence, 'suspicious', 'low malicious confidence', 'WIZARDSPIDER');
    assertEvidence((await judge(crowdstrike, '2a03:b0c0:3:d0::1af:1', 'IPv6', settings())).evidence, 'suspicious', 'unverified');
    const ungraded = await judge(crowdstrike, 'ungraded.example', 'FQDN', settings());
    assert.equal((ungraded.result as { malicious_confidence: unknown }).malicious_confidence, null);
    assertEvidence(ungraded.evidence, 'suspicious', 'Falcon Intelligence indicator');
  });

  test('no evidence: seen on devices only (prevalence), not in Falcon Intelligence, or nothing to report', async () => {
    const seen = await judge(crowdstrike, 'example.com', 'FQDN', settings());
    assert.deepEqual(seen.result, { device_count: 12, link: (seen.result as { link: string }).link, indicator_found: false });
    assert.equal(seen.evidence, undefined);
    assert.equal((await judge(crowdstrike, 'unknown.example', 'FQDN', settings())).evidence, undefined);
    assert.equal(crowdstrike.evidence!(null), undefined);
  });
});

describe('provider_14 Microsoft Defender for Endpoint', () => {
  const settings = () => ({ ...defender.fakeSettings(server.url), client_id: 'verdict-client', client_secret: KEY });

  test('malicious: a file Defender determined as malware', async () => {
    const { evidence } = await judge(mde, defender.FILES.md5, 'MD5', settings());
    assertEvidence(evidence, 'malicious', 'Malware', 'Virus:DOS/EICAR_Test_File');
  });

  test('suspicious: a potentially unwanted application', async () => {
    const { evidence } = await judge(mde, PUA_SHA256, 'SHA256', settings());
    assertEvidence(evidence, 'suspicious', 'Pua', 'PUA:Win32/Presenoker');
  });

  test('clean: a file Defender determined clean', async () => {
    const { evidence } = await judge(mde, defender.FILES.sha1, 'SHA1', settings());
    assertEvidence(evidence, 'clean', 'Clean (Good)');
  });

  test('no evidence: prevalence of an IP or a domain, a file without determination, unknown to Defender', async () => {
    const ip = await judge(mde, '8.8.8.8', 'IPv4', settings());
    assert.equal((ip.result as { orgPrevalence: unknown }).orgPrevalence, 5120);
    assert.equal(ip.evidence, undefined);
    assert.equal((await judge(mde, 'example.com', 'FQDN', settings())).evidence, undefined);
    const unsigned = await judge(mde, defender.FILES.sha256, 'SHA256', settings());
    assert.equal((unsigned.result as { determinationType: unknown }).determinationType, 'Unknown');
    assert.equal(unsigned.evidence, undefined);
    const unknown = await judge(mde, 'nowhere.example', 'FQDN', settings());
    assert.equal(unknown.result, null);
    assert.equal(unknown.evidence, undefined);
  });
});

describe('provider_15 MISP', () => {
  const settings = () => ({ ...mispFake.fakeSettings(server.url), api_key: KEY });

  test('suspicious: attributes in events, never malicious (the result keeps no to_ids)', async () => {
    const { evidence } = await judge(misp, mispFake.KNOWN.IPv4, 'IPv4', settings());
    // Every attribute of the fake has to_ids: true, which the result does not carry.
    assert.ok(mispFake.ATTRIBUTES.every((a) => a.to_ids === true));
    assertEvidence(evidence, 'suspicious', '3 attributes in your MISP', 'latest event: Phishing kit infra', 'seen 2024-01-01 to 2024-06-01');
    assertEvidence((await judge(misp, mispFake.KNOWN.SHA256, 'SHA256', settings())).evidence, 'suspicious', '7 attributes');
  });

  test('no evidence: no attribute (your MISP not knowing it is no proof it is harmless)', async () => {
    const { result, evidence } = await judge(misp, '198.51.100.7', 'IPv4', settings());
    assert.equal((result as { count: number }).count, 0);
    assert.equal(evidence, undefined);
    assert.equal(misp.evidence!(null), undefined);
  });
});

describe('provider_16 OpenCTI', () => {
  const settings = (prefix = '/opencti') => ({ ...cti.fakeSettings(server.url, prefix), api_key: KEY });

  test('malicious: a live indicator scored 70 or more', async () => {
    const { evidence } = await judge(opencti, cti.KNOWN.FQDN, 'FQDN', settings());
    assertEvidence(evidence, 'malicious', 'indicator evil.example.com', 'score 80');
  });

  test('suspicious: a live indicator scored 30 to 69', async () => {
    assertEvidence((await judge(opencti, cti.KNOWN_URL, 'URL', settings())).evidence, 'suspicious', 'score 60');
    assertEvidence((await judge(opencti, cti.KNOWN.MD5, 'MD5', settings())).evidence, 'suspicious', 'EICAR test file', 'score 40');
  });

  test('no evidence: revoked, low score, no indicator, indicator gone, no match', async () => {
    const revoked = await judge(opencti, cti.KNOWN.IPv4, 'IPv4', settings());
    assert.equal((revoked.result as { x_opencti_score: number; revoked: boolean }).x_opencti_score, 100);
    assert.equal((revoked.result as { revoked: boolean }).revoked, true);
    assert.equal(revoked.evidence, undefined);
    assert.equal((await judge(opencti, cti.KNOWN.MD5, 'MD5', settings('/opencti-low'))).evidence, undefined);
    assert.equal((await judge(opencti, cti.KNOWN.IPv6, 'IPv6', settings())).evidence, undefined);
    assert.equal((await judge(opencti, cti.KNOWN.GHOST, 'FQDN', settings())).evidence, undefined);
    assert.equal((await judge(opencti, 'unknown.example', 'FQDN', settings())).evidence, undefined);
  });
});

describe('provider_06 DFIR-IRIS', () => {
  const settings = () => ({ ...iris.fakeSettings(server.url), api_key: KEY });

  test('suspicious: an IOC of your cases, naming them', async () => {
    const { evidence } = await judge(dfirIris, '185.220.101.4', 'IPv4', settings());
    assertEvidence(evidence, 'suspicious', 'IOC in 2 cases of your DFIR-IRIS', '#7', '#21');
  });

  test('no evidence: in no case', async () => {
    const { result, evidence } = await judge(dfirIris, '198.51.100.7', 'IPv4', settings());
    assert.equal(result, null);
    assert.equal(evidence, undefined);
  });
});

describe('provider_18 ReversingLabs Spectra Analyze', () => {
  const settings = () => ({ ...rl.fakeSettings(server.url), api_key: KEY });

  test('malicious: a sample classified malicious; an IP, a domain, a URL several sources flag', async () => {
    assertEvidence((await judge(rlAnalyze, rl.MALWARE_SHA256, 'SHA256', settings())).evidence, 'malicious', 'classified MALICIOUS', 'risk 10/10', '25/29', 'Win32.Trojan.Emotet');
    assertEvidence((await judge(rlAnalyze, '185.220.101.4', 'IPv4', settings())).evidence, 'malicious', '9/18 reputation sources malicious');
    // One malicious and four suspicious sources: the appliance's red too.
    assertEvidence((await judge(rlAnalyze, 'evil.example.com', 'FQDN', settings())).evidence, 'malicious', '1/17', '4 suspicious');
    assertEvidence((await judge(rlAnalyze, 'https://earsi.com/H1.zip', 'URL', settings())).evidence, 'malicious', '7/19');
  });

  test('suspicious: a sample classified suspicious; one or two sources flag it', async () => {
    assertEvidence((await judge(rlAnalyze, rl.SUSPICIOUS_MD5, 'MD5', settings())).evidence, 'suspicious', 'classified SUSPICIOUS');
    assertEvidence((await judge(rlAnalyze, '1.1.1.1', 'IPv4', settings())).evidence, 'suspicious', '2/15 reputation sources malicious');
    assertEvidence((await judge(rlAnalyze, 'http://phish.example.net/login?user=a b', 'URL', settings())).evidence, 'suspicious', '0/5', '2 suspicious');
  });

  test('clean: goodware; sources know it and none flags it', async () => {
    assertEvidence((await judge(rlAnalyze, rl.GOODWARE_SHA1, 'SHA1', settings())).evidence, 'clean', 'classified GOODWARE');
    assertEvidence((await judge(rlAnalyze, '2606:4700:4700::1111', 'IPv6', settings())).evidence, 'clean', '0/12 reputation sources flag it');
  });

  test('no evidence: no source knows it, a sample never scanned, an unknown sample', async () => {
    const nobody = await judge(rlAnalyze, '198.51.100.7', 'IPv4', settings());
    assert.deepEqual(nobody.result, {});
    assert.equal(nobody.evidence, undefined);
    assert.equal((await judge(rlAnalyze, rl.UNSCANNED_MD5, 'MD5', settings())).evidence, undefined);
    const unknown = await judge(rlAnalyze, 'b'.repeat(64), 'SHA256', settings());
    assert.equal(unknown.result, null);
    assert.equal(unknown.evidence, undefined);
  });
});

describe('provider_19 Rösti', () => {
  const settings = (prefix = rostiFake.PREFIX) => ({ base_url: `${server.url}${prefix}`, api_key: KEY });

  test('malicious: a high-risk IOC marked for detection', async () => {
    const { evidence } = await judge(rosti, 'evil.example.com', 'FQDN', settings());
    assertEvidence(evidence, 'malicious', '2 IOCs in 2 threat reports', 'r-2025-0042', 'c2', 'high risk', 'marked for detection');
  });

  test('suspicious: IOCs of lower risk or not for detection', async () => {
    const { evidence } = await judge(rosti, 'evil.example.com', 'FQDN', settings('/rosti-context/v2'));
    assertEvidence(evidence, 'suspicious', '1 IOC in 1 threat report', 'payload_delivery');
  });

  test('no evidence: no IOC', async () => {
    const { result, evidence } = await judge(rosti, 'evil.example.com', 'FQDN', settings('/rosti-empty/v2'));
    assert.equal((result as { count: number }).count, 0);
    assert.equal(evidence, undefined);
  });
});

describe('misp_feedback', () => {
  const settings = () => feedback.fakeSettings(server.url);

  test('clean: on a warning list, a likely false positive, naming the lists', async () => {
    assertEvidence((await judge(mispFeedback, feedback.KNOWN.IPv4.value, 'IPv4', settings())).evidence, 'clean',
      'on warning lists List of known IPv4 public DNS resolvers', 'likely false positive');
    assertEvidence((await judge(mispFeedback, feedback.KNOWN.SHA256.value, 'SHA256', settings())).evidence, 'clean', 'hashes');
    assertEvidence((await judge(mispFeedback, feedback.PRIVATE.IPv4.value, 'IPv4', settings())).evidence, 'clean',
      'on warning list List of RFC 1918 CIDR blocks: likely false positive');
  });

  test('no evidence: on no warning list', async () => {
    const { result, evidence } = await judge(mispFeedback, feedback.CLEAN.IPv4, 'IPv4', settings());
    assert.deepEqual(result, { status: 'CLEAN', warninglists: [] });
    assert.equal(evidence, undefined);
  });
});

describe('ransomware_live', () => {
  const settings = () => ({ ...ransomware.fakeSettings(server.url), api_key: KEY });

  test('suspicious: listed as a ransomware victim, said to be a victim and not an attacker', async () => {
    const { evidence } = await judge(ransomwareLive, 'example.com', 'FQDN', settings());
    assertEvidence(evidence, 'suspicious', 'listed as ransomware victim', 'Example Corp', 'lockbit3', 'play', 'latest 2025-03-14', 'a victim, not an attacker');
  });

  test('no evidence: not listed', async () => {
    const { result, evidence } = await judge(ransomwareLive, 'unlisted.example', 'FQDN', settings());
    assert.equal((result as { found: boolean }).found, false);
    assert.equal(evidence, undefined);
  });
});

describe('provider_08 Hudson Rock', () => {
  const settings = (path = '/hudsonrock') => ({ base_url: `${server.url}${path}` });

  test('suspicious: an e-mail address on infected computers; a domain with infected employees', async () => {
    assertEvidence((await judge(hudsonrock, 'jane.doe@example.com', 'Email', settings('/hudson-infected'))).evidence, 'suspicious',
      'on 1 infostealer-infected computer', 'RedLine', 'last 2024-03-02', 'credentials exposed');
    assertEvidence((await judge(hudsonrock, 'example.com', 'FQDN', intelSettings(server.url).provider_08!)).evidence, 'suspicious',
      '1 employee computer infected by infostealers', 'last 2025-09-12');
  });

  test('no evidence: an address on no infected computer; a domain with infected users only', async () => {
    const email = await judge(hudsonrock, 'john.roe@example.com', 'Email', settings());
    assert.deepEqual((email.result as { stealers: unknown[] }).stealers, []);
    assert.equal(email.evidence, undefined);
    const users = await judge(hudsonrock, 'shop.example', 'FQDN', settings('/hudson-users'));
    assert.equal((users.result as { users: number }).users, 40);
    assert.equal(users.evidence, undefined);
  });
});

describe('provider_09 / provider_10 ioc.one', () => {
  test('search hits are no evidence: the engines declare no rule, and an observable judged by them alone is unknown', async () => {
    assert.equal(iocOneHtml.evidence, undefined);
    assert.equal(iocOnePdf.evidence, undefined);
    const html = await answer(iocOneHtml, 'evil.example.com', 'FQDN', intelSettings(server.url).provider_09!);
    const pdf = await answer(iocOnePdf, 'evil.example.com', 'FQDN', intelSettings(server.url).provider_10!);
    assert.ok((html as { count: number }).count > 0);
    assert.ok((pdf as { count: number }).count > 0);
    assert.deepEqual(verdictOf(observableResult('evil.example.com', 'FQDN', { provider_09: html, provider_10: pdf }), catalog), { verdict: 'unknown', reasons: [] });
  });
});

describe('verdictOf over these engines', () => {
  test('a warning-list hit never hides malicious evidence; reasons most severe first, one per engine', async () => {
    const value = feedback.KNOWN.IPv4.value;
    const result = observableResult(value, 'IPv4', {
      misp_feedback: await answer(mispFeedback, value, 'IPv4', feedback.fakeSettings(server.url)),
      provider_18: await answer(rlAnalyze, '185.220.101.4', 'IPv4', { ...rl.fakeSettings(server.url), api_key: KEY }),
      provider_06: await answer(dfirIris, '185.220.101.4', 'IPv4', { ...iris.fakeSettings(server.url), api_key: KEY }),
      provider_14: await answer(mde, '8.8.8.8', 'IPv4', { ...defender.fakeSettings(server.url), client_id: 'verdict-client', client_secret: KEY }),
    });
    const { verdict, reasons } = verdictOf(result, catalog);
    assert.equal(verdict, 'malicious');
    assert.equal(reasons.length, 3, 'MDE prevalence gives no reason');
    assert.match(reasons[0]!, /^provider_18: 9\/18 reputation sources malicious/);
    assert.match(reasons[1]!, /^provider_06: IOC in 2 cases/);
    assert.match(reasons[2]!, /^misp_feedback: on warning lists .*likely false positive$/);
  });

  test('a warning list alone makes it clean; an engine error never counts', async () => {
    const value = feedback.KNOWN.IPv4.value;
    const hit = await answer(mispFeedback, value, 'IPv4', feedback.fakeSettings(server.url));
    assert.equal(verdictOf(observableResult(value, 'IPv4', { misp_feedback: hit }), catalog).verdict, 'clean');
    const failed = observableResult(value, 'IPv4', { misp_feedback: null, provider_16: null }, { misp_feedback: 'MISP-feedback: connection refused', provider_16: 'timeout' });
    assert.deepEqual(verdictOf(failed, catalog), { verdict: 'unknown', reasons: [] });
  });

  test('private sources that ran and found nothing leave the verdict unknown, never clean', async () => {
    const value = '198.51.100.7';
    const result = observableResult(value, 'IPv4', {
      provider_04: await answer(crowdstrike, value, 'IPv4', { base_url: `${server.url}/crowdstrike`, client_id: 'verdict-client', client_secret: KEY }),
      provider_15: await answer(misp, value, 'IPv4', { ...mispFake.fakeSettings(server.url), api_key: KEY }),
      provider_16: await answer(opencti, value, 'IPv4', { ...cti.fakeSettings(server.url), api_key: KEY }),
      provider_06: await answer(dfirIris, value, 'IPv4', { ...iris.fakeSettings(server.url), api_key: KEY }),
      provider_19: await answer(rosti, value, 'IPv4', { base_url: `${server.url}/rosti-empty/v2`, api_key: KEY }),
      misp_feedback: await answer(mispFeedback, value, 'IPv4', feedback.fakeSettings(server.url)),
    });
    assert.deepEqual(verdictOf(result, catalog), { verdict: 'unknown', reasons: [] });
  });
});

describe('never judged on missing fields', () => {
  test('partial or odd answers give no evidence instead of a guess', () => {
    assert.equal(crowdstrike.evidence!({ device_count: 4, link: 'x' } as never), undefined);
    assert.equal(mde.evidence!({ link: 'x', determinationType: 'Unknown' } as never), undefined);
    assert.equal(mde.evidence!({ link: 'x', determinationType: 'NotAvailable', determinationValue: '' } as never), undefined);
    assert.equal(misp.evidence!({ events: [{ title: 'x', url: null, timestamp: null }] } as never), undefined);
    assert.equal(opencti.evidence!({ entity_counts: { Indicator: 1 }, global_count: 1, search_link: 'x', latest_created_at: null, latest_indicator_link: 'x', latest_indicator_name: 'x', x_opencti_score: null, revoked: false, valid_from: null, valid_until: null, confidence: null }), undefined);
    // A score without the revoked flag: whether the indicator is live is unknown.
    assert.equal(opencti.evidence!({ entity_counts: { Indicator: 1 }, global_count: 1, search_link: 'x', latest_created_at: null, latest_indicator_link: 'x', latest_indicator_name: 'x', x_opencti_score: 90, revoked: null, valid_from: null, valid_until: null, confidence: null }), undefined);
    assert.equal(dfirIris.evidence!({ reports: 0, links: [] }), undefined);
    assert.equal(rlAnalyze.evidence!({ report_type: 'file', report_color: 'yellow', reports: 0, scanners: 0, classification: 'UNKNOWN', riskscore: 5, threats: [], link: 'x' }), undefined);
    assert.equal(rlAnalyze.evidence!({ report_type: 'network', link: 'x' } as never), undefined);
    assert.equal(rosti.evidence!({ count: 0, results: [], total: 12, has_more: true }), undefined);
    assert.equal(mispFeedback.evidence!({ status: 'HIT' } as never), undefined);
    assert.equal(ransomwareLive.evidence!({ found: true } as never), undefined);
    assert.equal(hudsonrock.evidence!({ total: 5 } as never), undefined);
  });
});

describe('reasons stay one line', () => {
  test('upstream text with line breaks (victim names, event titles, indicator names) is flattened', () => {
    const victim = { post_title: 'Evil\r\nCorp', group_name: 'lock\nbit', website: 'evil.example', discovered: '2025-01-02 03:04:05', permalink: null };
    const listed = ransomwareLive.evidence!({ found: true, count: 1, victims: [victim], search_url: 'x' });
    assertEvidence(listed, 'suspicious', 'Evil Corp', 'lock bit', 'latest 2025-01-02');
    const event = misp.evidence!({ count: 1, events: [{ title: 'Line one\nline two', url: null, timestamp: null }], link: 'x', first_seen: null, last_seen: null });
    assertEvidence(event, 'suspicious', 'latest event: Line one line two');
    const indicator = opencti.evidence!({ entity_counts: { Indicator: 1 }, global_count: 1, search_link: 'x', latest_created_at: null, latest_indicator_link: 'x', latest_indicator_name: 'a\n'.repeat(400), x_opencti_score: 75, revoked: false, valid_from: null, valid_until: null, confidence: null });
    assertEvidence(indicator, 'malicious');
    assert.ok(indicator!.reason.length <= 240);
  });
});
