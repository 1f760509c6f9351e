/**
 * SIGHUP: `oas serve` and `oas worker` read their configuration again, as they started (the same
 * `--config` file, else $OAS_CONFIG or ./oas.config.json, and the same flags), with the catalog it
 * makes (custom_engines, engine_sets), and apply it to the analyses started after it (App.apply).
 * The environment is the process's own and cannot change: what a reload brings is what the
 * configuration file says (its keys, custom engines and settings).
 *
 * Refused whole, with one line and the old configuration kept, when the new one is invalid. Keys
 * that only take effect at start (RESTART_KEYS) keep their old value, each named on a line.
 */
import { loadSettings } from '../app.js';
import type { LoadOptions } from '../config/load.js';
import type { Config, ConfigKey } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import { createLogger, type Logger, type LogFormat } from '../server/access-log.js';

/**
 * What a reload cannot change: where the server listens and under which path, where its data lives,
 * the HTTP client's connection settings (made once), the queue worker's options, and the audit
 * file opened at start.
 */
export const RESTART_KEYS: readonly ConfigKey[] = [
  'host', 'port', 'api_prefix', 'data_dir', 'redis_url', 'proxy_url', 'ssl_verify', 'dns_servers',
  'worker_concurrency', 'job_lock_ms', 'audit_log',
];

/** Keys whose changes are named one entry deeper (`engines.provider_24.api_key`, `custom_engines.intel`). */
const NESTED: Partial<Record<ConfigKey, number>> = { engines: 2, custom_engines: 1, engine_sets: 1 };

export type ReloadOutcome =
  | {
    ok: true;
    /** The configuration to apply: the new one with the RESTART_KEYS at their old values. */
    config: Config;
    catalog: Catalog;
    /** What changed and applies (key paths, never values). */
    changed: string[];
    /** Keys that changed but need a restart (kept at their old values). */
    restart: ConfigKey[];
  }
  | { ok: false; reason: string };

/**
 * Reads the configuration again (`options`: as the process started), checks it with `check` (what
 * the command itself refuses at start), and compares it with `current`. Never throws.
 */
export async function readReload(
  current: Config,
  options: Omit<LoadOptions, 'engines' | 'custom'>,
  check?: (config: Config) => void,
): Promise<ReloadOutcome> {
  let loaded: { config: Config; catalog: Catalog };
  let config: Config;
  let restart: ConfigKey[];
  try {
    loaded = await loadSettings(options);
    check?.(loaded.config);
    restart = RESTART_KEYS.filter((key) => !same(current[key], loaded.config[key]));
    config = { ...loaded.config };
    for (const key of restart) (config as unknown as Record<string, unknown>)[key] = current[key];
    // What will run: the new settings where the old address stays (no api_token on 127.0.0.1
    // in the file, while still serving 0.0.0.0, is refused).
    check?.(config);
  } catch (error) {
    return { ok: false, reason: oneLine(error) };
  }
  const changed: string[] = [];
  for (const key of Object.keys(config) as ConfigKey[]) {
    if (restart.includes(key)) continue;
    changed.push(...changedPaths(key, current[key], config[key], NESTED[key] ?? 0));
  }
  return { ok: true, config, catalog: loaded.catalog, changed, restart };
}

/** The lines a reload writes (stderr, through the server's log): what changed, never a value. */
export function reloadLines(outcome: ReloadOutcome): { level: 'info' | 'error'; line: string }[] {
  if (!outcome.ok) return [{ level: 'error', line: `configuration not reloaded: ${outcome.reason}; the old configuration stays` }];
  return [
    ...outcome.restart.map((key) => ({ level: 'error' as const, line: `${key} changed: needs a restart; the old value stays` })),
    { level: 'info', line: `configuration reloaded: ${outcome.changed.length > 0 ? `${outcome.changed.join(', ')} changed (for analyses started from now on)` : 'nothing changed'}` },
  ];
}

/**
 * The log of a process that reloads: its lines go to the logger of the configuration in effect
 * (`log_format`), which masks every secret any configuration of the process held.
 */
export class ReloadableLogger implements Logger {
  private current: Logger;
  private readonly secrets = new Set<string>();

  constructor(format: LogFormat, secrets: Iterable<string>) {
    this.current = this.make(format, secrets);
  }

  /** The new configuration's format; its secrets added to those masked (old keys stay masked). */
  replace(format: LogFormat, secrets: Iterable<string>): void {
    this.current = this.make(format, secrets);
  }

  request(entry: Parameters<Logger['request']>[0]): void {
    this.current.request(entry);
  }

  engineError(entry: Parameters<Logger['engineError']>[0]): void {
    this.current.engineError(entry);
  }

  error(message: string): void {
    this.current.error(message);
  }

  info(message: string): void {
    this.current.info(message);
  }

  private make(format: LogFormat, secrets: Iterable<string>): Logger {
    for (const secret of secrets) this.secrets.add(secret);
    return createLogger({ format, secrets: this.secrets });
  }
}

/**
 * Runs `reload` on each SIGHUP, one at a time: a signal arriving during a reload asks for one more
 * after it (the file may have changed again). Returns the function that stops reloading (as the
 * process stops): a later SIGHUP is then ignored, never the end of a graceful stop.
 */
export function onSighup(reload: () => Promise<void>): () => void {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const run = (): void => {
    running = reload().catch(() => {}).finally(() => {
      running = undefined;
      if (again && !stopped) {
        again = false;
        run();
      }
    });
  };
  process.on('SIGHUP', () => {
    if (stopped) return;
    if (running) again = true;
    else run();
  });
  return () => {
    stopped = true;
  };
}

function changedPaths(path: string, before: unknown, after: unknown, depth: number): string[] {
  if (same(before, after)) return [];
  if (depth > 0 && isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => changedPaths(`${path}.${key}`, before[key], after[key], depth - 1));
  }
  return [path];
}

function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value).filter((k) => value[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An error's first line (a ConfigError says what failed and where; never a value of a secret). */
function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();
}
