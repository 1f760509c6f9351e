/**
 * provider_25 (webscout) — location, network, owner (ASN), anonymization flags and observed
 * behaviour of an IP address from webscout.io: `GET {base_url}/query/ip/{ip}?apikey=<api key>`.
 *
 * The result has engines.md 5.30's fields, with its names and types (including the reference's
 * `risk_score` and `domains_on_ip` placeholders, always null). bad_asn reads `asn` ("AS13335",
 * or "Unknown") and `as_org`.
 *
 * Better than the reference:
 * - No 1 s sleep before every call: the engine declares webscout's pace as a quota
 *   (`rate_limit` / `rate_window_ms`) and the runner spaces the calls, so an analysis of one
 *   address does not wait and a batch does not exceed the pace.
 * - Bug fixed (engines.md section 8 item 19): no request is made without a key.
 * - webscout's "IP not found" is "not found" (null); any other `status` that is not `success`
 *   is reported with webscout's message (key masked), as are HTTP errors, malformed answers and
 *   timeouts, instead of all becoming null.
 * - `country_name` comes from the ICU region names built into Node, not pycountry (see provider_12).
 * - An answer is read leniently (issue 26): only a JSON object with `status` "success" is
 *   needed. Anonymization flags sent as 0/1, "" or "true"/"false" are booleans (the reference
 *   copied `0` or `""` as is; absent is false in both); `hostnames`, `company.business` and
 *   `osint.services[].tags` absent, null or "" are `[]` (the reference copied null or failed),
 *   one string in place of a list is a list of it; `network_type`, `network_service` and
 *   `network_service_region` absent or null are `""` (the reference gave null for the latter two).
 * - A text webscout sends is kept as sent, `""` included, as the reference did (issue 32): the
 *   "Unknown" defaults of `network_provider`, `as_org`, `description` and the city in `location`
 *   (and the queried address for `ip`) stand for a field left out or null, not for `""`. Only
 *   `country_code` is "Unknown" for `""` too, as in the reference.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson, parseWith } from '../src/http/client.js';
import { flag, list, text } from '../src/http/lenient.js';
import { UpstreamError } from '../src/http/errors.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError, upstreamReason } from '../src/http/refusal.js';
import { UNKNOWN, countryName } from '../src/lookup/country.js';
import { oneLine } from '../src/lookup/wording.js';
import { field, fields } from '../src/lookup/fields.js';

/**
 * What webscout says about the address, every field read when present: absent or null is the
 * reference's default (below), a text is kept as sent (`""` included), flags sent as 0/1, "" or
 * "true"/"false" are booleans, one string or object in place of a list is a list of it (a list
 * sent as "" is []), null entries are skipped.
 */
const DataSchema = v.looseObject({
  ip: text(),
  location: v.nullish(v.looseObject({ country_iso: text(), city: text() })),
  network: v.nullish(v.looseObject({ type: text(), service: text(), region: text() })),
  company: v.nullish(v.looseObject({ name: text(), business: list(v.string()), description: text() })),
  as: v.nullish(v.looseObject({ as_number: v.nullish(v.union([v.number(), v.string()])), organization: text() })),
  anonymization: v.nullish(v.looseObject({ proxy: flag(), tor: flag(), vpn: flag() })),
  osint: v.nullish(v.looseObject({ services: list(v.looseObject({ tags: list(v.string()) })) })),
  hostnames: list(v.string()),
});

/**
 * webscout.io's envelope: `{"status": "success", "data": {...}}` or `{"status": "error",
 * "message": "..."}`. Needed: a JSON object whose `status` says `success`; `data` is read when
 * present (absent or null: every field at its default, the queried address as `ip`).
 */
const WebscoutSchema = jsonObject({
  status: v.optional(v.string()),
  message: text(),
  data: v.nullish(DataSchema),
});

