/**
 * Where the verdict shows outside the exports: the live view the results page polls
 * (/ui/analyses: verdict and reasons per observable), the history's per-analysis counts (stored
 * in the analysis header when it completes, also after a restart), the CLI table's verdict
 * column and reasons, and the contrast of the web UI's verdict badges in both themes.
 * Engines here are test definitions whose evidence the test controls: no network at all,
 * except the one `oas analyze` subprocess against the loopback fakes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { historyPage } from '../src/store/history.js';
import { resultRows } from '../src/analysis/rows.js';
import { AnalysisService } from '../src/analysis/service.js';
import type { AnalysisHeader, AnalysisRecord } from '../src/store/analysis-store.js';
import { renderTable, useColor } from '../src/cli/table.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, EngineError, type EngineDefinition } from '../src/engine/contract.js';
import { HttpTransport } from '../src/http/client.js';
import type { ObservableResult } from '../src/runner/result.js';
import { EngineRunner } from '../src/runner/runner.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { sqliteAnalysisStore } from '../src/store/sqlite-analyses.js';
import { ANALYSIS_RESULTS_TABLE, openStorage, type Storage } from '../src/store/storage.js';
import { analysisView } from '../src/view/analysis-view.js';
import { runOas } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams } from './helpers/upstreams.js';

// --- test engines: their answers and evidence are set here ---

/** judge's score per address; absent: null (not listed); 'fail': an engine error. */
const SCORES: Record<string, number | 'fail'> = { '1.0.0.1': 95, '1.0.0.2': 50, '1.0.0.4': 'fail' };
/** Addresses watch flags. */
const WATCHED = new Set(['1.0.0.1']);
/** Calls of judge, per address (a resumed analysis must not ask again for a saved result). */
const judgeCalls = new Map<string, number>();

const judge = defineEngine<{ score: number }>({
  id: 'judge',
  service: 'judgesvc',
  label: 'Judge',
  description: 'a threat list with a score',
  tags: [],
  types: ['IPv4'],
  acceptsPrivateIp: true,
  defaults: { timeout_ms: 2000, retries: 0 },
  summary: (r) => `score ${r.score}`,
  evidence: (r) => {
    if (r === null) return { level: 'clean', reason: 'not listed' };
    if (r.score >= 80) return { level: 'malicious', reason: `score ${r.score}/100` };
    if (r.score >= 40) return { level: 'suspicious', reason: `score ${r.score}/100` };
    return { level: 'clean', reason: `score ${r.score}/100` };
  },
  run: async (o) => {
    judgeCalls.set(o.value, (judgeCalls.get(o.value) ?? 0) + 1);
    const score = SCORES[o.value];
    if (score === 'fail') throw new EngineError('HTTP 503 Service Unavailable');
    return score === undefined ? null : { score };
  },
});

const watch = defineEngine<{ flagged: boolean }>({
  id: 'watch',
  service: 'watchsvc',
  label: 'Watch',
  description: 'flags anonymisers',
  tags: [],
  types: ['IPv4'],
  acceptsPrivateIp: true,
  defaults: { timeout_ms: 2000, retries: 0 },
  summary: (r) => (r.flagged ? 'VPN' : 'no flag'),
  evidence: (r) => (r?.flagged ? { level: 'suspicious', reason: 'flagged VPN' } : undefined),
  run: async (o) => ({ flagged: WATCHED.has(o.value) }),
});

/** Judges nothing (geolocation). */
const geo = defineEngine<{ country: string }>({
  id: 'geo',
  service: 'geosvc',
  label: 'Geo',
  description: 'where an address is',
  tags: [],
  types: ['IPv4'],
  acceptsPrivateIp: true,
  defaults: { timeout_ms: 2000, retries: 0 },
  summary: (r) => r.country,
  run: async () => ({ country: 'AU' }),
});

const ENGINES = [judge, watch, geo] as EngineDefinition[];
const catalog = new Catalog(ENGINES);
const TEXT = '1.0.0.1 1.0.0.2 1.0.0.3 1.0.0.4';

