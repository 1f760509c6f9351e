/**
 * Observable extraction from free text (alerts, e-mails, reports pasted by an analyst).
 *
 * One left-to-right scan: at each candidate position the matchers below are tried in priority
 * order and the first one whose candidate validates consumes its text. That is what makes one
 * indicator give one observable (the host of a URL, the domain of an e-mail, an IP in a URL or
 * a hash in a URL path are never reported again on their own) and keeps first-appearance order.
 * One exception, as in the reference: a Chrome / Edge extension id in a URL (a store link) is
 * reported after the URL, since the id is what the extension engines look up.
 *
 * Every pattern starts with a look-behind that forbids starting in the middle of a token, and
 * every unbounded run is a single character class, so a failed candidate costs time linear in
 * its own length and is never re-tried from inside: the whole scan stays linear-ish.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { parse } from './tldts.js';
import { refang } from './refang.js';
import type { Observable, ObservableType } from './types.js';

/**
 * Last labels that are usually file extensions rather than TLDs (the reference's list), so
 * `report.pdf` or `script.py` in prose is not taken for a domain.
 */
const FILE_EXTENSIONS = new Set(
  (
    'doc xls xlsb xlam xlsm xlsx xltm xml txt exe ppt pdf docx dat png yarn jpg jpeg jar js gz ' +
    'pkg deb bin log csv sql tar apk bat py wsf vb gif ico tiff tif asp html htm css jsp php rss ' +
    'cpp pptx java ods bak cfg dll ini msi tmp rtf vbs json scr class slk iqy http jse vbe ps1 ' +
    'ps yml yaml src hta pub https sys eml cab dc cmd init lnk core docm hwp publicvm iso crx config'
  ).split(' '),
);

/** True when `host` is a domain under a real ICANN public suffix that is not a file extension. */
export function isValidFqdn(host: string): boolean {
  // Private suffixes (blogspot.com...) are ignored so that `isIcann` judges the real TLD.
  const info = parse(host, { allowPrivateDomains: false });
  if (info.isIp || info.isIcann !== true || !info.domain || !info.publicSuffix) return false;
  // A multi-label suffix (`com.py`) proves the last label is a ccTLD, not an extension.
  return info.publicSuffix.includes('.') || !FILE_EXTENSIONS.has(info.publicSuffix.toLowerCase());
}

// Host-name building blocks. A label never contains a dot, so `(label\.)+` cannot backtrack
// ambiguously; the last label must start with a letter (TLDs do; this also rules out IPs).
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const LAST_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const DOMAIN = `(?:${LABEL}\\.)+${LAST_LABEL}`;
/** A domain must end its token: `example.com.invalid` is not `example.com`; `example.com.` is. */
const DOMAIN_END = '(?![A-Za-z0-9_@-]|\\.[A-Za-z0-9_-])';

interface Hit {
  type: ObservableType;
  value: string;
  /** De-duplication key (case-folded where case does not matter). */
  key: string;
  /** How much of the candidate the observable consumes (URLs and IPv6 may drop a tail). */
  length: number;
}

interface Matcher {
  pattern: string;
  /** `raw` is the pattern's match at `start` in `text`. */
  check(raw: string, text: string, start: number): Hit | null;
}

