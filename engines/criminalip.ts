/**
 * provider_05 (`criminalip`) — Criminal IP's verdict on an IPv4 address (engines.md 5.6):
 * `GET {base_url}/feature/ip/suspicious-info?ip=<ip>` with the key in the `x-api-key` header.
 * IPv4 only, as the reference's HEAD (v0.11 also sent IPv6 addresses, which the endpoint does
 * not document); also runs on the IP a domain/URL resolves to (post-pivot).
 *
 * The result is the reference's validated model, every key always present: `status`,
 * `abuse_record_count` (0 by default), `current_opened_port`, `ids`, `ip`, `issues`,
 * `representative_domain` ("" by default), `score`, `whois` — the sections null when the upstream
 * gives none, their entries reduced to the documented fields (unknown keys dropped, missing
 * ones null). An address Criminal IP knows nothing of is that documented result with null
 * sections, not `null`.
 *
 * Differences from the reference (engines.md 1.9, 8 items 2 and 3):
 * - Bug fixed: the reference set no timeout on this call (one hung upstream kept the analysis
 *   running forever); ours has `timeout_ms` like every engine.
 * - A bad key (401/403 as HTTP status, or as the `status` Criminal IP puts in a 200 body), the
 *   quota (429, retried as Retry-After says), 5xx and malformed answers are errors, not `null`;
 *   Criminal IP's own `message` is added, with the key masked.
 * - `score.inbound` / `score.outbound` are kept as Criminal IP spells them: a level the
 *   reference's enum did not know (Safe, Low, Moderate, Dangerous, Critical) no longer turns the
 *   whole answer into `null`.
 * - Only `status` is needed (issue 26). `current_opened_port` / `ids` without their `count` are
 *   counted from their `data` (the reference refused the whole answer); a `data` list sent as
 *   null, or as one entry instead of a list, is read as `[]` / a list of it. Issue flags sent as
 *   0/1, "true"/"false" or null are read as booleans (null → false); a port's `is_vulnerability`
 *   stays null only when Criminal IP says nothing. Numbers sent as numeric strings (counts,
 *   coordinates) are read as numbers. A text Criminal IP sends, `""` included, is kept as sent
 *   (issue 32: `ids.data[].url: ""` stays `""`, as in the reference); absent or null is null.
 */
import { STATUS_CODES } from 'node:http';
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flag, flagOrNull, list, num, numOrNull, text } from '../src/http/lenient.js';
import { UpstreamError } from '../src/http/errors.js';
import { count, oneLine } from '../src/lookup/wording.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/** Criminal IP sends some numbers (ports, AS numbers, postal codes) as strings now and then. */
const numOrText = v.nullish(v.union([v.number(), v.string()]));

const PortSchema = v.looseObject({
  port: numOrText,
  /** Null when Criminal IP says nothing (the reference's model), else read leniently. */
  is_vulnerability: flagOrNull(),
  product_name: text(),
  product_version: text(),
  protocol: text(),
  socket_type: text(),
  confirmed_time: text(),
});

const IdsSchema = v.looseObject({
  classification: text(),
  confirmed_time: text(),
  message: text(),
  source_system: text(),
  url: text(),
});

const WhoisSchema = v.looseObject({
  as_name: text(),
  as_no: numOrText,
  city: text(),
  region: text(),
  org_name: text(),
  postal_code: numOrText,
  latitude: numOrNull(),
  longitude: numOrNull(),
  org_country_code: text(),
  confirmed_time: text(),
});

const ISSUE_FLAGS = [
  'is_anonymous_vpn', 'is_cloud', 'is_darkweb', 'is_hosting', 'is_mobile',
  'is_proxy', 'is_scanner', 'is_snort', 'is_tor', 'is_vpn',
] as const;

type IssueFlag = (typeof ISSUE_FLAGS)[number];

/** A counted section (`{count, data}`); null when absent. `count` read when present. */
const section = <S extends v.GenericSchema>(entry: S) =>
  v.nullish(jsonObject({ count: numOrNull(), data: list(entry) }, 'expected an object'));

/**
 * Needed: `status` (Criminal IP's verdict on the request itself). Everything else is read when
 * present, with the reference's defaults (0, "", null sections, false flags).
 */