let dataDir: string;
let storage: Storage;
let transport: HttpTransport;

function service(): AnalysisService {
  const runner = new EngineRunner({
    catalog: ENGINES,
    services: { transport, dnsServers: [], dataDir, storeFor: (id) => keyvEngineStore(storage.engineData, id) },
    cache: storage.results,
    cacheTtlSeconds: 0,
    concurrency: 4,
    engineSettings: {},
  });
  return new AnalysisService(catalog, runner, sqliteAnalysisStore(storage));
}

before(async () => {
  dataDir = tempDir('oas-verdict-ui-');
  storage = await openStorage(dataDir);
  transport = new HttpTransport();
});
after(async () => {
  await transport.close();
  await storage.close();
});

describe('the live view (/ui/analyses/<id>) and the history', () => {
  let analyses: AnalysisService;
  let id: string;
  let record: AnalysisRecord;

  before(async () => {
    analyses = service();
    id = (await analyses.start({ text: TEXT, engines: ['judge', 'watch', 'geo'] })).id;
    await analyses.idle();
    record = (await analyses.latest(id))!;
  });

  test('each finished observable carries its verdict and reasons, most severe first', () => {
    const view = analysisView(record, catalog);
    const byObservable = Object.fromEntries(view.observables.map((o) => [o.observable, { verdict: o.verdict, reasons: o.reasons }]));
    assert.deepEqual(byObservable, {
      '1.0.0.1': { verdict: 'malicious', reasons: ['judge: score 95/100', 'watch: flagged VPN'] },
      '1.0.0.2': { verdict: 'suspicious', reasons: ['judge: score 50/100'] },
      '1.0.0.3': { verdict: 'clean', reasons: ['judge: not listed'] },
      // judge failed and watch found no flag: nothing judged it, and the error is not "clean".
      '1.0.0.4': { verdict: 'unknown', reasons: [] },
    });
  });

  test('an observable still running has no verdict yet', () => {
    const running: AnalysisRecord = { ...record, complete: false, results: record.results.map((r, i) => (i === 1 ? null : r)) };
    const view = analysisView(running, catalog);
    const pending = view.observables.find((o) => o.index === 1)!;
    assert.equal(pending.done, false);
    assert.equal(pending.verdict, null);
    assert.deepEqual(pending.reasons, []);
    assert.equal(view.observables.find((o) => o.index === 0)!.verdict, 'malicious');
  });

  test('the API results stay the spec format: no verdict, no reasons', async () => {
    const texts: string[] = [];
    for await (const page of analyses.storedResults(record)) texts.push(...page.map((stored) => stored.value));
    assert.equal(texts.length, 4);
    for (const text of texts) {
      const result = JSON.parse(text) as Record<string, unknown>;
      assert.ok(!('verdict' in result) && !('reasons' in result), text);
      // seen (issue 38) is a field beyond the spec's, as the verdict is in the exports.
      for (const key of Object.keys(result)) assert.ok(['observable', 'type', 'reversed_success', 'judge', 'watch', 'geo', 'errors', 'seen'].includes(key), key);
    }
    // The live view's `results` are those same objects.
    const view = analysisView(record, catalog);
    assert.ok(view.results.every((r) => r !== null && !('verdict' in r)));
  });

  test('the completed header holds the counts; the history reads them from it', async () => {
    const header = (await analyses.get(id))!;
    assert.deepEqual(header.verdicts, { malicious: 1, suspicious: 1, clean: 1, unknown: 1, worst: 'malicious' });
    const page = await historyPage(storage, { query: '1.0.0.2', page: 1, perPage: 10 });
    const item = page.items.find((i) => i.id === id)!;
    assert.deepEqual(item.verdicts, { malicious: 1, suspicious: 1, clean: 1, unknown: 1, worst: 'malicious' });
  });

  test('an analysis whose engines judge nothing is all unknown', async () => {
    const other = (await analyses.start({ text: '1.0.0.9', engines: ['geo'] })).id;
    await analyses.idle();
    assert.deepEqual((await analyses.get(other))!.verdicts, { malicious: 0, suspicious: 0, clean: 0, unknown: 1, worst: 'unknown' });
  });

  test('records of older versions (no counts) and running analyses show none', async () => {
    const old: AnalysisHeader = {
      id: '00000000-0000-4000-8000-00000000a001',
      created_at: '2020-01-01T00:00:00.000Z',
      finished_at: '2020-01-01T00:00:01.000Z',
      duration_ms: 1000,
      engines: ['judge'],
      ignore_cache: false,
      observables: [{ value: '9.9.9.1', type: 'IPv4' }] as AnalysisHeader['observables'],
      complete: true,
      progress: { done: 1, total: 1 },
      results: [{ observable: '9.9.9.1', type: 'IPv4', reversed_success: false, judge: { score: 99 } }],
    };
    await storage.analyses.set(old.id, old);
    const running: AnalysisHeader = { ...old, id: '00000000-0000-4000-8000-00000000a002', complete: false, finished_at: null, origin: 'cli', format: 2, observables: [{ value: '9.9.9.2', type: 'IPv4' }] as AnalysisHeader['observables'] };
    delete running.results;
    // A running header never has counts; one with a stray field is not trusted either.
    await storage.analyses.set(running.id, { ...running, verdicts: { malicious: 1, suspicious: 0, clean: 0, unknown: 0, worst: 'malicious' } });
    const page = await historyPage(storage, { query: '9.9.9.', page: 1, perPage: 10 });
    assert.equal(page.items.length, 2);
    for (const item of page.items) assert.equal(item.verdicts, null, item.id);
  });
});