/** Trailing characters that end a sentence rather than a URL. */
const URL_TRAILING = new Set(['.', ',', ';', ':', '!', '?', '"', "'", '\u201d', '\u2019', '\u00bb']);
const URL_CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{', '>': '<' };

/** Drops sentence punctuation and unbalanced closing brackets from the end of a URL. */
function trimUrl(raw: string): string {
  // Count brackets once; stripping a closer updates the count, so this stays linear.
  const count: Record<string, number> = { '(': 0, ')': 0, '[': 0, ']': 0, '{': 0, '}': 0, '<': 0, '>': 0 };
  for (const c of raw) if (c in count) count[c]!++;
  let end = raw.length;
  while (end > 0) {
    const c = raw[end - 1]!;
    const opener = URL_CLOSERS[c];
    if (URL_TRAILING.has(c)) end--;
    else if (opener !== undefined && count[c]! > count[opener]!) {
      count[c]!--;
      end--;
    } else break;
  }
  return raw.slice(0, end);
}

/** Scheme and authority are case-insensitive; path, query and fragment are not. */
function urlKey(url: string): string {
  return url.replace(/^[^/]*\/\/[^/?#]*/, (authority) => authority.toLowerCase());
}

/**
 * An http(s) URL: angle brackets are cut where they cannot belong to it (in the host part), a
 * trailing `<br>` or HTML closing tag (`http://a.com/x</b>`) goes unless the URL opens that tag,
 * then sentence punctuation and unbalanced closers are trimmed.
 */
function urlMatcher(pattern: string): Matcher {
  return {
    pattern,
    check(raw) {
      // Comma/semicolon/pipe-separated URL lists ("http://a.com,http://b.com") are split.
      const next = raw.search(/[,;|][Hh][Tt][Tt][Pp][Ss]?:\/\//);
      let value = next >= 0 ? raw.slice(0, next) : raw;
      const authority = /^[^:]+:\/\/[^/?#]*/.exec(value)![0];
      const angle = authority.search(/[<>]/);
      if (angle >= 0) value = value.slice(0, angle);
      value = trimUrl(stripClosingTags(value));
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return null;
      }
      if (!/^https?:$/.test(url.protocol) || !/[A-Za-z0-9]/.test(url.hostname)) return null;
      return { type: 'URL', value, key: urlKey(value), length: value.length };
    },
  };
}

function stripClosingTags(url: string): string {
  for (;;) {
    const br = /<br\s*\/?>$/i.exec(url);
    if (br) {
      url = url.slice(0, br.index);
      continue;
    }
    const tag = /<\/([A-Za-z][A-Za-z0-9]*)>$/.exec(url);
    if (!tag || new RegExp(`<${tag[1]}[\\s>/]`, 'i').test(url.slice(0, tag.index))) return url;
    url = url.slice(0, tag.index);
  }
}

const HASH_BY_LENGTH: Record<number, ObservableType> = { 32: 'MD5', 40: 'SHA1', 64: 'SHA256' };

/**
 * A Chrome / Edge extension id as the reference detects it (engines.md 2.1, 9.5.1): exactly 32
 * lowercase letters forming a whole word, `\b[a-z]{32}\b` (a letter, digit or `_` on either side
 * prevents it, uppercase letters included). Real ids only use `a`-`p` (hex digits spelled with
 * letters); the reference accepts any of `a`-`z`, and so does this, so that both find the same
 * observables. A run of only `a`-`f` is an MD5 (the hash matcher comes first).
 */
const EXTENSION_ID = '(?<![0-9A-Za-z_])[a-z]{32}(?![0-9A-Za-z_])';
const HEX_ONLY = /^[0-9A-Fa-f]+$/;
/** Every extension id of a text, for `extensionIdsIn` (`matchAll` copies it: no shared state). */
const EXTENSION_IDS = new RegExp(EXTENSION_ID, 'g');
/** A word character of Python's `\b` beyond ASCII (`é`, `ß`, `٣`...): no id may touch one. */
const UNICODE_WORD = /[\p{L}\p{N}_]/u;

/** True when the characters around `text[start, end)` leave it a whole word, Unicode-wise. */
function wholeWord(text: string, start: number, end: number): boolean {
  const before = [...text.slice(Math.max(0, start - 2), start)].pop() ?? '';
  const after = end < text.length ? String.fromCodePoint(text.codePointAt(end)!) : '';
  return !UNICODE_WORD.test(before) && !UNICODE_WORD.test(after);
}

/**
 * The extension ids inside a URL, after its authority (the reference reports the id of a store
 * link such as `https://chromewebstore.google.com/detail/<slug>/<id>` as an observable of its
 * own, besides the URL). A run of `a`-`f` only would be an MD5, and hashes inside a URL are not
 * reported again: skipped.
 */
function extensionIdsIn(url: string): string[] {
  const rest = url.replace(/^[^/]*\/\/[^/?#]*/, '');
  const ids: string[] = [];
  for (const m of rest.matchAll(EXTENSION_IDS)) {
    if (!HEX_ONLY.test(m[0]) && wholeWord(rest, m.index, m.index + m[0].length)) ids.push(m[0]);
  }
  return ids;
}

/** Tried in this order at each position; the first valid candidate wins. */
const MATCHERS: readonly Matcher[] = [
  // `<https://example.com/x>` (a delimited URL, as in e-mails) ends at the `>`.
  urlMatcher('(?<=<)[Hh][Tt][Tt][Pp][Ss]?://[^\\s<>"\'`]+'),
  // Elsewhere `<` and `>` may appear in the path, query or fragment, as in the XSS probes of WAF
  // alerts (`/search?q=<script>alert(1)</script>`); the run stops at whitespace, quotes and
  // backticks, so query strings, fragments, ports and `[v6]` hosts are kept.
  urlMatcher('(?<![A-Za-z0-9<])[Hh][Tt][Tt][Pp][Ss]?://[^\\s"\'`]+'),
  {
    // Local part is bounded (RFC: 64) because it may start after any dot.
    pattern: `(?<![A-Za-z0-9_%+-])[A-Za-z0-9_%+-][A-Za-z0-9._%+-]{0,63}@${DOMAIN}${DOMAIN_END}`,
    check(raw) {
      const at = raw.lastIndexOf('@');
      const domain = raw.slice(at + 1).toLowerCase();
      if (!isValidFqdn(domain)) return null;
      const value = `${raw.slice(0, at)}@${domain}`;
      return { type: 'Email', value, key: value.toLowerCase(), length: raw.length };
    },
  },
  {
    // Any hex/colon/dot run with two colons near its start (covers `::1`, `fe80::1`,
    // `::ffff:1.2.3.4`); the final look-ahead forces the maximal run, and isIPv6 decides.
    pattern: '(?<![0-9A-Za-z:.])(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:.]+(?![0-9A-Za-z_:.])',
    check(raw) {
      // A sentence may end right after the address: "blocked 2001:db8::1: ok", "... ::1."
      let value = raw.replace(/\.+$/, '');
      if (value.endsWith(':') && !value.endsWith('::')) value = value.slice(0, -1);
      if (!isIPv6(value)) return null;
      return { type: 'IPv6', value, key: value.toLowerCase(), length: value.length };
    },
  },
  {
    // Refuses to start or end inside a longer dotted token (`1.2.3.4.5`, `v1.2.3.4`,
    // `1.2.3.4.nip.io`); isIPv4 then rejects out-of-range octets such as `999.1.1.1`.
    pattern: '(?<![0-9A-Za-z.])(?:[0-9]{1,3}\\.){3}[0-9]{1,3}(?![0-9A-Za-z]|\\.[0-9A-Za-z])',
    check(raw) {
      return isIPv4(raw) ? { type: 'IPv4', value: raw, key: raw, length: raw.length } : null;
    },
  },
  {
    // Before hashes so that `<md5>.evil.com` is a domain; `<md5>.exe` fails here and falls
    // through to the hash matcher.
    pattern: `(?<![A-Za-z0-9_@-])(?<![A-Za-z0-9_-]\\.)${DOMAIN}${DOMAIN_END}`,
    check(raw) {
      const value = raw.toLowerCase();
      return isValidFqdn(value) ? { type: 'FQDN', value, key: value, length: raw.length } : null;
    },
  },
  {
    pattern: '(?<![0-9A-Za-z])[0-9A-Fa-f]{32,64}(?![0-9A-Za-z])',
    check(raw) {
      const type = HASH_BY_LENGTH[raw.length];
      return type ? { type, value: raw, key: raw.toLowerCase(), length: raw.length } : null;
    },
  },
  {
    // Last: `<id>.example.com` is a domain, `<id>@example.com` an e-mail address, 32 letters
    // `a`-`f` an MD5; `<id>.crx` (a file extension, no domain) and `/Extensions/<id>/` are ids.
    pattern: EXTENSION_ID,
    check(raw, text, start) {
      if (!wholeWord(text, start, start + raw.length)) return null;
      return { type: 'CHROME_EXTENSION', value: raw, key: raw, length: raw.length };
    },
  },
];

const STICKY = MATCHERS.map((m) => new RegExp(m.pattern, 'y'));
/**
 * Finds the next position where any matcher could apply. One instance, its `lastIndex` reset at
 * each call (extractObservables runs to its end without yielding): building it anew per call cost
 * ~8 µs, most of the time of a short text such as a spreadsheet cell (issue 35).
 */
const ANY = new RegExp(MATCHERS.map((m) => `(?:${m.pattern})`).join('|'), 'g');

/** The first matcher whose candidate at `pos` validates (and spans `wholeLength`, if given). */
function matchAt(text: string, pos: number, wholeLength?: number): Hit | null {
  for (let i = 0; i < MATCHERS.length; i++) {
    const sticky = STICKY[i]!;
    sticky.lastIndex = pos;
    const m = sticky.exec(text);
    if (!m) continue;
    const hit = MATCHERS[i]!.check(m[0], text, pos);
    if (hit && (wholeLength === undefined || hit.length === wholeLength)) return hit;
  }
  return null;
}

/**
 * Refangs `text` and returns its observables in first-appearance order, de-duplicated.
 * Returns `[]` when there are none.
 */
export function extractObservables(text: string): Observable[] {
  const source = refang(text);
  const any = ANY;
  any.lastIndex = 0;
  const seen = new Set<string>();
  const out: Observable[] = [];
  let m: RegExpExecArray | null;
  while ((m = any.exec(source)) !== null) {
    const hit = matchAt(source, m.index);
    if (!hit) {
      // Look-behinds stop the rest of the rejected token from matching, so one step suffices.
      any.lastIndex = m.index + 1;
      continue;
    }
    any.lastIndex = m.index + hit.length;
    const key = `${hit.type}\0${hit.key}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ value: hit.value, type: hit.type });
    if (hit.type !== 'URL') continue;
    // Store links carry the extension id: reported too, right after the URL (as the reference).
    for (const id of extensionIdsIn(hit.value)) {
      const idKey = `CHROME_EXTENSION\0${id}`;
      if (seen.has(idKey)) continue;
      seen.add(idKey);
      out.push({ value: id, type: 'CHROME_EXTENSION' });
    }
  }
  return out;
}

/**
 * Classifies one whole input (trimmed, refanged) as exactly one observable, or null when it is
 * not exactly one indicator. A fully-qualified name's final dot (`example.com.`) is accepted.
 */
export function identifyObservable(value: string): Observable | null {
  let text = refang(value.trim());
  if (!text) return null;
  let hit = matchAt(text, 0, text.length);
  if (!hit && text.endsWith('.') && !text.endsWith('..')) {
    text = text.slice(0, -1);
    hit = matchAt(text, 0, text.length);
    if (hit?.type !== 'FQDN') hit = null;
  }
  return hit ? { value: hit.value, type: hit.type } : null;
}
