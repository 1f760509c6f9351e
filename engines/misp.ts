/**
 * provider_15 (`misp`) — the attributes of a self-hosted MISP server matching an observable, and
 * the events holding them (engines.md 5.18): `POST {base_url}/attributes/restSearch` with the
 * JSON body `{"returnFormat": "json", "value": <value>, "type": <type filter>}` and the key sent
 * raw as `Authorization: <key>` (no "Bearer").
 *
 * | type      | type filter                                                          |
 * |-----------|----------------------------------------------------------------------|
 * | IPv4/IPv6 | `["ip-dst", "ip-src", "ip-src\|port", "ip-dst\|port", "domain\|ip"]` |
 * | FQDN      | `["domain", "domain\|ip", "hostname", "hostname\|port"]`             |
 * | URL       | `"url"` (the full URL as written)                                    |
 * | MD5/SHA1/SHA256 | `"md5"` / `"sha1"` / `"sha256"`                                |
 *
 * Result as the reference's, exactly these keys: `count` (attributes returned), `events` (at
 * most 5 `{title, url, timestamp}`, one per event, the newest first), `link` (the attribute
 * search on the MISP web interface), `first_seen` / `last_seen` (UTC days of the oldest and
 * newest attribute timestamps). No match is that result with `count` 0, not `null`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 21): events are sorted by their timestamp as a number, so
 *   `"999999999"` (2001) comes after `"1717200000"` (2024); the reference compared strings.
 * - An attribute without (a readable) timestamp no longer fails the whole lookup: it counts, its
 *   event is listed (last), and it is left out of `first_seen`/`last_seen`.
 * - `base_url` keeps its path (`https://host/misp`), only trailing `/` are removed; requests and
 *   links are under it.
 * - Bug fixed (engines.md 8 item 19): `base_url` and `api_key` are required credentials; without
 *   them the runner refuses the call before any request (the lookup too, when called directly).
 * - The request goes through the shared client, so `proxy_url` and `ssl_verify` apply.
 * - An answer is read leniently (issue 26): only a JSON object is needed. A missing, null or
 *   empty `response` or `Attribute` is no match, one attribute object in place of the list is
 *   that attribute, null entries are skipped, a missing or null `Event.info` is "Unknown", a
 *   numeric one its text, an empty one "" as sent (issue 32, as the reference). The reference
 *   failed (`null`) on a missing `response` and on a non-list `Attribute`.
 * - Errors are errors, not `null` (engines.md 8 item 3): a refused key (401/403) is a one-line
 *   authentication error naming MISP with MISP's reason, key masked; other HTTP errors (429 and
 *   5xx after the client's retries), a malformed body and a timeout are reported too.
 */
import * as v from 'valibot';
import { CredentialsRefusedError, defineEngine, type DetailField, type EngineContext, EngineError, type Evidence, type HttpResponse } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, text } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, refusedError } from '../src/http/refusal.js';
import { count, oneLine } from '../src/lookup/wording.js';
import type { Observable, ObservableType } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { serverBase } from '../src/http/server-base.js';

const LABEL = 'MISP';
const MAX_EVENTS = 5;

const IP_FILTER = ['ip-dst', 'ip-src', 'ip-src|port', 'ip-dst|port', 'domain|ip'];
const DOMAIN_FILTER = ['domain', 'domain|ip', 'hostname', 'hostname|port'];

/** The `type` filter of the restSearch body for each observable type (engines.md 5.18). */
export const TYPE_FILTERS: Partial<Record<ObservableType, string | readonly string[]>> = {
  IPv4: IP_FILTER,
  IPv6: IP_FILTER,
  FQDN: DOMAIN_FILTER,
  URL: 'url',
  MD5: 'md5',
  SHA1: 'sha1',
  SHA256: 'sha256',
};

const id = v.nullish(v.union([v.string(), v.number()]));

/** One attribute of the answer; MISP sends many more members (uuid, category, to_ids...). */
const AttributeSchema = v.looseObject({
  event_id: id,
  timestamp: v.nullish(v.union([v.string(), v.number()])),
  Event: v.nullish(v.looseObject({ id, info: text() })),
});

/**
 * `{"response": {"Attribute": [...]}}`. Some MISP versions answer `{"response": []}` when nothing
 * matches; a missing or null `response` or `Attribute`, or one attribute object in place of the
 * list, is read the same way (none, or that one). A list of `{"Attribute": [...]}` objects is
 * read as all their attributes.
 */
