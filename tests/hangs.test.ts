/**
 * Nothing hangs: an upstream or a proxy that accepts a connection and never answers (CONNECT
 * never answered, a TLS handshake never completed, headers never sent, a body never finished) is
 * bounded by the engine's deadline. The HTTP client fails the call at its deadline (not at the
 * connect timeout), closing the transport destroys the hung sockets, and `oas analyze` prints the
 * timeouts and exits. Fakes are raw `net` servers on 127.0.0.1 that accept and stay silent.
 * Waits are bounded by a generous hang guard; nothing asserts on timings.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HttpTransport, type TransportOptions } from '../src/http/client.js';
import { TimeoutError } from '../src/http/errors.js';
import { noStack } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { startFakeProxy, type FakeProxy } from './fakes/proxy.js';
import { tempDir, tmpEnv } from './helpers/temp.js';

/** Far beyond every deadline used here: reaching it means something waited for a hung peer. */
const GUARD_MS = 15_000;
const TIMEOUT_MS = 400;

interface SilentServer {
  url(scheme: 'http' | 'https'): string;
  /** Connections accepted so far. */
  accepted: number;
  /** Connections still open (the peer has not closed them). */
  open: Set<Socket>;
  close(): Promise<void>;
}

/**
 * Accepts connections and reads everything; `onData` decides what, if anything, is ever sent.
 * Used as a proxy that swallows CONNECT, a "TLS" server that never answers the ClientHello, and
 * an HTTP server that never sends headers or never finishes its body.
 */
