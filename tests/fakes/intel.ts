/**
 * One loopback HTTP server standing in for every keyless intelligence upstream (ipapi.is,
 * ipquery.io, grep.app, Hudson Rock, PhishTank, urlscan.io, ioc.one, the bad-ASN lists), with a
 * realistic answer for any address or name: for whole-system tests (CLI, API, benchmark) where
 * every registered engine must talk to 127.0.0.1 only. Engine tests use their own, richer fakes.
 */
import { PATHS as LIST_PATHS, brianhamaCsv, lethalForensicsCsv, listReplies, spamhausBody } from './bad-asn.js';
import * as chromeExtension from './chrome_extension.js';
import * as crtsh from './crtsh.js';
import { reply, startFakeHttp, type FakeHttpOptions, type FakeHttpServer, type FakeRoute } from './http.js';
import { HTML_CARDS, PATHS as IOC_PATHS, PDF_CARDS, resultsPage } from './ioc-one.js';

const ipapi = (ip: string) => ({
  ip,
  rir: 'ARIN',
  is_bogon: false, is_mobile: false, is_satellite: false, is_crawler: false, is_datacenter: true,
  is_tor: false, is_proxy: false, is_vpn: false, is_abuser: false,
  company: { name: 'Google LLC', abuser_score: '0.0012 (Low)', domain: 'google.com', type: 'hosting', network: '8.8.8.0 - 8.8.8.255' },
  abuse: { name: 'Abuse', address: '1600 Amphitheatre Parkway, Mountain View, CA', email: 'network-abuse@google.com', phone: '+1-650-253-0000' },
  asn: {
    asn: 15169, abuser_score: '0.0021 (Low)', route: '8.8.8.0/24', descr: 'GOOGLE, US', country: 'us', active: true,
    org: 'Google LLC', domain: 'google.com', abuse: 'network-abuse@google.com', type: 'hosting', created: '2000-03-30', rir: 'ARIN',
  },
  location: { is_eu_member: false, continent: 'NA', country: 'United States', country_code: 'US', state: 'California', city: 'Mountain View', latitude: 37.4, longitude: -122.07, timezone: 'America/Los_Angeles' },
  elapsed_ms: 0.4,
});

const ipquery = (ip: string) => ({
  ip,
  isp: { asn: 'AS15169', org: 'Google LLC', isp: 'Google LLC' },
  location: { country: 'United States', country_code: 'US', city: 'Mountain View', state: 'California', latitude: 37.4, longitude: -122.07, timezone: 'America/Los_Angeles' },
  risk: { is_mobile: false, is_vpn: false, is_tor: false, is_proxy: false, is_datacenter: true, risk_score: 0 },
});

const grepApp = (q: string) => ({
  time: 31,
  facets: { count: 2, repo: { buckets: [{ val: 'acme/blocklists', count: 1 }, { val: 'soc/iocs', count: 1 }] } },
  hits: {
    total: 2,
    hits: [
      { repo: 'acme/blocklists', branch: 'main', path: 'domains.txt', content: { snippet: `<pre><mark>${q}</mark></pre>` }, total_matches: '1' },
      { repo: 'soc/iocs', branch: 'master', path: 'feeds/2026-10.csv', content: { snippet: `<pre><mark>${q}</mark>,c2</pre>` }, total_matches: '1' },
    ],
  },
});

const hudsonDomain = {
  total: 3, totalStealers: 3, employees: 1, users: 2, third_parties: 0, totalUrls: 2,
  last_employee_compromised: '2025-09-12T00:00:00.000Z', last_user_compromised: '2026-02-01T00:00:00.000Z',
  applications: [{ keyword: 'vpn', occurrence: 1 }], stealerFamilies: { Lumma: 2, RedLine: 1, total: 3 },
  data: { all_urls: [{ type: 'client', url: 'https://login.example.com', occurrence: 2 }], clients_urls: [], employees_urls: [] },
  stats: { clients_urls: ['https://login.example.com'], employees_urls: [], totalEmployees: 1, totalUsers: 2 },
};

