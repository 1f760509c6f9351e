/**
 * MISP target of `oas push` (issue 37): an analysis's observables as attributes of a MISP event,
 * over MISP's REST API (MISP 2.4 and 2.5; checked against MISP 2.5.1's EventsController,
 * AttributesController, Event and MispAttribute models, and PyMISP's add_event, add_attribute and
 * publish).
 *
 * Without `event_id` the analysis gets its own event: `POST /events/add` with `{"Event": {...}}`,
 * of a UUID derived from the analysis id (the same one `oas export --format misp` writes, so an
 * imported export and a push are one event), info `oas analysis <id>`, the threat level of the
 * analysis's worst verdict, the `tlp:` and `PAP:` taxonomy tags and a distribution that follows
 * the TLP (settings.distribution for CLEAR and GREEN, at most 1 for AMBER, 0 for AMBER+STRICT, RED
 * and an analysis without a marking). MISP refuses a second event of that UUID ("Event already
 * exists, if you would like to edit it, use the url in the location header.", a 404 with a
 * Location header), so a second push reads the event back (`GET /events/view/<uuid>`) and adds
 * what it lacks. With `event_id` (`--event`) the attributes go into that event, read first with
 * `GET /events/view/<id>` (404 `Invalid event` when it does not exist or the key cannot see it);
 * their distribution then follows the TLP too (the event's own may be wider) and they carry the
 * marking's tags.
 *
 * Attributes are added in batches: `POST /attributes/add/<event id>` with a JSON list. MISP saves
 * each one it can and answers 200 with those saved (`{"Attribute": {...}}` for one, a list for
 * several) and `errors` keyed `attribute_<index>` for the others; when none is saved it answers
 * 403 `{"saved": false, "name": "Could not add Attribute", "errors": ...}` (the field errors
 * themselves for a batch of one). "A similar attribute already exists for this event." and "The
 * UUID provided is not unique" mean the attribute is already there; any other error is a refusal
 * (a value that fails the type's validation). Each attribute has a UUID derived from the analysis,
 * the event and the value, `to_ids` only for a malicious observable, and a plain-text comment with
 * the verdict, its reasons and the engines' summaries (MISP shows comments as text). One more
 * attribute links back to the analysis (`link`, External analysis).
 *
 * `settings.publish` publishes the event this target made (`POST /events/publish/<id>`; MISP
 * unpublishes an event when attributes are added, so a later push that adds any publishes again);
 * an event given with `--event` is never published by oas.
 *
 * Requests carry the key as `Authorization: <key>` and `Accept: application/json`. MISP answers a
 * key it does not know with 403 `{"name": "Authentication failed. Please make sure you pass the API
 * key of an API enabled user along in the Authorization header.", "message": ..., "url": ...}`,
 * and a key whose role lacks the permission (a read-only role, or a read-only key) with 403 "You do
 * not have permission to use this functionality.": both are "key refused". Retrying a POST is safe:
 * the event's and attributes' fixed UUIDs make a repeated one an "already exists".
 */
import * as v from 'valibot';
import { jsonObject, parseWith } from '../http/client.js';
import { BadResponseError, HttpStatusError, statusError } from '../http/errors.js';
import { clip, plainText } from '../export/common.js';
import { mispType } from '../export/misp.js';
import { OAS_NAMESPACE, uuidv5 } from '../export/uuid.js';
import { papLabel, type Pap, type Tlp } from '../marking/levels.js';
import type { Verdict } from '../verdict/verdict.js';
import {
  PushError,
  TARGET_LABELS,
  type PushAnalysis,
  type PushContext,
  type PushObservable,
  type PushOutcome,
  type PushRequest,
  type PushTarget,
  type TargetSettings,
} from './types.js';
import { platformHost } from './wording.js';

