/**
 * provider_18 (`rl_analyze`) — what a self-hosted ReversingLabs Spectra Analyze appliance knows
 * about an IP, a domain, a URL or a file hash (engines.md 5.23): `GET {base_url}<path>` with
 * `Authorization: Token <key>` and `accept: application/json`.
 *
 * | type       | API path                                                  | link (appended to base_url)      |
 * |------------|-----------------------------------------------------------|----------------------------------|
 * | IPv4/IPv6  | `/api/network-threat-intel/ip/<ip>/report/`               | `/ip/<ip>/analysis/ip/`          |
 * | FQDN       | `/api/network-threat-intel/domain/<fqdn>/`                | `/domain/<fqdn>/analysis/domain/`|
 * | URL        | `/api/network-threat-intel/url/?url=<quote_plus(url)>`    | `/url/<quote_plus(url)>/analysis/url/` |
 * | hashes     | `/api/samples/v3/<hash>/classification/?av_scanners=1`    | `/<hash>/`                       |
 *
 * Results as the reference's:
 * - IP/domain: `{report_type: "network", report_color, reports, malicious, suspicious, total_files,
 *   malicious_files, suspicious_files, threats, link}` from `third_party_reputations.statistics`,
 *   `downloaded_files_statistics` and `top_threats`.
 * - URL: `{report_type: "network", report_color, reports, malicious, suspicious, threats, link}`,
 *   `threats` being `analysis.top_threats[].threat_name`, then `threat_name`, then `categories`.
 * - Hash: `{report_type: "file", report_color, reports (scanner_count), scanners (scanner_match),
 *   classification (upper-cased), riskscore, threats ([classification, classification_result,
 *   classification_reason]), link}`.
 * - Colours: network `red` when malicious > 2 or suspicious > 3, else `yellow` when either is > 0,
 *   else `green`; file `red` when classified malicious with riskscore > 2, else `yellow` when not
 *   goodware or riskscore > 5, else `green`.
 * - "No data" (no third-party source saw the IP/domain/URL, or a sample without `av_scanners`)
 *   is the documented empty object `{}`, not `null`.
 * - Not found: a 404 on a hash (the appliance does not know the sample) is `null`. A 404 that is
 *   an HTML page (a wrong base_url's web server), and any 404 on the network paths, is an error.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 20): the requests go through the shared client, so `proxy_url`
 *   and `ssl_verify` apply (the reference forced a direct connection).
 * - Bug fixed (engines.md 8 item 19): `base_url` and `api_key` are required credentials; without
 *   them the runner refuses the call before any request (the reference sent it anyway).
 * - A URL answer without `analysis` is no failure: it just adds no threat names. `null` and empty
 *   entries are dropped from every `threats` list (the reference kept them), so it is a list of
 *   threat names.
 * - A sample's `classification` is kept as sent, upper-cased (`""` stays `""`, as in the
 *   reference, issue 32); one left out or null is `UNKNOWN` (the reference failed).
 * - A domain is asked lower-cased without a trailing dot; a trailing `/` on base_url is ignored.
 * - Nothing in an answer is needed but its being a JSON object (issue 26): counts absent, null or
 *   "" are 0 and counts sent as text their number; `third_party_reputations`, its `statistics`,
 *   `downloaded_files_statistics`, `analysis` and `av_scanners` absent, null, "", 0, false or
 *   `{}` are "none" (no reputation counts or no scanners: the documented `{}`); `top_threats` and
 *   `categories` null are `[]`, one entry in place of a list is a list of it.
 * - Errors are errors, not `null` (engines.md 8 item 3): a refused key (401/403) is a one-line
 *   authentication error naming the appliance, with the key masked; other HTTP errors (429 and
 *   5xx after the client's retries), a malformed body and a timeout are reported too.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, EngineError, type Evidence, type HttpResponse } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, num, text } from '../src/http/lenient.js';
import { EXPLAINED_STATUSES, refusedError } from '../src/http/refusal.js';
import { oneLine } from '../src/lookup/wording.js';
import { hostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { serverBase } from '../src/http/server-base.js';

const LABEL = 'ReversingLabs Spectra Analyze';

const TopThreatsSchema = list(v.looseObject({ threat_name: text() }));

/**
 * An object read when present: absent, null, `""`, `0`, `false` or `{}` are "none" (null), as
 * the reference's `if value:` tests read them; otherwise `entries`.
 */
function present<E extends v.ObjectEntries>(entries: E) {
  return v.optional(v.pipe(
    v.unknown(),
    v.transform((value) => (!value || (typeof value === 'object' && Object.keys(value).length === 0) ? null : value)),
    v.nullable(jsonObject(entries, 'expected an object')),
  ), null);
}

