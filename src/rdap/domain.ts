/**
 * RDAP domain lookups (RFC 9083) shared by the rdap_whois and legacy rdap engines: find the
 * registry through the bootstrap file, fetch the domain object, and reduce it to the
 * registration facts analysts read (registrar, registrant, abuse contact, dates, name servers).
 *
 * Registries differ a lot in what they publish, so the schema only insists on the object being
 * a domain; every part of it is read when present: absent, null or malformed parts (links,
 * events, entities, name servers) count as none, one object in place of a list as a list of it.
 */
import { domainToASCII } from 'node:url';
import { parse } from '../observables/tldts.js';
import * as v from 'valibot';
import type { EngineContext } from '../engine/contract.js';
import { jsonObject, parseJson } from '../http/client.js';
import { list } from '../http/lenient.js';
import { hostOf, registrableDomain } from '../observables/host.js';
import type { Observable } from '../observables/types.js';
import { loadBootstrap, rdapBaseUrl } from './bootstrap.js';
import { isoDay } from '../lookup/wording.js';

/** Registration facts, source-neutral (WHOIS parsing produces the same shape). */
export interface RegistrationRecord {
  registrar: string | null;
  /** Registrar's web site (WHOIS "Registrar URL"); RDAP rarely has one. */
  registrarUrl: string | null;
  abuseContact: string | null;
  registrant: string | null;
  organization: string | null;
  registrantEmail: string | null;
  registrantCountry: string | null;
  /** Every distinct e-mail address in the record. */
  emails: string[];
  /** Lower-case host names, without trailing dot, de-duplicated. */
  nameServers: string[];
  creationDate: string | null;
  expirationDate: string | null;
  updateDate: string | null;
}

export interface RdapRecord extends RegistrationRecord {
  /** The record's `self` link, else "". */
  link: string;
}

export type RdapLookup =
  | { status: 'found'; url: string; record: RdapRecord }
  /** The registry answered 404: the domain is not registered. */
  | { status: 'not_found'; url: string }
  /** No RDAP server is known for this TLD. */
  | { status: 'unsupported'; tld: string };

interface Entity {
  roles: string[];
  vcardArray?: unknown;
  entities: Entity[];
}

/**
 * A list of RDAP parts: absent, null or one object as for `list`, and an item that is malformed
 * is skipped rather than failing the record (registries differ widely in what they publish).
 */
function parts<T>(item: v.GenericSchema<unknown, T>) {
  return v.pipe(
    list(v.unknown()),
    v.transform((items: unknown[]): T[] => items.flatMap((raw) => {
      const parsed = v.safeParse(item, raw);
      return parsed.success ? [parsed.output] : [];
    })),
  );
}

const EntitySchema: v.GenericSchema<unknown, Entity> = jsonObject({
  roles: parts(v.string()),
  vcardArray: v.optional(v.unknown()),
  // `optional` outside: an object reports a missing key before a lazy schema could default it.
  entities: v.optional(v.lazy(() => parts(EntitySchema)), []),
}) as v.GenericSchema<unknown, Entity>;

/**
 * What a domain record is read for. Only its class is needed: one that says it is of another
 * class (`objectClassName`), or an RFC 9083 error document (`errorCode`), is refused; one that
 * does not name its class is read.
 */
const DomainSchema = v.pipe(
  jsonObject({
    objectClassName: v.optional(v.unknown()),
    errorCode: v.optional(v.unknown()),
    links: parts(v.object({ rel: v.optional(v.string()), href: v.string() })),
    events: parts(v.object({ eventAction: v.string(), eventDate: v.string() })),
    entities: parts(EntitySchema),
    nameservers: parts(v.object({ ldhName: v.optional(v.string()), unicodeName: v.optional(v.string()) })),
  }),
  v.check((d) => d.errorCode === undefined
    && (d.objectClassName === undefined || d.objectClassName === null
      || (typeof d.objectClassName === 'string' && d.objectClassName.toLowerCase() === 'domain')),
  'not an RDAP domain object'),
);

type RdapDomain = v.InferOutput<typeof DomainSchema>;

