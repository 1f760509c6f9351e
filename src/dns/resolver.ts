/**
 * Shared DNS helpers for the DNS-based engines: what to ask for an observable, direct lookups
 * through the configured (or system) resolvers, and one wording for DNS failures, so that a
 * resolver error and a DNS-over-HTTPS status read the same to the analyst.
 */
import { Resolver } from 'node:dns/promises';
import { EngineError, type EngineContext } from '../engine/contract.js';
import { TimeoutError, UpstreamError } from '../http/errors.js';
import { hostOf, ipVersion, reverseName } from '../observables/host.js';
import type { Observable } from '../observables/types.js';

/** A name to resolve forward (A/AAAA...), or an address to resolve backward (PTR). */
export type DnsTarget = { kind: 'name'; name: string } | { kind: 'ip'; ip: string };

/** FQDN / URL with a host name -> name; IP / URL with an IP literal -> ip; anything else -> null. */
export function dnsTarget(observable: Observable): DnsTarget | null {
  const host = hostOf(observable);
  if (!host) return null;
  return ipVersion(host) ? { kind: 'ip', ip: host } : { kind: 'name', name: host };
}

/** Strips the root label's dot: `dns.google.` -> `dns.google`. */
export function stripDot(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** DNS response codes by number (RFC 1035 4.1.1), as DoH JSON APIs report them in `Status`. */
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

const RCODE_REASONS: Record<string, string> = {
  SERVFAIL: 'DNS server failure (SERVFAIL)',
  REFUSED: 'DNS query refused (REFUSED)',
  FORMERR: 'DNS server rejected the query (FORMERR)',
  NOTIMP: 'DNS query type not implemented by the server (NOTIMP)',
};

/**
 * The error for a failing DNS response code (a name such as `SERVFAIL`, or a DoH `Status`
 * number) — one wording for resolver errors and DoH answers alike. NOERROR and NXDOMAIN are
 * answers, not errors: callers handle them before.
 */
export function dnsStatusError(rcode: string | number): UpstreamError {
  const name = typeof rcode === 'number' ? RCODES[rcode] ?? String(rcode) : rcode;
  // SERVFAIL is often transient (an authoritative server unreachable); the others are not.
  return new UpstreamError(RCODE_REASONS[name] ?? `DNS error (rcode ${name})`, name === 'SERVFAIL');
}

/** `a, b, c +2 more`: a list of answers short enough for a table cell. */
export function listSummary(items: readonly string[], shown = 3): string {
  const more = items.length - shown;
  return items.slice(0, shown).join(', ') + (more > 0 ? ` +${more} more` : '');
}

export function resolveA(ctx: EngineContext, name: string): Promise<string[]> {
  return lookup(ctx, (r) => r.resolve4(name));
}

export function resolveAAAA(ctx: EngineContext, name: string): Promise<string[]> {
  return lookup(ctx, (r) => r.resolve6(name));
}

/** PTR names of an IPv4/IPv6 address, without trailing dots. */
export async function reversePtr(ctx: EngineContext, ip: string): Promise<string[]> {
  return (await lookup(ctx, (r) => r.resolvePtr(reverseName(ip)))).map(stripDot);
}

/** TXT records of a name, each record's character-strings joined into one text (RFC 7208 3.3). */
export async function resolveTxt(ctx: EngineContext, name: string): Promise<string[]> {
  return (await lookup(ctx, (r) => r.resolveTxt(name))).map((chunks) => chunks.join(''));
}

/**
 * Two tries, so one lost UDP packet is sent again; each gets a third of the remaining time as
 * c-ares lengthens later tries. c-ares' timing is only approximate: the call's signal, which
 * cancels the resolver, is the hard deadline.
 */
const TRIES = 2;
/** Node's timers may fire a few ms before `Date.now()` reaches the deadline they were set for. */
const TIMER_SLACK_MS = 20;
/** Resolver codes that mean "no such name" or "no record of that type": an empty answer. */
const NO_ANSWER = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

/**
 * Runs one query bounded by the call's deadline, on a resolver of its own while it runs: a
 * resolver's `cancel()` cancels every query it has, so the call's signal cancels exactly this one.
 * The resolver comes from a pool (`resolverFor`) and goes back to it afterwards: making one per
 * query (a c-ares channel, its UDP socket) cost more CPU than the query. Node keeps no c-ares
 * answer cache, so a reused resolver answers as a fresh one would.
 */
async function lookup<T>(ctx: EngineContext, query: (resolver: Resolver) => Promise<T[]>): Promise<T[]> {
  const remaining = ctx.deadline - Date.now();
  if (remaining <= 0 || ctx.signal.aborted) throw cancelled(ctx);
  const pooled = resolverFor(ctx.dnsServers, Math.max(1, Math.floor(remaining / (2 ** TRIES - 1))));
  const { resolver } = pooled;
  const onAbort = () => resolver.cancel();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await query(resolver);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (NO_ANSWER.has(code)) return [];
    throw toUpstreamError(code, ctx);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    release(pooled);
  }
}

