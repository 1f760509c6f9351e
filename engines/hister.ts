/**
 * hister — the pages of your own Hister (self-hosted personal search index of the pages you
 * visited and your local files) that mention an observable (engines.md 9.4):
 * `GET {base_url}/search?query=<JSON>` where the JSON is, spaced as the reference's Python
 * `json.dumps` writes it, `{"text": <value>, "limit": 10, "fields": ["url", "title", "text"]}`,
 * with the headers `Authorization: Bearer <token>` and `Origin: hister://` (Hister only answers an
 * origin that is its own host or has the `hister:` scheme). Every observable type is searched,
 * private IPs and extension ids included, the value as written (a URL as its full text).
 *
 * Result as the reference's, exactly these keys: `total` (Hister's hit count, may exceed the
 * results listed), `results` (`{url, title, added}` per document, in Hister's order, the first of
 * each url only; `added` the UTC day `YYYY-MM-DD` of the document's Unix time, `""` when unknown)
 * and `link` (`<base_url>/?q=<value>`, the search in Hister's web interface). Nothing found is
 * `{"total": 0, "results": [], "link": ...}`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 9.4 "Bug", 8 items 3 and 5): an answer that is JSON but no object, and
 *   Hister's `"documents": null` (its own index search failed) are reported errors (the reference
 *   raised outside its error handling and the observable vanished from the results); HTTP errors
 *   (a refused token, Hister's 500 for a foreign origin, 429 and 5xx after the client's retries),
 *   timeouts, network errors and malformed JSON are reported too instead of a silent `null`.
 * - Bug fixed (engines.md 9.4 "Bug"): an `added` that is not a number (or out of range) no
 *   longer fails the lookup: that document's `added` is `""`; a document without a url is
 *   skipped as before, and one that is not an object too.
 * - `added` is computed in UTC whatever the machine's time zone.
 * - Nothing in the answer is needed but its being a JSON object (issue 26): `total` absent, null
 *   or "" is 0 (the reference's default) and one sent as text is read as its number; `documents`
 *   absent, `{}` or "" is nothing found, one document in place of a list is read as a list of
 *   it, and a title sent as a number is its text. `"documents": null` stays an error: engines.md
 *   9.4 documents it as Hister's answer when its own index search failed.
 * - `base_url` and `token` are required credentials (the URL is no secret); without them the
 *   runner refuses the call before any request (the lookup too, when called directly). A path in
 *   `base_url` is kept and any trailing `/` removed. The token never appears in results or errors.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, EngineError, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { statusError } from '../src/http/errors.js';
import { list, num } from '../src/http/lenient.js';
import { EXPLAINED_STATUSES, upstreamReason } from '../src/http/refusal.js';
import { serverBase } from '../src/http/server-base.js';
import { count } from '../src/lookup/wording.js';
import { urlHost } from '../src/observables/host.js';
import { OBSERVABLE_TYPES, type Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const LABEL = 'Hister';
/** Documents asked for (Hister's default would be 100). */
export const HISTER_LIMIT = 10;
/** The origin Hister's own CLI uses; Hister answers 500 to any other foreign origin. */
export const HISTER_ORIGIN = 'hister://';

/**
 * Hister's answer: `total`, `query`, `documents`, `history`, `search_duration`... Nothing is
 * needed but a JSON object. `total` is read when present (absent, null or "": 0; a number sent as
 * text: that number). Documents are read one by one (an odd one is skipped or loses only its
 * date), so they are not constrained here; `documents: null` is kept apart (Hister's failure).
 */
const AnswerSchema = jsonObject({
  total: num(),
  documents: v.optional(v.union([v.null(), list(v.unknown())]), []),
});

export interface HisterPage {
  url: string;
  /** The page's title, `""` when it has none. */
  title: string;
  /** UTC day (`YYYY-MM-DD`) the page was indexed, `""` when unknown. */
  added: string;
}

