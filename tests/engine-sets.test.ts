/**
 * Engine sets (setting `engine_sets`, issue 23) end to end, through the `oas` binary and `oas
 * serve` on loopback: `oas engines --sets` (table and JSON), `oas analyze --set` (alone, several,
 * with `--engines`, `@name` spelled out, an unknown set), `"@name"` in the API's engines (results
 * keyed by the members as the set writes them; an unknown set a 400 naming it), the sets in
 * `/ui/engines`, and a set naming an engine the catalog lacks refused by `oas engines`, `oas
 * analyze` and `oas serve` (exit 2, one line naming the set and the engine).
 *
 * The sets mix built-in engines (pointed at the loopback fakes of tests/helpers/upstreams.ts; one
 * of them, safe_browsing, keyed, with its fake) and the custom engines of
 * tests/fakes/internal-intel.ts, whose key the processes get in an environment variable.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as safeBrowsing from './fakes/google_safe_browsing.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { INTEL_KEY, intelDefinitions, startInternalIntel, type InternalIntelFake } from './fakes/internal-intel.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { BIN, completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { killAtExit, tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import type { CatalogView } from '../src/view/types.js';

const KEY_ENV = 'OAS_TEST_SETS_INTEL_KEY';
const ENV = { [KEY_ENV]: INTEL_KEY };
const FLAGGED_IP = '45.155.205.233';
const PHISHING_DOMAIN = 'evil-login.com';
const URL_OBSERVABLE = `https://${PHISHING_DOMAIN}/signin`;
const TEXT = `${FLAGGED_IP} ${URL_OBSERVABLE}`;

/** As the configuration writes them: ids, aliases (urlscan is provider_23), built-in and custom. */
const SETS = {
  phishing: ['provider_17', 'urlscan', 'safe_browsing', 'intel'],
  triage: ['reverse_dns', 'intel', 'intel_domain'],
};
/** The engine ids each set stands for. */
const SET_IDS = {
  phishing: ['provider_17', 'provider_23', 'safe_browsing', 'intel'],
  triage: ['reverse_dns', 'intel', 'intel_domain'],
};
/** The fields of a result that are no engine's. */
const META = new Set(['observable', 'type', 'reversed_success', 'errors', 'seen', 'verdict', 'reasons', 'tlp', 'pap']);

interface Result {
  observable: string;
  type: string;
  errors?: Record<string, string>;
  [key: string]: unknown;
}

let upstreams: Upstreams;
let intel: InternalIntelFake;
let google: FakeHttpServer;
/** The configuration with the sets. */
let configFile: string;
let cwd: string;

/** A configuration file with these top-level settings (on top of the loopback fakes), its path. */
function writeConfig(extra: Record<string, unknown>): string {
  return configFor(upstreams, {
    custom_engines: intelDefinitions(intel.url, KEY_ENV),
    engines: { safe_browsing: { ...safeBrowsing.fakeSettings(google.url), api_key: 'oas-test-safe-browsing-key' } },
    ...extra,
  }).file;
}

function oas(args: string[]): Promise<Run> {
  return runOas(cwd, args, { env: ENV });
}

/** The engine keys of a result (its fields that are no meta field). */
function engineKeys(result: Result): string[] {
  return Object.keys(result).filter((k) => !META.has(k)).sort();
}

function parseResults(run: Run): Result[] {
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Result[];
}

