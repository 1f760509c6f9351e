/**
 * provider_03 (`abuseipdb`) — abuse reports about an IP address from AbuseIPDB's v2 `check`
 * endpoint (engines.md 5.3): `GET {base_url}/check?ipAddress=<ip>` with the key in the `Key`
 * header. IPv4 and IPv6; also runs on the IP a domain/URL resolves to (post-pivot).
 *
 * Result as the reference's, every key always present: `ip_address` (the queried IP), `reports`,
 * `risk_score`, `is_whitelisted`, `country_code`, `country_name`, `usage_type`, `isp`, `domain`,
 * `hostnames`, `is_tor`, `last_reported_at` (null when never reported; as sent otherwise, `""`
 * included) and `link` (the public check page, never carrying the key). An address nobody
 * reported is not "not found": it is the documented result with `reports: 0` and `risk_score: 0`.
 *
 * Differences from the reference (engines.md 1.9, 8 items 3 and 19):
 * - A bad key (401/403), the quota (429, retried within the deadline as Retry-After says), a
 *   rejected address (422), 5xx and an answer without `data` are errors, not `null`. For 4xx,
 *   AbuseIPDB's own reason (`errors[0].detail`) is added, with the key masked.
 * - Quirk fixed: the reference used `.get(key, default)`, so an upstream `null` stayed `null`
 *   in fields typed str/int/bool/list; here the default applies to `null` too, so every field
 *   has its documented type (except `last_reported_at`, documented as possibly null). A text
 *   sent as `""` stays `""` (issue 32), flags sent as 0/1 or "true"/"false" are booleans,
 *   counts sent as numeric text are numbers, and one host name in place of the `hostnames` list
 *   is a list of it.
 * - `isp`, `domain`, `hostnames` and `is_tor`, for which the reference had no default (a missing
 *   key gave null), get `""`, `[]` and false like the other fields.
 * - The key is never sent empty (v0.11 did): the runner refuses to call without one, and so
 *   does the lookup when called directly.
 * - `country_name` comes from the country names shared with provider_12/provider_25 (Node's ICU
 *   names: "Russia", "South Korea"), not pycountry's ISO names ("Russian Federation").
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flag, list, num, text } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { count, isoDay, oneLine } from '../src/lookup/wording.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';
import { countryName } from '../src/lookup/country.js';

/** AbuseIPDB's public page for an address. */
const CHECK_PAGE = 'https://www.abuseipdb.com/check';

/**
 * AbuseIPDB's check answer: `data` is needed (an answer without it says nothing about the
 * address); each of its fields is read when present, with its default otherwise. Other keys
 * (ipAddress, isPublic, ipVersion, numDistinctUsers...) are ignored.
 */
const CheckSchema = jsonObject({
  data: jsonObject({
    isWhitelisted: flag(),
    abuseConfidenceScore: num(),
    countryCode: text(),
    usageType: text(),
    isp: text(),
    domain: text(),
    hostnames: list(v.string()),
    isTor: flag(),
    totalReports: num(),
    lastReportedAt: text(),
  }),
});

/** AbuseIPDB's error body: `{"errors": [{"detail": "...", "status": 401}]}`. */
const ErrorSchema = v.looseObject({
  errors: v.array(v.looseObject({ detail: v.nullish(v.string()) })),
});

export interface AbuseIpdbResult {
  /** The queried address. */
  ip_address: string;
  /** `totalReports`. */
  reports: number;
  /** `abuseConfidenceScore`, 0–100. */
  risk_score: number;
  is_whitelisted: boolean;
  /** ISO 3166 alpha-2 code, "" when unknown. */
  country_code: string;
  /** English short name of the country, "Unknown" when there is no (known) code. */
  country_name: string;
  usage_type: string;
  isp: string;
  domain: string;
  hostnames: string[];
  is_tor: boolean;
  /** ISO 8601 time of the latest report as sent; null when never reported (absent or null). */
  last_reported_at: string | null;
  /** `https://www.abuseipdb.com/check/<ip>`. */
  link: string;
}

