/**
 * No credential ever leaves the process except to its own upstream. Every engine that takes a
 * credential gets a recognisable one; the CLI (table and --json) and the server are driven
 * through success, 401, 429, 500, a timeout and a malformed answer; then the keys are looked
 * for in everything a user or another tool can see: stdout, stderr, API answers, the pages and
 * their JSON, the exports,
 * and the SQLite files (cache, analyses).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadCatalog } from '../src/engine/catalog.js';
import type { EngineDefinition } from '../src/engine/contract.js';
import { reply, startFakeHttp, type FakeHttpServer, type FakeReply, type FakeRoute } from './fakes/http.js';
import { intelRoutes, intelSettings } from './fakes/intel.js';
import { BIN, spawnServe } from './helpers/serve.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TEXT = '8.8.8.8 example.com https://www.example.com/login?id=1 44d88612fea8a8f36de82e1278abb02f alice@example.com';

interface FakeModule {
  fakeRoutes(): Record<string, FakeRoute>;
  fakeSettings(url: string): Record<string, unknown>;
  /** OAuth fakes: the access tokens they issued, secrets as much as the keys. */
  issuedTokens?(): string[];
}

let keyed: EngineDefinition[];
/** Engine id -> its fake module (tests/fakes/<service>.ts), or the shared intel fake. */
const fakes = new Map<string, FakeModule>();
/** Every credential value configured, to look for. */
const secrets: string[] = [];
let upstreams: Upstreams;
const servers: FakeHttpServer[] = [];
const seen: string[] = [];

/** A recognisable value for every secret credential (a self-hosted server's base_url is no secret: its fake sets it). */
function credentialsOf(engine: EngineDefinition): Record<string, string> {
  return Object.fromEntries(engine.credentials
    .filter((c) => c.secret !== false)
    .map((c) => [c.setting, `OASSECRET-${engine.id}-${c.setting}-9f3b7c2e`]));
}

/** `engines.<id>` settings for every keyed engine pointing at the fake at `url`, with the keys. */
function settingsFor(url: string, extra: Record<string, unknown> = {}): Record<string, Record<string, unknown>> {
  return Object.fromEntries(keyed.map((engine) => [engine.id, { ...fakes.get(engine.id)!.fakeSettings(url), ...credentialsOf(engine), ...extra }]));
}

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** The configured credentials and every token the fakes issued so far. */
function allSecrets(): string[] {
  return [...secrets, ...[...fakes.values()].flatMap((fake) => fake.issuedTokens?.() ?? [])];
}

function assertNoSecret(text: string, where: string): void {
  for (const secret of allSecrets()) {
    assert.ok(!text.includes(secret), `${where} contains the credential ${secret}`);
    assert.ok(!text.includes(encodeURIComponent(secret)), `${where} contains the URL-encoded credential ${secret}`);
  }
}

before(async () => {
  const catalog = await loadCatalog();
  keyed = catalog.engines.filter((e) => e.credentials.length > 0);
  for (const engine of keyed) {
    const path = fileURLToPath(new URL(`./fakes/${engine.service}.js`, import.meta.url));
    if (existsSync(path)) fakes.set(engine.id, (await import(path)) as FakeModule);
    else if (intelSettings('')[engine.id]) fakes.set(engine.id, { fakeRoutes: intelRoutes, fakeSettings: (url) => intelSettings(url)[engine.id]! });
    // An engine without a fake would talk to its real upstream: the first test fails instead.
    secrets.push(...Object.values(credentialsOf(engine)));
  }
  upstreams = await startUpstreams();
});

after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await upstreams.close();
});

