/**
 * The secrets of custom engines (setting `custom_engines`, issue 23) never leave the process
 * except to their own upstream: "a secret appears in no result, log, error message, cache key,
 * Redis value or export, in any encoding the request used (header, query string, Basic, body)".
 *
 * One custom engine per way a key travels, each with a secret of its own (from an environment
 * variable, as custom engines take them), every secret holding the characters encodings change
 * (+ / = space & " \ '):
 *
 * - intel: the `X-Api-Key` header (tests/fakes/internal-intel.ts);
 * - intel_search: `Authorization: Bearer` (internal-intel.ts);
 * - intel_domain: the query string, through `request.query` (internal-intel.ts);
 * - intel_json: a JSON body;
 * - intel_form: a form body (`Content-Type: application/x-www-form-urlencoded`);
 * - intel_basic: `Authorization: Basic {secret.B64}`, the variable holding the base64 of user:pass;
 * - intel_urlkey: the query string written in the URL's template.
 *
 * The upstream is a loopback server switched between modes: success (the three routes of the
 * internal-intel fake are forwarded to three instances of it, one per key, so a success proves each
 * key arrived as the fake expects it), 401 (the fake refusing, its error body echoing the request
 * whole), 500 (its body echoing it too), a timeout, and an answer echoing the raw request (URL,
 * headers, body) in the fields the definitions point at, and in keys.
 *
 * Then every secret is looked for, in every form an encoding gives it (raw, URL-encoded, form-
 * encoded, as the URL parser sends a query, JSON-escaped once and twice, base64, base64url, CSV-
 * and XML-escaped) and by a marker of its own (so a secret masked only in part is found too), in:
 * each `oas analyze` format's stdout and stderr (table, json, jsonl, csv, stix, misp, and xlsx with
 * -o, unzipped), every file of the configuration's folder (data directory, output files, the
 * engine declarations' cache), `oas serve`'s API answers, pages, page data and exports, its log
 * (text and JSON), and with Redis (`oas serve --redis --no-worker`, `oas worker`, `oas analyze
 * --redis`) every key and every value of the Redis.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { redact } from '../src/http/redact.js';
import { intelDefinitions, startInternalIntel, type InternalIntelFake, type IntelRecord } from './fakes/internal-intel.js';
import { runOas, type Run } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { completedResults, spawnServe, spawnWorker, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

// ---------------------------------------------------------------------------------------------
// The secrets
// ---------------------------------------------------------------------------------------------

type Way = 'header' | 'bearer' | 'query' | 'json' | 'form' | 'basic' | 'urlkey';

/** What follows each secret's marker: the characters URL, form, JSON, CSV and XML encodings change. */
const TAIL = `+k3y/with=slash and spaces&amp"dq\\bs'sq`;
/** The user:pass whose base64 the Basic engine's variable holds (oas never sees it decoded). */
const BASIC_USER_PASS = `BSCq7x9user:PSWq7x9 w0rd+/="'&x`;
const SECRETS: Record<Way, string> = {
  header: `HDRq7x9${TAIL}`,
  // "&key=" in a secret: what masks credential-looking URL parameters must not cut it in half.
  bearer: `BRRq7x9+k3y/with=slash and spaces&key=v"dq\\bs'sq`,
  query: `QRYq7x9${TAIL}`,
  json: `JSNq7x9${TAIL}`,
  form: `FRMq7x9${TAIL}`,
  basic: Buffer.from(BASIC_USER_PASS).toString('base64'),
  urlkey: `URLq7x9${TAIL}`,
};
/** A part of each secret found in no other text, so that a secret masked in part is still seen. */
const MARKERS: Record<Way, string> = {
  header: 'HDRq7x9', bearer: 'BRRq7x9', query: 'QRYq7x9', json: 'JSNq7x9', form: 'FRMq7x9', basic: SECRETS.basic.slice(0, 14), urlkey: 'URLq7x9',
};
const ENV_OF: Record<Way, string> = {
  header: 'OAS_TEST_SECRET_HEADER',
  bearer: 'OAS_TEST_SECRET_BEARER',
  query: 'OAS_TEST_SECRET_QUERY',
  json: 'OAS_TEST_SECRET_JSON',
  form: 'OAS_TEST_SECRET_FORM',
  basic: 'OAS_TEST_SECRET_BASIC',
  urlkey: 'OAS_TEST_SECRET_URLKEY',
};
const ENV: Record<string, string> = Object.fromEntries((Object.keys(ENV_OF) as Way[]).map((way) => [ENV_OF[way], SECRETS[way]]));
const WAYS = Object.keys(SECRETS) as Way[];

