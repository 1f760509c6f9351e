/**
 * What the team already knows to be its own or harmless (issue 38): the allowlist's entries and
 * the one question asked of them, whether an observable is on it. An entry is an exact observable
 * (`8.8.8.8`, `login.example.org`, `https://intranet.example/x`, an e-mail address), a CIDR range
 * (`10.20.0.0/16`, `2001:db8::/32`), a domain with everything under it (`*.corp.example`: the
 * name itself, every name under it and URLs whose host is one of them) or a file hash (MD5, SHA-1,
 * SHA-256); each with a reason, who added it and when, and an optional expiry, past which it no
 * longer applies. An allowlisted observable is sent to no engine and judged clean.
 *
 * This module holds the rules only: parsing what a person writes (`parseAllowValue`,
 * `parseExpiry`) and matching (`Allowlist`). Where the entries are kept (the configuration's
 * `allowlist`, the SQLite file, Redis) and who may change them is the stores' and surfaces' part.
 */
import ipaddr from 'ipaddr.js';
import { identifyObservable } from '../observables/extract.js';
import { hostOf, ipVersion } from '../observables/host.js';
import type { Observable } from '../observables/types.js';

/** What an entry covers. */
export type AllowKind = 'observable' | 'cidr' | 'domain' | 'hash';

/** An entry as it is kept and shown. */
export interface AllowEntry {
  /** As written, normalised: `8.8.8.8`, `10.20.0.0/16`, `*.corp.example`, a lower-case hash. */
  value: string;
  reason: string;
  /** Who added it: a user's name, `cli:<account>`, or `config` for the configuration's entries. */
  by: string;
  /** When it was added (ISO 8601); absent for an entry of the configuration. */
  at?: string | undefined;
  /** When it stops applying (ISO 8601), or null for never. */
  expires: string | null;
}

/** A value that cannot be an entry, or an expiry that cannot be one: one line saying why. */
export class AllowlistError extends Error {
  override name = 'AllowlistError';
}

/** What a written value is, normalised. */
export interface AllowValue {
  kind: AllowKind;
  /** The normalised text, as `AllowEntry.value`. */
  value: string;
}

const HASH = /^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$/i;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * `8.8.8.8`, `10.20.0.0/16`, `*.corp.example`, a hash or any single observable (refanged, so
 * `evil[.]example` is `evil.example`) -> what it is; anything else throws AllowlistError naming
 * what is accepted.
 */
export function parseAllowValue(text: string): AllowValue {
  const written = text.trim();
  if (written === '') throw new AllowlistError('an allowlist entry needs a value: an observable, a CIDR range such as 10.20.0.0/16, *.domain or a file hash');
  if (written.startsWith('*.')) {
    const domain = written.slice(2).toLowerCase().replace(/\.$/, '');
    const labels = domain.split('.');
    if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) {
      throw new AllowlistError(`"${shown(written)}" is no domain pattern: write *. then a domain, such as *.corp.example`);
    }
    return { kind: 'domain', value: `*.${domain}` };
  }
  if (written.includes('/') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(written)) {
    let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      range = ipaddr.parseCIDR(written);
    } catch {
      throw new AllowlistError(`"${shown(written)}" is no CIDR range: write an address, a slash and a prefix length, such as 10.20.0.0/16 or 2001:db8::/32`);
    }
    const [address, bits] = range;
    const network = address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(written)
      : ipaddr.IPv6.networkAddressFromCIDR(written);
    return { kind: 'cidr', value: `${network.toString()}/${bits}` };
  }
  if (HASH.test(written)) return { kind: 'hash', value: written.toLowerCase() };
  const observable = identifyObservable(written);
  if (!observable) {
    throw new AllowlistError(`"${shown(written)}" is no observable: write an IP address, a domain, a URL, an e-mail address, a file hash, a CIDR range such as 10.20.0.0/16 or *.domain`);
  }
  return { kind: 'observable', value: exactKey(observable) };
}

/** Durations a person writes for an expiry: `90s`, `10m`, `12h`, `30d`, `2w`. */
const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * `30d`, `12h`, `10m`, `90s`, `2w` from `now`, or an ISO 8601 time (`2026-12-31`,
 * `2026-12-31T18:00:00Z`) -> the expiry as ISO 8601; it must lie in the future.
 */
export function parseExpiry(text: string, now: number = Date.now()): string {
  const written = text.trim();
  const duration = /^(\d{1,6})\s*([smhdw])$/i.exec(written);
  let at: number;
  if (duration) {
    at = now + Number(duration[1]) * UNITS[duration[2]!.toLowerCase()]!;
  } else if (/^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(written)) {
    at = Date.parse(written);
  } else {
    at = Number.NaN;
  }
  if (!Number.isFinite(at)) throw new AllowlistError(`expiry "${shown(written)}" is neither a duration (90s, 10m, 12h, 30d, 2w) nor an ISO 8601 time (2026-12-31T18:00:00Z)`);
  if (at <= now) throw new AllowlistError(`expiry "${shown(written)}" is in the past`);
  return new Date(at).toISOString();
}

