/**
 * provider_02 (`alienvault`) — the OTX pulses (community threat reports) that mention an IP, a
 * domain, a URL's host or a file hash, from the "general" section of AlienVault / LevelBlue
 * OTX's indicator API (engines.md 5.2): `GET {base_url}/indicators/<section>/<value>/general`
 * with the key in the `X-OTX-API-KEY` header.
 *
 * | observable            | section                 |
 * |-----------------------|-------------------------|
 * | IPv4 / IPv6           | `IPv4` / `IPv6`         |
 * | FQDN, URL's host name | `domain`                |
 * | URL with an IP host   | `IPv4` / `IPv6`         |
 * | MD5, SHA1, SHA256     | `file`                  |
 *
 * Result as the reference's: `count`, `pulses` (at most 5 `{title, url}`, newest first, the
 * pulse's first reference or its OTX page), `malware_families`, `adversary` and `link` (OTX's
 * pulse search for the indicator, never carrying the key). An indicator in no pulse is the
 * documented empty result (`count: 0`, `pulses: []`); an indicator OTX does not know (404) is
 * `null`.
 *
 * Differences from the reference:
 * - Bug fixed (engines.md 8 item 21): `count` is OTX's number of pulses mentioning the
 *   indicator (`pulse_info.count`), not the number of pulses kept for display (at most 5).
 * - Bug fixed (engines.md 8 item 21): `related.other.adversary` is used as well as
 *   `related.alienvault.adversary`; `adversary` keeps first-seen order (the reference's set had
 *   none) and, like `malware_families`, is de-duplicated case-insensitively.
 * - Bug fixed (engines.md 8 item 15): a URL's host comes from the shared URL parser (`hostOf`),
 *   not from splitting on `/` and `:`; userinfo, ports and IPv6 literals no longer break it,
 *   and an IP host is looked up as an address rather than as a domain.
 * - When OTX gives no `pulse_info.count` (absent, null or ""), `count` is the number of pulses
 *   in its answer, and 0 without `pulse_info`: the best count there is.
 * - Pulses are ordered by their `created` time, not by comparing the strings.
 * - One pulse, family or name in place of a list is read as a list of it, and null entries are
 *   skipped, where the reference's answer validation gave `null`.
 * - A bad key (401/403), the quota (429, retried as Retry-After says), 5xx and malformed answers
 *   are errors, not `null`; for 4xx OTX's own `detail` is added, with the key masked.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, numOrNull, text } from '../src/http/lenient.js';
import { count } from '../src/lookup/wording.js';
import { hostOf, ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';

/** OTX's web interface (pulse pages and search). */
const OTX_WEB = 'https://otx.alienvault.com';
/** Pulses shown per indicator, as the reference. */
const MAX_PULSES = 5;

/** A malware family: a name (`related`) or `{id, display_name}` (pulses). */
const FamilySchema = v.union([v.string(), v.looseObject({ id: text(), display_name: text() })]);

/** A pulse: every field read when present (without `id` and `name` it is not shown). */
const PulseSchema = jsonObject({
  id: text(),
  name: text(),
  created: text(),
  references: list(v.unknown()),
  adversary: text(),
  malware_families: list(FamilySchema),
});

const RelatedSchema = v.nullish(jsonObject({ adversary: list(v.string()), malware_families: list(FamilySchema) }));

/**
 * The "general" section. `indicator` is needed (the reference refused an answer without it too);
 * `pulse_info` and all in it are read when present: absent or null lists are [], one pulse in
 * place of the list is a list of it, null entries are skipped. The rest (whois, sections...) is
 * ignored.
 */
const GeneralSchema = jsonObject({
  indicator: v.string(),
  pulse_info: v.nullish(jsonObject({
    count: numOrNull(),
    pulses: list(PulseSchema),
    related: v.nullish(jsonObject({ alienvault: RelatedSchema, other: RelatedSchema })),
  })),
});

type Pulse = v.InferOutput<typeof PulseSchema>;
type Family = v.InferOutput<typeof FamilySchema>;

export interface OtxPulse {
  title: string;
  url: string;
}

export interface OtxResult {
  /** Pulses mentioning the indicator, as OTX counts them. */
  count: number;
  /** The newest pulses (at most 5): title and first reference, or the pulse's OTX page. */
  pulses: OtxPulse[];
  /** Malware families named by OTX for the indicator and by those pulses, first seen first. */
  malware_families: string[];
  /** Adversaries named by OTX for the indicator and by those pulses, first seen first. */
  adversary: string[];
  /** OTX's pulse search for the indicator. */
  link: string;
}

/** OTX section and indicator of an observable; null when OTX has none for it. */
export function otxIndicator(observable: Observable): { section: string; indicator: string } | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
    case 'FQDN':
    case 'URL': {
      const host = hostOf(observable);
      if (!host) return null;
      const version = ipVersion(host);
      return { section: version === 4 ? 'IPv4' : version === 6 ? 'IPv6' : 'domain', indicator: host };
    }
    case 'MD5':
    case 'SHA1':
    case 'SHA256':
      return { section: 'file', indicator: observable.value };
    default:
      return null;
  }
}

