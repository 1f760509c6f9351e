/**
 * A loopback ReversingLabs Spectra Analyze appliance (provider_18, engines.md 5.23) under the
 * path prefix `/rl_analyze`, answering as the appliance does (bodies modelled on engines.md's
 * captures):
 * - `GET /api/network-threat-intel/ip/<ip>/report/` and `/domain/<fqdn>/`: the reputation
 *   report; an address or domain nobody knows gets a report with zero sources ("no data").
 * - `GET /api/network-threat-intel/url/?url=<url>`: the URL report, likewise.
 * - `GET /api/samples/v3/<hash>/classification/?av_scanners=1`: the classification; an unknown
 *   sample is a 404 `{"detail": "Not found."}`.
 * A wrong or missing `Authorization: Token <key>` gets the appliance's 401.
 *
 * `fakeRoutes({ key })` for a fake server, `fakeSettings(url)` for `engines.provider_18`
 * pointing at it (the key is the caller's), `applianceHandler` to mount it under other prefixes.
 */
import type { FakeHandler, FakeReply, FakeRequest, FakeRoute } from './http.js';

export const PREFIX = '/rl_analyze';

const NO_SOURCES = { statistics: { malicious: 0, clean: 0, suspicious: 0, undetected: 0, total: 0 }, sources: [] };

function source(name: string, detection: string): Record<string, unknown> {
  return { source: name, detection, update_time: '2026-01-07T10:12:00', detect_time: detection === 'malicious' ? '2026-01-05T08:00:00' : null, category: null };
}

/** IP reports by address (engines.md's capture for 1.1.1.1, and a Tor exit). */
export const IP_REPORTS: Record<string, Record<string, unknown>> = {
  '1.1.1.1': {
    requested_ip: '1.1.1.1',
    modified_time: '2026-01-07T15:27:46',
    top_threats: [{ threat_name: 'Win32.Trojan.Agent', threat_level: 5, files_count: 1 }],
    downloaded_files_statistics: { total: 1733, unknown: 0, suspicious: 0, malicious: 0, goodware: 1733 },
    third_party_reputations: {
      statistics: { malicious: 2, clean: 1, suspicious: 0, undetected: 12, total: 15 },
      sources: [source('alphaMountain.ai', 'malicious'), source('Spamhaus', 'malicious'), source('Webroot', 'clean')],
    },
  },
  '185.220.101.4': {
    requested_ip: '185.220.101.4',
    modified_time: '2026-01-08T09:01:12',
    top_threats: [
      { threat_name: 'Win64.Trojan.CobaltStrike', threat_level: 5, files_count: 12 },
      { threat_name: null, threat_level: 3, files_count: 1 },
      { threat_name: 'Script-PowerShell.Downloader.Generic', threat_level: 4, files_count: 3 },
    ],
    downloaded_files_statistics: { total: 41, unknown: 2, suspicious: 4, malicious: 30, goodware: 5 },
    third_party_reputations: {
      statistics: { malicious: 9, clean: 0, suspicious: 1, undetected: 8, total: 18 },
      sources: [source('Spamhaus', 'malicious'), source('abuse.ch', 'malicious')],
    },
  },
  '2606:4700:4700::1111': {
    requested_ip: '2606:4700:4700::1111',
    modified_time: '2026-01-06T20:40:00',
    top_threats: [],
    downloaded_files_statistics: { total: 0, unknown: 0, suspicious: 0, malicious: 0, goodware: 0 },
    third_party_reputations: { statistics: { malicious: 0, clean: 3, suspicious: 0, undetected: 9, total: 12 }, sources: [] },
  },
};

export const DOMAIN_REPORTS: Record<string, Record<string, unknown>> = {
  'evil.example.com': {
    requested_domain: 'evil.example.com',
    modified_time: '2026-01-08T11:00:00',
    last_seen: '2026-01-08T10:59:00',
    last_dns_records: [{ type: 'A', value: '185.220.101.4', provider: 'ReversingLabs' }],
    last_dns_records_time: '2026-01-08T10:59:00',
    top_threats: [{ threat_name: 'Document-Word.Trojan.Emotet', threat_level: 5, files_count: 4 }],
    downloaded_files_statistics: { total: 6, unknown: 0, suspicious: 1, malicious: 4, goodware: 1 },
    third_party_reputations: {
      statistics: { malicious: 1, clean: 2, suspicious: 4, undetected: 10, total: 17 },
      sources: [source('Google Safe Browsing', 'malicious')],
    },
  },
};

export const URL_REPORTS: Record<string, Record<string, unknown>> = {
  // engines.md's capture.
  'https://earsi.com/H1.zip': {
    requested_url: 'https://earsi.com/H1.zip',
    classification: 'malicious',
    threat_name: 'Web.Hyperlink.Blacklisted',
    categories: ['malware'],
    reason: 'third_party_reputations',
    analysis: {
      top_threats: [{ threat_name: 'Win32.Trojan.Zbot', threat_level: 5, files_count: 1 }],
      statistics: { total: 1, unknown: 0, suspicious: 0, malicious: 1, goodware: 0 },
      last_analysis: { analysis_id: 'e1c8a0e2', analysis_time: '2026-01-04T12:00:00', final_url: 'https://earsi.com/H1.zip', http_response_code: 200 },
    },
    third_party_reputations: { statistics: { total: 19, malicious: 7, clean: 0, suspicious: 0, undetected: 12 }, sources: [] },
  },
  // A URL never crawled by the appliance: no `analysis`, a null category.
  'http://phish.example.net/login?user=a b': {
    requested_url: 'http://phish.example.net/login?user=a b',
    classification: 'suspicious',
    threat_name: null,
    categories: ['phishing', null],
    reason: 'third_party_reputations',
    third_party_reputations: { statistics: { total: 5, malicious: 0, clean: 1, suspicious: 2, undetected: 2 }, sources: [] },
  },
};

