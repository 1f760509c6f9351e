/**
 * safe_browsing (google_safe_browsing) — whether Google Safe Browsing lists the observable
 * (engines.md 5.11, the reference's current v5 request): `GET {base_url}/urls:search?key=<api_key>&urls=<url>`
 * where the URL is the observable itself, or `http://<domain or IP>` for a domain or an address.
 *
 * Result (the reference's HEAD shape):
 * - listed: `{"threat_found": "Threat found", "details": [{url, threatTypes}, ...as received],
 *   "threat_types": [sorted distinct threat types]}`;
 * - not listed (the documented empty result): `{"threat_found": "No threat found", "details": null,
 *   "threat_types": []}`.
 *
 * Google answers JSON by default; a protobuf answer (`application/x-protobuf`, which the reference
 * also decodes) is read too.
 *
 * Better than the reference:
 * - Bug fixed: an IPv6 address is bracketed in its lookup URL (`http://[2001:db8::1]`); the
 *   reference sent `http://2001:db8::1`, which is not a URL.
 * - HTTP errors (bad key, quota, 5xx), timeouts and malformed answers are reported with Google's
 *   reason instead of becoming null; 429/5xx are retried honouring Retry-After.
 * - Nothing in the answer is needed but its being a JSON object (issue 26): `threats` absent,
 *   null or `{}` is "not listed"; one threat in place of a list, or one threat type in place of
 *   `threatTypes`, is read as a list of it, null entries are dropped. A listed URL is listed
 *   whatever it leaves out: without `threatTypes` its types are `[]`, and without `url` its
 *   `url` in `details` is the URL asked about (details are otherwise as received).
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject } from '../src/http/client.js';
import { BadResponseError } from '../src/http/errors.js';
import { list, text } from '../src/http/lenient.js';
import type { Observable } from '../src/observables/types.js';
import { googleJson, googleRequest } from '../src/http/google.js';
import { field, fields as cardFields, sourceLink } from '../src/lookup/fields.js';

/**
 * One listed URL as Safe Browsing reports it; extra members are kept as received. Read when
 * present: `url` (absent or null: the URL asked about, filled in by the lookup; `""` kept as
 * sent, issue 32) and `threatTypes` (absent or null: `[]`, one type alone: a list of it).
 */
const ThreatUrlSchema = v.looseObject({
  url: text(),
  threatTypes: list(v.string('expected a threat type')),
});

/** `SearchUrlsResponse`: `threats` absent, null, `{}` or empty when nothing is listed. */
const SearchUrlsSchema = jsonObject({
  threats: list(ThreatUrlSchema),
  cacheDuration: text(),
});

export interface ThreatUrl {
  url: string;
  /** MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE, POTENTIALLY_HARMFUL_APPLICATION... */
  threatTypes: string[];
  [field: string]: unknown;
}

export interface SafeBrowsingResult {
  threat_found: 'Threat found' | 'No threat found';
  /** The listed URLs as received, or null when nothing is listed. */
  details: ThreatUrl[] | null;
  /** Distinct threat types of all listed URLs, sorted. */
  threat_types: string[];
}

/** The URL Safe Browsing is asked about: a URL as is, a host as `http://<host>`. */
export function lookupUrl(observable: Observable): string | null {
  switch (observable.type) {
    case 'URL':
      return observable.value;
    case 'FQDN':
    case 'IPv4':
      return `http://${observable.value}`;
    case 'IPv6':
      // Bug fixed: the reference sent `http://2001:db8::1`; a URL needs the literal in brackets.
      return `http://[${observable.value.replace(/^\[|\]$/g, '')}]`;
    default:
      return null;
  }
}

export async function safeBrowsingLookup(observable: Observable, ctx: EngineContext): Promise<SafeBrowsingResult | null> {
  const url = lookupUrl(observable);
  if (url === null) return null;
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const response = await googleRequest(ctx, `${base}/urls:search`, { key: String(ctx.settings.api_key ?? ''), urls: url });
  const threats = /^application\/(x-)?protobuf/i.test(response.headers['content-type'] ?? '')
    ? decodeSearchUrlsResponse(response.body)
    : googleJson(ctx, response.text(), SearchUrlsSchema).threats.map((threat) => ({ ...threat, url: threat.url ?? url }));
  if (threats.length === 0) return { threat_found: 'No threat found', details: null, threat_types: [] };
  const types = [...new Set(threats.flatMap((threat) => threat.threatTypes))].sort();
  return { threat_found: 'Threat found', details: threats, threat_types: types };
}

// ---------------------------------------------------------------------------------------------
// Protobuf form of SearchUrlsResponse: field 1 = repeated ThreatUrl {1: url, 2: repeated
// ThreatType (packed or not)}, field 2 = cacheDuration (ignored).
// ---------------------------------------------------------------------------------------------

/** ThreatType enum of the v5 API. */
const THREAT_TYPES: Record<number, string> = {
  0: 'THREAT_TYPE_UNSPECIFIED',
  1: 'MALWARE',
  2: 'SOCIAL_ENGINEERING',
  3: 'UNWANTED_SOFTWARE',
  4: 'POTENTIALLY_HARMFUL_APPLICATION',
};