const LABEL = TARGET_LABELS.misp;
/** MISP's threat levels: 1 High, 2 Medium, 3 Low, 4 Undefined. */
const THREAT_LEVEL: Record<Verdict, string> = { malicious: '1', suspicious: '2', clean: '3', unknown: '4' };
/** Longest comment written (MISP keeps up to 65535 bytes; 4000 characters stay well under it in UTF-8). */
const COMMENT_MAX = 4000;
/** Attributes per `POST /attributes/add` request. */
const BATCH = 100;
/** Longest piece of MISP's own text quoted in a message. */
const QUOTE_MAX = 240;
/** Statuses MISP answers with a JSON body worth reading (its refusals); 429 and 5xx are the client's to retry. */
const READ_STATUSES = [400, 401, 403, 404, 405] as const;
/** MISP's event distributions a push may choose: 0 your organisation, 1 this community, 2 connected communities, 3 all. */
const MAX_DISTRIBUTION = 3;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The distribution of an analysis's event: settings.distribution for CLEAR and GREEN, at most 1 for AMBER, else 0. */
export function eventDistribution(tlp: Tlp | undefined, setting: number): number {
  switch (tlp) {
    case 'CLEAR':
    case 'GREEN':
      return setting;
    case 'AMBER':
      return Math.min(setting, 1);
    default:
      return 0; // AMBER+STRICT, RED, and an analysis without a marking
  }
}

/** The `tlp:` and `PAP:` tags of a marking, as MISP's taxonomies spell them; none for an analysis without one. */
export function markingTags(tlp: Tlp | undefined, pap: Pap | undefined): { name: string }[] {
  const tags: { name: string }[] = [];
  if (tlp) tags.push({ name: `tlp:${tlp.toLowerCase()}` });
  if (tlp && pap) tags.push({ name: papLabel(pap) });
  return tags;
}

/** The event's UUID: the same as `oas export --format misp`. */
export const eventUuid = (analysisId: string): string => uuidv5(OAS_NAMESPACE, `misp-event:${analysisId}`);

/** The MISP event this push writes into: its id, UUID and the attributes it already holds. */
interface MispEvent {
  id: string;
  uuid: string;
  attributes: { uuid: string; key: string }[];
}

/** One attribute to add; `observable` false for the link back to the analysis. */
interface Planned {
  body: Record<string, unknown>;
  uuid: string;
  key: string;
  label: string;
  observable: boolean;
}

const idSchema = v.pipe(
  v.union([v.string(), v.number()]),
  v.transform(String),
  v.check((id) => /^\d+$/.test(id), 'expected a numeric id'),
);
const eventSchema = jsonObject({
  Event: jsonObject({
    id: idSchema,
    uuid: v.string(),
    Attribute: v.optional(v.array(jsonObject({ uuid: v.optional(v.string()), type: v.string(), value: v.string() }))),
  }),
});
/** MISP's answers of refusal: `{name, message, url}`, and `saved`/`errors` for a validation refusal. */
const refusalSchema = jsonObject({
  name: v.optional(v.string()),
  message: v.optional(v.string()),
  saved: v.optional(v.boolean()),
  errors: v.optional(v.unknown()),
});
const savedAttribute = jsonObject({ uuid: v.string() });
const attributesAnswer = jsonObject({
  Attribute: v.union([savedAttribute, v.array(savedAttribute)]),
  errors: v.optional(v.unknown()),
});
const publishAnswer = jsonObject({ saved: v.optional(v.boolean()), message: v.optional(v.string()) });

/** An answer of MISP's: its status, JSON body (undefined when it is none) and Location header. */
interface Answer {
  status: number;
  body: unknown;
  location: string | undefined;
}

/** One push to MISP: its requests, what they made, and the one line said at the end or on failure. */
class MispPush {
  private readonly settings: TargetSettings;
  private readonly host: string;
  private readonly items: PushObservable[];
  private event: MispEvent | undefined;
  private how: 'created' | 'found' | 'given' = 'given';
  private added = 0;
  private existing = 0;
  private published = false;

  constructor(
    private readonly request: PushRequest,
    private readonly context: PushContext,
  ) {
    this.settings = context.settings;
    this.host = platformHost(context.settings.url);
    this.items = dedupe(request.items);
  }

