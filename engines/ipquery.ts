/**
 * provider_13 (ipquery) — ISP, ASN, location and risk (VPN, proxy, Tor, datacenter, score) of an
 * IP address from ipquery.io: `GET {base_url}/{ip}` (JSON), no key.
 *
 * The result has engines.md 5.16's fields (plus `is_datacenter` and `is_mobile`, which the
 * upstream gives too). As in the reference, a field ipquery.io leaves out (or sends null) is
 * "Unknown" (`asn` included: bad_asn and the graph read "Unknown" as no ASN, where the
 * reference's bad_asn took any non-empty `ipquery.asn` for one), and one it sends is kept as
 * sent, `""` included (issue 32): `{"ip": "..."}` alone is a result of "Unknown" defaults, and
 * `"city": ""` gives the geolocation `", <state>"`. Summary and card skip "Unknown" and "".
 *
 * Differences from the reference, on purpose:
 * - a 404 is "not found" (null); HTTP errors, rate limits and malformed answers are reported
 *   instead of becoming null;
 * - `link` is the address that was asked: `{base_url}/{queried ip}` (as HEAD does, not the IP
 *   echoed by the upstream as v0.8.9 did);
 * - without `isp.isp`, `isp` is `isp.org` when ipquery.io gives one (the reference: "Unknown");
 * - the answer is read leniently (issue 26): only `ip` is needed. Flags sent as 0/1 or "" are
 *   booleans (the reference copied them as they came), a `risk_score` sent as text is its
 *   number and one sent as "" or null is "Unknown" (a score is a number: "" is none).
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flagOrNull, numOrNull, text } from '../src/http/lenient.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/**
 * ipquery.io's JSON answer. Needed: `ip`. Each section may be missing or null for addresses it
 * knows little of; the fields in them are read when present (texts as sent, `""` included, a
 * score sent as text → its number; flags sent as 0/1, "" or "true"/"false" are booleans, absent
 * or null stay null, false below).
 */
const IpqueryUpstreamSchema = jsonObject({
  ip: v.string(),
  isp: v.nullish(v.looseObject({ asn: text(), org: text(), isp: text() })),
  location: v.nullish(v.looseObject({ country: text(), country_code: text(), city: text(), state: text() })),
  risk: v.nullish(v.looseObject({
    is_mobile: flagOrNull(),
    is_vpn: flagOrNull(),
    is_tor: flagOrNull(),
    is_proxy: flagOrNull(),
    is_datacenter: flagOrNull(),
    risk_score: numOrNull(),
  })),
});

export interface IpqueryResult {
  ip: string;
  /** `"<city>, <state>"`, each `Unknown` when missing (as sent otherwise, `""` included). */
  geolocation: string;
  country_code: string;
  country_name: string;
  isp: string;
  /** `"AS13335"` as sent; `"Unknown"` when the upstream names no ASN. */
  asn: string;
  is_vpn: boolean;
  is_tor: boolean;
  is_proxy: boolean;
  is_datacenter: boolean;
  is_mobile: boolean;
  /** 0–100, or "Unknown" when the upstream gives none. */
  risk_score: number | 'Unknown';
  link: string;
}

const UNKNOWN = 'Unknown';

export async function ipqueryLookup(observable: Observable, ctx: EngineContext): Promise<IpqueryResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const url = `${String(ctx.settings.base_url).replace(/\/+$/, '')}/${ip}`;
  const response = await ctx.http.request(url, { headers: { accept: 'application/json' }, acceptStatus: [404] });
  if (response.status === 404) return null;
  const answer = parseJson(response.text(), IpqueryUpstreamSchema);
  const { isp, location, risk } = answer;
  return {
    ip: answer.ip,
    geolocation: `${location?.city ?? UNKNOWN}, ${location?.state ?? UNKNOWN}`,
    country_code: location?.country_code ?? UNKNOWN,
    country_name: location?.country ?? UNKNOWN,
    isp: isp?.isp ?? isp?.org ?? UNKNOWN,
    asn: isp?.asn ?? UNKNOWN,
    is_vpn: risk?.is_vpn ?? false,
    is_tor: risk?.is_tor ?? false,
    is_proxy: risk?.is_proxy ?? false,
    is_datacenter: risk?.is_datacenter ?? false,
    is_mobile: risk?.is_mobile ?? false,
    risk_score: risk?.risk_score ?? UNKNOWN,
    link: url,
  };
}

