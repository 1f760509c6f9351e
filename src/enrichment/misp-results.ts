/**
 * An analysis's results as misp-modules answer MISP (issue 39), in the two forms MISP reads
 * (app/Model/Module.php, AttributesController::hoverEnrichment, EventsController's enrichment,
 * Event::handleModuleResult and handleMispFormatFromModuleResult):
 *
 * - the simple form, `{"results": [{"types": [...], "values": [...]}]}`: MISP's hover shows each
 *   value under the module's name, its expansion proposes each as an attribute of the first type.
 *   oas answers text: the verdict with its reasons, each engine's one-line summary (or why it has
 *   none), and a `link` to the analysis when `public_url` is set.
 * - `misp_standard`, `{"results": {"Attribute": [...], "Object": [...]}}`, as pymisp's MISPEvent
 *   writes them: the attribute asked about (its own uuid, so MISP maps it onto the one it has)
 *   tagged `oas:verdict="<verdict>"` as oas's MISP export tags it, and objects of MISP's templates
 *   (misp-objects): `report` (title: the verdict; summary: its reasons and each engine's summary;
 *   link), `domain-ip` (the addresses a domain or URL host resolved to, or an address's names),
 *   `asn` (each autonomous system an engine named), `whois` (the registration record), each
 *   referring to the attribute. MISP's hover lists their attributes; its expansion offers them.
 *
 * Upstream text is made plain (no markup, no control characters) and clipped: MISP shows it.
 */
import { randomUUID } from 'node:crypto';
import type { Catalog } from '../engine/catalog.js';
import { observableRows } from '../analysis/rows.js';
import { clip, plainText } from '../export/common.js';
import { isRegistrableDomain, ipVersion, registrableDomain, urlHost } from '../observables/host.js';
import type { ObservableResult } from '../runner/result.js';
import { RESERVED_KEYS } from '../runner/result.js';
import { worse, type ObservableVerdict, type Verdict } from '../verdict/verdict.js';
import { asnOf } from '../view/graph-view.js';

/** One observable's result with its verdict. */
export interface Judged {
  result: ObservableResult;
  judged: ObservableVerdict;
}

export interface AnswerContext {
  catalog: Catalog;
  /** The analysis's page, absolute (with `public_url`); undefined without one (MISP wants a URL). */
  link: string | undefined;
  /** The analysis's id, named in the objects' comments. */
  analysisId: string;
}

const TEXT_MAX = 1000;
const text = (value: string) => clip(plainText(value), TEXT_MAX);

/** The verdict in one line: `malicious (provider_24: 54/76 engines flag it; ...)`. */
function verdictLine(judged: ObservableVerdict): string {
  const reasons = judged.reasons.length > 0 ? judged.reasons.join('; ') : 'no engine that judges this observable answered';
  return `${judged.verdict} (${reasons})`;
}

/** Each engine of the result that applies to it, as `<label>: <summary>` (an error or a withholding says so). */
function engineLines(item: Judged, catalog: Catalog): string[] {
  return observableRows(item.result, catalog, item.judged)
    .filter((row) => row.engine !== '-')
    .map((row) => `${catalog.find(row.engine)?.label ?? row.engine}: ${row.summary}`);
}

/** The simple form: text for MISP's hover and expansion. */
export function simplifiedAnswer(items: readonly Judged[], context: AnswerContext): { results: { types: string[]; values: string[] }[] } {
  const several = items.length > 1;
  const results: { types: string[]; values: string[] }[] = [];
  for (const item of items) {
    const about = several ? `${item.result.observable}: ` : '';
    results.push({ types: ['text'], values: [text(`${about}oas verdict: ${verdictLine(item.judged)}`)] });
    for (const line of engineLines(item, context.catalog)) results.push({ types: ['text'], values: [text(`${about}${line}`)] });
  }
  if (context.link) results.push({ types: ['link'], values: [context.link] });
  return { results };
}

/** The attribute MISP sent, as far as the answer repeats it: its uuid, type and value, and the fields it set. */
export interface AskedAttribute {
  uuid: string;
  type: string;
  value: string;
  [field: string]: unknown;
}

/** misp-objects' templates of the objects oas answers: uuid, version, meta-category, description. */
const TEMPLATES = {
  report: { uuid: '70a68471-df22-4e3f-aa1a-5a3be19f82df', version: '8', meta: 'misc', description: 'Report object to describe a report along with its metadata.' },
  'domain-ip': { uuid: '43b3b146-77eb-4931-b4cc-b66c60f28734', version: '11', meta: 'network', description: 'A domain/hostname and IP address seen as a tuple in a specific time frame.' },
  asn: { uuid: '4ec55cc6-9e49-4c64-b794-03c25c1a6587', version: '6', meta: 'network', description: 'Autonomous system object describing an autonomous system which can include one or more network operators managing an entity (e.g. ISP) along with their routing policy, routing prefixes or alike.' },
  whois: { uuid: '429faea1-34ff-47af-8a00-7c62d3be5a6a', version: '10', meta: 'network', description: 'Whois records information for a domain name or an IP address.' },
} as const;