  async run(): Promise<PushOutcome> {
    const { analysis } = this.request;
    if (this.items.length === 0) return this.nothingToPush();
    const distribution = this.distribution();
    this.event = this.request.event_id !== undefined ? await this.givenEvent(this.request.event_id) : await this.ownEvent(distribution);
    const planned = plan(this.items, analysis, this.event, this.how === 'given' ? distribution : undefined);
    const missing = this.notThere(planned);
    const refused = await this.addAll(missing);
    if (refused.length > 0) throw this.refusedError(refused);
    if (this.settings.publish && this.how !== 'given' && (this.how === 'created' || this.added > 0)) await this.publish();
    return this.outcome();
  }

  /** Nothing at or above the threshold: no request, nothing made. */
  private nothingToPush(): PushOutcome {
    const id = this.request.event_id ?? '';
    return {
      target: 'misp',
      kind: 'event',
      id,
      created: false,
      added: 0,
      existing: 0,
      line: `${LABEL}: no observables to push for analysis ${this.request.analysis.id}; nothing created${id ? ` in event ${id}` : ''}`,
    };
  }

  /** The event's distribution, the setting checked first. */
  private distribution(): number {
    const setting = this.settings.distribution;
    if (!Number.isInteger(setting) || setting < 0 || setting > MAX_DISTRIBUTION) {
      throw this.error(`distribution ${String(setting)} is no MISP event distribution (0 your organisation only, 1 this community only, 2 connected communities, 3 all communities) (check push.misp.distribution)`);
    }
    return eventDistribution(this.request.analysis.tlp, setting);
  }

  /** `--event ID`: that event, as MISP has it (a numeric id or a UUID). */
  private async givenEvent(id: string): Promise<MispEvent> {
    this.how = 'given';
    if (!/^\d+$/.test(id) && !UUID.test(id)) {
      throw this.error(`"${clip(plainText(id), 60)}" is no MISP event id (a number or a UUID) (check --event)`);
    }
    const step = `reading event ${id}`;
    const answer = await this.send(step, 'GET', `/events/view/${encodeURIComponent(id)}`);
    if (answer.status === 404) {
      throw this.error(`event ${id} not found: ${this.said(answer)} (check --event: it must exist and be visible to the key's organisation)`, 404);
    }
    this.expectOk(step, answer);
    return readEvent(answer.body, step, this);
  }

  /** The analysis's own event: made now, or found as an earlier push (or an imported export) made it. */
  private async ownEvent(distribution: number): Promise<MispEvent> {
    const { analysis } = this.request;
    const uuid = eventUuid(analysis.id);
    const answer = await this.send('adding the event', 'POST', '/events/add', { Event: eventBody(analysis, uuid, distribution) });
    if (alreadyExists(answer)) {
      this.how = 'found';
      const view = await this.send('reading the existing event', 'GET', `/events/view/${uuid}`);
      if (view.status === 404) {
        throw this.error(`the event of UUID ${uuid} exists in MISP${locationId(answer) ? ` (event ${locationId(answer)})` : ''} but this key cannot see it (check the key's organisation, or push into an event of yours with --event)`, 404);
      }
      this.expectOk('reading the existing event', view);
      return readEvent(view.body, 'reading the existing event', this);
    }
    this.expectOk('adding the event', answer);
    this.how = 'created';
    const event = readEvent(answer.body, 'adding the event', this);
    if (event.uuid !== uuid) throw this.error(`adding the event: MISP answered with an event of another UUID (${clip(plainText(event.uuid), 40)}) (check ${this.settings.urlSource})`);
    return event;
  }

  /** The planned attributes the event does not hold yet; the observables it holds are counted as existing. */
  private notThere(planned: Planned[]): Planned[] {
    const uuids = new Set(this.event!.attributes.map((a) => a.uuid));
    const keys = new Set(this.event!.attributes.map((a) => a.key));
    return planned.filter((p) => {
      const there = uuids.has(p.uuid) || keys.has(p.key);
      if (there && p.observable) this.existing++;
      return !there;
    });
  }

