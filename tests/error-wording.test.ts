/**
 * Errors a person can act on (issue 21): each kind of network failure names what failed, where,
 * and what to check, with the same words in the CLI (table and --json) and the API's `errors`.
 * Against loopback fakes: a DNS server that answers NXDOMAIN, a refused port, a silent port
 * (accepts, never answers) and an upstream that answers 401 to the key.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeDns, type FakeDnsServer } from './fakes/dns.js';
import { startFakeHttp, type FakeHttpServer } from './fakes/http.js';
import { runOas, noStack } from './helpers/cli.js';
import { freePort } from './helpers/redis.js';
import { completedResults, spawnServe, startAnalysis, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { engineHarness } from './helpers/engine.js';
import Keyv from 'keyv';
import { Catalog } from '../src/engine/catalog.js';
import { HttpTransport } from '../src/http/client.js';
import { EngineRunner } from '../src/runner/runner.js';
import { keyvEngineStore } from '../src/store/engine-store.js';
import { defineEngine, type EngineContext } from '../src/engine/contract.js';
import { errorReason } from '../src/http/oauth.js';
import { redact } from '../src/http/redact.js';
import { upstreamReason } from '../src/http/refusal.js';
import type { Observable } from '../src/observables/types.js';

const KEY = 'ipinfo-key-Wq8xZ2mN5pR7';
let dns: FakeDnsServer;
let refusedPort: number;
let silent: Server;
const sockets = new Set<Socket>();
let unauthorized: FakeHttpServer;
let cwd: string;
let config: string;
let server: ServeProcess;

/** A base_url whose host has a label of 64 characters (63 at most). */
const LONG_LABEL = `${'a'.repeat(64)}.urlscan.test`;

/** The five failures, one engine each, and what its error must say. */
function cases(): [engine: string, observable: string, expected: RegExp][] {
  const silentPort = (silent.address() as { port: number }).port;
  return [
    ['provider_13', '8.8.8.8', /^cannot resolve api\.ipquery\.test: no DNS answer \(offline\? set proxy_url or dns_servers\)$/],
    ['provider_11', '8.8.4.4', new RegExp(`^connection refused by 127\\.0\\.0\\.1:${refusedPort} \\(is the service up\\? check its base_url, or set proxy_url\\)$`)],
    ['public_dns', 'example.com', new RegExp(`^timeout after 700 ms waiting for 127\\.0\\.0\\.1:${silentPort} \\(limit: engines\\.public_dns\\.timeout_ms or engine_timeout_ms\\)$`)],
    ['provider_12', '1.1.1.1', /^HTTP 401 Unauthorized: Unknown token: Please provide a valid token\. \(key refused: check engines\.provider_12\.api_key or OAS_IPINFO_API_KEY\)$/],
    ['provider_23', '9.9.9.9', new RegExp(`^${LONG_LABEL.replace(/\./g, '\\.')} is not a valid host name: a label of 64 characters, 63 at most \\(check engines\\.provider_23\\.base_url\\)$`)],
  ];
}

before(async () => {
  dns = await startFakeDns({}); // every name: NXDOMAIN
  refusedPort = await freePort(); // bound, then closed: nothing listens on it
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  unauthorized = await startFakeHttp({ 'GET /ipinfo/*': { status: 401, json: { status: 401, error: { title: 'Unknown token', message: 'Please provide a valid token.' } } } });
  cwd = tempDir('oas-wording-');
  config = join(cwd, 'oas.config.json');
  writeFileSync(config, JSON.stringify({
    data_dir: join(cwd, 'data'),
    dns_servers: [dns.address],
    engines: {
      provider_13: { base_url: `http://api.ipquery.test:${refusedPort}`, retries: 0 },
      provider_11: { base_url: `http://127.0.0.1:${refusedPort}`, retries: 0 },
      public_dns: { base_url: `http://127.0.0.1:${(silent.address() as { port: number }).port}/resolve`, timeout_ms: 700, retries: 0 },
      provider_12: { base_url: `${unauthorized.url}/ipinfo`, api_key: KEY, retries: 0 },
      provider_23: { base_url: `http://${LONG_LABEL}:${refusedPort}/api/v1/search/`, retries: 0 },
    },
  }));
  server = await spawnServe(config, { cwd });
});

