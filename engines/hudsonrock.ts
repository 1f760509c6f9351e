/**
 * provider_08 (`hudsonrock`) — infostealer exposure from Hudson Rock's free Cavalier OSINT API
 * (engines.md 5.12). No key. An e-mail address is searched as is; a domain, or a URL's host,
 * through the domain search.
 *
 * The result is Hudson Rock's answer itself (every key passed through), except that the domain
 * answer loses the entries Hudson Rock masks with `••`.
 *
 * Differences from the reference:
 * - Bug fixed: the reference filtered the string lists under `stats` as if they held objects, so
 *   a URL containing the letters "url" (`https://myurl.example`) crashed the engine into `null`.
 *   Each list entry is now filtered by what it is: a string by its text, an object by its `url`.
 * - A URL's host comes from the shared URL parser (`hostOf`), not from splitting on `/` and `:`
 *   (engines.md 8 item 15): userinfo, ports and IPv6 literals no longer break it. A URL whose
 *   host is an IP address is not looked up: the API searches domains.
 * - An answer without the fields the API documents (`stealers` / `total`) is an error naming
 *   Hudson Rock's own message when there is one, not an empty-looking result; a 429 is retried as
 *   the upstream asks instead of becoming `null`.
 */
import * as v from 'valibot';
import { defineEngine, EngineError, type DetailField, type EngineContext } from '../src/engine/contract.js';
import { count, isoDay, latest, oneLine } from '../src/lookup/wording.js';
import { hostOf, ipVersion, urlHost } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/view/fields.js';
import type { Evidence } from '../src/verdict/verdict.js';

/** The character Hudson Rock masks hidden parts with (`https://••••••.example.com`). */
const MASK = '••';

const num = v.nullish(v.number());
const text = v.nullish(v.string());
const entries = v.nullish(v.array(v.unknown()));

const StealerSchema = v.looseObject({
  computer_name: text,
  operating_system: text,
  date_compromised: text,
  stealer_family: text,
  malware_path: text,
  antiviruses: v.nullish(v.union([v.array(v.string()), v.string()])),
  ip: text,
  top_passwords: v.nullish(v.array(v.string())),
  top_logins: v.nullish(v.array(v.string())),
  total_corporate_services: num,
  total_user_services: num,
});

/** search-by-email; "not found" is the same shape with no stealers and zero totals. */
const EmailSchema = v.looseObject({
  message: text,
  error: text,
  stealers: v.optional(v.array(StealerSchema)),
  total_corporate_services: num,
  total_user_services: num,
});

const UrlListsSchema = v.looseObject({ all_urls: entries, clients_urls: entries, employees_urls: entries });

/** search-by-domain. */
const DomainSchema = v.looseObject({
  message: text,
  error: text,
  total: v.optional(v.number()),
  totalStealers: num,
  employees: num,
  users: num,
  third_parties: num,
  totalUrls: num,
  last_employee_compromised: text,
  last_user_compromised: text,
  is_shopify: v.nullish(v.boolean()),
  applications: v.nullish(v.array(v.looseObject({ keyword: text, occurrence: num }))),
  stealerFamilies: v.nullish(v.record(v.string(), v.nullish(v.number()))),
  data: v.nullish(UrlListsSchema),
  stats: v.nullish(UrlListsSchema),
  thirdPartyDomains: v.nullish(v.array(v.looseObject({ domain: text }))),
});

type EmailAnswer = v.InferOutput<typeof EmailSchema>;
type DomainAnswer = v.InferOutput<typeof DomainSchema>;

/** The e-mail answer; `stealers` is always there. */
export type EmailExposure = EmailAnswer & { stealers: v.InferOutput<typeof StealerSchema>[] };
/** The domain answer without masked entries; `total` is always there. */
export type DomainExposure = DomainAnswer & { total: number };
export type InfostealerResult = EmailExposure | DomainExposure;

const URL_LISTS = ['all_urls', 'clients_urls', 'employees_urls'] as const;

export async function infostealerLookup(observable: Observable, ctx: EngineContext): Promise<InfostealerResult | null> {
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  if (observable.type === 'Email') {
    const answer = await ctx.http.json(`${base}/search-by-email`, EmailSchema, { query: { email: observable.value } });
    if (answer.stealers === undefined) throw unexpected(answer, 'stealers');
    return answer as EmailExposure;
  }
  const host = hostOf(observable);
  if (!host || ipVersion(host) !== 0) return null;
  const answer = await ctx.http.json(`${base}/search-by-domain`, DomainSchema, { query: { domain: host } });
  if (answer.total === undefined) throw unexpected(answer, 'total');
  return withoutMasked(answer as DomainExposure);
}

