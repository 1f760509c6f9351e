/**
 * Where the marking shows (issue 34), without a browser: `oas engines` (table, `--wide` and
 * `--json`) and `/ui/engines` give each engine's `disclosure`, `touches_target` and effective
 * ceilings `max_tlp` and `max_pap` (its settings, read as the API reads a level, else the defaults
 * of its declarations), and the levels and default marking the form offers; `/ui/analyses/<id>`
 * and `/ui/history` give an analysis's `tlp` and `pap` (null for records of older versions), and a
 * withheld engine's cell says `withheld` and why. The Redis history gives the same items as the
 * SQLite one. The browser's side: tests/browser-marking.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AnalysisHeader } from '../src/store/analysis-store.js';
import { RedisAnalysisStore } from '../src/scale/redis-analyses.js';
import { sqliteAnalysisStore } from '../src/store/sqlite-analyses.js';
import { openStorage, type Storage } from '../src/store/storage.js';
import type { AnalysisView, CatalogView, HistoryView } from '../src/view/types.js';
import { intelDefinitions } from './fakes/internal-intel.js';
import { appOnUpstreams } from './helpers/app.js';
import { runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { completedResults } from './helpers/serve.js';
import { removeTempDir, tempDir } from './helpers/temp.js';

const served = appOnUpstreams({
  config: {
    // As an operator may write them: read as the API reads a level.
    default_tlp: 'tlp:green',
    default_pap: 'Clear',
    engines: { provider_11: { max_tlp: 'tlp:red' }, reverse_dns: { max_pap: 'red' } },
    custom_engines: {
      intel_inhouse: { ...(intelDefinitions('http://127.0.0.1:9') as { intel: Record<string, unknown> }).intel, label: 'Intel in-house', disclosure: 'internal', touches_target: true, max_pap: 'amber' },
    },
  },
});

interface Marked {
  id: string;
  disclosure: string;
  touches_target: boolean;
  max_tlp: string;
  max_pap: string;
}

/** What each engine below is, with this configuration. */
const EXPECTED: Record<string, Omit<Marked, 'id'>> = {
  bad_asn: { disclosure: 'none', touches_target: false, max_tlp: 'RED', max_pap: 'RED' },
  provider_15: { disclosure: 'internal', touches_target: false, max_tlp: 'RED', max_pap: 'RED' },
  provider_24: { disclosure: 'third_party', touches_target: false, max_tlp: 'AMBER', max_pap: 'AMBER' },
  public_dns: { disclosure: 'third_party', touches_target: true, max_tlp: 'AMBER', max_pap: 'GREEN' },
  // Set in the configuration: engines.reverse_dns.max_pap, engines.provider_11.max_tlp.
  reverse_dns: { disclosure: 'third_party', touches_target: true, max_tlp: 'AMBER', max_pap: 'RED' },
  provider_11: { disclosure: 'third_party', touches_target: false, max_tlp: 'RED', max_pap: 'AMBER' },
  // A custom engine's own declarations and ceiling.
  intel_inhouse: { disclosure: 'internal', touches_target: true, max_tlp: 'RED', max_pap: 'AMBER' },
};

