/**
 * provider_14 (`mde`) — Microsoft Defender for Endpoint (engines.md 5.17): how prevalent an IP,
 * a domain, a URL's host or a file is in the organisation, from the Defender API's `stats`
 * endpoints, plus, for a file, its signature and verdict.
 *
 * - Token: OAuth2 v1 client credentials, `POST {login_url}/{tenant_id}/oauth2/token`, form
 *   `resource` (`base_url`, i.e. `https://api.securitycenter.microsoft.com`; setting `resource`
 *   overrides it), `client_id`, `client_secret`, `grant_type=client_credentials` (shared token
 *   cache: src/http/oauth.ts).
 * - `GET {base_url}/api/files/<hash>/stats` and `GET {base_url}/api/files/<hash>`,
 *   `GET {base_url}/api/ips/<ip>/stats`, `GET {base_url}/api/domains/<host>/stats`.
 *
 * Result as the reference's: the stats object with all its keys (`orgFirstSeen`/`orgLastSeen`
 * cut to their UTC date), then `link` (the Microsoft Defender portal page), then, for a hash,
 * `issuer`, `signer`, `isValidCertificate`, `filePublisher`, `fileProductName`,
 * `determinationType`, `determinationValue` from the file call, each `"Unknown"` when absent.
 * MDE's 404 on the stats call (unknown file, domain or IP) is "not found" (`null`); a 404 on
 * the file call leaves those fields "Unknown".
 *
 * Differences from the reference (engines.md 8):
 * - 2: every call, the token request and the file call included, has the engine's deadline.
 * - 10: private addresses are queried (HEAD returned null for them).
 * - 15: a URL's host comes from the shared URL parser (userinfo, ports, IPv6 literals); a URL
 *   whose host is an IP address is looked up under `/api/ips/`.
 * - 18: the token lives in this process's memory only (never a file, never the data directory),
 *   is reused until `expires_in` minus a margin, and a 401 refreshes it once; no unverified JWT
 *   decides whether a cached token is trusted.
 * - 3 and 19: no request without credentials (the runner refuses first); a refused token is a
 *   one-line `Microsoft Defender for Endpoint: authentication failed (...)`, secrets masked;
 *   403, 5xx, 429 (after retries), a malformed answer and a timeout are reported, not `null`.
 * - The URL link's `url` parameter is URL-encoded (the reference pasted the raw URL).
 * - Only the stats object is needed (issue 26). A file field sent as null is "Unknown", as an
 *   absent one was in the reference (which copied null as it was); one sent as "" stays "" (as in
 *   the reference, issue 32); a `isValidCertificate` sent as 0/1 or "true"/"false" is the
 *   boolean it means. The stats keys are returned as MDE sent them; a date left out, null or ""
 *   stays so (as in the reference).
 */
import * as v from 'valibot';
import { defineEngine, type DetailField, type EngineContext, EngineError, type Evidence, type HttpClient, type HttpResponse } from '../src/engine/contract.js';
import { jsonObject, parseJson, parseWith } from '../src/http/client.js';
import { flagOrNull, text } from '../src/http/lenient.js';
import { statusError } from '../src/http/errors.js';
import { errorReason, grantedToken, withBearer, type TokenSpec } from '../src/http/oauth.js';
import { oneLine } from '../src/lookup/wording.js';
import { hostOf, ipVersion } from '../src/observables/host.js';
import type { Observable } from '../src/observables/types.js';
import { field, fields, sourceLink } from '../src/lookup/fields.js';

const SERVICE = 'Microsoft Defender for Endpoint';
const DEFAULT_BASE_URL = 'https://api.securitycenter.microsoft.com';
const DEFAULT_LOGIN_URL = 'https://login.microsoftonline.com';
const PORTAL = 'https://security.microsoft.com';

/** The file-info fields copied into a hash's result, in this order. */
export const FILE_FIELDS = [
  'issuer', 'signer', 'isValidCertificate', 'filePublisher', 'fileProductName', 'determinationType', 'determinationValue',
] as const;

