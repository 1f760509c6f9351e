/**
 * provider_22 (`threatfox`) — the malware families abuse.ch ThreatFox associates with an IP, a
 * domain or a URL's host (engines.md 5.27). `POST {base_url}` with the JSON body
 * `{"query": "search_ioc", "search_term": <term>}` and the abuse.ch key in the `Auth-Key` header.
 *
 * Result as the reference's: `count` (IOCs found), `malware_printable` (their distinct malware
 * families as sent, "Unknown" for an IOC without one, `""` for one that names it `""`) and `link`
 * (the search on ThreatFox's site).
 * "No result" is that result with `count` 0, not `null`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 15): a URL's search term is its host from the shared URL parser
 *   (`hostOf`), not the 3rd `/`-piece cut at `:`, so userinfo and IPv6 literals no longer break
 *   it. A domain is searched lower-cased without a trailing dot.
 * - `malware_printable` keeps the order in which families first appear (the reference built it
 *   from a set, so its order changed from run to run).
 * - The term is percent-encoded in `link` (an IPv6 address's colons).
 * - Errors are errors, not `null` (engines.md 8 item 3): HTTP failures, a malformed answer, and a
 *   `query_status` other than `ok`/`no_result` (e.g. `illegal_search_term`), reported with
 *   ThreatFox's own words, redacted. An answer without `query_status` (or with an empty one) is
 *   read like `ok` (the reference did not look at it either: it counted `data` whenever it was a
 *   list).
 * - `data` as one IOC object instead of a list counts as a list of it, and null items in it are
 *   skipped (the reference counted them, then failed on them: `null`). The key is never sent empty (engines.md 8 item 19): the
 *   runner refuses to call the engine without one, and no `Auth-Key` header goes out without a key.
 *
 * Older catalog (`variants.older`, engines.md 6.4): no key and no `Auth-Key` header, tags
 * `IP domain URL free_no_key`; otherwise the same search and result.
 */
import * as v from 'valibot';
import { jsonObject, parseWith } from '../src/http/client.js';
import { list, text } from '../src/http/lenient.js';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { count, oneLine } from '../src/lookup/wording.js';
import { hostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const BROWSE = 'https://threatfox.abuse.ch/browse.php?search=ioc%3A';

/** An IOC: only its family is read ("Unknown" when absent or null, `""` kept); the rest is ignored. */
const IocSchema = jsonObject({
  malware_printable: v.nullish(v.string()),
});

/**
 * Nothing is needed but a JSON object. `query_status` is read when present; `data` is the list of
 * IOCs (absent, null or {} → none; one IOC object → a list of it; null items skipped), or a
 * sentence ("Your search did not yield any results"), read by `iocsOf`.
 */
const AnswerSchema = jsonObject({
  query_status: text(),
  data: v.optional(v.unknown()),
});

const IocsSchema = list(IocSchema);

export interface ThreatFoxResult {
  /** Number of ThreatFox IOCs matching the term. */
  count: number;
  /** Their distinct malware families, in order of first appearance. */
  malware_printable: string[];
  /** The same search on ThreatFox's web site. */
  link: string;
}

/** What ThreatFox is asked about: an IP as is, a domain's or URL's host; null when none. */
export function searchTerm(observable: Observable): string | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
      return observable.value;
    case 'FQDN':
    case 'URL':
      return hostOf(observable);
    default:
      return null;
  }
}

export async function threatFoxLookup(observable: Observable, ctx: EngineContext): Promise<ThreatFoxResult | null> {
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key.trim() : '';
  return search(observable, ctx, key);
}

/**
 * The older catalog's lookup (engines.md 6.4): the same search without any `Auth-Key` header.
 * That variant has no key setting, so a stray `api_key` in its configuration is not sent.
 */
export function threatFoxKeylessLookup(observable: Observable, ctx: EngineContext): Promise<ThreatFoxResult | null> {
  return search(observable, ctx, '');
}