const AnswerSchema = jsonObject({
  response: list(jsonObject({ Attribute: list(AttributeSchema) })),
});

/** MISP's error body: `{"name": "...", "message": "...", "url": "/attributes/restSearch"}`. */
const ErrorSchema = v.looseObject({ name: v.nullish(v.string()), message: v.nullish(v.string()) });

export interface MispEvent {
  /** `Event.info` as sent (`""` included), "Unknown" when absent or null. */
  title: string;
  /** `<base_url>/events/view/<event id>`; null when the attribute names no event. */
  url: string | null;
  /** The timestamp (epoch seconds) of the event's first attribute, as MISP sent it. */
  timestamp: string | null;
}

export interface MispResult {
  /** Attributes matching the observable. */
  count: number;
  /** At most 5 events, newest first. */
  events: MispEvent[];
  /** `<base_url>/attributes/index?value=<value>`. */
  link: string;
  /** UTC day (`YYYY-MM-DD`) of the oldest attribute timestamp; null when none. */
  first_seen: string | null;
  /** UTC day of the newest attribute timestamp; null when none. */
  last_seen: string | null;
}

/** Epoch seconds of a MISP timestamp (`"1717200000"` or 1717200000); null when absent or unreadable. */
export function epochSeconds(value: string | number | null | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || !/^\s*\d{1,12}\s*$/.test(value)) return null;
  return Number(value);
}

/** UTC day of epoch seconds. */
function utcDay(seconds: number): string | null {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? null : date.toISOString().slice(0, 10);
}

function idText(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  return text === '' ? null : text;
}

