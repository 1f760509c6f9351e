/**
 * misp_feedback — whether an observable is on one of the MISP warning lists (public DNS
 * resolvers, cloud ranges, top-N domains, hashes of empty files, RFC 1918...), asked of a
 * self-hosted MISP-feedback daemon (`misp-fbd`, engines.md 9.3):
 * `POST {base_url}/lookup` with the JSON body `{"value": <value>, "false_positives_only": false}`,
 * headers `accept` and `content-type: application/json`, and, when a token is configured,
 * `Authorization: Basic base64(":" + token)` (empty user name, the token as password: the daemon
 * has no authentication of its own, a reverse proxy in front of it may).
 *
 * Result as the reference's, exactly these keys: `status` (`HIT` when at least one list matched,
 * else `CLEAN`) and `warninglists` (the names of the matching lists as sent, the daemon's order,
 * `Unknown` for a list without a name, `""` for one named `""`). Not on any list is
 * `{"status": "CLEAN", "warninglists": []}`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 9.3 "Bug", 8 items 3 and 5): every failure is reported in `errors` —
 *   a daemon that is down (connection refused), a DNS/TLS/proxy failure, a `base_url` without
 *   scheme and an answer that is JSON but no object used to escape the engine and make the whole
 *   observable vanish from the results; HTTP errors, timeouts and non-JSON bodies used to be a
 *   silent `null`.
 * - Private and reserved IPs are looked up (`acceptsPrivateIp`): the reference left them out
 *   (no BOGON flag) although the warning lists hold the RFC 1918 / RFC 5735 ranges, so "is this
 *   10.0.0.5 a known private range?" is answered.
 * - `base_url` is a required credential (not a secret); without it the runner refuses the call
 *   before any request (the lookup too, when called directly). A path in it is kept, any number
 *   of trailing `/` removed (the reference removed one).
 * - An answer is read leniently (issue 26): only a JSON object is needed. `matches` absent, null,
 *   "" or {} is CLEAN (as the reference), one match object in place of the list is that match,
 *   null entries are skipped, a numeric list name is its text, a name sent as "" stays "" (issue
 *   32; summary, evidence and card call it "unnamed list"); `value` and `matched` are not read
 *   (the reference did not read them either). A match that is not an object still fails.
 * - The token never appears in a result or an error, neither as is nor in its Basic form.
 * - A refused token (401/403 from the reverse proxy) is a one-line authentication error naming
 *   MISP-feedback; 429/5xx are retried by the shared client, then reported.
 */
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, text } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, upstreamReason } from '../src/http/refusal.js';
import { serverBase } from '../src/http/server-base.js';
import { count, oneLine } from '../src/lookup/wording.js';
import type { Observable, ObservableType } from '../src/observables/types.js';
import { field, fields } from '../src/lookup/fields.js';

const LABEL = 'MISP-feedback';

/** The types the reference sends (engines.md 9.3): not URL, not Email. */
export const MISP_FEEDBACK_TYPES: readonly ObservableType[] = ['IPv4', 'IPv6', 'FQDN', 'MD5', 'SHA1', 'SHA256'];

/** One matching list; the daemon also sends `slug`, `description`, `list_type`, `category`... */
const MatchSchema = jsonObject({
  /** Absent or null → "Unknown" (below); `""` kept as sent. */
  name: text(),
});

/**
 * The daemon's answer: `{"value": str, "matched": bool, "matches": [...]}`. Only `matches` is
 * read (absent, null, "" or {} → none; one match object → that one; null entries skipped);
 * `value` and `matched` are not, so whatever form they take does not matter.
 */
const AnswerSchema = jsonObject({
  matches: list(MatchSchema),
});

export interface MispFeedbackResult {
  /** `HIT`: on at least one warning list; `CLEAN`: on none. */
  status: 'HIT' | 'CLEAN';
  /** Names of the matching warning lists, in the daemon's order. */
  warninglists: string[];
}

/** The `Authorization` value for a token: `Basic base64(":" + token)`. */
export function basicAuthorization(token: string): string {
  return `Basic ${Buffer.from(`:${token}`, 'utf8').toString('base64')}`;
}

