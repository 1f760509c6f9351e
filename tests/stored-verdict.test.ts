/**
 * An observable's verdict is worked out once, as it finishes, and stored beside its result
 * (issue 33): the analysis hands it to its listener (`oas analyze --format jsonl`) and writes it
 * with the row; the exports and the results view read it from there and never ask the engines'
 * evidence again. Counted, not timed: the test engine's `evidence` counts its calls, and a verdict
 * planted in a row (one no engine could give) shows wherever the verdict is read. An analysis
 * stored by an older version (no `verdict` column) keeps its verdicts: the table is migrated in
 * place and the readers work them out.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import KeyvSqlite from '@keyv/sqlite';
import Keyv from 'keyv';
import { observableVerdict } from '../src/analysis/rows.js';
import { AnalysisService } from '../src/analysis/service.js';
import { countRow, noVerdicts } from '../src/analysis/verdict-counts.js';
import { Catalog } from '../src/engine/catalog.js';
import { defineEngine, type EngineDefinition } from '../src/engine/contract.js';
import { resultsCsv } from '../src/export/csv.js';
import { exportChunks, type ExportFormat } from '../src/export/index.js';
import { withVerdict } from '../src/export/json.js';
import { HttpTransport } from '../src/http/client.js';
import type { ObservableResult } from '../src/runner/result.js';
import { EngineRunner } from '../src/runner/runner.js';
import type { AnalysisHeader } from '../src/store/analysis-store.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { sqliteAnalysisStore } from '../src/store/sqlite-analyses.js';
import { ANALYSIS_RESULTS_TABLE, DATABASE_FILE, KEYV_TEXT, openStorage, type Storage } from '../src/store/storage.js';
import { parseVerdict, type ObservableVerdict } from '../src/verdict/verdict.js';
import { analysisView } from '../src/view/analysis-view.js';
import { tempDir } from './helpers/temp.js';

/** judge's score per address; absent: null (not listed: clean). */
const SCORES: Record<string, number> = { '1.0.0.1': 95, '1.0.0.2': 50 };
/** Calls of judge's evidence: what working out a verdict costs, counted. */
let evidenceCalls = 0;

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
    evidenceCalls++;
    if (r === null) return { level: 'clean', reason: 'not listed' };
    return r.score >= 80 ? { level: 'malicious', reason: `score ${r.score}/100` } : { level: 'suspicious', reason: `score ${r.score}/100` };
  },
  run: async (o) => (SCORES[o.value] === undefined ? null : { score: SCORES[o.value]! }),
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

const ENGINES = [judge, geo] as EngineDefinition[];
const catalog = new Catalog(ENGINES);
const TEXT = '1.0.0.1 1.0.0.2 1.0.0.3';
const EXPECTED: ObservableVerdict[] = [
  { verdict: 'malicious', reasons: ['judge: score 95/100'] },
  { verdict: 'suspicious', reasons: ['judge: score 50/100'] },
  { verdict: 'clean', reasons: ['judge: not listed'] },
];
/** A verdict no engine of the catalog gives: a reader that works verdicts out again cannot show it. */
const PLANTED: ObservableVerdict = { verdict: 'suspicious', reasons: ['planted: the stored verdict'] };

let transport: HttpTransport;
before(() => {
  transport = new HttpTransport();
});
after(() => transport.close());

