/** The configuration's keys, their types and defaults. One table drives the file, env and docs. */
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import type { CatalogVariant } from '../engine/contract.js';
import { PAP_LEVELS, TLP_LEVELS, papOf, tlpOf } from '../marking/levels.js';

/**
 * Every schema here carries its own messages ("expected ..."): `src/config/load.ts` adds what it
 * got, and turns any message valibot would write by itself into the same form.
 */

/** `ip`, `ip:port`, `ipv6` or `[ipv6]:port`, with a real address and a port from 1 to 65535. */
export function isHostPort(value: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(value);
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [value, undefined];
  if (bracketed ? isIP(host) !== 6 : isIP(host) === 0) return false;
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}

/** An IP address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrRange(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d{1,3}$/.test(bits) && n <= (family === 4 ? 32 : 128);
}

/** An absolute http:// or https:// URL with a host. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const HOST_PORT = 'expected an IP address (ip or ip:port)';
const hostPort = v.pipe(v.string(HOST_PORT), v.check(isHostPort, HOST_PORT));
const positiveInt = v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(1, 'expected a number of at least 1'));
const nonNegativeInt = v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(0, 'expected a number of at least 0'));
const PROXY = 'expected an http:// or https:// URL such as http://proxy.example:3128, or "" for a direct connection';
const proxyUrl = v.pipe(v.string(PROXY), v.trim(), v.check((s) => s === '' || isHttpUrl(s), PROXY));
const URL_MESSAGE = 'expected an http:// or https:// URL';
const httpUrl = v.pipe(v.string(URL_MESSAGE), v.check(isHttpUrl, URL_MESSAGE));
const REDIS = 'expected a redis:// or rediss:// URL such as redis://127.0.0.1:6379, or "" for none';
const redisUrl = v.pipe(v.string(REDIS), v.trim(), v.check((s) => s === '' || isRedisUrl(s), REDIS));

/** redis://[[user]:password@]host[:port][/db] or rediss:// (TLS). */
export function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '' && /^(\/\d{0,2})?$/.test(url.pathname);
  } catch {
    return false;
  }
}

/** An object keyed by names: valibot's record alone also takes a list (its indexes as keys). */
function keyedObject<S extends v.GenericSchema>(schema: S, message: string) {
  return v.pipe(v.custom<unknown>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), message), schema);
}

const TLP_MESSAGE = `expected a TLP level: ${TLP_LEVELS.join(', ')} (with or without "TLP:", in any case)`;
const PAP_MESSAGE = `expected a PAP level: ${PAP_LEVELS.join(', ')} (with or without "PAP:", in any case)`;
/** A TLP or PAP level as the API reads one (`TLP:RED`, `red`): kept as written, read with parseTlp/parsePap. */
const tlpLevel = v.pipe(v.string(TLP_MESSAGE), v.check((value) => tlpOf(value) !== undefined, TLP_MESSAGE));
const papLevel = v.pipe(v.string(PAP_MESSAGE), v.check((value) => papOf(value) !== undefined, PAP_MESSAGE));
const NETWORK = 'expected a CIDR range or address such as 10.20.0.0/16';
const DOMAIN_SUFFIX = 'expected a domain suffix such as corp.example or .corp.example';

/**
 * The webhooks of issue 36 (src/automation/): the events an endpoint may subscribe to (the same
 * list as src/automation/events.ts's WEBHOOK_EVENTS, which sits above this layer; a test keeps
 * them equal), its body's formats, and the verdicts from the least to the most severe.
 */
