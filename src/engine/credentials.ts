/**
 * Where an engine's credential is set: its setting path and its environment variables. One
 * wording for the CLI, the web page and the API's `errors` (`engines.provider_24.api_key or
 * OAS_VIRUSTOTAL_API_KEY`).
 */
import type { CredentialSpec, EngineDefinition } from './contract.js';

/** The environment variables a credential is read from, in precedence order. */
export function credentialEnvNames(engine: EngineDefinition, credential: CredentialSpec): string[] {
  if (credential.envOnly) return [...(credential.env ?? [])];
  return [
    `OAS_${engine.service.toUpperCase()}_${credential.setting.toUpperCase()}`,
    `OAS_${engine.id.toUpperCase()}_${credential.setting.toUpperCase()}`,
    ...(credential.env ?? []),
  ];
}

/**
 * `engines.<id>.<setting> or OAS_<SERVICE>_<SETTING>` for a credential of `engine`; for one read only
 * from the environment, its variable (`INTEL_API_KEY`).
 */
export function whereToSet(engine: EngineDefinition, credential: CredentialSpec): string {
  if (credential.envOnly) return credentialEnvNames(engine, credential).join(' or ');
  return `engines.${engine.id}.${credential.setting} or ${credentialEnvNames(engine, credential)[0]}`;
}

/** The secret credentials of an engine (keys, tokens; not a self-hosted server's URL). */
export function secretCredentials(engine: EngineDefinition): CredentialSpec[] {
  return engine.credentials.filter((c) => c.secret !== false);
}
