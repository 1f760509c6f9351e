/**
 * provider_04 (`crowdstrike`) — CrowdStrike Falcon (engines.md 5.5): how many devices of the
 * tenant saw an IP, a domain, a URL's host or a file hash, and what Falcon Intelligence knows
 * about it.
 *
 * - Token: OAuth2 client credentials, `POST {base_url}/oauth2/token` with the form fields
 *   `client_id` and `client_secret` (shared token cache: src/http/oauth.ts).
 * - Device count: `GET {base_url}/iocs/aggregates/indicators/device-count/v1?type=<t>&value=<v>`;
 *   Falcon's 404 with empty `resources` means no device saw it (0).
 * - Intelligence: `POST {base_url}/intel/entities/indicators/GET/v1` `{"ids": ["<t>_<v>"]}`.
 *
 * The value is lower-cased; a URL stands for its host. Types `domain`, `ipv4`, `ipv6`, `md5`,
 * `sha1`, `sha256`; intel ids `domain_<v>`, `ip_address_<v>`, `hash_<md5|sha1|sha256>_<v>`.
 *
 * Result exactly as the reference's: not found is `{device_count, link, indicator_found: false}`;
 * found adds `published_date`, `last_updated` (UTC `YYYY-MM-DD`), `actors`,
 * `malicious_confidence`, `threat_types`, `kill_chain` (from `kill_chains`), `malware_families`
 * and `vulnerabilities`. `link` is the Falcon console search
 * `{falcon_url}/search/?term=_all%3A~%27<v>%27`.
 *
 * Differences from the reference (engines.md 8):
 * - 15: a URL's host comes from the shared URL parser (userinfo, ports and IPv6 literals are
 *   handled); a URL whose host is an IP address is looked up as that IP (`ipv4`/`ipv6`,
 *   `ip_address_<ip>`), not as a "domain".
 * - 16: the link keeps any path of `falcon_url` (a console behind a reverse proxy).
 * - 17: the API and the token come from `base_url` (other clouds: `https://api.eu-1.crowdstrike.com`,
 *   `https://api.us-2.crowdstrike.com`...), and one token per process serves every observable
 *   until shortly before it expires (the reference made a client and a token per observable).
 * - 19 and 3: no request without credentials (the runner refuses first); a refused token is a
 *   one-line `CrowdStrike: authentication failed (...)`; a 401 from the API refreshes the token
 *   once; 403 (a missing API scope), other errors, a malformed answer and a timeout are reported
 *   instead of becoming `null`; a 200 with empty device `resources` is 0 devices (the reference
 *   crashed into `null`).
 * - A date Falcon leaves out is `null` (the reference wrote 1970-01-01).
 * - Nothing in Falcon's answers is needed but their being JSON objects (issue 26): a device
 *   resource without `device_count` (or null, "") is 0 devices; an indicator's lists sent as null
 *   or left out are `[]`, one string in place of a list is a list of it; `malicious_confidence`
 *   is kept as sent, `""` included (issue 32), null when left out; dates sent as numeric strings
 *   are read as epoch seconds. Falcon's "nothing here" 404 is recognised by its `errors` key with
 *   no resources, `errors: null` included.
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence, type HttpClient, type HttpResponse } from '../src/engine/contract.js';
import { jsonObject, parseJson } from '../src/http/client.js';
import { list, num, numOrNull, text } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { errorReason, grantedToken, withBearer, type TokenSpec } from '../src/http/oauth.js';
import { count, oneLine } from '../src/lookup/wording.js';
import { hostOf, ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const SERVICE = 'CrowdStrike';
const DEFAULT_BASE_URL = 'https://api.crowdstrike.com';
const DEFAULT_FALCON_URL = 'https://falcon.crowdstrike.com';

export type CrowdStrikeType = 'domain' | 'ipv4' | 'ipv6' | 'md5' | 'sha1' | 'sha256';

export interface CrowdStrikeNotFound {
  /** Devices of the tenant that saw the indicator. */
  device_count: number;
  /** Falcon console search for the value. */
  link: string;
  indicator_found: false;
}

