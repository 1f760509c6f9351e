/**
 * Loads the configuration. Precedence: CLI flag, then environment, then file, then default.
 * The file is `--config FILE`, else $OAS_CONFIG, else ./oas.config.json when present.
 * Every problem is a ConfigError whose message names the bad key and where it came from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import type { CredentialSpec, EngineDefinition } from '../engine/contract.js';
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
}

export interface LoadedConfig {
  config: Config;
  /** The file that was read, if any. */
  file: string | undefined;
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
  merged.engines = mergeEngineSettings(fromFile.engines, fromEnv.engines, options.flags?.engines);
  if (options.engines) {
    merged.engines = normalizeEngineSettings(merged.engines, options.engines, file);
    applyCredentialEnv(merged.engines, options.engines, env);
  }
  return { config: merged, file };
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
    throw new ConfigError(`configuration file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ConfigError(`configuration file ${path} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!(key in KEYS)) {
      throw new ConfigError(`configuration file ${path}: unknown key "${key}" (valid keys: ${Object.keys(KEYS).join(', ')})`);
    }
    out[key] = check(key as ConfigKey, value, `configuration file ${path}`);
  }
  return out as Partial<Config>;
}

/** Command-line values, checked like any other source (`--catalog older`). */
function readFlags(flags: Partial<Config>): Partial<Config> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stripUndefined(flags))) {
    out[key] = key === 'engines' ? value : check(key as ConfigKey, value, `option --${key.replaceAll('_', '-')}`);
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
  const issue = result.issues[0];
  const path = [key, ...(issue.path ?? []).map((p: { key: unknown }) => String(p.key))].join('.');
  throw new ConfigError(`${where}: invalid "${path}": ${issue.message}`);
}

function mergeEngineSettings(...layers: (Record<string, Record<string, unknown>> | undefined)[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const layer of layers) {
    for (const [id, settings] of Object.entries(layer ?? {})) out[id] = { ...out[id], ...settings };
  }
  return out;
}

/** Keys may name an engine by id or alias; each engine may validate its own settings. */
function normalizeEngineSettings(
  settings: Record<string, Record<string, unknown>>,
  engines: readonly EngineDefinition[],
  file: string | undefined,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, values] of Object.entries(settings)) {
    const engine = engines.find((e) => e.id === name || e.service === name);
    const where = file ? `configuration file ${file}` : 'configuration';
    if (!engine) {
      throw new ConfigError(`${where}: invalid "engines.${name}": unknown engine (valid: ${engines.map((e) => e.id).join(', ')})`);
    }
    for (const schema of [engineSettingsSchema, engine.settingsSchema].filter(Boolean) as v.GenericSchema[]) {
      const result = v.safeParse(schema, values);
      if (!result.success) {
        const issue = result.issues[0];
        const path = ['engines', name, ...(issue.path ?? []).map((p: { key: unknown }) => String(p.key))].join('.');
        throw new ConfigError(`${where}: invalid "${path}": ${issue.message}`);
      }
    }
    out[engine.id] = { ...out[engine.id], ...values };
  }
  return out;
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

/** The environment variables a credential is read from, in precedence order. */
export function credentialEnvNames(engine: EngineDefinition, credential: CredentialSpec): string[] {
  return [
    `OAS_${engine.service.toUpperCase()}_${credential.setting.toUpperCase()}`,
    `OAS_${engine.id.toUpperCase()}_${credential.setting.toUpperCase()}`,
    ...(credential.env ?? []),
  ];
}

function stripUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}
