/**
 * provider_11 (ipapi) — geolocation, network owner and risk flags (VPN, proxy, Tor, abuser,
 * datacenter) of an IP address from ipapi.is: `POST {base_url}` with the JSON body
 * `{"q": "<ip>"}`, plus `"key"` when an API key is configured (the service works without one,
 * within its free quota).
 *
 * The result is ipapi.is' object as it comes (engines.md 5.14), except `asn`: `asn.asn` becomes
 * the string "AS<number>" and a missing ASN becomes `{"asn": "Unknown", "org": "Unknown"}` —
 * bad_asn reads `asn.asn` and `asn.org` in exactly that form.
 *
 * Better than the reference:
 * - Quirk fixed: the reference sent the key only when it was exactly 20 characters long and
 *   silently made a keyless call otherwise; a configured key is sent as it is.
 * - HTTP errors, rate limits and ipapi.is' `{"error": "..."}` answers are reported (with the
 *   upstream's reason, the key masked) instead of becoming null; 429/5xx are retried.
 * - The fields read downstream are read leniently (issue 26), so the result differs from the
 *   upstream object there: the eight `is_*` flags are always present as booleans (absent, null,
 *   0 or "" → false, 1 or "true" → true; the reference copied them, or left them out); a null or
 *   absent `location.city/state/country/country_code` or `vpn.service/url/type` is null, and a
 *   null or absent `asn.org` "Unknown" (a text sent, `""` included, is kept as sent: issue 32);
 *   an `asn` of 0, false, "" or [] is the Unknown ASN, and an empty `asn.asn` the "Unknown" ASN
 *   number. Only `ip` is needed (absent or "" → an error naming it, where the reference gave
 *   `null`); an `error` sent as "" is no error.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flag, text } from '../src/http/lenient.js';
import { BadResponseError, UpstreamError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, refusedError } from '../src/http/refusal.js';
import { oneLine } from '../src/lookup/wording.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/**
 * ipapi.is' answer. Needed: a JSON object with `ip` (checked below). Only the fields read
 * downstream are typed, each read when present: the `is_*` flags are booleans (absent, null, 0
 * or "" → false), the texts of `asn`, `location` and `vpn` are null when absent or null;
 * everything else (company, abuse, datacenter, rir, elapsed_ms...) is kept as it comes.
 */
const AsnSchema = v.looseObject({
  asn: v.nullish(v.union([v.number(), v.string()])),
  org: text(),
});

const IpapiSchema = jsonObject({
  ip: v.optional(v.string()),
  error: text(),
  is_bogon: flag(),
  is_mobile: flag(),
  is_crawler: flag(),
  is_datacenter: flag(),
  is_tor: flag(),
  is_proxy: flag(),
  is_vpn: flag(),
  is_abuser: flag(),
  // An IP without routing data may come with an empty value instead of an object.
  asn: v.nullish(v.union([AsnSchema, v.literal(''), v.literal(0), v.boolean(), v.array(v.unknown())])),
  location: v.nullish(v.looseObject({ city: text(), state: text(), country: text(), country_code: text() })),
  vpn: v.nullish(v.looseObject({ service: text(), url: text(), type: text() })),
});

type IpapiAnswer = v.InferOutput<typeof IpapiSchema>;

export interface IpapiAsn {
  /** "AS13335", or "Unknown" when ipapi.is knows no ASN. */
  asn: string;
  /** Owner of the ASN as sent (`""` included), or "Unknown" when ipapi.is gives none. */
  org: string;
  route?: string;
  descr?: string;
  country?: string;
  domain?: string;
  abuse?: string;
  type?: string;
  [field: string]: unknown;
}

export interface IpapiResult {
  ip: string;
  rir?: string;
  is_bogon?: boolean | null;
  is_mobile?: boolean | null;
  is_crawler?: boolean | null;
  is_datacenter?: boolean | null;
  is_tor?: boolean | null;
  is_proxy?: boolean | null;
  is_vpn?: boolean | null;
  is_abuser?: boolean | null;
  company?: Record<string, unknown> | null;
  abuse?: Record<string, unknown> | null;
  asn: IpapiAsn;
  location?: { city?: string | null; state?: string | null; country?: string | null; country_code?: string | null; [field: string]: unknown } | null;
  /** Present when the address is a known VPN exit. */
  vpn?: { service?: string | null; url?: string | null; type?: string | null; [field: string]: unknown } | null;
  [field: string]: unknown;
}

const UNKNOWN_ASN: IpapiAsn = { asn: 'Unknown', org: 'Unknown' };


/** The lookup; the key (if any) goes in the body, never in a result or an error message. */
export async function ipapiLookup(observable: Observable, ctx: EngineContext): Promise<IpapiResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  const response = await ctx.http.request(String(ctx.settings.base_url), {
    method: 'POST',
    headers: { accept: 'application/json' },
    // Quirk fixed: any configured key is sent as is (the reference dropped keys not 20 chars long).
    json: key !== '' ? { q: ip, key } : { q: ip },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), IpapiSchema);
  if (answer.error !== null && answer.error.trim() !== '') throw new UpstreamError(`ipapi.is: ${oneLine(ctx.http.redact(answer.error))}`);
  if (answer.ip === undefined || answer.ip.trim() === '') throw new BadResponseError('unexpected answer from upstream at ip: missing');
  const { error: _error, ...rest } = answer;
  return { ...rest, ip: answer.ip, asn: normaliseAsn(answer.asn) } as IpapiResult;
}

