/**
 * A team's "internal threat-intel API", the kind of source `custom_engines` is for, served on the
 * loopback. It answers three ways, one per way a key travels:
 *
 * - `GET /v1/ip/<address>` with the key in the `X-Api-Key` header: `{ "data": { ... } }`, or 404
 *   `{ "error": "not found" }` for an address it has no record of;
 * - `POST /v1/search` with `Authorization: Bearer <key>` and a JSON body
 *   `{ "indicator": "...", "kind": "..." }`: `{ "total": N, "results": [ ... ] }`;
 * - `GET /v1/domain?name=<domain>&apikey=<key>`: `{ "domain": ..., "verdict": ..., ... }`, or 404.
 *
 * A wrong or missing key is a 401 `{ "error": "invalid API key" }`. Records are set per test.
 * `definitions()` gives the matching `custom_engines` entries (GET header, POST JSON body, query
 * string), pointed at this fake.
 */
import { startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from './http.js';

export interface IntelRecord {
  score: number;
  category: string;
  tags: string[];
  first_seen?: string;
  last_seen?: string;
  asn?: { number: number; org: string };
  /** Left out of the answer when absent, for the "absent pointer" cases. */
  notes?: string;
}

export interface InternalIntelFake {
  server: FakeHttpServer;
  url: string;
  /** Records by indicator (address, domain, hash, URL...). */
  records: Map<string, IntelRecord>;
  close(): Promise<void>;
}

/** The key the fake accepts unless told otherwise; holds the characters encodings change. */
export const INTEL_KEY = 'k3y+with/slash=and spaces&amp';

export async function startInternalIntel(options: { key?: string; records?: Record<string, IntelRecord> } = {}): Promise<InternalIntelFake> {
  const key = options.key ?? INTEL_KEY;
  const records = new Map(Object.entries(options.records ?? {}));
  const unauthorized: FakeReply = { status: 401, json: { error: 'invalid API key' } };
  const notFound: FakeReply = { status: 404, json: { error: 'not found' } };
  const server = await startFakeHttp({
    'GET /v1/ip/*': (req: FakeRequest) => {
      if (req.headers['x-api-key'] !== key) return unauthorized;
      const address = decodeURIComponent(req.path.slice('/v1/ip/'.length));
      const record = records.get(address);
      if (!record) return notFound;
      return { json: { data: { ip: address, ...record } } };
    },
    'POST /v1/search': (req: FakeRequest) => {
      if (req.headers.authorization !== `Bearer ${key}`) return unauthorized;
      let body: { indicator?: unknown; kind?: unknown };
      try {
        body = JSON.parse(req.body) as typeof body;
      } catch {
        return { status: 400, json: { error: 'body must be JSON' } };
      }
      const record = typeof body.indicator === 'string' ? records.get(body.indicator) : undefined;
      return { json: { total: record ? 1 : 0, results: record ? [{ indicator: body.indicator, kind: body.kind, ...record }] : [] } };
    },
    'GET /v1/domain': (req: FakeRequest) => {
      if (req.query.get('apikey') !== key) return unauthorized;
      const name = req.query.get('name') ?? '';
      const record = records.get(name);
      if (!record) return notFound;
      return { json: { domain: name, verdict: record.category, risk: record.score, tags: record.tags, ...(record.notes ? { notes: record.notes } : {}) } };
    },
  });
  return { server, url: server.url, records, close: () => server.close() };
}

/** `custom_engines` entries for the fake's three routes, their secret in `env`. */
export function intelDefinitions(url: string, env = 'INTEL_API_KEY'): Record<string, unknown> {
  return {
    intel: {
      label: 'Internal intel',
      description: 'The team\'s threat-intel API (addresses)',
      types: ['IPv4', 'IPv6'],
      reversed_ip: true,
      request: { url: `${url}/v1/ip/{value}`, headers: { 'X-Api-Key': '{secret.KEY}' } },
      secrets: { KEY: env },
      fields: { score: '/data/score', category: '/data/category', tags: '/data/tags', asn: '/data/asn/number', notes: '/data/notes' },
      summary: '{score}/100, {category}',
      evidence: [
        { field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}/100 ({category})' },
        { field: 'score', op: '>=', value: 40, verdict: 'suspicious', reason: 'score {score}/100' },
        { field: 'score', op: 'exists', verdict: 'clean', reason: 'known, score {score}/100' },
      ],
    },
    intel_search: {
      label: 'Internal intel search',
      types: ['FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
      request: {
        method: 'POST',
        url: `${url}/v1/search`,
        headers: { Authorization: 'Bearer {secret.TOKEN}' },
        body: { indicator: '{raw}', kind: '{type}', options: { limit: 1 } },
      },
      secrets: { TOKEN: env },
      fields: { total: '/total', category: '/results/0/category', score: '/results/0/score' },
      summary: '{total} hit(s): {category}',
      evidence: [{ field: 'total', op: '>', value: 0, verdict: 'suspicious', reason: 'listed as {category}' }],
    },
    intel_domain: {
      label: 'Internal intel domains',
      types: ['FQDN'],
      request: { url: `${url}/v1/domain`, query: { name: '{value}', apikey: '{secret.KEY}' } },
      secrets: { KEY: env },
      fields: { verdict: '/verdict', risk: '/risk', tags: '/tags', notes: '/notes' },
      summary: '{verdict} (risk {risk})',
      evidence: [
        { field: 'verdict', op: '==', value: 'phishing', verdict: 'malicious', reason: 'known phishing domain' },
        { field: 'tags', op: 'contains', value: 'parked', verdict: 'clean', reason: 'parked' },
      ],
    },
  };
}
