/**
 * provider_21 (`spur`) — whether an IP, or the IP a domain/URL resolves to, is a VPN, proxy or
 * other anonymising tunnel, and whose, from Spur (spur.us).
 *
 * Main catalog (engines.md 5.26): Spur's paid context API, `GET {base_url}/v2/context/{ip}` with
 * the API token in the `Token` header. Result `{link, tunnels, data}`: the IP's page on spur.us,
 * the first tunnel operator Spur names (else "Not anonymous"), and Spur's whole answer.
 *
 * Older catalog (engines.md 6.3, `variants.older`): no key; the public context page
 * `GET {base_url}/context/{ip}` (base_url `https://spur.us`) is fetched with a browser's
 * User-Agent and its `<title>` read ("89.187.1.1 (NordVPN) | Spur" -> "NordVPN"; no
 * parentheses or no title -> "Not anonymous"). Result `{link, tunnels}`.
 *
 * Better than the reference:
 * - Bug fixed (engines.md 8 item 3): an error is an error. The reference answered every failure
 *   (and a missing key) with the made-up result `{"tunnels": "Unknown - Behind Captcha"}`,
 *   which reads like an answer from Spur. Here a bad token (401/403, with Spur's reason, the
 *   token masked), 429 and 5xx after the client's retries, a malformed answer or a timeout is
 *   thrown, so the runner records `null` plus an `errors` entry; a missing token is refused by
 *   the runner before any request. In the older variant a captcha or blocked page (403, or a
 *   challenge page served with 200) is an error too, never "Not anonymous".
 * - Spur's answer is read leniently (issue 26): only a JSON object is needed. `tunnels` absent,
 *   null or empty is "Not anonymous" (as in the reference), one tunnel object in place of the
 *   list is that tunnel (the reference could not read one), null
 *   tunnels are skipped; the summary and card skip fields that are null or "", so an odd field
 *   never fails the lookup whose `data` is returned as Spur sent it.
 * - The older page is parsed with cheerio (the title as text, entities decoded), not by string
 *   cutting over raw HTML; an empty "()" label reads "Not anonymous" rather than "".
 */
import { createRequire } from 'node:module';
import type * as cheerio from 'cheerio';
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { flag, list, numOrNull, text } from '../src/http/lenient.js';
import { BadResponseError, statusError } from '../src/http/errors.js';
import { EXPLAINED_STATUSES, apiKeyOf, refusedError } from '../src/http/refusal.js';
import { oneLine } from '../src/lookup/wording.js';
import { ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const strings = list(v.string());

/** One tunnel Spur saw the IP in (VPN, proxy, Tor...). */
const TunnelSchema = v.looseObject({
  anonymous: flag(),
  operator: text(),
  type: text(),
});

/**
 * Spur's context object (engines.md 5.26). Only a JSON object is needed; what the engine reads
 * (`tunnels[].operator` for the result, the rest for the summary and the card) is read when
 * present: absent or null → null or [] (a list sent as "" → []), a text as sent, one value in
 * place of a list → a list of it, null entries skipped. The answer itself is returned untouched
 * as `data`.
 */
const ContextSchema = jsonObject({
  ip: text(),
  as: v.nullish(v.looseObject({ number: numOrNull(), organization: text() })),
  organization: text(),
  infrastructure: text(),
  client: v.nullish(v.looseObject({
    behaviors: strings,
    count: numOrNull(),
    proxies: strings,
    types: strings,
  })),
  location: v.nullish(v.looseObject({ city: text(), state: text(), country: text() })),
  risks: strings,
  services: strings,
  tunnels: list(TunnelSchema),
});

export type SpurContext = v.InferOutput<typeof ContextSchema>;

export interface SpurResult {
  /** `https://spur.us/context/<ip>`, Spur's public page about the IP. */
  link: string;
  /** The tunnel operator (`NORD_VPN`; older catalog: the page's label, `NordVPN`), or `Not anonymous`. */
  tunnels: string;
  /** Spur's whole context answer (main catalog only). */
  data?: Record<string, unknown>;
}

export const NOT_ANONYMOUS = 'Not anonymous';
const LINK_BASE = 'https://spur.us/context';

/**
 * The older variant's page is fetched as a browser would (the reference used a random real
 * browser's User-Agent): Spur serves its normal page to browsers. Setting `user_agent` overrides it.
 */
export const BROWSER_USER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';

function baseUrl(ctx: EngineContext): string {
  return String(ctx.settings.base_url).replace(/\/+$/, '');
}

/** The first non-empty operator among the tunnels, as the reference picks it. */
function operatorOf(context: SpurContext): string {
  return context.tunnels.map((tunnel) => tunnel.operator?.trim()).find((operator) => operator) ?? NOT_ANONYMOUS;
}

/** Main catalog: Spur's context API. */
export async function spurLookup(observable: Observable, ctx: EngineContext): Promise<SpurResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const token = apiKeyOf(ctx);
  const response = await ctx.http.request(`${baseUrl(ctx)}/v2/context/${ip}`, {
    headers: { token, accept: 'application/json' },
    acceptStatus: EXPLAINED_STATUSES,
  });
  if (response.status >= 300) throw refusedError(response, ctx);
  const body = response.text();
  const context = parseJson(body, ContextSchema);
  return { link: `${LINK_BASE}/${ip}`, tunnels: operatorOf(context), data: JSON.parse(body) as Record<string, unknown> };
}

