/**
 * The `oas` binary as a subprocess: outputs, exit codes, standard input, and `oas serve`
 * finishing an analysis that was interrupted by killing the server.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadCatalog } from '../src/engine/catalog.js';
import { dohHandler } from './fakes/doh.js';
import { runOas, noStack, type Run } from './helpers/cli.js';
import { spawnServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp.js';
import { configFor, startUpstreams, ZONE, type Upstreams } from './helpers/upstreams.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

let upstreams: Upstreams;
let config: ReturnType<typeof configFor>;
/** A directory without oas.config.json, so only --config is read. */
const cwd = tempDir('oas-cli-');

const oas = (args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<Run> => runOas(cwd, args, options);

before(async () => {
  upstreams = await startUpstreams();
  config = configFor(upstreams);
});
after(() => upstreams.close());

describe('oas analyze', () => {
  test('a defanged alert gives a block per observable: verdict, observable, type, engine summaries', async () => {
    const run = await oas(['analyze', 'hxxps://www[.]example[.]com/login and 8.8.8.8', '--engines', 'rdap_whois,reverse_dns,public_dns', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '', 'no spinner when stderr is not a terminal');
    assert.match(run.stdout, /^unknown +https:\/\/www\.example\.com\/login  URL$/m);
    assert.match(run.stdout, /^ {2}reverse_dns +93\.184\.215\.14$/m);
    assert.match(run.stdout, /^unknown +8\.8\.8\.8  IPv4$/m);
    assert.match(run.stdout, /^ {2}reverse_dns +dns\.google$/m);
    for (const text of ['rdap_whois', 'public_dns', 'dns.google']) {
      assert.ok(run.stdout.includes(text), `the output shows ${text}:\n${run.stdout}`);
    }
    assert.match(run.stdout, /2 observable\(s\), 3 engine\(s\)/);
  });

  test('--json prints the API result array with each observable\'s verdict and the analysis\'s marking, and nothing else', async () => {
    const run = await oas(['analyze', 'example.com', '8.8.8.8', '--engines', 'reverse_dns', '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout) as Record<string, unknown>[];
    // Seen before (issue 38): the test before analysed 8.8.8.8 (once, unknown), never example.com.
    const seen = results[1]!.seen as { count: number; first: string; last: string; last_verdict: string; last_analysis_id: string };
    assert.deepEqual([seen.count, seen.last_verdict, seen.first === seen.last], [1, 'unknown', true]);
    assert.match(seen.last_analysis_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(results, [
      { observable: 'example.com', type: 'FQDN', reversed_success: true, reverse_dns: { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] }, seen: null, verdict: 'unknown', reasons: [], tlp: 'AMBER', pap: 'GREEN' },
      { observable: '8.8.8.8', type: 'IPv4', reversed_success: true, reverse_dns: { reverse_dns: ['dns.google'] }, seen, verdict: 'unknown', reasons: [], tlp: 'AMBER', pap: 'GREEN' },
    ]);
  });

  test('text from standard input, with no argument or with "-"', async () => {
    const alert = 'Alert: host 8.8.8.8 contacted www[.]example[.]com\n';
    for (const args of [[], ['-']]) {
      const run = await oas(['analyze', ...args, '--engines', 'reverse_dns', '--json', '--config', config.file], { input: alert });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual((JSON.parse(run.stdout) as { observable: string }[]).map((r) => r.observable), ['8.8.8.8', 'www.example.com']);
    }
  });

  test('without --engines the default engines run: rdap_whois, reverse_dns and provider_11', async () => {
    const run = await oas(['analyze', '1.1.1.1', 'example.com', '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const [ip, domain] = JSON.parse(run.stdout) as Record<string, unknown>[];
    assert.deepEqual(Object.keys(ip!).sort(), ['observable', 'pap', 'provider_11', 'rdap_whois', 'reasons', 'reverse_dns', 'reversed_success', 'seen', 'tlp', 'type', 'verdict']);
    assert.equal((ip!.provider_11 as { ip: string }).ip, '1.1.1.1');
    assert.equal(ip!.rdap_whois, null, 'rdap_whois does not apply to an IP');
    assert.equal((domain!.provider_11 as { ip: string }).ip, '93.184.215.14', 'provider_11 ran on the resolved IP');
    assert.equal(domain!.reversed_ip, '93.184.215.14');
    assert.ok(!('rdap' in domain!), 'the older catalog is never a default');
  });

  test('exit 2 with a clear message for bad input, never a stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [['analyze', 'example.com', '--engines', 'reverse_dns,nope'], /unknown engine: nope \(valid engines: .*reverse_dns/],
      [['analyze', 'nothing to see here', '--engines', 'reverse_dns'], /no observable found/],
      [['analyze', 'example.com', '--engines', ','], /at least one engine/],
      [['analyze', 'example.com', '--frobnicate'], /unknown option '--frobnicate'/],
      [['nosuchcommand'], /unknown command/],
    ];
    for (const [args, message] of cases) {
      const run = await oas([...args, '--config', config.file]);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message);
      assert.equal(run.stdout, '');
      noStack(run.stderr);
    }
  });

  test('an invalid configuration file is exit 2 naming the bad key', async () => {
    const bad = join(cwd, 'bad.json');
    writeFileSync(bad, JSON.stringify({ api_cache_timeout: 'tomorrow' }));
    const run = await oas(['analyze', 'example.com', '--config', bad]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /invalid "api_cache_timeout"/);
    noStack(run.stderr);
  });

  test('exit 1 when every selected engine failed', async () => {
    const broken = configFor(upstreams, { engines: { public_dns: { base_url: 'http://127.0.0.1:1/resolve', retries: 0 } } });
    const run = await oas(['analyze', 'example.com', '--engines', 'public_dns', '--json', '--config', broken.file]);
    assert.equal(run.code, 1);
    const [result] = JSON.parse(run.stdout) as { errors: Record<string, string> }[];
    assert.match(result!.errors.public_dns!, /^connection refused by 127\.0\.0\.1:1 \(is the service up\? check its base_url, or set proxy_url\)$/);
  });
});

describe('oas engines, --help, --version', () => {
  test('engines lists exactly the registered engines; --json has the details', async () => {
    const run = await oas(['engines', '--json', '--config', config.file]);
    assert.equal(run.code, 0, run.stderr);
    const engines = JSON.parse(run.stdout) as { id: string; service: string; tags: string[]; configured: boolean; default: boolean }[];
    const registered = (await loadCatalog()).engines.map((e) => e.id);
    assert.deepEqual(engines.map((e) => e.id), registered);
    for (const id of ['public_dns', 'rdap', 'rdap_whois', 'reverse_dns']) assert.ok(registered.includes(id), id);
    const rdapWhois = engines.find((e) => e.id === 'rdap_whois')!;
    assert.deepEqual(rdapWhois.tags, ['default', 'the service', 'domain', 'free_no_key']);
    assert.equal(rdapWhois.configured, true);
    assert.equal(rdapWhois.default, true);
    assert.equal(engines.find((e) => e.id === 'public_dns')!.service, 'google_dns');
    const table = await oas(['engines', '--config', config.file]);
    assert.match(table.stdout, /^Engine +Service +Types +Configured$/m);
    const wide = await oas(['engines', '--wide', '--config', config.file]);
    assert.match(wide.stdout, /Engine.*Service.*Tags.*Types.*Credentials.*Configured/);
  });

  test('--help and --version everywhere', async () => {
    for (const args of [['--help'], ['analyze', '--help'], ['serve', '--help'], ['engines', '--help']]) {
      const run = await oas(args);
      assert.equal(run.code, 0);
      assert.match(run.stdout, /Usage: oas/);
    }
    const run = await oas(['--version']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout.trim(), version);
  });
});

describe('oas serve', () => {
  const serve = (configFile: string) => spawnServe(configFile, { cwd });

  test('binds 127.0.0.1, and an analysis interrupted by a crash completes after a restart', async () => {
    const slow = configFor(upstreams);
    let calls = 0;
    upstreams.doh.route('GET /resolve', () => {
      calls++;
      return { hang: true };
    });
    let server = await serve(slow.file);
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'example.com', engines: ['public_dns', 'reverse_dns'] }),
      });
      const { analysis_id: id } = (await res.json()) as { analysis_id: string };
      while (calls === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      server.child.kill('SIGKILL');
      await new Promise((resolve) => server.child.once('exit', resolve));

      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
      server = await serve(slow.file);
      let complete = false;
      while (!complete) {
        const status = await fetch(`${server.url}/api/is_analysis_complete/${id}`);
        assert.equal(status.status, 200);
        complete = ((await status.json()) as { complete: boolean }).complete;
        if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const [result] = (await (await fetch(`${server.url}/api/results/${id}`)).json()) as Record<string, unknown>[];
      assert.ok(Array.isArray((result!.public_dns as { Answer: unknown[] }).Answer));
      assert.deepEqual(result!.reverse_dns, { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    } finally {
      await server.stop();
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
  });

  test('with api_token: an analysis interrupted by kill -9 completes after a restart, behind the token', async () => {
    const token = 'cli-kill-token-Vb3Nm8Qw2Er6';
    const auth = { authorization: `Bearer ${token}` };
    const slow = configFor(upstreams, { api_token: token });
    let calls = 0;
    upstreams.doh.route('GET /resolve', () => {
      calls++;
      return { hang: true };
    });
    let server = await serve(slow.file);
    try {
      const refused = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'example.com', engines: ['public_dns'] }),
      });
      assert.equal(refused.status, 401);
      const res = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ text: 'example.com', engines: ['public_dns', 'reverse_dns'] }),
      });
      assert.equal(res.status, 200);
      const { analysis_id: id } = (await res.json()) as { analysis_id: string };
      for (let i = 0; calls === 0; i++) {
        assert.ok(i < 500, 'the analysis reached its upstream');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      server.child.kill('SIGKILL');
      await new Promise((resolve) => server.child.once('exit', resolve));

      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
      server = await serve(slow.file);
      assert.equal((await fetch(`${server.url}/api/is_analysis_complete/${id}`)).status, 401, 'still behind the token');
      let complete = false;
      for (let i = 0; !complete; i++) {
        assert.ok(i < 600, 'the resumed analysis completes');
        const status = await fetch(`${server.url}/api/is_analysis_complete/${id}`, { headers: auth });
        assert.equal(status.status, 200);
        complete = ((await status.json()) as { complete: boolean }).complete;
        if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.match(server.log(), /resumed 1 unfinished analysis/);
      assert.equal((await fetch(`${server.url}/api/results/${id}`)).status, 401);
      const [result] = (await (await fetch(`${server.url}/api/results/${id}`, { headers: auth })).json()) as Record<string, unknown>[];
      assert.ok(Array.isArray((result!.public_dns as { Answer: unknown[] }).Answer));
      assert.deepEqual(result!.reverse_dns, { reverse_dns: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
      assert.ok(!server.log().includes(token), 'no token in the log');
    } finally {
      await server.stop();
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
  });
});
