/**
 * A stand-in for a self-hosted OpenCTI platform (provider_16) under a path prefix (`/opencti`
 * unless told): `POST <prefix>/graphql` parses the GraphQL body and answers per query:
 * - the global search (`SearchStixCoreObjectsLinesPaginationQuery`, a `globalSearch` query):
 *   the corpus's objects for `variables.search`, at most `variables.count` edges, with
 *   `pageInfo.globalCount` the total; an unknown value has no edges;
 * - `GetIndicator` (an `indicator(id:)` query): the indicator of `variables.id`, or
 *   `"indicator": null` for one that no longer exists;
 * - anything else: a GraphQL validation error (HTTP 400), as Apollo answers.
 * With `key`, any other bearer token gets OpenCTI's `AUTH_REQUIRED` error (HTTP 200, as the
 * platform answers). For the engine's tests and for whole-system tests.
 */
import { reply, type FakeRequest, type FakeReply, type FakeRoute } from './http.js';

export interface FakeNode {
  id: string;
  entity_type: string;
  created_at: string;
  createdBy?: { name: string; id: string } | null;
}

export interface FakeIndicator {
  name: string;
  x_opencti_score: number;
  revoked: boolean;
  valid_from: string;
  valid_until: string;
  confidence: number;
}

/** OpenCTI's answer to a request without a valid token. */
export const AUTH_REQUIRED = {
  errors: [{
    message: 'You must be logged in to do this.',
    locations: [{ line: 11, column: 3 }],
    path: ['globalSearch'],
    extensions: { code: 'AUTH_REQUIRED', data: { http_status: 401, genre: 'TECHNICAL' } },
    name: 'AUTH_REQUIRED',
  }],
  data: null,
};

const CERT = { name: 'CERT-X', id: 'identity--6e4c1a3b-2f0d-4c9a-9b1e-0d8f7a6c5b4e' };

/** Search values the corpus knows, with what the engine must find. */
export const KNOWN = {
  /** engines.md 5.19's example: an indicator and a domain. */
  FQDN: 'evil.example.com',
  /** The host of KNOWN_URL. */
  URL_HOST: 'phish.example.net',
  IPv4: '1.2.3.4',
  IPv6: '2606:4700:10::6816:1c5',
  MD5: '44d88612fea8a8f36de82e1278abb02f',
  SHA1: '3395856ce81f2b7382dee72602f798b642f14140',
  SHA256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f',
  /** A domain containing "http": no indicator. */
  HTTPBIN: 'httpbin.org',
  /** An indicator the detail query answers as null (deleted meanwhile). */
  GHOST: 'ghost.example.org',
} as const;

/** A URL with userinfo, a port and "http" in its query: its host is KNOWN.URL_HOST. */
export const KNOWN_URL = 'https://analyst:pw@phish.example.net:8443/login.php?next=http%3A%2F%2Fx';

export const INDICATORS: Record<string, FakeIndicator> = {
  'a1b2c3d4-0000-4000-8000-000000000001': {
    name: 'evil.example.com', x_opencti_score: 80, revoked: false,
    valid_from: '2025-05-02T10:00:00.000Z', valid_until: '2026-05-02T10:00:00.000Z', confidence: 75,
  },
  'a1b2c3d4-0000-4000-8000-000000000002': {
    // Near midnight UTC: a local-time conversion east of UTC would give the next day.
    name: '[ipv4-addr:value = \'1.2.3.4\']', x_opencti_score: 100, revoked: true,
    valid_from: '2024-01-01T23:30:00.000Z', valid_until: '2024-12-31T23:59:59.000Z', confidence: 90,
  },
  'a1b2c3d4-0000-4000-8000-000000000003': {
    name: 'phish.example.net', x_opencti_score: 60, revoked: false,
    valid_from: '2025-03-01T00:00:00.000Z', valid_until: '2025-09-01T00:00:00.000Z', confidence: 50,
  },
  'a1b2c3d4-0000-4000-8000-000000000004': {
    name: 'EICAR test file', x_opencti_score: 40, revoked: false,
    valid_from: '2024-06-01T00:00:00.000Z', valid_until: '2025-06-01T00:00:00.000Z', confidence: 100,
  },
};

const node = (id: string, entity_type: string, created_at: string, createdBy: FakeNode['createdBy'] = null): FakeNode => ({ id, entity_type, created_at, createdBy });
const FILE = [
  node('b0000000-0000-4000-8000-00000000f11e', 'StixFile', '2024-05-20T12:00:00.000Z', CERT),
  node('a1b2c3d4-0000-4000-8000-000000000004', 'Indicator', '2024-06-01T00:00:00.000Z', CERT),
  node('b0000000-0000-4000-8000-0000000e1ca5', 'Malware', '2023-11-02T09:00:00.000Z'),
];