const ENGINE_OF: Record<Way, string> = {
  header: 'intel', bearer: 'intel_search', query: 'intel_domain', json: 'intel_json', form: 'intel_form', basic: 'intel_basic', urlkey: 'intel_urlkey',
};
const ENGINES = WAYS.map((way) => ENGINE_OF[way]);

const FLAGGED_IP = '45.155.205.233';
const PHISHING_DOMAIN = 'evil-login.com';
const TEXT = `${FLAGGED_IP} ${PHISHING_DOMAIN}`;
const RECORDS: Record<string, IntelRecord> = {
  [FLAGGED_IP]: { score: 91, category: 'botnet', tags: ['c2'] },
  [PHISHING_DOMAIN]: { score: 70, category: 'phishing', tags: ['login'] },
};
/** The observable types each engine takes (of the two in TEXT). */
const TYPES: Record<string, readonly string[]> = {
  intel: ['IPv4'], intel_search: ['FQDN'], intel_domain: ['FQDN'],
  intel_json: ['IPv4', 'FQDN'], intel_form: ['IPv4', 'FQDN'], intel_basic: ['IPv4', 'FQDN'], intel_urlkey: ['IPv4', 'FQDN'],
};

/** Each form a text takes in an encoding, by name. */
function forms(secret: string): [string, string][] {
  const json = JSON.stringify(secret).slice(1, -1);
  const xml = secret.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const all: [string, string][] = [
    ['raw', secret],
    ['URL-encoded', encodeURIComponent(secret)],
    ['form-encoded', new URLSearchParams({ s: secret }).toString().slice(2)],
    ['as a URL\'s query sends it', new URL(`http://x/?${encodeURIComponent(secret)}`).search.slice(1)],
    ['JSON-escaped', json],
    ['JSON-escaped twice', JSON.stringify(json).slice(1, -1)],
    ['base64', Buffer.from(secret).toString('base64')],
    ['base64url', Buffer.from(secret).toString('base64url')],
    ['CSV-quoted', secret.replaceAll('"', '""')],
    ['XML-escaped', xml.replaceAll('"', '&quot;').replaceAll('\'', '&apos;')],
    ['XML-escaped (&#39;)', xml.replaceAll('"', '&quot;').replaceAll('\'', '&#39;')],
    ['XML-escaped (&#x27;)', xml.replaceAll('"', '&#34;').replaceAll('\'', '&#x27;')],
    ['XML-escaped (quotes kept)', xml],
  ];
  const seen = new Set<string>();
  return all.filter(([, form]) => !seen.has(form) && seen.add(form));
}

/** Everything to look for: [what, text]. */
const NEEDLES: [string, string][] = [
  ...WAYS.flatMap((way) => [
    ...forms(SECRETS[way]).map(([form, text]): [string, string] => [`the ${way} secret (${form})`, text]),
    [`the ${way} secret's marker ${MARKERS[way]}`, MARKERS[way]] as [string, string],
  ]),
  // The Basic credentials decoded: nothing in oas decodes them, so they never show.
  ...forms(BASIC_USER_PASS).map(([form, text]): [string, string] => [`the Basic user:pass (${form})`, text]),
  ['the Basic password\'s marker PSWq7x9', 'PSWq7x9'],
  ['the Basic user\'s marker BSCq7x9', 'BSCq7x9'],
];

/** Without white space nor table rules: a secret wrapped over lines of a table is found too. */
const collapse = (text: string) => text.replace(/[\s│┃|]+/g, '');
const COLLAPSED: [string, string][] = NEEDLES.map(([what, text]): [string, string] => [what, collapse(text)]).filter(([, text]) => text.length >= 7);

let checked = 0;

/** No secret, in any form, in `text` (from `where`). */
function assertClean(text: string, where: string): void {
  checked++;
  for (const [what, needle] of NEEDLES) {
    const at = text.indexOf(needle);
    if (at >= 0) assert.fail(`${where} holds ${what}: …${text.slice(Math.max(0, at - 80), at + needle.length + 40)}…`);
  }
  const flat = collapse(text);
  for (const [what, needle] of COLLAPSED) {
    const at = flat.indexOf(needle);
    if (at >= 0) assert.fail(`${where} holds ${what} (across white space): …${flat.slice(Math.max(0, at - 80), at + needle.length + 40)}…`);
  }
}

