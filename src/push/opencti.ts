/**
 * The OpenCTI target of `oas push` (issue 37): each pushed observable becomes a STIX cyber
 * observable of the team's OpenCTI platform, marked with the analysis's TLP (and PAP), linked to
 * the analysis by an external reference, scored from its verdict and, when malicious, with an
 * indicator made from it.
 *
 * Protocol facts relied on (OpenCTI 6.x GraphQL, `opencti-graphql/config/schema/opencti.graphql`;
 * how the official client pycti calls it):
 * - `POST <url>/graphql`, `Authorization: Bearer <token>`, a JSON body `{query, variables}`.
 * - Errors come inside an HTTP 200 answer: `{"errors":[{"message", "extensions":{"code"}}], "data":
 *   {<field>: null}}`. A token OpenCTI does not know gives `AUTH_REQUIRED` ("You must be logged in
 *   to do this."); a user without the capability a field needs (a read-only user and
 *   `stixCyberObservableAdd`, which needs KNOWLEDGE_KNUPDATE) gives `FORBIDDEN_ACCESS` ("You are
 *   not allowed to do this."). Query validation errors are HTTP 400 (`GRAPHQL_VALIDATION_FAILED`).
 * - Lists take a `FilterGroup`: `{mode: and|or, filters: [{key: [String!]!, values: [Any!]!,
 *   operator?, mode?}], filterGroups: [FilterGroup!]!}`; the filters of a group are combined by its
 *   mode, the values of one filter by `or`.
 * - `markingDefinitions(filters)`: the platform's markings, `definition_type` `TLP` or `PAP` and
 *   `definition` `TLP:AMBER+STRICT`, `PAP:GREEN`... (TLP:CLEAR was TLP:WHITE before 5.x; PAP
 *   markings exist from 6.0 on).
 * - `externalReferences(filters)` and `externalReferenceAdd(input: {source_name, url,
 *   external_id, description})`. The reference is looked up first (by `url`, or by `source_name` and
 *   `external_id` for a relative link) and made only when missing; OpenCTI would also upsert it on
 *   its standard id (derived from the url, else source_name + external_id), but a lookup lets the
 *   outcome say truthfully whether this push made it.
 * - `stixCyberObservables(types, filters)`: an observable by `value`, or by `hashes.MD5`,
 *   `hashes.SHA-1`, `hashes.SHA-256` for a file.
 * - `stixCyberObservableAdd(type, x_opencti_score, x_opencti_description, createIndicator,
 *   objectMarking: [ids], externalReferences: [ids], <DomainName|IPv4Addr|...>: {value} |
 *   StixFile: {hashes: [{algorithm, hash}]})`. `createIndicator: true` makes OpenCTI create the
 *   indicator (a STIX pattern of the observable) with it; the answer's `indicators` lists it.
 * - `stixCyberObservableEdit(id).relationAdd(input: {toId, relationship_type:
 *   "external-reference"})` links a reference to an observable that was already there.
 *
 * Choices:
 * - Types: IPv4 → IPv4-Addr, IPv6 → IPv6-Addr, FQDN → Domain-Name (the STIX 2.1 object for a
 *   name in the DNS, the one OpenCTI's connectors, its STIX imports and our own STIX export use;
 *   OpenCTI's Hostname is its own extension (`x-opencti-hostname`) that other tools do not read),
 *   URL → Url, MD5/SHA1/SHA256 → StixFile with that hash, Email → Email-Addr. A Chrome extension
 *   id has no STIX or OpenCTI type: it is skipped and counted in the line.
 * - Score (`x_opencti_score`, 0-100): malicious 90, suspicious 50, clean 10; unknown sends none
 *   (the platform's default applies). Only malicious observables get an indicator.
 * - An observable already there (an earlier push, or the platform had it) is left as it is (its
 *   markings, score and description belong to whoever made it); only the analysis's reference is
 *   linked to it when missing. It counts as `existing`, and its indicators as found.
 * - The description (Markdown in OpenCTI) holds the verdict, the reasons and the engines'
 *   summaries; upstream text is one line each with every ASCII punctuation character escaped, so
 *   nothing in it becomes a link, an image, HTML or emphasis.
 * - A TLP marking the platform lacks (or the key's user may not see) fails the push: nothing is
 *   pushed with less protection than the analysis asks for. A missing PAP marking is said in the
 *   line and the observables are pushed without it.
 */