  /** Adds `missing` in batches; answers the attributes MISP refused (with why). */
  private async addAll(missing: Planned[]): Promise<string[]> {
    const refused: string[] = [];
    for (let start = 0; start < missing.length; start += BATCH) {
      refused.push(...(await this.addBatch(missing.slice(start, start + BATCH))));
    }
    return refused;
  }

  private async addBatch(batch: Planned[]): Promise<string[]> {
    const step = 'adding attributes';
    const answer = await this.send(step, 'POST', `/attributes/add/${this.event!.id}`, batch.map((p) => p.body));
    if (answer.status === 404) throw this.error(`${this.progress()}${step} failed: event ${this.event!.id} not found: ${this.said(answer)} (it was deleted meanwhile?${this.how === 'given' ? ' check --event' : ''})`, 404);
    let saved: Set<string>;
    let errors: Record<string, unknown>;
    if (answer.status === 403 && isSaveFailure(answer.body)) {
      saved = new Set();
      const raw = (answer.body as { errors?: unknown }).errors;
      // A batch of one gets its field errors themselves, several get them keyed attribute_<index>.
      errors = batch.length === 1 ? { attribute_0: raw } : asRecord(raw);
    } else {
      this.expectOk(step, answer);
      const parsed = this.parse(attributesAnswer, answer.body, step);
      saved = new Set((Array.isArray(parsed.Attribute) ? parsed.Attribute : [parsed.Attribute]).map((a) => a.uuid.toLowerCase()));
      errors = asRecord(parsed.errors);
    }
    return this.tally(batch, saved, errors);
  }

  /** Counts a batch's outcome: saved (added), "already exists" (existing), anything else refused. */
  private tally(batch: Planned[], saved: Set<string>, errors: Record<string, unknown>): string[] {
    const refused: string[] = [];
    batch.forEach((p, index) => {
      if (saved.has(p.uuid)) {
        if (p.observable) this.added++;
        return;
      }
      const why = describeErrors(errors[`attribute_${index}`]);
      if (/already exists|not unique/i.test(why)) {
        if (p.observable) this.existing++;
        return;
      }
      refused.push(`${p.label}: ${clip(why || 'MISP did not save it and said nothing', QUOTE_MAX)}`);
    });
    return refused;
  }

  private refusedError(refused: string[]): PushError {
    const shown = refused.slice(0, 3).join('; ') + (refused.length > 3 ? `; and ${refused.length - 3} more` : '');
    return this.error(`${this.state()}; ${refused.length} refused by MISP: ${shown} (MISP checks each value against its attribute type; see the event's attributes)`, 403);
  }

  private async publish(): Promise<void> {
    const step = 'publishing the event';
    const answer = await this.send(step, 'POST', `/events/publish/${this.event!.id}`);
    if (answer.status === 403 || answer.status === 405) {
      throw this.error(`${this.progress()}${step} failed: ${this.said(answer)} (the key's role may not publish: give it the publish permission, or set push.misp.publish to false)`, answer.status);
    }
    this.expectOk(step, answer);
    const parsed = this.parse(publishAnswer, answer.body, step);
    if (parsed.saved === false) throw this.error(`${this.progress()}${step} failed: ${this.said(answer)} (see MISP's logs)`, answer.status);
    this.published = true;
  }

  private outcome(): PushOutcome {
    const { id } = this.event!;
    const link = `${this.settings.url}/events/view/${id}`;
    const what = this.how === 'created' ? ' created' : this.how === 'found' ? ' found' : '';
    const line = `${LABEL} event ${id}${what}${this.published ? `${what ? ' and' : ''} published` : ''}: ${this.counts()} (${link})`;
    return { target: 'misp', kind: 'event', id, link, created: this.how === 'created', added: this.added, existing: this.existing, line };
  }

  /** `3 attributes added, 1 already there`. */
  private counts(): string {
    const added = `${this.added} attribute${this.added === 1 ? '' : 's'} added`;
    return this.existing > 0 ? `${added}, ${this.existing} already there` : added;
  }