export async function abuseIpdbLookup(observable: Observable, ctx: EngineContext): Promise<AbuseIpdbResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const key = apiKeyOf(ctx);
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const response = await ctx.http.request(`${base}/check`, {
    query: { ipAddress: ip },
    headers: { key, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) {
    const detail = errorDetail(response.text(), ctx);
    throw detail ? statusError(response.status, detail) : refusedError(response, ctx);
  }
  const { data } = parseJson(response.text(), CheckSchema);
  const code = (data.countryCode ?? '').toUpperCase();
  return {
    ip_address: ip,
    reports: data.totalReports,
    risk_score: data.abuseConfidenceScore,
    is_whitelisted: data.isWhitelisted,
    country_code: code,
    country_name: countryName(code),
    usage_type: data.usageType ?? '',
    isp: data.isp ?? '',
    domain: data.domain ?? '',
    hostnames: data.hostnames,
    is_tor: data.isTor,
    last_reported_at: data.lastReportedAt,
    link: `${CHECK_PAGE}/${ip}`,
  };
}

/** AbuseIPDB's `errors[0].detail`, one line, the key masked; undefined when the body has none. */
function errorDetail(body: string, ctx: EngineContext): string | undefined {
  try {
    const detail = parseJson(body, ErrorSchema).errors[0]?.detail;
    return detail ? oneLine(ctx.http.redact(detail)) : undefined;
  } catch {
    return undefined;
  }
}

/** `risk 100 · 1532 reports, last 2026-01-10 · Tor · DE · Data Center/Web Hosting/Transit · Tor Exit`. */
export function abuseIpdbSummary(result: AbuseIpdbResult): string {
  const parts = [`risk ${result.risk_score}`];
  const last = isoDay(result.last_reported_at);
  parts.push(result.reports > 0 && last ? `${count(result.reports, 'report')}, last ${last}` : count(result.reports, 'report'));
  if (result.is_whitelisted) parts.push('whitelisted');
  if (result.is_tor) parts.push('Tor');
  for (const part of [result.country_code, result.usage_type, result.isp]) if (part) parts.push(part);
  return parts.join(' · ');
}

/** Rule: AbuseIPDB's abuse confidence ≥ 75 -> malicious, ≥ 25 -> suspicious, below -> clean (with the reports count). */
export function abuseIpdbEvidence(result: AbuseIpdbResult | null): Evidence | undefined {
  if (!result || typeof result.risk_score !== 'number' || typeof result.reports !== 'number') return undefined;
  const notes = [result.is_tor && 'Tor exit', result.is_whitelisted && 'whitelisted'].filter(Boolean);
  const reason = [`confidence ${result.risk_score}%, ${count(result.reports, 'report')}`, ...notes].join(', ');
  if (result.risk_score >= 75) return { level: 'malicious', reason };
  if (result.risk_score >= 25) return { level: 'suspicious', reason };
  return { level: 'clean', reason };
}

/**
 * Card fields: the confidence score and the reports, the Tor and whitelist marks when set, where
 * and whose the address is, then AbuseIPDB's public page for it.
 */
export function abuseIpdbDetails(result: AbuseIpdbResult): DetailField[] {
  const country = result.country_name !== 'Unknown' ? `${result.country_name} (${result.country_code})` : result.country_code;
  return fields(
    field('Confidence score', result.risk_score),
    field('Reports', result.reports),
    field('Last reported', result.last_reported_at),
    result.is_tor && field('Tor exit node', true),
    result.is_whitelisted && field('Whitelisted', true),
    field('Country', country),
    field('Usage type', result.usage_type),
    field('ISP', result.isp),
    field('Domain', result.domain),
    field('Hostnames', result.hostnames),
    sourceLink('Open in AbuseIPDB', result.link),
  );
}

export default defineEngine<AbuseIpdbResult>({
  id: 'provider_03',
  service: 'abuseipdb',
  label: 'AbuseIPDB',
  description: 'Abuse reports and confidence score of an IP, or of the IP a domain/URL resolves to, from AbuseIPDB',
  tags: ['IP'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['ABUSEIPDB'] }],
  defaults: {
    timeout_ms: 5000,
    base_url: 'https://api.abuseipdb.com/api/v2',
    // AbuseIPDB's free "Individual" plan: 1,000 `check` requests a day (abuseipdb.com/pricing,
    // docs.abuseipdb.com "Rate Limiting").
    rate_limit: 1000,
    rate_window_ms: 86_400_000,
  },
  summary: abuseIpdbSummary,
  evidence: abuseIpdbEvidence,
  details: abuseIpdbDetails,
  run: abuseIpdbLookup,
  variants: {
    // The spec's older catalog tags AbuseIPDB with the single tag `risk`.
    older: { tags: ['risk'] },
  },
});
