/**
 * Upgrades (issue 40): data folders written by earlier versions (tests/fixtures/upgrades, each
 * built by the commit its name gives, see its README) are read by this build with every analysis
 * intact; a data folder or a backup of a newer schema is refused, its bytes unchanged; `oas backup`
 * copies the SQLite file while `oas serve` runs and answers, `oas restore` is refused while it
 * runs and puts the copy back once it stops; Redis holds its schema in `oas:schema`. The `oas`
 * commands of docs/upgrades.md's `sh` blocks run as written.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noStack, runOas, runProcess } from './helpers/cli.js';
import { BIN, spawnServe } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';
import { redisSkip, startRedis, type RedisServer } from './helpers/redis.js';

const FIXTURES = fileURLToPath(new URL('../../tests/fixtures/upgrades/', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/upgrades.md', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** This build's schema (src/store/storage.ts SCHEMA). */
const SCHEMA = 4;

interface Printed {
  text: string;
  engines: string;
  results: Record<string, unknown>[];
}

/** Each fixture: its folder, and whether the version that wrote it had users. */
const FIXTURE_DIRS = readdirSync(FIXTURES).filter((name) => existsSync(join(FIXTURES, name, 'oas.sqlite'))).sort();

/** A copy of fixture `name`'s data folder in a fresh folder, with a configuration over the fakes. */
function copyOf(name: string, upstreams: Upstreams): { dir: string; file: string; dataDir: string } {
  const config = configFor(upstreams);
  cpSync(join(FIXTURES, name), config.dataDir, { recursive: true });
  chmodSync(config.dataDir, 0o700);
  chmodSync(join(config.dataDir, 'oas.sqlite'), 0o600);
  return config;
}

/** The bytes of every file of `dir`, by name. */
function snapshot(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((name) => [name, `${statSync(join(dir, name)).mode.toString(8)} ${readFileSync(join(dir, name)).toString('base64')}`]));
}

/** Sets the schema in a SQLite file's header (user_version: 4 bytes at offset 60), as a newer oas would leave it. */
function markSchema(file: string, schema: number): void {
  const bytes = readFileSync(file);
  bytes.writeUInt32BE(schema, 60);
  writeFileSync(file, bytes);
}

async function oasJson<T>(cwd: string, args: string[]): Promise<T> {
  const run = await runOas(cwd, args);
  assert.equal(run.code, 0, `oas ${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

type History = { total: number; items: { analysis_id: string; verdict: string }[] };

/** alice's token, from the build that wrote fixture `name` (none before users came). */
function tokenOf(name: string): string | undefined {
  const file = join(FIXTURES, `${name}.token`);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/** GET or POST `path` of the server at `url`, as alice when `token` is given. */
async function api<T>(url: string, path: string, token: string | undefined, body?: unknown): Promise<T> {
  const res = await fetch(`${url}/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** The results of analysis `id` once complete (10 s at most). */
async function resultsOf(url: string, id: string, token: string | undefined): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i++) {
    if ((await api<{ complete: boolean }>(url, `is_analysis_complete/${id}`, token)).complete) return api(url, `results/${id}`, token);
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`analysis ${id} not complete after 10 s`);
}

/** Starts an analysis of `text` with reverse_dns, returns its id once complete. */
async function analysed(url: string, text: string, token: string | undefined): Promise<string> {
  const { analysis_id: id } = await api<{ analysis_id: string }>(url, 'analyze', token, { text, engines: ['reverse_dns'] });
  await resultsOf(url, id, token);
  return id;
}

