/**
 * The graphical front end: the pages (`/`, `/results/<id>`, `/history`), their assets, the JSON
 * they read besides the three API endpoints (`/ui/...`), and the exports (`/export/<id>`).
 */
import { Hono, type Context } from 'hono';
import { historyPage } from '../analysis/history.js';
import type { AnalysisService } from '../analysis/service.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { Storage } from '../store/storage.js';
import { analysisView, parseHave } from '../view/analysis-view.js';
import { catalogView } from '../view/catalog-view.js';
import { resultsCsv } from '../view/export-csv.js';
import { notFound } from './api.js';
import { loadAssets } from './assets.js';
import { escapeHtml } from './html.js';
import { renderShell } from './shell.js';

export interface PagesOptions {
  config: Config;
  catalog: Catalog;
  analyses: AnalysisService;
  storage: Storage;
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

export function createPages(options: PagesOptions): Hono {
  const { config, catalog, analyses } = options;
  const assets = loadAssets();
  const app = new Hono();

  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Content-Security-Policy', PAGE_CSP);
    c.header('X-Frame-Options', 'DENY');
  });

  const data = { 'api-prefix': config.api_prefix };
  app.get('/', (c) => page(c, renderShell({ title: 'oas · analyze', page: 'index', data })));
  app.get('/history', (c) => page(c, renderShell({ title: 'oas · history', page: 'history', data })));
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
    const record = await analyses.latest(c.req.param('id'));
    if (!record) return notFound(c);
    return json(c, analysisView(record, catalog, parseHave(c.req.query('have'))));
  });
  app.get('/ui/history', async (c) => {
    const pageNumber = positiveInt(c.req.query('page'), 1);
    const perPage = Math.min(positiveInt(c.req.query('per_page'), 20), PER_PAGE_MAX);
    const query = { query: (c.req.query('q') ?? '').slice(0, 200), page: pageNumber, perPage };
    return json(c, await historyPage(options.storage, query, (key) => catalog.find(key)?.label ?? key));
  });

  app.get('/export/:id', async (c) => {
    const format = c.req.query('format') ?? 'json';
    if (format !== 'csv' && format !== 'json') return json(c, { error: 'format must be csv or json' }, 400);
    const record = await analyses.get(c.req.param('id'));
    if (!record) return notFound(c);
    if (!record.complete) return json(c, { error: 'analysis not complete yet: export it once it is' }, 409);
    c.header('Content-Disposition', `attachment; filename="oas-${record.id}.${format}"`);
    c.header('Cache-Control', 'no-store');
    if (format === 'json') {
      c.header('Content-Type', 'application/json; charset=utf-8');
      return c.body(JSON.stringify(record.results, null, 2));
    }
    c.header('Content-Type', 'text/csv; charset=utf-8');
    return c.body(resultsCsv(record.results, catalog));
  });

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

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}
