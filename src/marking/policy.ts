/**
 * What may leave (issue 34): whether an engine may receive an observable of an analysis marked
 * TLP x / PAP y, and the one line that says why not. The runner asks before every call; a withheld
 * engine is never called.
 *
 * - An engine receives an observable only when the analysis's TLP is at most its `max_tlp` and its
 *   PAP at most its `max_pap` (settings `engines.<id>.max_tlp`, `max_pap`; defaults from its
 *   `disclosure` and `touchesTarget`, src/marking/levels.ts).
 * - An observable inside the team's networks or domains is TLP:RED and PAP:RED whatever the
 *   analysis says: the private, loopback, link-local, CGNAT and ULA ranges and `internal_networks`;
 *   `.local`, `.internal`, `.lan`, `.home.arpa`, `.corp` and `internal_domains` (a URL's host and an
 *   e-mail address's domain count).
 */
import ipaddr from 'ipaddr.js';
import { hostOf, ipVersion, isPrivateIp } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import { papLabel, papRank, parsePap, parseTlp, tlpLabel, tlpRank, type Ceilings, type Disclosure, type Marking } from './levels.js';

export type { Marking } from './levels.js';

/** The ranges that are always the team's own (ipaddr.js's names). */
const INTERNAL_RANGES = new Set(['private', 'loopback', 'linkLocal', 'carrierGradeNat', 'uniqueLocal', 'unspecified']);
/** The suffixes that are always the team's own. */
export const DEFAULT_INTERNAL_DOMAINS = ['local', 'internal', 'lan', 'home.arpa', 'corp'] as const;

/** The team's networks and domains (settings `internal_networks`, `internal_domains`), read once. */
export class InternalScope {
  private readonly networks: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  private readonly suffixes: string[];

  constructor(networks: readonly string[] = [], domains: readonly string[] = []) {
    this.networks = networks.map((entry) => {
      const text = entry.trim();
      if (text.includes('/')) return ipaddr.parseCIDR(text);
      const address = ipaddr.parse(text);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    });
    this.suffixes = [...DEFAULT_INTERNAL_DOMAINS, ...domains.map((d) => d.trim().toLowerCase().replace(/^\.+|\.+$/g, ''))].filter(Boolean);
  }

  /** Why the observable is the team's own (`inside 10.0.0.0/8`...), or undefined. */
  reasonFor(observable: Observable): string | undefined {
    const host = hostOf(observable);
    if (!host) return undefined;
    if (ipVersion(host) !== 0) return this.addressReason(host);
    const name = host.replace(/\.$/, '');
    const suffix = this.suffixes.find((s) => name === s || name.endsWith(`.${s}`));
    return suffix ? `${observable.type === 'FQDN' ? name : `${name} (its host)`} is under .${suffix}, an internal domain` : undefined;
  }

  private addressReason(host: string): string | undefined {
    // The usual public address, without ipaddr.js (issue 33: it is asked for every observable):
    // isPrivateIp's special ranges hold every default internal one.
    if (this.networks.length === 0 && !isPrivateIp(host)) return undefined;
    let address: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      address = ipaddr.parse(host.replace(/%.*$/, ''));
    } catch {
      return undefined;
    }
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
    if (INTERNAL_RANGES.has(address.range())) return `${host} is a ${address.range() === 'carrierGradeNat' ? 'CGNAT' : address.range()} address`;
    for (const [network, bits] of this.networks) {
      if (network.kind() === address.kind() && address.match(network as never, bits)) return `${host} is inside ${network.toString()}/${bits}, an internal network`;
    }
    return undefined;
  }
}

/** The marking an observable travels with: the analysis's, or RED/RED for the team's own. */
export function observableMarking(analysis: Marking, observable: Observable, scope: InternalScope): { marking: Marking; internal: string | undefined } {
  const internal = scope.reasonFor(observable);
  return internal ? { marking: { tlp: 'RED', pap: 'RED' }, internal } : { marking: analysis, internal: undefined };
}

/** An engine's ceilings: its settings when set, else the defaults of its declarations (src/marking/levels.ts). */
export { ceilingsOf, type Ceilings } from './levels.js';

const DISCLOSED: Record<Disclosure, string> = {
  none: 'keeps everything in this process',
  internal: 'is a server the team runs',
  third_party: 'is a third party',
};

/**
 * Why `engine` may not receive an observable marked `marking` (one line), or undefined when it
 * may: `not sent: TLP:RED allows only engines that keep data in-house (VirusTotal is a third
 * party; engines.provider_24.max_tlp is AMBER)`. `internal`: why the observable is the team's own.
 */
export function withholdReason(
  engine: { id: string; label: string; disclosure: Disclosure; touchesTarget: boolean },
  ceilings: Ceilings,
  marking: Marking,
  internal?: string,
): string | undefined {
  const why = internal ? ` (${internal})` : '';
  if (tlpRank(marking.tlp) > tlpRank(ceilings.maxTlp)) {
    const rule = marking.tlp === 'RED' && engine.disclosure === 'third_party' ? `${tlpLabel(marking.tlp)} allows only engines that keep data in-house` : `${tlpLabel(marking.tlp)} is above what this engine may receive`;
    return `not sent: ${rule}${why} (${engine.label} ${DISCLOSED[engine.disclosure]}; engines.${engine.id}.max_tlp is ${ceilings.maxTlp})`;
  }
  if (papRank(marking.pap) > papRank(ceilings.maxPap)) {
    const rule = engine.touchesTarget && papRank(marking.pap) >= papRank('AMBER')
      ? `${papLabel(marking.pap)} forbids any lookup that reaches the observable's own infrastructure`
      : `${papLabel(marking.pap)} is above what this engine may do`;
    return `not sent: ${rule}${why} (${engine.label}${engine.touchesTarget ? ' can reach it' : ` ${DISCLOSED[engine.disclosure]}`}; engines.${engine.id}.max_pap is ${ceilings.maxPap})`;
  }
  return undefined;
}

/** The settings that say what is the team's own and how an unmarked analysis is marked. */
export interface MarkingConfig {
  default_tlp: string;
  default_pap: string;
  internal_networks: readonly string[];
  internal_domains: readonly string[];
}

/** The runner's marking settings from the configuration (already checked by its schema). */
export function markingSettings(config: MarkingConfig): { internalScope: InternalScope; defaultMarking: Marking } {
  return {
    internalScope: new InternalScope(config.internal_networks, config.internal_domains),
    defaultMarking: { tlp: parseTlp(config.default_tlp), pap: parsePap(config.default_pap) },
  };
}
