/**
 * A tiny loopback HTTP forward proxy for tests of the `proxy_url` setting. It records every
 * request it carries and forwards it, for `http://` destinations on 127.0.0.1/localhost only
 * (anything else is refused: tests never leave the machine). Both ways of using an HTTP proxy
 * are understood:
 * - `CONNECT 127.0.0.1:4000` tunnels (what undici's ProxyAgent does by default): the plain-HTTP
 *   requests inside are read, recorded and forwarded one by one;
 * - absolute-form requests (`POST http://127.0.0.1:4000/x HTTP/1.1`).
 *
 * `proxiedRunner` builds the real runner (like `tests/helpers/runner.ts`) on an `HttpTransport`
 * whose `proxyUrl` is the proxy, as the application does with the `proxy_url` setting;
 * `proxiedHarness` runs one engine's lookup that way (like `tests/helpers/engine.ts`);
 * `proxiedSuite` sets up a suite's fake upstream, proxy and proxied runner.
 */
import { after, before } from 'node:test';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Keyv from 'keyv';
import reverseDns from '../../engines/reverse_dns.js';
import { Catalog } from '../../src/engine/catalog.js';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { HttpTransport } from '../../src/http/client.js';
import { EngineRunner } from '../../src/runner/runner.js';
import { keyvEngineStore } from '../../src/store/engine-store.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import type { RunnerHarness } from '../helpers/runner.js';
import { startFakeHttp, type FakeHttpServer, type FakeRoute } from './http.js';

export interface ProxyRecord {
  /** `tunnel` (inside a CONNECT) or `absolute` (absolute-form request line). */
  via: 'tunnel' | 'absolute';
  method: string;
  /** The destination, e.g. `http://127.0.0.1:4000/misp/attributes/restSearch`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeProxy {
  /** `http://127.0.0.1:<port>`: the value for `proxy_url`. */
  url: string;
  /** Requests carried, in order. */
  requests: ProxyRecord[];
  /** `host:port` of every CONNECT asked for, refused ones included. */
  connects: string[];
  reset(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const isLoopback = (hostname: string) => hostname === '127.0.0.1' || hostname === 'localhost';

type TunnelSocket = Socket & { destination?: string };

export async function startFakeProxy(): Promise<FakeProxy> {
  const requests: ProxyRecord[] = [];
  const connects: string[] = [];
  const sockets = new Set<Socket>();

  async function forward(via: ProxyRecord['via'], target: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({ via, method: req.method ?? 'GET', url: target.href, headers: req.headers, body: body.toString('utf8') });
    if (target.protocol !== 'http:' || !isLoopback(target.hostname)) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('fake proxy: loopback http destinations only');
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    headers['content-length'] = String(body.length);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port || 80, method: req.method, path: target.pathname + target.search, headers },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end();
    });
    res.on('close', () => upstream.destroy()); // the client gave up (timeout tests)
    upstream.end(body);
  }

  // Reads the HTTP requests inside established tunnels.
  const inner = createServer((req, res) => {
    const destination = (req.socket as TunnelSocket).destination ?? 'invalid.invalid';
    void forward('tunnel', new URL(req.url ?? '/', `http://${destination}`), req, res);
  });

  const server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('fake proxy: absolute-form request expected');
      return;
    }
    void forward('absolute', target, req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, socket: TunnelSocket, head: Buffer) => {
    const destination = req.url ?? '';
    connects.push(destination);
    if (!isLoopback(destination.replace(/:\d+$/, ''))) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    socket.destination = destination;
    if (head.length > 0) socket.unshift(head);
    inner.emit('connection', socket);
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
      inner.closeAllConnections();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The real runner over the given engines (reverse_dns as pivot, as `runnerHarness`), its HTTP
 * transport going through the proxy at `proxyUrl`.
 */
export function proxiedRunner(engines: EngineDefinition[], proxyUrl: string, settings: Record<string, Record<string, unknown>>): RunnerHarness {
  const all = [reverseDns as EngineDefinition, ...engines.filter((e) => e.id !== 'reverse_dns')];
  const catalog = new Catalog(all);
  const transport = new HttpTransport({ proxyUrl });
  const storage = new Keyv();
  const runner = new EngineRunner({
    catalog: all,
    services: { transport, dnsServers: [], dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(storage, id) },
    cache: new Keyv(),
    cacheTtlSeconds: 0,
    concurrency: 4,
    engineSettings: settings,
  });
  return {
    catalog,
    analyze: (observables, names, options = {}) => runner.analyze(observables, catalog.select(names), options),
    close: () => transport.close(),
  };
}

/** An engine harness whose HTTP transport goes through the proxy at `proxyUrl`. */
export function proxiedHarness(engine: EngineDefinition, proxyUrl: string, settings: Record<string, unknown>): EngineHarness {
  return engineHarness(engine, { settings, transport: new HttpTransport({ proxyUrl }) });
}

export interface ProxiedSuite {
  fake: FakeHttpServer;
  proxy: FakeProxy;
  /** The runner over the engine alone, through `proxy`. */
  runner: RunnerHarness;
}

/**
 * For a suite of an engine's calls through a proxy: before it, a fake upstream with `routes`, a
 * proxy, and `proxiedRunner` over `engine` with `engines.<id>` = `{ ...settings(fake.url),
 * retries: 0 }`; after it, all three closed. The fields are set once `before` has run.
 */
export function proxiedSuite(engine: EngineDefinition, routes: Record<string, FakeRoute>, settings: (url: string) => Record<string, unknown>): ProxiedSuite {
  const suite = {} as ProxiedSuite;
  before(async () => {
    suite.fake = await startFakeHttp(routes);
    suite.proxy = await startFakeProxy();
    suite.runner = proxiedRunner([engine], suite.proxy.url, { [engine.id]: { ...settings(suite.fake.url), retries: 0 } });
  });
  after(async () => {
    await suite.runner?.close();
    await suite.proxy?.close();
    await suite.fake?.close();
  });
  return suite;
}
