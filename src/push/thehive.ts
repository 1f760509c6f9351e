/**
 * The TheHive target of `oas push` (issue 37): an analysis becomes a TheHive alert, or with
 * `--case` its observables are added to an existing case. TheHive 5.2 or later, API v1.
 *
 * Protocol facts it relies on (TheHive 5 API v1: the OpenAPI document of docs.strangebee.com,
 * v5.6.2, as StrangeBee's thehive4go ships it; thehive4py 2.x; TheHive 4's open-source v1
 * controllers and ScalliGraph's error handler, from which TheHive 5 grew):
 * - Authentication `Authorization: Bearer <api key>`; `X-Organisation: <name>` acts in that
 *   organisation instead of the key's default one (a user outside it has no permission there: 403).
 * - `POST /api/v1/alert` (permission `manageAlert/create`) takes `type`, `source`, `sourceRef`
 *   (≤ 32, 32, 128 characters), `title` (≤ 512), `description` (Markdown, ≤ 1 MiB), `severity`
 *   (1 low, 2 medium, 3 high, 4 critical), `date` (ms), `tags` (each ≤ 128), `externalLink` (≤ 512),
 *   `tlp`, `pap` and `observables`, and answers 201 with the alert (`_id`, `observableCount`). The
 *   triple type/source/sourceRef is unique per organisation: a second one is refused with 400
 *   `{"type":"CreateError","message":"Alert <type>:<source>:<sourceRef> already exist(s) ..."}`.
 * - TLP since TheHive 5.2 (TLP 2.0, release notes 5.2.0): 0 CLEAR, 1 GREEN, 2 AMBER,
 *   3 AMBER+STRICT, 4 RED (RED was 3 before 5.2: a 5.0 or 5.1 server refuses 4 with a 400, and the
 *   message says to check the server's version). PAP: 0 CLEAR, 1 GREEN, 2 AMBER, 3 RED. An
 *   observable left without a TLP or PAP gets AMBER, so each one is given the analysis's marking.
 * - Observables (`dataType`, `data`, `message` (Markdown), `tlp`, `pap`, `ioc`, `tags`): the
 *   default data types `ip`, `domain` (a registrable domain), `fqdn` (a longer host name), `url`,
 *   `hash`, `mail`, `other`. `POST /api/v1/alert/{id}/observable` and
 *   `POST /api/v1/case/{id}/observable` (permission `manageObservable`) answer 201 with the list
 *   made; the same dataType and data twice in one alert or case is refused (400 `CreateError`
 *   "Observable already exists"; TheHive 4 answered 207 `{success, failure}`: both are read).
 * - `POST /api/v1/query` runs a query: `listAlert` with a `filter` (`_and` of `_eq` on `type`,
 *   `source`, `sourceRef`), `getAlert`/`getCase` (`idOrName`) then `observables`; answers a list.
 * - `GET /api/v1/case/{idOrNumber}` answers the case (`_id`, `number`), 404 `NotFoundError` for
 *   an unknown one. Errors are `{"type": ..., "message": ...}`: 401 `AuthenticationError`, 403
 *   `AuthorizationError` (the permission missing), 404 `NotFoundError`.
 * - The UI shows an alert at `/alerts/<_id>/details` and a case at `/cases/<_id>/details`.
 *
 * Choices: the alert is `type` and `source` `oas`, `sourceRef` the analysis id; its severity
 * follows the analysis's worst verdict (malicious 3 high, suspicious 2 medium, else 1 low: critical
 * is left to people); `ioc` is true for malicious observables only. Upstream text (observables,
 * reasons, engines' summaries, where an observable was found) goes into Markdown only as code
 * spans of one line, so that it never becomes a link, an image, HTML or a heading.
 *
 * Idempotence: the alert is created with all its observables; when TheHive answers that it exists
 * (an earlier push), it is found by the query API and only the observables it lacks are added. With
 * `--case` the case's observables are read first and only the missing ones added.
 */
import * as v from 'valibot';
import { jsonObject, parseJson } from '../http/client.js';
import { HttpStatusError, statusError, UpstreamError } from '../http/errors.js';
import type { HttpResponse, RequestOptions } from '../engine/contract.js';
import type { Pap, Tlp } from '../marking/levels.js';
import { isRegistrableDomain } from '../observables/host.js';
import type { ObservableType } from '../observables/types.js';
import type { Verdict } from '../verdict/verdict.js';
import { clip } from '../export/common.js';
import { httpUrl } from '../automation/links.js';
import { platformHost, plural } from './wording.js';
import { PushError, type PushContext, type PushObservable, type PushOutcome, type PushRequest, type PushTarget } from './types.js';

