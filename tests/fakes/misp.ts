/**
 * A stand-in for a self-hosted MISP server (provider_15) under a path prefix (`/misp` unless told):
 * `POST <prefix>/attributes/restSearch` searches a small corpus of attributes the way MISP does
 * (the body's `value`, matching a whole value or one part of a composite `a|b` value, restricted
 * to the body's `type` filter) and answers `{"response": {"Attribute": [...]}}`, each attribute
 * with its `Event` as MISP adds it. Something unknown is `{"response": {"Attribute": []}}`.
 *
 * The key is checked when `key` is given: any other `Authorization` is MISP's 403 body. For the
 * engine's tests and for whole-system tests (`fakeRoutes`/`fakeSettings`).
 */
import { reply, type FakeRequest, type FakeReply, type FakeRoute } from './http.js';

export interface MispEventRef {
  id: string;
  info: string;
}

/** MISP's answer when the Authorization header holds no valid key of an API-enabled user. */
export const AUTH_FAILED = {
  name: 'Authentication failed. Please make sure you pass the API key of an API enabled user along in the Authorization header.',
  message: 'Authentication failed. Please make sure you pass the API key of an API enabled user along in the Authorization header.',
  url: '/attributes/restSearch',
};

let serial = 100;

/** One attribute as restSearch returns it (`timestamp` undefined leaves the member out). */
export function attribute(type: string, value: string, timestamp: string | undefined, event: MispEventRef, category = 'Network activity'): Record<string, unknown> {
  const id = String(++serial);
  const uuid = `5f3c${id.padStart(4, '0')}-0a1b-4c2d-8e3f-${id.padStart(12, '0')}`;
  return {
    id,
    event_id: event.id,
    object_id: '0',
    object_relation: null,
    category,
    type,
    to_ids: true,
    uuid,
    ...(timestamp !== undefined ? { timestamp } : {}),
    distribution: '5',
    sharing_group_id: '0',
    comment: '',
    deleted: false,
    disable_correlation: false,
    first_seen: null,
    last_seen: null,
    value,
    Event: { org_id: '1', distribution: '1', id: event.id, info: event.info, orgc_id: '1', uuid: `c0ffee00-0000-4000-8000-${event.id.padStart(12, '0')}` },
  };
}

const C2 = { id: '12', info: 'Cobalt Strike C2 list' };
const PHISHING = { id: '30', info: 'Phishing kit infra' };
const OLD = { id: '3', info: 'Old botnet (2001)' };
const NO_TS = { id: '41', info: 'Imported without timestamps' };
const FEED = (n: number) => ({ id: String(200 + n), info: `OSINT feed ${n}` });

/** Observables the corpus knows, one per type, with what the engine must find. */
export const KNOWN = {
  IPv4: '1.2.3.4',
  IPv6: '2606:4700:10::6816:1c5',
  FQDN: 'evil.example.com',
  URL: 'https://evil.example.com/login.php?id=1',
  MD5: '44d88612fea8a8f36de82e1278abb02f',
  SHA1: '3395856ce81f2b7382dee72602f798b642f14140',
  SHA256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f',
} as const;

