/**
 * The engine contract. One engine = one file in `engines/` whose default export is the value
 * returned by `defineEngine`. The catalog is built from these declarations: nothing else in the
 * code base names a particular engine.
 */
import type { GenericSchema, InferOutput } from 'valibot';
import type { Observable, ObservableType } from '../observables/types.js';
import type { Disclosure } from '../marking/levels.js';

/** The two variants of the spec's engine catalog. */
export const CATALOG_VARIANTS = ['main', 'older'] as const;
export type CatalogVariant = (typeof CATALOG_VARIANTS)[number];
/**
 * Where an engine is listed: a spec variant, `beyond` the spec (the reference's newer engines), or
 * `custom`: defined by the operator's configuration (`custom_engines`, src/custom/).
 */
export type CatalogListing = CatalogVariant | 'beyond' | 'custom';

/** Tags exactly as the spec's engine catalog spells them. */
export type EngineTag =
  | 'default'
  | 'the service'
  | 'IP'
  | 'domain'
  | 'URL'
  | 'hash'
  | 'email'
  | 'risk'
  | 'VPN'
  | 'proxy'
  | 'ports'
  | 'free_no_key'
  | 'scraping';


/**
 * One line of a results card. `href` (http or https only) makes the value a link to the source.
 * The pages read it as `DetailFieldView` (src/view/types.d.ts, the same shape).
 */
export interface DetailField {
  label: string;
  value: string;
  href?: string;
}

/**
 * What one engine's answer says about its observable (the verdict, src/verdict/verdict.ts, takes
 * the most severe of them).
 */
export interface Evidence {
  level: 'malicious' | 'suspicious' | 'clean';
  /** One line, without the engine's name (e.g. "54/76 engines flag it"). */
  reason: string;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON with the matching content type. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  body?: string;
  /** Non-2xx statuses that are answers rather than errors (e.g. 404 meaning "not found"). */
  acceptStatus?: readonly number[];
  /** Retries for this request; defaults to the call's setting. */
  retries?: number;
  /** Cap on this request (each attempt), within the call's deadline; leaves time for a fallback. */
  timeoutMs?: number;
  /** Verify the upstream's TLS certificate; default: the setting `ssl_verify`. */
  sslVerify?: boolean;
  /** Follow redirects (default true); false: a 3xx is the answer (webhook deliveries: their host was checked). */
  followRedirects?: boolean;
}

export interface HttpResponse {
  status: number;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  text(): string;
}

/**
 * The HTTP client an engine call gets (`ctx.http`), bound to the call's deadline, retries and
 * secrets; src/http/client.ts implements it (proxy, TLS, timeouts, redaction).
 */
export interface HttpClient {
  /** Redacts this call's secrets and credential-looking URL parameters from a text. */
  redact(text: string): string;
  /**
   * The same client (deadline, retries, pool), also redacting secrets only known at run time,
   * such as an OAuth access token.
   */
  withSecrets(extra: readonly string[]): HttpClient;
  request(url: string | URL, options?: RequestOptions): Promise<HttpResponse>;
  /** GET/POST expecting JSON, validated against `schema`: a malformed answer is a clean error. */
  json<S extends GenericSchema>(url: string | URL, schema: S, options?: RequestOptions): Promise<InferOutput<S>>;
  text(url: string | URL, options?: RequestOptions): Promise<string>;
}

/** A credential an engine needs, e.g. an API key. Its value is read from `engines.<id>.<setting>`. */
export interface CredentialSpec {
  /** Setting name under `engines.<id>` (`api_key`, `cx`, ...). */
  setting: string;
  /** Human label shown by `oas engines` ("API key"). */
  label: string;
  /** Extra environment variables accepted for it (besides OAS_<ALIAS>_<SETTING>). */
  env?: readonly string[];
  /** When false the engine runs without it (and uses it when set). Default true. */
  required?: boolean;
  /**
   * When false the value is no secret (a self-hosted server's `base_url`): it may be shown and is
   * not masked. Default true: the value never leaves the process.
   */
  secret?: boolean;
  /**
   * Read only from the environment variables of `env` (a custom engine's secrets): no
   * `engines.<id>.<setting>` and no OAS_<SERVICE>_<SETTING>, and "where to set it" names the first.
   */
  envOnly?: boolean;
}