/** The alert's `type` and `source`: fixed, so that `sourceRef` (the analysis id) finds it again. */
export const ALERT_TYPE = 'oas';
export const ALERT_SOURCE = 'oas';

/** TheHive 5.2+'s TLP numbers (TLP 2.0). */
export const THEHIVE_TLP: Record<Tlp, number> = { CLEAR: 0, GREEN: 1, AMBER: 2, 'AMBER+STRICT': 3, RED: 4 };
export const THEHIVE_PAP: Record<Pap, number> = { CLEAR: 0, GREEN: 1, AMBER: 2, RED: 3 };

const MAX_TITLE = 512;
const MAX_TAG = 128;
const MAX_EXTERNAL_LINK = 512;
/** TheHive's limit is 1 MiB; the description stops listing observables before it. */
const MAX_DESCRIPTION = 1_000_000;
const MAX_REASON = 1_000;
const MAX_SUMMARY = 500;
const MAX_FOUND_IN = 200;
const MAX_LIST = 50;
const MAX_ERROR_DETAIL = 300;

/** TheHive's severity for the analysis's worst verdict. */
export function theHiveSeverity(worst: Verdict): 1 | 2 | 3 {
  return worst === 'malicious' ? 3 : worst === 'suspicious' ? 2 : 1;
}

/** TheHive's default data type for an observable of oas. */
export function theHiveDataType(type: ObservableType, value: string): string {
  switch (type) {
    case 'IPv4':
    case 'IPv6':
      return 'ip';
    case 'FQDN':
      return isRegistrableDomain(value) ? 'domain' : 'fqdn';
    case 'URL':
      return 'url';
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return 'hash';
    case 'Email':
      return 'mail';
    case 'CHROME_EXTENSION':
      return 'other';
  }
}


// ---------------------------------------------------------------------------------------------
// Upstream text made inert for TheHive's Markdown.

