/**
 * Issue 38, "seen before": each observable of an analysis carries `seen`, what the store's earlier
 * analyses said of it (count, first, last, the last one's verdict and id; null when none held
 * it), and `oas history VALUE` and GET /ui/observables/<value> list the analyses that held it.
 *
 * The index itself on SQLite and on a real redis-server (counts, an analysis left out, the newest
 * first, forgetting, filling a new table from the rows an older version stored); `oas analyze`
 * and `oas history` as subprocesses; `oas serve` over real HTTP (the results, the page's JSON, the
 * observable's page); `oas serve --redis` with its worker; `oas mcp`'s analyze tool. The engine is
 * a custom one on a loopback fake whose answer the test chooses (a score: malicious from 80,
 * clean below 40).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas } from './helpers/cli.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { BIN, completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import type { AnalysisStore } from '../src/store/analysis-store.js';
import { RedisAnalysisStore } from '../src/scale/redis-analyses.js';
import { seenKey } from '../src/store/seen.js';
import { seenText } from '../src/analysis/rows.js';
import { sqliteAnalysisStore } from '../src/store/sqlite-analyses.js';
import { openStorage } from '../src/store/storage.js';
import type { SeenBefore } from '../src/runner/result.js';

let upstreams: Upstreams;
let intel: FakeHttpServer;
/** The score the fake answers for each observable (absent: 10, clean). */
const scores = new Map<string, number>();

const INTEL = {
  types: ['IPv4', 'FQDN', 'URL'],
  request: { url: '' },
  fields: { score: '/score' },
  summary: 'score {score}',
  evidence: [
    { field: 'score', op: '>=', value: 80, verdict: 'malicious', reason: 'score {score}' },
    { field: 'score', op: '<', value: 40, verdict: 'clean', reason: 'score {score}' },
  ],
};

const configWith = (extra: Record<string, unknown> = {}) => configFor(upstreams, { custom_engines: { intel: { ...INTEL, request: { url: `${intel.url}/intel/{value}` } } }, ...extra });

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({
    'GET /intel/*': (request) => ({ json: { score: scores.get(decodeURIComponent(request.path.slice('/intel/'.length))) ?? 10 } }),
  });
});

after(async () => {
  await Promise.all([upstreams?.close(), intel?.close()]);
});

interface Result { observable: string; verdict: string; seen?: SeenBefore | null }
interface HistoryJson { value: string; total: number; items: { analysis_id: string; created_at: string; verdict: string; link: string }[] }

const byObservable = (results: Result[], observable: string): Result => {
  const found = results.find((r) => r.observable === observable);
  assert.ok(found, `${observable} in ${results.map((r) => r.observable).join(', ')}`);
  return found;
};