function service(storage: Storage, dataDir: string): AnalysisService {
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

/** An export of the analysis `header` of `analyses`, as text (xlsx: its bytes as latin1). */
async function exported(format: ExportFormat, analyses: AnalysisService, header: AnalysisHeader): Promise<string> {
  const source = { id: header.id, created_at: header.created_at, finished_at: header.finished_at, pages: () => analyses.storedResults(header) };
  let out = '';
  for await (const chunk of exportChunks(format, source, catalog)) out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
  return out;
}

/** What the stored results give when every verdict is worked out from them (the reference). */
async function resultsOf(analyses: AnalysisService, header: AnalysisHeader): Promise<ObservableResult[]> {
  const results: ObservableResult[] = [];
  for await (const page of analyses.storedResults(header)) for (const stored of page) results.push(JSON.parse(stored.value) as ObservableResult);
  return results;
}

describe('a verdict worked out once, stored with its result', () => {
  let dataDir: string;
  let storage: Storage;
  let analyses: AnalysisService;
  let record: AnalysisHeader;
  const heard = new Map<number, ObservableVerdict>();

  before(async () => {
    dataDir = tempDir('oas-stored-verdict-');
    storage = await openStorage(dataDir);
    analyses = service(storage, dataDir);
  });
  after(() => storage.close());

  test('the analysis works it out once per observable, hands it to its listener and stores it beside the row', async () => {
    evidenceCalls = 0;
    record = await analyses.runToEnd({ text: TEXT, engines: ['judge', 'geo'] }, undefined, undefined, (index, _result, judged) => heard.set(index, judged));
    assert.equal(evidenceCalls, 3, 'one evidence call per observable (judge is the one engine that judges)');
    assert.deepEqual([0, 1, 2].map((i) => heard.get(i)), EXPECTED, 'the listener (jsonl) gets each verdict');
    const rows = (await storage.analysesTable.query(`SELECT idx, verdict FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ? ORDER BY idx`, record.id)) as { idx: number; verdict: string }[];
    assert.deepEqual(rows.map((row) => parseVerdict(row.verdict)), EXPECTED, 'stored beside each row');
    assert.deepEqual(record.verdicts, { malicious: 1, suspicious: 1, clean: 1, unknown: 0, worst: 'malicious' });
  });

  test('the exports take the stored verdicts: no evidence asked again, the same bytes as working them out', async () => {
    evidenceCalls = 0;
    const json = await exported('json', analyses, record);
    const csv = await exported('csv', analyses, record);
    for (const format of ['stix', 'misp', 'xlsx'] as const) await exported(format, analyses, record);
    assert.equal(evidenceCalls, 0, 'no export worked a verdict out again');

    const results = await resultsOf(analyses, record);
    assert.equal(json, JSON.stringify(results.map((r) => withVerdict(r, observableVerdict(r, catalog))), null, 2));
    assert.equal(csv, resultsCsv(results, catalog));
  });

  test('the results view takes the stored verdicts: the evidence read once per result, for the cells only', async () => {
    const latest = (await analyses.latest(record.id))!;
    evidenceCalls = 0;
    const view = analysisView(latest, catalog);
    assert.equal(evidenceCalls, 3, 'one evidence call per observable: the cells\' highlights');
    assert.deepEqual(view.observables.map(({ verdict, reasons }) => ({ verdict, reasons })), EXPECTED);
  });

  test('a verdict planted in a row shows in every reader: none works it out again', async () => {
    await storage.analysesTable.query(`UPDATE ${ANALYSIS_RESULTS_TABLE} SET verdict = ? WHERE id = ? AND idx = 0`, JSON.stringify(PLANTED), record.id);

    const element = (JSON.parse(await exported('json', analyses, record)) as Record<string, unknown>[])[0]!;
    assert.deepEqual({ verdict: element.verdict, reasons: element.reasons }, PLANTED, 'the JSON export');

    const lines = (await exported('csv', analyses, record)).trimEnd().split('\r\n').filter((line) => line.startsWith('1.0.0.1,'));
    assert.ok(lines.length > 0);
    for (const line of lines) assert.ok(line.includes(',suspicious,planted: the stored verdict'), line);

    for (const format of ['stix', 'misp'] as const) assert.ok((await exported(format, analyses, record)).includes('planted: the stored verdict'), `the ${format} export`);

    const view = analysisView((await analyses.latest(record.id))!, catalog);
    const first = view.observables.find((o) => o.index === 0)!;
    assert.deepEqual({ verdict: first.verdict, reasons: first.reasons }, PLANTED, 'the results view');
    assert.equal(first.graph?.nodes.find((node) => node.kind === 'observable')?.verdict, 'suspicious', 'the graph');

    const counts = noVerdicts();
    for await (const page of analyses.storedResults(record)) for (const stored of page) countRow(counts, stored, catalog);
    assert.deepEqual(counts, { malicious: 0, suspicious: 2, clean: 1, unknown: 0, worst: 'suspicious' }, 'the counts of a resumed analysis');
  });
});

describe('an analysis stored by an older version (no verdict column)', () => {
  const id = '00000000-0000-4000-8000-0000000000bb';
  const results: ObservableResult[] = [
    { observable: '1.0.0.1', type: 'IPv4', reversed_success: false, judge: { score: 95 }, geo: { country: 'AU' } },
    { observable: '1.0.0.2', type: 'IPv4', reversed_success: false, judge: { score: 50 }, geo: { country: 'AU' } },
    { observable: '1.0.0.3', type: 'IPv4', reversed_success: false, judge: null, geo: { country: 'AU' } },
  ];
  const header: AnalysisHeader = {
    id,
    origin: 'server',
    created_at: '2025-06-01T10:00:00.000Z',
    finished_at: '2025-06-01T10:00:02.000Z',
    duration_ms: 2000,
    engines: ['judge', 'geo'],
    ignore_cache: false,
    observables: results.map((r) => ({ value: r.observable, type: 'IPv4' })),
    complete: true,
    progress: { done: 6, total: 6 },
    format: 2,
    verdicts: { malicious: 1, suspicious: 1, clean: 1, unknown: 0, worst: 'malicious' },
  };

  /** A data directory whose database has the older shape of `analysis_results`, with the analysis in it. */
  async function olderDatabase(): Promise<string> {
    const dataDir = tempDir('oas-older-schema-');
    const table = new KeyvSqlite({ uri: `sqlite://${join(dataDir, DATABASE_FILE)}`, table: 'analyses' });
    await table.query(`CREATE TABLE ${ANALYSIS_RESULTS_TABLE} (id TEXT NOT NULL, idx INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (id, idx)) WITHOUT ROWID`);
    for (const [idx, result] of results.entries()) {
      await table.query(`INSERT INTO ${ANALYSIS_RESULTS_TABLE} (id, idx, value) VALUES (?, ?, ?)`, id, idx, JSON.stringify(result));
    }
    await new Keyv({ store: table, namespace: '', ...KEYV_TEXT }).set(id, header);
    await table.close();
    return dataDir;
  }

  const columns = async (storage: Storage) => ((await storage.analysesTable.query(`SELECT name FROM pragma_table_info('${ANALYSIS_RESULTS_TABLE}')`)) as { name: string }[]).map((c) => c.name);

  test('is migrated in place: the column added, every row kept, without a verdict', async () => {
    const dataDir = await olderDatabase();
    const storage = await openStorage(dataDir);
    try {
      assert.deepEqual(await columns(storage), ['id', 'idx', 'value', 'verdict']);
      const rows = (await storage.analysesTable.query(`SELECT idx, value, verdict FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ? ORDER BY idx`, id)) as { idx: number; value: string; verdict: string | null }[];
      assert.deepEqual(rows, results.map((r, idx) => ({ idx, value: JSON.stringify(r), verdict: null })));
    } finally {
      await storage.close();
    }
    // Opened again (the column is there): nothing to do.
    const again = await openStorage(dataDir);
    assert.deepEqual(await columns(again), ['id', 'idx', 'value', 'verdict']);
    await again.close();
  });

  test('two processes opening it at once both open it', async () => {
    const dataDir = await olderDatabase();
    const both = await Promise.all([openStorage(dataDir), openStorage(dataDir)]);
    for (const storage of both) assert.deepEqual(await columns(storage), ['id', 'idx', 'value', 'verdict']);
    await Promise.all(both.map((storage) => storage.close()));
  });

  test('still exports and views with its verdicts, worked out by the readers', async () => {
    const dataDir = await olderDatabase();
    const storage = await openStorage(dataDir);
    try {
      const analyses = service(storage, dataDir);
      const stored = (await analyses.get(id))!;
      assert.equal(stored.complete, true);
      const json = JSON.parse(await exported('json', analyses, stored)) as Record<string, unknown>[];
      assert.deepEqual(json.map(({ verdict, reasons }) => ({ verdict, reasons })), EXPECTED);
      assert.equal(await exported('json', analyses, stored), JSON.stringify(results.map((r, i) => withVerdict(r, EXPECTED[i]!)), null, 2));
      assert.equal(await exported('csv', analyses, stored), resultsCsv(results, catalog));
      for (const format of ['stix', 'misp'] as const) {
        const text = await exported(format, analyses, stored);
        for (const expected of EXPECTED) assert.ok(text.includes(expected.reasons[0]!), `${format}: ${expected.reasons[0]}`);
      }
      const view = analysisView((await analyses.latest(id))!, catalog);
      assert.deepEqual(view.observables.map(({ verdict, reasons }) => ({ verdict, reasons })), EXPECTED);
      const counts = noVerdicts();
      for await (const page of analyses.storedResults(stored)) for (const row of page) countRow(counts, row, catalog);
      assert.deepEqual(counts, header.verdicts);
    } finally {
      await storage.close();
    }
  });
});
