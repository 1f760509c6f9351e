/**
 * MISP's attribute types as oas's observable types (issue 39, misp-modules): which MISP types a
 * module takes, and the observables a MISP attribute's value holds.
 *
 * A composite type (`domain|ip`, `ip-dst|port`, `filename|sha256`...) is split at its last `|`,
 * each part read for what MISP says it is; a part oas does not analyse (a port, a file name) is
 * left out. A part is read as oas reads a pasted one (refanged, typed: src/observables/extract.ts)
 * and kept only when it is what the attribute's type says: an `ip-dst` that holds a domain holds
 * nothing oas analyses here.
 */
import { extractObservables } from '../observables/extract.js';
import type { Observable, ObservableType } from '../observables/types.js';
import { clip } from '../export/common.js';

/** What one part of a MISP value is, as oas's types; null for a part oas does not analyse. */
type Part = readonly ObservableType[] | null;

const IP: Part = ['IPv4', 'IPv6'];
const HOST: Part = ['FQDN'];
const URL_PART: Part = ['URL'];
const EMAIL: Part = ['Email'];

/**
 * Each MISP attribute type oas reads (MISP's own names, app/Model/MispAttribute.php), with what
 * each of its `|`-separated parts is. `link` is a URL too; `uri` (a path) is not read.
 */
export const MISP_TYPES: Readonly<Record<string, readonly Part[]>> = {
  'ip-src': [IP],
  'ip-dst': [IP],
  'ip-src|port': [IP, null],
  'ip-dst|port': [IP, null],
  domain: [HOST],
  hostname: [HOST],
  'domain|ip': [HOST, IP],
  'hostname|port': [HOST, null],
  url: [URL_PART],
  link: [URL_PART],
  md5: [['MD5']],
  sha1: [['SHA1']],
  sha256: [['SHA256']],
  'filename|md5': [null, ['MD5']],
  'filename|sha1': [null, ['SHA1']],
  'filename|sha256': [null, ['SHA256']],
  email: [EMAIL],
  'email-src': [EMAIL],
  'email-dst': [EMAIL],
  'chrome-extension-id': [['CHROME_EXTENSION']],
};

/** Longest attribute value read (a URL may be long; MISP's values are at most 131 072 bytes). */
const MAX_VALUE_CHARS = 8192;

/** The MISP types of which some part is of a type `accepts` takes, in MISP_TYPES' order. */
export function mispTypesFor(accepts: (type: ObservableType) => boolean): string[] {
  return Object.entries(MISP_TYPES)
    .filter(([, parts]) => parts.some((part) => part?.some(accepts)))
    .map(([name]) => name);
}

/**
 * The observables of a MISP attribute (`type`, `value`) that `accepts` takes; a string saying why
 * when there is none (an unknown type is the caller's to refuse first).
 */
export function observablesOf(type: string, value: string, accepts: (type: ObservableType) => boolean): Observable[] | string {
  const parts = MISP_TYPES[type];
  if (!parts) return `oas reads no MISP attribute of type "${type}"`;
  if (value.length > MAX_VALUE_CHARS) return `the ${type} attribute's value is longer than ${MAX_VALUE_CHARS} characters`;
  const split = parts.length === 1 ? [value] : splitLast(value);
  if (split.length !== parts.length) return `a ${type} attribute's value is two values separated by "|"`;
  const found: Observable[] = [];
  parts.forEach((part, index) => {
    const wanted = part?.filter(accepts);
    if (!wanted?.length) return;
    const text = split[index]!.trim();
    const candidates = extractObservables(text).filter((observable) => wanted.includes(observable.type));
    const same = candidates.find((observable) => observable.value.toLowerCase() === text.toLowerCase());
    const observable = same ?? candidates[0];
    if (observable) found.push({ value: observable.value, type: observable.type });
  });
  if (found.length > 0) return found;
  return `the ${type} attribute ${JSON.stringify(clip(value, 200))} holds no ${describe(parts, accepts)} oas can analyse`;
}

/** `a|b|c` as `a|b` and `c`: a file name may hold a `|`, a hash, address or port never does. */
function splitLast(value: string): string[] {
  const at = value.lastIndexOf('|');
  return at < 0 ? [value] : [value.slice(0, at), value.slice(at + 1)];
}

/** What the parts that `accepts` takes are, in words: "IPv4 or IPv6 address", "domain"... */
function describe(parts: readonly Part[], accepts: (type: ObservableType) => boolean): string {
  const words: Record<ObservableType, string> = {
    IPv4: 'IPv4 address', IPv6: 'IPv6 address', FQDN: 'domain', URL: 'URL', MD5: 'MD5 hash', SHA1: 'SHA1 hash',
    SHA256: 'SHA256 hash', Email: 'e-mail address', CHROME_EXTENSION: 'browser extension id',
  };
  const types = parts.flatMap((part) => part?.filter(accepts) ?? []);
  return [...new Set(types.map((t) => words[t]))].join(' or ') || 'observable';
}
