/**
 * A stand-in for a self-hosted Hister (engines.md 9.4) under a path prefix (`/hister` unless told):
 * `GET <prefix>/search?query=<JSON>` (or `q=`) parses the JSON, searches its `text` in a small
 * index of visited pages (case-insensitive, in url, title and text) and answers as Hister does:
 * `{"total", "query", "documents": [{url, domain, title, text, favicon, score, added, type,
 * language, label}], "history", "search_duration", "query_suggestion", "page_key"}`, at most
 * `limit` documents (100 by default; `fields` ignored), `total` counting every hit. The index has
 * a page for one observable of each type, private IPs and extension ids included, and
 * engines.md's example for `example.com` (two documents with the same url).
 *
 * Hister's own checks: the `Origin` must be `hister://` (any `hister:` origin) or the server's own
 * address, else HTTP 500; with `token`, it must come as `Authorization: Bearer <token>` or
 * `X-Access-Token: <token>`, else HTTP 403. No `query`/`q` parameter means a WebSocket upgrade,
 * which a plain GET fails (400). For the engine's tests and for whole-system tests
 * (`fakeRoutes`/`fakeSettings`).
 */
import { reply, type FakeRequest, type FakeReply, type FakeRoute } from './http.js';

export interface HisterDocument {
  url: string;
  domain: string;
  title: string;
  text: string;
  favicon: string;
  score: number;
  added: number;
  type: string;
  language: string;
  label: string;
}

function page(url: string, title: string, text: string, added: number, score: number): HisterDocument {
  const domain = new URL(url).hostname;
  return { url, domain, title, text, favicon: `https://${domain}/favicon.ico`, score, added, type: 'web', language: 'en', label: '' };
}

/** The observables the index mentions, one per type. */
export const KNOWN = {
  IPv4: '185.220.101.4',
  IPv6: '2001:db8:85a3::8a2e:370:7334',
  FQDN: 'example.com',
  URL: 'https://evil.example.net/login.php?id=1',
  MD5: '44d88612fea8a8f36de82e1278abb02f',
  SHA1: '3395856ce81f2b7382dee72602f798b642f14140',
  SHA256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f',
  Email: 'billing@phish-payments.example',
  CHROME_EXTENSION: 'cjpalhdlnbpafiamejdnhcphjbkeiagm',
} as const;

/** A private address, on a page of an internal wiki. */
export const PRIVATE_IP = '10.20.30.40';

/** Mentioned nowhere, one per type (the tests' shared unknown observables). */
export { UNKNOWN } from '../helpers/observables.js';

/** The index, in Hister's ranking order. */
export const DOCUMENTS: HisterDocument[] = [
  // engines.md 9.4's example for example.com: three hits, the first url twice.
  page('https://pastebin.com/AbCdEf12', 'Paste mentioning example.com', '', 1700000000, 2.31),
  page('https://github.com/someone/iocs/blob/main/list.txt', 'iocs/list.txt at main', 'phishing domains: login-example.com.evil.test, example.com', 1710000000, 1.72),
  page('https://pastebin.com/AbCdEf12', 'Paste mentioning example.com (revisited)', '', 1745000000, 1.10),
  page('https://www.abuseipdb.com/check/185.220.101.4', 'AbuseIPDB » 185.220.101.4', 'Tor exit node reported 2,411 times', 1714000000, 3.02),
  page('https://bgp.he.net/ip/2001:db8:85a3::8a2e:370:7334', '2001:db8:85a3::8a2e:370:7334 - bgp.he.net', 'documentation prefix', 1712000000, 1.4),
  page('https://urlscan.io/result/0190aa1e-5b6f-7c3d-8e9f-0a1b2c3d4e5f/', 'urlscan.io - evil.example.net', 'Submitted URL: https://evil.example.net/login.php?id=1 (credential phishing)', 1719000000, 2.7),
  page('https://www.virustotal.com/gui/file/275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f', 'VirusTotal - eicar.com', 'MD5 44d88612fea8a8f36de82e1278abb02f SHA-1 3395856ce81f2b7382dee72602f798b642f14140', 1705000000, 2.2),
  page('https://mail.example.org/thread/8812', 'Fwd: Invoice overdue', 'From: billing@phish-payments.example — please pay the attached invoice', 1716000000, 1.9),
  page('https://chromewebstore.google.com/detail/ublock-origin/cjpalhdlnbpafiamejdnhcphjbkeiagm', 'uBlock Origin - Chrome Web Store', 'Finally, an efficient blocker.', 1701000000, 2.0),
  page('https://wiki.corp.example/infra/backup-servers', 'Backup servers - Infra wiki', 'The NAS answers on 10.20.30.40 (VLAN 20)', 1718000000, 1.5),
];

/** Hister's 500 for a foreign origin (its error page is plain text). */
export const BAD_ORIGIN: FakeReply = { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Invalid origin\n' };
/** Hister's 403 for a missing or wrong access token. */
export const FORBIDDEN: FakeReply = { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Forbidden\n' };

/** Whether Hister accepts the request's Origin: a `hister:` scheme or its own address. */
export function originAccepted(req: FakeRequest): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return false;
  if (origin.startsWith('hister:')) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Documents whose url, title or text holds `text` (case-insensitive), in index order. */
export function searchIndex(text: string, documents: HisterDocument[] = DOCUMENTS): HisterDocument[] {
  const needle = text.toLowerCase();
  if (needle.trim() === '') return [];
  return documents.filter((d) => [d.url, d.title, d.text].some((s) => s.toLowerCase().includes(needle)));
}

/** The `GET /search` handler over `documents`; with `token`, only that token is accepted. */
export function search(options: { token?: string; documents?: HisterDocument[] } = {}): (req: FakeRequest) => FakeReply {
  return (req) => {
    if (!originAccepted(req)) return BAD_ORIGIN;
    if (options.token !== undefined) {
      const bearer = req.headers.authorization === `Bearer ${options.token}`;
      const header = req.headers['x-access-token'] === options.token;
      if (!bearer && !header) return FORBIDDEN;
    }
    const raw = req.query.get('query') ?? req.query.get('q');
    if (raw === null) return { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Bad Request\n' };
    let query: { text?: unknown; limit?: unknown };
    try {
      query = JSON.parse(raw) as typeof query;
    } catch {
      return { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'invalid query\n' };
    }
    const text = typeof query.text === 'string' ? query.text : '';
    const limit = typeof query.limit === 'number' && query.limit > 0 ? query.limit : 100;
    const hits = searchIndex(text, options.documents);
    return reply.json({
      total: hits.length,
      query: { text, limit },
      documents: hits.slice(0, limit),
      history: [],
      search_duration: '1.84ms',
      query_suggestion: '',
      page_key: '',
    });
  };
}

/** Routes of a Hister server under `prefix`. */
export function fakeRoutes(options: { token?: string; prefix?: string; documents?: HisterDocument[] } = {}): Record<string, FakeRoute> {
  return { [`GET ${options.prefix ?? '/hister'}/search`]: search(options) };
}

/** `engines.hister` settings (without the token) for a fake server at `url`. */
export function fakeSettings(url: string, prefix = '/hister'): Record<string, unknown> {
  return { base_url: `${url}${prefix}` };
}