import * as v from 'valibot';
import type { HttpClient, HttpResponse } from '../engine/contract.js';
import { jsonObject, parseWith } from '../http/client.js';
import { HttpStatusError, UpstreamError } from '../http/errors.js';
import type { Pap, Tlp } from '../marking/levels.js';
import type { ObservableType } from '../observables/types.js';
import type { Verdict } from '../verdict/verdict.js';
import {
  PushError,
  type PushAnalysis,
  type PushContext,
  type PushObservable,
  type PushOutcome,
  type PushRequest,
  type PushTarget,
  type TargetSettings,
} from './types.js';
import { httpUrl } from '../automation/links.js';
import { platformHost, plural } from './wording.js';

const LABEL = 'OpenCTI';

/** The `source_name` of the external reference to an analysis. */
export const REFERENCE_SOURCE = 'oas';

/** `x_opencti_score` per verdict; unknown sends none. */
export const SCORES: Record<Verdict, number | undefined> = { malicious: 90, suspicious: 50, clean: 10, unknown: undefined };

/** The longest description oas writes (characters): a page of text, well within what OpenCTI stores and shows. */
export const DESCRIPTION_MAX = 10_000;
/** The longest single reason or summary line before escaping. */
const LINE_MAX = 1_000;

/** How an oas observable type is made in OpenCTI. */
interface Mapping {
  /** The entity type (`type` argument, `types` filter). */
  entityType: 'IPv4-Addr' | 'IPv6-Addr' | 'Domain-Name' | 'Url' | 'StixFile' | 'Email-Addr';
  /** The argument of stixCyberObservableAdd holding its fields, and its GraphQL input type. */
  argument: 'IPv4Addr' | 'IPv6Addr' | 'DomainName' | 'Url' | 'StixFile' | 'EmailAddr';
  /** For a file: the hash algorithm as OpenCTI names it. */
  hash?: 'MD5' | 'SHA-1' | 'SHA-256';
}

const MAPPINGS: Partial<Record<ObservableType, Mapping>> = {
  IPv4: { entityType: 'IPv4-Addr', argument: 'IPv4Addr' },
  IPv6: { entityType: 'IPv6-Addr', argument: 'IPv6Addr' },
  FQDN: { entityType: 'Domain-Name', argument: 'DomainName' },
  URL: { entityType: 'Url', argument: 'Url' },
  MD5: { entityType: 'StixFile', argument: 'StixFile', hash: 'MD5' },
  SHA1: { entityType: 'StixFile', argument: 'StixFile', hash: 'SHA-1' },
  SHA256: { entityType: 'StixFile', argument: 'StixFile', hash: 'SHA-256' },
  Email: { entityType: 'Email-Addr', argument: 'EmailAddr' },
};

/** The mapping of a type, or undefined for one OpenCTI has no observable for (Chrome extension ids). */
export function mappingOf(type: ObservableType): Mapping | undefined {
  return MAPPINGS[type];
}

/** The value as OpenCTI keys it: hashes lower case, a domain lower case without its final dot. */
export function keyValue(item: Pick<PushObservable, 'value' | 'type'>): string {
  const mapping = mappingOf(item.type);
  if (mapping?.hash) return item.value.toLowerCase();
  if (item.type === 'FQDN') return item.value.toLowerCase().replace(/\.$/, '');
  return item.value;
}