/** Whether an entry still applies at `now`. */
export function isActive(entry: Pick<AllowEntry, 'expires'>, now: number = Date.now()): boolean {
  return entry.expires === null || Date.parse(entry.expires) > now;
}

/** The key an exact entry, a mark and an observable are compared by: case-insensitive where the type is. */
export function observableKey(observable: Observable): string {
  return exactKey(observable);
}

function exactKey(observable: Observable): string {
  switch (observable.type) {
    case 'FQDN':
      return observable.value.toLowerCase().replace(/\.$/, '');
    case 'Email':
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return observable.value.toLowerCase();
    case 'IPv6':
      return ipaddr.parse(observable.value.replace(/%.*$/, '')).toString();
    default:
      return observable.value;
  }
}

/** A value, cut for a message. */
const shown = (text: string) => (text.length > 80 ? `${text.slice(0, 80)}…` : text);

/**
 * The entries, asked observable by observable: exact values in a Map, domain patterns by walking
 * up the host's labels, CIDR ranges last (a short list in practice). An entry past its expiry
 * covers nothing (asked at each match: a server keeps its list for days). Built when the entries
 * change; `match` allocates nothing for an observable no entry covers but the host's suffixes of
 * a domain or URL.
 */
export class Allowlist {
  private readonly exact = new Map<string, AllowEntry>();
  private readonly domains = new Map<string, AllowEntry>();
  private readonly ranges: { range: [ipaddr.IPv4 | ipaddr.IPv6, number]; entry: AllowEntry }[] = [];
  readonly size: number;

  constructor(entries: readonly AllowEntry[]) {
    let size = 0;
    for (const entry of entries) {
      let parsed: AllowValue;
      try {
        parsed = parseAllowValue(entry.value);
      } catch {
        continue; // checked where it was added; an entry that no longer parses covers nothing
      }
      size++;
      if (parsed.kind === 'domain') this.domains.set(parsed.value.slice(2), entry);
      else if (parsed.kind === 'cidr') this.ranges.push({ range: ipaddr.parseCIDR(parsed.value), entry });
      else this.exact.set(parsed.value, entry);
    }
    this.size = size;
  }

  /** The entry that covers `observable` at `now`, or undefined: an exact entry first, then a domain pattern, then a range. */
  match(observable: Observable, now: number = Date.now()): AllowEntry | undefined {
    if (this.size === 0) return undefined;
    const live = (entry: AllowEntry | undefined) => (entry && isActive(entry, now) ? entry : undefined);
    const exact = live(this.exact.get(exactKey(observable)));
    if (exact) return exact;
    const host = observable.type === 'FQDN' || observable.type === 'URL' ? hostOf(observable) : null;
    if (host && this.domains.size > 0 && ipVersion(host) === 0) {
      for (let name = host; name.includes('.'); name = name.slice(name.indexOf('.') + 1)) {
        const entry = live(this.domains.get(name));
        if (entry) return entry;
      }
    }
    const address = observable.type === 'IPv4' || observable.type === 'IPv6' ? observable.value : host !== null && ipVersion(host) !== 0 ? host : null;
    if (address && this.ranges.length > 0) {
      let parsed: ipaddr.IPv4 | ipaddr.IPv6;
      try {
        parsed = ipaddr.process(address.replace(/%.*$/, ''));
      } catch {
        return undefined;
      }
      for (const { range, entry } of this.ranges) {
        if (parsed.kind() === range[0].kind() && parsed.match(range as never) && live(entry)) return entry;
      }
    }
    return undefined;
  }
}

/** The configuration's entries as the allowlist keeps them (their author `config`). */
export function configuredEntries(entries: readonly { value: string; reason: string; expires?: string | undefined }[]): AllowEntry[] {
  return entries.map((entry) => ({ value: entry.value, reason: entry.reason, by: 'config', expires: entry.expires ? new Date(Date.parse(entry.expires)).toISOString() : null }));
}

/**
 * The allowlist of the configuration's entries (`allowlist`, their author `config`); an entry that
 * names nothing an allowlist can hold throws AllowlistError naming it (`allowlist.2.value: ...`).
 */
export function configuredAllowlist(entries: readonly { value: string; reason: string; expires?: string | undefined }[]): Allowlist {
  entries.forEach((entry, index) => {
    try {
      parseAllowValue(entry.value);
    } catch (error) {
      throw new AllowlistError(`allowlist.${index}.value: ${(error as Error).message}`);
    }
  });
  return new Allowlist(configuredEntries(entries));
}
