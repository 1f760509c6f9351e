/**
 * rdap (older catalog): the RDAP registration record only, no WHOIS fallback, with the older
 * 10-field result in which unknown strings are "" (never null). Shares the RDAP code with
 * rdap_whois, and so its reading of answers: a domain object is needed (an answer of another
 * `objectClassName`, or an error document, is refused), every part of it is read when present.
 *
 * Differences from the reference (engines.md 6.1):
 * - `link` is the record's last `self` link, else `""` (as the reference), never the queried URL.
 * - The registry is found through the IANA bootstrap file instead of the rdap.net redirector.
 * - Errors are errors, not `null` (engines.md 8 item 3): HTTP failures other than 404, a
 *   malformed answer, and a TLD without RDAP service; a 404 (not registered) is `null`.
 * - Redaction placeholders ("REDACTED FOR PRIVACY") are `""`, not a registrant's name; a
 *   registrant organisation entity (vCard kind `org`) gives `organization` from its `fn`.
 */
import * as v from 'valibot';
import { defineEngine, EngineError, type DetailField } from '../src/engine/contract.js';
import { registrableDomainOf, registrationSummary } from '../src/rdap/domain.js';
import { lookupRdapDomain } from '../src/rdap/domain.js';
import { checkBootstrap } from '../src/rdap/bootstrap.js';
import { registrationDetails } from './rdap_whois.js';

export interface RdapResult {
  abuse_contact: string;
  registrar: string;
  organization: string;
  registrant: string;
  registrant_email: string;
  name_servers: string[];
  creation_date: string;
  expiration_date: string;
  update_date: string;
  link: string;
}

/** The same card as rdap_whois ("" values drop out like nulls). */
export function rdapDetails(result: RdapResult): DetailField[] {
  return registrationDetails(result);
}

export default defineEngine<RdapResult>({
  id: 'rdap',
  service: 'rdap',
  catalogs: ['older'],
  label: 'RDAP (older catalog)',
  description: 'Registration record of a domain from RDAP (registrar, registrant, dates, name servers, abuse contact), without WHOIS fallback',
  tags: ['default', 'the service', 'domain', 'free_no_key'],
  types: ['FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: {
    timeout_ms: 10000,
    bootstrap_url: 'https://data.iana.org/rdap/dns.json',
  },
  settingsSchema: v.looseObject({
    bootstrap_url: v.optional(v.pipe(v.string(), v.url())),
  }),
  summary: (r) => registrationSummary(r.registrar || r.organization, r.creation_date, r.expiration_date),
  details: rdapDetails,

  // `oas doctor`: the IANA bootstrap file (one call), not a registry's record.
  check: { probe: checkBootstrap },

  async run(observable, ctx) {
    const domain = registrableDomainOf(observable);
    if (!domain) return null;
    const bootstrapUrl = typeof ctx.settings.bootstrap_url === 'string' ? ctx.settings.bootstrap_url.trim() : '';
    // HTTP failures propagate as the client's one-line UpstreamErrors.
    const rdap = await lookupRdapDomain(ctx, bootstrapUrl, domain);
    if (rdap.status === 'not_found') return null;
    if (rdap.status === 'unsupported') throw new EngineError(`no RDAP service for .${rdap.tld}`);
    const r = rdap.record;
    return {
      abuse_contact: r.abuseContact ?? '',
      registrar: r.registrar ?? '',
      organization: r.organization ?? '',
      registrant: r.registrant ?? '',
      registrant_email: r.registrantEmail ?? '',
      name_servers: r.nameServers,
      creation_date: r.creationDate ?? '',
      expiration_date: r.expirationDate ?? '',
      update_date: r.updateDate ?? '',
      link: r.link,
    };
  },
});
