/**
 * provider_20 (shodan) — open ports, services and tags of an IP address from Shodan's host API:
 * `GET {base_url}/shodan/host/{ip}?key=<api key>`.
 *
 * The result has engines.md 5.25's fields — `ports`, `tags`, `link` — plus what an analyst reads
 * next, from the same answer: `ip`, `hostnames`, `domains`, `org`, `isp`, `asn`, `os`,
 * `country_code`, `city`, `vulns`, `last_update` and `services` (port, transport, product and
 * version of each banner).
 *
 * Better than the reference:
 * - Bug fixed (engines.md section 8 item 19): no request is made without a key (the reference
 *   sent `?key=` empty).
 * - Only Shodan's "No information available for that IP." 404 is "not found" (null); any other
 *   HTTP error (bad key, plan, quota, 5xx, a wrong base_url's 404), a malformed answer or a
 *   timeout is reported, with Shodan's reason and the key masked, instead of becoming null.
 * - An answer is read leniently (issue 26): only a JSON object is needed. `ports` and `tags`
 *   absent or null are `[]`, as in the reference; so are the added lists. One value in place of
 *   a list is a list of it, null entries are skipped, `vulns` keyed by CVE id (as in banners)
 *   is read as its ids, an empty `error` is no error; a banner without a port is left out of
 *   `services`. A text Shodan sends is kept as sent, `""` included (issue 32).
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineAsn, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, numOrNull, text } from '../src/http/lenient.js';
import { UpstreamError } from '../src/http/errors.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError, upstreamReason } from '../src/http/refusal.js';
import { oneLine } from '../src/lookup/wording.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const strings = list(v.string());

/**
 * One banner of `data`; Shodan adds many module-specific members (http, ssl, ssh...), kept loose.
 * A banner without a port is left out of `services` (it cannot be placed).
 */
const BannerSchema = jsonObject({
  port: numOrNull(),
  transport: text(),
  product: text(),
  version: text(),
});

/** CVE ids: a list of them, or an object keyed by them (as Shodan's banners send `vulns`). */
const VulnsSchema = v.optional(v.union([
  strings,
  v.pipe(v.record(v.string(), v.unknown()), v.transform((byId) => Object.keys(byId))),
]), []);

/**
 * Shodan's host answer: only a JSON object is needed, every field is read when present (absent
 * or null → null or [], a list sent as "" → [], a text kept as sent, `""` included; one value in
 * place of a list → a list of it, null entries skipped).
 */
const HostSchema = jsonObject({
  ip_str: text(),
  ports: list(v.number()),
  tags: strings,
  hostnames: strings,
  domains: strings,
  org: text(),
  isp: text(),
  asn: text(),
  os: text(),
  country_code: text(),
  city: text(),
  vulns: VulnsSchema,
  last_update: text(),
  data: list(BannerSchema),
  error: text(),
});

export interface ShodanService {
  port: number;
  /** `tcp` or `udp`. */
  transport: string;
  product: string | null;
  version: string | null;
}

export interface ShodanResult {
  /** Open ports, as Shodan lists them. */
  ports: number[];
  /** Shodan's tags (`cdn`, `vpn`, `self-signed`, `honeypot`...). */
  tags: string[];
  /** `https://www.shodan.io/host/<ip>` (the public page; never carries the key). */
  link: string;
  ip: string;
  hostnames: string[];
  domains: string[];
  org: string | null;
  isp: string | null;
  /** `"AS13335"`. */
  asn: string | null;
  os: string | null;
  country_code: string | null;
  city: string | null;
  /** CVE ids Shodan associates with the services. */
  vulns: string[];
  last_update: string | null;
  /** One per banner, in port order. */
  services: ShodanService[];
}

const LINK_BASE = 'https://www.shodan.io/host';
const NO_INFORMATION = /no information available/i;

export async function shodanLookup(observable: Observable, ctx: EngineContext): Promise<ShodanResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const key = apiKeyOf(ctx);
  const response = await ctx.http.request(`${String(ctx.settings.base_url).replace(/\/+$/, '')}/shodan/host/${ip}`, {
    query: { key },
    headers: { accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 404 && NO_INFORMATION.test(upstreamReason(response.text(), ctx) ?? '')) return null;
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), HostSchema);
  if (answer.error !== null && answer.error.trim() !== '') {
    if (NO_INFORMATION.test(answer.error)) return null;
    throw new UpstreamError(`Shodan: ${oneLine(ctx.http.redact(answer.error))}`);
  }
  const services = answer.data
    .filter((banner): banner is typeof banner & { port: number } => banner.port !== null)
    .map((banner) => ({
      port: banner.port,
      transport: banner.transport || 'tcp',
      product: banner.product || null,
      version: banner.version || null,
    }))
    .sort((a, b) => a.port - b.port || a.transport.localeCompare(b.transport));
  return {
    ports: answer.ports,
    tags: answer.tags,
    link: `${LINK_BASE}/${ip}`,
    ip: answer.ip_str || ip,
    hostnames: answer.hostnames,
    domains: answer.domains,
    org: answer.org,
    isp: answer.isp,
    asn: answer.asn,
    os: answer.os,
    country_code: answer.country_code,
    city: answer.city,
    vulns: answer.vulns,
    last_update: answer.last_update,
    services,
  };
}

