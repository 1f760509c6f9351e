/** Starts the API for an App on its configured host and port. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { App } from '../app.js';
import { createApi } from './api.js';

export interface RunningServer {
  server: ServerType;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

export async function listen(app: App): Promise<RunningServer> {
  const { config } = app;
  const api = createApi({ prefix: config.api_prefix, maxBodyBytes: config.max_body_bytes, analyses: app.analyses, catalog: app.catalog });
  const server = serve({ fetch: api.fetch, hostname: config.host, port: config.port });
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