export interface WebscoutResult {
  ip: string;
  /** Always null (the reference's placeholder). */
  risk_score: null;
  is_proxy: boolean;
  is_tor: boolean;
  is_vpn: boolean;
  /** ISO 3166 code (`US`) or `Unknown`. */
  country_code: string;
  /** `United States` or `Unknown`. */
  country_name: string;
  /** `"<country_name>, <city>"` (city `Unknown` when missing, as sent otherwise). */
  location: string;
  hostnames: string[];
  /** Always null (the reference's placeholder). */
  domains_on_ip: null;
  /** `hosting`, `residential`... or `""`. */
  network_type: string;
  /** Company operating the network as sent, or `Unknown` when missing. */
  network_provider: string;
  /** `CDN`, `ISP`... or `""`. */
  network_service: string;
  network_service_region: string;
  network_provider_services: string[];
  /** OSINT tags seen for the address (`scanner`, `botnet`...), first-seen order, no duplicates. */
  behavior: string[];
  /** AS organisation as sent, or `Unknown` when missing. */
  as_org: string;
  /** `"AS13335"` or `"Unknown"`. */
  asn: string;
  description: string;
}

/** webscout's own words for an address it has no record of (not any 404's "not found"). */
const NOT_FOUND = /\bIP not found\b/i;

export async function webscoutLookup(observable: Observable, ctx: EngineContext): Promise<WebscoutResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const apikey = apiKeyOf(ctx);
  // The reference slept 1 s here; the runner's quota (rate_limit / rate_window_ms) paces calls instead.
  const response = await ctx.http.request(`${String(ctx.settings.base_url).replace(/\/+$/, '')}/query/ip/${ip}`, {
    query: { apikey },
    headers: { accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 404 && NOT_FOUND.test(upstreamReason(response.text(), ctx) ?? '')) return null;
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), WebscoutSchema);
  if (answer.status !== 'success') {
    const message = answer.message ? oneLine(ctx.http.redact(answer.message)) : `status ${answer.status ?? 'missing'}`;
    if (NOT_FOUND.test(message)) return null;
    throw new UpstreamError(`webscout.io: ${message}`);
  }
  // No data at all: every field at its default.
  const d = answer.data ?? parseWith(DataSchema, {});
  const countryCode = d.location?.country_iso || UNKNOWN;
  const country = countryName(countryCode);
  const asNumber = typeof d.as?.as_number === 'string' ? d.as.as_number.trim().replace(/^AS/i, '') : d.as?.as_number;
  return {
    ip: d.ip ?? ip,
    risk_score: null,
    is_proxy: d.anonymization?.proxy ?? false,
    is_tor: d.anonymization?.tor ?? false,
    is_vpn: d.anonymization?.vpn ?? false,
    country_code: countryCode,
    country_name: country,
    location: `${country}, ${d.location?.city ?? UNKNOWN}`,
    hostnames: d.hostnames,
    domains_on_ip: null,
    network_type: d.network?.type ?? '',
    network_provider: d.company?.name ?? UNKNOWN,
    network_service: d.network?.service ?? '',
    network_service_region: d.network?.region ?? '',
    network_provider_services: d.company?.business ?? [],
    behavior: [...new Set((d.osint?.services ?? []).flatMap((service) => service.tags))],
    as_org: d.as?.organization ?? UNKNOWN,
    asn: asNumber ? `AS${asNumber}` : UNKNOWN,
    description: d.company?.description ?? UNKNOWN,
  };
}

