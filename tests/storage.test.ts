/**
 * How analyses are stored (issue 12): a small header per analysis, one row per finished
 * observable. Over real HTTP against loopback fakes: a many-observable analysis round-trips
 * through the API, its exports and views hold the same results, a restart keeps the rows already
 * stored and runs only the rest, and records written by the previous format (results inside the
 * record) are still served and resumed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonChunks } from '../src/analysis/output.js';
import { observableVerdict } from '../src/analysis/rows.js';
import type { AnalysisHeader, AnalysisRecord } from '../src/store/analysis-store.js';
import type { ObservableResult } from '../src/runner/result.js';
import { ANALYSIS_RESULTS_TABLE } from '../src/store/storage.js';
import { resultsCsv } from '../src/export/csv.js';
import { withMarking, withVerdict } from '../src/export/json.js';
import type { AnalysisView, HistoryView } from '../src/view/types.js';
import type { Zone } from './fakes/dns.js';
import { appOnUpstreams } from './helpers/app.js';
import { removeTempDir } from './helpers/temp.js';
import { ZONE } from './helpers/upstreams.js';

const MANY = 600;
const host = (i: number) => `host${i}.example.org`;
const zone: Zone = { ...ZONE };
for (let i = 0; i < MANY; i++) zone[host(i)] = { A: [`192.0.2.${(i % 250) + 1}`] };

const served = appOnUpstreams({ upstreams: { zone } });
after(() => removeTempDir(served.config.dir));

async function get(path: string): Promise<Response> {
  return fetch(`${served.server.url}${path}`);
}

async function complete(id: string): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await get(`/api/is_analysis_complete/${id}`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { complete: boolean };
    assert.deepEqual(Object.keys(body), ['complete']);
    if (body.complete) return;
    assert.ok(i < 2000, 'the analysis completes');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function post(text: string, engines: string[]): Promise<string> {
  const res = await fetch(`${served.server.url}/api/analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, engines, ignore_cache: true }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

const legacyId = '00000000-0000-4000-8000-0000000000aa';
function legacyResult(observable: string, marker: string): ObservableResult {
  return { observable, type: 'FQDN', reversed_success: true, reverse_dns: { reverse_dns: [marker] } };
}

describe('a many-observable analysis', () => {
  let id: string;
  let results: ObservableResult[];

  test(`${MANY} observables round-trip through the API, in input order`, async () => {
    id = await post(Array.from({ length: MANY }, (_, i) => host(i)).join('\n'), ['reverse_dns']);
    await complete(id);
    const res = await get(`/api/results/${id}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /application\/json/);
    const text = await res.text();
    results = JSON.parse(text) as ObservableResult[];
    assert.equal(text, JSON.stringify(results), 'the body is the array serialized as one');
    assert.equal(results.length, MANY);
    results.forEach((result, i) => {
      assert.equal(result.observable, host(i));
      assert.equal(result.type, 'FQDN');
      assert.equal(result.errors, undefined, JSON.stringify(result.errors));
      assert.deepEqual(result.reverse_dns, { reverse_dns: [`192.0.2.${(i % 250) + 1}`] });
    });
    // The header keeps no results: they are rows.
    const stored = (await served.app.storage!.analyses.get(id)) as AnalysisHeader;
    assert.equal(stored.complete, true);
    assert.equal(stored.results, undefined);
    const [count] = (await served.app.storage!.analysesTable.query(`SELECT count(*) AS n FROM ${ANALYSIS_RESULTS_TABLE} WHERE id = ?`, id)) as { n: number }[];
    assert.equal(count!.n, MANY);
  });

  test('the JSON and CSV exports are exactly what the whole array gives', async () => {
    const json = await get(`/export/${id}?format=json`);
    assert.equal(json.status, 200);
    // The analysis was marked with the defaults: TLP:AMBER, PAP:GREEN.
    const marking = { tlp: 'AMBER', pap: 'GREEN' } as const;
    assert.equal(await json.text(), JSON.stringify(results.map((r) => withMarking(withVerdict(r, observableVerdict(r, served.app.catalog)), marking)), null, 2));
    const csv = await get(`/export/${id}?format=csv`);
    assert.equal(csv.status, 200);
    assert.equal(await csv.text(), resultsCsv(results, served.app.catalog, marking));
  });

  test('the live view holds the same results; with ?have= for all, none', async () => {
    const res = await get(`/ui/analyses/${id}`);
    assert.equal(res.status, 200);
    const view = (await res.json()) as AnalysisView;
    assert.equal(view.complete, true);
    assert.deepEqual(view.progress, { done: MANY, total: MANY });
    assert.deepEqual(view.results, results);
    assert.equal(view.observables.length, MANY);
    const bits = Buffer.alloc(Math.ceil(MANY / 8), 0xff);
    const held = (await (await get(`/ui/analyses/${id}?have=${bits.toString('base64url')}`)).json()) as AnalysisView;
    assert.equal(held.observables.length, 0);
    assert.ok(held.results.every((r) => r === null));
    // Half of them held: the other half is sent.
    const half = Buffer.alloc(Math.ceil(MANY / 8), 0x55);
    const partial = (await (await get(`/ui/analyses/${id}?have=${half.toString('base64url')}`)).json()) as AnalysisView;
    assert.deepEqual(partial.observables.map((o) => o.index), results.map((_, i) => i).filter((i) => i % 2 === 1));
    assert.deepEqual(partial.results.filter((r) => r !== null), results.filter((_, i) => i % 2 === 1));
  });

  test('the history finds it by any of its observables', async () => {
    const found = (await (await get(`/ui/history?q=${host(MANY - 1)}`)).json()) as HistoryView;
    assert.ok(found.items.some((item) => item.id === id && item.observable_count === MANY));
  });
});

describe('records of the previous format (results inside the record)', () => {
  const observables = ['old-one.example', 'old-two.example'];
  const results = observables.map((o) => legacyResult(o, `legacy-${o}`));

  before(async () => {
    const record: AnalysisRecord = {
      id: legacyId,
      origin: 'server',
      created_at: '2024-01-02T03:04:05.000Z',
      finished_at: '2024-01-02T03:04:06.000Z',
      duration_ms: 1000,
      engines: ['reverse_dns'],
      ignore_cache: false,
      observables: observables.map((value) => ({ value, type: 'FQDN' })),
      complete: true,
      progress: { done: 2, total: 2 },
      results,
    };
    await served.app.storage!.analyses.set(legacyId, record);
  });

  test('are still complete, served, exported, viewed and found in the history', async () => {
    assert.deepEqual(await (await get(`/api/is_analysis_complete/${legacyId}`)).json(), { complete: true });
    const res = await get(`/api/results/${legacyId}`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), JSON.stringify(results));
    assert.equal(await (await get(`/export/${legacyId}?format=json`)).text(), JSON.stringify(results.map((r) => withVerdict(r, observableVerdict(r, served.app.catalog))), null, 2));
    assert.equal(await (await get(`/export/${legacyId}?format=csv`)).text(), resultsCsv(results, served.app.catalog));
    const view = (await (await get(`/ui/analyses/${legacyId}`)).json()) as AnalysisView;
    assert.deepEqual(view.results, results);
    const found = (await (await get('/ui/history?q=old-two')).json()) as HistoryView;
    assert.deepEqual(found.items.map((item) => item.id), [legacyId]);
  });
});

describe('a restart mid-analysis', () => {
  test('keeps the rows already stored and runs only the other observables; an old-format record resumes too', async () => {
    const names = Array.from({ length: 5 }, (_, i) => host(i));
    const header: AnalysisHeader = {
      id: '00000000-0000-4000-8000-0000000000bb',
      origin: 'server',
      created_at: new Date().toISOString(),
      finished_at: null,
      duration_ms: null,
      engines: ['reverse_dns'],
      ignore_cache: true,
      observables: names.map((value) => ({ value, type: 'FQDN' })),
      complete: false,
      progress: { done: 0, total: 5 },
      format: 2,
    };
    // As a process killed mid-analysis leaves it: the header, and the rows of 0 and 3.
    await served.app.storage!.analyses.set(header.id, header);
    const kept = new Map([[0, legacyResult(names[0]!, 'stored-before-the-crash-0')], [3, legacyResult(names[3]!, 'stored-before-the-crash-3')]]);
    for (const [idx, result] of kept) {
      await served.app.storage!.analysesTable.query(`INSERT INTO ${ANALYSIS_RESULTS_TABLE} (id, idx, value) VALUES (?, ?, ?)`, header.id, idx, JSON.stringify(result));
    }
    // A record of the previous format, interrupted after its first observable.
    const oldNames = [host(10), host(11)];
    const old: AnalysisRecord = {
      ...header,
      id: '00000000-0000-4000-8000-0000000000cc',
      observables: oldNames.map((value) => ({ value, type: 'FQDN' })),
      progress: { done: 1, total: 2 },
      results: [legacyResult(oldNames[0]!, 'stored-in-the-old-record'), null],
    };
    delete old.format;
    await served.app.storage!.analyses.set(old.id, old);

    // Seen from the API before the restart: incomplete (409 for results), partial in the live view.
    assert.deepEqual(await (await get(`/api/is_analysis_complete/${header.id}`)).json(), { complete: false });
    assert.equal((await get(`/api/results/${header.id}`)).status, 409);
    assert.equal((await get(`/export/${header.id}?format=json`)).status, 409);
    const partial = (await (await get(`/ui/analyses/${header.id}`)).json()) as AnalysisView;
    assert.equal(partial.complete, false);
    assert.deepEqual(partial.observables.filter((o) => o.done).map((o) => o.index), [0, 3]);
    assert.deepEqual(partial.progress, { done: 2, total: 5 });

    // The restart: a new app on the same data directory, as an upgrade from a version that wrote
    // the old record (no schema recorded: its migrations run, the old record's results become rows).
    await served.app.storage!.analysesTable.query('PRAGMA user_version = 0');
    await served.restart();
    const queriesBefore = served.upstreams.dns.queries.length;
    assert.equal(await served.app.analyses.resumePending(), 2);
    await complete(header.id);
    await complete(old.id);

    const results = (await (await get(`/api/results/${header.id}`)).json()) as ObservableResult[];
    assert.deepEqual(results.map((r) => r.observable), names);
    assert.deepEqual(results[0], kept.get(0));
    assert.deepEqual(results[3], kept.get(3));
    for (const i of [1, 2, 4]) assert.deepEqual(results[i]!.reverse_dns, { reverse_dns: [`192.0.2.${i + 1}`] });
    const resumedNames = served.upstreams.dns.queries.slice(queriesBefore).map((q) => q.name).filter((name) => name.endsWith('.example.org'));
    assert.deepEqual([...new Set(resumedNames)].sort(), [names[1], names[2], names[4], oldNames[1]].sort(), 'only the observables without a stored result ran again');

    const oldResults = (await (await get(`/api/results/${old.id}`)).json()) as ObservableResult[];
    assert.deepEqual(oldResults[0], old.results[0]);
    assert.equal(oldResults[1]!.observable, oldNames[1]);
    assert.equal(((await served.app.storage!.analyses.get(old.id)) as AnalysisHeader).results, undefined, 'migrated: its results are rows now');

    // Nothing left to resume.
    assert.equal(await served.app.analyses.resumePending(), 0);
  });
});

describe('streamed JSON', () => {
  async function text(pages: string[][], pretty: boolean): Promise<{ whole: string; chunks: number }> {
    let whole = '';
    let chunks = 0;
    for await (const chunk of jsonChunks((async function* () {
      for (const page of pages) yield page.map((value) => ({ value }));
    })(), pretty)) {
      whole += chunk;
      chunks++;
    }
    return { whole, chunks };
  }

  test('is the array serialized at once, compact or indented, whatever the pages and chunks', async () => {
    const values: unknown[] = [
      { observable: 'a', nested: { list: [1, 'two\nlines', null, { deep: true }], empty: {}, none: [] } },
      { observable: 'b "quoted"', text: 'x'.repeat(70_000) },
      { observable: 'c', unicode: 'é ✓ \u2028' },
    ];
    const texts = values.map((v) => JSON.stringify(v));
    for (const pretty of [false, true]) {
      const expected = pretty ? JSON.stringify(values, null, 2) : JSON.stringify(values);
      const split = await text([texts.slice(0, 1), [], texts.slice(1)], pretty);
      assert.equal(split.whole, expected);
      assert.ok(split.chunks > 1, 'a long body comes in several chunks');
      assert.equal((await text([], pretty)).whole, pretty ? JSON.stringify([], null, 2) : '[]');
      assert.equal((await text([[texts[0]!]], pretty)).whole, pretty ? JSON.stringify([values[0]], null, 2) : JSON.stringify([values[0]]));
    }
  });
});
