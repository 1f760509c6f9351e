/**
 * Issue 38, the setting `allowlist` in an analysis (`oas analyze` as a subprocess, an engine of
 * the test recording what it is asked): an allowlisted range, domain pattern and hash reach no
 * engine, each engine says `allowlisted: <reason>`, the result says which entry covered it and
 * its verdict is clean "allowlisted by config: <reason>"; an expired entry covers nothing;
 * `--ignore-allowlist` asks the engines as usual; an entry naming nothing is a configuration
 * error (exit 2, one line naming it).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { noStack, runOas } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const EICAR = '44d88612fea8a8f36de82e1278abb02f';
const TEXT = `45.33.32.156 www.cyberbro.net hxxps://cyberbro[.]net/x ${EICAR} 8.8.8.8 1.1.1.1`;

let upstreams: Upstreams;
let intel: FakeHttpServer;
let config: { file: string };
const cwd = tempDir('oas-allowlist-');

interface Row { observable: string; verdict: string; reasons: string[]; intel: unknown; withheld?: Record<string, string>; allowlisted?: Record<string, unknown> }

before(async () => {
  upstreams = await startUpstreams();
  intel = await startFakeHttp({ 'GET /intel/*': () => ({ json: { score: 10 } }) });
  config = configFor(upstreams, {
    custom_engines: {
      intel: { types: ['IPv4', 'FQDN', 'URL', 'MD5'], request: { url: `${intel.url}/intel/{value}` }, fields: { score: '/score' }, summary: 'score {score}' },
    },
    allowlist: [
      { value: '45.33.0.0/16', reason: 'our scanners' },
      { value: '*.cyberbro.net', reason: 'a vendor we use' },
      { value: EICAR, reason: 'the EICAR test file' },
      { value: '1.1.1.1', reason: 'no longer', expires: '2020-01-01T00:00:00Z' },
    ],
  });
});

after(async () => {
  await Promise.all([upstreams?.close(), intel?.close()]);
});

const asked = () => intel.hits('GET /intel/').map((hit) => decodeURIComponent(hit.path.slice('/intel/'.length))).sort();

describe('the setting allowlist', () => {
  test('what it covers reaches no engine, says why, and is clean by who put it there', async () => {
    const run = await runOas(cwd, ['analyze', TEXT, '-e', 'intel', '--json', '--ignore-cache', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    noStack(run.stderr);
    assert.deepEqual(asked(), ['1.1.1.1', '8.8.8.8'], 'only what no live entry covers was sent');
    const rows = new Map((JSON.parse(run.stdout) as Row[]).map((row) => [row.observable, row]));
    const cases: [string, string, string][] = [
      ['45.33.32.156', '45.33.0.0/16', 'our scanners'],
      ['www.cyberbro.net', '*.cyberbro.net', 'a vendor we use'],
      ['https://cyberbro.net/x', '*.cyberbro.net', 'a vendor we use'],
      [EICAR, EICAR, 'the EICAR test file'],
    ];
    for (const [observable, value, reason] of cases) {
      const row = rows.get(observable)!;
      assert.ok(row, observable);
      assert.equal(row.intel, null);
      assert.deepEqual(row.withheld, { intel: `allowlisted: ${reason}` });
      assert.deepEqual(row.allowlisted, { value, reason, by: 'config' });
      assert.equal(row.verdict, 'clean');
      assert.deepEqual(row.reasons, [`allowlisted by config: ${reason}`]);
    }
    assert.equal(rows.get('1.1.1.1')!.allowlisted, undefined, 'an expired entry covers nothing');
    assert.deepEqual(rows.get('1.1.1.1')!.intel, { score: 10 });
  });

  test('--ignore-allowlist: every observable is asked about as usual', async () => {
    intel.reset();
    const run = await runOas(cwd, ['analyze', TEXT, '-e', 'intel', '--json', '--ignore-cache', '--ignore-allowlist', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(asked().length, 6);
    assert.ok((JSON.parse(run.stdout) as Row[]).every((row) => row.allowlisted === undefined && row.withheld === undefined));
  });

  test('an entry that names nothing an allowlist holds stops oas before any work: exit 2, one line naming it', async () => {
    const bad = configFor(upstreams, { allowlist: [{ value: '8.8.8.8', reason: 'fine' }, { value: '*.com', reason: 'far too wide' }] });
    const run = await runOas(cwd, ['analyze', '8.8.8.8', '-e', 'ipquery', '--config', bad.file]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^oas: invalid "allowlist\.1\.value": "\*\.com" is no domain pattern/);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    const shape = configFor(upstreams, { allowlist: [{ value: '8.8.8.8' }] });
    const refused = await runOas(cwd, ['analyze', '8.8.8.8', '-e', 'ipquery', '--config', shape.file]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /allowlist\.0/);
  });
});
