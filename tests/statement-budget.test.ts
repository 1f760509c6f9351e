/**
 * Statement budgets (issue 33): the SQL statements a command or a request runs, recorded from the
 * SQLite binding itself (tests/helpers/statement-log.ts), compared with a budget written here.
 * Nothing is timed. The module budgets (module-budget.test.ts) do not see a feature that adds a
 * round trip to SQLite on every cached lookup or every poll; these do. A change that needs more
 * says so by raising the budget, in the same commit.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runOas } from './helpers/cli.js';
import { spawnServe } from './helpers/serve.js';
import { statementRecorder } from './helpers/statement-log.js';
import { tempDir } from './helpers/temp.js';
import { oneEngineConfig, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const dir = tempDir('oas-statements-');
const recorder = statementRecorder(dir);
const WRITE = /^(INSERT|UPDATE|DELETE|REPLACE)\b/i;
/** The server's check whether any user exists (src/server/auth.ts): at most once a second. */
const USERS_CHECK = /^SELECT COUNT\(\*\) AS n FROM users$/;
const listed = (statements: readonly string[]) => statements.map((s) => `  ${s.slice(0, 160)}`).join('\n');

let upstreams: Upstreams;
let config: string;
before(async () => {
  upstreams = await startUpstreams();
  config = oneEngineConfig(upstreams);
});
after(() => upstreams.close());

let logs = 0;
const nextLog = () => join(dir, `statements-${++logs}.log`);

async function recorded(home: string, args: string[]): Promise<{ code: number | null; stderr: string; statements: string[] }> {
  const log = nextLog();
  const run = await runOas(home, args.map((a) => (a === 'CONFIG' ? config : a)), { nodeArgs: recorder.nodeArgs, env: { ...recorder.env(log), XDG_CACHE_HOME: join(home, 'cache') } });
  return { code: run.code, stderr: run.stderr, statements: recorder.read(log) };
}

describe('statement budgets: what SQLite is asked', () => {
  test('oas --version and oas engines --json ask nothing', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    for (const args of [['--version'], ['engines', '--json', '--config', 'CONFIG']]) {
      const run = await recorded(home, args);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(run.statements, [], `oas ${args.join(' ')}`);
    }
  });

  test('a cached one-observable oas analyze: at most 17 statements, 4 of them writes, one cache read', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const args = ['analyze', '1.1.1.1', '-e', 'ipquery', '--json', '--config', 'CONFIG'];
    const first = await recorded(home, args);
    assert.equal(first.code, 0, first.stderr);
    assert.ok(first.statements.length > 0, 'the recorder sees the statements');
    const cached = await recorded(home, args);
    assert.equal(cached.code, 0, cached.stderr);
    // Opening the file (Keyv's tables, WAL, the schema version); the analysis's header; the
    // observable seen before, the allowlist and the marks; the engine cache; the row, its seen
    // record and the completed header; the row read back for the output.
    assert.ok(cached.statements.length <= 17, `${cached.statements.length} statements, over the budget of 17:\n${listed(cached.statements)}`);
    const writes = cached.statements.filter((s) => WRITE.test(s));
    assert.ok(writes.length <= 4, `${writes.length} writes, over the budget of 4 (header, row, seen record, completed header):\n${listed(writes)}`);
    const cacheReads = cached.statements.filter((s) => /\bFROM results\b/.test(s));
    assert.equal(cacheReads.length, 1, `the engine cache is read in one statement:\n${listed(cacheReads)}`);
  });

  test('oas serve: a poll of a completed analysis asks nothing; reading its results, 2 statements', async () => {
    const log = nextLog();
    const server = await spawnServe(config, { nodeArgs: recorder.nodeArgs, env: recorder.env(log) });
    try {
      const posted = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: '1.1.1.1', engines: ['ipquery'] }),
      });
      assert.equal(posted.status, 200, await posted.clone().text());
      const { analysis_id: id } = (await posted.json()) as { analysis_id: string };
      const poll = async () => ((await (await fetch(`${server.url}/api/is_analysis_complete/${id}`)).json()) as { complete: boolean }).complete;
      for (let i = 0; i < 500 && !(await poll()); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await poll(), true, 'the analysis completes');

      const before = recorder.read(log).length;
      const started = performance.now();
      for (let i = 0; i < 20; i++) assert.equal(await poll(), true);
      const seconds = (performance.now() - started) / 1000;
      const duringPolls = recorder.read(log).slice(before);
      assert.deepEqual(duringPolls.filter((s) => !USERS_CHECK.test(s)), [], '20 polls of a completed analysis');
      assert.ok(duringPolls.length <= 1 + Math.ceil(seconds), `the users check at most once a second: ${duringPolls.length} in ${seconds.toFixed(1)} s`);

      const beforeResults = recorder.read(log).length;
      const results = await fetch(`${server.url}/api/results/${id}`);
      assert.equal(results.status, 200);
      assert.equal(((await results.json()) as unknown[]).length, 1);
      const reading = recorder.read(log).slice(beforeResults).filter((s) => !USERS_CHECK.test(s));
      assert.ok(reading.length <= 2, `${reading.length} statements for one results read, over the budget of 2 (header, a page of rows):\n${listed(reading)}`);
      assert.deepEqual(reading.filter((s) => WRITE.test(s)), [], 'a results read writes nothing');
    } finally {
      await server.stop();
    }
  });
});
