/**
 * A stand-in for MISP's write API (MISP 2.4/2.5 REST, as EventsController, AttributesController
 * and the Event/MispAttribute models of MISP 2.5.1 answer), for the MISP push target's tests
 * (src/push/misp.ts) and any test that pushes to MISP. tests/fakes/misp.ts is the engine's
 * (restSearch) and stays separate.
 *
 * - `POST /events/add`: `{"Event": {...}}` or the bare event, validated as MISP's Event model does
 *   (info, threat_level_id 1-4, analysis 0-2, distribution 0-4, date, uuid); a UUID already used
 *   is 404 "Event already exists, ..." with a Location header; a blocklisted UUID 403 "Event
 *   blocked by event blocklist."; a validation failure 403 `{"saved": false, "name": "Could not add
 *   Event", ..., "errors": {"Event": {field: [messages]}}}`; else 200 and the whole event.
 * - `GET /events/view/<id or uuid>`: the event (its attributes not deleted), or 404 "Invalid event"
 *   when it does not exist or the key's organisation cannot see it.
 * - `POST /attributes/add/<event id or uuid>`: one attribute, or a list; each validated as MISP
 *   does (type and category, the type's value format, distribution 0-5, a unique UUID, "A similar
 *   attribute already exists for this event."); 200 with those saved (`{"Attribute": {...}}` for
 *   one, `{"Attribute": [...]}` for several) and `errors` keyed `attribute_<index>`, or 403
 *   `{"saved": false, "name": "Could not add Attribute", ...}` when none is saved. 404 "Invalid
 *   event"; 403 "You do not have permission to do that." on another organisation's event.
 * - `POST /events/publish/<id>`: 200 `{"saved": true, "success": true, "name": "Job queued", ...}`.
 *
 * Every request must carry `Authorization: <key>` (else 403 "Authentication failed. ...") and
 * `Accept: application/json` (else MISP's HTML, as for a browser), and a POST with a body
 * `Content-Type: application/json` (MISP parses it as a form otherwise). A read-only role or
 * read-only key gets MISP's ACL answer, 403 "You do not have permission to use this
 * functionality.", on every write. Fields of the wrong JSON type (which MISP would coerce) are
 * refused too and noted in `violations`, so tests see the target sends MISP's types.
 *
 * Knobs: `role` ('admin', 'read-only', 'no-publish'), `readOnlyKey`, `fail(action, fault, times)`
 * (500, 401 from a proxy, a hang, malformed JSON, an HTML page), `seedEvent`, `blocklist`.
 */
import { isIP } from 'node:net';
import { startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRequest } from './http.js';

export const MISP_AUTH_FAILED = 'Authentication failed. Please make sure you pass the API key of an API enabled user along in the Authorization header.';
export const MISP_NO_PERMISSION = 'You do not have permission to use this functionality.';
export const MISP_CANNOT_MODIFY = 'You do not have permission to do that.';
export const MISP_EVENT_EXISTS = 'Event already exists, if you would like to edit it, use the url in the location header.';
export const MISP_SIMILAR_ATTRIBUTE = 'A similar attribute already exists for this event.';
export const MISP_UUID_NOT_UNIQUE = 'The UUID provided is not unique';

/** The fake's own organisation (the key's). */
export const OWN_ORG = '1';

export type MispRole = 'admin' | 'read-only' | 'no-publish';
export type MispAction = 'events/add' | 'events/view' | 'attributes/add' | 'events/publish';
export type MispFault = 'status-500' | 'status-401' | 'hang' | 'bad-json' | 'html';

export interface MispFakeAttribute {
  id: string;
  event_id: string;
  object_id: string;
  uuid: string;
  type: string;
  category: string;
  value: string;
  to_ids: boolean;
  comment: string;
  distribution: string;
  sharing_group_id: string;
  disable_correlation: boolean;
  deleted: boolean;
  timestamp: string;
  Tag: { name: string }[];
}

