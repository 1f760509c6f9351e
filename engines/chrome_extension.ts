/**
 * chrome_extension — the name of a Chrome / Edge extension from its id (engines.md 9.5), scraped
 * from the stores' public pages, no key:
 * 1. the Chrome Web Store, `GET {base_url}/detail/<id>` (the store redirects to
 *    `/detail/<slug>/<id>`): the name is the text of the page's first `<h1>`;
 * 2. only when the Chrome Web Store gave no name: Edge Add-ons,
 *    `GET {edge_base_url}/addons/detail/<id>`: the name is the page's `<title>` without the
 *    store's ` - Microsoft Edge Addons` (or ` - Microsoft Edge`) suffix.
 *
 * Result as the reference's, exactly `{name, url}`, `url` being the store page requested (without
 * the slug the store redirects to). Listed by neither store: `null`.
 *
 * Only the name is needed: a page holding nothing else (no `<head>`, no canonical address, no
 * content type, a bare `<title>` on Edge without the store's suffix) is read as the reference reads
 * it, and an empty page is "no name there", as the reference (issue 26).
 *
 * In the reference this is no selectable engine: it runs by itself for every CHROME_EXTENSION
 * observable and fills the result key `extension`. Here it is an engine like the others, run when
 * named (`chrome_extension`, never by default); its result is under the name the caller used.
 *
 * Differences from the reference:
 * - Quirk fixed (engines.md 9.5.2): the Edge name was cut at its first hyphen
 *   (`Auto-Refresh Plus - Microsoft Edge Addons` gave `Auto`); here only the store's suffix goes,
 *   ` - Microsoft Edge Addons` / `Add-ons` or ` - Microsoft Edge` (issue 32: `uBlock Origin -
 *   Microsoft Edge` is `uBlock Origin`, as the reference's cut gives it).
 * - Quirk fixed (9.5.2): any page with an `<h1>` (Chrome) or a `<title>` (Edge) was taken for the
 *   extension's page. Here Edge's generic page for an unknown id (title `Microsoft Edge Addons`
 *   alone) and the Chrome Web Store's own name are no extension names, a page whose canonical
 *   address (`<link rel="canonical">` / `og:url`) is not the extension's is not its page, and
 *   Google's consent or "unusual traffic" pages are failures, not names.
 * - Errors are errors, not `null` (engines.md 8 item 3): `null` means that both stores answered
 *   and neither lists the id (HTTP 404 or a page without the name). When a store could not be
 *   asked (HTTP error, 429 or 5xx, timeout, network error, a page that is not HTML, a consent or
 *   captcha page) and the other did not give the name, the engine fails with the reason(s).
 * - Each store gets its own time: the Chrome Web Store at most half of `timeout_ms` (one try),
 *   so that Edge Add-ons is always asked (the reference: 5 s each, worst case 10 s). The requests
 *   go through the shared client (proxy, TLS settings, redirects, size cap); both addresses are
 *   settings. The name is plain text (whitespace collapsed, control and bidirectional-override
 *   characters removed): an extension's author chooses it.
 */
import type * as cheerio from 'cheerio';
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, EngineError, type HttpResponse } from '../src/engine/contract.js';
import type { Observable } from '../src/observables/types.js';
import { loadHtml } from '../src/scrape/html.js';
import { plainText } from '../src/scrape/ioc-one.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

export interface ChromeExtensionResult {
  /** The extension's name as its store page shows it. */
  name: string;
  /** The store page requested: `<base_url>/detail/<id>` or `<edge_base_url>/addons/detail/<id>`. */
  url: string;
}

/** An extension id as extracted (engines.md 9.5.1): 32 lowercase letters. */
const EXTENSION_ID = /^[a-z]{32}$/;

const CHROME = 'Chrome Web Store';
const EDGE = 'Edge Add-ons';

/**
 * Edge's title suffix: ` - Microsoft Edge Addons`, or ` - Microsoft Edge` alone as some of its pages
 * have it (issue 32); any dash, `Addons` or `Add-ons`.
 */