/** The entries of a zip file (an xlsx workbook), decompressed. */
function unzip(bytes: Buffer): Map<string, Buffer> {
  const end = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(end >= 0, 'a zip file');
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  const entries = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(bytes.readUInt32LE(at), 0x02014b50, 'a central directory entry');
    const method = bytes.readUInt16LE(at + 10);
    const size = bytes.readUInt32LE(at + 20);
    const nameLength = bytes.readUInt16LE(at + 28);
    const local = bytes.readUInt32LE(at + 42);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + size);
    entries.set(name, method === 0 ? data : inflateRawSync(data));
    at += 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
  }
  return entries;
}

/** A file's bytes, and a zip's entries decompressed. */
function assertFileClean(bytes: Buffer, where: string): void {
  assertClean(bytes.toString('latin1'), where);
  assertClean(bytes.toString('utf8'), where);
  if (bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    for (const [name, entry] of unzip(bytes)) assertClean(entry.toString('utf8'), `${where} (${name})`);
  }
}

/** Every file under `dir`, read as bytes; returns how many. */
function assertTreeClean(dir: string, where: string): number {
  let files = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    assertFileClean(readFileSync(path), `${where}/${name}`);
    files++;
  }
  return files;
}

/** Every key of every database of the Redis, with its type and whole value, as text. */
async function dumpRedis(client: Redis): Promise<{ key: string; text: string }[]> {
  const info = await client.info('keyspace');
  const databases = [...info.matchAll(/^db(\d+):/gm)].map((m) => Number(m[1]));
  const dump: { key: string; text: string }[] = [];
  for (const db of databases) {
    await client.select(db);
    for (const key of await client.keys('*')) {
      const type = await client.type(key);
      let values: (Buffer | string)[];
      switch (type) {
        case 'string': values = [(await client.getBuffer(key)) ?? Buffer.alloc(0)]; break;
        case 'hash': values = Object.entries(await client.hgetallBuffer(key)).flatMap(([field, value]) => [field, value]); break;
        case 'list': values = await client.lrangeBuffer(key, 0, -1); break;
        case 'set': values = await client.smembersBuffer(key); break;
        case 'zset': values = await client.zrangeBuffer(key, 0, -1); break;
        case 'stream': values = [JSON.stringify(await client.xrange(key, '-', '+'))]; break;
        default: values = [];
      }
      dump.push({ key: `db${db} ${type} ${key}`, text: [key, ...values.map((v) => (typeof v === 'string' ? v : v.toString('latin1')))].join('\n') });
    }
  }
  await client.select(0);
  return dump;
}

// ---------------------------------------------------------------------------------------------
// The upstream
// ---------------------------------------------------------------------------------------------

type Mode = 'success' | 'refused' | 'error500' | 'timeout' | 'echo';
const MODES: Mode[] = ['success', 'refused', 'error500', 'timeout', 'echo'];

interface RawRequest {
  method: string;
  /** As sent: path and query string, encoded as they were. */
  url: string;
  /** As sent: names and values, in order. */
  headers: string[];
  body: string;
}

interface Upstream {
  url: string;
  mode: Mode;
  seen: RawRequest[];
  close(): Promise<void>;
}

function headerOf(raw: RawRequest, name: string): string | undefined {
  for (let i = 0; i < raw.headers.length; i += 2) if (raw.headers[i]!.toLowerCase() === name) return raw.headers[i + 1];
  return undefined;
}

/** The request as the upstream got it, in one text. */
function echoOf(raw: RawRequest): string {
  const headers = [];
  for (let i = 0; i < raw.headers.length; i += 2) headers.push(`${raw.headers[i]}: ${raw.headers[i + 1]}`);
  return `${raw.method} ${raw.url}\n${headers.join('\n')}\n\n${raw.body}`;
}

