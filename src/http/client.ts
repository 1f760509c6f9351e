/**
 * The one HTTP client every engine uses: keep-alive connection pool, optional proxy, TLS
 * verification setting, per-call deadline, retries with backoff on network errors, 429 and 5xx
 * (honouring Retry-After), a cap on response size, schema validation of JSON bodies, and
 * redaction of secrets in every error it raises.
 *
 * Nothing hangs: a call fails at its deadline whatever the upstream or proxy does (undici ignores
 * a request's abort signal until a connection is ready, so the client does not wait for it);
 * opening a connection (TCP, TLS handshake, the proxy's answer to CONNECT) is bounded by
 * `connectTimeoutMs`; and closing the transport destroys every socket instead of waiting.
 */
import { isIP, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import type * as Undici from 'undici';
import type { Dispatcher, Pool, buildConnector } from 'undici';
import * as v from 'valibot';
import { resolverLookup } from './host-lookup.js';
import { BadResponseError, HttpStatusError, hostNameProblem, InvalidHostError, NetworkError, networkFailure, statusError, TimeoutError, UpstreamError } from './errors.js';
import { redact } from './redact.js';
import type { HttpClient, HttpResponse, RequestOptions } from '../engine/contract.js';

/**
 * undici, loaded by the first transport (not on import): engines import this module for its pure
 * helpers (parseJson, buildUrl), and `oas engines` or an analysis answered from the cache make no
 * request, so they must not pay for loading undici.
 */
let undiciModule: typeof Undici | undefined;
const undici = (): typeof Undici => (undiciModule ??= createRequire(import.meta.url)('undici') as typeof Undici);

export interface TransportOptions {
  proxyUrl?: string;
  sslVerify?: boolean;
  userAgent?: string;
  /** Cap on a response body; larger answers are an error. */
  maxResponseBytes?: number;
  /**
   * Cap on opening a connection: TCP connect, TLS handshake and, through a proxy, its answer to
   * CONNECT. Connections are shared by calls, so this bounds the pool; each call's deadline
   * bounds the call. Default 10 s.
   */
  connectTimeoutMs?: number;
  /** DNS servers (`ip` or `ip:port`) for upstream host names; empty or absent: the system's. */
  dnsServers?: readonly string[];
}

/** Per engine call: its deadline and the secrets that must never appear in an error. */
export interface CallOptions {
  signal: AbortSignal;
  deadline: number;
  /** The call's whole time budget, for messages ("timeout after 5000 ms"). */
  timeoutMs: number;
  retries: number;
  secrets: readonly string[];
  /** Told when the client waits before a retry (for progress displays), with the HTTP status that asked for it. */
  onWait?: (ms: number, reason: string, status?: number) => void;
  /** What holds the address, for a refused connection's hint (default `its base_url`: an engine's). */
  urlSetting?: string;
  /** Told when the upstream answers 429, with how long it asked us to wait. */
  onThrottled?: (ms: number) => void;
  /**
   * Told where each request goes as it starts (`host:port`, and its proxy), so that the call's
   * timeout can name what it waited for; the function it returns is called when it ends.
   */
  onRequest?: (where: string) => () => void;
  /**
   * The call's own cancellation (src/engine/context.ts): when given, requests are told of the
   * call's end through it, and `signal` is read only when needed (a retry's wait); else the client
   * listens to `signal`.
   */
  cancellation?: Cancellation;
}

/**
 * A call's cancellation as the client follows it: whether the call has ended, why, and a way to
 * be told that costs a Set entry rather than an AbortSignal and its listeners.
 */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `hook` with the reason when the call ends, once, unless `unwatch(hook)` came first. */
  watch(hook: (reason: unknown) => void): void;
  unwatch(hook: (reason: unknown) => void): void;
}

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** What undici's connectors really return (their type says void): the socket being opened. */
type Connector = (options: buildConnector.Options, callback: buildConnector.Callback) => Socket | undefined;

/** Redirects followed per request (as undici's redirect interceptor was set to). */
const MAX_REDIRECTIONS = 5;
/** The statuses undici's redirect handler follows (with a Location). */
const REDIRECT_STATUSES = new Set([300, 301, 302, 303, 307, 308]);

