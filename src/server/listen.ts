/** Starts the API and the pages for an App on its configured host and port. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { App } from '../app.js';
import { createApi } from './api.js';
import { createPages } from './pages.js';

export interface RunningServer {
  server: ServerType;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

/** The whole HTTP surface: the spec's three endpoints, then the pages. */
export function createHttpApp(app: App): Hono {
  const { config } = app;
  const root = createApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, analyses: app.analyses });
  root.route('/', createPages({ config, catalog: app.catalog, analyses: app.analyses, storage: app.storage }));
  return root;
}

export async function listen(app: App): Promise<RunningServer> {
  const { config } = app;
  const server = serve({ fetch: createHttpApp(app).fetch, hostname: config.host, port: config.port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const info = server.address() as AddressInfo;
  const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  return {
    server,
    url: `http://${host}:${info.port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    }),
  };
}
