/**
 * A loopback DNS server (UDP, 127.0.0.1, random port) answering from an in-memory zone, for
 * engines that resolve names themselves. The zone format and its lookup (`lookupZone`) are
 * shared with the DNS-over-HTTPS fake (doh.ts), so one zone object serves both.
 *
 * Limits (fine for tests): UDP only, no truncation/TCP fallback, answers must fit 512 bytes
 * unless the client announces EDNS.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import type { MxAnswer, SoaAnswer, StringAnswer, TxtAnswer } from 'dns-packet';

/** Records of one name. Names without trailing dots; TTLs default to realistic values. */
export interface ZoneRecords {
  A?: string[];
  AAAA?: string[];
  /** Host names (PTR lives at `4.3.2.1.in-addr.arpa` / nibble `ip6.arpa` names). */
  PTR?: string[];
  /** One string per record, or an array of character-strings for a multi-string record. */
  TXT?: Array<string | string[]>;
  /** The name is an alias: queries for other types follow it (as a recursive resolver does). */
  CNAME?: string;
  /** `"10 mx1.example.com"` (preference, exchange). */
  MX?: string[];
  NS?: string[];
  /** `"ns.icann.org noc.dns.icann.org 2024 7200 3600 1209600 3600"` (mname rname serial refresh retry expire minimum). */
  SOA?: string;
  /** TTL for every record of this name (default: per type, see TTLS). */
  TTL?: number;
}

/** Names are matched case-insensitively, with or without a trailing dot. */
export type Zone = Record<string, ZoneRecords>;

export type ZoneType = 'A' | 'AAAA' | 'PTR' | 'TXT' | 'CNAME' | 'MX' | 'NS' | 'SOA';

/** A record as dns-packet encodes it (name without trailing dot). */
export type ZoneRecord = StringAnswer | MxAnswer | TxtAnswer | SoaAnswer;

export interface ZoneAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  /** CNAME chain first, then the records asked for. */
  answers: ZoneRecord[];
}

/** Typical TTLs of real zones, so fakes do not all answer with the same number. */
const TTLS: Record<ZoneType, number> = { A: 300, AAAA: 300, CNAME: 300, PTR: 21600, MX: 3600, TXT: 3600, NS: 21600, SOA: 3600 };

export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** What a recursive resolver would answer from `zone`, following CNAMEs inside the zone. */
export function lookupZone(zone: Zone, name: string, type: string): ZoneAnswer {
  const index = new Map(Object.entries(zone).map(([key, records]) => [normalizeName(key), records]));
  const answers: ZoneRecord[] = [];
  let current = name.replace(/\.$/, '');
  for (let hops = 0; hops < 8; hops++) {
    const records = index.get(normalizeName(current));
    // A dangling alias is NXDOMAIN with the CNAME kept in the answer, as real resolvers do.
    if (!records) return { rcode: 'NXDOMAIN', answers };
    if (records.CNAME && type !== 'CNAME') {
      answers.push({ name: current, type: 'CNAME', ttl: records.TTL ?? TTLS.CNAME, data: records.CNAME });
      current = records.CNAME;
      continue;
    }
    answers.push(...recordsOf(current, records, type));
    break;
  }
  return { rcode: 'NOERROR', answers };
}

function recordsOf(name: string, records: ZoneRecords, type: string): ZoneRecord[] {
  const ttl = records.TTL ?? TTLS[type as ZoneType];
  switch (type) {
    case 'A':
    case 'AAAA':
    case 'PTR':
    case 'NS':
      return (records[type] ?? []).map((data) => ({ name, type, ttl, data }));
    case 'CNAME':
      return records.CNAME ? [{ name, type, ttl, data: records.CNAME }] : [];
    case 'TXT':
      return (records.TXT ?? []).map((text) => ({ name, type, ttl, data: chunks(text) }));
    case 'MX':
      return (records.MX ?? []).map((mx) => {
        const [preference, exchange] = mx.includes(' ') ? mx.split(/\s+/) : ['10', mx];
        return { name, type, ttl, data: { preference: Number(preference), exchange: exchange!.replace(/\.$/, '') } };
      });
    case 'SOA': {
      if (!records.SOA) return [];
      const [mname = '', rname = '', ...numbers] = records.SOA.split(/\s+/);
      const [serial, refresh, retry, expire, minimum] = numbers.map(Number);
      return [{
        name, type, ttl,
        data: { mname: mname.replace(/\.$/, ''), rname: rname.replace(/\.$/, ''), serial, refresh, retry, expire, minimum },
      }];
    }
    default:
      return [];
  }
}

/** A TXT record's character-strings: at most 255 bytes each on the wire. */
function chunks(text: string | string[]): string[] {
  if (Array.isArray(text)) return text;
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 255) out.push(text.slice(i, i + 255));
  return out.length > 0 ? out : [''];
}

export interface FakeDnsOptions {
  /** Receive queries but never answer (for timeouts). */
  silent?: boolean;
  /** Names answered with SERVFAIL. */
  servfail?: string[];
  /** Delay before every answer. */
  latencyMs?: number;
}

export interface FakeDnsServer {
  /** `127.0.0.1:<port>`, as an entry of dns_servers. */
  address: string;
  /** Every query received, in order (name without trailing dot, as sent). */
  queries: { name: string; type: string }[];
  setZone(zone: Zone): void;
  /** Adds or replaces names. */
  merge(zone: Zone): void;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export async function startFakeDns(zone: Zone = {}, options: FakeDnsOptions = {}): Promise<FakeDnsServer> {
  let current: Zone = { ...zone };
  const servfail = new Set((options.servfail ?? []).map(normalizeName));
  const queries: { name: string; type: string }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const socket = createSocket('udp4');

  const answer = (message: Buffer, peer: RemoteInfo) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: a real server would drop it too
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries.push({ name: question.name.replace(/\.$/, ''), type: question.type });
    if (options.silent) return;
    const result: { rcode: keyof typeof RCODE; answers: ZoneRecord[] } = servfail.has(normalizeName(question.name))
      ? { rcode: 'SERVFAIL', answers: [] }
      : lookupZone(current, question.name, question.type);
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | RCODE[result.rcode],
      questions: [question],
      answers: result.answers,
    });
    const send = () => socket.send(response, peer.port, peer.address);
    if (!options.latencyMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, options.latencyMs);
    timers.add(timer);
  };

  socket.on('message', answer);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = socket.address();

  return {
    address: `127.0.0.1:${port}`,
    queries,
    setZone: (zone) => void (current = { ...zone }),
    merge: (zone) => void (current = { ...current, ...zone }),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