export const WEBHOOK_EVENT_NAMES = ['analysis.completed', 'observable.verdict', 'watchlist.changed'] as const;
export const WEBHOOK_FORMATS = ['standard', 'slack', 'teams'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
const MIN_VERDICTS = ['unknown', 'clean', 'suspicious', 'malicious'] as const;

/** One endpoint of the setting `webhooks`, its defaults filled in. */
export interface WebhookSettings {
  /** Identifies it in `oas webhooks test`, metrics and audit lines. */
  name: string;
  url: string;
  events: (typeof WEBHOOK_EVENT_NAMES)[number][];
  /** The environment variable holding its `whsec_...` secret (required for `standard`). */
  secret_env?: string;
  format: WebhookFormat;
  /** `observable.verdict` only for observables at least this severe. */
  min_verdict: (typeof MIN_VERDICTS)[number];
  /** Above this TLP an event's data is only the analysis's id and link. */
  max_tlp: string;
}

/**
 * The targets of `oas push` (issue 37): MISP, OpenCTI and TheHive. Each may leave `url` and its
 * credential out: they default to the MISP and OpenCTI engines' settings, and the credential to
 * its environment variable (`OAS_PUSH_MISP_API_KEY`, `OAS_PUSH_OPENCTI_TOKEN`,
 * `OAS_PUSH_THEHIVE_API_KEY`); src/push/settings.ts resolves them.
 */
const pushCommon = {
  url: v.optional(httpUrl),
  /** The highest TLP this target may receive (default RED: the team's own platform). */
  max_tlp: v.optional(tlpLevel),
  ssl_verify: v.optional(v.boolean('expected true or false')),
  timeout_ms: v.optional(positiveInt),
  retries: v.optional(nonNegativeInt),
};
const PUSH_OBJECT = (keys: string) => `expected an object of settings: ${keys}`;
const pushSchema = v.strictObject({
  misp: v.optional(v.strictObject({
    ...pushCommon,
    api_key: v.optional(v.string('expected a string')),
    distribution: v.optional(v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(0, 'expected a MISP distribution from 0 to 3 (0 your organisation, 1 this community, 2 connected communities, 3 all communities)'), v.maxValue(3, 'expected a MISP distribution from 0 to 3 (0 your organisation, 1 this community, 2 connected communities, 3 all communities)'))),
    publish: v.optional(v.boolean('expected true or false')),
  }, PUSH_OBJECT('url, api_key, distribution, publish, max_tlp, ssl_verify, timeout_ms, retries'))),
  opencti: v.optional(v.strictObject({
    ...pushCommon,
    token: v.optional(v.string('expected a string')),
  }, PUSH_OBJECT('url, token, max_tlp, ssl_verify, timeout_ms, retries'))),
  thehive: v.optional(v.strictObject({
    ...pushCommon,
    api_key: v.optional(v.string('expected a string')),
    organisation: v.optional(v.string('expected a string')),
  }, PUSH_OBJECT('url, api_key, organisation, max_tlp, ssl_verify, timeout_ms, retries'))),
}, 'expected an object with misp, opencti and thehive, such as { "misp": { "url": "https://misp.example.org" } }');
export type PushSettings = v.InferOutput<typeof pushSchema>;

/** The setting `allowlist` (issue 38): entries of the configuration, `{ "value", "reason", "expires"? }`. */
const ALLOW_ENTRY = 'expected an entry such as { "value": "*.corp.example", "reason": "our own domains" } (value, reason, and optionally expires as an ISO 8601 time)';
const allowlistSchema = v.array(
  v.strictObject({
    // Only its shape here: what it names is checked when the runner's allowlist is built
    // (src/app.ts), so that reading the configuration loads no address parser (start-up, issue 33).
    value: v.pipe(v.string(ALLOW_ENTRY), v.trim(), v.minLength(1, 'expected a value: an observable, a CIDR range, *.domain or a file hash'), v.maxLength(2048, 'expected a value of at most 2048 characters')),
    reason: v.pipe(v.string(ALLOW_ENTRY), v.trim(), v.minLength(1, 'expected a reason: why the entry is harmless or the team\'s own')),
    expires: v.optional(v.pipe(v.string('expected an ISO 8601 time such as 2026-12-31T00:00:00Z'), v.check((text) => /^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(Date.parse(text)), 'expected an ISO 8601 time such as 2026-12-31T00:00:00Z'))),
  }, ALLOW_ENTRY),
  'expected a list of entries such as [{ "value": "*.corp.example", "reason": "our own domains" }]',
);
export type AllowlistSetting = v.InferOutput<typeof allowlistSchema>;

