/**
 * A stand-in for the write side of an OpenCTI 6 platform's GraphQL API, for `oas push` to OpenCTI
 * (issue 37): `POST <prefix>/graphql` (prefix `/opencti` unless told), checked as the platform
 * checks it, answering with its shapes and keeping what was made.
 *
 * - Apollo's checks: a JSON body (`content-type: application/json`) with a `query` string and
 *   `variables` object, else HTTP 400 `BAD_REQUEST`; one operation whose variables are all declared
 *   with the types the field's arguments take (`$filters: FilterGroup`, `$objectMarking:
 *   [String]`, `$IPv4Addr: IPv4AddrAddInput`...), else HTTP 400 `GRAPHQL_VALIDATION_FAILED`;
 *   variable values of those types (Int, Boolean, lists, FilterGroup `{mode: and|or, filters:
 *   [{key: [String], values: [Any], operator?, mode?}], filterGroups: []}`, input objects with only
 *   their fields), else HTTP 400 `BAD_USER_INPUT`.
 * - OpenCTI's own: a `Bearer` token other than the platform's gets `AUTH_REQUIRED` (HTTP 200,
 *   `data: null`); with `readOnly`, every mutation gets `FORBIDDEN_ACCESS` ("You are not allowed
 *   to do this.", HTTP 200, `data: {<field>: null}`), as for a user without "Create / Update
 *   knowledge"; marking or reference ids that do not exist get `MISSING_REFERENCE_ERROR`; a value
 *   not of its type gets `FUNCTIONAL_ERROR`.
 * - Fields: `markingDefinitions` (the TLP 2.0 and PAP markings OpenCTI 6 creates at init;
 *   `paps: false` for a platform without PAP), `externalReferences` / `externalReferenceAdd`
 *   (upsert on url, else source_name + external_id), `stixCyberObservables` (by `types` and a
 *   `value` or `hashes.<algo>` filter), `stixCyberObservableAdd` (upsert on the value or hash;
 *   `createIndicator` makes one indicator), `stixCyberObservableEdit(id).relationAdd`.
 *
 * Knobs: `failWith(reply, {field, skip})` answers the next request for `field` (after `skip`
 * matching ones) with `reply` — a status, a hang, a malformed body — and every later one too.
 */