const EDGE_SUFFIX = /\s*[-\u2013\u2014|]\s*Microsoft Edge(?:\s+Add-?ons)?\s*$/i;
/** The stores' own names: the title or heading of a page that is no extension's. */
const STORE_NAMES = /^(?:Chrome Web Store|Microsoft Edge(?:\s+Add-?ons)?)$/i;

/** Elements whose text is not visible text. */
const INVISIBLE = 'script, style, noscript, template';

/** What one store said: the name, not listed, or why it could not be asked. */
type StoreAnswer = { name: string } | { notListed: true } | { failure: string };

/** The Chrome Web Store page of an extension: `<base_url>/detail/<id>`. */
export function chromeStoreUrl(baseUrl: string, id: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/detail/${id}`;
}

/** The Edge Add-ons page of an extension: `<edge_base_url>/addons/detail/<id>`. */
export function edgeStoreUrl(baseUrl: string, id: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/addons/detail/${id}`;
}

/**
 * The lookup: the Chrome Web Store, then Edge Add-ons when Chrome gave no name. `null` when both
 * answered that they do not list the id; an error when one could not be asked and the other gave
 * no name.
 */
export async function chromeExtensionLookup(observable: Observable, ctx: EngineContext): Promise<ChromeExtensionResult | null> {
  const id = observable.value;
  if (observable.type !== 'CHROME_EXTENSION' || !EXTENSION_ID.test(id)) return null;

  const chromeUrl = chromeStoreUrl(String(ctx.settings.base_url), id);
  // Half the call's time at most, one try: Edge Add-ons must still be asked after a hung Chrome.
  const chrome = await ask(ctx, CHROME, chromeUrl, id, chromeName, { retries: 0, timeoutMs: Math.max(1, Math.floor(ctx.settings.timeout_ms / 2)) });
  if ('name' in chrome) return { name: chrome.name, url: chromeUrl };

  const edgeUrl = edgeStoreUrl(String(ctx.settings.edge_base_url), id);
  const edge = await ask(ctx, EDGE, edgeUrl, id, edgeName, {});
  if ('name' in edge) return { name: edge.name, url: edgeUrl };

  const failures = [chrome, edge].flatMap((answer, i) => ('failure' in answer ? [`${i === 0 ? CHROME : EDGE}: ${answer.failure}`] : []));
  if (failures.length === 0) return null;
  const notListed = 'notListed' in chrome ? ` (not listed on the ${CHROME})` : 'notListed' in edge ? ` (not listed on ${EDGE})` : '';
  throw new EngineError(`${failures.join('; ')}${notListed}`);
}

/** One store page: its name, "not listed" (404, no name on the page), or the failure. */
async function ask(
  ctx: EngineContext,
  store: string,
  url: string,
  id: string,
  nameOf: ($: cheerio.CheerioAPI) => string | null,
  options: { retries?: number; timeoutMs?: number },
): Promise<StoreAnswer> {
  let response: HttpResponse;
  try {
    response = await ctx.http.request(url, {
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', 'accept-language': 'en-US,en;q=0.8' },
      acceptStatus: [404, 410],
      ...options,
    });
  } catch (error) {
    return { failure: (error as Error).message };
  }
  if (response.status === 404 || response.status === 410) return { notListed: true };
  const type = response.headers['content-type'];
  if (type !== undefined && !/html/i.test(type)) return { failure: `answered with ${type.split(';')[0]!.trim()}, not an HTML page` };
  const $ = loadHtml(response.text());
  $(INVISIBLE).remove();
  const refusal = refusalOf($);
  if (refusal) return { failure: refusal };
  if (!isPageOf($, id)) return { notListed: true };
  const name = nameOf($);
  return name ? { name } : { notListed: true };
}

/** Chrome Web Store: the text of the first `<h1>` (engines.md 9.5.2), unless it is the store's own name. */
export function chromeName($: cheerio.CheerioAPI): string | null {
  const name = plainText($('h1').first().text());
  return name && !STORE_NAMES.test(name) ? name : null;
}

