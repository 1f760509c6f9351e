/**
 * provider_23 (`urlscan`) — how often urlscan.io has scanned an observable, from its public search
 * API (engines.md 5.28). No key (anonymous quota). The search field follows the type: `ip` for
 * addresses, `files.md5` / `files.sha1` / `files.sha256` for hashes, `page.domain` for a domain
 * and for a URL's host.
 *
 * Result as the reference's — `scan_count` (urlscan's total), `top_domains` (scans per page
 * domain over the returned page, most first, at most 5) and `link` (the search in urlscan's web
 * interface) — plus `last_scan`, the time of the newest scan returned (null when none).
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 20): the query is `<field>:<value>` handed to the client's
 *   `query` option, so it is percent-encoded exactly once (HEAD encoded the value, then sent it
 *   as a parameter, double-encoding it; v0.11 did not encode it at all).
 * - Bug fixed (engines.md 8 item 15): a URL's host comes from the shared URL parser (`hostOf`),
 *   not from splitting on `/` and `:`, so userinfo, ports and IPv6 literals no longer break it.
 *   A URL whose host is an IP address is searched as `page.ip` (the address its page was
 *   served from) rather than as a domain.
 * - A value holding characters that are operators in urlscan's Elasticsearch query syntax (the
 *   colons of an IPv6 address) is quoted: `ip:"2001:db8::1"`. Hashes are searched lower-case,
 *   as urlscan stores them.
 * - A 429 is retried as the upstream asks instead of becoming `null`.
 * - An answer is read leniently (issue 26): only a JSON object is needed. A missing, null or
 *   empty `results` is no scan, one scan object in place of the list is that scan, null entries
 *   are skipped, a `total` sent as text is its number. The reference failed on a missing
 *   `results` (`null`).
 * - `scan_count` without a `total` in the answer is the number of scans returned, not 0 (the
 *   reference's default): those scans exist, so 0 would contradict `top_domains`.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { jsonObject } from '../src/http/client.js';
import { list, numOrNull, text } from '../src/http/lenient.js';
import { count, isoDay, latest } from '../src/lookup/wording.js';
import { hostOf, ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, listText, sourceLink } from '../src/lookup/fields.js';

/** urlscan's web search; the query goes in the fragment. */
const WEB_SEARCH = 'https://urlscan.io/search/#';
const TOP_DOMAINS = 5;

/**
 * One scan; everything read when present (no page domain counts as "Unknown", as in the
 * reference; a domain sent as "" counts as "", as there too: issue 32).
 */
const ScanSchema = jsonObject({
  task: v.nullish(v.looseObject({ time: text() })),
  page: v.nullish(v.looseObject({ domain: text() })),
});

/**
 * The search's answer: only a JSON object is needed. `results` absent, null or one scan object
 * in place of the list → none / that one (null entries skipped); `total` absent → counted below.
 */
const SearchSchema = jsonObject({
  results: list(ScanSchema),
  total: numOrNull(),
});

export interface DomainCount {
  domain: string;
  count: number;
}

export interface UrlscanResult {
  /** urlscan's number of matching scans. */
  scan_count: number;
  /** Scans per page domain ("Unknown" when a scan has none) over the returned page, most first, at most 5. */
  top_domains: DomainCount[];
  /** The same search in urlscan's web interface. */
  link: string;
  /** Time of the newest scan returned (ISO 8601), null when there is none. */
  last_scan: string | null;
}

/** The search `<field>:<value>` for an observable, or null when it has nothing to search for. */
export function searchQuery(observable: Observable): string | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
      return `ip:${term(observable.value)}`;
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return `files.${observable.type.toLowerCase()}:${term(observable.value.toLowerCase())}`;
    case 'FQDN':
    case 'URL': {
      const host = hostOf(observable);
      if (!host) return null;
      return `${ipVersion(host) ? 'page.ip' : 'page.domain'}:${term(host)}`;
    }
    default:
      return null;
  }
}

/** A value as a query term: as is when it is a plain word, else quoted. */
function term(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

export async function urlscanLookup(observable: Observable, ctx: EngineContext): Promise<UrlscanResult | null> {
  const q = searchQuery(observable);
  if (!q) return null;
  const answer = await ctx.http.json(String(ctx.settings.base_url), SearchSchema, { query: { q } });
  return {
    scan_count: answer.total ?? answer.results.length,
    top_domains: topDomains(answer.results.map((scan) => scan.page?.domain ?? 'Unknown')),
    link: WEB_SEARCH + encodeURI(q),
    last_scan: latest(answer.results.map((scan) => scan.task?.time)),
  };
}

/** Counts per domain, most first; ties keep the order in which domains first appeared. */
function topDomains(domains: readonly string[]): DomainCount[] {
  const counts = new Map<string, number>();
  for (const domain of domains) counts.set(domain, (counts.get(domain) ?? 0) + 1);
  return [...counts]
    .map(([domain, n]) => ({ domain, count: n }))
    .sort((a, b) => b.count - a.count)
    .slice(0, TOP_DOMAINS);
}

/** `12 scans, last 2026-10-02`; `no scans`. */
function summary(result: UrlscanResult): string {
  if (result.scan_count === 0) return 'no scans';
  const last = isoDay(result.last_scan);
  return `${count(result.scan_count, 'scan')}${last ? `, last ${last}` : ''}`;
}

/** Card fields: how many scans, the newest, the page domains scanned most, the search on urlscan.io. */
export function urlscanDetails(result: UrlscanResult): DetailField[] {
  return fields(
    field('Scans', result.scan_count),
    field('Last scan', result.last_scan),
    field('Top page domains', listText(result.top_domains.map((d) => `${d.domain || '(empty)'} (${d.count})`), TOP_DOMAINS)),
    sourceLink('Open in urlscan.io', result.link),
  );
}

export default defineEngine<UrlscanResult>({
  id: 'provider_23',
  service: 'urlscan',
  label: 'urlscan.io',
  description: 'Number of urlscan.io scans of a domain, URL host, IP or file hash, the newest scan\'s date and the page domains scanned most',
  tags: ['domain', 'URL', 'IP', 'hash', 'free_no_key'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: { timeout_ms: 10000, base_url: 'https://urlscan.io/api/v1/search/' },
  summary,
  details: urlscanDetails,
  run: urlscanLookup,
});