/** One line: controls (C0, C1, line and paragraph separators) as spaces, bidi and zero-width marks removed. */
export function oneLine(text: string): string {
  return text
    .replace(/[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ')
    .trim();
}


/**
 * `text` as a Markdown code span on one line: literal in CommonMark and GFM (no link, autolink,
 * emphasis or HTML inside), fenced by one backtick more than its longest run of backticks and
 * padded by a space each side (which the renderer removes).
 */
export function codeSpan(text: string, max = MAX_REASON): string {
  const line = clip(oneLine(text), max) || '(empty)';
  const longest = Math.max(0, ...(line.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence} ${line} ${fence}`;
}

/** The analysis's link as a Markdown link when it is an absolute http(s) URL, else as a code span. */
function markdownLink(label: string, link: string): string {
  const href = httpUrl(link)?.replace(/[<>]/g, encodeURIComponent);
  return href ? `[${label}](<${href}>)` : `${label}: ${codeSpan(link)}`;
}


// ---------------------------------------------------------------------------------------------
// What is sent.

interface TheHiveObservable {
  dataType: string;
  data: string;
  message: string;
  ioc: boolean;
  tags: string[];
  tlp?: number;
  pap?: number;
}


function markingText(request: PushRequest): string {
  const { tlp, pap } = request.analysis;
  return [tlp ? `TLP:${tlp}` : undefined, pap ? `PAP:${pap}` : undefined].filter(Boolean).join(', ') || 'no marking';
}

/** The Markdown message of one observable: its verdict, reasons, engines, where it was found, the link back. */
export function observableMessage(item: PushObservable, link: string): string {
  const lines = [`oas verdict: **${item.verdict}**`];
  if (item.reasons.length) {
    lines.push('', 'Reasons:', ...item.reasons.slice(0, MAX_LIST).map((reason) => `- ${codeSpan(reason)}`));
  }
  if (item.engines.length) {
    lines.push('', 'Engines:', ...item.engines.slice(0, MAX_LIST).map((e) => `- ${codeSpan(e.engine, 64)}: ${codeSpan(e.summary, MAX_SUMMARY)}`));
  }
  if (item.found_in?.length) {
    lines.push('', 'Found in:', ...item.found_in.slice(0, MAX_LIST).map((where) => `- ${codeSpan(where, MAX_FOUND_IN)}`));
  }
  lines.push('', markdownLink('Analysis in oas', link));
  return lines.join('\n');
}

function observableOf(item: PushObservable, request: PushRequest): TheHiveObservable {
  const { tlp, pap, link } = request.analysis;
  return {
    dataType: theHiveDataType(item.type, item.value),
    data: item.value,
    message: observableMessage(item, link),
    ioc: item.verdict === 'malicious',
    tags: ['oas', `oas:verdict=${item.verdict}`],
    ...(tlp ? { tlp: THEHIVE_TLP[tlp] } : {}),
    ...(pap ? { pap: THEHIVE_PAP[pap] } : {}),
  };
}

/** The key that makes two observables the same in TheHive: data type and data (case aside where it means nothing). */
function observableKey(dataType: string, data: string): string {
  const caseless = dataType !== 'url' && dataType !== 'other';
  return `${dataType}\u0000${caseless ? data.toLowerCase() : data}`;
}

/** The request's observables in TheHive's terms, each (data type, data) once. */
function observablesOf(request: PushRequest): TheHiveObservable[] {
  const seen = new Set<string>();
  const out: TheHiveObservable[] = [];
  for (const item of request.items) {
    const observable = observableOf(item, request);
    const key = observableKey(observable.dataType, observable.data);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(observable);
  }
  return out;
}

function alertTitle(request: PushRequest): string {
  const { analysis, items } = request;
  return clip(oneLine(`oas analysis ${analysis.id}: ${analysis.worst}, ${plural(items.length, 'observable')} pushed of ${analysis.total}`), MAX_TITLE);
}

/** The alert's Markdown description: a summary, the link back and each observable with its verdict and reasons. */
export function alertDescription(request: PushRequest): string {
  const { analysis, items } = request;
  const head = [
    `**oas** analysis ${codeSpan(analysis.id, 128)}, started ${codeSpan(analysis.created_at, 64)}: worst verdict **${analysis.worst}**.`,
    '',
    `${plural(items.length, 'observable')} pushed of ${analysis.total} analysed (${markingText(request)}).`,
    '',
    markdownLink('Open the analysis in oas', analysis.link),
    '',
    '### Observables',
    '',
    '',
  ].join('\n');
  let text = head;
  for (const [index, item] of items.entries()) {
    const entry = observableEntry(item, theHiveDataType(item.type, item.value));
    if (text.length + entry.length > MAX_DESCRIPTION) {
      return `${text}\n… and ${plural(items.length - index, 'more observable')}: see the analysis in oas.\n`;
    }
    text += entry;
  }
  return text;
}

function observableEntry(item: PushObservable, dataType: string): string {
  const lines = [`- ${codeSpan(item.value, 2_048)} (${dataType}): **${item.verdict}**`];
  for (const reason of item.reasons.slice(0, MAX_LIST)) lines.push(`  - ${codeSpan(reason)}`);
  return `${lines.join('\n')}\n`;
}

function alertTags(request: PushRequest): string[] {
  const verdicts = [...new Set(request.items.map((item) => item.verdict))];
  return [...new Set(['oas', `oas:worst=${request.analysis.worst}`, ...verdicts.map((verdict) => `oas:verdict=${verdict}`)])]
    .map((tag) => clip(tag, MAX_TAG));
}

function alertBody(request: PushRequest, observables: TheHiveObservable[]): Record<string, unknown> {
  const { analysis } = request;
  const link = httpUrl(analysis.link)?.replace(/[<>]/g, encodeURIComponent);
  const date = Date.parse(analysis.created_at);
  return {
    type: ALERT_TYPE,
    source: ALERT_SOURCE,
    sourceRef: analysis.id,
    title: alertTitle(request),
    description: alertDescription(request),
    severity: theHiveSeverity(analysis.worst),
    ...(Number.isFinite(date) ? { date } : {}),
    tags: alertTags(request),
    ...(link && link.length <= MAX_EXTERNAL_LINK ? { externalLink: link } : {}),
    ...(analysis.tlp ? { tlp: THEHIVE_TLP[analysis.tlp] } : {}),
    ...(analysis.pap ? { pap: THEHIVE_PAP[analysis.pap] } : {}),
    observables,
  };
}

// ---------------------------------------------------------------------------------------------
// Answers.

const idSchema = v.pipe(v.string(), v.minLength(1));
const alertSchema = jsonObject({ _id: idSchema, observableCount: v.optional(v.number()) });
const alertListSchema = v.array(alertSchema);
const caseSchema = jsonObject({ _id: idSchema, number: v.optional(v.number()) });
const observableSchema = jsonObject({ _id: idSchema, dataType: v.string(), data: v.optional(v.nullable(v.string())) });
const observableListSchema = v.array(observableSchema);
const errorSchema = jsonObject({ type: v.optional(v.string()), message: v.optional(v.string()) });
const multiStatusSchema = jsonObject({
  success: v.optional(v.array(v.unknown()), []),
  failure: v.optional(v.array(errorSchema), []),
});

// ---------------------------------------------------------------------------------------------
// Failures.

/** A failed step: what failed and what to check, before the target's name, host and progress are added. */
class Failure extends Error {
  constructor(readonly what: string, readonly hint: string, readonly status?: number) {
    super(what);
  }
}

/** TheHive's own words about a refusal (`AuthorizationError: ...`), one line, cut, redacted. */
function refusalDetail(response: HttpResponse, context: PushContext): string {
  let body: v.InferOutput<typeof errorSchema>;
  try {
    body = parseJson(response.text(), errorSchema);
  } catch {
    return '';
  }
  const words = [body.type, body.message].filter((part): part is string => Boolean(part)).join(': ');
  return words ? `: ${clip(oneLine(context.http.redact(words)), MAX_ERROR_DETAIL)}` : '';
}

function statusText(response: HttpResponse): string {
  return statusError(response.status).message;
}

function keyHint(context: PushContext): string {
  const { credentialSource, organisation } = context.settings;
  return `key refused: check ${credentialSource}${organisation ? ` and the organisation ${organisation} (push.thehive.organisation)` : ''}`;
}

/** A refusal TheHive answered (a status among those accepted) as a Failure. */
function refused(response: HttpResponse, doing: string, context: PushContext): Failure {
  const what = `${doing}: ${statusText(response)}${refusalDetail(response, context)}`;
  if (response.status === 401 || response.status === 403) return new Failure(what, keyHint(context), response.status);
  return new Failure(what, `check that ${context.settings.urlSource} is TheHive 5.2 or later`, response.status);
}

/** Whether a refusal says the thing already exists (an alert's triple, an observable). */
function saysAlreadyExists(response: HttpResponse): boolean {
  if (response.status !== 400) return false;
  try {
    const body = parseJson(response.text(), errorSchema);
    return body.type === 'CreateError' && /already exist/i.test(body.message ?? '');
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Calls.

const REFUSALS = [400, 401, 403, 404] as const;

/** A 2xx answer (201 for what is made, 200 for what is read; anything else 2xx is read the same way). */
function succeeded(response: HttpResponse): boolean {
  return response.status >= 200 && response.status < 300;
}

interface Api {
  base: string;
  context: PushContext;
  headers: Record<string, string>;
}

function apiOf(context: PushContext): Api {
  const { credential, organisation } = context.settings;
  return {
    base: context.settings.url.replace(/\/+$/, ''),
    context,
    headers: {
      accept: 'application/json',
      authorization: `Bearer ${credential}`,
      ...(organisation ? { 'x-organisation': organisation } : {}),
    },
  };
}

/** One call; the client's failures (timeout, network, 5xx after its retries) become a Failure saying what was being done. */
async function call(api: Api, doing: string, path: string, options: RequestOptions): Promise<HttpResponse> {
  try {
    return await api.context.http.request(`${api.base}${path}`, {
      ...options,
      headers: { ...api.headers, ...options.headers },
      acceptStatus: [...REFUSALS, ...(options.acceptStatus ?? [])],
    });
  } catch (error) {
    if (error instanceof UpstreamError) {
      const status = error instanceof HttpStatusError ? error.status : undefined;
      throw new Failure(`${doing}: ${oneLine(api.context.http.redact(error.message))}`, `check ${api.context.settings.urlSource}`, status);
    }
    throw error;
  }
}

/** An answer read with `schema`; a malformed one is a Failure. */
function read<S extends v.GenericSchema>(api: Api, response: HttpResponse, schema: S, doing: string): v.InferOutput<S> {
  try {
    return parseJson(response.text(), schema);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Failure(`${doing}: ${oneLine(why)}`, `check that ${api.context.settings.urlSource} is TheHive 5's address`, response.status);
  }
}

async function query(api: Api, name: string, operations: unknown[], doing: string): Promise<HttpResponse> {
  const response = await call(api, doing, `/api/v1/query?name=${encodeURIComponent(name)}`, { method: 'POST', json: { query: operations } });
  if (!succeeded(response)) throw refused(response, doing, api.context);
  return response;
}

/** The alert an earlier push made (`type`, `source` and `sourceRef` the analysis id), if TheHive shows it. */
async function findAlert(api: Api, analysisId: string): Promise<string | undefined> {
  const doing = `looking up the alert of analysis ${analysisId}`;
  const filter = {
    _name: 'filter',
    _and: [
      { _eq: { _field: 'type', _value: ALERT_TYPE } },
      { _eq: { _field: 'source', _value: ALERT_SOURCE } },
      { _eq: { _field: 'sourceRef', _value: analysisId } },
    ],
  };
  const response = await query(api, 'oas-push-alert', [{ _name: 'listAlert' }, filter, { _name: 'page', from: 0, to: 1 }], doing);
  return read(api, response, alertListSchema, doing)[0]?._id;
}

/** The keys of the observables an alert or a case already holds. */
async function existingKeys(api: Api, kind: 'Alert' | 'Case', id: string, doing: string): Promise<Set<string>> {
  const response = await query(api, `oas-push-${kind.toLowerCase()}-observables`, [{ _name: `get${kind}`, idOrName: id }, { _name: 'observables' }], doing);
  const observables = read(api, response, observableListSchema, doing);
  return new Set(observables.filter((o) => typeof o.data === 'string').map((o) => observableKey(o.dataType, o.data as string)));
}

interface Added {
  added: number;
  existing: number;
}

/** What one observable call came to: made, already there, or a Failure. */
async function addObservable(api: Api, path: string, observable: TheHiveObservable, doing: string): Promise<'added' | 'existing'> {
  const response = await call(api, doing, path, { method: 'POST', json: observable, acceptStatus: [207] });
  if (response.status === 207) return multiStatus(api, response, doing);
  if (succeeded(response)) {
    read(api, response, observableListSchema, doing);
    return 'added';
  }
  if (saysAlreadyExists(response)) return 'existing';
  throw refused(response, doing, api.context);
}

/** TheHive 4's partial answer: made, or refused as already there; any other failure is one. */
function multiStatus(api: Api, response: HttpResponse, doing: string): 'added' | 'existing' {
  const body = read(api, response, multiStatusSchema, doing);
  if (body.success.length > 0) return 'added';
  const failure = body.failure[0];
  if (failure && failure.type === 'CreateError' && /already exist/i.test(failure.message ?? '')) return 'existing';
  const words = [failure?.type, failure?.message].filter(Boolean).join(': ');
  throw new Failure(`${doing}: refused${words ? `: ${clip(oneLine(api.context.http.redact(words)), MAX_ERROR_DETAIL)}` : ''}`, `check that ${api.context.settings.urlSource} is TheHive 5.2 or later`, 207);
}

/** Adds the observables `existing` lacks to the alert or case at `path`, one call each; `progress` follows. */
async function addMissing(
  api: Api,
  path: string,
  observables: TheHiveObservable[],
  existing: Set<string>,
  progress: Progress,
): Promise<Added> {
  const counts: Added = { added: 0, existing: 0 };
  const missing = observables.filter((o) => !existing.has(observableKey(o.dataType, o.data)));
  counts.existing = observables.length - missing.length;
  progress.counts = { ...counts, total: observables.length };
  for (const observable of missing) {
    const result = await addObservable(api, path, observable, `adding an observable (${observable.dataType})`);
    counts[result] += 1;
    progress.counts = { ...counts, total: observables.length };
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// The push.

/** What a push had done when it failed, said before the failure. */
interface Progress {
  container?: string;
  counts?: Added & { total: number };
}

function progressText(progress: Progress): string {
  if (!progress.container) return '';
  const counts = progress.counts;
  if (!counts) return `${progress.container}, then `;
  const there = counts.existing ? ` (${counts.existing} already there)` : '';
  return `${progress.container}, ${counts.added} of ${plural(counts.total - counts.existing, 'missing observable')} added${there}, then `;
}


function pushError(context: PushContext, progress: Progress, failure: Failure): PushError {
  const line = `TheHive at ${platformHost(context.settings.url)}: ${progressText(progress)}${failure.what} (${failure.hint})`;
  return new PushError('thehive', context.http.redact(line), failure.status);
}

function counted(added: number, existing: number): string {
  const parts = [`${plural(added, 'observable')} added`];
  if (existing) parts.push(`${existing} already there`);
  return parts.join(', ');
}

async function pushAlert(api: Api, request: PushRequest, progress: Progress): Promise<PushOutcome> {
  const observables = observablesOf(request);
  const doing = 'creating the alert';
  const response = await call(api, doing, '/api/v1/alert', { method: 'POST', json: alertBody(request, observables) });
  if (succeeded(response)) {
    const alert = read(api, response, alertSchema, doing);
    const added = Math.min(observables.length, alert.observableCount ?? observables.length);
    const link = `${api.base}/alerts/${encodeURIComponent(alert._id)}/details`;
    return {
      target: 'thehive', kind: 'alert', id: alert._id, link, created: true, added, existing: 0,
      line: `TheHive alert ${alert._id} created: ${counted(added, 0)} (${link})`,
    };
  }
  if (!saysAlreadyExists(response)) throw refused(response, doing, api.context);
  return completeAlert(api, request, observables, progress);
}

/** The alert an earlier push made: found, and given the observables it lacks. */
async function completeAlert(api: Api, request: PushRequest, observables: TheHiveObservable[], progress: Progress): Promise<PushOutcome> {
  const id = await findAlert(api, request.analysis.id);
  if (id === undefined) {
    throw new Failure(
      `TheHive says the alert of analysis ${request.analysis.id} exists, but does not show it to this key`,
      keyHint(api.context),
    );
  }
  progress.container = `alert ${id} found (made by an earlier push)`;
  const existing = await existingKeys(api, 'Alert', id, `reading the observables of alert ${id}`);
  const path = `/api/v1/alert/${encodeURIComponent(id)}/observable`;
  const counts = await addMissing(api, path, observables, existing, progress);
  const link = `${api.base}/alerts/${encodeURIComponent(id)}/details`;
  return {
    target: 'thehive', kind: 'alert', id, link, created: false, ...counts,
    line: `TheHive alert ${id} found (made by an earlier push): ${counted(counts.added, counts.existing)} (${link})`,
  };
}

async function findCase(api: Api, caseId: string): Promise<v.InferOutput<typeof caseSchema>> {
  const doing = `reading case ${clip(oneLine(caseId), 64)}`;
  const response = await call(api, doing, `/api/v1/case/${encodeURIComponent(caseId)}`, { method: 'GET' });
  if (response.status === 404) {
    throw new Failure(`case ${clip(oneLine(caseId), 64)} not found${refusalDetail(response, api.context)}`, 'check --case: a case number or its ~id, in the organisation of the key', 404);
  }
  if (!succeeded(response)) throw refused(response, doing, api.context);
  return read(api, response, caseSchema, doing);
}

async function pushCase(api: Api, request: PushRequest, caseId: string, progress: Progress): Promise<PushOutcome> {
  const found = await findCase(api, caseId);
  const name = found.number !== undefined ? `case #${found.number}` : `case ${found._id}`;
  progress.container = `${name} found`;
  const existing = await existingKeys(api, 'Case', found._id, `reading the observables of ${name}`);
  const path = `/api/v1/case/${encodeURIComponent(found._id)}/observable`;
  const counts = await addMissing(api, path, observablesOf(request), existing, progress);
  const link = `${api.base}/cases/${encodeURIComponent(found._id)}/details`;
  return {
    target: 'thehive', kind: 'case', id: found._id, link, created: false, ...counts,
    line: `TheHive ${name}: ${counted(counts.added, counts.existing)} (${link})`,
  };
}

function nothingToPush(request: PushRequest): PushOutcome {
  const caseId = request.case_id;
  return {
    target: 'thehive',
    kind: caseId !== undefined ? 'case' : 'alert',
    id: caseId ?? '',
    created: false,
    added: 0,
    existing: 0,
    line: `TheHive: nothing pushed: analysis ${request.analysis.id} has no observable to push${caseId !== undefined ? ` to case ${clip(oneLine(caseId), 64)}` : ''}`,
  };
}

async function push(request: PushRequest, context: PushContext): Promise<PushOutcome> {
  if (request.items.length === 0) return nothingToPush(request);
  const api = apiOf(context);
  const progress: Progress = {};
  try {
    return request.case_id !== undefined
      ? await pushCase(api, request, request.case_id, progress)
      : await pushAlert(api, request, progress);
  } catch (error) {
    if (error instanceof Failure) throw pushError(context, progress, error);
    throw error;
  }
}

export const thehiveTarget: PushTarget = { id: 'thehive', push };
