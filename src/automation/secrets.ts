/**
 * The secrets that sign deliveries (issue 36): a webhook's `whsec_...` secret in the environment
 * variable its `secret_env` names, and for `callback_url` deliveries the one `callback_secret_env`
 * names. They are read from the environment only, when a delivery is signed: never from the
 * configuration file, never stored with a delivery (SQLite or Redis), never in a message. At start
 * (and on a reload) `checkWebhookSecrets` makes a missing or malformed one a configuration error
 * naming the webhook and the variable, so a server never runs with endpoints it cannot sign for.
 *
 * A secret is what the Standard Webhooks libraries take: `whsec_` then base64 bytes; the check is
 * the library's own reading of it (its Webhook constructor).
 */
import { Webhook } from 'standardwebhooks';
import { ConfigError } from '../config/load.js';
import type { Config, WebhookSettings } from '../config/schema.js';

export const SECRET_PREFIX = 'whsec_';

/** Why `value` cannot sign (`is not set`, ...), or undefined when it can. */
export function secretProblem(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return 'is not set';
  if (!value.startsWith(SECRET_PREFIX)) return 'does not hold a whsec_... secret';
  try {
    new Webhook(value);
  } catch {
    return 'does not hold a valid whsec_... secret (base64 after whsec_)';
  }
  return undefined;
}

/** The secret that signs `webhook`'s deliveries, or undefined (none named, or not usable). */
export function webhookSecret(webhook: Pick<WebhookSettings, 'secret_env'>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = webhook.secret_env ? env[webhook.secret_env] : undefined;
  return secretProblem(value) === undefined ? value : undefined;
}

/** The secret that signs `callback_url` deliveries, or undefined. */
export function callbackSecret(config: Pick<Config, 'callback_secret_env'>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = config.callback_secret_env ? env[config.callback_secret_env] : undefined;
  return secretProblem(value) === undefined ? value : undefined;
}

/**
 * Throws a ConfigError for the first webhook that cannot sign: a `standard` one without
 * `secret_env`, or any whose variable is unset or holds no `whsec_...` secret; and for
 * `callback_hosts` without a usable `callback_secret_env`. Names the variable, never its value.
 */
export function checkWebhookSecrets(config: Pick<Config, 'webhooks' | 'callback_hosts' | 'callback_secret_env'>, env: NodeJS.ProcessEnv = process.env): void {
  config.webhooks.forEach((webhook, index) => {
    const at = `invalid "webhooks.${index}.secret_env"`;
    if (!webhook.secret_env) {
      if (webhook.format === 'standard') throw new ConfigError(`${at}: webhook "${webhook.name}" is signed (format standard): name the environment variable holding its whsec_... secret`);
      return;
    }
    const problem = secretProblem(env[webhook.secret_env]);
    if (problem) throw new ConfigError(`${at}: the environment variable ${webhook.secret_env} (webhook "${webhook.name}") ${problem}; put the webhook's whsec_... secret there`);
  });
  if (config.callback_hosts.length > 0) {
    const at = 'invalid "callback_secret_env"';
    if (!config.callback_secret_env) throw new ConfigError(`${at}: callback_hosts is set, so callback_url deliveries are signed: name the environment variable holding their whsec_... secret`);
    const problem = secretProblem(env[config.callback_secret_env]);
    if (problem) throw new ConfigError(`${at}: the environment variable ${config.callback_secret_env} ${problem}; put the callbacks' whsec_... secret there`);
  }
}

/** Every signing secret set (to be masked wherever text is shown or sent). */
export function signingSecrets(config: Pick<Config, 'webhooks' | 'callback_secret_env'>, env: NodeJS.ProcessEnv = process.env): string[] {
  const names = [...config.webhooks.map((w) => w.secret_env), config.callback_secret_env].filter((n): n is string => Boolean(n));
  return names.map((name) => env[name]).filter((v): v is string => typeof v === 'string' && v.length > 0);
}