/**
 * Edge Add-ons: the `<title>` without the store's suffix (`uBlock Origin - Microsoft Edge Addons`
 * and `uBlock Origin - Microsoft Edge` give `uBlock Origin`, a hyphen in the name is kept); the
 * bare store title (`Microsoft Edge Addons`, `Microsoft Edge`) is no name.
 */
export function edgeName($: cheerio.CheerioAPI): string | null {
  const name = plainText($('title').first().text()).replace(EDGE_SUFFIX, '').trim();
  return name && !STORE_NAMES.test(name) ? name : null;
}

/** Google's consent page or its "unusual traffic" captcha, instead of a store page. */
function refusalOf($: cheerio.CheerioAPI): string | null {
  const title = plainText($('title').first().text());
  const text = plainText($('body').text());
  if ($('form[action*="consent.google"]').length > 0 || /^before you continue/i.test(title) || /before you continue to google/i.test(text)) {
    return 'answered with Google\'s consent page instead of the store page';
  }
  if ($('#captcha-form, .g-recaptcha, [data-sitekey], form[action*="/sorry/"]').length > 0 || /unusual traffic/i.test(text)) {
    return 'answered with a captcha ("unusual traffic") page instead of the store page';
  }
  return null;
}

/**
 * False when the page says it is another page: its canonical address (`<link rel="canonical">` or
 * `og:url`) does not end with the id, as when a store sends an unknown id to its home page. A page
 * that declares no address is given the benefit of the doubt, as the reference gave every page.
 */
function isPageOf($: cheerio.CheerioAPI, id: string): boolean {
  const declared = [$('link[rel="canonical"]').first().attr('href'), $('meta[property="og:url"]').first().attr('content')]
    .map((value) => value?.trim())
    .filter((value): value is string => Boolean(value));
  return declared.every((address) => {
    try {
      return new URL(address, 'https://store.invalid/').pathname.replace(/\/+$/, '').split('/').pop() === id;
    } catch {
      return true;
    }
  });
}

/** Which store a result comes from, from its URL. */
function storeOf(result: ChromeExtensionResult): string {
  return /\/addons\/detail\/[^/]+$/.test(result.url) ? EDGE : CHROME;
}

/** `uBlock Origin (Chrome Web Store)` / `uBlock Origin (Edge Add-ons)`. */
export function chromeExtensionSummary(result: ChromeExtensionResult): string {
  return `${result.name} (${storeOf(result)})`;
}

/** The card: the name, linked to its store page, then the store page. */
export function chromeExtensionDetails(result: ChromeExtensionResult): DetailField[] {
  const store = storeOf(result);
  return fields(
    field('Name', result.name, result.url),
    field('Store', store),
    sourceLink(store === EDGE ? 'Open in Edge Add-ons' : 'Open in the Chrome Web Store', result.url),
  );
}

const storeUrl = v.optional(v.pipe(
  v.string('expected an http:// or https:// URL'),
  v.check((s) => /^https?:\/\/[^/]/i.test(s) && URL.canParse(s), 'expected an http:// or https:// URL'),
));

export default defineEngine<ChromeExtensionResult>({
  id: 'chrome_extension',
  service: 'chrome_extension',
  label: 'Chrome / Edge extension',
  description: 'Name of a Chrome or Edge extension from its id, scraped from the Chrome Web Store, else from Edge Add-ons (free, no key)',
  catalogs: [],
  tags: ['free_no_key', 'scraping'],
  types: ['CHROME_EXTENSION'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: {
    // Two pages, one after the other: 5 s each, as the reference.
    timeout_ms: 10_000,
    base_url: 'https://chromewebstore.google.com',
    edge_base_url: 'https://microsoftedge.microsoft.com',
    // Two public web stores, scraped: a few pages at a time.
    concurrency: 4,
  },
  settingsSchema: v.looseObject({ edge_base_url: storeUrl }),
  summary: chromeExtensionSummary,
  details: chromeExtensionDetails,
  run: chromeExtensionLookup,
});