/** The index on both stores: what a lookup answers, what a history lists, what is forgotten. */
function indexTests(name: string, open: () => Promise<{ store: AnalysisStore; close(): Promise<void> }>) {
  describe(`the index on ${name}`, { skip: name === 'Redis' ? redisSkip : false }, () => {
    let store: AnalysisStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await open());
    });
    after(async () => close?.());

    test('counts the analyses that held a key, first and last, and the last one\'s verdict; one left out', async () => {
      await store.recordSeen([
        { value: 'evil.example', at: '2026-11-02T10:00:00.000Z', analysis_id: 'a1', verdict: 'clean' },
        { value: 'evil.example', at: '2026-11-05T10:00:00.000Z', analysis_id: 'a2', verdict: 'malicious' },
        { value: 'evil.example', at: '2026-11-07T10:00:00.000Z', analysis_id: 'a3', verdict: 'suspicious' },
        { value: 'only.example', at: '2026-11-07T10:00:00.000Z', analysis_id: 'a3', verdict: 'clean' },
        // Written twice (a job run again): counted once.
        { value: 'evil.example', at: '2026-11-05T10:00:00.000Z', analysis_id: 'a2', verdict: 'malicious' },
      ]);
      const all = await store.seenBefore(['evil.example', 'only.example', 'never.example', 'evil.example']);
      assert.deepEqual(all.get('evil.example'), { count: 3, first: '2026-11-02T10:00:00.000Z', last: '2026-11-07T10:00:00.000Z', last_verdict: 'suspicious', last_analysis_id: 'a3' });
      assert.equal(all.get('only.example')?.count, 1);
      assert.equal(all.has('never.example'), false, 'a key none held is absent');
      // Leaving out the analysis that asks (a resumed one): the last is then the one before it.
      const others = await store.seenBefore(['evil.example', 'only.example'], 'a3');
      assert.deepEqual(others.get('evil.example'), { count: 2, first: '2026-11-02T10:00:00.000Z', last: '2026-11-05T10:00:00.000Z', last_verdict: 'malicious', last_analysis_id: 'a2' });
      assert.equal(others.has('only.example'), false, 'held only by the one left out');
      const notFirst = await store.seenBefore(['evil.example'], 'a1');
      assert.equal(notFirst.get('evil.example')?.first, '2026-11-05T10:00:00.000Z');
    });

    test('looks up more keys than one batch holds', async () => {
      const records = Array.from({ length: 1200 }, (_, i) => ({ value: `bulk${i}.example`, at: '2026-11-10T10:00:00.000Z', analysis_id: 'bulk', verdict: 'unknown' }));
      await store.recordSeen(records);
      const found = await store.seenBefore([...records.map((r) => r.value), 'bulk-none.example']);
      assert.equal(found.size, 1200);
    });

    test('lists the analyses that held a key, newest first, at most the limit', async () => {
      assert.deepEqual(await store.observableHistory('evil.example', 2), {
        total: 3,
        items: [
          { analysis_id: 'a3', at: '2026-11-07T10:00:00.000Z', verdict: 'suspicious' },
          { analysis_id: 'a2', at: '2026-11-05T10:00:00.000Z', verdict: 'malicious' },
        ],
      });
      assert.deepEqual(await store.observableHistory('never.example', 10), { total: 0, items: [] });
    });

    test('forgetting an analysis forgets what it held', async () => {
      const header = {
        id: 'c0ffee00-0000-4000-8000-000000000001', origin: 'server' as const, created_at: '2026-11-09T10:00:00.000Z', finished_at: null, duration_ms: null,
        engines: ['intel'], ignore_cache: false, observables: [{ value: 'Forget.Example', type: 'FQDN' as const }], complete: false, progress: { done: 0, total: 1 }, format: 2 as const,
      };
      await store.putHeader(header);
      await store.recordSeen([{ value: seenKey('Forget.Example', 'FQDN'), at: header.created_at, analysis_id: header.id, verdict: 'clean' }]);
      assert.equal((await store.seenBefore(['forget.example'])).get('forget.example')?.count, 1);
      await store.remove(header.id);
      assert.equal((await store.seenBefore(['forget.example'])).size, 0);
    });
  });
}

indexTests('SQLite', async () => {
  const storage = await openStorage(tempDir('oas-seen-sqlite-'));
  return { store: sqliteAnalysisStore(storage), close: () => storage.close() };
});

let indexRedis: RedisServer | undefined;
indexTests('Redis', async () => {
  indexRedis = await startRedis();
  return { store: new RedisAnalysisStore(indexRedis.client), close: async () => indexRedis?.close() };
});

test('the key: case-insensitive, a URL as it is', () => {
  assert.equal(seenKey('EVIL.Example', 'FQDN'), 'evil.example');
  assert.equal(seenKey('44D88612FEA8A8F36DE82E1278ABB02F', 'MD5'), '44d88612fea8a8f36de82e1278abb02f');
  assert.equal(seenKey('https://evil.example/Path?Q=1', 'URL'), 'https://evil.example/Path?Q=1');
  assert.equal(seenKey('HTTPS://evil.example/Path'), 'HTTPS://evil.example/Path', 'without a type, a value with a scheme is a URL');
  assert.equal(seenText({ count: 3, first: '2026-11-02T10:00:00.000Z', last: '2026-11-20T10:00:00.000Z', last_verdict: 'malicious', last_analysis_id: 'x' }), 'seen 3 times since 2026-11-02, last malicious');
  assert.equal(seenText({ count: 1, first: '2026-11-02T10:00:00.000Z', last: '2026-11-02T10:00:00.000Z', last_verdict: 'clean', last_analysis_id: 'x' }), 'seen once, on 2026-11-02, clean');
});