/** `AS13335 CLOUDFLARENET · United States, Los Angeles · hosting (CDN) · VPN · behaviour scanner, botnet`. */
export function webscoutSummary(result: WebscoutResult): string {
  const parts: string[] = [];
  const owner = [result.asn, result.as_org].filter((s) => s !== '' && s !== UNKNOWN).join(' ');
  if (owner) parts.push(owner);
  const place = result.location.split(', ').filter((p) => p !== '' && p !== UNKNOWN);
  if (place.length > 0) parts.push(place.join(', '));
  if (result.network_type) parts.push(result.network_service ? `${result.network_type} (${result.network_service})` : result.network_type);
  if (result.is_vpn) parts.push('VPN');
  if (result.is_proxy) parts.push('proxy');
  if (result.is_tor) parts.push('Tor');
  if (result.behavior.length > 0) parts.push(`behaviour ${result.behavior.join(', ')}`);
  if (parts.length > 0) return parts.join(' · ');
  return result.ip ? `${result.ip}: no data` : 'no data';
}

/**
 * Rule: a Tor, VPN or proxy flag, or behaviour seen by OSINT sources (scanner, botnet...), ->
 * suspicious; otherwise no evidence (webscout reports context, not a verdict).
 */
export function webscoutEvidence(result: WebscoutResult | null): Evidence | undefined {
  if (!result) return undefined;
  const flags = [result.is_tor === true && 'Tor', result.is_vpn === true && 'VPN', result.is_proxy === true && 'proxy']
    .filter((f): f is string => typeof f === 'string');
  const behaviour = Array.isArray(result.behavior) ? result.behavior.filter((tag) => typeof tag === 'string' && tag.trim() !== '') : [];
  if (flags.length === 0 && behaviour.length === 0) return undefined;
  const parts = [flags.length > 0 ? `flagged ${flags.join(', ')}` : null, behaviour.length > 0 ? `behaviour ${behaviour.join(', ')}` : null];
  return { level: 'suspicious', reason: parts.filter(Boolean).join(' · ') };
}

/**
 * The card: anonymization and behaviour first, then owner, network, place and names. `Unknown`
 * values are left out. webscout.io has no public page per address that we know of: no link.
 */
export function webscoutDetails(result: WebscoutResult): DetailField[] {
  const known = (value: string): string | null => (value !== '' && value !== UNKNOWN ? value : null);
  const anonymization = [result.is_vpn ? 'VPN' : null, result.is_proxy ? 'proxy' : null, result.is_tor ? 'Tor' : null].filter(Boolean);
  const network = result.network_type && result.network_service ? `${result.network_type} (${result.network_service})` : result.network_type || result.network_service;
  const place = result.location.split(', ').filter((p) => p !== '' && p !== UNKNOWN).join(', ');
  return fields(
    field('Anonymization', anonymization.length > 0 ? anonymization : 'none'),
    field('Behaviour', result.behavior),
    field('Network owner', [known(result.asn), known(result.as_org)].filter(Boolean).join(' ')),
    field('Company', known(result.network_provider) !== result.as_org ? known(result.network_provider) : null),
    field('Network type', network),
    field('Service region', result.network_service_region),
    field('Location', place),
    field('Host names', result.hostnames),
    field('Company services', result.network_provider_services),
    field('Description', known(result.description)),
  );
}

/** The ASN webscout names (`AS13335` or `Unknown`) and its AS organisation. */
export function webscoutAsn(result: WebscoutResult): EngineAsn | undefined {
  return { asn: result.asn, org: result.as_org };
}

export default defineEngine<WebscoutResult>({
  id: 'provider_25',
  service: 'webscout',
  label: 'WebScout',
  description: 'Location, network type and owner (ASN), VPN/proxy/Tor flags and observed behaviour of an IP, or of the IP a domain/URL resolves to, from webscout.io (free or paid key)',
  tags: ['IP'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['WEBSCOUT'] }],
  defaults: {
    timeout_ms: 5000,
    base_url: 'https://api.webscout.io',
    // One call a second: the pace the reference hard-codes (a 1 s sleep before every call) for
    // webscout.io's free plan; webscout.io publishes no other figure we could check.
    rate_limit: 1,
    rate_window_ms: 1000,
  },
  summary: webscoutSummary,
  evidence: webscoutEvidence,
  asn: webscoutAsn,
  details: webscoutDetails,
  run: webscoutLookup,
});
