/**
 * The graphical front end: the pages (`/`, `/results/<id>`, `/history`, `/watchlists`,
 * `/allowlist`, `/observables/<value>`), their assets, the JSON
 * they read besides the three API endpoints (`/ui/...`), and the exports (`/export/<id>`).
 */
import { Hono, type Context } from 'hono';
import type { TeamKnowledge } from '../analysis/knowledge.js';
import type { AnalysisService } from '../analysis/service.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import { EXPORT_FILES, EXPORT_FORMATS, exportChunks, exportFileName, isExportFormat } from '../export/index.js';
import { analysisView, parseHave } from '../view/analysis-view.js';
import { catalogView } from '../view/catalog-view.js';
import type { MarkView, MeView, ObservableHistoryView, PushTargetsView } from '../view/types.js';
import type { AnalysisRecord } from '../store/analysis-store.js';
import { configuredTargets } from '../push/settings.js';
import { TARGET_LABELS } from '../push/types.js';
import { notFound, sendChunks } from './api.js';
import { auditedId, originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';
import { loadAssets } from './assets.js';
import { escapeHtml } from './html.js';
import { renderShell } from './shell.js';
import { recordedMarking } from '../marking/levels.js';

export interface PagesOptions {
  config: Config;
  catalog: Catalog;
  analyses: AnalysisService;
  /** The audit trail (a complete analysis's view and exports read); none by default. */
  audit?: AuditRequest;
  /** The allowlist and marks (issue 38): an earlier analysis's page says which marks exist since. */
  knowledge?: TeamKnowledge;
}

/** Scripts and styles only from oas itself, no inline script, no framing, no other origin. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PER_PAGE_MAX = 100;
/** Highest `?page=` of /ui/history (pages past the last one are empty, not errors). */
const PAGE_MAX = 1_000_000;
/** Longest `?q=` of /ui/history (a long URL still fits). */
const QUERY_MAX = 2000;
/** Longest observable of /observables/<value> and /ui/observables/<value>. */
const OBSERVABLE_MAX = 2000;
/** Most analyses /ui/observables/<value> lists (`?limit=`; default 100). */
const OBSERVABLE_HISTORY_MAX = 1000;

export function createPages(options: PagesOptions): Hono {
  const { config, catalog, analyses } = options;
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const assets = loadAssets();
  const app = new Hono();

  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Content-Security-Policy', PAGE_CSP);
    c.header('X-Frame-Options', 'DENY');
  });

  // data-auth: the pages add a sign-out link and go to /signin on a 401 (setting api_token; with
  // auth_header, /signout tells a user the proxy signed in where to sign out).
  const data: Record<string, string> = { 'api-prefix': config.api_prefix, ...(config.api_token || config.auth_header ? { auth: 'token' } : {}) };
  app.get('/', (c) => page(c, renderShell({ title: 'oas · analyze', page: 'index', data })));
  app.get('/history', (c) => page(c, renderShell({ title: 'oas · history', page: 'history', data })));
  app.get('/watchlists', (c) => page(c, renderShell({ title: 'oas · watchlists', page: 'watchlists', data })));
  app.get('/allowlist', (c) => page(c, renderShell({ title: 'oas · allowlist', page: 'allowlist', data })));
  // The analyses that held one observable (issue 38), its value URL-encoded in the path.
  app.get('/observables/:value', (c) => {
    const value = c.req.param('value');
    if (value.trim() === '' || value.length > OBSERVABLE_MAX) return page(c, renderShell({ title: 'oas · observable', main: `<section class="panel"><h1>No such observable</h1><p class="muted">Give an observable of at most ${OBSERVABLE_MAX} characters, URL-encoded: <code>/observables/evil.example</code>.</p></section>` }), 404);
    return page(c, renderShell({ title: 'oas · observable', page: 'observable', data: { ...data, observable: value } }));
  });
  app.get('/results/:id', async (c) => {
    const record = await analyses.get(c.req.param('id'));
    if (!record) return page(c, notFoundShell(c.req.param('id')), 404);
    return page(c, renderShell({ title: `oas · analysis ${record.id.slice(0, 8)}`, page: 'results', data: { ...data, 'analysis-id': record.id } }));
  });

  app.get('/assets/:name', (c) => {
    const asset = assets.get(c.req.param('name'));
    if (!asset) return c.text('not found', 404);
    c.header('Cache-Control', 'no-cache');
    c.header('ETag', asset.etag);
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
    c.header('Content-Type', asset.type);
    return c.body(asset.body as Uint8Array<ArrayBuffer>);
  });
  app.get('/favicon.ico', (c) => c.redirect('/assets/favicon.svg', 301));

  app.get('/ui/engines', (c) => json(c, catalogView(catalog, config)));
  app.get('/ui/analyses/:id', async (c) => {
    const have = queryParam(c, 'have', '');
    if (isBad(have)) return json(c, have, 400);
    if (!/^[A-Za-z0-9_-]*$/.test(have) || have.length % 4 === 1) {
      return json(c, { error: '"have" must be a base64url bitmap of the observables the page holds (A-Z, a-z, 0-9, "-" and "_")' }, 400);
    }
    const held = parseHave(have);
    const record = await analyses.latest(c.req.param('id'), held);
    // Audited once complete: the results page polls while the analysis runs.
    const read = { action: 'results_read', analysis_id: auditedId(c.req.param('id')), origin: originOf(c), format: 'view' } as const;
    if (!record) {
      audit(c, { ...read, outcome: 'failure', reason: 'analysis not found' });
      return notFound(c);
    }
    // One bit per observable: anything longer says nothing about this analysis.
    const longest = Math.ceil((Math.ceil(record.observables.length / 8) * 4) / 3);
    if (have.length > longest) {
      return json(c, { error: `"have" is too long: this analysis has ${record.observables.length} observable(s), at most ${longest} base64url characters` }, 400);
    }
    if (record.complete) audit(c, { ...read, outcome: 'success' });
    return json(c, analysisView(record, catalog, held, await marksNow(record, held)));
  });
  app.get('/ui/history', async (c) => {
    const pageNumber = wholeParam(c, 'page', 1, PAGE_MAX);
    if (isBad(pageNumber)) return json(c, pageNumber, 400);
    const perPage = wholeParam(c, 'per_page', 20, PER_PAGE_MAX);
    if (isBad(perPage)) return json(c, perPage, 400);
    const q = queryParam(c, 'q', '');
    if (isBad(q)) return json(c, q, 400);
    if (q.length > QUERY_MAX) return json(c, { error: `"q" must be at most ${QUERY_MAX} characters` }, 400);
    const mine = flagParam(c, 'mine');
    if (isBad(mine)) return json(c, mine, 400);
    // "mine": the analyses the requester started (its name as recorded in started_by).
    const query = { query: q, page: pageNumber, perPage, ...(mine ? { startedBy: whoIs(c).name } : {}) };
    return json(c, await analyses.history(query));
  });
  // Seen before (issue 38): the analyses of this store that held an observable, newest first.
  app.get('/ui/observables/:value', async (c) => {
    const value = c.req.param('value');
    if (value.trim() === '') return json(c, { error: 'give the observable after /ui/observables/, URL-encoded' }, 400);
    if (value.length > OBSERVABLE_MAX) return json(c, { error: `the observable must be at most ${OBSERVABLE_MAX} characters` }, 400);
    const limit = wholeParam(c, 'limit', 100, OBSERVABLE_HISTORY_MAX);
    if (isBad(limit)) return json(c, limit, 400);
    const { total, items } = await analyses.observableHistory(value, limit);
    const view: ObservableHistoryView = {
      value,
      total,
      items: items.map((item) => ({ analysis_id: item.analysis_id, created_at: item.at, verdict: item.verdict, link: `/results/${item.analysis_id}` })),
    };
    return json(c, view);
  });
  // Who the page's user is, so it can offer only what the role allows (a viewer starts no analysis).
  app.get('/ui/me', (c) => {
    const { name, role } = whoIs(c);
    return json(c, { name, role } satisfies MeView);
  });

  // The push targets configured (issue 37), by name only, and whether this user may push: the
  // results page's "Send to ..." buttons. Read per request (the keys may come from the environment).
  app.get('/ui/push-targets', (c) => {
    const { role } = whoIs(c);
    const targets = configuredTargets(config).map((id) => ({ id, label: TARGET_LABELS[id] }));
    return json(c, { targets, can_push: role === 'analyst' || role === 'admin', role } satisfies PushTargetsView);
  });

  app.get('/export/:id', async (c) => {
    const format = queryParam(c, 'format', 'json');
    if (isBad(format)) return json(c, format, 400);
    if (!isExportFormat(format)) return json(c, { error: `"format" must be one of: ${EXPORT_FORMATS.join(', ')}` }, 400);
    const record = await analyses.get(c.req.param('id'));
    const read = { action: 'export_read', analysis_id: auditedId(c.req.param('id')), origin: originOf(c), format } as const;
    if (!record) {
      audit(c, { ...read, outcome: 'failure', reason: 'analysis not found' });
      return notFound(c);
    }
    if (!record.complete) {
      audit(c, { ...read, outcome: 'failure', reason: 'analysis not complete yet' });
      return json(c, { error: 'analysis not complete yet: export it once it is' }, 409);
    }
    audit(c, { ...read, outcome: 'success' });
    c.header('Content-Disposition', `attachment; filename="${exportFileName(record.id, format)}"`);
    c.header('Cache-Control', 'no-store');
    c.header('Content-Type', EXPORT_FILES[format].contentType);
    // The stored rows in order, streamed: the document is never built whole.
    const source = { id: record.id, created_at: record.created_at, finished_at: record.finished_at, marking: recordedMarking(record), pages: () => analyses.storedResults(record) };
    return sendChunks(c, exportChunks(format, source, catalog));
  });

  /**
   * The marks on the finished observables this answer sends (issue 38), for `mark_now`; none while
   * none is sent. A failed read leaves them out: the results still show.
   */
  async function marksNow(record: AnalysisRecord, held: ReadonlySet<number>): Promise<Map<string, MarkView> | undefined> {
    const sent = record.observables.filter((_, index) => record.results[index] != null && !held.has(index));
    if (!options.knowledge || sent.length === 0) return undefined;
    return options.knowledge.currentMarks(sent).catch(() => undefined);
  }

  return app;
}