/** Exactly one line on stderr, nothing on stdout, no stack trace; returns the line. */
function oneErrorLine(run: Run, code = 2): string {
  assert.equal(run.code, code, `exit ${code}: ${run.stdout}${run.stderr}`);
  assert.equal(run.stdout, '');
  noStack(run.stderr);
  const lines = run.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line: ${run.stderr}`);
  return lines[0]!;
}

before(async () => {
  upstreams = await startUpstreams();
  intel = await startInternalIntel({
    records: {
      [FLAGGED_IP]: { score: 91, category: 'botnet', tags: ['c2'] },
      [PHISHING_DOMAIN]: { score: 70, category: 'phishing', tags: ['login'] },
    },
  });
  google = await startFakeHttp(safeBrowsing.fakeRoutes());
  cwd = tempDir('oas-sets-cwd-');
  configFile = writeConfig({ engine_sets: SETS });
});

after(async () => {
  await google?.close();
  await intel?.close();
  await upstreams?.close();
});

describe('oas engines --sets', () => {
  test('a table: each set as @name, its engines as written (an alias with its id), and how to use them', async () => {
    const run = await oas(['engines', '--sets', '--config', configFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^Set\s+Engines$/);
    assert.match(run.stdout, /^@phishing\s+provider_17, urlscan \(provider_23\), safe_browsing, intel$/m);
    assert.match(run.stdout, /^@triage\s+reverse_dns, intel, intel_domain$/m);
    assert.match(lines.at(-1)!, /^2 engine set\(s\): oas analyze --set <name>, or "@<name>" in the API's engines$/);
  });

  test('--json: name, the engines as written and their ids, in the configuration\'s order', async () => {
    const run = await oas(['engines', '--sets', '--json', '--config', configFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [
      { name: 'phishing', engines: SETS.phishing, ids: SET_IDS.phishing },
      { name: 'triage', engines: SETS.triage, ids: SET_IDS.triage },
    ]);
  });

  test('without engine_sets: says none is configured and how to write one; --json an empty list', async () => {
    const file = writeConfig({});
    const table = await oas(['engines', '--sets', '--config', file]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^no engine set is configured \(setting engine_sets: /);
    const json = await oas(['engines', '--sets', '--json', '--config', file]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), []);
  });

  test('oas engines (without --sets) still lists the engines, the custom ones included', async () => {
    const run = await oas(['engines', '--json', '--config', configFile]);
    assert.equal(run.code, 0, run.stderr);
    const engines = JSON.parse(run.stdout) as { id: string; custom: boolean; configured: boolean }[];
    for (const id of ['intel', 'intel_domain', 'intel_search']) {
      const engine = engines.find((e) => e.id === id);
      assert.ok(engine?.custom && engine.configured, id);
    }
  });
});

describe('oas analyze --set', () => {
  test('--set phishing: results keyed by the set\'s members as written, each engine run', async () => {
    intel.server.reset();
    const results = parseResults(await oas(['analyze', TEXT, '--set', 'phishing', '--json', '-q', '--config', configFile]));
    assert.deepEqual(results.map((r) => r.observable).sort(), [FLAGGED_IP, URL_OBSERVABLE].sort());
    for (const result of results) {
      assert.deepEqual(engineKeys(result), [...SETS.phishing].sort(), result.observable);
      assert.deepEqual(result.errors ?? {}, {}, `${result.observable}: no engine failed`);
    }
    const ip = results.find((r) => r.observable === FLAGGED_IP)!;
    assert.deepEqual((ip.intel as { score: number }).score, 91, 'the custom engine answered (its key from the environment)');
    const url = results.find((r) => r.observable === URL_OBSERVABLE)!;
    assert.notEqual(url.urlscan, null, 'the alias urlscan answered, keyed as the set writes it');
    assert.notEqual(url.safe_browsing, null);
    assert.notEqual(url.provider_17, null);
    assert.equal(url.provider_23, undefined, 'not keyed by the id the alias stands for');
    assert.equal(intel.server.hits('GET /v1/ip/').length, 1, 'the custom engine was called once, for the address');
  });

  test('--set @phishing (with the "@") is the same set', async () => {
    const results = parseResults(await oas(['analyze', FLAGGED_IP, '--set', '@phishing', '--json', '-q', '--config', configFile]));
    assert.deepEqual(engineKeys(results[0]!), [...SETS.phishing].sort());
  });

  test('--set with --engines: the union, an engine named by both only once', async () => {
    const results = parseResults(await oas(['analyze', TEXT, '--engines', 'reverse_dns,urlscan', '--set', 'phishing', '--json', '-q', '--config', configFile]));
    for (const result of results) {
      assert.deepEqual(engineKeys(result), ['intel', 'provider_17', 'reverse_dns', 'safe_browsing', 'urlscan'], result.observable);
    }
  });

  test('two sets (--set phishing,triage): their union, intel once', async () => {
    intel.server.reset();
    const results = parseResults(await oas(['analyze', FLAGGED_IP, '--set', 'phishing,triage', '--json', '-q', '--ignore-cache', '--config', configFile]));
    assert.deepEqual(engineKeys(results[0]!), [...new Set([...SETS.phishing, ...SETS.triage])].sort());
    assert.equal(intel.server.hits('GET /v1/ip/').length, 1, 'intel, in both sets, ran once');
  });

  test('the table: the custom engine of the set gives its summary', async () => {
    const run = await oas(['analyze', FLAGGED_IP, '--set', 'triage', '-q', '--no-color', '--config', configFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /91\/100, botnet/, 'the custom engine\'s summary');
  });

  test('an unknown set: exit 2, one line naming it, the known sets, and nothing called', async () => {
    intel.server.reset();
    const line = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--set', 'nope', '--config', configFile]));
    assert.equal(line, 'oas: unknown engine set: @nope (engine sets: @phishing, @triage)');
    assert.equal(intel.server.requests.length, 0);
  });

  test('a set misspelled: "did you mean"', async () => {
    const line = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--set', 'phishng', '--config', configFile]));
    assert.equal(line, 'oas: unknown engine set: @phishng; did you mean @phishing? (engine sets: @phishing, @triage)');
  });

  test('a known and an unknown set, or an unknown one with --engines: still refused, naming only the unknown', async () => {
    const both = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--set', 'phishing,nope', '--config', configFile]));
    assert.match(both, /^oas: unknown engine set: @nope\b/);
    const withEngines = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--engines', 'intel', '--set', 'nope', '--config', configFile]));
    assert.match(withEngines, /^oas: unknown engine set: @nope\b/);
  });

  test('no engine_sets at all: an unknown set says none is configured', async () => {
    const line = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--set', 'phishing', '--config', writeConfig({})]));
    assert.equal(line, 'oas: unknown engine set: @phishing (no engine set is configured: setting engine_sets)');
  });

  test('--set with no name: a usage error', async () => {
    const line = oneErrorLine(await oas(['analyze', FLAGGED_IP, '--set', ',', '--config', configFile]));
    assert.match(line, /^oas: --set needs at least one engine set name/);
  });
});

describe('@name in the API', () => {
  let server: ServeProcess;
  before(async () => {
    server = await spawnServe(configFile, { cwd, env: ENV });
  });
  after(async () => {
    await server?.stop();
  });

  const post = (body: unknown) => fetch(`${server.url}/api/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('"engines": ["@phishing"]: results keyed by the set\'s members as written', async () => {
    const id = await startAnalysis(server.url, TEXT, ['@phishing']);
    const results = await completedResults<Result>(server.url, id);
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.deepEqual(engineKeys(result), [...SETS.phishing].sort(), result.observable);
      assert.deepEqual(result.errors ?? {}, {});
    }
    assert.equal((results.find((r) => r.observable === FLAGGED_IP)!.intel as { score: number }).score, 91);
  });

  test('a set beside engine names, and two sets: the union, no duplicate', async () => {
    const id = await startAnalysis(server.url, FLAGGED_IP, ['urlscan', '@phishing', '@triage', 'intel']);
    const [result] = await completedResults<Result>(server.url, id);
    assert.deepEqual(engineKeys(result!), [...new Set([...SETS.phishing, ...SETS.triage])].sort());
  });

  test('"@nope": 400 whose error names @nope and the known sets; "@phishng": did you mean', async () => {
    const res = await post({ text: FLAGGED_IP, engines: ['@nope'] });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: string };
    assert.equal(error, 'unknown engine set: @nope (engine sets: @phishing, @triage)');
    const near = await post({ text: FLAGGED_IP, engines: ['intel', '@phishng'] });
    assert.equal(near.status, 400);
    assert.match(((await near.json()) as { error: string }).error, /^unknown engine set: @phishng; did you mean @phishing\?/);
  });

  test('/ui/engines lists the sets, each by engine id', async () => {
    const view = (await (await fetch(`${server.url}/ui/engines`)).json()) as CatalogView;
    assert.deepEqual(view.sets, [
      { name: 'phishing', engines: SET_IDS.phishing },
      { name: 'triage', engines: SET_IDS.triage },
    ]);
    for (const id of [...SET_IDS.phishing, ...SET_IDS.triage]) {
      assert.ok(view.engines.some((e) => e.id === id), `${id} is in the picker's engines`);
    }
  });
});

