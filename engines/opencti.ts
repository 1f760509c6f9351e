/**
 * provider_16 (`opencti`) — what a self-hosted OpenCTI platform knows about an observable
 * (engines.md 5.19), from its GraphQL API at `POST {base_url}/graphql` with the key as
 * `Authorization: Bearer <key>`:
 * 1. `SearchStixCoreObjectsLinesPaginationQuery`: a `globalSearch` for the search value over
 *    STIX core objects, the 100 newest by `created_at`;
 * 2. only when one of them is an `Indicator`: `GetIndicator` for the first of those.
 *
 * The search value is an IP or a hash as written, a domain lower-cased without a trailing dot,
 * and a URL's host.
 *
 * Result as the reference's. Without any match, exactly four keys: `entity_counts` (`{}`),
 * `global_count`, `search_link` (the search on OpenCTI's web interface) and `latest_created_at`
 * (`null`). With matches, also `latest_indicator_link`, `latest_indicator_name`,
 * `x_opencti_score`, `revoked`, `valid_from`, `valid_until` and `confidence` (null when no match
 * is an indicator). `entity_counts` counts the returned objects per `entity_type`;
 * `latest_created_at`, `valid_from` and `valid_until` are UTC days (`YYYY-MM-DD`).
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 16): `base_url` keeps its path (`https://cti.example/opencti`
 *   posts to `https://cti.example/opencti/graphql`, and links are under that path too); the
 *   reference kept only scheme and host. Trailing `/` are removed.
 * - Bug fixed (engines.md 8 item 16): an `indicator` that the detail query answers as `null`
 *   (deleted meanwhile, not visible to the key's user) leaves the indicator's fields null and
 *   keeps the rest; the reference failed the whole lookup.
 * - An answer is read leniently (issue 26). Needed: a `data` object (a GraphQL answer without
 *   `data` nor `errors` is an error, as `null` was in the reference) and, in the search's,
 *   `globalSearch`. Read when present: `edges` (absent, null or one edge object in place of the
 *   list → none / that one; an edge without node is skipped), every node and indicator field
 *   (a text kept as sent, `""` included (issue 32), 0/1 and "" for `revoked` are booleans,
 *   numbers sent as text are numbers; a date that is no date, "" included, gives a null day).
 *   Where the reference had nothing to copy it failed; oas gives instead:
 *   - `global_count`: the number of edges returned when `pageInfo.globalCount` is absent (the
 *     best count at hand; at most 100, like `entity_counts`);
 *   - a node without `entity_type` is counted under "Unknown" (one whose type is "" under "", as
 *     sent; summary and card call it "Unknown");
 *   - an indicator without `id` (or with an empty one) is not linked nor asked about: the first
 *     indicator that has one is (the reference asked for `undefined`).
 * - Bug fixed (engines.md 8 item 15): a URL's search value is its host from the shared URL parser
 *   (userinfo and IPv6 literals handled); a domain containing "http" (`httpbin.org`) is searched
 *   as the domain it is, not cut as a URL.
 * - `latest_created_at` is the latest date by value, not by string comparison (offsets and
 *   fractions of seconds compare correctly), given as its UTC day.
 * - Bug fixed (engines.md 8 item 19): `base_url` and `api_key` are required credentials; without
 *   them the runner refuses the call before any request.
 * - The requests go through the shared client, so `proxy_url` and `ssl_verify` apply.
 * - Errors are errors, not `null` (engines.md 8 item 3): a refused key (HTTP 401/403, or
 *   OpenCTI's `AUTH_REQUIRED`/`FORBIDDEN_ACCESS` GraphQL errors) is a one-line authentication
 *   error; any other GraphQL error is reported with OpenCTI's message; both redacted. HTTP errors
 *   (429 and 5xx after the client's retries), a malformed body and a timeout are reported too.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseWith } from '../src/http/client.js';
import { flagOrNull, list, numOrNull, text } from '../src/http/lenient.js';
import { BadResponseError, statusError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, refusedError } from '../src/http/refusal.js';
import { count, oneLine } from '../src/lookup/wording.js';
import { hostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { serverBase } from '../src/http/server-base.js';

const LABEL = 'OpenCTI';

/** The operation id OpenCTI's own front end gives the search (engines.md 5.19). */
export const SEARCH_QUERY_ID = 'SearchStixCoreObjectsLinesPaginationQuery';