/** The stats object (all of MDE's keys) with `link`, and the file fields for a hash. */
export interface MdeResult {
  [key: string]: unknown;
  /** Distinct devices of the organisation (IP stats call it `organizationPrevalence`, domains `orgPrevalence`). */
  orgPrevalence?: number | string | null;
  organizationPrevalence?: number | string | null;
  /** UTC `YYYY-MM-DD`. */
  orgFirstSeen?: string | null;
  orgLastSeen?: string | null;
  globalPrevalence?: number | string | null;
  topFileNames?: string[];
  link: string;
  issuer?: unknown;
  signer?: unknown;
  isValidCertificate?: unknown;
  filePublisher?: unknown;
  fileProductName?: unknown;
  determinationType?: unknown;
  determinationValue?: unknown;
}

/**
 * The stats object, its keys in MDE's order (no entries declared: a looseObject with entries would
 * move the known ones first). Needed: that it is an object; nothing in it is.
 */
const StatsRecordSchema = jsonObject({});
/** The members the engine reads, when present (absent, null or "": left as MDE sent them); a date is text. */
const StatsSchema = v.looseObject({
  orgFirstSeen: v.nullish(v.string('expected a date')),
  orgLastSeen: v.nullish(v.string('expected a date')),
});

/**
 * The file call's fields, each read when present: absent or null is the reference's "Unknown",
 * a text is kept as sent (`""` included); `isValidCertificate` sent as 0/1 or "true"/"false" is
 * read as a boolean, sent as `""` kept as `""` (it says neither yes nor no).
 */
const FileInfoSchema = jsonObject({
  ...Object.fromEntries(FILE_FIELDS.map((name) => [name, text()])),
  isValidCertificate: v.optional(v.union([v.literal(''), flagOrNull()]), null),
});

/** MDE's error body: `{"error": {"code": "ResourceNotFound", "message": "...", "target": "..."}}`. */
const MdeErrorSchema = v.looseObject({
  error: v.looseObject({ code: v.string(), message: v.nullish(v.string()) }),
});

/** The API path of an observable's stats, the portal link, and whether it is a file. */
export function mdeTarget(observable: Observable): { path: string; link: string; file: string | null } | null {
  switch (observable.type) {
    case 'MD5':
    case 'SHA1':
    case 'SHA256': {
      const hash = observable.value.toLowerCase();
      return { path: `/api/files/${hash}/stats`, link: `${PORTAL}/file/${hash}`, file: hash };
    }
    case 'IPv4':
    case 'IPv6': {
      const ip = observable.value.toLowerCase();
      return { path: `/api/ips/${encodeURIComponent(ip)}/stats`, link: `${PORTAL}/ip/${ip}/overview`, file: null };
    }
    case 'FQDN': {
      const host = hostOf(observable);
      if (!host) return null;
      return { path: `/api/domains/${encodeURIComponent(host)}/stats`, link: `${PORTAL}/domains?urlDomain=${encodeURIComponent(host)}`, file: null };
    }
    case 'URL': {
      const host = hostOf(observable)?.toLowerCase();
      if (!host) return null;
      const collection = ipVersion(host) === 0 ? 'domains' : 'ips';
      return { path: `/api/${collection}/${encodeURIComponent(host)}/stats`, link: `${PORTAL}/url?url=${encodeURIComponent(observable.value)}`, file: null };
    }
    default:
      return null;
  }
}

/**
 * The UTC calendar day of an MDE timestamp: `2017-07-30T13:36:06Z` -> `2017-07-30`; a timestamp
 * with an offset is converted to UTC first. Anything else is cut before `T`, as the reference did.
 */
export function utcDay(value: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim());
  if (match && match[2] && match[2].toUpperCase() !== 'Z') {
    const at = Date.parse(value.trim().replace(/(\.\d{3})\d+/, '$1'));
    if (!Number.isNaN(at)) return new Date(at).toISOString().slice(0, 10);
  }
  return match ? match[1]! : value.split('T')[0]!;
}

function setting(ctx: EngineContext, name: string): string {
  const value = ctx.settings[name];
  if (typeof value !== 'string' || value.trim() === '') throw new EngineError(`not configured: ${name}`);
  return value.trim();
}