/**
 * cheerio is loaded on the first page parsed, not at start-up: every `oas` command loads every
 * engine module (see src/scrape/ioc-one.ts).
 */
let cheerioModule: typeof cheerio | undefined;
function loadHtml(html: string): cheerio.CheerioAPI {
  cheerioModule ??= createRequire(import.meta.url)('cheerio') as typeof cheerio;
  return cheerioModule.load(html);
}

/** Titles and elements of the challenge pages put in front of a site (Cloudflare, reCAPTCHA, hCaptcha). */
const CHALLENGE_TITLE = /just a moment|attention required|verify you are (a )?human|captcha|access denied/i;
const CHALLENGE_ELEMENTS = '#challenge-form, #challenge-running, .cf-turnstile, .g-recaptcha, .h-captcha, iframe[src*="captcha"]';

function challenged($: cheerio.CheerioAPI, title: string): boolean {
  return CHALLENGE_TITLE.test(title) || $(CHALLENGE_ELEMENTS).length > 0;
}

/** Whether a page is a captcha or challenge page. */
function isChallenge(html: string): boolean {
  const $ = loadHtml(html);
  return challenged($, oneLine($('title').first().text()));
}

/**
 * The anonymity label of a Spur context page (engines.md 6.3): the text between the first `(` of
 * the `<title>` and the `)` that follows, else `Not anonymous` (also without a title). A captcha
 * or challenge page is an error: it says nothing about the IP.
 */
export function parseContextPage(html: string): string {
  const $ = loadHtml(html);
  const title = oneLine($('title').first().text());
  if (challenged($, title)) {
    throw new EngineError(`Spur answered with a captcha page${title ? ` ("${oneLine(title, 80)}")` : ''}, not the IP's context`);
  }
  const open = title.indexOf('(');
  if (open === -1 || !title.includes(')')) return NOT_ANONYMOUS;
  const label = title.slice(open + 1).split(')')[0]!.trim();
  return label || NOT_ANONYMOUS;
}

/** Older catalog: Spur's public context page, scraped without a key. */
export async function spurPageLookup(observable: Observable, ctx: EngineContext): Promise<SpurResult | null> {
  const ip = observable.value;
  if (ipVersion(ip) === 0) return null;
  const userAgent = typeof ctx.settings.user_agent === 'string' && ctx.settings.user_agent.trim() ? ctx.settings.user_agent : BROWSER_USER_AGENT;
  const response = await ctx.http.request(`${baseUrl(ctx)}/context/${ip}`, {
    acceptStatus: [403],
    headers: {
      'user-agent': userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.5',
    },
  });
  if (response.status === 403) throw statusError(403, isChallenge(response.text()) ? 'captcha page' : undefined);
  const type = response.headers['content-type'];
  if (type !== undefined && !/html/i.test(type)) {
    throw new BadResponseError(`Spur answered with ${type.split(';')[0]!.trim()}, not an HTML page`);
  }
  return { link: `${LINK_BASE}/${ip}`, tunnels: parseContextPage(response.text()) };
}

const asContext = (result: SpurResult): SpurContext | undefined => {
  const parsed = result.data ? v.safeParse(ContextSchema, result.data) : undefined;
  return parsed?.success ? parsed.output : undefined;
};

