/**
 * provider_06 (`dfir_iris`) — the cases of a self-hosted DFIR-IRIS server whose IOCs match an
 * observable (engines.md 5.7): `POST {base_url}/search?cid=1` with the JSON body
 * `{"search_value": <pattern>, "search_type": "ioc"}` and the key as `Authorization: Bearer <key>`.
 *
 * The pattern is an SQL LIKE pattern: an IP (public or private) or a hash is searched with a
 * leading `%` (`%10.0.0.5`, suffix match), a domain or URL with a trailing one (`evil.example%`,
 * prefix match).
 *
 * Result as the reference's: `{"reports": <distinct cases>, "links": [<base_url>/case/ioc?cid=<id>]}`,
 * one link per distinct case. `data` missing or empty is "not found" (`null`).
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 10): a private IP is searched with the same suffix wildcard as a
 *   public one (HEAD's combined `IPV4|BOGON` flag dropped the wildcard).
 * - Bug fixed (engines.md 8 item 21): links are sorted by case id as a number (`cid=3` before
 *   `cid=12`), not as strings.
 * - Bug fixed (engines.md 8 item 20): the request goes through the shared client, so `proxy_url`
 *   and `ssl_verify` apply (the reference forced a direct connection).
 * - Bug fixed (engines.md 8 item 19): `base_url` and `api_key` are required credentials; without
 *   them the runner refuses the call before any request (the reference sent it anyway).
 * - A trailing `/` on `base_url` never gives `//search` (nor `//case` in the links).
 * - An item without a (numeric) `case_id` is skipped instead of failing the whole lookup; when no
 *   item names a case there is nothing to link to, hence `null`.
 * - Nothing in the answer is needed but its being a JSON object (issue 26): `status` and
 *   `message` may be left out; `data` left out, null, "" or `{}` is "not found" (`null`, as the
 *   reference), and one item in place of a list is read as a list of it (the reference failed);
 *   a text or a number in place of the list is still an error.
 * - Errors are errors, not `null` (engines.md 8 item 3): a refused key (401/403) is a one-line
 *   authentication error naming DFIR-IRIS, with the key masked; other HTTP errors (429 and 5xx
 *   after the client's retries), an answer with `"status": "error"`, a malformed body and a
 *   timeout are reported too.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, text } from '../src/http/lenient.js';
import { UpstreamError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, refusedError } from '../src/http/refusal.js';
import { count, oneLine } from '../src/lookup/wording.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { serverBase } from '../src/http/server-base.js';

const LABEL = 'DFIR-IRIS';

/**
 * IRIS's answer: `{"status": "success", "message": "Results fetched", "data": [<ioc>...]}`. Items
 * are read one by one (an odd one is skipped), so they are not constrained here.
 */
const AnswerSchema = jsonObject({
  status: text(),
  message: text(),
  // A text (other than "") or a number where the IOCs belong cannot be read as IOCs.
  data: v.optional(v.pipe(v.custom<unknown>((d) => d === null || d === '' || typeof d === 'object', 'expected a list of IOCs'), list(v.unknown())), []),
});

export interface DfirIrisResult {
  /** Number of distinct cases holding a matching IOC (= `links.length`). */
  reports: number;
  /** `<base_url>/case/ioc?cid=<case id>`, one per case, by case id (numerically). */
  links: string[];
}

/** The SQL LIKE pattern IRIS is asked for (engines.md 5.7), private IPs included. */
export function searchPattern(observable: Observable): string {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return `%${observable.value}`;
    case 'FQDN':
    case 'URL':
      return `${observable.value}%`;
    default:
      return observable.value;
  }
}

/** A case id as IRIS sends it (an integer, sometimes as a string); null when absent or not one. */
function caseIdOf(item: unknown): number | null {
  if (typeof item !== 'object' || item === null) return null;
  const id = (item as Record<string, unknown>).case_id;
  if (typeof id === 'number') return Number.isSafeInteger(id) && id >= 0 ? id : null;
  if (typeof id === 'string' && /^\d{1,15}$/.test(id.trim())) return Number(id.trim());
  return null;
}

export async function dfirIrisLookup(observable: Observable, ctx: EngineContext): Promise<DfirIrisResult | null> {
  const base = serverBase(ctx, LABEL);
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key === '') throw new EngineError('not configured: api_key');
  const response = await ctx.http.request(`${base}/search?cid=1`, {
    method: 'POST',
    json: { search_value: searchPattern(observable), search_type: 'ioc' },
    headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 401 || response.status === 403) {
    throw new CredentialsRefusedError(LABEL, refusedError(response, ctx).message);
  }
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), AnswerSchema);
  if (answer.status === 'error') {
    throw new UpstreamError(`${LABEL}: ${oneLine(ctx.http.redact(answer.message || 'error'))}`);
  }
  const ids = [...new Set(answer.data.map(caseIdOf).filter((id): id is number => id !== null))].sort((a, b) => a - b);
  if (ids.length === 0) return null;
  const links = ids.map((id) => `${base}/case/ioc?cid=${id}`);
  return { reports: links.length, links };
}

/** The case id a link names (`...?cid=12` -> "12"). */
function caseOf(link: string): string {
  return /[?&]cid=(\d+)/.exec(link)?.[1] ?? link;
}

/** `in 2 cases: #3, #12`. */
function summary(result: DfirIrisResult): string {
  return `in ${count(result.reports, 'case')}: ${result.links.map((link) => `#${caseOf(link)}`).join(', ')}`;
}

/**
 * What your DFIR-IRIS says about the observable's risk: an IOC of one of your incident cases is
 * `suspicious` (it was part of an investigation, not necessarily the attacker's: a victim host, a
 * user's address). No case judges nothing.
 */
export function dfirIrisEvidence(result: DfirIrisResult | null): Evidence | undefined {
  if (!result || typeof result.reports !== 'number' || result.reports <= 0 || !Array.isArray(result.links)) return undefined; // in no case: no judgement
  // An IOC of your own incident cases: worth a look before it is dismissed.
  return { level: 'suspicious', reason: `IOC in ${count(result.reports, 'case')} of your DFIR-IRIS: ${result.links.map((link) => `#${caseOf(link)}`).join(', ')}` };
}

/** The card: how many cases, then each case's IOC page on the IRIS server. */
export function dfirIrisDetails(result: DfirIrisResult): DetailField[] {
  return fields(
    field('Cases', result.reports),
    ...result.links.map((link) => sourceLink(`Case #${caseOf(link)}`, link)),
  );
}

export default defineEngine<DfirIrisResult>({
  id: 'provider_06',
  service: 'dfir_iris',
  // Absent from the spec's older catalog variant.
  catalogs: ['main'],
  label: 'DFIR-IRIS',
  description: 'The cases of your DFIR-IRIS server whose IOCs match an IP (private ones too), a domain, a URL or a file hash',
  tags: ['domain', 'URL', 'IP', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  acceptsPrivateIp: true,
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Server URL', env: ['DFIR_IRIS_URL'], secret: false },
    { setting: 'api_key', label: 'API key', env: ['DFIR_IRIS_API_KEY'] },
  ],
  defaults: { timeout_ms: 5000 },
  summary,
  evidence: dfirIrisEvidence,
  details: dfirIrisDetails,
  run: dfirIrisLookup,
});
