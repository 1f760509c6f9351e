/**
 * SIGHUP (issue 25): `oas serve` as a subprocess reads its configuration file again and applies
 * it to the analyses started after it, over real HTTP against a loopback VirusTotal fake that
 * records the key of every call. A new engine key applies to the next analysis; an analysis in
 * flight (its calls held by the fake) finishes with the old key while the next one uses the new;
 * an invalid file is refused with one line on stderr (no secret in it) and the old configuration
 * still serves; a changed port says it needs a restart and the server stays where it was; a new
 * custom engine appears in /ui/engines and runs; a new api_token applies (the old token and its
 * sessions refused). With Redis: `oas worker` reloads too, for the jobs it takes after.
 * The reload is awaited by its line on stderr; no timing assertion.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeHttp, type FakeHttpServer, type FakeRequest } from './fakes/http.js';
import { ipAddress } from './fakes/virustotal.js';
import { noStack } from './helpers/cli.js';
import { freePort, redisSkip, startRedis, type RedisServer } from './helpers/redis.js';
import { spawnServe, spawnWorker, type ServeProcess, type WorkerProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';

const TOKEN_1 = 'reload-test-token-one-8c1d2e';
const TOKEN_2 = 'reload-test-token-two-5b7f0a';
const KEY_A = 'vt-key-AAAA-0123456789abcdef';
const KEY_B = 'vt-key-BBBB-fedcba9876543210';
const KEY_C = 'vt-key-CCCC-00aa11bb22cc33dd';
const PREFIX = '/vt/api/v3';

/** Polls `check` until it holds (20 s at most: a bound, not a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, what: () => string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  assert.fail(`never: ${what()}`);
}

/** The loopback VirusTotal: answers every key (it records them), holding the calls for `held` addresses. */
class FakeVirusTotal {
  server!: FakeHttpServer;
  readonly held = new Set<string>();
  private release: (() => void) | undefined;
  private gate: Promise<void> = Promise.resolve();

  async start(): Promise<void> {
    this.server = await startFakeHttp({
      [`GET ${PREFIX}/ip_addresses/*`]: async (req: FakeRequest) => {
        const ip = req.path.slice(req.path.lastIndexOf('/') + 1);
        if (this.held.has(ip)) await this.gate;
        return { status: 200, json: ipAddress(ip) };
      },
      'GET /custom/ip/*': (req: FakeRequest) => ({ status: 200, json: { data: { score: 42, ip: req.path.slice('/custom/ip/'.length) } } }),
    });
  }

  hold(...ips: string[]): void {
    for (const ip of ips) this.held.add(ip);
    this.gate = new Promise((done) => (this.release = done));
  }

  open(): void {
    this.held.clear();
    this.release?.();
  }

  /** The x-apikey of each call for `ip`, in order. */
  keysFor(ip: string): string[] {
    return this.server.hits(`GET ${PREFIX}/ip_addresses/${ip}`).map((r) => String(r.headers['x-apikey']));
  }
}

const OUTCOME = /configuration (?:not )?reloaded: [^\n]*\n/g;