/** Owns the connection pool; hands out per-call clients. */
export class HttpTransport {
  /** The pool: requests go here, and through undici's redirect handler once an answer redirects (`Exchange`). */
  private readonly pool: Dispatcher;
  readonly userAgent: string;
  readonly maxResponseBytes: number;
  /** The proxy's `host:port` (no credentials), for messages; undefined when direct. */
  readonly proxy: string | undefined;
  /** Every socket the pool opened and that is not closed yet, connecting ones included. */
  private readonly sockets = new Set<Socket>();

  /** With `sslVerify` the opposite of the transport's: built at the first request that asks for it. */
  private otherPool: Dispatcher | undefined;

  constructor(private readonly options: TransportOptions = {}) {
    this.pool = this.build(options.sslVerify ?? true);
    this.userAgent = options.userAgent ?? 'oas (Observable Analysis Service)';
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
    this.proxy = options.proxyUrl ? proxyEndpoint(options.proxyUrl) : undefined;
  }

  /**
   * The pool for a request: the transport's, or for one that asks otherwise (an engine's own
   * `ssl_verify`, such as a custom engine's) a second pool with that TLS verification.
   */
  poolFor(sslVerify: boolean | undefined): Dispatcher {
    if (sslVerify === undefined || sslVerify === (this.options.sslVerify ?? true)) return this.pool;
    return (this.otherPool ??= this.build(sslVerify));
  }

  private build(sslVerify: boolean): Dispatcher {
    const options = this.options;
    const timeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const tls = {
      rejectUnauthorized: sslVerify,
      ...(options.dnsServers?.length ? { lookup: resolverLookup(options.dnsServers) } : {}),
    };
    const { Agent, Pool, ProxyAgent, buildConnector } = undici();
    return options.proxyUrl
      ? new ProxyAgent({
        uri: options.proxyUrl,
        requestTls: { ...tls, timeout },
        proxyTls: { ...tls, timeout },
        // The connection to the proxy carries only CONNECT requests: the proxy's answer is part of
        // opening a connection, so it gets the connect timeout (undici's default is 300 s).
        clientFactory: (origin, opts) => new Pool(origin, {
          ...(opts as Pool.Options),
          connect: this.tracked((opts as { connect: buildConnector.connector }).connect),
          headersTimeout: timeout,
          bodyTimeout: timeout,
        }),
        keepAliveTimeout: 10_000,
      })
      // Connections per origin: unbounded (null), as through the proxy. The runner bounds the calls
      // (global `concurrency`, each engine's `concurrency` and quota): a cap here would queue an
      // engine's requests behind a limit below its own setting, that no setting could raise.
      : new Agent({ connect: this.tracked(buildConnector({ ...tls, timeout })), keepAliveTimeout: 10_000, connections: null });
  }

  client(call: CallOptions): HttpClient {
    return new CallClient(this, call);
  }

  /**
   * Ends the pool at once: requests still running were abandoned by their calls, and a hung
   * upstream or proxy must not hold the process (a graceful close would wait for them).
   */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await Promise.all([this.pool, this.otherPool].map((d) => d?.destroy().catch(() => {})));
  }

  /** The connector, remembering each socket it opens until that socket closes. */
  private tracked(connector: buildConnector.connector): buildConnector.connector {
    const connect = connector as unknown as Connector;
    return (options, callback) => {
      const socket = connect(options, callback);
      if (socket) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
      }
    };
  }
}

/** The engine contract's `HttpClient` for one call: deadline, retries, secrets, over the transport's pool. */
class CallClient implements HttpClient {
  private readonly cancel: Cancellation;

  constructor(
    private readonly transport: HttpTransport,
    private readonly call: CallOptions,
    private readonly secrets: readonly string[] = call.secrets,
    cancel?: Cancellation,
  ) {
    this.cancel = cancel ?? call.cancellation ?? signalCancellation(call.signal);
  }

  /** Redacts this call's secrets and credential-looking URL parameters from a text. */
  redact(text: string): string {
    return redact(text, this.secrets);
  }

  /**
   * The same client (deadline, retries, pool), also redacting secrets only known at run time,
   * such as an OAuth access token.
   */
  withSecrets(extra: readonly string[]): HttpClient {
    return new CallClient(this.transport, this.call, [...this.secrets, ...extra.filter((s) => s !== '')], this.cancel);
  }

