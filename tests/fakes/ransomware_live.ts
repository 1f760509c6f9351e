/**
 * A loopback Ransomware.live Pro API (engine `ransomware_live`, engines.md 9.2) under the path
 * prefix `/ransomware_live`: `GET /ransomware_live/victims/search?q=<term>` with the key in
 * `X-API-KEY`. Like the Pro API, a keyword search over a small victim database (names and
 * domains, case-insensitive), answered in the envelope `{client, query, count, victims}` with the
 * legacy victim fields; no hit is `{query, count: 0, victims: []}`; a missing or wrong key is
 * 401 `{"detail": ...}`. `fakeRoutes({ key })` for a fake server (without `key`, any non-empty
 * key is accepted), `fakeSettings(url)` for `engines.ransomware_live` (the key is the caller's).
 */
import type { FakeRoute } from './http.js';

export const PREFIX = '/ransomware_live';

/** A victim as `/victims/search` lists it (legacy field names). */
export interface FakeVictim {
  post_title: string;
  group_name: string;
  website: string;
  published: string;
  discovered: string;
  country: string;
  activity: string;
  description: string;
  screenshot: string;
  infostealer: Record<string, unknown> | string;
  press: unknown[] | null;
  permalink: string;
  [extra: string]: unknown;
}

/** `https://www.ransomware.live/id/<base64 of "post_title@group_name">`. */
export function permalink(postTitle: string, group: string): string {
  return `https://www.ransomware.live/id/${Buffer.from(`${postTitle}@${group}`).toString('base64')}`;
}

function victim(postTitle: string, group: string, website: string, fields: Partial<FakeVictim>): FakeVictim {
  return {
    post_title: postTitle,
    group_name: group,
    website,
    published: '2025-01-01 00:00:00',
    discovered: '2025-01-01 00:00:00.000000',
    country: '',
    activity: 'Not Found',
    description: '',
    screenshot: '',
    infostealer: '',
    press: null,
    permalink: permalink(postTitle, group),
    ...fields,
  };
}

/** engines.md 9.2's example victim. */
export const EXAMPLE_CORP = victim('Example Corp', 'lockbit3', 'example.com', {
  published: '2025-03-13 00:00:00',
  discovered: '2025-03-14 08:21:45.123456',
  country: 'US',
  activity: 'Manufacturing',
  description: 'Example Corp is a manufacturer of industrial fasteners with plants in Ohio and Michigan.',
  screenshot: 'https://images.ransomware.live/screenshots/posts/0b3f6b1c2d4e5f60718293a4b5c6d7e8.png',
  infostealer: { employees: 12, users: 340, thirdparties: 2, update: '2025-03-15' },
});

/** A second hit for "example.com" (a keyword search: a subdomain's victim matches too). */
export const EXAMPLE_SHOP = victim('Example Shop', 'play', 'shop.example.com', {
  published: '2024-11-02 14:05:00',
  discovered: '2024-11-02 14:33:10.482913',
  country: 'DE',
  activity: 'Consumer Services',
  description: '',
  press: [{ source: 'Example News', url: 'https://news.example.net/2024/11/example-shop-ransomware', summary: 'Online shop hit by Play' }],
});

/** A victim found by its name only. */
export const ACME = victim('ACME Logistics GmbH', 'akira', 'acme-logistics.de', {
  published: '2025-06-20 09:00:00',
  discovered: '2025-06-20 10:12:00.000001',
  country: 'DE',
  activity: 'Transportation/Logistics',
});

export const VICTIMS: readonly FakeVictim[] = [EXAMPLE_CORP, EXAMPLE_SHOP, ACME];

/** The victims whose name or domain contains the term, case-insensitively. */
export function search(term: string): FakeVictim[] {
  const needle = term.trim().toLowerCase();
  if (needle === '') return [];
  return VICTIMS.filter((v) => v.website.toLowerCase().includes(needle) || v.post_title.toLowerCase().includes(needle));
}

/** The envelope of `/victims/search` for a term. */
export function envelope(term: string, victims: readonly unknown[] = search(term)): Record<string, unknown> {
  return victims.length > 0
    ? { client: 'analyst@example.net', query: term, count: victims.length, victims }
    : { query: term, count: 0, victims: [] };
}

/** The Pro API's refusal of a missing or wrong key. */
export const INVALID_KEY = { detail: 'Invalid or missing API key' };

/** `GET <prefix>/victims/search?q=`, checking `X-API-KEY` (against `key` when given). */
export function searchHandler(options: { key?: string } = {}): FakeRoute {
  return (req) => {
    const sent = req.headers['x-api-key'];
    if (typeof sent !== 'string' || sent === '' || (options.key !== undefined && sent !== options.key)) {
      return { status: 401, json: INVALID_KEY };
    }
    const q = req.query.get('q');
    if (q === null) return { status: 422, json: { detail: [{ loc: ['query', 'q'], msg: 'field required', type: 'value_error.missing' }] } };
    return { status: 200, json: envelope(q) };
  };
}

export function fakeRoutes(options: { key?: string } = {}): Record<string, FakeRoute> {
  return { [`GET ${PREFIX}/victims/search`]: searchHandler(options) };
}

/** `engines.ransomware_live` settings (without the key) for a fake server at `url`. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${PREFIX}` };
}
