/**
 * A loopback abuse.ch URLhaus API (urlhaus-api.abuse.ch), answering as its public documentation
 * describes, for the custom-engine example of docs/custom-engines/urlhaus.json:
 *
 * - `POST /v1/host/` with the form field `host` (a domain or an IPv4 address): `query_status`
 *   `ok` with `urlhaus_reference`, `host`, `firstseen`, `url_count` (a string), `blacklists`
 *   (`spamhaus_dbl`, `surbl`) and `urls` (newest first: `url`, `url_status`, `threat`, `tags`...);
 *   `no_results` for a host it has no record of; `invalid_host` when `host` is missing or is no host;
 * - `POST /v1/url/` with the form field `url`: `ok` with the URL's own record (`url_status`,
 *   `threat`, `tags`, `blacklists`, `payloads`...), `no_results`, or `invalid_url`;
 * - any other method: `http_post_expected`.
 *
 * Every answer is HTTP 200 with its `query_status`: "nothing known" is not a 404. Like abuse.ch
 * since the Auth-Key became mandatory, a call without the `Auth-Key` header, or with an unknown
 * one, is refused with 401 (`{"query_status": "unknown_auth_key"}`, as tests/fakes/threatfox.ts).
 * A body that is not a form (JSON, say) carries no form field, so it gets `invalid_host` /
 * `invalid_url`: the test of a definition that forgot its Content-Type fails there.
 */
import { startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from './http.js';

/** One URL as the host lookup lists it (and the base of the URL lookup's record). */
export interface UrlhausUrl {
  url: string;
  url_status: 'online' | 'offline' | 'unknown';
  threat: string;
  tags: string[];
  date_added: string;
  reporter?: string;
}

export interface UrlhausFake {
  server: FakeHttpServer;
  url: string;
  /** Listed URLs (every host of theirs is listed too), newest first per host. */
  urls: UrlhausUrl[];
  close(): Promise<void>;
}

/** The key the fake accepts unless told otherwise. */
export const URLHAUS_KEY = 'urlhaus-test-auth-key-0123456789abcdef';

/** A listed host with one URL still online and one offline (the documentation's example, shortened). */
export const LISTED: UrlhausUrl[] = [
  { url: 'http://vektorex.com/source/Z/5016223.exe', url_status: 'online', threat: 'malware_download', tags: ['AZORult', 'exe'], date_added: '2019-02-11 07:45:05 UTC', reporter: 'abuse_ch' },
  { url: 'http://vektorex.com/source/Z/Order%20839.png', url_status: 'offline', threat: 'malware_download', tags: ['exe', 'Loki'], date_added: '2019-02-11 06:47:03 UTC', reporter: 'abuse_ch' },
  { url: 'http://45.61.49.78/razor/r4z0r.mips', url_status: 'offline', threat: 'malware_download', tags: ['elf', 'Mozi'], date_added: '2024-09-27 10:44:06 UTC', reporter: 'geenensp' },
];

const HOST = /^(?:(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}|(?:\d{1,3}\.){3}\d{1,3})$/i;

export async function startUrlhaus(options: { key?: string; urls?: UrlhausUrl[] } = {}): Promise<UrlhausFake> {
  const key = options.key ?? URLHAUS_KEY;
  const urls = [...(options.urls ?? LISTED)];
  const refused: FakeReply = { status: 401, json: { query_status: 'unknown_auth_key' } };
  const ids = new Map<string, number>();
  const idOf = (url: string) => ids.get(url) ?? ids.set(url, 3193886 - ids.size).get(url)!;
  const entry = (u: UrlhausUrl) => ({
    id: String(idOf(u.url)),
    urlhaus_reference: `https://urlhaus.abuse.ch/url/${idOf(u.url)}/`,
    url: u.url,
    url_status: u.url_status,
    host: new URL(u.url).hostname,
    date_added: u.date_added,
    threat: u.threat,
    blacklists: { spamhaus_dbl: 'not listed', surbl: 'not listed' },
    reporter: u.reporter ?? 'abuse_ch',
    larted: 'true',
    takedown_time_seconds: null,
    tags: u.tags,
  });
  /** The form fields of a POST, or none when its body is not a form. */
  const form = (req: FakeRequest) => (/application\/x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? '')) ? new URLSearchParams(req.body) : new URLSearchParams());
  const guarded = (answer: (req: FakeRequest) => FakeReply) => (req: FakeRequest): FakeReply => {
    if (req.method !== 'POST') return { json: { query_status: 'http_post_expected' } };
    if (req.headers['auth-key'] !== key) return refused;
    return answer(req);
  };

  const server = await startFakeHttp({
    '/v1/host/': guarded((req) => {
      const host = form(req).get('host')?.trim().toLowerCase() ?? '';
      if (!HOST.test(host)) return { json: { query_status: 'invalid_host' } };
      const listed = urls.filter((u) => new URL(u.url).hostname === host);
      if (listed.length === 0) return { json: { query_status: 'no_results' } };
      return {
        json: {
          query_status: 'ok',
          urlhaus_reference: `https://urlhaus.abuse.ch/host/${host}/`,
          host,
          firstseen: listed.map((u) => u.date_added).sort()[0],
          url_count: String(listed.length),
          blacklists: { spamhaus_dbl: /^\d/.test(host) ? 'not listed' : 'abused_legit_malware', surbl: 'not listed' },
          urls: listed.map(entry),
        },
      };
    }),
    '/v1/url/': guarded((req) => {
      const url = form(req).get('url')?.trim() ?? '';
      if (!/^https?:\/\/\S+$/i.test(url)) return { json: { query_status: 'invalid_url' } };
      const listed = urls.find((u) => u.url === url);
      if (!listed) return { json: { query_status: 'no_results' } };
      return { json: { query_status: 'ok', ...entry(listed), last_online: null, payloads: [] } };
    }),
  });
  return { server, url: server.url, urls, close: () => server.close() };
}
