/**
 * Loads the configuration. Precedence: CLI flag, then environment, then file, then default.
 * The file is `--config FILE`, else $OAS_CONFIG, else ./oas.config.json when present.
 * Every problem is a ConfigError whose message names the bad key and where it came from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import type { EngineDefinition } from '../engine/contract.js';
import { credentialEnvNames } from '../engine/credentials.js';
import { closest } from '../lookup/did-you-mean.js';
import { KEYS, defaultConfig, engineSettingsSchema, normalizePrefix, type Config, type ConfigKey } from './schema.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadOptions {
  /** Path given with --config. */
  file?: string | undefined;
  /** Values from CLI flags (highest precedence). */
  flags?: Partial<Config>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The engine catalog, to validate `engines.<id>` and read credentials from the environment. */
  engines?: readonly EngineDefinition[];
  /**
   * The engines the configuration itself defines (`custom_engines`), made from their definitions
   * (src/custom/engines.ts): added to `engines`. Its errors become ConfigErrors.
   */
  custom?: (definitions: Readonly<Record<string, unknown>>, builtins: readonly EngineDefinition[]) => EngineDefinition[];
}

export interface LoadedConfig {
  config: Config;
  /** The file that was read, if any. */
  file: string | undefined;
  /** `engines`, then the custom engines of the configuration (with `custom`). */
  definitions: readonly EngineDefinition[];
  /** Where a key's value came from, for messages: `configuration file /etc/oas.json`, ... */
  sourceOf(key: ConfigKey): string;
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = configFilePath(options.file, env, cwd);
  const fromFile = file ? readConfigFile(file) : {};
  const fromEnv = readEnv(env);
  const fromFlags = readFlags(options.flags ?? {});
  const merged: Config = { ...defaultConfig(env), ...fromFile, ...fromEnv, ...fromFlags };
  merged.api_prefix = normalizePrefix(merged.api_prefix);
  merged.data_dir = resolve(cwd, merged.data_dir);
  const layers: [Record<string, Record<string, unknown>> | undefined, string][] = [
    [fromFile.engines, file ? `configuration file ${file}` : 'configuration'],
    [fromEnv.engines, 'environment variable OAS_ENGINES'],
    [options.flags?.engines, 'configuration'],
  ];
  const sourceOf = (key: ConfigKey) => (key in fromFlags ? 'configuration'
    : key in fromEnv ? `environment variable OAS_${key.toUpperCase()}`
      : file ? `configuration file ${file}` : 'configuration');
  const catalog = options.engines && options.custom ? [...options.engines, ...customOf(merged, options.engines, options.custom, sourceOf('custom_engines'))] : options.engines;
  merged.engines = mergeEngineSettings(...layers.map(([settings, where]) => (catalog ? normalizeEngineSettings(settings ?? {}, catalog, where) : settings)));
  if (catalog) applyCredentialEnv(merged.engines, catalog, env);
  return { config: merged, file, definitions: catalog ?? [], sourceOf };
}

function customOf(config: Config, builtins: readonly EngineDefinition[], custom: NonNullable<LoadOptions['custom']>, where: string): EngineDefinition[] {
  try {
    return custom(config.custom_engines, builtins);
  } catch (error) {
    throw new ConfigError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function configFilePath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const explicit = flag ?? (env.OAS_CONFIG || undefined);
  if (explicit) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) throw new ConfigError(`configuration file not found: ${path}`);
    return path;
  }
  const local = resolve(cwd, 'oas.config.json');
  return existsSync(local) ? local : undefined;
}

function readConfigFile(path: string): Partial<Config> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`configuration file ${path} is not valid JSON: ${parseProblem((error as Error).message)}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigError(`configuration file ${path} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!(key in KEYS)) throw new ConfigError(`configuration file ${path}: ${unknownSetting(key, key, Object.keys(KEYS))}`);
    out[key] = check(key as ConfigKey, value, `configuration file ${path}`);
  }
  return out as Partial<Config>;
}

/**
 * JSON.parse's reason without the excerpt of the text it may quote (`Unexpected token 'x',
 * ..."api_key": x..." is not valid JSON`): the file holds keys and tokens, and the reason is
 * printed and logged (a reload's is also in the audit trail).
 */
