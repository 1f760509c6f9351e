/**
 * provider_17 (`phishtank`) — whether PhishTank knows a URL as a phish (engines.md 5.20). No key.
 * The URL is checked as written; a domain as `http://<domain>/`. A URL with an empty path gets
 * `/` (as the reference), inserted before any query or fragment rather than appended after them.
 *
 * The request is the check-URL API's: POST form `url` = the URL in base64, `format=json`, with a
 * `phishtank/<name>` user agent as PhishTank asks of its clients. The result is the answer's
 * `results` object verbatim (`url`, `in_database`, and for known URLs `phish_id`,
 * `phish_detail_page`, `verified`, `verified_at`, `valid`).
 *
 * What an answer needs: a `results` object. Everything in it is read when present and kept as
 * sent: `url` may be missing (the result then has none), flags may come as booleans, "y"/"n",
 * "true"/"false", 1/0 or "", and `meta` is not read at all. A `results` without `in_database`
 * (or with it null) is still the result, verbatim as in the reference (issue 32), but it says
 * nothing about the URL: its summary and card read "no database status given" and it gives no
 * evidence.
 *
 * Differences from the reference (engines.md 5.20):
 * - An answer without `results` is an error carrying PhishTank's `errortext` when there is one
 *   (the reference returned `null`); throttling (429 / 509) is retried as the upstream asks.
 * - A URL with an empty path and a query (`http://example.com?a=1`) gets its `/` before the query
 *   (`http://example.com/?a=1`); the reference appended it after, checking another URL.
 * - The user agent is `phishtank/oas` (a setting), not `phishtank/Cyberbro`: PhishTank asks each
 *   client to name itself.
 */
import * as v from 'valibot';
import { jsonObject } from '../src/http/client.js';
import { text } from '../src/http/lenient.js';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { oneLine } from '../src/lookup/wording.js';
import { hostOf, urlHost } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/** PhishTank documents booleans; older answers used "y"/"n". Both are kept as sent. */
const Flag = v.nullish(v.union([v.boolean(), v.string(), v.number()]));

/** What is read when present, `in_database` included; absent keys stay absent (verbatim). */
const ResultsSchema = v.looseObject({
  url: v.nullish(v.string()),
  in_database: v.nullish(v.union([v.boolean(), v.string(), v.number()], 'expected a boolean')),
  phish_id: v.nullish(v.union([v.string(), v.number()])),
  phish_detail_page: v.nullish(v.string()),
  verified: Flag,
  verified_at: v.nullish(v.string()),
  valid: Flag,
});

const AnswerSchema = jsonObject({
  results: v.nullish(ResultsSchema),
  errortext: text(),
});

export type PhishTankResult = v.InferOutput<typeof ResultsSchema>;

/** The URL PhishTank is asked about, or null when the observable gives none. */
export function urlToCheck(observable: Observable): string | null {
  if (observable.type === 'FQDN') {
    const host = hostOf(observable);
    return host ? `http://${host}/` : null;
  }
  if (observable.type !== 'URL' || urlHost(observable.value) === null) return null;
  // Scheme and authority end at the first `/`, `?` or `#` after `//` (userinfo and IPv6
  // literals hold none of them), so the path is empty when the rest does not start with `/`.
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)(.*)$/is.exec(observable.value);
  if (!match) return null;
  const [, origin, rest] = match as unknown as [string, string, string];
  return rest.startsWith('/') ? observable.value : `${origin}/${rest}`;
}

export async function phishTankLookup(observable: Observable, ctx: EngineContext): Promise<PhishTankResult | null> {
  const url = urlToCheck(observable);
  if (!url) return null;
  const answer = await ctx.http.json(String(ctx.settings.base_url), AnswerSchema, {
    form: { url: Buffer.from(url, 'utf8').toString('base64'), format: 'json' },
    headers: { 'user-agent': String(ctx.settings.user_agent) },
  });
  if (!answer.results) {
    throw new EngineError(answer.errortext ? `PhishTank: ${oneLine(answer.errortext)}` : 'unexpected answer from upstream: no results');
  }
  return answer.results;
}

/** true, "true", "y", "yes", 1. */
function yes(flag: unknown): boolean {
  if (typeof flag === 'string') return /^(y|yes|true|1)$/i.test(flag.trim());
  return flag === true || flag === 1;
}

/** What a result without `in_database` says: nothing about the URL. */
const NO_STATUS = 'no database status given';

/** Whether PhishTank said if the URL is in its database (`in_database` absent or null: it did not). */
function saysInDatabase(result: PhishTankResult): boolean {
  return result.in_database !== undefined && result.in_database !== null;
}

/**
 * `verified phish`, `verified, not a phish`, `not verified yet`; NO_STATUS when PhishTank gave no
 * `in_database`; null when not in the database.
 */
function verdict(result: PhishTankResult): string | null {
  if (!saysInDatabase(result)) return NO_STATUS;
  if (!yes(result.in_database)) return null;
  if (!yes(result.verified)) return 'not verified yet';
  return yes(result.valid) ? 'verified phish' : 'verified, not a phish';
}

/** `not in database`; `in database, verified phish`; `in database, not verified yet`...; `no database status given`. */
function summary(result: PhishTankResult): string {
  const status = verdict(result);
  if (status === NO_STATUS) return NO_STATUS;
  return status ? `in database, ${status}` : 'not in database';
}

/**
 * Rule: verified phish -> malicious; in the database, not verified yet -> suspicious; verified as
 * not a phish, or not in the database -> clean. No `in_database` judges nothing.
 */
export function phishTankEvidence(result: PhishTankResult | null): Evidence | undefined {
  if (!result || !saysInDatabase(result)) return undefined;
  const status = verdict(result);
  const id = result.phish_id !== undefined && result.phish_id !== null && result.phish_id !== '' ? ` (phish #${result.phish_id})` : '';
  if (status === null) return { level: 'clean', reason: 'not in PhishTank' };
  if (status === 'verified phish') return { level: 'malicious', reason: `verified phish${id}` };
  if (status === 'not verified yet') return { level: 'suspicious', reason: `reported, not verified yet${id}` };
  return { level: 'clean', reason: `verified, not a phish${id}` };
}

/** Card fields: the verdict, the URL PhishTank was asked about, the phish entry and its page. */
export function phishTankDetails(result: PhishTankResult): DetailField[] {
  const status = verdict(result);
  return fields(
    field('Verdict', status ?? 'not in database'),
    field('URL checked', result.url),
    status !== null && field('Phish ID', result.phish_id),
    status !== null && field('Verified at', result.verified_at),
    sourceLink('Open in PhishTank', securePhishTankPage(result.phish_detail_page)),
  );
}

/** PhishTank's answers name their own pages with http://; the site serves them over https too. */
function securePhishTankPage(page: string | null | undefined): string | null | undefined {
  return page?.replace(/^http:\/\/((?:www\.)?phishtank\.(?:com|org))\//i, 'https://$1/');
}

export default defineEngine<PhishTankResult>({
  id: 'provider_17',
  service: 'phishtank',
  label: 'PhishTank',
  description: 'Whether a URL (or http://<domain>/) is in the PhishTank phishing database, and verified as a phish',
  tags: ['risk', 'domain', 'URL', 'free_no_key'],
  types: ['FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: { timeout_ms: 10000, base_url: 'https://checkurl.phishtank.com/checkurl/', user_agent: 'phishtank/oas' },
  settingsSchema: v.looseObject({
    user_agent: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a user agent'))),
  }),
  summary,
  evidence: phishTankEvidence,
  details: phishTankDetails,
  run: phishTankLookup,
});