  /** What is done so far, for a failure's line: `event 42 created, 2 of 5 attributes added`. */
  private state(): string {
    const event = this.event ? `event ${this.event.id} ${this.how}, ` : '';
    const total = this.items.length;
    const there = this.existing > 0 ? `, ${this.existing} already there` : '';
    return `${event}${this.added} of ${total} attribute${total === 1 ? '' : 's'} added${there}`;
  }

  /** `event 42 created, 2 of 5 attributes added, then ` once an event is known, else nothing. */
  private progress(): string {
    return this.event ? `${this.state()}, then ` : '';
  }

  /** One request with the key and MISP's JSON headers; MISP's refusals come back as answers to read. */
  private async send(step: string, method: 'GET' | 'POST', path: string, json?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: this.settings.credential, accept: 'application/json' };
    let response;
    try {
      response = await this.context.http.request(`${this.settings.url}${path}`, {
        method,
        headers,
        ...(json !== undefined ? { json } : {}),
        acceptStatus: READ_STATUSES,
      });
    } catch (error) {
      throw this.transportError(step, error);
    }
    const text = response.text();
    let body: unknown;
    try {
      body = text.trim() === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
      if (response.status < 300) throw this.error(`${this.progress()}${step} failed: MISP answered with malformed JSON (check ${this.settings.urlSource}: it must be MISP's base URL)`, response.status);
    }
    const answer: Answer = { status: response.status, body, location: response.headers.location };
    if (answer.status === 401 || (answer.status === 403 && isAuthFailure(body))) {
      throw this.error(`${this.progress()}${step} failed: ${this.said(answer)} (key refused: check ${this.settings.credentialSource})`, answer.status);
    }
    return answer;
  }

  /** A 2xx answer, else the refusal in one line (a read-only key's 403 is a key refused). */
  private expectOk(step: string, answer: Answer): void {
    if (answer.status >= 200 && answer.status < 300) return;
    const hint = answer.status === 403 && isPermissionRefusal(answer.body)
      ? `key refused: a read-only role or key may not write to MISP; check ${this.settings.credentialSource}`
      : refusalHint(answer, this.settings.urlSource);
    throw this.error(`${this.progress()}${step} failed: ${this.said(answer)} (${hint})`, answer.status);
  }

  /** Validates a 2xx body; a mismatch says what MISP answered was not what MISP answers. */
  parse<S extends v.GenericSchema>(schema: S, body: unknown, step: string): v.InferOutput<S> {
    try {
      return parseWith(schema, body);
    } catch (error) {
      const why = error instanceof BadResponseError ? error.message.replace('upstream', 'MISP') : String(error);
      throw this.error(`${this.progress()}${step} failed: ${why} (check ${this.settings.urlSource}: it must be MISP's base URL)`);
    }
  }

  /** `HTTP 403 Forbidden: <MISP's message>: <its errors>`, MISP's text made one plain line. */
  private said(answer: Answer): string {
    const status = statusError(answer.status).message;
    const parsed = v.safeParse(refusalSchema, answer.body);
    if (!parsed.success) return status;
    const { message, name, errors } = parsed.output;
    const detail = [message ?? name, describeErrors(errors)].filter((s) => s !== undefined && s !== '').join(': ');
    return detail ? `${status}: ${clip(this.context.http.redact(detail), QUOTE_MAX)}` : status;
  }

  /** A timeout, a refused connection, a 5xx (after the client's retries) or a 429, in one line. */
  private transportError(step: string, error: unknown): PushError {
    const message = error instanceof Error ? error.message : String(error);
    const status = error instanceof HttpStatusError ? error.status : undefined;
    const check = status === 429 ? 'MISP is throttling: try again later' : `check ${this.settings.urlSource}`;
    return this.error(`${this.progress()}${step} failed: ${this.context.http.redact(message)} (${check})`, status);
  }

  error(what: string, status?: number): PushError {
    return new PushError('misp', `${LABEL} at ${this.host}: ${what}`, status);
  }
}