function parseProblem(message: string): string {
  const line = message.split('\n')[0]!;
  const excerpt = /^(.*?), (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s.exec(line);
  return excerpt ? excerpt[1]! : line;
}

/** Flags whose name is not the key's (`--prefix` sets api_prefix). */
const FLAG_NAMES: Partial<Record<ConfigKey, string>> = { api_prefix: 'prefix', redis_url: 'redis', worker_concurrency: 'concurrency' };

/** Command-line values, checked like any other source (`--catalog older`). */
function readFlags(flags: Partial<Config>): Partial<Config> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stripUndefined(flags))) {
    const flag = FLAG_NAMES[key as ConfigKey] ?? key.replaceAll('_', '-');
    out[key] = key === 'engines' ? value : check(key as ConfigKey, value, `option --${flag}`);
  }
  return out as Partial<Config>;
}

/** OAS_<KEY> for every key; the reference's plain names for a few, with lower precedence. */
function readEnv(env: NodeJS.ProcessEnv): Partial<Config> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(KEYS) as [ConfigKey, (typeof KEYS)[ConfigKey]][]) {
    const names = [`OAS_${key.toUpperCase()}`, ...('legacyEnv' in spec ? [spec.legacyEnv] : [])];
    const name = names.find((n) => env[n] !== undefined && env[n] !== '');
    if (!name) continue;
    const raw = env[name]!;
    const where = `environment variable ${name}`;
    out[key] = check(key, fromString(raw, spec.kind, where), where);
  }
  return out as Partial<Config>;
}

function fromString(raw: string, kind: string, where: string): unknown {
  switch (kind) {
    case 'int': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n)) throw new ConfigError(`${where}: expected a number, got "${raw}"`);
      return n;
    }
    case 'bool': {
      const t = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(t)) return true;
      if (['false', '0', 'no', 'off'].includes(t)) return false;
      throw new ConfigError(`${where}: expected true or false, got "${raw}"`);
    }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    case 'json':
      try {
        return JSON.parse(raw);
      } catch {
        throw new ConfigError(`${where}: expected JSON`);
      }
    default:
      return raw;
  }
}

function check(key: ConfigKey, value: unknown, where: string): unknown {
  const result = v.safeParse(KEYS[key].schema, value);
  if (result.success) return result.output;
  throw new ConfigError(`${where}: ${describeIssue([key], result.issues[0], !UNECHOED.has(key))}`);
}

/** Keys whose values never appear in an error: a token, a proxy or Redis URL with credentials, engine keys, webhook URLs (a Slack or Teams one is its own secret). */
const UNECHOED = new Set<string>(['api_token', 'proxy_url', 'redis_url', 'engines', 'webhooks', 'push']);

type Issue = v.BaseIssue<unknown>;

/** `invalid "<path>": expected ..., got ...` for the first problem valibot found. */
function describeIssue(prefix: string[], issue: Issue, echo = false): string {
  const path = [...prefix, ...(issue.path ?? []).map((p) => String(p.key))].join('.');
  // A wrong type says what it got; a wrong value only where it cannot be a secret.
  const value = typeof issue.input === 'string' || typeof issue.input === 'number' ? issue.input : undefined;
  const shown = echo && value !== undefined ? JSON.stringify(typeof value === 'string' && value.length > 60 ? `${value.slice(0, 60)}…` : value) : undefined;
  // A picklist's message lists the values already: only a wrong type is worth adding.
  const got = issue.type === 'picklist' ? (typeof issue.input === 'string' ? '' : `, got ${kindOf(issue.input)}`)
    : issue.kind === 'schema' ? `, got ${kindOf(issue.input)}` : shown ? `, got ${shown}` : '';
  return `invalid "${path}": ${issueMessage(issue)}${got}`;
}

/**
 * The schema's own message, or for a schema without one (an engine's own settings) the same kind
 * of sentence instead of valibot's default ("Invalid type: Expected ... but received ...").
 */
function issueMessage(issue: Issue): string {
  if (!/^Invalid \w+: (Expected .* but r|R)eceived /s.test(issue.message)) return issue.message.split('\n')[0]!;
  const requirement = (issue as { requirement?: unknown }).requirement;
  switch (issue.type) {
    case 'string': return 'expected a string';
    case 'number': return 'expected a number';
    case 'boolean': return 'expected true or false';
    case 'array': return 'expected a list';
    case 'object': case 'loose_object': case 'strict_object': case 'record': return 'expected an object';
    case 'picklist': return `expected one of ${issue.expected?.replaceAll(' | ', ', ') ?? 'the listed values'}`;
    case 'url': return 'expected a URL such as https://example.com';
    case 'integer': return 'expected a whole number';
    case 'min_value': return `expected a number of at least ${String(requirement)}`;
    case 'max_value': return `expected a number of at most ${String(requirement)}`;
    case 'min_length': return requirement === 1 ? 'must not be empty' : `expected at least ${String(requirement)} characters`;
    case 'max_length': return `expected at most ${String(requirement)} characters`;
    case 'non_empty': return 'must not be empty';
    case 'email': return 'expected an e-mail address';
    default: return `not a valid value (${issue.type.replaceAll('_', ' ')})`;
  }
}

