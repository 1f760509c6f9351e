/** Host names and addresses inside observables: one parser for every engine. */
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { getDomain } from './tldts.js';
import type { Observable } from './types.js';

/** Host of an http(s) URL, without brackets for IPv6 literals, lower-cased; null when unparsable. */
export function urlHost(url: string): string | null {
  try {
    const host = new URL(url).hostname;
    if (!host) return null;
    return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host.toLowerCase();
  } catch {
    return null;
  }
}

/** The host an observable names: the domain, the URL's host, the e-mail's domain or the IP. */
export function hostOf(observable: Observable): string | null {
  switch (observable.type) {
    case 'FQDN':
      return observable.value.toLowerCase().replace(/\.$/, '');
    case 'URL':
      return urlHost(observable.value);
    case 'Email': {
      const at = observable.value.lastIndexOf('@');
      return at >= 0 ? observable.value.slice(at + 1).toLowerCase() : null;
    }
    case 'IPv4':
    case 'IPv6':
      return observable.value;
    default:
      return null;
  }
}

/** `hostOf`, a domain in its ASCII (punycode) form, as an upstream's search is asked about it. */
export function asciiHostOf(observable: Observable): string | null {
  const host = hostOf(observable);
  if (!host) return null;
  if (observable.type !== 'FQDN') return host;
  return domainToASCII(host) || host;
}

/** 4 or 6 for an IP address (zone ids allowed for IPv6), else 0. */
export function ipVersion(value: string): 0 | 4 | 6 {
  return isIP(value.replace(/%.*$/, '')) as 0 | 4 | 6;
}

/** True for private, loopback, link-local, reserved, documentation... anything not global unicast. */
export function isPrivateIp(value: string): boolean {
  try {
    let addr = ipaddr.parse(value.replace(/%.*$/, ''));
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    }
    return addr.range() !== 'unicast';
  } catch {
    return false;
  }
}

/** Registrable domain under the public suffix list (`a.b.example.co.uk` -> `example.co.uk`). */
export function registrableDomain(host: string): string | null {
  if (ipVersion(host) !== 0) return null;
  return getDomain(host, { allowPrivateDomains: false }) ?? null;
}

/** The DNS name for a PTR lookup: reversed octets under in-addr.arpa, nibbles under ip6.arpa. */
export function reverseName(ip: string): string {
  const addr = ipaddr.parse(ip.replace(/%.*$/, ''));
  if (addr.kind() === 'ipv4') return `${addr.toByteArray().reverse().join('.')}.in-addr.arpa`;
  const hex = addr.toByteArray().map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.split('').reverse().join('.')}.ip6.arpa`;
}