export async function mispLookup(observable: Observable, ctx: EngineContext): Promise<MispResult | null> {
  const filter = TYPE_FILTERS[observable.type];
  if (filter === undefined) return null;
  const base = serverBase(ctx, LABEL);
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key.trim() === '') throw new EngineError('not configured: api_key');
  const value = observable.value;
  const response = await ctx.http.request(`${base}/attributes/restSearch`, {
    method: 'POST',
    json: { returnFormat: 'json', value, type: filter },
    headers: { authorization: key, accept: 'application/json', 'content-type': 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  throwIfRefused(response, ctx);
  const answer = parseJson(response.text(), AnswerSchema);
  const attributes = answer.response.flatMap((part) => part.Attribute);

  const seconds = attributes.map((a) => epochSeconds(a.timestamp)).filter((s): s is number => s !== null);
  const byEvent = new Map<string | null, { event: MispEvent; at: number | null }>();
  for (const attribute of attributes) {
    const eventId = idText(attribute.Event?.id) ?? idText(attribute.event_id);
    if (byEvent.has(eventId)) continue;
    byEvent.set(eventId, {
      event: {
        title: attribute.Event?.info ?? 'Unknown',
        url: eventId !== null ? `${base}/events/view/${encodeURIComponent(eventId)}` : null,
        timestamp: attribute.timestamp === null || attribute.timestamp === undefined ? null : String(attribute.timestamp),
      },
      at: epochSeconds(attribute.timestamp),
    });
  }
  // Newest first, by number; events without a timestamp last; ties keep MISP's order.
  const events = [...byEvent.values()]
    .sort((a, b) => newestFirst(a.at, b.at))
    .slice(0, MAX_EVENTS)
    .map((entry) => entry.event);
  return {
    count: attributes.length,
    events,
    link: `${base}/attributes/index?value=${encodeURIComponent(value)}`,
    first_seen: seconds.length > 0 ? utcDay(Math.min(...seconds)) : null,
    last_seen: seconds.length > 0 ? utcDay(Math.max(...seconds)) : null,
  };
}

/** Comparator: larger epoch seconds first, absent ones last, equal ones in place. */
function newestFirst(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

/** MISP's `name` (or `message`) from an error body, one line, key masked. */
function mispReason(body: string, ctx: EngineContext): string | undefined {
  try {
    const { name, message } = parseJson(body, ErrorSchema);
    const reason = name || message;
    return reason ? oneLine(ctx.http.redact(reason)) : undefined;
  } catch {
    return undefined;
  }
}

/** `HTTP 403 Forbidden: <MISP's reason>`. */
function failure(status: number, body: string, ctx: EngineContext): string {
  const reason = mispReason(body, ctx);
  return reason ? statusError(status, reason).message : statusError(status).message;
}

/** `3 attributes · latest event: Phishing kit infra · seen 2024-01-01 to 2024-06-01`; `no attribute`. */
export function mispSummary(result: MispResult): string {
  if (result.count === 0) return 'no attribute';
  const parts = [count(result.count, 'attribute')];
  const latest = result.events[0];
  if (latest?.title) parts.push(`latest event: ${latest.title}`);
  if (result.first_seen && result.last_seen) {
    parts.push(result.first_seen === result.last_seen ? `seen ${result.first_seen}` : `seen ${result.first_seen} to ${result.last_seen}`);
  }
  return parts.join(' · ');
}

/**
 * What your MISP says about the observable's risk. The result keeps no `to_ids` flag (its keys are
 * the reference's, unchanged), so a match cannot be told apart as a detection indicator from mere
 * context: any attribute in an event is `suspicious`, never `malicious`. No attribute judges
 * nothing: a MISP holds what its organisation shared and ingested, so not knowing something is
 * no evidence that it is harmless.
 */
export function mispEvidence(result: MispResult | null): Evidence | undefined {
  if (!result || typeof result.count !== 'number' || result.count <= 0) return undefined; // not in your MISP: no judgement
  const latest = Array.isArray(result.events) ? result.events[0]?.title : undefined;
  const parts = [`${count(result.count, 'attribute')} in your MISP`];
  if (latest) parts.push(`latest event: ${oneLine(latest, 80)}`);
  if (result.first_seen && result.last_seen) {
    parts.push(result.first_seen === result.last_seen ? `seen ${result.first_seen}` : `seen ${result.first_seen} to ${result.last_seen}`);
  }
  // In your MISP's events: someone shared it as part of a threat, to be looked at.
  return { level: 'suspicious', reason: oneLine(parts.join(' · '), 240) };
}

/** The card: how many attributes, when, the events (linked), then the search in MISP. */
export function mispDetails(result: MispResult): DetailField[] {
  return fields(
    field('Attributes', result.count),
    field('First seen', result.first_seen),
    field('Last seen', result.last_seen),
    // An event whose title MISP sent empty shows its link instead.
    ...result.events.map((event, i) => field(`Event ${i + 1}`, event.title || event.url, event.url)),
    sourceLink('Open in MISP', result.link),
  );
}

export default defineEngine<MispResult>({
  id: 'provider_15',
  service: 'misp',
  label: 'MISP',
  description: 'Attributes and events of your own MISP server matching an IP, a domain, a URL or a file hash',
  tags: ['IP', 'domain', 'URL', 'hash'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'base_url', label: 'Server URL', env: ['MISP_URL'], secret: false },
    { setting: 'api_key', label: 'API key', env: ['MISP_API_KEY'] },
  ],
  defaults: { timeout_ms: 5000 },
  summary: mispSummary,
  evidence: mispEvidence,
  details: mispDetails,
  run: mispLookup,
  // `oas doctor`: the server's version (GET /servers/getVersion), which needs a key it accepts.
  check: { probe: mispVersion },
});

const VersionSchema = v.looseObject({ version: v.fallback(v.nullish(v.string()), null) });

/** A 401/403 as refused credentials, any other non-2xx with MISP's reason. */
function throwIfRefused(response: HttpResponse, ctx: EngineContext): void {
  if (response.status === 401 || response.status === 403) {
    throw new CredentialsRefusedError(LABEL, failure(response.status, response.text(), ctx));
  }
  if (response.status >= 300) {
    const reason = mispReason(response.text(), ctx);
    throw reason ? statusError(response.status, reason) : refusedError(response, ctx);
  }
}

/** `MISP 2.4.190`, or the refusal as a lookup words it. */
export async function mispVersion(ctx: EngineContext): Promise<string> {
  const base = serverBase(ctx, LABEL);
  const key = typeof ctx.settings.api_key === 'string' ? ctx.settings.api_key : '';
  if (key.trim() === '') throw new EngineError('not configured: api_key');
  const response = await ctx.http.request(`${base}/servers/getVersion`, {
    headers: { authorization: key, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  throwIfRefused(response, ctx);
  const answer = parseJson(response.text(), VersionSchema);
  return `${LABEL} ${answer.version ?? '(no version said)'}`;
}
