/**
 * The Cortex REST API on `oas serve` (issue 39, setting `cortex`), under `/cortex`, so that
 * TheHive's Cortex server URL is `http://<oas>/cortex` with an oas token as its key (sent as
 * `Authorization: Bearer <key>`, as Cortex keys are). The routes of Cortex's conf/routes that its
 * clients use (TheHive's CortexClient, cortex4py): status, the current user, the analyzers (all,
 * searched, one, by data type), running one, a job (itself, its report, waiting for it, its
 * artifacts), searching jobs and deleting one, and the responders (none: oas has analyzers only);
 * the shapes are src/enrichment/cortex.ts's.
 *
 * listen.ts puts the token's middleware in front (a viewer lists and reads, an analyst runs and
 * deletes: src/server/auth.ts roleFor), and turns oas's own error bodies on `/cortex` into
 * Cortex's `{type, message}` (`cortexErrors`). Loaded at the first request under `/cortex`: a
 * server without the setting loads none of this.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { CortexError, CortexJobs, analyzerJson, type CortexServices } from '../enrichment/cortex.js';
import { completion } from '../enrichment/misp-query.js';
import type { AuditRequest } from './audit.js';
import type { Principal } from './auth.js';

export interface CortexOptions {
  services: () => CortexServices;
  version: string;
  maxBodyBytes: number;
  audit: AuditRequest;
  onError: (error: Error, c: Context) => Response | Promise<Response>;
  /** Where the jobs are kept across builds of the surface (a reload rebuilds it): listen.ts's HttpKeep. */
  keep?: { cortexJobs?: object };
}

/** Longest a waitreport waits, whatever it asks (cortex4py's default asks `Inf`). */
const MAX_WAIT_MS = 10 * 60 * 1000;

const UNITS: Record<string, number> = {
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
  h: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  ms: 1, milli: 1, millis: 1, millisecond: 1, milliseconds: 1,
};

/**
 * A duration as Scala's `Duration(String)` reads it (Cortex's `atMost`): `1minute`, `1 minute`,
 * `30seconds`, `500 ms`, `Inf`; in milliseconds, undefined when it is none of those.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^(inf|plusinf|\+inf)$/i.test(trimmed)) return Infinity;
  const match = /^(\d+(?:\.\d+)?)\s*\.?\s*([a-z]+)$/i.exec(trimmed);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  return match && unit !== undefined ? Number(match[1]) * unit : undefined;
}

/** Cortex's list answer: the array, with its count in `X-Total` as Cortex's renderer sends it. */
function list(c: Context, items: unknown[], range: string | undefined) {
  const page = sliceRange(items, range);
  c.header('X-Total', String(items.length));
  return c.json(page);
}

/** A search's `range`: in its body (TheHive) or its query string (cortex4py). */
const rangeOf = (c: Context, body: Record<string, unknown>): string | undefined => (typeof body.range === 'string' ? body.range : c.req.query('range'));

/** Cortex's `range`: `all`, `<from>-<to>`; else its default of the first 10. */
function sliceRange<T>(items: T[], range: string | undefined): T[] {
  if (range === 'all') return items;
  const match = /^(\d+)-(\d+)$/.exec(range ?? '');
  if (match) return items.slice(Number(match[1]), Number(match[2]));
  return items.slice(0, 10);
}

/** A search body's `query`, as TheHive's SearchQuery and cortex4py's query DSL write it, tested on a record. */
function matches(query: unknown, record: Record<string, unknown>): boolean {
  if (typeof query !== 'object' || query === null) return true;
  const q = query as Record<string, unknown>;
  if (typeof q._field === 'string' && '_value' in q) {
    const value = record[q._field];
    return Array.isArray(value) ? value.includes(q._value) : value === q._value || String(value) === String(q._value);
  }
  if (Array.isArray(q._and)) return q._and.every((part) => matches(part, record));
  if (Array.isArray(q._or)) return q._or.some((part) => matches(part, record));
  if (q._not !== undefined) return !matches(q._not, record);
  if (typeof q._string === 'string') return JSON.stringify(record).toLowerCase().includes(q._string.toLowerCase());
  const fields = Object.entries(q).filter(([key]) => !key.startsWith('_'));
  return fields.every(([key, value]) => matches({ _field: key, _value: value }, record));
}

