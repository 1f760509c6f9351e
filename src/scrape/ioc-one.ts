/**
 * ioc.one "deep search", scraped (engines.md 5.13): one request and one parser shared by
 * provider_09 (HTML reports, `/auth/deep_search`) and provider_10 (PDF reports,
 * `/auth/deep_search/pdf`). The two pages differ only in their path and in the margin class of
 * the source button (`m-1` / `mx-1`).
 *
 * The page is parsed with cheerio, never with regular expressions over HTML. Everything scraped
 * is attacker-controlled (report titles come from third-party sites): fields are plain text
 * (`.text()`, whitespace and control characters collapsed), never HTML; script/style contents
 * are dropped before reading text; links are resolved against the page and kept only when they
 * are http(s).
 *
 * Better than the reference:
 * - Bug (engines.md 8, item 22): cards were found by the exact `class` string
 *   `card box-shadow my-1` (order and every utility class mattered) and the source button by the
 *   exact `btn border btn-primary m-1`/`mx-1`. Here they are matched by class tokens
 *   (`div.card.box-shadow`, `a.btn-primary`), in any order, with extra classes allowed.
 * - Bug (item 22): one card missing its header, title or link made the whole engine fail
 *   (→ null). Here an incomplete card is skipped (a missing header is just ''), and the first
 *   `max_results` complete cards are returned; only when no card at all is usable is it an error.
 * - Quirk (5.13): `link` was built with the raw, un-encoded value, so a URL observable carrying
 *   `&` or `#` gave a broken link. Here `link` is the URL actually requested, value encoded.
 * - Every failure reached the caller as `null` (1.9). Here HTTP errors and timeouts propagate from
 *   the shared client, and a page that is recognisably not a results page (a captcha / bot check,
 *   a login wall) or an answer that is not HTML is an EngineError with a one-line reason.
 *
 * As the reference (issue 26): a page without result cards is "no reports" (`results: []`,
 * `count: 0`), whatever else it holds or lacks (search form, count line, alerts, navbar sign-in
 * box). Only positive signs of another page refuse it: a captcha widget or bot-check title, or a
 * password field on a page that has no search box. Cards that are present but none of which has a
 * title and a source link are still an error: that answer cannot be understood.
 */
import type * as cheerio from 'cheerio';
import { loadHtml } from './html.js';
import * as v from 'valibot';
import { EngineError, type DetailField, type EngineContext, type EngineDefinition } from '../engine/contract.js';
import type { Observable, ObservableType } from '../observables/types.js';
import { field, fields, sourceLink as linkField } from '../lookup/fields.js';

export interface IocOneCard {
  /** Card header, e.g. `2024-05-14 · securelist.com` ('' when the card has none). */
  header: string;
  /** Report title, plain text. */
  title: string;
  /** Absolute http(s) link to the report (HTML page or PDF). */
  source: string;
}

/** engines.md 5.13: `results` (≤ max_results cards), the search page `link`, `count` = results.length. */
export interface IocOneResult {
  results: IocOneCard[];
  link: string;
  count: number;
}

export type IocOneVariant = 'html' | 'pdf';

interface VariantSpec {
  /** Path of the search page under base_url. */
  path: string;
  /** Margin class of the source button on this page (the reference's only distinction). */
  sourceClass: string;
  /** For messages: `ioc.one (PDF)`. */
  name: string;
}

export const IOC_ONE_VARIANTS: Readonly<Record<IocOneVariant, VariantSpec>> = {
  html: { path: '/auth/deep_search', sourceClass: 'm-1', name: 'ioc.one (HTML)' },
  pdf: { path: '/auth/deep_search/pdf', sourceClass: 'mx-1', name: 'ioc.one (PDF)' },
};

export const IOC_ONE_DEFAULT_MAX_RESULTS = 5;

/**
 * The reference identifies itself (`User-Agent: cyberbro`); a scraped site is likelier to serve
 * its normal page to a browser, so a current browser's User-Agent is the default (setting
 * `user_agent`).
 */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