/** The global search over STIX core objects (engines.md 5.19's Q1). */
export const SEARCH_QUERY = `query SearchStixCoreObjectsLinesPaginationQuery(
  $types: [String]
  $search: String
  $count: Int!
  $cursor: ID
  $orderBy: StixCoreObjectsOrdering
  $orderMode: OrderingMode
  $filters: FilterGroup
) {
  globalSearch(
    types: $types
    search: $search
    first: $count
    after: $cursor
    orderBy: $orderBy
    orderMode: $orderMode
    filters: $filters
  ) {
    edges {
      node {
        id
        entity_type
        created_at
        createdBy {
          name
          id
        }
        creators {
          id
          name
        }
        objectMarking {
          id
          definition_type
          definition
          x_opencti_order
          x_opencti_color
        }
      }
      cursor
    }
    pageInfo {
      endCursor
      hasNextPage
      globalCount
    }
  }
}`;

/** The indicator detail query, exactly as engines.md 5.19 gives it. */
export const INDICATOR_QUERY = 'query GetIndicator($id: String!) { indicator(id: $id) { name x_opencti_score revoked valid_from valid_until confidence } }';

/** The variables of the search (engines.md 5.19), for a search value. */
export function searchVariables(search: string): Record<string, unknown> {
  return {
    count: 100,
    orderMode: 'desc',
    orderBy: 'created_at',
    search,
    filters: {
      mode: 'and',
      filters: [{ key: 'entity_type', values: ['Stix-Core-Object'], operator: 'eq', mode: 'or' }],
      filterGroups: [],
    },
  };
}

/**
 * The search's `data`. Needed: `globalSearch`, the answer to the question asked (without it the
 * answer is about something else). Read when present: `edges` (absent, null or one edge object →
 * none / that one; edges without a node skipped), each node's fields, and `pageInfo.globalCount`
 * (absent → the number of edges returned).
 */
const SearchDataSchema = jsonObject({
  globalSearch: jsonObject({
    edges: list(jsonObject({
      node: v.nullish(jsonObject({
        id: text(),
        entity_type: text(),
        created_at: text(),
      })),
    })),
    pageInfo: v.nullish(v.looseObject({ globalCount: numOrNull() })),
  }, 'expected the globalSearch object'),
});

/** The detail query's `data`; every field read when present, `indicator` absent or null → no detail. */
const IndicatorDataSchema = jsonObject({
  indicator: v.nullish(jsonObject({
    name: text(),
    x_opencti_score: numOrNull(),
    /** 0/1, "" and "true"/"false" read as booleans; absent stays null (not known). */
    revoked: flagOrNull(),
    valid_from: text(),
    valid_until: text(),
    confidence: numOrNull(),
  })),
});

/** A GraphQL answer: `data`, and `errors` when something went wrong. */
const GraphqlSchema = v.looseObject({
  data: v.nullish(v.unknown()),
  errors: list(v.looseObject({
    message: text(),
    extensions: v.nullish(v.looseObject({ code: text() })),
  })),
});

const AUTH_CODES = new Set(['AUTH_REQUIRED', 'FORBIDDEN_ACCESS', 'UNAUTHENTICATED', 'FORBIDDEN']);

/** The result when nothing matches: exactly these four keys. */
export interface OpenCtiNoMatch {
  entity_counts: Record<string, number>;
  /** `pageInfo.globalCount`. */
  global_count: number;
  /** `<base_url>/dashboard/search/knowledge/<search value>`. */
  search_link: string;
  /** UTC day of the newest match's `created_at`; null without matches. */
  latest_created_at: string | null;
}

/** The result with matches. The indicator fields are null when no match is an indicator. */
export interface OpenCtiMatch extends OpenCtiNoMatch {
  /** `<base_url>/dashboard/observations/indicators/<id>` of the first indicator. */
  latest_indicator_link: string | null;
  latest_indicator_name: string | null;
  x_opencti_score: number | null;
  revoked: boolean | null;
  /** UTC day. */
  valid_from: string | null;
  /** UTC day. */
  valid_until: string | null;
  confidence: number | null;
}

export type OpenCtiResult = OpenCtiNoMatch | OpenCtiMatch;

/** What OpenCTI is asked for: a URL's host, a domain normalised, anything else as written. */
export function searchValue(observable: Observable): string | null {
  switch (observable.type) {
    case 'FQDN':
    case 'URL':
      return hostOf(observable);
    case 'Email':
      return null;
    default:
      return observable.value;
  }
}

/** The UTC day of a date-time (`2025-06-10T23:30:00-02:00` -> `2025-06-11`); null when unreadable. */
export function utcDay(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : new Date(at).toISOString().slice(0, 10);
}

/** The latest of some date-times by value, as its UTC day; null when none is readable. */
export function latestDay(values: readonly (string | null | undefined)[]): string | null {
  let best: number | null = null;
  for (const value of values) {
    if (typeof value !== 'string') continue;
    const at = Date.parse(value);
    if (!Number.isNaN(at) && (best === null || at > best)) best = at;
  }
  return best === null ? null : new Date(best).toISOString().slice(0, 10);
}