after(async () => {
  await server?.stop();
  for (const socket of sockets) socket.destroy();
  await Promise.all([dns?.close(), unauthorized?.close(), new Promise((done) => silent ? silent.close(done) : done(undefined))]);
});

describe('each failure says what failed, where, and what to check', () => {
  test('oas analyze --json: one line per engine, no key', async () => {
    for (const [engine, observable, expected] of cases()) {
      const run = await runOas(cwd, ['analyze', observable, '--engines', engine, '--json', '--config', config]);
      assert.equal(run.code, 1, run.stderr);
      noStack(run.stderr);
      const [result] = JSON.parse(run.stdout) as { errors: Record<string, string> }[];
      assert.match(result!.errors[engine]!, expected, engine);
      assert.ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), 'the key never shows');
    }
  });

  test('the API errors use the same words', async () => {
    for (const [engine, observable, expected] of cases()) {
      const id = await startAnalysis(server.url, observable, [engine]);
      const results = await completedResults<{ errors?: Record<string, string> }>(server.url, id);
      assert.match(results[0]!.errors![engine]!, expected, engine);
      assert.ok(!JSON.stringify(results).includes(KEY));
    }
  });

  test('the terminal table shows them whole', async () => {
    const [, , refusal] = cases()[3]!;
    const run = await runOas(cwd, ['analyze', '1.1.1.1', '--engines', 'provider_12', '--config', config], { env: { COLUMNS: '200' } });
    assert.equal(run.code, 1, run.stderr);
    const line = run.stdout.split('\n').find((l) => l.includes('error: '));
    assert.ok(line, run.stdout);
    assert.match(line.slice(line.indexOf('error: ') + 'error: '.length).trim(), refusal);
  });

  test('not configured names the setting and its environment variable', async () => {
    const run = await runOas(cwd, ['analyze', '1.1.1.1', '--engines', 'virustotal', '--json', '--config', config]);
    const [result] = JSON.parse(run.stdout) as { errors: Record<string, string> }[];
    assert.equal(result!.errors.virustotal, 'not configured: engines.provider_24.api_key or OAS_VIRUSTOTAL_API_KEY');
  });
});

describe('a timeout names the request it was waiting for, never one already answered', () => {
  test('an answered request, then a wait on something else: no host named', async () => {
    const fake = await startFakeHttp({ 'GET /first': { json: { ok: true } } });
    const engine = defineEngine({
      id: 'two_steps',
      service: 'two_steps',
      label: 'Two steps',
      description: 'test engine: one HTTP request, then a wait that never ends',
      tags: ['IP'],
      types: ['IPv4'],
      defaults: { timeout_ms: 300, base_url: fake.url },
      summary: () => '',
      run: async (_o: Observable, ctx) => {
        await ctx.http.request(`${String(ctx.settings.base_url)}/first`);
        return new Promise<never>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }));
      },
    });
    const harness = engineHarness(engine);
    try {
      await assert.rejects(harness.run('192.0.2.1', 'IPv4'), (error: Error) => {
        assert.equal(error.message, 'timeout after 300 ms');
        return true;
      });
    } finally {
      await Promise.all([harness.close(), fake.close()]);
    }
  });
});

