/** Host names and addresses inside observables: one parser for every engine. */
import { isIPv4, isIPv6 } from 'node:net';
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

/**
 * 4 or 6 for an IP address (zone ids allowed for IPv6), else 0. A text without a colon is no IPv6
 * address, and is not given to isIPv6: Node compiles its IPv6 pattern, a large regular expression,
 * the first time it is used (about 7 ms of a cached one-domain `oas analyze`, issue 33).
 */
export function ipVersion(value: string): 0 | 4 | 6 {
  const text = value.replace(/%.*$/, '');
  if (isIPv4(text)) return 4;
  return text.includes(':') && isIPv6(text) ? 6 : 0;
}

/**
 * ipaddr.js's special IPv4 ranges (everything its `range()` does not call unicast), as
 * [network, mask] numbers, for the common case of `isPrivateIp`.
 */
const SPECIAL_IPV4: readonly (readonly [number, number])[] = Object.values(
  (ipaddr.IPv4.prototype as unknown as { SpecialRanges: Record<string, [ipaddr.IPv4, number][]> }).SpecialRanges,
).flat().map(([network, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  const [a, b, c, d] = network.octets as [number, number, number, number];
  return [(((a << 24) | (b << 16) | (c << 8) | d) & mask) >>> 0, mask] as const;
});

/**
 * A dotted quad in decimal without leading zeros (which ipaddr.js would read as octal) as a
 * number, else -1.
 */
function plainIpv4(value: string): number {
  let address = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 46) {
      if (digits === 0 || dots === 3) return -1;
      address = address * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (code >= 48 && code <= 57) {
      if (digits > 0 && octet === 0) return -1; // a leading zero
      octet = octet * 10 + (code - 48);
      if (++digits > 3 || octet > 255) return -1;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return address * 256 + octet;
}

/** True for private, loopback, link-local, reserved, documentation... anything not global unicast. */
export function isPrivateIp(value: string): boolean {
  // The usual address, without parsing it through ipaddr.js (the same ranges, from its own table).
  const plain = plainIpv4(value);
  if (plain >= 0) {
    for (const [network, mask] of SPECIAL_IPV4) if (((plain & mask) >>> 0) === network) return true;
    return false;
  }
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

/**
 * Whether a name is its own registrable domain (`example.com`, `example.co.uk`, a private suffix's
 * `x.blogspot.com`) or has none under the public suffix list, rather than a longer host name:
 * MISP's `domain` and TheHive's `domain` data type, against `hostname` and `fqdn`.
 */
export function isRegistrableDomain(host: string): boolean {
  const name = host.replace(/\.$/, '').toLowerCase();
  const domain = getDomain(name, { allowPrivateDomains: true });
  return domain === null || domain === name;
}

/** The DNS name for a PTR lookup: reversed octets under in-addr.arpa, nibbles under ip6.arpa. */
export function reverseName(ip: string): string {
  const addr = ipaddr.parse(ip.replace(/%.*$/, ''));
  if (addr.kind() === 'ipv4') return `${addr.toByteArray().reverse().join('.')}.in-addr.arpa`;
  const hex = addr.toByteArray().map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.split('').reverse().join('.')}.ip6.arpa`;
}
