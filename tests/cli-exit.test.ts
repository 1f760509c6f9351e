/**
 * How `oas analyze` ends, and what it leaves behind: quietly when its reader goes away
 * (`| head -1`), exit 1 when every engine call failed (DNS failures too), and an interrupted
 * CLI analysis is not picked up and re-run by an `oas serve` sharing the data directory.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { openStorage } from '../src/store/storage.js';
import type { AnalysisRecord } from '../src/store/analysis-store.js';
import { dohHandler } from './fakes/doh.js';
import { noStack, runOas } from './helpers/cli.js';
import { BIN, spawnServe } from './helpers/serve.js';
import { tempDir, tmpEnv } from './helpers/temp.js';
import { configFor, startUpstreams, ZONE, type Upstreams } from './helpers/upstreams.js';

let upstreams: Upstreams;
const cwd = tempDir('oas-cli-exit-');

before(async () => {
  upstreams = await startUpstreams();
});
after(() => upstreams.close());

/** Bounded wait for a condition (fails the test with `what` when it never holds). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(condition(), what);
}

/** `oas args` whose standard output is closed by its reader after the first chunk. */
function runClosingStdout(args: string[], input: string): Promise<{ code: number | null; signal: string | null; stderr: string; received: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let received = 0;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`oas ${args.join(' ')} did not end after its reader went away`));
    }, 20_000);
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', (chunk: Buffer) => {
      received = chunk.length;
      child.stdout.destroy(); // `| head -c N`: the reader is gone
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      // stderr may still hold data after exit: wait for it to close.
      if (child.stderr.closed) resolve({ code, signal, stderr, received });
      else child.stderr.once('close', () => resolve({ code, signal, stderr, received }));
    });
    child.stdin.end(input);
  });
}

describe('oas analyze | head -1', () => {
  // 2000 hashes: an output of a few hundred kilobytes, far more than a pipe holds, so the
  // writer meets the closed pipe. reverse_dns does not apply to hashes: nothing is called.
  const hashes = Array.from({ length: 2000 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('\n');

  test('the reader going away ends the command quietly: exit 0, no EPIPE, no stack, no "unexpected error"', async () => {
    const config = configFor(upstreams);
    for (const format of [['--json'], []]) {
      const run = await runClosingStdout(['analyze', '--engines', 'reverse_dns', ...format, '--config', config.file], hashes);
      assert.ok(run.received > 0, 'the first chunk was written');
      assert.equal(run.signal, null, `${format.join('') || 'table'}: not killed by a signal`);
      assert.equal(run.code, 0, `${format.join('') || 'table'}: ${run.stderr}`);
      assert.equal(run.stderr, '', `${format.join('') || 'table'}: nothing on stderr`);
    }
  });
});

/** `127.0.0.1:<port>` of a UDP port nobody listens on. */
async function deadUdpAddress(): Promise<string> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

describe('exit code 1 when every engine call failed, DNS failures included', () => {
  test('dns_servers pointing at a dead port: reverse_dns fails for every observable, exit 1', async () => {
    const config = configFor(upstreams, { dns_servers: [await deadUdpAddress()], engines: { reverse_dns: { timeout_ms: 1000 } } });
    const run = await runOas(cwd, ['analyze', '8.8.8.8', 'example.com', '--engines', 'reverse_dns', '--json', '--config', config.file]);
    assert.equal(run.code, 1, run.stderr);
    noStack(run.stderr);
    const results = JSON.parse(run.stdout) as { reverse_dns: unknown; errors?: Record<string, string> }[];
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.reverse_dns, null);
      assert.match(result.errors?.reverse_dns ?? '', /DNS/);
    }
  });

  test('the IP engines of a domain whose resolution failed fail with it ("reverse_dns failed: ..."), exit 1', async () => {
    const config = configFor(upstreams, { dns_servers: [await deadUdpAddress()], engines: { reverse_dns: { timeout_ms: 1000 } } });
    upstreams.intel.reset();
    const run = await runOas(cwd, ['analyze', 'example.com', '--engines', 'reverse_dns,provider_11', '--json', '--config', config.file]);
    assert.equal(run.code, 1, run.stderr);
    const [result] = JSON.parse(run.stdout) as { provider_11: unknown; errors: Record<string, string> }[];
    assert.equal(result!.provider_11, null);
    assert.equal(result!.errors.provider_11, `reverse_dns failed: ${result!.errors.reverse_dns}`);
    assert.equal(upstreams.intel.hits('POST /ipapi').length, 0, 'no call without an address');
    // The same with a working resolver: the answer is there (nothing was cached as "no data").
    const working = configFor(upstreams);
    const again = await runOas(cwd, ['analyze', 'example.com', '--engines', 'reverse_dns,provider_11', '--json', '--config', working.file]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as { provider_11: { ip: string } }[])[0]!.provider_11.ip, '93.184.215.14');
  });
});