describe('an upstream\'s long reason: its first sentence, secrets masked (issue 32)', () => {
  const SECRET = 'sk-live. Zq81-secret';
  const http = { redact: (text: string) => redact(text, [SECRET]) } as unknown as EngineContext['http'];
  const ctx = { http } as unknown as EngineContext;

  test('refusal.ts: the first sentence of a long message, the rest (advice, links, ids) left out; a short one whole', () => {
    assert.equal(upstreamReason(JSON.stringify({ message: 'Invalid API key. Please visit https://example.test/account to get a new one. Request id 42.' }), ctx), 'Invalid API key.');
    assert.equal(upstreamReason(JSON.stringify({ error: { title: 'Forbidden', message: 'Your plan does not include this endpoint. Upgrade at https://example.test/pricing.' } }), ctx),
      'Forbidden: Your plan does not include this endpoint.');
    assert.equal(upstreamReason('Key expired, e.g. after 90 days without a call. Renew it in your account at https://example.test/keys.', ctx),
      'Key expired, e.g. after 90 days without a call.', 'an abbreviation does not end a sentence');
    assert.equal(upstreamReason('api v1.2 is gone', ctx), 'api v1.2 is gone');
    assert.equal(upstreamReason(JSON.stringify({ message: 'Missing application roles. API required roles: Ip.Read.All' }), ctx),
      'Missing application roles. API required roles: Ip.Read.All', 'short: whole');
  });

  test('refusal.ts: a secret holding ". " is masked before the cut', () => {
    assert.equal(upstreamReason(JSON.stringify({ detail: `Key ${SECRET} refused. Check it in your account settings, then try again: https://example.test/keys.` }), ctx), 'Key *** refused.');
  });

  test('oauth.ts: the description\'s first sentence without the OAuth code, trace and correlation ids left out, on one line or several', () => {
    const description = 'AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app \'0000\'.';
    const trace = 'Trace ID: 7c1f Correlation ID: 9a2b Timestamp: 2026-01-09 10:00:00Z';
    for (const text of [`${description} ${trace}`, `${description}\r\n${trace}`]) {
      assert.equal(errorReason(JSON.stringify({ error: 'invalid_client', error_description: text, error_codes: [7000215] }), http), 'AADSTS7000215: Invalid client secret provided.');
    }
    assert.equal(errorReason(JSON.stringify({ error: 'invalid_client' }), http), 'invalid_client', 'the code alone when there is no description');
    assert.equal(errorReason(JSON.stringify({ errors: [{ code: 401, message: `access denied, invalid client ${SECRET}. Create a new API client in the Falcon console.` }] }), http), 'access denied, invalid client ***.');
  });
});

describe('a host name that cannot be one says so, and which setting holds it (issue 32)', () => {
  const hostEngine = defineEngine({
    id: 'provider_98',
    service: 'hostcheck',
    label: 'Host check',
    description: 'test engine: one GET of its base_url',
    tags: ['IP'],
    types: ['IPv4'],
    defaults: { timeout_ms: 5000, base_url: 'http://127.0.0.1:9/' },
    summary: () => '',
    run: async (_o: Observable, ctx) => {
      await ctx.http.request(String(ctx.settings.base_url));
      return null;
    },
  });
  const label64 = 'b'.repeat(64);
  const long = Array.from({ length: 26 }, () => 'abcdefghi').join('.');
  const bad: [host: string, expected: string][] = [
    [`${label64}.example.test`, `${label64}.example.test is not a valid host name: a label of 64 characters, 63 at most`],
    [`${long}.test`, `${long.slice(0, 60)}…${`${long}.test`.slice(-20)} is not a valid host name: 264 characters, 253 at most`],
    ['api..example.test', 'api..example.test is not a valid host name: an empty label (two dots in a row)'],
    ['api!.example.test', 'api!.example.test is not a valid host name: "!" in a label (letters, digits, "-" and "_" only)'],
  ];

  // dns_servers (c-ares) refuses these names with EBADNAME; the system's resolver with EINVAL or ENOTFOUND.
  for (const [resolver, dnsServers] of [['dns_servers', () => [dns.address]], ['the system resolver', () => []]] as const) {
    test(`through ${resolver}: what is wrong with the name, and engines.<id>.base_url; not retried`, async () => {
      const transport = new HttpTransport({ dnsServers: dnsServers() });
      try {
        for (const [host, expected] of bad) {
          const runner = new EngineRunner({
            catalog: [hostEngine],
            services: { transport, dnsServers: dnsServers(), dataDir: '/nonexistent', storeFor: (id) => keyvEngineStore(new Keyv(), id) },
            cache: new Keyv(),
            cacheTtlSeconds: 0,
            concurrency: 4,
            engineSettings: { provider_98: { base_url: `http://${host}:${refusedPort}/v1`, retries: 2 } },
          });
          const started = Date.now();
          const [result] = await runner.analyze([{ value: '9.9.9.9', type: 'IPv4' }], new Catalog([hostEngine]).select(['provider_98']));
          assert.equal(result!.errors?.provider_98, `${expected} (check engines.provider_98.base_url)`, host);
          assert.ok(Date.now() - started < 900, 'no retry back-off for a name that will never resolve');
        }
      } finally {
        await transport.close();
      }
    });
  }
});
