/**
 * A loopback WHOIS server (RFC 3912) standing in for IANA's or a registry's: reads one query
 * line, answers from a table (case-insensitively, like registries), closes. Every query is
 * recorded so tests can assert what was (not) asked.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';

/** answer: reply and close; silent: read the query, never reply or close (for timeouts). */
export type FakeWhoisMode = 'answer' | 'silent';

export interface FakeWhoisOptions {
  /** Added before every answer. */
  latencyMs?: number;
  mode?: FakeWhoisMode;
}

export interface FakeWhoisServer {
  host: string;
  port: number;
  /** `127.0.0.1:<port>`, as the settings `whois_server` / `whois_iana_server` take it. */
  address: string;
  /** Queries received, without the trailing CRLF. */
  queries: string[];
  answer(query: string, text: string): void;
  setMode(mode: FakeWhoisMode): void;
  reset(): void;
  close(): Promise<void>;
}

/** What Verisign says for an unregistered .com/.net name. */
export function noMatch(query: string): string {
  return `No match for "${query.toUpperCase()}".\r\n>>> Last update of whois database: 2026-01-10T12:00:00Z <<<\r\n`;
}

export async function startFakeWhois(answers: Record<string, string> = {}, options: FakeWhoisOptions = {}): Promise<FakeWhoisServer> {
  const table = new Map(Object.entries(answers).map(([q, text]) => [q.toLowerCase(), text]));
  const queries: string[] = [];
  const sockets = new Set<Socket>();
  let mode: FakeWhoisMode = options.mode ?? 'answer';

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = '';
    let received = false;
    socket.on('data', async (chunk) => {
      if (received) return; // one query per connection, as in RFC 3912
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      received = true;
      const query = buffered.slice(0, end).replace(/\r$/, '');
      queries.push(query);
      if (mode === 'silent') return;
      if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
      if (!socket.destroyed) socket.end(table.get(query.toLowerCase()) ?? noMatch(query));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    host: '127.0.0.1',
    port,
    address: `127.0.0.1:${port}`,
    queries,
    answer: (query, text) => void table.set(query.toLowerCase(), text),
    setMode: (next) => void (mode = next),
    reset: () => void (queries.length = 0),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on 127.0.0.1 where nothing listens (for "connection refused"). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