/** The event `POST /events/add` makes. */
function eventBody(analysis: PushAnalysis, uuid: string, distribution: number): Record<string, unknown> {
  const date = /^\d{4}-\d{2}-\d{2}/.test(analysis.created_at) ? analysis.created_at.slice(0, 10) : new Date().toISOString().slice(0, 10);
  return {
    uuid,
    info: `oas analysis ${analysis.id}`,
    date,
    threat_level_id: THREAT_LEVEL[analysis.worst],
    analysis: '2', // completed
    distribution: String(distribution),
    published: false,
    Tag: [{ name: 'oas' }, ...markingTags(analysis.tlp, analysis.pap)],
  };
}

/** The attributes to add: one per observable, then the link back to the analysis. */
function plan(items: PushObservable[], analysis: PushAnalysis, event: MispEvent, givenDistribution: number | undefined): Planned[] {
  // In the analysis's own event the attributes inherit its distribution (5); in a given event,
  // whose distribution may be wider, they get the one the analysis's TLP allows, and its tags.
  const scope = givenDistribution === undefined ? analysis.id : `${analysis.id}:event:${event.uuid}`;
  const distribution = givenDistribution === undefined ? '5' : String(givenDistribution);
  const marking = givenDistribution === undefined ? [] : markingTags(analysis.tlp, analysis.pap);
  const planned = items.map((item) => observableAttribute(item, analysis, scope, distribution, marking));
  planned.push(linkAttribute(analysis, scope, distribution));
  return planned;
}

function observableAttribute(item: PushObservable, analysis: PushAnalysis, scope: string, distribution: string, marking: { name: string }[]): Planned {
  const { type, category } = mispType({ observable: item.value, type: item.type });
  const value = attributeValue(type, item.value);
  const uuid = uuidv5(OAS_NAMESPACE, `misp-attribute:${scope}:${type}:${value}`);
  return {
    uuid,
    key: attributeKey(type, value),
    label: `${clip(plainText(value), 80)} (${type})`,
    observable: true,
    body: {
      uuid,
      type,
      category,
      value,
      to_ids: item.verdict === 'malicious',
      comment: attributeComment(item, analysis),
      distribution,
      disable_correlation: false,
      Tag: [{ name: `oas:verdict="${item.verdict}"` }, ...marking],
    },
  };
}

/** The link back to the analysis's results: a `link` when absolute, else a `comment` naming it. */
function linkAttribute(analysis: PushAnalysis, scope: string, distribution: string): Planned {
  const absolute = /^https?:\/\/[^\s]+$/i.test(analysis.link);
  const type = absolute ? 'link' : 'comment';
  const value = absolute ? analysis.link : `oas analysis ${analysis.id}: ${analysis.link}`;
  const uuid = uuidv5(OAS_NAMESPACE, `misp-link:${scope}`);
  return {
    uuid,
    key: attributeKey(type, value),
    label: `${clip(value, 80)} (${type})`,
    observable: false,
    body: {
      uuid,
      type,
      category: absolute ? 'External analysis' : 'Other',
      value,
      to_ids: false,
      comment: `oas analysis ${analysis.id}: its results`,
      distribution,
      disable_correlation: true,
    },
  };
}

/** A hash in lower case (as MISP stores it and the export writes it); anything else as analysed. */
function attributeValue(type: string, value: string): string {
  return type === 'md5' || type === 'sha1' || type === 'sha256' ? value.toLowerCase() : value;
}

/** What makes two attributes the same for MISP (type and value; case-insensitive types in lower case). */
function attributeKey(type: string, value: string): string {
  const folded = ['md5', 'sha1', 'sha256', 'domain', 'hostname', 'email-src', 'ip-dst'].includes(type) ? value.toLowerCase() : value;
  return `${type}\u0000${folded}`;
}

/**
 * The attribute's comment: the verdict, its reasons and the engines' summaries, as one plain line
 * (upstream text: tags and control characters removed; MISP shows comments as text).
 */
export function attributeComment(item: PushObservable, analysis: PushAnalysis): string {
  const reasons = item.reasons.length > 0 ? item.reasons.map(plainText).filter(Boolean).join('; ') : 'no engine that judges this observable answered';
  const engines = item.engines.map((e) => `${plainText(e.engine)}: ${plainText(e.summary)}`).filter((s) => s !== ':');
  const found = item.found_in?.length ? ` Found in: ${item.found_in.map(plainText).join('; ')}.` : '';
  const text = `oas verdict: ${item.verdict}. ${reasons}.${engines.length ? ` Engines: ${engines.join('; ')}.` : ''}${found} oas analysis ${analysis.id}.`;
  return clip(text, COMMENT_MAX);
}