describe('oas analyze and oas history', () => {
  let config: { dir: string; file: string; dataDir: string };
  const analyze = (text: string, ...args: string[]) => runOas(config.dir, ['analyze', text, '-e', 'intel', '--ignore-cache', '--config', config.file, ...args]);
  const history = (...args: string[]) => runOas(config.dir, ['history', ...args, '--config', config.file]);

  before(() => {
    config = configWith();
    scores.set('seen-cli.com', 90);
  });

  test('the first analysis has seen null; the second says it was seen once, when, and how it was judged', async () => {
    const first = await analyze('seen-cli.com 203.0.113.77', '--json');
    assert.equal(first.code, 0, first.stderr);
    const firstResults = JSON.parse(first.stdout) as Result[];
    assert.equal(byObservable(firstResults, 'seen-cli.com').seen, null);
    assert.equal(byObservable(firstResults, '203.0.113.77').seen, null);

    scores.set('seen-cli.com', 10); // judged clean this time: the next one's "last" is this one
    const second = await analyze('hxxps://nothing-before[.]com/x seen-cli[.]com', '--json');
    assert.equal(second.code, 0, second.stderr);
    const results = JSON.parse(second.stdout) as Result[];
    assert.equal(byObservable(results, 'https://nothing-before.com/x').seen, null);
    const seen = byObservable(results, 'seen-cli.com').seen!;
    const listed = JSON.parse((await history('seen-cli.com', '--json')).stdout) as HistoryJson;
    assert.equal(listed.total, 2);
    const [newest, oldest] = listed.items;
    assert.deepEqual(seen, { count: 1, first: oldest!.created_at, last: oldest!.created_at, last_verdict: 'malicious', last_analysis_id: oldest!.analysis_id });
    assert.equal(newest!.verdict, 'clean');
    assert.ok(newest!.created_at > oldest!.created_at, 'newest first');
    assert.equal(newest!.link, `/results/${newest!.analysis_id}`);
  });

  test('the block of an observable says it, whatever its case; an observable never seen says nothing', async () => {
    const run = await analyze('SEEN-CLI.COM 198.51.100.200', '--no-color');
    assert.equal(run.code, 0, run.stderr);
    const day = new Date().toISOString().slice(0, 10);
    const block = run.stdout.split('\n\n').find((b) => b.includes('seen-cli.com'))!;
    assert.match(block, new RegExp(`^\\s+seen 2 times since ${day}, last clean$`, 'm'), block);
    const other = run.stdout.split('\n\n').find((b) => b.includes('198.51.100.200'))!;
    assert.doesNotMatch(other, /seen/, other);
  });

  test('oas history: newest first with verdicts and links; defanged; --limit; --json; one never seen', async () => {
    const run = await history('seen-cli[.]com');
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[0], 'seen-cli[.]com: held by 3 analyses, newest first');
    assert.equal(lines.length, 4);
    assert.match(lines[1]!, /^ {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}clean {6}\/results\/[0-9a-f-]{36}$/);
    assert.match(lines[3]!, /^ {2}\S+ {2}malicious {2}\/results\/[0-9a-f-]{36}$/);
    const limited = await history('seen-cli.com', '--limit', '1');
    assert.match(limited.stdout, /^seen-cli\.com: held by 3 analyses, the newest 1 listed, newest first\n {2}\S+ {2}clean {2}\/results\//);
    const none = await history('never-analysed.com');
    assert.equal(none.code, 0);
    assert.equal(none.stdout, 'never-analysed.com: no analysis of this store held it\n');
    const json = JSON.parse((await history('never-analysed.com', '--json')).stdout) as HistoryJson;
    assert.deepEqual(json, { value: 'never-analysed.com', total: 0, items: [] });
  });

  test('oas history refuses a bad --limit or no value in one line, exit 2', async () => {
    for (const args of [['seen-cli.com', '--limit', '0'], ['seen-cli.com', '--limit', 'lots'], ['  ']]) {
      const run = await history(...args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      noStack(run.stderr);
    }
  });

  test('an upgrade keeps what the stored analyses held: a database without the index fills it once from their rows', async () => {
    // As a database of the version before: the rows are there, the index is not, no schema recorded.
    const storage = await openStorage(config.dataDir);
    await storage.analysesTable.query('DROP TABLE observable_seen');
    await storage.analysesTable.query('PRAGMA user_version = 0');
    await storage.close();
    const run = await history('seen-cli.com', '--json');
    assert.equal(run.code, 0, run.stderr);
    const listed = JSON.parse(run.stdout) as HistoryJson;
    assert.equal(listed.total, 3);
    assert.deepEqual(listed.items.map((i) => i.verdict), ['clean', 'clean', 'malicious']);
    const next = await analyze('seen-cli.com', '--json');
    assert.equal((JSON.parse(next.stdout) as Result[])[0]!.seen?.count, 3);
  });

  test('oas mcp: the analyze tool says it, in its text and its structured answer', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--config', config.file], cwd: config.dir, env: { ...tmpEnv(), HOME: config.dir }, stderr: 'pipe' });
    const client = new Client({ name: 'oas-tests', version: '1.0.0' });
    await client.connect(transport);
    const child = (transport as unknown as { _process?: Parameters<typeof killAtExit>[0] })._process;
    if (child) killAtExit(child);
    try {
      await client.listTools(); // so that the client checks the structured answer against the tool's schema
      const result = (await client.callTool({ name: 'analyze', arguments: { text: 'seen-cli.com mcp-never.com', engines: ['intel'] } })) as CallToolResult;
      assert.notEqual(result.isError, true);
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      assert.match(text, /^ {2}seen 4 times since \d{4}-\d\d-\d\d, last clean \(last analysis "[0-9a-f-]{36}"\)$/m, text);
      const observables = (result.structuredContent as { observables: { observable: string; seen?: SeenBefore }[] }).observables;
      assert.equal(observables.find((o) => o.observable === 'seen-cli.com')?.seen?.count, 4);
      assert.equal(observables.find((o) => o.observable === 'mcp-never.com')?.seen, undefined, 'never seen: no seen');
    } finally {
      await client.close();
    }
  });
});