const SuspiciousInfoSchema = jsonObject({
  /** Criminal IP's own status: 200 for an answer, 4xx/5xx with `message` otherwise. */
  status: v.number('expected a number'),
  message: text(),
  ip: text(),
  abuse_record_count: num(),
  representative_domain: text(),
  score: v.nullish(v.looseObject({ inbound: numOrText, outbound: numOrText })),
  issues: v.nullish(v.looseObject(Object.fromEntries(ISSUE_FLAGS.map((f) => [f, flag()])) as Record<IssueFlag, ReturnType<typeof flag>>)),
  current_opened_port: section(PortSchema),
  ids: section(IdsSchema),
  whois: section(WhoisSchema),
});

type Answer = v.InferOutput<typeof SuspiciousInfoSchema>;

export interface OpenPort {
  port: number | string | null;
  is_vulnerability: boolean | null;
  product_name: string | null;
  product_version: string | null;
  protocol: string | null;
  socket_type: string | null;
  confirmed_time: string | null;
}

export interface IdsEvent {
  classification: string | null;
  confirmed_time: string | null;
  message: string | null;
  source_system: string | null;
  url: string | null;
}

export interface WhoisRecord {
  as_name: string | null;
  as_no: number | string | null;
  city: string | null;
  region: string | null;
  org_name: string | null;
  postal_code: number | string | null;
  latitude: number | null;
  longitude: number | null;
  org_country_code: string | null;
  confirmed_time: string | null;
}

export type CriminalIpIssues = Record<IssueFlag, boolean>;

export interface CriminalIpResult {
  status: number;
  abuse_record_count: number;
  current_opened_port: { count: number; data: OpenPort[] } | null;
  ids: { count: number; data: IdsEvent[] } | null;
  ip: string;
  issues: CriminalIpIssues | null;
  representative_domain: string;
  /** `Safe`, `Low`, `Moderate`, `Dangerous` or `Critical` (as Criminal IP spells them). */
  score: { inbound: string | number | null; outbound: string | number | null } | null;
  whois: { count: number; data: WhoisRecord[] } | null;
}

export async function criminalIpLookup(observable: Observable, ctx: EngineContext): Promise<CriminalIpResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) !== 4) return null;
  const key = apiKeyOf(ctx);
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const response = await ctx.http.request(`${base}/feature/ip/suspicious-info`, {
    query: { ip },
    headers: { 'x-api-key': key, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  // Criminal IP explains a refusal in `{"status": 401, "message": "..."}`.
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), SuspiciousInfoSchema);
  if (answer.status < 200 || answer.status >= 300) {
    // Criminal IP reports a bad key or an exhausted plan with HTTP 200 and its own status.
    const said = answer.message ? `: ${oneLine(ctx.http.redact(answer.message))}` : '';
    throw new UpstreamError(`Criminal IP answered status ${answer.status}${STATUS_CODES[answer.status] ? ` ${STATUS_CODES[answer.status]}` : ''}${said}`);
  }
  return toResult(answer, ip);
}

/** The reference's model dumped back: documented keys only, defaults for the missing ones. */
function toResult(answer: Answer, ip: string): CriminalIpResult {
  const ports = answer.current_opened_port;
  const ids = answer.ids;
  const whois = answer.whois;
  return {
    status: answer.status,
    abuse_record_count: answer.abuse_record_count,
    current_opened_port: ports
      ? {
        count: ports.count ?? ports.data.length,
        data: ports.data.map((p) => ({
          port: p.port ?? null,
          is_vulnerability: p.is_vulnerability,
          product_name: p.product_name,
          product_version: p.product_version,
          protocol: p.protocol,
          socket_type: p.socket_type,
          confirmed_time: p.confirmed_time,
        })),
      }
      : null,
    ids: ids
      ? {
        count: ids.count ?? ids.data.length,
        data: ids.data.map((e) => ({
          classification: e.classification,
          confirmed_time: e.confirmed_time,
          message: e.message,
          source_system: e.source_system,
          url: e.url,
        })),
      }
      : null,
    // The queried address when Criminal IP leaves `ip` out; what it sends otherwise.
    ip: answer.ip ?? ip,
    issues: answer.issues
      ? Object.fromEntries(ISSUE_FLAGS.map((f) => [f, answer.issues?.[f] === true])) as CriminalIpIssues
      : null,
    representative_domain: answer.representative_domain ?? '',
    score: answer.score ? { inbound: answer.score.inbound ?? null, outbound: answer.score.outbound ?? null } : null,
    whois: whois
      ? {
        count: whois.count ?? 0,
        data: whois.data.map((w) => ({
          as_name: w.as_name,
          as_no: w.as_no ?? null,
          city: w.city,
          region: w.region,
          org_name: w.org_name,
          postal_code: w.postal_code ?? null,
          latitude: w.latitude,
          longitude: w.longitude,
          org_country_code: w.org_country_code,
          confirmed_time: w.confirmed_time,
        })),
      }
      : null,
  };
}