/** An answer for every route, each field the definitions point at holding the request echoed. */
function echoAnswer(raw: RawRequest): unknown {
  const echo = echoOf(raw);
  return {
    data: { ip: echo, score: 90, category: echo, tags: [echo, { [echo]: echo }], asn: { number: 64500, org: echo }, notes: echo },
    total: 1,
    results: [{ indicator: echo, kind: echo, category: echo, score: 90 }],
    domain: echo, verdict: echo, risk: 90, tags: [echo], notes: echo,
    score: 90, category: echo,
    echo: { method: raw.method, url: raw.url, headers: raw.headers, body: raw.body, [echo]: [echo] },
  };
}

/** The answer of a record (404 when there is none), as the routes of this file give it. */
function recordAnswer(indicator: string | null | undefined): [number, unknown] {
  const record = indicator ? RECORDS[indicator] : undefined;
  return record ? [200, { score: record.score, category: record.category, tags: record.tags }] : [404, { error: 'not found' }];
}

const REFUSED: [number, unknown] = [401, { error: 'invalid API key' }];

/**
 * The upstream of every engine: in success mode the internal-intel routes go to the fake for their
 * key, the other routes check their key here; in the other modes every route fails or echoes.
 */
async function startUpstream(backends: { ip: InternalIntelFake; search: InternalIntelFake; domain: InternalIntelFake }): Promise<Upstream> {
  const hanging = new Set<ServerResponse>();
  const seen: RawRequest[] = [];
  const state: Upstream = { url: '', mode: 'success', seen, close: async () => {} };

  const succeed = async (raw: RawRequest): Promise<[number, unknown]> => {
    const url = new URL(raw.url, 'http://upstream.invalid');
    const path = url.pathname;
    const backend = path.startsWith('/v1/ip/') ? backends.ip : path === '/v1/search' ? backends.search : path === '/v1/domain' ? backends.domain : undefined;
    if (backend) {
      const headers: Record<string, string> = {};
      for (let i = 0; i < raw.headers.length; i += 2) {
        const name = raw.headers[i]!.toLowerCase();
        if (!['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive'].includes(name)) headers[name] = raw.headers[i + 1]!;
      }
      const res = await fetch(`${backend.url}${raw.url}`, { method: raw.method, headers, body: raw.method === 'POST' ? raw.body : undefined });
      return [res.status, await res.json()];
    }
    if (path === '/v1/json') {
      const body = JSON.parse(raw.body) as { indicator?: string; auth?: { api_key?: string } };
      return body.auth?.api_key === SECRETS.json ? recordAnswer(body.indicator) : REFUSED;
    }
    if (path === '/v1/form') {
      const body = new URLSearchParams(raw.body);
      return headerOf(raw, 'content-type') === 'application/x-www-form-urlencoded' && body.get('token') === SECRETS.form ? recordAnswer(body.get('indicator')) : REFUSED;
    }
    if (path.startsWith('/v1/basic/')) {
      return headerOf(raw, 'authorization') === `Basic ${SECRETS.basic}` ? recordAnswer(decodeURIComponent(path.slice('/v1/basic/'.length))) : REFUSED;
    }
    if (path === '/v1/lookup') return url.searchParams.get('access_key') === SECRETS.urlkey ? recordAnswer(url.searchParams.get('q')) : REFUSED;
    return [404, { error: `no route for ${path}` }];
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw: RawRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8') };
    seen.push(raw);
    let answer: [number, unknown];
    switch (state.mode) {
      case 'timeout':
        hanging.add(res);
        return;
      case 'refused':
        answer = [401, { error: 'invalid API key', received: echoOf(raw) }];
        break;
      case 'error500':
        answer = [500, { error: `internal error while handling ${echoOf(raw)}` }];
        break;
      case 'echo':
        answer = [200, echoAnswer(raw)];
        break;
      default:
        try {
          answer = await succeed(raw);
        } catch (error) {
          answer = [599, { error: String(error) }];
        }
    }
    if (res.destroyed) return;
    res.writeHead(answer[0], { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer[1]));
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

/** The seven definitions, pointed at the upstream, each with a field on the echo. */
function definitions(url: string): Record<string, unknown> {
  const intel = (way: Way, id: string) => intelDefinitions(url, ENV_OF[way])[id] as { fields: Record<string, string> };
  const fields = { score: '/score', category: '/category', echo: '/echo' };
  const evidence = [{ field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score} ({category})' }];
  const defined: Record<string, Record<string, unknown>> = {
    intel: intel('header', 'intel'),
    intel_search: intel('bearer', 'intel_search'),
    intel_domain: intel('query', 'intel_domain'),
    intel_json: {
      types: ['IPv4', 'FQDN'],
      request: { method: 'POST', url: `${url}/v1/json`, body: { indicator: '{value}', auth: { api_key: '{secret.KEY}' }, options: { limit: 1 } } },
      secrets: { KEY: ENV_OF.json }, fields, summary: '{score}/100 {category}', evidence,
    },
    intel_form: {
      types: ['IPv4', 'FQDN'],
      request: { method: 'POST', url: `${url}/v1/form`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: { indicator: '{value}', token: '{secret.KEY}', limit: 1 } },
      secrets: { KEY: ENV_OF.form }, fields, summary: '{score}/100 {category}', evidence,
    },
    intel_basic: {
      types: ['IPv4', 'FQDN'],
      request: { url: `${url}/v1/basic/{value}`, headers: { Authorization: 'Basic {secret.B64}' } },
      secrets: { B64: ENV_OF.basic }, fields, summary: '{score}/100 {category}', evidence,
    },
    intel_urlkey: {
      types: ['IPv4', 'FQDN'],
      request: { url: `${url}/v1/lookup?q={value}&access_key={secret.KEY}` },
      secrets: { KEY: ENV_OF.urlkey }, fields, summary: '{score}/100 {category}', evidence,
    },
  };
  for (const definition of Object.values(defined)) {
    definition.fields = { ...(definition.fields as Record<string, string>), echo: '/echo' };
    // A timeout well under the helpers' 10 s wait for an analysis; a 500 is retried within it.
    definition.timeout_ms = 2000;
  }
  return defined;
}

// ---------------------------------------------------------------------------------------------
// The checks of a mode's results
// ---------------------------------------------------------------------------------------------

interface Result {
  observable: string;
  type: string;
  errors?: Record<string, string>;
  [engine: string]: unknown;
}

/** What each mode gives, engine by engine, on each observable the engine takes. */
function assertOutcome(mode: Mode, results: Result[], where: string): void {
  assert.deepEqual(results.map((r) => r.observable).sort(), [FLAGGED_IP, PHISHING_DOMAIN].sort(), where);
  for (const result of results) {
    for (const engine of ENGINES) {
      const at = `${where}: ${engine} on ${result.observable}`;
      const error = result.errors?.[engine];
      const value = result[engine] as Record<string, unknown> | null;
      if (!TYPES[engine]!.includes(result.type)) {
        assert.equal(value, null, at);
        assert.equal(error, undefined, at);
        continue;
      }
      switch (mode) {
        case 'success':
          assert.equal(error, undefined, `${at}: the key was accepted`);
          assert.notEqual(value, null, at);
          break;
        case 'echo':
          assert.equal(error, undefined, at);
          assert.match(JSON.stringify(value), /\*\*\*/, `${at}: the echo is there, its secret masked`);
          break;
        case 'refused':
          assert.match(error ?? '', /authentication failed \(HTTP 401\).*key refused: check /, at);
          break;
        case 'error500':
          assert.match(error ?? '', /HTTP 500/, at);
          break;
        case 'timeout':
          assert.match(error ?? '', /^timeout after 2000 ms/, at);
          break;
      }
    }
  }
}

/** In success mode, each key reached its upstream in the form its way gives it. */
function assertSent(seen: readonly RawRequest[]): void {
  const find = (path: string) => seen.filter((r) => r.url.startsWith(path));
  assert.ok(find('/v1/ip/').some((r) => headerOf(r, 'x-api-key') === SECRETS.header), 'the header key');
  assert.ok(find('/v1/search').some((r) => headerOf(r, 'authorization') === `Bearer ${SECRETS.bearer}`), 'the Bearer token');
  assert.ok(find('/v1/domain').some((r) => r.url.includes(`apikey=${new URLSearchParams({ s: SECRETS.query }).toString().slice(2)}`)), 'the query key, form-encoded');
  assert.ok(find('/v1/json').some((r) => r.body.includes(JSON.stringify(SECRETS.json))), 'the JSON body\'s key, JSON-escaped');
  assert.ok(find('/v1/form').some((r) => r.body.includes(`token=${new URLSearchParams({ s: SECRETS.form }).toString().slice(2)}`)), 'the form body\'s key, form-encoded');
  assert.ok(find('/v1/basic/').some((r) => headerOf(r, 'authorization') === `Basic ${SECRETS.basic}`), 'the Basic credentials');
  assert.ok(find('/v1/lookup').some((r) => r.url.includes(`access_key=${encodeURIComponent(SECRETS.urlkey).replaceAll('\'', '%27')}`)), 'the URL\'s key, as the URL parser sends it');
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

let upstreams: Upstreams;
let backends: InternalIntelFake[] = [];
let upstream: Upstream;

/** A configuration (in a folder of its own, `dir`) with the seven engines. */
function configure(extra: Record<string, unknown> = {}) {
  return configFor(upstreams, { custom_engines: definitions(upstream.url), ...extra });
}

/** The analyses' pages, data and exports on a server, each checked. */
async function assertServedClean(base: string, id: string, where: string): Promise<void> {
  for (const path of [
    `/api/results/${id}`, `/api/is_analysis_complete/${id}`, `/results/${id}`, `/ui/analyses/${id}`, '/ui/history', `/ui/history?q=${PHISHING_DOMAIN}`, '/ui/engines', '/',
    ...['csv', 'json', 'stix', 'misp', 'xlsx'].map((format) => `/export/${id}?format=${format}`),
  ]) {
    const res = await fetch(`${base}${path}`);
    assert.equal(res.status, 200, `${where} ${path}`);
    assertFileClean(Buffer.from(await res.arrayBuffer()), `${where} ${path}`);
  }
}

/** POSTs the analysis (every engine, the cache ignored) and waits for its results. */
async function analyzeOn(base: string): Promise<{ id: string; results: Result[] }> {
  const res = await fetch(`${base}/api/analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXT, engines: ENGINES, ignore_cache: true }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { analysis_id: id } = (await res.json()) as { analysis_id: string };
  return { id, results: await completedResults<Result>(base, id) };
}

/** At most `limit` of the tasks at once (the machine may have two cores). */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  }));
  return out;
}

before(async () => {
  upstreams = await startUpstreams();
  const [ip, search, domain] = await Promise.all([
    startInternalIntel({ key: SECRETS.header, records: RECORDS }),
    startInternalIntel({ key: SECRETS.bearer, records: RECORDS }),
    startInternalIntel({ key: SECRETS.query, records: RECORDS }),
  ]);
  backends = [ip, search, domain];
  upstream = await startUpstream({ ip, search, domain });
});

after(async () => {
  await upstream?.close();
  await Promise.all(backends.map((b) => b.close()));
  await upstreams?.close();
});

describe('custom engines\' secrets never leave the process', () => {
  test('each secret holds the characters encodings change, and its forms differ', () => {
    for (const way of WAYS) {
      const names = forms(SECRETS[way]).map(([name]) => name);
      // (base64url is base64 without its padding when the secret has no "+" or "/" in base64; a
      // Basic token, base64 itself, is the same URL- and form-encoded, and needs no JSON escape)
      const expected = way === 'basic' ? ['raw', 'URL-encoded', 'base64'] : ['raw', 'URL-encoded', 'form-encoded', 'JSON-escaped', 'base64'];
      for (const form of expected) assert.ok(names.includes(form), `${way}: ${form}`);
    }
    assert.ok(forms(BASIC_USER_PASS).length >= 8, 'the decoded Basic credentials hold the characters encodings change');
    assert.ok(forms(SECRETS.urlkey).some(([name]) => name === 'as a URL\'s query sends it'), 'the URL parser sends \' as %27');
  });

  test('redaction masks a secret whole, even one holding "&key=" (masked as a URL parameter, it was cut in two)', () => {
    const text = `Authorization: Bearer ${SECRETS.bearer}; ?q=1&key=${encodeURIComponent(SECRETS.bearer)}`;
    const masked = redact(text, [SECRETS.bearer]);
    assert.equal(masked, 'Authorization: Bearer ***; ?q=1&key=***');
    assert.equal(redact('see https://x.example/?apikey=abc123&q=1'), 'see https://x.example/?apikey=***&q=1', 'URL parameters still masked');
  });

  const FORMATS: [string, string[]][] = [
    ['table', []], ['json', ['--json']], ['jsonl', ['--format', 'jsonl']],
    ['csv', ['--format', 'csv', '--output', 'out.csv']], ['stix', ['--format', 'stix', '--output', 'out.stix.json']],
    ['misp', ['--format', 'misp', '--output', 'out.misp.json']], ['xlsx', ['--format', 'xlsx', '--output', 'out.xlsx']],
  ];

  for (const mode of MODES) {
    test(`oas analyze, ${mode}: every format's output, stderr, output file and data directory`, async () => {
      upstream.mode = mode;
      upstream.seen.length = 0;
      const config = configure();
      const checksBefore = checked;
      const runs = await pool(FORMATS.map(([format, args]) => async (): Promise<[string, Run]> => {
        const out = args.includes('--output') ? ['--output', join(config.dir, `${format}-${args.at(-1)}`)] : [];
        const flags = args.includes('--output') ? args.slice(0, -2) : args;
        return [format, await runOas(config.dir, [
          'analyze', TEXT, '--engines', ENGINES.join(','), '-q', '--data-dir', join(config.dir, `data-${format}`), '--config', config.file, ...flags, ...out,
        ], { env: ENV })];
      }), 3);
      for (const [format, run] of runs) {
        // Exit 1 only when every lookup failed: intel's reversed IP of the domain (none here) is no failure.
        if (mode === 'success' || mode === 'echo') assert.equal(run.code, 0, `${format}: ${run.stderr}`);
        else assert.ok(run.code === 0 || run.code === 1, `${format}: exit ${run.code}: ${run.stderr}`);
        assertClean(run.stdout, `oas analyze -f ${format} (${mode}) stdout`);
        assertClean(run.stderr, `oas analyze -f ${format} (${mode}) stderr`);
      }
      const json = runs.find(([format]) => format === 'json')![1];
      assertOutcome(mode, JSON.parse(json.stdout) as Result[], `oas analyze --json (${mode})`);
      const jsonl = runs.find(([format]) => format === 'jsonl')![1];
      assertOutcome(mode, jsonl.stdout.trim().split('\n').map((line) => JSON.parse(line) as Result), `oas analyze -f jsonl (${mode})`);
      if (mode === 'success') assertSent(upstream.seen);
      else assert.ok(upstream.seen.length >= ENGINES.length, 'the engines called the upstream');
      const files = assertTreeClean(config.dir, `the configuration's folder (${mode})`);
      assert.ok(files >= 4 + FORMATS.length, `the outputs and the data directories were read (${files} files)`);
      assert.ok(readdirSync(config.dir).some((name) => name.endsWith('out.xlsx')), 'the workbook was written');
      assert.ok(checked > checksBefore);
      if (mode === 'echo') {
        // The echoes reached the files scanned (masked): a secret left in them would have been seen.
        const workbook = unzip(readFileSync(join(config.dir, 'xlsx-out.xlsx')));
        assert.ok([...workbook.values()].some((entry) => entry.toString('utf8').includes('***')), 'the workbook holds the masked echo');
        assert.match(readFileSync(join(config.dir, 'csv-out.csv'), 'utf8'), /\*\*\*/, 'the CSV holds the masked echo');
      }
    });
  }

  for (const logFormat of ['text', 'json'] as const) {
    test(`oas serve --log-format ${logFormat}: API answers, pages, page data, exports, the log and the data directory, in every mode`, async () => {
      const config = configure();
      const server: ServeProcess = await spawnServe(config.file, {
        cwd: config.dir,
        args: ['--log-format', logFormat],
        env: { ...ENV, HOME: config.dir, XDG_CACHE_HOME: join(config.dir, '.cache') },
      });
      try {
        for (const mode of MODES) {
          upstream.mode = mode;
          upstream.seen.length = 0;
          const { id, results } = await analyzeOn(server.url);
          assertOutcome(mode, results, `oas serve (${mode})`);
          if (mode === 'success') assertSent(upstream.seen);
          await assertServedClean(server.url, id, `oas serve (${mode})`);
          if (mode === 'echo') assert.match(await (await fetch(`${server.url}/ui/analyses/${id}`)).text(), /\*\*\*/, 'the page data holds the masked echo');
        }
      } finally {
        upstream.mode = 'success';
        await server.stop();
      }
      const log = server.log();
      assertClean(log, `oas serve --log-format ${logFormat}: its log`);
      assert.match(log, /POST \/api\/analyze|"path":"\/api\/analyze"/, 'the access log was read');
      assert.match(log, /intel_json/, 'the engine errors were logged');
      if (logFormat === 'json') {
        const lines = log.split('\n').filter((line) => line.startsWith('{'));
        assert.ok(lines.length > 10);
        for (const line of lines) JSON.parse(line);
        assert.ok(lines.some((line) => /"engine":"intel_basic"/.test(line) && /401/.test(line)), 'a refusal, logged as JSON');
      }
      assertTreeClean(config.dir, `oas serve's folder (--log-format ${logFormat})`);
    });
  }

  test('Redis: oas serve --redis --no-worker, oas worker and oas analyze --redis leave no secret in any Redis key or value, log or file', { skip: redisSkip }, async () => {
    const redis = await startRedis();
    try {
      await leavesNoSecretInRedis(redis);
    } finally {
      upstream.mode = 'success';
      await redis.close();
    }
  });

  /** The Redis test's body: a server and a worker on `redis`, the CLI on it too, then every key and value. */
  async function leavesNoSecretInRedis(redis: RedisServer): Promise<void> {
    const config = configure();
    const env = { ...ENV, HOME: config.dir, XDG_CACHE_HOME: join(config.dir, '.cache') };
    let server: ServeProcess | undefined;
    let worker: WorkerProcess | undefined;
    try {
      server = await spawnServe(config.file, { cwd: config.dir, args: ['--redis', redis.url, '--no-worker', '--log-format', 'json'], env });
      worker = await spawnWorker(config.file, { args: ['--redis', redis.url], env });
      for (const mode of MODES) {
        upstream.mode = mode;
        const { id, results } = await analyzeOn(server.url);
        assertOutcome(mode, results, `oas serve --redis with a worker (${mode})`);
        await assertServedClean(server.url, id, `oas serve --redis (${mode})`);
      }
      // The CLI on the team's Redis: its answers cached there (echo last, so the cache holds an echo).
      for (const mode of ['refused', 'echo'] as const) {
        upstream.mode = mode;
        const run = await runOas(config.dir, ['analyze', TEXT, '--engines', ENGINES.join(','), '--json', '-q', '--ignore-cache', '--redis', redis.url, '--config', config.file], { env: { ...ENV, XDG_CACHE_HOME: join(config.dir, '.cache') } });
        assertClean(run.stdout, `oas analyze --redis (${mode}) stdout`);
        assertClean(run.stderr, `oas analyze --redis (${mode}) stderr`);
        assertOutcome(mode, JSON.parse(run.stdout) as Result[], `oas analyze --redis (${mode})`);
      }
    } finally {
      upstream.mode = 'success';
      await worker?.stop();
      await server?.stop();
    }
    const dump = await dumpRedis(redis.client);
    assert.ok(dump.length > 0, 'Redis holds keys');
    assert.ok(dump.some(({ key }) => /intel_json@custom-/.test(key)), `the custom engines' answers are cached in Redis: ${dump.map((d) => d.key).join(', ')}`);
    for (const { key, text } of dump) assertClean(text, `Redis ${key}`);
    assertClean(dump.map(({ key }) => key).join('\n'), 'the Redis keys');
    assertClean(server!.log(), 'oas serve --redis: its log');
    assertClean(worker!.log(), 'oas worker: its log');
    assert.match(worker!.log(), /intel_json/, 'the worker logged the engine errors');
    assertTreeClean(config.dir, 'the Redis test\'s folder');
  }

  test('oas engines (table, --wide, --json) names the variables, never their values', async () => {
    const config = configure({ engine_sets: { intel: ENGINES } });
    for (const args of [['engines'], ['engines', '--wide'], ['engines', '--json'], ['engines', '--sets']]) {
      const run = await runOas(config.dir, [...args, '--config', config.file], { env: ENV });
      assert.equal(run.code, 0, run.stderr);
      assertClean(run.stdout + run.stderr, `oas ${args.join(' ')}`);
    }
    const listed = JSON.parse((await runOas(config.dir, ['engines', '--json', '--config', config.file], { env: ENV })).stdout) as { id: string; configured: boolean; credentials: { label: string }[] }[];
    for (const way of WAYS) {
      const engine = listed.find((e) => e.id === ENGINE_OF[way])!;
      assert.equal(engine.configured, true, engine.id);
      assert.deepEqual(engine.credentials.map((c) => c.label), [ENV_OF[way]]);
    }
  });
});
