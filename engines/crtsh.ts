/**
 * crtsh — the names most often found in the certificates that Certificate Transparency logs hold
 * for a domain or a URL's host, from crt.sh (engines.md 9.1): `GET {base_url}/json?q=<host>`, no
 * key. crt.sh is slow for big domains and often overloaded, hence the reference's 20 s timeout.
 *
 * Result as the reference's, exactly these keys: `top_domains` (at most 5 `{domain, count}`, the
 * highest count first: for each log row, the set of its `common_name` and the lines of its
 * `name_value`, each name counted once per row, summed over rows; wildcards are names like any
 * other, no case folding, no filtering) and `link` (`https://crt.sh/?q=<host>`). Nothing logged
 * is `{top_domains: [], link}`, not `null`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 9.1 "Bug (HEAD)", 8 item 5): a transport error (connection refused,
 *   DNS, TLS, proxy, reset) or a JSON body that is not an array of objects no longer escapes the
 *   engine and takes the whole observable with it: it is this engine's error, the observable and
 *   the other engines' results are kept.
 * - Errors are errors, not `null` (engines.md 8 item 3): HTTP errors (crt.sh's 429/502/503 when
 *   overloaded, after the client's retries with back-off, 8 item 4), a body that is no JSON or has
 *   fields of the wrong type, a timeout, and an answer over the client's size limit (a domain
 *   with too many certificates), which says so.
 * - Quirk fixed (engines.md 9.1 "Quirks"): names with the same count keep the order in which they
 *   first appear in crt.sh's answer (a row's `common_name` before its `name_value` lines), where
 *   the reference's order changed from run to run (Python set and string hashing).
 * - The host of a URL comes from the shared WHATWG parser (`hostOf`: lower-cased, punycode, port
 *   and userinfo dropped, 8 item 15); an IPv6 literal is sent without its brackets. A domain is
 *   lower-cased without a trailing dot (the runner's cache key is case-insensitive for domains,
 *   so the answer, its `link` included, must not depend on how the first caller wrote it) and
 *   turned into punycode. The query is percent-encoded (v0.11 pasted it into the URL raw).
 * - `base_url` is a setting (default `https://crt.sh`); the request goes through the shared
 *   client (proxy, TLS settings). crt.sh throttles at 60 requests a minute per address with a
 *   burst of 5, so calls are paced at one a second and at most 5 run at once.
 * - A row's `common_name` is trimmed like its `name_value` lines (the reference took it as is,
 *   so a stray space made a second name).
 * - A row without `common_name` or `name_value`, or with either null, counts the names it has;
 *   null rows are skipped, and one row sent in place of the array is read as a list of it (the
 *   reference failed on both).
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { BadResponseError } from '../src/http/errors.js';
import { serverBase } from '../src/http/server-base.js';
import { count } from '../src/lookup/wording.js';
import { asciiHostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const LABEL = 'crt.sh';
/** crt.sh's web page for a query (the host is not encoded, as in the reference). */
const PAGE = 'https://crt.sh/?q=';
const TOP = 5;

const text = v.nullish(v.string());

/**
 * One certificate-log row. Only the names are read; `issuer_ca_id`, `issuer_name`, `id`,
 * `entry_timestamp`, `not_before`, `not_after`, `serial_number` and `result_count` are ignored.
 */
const RowSchema = jsonObject({ common_name: text, name_value: text }, 'Invalid type: Expected Object');

/** An object naming certificates: a row, as opposed to an error object (`{"error": ...}`). */
function isRow(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('name_value' in value || 'common_name' in value);
}

/**
 * crt.sh's JSON output: an array of rows, `[]` when nothing matches. The array is needed (an
 * object that is no row, such as crt.sh's error object, is refused); one row in place of the
 * array is read as a list of it, and null rows are skipped.
 */
const AnswerSchema = v.pipe(
  v.unknown(),
  v.transform((value) => (isRow(value) ? [value] : value)),
  v.array(v.nullable(RowSchema)),
);

