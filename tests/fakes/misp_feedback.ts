/**
 * A stand-in for a self-hosted MISP-feedback daemon (`misp-fbd`, engines.md 9.3) under a path
 * prefix (`/misp-feedback` unless told):
 * - `POST <prefix>/lookup` reads `value` (and `false_positives_only`) from the JSON body and
 *   answers `{"value", "matched", "matches": [{slug, name, description, list_type, category,
 *   matching_attributes}]}` from a small set of MISP warning lists (public DNS resolvers, VPN
 *   ranges, RFC 1918, top domains, hashes of the empty file); anything else is
 *   `{"matched": false, "matches": []}`. The daemon's own refusals, as axum words them: 415
 *   without `Content-Type: application/json`, 400 for a body that is no JSON, 422 without `value`.
 * - `GET <prefix>/health` and `GET <prefix>/lists`, as the daemon answers them.
 *
 * The daemon has no authentication; with `token`, the fake plays the reverse proxy in front of
 * it: any `Authorization` other than `Basic base64(":" + token)` gets the proxy's 401 page.
 * For the engine's tests and for whole-system tests (`fakeRoutes`/`fakeSettings`).
 */
import { reply, type FakeRequest, type FakeReply, type FakeRoute } from './http.js';

export interface WarningList {
  slug: string;
  name: string;
  description: string;
  list_type: 'cidr' | 'hostname' | 'string' | 'substring' | 'regex';
  category: 'false-positive' | 'known';
  matching_attributes: string[];
  /** Whether a value is on the list (the daemon's matcher, simplified). */
  test: (value: string) => boolean;
}

const IP_ATTRIBUTES = ['ip-src', 'ip-dst', 'domain|ip'];
const HASH_ATTRIBUTES = ['md5', 'sha1', 'sha256', 'filename|md5', 'filename|sha1', 'filename|sha256'];
const DOMAIN_ATTRIBUTES = ['hostname', 'domain', 'url', 'domain|ip'];

const EMPTY_FILE = new Set([
  'd41d8cd98f00b204e9800998ecf8427e',
  'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
]);
const TOP_DOMAINS = new Set(['google.com', 'microsoft.com', 'github.com', 'cloudflare.com']);
const onDomain = (value: string, domains: Set<string>) => {
  const host = value.toLowerCase().replace(/\.$/, '');
  return [...domains].some((d) => host === d || host.endsWith(`.${d}`));
};

/** The warning lists the fake knows, in the daemon's order. */
export const WARNING_LISTS: WarningList[] = [
  {
    slug: 'public-dns-v4',
    name: 'List of known IPv4 public DNS resolvers',
    description: 'Event contains one or more public IPv4 DNS resolvers as attribute with an IDS flag set',
    list_type: 'cidr',
    category: 'false-positive',
    matching_attributes: IP_ATTRIBUTES,
    test: (v) => ['8.8.8.8', '8.8.4.4', '1.1.1.1', '9.9.9.9'].includes(v),
  },
  {
    slug: 'vpn-ipv4',
    name: 'Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters',
    description: 'Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters',
    list_type: 'cidr',
    category: 'false-positive',
    matching_attributes: IP_ATTRIBUTES,
    test: (v) => v === '8.8.8.8',
  },
  {
    slug: 'public-dns-v6',
    name: 'List of known IPv6 public DNS resolvers',
    description: 'Event contains one or more public IPv6 DNS resolvers as attribute with an IDS flag set',
    list_type: 'cidr',
    category: 'false-positive',
    matching_attributes: IP_ATTRIBUTES,
    test: (v) => ['2001:4860:4860::8888', '2001:4860:4860::8844', '2606:4700:4700::1111'].includes(v.toLowerCase()),
  },
  {
    slug: 'rfc1918',
    name: 'List of RFC 1918 CIDR blocks',
    description: 'Event contains one or more RFC 1918 private addresses (10/8, 172.16/12, 192.168/16) as attribute with an IDS flag set',
    list_type: 'cidr',
    category: 'false-positive',
    matching_attributes: IP_ATTRIBUTES,
    test: (v) => /^10\./.test(v) || /^192\.168\./.test(v) || /^172\.(1[6-9]|2\d|3[01])\./.test(v),
  },
  {
    slug: 'rfc4193',
    name: 'List of RFC 4193 CIDR blocks',
    description: 'Event contains one or more unique local IPv6 addresses (fc00::/7) as attribute with an IDS flag set',
    list_type: 'cidr',
    category: 'false-positive',
    matching_attributes: IP_ATTRIBUTES,
    test: (v) => /^f[cd][0-9a-f]{2}:/i.test(v),
  },
  {
    slug: 'cisco_top1000',
    name: 'Top 1000 websites from Cisco Umbrella',
    description: 'Event contains one or more entries from the top 1000 of the most used websites (Cisco Umbrella).',
    list_type: 'hostname',
    category: 'false-positive',
    matching_attributes: DOMAIN_ATTRIBUTES,
    test: (v) => onDomain(v, TOP_DOMAINS),
  },
  {
    slug: 'google',
    name: 'List of known google domains',
    description: 'List of known google domains (context list: known, not necessarily benign)',
    list_type: 'hostname',
    category: 'known',
    matching_attributes: DOMAIN_ATTRIBUTES,
    test: (v) => onDomain(v, new Set(['google.com'])),
  },
  {
    slug: 'common-ioc-false-positive',
    name: 'List of known hashes with common false-positives (based on Florian Roth input list)',
    description: 'Event contains one or more attributes with hashes that are known to be false positives',
    list_type: 'string',
    category: 'false-positive',
    matching_attributes: HASH_ATTRIBUTES,
    test: (v) => EMPTY_FILE.has(v.toLowerCase()),
  },
  {
    slug: 'empty-hashes',
    name: 'List of known hashes for empty files',
    description: 'List of known hashes for empty files',
    list_type: 'string',
    category: 'false-positive',
    matching_attributes: HASH_ATTRIBUTES,
    test: (v) => EMPTY_FILE.has(v.toLowerCase()),
  },
];

