/**
 * A loopback stand-in for the reference implementation's JSON API (Cyberbro's app.py, engines.md
 * section 3.1), answering as it does, quirks included:
 *
 * - Routes are Flask's `f"/{API_PREFIX}/analyze"` etc. with the prefix as the operator wrote it
 *   (`api`, `/api/`, `tools/api`...). Werkzeug merges repeated slashes in the rule, and answers a
 *   request path holding `//` with a 308 redirect to the merged one; a trailing slash is a 404.
 * - POST {prefix}/analyze: `request.get_json()` (a Content-Type other than JSON is Werkzeug's
 *   415 HTML page, a malformed body its 400 HTML page, a body that is not an object the 500.html
 *   template); `text` defaults to "", `engines` to []; unknown engine names are ignored silently,
 *   `rdap` runs as `rdap_whois`; answers `200 {"analysis_id", "link": "/results/<id>"}` at once
 *   and caches that answer (not the results) per text and engine list, unless `ignore_cache`.
 * - The analysis runs "in a background thread": its record does not exist at first (the race),
 *   then exists in progress with empty results, then is complete. Time here is counted in status
 *   and results requests for that id, so tests never depend on timing.
 * - GET {prefix}/is_analysis_complete/<id>: `{"complete": true}` for an unknown id, and so for an
 *   analysis whose record is not written yet; false while in progress.
 * - GET {prefix}/results/<id>: `404 {"error": "Analysis not found."}` without a record, `200 []`
 *   while in progress, the result list once complete.
 * - Result objects as HEAD writes them (engines.md 1.5): keys sorted (Flask's JSON provider),
 *   HEAD's type names `IPV4`/`EMAIL` and the `extension: {}` placeholder (or v0.11's `IPv4`,
 *   `Email`, no placeholder); an engine that does not take the type has no key, one that found
 *   nothing is `null`; failures are swallowed (no `errors`).
 * - No authentication: an Authorization header is ignored. Unknown paths: the 404.html page.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReferenceVersion = 'head' | 'v0.11';

export interface CyberbroObservable {
  value: string;
  /** v0.11's string names: IPv4, IPv6, FQDN, URL, MD5, SHA1, SHA256, Email. */
  type: string;
}

/** An engine's output for an observable; `undefined` when it does not take the type (no key). */
export type CyberbroEngine = (observable: CyberbroObservable) => unknown;

export interface CyberbroOptions {
  /** API_PREFIX as written in the configuration (default `api`). */
  prefix?: string;
  version?: ReferenceVersion;
  /** Status/results requests for an analysis before its record exists (default 1). */
  missingPolls?: number;
  /** Status/results requests during which the record exists, in progress (default 1). */
  runningPolls?: number;
  /** The analysis never completes (a hung upstream: the reference has no deadline). */
  neverComplete?: boolean;
  /** Engines by name, added to (or replacing) the canned ones. */
  engines?: Record<string, CyberbroEngine>;
}

export interface CyberbroRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeCyberbro {
  /** e.g. http://127.0.0.1:41234 (no trailing slash) */
  url: string;
  requests: CyberbroRequest[];
  /** Analyses by id: the request they came from. */
  analyses: Map<string, { text: string; engines: string[] }>;
  close(): Promise<void>;
}

const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;
const HEAD_TYPES: Record<string, string> = { IPv4: 'IPV4', IPv6: 'IPV6', Email: 'EMAIL' };
/** Engines that run after the pivot, on the resolved IP of a domain or URL (engines.md 1.2). */
const POST_PIVOT = new Set(['abuseipdb', 'abusix', 'criminalip', 'ipapi', 'ipinfo', 'ipquery', 'shodan', 'spur', 'webscout']);
const IP_TYPES = new Set(['IPv4', 'IPv6']);