/** The FilterGroup finding an observable: `value`, or the file's hash. */
export function observableFilter(item: Pick<PushObservable, 'value' | 'type'>): Record<string, unknown> {
  const mapping = mappingOf(item.type);
  const key = mapping?.hash ? `hashes.${mapping.hash}` : 'value';
  return { mode: 'and', filters: [{ key: [key], values: [keyValue(item)] }], filterGroups: [] };
}

// ---------------------------------------------------------------- Markdown

/** Upstream text as one line of inert Markdown: controls as spaces, every ASCII punctuation escaped. */
export function inertMarkdown(text: string, max = LINE_MAX): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ').trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  // CommonMark lets any ASCII punctuation be escaped: no link, image, autolink, HTML, entity,
  // emphasis, heading or list can start from the text.
  return cut.replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/** The observable's description: verdict, reasons, engines and where it was found, in Markdown. */
export function describe(item: PushObservable, analysis: PushAnalysis): string {
  const lines = [`**oas verdict: ${item.verdict}** (analysis ${inertMarkdown(analysis.id, 100)})`];
  const section = (title: string, entries: string[]): void => {
    if (entries.length === 0) return;
    lines.push('', `${title}:`, '', ...entries.map((entry) => `- ${entry}`));
  };
  section('Reasons', item.reasons.map((reason) => inertMarkdown(reason)));
  section('Engines', item.engines.map((e) => `${inertMarkdown(e.engine, 100)}: ${inertMarkdown(e.summary)}`));
  section('Found in', (item.found_in ?? []).map((place) => inertMarkdown(place)));
  return clipLines(lines, DESCRIPTION_MAX);
}

/** Lines joined, whole lines only, within `max` characters (a last line says how many were left out). */
function clipLines(lines: string[], max: number): string {
  const all = lines.join('\n');
  if (all.length <= max) return all;
  const kept: string[] = [];
  let length = 0;
  for (const [i, line] of lines.entries()) {
    const note = `- … ${lines.length - i} more lines left out`;
    if (length + line.length + 1 + note.length + 1 > max) {
      kept.push(note);
      break;
    }
    kept.push(line);
    length += line.length + 1;
  }
  return kept.join('\n');
}

// ---------------------------------------------------------------- GraphQL documents

const FIND_MARKINGS = `query OasMarkings($filters: FilterGroup, $first: Int) {
  markingDefinitions(filters: $filters, first: $first) {
    edges { node { id standard_id definition_type definition } }
  }
}`;

const FIND_REFERENCE = `query OasExternalReference($filters: FilterGroup, $first: Int) {
  externalReferences(filters: $filters, first: $first) {
    edges { node { id source_name url external_id } }
  }
}`;

const ADD_REFERENCE = `mutation OasExternalReferenceAdd($input: ExternalReferenceAddInput!) {
  externalReferenceAdd(input: $input) { id source_name url external_id }
}`;

const FIND_OBSERVABLE = `query OasObservable($types: [String], $filters: FilterGroup, $first: Int) {
  stixCyberObservables(types: $types, filters: $filters, first: $first) {
    edges {
      node {
        id
        standard_id
        entity_type
        observable_value
        externalReferences { edges { node { id } } }
        indicators { edges { node { id } } }
      }
    }
  }
}`;

const LINK_REFERENCE = `mutation OasObservableReference($id: ID!, $input: StixRefRelationshipAddInput!) {
  stixCyberObservableEdit(id: $id) {
    relationAdd(input: $input) { id }
  }
}`;

/** stixCyberObservableAdd declaring only the input argument of this type (`IPv4Addr: IPv4AddrAddInput`). */
export function addObservableDocument(argument: Mapping['argument']): string {
  return `mutation OasObservableAdd(
  $type: String!
  $x_opencti_score: Int
  $x_opencti_description: String
  $createIndicator: Boolean
  $objectMarking: [String]
  $externalReferences: [String]
  $${argument}: ${argument}AddInput
) {
  stixCyberObservableAdd(
    type: $type
    x_opencti_score: $x_opencti_score
    x_opencti_description: $x_opencti_description
    createIndicator: $createIndicator
    objectMarking: $objectMarking
    externalReferences: $externalReferences
    ${argument}: $${argument}
  ) {
    id
    standard_id
    entity_type
    observable_value
    indicators { edges { node { id } } }
  }
}`;
}