export interface MispFakeEvent {
  id: string;
  uuid: string;
  info: string;
  date: string;
  threat_level_id: string;
  analysis: string;
  distribution: string;
  sharing_group_id: string;
  published: boolean;
  org_id: string;
  orgc_id: string;
  timestamp: string;
  publish_timestamp: string;
  Tag: { name: string }[];
  Attribute: MispFakeAttribute[];
}

export interface MispPushFake {
  url: string;
  key: string;
  http: FakeHttpServer;
  events: MispFakeEvent[];
  /** The key's role; change it between pushes. */
  role: MispRole;
  /** Fields sent with a JSON type MISP would coerce (a string `to_ids`...): each a line. */
  violations: string[];
  /** Event UUIDs MISP refuses (a deleted event's, with MISP.enableEventBlocklisting). */
  blocklist: Set<string>;
  /** After `after` more requests of `action` ('*': any) succeed, the next `times` (default: all) fail with `fault`. */
  fail(action: MispAction | '*', fault: MispFault, times?: number, after?: number): void;
  /**
   * `GET /events/view` leaves out the attributes, as if another push were adding them at the same
   * time: the target then meets MISP's own "already exists" refusals.
   */
  staleView: boolean;
  /** An event already in MISP (another organisation's with `orgc_id`). */
  seedEvent(fields: Partial<Omit<MispFakeEvent, 'Attribute'>> & { info: string }, attributes?: Partial<MispFakeAttribute>[]): MispFakeEvent;
  event(idOrUuid: string): MispFakeEvent | undefined;
  close(): Promise<void>;
}

export interface MispPushFakeOptions {
  key?: string;
  /** A second key, flagged read-only in MISP (AuthKey.read_only): every permission but auth dropped. */
  readOnlyKey?: string;
  role?: MispRole;
}

/** The categories each type may be filed under (MispAttribute::$categoryDefinitions, the types oas writes). */
const CATEGORIES: Record<string, readonly string[]> = {
  'ip-dst': ['Network activity', 'Payload delivery', 'External analysis'],
  domain: ['Network activity', 'Payload delivery', 'External analysis'],
  hostname: ['Network activity', 'Payload delivery', 'External analysis'],
  url: ['Network activity', 'Payload delivery', 'External analysis'],
  md5: ['Payload delivery', 'Artifacts dropped', 'Payload installation', 'External analysis'],
  sha1: ['Payload delivery', 'Artifacts dropped', 'Payload installation', 'External analysis'],
  sha256: ['Payload delivery', 'Artifacts dropped', 'Payload installation', 'External analysis'],
  'email-src': ['Network activity', 'Payload delivery', 'Social network'],
  'chrome-extension-id': ['Payload delivery', 'Payload installation'],
  link: ['External analysis', 'Payload delivery', 'Antivirus detection', 'Support Tool'],
  comment: ['Other', 'Network activity', 'Payload delivery', 'External analysis', 'Support Tool'],
  text: ['Other', 'Network activity', 'Payload delivery', 'External analysis', 'Support Tool'],
};
const HASH_LENGTHS: Record<string, number> = { md5: 32, sha1: 40, sha256: 64 };
const LOWERCASED = new Set(['md5', 'sha1', 'sha256', 'hostname', 'domain', 'email-src']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DOMAIN = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9_-]{2,63}$/i;

type Fields = Record<string, unknown>;
type FieldErrors = Record<string, string[]>;

const now = (): string => String(Math.floor(Date.now() / 1000));
/** MISP's `{name, message, url}` error body (CakePHP's error400/error500 for REST). */
const errorBody = (message: string, url: string): Fields => ({ name: message, message, url });
const inList = (value: unknown, list: readonly string[]): boolean =>
  (typeof value === 'string' || typeof value === 'number') && list.includes(String(value));

