/**
 * Name-based UUIDs (RFC 4122 version 5: SHA-1 of a namespace and a name), for the ids the STIX
 * 2.1 spec makes deterministic and for stable ids in the other exports: exporting the same
 * analysis twice gives the same ids, so a platform importing both merges them.
 */
import { createHash } from 'node:crypto';

/** The namespace the STIX 2.1 spec (section 2.9) gives for cyber-observable ids. */
export const STIX_NAMESPACE = '00abedb4-aa42-466c-9c01-fed23315a9b7';
/** oas's own namespace, for the ids of what oas itself describes (bundles, indicators, MISP uuids). */
export const OAS_NAMESPACE = '02efb1e3-c160-43bd-912c-af72834df1e3';

export function uuidv5(namespace: string, name: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * RFC 8785 (JSON Canonicalization Scheme) for the values ids are made of: objects with keys in
 * code-unit order, strings and numbers as JSON.stringify writes them (which is what JCS specifies).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
