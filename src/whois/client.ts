/**
 * Minimal WHOIS client (RFC 3912): open TCP port 43, send the query and CRLF, read until the
 * server closes. The registry's server is found by asking IANA's WHOIS server about the TLD
 * (its `refer:` line), unless the operator names one.
 *
 * WHOIS goes straight over TCP: the HTTP proxy setting does not apply to it.
 */
import { connect } from 'node:net';
import type { EngineContext } from '../engine/contract.js';
import { UpstreamError } from '../http/errors.js';

export const WHOIS_PORT = 43;
/** Answers are a few KB; anything near this is not a WHOIS record. */
export const MAX_WHOIS_BYTES = 1024 * 1024;
const REFERRAL_TTL_MS = 24 * 60 * 60 * 1000;

export interface WhoisServer {
  host: string;
  port: number;
}

/** A WHOIS failure. `reason` is the message without the "WHOIS" prefix, for combined messages. */
export class WhoisError extends UpstreamError {
  override name = 'WhoisError';
  readonly reason: string;
  constructor(reason: string, retryable = false) {
    super(`WHOIS ${reason}`, retryable);
    this.reason = reason;
  }
}

/**
 * `host`, `host:port`, `[v6]:port` or a bare IPv6 address. Without a port, 43 is used: IANA
 * referrals never carry one, but settings (and test fakes) may.
 */
export function parseServer(spec: string, defaultPort = WHOIS_PORT): WhoisServer | null {
  const text = spec.trim();
  if (!text) return null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : defaultPort };
  const parts = text.split(':');
  if (parts.length === 2 && /^\d+$/.test(parts[1]!)) return { host: parts[0]!, port: Number(parts[1]) };
  // More than one colon without brackets: an IPv6 address with no port.
  return { host: text, port: defaultPort };
}

/** `host` when on port 43, else `host:port`: how servers are named in links and messages. */
export function formatServer(server: WhoisServer): string {
  const host = server.host.includes(':') ? `[${server.host}]` : server.host;
  return server.port === WHOIS_PORT ? host : `${host}:${server.port}`;
}

export interface QueryOptions {
  signal: AbortSignal;
  /** Epoch ms; the socket is destroyed then. */
  deadline: number;
  maxBytes?: number;
}

/** Sends one query and returns the whole answer. Failures are one-line WhoisErrors. */
export function whoisQuery(server: WhoisServer, query: string, options: QueryOptions): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_WHOIS_BYTES;
  const where = formatServer(server);
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = connect({ host: server.host, port: server.port });

    const finish = (error: WhoisError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      if (error) reject(error);
      else resolve(decode(Buffer.concat(chunks)));
    };
    const onAbort = () => finish(new WhoisError(`timeout (${where})`, true));
    const timer = setTimeout(onAbort, Math.max(0, options.deadline - Date.now()));
    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener('abort', onAbort, { once: true });

    socket.on('connect', () => socket.write(`${query}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(new WhoisError(`answer from ${where} larger than ${maxBytes} bytes`));
      chunks.push(chunk);
    });
    socket.on('end', () => finish(size === 0 ? new WhoisError(`empty answer from ${where}`, true) : null));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(new WhoisError(describe(error, where), true)));
  });
}

/** One line per socket failure, e.g. "connection refused (whois.example:43)". */
function describe(error: NodeJS.ErrnoException, where: string): string {
  switch (error.code) {
    case 'ECONNREFUSED': return `connection refused (${where})`;
    case 'ECONNRESET': return `connection reset (${where})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return `unknown host (${where})`;
    case 'ETIMEDOUT': return `timeout (${where})`;
    default: return `network error ${error.code ?? error.message.split('\n')[0]} (${where})`;
  }
}

/** Most registries answer in UTF-8; a few still use Latin-1, which would decode to U+FFFD. */
function decode(body: Buffer): string {
  const text = body.toString('utf8');
  return text.includes('\uFFFD') ? body.toString('latin1') : text;
}

/** The WHOIS server IANA names for a TLD (`refer:`, else `whois:`), or null when none. */
export function parseReferral(ianaAnswer: string): WhoisServer | null {
  const line = (key: string) => new RegExp(`^${key}:[ \\t]*(\\S+)`, 'im').exec(ianaAnswer)?.[1];
  const spec = line('refer') ?? line('whois');
  return spec ? parseServer(spec) : null;
}

export interface WhoisAnswer {
  server: WhoisServer;
  text: string;
}

export interface LookupSettings {
  /** IANA's server, `host[:port]`. */
  ianaServer: string;
  /** Operator override, `host[:port]`; empty means "use IANA's referral". */
  server?: string;
}

/**
 * Queries the registry WHOIS server for a domain. The IANA referral per TLD is kept in the
 * engine store for a day: it changes about as often as the RDAP bootstrap file.
 */
export async function whoisLookup(ctx: EngineContext, domain: string, settings: LookupSettings): Promise<WhoisAnswer> {
  const options: QueryOptions = { signal: ctx.signal, deadline: ctx.deadline };
  let server = settings.server ? parseServer(settings.server) : null;
  if (!server) {
    const tld = domain.slice(domain.lastIndexOf('.') + 1).toLowerCase();
    const iana = parseServer(settings.ianaServer);
    if (!iana) throw new WhoisError('no IANA server configured');
    const key = `whois-referral:${formatServer(iana)}:${tld}`;
    const cached = await ctx.store.get<Partial<WhoisServer>>(key);
    server = typeof cached?.host === 'string' && typeof cached.port === 'number' ? { host: cached.host, port: cached.port } : null;
    if (!server) {
      server = parseReferral(await whoisQuery(iana, tld, options));
      if (!server) throw new WhoisError(`no server known for .${tld}`);
      await ctx.store.set(key, server, REFERRAL_TTL_MS);
    }
  }
  return { server, text: await whoisQuery(server, domain, options) };
}