/** Issue flags as an analyst reads them. */
const ISSUE_LABELS: Record<IssueFlag, string> = {
  is_vpn: 'VPN',
  is_anonymous_vpn: 'anonymous VPN',
  is_proxy: 'proxy',
  is_tor: 'Tor',
  is_darkweb: 'dark web',
  is_scanner: 'scanner',
  is_snort: 'IDS alerts',
  is_hosting: 'hosting',
  is_cloud: 'cloud',
  is_mobile: 'mobile',
};

/** `inbound Low, outbound Safe · 5 abuse records · 1 open port · AS13335 CLOUDFLARENET, US · cloud`. */
export function criminalIpSummary(result: CriminalIpResult): string {
  const parts: string[] = [];
  if (result.score) parts.push(`inbound ${result.score.inbound ?? 'unknown'}, outbound ${result.score.outbound ?? 'unknown'}`);
  parts.push(count(result.abuse_record_count, 'abuse record'));
  if (result.current_opened_port) parts.push(count(result.current_opened_port.count, 'open port'));
  if (result.ids && result.ids.count > 0) parts.push(count(result.ids.count, 'IDS event'));
  const owner = result.whois?.data[0];
  if (owner) {
    const as = [owner.as_no !== null && owner.as_no !== '' ? `AS${owner.as_no}` : null, owner.as_name || owner.org_name].filter(Boolean).join(' ');
    const where = [as, owner.org_country_code].filter(Boolean).join(', ');
    if (where) parts.push(where);
  }
  if (result.issues) {
    for (const [flagName, label] of Object.entries(ISSUE_LABELS) as [IssueFlag, string][]) {
      if (result.issues[flagName]) parts.push(label);
    }
  }
  return parts.join(' · ');
}

/** Criminal IP's risk levels, least first. */
const RISK_LEVELS = ['safe', 'low', 'moderate', 'dangerous', 'critical'] as const;
/** The issues that make an address suspicious on their own: anonymisers, dark web, scanning. */
const SUSPICIOUS_ISSUES: readonly IssueFlag[] = ['is_tor', 'is_vpn', 'is_anonymous_vpn', 'is_proxy', 'is_darkweb', 'is_scanner'];

/**
 * Rule: the worse of Criminal IP's inbound/outbound level: Dangerous or Critical -> malicious,
 * Moderate -> suspicious; a Tor/VPN/proxy/dark web/scanner flag -> at least suspicious;
 * Safe or Low without such a flag -> clean. No level and no flag judges nothing.
 */
export function criminalIpEvidence(result: CriminalIpResult | null): Evidence | undefined {
  if (!result) return undefined;
  const rank = (level: unknown) => (typeof level === 'string' ? RISK_LEVELS.indexOf(level.trim().toLowerCase() as never) : -1);
  const worst = Math.max(rank(result.score?.inbound), rank(result.score?.outbound));
  const flags = result.issues ? SUSPICIOUS_ISSUES.filter((f) => result.issues?.[f] === true).map((f) => ISSUE_LABELS[f]) : [];
  if (worst < 0 && flags.length === 0) return undefined;
  const parts: string[] = [];
  if (worst >= 0) parts.push(`inbound ${result.score?.inbound ?? 'unknown'}, outbound ${result.score?.outbound ?? 'unknown'}`);
  parts.push(...flags);
  if (typeof result.abuse_record_count === 'number' && result.abuse_record_count > 0) parts.push(count(result.abuse_record_count, 'abuse record'));
  const reason = parts.join(' · ');
  if (worst >= 3) return { level: 'malicious', reason };
  if (worst === 2 || flags.length > 0) return { level: 'suspicious', reason };
  return { level: 'clean', reason };
}