/** MISP's default category of each attribute type oas answers (app/Model/MispAttribute.php). */
const CATEGORY: Record<string, string> = {
  text: 'Other', datetime: 'Other', link: 'External analysis', domain: 'Network activity', hostname: 'Network activity',
  'ip-dst': 'Network activity', AS: 'Network activity', 'whois-registrar': 'Attribution', 'whois-registrant-name': 'Attribution',
  'whois-registrant-org': 'Attribution', 'whois-registrant-email': 'Attribution',
};

type Row = [relation: string, type: string, value: string, tag?: string];

interface MispObject {
  name: string;
  'meta-category': string;
  description: string;
  template_uuid: string;
  template_version: string;
  uuid: string;
  comment: string;
  Attribute: Record<string, unknown>[];
  ObjectReference: { uuid: string; object_uuid: string; referenced_uuid: string; relationship_type: string }[];
}

function mispObject(name: keyof typeof TEMPLATES, rows: readonly Row[], comment: string, refersTo: string, relationship: string): MispObject {
  const template = TEMPLATES[name];
  const uuid = randomUUID();
  return {
    name,
    'meta-category': template.meta,
    description: template.description,
    template_uuid: template.uuid,
    template_version: template.version,
    uuid,
    comment,
    Attribute: rows.map(([relation, type, value, tag]) => ({
      uuid: randomUUID(),
      object_relation: relation,
      type,
      category: CATEGORY[type] ?? 'Other',
      value,
      to_ids: false,
      ...(tag ? { Tag: [{ name: tag }] } : {}),
    })),
    ObjectReference: [{ uuid: randomUUID(), object_uuid: uuid, referenced_uuid: refersTo, relationship_type: relationship }],
  };
}

/** `oas:verdict="malicious"`, as oas's MISP export tags its attributes. */
export function verdictTag(verdict: Verdict): string {
  return `oas:verdict="${verdict}"`;
}

/** misp_standard: the attribute asked about, tagged, and the objects oas knows of it. */
export function standardAnswer(items: readonly Judged[], asked: AskedAttribute, context: AnswerContext): { results: { Attribute: Record<string, unknown>[]; Object: MispObject[] } } {
  const worst = items.reduce<Verdict>((verdict, item) => worse(verdict, item.judged.verdict), 'unknown');
  const attribute = { ...asked, Tag: [{ name: verdictTag(worst) }] };
  const objects: MispObject[] = [];
  const comment = `oas analysis ${context.analysisId}`;
  for (const item of items) {
    const { result, judged } = item;
    const rows: Row[] = [
      ['title', 'text', text(`oas verdict for ${result.observable}: ${judged.verdict}`), verdictTag(judged.verdict)],
      ...judged.reasons.map((reason): Row => ['summary', 'text', text(reason)]),
      ...engineLines(item, context.catalog).map((line): Row => ['summary', 'text', text(line)]),
    ];
    if (context.link) rows.push(['link', 'link', context.link]);
    objects.push(mispObject('report', rows, comment, asked.uuid, 'describes'));
    const resolution = resolutionRows(result, context.catalog);
    if (resolution) objects.push(mispObject('domain-ip', resolution, `${comment}: resolved by oas`, asked.uuid, 'related-to'));
    for (const found of asns(result, context.catalog)) {
      objects.push(mispObject('asn', [['asn', 'AS', `AS${found.asn}`], ...(found.org ? [['description', 'text', text(found.org)] as Row] : [])], `${comment}: according to ${found.engines.join(', ')}`, asked.uuid, 'related-to'));
    }
    const whois = registrationRows(result, context.catalog);
    if (whois) objects.push(mispObject('whois', whois.rows, `${comment}: according to ${whois.engine}`, asked.uuid, 'related-to'));
  }
  return { results: { Attribute: [attribute], Object: objects } };
}

/** The engines of a result that answered (no error, not withheld, a value), with their answers. */
function answers(result: ObservableResult): [key: string, value: Record<string, unknown>][] {
  return Object.keys(result)
    .filter((key) => !RESERVED_KEYS.has(key) && result.errors?.[key] === undefined && result.withheld?.[key] === undefined)
    .flatMap((key) => {
      const value = result[key];
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? [[key, value as Record<string, unknown>]] : [];
    });
}

