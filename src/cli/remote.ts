/**
 * `oas analyze --server URL`: the same analysis, run by a remote server through the three API
 * endpoints (POST {prefix}analyze, GET {prefix}is_analysis_complete/<id>, GET {prefix}results/<id>),
 * with the same arguments, output and exit codes as the local mode. It works against another
 * `oas serve` and against the reference implementation (Cyberbro), whose quirks it absorbs:
 * `is_analysis_complete` says true for an id whose record does not exist yet (or at all), its
 * results are `404 {"error": "Analysis not found."}` until the record exists and `[]` while the
 * analysis runs; result types may be spelled `IPV4`/`EMAIL`; an `extension: {}` placeholder.
 *
 * Start-up cost: nothing here opens the local database or loads undici or Hono (requests go
 * through the global fetch); the engines' declarations are read for the table's summaries only
 * (src/engine/declarations.ts), with the code of the engines named in the results.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { observableRows, observableVerdict, type ResultRow } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import type { CatalogVariant, EngineDefinition } from '../engine/contract.js';
import type { ObservableResult } from '../runner/result.js';
import { withMarking, withVerdict } from '../export/json.js';
import { verdictText, type ObservableVerdict } from '../verdict/verdict.js';
import { redact } from '../http/redact.js';
import { MarkingError, papLabel, papRank, parseMarking, recordedMarking, tlpLabel, tlpRank, type Pap, type Tlp } from '../marking/levels.js';
import { inert } from '../text/inert.js';
import { engineNames, LookupCount, openSink, outputChoice, quietOnClosedOutput, readInput, writeExport, type AnalyzeOptions } from './output.js';
import { EXIT_FAILED, EXIT_OK, UsageError, oneLine } from './errors.js';
import { canSpin } from './progress.js';

export interface RemoteOptions extends AnalyzeOptions {
  server: string;
}

/** The remote analysis could not be run or finished (exit 1); the message is one line. */
export class RemoteError extends Error {
  override name = 'RemoteError';
}

/** Default of --timeout, in seconds: the whole analysis, from submission to results. */
export const DEFAULT_TIMEOUT_S = 300;
/** Polling back-off: from the first to the longest wait between two status requests. */
const POLL_FIRST_MS = 100;
const POLL_MAX_MS = 1000;
/** The largest --timeout a timer can hold (2^31 - 1 ms). */
const MAX_TIMEOUT_S = 2_147_483;
const EXIT_GRACE_MS = 1000;
/** How much of a server's error message is repeated (an unknown engine's lists every valid one). */
const MESSAGE_MAX = 4000;

/** Where the API is: `api` is the prefix's URL (ends with "/"); `site` the root its links are relative to. */
export interface RemoteTarget {
  api: URL;
  site: URL;
}

/**
 * The API's location from --server and --prefix. A URL with a path names the prefix itself
 * (`http://host:8080/tools/api`); a bare one gets the default `/api/`. With --prefix, the URL's
 * path is a base (a reverse proxy's sub-path) and the prefix goes under it. A prefix is accepted
 * in every form operators write it: `api`, `/api`, `api/`, `/api/`, `tools/api`.
 */
export function resolveTarget(server: string, prefix: string | undefined): RemoteTarget {
  const text = server.trim();
  // `host:port` without a scheme means http.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError('--server (or OAS_SERVER) must be the server\'s URL, e.g. http://127.0.0.1:8080');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--server must be an http:// or https:// URL, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('--server must not hold credentials: give the token with --token or OAS_API_TOKEN');
  }
  const path = segments(url.pathname);
  const prefixPath = prefix === undefined ? (path.length > 0 ? path : ['api']) : [...path, ...segments(prefix)];
  const base = prefix === undefined ? [] : path;
  const origin = url.origin;
  return {
    api: new URL(`${origin}/${prefixPath.map((s) => `${s}/`).join('')}`),
    site: new URL(`${origin}/${base.map((s) => `${s}/`).join('')}`),
  };
}

