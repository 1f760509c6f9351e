/**
 * rdap_whois: the registration record of a domain (or a URL's domain), from the registry's RDAP
 * service, falling back to WHOIS when the TLD has no RDAP service or the RDAP query fails.
 * Done directly (IANA bootstrap / IANA WHOIS referral), not through a third-party proxy.
 *
 * An RDAP answer is needed only to be a domain object: one that says it is of another class
 * (`objectClassName`), or is an RFC 9083 error document (`errorCode`), is refused; one that does
 * not name its class is read. Every part of it is read when present: absent, null or malformed
 * parts (links, events, entities, name servers) count as none, one object in place of a list as a
 * list of it.
 *
 * Differences from the reference (engines.md 5.21):
 * - RDAP and WHOIS are asked directly (engines.md 8 item 24), so a failure says which of the two
 *   failed and why, instead of `null`; a registry's 404 is "not registered" (`null`).
 * - `link` is the RDAP record's `self` link (the proxy's `rdap_link`); without one, the
 *   registrar's web site when the record names one (`registrar_url`), else `""`, as the
 *   reference. A WHOIS record's link is the registrar's site, else `whois://<server>/<domain>`
 *   (the reference gave `""`): it says where the record came from.
 * - Redaction placeholders ("REDACTED FOR PRIVACY") are null, not a registrant's name.
 */