// ---------------------------------------------------------------- answer schemas

const idOf = v.pipe(v.string(), v.minLength(1, 'expected an id'));
/** A connection's edges as OpenCTI answers them (`edges: [...]`; null or absent read as none). */
const edgesOf = <S extends v.GenericSchema>(node: S) =>
  v.optional(v.nullable(jsonObject({
    edges: v.optional(v.nullable(v.array(v.nullable(jsonObject({ node: node })))), []),
  })), null);

const MarkingsData = jsonObject({
  markingDefinitions: v.nullable(jsonObject({
    edges: v.array(jsonObject({ node: jsonObject({ id: idOf, definition_type: v.string(), definition: v.string() }) })),
  })),
});

const ReferenceNode = jsonObject({ id: idOf });
const ReferencesData = jsonObject({
  externalReferences: v.nullable(jsonObject({ edges: v.array(jsonObject({ node: ReferenceNode })) })),
});
const ReferenceAddData = jsonObject({ externalReferenceAdd: v.nullable(ReferenceNode) });

const IdNode = jsonObject({ id: idOf });
const ObservableNode = jsonObject({
  id: idOf,
  entity_type: v.optional(v.string()),
  externalReferences: edgesOf(IdNode),
  indicators: edgesOf(IdNode),
});
const ObservablesData = jsonObject({
  stixCyberObservables: v.nullable(jsonObject({ edges: v.array(jsonObject({ node: ObservableNode })) })),
});
const ObservableAddData = jsonObject({ stixCyberObservableAdd: v.nullable(ObservableNode) });
const LinkData = jsonObject({ stixCyberObservableEdit: v.nullable(jsonObject({ relationAdd: v.nullable(IdNode) })) });

/** A GraphQL answer's envelope, read leniently: its errors' messages and codes, and `data`. */
const Envelope = v.looseObject({
  data: v.optional(v.unknown()),
  errors: v.optional(v.nullable(v.array(v.looseObject({
    message: v.optional(v.unknown()),
    extensions: v.optional(v.nullable(v.looseObject({ code: v.optional(v.unknown()) }))),
  })))),
});

/** Codes OpenCTI gives a token it does not accept (`config/errors.ts`). */
const AUTH_CODES = new Set(['AUTH_REQUIRED', 'AUTH_FAILURE', 'OTP_REQUIRED', 'OTP_REQUIRED_ACTIVATION', 'PASSWORD_CHANGE_REQUIRED', 'UNAUTHENTICATED']);
/** A user that may not do this: a read-only token for writes. */
const FORBIDDEN_CODES = new Set(['FORBIDDEN_ACCESS', 'FORBIDDEN']);

// ---------------------------------------------------------------- the call

/** A step that failed: what failed, what to check, the HTTP status if any. Made into a PushError with the progress. */
class StepFailure extends Error {
  constructor(readonly what: string, readonly check: string, readonly status?: number) {
    super(what);
  }
}

/** What this push has done so far, for the outcome and for a failure's line. */
interface Tally {
  referenceCreated: boolean;
  added: number;
  existing: number;
  linked: number;
  indicators: number;
  /** Items to push (mapped), for `2 of 5`. */
  total: number;
}

interface Session {
  endpoint: string;
  host: string;
  settings: TargetSettings;
  http: HttpClient;
}

