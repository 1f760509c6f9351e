/**
 * `oas webhooks test NAME|URL` (issue 36): sends one signed `ping` event to a webhook of the setting
 * `webhooks` (by its name, in its format, signed with its secret) or to a URL (the standard format,
 * signed with the secret of `--secret-env`, else of `callback_secret_env`), through the same HTTP
 * client and signing as real deliveries, and prints the receiver's status and answer (made inert:
 * it is the receiver's text). Exit 0 on a 2xx, 1 otherwise, 2 for an unknown name or a secret
 * that is not there. A named webhook's URL is never printed (a Slack or Teams URL is its own
 * secret): only its host.
 */
import { loadConfig } from '../config/load.js';
import type { Config, WebhookSettings } from '../config/schema.js';
import { isHttpUrl } from '../config/schema.js';
import { HttpTransport } from '../http/client.js';
import { inert } from '../text/inert.js';
import { randomMessageId, sendOnce } from '../automation/delivery.js';
import type { OasEvent } from '../automation/events.js';
import { renderBody } from '../automation/render.js';
import { checkWebhookSecrets, secretProblem } from '../automation/secrets.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface WebhooksTestOptions {
  config?: string;
  /** For a URL: the environment variable holding the whsec_... secret. */
  secretEnv?: string;
  /** One try's limit (tests). */
  timeoutMs?: number;
}

/** The answer printed: at most this many characters. */
const ANSWER_CHARS = 2000;

export async function webhooksTestCommand(target: string, options: WebhooksTestOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { config } = loadConfig({ file: options.config, env });
  const { endpoint, label } = endpointOf(config, target, options.secretEnv, env);
  const event: OasEvent = { type: 'ping', timestamp: new Date().toISOString(), data: { message: 'a test from oas webhooks test', webhook: endpoint.name } };
  const transport = new HttpTransport({ proxyUrl: config.proxy_url, sslVerify: config.ssl_verify, dnsServers: config.dns_servers });
  try {
    const secret = endpoint.secret_env ? env[endpoint.secret_env] : undefined;
    const result = await sendOnce(transport, { url: endpoint.url, secret }, { id: randomMessageId(), body: renderBody(endpoint.format, event) }, options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {});
    process.stdout.write(`${label}: ${inert(result.reason)}\n`);
    const answer = result.answer ?? '';
    if (answer.trim() !== '') process.stdout.write(`${inert(answer.length > ANSWER_CHARS ? `${answer.slice(0, ANSWER_CHARS)}…` : answer)}\n`);
    return result.outcome === 'delivered' ? EXIT_OK : EXIT_FAILED;
  } finally {
    await transport.close();
  }
}

/** The endpoint `target` names (a webhook's name, or a URL), and how it is shown; UsageError when it names none. */
function endpointOf(config: Config, target: string, secretEnv: string | undefined, env: NodeJS.ProcessEnv): { endpoint: WebhookSettings; label: string } {
  if (isHttpUrl(target)) {
    const variable = secretEnv ?? (config.callback_secret_env || undefined);
    if (!variable) throw new UsageError('a URL is signed with the secret of --secret-env VARIABLE (or the setting callback_secret_env): name the environment variable holding its whsec_... secret');
    const problem = secretProblem(env[variable]);
    if (problem) throw new UsageError(`the environment variable ${variable} ${problem}`);
    const endpoint: WebhookSettings = { name: 'test', url: target, events: [], secret_env: variable, format: 'standard', min_verdict: 'suspicious', max_tlp: 'AMBER' };
    return { endpoint, label: new URL(target).host };
  }
  const endpoint = config.webhooks.find((w) => w.name === target);
  if (!endpoint) {
    const names = config.webhooks.map((w) => w.name);
    throw new UsageError(`unknown webhook "${target}": ${names.length > 0 ? `the setting webhooks names ${names.join(', ')}` : 'the setting webhooks names none'} (or give a URL)`);
  }
  // Its secret, as `oas serve` checks it at start.
  checkWebhookSecrets({ webhooks: [endpoint], callback_hosts: [], callback_secret_env: '' }, env);
  return { endpoint, label: `webhook "${endpoint.name}" at ${new URL(endpoint.url).host}` };
}
