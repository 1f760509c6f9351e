/**
 * An e-mail's HTML body: its links (the `href` of each `<a>` and `<area>`, not the text shown)
 * and the text a reader sees, in document order. Parsed with cheerio (already a dependency), never
 * with a regular expression: its slim build, whose parser is htmlparser2, a tokenizer as forgiving
 * as a browser's (unquoted and unclosed attributes, entities in `href`s, raw-text `<script>` and
 * `<style>`). Not the full build's parse5: what parse5 does more (the standard's tree
 * construction: implicit and misnested tags) changes neither the links nor the text, it reads a
 * 3 MB body three times slower, 80 000 nested `<div>`s twenty times slower (over two minutes),
 * and the full build loads the HTTP client it carries for its `fromURL`. htmlparser2's cost
 * still grows with the square of the nesting depth (seconds for 80 000 nested tags): the time
 * bound of the off-thread reader (src/files/read-off-thread.ts) is what ends a deeper one.
 * cheerio only parses: nothing is fetched (no remote image, no stylesheet), no script runs.
 *
 * A link whose text shown is itself a URL or a domain of another registrable domain than the
 * `href`'s host says so in its place: `link in HTML body (shows "paypal.com", goes to evil.example)`.
 * `javascript:`, `data:` and other links that are not http(s) or mailto are not observables: they
 * are counted in a note. The tree is walked without recursion, in linear time.
 */
import type { CheerioAPI } from 'cheerio/slim';
import { extractObservables, identifyObservable } from '../observables/extract.js';
import { hostOf, registrableDomain, urlHost } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import type { ReaderContext } from './types.js';
import { placeText } from './mail-text.js';

/** The structure of cheerio's (domhandler's) nodes this walk reads. */
interface HtmlNode {
  type: string;
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: HtmlNode[];
}

/** Elements whose text runs on with the text around them (`ev<b>il.com</b>` is `evil.com`). */
const INLINE = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'big', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd', 'mark',
  'q', 's', 'samp', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr',
]);
/** Elements whose content is no text a reader sees. */
const SKIPPED = new Set(['script', 'style', 'template', 'noscript', 'head']);

let cheerio: Promise<{ load: (html: string) => CheerioAPI }> | undefined;

/** Tells `context` the links and the text observables of `html` (`HTML body` is `where`). */
export async function readHtmlBody(html: string, context: ReaderContext, where = 'HTML body'): Promise<void> {
  const { load } = await (cheerio ??= import('cheerio/slim'));
  const $ = load(html);
  const root = $.root()[0] as unknown as HtmlNode;
  // A `<base href>` makes relative links absolute in the clients that honour it (a known way to
  // hide a link's host from a filter that reads `href`s one by one).
  const base = baseUrl(firstBase(root)?.attribs?.href);
  const text: string[] = [];
  const flush = () => {
    if (text.length) context.foundIn(text.join(''), where);
    text.length = 0;
  };
  const otherSchemes = new Map<string, number>();
  /** The links being walked, the innermost last (the parser may nest an `<a>` a browser would not). */
  const open: { node: HtmlNode; shown: string[]; alt: string[] }[] = [];
  type Step = { enter: HtmlNode } | { leave: HtmlNode };
  const stack: Step[] = [{ enter: root }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    if ('leave' in step) {
      const node = step.leave;
      if (isLink(node)) {
        const link = open.pop()!;
        foundLink(node.attribs!.href!, base, link.shown.join(''), link.alt.join(' '), where, context, otherSchemes);
      }
      if (!INLINE.has(node.name!)) text.push('\n');
      continue;
    }
    const node = step.enter;
    if (node.type === 'text') {
      const data = node.data ?? '';
      text.push(data);
      // The innermost link shows it (a browser closes a link that another opens: they never nest).
      open.at(-1)?.shown.push(data);
      continue;
    }
    if (node.type !== 'tag' && node.type !== 'root') continue; // comments, directives, script and style
    if (node.type === 'tag') {
      const name = node.name!;
      if (SKIPPED.has(name)) continue;
      if (name === 'br') {
        text.push('\n');
        open.at(-1)?.shown.push(' ');
        continue;
      }
      if (name === 'img' && node.attribs?.alt) open.at(-1)?.alt.push(node.attribs.alt);
      if (isLink(node)) {
        // What came before the link is told first: the observables keep the document's order.
        flush();
        open.push({ node, shown: [], alt: [] });
      }
      if (!INLINE.has(name)) text.push('\n');
      stack.push({ leave: node });
    }
    const children = node.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push({ enter: children[i]! });
  }
  flush();
  for (const [scheme, count] of otherSchemes) {
    context.note(`${where}: ${count === 1 ? `a link to a ${scheme} URL` : `${count} links to ${scheme} URLs`}, not an observable (not followed)`);
  }
}