export interface CrowdStrikeFound {
  device_count: number;
  link: string;
  indicator_found: true;
  /** UTC `YYYY-MM-DD`. */
  published_date: string | null;
  last_updated: string | null;
  actors: string[];
  /** `high`, `medium`, `low` or `unverified`. */
  malicious_confidence: string | null;
  threat_types: string[];
  kill_chain: string[];
  malware_families: string[];
  vulnerabilities: string[];
}

export type CrowdStrikeResult = CrowdStrikeNotFound | CrowdStrikeFound;

const strings = list(v.string('expected a string'));
const FalconErrors = list(v.looseObject({ code: numOrNull(), message: text() }));

/** Nothing is needed: no resource, or one without its count, is 0 devices. */
const DeviceCountSchema = jsonObject({
  resources: list(v.looseObject({ device_count: num() })),
  errors: FalconErrors,
});

/** Read when present: an indicator Falcon lists is found whatever it leaves out. */
const IndicatorSchema = v.looseObject({
  id: text(),
  indicator: text(),
  published_date: numOrNull(),
  last_updated: numOrNull(),
  malicious_confidence: text(),
  actors: strings,
  threat_types: strings,
  kill_chains: strings,
  malware_families: strings,
  vulnerabilities: strings,
});

const IntelSchema = jsonObject({
  resources: list(IndicatorSchema),
  errors: FalconErrors,
});

/** Any Falcon answer: its `resources` and `errors` (`errors` must be there, even empty). */
const EnvelopeSchema = v.looseObject({
  resources: list(v.unknown()),
  errors: v.nullish(v.unknown()),
});

/** What Falcon is asked about: its type name, the normalised value and the intel indicator id. */
export function crowdStrikeTarget(observable: Observable): { type: CrowdStrikeType; value: string; id: string } | null {
  switch (observable.type) {
    case 'IPv4':
    case 'IPv6':
    case 'FQDN':
    case 'URL': {
      const host = hostOf(observable)?.toLowerCase();
      if (!host) return null;
      const version = ipVersion(host);
      if (version === 0) return { type: 'domain', value: host, id: `domain_${host}` };
      return { type: version === 6 ? 'ipv6' : 'ipv4', value: host, id: `ip_address_${host}` };
    }
    case 'MD5':
    case 'SHA1':
    case 'SHA256': {
      const type = observable.type.toLowerCase() as 'md5' | 'sha1' | 'sha256';
      const value = observable.value.toLowerCase();
      return { type, value, id: `hash_${type}_${value}` };
    }
    default:
      return null;
  }
}

/** `{falcon_url}/search/?term=_all%3A~%27<value>%27`, any path of falcon_url kept. */
export function falconLink(falconUrl: unknown, value: string): string {
  return `${consoleBase(falconUrl)}/search/?term=_all%3A~%27${encodeURIComponent(value)}%27`;
}

/** The console's address without a trailing slash; the default one when the setting is no http(s) URL. */
function consoleBase(falconUrl: unknown): string {
  if (typeof falconUrl === 'string' && /^https?:\/\//i.test(falconUrl.trim())) {
    try {
      const url = new URL(falconUrl.trim());
      return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      // not a URL: the default console
    }
  }
  return DEFAULT_FALCON_URL;
}

function setting(ctx: EngineContext, name: string): string {
  const value = ctx.settings[name];
  if (typeof value !== 'string' || value.trim() === '') throw new EngineError(`not configured: ${name}`);
  return value.trim();
}

