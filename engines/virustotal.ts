/**
 * provider_24 (`virustotal`) — VirusTotal's multi-engine verdict on an IP, a domain, a URL or a
 * file hash (engines.md 5.29), from the v3 API with the key in the `x-apikey` header.
 *
 * | type       | API path                   | GUI link                                |
 * |------------|----------------------------|-----------------------------------------|
 * | IPv4/IPv6  | `/ip_addresses/<ip>`       | `/gui/ip-address/<ip>/detection`        |
 * | FQDN       | `/domains/<fqdn>`          | `/gui/domain/<fqdn>/detection`          |
 * | URL        | `/urls/<id>`               | `/gui/url/<id>/detection`               |
 * | hashes     | `/files/<hash>`            | `/gui/file/<hash>/detection`            |
 *
 * A URL's id is the unpadded base64url of the URL as written (VirusTotal's documented URL id).
 *
 * Result as the reference's — `detection_ratio` ("<malicious>/<sum of every last_analysis_stats
 * bucket>", the reference's denominator, type-unsupported/failure/timeout buckets included),
 * `total_malicious`, `link` (the GUI page, never carrying the key) and `community_score`
 * (`reputation`, 0 when absent) — plus `total_suspicious` (the `suspicious` bucket).
 *
 * Differences from the reference (engines.md 1.9, 8 items 3 and 19):
 * - Only a 404 carrying VirusTotal's `NotFoundError` is "not found" (`null`). A bad or missing
 *   key (401/403), the quota (429, retried as the client does), 5xx and an answer without
 *   `data.attributes` are errors, not `null`; 401/403 name VirusTotal's error code, redacted.
 * - An answer is read leniently (issue 26): only `data.attributes` is needed. A missing or null
 *   `last_analysis_stats` is "0/0" and a missing, null or "" `reputation` 0, as in the
 *   reference; a stat bucket sent as null or "" counts 0 and one sent as text its number (the
 *   reference failed summing them).
 * - A domain is looked up lower-cased and without a trailing dot (the shared host parser).
 * - The key is never sent empty: the runner refuses to call the engine without one.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { num } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { oneLine } from '../src/lookup/wording.js';
import { hostOf } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const GUI = 'https://www.virustotal.com/gui';

/**
 * The object's answer. Needed: `data.attributes` (without it the answer is about nothing).
 * Read when present: `last_analysis_stats` (absent or null: no engine; a bucket null or "" is 0,
 * a count sent as text is its number) and `reputation` (absent, null or "": 0).
 */
const ObjectSchema = jsonObject({
  data: jsonObject({
    attributes: jsonObject({
      last_analysis_stats: v.nullish(v.record(v.string(), num())),
      reputation: num(),
    }, 'expected the object\'s attributes'),
  }, 'expected the object in data'),
});

/** VirusTotal's error body: `{"error": {"code": "NotFoundError", "message": "..."}}`. */
const ErrorSchema = v.looseObject({
  error: v.looseObject({ code: v.string(), message: v.nullish(v.string()) }),
});

export interface VirusTotalResult {
  /** `<malicious>/<engines in last_analysis_stats>`, e.g. "5/94". */
  detection_ratio: string;
  total_malicious: number;
  /** Engines that flagged the object as suspicious (not in the reference). */
  total_suspicious: number;
  /** The object's page in VirusTotal's web interface. */
  link: string;
  /** VirusTotal's community reputation (`attributes.reputation`), 0 when absent. */
  community_score: number;
}

/** API collection and GUI kind of an object, with its id; null when the observable has none. */
export function virusTotalTarget(observable: Observable): { collection: string; gui: string; id: string } | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
      return { collection: 'ip_addresses', gui: 'ip-address', id: observable.value };
    case 'FQDN': {
      const host = hostOf(observable);
      return host ? { collection: 'domains', gui: 'domain', id: host } : null;
    }
    case 'URL':
      return { collection: 'urls', gui: 'url', id: urlId(observable.value) };
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return { collection: 'files', gui: 'file', id: observable.value };
    default:
      return null;
  }
}

/** VirusTotal's URL identifier: the URL in base64url without `=` padding. */
export function urlId(url: string): string {
  return Buffer.from(url, 'utf8').toString('base64url');
}

