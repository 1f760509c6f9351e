/**
 * Parsing of WHOIS answers (free text, RFC 3912 defines no format). Covers the formats most
 * registries use:
 * - ICANN/Verisign "Key Name: value" lines (gTLDs and many ccTLDs);
 * - RIPE-like lower-case `key: value` blocks separated by blank lines, where the holder is a
 *   handle (`holder-c:`) resolved through a later `nic-hdl:` block (AFNIC .fr, and others);
 * - Nominet-like sections, a key line followed by indented value lines (`Name servers:` then one
 *   host per line).
 * Fields are looked up by a list of known key spellings, in priority order.
 */
import { cleanEmail, distinctHosts, meaningful, type RegistrationRecord } from '../rdap/domain.js';

interface Field {
  key: string;
  value: string;
}

/** Answers meaning "this domain is not registered", matched at the start of a line. */
const NOT_FOUND = [
  /^no match for\b/i,
  /^not found\b/i,
  /^no data found\b/i,
  /^domain not found\b/i,
  /^no entries found\b/i,
  /^no object found\b/i,
  /^the queried object does not exist\b/i,
  /^status:\s*(free|available)\b/i,
];

/** True when the answer says the domain is not registered. */
export function isNotFound(text: string): boolean {
  return text.split(/\r?\n/).some((line) => {
    const bare = line.replace(/^[\s%#>]+/, '');
    return NOT_FOUND.some((pattern) => pattern.test(bare));
  });
}

/** Key spellings per field, most specific first. */
const KEYS = {
  registrar: ['registrar', 'sponsoring registrar', 'registrar name', 'registrar organization'],
  registrarUrl: ['registrar url', 'referral url', 'registrar website'],
  abuseContact: ['registrar abuse contact email', 'abuse contact email', 'abuse-mailbox', 'abuse email'],
  registrant: ['registrant name', 'registrant contact name', 'registrant'],
  organization: ['registrant organization', 'registrant organisation', 'registrant org'],
  registrantEmail: ['registrant email', 'registrant e-mail', 'registrant contact email'],
  registrantCountry: ['registrant country', 'registrant country code', 'registrant country/economy'],
  creationDate: ['creation date', 'created', 'created on', 'created date', 'registered on', 'registration date',
    'registration time', 'domain registration date', 'registered'],
  expirationDate: ['registry expiry date', 'registry expiration date', 'registrar registration expiration date',
    'expiry date', 'expiration date', 'expires on', 'expires', 'expire', 'paid-till', 'expiration time',
    'domain expiration date', 'renewal date'],
  updateDate: ['updated date', 'last updated', 'last-update', 'last update', 'last modified', 'last-modified',
    'changed', 'modified', 'updated'],
  nameServers: ['name server', 'name servers', 'nameserver', 'nameservers', 'nserver', 'dns'],
  holderHandle: ['holder-c', 'registrant-c', 'registrant handle', 'registrant id'],
} as const;

/** Parses a (found) WHOIS answer; fields it cannot find are null. */
export function parseWhois(text: string): RegistrationRecord {
  const blocks = parseBlocks(text);
  const fields = blocks.flat();
  const first = (keys: readonly string[]): string | null => {
    for (const key of keys) {
      for (const f of fields) if (f.key === key && f.value) return f.value;
    }
    return null;
  };
  const date = (keys: readonly string[]) => {
    for (const key of keys) {
      for (const f of fields) {
        const day = f.key === key ? normalizeDate(f.value) : null;
        if (day) return day;
      }
    }
    return null;
  };

  const record: RegistrationRecord = {
    registrar: meaningful(first(KEYS.registrar)),
    registrarUrl: normalizeUrl(first(KEYS.registrarUrl)),
    abuseContact: cleanEmail(first(KEYS.abuseContact) ?? ''),
    registrant: meaningful(first(KEYS.registrant)),
    organization: meaningful(first(KEYS.organization)),
    registrantEmail: cleanEmail(first(KEYS.registrantEmail) ?? ''),
    registrantCountry: meaningful(first(KEYS.registrantCountry)),
    emails: distinctEmails(fields),
    nameServers: distinctHosts(fields
      .filter((f) => (KEYS.nameServers as readonly string[]).includes(f.key))
      // "ns1.example.fr [192.0.2.1]" or "ns1.example.com 192.0.2.1": the host is the first word.
      .map((f) => f.value.split(/[\s[]/)[0] ?? '')),
    creationDate: date(KEYS.creationDate),
    expirationDate: date(KEYS.expirationDate),
    updateDate: date(KEYS.updateDate),
  };

  // RIPE-like registries name the holder by handle; its details are in the contact block.
  const handle = first(KEYS.holderHandle);
  const holder = handle ? blocks.find((b) => b.some((f) => f.key === 'nic-hdl' && f.value === handle)) : undefined;
  if (holder) {
    const get = (...keys: string[]) => keys.map((k) => holder.find((f) => f.key === k && f.value)?.value).find(Boolean) ?? null;
    const name = meaningful(get('contact', 'person', 'name', 'role'));
    const isOrg = /^(organi[sz]ation|org)/i.test(get('type') ?? '');
    record.registrant ??= name;
    record.organization ??= meaningful(get('org', 'organisation', 'organization')) ?? (isOrg ? name : null);
    record.registrantEmail ??= cleanEmail(get('e-mail', 'email') ?? '');
    record.registrantCountry ??= meaningful(get('country'));
  }
  return record;
}

/** True when nothing at all was recognised (rate-limit notices, banners, unknown formats). */
export function isEmptyRecord(record: RegistrationRecord): boolean {
  return Object.values(record).every((value) => value === null || (Array.isArray(value) && value.length === 0));
}

/**
 * Blocks of `key: value` fields. Keys are lower-cased with spaces collapsed. Comment lines
 * (%, #, >>>) are skipped; a key with an empty value takes the more-indented lines below it
 * that are not fields themselves (Nominet-style sections).
 */
function parseBlocks(text: string): Field[][] {
  const blocks: Field[][] = [[]];
  let section: { key: string; indent: number } | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+$/, '');
    if (/^\s*(%|#|>>>)/.test(line)) continue;
    if (line.trim() === '') {
      if (blocks.at(-1)!.length > 0) blocks.push([]);
      section = null;
      continue;
    }
    const indent = line.length - line.trimStart().length;
    if (section && indent > section.indent && !/^\s*[\w\s/-]{1,40}:\s/.test(line + ' ')) {
      blocks.at(-1)!.push({ key: section.key, value: line.trim() });
      continue;
    }
    const match = /^\s*([^:]{1,60}?)\s*:\s*(.*)$/.exec(line);
    if (!match) {
      section = null;
      continue;
    }
    const key = match[1]!.toLowerCase().replace(/\s+/g, ' ');
    const value = match[2]!.trim();
    blocks.at(-1)!.push({ key, value });
    section = value === '' ? { key, indent } : (section && indent > section.indent ? section : null);
  }
  return blocks.filter((b) => b.length > 0);
}

function distinctEmails(fields: readonly Field[]): string[] {
  const seen = new Map<string, string>();
  for (const f of fields) {
    for (const word of f.value.split(/[\s,;<>()]+/)) {
      const address = cleanEmail(word);
      if (address && !seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address);
    }
  }
  return [...seen.values()];
}

/** Registrar URLs are often written without a scheme ("www.gandi.net"). */
function normalizeUrl(value: string | null): string | null {
  const text = meaningful(value);
  if (!text) return null;
  return /^https?:\/\//i.test(text) ? text : `http://${text}`;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * `YYYY-MM-DD` from the date notations registries use: ISO 8601 (with or without time),
 * `14-Aug-1995`, `1995.08.14`, `1995/08/14`, `14.08.1995`. Anything else (including
 * "before Aug-1996") gives null rather than a guess.
 */
export function normalizeDate(value: string): string | null {
  const text = value.trim();
  let m: RegExpExecArray | null;
  let y: number, mo: number, d: number;
  if ((m = /^(\d{4})[-./](\d{1,2})[-./](\d{1,2})(?:$|[T\s])/.exec(text))) {
    [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  } else if ((m = /^(\d{1,2})[-\s]([A-Za-z]{3})[A-Za-z]*[-\s](\d{4})(?:$|\s)/.exec(text))) {
    [y, mo, d] = [Number(m[3]), MONTHS.indexOf(m[2]!.toLowerCase()) + 1, Number(m[1])];
  } else if ((m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:$|\s)/.exec(text))) {
    [y, mo, d] = [Number(m[3]), Number(m[2]), Number(m[1])];
  } else {
    return null;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  return `${y}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}