/** Settings every engine understands, plus its own (`base_url`, `bootstrap_url`, ...). */
export interface EngineSettings {
  timeout_ms: number;
  /** Concurrent calls of this engine across the whole process. */
  concurrency: number;
  /** Retries on network errors, 429 and 5xx. */
  retries: number;
  [setting: string]: unknown;
}

/** Small persistent key/value space private to one engine (bootstrap files, lists, ...). */
export interface EngineStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
}

/** Everything a lookup may use. Engines do no I/O except through these. */
export interface EngineContext {
  /** Merged settings: engine defaults, then `engines.<id>` from the configuration. */
  settings: EngineSettings;
  /** Shared HTTP client (proxy, TLS, timeouts, retries, redaction), bound to this call's deadline. */
  http: HttpClient;
  /** DNS servers to use (`ip` or `ip:port`); empty means the system's resolvers. */
  dnsServers: readonly string[];
  /** Aborted when the call's deadline passes or the analysis is abandoned. */
  signal: AbortSignal;
  /** Epoch milliseconds at which this call times out. */
  deadline: number;
  /** Engine-private persistent storage. */
  store: EngineStore;
  /** Absolute path of the data directory (for engines that keep files). */
  dataDir: string;
  /** Results of the engines this one depends on, for the same observable (by engine id). */
  dependencies: Readonly<Record<string, unknown>>;
}

export interface EngineDefinition<R = unknown> {
  /** Identifier from the spec's catalog, e.g. `rdap_whois`, `provider_11`. */
  id: string;
  /** Upstream service name, accepted as an alias of the id (e.g. `ipapi`). */
  service: string;
  /** Short display label. */
  label: string;
  description: string;
  /**
   * The catalog variants the engine belongs to (default: both). An engine that belongs only to
   * `older` (the legacy `rdap`) is still offered by the main catalog as an extra, never default.
   * None (`[]`): an engine beyond the spec (the reference's newer engines, such as `crtsh`),
   * offered by every variant as an extra, never default.
   */
  catalogs: readonly CatalogVariant[];
  /**
   * What differs in a variant: tags, credentials, defaults, even the lookup itself (the older
   * catalog's key-less scraping engines). Applied when the catalog of that variant is built.
   */
  variants?: Partial<Record<CatalogVariant, EngineOverrides<R>>>;
  /** Set on a definition the catalog resolved with overrides: part of its cache key. */
  cacheScope?: string;
  /**
   * Defined by the operator's configuration (`custom_engines`), not by a file of `engines/`: listed
   * as `custom`, offered by every variant, never a default.
   */
  custom?: boolean;
  tags: readonly EngineTag[];
  /** Observable types the lookup accepts. */
  types: readonly ObservableType[];
  /**
   * For IP-only engines: also run on the first IP obtained by resolving a domain or URL
   * ("reversed IP").
   */
  reversedIp: boolean;
  /** The engine whose answer is the resolution of a domain/URL (reverse_dns). */
  pivot: boolean;
  /** Whether the lookup makes sense for private/reserved addresses. */
  acceptsPrivateIp: boolean;
  /** Ids of engines whose results this one needs (they run first). */
  dependsOn: readonly string[];
  /**
   * Where the lookup sends an observable (issue 34): `none` (nothing leaves the process: local
   * lists), `internal` (a server or tenant the team runs: MISP, OpenCTI, an EDR...) or
   * `third_party` (a public service). With `touchesTarget`, it sets the engine's default ceilings
   * (`max_tlp`, `max_pap`: src/marking/levels.ts).
   */
  disclosure: Disclosure;
  /**
   * The lookup can reach infrastructure the observable names (resolving a domain, reverse DNS of
   * an address): what PAP:AMBER and RED forbid.
   */
  touchesTarget: boolean;
  credentials: readonly CredentialSpec[];
  /** Defaults for the engine's settings (timeout_ms at least). */
  defaults: Partial<EngineSettings> & { timeout_ms: number };
  /** Optional valibot schema for `engines.<id>` in the configuration file. */
  settingsSchema?: GenericSchema;
  /** One line for tables: what an analyst wants to read first. */
  summary(result: R): string;
  /**
   * What the answer says about the observable's risk (src/verdict/verdict.ts): `malicious`,
   * `suspicious` or `clean` with a one-line reason, or undefined when it does not judge. Also
   * called with `null` (nothing to report): a threat list without a hit is evidence of `clean`.
   * Absent: the engine never judges (DNS, registration data, search hits).
   */
  evidence?(result: R | null): Evidence | undefined;
  /**
   * The autonomous system the answer names for the address, as the answer spells it (the graph
   * view's ASN nodes, src/view/graph-view.ts, normalise it); undefined when it names none. Absent:
   * the engine's answers never name one.
   */
  asn?(result: R): EngineAsn | undefined;
  /**
   * The fields a results card shows, in order, with links to the source. Optional: without it the
   * card lists the result's own fields (see `src/view/details.ts`).
   */
  details?(result: R, target: string): DetailField[];
  /** The lookup. Returns the result object, or null when there is nothing to report. */
  run(observable: Observable, ctx: EngineContext): Promise<R | null>;
  /**
   * How `oas doctor` checks the engine with one call to its upstream (src/doctor/engines.ts).
   * Absent: the lookup of a harmless value of its first type (src/doctor/harmless.ts).
   */
  check?: EngineCheck;
}

