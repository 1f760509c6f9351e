/**
 * `oas analyze --server URL`: the CLI as a subprocess running its analysis on (a) a real
 * `oas serve` subprocess, without and with `api_token`, and (b) a loopback server answering as
 * the reference implementation does (tests/fakes/cyberbro-server.ts), quirks included; plus the
 * failures: unreachable, 401, 404, 5xx, invalid JSON, an analysis that never completes. Loopback
 * only, no timing assertion (the time limits given are only what ends the waits).
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeCyberbro, type FakeCyberbro } from './fakes/cyberbro-server.js';
import { reply, sequence, startFakeHttp, type FakeRoute } from './fakes/http.js';
import { noStack, runOas, type Run } from './helpers/cli.js';
import { moduleRecorder } from './helpers/module-log.js';
import { spawnServe, type ServeProcess } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, type Upstreams } from './helpers/upstreams.js';

const TOKEN = 'remote-cli-token-Qx7Lm2Vb9Tz4Kp1';
const cwd = tempDir('oas-remote-');
const oas = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> => runOas(cwd, args, options);

let upstreams: Upstreams;
let config: ReturnType<typeof configFor>;
let open: ServeProcess;
let guarded: ServeProcess;
const fakes: { close(): Promise<void> }[] = [];

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams);
  // The guarded server also has a broken public_dns, for "every engine failed".
  const withToken = configFor(upstreams, { api_token: TOKEN, engines: { public_dns: { base_url: 'http://127.0.0.1:9/resolve', retries: 0 } } });
  [open, guarded] = await Promise.all([spawnServe(config.file, { cwd }), spawnServe(withToken.file, { cwd })]);
});
after(async () => {
  await Promise.all([open?.stop(), guarded?.stop(), ...fakes.map((f) => f.close())]);
  await upstreams?.close();
});

/** The table without its last line (the footer names the analysis). */
/** A result's `seen` in the JSON output (issue 38), null or an object, with its line break. */
const SEEN_JSON = /^ {4}"seen": (null|\{[^}]*\}),\n/gm;
/** The "seen" line of a block (issue 38). */
const SEEN_LINE = /^ {12}seen (once,|\d+ times) .*\n/gm;
/** The observables' blocks and the verdict counts; the footer's lines after them, joined by " · ". */
const verdictsLine = (lines: string[]) => lines.findIndex((l) => l.startsWith('Verdicts: '));
/** The blocks and the verdicts' line (a local table's marking line above them left out: the remote one has it only with --tlp and --pap). */
const tableOf = (stdout: string) => {
  const lines = stdout.trimEnd().split('\n');
  if (lines[0]?.startsWith('TLP:')) lines.splice(0, 2);
  return lines.slice(0, verdictsLine(lines) + 1).join('\n');
};
const footerOf = (stdout: string) => {
  const lines = stdout.trimEnd().split('\n');
  return lines.slice(verdictsLine(lines) + 1).join(' · ');
};
/** The block of one observable: its verdict first, then the observable, type and engine lines. */
const blockOf = (stdout: string, observable: string) =>
  stdout.split('\n\n').find((b) => new RegExp(`^(malicious|suspicious|clean|unknown) +${observable.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `).test(b)) ?? '';