describe('an analysis resumed after a restart', () => {
  test('counts the verdicts of the results saved before the stop, without asking again', async () => {
    const id = '00000000-0000-4000-8000-00000000b001';
    const saved: ObservableResult = { observable: '1.0.0.1', type: 'IPv4', reversed_success: false, judge: { score: 99 } };
    const header: AnalysisHeader = {
      id,
      origin: 'server',
      created_at: new Date().toISOString(),
      finished_at: null,
      duration_ms: null,
      engines: ['judge'],
      ignore_cache: false,
      observables: [{ value: '1.0.0.1', type: 'IPv4' }, { value: '1.0.0.3', type: 'IPv4' }] as AnalysisHeader['observables'],
      complete: false,
      progress: { done: 0, total: 2 },
      format: 2,
    };
    await storage.analyses.set(id, header);
    await storage.analysesTable.query(`INSERT INTO ${ANALYSIS_RESULTS_TABLE} (id, idx, value) VALUES (?, ?, ?)`, [id, 0, JSON.stringify(saved)]);
    const before = judgeCalls.get('1.0.0.1') ?? 0;
    const analyses = service();
    assert.equal(await analyses.resumePending(), 1);
    await analyses.idle();
    assert.equal(judgeCalls.get('1.0.0.1') ?? 0, before, 'the saved observable is not asked again');
    const done = (await analyses.get(id))!;
    assert.equal(done.complete, true);
    assert.deepEqual(done.verdicts, { malicious: 1, suspicious: 0, clean: 1, unknown: 0, worst: 'malicious' });
  });
});

