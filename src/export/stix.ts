/**
 * STIX 2.1: a bundle with an `identity` for oas; per observable its cyber-observable object (with
 * the deterministic id of the spec, section 2.9), a `note` with its verdict, reasons and engine
 * summaries, and for a malicious or suspicious one an `indicator` (a STIX pattern) `based-on` the
 * observable. Browser extension ids have no STIX cyber-observable type: they are left out.
 * Written one object at a time; every text is plain (no HTML) and comes from the results, which
 * hold no secret.
 */
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import { chunked, clip, engineLines, isoMillis, judged, plainText, type ExportSource, type Judged } from './common.js';
import { tlpMarkingDefinition } from './marking.js';
import { canonicalJson, OAS_NAMESPACE, STIX_NAMESPACE, uuidv5 } from './uuid.js';

type StixObject = Record<string, unknown> & { type: string; id: string };

/** oas as the creator of the objects (a fixed id and date: the same identity in every bundle). */
export const OAS_IDENTITY: StixObject = {
  type: 'identity',
  spec_version: '2.1',
  id: `identity--${uuidv5(OAS_NAMESPACE, 'identity:oas')}`,
  created: '2025-01-01T00:00:00.000Z',
  modified: '2025-01-01T00:00:00.000Z',
  name: 'oas',
  description: 'Observable Analysis Service: enrichment of observables from intelligence and network sources.',
  identity_class: 'system',
};

const HASH_NAMES: Partial<Record<string, string>> = { MD5: 'MD5', SHA1: 'SHA-1', SHA256: 'SHA-256' };
const VALUE_TYPES: Partial<Record<string, string>> = { FQDN: 'domain-name', IPv4: 'ipv4-addr', IPv6: 'ipv6-addr', URL: 'url', Email: 'email-addr' };
/** Longest note content and indicator description. */
const TEXT_MAX = 8000;

/**
 * The cyber-observable object of an observable and the STIX pattern matching it; undefined for a
 * type STIX has no object for (browser extension ids).
 */
export function stixObservable(result: Pick<ObservableResult, 'observable' | 'type'>): { sco: StixObject; pattern: string } | undefined {
  const hash = HASH_NAMES[result.type];
  if (hash) {
    // Hex digests: the same file whatever the case it was written in.
    const contributing = { hashes: { [hash]: result.observable.toLowerCase() } };
    return {
      sco: { type: 'file', spec_version: '2.1', id: `file--${uuidv5(STIX_NAMESPACE, canonicalJson(contributing))}`, ...contributing },
      pattern: `[file:hashes.${patternString(hash)} = ${patternString(result.observable.toLowerCase())}]`,
    };
  }
  const type = VALUE_TYPES[result.type];
  if (!type) return undefined;
  const contributing = { value: result.observable };
  return {
    sco: { type, spec_version: '2.1', id: `${type}--${uuidv5(STIX_NAMESPACE, canonicalJson(contributing))}`, ...contributing },
    pattern: `[${type}:value = ${patternString(result.observable)}]`,
  };
}

/** A STIX patterning string literal: quoted, with `\` and `'` escaped. */
function patternString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The objects of one observable, after the identity. */
export function stixObjects(item: Judged, catalog: Catalog, analysis: { id: string; created: string; modified: string }): StixObject[] {
  const { result, verdict, reasons } = item;
  const observable = stixObservable(result);
  if (!observable) return [];
  const { sco, pattern } = observable;
  const objects: StixObject[] = [sco];
  const common = { spec_version: '2.1', created: analysis.modified, modified: analysis.modified, created_by_ref: OAS_IDENTITY.id };
  const key = `${analysis.id}:${sco.id}`;
  const reasonText = reasons.map(plainText);
  if (verdict === 'malicious' || verdict === 'suspicious') {
    const indicatorId = `indicator--${uuidv5(OAS_NAMESPACE, `indicator:${key}`)}`;
    objects.push({
      type: 'indicator',
      id: indicatorId,
      ...common,
      name: clip(`${verdict}: ${plainText(result.observable)}`, 250),
      description: clip(`oas verdict: ${verdict}. ${reasonText.join('; ')}`, TEXT_MAX),
      indicator_types: [verdict === 'malicious' ? 'malicious-activity' : 'anomalous-activity'],
      pattern,
      pattern_type: 'stix',
      pattern_version: '2.1',
      valid_from: analysis.created,
      labels: [`oas-verdict-${verdict}`],
    });
    objects.push({
      type: 'relationship',
      id: `relationship--${uuidv5(OAS_NAMESPACE, `relationship:${key}`)}`,
      ...common,
      relationship_type: 'based-on',
      source_ref: indicatorId,
      target_ref: sco.id,
    });
  }
  const lines = [`Verdict: ${verdict}`];
  lines.push(...(reasonText.length > 0 ? ['Reasons:', ...reasonText.map((r) => `- ${r}`)] : ['Reasons: no engine that judges this observable answered.']));
  if (result.found_in?.length) lines.push('Found in:', ...result.found_in.map((place) => `- ${plainText(place)}`));
  const engines = engineLines(result, catalog);
  if (engines.length > 0) lines.push('Engines:', ...engines.map((e) => `- ${e.engine}: ${plainText(e.summary)}`));
  objects.push({
    type: 'note',
    id: `note--${uuidv5(OAS_NAMESPACE, `note:${key}`)}`,
    ...common,
    abstract: clip(`oas verdict: ${verdict} (${plainText(result.observable)})`, 250),
    content: clip(lines.join('\n'), TEXT_MAX),
    authors: ['oas'],
    object_refs: [sco.id],
  });
  return objects;
}

/**
 * The STIX bundle (indented JSON), one object at a time. A marked analysis's bundle holds the TLP
 * 2.0 marking definition of its level, named in the `object_marking_refs` of every object but
 * oas's identity (the same in every bundle) and the definition itself.
 */
export function stixChunks(source: ExportSource, catalog: Catalog): AsyncGenerator<string> {
  const created = isoMillis(source.created_at, new Date().toISOString());
  const analysis = { id: source.id, created, modified: isoMillis(source.finished_at, created) };
  const definition = source.marking ? tlpMarkingDefinition(source.marking.tlp) : undefined;
  const marked = definition ? { object_marking_refs: [definition.id] } : {};
  const object = (o: StixObject) => `,\n    ${JSON.stringify(o, null, 2).replace(/\n/g, '\n    ')}`;
  return chunked((async function* () {
    yield `{\n  "type": "bundle",\n  "id": "bundle--${uuidv5(OAS_NAMESPACE, `bundle:${source.id}`)}",\n  "objects": [\n    ${JSON.stringify(OAS_IDENTITY, null, 2).replace(/\n/g, '\n    ')}`;
    if (definition) yield object(definition);
    for await (const item of judged(source, catalog)) {
      for (const o of stixObjects(item, catalog, analysis)) yield object({ ...o, ...marked });
    }
    yield '\n  ]\n}\n';
  })());
}
