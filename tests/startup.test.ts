/**
 * CLI start-up loads only what a command uses: `oas --version` and `oas engines` never load the
 * HTTP client (undici), the server (Hono), the storage (SQLite, Keyv), the scraper (cheerio), the
 * spinner or the table renderer they do not need, and an analysis answered from the cache makes no
 * request, so it loads no HTTP client either. `oas engines` lists the catalog from the engines'
 * cached declarations once it has listed it from the modules: the same listing, the same
 * configuration errors, and a damaged cache is ignored.
 *
 * Every run is a real `oas` process started with `--import` of a small hook that records the URL
 * of every module resolved (ES modules) and every CommonJS module in require.cache at exit.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runOas, type Run } from './helpers/cli.js';
import { moduleRecorder } from './helpers/module-log.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const dir = tempDir('oas-startup-');
const recorder = moduleRecorder(dir);

/** Packages a command that does not use them must not load. */
const HEAVY = ['undici', 'hono', '@hono/node-server', 'sqlite3', '@keyv/sqlite', 'keyv', 'cheerio', 'ora', 'cli-table3'];

let runs = 0;
/** Runs `oas args` (cwd and HOME: `home`) and returns its output and the modules it loaded. */
async function oasRecorded(home: string, args: string[], env: Record<string, string> = {}): Promise<Run & { modules: string[] }> {
  const log = join(dir, `modules-${++runs}.log`);
  const run = await runOas(home, args, { nodeArgs: recorder.nodeArgs, env: { ...recorder.env(log), ...env } });
  return { ...run, modules: recorder.read(log) };
}

/** The heavy packages among the modules loaded. */
const heavyLoaded = (modules: string[]) => HEAVY.filter((name) => modules.some((m) => m.includes(`/node_modules/${name}/`)));
const engineModules = (modules: string[]) => modules.filter((m) => /\/dist\/engines\/[^/]+\.js$/.test(m));

