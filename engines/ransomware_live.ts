/**
 * ransomware_live — whether a domain (or a URL's host) was listed as a ransomware victim, from the
 * Ransomware.live Pro API (engines.md 9.2): `GET {base_url}/victims/search?q=<host>` with the
 * Pro key in the `X-API-KEY` header. A keyword search over the victim database: every hit counts,
 * as in the reference (no filtering to the exact domain).
 *
 * Result as the reference's, every key always present: `found`, `count` (victims kept),
 * `victims` (upstream order, each exactly `{post_title, group_name, website, discovered,
 * permalink}`, a value `null` when absent (or null) upstream, as sent otherwise (`""` included),
 * `discovered` passed through unchanged) and
 * `search_url` (the search on the public site; **not** `link`). No hit is
 * `{found: false, count: 0, victims: [], search_url}`, not `null`. The envelope's own `count`,
 * `query` and `client` (an echo of the calling account) are ignored; an item of `victims` that is
 * not an object is skipped.
 *
 * Differences from the reference:
 * - Errors are errors, not `null` (engines.md 8 item 3): a refused key (401/403) is a one-line
 *   `Ransomware.live: authentication failed (...)` with the API's reason and the key masked;
 *   other HTTP errors (404 of a wrong base_url, 429 of the daily quota and 5xx after the client's
 *   retries, 8 item 4), a timeout and a malformed body are reported too.
 * - Quirk fixed: a body that is not an object (a bare list, a string...) or whose `victims` is a
 *   text or a number was read as "no victim"; it is a malformed answer. So is an answer without
 *   `victims` that carries an error message (`detail`, `error` or `message`).
 * - Read when present (issue 26): `victims` sent as one victim object instead of a list is a list
 *   of it (the reference skipped it as "no victim"), and as `{}` or "" is no victim; a victim
 *   field sent as "" stays "", as the reference passed it through (issue 32).
 * - No key, no call (as the reference; the runner refuses before any request, and so does the
 *   lookup when called directly). The key never appears in a result or an error.
 * - The host of a URL comes from the shared WHATWG parser (as HEAD's; an IPv6 literal without
 *   its brackets); a domain is lower-cased without a trailing dot and in punycode, so that the
 *   answer does not depend on how the first caller wrote it (the runner caches domains
 *   case-insensitively).
 * - `base_url` is a setting (default `https://api-pro.ransomware.live`); calls go through the
 *   shared client (proxy, TLS settings) and are paced to the Pro plan's 3000 calls a day.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson, parseWith } from '../src/http/client.js';
import { list } from '../src/http/lenient.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';
import { serverBase } from '../src/http/server-base.js';
import { count, isoDay, oneLine } from '../src/lookup/wording.js';
import { asciiHostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const LABEL = 'Ransomware.live';
/** The search on Ransomware.live's public site. */
const SEARCH_PAGE = 'https://www.ransomware.live/search';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** A victim field: text when present, `""` included (issue 32); absent or null → null. A number or an object is no victim field. */
const text = v.optional(v.nullable(v.string()), null);

/**
 * The envelope of `/victims/search`: an object; `victims` read when present (null, "" or `{}`:
 * none; one victim in place of the list: a list of it). A text or a number there is no list of
 * victims: a malformed answer.
 */
const EnvelopeSchema = jsonObject({
  victims: v.optional(v.pipe(
    v.custom<unknown>((value) => value === null || value === '' || typeof value === 'object', 'Invalid type: Expected Array of victims'),
    list(v.unknown()),
  )),
  detail: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  message: v.optional(v.unknown()),
}, 'Invalid type: Expected Object');

/**
 * The victim fields kept (legacy names of the search endpoint). `published`, `country`,
 * `activity`, `description`, `screenshot`, `infostealer`, `press`... are ignored.
 */
const VictimSchema = v.looseObject({
  post_title: text,
  group_name: text,
  website: text,
  discovered: text,
  permalink: text,
});

export interface RansomwareVictim {
  /** Victim name as the group's leak site posted it. */
  post_title: string | null;
  /** Ransomware group slug (`lockbit3`, `akira`). */
  group_name: string | null;
  /** Victim domain. */
  website: string | null;
  /** When Ransomware.live discovered the post, as the API writes it (`2025-03-14 08:21:45.123456`). */
  discovered: string | null;
  /** `https://www.ransomware.live/id/<...>`. */
  permalink: string | null;
}

export interface RansomwareLiveResult {
  /** At least one victim. */
  found: boolean;
  /** Number of victims. */
  count: number;
  victims: RansomwareVictim[];
  /** `https://www.ransomware.live/search?q=<host>&scope=all`. */
  search_url: string;
}

/**
 * What is searched: a domain lower-cased, without a trailing dot, in punycode; a URL's host
 * (WHATWG parsing); null when there is none.
 */
export function ransomwareLiveQuery(observable: Observable): string | null {
  return observable.type === 'FQDN' || observable.type === 'URL' ? asciiHostOf(observable) : null;
}

