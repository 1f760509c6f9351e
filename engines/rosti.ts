/**
 * provider_19 (`rosti`) — IOCs the Rösti threat-intelligence report digest (bin.re) lists for an
 * observable (engines.md 5.24): `GET {base_url}/iocs?q=<value>&pattern=true` with the key in the
 * `X-API-Key` header. Any observable type is searched as written.
 *
 * Result as the reference's: `count` (IOCs returned), `results` (every IOC, not truncated, each
 * with `value`, `type`, `category`, `date`, `comment`, `ids`, `report`, `link`, `timestamp`,
 * `risk`, `id` copied from the answer — absent ones null — and `link` the report's page on
 * rosti.bin.re when the IOC names a report), `total` (Rösti's `meta.total`, null when absent) and
 * `has_more` (`meta.has_more`). No match is that result with `count` 0, not `null`.
 *
 * What the engine needs of an answer is only that it is a JSON object; everything else is read
 * when present. A missing or null `data` is no IOC, one IOC object in place of the list is that
 * IOC, and entries that are not objects are skipped (as the reference did); a missing `meta`
 * gives `total` null and `has_more` false, and `has_more` sent as 0/1 or "" is read as a boolean.
 *
 * Differences from the reference (engines.md 1.9, 8 item 3): HTTP failures and malformed answers
 * are errors, not `null`; an IOC field of a type that cannot be read as text (an object, a list)
 * is a malformed answer, not copied. An empty string in an IOC's text fields, `timestamp` or `id`
 * is kept as `""`, as the reference copied it (issue 32); an empty `report` gives no `link`. A
 * number sent for a text field (a numeric `risk`, `report`) is its text. `ids` sent as 0/1 or ""
 * is false/true (the reference copied the number). The report id is percent-encoded in `link`.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseWith } from '../src/http/client.js';
import { flag, list, numOrNull, text } from '../src/http/lenient.js';
import { count, oneLine } from '../src/lookup/wording.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields } from '../src/lookup/fields.js';

const REPORTS = 'https://rosti.bin.re/reports/';

const IocSchema = v.looseObject({
  id: v.nullish(v.union([v.string(), v.number()])),
  value: text(),
  type: text(),
  category: text(),
  date: text(),
  comment: text(),
  /**
   * Whether the IOC is fit for detection (IDS), also sent as 1/0 or ""; some answers give a list
   * of rule ids. Absent or null stays null (the IOC says nothing), as in the reference.
   */
  ids: v.nullish(v.union([v.array(v.string()), flag()])),
  report: text(),
  timestamp: v.nullish(v.union([v.number(), v.string()])),
  risk: text(),
});

const AnswerSchema = jsonObject({
  /** The IOCs; absent, null or one object in place of the list read as none / that one. */
  data: list(v.unknown()),
  meta: v.nullish(v.looseObject({
    total: numOrNull(),
    has_more: flag(),
  })),
});

const EntriesSchema = v.object({ data: v.array(v.nullable(IocSchema)) });

type Ioc = v.InferOutput<typeof IocSchema>;

export interface RostiIoc {
  value: string | null;
  type: string | null;
  category: string | null;
  date: string | null;
  comment: string | null;
  ids: boolean | string[] | null;
  report: string | null;
  /** The report's page on rosti.bin.re, null when the IOC names no report. */
  link: string | null;
  timestamp: number | string | null;
  risk: string | null;
  id: string | number | null;
}

export interface RostiResult {
  /** Number of IOCs returned (`results.length`). */
  count: number;
  results: RostiIoc[];
  /** Rösti's count of matching IOCs (`meta.total`), null when it gives none. */
  total: number | null;
  /** Whether Rösti has more IOCs than it returned. */
  has_more: boolean;
}

export async function rostiLookup(observable: Observable, ctx: EngineContext): Promise<RostiResult | null> {
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const answer = await ctx.http.json(`${base}/iocs`, AnswerSchema, {
    query: { q: observable.value, pattern: 'true' },
    headers: { 'x-api-key': String(ctx.settings.api_key ?? '') },
  });
  // Entries that are not objects are skipped (as the reference did); the others are validated
  // in place, so an error names the entry (`data.3.risk`).
  const entries = answer.data.map((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? item : null));
  const results = parseWith(EntriesSchema, { data: entries }).data
    .filter((item) => item !== null)
    .map(toIoc);
  return {
    count: results.length,
    results,
    total: answer.meta?.total ?? null,
    has_more: answer.meta?.has_more ?? false,
  };
}

function toIoc(item: Ioc): RostiIoc {
  return {
    value: item.value,
    type: item.type,
    category: item.category,
    date: item.date,
    comment: item.comment,
    ids: item.ids ?? null,
    report: item.report,
    link: item.report ? REPORTS + encodeURIComponent(item.report) : null,
    timestamp: item.timestamp ?? null,
    risk: item.risk,
    id: item.id ?? null,
  };
}