interface Pooled {
  resolver: Resolver;
  key: string;
  /** When it was made: one kept longer than `POOLED_MS` is dropped (the system's resolvers are read when a resolver is made). */
  made: number;
}

/** Idle resolvers by DNS servers and per-try timeout. */
const idle = new Map<string, Pooled[]>();
/** Idle resolvers kept per key: about the DNS queries one burst of calls has in flight. */
const IDLE_PER_KEY = 64;
const POOLED_MS = 60_000;

/**
 * An idle resolver for these servers whose per-try timeout is `timeoutMs` rounded down to a step
 * of a 1.25 ratio (c-ares takes it only when a resolver is made; a shorter try still leaves the
 * second try its time, and the call's signal is the deadline), else a new one.
 */
function resolverFor(servers: readonly string[], timeoutMs: number): Pooled {
  const step = timeoutMs <= 4 ? timeoutMs : Math.floor(1.25 ** Math.floor(Math.log(timeoutMs) / Math.log(1.25)));
  const key = `${step}\n${servers.join(',')}`;
  const list = idle.get(key);
  for (let found = list?.pop(); found; found = list!.pop()) {
    if (Date.now() - found.made <= POOLED_MS) return found;
  }
  const resolver = new Resolver({ timeout: step, tries: TRIES });
  if (servers.length > 0) {
    try {
      resolver.setServers(servers);
    } catch {
      throw new EngineError(`invalid DNS server setting: ${servers.join(', ')} (expected ip, ip:port or [ipv6]:port)`);
    }
  }
  return { resolver, key, made: Date.now() };
}

function release(pooled: Pooled): void {
  if (Date.now() - pooled.made > POOLED_MS) return;
  let list = idle.get(pooled.key);
  if (!list) {
    list = [];
    idle.set(pooled.key, list);
  }
  if (list.length < IDLE_PER_KEY) list.push(pooled);
}

function toUpstreamError(code: string, ctx: EngineContext): UpstreamError {
  switch (code) {
    case 'ETIMEOUT':
      return dnsTimeout(ctx);
    case 'ECANCELLED':
      return cancelled(ctx);
    case 'ESERVFAIL':
    case 'EREFUSED':
    case 'EFORMERR':
    case 'ENOTIMP':
      return dnsStatusError(code.slice(1));
    case 'ECONNREFUSED':
      return new UpstreamError(`DNS connection refused by ${serversOf(ctx)} (check dns_servers)`, true);
    case 'EBADRESP':
    case 'EBADFAMILY':
    case 'EOF':
      return new UpstreamError('DNS server sent a malformed answer', true);
    case 'EBADNAME':
    case 'EBADQUERY':
      return new UpstreamError('not a valid DNS name');
    default:
      return new UpstreamError(`DNS error (${code || 'unknown'})`, true);
  }
}

/** A TimeoutError (so callers treat it like any timeout) that says it was DNS. */
function dnsTimeout(ctx: EngineContext): TimeoutError {
  const error = new TimeoutError(ctx.settings.timeout_ms, serversOf(ctx));
  error.message = `DNS ${error.message}`;
  return error;
}

/** The DNS servers asked, for messages: `127.0.0.1:5353`, or the system's resolvers. */
function serversOf(ctx: EngineContext): string {
  return ctx.dnsServers.length > 0 ? ctx.dnsServers.join(', ') : 'the system resolvers';
}

/** The signal aborts at the deadline or when the analysis is abandoned; tell which. */
function cancelled(ctx: EngineContext): UpstreamError {
  return Date.now() >= ctx.deadline - TIMER_SLACK_MS ? dnsTimeout(ctx) : new UpstreamError('DNS lookup cancelled');
}