describe('an interrupted oas analyze is not re-run by oas serve', () => {
  test('only the server\'s own unfinished analyses resume; the CLI one stays as it was left, and its upstream is not asked again', async () => {
    const shared = configFor(upstreams);
    const asked: string[] = [];
    // Every DoH question is recorded; the two analyses' names hang, others are answered.
    const hanging = () => upstreams.doh.route('GET /resolve', (req) => {
      asked.push(req.query.get('name') ?? '');
      return { hang: true };
    });
    hanging();
    let server = await spawnServe(shared.file, { cwd });
    let cli: ChildProcess | undefined;
    try {
      // 1. The server accepts an analysis, then is killed while it waits for its upstream.
      const res = await fetch(`${server.url}/api/analyze`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'server-origin.example.com', engines: ['public_dns'] }),
      });
      assert.equal(res.status, 200);
      const { analysis_id: serverId } = (await res.json()) as { analysis_id: string };
      await until(() => asked.includes('server-origin.example.com'), 'the server analysis reached its upstream');
      server.child.kill('SIGKILL');
      await new Promise((resolve) => server.child.once('exit', resolve));

      // 2. oas analyze on the same data directory, killed while it waits for its upstream.
      cli = spawn(process.execPath, [BIN, 'analyze', 'cli-origin.example.com', '--engines', 'public_dns', '--config', shared.file], {
        cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: 'ignore',
      });
      await until(() => asked.includes('cli-origin.example.com'), 'the CLI analysis reached its upstream');
      const exited = new Promise((resolve) => cli!.once('exit', resolve));
      cli.kill('SIGKILL');
      await exited;

      // 3. The server starts again: it resumes its own analysis only.
      asked.length = 0;
      upstreams.doh.route('GET /resolve', (req) => {
        asked.push(req.query.get('name') ?? '');
        return dohHandler(ZONE)(req);
      });
      server = await spawnServe(shared.file, { cwd });
      let complete = false;
      for (let i = 0; !complete; i++) {
        assert.ok(i < 600, 'the resumed server analysis completes');
        const status = await fetch(`${server.url}/api/is_analysis_complete/${serverId}`);
        complete = ((await status.json()) as { complete: boolean }).complete;
        if (!complete) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await until(() => /resumed 1 unfinished analysis/.test(server.log()), `the server says it resumed one analysis:\n${server.log()}`);
      assert.ok(asked.includes('server-origin.example.com'), 'the server analysis was run again');
      assert.ok(!asked.includes('cli-origin.example.com'), `the CLI analysis was not run again: ${asked.join(', ')}`);

      // The CLI analysis is recorded as the CLI left it: incomplete, origin "cli".
      const storage = await openStorage(shared.dataDir);
      try {
        const rows = (await storage.analysesTable.query('SELECT value FROM analyses')) as { value: string }[];
        const records = rows.map((row) => (JSON.parse(row.value) as { value: AnalysisRecord }).value);
        const cliRecord = records.find((r) => r.observables.some((o) => o.value === 'cli-origin.example.com'));
        assert.ok(cliRecord, 'the CLI analysis was recorded');
        assert.equal(cliRecord.origin, 'cli');
        assert.equal(cliRecord.complete, false);
        assert.equal(records.find((r) => r.id === serverId)?.origin, 'server');
        const status = await fetch(`${server.url}/api/is_analysis_complete/${cliRecord.id}`);
        assert.deepEqual(await status.json(), { complete: false });
      } finally {
        await storage.close();
      }
      assert.ok(!asked.includes('cli-origin.example.com'), 'still not run');
    } finally {
      if (cli && cli.exitCode === null && cli.signalCode === null) cli.kill('SIGKILL');
      await server.stop();
      upstreams.doh.route('GET /resolve', dohHandler(ZONE));
    }
  });
});