describe('credentials never leave the process', () => {
  test('every keyed engine has a fake and a credential to look for', () => {
    assert.ok(keyed.length >= 1);
    for (const engine of keyed) assert.ok(fakes.has(engine.id), engine.id);
  });

  const modes: [string, FakeReply | undefined][] = [
    ['success', undefined],
    ['401', reply.status(401, { error: 'Invalid API key', message: 'The key you sent is not valid' })],
    ['403', reply.status(403, { error: { code: 403, message: 'API key not valid. Please pass a valid API key.' } })],
    ['429', reply.tooMany(0)],
    ['500', reply.status(500)],
    ['timeout', reply.hang()],
    ['malformed', reply.malformed()],
  ];

  for (const [mode, failure] of modes) {
    test(`${mode}: CLI table, --json and the SQLite file hold no credential`, async () => {
      const routes: Record<string, FakeRoute> = failure ? { '/*': failure } : Object.assign({}, ...keyed.map((e) => fakes.get(e.id)!.fakeRoutes()));
      const fake = await startFakeHttp(routes);
      servers.push(fake);
      const config = configFor(upstreams, { engines: settingsFor(fake.url, { timeout_ms: 1000 }) });
      const engines = keyed.map((e) => e.id).join(',');
      for (const format of [['--json'], []]) {
        const result = await run(['analyze', TEXT, '--engines', engines, '--ignore-cache', '--config', config.file, ...format]);
        seen.push(result.out);
        assertNoSecret(result.out, `oas analyze ${format.join(' ')} (${mode})`);
        if (format.length > 0) {
          const results = JSON.parse(result.out.slice(0, result.out.lastIndexOf(']') + 1)) as { errors?: Record<string, string> }[];
          const errors = results.flatMap((r) => Object.values(r.errors ?? {}));
          if (mode === 'success') assert.deepEqual(errors, [], 'every keyed engine answered');
          else assert.ok(errors.length > 0, `${mode}: the failures are reported`);
        }
      }
      for (const file of readdirSync(config.dataDir).filter((f) => f.startsWith('oas.sqlite'))) {
        assertNoSecret(readFileSync(join(config.dataDir, file), 'latin1'), `${file} (${mode})`);
      }
      // The keys really were configured and sent: the fake saw them.
      if (mode === 'success') {
        assert.ok(secrets.some((s) => JSON.stringify(fake.requests).includes(s)), 'keys reach the upstream');
        assert.ok(allSecrets().length > secrets.length, 'the OAuth fakes issued tokens, looked for as well');
      }
    });
  }

  test('the server: API answers, the pages, their JSON, the exports and the log hold no credential', async () => {
    const fake = await startFakeHttp({ '/*': reply.status(401, { error: 'bad key' }) });
    servers.push(fake);
    const config = configFor(upstreams, { engines: settingsFor(fake.url, { timeout_ms: 1000 }) });
    const server = await spawnServe(config.file);
    const { url } = server;
    try {
      const res = await fetch(`${url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: TEXT, engines: keyed.map((e) => e.id) }),
      });
      const { analysis_id: id } = (await res.json()) as { analysis_id: string };
      let complete = false;
      while (!complete) {
        complete = ((await (await fetch(`${url}/api/is_analysis_complete/${id}`)).json()) as { complete: boolean }).complete;
        if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const results = await (await fetch(`${url}/api/results/${id}`)).text();
      assert.match(results, /HTTP 401/);
      assertNoSecret(results, 'API results');
      for (const page of [`/results/${id}`, `/ui/analyses/${id}`, `/export/${id}?format=csv`, `/export/${id}?format=json`, '/ui/engines', '/ui/history']) {
        assertNoSecret(await (await fetch(`${url}${page}`)).text(), page);
      }
    } finally {
      await server.stop();
    }
    assertNoSecret(server.log(), 'server log');
  });

  test('oas engines says which engines are configured, never the credential', async () => {
    const config = configFor(upstreams, { engines: settingsFor('http://127.0.0.1:9') });
    for (const args of [['engines'], ['engines', '--json']]) {
      const result = await run([...args, '--config', config.file]);
      assertNoSecret(result.out, `oas ${args.join(' ')}`);
    }
    const listed = JSON.parse((await run(['engines', '--json', '--config', config.file])).out) as { id: string; configured: boolean }[];
    for (const engine of keyed) assert.equal(listed.find((e) => e.id === engine.id)!.configured, true, engine.id);
  });
});