describe('the CLI table', () => {
  const results: ObservableResult[] = [
    { observable: '1.0.0.1', type: 'IPv4', reversed_success: false, judge: { score: 95 }, watch: { flagged: true }, geo: { country: 'AU' } },
    { observable: '1.0.0.3', type: 'IPv4', reversed_success: false, judge: null, watch: { flagged: false }, geo: { country: 'AU' } },
    { observable: '1.0.0.4', type: 'IPv4', reversed_success: false, judge: null, watch: { flagged: false }, geo: { country: 'AU' }, errors: { judge: 'HTTP 503 Service Unavailable' } },
    {
      observable: `https://very-long-host-name.example.org/${'path/'.repeat(12)}login?user=someone`,
      type: 'URL',
      reversed_success: false,
    },
  ];
  const rows = resultRows(results, catalog);
  // eslint-disable-next-line no-control-regex
  const ANSI = /\u001b\[[0-9;]*m/g;

  test('rows carry the verdict and the reasons of their observable', () => {
    const first = rows.filter((r) => r.observable === '1.0.0.1');
    assert.equal(first.length, 3);
    for (const row of first) {
      assert.equal(row.verdict, 'malicious');
      assert.deepEqual(row.reasons, ['judge: score 95/100', 'watch: flagged VPN']);
    }
    assert.equal(rows.find((r) => r.observable === '1.0.0.3')!.verdict, 'clean');
    assert.equal(rows.find((r) => r.observable === '1.0.0.4')!.verdict, 'unknown', 'an error never counts as clean');
  });

  test('one block per observable: its verdict first, its reasons, one line per engine; lines fit 100 columns', () => {
    const out = renderTable(rows, 100, { color: false, env: {}, named: ['judge', 'watch', 'geo'] });
    assert.doesNotMatch(out, ANSI, 'no colour when asked for none');
    const blocks = out.split('\n\n').map((b) => b.split('\n'));
    assert.deepEqual(blocks[0], ['malicious   1.0.0.1  IPv4', '  - judge: score 95/100', '  - watch: flagged VPN', '  judge  score 95', '  watch  VPN', '  geo    AU']);
    assert.deepEqual(blocks[1], ['clean       1.0.0.3  IPv4', '  - judge: not listed', '  judge  no data', '  watch  no flag', '  geo    AU']);
    assert.deepEqual(blocks[2], ['unknown     1.0.0.4  IPv4', '  judge  error: HTTP 503 Service Unavailable', '  watch  no flag', '  geo    AU'], 'an error never counts as clean');
    for (const line of out.split('\n')) assert.ok(line.length <= 100, `${line.length} > 100: ${line}`);
    // The long URL is shown whole, over several lines under itself.
    assert.equal(blocks[3]![0]!.slice(0, 12), 'unknown     ');
    assert.ok(blocks[3]!.length > 2, 'it wraps');
    assert.ok(blocks[3]!.map((l) => l.slice(12)).join('').startsWith(`${results[3]!.observable}  URL`), blocks[3]!.join('\n'));
    assert.deepEqual(blocks[4], ['Verdicts: 1 malicious, 0 suspicious, 1 clean, 2 unknown']);
  });

  test('engines are named as typed, else by their service name, reasons too; the footer wraps at the width', () => {
    const out = renderTable(rows, 80, { color: false, env: {}, footer: ['4 observable(s), 3 engine(s), 1 failed lookup(s)', `analysis ${'0'.repeat(36)}`] });
    assert.match(out, /^malicious +1\.0\.0\.1  IPv4\n {2}- judgesvc: score 95\/100\n {2}- watchsvc: flagged VPN\n {2}judgesvc +score 95$/m);
    assert.doesNotMatch(out, /^ {2}(judge|watch|geo) /m, 'no key shown when the default engines ran');
    const typedOne = renderTable(rows, 80, { color: false, env: {}, named: ['WATCH'] });
    assert.match(typedOne, /^ {2}watch +VPN$/m, 'a typed name is shown (as its key)');
    assert.match(typedOne, /^ {2}judgesvc +score 95$/m);
    const lines = out.split('\n');
    assert.deepEqual(lines.slice(-3), ['Verdicts: 1 malicious, 0 suspicious, 1 clean, 2 unknown', '4 observable(s), 3 engine(s), 1 failed lookup(s)', `analysis ${'0'.repeat(36)}`]);
    for (const line of lines) assert.ok(line.length <= 80, `${line.length} > 80: ${line}`);
    assert.match(renderTable(rows, 200, { color: false, env: {}, footer: ['4 observable(s)', 'analysis x'] }), /\n4 observable\(s\) · analysis x$/);
  });

  test('colour adds to the words, never replaces them', () => {
    const out = renderTable(rows, 100, { color: true, env: {} });
    assert.match(out, /\u001b\[1;31mmalicious\u001b\[0m/);
    assert.match(out, /\u001b\[32mclean\u001b\[0m/);
    assert.equal(out.replace(ANSI, ''), renderTable(rows, 100, { color: false, env: {} }));
  });

  test('colour only on a terminal and without NO_COLOR', () => {
    assert.equal(useColor({ isTTY: true }, {}), true);
    assert.equal(useColor({ isTTY: true }, { NO_COLOR: '1' }), false);
    assert.equal(useColor({ isTTY: true }, { NO_COLOR: '' }), true, 'an empty NO_COLOR does not count');
    assert.equal(useColor({ isTTY: false }, {}), false);
    assert.equal(useColor({}, {}), false);
  });

  test('oas analyze prints the verdict first and the counts, without colour into a pipe', async () => {
    const upstreams = await startUpstreams();
    try {
      const cwd = tempDir('oas-verdict-cli-');
      const run = await runOas(cwd, ['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--config', configFor(upstreams).file]);
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, ANSI);
      assert.match(run.stdout, /^unknown +8\.8\.8\.8  IPv4\n {2}reverse_dns +dns\.google$/m);
      assert.match(run.stdout, /^Verdicts: 0 malicious, 0 suspicious, 0 clean, 1 unknown$/m);
    } finally {
      await upstreams.close();
    }
  });
});

describe('the verdict badges of the web UI', () => {
  const css = readFileSync(new URL('../../web/static/oas.css', import.meta.url), 'utf8');

  /** The custom properties of the first `:root { ... }` after `from`. */
  function rootVariables(from: number): Map<string, string> {
    const start = css.indexOf(':root {', from);
    assert.ok(start >= 0);
    const body = css.slice(start, css.indexOf('}', start));
    return new Map([...body.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1]!, m[2]!.trim()]));
  }

  function luminance(hex: string): number {
    const match = /^#([0-9a-f]{6})$/i.exec(hex);
    assert.ok(match, `a #rrggbb colour: ${hex}`);
    const n = parseInt(match[1]!, 16);
    const channel = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(n >> 16) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
  }

  const contrast = (a: string, b: string) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p) as [number, number];
    return (x + 0.05) / (y + 0.05);
  };

  test('the contrast formula is WCAG 2\'s', () => {
    assert.equal(Math.round(contrast('#000000', '#ffffff') * 100) / 100, 21);
    assert.equal(contrast('#777777', '#777777'), 1);
    assert.ok(contrast('#767676', '#ffffff') >= 4.5 && contrast('#777777', '#ffffff') < 4.5);
  });

  test('each verdict badge draws its own pair of colours', () => {
    for (const verdict of ['malicious', 'suspicious', 'clean', 'unknown']) {
      const rule = new RegExp(`\\.verdict-${verdict} \\{ background: var\\(--verdict-${verdict}-bg\\); color: var\\(--verdict-${verdict}-fg\\); \\}`);
      assert.match(css, rule, verdict);
    }
  });

  test('text on every verdict badge is at least 4.5:1 (WCAG AA) in the light and the dark theme, and the four differ', () => {
    const light = rootVariables(0);
    const dark = rootVariables(css.indexOf('@media (prefers-color-scheme: dark)'));
    for (const [theme, vars] of [['light', light], ['dark', dark]] as const) {
      const backgrounds = new Set<string>();
      for (const verdict of ['malicious', 'suspicious', 'clean', 'unknown']) {
        const bg = vars.get(`--verdict-${verdict}-bg`);
        const fg = vars.get(`--verdict-${verdict}-fg`);
        assert.ok(bg && fg, `${theme} ${verdict} colours defined`);
        const ratio = contrast(fg, bg);
        assert.ok(ratio >= 4.5, `${theme} ${verdict}: ${fg} on ${bg} is ${ratio.toFixed(2)}:1`);
        backgrounds.add(bg.toLowerCase());
      }
      assert.equal(backgrounds.size, 4, `${theme}: four distinct colours`);
    }
    // The neutral badge of an engine that answered is readable too.
    for (const vars of [light, dark]) assert.ok(contrast(vars.get('--muted')!, vars.get('--surface-2')!) >= 4.5);
  });
});
