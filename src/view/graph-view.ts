/**
 * The graph view's part of one observable (`ObservableView.graph`): nodes for the observable, the
 * IP it resolves to, the ASNs the network engines name for it, and the engines whose evidence
 * flags it (malicious or suspicious), with the edges between them. Node ids are stable across
 * observables (`ip:8.8.8.8`, `asn:15169`, `engine:<key>`), so the page draws one graph by
 * merging the parts of the observables it shows (web/src/results-graph.ts).
 */
import { normalizeAsn } from '../badasn/lists.js';
import type { Catalog } from '../engine/catalog.js';
import type { EngineAsn, EngineDefinition } from '../engine/contract.js';
import { engineKeys } from '../analysis/rows.js';
import type { ObservableResult } from '../runner/result.js';
import type { Evidence } from '../engine/contract.js';
import { evidenceByKey, verdictFrom } from '../verdict/verdict.js';
import type { GraphEdgeView, GraphNodeView, ObservableGraphView, VerdictName } from './types.js';

type Flag = Exclude<Evidence['level'], 'clean'>;

const IP_TYPES = new Set(['IPv4', 'IPv6']);

/** The node id of an observable: IPs share theirs with the same address reached by resolution. */
function observableNodeId(value: string, type: string): string {
  return IP_TYPES.has(type) ? `ip:${value}` : `obs:${value}`;
}

/**
 * `judged`: the observable's verdict and each engine's evidence (src/verdict/verdict.ts), when the
 * caller has them already.
 */
export function observableGraph(
  result: ObservableResult,
  catalog: Catalog,
  judged?: { verdict: VerdictName; evidence: ReadonlyMap<string, Evidence> },
): ObservableGraphView {
  const evidence = judged?.evidence ?? evidenceByKey(result, catalog);
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
    verdict: judged?.verdict ?? verdictFrom(evidence).verdict,
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
  for (const key of engineKeys(result)) {
    if (result.errors?.[key] !== undefined) continue;
    const found = asnOf(catalog.find(key), result[key]);
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
  for (const { key, level, reason } of flags(evidence)) {
    const engine = catalog.find(key);
    const id = `engine:${key}`;
    const previous = nodes.get(id);
    nodes.set(id, { id, kind: 'engine', label: engine?.label ?? key, level: previous?.level === 'malicious' ? 'malicious' : level });
    const onResolvedIp = reversed !== null && engine !== undefined && !engine.types.includes(result.type);
    addEdge({ source: id, target: onResolvedIp ? ipId : observableId, relation: 'flags', level, note: `${level}: ${reason}` });
  }

  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

/**
 * The engines whose evidence is malicious or suspicious, most severe first (failed engines and
 * engines that do not apply said nothing: see `evidenceOf`).
 */
function flags(evidence: ReadonlyMap<string, Evidence>): { key: string; level: Flag; reason: string }[] {
  const found: { key: string; level: Flag; reason: string }[] = [];
  for (const [key, { level, reason }] of evidence) if (level !== 'clean') found.push({ key, level, reason });
  return found.sort((a, b) => (a.level === b.level ? 0 : a.level === 'malicious' ? -1 : 1));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A text worth showing: not empty, not the engines' "Unknown". */
function known(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  return text !== '' && text !== 'Unknown' ? text : null;
}

/**
 * The ASN (digits) and owner an engine's result names, from the engine's own reading of its
 * answer (its `asn` declaration); null when it names none or has no such declaration.
 */
export function asnOf(engine: Pick<EngineDefinition, 'asn'> | undefined, value: unknown): { asn: string; org: string | null; listed: boolean } | null {
  if (!engine?.asn || !isObject(value)) return null;
  let named: EngineAsn | undefined;
  try {
    named = engine.asn(value);
  } catch {
    return null; // an answer the reading does not fit names nothing
  }
  const digits = normalizeAsn(named?.asn);
  return digits === null ? null : { asn: digits, org: known(named?.org), listed: named?.listed === true };
}
