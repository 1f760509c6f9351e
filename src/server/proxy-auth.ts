/**
 * Single sign-on behind a reverse proxy, and the client address behind it.
 *
 * `trusted_proxies` lists the addresses and CIDR ranges of the proxies in front of oas. Only a
 * request whose peer (the TCP connection's address) is one of them is believed about two headers:
 *
 * - `X-Forwarded-For`: the client address for limits and logs is then its right-most address that
 *   is not itself a trusted proxy (each trusted hop appends the address it got the request from, so
 *   what lies left of the first untrusted one was written by the client and proves nothing). A
 *   malformed entry ends the walk at the last trusted hop.
 * - `auth_header` (e.g. `X-Forwarded-User`): the signed-in user, by name (`USER_NAME` of
 *   src/store/users.ts). A name seen for the first time is added to the users with the role
 *   `auth_header_role` and no token; a user an admin added or changed keeps its stored role.
 *
 * From any other address both headers are ignored: the client is the peer, and a token is needed.
 * IPv4-mapped IPv6 peers (`::ffff:127.0.0.1`, a dual-stack socket) are taken as their IPv4 address.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Context } from 'hono';
import { USER_NAME, type Role, type UserStore } from '../store/users.js';
import type { Principal } from './auth.js';
import { remoteAddress } from './rate-limit.js';
import { requestHeader } from './request-header.js';

export interface ProxyAuthOptions {
  /** Setting trusted_proxies: addresses and CIDR ranges (checked by the configuration's schema). */
  trustedProxies: readonly string[];
  /** Setting auth_header: the header naming the user; empty for none. */
  authHeader: string;
  /** Setting auth_header_role: the role of a user the proxy names for the first time. */
  authHeaderRole: Role;
  users: UserStore;
  /** The connection's peer address (default: the Node server's). */
  peerAddress?: (c: Context) => string;
  /** Told when a user named by the proxy is added, with the request that named it (the audit trail). */
  onUserAdded?: (name: string, role: Role, c: Context) => void;
}

export interface ProxyAuth {
  /** The client: the peer, or behind a trusted proxy the address X-Forwarded-For gives. */
  clientAddress(c: Context): string;
  /** The user a trusted proxy names; undefined without auth_header (then nobody is named). */
  proxyUser: ((c: Context) => Promise<Principal | undefined>) | undefined;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Longest X-Forwarded-For read, and most entries walked (a chain of proxies is short). */
const MAX_FORWARDED_CHARS = 2048;
const MAX_FORWARDED_HOPS = 32;
/** Peer addresses whose normalized form is kept. */
const PEERS_KEPT = 4096;
/** A proxy-named user's last use is written at most this often. */
const TOUCH_EVERY_MS = 60_000;

/** An address as ipaddr parses it, IPv4-mapped IPv6 as IPv4; undefined unless a plain IP (no port, no brackets). */
export function parseAddress(value: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = value.replace(/%[^%]*$/, '');
  if (isIP(bare) === 0) return undefined;
  try {
    return ipaddr.process(bare);
  } catch {
    return undefined;
  }
}

/** `10.0.0.0/8`, `fd00::/8`, or one address (a /32 or /128); IPv4-mapped IPv6 ranges as IPv4. */
export function parseRange(value: string): Range | undefined {
  const [address, bits] = value.split('/');
  const parsed = parseAddress(address ?? '');
  if (!parsed) return undefined;
  const mapped = isIP(address!) === 6 && parsed.kind() === 'ipv4';
  if (bits === undefined) return [parsed, parsed.kind() === 'ipv4' ? 32 : 128];
  const n = Number(bits);
  if (!/^\d{1,3}$/.test(bits)) return undefined;
  if (mapped) return n >= 96 ? [parsed, n - 96] : undefined;
  return n <= (parsed.kind() === 'ipv4' ? 32 : 128) ? [parsed, n] : undefined;
}

/** Whether `address` lies in one of `ranges` (an unparsable address in none). */
export function inRanges(address: string, ranges: readonly Range[]): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  return ranges.some(([base, bits]) => base.kind() === parsed.kind() && parsed.match(base, bits));
}

/** An address as logged and limited: the IPv4 of an IPv4-mapped one, else as it came. */
function normalized(address: string): string {
  return parseAddress(address)?.toString() ?? address;
}

/**
 * The client behind a trusted peer: walking X-Forwarded-For from the right, the first address that
 * is not a trusted proxy; a malformed entry (or the list's end) stops at the last trusted hop.
 */
export function forwardedClient(peer: string, forwardedFor: string | undefined, ranges: readonly Range[]): string {
  let client = normalized(peer);
  if (forwardedFor === undefined || forwardedFor.length > MAX_FORWARDED_CHARS) return client;
  const hops = forwardedFor.split(',').map((hop) => hop.trim()).reverse().slice(0, MAX_FORWARDED_HOPS);
  for (const hop of hops) {
    const parsed = parseAddress(hop);
    if (!parsed) break;
    client = parsed.toString();
    if (!inRanges(client, ranges)) break;
  }
  return client;
}

export function createProxyAuth(options: ProxyAuthOptions): ProxyAuth {
  const ranges = options.trustedProxies.map(parseRange).filter((range): range is Range => range !== undefined);
  const peerOf = options.peerAddress ?? remoteAddress;
  const trustedPeer = (c: Context): string | undefined => {
    const peer = peerOf(c);
    return ranges.length > 0 && inRanges(peer, ranges) ? peer : undefined;
  };

  // A peer's address as logged and limited, parsed once per address rather than once per request
  // (the log, the audit trail and the limits each ask for it).
  const peers = new Map<string, string>();
  const normalizedPeer = (peer: string): string => {
    let address = peers.get(peer);
    if (address === undefined) {
      address = normalized(peer);
      if (peers.size >= PEERS_KEPT) peers.clear();
      peers.set(peer, address);
    }
    return address;
  };

  const clientAddress = (c: Context): string => {
    if (ranges.length === 0) return normalizedPeer(peerOf(c));
    const peer = trustedPeer(c);
    return peer === undefined ? normalizedPeer(peerOf(c)) : forwardedClient(peer, requestHeader(c, 'x-forwarded-for'), ranges);
  };

  const header = options.authHeader.trim();
  const headerName = header.toLowerCase();
  const { users } = options;
  const touched = new Map<string, number>();
  const touch = (name: string, now: number) => {
    if ((touched.get(name) ?? 0) + TOUCH_EVERY_MS > now) return;
    if (touched.size > 10_000) touched.clear();
    touched.set(name, now);
    void users.touch(name, new Date(now).toISOString()).catch(() => {});
  };

  const proxyUser = header === '' ? undefined : async (c: Context): Promise<Principal | undefined> => {
    if (trustedPeer(c) === undefined) return undefined;
    const name = requestHeader(c, headerName)?.trim();
    if (name === undefined || !USER_NAME.test(name)) return undefined;
    let user = await users.get(name);
    if (!user) {
      const now = new Date().toISOString();
      const added = await users.add({ name, role: options.authHeaderRole, created_at: now, last_used_at: now }, null);
      if (added) options.onUserAdded?.(name, options.authHeaderRole, c);
      // Added just now by another request (or server): read what is stored.
      user = added ? { name, role: options.authHeaderRole, created_at: now, last_used_at: now } : await users.get(name);
      if (!user) return undefined;
    } else {
      touch(name, Date.now());
    }
    return { name: user.name, role: user.role, kind: 'proxy' };
  };

  return { clientAddress, proxyUser };
}