/** `NORD_VPN (VPN) · DATACENTER · risks TUNNEL, CALLBACK_PROXY`; `not anonymous`; older: `NordVPN`. */
export function spurSummary(result: SpurResult): string {
  const context = asContext(result);
  const types = [...new Set((context?.tunnels ?? []).map((tunnel) => tunnel.type).filter((type): type is string => Boolean(type)))];
  const verdict = result.tunnels === NOT_ANONYMOUS ? 'not anonymous' : result.tunnels;
  const parts = [types.length > 0 ? `${verdict} (${types.join(', ')})` : verdict];
  if (context?.infrastructure) parts.push(context.infrastructure);
  if (context?.risks && context.risks.length > 0) parts.push(`risks ${context.risks.join(', ')}`);
  return parts.join(' · ');
}

/**
 * Rule: an anonymising tunnel (VPN, proxy, Tor; main API or older page label) or a risk Spur
 * names (CALLBACK_PROXY, GEO_MISMATCH...) -> suspicious; "Not anonymous" -> no evidence
 * (not being a tunnel does not clear an address). Reads both catalogs' result shapes.
 */
export function spurEvidence(result: SpurResult | null): Evidence | undefined {
  if (!result || typeof result.tunnels !== 'string') return undefined;
  const label = result.tunnels.trim();
  // The reference's stand-in for a failed call ("Unknown - Behind Captcha") is no answer.
  if (label === '' || /^unknown\b/i.test(label)) return undefined;
  const context = asContext(result);
  const tunnelTypes = [...new Set((context?.tunnels ?? []).map((tunnel) => tunnel.type).filter((type): type is string => Boolean(type)))];
  const risks = context?.risks ?? [];
  const anonymous = label !== NOT_ANONYMOUS || tunnelTypes.length > 0;
  if (!anonymous && risks.length === 0) return undefined;
  const parts: string[] = [];
  if (anonymous) parts.push(`tunnel ${label !== NOT_ANONYMOUS ? `${label}${tunnelTypes.length > 0 ? ` (${tunnelTypes.join(', ')})` : ''}` : tunnelTypes.join(', ')}`);
  if (risks.length > 0) parts.push(`risks ${risks.join(', ')}`);
  return { level: 'suspicious', reason: parts.join(' · ') };
}

/** The card: the anonymity verdict, Spur's tunnels, risks and services, owner, place, clients, Spur's page. */
export function spurDetails(result: SpurResult, target: string): DetailField[] {
  const context = asContext(result);
  const tunnels = (context?.tunnels ?? []).map((tunnel) => [tunnel.operator, tunnel.type && `(${tunnel.type})`].filter(Boolean).join(' ')).filter(Boolean);
  const as = context?.as;
  const location = context?.location;
  return fields(
    field('Anonymity', result.tunnels),
    field('Tunnels', tunnels),
    field('Risks', context?.risks ?? []),
    field('Services', context?.services ?? []),
    field('Infrastructure', context?.infrastructure),
    field('Owner', [as?.number ? `AS${as.number}` : null, as?.organization || context?.organization].filter(Boolean).join(' ')),
    field('Location', [location?.city, location?.state, location?.country].filter(Boolean).join(', ')),
    field('Clients', context?.client?.count ?? null),
    field('Client types', context?.client?.types ?? []),
    field('Client behaviors', context?.client?.behaviors ?? []),
    sourceLink('Open in Spur', result.link || `${LINK_BASE}/${encodeURIComponent(target)}`),
  );
}

export default defineEngine<SpurResult>({
  id: 'provider_21',
  service: 'spur',
  label: 'Spur',
  description: 'VPN, proxy and other anonymising tunnels (and their operator) of an IP, or of the IP a domain/URL resolves to, from Spur\'s context API (paid token required)',
  tags: ['VPN', 'proxy'],
  types: ['IPv4', 'IPv6'],
  reversedIp: true,
  disclosure: 'third_party',
  touchesTarget: false,
  credentials: [{ setting: 'api_key', label: 'API token', env: ['SPUR_US'] }],
  defaults: { timeout_ms: 5000, base_url: 'https://api.spur.us' },
  summary: spurSummary,
  evidence: spurEvidence,
  details: spurDetails,
  run: spurLookup,
  variants: {
    older: {
      description: 'VPN or proxy operator of an IP, or of the IP a domain/URL resolves to, scraped from Spur\'s public context page (free, no key)',
      tags: ['VPN', 'proxy', 'free_no_key', 'scraping'],
      credentials: [],
      defaults: { timeout_ms: 5000, base_url: 'https://spur.us' },
      run: spurPageLookup,
    },
  },
});