/** The first `<base>` with an `href`, in document order (walked without recursion, as the body is). */
function firstBase(root: HtmlNode): HtmlNode | undefined {
  const stack = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.type === 'tag' && node.name === 'base' && typeof node.attribs?.href === 'string') return node;
    const children = node.children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

function isLink(node: HtmlNode): boolean {
  return (node.name === 'a' || node.name === 'area') && typeof node.attribs?.href === 'string';
}

/** One link: its target as an observable, placed by the text it shows. */
function foundLink(href: string, base: URL | undefined, shownText: string, alt: string, where: string, context: ReaderContext, otherSchemes: Map<string, number>): void {
  const shown = placeText(shownText);
  const target = linkTarget(href, base);
  if (!target) {
    const scheme = /^\s*([A-Za-z][A-Za-z0-9+.-]{0,20}):/.exec(href.replace(/[\t\n\r]/g, ''))?.[1]?.toLowerCase();
    if (scheme && scheme !== 'http' && scheme !== 'https' && scheme !== 'mailto') otherSchemes.set(`${scheme}:`, (otherSchemes.get(`${scheme}:`) ?? 0) + 1);
    return;
  }
  const mismatch = target.type === 'URL' ? shownElsewhere(shownText, target.value) : undefined;
  let place: string;
  if (mismatch) place = `link in ${where} (shows "${placeText(shownText, 40)}", goes to ${placeText(mismatch, 60)})`;
  else if (shown) place = `link in ${where} ("${shown}")`;
  else if (placeText(alt)) place = `link in ${where} (image "${placeText(alt)}")`;
  else place = `link in ${where}`;
  context.found(target, place);
}

/** The absolute http(s) URL of a `<base href>`, if it is one. */
function baseUrl(href: string | undefined): URL | undefined {
  if (!href) return undefined;
  try {
    const url = new URL(href.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The observable an `href` goes to: an http(s) URL (a relative one resolved against `base`, when
 * there is one; else it goes nowhere), or the address of a `mailto:`.
 */
function linkTarget(href: string, base: URL | undefined): Observable | undefined {
  let raw = href.trim();
  let url: URL;
  try {
    // The URL parser drops tabs and line breaks inside, as a browser does (`java\tscript:`).
    url = new URL(raw);
  } catch {
    // An anchor in the page itself (`#top`) goes nowhere else.
    if (!base || !raw || raw.startsWith('#')) return undefined;
    try {
      url = new URL(raw, base);
    } catch {
      return undefined;
    }
    raw = url.href;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const asWritten = identifyObservable(raw);
    if (asWritten?.type === 'URL') return asWritten;
    const normalized = identifyObservable(url.href);
    return normalized?.type === 'URL' ? normalized : undefined;
  }
  if (url.protocol === 'mailto:') {
    let address = url.pathname;
    try {
      address = decodeURIComponent(address);
    } catch {
      // a malformed escape: the address as written
    }
    const email = identifyObservable(address.split(',')[0] ?? '');
    return email?.type === 'Email' ? email : undefined;
  }
  return undefined;
}

/**
 * When the text shown is itself a URL or a domain whose registrable domain is not the target's,
 * the target's host (what the place says the link goes to); else undefined.
 */
function shownElsewhere(shownText: string, targetUrl: string): string | undefined {
  const compact = shownText.replace(/\s+/g, ' ').trim();
  if (!compact || compact.length > 2048) return undefined;
  const shown = identifyObservable(compact) ?? singleObservable(compact);
  if (!shown || (shown.type !== 'URL' && shown.type !== 'FQDN')) return undefined;
  const shownHost = hostOf(shown);
  const targetHost = urlHost(targetUrl);
  if (!shownHost || !targetHost) return undefined;
  const sameSite = (registrableDomain(shownHost) ?? shownHost) === (registrableDomain(targetHost) ?? targetHost);
  return sameSite ? undefined : targetHost;
}

/** A text that is one indicator with a trailing `/` or `.` the identifier refuses (`www.paypal.com/`). */
function singleObservable(text: string): Observable | undefined {
  const all = extractObservables(text);
  return all.length === 1 && all[0]!.value.length >= text.length - 1 ? all[0] : undefined;
}
