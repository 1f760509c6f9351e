/** `oas serve`: the HTTP API on @hono/node-server, bound to 127.0.0.1 unless told otherwise. */
import { createApp } from '../app.js';
import type { Config } from '../config/schema.js';
import { listen } from '../server/listen.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  prefix?: string;
  config?: string;
  dataDir?: string;
  catalog?: string;
}

export async function serveCommand(options: ServeOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.host !== undefined) flags.host = options.host;
  if (options.prefix !== undefined) flags.api_prefix = options.prefix;
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  if (options.port !== undefined) {
    const port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${options.port}"`);
    flags.port = port;
  }
  const app = await createApp({ file: options.config, flags });
  const { config } = app;
  let running;
  try {
    running = await listen(app);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `${config.host}:${config.port} is already in use`
      : code === 'EACCES' ? `no permission to listen on ${config.host}:${config.port}`
        : (error as Error).message;
    process.stderr.write(`oas: cannot serve: ${reason}\n`);
    await app.close();
    return EXIT_FAILED;
  }
  process.stdout.write(`oas listening on ${running.url} (API under ${config.api_prefix}, data in ${config.data_dir})\n`);
  const resumed = await app.analyses.resumePending();
  if (resumed > 0) process.stdout.write(`oas: resumed ${resumed} unfinished analysis(es)\n`);

  return new Promise<number>((resolve) => {
    const stop = () => {
      // Unfinished analyses stay recorded and resume at the next start; in-flight lookups are
      // abandoned, so the process exits rather than waiting for them.
      void running.close().then(() => app.storage.close()).finally(() => {
        resolve(EXIT_OK);
        setImmediate(() => process.exit(EXIT_OK));
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
