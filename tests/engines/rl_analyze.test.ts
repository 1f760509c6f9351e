import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import engine, {
  fileColor, networkColor, quotePlus, rlAnalyzeDetails, rlAnalyzeLookup, rlAnalyzeSummary, rlPaths,
  type RlAnalyzeResult, type RlFileResult, type RlNetworkResult, type RlUrlResult,
} from '../../engines/rl_analyze.js';
import { defineEngine } from '../../src/engine/contract.js';
import { reply, sequence, startFakeHttp, type FakeHttpServer } from '../fakes/http.js';
import {
  DOMAIN_REPORTS, GOODWARE_SHA1, MALWARE_SHA256, SUSPICIOUS_MD5, UNSCANNED_MD5, applianceHandler, fakeRoutes, fakeSettings,
} from '../fakes/rl_analyze.js';
import { proxiedHarness, startFakeProxy, type FakeProxy } from '../fakes/proxy.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { KeyWatch, prefixHarnesses } from '../helpers/key-watch.js';
import { runnerHarness, type RunnerHarness } from '../helpers/runner.js';
import type { ObservableType } from '../../src/observables/types.js';

const KEY = 'RL-TOKEN-SECRET-4b7e9a0c2d';

const watch = new KeyWatch(KEY);

const EARSI = 'https://earsi.com/H1.zip';
const PHISH = 'http://phish.example.net/login?user=a b';

function typeOf(value: string): ObservableType {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(value)) return 'IPv4';
  if (value.includes(':') && !value.includes('/')) return 'IPv6';
  if (/^https?:\/\//.test(value)) return 'URL';
  if (/^[0-9a-f]{32}$/i.test(value)) return 'MD5';
  if (/^[0-9a-f]{40}$/i.test(value)) return 'SHA1';
  if (/^[0-9a-f]{64}$/i.test(value)) return 'SHA256';
  return 'FQDN';
}

describe('provider_18 declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'provider_18');
    assert.equal(engine.service, 'rl_analyze');
    assert.equal(engine.label, 'ReversingLabs Spectra Analyze');
    assert.deepEqual(engine.tags, ['domain', 'URL', 'IP', 'hash']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256']);
    assert.equal(engine.acceptsPrivateIp, false);
    assert.ok(engine.catalogs.includes('main'));
    assert.deepEqual(engine.credentials, [
      { setting: 'base_url', label: 'Appliance URL', env: ['RL_ANALYZE_URL'], secret: false },
      { setting: 'api_key', label: 'API key', env: ['RL_ANALYZE_API_KEY'] },
    ]);
    assert.deepEqual(engine.defaults, { timeout_ms: 5000 });
    assert.equal(engine.run, rlAnalyzeLookup);
    assert.equal(engine.summary, rlAnalyzeSummary);
    assert.equal(engine.details, rlAnalyzeDetails);
  });

  test('quotePlus is Python\'s quote_plus', () => {
    // Python: urllib.parse.quote_plus("https://a.b/x y?q=1&r=~!*'()")
    assert.equal(quotePlus("https://a.b/x y?q=1&r=~!*'()"), 'https%3A%2F%2Fa.b%2Fx+y%3Fq%3D1%26r%3D~%21%2A%27%28%29');
    assert.equal(quotePlus('https://earsi.com/H1.zip'), 'https%3A%2F%2Fearsi.com%2FH1.zip');
    assert.equal(quotePlus('é'), '%C3%A9');
  });

  test('API and link paths (engines.md 5.23)', () => {
    assert.deepEqual(rlPaths({ value: '1.1.1.1', type: 'IPv4' }), { kind: 'network', api: '/api/network-threat-intel/ip/1.1.1.1/report/', link: '/ip/1.1.1.1/analysis/ip/' });
    assert.deepEqual(rlPaths({ value: '2606:4700:4700::1111', type: 'IPv6' }), {
      kind: 'network', api: '/api/network-threat-intel/ip/2606:4700:4700::1111/report/', link: '/ip/2606:4700:4700::1111/analysis/ip/',
    });
    assert.deepEqual(rlPaths({ value: 'Evil.Example.com.', type: 'FQDN' }), {
      kind: 'network', api: '/api/network-threat-intel/domain/evil.example.com/', link: '/domain/evil.example.com/analysis/domain/',
    });
    assert.deepEqual(rlPaths({ value: EARSI, type: 'URL' }), {
      kind: 'url', api: '/api/network-threat-intel/url/?url=https%3A%2F%2Fearsi.com%2FH1.zip', link: '/url/https%3A%2F%2Fearsi.com%2FH1.zip/analysis/url/',
    });
    for (const [hash, type] of [[SUSPICIOUS_MD5, 'MD5'], [GOODWARE_SHA1, 'SHA1'], [MALWARE_SHA256, 'SHA256']] as const) {
      assert.deepEqual(rlPaths({ value: hash, type }), { kind: 'file', api: `/api/samples/v3/${hash}/classification/?av_scanners=1`, link: `/${hash}/` });
    }
    assert.equal(rlPaths({ value: 'a@b.example', type: 'Email' }), null);
  });

  test('colour rules', () => {
    assert.equal(networkColor(3, 0), 'red');
    assert.equal(networkColor(0, 4), 'red');
    assert.equal(networkColor(2, 3), 'yellow');
    assert.equal(networkColor(0, 1), 'yellow');
    assert.equal(networkColor(0, 0), 'green');
    assert.equal(fileColor('malicious', 3), 'red');
    assert.equal(fileColor('malicious', 2), 'yellow');
    assert.equal(fileColor('suspicious', 0), 'yellow');
    assert.equal(fileColor('unknown', 0), 'yellow');
    assert.equal(fileColor('goodware', 6), 'yellow');
    assert.equal(fileColor('goodware', 5), 'green');
  });

  test('summary and details of "no data"', () => {
    assert.equal(rlAnalyzeSummary({}), 'no data');
    assert.deepEqual(rlAnalyzeDetails({}), [{ label: 'Report', value: 'no data' }]);
  });
});