/** A value that says something: not "", not "Unknown". */
function known(value: string | null | undefined): string | null {
  return value && value !== UNKNOWN ? value : null;
}

/** `AS13335 Cloudflare, Inc. · AU · risk 0 · datacenter · VPN · proxy · Tor`. */
export function ipquerySummary(result: IpqueryResult): string {
  const parts: string[] = [];
  const owner = [known(result.asn), known(result.isp)].filter(Boolean).join(' ');
  if (owner) parts.push(owner);
  const code = known(result.country_code);
  if (code) parts.push(code);
  parts.push(result.risk_score === UNKNOWN ? 'risk unknown' : `risk ${result.risk_score}`);
  if (result.is_datacenter) parts.push('datacenter');
  if (result.is_mobile) parts.push('mobile');
  if (result.is_vpn) parts.push('VPN');
  if (result.is_proxy) parts.push('proxy');
  if (result.is_tor) parts.push('Tor');
  return parts.join(' · ');
}

/**
 * Rule: a Tor, VPN or proxy flag, or ipquery's risk score ≥ 75, -> suspicious; otherwise no
 * evidence (not being an anonymiser does not clear an address).
 */
export function ipqueryEvidence(result: IpqueryResult | null): Evidence | undefined {
  if (!result) return undefined;
  const flags = [result.is_tor === true && 'Tor', result.is_vpn === true && 'VPN', result.is_proxy === true && 'proxy']
    .filter((f): f is string => typeof f === 'string');
  const risky = typeof result.risk_score === 'number' && result.risk_score >= 75;
  if (flags.length === 0 && !risky) return undefined;
  const parts = [flags.length > 0 ? `flagged ${flags.join(', ')}` : null, typeof result.risk_score === 'number' ? `risk ${result.risk_score}/100` : null];
  return { level: 'suspicious', reason: parts.filter(Boolean).join(', ') };
}

/** Card fields: risk score and flags first, then owner and place, then ipquery.io's answer. */
export function ipqueryDetails(result: IpqueryResult): DetailField[] {
  const flags = [
    result.is_vpn && 'VPN',
    result.is_proxy && 'proxy',
    result.is_tor && 'Tor',
    result.is_datacenter && 'datacenter',
    result.is_mobile && 'mobile',
  ].filter((f): f is string => typeof f === 'string');
  const country = known(result.country_name);
  const code = known(result.country_code);
  return fields(
    field('Risk score', result.risk_score),
    field('Flags', flags.length > 0 ? flags : 'none'),
    field('ISP', known(result.isp)),
    field('ASN', known(result.asn)),
    field('Country', country && code ? `${country} (${code})` : country ?? code),
    // `geolocation` is "<city>, <state>" with "Unknown" for a missing part.
    field('Location', result.geolocation.split(', ').filter((part) => known(part)).join(', ')),
    sourceLink('Open in ipquery.io', result.link),
  );
}

/** The ASN ipquery.io names (`AS13335`, or `Unknown`: none), its ISP as the owner. */
export function ipqueryAsn(result: IpqueryResult): EngineAsn | undefined {
  return { asn: result.asn, org: result.isp };
}

export default defineEngine<IpqueryResult>({
  id: 'provider_13',
  service: 'ipquery',
  label: 'IPquery',
  description: 'ISP, ASN, location and risk (VPN, proxy, Tor, datacenter, risk score) of an IP, or of the IP a domain/URL resolves to, from ipquery.io',
  tags: ['IP', 'risk', 'VPN', 'proxy', 'free_no_key'],
  types: ['IPv4', 'IPv6'],
  disclosure: 'third_party',
  touchesTarget: false,
  reversedIp: true,
  defaults: { timeout_ms: 5000, base_url: 'https://api.ipquery.io' },
  summary: ipquerySummary,
  evidence: ipqueryEvidence,
  asn: ipqueryAsn,
  details: ipqueryDetails,
  run: ipqueryLookup,
  variants: {
    // engines.md 6.5: the older catalog's default IP-intelligence engine (pre-selected).
    older: { tags: ['default', 'IP', 'risk', 'VPN', 'proxy', 'free_no_key'] },
  },
});
