/**
 * Subprocesses for the benchmark: `oas serve` and `oas analyze` as whole processes, started the
 * way a user starts them (bin/oas.js), with what the kernel says about them: CPU time and peak
 * RSS, read live from /proc (Linux) and at exit from preload.js.
 */
import { spawn, execFileSync, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The `oas` under test: this tree's, or another build's (BENCH_OAS_BIN, for paired before/after runs of one bench). */
export const OAS_BIN = process.env.BENCH_OAS_BIN ?? fileURLToPath(new URL('../../../bin/oas.js', import.meta.url));
export const PRELOAD = new URL('./preload.js', import.meta.url).href;

/** The caller's environment without any oas setting (OAS_*), so only the config files count. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('OAS_')) env[key] = value;
  return { ...env, ...extra };
}

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, ms) a live process has used so far; undefined without /proc. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ": state is field 3, utime field 14, stime field 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Resolution of cpuMsOf, in ms. */
export const CPU_TICK_MS = 1000 / TICKS_PER_SECOND;

/** Peak RSS so far (KiB) of a live process; undefined without /proc. */
export function peakRssKiBOf(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export interface ExitStats {
  code: number | null;
  maxRssKiB: number;
  /** User + system CPU over the whole life of the process. */
  cpuMs: number;
}

function readStats(file: string): ExitStats | undefined {
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8').trim().split('\n').pop();
  if (!line) return undefined;
  const stats = JSON.parse(line) as { code: number | null; maxRssKiB: number; userUs: number; systemUs: number };
  return { code: stats.code, maxRssKiB: stats.maxRssKiB, cpuMs: (stats.userUs + stats.systemUs) / 1000 };
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** SIGTERM, wait for the exit; the preload's figures. */
  stop(): Promise<ExitStats | undefined>;
}

/** `oas serve --config <file> --port <free port>` with the preload; resolves once it answers HTTP. */
export async function startServer(configFile: string, statsFile: string, prefix: string): Promise<ServerProcess> {
  const port = await freePort();
  writeFileSync(statsFile, '');
  const child = spawn(process.execPath, ['--import', PRELOAD, OAS_BIN, 'serve', '--config', configFile, '--port', String(port)], {
    cwd: ROOT,
    env: cleanEnv({ BENCH_STATS_FILE: statsFile }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`oas serve exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      await fetch(`${url}${prefix}is_analysis_complete/00000000-0000-4000-8000-000000000000`);
      break;
    } catch {
      if (Date.now() - started > 30_000) throw new Error(`oas serve did not answer within 30 s: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      // A server busy with a huge analysis may take long to stop: killed after 10 s (no figures then).
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      return readStats(statsFile);
    },
  };
}

export interface ProcessRun {
  ms: number;
  code: number | null;
  /** From the preload at exit, or read from /proc just before a process over its deadline is killed. */
  stats: ExitStats | undefined;
  stderr: string;
  /** Killed at its deadline. */
  timedOut: boolean;
}

/**
 * Runs `node [--import preload] <args>` to its exit and times it from spawn to exit. `stdio`
 * defaults to everything ignored; stderr is kept when given as 'pipe'.
 */
export async function runNode(args: string[], options: { stdio?: StdioOptions; statsFile?: string; cwd?: string; deadlineMs?: number } = {}): Promise<ProcessRun> {
  const argv = options.statsFile ? ['--import', PRELOAD, ...args] : args;
  if (options.statsFile) writeFileSync(options.statsFile, '');
  const env = cleanEnv(options.statsFile ? { BENCH_STATS_FILE: options.statsFile } : {});
  const started = performance.now();
  const child = spawn(process.execPath, argv, { cwd: options.cwd ?? ROOT, env, stdio: options.stdio ?? 'ignore' });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const exited = once(child, 'exit');
  let killed: ExitStats | undefined;
  const timer = options.deadlineMs === undefined ? undefined : setTimeout(() => {
    const pid = child.pid!;
    const rss = peakRssKiBOf(pid);
    const cpu = cpuMsOf(pid);
    if (rss !== undefined && cpu !== undefined) killed = { code: null, maxRssKiB: rss, cpuMs: cpu };
    child.kill('SIGKILL');
  }, options.deadlineMs);
  const [code] = (await exited) as [number | null];
  const ms = performance.now() - started;
  clearTimeout(timer);
  if (killed || (options.deadlineMs !== undefined && code === null)) return { ms, code, stats: killed, stderr, timedOut: true };
  return { ms, code, stats: options.statsFile ? readStats(options.statsFile) : undefined, stderr, timedOut: false };
}