/** Canned outputs of a few engines, shaped as engines.md describes them. */
export const CANNED_ENGINES: Record<string, CyberbroEngine> = {
  reverse_dns: (o) => {
    if (!['IPv4', 'IPv6', 'FQDN', 'URL'].includes(o.type)) return undefined;
    if (o.type === 'FQDN' || o.type === 'URL') return { reverse_dns: ['93.184.215.14'] };
    return o.value === '8.8.8.8' ? { reverse_dns: ['dns.google'] } : null;
  },
  rdap_whois: (o) => {
    if (o.type !== 'FQDN' && o.type !== 'URL') return undefined;
    const domain = o.type === 'URL' ? new URL(o.value).hostname : o.value;
    return {
      abuse_contact: 'abuse@registrar.example', creation_date: '1995-08-14', data_source: 'rdap', emails: ['abuse@registrar.example'],
      expiration_date: '2026-08-13', link: `https://rdap.verisign.com/com/v1/domain/${domain}`, name_servers: ['a.iana-servers.net', 'b.iana-servers.net'],
      organization: 'Internet Assigned Numbers Authority', registrant: null, registrant_country: 'US', registrant_email: null,
      registrar: 'RESERVED-Internet Assigned Numbers Authority', update_date: '2024-08-14',
    };
  },
  ipapi: (o) => (IP_TYPES.has(o.type)
    ? { asn: { asn: 15133, org: 'Edgecast Inc.' }, ip: o.value, is_proxy: false, is_vpn: false, location: { city: 'Los Angeles', country: 'United States', country_code: 'US' } }
    : undefined),
  virustotal: (o) => (o.type === 'Email' ? undefined : { community_score: 0, detection_ratio: '0/94', link: `https://www.virustotal.com/gui/search/${encodeURIComponent(o.value)}`, total_malicious: 0 }),
  crtsh: (o) => (o.type === 'FQDN' || o.type === 'URL' ? { link: `https://crt.sh/?q=${o.value}`, scan_date: '2026-07-01', top_domains: [{ count: 3, domain: `www.${o.value}` }] } : undefined),
  abuseipdb: (o) => (IP_TYPES.has(o.type) ? null : undefined),
};