  async request(url: string | URL, options: RequestOptions = {}): Promise<HttpResponse> {
    const target = buildUrl(url, options.query);
    const retries = options.retries ?? this.call.retries;
    for (let attempt = 0; ; attempt++) {
      let failure: UpstreamError;
      try {
        const response = await this.once(target, options);
        if ((response.status >= 200 && response.status < 300) || options.acceptStatus?.includes(response.status)) {
          return response;
        }
        failure = statusError(response.status, undefined, parseRetryAfter(response.headers['retry-after']));
      } catch (error) {
        failure = this.toUpstreamError(error, target, options.timeoutMs);
      }
      const delay = failure instanceof HttpStatusError && failure.retryAfterMs !== undefined
        ? failure.retryAfterMs
        : backoff(attempt);
      if (failure instanceof HttpStatusError && failure.status === 429) this.call.onThrottled?.(delay);
      if (!failure.retryable || attempt >= retries || Date.now() + delay >= this.call.deadline) throw failure;
      this.call.onWait?.(delay, failure.message, failure instanceof HttpStatusError ? failure.status : undefined);
      try {
        await sleep(delay, undefined, { signal: this.call.signal });
      } catch {
        throw new TimeoutError(this.call.timeoutMs, this.where(target));
      }
    }
  }

  /** GET/POST expecting JSON, validated against `schema`: a malformed answer is a clean error. */
  async json<S extends v.GenericSchema>(url: string | URL, schema: S, options: RequestOptions = {}): Promise<v.InferOutput<S>> {
    const response = await this.request(url, {
      ...options,
      headers: { accept: 'application/json', ...options.headers },
    });
    return parseJson(response.text(), schema);
  }

  async text(url: string | URL, options: RequestOptions = {}): Promise<string> {
    return (await this.request(url, options)).text();
  }

  private async once(target: URL, options: RequestOptions): Promise<HttpResponse> {
    const remaining = this.call.deadline - Date.now();
    if (remaining <= 0) throw new TimeoutError(this.call.timeoutMs, this.where(target));
    const limit = options.timeoutMs !== undefined ? Math.min(options.timeoutMs, remaining) : remaining;
    const ended = this.call.onRequest?.(this.where(target));
    try {
      return await this.exchange(target, options, limit < remaining ? limit : undefined);
    } finally {
      ended?.();
    }
  }

  /**
   * One request and its whole answer; with `capMs`, within that many ms (the call's deadline is
   * the call's own). Dispatched to the pool with a handler that gathers the body (src/http's
   * `Exchange`): no response stream, no AbortSignal of its own, no listener on the call's.
   */
  private exchange(target: URL, options: RequestOptions, capMs: number | undefined): Promise<HttpResponse> {
    const headers: Record<string, string> = { 'user-agent': this.transport.userAgent, ...lowerKeys(options.headers) };
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    } else if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    // undici's own check of a request's URL (its `request` made it), with its error.
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return Promise.reject(new (undici().errors.InvalidArgumentError)('Invalid URL protocol: the URL must start with `http:` or `https:`.'));
    }
    if (this.cancel.aborted) return Promise.reject(this.cancel.reason);
    return new Promise<HttpResponse>((resolve, reject) => {
      const exchange = new Exchange(target, this.transport.maxResponseBytes, this.cancel, resolve, reject, options.followRedirects ?? true);
      if (capMs !== undefined) exchange.cap(capMs, new TimeoutError(capMs, this.where(target)));
      exchange.start(this.transport.poolFor(options.sslVerify), {
        origin: target.origin,
        path: target.search ? `${target.pathname}${target.search}` : target.pathname,
        method: options.method ?? (body !== undefined ? 'POST' : 'GET'),
        headers,
        body,
      });
    });
  }

  /** `host:port`, and the proxy it goes through: what a call waits for, in messages. */
  private where(target: URL): string {
    const proxy = this.transport.proxy;
    return `${target.hostname}:${portOf(target)}${proxy ? ` through the proxy ${proxy}` : ''}`;
  }

  private toUpstreamError(error: unknown, target: URL, requestTimeoutMs?: number): UpstreamError {
    // The call's deadline (its signal's reason) does not know which request it ended: name it.
    if (error instanceof TimeoutError && error.host === undefined) return new TimeoutError(this.call.timeoutMs, this.where(target));
    if (error instanceof UpstreamError) return error;
    if (this.cancel.aborted) return new TimeoutError(this.call.timeoutMs, this.where(target));
    const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    if (err?.name === 'AbortError' || err?.name === 'TimeoutError' || err?.code === 'UND_ERR_ABORTED'
      || err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError(requestTimeoutMs ?? this.call.timeoutMs, this.where(target));
    }
    const code = err?.code ?? err?.cause?.code;
    const { host, port } = this.transport.proxy ? { host: target.hostname, port: portOf(target) } : failedEndpoint(err, target);
    // A name no resolver takes (EBADNAME, EINVAL, or ENOTFOUND as if it did not exist): say why.
    const problem = this.transport.proxy ? undefined : hostNameProblem(host);
    if (problem) return new InvalidHostError(this.redact(host), problem);
    const message = code
      ? networkFailure(String(code), host, port, this.transport.proxy, this.call.urlSetting)
      : `network error talking to ${target.host}: ${String(err?.message ?? error).split('\n')[0]}`;
    return new NetworkError(this.redact(message), true);
  }
}