export async function otxLookup(observable: Observable, ctx: EngineContext): Promise<OtxResult | null> {
  const target = otxIndicator(observable);
  if (!target) return null;
  const key = apiKeyOf(ctx);
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  const url = `${base}/indicators/${target.section}/${encodeURIComponent(target.indicator)}/general`;
  const response = await ctx.http.request(url, {
    headers: { 'x-otx-api-key': key, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status === 404) return null;
  // OTX explains a refusal in `{"detail": "..."}`.
  if (response.status >= 300) throw refusedError(response, ctx);
  const answer = parseJson(response.text(), GeneralSchema);
  const info = answer.pulse_info;
  const related = info?.related;

  const malware = new Names();
  for (const family of [...(related?.alienvault?.malware_families ?? []), ...(related?.other?.malware_families ?? [])]) {
    malware.add(familyName(family));
  }
  const adversary = new Names();
  for (const name of [...(related?.alienvault?.adversary ?? []), ...(related?.other?.adversary ?? [])]) adversary.add(name);

  const pulses: OtxPulse[] = [];
  const usedUrls = new Set<string>();
  for (const pulse of newestFirst(info?.pulses ?? [])) {
    if (pulses.length >= MAX_PULSES) break;
    if (!pulse.id || !pulse.name || pulse.name === 'Unknown') continue;
    const reference = pulse.references.find((r): r is string => typeof r === 'string' && r.trim() !== '');
    // Two pulses quoting the same report are one entry (the reference's rule).
    if (reference && usedUrls.has(reference)) continue;
    if (reference) usedUrls.add(reference);
    pulses.push({ title: pulse.name, url: reference ?? `${OTX_WEB}/pulse/${encodeURIComponent(pulse.id)}` });
    for (const family of pulse.malware_families) malware.add(familyName(family));
    adversary.add(pulse.adversary);
  }

  return {
    count: info?.count ?? info?.pulses.length ?? 0,
    pulses,
    malware_families: malware.list(),
    adversary: adversary.list(),
    link: `${OTX_WEB}/browse/global/pulses?q=${encodeURIComponent(target.indicator)}`,
  };
}

/** Pulses by `created`, newest first; unreadable dates last, the upstream's order kept among equals. */
function newestFirst(pulses: readonly Pulse[]): Pulse[] {
  const time = (p: Pulse) => {
    // OTX writes UTC times without a zone (`2025-07-07T01:21:00.423000`).
    const at = p.created ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(p.created) ? p.created : `${p.created}Z`) : Number.NaN;
    return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
  };
  return pulses.map((p, i) => ({ p, i, at: time(p) })).sort((a, b) => b.at - a.at || a.i - b.i).map(({ p }) => p);
}

/** A family's name: its `display_name`, else (absent or empty) its `id`. */
function familyName(family: Family): string | null {
  return typeof family === 'string' ? family : family.display_name || family.id;
}

/** Names in first-seen order, de-duplicated case-insensitively, blanks dropped. */
class Names {
  private readonly seen = new Map<string, string>();
  add(name: string | null | undefined): void {
    const trimmed = name?.trim();
    if (trimmed && !this.seen.has(trimmed.toLowerCase())) this.seen.set(trimmed.toLowerCase(), trimmed);
  }
  list(): string[] {
    return [...this.seen.values()];
  }
}

/** `42 pulses · malware: Mirai, Emotet · adversary: APT99 · latest: Mirai botnet C2`. */
export function otxSummary(result: OtxResult): string {
  if (result.count === 0 && result.pulses.length === 0) return 'in no OTX pulse';
  const parts = [count(result.count, 'pulse')];
  if (result.malware_families.length > 0) parts.push(`malware: ${result.malware_families.join(', ')}`);
  if (result.adversary.length > 0) parts.push(`adversary: ${result.adversary.join(', ')}`);
  if (result.pulses[0]) parts.push(`latest: ${result.pulses[0].title}`);
  return parts.join(' · ');
}

/**
 * Rule: ≥ 5 OTX pulses naming a malware family or an adversary -> malicious; any pulse -> suspicious
 * (OTX is community-fed and noisy); in no pulse -> clean.
 */
export function otxEvidence(result: OtxResult | null): Evidence | undefined {
  // null: OTX does not know the indicator (or has no section for its type).
  if (!result || typeof result.count !== 'number') return undefined;
  if (result.count === 0) return { level: 'clean', reason: 'in no OTX pulse' };
  const named = [...(result.malware_families ?? []), ...(result.adversary ?? [])];
  const reason = `in ${count(result.count, 'OTX pulse')}${named.length > 0 ? ` naming ${named.slice(0, 3).join(', ')}` : ''}`;
  return { level: result.count >= 5 && named.length > 0 ? 'malicious' : 'suspicious', reason };
}

/**
 * Card fields: how many pulses, the malware families and adversaries they name, the newest
 * pulses (title linked to the report), then OTX's pulse search.
 */
export function otxDetails(result: OtxResult): DetailField[] {
  return fields(
    field('Pulses', result.count),
    field('Malware families', result.malware_families),
    field('Adversaries', result.adversary),
    ...result.pulses.slice(0, MAX_PULSES).map((pulse, i) => field(`Pulse ${i + 1}`, pulse.title, pulse.url)),
    sourceLink('Open in OTX', result.link),
  );
}

export default defineEngine<OtxResult>({
  id: 'provider_02',
  service: 'alienvault',
  label: 'Alienvault',
  description: 'AlienVault OTX pulses mentioning an IP, domain, URL host or file hash, with the malware families and adversaries they name',
  tags: ['IP'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API key', env: ['ALIENVAULT'] }],
  defaults: {
    timeout_ms: 5000,
    base_url: 'https://otx.alienvault.com/api/v1',
    // OTX's published limit for API-key requests: 10,000 an hour (OTX API documentation, "Rate
    // limits"); there is no daily quota on the free account.
    rate_limit: 10_000,
    rate_window_ms: 3_600_000,
  },
  summary: otxSummary,
  evidence: otxEvidence,
  details: otxDetails,
  run: otxLookup,
});
