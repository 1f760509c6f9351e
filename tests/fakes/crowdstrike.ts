/**
 * A loopback CrowdStrike Falcon API (provider_04, engines.md 5.5) under a path prefix
 * (`/crowdstrike` by default):
 * - `POST <prefix>/oauth2/token` (form `client_id`, `client_secret`) issues a random token with
 *   `expires_in` (201, as Falcon answers); wrong credentials get Falcon's 401;
 * - `GET <prefix>/iocs/aggregates/indicators/device-count/v1?type=&value=`;
 * - `POST <prefix>/intel/entities/indicators/GET/v1` `{"ids": [...]}`.
 * The API answers only a bearer token it issued (and not revoked). Every token request and
 * every issued token is recorded, so tests can count them and look for leaks.
 *
 * `fakeRoutes()` / `fakeSettings(url)` serve whole-system tests (any credentials accepted).
 */
import { randomBytes } from 'node:crypto';
import { reply, type FakeReply, type FakeRequest, type FakeRoute } from './http.js';

export const PREFIX = '/crowdstrike';

export interface FalconIndicator {
  id: string;
  indicator: string;
  type: string;
  published_date?: number;
  last_updated?: number;
  malicious_confidence?: string;
  actors?: string[];
  threat_types?: string[];
  kill_chains?: string[];
  malware_families?: string[];
  vulnerabilities?: string[];
  [key: string]: unknown;
}

/** What the tenant knows: device counts by `<type>:<value>`, intel by indicator id. */
export interface FalconData {
  devices: Record<string, number>;
  intel: Record<string, FalconIndicator>;
}

function indicator(id: string, fields: Partial<FalconIndicator>): FalconIndicator {
  const [, type = 'domain', value = ''] = /^(domain|ip_address|hash_md5|hash_sha1|hash_sha256)_(.*)$/.exec(id) ?? [];
  return {
    id,
    indicator: value,
    type,
    deleted: false,
    published_date: 1704067200,
    last_updated: 1717200000,
    malicious_confidence: 'high',
    reports: ['CSIT-24001'],
    actors: [],
    malware_families: [],
    kill_chains: [],
    ip_address_types: [],
    domain_types: [],
    threat_types: [],
    targets: ['Government', 'Financial Services'],
    vulnerabilities: [],
    labels: [{ name: 'MaliciousConfidence/High', created_on: 1704067200, last_valid_on: 1717200000 }],
    relations: [],
    ...fields,
  };
}

export const EICAR = {
  md5: '44d88612fea8a8f36de82e1278abb02f',
  sha1: '3395856ce81f2b7382dee72602f798b642f14140',
  sha256: '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f',
};

/** One known indicator per type, plus device sightings. */
export const FALCON_DATA: FalconData = {
  devices: {
    'domain:malware-c2.example': 3,
    'domain:login.phish.example': 2,
    'ipv4:45.155.205.66': 1,
    'ipv6:2a03:b0c0:3:d0::1af:1': 4,
    [`md5:${EICAR.md5}`]: 7,
    [`sha256:${EICAR.sha256}`]: 7,
    'domain:example.com': 12,
    'ipv4:8.8.8.8': 25,
  },
  intel: Object.fromEntries([
    indicator('domain_malware-c2.example', {
      actors: ['FANCYBEAR'], threat_types: ['Criminal'], kill_chains: ['C2'], malware_families: ['Emotet'],
      vulnerabilities: ['CVE-2023-1234'], domain_types: ['Actor Controlled'],
    }),
    indicator('domain_login.phish.example', {
      malicious_confidence: 'medium', threat_types: ['Phishing'], kill_chains: ['Delivery'],
      published_date: 1717199999, last_updated: 1720051199,
    }),
    indicator('ip_address_45.155.205.66', {
      malicious_confidence: 'low', actors: ['WIZARDSPIDER'], threat_types: ['Criminal', 'Ransomware'],
      kill_chains: ['C2', 'ActionOnObjectives'], malware_families: ['TrickBot', 'Conti'], ip_address_types: ['C2'],
    }),
    indicator('ip_address_2a03:b0c0:3:d0::1af:1', { malicious_confidence: 'unverified', threat_types: ['Commodity'] }),
    indicator(`hash_md5_${EICAR.md5}`, { malware_families: ['EICAR-Test-File'], threat_types: ['Commodity'] }),
    indicator(`hash_sha1_${EICAR.sha1}`, { malware_families: ['EICAR-Test-File'], threat_types: ['Commodity'], published_date: undefined }),
    indicator(`hash_sha256_${EICAR.sha256}`, { malware_families: ['EICAR-Test-File'], threat_types: ['Commodity'] }),
  ].map((i) => [i.id, i])),
};

