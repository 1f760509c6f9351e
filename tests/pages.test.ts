/**
 * The front end's HTTP surface over real HTTP, without a browser: page documents and their
 * headers, assets, the JSON the pages read (/ui/...), exports. The browser tests drive the same
 * pages in Chromium (browser.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { appOnUpstreams } from './helpers/app.js';
import { startAnalysis } from './helpers/serve.js';
import type { AnalysisView, CatalogView, HistoryView } from '../src/view/types.js';
import { genericDetails } from '../src/view/details.js';
import { CSV_COLUMNS, csvCell } from '../src/export/csv.js';
import type { ObservableResult } from '../src/runner/result.js';
import { verdictOf } from '../src/verdict/verdict.js';

const served = appOnUpstreams({ config: { engines: { provider_03: { api_key: '' } } } });

async function get(path: string): Promise<Response> {
  return fetch(`${served.server.url}${path}`);
}

async function json<T>(path: string, status = 200): Promise<T> {
  const res = await get(path);
  assert.equal(res.status, status, `${path}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

const analyze = (text: string, engines: string[]): Promise<string> => startAnalysis(served.server.url, text, engines);

describe('page documents', () => {
  test('/, /history and /results/<id> load one module from /assets and forbid inline and foreign scripts', async () => {
    const id = await analyze('example.com', ['reverse_dns']);
    for (const [path, module] of [['/', 'index'], ['/history', 'history'], [`/results/${id}`, 'results']] as const) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type')!, /text\/html/);
      const csp = res.headers.get('content-security-policy')!;
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const html = await res.text();
      assert.match(html, new RegExp(`<script type="module" src="/assets/${module}\\.js"></script>`));
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
      assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'nothing from another origin');
    }
  });

  test('an unknown or malformed analysis id is a 404 page that names it escaped', async () => {
    const res = await get('/results/00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404);
    assert.match(await res.text(), /Analysis not found/);
    const evil = await get(`/results/${encodeURIComponent('<img src=x onerror=alert(1)>')}`);
    assert.equal(evil.status, 404);
    const html = await evil.text();
    assert.doesNotMatch(html, /<img/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  });

  test('assets are served by oas itself with their types; anything else is a 404', async () => {
    for (const [name, type] of [['index.js', /javascript/], ['results.js', /javascript/], ['history.js', /javascript/], ['oas.css', /text\/css/], ['favicon.svg', /image\/svg\+xml/]] as const) {
      const res = await get(`/assets/${name}`);
      assert.equal(res.status, 200, name);
      assert.match(res.headers.get('content-type')!, type);
      const etag = res.headers.get('etag')!;
      assert.ok(etag);
      assert.equal((await fetch(`${served.server.url}/assets/${name}`, { headers: { 'if-none-match': etag } })).status, 304);
    }
    assert.equal((await get('/assets/..%2Fpackage.json')).status, 404);
    assert.equal((await get('/assets/nope.js')).status, 404);
  });
});

describe('/ui JSON', () => {
  test('/ui/engines lists every engine with its tags, defaults and whether its key is configured, never a key', async () => {
    const catalog = await json<CatalogView>('/ui/engines');
    assert.equal(catalog.api_prefix, '/api/');
    const byId = new Map(catalog.engines.map((e) => [e.id, e]));
    assert.deepEqual(catalog.engines.filter((e) => e.default).map((e) => e.id).sort(), ['provider_11', 'rdap_whois', 'reverse_dns']);
    assert.equal(byId.get('reverse_dns')!.configured, true);
    const abuseipdb = byId.get('provider_03')!;
    assert.equal(abuseipdb.configured, false);
    assert.deepEqual(abuseipdb.credentials, ['API key']);
    assert.match(abuseipdb.configure_hint, /engines\.provider_03\.api_key/);
    assert.match(abuseipdb.configure_hint, /OAS_ABUSEIPDB_API_KEY/);
    assert.equal(byId.get('rdap')!.catalog, 'older');
  });

  test('/ui/analyses/<id> gives one row per observable with one cell per engine; results equal the API', async () => {
    const id = await analyze('8.8.8.8 example.com 44d88612fea8a8f36de82e1278abb02f', ['reverse_dns', 'rdap_whois']);
    await served.app.analyses.idle();
    const view = await json<AnalysisView>(`/ui/analyses/${id}`);
    assert.equal(view.complete, true);
    assert.deepEqual(view.engines, [{ key: 'reverse_dns', label: 'Reverse DNS' }, { key: 'rdap_whois', label: 'RDAP / WHOIS' }]);
    assert.deepEqual(view.observables.map((o) => [o.observable, o.type, o.done]), [['8.8.8.8', 'IPv4', true], ['example.com', 'FQDN', true], ['44d88612fea8a8f36de82e1278abb02f', 'MD5', true]]);
    const [ip, domain, hash] = view.observables;
    assert.deepEqual(ip!.cells.map((c) => [c.engine, c.status]), [['reverse_dns', 'ok'], ['rdap_whois', 'not_applicable']]);
    assert.match(ip!.cells[0]!.summary, /dns\.google/);
    // The engine's own card fields (its `details`), links kept only when http(s).
    const card = domain!.cells[1]!.fields;
    assert.deepEqual(card[0], { label: 'Registrar', value: 'RESERVED-Internet Assigned Numbers Authority' });
    assert.deepEqual(card.at(-1), { label: 'RDAP record', value: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM', href: 'https://rdap.verisign.com/com/v1/domain/EXAMPLE.COM' });
    assert.ok(hash!.cells.every((c) => c.status === 'not_applicable'));
    assert.deepEqual(view.results, await json(`/api/results/${id}`));
    assert.equal((await get('/ui/analyses/not-an-id')).status, 404);

    // ?have= (bitmap of observables the page holds, base64url): those are left out.
    const have = Buffer.from([0b101]).toString('base64url');
    const rest = await json<AnalysisView>(`/ui/analyses/${id}?have=${have}`);
    assert.deepEqual(rest.observables.map((o) => o.index), [1]);
    assert.deepEqual(rest.results.map((r) => r === null), [true, false, true]);
    assert.equal((await get(`/ui/analyses/${id}?have=!!`)).status, 400, 'a malformed bitmap is refused');
  });

  test('/ui/analyses/<id> carries each observable\'s verdict and reasons; the API results never do; the history counts them', async () => {
    const id = await analyze('8.8.8.8 example.com 44d88612fea8a8f36de82e1278abb02f', ['reverse_dns', 'rdap_whois', 'provider_11']);
    await served.app.analyses.idle();
    const view = await json<AnalysisView>(`/ui/analyses/${id}`);
    const api = await json<ObservableResult[]>(`/api/results/${id}`);
    assert.equal(view.observables.length, 3);
    view.observables.forEach((o, i) => {
      assert.ok(['malicious', 'suspicious', 'clean', 'unknown'].includes(o.verdict ?? ''), String(o.verdict));
      assert.ok(Array.isArray(o.reasons));
      assert.deepEqual({ verdict: o.verdict, reasons: o.reasons }, verdictOf(api[i]!, served.app.catalog), o.observable);
    });
    for (const result of api) assert.ok(!('verdict' in result) && !('reasons' in result), JSON.stringify(result));
    const history = await json<HistoryView>('/ui/history?q=44d88612fea8a8f36de82e1278abb02f');
    const counts = history.items.find((i) => i.id === id)!.verdicts!;
    assert.equal(counts.malicious + counts.suspicious + counts.clean + counts.unknown, 3);
    for (const verdict of ['malicious', 'suspicious', 'clean', 'unknown'] as const) {
      assert.equal(counts[verdict], view.observables.filter((o) => o.verdict === verdict).length, verdict);
    }
  });

  test('/ui/history: newest first, searched by observable, paginated', async () => {
    const first = await analyze('history-one.example.com', ['reverse_dns']);
    const second = await analyze('history-two.example.com 192.0.2.77', ['reverse_dns']);
    await served.app.analyses.idle();
    const all = await json<HistoryView>('/ui/history?per_page=2');
    assert.equal(all.items.length, 2);
    assert.ok(all.total >= 2);
    assert.deepEqual(all.items.map((i) => i.id), [second, first]);
    assert.deepEqual(all.items[0]!.engine_labels, ['Reverse DNS']);
    assert.deepEqual(all.items[0]!.observables, [{ value: 'history-two.example.com', type: 'FQDN' }, { value: '192.0.2.77', type: 'IPv4' }]);
    assert.equal(all.items[0]!.complete, true);
    const found = await json<HistoryView>('/ui/history?q=HISTORY-TWO');
    assert.deepEqual(found.items.map((i) => i.id), [second]);
    assert.equal(found.total, 1);
    const byIp = await json<HistoryView>('/ui/history?q=192.0.2.77');
    assert.deepEqual(byIp.items.map((i) => i.id), [second]);
    const page2 = await json<HistoryView>('/ui/history?per_page=1&page=2');
    assert.deepEqual(page2.items.map((i) => i.id), [first]);
    assert.equal((await json<HistoryView>('/ui/history?q=nothing-like-this')).total, 0);
  });
});

describe('exports', () => {
  test('CSV: one row per observable and engine that applies, with the whole result; formulas are neutralised', async () => {
    const id = await analyze('8.8.8.8 example.com', ['reverse_dns', 'rdap_whois']);
    await served.app.analyses.idle();
    const res = await get(`/export/${id}?format=csv`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/csv/);
    assert.match(res.headers.get('content-disposition')!, new RegExp(`attachment; filename="oas-${id}\\.csv"`));
    const lines = (await res.text()).trimEnd().split('\r\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.equal(lines.length, 4, lines.join('\n'));
    assert.match(lines[1]!, /^8\.8\.8\.8,IPv4,,reverse_dns,ok,dns\.google,/);
    assert.ok(lines.some((l) => l.startsWith('example.com,FQDN,') && l.includes(',rdap_whois,ok,')));
  });

  test('JSON is the API results with each observable\'s verdict; unknown id 404, unknown format 400', async () => {
    const id = await analyze('example.com', ['reverse_dns']);
    await served.app.analyses.idle();
    const res = await get(`/export/${id}?format=json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-disposition')!, /attachment; filename="oas-.+\.json"/);
    const api = await json<Record<string, unknown>[]>(`/api/results/${id}`);
    assert.deepEqual(await res.json(), api.map((r) => ({ ...r, verdict: 'unknown', reasons: [], tlp: 'AMBER', pap: 'GREEN' })));
    assert.equal((await get(`/export/${id}?format=pdf`)).status, 400);
    assert.equal((await get('/export/00000000-0000-4000-8000-000000000000?format=csv')).status, 404);
  });
});

describe('attacker-controlled values', () => {
  test('CSV cells that a spreadsheet would run as formulas are prefixed; quotes are doubled', () => {
    assert.equal(csvCell('=HYPERLINK("http://x")'), `"'=HYPERLINK(""http://x"")"`);
    assert.equal(csvCell('+1'), "'+1");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('plain'), 'plain');
  });

  test('card fields link only to http(s) addresses', () => {
    const fields = genericDetails({
      link: 'https://www.virustotal.com/gui/domain/example.com',
      registrar: 'javascript:alert(1)',
      hits: [{ title: '<b>x</b>', url: 'javascript:alert(1)' }, { title: 'Report', url: 'https://example.org/r' }],
      nested: { deep: { deeper: 1 } },
      flag: true,
    });
    assert.deepEqual(fields.find((f) => f.label === 'link'), { label: 'link', value: 'https://www.virustotal.com/gui/domain/example.com', href: 'https://www.virustotal.com/gui/domain/example.com' });
    assert.deepEqual(fields.find((f) => f.label === 'registrar'), { label: 'registrar', value: 'javascript:alert(1)' });
    assert.equal(fields.find((f) => f.label === 'hits 1')!.href, undefined);
    assert.equal(fields.find((f) => f.label === 'hits 2')!.href, 'https://example.org/r');
    assert.deepEqual(fields.find((f) => f.label === 'nested › deep'), { label: 'nested › deep', value: '{"deeper":1}' });
    assert.deepEqual(fields.find((f) => f.label === 'flag'), { label: 'flag', value: 'yes' });
  });
});