/** On a list, one per type the engine takes, with the names it must report. */
export const KNOWN = {
  IPv4: { value: '8.8.8.8', lists: ['List of known IPv4 public DNS resolvers', 'Specialized list of vpn-ipv4 addresses belonging to common VPN providers and datacenters'] },
  IPv6: { value: '2001:4860:4860::8888', lists: ['List of known IPv6 public DNS resolvers'] },
  FQDN: { value: 'www.google.com', lists: ['Top 1000 websites from Cisco Umbrella', 'List of known google domains'] },
  MD5: { value: 'd41d8cd98f00b204e9800998ecf8427e', lists: ['List of known hashes with common false-positives (based on Florian Roth input list)', 'List of known hashes for empty files'] },
  SHA1: { value: 'da39a3ee5e6b4b0d3255bfef95601890afd80709', lists: ['List of known hashes with common false-positives (based on Florian Roth input list)', 'List of known hashes for empty files'] },
  SHA256: { value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', lists: ['List of known hashes with common false-positives (based on Florian Roth input list)', 'List of known hashes for empty files'] },
} as const;

/** Private addresses the RFC lists hold (the reference never asked for them). */
export const PRIVATE = {
  IPv4: { value: '10.0.0.5', lists: ['List of RFC 1918 CIDR blocks'] },
  IPv6: { value: 'fd12:3456:789a::1', lists: ['List of RFC 4193 CIDR blocks'] },
} as const;

/** On no list, one per type the engine takes. */
export const CLEAN = {
  IPv4: '203.0.113.77',
  IPv6: '2a00:1450:4001:80b::200e',
  FQDN: 'evil.example.net',
  MD5: '44d88612fea8a8f36de82e1278abb02f',
  SHA1: '3395856ce81f2b7382dee72602f798b642f14140',
  SHA256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f',
} as const;

/** `Basic base64(":" + token)`, what the reverse proxy expects. */
export function basicFor(token: string): string {
  return `Basic ${Buffer.from(`:${token}`, 'utf8').toString('base64')}`;
}

/** nginx's page for a refused Basic authentication. */
export const PROXY_401: FakeReply = {
  status: 401,
  headers: { 'content-type': 'text/html', 'www-authenticate': 'Basic realm="misp-feedback"' },
  body: '<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
};

const text = (status: number, body: string): FakeReply => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });

/** The matches of a value, as the daemon serialises them. */
export function matchesFor(value: string, falsePositivesOnly = false, lists: WarningList[] = WARNING_LISTS): Record<string, unknown>[] {
  return lists
    .filter((list) => (!falsePositivesOnly || list.category === 'false-positive') && list.test(value))
    .map(({ slug, name, description, list_type, category, matching_attributes }) => ({ slug, name, description, list_type, category, matching_attributes }));
}

/** The `POST /lookup` handler; with `token`, the reverse proxy's Basic check in front. */
export function lookup(options: { token?: string; lists?: WarningList[] } = {}): (req: FakeRequest) => FakeReply {
  return (req) => {
    if (options.token !== undefined && req.headers.authorization !== basicFor(options.token)) return PROXY_401;
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      return text(415, 'Expected request with `Content-Type: application/json`');
    }
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      return text(400, 'Failed to parse the request body as JSON: expected value at line 1 column 1');
    }
    const { value, false_positives_only } = (typeof body === 'object' && body !== null ? body : {}) as { value?: unknown; false_positives_only?: unknown };
    if (typeof value !== 'string') {
      return text(422, 'Failed to deserialize the JSON body into the target type: missing field `value` at line 1 column 2');
    }
    const matches = matchesFor(value, false_positives_only === true, options.lists);
    return reply.json({ value, matched: matches.length > 0, matches });
  };
}

/** Routes of a MISP-feedback daemon under `prefix`. */
export function fakeRoutes(options: { token?: string; prefix?: string; lists?: WarningList[] } = {}): Record<string, FakeRoute> {
  const prefix = options.prefix ?? '/misp-feedback';
  const lists = options.lists ?? WARNING_LISTS;
  return {
    [`POST ${prefix}/lookup`]: lookup(options),
    [`GET ${prefix}/health`]: reply.json({ status: 'ok', lists_loaded: lists.length }),
    [`GET ${prefix}/lists`]: reply.json({
      count: lists.length,
      lists: lists.map(({ slug, name, description, list_type, category }) => ({ slug, name, description, list_type, category })),
    }),
  };
}

/** `engines.misp_feedback` settings (without the token) for a fake daemon at `url`. */
export function fakeSettings(url: string, prefix = '/misp-feedback'): Record<string, unknown> {
  return { base_url: `${url}${prefix}` };
}