export async function startMispPushFake(options: MispPushFakeOptions = {}): Promise<MispPushFake> {
  const key = options.key ?? 'misp-push-key-0123456789abcdef0123456789abcdef';
  const events: MispFakeEvent[] = [];
  const violations: string[] = [];
  const blocklist = new Set<string>();
  const faults: { action: MispAction | '*'; fault: MispFault; times: number; after: number }[] = [];
  let serial = { event: 0, attribute: 0 };

  const fake: MispPushFake = {
    url: '',
    key,
    http: undefined as unknown as FakeHttpServer,
    events,
    role: options.role ?? 'admin',
    violations,
    blocklist,
    fail: (action, fault, times = Number.POSITIVE_INFINITY, after = 0) => void faults.push({ action, fault, times, after }),
    staleView: false,
    seedEvent: (fields, attributes = []) => {
      const event = makeEvent({ orgc_id: OWN_ORG, ...fields });
      events.push(event);
      for (const attr of attributes) event.Attribute.push(makeAttribute(event, attr));
      return event;
    },
    event: (id) => findEvent(id),
    close: () => fake.http.close(),
  };

  function makeEvent(fields: Partial<MispFakeEvent> & { info: string }): MispFakeEvent {
    const id = String(++serial.event + 40);
    return {
      id,
      uuid: fields.uuid ?? `0e0e0000-0000-4000-8000-${id.padStart(12, '0')}`,
      info: fields.info,
      date: fields.date ?? new Date().toISOString().slice(0, 10),
      threat_level_id: fields.threat_level_id ?? '4',
      analysis: fields.analysis ?? '0',
      distribution: fields.distribution ?? '0',
      sharing_group_id: '0',
      published: fields.published ?? false,
      org_id: fields.org_id ?? OWN_ORG,
      orgc_id: fields.orgc_id ?? OWN_ORG,
      timestamp: now(),
      publish_timestamp: '0',
      Tag: fields.Tag ?? [],
      Attribute: [],
    };
  }

  function makeAttribute(event: MispFakeEvent, fields: Partial<MispFakeAttribute>): MispFakeAttribute {
    const id = String(++serial.attribute + 1000);
    return {
      id,
      event_id: event.id,
      object_id: '0',
      uuid: fields.uuid ?? `a77a0000-0000-4000-8000-${id.padStart(12, '0')}`,
      type: fields.type ?? 'text',
      category: fields.category ?? 'Other',
      value: fields.value ?? '',
      to_ids: fields.to_ids ?? false,
      comment: fields.comment ?? '',
      distribution: fields.distribution ?? '5',
      sharing_group_id: '0',
      disable_correlation: fields.disable_correlation ?? false,
      deleted: fields.deleted ?? false,
      timestamp: now(),
      Tag: fields.Tag ?? [],
    };
  }

  function findEvent(idOrUuid: string): MispFakeEvent | undefined {
    return events.find((e) => e.id === idOrUuid || e.uuid.toLowerCase() === idOrUuid.toLowerCase());
  }

  const visible = (event: MispFakeEvent): boolean => event.orgc_id === OWN_ORG || event.distribution !== '0';
  const canModify = (event: MispFakeEvent): boolean => event.orgc_id === OWN_ORG;

  /** The event as MISP's fetchEvent writes it (deleted attributes left out). */
  function eventJson(event: MispFakeEvent): Fields {
    return {
      Event: {
        ...event,
        attribute_count: String(event.Attribute.filter((a) => !a.deleted).length),
        proposal_email_lock: false,
        locked: false,
        disable_correlation: false,
        extends_uuid: '',
        protected: null,
        Org: { id: event.org_id, name: 'ORGNAME', uuid: '5c3c1e2a-0000-4000-8000-000000000001', local: true },
        Orgc: { id: event.orgc_id, name: event.orgc_id === OWN_ORG ? 'ORGNAME' : 'OTHER ORG', uuid: `5c3c1e2a-0000-4000-8000-${event.orgc_id.padStart(12, '0')}`, local: true },
        Attribute: event.Attribute.filter((a) => !a.deleted).map(attributeJson),
        ShadowAttribute: [],
        RelatedEvent: [],
        Galaxy: [],
        Object: [],
        EventReport: [],
        CryptographicKey: [],
        Tag: event.Tag.map((t, i) => ({ id: String(i + 1), name: t.name, colour: '#ffffff', exportable: true, user_id: '0', hide_tag: false, numerical_value: null, is_galaxy: false, is_custom_galaxy: false, local_only: false, local: 0, relationship_type: null })),
      },
    };
  }

  function attributeJson(attr: MispFakeAttribute): Fields {
    const { Tag, ...rest } = attr;
    return { ...rest, first_seen: null, last_seen: null, ...(Tag.length ? { Tag: Tag.map((t, i) => ({ id: String(i + 1), name: t.name, colour: '#ffffff', numerical_value: null })) } : {}) };
  }

  /** Notes a field of the wrong JSON type; MISP would coerce it, the fake refuses it. */
  function typed(where: string, fields: Fields, name: string, check: (value: unknown) => boolean, want: string, errors: FieldErrors): void {
    if (!(name in fields)) return;
    if (check(fields[name])) return;
    violations.push(`${where}.${name}: expected ${want}, got ${JSON.stringify(fields[name])}`);
    (errors[name] ??= []).push(`expected ${want} (fake MISP's check of the JSON types)`);
  }

  function validateEvent(data: Fields): FieldErrors {
    const errors: FieldErrors = {};
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    if (typeof data.info !== 'string' || data.info.trim() === '') add('info', 'This field cannot be left empty.');
    if (data.threat_level_id !== undefined && !inList(data.threat_level_id, ['1', '2', '3', '4'])) add('threat_level_id', 'Options : 1, 2, 3, 4 (for High, Medium, Low, Undefined)');
    if (data.analysis !== undefined && !inList(data.analysis, ['0', '1', '2'])) add('analysis', 'Options : 0, 1, 2 (for Initial, Ongoing, Completed)');
    if (data.distribution !== undefined && !inList(data.distribution, ['0', '1', '2', '3', '4'])) add('distribution', 'Options : Your organisation only, This community only, Connected communities, All communities');
    if (String(data.distribution) === '4') add('sharing_group_id', 'If the distribution is set to "Sharing Group", a sharing group has to be selected.');
    if (data.date !== undefined && !(typeof data.date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(data.date))) add('date', 'Expected date format: YYYY-MM-DD');
    if (data.uuid !== undefined && !(typeof data.uuid === 'string' && UUID.test(data.uuid))) add('uuid', 'Please provide a valid RFC 4122 UUID');
    typed('Event', data, 'info', (v) => typeof v === 'string', 'a string', errors);
    typed('Event', data, 'published', (v) => typeof v === 'boolean', 'a boolean', errors);
    typed('Event', data, 'distribution', (v) => typeof v === 'string', "a string ('0'-'4')", errors);
    typed('Event', data, 'threat_level_id', (v) => typeof v === 'string', "a string ('1'-'4')", errors);
    typed('Event', data, 'Tag', isTagList, 'a list of {"name": string}', errors);
    return errors;
  }

  /** An attribute as MispAttribute's validation sees it (after modifyBeforeValidation). */
  function validateAttribute(event: MispFakeEvent, data: Fields, index: number): FieldErrors {
    const errors: FieldErrors = {};
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    const where = `Attribute[${index}]`;
    for (const name of ['type', 'category', 'value', 'comment', 'uuid']) typed(where, data, name, (v) => typeof v === 'string', 'a string', errors);
    typed(where, data, 'to_ids', (v) => typeof v === 'boolean', 'a boolean', errors);
    typed(where, data, 'disable_correlation', (v) => typeof v === 'boolean', 'a boolean', errors);
    typed(where, data, 'distribution', (v) => typeof v === 'string', "a string ('0'-'5')", errors);
    typed(where, data, 'Tag', isTagList, 'a list of {"name": string}', errors);
    const type = typeof data.type === 'string' ? data.type : '';
    const categories = CATEGORIES[type];
    if (!categories) add('type', 'Options depend on the selected category.');
    else if (typeof data.category === 'string' && !categories.includes(data.category)) add('category', 'Options : Payload delivery, Antivirus detection, Payload installation, Files dropped ...');
    if (data.category === undefined) add('category', 'Options : Payload delivery, Antivirus detection, Payload installation, Files dropped ...');
    if (!inList(data.distribution ?? '5', ['0', '1', '2', '3', '4', '5'])) add('distribution', 'Options: Your organisation only, This community only, Connected communities, All communities, Sharing group, Inherit event');
    const value = typeof data.value === 'string' ? normalised(type, data.value) : '';
    if (value.trim() === '') add('value', 'This field cannot be left empty.');
    else {
      const problem = valueProblem(type, value);
      if (problem) add('value', problem);
      else if (event.Attribute.some((a) => !a.deleted && a.type === type && a.category === data.category && a.value === value)) add('value', MISP_SIMILAR_ATTRIBUTE);
    }
    if (data.uuid !== undefined) {
      if (typeof data.uuid !== 'string' || !UUID.test(data.uuid)) add('uuid', 'Please provide a valid RFC 4122 UUID');
      else if (events.some((e) => e.Attribute.some((a) => a.uuid.toLowerCase() === (data.uuid as string).toLowerCase()))) add('uuid', MISP_UUID_NOT_UNIQUE);
    }
    return errors;
  }

  function saveAttribute(event: MispFakeEvent, data: Fields): MispFakeAttribute {
    const type = String(data.type);
    const attr = makeAttribute(event, {
      ...(typeof data.uuid === 'string' ? { uuid: data.uuid.toLowerCase() } : {}),
      type,
      category: String(data.category),
      value: normalised(type, String(data.value)),
      to_ids: data.to_ids === true,
      comment: typeof data.comment === 'string' ? data.comment : '',
      distribution: String(data.distribution ?? '5'),
      disable_correlation: data.disable_correlation === true,
      Tag: isTagList(data.Tag) ? (data.Tag as { name: string }[]).map((t) => ({ name: t.name })) : [],
    });
    event.Attribute.push(attr);
    return attr;
  }

  function eventsAdd(req: FakeRequest, body: unknown): FakeReply {
    if (fake.role === 'read-only' || readOnly(req)) return reply403(MISP_NO_PERMISSION, req.path);
    let data = asFields(body);
    if (data === undefined) return { status: 405, json: errorBody('No valid event data received.', req.path) };
    if (isFields(data.Event)) data = data.Event;
    const uuid = typeof data.uuid === 'string' ? data.uuid.toLowerCase() : undefined;
    if (uuid && blocklist.has(uuid)) return reply403('Event blocked by event blocklist.', req.path);
    const existing = uuid ? events.find((e) => e.uuid === uuid) : undefined;
    if (existing) {
      return { status: 404, headers: { location: `${fake.url}/events/${existing.id}` }, json: errorBody(MISP_EVENT_EXISTS, req.path) };
    }
    const errors = validateEvent(data);
    if (Object.keys(errors).length > 0) return saveFail('Event', req.path, { Event: errors });
    const event = makeEvent({
      info: String(data.info),
      ...(uuid ? { uuid } : {}),
      ...(data.date !== undefined ? { date: String(data.date) } : {}),
      threat_level_id: String(data.threat_level_id ?? '4'),
      analysis: String(data.analysis ?? '0'),
      distribution: String(data.distribution ?? '0'),
      published: data.published === true && fake.role !== 'no-publish',
      Tag: isTagList(data.Tag) ? (data.Tag as { name: string }[]).map((t) => ({ name: t.name })) : [],
    });
    events.push(event);
    for (const [index, attr] of (Array.isArray(data.Attribute) ? data.Attribute : []).entries()) {
      if (isFields(attr) && Object.keys(validateAttribute(event, attr, index)).length === 0) saveAttribute(event, attr);
    }
    return { status: 200, json: eventJson(event) };
  }

  function eventsView(req: FakeRequest, id: string): FakeReply {
    const event = /^\d+$/.test(id) || UUID.test(id) ? findEvent(id) : undefined;
    if (!event || !visible(event)) return { status: 404, json: errorBody('Invalid event', req.path) };
    const json = eventJson(event);
    if (fake.staleView) (json.Event as Fields).Attribute = [];
    return { status: 200, json };
  }

  function attributesAdd(req: FakeRequest, id: string, body: unknown): FakeReply {
    if (fake.role === 'read-only' || readOnly(req)) return reply403(MISP_NO_PERMISSION, req.path);
    const event = findEvent(id);
    if (!event || !visible(event)) return { status: 404, json: errorBody('Invalid event', req.path) };
    if (!canModify(event)) return reply403(MISP_CANNOT_MODIFY, req.path);
    let list: unknown[];
    if (Array.isArray(body)) list = body;
    else if (isFields(body) && Array.isArray(body.Attribute)) list = body.Attribute;
    else if (isFields(body)) list = [isFields(body.Attribute) ? body.Attribute : body];
    else return { status: 405, json: errorBody('No valid attribute data received.', req.path) };
    const saved: MispFakeAttribute[] = [];
    const fails: Record<string, FieldErrors> = {};
    list.forEach((item, index) => {
      const data = isFields(item) ? item : {};
      const errors = validateAttribute(event, data, index);
      if (Object.keys(errors).length > 0) fails[`attribute_${index}`] = errors;
      else saved.push(saveAttribute(event, data));
    });
    if (saved.length > 0) {
      event.published = false; // MISP unpublishes an event its attributes changed
      event.timestamp = now();
      const errors = Object.keys(fails).length > 0 ? { errors: fails } : {};
      if (saved.length === 1) return { status: 200, json: { Attribute: attributeJson(saved[0]!), AttributeTag: [], ...errors } };
      return { status: 200, json: { Attribute: saved.map(attributeJson), ...errors } };
    }
    // RestResponse::saveFailResponse; a batch of one gets its field errors themselves.
    return saveFail('Attribute', '/attributes/add', list.length === 1 ? fails.attribute_0 : fails);
  }

  function eventsPublish(req: FakeRequest, id: string): FakeReply {
    if (fake.role === 'read-only' || fake.role === 'no-publish' || readOnly(req)) return reply403(MISP_NO_PERMISSION, req.path);
    const event = findEvent(id);
    if (!event) return { status: 404, json: errorBody('Invalid event.', req.path) };
    if (!canModify(event)) return { status: 405, json: errorBody('You do not have the permission to do that.', req.path) };
    event.published = true;
    event.publish_timestamp = now();
    return { status: 200, json: { saved: true, success: true, name: 'Job queued', message: 'Job queued', url: `/events/publish/${event.id}`, id: event.id } };
  }

  const readOnly = (req: FakeRequest): boolean => options.readOnlyKey !== undefined && req.headers.authorization === options.readOnlyKey;

  function takeFault(action: MispAction): MispFault | undefined {
    const found = faults.find((f) => (f.action === action || f.action === '*') && f.times > 0);
    if (!found) return undefined;
    if (found.after > 0) {
      found.after--;
      return undefined;
    }
    found.times--;
    return found.fault;
  }

  function faultReply(fault: MispFault, path: string): FakeReply {
    switch (fault) {
      case 'status-500':
        return { status: 500, json: errorBody('An Internal Error Has Occurred.', path) };
      case 'status-401':
        return { status: 401, headers: { 'www-authenticate': 'Basic realm="MISP"' }, body: '<html><body>401 Authorization Required</body></html>' };
      case 'hang':
        return { hang: true };
      case 'bad-json':
        return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"Event": {"id": "4' };
      case 'html':
        return { status: 200, headers: { 'content-type': 'text/html; charset=UTF-8' }, body: '<!DOCTYPE html><html><head><title>Users - MISP</title></head><body>Login</body></html>' };
    }
  }

  /** Which action a request is, and its id. */
  function route(req: FakeRequest): { action: MispAction; id: string } | undefined {
    if (req.path === '/events/add') return { action: 'events/add', id: '' };
    const match = /^\/(events\/view|attributes\/add|events\/publish)\/([^/]+)$/.exec(req.path);
    return match ? { action: match[1] as MispAction, id: match[2]! } : undefined;
  }

  async function handle(req: FakeRequest): Promise<FakeReply> {
    const which = route(req);
    const fault = which ? takeFault(which.action) : undefined;
    if (fault) return faultReply(fault, req.path);
    const auth = req.headers.authorization;
    if (!auth || (auth !== key && auth !== options.readOnlyKey)) return reply403(MISP_AUTH_FAILED, req.path);
    if (!String(req.headers.accept ?? '').includes('application/json')) return faultReply('html', req.path);
    if (!which) return { status: 404, json: errorBody(`Controller or action not found for ${req.path}.`, req.path) };
    const wantsPost = which.action !== 'events/view';
    if (wantsPost !== (req.method === 'POST')) {
      violations.push(`${req.method} ${req.path}: MISP expects ${wantsPost ? 'POST' : 'GET'}`);
      return { status: 405, json: errorBody('Method Not Allowed', req.path) };
    }
    let body: unknown;
    if (req.body !== '') {
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
        violations.push(`${req.path}: body without Content-Type: application/json`);
        return faultReply('html', req.path);
      }
      try {
        body = JSON.parse(req.body);
      } catch {
        return { status: 405, json: errorBody('Invalid JSON input. Make sure that the JSON input is a correctly formatted JSON string. This request has been blocked to avoid an unfiltered request.', req.path) };
      }
    }
    switch (which.action) {
      case 'events/add':
        return eventsAdd(req, body);
      case 'events/view':
        return eventsView(req, which.id);
      case 'attributes/add':
        return attributesAdd(req, which.id, body);
      case 'events/publish':
        return eventsPublish(req, which.id);
    }
  }

  fake.http = await startFakeHttp({ '*': handle });
  fake.url = fake.http.url;
  return fake;
}

