/**
 * Watchlists (issue 36) through their surfaces, as people use them: `oas watch` as a subprocess
 * (add with text or --file, list, show, run, remove; errors one line, exit 2) and `oas serve` as a
 * subprocess on the same data_dir, its API under a configured prefix (`/oas-api/`, not `/api/`)
 * with people and roles: viewers read, analysts add, run and remove (403 otherwise, 401 without a
 * token), JSON errors; the audit trail's lines for add, remove and run, from both. Engines on
 * loopback fakes; no timing assertion; every process stopped.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Watchlist, WatchlistRun } from '../src/automation/watchlist.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { phishTank } from './helpers/watchlists.js';

const API_TOKEN = 'watchlists-test-token-Hx4Lq9Vb2Nc7';
const PREFIX = '/oas-api/';
const URL_SEEN = 'hxxps://login.evil-bank[.]example/verify';
const URL_VALUE = 'https://login.evil-bank.example/verify';

describe('oas watch and the watchlists API', { timeout: 120_000 }, () => {
  let upstreams: Upstreams;
  let dir: string;
  let auditFile: string;
  let server: ServeProcess | undefined;
  const tokens = new Map<string, string>();

  before(async () => {
    upstreams = await startUpstreams();
    phishTank(upstreams.intel, false);
    const config = configFor(upstreams, { api_prefix: PREFIX, api_token: API_TOKEN });
    dir = config.dir;
    auditFile = join(dir, 'audit.jsonl');
    // The audit trail, in the same configuration file.
    const written = JSON.parse(readFileSync(config.file, 'utf8')) as Record<string, unknown>;
    writeFileSync(config.file, JSON.stringify({ ...written, audit_log: auditFile }));
  });
  after(async () => {
    await server?.stop();
    await upstreams?.close();
  });

  /** `oas watch ARGS` in the test's folder (its oas.config.json). */
  async function watch(args: string[], code = 0): Promise<Run> {
    const run = await runOas(dir, ['watch', ...args]);
    assert.equal(run.code, code, `oas watch ${args.join(' ')}: ${run.stderr}`);
    noStack(run.stderr);
    return run;
  }
  const oneLine = (run: Run, message: RegExp) => {
    assert.match(run.stderr, message);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, /^oas: /);
  };
  const auditLines = () => readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

  test('oas watch: bad input is one line, exit 2, and nothing is added', async () => {
    oneLine(await watch(['add', 'fast', '--every', '1m', 'example.com'], 2), /"every" must be at least 5m/);
    oneLine(await watch(['add', 'no-every', 'example.com'], 2), /--every is required/);
    oneLine(await watch(['add', '../x', '--every', '6h', 'example.com'], 2), /invalid watchlist name/);
    oneLine(await watch(['add', 'words', '--every', '6h', 'nothing to see'], 2), /no observable found/);
    oneLine(await watch(['add', 'engine', '--every', '6h', '-e', 'no_such_engine', 'example.com'], 2), /no_such_engine/);
    oneLine(await watch(['add', 'empty', '--every', '6h'], 2), /give the observables to watch/);
    oneLine(await watch(['show', 'nope'], 2), /no watchlist named nope/);
    oneLine(await watch(['run', 'nope'], 2), /no watchlist named nope/);
    oneLine(await watch(['remove', 'nope'], 2), /no watchlist named nope/);
    assert.match((await watch(['list'])).stdout, /no watchlist yet/);
    assert.deepEqual(JSON.parse((await watch(['list', '--json'])).stdout), []);
  });

  test('oas watch add runs the baseline here; run compares with it and prints what changed', async () => {
    const added = await watch(['add', 'cli-watch', '--every', '6h', '-e', 'provider_17', '--owner', 'alice', `Reported: ${URL_SEEN}`]);
    assert.match(added.stderr, /watchlist cli-watch added \(every 6h, TLP:AMBER, PAP:GREEN\)/);
    assert.match(added.stderr, /baseline done \(analysis [0-9a-f-]{36}\)/);
    const list = await watch(['list']);
    assert.match(list.stdout, /^Name\s+Every\s+Last run\s+Last result\s+Owner\s+Marking\s+Engines$/m);
    assert.match(list.stdout, /^cli-watch\s+6h\s+\S+\s+baseline\s+alice\s+TLP:AMBER PAP:GREEN\s+provider_17$/m);

    phishTank(upstreams.intel, true);
    const run = await watch(['run', 'cli-watch']);
    assert.match(run.stderr, /running watchlist cli-watch \(analysis [0-9a-f-]{36}\)/);
    assert.match(run.stdout, /\bmanual\b.*\b\d+ change\(s\)/);
    assert.ok(run.stdout.includes(`  ${URL_VALUE}  verdict: clean -> malicious`), run.stdout);
    const asJson = JSON.parse((await watch(['run', 'cli-watch', '--json'])).stdout) as WatchlistRun;
    assert.equal(asJson.status, 'done');
    assert.deepEqual(asJson.changes, [], 'nothing changed since');

    const show = await watch(['show', 'cli-watch']);
    assert.match(show.stdout, /^Watchlist cli-watch: every 6h, TLP:AMBER PAP:GREEN, owner alice/m);
    assert.match(show.stdout, /^Runs \(newest first, 3\):$/m);
    assert.match(show.stdout, /added\s+analysis \S+\s+baseline/);
    const shown = JSON.parse((await watch(['show', 'cli-watch', '--json'])).stdout) as Watchlist;
    assert.deepEqual(shown.runs.map((r) => r.trigger), ['manual', 'manual', 'added']);
    assert.deepEqual(shown.runs[1]!.changes.find((c) => c.kind === 'verdict'), { observable: URL_VALUE, type: 'URL', kind: 'verdict', before: 'clean', after: 'malicious' });
    assert.equal(shown.last_run, shown.runs[0]!.at);
  });

  test('oas watch add --file keeps the file\'s observables as its text, one per line', async () => {
    writeFileSync(join(dir, 'iocs.txt'), 'Seen today:\n8.8.8.8, login-verify-bank[.]com\nand 8.8.8.8 again\n');
    await watch(['add', 'from-file', '--every', '1d', '-e', 'provider_17', '--file', 'iocs.txt', '--json']);
    const shown = JSON.parse((await watch(['show', 'from-file', '--json'])).stdout) as Watchlist;
    assert.equal(shown.text, '8.8.8.8\nlogin-verify-bank.com');
    assert.equal(shown.owner, 'cli');
    assert.equal(shown.runs[0]!.baseline, true);
  });

  describe('the API, with roles, under the configured prefix', () => {
    const base = `${PREFIX}watchlists`;
    const call = async (method: string, path: string, who: string | undefined, body?: unknown) => {
      const headers: Record<string, string> = who ? { authorization: `Bearer ${tokens.get(who)}` } : {};
      if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
      const res = await fetch(`${server!.url}${path}`, { method, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, json: JSON.parse(text) as Record<string, unknown> & { error?: string } };
    };

    before(async () => {
      for (const [name, role] of [['vera', 'viewer'], ['alice', 'analyst']] as const) {
        const run = await runOas(dir, ['users', 'add', name, '--role', role]);
        assert.equal(run.code, 0, run.stderr);
        tokens.set(name, run.stdout.trim());
      }
      server = await spawnServe(join(dir, 'oas.config.json'), { cwd: dir });
    });

    test('viewers read; without a token 401; /api/ is not where they are', async () => {
      assert.equal((await call('GET', base, undefined)).status, 401);
      const listed = await call('GET', base, 'vera');
      assert.equal(listed.status, 200);
      assert.deepEqual((listed.json as unknown as Watchlist[]).map((w) => w.name), ['cli-watch', 'from-file']);
      const one = await call('GET', `${base}/cli-watch`, 'vera');
      assert.equal(one.status, 200);
      assert.equal(one.json.name, 'cli-watch');
      assert.equal((one.json.runs as WatchlistRun[]).length, 3);
      const unknown = await call('GET', `${base}/nope`, 'vera');
      assert.deepEqual([unknown.status, unknown.json], [404, { error: `watchlist not found: nope (GET ${base} lists them)` }]);
      assert.equal((await call('GET', '/api/watchlists', 'vera')).status, 404);
    });

    test('a viewer may not add, run or remove: 403 saying why', async () => {
      for (const [method, path, body] of [['POST', base, { name: 'v', text: 'example.com', every: '6h' }], ['POST', `${base}/cli-watch/run`, undefined], ['DELETE', `${base}/cli-watch`, undefined]] as const) {
        const res = await call(method, path, 'vera', body);
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.equal(res.json.error, 'forbidden: vera is a viewer; adding, removing or running watchlists needs the analyst or admin role (oas users)');
      }
    });

    test('an analyst adds (its baseline runs), runs and removes; bad input is a JSON error', async () => {
      const added = await call('POST', base, 'alice', { name: 'api-watch', text: URL_SEEN, engines: ['provider_17'], every: '12h', tlp: 'green' });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      assert.equal(added.headers.get('location'), `${base}/api-watch`);
      assert.equal(added.json.owner, 'alice');
      assert.equal(added.json.tlp, 'GREEN');
      assert.equal(added.json.every, '12h');
      const baseline = (added.json.runs as WatchlistRun[])[0]!;
      assert.equal(baseline.trigger, 'added');
      assert.match(String(baseline.analysis_id), /^[0-9a-f-]{36}$/);

      const refusals: [unknown, number, RegExp][] = [
        [{ name: 'api-watch', text: 'example.com', every: '6h' }, 409, /a watchlist named api-watch exists already/],
        [{ name: 'fast', text: 'example.com', every: '4m' }, 400, /"every" must be at least 5m/],
        [{ name: 'x', text: 'example.com', every: '6h', owner: 'mallory' }, 400, /unknown field "owner"/],
        [{ name: 'x', text: 'example.com', every: '6h', engines: ['nope_engine'] }, 400, /nope_engine/],
        ['{"name": ', 415, /Content-Type must be application\/json/],
      ];
      for (const [body, status, message] of refusals) {
        const res = await call('POST', base, 'alice', body);
        assert.equal(res.status, status, JSON.stringify(body));
        assert.match(res.json.error ?? '', message);
      }

      const ran = await call('POST', `${base}/api-watch/run`, 'alice');
      assert.equal(ran.status, 200, JSON.stringify(ran.json));
      assert.equal(ran.json.watchlist, 'api-watch');
      assert.equal(ran.json.link, `/results/${ran.json.analysis_id}`);
      let watchlist: Watchlist | undefined;
      for (let i = 0; i < 300; i++) {
        watchlist = (await call('GET', `${base}/api-watch`, 'vera')).json as unknown as Watchlist;
        if (watchlist.runs.length === 2 && watchlist.runs.every((r) => r.status === 'done')) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(watchlist!.runs[0]!.analysis_id, ran.json.analysis_id);
      assert.equal(watchlist!.runs[0]!.trigger, 'manual');
      assert.equal(watchlist!.runs[1]!.baseline, true);
      const results = await fetch(`${server!.url}${PREFIX}results/${ran.json.analysis_id}`, { headers: { authorization: `Bearer ${tokens.get('vera')}` } });
      assert.equal(results.status, 200, 'an ordinary analysis');

      assert.equal((await call('POST', `${base}/nope/run`, 'alice')).status, 404);
      const removed = await call('DELETE', `${base}/api-watch`, 'alice');
      assert.deepEqual([removed.status, removed.json], [200, { removed: 'api-watch' }]);
      assert.equal((await call('DELETE', `${base}/api-watch`, 'alice')).status, 404);
    });

    test('the audit trail: add, run and remove from the API and from oas watch', async () => {
      await watch(['remove', 'from-file']);
      assert.deepEqual(JSON.parse((await watch(['list', '--json'])).stdout).map((w: Watchlist) => w.name), ['cli-watch']);
      const lines = auditLines().filter((line) => String(line.action).startsWith('watchlist_'));
      const seen = lines.map((line) => [line.action, line.outcome, line.user, line.client === 'cli' ? 'cli' : 'http', line.watchlist ?? null]);
      for (const expected of [
        ['watchlist_added', 'failure', null, 'cli', 'fast'],
        ['watchlist_added', 'success', null, 'cli', 'cli-watch'],
        ['watchlist_run', 'success', null, 'cli', 'cli-watch'],
        ['watchlist_run', 'failure', null, 'cli', 'nope'],
        ['watchlist_removed', 'failure', null, 'cli', 'nope'],
        ['watchlist_added', 'success', 'alice', 'http', 'api-watch'],
        ['watchlist_added', 'failure', 'alice', 'http', 'api-watch'],
        ['watchlist_run', 'success', 'alice', 'http', 'api-watch'],
        ['watchlist_run', 'failure', 'alice', 'http', 'nope'],
        ['watchlist_removed', 'success', 'alice', 'http', 'api-watch'],
        ['watchlist_removed', 'failure', 'alice', 'http', 'api-watch'],
        ['watchlist_removed', 'success', null, 'cli', 'from-file'],
      ]) assert.ok(seen.some((line) => JSON.stringify(line) === JSON.stringify(expected)), `${JSON.stringify(expected)} in ${JSON.stringify(seen)}`);
      const added = lines.find((line) => line.action === 'watchlist_added' && line.user === 'alice' && line.outcome === 'success')!;
      assert.equal(added.every, '12h');
      assert.deepEqual(added.engines, ['provider_17']);
      assert.match(String(added.analysis_id), /^[0-9a-f-]{36}$/);
      assert.ok(!JSON.stringify(lines).includes('evil-bank'), 'no observable in the audit trail');
    });
  });

  test('oas watch remove', async () => {
    const removed = await watch(['remove', 'cli-watch']);
    assert.match(removed.stderr, /watchlist cli-watch removed/);
    assert.match((await watch(['list'])).stdout, /no watchlist yet/);
  });
});
