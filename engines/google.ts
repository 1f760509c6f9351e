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
 * - Nothing in Google's answer is needed but its being a JSON object (issue 26): `items` left out,
 *   null or `{}` is no hit, one item in place of a list is read as a list of it, a null item is
 *   dropped; an item's title, snippet or link left out, null or "" is ''. Without
 *   `searchInformation.totalResults` (or with one that is no number), `total` is the number of
 *   hits on the page (the reference failed on `int(None)`).
 *
 * The older catalog (engines.md 6.2.a, `variants.older`) scrapes Google's basic-HTML results page
 * instead, without any key: `GET {search_url}/search?q="<value>"&num=7&hl=en&start=0&safe=active&gl=US`
 * as a text-mode browser, with the consent cookies; every `div.ezO2md` is a hit. Result
 * `{results: [...up to 5]}`, no `total` key (see `scrapeSearchLookup`). It caches apart from the
 * main variant (the catalog gives it `cacheScope: 'older'`).
 */
import { createRequire } from 'node:module';
import type * as cheerio from 'cheerio';
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, EngineError, type HttpResponse } from '../src/engine/contract.js';
import { jsonObject } from '../src/http/client.js';
import { list, text } from '../src/http/lenient.js';
import { googleJson, googleRequest } from '../src/http/google.js';
import { count, oneLine } from '../src/lookup/wording.js';
import type { Observable, ObservableType } from '../src/observables/types.js';
import { plainText } from '../src/scrape/ioc-one.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

// ---------------------------------------------------------------------------------------------
// The search engine.
// ---------------------------------------------------------------------------------------------

/**
 * One result page of the Custom Search JSON API (only what the result uses is typed). Nothing is
 * needed but a JSON object: every part is read when present (no `items`: no hit; no estimate:
 * the hits on the page).
 */