/** SIGHUP, then the lines written from it up to its outcome line ("configuration reloaded" or "not reloaded"). */
async function reload(process: { child: ChildProcess; log(): string }): Promise<string[]> {
  const before = process.log().length;
  const seen = () => [...process.log().slice(before).matchAll(OUTCOME)].length;
  process.child.kill('SIGHUP');
  await until(() => seen() > 0, () => `a reload line after SIGHUP in:\n${process.log().slice(before)}`);
  const text = process.log().slice(before);
  const end = text.search(OUTCOME) + text.match(OUTCOME)![0].length;
  return text.slice(0, end).split('\n').filter((line) => line !== '' && !/ (GET|POST|HEAD) \//.test(line));
}

async function api(url: string, path: string, init: RequestInit & { token?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  return fetch(`${url}${path}`, { ...init, headers });
}

async function start(url: string, token: string, text: string, engines: string[]): Promise<string> {
  const res = await api(url, '/api/analyze', { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, engines, ignore_cache: true }) });
  const body = (await res.json()) as { analysis_id?: string; error?: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.analysis_id!;
}

type Result = Record<string, unknown> & { observable: string; errors?: Record<string, string> };

async function results(url: string, token: string, id: string): Promise<Result[]> {
  await until(async () => ((await (await api(url, `/api/is_analysis_complete/${id}`, { token })).json()) as { complete: boolean }).complete, () => `analysis ${id} complete`);
  return (await (await api(url, `/api/results/${id}`, { token })).json()) as Result[];
}

async function analyze(url: string, token: string, text: string, engines: string[]): Promise<Result[]> {
  return results(url, token, await start(url, token, text, engines));
}

describe('oas serve: SIGHUP', () => {
  const vt = new FakeVirusTotal();
  let dir: string;
  let file: string;
  let port: number;
  let server: ServeProcess;
  /** The configuration as last written. */
  let settings: Record<string, unknown>;

  const write = (changes: Record<string, unknown>) => {
    settings = { ...settings, ...changes };
    writeFileSync(file, JSON.stringify(settings, null, 2));
  };
  const vtSettings = (key: string) => ({ base_url: `${vt.server.url}${PREFIX}`, api_key: key, rate_limit: 100_000, concurrency: 1 });

  before(async () => {
    await vt.start();
    dir = tempDir('oas-reload-');
    file = join(dir, 'oas.config.json');
    port = await freePort();
    settings = { data_dir: join(dir, 'data'), port, api_token: TOKEN_1, engines: { virustotal: vtSettings(KEY_A) } };
    write({});
    server = await spawnServe(file, { port: null });
  });

  after(async () => {
    vt.open();
    await server?.stop();
    await vt.server.close();
  });

  test('a new engine key applies to the next analysis', async () => {
    const [first] = await analyze(server.url, TOKEN_1, '8.8.4.4', ['virustotal']);
    assert.equal(first!.errors, undefined, JSON.stringify(first));
    assert.deepEqual(vt.keysFor('8.8.4.4'), [KEY_A]);

    write({ engines: { virustotal: vtSettings(KEY_B) } });
    const lines = await reload(server);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /info: configuration reloaded: engines\.provider_24\.api_key changed \(for analyses started from now on\)$/);
    assert.ok(!server.log().includes(KEY_B) && !server.log().includes(KEY_A), 'no key in the log');

    const [second] = await analyze(server.url, TOKEN_1, '8.8.4.4', ['virustotal']);
    assert.equal(second!.errors, undefined, JSON.stringify(second));
    assert.deepEqual(vt.keysFor('8.8.4.4'), [KEY_A, KEY_B]);
  });

  test('an analysis in flight finishes with the key it started with; the next one uses the new', async () => {
    // engines.virustotal.concurrency 1: the second address's call waits for the first, held by the
    // fake, so it is made after the reload.
    vt.hold('1.0.0.11');
    const inFlight = await start(server.url, TOKEN_1, '1.0.0.11 1.0.0.12', ['virustotal']);
    await until(() => vt.keysFor('1.0.0.11').length === 1, () => 'the first call held by the fake');

    write({ engines: { virustotal: vtSettings(KEY_C) } });
    const lines = await reload(server);
    assert.match(lines.at(-1)!, /configuration reloaded: engines\.provider_24\.api_key changed/);

    const next = await start(server.url, TOKEN_1, '1.0.0.13', ['virustotal']);
    vt.open();
    const old = await results(server.url, TOKEN_1, inFlight);
    assert.deepEqual(old.map((r) => [r.observable, r.errors]), [['1.0.0.11', undefined], ['1.0.0.12', undefined]]);
    assert.deepEqual(vt.keysFor('1.0.0.11'), [KEY_B]);
    assert.deepEqual(vt.keysFor('1.0.0.12'), [KEY_B], 'called after the reload, with the key of its analysis');
    const [fresh] = await results(server.url, TOKEN_1, next);
    assert.equal(fresh!.errors, undefined);
    assert.deepEqual(vt.keysFor('1.0.0.13'), [KEY_C]);
  });

  test('an invalid file is refused with one line, no secret in it, and the old configuration still serves', async () => {
    const good = settings;
    const cases: [string, string, RegExp][] = [
      ['not JSON', `{"api_token": ${KEY_A}zz}`, /error: configuration not reloaded: configuration file \S+oas\.config\.json is not valid JSON: Unexpected token 'v'; the old configuration stays$/],
      ['a bad value', JSON.stringify({ ...good, max_observables: 0 }), /error: configuration not reloaded: configuration file \S+oas\.config\.json: invalid "max_observables": expected a number of at least 1, got 0; the old configuration stays$/],
      ['an unknown key', JSON.stringify({ ...good, engines: { virustotal: { ...vtSettings(KEY_A), api_kye: KEY_A } } }), /error: configuration not reloaded: configuration file \S+: engines\.virustotal\.api_kye: unknown setting; did you mean api_key\?; the old configuration stays$/],
      ['an unknown engine in a set', JSON.stringify({ ...good, engine_sets: { triage: ['virustotal', 'nope'] } }), /error: configuration not reloaded: configuration file \S+: .*nope.*; the old configuration stays$/],
      ['no token on a public address', JSON.stringify({ ...good, api_token: '', host: '0.0.0.0' }), /error: configuration not reloaded: refusing to serve on 0\.0\.0\.0 without an API token: .*; the old configuration stays$/],
    ];
    for (const [what, text, expected] of cases) {
      writeFileSync(file, text);
      const lines = await reload(server);
      assert.equal(lines.length, 1, `${what}: ${lines.join('\n')}`);
      assert.match(lines[0]!, expected, what);
      noStack(lines[0]!);
      for (const secret of [KEY_A, KEY_B, KEY_C, TOKEN_1]) assert.ok(!lines[0]!.includes(secret), `${what}: no secret in ${lines[0]}`);
    }
    // Still the old token and key.
    assert.equal((await api(server.url, '/api/results/x', { token: TOKEN_1 })).status, 404);
    const [result] = await analyze(server.url, TOKEN_1, '9.9.9.9', ['virustotal']);
    assert.equal(result!.errors, undefined);
    assert.deepEqual(vt.keysFor('9.9.9.9'), [KEY_C]);
    write({});
  });

  test('a changed port needs a restart: one line, and the server stays where it was', async () => {
    const other = await freePort();
    write({ port: other, rate_limit_per_minute: 500 });
    const lines = await reload(server);
    assert.deepEqual(lines.map((l) => l.replace(/^\S+ /, '')), [
      'error: port changed: needs a restart; the old value stays',
      'info: configuration reloaded: rate_limit_per_minute changed (for analyses started from now on)',
    ]);
    assert.equal(new URL(server.url).port, String(port));
    assert.equal((await api(server.url, '/api/results/x', { token: TOKEN_1 })).status, 404);
    await assert.rejects(fetch(`http://127.0.0.1:${other}/healthz`));
    // Nothing else changed since: the port is still named, nothing reloads.
    const again = await reload(server);
    assert.deepEqual(again.map((l) => l.replace(/^\S+ /, '')), [
      'error: port changed: needs a restart; the old value stays',
      'info: configuration reloaded: nothing changed',
    ]);
    write({ port });
  });

  test('a new custom engine appears in /ui/engines and runs', async () => {
    const listed = async () => ((await (await api(server.url, '/ui/engines', { token: TOKEN_1 })).json()) as { engines: { id: string }[] }).engines.map((e) => e.id);
    assert.ok(!(await listed()).includes('teamintel'));
    const refused = await api(server.url, '/api/analyze', { method: 'POST', token: TOKEN_1, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '1.0.0.21', engines: ['teamintel'] }) });
    assert.equal(refused.status, 400);
    write({
      custom_engines: { teamintel: { label: 'Team intel', types: ['IPv4'], request: { url: `${vt.server.url}/custom/ip/{value}` }, fields: { score: '/data/score' }, summary: 'score {score}' } },
      engine_sets: { team: ['teamintel', 'virustotal'] },
    });
    const lines = await reload(server);
    assert.match(lines.at(-1)!, /configuration reloaded: custom_engines\.teamintel, engine_sets\.team changed/);
    assert.ok((await listed()).includes('teamintel'));
    const [result] = await analyze(server.url, TOKEN_1, '1.0.0.21', ['@team']);
    assert.deepEqual(result!.teamintel, { score: 42 });
    assert.equal(result!.errors, undefined);
  });

  test('a new api_token applies: the old one and its sessions are refused, the new one accepted', async () => {
    // A browser signed in with the old token.
    const signin = await fetch(`${server.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: TOKEN_1, next: '/' }),
    });
    assert.equal(signin.status, 303);
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    assert.equal((await api(server.url, '/ui/engines', { headers: { cookie } })).status, 200);

    write({ api_token: TOKEN_2 });
    const lines = await reload(server);
    assert.match(lines.at(-1)!, /configuration reloaded: api_token changed/);
    assert.equal((await api(server.url, '/ui/engines', { token: TOKEN_1 })).status, 401);
    assert.equal((await api(server.url, '/ui/engines', { headers: { cookie } })).status, 401);
    assert.equal((await api(server.url, '/ui/engines', { token: TOKEN_2 })).status, 200);
    const [result] = await analyze(server.url, TOKEN_2, '1.0.0.31', ['virustotal']);
    assert.equal(result!.errors, undefined);
    for (const secret of [TOKEN_1, TOKEN_2, KEY_A, KEY_B, KEY_C]) assert.ok(!server.log().includes(secret), 'no secret in the log');
    noStack(server.log());
  });
});

describe('oas worker: SIGHUP', { skip: redisSkip }, () => {
  const vt = new FakeVirusTotal();
  let redis: RedisServer;
  let serve: ServeProcess;
  let worker: WorkerProcess;
  let file: string;

  before(async () => {
    await vt.start();
    redis = await startRedis();
    const dir = tempDir('oas-reload-worker-');
    file = join(dir, 'oas.config.json');
    const config = (key: string) => ({ data_dir: join(dir, 'data'), redis_url: redis.url, engines: { virustotal: { base_url: `${vt.server.url}${PREFIX}`, api_key: key, rate_limit: 100_000 } } });
    writeFileSync(file, JSON.stringify(config(KEY_A)));
    serve = await spawnServe(file, { args: ['--no-worker'] });
    worker = await spawnWorker(file);
    // The worker's configuration changes; the server's (same file, read at its start) has not reloaded.
    writeFileSync(file, JSON.stringify({ ...config(KEY_B), worker_concurrency: 3 }));
  });

  after(async () => {
    await worker?.stop();
    await serve?.stop();
    await redis?.close();
    await vt.server.close();
  });

  test('the jobs taken after it use the new key; worker_concurrency needs a restart', async () => {
    const [before] = await analyze(serve.url, '', '8.8.8.8', ['virustotal']);
    assert.equal(before!.errors, undefined);
    assert.deepEqual(vt.keysFor('8.8.8.8'), [KEY_A]);
    const lines = await reload({ child: worker.child, log: worker.stderr });
    assert.deepEqual(lines, [
      'oas worker: worker_concurrency changed: needs a restart; the old value stays',
      'oas worker: configuration reloaded: engines.provider_24.api_key changed (for analyses started from now on)',
    ]);
    const [after] = await analyze(serve.url, '', '8.8.4.4', ['virustotal']);
    assert.equal(after!.errors, undefined);
    assert.deepEqual(vt.keysFor('8.8.4.4'), [KEY_B]);
    assert.ok(!worker.log().includes(KEY_B), 'no key in the log');
  });
});