async function startSilent(onData: (socket: Socket) => void = () => {}): Promise<SilentServer> {
  const open = new Set<Socket>();
  const state = { accepted: 0 };
  const server: Server = createServer((socket) => {
    state.accepted++;
    open.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => open.delete(socket));
    socket.once('data', () => onData(socket));
    socket.resume(); // reads (and so sees the peer's close) without ever answering
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (scheme) => `${scheme}://127.0.0.1:${port}`,
    get accepted() {
      return state.accepted;
    },
    open,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The promise, or a failure naming `what` once the guard runs out. */
async function guarded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${GUARD_MS} ms (hang)`)), GUARD_MS);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (bounded) until `condition` holds. */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(condition(), what);
}

let silent: SilentServer;
let headersOnly: SilentServer;
let forwarding: FakeProxy;

before(async () => {
  silent = await startSilent();
  // Headers announcing a body, one byte of it, then nothing.
  headersOnly = await startSilent((socket) => {
    socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{');
  });
  forwarding = await startFakeProxy();
});
after(async () => {
  await Promise.all([silent.close(), headersOnly.close(), forwarding.close()]);
});

/** [name, transport options, URL asked] for every way of never answering. */
function hangCases(): [string, TransportOptions, string][] {
  return [
    ['a proxy that never answers CONNECT (http upstream)', { proxyUrl: silent.url('http') }, 'http://127.0.0.1:9/ipquery/8.8.8.8'],
    ['a proxy that never answers CONNECT (https upstream)', { proxyUrl: silent.url('http'), sslVerify: false }, 'https://127.0.0.1:9/ipquery/8.8.8.8'],
    ['a TLS server that never completes the handshake', { sslVerify: false }, `${silent.url('https')}/ipquery/8.8.8.8`],
    ['a server that never sends headers', {}, `${silent.url('http')}/ipquery/8.8.8.8`],
    ['a server that sends headers, then never the body', {}, `${headersOnly.url('http')}/ipquery/8.8.8.8`],
    ['a server that never sends headers, through a proxy', { proxyUrl: forwarding.url }, `${silent.url('http')}/ipquery/8.8.8.8`],
    ['a server that never finishes its body, through a proxy', { proxyUrl: forwarding.url }, `${headersOnly.url('http')}/ipquery/8.8.8.8`],
  ];
}

describe('the HTTP client bounds every call by its deadline', () => {
  test('each way of never answering fails with "timeout after N ms"; closing the transport destroys the hung sockets', async () => {
    for (const [name, options, url] of hangCases()) {
      // A connect timeout far beyond the guard: only the call's deadline can end these calls.
      const transport = new HttpTransport({ ...options, connectTimeoutMs: 10 * GUARD_MS });
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new TimeoutError(TIMEOUT_MS)), TIMEOUT_MS);
      const client = transport.client({ signal: controller.signal, deadline: Date.now() + TIMEOUT_MS, timeoutMs: TIMEOUT_MS, retries: 1, secrets: [] });
      const before = silent.accepted + headersOnly.accepted;
      try {
        await guarded(assert.rejects(client.request(url), (error: Error) => {
          assert.ok(error instanceof TimeoutError, `${name}: ${error.name}: ${error.message}`);
          assert.match(error.message, new RegExp(`^timeout after ${TIMEOUT_MS} ms waiting for 127\\.0\\.0\\.1:\\d+( through the proxy 127\\.0\\.0\\.1:\\d+)?$`), name);
          return true;
        }), name);
        assert.ok(silent.accepted + headersOnly.accepted > before, `${name}: the fake was reached`);
      } finally {
        clearTimeout(timer);
        await guarded(transport.close(), `${name}: closing the transport`);
      }
      await eventually(() => silent.open.size === 0 && headersOnly.open.size === 0, `${name}: the hung connections are closed`);
    }
  });
});

interface GuardedRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `oas args` as a subprocess; killed and failed if it is still running when the guard runs out. */
function runGuarded(args: string[]): Promise<GuardedRun> {
  const cwd = tempDir('oas-hang-');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...tmpEnv() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`oas ${args.join(' ')} still running after ${GUARD_MS} ms (hang); output so far: ${stdout}${stderr}`));
    }, GUARD_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function configFile(settings: Record<string, unknown>): string {
  const dir = tempDir('oas-hang-config-');
  const file = join(dir, 'oas.config.json');
  writeFileSync(file, JSON.stringify({ data_dir: join(dir, 'data'), ...settings }));
  return file;
}

describe('oas analyze against upstreams and proxies that never answer', () => {
  test('prints the timeouts and exits (exit 1: every engine failed), whatever never answers', async () => {
    for (const [name, options, url] of hangCases()) {
      const file = configFile({
        ...(options.proxyUrl ? { proxy_url: options.proxyUrl } : {}),
        ...(options.sslVerify === false ? { ssl_verify: false } : {}),
        engines: { provider_13: { base_url: url.replace(/\/8\.8\.8\.8$/, ''), timeout_ms: TIMEOUT_MS } },
      });
      const run = await runGuarded(['analyze', '8.8.8.8', '--engines', 'provider_13', '--json', '--config', file]);
      assert.equal(run.code, 1, `${name}: ${run.stderr}`);
      const [result] = JSON.parse(run.stdout) as { provider_13: unknown; errors: Record<string, string> }[];
      assert.equal(result!.provider_13, null, name);
      assert.match(result!.errors.provider_13!, new RegExp(`^timeout after ${TIMEOUT_MS} ms waiting for 127\\.0\\.0\\.1:\\d+( through the proxy 127\\.0\\.0\\.1:\\d+)? \\(limit: engines\\.provider_13\\.timeout_ms or engine_timeout_ms\\)$`), name);
      assert.equal(run.stderr, '', name);
    }
  });

  test('several engines through a proxy that swallows CONNECT: each times out, the command ends', async () => {
    const file = configFile({
      proxy_url: silent.url('http'),
      engines: {
        provider_13: { base_url: 'http://127.0.0.1:9/ipquery', timeout_ms: TIMEOUT_MS },
        provider_11: { base_url: 'https://127.0.0.1:9/ipapi', timeout_ms: TIMEOUT_MS },
        public_dns: { base_url: 'http://127.0.0.1:9/resolve', timeout_ms: TIMEOUT_MS },
      },
    });
    const run = await runGuarded(['analyze', '8.8.8.8', '1.1.1.1', '--engines', 'provider_13,provider_11,public_dns', '--config', file]);
    assert.equal(run.code, 1, `every engine call failed: ${run.stderr}`);
    noStack(run.stderr);
    // One block per observable (its first line names it), one line per engine.
    const blocks = run.stdout.split(/\n\s*\n/);
    for (const ip of ['8.8.8.8', '1.1.1.1']) {
      const block = blocks.find((b) => b.split('\n')[0]!.includes(` ${ip} `));
      assert.ok(block, `a block for ${ip}:\n${run.stdout}`);
      for (const engine of ['provider_13', 'provider_11', 'public_dns']) {
        assert.match(block, new RegExp(`^\\s+${engine}\\s+error: timeout after ${TIMEOUT_MS} ms waiting for 127\\.0\\.0\\.1:9 through`, 'm'), `${ip} ${engine}:\n${run.stdout}`);
      }
    }
  });
});
