/**
 * A loopback crt.sh (engine `crtsh`, engines.md 9.1) under the path prefix `/crtsh`:
 * `GET /crtsh/json?q=<name>` answers a JSON array of certificate-log rows, field by field as
 * crt.sh writes them. `example.org` gets engines.md's four rows; any other name gets a
 * Let's Encrypt certificate and its precertificate for the name and `www.<name>`, and a Google
 * Trust Services one for `mail.<name>`; a name under `.invalid` (or `nothing.example`) has no
 * certificate (`[]`). `fakeRoutes()` for a fake server, `fakeSettings(url)` for `engines.crtsh`.
 * Failure replies crt.sh gives when overloaded (`overloaded`) and a body of any size (`hugeBody`)
 * are exported for the engine's tests.
 */
import type { FakeReply, FakeRoute } from './http.js';

export const PREFIX = '/crtsh';

export interface CrtshRow {
  issuer_ca_id: number;
  issuer_name: string;
  common_name: string;
  name_value: string;
  id: number;
  entry_timestamp: string;
  not_before: string;
  not_after: string;
  serial_number: string;
  result_count: number;
}

const LETS_ENCRYPT_R11 = { issuer_ca_id: 295815, issuer_name: 'C=US, O=Let\'s Encrypt, CN=R11' };
const LETS_ENCRYPT_R10 = { issuer_ca_id: 295815, issuer_name: 'C=US, O=Let\'s Encrypt, CN=R10' };
const GOOGLE_WR3 = { issuer_ca_id: 183267, issuer_name: 'C=US, O=Google Trust Services, CN=WR3' };

/** engines.md 9.1's example: a certificate and its precertificate, a mail certificate, a wildcard one. */
export const EXAMPLE_ORG_ROWS: CrtshRow[] = [
  {
    ...LETS_ENCRYPT_R11, common_name: 'www.example.org', name_value: 'example.org\nwww.example.org',
    id: 17850123456, entry_timestamp: '2025-05-02T10:12:33.512', not_before: '2025-05-02T09:13:59', not_after: '2025-07-31T09:13:58',
    serial_number: '04a1b2c3d4e5f60718293a4b5c6d7e8f9a0b', result_count: 4,
  },
  {
    ...LETS_ENCRYPT_R11, common_name: 'www.example.org', name_value: 'example.org\nwww.example.org',
    id: 17850120001, entry_timestamp: '2025-05-02T10:12:31.904', not_before: '2025-05-02T09:13:59', not_after: '2025-07-31T09:13:58',
    serial_number: '04a1b2c3d4e5f60718293a4b5c6d7e8f9a0b', result_count: 4,
  },
  {
    ...GOOGLE_WR3, common_name: 'mail.example.org', name_value: 'mail.example.org',
    id: 16020987654, entry_timestamp: '2025-02-11T07:40:02.118', not_before: '2025-02-11T06:40:01', not_after: '2025-05-12T06:40:00',
    serial_number: '7c1e55aa0f3b2d9e10c4a6b8d2e4f601', result_count: 4,
  },
  {
    ...LETS_ENCRYPT_R10, common_name: 'example.org', name_value: '*.example.org\nexample.org',
    id: 15511223344, entry_timestamp: '2024-12-01T03:05:12.777', not_before: '2024-12-01T02:06:40', not_after: '2025-03-01T02:06:39',
    serial_number: '03ffee0011223344556677889900aabbccdd', result_count: 4,
  },
];

/** engines.md 9.1's result for EXAMPLE_ORG_ROWS (ties in order of first appearance). */
export const EXAMPLE_ORG_TOP = [
  { domain: 'example.org', count: 3 },
  { domain: 'www.example.org', count: 2 },
  { domain: 'mail.example.org', count: 1 },
  { domain: '*.example.org', count: 1 },
];

/** Three rows for any name: a certificate and its precertificate for it and www, one for mail. */
export function rowsFor(name: string): CrtshRow[] {
  const base = { not_before: '2026-01-05T08:00:00', not_after: '2026-04-05T07:59:59', result_count: 3 };
  return [
    {
      ...LETS_ENCRYPT_R11, ...base, common_name: name, name_value: `${name}\nwww.${name}`, id: 21000000002,
      entry_timestamp: '2026-01-05T09:00:01.250', serial_number: '05d3c1a9e7f2b4608a1c3e5f7092b4d6e8f0',
    },
    {
      ...LETS_ENCRYPT_R11, ...base, common_name: name, name_value: `${name}\nwww.${name}`, id: 21000000001,
      entry_timestamp: '2026-01-05T09:00:00.731', serial_number: '05d3c1a9e7f2b4608a1c3e5f7092b4d6e8f0',
    },
    {
      ...GOOGLE_WR3, ...base, common_name: `mail.${name}`, name_value: `mail.${name}`, id: 20500000000,
      entry_timestamp: '2025-12-01T12:30:45.002', serial_number: '6a0e4c2b8d1f3a5c7e9b0d2f4a6c8e01',
    },
  ];
}

/** Names with no certificate logged. */
export function isUnknown(name: string): boolean {
  return name === 'nothing.example' || name.endsWith('.invalid');
}

/** crt.sh's answer for a query. */
export function answerFor(name: string): CrtshRow[] {
  if (isUnknown(name)) return [];
  return name.toLowerCase() === 'example.org' ? EXAMPLE_ORG_ROWS : rowsFor(name);
}

/** The page crt.sh's front end serves when the database is overloaded (HTML, not JSON). */
export function overloaded(status: 502 | 503 | 504 = 502): FakeReply {
  const title = status === 502 ? 'Bad Gateway' : status === 503 ? 'Service Temporarily Unavailable' : 'Gateway Time-out';
  return {
    status,
    headers: { 'content-type': 'text/html' },
    body: `<html>\r\n<head><title>${status} ${title}</title></head>\r\n<body>\r\n<center><h1>${status} ${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
  };
}

/** A valid crt.sh answer of at least `bytes` bytes (a domain with very many certificates). */
export function hugeBody(bytes: number, name = 'example.org'): string {
  const row = JSON.stringify({ ...EXAMPLE_ORG_ROWS[0], common_name: `host.${name}`, name_value: `host.${name}` });
  const rows = Math.ceil(bytes / (row.length + 1));
  return `[${Array.from({ length: rows }, () => row).join(',')}]`;
}

/** A handler answering `GET <prefix>/json?q=` from `answerFor`. */
export function jsonHandler(): FakeRoute {
  return (req) => {
    const q = req.query.get('q');
    if (q === null || q === '') return { status: 200, json: [] };
    return { status: 200, json: answerFor(q) };
  };
}

export function fakeRoutes(): Record<string, FakeRoute> {
  return { [`GET ${PREFIX}/json`]: jsonHandler() };
}

/**
 * `engines.crtsh` settings for a fake server at `url`. The pacing to crt.sh's one call a second
 * is lifted: whole-system tests analyse several names at once.
 */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${PREFIX}`, rate_limit: 1000, rate_window_ms: 1000 };
}
