/** The configuration's keys, their types and defaults. One table drives the file, env and docs. */
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import type { CatalogVariant } from '../engine/contract.js';

const hostPort = v.pipe(
  v.string(),
  v.regex(/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:]+)(:\d{1,5})?$/, 'expected an IP address, optionally with :port'),
);
const positiveInt = v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(1, 'expected a number of at least 1'));
const nonNegativeInt = v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(0, 'expected a number of at least 0'));

/** Settings every engine accepts under `engines.<id>`; engines may accept more. */
export const engineSettingsSchema = v.looseObject({
  base_url: v.optional(v.pipe(v.string(), v.url('expected a URL'))),
  api_key: v.optional(v.string('expected a string')),
  timeout_ms: v.optional(positiveInt),
  concurrency: v.optional(positiveInt),
  retries: v.optional(nonNegativeInt),
  /** Quota: at most rate_limit calls per rate_window_ms (defaults: the provider's free tier). */
  rate_limit: v.optional(positiveInt),
  rate_window_ms: v.optional(positiveInt),
  /** A call that would wait longer than this for its quota fails instead. */
  quota_max_wait_ms: v.optional(nonNegativeInt),
});

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
  api_prefix: { schema: v.pipe(v.string(), v.regex(/^\/?[A-Za-z0-9._~\-/]*\/?$/, 'expected a URL path such as /api/')), kind: 'string', legacyEnv: 'API_PREFIX', doc: 'Path prefix of the three API endpoints.', defaultText: '/api/' },
  api_cache_timeout: { schema: nonNegativeInt, kind: 'int', legacyEnv: 'API_CACHE_TIMEOUT', doc: 'Seconds an engine result stays cached (0 disables the cache).', defaultText: '86400' },
  data_dir: { schema: v.pipe(v.string(), v.minLength(1, 'expected a directory path')), kind: 'string', doc: 'Directory of the SQLite file (cache, analyses) and downloaded lists.', defaultText: '$XDG_CACHE_HOME/oas or ~/.cache/oas' },
  host: { schema: v.pipe(v.string(), v.minLength(1)), kind: 'string', doc: 'Address `oas serve` binds to.', defaultText: '127.0.0.1' },
  port: { schema: v.pipe(v.number('expected a number'), v.integer('expected a whole number'), v.minValue(0), v.maxValue(65535, 'expected a port number up to 65535')), kind: 'int', doc: 'Port of `oas serve` (0 = any free port).', defaultText: '8080' },
  max_body_bytes: { schema: positiveInt, kind: 'int', doc: 'Largest accepted POST body, in bytes.', defaultText: '1048576' },
  dns_servers: { schema: v.array(hostPort), kind: 'list', doc: 'DNS servers for DNS engines (`ip` or `ip:port`); empty = the system resolvers.', defaultText: '[] (system)' },
  proxy_url: { schema: v.string(), kind: 'string', legacyEnv: 'PROXY_URL', doc: 'HTTP(S) proxy for every outbound HTTP call; empty = direct.', defaultText: '""' },
  ssl_verify: { schema: v.boolean('expected true or false'), kind: 'bool', legacyEnv: 'SSL_VERIFY', doc: 'Verify upstream TLS certificates.', defaultText: 'true' },
  concurrency: { schema: positiveInt, kind: 'int', doc: 'Engine calls running at once across all analyses.', defaultText: '32' },
  engine_timeout_ms: { schema: positiveInt, kind: 'int', doc: 'Timeout of every engine call, overriding the engines\' own defaults.', defaultText: 'per engine' },
  catalog: { schema: v.picklist(['main', 'older'], 'expected "main" or "older"'), kind: 'string', doc: 'Engine catalog variant: `main`, or `older` (the spec\'s older variant: `rdap`, key-less scraping `search_engine` and `provider_21`, key-less `provider_22`).', defaultText: 'main' },
  engines: { schema: v.record(v.string(), engineSettingsSchema), kind: 'json', doc: 'Per-engine settings: `{ "<engine id>": { "base_url", "api_key", "timeout_ms", "concurrency", "retries", ... } }`.', defaultText: '{}' },
} satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof KEYS;

export interface Config {
  api_prefix: string;
  api_cache_timeout: number;
  data_dir: string;
  host: string;
  port: number;
  max_body_bytes: number;
  dns_servers: string[];
  proxy_url: string;
  ssl_verify: boolean;
  concurrency: number;
  engine_timeout_ms: number | undefined;
  catalog: CatalogVariant;
  engines: Record<string, Record<string, unknown>>;
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
    dns_servers: [],
    proxy_url: '',
    ssl_verify: true,
    concurrency: 32,
    engine_timeout_ms: undefined,
    catalog: 'main',
    engines: {},
  };
}

/** `/api/`, `api`, `/api` all mean `/api/`; `/` means the root. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  return trimmed ? `/${trimmed}/` : '/';
}
