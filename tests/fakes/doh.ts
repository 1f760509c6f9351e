/**
 * A DNS-over-HTTPS JSON API (as https://dns.google/resolve) answering from the same zone objects
 * as the UDP fake: mount `dohHandler(zone)` on a path of `startFakeHttp`, e.g.
 * `startFakeHttp({ 'GET /resolve': dohHandler(zone) })`. Answers look like dns.google's: names
 * with a trailing dot, numeric types, MX `"10 mx1.example.com."`, TXT as plain text, SOA as
 * `"ns.icann.org. noc.dns.icann.org. 2024 7200 3600 1209600 3600"`, Status 3 for unknown names.
 */
import { lookupZone, normalizeName, type Zone, type ZoneRecord } from './dns.js';
import type { FakeHandler, FakeReply } from './http.js';

/** The record types of a zone, by DNS type number (the JSON API speaks numbers). */
const TYPE_NUMBERS: Record<string, number> = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28 };
const STATUS = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export interface DohJson {
  Status: number;
  TC: boolean;
  RD: boolean;
  RA: boolean;
  AD: boolean;
  CD: boolean;
  Question: { name: string; type: number }[];
  /** Absent when there is no record (as dns.google does). */
  Answer?: { name: string; type: number; TTL: number; data: string }[];
}

export interface DohOptions {
  /** Names answered with Status 2 (SERVFAIL). */
  servfail?: string[];
  /**
   * Write TXT data as Cloudflare's JSON API does (each character-string quoted: `"a" "b"`)
   * instead of dns.google's plain joined text.
   */
  quotedTxt?: boolean;
}

/** The JSON answer for one question. `type` is a type name (`MX`) or number (`15`). */
export function dohAnswer(zone: Zone, name: string, type: string, options: DohOptions = {}): DohJson {
  const typeName = /^\d+$/.test(type)
    ? Object.keys(TYPE_NUMBERS).find((key) => TYPE_NUMBERS[key] === Number(type)) ?? type
    : type.toUpperCase();
  const servfail = (options.servfail ?? []).map(normalizeName).includes(normalizeName(name));
  const { rcode, answers } = servfail ? { rcode: 'SERVFAIL' as const, answers: [] } : lookupZone(zone, name, typeName);
  const json: DohJson = {
    Status: STATUS[rcode],
    TC: false,
    RD: true,
    RA: true,
    AD: false,
    CD: false,
    Question: [{ name: absolute(name), type: TYPE_NUMBERS[typeName] ?? Number(type) }],
  };
  if (answers.length > 0) {
    json.Answer = answers.map((answer) => ({
      name: absolute(answer.name),
      type: TYPE_NUMBERS[answer.type]!,
      TTL: answer.ttl ?? 300,
      data: dataOf(answer, options),
    }));
  }
  return json;
}

/** A route handler answering `GET ?name=<n>&type=<t>`; reads `zone` on every request, so tests may change it. */
export function dohHandler(zone: Zone, options: DohOptions = {}): FakeHandler {
  return (req): FakeReply => {
    const name = req.query.get('name');
    const type = req.query.get('type') ?? 'A';
    if (!name) return { status: 400, json: { error: 'missing name' } };
    if (!/^\d+$/.test(type) && TYPE_NUMBERS[type.toUpperCase()] === undefined) {
      return { status: 400, json: { error: `invalid type: ${type}` } };
    }
    return { status: 200, headers: { 'content-type': 'application/x-javascript; charset=UTF-8' }, body: JSON.stringify(dohAnswer(zone, name, type, options)) };
  };
}

function absolute(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

function dataOf(answer: ZoneRecord, options: DohOptions): string {
  switch (answer.type) {
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return absolute(answer.data);
    case 'MX':
      return `${answer.data.preference ?? 10} ${absolute(answer.data.exchange)}`;
    case 'TXT': {
      const strings = (Array.isArray(answer.data) ? answer.data : [answer.data]).map(String);
      return options.quotedTxt ? strings.map((s) => `"${s}"`).join(' ') : strings.join('');
    }
    case 'SOA': {
      const soa = answer.data;
      return [absolute(soa.mname), absolute(soa.rname), soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum].join(' ');
    }
    default: // A, AAAA
      return answer.data;
  }
}