type Field =
  | { number: number; wire: 0; value: number }
  | { number: number; wire: 2; bytes: Buffer }
  | { number: number; wire: 1 | 5 };

const MALFORMED = 'upstream answered with malformed protobuf';

export function decodeSearchUrlsResponse(body: Buffer): ThreatUrl[] {
  const threats: ThreatUrl[] = [];
  for (const field of fields(body)) {
    if (field.number === 1 && field.wire === 2) threats.push(decodeThreatUrl(field.bytes));
  }
  return threats;
}

function decodeThreatUrl(body: Buffer): ThreatUrl {
  let url = '';
  const threatTypes: string[] = [];
  for (const field of fields(body)) {
    if (field.number === 1 && field.wire === 2) url = field.bytes.toString('utf8');
    else if (field.number === 2 && field.wire === 0) threatTypes.push(threatTypeName(field.value));
    else if (field.number === 2 && field.wire === 2) {
      for (let pos = 0; pos < field.bytes.length;) {
        const [value, next] = varint(field.bytes, pos);
        threatTypes.push(threatTypeName(value));
        pos = next;
      }
    }
  }
  return { url, threatTypes };
}

function threatTypeName(value: number): string {
  return THREAT_TYPES[value] ?? `THREAT_TYPE_${value}`;
}

function* fields(body: Buffer): Generator<Field> {
  let pos = 0;
  while (pos < body.length) {
    const [key, afterKey] = varint(body, pos);
    const number = Math.floor(key / 8);
    const wire = key % 8;
    pos = afterKey;
    if (number === 0) throw new BadResponseError(MALFORMED);
    switch (wire) {
      case 0: {
        const [value, next] = varint(body, pos);
        pos = next;
        yield { number, wire, value };
        break;
      }
      case 1:
      case 5: {
        pos += wire === 1 ? 8 : 4;
        if (pos > body.length) throw new BadResponseError(MALFORMED);
        yield { number, wire };
        break;
      }
      case 2: {
        const [length, start] = varint(body, pos);
        if (start + length > body.length) throw new BadResponseError(MALFORMED);
        pos = start + length;
        yield { number, wire, bytes: body.subarray(start, pos) };
        break;
      }
      default:
        throw new BadResponseError(MALFORMED);
    }
  }
}

/** A base-128 varint at `pos`: its value and the position after it. */
function varint(body: Buffer, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < body.length && i < pos + 10; i++) {
    const byte = body[i]!;
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  throw new BadResponseError(MALFORMED);
}

/** `listed: MALWARE, SOCIAL_ENGINEERING` / `not listed`. */
export function safeBrowsingSummary(result: SafeBrowsingResult): string {
  return result.threat_found === 'Threat found' ? `listed: ${result.threat_types.join(', ') || 'unspecified threat'}` : 'not listed';
}

/** Rule: listed by Safe Browsing (malware, social engineering, unwanted software...) -> malicious; not listed -> clean. */
export function safeBrowsingEvidence(result: SafeBrowsingResult | null): Evidence | undefined {
  if (!result) return undefined;
  if (result.threat_found === 'No threat found') return { level: 'clean', reason: 'not listed' };
  if (result.threat_found !== 'Threat found') return undefined;
  return { level: 'malicious', reason: `listed: ${(result.threat_types ?? []).join(', ') || 'unspecified threat'}` };
}

/** Google's public Safe Browsing site status page. */
const SITE_STATUS = 'https://transparencyreport.google.com/safe-browsing/search?url=';

/**
 * The card: the verdict, the threat types, up to five listed URLs with their types (as text: they
 * are the dangerous pages, never made links), then Google's public site status page.
 */
export function safeBrowsingDetails(result: SafeBrowsingResult, target: string): DetailField[] {
  const listed = result.details ?? [];
  return cardFields(
    field('Status', result.threat_found),
    field('Threat types', result.threat_types),
    // A listed URL Google left empty is the one asked about.
    ...listed.slice(0, 5).map((threat) => field('Listed URL', threat.threatTypes.length > 0 ? `${threat.url || target} (${threat.threatTypes.join(', ')})` : threat.url || target)),
    listed.length > 5 ? field('More listed URLs', listed.length - 5) : null,
    sourceLink('Site status', SITE_STATUS + encodeURIComponent(target)),
  );
}

export default defineEngine<SafeBrowsingResult>({
  id: 'safe_browsing',
  service: 'google_safe_browsing',
  label: 'Safe Browsing',
  description: 'Whether Google Safe Browsing lists a URL, or a domain or IP as http://<host>, as malware, social engineering (phishing) or unwanted software',
  tags: ['risk', 'domain', 'IP'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['GOOGLE_SAFE_BROWSING'] }],
  defaults: {
    timeout_ms: 5000,
    // v5alpha1 is what the reference calls; the same request works on the GA path (…/v5).
    base_url: 'https://safebrowsing.googleapis.com/v5alpha1',
    // Safe Browsing is free, with a per-project quota shown in the Google Cloud console (default
    // 10,000 requests per day as Google allocates it on enabling the API); raise it if yours is higher.
    rate_limit: 10_000,
    rate_window_ms: 86_400_000,
  },
  summary: safeBrowsingSummary,
  evidence: safeBrowsingEvidence,
  details: safeBrowsingDetails,
  run: safeBrowsingLookup,
});