describe('upgrades', { timeout: 240_000 }, () => {
  let upstreams: Upstreams;
  before(async () => {
    upstreams = await startUpstreams();
  });
  after(async () => {
    await upstreams.close();
  });

  test('there are fixtures of every format', () => {
    assert.deepEqual(FIXTURE_DIRS.map((name) => name.replace(/^\w+-/, '')), ['seen', 'format1', 'verdicts', 'rows']);
  });

  for (const name of FIXTURE_DIRS) {
    test(`a data folder of ${name} is upgraded: every analysis, its results, the history and the users intact`, async () => {
      const printed = JSON.parse(readFileSync(join(FIXTURES, `${name}.analyses.json`), 'utf8')) as Printed[];
      const config = copyOf(name, upstreams);
      // The CLI first (it upgrades the file), then a server over the upgraded file.
      const ids: string[] = [];
      for (const analysis of printed) {
        const first = analysis.results[0]!.observable as string;
        const history = await oasJson<History>(config.dir, ['history', first, '--json', '--config', config.file]);
        assert.equal(history.total, 1, `${first}: held by one analysis`);
        ids.push(history.items[0]!.analysis_id);
      }
      for (const analysis of printed) {
        for (const result of analysis.results) {
          const history = await oasJson<History>(config.dir, ['history', result.observable as string, '--json', '--config', config.file]);
          assert.ok(history.total >= 1, `${String(result.observable)} is in the history`);
        }
      }
      const users = await runOas(config.dir, ['users', 'list', '--json', '--config', config.file]);
      assert.equal(users.code, 0, users.stderr);
      if (tokenOf(name)) assert.match(users.stdout, /"name": "alice"[\s\S]*"role": "analyst"/);
      const server = await spawnServe(config.file);
      try {
        for (const [i, analysis] of printed.entries()) {
          // alice's token of the old build: her user and its token hash came through.
          const served = await resultsOf(server.url, ids[i]!, tokenOf(name));
          assert.equal(served.length, analysis.results.length);
          analysis.results.forEach((result, index) => {
            assert.equal(served[index]!.observable, result.observable);
            assert.equal(served[index]!.type, result.type);
            for (const engine of analysis.engines.split(',')) {
              assert.deepEqual(served[index]![engine], result[engine], `${name}: ${String(result.observable)}, ${engine}`);
            }
          });
        }
      } finally {
        await server.stop();
      }
      // Recorded: a newer build would know what wrote it.
      assert.equal(readFileSync(join(config.dataDir, 'oas.sqlite')).readUInt32BE(60), SCHEMA);
    });
  }

  test('a data folder of a newer schema is refused by every command that opens it, one line, exit 2, its bytes unchanged', async () => {
    const config = copyOf(FIXTURE_DIRS.find((name) => name.endsWith('seen'))!, upstreams);
    // Upgraded by this build (it records itself as the writer), then marked as a newer schema.
    assert.equal((await runOas(config.dir, ['users', 'list', '--config', config.file])).code, 0);
    const file = join(config.dataDir, 'oas.sqlite');
    markSchema(file, SCHEMA + 1);
    const before = snapshot(config.dataDir);
    const line = `oas: the data folder ${config.dataDir} was written by schema ${SCHEMA + 1} (oas ${VERSION}); this oas ${VERSION} reads schema ${SCHEMA} and older: upgrade oas\n`;
    for (const args of [['analyze', 'example.com', '--engines', 'reverse_dns'], ['history', 'example.com'], ['users', 'list'], ['serve', '--port', '0'], ['backup', join(config.dir, 'copy.sqlite')], ['allow', 'list']]) {
      const run = await runOas(config.dir, [...args, '--config', config.file]);
      assert.equal(run.code, 2, `oas ${args[0]}: ${run.stderr}`);
      assert.equal(run.stderr, line, `oas ${args[0]}`);
      noStack(run.stderr);
      assert.deepEqual(snapshot(config.dataDir), before, `oas ${args[0]} touched nothing`);
    }
    assert.equal(existsSync(join(config.dir, 'copy.sqlite')), false);
  });

  test('oas backup while oas serve runs and answers; oas restore refused while it runs, then puts the copy back', async () => {
    const name = FIXTURE_DIRS.find((fixture) => fixture.endsWith('seen'))!;
    const token = tokenOf(name);
    const config = copyOf(name, upstreams);
    const backup = join(config.dir, 'backups', 'oas-backup.sqlite');
    const server = await spawnServe(config.file);
    let during: string;
    try {
      during = await analysed(server.url, 'example.net', token);
      const wrote = await runOas(config.dir, ['backup', backup, '--config', config.file]);
      assert.equal(wrote.code, 2, 'a folder that does not exist is refused');
      assert.equal(wrote.stderr, `oas: backup: ${join(config.dir, 'backups')}: no such folder\n`);
      mkdirSync(join(config.dir, 'backups'));
      writeFileSync(join(config.dir, 'backups', 'README.md'), 'not a backup\n');
      const run = await runOas(config.dir, ['backup', backup, '--config', config.file]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^wrote ${backup}: 3 analyses, schema ${SCHEMA}, \\d+ KB \\(a copy of ${config.dataDir}\\)\\n$`));
      assert.equal(statSync(backup).mode & 0o777, 0o600);
      const again = await runOas(config.dir, ['backup', backup, '--config', config.file]);
      assert.equal(again.code, 2);
      assert.equal(again.stderr, `oas: backup: ${backup} exists: give --force to replace it\n`);
      assert.equal((await runOas(config.dir, ['backup', backup, '--force', '--config', config.file])).code, 0);
      // The server still answers, and goes on writing: an analysis after the copy.
      await analysed(server.url, 'example.io', token);
      const refused = await runOas(config.dir, ['restore', backup, '--config', config.file]);
      assert.equal(refused.code, 2);
      assert.equal(refused.stderr, `oas: restore: oas serve (pid ${server.child.pid}) uses the data folder ${config.dataDir}: stop it, then restore\n`);
      assert.equal((await oasJson<History>(config.dir, ['history', 'example.io', '--json', '--config', config.file])).total, 1);
    } finally {
      await server.stop();
    }
    const restored = await runOas(config.dir, ['restore', backup, '--config', config.file]);
    assert.equal(restored.code, 0, restored.stderr);
    const previous = join(config.dataDir, 'oas.sqlite.before-restore');
    assert.equal(restored.stdout, `restored ${backup} (schema ${SCHEMA}) into ${config.dataDir}; the file it replaced is kept as ${previous}\n`);
    assert.ok(existsSync(previous));
    // The copy as it was: the analysis made during the server's run is there, the one after is not.
    const held = await oasJson<History>(config.dir, ['history', 'example.net', '--json', '--config', config.file]);
    assert.equal(held.items[0]?.analysis_id, during!);
    assert.equal((await oasJson<History>(config.dir, ['history', 'example.io', '--json', '--config', config.file])).total, 0);
    assert.equal((await oasJson<History>(config.dir, ['history', 'example.com', '--json', '--config', config.file])).total, 1);
    const server2 = await spawnServe(config.file);
    try {
      const results = await resultsOf(server2.url, during!, token);
      assert.equal(results[0]!.observable, 'example.net');
    } finally {
      await server2.stop();
    }
    // A backup of a newer schema, or no backup at all: refused, nothing changed.
    markSchema(backup, SCHEMA + 1);
    const before = snapshot(config.dataDir);
    const newer = await runOas(config.dir, ['restore', backup, '--config', config.file]);
    assert.equal(newer.code, 2);
    assert.equal(newer.stderr, `oas: the backup ${backup} was written by schema ${SCHEMA + 1} (oas ${VERSION}); this oas ${VERSION} reads schema ${SCHEMA} and older: upgrade oas\n`);
    const notSqlite = await runOas(config.dir, ['restore', join(config.dir, 'backups', 'README.md'), '--config', config.file]);
    assert.equal(notSqlite.code, 2);
    assert.equal(notSqlite.stderr, `oas: ${join(config.dir, 'backups', 'README.md')} is no oas backup (not a SQLite file)\n`);
    assert.deepEqual(snapshot(config.dataDir), before);
  });

  test('with redis_url, backup and restore point at Redis\'s own tools', async () => {
    const config = configFor(upstreams);
    for (const command of ['backup', 'restore']) {
      const run = await runOas(config.dir, [command, 'x.sqlite', '--config', config.file], { env: { OAS_REDIS_URL: 'redis://127.0.0.1:9' } });
      assert.equal(run.code, 2);
      assert.equal(run.stderr, `oas: ${command}: with redis_url the analyses, users and history live in Redis, not in ${config.dataDir}: use Redis's own tools (BGSAVE, then copy its dump.rdb; see docs/upgrades.md)\n`);
    }
  });

  describe('Redis holds its schema in oas:schema', { skip: redisSkip }, () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis?.close();
    });

    test('recorded by the first command; a newer one refused by the CLI and by oas serve, one line, exit 2', async () => {
      const config = configFor(upstreams, { redis_url: redis.url });
      const first = await runOas(config.dir, ['users', 'list', '--config', config.file]);
      assert.equal(first.code, 0, first.stderr);
      const recorded = await redis.client.hgetall('oas:schema');
      assert.equal(recorded.schema, '2');
      assert.equal(recorded.oas, VERSION);
      assert.equal(recorded.upgraded_from, '0');
      await redis.client.hset('oas:schema', 'schema', '3', 'oas', '9.0.0');
      const keys = (await redis.client.keys('*')).sort();
      const line = `oas: Redis at redis://127.0.0.1:${redis.port} was written by schema 3 (oas 9.0.0); this oas ${VERSION} reads schema 2 and older: upgrade oas\n`;
      for (const args of [['users', 'list'], ['history', 'example.com'], ['analyze', 'example.com', '--engines', 'reverse_dns']]) {
        const run = await runOas(config.dir, [...args, '--config', config.file]);
        assert.equal(run.code, 2, `oas ${args[0]}: ${run.stderr}`);
        assert.equal(run.stderr, line, `oas ${args[0]}`);
      }
      const serve = await runProcess(process.execPath, [BIN, 'serve', '--port', '0', '--config', config.file], { cwd: config.dir, env: { PATH: process.env.PATH ?? '', HOME: config.dir } });
      assert.equal(serve.code, 2, serve.stderr);
      assert.match(serve.stderr, new RegExp(`${line.replace(/[.()]/g, '\\$&')}$`));
      assert.deepEqual((await redis.client.keys('*')).sort(), keys, 'nothing written');
      assert.deepEqual(await redis.client.hgetall('oas:schema'), { ...recorded, schema: '3', oas: '9.0.0' });
    });

    test('schema 1 to 2: the Cortex jobs of a Redis of 0.1.0 (no index of them) are indexed by the first command, a deleted one left out', async () => {
      await redis.client.flushall();
      const config = configFor(upstreams, { redis_url: redis.url });
      const header = (id: string, at: string, cortex: Record<string, unknown> | undefined) => JSON.stringify({
        id, origin: 'server', created_at: at, finished_at: at, duration_ms: 5, engines: ['reverse_dns'], ignore_cache: false,
        observables: [{ value: 'cyberbro.net', type: 'FQDN' }], complete: true, progress: { done: 1, total: 1 }, format: 2,
        ...(cortex ? { cortex: { analyzer: 'oas_Reverse_Dns_1_0', data_type: 'fqdn', data: 'cyberbro.net', message: '', parameters: {}, ...cortex } } : {}),
      });
      const layout: [string, string, Record<string, unknown> | undefined][] = [
        ['0b6c1e1c-0000-4000-8000-000000000001', '2026-11-01T10:00:00.000Z', {}],
        ['0b6c1e1c-0000-4000-8000-000000000002', '2026-11-02T10:00:00.000Z', undefined],
        ['0b6c1e1c-0000-4000-8000-000000000003', '2026-11-03T10:00:00.000Z', { deleted: true }],
        ['0b6c1e1c-0000-4000-8000-000000000004', '2026-11-04T10:00:00.000Z', {}],
      ];
      for (const [id, at, cortex] of layout) {
        await redis.client.hset(`oas:analysis:${id}`, 'header', header(id, at, cortex), 'complete', '1');
        await redis.client.zadd('oas:analyses', Date.parse(at), id);
      }
      const run = await runOas(config.dir, ['users', 'list', '--config', config.file]);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(await redis.client.zrevrange('oas:analyses:cortex', 0, -1), [layout[3]![0], layout[0]![0]]);
      const recorded = await redis.client.hgetall('oas:schema');
      assert.deepEqual([recorded.schema, recorded.upgraded_from], ['2', '0']);
      await redis.client.hset('oas:schema', 'schema', '1', 'upgraded_from', '0');
      await redis.client.del('oas:analyses:cortex');
      assert.equal((await runOas(config.dir, ['users', 'list', '--config', config.file])).code, 0);
      assert.equal(await redis.client.zcard('oas:analyses:cortex'), 2, 'a Redis that recorded schema 1 is upgraded too');
      assert.deepEqual([(await redis.client.hgetall('oas:schema')).schema, (await redis.client.hgetall('oas:schema')).upgraded_from], ['2', '1']);
    });
  });

  test('the oas commands of docs/upgrades.md run as written', async () => {
    const config = copyOf(FIXTURE_DIRS.find((name) => name.endsWith('seen'))!, upstreams);
    const bin = join(config.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'oas'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    const commands = [...readFileSync(DOC, 'utf8').matchAll(/^```sh\n([\s\S]*?)^```/gm)]
      .flatMap((block) => block[1]!.split('\n'))
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => /^oas\b/.test(line));
    assert.ok(commands.length >= 3, 'the page shows its commands');
    for (const command of commands) {
      const run = await runProcess('bash', ['-c', command], { cwd: config.dir, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: config.dir } });
      assert.equal(run.code, 0, `${command}: ${run.stderr}`);
    }
  });
});