import * as v from 'valibot';
import { defineEngine, EngineError, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { TimeoutError, UpstreamError } from '../src/http/errors.js';
import {
  lookupRdapDomain,
  registrableDomainOf,
  registrationSummary,
  type RegistrationRecord,
} from '../src/rdap/domain.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { checkBootstrap } from '../src/rdap/bootstrap.js';
import { formatServer, whoisLookup, WhoisError } from '../src/whois/client.js';
import { isEmptyRecord, isNotFound, parseWhois } from '../src/whois/parse.js';

/** The 13 fields of the spec; unknown values are null, lists []. */
export interface RdapWhoisResult {
  abuse_contact: string | null;
  creation_date: string | null;
  data_source: 'rdap' | 'whois';
  emails: string[];
  expiration_date: string | null;
  link: string;
  name_servers: string[];
  organization: string | null;
  registrant: string | null;
  registrant_country: string | null;
  registrant_email: string | null;
  registrar: string | null;
  update_date: string | null;
}

/**
 * What a registration card shows, common to rdap_whois and the older rdap engine (whose unknown
 * strings are "" instead of null, and which has neither data source, country nor e-mail list).
 */
export type RegistrationFields =
  Pick<RdapWhoisResult, 'abuse_contact' | 'creation_date' | 'expiration_date' | 'link' | 'name_servers'
    | 'organization' | 'registrant' | 'registrant_email' | 'registrar' | 'update_date'>
  & Partial<Pick<RdapWhoisResult, 'data_source' | 'emails' | 'registrant_country'>>;

/**
 * The card of a registration record: who holds and sold the domain, whom to tell about abuse,
 * the dates, the name servers, then the record itself. An RDAP record links to its JSON
 * document; a WHOIS record has no web address: its link, the registrar's site when the record
 * names one, goes on the registrar (a `whois://` link is dropped).
 */
export function registrationDetails(r: RegistrationFields): DetailField[] {
  const same = (a: string | null, b: string | null) => !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();
  const shown = [r.abuse_contact, r.registrant_email].filter((e): e is string => !!e).map((e) => e.toLowerCase());
  const otherEmails = (r.emails ?? []).filter((e) => !shown.includes(e.toLowerCase()));
  const whois = r.data_source === 'whois';
  return fields(
    field('Registrar', r.registrar, whois ? r.link : null),
    field('Registrant', r.registrant),
    !same(r.organization, r.registrant) && field('Organization', r.organization),
    field('Registrant country', r.registrant_country),
    field('Registrant e-mail', r.registrant_email),
    field('Abuse contact', r.abuse_contact),
    field('Created', r.creation_date),
    field('Expires', r.expiration_date),
    field('Updated', r.update_date),
    field('Name servers', r.name_servers),
    field('Other e-mails', otherEmails),
    whois ? field('Data source', 'WHOIS') : sourceLink('RDAP record', r.link),
    whois && !r.registrar ? sourceLink('Registrar website', r.link) : null,
  );
}

/** rdap_whois's card: see registrationDetails. */
export function rdapWhoisDetails(result: RdapWhoisResult): DetailField[] {
  return registrationDetails(result);
}

/**
 * Share of the call's time RDAP (bootstrap and record) may use, so that a hanging RDAP server
 * leaves time for the WHOIS fallback.
 */
const RDAP_TIME_SHARE = 0.6;

export default defineEngine<RdapWhoisResult>({
  id: 'rdap_whois',
  service: 'rdap_whois',
  // Absent from the spec's older catalog variant.
  catalogs: ['main'],
  label: 'RDAP / WHOIS',
  description: 'Registration record of a domain (registrar, registrant, dates, name servers, abuse contact) from RDAP, with WHOIS fallback',
  tags: ['default', 'the service', 'domain', 'free_no_key'],
  types: ['FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: {
    timeout_ms: 10000,
    bootstrap_url: 'https://data.iana.org/rdap/dns.json',
    whois_iana_server: 'whois.iana.org:43',
    whois_server: '',
  },
  settingsSchema: v.looseObject({
    bootstrap_url: v.optional(v.pipe(v.string(), v.url())),
    whois_iana_server: v.optional(v.string()),
    whois_server: v.optional(v.string()),
  }),
  summary: (r) => registrationSummary(r.registrar ?? r.organization, r.creation_date, r.expiration_date, r.data_source),
  details: rdapWhoisDetails,

  // `oas doctor`: the IANA bootstrap file (one call), not a registry's record.
  check: { probe: checkBootstrap },

  async run(observable, ctx) {
    const domain = registrableDomainOf(observable);
    if (!domain) return null;

    let rdapReason: string;
    try {
      const budgetMs = Math.max(0, Math.round((ctx.deadline - Date.now()) * RDAP_TIME_SHARE));
      const rdap = await withinBudget(lookupRdapDomain(ctx, stringSetting(ctx, 'bootstrap_url'), domain), budgetMs);
      if (rdap.status === 'found') return toResult(rdap.record, 'rdap', rdap.record.link || rdap.record.registrarUrl || '');
      if (rdap.status === 'not_found') return null;
      rdapReason = `no RDAP service for .${rdap.tld}`;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      rdapReason = error.message;
    }

    try {
      const answer = await whoisLookup(ctx, domain, {
        ianaServer: stringSetting(ctx, 'whois_iana_server'),
        server: stringSetting(ctx, 'whois_server'),
      });
      if (isNotFound(answer.text)) return null;
      const record = parseWhois(answer.text);
      const where = formatServer(answer.server);
      // A banner or rate-limit notice is not an empty registration: report it as a failure.
      if (isEmptyRecord(record)) throw new WhoisError(`unrecognised answer from ${where}`);
      return toResult(record, 'whois', record.registrarUrl ?? `whois://${where}/${domain}`);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      const whoisReason = error instanceof WhoisError ? error.reason : error.message;
      throw new EngineError(`RDAP: ${rdapReason}; WHOIS: ${whoisReason}`);
    }
  },
});

function toResult(r: RegistrationRecord, source: 'rdap' | 'whois', link: string): RdapWhoisResult {
  return {
    abuse_contact: r.abuseContact,
    creation_date: r.creationDate,
    data_source: source,
    emails: r.emails,
    expiration_date: r.expirationDate,
    link,
    name_servers: r.nameServers,
    organization: r.organization,
    registrant: r.registrant,
    registrant_country: r.registrantCountry,
    registrant_email: r.registrantEmail,
    registrar: r.registrar,
    update_date: r.updateDate,
  };
}

function stringSetting(ctx: EngineContext, name: string): string {
  const value = ctx.settings[name];
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * Gives up waiting after `ms` (a TimeoutError, so the fallback runs). The abandoned request's
 * outcome is ignored; it is cancelled when the engine call ends.
 */
function withinBudget<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