/** The items without repeats of the same attribute (MISP would refuse the second). */
function dedupe(items: PushObservable[]): PushObservable[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const { type } = mispType({ observable: item.value, type: item.type });
    const key = attributeKey(type, attributeValue(type, item.value));
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function readEvent(body: unknown, step: string, push: MispPush): MispEvent {
  const { Event } = push.parse(eventSchema, body, step);
  return {
    id: Event.id,
    uuid: Event.uuid.toLowerCase(),
    attributes: (Event.Attribute ?? []).map((a) => ({ uuid: (a.uuid ?? '').toLowerCase(), key: attributeKey(a.type, a.value) })),
  };
}

/** MISP's "Event already exists" (a 404 with the event's URL in Location; some setups send it as 200). */
function alreadyExists(answer: Answer): boolean {
  if (answer.status !== 404 && answer.status !== 200) return false;
  const parsed = v.safeParse(refusalSchema, answer.body);
  return parsed.success && /^Event already exists/i.test(parsed.output.name ?? parsed.output.message ?? '');
}

/** The event id in the Location header of an "already exists" (`<baseurl>/events/42`). */
function locationId(answer: Answer): string | undefined {
  return /\/events\/(\d+)$/.exec(answer.location ?? '')?.[1];
}

/** MISP's answer to a key it does not know (or of a disabled user). */
function isAuthFailure(body: unknown): boolean {
  return /^Authentication failed/i.test(refusalText(body));
}

/** MISP's ACL answer to a key whose role (or a read-only key) lacks the permission for an action. */
function isPermissionRefusal(body: unknown): boolean {
  return /^You do not have permission to use this functionality/i.test(refusalText(body));
}

function refusalText(body: unknown): string {
  const parsed = v.safeParse(refusalSchema, body);
  return parsed.success ? (parsed.output.message ?? parsed.output.name ?? '') : '';
}

/** A validation refusal (`RestResponse::saveFailResponse`): `{"saved": false, ..., "errors": ...}`. */
function isSaveFailure(body: unknown): boolean {
  const parsed = v.safeParse(refusalSchema, body);
  return parsed.success && parsed.output.saved === false;
}

/** What to check after a refusal that is no key refusal. */
function refusalHint(answer: Answer, urlSource: string): string {
  const parsed = v.safeParse(refusalSchema, answer.body);
  const text = refusalText(answer.body);
  if (/blocklist|block rules/i.test(text)) return 'MISP blocks this event: an event of its UUID was deleted and its UUID blocklisted, remove it from the event blocklist, or push with --event';
  if (/permission/i.test(text)) return "the key's organisation may not modify this event: check --event";
  if (parsed.success && parsed.output.saved === false) return 'MISP refused the fields: see its errors';
  if (!parsed.success || answer.body === undefined) return `check ${urlSource}: it must be MISP's base URL`;
  return `check ${urlSource}`;
}

/** MISP's validation errors (a string, a list, or fields to lists of messages) as one plain line. */
export function describeErrors(errors: unknown): string {
  if (errors === undefined || errors === null) return '';
  if (typeof errors === 'string') return plainText(errors);
  if (typeof errors === 'number' || typeof errors === 'boolean') return String(errors);
  if (Array.isArray(errors)) return errors.map(describeErrors).filter(Boolean).join('; ');
  if (typeof errors === 'object') {
    return Object.entries(errors as Record<string, unknown>)
      .map(([field, value]) => {
        const inner = describeErrors(value);
        return inner ? `${plainText(field)}: ${inner}` : '';
      })
      .filter(Boolean)
      .join('; ');
  }
  return '';
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export const mispTarget: PushTarget = {
  id: 'misp',
  push: (request, context) => new MispPush(request, context).run(),
};
