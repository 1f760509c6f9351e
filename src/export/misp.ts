/**
 * MISP: one event in MISP's JSON format (the MISP core format), importable as it is ("Add
 * event" > "Import from MISP JSON", or POST /events/add): one attribute per observable, with its
 * type and category, `to_ids` only for a malicious one, the verdict and its reasons in `comment`
 * and as a tag. The event is not published and is shared with the importing organisation only
 * (distribution "0"): widening it is the analyst's call. Written one attribute at a time.
 *
 * A domain that is its own registrable domain is a `domain`, a longer host name a `hostname`. A
 * URL gives one `url` attribute and no `hostname` for its host: a malicious page on a shared host
 * (a cloud drive, a pastebin) must not flag the whole host for detection.
 */
import type { Catalog } from '../engine/catalog.js';
import { isRegistrableDomain } from '../observables/host.js';
import type { ObservableResult } from '../runner/result.js';
import { worse, type Verdict } from '../verdict/verdict.js';
import { chunked, clip, isoMillis, judged, plainText, type ExportSource, type Judged } from './common.js';
import { OAS_NAMESPACE, uuidv5 } from './uuid.js';
import { mispMarkingTags } from './marking.js';

/** MISP's threat levels: 1 High, 2 Medium, 3 Low, 4 Undefined. */
const THREAT_LEVEL: Record<Verdict, string> = { malicious: '1', suspicious: '2', clean: '3', unknown: '4' };
/** Longest comment (MISP keeps up to 65535 bytes). */
const COMMENT_MAX = 4000;

/** The MISP attribute type and category of an observable. */
export function mispType(result: Pick<ObservableResult, 'observable' | 'type'>): { type: string; category: string } {
  switch (result.type) {
    case 'IPv4':
    case 'IPv6':
      return { type: 'ip-dst', category: 'Network activity' };
    case 'FQDN':
      return { type: isRegistrableDomain(result.observable) ? 'domain' : 'hostname', category: 'Network activity' };
    case 'URL':
      return { type: 'url', category: 'Network activity' };
    case 'MD5':
      return { type: 'md5', category: 'Payload delivery' };
    case 'SHA1':
      return { type: 'sha1', category: 'Payload delivery' };
    case 'SHA256':
      return { type: 'sha256', category: 'Payload delivery' };
    case 'Email':
      return { type: 'email-src', category: 'Payload delivery' };
    case 'CHROME_EXTENSION':
      return { type: 'chrome-extension-id', category: 'Payload delivery' };
    default:
      return { type: 'text', category: 'Other' };
  }
}

/** The attribute of one observable. */
export function mispAttribute(item: Judged, eventId: string, timestamp: string): Record<string, unknown> {
  const { result, verdict, reasons } = item;
  const { type, category } = mispType(result);
  const value = type === 'md5' || type === 'sha1' || type === 'sha256' ? result.observable.toLowerCase() : result.observable;
  const why = reasons.length > 0 ? reasons.map(plainText).join('; ') : 'no engine that judges this observable answered';
  return {
    uuid: uuidv5(OAS_NAMESPACE, `misp-attribute:${eventId}:${type}:${value}`),
    type,
    category,
    value,
    to_ids: verdict === 'malicious',
    comment: clip(`oas verdict: ${verdict}. ${why}${result.found_in?.length ? ` Found in: ${result.found_in.map(plainText).join('; ')}.` : ''}`, COMMENT_MAX),
    distribution: '5',
    sharing_group_id: '0',
    timestamp,
    deleted: false,
    disable_correlation: false,
    Tag: [{ name: `oas:verdict="${verdict}"` }],
  };
}

/** The MISP event (indented JSON): its attributes one at a time, then the fields that sum them up. */
export function mispChunks(source: ExportSource, catalog: Catalog): AsyncGenerator<string> {
  const finished = isoMillis(source.finished_at, isoMillis(source.created_at, new Date().toISOString()));
  const timestamp = String(Math.floor(Date.parse(finished) / 1000));
  return chunked((async function* () {
    yield '{\n  "Event": {\n    "Attribute": [';
    const counts: Record<Verdict, number> = { malicious: 0, suspicious: 0, clean: 0, unknown: 0 };
    let worst: Verdict = 'unknown';
    let first = true;
    for await (const item of judged(source, catalog)) {
      counts[item.verdict]++;
      worst = worse(worst, item.verdict);
      const attribute = JSON.stringify(mispAttribute(item, source.id, timestamp), null, 2).replace(/\n/g, '\n      ');
      yield `${first ? '' : ','}\n      ${attribute}`;
      first = false;
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const flagged = [counts.malicious && `${counts.malicious} malicious`, counts.suspicious && `${counts.suspicious} suspicious`].filter(Boolean).join(', ');
    const header = {
      uuid: uuidv5(OAS_NAMESPACE, `misp-event:${source.id}`),
      info: clip(`oas analysis ${source.id}: ${total} observable(s)${flagged ? `, ${flagged}` : ''}`, 256),
      date: isoMillis(source.created_at, finished).slice(0, 10),
      threat_level_id: THREAT_LEVEL[worst],
      analysis: '2',
      distribution: '0',
      sharing_group_id: '0',
      published: false,
      timestamp,
      publish_timestamp: '0',
      attribute_count: String(total),
      // The analysis's TLP and PAP as the taxonomies' tags; the event stays for your organisation only.
      Tag: [{ name: 'oas' }, ...(source.marking ? mispMarkingTags(source.marking) : [])],
    };
    const fields = JSON.stringify(header, null, 2).slice(1, -2).replace(/\n/g, '\n  ');
    yield `${first ? '' : '\n    '}],${fields}\n  }\n}\n`;
  })());
}