/** An environment variable's name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_MESSAGE = 'expected the name of an environment variable, such as OAS_WEBHOOK_SECRET';
const WEBHOOK_NAME = 'expected a name of letters, digits, "_", "-" and "." (at most 64), such as soc-slack';
const WEBHOOK_OBJECT = 'expected a webhook: { "name", "url", "events", "secret_env", "format", "min_verdict", "max_tlp" } and no other keys';
const webhookSchema = v.strictObject({
  name: v.pipe(v.string(WEBHOOK_NAME), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, WEBHOOK_NAME)),
  url: httpUrl,
  events: v.pipe(
    v.array(v.picklist(WEBHOOK_EVENT_NAMES, `expected an event: ${WEBHOOK_EVENT_NAMES.join(', ')}`), `expected a list of events among ${WEBHOOK_EVENT_NAMES.join(', ')}`),
    v.minLength(1, `expected at least one event among ${WEBHOOK_EVENT_NAMES.join(', ')}`),
  ),
  secret_env: v.optional(v.pipe(v.string(ENV_MESSAGE), v.regex(ENV_NAME, ENV_MESSAGE))),
  format: v.optional(v.picklist(WEBHOOK_FORMATS, `expected a format: ${WEBHOOK_FORMATS.join(', ')}`), 'standard'),
  min_verdict: v.optional(v.picklist(MIN_VERDICTS, `expected a verdict: ${MIN_VERDICTS.join(', ')}`), 'suspicious'),
  max_tlp: v.optional(tlpLevel, 'AMBER'),
}, WEBHOOK_OBJECT);
const WEBHOOKS = 'expected a list of webhooks such as [{ "name": "soc", "url": "https://soar.example/hooks/oas", "events": ["analysis.completed"], "secret_env": "OAS_WEBHOOK_SECRET" }]';
const webhooksSchema = v.pipe(
  v.array(webhookSchema, WEBHOOKS),
  v.check((list) => new Set(list.map((w) => w.name)).size === list.length, (issue) => {
    const names = (issue.input as { name: string }[]).map((w) => w.name);
    return `each webhook needs a name of its own: "${names.find((n, i) => names.indexOf(n) !== i) ?? ''}" is used twice`;
  }),
);
const PUBLIC_URL = 'expected the server\'s address as people reach it, such as https://oas.example.org, or "" for none';
const CALLBACK_HOST = 'expected a host name, optionally with :port, such as soar.example.org';

/** A host name or address, optionally with `:port` (`soar.example.org`, `10.0.0.5:8443`, `[fd00::5]`). */
export function isCallbackHost(value: string): boolean {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!match) return false;
  if (match[1]!.startsWith('[') && isIP(match[1]!.slice(1, -1)) !== 6) return false;
  return match[2] === undefined || (Number(match[2]) >= 1 && Number(match[2]) <= 65535);
}

/** Settings every engine accepts under `engines.<id>`; engines may accept more. */
export const engineSettingsSchema = v.looseObject({
  base_url: v.optional(httpUrl),
  api_key: v.optional(v.string('expected a string')),
  timeout_ms: v.optional(positiveInt),
  concurrency: v.optional(positiveInt),
  retries: v.optional(nonNegativeInt),
  /** Quota: at most rate_limit calls per rate_window_ms (defaults: the provider's free tier). */
  rate_limit: v.optional(positiveInt),
  rate_window_ms: v.optional(positiveInt),
  /** A call that would wait longer than this for its quota fails instead. */
  quota_max_wait_ms: v.optional(nonNegativeInt),
  /** The most restrictive TLP and PAP of an analysis this engine may receive (issue 34). */
  max_tlp: v.optional(tlpLevel),
  max_pap: v.optional(papLevel),
}, 'expected an object of settings such as { "timeout_ms": 5000 }');

export type ValueKind = 'string' | 'int' | 'bool' | 'list' | 'json';

export interface KeySpec {
  schema: v.GenericSchema;
  kind: ValueKind;
  /** Also accepted from the environment under this plain name (the reference's variables). */
  legacyEnv?: string;
  doc: string;
  defaultText: string;
}