const SearchSchema = jsonObject({
  searchInformation: v.nullish(v.looseObject({
    // A decimal string ("1240"); accepted as a number too.
    totalResults: v.nullish(v.union([v.string(), v.number()])),
  })),
  items: list(v.looseObject({
    title: text(),
    link: text(),
    snippet: text(),
  })),
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

/** The older catalog's scraped result (engines.md 6.2.a): at most 5 hits, no `total` key. */
export interface ScrapedSearchResult {
  results: SearchHit[];
}

/** What either variant returns. */
export type GoogleResult = SearchEngineResult | ScrapedSearchResult;

/** The lookup: an exact-phrase search for the observable. No hits is `{results: [], total: 0}`. */
export async function searchEngineLookup(observable: Observable, ctx: EngineContext): Promise<SearchEngineResult | null> {
  const response = await googleRequest(ctx, String(ctx.settings.base_url), {
    key: String(ctx.settings.api_key ?? ''),
    cx: String(ctx.settings.cx ?? ''),
    q: `"${observable.value}"`,
  });
  const page = googleJson(ctx, response.text(), SearchSchema);
  const results = page.items.map((item) => ({
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

/**
 * `1,240 results · Threat report – example.com` (Google's estimate, main catalog) /
 * `3 hits · Threat report` (the scraped hits, older catalog) / `no results`.
 */
export function searchEngineSummary(result: GoogleResult): string {
  const first = result.results[0];
  const title = first ? oneLine(first.title || first.url) : '';
  if (!('total' in result)) return title ? `${count(result.results.length, 'hit')} · ${title}` : 'no results';
  if (result.results.length === 0 && result.total === 0) return 'no results';
  const total = `${result.total.toLocaleString('en-US')} result${result.total === 1 ? '' : 's'}`;
  return title ? `${total} · ${title}` : total;
}

/** How many pages of the first result page the card lists. */
const CARD_HITS = 5;

/**
 * The card: Google's estimate (main catalog only), the first pages found (title linked to the
 * page, http(s) links only), then the same exact-phrase search on google.com (no key, no cx in it).
 */
export function searchEngineDetails(result: GoogleResult, target: string): DetailField[] {
  const hits = result.results.slice(0, CARD_HITS);
  return fields(
    'total' in result ? field('Results', result.total) : null,
    ...hits.map((hit, i) => field(`Result ${i + 1}`, oneLine(hit.title || hit.url), hit.url)),
    result.results.length > CARD_HITS ? field('More on this page', result.results.length - CARD_HITS) : null,
    sourceLink('Search on Google', `https://www.google.com/search?q=${encodeURIComponent(`"${target}"`)}`),
  );
}

// ---------------------------------------------------------------------------------------------
// The older catalog: Google's results page, scraped without a key (engines.md 6.2.a).
// ---------------------------------------------------------------------------------------------

/**
 * A text-mode browser, as the reference's `googlesearch` library sends (Lynx style): Google
 * serves such clients the basic-HTML page whose `div.ezO2md` blocks are parsed here.
 */
export const LYNX_USER_AGENT = 'Lynx/2.9.2 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/3.0.13';

/** The consent-bypass cookies of engines.md 6.2.a. */
export const CONSENT_COOKIES = 'CONSENT=PENDING+987; SOCS=CAESHAgBEhIaAB';

/** Hits kept (the reference's `num_results=5`). */
export const SCRAPE_MAX_HITS = 5;

/** Result pages fetched at most: the first, then `start` += 10 while hits are missing. */
export const SCRAPE_MAX_PAGES = 3;

/** Cap on each page request (the reference's 5 s timeout), within the call's deadline. */
const PAGE_TIMEOUT_MS = 5000;

/** A follow-up page is not started with less time than this left (its hits are a bonus). */
const FOLLOW_UP_MIN_MS = 1000;

/** engines.md 6.2.a: the reference's scraping took no e-mail address. */
const SCRAPE_TYPES: readonly ObservableType[] = ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION'];

/** A hit block of the basic-HTML results page. */
const HIT = 'div.ezO2md';
/** Elements whose text is not visible text. */
const INVISIBLE = 'script, style, noscript, template';

/** The results page for `value`, page `start` (0, 10, 20): `{search_url}/search?q="<value>"&...`. */
export function scrapeSearchUrl(searchUrl: string, value: string, start = 0): URL {
  const url = new URL(`${searchUrl.replace(/\/+$/, '')}/search`);
  for (const [name, param] of Object.entries({ q: `"${value}"`, num: '7', hl: 'en', start: String(start), safe: 'active', gl: 'US' })) {
    url.searchParams.set(name, param);
  }
  return url;
}

/**
 * The older catalog's lookup: the hits of Google's results page for the exact phrase, at most
 * five, fetching the next page (`start` += 10, at most SCRAPE_MAX_PAGES pages) while fewer than
 * five were found and the last page brought new ones. No hit is `{results: []}`.
 *
 * Better than the reference (engines.md 8 items 3 and 4): a 429 (Google's "unusual traffic"
 * block), an HTTP error, a consent or captcha page, or an answer that is not HTML is a one-line
 * error instead of `null`; 429/5xx are retried by the shared client. A follow-up page that fails
 * only ends the search: the hits already found are returned. As the reference, any other page
 * without hits is no hit (issue 26: it used to be refused when it held no search box).
 */
export async function scrapeSearchLookup(observable: Observable, ctx: EngineContext): Promise<ScrapedSearchResult> {
  const searchUrl = String(ctx.settings.search_url ?? OLDER_DEFAULTS.search_url);
  const headers = {
    'user-agent': String(ctx.settings.user_agent ?? LYNX_USER_AGENT),
    accept: '*/*',
    cookie: CONSENT_COOKIES,
  };
  const results: SearchHit[] = [];
  const seen = new Set<string>();
  for (let page = 0; page < SCRAPE_MAX_PAGES && results.length < SCRAPE_MAX_HITS; page++) {
    const url = scrapeSearchUrl(searchUrl, observable.value, page * 10);
    let hits: SearchHit[];
    if (page === 0) {
      hits = parseSearchPage(checkedHtml(await ctx.http.request(url, { headers, timeoutMs: PAGE_TIMEOUT_MS })));
    } else {
      const left = ctx.deadline - Date.now() - 250;
      if (left < FOLLOW_UP_MIN_MS) break;
      try {
        hits = parseSearchPage(checkedHtml(await ctx.http.request(url, { headers, timeoutMs: Math.min(PAGE_TIMEOUT_MS, left), retries: 0 })));
      } catch {
        break; // the first page's hits stand; a refused or broken follow-up page adds none
      }
    }
    let fresh = 0;
    for (const hit of hits) {
      if (seen.has(hit.url)) continue;
      seen.add(hit.url);
      fresh++;
      if (results.length < SCRAPE_MAX_HITS) results.push(hit);
    }
    if (fresh === 0) break; // the page brought nothing new: the next one would not either
  }
  return { results };
}

/** The body of an HTML answer; anything else (JSON, an image...) is not a results page. */
function checkedHtml(response: HttpResponse): string {
  const type = response.headers['content-type'];
  if (type !== undefined && !/html/i.test(type)) {
    throw new EngineError(`Google answered with ${type.split(';')[0]!.trim()}, not a results page`);
  }
  return response.text();
}

/**
 * cheerio is loaded on the first page parsed, not at start-up (every `oas` command loads every
 * engine module).
 */
let cheerioModule: typeof cheerio | undefined;
function loadHtml(html: string): cheerio.CheerioAPI {
  cheerioModule ??= createRequire(import.meta.url)('cheerio') as typeof cheerio;
  return cheerioModule.load(html);
}

/**
 * The hits of a basic-HTML results page, in page order: every `div.ezO2md` with a usable link
 * and a title (`span.CVA68e` in the link); the description is `span.FrIlee`'s text, '' without
 * one. Blocks without a usable http(s) link (ads, image strips, "related searches") or without a
 * title are skipped. Text is plain text (entities decoded, whitespace collapsed), never HTML.
 *
 * Throws an EngineError for a page that is plainly not a results page: Google's consent page or
 * its "unusual traffic" captcha. Any other page without hits gives [] (issue 26, as the
 * reference), whatever else it holds or lacks (a search box, "did not match any documents").
 */
export function parseSearchPage(html: string): SearchHit[] {
  const $ = loadHtml(html);
  $(INVISIBLE).remove();
  const blocks = $(HIT);
  if (blocks.length === 0) {
    refuseNonResultsPage($);
    return [];
  }
  const hits: SearchHit[] = [];
  blocks.each((_, element) => {
    const block = $(element);
    const link = block.find('a[href]').first();
    const url = hitUrl(link.attr('href'));
    const title = plainText(link.find('span.CVA68e').first().text());
    if (!url || !title) return;
    hits.push({ title, description: plainText(block.find('span.FrIlee').first().text()), url });
  });
  if (hits.length === 0) refuseNonResultsPage($);
  return hits;
}

/** Throws when the page is a consent page or a captcha. */
function refuseNonResultsPage($: cheerio.CheerioAPI): void {
  const title = plainText($('title').first().text());
  const text = plainText($('body').text());
  if ($('form[action*="consent.google"]').length > 0 || /^before you continue/i.test(title) || /before you continue to google/i.test(text)) {
    throw new EngineError('Google answered with its consent page instead of search results');
  }
  if ($('#captcha-form, .g-recaptcha, [data-sitekey], form[action*="/sorry/"]').length > 0 || /unusual traffic/i.test(text)) {
    throw new EngineError('Google answered with a captcha ("unusual traffic") page instead of search results');
  }
}

/**
 * The page a hit links to: `/url?q=<target>&sa=U&ved=...` with the prefix removed, cut at the
 * first `&`, percent-decoded (engines.md 6.2.a); a direct absolute link as it is. Only http(s)
 * addresses are kept: Google-relative links (`/search?...`, `/aclk?...` ads) and anything else
 * (a `javascript:` link) are not hits.
 */
export function hitUrl(href: string | undefined): string | undefined {
  if (href === undefined) return undefined;
  let target = href.trim();
  const prefix = /^(?:https?:\/\/[^/]*\.google\.[a-z.]+)?\/url\?q=/i.exec(target);
  if (prefix) {
    target = target.slice(prefix[0].length).split('&')[0]!;
    try {
      target = decodeURIComponent(target);
    } catch {
      return undefined;
    }
  }
  if (!/^https?:\/\//i.test(target)) return undefined;
  try {
    const url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? target : undefined;
  } catch {
    return undefined;
  }
}

/** Settings of both variants (the main one's `base_url` is the Custom Search endpoint). */
const settingsSchema = v.looseObject({
  cx: v.optional(v.string('expected a string (the Programmable Search engine ID)')),
  /** Older catalog: Google's web site, scraped (`{search_url}/search`). */
  search_url: v.optional(v.pipe(v.string('expected a string'), v.url('expected a URL'))),
  /** Older catalog: the User-Agent of the scraping requests. */
  user_agent: v.optional(v.pipe(v.string('expected a string'), v.nonEmpty('expected a non-empty string'))),
});

const OLDER_DEFAULTS = {
  // Up to SCRAPE_MAX_PAGES pages of 5 s each (the reference's per-request timeout).
  timeout_ms: 15_000,
  search_url: 'https://www.google.com',
  user_agent: LYNX_USER_AGENT,
  // Google blocks clients that search fast: a few at a time.
  concurrency: 2,
};

export default defineEngine<GoogleResult>({
  id: 'search_engine',
  service: 'google',
  label: 'Google',
  description: 'Web pages mentioning the observable (exact-phrase search), from a Google Programmable Search engine through the Custom Search JSON API',
  tags: ['domain', 'URL', 'IP', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION'],
  disclosure: 'third_party',
  touchesTarget: false,
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
  settingsSchema,
  summary: searchEngineSummary,
  details: searchEngineDetails,
  run: searchEngineLookup,
  variants: {
    older: {
      description: 'Web pages mentioning the observable (exact-phrase search), scraped from Google\'s search results page without an API key',
      tags: ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping'],
      types: SCRAPE_TYPES,
      credentials: [],
      defaults: OLDER_DEFAULTS,
      settingsSchema,
      run: scrapeSearchLookup,
    },
  },
});