/** An answer lacking the field every answer has: Hudson Rock's own message, if it gave one. */
function unexpected(answer: { message?: string | null; error?: string | null }, field: string): EngineError {
  const said = answer.error || answer.message;
  return new EngineError(said ? `Hudson Rock: ${oneLine(said)}` : `unexpected answer from upstream: no ${field}`);
}

/** The domain answer minus the entries Hudson Rock masks, each list filtered by what it holds. */
function withoutMasked(answer: DomainExposure): DomainExposure {
  const result: DomainExposure = { ...answer };
  for (const key of ['data', 'stats'] as const) {
    const lists = answer[key];
    if (!lists) continue;
    const cleaned = { ...lists };
    for (const name of URL_LISTS) {
      const list = lists[name];
      if (Array.isArray(list)) cleaned[name] = list.filter((entry) => !masked(entry));
    }
    result[key] = cleaned;
  }
  if (answer.thirdPartyDomains) {
    result.thirdPartyDomains = answer.thirdPartyDomains.filter((party) => typeof party.domain === 'string' && !party.domain.includes(MASK));
  }
  return result;
}

/** A masked URL, as a plain string or as an object's `url`. Anything else is kept. */
function masked(entry: unknown): boolean {
  if (typeof entry === 'string') return entry.includes(MASK);
  if (typeof entry === 'object' && entry !== null) {
    const url = (entry as { url?: unknown }).url;
    return typeof url === 'string' && url.includes(MASK);
  }
  return false;
}

/**
 * E-mail: `2 infected computers (RedLine, Lumma), last 2024-03-02`; `no infostealer infection`.
 * Domain: `120 compromised (12 employees, 108 users), last 2026-01-05`; `no infostealer data`.
 */
function summary(result: InfostealerResult): string {
  if ('stealers' in result && Array.isArray(result.stealers)) {
    const stealers = (result as EmailExposure).stealers;
    if (stealers.length === 0) return 'no infostealer infection';
    const families = [...new Set(stealers.map((s) => s.stealer_family).filter((f): f is string => !!f))];
    const last = isoDay(latest(stealers.map((s) => s.date_compromised)));
    return `${count(stealers.length, 'infected computer')}${families.length ? ` (${families.join(', ')})` : ''}${last ? `, last ${last}` : ''}`;
  }
  const domain = result as DomainExposure;
  if (!domain.total) return 'no infostealer data';
  const who = [
    domain.employees != null ? count(domain.employees, 'employee') : null,
    domain.users != null ? count(domain.users, 'user') : null,
  ].filter(Boolean);
  const last = isoDay(latest([domain.last_employee_compromised, domain.last_user_compromised]));
  return `${domain.total} compromised${who.length ? ` (${who.join(', ')})` : ''}${last ? `, last ${last}` : ''}`;
}

/**
 * What Hudson Rock says about the observable's risk: infostealer exposure makes it `suspicious`, as
 * a victim (its credentials are in criminal hands), not as an attacker.
 * - An e-mail address found on infected computers: its credentials are exposed.
 * - A domain whose employees' computers were infected: the organisation's logins are exposed.
 *   Infected users only (customers who log in to the domain's site) say nothing about the domain:
 *   every popular site has some, so they judge nothing.
 * Nothing found judges nothing (it is no proof the credentials are safe).
 */
export function infostealerEvidence(result: InfostealerResult | null): Evidence | undefined {
  if (!result) return undefined;
  if ('stealers' in result && Array.isArray(result.stealers)) {
    const stealers = (result as EmailExposure).stealers;
    if (stealers.length === 0) return undefined; // on no infected computer: no judgement
    const families = distinct(stealers.map((s) => s.stealer_family)).map((family) => oneLine(family, 40));
    const last = isoDay(latest(stealers.map((s) => s.date_compromised)));
    // On infostealer-infected computers: the address's credentials are exposed.
    return {
      level: 'suspicious',
      reason: `on ${count(stealers.length, 'infostealer-infected computer')}${families.length > 0 ? ` (${families.join(', ')})` : ''}${last ? `, last ${last}` : ''}: credentials exposed`,
    };
  }
  const domain = result as DomainExposure;
  if (typeof domain.employees !== 'number' || domain.employees <= 0) return undefined; // no employee infected (users only, or nothing): no judgement
  const last = isoDay(domain.last_employee_compromised);
  // Employees' computers infected: the organisation's credentials are exposed.
  return {
    level: 'suspicious',
    reason: `${count(domain.employees, 'employee computer')} infected by infostealers${last ? `, last ${last}` : ''}: the organisation's credentials are exposed`,
  };
}