/** A URL's port, the scheme's default when it names none. */
function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/** `host:port` of a proxy URL, without its credentials; `proxy_url` when it does not parse. */
function proxyEndpoint(proxyUrl: string): string {
  try {
    const url = new URL(proxyUrl);
    return `${url.hostname}:${portOf(url)}`;
  } catch {
    return 'proxy_url';
  }
}

/**
 * Where a direct connection failed: the target, unless the system error names another address
 * and port, which happens after a redirect (undici follows it out of the client's sight), or a
 * name that did not resolve. A named target keeps its name when only its resolved address differs.
 */
function failedEndpoint(error: { cause?: unknown } | undefined, target: URL): { host: string; port: string } {
  const failed = (error?.cause ?? error) as { address?: unknown; port?: unknown; hostname?: unknown } | undefined;
  // A name that did not resolve (the redirect's, possibly).
  if (typeof failed?.hostname === 'string') return { host: failed.hostname, port: portOf(target) };
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (typeof failed?.address === 'string' && typeof failed.port === 'number'
    && (String(failed.port) !== portOf(target) || (isIP(host) !== 0 && failed.address !== host))) {
    return { host: failed.address, port: String(failed.port) };
  }
  return { host: target.hostname, port: portOf(target) };
}

/**
 * One request's answer gathered from undici's handler calls (its `Dispatcher.DispatchHandler`):
 * the status, the headers, the body's chunks up to the transport's cap.
 *
 * The call's end (its deadline, the analysis abandoned, the lookup over) settles it at once:
 * undici acts on an abort only once the request has a connection, and while the connection is
 * still being opened (a proxy that never answers CONNECT, a TLS handshake that never completes) it
 * would wait for the connect timeout. The abandoned request is aborted by undici when it gets its
 * connection (`onRequestStart`).
 *
 * Redirects are undici's: the request goes to the pool itself, and an answer that redirects (a
 * redirect status with a Location) is handed, with the rest of it, to undici's RedirectHandler,
 * which follows it (up to 5 times, as the redirect interceptor) and hands the final answer back
 * here. The interceptor made that handler, and a URL for its history, for every request.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private dispatchTo: Dispatcher | undefined;
  private options: Dispatcher.DispatchOptions | undefined;
  /** The redirect handler, once the first answer redirected; `hop`: that answer is still being handed to it. */
  private redirect: Dispatcher.DispatchHandler | undefined;
  private hop = false;
  private aborted = false;
  private abortReason: unknown = undefined;
  private settled = false;
  private status = 0;
  private headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onCallEnd = (reason: unknown) => this.abort(reason);

  constructor(
    private readonly target: URL,
    private readonly maxBytes: number,
    private readonly cancel: Cancellation,
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (error: unknown) => void,
    /** false: a redirect is the answer, not followed. */
    private readonly follow = true,
  ) {
    cancel.watch(this.onCallEnd);
  }

  /** Fails the request with `error` after `ms` (a request's own cap, shorter than its call's). */
  cap(ms: number, error: Error): void {
    this.timer = setTimeout(() => this.abort(error), ms);
    this.timer.unref();
  }

  start(pool: Dispatcher, options: Dispatcher.DispatchOptions): void {
    this.dispatchTo = pool;
    this.options = options;
    try {
      pool.dispatch(options, this);
    } catch (error) {
      this.onResponseError(undefined, error as Error);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted) controller.abort(this.abortReason as Error);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    if (this.follow && this.redirect === undefined && !this.settled && REDIRECT_STATUSES.has(statusCode) && headers['location']) {
      const pool = this.dispatchTo!;
      this.redirect = new (undici().RedirectHandler)(pool.dispatch.bind(pool), MAX_REDIRECTIONS, this.options!, this);
      this.hop = true;
      // Followed, or handed back here at once (then `hop` is false again, below).
      this.redirect.onResponseStart!(controller, statusCode, headers, statusMessage);
      return;
    }
    this.hop = false;
    if (statusCode < 200) return; // an informational answer: the real one follows
    this.status = statusCode;
    this.headers = flattenHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.hop) return this.redirect!.onResponseData!(controller, chunk);
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      const error = new BadResponseError(`response larger than ${this.maxBytes} bytes`);
      this.fail(error);
      controller.abort(error);
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[] | undefined>): void {
    if (this.hop) {
      // The redirect handler sends the next request now; its answer comes back here.
      this.hop = false;
      if (!this.settled) this.redirect!.onResponseEnd!(controller, trailers);
      return;
    }
    if (this.settled) return;
    this.finish();
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.resolve({ status: this.status, url: this.target.href, headers: this.headers, body, text: () => body.toString('utf8') });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.fail(error);
  }

  /** Ends the request with `reason`: rejects at once, and aborts it now or as soon as it has a connection. */
  private abort(reason: unknown): void {
    if (this.settled) return;
    this.fail(reason);
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason as Error);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.finish();
    this.chunks = [];
    this.reject(error);
  }

  private finish(): void {
    this.settled = true;
    this.cancel.unwatch(this.onCallEnd);
    if (this.timer) clearTimeout(this.timer);
  }
}