/** One GraphQL call: the `data` validated against `schema`, or a one-line error. */
async function graphql<S extends v.GenericSchema>(
  ctx: EngineContext,
  endpoint: string,
  key: string,
  body: Record<string, unknown>,
  schema: S,
): Promise<v.InferOutput<S>> {
  const response = await ctx.http.request(endpoint, {
    method: 'POST',
    json: body,
    headers: { authorization: `Bearer ${key}`, accept: 'application/json', 'content-type': 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  let answer: v.InferOutput<typeof GraphqlSchema> | undefined;
  try {
    const parsed = v.safeParse(GraphqlSchema, JSON.parse(response.text()));
    if (parsed.success) answer = parsed.output;
  } catch {
    answer = undefined;
  }
  const errors = answer?.errors ?? [];
  const messages = errors.map((e) => e.message?.trim()).filter((m): m is string => Boolean(m));
  const reason = messages.length > 0 ? oneLine(ctx.http.redact(messages.join('; '))) : undefined;
  if (response.status === 401 || response.status === 403) {
    const detail = reason ? statusError(response.status, reason).message : refusedError(response, ctx).message;
    throw new CredentialsRefusedError(LABEL, detail);
  }
  if (errors.some((e) => AUTH_CODES.has(e.extensions?.code ?? ''))) {
    throw new CredentialsRefusedError(LABEL, reason ?? 'no reason given');
  }
  if (errors.length > 0) throw new EngineError(`${LABEL}: ${reason ?? 'GraphQL error'}`);
  if (response.status >= 300) throw refusedError(response, ctx);
  if (!answer) throw new BadResponseError('upstream answered with malformed JSON');
  if (answer.data === null || answer.data === undefined) throw new BadResponseError('unexpected answer from upstream at data: no data');
  return parseWith(schema, answer.data);
}

export async function openCtiLookup(observable: Observable, ctx: EngineContext): Promise<OpenCtiResult | null> {
  const search = searchValue(observable);
  if (!search) return null;
  const base = serverBase(ctx, LABEL);
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key.trim() === '') throw new EngineError('not configured: api_key');
  const endpoint = `${base}/graphql`;

  const { globalSearch } = await graphql(ctx, endpoint, key, {
    id: SEARCH_QUERY_ID,
    query: SEARCH_QUERY,
    variables: searchVariables(search),
  }, SearchDataSchema);
  const nodes = globalSearch.edges.map((edge) => edge.node).filter((node) => node !== null && node !== undefined);
  const noMatch: OpenCtiNoMatch = {
    entity_counts: {},
    global_count: globalSearch.pageInfo?.globalCount ?? nodes.length,
    search_link: `${base}/dashboard/search/knowledge/${encodeURIComponent(search)}`,
    latest_created_at: null,
  };
  if (nodes.length === 0) return noMatch;

  const entityCounts: Record<string, number> = {};
  for (const node of nodes) {
    const type = node.entity_type ?? 'Unknown';
    entityCounts[type] = (entityCounts[type] ?? 0) + 1;
  }
  const result: OpenCtiMatch = {
    ...noMatch,
    entity_counts: entityCounts,
    latest_created_at: latestDay(nodes.map((node) => node.created_at)),
    latest_indicator_link: null,
    latest_indicator_name: null,
    x_opencti_score: null,
    revoked: null,
    valid_from: null,
    valid_until: null,
    confidence: null,
  };
  // The first indicator that has an id: one without (or with "") cannot be linked nor asked about.
  const id = nodes.find((node) => node.entity_type === 'Indicator' && node.id !== null && node.id.trim() !== '')?.id;
  if (!id) return result;
  result.latest_indicator_link = `${base}/dashboard/observations/indicators/${encodeURIComponent(id)}`;
  const detail = (await graphql(ctx, endpoint, key, { query: INDICATOR_QUERY, variables: { id } }, IndicatorDataSchema)).indicator;
  if (detail) {
    result.latest_indicator_name = detail.name;
    result.x_opencti_score = detail.x_opencti_score;
    result.revoked = detail.revoked;
    result.valid_from = utcDay(detail.valid_from);
    result.valid_until = utcDay(detail.valid_until);
    result.confidence = detail.confidence;
  }
  return result;
}

function isMatch(result: OpenCtiResult): result is OpenCtiMatch {
  return 'latest_indicator_link' in result;
}

/** `2 objects: Indicator 1, Domain-Name 1 · latest 2025-06-10 · indicator evil.example.com, score 80`; `no match`. */
export function openCtiSummary(result: OpenCtiResult): string {
  const types = Object.entries(result.entity_counts);
  if (types.length === 0) return result.global_count > 0 ? count(result.global_count, 'object') : 'no match';
  const parts = [`${count(result.global_count, 'object')}: ${types.map(([type, n]) => `${type || 'Unknown'} ${n}`).join(', ')}`];
  if (result.latest_created_at) parts.push(`latest ${result.latest_created_at}`);
  if (isMatch(result) && result.latest_indicator_link) {
    const indicator = [`indicator ${result.latest_indicator_name || '(unnamed)'}`];
    if (result.x_opencti_score !== null) indicator.push(`score ${result.x_opencti_score}`);
    if (result.revoked) indicator.push('revoked');
    parts.push(indicator.join(', '));
  }
  return parts.join(' · ');
}

/** `x_opencti_score` from which a live indicator is malicious, and suspicious. */
export const OPENCTI_MALICIOUS_SCORE = 70;
export const OPENCTI_SUSPICIOUS_SCORE = 30;

/**
 * What your OpenCTI says about the observable's risk, from its latest indicator's score (0-100)
 * while the indicator is not revoked. OpenCTI itself revokes an indicator once its `valid_until`
 * passes (and as its score decays), so `revoked` also covers expiry and the rule needs no clock.
 * Objects that are no indicator (an observable, a report mentioning it) judge nothing: OpenCTI
 * stores context about harmless things too; so does no match at all.
 */
export function openCtiEvidence(result: OpenCtiResult | null): Evidence | undefined {
  if (!result || !isMatch(result)) return undefined; // no match: no judgement
  const score = result.x_opencti_score;
  if (typeof score !== 'number' || !Number.isFinite(score)) return undefined; // no indicator, or its detail unreadable
  if (result.revoked !== false) return undefined; // revoked (expired, withdrawn) or unknown: no longer judges
  const name = result.latest_indicator_name ? `indicator ${oneLine(result.latest_indicator_name, 80)}` : 'indicator';
  const until = result.valid_until ? `, valid until ${result.valid_until}` : '';
  const reason = oneLine(`OpenCTI ${name}, score ${score}${until}`, 240);
  // Score 70 or more on a live indicator: your CTI platform rates it a threat to detect on.
  if (score >= OPENCTI_MALICIOUS_SCORE) return { level: 'malicious', reason };
  // Score 30 to 69: a live indicator of moderate confidence.
  if (score >= OPENCTI_SUSPICIOUS_SCORE) return { level: 'suspicious', reason };
  return undefined; // a low score (below 30): too weak to judge
}

/** The card: matches by type, freshness, the latest indicator (linked) and its scores, then the search. */
export function openCtiDetails(result: OpenCtiResult): DetailField[] {
  const match = isMatch(result) ? result : null;
  return fields(
    field('Matches', result.global_count),
    field('Entity types', Object.entries(result.entity_counts).map(([type, n]) => `${type || 'Unknown'}: ${n}`)),
    field('Latest created', result.latest_created_at),
    match && field('Latest indicator', match.latest_indicator_name || match.latest_indicator_link, match.latest_indicator_link),
    match && field('Score', match.x_opencti_score),
    match && field('Confidence', match.confidence),
    match && field('Revoked', match.revoked),
    match && field('Valid from', match.valid_from),
    match && field('Valid until', match.valid_until),
    sourceLink('Search in OpenCTI', result.search_link),
  );
}

export default defineEngine<OpenCtiResult>({
  id: 'provider_16',
  service: 'opencti',
  label: 'OpenCTI',
  description: 'Objects of your own OpenCTI platform matching an IP, a domain, a URL\'s host or a file hash, with the latest indicator\'s score and validity',
  tags: ['domain', 'URL', 'IP', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'CHROME_EXTENSION'],
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Server URL', env: ['OPENCTI_URL'], secret: false },
    { setting: 'api_key', label: 'API key', env: ['OPENCTI_API_KEY'] },
  ],
  defaults: { timeout_ms: 5000 },
  summary: openCtiSummary,
  evidence: openCtiEvidence,
  details: openCtiDetails,
  run: openCtiLookup,
  // `oas doctor`: the platform's version (GraphQL `about`), which needs a key it accepts.
  check: { probe: openCtiVersion },
});

const AboutSchema = v.looseObject({ about: v.looseObject({ version: v.fallback(v.nullish(v.string()), null) }) });

/** `OpenCTI 6.4.0`, or the refusal as a lookup words it. */
export async function openCtiVersion(ctx: EngineContext): Promise<string> {
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key.trim() === '') throw new EngineError('not configured: api_key');
  const { about } = await graphql(ctx, `${serverBase(ctx, LABEL)}/graphql`, key, { query: 'query { about { version } }' }, AboutSchema);
  return `${LABEL} ${about.version ?? '(no version said)'}`;
}
