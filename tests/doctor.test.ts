/**
 * `oas doctor` (issue 40) as a subprocess against the loopback fakes: every check passing (the
 * data folder, Redis, the proxy, the DNS server, every keyless engine, Shodan and MISP with their
 * keys), then each failing in turn (a key refused with 401 and with 403, a timeout, a refused
 * connection, a bad proxy, Redis down, an unwritable data folder, a shared one, a DNS server that
 * does not answer, an engine without its key) with the exact lines and exit codes, and no secret
 * (keys, the proxy's and Redis's passwords) anywhere in what it prints. At most one request per
 * engine reaches the fakes, and nothing lands in the engine cache. Then `POST /api/doctor` over
 * real HTTP: the same JSON as `oas doctor --json`, for the admin only. And every `oas` command of
 * docs/doctor.md's `sh` blocks, run as written.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as misp from './fakes/misp.js';
import * as shodan from './fakes/shodan.js';
import { startFakeHttp, reply, type FakeHttpServer } from './fakes/http.js';
import { startFakeProxy, type FakeProxy } from './fakes/proxy.js';
import { noStack, runOas, runProcess, type Run } from './helpers/cli.js';
import { freePort, redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { BIN, spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const SHODAN_KEY = 'shodan-doctor-key-5f1e2d3c4b5a69788796';
const MISP_KEY = 'misp-doctor-key-0a1b2c3d4e5f60718293a4b5';
const PROXY_PASSWORD = 'proxy-doctor-pass-77aa88bb';
const REDIS_PASSWORD = 'redis-doctor-pass-99cc00dd';
const API_TOKEN = 'doctor-api-token-0123456789abcdef0123';
const SECRETS = [SHODAN_KEY, MISP_KEY, PROXY_PASSWORD, REDIS_PASSWORD, API_TOKEN, 'wrong-shodan-key-31337', 'wrong-misp-key-31337'];

/** Nothing secret in what a run printed, no stack trace. */
function noSecret(run: Run, what: string): void {
  for (const secret of SECRETS) {
    assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), `${what}: a secret was printed:\n${run.stdout}${run.stderr}`);
  }
  noStack(run.stdout + run.stderr);
}

/** The lines a run printed. */
const linesOf = (run: Run): string[] => run.stdout.split('\n').filter((line) => line !== '');