/**
 * `probe`: one request to a documented status or account endpoint (Shodan's `/api-info`, MISP's
 * `/servers/getVersion`), made through `ctx.http` with the engine's settings as a lookup makes
 * them: it resolves when the upstream accepts them and throws as the lookup would otherwise.
 * `observable`: a harmless value the lookup runs on instead of the default one (its answer is kept
 * nowhere). `none`: the engine calls nothing that can be checked.
 */
export type EngineCheck =
  | { probe(ctx: EngineContext): Promise<unknown> }
  | { observable: Observable }
  | 'none';

/** An autonomous system an engine's answer names: `asn` as `AS13335`, `13335` or 13335. */
export interface EngineAsn {
  asn: string | number | null | undefined;
  /** Its owner; `Unknown` or empty is none. */
  org?: string | null | undefined;
  /** On a bad-ASN list (bad_asn). */
  listed?: boolean;
}

/** The declarations a catalog variant may replace. */
export type EngineOverrides<R> = Partial<
  Pick<EngineDefinition<R>, 'label' | 'description' | 'tags' | 'types' | 'credentials' | 'defaults' | 'settingsSchema' | 'summary' | 'details' | 'evidence' | 'asn' | 'run'>
>;

/**
 * Declarations with a default. `disclosure` and `touchesTarget` default to the safest reading (a
 * third party, not reaching the target); every file of `engines/` states both all the same
 * (tests/catalog.test.ts).
 */
type Optional = 'catalogs' | 'reversedIp' | 'pivot' | 'acceptsPrivateIp' | 'dependsOn' | 'credentials' | 'disclosure' | 'touchesTarget';

/** Fills the optional declarations with their defaults. */
export function defineEngine<R>(
  def: Omit<EngineDefinition<R>, Optional> & Partial<Pick<EngineDefinition<R>, Optional>>,
): EngineDefinition<R> {
  return {
    catalogs: CATALOG_VARIANTS,
    reversedIp: false,
    pivot: false,
    acceptsPrivateIp: false,
    dependsOn: [],
    credentials: [],
    disclosure: 'third_party',
    touchesTarget: false,
    ...def,
  };
}

/** A failure an engine reports on purpose: its message is shown to the user as is (one line). */
export class EngineError extends Error {
  override name = 'EngineError';
}

/**
 * The upstream refused the engine's credentials (a 401/403, or its own words for it), as one line:
 * `<service>: authentication failed (<detail>)`. The runner adds which setting to check: those of
 * `settings` when the upstream said which credential it refused (`client_secret`), else every
 * secret credential of the engine.
 */
export class CredentialsRefusedError extends EngineError {
  override name = 'CredentialsRefusedError';
  readonly settings: readonly string[] | undefined;
  constructor(service: string, detail: string, settings?: readonly string[]) {
    super(`${service}: authentication failed (${detail})`);
    this.settings = settings;
  }
}
