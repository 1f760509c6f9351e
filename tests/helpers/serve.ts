/** `oas serve` as a subprocess on an ephemeral loopback port, as users start it. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killAtExit } from './temp.js';

export const BIN = fileURLToPath(new URL('../../../bin/oas.js', import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Everything the server printed so far (stdout and stderr). */
  log(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * `env`: variables added to this process's environment (e.g. OAS_API_TOKEN). `port`: `--port`
 * (default 0, any free port); null for none (the configuration's port is the one in effect).
 * `nodeArgs`: node's own, before the script (a module recorder's `--import`, helpers/module-log.ts).
 * `bin`: an installed `oas` executable to run instead of this clone's (tests/install.test.ts).
 */
export function spawnServe(configFile: string, options: { cwd?: string; args?: string[]; env?: Record<string, string>; port?: string | null; nodeArgs?: string[]; bin?: string } = {}): Promise<ServeProcess> {
  const port = options.port === null ? [] : ['--port', options.port ?? '0'];
  const serve = ['serve', ...port, '--config', configFile, ...(options.args ?? [])];
  return new Promise((resolve, reject) => {
    const child = killAtExit(spawn(options.bin ?? process.execPath, options.bin ? serve : [...(options.nodeArgs ?? []), BIN, ...serve], {
      cwd: options.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let log = '';
    let exited = false;
    child.stderr!.on('data', (d) => (log += d));
    child.stdout!.on('data', (d) => {
      log += d;
      const match = /listening on (http:\/\/\S+)/.exec(log);
      if (match) {
        resolve({
          child,
          url: match[1]!,
          log: () => log,
          stop: async () => {
            if (exited) return;
            const exit = new Promise((done) => child.once('exit', done));
            child.kill('SIGTERM');
            await exit;
          },
        });
      }
    });
    child.on('exit', (code) => {
      exited = true;
      reject(new Error(`serve exited with ${code}: ${log}`));
    });
  });
}

/** POSTs an analysis to the server at `baseUrl` (default prefix), asserts 200, returns its id. */
export async function startAnalysis(baseUrl: string, text: string, engines: string[]): Promise<string> {
  const res = await fetch(`${baseUrl}/api/analyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text, engines }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { analysis_id: string }).analysis_id;
}

/** The results of analysis `id` on the server at `baseUrl` (default prefix), once it is complete (10 s at most). */
export async function completedResults<T = Record<string, unknown>>(baseUrl: string, id: string): Promise<T[]> {
  for (let i = 0; i < 200; i++) {
    const { complete } = (await (await fetch(`${baseUrl}/api/is_analysis_complete/${id}`)).json()) as { complete: boolean };
    if (complete) return (await (await fetch(`${baseUrl}/api/results/${id}`)).json()) as T[];
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`analysis ${id} not complete after 10 s`);
}

export interface WorkerProcess {
  child: ChildProcess;
  /** What it printed so far: standard output, standard error, and both. */
  stdout(): string;
  stderr(): string;
  log(): string;
  /** Its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** `oas worker --config FILE [args]` as a subprocess, resolved once it says it takes jobs. */
export function spawnWorker(configFile: string, options: { args?: string[]; env?: Record<string, string> } = {}): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const child = killAtExit(spawn(process.execPath, [BIN, 'worker', '--config', configFile, ...(options.args ?? [])], {
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let stdout = '';
    let stderr = '';
    let log = '';
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.stderr!.on('data', (d) => {
      stderr += d;
      log += d;
    });
    child.stdout!.on('data', (d) => {
      stdout += d;
      log += d;
      if (/taking engine jobs/.test(stdout)) {
        resolve({
          child,
          stdout: () => stdout,
          stderr: () => stderr,
          log: () => log,
          exited,
          stop: async () => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`oas worker exited with ${code}: ${log}`)));
  });
}
