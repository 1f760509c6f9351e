/**
 * The log of `oas serve`, on stderr: one line per request (time, client address, method, path,
 * status, milliseconds) and one per engine error of an analysis (engine id and its one-line,
 * already redacted reason). `log_format: "text"` (default) or `"json"` (one object per line).
 *
 * The path is logged without its query string (a client may put anything there), and every line
 * goes through the same masking as engine errors: the API token and the engines' secrets are
 * replaced by `***` should they ever turn up (they never should).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { redactor } from '../http/redact.js';
import { inertLine } from '../text/inert.js';
import { remoteAddress } from './rate-limit.js';
import { nodeRequest } from './request-header.js';

export type LogFormat = 'text' | 'json';

export interface RequestLogEntry {
  time: string;
  client: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface EngineErrorEntry {
  analysis: string;
  engine: string;
  error: string;
}

export interface Logger {
  request(entry: RequestLogEntry): void;
  engineError(entry: EngineErrorEntry): void;
  /** A server error (one line, no stack trace). */
  error(message: string): void;
  /** News that is no error, such as a recovery (one line). */
  info(message: string): void;
}

export interface LoggerOptions {
  format: LogFormat;
  /** Values never to print (the API token, engine keys). */
  secrets?: Iterable<string>;
  write?: (line: string) => void;
}

const MAX_FIELD = 2000;

/**
 * One line, bounded, secrets masked, inert (src/text/inert.ts): a line break is a space, any other
 * control or bidi character (ESC, C1, U+202E...) a visible escape such as `\x1b`, so that an
 * upstream's reason never starts a log line of its own nor colours one, in text or JSON.
 */
function cleaner(secrets: Iterable<string>): (value: string) => string {
  const redact = redactor(secrets);
  return (value) => {
    const line = inertLine(redact(value));
    return line.length > MAX_FIELD ? `${line.slice(0, MAX_FIELD)}…` : line;
  };
}

export function createLogger(options: LoggerOptions): Logger {
  const clean = cleaner(options.secrets ?? []);
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const json = options.format === 'json';
  return {
    request(entry) {
      const e = { ...entry, client: clean(entry.client), method: clean(entry.method), path: clean(entry.path) };
      write(json
        ? `${JSON.stringify(e)}\n`
        : `${e.time} ${e.client} ${e.method} ${e.path} ${e.status} ${e.ms}ms\n`);
    },
    engineError(entry) {
      const time = new Date().toISOString();
      const e = { analysis: clean(entry.analysis), engine: clean(entry.engine), error: clean(entry.error) };
      write(json
        ? `${JSON.stringify({ time, event: 'engine_error', ...e })}\n`
        : `${time} engine error: ${e.engine} (analysis ${e.analysis}): ${e.error}\n`);
    },
    error(message) {
      const time = new Date().toISOString();
      const text = clean(message);
      write(json ? `${JSON.stringify({ time, event: 'error', error: text })}\n` : `${time} error: ${text}\n`);
    },
    info(message) {
      const time = new Date().toISOString();
      const text = clean(message);
      write(json ? `${JSON.stringify({ time, event: 'info', message: text })}\n` : `${time} info: ${text}\n`);
    },
  };
}

/**
 * The path of a request as sent, without its query string: under `oas serve` the request line's
 * own target (Node's `incoming.url`, no URL parsed per request), else the request URL's path.
 */
function pathOf(c: Context): string {
  const target = nodeRequest(c)?.url;
  if (target !== undefined && target.startsWith('/')) {
    const end = target.search(/[?#]/);
    return end < 0 ? target : target.slice(0, end);
  }
  try {
    return new URL(c.req.url).pathname;
  } catch {
    return c.req.url.replace(/[?#].*$/s, '');
  }
}

/**
 * Logs every request once its response is ready (errors included: they are 500s by then).
 * `clientAddress`: the peer, or behind a trusted proxy the client X-Forwarded-For names (proxy-auth.ts).
 */
export function accessLog(logger: Logger, clientAddress: (c: Context) => string = remoteAddress): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const time = new Date().toISOString();
    try {
      await next();
    } finally {
      logger.request({
        time,
        client: clientAddress(c),
        method: c.req.method,
        path: pathOf(c),
        status: c.res.status,
        ms: Math.round(performance.now() - started),
      });
    }
  };
}
