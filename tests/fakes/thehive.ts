/**
 * A stand-in for TheHive 5 (5.2 or later), API v1, on the loopback: the calls that push alerts,
 * cases' observables and queries to it, checked as the server checks them and answered with its
 * shapes and errors (the OpenAPI document of docs.strangebee.com, v5.6.2; TheHive 4's open v1
 * controllers and ScalliGraph's error handler for the bodies). For the TheHive push target's tests
 * and for later work on TheHive and Cortex (`startFakeTheHive()`).
 *
 * - Authentication: `Authorization: Bearer <key>` (anything else: 401 `AuthenticationError`
 *   "Authentication failure"); `X-Organisation` chooses the organisation (the user's first one
 *   otherwise). Outside the user's organisations, or with the `read-only` profile, a write is
 *   refused with 403 `AuthorizationError` naming the permission (`manageAlert/create`,
 *   `manageObservable`), as TheHive does.
 * - `POST /api/v1/alert`: the InputCreateAlert fields only (an unknown one is a 400), their types,
 *   lengths and enums (severity 1-4, tlp 0-4 (0-3 as TheHive 5.0/5.1 with `tlpLevels: 4`), pap
 *   0-3, tags unique), observables of the default data types. The same type, source and sourceRef
 *   again in the organisation: 400 `CreateError` "Alert <type>:<source>:<sourceRef> already exist in
 *   organisation <org>". Answers 201 with the OutputAlert.
 * - `POST /api/v1/alert/{id}/observable`, `POST /api/v1/case/{id}/observable`: an observable
 *   (`data` a string or a list); an unknown alert or case is 404 `NotFoundError`; the same data
 *   type and data again is 400 `CreateError` "Observable already exists" (or TheHive 4's 207
 *   `{success, failure}` with `duplicateObservable: 207`). Answers 201 with the list made.
 * - `GET /api/v1/case/{id or number}`: the OutputCase, or 404 `NotFoundError` "Case <id> not found".
 * - `POST /api/v1/query`: `listAlert`, `getAlert`, `listCase`, `getCase` (`idOrName`), then
 *   `filter` (`_and`, `_or`, `_not`, `_eq`, `_is`, `_ne`, `_in`, `_any`, `_id`), `observables`,
 *   `sort` (kept in order made) and `page`; anything else is 400 `BadRequest`.
 *
 * Everything made is recorded (`alerts`, `cases`, each with its observables); `fail()` makes a
 * route answer 401, 403, 500, malformed JSON, an HTML page, or never answer.
 */
