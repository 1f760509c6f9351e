/**
 * reverse_dns — resolves on the service's own machine (configured dns_servers, else the system's
 * resolvers). A name gets its addresses, an address its PTR names. It is the pivot engine: the
 * first address of a domain/URL becomes the IP that IP-only engines look up.
 *
 * Unlike the reference (A only, first PTR only, trailing dots kept), this asks AAAA as well and
 * keeps every PTR name; IPv4 addresses come first so the pivot still prefers IPv4.
 */
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { dnsTarget, listSummary, resolveA, resolveAAAA, reversePtr } from '../src/dns/resolver.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields } from '../src/view/fields.js';

export interface ReverseDnsResult {
  /** Addresses of a name (IPv4 in answer order, then IPv6), or PTR names of an address. */
  reverse_dns: string[];
}

/** The lookup; null when the name or address has no answer (NXDOMAIN / no data). */
export async function reverseDnsLookup(observable: Observable, ctx: EngineContext): Promise<ReverseDnsResult | null> {
  const target = dnsTarget(observable);
  if (!target) return null;
  const answers = target.kind === 'ip'
    ? await reversePtr(ctx, target.ip)
    : (await Promise.all([resolveA(ctx, target.name), resolveAAAA(ctx, target.name)])).flat();
  return answers.length > 0 ? { reverse_dns: answers } : null;
}

/**
 * A name's addresses, IPv4 then IPv6 (the first IPv4 one is the pivot), or an address's PTR
 * names. Which of the two is read from the answers themselves: a URL with an IP host gets PTR
 * names although its target is no IP. Resolved locally, so there is no source page to link to.
 */
export function reverseDnsDetails(result: ReverseDnsResult): DetailField[] {
  const answers = result.reverse_dns;
  if (!answers.every((answer) => ipVersion(answer) !== 0)) return fields(field('PTR names', answers));
  return fields(
    field('IPv4 addresses', answers.filter((answer) => ipVersion(answer) === 4)),
    field('IPv6 addresses', answers.filter((answer) => ipVersion(answer) === 6)),
  );
}

export default defineEngine<ReverseDnsResult>({
  id: 'reverse_dns',
  service: 'reverse_dns',
  label: 'Reverse DNS',
  description: 'Addresses (A, AAAA) of a domain or URL host, or PTR names of an IP, resolved by the service itself',
  tags: ['default', 'domain', 'IP', 'the service', 'free_no_key'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL'],
  pivot: true,
  acceptsPrivateIp: true,
  defaults: { timeout_ms: 5000 },
  summary: (result) => listSummary(result.reverse_dns),
  details: reverseDnsDetails,
  run: reverseDnsLookup,
});