export async function virusTotalLookup(observable: Observable, ctx: EngineContext): Promise<VirusTotalResult | null> {
  const target = virusTotalTarget(observable);
  if (!target) return null;
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const response = await ctx.http.request(`${base}/${target.collection}/${encodeURIComponent(target.id)}`, {
    headers: { 'x-apikey': String(ctx.settings.api_key ?? ''), accept: 'application/json' },
    acceptStatus: [401, 403, 404],
  });
  if (response.status === 401 || response.status === 403 || response.status === 404) {
    const code = errorCode(response.text());
    if (response.status === 404 && code === 'NotFoundError') return null;
    // Anything else on 404 (a wrong base_url, a proxy's page) is a failure, not "not found".
    throw statusError(response.status, code ? ctx.http.redact(code) : undefined);
  }
  const { attributes } = parseJson(response.text(), ObjectSchema).data;
  const stats = attributes.last_analysis_stats ?? {};
  const malicious = stats.malicious ?? 0;
  const engines = Object.values(stats).reduce((sum, n) => sum + n, 0);
  return {
    detection_ratio: `${malicious}/${engines}`,
    total_malicious: malicious,
    total_suspicious: stats.suspicious ?? 0,
    link: `${GUI}/${target.gui}/${target.id}/detection`,
    community_score: attributes.reputation,
  };
}

/** VirusTotal's error code (`WrongCredentialsError`, `NotFoundError`...) from an error body, if it is one. */
function errorCode(text: string): string | undefined {
  try {
    return oneLine(parseJson(text, ErrorSchema).error.code, 80);
  } catch {
    return undefined;
  }
}

/** `5/94 malicious, 1 suspicious · reputation -12`. */
function summary(result: VirusTotalResult): string {
  const suspicious = result.total_suspicious > 0 ? `, ${result.total_suspicious} suspicious` : '';
  return `${result.detection_ratio} malicious${suspicious} · reputation ${result.community_score}`;
}

/**
 * Rule: ≥ 3 engines say malicious -> malicious; 1–2 malicious (or ≥ 2 suspicious) -> suspicious,
 * as one or two detections are often false positives; 0 of N -> clean; no analysis -> nothing.
 */
export function virusTotalEvidence(result: VirusTotalResult | null): Evidence | undefined {
  // null: VirusTotal has never seen the object, which says nothing about it.
  if (!result || typeof result.total_malicious !== 'number') return undefined;
  const engines = Number(/^\d+\/(\d+)$/.exec(String(result.detection_ratio))?.[1] ?? Number.NaN);
  if (!(engines > 0)) return undefined; // no engine analysed it
  const malicious = result.total_malicious;
  const suspicious = typeof result.total_suspicious === 'number' ? result.total_suspicious : 0;
  const reason = `${malicious}/${engines} engines flag it${suspicious > 0 ? `, ${suspicious} suspicious` : ''}`;
  if (malicious >= 3) return { level: 'malicious', reason };
  if (malicious >= 1 || suspicious >= 2) return { level: 'suspicious', reason };
  return { level: 'clean', reason };
}

/** The card: detection ratio, suspicious verdicts, community score, the object's VirusTotal page. */
export function virusTotalDetails(result: VirusTotalResult): DetailField[] {
  return fields(
    field('Detection ratio', result.detection_ratio),
    field('Suspicious', result.total_suspicious),
    field('Community score', result.community_score),
    sourceLink('Open in VirusTotal', result.link),
  );
}

export default defineEngine<VirusTotalResult>({
  id: 'provider_24',
  service: 'virustotal',
  label: 'VirusTotal',
  description: 'VirusTotal detection ratio and community reputation of a file hash, IP, domain or URL',
  tags: ['hash', 'risk', 'IP', 'domain', 'URL'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['VIRUSTOTAL'] }],
  defaults: {
    timeout_ms: 10000,
    base_url: 'https://www.virustotal.com/api/v3',
    // VirusTotal's public (free) API: 4 lookups/min, 500/day, 15.5 K/month
    // (docs.virustotal.com, "Public vs Premium API"). The per-minute limit binds first.
    rate_limit: 4,
    rate_window_ms: 60_000,
  },
  summary,
  evidence: virusTotalEvidence,
  details: virusTotalDetails,
  run: virusTotalLookup,
});