export async function ransomwareLiveLookup(observable: Observable, ctx: EngineContext): Promise<RansomwareLiveResult | null> {
  const host = ransomwareLiveQuery(observable);
  if (!host) return null;
  const key = apiKeyOf(ctx);
  const base = serverBase(ctx, LABEL);
  const response = await ctx.http.request(`${base}/victims/search`, {
    query: { q: host },
    headers: { 'x-api-key': key, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 401 || response.status === 403) {
    throw new CredentialsRefusedError(LABEL, refusedError(response, ctx).message);
  }
  if (response.status >= 300) throw refusedError(response, ctx);

  const envelope = parseJson(response.text(), EnvelopeSchema);
  if (envelope.victims === undefined) {
    const reason = [envelope.detail, envelope.error, envelope.message].find((r): r is string => typeof r === 'string' && r.trim() !== '');
    if (reason) throw new EngineError(`${LABEL}: ${oneLine(ctx.http.redact(reason))}`);
  }
  const victims: RansomwareVictim[] = [];
  (envelope.victims ?? []).forEach((item, index) => {
    if (!isRecord(item)) return;
    const { post_title, group_name, website, discovered, permalink } = parseWith(VictimSchema, item, `victims.${index}`);
    victims.push({ post_title, group_name, website, discovered, permalink });
  });
  return {
    found: victims.length > 0,
    count: victims.length,
    victims,
    search_url: `${SEARCH_PAGE}?q=${encodeURIComponent(host)}&scope=all`,
  };
}

/** Distinct non-empty values, in order of first appearance. */
function distinct(values: readonly (string | null)[]): string[] {
  return [...new Set(values.filter((value): value is string => typeof value === 'string' && value.trim() !== ''))];
}

/** `2 victims: Example Corp, Example Shop · groups lockbit3, play`; `no victim listed`. */
export function ransomwareLiveSummary(result: RansomwareLiveResult): string {
  if (!result.found) return 'no victim listed';
  const parts = [count(result.count, 'victim')];
  const names = distinct(result.victims.map((victim) => victim.post_title));
  if (names.length > 0) parts[0] += `: ${names.join(', ')}`;
  const groups = distinct(result.victims.map((victim) => victim.group_name));
  if (groups.length > 0) parts.push(`${groups.length === 1 ? 'group' : 'groups'} ${groups.join(', ')}`);
  return parts.join(' · ');
}

/**
 * What Ransomware.live says about the observable's risk: a domain listed on a ransomware group's
 * leak site is a victim, not an attacker. That is `suspicious` in the sense that matters to an
 * analyst (a compromised organisation: its mail, its files, its credentials may be in criminal
 * hands), and the reason says so. The search is a keyword search, so a hit may be a namesake or a
 * subdomain: the reason names the victims. Not listed judges nothing.
 */
export function ransomwareLiveEvidence(result: RansomwareLiveResult | null): Evidence | undefined {
  const victims = Array.isArray(result?.victims) ? result.victims : [];
  if (!result || result.found !== true || victims.length === 0) return undefined; // not listed: no judgement
  const allNames = distinct(victims.map((victim) => victim.post_title || victim.website));
  const names = allNames.slice(0, 3).map((name) => oneLine(name, 60));
  const groups = distinct(victims.map((victim) => victim.group_name));
  const days = victims.map((victim) => isoDay(victim.discovered)).filter((day): day is string => day !== null).sort();
  const last = days[days.length - 1];
  const by = [groups.length > 0 ? `by ${oneLine(groups.join(', '), 80)}` : null, last ? `latest ${last}` : null].filter(Boolean).join(', ');
  // Listed as a ransomware victim: compromised, not malicious; its data may be exposed.
  return {
    level: 'suspicious',
    reason: `listed as ransomware victim${names.length > 0 ? ` (${names.join(', ')}${allNames.length > names.length ? ', …' : ''})` : ''}${by ? ` ${by}` : ''}: the domain is a victim, not an attacker`,
  };
}

/** `Example Corp — lockbit3, discovered 2025-03-14 (example.com)`. */
function victimLine(victim: RansomwareVictim): string {
  const day = isoDay(victim.discovered);
  const about = [victim.group_name, day ? `discovered ${day}` : null].filter(Boolean).join(', ');
  const name = victim.post_title || victim.website || 'unnamed victim';
  const site = victim.website && victim.website !== victim.post_title ? ` (${victim.website})` : '';
  return `${name}${about ? ` — ${about}` : ''}${site}`;
}

/** The card: whether listed, the groups, one line per victim linking to its page, then the search. */
export function ransomwareLiveDetails(result: RansomwareLiveResult): DetailField[] {
  return fields(
    field('Listed as a victim', result.found),
    field('Victims', result.count),
    field('Groups', distinct(result.victims.map((victim) => victim.group_name))),
    ...result.victims.slice(0, 10).map((victim) => field('Victim', victimLine(victim), victim.permalink)),
    result.count > 10 && field('More victims', result.count - 10),
    sourceLink('Search Ransomware.live', result.search_url),
  );
}

export default defineEngine<RansomwareLiveResult>({
  id: 'ransomware_live',
  service: 'ransomware_live',
  label: 'Ransomware.Live',
  description: 'Whether a domain or a URL\'s host was listed as a ransomware victim, and by which groups, from the Ransomware.live Pro API (paid key required)',
  catalogs: [],
  tags: ['domain', 'URL'],
  types: ['FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'Pro API key', env: ['RANSOMWARE_LIVE_API_KEY'] }],
  defaults: {
    // The reference's timeout for this engine.
    timeout_ms: 10_000,
    base_url: 'https://api-pro.ransomware.live',
    // The Pro plan's 3000 calls a day (the reference's catalog, engines.md 9.2).
    rate_limit: 3000,
    rate_window_ms: 86_400_000,
  },
  summary: ransomwareLiveSummary,
  evidence: ransomwareLiveEvidence,
  details: ransomwareLiveDetails,
  run: ransomwareLiveLookup,
});