/** `3 IOCs in 2 reports (c2, payload_delivery)`; `12 IOCs (more available)`; `no IOC`. */
function summary(result: RostiResult): string {
  const n = Math.max(result.count, result.total ?? 0);
  if (n === 0) return 'no IOC';
  const reports = new Set(result.results.map((ioc) => ioc.report).filter(Boolean)).size;
  const categories = [...new Set(result.results.map((ioc) => ioc.category).filter((c): c is string => !!c))];
  return `${count(n, 'IOC')}${reports > 0 ? ` in ${count(reports, 'report')}` : ''}`
    + `${categories.length > 0 ? ` (${categories.slice(0, 3).join(', ')}${categories.length > 3 ? ', …' : ''})` : ''}`
    + `${result.has_more ? ', more available' : ''}`;
}

/** Whether an IOC is marked fit for detection (`ids: true`, or a list of rule ids). */
function forDetection(ioc: RostiIoc): boolean {
  return ioc.ids === true || (Array.isArray(ioc.ids) && ioc.ids.length > 0);
}

const HIGH_RISK = new Set(['high', 'critical']);

/**
 * What Rösti says about the observable's risk. Its IOCs come from published threat reports: an
 * IOC that the report marks for detection (`ids`) with a high or critical `risk` is `malicious`;
 * any other IOC (context, lower risk, a partial match of the pattern search) is `suspicious`. No
 * IOC judges nothing: Rösti covers the reports it collects, not the whole Internet.
 */
export function rostiEvidence(result: RostiResult | null): Evidence | undefined {
  const iocs = Array.isArray(result?.results) ? result.results : [];
  if (iocs.length === 0) return undefined; // in no report: no judgement
  const reports = new Set(iocs.map((ioc) => ioc.report).filter(Boolean)).size;
  const inReports = `${count(iocs.length, 'IOC')}${reports > 0 ? ` in ${count(reports, 'threat report')}` : ''}`;
  const strong = iocs.find((ioc) => forDetection(ioc) && typeof ioc.risk === 'string' && HIGH_RISK.has(ioc.risk.toLowerCase()));
  if (strong) {
    const about = [strong.category, `${strong.risk} risk`, 'marked for detection'].filter(Boolean).join(', ');
    // A report's detection IOC of high risk: the report's authors call it attacker infrastructure.
    return { level: 'malicious', reason: oneLine(`${inReports}${strong.report ? ` (${strong.report}: ${about})` : ` (${about})`}`, 240) };
  }
  const categories = distinct(iocs.map((ioc) => ioc.category)).slice(0, 3);
  // Listed in threat reports, but not as a high-risk detection IOC: worth a look.
  return { level: 'suspicious', reason: oneLine(`${inReports}${categories.length > 0 ? ` (${categories.join(', ')})` : ''}`, 240) };
}

/** Distinct non-empty values, in first-seen order. */
function distinct(values: readonly (string | null)[]): string[] {
  return [...new Set(values.filter((value): value is string => !!value))];
}

/**
 * The card: how many IOCs, what they are, when, then up to five reports linked to their page on
 * rosti.bin.re. The IOC values are shown as text, never as links (they may be malicious).
 */
export function rostiDetails(result: RostiResult): DetailField[] {
  const n = Math.max(result.count, result.total ?? 0);
  const dates = distinct(result.results.map((ioc) => ioc.date)).sort();
  const first = dates[0];
  const last = dates[dates.length - 1];
  const reports = new Map<string, RostiIoc>();
  for (const ioc of result.results) if (ioc.report && !reports.has(ioc.report)) reports.set(ioc.report, ioc);
  return fields(
    field('IOCs', `${n}${result.has_more ? ' (more available)' : ''}`),
    field('Categories', distinct(result.results.map((ioc) => ioc.category))),
    field('Risk', distinct(result.results.map((ioc) => ioc.risk))),
    field('IOC types', distinct(result.results.map((ioc) => ioc.type))),
    field('Matched values', distinct(result.results.map((ioc) => ioc.value))),
    field('Dates', first && last && first !== last ? `${first} – ${last}` : first),
    ...[...reports.values()].slice(0, 5).map((ioc) => field('Report', ioc.comment ? `${ioc.report}: ${ioc.comment}` : ioc.report, ioc.link)),
    reports.size > 5 ? field('More reports', reports.size - 5) : null,
  );
}

export default defineEngine<RostiResult>({
  id: 'provider_19',
  service: 'rosti',
  // Absent from the spec's older catalog variant.
  catalogs: ['main'],
  label: 'Rösti',
  description: 'IOCs that threat-intelligence reports collected by Rösti (bin.re) list for an IP, domain, URL, e-mail address or file hash',
  tags: ['IP', 'domain', 'URL', 'email'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['ROSTI_API_KEY'] }],
  defaults: {
    timeout_ms: 10000,
    base_url: 'https://api.rosti.bin.re/v2',
    // Rösti gives API keys on request and publishes no per-minute figure that we know of; a
    // conservative 1000 lookups a day (our assumption, not a published number) protects the key.
    // Raise it to match your agreement.
    rate_limit: 1000,
    rate_window_ms: 86_400_000,
  },
  summary,
  evidence: rostiEvidence,
  details: rostiDetails,
  run: rostiLookup,
});