/** Objects by search value, newest first (the query orders by created_at desc). */
export const OBJECTS: Record<string, FakeNode[]> = {
  [KNOWN.FQDN]: [
    // engines.md's example lists the indicator first although it is older; the engine uses
    // the first indicator and the latest created_at, whatever the order.
    node('a1b2c3d4-0000-4000-8000-000000000001', 'Indicator', '2025-05-02T10:00:00.000Z', CERT),
    node('c3d4e5f6-0000-4000-8000-000000000001', 'Domain-Name', '2025-06-10T08:00:00.000Z'),
  ],
  [KNOWN.IPv4]: [
    // As strings "2025-06-11T01:00:00+05:00" is the latest; as dates (20:00 UTC on the 10th) it is not.
    node('c3d4e5f6-0000-4000-8000-000000000002', 'IPv4-Addr', '2025-06-11T01:00:00+05:00'),
    node('c3d4e5f6-0000-4000-8000-000000000003', 'Report', '2025-06-10T21:00:00.000Z', CERT),
    node('a1b2c3d4-0000-4000-8000-000000000002', 'Indicator', '2024-01-01T23:30:00.000Z', CERT),
    node('c3d4e5f6-0000-4000-8000-000000000004', 'Report', '2024-01-01T08:00:00.000Z'),
  ],
  [KNOWN.IPv6]: [node('c3d4e5f6-0000-4000-8000-000000000005', 'IPv6-Addr', '2025-02-14T23:59:00.000Z')],
  [KNOWN.URL_HOST]: [
    node('c3d4e5f6-0000-4000-8000-000000000006', 'Url', '2025-04-01T00:00:00.000Z'),
    node('a1b2c3d4-0000-4000-8000-000000000003', 'Indicator', '2025-03-01T00:00:00.000Z', CERT),
    node('c3d4e5f6-0000-4000-8000-000000000007', 'Domain-Name', '2025-02-01T00:00:00.000Z'),
  ],
  [KNOWN.MD5]: FILE,
  [KNOWN.SHA1]: FILE,
  [KNOWN.SHA256]: FILE,
  [KNOWN.HTTPBIN]: [node('c3d4e5f6-0000-4000-8000-000000000008', 'Domain-Name', '2024-08-08T08:08:08.000Z')],
  [KNOWN.GHOST]: [
    node('c3d4e5f6-0000-4000-8000-000000000009', 'Domain-Name', '2025-01-05T00:00:00.000Z'),
    node('a1b2c3d4-0000-4000-8000-0000000000ff', 'Indicator', '2025-01-04T00:00:00.000Z'),
  ],
};

/** A search answer: edges with the members the engine's query asks for, and pageInfo. */
export function searchAnswer(nodes: readonly FakeNode[], first = 100): Record<string, unknown> {
  const shown = nodes.slice(0, first);
  return {
    data: {
      globalSearch: {
        edges: shown.map((n, i) => ({
          node: {
            id: n.id,
            entity_type: n.entity_type,
            created_at: n.created_at,
            createdBy: n.createdBy ?? null,
            creators: [{ id: '88ec0c6a-13ce-5e39-b486-354fe4a7084f', name: 'admin' }],
            objectMarking: [{ id: 'd1a6e2f4-0000-4000-8000-00000000714e', definition_type: 'TLP', definition: 'TLP:GREEN', x_opencti_order: 2, x_opencti_color: '#2e7d32' }],
          },
          cursor: Buffer.from(`arrayconnection:${i}`).toString('base64'),
        })),
        pageInfo: {
          endCursor: shown.length > 0 ? Buffer.from(`arrayconnection:${shown.length - 1}`).toString('base64') : null,
          hasNextPage: nodes.length > shown.length,
          globalCount: nodes.length,
        },
      },
    },
  };
}

interface GraphqlBody {
  id?: unknown;
  query?: unknown;
  variables?: Record<string, unknown>;
}

/** The /graphql handler over the corpus; with `key`, only `Bearer <key>` is accepted. */
export function graphql(options: { key?: string; objects?: Record<string, FakeNode[]>; indicators?: Record<string, FakeIndicator> } = {}): (req: FakeRequest) => FakeReply {
  const objects = options.objects ?? OBJECTS;
  const indicators = options.indicators ?? INDICATORS;
  return (req) => {
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || (options.key !== undefined && auth !== `Bearer ${options.key}`)) return reply.json(AUTH_REQUIRED);
    let body: GraphqlBody;
    try {
      body = JSON.parse(req.body) as GraphqlBody;
    } catch {
      return reply.json({ errors: [{ message: 'POST body missing, invalid Content-Type, or JSON object has no keys.', extensions: { code: 'BAD_REQUEST' } }] }, 400);
    }
    const query = typeof body.query === 'string' ? body.query : '';
    const variables = body.variables ?? {};
    if (/\bglobalSearch\s*\(/.test(query)) {
      const search = typeof variables.search === 'string' ? variables.search : '';
      const first = typeof variables.count === 'number' ? variables.count : 25;
      return reply.json(searchAnswer(objects[search] ?? [], first));
    }
    if (/\bindicator\s*\(\s*id\s*:/.test(query)) {
      const id = typeof variables.id === 'string' ? variables.id : '';
      return reply.json({ data: { indicator: indicators[id] ?? null } });
    }
    return reply.json({ errors: [{ message: 'Cannot query field "unknown" on type "Query".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }, 400);
  };
}

/** Routes of an OpenCTI platform under `prefix`. */
export function fakeRoutes(options: { key?: string; prefix?: string; objects?: Record<string, FakeNode[]>; indicators?: Record<string, FakeIndicator> } = {}): Record<string, FakeRoute> {
  return { [`POST ${options.prefix ?? '/opencti'}/graphql`]: graphql(options) };
}

/** `engines.provider_16` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string, prefix = '/opencti'): Record<string, unknown> {
  return { base_url: `${url}${prefix}` };
}
