/**
 * The benchmark's upstream fakes, run in a worker thread so that their CPU time is charged to
 * neither the oas server (a subprocess) nor the bench's own HTTP client (the main thread).
 *
 * - Every keyless intelligence API (tests/fakes/intel.ts: urlscan, phishtank, hudsonrock,
 *   grep.app, ipquery, ipapi, ...), one loopback HTTP server per engine: in the real world every
 *   engine talks to its own upstream host, and an HTTP client limits connections per origin, so
 *   one shared fake would impose a limit the real upstreams do not.
 * - A DNS server (UDP) answering any name `<label>.<tld>` with one A record, a public IPv4 address
 *   of its own (45.0.0.1, 45.0.0.2, ... in order of first query, so every distinct domain pivots to
 *   a distinct address), no AAAA record, and NXDOMAIN for PTR. Its answers cost O(1) whatever the
 *   number of names (tests/fakes/dns.ts rebuilds its zone index on every query, too slow for the
 *   10 000-observable runs).
 *
 * Both answer every request after the same latency, which the main thread can change at any time
 * (`{ type: 'latency', ms }`). `{ type: 'counts' }` answers how many HTTP requests and DNS queries
 * arrived since the last count. Posts `{ settings }` (engines and dns_servers) once listening.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';
import * as dnsPacket from 'dns-packet';
import type { FakeHttpOptions } from '../fakes/http.js';
import { intelSettings, startFakeIntel } from '../fakes/intel.js';

const state = { latencyMs: Number((workerData as { latencyMs: number }).latencyMs) };
/** Read by the HTTP fake on every request: changing it changes the latency at once. */
const httpOptions: FakeHttpOptions = { latencyMs: state.latencyMs };
/** Every engine the intel fake serves, each with a fake of its own (same routes, own port). */
const ENGINE_IDS = Object.keys(intelSettings('http://127.0.0.1'));
const intels = await Promise.all(ENGINE_IDS.map(() => startFakeIntel(httpOptions)));
const engines: Record<string, Record<string, unknown>> = {};
ENGINE_IDS.forEach((id, i) => {
  engines[id] = intelSettings(intels[i]!.url)[id]!;
});

let dnsQueries = 0;
const addresses = new Map<string, string>();
const addressOf = (name: string): string => {
  let ip = addresses.get(name);
  if (!ip) {
    const n = addresses.size;
    const block = Math.floor(n / 250);
    ip = `45.${(block >> 8) & 255}.${block & 255}.${(n % 250) + 1}`;
    addresses.set(name, ip);
  }
  return ip;
};

const dns = createSocket('udp4');
const timers = new Set<NodeJS.Timeout>();
dns.on('message', (message: Buffer, peer: RemoteInfo) => {
  let query: dnsPacket.DecodedPacket;
  try {
    query = dnsPacket.decode(message);
  } catch {
    return;
  }
  const question = query.questions?.[0];
  if (!question) return;
  dnsQueries++;
  const name = question.name.toLowerCase().replace(/\.$/, '');
  const isName = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name) && !name.endsWith('.arpa');
  const answers: dnsPacket.Answer[] = isName && question.type === 'A' ? [{ name: question.name, type: 'A', ttl: 300, data: addressOf(name) }] : [];
  const response = dnsPacket.encode({
    type: 'response',
    id: query.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (isName ? 0 : 3),
    questions: [question],
    answers,
  });
  const send = () => dns.send(response, peer.port, peer.address);
  if (state.latencyMs <= 0) return send();
  const timer = setTimeout(() => {
    timers.delete(timer);
    send();
  }, state.latencyMs);
  timers.add(timer);
});
await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve));
const dnsAddress = `127.0.0.1:${dns.address().port}`;

parentPort!.postMessage({ settings: { dns_servers: [dnsAddress], engines } });
parentPort!.on('message', async (message: { type: string; ms?: number }) => {
  switch (message.type) {
    case 'latency':
      state.latencyMs = message.ms ?? 0;
      httpOptions.latencyMs = state.latencyMs;
      parentPort!.postMessage({ latencyMs: state.latencyMs });
      break;
    case 'counts': {
      parentPort!.postMessage({ http: intels.reduce((n, intel) => n + intel.requests.length, 0), dns: dnsQueries });
      for (const intel of intels) intel.reset();
      dnsQueries = 0;
      break;
    }
    case 'close':
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(intels.map((intel) => intel.close()));
      await new Promise<void>((resolve) => dns.close(() => resolve()));
      parentPort!.close();
      break;
  }
});