/** `asn.asn` as "AS<number>"; a missing ASN as Unknown (engines.md 5.14). */
function normaliseAsn(asn: IpapiAnswer['asn']): IpapiAsn {
  if (!asn || typeof asn !== 'object' || Array.isArray(asn)) return { ...UNKNOWN_ASN };
  const number = typeof asn.asn === 'string' ? asn.asn.trim().replace(/^AS/i, '') : asn.asn;
  if (number === undefined || number === null || number === '') {
    return { ...asn, asn: 'Unknown', org: asn.org ?? 'Unknown' } as IpapiAsn;
  }
  return { ...asn, asn: `AS${number}`, org: asn.org ?? 'Unknown' } as IpapiAsn;
}


/** `AS13335 Cloudflare, Inc. · US, San Francisco · datacenter · VPN (NordVPN) · abuser`. */
export function ipapiSummary(result: IpapiResult): string {
  const parts: string[] = [];
  if (result.asn.asn !== 'Unknown') parts.push(result.asn.org && result.asn.org !== 'Unknown' ? `${result.asn.asn} ${result.asn.org}` : result.asn.asn);
  const place = [result.location?.country_code, result.location?.city].filter((p) => typeof p === 'string' && p !== '');
  if (place.length > 0) parts.push(place.join(', '));
  if (result.is_bogon) parts.push('bogon');
  if (result.is_datacenter) parts.push('datacenter');
  if (result.is_mobile) parts.push('mobile');
  if (result.is_vpn) parts.push(result.vpn?.service ? `VPN (${result.vpn.service})` : 'VPN');
  if (result.is_proxy) parts.push('proxy');
  if (result.is_tor) parts.push('Tor');
  if (result.is_abuser) parts.push('abuser');
  if (result.is_crawler) parts.push('crawler');
  return parts.length > 0 ? parts.join(' · ') : `${result.ip}: no data`;
}

/**
 * Rule: a Tor, VPN, proxy or abuser flag -> suspicious (an anonymiser or a listed abuser, not proof
 * of malice); no flag -> no evidence (a geolocation service not flagging an address does not clear it).
 */
export function ipapiEvidence(result: IpapiResult | null): Evidence | undefined {
  if (!result) return undefined;
  const flags = [
    result.is_tor === true && 'Tor',
    result.is_vpn === true && (result.vpn?.service ? `VPN (${result.vpn.service})` : 'VPN'),
    result.is_proxy === true && 'proxy',
    result.is_abuser === true && 'abuser',
  ].filter((f): f is string => typeof f === 'string');
  return flags.length > 0 ? { level: 'suspicious', reason: `flagged ${flags.join(', ')}` } : undefined;
}

/** ipapi.is' public, keyless answer for an address (the key goes in the body of our calls, never here). */
const PUBLIC_LOOKUP = 'https://api.ipapi.is/?q=';

/**
 * Card fields: ASN and owner, where, the risk flags that are set ("none" when none is), the VPN
 * service, then the network and who to tell about abuse.
 */
export function ipapiDetails(result: IpapiResult, target: string): DetailField[] {
  const known = (value: unknown) => (typeof value === 'string' && value !== '' && value !== 'Unknown' ? value : null);
  const asn = known(result.asn.asn);
  const org = known(result.asn.org);
  const company = known(result.company?.['name']);
  const country = known(result.location?.country);
  const code = known(result.location?.country_code);
  const flags = [
    result.is_vpn && 'VPN',
    result.is_proxy && 'proxy',
    result.is_tor && 'Tor',
    result.is_abuser && 'abuser',
    result.is_datacenter && 'datacenter',
    result.is_mobile && 'mobile',
    result.is_crawler && 'crawler',
    result.is_bogon && 'bogon',
  ].filter((f): f is string => typeof f === 'string');
  return fields(
    field('ASN', asn ? [asn, org].filter(Boolean).join(' ') : org),
    // The company is often the ASN's owner: shown only when it says something else.
    company !== org && field('Company', company),
    field('Country', country && code ? `${country} (${code})` : country ?? code),
    field('City', [known(result.location?.city), known(result.location?.state)].filter(Boolean).join(', ')),
    field('Flags', flags.length > 0 ? flags : 'none'),
    field('VPN service', known(result.vpn?.service), known(result.vpn?.url)),
    field('Usage type', known(result.company?.['type']) ?? known(result.asn.type)),
    field('Network', known(result.asn.route)),
    field('Abuse contact', known(result.abuse?.['email']) ?? known(result.asn.abuse)),
    field('RIR', known(result.rir)),
    sourceLink('Open in ipapi.is', PUBLIC_LOOKUP + encodeURIComponent(target || result.ip)),
  );
}

/** The ASN ipapi.is names (`asn.asn`: `AS13335` or `Unknown`) and its owner. */
export function ipapiAsn(result: IpapiResult): EngineAsn | undefined {
  return result.asn ? { asn: result.asn.asn, org: result.asn.org } : undefined;
}

export default defineEngine<IpapiResult>({
  id: 'provider_11',
  service: 'ipapi',
  // Absent from the spec's older catalog variant.
  catalogs: ['main'],
  label: 'IPapi',
  description: 'Geolocation, ASN and owner of an IP (or of the IP a domain/URL resolves to), with VPN, proxy, Tor, abuser and datacenter flags, from ipapi.is',
  tags: ['default', 'IP', 'risk', 'VPN', 'proxy'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', required: false, env: ['IPAPI'] }],
  defaults: { timeout_ms: 5000, base_url: 'https://api.ipapi.is' },
  summary: ipapiSummary,
  evidence: ipapiEvidence,
  asn: ipapiAsn,
  details: ipapiDetails,
  run: ipapiLookup,
});