describe('a set naming an engine the catalog lacks is a configuration error', () => {
  /** `oas serve` to its exit (a configuration error must end it; killed after 30 s if it serves). */
  function serveToExit(file: string): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = killAtExit(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--config', file], {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv(), ...ENV },
        stdio: ['ignore', 'pipe', 'pipe'],
      }));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(guard);
        resolve({ code, stdout, stderr });
      });
    });
  }

  const cases: [string, Record<string, string[]>, RegExp][] = [
    ['a misspelled built-in engine', { phishing: ['provider_17', 'urlscn', 'intel'] }, /invalid "engine_sets\.phishing": unknown engine urlscn; did you mean urlscan\?$/],
    ['a custom engine not defined', { mine: ['intel', 'intel_reputation'] }, /invalid "engine_sets\.mine": unknown engine intel_reputation\b/],
  ];
  for (const [what, sets, expected] of cases) {
    test(`${what}: oas engines, engines --sets, analyze and serve exit 2 with one line naming the set and the engine`, async () => {
      const file = writeConfig({ engine_sets: sets });
      const runs: [string, Run][] = [
        ['oas engines', await oas(['engines', '--config', file])],
        ['oas engines --sets', await oas(['engines', '--sets', '--config', file])],
        ['oas analyze', await oas(['analyze', FLAGGED_IP, '--engines', 'intel', '--json', '--config', file])],
        ['oas analyze --set', await oas(['analyze', FLAGGED_IP, '--set', Object.keys(sets)[0]!, '--config', file])],
        ['oas serve', await serveToExit(file)],
      ];
      for (const [command, run] of runs) {
        const line = oneErrorLine(run);
        assert.match(line, /^oas: /, command);
        assert.ok(line.includes(file), `${command} names the file: ${line}`);
        assert.match(line, expected, command);
      }
    });
  }

  test('a set naming a custom engine whose definition is present is fine, whatever the case of the name', async () => {
    const file = writeConfig({ engine_sets: { mixed: ['INTEL', 'Reverse_DNS'] } });
    const run = await oas(['engines', '--sets', '--json', '--config', file]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [{ name: 'mixed', engines: ['INTEL', 'Reverse_DNS'], ids: ['intel', 'reverse_dns'] }]);
  });

  test('an empty set, or a set name with spaces: refused naming engine_sets', async () => {
    for (const sets of [{ empty: [] }, { 'two words': ['intel'] }]) {
      const file = join(tempDir('oas-sets-bad-'), 'oas.config.json');
      writeFileSync(file, JSON.stringify({ data_dir: join(file, '..', 'data'), engine_sets: sets }));
      const line = oneErrorLine(await oas(['engines', '--sets', '--config', file]));
      assert.match(line, /engine_sets/, line);
    }
  });
});
