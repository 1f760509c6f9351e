/**
 * The network `oas serve` goes through: the proxy of `proxy_url` accepts a connection, and each DNS
 * server of `dns_servers` answers one query. Failures are worded as the engines' (src/http/errors.ts
 * networkFailure), the proxy named by its host and port only (never its user or password).
 */
import { connect } from 'node:net';
import { Resolver } from 'node:dns/promises';
import { networkFailure } from '../http/errors.js';
import type { DoctorCheck } from './report.js';

/** The name each DNS server is asked for (its A records; "no such name" is an answer too). */
export const DNS_QUESTION = 'example.com';

/** `host:port` of a proxy URL, without credentials. */
export function proxyEndpoint(proxyUrl: string): { host: string; port: number; label: string } {
  const url = new URL(proxyUrl);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port, label: `${url.hostname}:${port}` };
}

/** One TCP connection to the proxy, closed at once. */
export function checkProxy(proxyUrl: string, timeoutMs: number): Promise<DoctorCheck> {
  let endpoint: ReturnType<typeof proxyEndpoint>;
  try {
    endpoint = proxyEndpoint(proxyUrl);
  } catch {
    return Promise.resolve({ kind: 'proxy', target: 'proxy_url', ok: false, message: 'not a URL (check proxy_url)' });
  }
  const { host, port, label } = endpoint;
  return new Promise((resolve) => {
    const done = (ok: boolean, message: string) => {
      socket.destroy();
      clearTimeout(timer);
      resolve({ kind: 'proxy', target: label, ok, message });
    };
    const socket = connect({ host, port });
    const timer = setTimeout(() => done(false, networkFailure('ETIMEDOUT', host, String(port), label)), timeoutMs);
    socket.once('connect', () => done(true, 'accepts connections'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(false, networkFailure(error.code, host, String(port), label)));
  });
}

/** One query (A of DNS_QUESTION) to `server` (`ip` or `ip:port`), one try. */
export async function checkDnsServer(server: string, timeoutMs: number): Promise<DoctorCheck> {
  const check = (ok: boolean, message: string): DoctorCheck => ({ kind: 'dns', target: server, ok, message });
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  try {
    resolver.setServers([server]);
  } catch {
    return check(false, 'not an address (ip or ip:port; check dns_servers)');
  }
  const timer = setTimeout(() => resolver.cancel(), timeoutMs);
  try {
    await resolver.resolve4(DNS_QUESTION);
    return check(true, `answered (A ${DNS_QUESTION})`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENOTFOUND' || code === 'ENODATA') return check(true, `answered (no A record for ${DNS_QUESTION})`);
    if (code === 'ECANCELLED' || code === 'ETIMEOUT') return check(false, `no answer within ${timeoutMs} ms (is it a DNS server? check dns_servers)`);
    if (code === 'ECONNREFUSED') return check(false, 'refused the query (is it a DNS server? check dns_servers)');
    return check(false, `query failed (${code || (error as Error).message}; check dns_servers)`);
  } finally {
    clearTimeout(timer);
  }
}