export function cortexRoutes(options: CortexOptions): Hono {
  const keep = options.keep ?? {};
  const jobs = keep.cortexJobs instanceof CortexJobs ? keep.cortexJobs : (keep.cortexJobs = new CortexJobs(options.services));
  const app = new Hono().basePath('/cortex/api');
  // Who the request is: the token's middleware found it before listen.ts handed the request here.
  app.use('*', async (c, next) => {
    const who = (c.env as { oasUser?: Principal } | undefined)?.oasUser;
    if (who) c.set('oasUser', who);
    await next();
  });
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ type: 'BadRequest', message: `the body is larger than max_body_bytes (${options.maxBodyBytes} bytes)` }, 413) });
  const jsonBody = async (c: Context): Promise<Record<string, unknown>> => {
    const text = await c.req.text();
    if (text.trim() === '') return {};
    try {
      const body = JSON.parse(text) as unknown;
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
    } catch {
      // below
    }
    throw new CortexError(400, 'BadRequest', 'the body is not a JSON object');
  };
  const user = (c: Context) => c.get('oasUser')?.name ?? 'anonymous';
  const analyzers = () => jobs.analyzers().map(analyzerJson);

  app.get('/status', (c) => c.json({
    versions: { Cortex: `3.1.0-oas-${options.version}`, Elastic4Play: 'oas', Play: 'oas', Elastic4s: 'oas', 'ElasticSearch client': 'oas' },
    config: { protectDownloadsWith: 'malware', authType: ['key'], capabilities: [], ssoAutoLogin: false },
  }));
  app.get('/user/current', (c) => {
    const who = c.get('oasUser');
    const name = who?.name ?? 'anonymous';
    const roles = who?.role === 'admin' ? ['read', 'analyze', 'orgadmin'] : who?.role === 'analyst' ? ['read', 'analyze'] : ['read'];
    return c.json({ id: name, _id: name, name, organization: 'oas', roles, status: 'Ok', type: 'user', hasKey: true, createdBy: 'oas', createdAt: 0 });
  });
  app.get('/analyzer', (c) => list(c, analyzers(), c.req.query('range')));
  app.post('/analyzer/_search', limit, async (c) => {
    const body = await jsonBody(c);
    const found = analyzers().filter((a) => matches(body.query, a));
    return list(c, found, rangeOf(c, body));
  });
  app.get('/analyzer/type/:dataType', (c) => {
    const type = c.req.param('dataType');
    return list(c, analyzers().filter((a) => (a.dataTypeList as string[]).includes(type)), 'all');
  });
  app.get('/analyzer/:id', (c) => c.json(analyzerJson(jobs.analyzer(c.req.param('id')))));
  // oas has analyzers only: TheHive's responder menus (ResponderSrv: POST responder/_search) list none.
  app.get('/responder', (c) => list(c, [], c.req.query('range')));
  app.post('/responder/_search', limit, (c) => list(c, [], c.req.query('range')));
  app.get('/responder/:id', (c) => { throw new CortexError(404, 'NotFoundError', `worker ${c.req.param('id').slice(0, 100)} not found`); });
  app.post('/analyzer/:id/run', limit, async (c) => {
    const body = await jsonBody(c);
    const force = ['1', 'true'].includes(c.req.query('force') ?? '');
    const { job, header } = await jobs.run(c.req.param('id'), body, user(c), force);
    options.audit(c, { action: 'analysis_started', outcome: 'success', analysis_id: header.id, origin: 'cortex', analyzer: job.analyzer.id, observables: header.observables.length, engines: header.engines, tlp: header.tlp, pap: header.pap });
    return c.json(await jobs.json(job, header, false));
  });
  app.post('/job/_search', limit, async (c) => {
    const body = await jsonBody(c);
    const all = await Promise.all((await jobs.list()).map(({ job, header }) => jobs.json(job, header, false)));
    const found = all.filter((job) => matches(body.query, job));
    return list(c, found, rangeOf(c, body));
  });
  app.get('/job/:id', async (c) => {
    const { job, header } = await jobs.get(c.req.param('id'));
    return c.json(await jobs.json(job, header, false));
  });
  const report = async (c: Context, waitMs: number) => {
    const { job, header } = await jobs.get(c.req.param('id')!);
    if (waitMs > 0) await completion(options.services().analyses, job.id, waitMs, c.req.raw.signal);
    const json = await jobs.json(job, header, true);
    const done = json.status === 'Success' || json.status === 'Failure';
    options.audit(c, { action: 'results_read', outcome: done ? 'success' : 'failure', analysis_id: job.id, origin: 'cortex', format: 'cortex', ...(done ? {} : { reason: 'analysis not complete yet' }) });
    return c.json(json);
  };
  app.get('/job/:id/report', (c) => report(c, 0));
  app.get('/job/:id/waitreport', (c) => {
    const atMost = c.req.query('atMost') ?? '1minute';
    const ms = parseDuration(atMost);
    if (ms === undefined) throw new CortexError(400, 'BadRequest', `atMost: "${atMost.slice(0, 50)}" is not a duration such as 1minute, 1 second or 30seconds`);
    return report(c, Math.min(ms, MAX_WAIT_MS));
  });
  app.get('/job/:id/artifacts', async (c) => {
    const { job, header } = await jobs.get(c.req.param('id'));
    return list(c, await jobs.artifacts(job, header), 'all');
  });
  app.delete('/job/:id', async (c) => {
    await jobs.delete(c.req.param('id'));
    return c.body(null, 204);
  });
  app.notFound((c) => c.json({ type: 'NotFoundError', message: `${c.req.method} ${c.req.path} not found` }, 404));
  app.onError(async (error, c) => {
    if (error instanceof CortexError) return c.json({ type: error.type, message: error.message }, error.status as 400);
    const answer = await options.onError(error, c);
    return c.json({ type: answer.status === 503 ? 'ServiceUnavailable' : 'InternalError', message: answer.status === 503 ? 'the store is unavailable (the oas log says why)' : 'internal error (the oas log says why)' }, answer.status as 500);
  });
  return app;
}
