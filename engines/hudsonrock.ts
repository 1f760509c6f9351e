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
 * - The fields the result is read for are always there, with their default when Hudson Rock
 *   leaves them out or sends null (or, for counts and flags, "" or 0 in another form): e-mail
 *   `stealers` [] and the two service totals 0; domain `total`, `totalStealers`, `employees`,
 *   `users`, `third_parties`, `totalUrls` 0, the two `last_*_compromised` dates null,
 *   `is_shopify` false, `applications` and `thirdPartyDomains` []; in a stealer, the computer,
 *   system, date and family null and its totals 0. A text sent as "" stays "" (issue 32). One
 *   object in place of a list is a list of it, null entries are dropped. The reference passed
 *   the body through as sent, missing keys missing.
 * - An answer carrying Hudson Rock's `error` is an error with its words, not a result; a 429 is
 *   retried as the upstream asks instead of becoming `null`.
 *
 * Nothing is needed beyond a JSON object: the minimal answer `{}` is "nothing found" (the
 * reference's pass-through gave `{}` too).
 */
import * as v from 'valibot';
import { jsonObject } from '../src/http/client.js';
import { flag, list, num, numOrNull, text } from '../src/http/lenient.js';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { count, isoDay, latest, oneLine } from '../src/lookup/wording.js';
import { hostOf, ipVersion, urlHost } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

/** The character Hudson Rock masks hidden parts with (`https://••••••.example.com`). */
const MASK = '••';

/** A stealer log: what the summary and card read; the rest (paths, IPs, masked logins) passes through. */
const StealerSchema = jsonObject({
  computer_name: text(),
  operating_system: text(),
  date_compromised: text(),
  stealer_family: text(),
  total_corporate_services: num(),
  total_user_services: num(),
});

/** Hudson Rock's words, kept as sent: `message` on every answer, `error` on a refusal. */
const said = v.nullish(v.union([v.string(), v.number()]));

/** search-by-email; "not found" is the same shape with no stealers and zero totals. */
const EmailSchema = jsonObject({
  message: said,
  error: said,
  stealers: list(StealerSchema),
  total_corporate_services: num(),
  total_user_services: num(),
});

/**
 * The URL lists: strings or `{url, occurrence}` objects, filtered by what each entry is; passed
 * through as sent otherwise (a missing list stays missing).
 */
const urls = v.nullish(v.array(v.unknown()));
const UrlListsSchema = v.nullish(v.looseObject({ all_urls: urls, clients_urls: urls, employees_urls: urls }));

/** search-by-domain. */
const DomainSchema = jsonObject({
  message: said,
  error: said,
  total: num(),
  totalStealers: num(),
  employees: num(),
  users: num(),
  third_parties: num(),
  totalUrls: num(),
  last_employee_compromised: text(),
  last_user_compromised: text(),
  is_shopify: flag(),
  applications: list(jsonObject({ keyword: text(), occurrence: numOrNull() })),
  stealerFamilies: v.nullish(v.record(v.string(), v.nullish(v.number()))),
  data: UrlListsSchema,
  stats: UrlListsSchema,
  thirdPartyDomains: list(jsonObject({ domain: text() })),
});

type EmailAnswer = v.InferOutput<typeof EmailSchema>;
type DomainAnswer = v.InferOutput<typeof DomainSchema>;

/** The e-mail answer; `stealers` is always there. */
export type EmailExposure = EmailAnswer;
/** The domain answer without masked entries; `total` is always there. */
export type DomainExposure = DomainAnswer;
export type InfostealerResult = EmailExposure | DomainExposure;

const URL_LISTS = ['all_urls', 'clients_urls', 'employees_urls'] as const;

export async function infostealerLookup(observable: Observable, ctx: EngineContext): Promise<InfostealerResult | null> {
  const base = String(ctx.settings.base_url).replace(/\/+$/, '');
  if (observable.type === 'Email') {
    const answer = await ctx.http.json(`${base}/search-by-email`, EmailSchema, { query: { email: observable.value } });
    refused(answer);
    return answer;
  }
  const host = hostOf(observable);
  if (!host || ipVersion(host) !== 0) return null;
  const answer = await ctx.http.json(`${base}/search-by-domain`, DomainSchema, { query: { domain: host } });
  refused(answer);
  return withoutMasked(answer);
}

/** An answer carrying Hudson Rock's `error` is a refusal, in its own words. */
function refused(answer: { error?: string | number | null }): void {
  if (answer.error !== undefined && answer.error !== null && String(answer.error).trim() !== '') {
    throw new EngineError(`Hudson Rock: ${oneLine(String(answer.error))}`);
  }
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
  result.thirdPartyDomains = answer.thirdPartyDomains.filter((party) => typeof party.domain === 'string' && !party.domain.includes(MASK));
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
  disclosure: 'third_party',
  touchesTarget: false,
  defaults: { timeout_ms: 10000, base_url: 'https://cavalier.hudsonrock.com/api/json/v2/osint-tools' },
  summary,
  evidence: infostealerEvidence,
  details: infostealerDetails,
  run: infostealerLookup,
});