/**
 * `domain-ip`: a domain's or URL host's addresses, as the pivot engine (reverse_dns) answered them
 * (any list of its answer: the runner reads it the same way) and the address the IP engines looked
 * at; an address's names. Undefined when there is none.
 */
function resolutionRows(result: ObservableResult, catalog: Catalog): Row[] | undefined {
  const listed = answers(result)
    .filter(([key]) => catalog.find(key)?.pivot)
    .flatMap(([, value]) => Object.values(value).flatMap((list) => (Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string' && item.trim() !== '') : [])));
  if (result.type === 'IPv4' || result.type === 'IPv6') {
    const names = [...new Set(listed.filter((item) => ipVersion(item) === 0).map((name) => name.replace(/\.$/, '').toLowerCase()))];
    return names.length > 0 ? [['ip', 'ip-dst', result.observable], ...names.map((name): Row => ['domain', 'domain', name])] : undefined;
  }
  const host = result.type === 'FQDN' ? result.observable.replace(/\.$/, '').toLowerCase() : result.type === 'URL' ? urlHost(result.observable) : null;
  if (!host || ipVersion(host) !== 0) return undefined;
  const reversed = typeof result.reversed_ip === 'string' && result.reversed_ip !== '' ? [result.reversed_ip] : [];
  const addresses = [...new Set([...listed.filter((item) => ipVersion(item) !== 0), ...reversed])];
  if (addresses.length === 0) return undefined;
  return [isRegistrableDomain(host) ? ['domain', 'domain', host] : ['hostname', 'hostname', host], ...addresses.map((ip): Row => ['ip', 'ip-dst', ip])];
}

/** Each autonomous system the engines named (their `asn` declaration), once, with who named it. */
function asns(result: ObservableResult, catalog: Catalog): { asn: string; org: string | null; engines: string[] }[] {
  const found = new Map<string, { asn: string; org: string | null; engines: string[] }>();
  for (const [key, value] of answers(result)) {
    const engine = catalog.find(key);
    const named = asnOf(engine, value);
    if (!named) continue;
    const entry = found.get(named.asn) ?? { asn: named.asn, org: null, engines: [] };
    entry.org ??= named.org;
    entry.engines.push(engine?.label ?? key);
    found.set(named.asn, entry);
  }
  return [...found.values()];
}

/**
 * `whois`: the first registration record of the result, read by the fields the RDAP engines
 * (rdap_whois, rdap) name it with: registrar, creation_date, expiration_date, update_date,
 * name_servers, registrant, organization, registrant_email. Undefined when no answer has a registrar
 * or a creation date.
 */
function registrationRows(result: ObservableResult, catalog: Catalog): { rows: Row[]; engine: string } | undefined {
  const host = result.type === 'FQDN' ? result.observable.replace(/\.$/, '').toLowerCase() : result.type === 'URL' ? urlHost(result.observable) : null;
  for (const [key, value] of answers(result)) {
    const word = (field: string) => (typeof value[field] === 'string' && (value[field] as string).trim() !== '' ? text(value[field] as string) : undefined);
    // A date as the engine wrote it (`1995-08-14`, `2026-08-13T04:00:00Z`), when it is one.
    const date = (field: string) => {
      const raw = word(field);
      return raw !== undefined && Number.isFinite(Date.parse(raw)) ? raw : undefined;
    };
    const registrar = word('registrar');
    const created = date('creation_date');
    if (registrar === undefined && created === undefined) continue;
    const servers = Array.isArray(value['name_servers']) ? (value['name_servers'] as unknown[]).filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];
    const rows: Row[] = [];
    const push = (relation: string, type: string, field: string | undefined) => {
      if (field !== undefined) rows.push([relation, type, field]);
    };
    // The record is the registrable domain's (`www.example.com`'s is example.com's).
    if (host && ipVersion(host) === 0) push('domain', 'domain', registrableDomain(host) ?? host);
    push('registrar', 'whois-registrar', registrar);
    push('creation-date', 'datetime', created);
    push('expiration-date', 'datetime', date('expiration_date'));
    push('modification-date', 'datetime', date('update_date'));
    push('registrant-name', 'whois-registrant-name', word('registrant'));
    push('registrant-org', 'whois-registrant-org', word('organization'));
    push('registrant-email', 'whois-registrant-email', word('registrant_email'));
    for (const server of [...new Set(servers.map((s) => s.replace(/\.$/, '').toLowerCase()))]) rows.push(['nameserver', 'hostname', server]);
    return { rows, engine: catalog.find(key)?.label ?? key };
  }
  return undefined;
}