import { reply, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from './http.js';

export const DEFAULT_KEY = 'th5-api-key-0123456789abcdef';

/** TheHive 5's default observable data types. */
export const DATA_TYPES = [
  'autonomous-system', 'domain', 'file', 'filename', 'fqdn', 'hash', 'hostname', 'ip', 'mail',
  'mail-subject', 'other', 'regexp', 'registry', 'uri_path', 'url', 'user-agent',
] as const;

const TLP_LABELS = ['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED'];
const TLP_LABELS_BEFORE_5_2 = ['WHITE', 'GREEN', 'AMBER', 'RED'];
const PAP_LABELS = ['CLEAR', 'GREEN', 'AMBER', 'RED'];
const SEVERITY_LABELS = ['', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'];

export interface FakeObservable {
  _id: string;
  dataType: string;
  data: string;
  message?: string;
  tlp: number;
  pap: number;
  ioc: boolean;
  sighted: boolean;
  tags: string[];
  _createdAt: number;
}

export interface FakeAlert {
  _id: string;
  organisation: string;
  type: string;
  source: string;
  sourceRef: string;
  title: string;
  description: string;
  severity: number;
  date: number;
  tags: string[];
  tlp: number;
  pap: number;
  externalLink?: string;
  observables: FakeObservable[];
  _createdAt: number;
}

export interface FakeCase {
  _id: string;
  number: number;
  organisation: string;
  title: string;
  observables: FakeObservable[];
  _createdAt: number;
}

export type TheHiveFault = 'unauthorized' | 'forbidden' | 'server-error' | 'hang' | 'bad-json' | 'html';

export interface FakeTheHiveOptions {
  /** The API key the fake accepts (default DEFAULT_KEY). */
  key?: string;
  /** The user's organisations; the first is its default (default `['SOC']`). */
  organisations?: string[];
  /** `analyst` may create alerts and observables; `read-only` may only read (default analyst). */
  profile?: 'analyst' | 'read-only';
  /** How a duplicate observable is refused: TheHive 5's 400 (default) or TheHive 4's 207. */
  duplicateObservable?: 400 | 207;
  /** TLP levels the server knows: 5 (TheHive 5.2+, default) or 4 (5.0 and 5.1: RED was 3). */
  tlpLevels?: 4 | 5;
}

export interface FakeTheHive {
  url: string;
  server: FakeHttpServer;
  alerts: FakeAlert[];
  cases: FakeCase[];
  /** A case made in TheHive by an analyst (number 1, 2, ...). */
  addCase(title: string, organisation?: string): FakeCase;
  /**
   * Makes requests matching `route` (`POST /api/v1/alert`, `*` for one path segment, no method
   * for any) fail with `fault`, after `after` matching requests were answered normally.
   */
  fail(route: string, fault: TheHiveFault, options?: { after?: number }): void;
  clearFaults(): void;
  /** The fake's own answer to a request: for a test that wraps one route (`server.route('POST /api/v1/query', ...)`). */
  handle(req: FakeRequest): FakeReply;
  close(): Promise<void>;
}

/** TheHive's error bodies (ScalliGraph's `{type, message}`). */
export const errors = {
  authentication: () => reply.json({ type: 'AuthenticationError', message: 'Authentication failure' }, 401),
  authorization: (action: string, permission: string) =>
    reply.json({ type: 'AuthorizationError', message: `Your are not authorized to ${action}, you haven't the permission ${permission}` }, 403),
  notFound: (what: string) => reply.json({ type: 'NotFoundError', message: `${what} not found` }, 404),
  badRequest: (message: string) => reply.json({ type: 'BadRequest', message }, 400),
  attribute: (message: string) => reply.json({ type: 'AttributeCheckingError', message }, 400),
  create: (message: string) => reply.json({ type: 'CreateError', message }, 400),
  internal: () => reply.json({ type: 'InternalError', message: 'java.lang.IllegalStateException: Graph transaction failed' }, 500),
};

interface Fault {
  method: string | undefined;
  pattern: RegExp;
  fault: TheHiveFault;
  after: number;
  seen: number;
}

interface Caller {
  organisation: string;
  /** A member of the organisation with a profile that may write. */
  canWrite: boolean;
  member: boolean;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isInt = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

/** A string field's problem (type, length), or undefined. */
function checkString(body: Json, field: string, min: number, max: number, required: boolean): string | undefined {
  const value = body[field];
  if (value === undefined) return required ? `Missing attribute ${field}` : undefined;
  if (typeof value !== 'string') return `Invalid format for ${field}: ${JSON.stringify(value)}, expected string`;
  if (value.length < min || value.length > max) return `Invalid format for ${field}: length ${value.length} not in [${min}, ${max}]`;
  return undefined;
}

function checkEnum(body: Json, field: string, allowed: number[]): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (!isInt(value) || !allowed.includes(value)) return `Invalid format for ${field}: ${JSON.stringify(value)}, expected one of ${allowed.join(', ')}`;
  return undefined;
}

function checkTags(body: Json): string | undefined {
  const tags = body.tags;
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string' && tag.length >= 1 && tag.length <= 128)) {
    return 'Invalid format for tags: expected a list of strings of 1 to 128 characters';
  }
  if (new Set(tags).size !== tags.length) return 'Invalid format for tags: duplicate items';
  return undefined;
}

function checkUnknown(body: Json, known: readonly string[], entity: string): string | undefined {
  const unknown = Object.keys(body).filter((key) => !known.includes(key));
  return unknown.length ? `Unknown attribute ${entity}.${unknown[0]}` : undefined;
}

const OBSERVABLE_FIELDS = ['dataType', 'data', 'message', 'startDate', 'attachment', 'tlp', 'pap', 'tags', 'ioc', 'sighted', 'sightedAt', 'ignoreSimilarity', 'isZip', 'zipPassword'] as const;
const ALERT_FIELDS = ['type', 'source', 'sourceRef', 'externalLink', 'title', 'description', 'severity', 'date', 'tags', 'flag', 'tlp', 'pap', 'customFields', 'summary', 'status', 'assignee', 'caseTemplate', 'observables', 'procedures'] as const;

export async function startFakeTheHive(options: FakeTheHiveOptions = {}): Promise<FakeTheHive> {
  const key = options.key ?? DEFAULT_KEY;
  const organisations = options.organisations ?? ['SOC'];
  const tlpLevels = options.tlpLevels ?? 5;
  const tlpLabels = tlpLevels === 5 ? TLP_LABELS : TLP_LABELS_BEFORE_5_2;
  const alerts: FakeAlert[] = [];
  const cases: FakeCase[] = [];
  const faults: Fault[] = [];
  let serial = 40_964_096;
  const nextId = () => `~${(serial += 4_096)}`;
  let caseNumber = 0;

  // -- Output shapes -----------------------------------------------------------------------------

  const outputObservable = (o: FakeObservable): Json => ({
    _id: o._id, _type: 'Observable', _createdBy: 'analyst@thehive.local', _createdAt: o._createdAt,
    dataType: o.dataType, data: o.data, startDate: o._createdAt,
    tlp: o.tlp, tlpLabel: tlpLabels[o.tlp], pap: o.pap, papLabel: PAP_LABELS[o.pap],
    tags: o.tags, ioc: o.ioc, sighted: o.sighted, reports: {}, ...(o.message !== undefined ? { message: o.message } : {}),
    extraData: {}, ignoreSimilarity: false, external: false,
  });

  const outputAlert = (a: FakeAlert): Json => ({
    _id: a._id, _type: 'Alert', _createdBy: 'analyst@thehive.local', _createdAt: a._createdAt,
    type: a.type, source: a.source, sourceRef: a.sourceRef, ...(a.externalLink ? { externalLink: a.externalLink } : {}),
    title: a.title, description: a.description, severity: a.severity, severityLabel: SEVERITY_LABELS[a.severity],
    date: a.date, tags: a.tags, tlp: a.tlp, tlpLabel: tlpLabels[a.tlp], pap: a.pap, papLabel: PAP_LABELS[a.pap],
    follow: true, customFields: [], observableCount: a.observables.length, status: 'New', stage: 'New',
    extraData: {}, newDate: a._createdAt, timeToDetect: 0,
  });

  const outputCase = (c: FakeCase): Json => ({
    _id: c._id, _type: 'Case', _createdBy: 'analyst@thehive.local', _createdAt: c._createdAt,
    number: c.number, title: c.title, description: 'Opened by an analyst', severity: 2, severityLabel: 'MEDIUM',
    startDate: c._createdAt, tags: [], flag: false, tlp: 2, tlpLabel: tlpLabels[2], pap: 2, papLabel: 'AMBER',
    status: 'New', stage: 'New', extraData: {}, newDate: c._createdAt, timeToDetect: 0, access: {},
  });

  // -- Checks ------------------------------------------------------------------------------------

  const tlpValues = Array.from({ length: tlpLevels }, (_, i) => i);

  function checkObservable(body: unknown): string | undefined {
    if (!isObject(body)) return 'Invalid format for observable: expected an object';
    const problem = checkUnknown(body, OBSERVABLE_FIELDS, 'observable')
      ?? checkString(body, 'dataType', 1, 64, true)
      ?? checkString(body, 'message', 0, 1_048_576, false)
      ?? checkEnum(body, 'tlp', tlpValues)
      ?? checkEnum(body, 'pap', [0, 1, 2, 3])
      ?? checkTags(body);
    if (problem) return problem;
    for (const flag of ['ioc', 'sighted', 'ignoreSimilarity'] as const) {
      if (body[flag] !== undefined && typeof body[flag] !== 'boolean') return `Invalid format for ${flag}: expected a boolean`;
    }
    const data = body.data;
    const values = Array.isArray(data) ? data : [data];
    if (!values.every((value) => typeof value === 'string' && value.trim() !== '')) return 'Invalid format for data: expected a non-empty string or a list of them';
    return undefined;
  }

  function checkAlert(body: Json): string | undefined {
    return checkUnknown(body, ALERT_FIELDS, 'alert')
      ?? checkString(body, 'type', 1, 32, true)
      ?? checkString(body, 'source', 1, 32, true)
      ?? checkString(body, 'sourceRef', 1, 128, true)
      ?? checkString(body, 'title', 1, 512, true)
      ?? checkString(body, 'description', 0, 1_048_576, true)
      ?? checkString(body, 'externalLink', 1, 512, false)
      ?? checkEnum(body, 'severity', [1, 2, 3, 4])
      ?? checkEnum(body, 'tlp', tlpValues)
      ?? checkEnum(body, 'pap', [0, 1, 2, 3])
      ?? checkTags(body)
      ?? (body.date !== undefined && !isInt(body.date) ? 'Invalid format for date: expected a number of milliseconds' : undefined)
      ?? (body.observables !== undefined && !Array.isArray(body.observables) ? 'Invalid format for observables: expected a list' : undefined)
      ?? (Array.isArray(body.observables) ? body.observables.map(checkObservable).find(Boolean) : undefined);
  }

  // -- Observables -------------------------------------------------------------------------------

  /** The observables `body` makes in `into` (TheHive merges the same data type and data, keeping the first). */
  function makeObservables(body: Json, into: FakeObservable[]): { made: FakeObservable[]; duplicates: string[] } {
    const values = (Array.isArray(body.data) ? body.data : [body.data]) as string[];
    const made: FakeObservable[] = [];
    const duplicates: string[] = [];
    for (const data of values) {
      if (into.some((o) => o.dataType === body.dataType && o.data === data)) {
        duplicates.push(data);
        continue;
      }
      const observable: FakeObservable = {
        _id: nextId(), dataType: body.dataType as string, data,
        ...(typeof body.message === 'string' ? { message: body.message } : {}),
        tlp: (body.tlp as number | undefined) ?? 2, pap: (body.pap as number | undefined) ?? 2,
        ioc: (body.ioc as boolean | undefined) ?? false, sighted: (body.sighted as boolean | undefined) ?? false,
        tags: (body.tags as string[] | undefined) ?? [], _createdAt: Date.now(),
      };
      into.push(observable);
      made.push(observable);
    }
    return { made, duplicates };
  }

  function addObservables(body: unknown, into: FakeObservable[]): FakeReply {
    const problem = checkObservable(body);
    if (problem) return errors.attribute(problem);
    const input = body as Json;
    if (!(DATA_TYPES as readonly string[]).includes(input.dataType as string)) return errors.notFound(`ObservableType ${String(input.dataType)}`);
    const { made, duplicates } = makeObservables(input, into);
    if (duplicates.length === 0) return reply.json(made.map(outputObservable), 201);
    if (options.duplicateObservable === 207) {
      return reply.json({
        success: made.map(outputObservable),
        failure: duplicates.map((data) => ({ type: 'CreateError', message: 'Observable already exists', object: { data } })),
      }, 207);
    }
    return errors.create('Observable already exists');
  }

  // -- Routes ------------------------------------------------------------------------------------

  function createAlert(body: Json, caller: Caller): FakeReply {
    if (!caller.canWrite) return errors.authorization('create alert', 'manageAlert/create');
    const problem = checkAlert(body);
    if (problem) return errors.attribute(problem);
    const unknownType = ((body.observables ?? []) as Json[]).find((o) => !(DATA_TYPES as readonly string[]).includes(o.dataType as string));
    if (unknownType) return errors.notFound(`ObservableType ${String(unknownType.dataType)}`);
    const { type, source, sourceRef } = body as { type: string; source: string; sourceRef: string };
    if (alerts.some((a) => a.organisation === caller.organisation && a.type === type && a.source === source && a.sourceRef === sourceRef)) {
      return errors.create(`Alert ${type}:${source}:${sourceRef} already exist in organisation ${caller.organisation}`);
    }
    const now = Date.now();
    const alert: FakeAlert = {
      _id: nextId(), organisation: caller.organisation, type, source, sourceRef,
      title: body.title as string, description: body.description as string,
      severity: (body.severity as number | undefined) ?? 2, date: (body.date as number | undefined) ?? now,
      tags: (body.tags as string[] | undefined) ?? [], tlp: (body.tlp as number | undefined) ?? 2, pap: (body.pap as number | undefined) ?? 2,
      ...(typeof body.externalLink === 'string' ? { externalLink: body.externalLink } : {}),
      observables: [], _createdAt: now,
    };
    for (const observable of (body.observables ?? []) as Json[]) makeObservables(observable, alert.observables);
    alerts.push(alert);
    return reply.json(outputAlert(alert), 201);
  }

  const visibleAlert = (idOrName: string, caller: Caller) => (caller.member
    ? alerts.find((a) => a.organisation === caller.organisation && (a._id === idOrName || `${a.type};${a.source};${a.sourceRef}` === idOrName))
    : undefined);

  const visibleCase = (idOrNumber: string, caller: Caller) => (caller.member
    ? cases.find((c) => c.organisation === caller.organisation && (c._id === idOrNumber || String(c.number) === idOrNumber))
    : undefined);

  function runQuery(body: Json, caller: Caller): FakeReply {
    const operations = body.query;
    if (!Array.isArray(operations) || operations.length === 0 || !operations.every(isObject)) {
      return errors.badRequest('Invalid query: expected {"query": [operations]}');
    }
    const [first, ...rest] = operations as Json[];
    let rows: Json[];
    let entity: 'alert' | 'case' | 'observable';
    switch (first!._name) {
      case 'listAlert':
        rows = caller.member ? alerts.filter((a) => a.organisation === caller.organisation).map(outputAlert) : [];
        entity = 'alert';
        break;
      case 'getAlert': {
        if (typeof first!.idOrName !== 'string') return errors.badRequest('getAlert needs idOrName');
        const alert = visibleAlert(first!.idOrName, caller);
        rows = alert ? [outputAlert(alert)] : [];
        entity = 'alert';
        break;
      }
      case 'listCase':
        rows = caller.member ? cases.filter((c) => c.organisation === caller.organisation).map(outputCase) : [];
        entity = 'case';
        break;
      case 'getCase': {
        if (typeof first!.idOrName !== 'string') return errors.badRequest('getCase needs idOrName');
        const found = visibleCase(first!.idOrName, caller);
        rows = found ? [outputCase(found)] : [];
        entity = 'case';
        break;
      }
      default:
        return errors.badRequest(`Query ${JSON.stringify(first!._name)} not found`);
    }
    for (const operation of rest) {
      switch (operation._name) {
        case 'filter': {
          const { _name: _, ...filter } = operation;
          let keep: (row: Json) => boolean;
          try {
            keep = compileFilter(filter);
          } catch (error) {
            return errors.badRequest((error as Error).message);
          }
          rows = rows.filter(keep);
          break;
        }
        case 'observables': {
          if (entity === 'observable') return errors.badRequest('observables is not available on observables');
          const owners = rows.map((row) => (entity === 'alert' ? alerts : cases).find((o) => o._id === row._id)!);
          rows = owners.flatMap((owner) => owner.observables.map(outputObservable));
          entity = 'observable';
          break;
        }
        case 'sort':
          break;
        case 'page': {
          if (!isInt(operation.from) || !isInt(operation.to)) return errors.badRequest('page needs from and to');
          rows = rows.slice(operation.from, operation.to);
          break;
        }
        default:
          return errors.badRequest(`Query ${JSON.stringify(operation._name)} not found`);
      }
    }
    return reply.json(rows);
  }

  function route(req: FakeRequest, body: unknown, caller: Caller): FakeReply {
    const { method, path } = req;
    if (method === 'POST' && path === '/api/v1/alert') return createAlert(body as Json, caller);
    if (method === 'POST' && path === '/api/v1/query') return runQuery(body as Json, caller);
    let match = /^\/api\/v1\/alert\/([^/]+)\/observable$/.exec(path);
    if (method === 'POST' && match) {
      const alert = visibleAlert(match[1]!, caller);
      if (!alert) return errors.notFound(`Alert ${match[1]}`);
      if (!caller.canWrite) return errors.authorization('create artifact in alert', 'manageObservable');
      return addObservables(body, alert.observables);
    }
    match = /^\/api\/v1\/case\/([^/]+)\/observable$/.exec(path);
    if (method === 'POST' && match) {
      const found = visibleCase(match[1]!, caller);
      if (!found) return errors.notFound(`Case ${match[1]}`);
      if (!caller.canWrite) return errors.authorization('create observable in case', 'manageObservable');
      return addObservables(body, found.observables);
    }
    match = /^\/api\/v1\/case\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const found = visibleCase(match[1]!, caller);
      return found ? reply.json(outputCase(found)) : errors.notFound(`Case ${match[1]}`);
    }
    return reply.json({ type: 'NotFound', message: `No handler for ${method} ${path}` }, 404);
  }

  function faultFor(req: FakeRequest): FakeReply | undefined {
    const fault = faults.find((f) => (!f.method || f.method === req.method) && f.pattern.test(req.path));
    if (!fault) return undefined;
    if (fault.seen++ < fault.after) return undefined;
    switch (fault.fault) {
      case 'unauthorized':
        return errors.authentication();
      case 'forbidden':
        return errors.authorization('create alert', 'manageAlert/create');
      case 'server-error':
        return errors.internal();
      case 'hang':
        return reply.hang();
      case 'bad-json':
        return { status: req.method === 'POST' && req.path !== '/api/v1/query' ? 201 : 200, headers: { 'content-type': 'application/json' }, body: '{"_id": "~1", "trunc' };
      case 'html':
        return reply.html('<!doctype html><title>Sign in</title><form action="/login"></form>');
    }
  }

  function handle(req: FakeRequest): FakeReply {
    if (req.headers.authorization !== `Bearer ${key}`) return errors.authentication();
    const injected = faultFor(req);
    if (injected) return injected;
    const header = req.headers['x-organisation'];
    const organisation = typeof header === 'string' && header !== '' ? header : organisations[0]!;
    const member = organisations.includes(organisation);
    const caller: Caller = { organisation, member, canWrite: member && options.profile !== 'read-only' };
    let body: unknown;
    if (req.method === 'POST') {
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return errors.badRequest('Expecting application/json or multipart/form-data body');
      try {
        body = JSON.parse(req.body);
      } catch {
        return errors.badRequest('Invalid Json');
      }
      if (!isObject(body)) return errors.badRequest('Invalid Json: expected an object');
    }
    return route(req, body, caller);
  }

  const server = await startFakeHttp({ '/api/*': handle });

  return {
    url: server.url,
    server,
    alerts,
    cases,
    addCase(title, organisation = organisations[0]!) {
      const made: FakeCase = { _id: nextId(), number: ++caseNumber, organisation, title, observables: [], _createdAt: Date.now() };
      cases.push(made);
      return made;
    },
    fail(routeKey, fault, { after = 0 } = {}) {
      const [method, path] = routeKey.includes(' ') ? routeKey.split(' ', 2) as [string, string] : [undefined, routeKey];
      const pattern = new RegExp(`^${path.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
      faults.push({ method, pattern, fault, after, seen: 0 });
    },
    clearFaults: () => void (faults.length = 0),
    handle,
    close: () => server.close(),
  };
}

/** A filter of the query API as a predicate on output rows. */
function compileFilter(filter: Json): (row: Json) => boolean {
  const keys = Object.keys(filter);
  if (keys.length !== 1) throw new Error(`Invalid filter: ${JSON.stringify(filter)}`);
  const name = keys[0]!;
  const arg = filter[name];
  const field = (a: unknown): { field: string; value: unknown } => {
    if (!isObject(a) || typeof a._field !== 'string') throw new Error(`Invalid filter ${name}: expected {"_field", "_value"}`);
    return { field: a._field, value: a._value };
  };
  switch (name) {
    case '_and':
    case '_or': {
      if (!Array.isArray(arg) || !arg.every(isObject)) throw new Error(`Invalid filter ${name}: expected a list`);
      const parts = arg.map((part) => compileFilter(part as Json));
      return name === '_and' ? (row) => parts.every((p) => p(row)) : (row) => parts.some((p) => p(row));
    }
    case '_not': {
      if (!isObject(arg)) throw new Error('Invalid filter _not');
      const inner = compileFilter(arg);
      return (row) => !inner(row);
    }
    case '_any':
      return () => true;
    case '_id':
      return (row) => row._id === arg;
    case '_eq':
    case '_is': {
      const { field: f, value } = field(arg);
      return (row) => row[f] === value;
    }
    case '_ne': {
      const { field: f, value } = field(arg);
      return (row) => row[f] !== value;
    }
    case '_in': {
      if (!isObject(arg) || typeof arg._field !== 'string' || !Array.isArray(arg._values)) throw new Error('Invalid filter _in');
      const { _field: f, _values: values } = arg as { _field: string; _values: unknown[] };
      return (row) => values.includes(row[f]);
    }
    default:
      throw new Error(`Invalid filter: unknown operator ${name}`);
  }
}