export interface CrtshDomain {
  /** A name found in the certificates (`www.example.org`, `*.example.org`). */
  domain: string;
  /** Number of log rows (certificates and precertificates) naming it. */
  count: number;
}

export interface CrtshResult {
  /** At most 5 names, the highest count first, ties in order of first appearance. */
  top_domains: CrtshDomain[];
  /** `https://crt.sh/?q=<host>`. */
  link: string;
}

/**
 * What crt.sh is asked about: a domain lower-cased, without a trailing dot, in punycode; a URL's
 * host (WHATWG parsing); null when there is none.
 */
export function crtshQuery(observable: Observable): string | null {
  return observable.type === 'FQDN' || observable.type === 'URL' ? asciiHostOf(observable) : null;
}

/** The names of the rows, counted once per row, the highest count first; ties by first appearance. */
export function topDomains(rows: readonly { common_name?: string | null | undefined; name_value?: string | null | undefined }[], top = TOP): CrtshDomain[] {
  const counts = new Map<string, number>();
  for (const row of rows) {
    const names = new Set<string>();
    const common = row.common_name?.trim();
    if (common) names.add(common);
    for (const line of (row.name_value ?? '').split(/\r?\n/)) {
      const name = line.trim();
      if (name) names.add(name);
    }
    for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  // Array.prototype.sort is stable: equal counts keep the Map's order, i.e. first appearance.
  return [...counts]
    .map(([domain, n]) => ({ domain, count: n }))
    .sort((a, b) => b.count - a.count)
    .slice(0, top);
}

export async function crtshLookup(observable: Observable, ctx: EngineContext): Promise<CrtshResult | null> {
  const host = crtshQuery(observable);
  if (!host) return null;
  const base = serverBase(ctx, LABEL);
  const link = PAGE + host;
  let body: string;
  try {
    body = (await ctx.http.request(`${base}/json`, { query: { q: host }, headers: { accept: 'application/json' } })).text();
  } catch (error) {
    // The client refuses an answer over its size limit: crt.sh lists every certificate of a big
    // domain (hundreds of megabytes for the largest), which is worth saying.
    if (error instanceof BadResponseError && /^response larger than \d+ bytes$/.test(error.message)) {
      throw new BadResponseError(`${LABEL}: too many certificates for ${host} (${error.message}); see ${link}`);
    }
    throw error;
  }
  const rows = parseJson(body, AnswerSchema).filter((row) => row !== null);
  return { top_domains: topDomains(rows), link };
}

/** `top names: example.org (3), www.example.org (2), mail.example.org (1)`; `no certificate logged`. */
export function crtshSummary(result: CrtshResult): string {
  if (result.top_domains.length === 0) return 'no certificate logged';
  return `top names: ${result.top_domains.map((d) => `${d.domain} (${d.count})`).join(', ')}`;
}

/** The card: the names with their certificate counts, then crt.sh's page for the query. */
export function crtshDetails(result: CrtshResult): DetailField[] {
  return fields(
    field('Top names', result.top_domains.length > 0
      ? result.top_domains.map((d) => `${d.domain} (${count(d.count, 'certificate')})`)
      : 'no certificate logged'),
    sourceLink('Open in crt.sh', result.link),
  );
}

export default defineEngine<CrtshResult>({
  id: 'crtsh',
  service: 'crtsh',
  label: 'crt.sh',
  description: 'Names most often found in the certificates Certificate Transparency logs hold for a domain or a URL\'s host, from crt.sh (free, no key)',
  catalogs: [],
  tags: ['domain', 'URL', 'free_no_key'],
  types: ['FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: {
    // The reference's timeout: crt.sh can take long for big domains.
    timeout_ms: 20_000,
    base_url: 'https://crt.sh',
    // crt.sh throttles at 60 requests per minute per address, burst 5 (nginx limit_req, announced
    // by its operator on the crt.sh list, 2020-01-27); it runs on a single database, so heavy
    // queries are kept few at once.
    rate_limit: 1,
    rate_window_ms: 1000,
    concurrency: 5,
  },
  summary: crtshSummary,
  details: crtshDetails,
  run: crtshLookup,
});