function reply403(message: string, url: string): FakeReply {
  return { status: 403, json: errorBody(message, url) };
}

/** RestResponseComponent::saveFailResponse. */
function saveFail(model: 'Event' | 'Attribute', url: string, errors: unknown): FakeReply {
  const message = `Could not add ${model}`;
  return { status: 403, json: { saved: false, name: message, message, url, errors } };
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asFields(value: unknown): Fields | undefined {
  return isFields(value) ? value : undefined;
}

function isTagList(value: unknown): boolean {
  return Array.isArray(value) && value.every((t) => isFields(t) && typeof t.name === 'string' && t.name !== '');
}

/** MISP's modifyBeforeValidation: hashes, host names and e-mail addresses in lower case. */
function normalised(type: string, value: string): string {
  return LOWERCASED.has(type) ? value.toLowerCase() : value;
}

/** MISP's per-type value check (AttributeValidationTool::validate), for the types oas writes. */
function valueProblem(type: string, value: string): string | undefined {
  const length = HASH_LENGTHS[type];
  if (length !== undefined) {
    return new RegExp(`^[0-9a-f]{${length}}$`).test(value)
      ? undefined
      : `Checksum has an invalid length or format (expected: ${length} hexadecimal characters). Please double check the value or select type "other".`;
  }
  switch (type) {
    case 'ip-dst':
      return isIP(value) ? undefined : 'IP address has an invalid format.';
    case 'domain':
    case 'hostname':
      return DOMAIN.test(value) ? undefined : `${type[0]!.toUpperCase()}${type.slice(1)} has an invalid format. Please double check the value or select type "other".`;
    case 'email-src':
      return /^.[^\s]*@.*\..*$/i.test(value) ? undefined : 'Email address has an invalid format. Please double check the value or select type "other".';
    case 'link':
      return /^[a-z][a-z0-9+.-]*:\/\/[^\s]+$/i.test(value) ? undefined : 'Value not in the right type/format. Please double check the value or select type "other".';
    case 'url':
    case 'chrome-extension-id':
      return value.includes('\n') ? 'Value must not contain new line character.' : undefined;
    default:
      return undefined;
  }
}