/**
 * The domain to ask a registry about: the registrable domain of the observable's host
 * (`a.b.example.co.uk` -> `example.co.uk`), as an A-label because RDAP paths and WHOIS queries
 * are ASCII. Null for IP hosts and hosts whose suffix is not an ICANN one.
 */
export function registrableDomainOf(observable: Observable): string | null {
  const host = hostOf(observable);
  const domain = host ? registrableDomain(host) : null;
  // The public suffix list's default rule makes any unknown last label a suffix
  // (`printer.lan` -> `printer.lan`); no registry exists for those, so there is nothing to ask.
  if (!domain || parse(domain, { allowPrivateDomains: false }).isIcann !== true) return null;
  return domainToASCII(domain) || null;
}

/**
 * A registrable domain (A-label) over RDAP, for the rdap_whois and the older catalog's rdap
 * engines. A registry's 404 is "not found"; network errors, timeouts, other error statuses and
 * answers that are no domain object throw UpstreamErrors. The record's `link` is its `self`
 * link, else "" (engines.md 5.21: never the query URL).
 */
export async function lookupRdapDomain(ctx: EngineContext, bootstrapUrl: string, domain: string): Promise<RdapLookup> {
  const base = rdapBaseUrl(await loadBootstrap(ctx, bootstrapUrl), domain);
  if (!base) return { status: 'unsupported', tld: domain.slice(domain.lastIndexOf('.') + 1) };
  const url = new URL(`domain/${encodeURIComponent(domain)}`, base).toString();
  const response = await ctx.http.request(url, {
    headers: { accept: 'application/rdap+json, application/json;q=0.9' },
    acceptStatus: [404],
  });
  if (response.status === 404) return { status: 'not_found', url };
  return { status: 'found', url, record: mapRdapDomain(parseJson(response.text(), DomainSchema)) };
}

/** Reduces an RDAP domain object; `fallbackLink` stands in for a missing self link. */
function mapRdapDomain(domain: RdapDomain, fallbackLink = ''): RdapRecord {
  const record: RdapRecord = {
    registrar: null,
    registrarUrl: null,
    abuseContact: null,
    registrant: null,
    organization: null,
    registrantEmail: null,
    registrantCountry: null,
    emails: [],
    nameServers: [],
    creationDate: null,
    expirationDate: null,
    updateDate: null,
    link: fallbackLink,
  };
  const emails = new Map<string, string>();

  // Depth-first, in document order; a later non-empty value overrides an earlier one (as the
  // reference implementation does). Abuse contacts usually sit nested under the registrar.
  const visit = (entity: Entity): void => {
    const vcard = vcardProperties(entity.vcardArray);
    for (const address of vcardAll(vcard, 'email').map(cleanEmail)) {
      if (address && !emails.has(address.toLowerCase())) emails.set(address.toLowerCase(), address);
    }
    const roles = entity.roles.map((r) => r.toLowerCase());
    const set = (key: Exclude<keyof RegistrationRecord, 'emails' | 'nameServers'>, value: string | null) => {
      if (value !== null) record[key] = value;
    };
    if (roles.includes('abuse')) set('abuseContact', firstEmail(vcard));
    if (roles.includes('registrar')) {
      set('registrar', meaningful(vcardText(vcard, 'fn')) ?? meaningful(vcardText(vcard, 'org')));
      set('registrarUrl', meaningful(vcardText(vcard, 'url')));
    }
    if (roles.includes('registrant')) {
      const fn = meaningful(vcardText(vcard, 'fn'));
      set('registrant', fn);
      // An organisation entity (kind "org") carries its name in fn rather than org.
      const isOrg = vcardText(vcard, 'kind')?.toLowerCase() === 'org';
      set('organization', meaningful(vcardText(vcard, 'org')) ?? (isOrg ? fn : null));
      set('registrantEmail', firstEmail(vcard));
      set('registrantCountry', vcardCountry(vcard));
    }
    entity.entities.forEach(visit);
  };
  domain.entities.forEach(visit);
  record.emails = [...emails.values()];

  for (const event of domain.events) {
    const day = isoDay(event.eventDate);
    if (!day) continue;
    const action = event.eventAction.toLowerCase();
    if (action === 'registration') record.creationDate ??= day;
    else if (action === 'expiration') record.expirationDate ??= day;
    else if (action === 'last changed') record.updateDate ??= day;
  }

  record.nameServers = distinctHosts(domain.nameservers.map((ns) => ns.ldhName ?? ns.unicodeName ?? ''));
  const self = domain.links.filter((l) => l.rel?.toLowerCase() === 'self').at(-1);
  if (self?.href) record.link = self.href;
  return record;
}