/** A JSON value's kind, for "got a string". */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'boolean': return value ? 'true' : 'false';
    case 'object': return 'an object';
    default: return typeof value;
  }
}

/** `<path>: unknown setting; did you mean <closest>?`, or the known ones when none is close. */
function unknownSetting(path: string, name: string, known: readonly string[]): string {
  const suggestion = closest(name, known);
  const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
  return suggestion
    ? `${shown}: unknown setting; did you mean ${suggestion}?`
    : `${shown}: unknown setting (known settings: ${[...known].sort().join(', ')})`;
}

function mergeEngineSettings(...layers: (Record<string, Record<string, unknown>> | undefined)[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const layer of layers) {
    for (const [id, settings] of Object.entries(layer ?? {})) out[id] = { ...out[id], ...settings };
  }
  return out;
}

/**
 * One source's `engines` (the file, OAS_ENGINES): keys name an engine by id or alias; every
 * setting must be one the engine knows, and valid for the common schema and the engine's own.
 */
function normalizeEngineSettings(
  settings: Record<string, Record<string, unknown>>,
  engines: readonly EngineDefinition[],
  where: string,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, values] of Object.entries(settings)) {
    const engine = engines.find((e) => e.id === name || e.service === name);
    if (!engine) {
      const names = engines.flatMap((e) => [e.id, e.service]);
      const suggestion = closest(name, names);
      throw new ConfigError(`${where}: invalid "engines.${name}": unknown engine${suggestion ? `; did you mean ${suggestion}?` : ` (valid: ${engines.map((e) => e.id).join(', ')})`}`);
    }
    const known = [...knownEngineSettings(engine)];
    for (const key of Object.keys(values)) {
      if (!known.includes(key)) throw new ConfigError(`${where}: ${unknownSetting(`engines.${name}.${key}`, key, known)}`);
    }
    for (const definition of [engine, ...Object.values(engine.variants ?? {})]) {
      for (const schema of [engineSettingsSchema, definition.settingsSchema].filter(Boolean) as v.GenericSchema[]) {
        const result = v.safeParse(schema, values);
        if (!result.success) throw new ConfigError(`${where}: ${describeIssue(['engines', name], result.issues[0])}`);
      }
    }
    out[engine.id] = { ...out[engine.id], ...values };
  }
  return out;
}

/**
 * The settings an engine knows under `engines.<id>`, in every catalog variant: the common ones,
 * its credentials, the keys of its defaults and the entries of its own settings schema.
 */
export function knownEngineSettings(engine: EngineDefinition): Set<string> {
  const known = new Set(Object.keys(engineSettingsSchema.entries));
  // A custom engine's address and secrets live in its definition (custom_engines.<id>): under
  // engines.<id> they would be accepted and ignored.
  if (engine.custom) for (const setting of ['base_url', 'api_key']) known.delete(setting);
  for (const definition of [engine, ...Object.values(engine.variants ?? {})]) {
    for (const credential of definition.credentials ?? []) if (!credential.envOnly) known.add(credential.setting);
    for (const key of Object.keys(definition.defaults ?? {})) known.add(key);
    for (const key of Object.keys(schemaEntries(definition.settingsSchema))) known.add(key);
  }
  return known;
}

/** An object schema's entries, also through a pipe (`v.pipe(v.looseObject({...}), ...)`). */
export function schemaEntries(schema: unknown): Record<string, unknown> {
  const s = schema as { entries?: Record<string, unknown>; pipe?: unknown[] } | undefined;
  if (s?.entries && typeof s.entries === 'object') return s.entries;
  if (Array.isArray(s?.pipe) && s.pipe.length > 0) return schemaEntries(s.pipe[0]);
  return {};
}

/**
 * Credentials from the environment: OAS_<ALIAS>_<SETTING> (OAS_VIRUSTOTAL_API_KEY) and the
 * reference's variable names the engine declares. The environment wins over the file.
 */
function applyCredentialEnv(settings: Record<string, Record<string, unknown>>, engines: readonly EngineDefinition[], env: NodeJS.ProcessEnv): void {
  for (const engine of engines) {
    for (const credential of engine.credentials) {
      const name = credentialEnvNames(engine, credential).find((n) => env[n]);
      if (name) settings[engine.id] = { ...settings[engine.id], [credential.setting]: env[name] };
    }
  }
}

function stripUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