/** engines.md 1.8 (no e-mail address). */
export const IOC_ONE_TYPES: readonly ObservableType[] = ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION'];

/** Scraping is slow (the spec warns so): 20 s rather than the reference's 5 s. */
export const IOC_ONE_DEFAULTS: EngineDefinition['defaults'] = {
  timeout_ms: 20000,
  base_url: 'https://ioc.one',
  max_results: IOC_ONE_DEFAULT_MAX_RESULTS,
  user_agent: BROWSER_USER_AGENT,
};

export const iocOneSettingsSchema = v.looseObject({
  max_results: v.optional(v.pipe(v.number('expected a number'), v.integer('expected an integer'), v.minValue(1, 'expected at least 1'), v.maxValue(50, 'expected at most 50'))),
  user_agent: v.optional(v.pipe(v.string('expected a string'), v.nonEmpty('expected a non-empty string'))),
});

/** Longest text kept for a field; a hostile page could otherwise put megabytes in a title. */
const MAX_TEXT = 1000;

/** Elements whose text is not visible text. */
const INVISIBLE = 'script, style, noscript, template';

/** A result card (class tokens, any order: the reference wanted exactly `card box-shadow my-1`). */
const CARD = 'div.card.box-shadow';
/** Markers of a bot check / captcha interstitial (reCAPTCHA, hCaptcha, Cloudflare). */
const CAPTCHA = '.g-recaptcha, .h-captcha, .cf-turnstile, #challenge-form, #cf-challenge-running, [data-sitekey]';

/** The search page URL for a value: `<base_url><path>?search=<value>` (value encoded). */
export function iocOnePageUrl(baseUrl: string, variant: IocOneVariant, value: string): URL {
  const page = new URL(`${baseUrl.replace(/\/+$/, '')}${IOC_ONE_VARIANTS[variant].path}`);
  page.searchParams.set('search', value);
  return page;
}

/** The lookup both engines run. An empty result (count 0) is "no reports"; anything odd throws. */
export async function iocOneSearch(observable: Observable, ctx: EngineContext, variant: IocOneVariant): Promise<IocOneResult> {
  const page = iocOnePageUrl(String(ctx.settings.base_url), variant, observable.value);
  const response = await ctx.http.request(page, {
    headers: {
      'user-agent': String(ctx.settings.user_agent ?? BROWSER_USER_AGENT),
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.8',
    },
  });
  const spec = IOC_ONE_VARIANTS[variant];
  const type = response.headers['content-type'];
  if (type !== undefined && !/html/i.test(type)) {
    throw new EngineError(`${spec.name} answered with ${type.split(';')[0]!.trim()}, not an HTML page`);
  }
  const results = parseIocOnePage(response.text(), page.toString(), variant, maxResults(ctx));
  return { results, link: page.toString(), count: results.length };
}

/**
 * The complete cards of a search page, at most `limit`. A page without cards is an empty result;
 * throws an EngineError when the page is plainly something else (a captcha / bot check, a login
 * wall), or when result cards are there but none has a title and a source link.
 */