async function cyberbro(options: Parameters<typeof startFakeCyberbro>[0] = {}): Promise<FakeCyberbro> {
  const fake = await startFakeCyberbro(options);
  fakes.push(fake);
  return fake;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('oas analyze --server: against oas serve', () => {
  test('--json gives exactly what the local mode gives (the marking too, when --tlp and --pap name it)', async () => {
    const args = ['analyze', 'example.com and 8.8.8.8', '--engines', 'reverse_dns,rdap_whois', '--tlp', 'GREEN', '--pap', 'GREEN', '--json'];
    const local = await oas([...args, '--config', config.file]);
    const remote = await oas([...args, '--server', open.url]);
    assert.equal(local.code, 0, local.stderr);
    assert.equal(remote.code, 0, remote.stderr);
    assert.equal(remote.stderr, '', 'no spinner when stderr is not a terminal');
    // Seen before (issue 38): the server's store is the local one (one data_dir), and the local
    // analysis came first: the remote one counts it. The rest is the same, formatting included.
    const remoteResults = JSON.parse(remote.stdout) as { seen: { count: number } | null }[];
    const localResults = JSON.parse(local.stdout) as { seen: { count: number } | null }[];
    remoteResults.forEach((result, i) => assert.equal(result.seen?.count, (localResults[i]!.seen?.count ?? 0) + 1));
    const unseen = (text: string) => text.replace(SEEN_JSON, '');
    assert.deepEqual(JSON.parse(unseen(remote.stdout)), JSON.parse(unseen(local.stdout)));
    assert.equal(unseen(remote.stdout), unseen(local.stdout), 'same formatting');
  });

  test('the table is the local one; the footer names the analysis and its page', async () => {
    const args = ['analyze', 'hxxps://www[.]example[.]com/login and 8.8.8.8', '--engines', 'rdap_whois,reverse_dns,public_dns'];
    const local = await oas([...args, '--config', config.file]);
    const remote = await oas([...args, '--server', open.url]);
    assert.equal(remote.code, 0, remote.stderr);
    // The seen lines (issue 38) say what the store held before each run: the remote run counts the local one.
    assert.equal(tableOf(remote.stdout).replace(SEEN_LINE, ''), tableOf(local.stdout).replace(SEEN_LINE, ''));
    assert.match(blockOf(remote.stdout, '8.8.8.8'), /^ {12}seen (once, on|\d+ times since) \d{4}-\d\d-\d\d, (last )?unknown$/m);
    assert.match(footerOf(remote.stdout), /^2 observable\(s\), 3 engine\(s\) · analysis ([0-9a-f-]{36}) · http:\/\/127\.0\.0\.1:\d+\/results\/\1$/);
    assert.ok(remote.stdout.includes('dns.google'));
  });

  test('without --engines the local default engines run there, by id; text from standard input', async () => {
    const run = await oas(['analyze', '-', '--json', '--server', open.url], { input: 'host 1.1.1.1 seen\n' });
    assert.equal(run.code, 0, run.stderr);
    const [ip] = JSON.parse(run.stdout) as Record<string, unknown>[];
    assert.deepEqual(Object.keys(ip!).sort(), ['observable', 'provider_11', 'rdap_whois', 'reasons', 'reverse_dns', 'reversed_success', 'seen', 'type', 'verdict']);
  });

  test('OAS_SERVER, and every form of the URL and prefix', async () => {
    const host = open.url;
    const forms: [string[], Record<string, string>][] = [
      [[], { OAS_SERVER: host }],
      [['--server', `${host}/api`], {}],
      [['--server', `${host}/api/`], {}],
      [['--server', host, '--prefix', 'api'], {}],
      [['--server', host, '--prefix', '/api/'], {}],
      [['--server', host.replace('http://', '')], {}],
    ];
    for (const [flags, env] of forms) {
      const run = await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--json', ...flags], { env });
      assert.equal(run.code, 0, `${flags.join(' ')}: ${run.stderr}`);
      assert.deepEqual((JSON.parse(run.stdout) as { reverse_dns: unknown }[])[0]!.reverse_dns, { reverse_dns: ['dns.google'] });
    }
  });

  test('the server\'s 400 is exit 2 with its message; a wrong prefix is exit 1', async () => {
    const unknown = await oas(['analyze', 'example.com', '--engines', 'reverse_dns,nope', '--server', open.url]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^oas: unknown engine: nope \(valid engines: .*reverse_dns.*\)\n$/);
    assert.equal(unknown.stdout, '');
    const nothing = await oas(['analyze', 'nothing to see here', '--engines', 'reverse_dns', '--server', open.url]);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /no observable found/);
    const wrong = await oas(['analyze', 'example.com', '--server', `${open.url}/v2/api`]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^oas: no analysis API at http:\/\/127\.0\.0\.1:\d+\/v2\/api\/analyze \(HTTP 404 Not Found\): check the server URL and --prefix\n$/);
    for (const run of [unknown, nothing, wrong]) noStack(run.stderr);
  });

  test('remote mode opens no local database and loads neither undici nor Hono', async () => {
    const dir = mkdtempSync(join(cwd, 'modules-'));
    const log = join(dir, 'modules.log');
    const recorder = moduleRecorder(dir);
    const run = await runOas(dir, ['analyze', 'example.com', '--engines', 'reverse_dns,rdap_whois', '--server', open.url], { nodeArgs: recorder.nodeArgs, env: recorder.env(log) });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /reverse_dns/);
    const modules = recorder.read(log);
    assert.ok(modules.some((m) => m.includes('/node_modules/commander/')), 'the hook records modules');
    for (const name of ['undici', 'hono', '@hono/node-server', 'sqlite3', '@keyv/sqlite', 'keyv']) {
      assert.ok(!modules.some((m) => m.includes(`/node_modules/${name}/`)), `${name} not loaded`);
    }
    assert.ok(!modules.some((m) => /\/dist\/src\/(store|server)\//.test(m)), 'neither the storage nor the server');
  });
});

describe('oas analyze --server: an oas server with api_token', () => {
  test('without a token: exit 1 naming --token and OAS_API_TOKEN', async () => {
    const run = await oas(['analyze', 'example.com', '--engines', 'reverse_dns', '--server', guarded.url]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^oas: the server at http:\/\/127\.0\.0\.1:\d+ needs an API token \(HTTP 401 Unauthorized\): give it with --token or OAS_API_TOKEN\n$/);
    assert.equal(run.stdout, '');
  });

  test('a wrong token: exit 1, and the token is never printed', async () => {
    const wrong = 'wrong-token-Zp8Wq3Xc6Vb1';
    const run = await oas(['analyze', 'example.com', '--engines', 'reverse_dns', '--server', guarded.url, '--token', wrong]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /refused the API token \(HTTP 401 Unauthorized\): check --token or OAS_API_TOKEN/);
    assert.ok(!run.stderr.includes(wrong) && !run.stdout.includes(wrong));
    noStack(run.stderr);
  });

  test('the token from --token or OAS_API_TOKEN is sent as a Bearer token', async () => {
    const viaFlag = await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--server', guarded.url, '--token', TOKEN]);
    const viaEnv = await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--server', guarded.url], { env: { OAS_API_TOKEN: TOKEN } });
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.deepEqual((JSON.parse(viaFlag.stdout) as { reverse_dns: unknown }[])[0]!.reverse_dns, { reverse_dns: ['dns.google'] });
    assert.match(viaEnv.stdout, /dns\.google/);
    for (const run of [viaFlag, viaEnv]) assert.ok(!run.stdout.includes(TOKEN) && !run.stderr.includes(TOKEN));
  });

  test('exit 1 when every lookup failed on the server, with its errors', async () => {
    const run = await oas(['analyze', 'example.com', '--engines', 'public_dns', '--json', '--server', guarded.url], { env: { OAS_API_TOKEN: TOKEN } });
    assert.equal(run.code, 1, run.stderr);
    const [result] = JSON.parse(run.stdout) as { errors: Record<string, string> }[];
    assert.match(result!.errors.public_dns!, /^connection refused by 127\.0\.0\.1:9 /);
    const table = await oas(['analyze', 'example.com', '--engines', 'public_dns', '--server', guarded.url, '--token', TOKEN]);
    assert.equal(table.code, 1);
    assert.match(table.stdout, /error: connection refused by 127\.0\.0\.1:9/);
    assert.match(footerOf(table.stdout), /1 engine\(s\), 1 failed lookup\(s\)/);
  });
});

describe('oas analyze --server: against the reference (Cyberbro)', () => {
  test('complete before the record exists, [] while running: the final results, table with summaries', async () => {
    const fake = await cyberbro({ missingPolls: 1, runningPolls: 3 });
    const run = await oas(['analyze', 'example.com 8.8.8.8 not-an-engine', '--engines', 'reverse_dns,rdap,ipapi,not_an_engine', '--server', fake.url]);
    assert.equal(run.code, 0, run.stderr);
    const table = tableOf(run.stdout);
    assert.match(blockOf(table, 'example.com'), /^\S+ +example\.com  FQDN/);
    assert.match(blockOf(table, 'example.com'), /^ {2}rdap_whois +RESERVED-Internet Assigned Numbers Authority/m, 'rdap runs as rdap_whois; its summary from the local engine');
    assert.match(blockOf(table, 'example.com'), /^ {2}ipapi +15133 Edgecast Inc\./m, 'post-pivot engine on the resolved IP');
    assert.match(blockOf(table, '8.8.8.8'), /^\S+ +8\.8\.8\.8  IPv4\n(.*\n)* {2}reverse_dns +dns\.google/, 'HEAD\'s IPV4 shown as IPv4');
    assert.doesNotMatch(table, /extension|not_an_engine/);
    assert.match(footerOf(run.stdout), /^2 observable\(s\), 4 engine\(s\) · analysis [0-9a-f-]{36} · http:\/\/127\.0\.0\.1:\d+\/results\/[0-9a-f-]{36}$/);
    const [post] = fake.requests.filter((r) => r.method === 'POST');
    assert.equal(post!.path, '/api/analyze');
    assert.deepEqual(JSON.parse(post!.body), { text: 'example.com 8.8.8.8 not-an-engine', engines: ['reverse_dns', 'rdap', 'ipapi', 'not_an_engine'], ignore_cache: false });
    const results = fake.requests.filter((r) => r.path.includes('/results/'));
    assert.ok(results.length >= 2, 'the early [] was not taken for the results');
  });

  test('results 404 until the record exists: polls on; --json is the server\'s array as it sent it', async () => {
    const fake = await cyberbro({ missingPolls: 4, runningPolls: 0 });
    const run = await oas(['analyze', 'user@example.org 1.1.1.1', '--engines', 'virustotal,abuseipdb', '--json', '--ignore-cache', '--server', fake.url]);
    assert.equal(run.code, 0, run.stderr);
    const judged = JSON.parse(run.stdout) as Record<string, unknown>[];
    // Each element as the server sent it, with the verdict of its normalised form after it.
    const results = judged.map(({ verdict, reasons, ...sent }) => {
      assert.ok(['malicious', 'suspicious', 'clean', 'unknown'].includes(verdict as string));
      assert.ok(Array.isArray(reasons));
      return sent;
    });
    assert.deepEqual(judged.map((r) => r.verdict), ['unknown', 'clean'], 'judged from the normalised result (IPV4 is IPv4)');
    assert.match((judged[1]!.reasons as string[]).join('\n'), /^virustotal: /);
    assert.deepEqual(results.map((r) => [r.observable, r.type]), [['user@example.org', 'EMAIL'], ['1.1.1.1', 'IPV4']]);
    assert.deepEqual(results[0], { extension: {}, observable: 'user@example.org', reversed_success: false, type: 'EMAIL' }, 'no key for engines that do not take the type');
    assert.deepEqual(results.find((r) => r.observable === '1.1.1.1'), {
      abuseipdb: null, extension: {}, observable: '1.1.1.1', reversed_success: false, type: 'IPV4',
      virustotal: { community_score: 0, detection_ratio: '0/94', link: 'https://www.virustotal.com/gui/search/1.1.1.1', total_malicious: 0 },
    });
    assert.ok(fake.requests.some((r) => r.path.includes('/results/')), 'results asked');
    assert.equal(JSON.parse(fake.requests.find((r) => r.method === 'POST')!.body).ignore_cache, true);
  });

  test('v0.11 type names, and a token is sent (and ignored) as a Bearer token', async () => {
    const fake = await cyberbro({ version: 'v0.11' });
    const run = await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--server', fake.url, '--token', TOKEN]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(blockOf(run.stdout, '8.8.8.8'), /^\S+ +8\.8\.8\.8  IPv4\n(.*\n)* {2}reverse_dns +dns\.google/);
    assert.ok(fake.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`));
    assert.ok(!run.stdout.includes(TOKEN) && !run.stderr.includes(TOKEN));
  });

  test('prefix forms: API_PREFIX "/api/", "tools/api"', async () => {
    const slashes = await cyberbro({ prefix: '/api/' });
    const nested = await cyberbro({ prefix: 'tools/api' });
    const runs = [
      await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--server', slashes.url]),
      await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--server', `${nested.url}/tools/api`]),
      await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--server', nested.url, '--prefix', '/tools/api/']),
    ];
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal((JSON.parse(run.stdout) as { reversed_success: boolean }[])[0]!.reversed_success, true);
    }
    assert.ok(nested.requests.every((r) => r.path.startsWith('/tools/api/')));
    const wrong = await oas(['analyze', '8.8.8.8', '--server', nested.url]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^oas: no analysis API at http:\/\/127\.0\.0\.1:\d+\/api\/analyze \(HTTP 404 Not Found\)/);
  });

  test('an engine unknown locally gets a generic summary', async () => {
    const fake = await cyberbro({ engines: { shiny_new_engine: (o) => ({ verdict: 'benign', score: 3, tags: ['cdn', 'dns'], raw: { a: 1 }, value: o.value }) } });
    const run = await oas(['analyze', '8.8.8.8', '--engines', 'shiny_new_engine', '--server', fake.url]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}shiny_new_engine +score: 3; tags: cdn, dns; value: 8\.8\.8\.8; verdict: benign$/m);
  });

  test('no observable in the text: exit 2, as locally', async () => {
    const fake = await cyberbro();
    const run = await oas(['analyze', 'nothing here', '--engines', 'reverse_dns', '--server', fake.url]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^oas: no observable found in the text/);
    assert.equal(run.stdout, '');
  });

  test('an analysis that never completes, or whose record never appears: --timeout, exit 1', async () => {
    const hung = await cyberbro({ neverComplete: true });
    const lost = await cyberbro({ missingPolls: Number.POSITIVE_INFINITY });
    for (const fake of [hung, lost]) {
      const run = await oas(['analyze', '8.8.8.8', '--engines', 'reverse_dns', '--server', fake.url, '--timeout', '1']);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^oas: analysis [0-9a-f-]{36} did not complete on http:\/\/127\.0\.0\.1:\d+ within 1 s \(--timeout\); it may still finish there\n$/);
      assert.equal(run.stdout, '');
    }
  });
});

describe('oas analyze --server: failures are one line, never a hang', () => {
  test('unreachable server', async () => {
    const port = await closedPort();
    const run = await oas(['analyze', 'example.com', '--server', `http://127.0.0.1:${port}`]);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `oas: cannot reach the server at http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });

  test('5xx, invalid JSON, 429, 401 echoing the token, a server that never answers', async () => {
    const id = '3f1c2a9e-0000-4000-8000-000000000001';
    const accepted = reply.json({ analysis_id: id, link: `/results/${id}` });
    const cases: [Record<string, FakeRoute>, RegExp, string[]?][] = [
      [{ 'POST /api/analyze': reply.status(500, { error: 'internal error' }) }, /^oas: the server at \S+ failed \(HTTP 500 Internal Server Error\): internal error\n$/],
      [{ 'POST /api/analyze': reply.html('<h1>Bad Gateway</h1>', 502) }, /^oas: the server at \S+ failed \(HTTP 502 Bad Gateway\)\n$/],
      [{ 'POST /api/analyze': reply.malformed() }, /^oas: the answer to POST \/api\/analyze from \S+ is not valid JSON \(HTTP 200\)\n$/],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: reply.html('<html>') }, /^oas: the answer to GET \/api\/is_analysis_complete\/\S+ from \S+ is not valid JSON \(HTTP 200\)\n$/],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: reply.json({ complete: true }), [`GET /api/results/${id}`]: reply.json({ not: 'an array' }) }, /not a result array/],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: reply.json({ complete: true }), [`GET /api/results/${id}`]: reply.json([null]) }, /^oas: analysis \S+ has no result for any of its observables\n$/],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: sequence(reply.json({ complete: false }), reply.status(503, { error: 'draining' })) }, /failed \(HTTP 503 Service Unavailable\): draining/],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: reply.status(404, { error: 'not found' }) }, /^oas: analysis \S+ not found on \S+ \(HTTP 404\)\n$/],
      [{ 'POST /api/analyze': reply.tooMany(42) }, /rate limiting analyses \(HTTP 429 Too Many Requests\): retry in 42 s/],
      [{ 'POST /api/analyze': (req) => reply.status(401, { error: `bad token ${String(req.headers.authorization)}` }) }, /refused the API token \(HTTP 401 Unauthorized\)/, ['--token', TOKEN]],
      [{ 'POST /api/analyze': reply.hang() }, /^oas: no answer from the server at \S+ within 1 s \(--timeout\)\n$/, ['--timeout', '1']],
      [{ 'POST /api/analyze': accepted, [`GET /api/is_analysis_complete/${id}`]: reply.hang() }, /did not complete .* within 1 s \(--timeout\)/, ['--timeout', '1']],
    ];
    for (const [routes, message, extra] of cases) {
      const server = await startFakeHttp(routes);
      try {
        const run = await oas(['analyze', 'example.com', '--engines', 'reverse_dns', '--server', server.url, ...(extra ?? [])]);
        assert.equal(run.code, 1, `${message}: ${run.stderr}`);
        assert.match(run.stderr, message);
        assert.equal(run.stderr.split('\n').length, 2, 'one line');
        assert.ok(!run.stderr.includes(TOKEN), 'the token is masked');
        assert.equal(run.stdout, '');
      } finally {
        await server.close();
      }
    }
  });

  test('usage errors are exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--server', 'ftp://127.0.0.1/'], /--server must be an http:\/\/ or https:\/\/ URL/],
      [['--server', 'http://user:secret@127.0.0.1:8080'], /must not hold credentials/],
      [['--server', 'http://[bad'], /--server \(or OAS_SERVER\) must be the server's URL/],
      [['--server', 'http://127.0.0.1:8080', '--timeout', 'soon'], /--timeout must be a number of seconds/],
      [['--server', 'http://127.0.0.1:8080', '--timeout', '0'], /--timeout must be a number of seconds/],
      [['--server', 'http://127.0.0.1:8080', '--token', 'two words'], /the token \(--token\) must be printable ASCII without spaces/],
      [['--server', 'http://127.0.0.1:8080', '--engines', ','], /at least one engine/],
      [['--token', TOKEN], /--token needs --server URL \(or OAS_SERVER\)/],
      [['--timeout', '5'], /--timeout needs --server/],
    ];
    for (const [flags, message] of cases) {
      const run = await oas(['analyze', 'example.com', ...flags]);
      assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.ok(!run.stderr.includes('secret') && !run.stderr.includes(TOKEN));
      noStack(run.stderr);
    }
  });
});