function segments(path: string): string[] {
  return path.split('/').filter(Boolean);
}

/** --timeout in milliseconds. */
export function parseTimeout(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_S * 1000;
  const seconds = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_S) {
    throw new UsageError(`--timeout must be a number of seconds between 0 and ${MAX_TIMEOUT_S} (default ${DEFAULT_TIMEOUT_S})`);
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/** The token from --token, else OAS_API_TOKEN; never part of any message. */
export function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = flag ?? env.OAS_API_TOKEN;
  if (token === undefined || token === '') return undefined;
  // What an Authorization header can carry; fetch would otherwise fail with the value in its message.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new UsageError(`the token (${flag !== undefined ? '--token' : 'OAS_API_TOKEN'}) must be printable ASCII without spaces`);
  }
  return token;
}

export async function remoteAnalyzeCommand(words: string[], options: RemoteOptions): Promise<number> {
  const target = resolveTarget(options.server, options.prefix);
  const timeoutMs = parseTimeout(options.timeout);
  const token = resolveToken(options.token);
  const variant = parseVariant(options.catalog);
  const { format, file } = outputChoice(options);
  const stdout = quietOnClosedOutput();
  const paths = options.file ?? [];
  // With --file, the text is the arguments only (standard input may be one of the files).
  const input = paths.length > 0 ? words.filter((w) => w !== '-').join(' ') : await readInput(words);
  const named = engineNames(options);
  const marking = remoteMarking(options);

  const definitions = new DefinitionLoader(options.config);
  try {
    // Without --engines: the local catalog's default engines, by id (what the local mode runs).
    // A set (`--set`, `@name`) the local configuration defines is expanded here, so that a server
    // without it (Cyberbro) gets engine names; any other is left for the server to expand.
    const local = named === undefined || named.some((name) => name.startsWith('@')) ? await definitions.catalog(variant, []) : undefined;
    const engines = named === undefined
      ? local!.defaults().map((e) => e.id)
      : local?.expandKnownSets(named) ?? named;
    const client = new RemoteClient(target, token, timeoutMs);
    const refused = marking && await unmarkedServerRefusal(client, target.api.origin, marking);
    if (refused) throw new UsageError(refused);
    const spinner = options.quiet ? undefined : await startSpinner(target); // --quiet: no progress
    let analysis: { id: string; link: string; results: unknown[] };
    // The marking, when --tlp and --pap say it whole (else it is the server's, unknown here: the
    // handle of the spec says nothing more), shown and exported as the local mode does.
    const recorded = marking && recordedMarking(marking);
    const started = new Date().toISOString();
    try {
      const request = { text: input, engines, ignore_cache: options.ignoreCache ?? false, ...(options.ignoreAllowlist ? { ignore_allowlist: true } : {}), ...marking };
      analysis = await client.analyze(paths.length > 0 ? await fileForm(client, target.api.origin, paths, request, options.column) : request, spinner?.update);
    } finally {
      spinner?.stop();
      client.close();
    }
    const results = analysis.results;
    if (results.length === 0) throw new UsageError('no observable found in the text (the server found none)');
    // The reference (v0.11) leaves null for an observable whose worker crashed.
    if (results.every((r) => r === null)) throw new RemoteError(`analysis ${analysis.id} has no result for any of its observables`);

    const forRows = results.filter((r): r is ObservableResult => r !== null).map(normalizeResult);
    const keys = new Set(forRows.flatMap((r) => Object.keys(r)));
    // The engines' code, for their summaries and for the verdicts every format carries.
    const catalog = await definitions.catalog(variant, [...keys]);
    // Each result's verdict, worked out once (from its normalised form): every format takes it.
    const verdicts = forRows.map((result) => observableVerdict(result, catalog));
    const rows: ResultRow[] = [];
    const count = new LookupCount(catalog, format === 'table' ? rows : undefined, (result, judged) => tableRows(result, catalog, judged));
    forRows.forEach((result, i) => count.add(result, verdicts[i]));
    const sink = openSink(file, format, stdout);
    // json and jsonl: the server's elements as it sent them, each with the verdict of its
    // normalised form; the other formats are made from the normalised results.
    let next = 0;
    const elements = results.map((r) => (r === null ? null : withMarking(withVerdict(r as ObservableResult, verdicts[next++]!), recorded)));
    if (format === 'json') {
      await sink.write(`${JSON.stringify(elements, null, 2)}\n`);
    } else if (format === 'jsonl') {
      for (const element of elements) if (element !== null) await sink.write(`${JSON.stringify(element)}\n`);
    } else if (format === 'table') {
      const { renderTable, markingLine } = await import('./table.js');
      const footer = [`${forRows.length} observable(s), ${engines.length} engine(s)${count.failed ? `, ${count.failed} failed lookup(s)` : ''}`, `analysis ${analysis.id}`, analysis.link];
      const heading = recorded ? `${markingLine(recorded, sink.isTTY && options.color !== false && !process.env['NO_COLOR'])}\n\n` : '';
      await sink.write(`${heading}${renderTable(rows, sink.isTTY ? process.stdout.columns : undefined, { ...(sink.isTTY ? {} : { color: false }), named, footer })}\n`);
    } else {
      const stored = forRows.map((r, i) => ({ value: JSON.stringify(r), verdict: verdictText(verdicts[i]!) }));
      const source = { id: analysis.id, created_at: started, finished_at: new Date().toISOString(), marking: recorded, pages: async function* () { yield stored; } };
      await writeExport(format, source, catalog, sink);
    }
    await sink.close();
    return count.everyEngineFailed ? EXIT_FAILED : EXIT_OK;
  } catch (error) {
    if (error instanceof RemoteError) {
      process.stderr.write(`oas: ${inert(oneLine(error.message))}\n`); // a server's words may hold control characters
      return EXIT_FAILED;
    }
    throw error;
  } finally {
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  }
}