describe('provider_18 against a loopback Spectra Analyze', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);
  const base = (prefix = 'ok') => `${fake.url}/${prefix}`;

  async function run(prefix: string, value: string, settings: Record<string, unknown> = {}): Promise<RlAnalyzeResult | null> {
    return watch.result((await harness(prefix, settings).run(value, typeOf(value))) as RlAnalyzeResult | null);
  }

  before(async () => {
    fake = await startFakeHttp({
      'GET /ok/*': applianceHandler('/ok', { key: KEY }),
      'GET /status500/*': reply.status(500, { detail: 'A server error occurred.' }),
      'GET /flaky/*': sequence(reply.tooMany(0), applianceHandler('/flaky', { key: KEY })),
      'GET /toomany/*': reply.tooMany(0),
      'GET /malformed/*': reply.malformed(),
      'GET /wrong-shape/*': reply.json({ third_party_reputations: { statistics: { total: 'many', malicious: 2 } } }),
      'GET /hang/*': reply.hang(),
      'GET /forbidden/*': (req) => reply.json({ detail: `You do not have permission (${String(req.headers.authorization)})` }, 403),
      'GET /gone/*': reply.json({ detail: 'Not found.' }, 404),
      'GET /html404/*': reply.html('<!doctype html><h1>Not Found</h1>', 404),
      'GET /sparse/*': reply.json({
        classification: 'malicious', riskscore: null, classification_result: null, classification_reason: null,
        av_scanners: { scanner_match: 3 },
      }),
    });
  });
  after(async () => {
    await fake.close();
  });

  test('the requests: GET <base_url><path> for every type, Token key, JSON accepted', async () => {
    fake.reset();
    for (const value of ['1.1.1.1', '2606:4700:4700::1111', 'evil.example.com', EARSI, SUSPICIOUS_MD5, GOODWARE_SHA1, MALWARE_SHA256]) await run('ok', value);
    assert.deepEqual(fake.requests.map((r) => [r.method, r.path, r.query.toString()]), [
      ['GET', '/ok/api/network-threat-intel/ip/1.1.1.1/report/', ''],
      ['GET', '/ok/api/network-threat-intel/ip/2606:4700:4700::1111/report/', ''],
      ['GET', '/ok/api/network-threat-intel/domain/evil.example.com/', ''],
      ['GET', '/ok/api/network-threat-intel/url/', 'url=https%3A%2F%2Fearsi.com%2FH1.zip'],
      ['GET', `/ok/api/samples/v3/${SUSPICIOUS_MD5}/classification/`, 'av_scanners=1'],
      ['GET', `/ok/api/samples/v3/${GOODWARE_SHA1}/classification/`, 'av_scanners=1'],
      ['GET', `/ok/api/samples/v3/${MALWARE_SHA256}/classification/`, 'av_scanners=1'],
    ]);
    for (const req of fake.requests) {
      assert.equal(req.headers.authorization, `Token ${KEY}`);
      assert.match(String(req.headers.accept), /^application\/json$/);
    }
  });

  test('found, IPv4: engines.md\'s example result', async () => {
    const result = await run('ok', '1.1.1.1');
    assert.deepEqual(result, {
      report_type: 'network', report_color: 'yellow', reports: 15, malicious: 2, suspicious: 0,
      total_files: 1733, malicious_files: 0, suspicious_files: 0, threats: ['Win32.Trojan.Agent'],
      link: `${base()}/ip/1.1.1.1/analysis/ip/`,
    });
    assert.equal(rlAnalyzeSummary(result!), 'yellow · 2/15 sources malicious · 0/1733 files malicious · Win32.Trojan.Agent');
  });

  test('found, IPv4 red; a threat without a name is dropped', async () => {
    assert.deepEqual(await run('ok', '185.220.101.4'), {
      report_type: 'network', report_color: 'red', reports: 18, malicious: 9, suspicious: 1,
      total_files: 41, malicious_files: 30, suspicious_files: 4, threats: ['Win64.Trojan.CobaltStrike', 'Script-PowerShell.Downloader.Generic'],
      link: `${base()}/ip/185.220.101.4/analysis/ip/`,
    });
  });

  test('found, IPv6 green', async () => {
    assert.deepEqual(await run('ok', '2606:4700:4700::1111'), {
      report_type: 'network', report_color: 'green', reports: 12, malicious: 0, suspicious: 0,
      total_files: 0, malicious_files: 0, suspicious_files: 0, threats: [],
      link: `${base()}/ip/2606:4700:4700::1111/analysis/ip/`,
    });
  });

  test('found, domain: red on suspicious > 3; asked lower-cased without the trailing dot', async () => {
    fake.reset();
    const expected: RlNetworkResult = {
      report_type: 'network', report_color: 'red', reports: 17, malicious: 1, suspicious: 4,
      total_files: 6, malicious_files: 4, suspicious_files: 1, threats: ['Document-Word.Trojan.Emotet'],
      link: `${base()}/domain/evil.example.com/analysis/domain/`,
    };
    assert.ok(DOMAIN_REPORTS['evil.example.com']);
    assert.deepEqual(await run('ok', 'evil.example.com'), expected);
    assert.deepEqual(await run('ok', 'Evil.Example.COM.'), expected);
    assert.deepEqual(fake.requests.map((r) => r.path), Array(2).fill('/ok/api/network-threat-intel/domain/evil.example.com/'));
  });

  test('found, URL: engines.md\'s capture; threats from analysis, threat_name and categories', async () => {
    const result = await run('ok', EARSI);
    const expected: RlUrlResult = {
      report_type: 'network', report_color: 'red', reports: 19, malicious: 7, suspicious: 0,
      threats: ['Win32.Trojan.Zbot', 'Web.Hyperlink.Blacklisted', 'malware'],
      link: `${base()}/url/https%3A%2F%2Fearsi.com%2FH1.zip/analysis/url/`,
    };
    assert.deepEqual(result, expected);
    assert.equal(rlAnalyzeSummary(result!), 'red · 7/19 sources malicious · Win32.Trojan.Zbot, Web.Hyperlink.Blacklisted, malware');
  });

  test('found, URL without "analysis": no failure, no threats from it; nulls dropped; query string and space quoted as quote_plus does', async () => {
    fake.reset();
    const result = await run('ok', PHISH);
    assert.deepEqual(result, {
      report_type: 'network', report_color: 'yellow', reports: 5, malicious: 0, suspicious: 2, threats: ['phishing'],
      link: `${base()}/url/http%3A%2F%2Fphish.example.net%2Flogin%3Fuser%3Da+b/analysis/url/`,
    });
    assert.equal(fake.requests[0]!.query.get('url'), PHISH);
    assert.equal(fake.requests[0]!.query.toString(), 'url=http%3A%2F%2Fphish.example.net%2Flogin%3Fuser%3Da+b');
  });

  test('found, SHA1: engines.md\'s goodware capture', async () => {
    assert.deepEqual(await run('ok', GOODWARE_SHA1), {
      report_type: 'file', report_color: 'green', reports: 29, scanners: 0, classification: 'GOODWARE', riskscore: 0,
      threats: ['goodware', 'Certificate Validation'], link: `${base()}/${GOODWARE_SHA1}/`,
    });
  });

  test('found, SHA256 malicious (red) and MD5 suspicious (yellow)', async () => {
    const malware = await run('ok', MALWARE_SHA256);
    const expected: RlFileResult = {
      report_type: 'file', report_color: 'red', reports: 29, scanners: 25, classification: 'MALICIOUS', riskscore: 10,
      threats: ['malicious', 'Win32.Trojan.Emotet', 'Antivirus'], link: `${base()}/${MALWARE_SHA256}/`,
    };
    assert.deepEqual(malware, expected);
    assert.equal(rlAnalyzeSummary(malware!), 'red · MALICIOUS, risk 10 · 25/29 scanners · Win32.Trojan.Emotet, Antivirus');
    assert.deepEqual(rlAnalyzeDetails(malware!), [
      { label: 'Verdict', value: 'red' },
      { label: 'Classification', value: 'MALICIOUS' },
      { label: 'Risk score', value: '10' },
      { label: 'AV scanners', value: '25 of 29 detected it' },
      { label: 'Threats', value: 'malicious, Win32.Trojan.Emotet, Antivirus' },
      { label: 'Open in Spectra Analyze', value: `${base()}/${MALWARE_SHA256}/`, href: `${base()}/${MALWARE_SHA256}/` },
    ]);
    assert.deepEqual(await run('ok', SUSPICIOUS_MD5), {
      report_type: 'file', report_color: 'yellow', reports: 12, scanners: 1, classification: 'SUSPICIOUS', riskscore: 5,
      threats: ['suspicious'], link: `${base()}/${SUSPICIOUS_MD5}/`,
    });
  });

  test('network details', async () => {
    const result = await run('ok', '1.1.1.1');
    assert.deepEqual(rlAnalyzeDetails(result!), [
      { label: 'Verdict', value: 'yellow' },
      { label: 'Reputation sources', value: '2 malicious, 0 suspicious of 15' },
      { label: 'Downloaded files', value: '0 malicious, 0 suspicious of 1733' },
      { label: 'Threats', value: 'Win32.Trojan.Agent' },
      { label: 'Open in Spectra Analyze', value: `${base()}/ip/1.1.1.1/analysis/ip/`, href: `${base()}/ip/1.1.1.1/analysis/ip/` },
    ]);
    const url = await run('ok', EARSI);
    assert.equal(rlAnalyzeDetails(url!).some((f) => f.label === 'Downloaded files'), false);
  });

  test('no data: an IP, domain or URL no source knows, a sample without av_scanners: {} (engines.md 5.23)', async () => {
    for (const value of ['198.51.100.7', '2001:4860:4860::8888', 'good.example.org', 'https://good.example.org/', UNSCANNED_MD5]) {
      assert.deepEqual(await run('ok', value), {}, value);
    }
  });

  test('not found: an unknown hash (the appliance\'s 404), each hash type, is null', async () => {
    fake.reset();
    for (const value of ['d41d8cd98f00b204e9800998ecf8427e', 'da39a3ee5e6b4b0d3255bfef95601890afd80709', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855']) {
      assert.equal(await run('ok', value), null, value);
    }
    assert.deepEqual(fake.requests.map((r) => r.path.split('/')[5]!.length), [32, 40, 64]);
  });

  test('a 404 that is a web server\'s HTML page (a wrong base_url) is an error, even for a hash', async () => {
    await watch.rejectsWith(harness('html404', { retries: 0 }).run(MALWARE_SHA256, 'SHA256'), /^HTTP 404 Not Found$/);
  });

  test('a 404 on a network path is an error, not "not found"', async () => {
    await watch.rejectsWith(harness('gone', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 404 Not Found: Not found\.$/);
  });

  test('missing counts default to 0, a missing classification reads UNKNOWN', async () => {
    assert.deepEqual(await run('sparse', MALWARE_SHA256), {
      report_type: 'file', report_color: 'yellow', reports: 0, scanners: 3, classification: 'MALICIOUS', riskscore: 0,
      threats: ['malicious'], link: `${base('sparse')}/${MALWARE_SHA256}/`,
    });
  });

  test('a trailing slash on base_url is ignored, in the request and the link', async () => {
    fake.reset();
    const result = (await run('x', '1.1.1.1', { base_url: `${base()}/` })) as RlNetworkResult;
    assert.deepEqual(fake.requests.map((r) => r.path), ['/ok/api/network-threat-intel/ip/1.1.1.1/report/']);
    assert.equal(result.link, `${base()}/ip/1.1.1.1/analysis/ip/`);
  });

  test('wrong key (401): a one-line authentication error naming the appliance', async () => {
    await watch.rejectsWith(harness('ok', { api_key: 'WRONG-TOKEN-0000', retries: 0 }).run('1.1.1.1', 'IPv4'),
      /^ReversingLabs Spectra Analyze: authentication failed \(HTTP 401 Unauthorized: Invalid token\.\)$/);
  });

  test('403 echoing the key: the authentication error, key masked', async () => {
    await watch.rejectsWith(harness('forbidden', { retries: 0 }).run(MALWARE_SHA256, 'SHA256'),
      /^ReversingLabs Spectra Analyze: authentication failed \(HTTP 403 Forbidden: You do not have permission \(Token \*\*\*\)\)$/);
  });

  test('HTTP 500: an error', async () => {
    fake.reset();
    await watch.rejectsWith(harness('status500', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^HTTP 500 Internal Server Error$/);
    assert.equal(fake.requests.length, 1);
  });

  test('429 then 200: retried, found', async () => {
    fake.reset();
    const result = (await run('flaky', MALWARE_SHA256, { retries: 2 })) as RlFileResult;
    assert.equal(result.classification, 'MALICIOUS');
    assert.equal(fake.requests.length, 2);
  });

  test('429 every time: an error once the retries are spent', async () => {
    fake.reset();
    await watch.rejectsWith(harness('toomany', { retries: 1 }).run('1.1.1.1', 'IPv4'), /^HTTP 429 Too Many Requests\b/);
    assert.equal(fake.requests.length, 2);
  });

  test('malformed JSON / a field of the wrong type: clean errors', async () => {
    await watch.rejectsWith(harness('malformed', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^upstream answered with malformed JSON$/);
    await watch.rejectsWith(harness('wrong-shape', { retries: 0 }).run('1.1.1.1', 'IPv4'), /^unexpected answer from upstream at third_party_reputations\.statistics\.total: /);
  });

  test('a hanging appliance: timeout', async () => {
    await watch.rejectsWith(harness('hang', { retries: 0, timeout_ms: 300 }).run(EARSI, 'URL'), new RegExp(`^timeout after 300 ms waiting for 127\\.0\\.0\\.1:${new URL(fake.url).port}$`));
  });

  test('an appliance that is down: a network error without the key', async () => {
    await watch.rejectsWith(harness('x', { base_url: 'http://127.0.0.1:1', retries: 0 }).run('1.1.1.1', 'IPv4'), /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });

  test('called directly without base_url or key, or with a bad base_url: an error, nothing sent', async () => {
    fake.reset();
    await watch.rejectsWith(harness('ok', { api_key: undefined }).run('1.1.1.1', 'IPv4'), /^not configured: api_key$/);
    const bare = engineHarness(engine, { settings: { api_key: KEY } });
    try {
      await watch.rejectsWith(bare.run('1.1.1.1', 'IPv4'), /^not configured: base_url$/);
    } finally {
      await bare.close();
    }
    await watch.rejectsWith(harness('x', { base_url: 'a1000.local' }).run('1.1.1.1', 'IPv4'), /^ReversingLabs Spectra Analyze: base_url is not a URL$/);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_18: minimal and degenerate answers (issue 26)', () => {
  let fake: FakeHttpServer;
  const harness = prefixHarnesses(engine, () => fake, KEY);
  const run = async (prefix: string, value: string) => watch.result((await harness(prefix).run(value, typeOf(value))) as RlAnalyzeResult | null);
  const IP = '192.0.2.10';
  const URL_VALUE = 'https://bad.example/x';
  const HASH = '0123456789abcdef0123456789abcdef01234567';
  const link = (prefix: string, path: string) => `${fake.url}/${prefix}${path}`;
  const answers: Record<string, unknown> = {
    // Only the reputation counts (the IP, domain and URL reports), only the scanners (a sample).
    'min-ip': { third_party_reputations: { statistics: { total: 4, malicious: 1 } } },
    'min-url': { third_party_reputations: { statistics: { total: 2 } } },
    'min-file': { av_scanners: { scanner_count: 20 } },
    // Empty forms of every section.
    'none-null': { third_party_reputations: null, av_scanners: null, top_threats: null, downloaded_files_statistics: null },
    'none-empty': { third_party_reputations: { statistics: {} }, av_scanners: {}, analysis: '' },
    'none-false': { third_party_reputations: '', av_scanners: 0 },
    // Counts as text, "" and null; one threat in place of a list; null entries.
    'deg-ip': {
      top_threats: { threat_name: 'Win32.Trojan.Agent' },
      downloaded_files_statistics: { total: '12', malicious: '', suspicious: null },
      third_party_reputations: { statistics: { total: '15', malicious: '3', suspicious: null } },
    },
    'deg-url': {
      threat_name: '', categories: ['phishing', null], analysis: { top_threats: [null, { threat_name: null }, { threat_name: 'Web.Phish' }] },
      third_party_reputations: { statistics: { total: 5, suspicious: '1' } },
    },
    'deg-file': { classification: '', riskscore: '7', classification_result: null, av_scanners: { scanner_count: '29', scanner_match: '' } },
  };
  before(async () => {
    fake = await startFakeHttp(Object.fromEntries(Object.entries(answers).map(([name, body]) => [`GET /${name}/*`, reply.json(body)])));
  });
  after(async () => {
    await fake.close();
  });

  test('the minimal answers: reputation counts alone, scanners alone', async () => {
    assert.deepEqual(await run('min-ip', IP), {
      report_type: 'network', report_color: 'yellow', reports: 4, malicious: 1, suspicious: 0,
      total_files: 0, malicious_files: 0, suspicious_files: 0, threats: [], link: link('min-ip', `/ip/${IP}/analysis/ip/`),
    });
    assert.deepEqual(await run('min-url', URL_VALUE), {
      report_type: 'network', report_color: 'green', reports: 2, malicious: 0, suspicious: 0, threats: [],
      link: link('min-url', `/url/${quotePlus(URL_VALUE)}/analysis/url/`),
    });
    assert.deepEqual(await run('min-file', HASH), {
      report_type: 'file', report_color: 'yellow', reports: 20, scanners: 0, classification: 'UNKNOWN', riskscore: 0, threats: [],
      link: link('min-file', `/${HASH}/`),
    });
  });

  test('sections null, {}, "", 0: no data, {}', async () => {
    for (const prefix of ['none-null', 'none-empty', 'none-false']) {
      for (const value of [IP, 'quiet.example', URL_VALUE, HASH]) assert.deepEqual(await run(prefix, value), {}, `${prefix} ${value}`);
    }
  });

  test('counts as text, "" and null; one threat for a list; null entries dropped', async () => {
    assert.deepEqual(await run('deg-ip', IP), {
      report_type: 'network', report_color: 'red', reports: 15, malicious: 3, suspicious: 0,
      total_files: 12, malicious_files: 0, suspicious_files: 0, threats: ['Win32.Trojan.Agent'], link: link('deg-ip', `/ip/${IP}/analysis/ip/`),
    });
    assert.deepEqual(await run('deg-url', URL_VALUE), {
      report_type: 'network', report_color: 'yellow', reports: 5, malicious: 0, suspicious: 1, threats: ['Web.Phish', 'phishing'],
      link: link('deg-url', `/url/${quotePlus(URL_VALUE)}/analysis/url/`),
    });
    // `classification: ""` is what the appliance sent: kept, upper-cased as the reference does (issue 32; it was "UNKNOWN" before).
    const file = await run('deg-file', HASH) as RlFileResult;
    assert.deepEqual(file, {
      report_type: 'file', report_color: 'yellow', reports: 29, scanners: 0, classification: '', riskscore: 7, threats: [],
      link: link('deg-file', `/${HASH}/`),
    });
    assert.equal(engine.summary(file), 'yellow · unclassified, risk 7 · 0/29 scanners');
    assert.equal(engine.evidence!(file), undefined);
    assert.equal(engine.details!(file, HASH).some((f) => f.label === 'Classification'), false);
  });

  test('an answer that is not an object, or a section that is a list: clean errors naming it', async () => {
    fake.route('GET /list/*', reply.json([]));
    await watch.rejectsWith(harness('list', { retries: 0 }).run(IP, 'IPv4'), /^unexpected answer from upstream at \(root\): expected a JSON object$/);
    fake.route('GET /section-list/*', reply.json({ av_scanners: [20] }));
    await watch.rejectsWith(harness('section-list', { retries: 0 }).run(HASH, 'SHA1'), /^unexpected answer from upstream at av_scanners: expected an object$/);
  });
});

describe('provider_18 through a forward proxy (proxy_url, engines.md 8 item 20)', () => {
  let fake: FakeHttpServer;
  let proxy: FakeProxy;
  const harnesses: EngineHarness[] = [];

  before(async () => {
    fake = await startFakeHttp(fakeRoutes({ key: KEY }));
    proxy = await startFakeProxy();
  });
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
    await Promise.all([fake.close(), proxy.close()]);
  });

  test('every request goes through the proxy, unchanged', async () => {
    const h = proxiedHarness(engine, proxy.url, { ...fakeSettings(fake.url), api_key: KEY, retries: 0 });
    harnesses.push(h);
    const ip = watch.result((await h.run('1.1.1.1', 'IPv4')) as RlNetworkResult);
    const url = watch.result((await h.run(EARSI, 'URL')) as RlUrlResult);
    assert.equal(ip.reports, 15);
    assert.equal(url.reports, 19);
    assert.deepEqual(proxy.requests.map((r) => [r.method, r.url]), [
      ['GET', `${fake.url}/rl_analyze/api/network-threat-intel/ip/1.1.1.1/report/`],
      ['GET', `${fake.url}/rl_analyze/api/network-threat-intel/url/?url=https%3A%2F%2Fearsi.com%2FH1.zip`],
    ]);
    for (const carried of proxy.requests) assert.equal(carried.headers.authorization, `Token ${KEY}`);
    assert.ok(proxy.connects.length >= 1);
    assert.equal(fake.requests.length, 2);
  });

  test('a proxy that is down: the call fails instead of going direct', async () => {
    fake.reset();
    const h = proxiedHarness(engine, 'http://127.0.0.1:1', { ...fakeSettings(fake.url), api_key: KEY, retries: 0 });
    harnesses.push(h);
    await watch.rejectsWith(h.run(MALWARE_SHA256, 'SHA256'), /^connection refused by the proxy 127\.0\.0\.1:1 \(check proxy_url\)$/);
    assert.equal(fake.requests.length, 0);
  });
});

describe('provider_18 fake for whole-system tests', () => {
  test('fakeRoutes/fakeSettings answer every type, and check the key', async () => {
    const fake = await startFakeHttp(fakeRoutes({ key: KEY }));
    const h = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: KEY, retries: 0 } });
    const wrong = engineHarness(engine, { settings: { ...fakeSettings(fake.url), api_key: 'WRONG-TOKEN-0000', retries: 0 } });
    try {
      for (const value of ['1.1.1.1', '2606:4700:4700::1111', 'evil.example.com', EARSI, SUSPICIOUS_MD5, GOODWARE_SHA1, MALWARE_SHA256]) {
        const result = watch.result((await h.run(value, typeOf(value))) as RlNetworkResult | RlFileResult);
        assert.ok(result.reports > 0, value);
      }
      await watch.rejectsWith(wrong.run('1.1.1.1', 'IPv4'), /^ReversingLabs Spectra Analyze: authentication failed/);
    } finally {
      await Promise.all([h.close(), wrong.close()]);
      await fake.close();
    }
  });
});

