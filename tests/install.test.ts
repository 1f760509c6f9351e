/**
 * Installing oas (issues 21 and 40). Slow (npm against the npm registry, the TypeScript of a second
 * copy), so it runs in CI (`CI=true`, as .ci/run is run) or when OAS_INSTALL_TEST=1:
 *
 * 1. a clean clone: the README's install command (`npm ci`) works and leaves `git status` empty,
 *    and `npm link` puts a working `oas` on the PATH;
 * 2. `npm pack` in that clone gives the package: the compiled code, the web assets, the docs, the
 *    licence and the SQLite binding, and no tests;
 * 3. `npm install -g` of that tarball into a fresh prefix and HOME, then, from another directory,
 *    `oas --version`, `oas engines`, `oas analyze` against the loopback fakes and `oas serve`
 *    answering (an analysis over the API, the pages' assets).
 *
 * The clone's `npm ci` is given this clone's SQLite binding (as prebuilds/, where `npm pack` puts
 * it: bin/build-sqlite3.mjs uses it when it loads) instead of compiling sqlite3 a second time: the
 * build from source is what CI's own `npm ci` on its clean clone does.
 *
 * .ci/run runs this file again on other Nodes with the tarball already packed:
 * - OAS_INSTALL_NODE: the `node` binary npm and the installed `oas` run with (default: this one);
 * - OAS_INSTALL_TARBALL: install this tarball (1 and 2 are then skipped);
 * - OAS_INSTALL_PACK_TO: a folder where 2 leaves a copy of the tarball it packed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runProcess } from './helpers/cli.js';
import { completedResults, spawnServe, startAnalysis } from './helpers/serve.js';
import { tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const wanted = process.env.CI === 'true' || process.env.OAS_INSTALL_TEST === '1';
const skip = wanted ? false : 'slow: runs in CI (CI=true) or with OAS_INSTALL_TEST=1';
const NODE = process.env.OAS_INSTALL_NODE || process.execPath;
const GIVEN_TARBALL = process.env.OAS_INSTALL_TARBALL;
const NODE_VERSION = process.env.OAS_INSTALL_NODE ? spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim() : process.version;

/**
 * Runs `command args` in `cwd` to its end; asserts it succeeded, returns its standard output.
 * NODE_DISABLE_COMPILE_CACHE: npm 11 on Node 22 and 24 keeps a compile cache in the temporary
 * directory, which `npm test` wants left empty.
 */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' }, timeout: 15 * 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * This environment without npm's (`npm test` exports its configuration as npm_config_*, e.g. this
 * machine's `nodedir`), with `node` first on the PATH: what a user's shell gives npm and oas.
 */
function userEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name)) env[name] = value;
  }
  return { ...env, HOME: home, PATH: `${dirname(NODE)}${delimiter}${process.env.PATH ?? ''}`, ...tmpEnv(), ...extra };
}

let clone: string | undefined;
let tarball: string | undefined = GIVEN_TARBALL;

