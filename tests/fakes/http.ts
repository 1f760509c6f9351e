/**
 * A programmable loopback HTTP server standing in for an upstream API. Routes map
 * "METHOD /path" (or "/path" for any method; a trailing "*" matches a prefix) to a reply or a
 * handler. Every request is recorded so tests can assert what was (not) called.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Serialised as the JSON body. */
  json?: unknown;
  /** Raw body (wins over json). */
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (for timeouts); the socket is closed when the server stops. */
  hang?: boolean;
}

export type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;
export type FakeRoute = FakeReply | FakeHandler;

export interface FakeHttpServer {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  requests: FakeRequest[];
  route(key: string, route: FakeRoute): void;
  /** Requests whose path starts with `prefix` (and method matches, when given as "GET /x"). */
  hits(key: string): FakeRequest[];
  reset(): void;
  close(): Promise<void>;
}

export interface FakeHttpOptions {
  /** Added before every answer (for benchmarks and slow-upstream tests). */
  latencyMs?: number;
}

/** Replies used across engine tests. */
export const reply = {
  json: (json: unknown, status = 200): FakeReply => ({ status, json }),
  status: (status: number, json: unknown = { error: `status ${status}` }): FakeReply => ({ status, json }),
  tooMany: (retryAfterSeconds: number): FakeReply => ({
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    json: { error: 'rate limited' },
  }),
  malformed: (): FakeReply => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"truncated": ' }),
  slow: (delayMs: number, inner: FakeReply): FakeReply => ({ ...inner, delayMs }),
  hang: (): FakeReply => ({ hang: true }),
  html: (body: string, status = 200): FakeReply => ({ status, headers: { 'content-type': 'text/html; charset=utf-8' }, body }),
};

/** Answers the first call with `first`, every later call with `then` (e.g. 429 then 200). */
export function sequence(...replies: FakeRoute[]): FakeHandler {
  let call = 0;
  return (req) => {
    const route = replies[Math.min(call++, replies.length - 1)]!;
    return typeof route === 'function' ? route(req) : route;
  };
}

export async function startFakeHttp(routes: Record<string, FakeRoute> = {}, options: FakeHttpOptions = {}): Promise<FakeHttpServer> {
  const table = new Map<string, FakeRoute>(Object.entries(routes));
  const requests: FakeRequest[] = [];
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const fakeReq: FakeRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(fakeReq);
    const route = match(table, fakeReq);
    let answer: FakeReply;
    try {
      answer = route === undefined
        ? { status: 404, json: { error: 'not_found', message: `no route for ${fakeReq.method} ${fakeReq.path}` } }
        : typeof route === 'function' ? await route(fakeReq) : route;
    } catch (error) {
      answer = { status: 500, json: { error: String(error) } };
    }
    const delay = (options.latencyMs ?? 0) + (answer.delayMs ?? 0);
    if (answer.hang) {
      hanging.add(res);
      return;
    }
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (res.destroyed) return;
    const body = answer.body ?? (answer.json !== undefined ? JSON.stringify(answer.json) : '');
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.body === undefined && answer.json !== undefined) headers['content-type'] ??= 'application/json';
    res.writeHead(answer.status ?? 200, headers);
    res.end(body);
  });
  // Long enough for clients to reuse connections (undici subtracts 1 s from the advertised timeout).
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    route: (key, route) => void table.set(key, route),
    hits: (key) => {
      const [method, prefix] = key.includes(' ') ? key.split(' ', 2) as [string, string] : [undefined, key];
      return requests.filter((r) => (!method || r.method === method) && r.path.startsWith(prefix));
    },
    reset: () => void (requests.length = 0),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function match(table: Map<string, FakeRoute>, req: FakeRequest): FakeRoute | undefined {
  const candidates = [`${req.method} ${req.path}`, req.path];
  for (const key of candidates) {
    const exact = table.get(key);
    if (exact !== undefined) return exact;
  }
  let best: { len: number; route: FakeRoute } | undefined;
  for (const [key, route] of table) {
    if (!key.endsWith('*')) continue;
    const [method, pattern] = key.includes(' ') ? key.split(' ', 2) as [string, string] : [undefined, key];
    if (method && method !== req.method) continue;
    const prefix = pattern.slice(0, -1);
    if (req.path.startsWith(prefix) && (!best || prefix.length > best.len)) best = { len: prefix.length, route };
  }
  return best?.route;
}