/** `search_ioc` for the observable's term; the `Auth-Key` header only with a key. */
async function search(observable: Observable, ctx: EngineContext, key: string): Promise<ThreatFoxResult | null> {
  const term = searchTerm(observable);
  if (!term) return null;
  const answer = await ctx.http.json(String(ctx.settings.base_url), AnswerSchema, {
    json: { query: 'search_ioc', search_term: term },
    headers: key ? { 'auth-key': key } : {},
  });
  const status = answer.query_status;
  if (status !== null && status.trim() !== '' && status !== 'ok' && status !== 'no_result') {
    const detail = typeof answer.data === 'string' && answer.data.trim() ? ` (${answer.data})` : '';
    throw new EngineError(ctx.http.redact(`ThreatFox: ${oneLine(`${status}${detail}`)}`));
  }
  // A sentence in `data` ("Your search did not yield any results") lists no IOC.
  const iocs = status === 'no_result' || typeof answer.data === 'string' ? [] : parseWith(IocsSchema, answer.data, 'data');
  return {
    count: iocs.length,
    malware_printable: [...new Set(iocs.map((ioc) => ioc.malware_printable ?? 'Unknown'))],
    link: BROWSE + encodeURIComponent(term),
  };
}

/** Family names for people: one sent empty is "unnamed family". */
function shownFamilies(families: readonly unknown[]): string[] {
  return families.map((family) => (typeof family === 'string' && family.trim() === '' ? 'unnamed family' : String(family)));
}

/** `2 IOCs: Cobalt Strike, Emotet`; `no IOC`. */
function summary(result: ThreatFoxResult): string {
  if (result.count === 0) return 'no IOC';
  return `${count(result.count, 'IOC')}: ${shownFamilies(result.malware_printable).join(', ')}`;
}

/**
 * Rule: any ThreatFox IOC for the term -> malicious (abuse.ch lists vetted IOCs); none -> clean
 * ("not listed"). null only comes for an observable ThreatFox cannot be asked about: no evidence.
 */
export function threatFoxEvidence(result: ThreatFoxResult | null): Evidence | undefined {
  if (!result || typeof result.count !== 'number') return undefined;
  if (result.count === 0) return { level: 'clean', reason: 'not listed' };
  const families = shownFamilies(result.malware_printable ?? []).join(', ');
  return { level: 'malicious', reason: `${count(result.count, 'IOC')}${families ? `: ${families}` : ''}` };
}

/** The card: how many IOCs, their malware families, the search on ThreatFox's site. */
export function threatFoxDetails(result: ThreatFoxResult): DetailField[] {
  return fields(
    field('IOCs', result.count),
    field('Malware families', shownFamilies(result.malware_printable)),
    sourceLink('Open in ThreatFox', result.link),
  );
}

export default defineEngine<ThreatFoxResult>({
  id: 'provider_22',
  service: 'threatfox',
  label: 'ThreatFox',
  description: 'Malware families abuse.ch ThreatFox associates with an IP, a domain or a URL\'s host, and how many IOCs',
  tags: ['IP', 'domain', 'URL'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['THREATFOX'] }],
  defaults: {
    timeout_ms: 10000,
    base_url: 'https://threatfox-api.abuse.ch/api/v1/',
    // abuse.ch issues Auth-Keys for free and publishes no fixed request rate, only a fair-use
    // policy (threatfox.abuse.ch/api, abuse.ch terms of use): one lookup per second on average
    // stays well within it. Operators with an agreement can raise it.
    rate_limit: 60,
    rate_window_ms: 60_000,
  },
  summary,
  evidence: threatFoxEvidence,
  details: threatFoxDetails,
  run: threatFoxLookup,
  variants: {
    // engines.md 6.4: key-less, no Auth-Key header (abuse.ch has since started refusing such calls).
    older: {
      description: 'Malware families abuse.ch ThreatFox associates with an IP, a domain or a URL\'s host, and how many IOCs (free, no key)',
      tags: ['IP', 'domain', 'URL', 'free_no_key'],
      credentials: [],
      run: threatFoxKeylessLookup,
    },
  },
});
