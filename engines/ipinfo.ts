/**
 * provider_12 (ipinfo) — host name, location and network owner ("AS15169 Google LLC") of an IP
 * address from ipinfo.io: `GET {base_url}/{ip}/json?token=<api key>`.
 *
 * The result has engines.md 5.15's fields: `ip`, `geolocation` ("<city>, <region>"),
 * `country_code`, `country_name`, `hostname`, `asn` (ipinfo's raw `org` string, which bad_asn
 * reads: "AS13335 Cloudflare, Inc.") and `link`; a bogon answer gives the documented bogon result.
 * As in the reference, a field ipinfo leaves out (or sends null) is "Unknown", and one it sends is
 * kept as sent, `""` included (issue 32): `{"ip": "..."}` alone is a result of "Unknown"s, and
 * `"city": ""` gives the geolocation `", <region>"`. Summary and card leave out the "Unknown" and
 * empty parts.
 *
 * Better than the reference:
 * - Bug fixed (engines.md section 8 item 19): no request is made without a token (the reference
 *   sent `?token=` empty); the runner already refuses, and so does the lookup when called directly.
 * - HTTP errors (bad token, quota, 5xx), malformed answers and timeouts are reported (with
 *   ipinfo's reason, the token masked) instead of becoming null; 429/5xx are retried.
 * - `country_name` comes from the ICU region names built into Node ("Russia", "South Korea"),
 *   not pycountry's ISO names ("Russian Federation", "Korea, Republic of").
 * - The answer is read leniently (issue 26): only `ip` (or `bogon`) is needed. `bogon` is read as
 *   a boolean, so `"bogon": false` (or 0, "") is an ordinary answer, where the reference took the
 *   mere presence of the key for a bogon. A text field sent as a number is its text; fields the
 *   result does not use (`loc`, `postal`, `timezone`, `anycast`...) are not checked at all.
 * - An `ip` sent as "" is refused like a missing one (an error naming it): the result would name
 *   no address and link to ipinfo's home page, where the reference returned it so.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flag, text } from '../src/http/lenient.js';
import { BadResponseError } from '../src/http/errors.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';
import { UNKNOWN, countryName } from '../src/lookup/country.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

// ---------------------------------------------------------------------------------------------
// ipinfo.io

/**
 * ipinfo.io's answer (`/json`). Needed: a JSON object with `ip`, or `bogon` (checked below).
 * Read when present: `bogon` (0/1, "" and "true"/"false" as booleans) and the five texts the
 * result uses (absent or null → Unknown below, "" kept; a number is its text). Other fields (loc,
 * postal, timezone, anycast, and the paid plans' asn, company, privacy...) are not read.
 */
const IpinfoSchema = jsonObject({
  ip: v.optional(v.string()),
  bogon: flag(),
  hostname: text(),
  city: text(),
  region: text(),
  country: text(),
  org: text(),
});

export interface IpinfoResult {
  ip: string;
  /** `"<city>, <region>"`, each `Unknown` when missing (as sent otherwise, `""` included); `""` for a bogon. */
  geolocation: string;
  /** ISO 3166 code (`US`), `Unknown`; `""` for a bogon. */
  country_code: string;
  /** `United States`, `Unknown`; `Bogon` for a bogon. */
  country_name: string;
  /** Reverse DNS name, `Unknown`; `Private IP` for a bogon. */
  hostname: string;
  /** ipinfo's `org`: `"AS15169 Google LLC"`, `Unknown`; `BOGON` for a bogon. */
  asn: string;
  /** `https://ipinfo.io/<ip>` (the public page; never carries the token). */
  link: string;
}

const LINK_BASE = 'https://ipinfo.io';

export async function ipinfoLookup(observable: Observable, ctx: EngineContext): Promise<IpinfoResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const token = apiKeyOf(ctx);
  const url = `${String(ctx.settings.base_url).replace(/\/+$/, '')}/${ip}/json`;
  const response = await ctx.http.request(url, {
    query: { token },
    headers: { accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), IpinfoSchema);

  if (answer.bogon) {
    return { ip, geolocation: '', country_code: '', country_name: 'Bogon', hostname: 'Private IP', asn: 'BOGON', link: `${LINK_BASE}/${ip}` };
  }
  if (answer.ip === undefined || answer.ip.trim() === '') throw new BadResponseError('unexpected answer from upstream at ip: missing');
  const { hostname, city, region, country, org } = answer;
  return {
    ip: answer.ip,
    geolocation: `${city ?? UNKNOWN}, ${region ?? UNKNOWN}`,
    country_code: country ?? UNKNOWN,
    country_name: countryName(country),
    hostname: hostname ?? UNKNOWN,
    asn: org ?? UNKNOWN,
    link: `${LINK_BASE}/${answer.ip}`,
  };
}

/** `AS15169 Google LLC · Mountain View, California, US · dns.google`; `bogon (private or reserved address)`. */
export function ipinfoSummary(result: IpinfoResult): string {
  if (result.asn === 'BOGON') return 'bogon (private or reserved address)';
  const parts: string[] = [];
  if (result.asn !== '' && result.asn !== UNKNOWN) parts.push(result.asn);
  const place = [...result.geolocation.split(', '), result.country_code].filter((p) => p !== '' && p !== UNKNOWN);
  if (place.length > 0) parts.push(place.join(', '));
  if (result.hostname !== '' && result.hostname !== UNKNOWN) parts.push(result.hostname);
  return parts.length > 0 ? parts.join(' · ') : `${result.ip}: no data`;
}

/** The card: owner, host name, place, country, then ipinfo's page. `Unknown` values are left out. */
export function ipinfoDetails(result: IpinfoResult, target: string): DetailField[] {
  const link = sourceLink('Open in IPinfo', result.link || `${LINK_BASE}/${encodeURIComponent(result.ip || target)}`);
  if (result.asn === 'BOGON') return fields(field('Address', 'bogon (private or reserved address)'), link);
  const known = (value: string): string | null => (value !== '' && value !== UNKNOWN ? value : null);
  const place = result.geolocation.split(', ').filter((p) => p !== '' && p !== UNKNOWN).join(', ');
  const code = known(result.country_code);
  const name = known(result.country_name);
  return fields(
    field('Network owner', known(result.asn)),
    field('Host name', known(result.hostname)),
    field('Location', place),
    field('Country', name && code ? `${name} (${code})` : name ?? code),
    link,
  );
}

/** The ASN and owner of ipinfo's `AS15169 Google LLC` (none for `Unknown` or `BOGON`). */
export function ipinfoAsn(result: IpinfoResult): EngineAsn | undefined {
  const match = typeof result.asn === 'string' ? /^(AS\d+)\s*(.*)$/i.exec(result.asn.trim()) : null;
  return match ? { asn: match[1], org: match[2] } : undefined;
}

export default defineEngine<IpinfoResult>({
  id: 'provider_12',
  service: 'ipinfo',
  label: 'IPinfo',
  description: 'Host name, location and network owner (ASN) of an IP, or of the IP a domain/URL resolves to, from ipinfo.io (free token required)',
  tags: ['IP'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['IPINFO'] }],
  defaults: {
    timeout_ms: 5000,
    base_url: 'https://ipinfo.io',
    // ipinfo.io's free plan: 50,000 requests a month (ipinfo.io/pricing); a month taken as 30 days.
    rate_limit: 50_000,
    rate_window_ms: 30 * 86_400_000,
  },
  summary: ipinfoSummary,
  asn: ipinfoAsn,
  details: ipinfoDetails,
  run: ipinfoLookup,
});
