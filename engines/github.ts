/**
 * provider_07 (`github`) — public GitHub code that mentions the observable, from grep.app's
 * search API (engines.md 5.8). No key. The raw observable value is the query (URLs included),
 * sent through the client's `query` option so it is encoded once, properly.
 *
 * Result as the reference's: at most 5 entries, the first hit of each repository, with `total`
 * (grep.app's hit count) unless there was no hit at all (`{"results": []}`, no `total`).
 *
 * Differences from the reference:
 * - the link's branch and path are percent-encoded segment by segment, so a file whose path
 *   holds a space, `#` or `?` still gets a working link (the reference concatenated them raw);
 * - a 429 is retried as the upstream asks (Retry-After) instead of becoming `null`; the
 *   browser-like headers the reference added against grep.app's 429s are sent too, but fixed
 *   (no random picks, so calls are reproducible) and with a configurable `user_agent`;
 * - both hit formats are read: the current plain strings and the older `{"raw": ...}` wrapping;
 * - only `hits` and each hit's `repo` are needed (issue 26; the reference failed on any missing
 *   key): without `hits.total`, `total` is the number of hits sent; `hits.hits` left out or null
 *   is no hit, one hit in place of a list is read as a list of it; a hit without `branch` links
 *   to the file on `HEAD` (GitHub's default branch), one without `path` to the repository's page
 *   (description ""); an empty `branch` or `path` is used as missing for the link only, the
 *   description keeps the path as sent.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { jsonObject } from '../src/http/client.js';
import { list, numOrNull } from '../src/http/lenient.js';
import { listSummary } from '../src/dns/resolver.js';
import { count } from '../src/lookup/wording.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/** A Firefox user agent: grep.app answered 429 to library agents (engines.md 8 item 22). */
const BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
/** Entries kept (one per repository). */
const MAX_RESULTS = 5;
const GITHUB = 'https://github.com';

/** `"owner/repo"`, or before 2025-08-27 `{"raw": "owner/repo"}`. */
const Text = v.union([v.string(), v.pipe(v.looseObject({ raw: v.string() }), v.transform((wrapped) => wrapped.raw))]);
/** The same when present, `""` included (issue 32); absent or null → null. */
const OptionalText = v.optional(v.nullable(Text), null);

/** A hit needs its repository (what it is a hit of); branch and path are read when present. */
const HitSchema = v.looseObject({ repo: Text, branch: OptionalText, path: OptionalText });

/** Needed: `hits`. Its `total` and `hits` are read when present. */
const SearchSchema = jsonObject({
  hits: jsonObject({
    total: numOrNull(),
    hits: list(HitSchema),
  }, 'expected an object'),
});

export interface CodeHit {
  /** `owner/repo`. */
  title: string;
  /** The file on GitHub: `https://github.com/<repo>/blob/<branch>/<path>`. */
  url: string;
  /** The file's path in the repository. */
  description: string;
}

export interface CodeSearchResult {
  results: CodeHit[];
  /** grep.app's number of matching files; absent when there is none (as in the reference). */
  total?: number;
}

export async function codeSearchLookup(observable: Observable, ctx: EngineContext): Promise<CodeSearchResult | null> {
  const baseUrl = String(ctx.settings.base_url);
  const origin = new URL(baseUrl).origin;
  const answer = await ctx.http.json(baseUrl, SearchSchema, {
    query: { q: observable.value },
    headers: {
      'user-agent': String(ctx.settings.user_agent),
      accept: 'application/json, text/plain, */*',
      'accept-language': 'en-US,en;q=0.9',
      referer: `${origin}/`,
      origin,
      'sec-fetch-dest': 'empty',
      'sec-fetch-mode': 'cors',
      'sec-fetch-site': 'same-origin',
    },
  });
  const { hits } = answer.hits;
  // grep.app always counts; without its count, the hits it sent are the count.
  const total = answer.hits.total ?? hits.length;
  if (total === 0) return { results: [] };

  const results: CodeHit[] = [];
  const seen = new Set<string>();
  for (const hit of hits) {
    if (results.length >= MAX_RESULTS) break;
    if (seen.has(hit.repo)) continue;
    seen.add(hit.repo);
    results.push({ title: hit.repo, url: fileUrl(hit.repo, hit.branch, hit.path), description: hit.path ?? '' });
  }
  return { results, total };
}

/**
 * The file's page on GitHub; branch and path encoded per segment (their `/` kept). Without a
 * branch (or an empty one), `HEAD` (GitHub's default branch); without a path (or an empty one), the
 * repository's page.
 */
function fileUrl(repo: string, branch: string | null, path: string | null): string {
  const segments = (text: string) => text.split('/').map(encodeURIComponent).join('/');
  if (!path) return `${GITHUB}/${repo}`;
  return `${GITHUB}/${repo}/blob/${segments(branch || 'HEAD')}/${segments(path.replace(/^\/+/, ''))}`;
}

/** `3 code hits: owner1/repo1, owner2/repo2`; `no code hits`. */
function summary(result: CodeSearchResult): string {
  if (!result.total) return 'no code hits';
  const repos = result.results.map((hit) => hit.title);
  return repos.length > 0 ? `${count(result.total, 'code hit')}: ${listSummary(repos)}` : count(result.total, 'code hit');
}

/**
 * The hit count, one line per file found (the repository as label, the path linked to the file
 * on GitHub), then the same search on grep.app's web page.
 */
export function codeSearchDetails(result: CodeSearchResult, target: string): DetailField[] {
  return fields(
    field('Code hits', result.total ?? 0),
    ...result.results.slice(0, MAX_RESULTS).map((hit) => field(hit.title, hit.description || hit.url, hit.url)),
    sourceLink('Search on grep.app', `https://grep.app/search?q=${encodeURIComponent(target)}`),
  );
}

export default defineEngine<CodeSearchResult>({
  id: 'provider_07',
  service: 'github',
  label: 'GitHub code (grep.app)',
  description: 'Public GitHub code mentioning the observable, from the grep.app code search (first file of up to 5 repositories)',
  tags: ['domain', 'URL', 'IP', 'hash', 'free_no_key', 'scraping'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: { timeout_ms: 10000, base_url: 'https://grep.app/api/search', user_agent: BROWSER_USER_AGENT },
  settingsSchema: v.looseObject({
    user_agent: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a user agent'))),
  }),
  summary,
  details: codeSearchDetails,
  run: codeSearchLookup,
});