import { randomUUID } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { reply, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from './http.js';

export const TOKEN = 'octi-push-5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

export interface FakeMarking {
  id: string;
  standard_id: string;
  definition_type: 'TLP' | 'PAP' | 'STATEMENT';
  definition: string;
  x_opencti_order: number;
}

export interface FakeReference {
  id: string;
  standard_id: string;
  source_name: string;
  url: string | null;
  external_id: string | null;
  description: string | null;
}

export interface FakeHash {
  algorithm: string;
  hash: string;
}

export interface FakeObservable {
  id: string;
  standard_id: string;
  entity_type: string;
  value: string | null;
  hashes: FakeHash[];
  x_opencti_score: number | null;
  x_opencti_description: string | null;
  objectMarking: string[];
  externalReferences: string[];
  indicators: string[];
}

/** One GraphQL request as the fake read it. */
export interface FakeCall {
  operation: 'query' | 'mutation';
  field: string;
  variables: Record<string, unknown>;
  query: string;
}

export interface OpenCtiPushFake {
  /** The platform's base URL (`settings.url`): the server and the prefix. */
  url: string;
  server: FakeHttpServer;
  token: string;
  markings: FakeMarking[];
  references: FakeReference[];
  observables: FakeObservable[];
  /** Every well-formed GraphQL request, in order. */
  calls: FakeCall[];
  /** Mutations only. */
  mutations(field?: string): FakeCall[];
  /** A user without "Create / Update knowledge": mutations get FORBIDDEN_ACCESS. */
  readOnly: boolean;
  /** Answers requests for `field` (any, when absent) after `skip` of them with `reply`. */
  failWith(reply: FakeReply, options?: { field?: string; skip?: number }): void;
  /** Answers normally again. */
  heal(): void;
  /** Adds an observable as if someone else had made it (no marking, no reference of ours). */
  seed(observable: Partial<FakeObservable> & Pick<FakeObservable, 'entity_type'>): FakeObservable;
  close(): Promise<void>;
}

const TLP_STANDARD: Record<string, string> = {
  'TLP:CLEAR': 'marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9',
  'TLP:GREEN': 'marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da',
  'TLP:AMBER': 'marking-definition--f88d31f6-486f-44da-b317-01333bde0b82',
  'TLP:AMBER+STRICT': 'marking-definition--826578e1-40ad-459f-bc73-ede076f81f37',
  'TLP:RED': 'marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed',
};

/** The markings OpenCTI 6 creates at its first start (TLP 2.0, then PAP 1.0). */
export function defaultMarkings(paps = true): FakeMarking[] {
  const tlp = ['TLP:CLEAR', 'TLP:GREEN', 'TLP:AMBER', 'TLP:AMBER+STRICT', 'TLP:RED'].map((definition, i): FakeMarking => ({
    id: randomUUID(), standard_id: TLP_STANDARD[definition]!, definition_type: 'TLP', definition, x_opencti_order: i + 1,
  }));
  const pap = ['PAP:CLEAR', 'PAP:GREEN', 'PAP:AMBER', 'PAP:RED'].map((definition, i): FakeMarking => ({
    id: randomUUID(), standard_id: `marking-definition--${randomUUID()}`, definition_type: 'PAP', definition, x_opencti_order: i + 1,
  }));
  return paps ? [...tlp, ...pap] : tlp;
}

// ---------------------------------------------------------------- errors as OpenCTI and Apollo give them

/** OpenCTI's answer to a request without a valid token (HTTP 200). */
export function authRequired(field: string): Record<string, unknown> {
  return {
    errors: [{
      message: 'You must be logged in to do this.',
      locations: [{ line: 2, column: 3 }],
      path: [field],
      extensions: { code: 'AUTH_REQUIRED', data: { http_status: 401, genre: 'TECHNICAL' } },
    }],
    data: null,
  };
}

/** OpenCTI's answer to a user without the capability the field needs (HTTP 200). */
export function forbiddenAccess(field: string): Record<string, unknown> {
  return {
    errors: [{
      message: 'You are not allowed to do this.',
      locations: [{ line: 2, column: 3 }],
      path: [field],
      extensions: { code: 'FORBIDDEN_ACCESS', data: { http_status: 403, genre: 'TECHNICAL' } },
    }],
    data: { [field]: null },
  };
}

function openctiError(field: string, code: string, message: string, httpStatus: number): FakeReply {
  return reply.json({
    errors: [{ message, locations: [{ line: 2, column: 3 }], path: [field], extensions: { code, data: { http_status: httpStatus, genre: 'BUSINESS' } } }],
    data: { [field]: null },
  });
}

function apolloError(status: number, code: string, message: string): FakeReply {
  return reply.json({ errors: [{ message, extensions: { code } }] }, status);
}

class Invalid extends Error {}

// ---------------------------------------------------------------- schema the fake knows

/** Each root field's arguments: name → GraphQL type, as opencti.graphql declares them. */
const FIELDS: Record<string, { operation: 'query' | 'mutation'; args: Record<string, string> }> = {
  markingDefinitions: { operation: 'query', args: { first: 'Int', after: 'ID', orderBy: 'MarkingDefinitionsOrdering', orderMode: 'OrderingMode', filters: 'FilterGroup', search: 'String', toStix: 'Boolean' } },
  externalReferences: { operation: 'query', args: { first: 'Int', after: 'ID', orderBy: 'ExternalReferencesOrdering', orderMode: 'OrderingMode', filters: 'FilterGroup', search: 'String' } },
  stixCyberObservables: { operation: 'query', args: { first: 'Int', after: 'ID', types: '[String]', orderBy: 'StixCyberObservablesOrdering', orderMode: 'OrderingMode', filters: 'FilterGroup', search: 'String', toStix: 'Boolean' } },
  externalReferenceAdd: { operation: 'mutation', args: { input: 'ExternalReferenceAddInput!' } },
  stixCyberObservableEdit: { operation: 'mutation', args: { id: 'ID!' } },
  stixCyberObservableAdd: {
    operation: 'mutation',
    args: {
      type: 'String!', stix_id: 'StixId', x_opencti_score: 'Int', x_opencti_description: 'String', x_opencti_modified_at: 'DateTime',
      createIndicator: 'Boolean', createdBy: 'String', objectMarking: '[String]', objectLabel: '[String]', objectOrganization: '[String]',
      externalReferences: '[String]', clientMutationId: 'String', update: 'Boolean',
      AutonomousSystem: 'AutonomousSystemAddInput', DomainName: 'DomainNameAddInput', EmailAddr: 'EmailAddrAddInput',
      StixFile: 'StixFileAddInput', IPv4Addr: 'IPv4AddrAddInput', IPv6Addr: 'IPv6AddrAddInput', Url: 'UrlAddInput', Hostname: 'HostnameAddInput',
    },
  },
};

/** Input object types: field → type. */
const INPUTS: Record<string, Record<string, string>> = {
  ExternalReferenceAddInput: {
    stix_id: 'StixId', x_opencti_stix_ids: '[StixId]', source_name: 'String!', description: 'String', url: 'String', hash: 'String',
    external_id: 'String', created: 'DateTime', modified: 'DateTime', clientMutationId: 'String', update: 'Boolean',
  },
  StixRefRelationshipAddInput: { fromId: 'StixRef', toId: 'StixRef', relationship_type: 'String!', createdBy: 'String', objectMarking: '[String]' },
  DomainNameAddInput: { value: 'String' },
  EmailAddrAddInput: { value: 'String', display_name: 'String' },
  IPv4AddrAddInput: { value: 'String' },
  IPv6AddrAddInput: { value: 'String' },
  UrlAddInput: { value: 'String' },
  HostnameAddInput: { value: 'String' },
  AutonomousSystemAddInput: { number: 'Int!', name: 'String', rir: 'String' },
  StixFileAddInput: { hashes: '[HashInput]', size: 'Int', name: 'String', name_enc: 'String', magic_number_hex: 'String', mime_type: 'String', x_opencti_additional_names: '[String]' },
  HashInput: { algorithm: 'String!', hash: 'String!' },
  FilterGroup: { mode: 'FilterMode!', filters: '[Filter!]!', filterGroups: '[FilterGroup!]!' },
  Filter: { key: '[String!]!', values: '[Any!]!', operator: 'FilterOperator', mode: 'FilterMode' },
};

const ENUMS: Record<string, string[]> = {
  FilterMode: ['and', 'or'],
  OrderingMode: ['asc', 'desc'],
  FilterOperator: ['eq', 'not_eq', 'lt', 'lte', 'gt', 'gte', 'match', 'wildcard', 'contains', 'not_contains', 'ends_with', 'not_ends_with', 'starts_with', 'not_starts_with', 'script', 'nil', 'not_nil', 'search', 'within'],
};

/** The input argument stixCyberObservableAdd needs for each type. */
const INPUT_OF_TYPE: Record<string, string> = {
  'IPv4-Addr': 'IPv4Addr', 'IPv6-Addr': 'IPv6Addr', 'Domain-Name': 'DomainName', Url: 'Url', StixFile: 'StixFile',
  'Email-Addr': 'EmailAddr', Hostname: 'Hostname', 'Autonomous-System': 'AutonomousSystem',
};

const HASH_ALGORITHMS = new Set(['MD5', 'SHA-1', 'SHA-256', 'SHA-512', 'SHA3-256', 'SHA3-512', 'SSDEEP', 'TLSH']);

/** A value checked against a GraphQL type (variables' coercion); throws Invalid with Apollo's wording. */
function checkValue(value: unknown, type: string, where: string): void {
  const nonNull = type.endsWith('!');
  const bare = nonNull ? type.slice(0, -1) : type;
  if (value === null || value === undefined) {
    if (nonNull) throw new Invalid(`${where}: expected non-nullable type "${type}" not to be null.`);
    return;
  }
  if (bare.startsWith('[')) {
    const inner = bare.slice(1, -1);
    // GraphQL coerces one value to a list of it.
    for (const [i, entry] of (Array.isArray(value) ? value : [value]).entries()) checkValue(entry, inner, `${where}[${i}]`);
    return;
  }
  switch (bare) {
    case 'Int':
      if (!Number.isInteger(value) || Math.abs(value as number) > 2 ** 31) throw new Invalid(`${where}: Int cannot represent non-integer value: ${JSON.stringify(value)}`);
      return;
    case 'Boolean':
      if (typeof value !== 'boolean') throw new Invalid(`${where}: Boolean cannot represent a non boolean value: ${JSON.stringify(value)}`);
      return;
    case 'String': case 'ID': case 'StixId': case 'StixRef': case 'DateTime':
      if (typeof value !== 'string' && !(bare === 'ID' && Number.isInteger(value))) throw new Invalid(`${where}: ${bare} cannot represent a non string value: ${JSON.stringify(value)}`);
      return;
    case 'Any':
      return;
  }
  if (ENUMS[bare]) {
    if (typeof value !== 'string' || !ENUMS[bare]!.includes(value)) throw new Invalid(`${where}: Value ${JSON.stringify(value)} does not exist in "${bare}" enum.`);
    return;
  }
  const fields = INPUTS[bare];
  if (!fields) return; // an enum or input the fake does not model (orderBy): accepted
  if (typeof value !== 'object' || Array.isArray(value)) throw new Invalid(`${where}: Expected type "${bare}" to be an object.`);
  for (const key of Object.keys(value)) {
    if (!(key in fields)) throw new Invalid(`${where}: Field "${key}" is not defined by type "${bare}".`);
  }
  for (const [key, fieldType] of Object.entries(fields)) checkValue((value as Record<string, unknown>)[key], fieldType, `${where}.${key}`);
}

/** The operation's kind, declared variables and root field (one operation per document). */
function parseDocument(query: string): { operation: 'query' | 'mutation'; declared: Map<string, string>; field: string; body: string } | undefined {
  const head = /^\s*(query|mutation)\b\s*(\w+)?\s*(\(([^)]*)\))?\s*\{/.exec(query);
  if (!head) return undefined;
  const declared = new Map<string, string>();
  for (const m of (head[4] ?? '').matchAll(/\$(\w+)\s*:\s*([\w[\]!]+)/g)) declared.set(m[1]!, m[2]!);
  const body = query.slice(head[0].length);
  const field = /^\s*(\w+)/.exec(body)?.[1];
  if (!field) return undefined;
  return { operation: head[1] as 'query' | 'mutation', declared, field, body };
}

/** The arguments the root field is given: `name: $variable`. */
function rootArguments(body: string): Map<string, string> {
  const open = /^\s*\w+\s*\(/.exec(body);
  const args = new Map<string, string>();
  if (!open) return args;
  const close = body.indexOf(')', open[0].length);
  for (const m of body.slice(open[0].length, close).matchAll(/(\w+)\s*:\s*\$(\w+)/g)) args.set(m[1]!, m[2]!);
  return args;
}

// ---------------------------------------------------------------- filters

interface FilterGroup {
  mode: 'and' | 'or';
  filters: { key: string[] | string; values: unknown[]; operator?: string; mode?: 'and' | 'or' }[];
  filterGroups: FilterGroup[];
}

/** Whether `entity` passes the group: filters combined by the group's mode, a filter's values by its own (`or`). */
function matches(group: FilterGroup | undefined | null, read: (key: string) => unknown[]): boolean {
  if (!group) return true;
  const results = [
    ...group.filters.map((filter) => {
      const keys = Array.isArray(filter.key) ? filter.key : [filter.key];
      const have = keys.flatMap(read).map(String);
      if ((filter.operator ?? 'eq') !== 'eq') throw new Invalid(`the fake only knows the eq operator, not ${filter.operator}`);
      const hits = filter.values.map((value) => have.includes(String(value)));
      return (filter.mode ?? 'or') === 'or' ? hits.some(Boolean) : hits.every(Boolean);
    }),
    ...group.filterGroups.map((inner) => matches(inner, read)),
  ];
  return group.mode === 'and' ? results.every(Boolean) : results.some(Boolean);
}

const edges = <T>(nodes: T[]) => ({
  edges: nodes.map((node, i) => ({ node, cursor: Buffer.from(`arrayconnection:${i}`).toString('base64') })),
  pageInfo: { startCursor: '', endCursor: '', hasNextPage: false, hasPreviousPage: false, globalCount: nodes.length },
});

// ---------------------------------------------------------------- the fake

export async function startOpenCtiPush(options: { token?: string; prefix?: string; paps?: boolean; readOnly?: boolean } = {}): Promise<OpenCtiPushFake> {
  const prefix = options.prefix ?? '/opencti';
  const token = options.token ?? TOKEN;
  const markings = defaultMarkings(options.paps ?? true);
  const references: FakeReference[] = [];
  const observables: FakeObservable[] = [];
  const calls: FakeCall[] = [];
  let failure: { reply: FakeReply; field: string | undefined; skip: number } | undefined;

  const observableOut = (o: FakeObservable) => ({
    id: o.id,
    standard_id: o.standard_id,
    entity_type: o.entity_type,
    parent_types: ['Basic-Object', 'Stix-Object', 'Stix-Core-Object', 'Stix-Cyber-Observable'],
    observable_value: o.value ?? o.hashes[0]?.hash ?? '',
    x_opencti_score: o.x_opencti_score,
    x_opencti_description: o.x_opencti_description,
    objectMarking: o.objectMarking.map((id) => markings.find((m) => m.id === id)),
    externalReferences: edges(o.externalReferences.map((id) => references.find((r) => r.id === id))),
    indicators: edges(o.indicators.map((id) => ({ id, pattern_type: 'stix' }))),
  });

  const readObservable = (o: FakeObservable) => (key: string): unknown[] => {
    if (key === 'value') return o.value === null ? [] : [o.value];
    if (key.startsWith('hashes.')) return o.hashes.filter((h) => h.algorithm === key.slice(7)).map((h) => h.hash);
    if (key === 'entity_type') return [o.entity_type];
    throw new Invalid(`the fake does not filter observables on ${key}`);
  };

  const fake: OpenCtiPushFake = {
    url: '',
    server: undefined as unknown as FakeHttpServer,
    token,
    markings,
    references,
    observables,
    calls,
    mutations: (field) => calls.filter((c) => c.operation === 'mutation' && (field === undefined || c.field === field)),
    readOnly: options.readOnly ?? false,
    failWith: (answer, opts = {}) => void (failure = { reply: answer, field: opts.field, skip: opts.skip ?? 0 }),
    heal: () => void (failure = undefined),
    seed: (given) => {
      const o: FakeObservable = {
        id: randomUUID(), standard_id: `${given.entity_type.toLowerCase()}--${randomUUID()}`, value: null, hashes: [],
        x_opencti_score: 50, x_opencti_description: null, objectMarking: [], externalReferences: [], indicators: [], ...given,
      };
      observables.push(o);
      return o;
    },
    close: async () => fake.server.close(),
  };

  function markingDefinitions(v: Record<string, unknown>) {
    const found = markings.filter((m) => matches(v.filters as FilterGroup, (key) => {
      if (key === 'definition' || key === 'definition_type') return [m[key]];
      throw new Invalid(`the fake does not filter markings on ${key}`);
    }));
    return reply.json({ data: { markingDefinitions: edges(found.slice(0, (v.first as number | undefined) ?? 500)) } });
  }

  function externalReferences(v: Record<string, unknown>) {
    const found = references.filter((r) => matches(v.filters as FilterGroup, (key) => {
      if (key === 'url' || key === 'source_name' || key === 'external_id') return r[key] === null ? [] : [r[key]];
      throw new Invalid(`the fake does not filter references on ${key}`);
    }));
    return reply.json({ data: { externalReferences: edges(found.slice(0, (v.first as number | undefined) ?? 500)) } });
  }

  function externalReferenceAdd(v: Record<string, unknown>) {
    const input = v.input as Record<string, string | undefined>;
    if (!input.url && !input.external_id) {
      return openctiError('externalReferenceAdd', 'FUNCTIONAL_ERROR', 'Cant create an external reference without url or external_id', 400);
    }
    // The standard id: from the url when there is one, else source_name + external_id (pycti's generate_id).
    const key = input.url ? `url:${input.url}` : `id:${input.source_name}|${input.external_id}`;
    const same = (r: FakeReference) => (r.url ? `url:${r.url}` : `id:${r.source_name}|${r.external_id}`) === key;
    let ref = references.find(same);
    if (!ref) {
      ref = {
        id: randomUUID(), standard_id: `external-reference--${randomUUID()}`, source_name: input.source_name!,
        url: input.url ?? null, external_id: input.external_id ?? null, description: input.description ?? null,
      };
      references.push(ref);
    }
    return reply.json({ data: { externalReferenceAdd: { ...ref, entity_type: 'External-Reference' } } });
  }

  function stixCyberObservables(v: Record<string, unknown>) {
    const types = (v.types as string[] | undefined) ?? [];
    const found = observables.filter((o) => (types.length === 0 || types.includes(o.entity_type)) && matches(v.filters as FilterGroup, readObservable(o)));
    return reply.json({ data: { stixCyberObservables: edges(found.slice(0, (v.first as number | undefined) ?? 500).map(observableOut)) } });
  }

  function stixCyberObservableAdd(v: Record<string, unknown>) {
    const field = 'stixCyberObservableAdd';
    const type = v.type as string;
    const argument = INPUT_OF_TYPE[type];
    if (!argument) return openctiError(field, 'FUNCTIONAL_ERROR', `Observable type ${type} is not supported`, 400);
    const data = v[argument] as Record<string, unknown> | undefined;
    if (!data) return openctiError(field, 'FUNCTIONAL_ERROR', `Expecting variable ${argument} in the input, got nothing.`, 400);
    for (const other of Object.values(INPUT_OF_TYPE)) {
      if (other !== argument && v[other] !== undefined && v[other] !== null) return openctiError(field, 'FUNCTIONAL_ERROR', `Unexpected input ${other} for type ${type}`, 400);
    }
    const score = v.x_opencti_score as number | undefined;
    if (score !== undefined && score !== null && (score < 0 || score > 100)) return openctiError(field, 'VALIDATION_ERROR', 'The score should be between 0 and 100', 500);
    for (const id of (v.objectMarking as string[] | undefined) ?? []) {
      if (!markings.some((m) => m.id === id || m.standard_id === id)) return openctiError(field, 'MISSING_REFERENCE_ERROR', 'Element(s) not found', 404);
    }
    for (const id of (v.externalReferences as string[] | undefined) ?? []) {
      if (!references.some((r) => r.id === id || r.standard_id === id)) return openctiError(field, 'MISSING_REFERENCE_ERROR', 'Element(s) not found', 404);
    }
    const hashes = ((data.hashes as FakeHash[] | undefined) ?? []).filter((h) => h !== null);
    const value = typeof data.value === 'string' ? data.value : null;
    const problem = syntaxProblem(type, value, hashes);
    if (problem) return openctiError(field, 'FUNCTIONAL_ERROR', problem, 400);
    const same = (o: FakeObservable) => o.entity_type === type && (type === 'StixFile'
      ? hashes.some((h) => o.hashes.some((mine) => mine.algorithm === h.algorithm && mine.hash === h.hash))
      : o.value === value);
    let o = observables.find(same);
    if (o) {
      // The platform's upsert: markings and references merged, nothing duplicated.
      for (const id of (v.objectMarking as string[] | undefined) ?? []) if (!o.objectMarking.includes(id)) o.objectMarking.push(id);
      for (const id of (v.externalReferences as string[] | undefined) ?? []) if (!o.externalReferences.includes(id)) o.externalReferences.push(id);
    } else {
      o = {
        id: randomUUID(), standard_id: `${type.toLowerCase()}--${randomUUID()}`, entity_type: type, value, hashes,
        x_opencti_score: score ?? 50, x_opencti_description: (v.x_opencti_description as string | undefined) ?? null,
        objectMarking: [...((v.objectMarking as string[] | undefined) ?? [])],
        externalReferences: [...((v.externalReferences as string[] | undefined) ?? [])], indicators: [],
      };
      observables.push(o);
    }
    if (v.createIndicator === true && o.indicators.length === 0) o.indicators.push(randomUUID());
    return reply.json({ data: { stixCyberObservableAdd: observableOut(o) } });
  }

  function stixCyberObservableEdit(v: Record<string, unknown>, body: string) {
    const field = 'stixCyberObservableEdit';
    const o = observables.find((x) => x.id === v.id);
    if (!/\brelationAdd\s*\(\s*input\s*:\s*\$(\w+)\s*\)/.test(body)) return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', 'the fake only knows stixCyberObservableEdit { relationAdd(input: $input) }');
    if (!o) return openctiError(field, 'FUNCTIONAL_ERROR', 'Cannot edit the object, Stix-Cyber-Observable cannot be found.', 400);
    const input = v.input as { toId: string; relationship_type: string };
    if (input.relationship_type !== 'external-reference') return openctiError(field, 'FUNCTIONAL_ERROR', `Relation ${input.relationship_type} not supported by the fake`, 400);
    const ref = references.find((r) => r.id === input.toId || r.standard_id === input.toId);
    if (!ref) return openctiError(field, 'MISSING_REFERENCE_ERROR', 'Element(s) not found', 404);
    if (!o.externalReferences.includes(ref.id)) o.externalReferences.push(ref.id);
    return reply.json({ data: { stixCyberObservableEdit: { relationAdd: { id: randomUUID(), relationship_type: 'external-reference' } } } });
  }

  function handle(req: FakeRequest): FakeReply {
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      return apolloError(400, 'BAD_REQUEST', 'This operation has been blocked as a potential Cross-Site Request Forgery (CSRF).');
    }
    let body: { query?: unknown; variables?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return apolloError(400, 'BAD_REQUEST', 'POST body missing, invalid Content-Type, or JSON object has no keys.');
    }
    if (typeof body !== 'object' || body === null || typeof body.query !== 'string') return apolloError(400, 'BAD_REQUEST', 'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.');
    if (body.variables !== undefined && body.variables !== null && (typeof body.variables !== 'object' || Array.isArray(body.variables))) {
      return apolloError(400, 'BAD_REQUEST', '`variables` in a POST body should be provided as an object.');
    }
    const variables = (body.variables ?? {}) as Record<string, unknown>;
    const doc = parseDocument(body.query);
    if (!doc) return apolloError(400, 'GRAPHQL_PARSE_FAILED', 'Syntax Error: Unexpected Name.');
    const spec = FIELDS[doc.field];
    if (!spec || spec.operation !== doc.operation) {
      return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', `Cannot query field "${doc.field}" on type "${doc.operation === 'query' ? 'Query' : 'Mutation'}".`);
    }
    for (const m of doc.body.matchAll(/\$(\w+)/g)) {
      if (!doc.declared.has(m[1]!)) return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', `Variable "$${m[1]}" is not defined by operation.`);
    }
    for (const [arg, variable] of rootArguments(doc.body)) {
      const expected = spec.args[arg];
      if (!expected) return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', `Unknown argument "${arg}" on field "${doc.operation === 'query' ? 'Query' : 'Mutation'}.${doc.field}".`);
      const declared = doc.declared.get(variable)!;
      // A non-null variable may fill a nullable argument, not the other way round.
      if (declared !== expected && declared !== `${expected}!`) {
        return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', `Variable "$${variable}" of type "${declared}" used in position expecting type "${expected}".`);
      }
    }
    if (doc.field === 'stixCyberObservableEdit') {
      const relation = /\brelationAdd\s*\(\s*input\s*:\s*\$(\w+)\s*\)/.exec(doc.body);
      if (relation && doc.declared.get(relation[1]!) !== 'StixRefRelationshipAddInput!') {
        return apolloError(400, 'GRAPHQL_VALIDATION_FAILED', `Variable "$${relation[1]}" of type "${doc.declared.get(relation[1]!)}" used in position expecting type "StixRefRelationshipAddInput!".`);
      }
    }
    try {
      for (const [name, type] of doc.declared) checkValue(variables[name], type, `Variable "$${name}" got invalid value`);
    } catch (error) {
      return apolloError(400, 'BAD_USER_INPUT', (error as Error).message);
    }
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${token}`) return reply.json(authRequired(doc.field));
    calls.push({ operation: doc.operation, field: doc.field, variables, query: body.query });
    if (failure && (failure.field === undefined || failure.field === doc.field)) {
      if (failure.skip > 0) failure.skip--;
      else return failure.reply;
    }
    if (doc.operation === 'mutation' && fake.readOnly) return reply.json(forbiddenAccess(doc.field));
    try {
      switch (doc.field) {
        case 'markingDefinitions': return markingDefinitions(variables);
        case 'externalReferences': return externalReferences(variables);
        case 'externalReferenceAdd': return externalReferenceAdd(variables);
        case 'stixCyberObservables': return stixCyberObservables(variables);
        case 'stixCyberObservableAdd': return stixCyberObservableAdd(variables);
        default: return stixCyberObservableEdit(variables, doc.body);
      }
    } catch (error) {
      if (error instanceof Invalid) return openctiError(doc.field, 'UNSUPPORTED_ERROR', error.message, 500);
      throw error;
    }
  }

  fake.server = await startFakeHttp({ [`POST ${prefix}/graphql`]: handle });
  fake.url = `${fake.server.url}${prefix}`;
  return fake;
}

/** Why OpenCTI would refuse this value for this type (its observable syntax check), or undefined. */
function syntaxProblem(type: string, value: string | null, hashes: FakeHash[]): string | undefined {
  const bad = `Observable of type ${type} is not correctly formatted.`;
  switch (type) {
    case 'IPv4-Addr': return value && isIPv4(value) ? undefined : bad;
    case 'IPv6-Addr': return value && isIPv6(value) ? undefined : bad;
    case 'Domain-Name': case 'Hostname': return value && /^[a-z0-9._-]+$/i.test(value) && value === value.toLowerCase() ? undefined : bad;
    case 'Url': return value && /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(value) ? undefined : bad;
    case 'Email-Addr': return value && /^[^\s@]+@[^\s@]+$/.test(value) ? undefined : bad;
    case 'StixFile': {
      if (hashes.length === 0) return 'Stix-File must have at least one hash or a name';
      for (const h of hashes) {
        if (!HASH_ALGORITHMS.has(h.algorithm)) return `Unknown hash algorithm ${h.algorithm}`;
        const length = { MD5: 32, 'SHA-1': 40, 'SHA-256': 64 }[h.algorithm as 'MD5'];
        if (length && !new RegExp(`^[a-f0-9]{${length}}$`).test(h.hash)) return `Invalid ${h.algorithm} hash: ${h.hash}`;
      }
      return undefined;
    }
    default: return undefined;
  }
}