function parseVariant(flag: string | undefined): CatalogVariant {
  const value = flag ?? (process.env.OAS_CATALOG || undefined) ?? 'main';
  if (value !== 'main' && value !== 'older') throw new UsageError(`--catalog must be "main" or "older", not "${value}"`);
  return value;
}

interface AnalysisRequest {
  text: string;
  engines: string[];
  ignore_cache: boolean;
  /** Sent only when asked (`--ignore-allowlist`): an oas server's field, unknown to Cyberbro. */
  ignore_allowlist?: boolean;
  tlp?: Tlp;
  pap?: Pap;
}

/** `--tlp` and `--pap` as levels (exit 2 naming the allowed ones); undefined when neither is given. */
function remoteMarking(options: RemoteOptions): { tlp?: Tlp; pap?: Pap } | undefined {
  if (options.tlp === undefined && options.pap === undefined) return undefined;
  try {
    return parseMarking(options);
  } catch (error) {
    if (error instanceof MarkingError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * An analysis marked above AMBER goes only to a server that honours the marking (an oas server,
 * which has `/ui/engines`); a Cyberbro server knows neither TLP nor PAP and would send the
 * observables to every engine named, so nothing is sent to it (issue 34). Asking costs one GET
 * that carries no observable. The refusal (one line), or undefined when it may be sent.
 */
export async function unmarkedServerRefusal(client: RemoteClient, origin: string, marking: { tlp?: Tlp | undefined; pap?: Pap | undefined }): Promise<string | undefined> {
  const above = [
    marking.tlp && tlpRank(marking.tlp) > tlpRank('AMBER') ? tlpLabel(marking.tlp) : undefined,
    marking.pap && papRank(marking.pap) > papRank('AMBER') ? papLabel(marking.pap) : undefined,
  ].filter((label): label is string => label !== undefined);
  if (above.length === 0) return undefined;
  if (isOasCatalog(await client.catalogView())) return undefined;
  return (`not sent: the server at ${origin} is not an oas server (no /ui/engines): it knows no TLP or PAP, so an analysis marked ${above.join(' and ')} is not sent to it; run it here without --server, or mark it AMBER or lower`);
}

/**
 * `--file`: the multipart form of an oas server's `POST {prefix}analyze` (issue 35), each file a
 * `file` part read there. A Cyberbro server takes no file: nothing is sent to it. The files are
 * read here up to the default max_upload_bytes; the server applies its own.
 */
async function fileForm(client: RemoteClient, origin: string, paths: readonly string[], request: AnalysisRequest, columns: readonly string[] | undefined): Promise<FormData> {
  if (!isOasCatalog(await client.catalogView())) {
    throw new UsageError(`not sent: the server at ${origin} is not an oas server (no /ui/engines) and takes no file; run it here without --server to read the file locally`);
  }
  const { fileBytes, STDIN_NAME } = await import('./files-in.js');
  const [{ displayName, uploadLimits }, { defaultConfig }] = await Promise.all([import('../files/upload.js'), import('../config/schema.js')]);
  const limits = uploadLimits(defaultConfig());
  const form = new FormData();
  for (const path of paths) form.append('file', new Blob([await fileBytes(path, limits)]), path === '-' ? STDIN_NAME : displayName(path));
  form.append('engines', request.engines.join(','));
  form.append('ignore_cache', String(request.ignore_cache));
  if (request.ignore_allowlist) form.append('ignore_allowlist', 'true');
  if (request.text) form.append('text', request.text);
  if (request.tlp) form.append('tlp', request.tlp);
  if (request.pap) form.append('pap', request.pap);
  if (columns?.length) form.append('column', columns.join(','));
  return form;
}

function isOasCatalog(view: unknown): boolean {
  return typeof view === 'object' && view !== null && Array.isArray((view as { engines?: unknown }).engines);
}

interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

/** The three endpoints, under one deadline for the whole analysis. */
export class RemoteClient {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(private readonly target: RemoteTarget, private readonly token: string | undefined, private readonly timeoutMs: number) {
    this.timer = setTimeout(() => this.controller.abort(), timeoutMs);
  }

  close(): void {
    clearTimeout(this.timer);
    this.controller.abort();
  }

  /** Submits the analysis, waits for it and returns its results. */
  /** Submits the analysis (JSON, or a multipart form with files: an oas server's) and waits for its results. */
  async analyze(request: AnalysisRequest | FormData, progress?: (elapsedMs: number, id?: string) => void): Promise<{ id: string; link: string; results: unknown[] }> {
    const { id, link } = request instanceof FormData ? await this.submitForm(request) : await this.submit(request);
    progress?.(Date.now() - this.started, id);
    const results = await this.wait(id, (elapsed) => progress?.(elapsed, id));
    return { id, link, results };
  }

  async submit(request: AnalysisRequest): Promise<{ id: string; link: string }> {
    return this.postAnalysis(JSON.stringify(request));
  }

  /**
   * Submits an analysis of a file (an oas server's multipart `POST {prefix}analyze`, issue 35):
   * `form` holds the `file` part and the fields (`engines` comma-separated, `tlp`, `pap`...).
   */
  async submitForm(form: FormData): Promise<{ id: string; link: string }> {
    return this.postAnalysis(form);
  }

  /** POSTs the analysis and reads its id and page. */
  private async postAnalysis(payload: string | FormData): Promise<{ id: string; link: string }> {
    const url = new URL('analyze', this.target.api);
    const answer = await this.call('POST', url, payload, undefined);
    if (answer.status < 200 || answer.status > 299) throw this.failure(answer, 'POST', url);
    const body = this.json(answer, 'POST', url) as { analysis_id?: unknown; link?: unknown } | null;
    const id = body?.analysis_id;
    if (typeof id !== 'string' || !/^[\w.-]{1,200}$/.test(id)) {
      throw new RemoteError(`unexpected answer to POST ${url.pathname} from ${this.target.api.origin}: no analysis_id`);
    }
    const path = typeof body?.link === 'string' && body.link.startsWith('/') ? body.link.slice(1) : `results/${id}`;
    return { id, link: new URL(path, this.target.site).href };
  }

  /**
   * Polls until the results are there. `complete: true` is taken at its word only once the
   * analysis is known to exist (a `complete: false`, or a results array seen before): the
   * reference says true for an id whose record its worker has not written yet, answers 404 for
   * its results until then, and `[]` while it runs. Until then (and on oas's 409), it polls on.
   */
  private async wait(id: string, progress: (elapsedMs: number) => void): Promise<unknown[]> {
    const status = new URL(`is_analysis_complete/${encodeURIComponent(id)}`, this.target.api);
    const resultsUrl = new URL(`results/${encodeURIComponent(id)}`, this.target.api);
    let exists = false;
    let delay = POLL_FIRST_MS;
    for (;;) {
      const answer = await this.call('GET', status, undefined, id);
      if (answer.status === 404) throw new RemoteError(`analysis ${id} not found on ${this.target.api.origin} (HTTP 404)`);
      if (answer.status !== 200) throw this.failure(answer, 'GET', status);
      const body = this.json(answer, 'GET', status) as { complete?: unknown } | null;
      if (typeof body?.complete !== 'boolean') {
        throw new RemoteError(`unexpected answer to GET ${status.pathname} from ${this.target.api.origin}: no "complete"`);
      }
      if (!body.complete) {
        exists = true;
      } else {
        const results = await this.call('GET', resultsUrl, undefined, id);
        if (results.status === 200) {
          const array = this.json(results, 'GET', resultsUrl);
          if (!isResultArray(array)) {
            throw new RemoteError(`unexpected answer to GET ${resultsUrl.pathname} from ${this.target.api.origin}: not a result array`);
          }
          // Non-empty: written at the end (reference) or served complete only (oas).
          if (array.length > 0 || exists) return array;
          exists = true;
          continue; // Ask again now that the record is known to exist.
        } else if (results.status !== 404 && results.status !== 409) {
          throw this.failure(results, 'GET', resultsUrl);
        }
      }
      progress(Date.now() - this.started);
      await this.pause(delay, id);
      delay = Math.min(POLL_MAX_MS, Math.round(delay * 1.5));
    }
  }

  /**
   * One look at an analysis: undefined for an unknown id; its results once complete and there
   * (a Cyberbro server says complete before its results are written, and `[]` while it runs).
   */
  async check(id: string): Promise<{ complete: boolean; results: unknown[] } | undefined> {
    const status = new URL(`is_analysis_complete/${encodeURIComponent(id)}`, this.target.api);
    const answer = await this.call('GET', status, undefined, id);
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw this.failure(answer, 'GET', status);
    const body = this.json(answer, 'GET', status) as { complete?: unknown } | null;
    if (body?.complete !== true) return { complete: false, results: [] };
    const resultsUrl = new URL(`results/${encodeURIComponent(id)}`, this.target.api);
    const results = await this.call('GET', resultsUrl, undefined, id);
    if (results.status === 404 || results.status === 409) return { complete: false, results: [] };
    if (results.status !== 200) throw this.failure(results, 'GET', resultsUrl);
    const array = this.json(results, 'GET', resultsUrl);
    if (!isResultArray(array)) throw new RemoteError(`unexpected answer to GET ${resultsUrl.pathname} from ${this.target.api.origin}: not a result array`);
    return array.length > 0 ? { complete: true, results: array } : { complete: false, results: [] };
  }

  /** The server's engine catalog (`/ui/engines` of an oas server); undefined when it has none (Cyberbro). */
  async catalogView(): Promise<unknown> {
    const url = new URL('ui/engines', this.target.site);
    const answer = await this.call('GET', url, undefined, undefined);
    if (answer.status !== 200) return undefined;
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      return undefined;
    }
  }

  private async pause(ms: number, id: string): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: this.controller.signal });
    } catch {
      throw this.timedOut(id);
    }
  }

  private async call(method: 'GET' | 'POST', url: URL, body: string | FormData | undefined, id: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    // A form's content type (with its boundary) is written by fetch.
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    try {
      const response = await fetch(url, { method, headers, body, signal: this.controller.signal, redirect: 'follow' });
      return { status: response.status, statusText: response.statusText, headers: response.headers, text: await response.text() };
    } catch (error) {
      if (this.controller.signal.aborted) throw this.timedOut(id);
      throw new RemoteError(`cannot reach the server at ${url.origin}: ${networkReason(error)}`);
    }
  }

  private timedOut(id: string | undefined): RemoteError {
    const seconds = Math.round(this.timeoutMs / 100) / 10;
    return id === undefined
      ? new RemoteError(`no answer from the server at ${this.target.api.origin} within ${seconds} s (--timeout)`)
      : new RemoteError(`analysis ${id} did not complete on ${this.target.api.origin} within ${seconds} s (--timeout); it may still finish there`);
  }

  private json(answer: Answer, method: string, url: URL): unknown {
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      throw new RemoteError(`the answer to ${method} ${url.pathname} from ${url.origin} is not valid JSON (HTTP ${answer.status})`);
    }
  }

  /** One line for an answer that is not what was asked. 400, 413 and 422 (a file that cannot be read) are the caller's input (exit 2). */
  private failure(answer: Answer, method: string, url: URL): Error {
    const message = this.serverMessage(answer.text);
    const status = `HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ''}`;
    const origin = url.origin;
    switch (answer.status) {
      case 400:
      case 413:
      case 422:
        return new UsageError(message ?? `the server at ${origin} refused the request (${status})`);
      case 401:
        return new RemoteError(this.token === undefined
          ? `the server at ${origin} needs an API token (${status}): give it with --token or OAS_API_TOKEN`
          : `the server at ${origin} refused the API token (${status}): check --token or OAS_API_TOKEN`);
      case 403:
        return new RemoteError(`the server at ${origin} refused access (${status})${message ? `: ${message}` : ''}`);
      case 404:
        return new RemoteError(`no analysis API at ${url.href} (${status}): check the server URL and --prefix`);
      case 421:
        return new RemoteError(`the server at ${origin} does not answer to the name ${url.host} (${status}): add it to the server's allowed_hosts`);
      case 429: {
        const retry = answer.headers.get('retry-after');
        return new RemoteError(`the server at ${origin} is rate limiting analyses (${status})${retry && /^\d+$/.test(retry) ? `: retry in ${retry} s` : ''}`);
      }
      default:
        if (answer.status >= 500) return new RemoteError(`the server at ${origin} failed (${status})${message ? `: ${message}` : ''}`);
        return new RemoteError(`unexpected answer to ${method} ${url.pathname} from ${origin} (${status})${message ? `: ${message}` : ''}`);
    }
  }

  /** The `error` of a JSON error body, on one line, bounded, the token masked. */
  private serverMessage(text: string): string | undefined {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return undefined;
    }
    const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
    if (typeof error !== 'string' || error.trim() === '') return undefined;
    const message = redact(oneLine(error.trim()), this.token === undefined ? [] : [this.token]);
    return message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX - 1)}…` : message;
  }
}

function isResultArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.every((r) => r === null || (typeof r === 'object' && !Array.isArray(r)
    && typeof (r as { observable?: unknown }).observable === 'string' && typeof (r as { type?: unknown }).type === 'string'));
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return oneLine(cause.message);
  return error instanceof Error ? oneLine(error.message) : String(error);
}

/** The reference's (HEAD's) type spellings, as our tables name the types. */
const TYPE_NAMES: Record<string, string> = { IPV4: 'IPv4', IPV6: 'IPv6', EMAIL: 'Email' };

/**
 * A result as the table reads it: types spelled as ours, without the reference's `extension`
 * placeholder (`{}` for any observable that is not a browser extension).
 */
export function normalizeResult(result: ObservableResult): ObservableResult {
  const copy: ObservableResult = { ...result, type: (TYPE_NAMES[result.type] ?? result.type) as ObservableResult['type'] };
  const extension = copy.extension;
  if (extension === null || (typeof extension === 'object' && Object.keys(extension).length === 0)) delete copy.extension;
  return copy;
}

/** The rows of one result and its verdict; an engine unknown here (or whose summary cannot read it) gets a generic summary. */
function tableRows(result: ObservableResult, catalog: Catalog, judged: ObservableVerdict): ResultRow[] {
  return observableRows(result, catalog, judged).map((row) => {
    if (row.status !== 'ok' || (catalog.find(row.engine) && row.summary !== 'result')) return row;
    return { ...row, summary: genericSummary(result[row.engine]) };
  });
}

/** A one-line look at any engine's result: its first plain fields. */
export function genericSummary(value: unknown, max = 120): string {
  const scalar = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);
  const parts: string[] = [];
  if (Array.isArray(value)) {
    parts.push(`${value.length} item(s)`);
    const first = value.map(scalar).filter((s): s is string => s !== undefined && s !== '');
    if (first.length > 0) parts.push(first.join(', '));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      const text = scalar(v);
      if (text !== undefined && text !== '') parts.push(`${key}: ${text}`);
      else if (Array.isArray(v) && v.length > 0) parts.push(`${key}: ${v.map((e) => scalar(e) ?? '…').join(', ')}`);
    }
  } else {
    const text = scalar(value);
    if (text !== undefined) parts.push(text);
  }
  const line = oneLine(parts.join('; ')) || 'result';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The local catalog, for the defaults and the summaries only: from the engines' cached
 * declarations (src/engine/declarations.ts), with the code of the engines named imported for
 * real; without a fresh copy, every engine module (and the copy is written for next time). A
 * catalog that cannot be built gives generic summaries rather than a failure.
 */
class DefinitionLoader {
  private full: EngineDefinition[] | undefined;

  /** `configFile`: --config; the local configuration's custom engines give their summaries and verdicts too. */
  constructor(private readonly configFile: string | undefined) {}

  async catalog(variant: CatalogVariant, names: readonly string[]): Promise<Catalog> {
    const { Catalog } = await import('../engine/catalog.js');
    let definitions: EngineDefinition[];
    try {
      definitions = await this.definitions(names);
    } catch {
      return new Catalog([], variant);
    }
    try {
      // The team's servers usually share the analyst's configuration: its custom engines are
      // judged and summed up here as there. A configuration that cannot be read adds none.
      const { settingsOf } = await import('../app.js');
      return (await settingsOf({ file: this.configFile, flags: { catalog: variant } }, definitions)).catalog;
    } catch {
      return new Catalog(definitions, variant);
    }
  }

  private async definitions(names: readonly string[]): Promise<EngineDefinition[]> {
    if (this.full) return this.full;
    const { declaredDefinitions, importedDefinitions } = await import('../engine/declarations.js');
    const wanted = new Set(names.flatMap((n) => [n, n.trim().toLowerCase()]));
    try {
      const declared = await declaredDefinitions(() => ({}), () => wanted);
      if (declared) return declared;
    } catch {
      // Read from the modules below.
    }
    this.full = await importedDefinitions();
    return this.full;
  }
}

/** A spinner on stderr while the server works, only when stderr is a terminal. */
async function startSpinner(target: RemoteTarget): Promise<{ update: (elapsedMs: number, id?: string) => void; stop: () => void } | undefined> {
  if (!canSpin()) return undefined;
  const { default: ora } = await import('ora');
  const label = `Analyzing on ${target.api.origin}`;
  const spinner = ora({ text: `${label}: submitting`, stream: process.stderr }).start();
  return {
    update: (elapsedMs, id) => {
      spinner.text = `${label}: analysis ${id ?? ''} running (${Math.floor(elapsedMs / 1000)} s)`;
    },
    stop: () => spinner.stop(),
  };
}
