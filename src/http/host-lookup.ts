/**
 * Host-name resolution for upstream connections through the configured `dns_servers` (the
 * system's resolvers when the list is empty, which is Node's own lookup). Used by the HTTP
 * transport's connector, so that one setting decides where every name oas looks up goes.
 */
import { Resolver } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/** Names that are loopback by definition (RFC 6761 6.3), answered without asking any server. */
function isLocalhost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * A `lookup` for `net.connect` asking `servers` (`ip` or `ip:port`) for A and AAAA records.
 * Errors carry the resolver's code (`ENOTFOUND` for NXDOMAIN or no address, `ECONNREFUSED`,
 * `ETIMEOUT`...), which the HTTP client turns into a message naming the host.
 */
export function resolverLookup(servers: readonly string[], timeoutMs = 5000): LookupFunction {
  return (hostname, options, callback) => {
    const all = options.all === true;
    const answer = (addresses: LookupAddress[]): void => {
      if (addresses.length === 0) {
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }) as NodeJS.ErrnoException;
        callback(error, all ? [] : '');
        return;
      }
      if (all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    if (isLocalhost(hostname)) {
      answer(options.family === 6 ? [{ address: '::1', family: 6 }] : [{ address: '127.0.0.1', family: 4 }]);
      return;
    }
    const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
    resolver.setServers([...servers]);
    const ask = (family: 4 | 6): Promise<LookupAddress[]> => new Promise((resolve, reject) => {
      const method = family === 4 ? resolver.resolve4.bind(resolver) : resolver.resolve6.bind(resolver);
      method(hostname, (error, addresses) => {
        if (!error) resolve(addresses.map((address) => ({ address, family })));
        else if (error.code === 'ENODATA' || error.code === 'ENOTFOUND') resolve([]);
        else reject(error);
      });
    });
    const families: (4 | 6)[] = options.family === 4 ? [4] : options.family === 6 ? [6] : [4, 6];
    Promise.all(families.map(ask)).then(
      (lists) => answer(lists.flat()),
      (error: NodeJS.ErrnoException) => callback(error, all ? [] : ''),
    );
  };
}