describe('installing oas', { skip, timeout: 30 * 60_000 }, () => {
  test('a clean clone: npm ci works and leaves git status empty; npm link gives a working oas', { skip: GIVEN_TARBALL ? 'OAS_INSTALL_TARBALL is given' : false }, async () => {
    const dir = join(tempDir('oas-install-'), 'oas');
    run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir], ROOT);
    const sqlite = await import(pathToFileURL(join(ROOT, 'bin', 'sqlite3-prebuild.mjs')).href) as { prebuildName(dir: string): string; packBinding(dir: string, file: string): void };
    const sqliteDir = join(ROOT, 'node_modules', 'sqlite3');
    sqlite.packBinding(sqliteDir, join(dir, 'prebuilds', sqlite.prebuildName(sqliteDir)));
    run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], dir);
    assert.equal(run('git', ['status', '--porcelain'], dir), '', 'npm ci leaves the clone as it was');

    // `npm link` into a prefix of the test's own, so nothing outside the temporary folder changes.
    const prefix = tempDir('oas-link-');
    run('npm', ['link', '--no-audit', '--no-fund'], dir, { ...process.env, npm_config_prefix: prefix });
    const version = run('oas', ['--version'], dir, { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` });
    assert.equal(version, `${VERSION}\n`);
    assert.equal(run('git', ['status', '--porcelain'], dir), '', 'npm link leaves the clone as it was too');
    clone = dir;
  });

  test('npm pack gives the compiled code, the web assets, the docs, the licence and the SQLite binding, and no tests', { skip: GIVEN_TARBALL ? 'OAS_INSTALL_TARBALL is given' : false }, () => {
    assert.ok(clone, 'the clean clone of the test before');
    const out = tempDir('oas-pack-');
    run('npm', ['pack', '--pack-destination', out], clone);
    assert.equal(run('git', ['status', '--porcelain'], clone), '', 'npm pack leaves the clone as it was');
    const name = `oas-${VERSION}.tgz`;
    assert.deepEqual(readdirSync(out), [name]);
    tarball = join(out, name);
    if (process.env.OAS_INSTALL_PACK_TO) copyFileSync(tarball, join(process.env.OAS_INSTALL_PACK_TO, name));

    const files = run('tar', ['tzf', tarball], out).split('\n').filter(Boolean).map((path) => path.replace(/^package\//, ''));
    for (const path of ['package.json', 'bin/oas.js', 'bin/build-sqlite3.mjs', 'dist/src/cli/main.js', 'dist/src/server/assets.js', 'dist/web/api.js', 'web/static/oas.css', 'docs/install.md', 'docs/ARCHITECTURE.md']) {
      assert.ok(files.includes(path), `${path} is in the package`);
    }
    assert.ok(files.some((path) => /^dist\/engines\/[a-z_]+\.js$/.test(path)), 'the compiled engines are in the package');
    assert.ok(files.some((path) => /^prebuilds\/sqlite3-v[\d.]+-napi-v\d+-[a-z0-9]+-[a-z0-9]+\.tar\.gz$/.test(path)), `the SQLite binding is in the package: ${files.filter((path) => path.startsWith('prebuilds/')).join(', ')}`);
    // Those the repository has (CHANGELOG.md may come later): the package has them too.
    for (const path of ['README.md', 'LICENSE', 'CHANGELOG.md'].filter((file) => existsSync(join(clone!, file)))) {
      assert.ok(files.includes(path), `${path} is in the package`);
    }
    assert.ok(files.includes('LICENSE'), 'the licence is in the package');
    const unwanted = files.filter((path) => /(^|\/)tests?\//.test(path) || /\.ts$/.test(path) || path.startsWith('node_modules/') || path.startsWith('src/') || path.startsWith('web/src/'));
    assert.deepEqual(unwanted, [], 'no tests, no TypeScript sources');
  });

  describe(`npm install -g of the tarball, used from another directory, on Node ${NODE_VERSION}`, () => {
    let upstreams: Upstreams;
    let config: { file: string };
    let prefix: string;
    let env: NodeJS.ProcessEnv;
    let elsewhere: string;
    const oas = (args: string[]) => runProcess(join(prefix, 'bin', 'oas'), args, { cwd: elsewhere, env });

    before(async () => {
      upstreams = await startUpstreams();
      config = configFor(upstreams);
    });
    after(() => upstreams.close());

    test('installs from the npm registry alone, into a fresh prefix and HOME', () => {
      assert.ok(tarball, 'the tarball of the test before, or OAS_INSTALL_TARBALL');
      prefix = tempDir('oas-prefix-');
      const home = tempDir('oas-home-');
      elsewhere = tempDir('oas-elsewhere-');
      // npm's cache as it is (the same packages, fetched already), but nothing of its configuration.
      const cache = process.env.npm_config_cache || join(homedir(), '.npm');
      run('npm', ['install', '--global', '--no-audit', '--no-fund', '--prefer-offline', tarball], elsewhere, userEnv(home, { npm_config_prefix: prefix, npm_config_cache: cache }));
      env = userEnv(home);
      assert.equal(run('node', ['-p', 'process.version'], elsewhere, env), run(NODE, ['-p', 'process.version'], elsewhere), 'npm and oas run with OAS_INSTALL_NODE');
    });

    test('oas --version and oas engines', async () => {
      const version = await oas(['--version']);
      assert.deepEqual([version.code, version.stdout, version.stderr], [0, `${VERSION}\n`, '']);
      const engines = await oas(['engines']);
      assert.equal(engines.code, 0, engines.stderr);
      assert.match(engines.stdout, /^reverse_dns\b/m);
      assert.match(engines.stdout, /^rdap_whois\b/m);
    });

    test('oas analyze against the loopback fakes, kept in its SQLite store', async () => {
      const first = await oas(['analyze', 'example.com', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--config', config.file]);
      assert.equal(first.code, 0, first.stderr);
      const results = JSON.parse(first.stdout) as { observable: string; reverse_dns: unknown }[];
      assert.deepEqual(results.map(({ observable, reverse_dns }) => ({ observable, reverse_dns })), [
        { observable: 'example.com', reverse_dns: { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] } },
        { observable: '8.8.8.8', reverse_dns: { reverse_dns: ['dns.google'] } },
      ]);
      const history = await oas(['history', '8.8.8.8', '--json', '--config', config.file]);
      assert.equal(history.code, 0, history.stderr);
      assert.equal((JSON.parse(history.stdout) as { total: number }).total, 1, 'the analysis is in the SQLite store');
    });

    test('oas serve answers: the pages, their assets and an analysis over the API', async () => {
      const server = await spawnServe(config.file, { bin: join(prefix, 'bin', 'oas'), cwd: elsewhere, env: env as Record<string, string> });
      try {
        for (const path of ['/', '/assets/oas.css', '/assets/api.js', '/healthz']) {
          const response = await fetch(`${server.url}${path}`);
          assert.equal(response.status, 200, `GET ${path}`);
          await response.arrayBuffer();
        }
        const id = await startAnalysis(server.url, '8.8.8.8', ['reverse_dns']);
        const [result] = await completedResults<{ reverse_dns: unknown }>(server.url, id);
        assert.deepEqual(result!.reverse_dns, { reverse_dns: ['dns.google'] });
      } finally {
        await server.stop();
      }
    });
  });
});