export function parseIocOnePage(html: string, pageUrl: string, variant: IocOneVariant, limit = IOC_ONE_DEFAULT_MAX_RESULTS): IocOneCard[] {
  const spec = IOC_ONE_VARIANTS[variant];
  const $ = loadHtml(html);
  $(INVISIBLE).remove();
  const base = documentBase($, pageUrl);

  const cards = $(CARD).filter((_, el) => $(el).find('.card-title, .card-header').length > 0);
  if (cards.length === 0) {
    if ($(CAPTCHA).length > 0 || /just a moment|attention required|captcha|are you a robot/i.test(plainText($('title').text()))) {
      throw new EngineError(`${spec.name} answered with a captcha / bot check instead of search results`);
    }
    // A sign-in box beside the search box (a navbar drop-down) does not make a results page a login wall.
    if ($('input[type="password"]').length > 0 && $('input[name="search"]').length === 0) {
      throw new EngineError(`${spec.name} answered with a login page instead of search results`);
    }
    // No cards: no reports, as the reference (no search form, count line or message is required).
    return [];
  }

  const results: IocOneCard[] = [];
  cards.each((_, el) => {
    if (results.length >= limit) return false;
    const card = $(el);
    const title = plainText(card.find('.card-title').first().text());
    const source = sourceLink((selector) => card.find(selector).first().attr('href'), spec.sourceClass, base);
    // Skipped rather than failing the whole lookup (the reference's bug): nothing to show without both.
    if (!title || !source) return undefined;
    results.push({ header: plainText(card.find('.card-header').first().text()), title, source });
    return undefined;
  });
  if (results.length === 0) {
    throw new EngineError(`${spec.name} result cards have an unexpected layout: none of ${cards.length} has a title and a source link`);
  }
  return results;
}

/** `3 reports, first: <title> (<header>)`; `no reports`. */
/** Longest card header used as a label (headers are scraped text). */
const MAX_LABEL = 60;

/**
 * Card fields: the number of reports, each report (title linked to it, labelled with its card
 * header `date · source`), then the search page on ioc.one.
 */
export function iocOneDetails(result: IocOneResult): DetailField[] {
  return fields(
    field('Reports', result.count),
    ...result.results.slice(0, 5).map((card, i) => field(reportLabel(card.header, i), card.title, card.source)),
    linkField('Open in ioc.one', result.link),
  );
}

function reportLabel(header: string, index: number): string {
  if (!header) return `Report ${index + 1}`;
  return header.length > MAX_LABEL ? `${header.slice(0, MAX_LABEL - 1)}…` : header;
}

export function iocOneSummary(result: IocOneResult): string {
  const first = result.results[0];
  if (!first) return 'no reports';
  const title = first.title.length > 100 ? `${first.title.slice(0, 99)}…` : first.title;
  return `${result.count} report${result.count === 1 ? '' : 's'}, first: ${title}${first.header ? ` (${first.header})` : ''}`;
}

/**
 * The report link of a card: the primary button opening a new tab, preferring the page's own
 * margin class (`m-1` on the HTML page, `mx-1` on the PDF page) as the reference did.
 */
function sourceLink(hrefOf: (selector: string) => string | undefined, marginClass: string, base: URL): string | undefined {
  const href = hrefOf(`a.btn-primary.${marginClass}[target="_blank"][href]`) ?? hrefOf('a.btn-primary[target="_blank"][href]');
  return absoluteHttpUrl(href, base);
}

/** Resolves against the page (or its <base href>); only http(s) links are kept (no javascript:). */
function absoluteHttpUrl(href: string | undefined, base: URL): string | undefined {
  if (href === undefined || href.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(href.trim(), base);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
}

/** The base for relative links: the page URL, or the document's <base href> resolved against it. */
function documentBase($: cheerio.CheerioAPI, pageUrl: string): URL {
  const page = new URL(pageUrl);
  const href = $('base[href]').first().attr('href');
  if (!href) return page;
  try {
    const base = new URL(href, page);
    return base.protocol === 'http:' || base.protocol === 'https:' ? base : page;
  } catch {
    return page;
  }
}

/**
 * Scraped text as one plain line: control characters, bidirectional overrides and zero-width
 * characters (which could disguise text in a terminal) removed, whitespace collapsed, trimmed, capped.
 */
export function plainText(text: string): string {
  const clean = text
    .replace(/[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .trim();
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT - 1)}…` : clean;
}

function maxResults(ctx: EngineContext): number {
  const value = Number(ctx.settings.max_results ?? IOC_ONE_DEFAULT_MAX_RESULTS);
  return Number.isInteger(value) && value > 0 ? value : IOC_ONE_DEFAULT_MAX_RESULTS;
}
