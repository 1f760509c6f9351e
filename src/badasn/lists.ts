/**
 * The three public bad-ASN lists bad_asn merges (engines.md 5.4), their parsers and the merge.
 *
 * - Spamhaus ASN-DROP: JSON lines, one object per ASN plus a `{"type": "metadata", ...}` line;
 * - brianhama bad-asn-list: CSV `ASN,Entity`; rows are quoted or not, entities hold commas and
 *   doubled quotes (`"COLOCALL Internet Data Center ""ColoCALL"", UA"`), some ASNs appear twice;
 * - LETHAL-FORENSICS ASN blacklist: CSV `"ASN","OrgName","Info","Date"`, every field quoted.
 *
 * Each parser gives ASN (digits, no leading zeros) → description, in file order, keeping the first
 * entry of an ASN listed twice. A body that is not the documented format throws BadResponseError,
 * so a captive portal page or a truncated download never replaces a good list.
 */
import * as v from 'valibot';
import { BadResponseError } from '../http/errors.js';

export type ListId = 'spamhaus' | 'brianhama' | 'lethal_forensics';

/** ASN (digits) → description, in list order. */
export type AsnTable = Record<string, string>;

export interface ListSource {
  id: ListId;
  /** Name in messages and summaries. */
  name: string;
  /** Setting holding its URL. */
  setting: string;
  defaultUrl: string;
  /** Sent as Accept. */
  accept: string;
  parse(text: string): AsnTable;
}

/**
 * An ASN as digits: `AS13335`, `as13335`, ` 13335 `, `013335` and the number 13335 all give
 * `13335`. Anything else (`Unknown`, `BOGON`, `AS13335 Cloudflare`, out of range) gives null.
 */
export function normalizeAsn(value: unknown): string | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 0xffffffff ? String(value) : null;
  if (typeof value !== 'string') return null;
  const digits = value.trim().toUpperCase().replace(/^AS/, '');
  if (!/^\d{1,10}$/.test(digits)) return null;
  const asn = Number(digits);
  return asn <= 0xffffffff ? String(asn) : null;
}

// ---------------------------------------------------------------------------------------------
// CSV

/**
 * RFC 4180 CSV: comma-separated, fields optionally in double quotes, `""` is a quote inside a
 * quoted field, quoted fields may hold commas and line breaks; CRLF or LF line ends; a leading
 * byte order mark is ignored. Lenient where real files are sloppy: a quote in the middle of an
 * unquoted field is kept as a character, text after a closing quote is appended. Blank lines
 * give no row.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  /** Whether the current row has anything yet (to drop blank lines). */
  let started = false;
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;

  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    if (started) rows.push(row);
    row = [];
    started = false;
  };

  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (quoted) {
      if (c === '"') {
        if (input[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      started = true;
    } else if (c === ',') {
      endField();
      started = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && input[i + 1] === '\n') i++;
      endRow();
    } else {
      field += c;
      started = true;
    }
  }
  if (quoted) throw new BadResponseError('malformed CSV: unterminated quoted field');
  if (started || field !== '') endRow();
  return rows;
}

/**
 * CSV rows as records keyed by the header's column names (trimmed). `required` columns must be
 * in the header (matched case-insensitively), else the body is not the list we expect.
 */
export function csvRecords(text: string, required: readonly string[], listName: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new BadResponseError(`${listName}: empty list`);
  const columns = header.map((name) => name.trim().toLowerCase());
  const missing = required.filter((name) => !columns.includes(name.toLowerCase()));
  if (missing.length > 0) {
    throw new BadResponseError(`${listName}: not the expected CSV (no ${missing.join(', ')} column in the header)`);
  }
  return rows.map((cells) => {
    const record: Record<string, string> = {};
    columns.forEach((name, index) => {
      record[name] = (cells[index] ?? '').trim();
    });
    return record;
  });
}

// ---------------------------------------------------------------------------------------------
// The three formats

/** One ASN-DROP line. The metadata line is recognised before this schema applies. */
const SpamhausEntrySchema = v.looseObject({
  asn: v.union([v.number(), v.string()]),
  rir: v.nullish(v.string()),
  domain: v.nullish(v.string()),
  cc: v.nullish(v.string()),
  asname: v.nullish(v.string()),
});

/**
 * Spamhaus ASN-DROP JSON lines → `Spamhaus ASNDROP (<asname>, <domain>, <cc>)`, `Unknown` for a
 * missing name or domain and `??` for a missing country, as the reference writes them.
 */
