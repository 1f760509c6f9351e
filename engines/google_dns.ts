/**
 * public_dns — common DNS records through a public DNS-over-HTTPS JSON API (dns.google by
 * default; any server speaking the same JSON, e.g. Cloudflare's, works via base_url).
 *
 * Differences from the reference (engines.md 5.10, section 8 item 14):
 * - PTR lookups use the real reverse name (4.3.2.1.in-addr.arpa; nibbles under ip6.arpa for IPv6);
 * - `type_name` comes from each answer's own type, so a CNAME met while asking for A is labelled
 *   CNAME, and a record returned by several queries (that CNAME, again for AAAA/MX/...) is listed once;
 * - SPF comes from the TXT answer (no second TXT request), every query runs concurrently and
 *   under the call's deadline, and a SERVFAIL is reported instead of looking like "no records";
 * - an IP's result is the upstream answer read as below, so it always has `Status`, the flags,
 *   `Question` and `Answer` (the reference passed the JSON through, keys missing as sent).
 *
 * What an answer needs: to be a JSON object, and each record in it a `type` and `data`. The rest
 * is read when present: an absent or empty `Status` is 0 (NOERROR), absent flags (`TC`, `RD`,
 * `RA`, `AD`, `CD`) are false (also when sent as 0 or ""), `Question` and `Answer` absent or null
 * are [] and one record in place of a list is a list of it, null records are skipped; a record
 * without `name` or `TTL` has them null.
 *
 * Older catalog (`variants.older`): the older record set A, AAAA, CNAME, NS, MX, TXT (PTR for an
 * IP), without SOA and without SPF/DMARC entries apart (no `_dmarc` query; SPF stays a TXT record).
 */