function urlSetting(ctx: EngineContext, name: string, fallback: string): string {
  const value = ctx.settings[name];
  return (typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback).replace(/\/+$/, '');
}

/** The token endpoint, resource and client of this call's settings. */
export function mdeTokenSpec(ctx: EngineContext): TokenSpec {
  const tenant = setting(ctx, 'tenant_id');
  return {
    service: SERVICE,
    tokenUrl: `${urlSetting(ctx, 'login_url', DEFAULT_LOGIN_URL)}/${encodeURIComponent(tenant)}/oauth2/token`,
    clientId: setting(ctx, 'client_id'),
    clientSecret: setting(ctx, 'client_secret'),
    settings: { clientId: 'client_id', clientSecret: 'client_secret', tenant: 'tenant_id' },
    form: {
      resource: urlSetting(ctx, 'resource', urlSetting(ctx, 'base_url', DEFAULT_BASE_URL)),
      grant_type: 'client_credentials',
    },
  };
}

/** MDE's own "not found": a 404 with its error envelope (not a proxy's or a wrong base_url's 404). */
function isMdeNotFound(response: HttpResponse): boolean {
  if (response.status !== 404) return false;
  try {
    parseJson(response.text(), MdeErrorSchema);
    return true;
  } catch {
    return false;
  }
}

/** 401 as the HttpStatusError withBearer refreshes on; other refusals named after the service, with MDE's reason. */
function refused(response: HttpResponse, http: HttpClient): Error {
  const error = statusError(response.status, errorReason(response.text(), http));
  return response.status === 401 ? error : new EngineError(`${SERVICE}: ${error.message}`);
}