/** The reference's extraction, reduced to whitespace-separated indicators, refanged. */
export function extractObservables(text: string): CyberbroObservable[] {
  const fanged = text.replace(/\[\.\]|\(\.\)|\{\.\}|\[dot\]/gi, '.').replace(/hxxp/gi, 'http');
  const seen = new Set<string>();
  const out: CyberbroObservable[] = [];
  for (const raw of fanged.split(/[\s,;]+/)) {
    const value = raw.replace(/^[("'<]+|[)"'>.]+$/g, '');
    if (!value || seen.has(value)) continue;
    const type = typeOf(value);
    if (!type) continue;
    seen.add(value);
    out.push({ value, type });
  }
  return out;
}

function typeOf(value: string): string | undefined {
  if (IPV4.test(value)) return 'IPv4';
  if (/^[0-9a-f:]+$/i.test(value) && value.includes('::')) return 'IPv6';
  if (/^https?:\/\/[^\s/]+/i.test(value)) return 'URL';
  if (/^[0-9a-f]{32}$/i.test(value)) return 'MD5';
  if (/^[0-9a-f]{40}$/i.test(value)) return 'SHA1';
  if (/^[0-9a-f]{64}$/i.test(value)) return 'SHA256';
  if (/^[\w.+-]+@[\w-]+(\.[\w-]+)+$/.test(value)) return 'Email';
  if (/^([a-z0-9-]+\.)+[a-z]{2,}$/i.test(value)) return 'FQDN';
  return undefined;
}

/** One observable through the reference's phases (engines.md 1.2), keys sorted as Flask sends them. */
function analyse(observable: CyberbroObservable, names: readonly string[], engines: Record<string, CyberbroEngine>, version: ReferenceVersion): Record<string, unknown> {
  const result: Record<string, unknown> = { observable: observable.value, type: version === 'head' ? (HEAD_TYPES[observable.type] ?? observable.type) : observable.type, reversed_success: false };
  if (version === 'head') result.extension = {};
  const active = names.map((n) => (n === 'rdap' ? 'rdap_whois' : n)).filter((n) => engines[n] !== undefined);
  const run = (name: string, o: CyberbroObservable) => {
    const value = engines[name]!(o);
    if (value !== undefined) result[name] = value;
  };
  let working = observable;
  for (const name of active) if (!POST_PIVOT.has(name) && name !== 'reverse_dns') run(name, working);
  if (active.includes('reverse_dns')) {
    run('reverse_dns', working);
    const answers = (result.reverse_dns as { reverse_dns?: string[] } | null | undefined)?.reverse_dns;
    if (answers && answers.length > 0) {
      result.reversed_success = true;
      if (working.type === 'FQDN' || working.type === 'URL') working = { value: answers[0]!, type: 'IPv4' };
    }
  }
  for (const name of active) if (POST_PIVOT.has(name)) run(name, working);
  return Object.fromEntries(Object.entries(result).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Flask's JSON: compact, keys sorted, a final newline. */
function jsonify(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(sortKeys(body))}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'access-control-allow-origin': '*' });
  res.end(text);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

function html(res: ServerResponse, status: number, title: string, text: string, headers: Record<string, string> = {}): void {
  const body = `<!doctype html>\n<html lang=en>\n<title>${status} ${title}</title>\n<h1>${title}</h1>\n<p>${text}</p>\n`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The prefix's routes as Werkzeug holds them: `f"/{API_PREFIX}/..."` with repeated slashes merged. */
function apiBase(prefix: string): string {
  return `/${prefix}/`.replace(/\/{2,}/g, '/');
}

interface Analysis {
  text: string;
  engines: string[];
  results: Record<string, unknown>[];
  /** Status and results requests seen for it. */
  ticks: number;
}

export function startFakeCyberbro(options: CyberbroOptions = {}): Promise<FakeCyberbro> {
  const base = apiBase(options.prefix ?? 'api');
  const version = options.version ?? 'head';
  const missing = options.missingPolls ?? 1;
  const running = options.runningPolls ?? 1;
  const engines = { ...CANNED_ENGINES, ...options.engines };
  const requests: CyberbroRequest[] = [];
  const analyses = new Map<string, Analysis>();
  const cache = new Map<string, { analysis_id: string; link: string }>();

  /** The record as the worker thread has written it so far, counted in requests. */
  const record = (id: string): { inProgress: boolean; results: Record<string, unknown>[] } | undefined => {
    const analysis = analyses.get(id);
    if (!analysis) return undefined;
    const tick = analysis.ticks++;
    if (tick < missing) return undefined;
    if (options.neverComplete || tick < missing + running) return { inProgress: true, results: [] };
    return { inProgress: false, results: analysis.results };
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    const merged = path.replace(/\/{2,}/g, '/');
    if (merged !== path && route(merged) !== undefined) {
      html(res, 308, 'Permanent Redirect', `You should be redirected automatically to the target URL: <a href="${merged}">${merged}</a>.`, { location: merged });
      return;
    }
    const match = route(path);
    if (!match) {
      html(res, 404, 'Not Found', 'Page not found (the 404.html template).');
      return;
    }
    if (method !== match.method && !(match.method === 'GET' && method === 'HEAD')) {
      html(res, 405, 'Method Not Allowed', 'The method is not allowed for the requested URL.', { allow: `${match.method}, OPTIONS${match.method === 'GET' ? ', HEAD' : ''}` });
      return;
    }
    if (match.name === 'analyze') {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json' && !/^application\/[^+]*\+json$/.test(type)) {
        html(res, 415, 'Unsupported Media Type', 'Did not attempt to load JSON data because the request Content-Type was not \'application/json\'.');
        return;
      }
      let data: unknown;
      try {
        data = JSON.parse(body);
      } catch {
        html(res, 400, 'Bad Request', 'The browser (or proxy) sent a request that this server could not understand.');
        return;
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        html(res, 500, 'Internal Server Error', 'An error occurred (the 500.html template).');
        return;
      }
      const { text = '', engines: names = [], ignore_cache: ignoreCache = false } = data as { text?: string; engines?: string[]; ignore_cache?: boolean };
      const fanged = String(text);
      const key = `api-analyze-${createHash('sha256').update(`${fanged}|${names.join(',')}`).digest('hex')}`;
      const cached = cache.get(key);
      if (!ignoreCache && cached) {
        jsonify(res, 200, cached);
        return;
      }
      const id = randomUUID();
      const results = extractObservables(fanged).map((o) => analyse(o, names, engines, version));
      analyses.set(id, { text: fanged, engines: names, results, ticks: 0 });
      const answer = { analysis_id: id, link: `/results/${id}` };
      cache.set(key, answer);
      jsonify(res, 200, answer);
      return;
    }
    const state = record(match.id);
    if (match.name === 'is_analysis_complete') {
      // `not check_analysis_in_progress(id)`: no record is "not in progress".
      jsonify(res, 200, { complete: !(state?.inProgress ?? false) });
      return;
    }
    if (!state) {
      jsonify(res, 404, { error: 'Analysis not found.' });
      return;
    }
    jsonify(res, 200, state.results);
  };

  const route = (path: string): { name: 'analyze' | 'is_analysis_complete' | 'results'; method: string; id: string } | undefined => {
    if (!path.startsWith(base)) return undefined;
    const rest = path.slice(base.length);
    if (rest === 'analyze') return { name: 'analyze', method: 'POST', id: '' };
    const m = /^(is_analysis_complete|results)\/([^/]+)$/.exec(rest);
    if (!m) return undefined;
    return { name: m[1] as 'is_analysis_complete' | 'results', method: 'GET', id: decodeURIComponent(m[2]!) };
  };

  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body });
      handle(req, res, body);
    });
  });

  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        analyses,
        close: () => new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
}
