/**
 * The graph view's part of one observable (`ObservableView.graph`): nodes for the observable, the
 * IP it resolves to, the ASNs the network engines name for it, and the engines whose evidence
 * flags it (malicious or suspicious), with the edges between them. Node ids are stable across
 * observables (`ip:8.8.8.8`, `asn:15169`, `engine:<key>`), so the page draws one graph by
 * merging the parts of the observables it shows (web/src/results-graph.ts).
 */
import { normalizeAsn } from '../badasn/lists.js';
import type { Catalog } from '../engine/catalog.js';
import { engineKeys, observableVerdict } from '../analysis/rows.js';
import type { ObservableResult } from '../runner/result.js';
import { evidenceOf, type Evidence } from '../verdict/verdict.js';
import type { GraphEdgeView, GraphNodeView, ObservableGraphView, VerdictName } from './types.js';

type Flag = Exclude<Evidence['level'], 'clean'>;

const IP_TYPES = new Set(['IPv4', 'IPv6']);

/** The node id of an observable: IPs share theirs with the same address reached by resolution. */
export function observableNodeId(value: string, type: string): string {
  return IP_TYPES.has(type) ? `ip:${value}` : `obs:${value}`;
}

/** `verdict`: the observable's, when the caller has it already. */
export function observableGraph(result: ObservableResult, catalog: Catalog, verdict?: VerdictName): ObservableGraphView {
  const nodes = new Map<string, GraphNodeView>();
  const edges = new Map<string, GraphEdgeView>();
  const addEdge = (edge: Omit<GraphEdgeView, 'id'>) => {
    const id = `${edge.relation}:${edge.source}>${edge.target}`;
    if (!edges.has(id)) edges.set(id, { id, ...edge });
  };

  const observableId = observableNodeId(result.observable, result.type);
  nodes.set(observableId, {
    id: observableId,
    kind: 'observable',
    label: result.observable,
    type: result.type,
    verdict: verdict ?? observableVerdict(result, catalog).verdict,
  });

  // The address the IP engines looked at: the resolved one for a domain or URL.
  const reversed = typeof result.reversed_ip === 'string' && result.reversed_ip !== '' && !IP_TYPES.has(result.type) ? result.reversed_ip : null;
  const ipId = reversed ? `ip:${reversed}` : observableId;
  if (reversed) {
    nodes.set(ipId, { id: ipId, kind: 'ip', label: reversed });
    addEdge({ source: observableId, target: ipId, relation: 'resolves_to', note: 'the address the IP engines looked up' });
  }

  // ASNs, each with the engines that named it.
  const asns = new Map<string, { org: string | null; engines: string[]; listed: boolean }>();
  for (const key of answeredKeys(result)) {
    const service = catalog.find(key)?.service ?? key;
    const found = asnOf(service, result[key]);
    if (!found) continue;
    const entry = asns.get(found.asn) ?? { org: null, engines: [], listed: false };
    entry.org ??= found.org;
    entry.listed ||= found.listed;
    if (!entry.engines.includes(key)) entry.engines.push(key);
    asns.set(found.asn, entry);
  }
  for (const [asn, entry] of asns) {
    const id = `asn:${asn}`;
    nodes.set(id, { id, kind: 'asn', label: entry.org ? `AS${asn} ${entry.org}` : `AS${asn}`, listed: entry.listed });
    addEdge({ source: ipId, target: id, relation: 'in_asn', note: `according to ${entry.engines.map((key) => catalog.find(key)?.label ?? key).join(', ')}${entry.listed ? ' (listed in bad-ASN lists)' : ''}` });
  }

  // The engines that flag it: to the IP when they looked at the resolved address.
  for (const { key, evidence } of flags(result, catalog)) {
    const engine = catalog.find(key);
    const id = `engine:${key}`;
    const previous = nodes.get(id);
    nodes.set(id, { id, kind: 'engine', label: engine?.label ?? key, level: previous?.level === 'malicious' ? 'malicious' : evidence.level });
    const onResolvedIp = reversed !== null && engine !== undefined && !engine.types.includes(result.type);
    addEdge({ source: id, target: onResolvedIp ? ipId : observableId, relation: 'flags', level: evidence.level, note: `${evidence.level}: ${evidence.reason}` });
  }

  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

function answeredKeys(result: ObservableResult): string[] {
  return engineKeys(result).filter((key) => result.errors?.[key] === undefined);
}

/**
 * Each engine's malicious or suspicious evidence, most severe first: the same rule as the verdict
 * (src/verdict/verdict.ts): failed engines and engines that do not apply to the type say nothing.
 */
function flags(result: ObservableResult, catalog: Catalog): { key: string; evidence: Evidence & { level: Flag } }[] {
  const found: { key: string; evidence: Evidence & { level: Flag } }[] = [];
  for (const key of answeredKeys(result)) {
    const evidence = evidenceOf(result, key, catalog);
    if (evidence && evidence.level !== 'clean') found.push({ key, evidence: evidence as Evidence & { level: Flag } });
  }
  return found.sort((a, b) => (a.evidence.level === b.evidence.level ? 0 : a.evidence.level === 'malicious' ? -1 : 1));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A text worth showing: not empty, not the engines' "Unknown". */
function known(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text !== '' && text !== 'Unknown' ? text : null;
}

/** The ASN (digits) and owner an engine's result names, by the engine's service (shapes in engines/*.ts). */
export function asnOf(service: string, value: unknown): { asn: string; org: string | null; listed: boolean } | null {
  if (!isObject(value)) return null;
  const make = (asn: unknown, org: unknown, listed = false) => {
    const digits = normalizeAsn(asn);
    return digits === null ? null : { asn: digits, org: known(org), listed };
  };
  switch (service) {
    case 'ipapi': // { asn: { asn: "AS13335" | "Unknown", org } }
      return isObject(value.asn) ? make(value.asn.asn, value.asn.org) : null;
    case 'ipinfo': {
      // { asn: "AS15169 Google LLC" | "Unknown" | "BOGON" }
      const text = known(value.asn);
      const match = text ? /^(AS\d+)\s*(.*)$/i.exec(text) : null;
      return match ? make(match[1], match[2]) : null;
    }
    case 'ipquery': // { asn: "AS13335" | null, isp }
      return make(value.asn, value.isp);
    case 'webscout': // { asn: "AS13335" | "Unknown", as_org }
      return make(value.asn, value.as_org);
    case 'shodan': // { asn: "AS13335" | null, org }
      return make(value.asn, value.org);
    case 'criminalip': {
      // { whois: { data: [{ as_no, as_name }] } }
      const first = isObject(value.whois) && Array.isArray(value.whois.data) ? value.whois.data[0] : undefined;
      return isObject(first) ? make(first.as_no, first.as_name) : null;
    }
    case 'bad_asn': // { status, asn: "203999", asn_org_name? }
      return make(value.asn, value.asn_org_name, value.status === 'malicious' || value.status === 'potentially_legitimate');
    default:
      return null;
  }
}