/** An upstream text fit for our one line: redacted, one line, capped. */
function upstreamText(session: Session, text: unknown, max = 200): string {
  const flat = session.http.redact(String(text ?? '')).replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const keyRefused = (settings: TargetSettings): string => `key refused: check ${settings.credentialSource}`;
const checkUrl = (settings: TargetSettings): string => `check ${settings.urlSource}`;

/** One GraphQL request; its `data` validated by `schema`, or a StepFailure saying what `doing` met. */
async function graphql<S extends v.GenericSchema>(
  session: Session,
  doing: string,
  query: string,
  variables: Record<string, unknown>,
  schema: S,
): Promise<v.InferOutput<S>> {
  let response: HttpResponse;
  try {
    response = await session.http.request(session.endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.settings.credential}`, accept: 'application/json' },
      json: { query, variables },
      acceptStatus: [400, 401, 403, 404, 422],
    });
  } catch (error) {
    throw transportFailure(session, doing, error);
  }
  const envelope = readEnvelope(response);
  const errors = envelope?.errors ?? [];
  if (response.status === 401 || response.status === 403) {
    const reason = errors.map((e) => upstreamText(session, e.message)).filter(Boolean).join('; ');
    throw new StepFailure(`${doing}: ${new HttpStatusError(response.status, response.status === 401 ? 'Unauthorized' : 'Forbidden', undefined, reason || undefined).message}`, keyRefused(session.settings), response.status);
  }
  if (response.status === 404) {
    throw new StepFailure(`${doing}: HTTP 404 Not Found: no GraphQL API at ${new URL(session.endpoint).pathname}`, `${checkUrl(session.settings)}: the platform's base URL`, 404);
  }
  if (!envelope) {
    throw new StepFailure(`${doing}: HTTP ${response.status}: the answer is no GraphQL JSON`, `is it OpenCTI? ${checkUrl(session.settings)}`, response.status);
  }
  if (errors.length > 0) throw graphqlFailure(session, doing, errors, response.status);
  if (response.status >= 300) {
    throw new StepFailure(`${doing}: HTTP ${response.status} without an error message`, `is it OpenCTI 6? ${checkUrl(session.settings)}`, response.status);
  }
  if (envelope.data === undefined || envelope.data === null) {
    throw new StepFailure(`${doing}: the answer has no data`, `is it OpenCTI 6? ${checkUrl(session.settings)}`, response.status);
  }
  try {
    return parseWith(schema, envelope.data, 'data');
  } catch (error) {
    throw new StepFailure(`${doing}: ${upstreamText(session, (error as Error).message)}`, `is it OpenCTI 6? ${checkUrl(session.settings)}`, response.status);
  }
}

/** The envelope of a JSON answer, or undefined when the body is no JSON object. */
function readEnvelope(response: HttpResponse): v.InferOutput<typeof Envelope> | undefined {
  try {
    const parsed = v.safeParse(Envelope, JSON.parse(response.text()));
    return parsed.success && typeof parsed.output === 'object' && !Array.isArray(parsed.output) ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/** GraphQL errors as a failure: a refused token, a read-only user, or what OpenCTI said. */
function graphqlFailure(session: Session, doing: string, errors: { message?: unknown; extensions?: { code?: unknown } | null }[], status: number): StepFailure {
  const codes = errors.map((e) => String(e.extensions?.code ?? ''));
  const said = errors
    .map((e) => {
      const code = upstreamText(session, e.extensions?.code ?? '', 60);
      const message = upstreamText(session, e.message);
      return code ? `${code}: ${message}` : message;
    })
    .filter(Boolean)
    .join('; ') || 'an error without a message';
  if (codes.some((code) => AUTH_CODES.has(code))) {
    return new StepFailure(`${doing}: ${said}`, keyRefused(session.settings), 401);
  }
  if (codes.some((code) => FORBIDDEN_CODES.has(code))) {
    return new StepFailure(
      `${doing}: ${said}; the key's user may read but not write (a read-only key: it needs the capability "Create / Update knowledge")`,
      keyRefused(session.settings),
      403,
    );
  }
  return new StepFailure(`${doing}: ${said}`, `is it OpenCTI 6? ${checkUrl(session.settings)}`, status >= 400 ? status : undefined);
}

/** A timeout, a refused connection or a status the client gave up on. */
function transportFailure(session: Session, doing: string, error: unknown): StepFailure {
  const settings = session.settings;
  if (error instanceof HttpStatusError) {
    const check = error.status >= 500 ? `is OpenCTI up? ${checkUrl(settings)}` : checkUrl(settings);
    return new StepFailure(`${doing}: ${upstreamText(session, error.message)}`, check, error.status);
  }
  if (error instanceof UpstreamError) {
    // The client's own hints ("check its base_url") name engine settings: ours names the push's.
    const message = upstreamText(session, error.message.replace(/\s*\([^()]*\)$/, ''));
    return new StepFailure(`${doing}: ${message}`, checkUrl(settings));
  }
  return new StepFailure(`${doing}: ${upstreamText(session, (error as Error)?.message ?? error)}`, checkUrl(settings));
}

// ---------------------------------------------------------------- the steps

/** Marking definitions to attach: the TLP's (required when the analysis has one) and the PAP's (when present). */
interface Markings {
  ids: string[];
  /** `PAP:AMBER` when the analysis has a PAP the platform lacks. */
  missingPap?: string;
}

/** The definitions OpenCTI may use for a TLP (`TLP:CLEAR` was `TLP:WHITE` before OpenCTI 5.x). */
function tlpDefinitions(tlp: Tlp): string[] {
  return tlp === 'CLEAR' ? ['TLP:CLEAR', 'TLP:WHITE'] : [`TLP:${tlp}`];
}

function papDefinitions(pap: Pap): string[] {
  return pap === 'CLEAR' ? ['PAP:CLEAR', 'PAP:WHITE'] : [`PAP:${pap}`];
}

/** The marking definitions of the analysis's TLP and PAP, in one request. */
async function findMarkings(session: Session, tlp: Tlp | undefined, pap: Pap | undefined): Promise<Markings> {
  const tlpNames = tlp ? tlpDefinitions(tlp) : [];
  const papNames = pap ? papDefinitions(pap) : [];
  if (tlpNames.length + papNames.length === 0) return { ids: [] };
  const { markingDefinitions } = await graphql(session, 'looking up the marking definitions', FIND_MARKINGS, {
    first: 50,
    filters: { mode: 'and', filters: [{ key: ['definition'], values: [...tlpNames, ...papNames] }], filterGroups: [] },
  }, MarkingsData);
  const nodes = (markingDefinitions?.edges ?? []).map((edge) => edge.node);
  const pick = (type: string, names: string[]) =>
    names.map((name) => nodes.find((n) => n.definition_type.toUpperCase() === type && n.definition.toUpperCase() === name)).find(Boolean);
  const ids: string[] = [];
  const markings: Markings = { ids };
  if (tlp) {
    const found = pick('TLP', tlpNames);
    if (!found) {
      throw new StepFailure(
        `no marking definition TLP:${tlp} visible to the key's user, and nothing is pushed with less protection than the analysis's`,
        `create it in OpenCTI (Settings > Security > Marking definitions) or give the key's user access to it: ${session.settings.credentialSource}`,
      );
    }
    ids.push(found.id);
  }
  if (pap) {
    const found = pick('PAP', papNames);
    if (found) ids.push(found.id);
    else markings.missingPap = `PAP:${pap}`;
  }
  return markings;
}


/** The external reference to the analysis: found (by url, or source_name + external_id) or made. */
async function ensureReference(session: Session, analysis: PushAnalysis, tally: Tally): Promise<string> {
  const url = httpUrl(analysis.link);
  const filters = url
    ? [{ key: ['url'], values: [url] }]
    : [{ key: ['source_name'], values: [REFERENCE_SOURCE] }, { key: ['external_id'], values: [analysis.id] }];
  const { externalReferences } = await graphql(session, 'looking up the external reference', FIND_REFERENCE, {
    first: 1,
    filters: { mode: 'and', filters, filterGroups: [] },
  }, ReferencesData);
  const found = externalReferences?.edges[0]?.node.id;
  if (found) return found;
  const input: Record<string, unknown> = {
    source_name: REFERENCE_SOURCE,
    external_id: analysis.id,
    description: `oas analysis ${analysis.id}`,
    ...(url ? { url } : {}),
  };
  const { externalReferenceAdd } = await graphql(session, 'creating the external reference', ADD_REFERENCE, { input }, ReferenceAddData);
  if (!externalReferenceAdd) throw new StepFailure('creating the external reference: OpenCTI answered null', `is it OpenCTI 6? ${checkUrl(session.settings)}`);
  tally.referenceCreated = true;
  return externalReferenceAdd.id;
}

type Found = v.InferOutput<typeof ObservableNode>;

const idsOf = (connection: Found['indicators']): string[] => (connection?.edges ?? []).flatMap((edge) => (edge?.node ? [edge.node.id] : []));

/** The observable already in OpenCTI, if any. */
async function findObservable(session: Session, item: PushObservable, mapping: Mapping): Promise<Found | undefined> {
  const { stixCyberObservables } = await graphql(session, `looking up ${shown(item)}`, FIND_OBSERVABLE, {
    types: [mapping.entityType],
    filters: observableFilter(item),
    first: 1,
  }, ObservablesData);
  return stixCyberObservables?.edges[0]?.node;
}

/** The variables of stixCyberObservableAdd for one observable. */
export function addVariables(item: PushObservable, mapping: Mapping, analysis: PushAnalysis, markings: string[], reference: string): Record<string, unknown> {
  const fields = mapping.hash ? { hashes: [{ algorithm: mapping.hash, hash: keyValue(item) }] } : { value: keyValue(item) };
  const score = SCORES[item.verdict];
  return {
    type: mapping.entityType,
    ...(score !== undefined ? { x_opencti_score: score } : {}),
    x_opencti_description: describe(item, analysis),
    createIndicator: item.verdict === 'malicious',
    objectMarking: markings,
    externalReferences: [reference],
    [mapping.argument]: fields,
  };
}

/** Adds one observable, or links the reference to the one already there. */
async function pushOne(session: Session, item: PushObservable, mapping: Mapping, analysis: PushAnalysis, markings: string[], reference: string, tally: Tally): Promise<void> {
  const found = await findObservable(session, item, mapping);
  if (found) {
    tally.existing++;
    if (item.verdict === 'malicious') tally.indicators += idsOf(found.indicators).length;
    if (!idsOf(found.externalReferences).includes(reference)) {
      const { stixCyberObservableEdit } = await graphql(session, `linking the analysis to ${shown(item)}`, LINK_REFERENCE, {
        id: found.id,
        input: { toId: reference, relationship_type: 'external-reference' },
      }, LinkData);
      if (!stixCyberObservableEdit?.relationAdd) throw new StepFailure(`linking the analysis to ${shown(item)}: OpenCTI answered null`, `is it OpenCTI 6? ${checkUrl(session.settings)}`);
      tally.linked++;
    }
    return;
  }
  const { stixCyberObservableAdd } = await graphql(session, `creating ${shown(item)}`, addObservableDocument(mapping.argument),
    addVariables(item, mapping, analysis, markings, reference), ObservableAddData);
  if (!stixCyberObservableAdd) throw new StepFailure(`creating ${shown(item)}: OpenCTI answered null`, `is it OpenCTI 6? ${checkUrl(session.settings)}`);
  tally.added++;
  if (item.verdict === 'malicious') tally.indicators += idsOf(stixCyberObservableAdd.indicators).length;
}

/** An observable as a failure's line names it: its type and value, on one line, short. */
function shown(item: PushObservable): string {
  const value = item.value.replace(/[\u0000-\u001f\u007f\s]+/g, ' ');
  return `the ${mappingOf(item.type)?.entityType ?? item.type} ${value.length > 80 ? `${value.slice(0, 79)}…` : value}`;
}

// ---------------------------------------------------------------- wording


/** What was done, for the outcome and before a failure: `3 observables added, 1 already there`. */
function doneText(tally: Tally): string {
  const parts = [`${plural(tally.added, 'observable')} added`];
  if (tally.existing > 0) parts.push(`${tally.existing} already there${tally.linked > 0 ? ` (${tally.linked} linked to the analysis)` : ''}`);
  return parts.join(', ');
}

/** The progress before a failure: empty when nothing was written. */
function progressText(tally: Tally): string {
  const wrote = tally.referenceCreated || tally.added > 0 || tally.linked > 0;
  if (!wrote && tally.existing === 0) return '';
  const parts: string[] = [];
  if (tally.referenceCreated) parts.push('external reference created');
  parts.push(`${tally.added + tally.existing} of ${tally.total} observables done (${doneText(tally)})`);
  return `${parts.join(', ')}, then `;
}


/** The platform's page listing observables. */
export function observablesPage(url: string): string {
  return `${url}/dashboard/observations/observables`;
}

// ---------------------------------------------------------------- the target

async function push(request: PushRequest, context: PushContext): Promise<PushOutcome> {
  const { settings, http } = context;
  const base = settings.url.replace(/\/+$/, '');
  const session: Session = { endpoint: `${base}/graphql`, host: platformHost(base), settings, http };
  const mapped = request.items.flatMap((item) => {
    const mapping = mappingOf(item.type);
    return mapping ? [{ item, mapping }] : [];
  });
  const skipped = request.items.length - mapped.length;
  const skippedText = skipped > 0 ? `${plural(skipped, 'Chrome extension id')} skipped (OpenCTI has no observable type for ${skipped === 1 ? 'it' : 'them'})` : '';

  if (mapped.length === 0) {
    const line = request.items.length === 0
      ? `${LABEL}: nothing to push (no observable selected)`
      : `${LABEL}: nothing pushed: ${skippedText}`;
    return { target: 'opencti', kind: 'observables', id: '', created: false, added: 0, existing: 0, indicators: 0, line };
  }

  const tally: Tally = { referenceCreated: false, added: 0, existing: 0, linked: 0, indicators: 0, total: mapped.length };
  let markings: Markings;
  try {
    markings = await findMarkings(session, request.analysis.tlp, request.analysis.pap);
    const reference = await ensureReference(session, request.analysis, tally);
    for (const { item, mapping } of mapped) {
      await pushOne(session, item, mapping, request.analysis, markings.ids, reference, tally);
    }
  } catch (error) {
    if (error instanceof StepFailure) {
      throw new PushError('opencti', `${LABEL} at ${session.host}: ${progressText(tally)}${error.what} (${error.check})`, error.status);
    }
    throw error;
  }

  const link = observablesPage(base);
  const parts = [doneText(tally)];
  if (mapped.some(({ item }) => item.verdict === 'malicious')) parts.push(plural(tally.indicators, 'indicator'));
  if (skippedText) parts.push(skippedText);
  const notes: string[] = [];
  if (!request.analysis.tlp) notes.push('no TLP marking (the analysis has none)');
  if (markings.missingPap) notes.push(`no ${markings.missingPap} marking in this OpenCTI: pushed without PAP`);
  const line = `${LABEL}: ${parts.join(', ')} (${link})${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`;
  return {
    target: 'opencti',
    kind: 'observables',
    id: '',
    link,
    created: tally.added > 0,
    added: tally.added,
    existing: tally.existing,
    indicators: tally.indicators,
    line,
  };
}

export const openctiTarget: PushTarget = { id: 'opencti', push };
