/**
 * A tiny loopback HTTP forward proxy for tests of `proxy_url`: it records every plain-HTTP request
 * it carries and forwards it to its (loopback) destination. Both ways a client may use an HTTP
 * proxy for an `http://` target are understood:
 * - absolute-form requests (`GET http://127.0.0.1:4000/x HTTP/1.1`);
 * - a `CONNECT 127.0.0.1:4000` tunnel (what undici's ProxyAgent does by default), inside which
 *   the plain-HTTP requests are read, recorded and forwarded one by one.
 * Destinations other than 127.0.0.1/localhost are refused (502 / CONNECT refused): tests never
 * leave the machine.
 *
 * `proxiedHarness(engine, proxyUrl, settings)` runs an engine's lookup like
 * `tests/helpers/engine.ts` does, but with an `HttpTransport` whose `proxyUrl` is set.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Keyv from 'keyv';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { createEngineContext, resolveSettings } from '../../src/engine/context.js';
import { HttpTransport } from '../../src/http/client.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import type { EngineHarness } from '../helpers/engine.js';

export interface ProxiedRequest {
  /** `absolute` (absolute-form request line) or `tunnel` (inside a CONNECT). */
  via: 'absolute' | 'tunnel';
  method: string;
  /** The destination as an absolute URL, e.g. `http://127.0.0.1:4000/x?y=1`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeForwardProxy {
  /** `http://127.0.0.1:<port>`: the value for `proxy_url`. */
  url: string;
  /** Requests carried, in order. */
  requests: ProxiedRequest[];
  /** `host:port` of every CONNECT asked for (refused ones included). */
  connects: string[];
  reset(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function isLoopback(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === 'localhost';
}

export async function startForwardProxy(): Promise<FakeForwardProxy> {
  const requests: ProxiedRequest[] = [];
  const connects: string[] = [];
  const sockets = new Set<Socket>();

  async function forward(via: ProxiedRequest['via'], target: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({ via, method: req.method ?? 'GET', url: target.href, headers: req.headers, body: body.toString('utf8') });
    if (target.protocol !== 'http:' || !isLoopback(target.hostname)) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('forward proxy: only loopback http destinations');
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers['content-length'] = String(body.length);
    headers.host = target.host;
    const upstream = httpRequest({ host: target.hostname, port: target.port || 80, method: req.method, path: `${target.pathname}${target.search}`, headers }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end();
    });
    // Destination hangs (timeout tests): give up when the client does.
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  }

  /** Parses the plain-HTTP requests sent inside CONNECT tunnels; `authority` is set per socket. */
  const tunnel = createServer((req, res) => {
    const authority = (req.socket as Socket & { authority?: string }).authority ?? 'invalid.invalid';
    void forward('tunnel', new URL(req.url ?? '/', `http://${authority}`), req, res);
  });

  const server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('forward proxy: absolute-form request expected');
      return;
    }
    void forward('absolute', target, req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const authority = req.url ?? '';
    connects.push(authority);
    const hostname = authority.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    if (!isLoopback(hostname)) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    (socket as Socket & { authority?: string }).authority = authority;
    if (head.length > 0) socket.unshift(head);
    tunnel.emit('connection', socket);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connects,
    reset: () => {
      requests.length = 0;
      connects.length = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An engine harness whose HTTP transport goes through the proxy at `proxyUrl`. */
export function proxiedHarness(engine: EngineDefinition, proxyUrl: string, settings: Record<string, unknown>): EngineHarness {
  const transport = new HttpTransport({ proxyUrl });
  const storage = new Keyv();
  const resolved = resolveSettings(engine, settings);
  return {
    settings: resolved,
    storage,
    async run(value, type) {
      const { ctx, dispose } = createEngineContext(engine, resolved, {
        transport,
        dnsServers: [],
        dataDir: '/nonexistent',
        storeFor: (id) => keyvEngineStore(storage, id),
      });
      try {
        return await engine.run({ value, type }, ctx);
      } finally {
        dispose();
      }
    },
    close: () => transport.close(),
  };
}