function baseUrl(ctx: EngineContext): string {
  const value = ctx.settings.base_url;
  return (typeof value === 'string' && value.trim() !== '' ? value.trim() : DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** The token endpoint and client of this call's settings. */
export function crowdStrikeTokenSpec(ctx: EngineContext): TokenSpec {
  return {
    service: SERVICE,
    tokenUrl: `${baseUrl(ctx)}/oauth2/token`,
    clientId: setting(ctx, 'client_id'),
    clientSecret: setting(ctx, 'client_secret'),
  };
}

/**
 * A Falcon error status as an error: 401 as the HttpStatusError withBearer refreshes on, the
 * others named after CrowdStrike, with Falcon's reason (`errors[0].message`), secrets masked.
 */
function refused(response: HttpResponse, http: HttpClient): Error {
  const error = statusError(response.status, errorReason(response.text(), http));
  if (response.status === 401) return error;
  return new EngineError(`${SERVICE}: ${error.message}`);
}

/** Falcon's "nothing here" 404: its own error body, no resources. */
function isFalconEmpty(response: HttpResponse): boolean {
  if (response.status !== 404) return false;
  try {
    const body = parseJson(response.text(), EnvelopeSchema);
    return body.errors !== undefined && body.resources.length === 0;
  } catch {
    return false;
  }
}

const EXPLAINED = [400, 401, 403, 404];

async function deviceCount(ctx: EngineContext, spec: TokenSpec, target: { type: string; value: string }): Promise<number> {
  return withBearer(ctx, spec, async (token, http) => {
    const response = await http.request(`${baseUrl(ctx)}/iocs/aggregates/indicators/device-count/v1`, {
      query: { type: target.type, value: target.value },
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      acceptStatus: EXPLAINED,
    });
    if (isFalconEmpty(response)) return 0;
    if (response.status >= 300) throw refused(response, http);
    return parseJson(response.text(), DeviceCountSchema).resources[0]?.device_count ?? 0;
  });
}

type Indicator = v.InferOutput<typeof IndicatorSchema>;

async function intelIndicator(ctx: EngineContext, spec: TokenSpec, id: string): Promise<Indicator | null> {
  return withBearer(ctx, spec, async (token, http) => {
    const response = await http.request(`${baseUrl(ctx)}/intel/entities/indicators/GET/v1`, {
      method: 'POST',
      json: { ids: [id] },
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      acceptStatus: EXPLAINED,
    });
    if (isFalconEmpty(response)) return null;
    if (response.status >= 300) throw refused(response, http);
    const resources = parseJson(response.text(), IntelSchema).resources;
    return resources.find((r) => r.id === id) ?? resources[0] ?? null;
  });
}

/** UTC `YYYY-MM-DD` of epoch seconds. */
export function utcDate(seconds: number | null | undefined): string | null {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return null;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? null : date.toISOString().slice(0, 10);
}

export async function crowdStrikeLookup(observable: Observable, ctx: EngineContext): Promise<CrowdStrikeResult | null> {
  const target = crowdStrikeTarget(observable);
  if (!target) return null;
  const spec = crowdStrikeTokenSpec(ctx);
  const [devices, indicator] = await Promise.all([deviceCount(ctx, spec, target), intelIndicator(ctx, spec, target.id)]);
  const link = falconLink(ctx.settings.falcon_url, target.value);
  if (!indicator) return { device_count: devices, link, indicator_found: false };
  return {
    device_count: devices,
    link,
    indicator_found: true,
    published_date: utcDate(indicator.published_date),
    last_updated: utcDate(indicator.last_updated),
    actors: indicator.actors,
    malicious_confidence: indicator.malicious_confidence,
    threat_types: indicator.threat_types,
    kill_chain: indicator.kill_chains,
    malware_families: indicator.malware_families,
    vulnerabilities: indicator.vulnerabilities,
  };
}

function devicesText(n: number): string {
  return n > 0 ? `seen on ${count(n, 'device')}` : 'seen on no device';
}

/** `high confidence · actors FANCYBEAR · Emotet · seen on 3 devices`; `not in Falcon Intelligence · seen on no device`. */
export function crowdStrikeSummary(result: CrowdStrikeResult): string {
  if (!result.indicator_found) return `not in Falcon Intelligence · ${devicesText(result.device_count)}`;
  const parts = [result.malicious_confidence ? `${result.malicious_confidence} confidence` : 'in Falcon Intelligence'];
  if (result.actors.length > 0) parts.push(`actors ${result.actors.join(', ')}`);
  if (result.malware_families.length > 0) parts.push(result.malware_families.join(', '));
  parts.push(devicesText(result.device_count));
  return parts.join(' · ');
}

/**
 * What Falcon says about the observable's risk. Falcon Intelligence lists only indicators tied to
 * malicious activity; `malicious_confidence` grades how sure and how recent that is (for an IP or
 * a domain, high: within 60 days, medium: 60 to 120, low: older; unverified: not reviewed yet).
 * Devices that saw it are prevalence, not a verdict (every host resolves google.com): they only
 * add weight to the reason. Not in Falcon Intelligence judges nothing: a commercial feed not
 * knowing something is not evidence that it is harmless.
 */
export function crowdStrikeEvidence(result: CrowdStrikeResult | null): Evidence | undefined {
  if (!result || result.indicator_found !== true) return undefined; // not listed, or nothing to report: no judgement
  const confidence = typeof result.malicious_confidence === 'string' ? result.malicious_confidence.toLowerCase() : null;
  const context = [
    ...(Array.isArray(result.actors) && result.actors.length > 0 ? [`actors ${result.actors.join(', ')}`] : []),
    ...(Array.isArray(result.malware_families) ? result.malware_families : []),
  ];
  const seen = typeof result.device_count === 'number' && result.device_count > 0 ? [`seen on ${count(result.device_count, 'device')} of your tenant`] : [];
  const what = confidence ? `Falcon Intelligence indicator, ${confidence} malicious confidence` : 'Falcon Intelligence indicator';
  const reason = oneLine([what, ...context, ...seen].join(' · '), 240);
  // High confidence: Falcon's analysts tie it to current malicious activity.
  if (confidence === 'high') return { level: 'malicious', reason };
  // Medium, low, unverified or ungraded: listed as a threat indicator, but older or unconfirmed.
  return { level: 'suspicious', reason };
}

/** The card: devices, the intelligence verdict and context, dates, then the Falcon console search. */
export function crowdStrikeDetails(result: CrowdStrikeResult): DetailField[] {
  const found = result.indicator_found ? result : null;
  return fields(
    field('Devices', result.device_count),
    field('Falcon Intelligence', found ? `malicious confidence ${found.malicious_confidence || 'unknown'}` : 'not found'),
    field('Actors', found?.actors),
    field('Malware families', found?.malware_families),
    field('Threat types', found?.threat_types),
    field('Kill chain', found?.kill_chain),
    field('Vulnerabilities', found?.vulnerabilities),
    field('Published', found?.published_date),
    field('Last updated', found?.last_updated),
    sourceLink('Open in Falcon', result.link),
  );
}

export default defineEngine<CrowdStrikeResult>({
  id: 'provider_04',
  service: 'crowdstrike',
  label: 'CrowdStrike',
  description: 'Devices of your CrowdStrike Falcon tenant that saw an IP, domain, URL host or file hash, and Falcon Intelligence on it (API client required)',
  tags: ['hash', 'IP', 'domain', 'URL'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'client_id', label: 'API client ID', env: ['CROWDSTRIKE_CLIENT_ID'] },
    { setting: 'client_secret', label: 'API client secret', env: ['CROWDSTRIKE_CLIENT_SECRET'] },
    // Only builds links; optional, and no secret.
    { setting: 'falcon_url', label: 'Falcon console URL', required: false, secret: false, env: ['CROWDSTRIKE_FALCON_BASE_URL'] },
  ],
  defaults: {
    timeout_ms: 5000,
    base_url: DEFAULT_BASE_URL,
    falcon_url: DEFAULT_FALCON_URL,
  },
  summary: crowdStrikeSummary,
  evidence: crowdStrikeEvidence,
  details: crowdStrikeDetails,
  run: crowdStrikeLookup,
  // `oas doctor`: a token requested with the client's credentials (the OAuth2 token endpoint).
  check: { probe: (ctx) => grantedToken(ctx, crowdStrikeTokenSpec(ctx)) },
});
