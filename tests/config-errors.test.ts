/**
 * Configuration mistakes through the `oas` binary as a subprocess (`analyze`, `serve`, `engines`):
 * each is exactly one stderr line `oas: ...` naming the key and what is wrong, exit 2, no stack
 * trace, and nothing done before it (no data directory created, nothing printed on stdout).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { noStack } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh working directory (HOME too), readable by every user. */
function workdir(): string {
  const dir = tempDir('oas-config-errors-');
  chmodSync(dir, 0o755);
  return dir;
}

interface RunOptions {
  env?: Record<string, string>;
  /** Run as this user and group (root only). */
  uid?: number;
  /** Wrap the command: `[...wrap, node, bin, ...args]` (unshare). */
  wrap?: string[];
}

/** `oas args` in `cwd` with only PATH, HOME and `env`; killed after 20 s (a hang guard). */
function oas(cwd: string, args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const command = [...(options.wrap ?? []), process.execPath, BIN, ...args];
    const child = spawn(command[0]!, command.slice(1), {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Exit 2, nothing on stdout, exactly one stderr line `oas: ...` matching `pattern`. */
function assertConfigError(run: Run, pattern: RegExp, what: string): string {
  assert.equal(run.code, 2, `${what}: exit 2\n${run.stderr}`);
  assert.equal(run.stdout, '', `${what}: nothing on stdout`);
  noStack(run.stderr);
  const lines = run.stderr.split('\n');
  assert.equal(lines.length, 2, `${what}: exactly one line:\n${run.stderr}`);
  assert.equal(lines[1], '');
  assert.match(lines[0]!, /^oas: /, what);
  assert.match(lines[0]!, pattern, what);
  return lines[0]!;
}

let written = 0;
/** A configuration file read only through --config (not ./oas.config.json, so the environment tests read none). */
function writeConfig(dir: string, content: unknown): string {
  const file = join(dir, `config-${++written}.json`);
  writeFileSync(file, JSON.stringify(content), { mode: 0o644 });
  return file;
}

/** analyze and serve open the data directory; serve's port 0 so a wrongly started server binds nothing fixed. */
const COMMANDS_WITH_DATA: string[][] = [
  ['analyze', '127.0.0.1', '--engines', 'reverse_dns'],
  ['serve', '--port', '0'],
];
const ALL_COMMANDS: string[][] = [...COMMANDS_WITH_DATA, ['engines']];

describe('data_dir that cannot hold the data', () => {
  test('a file, or a path under a file: "not a directory", exit 2', async () => {
    const dir = workdir();
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'not a directory');
    for (const dataDir of [file, join(file, 'sub')]) {
      const config = writeConfig(dir, { data_dir: dataDir });
      for (const command of COMMANDS_WITH_DATA) {
        const line = assertConfigError(await oas(dir, [...command, '--config', config]), /data_dir .*: not a directory/, `${command[0]} ${dataDir}`);
        assert.ok(line.includes(dataDir), line);
      }
    }
    // The flag and the environment variable are checked the same way.
    assertConfigError(await oas(dir, ['analyze', '8.8.8.8', '--data-dir', file]), /^oas: data_dir .*plain-file: not a directory$/, '--data-dir');
    assertConfigError(await oas(dir, ['serve', '--port', '0'], { env: { OAS_DATA_DIR: file } }), /^oas: data_dir .*plain-file: not a directory$/, 'OAS_DATA_DIR');
  });

  test('a directory the user cannot write to: "not writable", exit 2', async (t) => {
    const dir = workdir();
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    const config = writeConfig(dir, { data_dir: locked });
    // root writes anywhere: run the command as nobody then.
    const uid = process.getuid?.() === 0 ? 65534 : undefined;
    const probe = await oas(dir, ['--version'], { uid });
    if (probe.code !== 0) {
      t.skip(`cannot run oas as another user here: ${probe.stderr.trim()}`);
      return;
    }
    for (const command of COMMANDS_WITH_DATA) {
      assertConfigError(await oas(dir, [...command, '--config', config], { uid }), /^oas: data_dir .*locked: not writable \(permission denied\)$/, command[0]!);
    }
    const sub = writeConfig(dir, { data_dir: join(locked, 'sub') });
    assertConfigError(await oas(dir, ['analyze', '8.8.8.8', '--config', sub], { uid }), /^oas: data_dir .*locked\/sub: cannot be created \(permission denied\)$/, 'analyze, missing directory');
  });

  test('a read-only file system: "not writable (read-only file system)", exit 2', async (t) => {
    const dir = workdir();
    const mount = join(dir, 'ro');
    mkdirSync(mount);
    // A private mount namespace: the read-only tmpfs exists only for that one command.
    const wrap = ['unshare', '--mount', 'sh', '-c', `mount -t tmpfs -o ro,size=64k tmpfs '${mount}' && exec "$@"`, 'sh'];
    const probe = spawnSync(wrap[0]!, [...wrap.slice(1), 'true'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      t.skip(`no private read-only mount here (unshare/mount need root): ${(probe.stderr || String(probe.error)).trim()}`);
      return;
    }
    for (const command of COMMANDS_WITH_DATA) {
      const config = writeConfig(dir, { data_dir: mount });
      assertConfigError(await oas(dir, [...command, '--config', config], { wrap }), /^oas: data_dir .*ro: not writable \(read-only file system\)$/, command[0]!);
      const sub = writeConfig(dir, { data_dir: join(mount, 'data') });
      assertConfigError(await oas(dir, [...command, '--config', sub], { wrap }), /^oas: data_dir .*ro\/data: cannot be created \(read-only file system\)$/, command[0]!);
    }
  });

  test('a database file that is not one: exit 2 naming data_dir and the file', async () => {
    const dir = workdir();
    const notDb = join(dir, 'not-db');
    mkdirSync(notDb);
    writeFileSync(join(notDb, 'oas.sqlite'), 'this is not an SQLite database, just text. '.repeat(200));
    const isDir = join(dir, 'is-dir');
    mkdirSync(join(isDir, 'oas.sqlite'), { recursive: true });
    for (const command of COMMANDS_WITH_DATA) {
      assertConfigError(await oas(dir, [...command, '--config', writeConfig(dir, { data_dir: notDb })]), /^oas: data_dir .*not-db: cannot open the database .*oas\.sqlite \(SQLITE_NOTADB: file is not a database\)$/, command[0]!);
      assertConfigError(await oas(dir, [...command, '--config', writeConfig(dir, { data_dir: isDir })]), /^oas: data_dir .*is-dir: .*oas\.sqlite is not a regular file$/, command[0]!);
    }
  });

  test('a data directory that does not exist yet is created (0700) and used', async () => {
    const dir = workdir();
    const dataDir = join(dir, 'a', 'b', 'data');
    const config = writeConfig(dir, { data_dir: dataDir, engines: { reverse_dns: { timeout_ms: 1000 } }, dns_servers: ['127.0.0.1:9'] });
    const run = await oas(dir, ['analyze', '127.0.0.1', '--engines', 'reverse_dns', '--json', '--config', config]);
    assert.ok(run.code === 0 || run.code === 1, run.stderr);
    assert.ok(existsSync(join(dataDir, 'oas.sqlite')));
    for (const path of [join(dir, 'a'), join(dir, 'a', 'b'), dataDir]) assert.equal(statSync(path).mode & 0o777, 0o700, path);
    assert.deepEqual(readdirSync(dataDir).filter((name) => name.startsWith('.oas-write-test')), [], 'the write test leaves nothing');
  });
});

describe('proxy_url', () => {
  test('anything but an http(s) URL or "" is refused naming proxy_url, from the file and the environment', async () => {
    const dir = workdir();
    const dataDir = join(dir, 'data');
    for (const value of ['proxy.example:3128', 'socks5://127.0.0.1:1080', 'http://', 'not a url', '127.0.0.1:3128']) {
      const config = writeConfig(dir, { data_dir: dataDir, proxy_url: value });
      // Every command for the first value; `engines` (the quickest) for the others.
      for (const command of value === 'proxy.example:3128' ? ALL_COMMANDS : [['engines']]) {
        assertConfigError(await oas(dir, [...command, '--config', config]), /invalid "proxy_url": expected an http:\/\/ or https:\/\/ URL .*or "" for a direct connection$/, `${command[0]} ${value}`);
      }
    }
    for (const name of ['OAS_PROXY_URL', 'PROXY_URL']) {
      assertConfigError(await oas(dir, ['engines'], { env: { [name]: 'socks5://127.0.0.1:1080' } }), new RegExp(`^oas: environment variable ${name}: invalid "proxy_url"`), name);
    }
    assert.ok(!existsSync(dataDir), 'nothing done before the error');
    // A proxy URL may carry credentials: never echoed.
    const secret = writeConfig(dir, { proxy_url: 'ftp://user:hunter2-secret@proxy.example' });
    const line = assertConfigError(await oas(dir, ['engines', '--config', secret]), /"proxy_url"/, 'secret proxy');
    assert.ok(!line.includes('hunter2'), line);
  });

  test('"" (direct) and http(s) URLs are accepted', async () => {
    const dir = workdir();
    for (const value of ['', 'http://127.0.0.1:3128', 'https://user:pw@proxy.example:8443/']) {
      const run = await oas(dir, ['engines', '--config', writeConfig(dir, { proxy_url: value })]);
      assert.equal(run.code, 0, `${value}: ${run.stderr}`);
    }
  });
});

describe('dns_servers', () => {
  test('a string instead of a list says what it expected and what it got', async () => {
    const dir = workdir();
    const config = writeConfig(dir, { data_dir: join(dir, 'data'), dns_servers: '9.9.9.9' });
    for (const command of ALL_COMMANDS) {
      assertConfigError(await oas(dir, [...command, '--config', config]),
        /^oas: configuration file .*: invalid "dns_servers": expected a list of IP addresses \(ip or ip:port\), got a string$/, command[0]!);
    }
    assert.ok(!existsSync(join(dir, 'data')));
  });

  test('entries that are not IP addresses, from the file and the environment', async () => {
    const dir = workdir();
    for (const [value, got] of [[['999.1.1.1'], '"999.1.1.1"'], [['dns.google'], '"dns.google"'], [['1.1.1.1:70000'], '"1.1.1.1:70000"'], [[53], 'a number']] as const) {
      const line = assertConfigError(await oas(dir, ['engines', '--config', writeConfig(dir, { dns_servers: value })]), /invalid "dns_servers\.0": expected an IP address \(ip or ip:port\)/, JSON.stringify(value));
      assert.ok(line.endsWith(`got ${got}`), line);
    }
    assertConfigError(await oas(dir, ['analyze', '8.8.8.8'], { env: { OAS_DNS_SERVERS: '9.9.9.9,resolver' } }),
      /^oas: environment variable OAS_DNS_SERVERS: invalid "dns_servers\.1": expected an IP address \(ip or ip:port\), got "resolver"$/, 'OAS_DNS_SERVERS');
    for (const good of [['9.9.9.9'], ['149.112.112.112:53', '[2620:fe::fe]:53', '2620:fe::9']]) {
      const run = await oas(dir, ['engines', '--config', writeConfig(dir, { dns_servers: good })]);
      assert.equal(run.code, 0, run.stderr);
    }
  });
});

describe('unknown settings', () => {
  test('a misspelled top-level key names it and suggests the closest one', async () => {
    const dir = workdir();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ api_cache_timout: 60 }, /: api_cache_timout: unknown setting; did you mean api_cache_timeout\?$/],
      [{ dns_server: ['9.9.9.9'] }, /: dns_server: unknown setting; did you mean dns_servers\?$/],
      [{ proxyurl: '' }, /: proxyurl: unknown setting; did you mean proxy_url\?$/],
      [{ API_TOKEN: 'x' }, /: API_TOKEN: unknown setting; did you mean api_token\?$/],
      [{ unknow_key: 1 }, /: unknow_key: unknown setting \(known settings: .*api_cache_timeout.*\)$/],
    ];
    for (const [content, pattern] of cases) {
      const config = writeConfig(dir, { data_dir: join(dir, 'data'), ...content });
      for (const command of content === cases[0]![0] ? ALL_COMMANDS : [['engines']]) assertConfigError(await oas(dir, [...command, '--config', config]), pattern, `${command[0]} ${Object.keys(content)[0]}`);
    }
    assert.ok(!existsSync(join(dir, 'data')));
  });

  test('a misspelled engine setting names engines.<id>.<key> and suggests the closest one', async () => {
    const dir = workdir();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ provider_24: { apikey: 'x' } }, /: engines\.provider_24\.apikey: unknown setting; did you mean api_key\?$/],
      [{ virustotal: { api_kye: 'x' } }, /: engines\.virustotal\.api_kye: unknown setting; did you mean api_key\?$/],
      [{ rdap_whois: { whois_sever: 'whois.example:43' } }, /: engines\.rdap_whois\.whois_sever: unknown setting; did you mean whois_server\?$/],
      [{ bad_asn: { refresh_hour: 1 } }, /: engines\.bad_asn\.refresh_hour: unknown setting; did you mean refresh_hours\?$/],
      [{ public_dns: { timeout: 100 } }, /: engines\.public_dns\.timeout: unknown setting \(known settings: .*timeout_ms.*\)$/],
      [{ search_engine: { searchurl: 'https://x.example' } }, /: engines\.search_engine\.searchurl: unknown setting; did you mean search_url\?$/],
      [{ provider_14: { tenantid: 'x' } }, /: engines\.provider_14\.tenantid: unknown setting; did you mean tenant_id\?$/],
      [{ provider_24: { zzzzzzzz: 'x' } }, /: engines\.provider_24\.zzzzzzzz: unknown setting \(known settings: api_key, base_url, /],
      [{ virustotl: { api_key: 'x' } }, /: invalid "engines\.virustotl": unknown engine; did you mean virustotal\?$/],
    ];
    for (const [engines, pattern] of cases) {
      const config = writeConfig(dir, { data_dir: join(dir, 'data'), engines });
      for (const command of engines === cases[0]![0] ? ALL_COMMANDS : [['engines']]) assertConfigError(await oas(dir, [...command, '--config', config]), pattern, `${command[0]} ${JSON.stringify(engines)}`);
    }
    assert.ok(!existsSync(join(dir, 'data')));
  });

  test('OAS_ENGINES is checked the same way and named; other OAS_* variables are ignored', async () => {
    const dir = workdir();
    const line = assertConfigError(await oas(dir, ['engines'], { env: { OAS_ENGINES: '{"provider_24": {"apikey": "secret-value-123"}}' } }),
      /^oas: environment variable OAS_ENGINES: engines\.provider_24\.apikey: unknown setting; did you mean api_key\?$/, 'OAS_ENGINES');
    assert.ok(!line.includes('secret-value-123'));
    const run = await oas(dir, ['engines', '--json'], { env: { OAS_NOT_A_SETTING: '1', OAS_ENGINES: '{"virustotal": {"api_key": "k"}}' } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { id: string; configured: boolean }[]).find((e) => e.id === 'provider_24')?.configured, true);
  });

  test('every setting the docs document for an engine is accepted, in both catalogs', async () => {
    const dir = workdir();
    const url = 'http://127.0.0.1:9/x';
    const engines = {
      reverse_dns: { timeout_ms: 1000, concurrency: 2, retries: 0, rate_limit: 10, rate_window_ms: 1000, quota_max_wait_ms: 0 },
      rdap_whois: { bootstrap_url: url, whois_iana_server: '127.0.0.1:43', whois_server: '' },
      rdap: { bootstrap_url: url },
      provider_01: { zone: 'abuse-contacts.abusix.zone' },
      provider_07: { base_url: url, user_agent: 'ua' },
      provider_09: { base_url: url, max_results: 5, user_agent: 'ua' },
      provider_10: { base_url: url, max_results: 5 },
      provider_17: { base_url: url, user_agent: 'ua' },
      bad_asn: { spamhaus_url: url, brianhama_url: url, lethal_forensics_url: url, refresh_hours: 24, refresh_retry_minutes: 10 },
      provider_04: { client_id: 'i', client_secret: 's', base_url: url, falcon_url: url },
      provider_14: { tenant_id: 't', client_id: 'i', client_secret: 's', base_url: url, login_url: url, resource: url },
      provider_06: { base_url: url, api_key: 'k' },
      search_engine: { api_key: 'k', cx: 'c', base_url: url, search_url: url, user_agent: 'ua' },
      provider_21: { api_key: 'k', base_url: url },
      ipapi: { api_key: 'k' },
    };
    for (const catalog of ['main', 'older']) {
      const run = await oas(dir, ['engines', '--catalog', catalog, '--config', writeConfig(dir, { engines })]);
      assert.equal(run.code, 0, `${catalog}: ${run.stderr}`);
    }
  });
});

describe('every key: one line, no raw schema message', () => {
  test('wrong types for every top-level key give "invalid "<key>": expected ..."', async () => {
    const dir = workdir();
    const keys = ['api_prefix', 'api_cache_timeout', 'data_dir', 'host', 'port', 'max_body_bytes', 'dns_servers', 'proxy_url', 'ssl_verify',
      'concurrency', 'engine_timeout_ms', 'api_token', 'allow_unauthenticated', 'allowed_hosts', 'cors_origins', 'rate_limit_per_minute',
      'max_observables', 'log_format', 'redis_url', 'worker_concurrency', 'job_lock_ms', 'catalog', 'engines'];
    for (const key of keys) {
      const value = key === 'engines' ? 12 : { a: [1] };
      const line = assertConfigError(await oas(dir, ['engines', '--config', writeConfig(dir, { [key]: value })]), new RegExp(`invalid "${key}": expected `), key);
      assert.doesNotMatch(line, /Invalid \w+: |Expected |Received /, `${key}: a message of our own: ${line}`);
    }
  });
});
