/**
 * search_engine (google) — web pages that mention the observable, from Google's Programmable
 * Search (Custom Search JSON API, engines.md 5.9): `GET {base_url}?key=<api_key>&cx=<cx>&q="<value>"`
 * (an exact-phrase search). The result is the reference's `{results: [{title, description, url}],
 * total}`; no hits is `{results: [], total: 0}`.
 *
 * Both the API key and the search engine id (cx) are credentials: they travel only as the query
 * parameters Google asks for and never appear in a result or an error (the shared client masks
 * them; Google's own error texts are passed through `ctx.http.redact`).
 *
 * Better than the reference:
 * - Bug fixed (engines.md 5.9, section 8 item 3): an API error (HTTP >= 400, or a JSON body with
 *   `error`, e.g. the 429 "Quota exceeded" answer) is reported as an error with Google's reason,
 *   instead of a fake hit titled "API Error" that the analyst could take for a search result.
 * - No 0.5 s sleep before every call: the runner enforces the quota (`rate_limit`), and 429/5xx
 *   are retried honouring Retry-After.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { googleJson, googleRequest } from '../src/http/google.js';
import { oneLine } from '../src/lookup/wording.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/view/fields.js';

// ---------------------------------------------------------------------------------------------
// The search engine.
// ---------------------------------------------------------------------------------------------

/** One result page of the Custom Search JSON API (only what the result uses is typed). */
const SearchSchema = v.looseObject({
  kind: v.optional(v.string()),
  searchInformation: v.nullish(v.looseObject({
    // A decimal string ("1240"); accepted as a number too.
    totalResults: v.nullish(v.union([v.string(), v.number()])),
  })),
  items: v.nullish(v.array(v.looseObject({
    title: v.nullish(v.string()),
    link: v.nullish(v.string()),
    snippet: v.nullish(v.string()),
  }))),
});

export interface SearchHit {
  title: string;
  /** Google's snippet of the page. */
  description: string;
  url: string;
}

export interface SearchEngineResult {
  /** The first page of results (at most 10). */
  results: SearchHit[];
  /** Google's estimate of the number of matching pages. */
  total: number;
}

/** The lookup: an exact-phrase search for the observable. No hits is `{results: [], total: 0}`. */
export async function searchEngineLookup(observable: Observable, ctx: EngineContext): Promise<SearchEngineResult | null> {
  const response = await googleRequest(ctx, String(ctx.settings.base_url), {
    key: String(ctx.settings.api_key ?? ''),
    cx: String(ctx.settings.cx ?? ''),
    q: `"${observable.value}"`,
  });
  const page = googleJson(ctx, response.text(), SearchSchema);
  const results = (page.items ?? []).map((item) => ({
    title: item.title ?? '',
    description: item.snippet ?? '',
    url: item.link ?? '',
  }));
  return { results, total: totalOf(page.searchInformation?.totalResults, results.length) };
}

/** `int(totalResults)`; an absent or unreadable estimate falls back to the hits on the page. */
function totalOf(value: string | number | null | undefined, hits: number): number {
  const total = typeof value === 'number' ? value : Number.parseInt(value ?? '', 10);
  return Number.isFinite(total) && total >= 0 ? Math.trunc(total) : hits;
}

/** `1,240 results · Threat report – example.com` / `no results`. */
export function searchEngineSummary(result: SearchEngineResult): string {
  if (result.results.length === 0 && result.total === 0) return 'no results';
  const count = `${result.total.toLocaleString('en-US')} result${result.total === 1 ? '' : 's'}`;
  const first = result.results[0];
  const title = first ? oneLine(first.title || first.url) : '';
  return title ? `${count} · ${title}` : count;
}

/** How many pages of the first result page the card lists. */
const CARD_HITS = 5;

/**
 * The card: Google's estimate, the first pages found (title linked to the page), then the same
 * exact-phrase search on google.com (no key, no cx in it).
 */
export function searchEngineDetails(result: SearchEngineResult, target: string): DetailField[] {
  const hits = result.results.slice(0, CARD_HITS);
  return fields(
    field('Results', result.total),
    ...hits.map((hit, i) => field(`Result ${i + 1}`, oneLine(hit.title || hit.url), hit.url)),
    result.results.length > CARD_HITS ? field('More on this page', result.results.length - CARD_HITS) : null,
    sourceLink('Search on Google', `https://www.google.com/search?q=${encodeURIComponent(`"${target}"`)}`),
  );
}

export default defineEngine<SearchEngineResult>({
  id: 'search_engine',
  service: 'google',
  label: 'Google',
  description: 'Web pages mentioning the observable (exact-phrase search), from a Google Programmable Search engine through the Custom Search JSON API',
  tags: ['domain', 'URL', 'IP', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email'],
  credentials: [
    { setting: 'api_key', label: 'API key', env: ['GOOGLE_CSE_KEY'] },
    { setting: 'cx', label: 'search engine ID (cx)', env: ['GOOGLE_CSE_CX'] },
  ],
  defaults: {
    timeout_ms: 10_000,
    base_url: 'https://www.googleapis.com/customsearch/v1',
    // Custom Search JSON API free tier: 100 search queries per day (Google's published quota;
    // more is billed per 1000 queries, up to 10k/day — raise rate_limit if billing is enabled).
    rate_limit: 100,
    rate_window_ms: 86_400_000,
  },
  settingsSchema: v.looseObject({
    cx: v.optional(v.string('expected a string (the Programmable Search engine ID)')),
  }),
  summary: searchEngineSummary,
  details: searchEngineDetails,
  run: searchEngineLookup,
});