/** GET `path` with a bearer token: the JSON body, or null for MDE's 404. */
async function getJson<S extends v.GenericSchema>(ctx: EngineContext, spec: TokenSpec, path: string, schema: S): Promise<v.InferOutput<S> | null> {
  return withBearer(ctx, spec, async (token, http) => {
    const response = await http.request(`${urlSetting(ctx, 'base_url', DEFAULT_BASE_URL)}${path}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      acceptStatus: [400, 401, 403, 404],
    });
    if (isMdeNotFound(response)) return null;
    if (response.status >= 300) throw refused(response, http);
    return parseJson(response.text(), schema);
  });
}

export async function mdeLookup(observable: Observable, ctx: EngineContext): Promise<MdeResult | null> {
  const target = mdeTarget(observable);
  if (!target) return null;
  const spec = mdeTokenSpec(ctx);
  const [stats, info] = await Promise.all([
    getJson(ctx, spec, target.path, StatsRecordSchema),
    target.file ? getJson(ctx, spec, `/api/files/${target.file}`, FileInfoSchema) : Promise.resolve(null),
  ]);
  if (!stats) return null;
  const { orgFirstSeen, orgLastSeen } = parseWith(StatsSchema, stats);
  const result: MdeResult = { ...stats, link: target.link };
  if (target.file) {
    for (const name of FILE_FIELDS) result[name] = info?.[name] ?? 'Unknown';
  }
  if (orgFirstSeen) result.orgFirstSeen = utcDay(orgFirstSeen);
  if (orgLastSeen) result.orgLastSeen = utcDay(orgLastSeen);
  return result;
}

/** Devices of the organisation that saw it: `orgPrevalence` or `organizationPrevalence`. */
export function prevalenceOf(result: MdeResult): string | null {
  const value = result.orgPrevalence ?? result.organizationPrevalence;
  return typeof value === 'number' || (typeof value === 'string' && value !== '') ? String(value) : null;
}

function known(value: unknown): string | null {
  return value === undefined || value === null || value === '' || value === 'Unknown' ? null : String(value);
}

/** `prevalence 63515 · first seen 2017-07-30 · last seen 2017-08-29 · Clean (Good)`. */
export function mdeSummary(result: MdeResult): string {
  const prevalence = prevalenceOf(result);
  const parts = [prevalence !== null ? `prevalence ${prevalence}` : 'no prevalence'];
  if (result.orgFirstSeen) parts.push(`first seen ${result.orgFirstSeen}`);
  if (result.orgLastSeen) parts.push(`last seen ${result.orgLastSeen}`);
  const determination = known(result.determinationType);
  if (determination) {
    const value = known(result.determinationValue);
    parts.push(value ? `${determination} (${value})` : determination);
  }
  return parts.join(' · ');
}

/**
 * What Defender says about the observable's risk: only a file's determination judges. Prevalence
 * and first/last seen (in the organisation or the world) are how common it is, not whether it is
 * bad, so an IP, a domain or a file without a determination gives no evidence.
 */
export function mdeEvidence(result: MdeResult | null): Evidence | undefined {
  if (!result) return undefined; // unknown to Defender: no judgement
  const type = known(result.determinationType);
  if (!type) return undefined; // no determination (IP, domain, or "Unknown"): prevalence alone says nothing
  const value = known(result.determinationValue);
  const reason = oneLine(`Defender determination ${type}${value ? ` (${value})` : ''}`, 240);
  const normalised = type.toLowerCase().replace(/[^a-z]/g, '');
  // Malware: Defender's antivirus or analysts classified the file as malicious.
  if (normalised === 'malware' || normalised === 'malicious') return { level: 'malicious', reason };
  // PUA / potentially unwanted or suspicious: not malware, not to be trusted either.
  if (normalised === 'pua' || normalised.includes('unwanted') || normalised === 'suspicious') return { level: 'suspicious', reason };
  // Clean: Defender judged the file good (usually a validly signed, well-known file).
  if (normalised === 'clean') return { level: 'clean', reason };
  return undefined; // any other value (NotAvailable...): no judgement
}

/** The card: prevalence and dates in the organisation, the world, the file's verdict and signature, then the portal page. */
export function mdeDetails(result: MdeResult): DetailField[] {
  const determination = known(result.determinationType);
  const value = known(result.determinationValue);
  const certificate = result.isValidCertificate;
  return fields(
    field('Prevalence in the organisation', prevalenceOf(result)),
    field('First seen', result.orgFirstSeen),
    field('Last seen', result.orgLastSeen),
    field('Global prevalence', result.globalPrevalence),
    field('File names', Array.isArray(result.topFileNames) ? result.topFileNames : null),
    field('Determination', determination ? (value ? `${determination} (${value})` : determination) : null),
    field('Signer', known(result.signer)),
    field('Issuer', known(result.issuer)),
    field('Valid certificate', typeof certificate === 'boolean' ? certificate : null),
    field('Publisher', known(result.filePublisher)),
    field('Product', known(result.fileProductName)),
    sourceLink('Open in Microsoft Defender', result.link),
  );
}

export default defineEngine<MdeResult>({
  id: 'provider_14',
  service: 'mde',
  label: 'Microsoft Defender for Endpoint',
  description: 'Prevalence in your organisation of an IP, domain, URL host or file hash, and a file\'s signature and verdict, from Microsoft Defender for Endpoint (Azure AD app required)',
  tags: ['hash', 'IP', 'domain', 'URL'],
  types: ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256'],
  acceptsPrivateIp: true,
  disclosure: 'internal',
  touchesTarget: false,
  credentials: [
    { setting: 'tenant_id', label: 'Tenant ID', env: ['MDE_TENANT_ID'], secret: false },
    { setting: 'client_id', label: 'Client ID', env: ['MDE_CLIENT_ID'] },
    { setting: 'client_secret', label: 'Client secret', env: ['MDE_CLIENT_SECRET'] },
  ],
  defaults: {
    timeout_ms: 5000,
    base_url: DEFAULT_BASE_URL,
    login_url: DEFAULT_LOGIN_URL,
  },
  /** `resource`: the token's audience when it is not `base_url` (a known setting of the engine). */
  settingsSchema: v.looseObject({ resource: v.optional(v.pipe(v.string('expected a URL'), v.url('expected a URL such as https://api.securitycenter.microsoft.com'))) }),
  summary: mdeSummary,
  evidence: mdeEvidence,
  details: mdeDetails,
  run: mdeLookup,
  // `oas doctor`: a token requested with the client's credentials (the OAuth2 token endpoint).
  check: { probe: (ctx) => grantedToken(ctx, mdeTokenSpec(ctx)) },
});