/** An AbortSignal followed as a Cancellation (a call given without one of its own). */
function signalCancellation(signal: AbortSignal): Cancellation {
  const listeners = new Map<(reason: unknown) => void, () => void>();
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason() {
      return signal.reason as unknown;
    },
    watch(hook) {
      const listener = () => {
        listeners.delete(hook);
        hook(signal.reason);
      };
      listeners.set(hook, listener);
      signal.addEventListener('abort', listener, { once: true });
    },
    unwatch(hook) {
      const listener = listeners.get(hook);
      if (!listener) return;
      listeners.delete(hook);
      signal.removeEventListener('abort', listener);
    },
  };
}

/** Parses a JSON text and validates it; any mismatch becomes a BadResponseError naming the field. */
export function parseJson<S extends v.GenericSchema>(text: string, schema: S): v.InferOutput<S> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new BadResponseError('upstream answered with malformed JSON');
  }
  return parseWith(schema, data);
}

/**
 * A JSON object with these entries, others kept: valibot's `looseObject` alone also takes a list
 * (an array is an object to it), which an upstream answering `[]` would slip through.
 */
export function jsonObject<E extends v.ObjectEntries>(entries: E, message = 'expected a JSON object') {
  return v.pipe(
    v.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), message),
    v.looseObject(entries),
  );
}

/** `data` as `schema` says, else a BadResponseError naming where (under `at`, e.g. `victims.3`). */
export function parseWith<S extends v.GenericSchema>(schema: S, data: unknown, at?: string): v.InferOutput<S> {
  const result = v.safeParse(schema, data);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const inner = issue.path?.map((p: { key: unknown }) => String(p.key)).join('.') ?? '';
  const path = [at, inner].filter(Boolean).join('.') || '(root)';
  // A needed part that is not there: say so, rather than valibot's `Invalid key: Expected ...`.
  const what = issue.received === 'undefined' && inner !== '' ? 'missing' : issue.message;
  throw new BadResponseError(`unexpected answer from upstream at ${path}: ${what}`);
}

export function buildUrl(url: string | URL, query?: RequestOptions['query']): URL {
  const target = new URL(url.toString());
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) target.searchParams.set(name, String(value));
  }
  return target;
}

/** Retry-After as seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function backoff(attempt: number): number {
  const base = 200 * 2 ** attempt;
  return base + Math.floor(Math.random() * base * 0.25);
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  // undici names headers in lower case; only a repeated header (a list) or a hole needs a copy.
  let plain = true;
  for (const name in headers) {
    if (typeof headers[name] !== 'string') {
      plain = false;
      break;
    }
  }
  if (plain) return headers as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}