export async function mispFeedbackLookup(observable: Observable, ctx: EngineContext): Promise<MispFeedbackResult | null> {
  if (!MISP_FEEDBACK_TYPES.includes(observable.type)) return null;
  const base = serverBase(ctx, LABEL);
  const token = typeof ctx.settings.token === 'string' && ctx.settings.token.trim() !== '' ? ctx.settings.token : undefined;
  const authorization = token !== undefined ? basicAuthorization(token) : undefined;
  // The Basic form is as secret as the token: masked wherever the client or this engine writes.
  const http = authorization !== undefined ? ctx.http.withSecrets([authorization.slice('Basic '.length)]) : ctx.http;
  const scoped: EngineContext = { ...ctx, http };
  const response = await http.request(`${base}/lookup`, {
    method: 'POST',
    json: { value: observable.value, false_positives_only: false },
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      ...(authorization !== undefined ? { authorization } : {}),
    },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 401 || response.status === 403) {
    const reason = upstreamReason(response.text(), scoped);
    throw new CredentialsRefusedError(LABEL, statusError(response.status, reason).message);
  }
  if (response.status >= 300) throw statusError(response.status, upstreamReason(response.text(), scoped));
  const answer = parseJson(response.text(), AnswerSchema);
  const warninglists = answer.matches.map((match) => match.name ?? 'Unknown');
  return { status: warninglists.length > 0 ? 'HIT' : 'CLEAN', warninglists };
}

/** A list's name for people: one sent empty is "unnamed list". */
function shownName(name: string): string {
  return name.trim() !== '' ? name : 'unnamed list';
}

/** `on 2 warning lists: List of known IPv4 public DNS resolvers, ...`; `on no warning list`. */
export function mispFeedbackSummary(result: MispFeedbackResult): string {
  if (result.warninglists.length === 0) return 'on no warning list';
  return `on ${count(result.warninglists.length, 'warning list')}: ${result.warninglists.map(shownName).join(', ')}`;
}

/**
 * What the warning lists say about the observable's risk. MISP's warning lists hold values that
 * are well known and mostly harmless (public DNS resolvers, cloud ranges, top domains, hashes of
 * empty files, RFC 1918): a hit is `clean`, a likely false positive. It never hides a worse
 * verdict, since the most severe evidence wins. Not on any list judges nothing.
 */
export function mispFeedbackEvidence(result: MispFeedbackResult | null): Evidence | undefined {
  if (!result || result.status !== 'HIT' || !Array.isArray(result.warninglists) || result.warninglists.length === 0) return undefined; // on no list: no judgement
  const lists = result.warninglists.slice(0, 2).map((name) => (typeof name === 'string' ? shownName(name) : String(name))).join('; ') + (result.warninglists.length > 2 ? `; and ${result.warninglists.length - 2} more` : '');
  // On a warning list: a well-known value, likely a false positive.
  return { level: 'clean', reason: `on warning list${result.warninglists.length > 1 ? 's' : ''} ${oneLine(lists, 240)}: likely false positive` };
}

/** The card: the status, then each matching list. */
export function mispFeedbackDetails(result: MispFeedbackResult): DetailField[] {
  return fields(
    field('Status', result.status === 'HIT' ? 'HIT (on a warning list: likely benign or well known)' : 'CLEAN (on no warning list)'),
    ...result.warninglists.map((name, i) => field(`Warning list ${i + 1}`, shownName(name))),
  );
}

export default defineEngine<MispFeedbackResult>({
  id: 'misp_feedback',
  service: 'misp_feedback',
  label: 'MISP-feedback',
  description: 'Warning-list false-positive detector: whether an IP, a domain or a hash is on a MISP warning list, asked of your own MISP-feedback daemon',
  catalogs: [],
  tags: ['hash', 'IP', 'domain', 'free_no_key'],
  types: MISP_FEEDBACK_TYPES,
  acceptsPrivateIp: true,
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Server URL', env: ['MISP_FEEDBACK_SERVER_URL'], secret: false },
    { setting: 'token', label: 'Token', env: ['MISP_FEEDBACK_TOKEN'], required: false },
  ],
  defaults: { timeout_ms: 10000 },
  summary: mispFeedbackSummary,
  evidence: mispFeedbackEvidence,
  details: mispFeedbackDetails,
  run: mispFeedbackLookup,
});