/** The corpus: engines.md 5.18's example for 1.2.3.4, and one case per type. */
export const ATTRIBUTES: Record<string, unknown>[] = [
  // engines.md's example: 3 attributes in 2 events.
  attribute('ip-dst', KNOWN.IPv4, '1704067200', C2),
  attribute('ip-src', KNOWN.IPv4, '1717200000', PHISHING),
  attribute('ip-dst', KNOWN.IPv4, '1717200100', PHISHING),
  // Same value under a type outside the IP filter: never returned for an IP search.
  attribute('text', KNOWN.IPv4, '1720000000', FEED(9), 'Other'),
  // IPv6: a composite ip|port attribute, timestamps of different digit counts (bug 21).
  attribute('ip-dst|port', `${KNOWN.IPv6}|443`, '999999999', OLD),
  attribute('ip-dst', KNOWN.IPv6, '1717200000', PHISHING),
  // FQDN: domain, hostname, domain|ip; one attribute without a timestamp.
  attribute('domain', KNOWN.FQDN, '1704067200', C2),
  attribute('hostname', KNOWN.FQDN, undefined, NO_TS),
  attribute('domain|ip', `${KNOWN.FQDN}|203.0.113.9`, '1717200100', PHISHING),
  // URL: the whole URL as value.
  attribute('url', KNOWN.URL, '1717200000', PHISHING),
  // Hashes.
  attribute('md5', KNOWN.MD5, '1700000000', FEED(1), 'Payload delivery'),
  attribute('sha1', KNOWN.SHA1, '999999999', OLD, 'Payload delivery'),
  attribute('sha1', KNOWN.SHA1, '1000000000', FEED(2), 'Payload delivery'),
  // SHA256: seven events, so only the five newest are listed.
  ...[1, 2, 3, 4, 5, 6, 7].map((n) => attribute('sha256', KNOWN.SHA256, String(1_700_000_000 + n * 86_400), FEED(n), 'Payload delivery')),
];

/** Whether an attribute answers restSearch's `value` and `type` filter. */
function matches(attr: Record<string, unknown>, value: string, filter: unknown): boolean {
  const types = Array.isArray(filter) ? filter : typeof filter === 'string' ? [filter] : null;
  if (types && !types.includes(attr.type)) return false;
  const stored = String(attr.value);
  return stored === value || stored.split('|').includes(value);
}

/** The restSearch handler over `corpus`; with `key`, only that key is accepted. */
export function restSearch(options: { key?: string; corpus?: Record<string, unknown>[] } = {}): (req: FakeRequest) => FakeReply {
  const corpus = options.corpus ?? ATTRIBUTES;
  return (req) => {
    const auth = req.headers.authorization;
    if (!auth || (options.key !== undefined && auth !== options.key)) return reply.json(AUTH_FAILED, 403);
    let body: { returnFormat?: unknown; value?: unknown; type?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return reply.json({ name: 'Invalid request body.', message: 'Invalid request body.', url: '/attributes/restSearch' }, 400);
    }
    if (body.returnFormat !== 'json' || typeof body.value !== 'string') {
      return reply.json({ name: 'Invalid request.', message: 'Invalid request.', url: '/attributes/restSearch' }, 400);
    }
    const value = body.value;
    return reply.json({ response: { Attribute: corpus.filter((attr) => matches(attr, value, body.type)) } });
  };
}

/**
 * `GET /servers/getVersion` as MISP answers it (what `oas doctor` asks): the version and the
 * user's permissions, or 403 with MISP's words for a key it refuses.
 */
export function getVersion(options: { key?: string } = {}): (req: FakeRequest) => FakeReply {
  return (req) => {
    const auth = req.headers.authorization;
    if (!auth || (options.key !== undefined && auth !== options.key)) return reply.json({ ...AUTH_FAILED, url: '/servers/getVersion' }, 403);
    return reply.json({ version: '2.4.190', pymisp_recommended_version: '2.4.190', perm_sync: false, perm_sighting: true, perm_galaxy_editor: false, request_encoding: ['gzip', 'br'], filter_sightings: true });
  };
}

/** Routes of a MISP server under `prefix`. */
export function fakeRoutes(options: { key?: string; prefix?: string; corpus?: Record<string, unknown>[] } = {}): Record<string, FakeRoute> {
  const prefix = options.prefix ?? '/misp';
  return { [`POST ${prefix}/attributes/restSearch`]: restSearch(options), [`GET ${prefix}/servers/getVersion`]: getVersion(options) };
}

/** `engines.provider_15` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string, prefix = '/misp'): Record<string, unknown> {
  return { base_url: `${url}${prefix}` };
}