export function parseSpamhausAsnDrop(text: string): AsnTable {
  const table: AsnTable = {};
  const lines = text.split(/\r?\n/);
  let entries = 0;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      throw new BadResponseError(`${SPAMHAUS.name}: malformed JSON on line ${index + 1}`);
    }
    if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'metadata') continue;
    const parsed = v.safeParse(SpamhausEntrySchema, data);
    if (!parsed.success) throw new BadResponseError(`${SPAMHAUS.name}: unexpected entry on line ${index + 1}`);
    const asn = normalizeAsn(parsed.output.asn);
    if (asn === null) throw new BadResponseError(`${SPAMHAUS.name}: invalid ASN on line ${index + 1}`);
    entries++;
    const { asname, domain, cc } = parsed.output;
    table[asn] ??= `Spamhaus ASNDROP (${asname || 'Unknown'}, ${domain || 'Unknown'}, ${cc || '??'})`;
  }
  if (entries === 0) throw new BadResponseError(`${SPAMHAUS.name}: empty list`);
  return table;
}

/** brianhama CSV → `Brianhama Bad ASN List (<Entity>)`. Rows without a numeric ASN are skipped. */
export function parseBrianhamaCsv(text: string): AsnTable {
  return tableFrom(BRIANHAMA.name, csvRecords(text, ['ASN', 'Entity'], BRIANHAMA.name), (r) => `Brianhama Bad ASN List (${r.entity ?? ''})`);
}

/**
 * LETHAL-FORENSICS CSV → `LETHAL-FORENSICS ASN Blacklist (<OrgName>[, <Info>][, <Date>])`, the
 * optional parts only when not empty.
 */
export function parseLethalForensicsCsv(text: string): AsnTable {
  return tableFrom(LETHAL_FORENSICS.name, csvRecords(text, ['ASN', 'OrgName'], LETHAL_FORENSICS.name), (r) => {
    const parts = [r.orgname ?? '', r.info ?? '', r.date ?? ''].filter((part, index) => index === 0 || part !== '');
    return `LETHAL-FORENSICS ASN Blacklist (${parts.join(', ')})`;
  });
}

function tableFrom(listName: string, records: Record<string, string>[], describe: (record: Record<string, string>) => string): AsnTable {
  const table: AsnTable = {};
  let entries = 0;
  for (const record of records) {
    const asn = normalizeAsn(record.asn);
    if (asn === null) continue;
    entries++;
    table[asn] ??= describe(record);
  }
  if (entries === 0) throw new BadResponseError(`${listName}: empty list`);
  return table;
}

export const SPAMHAUS: ListSource = {
  id: 'spamhaus',
  name: 'Spamhaus ASN-DROP',
  setting: 'spamhaus_url',
  defaultUrl: 'https://www.spamhaus.org/drop/asndrop.json',
  accept: 'application/x-ndjson, application/json;q=0.9, */*;q=0.1',
  parse: parseSpamhausAsnDrop,
};

export const BRIANHAMA: ListSource = {
  id: 'brianhama',
  name: 'brianhama bad-asn-list',
  setting: 'brianhama_url',
  defaultUrl: 'https://raw.githubusercontent.com/brianhama/bad-asn-list/master/bad-asn-list.csv',
  accept: 'text/csv, text/plain;q=0.9, */*;q=0.1',
  parse: parseBrianhamaCsv,
};

export const LETHAL_FORENSICS: ListSource = {
  id: 'lethal_forensics',
  name: 'LETHAL-FORENSICS ASN Blacklist',
  setting: 'lethal_forensics_url',
  defaultUrl: 'https://raw.githubusercontent.com/LETHAL-FORENSICS/Microsoft-Analyzer-Suite/refs/heads/main/Blacklists/ASN-Blacklist.csv',
  accept: 'text/csv, text/plain;q=0.9, */*;q=0.1',
  parse: parseLethalForensicsCsv,
};

/** In merge order: an ASN's descriptions are joined in this order. */
export const LIST_SOURCES: readonly ListSource[] = [SPAMHAUS, BRIANHAMA, LETHAL_FORENSICS];

/** One table from the lists: descriptions of an ASN in several lists joined with `" + "`, in LIST_SOURCES order. */
export function mergeLists(tables: Partial<Record<ListId, AsnTable>>): AsnTable {
  const merged: AsnTable = {};
  for (const source of LIST_SOURCES) {
    for (const [asn, description] of Object.entries(tables[source.id] ?? {})) {
      merged[asn] = Object.hasOwn(merged, asn) ? `${merged[asn]} + ${description}` : description;
    }
  }
  return merged;
}
