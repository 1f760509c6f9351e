/**
 * A push target's settings (issue 37), resolved from the setting `push.<target>`, its credential's
 * environment variable and, for MISP and OpenCTI, the engine's own settings: `url` and the key
 * default to `engines.provider_15` (MISP) and `engines.provider_16` (OpenCTI) when those are
 * configured, and such a target counts as configured. A key from the engine may be read-only:
 * the target's key-refused line then names the push setting to use (`credentialSource`).
 */
import type { Config } from '../config/schema.js';
import { tlpOf } from '../marking/levels.js';
import { PushError, TARGET_LABELS, type PushTargetId, type TargetSettings } from './types.js';

/** Per target: the key's name under `push.<target>`, its environment variable, and the engine it may borrow from. */
const CREDENTIAL: Record<PushTargetId, { setting: 'api_key' | 'token'; env: string; engine?: { id: string; url: string; key: string } }> = {
  misp: { setting: 'api_key', env: 'OAS_PUSH_MISP_API_KEY', engine: { id: 'provider_15', url: 'base_url', key: 'api_key' } },
  opencti: { setting: 'token', env: 'OAS_PUSH_OPENCTI_TOKEN', engine: { id: 'provider_16', url: 'base_url', key: 'api_key' } },
  thehive: { setting: 'api_key', env: 'OAS_PUSH_THEHIVE_API_KEY' },
};

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_RETRIES = 2;

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** Where the key is set, as messages name it: `push.misp.api_key or OAS_PUSH_MISP_API_KEY`. */
export function credentialSetting(target: PushTargetId): string {
  const { setting, env } = CREDENTIAL[target];
  return `push.${target}.${setting} or ${env}`;
}

/** The push targets' own keys (setting and environment), for what must never be shown (MCP's redaction). */
export function pushSecrets(config: Config, env: NodeJS.ProcessEnv = process.env): string[] {
  return (['misp', 'opencti', 'thehive'] as const).flatMap((target) => {
    const { setting, env: variable } = CREDENTIAL[target];
    return [text(env[variable]), text((config.push?.[target] as Record<string, unknown> | undefined)?.[setting])];
  }).filter((key) => key !== '');
}

/** Whether a target has a URL and a key (its own, or the engine's). */
export function isConfigured(config: Config, target: PushTargetId, env: NodeJS.ProcessEnv = process.env): boolean {
  return typeof resolve(config, target, env) !== 'string';
}

/** The targets that are configured, in their fixed order. */
export function configuredTargets(config: Config, env: NodeJS.ProcessEnv = process.env): PushTargetId[] {
  return (['misp', 'opencti', 'thehive'] as const).filter((target) => isConfigured(config, target, env));
}

/** The target's settings; a PushError naming what to set when it is not configured. */
export function targetSettings(config: Config, target: PushTargetId, env: NodeJS.ProcessEnv = process.env): TargetSettings {
  const resolved = resolve(config, target, env);
  if (typeof resolved === 'string') throw new PushError(target, resolved);
  return resolved;
}

function resolve(config: Config, target: PushTargetId, env: NodeJS.ProcessEnv): TargetSettings | string {
  const own = (config.push?.[target] ?? {}) as Record<string, unknown>;
  const spec = CREDENTIAL[target];
  const engine = spec.engine ? ((config.engines?.[spec.engine.id] ?? {}) as Record<string, unknown>) : {};
  const ownUrl = text(own['url']);
  const engineUrl = spec.engine ? text(engine[spec.engine.url]) : '';
  const ownKey = text(env[spec.env]) || text(own[spec.setting]);
  const engineKey = spec.engine ? text(engine[spec.engine.key]) : '';
  const url = ownUrl || engineUrl;
  const credential = ownKey || engineKey;
  const label = TARGET_LABELS[target];
  if (!url || !credential) {
    const missing = [!url ? `push.${target}.url` : '', !credential ? credentialSetting(target) : ''].filter(Boolean).join(' and ');
    const borrow = spec.engine ? `, or configure the ${label} engine (engines.${spec.engine.id}.base_url and api_key), whose server and key it then uses` : '';
    return `${label} is not configured as a push target: set ${missing}${borrow}`;
  }
  const credentialSource = ownKey || !spec.engine
    ? credentialSetting(target)
    : `${credentialSetting(target)} (the key in use is the ${label} engine's, engines.${spec.engine.id}.api_key, which may only read: give the push one that may write)`;
  return {
    url: url.replace(/\/+$/, ''),
    credential,
    credentialSource,
    urlSource: ownUrl || !spec.engine ? `push.${target}.url` : `engines.${spec.engine.id}.base_url`,
    ssl_verify: typeof own['ssl_verify'] === 'boolean' ? own['ssl_verify'] : config.ssl_verify,
    timeout_ms: typeof own['timeout_ms'] === 'number' ? own['timeout_ms'] : DEFAULT_TIMEOUT_MS,
    retries: typeof own['retries'] === 'number' ? own['retries'] : DEFAULT_RETRIES,
    max_tlp: tlpOf(own['max_tlp']) ?? 'RED',
    distribution: typeof own['distribution'] === 'number' ? own['distribution'] : 1,
    publish: own['publish'] === true,
    organisation: text(own['organisation']),
  };
}