/** Distinct non-empty texts, in order. */
function distinct(values: readonly (string | null | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => !!value && value.trim() !== ''))];
}

/** `{ RedLine: 40, Lumma: 30, total: 98 }` -> `RedLine (40)`, `Lumma (30)`, most frequent first. */
function familyCounts(families: Record<string, number | null | undefined> | null | undefined): string[] {
  return Object.entries(families ?? {})
    .filter(([name, n]) => name !== 'total' && typeof n === 'number' && n > 0)
    .sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0))
    .map(([name, n]) => `${name} (${n})`);
}

/** The URLs of a `data` list: plain strings or `{url, occurrence}` objects. */
function urlTexts(list: readonly unknown[] | null | undefined): string[] {
  return (list ?? []).flatMap((entry) => {
    if (typeof entry === 'string') return [entry];
    const { url, occurrence } = typeof entry === 'object' && entry !== null ? (entry as { url?: unknown; occurrence?: unknown }) : {};
    if (typeof url !== 'string') return [];
    return [typeof occurrence === 'number' ? `${url} (${occurrence})` : url];
  });
}

/**
 * E-mail: the infected computers (how many, stealer families, last compromise, systems) and the
 * services whose credentials were on them. Domain: the compromised employees and users, the
 * latest compromises, the families, the employees' URLs seen in the logs, then the domain's
 * page on hudsonrock.com. Passwords and logins, even masked, are never shown.
 */
export function infostealerDetails(result: InfostealerResult, target: string): DetailField[] {
  if ('stealers' in result && Array.isArray(result.stealers)) {
    const stealers = (result as EmailExposure).stealers;
    return fields(
      field('Infected computers', stealers.length),
      field('Stealer families', distinct(stealers.map((s) => s.stealer_family))),
      field('Last compromised', latest(stealers.map((s) => s.date_compromised))),
      field('Computers', distinct(stealers.map((s) => s.computer_name))),
      field('Operating systems', distinct(stealers.map((s) => s.operating_system))),
      field('Corporate services', result.total_corporate_services),
      field('User services', result.total_user_services),
    );
  }
  const domain = result as DomainExposure;
  const host = /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? urlHost(target) : target.trim().toLowerCase().replace(/\.$/, '');
  return fields(
    field('Compromised', domain.total),
    field('Employees', domain.employees),
    field('Users', domain.users),
    field('Third parties', domain.third_parties),
    field('Last employee compromised', domain.last_employee_compromised),
    field('Last user compromised', domain.last_user_compromised),
    field('Stealer families', familyCounts(domain.stealerFamilies)),
    field('Employee URLs', urlTexts(domain.data?.employees_urls)),
    field('Applications', (domain.applications ?? []).flatMap((app) =>
      app.keyword ? [app.occurrence != null ? `${app.keyword} (${app.occurrence})` : app.keyword] : [])),
    host ? sourceLink('Hudson Rock', `https://www.hudsonrock.com/search/domain/${encodeURIComponent(host)}`) : null,
  );
}

export default defineEngine<InfostealerResult>({
  id: 'provider_08',
  service: 'hudsonrock',
  label: 'Hudson Rock',
  description: 'Infostealer exposure of an e-mail address or a domain (infected computers, compromised employees and users) from Hudson Rock\'s free OSINT API',
  tags: ['domain', 'URL', 'email', 'free_no_key'],
  types: ['FQDN', 'URL', 'Email'],
  defaults: { timeout_ms: 10000, base_url: 'https://cavalier.hudsonrock.com/api/json/v2/osint-tools' },
  summary,
  evidence: infostealerEvidence,
  details: infostealerDetails,
  run: infostealerLookup,
});
