/**
 * A real `redis-server` (Debian package `redis-server`) of the tests' own, on a free loopback port,
 * in a temporary directory, without persistence unless asked; when the test file exits, a server
 * still running is killed and its directory removed (temp.ts). `redisSkip` says why the Redis
 * tests cannot run here (no binary: install the package, as `.ci/run` does) or is false.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { killAtExit, tempDir } from './temp.js';

export const REDIS_SERVER = process.env['OAS_REDIS_SERVER'] ?? 'redis-server';

/** False when redis-server can run; else the reason the Redis tests are skipped. */
export const redisSkip: string | false = (() => {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? false : `no ${REDIS_SERVER} on this machine (install the Debian package redis-server, as .ci/run does)`;
})();

export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>`, with `:<password>@` when started with `requirepass`. */
  url: string;
  dir: string;
  /** A client for the test's own checks (close it with `stop`). */
  client: Redis;
  /** Stops the server (SIGTERM; SIGKILL with `kill`), keeps the port and directory. */
  stop(kill?: boolean): Promise<void>;
  /** Starts it again on the same port and directory. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisOptions {
  /** AOF persistence (default off). */
  appendonly?: boolean;
  /** AOF fsync policy (default everysec). */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** A password clients must give (AUTH); `url` and `client` carry it. */
  requirepass?: string;
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const password = options.requirepass;
  const dir = tempDir('oas-redis-');
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = killAtExit(spawn(REDIS_SERVER, [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
      '--appendonly', options.appendonly ? 'yes' : 'no', '--appendfsync', options.appendfsync ?? 'everysec', '--protected-mode', 'yes', '--loglevel', 'warning',
      ...(password !== undefined ? ['--requirepass', password] : []),
    ], { stdio: 'ignore' }));
    for (let i = 0; i < 100; i++) {
      const probe = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => {});
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        await sleep(50);
      }
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  await launch();
  const client = new Redis({ port, host: '127.0.0.1', password, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const stop = async (kill = false) => {
    const current = child;
    if (!current || current.exitCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill(kill ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  return {
    port,
    url: password !== undefined ? `redis://:${encodeURIComponent(password)}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    dir,
    client,
    stop,
    restart: launch,
    close: async () => {
      client.disconnect();
      await stop();
    },
  };
}