const hudsonEmail = {
  message: 'This email address is not associated with a computer infected by an info-stealer. Visit hudsonrock.com to learn more.',
  stealers: [],
  total_corporate_services: 0,
  total_user_services: 0,
};

const phishtank = (url: string) => ({
  meta: { timestamp: '2026-10-02T08:00:00+00:00', serverid: 'f0a1b2', status: 'success', requestid: '127.0.0.1.6a1b2c3d4e5f6.77889900' },
  results: { url, in_database: false },
});

const urlscan = (q: string) => ({
  results: [1, 2].map((n) => ({
    _id: `0195f0a0-000${n}-7000-8000-00000000000${n}`,
    task: { visibility: 'public', method: 'api', domain: 'example.com', apexDomain: 'example.com', time: `2026-10-0${n}T10:00:00.000Z`, url: 'https://example.com/', tags: [] },
    stats: { uniqIPs: 2, uniqCountries: 1, dataLength: 1256, encodedDataLength: 800, requests: 2 },
    page: { domain: 'example.com', apexDomain: 'example.com', url: 'https://example.com/', country: 'US', ip: '93.184.215.14', title: 'Example Domain', status: '200', asn: 'AS15133' },
    result: `https://urlscan.io/api/v1/result/0195f0a0-000${n}/`,
  })).reverse(),
  total: 12,
  took: 9,
  has_more: false,
  query: q,
});

/** Routes for every keyless HTTP engine, under one server. */
export function intelRoutes(): Record<string, FakeRoute> {
  return {
    'POST /ipapi': (req) => ({ json: ipapi((JSON.parse(req.body) as { q: string }).q) }),
    'GET /ipquery/*': (req) => ({ json: ipquery(req.path.slice('/ipquery/'.length)) }),
    'GET /grep': (req) => ({ json: grepApp(req.query.get('q') ?? '') }),
    'GET /hudsonrock/search-by-domain': { json: hudsonDomain },
    'GET /hudsonrock/search-by-email': { json: hudsonEmail },
    'POST /phishtank': (req) => ({ json: phishtank(new URLSearchParams(req.body).get('url') ?? '') }),
    'GET /urlscan': (req) => ({ json: urlscan(req.query.get('q') ?? '') }),
    [`GET /iocone${IOC_PATHS.html}`]: (req) => reply.html(resultsPage('html', req.query.get('search') ?? '', HTML_CARDS.slice(0, 3))),
    [`GET /iocone${IOC_PATHS.pdf}`]: (req) => reply.html(resultsPage('pdf', req.query.get('search') ?? '', PDF_CARDS.slice(0, 2))),
    [`GET ${LIST_PATHS.spamhaus}`]: listReplies.spamhaus(spamhausBody()),
    [`GET ${LIST_PATHS.brianhama}`]: listReplies.csv(brianhamaCsv),
    [`GET ${LIST_PATHS.lethal_forensics}`]: listReplies.csv(lethalForensicsCsv),
    ...crtsh.fakeRoutes(),
    ...chromeExtension.fakeRoutes(),
  };
}

/** `engines.<id>` settings pointing every keyless HTTP engine at the server at `url`. */
export function intelSettings(url: string): Record<string, Record<string, unknown>> {
  return {
    provider_07: { base_url: `${url}/grep` },
    provider_08: { base_url: `${url}/hudsonrock` },
    provider_09: { base_url: `${url}/iocone` },
    provider_10: { base_url: `${url}/iocone` },
    provider_11: { base_url: `${url}/ipapi` },
    provider_13: { base_url: `${url}/ipquery` },
    provider_17: { base_url: `${url}/phishtank` },
    provider_23: { base_url: `${url}/urlscan` },
    bad_asn: {
      spamhaus_url: `${url}${LIST_PATHS.spamhaus}`,
      brianhama_url: `${url}${LIST_PATHS.brianhama}`,
      lethal_forensics_url: `${url}${LIST_PATHS.lethal_forensics}`,
    },
    crtsh: crtsh.fakeSettings(url),
    chrome_extension: chromeExtension.fakeSettings(url),
  };
}

export async function startFakeIntel(options: FakeHttpOptions = {}): Promise<FakeHttpServer> {
  return startFakeHttp(intelRoutes(), options);
}

