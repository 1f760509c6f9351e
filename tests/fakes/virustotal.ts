/**
 * A loopback VirusTotal API v3 (`/virustotal/api/v3/...`) answering a realistic object for any IP,
 * domain, URL id or file hash (engines.md 5.29): `fakeRoutes()` for a fake server,
 * `fakeSettings(url)` for `engines.provider_24` pointing at it (the key is the caller's).
 */
import type { FakeRoute } from './http.js';

export const PREFIX = '/virustotal/api/v3';

/** Analysis stats summing to 94 engines, 5 malicious, 1 suspicious. */
export const STATS = { malicious: 5, suspicious: 1, undetected: 24, harmless: 64, timeout: 0 };

/** A file's stats: every bucket VirusTotal reports for files (summed to 76 by the reference). */
export const FILE_STATS = {
  harmless: 0, 'type-unsupported': 4, suspicious: 0, 'confirmed-timeout': 0, timeout: 0,
  failure: 1, malicious: 61, undetected: 10,
};

const DATE = 1767951000; // 2026-01-09T09:30:00Z

function results(stats: Record<string, number>): Record<string, unknown> {
  const engines = ['Kaspersky', 'ESET-NOD32', 'BitDefender', 'Sophos', 'Fortinet', 'Google Safebrowsing'];
  return Object.fromEntries(engines.map((name, i) => [name, {
    method: 'blacklist',
    engine_name: name,
    category: i < (stats.malicious ?? 0) ? 'malicious' : 'harmless',
    result: i < (stats.malicious ?? 0) ? 'malware' : 'clean',
  }]));
}

/** `GET /ip_addresses/<ip>` */
export function ipAddress(ip: string, stats: Record<string, number> = STATS, reputation = -12): Record<string, unknown> {
  return {
    data: {
      id: ip,
      type: 'ip_address',
      links: { self: `https://www.virustotal.com/api/v3/ip_addresses/${ip}` },
      attributes: {
        network: '93.184.215.0/24', asn: 15133, as_owner: 'EDGECAST', country: 'US', continent: 'NA',
        regional_internet_registry: 'ARIN', whois: 'NetRange: 93.184.215.0 - 93.184.215.255\nOrgName: Edgecast Inc.',
        whois_date: DATE - 86400 * 30, tags: [], reputation,
        total_votes: { harmless: 3, malicious: 7 },
        last_analysis_date: DATE, last_analysis_stats: stats, last_analysis_results: results(stats),
        last_modification_date: DATE,
      },
    },
  };
}

/** `GET /domains/<domain>` */
export function domain(name: string, stats: Record<string, number> = STATS, reputation = -12): Record<string, unknown> {
  return {
    data: {
      id: name,
      type: 'domain',
      links: { self: `https://www.virustotal.com/api/v3/domains/${name}` },
      attributes: {
        tld: name.split('.').pop(), registrar: 'RESERVED-Internet Assigned Numbers Authority', creation_date: 694224000,
        categories: { 'Forcepoint ThreatSeeker': 'phishing and other frauds', BitDefender: 'phishing' },
        popularity_ranks: {}, tags: [], reputation,
        total_votes: { harmless: 3, malicious: 7 },
        last_dns_records: [{ type: 'A', value: '93.184.215.14', ttl: 300 }],
        last_analysis_date: DATE, last_analysis_stats: stats, last_analysis_results: results(stats),
        last_modification_date: DATE,
      },
    },
  };
}

/** `GET /urls/<id>` */
export function url(id: string, stats: Record<string, number> = STATS, reputation = -12): Record<string, unknown> {
  const original = Buffer.from(id, 'base64url').toString('utf8');
  return {
    data: {
      id: '0f0b3c1c8e5d5d4a1ea0f5e0b7a1c3d2f4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9',
      type: 'url',
      links: { self: `https://www.virustotal.com/api/v3/urls/${id}` },
      attributes: {
        url: original, last_final_url: original, title: 'Sign in', tld: 'com', times_submitted: 4,
        first_submission_date: DATE - 86400, last_submission_date: DATE, last_http_response_code: 200,
        last_http_response_content_length: 5123, tags: [], categories: {}, threat_names: ['phishing'],
        reputation, total_votes: { harmless: 0, malicious: 2 },
        last_analysis_date: DATE, last_analysis_stats: stats, last_analysis_results: results(stats),
        last_modification_date: DATE,
      },
    },
  };
}

/** `GET /files/<hash>` */
export function file(hash: string, stats: Record<string, number> = FILE_STATS, reputation = -47): Record<string, unknown> {
  return {
    data: {
      id: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      type: 'file',
      links: { self: `https://www.virustotal.com/api/v3/files/${hash}` },
      attributes: {
        md5: 'd41d8cd98f00b204e9800998ecf8427e', sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
        sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        meaningful_name: 'invoice.exe', names: ['invoice.exe'], size: 245760, type_description: 'Win32 EXE',
        type_tag: 'peexe', popular_threat_classification: { suggested_threat_label: 'trojan.lumma/stealer' },
        times_submitted: 12, first_submission_date: DATE - 86400 * 3, tags: ['peexe', 'spreader'],
        reputation, total_votes: { harmless: 0, malicious: 9 },
        last_analysis_date: DATE, last_analysis_stats: stats, last_analysis_results: results(stats),
        last_modification_date: DATE,
      },
    },
  };
}

/** VirusTotal's answer for an unknown object (HTTP 404). */
export const NOT_FOUND = { error: { code: 'NotFoundError', message: 'Resource not found.' } };

/** The last path segment of a request. */
const idOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

export function fakeRoutes(): Record<string, FakeRoute> {
  return {
    [`GET ${PREFIX}/ip_addresses/*`]: (req) => ({ status: 200, json: ipAddress(idOf(req.path)) }),
    [`GET ${PREFIX}/domains/*`]: (req) => ({ status: 200, json: domain(idOf(req.path)) }),
    [`GET ${PREFIX}/urls/*`]: (req) => ({ status: 200, json: url(idOf(req.path)) }),
    [`GET ${PREFIX}/files/*`]: (req) => ({ status: 200, json: file(idOf(req.path)) }),
  };
}

export function fakeSettings(baseUrl: string): Record<string, unknown> {
  return { base_url: `${baseUrl}${PREFIX}` };
}