describe('provider_18 through the runner', () => {
  let fake: FakeHttpServer;
  const runners: RunnerHarness[] = [];
  const other = defineEngine<{ ok: boolean }>({
    id: 'other_engine', service: 'other', label: 'Other', description: 'test engine', tags: ['hash'], types: ['IPv4', 'SHA256'],
    defaults: { timeout_ms: 1000 }, summary: () => 'ok', run: async () => ({ ok: true }),
  });

  function runner(settings: Record<string, unknown>): RunnerHarness {
    const r = runnerHarness([engine, other], { settings: { provider_18: { retries: 0, ...settings } } });
    runners.push(r);
    return r;
  }

  before(async () => {
    fake = await startFakeHttp({ ...fakeRoutes({ key: KEY }), 'GET /broken/*': reply.status(500, { detail: 'A server error occurred.' }) });
  });
  after(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await fake.close();
  });

  test('the result under the name the caller used (the alias), no error', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: KEY }).analyze([{ value: MALWARE_SHA256, type: 'SHA256' }], ['rl_analyze']);
    watch.result(result);
    assert.equal((result!.rl_analyze as RlFileResult).classification, 'MALICIOUS');
    assert.equal(result!.provider_18, undefined);
    assert.equal(result!.errors, undefined);
  });

  test('no data is {} and an unknown hash null, neither an error', async () => {
    const r = runner({ ...fakeSettings(fake.url), api_key: KEY });
    const [nodata, unknown] = await r.analyze([
      { value: 'good.example.org', type: 'FQDN' },
      { value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', type: 'SHA256' },
    ], ['rl_analyze']);
    assert.deepEqual(nodata!.rl_analyze, {});
    assert.equal(unknown!.rl_analyze, null);
    assert.equal(nodata!.errors, undefined);
    assert.equal(unknown!.errors, undefined);
  });

  test('no base_url: "not configured: engines.provider_18.base_url", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ api_key: KEY }).analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['rl_analyze']);
    watch.result(result);
    assert.equal(result!.rl_analyze, null);
    assert.deepEqual(result!.errors, { rl_analyze: 'not configured: engines.provider_18.base_url or OAS_RL_ANALYZE_BASE_URL' });
    assert.equal(fake.requests.length, 0);
  });

  test('no api_key: "not configured: engines.provider_18.api_key", nothing asked', async () => {
    fake.reset();
    const [result] = await runner({ ...fakeSettings(fake.url) }).analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['provider_18']);
    assert.equal(result!.provider_18, null);
    assert.deepEqual(result!.errors, { provider_18: 'not configured: engines.provider_18.api_key or OAS_RL_ANALYZE_API_KEY' });
    assert.equal(fake.requests.length, 0);
  });

  test('a failing appliance: null plus an errors entry; the other engine unaffected', async () => {
    const [result] = await runner({ base_url: `${fake.url}/broken`, api_key: KEY }).analyze([{ value: MALWARE_SHA256, type: 'SHA256' }], ['rl_analyze', 'other']);
    watch.result(result);
    assert.equal(result!.rl_analyze, null);
    assert.deepEqual(result!.other, { ok: true });
    assert.deepEqual(result!.errors, { rl_analyze: 'HTTP 500 Internal Server Error' });
  });

  test('wrong key: the authentication error in errors', async () => {
    const [result] = await runner({ ...fakeSettings(fake.url), api_key: `${KEY}-old` }).analyze([{ value: '1.1.1.1', type: 'IPv4' }], ['rl_analyze']);
    watch.result(result);
    assert.deepEqual(result!.errors, { rl_analyze: 'ReversingLabs Spectra Analyze: authentication failed (HTTP 401 Unauthorized: Invalid token.) (key refused: check engines.provider_18.api_key or OAS_RL_ANALYZE_API_KEY)' });
  });
});

describe('provider_18 secrets', () => {
  test('the key appears in no result and no error of these tests', () => {
    watch.assertNoKey(40);
  });
});