describe('oas doctor', () => {
  let upstreams: Upstreams;
  /** Shodan and MISP, each knowing one key. */
  let keyed: FakeHttpServer;
  let proxy: FakeProxy;
  let closedPort: number;

  before(async () => {
    upstreams = await startUpstreams();
    keyed = await startFakeHttp({ ...shodan.fakeRoutes({ key: SHODAN_KEY }), ...misp.fakeRoutes({ key: MISP_KEY }) });
    proxy = await startFakeProxy();
    closedPort = await freePort();
  });

  after(async () => {
    await keyed?.close();
    await proxy?.close();
    await upstreams?.close();
  });

  /** A configuration of every keyless engine on the fakes, Shodan and MISP with their keys, and `extra`. */
  function setup(extra: Record<string, unknown> = {}, engines: Record<string, Record<string, unknown>> = {}) {
    return configFor(upstreams, {
      ...extra,
      engines: {
        provider_20: { ...shodan.fakeSettings(keyed.url), api_key: SHODAN_KEY },
        provider_15: { ...misp.fakeSettings(keyed.url), api_key: MISP_KEY },
        ...engines,
      },
    });
  }

  const doctor = (config: { dir: string; file: string }, args: string[] = [], env: Record<string, string> = {}) =>
    runOas(config.dir, ['doctor', '--config', config.file, ...args], { env });

  test('every check passing: one line each, ok, the cost first, exit 0; one request per engine, nothing cached', async () => {
    const config = setup({ proxy_url: proxy.url });
    keyed.reset();
    const before = proxy.requests.length;
    const run = await doctor(config);
    noSecret(run, 'all passing');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stderr, '');
    const lines = linesOf(run);
    // 18 engines: the 16 keyless ones, Shodan and MISP (each through the proxy, one request at most).
    assert.equal(lines[0], 'one call per engine: 18 engines checked, 15 HTTP requests made');
    assert.equal(lines.at(-1), 'all 21 checks passed');
    const checks = lines.slice(1, -1);
    assert.equal(checks.length, 21);
    for (const line of checks) assert.match(line, /^ok {4}/, line);
    assert.ok(checks.includes(`ok    data folder ${config.dataDir}: exists, private (mode 0700), writable`), checks.join('\n'));
    assert.ok(checks.includes(`ok    proxy ${new URL(proxy.url).host}: accepts connections`), checks.join('\n'));
    assert.ok(checks.includes(`ok    DNS server ${upstreams.settings.dns_servers[0]}: answered (A example.com)`), checks.join('\n'));
    assert.ok(checks.includes('ok    engine provider_20 (shodan): plan dev, 100 query credits left'), checks.join('\n'));
    assert.ok(checks.includes('ok    engine provider_15 (misp): MISP 2.4.190'), checks.join('\n'));
    assert.ok(checks.includes('ok    engine rdap_whois: RDAP bootstrap file: 6 top-level domains'), checks.join('\n'));
    // Shodan's and MISP's status endpoints, once each, through the proxy; no lookup.
    assert.deepEqual(keyed.requests.map((r) => `${r.method} ${r.path}`).sort(), ['GET /misp/servers/getVersion', 'GET /shodan/api-info']);
    // Every request went through the proxy: the 15, and the redirect chrome_extension's store
    // answers (/detail/<id> to /detail/<slug>/<id>) followed within its one call.
    assert.equal(proxy.requests.length - before, 16, 'every HTTP request went through the proxy');
    // The data folder holds no database or list written by the checks.
    assert.deepEqual(readdirSync(config.dataDir), []);
  });

  test('--engines: only those, by id or alias; --json: the report', async () => {
    const config = setup();
    const run = await doctor(config, ['--engines', 'shodan,provider_15']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(linesOf(run), [
      'one call per engine: 2 engines checked, 2 HTTP requests made',
      `ok    data folder ${config.dataDir}: exists, private (mode 0700), writable`,
      `ok    DNS server ${upstreams.settings.dns_servers[0]}: answered (A example.com)`,
      'ok    engine provider_15 (misp): MISP 2.4.190',
      'ok    engine provider_20 (shodan): plan dev, 100 query credits left',
      'all 4 checks passed',
    ]);
    const json = await doctor(config, ['--engines', 'shodan,provider_15', '--json']);
    assert.equal(json.code, 0);
    const report = JSON.parse(json.stdout) as { ok: boolean; calls: number; engines: number; checks: { kind: string; target: string; ok: boolean; message: string }[]; lines: string[] };
    assert.equal(report.ok, true);
    assert.equal(report.calls, 2);
    assert.equal(report.engines, 2);
    assert.deepEqual(report.lines, linesOf(run));
    assert.deepEqual(report.checks.map((c) => `${c.kind} ${c.target}`), ['data_dir ' + config.dataDir, `dns ${upstreams.settings.dns_servers[0]}`, 'engine provider_15', 'engine provider_20']);
  });

  test('a key refused: 401 (Shodan) and 403 (MISP), in the engines\' words with the setting to fix, exit 1', async () => {
    const config = setup({}, {
      provider_20: { ...shodan.fakeSettings(keyed.url), api_key: 'wrong-shodan-key-31337' },
      provider_15: { ...misp.fakeSettings(keyed.url), api_key: 'wrong-misp-key-31337' },
    });
    const run = await doctor(config, ['--engines', 'shodan,misp']);
    noSecret(run, 'refused keys');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.deepEqual(linesOf(run).slice(3), [
      'FAIL  engine provider_15 (misp): MISP: authentication failed (HTTP 403 Forbidden: Authentication failed. Please make sure you pass the API key of an API enabled user along in the Authorization header.) (key refused: check engines.provider_15.api_key or OAS_MISP_API_KEY)',
      'FAIL  engine provider_20 (shodan): HTTP 401 Unauthorized: Please provide a valid API key. (key refused: check engines.provider_20.api_key or OAS_SHODAN_API_KEY)',
      '2 of 4 checks failed',
    ]);
  });

  test('a timeout, a refused connection, an engine without its key', async () => {
    const slow = await startFakeHttp({ 'GET /shodan/api-info': reply.hang() });
    try {
      const config = setup({}, { provider_20: { ...shodan.fakeSettings(slow.url), api_key: SHODAN_KEY, timeout_ms: 300 }, provider_15: { base_url: `http://127.0.0.1:${closedPort}/misp`, api_key: MISP_KEY } });
      const run = await doctor(config, ['--engines', 'shodan,misp,virustotal']);
      noSecret(run, 'timeout and refused');
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.deepEqual(linesOf(run).slice(3), [
        `FAIL  engine provider_15 (misp): connection refused by 127.0.0.1:${closedPort} (is the service up? check its base_url, or set proxy_url)`,
        `FAIL  engine provider_20 (shodan): timeout after 300 ms waiting for 127.0.0.1:${new URL(slow.url).port} (limit: engines.provider_20.timeout_ms or engine_timeout_ms)`,
        'FAIL  engine provider_24 (virustotal): not configured: engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY',
        '3 of 5 checks failed',
      ]);
      // Two requests tried (Shodan's, MISP's refused); VirusTotal's never made.
      assert.equal(linesOf(run)[0], 'one call per engine: 3 engines checked, 2 HTTP requests made');
    } finally {
      await slow.close();
    }
  });

  test('a bad proxy: its line and the engines\' say so, its password never printed', async () => {
    const config = setup({ proxy_url: `http://doctor:${PROXY_PASSWORD}@127.0.0.1:${closedPort}` });
    const run = await doctor(config, ['--engines', 'shodan']);
    noSecret(run, 'bad proxy');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.deepEqual(linesOf(run).slice(1), [
      `ok    data folder ${config.dataDir}: exists, private (mode 0700), writable`,
      `FAIL  proxy 127.0.0.1:${closedPort}: connection refused by the proxy 127.0.0.1:${closedPort} (check proxy_url)`,
      `ok    DNS server ${upstreams.settings.dns_servers[0]}: answered (A example.com)`,
      `FAIL  engine provider_20 (shodan): connection refused by the proxy 127.0.0.1:${closedPort} (check proxy_url)`,
      '2 of 4 checks failed',
    ]);
  });

  test('Redis down: one line naming it without its password, exit 1; a DNS server that does not answer', async () => {
    const config = setup({ redis_url: `redis://:${REDIS_PASSWORD}@127.0.0.1:${closedPort}`, dns_servers: [`127.0.0.1:${closedPort}`] });
    const run = await doctor(config, ['--engines', 'reverse_dns']);
    noSecret(run, 'redis down');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const lines = linesOf(run);
    assert.equal(lines[2], `FAIL  Redis redis://127.0.0.1:${closedPort}: unreachable (connect ECONNREFUSED 127.0.0.1:${closedPort}): check redis_url (--redis, OAS_REDIS_URL)`);
    assert.match(lines[3]!, new RegExp(`^FAIL  DNS server 127\\.0\\.0\\.1:${closedPort}: `));
    assert.match(lines[4]!, /^FAIL {2}engine reverse_dns: /);
    assert.equal(lines.at(-1), '3 of 4 checks failed');
  });

  test('Redis up: ok', { skip: redisSkip }, async () => {
    let redis: RedisServer | undefined;
    try {
      redis = await startRedis({ requirepass: REDIS_PASSWORD });
      const config = setup({ redis_url: redis.url });
      const run = await doctor(config, ['--engines', 'shodan']);
      noSecret(run, 'redis up');
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(linesOf(run)[2], `ok    Redis redis://127.0.0.1:${redis.port}: answered PONG`);
    } finally {
      await redis?.close();
    }
  });

  test('the data folder: others may read it (FAIL, the chmod to run), a path under a file, one the user cannot write', async () => {
    const shared = setup();
    mkdirSync(shared.dataDir, { mode: 0o755 });
    chmodSync(shared.dataDir, 0o755);
    const run = await doctor(shared, ['--engines', 'shodan']);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.equal(linesOf(run)[1], `FAIL  data folder ${shared.dataDir}: other users can read it (mode 0755): chmod 700 ${shared.dataDir}`);

    const underFile = setup();
    writeFileSync(join(underFile.dir, 'plain'), 'a file');
    const file = join(underFile.dir, 'plain', 'data');
    const run2 = await doctor(underFile, ['--engines', 'shodan', '--data-dir', file]);
    assert.equal(run2.code, 1, run2.stdout + run2.stderr);
    assert.equal(linesOf(run2)[1], `FAIL  data folder ${file}: not a directory (a parent is a file) (check data_dir, --data-dir or OAS_DATA_DIR)`);
  });

  test('an unwritable data folder (run as nobody when root)', async (t) => {
    const dir = tempDir('oas-doctor-locked-');
    chmodSync(dir, 0o755);
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o500);
    const file = join(dir, 'oas.config.json');
    writeFileSync(file, JSON.stringify({ data_dir: locked, dns_servers: upstreams.settings.dns_servers, engines: { provider_20: { ...shodan.fakeSettings(keyed.url), api_key: SHODAN_KEY } } }));
    chmodSync(file, 0o644);
    const uid = process.getuid?.() === 0 ? 65534 : undefined;
    const run = await new Promise<Run>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'doctor', '--config', file, '--engines', 'shodan'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(uid !== undefined ? { uid, gid: uid } : {}),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    }).catch((error: Error) => ({ code: null, stdout: '', stderr: error.message }));
    if (run.code === null || (run.stdout === '' && run.code !== 1)) {
      t.skip(`cannot run oas as another user here: ${run.stderr.trim()}`);
      return;
    }
    noSecret(run, 'unwritable');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.equal(linesOf(run)[1], `FAIL  data folder ${locked}: not writable (permission denied) (check data_dir, --data-dir or OAS_DATA_DIR)`);
    assert.ok(!existsSync(join(locked, 'oas.sqlite')));
  });

  test('usage: an unknown engine, exit 2, one line', async () => {
    const config = setup();
    const run = await doctor(config, ['--engines', 'shodn']);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^oas: --engines: unknown engine: shodn; did you mean shodan\? \(valid engines: .*\)\n$/);
  });
});

