/**
 * `oas mcp`: an MCP server on standard input and output, the transport desktop assistants start as
 * a subprocess. The analyses run here, with the configuration, cache and quotas of `oas analyze`,
 * or with `--server` (OAS_SERVER) on another server through its API. Standard output carries
 * protocol messages only; a line on standard error says where analyses run, and any problem.
 * It ends when its input ends (the assistant closed it) or on SIGTERM/SIGINT.
 */
import type { Config } from '../config/schema.js';
import { redact } from '../http/redact.js';
import type { McpBackend } from '../mcp/backend.js';
import { secretValues } from '../server/listen.js';
import { UsageError } from './errors.js';
import { VERSION } from './version.js';

export interface McpCommandOptions {
  config?: string;
  catalog?: string;
  dataDir?: string;
  redis?: string;
  server?: string;
  prefix?: string;
  token?: string;
  cyberbroTools?: boolean;
}

export async function mcpCommand(options: McpCommandOptions): Promise<number> {
  const server = options.server ?? (process.env.OAS_SERVER || undefined);
  if (server === undefined) {
    for (const flag of ['prefix', 'token'] as const) {
      if (options[flag] !== undefined) throw new UsageError(`--${flag} needs --server URL (or OAS_SERVER)`);
    }
  } else if (options.redis !== undefined) {
    throw new UsageError('--redis runs the analyses here with the team\'s cache and quotas; it does not go with --server (the server has its own)');
  }
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  if (options.redis !== undefined) flags.redis_url = options.redis;
  if (options.cyberbroTools) flags.mcp_cyberbro_tools = true;

  const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../mcp/server.js'),
  ]);
  let backend: McpBackend;
  let close: () => Promise<void>;
  let secrets: string[];
  let config: Config;
  if (server !== undefined) {
    const [{ loadSettings }, { resolveTarget, resolveToken }, { remoteBackend }] = await Promise.all([
      import('../app.js'),
      import('./remote.js'),
      import('../mcp/remote-backend.js'),
    ]);
    const target = resolveTarget(server, options.prefix);
    const token = resolveToken(options.token);
    const settings = await loadSettings({ file: options.config, flags });
    config = settings.config;
    backend = remoteBackend(target, token, settings);
    secrets = [...secretValues(config, settings.catalog), ...(token ? [token] : [])];
    close = async () => {};
    process.stderr.write(`oas mcp: ready on standard input and output; analyses run on ${target.api.origin}\n`);
  } else {
    const [{ createApp }, { localBackend }] = await Promise.all([import('../app.js'), import('../mcp/local-backend.js')]);
    const app = await createApp({ file: options.config, flags });
    config = app.config;
    backend = localBackend({ catalog: app.catalog, config, analyses: app.analyses, origin: 'cli', pushServices: () => ({ config: app.config, catalog: app.catalog, transport: app.transport, analyses: app.analyses }) });
    secrets = secretValues(config, app.catalog);
    close = () => app.close();
    process.stderr.write(`oas mcp: ready on standard input and output; analyses run here (data in ${config.data_dir})\n`);
  }
  const [{ uploadLimits }, { markingSettings }] = await Promise.all([import('../files/upload.js'), import('../marking/policy.js')]);
  const mcp = createMcpServer(backend, {
    version: VERSION,
    maxResultChars: config.mcp_max_result_chars,
    cyberbroTools: config.mcp_cyberbro_tools,
    // A tool's file (file_base64, issue 35): read here within these limits, its observables marked by this configuration's internal networks and domains.
    uploads: uploadLimits(config),
    internalScope: markingSettings(config).internalScope,
    redact: (text) => redact(text, secrets),
  });
  const transport = new StdioServerTransport();
  return new Promise<number>((resolve) => {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      void mcp.close().catch(() => {})
        .then(() => close())
        .catch((error: unknown) => process.stderr.write(`oas mcp: ${redact(String(error instanceof Error ? error.message : error), secrets)}\n`))
        .finally(() => {
          resolve(0);
          setTimeout(() => process.exit(0), 1000).unref();
        });
    };
    transport.onclose = end;
    process.stdin.once('end', end);
    process.once('SIGTERM', end);
    process.once('SIGINT', end);
    mcp.connect(transport).catch((error: unknown) => {
      process.stderr.write(`oas mcp: ${redact(error instanceof Error ? error.message : String(error), secrets)}\n`);
      end();
    });
  });
}