/** Criminal IP's public report page on an address. */
const REPORT_PAGE = 'https://www.criminalip.io/asset/report/';

/** `443/tcp https (nginx 1.20, vulnerable)`. */
function portText(port: OpenPort): string {
  const product = [port.product_name, port.product_version].filter(Boolean).join(' ');
  const notes = [product, port.is_vulnerability ? 'vulnerable' : ''].filter(Boolean).join(', ');
  const head = [`${port.port ?? '?'}/${port.socket_type || 'tcp'}`, port.protocol].filter(Boolean).join(' ');
  return notes ? `${head} (${notes})` : head;
}

/** The card: risk levels, abuse records, flags, ports, IDS alerts, owner, then the report page. */
export function criminalIpDetails(result: CriminalIpResult, target: string): DetailField[] {
  const owner = result.whois?.data[0];
  const ports = result.current_opened_port;
  const ids = result.ids;
  const flags = result.issues
    ? (Object.entries(ISSUE_LABELS) as [IssueFlag, string][]).filter(([flagName]) => result.issues?.[flagName]).map(([, label]) => label)
    : [];
  const as = owner ? [owner.as_no !== null && owner.as_no !== '' ? `AS${owner.as_no}` : null, owner.as_name].filter(Boolean).join(' ') : '';
  const place = owner ? [owner.city, owner.region, owner.org_country_code].filter(Boolean).join(', ') : '';
  const alerts = (ids?.data ?? []).slice(0, 3).map((event) => field(
    'IDS alert',
    [event.message, event.classification ? `(${event.classification})` : null, event.confirmed_time].filter(Boolean).join(' '),
    event.url,
  ));
  return fields(
    field('Inbound risk', result.score?.inbound),
    field('Outbound risk', result.score?.outbound),
    field('Abuse records', result.abuse_record_count),
    field('Flags', flags),
    field('Open ports', ports ? (ports.data.length > 0 ? ports.data.map(portText) : ports.count) : null),
    field('IDS events', ids && ids.count > 0 ? ids.count : null),
    ...alerts,
    field('AS', as),
    field('Organization', owner?.org_name && owner.org_name !== owner.as_name ? owner.org_name : null),
    field('Location', place),
    field('Representative domain', result.representative_domain),
    sourceLink('Open in Criminal IP', REPORT_PAGE + encodeURIComponent(result.ip || target)),
  );
}

/** The ASN and AS name of Criminal IP's first whois record. */
export function criminalIpAsn(result: CriminalIpResult): EngineAsn | undefined {
  const first = result.whois?.data?.[0];
  return first ? { asn: first.as_no, org: first.as_name } : undefined;
}

export default defineEngine<CriminalIpResult>({
  id: 'provider_05',
  service: 'criminalip',
  label: 'Criminal IP',
  description: 'Criminal IP inbound/outbound risk, abuse records, open ports, IDS events and owner of an IPv4 address, or of the IPv4 address a domain/URL resolves to',
  tags: ['IP'],
  types: ['IPv4'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['CRIMINALIP_API_KEY'] }],
  defaults: {
    // The reference had no timeout here (engines.md 8 item 2).
    timeout_ms: 5000,
    base_url: 'https://api.criminalip.io/v2',
    // Criminal IP's Free plan as published on criminalip.io/pricing: 50 credits a month, one per
    // IP lookup. A paid plan raises it: set engines.provider_05.rate_limit.
    rate_limit: 50,
    rate_window_ms: 30 * 86_400_000,
  },
  summary: criminalIpSummary,
  evidence: criminalIpEvidence,
  asn: criminalIpAsn,
  details: criminalIpDetails,
  run: criminalIpLookup,
});