/** `third_party_reputations`: counts of the reputation sources, and the sources themselves. */
const ReputationsSchema = present({
  statistics: present({ total: num(), malicious: num(), suspicious: num(), clean: num(), undetected: num() }),
});

/**
 * The IP report and the domain answer (which adds last_seen, last_dns_records...). Nothing is
 * needed: without reputation counts the appliance has no data (`{}`).
 */
const NetworkSchema = jsonObject({
  top_threats: TopThreatsSchema,
  downloaded_files_statistics: present({ total: num(), malicious: num(), suspicious: num() }),
  third_party_reputations: ReputationsSchema,
});

const UrlSchema = jsonObject({
  classification: text(),
  threat_name: text(),
  categories: list(v.string('expected a category')),
  analysis: present({ top_threats: TopThreatsSchema }),
  third_party_reputations: ReputationsSchema,
});

const FileSchema = jsonObject({
  classification: text(),
  riskscore: num(),
  classification_result: text(),
  classification_reason: text(),
  av_scanners: present({ scanner_count: num(), scanner_match: num() }),
});

export type ReportColor = 'red' | 'yellow' | 'green';

/** An IP or domain report. */
export interface RlNetworkResult {
  report_type: 'network';
  report_color: ReportColor;
  /** Third-party reputation sources that know the IP/domain. */
  reports: number;
  malicious: number;
  suspicious: number;
  /** Files seen downloaded from it, and how many of them are malicious/suspicious. */
  total_files: number;
  malicious_files: number;
  suspicious_files: number;
  threats: string[];
  link: string;
}

/** A URL report: the network report without the downloaded-files counts. */
export type RlUrlResult = Omit<RlNetworkResult, 'total_files' | 'malicious_files' | 'suspicious_files'>;

/** A sample's classification. */
export interface RlFileResult {
  report_type: 'file';
  report_color: ReportColor;
  /** AV scanners that scanned the sample. */
  reports: number;
  /** AV scanners that detected it. */
  scanners: number;
  /** `MALICIOUS`, `SUSPICIOUS`, `GOODWARE`, `UNKNOWN`. */
  classification: string;
  riskscore: number;
  threats: string[];
  link: string;
}

/** `{}`: the appliance answered but has no data on the observable (engines.md 5.23). */
export type RlNoData = Record<string, never>;

export type RlAnalyzeResult = RlNetworkResult | RlUrlResult | RlFileResult | RlNoData;

/** Python's `urllib.parse.quote_plus`: everything but `A-Za-z0-9_.-~` percent-encoded, spaces as `+`. */
export function quotePlus(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

type Kind = 'network' | 'url' | 'file';

/** API path (with query) and UI link path for an observable; null for a type the appliance has no report for. */
export function rlPaths(observable: Observable): { kind: Kind; api: string; link: string } | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
      return { kind: 'network', api: `/api/network-threat-intel/ip/${observable.value}/report/`, link: `/ip/${observable.value}/analysis/ip/` };
    case 'FQDN': {
      const domain = hostOf(observable);
      return domain ? { kind: 'network', api: `/api/network-threat-intel/domain/${domain}/`, link: `/domain/${domain}/analysis/domain/` } : null;
    }
    case 'URL': {
      const quoted = quotePlus(observable.value);
      return { kind: 'url', api: `/api/network-threat-intel/url/?url=${quoted}`, link: `/url/${quoted}/analysis/url/` };
    }
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return { kind: 'file', api: `/api/samples/v3/${observable.value}/classification/?av_scanners=1`, link: `/${observable.value}/` };
    default:
      return null;
  }
}

/** Network colour from the reputation counts. */
export function networkColor(malicious: number, suspicious: number): ReportColor {
  if (malicious > 2 || suspicious > 3) return 'red';
  if (malicious > 0 || suspicious > 0) return 'yellow';
  return 'green';
}

/** File colour from the classification and risk score. */
export function fileColor(classification: string, riskscore: number): ReportColor {
  const lower = classification.toLowerCase();
  if (lower === 'malicious' && riskscore > 2) return 'red';
  if (lower !== 'goodware' || riskscore > 5) return 'yellow';
  return 'green';
}

/** Threat names without nulls and blanks, in order. */
function names(values: readonly (string | null | undefined)[]): string[] {
  return values.filter((value): value is string => typeof value === 'string' && value.trim() !== '');
}