function page(c: Context, html: string, status: 200 | 404 = 200) {
  c.header('Cache-Control', 'no-store');
  return c.html(html, status);
}

function json(c: Context, body: unknown, status: 200 | 400 | 409 = 200) {
  c.header('Cache-Control', 'no-store');
  return c.json(body, status);
}

function notFoundShell(id: string): string {
  return renderShell({
    title: 'oas · analysis not found',
    main: `<section class="panel"><h1>Analysis not found</h1><p class="muted">No analysis has the id <code>${escapeHtml(id.slice(0, 100))}</code>. <a href="/history">See the history</a> or <a href="/">start a new analysis</a>.</p></section>`,
  });
}

/** A query parameter that cannot be used: the 400 body saying what is allowed. */
interface BadParam {
  error: string;
}

function isBad(value: unknown): value is BadParam {
  return typeof value === 'object' && value !== null;
}

/** `?name=` given at most once; `fallback` when absent. */
function queryParam(c: Context, name: string, fallback: string): string | BadParam {
  const values = c.req.queries(name);
  if (!values || values.length === 0) return fallback;
  if (values.length > 1) return { error: `"${name}" must be given at most once` };
  return values[0]!;
}

/** `?name=` as a yes or no: `1`/`true` or `0`/`false`; false when absent. */
function flagParam(c: Context, name: string): boolean | BadParam {
  const value = queryParam(c, name, '0');
  if (isBad(value)) return value;
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return { error: `"${name}" must be 1, true, 0 or false` };
}

/** Who the request is (the token middleware set it; a server without authentication: anyone, its admin). */
function whoIs(c: Context): MeView {
  const who = c.get('oasUser');
  return who ? { name: who.name, role: who.role } : { name: 'anonymous', role: 'admin' };
}

/** `?name=` as a whole number from 1 to `max` (digits only: no sign, exponent or fraction). */
function wholeParam(c: Context, name: string, fallback: number, max: number): number | BadParam {
  const value = queryParam(c, name, '');
  if (isBad(value)) return value;
  if (c.req.queries(name) === undefined) return fallback;
  const n = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) return { error: `"${name}" must be a whole number from 1 to ${max}` };
  return n;
}
