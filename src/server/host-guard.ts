/**
 * `allowed_hosts`: the server answers only requests whose `Host` names it. Default: `localhost`,
 * `127.0.0.1`, `[::1]` and the address it binds to, with any port; configured names are added.
 * Any other `Host` gets 421 and no data. This is what stops DNS rebinding: a page on another site
 * whose name was made to resolve to 127.0.0.1 still sends its own name as `Host`.
 */
import type { MiddlewareHandler } from 'hono';
import { isIPv6 } from 'node:net';
import { requestHeader } from './request-header.js';

const DEFAULT_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** `name`, `name:port`, `1.2.3.4:port`, `[v6]:port`: nothing else (no `@`, `/`, spaces...). */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/**
 * The canonical host name of a `Host` header or an `allowed_hosts` entry, without its port:
 * lower case, no trailing dot, IP addresses in their usual form (`[::1]` for any spelling of it).
 * Undefined when it is not a host name.
 */
export function canonicalHost(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let text = value.trim();
  // A bare IPv6 address (`::1`, as `host` may be set) stands for `[::1]`; `name:port` has one colon.
  if (!text.startsWith('[') && text.indexOf(':') !== text.lastIndexOf(':') && isIPv6(text)) text = `[${text}]`;
  const match = HOST_HEADER.exec(text);
  if (!match) return undefined;
  const name = match[1]!.toLowerCase().replace(/\.$/, '');
  if (!name) return undefined;
  try {
    return new URL(`http://${name}/`).hostname;
  } catch {
    return undefined;
  }
}

/** The hosts a server bound to `bindHost` answers: the defaults, the bound address, `configured`. */
export function allowedHosts(bindHost: string, configured: readonly string[]): Set<string> {
  const hosts = new Set<string>();
  for (const value of [...DEFAULT_HOSTS, bindHost, ...configured]) {
    const host = canonicalHost(value);
    if (host) hosts.add(host);
  }
  return hosts;
}

/** The `allowed_hosts` entries that are not host names (a URL, a path...): for a config error. */
export function invalidHosts(configured: readonly string[]): string[] {
  return configured.filter((value) => canonicalHost(value) === undefined);
}

/** Host headers already judged (a server sees a handful): at most this many remembered. */
const VERDICTS_KEPT = 256;

export function hostGuard(allowed: ReadonlySet<string>): MiddlewareHandler {
  const verdicts = new Map<string, boolean>();
  const isAllowed = (header: string | undefined): boolean => {
    if (header === undefined) return false;
    let verdict = verdicts.get(header);
    if (verdict === undefined) {
      const host = canonicalHost(header);
      verdict = host !== undefined && allowed.has(host);
      if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
      verdicts.set(header, verdict);
    }
    return verdict;
  };
  return async (c, next) => {
    if (!isAllowed(requestHeader(c, 'host'))) {
      return c.json(
        { error: 'misdirected request: this server does not answer for the Host this request names; add the name to allowed_hosts (OAS_ALLOWED_HOSTS) if it is one of its own' },
        421,
        { 'Cache-Control': 'no-store' },
      );
    }
    return next();
  };
}