export async function rlAnalyzeLookup(observable: Observable, ctx: EngineContext): Promise<RlAnalyzeResult | null> {
  const paths = rlPaths(observable);
  if (!paths) return null;
  const base = serverBase(ctx, LABEL);
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key === '') throw new EngineError('not configured: api_key');
  const response = await ctx.http.request(`${base}${paths.api}`, {
    headers: { authorization: `Token ${key}`, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 401 || response.status === 403) {
    throw new CredentialsRefusedError(LABEL, refusedError(response, ctx).message);
  }
  if (response.status === 404 && paths.kind === 'file' && !isHtml(response)) return null;
  if (response.status >= 300) throw refusedError(response, ctx);
  const link = `${base}${paths.link}`;
  if (paths.kind === 'file') return fileResult(parseJson(response.text(), FileSchema), link);
  if (paths.kind === 'url') {
    const answer = parseJson(response.text(), UrlSchema);
    const stats = answer.third_party_reputations?.statistics;
    const total = stats?.total ?? 0;
    if (total <= 0) return {};
    const malicious = stats?.malicious ?? 0;
    const suspicious = stats?.suspicious ?? 0;
    return {
      report_type: 'network',
      report_color: networkColor(malicious, suspicious),
      reports: total,
      malicious,
      suspicious,
      threats: names([
        ...(answer.analysis?.top_threats ?? []).map((threat) => threat.threat_name),
        answer.threat_name,
        ...answer.categories,
      ]),
      link,
    };
  }
  const answer = parseJson(response.text(), NetworkSchema);
  const stats = answer.third_party_reputations?.statistics;
  const total = stats?.total ?? 0;
  if (total <= 0) return {};
  const malicious = stats?.malicious ?? 0;
  const suspicious = stats?.suspicious ?? 0;
  const files = answer.downloaded_files_statistics;
  return {
    report_type: 'network',
    report_color: networkColor(malicious, suspicious),
    reports: total,
    malicious,
    suspicious,
    total_files: files?.total ?? 0,
    malicious_files: files?.malicious ?? 0,
    suspicious_files: files?.suspicious ?? 0,
    threats: names(answer.top_threats.map((threat) => threat.threat_name)),
    link,
  };
}

function fileResult(answer: v.InferOutput<typeof FileSchema>, link: string): RlFileResult | RlNoData {
  const scanners = answer.av_scanners;
  if (!scanners) return {};
  const classification = answer.classification ?? 'unknown';
  const riskscore = answer.riskscore;
  return {
    report_type: 'file',
    report_color: fileColor(classification, riskscore),
    reports: scanners.scanner_count,
    scanners: scanners.scanner_match,
    classification: classification.toUpperCase(),
    riskscore,
    threats: names([answer.classification, answer.classification_result, answer.classification_reason]),
    link,
  };
}

/** A web server's error page rather than the appliance's API answer. */
function isHtml(response: HttpResponse): boolean {
  return /html/i.test(response.headers['content-type'] ?? '') || response.text().trimStart().startsWith('<');
}

function isFile(result: RlAnalyzeResult): result is RlFileResult {
  return (result as RlFileResult).report_type === 'file';
}

function isNetwork(result: RlAnalyzeResult): result is RlUrlResult | RlNetworkResult {
  return (result as RlUrlResult).report_type === 'network';
}

/**
 * `red · MALICIOUS, risk 10 · 25/29 scanners · Win32.Trojan.Emotet`;
 * `yellow · 2/15 sources malicious · 0/1733 files malicious · Win32.Trojan.Agent`; `no data`.
 */
export function rlAnalyzeSummary(result: RlAnalyzeResult): string {
  if (isFile(result)) {
    const parts = [result.report_color, `${result.classification || 'unclassified'}, risk ${result.riskscore}`, `${result.scanners}/${result.reports} scanners`];
    const threats = result.threats.filter((t) => t.toUpperCase() !== result.classification);
    if (threats.length > 0) parts.push(threats.join(', '));
    return parts.join(' · ');
  }
  if (isNetwork(result)) {
    const suspicious = result.suspicious > 0 ? `, ${result.suspicious} suspicious` : '';
    const parts = [result.report_color, `${result.malicious}/${result.reports} sources malicious${suspicious}`];
    if ('total_files' in result && result.total_files > 0) parts.push(`${result.malicious_files}/${result.total_files} files malicious`);
    if (result.threats.length > 0) parts.push(result.threats.join(', '));
    return parts.join(' · ');
  }
  return 'no data';
}

/**
 * What the appliance says about the observable's risk.
 * - A file: its classification (`MALICIOUS`, `SUSPICIOUS`, `GOODWARE`, formerly called `KNOWN`);
 *   `UNKNOWN` judges nothing.
 * - An IP, a domain or a URL: the third-party reputation sources, with the appliance's own
 *   thresholds (those of `report_color`): more than 2 malicious or more than 3 suspicious is
 *   malicious, any is suspicious, none of the sources that know it is clean. Files downloaded
 *   from it are left out: a CDN or a code host serves malware too.
 * `{}` (no source knows it, or a sample never scanned) and `null` (unknown sample) judge nothing.
 */
export function rlAnalyzeEvidence(result: RlAnalyzeResult | null): Evidence | undefined {
  if (!result) return undefined; // unknown sample: no judgement
  if (isFile(result)) {
    if (typeof result.classification !== 'string') return undefined;
    const classification = result.classification.toUpperCase();
    const risk = typeof result.riskscore === 'number' ? `, risk ${result.riskscore}/10` : '';
    const scanners = typeof result.scanners === 'number' && typeof result.reports === 'number' ? ` · ${result.scanners}/${result.reports} AV scanners` : '';
    const threat = (Array.isArray(result.threats) ? result.threats : []).find((t) => t.toUpperCase() !== classification && /\./.test(t));
    const reason = oneLine(`classified ${classification}${risk}${scanners}${threat ? ` · ${threat}` : ''}`, 240);
    // MALICIOUS: ReversingLabs' own verdict on the sample.
    if (classification === 'MALICIOUS') return { level: 'malicious', reason };
    // SUSPICIOUS: not proven malicious, not trusted.
    if (classification === 'SUSPICIOUS') return { level: 'suspicious', reason };
    // GOODWARE (KNOWN in older appliances): a known-good file.
    if (classification === 'GOODWARE' || classification === 'KNOWN') return { level: 'clean', reason };
    return undefined; // UNKNOWN: no judgement
  }
  if (isNetwork(result)) {
    const { malicious, suspicious, reports } = result;
    if (typeof malicious !== 'number' || typeof suspicious !== 'number' || typeof reports !== 'number' || reports <= 0) return undefined;
    const threats = Array.isArray(result.threats) && result.threats.length > 0 ? ` · ${result.threats.slice(0, 3).join(', ')}` : '';
    const reason = oneLine(`${malicious}/${reports} reputation sources malicious${suspicious > 0 ? `, ${suspicious} suspicious` : ''}${threats}`, 240);
    // Several sources agree (the appliance's red): malicious.
    if (malicious > 2 || suspicious > 3) return { level: 'malicious', reason };
    // One or two sources flag it (the appliance's yellow): suspicious.
    if (malicious > 0 || suspicious > 0) return { level: 'suspicious', reason };
    // Sources know it and none flags it: clean.
    return { level: 'clean', reason: `0/${reports} reputation sources flag it` };
  }
  return undefined; // {}: no data
}

/** The card: verdict, counts, threat names, the appliance's own page. */
export function rlAnalyzeDetails(result: RlAnalyzeResult): DetailField[] {
  if (isFile(result)) {
    return fields(
      field('Verdict', result.report_color),
      field('Classification', result.classification),
      field('Risk score', result.riskscore),
      field('AV scanners', `${result.scanners} of ${result.reports} detected it`),
      field('Threats', result.threats),
      sourceLink('Open in Spectra Analyze', result.link),
    );
  }
  if (isNetwork(result)) {
    return fields(
      field('Verdict', result.report_color),
      field('Reputation sources', `${result.malicious} malicious, ${result.suspicious} suspicious of ${result.reports}`),
      'total_files' in result && field('Downloaded files', `${result.malicious_files} malicious, ${result.suspicious_files} suspicious of ${result.total_files}`),
      field('Threats', result.threats),
      sourceLink('Open in Spectra Analyze', result.link),
    );
  }
  return fields(field('Report', 'no data'));
}

export default defineEngine<RlAnalyzeResult>({
  id: 'provider_18',
  service: 'rl_analyze',
  // Absent from the spec's older catalog variant.
  catalogs: ['main'],
  label: 'ReversingLabs Spectra Analyze',
  description: 'Verdict of your ReversingLabs Spectra Analyze appliance on a file hash, an IP, a domain or a URL: reputation sources, AV scanners, threat names',
  tags: ['domain', 'URL', 'IP', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Appliance URL', env: ['RL_ANALYZE_URL'], secret: false },
    { setting: 'api_key', label: 'API key', env: ['RL_ANALYZE_API_KEY'] },
  ],
  defaults: { timeout_ms: 5000 },
  summary: rlAnalyzeSummary,
  evidence: rlAnalyzeEvidence,
  details: rlAnalyzeDetails,
  run: rlAnalyzeLookup,
});
