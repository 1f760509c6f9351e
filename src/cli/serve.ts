/** `oas serve`: the HTTP API on @hono/node-server, bound to 127.0.0.1 unless told otherwise. */
import { serve } from '@hono/node-server';
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { createApi } from '../server/api.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  prefix?: string;
  config?: string;
  dataDir?: string;
}

export async function serveCommand(options: ServeOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.host !== undefined) flags.host = options.host;
  if (options.prefix !== undefined) flags.api_prefix = options.prefix;
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.port !== undefined) {
    const port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${options.port}"`);
    flags.port = port;
  }
  const app = await createApp({ file: options.config, flags });
  const { config } = app;
  const api = createApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, analyses: app.analyses, catalog: app.catalog });

  return new Promise<number>((resolve) => {
    const server = serve({ fetch: api.fetch, hostname: config.host, port: config.port }, (info) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      process.stdout.write(`oas listening on http://${host}:${info.port} (API under ${config.api_prefix}, data in ${config.data_dir})\n`);
      void app.analyses.resumePending().then((n) => {
        if (n > 0) process.stdout.write(`oas: resumed ${n} unfinished analysis(es)\n`);
      });
    });
    server.on('error', async (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? `${config.host}:${config.port} is already in use`
        : error.code === 'EACCES' ? `no permission to listen on ${config.host}:${config.port}`
          : error.message;
      process.stderr.write(`oas: cannot serve: ${reason}\n`);
      await app.close();
      resolve(EXIT_FAILED);
    });
    const stop = () => {
      server.close();
      // Unfinished analyses stay recorded and resume at the next start.
      void app.storage.close().finally(() => resolve(EXIT_OK));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