function checkMarked(engines: Marked[]): void {
  for (const engine of engines) {
    assert.ok(['none', 'internal', 'third_party'].includes(engine.disclosure), `${engine.id}: ${engine.disclosure}`);
    assert.equal(typeof engine.touches_target, 'boolean', engine.id);
    assert.ok(['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED'].includes(engine.max_tlp), `${engine.id}: ${engine.max_tlp}`);
    assert.ok(['CLEAR', 'GREEN', 'AMBER', 'RED'].includes(engine.max_pap), `${engine.id}: ${engine.max_pap}`);
  }
  const byId = new Map(engines.map((e) => [e.id, e]));
  for (const [id, expected] of Object.entries(EXPECTED)) {
    const { disclosure, touches_target, max_tlp, max_pap } = byId.get(id) ?? ({} as Marked);
    assert.deepEqual({ disclosure, touches_target, max_tlp, max_pap }, expected, id);
  }
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${served.server.url}${path}`, init);
  assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

/** Starts an analysis through the API and waits for it to complete; its id. */
async function analyzed(body: Record<string, unknown>): Promise<string> {
  const { analysis_id: id } = await json<{ analysis_id: string }>('/api/analyze', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await completedResults(served.server.url, id);
  return id;
}

describe('oas engines: where each engine sends an observable, and its ceilings', () => {
  test('--json: disclosure, touches_target, max_tlp and max_pap of every engine, with the settings', async () => {
    const run = await runOas(served.config.dir, ['engines', '--json', '--config', served.config.file]);
    assert.equal(run.code, 0, run.stderr);
    const engines = JSON.parse(run.stdout) as Marked[];
    assert.ok(engines.length > 30);
    checkMarked(engines);
  });

  test('the table: after it, where observables go, what reaches the target, and the engines by ceilings; --wide: one column each', async () => {
    const run = await runOas(served.config.dir, ['engines', '--config', served.config.file], { env: { COLUMNS: '100' } });
    assert.equal(run.code, 0, run.stderr);
    for (const line of run.stdout.trimEnd().split('\n')) assert.ok([...line].length <= 100, line);
    // The lines below the table, unwrapped (a continued line is indented by two spaces).
    const text = run.stdout.replace(/\n {2}(?=\S)/g, ' ');
    const where = /^Where observables go: nowhere \(nothing leaves oas\): bad_asn; in-house \(a server the team runs\): (.+); every other engine: a third party\.$/m.exec(text);
    assert.ok(where, text);
    assert.deepEqual(where[1]!.split(', ').sort(), ['hister', 'intel_inhouse', 'misp_feedback', 'provider_04', 'provider_06', 'provider_14', 'provider_15', 'provider_16', 'provider_18']);
    assert.match(text, /^Reaching what the observable names \(a domain resolved, an address's reverse DNS\): intel_inhouse, public_dns, reverse_dns\.$/m);
    const ceilings = /^Max TLP\/PAP an analysis may have for an engine to be sent it \(engines\.<id>\.max_tlp, max_pap\): (.+)\.$/m.exec(text);
    assert.ok(ceilings, text);
    const groups = new Map(ceilings[1]!.split('; ').map((group) => group.split(': ') as [string, string]));
    assert.equal(groups.get('AMBER/AMBER'), 'the others');
    assert.equal(groups.get('AMBER/GREEN'), 'public_dns');
    assert.equal(groups.get('AMBER/RED'), 'reverse_dns');
    assert.equal(groups.get('RED/AMBER'), 'intel_inhouse, provider_11');
    assert.ok(groups.get('RED/RED')!.split(', ').includes('bad_asn'));

    const wide = await runOas(served.config.dir, ['engines', '--wide', '--config', served.config.file]);
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /│ Configured +│ Disclosure +│ Touches target +│ Max TLP +│ Max PAP +│/);
    assert.match(wide.stdout, /│ reverse_dns +│ .*│ third_party +│ yes +│ AMBER +│ RED +│/);
    assert.match(wide.stdout, /│ bad_asn +│ .*│ none +│ no +│ RED +│ RED +│/);
  });
});

describe('the pages\' JSON', () => {
  test('/ui/engines: each engine\'s marking as oas engines gives it; the levels and the default marking for the form', async () => {
    const catalog = await json<CatalogView>('/ui/engines');
    checkMarked(catalog.engines);
    assert.deepEqual(catalog.tlp_levels, ['CLEAR', 'GREEN', 'AMBER', 'AMBER+STRICT', 'RED']);
    assert.deepEqual(catalog.pap_levels, ['CLEAR', 'GREEN', 'AMBER', 'RED']);
    assert.equal(catalog.default_tlp, 'GREEN');
    assert.equal(catalog.default_pap, 'CLEAR');
  });

  test('/ui/analyses/<id>: the analysis\'s TLP and PAP (given, or the defaults); a withheld engine\'s cell says so and why', async () => {
    const red = await analyzed({ text: 'example.com', engines: ['reverse_dns'], tlp: 'red' });
    const view = await json<AnalysisView>(`/ui/analyses/${red}`);
    assert.equal(view.tlp, 'RED');
    assert.equal(view.pap, 'CLEAR', 'the server\'s default_pap');
    const [cell] = view.observables[0]!.cells;
    assert.equal(cell!.engine, 'reverse_dns');
    assert.equal(cell!.status, 'withheld');
    assert.match(cell!.summary, /^withheld: not sent: TLP:RED allows only engines that keep data in-house \(.*engines\.reverse_dns\.max_tlp is AMBER\)$/);
    assert.deepEqual(cell!.fields, []);

    const unmarked = await analyzed({ text: 'example.com', engines: ['reverse_dns'] });
    const plain = await json<AnalysisView>(`/ui/analyses/${unmarked}`);
    assert.deepEqual([plain.tlp, plain.pap], ['GREEN', 'CLEAR'], 'the server\'s default_tlp and default_pap');
    assert.equal(plain.observables[0]!.cells[0]!.status, 'ok');

    const history = await json<HistoryView>('/ui/history?q=example.com&per_page=100');
    const item = (id: string) => history.items.find((i) => i.id === id)!;
    assert.deepEqual([item(red).tlp, item(red).pap], ['RED', 'CLEAR']);
    assert.deepEqual([item(unmarked).tlp, item(unmarked).pap], ['GREEN', 'CLEAR']);
  });

  test('a record of an older version (no tlp, no pap): null in /ui/analyses/<id> and in /ui/history', async () => {
    const id = randomUUID();
    const old: AnalysisHeader = {
      id,
      origin: 'server',
      created_at: new Date().toISOString(),
      finished_at: new Date().toISOString(),
      duration_ms: 12,
      engines: ['reverse_dns'],
      ignore_cache: false,
      observables: [{ value: 'older-record.example', type: 'FQDN' }],
      complete: true,
      progress: { done: 1, total: 1 },
      format: 2,
    };
    await sqliteAnalysisStore(served.app.storage!).putHeader(old);
    const view = await json<AnalysisView>(`/ui/analyses/${id}`);
    assert.deepEqual([view.tlp, view.pap], [null, null]);
    const history = await json<HistoryView>('/ui/history?q=older-record.example');
    assert.deepEqual(history.items.map((i) => [i.id, i.tlp, i.pap]), [[id, null, null]]);
  });
});

describe('the Redis history', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let dir: string;
  let storage: Storage;
  before(async () => {
    redis = await startRedis();
    dir = tempDir('oas-marking-history-');
    storage = await openStorage(join(dir, 'data'));
  });
  after(async () => {
    await storage?.close();
    await redis?.close();
    if (dir) removeTempDir(dir);
  });

  test('each item\'s TLP and PAP, null for a record of an older version: as the SQLite history gives them', async () => {
    const sqlite = sqliteAnalysisStore(storage);
    const store = new RedisAnalysisStore(redis.client, 'marking-test:');
    const start = Date.parse('2026-03-01T08:00:00.000Z');
    const markings: Pick<AnalysisHeader, 'tlp' | 'pap'>[] = [{ tlp: 'RED', pap: 'AMBER' }, { tlp: 'AMBER+STRICT', pap: 'CLEAR' }, {}];
    const headers = markings.map((marking, i) => ({
      id: randomUUID(),
      origin: 'server',
      created_at: new Date(start + i * 60_000).toISOString(),
      finished_at: null,
      duration_ms: null,
      engines: ['reverse_dns'],
      ignore_cache: false,
      observables: [{ value: `host${i}.example`, type: 'FQDN' }],
      complete: false,
      progress: { done: 0, total: 1 },
      format: 2,
      ...marking,
    }) satisfies AnalysisHeader);
    for (const header of headers) {
      await sqlite.putHeader(header);
      await store.putHeader(header);
    }
    const query = { query: '', page: 1, perPage: 10 };
    const fromRedis = await store.history(query, (key) => key);
    assert.deepEqual(fromRedis, await sqlite.history(query, (key) => key));
    assert.deepEqual(fromRedis.items.map((i) => [i.tlp, i.pap]), [[null, null], ['AMBER+STRICT', 'CLEAR'], ['RED', 'AMBER']]);
  });
});