/** `OpenSSH 8.9` from product "OpenSSH" and version "8.9p1 Ubuntu-3ubuntu0.6"; `nginx` without a version. */
function productLabel(service: ShodanService): string | null {
  if (!service.product) return null;
  const version = service.version?.match(/^\d+(\.\d+)*/)?.[0];
  return version ? `${service.product} ${version}` : service.product;
}

/** `open ports 22, 80, 443 · OpenSSH 8.9, nginx · 2 CVEs · tags cdn`; `no open ports`. */
export function shodanSummary(result: ShodanResult): string {
  const ports = [...new Set(result.ports)].sort((a, b) => a - b);
  const parts = [ports.length > 0 ? `open ports ${ports.join(', ')}` : 'no open ports'];
  const products = [...new Set(result.services.map(productLabel).filter((p): p is string => p !== null))];
  if (products.length > 0) parts.push(products.join(', '));
  if (result.vulns.length > 0) parts.push(`${result.vulns.length} CVE${result.vulns.length > 1 ? 's' : ''}`);
  if (result.tags.length > 0) parts.push(`tags ${result.tags.join(', ')}`);
  return parts.join(' · ');
}

/** Shodan tags that mark the host itself as hostile: a C2, a malware host, a compromised machine. */
const MALICIOUS_TAGS = ['c2', 'malware', 'compromised', 'doublepulsar'];
/** Shodan tags of anonymisers and scanners. */
const SUSPICIOUS_TAGS = ['tor', 'vpn', 'proxy', 'scanner'];

/**
 * Rule: a c2/malware/compromised/doublepulsar tag -> malicious; a tor/vpn/proxy/scanner tag ->
 * suspicious; otherwise no evidence (open ports and CVEs are exposure, not malice).
 */
export function shodanEvidence(result: ShodanResult | null): Evidence | undefined {
  if (!result || !Array.isArray(result.tags)) return undefined;
  const tags = result.tags.filter((tag): tag is string => typeof tag === 'string').map((tag) => tag.toLowerCase());
  const bad = tags.filter((tag) => MALICIOUS_TAGS.includes(tag));
  if (bad.length > 0) return { level: 'malicious', reason: `tagged ${bad.join(', ')}` };
  const odd = tags.filter((tag) => SUSPICIOUS_TAGS.includes(tag));
  if (odd.length > 0) return { level: 'suspicious', reason: `tagged ${odd.join(', ')}` };
  return undefined;
}

/** The card: ports and what runs on them, CVEs, tags, names, owner, place, freshness, Shodan's page. */
export function shodanDetails(result: ShodanResult, target: string): DetailField[] {
  const ports = [...new Set(result.ports)].sort((a, b) => a - b);
  const services = result.services
    .filter((service) => service.product)
    .map((service) => `${service.port}/${service.transport} ${[service.product, service.version].filter(Boolean).join(' ')}`);
  return fields(
    field('Open ports', ports.length > 0 ? ports : 'none'),
    field('Services', services),
    field('Vulnerabilities', result.vulns),
    field('Tags', result.tags),
    field('Host names', result.hostnames),
    field('Domains', result.domains),
    field('Owner', [result.asn, result.org].filter(Boolean).join(' ')),
    field('ISP', result.isp !== result.org ? result.isp : null),
    field('Operating system', result.os),
    field('Location', [result.city, result.country_code].filter(Boolean).join(', ')),
    field('Last update', result.last_update),
    sourceLink('Open in Shodan', result.link || `${LINK_BASE}/${encodeURIComponent(result.ip || target)}`),
  );
}

/** The ASN Shodan names (`AS13335` or null) and the host's organisation. */
export function shodanAsn(result: ShodanResult): EngineAsn | undefined {
  return { asn: result.asn, org: result.org };
}

export default defineEngine<ShodanResult>({
  id: 'provider_20',
  service: 'shodan',
  label: 'Shodan',
  description: 'Open ports, services, tags and known vulnerabilities of an IP, or of the IP a domain/URL resolves to, from Shodan (free key required)',
  tags: ['ports', 'IP'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['SHODAN'] }],
  defaults: {
    timeout_ms: 5000,
    base_url: 'https://api.shodan.io',
    // Shodan's API is rate limited to 1 request per second on every plan, free accounts included
    // (developer.shodan.io/api); host lookups use no query credits.
    rate_limit: 1,
    rate_window_ms: 1000,
  },
  summary: shodanSummary,
  evidence: shodanEvidence,
  asn: shodanAsn,
  details: shodanDetails,
  run: shodanLookup,
  // `oas doctor`: the key's plan and credits (GET /api-info, developer.shodan.io/api), which
  // spends no query credit.
  check: { probe: shodanApiInfo },
});

const ApiInfoSchema = v.looseObject({
  plan: v.fallback(v.nullish(v.string()), null),
  query_credits: v.fallback(v.nullish(v.number()), null),
});

/** `plan dev, 100 query credits left`, or the refusal as a lookup words it. */
export async function shodanApiInfo(ctx: EngineContext): Promise<string> {
  const response = await ctx.http.request(`${String(ctx.settings.base_url).replace(/\/+$/, '')}/api-info`, {
    query: { key: apiKeyOf(ctx) },
    headers: { accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) throw refusedError(response, ctx);
  const info = parseJson(response.text(), ApiInfoSchema);
  return `plan ${info.plan ?? 'unknown'}${info.query_credits === null ? '' : `, ${info.query_credits} query credits left`}`;
}