describe('oas serve: the API and the pages over HTTP', () => {
  let server: ServeProcess;
  before(async () => {
    const config = configWith();
    scores.set('seen-api.com', 85);
    server = await spawnServe(config.file, { cwd: config.dir });
  });
  after(async () => server?.stop());

  test('GET /api/results carries seen; /ui/analyses/<id> too; GET /ui/observables/<value> lists the analyses', async () => {
    const url = 'https://seen-api.com/Path?q=1';
    const first = await startAnalysis(server.url, `seen-api.com ${url}`, ['intel']);
    const firstResults = await completedResults<Result>(server.url, first);
    assert.equal(byObservable(firstResults, 'seen-api.com').seen, null);
    const second = await startAnalysis(server.url, `seen-api.com ${url}`, ['intel']);
    const results = await completedResults<Result>(server.url, second);
    const seen = byObservable(results, 'seen-api.com').seen!;
    assert.equal(seen.count, 1);
    assert.equal(seen.last_verdict, 'malicious');
    assert.equal(seen.last_analysis_id, first);
    assert.equal(byObservable(results, url).seen?.last_analysis_id, first);

    const view = (await (await fetch(`${server.url}/ui/analyses/${second}`)).json()) as { observables: { observable: string; seen: SeenBefore | null }[] };
    assert.deepEqual(view.observables.find((o) => o.observable === 'seen-api.com')?.seen, seen);

    const listed = await fetch(`${server.url}/ui/observables/${encodeURIComponent('SEEN-API.com')}`);
    assert.equal(listed.status, 200);
    const body = (await listed.json()) as HistoryJson;
    assert.equal(body.value, 'SEEN-API.com');
    assert.equal(body.total, 2);
    assert.deepEqual(body.items.map((i) => i.analysis_id), [second, first]);
    assert.deepEqual(body.items.map((i) => i.link), [`/results/${second}`, `/results/${first}`]);
    assert.deepEqual(body.items.map((i) => i.verdict), ['malicious', 'malicious']);
    // A URL, slashes and all, URL-encoded in the path; its path's case counts.
    const byUrl = (await (await fetch(`${server.url}/ui/observables/${encodeURIComponent(url)}`)).json()) as HistoryJson;
    assert.equal(byUrl.total, 2);
    const otherCase = (await (await fetch(`${server.url}/ui/observables/${encodeURIComponent(url.toLowerCase())}`)).json()) as HistoryJson;
    assert.equal(otherCase.total, 0);
    const limited = (await (await fetch(`${server.url}/ui/observables/seen-api.com?limit=1`)).json()) as HistoryJson;
    assert.deepEqual([limited.total, limited.items.length], [2, 1]);
  });

  test('bad requests are one line, 400; the observable\'s page carries the value as data, escaped', async () => {
    for (const path of ['/ui/observables/seen-api.com?limit=0', '/ui/observables/seen-api.com?limit=x', `/ui/observables/${'a'.repeat(2001)}`]) {
      const res = await fetch(`${server.url}${path}`);
      assert.equal(res.status, 400, path);
      const { error } = (await res.json()) as { error: string };
      assert.ok(error && !error.includes('\n'), error);
    }
    const hostile = '"><script>alert(1)</script>';
    const page = await fetch(`${server.url}/observables/${encodeURIComponent(hostile)}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.ok(!html.includes('<script>alert'), 'the value is escaped');
    assert.match(html, /data-observable="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
    assert.match(html, /<script type="module" src="\/assets\/observable.js"><\/script>/);
    const asset = await fetch(`${server.url}/assets/observable.js`);
    assert.equal(asset.status, 200);
  });
});

test('with api_token: the observable\'s page loads without it (it signs in from there); its JSON needs it', async () => {
  const token = 'seen-test-token-Qw8Zr3Lp6Tn1';
  const config = configWith({ api_token: token });
  const server = await spawnServe(config.file, { cwd: config.dir });
  try {
    const page = await fetch(`${server.url}/observables/seen-api.com`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /data-observable="seen-api\.com"/);
    assert.equal((await fetch(`${server.url}/ui/observables/seen-api.com`)).status, 401);
    const json = await fetch(`${server.url}/ui/observables/seen-api.com`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(json.status, 200);
    assert.deepEqual(await json.json(), { value: 'seen-api.com', total: 0, items: [] });
  } finally {
    await server.stop();
  }
});

describe('oas serve --redis: a worker carries seen, oas history reads Redis', { skip: redisSkip }, () => {
  let redis: RedisServer;
  let server: ServeProcess;
  let config: { dir: string; file: string };
  before(async () => {
    redis = await startRedis();
    config = configWith();
    scores.set('seen-redis.com', 95);
    server = await spawnServe(config.file, { cwd: config.dir, args: ['--redis', redis.url] });
  });
  after(async () => {
    await server?.stop();
    await redis?.close();
  });

  test('two analyses: the second carries the first; oas history --redis lists both, newest first', async () => {
    const first = await startAnalysis(server.url, 'seen-redis.com 192.0.2.10', ['intel']);
    const firstResults = await completedResults<Result>(server.url, first);
    assert.equal(byObservable(firstResults, 'seen-redis.com').seen, null);
    scores.set('seen-redis.com', 5);
    const started = await fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'SEEN-REDIS.COM', engines: ['intel'], ignore_cache: true }) });
    const second = ((await started.json()) as { analysis_id: string }).analysis_id;
    const [result] = await completedResults<Result>(server.url, second);
    assert.equal(result!.seen?.count, 1);
    assert.equal(result!.seen?.last_verdict, 'malicious');
    assert.equal(result!.seen?.last_analysis_id, first);

    const run = await runOas(config.dir, ['history', 'seen-redis[.]com', '--json', '--redis', redis.url, '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const listed = JSON.parse(run.stdout) as HistoryJson;
    assert.equal(listed.total, 2);
    assert.deepEqual(listed.items.map((i) => [i.analysis_id, i.verdict]), [[second, 'clean'], [first, 'malicious']]);
    const page = (await (await fetch(`${server.url}/ui/observables/seen-redis.com`)).json()) as HistoryJson;
    assert.deepEqual(page.items.map((i) => i.analysis_id), [second, first]);
  });
});