import * as v from 'valibot';
import { jsonObject } from '../src/http/client.js';
import { flag, list, num, numOrNull, text } from '../src/http/lenient.js';
import { defineEngine, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { dnsStatusError, dnsTarget, listSummary, stripDot } from '../src/dns/resolver.js';
import { reverseName, urlHost } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/** A record: its `type` and `data` are needed, `name` and `TTL` read when present. */
const AnswerSchema = v.object({ name: text(), type: v.number(), TTL: numOrNull(), data: v.string() });

/** The JSON API's answer, read as the top of this file says; extra members (Comment, Authority, edns_client_subnet) are kept. */
const DohSchema = jsonObject({
  Status: num(),
  TC: flag(),
  RD: flag(),
  RA: flag(),
  AD: flag(),
  CD: flag(),
  Question: list(v.object({ name: text(), type: numOrNull() })),
  Answer: list(AnswerSchema),
});

type DohAnswer = v.InferOutput<typeof AnswerSchema>;
type DohResponse = v.InferOutput<typeof DohSchema>;

export interface DnsRecord extends DohAnswer {
  type_name: string;
}

/** Domain: the records, then SPF and DMARC policies as pseudo-records. */
export interface DomainResult {
  Answer: (DnsRecord | { type_name: 'SPF' | 'DMARC'; data: string })[];
}

/** IP: the upstream PTR answer as is, every Answer item labelled. */
export type IpResult = DohResponse & { Answer: DnsRecord[] };

export type PublicDnsResult = DomainResult | IpResult;

const TYPE_NAMES: Record<number, string> = { 1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 12: 'PTR', 15: 'MX', 16: 'TXT', 28: 'AAAA' };
const TXT = 16;
const MX = 15;
/** Asked for a domain, in the order the result lists them. */
const DOMAIN_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA'] as const;
const NXDOMAIN = 3;

/** What a domain lookup asks: the record types, and whether SPF/DMARC policies are set apart. */
interface RecordSet {
  types: readonly string[];
  policies: boolean;
}

const MAIN_RECORDS: RecordSet = { types: DOMAIN_TYPES, policies: true };

/**
 * The older catalog's record set (spec, "Differences in the older catalog variant"): A, AAAA,
 * CNAME, NS, MX and TXT of a domain (PTR of an IP), with no SPF or DMARC policy apart: an SPF
 * record is one of the TXT records, and `_dmarc` is not asked.
 */
const OLDER_RECORDS: RecordSet = { types: ['A', 'AAAA', 'CNAME', 'NS', 'MX', 'TXT'], policies: false };

export function publicDnsLookup(observable: Observable, ctx: EngineContext): Promise<PublicDnsResult | null> {
  return lookup(observable, ctx, MAIN_RECORDS);
}

/** The older catalog's lookup: the older record set, no SPF/DMARC entries. */
export function publicDnsOlderLookup(observable: Observable, ctx: EngineContext): Promise<PublicDnsResult | null> {
  return lookup(observable, ctx, OLDER_RECORDS);
}

async function lookup(observable: Observable, ctx: EngineContext, set: RecordSet): Promise<PublicDnsResult | null> {
  const target = dnsTarget(observable);
  if (!target) return null;
  if (target.kind === 'ip') {
    const response = await query(ctx, reverseName(target.ip), 'PTR');
    return { ...response, Answer: response.Answer.map(labelled) };
  }
  return domainRecords(ctx, target.name, set);
}

async function domainRecords(ctx: EngineContext, domain: string, set: RecordSet): Promise<DomainResult> {
  // DMARC is a policy lookup on the side: its failure must not cost the whole answer.
  const dmarc = set.policies ? query(ctx, `_dmarc.${domain}`, 'TXT').then(dmarcPolicy, () => undefined) : undefined;
  const responses = await Promise.all(set.types.map((type) => query(ctx, domain, type)));

  const records: DomainResult['Answer'] = [];
  const spf: DomainResult['Answer'] = [];
  const seen = new Set<string>();
  for (const answer of responses.flatMap((response) => response.Answer)) {
    const record = { ...labelled(answer), data: cleanData(answer) };
    // TTLs differ between queries (caches count down), so they are not part of identity.
    const key = `${record.name?.toLowerCase() ?? ''}|${record.type}|${record.data}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (set.policies && record.type === TXT && /^v=spf/i.test(record.data)) spf.push({ type_name: 'SPF', data: record.data });
    else records.push(record);
  }
  const policy = await dmarc;
  return { Answer: [...records, ...spf, ...(policy !== undefined ? [{ type_name: 'DMARC' as const, data: policy }] : [])] };
}

/** One DoH question. NXDOMAIN is an empty answer; other failing statuses are errors. */
async function query(ctx: EngineContext, name: string, type: string): Promise<DohResponse> {
  const response = await ctx.http.json(String(ctx.settings.base_url), DohSchema, {
    query: { name, type },
    headers: { accept: 'application/dns-json' },
  });
  if (response.Status !== 0 && response.Status !== NXDOMAIN) throw dnsStatusError(response.Status);
  return response;
}

function labelled(answer: DohAnswer): DnsRecord {
  return { ...answer, type_name: TYPE_NAMES[answer.type] ?? 'Unknown' };
}

/** Data as an analyst reads it: no root dots, MX as the mail host only, TXT as its text. */
function cleanData(answer: DohAnswer): string {
  if (answer.type === MX) return stripDot(answer.data.trim().split(/\s+/).pop() ?? '');
  if (answer.type === TXT) return txtText(answer.data);
  return stripDot(answer.data);
}

/**
 * dns.google gives a TXT record as its plain text; other servers (Cloudflare) quote each
 * character-string: `"v=spf1 ip4:192.0.2.0/24 " "-all"`. Quoted strings are unescaped and joined,
 * as a TXT record's strings form one text (RFC 7208 3.3).
 */
function txtText(data: string): string {
  if (!data.startsWith('"')) return data;
  const strings = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
  return strings.join('');
}

/** The first DMARC record's text, with `; ` tightened to `;` as the reference shows it. */
function dmarcPolicy(response: DohResponse): string | undefined {
  const policy = response.Answer
    .filter((answer) => answer.type === TXT)
    .map((answer) => txtText(answer.data))
    .find((data) => /^v=DMARC1/i.test(data));
  return policy?.replace(/;\s+/g, ';');
}

/** `2 A, 1 AAAA, 1 MX, 2 NS, SPF, DMARC` (SOA left out: one per zone, it says nothing); `PTR dns.google`. */
function summary(result: PublicDnsResult): string {
  if ('Question' in result) {
    const names = result.Answer.filter((record) => record.type === 12).map((record) => stripDot(record.data));
    return names.length > 0 ? `PTR ${listSummary(names)}` : 'no PTR record';
  }
  const counts = new Map<string, number>();
  for (const record of result.Answer) counts.set(record.type_name, (counts.get(record.type_name) ?? 0) + 1);
  counts.delete('SOA');
  const parts = [...counts].map(([name, count]) => (name === 'SPF' || name === 'DMARC' ? name : `${count} ${name}`));
  return parts.length > 0 ? parts.join(', ') : 'no records';
}

/** Labels of a domain's records on the card, most read first; other types follow as they come. */
const DETAIL_LABELS: Record<string, string> = {
  A: 'A', AAAA: 'AAAA', CNAME: 'CNAME', MX: 'MX', NS: 'NS', SPF: 'SPF', DMARC: 'DMARC', TXT: 'TXT', SOA: 'SOA', Unknown: 'Other',
};

/** Google Public DNS's own page for a name (the default upstream; it shows the same records). */
function googleDnsPage(name: string, type?: string): string {
  return `https://dns.google/query?name=${encodeURIComponent(name)}${type ? `&rr_type=${type}` : ''}`;
}

/**
 * Domain: one line per record type (A, AAAA, CNAME, MX, NS, SPF, DMARC, other TXT, SOA), each
 * value the records' data. IP: the PTR names. Then the name's page on dns.google.
 */
export function publicDnsDetails(result: PublicDnsResult, target: string): DetailField[] {
  if ('Question' in result) {
    const names = result.Answer.filter((record) => record.type === 12).map((record) => stripDot(record.data));
    const question = result.Question[0]?.name;
    return fields(
      field('PTR names', names.length > 0 ? names : 'none'),
      question ? sourceLink('Google Public DNS', googleDnsPage(stripDot(question), 'PTR')) : null,
    );
  }
  const byType = new Map<string, string[]>(Object.keys(DETAIL_LABELS).map((name) => [name, []]));
  for (const record of result.Answer) {
    const data = record.type_name === 'Unknown' && 'type' in record ? `type ${record.type}: ${record.data}` : record.data;
    byType.set(record.type_name, [...(byType.get(record.type_name) ?? []), data]);
  }
  const host = /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? urlHost(target) : stripDot(target.trim().toLowerCase());
  return fields(
    ...[...byType].map(([name, data]) => field(DETAIL_LABELS[name] ?? name, data)),
    result.Answer.length === 0 && field('Records', 'none'),
    host ? sourceLink('Google Public DNS', googleDnsPage(host)) : null,
  );
}

export default defineEngine<PublicDnsResult>({
  id: 'public_dns',
  service: 'google_dns',
  label: 'Public DNS (DoH)',
  description: 'A, AAAA, CNAME, MX, TXT (with SPF and DMARC), NS and SOA of a domain, or PTR of an IP, from a public DNS-over-HTTPS resolver',
  // Exactly the spec's tags (its catalog does not mark public_dns free_no_key, though it needs no key).
  tags: ['IP', 'domain', 'URL'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: true,
  defaults: { timeout_ms: 8000, base_url: 'https://dns.google/resolve' },
  summary,
  details: publicDnsDetails,
  run: publicDnsLookup,
  variants: {
    older: {
      description: 'A, AAAA, CNAME, NS, MX and TXT of a domain, or PTR of an IP, from a public DNS-over-HTTPS resolver',
      run: publicDnsOlderLookup,
    },
  },
});
