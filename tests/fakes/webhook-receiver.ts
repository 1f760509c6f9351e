/**
 * A webhook receiver on the loopback, written as a team would write one with the Standard Webhooks
 * library (`standardwebhooks`, the specification's own): every request is verified with
 * `Webhook.verify` (signature, id, timestamp within 5 minutes) and recorded, verified or not; a
 * request that does not verify is answered 401. Slack and Teams receivers (`verify: false`) take
 * the body as it comes.
 *
 * It can be told to fail the next requests (`failNext`): `refuse` (the connection is dropped as
 * the request arrives), a status (500, 503...), 429 with a Retry-After, or `timeout` (no answer
 * until the client gives up); then it answers 200 again. `down()` stops listening (the port
 * refuses connections) and `up()` listens again on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Failure = 'refuse' | 'timeout' | number | { status: 429 | 503; retryAfter: string };

export interface Received {
  /** The request's path (with its query). */
  path: string;
  headers: IncomingMessage['headers'];
  /** The body as sent. */
  body: string;
  /** The parsed JSON body, when it parses. */
  json: unknown;
  /** Whether the library verified it (always false with `verify: false`). */
  verified: boolean;
  /** Why it did not verify. */
  error?: string;
  /** What the receiver did with it. */
  answered: 'ok' | 'refused' | 'timeout' | number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hooks/oas`. */
  url: string;
  port: number;
  /** Every request, in arrival order. */
  received: Received[];
  /** The requests verified and answered 200. */
  delivered(): Received[];
  failNext(count: number, how: Failure): void;
  /** Resolves once `check` holds for the requests received so far (or rejects after `ms`). */
  until(check: (received: Received[]) => boolean, ms?: number): Promise<Received[]>;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The `whsec_...` secret to verify with. */
  secret?: string;
  /** false: take every body (a Slack or Teams receiver). Default true. */
  verify?: boolean;
  /** The answer's body (default `{"ok":true}`). */
  answer?: string;
}

export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const verifier = options.verify !== false && options.secret ? new Webhook(options.secret) : undefined;
  const received: Received[] = [];
  const failures: Failure[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  const tell = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const entry: Received = { path: req.url ?? '/', headers: req.headers, body, json, verified: false, answered: 'ok' };
    if (verifier) {
      try {
        verifier.verify(body, req.headers as Record<string, string>);
        entry.verified = true;
      } catch (error) {
        entry.error = (error as Error).message;
      }
    }
    received.push(entry);
    const failure = failures.shift();
    if (failure === 'refuse') {
      entry.answered = 'refused';
      req.socket.destroy();
    } else if (failure === 'timeout') {
      entry.answered = 'timeout';
      held.add(res);
      res.once('close', () => held.delete(res));
    } else if (typeof failure === 'number') {
      entry.answered = failure;
      res.writeHead(failure, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `status ${failure}` }));
    } else if (failure) {
      entry.answered = failure.status;
      res.writeHead(failure.status, { 'content-type': 'application/json', 'retry-after': failure.retryAfter }).end('{"error":"slow down"}');
    } else if (verifier && !entry.verified) {
      entry.answered = 401;
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: entry.error }));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(options.answer ?? '{"ok":true}');
    }
    tell();
  };

  let server: Server;
  let port = 0;
  const listen = async () => {
    server = createServer((req, res) => void handle(req, res));
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  };
  const stop = async () => {
    for (const res of held) res.destroy();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}/hooks/oas`,
    port,
    received,
    delivered: () => received.filter((r) => r.answered === 'ok' && (verifier ? r.verified : true)),
    failNext(count, how) {
      for (let i = 0; i < count; i++) failures.push(how);
    },
    until: (check, ms = 20_000) => new Promise((resolve, reject) => {
      const test = () => {
        if (!check(received)) return false;
        waiters.delete(onChange);
        clearTimeout(timer);
        resolve(received);
        return true;
      };
      const onChange = () => void test();
      const timer = setTimeout(() => {
        waiters.delete(onChange);
        reject(new Error(`webhook receiver: not there after ${ms} ms; received ${received.length}: ${received.map((r) => `${r.answered}${r.verified ? '' : ` (unverified: ${r.error ?? 'no check'})`}`).join(', ')}`));
      }, ms);
      waiters.add(onChange);
      test();
    }),
    down: stop,
    up: listen,
    close: stop,
  };
}

/** A fresh `whsec_...` secret, as a team would generate one (24 random bytes, base64). */
export function newSecret(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return `whsec_${Buffer.from(bytes).toString('base64')}`;
}