export const GOODWARE_SHA1 = '2f9a1ba68ae8a9f0a6d8c8e5a8e9a7d35f7b9c5a';
export const MALWARE_SHA256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
export const UNSCANNED_MD5 = '0cc175b9c0f1b6a831c399e269772661';
export const SUSPICIOUS_MD5 = 'e99a18c428cb38d5f260853678922e03';

function sample(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    classification_origin: null,
    classification_source: 258,
    cloud_last_lookup: '2026-01-07T08:15:00Z',
    data_source: 'LOCAL',
    first_seen: '2025-11-02T14:00:00Z',
    last_seen: '2026-01-07T08:15:00Z',
    sha1: GOODWARE_SHA1,
    sha256: MALWARE_SHA256,
    md5: UNSCANNED_MD5,
    ...fields,
  };
}

export const SAMPLES: Record<string, Record<string, unknown>> = {
  // engines.md's capture.
  [GOODWARE_SHA1]: sample({
    classification: 'goodware', riskscore: 0, classification_result: null, classification_reason: 'Certificate Validation',
    av_scanners: { scanner_count: 29, scanner_match: 0, scanner_percent: 0.0, vendor_count: 20, vendor_match: 0 },
  }),
  [MALWARE_SHA256]: sample({
    classification: 'malicious', riskscore: 10, classification_result: 'Win32.Trojan.Emotet', classification_reason: 'Antivirus',
    av_scanners: { scanner_count: 29, scanner_match: 25, scanner_percent: 86.2, vendor_count: 20, vendor_match: 18 },
  }),
  [SUSPICIOUS_MD5]: sample({
    classification: 'suspicious', riskscore: 5, classification_result: null, classification_reason: null,
    av_scanners: { scanner_count: 12, scanner_match: 1, scanner_percent: 8.3, vendor_count: 10, vendor_match: 1 },
  }),
  // Known locally, never scanned: `av_scanners` empty.
  [UNSCANNED_MD5]: sample({ classification: 'unknown', riskscore: 5, classification_result: null, classification_reason: null, av_scanners: {} }),
};

function unknownNetwork(key: string, value: string): Record<string, unknown> {
  return {
    [key]: value, modified_time: '2026-01-08T00:00:00', top_threats: [],
    downloaded_files_statistics: { total: 0, unknown: 0, suspicious: 0, malicious: 0, goodware: 0 },
    third_party_reputations: NO_SOURCES,
  };
}

const json = (body: unknown, status = 200): FakeReply => ({ status, json: body });

/** The appliance's API under `prefix`: checks the token (when `key` is given), then answers from the tables above. */
export function applianceHandler(prefix: string, options: { key?: string } = {}): FakeHandler {
  return (req: FakeRequest) => {
    const auth = String(req.headers.authorization ?? '');
    const token = /^Token (.+)$/.exec(auth)?.[1];
    if (!token) return json({ detail: 'Authentication credentials were not provided.' }, 401);
    if (options.key !== undefined && token !== options.key) return json({ detail: 'Invalid token.' }, 401);
    const path = req.path.slice(prefix.length);
    let m: RegExpExecArray | null;
    if ((m = /^\/api\/network-threat-intel\/ip\/([^/]+)\/report\/$/.exec(path))) {
      return json(IP_REPORTS[m[1]!] ?? unknownNetwork('requested_ip', m[1]!));
    }
    if ((m = /^\/api\/network-threat-intel\/domain\/([^/]+)\/$/.exec(path))) {
      return json(DOMAIN_REPORTS[m[1]!] ?? unknownNetwork('requested_domain', m[1]!));
    }
    if (path === '/api/network-threat-intel/url/') {
      const url = req.query.get('url');
      if (!url) return json({ url: ['This field is required.'] }, 400);
      return json(URL_REPORTS[url] ?? { requested_url: url, classification: 'unknown', threat_name: null, categories: [], third_party_reputations: NO_SOURCES });
    }
    if ((m = /^\/api\/samples\/v3\/([0-9a-fA-F]+)\/classification\/$/.exec(path))) {
      const found = SAMPLES[m[1]!.toLowerCase()];
      return found ? json(found) : json({ detail: 'Not found.' }, 404);
    }
    return { status: 404, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Not Found</title><h1>Not Found</h1>' };
  };
}

export function fakeRoutes(options: { key?: string } = {}): Record<string, FakeRoute> {
  return { [`GET ${PREFIX}/*`]: applianceHandler(PREFIX, options) };
}

/** `engines.provider_18` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${PREFIX}` };
}