describe('CLI start-up', () => {
  test('oas --version answers from package.json: not even commander, nothing of the commands', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const run = await oasRecorded(home, ['--version']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), version);
    assert.ok(run.modules.some((m) => m.endsWith('/bin/oas.js')), 'the hook records modules');
    assert.ok(!run.modules.some((m) => m.includes('/node_modules/')), 'no package');
    // With another word it is commander's answer, the same.
    const withFlag = await oasRecorded(home, ['--no-color', '--version']);
    assert.equal(withFlag.stdout.trim(), version);
    assert.ok(withFlag.modules.some((m) => m.includes('/node_modules/commander/')));
    assert.deepEqual(heavyLoaded(run.modules), []);
    assert.deepEqual(engineModules(run.modules), [], 'no engine module');
    assert.ok(!run.modules.some((m) => /\/dist\/src\/(app|cli\/analyze|cli\/serve|cli\/engines)\.js$/.test(m)), 'no command module');
  });

  test('oas engines lists the same catalog from the modules, then from the cached declarations, without undici, Hono or SQLite', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    for (const args of [['engines', '--json'], ['engines'], ['engines', '--catalog', 'older', '--json']]) {
      const cold = await oasRecorded(home, args, { XDG_CACHE_HOME: join(home, `cache-${args.join('')}`) });
      const warm = await oasRecorded(home, args, { XDG_CACHE_HOME: join(home, `cache-${args.join('')}`) });
      for (const run of [cold, warm]) {
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stderr, '');
        // The table is drawn by cli-table3; the JSON needs none of it.
        assert.deepEqual(heavyLoaded(run.modules).filter((name) => args.includes('--json') || name !== 'cli-table3'), [], args.join(' '));
      }
      assert.equal(warm.stdout, cold.stdout, args.join(' '));
      assert.ok(engineModules(cold.modules).length > 20, 'the first listing imports the engines');
      assert.deepEqual(engineModules(warm.modules), [], 'the next one reads their declarations');
      if (args.includes('--json')) assert.ok((JSON.parse(warm.stdout) as unknown[]).length > 20);
    }
  });

  test('from the cached declarations, engine settings are checked as from the modules (own schema included)', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const env = { XDG_CACHE_HOME: join(home, 'cache') };
    const config = (engines: Record<string, unknown>) => {
      const file = join(home, `config-${++runs}.json`);
      writeFileSync(file, JSON.stringify({ data_dir: join(home, 'data'), engines }));
      return file;
    };
    const cold = await oasRecorded(home, ['engines', '--json'], env);
    assert.equal(cold.code, 0, cold.stderr);
    const cases: [Record<string, unknown>, number, RegExp | undefined][] = [
      [{ github: { user_agent: '' } }, 2, /engines\.github\.user_agent/], // github's own schema
      [{ github: { user_agent: 'me' } }, 0, undefined],
      [{ urlscan: { timeout_ms: 'soon' } }, 2, /engines\.urlscan\.timeout_ms/], // the common schema
      [{ urlscan: { colour: 'red' } }, 2, /engines\.urlscan\.colour/], // unknown setting
      [{ nope: {} }, 2, /unknown engine/],
      [{ virustotal: { api_key: 'k' } }, 0, undefined],
    ];
    for (const [engines, code, error] of cases) {
      const file = config(engines);
      const fromCache = await oasRecorded(home, ['engines', '--json', '--config', file], env);
      const fromModules = await oasRecorded(home, ['engines', '--json', '--config', file], { XDG_CACHE_HOME: join(home, `fresh-${runs}`) });
      assert.equal(fromCache.code, code, `${JSON.stringify(engines)}: ${fromCache.stderr}`);
      assert.equal(fromCache.stderr, fromModules.stderr, JSON.stringify(engines));
      assert.equal(fromCache.stdout, fromModules.stdout, JSON.stringify(engines));
      if (error) assert.match(fromCache.stderr, error);
      if (code === 0 && 'virustotal' in engines) {
        const listed = JSON.parse(fromCache.stdout) as { service: string; configured: boolean }[];
        assert.equal(listed.find((e) => e.service === 'virustotal')?.configured, true);
      }
    }
  });

  test('on Node 22.1 and later the modules\' compiled code is kept in Node\'s compile cache for the next run (not on Node 20)', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const cache = join(home, 'compile-cache');
    const first = await oasRecorded(home, ['engines', '--json'], { NODE_COMPILE_CACHE: cache });
    assert.equal(first.code, 0, first.stderr);
    const kept = existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0;
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if (major > 22 || (major === 22 && minor >= 1)) assert.ok(kept > 0, `nothing kept in ${cache}`);
    else assert.equal(kept, 0);
    const second = await oasRecorded(home, ['engines', '--json'], { NODE_COMPILE_CACHE: cache });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, first.stdout);
  });

  test('a damaged or missing declarations cache is ignored', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const env = { XDG_CACHE_HOME: join(home, 'cache') };
    const reference = await oasRecorded(home, ['engines', '--json'], env);
    const cacheDir = join(home, 'cache', 'oas');
    const [file] = readdirSync(cacheDir);
    assert.ok(file, 'the listing keeps the declarations');
    for (const damage of ['{not json', JSON.stringify({ format: 1, fingerprint: 'stale', engines: [] }), '']) {
      writeFileSync(join(cacheDir, file), damage);
      const run = await oasRecorded(home, ['engines', '--json'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, reference.stdout);
    }
    rmSync(cacheDir, { recursive: true });
    writeFileSync(join(home, 'a-file'), '');
    const run = await oasRecorded(home, ['engines', '--json'], { XDG_CACHE_HOME: join(home, 'a-file') }); // cannot be written
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, reference.stdout);
  });

  describe('an analysis answered from the cache', () => {
    let upstreams: Upstreams;
    before(async () => {
      upstreams = await startUpstreams();
    });
    after(() => upstreams.close());

    test('loads no HTTP client, server, scraper, spinner or table renderer (--json)', async () => {
      const config = configFor(upstreams);
      const home = mkdtempSync(join(dir, 'home-'));
      const args = ['analyze', 'example.com', '--engines', 'urlscan', '--json', '--config', config.file];
      const first = await oasRecorded(home, args);
      assert.equal(first.code, 0, first.stderr);
      assert.ok(first.modules.some((m) => m.includes('/node_modules/undici/')), 'the first run asks the upstream');
      const cached = await oasRecorded(home, args);
      assert.equal(cached.code, 0, cached.stderr);
      // The same answer; seen (issue 38) now counts the first run.
      const [again, before] = [JSON.parse(cached.stdout), JSON.parse(first.stdout)] as Record<string, unknown>[][];
      assert.equal(before![0]!.seen, null);
      assert.equal((again![0]!.seen as { count: number }).count, 1);
      assert.deepEqual(again!.map(({ seen: _seen, ...rest }) => rest), before!.map(({ seen: _seen, ...rest }) => rest));
      assert.deepEqual(heavyLoaded(cached.modules).filter((name) => !['sqlite3', '@keyv/sqlite', 'keyv'].includes(name)), []);
    });
  });
});
