/**
 * A loopback DFIR-IRIS server (provider_06, engines.md 5.7) under the path prefix `/dfir_iris`:
 * `POST /dfir_iris/search?cid=1` with `{"search_value", "search_type": "ioc"}` searches the IOC
 * table below the way IRIS does (SQL ILIKE: `%` any run, `_` any one character) and answers
 * `{"status": "success", "message": "Results fetched", "data": [<matching IOCs>]}`.
 *
 * `fakeRoutes({ key })` for a fake server (a wrong or missing Bearer token gets IRIS's 401),
 * `fakeSettings(url)` for `engines.provider_06` pointing at it (the key is the caller's),
 * `searchHandler` to mount the same search under other prefixes.
 */
import type { FakeHandler, FakeRoute } from './http.js';

export const PREFIX = '/dfir_iris';

export interface IrisIoc {
  ioc_name: string;
  ioc_description: string;
  type_name: string;
  tlp_name: string;
  case_name: string;
  /** Absent on the odd record (the engine skips it). */
  case_id?: number;
  client_name: string;
  ioc_uuid: string;
  ioc_tags: string;
}

function ioc(ioc_name: string, type_name: string, case_id: number | undefined, extra: Partial<IrisIoc> = {}): IrisIoc {
  const n = case_id ?? 0;
  const record: IrisIoc = {
    ioc_name,
    ioc_description: '',
    type_name,
    tlp_name: 'amber',
    case_name: `#${n} - ${CASE_NAMES[n] ?? 'Investigation'}`,
    case_id,
    client_name: 'ACME',
    ioc_uuid: `5f0e8c1a-0000-4000-8000-${String(n).padStart(4, '0')}${Buffer.from(ioc_name).toString('hex').slice(0, 8).padEnd(8, '0')}`,
    ioc_tags: '',
    ...extra,
  };
  if (case_id === undefined) delete record.case_id;
  return record;
}

const CASE_NAMES: Record<number, string> = {
  2: 'Lateral movement srv01', 3: 'Phishing wave', 4: 'Emotet on HR laptop', 5: 'Exfiltration over IPv6',
  7: 'Tor exit scanning', 12: 'Phishing wave follow-up', 21: 'Brute force VPN', 30: 'Ransomware precursor', 40: 'Credential harvesting',
};

export const SHA256 = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
export const SHA1 = '3395856ce81f2b7382dee72602f798b642f14140';
export const MD5 = '44d88612fea8a8f36de82e1278abb02f';

/** The IOCs of the fake server's cases. */
export const IOCS: readonly IrisIoc[] = [
  ioc('evil.example.com', 'domain', 3, { ioc_description: 'Sender domain of the phishing wave' }),
  ioc('evil.example.com/x', 'url', 12),
  ioc('https://evil.example.com/login.php', 'url', 40, { tlp_name: 'red' }),
  ioc('https://evil.example.com/login.php?id=1', 'url', 12),
  ioc('185.220.101.4', 'ip-dst', 21),
  ioc('185.220.101.4', 'ip-src', 7),
  ioc('10.0.0.5', 'ip-any', 12, { ioc_description: 'Internal host reached by the payload' }),
  ioc('dst:10.0.0.5', 'other', 2),
  ioc('2a01:4f8:c17:b8f::2', 'ip-dst', 5),
  ioc(SHA256, 'sha256', 30),
  ioc(SHA256, 'sha256', 4),
  ioc(SHA256, 'sha256', undefined, { case_name: '' }),
  ioc(MD5, 'md5', 4),
  ioc(SHA1, 'sha1', 30),
];

/** SQL ILIKE: `%` any run of characters, `_` any one, case-insensitive, whole value. */
export function ilike(value: string, pattern: string): boolean {
  const source = [...pattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`, 'is').test(value);
}

/** IRIS's error body. */
export function irisError(message: string): Record<string, unknown> {
  return { status: 'error', message, data: [] };
}

/**
 * The search endpoint: checks the Bearer token (when `key` is given), `cid`, and the body, then
 * answers the IOCs of `iocs` matching `search_value`.
 */
export function searchHandler(options: { key?: string; iocs?: readonly IrisIoc[] } = {}): FakeHandler {
  const iocs = options.iocs ?? IOCS;
  return (req) => {
    const auth = String(req.headers.authorization ?? '');
    const token = /^Bearer (.+)$/.exec(auth)?.[1];
    if (!token || (options.key !== undefined && token !== options.key)) {
      return { status: 401, json: irisError('Authentication required') };
    }
    if (req.query.get('cid') === null) return { status: 400, json: irisError('Missing case id (cid)') };
    let body: { search_value?: unknown; search_type?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return { status: 400, json: irisError('Data error') };
    }
    if (body.search_type !== 'ioc' || typeof body.search_value !== 'string') {
      return { status: 400, json: irisError('Data error') };
    }
    const pattern = body.search_value;
    return { status: 200, json: { status: 'success', message: 'Results fetched', data: iocs.filter((i) => ilike(i.ioc_name, pattern)) } };
  };
}

export function fakeRoutes(options: { key?: string } = {}): Record<string, FakeRoute> {
  return { [`POST ${PREFIX}/search`]: searchHandler(options) };
}

/** `engines.provider_06` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${PREFIX}` };
}