describe('POST /api/doctor', () => {
  let upstreams: Upstreams;
  let keyed: FakeHttpServer;
  let server: ServeProcess;
  let config: { dir: string; file: string; dataDir: string };
  const tokens = new Map<string, string>();
  let auditFile: string;

  before(async () => {
    upstreams = await startUpstreams();
    keyed = await startFakeHttp({ ...shodan.fakeRoutes({ key: SHODAN_KEY }) });
    auditFile = join(tempDir('oas-doctor-audit-'), 'audit.jsonl');
    config = configFor(upstreams, { api_token: API_TOKEN, audit_log: auditFile, engines: { provider_20: { ...shodan.fakeSettings(keyed.url), api_key: 'wrong-shodan-key-31337' } } });
    for (const [name, role] of [['ana', 'analyst'], ['ada', 'admin']] as const) {
      const run = await runOas(config.dir, ['users', 'add', name, '--role', role, '--config', config.file]);
      assert.equal(run.code, 0, run.stderr);
      tokens.set(name, run.stdout.trim());
    }
    server = await spawnServe(config.file);
  });

  after(async () => {
    await server?.stop();
    await keyed?.close();
    await upstreams?.close();
  });

  const post = (token: string | undefined, body?: unknown) => fetch(`${server.url}/api/doctor`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

  test('the admin gets the report oas doctor --json prints; an analyst 403 naming the role; no token 401', async () => {
    const answer = await post(tokens.get('ada'), { engines: ['shodan'] });
    assert.equal(answer.status, 200);
    const text = await answer.text();
    for (const secret of SECRETS) assert.ok(!text.includes(secret), 'no secret in the answer');
    const report = JSON.parse(text) as { ok: boolean; lines: string[] };
    assert.equal(report.ok, false);
    const cli = await runOas(config.dir, ['doctor', '--config', config.file, '--engines', 'shodan', '--json']);
    assert.equal(cli.code, 1);
    assert.deepEqual(report, JSON.parse(cli.stdout));
    assert.equal(report.lines.at(-2), 'FAIL  engine provider_20 (shodan): HTTP 401 Unauthorized: Please provide a valid API key. (key refused: check engines.provider_20.api_key or OAS_SHODAN_API_KEY)');

    const whole = await post(API_TOKEN);
    assert.equal(whole.status, 200, 'no body: every usable engine');
    assert.ok(((await whole.json()) as { engines: number }).engines >= 17);

    const analyst = await post(tokens.get('ana'));
    assert.equal(analyst.status, 403);
    assert.deepEqual(await analyst.json(), { error: 'forbidden: ana is an analyst; this needs the admin role (oas users)' });
    assert.equal((await post(undefined)).status, 401);

    const unknown = await post(API_TOKEN, { engines: ['shodn'] });
    assert.equal(unknown.status, 400);
    assert.match(((await unknown.json()) as { error: string }).error, /^engines: unknown engine: shodn; did you mean shodan\?/);

    // The audit trail: an admin's check sends calls upstream.
    const audit = readFileSync(auditFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.action === 'doctor_run');
    assert.deepEqual(audit.map((line) => [line.outcome, line.origin]), [['success', 'api'], ['success', 'api'], ['failure', 'api']]);
    assert.deepEqual([audit[0]!.user, audit[0]!.engines, audit[0]!.calls, audit[0]!.failed], ['ada', 1, 1, ['provider_20']]);
    assert.ok((audit[1]!.engines as number) >= 17);
    assert.match(String(audit[2]!.reason), /^engines: unknown engine: shodn/);
  });
});

describe('docs/doctor.md', () => {
  const DOC = readFileSync(new URL('../../docs/doctor.md', import.meta.url), 'utf8');
  let upstreams: Upstreams;
  let keyed: FakeHttpServer;

  before(async () => {
    upstreams = await startUpstreams();
    keyed = await startFakeHttp({ ...shodan.fakeRoutes({ key: SHODAN_KEY }), ...misp.fakeRoutes({ key: MISP_KEY }) });
  });

  after(async () => {
    await keyed?.close();
    await upstreams?.close();
  });

  test('every oas command of its sh blocks runs, as written, against the fakes: exit 0', async () => {
    const commands = [...DOC.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
      .flatMap((m) => m[1]!.split('\n'))
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line.startsWith('oas '));
    assert.ok(commands.length >= 3, commands.join('\n'));
    const config = configFor(upstreams, {
      engines: {
        provider_20: { ...shodan.fakeSettings(keyed.url), api_key: SHODAN_KEY },
        provider_15: { ...misp.fakeSettings(keyed.url), api_key: MISP_KEY },
      },
    });
    // `oas` on the PATH, run in the folder of oas.config.json as a reader would.
    const bin = join(config.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'oas'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    renameSync(config.file, join(config.dir, 'oas.config.json'));
    for (const command of commands) {
      const run = await runProcess('bash', ['-c', command], { cwd: config.dir, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: config.dir } });
      assert.equal(run.code, 0, `${command}\n${run.stdout}${run.stderr}`);
      noSecret(run, command);
    }
    assert.equal((JSON.parse(readFileSync(join(config.dir, 'doctor.json'), 'utf8')) as { ok: boolean }).ok, true);
  });
});