// ---------------------------------------------------------------------------------------------
// jCard (RFC 7095): ["vcard", [[name, params, type, value, ...], ...]]

type VcardProperty = [name: string, params: Record<string, unknown>, type: string, value: unknown];

/** The well-formed properties of a jCard; anything else is ignored. */
export function vcardProperties(vcardArray: unknown): VcardProperty[] {
  if (!Array.isArray(vcardArray) || !Array.isArray(vcardArray[1])) return [];
  return (vcardArray[1] as unknown[]).filter((p): p is VcardProperty =>
    Array.isArray(p) && p.length >= 4 && typeof p[0] === 'string'
    && typeof p[1] === 'object' && p[1] !== null && !Array.isArray(p[1]));
}

/** Text of a property value; structured values (org units, adr) are joined with ", ". */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(valueText).filter(Boolean).join(', ');
  return '';
}

/** Every non-empty value of a property, in order. */
export function vcardAll(props: readonly VcardProperty[], name: string): string[] {
  return props.filter((p) => p[0].toLowerCase() === name).map((p) => valueText(p[3])).filter(Boolean);
}

/** The first non-empty value of a property, or null. */
export function vcardText(props: readonly VcardProperty[], name: string): string | null {
  return vcardAll(props, name)[0] ?? null;
}

/** Country of the first address: the RFC 8605 `cc` parameter, else the adr's last component. */
export function vcardCountry(props: readonly VcardProperty[]): string | null {
  for (const [name, params, , value] of props) {
    if (name.toLowerCase() !== 'adr') continue;
    if (typeof params.cc === 'string' && params.cc.trim()) return params.cc.trim().toUpperCase();
    const last = Array.isArray(value) ? valueText(value.at(-1)) : '';
    if (last) return meaningful(last);
  }
  return null;
}

function firstEmail(props: readonly VcardProperty[]): string | null {
  for (const value of vcardAll(props, 'email')) {
    const address = cleanEmail(value);
    if (address) return address;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Small normalisations shared with WHOIS parsing.

const EMAIL = /^[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[^\s@<>()"',;:]+$/;

/** An e-mail address, without a `mailto:` prefix; null for redaction notices and web forms. */
export function cleanEmail(value: string): string | null {
  const address = value.trim().replace(/^mailto:/i, '');
  return EMAIL.test(address) ? address : null;
}

/**
 * Redaction placeholders ("REDACTED FOR PRIVACY", "Data Protected", ...) say nothing about the
 * registrant, so they count as unknown (null) rather than as a name. Privacy-proxy names
 * ("Withheld for Privacy ehf") are kept: they are real organisations and telling for analysts.
 */
const PLACEHOLDER = /redacted|not disclosed|data protected|statutory masking|^(n\/?a|none|null|-+)$/i;

export function meaningful(value: string | null | undefined): string | null {
  const text = value?.trim();
  return text && !PLACEHOLDER.test(text) ? text : null;
}

/** Lower-case, trailing-dot-free, distinct host names, empty entries dropped. */
export function distinctHosts(names: readonly string[]): string[] {
  const hosts = names.map((n) => n.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  return [...new Set(hosts)];
}

/** One line for tables: `Cloudflare, Inc.; created 2024-12-20, expires 2026-12-20 (rdap)`. */
export function registrationSummary(
  who: string | null | undefined,
  created: string | null | undefined,
  expires: string | null | undefined,
  source?: string,
): string {
  const dates = [created ? `created ${created}` : '', expires ? `expires ${expires}` : ''].filter(Boolean).join(', ');
  const parts = [who || 'registrar unknown', dates].filter(Boolean).join('; ');
  return source ? `${parts} (${source})` : parts;
}
