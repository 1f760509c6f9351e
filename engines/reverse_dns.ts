/**
 * reverse_dns — resolves on the service's own machine (configured dns_servers, else the system's
 * resolvers). A name gets its addresses, an address its PTR names. It is the pivot engine: the
 * first address of a domain/URL becomes the IP that IP-only engines look up.
 *
 * Differences from the reference (engines.md 5.22):
 * - A name's AAAA addresses are asked as well as its A addresses (the reference asked A only),
 *   IPv4 first so the pivot still prefers IPv4. AAAA is extra: when it fails (SERVFAIL, timeout)
 *   but A answered, the A addresses are the result; its failure is reported only when A gave none.
 * - Every PTR name of an address is kept, not only the first: an address with several names
 *   (shared hosting, load balancers) is not reduced to one at random.
 * - PTR names are given without the trailing dot (`dns.google`, not `dns.google.`), as every
 *   other engine writes host names.
 * - Answers are listed once each (a PTR name compared case-insensitively), empty names dropped.
 * - DNS failures (SERVFAIL, timeout, refused) are errors, not `null`; NXDOMAIN and "no record"
 *   are `null`, as in the reference.
 */
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { dnsTarget, listSummary, resolveA, resolveAAAA, reversePtr } from '../src/dns/resolver.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields } from '../src/lookup/fields.js';

export interface ReverseDnsResult {
  /** Addresses of a name (IPv4 in answer order, then IPv6), or PTR names of an address. */
  reverse_dns: string[];
}

/** The lookup; null when the name or address has no answer (NXDOMAIN / no data). */
export async function reverseDnsLookup(observable: Observable, ctx: EngineContext): Promise<ReverseDnsResult | null> {
  const target = dnsTarget(observable);
  if (!target) return null;
  const answers = distinct(target.kind === 'ip' ? await reversePtr(ctx, target.ip) : await addresses(ctx, target.name));
  return answers.length > 0 ? { reverse_dns: answers } : null;
}

/** A then AAAA addresses; AAAA's failure costs nothing when A answered (the reference asked A only). */
async function addresses(ctx: EngineContext, name: string): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([resolveA(ctx, name), resolveAAAA(ctx, name)]);
  if (v4.status === 'rejected') throw v4.reason;
  if (v6.status === 'rejected') {
    if (v4.value.length === 0) throw v6.reason;
    return v4.value;
  }
  return [...v4.value, ...v6.value];
}

/** Each answer once (names compared case-insensitively, the first spelling kept), empty ones dropped. */
function distinct(answers: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const answer of answers) {
    const key = answer.trim().toLowerCase();
    if (key && !seen.has(key)) seen.set(key, answer.trim());
  }
  return [...seen.values()];
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
  disclosure: 'third_party',
  touchesTarget: true,
  pivot: true,
  acceptsPrivateIp: true,
  defaults: { timeout_ms: 5000 },
  summary: (result) => listSummary(result.reverse_dns),
  details: reverseDnsDetails,
  run: reverseDnsLookup,
});
