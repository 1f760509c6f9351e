/**
 * provider_01 (abusix) — the abuse contact of an IP address from Abusix's public DNS zone: one TXT
 * lookup of `<reversed address>.abuse-contacts.abusix.zone` through the configured `dns_servers`
 * (else the system's resolvers). IPv4 labels are the reversed octets, IPv6 labels the 32 reversed
 * nibbles, exactly as under in-addr.arpa / ip6.arpa.
 *
 * What an answer needs: TXT records whose comma-separated parts are e-mail addresses. Blank
 * parts (`",abuse@example.net,"`), empty records and empty character-strings say nothing and are
 * skipped; a part that is no address beside ones that are is skipped too; only an answer with
 * text but no address at all cannot be understood.
 *
 * Differences from the reference (engines.md 5.1):
 * - every contact is kept (`contacts`), not only the first one; `abuse` is still the first, so
 *   results stay compatible. Every TXT record is read (the reference read the first one only), and
 *   a record split into several character-strings is joined before splitting on commas;
 * - contacts are trimmed and listed once (compared case-insensitively); blank parts are skipped
 *   (the reference could return "" or " abuse@..." as `abuse`);
 * - DNS failures (SERVFAIL, timeout, refused) are reported as errors instead of looking like
 *   "no contact", and the lookup runs within the call's deadline;
 * - a TXT answer holding no e-mail address at all is a malformed answer (an error), not "none".
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { listSummary, resolveTxt } from '../src/dns/resolver.js';
import { BadResponseError } from '../src/http/errors.js';
import { ipVersion, reverseName } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

export interface AbusixResult {
  /** The first abuse e-mail published for the address (the reference's only field). */
  abuse: string;
  /** Every abuse e-mail published, in the zone's order, without duplicates. */
  contacts: string[];
}

export const DEFAULT_ZONE = 'abuse-contacts.abusix.zone';

const ZoneSchema = v.pipe(
  v.string('expected a DNS zone name'),
  v.trim(),
  v.regex(/^\.?([a-z0-9_-]+\.)*[a-z0-9_-]+\.?$/i, 'expected a DNS zone name such as abuse-contacts.abusix.zone'),
);

const EmailSchema = v.pipe(v.string(), v.email());

/** `1.1.1.1` -> `1.1.1.1.abuse-contacts.abusix.zone`; IPv6 as nibbles (the ip6.arpa labels). */
export function abusixQueryName(ip: string, zone: string = DEFAULT_ZONE): string {
  const labels = reverseName(ip).replace(/\.(in-addr|ip6)\.arpa$/, '');
  return `${labels}.${zone.trim().replace(/^\.+|\.+$/g, '').toLowerCase()}`;
}

/**
 * The e-mails in the zone's TXT records (each record's strings already joined): comma-separated
 * lists, trimmed, de-duplicated case-insensitively. Records holding only blanks say nothing;
 * a record holding text that is no e-mail address at all is a malformed answer.
 */
export function abuseContacts(records: readonly string[]): string[] {
  const contacts: string[] = [];
  const seen = new Set<string>();
  let junk: string | undefined;
  for (const record of records) {
    for (const part of record.split(',').map((p) => p.trim()).filter(Boolean)) {
      if (!v.is(EmailSchema, part)) {
        junk ??= part;
        continue;
      }
      if (seen.has(part.toLowerCase())) continue;
      seen.add(part.toLowerCase());
      contacts.push(part);
    }
  }
  if (contacts.length === 0 && junk !== undefined) {
    throw new BadResponseError(`abuse-contact zone answered without an e-mail address: "${junk.slice(0, 80)}"`);
  }
  return contacts;
}

/** The lookup; null when the zone has no contact for the address (NXDOMAIN / no TXT record). */
export async function abusixLookup(observable: Observable, ctx: EngineContext): Promise<AbusixResult | null> {
  if (ipVersion(observable.value) === 0) return null;
  const zone = typeof ctx.settings.zone === 'string' && ctx.settings.zone.trim() !== '' ? ctx.settings.zone : DEFAULT_ZONE;
  const contacts = abuseContacts(await resolveTxt(ctx, abusixQueryName(observable.value, zone)));
  return contacts.length > 0 ? { abuse: contacts[0]!, contacts } : null;
}

/** The contact to write to, the others the zone lists, and the address on Abusix Lookup. */
export function abusixDetails(result: AbusixResult, target: string): DetailField[] {
  const others = result.contacts.filter((contact) => contact.toLowerCase() !== result.abuse.toLowerCase());
  return fields(
    field('Abuse contact', result.abuse),
    field('Other contacts', others),
    ipVersion(target) !== 0 && sourceLink('Abusix Lookup', `https://lookup.abusix.com/search?q=${encodeURIComponent(target)}`),
  );
}

export default defineEngine<AbusixResult>({
  id: 'provider_01',
  service: 'abusix',
  label: 'Abusix',
  description: 'Abuse contact e-mail of an IP address (or of the IP a domain/URL resolves to), from the Abusix abuse-contact DNS zone',
  tags: ['the service', 'free_no_key'],
  types: ['IPv4', 'IPv6'],
  disclosure: 'third_party',
  touchesTarget: false,
  reversedIp: true,
  defaults: { timeout_ms: 5000, zone: DEFAULT_ZONE },
  settingsSchema: v.looseObject({ zone: v.optional(ZoneSchema) }),
  summary: (result) => listSummary(result.contacts.length > 0 ? result.contacts : [result.abuse]),
  details: abusixDetails,
  run: abusixLookup,
});