export interface FalconFakeOptions {
  prefix?: string;
  /** Expected credentials; when unset any non-empty pair is accepted. */
  clientId?: string;
  clientSecret?: string;
  /** `expires_in` of issued tokens (number or string), default 1799 as Falcon; null leaves it out. */
  expiresIn?: number | string | null;
  /** The API answers 401 to the first N tokens issued (revoked right after issue). */
  rejectFirst?: number;
  data?: FalconData;
}

export interface FalconFake {
  routes: Record<string, FakeRoute>;
  /** Token requests received (good or bad). */
  tokenRequests(): number;
  /** Every token issued so far. */
  issued: string[];
  /** API requests and the token each carried. */
  apiCalls: { path: string; token: string | undefined }[];
}

function meta(): Record<string, unknown> {
  return { query_time: 0.004211, powered_by: 'crowdstrike-api-gateway', trace_id: '9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f' };
}

function falconError(status: number, message: string, withResources = false): FakeReply {
  return reply.json({ meta: meta(), ...(withResources ? { resources: [] } : {}), errors: [{ code: status, message }] }, status);
}

export function falconFake(options: FalconFakeOptions = {}): FalconFake {
  const prefix = options.prefix ?? PREFIX;
  const data = options.data ?? FALCON_DATA;
  const issued: string[] = [];
  const revoked = new Set<string>();
  const apiCalls: FalconFake['apiCalls'] = [];
  let tokenRequests = 0;

  /** The token of a request if the API accepts it, else Falcon's 401. */
  function authorize(req: FakeRequest): FakeReply | null {
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    apiCalls.push({ path: req.path, token });
    if (!token || !issued.includes(token) || revoked.has(token)) return falconError(401, 'access denied, invalid bearer token');
    return null;
  }

  const routes: Record<string, FakeRoute> = {
    [`POST ${prefix}/oauth2/token`]: (req) => {
      tokenRequests++;
      const form = new URLSearchParams(req.body);
      const id = form.get('client_id') ?? '';
      const secret = form.get('client_secret') ?? '';
      const good = id !== '' && secret !== ''
        && (options.clientId === undefined || id === options.clientId)
        && (options.clientSecret === undefined || secret === options.clientSecret);
      if (!good) return falconError(401, 'access denied, invalid client');
      const token = randomBytes(48).toString('base64url');
      issued.push(token);
      if (issued.length <= (options.rejectFirst ?? 0)) revoked.add(token);
      const expiresIn = options.expiresIn === undefined ? 1799 : options.expiresIn;
      return reply.json({ access_token: token, token_type: 'bearer', ...(expiresIn === null ? {} : { expires_in: expiresIn }) }, 201);
    },
    [`GET ${prefix}/iocs/aggregates/indicators/device-count/v1`]: (req) => {
      const denied = authorize(req);
      if (denied) return denied;
      const type = req.query.get('type') ?? '';
      const value = req.query.get('value') ?? '';
      if (!['domain', 'ipv4', 'ipv6', 'md5', 'sha1', 'sha256'].includes(type) || value === '') {
        return falconError(400, `invalid indicator type or value: type=${type}`);
      }
      const devices = data.devices[`${type}:${value}`];
      if (devices === undefined) return falconError(404, `No results found for type=${type} value=${value}`, true);
      return reply.json({ meta: meta(), resources: [{ id: `${type}:${value}`, type, value, device_count: devices }], errors: [] });
    },
    [`POST ${prefix}/intel/entities/indicators/GET/v1`]: (req) => {
      const denied = authorize(req);
      if (denied) return denied;
      let ids: unknown;
      try {
        ids = (JSON.parse(req.body) as { ids?: unknown }).ids;
      } catch {
        return falconError(400, 'invalid JSON body');
      }
      if (!Array.isArray(ids) || ids.length === 0) return falconError(400, 'ids is required');
      const found = ids.map((id) => data.intel[String(id)]).filter((i): i is FalconIndicator => i !== undefined);
      if (found.length === 0) return falconError(404, 'Not Found', true);
      return reply.json({ meta: meta(), resources: found, errors: [] });
    },
  };
  return { routes, tokenRequests: () => tokenRequests, issued, apiCalls };
}

/** For whole-system tests: the Falcon API at `/crowdstrike`, any credentials accepted. */
export function fakeRoutes(): Record<string, FakeRoute> {
  const fake = falconFake();
  wholeSystem.push(fake);
  return fake.routes;
}

const wholeSystem: FalconFake[] = [];

/** Every token the whole-system fakes issued: leak tests look for them too. */
export function issuedTokens(): string[] {
  return wholeSystem.flatMap((fake) => fake.issued);
}

/** `engines.provider_04` settings (without the credentials) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${PREFIX}` };
}