export const KEYS = {
  api_prefix: { schema: v.pipe(v.string('expected a URL path such as /api/'), v.regex(/^\/?[A-Za-z0-9._~\-/]*\/?$/, 'expected a URL path such as /api/')), kind: 'string', legacyEnv: 'API_PREFIX', doc: 'Path prefix of the three API endpoints.', defaultText: '/api/' },
  api_cache_timeout: { schema: nonNegativeInt, kind: 'int', legacyEnv: 'API_CACHE_TIMEOUT', doc: 'Seconds an engine result stays cached (0 disables the cache).', defaultText: '86400' },
  data_dir: { schema: v.pipe(v.string('expected a directory path'), v.minLength(1, 'expected a directory path, not an empty string')), kind: 'string', doc: 'Directory of the SQLite file (cache, analyses) and downloaded lists.', defaultText: '$XDG_CACHE_HOME/oas or ~/.cache/oas' },
  host: { schema: v.pipe(v.string('expected an address such as 127.0.0.1'), v.trim(), v.minLength(1, 'expected an address such as 127.0.0.1, not an empty string')), kind: 'string', doc: 'Address `oas serve` binds to.', defaultText: '127.0.0.1' },
  port: { schema: v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(0, 'expected a port number from 0 to 65535'), v.maxValue(65535, 'expected a port number from 0 to 65535')), kind: 'int', doc: 'Port of `oas serve` (0 = any free port).', defaultText: '8080' },
  max_body_bytes: { schema: positiveInt, kind: 'int', doc: 'Largest accepted POST body, in bytes.', defaultText: '1048576' },
  max_upload_bytes: { schema: positiveInt, kind: 'int', doc: 'Largest file accepted for extraction or analysis (a multipart upload, `oas analyze --file`, `oas extract`, an MCP `file_base64`), in bytes; it, not `max_body_bytes`, bounds a multipart body.', defaultText: '26214400 (25 MiB)' },
  file_parse_timeout_ms: { schema: positiveInt, kind: 'int', doc: 'Longest a file may take to read (an e-mail, a PDF, a CSV...); a file still being read then is refused as malformed or too complex.', defaultText: '10000' },
  dns_servers: { schema: v.array(hostPort, 'expected a list of IP addresses (ip or ip:port)'), kind: 'list', doc: 'DNS servers (`ip` or `ip:port`) for the DNS engines and for the host names of every upstream; empty = the system resolvers.', defaultText: '[] (system)' },
  proxy_url: { schema: proxyUrl, kind: 'string', legacyEnv: 'PROXY_URL', doc: 'HTTP(S) proxy for every outbound HTTP call; empty = direct.', defaultText: '""' },
  ssl_verify: { schema: v.boolean('expected true or false'), kind: 'bool', legacyEnv: 'SSL_VERIFY', doc: 'Verify upstream TLS certificates.', defaultText: 'true' },
  concurrency: { schema: positiveInt, kind: 'int', doc: 'Engine calls running at once across all analyses (each engine is also bounded by its own `engines.<id>.concurrency`, default 64, and its quota).', defaultText: '512' },
  engine_timeout_ms: { schema: positiveInt, kind: 'int', doc: 'Timeout of every engine call, overriding the engines\' own defaults.', defaultText: 'per engine' },
  api_token: { schema: v.string('expected a string'), kind: 'string', doc: 'Token every API, `/ui/` and `/export/` request must carry (`Authorization: Bearer <token>` or `X-API-Key`); the web UI asks for it once. Empty = no authentication (loopback only, unless `allow_unauthenticated`).', defaultText: '""' },
  allow_unauthenticated: { schema: v.boolean('expected true or false'), kind: 'bool', doc: 'Let `oas serve` bind a non-loopback address without `api_token`.', defaultText: 'false' },
  allowed_hosts: { schema: v.array(v.pipe(v.string('expected a host name'), v.minLength(1, 'expected a host name, not an empty string')), 'expected a list of host names'), kind: 'list', doc: '`Host` header values the server answers (others get 421); `localhost`, `127.0.0.1`, `[::1]` and the bound address are always allowed.', defaultText: '[] (the defaults only)' },
  cors_origins: { schema: v.array(v.pipe(v.string('expected an origin such as https://soc.example'), v.url('expected an origin such as https://soc.example')), 'expected a list of origins such as ["https://soc.example"]'), kind: 'list', doc: 'Origins allowed to call the API from a browser (CORS); none by default.', defaultText: '[]' },
  rate_limit_per_minute: { schema: nonNegativeInt, kind: 'int', doc: 'Analyses one client (token, else address) may start per minute; 0 = no limit.', defaultText: '60' },
  max_observables: { schema: positiveInt, kind: 'int', doc: 'Most observables one analysis may hold; a larger one is refused whole.', defaultText: '10000' },
  log_format: { schema: v.picklist(['text', 'json'], 'expected "text" or "json"'), kind: 'string', doc: 'Request log lines of `oas serve` on stderr: `text` or `json` (`--log-format`).', defaultText: 'text' },
  catalog: { schema: v.picklist(['main', 'older'], 'expected "main" or "older"'), kind: 'string', doc: 'Engine catalog variant: `main`, or `older` (the spec\'s older variant: `rdap`, key-less scraping `search_engine` and `provider_21`, key-less `provider_22`).', defaultText: 'main' },
  redis_url: { schema: redisUrl, kind: 'string', doc: 'Redis shared by many `oas serve` and `oas worker` processes (`--redis`): analyses, history, the engine cache, quotas and rate limits live there, and engine calls are BullMQ jobs. With `oas analyze`, the cache and quotas are shared. Empty = one process with SQLite.', defaultText: '""' },
  worker_concurrency: { schema: positiveInt, kind: 'int', doc: 'Observables one worker (`oas worker`, or the one inside `oas serve` with `redis_url`) analyses at once (`--concurrency`).', defaultText: '32' },
  job_lock_ms: { schema: v.pipe(positiveInt, v.minValue(500, 'expected a number of at least 500')), kind: 'int', doc: 'With `redis_url`: how long a worker\'s hold on a job lasts unless renewed; the jobs of a worker that died are taken over by another within about twice this.', defaultText: '30000' },
  engines: { schema: keyedObject(v.record(v.string(), engineSettingsSchema, 'expected an object of engine settings keyed by engine id, such as { "provider_24": { "api_key": "..." } }'), 'expected an object of engine settings keyed by engine id, such as { "provider_24": { "api_key": "..." } }'), kind: 'json', doc: 'Per-engine settings: `{ "<engine id>": { "base_url", "api_key", "timeout_ms", "concurrency", "retries", ... } }`.', defaultText: '{}' },
  custom_engines: { schema: keyedObject(v.record(v.string(), v.unknown(), 'expected an object of engine definitions keyed by engine id, such as { "intel": { "types": ["IPv4"], "request": { "url": "https://intel.example/ip/{value}" } } }'), 'expected an object of engine definitions keyed by engine id, such as { "intel": { "types": ["IPv4"], "request": { "url": "https://intel.example/ip/{value}" } } }'), kind: 'json', doc: 'Engines of your own, defined without code: `{ "<id>": { "label", "types", "request": { "method", "url", "headers", "query", "body" }, "secrets", "fields", "summary", "evidence", ... } }` (docs/custom-engines.md).', defaultText: '{}' },
  engine_sets: { schema: keyedObject(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a set name is letters, digits, "_", "-" and "."')), v.pipe(v.array(v.pipe(v.string('expected a list of engine ids or aliases'), v.minLength(1, 'expected an engine id or alias, not an empty string')), 'expected a list of engine ids or aliases'), v.minLength(1, 'a set needs at least one engine')), 'expected an object of engine lists keyed by set name, such as { "phishing": ["urlscan", "phishtank"] }'), 'expected an object of engine lists keyed by set name, such as { "phishing": ["urlscan", "phishtank"] }'), kind: 'json', doc: 'Named engine sets: `{ "<name>": ["<engine id or alias>", ...] }`, selected with `oas analyze --set <name>`, `@<name>` in the API\'s `engines`, or a chip of the web picker; `oas engines --sets` lists them.', defaultText: '{}' },
  mcp: { schema: v.boolean('expected true or false'), kind: 'bool', doc: 'Answer MCP (the Model Context Protocol, for AI assistants) at `/mcp` on `oas serve`, behind the same token, host check, rate limit and body limit as the API.', defaultText: 'true' },
  mcp_max_result_chars: { schema: v.pipe(positiveInt, v.minValue(1000, 'expected a number of at least 1000')), kind: 'int', doc: 'Most characters of result objects the MCP tool `get_results` answers at once; what is left out is named, with how to ask for it.', defaultText: '20000' },
  mcp_cyberbro_tools: { schema: v.boolean('expected true or false'), kind: 'bool', doc: 'Also offer the five tools of mcp-cyberbro (`analyze_observable`, `is_analysis_complete`, `get_analysis_results`, `get_engines`, `get_web_url`) over MCP (`oas mcp --cyberbro-tools`).', defaultText: 'false' },
  auth_failures_per_minute: { schema: positiveInt, kind: 'int', doc: 'Failed sign-ins and bad tokens one client address may make per minute; beyond it every request from there gets 429 with Retry-After (even with a valid token) until the minute has passed.', defaultText: '10' },
  trusted_proxies: { schema: v.array(v.pipe(v.string('expected an address or CIDR range such as 10.0.0.0/8'), v.check(isAddressOrRange, 'expected an address or CIDR range such as 10.0.0.0/8')), 'expected a list of addresses and CIDR ranges, such as ["127.0.0.1", "10.0.0.0/8"]'), kind: 'list', doc: 'Reverse proxies whose `auth_header` names the user (single sign-on) and whose `X-Forwarded-For` gives the client address for limits and logs; from any other address both headers are ignored.', defaultText: '[]' },
  auth_header: { schema: v.pipe(v.string('expected a header name such as X-Forwarded-User'), v.regex(/^([!#$%&'*+.^_`|~0-9A-Za-z-]+)?$/, 'expected a header name such as X-Forwarded-User')), kind: 'string', doc: 'The header a trusted proxy names the signed-in user with (e.g. `X-Forwarded-User` from oauth2-proxy, `Remote-User` from Authelia); empty = none.', defaultText: '""' },
  auth_header_role: { schema: v.picklist(['viewer', 'analyst', 'admin'], 'expected "viewer", "analyst" or "admin"'), kind: 'string', doc: 'The role of a user a trusted proxy names for the first time (an admin can change it: `oas users`).', defaultText: 'analyst' },
  default_tlp: { schema: tlpLevel, kind: 'string', doc: 'TLP of an analysis that names none (CLEAR, GREEN, AMBER, AMBER+STRICT, RED): an engine gets an observable only up to its `engines.<id>.max_tlp` (default AMBER for a third party, RED for the team\'s own servers).', defaultText: 'AMBER' },
  default_pap: { schema: papLevel, kind: 'string', doc: 'PAP of an analysis that names none (CLEAR, GREEN, AMBER, RED): an engine gets an observable only up to its `engines.<id>.max_pap` (default GREEN for a lookup that reaches the target, AMBER for a third party, RED in-house).', defaultText: 'GREEN' },
  internal_networks: { schema: v.array(v.pipe(v.string(NETWORK), v.check(isAddressOrRange, NETWORK)), 'expected a list of CIDR ranges such as ["10.20.0.0/16"]'), kind: 'list', doc: 'Your networks: an address inside one (or inside the private, loopback, link-local, CGNAT and ULA ranges, always) is TLP:RED and PAP:RED whatever the analysis says.', defaultText: '[]' },
  internal_domains: { schema: v.array(v.pipe(v.string(DOMAIN_SUFFIX), v.check(isDomainSuffix, DOMAIN_SUFFIX)), 'expected a list of domain suffixes such as ["corp.example"]'), kind: 'list', doc: 'Your domains: a name under one (or under .local, .internal, .lan, .home.arpa, .corp, always), a URL on it or an e-mail address there is TLP:RED and PAP:RED whatever the analysis says.', defaultText: '[]' },
  audit_log: { schema: v.string('expected a file path'), kind: 'string', doc: 'File (JSON lines, 0600, appended) of every sign-in, analysis started, result or export read, user change and reload: time, user, client address, action, outcome; never a token, key or observable. Empty = none.', defaultText: '""' },
  webhooks: { schema: webhooksSchema, kind: 'json', doc: 'Where oas tells the team\'s automation what happened (issue 36): `[{ "name", "url", "events", "secret_env", "format", "min_verdict", "max_tlp" }]`. `events` among `analysis.completed`, `observable.verdict` and `watchlist.changed`; `format` `standard` (Standard Webhooks, signed with the `whsec_...` secret of the environment variable `secret_env`), `slack` or `teams`; `min_verdict` (default `suspicious`) for `observable.verdict`; above `max_tlp` (default AMBER) an event holds only the analysis\'s id and link.', defaultText: '[]' },
  public_url: { schema: v.pipe(v.string(PUBLIC_URL), v.trim(), v.check((s) => s === '' || isHttpUrl(s), PUBLIC_URL)), kind: 'string', doc: 'The server\'s address as people reach it (`https://oas.example.org`): links in webhook bodies are absolute with it, else paths (`/results/<id>`).', defaultText: '""' },
  callback_hosts: { schema: v.array(v.pipe(v.string(CALLBACK_HOST), v.check(isCallbackHost, CALLBACK_HOST)), 'expected a list of host names such as ["soar.example.org"]'), kind: 'list', doc: 'Hosts (`name` or `name:port`) an analysis request\'s `callback_url` may name; any other is refused (400). Empty = no callback_url accepted.', defaultText: '[]' },
  allowlist: { schema: allowlistSchema, kind: 'json', doc: 'What the team knows to be its own or harmless (issue 38): `[{ "value", "reason", "expires"? }]`, each value an observable, a CIDR range (`10.20.0.0/16`), a domain with everything under it (`*.corp.example`) or a file hash. An allowlisted observable is sent to no engine and judged clean (`ignore_allowlist`, `--ignore-allowlist`: analysed as usual). `expires`: an ISO 8601 time past which the entry no longer applies.', defaultText: '[]' },
  push: { schema: pushSchema, kind: 'json', doc: 'Where `oas push` sends an analysis (issue 37): `{ "misp": { "url", "api_key", "distribution", "publish", "max_tlp" }, "opencti": { "url", "token", "max_tlp" }, "thehive": { "url", "api_key", "organisation", "max_tlp" } }` (also `ssl_verify`, `timeout_ms`, `retries`). `url` and the key default to the MISP and OpenCTI engines\' settings; the keys may come from `OAS_PUSH_MISP_API_KEY`, `OAS_PUSH_OPENCTI_TOKEN`, `OAS_PUSH_THEHIVE_API_KEY`.', defaultText: '{}' },
  callback_secret_env: { schema: v.pipe(v.string(ENV_MESSAGE), v.check((s) => s === '' || ENV_NAME.test(s), ENV_MESSAGE)), kind: 'string', doc: 'The environment variable holding the `whsec_...` secret that signs `callback_url` deliveries (required with `callback_hosts`).', defaultText: '""' },
  misp_modules: { schema: v.boolean('expected true or false'), kind: 'bool', doc: 'Answer MISP\'s enrichment as a misp-modules server does (issue 39): `GET /modules` and `POST /query` at the root of `oas serve`, without the token (MISP sends none), for the peers of `misp_modules_clients` only.', defaultText: 'false' },
  misp_modules_clients: { schema: v.array(v.pipe(v.string('expected an address or CIDR range such as 10.0.0.5 or 10.0.0.0/8'), v.check(isAddressOrRange, 'expected an address or CIDR range such as 10.0.0.5 or 10.0.0.0/8')), 'expected a list of addresses and CIDR ranges, such as ["10.0.0.5"]'), kind: 'list', doc: 'Addresses and CIDR ranges of the MISP servers that may call `GET /modules` and `POST /query` (the client address, as for the rate limit: behind `trusted_proxies`, what `X-Forwarded-For` names); any other gets 403.', defaultText: '["127.0.0.1", "::1"]' },
  misp_modules_timeout_s: { schema: v.pipe(positiveInt, v.maxValue(3600, 'expected a number of seconds from 1 to 3600')), kind: 'int', doc: 'Longest a `POST /query` waits for its analysis; past it MISP gets `{"error": ...}` and the analysis goes on (a later query takes its results from the cache).', defaultText: '30' },
  cortex: { schema: v.boolean('expected true or false'), kind: 'bool', doc: 'Serve the Cortex REST API under `/cortex` (issue 39), so that TheHive, cortex4py and other Cortex clients run oas\'s engines as Cortex analyzers: Cortex server URL `http://<oas>/cortex`, an oas token as its key.', defaultText: 'false' },
} satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof KEYS;

export interface Config {
  api_prefix: string;
  api_cache_timeout: number;
  data_dir: string;
  host: string;
  port: number;
  max_body_bytes: number;
  max_upload_bytes: number;
  file_parse_timeout_ms: number;
  dns_servers: string[];
  proxy_url: string;
  ssl_verify: boolean;
  concurrency: number;
  engine_timeout_ms: number | undefined;
  catalog: CatalogVariant;
  api_token: string;
  allow_unauthenticated: boolean;
  allowed_hosts: string[];
  cors_origins: string[];
  rate_limit_per_minute: number;
  max_observables: number;
  log_format: 'text' | 'json';
  redis_url: string;
  worker_concurrency: number;
  job_lock_ms: number;
  engines: Record<string, Record<string, unknown>>;
  custom_engines: Record<string, unknown>;
  engine_sets: Record<string, string[]>;
  mcp: boolean;
  mcp_max_result_chars: number;
  mcp_cyberbro_tools: boolean;
  auth_failures_per_minute: number;
  trusted_proxies: string[];
  auth_header: string;
  auth_header_role: 'viewer' | 'analyst' | 'admin';
  audit_log: string;
  default_tlp: string;
  default_pap: string;
  internal_networks: string[];
  internal_domains: string[];
  webhooks: WebhookSettings[];
  public_url: string;
  callback_hosts: string[];
  callback_secret_env: string;
  push: PushSettings;
  allowlist: AllowlistSetting;
  misp_modules: boolean;
  misp_modules_clients: string[];
  misp_modules_timeout_s: number;
  cortex: boolean;
}

export function defaultConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return {
    api_prefix: '/api/',
    api_cache_timeout: 86400,
    data_dir: join(cacheHome, 'oas'),
    host: '127.0.0.1',
    port: 8080,
    max_body_bytes: 1024 * 1024,
    max_upload_bytes: 25 * 1024 * 1024,
    file_parse_timeout_ms: 10_000,
    dns_servers: [],
    proxy_url: '',
    ssl_verify: true,
    // Room for several engines at their own default of 64 calls each (the reference ran every
    // observable at once, unbounded).
    concurrency: 512,
    engine_timeout_ms: undefined,
    catalog: 'main',
    api_token: '',
    allow_unauthenticated: false,
    allowed_hosts: [],
    cors_origins: [],
    rate_limit_per_minute: 60,
    max_observables: 10000,
    log_format: 'text',
    redis_url: '',
    worker_concurrency: 32,
    job_lock_ms: 30_000,
    engines: {},
    custom_engines: {},
    engine_sets: {},
    mcp: true,
    mcp_max_result_chars: 20_000,
    mcp_cyberbro_tools: false,
    auth_failures_per_minute: 10,
    trusted_proxies: [],
    auth_header: '',
    auth_header_role: 'analyst',
    audit_log: '',
    default_tlp: 'AMBER',
    default_pap: 'GREEN',
    internal_networks: [],
    internal_domains: [],
    webhooks: [],
    public_url: '',
    callback_hosts: [],
    callback_secret_env: '',
    push: {},
    allowlist: [],
    misp_modules: false,
    misp_modules_clients: ['127.0.0.1', '::1'],
    misp_modules_timeout_s: 30,
    cortex: false,
  };
}

/** `corp.example`, `.corp.example`: labels of letters, digits and `-`, dot-separated. */
export function isDomainSuffix(value: string): boolean {
  return /^\.?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(value.trim()) && value.trim().length <= 253;
}

/** `/api/`, `api`, `/api` all mean `/api/`; `/` means the root. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/{2,}/g, '/').replace(/^\/+|\/+$/g, '');
  return trimmed ? `/${trimmed}/` : '/';
}