export interface HisterResult {
  /** Hister's total hit count (may exceed `results.length`). */
  total: number;
  /** At most 10 documents, Hister's order, one per url. */
  results: HisterPage[];
  /** `<base_url>/?q=<value>`: the same search in Hister's web interface. */
  link: string;
}

/**
 * The `query` parameter: the JSON the reference sends, byte for byte as Python's `json.dumps`
 * writes it (`", "` and `": "` separators, non-ASCII escaped as `\uXXXX`).
 */
export function searchQuery(value: string): string {
  const text = JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `{"text": ${text}, "limit": ${HISTER_LIMIT}, "fields": ["url", "title", "text"]}`;
}

/** Percent-encoding as Python's `urllib.parse.quote` (safe `/`): letters, digits, `_.-~/` kept. */
export function quotePath(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/g, '/');
}

/** UTC day of Unix seconds; `""` for 0, absent, not a number or out of range. */
export function addedDay(value: unknown): string {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds === 0) return '';
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString().slice(0, 10);
}

export async function histerLookup(observable: Observable, ctx: EngineContext): Promise<HisterResult | null> {
  const base = serverBase(ctx, LABEL);
  const token = typeof ctx.settings.token === 'string' ? ctx.settings.token : '';
  if (token.trim() === '') throw new EngineError('not configured: token');
  const value = observable.value;
  const response = await ctx.http.request(`${base}/search`, {
    query: { query: searchQuery(value) },
    headers: { authorization: `Bearer ${token}`, origin: HISTER_ORIGIN },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 401 || response.status === 403) {
    throw new CredentialsRefusedError(LABEL, statusError(response.status, upstreamReason(response.text(), ctx)).message);
  }
  if (response.status >= 300) throw statusError(response.status, upstreamReason(response.text(), ctx));
  const answer = parseJson(response.text(), AnswerSchema);
  if (answer.documents === null) throw new EngineError(`${LABEL}: its index search failed (answered "documents": null)`);

  const seen = new Set<string>();
  const results: HisterPage[] = [];
  for (const document of answer.documents) {
    if (typeof document !== 'object' || document === null || Array.isArray(document)) continue;
    const { url, title, added } = document as Record<string, unknown>;
    if (typeof url !== 'string' || url === '' || seen.has(url)) continue;
    seen.add(url);
    results.push({ url, title: typeof title === 'string' || typeof title === 'number' ? String(title) : '', added: addedDay(added) });
  }
  return { total: answer.total, results, link: `${base}/?q=${quotePath(value)}` };
}

/** `3 hits in your index · 2 pages: pastebin.com, github.com`; `not in your index`. */
export function histerSummary(result: HisterResult): string {
  if (result.total === 0 && result.results.length === 0) return 'not in your index';
  const parts = [`${count(result.total, 'hit')} in your index`];
  if (result.results.length > 0) {
    const hosts = [...new Set(result.results.map((page) => urlHost(page.url) ?? page.url))];
    parts.push(`${count(result.results.length, 'page')}: ${hosts.join(', ')}`);
  }
  return parts.join(' · ');
}

/** The card: the hit count, each page (linked, with its day), then the search in Hister. */
export function histerDetails(result: HisterResult): DetailField[] {
  return fields(
    field('Hits', result.total),
    ...result.results.map((page, i) => field(`Page ${i + 1}`, [page.title || page.url, page.added].filter(Boolean).join(' · '), page.url)),
    sourceLink('Open in Hister', result.link),
  );
}

export default defineEngine<HisterResult>({
  id: 'hister',
  service: 'hister',
  label: 'Hister',
  description: 'Personal search engine: the pages of your own Hister index (visited pages, local files) that mention any observable',
  catalogs: [],
  tags: ['domain', 'URL', 'email', 'IP', 'hash'],
  types: OBSERVABLE_TYPES,
  acceptsPrivateIp: true,
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Server URL', env: ['HISTER_BASE_URL'], secret: false },
    { setting: 'token', label: 'Access token', env: ['HISTER_TOKEN'] },
  ],
  defaults: { timeout_ms: 5000 },
  summary: histerSummary,
  details: histerDetails,
  run: histerLookup,
});
